/*
 * cpu_kernels.c — the CPU runs of the scan and reduction patterns: every core, every vector lane,
 * memory bandwidth.
 *
 * Scan: the input is cut into rounds of (threads x CHUNK) elements. In a round each thread sums
 * its chunk (reading it from memory into its L2), the threads meet at a barrier, each computes its
 * offset from the sums of the chunks before it, and scans its chunk again, now from L2, writing the
 * output. So memory sees one read and one write per element, like memcpy, and only one barrier per
 * round. Within a chunk the scan goes 16 floats (8 doubles) at a time: a Kogge-Stone scan inside
 * one AVX-512 register (log2(16) = 4 shift-and-add steps), four registers in flight, plus the
 * running carry. Outputs far larger than the caches are written with streaming stores, which skip
 * reading the destination lines first. Without AVX-512 a scalar loop does the same.
 * Sum: each thread sums a contiguous share with four vector accumulators; the partial sums are
 * added in thread order, so a run is deterministic for a given thread count.
 * Read next: body/scan.h and body/reduce.h (the same patterns on a GPU).
 */
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

/* Bytes per thread per round: read from memory once, then again from L2 (1-2 MiB per core on the
 * machines this runs on). Larger rounds mean fewer barriers. */
#define CHUNK_BYTES (512 * 1024)
#define STREAM_MIN ((int64_t)1 << 21) /* outputs from this many elements are streamed */
#define MAX_THREADS 256
/* Software prefetch this many bytes ahead: on the VMs measured here the hardware prefetcher alone
 * left the single-thread scan at ~60% of memcpy; 16 KiB ahead brought it to ~75%. */
#define PREFETCH_BYTES 16384
#if defined(__AVX512F__)
#define PREFETCH(p) _mm_prefetch((const char *)(p) + PREFETCH_BYTES, _MM_HINT_T0)
#endif

int lmi_cpu_kernel_threads(void)
{
#ifdef _OPENMP
	int n = omp_get_max_threads();
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
#else
	return 1;
#endif
}

static inline int stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed) != 0;
}

/* ---------------------------------------------------------------- float32 */

#if defined(__AVX512F__)
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
#endif

static float sum_f32(const float *x, int64_t n)
{
	int64_t i = 0;
	float s = 0;
#if defined(__AVX512F__)
	__m512 a = _mm512_setzero_ps(), b = a, c = a, d = a;
	for (; i + 64 <= n; i += 64) {
		PREFETCH(x + i);
		PREFETCH(x + i + 32);
		a = _mm512_add_ps(a, _mm512_loadu_ps(x + i));
		b = _mm512_add_ps(b, _mm512_loadu_ps(x + i + 16));
		c = _mm512_add_ps(c, _mm512_loadu_ps(x + i + 32));
		d = _mm512_add_ps(d, _mm512_loadu_ps(x + i + 48));
	}
	s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
#else
	float a = 0, b = 0, c = 0, d = 0;
	for (; i + 4 <= n; i += 4) a += x[i], b += x[i + 1], c += x[i + 2], d += x[i + 3];
	s = (a + b) + (c + d);
#endif
	for (; i < n; i++) s += x[i];
	return s;
}

