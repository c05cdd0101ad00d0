/*
 * dtype.c — the type table (lm_dtype_traits, include/lumen/core.h): every dtype's name, block and
 * size, whether it holds integers, its range and promotion rank, and its conversions, so that code
 * elsewhere asks the table instead of switching on the dtype. Also dtype names and promotion.
 */
#include <math.h>
#include <string.h>

#include "core/half.h"
#include "core/quant.h"
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
#define WRAP_I8(d) ((int8_t)(uint8_t)lmi_wrap_u64(d))
#define INT_I8(i) ((int8_t)(uint8_t)(uint64_t)(i))
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
PLAIN_TYPE(int8_t, i8, WRAP_I8, INT_I8, EXACT)

/* The 16-bit floats: bits in a uint16_t, converted through float32 (a double or an integer is
 * first rounded to float32, as PyTorch converts them: c10::Half and BFloat16 take a float). */
#define HALF_TYPE(SFX, TO32, FROM32)                                                               \
	static void to_float_##SFX(const void *x, float *y, int64_t n)                             \
	{                                                                                          \
		for (int64_t i = 0; i < n; i++) {                                                      \
			uint16_t h;                                                                        \
			memcpy(&h, (const char *)x + 2 * i, 2);                                            \
			y[i] = TO32(h);                                                                    \
		}                                                                                      \
	}                                                                                          \
	static void from_float_##SFX(const float *x, void *y, int64_t n)                           \
	{                                                                                          \
		for (int64_t i = 0; i < n; i++) {                                                      \
			uint16_t h = FROM32(x[i]);                                                         \
			memcpy((char *)y + 2 * i, &h, 2);                                                  \
		}                                                                                      \
	}                                                                                          \
	static double get_##SFX(const void *p)                                                     \
	{                                                                                          \
		uint16_t h;                                                                            \
		memcpy(&h, p, 2);                                                                      \
		return (double)TO32(h);                                                                \
	}                                                                                          \
	static void set_##SFX(void *p, double d)                                                   \
	{                                                                                          \
		uint16_t h = FROM32((float)d);                                                         \
		memcpy(p, &h, 2);                                                                      \
	}                                                                                          \
	static int64_t get_int_##SFX(const void *p) { return FLOAT_TO_INT(get_##SFX(p)); }         \
	static void set_int_##SFX(void *p, int64_t i)                                              \
	{                                                                                          \
		uint16_t h = FROM32((float)i);                                                         \
		memcpy(p, &h, 2);                                                                      \
	}

HALF_TYPE(f16, lmi_f16_to_f32, lmi_f32_to_f16)
HALF_TYPE(bf16, lmi_bf16_to_f32, lmi_f32_to_bf16)

