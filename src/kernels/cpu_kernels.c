/*
 * cpu_kernels.c — the CPU runs of the scan and reduction patterns: every core, every vector lane,
 * memory bandwidth.
 *
 * Scan: a single-pass chained scan over chunks that fit in a core's L2 (see "chunks, chained"
 * below): each chunk is read from memory once to sum it, and again from L2 to scan it from the
 * prefix of the chunks before it, so memory sees one read and one write per element, like memcpy,
 * and no thread ever waits at a barrier. Within a chunk the scan goes 16 floats (8 doubles) at a
 * time: a Kogge-Stone scan inside one AVX-512 register (log2(16) = 4 shift-and-add steps), four
 * registers in flight, plus the running carry. Outputs far larger than the caches are written with
 * streaming stores, which skip reading the destination lines first. Without AVX-512 a scalar loop
 * does the same.
 * Sum: the same chunks, summed with four vector accumulators each, then added in chunk order:
 * the same result for any number of threads.
 * Read next: body/scan.h and body/reduce.h (the same patterns on a GPU).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX512F__) || defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* Bytes per chunk: read from memory once, then again from L2 (1-2 MiB per core on the machines
 * this runs on). */
#define CHUNK_BYTES (512 * 1024)
#define STREAM_MIN ((int64_t)1 << 21) /* outputs from this many elements are streamed */
#define MAX_THREADS 256 /* cap on the threads used */
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

static _Atomic int64_t lines_flushed;

size_t lmi_cache_flush(const void *p, size_t bytes)
{
	size_t lines = 0;
#if defined(__x86_64__) || defined(__i386__)
	/* clflush evicts the line (written back when dirty) from every level; 64 bytes a line */
	const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63), *end = (const char *)p + bytes;
	for (; bytes && c < end; c += 64, lines++) _mm_clflush(c);
	_mm_mfence(); /* the flushes are done before the timed run's first load */
	atomic_fetch_add(&lines_flushed, (int64_t)lines);
#else
	(void)p, (void)bytes;
#endif
	return lines;
}

int64_t lmi_cache_lines_flushed(void) { return atomic_load(&lines_flushed); }

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

/* ---------------------------------------------------------------- chunks, chained */
/*
 * The input is cut into chunks of CHUNK_BYTES, taken by the threads in order from a shared
 * counter (a thread that is preempted simply takes fewer chunks). For chunk j a thread sums it
 * (reading it from memory into its L2), publishes that aggregate, gets the inclusive prefix of
 * chunk j - 1 (the sum of everything before), publishes its own, and scans the chunk again from L2
 * starting at that prefix: one read and one write of memory per element, and no barrier. This is
 * the CPU form of the single-pass "decoupled look-back" scan: looking back, a thread takes the
 * newest published prefix and adds the aggregates after it; an aggregate not yet published is
 * waited for briefly, then computed by the thread itself, so no thread ever waits on one that is
 * not running. Every prefix is defined as prefix(j-1) + aggregate(j), in the element type, so the
 * result is the same whichever thread computes it, and for any number of threads.
 */

typedef struct slot {
	_Atomic uint32_t state; /* 0: nothing yet, 1: aggregate, 2: and inclusive prefix */
	_Atomic uint64_t agg, incl; /* values of the element type, held as double bits */
	char pad_[64 - 24];
} slot;

size_t lmi_cpu_scratch_bytes(int64_t n, size_t elem)
{
	int64_t chunk = CHUNK_BYTES / (int64_t)elem, nch = (n + chunk - 1) / chunk;
	return nch > 1 ? (size_t)nch * sizeof(slot) : 0;
}

/* The element type's operations, through doubles (a float converts to double and back exactly). */
typedef struct elem_ops {
	size_t size;
	double (*sum)(const void *x, int64_t n);
	double (*add)(double a, double b); /* (T)a + (T)b */
	void (*scan)(const void *x, void *y, int64_t n, double carry, int exclusive, int stream);
} elem_ops;

static double sum32(const void *x, int64_t n) { return sum_f32(x, n); }
static double sum64(const void *x, int64_t n) { return sum_f64(x, n); }
static double add32(double a, double b) { return (double)((float)a + (float)b); }
static double add64(double a, double b) { return a + b; }
static void scan32(const void *x, void *y, int64_t n, double c, int excl, int stream)
{
	scan_chunk_f32(x, y, n, (float)c, excl, stream);
}
static void scan64(const void *x, void *y, int64_t n, double c, int excl, int stream)
{
	scan_chunk_f64(x, y, n, c, excl, stream);
}
static const elem_ops ops32 = {sizeof(float), sum32, add32, scan32};
static const elem_ops ops64 = {sizeof(double), sum64, add64, scan64};

static inline double get(_Atomic uint64_t *a)
{
	uint64_t b = atomic_load_explicit(a, memory_order_relaxed);
	double d;
	memcpy(&d, &b, sizeof d);
	return d;
}

static inline void put(_Atomic uint64_t *a, double d)
{
	uint64_t b;
	memcpy(&b, &d, sizeof b);
	atomic_store_explicit(a, b, memory_order_relaxed);
}

