/*
 * unary.c — elementwise math of one tensor: dtype rules, in-place variants, recording.
 *
 * Floating functions (exp, log, sqrt, sin, cos, tanh, sigmoid, rsqrt, reciprocal) of integer
 * tensors compute in float32; abs, neg, sign, relu, floor, ceil, round, square and clamp keep the
 * dtype. The backward rule lives with the forward (lmi_bw_unary: every row of oplist.h from exp to
 * pow_scalar names it). Read next: binary.c.
 */
#include <math.h>

#include "ops/rule.h"
#include "ops.h"

static const char *const unop_names[LM_UNOP_COUNT] = {
	"exp", "log", "sqrt", "abs", "neg", "sin", "cos", "tanh", "sigmoid", "relu",
	"sign", "floor", "ceil", "round", "rsqrt", "reciprocal", "square",
};

const char *lm_unop_name(lm_unop op)
{
	return (op >= 0 && op < LM_UNOP_COUNT) ? unop_names[op] : "?";
}

static bool is_float_fn(int op)
{
	switch (op) {
	case LM_EXP:
	case LM_LOG:
	case LM_SQRT:
	case LM_SIN:
	case LM_COS:
	case LM_TANH:
	case LM_SIGMOID:
	case LM_RSQRT:
	case LM_RECIPROCAL: return true;
	default: return false;
	}
}

/* ---------------------------------------------------------------- backward rules */

/* The unary slot's loop for op: an lm_unop, or one of the parametrised loops (backend.h). */
static int unary_code(lmi_op op)
{
	switch (op) {
	case LMI_OP_CLAMP: return LMI_CLAMP;
	case LMI_OP_LEAKY_RELU: return LMI_LEAKY_RELU;
	case LMI_OP_POW_SCALAR: return LMI_POW_SCALAR;
	default: return (int)(op - LMI_OP_EXP);
	}
}

/*
 * gin = g * d(out)/dx, with x = saved[0] and out = saved[1] (both in the result dtype). Where the
 * derivative does not exist, the rule picks PyTorch's value: abs and relu give 0 at x = 0, clamp
 * passes the gradient at x equal to a bound, leaky_relu uses the slope at 0, and sign, floor, ceil
 * and round (piecewise constant) give zeros.
 */
lm_status lmi_bw_unary(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *x, *y;
	lm_status s;
	if ((s = lmi_node_saved(n, 0, &x)) || (s = lmi_node_saved(n, 1, &y))) return s;
	lmi_scope sc = {0};
	lm_tensor *a, *b, *c, *r = NULL;
	double p0 = n->op == LMI_OP_CLAMP ? n->p.clamp.min : n->op == LMI_OP_LEAKY_RELU ? n->p.leaky_relu.negative_slope
	            : n->op == LMI_OP_POW_SCALAR ? n->p.pow_scalar.exponent : 0;
	double p1 = n->op == LMI_OP_CLAMP ? n->p.clamp.max : 0;
	switch (unary_code(n->op)) {
	case LM_EXP: /* d exp(x) = exp(x) = out */
		r = lm_mul(g, y);
		break;
	case LM_LOG: /* d log(x) = 1 / x */
		r = lm_div(g, x);
		break;
	case LM_SQRT: /* d sqrt(x) = 1 / (2 sqrt(x)) = 1 / (2 out) */
		RULE_T(&sc, a, lm_binary_scalar(LM_MUL, y, 2));
		r = lm_div(g, a);
		break;
	case LM_ABS: /* d |x| = sign(x) (0 at 0) */
		RULE_T(&sc, a, lm_sign(x));
		r = lm_mul(g, a);
		break;
	case LM_NEG: /* d (-x) = -1 */
		r = lm_neg(g);
		break;
	case LM_SIN: /* d sin(x) = cos(x) */
		RULE_T(&sc, a, lm_cos(x));
		r = lm_mul(g, a);
		break;
	case LM_COS: /* d cos(x) = -sin(x) */
		RULE_T(&sc, a, lm_sin(x));
		RULE_T(&sc, b, lm_mul(g, a));
		r = lm_neg(b);
		break;
	case LM_TANH: /* d tanh(x) = 1 - tanh(x)^2 = 1 - out^2 */
		RULE_T(&sc, a, lm_unary(LM_SQUARE, y));
		RULE_T(&sc, b, lm_rbinary_scalar(LM_SUB, 1, a));
		r = lm_mul(g, b);
		break;
	case LM_SIGMOID: /* d sigmoid(x) = out (1 - out) */
		RULE_T(&sc, a, lm_rbinary_scalar(LM_SUB, 1, y));
		RULE_T(&sc, b, lm_mul(y, a));
		r = lm_mul(g, b);
		break;
	case LM_RELU: /* d relu(x) = [x > 0] = [out > 0] */
		RULE_T(&sc, a, lm_binary_scalar(LM_GT, y, 0));
		r = lmi_grad_mask(g, a);
		break;
	case LM_SIGN:
	case LM_FLOOR:
	case LM_CEIL:
	case LM_ROUND: /* piecewise constant: 0 */
		r = lmi_zeros_as(g, n->in[0].ndim, n->in[0].shape, g->dtype);
		break;
	case LM_RSQRT: /* d x^(-1/2) = -1/2 x^(-3/2) = -out^3 / 2 */
		RULE_T(&sc, a, lm_unary(LM_SQUARE, y));
		RULE_T(&sc, b, lm_mul(a, y));
		RULE_T(&sc, c, lm_binary_scalar(LM_MUL, b, -0.5));
		r = lm_mul(g, c);
		break;
	case LM_RECIPROCAL: /* d (1/x) = -1/x^2 = -out^2 */
		RULE_T(&sc, a, lm_unary(LM_SQUARE, y));
		RULE_T(&sc, b, lm_mul(g, a));
		r = lm_neg(b);
		break;
	case LM_SQUARE: /* d x^2 = 2x */
		RULE_T(&sc, a, lm_binary_scalar(LM_MUL, x, 2));
		r = lm_mul(g, a);
		break;
	case LMI_CLAMP: /* d clamp(x, lo, hi) = [lo <= x <= hi] */
		RULE_T(&sc, a, lm_binary_scalar(LM_GE, x, p0));
		RULE_T(&sc, b, lm_binary_scalar(LM_LE, x, p1));
		RULE_T(&sc, c, lm_mul(a, b));
		r = lmi_grad_mask(g, c);
		break;
	case LMI_LEAKY_RELU: /* d leaky_relu(x) = 1 for x > 0, else slope */
		RULE_T(&sc, a, lm_binary_scalar(LM_GT, x, 0));
		RULE_T(&sc, b, lm_binary_scalar(LM_MUL, g, p0));
		r = lm_where(a, g, b);
		break;
	case LMI_POW_SCALAR: /* d x^p = p x^(p-1); 0 for p = 0 */
		if (p0 == 0) {
			r = lmi_zeros_as(g, n->in[0].ndim, n->in[0].shape, g->dtype);
			break;
		}
		RULE_T(&sc, a, lm_pow_scalar(x, p0 - 1));
		RULE_T(&sc, b, lm_binary_scalar(LM_MUL, a, p0));
		r = lm_mul(g, b);
		break;
	default:
		lmi_scope_end(&sc);
		return lmi_fail(LM_ERR_INTERNAL, "backward: %s: not a unary op", n->info->grad_name);
	}
fail:
	lmi_scope_end(&sc);
	if (!r) return lm_last_status();
	gin[0] = r;
	return LM_OK;
}

