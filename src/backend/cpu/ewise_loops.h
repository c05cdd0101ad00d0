/*
 * ewise_loops.h — the 1-D kernels of the elementwise ops (unary math, binary arithmetic and
 * comparisons, where, a + alpha * b), included by each simd_<isa>.c so that they are compiled
 * once per instruction set (see simd.h). Not a header to include anywhere else.
 *
 * Each kernel switches on the op once per row, then runs a loop specialised for the common
 * layouts: all operands dense, one operand broadcast (stride 0), or general strides. Dense float
 * loops vectorise (LMI_OMP_SIMD, nothing on the scalar path); exp/log/sin/cos/tanh call glibc's
 * vector math (libmvec) through the `declare simd` declarations below. Integer arithmetic wraps
 * (done in unsigned types: signed overflow would be undefined). a + alpha*b is written as such
 * rather than as an fma, so that float results match the two-op expression a + (alpha * b) bit for
 * bit. Read next: ewise.c, axpy.c (the dispatchers).
 */

/* glibc provides SIMD variants of these in libmvec; declaring them lets the compiler use them
 * (not on the scalar path, which calls the plain functions). */
#ifndef LMI_SIMD_SCALAR
#pragma omp declare simd notinbranch
extern float expf(float);
#pragma omp declare simd notinbranch
extern float logf(float);
#pragma omp declare simd notinbranch
extern float sinf(float);
#pragma omp declare simd notinbranch
extern float cosf(float);
#pragma omp declare simd notinbranch
extern float tanhf(float);
#pragma omp declare simd notinbranch
extern double exp(double);
#pragma omp declare simd notinbranch
extern double log(double);
#pragma omp declare simd notinbranch
extern double sin(double);
#pragma omp declare simd notinbranch
extern double cos(double);
#pragma omp declare simd notinbranch
extern double tanh(double);
#endif

/* The formulas themselves (sigmoid, sign, clamp, floor division, wrapping integer arithmetic...)
 * are the CUDA module's too; included after the declarations above, so that they vectorise. */
#include "backend/scalar_math.h"

/* ---------------------------------------------------------------- loop shapes */

/* out = EXPR(v), v the input element. */
#define UNARY_LOOP(T, EXPR)                                                                         \
	do {                                                                                        \
		if (s[0] == (int64_t)sizeof(T) && s[1] == (int64_t)sizeof(T)) {                        \
			T *restrict o_ = (T *)p[0];                                                         \
			const T *restrict x_ = (const T *)p[1];                                             \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++)                                 \
			{                                                                                   \
				T v = x_[i];                                                                    \
				o_[i] = (EXPR);                                                                 \
			}                                                                                   \
		} else if (s[0] == (int64_t)sizeof(T) && p[0] == p[1]) { /* in place */                  \
			T *o_ = (T *)p[0];                                                                  \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++)                                 \
			{                                                                                   \
				T v = o_[i];                                                                    \
				o_[i] = (EXPR);                                                                 \
			}                                                                                   \
		} else {                                                                                \
			for (int64_t i = 0; i < n; i++) {                                                   \
				T v = *(const T *)(p[1] + i * s[1]);                                            \
				*(T *)(p[0] + i * s[0]) = (EXPR);                                               \
			}                                                                                   \
		}                                                                                       \
	} while (0)

/* out = EXPR(a, b). OT: output type, T: input type. */
#define BINARY_LOOP(OT, T, EXPR)                                                                    \
	do {                                                                                        \
		const int64_t os_ = (int64_t)sizeof(OT), is_ = (int64_t)sizeof(T);                      \
		if (s[0] == os_ && s[1] == is_ && s[2] == is_) {                                        \
			OT *o_ = (OT *)p[0];                                                                \
			const T *a_ = (const T *)p[1], *b_ = (const T *)p[2];                               \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++)                                 \
			{                                                                                   \
				T a = a_[i], b = b_[i];                                                         \
				o_[i] = (EXPR);                                                                 \
			}                                                                                   \
		} else if (s[0] == os_ && s[1] == is_ && s[2] == 0) {                                   \
			OT *o_ = (OT *)p[0];                                                                \
			const T *a_ = (const T *)p[1];                                                      \
			const T b = *(const T *)p[2];                                                       \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++)                                 \
			{                                                                                   \
				T a = a_[i];                                                                    \
				o_[i] = (EXPR);                                                                 \
			}                                                                                   \
		} else if (s[0] == os_ && s[1] == 0 && s[2] == is_) {                                   \
			OT *o_ = (OT *)p[0];                                                                \
			const T a = *(const T *)p[1];                                                       \
			const T *b_ = (const T *)p[2];                                                      \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++)                                 \
			{                                                                                   \
				T b = b_[i];                                                                    \
				o_[i] = (EXPR);                                                                 \
			}                                                                                   \
		} else {                                                                                \
			for (int64_t i = 0; i < n; i++) {                                                   \
				T a = *(const T *)(p[1] + i * s[1]), b = *(const T *)(p[2] + i * s[2]);          \
				*(OT *)(p[0] + i * s[0]) = (EXPR);                                              \
			}                                                                                   \
		}                                                                                       \
	} while (0)

