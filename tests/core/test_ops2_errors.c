/*
 * test_ops2_errors.c — bad input to the Foundation II ops: every call returns NULL (or a status)
 * with the right status and a message that names the op and the offending values; nothing leaks.
 * Covers out-of-range indices (index_select, gather, scatter_add, one_hot), mismatched cat/stack
 * shapes, empty lists, bad dims, negative pads and repeat counts, windows larger than the padded
 * input, and indices checked inside OpenMP workers.
 */
#include <math.h>

#include "testutil.h"


static lm_tensor *mat(int64_t r, int64_t c, lm_dtype dt)
{
	int64_t s[2] = {r, c};
	return lm_zeros(2, s, dt);
}

static lm_tensor *ivec(int n, const int64_t *v)
{
	int64_t len = n;
	return lm_from_data(v, 1, &len, LM_INT64);
}

static void test_cat_errors(void **state)
{
	(void)state;
	lm_tensor *a = mat(2, 3, LM_FLOAT32), *b = mat(2, 4, LM_FLOAT32), *c = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32);
	lm_tensor *s = lm_scalar(1, LM_FLOAT32);
	EXPECT_NULL(lm_cat(0, NULL, 0), LM_ERR_ARG, "cat: expects a non-empty list");
	EXPECT_NULL(lm_stack(0, (lm_tensor *[]){a}, 0), LM_ERR_ARG, "stack: expects a non-empty list");
	EXPECT_NULL(lm_cat(2, (lm_tensor *[]){a, NULL}, 0), LM_ERR_ARG, "cat: tensor 2 of the list is NULL");
	/* sizes differ outside the cat dim: the message names both shapes and the dim */
	EXPECT_NULL(lm_cat(2, (lm_tensor *[]){a, b}, 0), LM_ERR_SHAPE,
	            "cat: tensor 2 has shape [2, 4] but tensor 1 has shape [2, 3]: sizes must match except "
	            "in dim 1 (dim 2: 4 vs 3)");
	EXPECT_NULL(lm_cat(2, (lm_tensor *[]){a, c}, 0), LM_ERR_SHAPE, "tensor 2 has 1 dims (shape [3])");
	EXPECT_NULL(lm_cat(1, (lm_tensor *[]){s}, 0), LM_ERR_SHAPE, "cat: tensor 1 is 0-d");
	EXPECT_NULL(lm_cat(2, (lm_tensor *[]){a, a}, 2), LM_ERR_INDEX, "cat: dim 3 is out of range");
	EXPECT_NULL(lm_stack(2, (lm_tensor *[]){a, b}, 0), LM_ERR_SHAPE,
	            "stack: tensor 2 has shape [2, 4] but tensor 1 has shape [2, 3]");
	EXPECT_NULL(lm_stack(2, (lm_tensor *[]){a, a}, 3), LM_ERR_INDEX, "stack: dim 4 is out of range");
	/* cat along dim 1 of the same two works */
	lm_tensor *ok = lm_cat(2, (lm_tensor *[]){a, b}, 1);
	assert_non_null(ok);
	assert_int_equal(lm_tensor_shape(ok)[1], 7);
	lm_tensor_release(ok);
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(c);
	lm_tensor_release(s);
}