/* Publishes state `to` for a slot (values written before; states only rise). */
static inline void raise_to(slot *s, uint32_t to)
{
	uint32_t cur = atomic_load_explicit(&s->state, memory_order_relaxed);
	while (cur < to && !atomic_compare_exchange_weak_explicit(&s->state, &cur, to,
	                                                          memory_order_release,
	                                                          memory_order_relaxed))
		;
}

static inline uint32_t state_of(slot *s) { return atomic_load_explicit(&s->state, memory_order_acquire); }

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

typedef struct chain {
	const elem_ops *o;
	const char *x;
	int64_t n, chunk, nch;
	slot *slots;
} chain;

static int64_t chunk_len(const chain *c, int64_t k)
{
	int64_t lo = k * c->chunk;
	return c->n - lo < c->chunk ? c->n - lo : c->chunk;
}

/* The aggregate of chunk k: its owner's, after a short wait, or computed here. */
static double aggregate(const chain *c, int64_t k)
{
	slot *s = &c->slots[k];
	for (int spin = 0; spin < 4096 && state_of(s) == 0; spin++) relax();
	if (state_of(s) >= 1) return get(&s->agg);
	double a = c->o->sum(c->x + (size_t)(k * c->chunk) * c->o->size, chunk_len(c, k));
	put(&s->agg, a);
	raise_to(s, 1);
	return a;
}

/* The inclusive prefix of chunk k (the sum of chunks 0..k), publishing what it computes. */
static double prefix(const chain *c, int64_t k)
{
	int64_t m = k;
	while (m >= 0 && state_of(&c->slots[m]) < 2) m--; /* the newest published prefix */
	double run = m >= 0 ? get(&c->slots[m].incl) : 0;
	for (int64_t q = m + 1; q <= k; q++) {
		run = m < 0 && q == 0 ? aggregate(c, 0) : c->o->add(run, aggregate(c, q));
		put(&c->slots[q].incl, run);
		raise_to(&c->slots[q], 2);
	}
	return run;
}

#ifdef _OPENMP
#define OMP_PARALLEL _Pragma("omp parallel num_threads(nt)")
#else
#define OMP_PARALLEL
#endif

static int chained(const elem_ops *o, const void *x, void *y, int64_t n, int exclusive,
                   const atomic_int *stop, void *scratch, double *total)
{
	chain c = {o, x, n, CHUNK_BYTES / (int64_t)o->size, 0, scratch};
	c.nch = (n + c.chunk - 1) / c.chunk;
	int stream = y && n >= STREAM_MIN, nt = lmi_cpu_kernel_threads();
	if (c.nch <= 1) { /* one chunk: one thread, no scratch */
		if (y) o->scan(x, y, n, 0, exclusive, stream);
		else *total = o->sum(x, n);
		store_fence(stream);
		return 0;
	}
	for (int64_t k = 0; k < c.nch; k++) {
		atomic_init(&c.slots[k].state, 0);
		atomic_init(&c.slots[k].agg, 0);
		atomic_init(&c.slots[k].incl, 0);
	}
	atomic_llong next;
	atomic_int quit;
	atomic_init(&next, 0);
	atomic_init(&quit, 0);
	(void)nt; /* unused without OpenMP */
	OMP_PARALLEL
	{
		for (;;) {
			int64_t j = atomic_fetch_add(&next, 1);
			if (j >= c.nch) break;
			if (stopped(stop)) {
				atomic_store(&quit, 1);
				break;
			}
			slot *s = &c.slots[j];
			const char *xj = c.x + (size_t)(j * c.chunk) * o->size;
			int64_t len = chunk_len(&c, j);
			double a = state_of(s) >= 1 ? get(&s->agg) : o->sum(xj, len); /* into L2 */
			put(&s->agg, a);
			raise_to(s, 1);
			if (!y) continue; /* a sum needs only the aggregates */
			double before = j > 0 ? prefix(&c, j - 1) : 0;
			put(&s->incl, j > 0 ? o->add(before, a) : a);
			raise_to(s, 2);
			o->scan(xj, (char *)y + (size_t)(j * c.chunk) * o->size, len, before, exclusive,
			        stream); /* from L2 */
		}
		store_fence(stream);
	}
	if (atomic_load(&quit)) return 1;
	if (!y) { /* the chunks' sums, in order: the same total for any number of threads */
		double t = get(&c.slots[0].agg);
		for (int64_t k = 1; k < c.nch; k++) t = o->add(t, get(&c.slots[k].agg));
		*total = t;
	}
	return 0;
}

int lmi_cpu_scan_f32(const float *x, float *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch)
{
	return chained(&ops32, x, y, n, exclusive, stop, scratch, NULL);
}

int lmi_cpu_scan_f64(const double *x, double *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch)
{
	return chained(&ops64, x, y, n, exclusive, stop, scratch, NULL);
}

int lmi_cpu_sum_f32(const float *x, int64_t n, float *out, const atomic_int *stop, void *scratch)
{
	double t = 0;
	int r = chained(&ops32, x, NULL, n, 0, stop, scratch, &t);
	*out = (float)t;
	return r;
}

int lmi_cpu_sum_f64(const double *x, int64_t n, double *out, const atomic_int *stop, void *scratch)
{
	double t = 0;
	int r = chained(&ops64, x, NULL, n, 0, stop, scratch, &t);
	*out = t;
	return r;
}
