/*
 * binary.c — elementwise ops of two tensors with NumPy broadcasting, comparisons, where.
 *
 * The result dtype is lm_promote_types(a, b) (true division of integers gives float32;
 * comparisons give uint8). A number operand becomes a 0-d tensor of the result dtype, which the
 * loops see as a stride-0 operand. In-place variants write into a and refuse a result dtype that
 * a cannot hold without loss (an integer tensor and a float operand). Read next: reduce.c.
 */
#include <math.h>
#include <string.h>

#include "ops/rule.h"
#include "core/iter.h"
#include "ops.h"

static const char *const binop_names[LM_BINOP_COUNT] = {
	"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
	"floor_divide", "remainder",
};

const char *lm_binop_name(lm_binop op)
{
	return (op >= 0 && op < LM_BINOP_COUNT) ? binop_names[op] : "?";
}

lm_status lm_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                              int64_t *out)
{
	int n = na > nb ? na : nb;
	if (n > LM_MAX_DIMS)
		return lmi_fail(LM_ERR_SHAPE, "broadcast: %d dims exceed the maximum of %d", n, LM_MAX_DIMS);
	for (int i = 0; i < n; i++) {
		int ia = i - (n - na), ib = i - (n - nb);
		int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
		/* the dim in 1-based terms, counted from the end when the two have different ndims
		 * (where it names the same dim of both) */
		if (sa != sb && sa != 1 && sb != 1)
			return lmi_fail(LM_ERR_SHAPE,
			                "shapes %s and %s cannot be broadcast together (dim %lld: %lld vs %lld)",
			                lmi_dims_s(na, a), lmi_dims_s(nb, b),
			                na == nb ? lmi_1(i) : (long long)(i - n), (long long)sa, (long long)sb);
		out[i] = sa == 1 ? sb : sa;
	}
	*nout = n;
	return LM_OK;
}

/* Broadcast shape with the function's name in the message. */
static lm_status broadcast(const char *name, const lm_tensor *a, const lm_tensor *b, int *n,
                           int64_t *shape)
{
	if (lm_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, n, shape)) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		return lmi_fail(LM_ERR_SHAPE, "%s: %s", name, msg);
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- backward rules */

/*
 * Gradients at the broadcast shape, then summed back to each input's shape (lmi_sum_to). With
 * a, b (saved in the compute dtype) and out:
 *   add: (g, g)   sub: (g, -g)   mul: (g b, g a)   div: (g / b, -g out / b)
 *   pow: (g b a^(b-1), g out log a), with 0 where b = 0 (first) and where a = 0, b >= 0 (second)
 *   maximum/minimum: g goes to the selected operand; at a tie (a == b) each gets g / 2, as in
 *   PyTorch, so the gradient is a valid subgradient and the two halves add up to g.
 *   remainder: (g, -g (a // b))      floor_divide: (0, 0), the derivative of a step function
 */
