/*
 * test_dtype.c — the type table (lm_dtype_traits, src/core/dtype.c) against values known by hand:
 * every row's name, sizes, range and rank agree with the older entry points (lm_dtype_name,
 * lm_dtype_size, lm_dtype_is_float, lm_promote_types); get / set convert as C and PyTorch do
 * (floats round, integers truncate then wrap modulo 2^bits, NaN gives 0); get_int / set_int are
 * exact past 2^53; to_float / from_float over n elements (0, 1, odd, unaligned) agree with the
 * element functions. A bad dtype has no row. The new rows: int8 wraps as the other integers;
 * float16 and bfloat16 round to nearest even through float32 (as PyTorch's c10::Half and BFloat16,
 * which take a float), overflow to infinity; the block types have no element functions and
 * promote as float32; promotion follows PyTorch's table (float16 with bfloat16: float32; int8 with
 * uint8: int32, where PyTorch's int16 is not a Lumen dtype).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lumen/core.h"

static void test_rows(void **state)
{
	(void)state;
	static const struct {
		lm_dtype dt;
		const char *name;
		size_t size;
		bool is_int, is_signed;
		int64_t min, max;
		int64_t block;
		lm_dtype as;
	} want[] = {
		{LM_FLOAT32, "float32", 4, false, true, 0, 0, 1, LM_FLOAT32},
		{LM_FLOAT64, "float64", 8, false, true, 0, 0, 1, LM_FLOAT64},
		{LM_INT32, "int32", 4, true, true, INT32_MIN, INT32_MAX, 1, LM_INT32},
		{LM_INT64, "int64", 8, true, true, INT64_MIN, INT64_MAX, 1, LM_INT64},
		{LM_UINT8, "uint8", 1, true, false, 0, 255, 1, LM_UINT8},
		{LM_INT8, "int8", 1, true, true, -128, 127, 1, LM_INT32},
		{LM_FLOAT16, "float16", 2, false, true, 0, 0, 1, LM_FLOAT32},
		{LM_BFLOAT16, "bfloat16", 2, false, true, 0, 0, 1, LM_FLOAT32},
		{LM_Q8_0, "q8_0", 34, false, true, 0, 0, 32, LM_FLOAT32},
		{LM_Q4_0, "q4_0", 18, false, true, 0, 0, 32, LM_FLOAT32},
	};
	assert_int_equal(sizeof want / sizeof want[0], LM_DTYPE_COUNT);
	for (size_t i = 0; i < LM_DTYPE_COUNT; i++) {
		const lm_dtype_traits *t = lm_dtype_traits_of(want[i].dt);
		assert_non_null(t);
		assert_string_equal(t->name, want[i].name);
		assert_string_equal(t->name, lm_dtype_name(want[i].dt));
		assert_int_equal(t->block_size, want[i].block);
		assert_int_equal(t->type_size, want[i].size);
		assert_int_equal(t->compute_as, want[i].as);
		assert_int_equal(lm_dtype_is_block(want[i].dt), want[i].block > 1);
		if (want[i].block == 1) assert_int_equal(lm_dtype_size(want[i].dt), want[i].size);
		assert_int_equal(t->is_int, want[i].is_int);
		assert_int_equal(!t->is_int, lm_dtype_is_float(want[i].dt));
		assert_int_equal(t->is_signed, want[i].is_signed);
		assert_true(t->min == want[i].min && t->max == want[i].max);
		lm_dtype parsed;
		assert_int_equal(lm_dtype_from_name(t->name, &parsed), LM_OK);
		assert_int_equal(parsed, want[i].dt);
	}
	/* the ranks give lm_promote_types' order: uint8 < int32 < int64 < float32 < float64 */
	static const lm_dtype order[] = {LM_UINT8, LM_INT32, LM_INT64, LM_FLOAT32, LM_FLOAT64};
	for (int a = 0; a < 5; a++)
		for (int b = 0; b < 5; b++)
			assert_int_equal(lm_promote_types(order[a], order[b]), order[a > b ? a : b]);
	/* the new types in PyTorch's promotion table */
	static const lm_dtype pr[][3] = {
		{LM_FLOAT16, LM_FLOAT32, LM_FLOAT32}, {LM_BFLOAT16, LM_FLOAT16, LM_FLOAT32},
		{LM_FLOAT16, LM_INT64, LM_FLOAT16},   {LM_BFLOAT16, LM_UINT8, LM_BFLOAT16},
		{LM_INT8, LM_UINT8, LM_INT32},        {LM_INT8, LM_INT32, LM_INT32},
		{LM_INT8, LM_INT8, LM_INT8},          {LM_FLOAT16, LM_FLOAT16, LM_FLOAT16},
		{LM_INT8, LM_FLOAT64, LM_FLOAT64},    {LM_Q4_0, LM_FLOAT16, LM_FLOAT32},
	};
	for (size_t i = 0; i < sizeof pr / sizeof pr[0]; i++) {
		assert_int_equal(lm_promote_types(pr[i][0], pr[i][1]), pr[i][2]);
		assert_int_equal(lm_promote_types(pr[i][1], pr[i][0]), pr[i][2]);
	}
	lm_dtype parsed;
	assert_int_equal(lm_dtype_from_name("half", &parsed), LM_OK);
	assert_int_equal(parsed, LM_FLOAT16);
	assert_null(lm_dtype_traits_of(LM_DTYPE_COUNT));
	assert_null(lm_dtype_traits_of((lm_dtype)-1));
	assert_int_equal(lm_dtype_size(LM_DTYPE_COUNT), 0);
}

