/*
 * scalar_math.h — the formulas of one element, written once for every device: the CPU's loops
 * (cpu/ewise_loops.h, cpu/divmod.c, cpu/nn.c, cpu/sort.c, cpu/train.c) and the CUDA module's
 * kernels (cuda/tensor.cu, cuda/ewise_int.cu, cuda/nn.cu, cuda/sort.cu) call these, so the two
 * devices cannot drift apart (philox.h does the same for random numbers; kernels/body/ for the
 * course's kernels). Plain C that nvcc also compiles: LMI_HD marks the functions host and device
 * there. No globals, no errors: a caller checks what it must (an integer divisor of 0) first.
 *
 * Names: a function over floats exists for float and double, named as libm names them in C
 * (lmi_sigmoidf, lmi_sigmoid); C++ (nvcc) overloads one name, so a template over T calls
 * lmi_sigmoid(v) for both. Integer functions carry the type (lmi_ipow_i32, _i64, _u8) in C and
 * overload lmi_ipow in C++ the same way.
 *
 * What each computes is the contract the op table's float64 references check (tests/optable_*.c):
 * relu and sign keep a NaN, maximum / minimum propagate one, round is half to even, a // b is
 * CPython's exact floor division, a % b takes the divisor's sign, integer arithmetic wraps (it
 * runs in the unsigned twin: no overflow is undefined) and INT_MIN // -1 wraps too; GELU and its
 * derivative are computed in double; the optimizers' updates are torch.optim 1.13's arithmetic in
 * the parameter's dtype. Read next: cpu/ewise_loops.h.
 */
#ifndef LUMEN_BACKEND_SCALAR_MATH_H
#define LUMEN_BACKEND_SCALAR_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/hd.h"

#ifdef __cplusplus
#define LMI_SM(name, sfx) name /* one overloaded name */
#else
#define LMI_SM(name, sfx) name##sfx
#endif

/* ---------------------------------------------------------------- floats */

/* The optimizers' constants in the parameter's dtype (a device entry fills them once per step). */
typedef struct lmi_adam_kf {
	float b1, b2, c1, c2, wd, decay, step_size, bc2s, eps;
	int decoupled, ams;
} lmi_adam_kf;
typedef struct lmi_adam_kd {
	double b1, b2, c1, c2, wd, decay, step_size, bc2s, eps;
	int decoupled, ams;
} lmi_adam_kd;
typedef struct lmi_rmsprop_kf {
	float alpha, c, wd, lr, eps, mo;
} lmi_rmsprop_kf;
typedef struct lmi_rmsprop_kd {
	double alpha, c, wd, lr, eps, mo;
} lmi_rmsprop_kd;

