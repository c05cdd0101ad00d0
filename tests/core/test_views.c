/*
 * test_views.c — views share storage: writes through a view reach the base and back; view
 * geometry (strides, offsets, contiguity); reshape copies only when it must; in-place ops on views
 * and on overlapping operands; the errors of the view functions.
 */
#include <string.h>

#include "testutil.h"

static double at(const lm_tensor *t, int64_t i, int64_t j)
{
	double v = -999;
	int64_t idx[2] = {i, j};
	lm_tensor_get(t, idx, &v);
	return v;
}

/* 0 1 2 ... as a (rows, cols) float32 matrix */
static lm_tensor *iota(int64_t rows, int64_t cols)
{
	lm_tensor *a = lm_arange(0, (double)(rows * cols), 1, LM_FLOAT32);
	lm_tensor *v = lm_view(a, 2, (int64_t[]){rows, cols});
	lm_tensor_release(a);
	return v;
}

static void test_aliasing(void **state)
{
	(void)state;
	lm_tensor *a = iota(4, 6);
	lm_tensor *t = lm_transpose(a, 0, 1);
	lm_tensor *row = lm_select(a, 0, 2);
	lm_tensor *win = lm_narrow(a, 1, 1, 3);
	/* writing through the transposed view changes the base */
	assert_int_equal(lm_tensor_set(t, (int64_t[]){5, 3}, -1), LM_OK);
	assert_true(at(a, 3, 5) == -1);
	/* a fill of a narrowed window touches exactly the window */
	assert_int_equal(lm_fill_(win, 100), LM_OK);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 6; j++) {
			double want = (j >= 1 && j < 4) ? 100 : (i == 3 && j == 5) ? -1 : i * 6 + j;
			assert_true(at(a, i, j) == want);
		}
	/* an in-place op on a row view */
	assert_int_equal(lm_binary_scalar_(LM_MUL, row, 2), LM_OK);
	assert_true(at(a, 2, 0) == 24 && at(a, 2, 1) == 200 && at(a, 2, 5) == 34);
	/* the base sees version bumps from its views */
	uint64_t v0 = lm_tensor_version(a);
	assert_int_equal(lm_zero_(row), LM_OK);
	assert_true(lm_tensor_version(a) > v0);
	lm_tensor *objs[] = {a, t, row, win};
	for (size_t i = 0; i < 4; i++) lm_tensor_release(objs[i]);
}

static void test_geometry(void **state)
{
	(void)state;
	lm_tensor *a = iota(4, 6);
	lm_tensor *t = lm_t(a);
	assert_false(lm_tensor_is_contiguous(t));
	assert_int_equal(lm_tensor_strides(t)[0], 1);
	assert_int_equal(lm_tensor_strides(t)[1], 6);
	lm_tensor *n = lm_narrow(a, 0, 1, 2);
	assert_int_equal(lm_tensor_offset(n), 6);
	assert_true(lm_tensor_is_contiguous(n));
	lm_tensor *c = lm_narrow(a, 1, 2, 2);
	assert_false(lm_tensor_is_contiguous(c));
	/* view of a non-contiguous tensor fails when the strides cannot express it */
	assert_null(lm_view(t, 1, (int64_t[]){24}));
	assert_int_equal(lm_last_status(), LM_ERR_SHAPE);
	assert_non_null(strstr(lm_last_error(), "view"));
	/* ... but splitting a dim of it works */
	lm_tensor *split = lm_view(t, 3, (int64_t[]){2, 3, 4});
	assert_non_null(split);
	assert_true(lm_tensor_shares_storage(split, a));
	/* reshape copies only when it must */
	lm_tensor *r1 = lm_reshape(a, 1, (int64_t[]){-1}), *r2 = lm_reshape(t, 1, (int64_t[]){-1});
	assert_true(lm_tensor_shares_storage(r1, a));
	assert_false(lm_tensor_shares_storage(r2, a));
	double v;
	lm_tensor_get(r2, (int64_t[]){1}, &v);
	assert_true(v == 6); /* t[0][1] = a[1][0] */
	/* expand: stride 0, shared */
	lm_tensor *col = lm_narrow(a, 1, 0, 1);
	lm_tensor *e = lm_expand(col, 3, (int64_t[]){2, 4, 5});
	assert_int_equal(lm_tensor_strides(e)[0], 0);
	assert_int_equal(lm_tensor_strides(e)[2], 0);
	lm_tensor_get(e, (int64_t[]){1, 3, 4}, &v);
	assert_true(v == 18);
	/* squeeze / unsqueeze round trip, flatten */
	lm_tensor *u = lm_unsqueeze(a, 1);
	assert_int_equal(lm_tensor_ndim(u), 3);
	assert_int_equal(lm_tensor_size(u, 1), 1);
	lm_tensor *s = lm_squeeze(u, LM_ALL_DIMS);
	assert_int_equal(lm_tensor_ndim(s), 2);
	lm_tensor *f = lm_flatten(split, 0, -1);
	assert_int_equal(lm_tensor_ndim(f), 1);
	assert_int_equal(lm_tensor_numel(f), 24);
	lm_tensor *p = lm_permute(split, (int[]){2, 0, 1});
	assert_int_equal(lm_tensor_size(p, 0), 4);
	lm_tensor_get(p, (int64_t[]){3, 1, 2}, &v);
	/* split[1][2][3] = t[1*3+2 ... ] -> t viewed (2,3,4) of t (6,4): t[5][3] = a[3][5] = 23 */
	assert_true(v == 23);
	/* detach shares data */
	lm_tensor *d = lm_detach(a);
	assert_true(lm_tensor_shares_storage(d, a));
	lm_tensor *objs[] = {a, t, n, c, split, r1, r2, col, e, u, s, f, p, d};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_overlap(void **state)
{
	(void)state;
	/* a += a^T reads the transposed operand from a copy: the result is symmetric */
	lm_tensor *a = iota(5, 5), *t = lm_t(a);
	assert_int_equal(lm_binary_(LM_ADD, a, t), LM_OK);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++) assert_true(at(a, i, j) == (double)(i * 5 + j + j * 5 + i));
	/* writing into an expanded view would write one element many times: refused */
	lm_tensor *col = lm_narrow(a, 1, 0, 1), *e = lm_expand(col, 2, (int64_t[]){5, 4});
	assert_int_equal(lm_binary_scalar_(LM_ADD, e, 1), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "expanded"));
	assert_int_equal(lm_copy_(e, a), LM_ERR_SHAPE);
	/* in-place with a result dtype the tensor cannot hold */
	lm_tensor *i = lm_ones(1, (int64_t[]){3}, LM_INT32);
	assert_int_equal(lm_binary_scalar_(LM_ADD, i, 0.5), LM_ERR_DTYPE);
	assert_non_null(strstr(lm_last_error(), "add_"));
	assert_int_equal(lm_unary_(LM_EXP, i), LM_ERR_DTYPE);
	assert_int_equal(lm_binary_scalar_(LM_MUL, i, 3), LM_OK);
	double v;
	lm_tensor_get(i, (int64_t[]){2}, &v);
	assert_true(v == 3);
	/* the in-place result must keep the operand's shape */
	lm_tensor *big = lm_ones(2, (int64_t[]){2, 3}, LM_INT32);
	assert_int_equal(lm_binary_(LM_ADD, i, big), LM_ERR_SHAPE);
	lm_tensor *objs[] = {a, t, col, e, i, big};
	for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++) lm_tensor_release(objs[k]);
}