/* set(v) then get_int / get, on a buffer wide enough for any element */
static int64_t set_get_int(lm_dtype dt, double v)
{
	unsigned char buf[16];
	const lm_dtype_traits *t = lm_dtype_traits_of(dt);
	memset(buf, 0xAB, sizeof buf);
	t->set(buf, v);
	assert_int_equal(buf[t->type_size], 0xAB); /* no byte past the element written */
	return t->get_int(buf);
}

static void test_set_get(void **state)
{
	(void)state;
	/* integers: truncation toward zero, then modulo 2^bits */
	assert_int_equal(set_get_int(LM_UINT8, 300.7), 44);
	assert_int_equal(set_get_int(LM_UINT8, -1.5), 255);
	assert_int_equal(set_get_int(LM_INT32, -2.9), -2);
	assert_int_equal(set_get_int(LM_INT32, 2147483648.0), INT32_MIN);
	assert_int_equal(set_get_int(LM_INT64, 9007199254740993.0), 9007199254740992LL);
	assert_int_equal(set_get_int(LM_INT64, 18446744073709551616.0 + 8192.0), 8192);
	assert_int_equal(set_get_int(LM_INT32, NAN), 0);
	assert_int_equal(set_get_int(LM_INT64, -INFINITY), 0);
	/* floats: get_int truncates and wraps as set does */
	assert_int_equal(set_get_int(LM_FLOAT64, -7.9), -7);
	assert_int_equal(set_get_int(LM_FLOAT32, 1e30), (int64_t)(uint64_t)0); /* 1e30f mod 2^64 */
	unsigned char buf[8];
	const lm_dtype_traits *f32 = lm_dtype_traits_of(LM_FLOAT32), *f64 = lm_dtype_traits_of(LM_FLOAT64);
	f32->set(buf, 0.1);
	assert_true(f32->get(buf) == (double)0.1f);
	f64->set(buf, 0.1);
	assert_true(f64->get(buf) == 0.1);
	f32->set(buf, NAN);
	assert_true(isnan(f32->get(buf)));
	/* exact integers past 2^53 */
	const lm_dtype_traits *i64 = lm_dtype_traits_of(LM_INT64);
	i64->set_int(buf, INT64_MAX);
	assert_true(i64->get_int(buf) == INT64_MAX);
	assert_true(i64->get(buf) == 9223372036854775808.0);
	i64->set_int(buf, (int64_t)9007199254740993LL);
	assert_true(i64->get_int(buf) == 9007199254740993LL);
	/* set_int wraps into narrow integers, rounds once into floats */
	lm_dtype_traits_of(LM_UINT8)->set_int(buf, -1);
	assert_int_equal(buf[0], 255);
	lm_dtype_traits_of(LM_INT32)->set_int(buf, ((int64_t)1 << 32) + 5);
	assert_int_equal(lm_dtype_traits_of(LM_INT32)->get_int(buf), 5);
	f32->set_int(buf, ((int64_t)1 << 53) + ((int64_t)1 << 29) + 1); /* just past the halfway */
	assert_true(f32->get(buf) == 9007200328482816.0); /* 2^53 + 2^30: rounded up, once (through
	                                                     a double it would tie down to 2^53) */
	/* int8: truncation and wrap as the others */
	assert_int_equal(set_get_int(LM_INT8, 200.9), -56);
	assert_int_equal(set_get_int(LM_INT8, -129.0), 127);
	assert_int_equal(set_get_int(LM_INT8, NAN), 0);
	lm_dtype_traits_of(LM_INT8)->set_int(buf, 255);
	assert_int_equal((int8_t)buf[0], -1);
	/* float16: nearest even, overflow to infinity, subnormals, NaN stays NaN */
	const lm_dtype_traits *h = lm_dtype_traits_of(LM_FLOAT16), *bf = lm_dtype_traits_of(LM_BFLOAT16);
	static const double hv[][2] = {
		{1.0, 1.0},           {0.1, 0.0999755859375},   {2049.0, 2048.0}, /* a tie: to even */
		{2051.0, 2052.0},     {65504.0, 65504.0},       {65519.99, 65504.0},
		{65520.0, INFINITY},  {1e-8, 0.0},              {6e-8, 5.9604644775390625e-08}, /* 2^-24 */
		{-3.0e-5, -2.9981136322021484e-05},
	};
	for (size_t i = 0; i < sizeof hv / sizeof hv[0]; i++) {
		h->set(buf, hv[i][0]);
		assert_true(h->get(buf) == hv[i][1]);
	}
	h->set(buf, NAN);
	assert_true(isnan(h->get(buf)));
	h->set(buf, 70000.0);
	assert_int_equal(h->get_int(buf), 0); /* infinity: 0, as every float to integer conversion */
	/* bfloat16: float32's top half, rounded to nearest even */
	static const double bv[][2] = {
		{1.0, 1.0}, {0.1, 0.10009765625}, {257.0, 256.0} /* a tie: to even */, {259.0, 260.0},
		{3.0e38, 3.00405527047391e+38}, {1e39, INFINITY},
	};
	for (size_t i = 0; i < sizeof bv / sizeof bv[0]; i++) {
		bf->set(buf, bv[i][0]);
		assert_true(bf->get(buf) == bv[i][1]);
	}
	/* block types: no element stands alone */
	assert_null(lm_dtype_traits_of(LM_Q4_0)->get);
	assert_null(lm_dtype_traits_of(LM_Q8_0)->set);
}

