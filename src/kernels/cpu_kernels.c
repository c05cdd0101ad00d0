/*
 * cpu_kernels.c — the CPU runs of the scan and reduction patterns: every core, every vector lane,
 * memory bandwidth; and the choice of the SIMD path (cpu_simd.h) that every cpu_*.c run takes.
 *
 * Scan: a chained scan over chunks that fit in a core's L2 (see "chunks, chained" below). On
 * several threads each chunk is read from memory once to sum it, and again from L2 to scan it
 * from the prefix of the chunks before it, so memory sees one read and one write per element,
 * like memcpy, and no thread ever waits at a barrier; on one thread the prefix is always known
 * and each chunk is scanned in one pass. Within a chunk the path's loop scans 8 or 16 elements
 * per register (cpu_loops_avx2.c, cpu_loops_avx512.c) or blocks of 8 in scalar registers.
 * Outputs far larger than the caches are written with streaming stores, which skip reading the
 * destination lines first. The Kogge-Stone variant scans each chunk in sections by Kogge-Stone
 * steps instead (the work-inefficient scan, for the lesson).
 * Sum: the same chunks, summed with four accumulators each, then added in chunk order: the same
 * result for any number of threads.
 * Read next: body/scan.h and body/reduce.h (the same patterns on a GPU), cpu_simd.h.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu_simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define STREAM_MIN ((int64_t)1 << 21) /* outputs from this many elements are streamed */
#define MAX_THREADS 256 /* cap on the threads used */
#define KS_MAX_SECTION 1024

/* ---------------------------------------------------------------- the SIMD path */

static atomic_int isa_set = -1; /* an LMI_CPU_* once set or first asked */

int lmi_cpu_isa_supported(int isa)
{
	if (isa == LMI_CPU_SCALAR) return 1;
#ifdef LMI_CPU_X86
	__builtin_cpu_init();
	int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
	         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
	         __builtin_cpu_supports("f16c") && __builtin_cpu_supports("lzcnt") &&
	         __builtin_cpu_supports("movbe");
	if (isa == LMI_CPU_AVX2) return v3;
	if (isa == LMI_CPU_AVX512)
		return v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
		       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
		       __builtin_cpu_supports("avx512vl");
#endif
	return 0;
}

int lmi_cpu_isa(void)
{
	int isa = atomic_load_explicit(&isa_set, memory_order_relaxed);
	if (isa >= 0) return isa;
	for (isa = LMI_CPU_ISA_COUNT - 1; isa > 0 && !lmi_cpu_isa_supported(isa); isa--)
		;
	atomic_store_explicit(&isa_set, isa, memory_order_relaxed);
	return isa;
}

int lmi_cpu_set_isa(int isa)
{
	if (isa < 0 || isa >= LMI_CPU_ISA_COUNT || !lmi_cpu_isa_supported(isa)) return -1;
	atomic_store_explicit(&isa_set, isa, memory_order_relaxed);
	return 0;
}

const char *lmi_cpu_isa_name(int isa)
{
	static const char *const names[LMI_CPU_ISA_COUNT] = {"scalar", "avx2", "avx512"};
	return isa >= 0 && isa < LMI_CPU_ISA_COUNT ? names[isa] : "?";
}

const lmi_cpu_loops *lmi_cpu_loops_get(void)
{
#ifdef LMI_CPU_X86
	switch (lmi_cpu_isa()) {
	case LMI_CPU_AVX512: return &lmi_cpu_loops_avx512;
	case LMI_CPU_AVX2: return &lmi_cpu_loops_avx2;
	default: break;
	}
#endif
	return &lmi_cpu_loops_scalar;
}

const char *lmi_cpu_scan_how(void) { return lmi_cpu_loops_get()->scan_how; }

/* ---------------------------------------------------------------- threads, caches */

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

/* ---------------------------------------------------------------- chunks, chained */
/*
 * The input is cut into chunks of LMI_CPU_CHUNK_BYTES, taken by the threads in order from a shared
 * counter (a thread that is preempted simply takes fewer chunks). For chunk j a thread sums it
 * (reading it from memory into its L2), publishes that aggregate, gets the inclusive prefix of
 * chunk j - 1 (the sum of everything before), publishes its own, and scans the chunk again from L2
 * starting at that prefix: one read and one write of memory per element, and no barrier. This is
 * the CPU form of the single-pass "decoupled look-back" scan: looking back, a thread takes the
 * newest published prefix and adds the aggregates after it; an aggregate not yet published is
 * waited for briefly, then computed by the thread itself, so no thread ever waits on one that is
 * not running. Every prefix is defined as prefix(j-1) + aggregate(j), in the element type, so the
 * result is the same whichever thread computes it, and for any number of threads. One thread
 * needs no look-back: it scans each chunk in one pass from the running prefix, and the chunk's
 * aggregate comes out of the same pass, added in the same order as the sum would add it.
 */

