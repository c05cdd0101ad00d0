/*
 * join.c — cat and stack: several tensors into one.
 *
 * The result (dtype: all inputs promoted) is allocated once and each input is copied into its
 * slab, a view of the result (narrowed along dim for cat, selected at k for stack), by the strided
 * copy loop: contiguous slabs become memcpy. The backward rules hand each input the matching view
 * of the gradient; the slab offsets come from the input shapes that the node's edges keep.
 * Read next: index.c, ../core/copy.c.
 */
#include "ops.h"

/* ---------------------------------------------------------------- backward rules */

/* g converted to the dtype of input k when they differ (a promoted input). */
static lm_tensor *as_input_dtype(lmi_node *n, int k, lm_tensor *v)
{
	if (!v || v->dtype == n->in[k].dtype) return v;
	lm_tensor *c = lmi_contiguous_copy(v, n->in[k].dtype);
	lm_tensor_release(v);
	return c;
}

static lm_status release_all(lmi_node *n, lm_tensor **gin)
{
	lm_status s = lm_last_status();
	for (int k = 0; k < n->nin; k++) {
		lm_tensor_release(gin[k]);
		gin[k] = NULL;
	}
	return s ? s : LM_ERR_INTERNAL;
}

/* cat: input k gets narrow(g, dim, offset_k, size_k). i[0] = dim. Inputs skipped as empty 1-D
 * tensors (shape (0), the legacy case) get an empty gradient. */
lm_status lmi_bw_cat(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int dim = (int)n->p.dim.dim;
	int64_t off = 0;
	for (int k = 0; k < n->nin; k++) {
		const lmi_edge *e = &n->in[k];
		bool skipped = e->ndim != g->ndim;
		int64_t len = skipped ? 0 : e->shape[dim];
		if (e->needs_grad) {
			gin[k] = skipped ? lmi_zeros_as(g, e->ndim, e->shape, e->dtype)
			                 : as_input_dtype(n, k, lm_narrow(g, dim, off, len));
			if (!gin[k]) return release_all(n, gin);
		}
		off += len;
	}
	return LM_OK;
}