static void test_index_errors(void **state)
{
	(void)state;
	lm_tensor *x = mat(3, 4, LM_FLOAT32);
	lm_tensor *bad = ivec(3, (int64_t[]){0, 5, 1}), *neg = ivec(2, (int64_t[]){0, -1});
	lm_tensor *fidx = lm_zeros(1, (int64_t[]){2}, LM_FLOAT32), *idx2 = mat(2, 2, LM_INT64);
	EXPECT_NULL(lm_index_select(x, 0, bad), LM_ERR_INDEX,
	            "index_select: index 6 at position 2 is out of range for dim 1 of size 3");
	EXPECT_NULL(lm_index_select(x, 1, neg), LM_ERR_INDEX, "index 0 at position 2 is out of range for dim 2");
	EXPECT_NULL(lm_index_select(x, 0, fidx), LM_ERR_DTYPE, "index_select: the index must be int64");
	EXPECT_NULL(lm_index_select(x, 0, idx2), LM_ERR_SHAPE, "index_select: the index must be 1-D");
	EXPECT_NULL(lm_index_select(x, 2, neg), LM_ERR_INDEX, "index_select: dim 3 is out of range");
	EXPECT_NULL(lm_index_select(NULL, 0, neg), LM_ERR_ARG, "index_select: input is NULL");

	/* gather: index (2, 2) with a 7 at [1, 0] along dim 1 of size 4 */
	int64_t gv[4] = {0, 1, 7, 2};
	lm_tensor *gi = lm_from_data(gv, 2, (int64_t[]){2, 2}, LM_INT64);
	EXPECT_NULL(lm_gather(x, 1, gi), LM_ERR_INDEX,
	            "gather: index 8 at position [2, 1] is out of range for dim 2 of size 4");
	EXPECT_NULL(lm_gather(x, 1, bad), LM_ERR_SHAPE, "must have the same number of dims");
	lm_tensor *big = mat(5, 1, LM_INT64);
	EXPECT_NULL(lm_gather(x, 1, big), LM_ERR_SHAPE, "index of shape [5, 1] is larger than the input "
	            "[3, 4] at dim 1 (5 > 3)");
	EXPECT_NULL(lm_gather(x, 1, fidx), LM_ERR_DTYPE, "gather: the index must be int64");

	/* scatter_add: the same bad index, and a source smaller than the index */
	lm_tensor *src = mat(2, 2, LM_FLOAT32), *small = mat(1, 2, LM_FLOAT32);
	EXPECT_NULL(lm_scatter_add(x, 1, gi, src), LM_ERR_INDEX,
	            "scatter_add: index 8 at position [2, 1] is out of range for dim 2 of size 4");
	EXPECT_NULL(lm_scatter_add(x, 1, idx2, small), LM_ERR_SHAPE,
	            "scatter_add: index of shape [2, 2] is larger than the source [1, 2] at dim 1");
	EXPECT_NULL(lm_scatter_add(x, 1, idx2, NULL), LM_ERR_ARG, "scatter_add: source is NULL");

	/* masked_fill: a mask that does not broadcast */
	lm_tensor *m = mat(2, 4, LM_UINT8);
	EXPECT_NULL(lm_masked_fill(x, m, 1), LM_ERR_SHAPE,
	            "masked_fill: the mask of shape [2, 4] does not broadcast with the input of shape [3, 4]");
	lm_tensor *xi = mat(3, 4, LM_INT32), *m4 = mat(3, 4, LM_UINT8);
	EXPECT_NULL(lm_masked_fill(xi, m4, NAN), LM_ERR_ARG, "masked_fill: cannot fill the int32 tensor with NaN");

	/* one_hot */
	lm_tensor *cls = ivec(3, (int64_t[]){0, 3, 1});
	EXPECT_NULL(lm_one_hot(cls, 3), LM_ERR_INDEX, "one_hot: class 4 at position 2 is out of range for 3 classes");
	EXPECT_NULL(lm_one_hot(neg, 4), LM_ERR_INDEX, "one_hot: class 0 at position 2");
	EXPECT_NULL(lm_one_hot(fidx, 4), LM_ERR_DTYPE, "one_hot: the index must be int64");
	EXPECT_NULL(lm_one_hot(cls, -3), LM_ERR_ARG, "one_hot: num_classes -3 must be >= 0");
	lm_tensor *none = lm_zeros(1, (int64_t[]){0}, LM_INT64);
	EXPECT_NULL(lm_one_hot(none, -1), LM_ERR_ARG, "one_hot: cannot infer the number of classes");

	lm_tensor *all[] = {x, bad, neg, fidx, idx2, gi, big, src, small, m, xi, m4, cls, none};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
}

/* A bad index in the second half of a large index tensor (the second thread's share) is named
 * with its value and position, counted from 1 like every message (the op checks the range first;
 * that an error set inside a worker reaches the caller is test_parallel's). */