typedef struct slot {
	_Atomic uint32_t state; /* 0: nothing yet, 1: aggregate, 2: and inclusive prefix */
	_Atomic uint64_t agg, incl; /* values of the element type, held as double bits */
	char pad_[64 - 24];
} slot;

size_t lmi_cpu_scratch_bytes(int64_t n, size_t elem)
{
	int64_t chunk = LMI_CPU_CHUNK_BYTES / (int64_t)elem, nch = (n + chunk - 1) / chunk;
	return nch > 1 ? (size_t)nch * sizeof(slot) : 0;
}

/* A scan or sum as asked: the element type, the path's loops, the Kogge-Stone section (0: the
 * path's register scan), the input and its chunks. Values travel as doubles (a float converts to
 * double and back exactly). */
typedef struct chain {
	const lmi_cpu_loops *L;
	int is_double;
	size_t size;
	unsigned section;
	const char *x;
	int64_t n, chunk, nch;
	slot *slots;
} chain;

static double sum_of(const chain *c, const void *x, int64_t n)
{
	return c->is_double ? c->L->sum_f64(x, n) : c->L->sum_f32(x, n);
}

static double add_of(const chain *c, double a, double b)
{
	return c->is_double ? a + b : (double)((float)a + (float)b);
}

/* Kogge-Stone sections of one chunk, chained by their carries. */
static void ks_chunk(const chain *c, const void *x, void *y, int64_t n, double carry, int exclusive)
{
	_Alignas(64) double buf[2 * KS_MAX_SECTION];
	int64_t s = c->section;
	for (int64_t lo = 0; lo < n; lo += s) {
		int64_t len = n - lo < s ? n - lo : s;
		if (c->is_double)
			carry = c->L->ks_section_f64((const double *)x + lo, (double *)y + lo, len, carry,
			                             exclusive, buf);
		else
			carry = c->L->ks_section_f32((const float *)x + lo, (float *)y + lo, len, carry,
			                             exclusive, (float *)buf);
	}
}

/* Scans chunk x[0..n) into y from carry. The path's register scans also return the chunk's
 * aggregate, added exactly as sum_of adds it (*known = 1); the Kogge-Stone sections do not
 * (*known = 0). */
static double scan_of(const chain *c, const void *x, void *y, int64_t n, double carry,
                      int exclusive, int stream, int *known)
{
	*known = !c->section;
	if (c->section) {
		ks_chunk(c, x, y, n, carry, exclusive);
		return 0;
	}
	return c->is_double ? c->L->scan_f64(x, y, n, carry, exclusive, stream)
	                    : c->L->scan_f32(x, y, n, carry, exclusive, stream);
}

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

static int64_t chunk_len(const chain *c, int64_t k)
{
	int64_t lo = k * c->chunk;
	return c->n - lo < c->chunk ? c->n - lo : c->chunk;
}

static const char *chunk_at(const chain *c, const void *base, int64_t k)
{
	return (const char *)base + (size_t)(k * c->chunk) * c->size;
}

/* The aggregate of chunk k: its owner's, after a short wait, or computed here. */
static double aggregate(const chain *c, int64_t k)
{
	slot *s = &c->slots[k];
	for (int spin = 0; spin < 4096 && state_of(s) == 0; spin++) relax();
	if (state_of(s) >= 1) return get(&s->agg);
	double a = sum_of(c, chunk_at(c, c->x, k), chunk_len(c, k));
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
		run = m < 0 && q == 0 ? aggregate(c, 0) : add_of(c, run, aggregate(c, q));
		put(&c->slots[q].incl, run);
		raise_to(&c->slots[q], 2);
	}
	return run;
}

/* One thread: each chunk in one pass from the running prefix (no scratch needed). */
static int serial(const chain *c, void *y, int exclusive, int stream, const atomic_int *stop,
                  double *total)
{
	double before = 0;
	for (int64_t j = 0; j < c->nch; j++) {
		if (c->nch > 1 && lmi_cpu_stopped(stop)) return 1;
		const char *xj = chunk_at(c, c->x, j);
		int64_t len = chunk_len(c, j);
		int known = 0;
		double a = 0;
		if (y) a = scan_of(c, xj, (char *)chunk_at(c, y, j), len, before, exclusive, stream, &known);
		if (!known) a = sum_of(c, xj, len); /* from the cache when just scanned */
		before = j ? add_of(c, before, a) : a;
	}
	if (total) *total = before;
	return 0;
}

