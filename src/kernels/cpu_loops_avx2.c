/*
 * cpu_loops_avx2.c — the AVX2 + FMA path of the kernels' CPU loops (cpu_simd.h): 8 floats or 4
 * doubles per register; compiled for x86-64-v3 whatever the build's -march (CMakeLists.txt), so
 * it runs on an AVX2-only CPU such as AMD Zen 3.
 *
 * Scan: 32 floats per step in four registers (cpu_loops_sumscan.h, shared with the AVX-512 path),
 * each scanned in the register by Kogge-Stone (shift-and-add within the two 128-bit halves by 1
 * and 2 lanes, then the low half's total added to the high half: 3 additions for 8 lanes), each
 * register then offset by the running carry plus the totals of the registers before it.
 * Read next: cpu_loops_avx512.c (the same 16 wide), cpu_kernels.c (the chunks).
 */
#include <string.h>

#include "kernels/cpu_simd.h"

#ifdef LMI_CPU_X86
#include <immintrin.h>

LMI_CPU_TARGET_BEGIN(LMI_CPU_FEATURES_AVX2)

/* ---------------------------------------------------------------- float32 */

static inline float hsum8(__m256 v)
{
	__m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	s = _mm_add_ps(s, _mm_movehl_ps(s, s));
	s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
	return _mm_cvtss_f32(s);
}

/* Inclusive scan of the 8 lanes. */
static inline __m256 scan8(__m256 v)
{
	v = _mm256_add_ps(v, _mm256_castsi256_ps(_mm256_slli_si256(_mm256_castps_si256(v), 4)));
	v = _mm256_add_ps(v, _mm256_castsi256_ps(_mm256_slli_si256(_mm256_castps_si256(v), 8)));
	__m256 lo = _mm256_permute2f128_ps(v, v, 0x08); /* [0 | low half] */
	return _mm256_add_ps(v, _mm256_shuffle_ps(lo, lo, 0xFF)); /* + low half's lane 3, high half */
}

/* Lanes up by one, lane 0 = 0 (inclusive -> exclusive). */
static inline __m256 shift1(__m256 v)
{
	__m256 p = _mm256_permutevar8x32_ps(v, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6));
	return _mm256_blend_ps(p, _mm256_setzero_ps(), 0x01);
}

static inline __m256 last8(__m256 v) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(7)); }

#define SS_T float
#define SS_V __m256
#define SS_SUF f32
#define SS_W 8
#define SS_OP(op) _mm256_##op##_ps
#define SS_HSUM(v) hsum8(v)
#define SS_SCAN(v) scan8(v)
#define SS_SHIFT1(v) shift1(v)
#define SS_LAST(v) last8(v)
#define SS_FIRST(v) _mm256_cvtss_f32(v)
#include "kernels/cpu_loops_sumscan.h"

/* Tail lanes: the first `left` of 8 (left < 8). */
static inline __m256i first_lanes8(int64_t left)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static float dot_f32(const int32_t *col, const float *val, const float *x, int64_t lo, int64_t hi)
{
	int64_t i = lo;
	__m256 acc = _mm256_setzero_ps(), acc2 = acc;
	for (; i + 16 <= hi; i += 16) {
		__m256i c0 = _mm256_loadu_si256((const void *)(col + i));
		__m256i c1 = _mm256_loadu_si256((const void *)(col + i + 8));
		acc = _mm256_fmadd_ps(_mm256_loadu_ps(val + i), _mm256_i32gather_ps(x, c0, 4), acc);
		acc2 = _mm256_fmadd_ps(_mm256_loadu_ps(val + i + 8), _mm256_i32gather_ps(x, c1, 4), acc2);
	}
	for (; i < hi; i += 8) {
		__m256i k = first_lanes8(hi - i);
		__m256i c = _mm256_maskload_epi32(col + i, k);
		__m256 g = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, c, _mm256_castsi256_ps(k), 4);
		acc = _mm256_fmadd_ps(_mm256_maskload_ps(val + i, k), g, acc);
	}
	return hsum8(_mm256_add_ps(acc, acc2));
}

static void slot_f32(float *acc, const float *val, const int32_t *col, const float *x, int64_t n,
                     const int32_t *nnz, int32_t t, const float *next_val, const int32_t *next_col)
{
	const __m256i tv = _mm256_set1_epi32(t);
	for (int64_t i = 0; i < n; i += 8) {
		if (next_val && (i & 15) == 0) {
			_mm_prefetch((const char *)(next_val + i), _MM_HINT_T0);
			_mm_prefetch((const char *)(next_col + i), _MM_HINT_T0);
		}
		__m256i k = n - i >= 8 ? _mm256_set1_epi32(-1) : first_lanes8(n - i);
		if (nnz) k = _mm256_and_si256(k, _mm256_cmpgt_epi32(_mm256_maskload_epi32(nnz + i, k), tv));
		__m256 kf = _mm256_castsi256_ps(k);
		__m256i c = _mm256_maskload_epi32(col + i, k);
		__m256 g = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), x, c, kf, 4);
		__m256 a = _mm256_maskload_ps(acc + i, k);
		__m256 r = _mm256_fmadd_ps(_mm256_maskload_ps(val + i, k), g, a);
		_mm256_maskstore_ps(acc + i, k, r);
	}
}

