/*
 * test_errors.c — every error path of the Foundation I ops returns the right status and a message
 * naming the function and the values at fault; nothing crashes, nothing leaks.
 */
#include <math.h>
#include <pthread.h>
#include <unistd.h>

#include "lumen/nn.h"
#include "testutil.h"


static lm_tensor *mat(int64_t r, int64_t c, lm_dtype dt) { return lm_ones(2, (int64_t[]){r, c}, dt); }

static void test_shape_errors(void **state)
{
	(void)state;
	lm_tensor *a = mat(3, 4, LM_FLOAT32), *b = mat(5, 6, LM_FLOAT32), *c = mat(2, 3, LM_FLOAT32);
	lm_tensor *v = lm_ones(1, (int64_t[]){7}, LM_FLOAT32);
	EXPECT_NULL(lm_matmul(a, b), LM_ERR_SHAPE, "matmul: shapes [3, 4] and [5, 6] do not align (4 != 5)");
	EXPECT_NULL(lm_mm(a, v), LM_ERR_SHAPE, "mm: expects two matrices, got shapes [3, 4] and [7]");
	EXPECT_NULL(lm_matmul(v, a), LM_ERR_SHAPE, "matmul: shapes [7] and [3, 4] do not align (7 != 3)");
	lm_tensor *s = lm_scalar(1, LM_FLOAT32);
	EXPECT_NULL(lm_matmul(s, a), LM_ERR_SHAPE, "matmul: both operands need at least 1 dim");
	lm_tensor *b3 = lm_ones(3, (int64_t[]){2, 3, 4}, LM_FLOAT32), *b4 = lm_ones(3, (int64_t[]){5, 4, 2}, LM_FLOAT32);
	EXPECT_NULL(lm_matmul(b3, b4), LM_ERR_SHAPE, "matmul: the batch dims of [2, 3, 4] and [5, 4, 2] cannot be broadcast together (dim 1: 2 vs 5)");
	/* different ndims: the dim counted from the end names the same dim of both */
	lm_tensor *b5 = lm_ones(4, (int64_t[]){7, 2, 3, 4}, LM_FLOAT32);
	EXPECT_NULL(lm_matmul(b5, b4), LM_ERR_SHAPE, "(dim -3: 2 vs 5)");
	lm_tensor_release(b5);
	EXPECT_NULL(lm_add(a, c), LM_ERR_SHAPE,
	            "add: shapes [3, 4] and [2, 3] cannot be broadcast together (dim 1: 3 vs 2)");
	EXPECT_NULL(lm_add(v, a), LM_ERR_SHAPE, "add: shapes [7] and [3, 4] cannot be broadcast together (dim -1: 7 vs 4)");
	EXPECT_NULL(lm_binary(LM_LT, a, v), LM_ERR_SHAPE, "lt: shapes [3, 4] and [7]");
	EXPECT_NULL(lm_where(v, a, a), LM_ERR_SHAPE, "where: condition");
	EXPECT_NULL(lm_where(a, a, c), LM_ERR_SHAPE, "where: shapes [3, 4] and [2, 3]");
	EXPECT_STATUS(lm_copy_(a, c), LM_ERR_SHAPE, "copy_: source shape [2, 3] cannot be broadcast to [3, 4]");
	EXPECT_STATUS(lm_binary_(LM_MUL, v, a), LM_ERR_SHAPE, "mul_: shapes [7] and [3, 4]");
	lm_tensor *objs[] = {a, b, c, v, s, b3, b4};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_dim_errors(void **state)
{
	(void)state;
	lm_tensor *a = mat(3, 4, LM_FLOAT64), *e = lm_zeros(2, (int64_t[]){0, 4}, LM_FLOAT32);
	EXPECT_NULL(lm_sum(a, 2, false), LM_ERR_INDEX, "sum: dim 3 is out of range for a 2-d tensor (expected 1..2 or -2..-1)");
	EXPECT_NULL(lm_mean(a, -3, true), LM_ERR_INDEX, "mean: dim -3 is out of range");
	EXPECT_NULL(lm_argmax(e, 0, false), LM_ERR_SHAPE, "argmax: cannot reduce over an empty dim of shape [0, 4]");
	EXPECT_NULL(lm_amin(e, LM_DIM_ALL, false), LM_ERR_SHAPE, "min: cannot reduce over an empty tensor");
	EXPECT_NULL(lm_var(a, 0, false, -1), LM_ERR_ARG, "var: correction -1 is negative");
	EXPECT_NULL(lm_norm(a, -2, 0, false), LM_ERR_ARG, "norm: p = -2 must be >= 0");
	lm_tensor *v = NULL, *i = NULL;
	EXPECT_STATUS(lm_max_dim(a, LM_DIM_ALL, false, &v, &i), LM_ERR_ARG, "max: needs a dim");
	EXPECT_STATUS(lm_min_dim(a, 5, false, &v, &i), LM_ERR_INDEX, "min: dim 6 is out of range");
	assert_null(v);
	assert_null(i);
	EXPECT_NULL(lm_reduce((lm_redop)99, a, 0, false), LM_ERR_ARG, "reduce: unknown op 99");
	lm_tensor_release(a);
	lm_tensor_release(e);
}

static void test_value_errors(void **state)
{
	(void)state;
	lm_tensor *f = mat(2, 2, LM_FLOAT32), *i = lm_arange(-2, 2, 1, LM_INT64);
	EXPECT_NULL(lm_clamp(f, 2, 1), LM_ERR_ARG, "clamp: bounds min 2 and max 1");
	EXPECT_NULL(lm_clamp(f, NAN, 1), LM_ERR_ARG, "clamp");
	EXPECT_STATUS(lm_clamp_(f, 3, -3), LM_ERR_ARG, "clamp_");
	EXPECT_NULL(lm_pow(i, i), LM_ERR_ARG, "pow: integers to negative integer powers (-2) are not allowed");
	EXPECT_NULL(lm_leaky_relu(i, 0.1), LM_ERR_DTYPE, "leaky_relu: needs a float tensor, got int64");
	EXPECT_NULL(lm_leaky_relu(f, INFINITY), LM_ERR_ARG, "leaky_relu: negative slope inf");
	EXPECT_NULL(lm_unary((lm_unop)-1, f), LM_ERR_ARG, "unary: unknown op -1");
	EXPECT_NULL(lm_binary((lm_binop)42, f, f), LM_ERR_ARG, "binary: unknown op 42");
	EXPECT_NULL(lm_exp(NULL), LM_ERR_ARG, "exp: input is NULL");
	EXPECT_NULL(lm_add(f, NULL), LM_ERR_ARG, "add: second operand is NULL");
	EXPECT_NULL(lm_to_dtype(f, (lm_dtype)LM_DTYPE_COUNT), LM_ERR_DTYPE, "to: invalid dtype 10");
	EXPECT_STATUS(lm_tensor_requires_grad_(i, true), LM_ERR_DTYPE,
	              "requires_grad_: only float tensors can require grad, got int64");
	EXPECT_STATUS(lm_uniform_(i, 0, 1), LM_ERR_DTYPE, "uniform_: needs a float tensor, got int64");
	EXPECT_STATUS(lm_uniform_(f, 1, 0), LM_ERR_ARG, "uniform_: bounds [1, 0)");
	EXPECT_STATUS(lm_bernoulli_(f, 1.5), LM_ERR_ARG, "bernoulli_: probability 1.5");
	EXPECT_NULL(lm_rand(1, (int64_t[]){3}, LM_INT32), LM_ERR_DTYPE, "rand: needs a float dtype, got int32");
	lm_tensor_release(f);
	lm_tensor_release(i);
}

static void test_autograd_guards(void **state)
{
	(void)state;
	lm_tensor *w = mat(2, 3, LM_FLOAT32);
	assert_int_equal(lm_tensor_requires_grad_(w, true), LM_OK);
	/* in-place changes of a leaf that requires grad are refused while grad mode is on */
	EXPECT_STATUS(lm_binary_scalar_(LM_ADD, w, 1), LM_ERR_STATE, "add_: in-place change of a tensor of shape [2, 3] that requires grad");
	EXPECT_STATUS(lm_fill_(w, 0), LM_ERR_STATE, "fill_");
	/* ... and allowed with grad mode off (an optimizer step) */
	bool prev = lm_set_grad_enabled(false);
	assert_int_equal(lm_binary_scalar_(LM_ADD, w, 1), LM_OK);
	lm_set_grad_enabled(prev);
	/* a view of it cannot be changed in place either */
	lm_tensor *row = lm_select(w, 0, 0);
	assert_true(lm_tensor_requires_grad(row));
	assert_string_equal(lm_tensor_grad_fn_name(row), "SelectBackward");
	EXPECT_STATUS(lm_zero_(row), LM_ERR_STATE, "zero_");
	/* as_strided is not differentiable */
	EXPECT_NULL(lm_as_strided(w, 1, (int64_t[]){2}, (int64_t[]){1}, 0), LM_ERR_UNSUPPORTED, "as_strided");
	/* a non-leaf cannot stop requiring grad */
	EXPECT_STATUS(lm_tensor_requires_grad_(row, false), LM_ERR_STATE, "not a leaf");
	/* results under no_grad do not require grad */
	prev = lm_set_grad_enabled(false);
	lm_tensor *y = lm_mul(w, w);
	lm_set_grad_enabled(prev);
	assert_false(lm_tensor_requires_grad(y));
	lm_tensor *z = lm_mul(w, w);
	assert_true(lm_tensor_requires_grad(z));
	assert_string_equal(lm_tensor_grad_fn_name(z), "MulBackward");
	/* integer results carry no gradient */
	lm_tensor *cmp = lm_binary(LM_GT, w, w);
	assert_false(lm_tensor_requires_grad(cmp));
	lm_tensor *objs[] = {w, row, y, z, cmp};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

/* ---------------------------------------------------------------- interrupts */

static void *interrupt_soon(void *arg)
{
	(void)arg;
	usleep(20000);
	lm_interrupt();
	return NULL;
}

static void test_interrupt(void **state)
{
	(void)state;
	/* a long elementwise chain is stopped with LM_ERR_INTERRUPTED and no result */
	int64_t n = 1 << 22;
	lm_tensor *a = lm_ones(1, &n, LM_FLOAT32);
	pthread_t th;
	pthread_create(&th, NULL, interrupt_soon, NULL);
	lm_status st = LM_OK;
	for (int k = 0; k < 100000 && st == LM_OK; k++) {
		lm_tensor *b = lm_exp(a);
		if (!b) {
			st = lm_last_status();
			break;
		}
		lm_tensor_release(b);
	}
	pthread_join(th, NULL);
	assert_int_equal(st, LM_ERR_INTERRUPTED);
	assert_true(lm_interrupted());
	/* while the flag is set, every long op refuses */
	EXPECT_NULL(lm_sum(a, LM_DIM_ALL, false), LM_ERR_INTERRUPTED, "interrupted");
	lm_interrupt_clear();
	lm_tensor *s = lm_sum(a, LM_DIM_ALL, false);
	double v;
	assert_int_equal(lm_tensor_item(s, &v), LM_OK);
	assert_true(v == (double)n);
	lm_tensor_release(s);
	lm_tensor_release(a);
}

/* No elements, huge sizes (found by the Lua fuzzer, tests/lua/fuzz): the sizes other than 0 must
 * multiply without overflow (a stride of [0, 2^40, 2^40] is 2^80), and an op on such a tensor
 * must not loop over its 2^32 empty lines. */
static void test_empty_huge_shapes(void **state)
{
	(void)state;
	const int64_t big = (int64_t)1 << 40;
	EXPECT_NULL(lm_zeros(3, (int64_t[]){0, big, big}, LM_FLOAT32), LM_ERR_OVERFLOW,
	            "zeros: the element count of shape [0, 1099511627776, 1099511627776] overflows");
	lm_tensor *e = lm_zeros(2, (int64_t[]){0, 4}, LM_FLOAT32);
	EXPECT_NULL(lm_view(e, 3, (int64_t[]){0, big, big}), LM_ERR_OVERFLOW, "view: the element count");
	EXPECT_NULL(lm_expand(e, 4, (int64_t[]){big, big, 0, 4}), LM_ERR_OVERFLOW,
	            "expand: the element count");
	lm_tensor *w = lm_zeros(2, (int64_t[]){(int64_t)1 << 32, 0}, LM_FLOAT32);
	assert_non_null(w);
	assert_int_equal(lm_tensor_strides(w)[0], 1);
	lm_tensor *y = lm_softmax(w, -1), *ly = lm_log_softmax(w, 1);
	assert_non_null(y);
	assert_non_null(ly);
	assert_int_equal(lm_tensor_numel(y), 0);
	lm_tensor_release(ly);
	lm_tensor_release(y);
	lm_tensor_release(w);
	/* sizes next to 2^63: byte strides ([0, 2^63 - 1] of float32) and block counts overflowed */
	lm_tensor *o = lm_ones(2, (int64_t[]){0, INT64_MAX}, LM_FLOAT32);
	assert_non_null(o);
	lm_tensor *c = lm_cumsum(o, 0);
	assert_non_null(c);
	lm_tensor_release(c);
	lm_tensor_release(o);
	lm_tensor_release(e);
}

/* randint gives exact integers in [lo, hi) (values went through a double: lo = 2^63 - 11 gave
 * 2^63 - 1024, below lo; lo + x overflowed for ranges past 2^63) and refuses a range that does
 * not fit the dtype; a float converts to uint8 alike on every path. */
static void test_randint_and_uint8(void **state)
{
	(void)state;
	int64_t n = 64;
	lm_tensor *r = lm_randint(INT64_MAX - 10, INT64_MAX, 1, &n, LM_INT64);
	assert_non_null(r);
	for (int64_t i = 0; i < n; i++) {
		int64_t v = ((const int64_t *)lm_tensor_data(r))[i];
		assert_true(v >= INT64_MAX - 10 && v < INT64_MAX);
	}
	lm_tensor_release(r);
	r = lm_randint(INT64_MIN, INT64_MAX, 1, &n, LM_INT64);
	assert_non_null(r);
	lm_tensor_release(r);
	EXPECT_NULL(lm_randint(-5, 5, 1, &n, LM_UINT8), LM_ERR_ARG,
	            "randint: range [-5, 5) does not fit uint8 (0..255)");
	EXPECT_NULL(lm_randint(0, (int64_t)1 << 32, 1, &n, LM_INT32), LM_ERR_ARG, "does not fit int32");
	lm_tensor *f = lm_full(1, &n, LM_FLOAT64, 1e10), *b = lm_to_dtype(f, LM_UINT8);
	lm_tensor *s = lm_full(1, &n, LM_UINT8, 1e10);
	assert_int_equal(((const uint8_t *)lm_tensor_data(b))[0], ((const uint8_t *)lm_tensor_data(s))[0]);
	lm_tensor_release(s);
	lm_tensor_release(b);
	lm_tensor_release(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEAK_TEST(test_shape_errors),
		LEAK_TEST(test_dim_errors),
		LEAK_TEST(test_value_errors),
		LEAK_TEST(test_autograd_guards),
		LEAK_TEST(test_interrupt),
		LEAK_TEST(test_empty_huge_shapes),
		LEAK_TEST(test_randint_and_uint8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