#define ROW(SFX, NAME, T, IS_INT, SIGNED, RANK, MIN, MAX, AS)                                      \
	{NAME, 1, sizeof(T), IS_INT, SIGNED, RANK, MIN, MAX, AS, to_float_##SFX, from_float_##SFX,    \
	 get_##SFX, set_##SFX, get_int_##SFX, set_int_##SFX}
/* A block type: no element stands alone, so no get / set (the callers refuse block tensors
 * before any element is read); to_float dequantizes, from_float quantizes (quant.c). */
#define BLOCK_ROW(SFX, NAME, BYTES)                                                                 \
	{NAME, LMI_QK, BYTES, false, true, 4, 0, 0, LM_FLOAT32, (void (*)(const void *, float *, int64_t))lmi_dequantize_##SFX, \
	 (void (*)(const float *, void *, int64_t))lmi_quantize_##SFX, NULL, NULL, NULL, NULL}

const lm_dtype_traits lmi_dtypes[LM_DTYPE_COUNT] = {
	[LM_FLOAT32] = ROW(f32, "float32", float, false, true, 4, 0, 0, LM_FLOAT32),
	[LM_FLOAT64] = ROW(f64, "float64", double, false, true, 5, 0, 0, LM_FLOAT64),
	[LM_INT32] = ROW(i32, "int32", int32_t, true, true, 1, INT32_MIN, INT32_MAX, LM_INT32),
	[LM_INT64] = ROW(i64, "int64", int64_t, true, true, 2, INT64_MIN, INT64_MAX, LM_INT64),
	[LM_UINT8] = ROW(u8, "uint8", uint8_t, true, false, 0, 0, UINT8_MAX, LM_UINT8),
	[LM_INT8] = ROW(i8, "int8", int8_t, true, true, 0, INT8_MIN, INT8_MAX, LM_INT32),
	[LM_FLOAT16] = ROW(f16, "float16", uint16_t, false, true, 3, 0, 0, LM_FLOAT32),
	[LM_BFLOAT16] = ROW(bf16, "bfloat16", uint16_t, false, true, 3, 0, 0, LM_FLOAT32),
	[LM_Q8_0] = BLOCK_ROW(q8_0, "q8_0", sizeof(lmi_block_q8_0)),
	[LM_Q4_0] = BLOCK_ROW(q4_0, "q4_0", sizeof(lmi_block_q4_0)),
};

const lm_dtype_traits *lm_dtype_traits_of(lm_dtype dt)
{
	return dt >= 0 && dt < LM_DTYPE_COUNT ? &lmi_dtypes[dt] : NULL;
}

lm_status lmi_block_refuse(const char *fname, lm_dtype dt)
{
	const lm_dtype_traits *t = &lmi_dtypes[dt];
	return lmi_fail(LM_ERR_DTYPE, "%s: %s is a block type (%lld values in each %zu-byte block, no element "
	                "stands alone): only conversion (x:float(), x:to(...)), a matmul or linear with it as "
	                "the weight, lm.quant and files take it; convert it with x:float() first", fname,
	                t->name, (long long)t->block_size, t->type_size);
}

bool lm_dtype_is_block(lm_dtype dt) { return dt >= 0 && dt < LM_DTYPE_COUNT && lmi_dtypes[dt].block_size > 1; }

size_t lm_dtype_size(lm_dtype dt)
{
	if (dt < 0 || dt >= LM_DTYPE_COUNT) return 0;
	const lm_dtype_traits *t = &lmi_dtypes[dt];
	/* called on every op: no division for the types whose block is one element */
	return t->block_size == 1 ? t->type_size : t->type_size / (size_t)t->block_size;
}

const char *lm_dtype_name(lm_dtype dt) { return dt >= 0 && dt < LM_DTYPE_COUNT ? lmi_dtypes[dt].name : "?"; }

bool lm_dtype_is_float(lm_dtype dt) { return dt >= 0 && dt < LM_DTYPE_COUNT && !lmi_dtypes[dt].is_int; }

const char *lm_device_name(lm_device d) { return d == LM_CUDA ? "cuda" : d == LM_OPENCL ? "opencl" : "cpu"; }

lm_status lm_dtype_from_name(const char *name, lm_dtype *out)
{
	static const struct {
		const char *name;
		lm_dtype dt;
	} table[] = {
		{"float32", LM_FLOAT32}, {"float", LM_FLOAT32}, {"float64", LM_FLOAT64},
		{"double", LM_FLOAT64},  {"int32", LM_INT32},   {"int", LM_INT32},
		{"int64", LM_INT64},     {"long", LM_INT64},    {"uint8", LM_UINT8},
		{"byte", LM_UINT8},      {"int8", LM_INT8},     {"char", LM_INT8},
		{"float16", LM_FLOAT16}, {"half", LM_FLOAT16},  {"bfloat16", LM_BFLOAT16},
		{"q8_0", LM_Q8_0},       {"q4_0", LM_Q4_0},
	};
	if (!name) return lmi_fail(LM_ERR_ARG, "dtype: name is NULL");
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(name, table[i].name) == 0) {
			*out = table[i].dt;
			return LM_OK;
		}
	return lmi_fail(LM_ERR_ARG,
	                "dtype: unknown dtype '%s' (expected float32, float64, float16, bfloat16, int64, "
	                "int32, int8, uint8, q8_0 or q4_0)",
	                name);
}

/* The larger rank wins; two different types of one rank meet in the next one up that holds both
 * (float16 and bfloat16: float32; int8 and uint8: int32). A block type counts as float32. */
lm_dtype lm_promote_types(lm_dtype a, lm_dtype b)
{
	const lm_dtype_traits *ta = lm_dtype_traits_of(a), *tb = lm_dtype_traits_of(b);
	if (ta && ta->block_size > 1) a = LM_FLOAT32, ta = &lmi_dtypes[a];
	if (tb && tb->block_size > 1) b = LM_FLOAT32, tb = &lmi_dtypes[b];
	int ra = ta ? ta->rank : -1, rb = tb ? tb->rank : -1;
	if (ra == rb && a != b) return ta->is_int ? LM_INT32 : LM_FLOAT32;
	return ra >= rb ? a : b;
}