static void test_bulk(void **state)
{
	(void)state;
	static const int64_t ns[] = {0, 1, 7, 33};
	double src[40];
	for (int i = 0; i < 40; i++) src[i] = (i % 2 ? -1 : 1) * (i * 3.25 + 0.5);
	for (int d = 0; d < LM_DTYPE_COUNT; d++) {
		const lm_dtype_traits *t = lm_dtype_traits_of((lm_dtype)d);
		if (t->block_size > 1) continue; /* test_quant.c: the block conversions */
		for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
			int64_t n = ns[k];
			unsigned char elems[40 * 8 + 1], back[40 * 8 + 1];
			float f[41], g[41];
			f[n] = g[n] = 12345.0f; /* sentinels */
			/* an unaligned start: the functions must not assume alignment */
			for (int64_t i = 0; i < n; i++) t->set(elems + 1 + i * t->type_size, src[i]);
			t->to_float(elems + 1, f, n);
			for (int64_t i = 0; i < n; i++)
				assert_true(f[i] == (float)t->get(elems + 1 + i * t->type_size));
			assert_true(f[n] == 12345.0f);
			t->from_float(f, back + 1, n);
			t->to_float(back + 1, g, n);
			for (int64_t i = 0; i < n; i++) assert_true(g[i] == f[i]);
			assert_true(g[n] == 12345.0f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_set_get),
		cmocka_unit_test(test_bulk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