/* ---------------------------------------------------------------- forward */

/* out = op(x) in dtype rdt with the unary slot's parameters p0, p1; records op with p. */
static lm_tensor *apply(const char *name, lmi_op op, const lm_tensor *x, lm_dtype rdt, double p0,
                        double p1, const lmi_params *p)
{
	if (lmi_check_arg(name, "input", x) || lmi_check_device(name, 1, &x)) return NULL;
	lm_tensor *xc = lmi_as_dtype(x, rdt);
	if (!xc) return NULL;
	lm_tensor *out = lmi_empty_as(name, x, x->ndim, x->shape, rdt);
	(void)p0, (void)p1; /* the node carries them in p */
	if (out && lmi_run(name, op, p, rdt, 1, (const lm_tensor *[]){xc}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	const lm_tensor *save[2] = {xc, out};
	out = lmi_finish(out, op, p, 1, &x, 2, save, NULL);
	lm_tensor_release(xc);
	return out;
}

lm_tensor *lm_unary(lm_unop op, const lm_tensor *x)
{
	if (op < 0 || op >= LM_UNOP_COUNT)
		return lmi_fail_null(LM_ERR_ARG, "unary: unknown op %d", (int)op);
	if (!x) return lmi_fail_null(LM_ERR_ARG, "%s: input is NULL", unop_names[op]);
	lm_dtype rdt = is_float_fn(op) && !lm_dtype_is_float(x->dtype) ? LM_FLOAT32 : x->dtype;
	return apply(unop_names[op], (lmi_op)(LMI_OP_EXP + op), x, rdt, 0, 0, NULL);
}

lm_status lm_unary_(lm_unop op, lm_tensor *x)
{
	if (op < 0 || op >= LM_UNOP_COUNT) return lmi_fail(LM_ERR_ARG, "unary_: unknown op %d", (int)op);
	char name[32];
	snprintf(name, sizeof name, "%s_", unop_names[op]);
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: input is NULL", name);
	if (is_float_fn(op) && !lm_dtype_is_float(x->dtype))
		return lmi_fail(LM_ERR_DTYPE, "%s: in-place on %s: the result is float32", name,
		                lm_dtype_name(x->dtype));
	lm_status s = lmi_inplace_check(name, x);
	if (s || (s = lmi_check_device(name, 1, (const lm_tensor *const *)&x))) return s;
	if (lmi_has_internal_overlap(x))
		return lmi_fail(LM_ERR_ARG, "%s: the tensor of shape %s has broadcast (expanded) dims; "
		                "clone it before writing in place", name, lmi_shape_s(x));
	lmi_bump_version(x);
	return lmi_run(name, (lmi_op)(LMI_OP_EXP + op), NULL, x->dtype, 1, (const lm_tensor *[]){x}, 1, (lm_tensor *[]){x});
}

#define UNARY_FN(fn, OP)                                                                            \
	lm_tensor *lm_##fn(const lm_tensor *x) { return lm_unary(OP, x); }
UNARY_FN(exp, LM_EXP)
UNARY_FN(log, LM_LOG)
UNARY_FN(sqrt, LM_SQRT)
UNARY_FN(abs, LM_ABS)
UNARY_FN(neg, LM_NEG)
UNARY_FN(sin, LM_SIN)
UNARY_FN(cos, LM_COS)
UNARY_FN(tanh, LM_TANH)
UNARY_FN(sigmoid, LM_SIGMOID)
UNARY_FN(relu, LM_RELU)
UNARY_FN(sign, LM_SIGN)
UNARY_FN(floor, LM_FLOOR)
UNARY_FN(ceil, LM_CEIL)
UNARY_FN(round, LM_ROUND)

/* Clamp bounds for an integer dtype: lo rounded up, hi down, both clipped to the type's range. */
static void int_bounds(lm_dtype dt, double *lo, double *hi)
{
	double tmin = dt == LM_UINT8 ? 0 : dt == LM_INT32 ? -2147483648.0 : -9223372036854775808.0;
	double tmax = dt == LM_UINT8 ? 255 : dt == LM_INT32 ? 2147483647.0 : 9223372036854774784.0;
	*lo = ceil(*lo);
	*hi = floor(*hi);
	if (*lo < tmin) *lo = tmin;
	if (*hi > tmax) *hi = tmax;
	if (*lo > tmax) *lo = tmax;
	if (*hi < tmin) *hi = tmin;
}

static lm_status check_clamp(const char *name, double lo, double hi)
{
	if (isnan(lo) || isnan(hi) || lo > hi)
		return lmi_fail(LM_ERR_ARG, "%s: bounds min %g and max %g: need min <= max, no NaN", name,
		                lo, hi);
	return LM_OK;
}

lm_tensor *lm_clamp(const lm_tensor *x, double lo, double hi)
{
	if (!x) return lmi_fail_null(LM_ERR_ARG, "clamp: input is NULL");
	if (check_clamp("clamp", lo, hi)) return NULL;
	if (!lm_dtype_is_float(x->dtype)) int_bounds(x->dtype, &lo, &hi);
	return apply("clamp", LMI_OP_CLAMP, x, x->dtype, lo, hi, &(lmi_params){.clamp = {.min = lo, .max = hi}});
}

lm_status lm_clamp_(lm_tensor *x, double lo, double hi)
{
	if (!x) return lmi_fail(LM_ERR_ARG, "clamp_: input is NULL");
	lm_status s = check_clamp("clamp_", lo, hi);
	if (s || (s = lmi_inplace_check("clamp_", x))) return s;
	if (lmi_has_internal_overlap(x))
		return lmi_fail(LM_ERR_ARG, "clamp_: the tensor of shape %s has broadcast (expanded) dims",
		                lmi_shape_s(x));
	if (!lm_dtype_is_float(x->dtype)) int_bounds(x->dtype, &lo, &hi);
	lmi_bump_version(x);
	return lmi_run("clamp_", LMI_OP_CLAMP, &(lmi_params){.clamp = {.min = lo, .max = hi}}, x->dtype, 1,
	               (const lm_tensor *[]){x}, 1, (lm_tensor *[]){x});
}

lm_tensor *lm_pow_scalar(const lm_tensor *x, double p)
{
	if (!x) return lmi_fail_null(LM_ERR_ARG, "pow: input is NULL");
	lm_dtype rdt = x->dtype;
	if (!lm_dtype_is_float(rdt) && (p != floor(p) || p < 0 || isinf(p))) rdt = LM_FLOAT32;
	return apply("pow", LMI_OP_POW_SCALAR, x, rdt, p, 0, &(lmi_params){.pow_scalar = {.exponent = p}});
}

lm_tensor *lm_leaky_relu(const lm_tensor *x, double slope)
{
	if (!x) return lmi_fail_null(LM_ERR_ARG, "leaky_relu: input is NULL");
	if (!lm_dtype_is_float(x->dtype))
		return lmi_fail_null(LM_ERR_DTYPE, "leaky_relu: needs a float tensor, got %s",
		                     lm_dtype_name(x->dtype));
	if (!isfinite(slope))
		return lmi_fail_null(LM_ERR_ARG, "leaky_relu: negative slope %g is not finite", slope);
	return apply("leaky_relu", LMI_OP_LEAKY_RELU, x, x->dtype, slope, 0,
	             &(lmi_params){.leaky_relu = {.negative_slope = slope}});
}
