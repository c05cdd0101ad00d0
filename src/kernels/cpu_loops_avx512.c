/*
 * cpu_loops_avx512.c — the AVX-512 path of the kernels' CPU loops (cpu_simd.h): 16 floats or 8
 * doubles per register, masks for the edges.
 *
 * Scan: 64 floats per step in four registers, each scanned in the register by Kogge-Stone
 * (log2(16) = 4 shift-and-add steps), each offset by the running carry plus the totals of the
 * registers before it; streaming stores where aligned. The sums keep four accumulators; the
 * running sum the scan returns adds the same registers in the same order (= sum_* bit for bit).
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

static double sum_f32(const void *xv, int64_t n)
{
	const float *x = xv;
	int64_t i = 0;
	__m512 a = _mm512_setzero_ps(), b = a, c = a, d = a;
	for (; i + 64 <= n; i += 64) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 32);
		a = _mm512_add_ps(a, _mm512_loadu_ps(x + i));
		b = _mm512_add_ps(b, _mm512_loadu_ps(x + i + 16));
		c = _mm512_add_ps(c, _mm512_loadu_ps(x + i + 32));
		d = _mm512_add_ps(d, _mm512_loadu_ps(x + i + 48));
	}
	float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
	for (; i < n; i++) s += x[i];
	return s;
}

static double scan_f32(const void *xv, void *yv, int64_t n, double carry_in, int exclusive,
                       int stream)
{
	const float *x = xv;
	float *y = yv, carry = (float)carry_in;
	int64_t i = 0;
	stream = stream && ((uintptr_t)y & 63) == 0;
	const __m512i last = _mm512_set1_epi32(15);
	__m512 sa = _mm512_setzero_ps(), sb = sa, sc = sa, sd = sa, c = _mm512_set1_ps(carry);
	for (; i + 64 <= n; i += 64) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 32);
		__m512 xa = _mm512_loadu_ps(x + i), xb = _mm512_loadu_ps(x + i + 16);
		__m512 xe = _mm512_loadu_ps(x + i + 32), xf = _mm512_loadu_ps(x + i + 48);
		sa = _mm512_add_ps(sa, xa), sb = _mm512_add_ps(sb, xb);
		sc = _mm512_add_ps(sc, xe), sd = _mm512_add_ps(sd, xf);
		__m512 a = scan16(xa), b = scan16(xb), e = scan16(xe), f = scan16(xf);
		/* the carry into each register: c, then c plus the totals of the registers before it */
		__m512 cb = _mm512_add_ps(c, _mm512_permutexvar_ps(last, a));
		__m512 ce = _mm512_add_ps(cb, _mm512_permutexvar_ps(last, b));
		__m512 cf = _mm512_add_ps(ce, _mm512_permutexvar_ps(last, e));
		__m512 next = _mm512_add_ps(cf, _mm512_permutexvar_ps(last, f)); /* into the next 64 */
		if (exclusive) a = shift1(a), b = shift1(b), e = shift1(e), f = shift1(f);
		a = _mm512_add_ps(a, c), b = _mm512_add_ps(b, cb);
		e = _mm512_add_ps(e, ce), f = _mm512_add_ps(f, cf);
		c = next;
		if (stream) {
			_mm512_stream_ps(y + i, a), _mm512_stream_ps(y + i + 16, b);
			_mm512_stream_ps(y + i + 32, e), _mm512_stream_ps(y + i + 48, f);
		} else {
			_mm512_storeu_ps(y + i, a), _mm512_storeu_ps(y + i + 16, b);
			_mm512_storeu_ps(y + i + 32, e), _mm512_storeu_ps(y + i + 48, f);
		}
	}
	carry = _mm512_cvtss_f32(c);
	float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(sa, sb), _mm512_add_ps(sc, sd)));
	for (; i < n; i++) {
		float v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
		s += v;
	}
	if (stream) _mm_sfence(); /* streaming stores are weakly ordered */
	return s;
}

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

