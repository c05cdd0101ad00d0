/*
 * reduce.c — reductions over one dim or all elements: result shapes and dtypes, empty inputs,
 * max/min with indices, recording.
 *
 * The input is made contiguous and seen as (outer, R, inner) around the reduced dim; the CPU
 * backend reduces the middle axis. Dtypes: sums and products of integers give int64; mean, var,
 * std and norm of integers give float32; max/min keep the dtype; arg* give int64.
 * Read next: ../backend/cpu/reduce.c.
 */
#include <math.h>

#include "ops.h"

static const char *const redop_names[LM_REDOP_COUNT] = {
	"sum", "mean", "prod", "max", "min", "argmax", "argmin", "var", "std", "norm",
};

const char *lm_redop_name(lm_redop op)
{
	return (op >= 0 && op < LM_REDOP_COUNT) ? redop_names[op] : "?";
}

static lm_status reduce_backward(lmi_node *n, const lm_tensor *g, lm_tensor **gin);

static const lmi_opdef reduce_defs[LM_REDOP_COUNT] = {
	[LM_SUM] = {"SumBackward", reduce_backward},   [LM_MEAN] = {"MeanBackward", reduce_backward},
	[LM_PROD] = {"ProdBackward", reduce_backward}, [LM_MAX] = {"MaxBackward", reduce_backward},
	[LM_MIN] = {"MinBackward", reduce_backward},   [LM_VAR] = {"VarBackward", reduce_backward},
	[LM_STD] = {"StdBackward", reduce_backward},   [LM_NORM] = {"NormBackward", reduce_backward},
};

static lm_status reduce_backward(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	(void)g;
	(void)gin;
	return lmi_fail(LM_ERR_UNSUPPORTED, "backward: %s has no backward rule yet", n->def->name);
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
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *out = xc ? lmi_empty(name, nd, shape, result_dtype(op, x->dtype)) : NULL;
	lm_tensor *ix = idx && out ? lmi_empty(name, nd, shape, LM_INT64) : NULL;
	if (!out || (idx && !ix) || lmi_cpu_reduce(op, xc, outer, R, inner, out, ix, p)) {
		lm_tensor_release(out);
		lm_tensor_release(ix);
		lm_tensor_release(xc);
		return NULL;
	}
	lmi_node *node = NULL;
	if (op != LM_ARGMAX && op != LM_ARGMIN) {
		bool need_x = op != LM_SUM && op != LM_MEAN;
		const lm_tensor *save[3] = {need_x ? xc : NULL, need_x ? out : NULL, ix};
		out = lmi_finish(out, &reduce_defs[op], 1, &x, 3, save, &node);
	}
	if (node) {
		node->i[0] = d < 0 ? LM_DIM_ALL : d;
		node->i[1] = keepdim;
		node->f[0] = p;
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
