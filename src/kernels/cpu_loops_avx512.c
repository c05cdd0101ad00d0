/*
 * cpu_loops_avx512.c — the AVX-512 path of the kernels' CPU loops (cpu_simd.h): 16 floats or 8
 * doubles per register, masks for the edges.
 *
 * Scan: 64 floats per step in four registers (cpu_loops_sumscan.h, shared with the AVX2 path),
 * each scanned in the register by Kogge-Stone (log2(16) = 4 shift-and-add steps), each offset by
 * the running carry plus the totals of the registers before it; streaming stores where aligned.
 * SpMV: CSR rows gather x 16 at a time (masked at the row's end); ELL/JDS slots gather for 16
 * consecutive rows, masked where a row has no entry in the slot.
 * Read next: cpu_loops_avx2.c, cpu_kernels.c (the chunks), cpu_spmv.c.
 */
#include <string.h>

#include "kernels/cpu_simd.h"

#ifdef LMI_CPU_X86
#include <immintrin.h>

LMI_CPU_TARGET_BEGIN(LMI_CPU_FEATURES_AVX512)

/* ---------------------------------------------------------------- float32 */

/* Inclusive Kogge-Stone scan of the 16 lanes: add the vector shifted up by 1, 2, 4, 8 lanes. */
static inline __m512 scan16(__m512 v)
{
	const __m512i z = _mm512_setzero_si512();
	v = _mm512_add_ps(v, _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v), z, 15)));
	v = _mm512_add_ps(v, _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v), z, 14)));
	v = _mm512_add_ps(v, _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v), z, 12)));
	v = _mm512_add_ps(v, _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v), z, 8)));
	return v;
}

/* Lanes up by one, lane 0 = 0: turns an inclusive scan into an exclusive one. */
static inline __m512 shift1(__m512 v)
{
	return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(v), _mm512_setzero_si512(), 15));
}

#define SS_T float
#define SS_V __m512
#define SS_SUF f32
#define SS_W 16
#define SS_OP(op) _mm512_##op##_ps
#define SS_HSUM(v) _mm512_reduce_add_ps(v)
#define SS_SCAN(v) scan16(v)
#define SS_SHIFT1(v) shift1(v)
#define SS_LAST(v) _mm512_permutexvar_ps(_mm512_set1_epi32(15), v)
#define SS_FIRST(v) _mm512_cvtss_f32(v)
#include "kernels/cpu_loops_sumscan.h"

static inline __mmask16 first16(int64_t left)
{
	return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
}

static float dot_f32(const int32_t *col, const float *val, const float *x, int64_t lo, int64_t hi)
{
	int64_t i = lo;
	__m512 acc = _mm512_setzero_ps();
	for (; i + 16 <= hi; i += 16) {
		__m512i c = _mm512_loadu_si512((const void *)(col + i));
		acc = _mm512_fmadd_ps(_mm512_loadu_ps(val + i), _mm512_i32gather_ps(c, x, 4), acc);
	}
	if (i < hi) {
		__mmask16 k = first16(hi - i);
		__m512i c = _mm512_maskz_loadu_epi32(k, col + i);
		__m512 g = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, c, x, 4);
		acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, val + i), g, acc);
	}
	return _mm512_reduce_add_ps(acc);
}

static void slot_f32(float *acc, const float *val, const int32_t *col, const float *x, int64_t n,
                     const int32_t *nnz, int32_t t, const float *next_val, const int32_t *next_col)
{
	const __m512i tv = _mm512_set1_epi32(t);
	for (int64_t i = 0; i < n; i += 16) {
		if (next_val) {
			_mm_prefetch((const char *)(next_val + i), _MM_HINT_T0);
			_mm_prefetch((const char *)(next_col + i), _MM_HINT_T0);
		}
		__mmask16 k = first16(n - i);
		if (nnz) k = _mm512_mask_cmpgt_epi32_mask(k, _mm512_maskz_loadu_epi32(k, nnz + i), tv);
		__m512i c = _mm512_maskz_loadu_epi32(k, col + i);
		__m512 g = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, c, x, 4);
		__m512 a = _mm512_maskz_loadu_ps(k, acc + i);
		a = _mm512_mask3_fmadd_ps(_mm512_maskz_loadu_ps(k, val + i), g, a, k);
		_mm512_mask_storeu_ps(acc + i, k, a);
	}
}

