/*
 * sort.c — sort and topk along one dim: values and int64 indices (0-based).
 *
 * Both run the CPU backend's stable merge sort on a contiguous (outer, R, inner) view; topk keeps
 * the first k of each sorted line (ties keep the lower index first). The values record a node
 * whose rule scatters the gradient back to the positions the indices name:
 * gx = zeros(x).scatter_add(dim, indices, g). Read next: ../backend/cpu/sort.c, shape.c.
 */
#include "ops.h"

/* i[0] = dim; saved: [0] = indices. */
lm_status lmi_bw_sort(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *indices;
	lm_status s = lmi_node_saved(n, 0, &indices);
	if (s) return s;
	const lmi_edge *e = &n->in[0];
	lm_tensor *z = lmi_zeros_as(g, e->ndim, e->shape, g->dtype);
	gin[0] = z ? lm_scatter_add(z, (int)n->p.sort.dim, indices, g) : NULL;
	lm_tensor_release(z);
	return gin[0] ? LM_OK : lm_last_status();
}

/* The k first of each sorted line of x along dim (k < 0: all). */
static lm_status sorted(const char *name, lmi_op op, const lm_tensor *x, int64_t k,
                        int dim, bool descending, lm_tensor **values, lm_tensor **indices)
{
	if (!values || !indices)
		return lmi_fail(LM_ERR_ARG, "%s: the result pointers must not be NULL", name);
	*values = *indices = NULL;
	lm_status s;
	if ((s = lmi_check_arg(name, "input", x)) || (s = lmi_check_device(name, 1, &x))) return s;
	int d;
	if ((s = lmi_wrap_dim(name, dim, x->ndim, &d))) return s;
	int64_t outer = 1, R = x->ndim ? x->shape[d] : 1, inner = 1;
	for (int i = 0; i < x->ndim; i++) {
		if (i < d) outer *= x->shape[i];
		if (i > d) inner *= x->shape[i];
	}
	if (k < 0) {
		k = R;
	} else if (x->ndim == 0 && k != 1) {
		return lmi_fail(LM_ERR_ARG, "%s: k = %lld for a 0-d tensor: only k = 1 is possible", name,
		                (long long)k);
	} else if (k > R) {
		return lmi_fail(LM_ERR_ARG, "%s: k = %lld is larger than dim %d of size %lld (shape %s)",
		                name, (long long)k, d + 1, (long long)R, lmi_shape_s(x));
	}
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < x->ndim; i++) shape[i] = i == d ? k : x->shape[i];
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *v = xc ? lmi_empty_as(name, x, x->ndim, shape, x->dtype) : NULL;
	lm_tensor *ix = v ? lmi_empty_as(name, x, x->ndim, shape, LM_INT64) : NULL;
	s = ix ? lmi_run(name, op, &(lmi_params){.sort = {.dim = d, .k = k, .descending = descending}}, x->dtype, 1,
	                 (const lm_tensor *[]){xc}, 2, (lm_tensor *[]){v, ix})
	       : lm_last_status();
	lm_tensor_release(xc);
	if (s) {
		lm_tensor_release(v);
		lm_tensor_release(ix);
		return s;
	}
	const lm_tensor *save[1] = {ix};
	v = lmi_finish(v, op, &(lmi_params){.sort = {.dim = d, .k = k, .descending = descending}}, 1, &x, 1, save, NULL);
	if (!v) {
		lm_tensor_release(ix);
		return lm_last_status();
	}
	*values = v;
	*indices = ix;
	return LM_OK;
}

lm_status lm_sort(const lm_tensor *x, int dim, bool descending, lm_tensor **values,
                  lm_tensor **indices)
{
	return sorted("sort", LMI_OP_SORT, x, -1, dim, descending, values, indices);
}

lm_status lm_topk(const lm_tensor *x, int64_t k, int dim, bool largest, lm_tensor **values,
                  lm_tensor **indices)
{
	if (k < 0)
		return lmi_fail(LM_ERR_ARG, "topk: k = %lld must be >= 0", (long long)k);
	return sorted("topk", LMI_OP_TOPK, x, k, dim, largest, values, indices);
}
