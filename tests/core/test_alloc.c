/*
 * test_alloc.c — the counting, caching allocator: reuse of freed blocks (cache hits), live and peak
 * bytes, the limit, the sanitizer bypass, and the allocation-failure sweep.
 *
 * The sweep (SQLite's test_malloc idea): for a composite operation that makes A allocations, fail
 * the k-th one for every k = 1..A and check that the operation reports LM_ERR_NOMEM with the
 * allocator's message and that live tensors and live bytes return to where they started — no
 * partial result, no leak — and that k = A + 1 (no failure reached) succeeds.
 */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

static lm_memory_stats stats(void)
{
	lm_memory_stats s;
	lm_memory_stats_get(&s);
	return s;
}

static void test_cache_reuse(void **state)
{
	(void)state;
	if (!lm_memory_caching()) skip();
	int64_t n = 300000; /* 1.2 MB of float32 */
	lm_tensor *a = lm_zeros(1, &n, LM_FLOAT32);
	void *pa = lm_tensor_data(a);
	lm_tensor_release(a);
	lm_memory_stats s0 = stats();
	assert_true(s0.cached_bytes >= (size_t)n * 4);
	/* a tensor of a slightly different size falls in the same class: the block comes back */
	int64_t m = n - 1000;
	lm_tensor *b = lm_empty(1, &m, LM_FLOAT32);
	lm_memory_stats s1 = stats();
	assert_ptr_equal(lm_tensor_data(b), pa);
	assert_true(s1.cache_hits >= s0.cache_hits + 1);
	assert_true(s1.cached_bytes < s0.cached_bytes);
	lm_tensor_release(b);
	/* a loop of same-size temporaries is served from the cache after the first round */
	lm_memory_stats s2 = stats();
	for (int i = 0; i < 10; i++) {
		lm_tensor *x = lm_ones(1, &n, LM_FLOAT32), *y = lm_add(x, x);
		lm_tensor_release(y);
		lm_tensor_release(x);
	}
	lm_memory_stats s3 = stats();
	assert_true(s3.cache_hits - s2.cache_hits >= (s3.allocs - s2.allocs) * 9 / 10);
	lm_memory_empty_cache();
	assert_int_equal(stats().cached_bytes, 0);
}

static void test_live_and_peak(void **state)
{
	(void)state;
	lm_memory_stats s0 = stats();
	lm_memory_reset_peak();
	assert_int_equal(stats().peak_bytes, s0.live_bytes);
	void *a = lm_alloc(1000), *b = lm_alloc(5000);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(stats().live_bytes, s0.live_bytes + 6000);
	lm_free(b, 5000);
	void *c = lm_alloc(100);
	lm_memory_stats s1 = stats();
	assert_int_equal(s1.live_bytes, s0.live_bytes + 1100);
	assert_int_equal(s1.peak_bytes, s0.live_bytes + 6000); /* the high-water mark stays */
	lm_free(a, 1000);
	lm_free(c, 100);
	assert_int_equal(stats().live_bytes, s0.live_bytes);
	lm_memory_reset_peak();
	assert_int_equal(stats().peak_bytes, s0.live_bytes);
	/* tensors count their storage: a 4000-element float64 tensor adds at least 32000 bytes */
	int64_t n = 4000;
	lm_tensor *t = lm_zeros(1, &n, LM_FLOAT64);
	assert_true(stats().live_bytes >= s0.live_bytes + 32000);
	assert_int_equal(stats().live_tensors, s0.live_tensors + 1);
	lm_tensor_release(t);
	assert_int_equal(stats().live_bytes, s0.live_bytes);
}

