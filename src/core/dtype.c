/*
 * dtype.c — element types: sizes, names, promotion, and scalar load/store through doubles.
 */
#include <math.h>
#include <string.h>

#include "lmi.h"

static const size_t sizes[LM_DTYPE_COUNT] = {4, 8, 4, 8, 1};
static const char *const names[LM_DTYPE_COUNT] = {"float32", "float64", "int32", "int64", "uint8"};

size_t lm_dtype_size(lm_dtype dt) { return (dt >= 0 && dt < LM_DTYPE_COUNT) ? sizes[dt] : 0; }

const char *lm_dtype_name(lm_dtype dt) { return (dt >= 0 && dt < LM_DTYPE_COUNT) ? names[dt] : "?"; }

bool lm_dtype_is_float(lm_dtype dt) { return dt == LM_FLOAT32 || dt == LM_FLOAT64; }

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

/* Rank for promotion: the larger wins. */
static int rank(lm_dtype dt)
{
	switch (dt) {
	case LM_UINT8: return 0;
	case LM_INT32: return 1;
	case LM_INT64: return 2;
	case LM_FLOAT32: return 3;
	case LM_FLOAT64: return 4;
	default: return -1;
	}
}

lm_dtype lm_promote_types(lm_dtype a, lm_dtype b) { return rank(a) >= rank(b) ? a : b; }

double lmi_load(const void *p, lm_dtype dt)
{
	switch (dt) {
	case LM_FLOAT32: return *(const float *)p;
	case LM_FLOAT64: return *(const double *)p;
	case LM_INT32: return *(const int32_t *)p;
	case LM_INT64: return (double)*(const int64_t *)p;
	case LM_UINT8: return *(const uint8_t *)p;
	default: LM_ASSERT(0 && "bad dtype");
	}
}

/* Float to integer: truncation, then modulo 2^bits (lmi_wrap_u64 says why). */
void lmi_store(void *p, lm_dtype dt, double v)
{
	switch (dt) {
	case LM_FLOAT32: *(float *)p = (float)v; break;
	case LM_FLOAT64: *(double *)p = v; break;
	case LM_INT32: *(int32_t *)p = (int32_t)(uint32_t)lmi_wrap_u64(v); break;
	case LM_INT64: *(int64_t *)p = (int64_t)lmi_wrap_u64(v); break;
	case LM_UINT8: *(uint8_t *)p = (uint8_t)lmi_wrap_u64(v); break;
	default: LM_ASSERT(0 && "bad dtype");
	}
}
