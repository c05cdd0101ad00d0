/*
 * view.c — views: new shape/strides/offset over the same storage, differentiable.
 *
 * view/reshape/flatten/squeeze/unsqueeze change the shape only; transpose/permute reorder strides;
 * narrow/select move the offset; expand sets broadcast strides to 0. Each records a node whose
 * backward maps the gradient back to the input's geometry. Read next: copy.c, binary.c.
 */
#include <string.h>

#include "ops.h"

/* ---------------------------------------------------------------- backward rules */

/* view, reshape, flatten, squeeze, unsqueeze: the gradient reshaped to the input's shape. */
lm_status lmi_bw_reshape(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	gin[0] = lm_reshape(g, n->in[0].ndim, n->in[0].shape);
	return gin[0] ? LM_OK : lm_last_status();
}

/* transpose(d0, d1) is its own inverse. */
lm_status lmi_bw_transpose(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	gin[0] = lm_transpose(g, (int)n->p.transpose.dim0, (int)n->p.transpose.dim1);
	return gin[0] ? LM_OK : lm_last_status();
}

/* permute(p): the gradient permuted by the inverse permutation q, q[p[k]] = k. */
lm_status lmi_bw_permute(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int inv[LM_MAX_DIMS];
	for (int k = 0; k < n->in[0].ndim; k++) inv[n->p.dims.dims[k]] = k;
	gin[0] = lm_permute(g, inv);
	return gin[0] ? LM_OK : lm_last_status();
}

/* narrow / select: zeros of the input's shape with the gradient written into the window. */
static lm_status window_backward(lmi_node *n, const lm_tensor *g, lm_tensor **gin, bool select)
{
	(void)select;
	lm_tensor *z = lmi_zeros_as(g, n->in[0].ndim, n->in[0].shape, g->dtype);
	if (!z) return lm_last_status();
	lm_tensor *w = lmi_window_of(n, z);
	lm_status s = w ? lmi_copy(w, g) : lm_last_status();
	lm_tensor_release(w);
	if (s) {
		lm_tensor_release(z);
		return s;
	}
	gin[0] = z;
	return LM_OK;
}
/* The window of t (the input's shape) that a narrow or select node n took, not recorded; NULL
 * (no error set) for any other op. The engine adds a window's gradient into the input's gradient
 * in place through it, once that gradient exists: a loop over a sequence's steps, xs[t], then
 * costs one step's bytes per step, not the whole sequence's zeros and sum. */
lm_tensor *lmi_window_of(const lmi_node *n, const lm_tensor *t)
{
	bool was = lm_set_grad_enabled(false);
	lm_tensor *w = NULL;
	if (n->op == LMI_OP_SELECT)
		w = lm_select(t, (int)n->p.select.dim, n->p.select.index);
	else if (n->op == LMI_OP_NARROW)
		w = lm_narrow(t, (int)n->p.narrow.dim, n->p.narrow.start, n->p.narrow.length);
	lm_set_grad_enabled(was);
	return w;
}

lm_status lmi_bw_narrow(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	return window_backward(n, g, gin, false);
}
lm_status lmi_bw_select(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	return window_backward(n, g, gin, true);
}

/* expand: the gradient summed over the broadcast dims. */
lm_status lmi_bw_expand(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	gin[0] = lmi_sum_to(g, n->in[0].ndim, n->in[0].shape);
	return gin[0] ? LM_OK : lm_last_status();
}

/* A view of t with the given geometry, recorded as op with parameters p (NULL: none). */
static lm_tensor *make_view(const lm_tensor *t, int ndim, const int64_t *shape,
                            const int64_t *stride, int64_t offset, lmi_op op, const lmi_params *p)
{
	if (lmi_is_block(t->dtype)) return lmi_block_refuse(lmi_ops[op].name, t->dtype), NULL;
	lm_tensor *v = lmi_view_of(t, ndim, shape, stride, offset);
	if (!v) return NULL;
	lmi_node *node;
	if (lmi_record(v, op, &lmi_ops[op], p, 1, &t, &node)) {
		lm_tensor_release(v);
		return NULL;
	}
	return v;
}

