/*
 * test_ops2.c — the Foundation II ops on hand-checked values and properties the op table does not
 * state: sort stability and NaN order, cat's dtype promotion and the legacy empty input, one_hot,
 * an im2col worked example and the im2col/col2im adjoint identity, deterministic scatter_add
 * across thread counts, large (parallel) cases against the 1-thread run, and gradients through
 * lm_backward (grad_fn names, repeated indices, an 8-d repeat).
 */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"

static lm_memory_stats before;

static int setup(void **state)
{
	(void)state;
	lm_memory_stats_get(&before);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lm_memory_stats after;
	lm_memory_stats_get(&after);
	if (after.live_tensors != before.live_tensors || after.live_bytes != before.live_bytes)
		fail_msg("leak: %lld tensors, %zu bytes live (before: %lld, %zu)",
		         (long long)after.live_tensors, after.live_bytes, (long long)before.live_tensors,
		         before.live_bytes);
	lm_set_num_threads(0);
	return 0;
}

/* Element i (C order) of a contiguous tensor. */
static double at(const lm_tensor *t, int64_t i)
{
	const void *p = lm_tensor_data(t);
	switch (lm_tensor_dtype(t)) {
	case LM_FLOAT32: return ((const float *)p)[i];
	case LM_FLOAT64: return ((const double *)p)[i];
	case LM_INT32: return ((const int32_t *)p)[i];
	case LM_INT64: return (double)((const int64_t *)p)[i];
	default: return ((const uint8_t *)p)[i];
	}
}

static void expect_values(const lm_tensor *t, int n, const double *want)
{
	assert_true(lm_tensor_numel(t) >= n); /* the first n elements */
	for (int i = 0; i < n; i++) {
		double g = at(t, i);
		if (!(isnan(want[i]) ? isnan(g) : g == want[i]))
			fail_msg("element %d: got %g, expected %g", i, g, want[i]);
	}
}

static void test_sort_stable_and_nan(void **state)
{
	(void)state;
	float v[8] = {3, 1, NAN, 1, 2, 3, -INFINITY, 1};
	lm_tensor *x = lm_from_data(v, 1, (int64_t[]){8}, LM_FLOAT32), *s, *ix;
	assert_int_equal(lm_sort(x, 0, false, &s, &ix), LM_OK);
	expect_values(s, 8, (double[]){-INFINITY, 1, 1, 1, 2, 3, 3, NAN});
	expect_values(ix, 8, (double[]){6, 1, 3, 7, 4, 0, 5, 2}); /* equal keys keep their order */
	lm_tensor_release(s);
	lm_tensor_release(ix);
	assert_int_equal(lm_sort(x, -1, true, &s, &ix), LM_OK);
	expect_values(s, 8, (double[]){NAN, 3, 3, 2, 1, 1, 1, -INFINITY});
	expect_values(ix, 8, (double[]){2, 0, 5, 4, 1, 3, 7, 6});
	lm_tensor_release(s);
	lm_tensor_release(ix);
	assert_int_equal(lm_topk(x, 3, 0, false, &s, &ix), LM_OK);
	expect_values(s, 3, (double[]){-INFINITY, 1, 1});
	expect_values(ix, 3, (double[]){6, 1, 3});
	lm_tensor_release(s);
	lm_tensor_release(ix);
	lm_tensor_release(x);
}

/* A long line (merge passes) and many lines (parallel): sorted, a permutation, stable. */
static void test_sort_large(void **state)
{
	(void)state;
	lm_manual_seed(7);
	int64_t shape[2] = {64, 5000};
	lm_tensor *r = lm_randint(0, 50, 2, shape, LM_INT32), *s, *ix;
	assert_int_equal(lm_sort(r, 1, false, &s, &ix), LM_OK);
	const int32_t *x = lm_tensor_data(r), *sv = lm_tensor_data(s);
	const int64_t *iv = lm_tensor_data(ix);
	for (int64_t row = 0; row < 64; row++) {
		char *seen = calloc(5000, 1);
		for (int64_t k = 0; k < 5000; k++) {
			int64_t o = row * 5000 + k;
			assert_true(iv[o] >= 0 && iv[o] < 5000 && !seen[iv[o]]);
			seen[iv[o]] = 1;
			assert_int_equal(sv[o], x[row * 5000 + iv[o]]);
			if (k) assert_true(sv[o - 1] < sv[o] || (sv[o - 1] == sv[o] && iv[o - 1] < iv[o]));
		}
		free(seen);
	}
	lm_tensor_release(s);
	lm_tensor_release(ix);
	lm_tensor_release(r);
}

