/*
 * dtype.c — the type table (lm_dtype_traits, include/lumen/core.h): every dtype's name, block and
 * size, whether it holds integers, its range and promotion rank, and its conversions, so that code
 * elsewhere asks the table instead of switching on the dtype. Also dtype names and promotion.
 */
#include <math.h>
#include <string.h>

#include "lmi.h"

/* ---------------------------------------------------------------- the type table */

/* The conversions of a type T whose elements stand alone (block_size 1); SET_D converts a double,
 * SET_I an int64, GET_I reads an exact int64. */
#define PLAIN_TYPE(T, SFX, SET_D, SET_I, GET_I)                                                    \
	static void to_float_##SFX(const void *x, float *y, int64_t n)                             \
	{                                                                                          \
		for (int64_t i = 0; i < n; i++) {                                                      \
			T v; /* memcpy: x need not be aligned to T */                                      \
			memcpy(&v, (const char *)x + i * (int64_t)sizeof v, sizeof v);                     \
			y[i] = (float)v;                                                                   \
		}                                                                                      \
	}                                                                                          \
	static void from_float_##SFX(const float *x, void *y, int64_t n)                           \
	{                                                                                          \
		for (int64_t i = 0; i < n; i++) {                                                      \
			T v = SET_D((double)x[i]);                                                         \
			memcpy((char *)y + i * (int64_t)sizeof v, &v, sizeof v);                           \
		}                                                                                      \
	}                                                                                          \
	static double get_##SFX(const void *p)                                                     \
	{                                                                                          \
		T v;                                                                                   \
		memcpy(&v, p, sizeof v);                                                               \
		return (double)v;                                                                      \
	}                                                                                          \
	static void set_##SFX(void *p, double d)                                                   \
	{                                                                                          \
		T v = SET_D(d);                                                                        \
		memcpy(p, &v, sizeof v);                                                               \
	}                                                                                          \
	static int64_t get_int_##SFX(const void *p)                                                \
	{                                                                                          \
		T v;                                                                                   \
		memcpy(&v, p, sizeof v);                                                               \
		return GET_I(v);                                                                       \
	}                                                                                          \
	static void set_int_##SFX(void *p, int64_t i)                                              \
	{                                                                                          \
		T v = SET_I(i);                                                                        \
		memcpy(p, &v, sizeof v);                                                               \
	}

#define AS_F32(d) ((float)(d))
#define AS_F64(d) ((double)(d))
#define WRAP_I32(d) ((int32_t)(uint32_t)lmi_wrap_u64(d))
#define WRAP_I64(d) ((int64_t)lmi_wrap_u64(d))
#define WRAP_U8(d) ((uint8_t)lmi_wrap_u64(d))
#define INT_I32(i) ((int32_t)(uint32_t)(uint64_t)(i))
#define INT_I64(i) ((int64_t)(i))
#define INT_U8(i) ((uint8_t)(uint64_t)(i))
#define FLOAT_TO_INT(v) ((int64_t)lmi_wrap_u64((double)(v)))
#define EXACT(v) ((int64_t)(v))

PLAIN_TYPE(float, f32, AS_F32, AS_F32, FLOAT_TO_INT)
PLAIN_TYPE(double, f64, AS_F64, AS_F64, FLOAT_TO_INT)
PLAIN_TYPE(int32_t, i32, WRAP_I32, INT_I32, EXACT)
PLAIN_TYPE(int64_t, i64, WRAP_I64, INT_I64, EXACT)
PLAIN_TYPE(uint8_t, u8, WRAP_U8, INT_U8, EXACT)

#define ROW(SFX, NAME, T, IS_INT, SIGNED, RANK, MIN, MAX)                                          \
	{NAME, 1, sizeof(T), IS_INT, SIGNED, RANK, MIN, MAX, to_float_##SFX, from_float_##SFX,        \
	 get_##SFX, set_##SFX, get_int_##SFX, set_int_##SFX}

const lm_dtype_traits lmi_dtypes[LM_DTYPE_COUNT] = {
	[LM_FLOAT32] = ROW(f32, "float32", float, false, true, 3, 0, 0),
	[LM_FLOAT64] = ROW(f64, "float64", double, false, true, 4, 0, 0),
	[LM_INT32] = ROW(i32, "int32", int32_t, true, true, 1, INT32_MIN, INT32_MAX),
	[LM_INT64] = ROW(i64, "int64", int64_t, true, true, 2, INT64_MIN, INT64_MAX),
	[LM_UINT8] = ROW(u8, "uint8", uint8_t, true, false, 0, 0, UINT8_MAX),
};

const lm_dtype_traits *lm_dtype_traits_of(lm_dtype dt)
{
	return dt >= 0 && dt < LM_DTYPE_COUNT ? &lmi_dtypes[dt] : NULL;
}

size_t lm_dtype_size(lm_dtype dt)
{
	if (dt < 0 || dt >= LM_DTYPE_COUNT) return 0;
	const lm_dtype_traits *t = &lmi_dtypes[dt];
	/* called on every op: no division for the types whose block is one element */
	return t->block_size == 1 ? t->type_size : t->type_size / (size_t)t->block_size;
}

const char *lm_dtype_name(lm_dtype dt) { return dt >= 0 && dt < LM_DTYPE_COUNT ? lmi_dtypes[dt].name : "?"; }

bool lm_dtype_is_float(lm_dtype dt) { return dt >= 0 && dt < LM_DTYPE_COUNT && !lmi_dtypes[dt].is_int; }

const char *lm_device_name(lm_device d) { return d == LM_CUDA ? "cuda" : "cpu"; }

lm_status lm_dtype_from_name(const char *name, lm_dtype *out)
{
	static const struct {
		const char *name;
		lm_dtype dt;
	} table[] = {
		{"float32", LM_FLOAT32}, {"float", LM_FLOAT32}, {"float64", LM_FLOAT64},
		{"double", LM_FLOAT64},  {"int32", LM_INT32},   {"int", LM_INT32},
		{"int64", LM_INT64},     {"long", LM_INT64},    {"uint8", LM_UINT8},
		{"byte", LM_UINT8},
	};
	if (!name) return lmi_fail(LM_ERR_ARG, "dtype: name is NULL");
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(name, table[i].name) == 0) {
			*out = table[i].dt;
			return LM_OK;
		}
	return lmi_fail(LM_ERR_ARG,
	                "dtype: unknown dtype '%s' (expected float32, float64, int32, int64 or uint8)",
	                name);
}

/* The larger rank wins. */
lm_dtype lm_promote_types(lm_dtype a, lm_dtype b)
{
	const lm_dtype_traits *ta = lm_dtype_traits_of(a), *tb = lm_dtype_traits_of(b);
	return (ta ? ta->rank : -1) >= (tb ? tb->rank : -1) ? a : b;
}