lm_tensor *lmi_view_of(const lm_tensor *t, int ndim, const int64_t *shape, const int64_t *stride,
                       int64_t offset)
{
	/* A view with no elements reads nothing: offset 0. The offsets a huge empty tensor allows
	 * ([2^31, 0, 2^31] flipped: about 2^62 elements) would overflow once scaled to bytes. */
	for (int i = 0; i < ndim; i++)
		if (shape[i] == 0) offset = 0;
	lm_tensor *v = lmi_tensor_wrap(t->storage, t->dtype, ndim, shape, stride, offset);
	if (v) v->is_view = true;
	return v;
}

/* ---------------------------------------------------------------- view / reshape */

/* Resolves one -1 in shape against numel; checks the product. */
static lm_status infer_shape(const char *fname, const lm_tensor *t, int ndim, const int64_t *shape,
                             int64_t *out)
{
	int64_t numel = lm_tensor_numel(t), known = 1;
	int infer = -1;
	if (ndim < 0 || ndim > LM_MAX_DIMS)
		return lmi_fail(LM_ERR_ARG, "%s: %d dims requested, at most %d are supported", fname, ndim,
		                LM_MAX_DIMS);
	for (int i = 0; i < ndim; i++) {
		if (shape[i] == -1) {
			if (infer >= 0)
				return lmi_fail(LM_ERR_ARG, "%s: only one size may be -1, got %s", fname,
				                lmi_dims_s(ndim, shape));
			infer = i;
			continue;
		}
		if (shape[i] < 0)
			return lmi_fail(LM_ERR_ARG, "%s: size %lld at dim %lld is negative", fname,
			                (long long)shape[i], lmi_1(i));
		if (__builtin_mul_overflow(known, shape[i], &known))
			return lmi_fail(LM_ERR_OVERFLOW, "%s: the element count of %s overflows", fname,
			                lmi_dims_s(ndim, shape));
		out[i] = shape[i];
	}
	if (infer >= 0) {
		if (known == 0 || numel % known)
			return lmi_fail(LM_ERR_SHAPE, "%s: shape %s is invalid for input of shape %s (%lld elements)",
			                fname, lmi_dims_s(ndim, shape), lmi_shape_s(t), (long long)numel);
		out[infer] = numel / known;
		known = numel;
	}
	if (known != numel)
		return lmi_fail(LM_ERR_SHAPE, "%s: shape %s is invalid for input of shape %s (%lld elements)",
		                fname, lmi_dims_s(ndim, shape), lmi_shape_s(t), (long long)numel);
	return lmi_numel_checked(fname, ndim, out, &known); /* with no elements: the other sizes */
}

/*
 * Strides that give t's elements in C order at the new shape, or false when t's layout cannot
 * (then a copy is needed). Groups of old dims that are contiguous with each other are matched
 * with groups of new dims of the same element count.
 */
static bool view_strides(const lm_tensor *t, int ndim, const int64_t *shape, int64_t *stride)
{
	if (lm_tensor_numel(t) == 0 || t->ndim == 0) {
		lmi_contiguous_strides(ndim, shape, stride);
		return true;
	}
	int vd = ndim - 1;
	int64_t base = t->stride[t->ndim - 1], tn = 1, vn = 1;
	for (int d = t->ndim - 1; d >= 0; d--) {
		tn *= t->shape[d];
		bool chunk_end = d == 0 || (t->shape[d - 1] != 1 && t->stride[d - 1] != tn * base);
		if (!chunk_end) continue;
		while (vd >= 0 && (vn < tn || shape[vd] == 1)) {
			stride[vd] = vn * base;
			vn *= shape[vd];
			vd--;
		}
		if (vn != tn) return false;
		if (d > 0) {
			base = t->stride[d - 1];
			tn = vn = 1;
		}
	}
	return vd == -1;
}

lm_tensor *lm_view(const lm_tensor *t, int ndim, const int64_t *shape)
{
	int64_t s[LM_MAX_DIMS], st[LM_MAX_DIMS];
	if (infer_shape("view", t, ndim, shape, s)) return NULL;
	if (!view_strides(t, ndim, s, st))
		return lmi_fail_null(LM_ERR_SHAPE,
		                     "view: shape %s is incompatible with the strides of input %s; use "
		                     "reshape (which copies) or contiguous first",
		                     lmi_dims_s(ndim, s), lmi_shape_s(t));
	return make_view(t, ndim, s, st, t->offset, LMI_OP_VIEW, NULL);
}