/* ---------------------------------------------------------------- float64 */

static inline __m512d scan8(__m512d v)
{
	const __m512i z = _mm512_setzero_si512();
	v = _mm512_add_pd(v, _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(v), z, 7)));
	v = _mm512_add_pd(v, _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(v), z, 6)));
	v = _mm512_add_pd(v, _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(v), z, 4)));
	return v;
}

static inline __m512d shift1d(__m512d v)
{
	return _mm512_castsi512_pd(_mm512_alignr_epi64(_mm512_castpd_si512(v), _mm512_setzero_si512(), 7));
}

#define SS_T double
#define SS_V __m512d
#define SS_SUF f64
#define SS_W 8
#define SS_OP(op) _mm512_##op##_pd
#define SS_HSUM(v) _mm512_reduce_add_pd(v)
#define SS_SCAN(v) scan8(v)
#define SS_SHIFT1(v) shift1d(v)
#define SS_LAST(v) _mm512_permutexvar_pd(_mm512_set1_epi64(7), v)
#define SS_FIRST(v) _mm512_cvtsd_f64(v)
#include "kernels/cpu_loops_sumscan.h"

static inline __mmask8 first8(int64_t left)
{
	return left >= 8 ? (__mmask8)0xFF : (__mmask8)((1u << left) - 1);
}

static double dot_f64(const int32_t *col, const double *val, const double *x, int64_t lo, int64_t hi)
{
	int64_t i = lo;
	__m512d acc = _mm512_setzero_pd();
	for (; i + 8 <= hi; i += 8) {
		__m256i c = _mm256_loadu_si256((const void *)(col + i));
		acc = _mm512_fmadd_pd(_mm512_loadu_pd(val + i), _mm512_i32gather_pd(c, x, 8), acc);
	}
	if (i < hi) {
		__mmask8 k = first8(hi - i);
		__m256i c = _mm256_maskz_loadu_epi32(k, col + i);
		__m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), k, c, x, 8);
		acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(k, val + i), g, acc);
	}
	return _mm512_reduce_add_pd(acc);
}

static void slot_f64(double *acc, const double *val, const int32_t *col, const double *x,
                     int64_t n, const int32_t *nnz, int32_t t, const double *next_val,
                     const int32_t *next_col)
{
	const __m256i tv = _mm256_set1_epi32(t);
	for (int64_t i = 0; i < n; i += 8) {
		if (next_val) {
			_mm_prefetch((const char *)(next_val + i), _MM_HINT_T0);
			if ((i & 15) == 0) _mm_prefetch((const char *)(next_col + i), _MM_HINT_T0);
		}
		__mmask8 k = first8(n - i);
		if (nnz) k = _mm256_mask_cmpgt_epi32_mask(k, _mm256_maskz_loadu_epi32(k, nnz + i), tv);
		__m256i c = _mm256_maskz_loadu_epi32(k, col + i);
		__m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), k, c, x, 8);
		__m512d a = _mm512_maskz_loadu_pd(k, acc + i);
		a = _mm512_mask3_fmadd_pd(_mm512_maskz_loadu_pd(k, val + i), g, a, k);
		_mm512_mask_storeu_pd(acc + i, k, a);
	}
}

#include "kernels/cpu_loops.h"

LMI_CPU_TARGET_END

const lmi_cpu_loops lmi_cpu_loops_avx512 = {
	.isa = LMI_CPU_AVX512,
	.scan_how = "16 floats (8 doubles) per AVX-512 register, Kogge-Stone within the register, "
	            "a running carry across registers",
	LMI_CPU_LOOPS_ENTRIES,
};
#else
typedef int lmi_cpu_loops_avx512_not_built; /* ISO C wants a declaration in every file */
#endif