static void test_view_errors(void **state)
{
	(void)state;
	lm_tensor *a = iota(4, 6);
	EXPECT_NULL(lm_view(a, 2, (int64_t[]){5, 5}), LM_ERR_SHAPE,
	            "view: shape [5, 5] is invalid for input of shape [4, 6] (24 elements)");
	EXPECT_NULL(lm_view(a, 2, (int64_t[]){-1, -1}), LM_ERR_ARG, "only one size may be -1");
	EXPECT_NULL(lm_view(a, 2, (int64_t[]){-1, 5}), LM_ERR_SHAPE, "view: shape [-1, 5]");
	EXPECT_NULL(lm_view(a, 2, (int64_t[]){-3, 8}), LM_ERR_ARG, "size -3 at dim 1 is negative");
	EXPECT_NULL(lm_transpose(a, 0, 2), LM_ERR_INDEX, "transpose: dim 3 is out of range for a 2-d tensor");
	EXPECT_NULL(lm_permute(a, (int[]){0, 0}), LM_ERR_ARG, "permute: dim 1 appears twice");
	EXPECT_NULL(lm_narrow(a, 1, 4, 3), LM_ERR_INDEX,
	            "narrow: start 5 and length 3 out of range for dim 2 of size 6");
	EXPECT_NULL(lm_narrow(a, 0, 0, -1), LM_ERR_INDEX, "length -1");
	EXPECT_NULL(lm_select(a, 0, 4), LM_ERR_INDEX, "select: index 5 is out of range for dim 1 of size 4");
	EXPECT_NULL(lm_select(a, -3, 0), LM_ERR_INDEX, "select: dim -3 is out of range");
	EXPECT_NULL(lm_expand(a, 2, (int64_t[]){4, 7}), LM_ERR_SHAPE,
	            "expand: cannot expand shape [4, 6] to [4, 7] (dim 2: 6 vs 7)");
	EXPECT_NULL(lm_expand(a, 1, (int64_t[]){6}), LM_ERR_SHAPE, "cannot expand shape [4, 6] to 1 dims");
	EXPECT_NULL(lm_unsqueeze(a, 3), LM_ERR_INDEX, "unsqueeze: dim 4 is out of range");
	EXPECT_NULL(lm_squeeze(a, 5), LM_ERR_INDEX, "squeeze: dim 6");
	EXPECT_NULL(lm_flatten(a, 1, 0), LM_ERR_ARG, "flatten: start dim 2 comes after end dim 1");
	EXPECT_NULL(lm_as_strided(a, 2, (int64_t[]){4, 7}, (int64_t[]){6, 1}, 0), LM_ERR_INDEX,
	            "as_strided: shape [4, 7] with offset 0 reaches element 25 of a storage of 24");
	lm_tensor *cube = lm_zeros(3, (int64_t[]){2, 2, 2}, LM_FLOAT32);
	EXPECT_NULL(lm_t(cube), LM_ERR_SHAPE, "t: expects a tensor of at most 2 dims, got shape [2, 2, 2]");
	lm_tensor_release(cube);
	int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 24};
	EXPECT_NULL(lm_view(a, 9, nine), LM_ERR_ARG, "at most 8");
	lm_tensor *u = lm_view(a, 8, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 24});
	assert_non_null(u);
	EXPECT_NULL(lm_unsqueeze(u, 0), LM_ERR_ARG, "maximum of 8 dims");
	lm_tensor_release(u);
	lm_tensor_release(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_aliasing),
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_view_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