lm_tensor *lm_reshape(const lm_tensor *t, int ndim, const int64_t *shape)
{
	int64_t s[LM_MAX_DIMS], st[LM_MAX_DIMS];
	if (infer_shape("reshape", t, ndim, shape, s)) return NULL;
	if (view_strides(t, ndim, s, st)) return make_view(t, ndim, s, st, t->offset, LMI_OP_RESHAPE, NULL);
	lm_tensor *c = lmi_contiguous_copy(t, t->dtype);
	if (!c) return NULL;
	lmi_contiguous_strides(ndim, s, st);
	lm_tensor *out = lmi_tensor_wrap(c->storage, c->dtype, ndim, s, st, 0);
	lm_tensor_release(c);
	if (!out) return NULL;
	lmi_node *node;
	if (lmi_record(out, LMI_OP_RESHAPE, &lmi_ops[LMI_OP_RESHAPE], NULL, 1, &t, &node)) {
		lm_tensor_release(out);
		return NULL;
	}
	return out;
}

lm_tensor *lm_flatten(const lm_tensor *t, int start_dim, int end_dim)
{
	int s0, s1;
	if (t->ndim == 0) {
		int64_t one = 1;
		if (lmi_wrap_dim("flatten", start_dim, 0, &s0) || lmi_wrap_dim("flatten", end_dim, 0, &s1))
			return NULL;
		int64_t st = 1;
		return make_view(t, 1, &one, &st, t->offset, LMI_OP_FLATTEN, NULL);
	}
	if (lmi_wrap_dim("flatten", start_dim, t->ndim, &s0) || lmi_wrap_dim("flatten", end_dim, t->ndim, &s1))
		return NULL;
	if (s0 > s1)
		return lmi_fail_null(LM_ERR_ARG, "flatten: start dim %lld comes after end dim %lld",
		                     lmi_1(s0), lmi_1(s1));
	int64_t shape[LM_MAX_DIMS];
	int n = 0;
	for (int i = 0; i < s0; i++) shape[n++] = t->shape[i];
	int64_t m = 1;
	for (int i = s0; i <= s1; i++) m *= t->shape[i];
	shape[n++] = m;
	for (int i = s1 + 1; i < t->ndim; i++) shape[n++] = t->shape[i];
	int64_t st[LM_MAX_DIMS];
	if (view_strides(t, n, shape, st)) return make_view(t, n, shape, st, t->offset, LMI_OP_FLATTEN, NULL);
	return lm_reshape(t, n, shape);
}

/* ---------------------------------------------------------------- reordering */

lm_tensor *lm_transpose(const lm_tensor *t, int d0, int d1)
{
	int a, b;
	if (lmi_wrap_dim("transpose", d0, t->ndim, &a) || lmi_wrap_dim("transpose", d1, t->ndim, &b))
		return NULL;
	int64_t shape[LM_MAX_DIMS], st[LM_MAX_DIMS];
	memcpy(shape, t->shape, sizeof shape);
	memcpy(st, t->stride, sizeof st);
	if (t->ndim > 0) {
		shape[a] = t->shape[b];
		shape[b] = t->shape[a];
		st[a] = t->stride[b];
		st[b] = t->stride[a];
	}
	return make_view(t, t->ndim, shape, st, t->offset, LMI_OP_TRANSPOSE,
	                 &(lmi_params){.transpose = {.dim0 = a, .dim1 = b}});
}

lm_tensor *lm_t(const lm_tensor *t)
{
	if (t->ndim > 2)
		return lmi_fail_null(LM_ERR_SHAPE, "t: expects a tensor of at most 2 dims, got shape %s",
		                     lmi_shape_s(t));
	if (t->ndim < 2) return make_view(t, t->ndim, t->shape, t->stride, t->offset, LMI_OP_VIEW, NULL);
	return lm_transpose(t, 0, 1);
}

