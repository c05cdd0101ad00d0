/*
 * test_cuda_cache.c — the CUDA caching allocator's bookkeeping (src/backend/cuda/cache.h) over a
 * fake raw allocator (host memory with a capacity): size classes, reuse without raw allocations
 * after warm-up, the counters behind lm.cuda.memory_allocated / max_memory_allocated,
 * empty_cache, and out of memory (the cache emptied and the request retried, then a clear error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cache.h"
#include "testutil.h"

typedef struct fake {
	size_t cap, used;
	int64_t allocs, frees;
	bool fail_other; /* a failure that is not out of memory */
} fake;

static int f_alloc(void *ctx, void **p, size_t n, bool *oom, char *msg, size_t cap)
{
	fake *f = ctx;
	if (f->fail_other) {
		snprintf(msg, cap, "cudaMalloc: an illegal memory access was encountered");
		return 700;
	}
	if (f->used + n > f->cap) {
		*oom = true;
		snprintf(msg, cap, "cudaMalloc: out of memory");
		return 2;
	}
	*p = malloc(n + sizeof(size_t));
	*(size_t *)*p = n;
	*p = (char *)*p + sizeof(size_t);
	f->used += n;
	f->allocs++;
	return 0;
}

static int f_free(void *ctx, void *p, char *msg, size_t cap)
{
	(void)msg, (void)cap;
	fake *f = ctx;
	char *base = (char *)p - sizeof(size_t);
	f->used -= *(size_t *)base;
	free(base);
	f->frees++;
	return 0;
}

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(lmi_cache_class_size(0), 512);
	assert_int_equal(lmi_cache_class_size(1), 512);
	assert_int_equal(lmi_cache_class_size(512), 512);
	assert_int_equal(lmi_cache_class_size(513), 640);
	assert_int_equal(lmi_cache_class_size(1024), 1024);
	assert_int_equal(lmi_cache_class_size(1025), 1280);
	assert_int_equal(lmi_cache_class_size(1537), 1792);
	assert_int_equal(lmi_cache_class_size(3u << 20), 3u << 20);
	/* every size: the class holds it, wastes under a quarter, and classes are few */
	size_t prev = 0;
	int classes = 0;
	for (size_t n = 1; n <= (1u << 20); n += 7) {
		size_t c = lmi_cache_class_size(n);
		assert_true(c >= n);
		assert_true(n <= 512 || (double)(c - n) < 0.25 * (double)n);
		if (c != prev) classes++, prev = c;
	}
	assert_true(classes <= 4 * 11 + 1);
}

static void test_reuse_and_counters(void **state)
{
	(void)state;
	fake f = {.cap = 1u << 30};
	lmi_raw_alloc raw = {f_alloc, f_free, &f};
	lmi_cache *c = lmi_cache_new(&raw);
	const size_t step[5] = {4000, 100, 784 * 128 * 4, 10 * 4, 128 * 4};
	for (int it = 0; it < 20; it++) {
		void *p[5];
		for (int k = 0; k < 5; k++)
			assert_non_null(p[k] = lmi_cache_alloc(c, "test", step[k]));
		for (int k = 4; k >= 0; k--) lmi_cache_free(c, p[k], step[k]);
		if (it == 0) assert_int_equal(f.allocs, 5);
	}
	assert_int_equal(f.allocs, 5); /* no raw allocation after the first step */
	lmi_cache_stats s = lmi_cache_get_stats(c);
	assert_int_equal(s.allocated, 0);
	size_t total = 0;
	for (int k = 0; k < 5; k++) total += lmi_cache_class_size(step[k]);
	assert_int_equal(s.max_allocated, total);
	assert_int_equal(s.cached, total);
	assert_int_equal(s.hits, 19 * 5);
	void *q = lmi_cache_alloc(c, "test", 100);
	assert_int_equal(lmi_cache_get_stats(c).allocated, 512);
	lmi_cache_reset_peak(c);
	assert_int_equal(lmi_cache_get_stats(c).max_allocated, 512);
	assert_int_equal(lmi_cache_empty(c), LM_OK);
	s = lmi_cache_get_stats(c);
	assert_int_equal(s.cached, 0);
	assert_int_equal(f.frees, 4); /* q is still held */
	lmi_cache_free(c, q, 100);
	lmi_cache_destroy(c);
	assert_int_equal(f.frees, 5);
	assert_int_equal(f.used, 0);
}

static void test_out_of_memory(void **state)
{
	(void)state;
	fake f = {.cap = 4096};
	lmi_raw_alloc raw = {f_alloc, f_free, &f};
	lmi_cache *c = lmi_cache_new(&raw);
	void *a = lmi_cache_alloc(c, "test", 2048), *b = lmi_cache_alloc(c, "test", 1024);
	lmi_cache_free(c, a, 2048); /* 2048 cached, 1024 held: 1024 left on the device */
	/* 1792 do not fit beside the cache: it is emptied and the retry succeeds */
	void *d = lmi_cache_alloc(c, "test", 1700);
	assert_non_null(d);
	assert_int_equal(f.frees, 1);
	assert_int_equal(lmi_cache_get_stats(c).cached, 0);
	/* 4096 more do not fit at all: a clear error naming the caller and the figures */
	assert_null(lmi_cache_alloc(c, "test", 4096));
	assert_int_equal(lm_last_status(), LM_ERR_NOMEM);
	assert_non_null(strstr(lm_last_error(), "test: out of device memory"));
	assert_non_null(strstr(lm_last_error(), "4096 bytes asked"));
	/* and the cache still works */
	lmi_cache_free(c, d, 1700);
	assert_ptr_equal(lmi_cache_alloc(c, "test", 1700), d);
	lmi_cache_free(c, d, 1700);
	f.fail_other = true;
	assert_null(lmi_cache_alloc(c, "test", 10));
	assert_int_equal(lm_last_status(), LM_ERR_DEVICE);
	assert_non_null(strstr(lm_last_error(), "illegal memory access"));
	assert_null(lmi_cache_alloc(c, "test", (size_t)-1));
	assert_int_equal(lm_last_status(), LM_ERR_NOMEM);
	lmi_cache_free(c, b, 1024);
	lmi_cache_destroy(c);
	assert_int_equal(f.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classes),
	    cmocka_unit_test(test_reuse_and_counters),
	    cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