/* ---------------------------------------------------------------- float64 */

static inline double hsum4(__m256d v)
{
	__m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
	return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

static inline __m256d scan4(__m256d v)
{
	v = _mm256_add_pd(v, _mm256_castsi256_pd(_mm256_slli_si256(_mm256_castpd_si256(v), 8)));
	__m256d lo = _mm256_permute2f128_pd(v, v, 0x08); /* [0 | low half] */
	return _mm256_add_pd(v, _mm256_shuffle_pd(lo, lo, 0xF)); /* + low half's lane 1, high half */
}

static inline __m256d shift1d(__m256d v)
{
	return _mm256_blend_pd(_mm256_permute4x64_pd(v, 0x90), _mm256_setzero_pd(), 0x1); /* 0,0,1,2 */
}

static inline __m256d last4(__m256d v) { return _mm256_permute4x64_pd(v, 0xFF); }

#define SS_T double
#define SS_V __m256d
#define SS_SUF f64
#define SS_W 4
#define SS_OP(op) _mm256_##op##_pd
#define SS_HSUM(v) hsum4(v)
#define SS_SCAN(v) scan4(v)
#define SS_SHIFT1(v) shift1d(v)
#define SS_LAST(v) last4(v)
#define SS_FIRST(v) _mm256_cvtsd_f64(v)
#include "kernels/cpu_loops_sumscan.h"

/* Tail lanes of 4 doubles: the first `left` (left < 4), as 64-bit masks. */
static inline __m256i first_lanes4(int64_t left)
{
	return _mm256_cmpgt_epi64(_mm256_set1_epi64x(left), _mm256_setr_epi64x(0, 1, 2, 3));
}

static double dot_f64(const int32_t *col, const double *val, const double *x, int64_t lo, int64_t hi)
{
	int64_t i = lo;
	__m256d acc = _mm256_setzero_pd(), acc2 = acc;
	for (; i + 8 <= hi; i += 8) {
		__m128i c0 = _mm_loadu_si128((const void *)(col + i));
		__m128i c1 = _mm_loadu_si128((const void *)(col + i + 4));
		acc = _mm256_fmadd_pd(_mm256_loadu_pd(val + i), _mm256_i32gather_pd(x, c0, 8), acc);
		acc2 = _mm256_fmadd_pd(_mm256_loadu_pd(val + i + 4), _mm256_i32gather_pd(x, c1, 8), acc2);
	}
	for (; i < hi; i += 4) {
		__m256i k = first_lanes4(hi - i);
		__m128i k32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
			k, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0)));
		__m128i c = _mm_maskload_epi32(col + i, k32);
		__m256d g = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, c, _mm256_castsi256_pd(k), 8);
		acc = _mm256_fmadd_pd(_mm256_maskload_pd(val + i, k), g, acc);
	}
	return hsum4(_mm256_add_pd(acc, acc2));
}

static void slot_f64(double *acc, const double *val, const int32_t *col, const double *x,
                     int64_t n, const int32_t *nnz, int32_t t, const double *next_val,
                     const int32_t *next_col)
{
	const __m128i tv = _mm_set1_epi32(t);
	for (int64_t i = 0; i < n; i += 4) {
		if (next_val && (i & 7) == 0) {
			_mm_prefetch((const char *)(next_val + i), _MM_HINT_T0);
			if ((i & 15) == 0) _mm_prefetch((const char *)(next_col + i), _MM_HINT_T0);
		}
		__m128i k32 = n - i >= 4 ? _mm_set1_epi32(-1)
		                         : _mm_cmpgt_epi32(_mm_set1_epi32((int)(n - i)), _mm_setr_epi32(0, 1, 2, 3));
		if (nnz) k32 = _mm_and_si128(k32, _mm_cmpgt_epi32(_mm_maskload_epi32(nnz + i, k32), tv));
		__m256i k = _mm256_cvtepi32_epi64(k32);
		__m128i c = _mm_maskload_epi32(col + i, k32);
		__m256d g = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, c, _mm256_castsi256_pd(k), 8);
		__m256d a = _mm256_maskload_pd(acc + i, k);
		_mm256_maskstore_pd(acc + i, k, _mm256_fmadd_pd(_mm256_maskload_pd(val + i, k), g, a));
	}
}

#include "kernels/cpu_loops.h"

LMI_CPU_TARGET_END

const lmi_cpu_loops lmi_cpu_loops_avx2 = {
	.isa = LMI_CPU_AVX2,
	.scan_how = "8 floats (4 doubles) per AVX2 register, Kogge-Stone within the register, "
	            "a running carry across registers",
	LMI_CPU_LOOPS_ENTRIES,
};
#else
typedef int lmi_cpu_loops_avx2_not_built; /* ISO C wants a declaration in every file */
#endif
