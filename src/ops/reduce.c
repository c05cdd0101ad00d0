/*
 * reduce.c — reductions over one dim, several dims or all elements: result shapes and dtypes,
 * empty inputs, max/min with indices, recording.
 *
 * The input is reduced where it lies, whatever its strides (the CPU backend orders its loops so
 * the innermost walks the closest-packed memory, and a stride-0 dim is a multiplication): a view
 * is not copied first. Dtypes: sums and products of integers give int64; mean, var,
 * std and norm of integers give float32; max/min keep the dtype; arg* give int64.
 * Read next: ../backend/cpu/reduce.c.
 */
#include <math.h>

#include "ops/rule.h"
#include "ops.h"

static const char *const redop_names[LM_REDOP_COUNT] = {
	"sum", "mean", "prod", "max", "min", "argmax", "argmin", "var", "std", "norm",
};

const char *lm_redop_name(lm_redop op)
{
	return (op >= 0 && op < LM_REDOP_COUNT) ? redop_names[op] : "?";
}

/*
 * The gradient of a reduction of x over dim d (or all dims) with R elements per output: g is first
 * viewed with the reduced dims kept (gk, and outk for the output), so it broadcasts against x.
 *   sum: gk                     mean: gk / R
 *   prod: gk * prod_{j != i} x_j, computed without dividing by zero: with no zero in the slice it
 *         is prod(x') / x_i, with exactly one zero it is prod of the others at the zero and 0
 *         elsewhere, with two or more it is 0 (x' = x with zeros replaced by 1)
 *   var (correction c): gk * 2 (x - mean) / (R - c)      std: gk * (x - mean) / ((R - c) outk)
 *   norm p: p = 0: 0; p = 1: gk sign(x); p = 2: gk x / outk (0 where outk = 0);
 *           p = inf: like max of |x|, times sign(x); else gk sign(x) |x|^(p-1) / outk^(p-1) (0
 *           where x = 0 or outk = 0)
 *   max/min with indices (max_dim): gk to the element at the returned index (the first of equal
 *           values); without indices (amax/amin, over a dim or all): gk split evenly among the
 *           elements equal to the result, as PyTorch's amax/amin do.
 * saved: [0] = x (contiguous), [1] = out, [2] = indices (max/min over a dim with indices only).
 */
/* prod_{j != i} x_j along dim, for every i (the multiplier of prod's gradient). */
static lm_tensor *prod_others(const lm_tensor *x, int dim)
{
	lmi_scope sc = {0};
	lm_tensor *r = NULL, *zero, *one, *z, *cnt, *xnz, *pnz, *none, *one_zero, *at_zero, *other, *t;
	RULE_T(&sc, zero, lmi_grad_scalar(x, 0, x->dtype));
	RULE_T(&sc, one, lmi_grad_scalar(x, 1, x->dtype));
	RULE_T(&sc, z, lm_binary_scalar(LM_EQ, x, 0));        /* the zeros */
	RULE_T(&sc, cnt, lm_sum(z, dim, true));                /* their count per slice */
	RULE_T(&sc, xnz, lm_where(z, one, x));                 /* x' */
	RULE_T(&sc, pnz, lm_prod(xnz, dim, true));             /* prod(x') */
	RULE_T(&sc, none, lm_div(pnz, xnz));                   /* no zero: prod(x') / x_i */
	RULE_T(&sc, t, lm_binary_scalar(LM_EQ, cnt, 1));
	RULE_T(&sc, at_zero, lm_mul(t, z));
	RULE_T(&sc, one_zero, lm_where(at_zero, pnz, zero));   /* one zero: prod(x') there */
	RULE_T(&sc, t, lm_binary_scalar(LM_EQ, cnt, 0));
	RULE_T(&sc, other, lm_where(t, none, one_zero));
	r = lm_tensor_retain(other);
fail:
	lmi_scope_end(&sc);
	return r;
}

