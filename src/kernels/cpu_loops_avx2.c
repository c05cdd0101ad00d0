/*
 * cpu_loops_avx2.c — the AVX2 + FMA path of the kernels' CPU loops (cpu_simd.h): 8 floats or 4
 * doubles per register; compiled for x86-64-v3 whatever the build's -march (CMakeLists.txt), so
 * it runs on an AVX2-only CPU such as AMD Zen 3.
 *
 * Scan: 32 floats per step in four registers, each scanned in the register by Kogge-Stone
 * (shift-and-add within the two 128-bit halves by 1 and 2 lanes, then the low half's total added
 * to the high half: 3 additions for 8 lanes), each register then offset by the running carry
 * plus the totals of the registers before it. Outputs that go to memory are written with
 * streaming stores where aligned. The sums keep four register accumulators; the running sum the
 * scan returns adds the same registers in the same order, so it equals sum_* bit for bit.
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

static double sum_f32(const void *xv, int64_t n)
{
	const float *x = xv;
	int64_t i = 0;
	__m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
	for (; i + 32 <= n; i += 32) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 16);
		a = _mm256_add_ps(a, _mm256_loadu_ps(x + i));
		b = _mm256_add_ps(b, _mm256_loadu_ps(x + i + 8));
		c = _mm256_add_ps(c, _mm256_loadu_ps(x + i + 16));
		d = _mm256_add_ps(d, _mm256_loadu_ps(x + i + 24));
	}
	float s = hsum8(_mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
	for (; i < n; i++) s += x[i];
	return s;
}

static double scan_f32(const void *xv, void *yv, int64_t n, double carry_in, int exclusive,
                       int stream)
{
	const float *x = xv;
	float *y = yv, carry = (float)carry_in;
	int64_t i = 0;
	stream = stream && ((uintptr_t)y & 31) == 0;
	__m256 sa = _mm256_setzero_ps(), sb = sa, sc = sa, sd = sa, c = _mm256_set1_ps(carry);
	for (; i + 32 <= n; i += 32) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 16);
		__m256 xa = _mm256_loadu_ps(x + i), xb = _mm256_loadu_ps(x + i + 8);
		__m256 xe = _mm256_loadu_ps(x + i + 16), xf = _mm256_loadu_ps(x + i + 24);
		sa = _mm256_add_ps(sa, xa), sb = _mm256_add_ps(sb, xb);
		sc = _mm256_add_ps(sc, xe), sd = _mm256_add_ps(sd, xf);
		__m256 a = scan8(xa), b = scan8(xb), e = scan8(xe), f = scan8(xf);
		/* the carry into each register: c, then c plus the totals of the registers before it */
		__m256 cb = _mm256_add_ps(c, last8(a)), ce = _mm256_add_ps(cb, last8(b));
		__m256 cf = _mm256_add_ps(ce, last8(e)), next = _mm256_add_ps(cf, last8(f));
		if (exclusive) a = shift1(a), b = shift1(b), e = shift1(e), f = shift1(f);
		a = _mm256_add_ps(a, c), b = _mm256_add_ps(b, cb);
		e = _mm256_add_ps(e, ce), f = _mm256_add_ps(f, cf);
		c = next;
		if (stream) {
			_mm256_stream_ps(y + i, a), _mm256_stream_ps(y + i + 8, b);
			_mm256_stream_ps(y + i + 16, e), _mm256_stream_ps(y + i + 24, f);
		} else {
			_mm256_storeu_ps(y + i, a), _mm256_storeu_ps(y + i + 8, b);
			_mm256_storeu_ps(y + i + 16, e), _mm256_storeu_ps(y + i + 24, f);
		}
	}
	carry = _mm256_cvtss_f32(c);
	float s = hsum8(_mm256_add_ps(_mm256_add_ps(sa, sb), _mm256_add_ps(sc, sd)));
	for (; i < n; i++) {
		float v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
		s += v;
	}
	if (stream) _mm_sfence(); /* streaming stores are weakly ordered */
	return s;
}

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

static double sum_f64(const void *xv, int64_t n)
{
	const double *x = xv;
	int64_t i = 0;
	__m256d a = _mm256_setzero_pd(), b = a, c = a, d = a;
	for (; i + 16 <= n; i += 16) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 8);
		a = _mm256_add_pd(a, _mm256_loadu_pd(x + i));
		b = _mm256_add_pd(b, _mm256_loadu_pd(x + i + 4));
		c = _mm256_add_pd(c, _mm256_loadu_pd(x + i + 8));
		d = _mm256_add_pd(d, _mm256_loadu_pd(x + i + 12));
	}
	double s = hsum4(_mm256_add_pd(_mm256_add_pd(a, b), _mm256_add_pd(c, d)));
	for (; i < n; i++) s += x[i];
	return s;
}

static double scan_f64(const void *xv, void *yv, int64_t n, double carry, int exclusive, int stream)
{
	const double *x = xv;
	double *y = yv;
	int64_t i = 0;
	stream = stream && ((uintptr_t)y & 31) == 0;
	__m256d sa = _mm256_setzero_pd(), sb = sa, sc = sa, sd = sa, c = _mm256_set1_pd(carry);
	for (; i + 16 <= n; i += 16) {
		LMI_CPU_PREFETCH(x + i);
		LMI_CPU_PREFETCH(x + i + 8);
		__m256d xa = _mm256_loadu_pd(x + i), xb = _mm256_loadu_pd(x + i + 4);
		__m256d xe = _mm256_loadu_pd(x + i + 8), xf = _mm256_loadu_pd(x + i + 12);
		sa = _mm256_add_pd(sa, xa), sb = _mm256_add_pd(sb, xb);
		sc = _mm256_add_pd(sc, xe), sd = _mm256_add_pd(sd, xf);
		__m256d a = scan4(xa), b = scan4(xb), e = scan4(xe), f = scan4(xf);
		__m256d cb = _mm256_add_pd(c, last4(a)), ce = _mm256_add_pd(cb, last4(b));
		__m256d cf = _mm256_add_pd(ce, last4(e)), next = _mm256_add_pd(cf, last4(f));
		if (exclusive) a = shift1d(a), b = shift1d(b), e = shift1d(e), f = shift1d(f);
		a = _mm256_add_pd(a, c), b = _mm256_add_pd(b, cb);
		e = _mm256_add_pd(e, ce), f = _mm256_add_pd(f, cf);
		c = next;
		if (stream) {
			_mm256_stream_pd(y + i, a), _mm256_stream_pd(y + i + 4, b);
			_mm256_stream_pd(y + i + 8, e), _mm256_stream_pd(y + i + 12, f);
		} else {
			_mm256_storeu_pd(y + i, a), _mm256_storeu_pd(y + i + 4, b);
			_mm256_storeu_pd(y + i + 8, e), _mm256_storeu_pd(y + i + 12, f);
		}
	}
	carry = _mm256_cvtsd_f64(c);
	double s = hsum4(_mm256_add_pd(_mm256_add_pd(sa, sb), _mm256_add_pd(sc, sd)));
	for (; i < n; i++) {
		double v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
		s += v;
	}
	if (stream) _mm_sfence();
	return s;
}

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
typedef int lmi_cpu_loops_avx2_not_built; /* ISO C wants a declaration in every file */
#endif