/* stack: input k gets select(g, dim, k). i[0] = dim. */
lm_status lmi_bw_stack(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	for (int k = 0; k < n->nin; k++) {
		if (!n->in[k].needs_grad) continue;
		gin[k] = as_input_dtype(n, k, lm_select(g, (int)n->p.dim.dim, k));
		if (!gin[k]) return release_all(n, gin);
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- forward */

/* Checks the list itself: non-empty, no NULL, one device. Sets *dt to the promoted dtype. */
static lm_status check_list(const char *name, int n, lm_tensor *const *ts, lm_dtype *dt)
{
	if (n <= 0 || !ts)
		return lmi_fail(LM_ERR_ARG, "%s: expects a non-empty list of tensors, got %d", name, n);
	for (int k = 0; k < n; k++)
		if (!ts[k]) return lmi_fail(LM_ERR_ARG, "%s: tensor %d of the list is NULL", name, k + 1);
	lm_status s = lmi_check_device(name, n, (const lm_tensor *const *)ts);
	if (s) return s;
	*dt = ts[0]->dtype;
	for (int k = 1; k < n; k++) *dt = lm_promote_types(*dt, ts[k]->dtype);
	return LM_OK;
}

/* Copies src into the view of out with out's strides, the given shape, and offset (elements). */
static lm_status copy_into(lm_tensor *out, int ndim, const int64_t *shape, int64_t offset,
                           const lm_tensor *src, const int64_t *stride)
{
	lm_tensor *v = lmi_view_of(out, ndim, shape, stride, out->offset + offset);
	if (!v) return lm_last_status();
	lm_status s = lmi_copy(v, src);
	lm_tensor_release(v);
	return s;
}

/* A 1-D tensor with no elements: the one input cat may skip whatever the others' shape. */
static bool legacy_empty(const lm_tensor *t) { return t->ndim == 1 && t->shape[0] == 0; }

lm_tensor *lm_cat(int n, lm_tensor *const *ts, int dim)
{
	lm_dtype dt;
	if (check_list("cat", n, ts, &dt)) return NULL;
	/* the reference input: the first that is not a skippable empty 1-D tensor */
	int ref = 0;
	while (ref < n - 1 && legacy_empty(ts[ref])) ref++;
	const lm_tensor *r = ts[ref];
	if (r->ndim == 0)
		return lmi_fail_null(LM_ERR_SHAPE, "cat: tensor %d is 0-d; zero-dimensional tensors cannot "
		                     "be concatenated (use stack)", ref + 1);
	int d;
	if (lmi_wrap_dim("cat", dim, r->ndim, &d)) return NULL;
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < r->ndim; i++) shape[i] = r->shape[i];
	shape[d] = 0;
	for (int k = 0; k < n; k++) {
		const lm_tensor *t = ts[k];
		if (legacy_empty(t) && r->ndim != 1) continue;
		if (t->ndim != r->ndim)
			return lmi_fail_null(LM_ERR_SHAPE, "cat: tensor %d has %d dims (shape %s) but tensor %d "
			                     "has %d (shape %s)", k + 1, t->ndim, lmi_shape_s(t), ref + 1, r->ndim,
			                     lmi_shape_s(r));
		for (int i = 0; i < r->ndim; i++)
			if (i != d && t->shape[i] != r->shape[i])
				return lmi_fail_null(LM_ERR_SHAPE, "cat: tensor %d has shape %s but tensor %d has "
				                     "shape %s: sizes must match except in dim %d (dim %d: %lld vs "
				                     "%lld)", k + 1, lmi_shape_s(t), ref + 1, lmi_shape_s(r), d + 1, i + 1,
				                     (long long)t->shape[i], (long long)r->shape[i]);
		if (__builtin_add_overflow(shape[d], t->shape[d], &shape[d]))
			return lmi_fail_null(LM_ERR_OVERFLOW, "cat: the size of dim %d overflows", d + 1);
	}
	lm_tensor *out = lmi_empty_as("cat", r, r->ndim, shape, dt);
	if (!out) return NULL;
	int64_t off = 0;
	for (int k = 0; k < n; k++) {
		const lm_tensor *t = ts[k];
		if (legacy_empty(t) && r->ndim != 1) continue;
		int64_t part[LM_MAX_DIMS];
		for (int i = 0; i < r->ndim; i++) part[i] = i == d ? t->shape[d] : shape[i];
		if (copy_into(out, r->ndim, part, off * out->stride[d], t, out->stride)) {
			lm_tensor_release(out);
			return NULL;
		}
		off += t->shape[d];
	}
	out = lmi_finish(out, LMI_OP_CAT, &(lmi_params){.dim = {.dim = d}}, n, (const lm_tensor *const *)ts, 0, NULL, NULL);
	return out;
}

lm_tensor *lm_stack(int n, lm_tensor *const *ts, int dim)
{
	lm_dtype dt;
	if (check_list("stack", n, ts, &dt)) return NULL;
	const lm_tensor *r = ts[0];
	if (r->ndim + 1 > LM_MAX_DIMS)
		return lmi_fail_null(LM_ERR_SHAPE, "stack: the result would have %d dims, at most %d are "
		                     "supported", r->ndim + 1, LM_MAX_DIMS);
	int d;
	if (lmi_wrap_dim("stack", dim, r->ndim + 1, &d)) return NULL;
	for (int k = 1; k < n; k++) {
		bool same = ts[k]->ndim == r->ndim;
		for (int i = 0; same && i < r->ndim; i++) same = ts[k]->shape[i] == r->shape[i];
		if (!same)
			return lmi_fail_null(LM_ERR_SHAPE, "stack: tensor %d has shape %s but tensor 1 has "
			                     "shape %s: all must be equal", k + 1, lmi_shape_s(ts[k]),
			                     lmi_shape_s(r));
	}
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0, j = 0; i <= r->ndim; i++) shape[i] = i == d ? n : r->shape[j++];
	lm_tensor *out = lmi_empty_as("stack", r, r->ndim + 1, shape, dt);
	if (!out) return NULL;
	/* slab k: out with dim d removed, offset k * stride[d] */
	int64_t st[LM_MAX_DIMS];
	for (int i = 0, j = 0; i <= r->ndim; i++)
		if (i != d) st[j++] = out->stride[i];
	for (int k = 0; k < n; k++)
		if (copy_into(out, r->ndim, r->shape, k * out->stride[d], ts[k], st)) {
			lm_tensor_release(out);
			return NULL;
		}
	out = lmi_finish(out, LMI_OP_STACK, &(lmi_params){.dim = {.dim = d}}, n, (const lm_tensor *const *)ts, 0, NULL, NULL);
	return out;
}