/* a strictly before b: ascending with NaN last (descending: NaN first); -0 equals +0 */
static bool sorts_before(double a, double b, bool desc)
{
	if (desc) return a > b || (isnan(a) && !isnan(b));
	return a < b || (isnan(b) && !isnan(a));
}

/* Long lines (the radix path) in every dtype, both directions, with ties, NaN, -0 and +0,
 * against a rank-by-comparison reference: stable, NaN placement, bit-exact values. */
static void test_sort_long_lines_all_dtypes(void **state)
{
	(void)state;
	const lm_dtype dts[] = {LM_FLOAT32, LM_FLOAT64, LM_INT32, LM_INT64, LM_UINT8};
	const int64_t R = 301, L = 3;
	lm_manual_seed(9);
	for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
		lm_tensor *r = lm_randint(-40, 40, 2, (int64_t[]){R, L}, LM_INT64);
		lm_tensor *x = lm_to_dtype(r, dts[t]); /* sorted along dim 0: strided lines */
		int64_t i3[2];
		if (lm_dtype_is_float(dts[t])) { /* NaN, -0, +0, infinities at some places */
			const double sp[] = {NAN, -0.0, 0.0, INFINITY, -INFINITY, NAN, -0.0};
			for (int q = 0; q < 7; q++) {
				i3[0] = 37 * q + 5, i3[1] = q % L;
				lm_tensor_set(x, i3, sp[q]);
			}
		}
		for (int desc = 0; desc <= 1; desc++) {
			lm_tensor *v, *ix;
			assert_int_equal(lm_sort(x, 0, desc, &v, &ix), LM_OK);
			for (int64_t c = 0; c < L; c++)
				for (int64_t i = 0; i < R; i++) { /* the rank of element i must be where it landed */
					double vi, vj;
					i3[0] = i, i3[1] = c;
					lm_tensor_get(x, i3, &vi);
					int64_t rank = 0;
					for (int64_t j = 0; j < R; j++) {
						i3[0] = j;
						lm_tensor_get(x, i3, &vj);
						bool same = vi == vj || (isnan(vi) && isnan(vj));
						if (sorts_before(vj, vi, desc) || (same && j < i)) rank++;
					}
					double got_i, got_v;
					i3[0] = rank;
					lm_tensor_get(ix, i3, &got_i);
					lm_tensor_get(v, i3, &got_v);
					if (got_i != (double)i || !(got_v == vi || (isnan(vi) && isnan(got_v))) ||
					    signbit(got_v) != signbit(vi))
						fail_msg("%s %s column %lld: element %lld (%g) at rank %lld: got index %g "
						         "value %g", lm_dtype_name(dts[t]), desc ? "descending" : "ascending",
						         (long long)c, (long long)i, vi, (long long)rank, got_i, got_v);
				}
			lm_tensor_release(v);
			lm_tensor_release(ix);
		}
		lm_tensor_release(x);
		lm_tensor_release(r);
	}
}

/* The shape of r (released), checked against want. */
static void expect_shape(lm_tensor *r, int nd, const int64_t *want)
{
	if (!r) fail_msg("failed: %s", lm_last_error());
	assert_int_equal(lm_tensor_ndim(r), nd);
	for (int i = 0; i < nd; i++) assert_int_equal(lm_tensor_shape(r)[i], want[i]);
	lm_tensor_release(r);
}