lm_tensor *lm_permute(const lm_tensor *t, const int *dims)
{
	int64_t shape[LM_MAX_DIMS], st[LM_MAX_DIMS];
	lmi_params p = {.dims = {.ndims = t->ndim}};
	bool seen[LM_MAX_DIMS] = {false};
	for (int i = 0; i < t->ndim; i++) {
		int d;
		if (lmi_wrap_dim("permute", dims[i], t->ndim, &d)) return NULL;
		if (seen[d])
			return lmi_fail_null(LM_ERR_ARG, "permute: dim %lld appears twice in the permutation",
			                     lmi_1(d));
		seen[d] = true;
		shape[i] = t->shape[d];
		st[i] = t->stride[d];
		p.dims.dims[i] = d;
	}
	return make_view(t, t->ndim, shape, st, t->offset, LMI_OP_PERMUTE, &p);
}

/* ---------------------------------------------------------------- windows */

lm_tensor *lm_narrow(const lm_tensor *t, int dim, int64_t start, int64_t length)
{
	int d;
	if (t->ndim == 0)
		return lmi_fail_null(LM_ERR_INDEX, "narrow: cannot narrow a 0-d tensor");
	if (lmi_wrap_dim("narrow", dim, t->ndim, &d)) return NULL;
	int64_t size = t->shape[d], given = start;
	if (start < 0) start += size;
	if (start < 0 || start > size || length < 0 || length > size - start)
		return lmi_fail_null(LM_ERR_INDEX,
		                     "narrow: start %lld and length %lld out of range for dim %lld of size "
		                     "%lld", lmi_1(given), (long long)length, lmi_1(d), (long long)size);
	int64_t shape[LM_MAX_DIMS];
	memcpy(shape, t->shape, sizeof shape);
	shape[d] = length;
	return make_view(t, t->ndim, shape, t->stride, t->offset + start * t->stride[d], LMI_OP_NARROW,
	                 &(lmi_params){.narrow = {.dim = d, .start = start, .length = length}});
}

lm_tensor *lm_select(const lm_tensor *t, int dim, int64_t index)
{
	int d;
	if (t->ndim == 0)
		return lmi_fail_null(LM_ERR_INDEX, "select: cannot index a 0-d tensor");
	if (lmi_wrap_dim("select", dim, t->ndim, &d)) return NULL;
	int64_t size = t->shape[d];
	int64_t i = index < 0 ? index + size : index;
	if (i < 0 || i >= size)
		return lmi_fail_null(LM_ERR_INDEX, "select: index %lld is out of range for dim %lld of size "
		                     "%lld", lmi_1(index), lmi_1(d), (long long)size);
	int64_t shape[LM_MAX_DIMS], st[LM_MAX_DIMS];
	int n = 0;
	for (int k = 0; k < t->ndim; k++)
		if (k != d) {
			shape[n] = t->shape[k];
			st[n++] = t->stride[k];
		}
	return make_view(t, n, shape, st, t->offset + i * t->stride[d], LMI_OP_SELECT,
	                 &(lmi_params){.select = {.dim = d, .index = i}});
}

/* ---------------------------------------------------------------- broadcasting views */

lm_tensor *lm_expand(const lm_tensor *t, int ndim, const int64_t *shape)
{
	if (ndim < t->ndim || ndim > LM_MAX_DIMS)
		return lmi_fail_null(LM_ERR_SHAPE, "expand: cannot expand shape %s to %d dims", lmi_shape_s(t),
		                     ndim);
	int64_t s[LM_MAX_DIMS], st[LM_MAX_DIMS];
	int off = ndim - t->ndim;
	for (int i = 0; i < ndim; i++) {
		int k = i - off;
		int64_t want = shape[i];
		if (k < 0) {
			if (want < 0)
				return lmi_fail_null(LM_ERR_ARG, "expand: size %lld for new leading dim %lld",
				                     (long long)want, lmi_1(i));
			s[i] = want;
			st[i] = 0;
			continue;
		}
		if (want == -1) want = t->shape[k];
		if (want == t->shape[k]) {
			s[i] = want;
			st[i] = t->stride[k];
		} else if (t->shape[k] == 1 && want >= 0) {
			s[i] = want;
			st[i] = 0;
		} else {
			return lmi_fail_null(LM_ERR_SHAPE,
			                     "expand: cannot expand shape %s to %s (dim %lld: %lld vs %lld)",
			                     lmi_shape_s(t), lmi_dims_s(ndim, shape), lmi_1(i), (long long)t->shape[k],
			                     (long long)shape[i]);
		}
	}
	int64_t n;
	if (lmi_numel_checked("expand", ndim, s, &n)) return NULL;
	return make_view(t, ndim, s, st, t->offset, LMI_OP_EXPAND, NULL);
}