/* Scans x[0..n) into y from carry; returns the carry after the chunk. */
static float scan_chunk_f32(const float *x, float *y, int64_t n, float carry, int exclusive,
                            int stream)
{
	int64_t i = 0;
#if defined(__AVX512F__)
	if (stream) /* streaming stores need 64-byte aligned addresses */
		for (; i < n && ((uintptr_t)(y + i) & 63); i++) {
			float v = x[i];
			y[i] = exclusive ? carry : carry + v;
			carry += v;
		}
	const __m512i last = _mm512_set1_epi32(15);
	__m512 c = _mm512_set1_ps(carry);
	for (; i + 64 <= n; i += 64) {
		PREFETCH(x + i);
		PREFETCH(x + i + 32);
		__m512 a = scan16(_mm512_loadu_ps(x + i)), b = scan16(_mm512_loadu_ps(x + i + 16));
		__m512 e = scan16(_mm512_loadu_ps(x + i + 32)), f = scan16(_mm512_loadu_ps(x + i + 48));
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
#else
	(void)stream;
#endif
	for (; i < n; i++) {
		float v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
	}
	return carry;
}

/* ---------------------------------------------------------------- float64 */

#if defined(__AVX512F__)
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
#endif

static double sum_f64(const double *x, int64_t n)
{
	int64_t i = 0;
	double s = 0;
#if defined(__AVX512F__)
	__m512d a = _mm512_setzero_pd(), b = a, c = a, d = a;
	for (; i + 32 <= n; i += 32) {
		PREFETCH(x + i);
		PREFETCH(x + i + 16);
		a = _mm512_add_pd(a, _mm512_loadu_pd(x + i));
		b = _mm512_add_pd(b, _mm512_loadu_pd(x + i + 8));
		c = _mm512_add_pd(c, _mm512_loadu_pd(x + i + 16));
		d = _mm512_add_pd(d, _mm512_loadu_pd(x + i + 24));
	}
	s = _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a, b), _mm512_add_pd(c, d)));
#else
	double a = 0, b = 0, c = 0, d = 0;
	for (; i + 4 <= n; i += 4) a += x[i], b += x[i + 1], c += x[i + 2], d += x[i + 3];
	s = (a + b) + (c + d);
#endif
	for (; i < n; i++) s += x[i];
	return s;
}

static double scan_chunk_f64(const double *x, double *y, int64_t n, double carry, int exclusive,
                             int stream)
{
	int64_t i = 0;
#if defined(__AVX512F__)
	if (stream)
		for (; i < n && ((uintptr_t)(y + i) & 63); i++) {
			double v = x[i];
			y[i] = exclusive ? carry : carry + v;
			carry += v;
		}
	const __m512i last = _mm512_set1_epi64(7);
	__m512d c = _mm512_set1_pd(carry);
	for (; i + 32 <= n; i += 32) {
		PREFETCH(x + i);
		PREFETCH(x + i + 16);
		__m512d a = scan8(_mm512_loadu_pd(x + i)), b = scan8(_mm512_loadu_pd(x + i + 8));
		__m512d e = scan8(_mm512_loadu_pd(x + i + 16)), f = scan8(_mm512_loadu_pd(x + i + 24));
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
#else
	(void)stream;
#endif
	for (; i < n; i++) {
		double v = x[i];
		y[i] = exclusive ? carry : carry + v;
		carry += v;
	}
	return carry;
}

static inline void store_fence(int stream)
{
#if defined(__AVX512F__)
	if (stream) _mm_sfence(); /* streaming stores are weakly ordered */
#else
	(void)stream;
#endif
}

/* ---------------------------------------------------------------- the three phases, per round */

#ifdef _OPENMP
#define OMP_TID() omp_get_thread_num()
#define OMP_NT() omp_get_num_threads()
#else
#define OMP_TID() 0
#define OMP_NT() 1
#endif

#define DEFINE_SCAN(SUF, T)                                                                        \
	int lmi_cpu_scan_##SUF(const T *x, T *y, int64_t n, int exclusive, const atomic_int *stop) \
	{                                                                                          \
		const int64_t CHUNK = CHUNK_BYTES / (int64_t)sizeof(T);                            \
		int nt = lmi_cpu_kernel_threads(), stream = n >= STREAM_MIN, quit_any = 0;        \
		if (nt == 1 || n < 4 * CHUNK) {                                                    \
			T carry = 0;                                                               \
			for (int64_t g = 0; g < n; g += 16 * CHUNK) {                              \
				if (stopped(stop)) return 1;                                       \
				int64_t len = n - g < 16 * CHUNK ? n - g : 16 * CHUNK;             \
				carry = scan_chunk_##SUF(x + g, y + g, len, carry, exclusive, stream); \
			}                                                                          \
			store_fence(stream);                                                       \
			return 0;                                                                  \
		}                                                                                  \
		T partial[2][MAX_THREADS];                                                         \
		volatile int quit[2] = {0, 0};                                                     \
		_Pragma("omp parallel num_threads(nt) reduction(|:quit_any)")                     \
		{                                                                                  \
			int tid = OMP_TID(), p = OMP_NT();                                         \
			T carry = 0;                                                               \
			for (int64_t g = 0, round = 0; g < n; g += (int64_t)p * CHUNK, round++) {  \
				int b = (int)(round & 1); /* two buffers: one barrier per round */ \
				int64_t len = n - g < (int64_t)p * CHUNK ? n - g : (int64_t)p * CHUNK; \
				int64_t per = (len + p - 1) / p;                                   \
				int64_t lo = (int64_t)tid * per < len ? (int64_t)tid * per : len;  \
				int64_t hi = lo + per < len ? lo + per : len;                      \
				if (tid == 0) quit[b] = stopped(stop);                             \
				partial[b][tid] = sum_##SUF(x + g + lo, hi - lo); /* phase 1 */    \
				_Pragma("omp barrier");                                            \
				if (quit[b]) {                                                     \
					quit_any = 1;                                              \
					break;                                                     \
				}                                                                  \
				T off = carry; /* phase 2: each thread, in the same order */       \
				for (int k = 0; k < p; k++) {                                      \
					if (k == tid) off = carry;                                 \
					carry += partial[b][k];                                    \
				}                                                                  \
				scan_chunk_##SUF(x + g + lo, y + g + lo, hi - lo, off, exclusive,  \
				                 stream); /* phase 3 */                            \
			}                                                                          \
			store_fence(stream);                                                       \
		}                                                                                  \
		return quit_any;                                                                   \
	}