static double sum_f64(const void *xv, int64_t n)
{
	const double *x = xv;
	int64_t i = 0;
	__m512d a = _mm512_setzero_pd(), b = a, c = a, d = a;
	for (; i + 32 <= n; i += 32) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 16);
		a = _mm512_add_pd(a, _mm512_loadu_pd(x + i));
		b = _mm512_add_pd(b, _mm512_loadu_pd(x + i + 8));
		c = _mm512_add_pd(c, _mm512_loadu_pd(x + i + 16));
		d = _mm512_add_pd(d, _mm512_loadu_pd(x + i + 24));
	}
	double s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a, b), _mm512_add_pd(c, d)));
	for (; i < n; i++) s += x[i];
	return s;
}

static double scan_f64(const void *xv, void *yv, int64_t n, double carry, int exclusive, int stream)
{
	const double *x = xv;
	double *y = yv;
	int64_t i = 0;
	stream = stream && ((uintptr_t)y & 63) == 0;
	const __m512i last = _mm512_set1_epi64(7);
	__m512d sa = _mm512_setzero_pd(), sb = sa, sc = sa, sd = sa, c = _mm512_set1_pd(carry);
	for (; i + 32 <= n; i += 32) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 16);
		__m512d xa = _mm512_loadu_pd(x + i), xb = _mm512_loadu_pd(x + i + 8);
		__m512d xe = _mm512_loadu_pd(x + i + 16), xf = _mm512_loadu_pd(x + i + 24);
		sa = _mm512_add_pd(sa, xa), sb = _mm512_add_pd(sb, xb);
		sc = _mm512_add_pd(sc, xe), sd = _mm512_add_pd(sd, xf);
		__m512d a = scan8(xa), b = scan8(xb), e = scan8(xe), f = scan8(xf);
		__m512d cb = _mm512_add_pd(c, _mm512_permutexvar_pd(last, a));
		__m512d ce = _mm512_add_pd(cb, _mm512_permutexvar_pd(last, b));
		__m512d cf = _mm512_add_pd(ce, _mm512_permutexvar_pd(last, e));
		__m512d next = _mm512_add_pd(cf, _mm512_permutexvar_pd(last, f));
		if (exclusive) a = shift1d(a), b = shift1d(b), e = shift1d(e), f = shift1d(f);
		a = _mm512_add_pd(a, c), b = _mm512_add_pd(b, cb);
		e = _mm512_add_pd(e, ce), f = _mm512_add_pd(f, cf);
		c = next;
		if (stream) {
			_mm512_stream_pd(y + i, a), _mm512_stream_pd(y + i + 8, b);
			_mm512_stream_pd(y + i + 16, e), _mm512_stream_pd(y + i + 24, f);
		} else {
			_mm512_storeu_pd(y + i, a), _mm512_storeu_pd(y + i + 8, b);
			_mm512_storeu_pd(y + i + 16, e), _mm512_storeu_pd(y + i + 24, f);
		}
	}
	carry = _mm512_cvtsd_f64(c);
	double s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(sa, sb), _mm512_add_pd(sc, sd)));
	for (; i < n; i++) {
		double v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
		s += v;
	}
	if (stream) _mm_sfence();
	return s;
}

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
	.sum_f32 = sum_f32,
	.sum_f64 = sum_f64,
	.scan_f32 = scan_f32,
	.scan_f64 = scan_f64,
	.ks_section_f32 = ks_section_f32,
	.ks_section_f64 = ks_section_f64,
	.count_u8 = count_u8,
	.count_i32 = count_i32,
	.dot_f32 = dot_f32,
	.dot_f64 = dot_f64,
	.slot_f32 = slot_f32,
	.slot_f64 = slot_f64,
	.tile_f32 = tile_f32,
	.tile_f64 = tile_f64,
};
#else
typedef int lmi_cpu_loops_avx512_not_built; /* ISO C wants a declaration in every file */
#endif
