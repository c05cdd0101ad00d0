/*
 * cache.h — the caching allocator of device memory (PyTorch's idea, a simpler layout): requests
 * are rounded up to a size class, freed blocks go to their class's free list, and a request is
 * served from that list before the device is asked, so a training step that asks for the same
 * sizes as the one before makes no device allocation after warm-up. Classes: 512 bytes and below
 * one class; above, four classes per power of two (2^k, 1.25, 1.5, 1.75 times 2^k), so at most
 * 25% of a block is slack. When the device has no memory left the cache is emptied and the
 * request tried once more.
 *
 * Plain C over a raw allocator given as two functions (the CUDA module's cudaMalloc / cudaFree,
 * or a test's fake), so its bookkeeping is tested on the CPU (tests/core/test_cuda_cache.c).
 * Thread-safe (one mutex). Read next: cache.c, backend_cuda.c.
 */
#ifndef LUMEN_BACKEND_CUDA_CACHE_H
#define LUMEN_BACKEND_CUDA_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The raw allocator: 0 and *p set, or a nonzero code with a message in msg (oom: out of
 * memory, the one failure the cache answers by emptying itself and trying again). */
typedef struct lmi_raw_alloc {
	int (*alloc)(void *ctx, void **p, size_t nbytes, bool *oom, char *msg, size_t cap);
	int (*free)(void *ctx, void *p, char *msg, size_t cap);
	void *ctx;
} lmi_raw_alloc;

typedef struct lmi_cache_stats {
	size_t allocated;     /* bytes of the blocks handed out (class sizes) */
	size_t max_allocated; /* the highest allocated since start or lmi_cache_reset_peak */
	size_t cached;        /* bytes of the free blocks kept */
	int64_t raw_allocs;   /* blocks asked of the raw allocator */
	int64_t raw_frees;
	int64_t hits; /* requests served from a free list */
} lmi_cache_stats;

typedef struct lmi_cache lmi_cache;

/* A cache over raw (copied). NULL with the thread's error set when out of host memory. */
lmi_cache *lmi_cache_new(const lmi_raw_alloc *raw);
/* Frees every block (those handed out too: only when no tensor holds one) and the cache. */
void lmi_cache_destroy(lmi_cache *c);
/* The class size a request of nbytes is served with (>= nbytes, 512 at least). */
size_t lmi_cache_class_size(size_t nbytes);
/* A block of at least nbytes; NULL with LM_ERR_NOMEM ("out of device memory", with the
 * figures) or LM_ERR_DEVICE (the raw allocator's message), fname naming the caller. */
void *lmi_cache_alloc(lmi_cache *c, const char *fname, size_t nbytes);
/* Gives back a block from lmi_cache_alloc of that request size (kept for reuse). */
void lmi_cache_free(lmi_cache *c, void *p, size_t nbytes);
/* Returns the free blocks to the raw allocator; LM_OK or its error. */
int lmi_cache_empty(lmi_cache *c);
lmi_cache_stats lmi_cache_get_stats(lmi_cache *c);
void lmi_cache_reset_peak(lmi_cache *c);

#endif