lm_status lmi_bw_binary(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int op = (int)(n->op - LMI_OP_ADD); /* an lm_binop (oplist.h keeps their order) */
	const lm_tensor *a = NULL, *b = NULL, *y = NULL;
	lm_status s;
	if (op != LM_ADD && op != LM_SUB &&
	    ((s = lmi_node_saved(n, 0, &a)) || (s = lmi_node_saved(n, 1, &b)) ||
	     (s = lmi_node_saved(n, 2, &y))))
		return s;
	bool need_a = n->in[0].needs_grad, need_b = n->in[1].needs_grad;
	lmi_scope sc = {0};
	lm_tensor *ga = NULL, *gb = NULL, *t0, *t1, *t2, *t3;
	switch (op) {
	case LM_ADD:
		ga = gb = (lm_tensor *)g;
		break;
	case LM_SUB:
		ga = (lm_tensor *)g;
		if (need_b) RULE_T(&sc, gb, lm_neg(g));
		break;
	case LM_MUL:
		if (need_a) RULE_T(&sc, ga, lm_mul(g, b));
		if (need_b) RULE_T(&sc, gb, lm_mul(g, a));
		break;
	case LM_DIV:
		if (need_a) RULE_T(&sc, ga, lm_div(g, b));
		if (need_b) {
			RULE_T(&sc, t0, lm_mul(g, y));
			RULE_T(&sc, t1, lm_div(t0, b));
			RULE_T(&sc, gb, lm_neg(t1));
		}
		break;
	case LM_POW: {
		lm_tensor *zero;
		RULE_T(&sc, zero, lmi_grad_scalar(g, 0, g->dtype));
		if (need_a) { /* where(b == 0, 0, g b a^(b-1)) */
			RULE_T(&sc, t0, lm_binary_scalar(LM_SUB, b, 1));
			RULE_T(&sc, t1, lm_pow(a, t0));
			RULE_T(&sc, t2, lm_mul(t1, b));
			RULE_T(&sc, t3, lm_mul(g, t2));
			RULE_T(&sc, t0, lm_binary_scalar(LM_EQ, b, 0));
			RULE_T(&sc, ga, lm_where(t0, zero, t3));
		}
		if (need_b) { /* where(a == 0 and b >= 0, 0, g out log a) */
			RULE_T(&sc, t0, lm_log(a));
			RULE_T(&sc, t1, lm_mul(y, t0));
			RULE_T(&sc, t2, lm_mul(g, t1));
			RULE_T(&sc, t0, lm_binary_scalar(LM_EQ, a, 0));
			RULE_T(&sc, t1, lm_binary_scalar(LM_GE, b, 0));
			RULE_T(&sc, t3, lm_mul(t0, t1));
			RULE_T(&sc, gb, lm_where(t3, zero, t2));
		}
		break;
	}
	case LM_REMAINDER:
		ga = (lm_tensor *)g;
		if (need_b) {
			RULE_T(&sc, t0, lm_binary(LM_FLOOR_DIVIDE, a, b));
			RULE_T(&sc, t1, lm_mul(g, t0));
			RULE_T(&sc, gb, lm_neg(t1));
		}
		break;
	case LM_FLOOR_DIVIDE:
		RULE_T(&sc, ga, lmi_zeros_as(g, g->ndim, g->shape, g->dtype));
		gb = ga;
		break;
	case LM_MAXIMUM:
	case LM_MINIMUM: { /* w = [a selected] with 1/2 at ties; ga = g w, gb = g - g w */
		lm_tensor *half;
		RULE_T(&sc, half, lmi_grad_scalar(g, 0.5, g->dtype));
		RULE_T(&sc, t0, lm_binary(op == LM_MAXIMUM ? LM_GT : LM_LT, a, b));
		RULE_T(&sc, t1, lm_binary(LM_EQ, a, b));
		RULE_T(&sc, t2, lm_where(t1, half, t0));
		RULE_T(&sc, t3, lm_mul(g, t2));
		ga = t3;
		if (need_b) RULE_T(&sc, gb, lm_sub(g, t3));
		break;
	}
	default:
		lmi_scope_end(&sc);
		return lmi_fail(LM_ERR_INTERNAL, "backward: %s: unknown op %d", n->info->grad_name, op);
	}
	if (need_a && !(gin[0] = lmi_sum_to(ga, n->in[0].ndim, n->in[0].shape))) goto fail;
	if (need_b && !(gin[1] = lmi_sum_to(gb, n->in[1].ndim, n->in[1].shape))) goto fail;
	return lmi_rule_end(&sc, gin, false);
fail:
	return lmi_rule_end(&sc, gin, true);
}

/* where(cond, a, b): (where(cond, g, 0), where(cond, 0, g)), each summed to its input's shape.
 * saved[0] = cond as uint8. */
lm_status lmi_bw_where(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *c;
	lm_status s = lmi_node_saved(n, 0, &c);
	if (s) return s;
	lmi_scope sc = {0};
	lm_tensor *zero, *t;
	RULE_T(&sc, zero, lmi_grad_scalar(g, 0, g->dtype));
	if (n->in[0].needs_grad) {
		RULE_T(&sc, t, lm_where(c, g, zero));
		if (!(gin[0] = lmi_sum_to(t, n->in[0].ndim, n->in[0].shape))) goto fail;
	}
	if (n->in[1].needs_grad) {
		RULE_T(&sc, t, lm_where(c, zero, g));
		if (!(gin[1] = lmi_sum_to(t, n->in[1].ndim, n->in[1].shape))) goto fail;
	}
	return lmi_rule_end(&sc, gin, false);
fail:
	return lmi_rule_end(&sc, gin, true);
}

