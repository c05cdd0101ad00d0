/*
 * test_lowp.c — the storage types int8, float16, bfloat16 and the block types q8_0, q4_0 as
 * tensors (issue 34 Must 1), against references that do not share the code under test:
 *   - conversions between every pair of element dtypes, from strided sources into strided
 *     destinations, element by element against the type table's documented rules (an integer
 *     source converts as an exact integer, a float one as its value; the 16-bit floats round to
 *     nearest even through float32, the integers truncate and wrap);
 *   - ops on the 16-bit floats compute in float32 and round once: the result equals, bit for bit,
 *     the float32 op on the same values converted afterwards (unary, broadcast binary, in place on a
 *     view, sums accumulating in float32, matmul); int8 wraps as PyTorch's (100 + 100 = -56) and
 *     sums in int64;
 *   - the block types: x:to('q4_0') has, byte for byte, the blocks of core/quant.c's quantizer
 *     (itself checked against ggml's layout in test_quant.c) on each row, dequantizes to its
 *     values, copies and clones as bytes, and every op that reads elements refuses it by name;
 *     NaN or Inf, a last dim not a multiple of 32, a device: clear errors.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/quant.h"
#include "lumen/core.h"
#include "lumen/autograd.h"
#include "lumen/nn.h"
#include "lumen/ops.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* The element at C-order position i of t, as the type table reads it (t on the CPU). */
static const char *elem(const lm_tensor *t, int64_t i)
{
	int nd = lm_tensor_ndim(t);
	int64_t off = 0;
	for (int d = nd - 1; d >= 0; d--) {
		int64_t s = lm_tensor_shape(t)[d];
		off += (i % s) * lm_tensor_strides(t)[d];
		i /= s;
	}
	return (const char *)lm_tensor_data(t) + off * (int64_t)lm_dtype_size(lm_tensor_dtype(t));
}

/* A (5, 7) source of dtype dt, seen transposed, holding values of every kind the type can hold:
 * large and small magnitudes, negatives, halves (ties), values past the narrow types' ranges. */
static lm_tensor *source(lm_dtype dt)
{
	static const double special[] = {0.5, 1.5, 2.5, -0.5, 127.5, 128.0, -129.0, 255.0, 300.7, -1e5,
	                                 65504.0, 65520.0, 1e-8, 3.0e38, 2049.0, -2.5};
	lm_tensor *t = lm_empty(2, (int64_t[]){7, 5}, dt);
	const lm_dtype_traits *tr = lm_dtype_traits_of(dt);
	for (int64_t i = 0; i < 35; i++) {
		double v = i < 16 ? special[i] : (urand() - 0.5) * (i % 3 ? 200 : 1e6);
		tr->set((char *)lm_tensor_data(t) + i * (int64_t)tr->type_size, v);
	}
	lm_tensor *v = lm_transpose(t, 0, 1);
	lm_tensor_release(t);
	return v;
}

static void test_conversions_every_pair(void **state)
{
	(void)state;
	for (int s = 0; s < LM_Q8_0; s++)
		for (int d = 0; d < LM_Q8_0; d++) {
			lm_tensor *x = source((lm_dtype)s);
			/* into a strided destination (a transposed view) and through lm_to_dtype */
			lm_tensor *dstore = lm_zeros(2, (int64_t[]){7, 5}, (lm_dtype)d), *dv = lm_transpose(dstore, 0, 1);
			assert_int_equal(lm_copy_(dv, x), LM_OK);
			lm_tensor *y = lm_to_dtype(x, (lm_dtype)d);
			assert_non_null(y);
			const lm_dtype_traits *ts = lm_dtype_traits_of((lm_dtype)s), *td = lm_dtype_traits_of((lm_dtype)d);
			for (int64_t i = 0; i < 35; i++) {
				unsigned char want[8];
				const char *p = elem(x, i);
				if (ts->is_int)
					td->set_int(want, ts->get_int(p));
				else
					td->set(want, ts->get(p));
				if (memcmp(want, elem(y, i), td->type_size) || memcmp(want, elem(dv, i), td->type_size))
					fail_msg("%s -> %s, element %lld: %g gave %g (copy_ %g), expected %g", ts->name, td->name,
					         (long long)i, ts->get(p), td->get(elem(y, i)), td->get(elem(dv, i)), td->get(want));
			}
			lm_tensor_release(x);
			lm_tensor_release(dstore);
			lm_tensor_release(dv);
			lm_tensor_release(y);
		}
	/* the stated rules on known values */
	lm_tensor *f = lm_from_data((float[]){65519.0f, 65520.0f, 2049.0f, -0.0f, 257.0f, 300.7f}, 1,
	                            (int64_t[]){6}, LM_FLOAT32);
	lm_tensor *h = lm_to_dtype(f, LM_FLOAT16), *b = lm_to_dtype(f, LM_BFLOAT16), *c = lm_to_dtype(f, LM_INT8);
	double v;
	static const double hw[] = {65504.0, INFINITY, 2048.0, -0.0, 257.0, 300.75};
	static const double bw[] = {65536.0, 65536.0, 2048.0, -0.0, 256.0, 300.0};
	static const double cw[] = {-17, -16, 1, 0, 1, 44}; /* truncated, then modulo 256 */
	for (int64_t i = 0; i < 6; i++) {
		lm_tensor_get(h, &i, &v);
		assert_true(v == hw[i]);
		lm_tensor_get(b, &i, &v);
		assert_true(v == bw[i]);
		lm_tensor_get(c, &i, &v);
		assert_true(v == cw[i]);
	}
	lm_tensor_release(f);
	lm_tensor_release(h);
	lm_tensor_release(b);
	lm_tensor_release(c);
}

