/*
 * alloc.c — the one counting, caching allocator behind every CPU storage and internal buffer.
 *
 * Design: sizes are rounded up to classes (four per power of two, 64-byte aligned); a freed block
 * goes to its class's free list instead of back to glibc, whose fresh mmap per large block made
 * conv layers up to 15x slower here. Live, peak and cached bytes are counted; the total is capped
 * before malloc (ASan aborts on huge requests); the k-th allocation can be made to fail for leak
 * sweeps. Sanitizer builds (LUMEN_SANITIZE) bypass the cache so ASan still sees use-after-free.
 * Read next: tensor.c (storage).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lmi.h"

#ifdef LUMEN_SANITIZE
#define CACHING 0
#else
#define CACHING 1
#endif

#define ALIGN 64
#define NCLASSES 256              /* 4 classes per octave: enough for 2^64 */
#define CACHE_MAX_BLOCK (1ull << 32) /* blocks above 4 GiB are never cached */

typedef struct block {
	struct block *next;
} block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block *free_lists[NCLASSES];
static size_t live, peak, cached, limit_bytes;
static size_t cache_cap; /* cached bytes above this are released */
static uint64_t n_allocs, n_hits, fail_countdown;

/* The class of n: 64-byte granules up to 256 bytes, then 4 steps per power of two. */
static int size_class(size_t n, size_t *class_bytes)
{
	if (n <= 256) {
		size_t c = n <= 64 ? 0 : (n + 63) / 64 - 1; /* 0..3 for 64,128,192,256 */
		*class_bytes = (c + 1) * 64;
		return (int)c;
	}
	int lg = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^lg < n <= 2^(lg+1) */
	size_t base = (size_t)1 << lg, step = base / 4;
	size_t k = (n - base + step - 1) / step; /* 1..4 */
	*class_bytes = base + k * step;
	return 4 + (lg - 8) * 4 + (int)(k - 1);
}

static size_t default_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || psize <= 0) return (size_t)1 << 34;
	return (size_t)pages * (size_t)psize;
}

static void ensure_init(void)
{
	if (!limit_bytes) {
		limit_bytes = default_limit();
		cache_cap = limit_bytes / 4;
	}
}

static void release_cache_locked(void)
{
	for (int c = 0; c < NCLASSES; c++) {
		while (free_lists[c]) {
			block *b = free_lists[c];
			free_lists[c] = b->next;
			free(b);
		}
	}
	cached = 0;
}

void *lm_alloc(size_t nbytes)
{
	size_t cb;
	int c = size_class(nbytes ? nbytes : 1, &cb);
	void *p = NULL;

	pthread_mutex_lock(&lock);
	ensure_init();
	if (fail_countdown && --fail_countdown == 0) {
		pthread_mutex_unlock(&lock);
		lmi_fail(LM_ERR_NOMEM, "alloc: injected failure of a %zu-byte allocation", nbytes);
		return NULL;
	}
	if (nbytes > limit_bytes || live + nbytes > limit_bytes) {
		size_t l = live;
		pthread_mutex_unlock(&lock);
		lmi_fail(LM_ERR_NOMEM,
		         "alloc: %zu bytes requested with %zu live would exceed the limit of %zu bytes",
		         nbytes, l, limit_bytes);
		return NULL;
	}
	if (CACHING && free_lists[c]) {
		block *b = free_lists[c];
		free_lists[c] = b->next;
		cached -= cb;
		n_hits++;
		p = b;
	}
	if (!p) {
		/* Cached blocks count against the limit too once a fresh block is needed: otherwise the
		 * cache (up to a quarter of the limit) could push the process past it. */
		if (cached && live + nbytes + cached + cb > limit_bytes) release_cache_locked();
		p = aligned_alloc(ALIGN, cb);
		if (!p && cached) { /* the cache may hold what the system needs */
			release_cache_locked();
			p = aligned_alloc(ALIGN, cb);
		}
		if (!p) {
			pthread_mutex_unlock(&lock);
			lmi_fail(LM_ERR_NOMEM, "alloc: the system refused %zu bytes", nbytes);
			return NULL;
		}
	}
	live += nbytes;
	if (live > peak) peak = live;
	n_allocs++;
	pthread_mutex_unlock(&lock);
	return p;
}

void lm_free(void *p, size_t nbytes)
{
	if (!p) return;
	size_t cb;
	int c = size_class(nbytes ? nbytes : 1, &cb);
	pthread_mutex_lock(&lock);
	live -= nbytes;
	if (CACHING && cb <= CACHE_MAX_BLOCK && cached + cb <= cache_cap) {
		block *b = p;
		b->next = free_lists[c];
		free_lists[c] = b;
		cached += cb;
		p = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(p);
}

void lm_memory_stats_get(lm_memory_stats *out)
{
	extern int64_t lmi_live_tensors(void);
	pthread_mutex_lock(&lock);
	ensure_init();
	out->live_bytes = live;
	out->peak_bytes = peak;
	out->cached_bytes = cached;
	out->limit_bytes = limit_bytes;
	out->allocs = n_allocs;
	out->cache_hits = n_hits;
	pthread_mutex_unlock(&lock);
	out->live_tensors = lmi_live_tensors();
}

void lm_memory_reset_peak(void)
{
	pthread_mutex_lock(&lock);
	peak = live;
	pthread_mutex_unlock(&lock);
}

void lm_memory_set_limit(size_t bytes)
{
	pthread_mutex_lock(&lock);
	limit_bytes = bytes ? bytes : default_limit();
	cache_cap = limit_bytes / 4;
	if (cached > cache_cap) release_cache_locked(); /* a lower limit applies to the cache at once */
	pthread_mutex_unlock(&lock);
}

void lm_memory_empty_cache(void)
{
	pthread_mutex_lock(&lock);
	release_cache_locked();
	pthread_mutex_unlock(&lock);
}

void lm_memory_fail_after(uint64_t k)
{
	pthread_mutex_lock(&lock);
	fail_countdown = k;
	pthread_mutex_unlock(&lock);
}

bool lm_memory_caching(void) { return CACHING; }