/* The loop of op, from the table of out's device (// and % report a zero integer divisor). */
static lm_status run_binary(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b,
                            const char *name)
{
	lm_status s = lmi_run(name, (lmi_op)(LMI_OP_ADD + op), NULL, a->dtype, 2, (const lm_tensor *[]){a, b}, 1,
	                      (lm_tensor *[]){out});
	/* (the division by zero of // and % is reported under the op's name, in place or not) */
	return s && (op == LM_FLOOR_DIVIDE || op == LM_REMAINDER) ? lmi_fail_as(name) : s;
}

/* ---------------------------------------------------------------- forward */

/* The dtype a op b computes in. */
static lm_dtype compute_dtype(lm_binop op, lm_dtype a, lm_dtype b)
{
	lm_dtype d = lm_promote_types(a, b);
	if (op == LM_DIV && !lm_dtype_is_float(d)) d = LM_FLOAT32;
	return d;
}

/* Integer powers need non-negative exponents. */
static lm_status check_int_pow(const char *name, lm_dtype ct, const lm_tensor *b)
{
	if (lm_dtype_is_float(ct) || b->dtype == LM_UINT8 || lm_tensor_numel(b) == 0) return LM_OK;
	lm_tensor *m = lm_amin(b, LM_DIM_ALL, false);
	double v = 0;
	if (!m) return lmi_fail_as(name);
	lm_tensor_item(m, &v);
	lm_tensor_release(m);
	if (v < 0)
		return lmi_fail(LM_ERR_ARG, "%s: integers to negative integer powers (%g) are not allowed",
		                name, v);
	return LM_OK;
}

lm_tensor *lm_binary(lm_binop op, const lm_tensor *a, const lm_tensor *b)
{
	if (op < 0 || op >= LM_BINOP_COUNT)
		return lmi_fail_null(LM_ERR_ARG, "binary: unknown op %d", (int)op);
	const char *name = binop_names[op];
	const lm_tensor *in[2] = {a, b};
	if (lmi_check_arg(name, "first operand", a) || lmi_check_arg(name, "second operand", b) ||
	    lmi_check_device(name, 2, in))
		return NULL;
	int nd;
	int64_t shape[LM_MAX_DIMS];
	if (broadcast(name, a, b, &nd, shape)) return NULL;
	lm_dtype ct = compute_dtype(op, a->dtype, b->dtype);
	if (op == LM_POW && check_int_pow(name, ct, b)) return NULL;
	lm_dtype rt = lm_binop_is_comparison(op) ? LM_UINT8 : ct;
	lm_tensor *ac = lmi_as_dtype(a, ct), *bc = ac ? lmi_as_dtype(b, ct) : NULL, *out = NULL;
	if (!bc) goto done;
	out = lmi_empty_as(name, ac, nd, shape, rt);
	if (out && run_binary(op, out, ac, bc, name)) {
		lm_tensor_release(out);
		out = NULL;
	}
	if (!lm_binop_is_comparison(op)) {
		/* saved: [0] = a, [1] = b (both in the compute dtype), [2] = out */
		const lm_tensor *save[3] = {ac, bc, out};
		bool need = op != LM_ADD && op != LM_SUB;
		out = lmi_finish(out, (lmi_op)(LMI_OP_ADD + op), NULL, 2, in, need ? 3 : 0, save, NULL);
	}
done:
	lm_tensor_release(ac);
	lm_tensor_release(bc);
	return out;
}

/* The dtype a number s takes next to a tensor of dtype dt. */
static lm_dtype scalar_dtype(lm_dtype dt, double s)
{
	if (lm_dtype_is_float(dt)) return dt;
	if (s != floor(s) || isinf(s) || isnan(s)) return LM_FLOAT32;
	return dt;
}