/* a and b: same dtype, shape and bits */
static void assert_bits(const lm_tensor *a, const lm_tensor *b, const char *what)
{
	assert_int_equal(lm_tensor_dtype(a), lm_tensor_dtype(b));
	assert_int_equal(lm_tensor_numel(a), lm_tensor_numel(b));
	size_t es = lm_dtype_size(lm_tensor_dtype(a));
	for (int64_t i = 0; i < lm_tensor_numel(a); i++)
		if (memcmp(elem(a, i), elem(b, i), es)) {
			const lm_dtype_traits *t = lm_dtype_traits_of(lm_tensor_dtype(a));
			fail_msg("%s: element %lld: %.9g, expected %.9g", what, (long long)i, t->get(elem(a, i)),
			         t->get(elem(b, i)));
		}
}

/* op on the 16-bit tensor against op on its float32 values, rounded once */
static void check_once(lm_tensor *got16, lm_tensor *got32, lm_dtype dt, const char *what)
{
	if (!got16 || !got32) fail_msg("%s: %s", what, lm_last_error());
	lm_tensor *want = lm_to_dtype(got32, dt);
	assert_bits(got16, want, what);
	lm_tensor_release(want);
	lm_tensor_release(got16);
	lm_tensor_release(got32);
}

static void test_ops_round_once(void **state)
{
	(void)state;
	static const lm_dtype dts[] = {LM_FLOAT16, LM_BFLOAT16};
	for (int k = 0; k < 2; k++) {
		lm_dtype dt = dts[k];
		lm_tensor *r = lm_randn(2, (int64_t[]){33, 17}, LM_FLOAT32), *q = lm_randn(1, (int64_t[]){17}, LM_FLOAT32);
		lm_tensor *x = lm_to_dtype(r, dt), *y = lm_to_dtype(q, dt);
		lm_tensor *x32 = lm_to_dtype(x, LM_FLOAT32), *y32 = lm_to_dtype(y, LM_FLOAT32); /* the same values */
		lm_tensor *xt = lm_transpose(x, 0, 1), *xt32 = lm_transpose(x32, 0, 1);
		check_once(lm_exp(xt), lm_exp(xt32), dt, "exp of a transposed view");
		check_once(lm_tanh(x), lm_tanh(x32), dt, "tanh");
		check_once(lm_add(x, y), lm_add(x32, y32), dt, "add, broadcast");
		check_once(lm_div(y, x), lm_div(y32, x32), dt, "div, broadcast");
		check_once(lm_sum(x, LM_DIM_ALL, false), lm_sum(x32, LM_DIM_ALL, false), dt, "sum (float32 accumulation)");
		check_once(lm_mean(x, 1, true), lm_mean(x32, 1, true), dt, "mean over dim 2");
		check_once(lm_softmax(x, 1), lm_softmax(x32, 1), dt, "softmax");
		check_once(lm_matmul(x, xt), lm_matmul(x32, xt32), dt, "matmul (float32 accumulation)");
		/* composites round once too: linear is not matmul-rounded-then-added */
		lm_tensor *b0 = lm_randn(1, (int64_t[]){33}, LM_FLOAT32);
		lm_tensor *w = lm_to_dtype(b0, dt), *w32 = lm_to_dtype(w, LM_FLOAT32); /* the bias */
		lm_tensor_release(b0);
		check_once(lm_linear(x, x, w), lm_linear(x32, x32, w32), dt, "linear");
		/* in place on a view: the rows 2..4 of x, each element rounded once */
		lm_tensor *xc = lm_clone(x), *xc32 = lm_clone(x32);
		lm_tensor *v = lm_narrow(xc, 0, 1, 3), *v32 = lm_narrow(xc32, 0, 1, 3);
		assert_int_equal(lm_binary_(LM_MUL, v, y), LM_OK);
		assert_int_equal(lm_binary_(LM_MUL, v32, y32), LM_OK);
		check_once(lm_tensor_retain(xc), lm_tensor_retain(xc32), dt, "mul_ in place on a view");
		/* a sum float16 alone would lose: 4096 ones and 1/8s stay exact in float32 */
		lm_tensor *ones = lm_full(1, (int64_t[]){4096}, dt, 1.0);
		lm_tensor *s = lm_sum(ones, LM_DIM_ALL, false);
		double sv;
		lm_tensor_item(s, &sv);
		assert_true(sv == 4096.0); /* summed in float16 it would stop at 2048 */
		lm_tensor *objs[] = {r, q, x, y, x32, y32, xt, xt32, w, w32, xc, xc32, v, v32, ones, s};
		for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) lm_tensor_release(objs[i]);
	}
	/* gradients come back in the 16-bit dtype */
	lm_tensor *a32 = lm_randn(1, (int64_t[]){9}, LM_FLOAT32), *a = lm_to_dtype(a32, LM_FLOAT16);
	lm_tensor_release(a32);
	lm_tensor_requires_grad_(a, true);
	lm_tensor *sq = lm_mul(a, a), *l = lm_sum(sq, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	const lm_tensor *g = lm_tensor_grad(a);
	assert_int_equal(lm_tensor_dtype(g), LM_FLOAT16);
	for (int64_t i = 0; i < 9; i++) {
		double gv, av;
		lm_tensor_get(g, &i, &gv);
		lm_tensor_get(a, &i, &av);
		assert_true(gv == 2 * av); /* exact: doubling */
	}
	lm_tensor_release(sq);
	lm_tensor_release(l);
	lm_tensor_release(a);
}