/* d norm_p(x) / dx along dim, times gk; yk = the norm with the dim kept. */
static lm_tensor *norm_grad(const lm_tensor *x, const lm_tensor *yk, const lm_tensor *gk, double p,
                            int dim)
{
	if (p == 0) return lmi_zeros_as(gk, x->ndim, x->shape, gk->dtype);
	lmi_scope sc = {0};
	lm_tensor *r = NULL, *t0, *t1, *t2, *t3, *num, *den, *bad;
	if (p == 1) { /* sign(x) */
		RULE_T(&sc, t0, lm_sign(x));
		r = lm_mul(gk, t0);
	} else if (isinf(p)) { /* sign(x) [|x| == norm] / count */
		RULE_T(&sc, t0, lm_abs(x));
		RULE_T(&sc, t1, lm_binary(LM_EQ, t0, yk));
		RULE_T(&sc, t2, lm_sum(t1, dim, true));
		RULE_T(&sc, t3, lm_div(gk, t2));
		RULE_T(&sc, t0, lm_sign(x));
		RULE_T(&sc, t2, lm_mul(t0, t1));
		r = lm_mul(t3, t2);
	} else { /* sign(x) |x|^(p-1) / norm^(p-1), 0 where x = 0 or norm = 0 */
		if (p == 2) {
			RULE_T(&sc, num, lm_tensor_retain((lm_tensor *)x));
			RULE_T(&sc, den, lm_tensor_retain((lm_tensor *)yk));
		} else {
			RULE_T(&sc, t0, lm_abs(x));
			RULE_T(&sc, t1, lm_pow_scalar(t0, p - 1));
			RULE_T(&sc, t2, lm_sign(x));
			RULE_T(&sc, num, lm_mul(t1, t2));
			RULE_T(&sc, den, lm_pow_scalar(yk, p - 1));
		}
		RULE_T(&sc, t0, lm_div(gk, den));
		RULE_T(&sc, t1, lm_mul(t0, num));
		RULE_T(&sc, t2, lm_binary_scalar(LM_EQ, yk, 0));
		RULE_T(&sc, t3, lm_binary_scalar(LM_EQ, x, 0));
		RULE_T(&sc, bad, lm_add(t2, t3));
		RULE_T(&sc, t0, lmi_grad_scalar(gk, 0, gk->dtype));
		r = lm_where(bad, t0, t1);
	}
fail:
	lmi_scope_end(&sc);
	return r;
}

/* max/min: with indices ix, gk to the element at the index along dim (R positions); without,
 * gk split evenly among the elements equal to the result yk. */
static lm_tensor *pick_grad(const lm_tensor *x, const lm_tensor *yk, const lm_tensor *ix,
                            const lm_tensor *gk, int dim, int64_t R)
{
	lmi_scope sc = {0};
	lm_tensor *r = NULL, *t0, *t1, *t2, *t3, *ar;
	if (ix) { /* mask = [position along dim == index] */
		int64_t ps[LM_MAX_DIMS];
		for (int i = 0; i < x->ndim; i++) ps[i] = i == dim ? R : 1;
		RULE_T(&sc, ar, lm_arange(0, (double)R, 1, LM_INT64));
		RULE_T(&sc, t0, lmi_on_device(ar, lmi_dev(x))); /* positions on x's device */
		RULE_T(&sc, t1, lm_reshape(t0, x->ndim, ps));
		RULE_T(&sc, t2, lmi_grad_keepdim(ix, x->ndim, x->shape, dim));
		RULE_T(&sc, t3, lm_binary(LM_EQ, t1, t2));
		r = lmi_grad_mask(gk, t3);
	} else { /* mask = [x == out] / count */
		RULE_T(&sc, t0, lm_binary(LM_EQ, x, yk));
		RULE_T(&sc, t1, lm_sum(t0, dim, true));
		RULE_T(&sc, t2, lm_div(gk, t1));
		r = lmi_grad_mask(t2, t0);
	}
fail:
	lmi_scope_end(&sc);
	return r;
}