static void test_limit(void **state)
{
	(void)state;
	lm_memory_stats s0 = stats();
	lm_memory_set_limit(s0.live_bytes + (1 << 20));
	assert_int_equal(stats().limit_bytes, s0.live_bytes + (1 << 20));
	int64_t n = 1 << 19; /* 2 MB of float32 */
	EXPECT_NULL(lm_zeros(1, &n, LM_FLOAT32), LM_ERR_NOMEM,
	            "zeros: cannot allocate shape [524288] of float32 (alloc: 2097152 bytes requested");
	assert_non_null(strstr(lm_last_error(), "would exceed the limit"));
	/* an op whose result does not fit names itself */
	int64_t m = 1 << 17; /* 512 KB each: a fits, a + a's second copy does not */
	lm_tensor *a = lm_ones(1, &m, LM_FLOAT32);
	assert_non_null(a);
	lm_tensor *two = lm_cat(2, (lm_tensor *[]){a, a}, 0);
	assert_null(two);
	assert_int_equal(lm_last_status(), LM_ERR_NOMEM);
	assert_non_null(strstr(lm_last_error(), "cat: cannot allocate shape [262144]"));
	lm_tensor_release(a);
	lm_memory_set_limit(0);
	assert_true(stats().limit_bytes > (size_t)1 << 28);
	/* sizes beyond any memory fail before malloc (ASan would abort on malloc(4e18)) */
	int64_t huge[2] = {1ll << 30, 1ll << 30};
	EXPECT_NULL(lm_empty(2, huge, LM_FLOAT32), LM_ERR_NOMEM, "would exceed the limit");
	int64_t over[2] = {1ll << 40, 1ll << 40};
	EXPECT_NULL(lm_empty(2, over, LM_FLOAT32), LM_ERR_OVERFLOW, "overflows");
	assert_null(lm_alloc((size_t)-1));
	assert_int_equal(lm_last_status(), LM_ERR_NOMEM);
	assert_int_equal(stats().live_bytes, s0.live_bytes);
}

/* Sanitizer builds hand every block back to the system, so ASan sees use-after-free. */
static void test_sanitize_bypass(void **state)
{
	(void)state;
	lm_build_info bi;
	lm_build_info_get(&bi);
	assert_int_equal(lm_memory_caching(), !bi.sanitize);
	if (lm_memory_caching()) skip();
	lm_memory_stats s0 = stats();
	for (int i = 0; i < 5; i++) lm_free(lm_alloc(4096), 4096);
	lm_memory_stats s1 = stats();
	assert_int_equal(s1.cache_hits, s0.cache_hits);
	assert_int_equal(s1.cached_bytes, 0);
	assert_int_equal(s1.allocs, s0.allocs + 5);
}

static void test_fail_after(void **state)
{
	(void)state;
	lm_memory_fail_after(2);
	void *a = lm_alloc(10);
	assert_non_null(a);
	assert_null(lm_alloc(10)); /* the second from now */
	EXPECT_STATUS(lm_last_status(), LM_ERR_NOMEM, "alloc: injected failure of a 10-byte allocation");
	void *b = lm_alloc(10); /* one failure only */
	assert_non_null(b);
	lm_free(a, 10);
	lm_free(b, 10);
	lm_memory_fail_after(1);
	lm_memory_fail_after(0); /* disabled again */
	a = lm_alloc(10);
	assert_non_null(a);
	lm_free(a, 10);
}

/* ---------------------------------------------------------------- the sweep */

typedef lm_status (*composite_fn)(lm_tensor *const *in);

/* Runs f for its result status, releasing whatever the op returned. */
#define RESULT(expr)                                                                                \
	do {                                                                                        \
		lm_tensor *r_ = (expr);                                                                 \
		if (!r_) return lm_last_status();                                                      \
		lm_tensor_release(r_);                                                                  \
	} while (0)

/* in: [0] a (64, 48) float32, [1] its transpose base (48, 64), [2] int64 index (64, 48) in
 * [0, 48), [3] an image (2, 3, 9, 9), [4] (256, 64) float32: large enough for 2 sort threads */

static lm_status matmul_noncontig(lm_tensor *const *in)
{
	/* a^T is a transposed view (BLAS takes it as is); w, every other column of every other row,
	 * has no unit stride and is copied to a dense buffer first */
	lm_tensor *at = lm_t(in[0]);
	lm_tensor *w = lm_as_strided(in[0], 2, (int64_t[]){24, 32}, (int64_t[]){96, 2}, 0);
	lm_tensor *top = at ? lm_narrow(at, 0, 0, 32) : NULL;
	lm_tensor *p = top && w ? lm_matmul(w, top) : NULL, *q = p ? lm_matmul(at, in[0]) : NULL;
	lm_status s = q ? LM_OK : lm_last_status();
	lm_tensor_release(at);
	lm_tensor_release(w);
	lm_tensor_release(top);
	lm_tensor_release(p);
	lm_tensor_release(q);
	return s;
}