static void test_int8_wraps(void **state)
{
	(void)state;
	lm_tensor *a = lm_from_data((int8_t[]){100, -100, 127, -128}, 1, (int64_t[]){4}, LM_INT8);
	lm_tensor *s = lm_add(a, a), *n = lm_neg(a), *ab = lm_abs(a), *t = lm_sum(a, LM_DIM_ALL, false);
	static const int8_t sw[] = {-56, 56, -2, 0}, nw[] = {-100, 100, -127, -128}, aw[] = {100, 100, 127, -128};
	assert_int_equal(lm_tensor_dtype(s), LM_INT8);
	assert_memory_equal(lm_tensor_data(s), sw, 4);
	assert_memory_equal(lm_tensor_data(n), nw, 4);
	assert_memory_equal(lm_tensor_data(ab), aw, 4); /* abs(-128) wraps to -128, as PyTorch's */
	assert_int_equal(lm_tensor_dtype(t), LM_INT64);
	assert_int_equal(*(int64_t *)lm_tensor_data(t), -1);
	lm_tensor *u = lm_from_data((uint8_t[]){200, 1, 2, 3}, 1, (int64_t[]){4}, LM_UINT8), *m = lm_add(a, u);
	assert_int_equal(lm_tensor_dtype(m), LM_INT32); /* int8 with uint8: int32 (PyTorch's int16) */
	assert_int_equal(((int32_t *)lm_tensor_data(m))[0], 300);
	lm_tensor *objs[] = {a, s, n, ab, t, u, m};
	for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) lm_tensor_release(objs[i]);
}

static void expect_error(const void *got, const char *part)
{
	assert_null(got);
	if (!strstr(lm_last_error(), part)) fail_msg("error \"%s\" lacks \"%s\"", lm_last_error(), part);
}