/* Every op on inputs with no elements: a result of the right (empty) shape, no error. */
static void test_empty_inputs(void **state)
{
	(void)state;
	lm_tensor *e = lm_zeros(2, (int64_t[]){0, 3}, LM_FLOAT32), *x = lm_ones(2, (int64_t[]){2, 3}, LM_FLOAT32);
	lm_tensor *ei = lm_zeros(1, (int64_t[]){0}, LM_INT64), *ei2 = lm_zeros(2, (int64_t[]){2, 0}, LM_INT64);
	lm_tensor *v, *ix;
	expect_shape(lm_cat(2, (lm_tensor *[]){e, x}, 0), 2, (int64_t[]){2, 3});
	expect_shape(lm_stack(2, (lm_tensor *[]){e, e}, 1), 3, (int64_t[]){0, 2, 3});
	expect_shape(lm_index_select(x, 1, ei), 2, (int64_t[]){2, 0});
	expect_shape(lm_gather(x, 1, ei2), 2, (int64_t[]){2, 0});
	expect_shape(lm_scatter_add(x, 1, ei2, ei2), 2, (int64_t[]){2, 3});
	lm_tensor *m3 = lm_ones(1, (int64_t[]){3}, LM_UINT8);
	expect_shape(lm_masked_fill(e, m3, 1), 2, (int64_t[]){0, 3});
	assert_int_equal(lm_sort(e, 1, false, &v, &ix), LM_OK);
	expect_shape(v, 2, (int64_t[]){0, 3});
	expect_shape(ix, 2, (int64_t[]){0, 3});
	assert_int_equal(lm_topk(x, 0, 1, true, &v, &ix), LM_OK);
	expect_shape(v, 2, (int64_t[]){2, 0});
	expect_shape(ix, 2, (int64_t[]){2, 0});
	expect_shape(lm_cumsum(e, 0), 2, (int64_t[]){0, 3});
	expect_shape(lm_tril(e, 0), 2, (int64_t[]){0, 3});
	expect_shape(lm_one_hot(ei, 4), 2, (int64_t[]){0, 4});
	expect_shape(lm_repeat(x, 2, (int64_t[]){0, 2}), 2, (int64_t[]){0, 6});
	expect_shape(lm_flip(e, 1, (int[]){0}), 2, (int64_t[]){0, 3});
	expect_shape(lm_pad(e, 2, (int64_t[]){1, 1, 2, 0}, 7), 2, (int64_t[]){2, 5});
	lm_window2d w = {2, 2, 1, 1, 0, 0, 1, 1};
	lm_tensor *img = lm_zeros(4, (int64_t[]){0, 3, 4, 4}, LM_FLOAT32);
	lm_tensor *cols = lm_im2col(img, &w);
	expect_shape(lm_col2im(cols, 3, 4, 4, &w), 4, (int64_t[]){0, 3, 4, 4});
	expect_shape(cols, 3, (int64_t[]){0, 12, 9});
	lm_tensor_release(img);
	expect_shape(lm_add_scaled(e, m3, 2), 2, (int64_t[]){0, 3});
	lm_tensor_release(m3);
	lm_tensor_release(ei);
	lm_tensor_release(e);
	lm_tensor_release(x);
	lm_tensor_release(ei2);
}