static lm_status reduce_transposed(lm_tensor *const *in)
{
	lm_tensor *t = lm_t(in[0]);
	if (!t) return lm_last_status();
	lm_tensor *v = NULL, *i = NULL;
	lm_status s = LM_OK;
	lm_tensor *a = lm_sum(t, 0, false), *b = a ? lm_var(t, 1, true, 1) : NULL;
	if (!b || (s = lm_max_dim(t, 1, false, &v, &i))) s = s ? s : lm_last_status();
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(v);
	lm_tensor_release(i);
	lm_tensor_release(t);
	return s;
}

static lm_status cat_and_index(lm_tensor *const *in)
{
	lm_tensor *t = lm_t(in[1]); /* (64, 48), not contiguous */
	lm_tensor *i32 = t ? lm_to_dtype(in[2], LM_INT32) : NULL;
	lm_tensor *c = i32 ? lm_cat(3, (lm_tensor *[]){in[0], t, i32}, 1) : NULL;
	lm_tensor *s = c ? lm_stack(2, (lm_tensor *[]){t, in[0]}, 0) : NULL;
	lm_tensor *row = s ? lm_select(in[2], 1, 0) : NULL;
	lm_tensor *is = row ? lm_index_select(t, 0, row) : NULL;
	lm_tensor *g = is ? lm_gather(t, 1, in[2]) : NULL;
	lm_tensor *sa = g ? lm_scatter_add(t, 1, in[2], g) : NULL;
	lm_tensor *mask = sa ? lm_binary_scalar(LM_GT, t, 0) : NULL;
	lm_tensor *mf = mask ? lm_masked_fill(t, i32, -1) : NULL; /* an int mask: converted first */
	lm_tensor *oh = mf ? lm_one_hot(row, -1) : NULL;
	lm_status st = oh ? LM_OK : lm_last_status();
	lm_tensor *all[] = {t, i32, c, s, row, is, g, sa, mask, mf, oh};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
	return st;
}

static lm_status sort_and_shape(lm_tensor *const *in)
{
	lm_tensor *t = lm_t(in[1]), *v = NULL, *i = NULL, *tv = NULL, *ti = NULL;
	if (!t) return lm_last_status();
	lm_status s = lm_sort(in[4], 1, true, &v, &i); /* scratch allocated inside 2 workers */
	if (!s) s = lm_topk(t, 5, 0, true, &tv, &ti);
	lm_tensor *cs = s ? NULL : lm_cumsum(t, 0);
	lm_tensor *tr = cs ? lm_tril(t, -1) : NULL;
	lm_tensor *rp = tr ? lm_repeat(t, 3, (int64_t[]){2, 1, 2}) : NULL;
	lm_tensor *fl = rp ? lm_flip(t, 2, (int[]){0, 1}) : NULL;
	lm_tensor *pd = fl ? lm_pad(t, 2, (int64_t[]){1, 2, 0, 3}, 0.5) : NULL;
	if (!s && !pd) s = lm_last_status();
	lm_tensor *all[] = {t, v, i, tv, ti, cs, tr, rp, fl, pd};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
	return s;
}

static lm_status windows(lm_tensor *const *in)
{
	lm_window2d w = {3, 3, 2, 1, 1, 1, 1, 2};
	lm_tensor *x = lm_transpose(in[3], 2, 3); /* a non-contiguous image */
	lm_tensor *c = x ? lm_im2col(x, &w) : NULL;
	lm_tensor *ct = c ? lm_transpose(c, 1, 2) : NULL, *cc = ct ? lm_contiguous(ct) : NULL;
	lm_tensor *back = cc ? lm_transpose(cc, 1, 2) : NULL;
	lm_tensor *img = back ? lm_col2im(back, 3, 9, 9, &w) : NULL;
	lm_status s = img ? LM_OK : lm_last_status();
	lm_tensor *all[] = {x, c, ct, cc, back, img};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
	return s;
}