/* T the type, S its C suffix, F libm's suffix for it, AK and RK its optimizer constants. */
#define LMI_FLOAT_MATH(T, S, F, AK, RK)                                                                  \
	LMI_HD T LMI_SM(lmi_sigmoid, S)(T v) { return (T)1 / ((T)1 + exp##F(-v)); }                  \
	LMI_HD T LMI_SM(lmi_relu, S)(T v) { return v < (T)0 ? (T)0 : v; }                            \
	LMI_HD T LMI_SM(lmi_sign, S)(T v) { return v != v ? v : (T)((v > 0) - (v < 0)); }            \
	LMI_HD T LMI_SM(lmi_round_even, S)(T v) { return nearbyint##F(v); }                          \
	LMI_HD T LMI_SM(lmi_rsqrt, S)(T v) { return (T)1 / sqrt##F(v); }                             \
	LMI_HD T LMI_SM(lmi_clamp, S)(T v, T lo, T hi) { return v < lo ? lo : (v > hi ? hi : v); }  \
	LMI_HD T LMI_SM(lmi_leaky_relu, S)(T v, T slope) { return v > (T)0 ? v : v * slope; }       \
	/* maximum / minimum: a NaN on either side gives NaN (a + b) */                              \
	LMI_HD T LMI_SM(lmi_maximum, S)(T a, T b)                                                    \
	{                                                                                            \
		return (a != a || b != b) ? a + b : (a > b ? a : b);                                     \
	}                                                                                            \
	LMI_HD T LMI_SM(lmi_minimum, S)(T a, T b)                                                    \
	{                                                                                            \
		return (a != a || b != b) ? a + b : (a < b ? a : b);                                     \
	}                                                                                            \
	/* One SGD step of weight w with gradient g (negated for maximize); *b, the momentum buffer's \
	 * entry, is read and written only when mo != 0. */                                          \
	LMI_HD T LMI_SM(lmi_sgd_update, S)(T w, T g, T *b, T lr, T wd, T mo, T damp, int nesterov,   \
	                                   int first)                                                \
	{                                                                                            \
		T d = g;                                                                                 \
		if (wd != 0) d = d + wd * w;                                                             \
		if (mo != 0) {                                                                           \
			T m = first ? d : *b * mo + d * damp;                                                \
			*b = m;                                                                              \
			d = nesterov ? d + m * mo : m;                                                       \
		}                                                                                        \
		return w - lr * d;                                                                       \
	}                                                                                            \
	/* One Adam / AdamW step: m1, m2 the moments, mx the running max of m2 (AMSGrad) or unused. */ \
	LMI_HD T LMI_SM(lmi_adam_update, S)(T w, T g, T *m1, T *m2, T *mx,                           \
	                                    const AK *k)                                                \
	{                                                                                            \
		if (k->wd != 0) {                                                                        \
			if (k->decoupled)                                                                    \
				w = w * k->decay;                                                                \
			else                                                                                 \
				g = g + k->wd * w;                                                               \
		}                                                                                        \
		T a = *m1 * k->b1 + g * k->c1;                                                           \
		T b = *m2 * k->b2 + k->c2 * g * g; /* addcmul: value * t1 * t2 */                        \
		*m1 = a;                                                                                 \
		*m2 = b;                                                                                 \
		if (k->ams) {                                                                            \
			T mv = *mx > b ? *mx : b;                                                            \
			*mx = mv;                                                                            \
			b = mv;                                                                              \
		}                                                                                        \
		T denom = sqrt##F(b) / k->bc2s + k->eps;                                                 \
		return w - k->step_size * (a / denom);                                                   \
	}                                                                                            \
	/* One RMSprop step: sa the square average; ga the gradient average (centered) and bf the     \
	 * momentum buffer, each NULL when unused. */                                                \
	LMI_HD T LMI_SM(lmi_rmsprop_update, S)(T w, T g, T *sa, T *ga, T *bf,                        \
	                                       const RK *k)                                            \
	{                                                                                            \
		if (k->wd != 0) g = g + k->wd * w;                                                       \
		T s2 = *sa * k->alpha + k->c * g * g;                                                    \
		*sa = s2;                                                                                \
		T avg;                                                                                   \
		if (ga) {                                                                                \
			T a = *ga * k->alpha + g * k->c;                                                     \
			*ga = a;                                                                             \
			avg = sqrt##F(s2 + a * a * (T)-1);                                                   \
		} else {                                                                                 \
			avg = sqrt##F(s2);                                                                   \
		}                                                                                        \
		avg = avg + k->eps;                                                                      \
		if (bf) {                                                                                \
			T m = *bf * k->mo + g / avg;                                                         \
			*bf = m;                                                                             \
			return w - k->lr * m;                                                                \
		}                                                                                        \
		return w - k->lr * (g / avg);                                                            \
	}

LMI_FLOAT_MATH(float, f, f, lmi_adam_kf, lmi_rmsprop_kf)
LMI_FLOAT_MATH(double, , , lmi_adam_kd, lmi_rmsprop_kd)

/* a // b, CPython's algorithm: (a - fmod(a, b)) / b corrected to the floor and rounded to the
 * nearest integer, exact where floor(a / b) can land one off (1 // 0.1 is 9). */
LMI_HD double lmi_floor_div(double a, double b)
{
	if (b == 0) return a / b;
	double mod = fmod(a, b), div = (a - mod) / b;
	if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
	if (div == 0) return copysign(0.0, a / b);
	double q = floor(div);
	return div - q > 0.5 ? q + 1 : q;
}

/* a % b with the divisor's sign (a zero keeps fmod's sign, as Lua and PyTorch). */
LMI_HD double lmi_floor_mod(double a, double b)
{
	double m = fmod(a, b);
	if (m != 0 && ((b < 0) != (m < 0))) m += b;
	return m;
}

/* GELU, exact (x Phi(x)) or its tanh approximation (t), in double. */
#define LMI_SQRT_2_PI 0.7978845608028654   /* sqrt(2/pi) */
#define LMI_INV_SQRT_2 0.7071067811865476  /* 1/sqrt(2) */
#define LMI_INV_SQRT_2PI 0.3989422804014327 /* 1/sqrt(2 pi) */

LMI_HD double lmi_gelu(double x, int t)
{
	if (t) return 0.5 * x * (1 + tanh(LMI_SQRT_2_PI * (x + 0.044715 * x * x * x)));
	return 0.5 * x * (1 + erf(x * LMI_INV_SQRT_2));
}

/* d gelu / dx: exact Phi(x) + x phi(x); the tanh form differentiated as written. */
LMI_HD double lmi_gelu_grad(double x, int t)
{
	if (t) {
		double u = LMI_SQRT_2_PI * (x + 0.044715 * x * x * x), th = tanh(u);
		return 0.5 * (1 + th) +
		       0.5 * x * (1 - th * th) * LMI_SQRT_2_PI * (1 + 3 * 0.044715 * x * x);
	}
	return 0.5 * (1 + erf(x * LMI_INV_SQRT_2)) + x * LMI_INV_SQRT_2PI * exp(-0.5 * x * x);
}

/* ---------------------------------------------------------------- sort keys */

/* Unsigned keys whose order is the numeric order: -0 is +0, every NaN the largest (NaN last
 * ascending); integers flip the sign bit. float32 keys widen to double, which keeps the order. */
LMI_HD uint64_t lmi_sort_key_f64(double v)
{
	uint64_t u;
	if (v != v) return UINT64_MAX;
	if (v == 0) v = 0; /* -0 -> +0 */
	memcpy(&u, &v, 8);
	return (u & 0x8000000000000000ull) ? ~u : u | 0x8000000000000000ull;
}
LMI_HD uint32_t lmi_sort_key_f32(float v)
{
	uint32_t u;
	if (v != v) return UINT32_MAX;
	if (v == 0) v = 0;
	memcpy(&u, &v, 4);
	return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}
LMI_HD uint64_t lmi_sort_key_i64(int64_t v) { return (uint64_t)v ^ 0x8000000000000000ull; }
LMI_HD uint32_t lmi_sort_key_i32(int32_t v) { return (uint32_t)v ^ 0x80000000u; }

/* ---------------------------------------------------------------- integers */

/* Sign tests through int64, so that unsigned types give no "always false" warnings. */
LMI_HD int lmi_is_neg(int64_t v) { return v < 0; }
LMI_HD int lmi_sgn(int64_t v) { return (v > 0) - (v < 0); }

/* T the type, UT the unsigned type its arithmetic wraps in, S its suffix, SG 1 when signed. */
#define LMI_INT_MATH(T, UT, S, SG)                                                                 \
	LMI_HD T LMI_SM(lmi_iadd, S)(T a, T b) { return (T)((UT)a + (UT)b); }                        \
	LMI_HD T LMI_SM(lmi_isub, S)(T a, T b) { return (T)((UT)a - (UT)b); }                        \
	LMI_HD T LMI_SM(lmi_imul, S)(T a, T b) { return (T)((UT)a * (UT)b); }                        \
	LMI_HD T LMI_SM(lmi_ineg, S)(T v) { return (T)(0 - (UT)v); }                                 \
	LMI_HD T LMI_SM(lmi_iabs, S)(T v) { return SG && lmi_is_neg(v) ? (T)(0 - (UT)v) : v; }      \
	LMI_HD T LMI_SM(lmi_irelu, S)(T v) { return lmi_is_neg(v) ? (T)0 : v; }                     \
	LMI_HD T LMI_SM(lmi_isign, S)(T v) { return (T)lmi_sgn(v); }                                 \
	/* b ** e by squaring, wrapping; e <= 0 gives 1 */                                           \
	LMI_HD T LMI_SM(lmi_ipow, S)(T b, int64_t e)                                                 \
	{                                                                                            \
		UT r = 1, x = (UT)b;                                                                     \
		while (e > 0) {                                                                          \
			if (e & 1) r *= x;                                                                   \
			x *= x;                                                                              \
			e >>= 1;                                                                             \
		}                                                                                        \
		return (T)r;                                                                             \
	}                                                                                            \
	/* a // b into the result, a % b (the divisor's sign) into *r; b != 0 (the caller's check). \
	 * INT_MIN // -1 wraps, as INT_MIN * -1 does. */                                             \
	LMI_HD T LMI_SM(lmi_idivmod, S)(T a, T b, T *r)                                              \
	{                                                                                            \
		if (!SG) {                                                                               \
			*r = (T)(a % b);                                                                     \
			return (T)(a / b);                                                                   \
		}                                                                                        \
		if (lmi_is_neg(b) && b == (T)-1) {                                                       \
			*r = 0;                                                                              \
			return (T)(0 - (UT)a);                                                               \
		}                                                                                        \
		T q = (T)(a / b), m = (T)(a % b);                                                        \
		if (m != 0 && (lmi_is_neg(m) != lmi_is_neg(b))) q -= 1, m += b;                          \
		*r = m;                                                                                  \
		return q;                                                                                \
	}

LMI_INT_MATH(int32_t, uint32_t, _i32, 1)
LMI_INT_MATH(int64_t, uint64_t, _i64, 1)
LMI_INT_MATH(uint8_t, uint32_t, _u8, 0)

#endif /* LUMEN_BACKEND_SCALAR_MATH_H */