/* add_scaled equals the two-op expression bit for bit, and the in-place form is an SGD step. */
static void test_add_scaled(void **state)
{
	(void)state;
	lm_manual_seed(2);
	int64_t n = 3 << 20; /* 12 MB: the streamed path */
	lm_tensor *a = lm_randn(1, &n, LM_FLOAT32), *b = lm_randn(1, &n, LM_FLOAT32);
	lm_tensor *f = lm_add_scaled(b, a, 2), *t = lm_binary_scalar(LM_MUL, a, 2), *e = lm_add(t, b);
	assert_memory_equal(lm_tensor_data(f), lm_tensor_data(e), (size_t)n * 4);
	/* w -= 0.5 * g, in place */
	lm_tensor *w = lm_clone(a);
	assert_int_equal(lm_add_scaled_(w, b, -0.5), LM_OK);
	lm_tensor *h = lm_binary_scalar(LM_MUL, b, -0.5), *want = lm_add(a, h);
	assert_memory_equal(lm_tensor_data(w), lm_tensor_data(want), (size_t)n * 4);
	/* integers wrap; bad input */
	int32_t iv[2] = {2147483647, 5};
	lm_tensor *ia = lm_from_data(iv, 1, (int64_t[]){2}, LM_INT32), *ir = lm_add_scaled(ia, ia, 1);
	expect_values(ir, 2, (double[]){-2, 10});
	EXPECT_NULL(lm_add_scaled(ia, ia, 0.5), LM_ERR_ARG, "add_scaled: alpha 0.5 must be an integer for int32");
	EXPECT_NULL(lm_add_scaled(a, ia, 1), LM_ERR_SHAPE, "add_scaled: shapes [3145728] and [2] cannot be broadcast");
	EXPECT_STATUS(lm_add_scaled_(ia, a, 1), LM_ERR_SHAPE, "add_scaled_: the second operand [3145728]");
	lm_tensor *fa = lm_zeros(1, (int64_t[]){2}, LM_FLOAT32);
	EXPECT_STATUS(lm_add_scaled_(ia, fa, 1), LM_ERR_DTYPE, "add_scaled_: the result type float32 cannot be stored");
	lm_tensor *all[] = {a, b, f, t, e, w, h, want, ia, ir, fa};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
}

static void test_cat_promotes_and_skips_legacy_empty(void **state)
{
	(void)state;
	int32_t a[2] = {1, 2};
	float b[2] = {0.5f, 1.5f};
	lm_tensor *ta = lm_from_data(a, 2, (int64_t[]){1, 2}, LM_INT32);
	lm_tensor *tb = lm_from_data(b, 2, (int64_t[]){1, 2}, LM_FLOAT32);
	lm_tensor *e = lm_zeros(1, (int64_t[]){0}, LM_FLOAT64);
	lm_tensor *c = lm_cat(3, (lm_tensor *[]){ta, e, tb}, 0);
	assert_non_null(c);
	assert_int_equal(lm_tensor_dtype(c), LM_FLOAT64); /* promoted over all inputs */
	assert_int_equal(lm_tensor_shape(c)[0], 2);
	expect_values(c, 4, (double[]){1, 2, 0.5, 1.5});
	lm_tensor *s = lm_stack(2, (lm_tensor *[]){ta, tb}, 2);
	assert_int_equal(lm_tensor_ndim(s), 3);
	assert_int_equal(lm_tensor_shape(s)[2], 2);
	assert_int_equal(lm_tensor_dtype(s), LM_FLOAT32);
	expect_values(s, 4, (double[]){1, 0.5, 2, 1.5});
	lm_tensor_release(s);
	lm_tensor_release(c);
	lm_tensor_release(ta);
	lm_tensor_release(tb);
	lm_tensor_release(e);
}

static void test_one_hot_values(void **state)
{
	(void)state;
	int32_t v[3] = {2, 0, 2};
	lm_tensor *i = lm_from_data(v, 1, (int64_t[]){3}, LM_INT32);
	lm_tensor *o = lm_one_hot(i, -1);
	assert_non_null(o);
	assert_int_equal(lm_tensor_dtype(o), LM_INT64);
	assert_int_equal(lm_tensor_shape(o)[1], 3);
	expect_values(o, 9, (double[]){0, 0, 1, 1, 0, 0, 0, 0, 1});
	lm_tensor_release(o);
	lm_tensor_release(i);
}

