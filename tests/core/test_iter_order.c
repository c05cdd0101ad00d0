/*
 * test_iter_order.c — the elementwise iterator walks operands in the order of their strides (the
 * densest dim innermost), not in C order: every layout must still give every element its own
 * result. Random shapes (sizes 0, 1, odd, 16, 17, 33), each operand a random permutation of its
 * memory, some narrowed, some broadcast; in-place add into a permuted destination, copy into one, out-of-place add, exp
 * and where, all against a loop over logical indices. Seeds are printed on failure.
 * Read next: ../../src/core/iter.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lmi.h"
#include "optable.h"
#include "testutil.h"

/* A float64 tensor of the given logical shape whose memory is laid out in a random order of its
 * dims (a contiguous tensor of the permuted shape, viewed back), maybe inside a larger one. */
static lm_tensor *permuted(ot_rng *r, int nd, const int64_t *shape)
{
	int perm[LM_MAX_DIMS], inv[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) perm[i] = i;
	for (int i = nd - 1; i > 0; i--) {
		int j = (int)ot_int(r, 0, i), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	int64_t ms[LM_MAX_DIMS];
	bool wide = ot_int(r, 0, 2) == 0 && nd > 0;
	for (int i = 0; i < nd; i++) ms[i] = shape[perm[i]] + (wide && i == nd - 1 ? 3 : 0);
	lm_tensor *base = ot_make(r, nd, ms, LM_FLOAT64, OT_CONTIGUOUS, -2, 2);
	assert_non_null(base);
	lm_tensor *mem = base;
	if (wide) {
		mem = lm_narrow(base, nd - 1, 1, shape[perm[nd - 1]]);
		assert_non_null(mem);
		lm_tensor_release(base);
	}
	for (int i = 0; i < nd; i++) inv[perm[i]] = i;
	lm_tensor *t = lm_permute(mem, inv);
	assert_non_null(t);
	lm_tensor_release(mem);
	return t;
}

static double at(const lm_tensor *t, int nd, const int64_t *idx) { return ot_get_bcast(t, nd, idx); }

static void check_all(uint64_t seed, const char *what, const lm_tensor *got, int nd, const int64_t *shape,
                      const double *want)
{
	int64_t n = 1, idx[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) n *= shape[i];
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		double g = at(got, nd, idx);
		if (!(fabs(g - want[i]) <= 1e-12 * (1 + fabs(want[i]))))
			fail_msg("seed %llu, %s: element %lld of shape %s is %.17g, expected %.17g",
			         (unsigned long long)seed, what, (long long)i, lmi_shape_s(got), g, want[i]);
	}
}

static void one_case(uint64_t seed)
{
	ot_rng r = {seed};
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(&r, 1, 4, shape);
	int64_t n = 1, idx[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) n *= shape[i];
	double *want = malloc((size_t)(n ? n : 1) * sizeof *want);
	assert_non_null(want);

	lm_tensor *a = permuted(&r, nd, shape), *b = permuted(&r, nd, shape), *d = permuted(&r, nd, shape);
	/* b broadcast along a random dim half the time */
	if (nd > 1 && ot_int(&r, 0, 1)) {
		int k = (int)ot_int(&r, 0, nd - 1);
		lm_tensor *row = lm_narrow(b, k, 0, shape[k] ? 1 : 0);
		assert_non_null(row);
		lm_tensor *e = shape[k] ? lm_expand(row, nd, shape) : lm_tensor_retain(row);
		assert_non_null(e);
		lm_tensor_release(row);
		lm_tensor_release(b);
		b = e;
	}

	/* d += b (in place, d permuted) */
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		want[i] = at(d, nd, idx) + at(b, nd, idx);
	}
	assert_int_equal(lm_binary_(LM_ADD, d, b), LM_OK);
	check_all(seed, "d += b", d, nd, shape, want);

	/* d = a (copy into a permuted destination) */
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		want[i] = at(a, nd, idx);
	}
	assert_int_equal(lm_copy_(d, a), LM_OK);
	check_all(seed, "d.copy_(a)", d, nd, shape, want);

	/* a + b, exp(a), where(a > 0, a, b) (fresh outputs) */
	lm_tensor *s = lm_add(a, b), *e = lm_exp(a), *z = lm_zeros(nd, shape, LM_FLOAT64);
	assert_non_null(s);
	assert_non_null(e);
	assert_non_null(z);
	lm_tensor *c = lm_binary(LM_GT, a, z);
	assert_non_null(c);
	lm_tensor *w = lm_where(c, a, b);
	assert_non_null(w);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		want[i] = at(a, nd, idx) + at(b, nd, idx);
	}
	check_all(seed, "a + b", s, nd, shape, want);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		want[i] = exp(at(a, nd, idx));
	}
	check_all(seed, "exp(a)", e, nd, shape, want);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		double av = at(a, nd, idx);
		want[i] = av > 0 ? av : at(b, nd, idx);
	}
	check_all(seed, "where(a > 0, a, b)", w, nd, shape, want);

	lm_tensor *ts[] = {a, b, d, s, e, z, c, w};
	for (int i = 0; i < 8; i++) lm_tensor_release(ts[i]);
	free(want);
}

static void test_layouts(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 600; seed++) one_case(seed);
}

/* The case that motivated the order: a transposed (column-major) matrix added into in place,
 * large enough for the parallel chunks. */
static lm_tensor *transposed(ot_rng *r, int64_t rows, int64_t cols)
{
	lm_tensor *base = ot_make(r, 2, (int64_t[]){cols, rows}, LM_FLOAT32, OT_CONTIGUOUS, -1, 1);
	assert_non_null(base);
	lm_tensor *t = lm_transpose(base, 0, 1);
	assert_non_null(t);
	lm_tensor_release(base);
	return t;
}

static void test_transposed_accumulate(void **state)
{
	(void)state;
	ot_rng r = {7};
	int64_t shape[2] = {301, 517}, n = 301 * 517, idx[2];
	lm_tensor *acc = transposed(&r, 301, 517), *g = transposed(&r, 301, 517);
	double *want = malloc((size_t)n * sizeof *want);
	assert_non_null(want);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, 2, shape, idx);
		float v = (float)at(acc, 2, idx), gv = (float)at(g, 2, idx);
		for (int k = 0; k < 3; k++) v = v + gv;
		want[i] = v;
	}
	for (int k = 0; k < 3; k++) assert_int_equal(lm_binary_(LM_ADD, acc, g), LM_OK);
	check_all(0, "acc += g three times (transposed, float32)", acc, 2, shape, want);
	free(want);
	lm_tensor_release(acc);
	lm_tensor_release(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_layouts, lmt_leak_setup, lmt_leak_teardown),
		cmocka_unit_test_setup_teardown(test_transposed_accumulate, lmt_leak_setup, lmt_leak_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