static void test_index_error_from_worker(void **state)
{
	(void)state;
	lm_set_num_threads(2);
	int64_t n = 1 << 18, row = 256;
	lm_tensor *x = lm_zeros(1, &row, LM_FLOAT32);
	lm_tensor *idx = lm_zeros(2, (int64_t[]){n / 256, 256}, LM_INT64);
	lm_tensor *x2 = lm_zeros(2, (int64_t[]){n / 256, 256}, LM_FLOAT32);
	int64_t *iv = lm_tensor_data(idx);
	iv[n - 300] = 999; /* row n/256 - 2, column 212 */
	EXPECT_NULL(lm_gather(x2, 1, idx), LM_ERR_INDEX,
	            "gather: index 1000 at position [1023, 213] is out of range for dim 2 of size 256");
	EXPECT_NULL(lm_scatter_add(x2, 1, idx, x2), LM_ERR_INDEX,
	            "scatter_add: index 1000 at position [1023, 213]");
	lm_tensor *flat = lm_reshape(idx, 1, &n);
	EXPECT_NULL(lm_index_select(x, 0, flat), LM_ERR_INDEX, "index 1000 at position 261845");
	lm_tensor_release(flat);
	lm_tensor_release(x);
	lm_tensor_release(x2);
	lm_tensor_release(idx);
}

static void test_sort_errors(void **state)
{
	(void)state;
	lm_tensor *x = mat(3, 4, LM_FLOAT32), *v = NULL, *ix = NULL;
	EXPECT_STATUS(lm_topk(x, 5, 1, true, &v, &ix), LM_ERR_ARG,
	              "topk: k = 5 is larger than dim 2 of size 4 (shape [3, 4])");
	EXPECT_STATUS(lm_topk(x, -1, 1, true, &v, &ix), LM_ERR_ARG, "topk: k = -1 must be >= 0");
	EXPECT_STATUS(lm_sort(x, 2, false, &v, &ix), LM_ERR_INDEX, "sort: dim 3 is out of range");
	EXPECT_STATUS(lm_sort(x, 0, false, NULL, &ix), LM_ERR_ARG, "sort: the result pointers");
	EXPECT_STATUS(lm_sort(NULL, 0, false, &v, &ix), LM_ERR_ARG, "sort: input is NULL");
	assert_null(v);
	assert_null(ix);
	lm_tensor *s = lm_scalar(2, LM_FLOAT32);
	EXPECT_STATUS(lm_topk(s, 0, 0, true, &v, &ix), LM_ERR_ARG, "topk: k = 0 for a 0-d tensor");
	lm_tensor_release(s);
	lm_tensor_release(x);
}

static void test_shape_errors(void **state)
{
	(void)state;
	lm_tensor *x = mat(3, 4, LM_FLOAT32), *v = lm_zeros(1, (int64_t[]){4}, LM_FLOAT32);
	EXPECT_NULL(lm_cumsum(x, -3), LM_ERR_INDEX, "cumsum: dim -3 is out of range");
	EXPECT_NULL(lm_tril(v, 0), LM_ERR_SHAPE, "tril: needs a matrix (or a batch of them), got shape [4]");
	EXPECT_NULL(lm_triu(v, 0), LM_ERR_SHAPE, "triu: needs a matrix");
	EXPECT_NULL(lm_repeat(x, 1, (int64_t[]){2}), LM_ERR_ARG,
	            "repeat: 1 repeat counts for a tensor of shape [3, 4]: need between 2 and 8");
	EXPECT_NULL(lm_repeat(x, 2, (int64_t[]){2, -1}), LM_ERR_ARG, "repeat: repeat count -1 for dim 2 is negative");
	EXPECT_NULL(lm_flip(x, 2, (int[]){1, -1}), LM_ERR_ARG, "flip: dim 2 appears more than once");
	EXPECT_NULL(lm_flip(x, 1, (int[]){2}), LM_ERR_INDEX, "flip: dim 3 is out of range");
	/* negative pads crop; cropping more than a dim holds is an error naming it */
	EXPECT_NULL(lm_pad(x, 1, (int64_t[]){1, -5}, 0), LM_ERR_ARG,
	            "pad: padding (1, -5) crops more than dim 2 of shape [3, 4] holds");
	EXPECT_NULL(lm_pad(x, 2, (int64_t[]){0, 0, -2, -2}, 0), LM_ERR_ARG, "(-2, -2) crops more than dim 1");
	EXPECT_NULL(lm_pad(x, 1, (int64_t[]){INT64_MIN, 0}, 0), LM_ERR_ARG, "crops more than dim 2");
	EXPECT_NULL(lm_pad(x, 3, (int64_t[]){0, 0, 0, 0, 0, 0}, 0), LM_ERR_ARG,
	            "pad: 3 (before, after) pairs for a tensor of shape [3, 4]");
	lm_tensor_release(x);
	lm_tensor_release(v);
}