/* x = 1..9 as a 3x3 image, 2x2 kernel, stride 1, padding 1: oh = ow = 4. */
static void test_im2col_worked_example(void **state)
{
	(void)state;
	float v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	lm_tensor *x = lm_from_data(v, 4, (int64_t[]){1, 1, 3, 3}, LM_FLOAT32);
	lm_window2d w = {2, 2, 1, 1, 1, 1, 1, 1};
	lm_tensor *c = lm_im2col(x, &w);
	assert_non_null(c);
	assert_int_equal(lm_tensor_shape(c)[1], 4);
	assert_int_equal(lm_tensor_shape(c)[2], 16);
	/* row (ki=0, kj=0): the top-left tap of each window, x[oy-1, ox-1] */
	expect_values(c, 16, (double[]){0, 0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0, 7, 8, 9});
	/* col2im of all ones counts how many windows cover each pixel: 4 everywhere here */
	lm_tensor *ones = lm_ones(3, (int64_t[]){1, 4, 16}, LM_FLOAT32);
	lm_tensor *cnt = lm_col2im(ones, 1, 3, 3, &w);
	expect_values(cnt, 9, (double[]){4, 4, 4, 4, 4, 4, 4, 4, 4});
	/* stride 2: windows at (-1,-1), (-1,1), (1,-1), (1,1) */
	w.sh = w.sw = 2;
	/* 16 columns do not match the 2x2 positions of stride 2 */
	EXPECT_NULL(lm_col2im(ones, 1, 3, 3, &w), LM_ERR_SHAPE, "(expected 4 rows of 2 x 2 = 4 positions)");
	lm_tensor_release(ones);
	lm_tensor_release(cnt);
	lm_tensor_release(c);
	lm_tensor_release(x);
}

/* <im2col(x), c> == <x, col2im(c)> for random x, c, over strides, paddings and dilations. */
static void test_im2col_col2im_adjoint(void **state)
{
	(void)state;
	lm_manual_seed(11);
	const lm_window2d ws[] = {
		{3, 3, 1, 1, 1, 1, 1, 1}, {3, 2, 2, 1, 0, 2, 1, 2}, {1, 1, 1, 1, 0, 0, 1, 1}, {2, 3, 3, 2, 1, 0, 2, 1},
	};
	for (size_t k = 0; k < sizeof ws / sizeof ws[0]; k++) {
		int64_t H = 9, W = 11, oh, ow;
		assert_int_equal(lm_window2d_out(&ws[k], H, W, &oh, &ow), LM_OK);
		lm_tensor *x = lm_randn(4, (int64_t[]){2, 3, H, W}, LM_FLOAT64);
		lm_tensor *c = lm_randn(3, (int64_t[]){2, 3 * ws[k].kh * ws[k].kw, oh * ow}, LM_FLOAT64);
		lm_tensor *a = lm_im2col(x, &ws[k]), *b = lm_col2im(c, 3, H, W, &ws[k]);
		lm_tensor *p = lm_mul(a, c), *q = lm_mul(x, b);
		lm_tensor *sp = lm_sum(p, LM_DIM_ALL, false), *sq = lm_sum(q, LM_DIM_ALL, false);
		double vp, vq;
		lm_tensor_item(sp, &vp);
		lm_tensor_item(sq, &vq);
		assert_true(fabs(vp - vq) < 1e-9 * (1 + fabs(vp)));
		lm_tensor *all[] = {x, c, a, b, p, q, sp, sq};
		for (size_t i = 0; i < 8; i++) lm_tensor_release(all[i]);
	}
}