lm_status lmi_bw_reduce(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int op = (int)(n->op - LMI_OP_SUM), dim = (int)n->p.reduce.dim; /* an lm_redop (oplist.h's order) */
	int nd = n->in[0].ndim;
	const int64_t *xs = n->in[0].shape;
	double p = op == LM_NORM ? n->p.norm.p : op == LM_VAR || op == LM_STD ? n->p.var.correction : 0;
	int64_t R = 1;
	for (int i = 0; i < nd; i++)
		if (dim == LM_DIM_ALL || i == dim) R *= xs[i];
	const lm_tensor *x = NULL, *y = NULL, *ix = NULL;
	lm_status s;
	if (op != LM_SUM && op != LM_MEAN &&
	    ((s = lmi_node_saved(n, 0, &x)) || (s = lmi_node_saved(n, 1, &y)) ||
	     (n->nsaved > 2 && (s = lmi_node_saved(n, 2, &ix)))))
		return s;
	lmi_scope sc = {0};
	lm_tensor *gk, *yk = NULL, *r = NULL, *t0, *t1, *t2;
	RULE_T(&sc, gk, lmi_grad_keepdim(g, nd, xs, dim));
	if (y) RULE_T(&sc, yk, lmi_grad_keepdim(y, nd, xs, dim));
	switch (op) {
	case LM_SUM:
		r = lm_expand(gk, nd, xs);
		break;
	case LM_MEAN:
		RULE_T(&sc, t0, lm_binary_scalar(LM_MUL, gk, 1.0 / (double)R));
		r = lm_expand(t0, nd, xs);
		break;
	case LM_PROD:
		RULE_T(&sc, t0, prod_others(x, dim));
		r = lm_mul(gk, t0);
		break;
	case LM_VAR:
	case LM_STD:
		RULE_T(&sc, t0, lm_mean(x, dim, true));
		RULE_T(&sc, t1, lm_sub(x, t0));
		if (op == LM_VAR) {
			RULE_T(&sc, t2, lm_binary_scalar(LM_MUL, t1, 2.0 / ((double)R - p)));
		} else {
			RULE_T(&sc, t0, lm_binary_scalar(LM_MUL, yk, (double)R - p));
			RULE_T(&sc, t2, lm_div(t1, t0));
		}
		r = lm_mul(gk, t2);
		break;
	case LM_NORM:
		r = norm_grad(x, yk, gk, p, dim);
		break;
	case LM_MAX:
	case LM_MIN:
		r = pick_grad(x, yk, ix, gk, dim, R);
		break;
	default:
		lmi_scope_end(&sc);
		return lmi_fail(LM_ERR_INTERNAL, "backward: %s: unknown op %d", n->info->grad_name, op);
	}
fail:
	lmi_scope_end(&sc);
	if (!r) return lm_last_status();
	gin[0] = r;
	return LM_OK;
}

static lm_dtype result_dtype(lm_redop op, lm_dtype dt)
{
	if (op == LM_ARGMAX || op == LM_ARGMIN) return LM_INT64;
	if (lm_dtype_is_float(dt)) return dt;
	switch (op) {
	case LM_SUM:
	case LM_PROD: return LM_INT64;
	case LM_MAX:
	case LM_MIN: return dt;
	default: return LM_FLOAT32;
	}
}

/*
 * The reduction itself. dim: a dim or LM_DIM_ALL. p: norm p / variance correction. idx: when not
 * NULL (max/min over a dim), receives the int64 indices. Node parameters: i[0] = dim (or
 * LM_DIM_ALL), i[1] = keepdim, f[0] = p; saved: [0] = x, [1] = out, [2] = indices.
 */