/* A small graph, forward and backward: the autograd engine's allocations too. */
static lm_status graph(lm_tensor *const *in)
{
	lm_tensor *a = lm_to_dtype(in[0], LM_FLOAT64);
	if (!a) return lm_last_status();
	lm_tensor_requires_grad_(a, true);
	lm_tensor *row = lm_select(in[2], 1, 3);
	lm_tensor *c = row ? lm_cat(2, (lm_tensor *[]){a, a}, 1) : NULL;
	lm_tensor *e = c ? lm_index_select(c, 0, row) : NULL;
	lm_tensor *p = e ? lm_pad(e, 1, (int64_t[]){1, 1}, 0) : NULL;
	lm_tensor *s = p ? lm_sum(p, LM_DIM_ALL, false) : NULL;
	lm_status st = s ? lm_backward(s, NULL, false) : lm_last_status();
	lm_tensor *all[] = {a, row, c, e, p, s};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
	return st;
}

static const struct {
	const char *name;
	composite_fn fn;
} composites[] = {
	{"matmul of non-contiguous inputs", matmul_noncontig},
	{"reductions of a transposed view", reduce_transposed},
	{"cat, stack, index_select, gather, scatter_add, masked_fill, one_hot", cat_and_index},
	{"sort, topk, cumsum, tril, repeat, flip, pad", sort_and_shape},
	{"im2col and col2im of non-contiguous inputs", windows},
	{"a graph through cat/index_select/pad, forward and backward", graph},
};

static void test_failure_sweep(void **state)
{
	(void)state;
	lm_manual_seed(5);
	lm_tensor *in[5];
	in[0] = lm_randn(2, (int64_t[]){64, 48}, LM_FLOAT32);
	lm_tensor *b = lm_randn(2, (int64_t[]){64, 48}, LM_FLOAT32);
	in[1] = lm_t(b); /* (48, 64) */
	lm_tensor_release(b);
	in[2] = lm_randint(0, 48, 2, (int64_t[]){64, 48}, LM_INT64);
	in[3] = lm_randn(4, (int64_t[]){2, 3, 9, 9}, LM_FLOAT32);
	in[4] = lm_randn(2, (int64_t[]){256, 64}, LM_FLOAT32);
	lm_set_num_threads(2);
	for (size_t c = 0; c < sizeof composites / sizeof composites[0]; c++) {
		lm_memory_empty_cache(); /* the same path every time: no cache state carried over */
		lm_memory_stats s0 = stats();
		assert_int_equal(composites[c].fn(in), LM_OK);
		uint64_t A = stats().allocs - s0.allocs;
		assert_true(A > 0);
		assert_int_equal(stats().live_tensors, s0.live_tensors);
		assert_int_equal(stats().live_bytes, s0.live_bytes);
		for (uint64_t k = 1; k <= A + 1; k++) {
			lm_clear_error();
			lm_memory_fail_after(k);
			lm_status st = composites[c].fn(in);
			lm_memory_fail_after(0);
			lm_memory_stats s1 = stats();
			if (s1.live_tensors != s0.live_tensors || s1.live_bytes != s0.live_bytes)
				fail_msg("%s: failing allocation %llu of %llu leaks %lld tensors, %lld bytes (%s)",
				         composites[c].name, (unsigned long long)k, (unsigned long long)A,
				         (long long)(s1.live_tensors - s0.live_tensors),
				         (long long)s1.live_bytes - (long long)s0.live_bytes, lm_last_error());
			if (k <= A && (st != LM_ERR_NOMEM || !strstr(lm_last_error(), "injected failure")))
				fail_msg("%s: failing allocation %llu of %llu gave status %s, message \"%s\"",
				         composites[c].name, (unsigned long long)k, (unsigned long long)A,
				         lm_status_name(st), lm_last_error());
			if (k == A + 1 && st != LM_OK)
				fail_msg("%s: with no failure reached: %s", composites[c].name, lm_last_error());
		}
		print_message("  %s: %llu allocations, each failure reported, nothing leaked\n",
		              composites[c].name, (unsigned long long)A);
	}
	for (int k = 0; k < 5; k++) lm_tensor_release(in[k]);
	lm_set_num_threads(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cache_reuse),
		cmocka_unit_test(test_live_and_peak),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_sanitize_bypass),
		cmocka_unit_test(test_fail_after),
		cmocka_unit_test(test_failure_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