lm_tensor *lm_binary_scalar(lm_binop op, const lm_tensor *a, double s)
{
	if (!a) return lmi_fail_null(LM_ERR_ARG, "%s: first operand is NULL", lm_binop_name(op));
	lm_tensor *b = lmi_scalar_on(lmi_dev(a), s, scalar_dtype(a->dtype, s));
	if (!b) return NULL;
	lm_tensor *out = lm_binary(op, a, b);
	lm_tensor_release(b);
	return out;
}

lm_tensor *lm_rbinary_scalar(lm_binop op, double s, const lm_tensor *a)
{
	if (!a) return lmi_fail_null(LM_ERR_ARG, "%s: second operand is NULL", lm_binop_name(op));
	lm_tensor *b = lmi_scalar_on(lmi_dev(a), s, scalar_dtype(a->dtype, s));
	if (!b) return NULL;
	lm_tensor *out = lm_binary(op, b, a);
	lm_tensor_release(b);
	return out;
}

lm_status lm_binary_(lm_binop op, lm_tensor *a, const lm_tensor *b)
{
	if (op < 0 || op >= LM_BINOP_COUNT) return lmi_fail(LM_ERR_ARG, "binary_: unknown op %d", (int)op);
	char name[32];
	snprintf(name, sizeof name, "%s_", binop_names[op]);
	const lm_tensor *in[2] = {a, b};
	lm_status s;
	if ((s = lmi_check_arg(name, "first operand", a)) || (s = lmi_check_arg(name, "second operand", b)) ||
	    (s = lmi_check_device(name, 2, in)) || (s = lmi_inplace_check(name, a)))
		return s;
	int nd;
	int64_t shape[LM_MAX_DIMS];
	if ((s = broadcast(name, a, b, &nd, shape))) return s;
	bool same = nd == a->ndim;
	for (int i = 0; same && i < nd; i++) same = shape[i] == a->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_SHAPE, "%s: the result shape %s differs from the in-place operand %s",
		                name, lmi_dims_s(nd, shape), lmi_shape_s(a));
	if (lmi_has_internal_overlap(a))
		return lmi_fail(LM_ERR_ARG, "%s: the tensor of shape %s has broadcast (expanded) dims; "
		                "clone it before writing in place", name, lmi_shape_s(a));
	lm_dtype ct = compute_dtype(op, a->dtype, b->dtype);
	if (lm_dtype_is_float(ct) && !lm_dtype_is_float(a->dtype))
		return lmi_fail(LM_ERR_DTYPE, "%s: the result type %s cannot be stored in the %s tensor",
		                name, lm_dtype_name(ct), lm_dtype_name(a->dtype));
	if (op == LM_POW && (s = check_int_pow(name, ct, b))) return s;
	if (lm_binop_is_comparison(op) || ct != a->dtype) {
		lm_tensor *r = lm_binary(op, a, b);
		if (!r) return lm_last_status();
		lmi_bump_version(a);
		s = lmi_copy(a, r);
		lm_tensor_release(r);
		return s;
	}
	/* b may overlap a with another layout (a.add_(a.t())): read it from a copy then. */
	lm_tensor *bc = (b->storage == a->storage || b->dtype != ct) ? lmi_contiguous_copy(b, ct)
	                                                             : lm_tensor_retain((lm_tensor *)b);
	if (!bc) return lm_last_status();
	lmi_bump_version(a);
	s = run_binary(op, a, a, bc, name);
	lm_tensor_release(bc);
	return s;
}

/* a op= s for a float tensor on the CPU, straight into the loop: no 0-d tensor for the number
 * (the common x:add_(1) / optimizer-step case). Returns false when the op needs the general path. */