static lm_tensor *reduce(lm_redop op, const lm_tensor *x, int dim, bool keepdim, double p,
                         lm_tensor **idx)
{
	const char *name = redop_names[op];
	if (!x) return lmi_fail_null(LM_ERR_ARG, "%s: input is NULL", name);
	if (lmi_check_device(name, 1, &x)) return NULL;
	int d = -1;
	if (dim != LM_DIM_ALL && lmi_wrap_dim(name, dim, x->ndim, &d)) return NULL;
	int64_t outer = 1, R = 1, inner = 1;
	int64_t shape[LM_MAX_DIMS];
	int nd = 0;
	if (d < 0) {
		R = lm_tensor_numel(x);
		if (keepdim)
			for (int i = 0; i < x->ndim; i++) shape[nd++] = 1;
	} else if (x->ndim > 0) {
		for (int i = 0; i < x->ndim; i++) {
			if (i < d) outer *= x->shape[i];
			if (i > d) inner *= x->shape[i];
			if (i == d) {
				R = x->shape[i];
				if (keepdim) shape[nd++] = 1;
			} else {
				shape[nd++] = x->shape[i];
			}
		}
	}
	bool picks = op == LM_MAX || op == LM_MIN || op == LM_ARGMAX || op == LM_ARGMIN;
	if (picks && R == 0 && outer * inner > 0)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: cannot reduce over an empty %s of shape %s", name,
		                     d < 0 ? "tensor" : "dim", lmi_shape_s(x));
	if (op == LM_NORM && isnan(p)) return lmi_fail_null(LM_ERR_ARG, "norm: p is NaN");
	lm_tensor *xc = lm_tensor_retain((lm_tensor *)x); /* saved as it is: views are not copied */
	lm_tensor *out = lmi_empty_as(name, x, nd, shape, result_dtype(op, x->dtype));
	lm_tensor *ix = idx && out ? lmi_empty_as(name, x, nd, shape, LM_INT64) : NULL;
	uint32_t mask = d >= 0 ? 1u << d : (uint32_t)((1u << x->ndim) - 1);
	int64_t dd = d < 0 ? LM_DIM_ALL : d;
	lmi_params prm = op == LM_NORM                  ? (lmi_params){.norm = {.dim = dd, .keepdim = keepdim, .mask = mask, .p = p}}
	                 : op == LM_VAR || op == LM_STD ? (lmi_params){.var = {.dim = dd, .keepdim = keepdim, .mask = mask,
	                                                                     .correction = p}}
	                                                : (lmi_params){.reduce = {.dim = dd, .keepdim = keepdim, .mask = mask}};
	if (!out || (idx && !ix) ||
	    lmi_run(name, (lmi_op)(LMI_OP_SUM + op), &prm, x->dtype, 1, (const lm_tensor *[]){x}, ix ? 2 : 1,
	            (lm_tensor *[]){out, ix})) {
		lm_tensor_release(out);
		lm_tensor_release(ix);
		lm_tensor_release(xc);
		return NULL;
	}
	if (op != LM_ARGMAX && op != LM_ARGMIN) {
		bool need_x = op != LM_SUM && op != LM_MEAN;
		const lm_tensor *save[3] = {need_x ? xc : NULL, need_x ? out : NULL, ix};
		out = lmi_finish(out, (lmi_op)(LMI_OP_SUM + op), &prm, 1, &x, 3, save, NULL);
	}
	lm_tensor_release(xc);
	if (!out) {
		lm_tensor_release(ix);
		return NULL;
	}
	if (idx) *idx = ix;
	return out;
}

lm_tensor *lm_reduce(lm_redop op, const lm_tensor *x, int dim, bool keepdim)
{
	if (op < 0 || op >= LM_REDOP_COUNT)
		return lmi_fail_null(LM_ERR_ARG, "reduce: unknown op %d", (int)op);
	double p = op == LM_NORM ? 2 : (op == LM_VAR || op == LM_STD) ? 1 : 0;
	return reduce(op, x, dim, keepdim, p, NULL);
}

lm_tensor *lm_sum(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_SUM, x, dim, keepdim, 0, NULL); }
lm_tensor *lm_mean(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_MEAN, x, dim, keepdim, 0, NULL); }
lm_tensor *lm_prod(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_PROD, x, dim, keepdim, 0, NULL); }
lm_tensor *lm_amax(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_MAX, x, dim, keepdim, 0, NULL); }
lm_tensor *lm_amin(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_MIN, x, dim, keepdim, 0, NULL); }
lm_tensor *lm_argmax(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_ARGMAX, x, dim, keepdim, 0, NULL); }
lm_tensor *lm_argmin(const lm_tensor *x, int dim, bool keepdim) { return reduce(LM_ARGMIN, x, dim, keepdim, 0, NULL); }

lm_tensor *lm_var(const lm_tensor *x, int dim, bool keepdim, int correction)
{
	if (correction < 0)
		return lmi_fail_null(LM_ERR_ARG, "var: correction %d is negative", correction);
	return reduce(LM_VAR, x, dim, keepdim, correction, NULL);
}

lm_tensor *lm_std(const lm_tensor *x, int dim, bool keepdim, int correction)
{
	if (correction < 0)
		return lmi_fail_null(LM_ERR_ARG, "std: correction %d is negative", correction);
	return reduce(LM_STD, x, dim, keepdim, correction, NULL);
}

lm_tensor *lm_norm(const lm_tensor *x, double p, int dim, bool keepdim)
{
	if (isnan(p) || p < 0) return lmi_fail_null(LM_ERR_ARG, "norm: p = %g must be >= 0", p);
	return reduce(LM_NORM, x, dim, keepdim, p, NULL);
}

/* ---------------------------------------------------------------- several dims */

/* The reduced dims as flags (each at most once); returns how many, or -1 with an error. */
static int reduced_flags(const char *name, const lm_tensor *x, int ndims, const int *dims, bool *red)
{
	int count = 0;
	for (int k = 0; k < ndims; k++) {
		int d;
		if (lmi_wrap_dim(name, dims[k], x->ndim, &d)) return -1;
		if (red[d]) {
			lmi_fail(LM_ERR_ARG, "%s: dim %d appears more than once in the list of dims", name, d + 1);
			return -1;
		}
		red[d] = true;
		count++;
	}
	return count;
}

