/*
 * cache.c — the caching allocator (cache.h): a free list per size class, counted.
 *
 * The class of a request of n > 512 bytes: with 2^k < n <= 2^(k+1), n rounded up to a multiple
 * of 2^k / 4; its list index is 4 (k - 9) + the multiple's number - 4 (512 itself: 0). A free
 * block's node remembers its address; a block handed out is known by (address, request size),
 * which the storage keeps, so nothing is looked up on free. Read next: backend_cuda.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cuda/cache.h"
#include "core/lmi.h"

#define NCLASSES 256

typedef struct node {
	void *p;
	struct node *next;
} node;

struct lmi_cache {
	lmi_raw_alloc raw;
	pthread_mutex_t lock;
	node *free[NCLASSES];
	lmi_cache_stats st;
};

size_t lmi_cache_class_size(size_t n)
{
	if (n <= 512) return 512;
	if (n > (size_t)1 << 62) return n; /* no device has it: the request fails */
	int k = 63 - __builtin_clzll((unsigned long long)(n - 1));
	size_t step = (size_t)1 << (k - 2);
	return (n + step - 1) / step * step;
}

static int class_index(size_t size)
{
	if (size <= 512) return 0;
	int k = 63 - __builtin_clzll((unsigned long long)(size - 1));
	return 4 * (k - 9) + (int)(size >> (k - 2)) - 4;
}

lmi_cache *lmi_cache_new(const lmi_raw_alloc *raw)
{
	lmi_cache *c = calloc(1, sizeof *c);
	if (!c) return lmi_fail_null(LM_ERR_NOMEM, "cuda: out of host memory for the allocator");
	c->raw = *raw;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

/* Returns the free blocks of every class to the raw allocator (lock held). */
static int empty_locked(lmi_cache *c, char *msg, size_t cap)
{
	int err = 0;
	for (int i = 0; i < NCLASSES; i++)
		while (c->free[i]) {
			node *n = c->free[i];
			int e = c->raw.free(c->raw.ctx, n->p, msg, cap);
			if (e && !err) err = e;
			c->free[i] = n->next;
			free(n);
			c->st.raw_frees++;
		}
	c->st.cached = 0;
	return err;
}

void lmi_cache_destroy(lmi_cache *c)
{
	if (!c) return;
	char msg[256];
	empty_locked(c, msg, sizeof msg);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void *lmi_cache_alloc(lmi_cache *c, const char *fname, size_t nbytes)
{
	size_t size = lmi_cache_class_size(nbytes);
	int i = class_index(size);
	if (i < 0 || i >= NCLASSES)
		return lmi_fail_null(LM_ERR_NOMEM, "%s: out of device memory (%zu bytes asked)",
		                     fname, nbytes);
	char msg[512] = "";
	void *p = NULL;
	if (nbytes > (size_t)1 << 62) i = -1;
	if (i < 0)
		return lmi_fail_null(LM_ERR_NOMEM, "%s: out of device memory (%zu bytes asked)",
		                     fname, nbytes);
	pthread_mutex_lock(&c->lock);
	node *n = c->free[i];
	if (n) {
		c->free[i] = n->next;
		p = n->p;
		free(n);
		c->st.cached -= size;
		c->st.hits++;
	} else {
		bool oom = false;
		int err = c->raw.alloc(c->raw.ctx, &p, size, &oom, msg, sizeof msg);
		if (err && oom) { /* what the cache keeps may be what is missing */
			char m2[256];
			empty_locked(c, m2, sizeof m2);
			oom = false;
			err = c->raw.alloc(c->raw.ctx, &p, size, &oom, msg, sizeof msg);
		}
		if (err) {
			lmi_cache_stats st = c->st;
			pthread_mutex_unlock(&c->lock);
			if (oom)
				return lmi_fail_null(
				    LM_ERR_NOMEM,
				    "%s: out of device memory: %zu bytes asked, %zu "
				    "held by tensors, the cache emptied (%s)",
				    fname, nbytes, st.allocated, msg);
			return lmi_fail_null(LM_ERR_DEVICE, "%s: %s", fname, msg);
		}
		c->st.raw_allocs++;
	}
	c->st.allocated += size;
	if (c->st.allocated > c->st.max_allocated) c->st.max_allocated = c->st.allocated;
	pthread_mutex_unlock(&c->lock);
	return p;
}

void lmi_cache_free(lmi_cache *c, void *p, size_t nbytes)
{
	size_t size = lmi_cache_class_size(nbytes);
	int i = class_index(size);
	node *n = malloc(sizeof *n);
	pthread_mutex_lock(&c->lock);
	c->st.allocated -= size;
	if (n) {
		n->p = p;
		n->next = c->free[i];
		c->free[i] = n;
		c->st.cached += size;
	} else { /* no host memory for the node: the block goes back at once */
		char msg[256];
		c->raw.free(c->raw.ctx, p, msg, sizeof msg);
		c->st.raw_frees++;
	}
	pthread_mutex_unlock(&c->lock);
}

int lmi_cache_empty(lmi_cache *c)
{
	char msg[512] = "";
	pthread_mutex_lock(&c->lock);
	int err = empty_locked(c, msg, sizeof msg);
	pthread_mutex_unlock(&c->lock);
	if (err) return lmi_fail(LM_ERR_DEVICE, "cuda.empty_cache: %s", msg);
	return LM_OK;
}

lmi_cache_stats lmi_cache_get_stats(lmi_cache *c)
{
	pthread_mutex_lock(&c->lock);
	lmi_cache_stats s = c->st;
	pthread_mutex_unlock(&c->lock);
	return s;
}

void lmi_cache_reset_peak(lmi_cache *c)
{
	pthread_mutex_lock(&c->lock);
	c->st.max_allocated = c->st.allocated;
	pthread_mutex_unlock(&c->lock);
}