/* Large inputs take the parallel paths; 2 threads must give exactly the 1-thread result. */
static void test_parallel_matches_serial(void **state)
{
	(void)state;
	lm_manual_seed(3);
	int64_t shape[2] = {512, 300};
	lm_tensor *x = lm_randn(2, shape, LM_FLOAT32);
	lm_tensor *idx = lm_randint(0, 300, 2, shape, LM_INT64);
	lm_tensor *img = lm_randn(4, (int64_t[]){4, 8, 30, 30}, LM_FLOAT32);
	lm_window2d w = {3, 3, 1, 1, 1, 1, 1, 1};
	lm_tensor *res[2][6];
	for (int t = 0; t < 2; t++) {
		lm_set_num_threads(t + 1);
		lm_tensor *v, *ix, *cols;
		res[t][0] = lm_gather(x, 1, idx);
		res[t][1] = lm_scatter_add(x, 1, idx, x);
		res[t][2] = lm_cumsum(x, 0);
		assert_int_equal(lm_sort(x, 1, true, &v, &ix), LM_OK);
		lm_tensor_release(v);
		res[t][3] = ix;
		res[t][4] = cols = lm_im2col(img, &w);
		res[t][5] = lm_col2im(cols, 8, 30, 30, &w);
	}
	for (int k = 0; k < 6; k++) {
		assert_non_null(res[0][k]);
		assert_non_null(res[1][k]);
		assert_int_equal(lm_tensor_nbytes(res[0][k]), lm_tensor_nbytes(res[1][k]));
		assert_memory_equal(lm_tensor_data(res[0][k]), lm_tensor_data(res[1][k]),
		                    lm_tensor_nbytes(res[0][k]));
		lm_tensor_release(res[0][k]);
		lm_tensor_release(res[1][k]);
	}
	lm_tensor_release(x);
	lm_tensor_release(idx);
	lm_tensor_release(img);
}

/* d/dw sum(index_select(w, 0, [1, 1, 0, 1])) counts the uses of each row: (1, 3) per column. */
static void test_backward_through_ops(void **state)
{
	(void)state;
	lm_tensor *w = lm_ones(2, (int64_t[]){2, 3}, LM_FLOAT64);
	lm_tensor_requires_grad_(w, true);
	int64_t iv[4] = {1, 1, 0, 1};
	lm_tensor *idx = lm_from_data(iv, 1, (int64_t[]){4}, LM_INT64);
	lm_tensor *e = lm_index_select(w, 0, idx);
	assert_string_equal(lm_tensor_grad_fn_name(e), "IndexSelectBackward");
	lm_tensor *s = lm_sum(e, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(s, NULL, false), LM_OK);
	expect_values(lm_tensor_grad(w), 6, (double[]){1, 1, 1, 3, 3, 3});
	lm_tensor_release(s);
	lm_tensor_release(e);
	lm_tensor_release(idx);

	/* an 8-d repeat: the gradient sums the tiles (the path that cannot split dims) */
	lm_tensor *x = lm_ones(8, (int64_t[]){1, 1, 1, 1, 1, 1, 2, 1}, LM_FLOAT64);
	lm_tensor_requires_grad_(x, true);
	lm_tensor *r = lm_repeat(x, 8, (int64_t[]){1, 2, 1, 1, 1, 1, 3, 2});
	assert_string_equal(lm_tensor_grad_fn_name(r), "RepeatBackward");
	assert_int_equal(lm_tensor_numel(r), 24);
	lm_tensor *rs = lm_sum(r, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(rs, NULL, false), LM_OK);
	expect_values(lm_tensor_grad(x), 2, (double[]){12, 12});
	lm_tensor_release(rs);
	lm_tensor_release(r);

	/* names of the other recorded ops */
	lm_tensor *c = lm_cat(2, (lm_tensor *[]){x, x}, 0), *f = lm_flip(w, 1, (int[]){0});
	assert_string_equal(lm_tensor_grad_fn_name(c), "CatBackward");
	assert_string_equal(lm_tensor_grad_fn_name(f), "FlipBackward");
	lm_tensor *v, *ix;
	assert_int_equal(lm_sort(w, 1, false, &v, &ix), LM_OK);
	assert_string_equal(lm_tensor_grad_fn_name(v), "SortBackward");
	assert_null(lm_tensor_grad_fn_name(ix)); /* indices carry no gradient */
	lm_tensor *all[] = {c, f, v, ix, x, w};
	for (size_t i = 0; i < 6; i++) lm_tensor_release(all[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sort_stable_and_nan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sort_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sort_long_lines_all_dtypes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_inputs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_add_scaled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cat_promotes_and_skips_legacy_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_hot_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_im2col_worked_example, setup, teardown),
		cmocka_unit_test_setup_teardown(test_im2col_col2im_adjoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parallel_matches_serial, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backward_through_ops, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