/*
 * Over several dims at once: the reduced dims are brought together into one (a reshape when they
 * are neighbours, else a permutation that puts them last and a reshape, which copies), then one
 * reduction runs over it, so sums accumulate in one pass (in double for floats) and var/std see
 * every element of a slice. Views and reshapes are recorded, so the gradient needs no rule of its
 * own. keepdim puts back size-1 dims where the reduced ones were.
 */
static lm_tensor *reduce_dims(lm_redop op, const lm_tensor *x, int ndims, const int *dims,
                              bool keepdim, double p)
{
	const char *name = redop_names[op];
	if (!x) return lmi_fail_null(LM_ERR_ARG, "%s: input is NULL", name);
	if (op == LM_ARGMAX || op == LM_ARGMIN)
		return lmi_fail_null(LM_ERR_ARG, "%s: takes one dim (an index along several has no meaning)",
		                     name);
	if (ndims < 0 || ndims > LM_MAX_DIMS || (ndims > 0 && !dims))
		return lmi_fail_null(LM_ERR_ARG, "%s: %d dims given", name, ndims);
	bool red[LM_MAX_DIMS] = {false};
	int count = reduced_flags(name, x, ndims, dims, red);
	if (count < 0) return NULL;
	if (count == 0 || count >= x->ndim) return reduce(op, x, LM_DIM_ALL, keepdim, p, NULL);
	int first = -1;
	for (int i = 0; i < x->ndim; i++)
		if (red[i]) {
			first = i;
			break;
		}
	if (count == 1) return reduce(op, x, first, keepdim, p, NULL);
	bool run = true; /* the reduced dims are neighbours: first .. first + count - 1 */
	for (int i = first; i < first + count; i++) run = run && red[i];
	int perm[LM_MAX_DIMS], n = 0, rd;
	int64_t shape[LM_MAX_DIMS], R = 1;
	for (int i = 0; i < x->ndim; i++)
		if (red[i]) R *= x->shape[i];
	lm_tensor *y;
	if (run) { /* (..., R, ...) in place of the run */
		for (int i = 0; i < x->ndim; i++)
			if (!red[i] || i == first) shape[n++] = red[i] ? R : x->shape[i];
		rd = first;
		y = lm_reshape(x, n, shape);
	} else { /* the kept dims in order, then the reduced ones, merged */
		for (int i = 0; i < x->ndim; i++)
			if (!red[i]) {
				perm[n] = i;
				shape[n++] = x->shape[i];
			}
		for (int i = 0, k = n; i < x->ndim; i++)
			if (red[i]) perm[k++] = i;
		rd = n;
		shape[n++] = R;
		lm_tensor *pt = lm_permute(x, perm);
		y = pt ? lm_reshape(pt, n, shape) : NULL;
		lm_tensor_release(pt);
	}
	lm_tensor *r = y ? reduce(op, y, rd, false, p, NULL) : NULL;
	lm_tensor_release(y);
	if (!r || !keepdim) return r;
	for (int i = 0; i < x->ndim; i++) shape[i] = red[i] ? 1 : x->shape[i];
	lm_tensor *k = lm_reshape(r, x->ndim, shape);
	lm_tensor_release(r);
	return k;
}

lm_tensor *lm_reduce_dims(lm_redop op, const lm_tensor *x, int ndims, const int *dims,
                          bool keepdim, double p)
{
	if (op < 0 || op >= LM_REDOP_COUNT)
		return lmi_fail_null(LM_ERR_ARG, "reduce: unknown op %d", (int)op);
	if ((op == LM_VAR || op == LM_STD) && (p < 0 || p != floor(p)))
		return lmi_fail_null(LM_ERR_ARG, "%s: correction %g must be a non-negative integer",
		                     redop_names[op], p);
	if (op == LM_NORM && (isnan(p) || p < 0))
		return lmi_fail_null(LM_ERR_ARG, "norm: p = %g must be >= 0", p);
	return reduce_dims(op, x, ndims, dims, keepdim, p);
}

static lm_status minmax_dim(lm_redop op, const lm_tensor *x, int dim, bool keepdim,
                            lm_tensor **values, lm_tensor **indices)
{
	if (dim == LM_DIM_ALL)
		return lmi_fail(LM_ERR_ARG, "%s: needs a dim to return indices", redop_names[op]);
	lm_tensor *ix = NULL;
	lm_tensor *v = reduce(op, x, dim, keepdim, 0, &ix);
	if (!v) return lm_last_status();
	*values = v;
	*indices = ix;
	return LM_OK;
}