static bool scalar_fast_path(lm_binop op, lm_tensor *a, double s, lm_status *st)
{
	lmi_op scalar_op;
	switch (op) {
	case LM_ADD: scalar_op = LMI_OP_ADD_SCALAR_; break;
	case LM_SUB: scalar_op = LMI_OP_ADD_SCALAR_, s = -s; break;
	case LM_MUL: scalar_op = LMI_OP_MUL_SCALAR_; break;
	case LM_DIV: scalar_op = LMI_OP_DIV_SCALAR_; break;
	default: return false;
	}
	if (!lm_dtype_is_float(a->dtype)) return false;
	char name[32];
	snprintf(name, sizeof name, "%s_", binop_names[op]);
	if ((*st = lmi_inplace_check(name, a))) return true;
	if (lmi_has_internal_overlap(a)) {
		*st = lmi_fail(LM_ERR_ARG, "%s: the tensor of shape %s has broadcast (expanded) dims; "
		               "clone it before writing in place", name, lmi_shape_s(a));
		return true;
	}
	lmi_bump_version(a);
	*st = lmi_run(name, scalar_op, &(lmi_params){.scalar = {.value = s}}, a->dtype, 1, (const lm_tensor *[]){a}, 1,
	              (lm_tensor *[]){a});
	return true;
}

lm_status lm_binary_scalar_(lm_binop op, lm_tensor *a, double s)
{
	if (!a) return lmi_fail(LM_ERR_ARG, "%s_: first operand is NULL", lm_binop_name(op));
	lm_status fast;
	if (op >= 0 && op < LM_BINOP_COUNT && scalar_fast_path(op, a, s, &fast)) return fast;
	lm_tensor *b = lmi_scalar_on(lmi_dev(a), s, scalar_dtype(a->dtype, s));
	if (!b) return lm_last_status();
	lm_status st = lm_binary_(op, a, b);
	lm_tensor_release(b);
	return st;
}

#define BINARY_FN(fn, OP)                                                                           \
	lm_tensor *lm_##fn(const lm_tensor *a, const lm_tensor *b) { return lm_binary(OP, a, b); }
BINARY_FN(add, LM_ADD)
BINARY_FN(sub, LM_SUB)
BINARY_FN(mul, LM_MUL)
BINARY_FN(div, LM_DIV)
BINARY_FN(pow, LM_POW)
BINARY_FN(maximum, LM_MAXIMUM)
BINARY_FN(minimum, LM_MINIMUM)

/* ---------------------------------------------------------------- where */

lm_tensor *lm_where(const lm_tensor *cond, const lm_tensor *a, const lm_tensor *b)
{
	const lm_tensor *all[3] = {cond, a, b};
	if (lmi_check_arg("where", "condition", cond) || lmi_check_arg("where", "first value", a) ||
	    lmi_check_arg("where", "second value", b) || lmi_check_device("where", 3, all))
		return NULL;
	int n1, nd;
	int64_t s1[LM_MAX_DIMS], shape[LM_MAX_DIMS];
	if (broadcast("where", a, b, &n1, s1)) return NULL;
	if (lm_broadcast_shapes(cond->ndim, cond->shape, n1, s1, &nd, shape)) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		return lmi_fail_null(LM_ERR_SHAPE, "where: condition: %s", msg);
	}
	lm_dtype ct = lm_promote_types(a->dtype, b->dtype);
	lm_tensor *c = cond->dtype == LM_UINT8 ? lm_tensor_retain((lm_tensor *)cond)
	                                       : lm_binary_scalar(LM_NE, cond, 0);
	lm_tensor *ac = c ? lmi_as_dtype(a, ct) : NULL, *bc = ac ? lmi_as_dtype(b, ct) : NULL, *out = NULL;
	if (!bc) goto done;
	out = lmi_empty_as("where", ac, nd, shape, ct);
	if (out && lmi_run("where", LMI_OP_WHERE, NULL, ct, 3, (const lm_tensor *[]){c, ac, bc}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	/* inputs: [0] = a, [1] = b (cond is not differentiable); saved: [0] = cond */
	const lm_tensor *in[2] = {a, b}, *save[1] = {c};
	out = lmi_finish(out, LMI_OP_WHERE, NULL, 2, in, 1, save, NULL);
done:
	lm_tensor_release(c);
	lm_tensor_release(ac);
	lm_tensor_release(bc);
	return out;
}