lm_tensor *lm_squeeze(const lm_tensor *t, int dim)
{
	int64_t shape[LM_MAX_DIMS], st[LM_MAX_DIMS];
	int n = 0, d = -1;
	if (dim != LM_ALL_DIMS && lmi_wrap_dim("squeeze", dim, t->ndim, &d)) return NULL;
	for (int k = 0; k < t->ndim; k++) {
		bool drop = t->shape[k] == 1 && (dim == LM_ALL_DIMS || k == d);
		if (drop) continue;
		shape[n] = t->shape[k];
		st[n++] = t->stride[k];
	}
	return make_view(t, n, shape, st, t->offset, LMI_OP_SQUEEZE, NULL);
}

lm_tensor *lm_unsqueeze(const lm_tensor *t, int dim)
{
	int d;
	if (t->ndim >= LM_MAX_DIMS)
		return lmi_fail_null(LM_ERR_ARG, "unsqueeze: shape %s already has the maximum of %d dims",
		                     lmi_shape_s(t), LM_MAX_DIMS);
	if (lmi_wrap_dim("unsqueeze", dim, t->ndim + 1, &d)) return NULL;
	int64_t shape[LM_MAX_DIMS], st[LM_MAX_DIMS];
	int n = 0;
	for (int k = 0; k <= t->ndim; k++) {
		if (k == d) {
			shape[n] = 1;
			st[n++] = k < t->ndim ? t->stride[k] * t->shape[k] : 1;
		}
		if (k < t->ndim) {
			shape[n] = t->shape[k];
			st[n++] = t->stride[k];
		}
	}
	return make_view(t, n, shape, st, t->offset, LMI_OP_UNSQUEEZE, NULL);
}

lm_tensor *lm_as_strided(const lm_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                         int64_t offset)
{
	int64_t n;
	if (lmi_numel_checked("as_strided", ndim, shape, &n)) return NULL;
	int64_t lo = offset, hi = offset;
	for (int i = 0; i < ndim && n > 0; i++) {
		if (strides[i] < 0)
			return lmi_fail_null(LM_ERR_ARG, "as_strided: stride %lld at dim %lld is negative",
			                     (long long)strides[i], lmi_1(i));
		int64_t span;
		if (__builtin_mul_overflow(shape[i] - 1, strides[i], &span) ||
		    __builtin_add_overflow(hi, span, &hi))
			return lmi_fail_null(LM_ERR_OVERFLOW, "as_strided: the extent of %s overflows",
			                     lmi_dims_s(ndim, shape));
	}
	int64_t cap = (int64_t)(t->storage->nbytes / lmi_elem_size(t->dtype));
	if (offset < 0 || (n > 0 && hi >= cap) || lo > cap)
		return lmi_fail_null(LM_ERR_INDEX,
		                     "as_strided: shape %s with offset %lld reaches element %lld of a storage "
		                     "of %lld", lmi_dims_s(ndim, shape), (long long)offset, lmi_1(hi),
		                     (long long)cap);
	if (lmi_any_requires_grad(1, &t))
		return lmi_fail_null(LM_ERR_UNSUPPORTED, "as_strided: not differentiable; use view, narrow, "
		                     "select or expand on tensors that require grad, or detach first");
	return lmi_view_of(t, ndim, shape, strides, offset);
}

lm_tensor *lm_detach(const lm_tensor *t)
{
	lm_tensor *v = lmi_tensor_wrap(t->storage, t->dtype, t->ndim, t->shape, t->stride, t->offset);
	if (v) v->is_view = t->is_view;
	return v;
}