static void test_window_errors(void **state)
{
	(void)state;
	lm_tensor *x = lm_zeros(4, (int64_t[]){1, 2, 4, 5}, LM_FLOAT32);
	lm_window2d w = {5, 3, 1, 1, 0, 0, 1, 1}; /* a 5-row kernel on a 4-row image */
	EXPECT_NULL(lm_im2col(x, &w), LM_ERR_SHAPE,
	            "im2col: the window (5 x 3 with dilation: kernel (5, 3), dilation (1, 1)) is larger "
	            "than the padded input (4 x 5: 4 x 5 with padding (0, 0))");
	w = (lm_window2d){3, 3, 1, 1, 0, 0, 3, 1}; /* dilation 3: a 7-row window */
	EXPECT_NULL(lm_im2col(x, &w), LM_ERR_SHAPE, "the window (7 x 3 with dilation");
	w.ph = 2; /* padded to 8 rows: fits */
	lm_tensor *ok = lm_im2col(x, &w);
	assert_non_null(ok);
	lm_tensor_release(ok);
	w = (lm_window2d){3, 3, 0, 1, 0, 0, 1, 1};
	EXPECT_NULL(lm_im2col(x, &w), LM_ERR_ARG, "im2col: kernel (3, 3), stride (0, 1)");
	w = (lm_window2d){3, 3, 1, 1, -1, 0, 1, 1};
	EXPECT_NULL(lm_im2col(x, &w), LM_ERR_ARG, "im2col: padding (-1, 0) must be >= 0");
	EXPECT_NULL(lm_im2col(x, NULL), LM_ERR_ARG, "im2col: the window is NULL");
	lm_tensor *x2 = mat(4, 5, LM_FLOAT32);
	w = (lm_window2d){3, 3, 1, 1, 0, 0, 1, 1};
	EXPECT_NULL(lm_im2col(x2, &w), LM_ERR_SHAPE, "im2col: expects (N, C, H, W) or (C, H, W), got shape [4, 5]");
	int64_t oh, ow;
	EXPECT_STATUS(lm_window2d_out(&(lm_window2d){3, 6, 1, 1, 0, 0, 1, 1}, 4, 5, &oh, &ow), LM_ERR_SHAPE,
	              "window2d: the window (3 x 6");
	assert_int_equal(lm_window2d_out(&w, 4, 5, &oh, &ow), LM_OK);
	assert_int_equal(oh, 2);
	assert_int_equal(ow, 3);
	/* col2im: columns that do not match the window */
	lm_tensor *cols = lm_zeros(3, (int64_t[]){1, 18, 5}, LM_FLOAT32);
	EXPECT_NULL(lm_col2im(cols, 2, 4, 5, &w), LM_ERR_SHAPE,
	            "col2im: columns of shape [1, 18, 5] do not match 2 channels with a 3 x 3 kernel on a "
	            "4 x 5 image (expected 18 rows of 2 x 3 = 6 positions)");
	EXPECT_NULL(lm_col2im(cols, 2, 2, 5, &w), LM_ERR_SHAPE, "col2im: the window (3 x 3");
	lm_tensor_release(cols);
	lm_tensor_release(x);
	lm_tensor_release(x2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEAK_TEST(test_cat_errors),
		LEAK_TEST(test_index_errors),
		LEAK_TEST(test_index_error_from_worker),
		LEAK_TEST(test_sort_errors),
		LEAK_TEST(test_shape_errors),
		LEAK_TEST(test_window_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