DEFINE_SCAN(f32, float)
DEFINE_SCAN(f64, double)

/* ---------------------------------------------------------------- sums */

#define POLL_EVERY ((int64_t)1 << 20)

#define DEFINE_SUM(SUF, T)                                                                         \
	int lmi_cpu_sum_##SUF(const T *x, int64_t n, T *out, const atomic_int *stop)               \
	{                                                                                          \
		int nt = lmi_cpu_kernel_threads(), quit = 0;                                       \
		T partial[MAX_THREADS];                                                            \
		int used = 1;                                                                      \
		if (n < 4 * CHUNK_BYTES / (int64_t)sizeof(T)) nt = 1;                              \
		(void)nt; /* unused without OpenMP */                                              \
		_Pragma("omp parallel num_threads(nt) reduction(|:quit)")                         \
		{                                                                                  \
			int tid = OMP_TID(), p = OMP_NT();                                         \
			if (tid == 0) used = p;                                                    \
			int64_t per = (n + p - 1) / p;                                             \
			int64_t lo = (int64_t)tid * per < n ? (int64_t)tid * per : n;              \
			int64_t hi = lo + per < n ? lo + per : n;                                  \
			T s = 0;                                                                   \
			for (int64_t i = lo; i < hi; i += POLL_EVERY) {                            \
				if (stopped(stop)) {                                               \
					quit = 1;                                                  \
					break;                                                     \
				}                                                                  \
				s += sum_##SUF(x + i, hi - i < POLL_EVERY ? hi - i : POLL_EVERY);  \
			}                                                                          \
			partial[tid] = s;                                                          \
		}                                                                                  \
		T total = 0;                                                                       \
		for (int k = 0; k < used; k++) total += partial[k]; /* fixed order: deterministic */ \
		*out = total;                                                                      \
		return quit;                                                                       \
	}

DEFINE_SUM(f32, float)
DEFINE_SUM(f64, double)