#ifdef _OPENMP
#define OMP_PARALLEL _Pragma("omp parallel num_threads(nt)")
#else
#define OMP_PARALLEL
#endif

/* Several threads: the look-back described above. */
static int parallel(chain *c, void *y, int exclusive, int stream, const atomic_int *stop,
                    double *total, int nt)
{
	for (int64_t k = 0; k < c->nch; k++) {
		atomic_init(&c->slots[k].state, 0);
		atomic_init(&c->slots[k].agg, 0);
		atomic_init(&c->slots[k].incl, 0);
	}
	atomic_llong next;
	atomic_int quit;
	atomic_init(&next, 0);
	atomic_init(&quit, 0);
	(void)nt; /* unused without OpenMP */
	OMP_PARALLEL
	for (;;) {
		int64_t j = atomic_fetch_add(&next, 1);
		if (j >= c->nch) break;
		if (lmi_cpu_stopped(stop)) {
			atomic_store(&quit, 1);
			break;
		}
		slot *s = &c->slots[j];
		const char *xj = chunk_at(c, c->x, j);
		int64_t len = chunk_len(c, j);
		double a = state_of(s) >= 1 ? get(&s->agg) : sum_of(c, xj, len); /* into L2 */
		put(&s->agg, a);
		raise_to(s, 1);
		if (!y) continue; /* a sum needs only the aggregates */
		double before = j > 0 ? prefix(c, j - 1) : 0;
		put(&s->incl, j > 0 ? add_of(c, before, a) : a);
		raise_to(s, 2);
		int known;
		scan_of(c, xj, (char *)chunk_at(c, y, j), len, before, exclusive, stream, &known); /* L2 */
	}
	if (atomic_load(&quit)) return 1;
	if (!y) { /* the chunks' sums, in order: the same total for any number of threads */
		double t = get(&c->slots[0].agg);
		for (int64_t k = 1; k < c->nch; k++) t = add_of(c, t, get(&c->slots[k].agg));
		*total = t;
	}
	return 0;
}

/* y NULL: the sum into *total; else the scan (section > 0: Kogge-Stone sections). */
static int chained(int is_double, unsigned section, const void *x, void *y, int64_t n,
                   int exclusive, const atomic_int *stop, void *scratch, double *total)
{
	size_t size = is_double ? sizeof(double) : sizeof(float);
	chain c = {lmi_cpu_loops_get(), is_double, size, section, x, n,
	           LMI_CPU_CHUNK_BYTES / (int64_t)size, 0, scratch};
	c.nch = (n + c.chunk - 1) / c.chunk;
	int stream = y && n >= STREAM_MIN, nt = lmi_cpu_kernel_threads();
	if (nt == 1 || c.nch <= 1 || !scratch) return serial(&c, y, exclusive, stream, stop, total);
	return parallel(&c, y, exclusive, stream, stop, total, nt);
}

int lmi_cpu_scan_f32(const float *x, float *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch)
{
	return chained(0, 0, x, y, n, exclusive, stop, scratch, NULL);
}

int lmi_cpu_scan_f64(const double *x, double *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch)
{
	return chained(1, 0, x, y, n, exclusive, stop, scratch, NULL);
}

static unsigned ks_section(unsigned section)
{
	return section < 1 ? 1 : section > KS_MAX_SECTION ? KS_MAX_SECTION : section;
}

int lmi_cpu_scan_kogge_stone_f32(const float *x, float *y, int64_t n, int exclusive,
                                 unsigned section, const atomic_int *stop, void *scratch)
{
	return chained(0, ks_section(section), x, y, n, exclusive, stop, scratch, NULL);
}

int lmi_cpu_scan_kogge_stone_f64(const double *x, double *y, int64_t n, int exclusive,
                                 unsigned section, const atomic_int *stop, void *scratch)
{
	return chained(1, ks_section(section), x, y, n, exclusive, stop, scratch, NULL);
}

int lmi_cpu_sum_f32(const float *x, int64_t n, float *out, const atomic_int *stop, void *scratch)
{
	double t = 0;
	int r = chained(0, 0, x, NULL, n, 0, stop, scratch, &t);
	*out = (float)t;
	return r;
}

int lmi_cpu_sum_f64(const double *x, int64_t n, double *out, const atomic_int *stop, void *scratch)
{
	double t = 0;
	int r = chained(1, 0, x, NULL, n, 0, stop, scratch, &t);
	*out = t;
	return r;
}