lm_status lm_max_dim(const lm_tensor *x, int dim, bool keepdim, lm_tensor **values,
                     lm_tensor **indices)
{
	return minmax_dim(LM_MAX, x, dim, keepdim, values, indices);
}

lm_status lm_min_dim(const lm_tensor *x, int dim, bool keepdim, lm_tensor **values,
                     lm_tensor **indices)
{
	return minmax_dim(LM_MIN, x, dim, keepdim, values, indices);
}

/* ---------------------------------------------------------------- count_correct */

/* The composite for a device without the slot: argmax, eq, sum, item (no graph recorded). */
static lm_status count_by_ops(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
                              int64_t *count)
{
	lmi_scope s = {0};
	bool grad = lm_set_grad_enabled(false);
	lm_tensor *a, *ab, *e, *n;
	double v = 0;
	RULE_T(&s, a, lm_argmax(logits, 1, false));
	RULE_T(&s, ab, base ? lm_binary_scalar(LM_ADD, a, (double)base) : lm_tensor_retain(a));
	RULE_T(&s, e, lm_binary(LM_EQ, ab, labels));
	RULE_T(&s, n, lm_sum(e, LM_DIM_ALL, false));
	if (lm_tensor_item(n, &v)) goto fail;
	lmi_scope_end(&s);
	lm_set_grad_enabled(grad);
	*count = (int64_t)v;
	return LM_OK;
fail:
	lmi_scope_end(&s);
	lm_set_grad_enabled(grad);
	return lm_last_status();
}

lm_status lm_count_correct(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
                           int64_t *count)
{
	static const char fname[] = "count_correct";
	if (!logits || !labels || !count)
		return lm_set_error(LM_ERR_ARG, "%s: logits, labels and count must not be NULL", fname);
	*count = 0;
	if (logits->ndim != 2)
		return lm_set_error(LM_ERR_SHAPE, "%s: logits must be 2-D (batch, classes), got shape %s",
		                    fname, lmi_shape_s(logits));
	if (labels->ndim != 1 || labels->shape[0] != logits->shape[0])
		return lm_set_error(LM_ERR_SHAPE, "%s: labels must be 1-D with one label per row of the "
		                    "logits (%lld), got shape %s", fname, (long long)logits->shape[0],
		                    lmi_shape_s(labels));
	if (lm_dtype_is_float(labels->dtype))
		return lm_set_error(LM_ERR_DTYPE, "%s: labels must be an integer dtype (class numbers), got "
		                    "%s", fname, lm_dtype_name(labels->dtype));
	lm_device d = logits->storage->device;
	if (labels->storage->device != d)
		return lm_set_error(LM_ERR_DEVICE, "%s: the logits are on %s but the labels on %s", fname,
		                    lm_device_name(d), lm_device_name(labels->storage->device));
	if (logits->shape[0] == 0) return LM_OK;
	if (logits->shape[1] == 0)
		return lm_set_error(LM_ERR_SHAPE, "%s: logits of shape %s have no classes to pick from",
		                    fname, lmi_shape_s(logits));
	/* integer logits are compared as float64, as argmax compares them; uint8 labels as int64 */
	lm_tensor *lf = lm_dtype_is_float(logits->dtype) ? lm_tensor_retain((lm_tensor *)logits)
	                                                 : lm_to_dtype(logits, LM_FLOAT64);
	lm_tensor *li = labels->dtype == LM_INT32 || labels->dtype == LM_INT64
	                    ? lm_tensor_retain((lm_tensor *)labels)
	                    : lm_to_dtype(labels, LM_INT64);
	lm_status st = lm_last_status();
	if (lf && li) {
		lmi_params prm = {.count = {.base = base}};
		lmi_exec e = {.op = LMI_OP_COUNT_CORRECT, .p = &prm, .fname = fname, .dtype = lf->dtype,
		              .nsrc = 2, .src = {lf, li}};
		if (lmi_supports(&e)) { /* one pass where the device has the loop, else four ops */
			if (!(st = lmi_compute(&e))) *count = e.count;
		} else {
			st = count_by_ops(lf, li, base, count);
		}
	}
	lm_tensor_release(lf);
	lm_tensor_release(li);
	return st;
}
