/*
 * divmod.c — the CPU loops of a // b (floor division) and a % b (the remainder with the divisor's
 * sign), through the core's strided iterator like the other elementwise loops (lmi_cpu_binary
 * sends LM_FLOOR_DIVIDE and LM_REMAINDER here).
 *
 * Floats: the remainder is fmod corrected to the divisor's sign; the quotient is (a - mod) / b
 * rounded to the nearest integer (exact, unlike floor(a / b), whose rounding can land one off:
 * CPython's algorithm). Integers: C's truncating / and % corrected the same way; INT_MIN // -1
 * wraps (as INT_MIN * -1 does) instead of trapping; a zero divisor is counted and reported.
 */
#include <math.h>
#include <stdatomic.h>

#include "backend/cpu/cpu.h"
#include "backend/scalar_math.h"

typedef struct divmod_ctx {
	int rem;         /* 1: remainder, 0: floor division */
	atomic_int zero; /* an integer division by 0 happened */
} divmod_ctx;

#define FLOAT_DIVMOD(T)                                                                             \
	static void divmod_##T(void *vctx, char **p, const int64_t *s, int64_t n)                       \
	{                                                                                           \
		const divmod_ctx *c = vctx;                                                             \
		for (int64_t i = 0; i < n; i++) {                                                       \
			double a = *(const T *)(p[1] + i * s[1]), b = *(const T *)(p[2] + i * s[2]);       \
			*(T *)(p[0] + i * s[0]) = (T)(c->rem ? lmi_floor_mod(a, b) : lmi_floor_div(a, b));        \
		}                                                                                       \
	}
FLOAT_DIVMOD(float)
FLOAT_DIVMOD(double)

/* T the type, S its suffix in scalar_math.h (whose lmi_idivmod corrects C's truncation). */
#define INT_DIVMOD(T, S)                                                                            \
	static void divmod_##T(void *vctx, char **p, const int64_t *s, int64_t n)                       \
	{                                                                                           \
		divmod_ctx *c = vctx;                                                                   \
		for (int64_t i = 0; i < n; i++) {                                                       \
			T a = *(const T *)(p[1] + i * s[1]), b = *(const T *)(p[2] + i * s[2]), q, r;      \
			if (b == 0) {                                                                       \
				atomic_store_explicit(&c->zero, 1, memory_order_relaxed);                       \
				q = r = 0;                                                                      \
			} else {                                                                            \
				q = lmi_idivmod##S(a, b, &r);                                                   \
			}                                                                                   \
			*(T *)(p[0] + i * s[0]) = c->rem ? r : q;                                           \
		}                                                                                       \
	}
INT_DIVMOD(int32_t, _i32)
INT_DIVMOD(int64_t, _i64)
INT_DIVMOD(uint8_t, _u8)

static const lmi_iter_kernel divmod_kernels[LM_DTYPE_COUNT] = {
	divmod_float, divmod_double, divmod_int32_t, divmod_int64_t, divmod_uint8_t,
};

lm_status lmi_cpu_divmod(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b)
{
	divmod_ctx c = {.rem = op == LM_REMAINDER};
	atomic_init(&c.zero, 0);
	lmi_iter it;
	const lm_tensor *ops[3] = {out, a, b};
	lmi_iter_init(&it, 3, ops, out->ndim, out->shape);
	lm_status s = lmi_iter_run(&it, divmod_kernels[out->dtype], &c);
	if (!s && atomic_load(&c.zero))
		return lmi_fail(LM_ERR_ARG, "binary: integer division by zero (the %s divisor holds a 0)",
		                lm_dtype_name(b->dtype));
	return s;
}