/* ---------------------------------------------------------------- unary */

#define FLOAT_UNARY(NAME, T, SFX, ABS, FLOOR, CEIL, SQRT, POW)                                     \
	static void NAME(void *vctx, char **p, const int64_t *s, int64_t n)                             \
	{                                                                                           \
		const lmi_unary_ctx *c = vctx;                                                              \
		const T p0 = (T)c->p0, p1 = (T)c->p1;                                                   \
		switch (c->op) {                                                                        \
		case LM_EXP: UNARY_LOOP(T, exp##SFX(v)); break;                                         \
		case LM_LOG: UNARY_LOOP(T, log##SFX(v)); break;                                         \
		case LM_SQRT: UNARY_LOOP(T, SQRT(v)); break;                                            \
		case LM_ABS: UNARY_LOOP(T, ABS(v)); break;                                              \
		case LM_NEG: UNARY_LOOP(T, -v); break;                                                  \
		case LM_SIN: UNARY_LOOP(T, sin##SFX(v)); break;                                         \
		case LM_COS: UNARY_LOOP(T, cos##SFX(v)); break;                                         \
		case LM_TANH: UNARY_LOOP(T, tanh##SFX(v)); break;                                       \
		case LM_SIGMOID: UNARY_LOOP(T, lmi_sigmoid##SFX(v)); break;                    \
		case LM_RELU: UNARY_LOOP(T, lmi_relu##SFX(v)); break;                                \
		case LM_SIGN: UNARY_LOOP(T, lmi_sign##SFX(v)); break;                \
		case LM_FLOOR: UNARY_LOOP(T, FLOOR(v)); break;                                          \
		case LM_CEIL: UNARY_LOOP(T, CEIL(v)); break;                                            \
		case LM_ROUND: UNARY_LOOP(T, lmi_round_even##SFX(v)); break;                                          \
		case LM_RSQRT: UNARY_LOOP(T, lmi_rsqrt##SFX(v)); break;                                    \
		case LM_RECIPROCAL: UNARY_LOOP(T, (T)1 / v); break;                                     \
		case LM_SQUARE: UNARY_LOOP(T, v * v); break;                                            \
		case LMI_CLAMP: UNARY_LOOP(T, lmi_clamp##SFX(v, p0, p1)); break;                  \
		case LMI_LEAKY_RELU: UNARY_LOOP(T, lmi_leaky_relu##SFX(v, p0)); break;                       \
		case LMI_POW_SCALAR:                                                                    \
			if (p0 == (T)2)                                                                     \
				UNARY_LOOP(T, v * v);                                                           \
			else if (p0 == (T)3)                                                                \
				UNARY_LOOP(T, v * v * v);                                                       \
			else if (p0 == (T)1)                                                                \
				UNARY_LOOP(T, v);                                                               \
			else if (p0 == (T)0.5)                                                              \
				UNARY_LOOP(T, SQRT(v));                                                         \
			else if (p0 == (T)-1)                                                               \
				UNARY_LOOP(T, (T)1 / v);                                                        \
			else                                                                                \
				UNARY_LOOP(T, POW(v, p0));                                                      \
			break;                                                                              \
		case LMI_ADD_SCALED: UNARY_LOOP(T, v * p0 + p1); break;                                 \
		case LMI_ADD_S: UNARY_LOOP(T, v + p0); break;                                           \
		case LMI_MUL_S: UNARY_LOOP(T, v * p0); break;                                           \
		case LMI_DIV_S: UNARY_LOOP(T, v / p0); break;                                           \
		default: LM_ASSERT(0 && "unary op");                                                    \
		}                                                                                       \
	}

FLOAT_UNARY(unary_f32, float, f, fabsf, floorf, ceilf, sqrtf, powf)
FLOAT_UNARY(unary_f64, double, , fabs, floor, ceil, sqrt, pow)

#define INT_UNARY(NAME, T, S)                                                                      \
	static void NAME(void *vctx, char **p, const int64_t *s, int64_t n)                             \
	{                                                                                           \
		const lmi_unary_ctx *c = vctx;                                                              \
		switch (c->op) {                                                                        \
		case LM_ABS: UNARY_LOOP(T, lmi_iabs##S(v)); break;                      \
		case LM_NEG: UNARY_LOOP(T, lmi_ineg##S(v)); break;                                      \
		case LM_RELU: UNARY_LOOP(T, lmi_irelu##S(v)); break;                               \
		case LM_SIGN: UNARY_LOOP(T, lmi_isign##S(v)); break;                                          \
		case LM_FLOOR:                                                                          \
		case LM_CEIL:                                                                           \
		case LM_ROUND: UNARY_LOOP(T, v); break;                                                 \
		case LM_SQUARE: UNARY_LOOP(T, lmi_imul##S(v, v)); break;                               \
		case LMI_CLAMP: {                                                                       \
			/* bounds already clipped to T's range by the dispatcher */                         \
			const T lo = (T)c->p0, hi = (T)c->p1;                                               \
			UNARY_LOOP(T, v < lo ? lo : (v > hi ? hi : v));                                     \
			break;                                                                              \
		}                                                                                       \
		case LMI_POW_SCALAR: {                                                                  \
			const int64_t e = (int64_t)c->p0;                                                   \
			UNARY_LOOP(T, lmi_ipow##S(v, e));                                                      \
			break;                                                                              \
		}                                                                                       \
		default: LM_ASSERT(0 && "integer unary op");                                            \
		}                                                                                       \
	}

INT_UNARY(unary_i32, int32_t, _i32)
INT_UNARY(unary_i64, int64_t, _i64)
INT_UNARY(unary_u8, uint8_t, _u8)

/* ---------------------------------------------------------------- binary */

/* the comparisons, into uint8, for every T */
#define COMPARE_CASES(T)                                                                            \
	case LM_EQ: BINARY_LOOP(uint8_t, T, a == b); break;                                         \
	case LM_NE: BINARY_LOOP(uint8_t, T, a != b); break;                                         \
	case LM_LT: BINARY_LOOP(uint8_t, T, a < b); break;                                          \
	case LM_LE: BINARY_LOOP(uint8_t, T, a <= b); break;                                         \
	case LM_GT: BINARY_LOOP(uint8_t, T, a > b); break;                                          \
	case LM_GE: BINARY_LOOP(uint8_t, T, a >= b); break;

#define FLOAT_BINARY(NAME, T, S, POW)                                                                  \
	static void NAME(void *vctx, char **p, const int64_t *s, int64_t n)                             \
	{                                                                                           \
		switch (*(const int *)vctx) {                                                           \
		case LM_ADD: BINARY_LOOP(T, T, a + b); break;                                           \
		case LM_SUB: BINARY_LOOP(T, T, a - b); break;                                           \
		case LM_MUL: BINARY_LOOP(T, T, a * b); break;                                           \
		case LM_DIV: BINARY_LOOP(T, T, a / b); break;                                           \
		case LM_POW: BINARY_LOOP(T, T, POW(a, b)); break;                                       \
		case LM_MAXIMUM: BINARY_LOOP(T, T, lmi_maximum##S(a, b)); break;                                 \
		case LM_MINIMUM: BINARY_LOOP(T, T, lmi_minimum##S(a, b)); break;                                 \
		COMPARE_CASES(T)                                                                        \
		default: LM_ASSERT(0 && "binary op");                                                   \
		}                                                                                       \
	}

FLOAT_BINARY(binary_f32, float, f, powf)
FLOAT_BINARY(binary_f64, double, , pow)

#define INT_BINARY(NAME, T, S)                                                                      \
	static void NAME(void *vctx, char **p, const int64_t *s, int64_t n)                             \
	{                                                                                           \
		switch (*(const int *)vctx) {                                                           \
		case LM_ADD: BINARY_LOOP(T, T, lmi_iadd##S(a, b)); break;                              \
		case LM_SUB: BINARY_LOOP(T, T, lmi_isub##S(a, b)); break;                              \
		case LM_MUL: BINARY_LOOP(T, T, lmi_imul##S(a, b)); break;                              \
		case LM_POW: BINARY_LOOP(T, T, lmi_ipow##S(a, (int64_t)b)); break;                         \
		case LM_MAXIMUM: BINARY_LOOP(T, T, a > b ? a : b); break;                               \
		case LM_MINIMUM: BINARY_LOOP(T, T, a < b ? a : b); break;                               \
		COMPARE_CASES(T)                                                                        \
		default: LM_ASSERT(0 && "integer binary op");                                           \
		}                                                                                       \
	}

INT_BINARY(binary_i32, int32_t, _i32)
INT_BINARY(binary_i64, int64_t, _i64)
INT_BINARY(binary_u8, uint8_t, _u8)

/* ---------------------------------------------------------------- where */

#define WHERE_KERNEL(NAME, T)                                                                       \
	static void NAME(void *ctx, char **p, const int64_t *s, int64_t n)                              \
	{                                                                                           \
		(void)ctx;                                                                              \
		if (s[0] == (int64_t)sizeof(T) && s[1] == 1 && s[2] == (int64_t)sizeof(T) &&            \
		    s[3] == (int64_t)sizeof(T)) {                                                       \
			T *o = (T *)p[0];                                                                   \
			const uint8_t *c = (const uint8_t *)p[1];                                           \
			const T *a = (const T *)p[2], *b = (const T *)p[3];                                 \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b[i];      \
			return;                                                                             \
		}                                                                                       \
		if (s[0] == (int64_t)sizeof(T) && s[1] == 1 && s[2] == (int64_t)sizeof(T) && s[3] == 0) { \
			T *o = (T *)p[0]; /* where(c, a, scalar): the masks of relu, clamp, ... */          \
			const uint8_t *c = (const uint8_t *)p[1];                                           \
			const T *a = (const T *)p[2], b = *(const T *)p[3];                                 \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a[i] : b;         \
			return;                                                                             \
		}                                                                                       \
		if (s[0] == (int64_t)sizeof(T) && s[1] == 1 && s[2] == 0 && s[3] == (int64_t)sizeof(T)) { \
			T *o = (T *)p[0];                                                                   \
			const uint8_t *c = (const uint8_t *)p[1];                                           \
			const T a = *(const T *)p[2], *b = (const T *)p[3];                                 \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) o[i] = c[i] ? a : b[i];         \
			return;                                                                             \
		}                                                                                       \
		for (int64_t i = 0; i < n; i++)                                                         \
			*(T *)(p[0] + i * s[0]) = *(const uint8_t *)(p[1] + i * s[1])                       \
			                              ? *(const T *)(p[2] + i * s[2])                       \
			                              : *(const T *)(p[3] + i * s[3]);                      \
	}
WHERE_KERNEL(where_f32, float)
WHERE_KERNEL(where_f64, double)
WHERE_KERNEL(where_i32, int32_t)
WHERE_KERNEL(where_i64, int64_t)
WHERE_KERNEL(where_u8, uint8_t)

/* ---------------------------------------------------------------- a + alpha * b */

#define AXPY_KERNEL(NAME, T, CT, ALPHA, EXPR)                                                           \
	static void NAME(void *vctx, char **p, const int64_t *s, int64_t n)                             \
	{                                                                                           \
		const lmi_axpy_ctx *c_ = vctx;                                                              \
		const CT al = (CT)(ALPHA);                                                              \
		const int64_t es = (int64_t)sizeof(T);                                                  \
		if (s[0] == es && s[1] == es && s[2] == es) {                                           \
			T *o = (T *)p[0];                                                                   \
			const T *a = (const T *)p[1], *b = (const T *)p[2];                                 \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) o[i] = EXPR(a[i], b[i]);        \
		} else if (s[0] == es && s[1] == es && s[2] == 0) {                                     \
			T *o = (T *)p[0];                                                                   \
			const T *a = (const T *)p[1], bv = *(const T *)p[2];                                \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) o[i] = EXPR(a[i], bv);          \
		} else if (s[0] == es && s[1] == 0 && s[2] == es) {                                     \
			T *o = (T *)p[0];                                                                   \
			const T av = *(const T *)p[1], *b = (const T *)p[2];                                \
			LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) o[i] = EXPR(av, b[i]);          \
		} else {                                                                                \
			for (int64_t i = 0; i < n; i++)                                                     \
				*(T *)(p[0] + i * s[0]) =                                                       \
					EXPR(*(const T *)(p[1] + i * s[1]), *(const T *)(p[2] + i * s[2]));         \
		}                                                                                       \
	}

#define FAXPY(x, y) ((x) + al * (y))
#define IAXPY32(x, y) ((int32_t)((uint32_t)(x) + al * (uint32_t)(y)))
#define IAXPY64(x, y) ((int64_t)((uint64_t)(x) + al * (uint64_t)(y)))
#define IAXPY8(x, y) ((uint8_t)((uint32_t)(x) + al * (uint32_t)(y)))

/* integer alpha as the wrapped unsigned factor (alpha is integral, checked by the op) */
AXPY_KERNEL(axpy_f32, float, float, c_->f, FAXPY)
AXPY_KERNEL(axpy_f64, double, double, c_->f, FAXPY)
AXPY_KERNEL(axpy_i32, int32_t, uint32_t, (uint64_t)c_->i, IAXPY32)
AXPY_KERNEL(axpy_i64, int64_t, uint64_t, (uint64_t)c_->i, IAXPY64)
AXPY_KERNEL(axpy_u8, uint8_t, uint32_t, (uint64_t)c_->i, IAXPY8)