static void test_blocks(void **state)
{
	(void)state;
	const int64_t R = 3, C = 96;
	lm_tensor *x = lm_randn(2, (int64_t[]){R, C}, LM_FLOAT32);
	float *xv = lm_tensor_data(x);
	xv[5] = 0.0f, xv[40] = -7.5f; /* a large negative one: q4_0's -8 code */
	for (int64_t j = 64; j < 96; j++) xv[2 * C + j] = 0.0f; /* an all-zero block */
	static const lm_dtype bt[] = {LM_Q8_0, LM_Q4_0};
	for (int k = 0; k < 2; k++) {
		lm_tensor *q = lm_to_dtype(x, bt[k]);
		assert_non_null(q);
		assert_int_equal(lm_tensor_dtype(q), bt[k]);
		size_t bytes = (size_t)(R * C / 32) * (bt[k] == LM_Q8_0 ? 34 : 18);
		assert_int_equal(lm_tensor_nbytes(q), bytes);
		unsigned char *want = malloc(bytes);
		float *back = malloc(sizeof(float) * (size_t)(R * C));
		for (int64_t r = 0; r < R; r++) {
			size_t rb = bytes / (size_t)R;
			if (bt[k] == LM_Q8_0)
				lmi_quantize_q8_0(xv + r * C, want + r * rb, C);
			else
				lmi_quantize_q4_0(xv + r * C, want + r * rb, C);
		}
		assert_memory_equal(lm_tensor_data(q), want, bytes);
		if (bt[k] == LM_Q8_0)
			lmi_dequantize_q8_0(want, back, R * C);
		else
			lmi_dequantize_q4_0(want, back, R * C);
		lm_tensor *f = lm_to_dtype(q, LM_FLOAT32), *d = lm_to_dtype(q, LM_FLOAT64);
		assert_memory_equal(lm_tensor_data(f), back, sizeof(float) * (size_t)(R * C));
		for (int64_t i = 0; i < R * C; i++) assert_true(((double *)lm_tensor_data(d))[i] == (double)back[i]);
		/* a clone is the same bytes; q8_0 <-> q4_0 goes through the values */
		lm_tensor *c = lm_clone(q);
		assert_memory_equal(lm_tensor_data(c), want, bytes);
		lm_tensor *other = lm_to_dtype(q, bt[1 - k]), *of = lm_to_dtype(other, LM_FLOAT32);
		lm_tensor *direct = lm_to_dtype(f, bt[1 - k]);
		assert_memory_equal(lm_tensor_data(other), lm_tensor_data(direct), lm_tensor_nbytes(direct));
		/* every op that reads elements refuses it, naming itself and the type */
		const char *name = bt[k] == LM_Q8_0 ? "q8_0 is a block type" : "q4_0 is a block type";
		expect_error(lm_add(q, q), name);
		expect_error(lm_exp(q), name);
		expect_error(lm_sum(q, LM_DIM_ALL, false), name);
		expect_error(lm_transpose(q, 0, 1), name);
		expect_error(lm_narrow(q, 0, 0, 1), name);
		expect_error(lm_matmul(x, q), name);
		expect_error(lm_cat(2, (lm_tensor *[]){q, q}, 0), name);
		double v;
		assert_int_not_equal(lm_tensor_get(q, (int64_t[]){0, 0}, &v), LM_OK);
		assert_non_null(strstr(lm_last_error(), name));
		assert_int_not_equal(lm_fill_(q, 1.0), LM_OK);
		expect_error(lm_add(q, other), "is a block type"); /* mixing block types */
		expect_error(lm_zeros(2, (int64_t[]){1, 32}, bt[k]), name);
		lm_tensor *objs[] = {q, f, d, c, other, of, direct};
		for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) lm_tensor_release(objs[i]);
		free(want);
		free(back);
	}
	/* bad input: a clear error, never a silent NaN */
	xv[7] = NAN;
	expect_error(lm_to_dtype(x, LM_Q4_0), "element 8 (1-based, in C order) of shape [3, 96] is nan");
	xv[7] = INFINITY;
	expect_error(lm_to_dtype(x, LM_Q8_0), "is inf; quantization takes finite values only");
	lm_tensor *odd = lm_randn(2, (int64_t[]){4, 40}, LM_FLOAT32);
	expect_error(lm_to_dtype(odd, LM_Q4_0), "q4_0 holds blocks of 32 values along the last dim, and shape [4, 40]");
	lm_tensor *s0 = lm_scalar(1.0, LM_FLOAT32);
	expect_error(lm_to_dtype(s0, LM_Q8_0), "absent (a 0-d tensor)");
	lm_tensor_requires_grad_(odd, true);
	expect_error(lm_to_dtype(odd, LM_Q8_0), "would cut the gradient");
	lm_tensor_release(odd);
	lm_tensor_release(s0);
	lm_tensor_release(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversions_every_pair),
		cmocka_unit_test(test_ops_round_once),
		cmocka_unit_test(test_int8_wraps),
		cmocka_unit_test(test_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
