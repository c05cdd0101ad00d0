/*
 * shape.c — ops that rearrange or mask values without arithmetic between elements (apart from
 * cumsum's running sum): cumsum, tril/triu, repeat, flip, pad.
 *
 * flip is a view with negative strides copied out by the strided copy loop; pad fills the result
 * with the constant and copies x into a window of it; repeat copies x into one corner and tiles
 * it by block copies; cumsum and tril/triu run CPU loops on a contiguous input. Backward rules:
 * cumsum's is the reversed cumulative sum flip(cumsum(flip(g))); tril/triu mask g the same way;
 * repeat sums the tiles of g; flip flips g back; pad narrows g to the unpadded window.
 * Read next: ../backend/cpu/shape.c, window.c.
 */
#include "ops.h"

/* ---------------------------------------------------------------- backward rules */

/* cumsum: gx_i = sum_{j >= i} g_j = flip(cumsum(flip(g))). i[0] = dim. */
lm_status lmi_bw_cumsum(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	if (g->ndim == 0) { /* a 0-d cumsum is the identity */
		gin[0] = lm_tensor_retain((lm_tensor *)g);
		return LM_OK;
	}
	int dim = (int)n->p.dim.dim;
	lm_tensor *f = lm_flip(g, 1, &dim);
	lm_tensor *c = f ? lm_cumsum(f, dim) : NULL;
	gin[0] = c ? lm_flip(c, 1, &dim) : NULL;
	lm_tensor_release(f);
	lm_tensor_release(c);
	return gin[0] ? LM_OK : lm_last_status();
}

/* tril/triu: the same triangle of g. i[0] = k, i[1] = upper. */
lm_status lmi_bw_triangle(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	gin[0] = n->op == LMI_OP_TRIU ? lm_triu(g, n->p.triangle.k) : lm_tril(g, n->p.triangle.k);
	return gin[0] ? LM_OK : lm_last_status();
}

/* repeat: the tiles of g summed. i[0] = nrep, i[1..nrep] = repeats. Each repeated dim d of g,
 * of size r*s, is split into (r, s) and summed over r; when the split would exceed the dim limit,
 * the r narrow slices are added instead. Finally the added leading dims (all size 1 by then) are
 * dropped by reshaping to x's shape. */
lm_status lmi_bw_repeat(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int nrep = (int)n->p.repeat.ndims, lead = nrep - n->in[0].ndim;
	lm_tensor *t = lm_tensor_retain((lm_tensor *)g);
	for (int d = 0; d < nrep && t; d++) {
		int64_t r = n->p.repeat.repeats[d], s = d < lead ? 1 : n->in[0].shape[d - lead]; /* g: r*s at d */
		if (r == 1) continue;
		lm_tensor *next;
		if (t->ndim < LM_MAX_DIMS) {
			int64_t shape[LM_MAX_DIMS];
			for (int i = 0, j = 0; i < t->ndim; i++) {
				if (i == d) {
					shape[j++] = r;
					shape[j++] = s;
				} else {
					shape[j++] = t->shape[i];
				}
			}
			lm_tensor *v = lm_reshape(t, t->ndim + 1, shape);
			next = v ? lm_sum(v, d, false) : NULL;
			lm_tensor_release(v);
		} else { /* sum of the r slices (r >= 1 here: r = 0 leaves an empty dim) */
			next = r ? lm_narrow(t, d, 0, s) : NULL;
			if (!r) {
				int64_t shape[LM_MAX_DIMS];
				for (int i = 0; i < t->ndim; i++) shape[i] = i == d ? s : t->shape[i];
				next = lmi_zeros_as(t, t->ndim, shape, t->dtype);
			}
			for (int64_t k = 1; k < r && next; k++) {
				lm_tensor *sl = lm_narrow(t, d, k * s, s);
				lm_tensor *sum = sl ? lm_add(next, sl) : NULL;
				lm_tensor_release(sl);
				lm_tensor_release(next);
				next = sum;
			}
		}
		lm_tensor_release(t);
		t = next;
	}
	gin[0] = t ? lm_reshape(t, n->in[0].ndim, n->in[0].shape) : NULL;
	lm_tensor_release(t);
	return gin[0] ? LM_OK : lm_last_status();
}

/* flip: g flipped back. i[0] = ndims, i[1..] = dims. */
lm_status lmi_bw_flip(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int dims[LM_MAX_DIMS];
	for (int k = 0; k < n->p.dims.ndims; k++) dims[k] = (int)n->p.dims.dims[k];
	gin[0] = lm_flip(g, (int)n->p.dims.ndims, dims);
	return gin[0] ? LM_OK : lm_last_status();
}

/* pad: g narrowed to the window x occupies. i[0] = npairs, i[1..2*npairs] = pads. */
lm_status lmi_bw_pad(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	int npairs = (int)n->p.pad.npairs;
	lm_tensor *t = lm_tensor_retain((lm_tensor *)g);
	for (int p = 0; p < npairs && t; p++) {
		int d = g->ndim - 1 - p;
		lm_tensor *v = lm_narrow(t, d, n->p.pad.pads[2 * p], n->in[0].shape[d]);
		lm_tensor_release(t);
		t = v;
	}
	gin[0] = t;
	return t ? LM_OK : lm_last_status();
}

/* ---------------------------------------------------------------- cumsum */

lm_tensor *lm_cumsum(const lm_tensor *x, int dim)
{
	if (lmi_check_arg("cumsum", "input", x) || lmi_check_device("cumsum", 1, &x)) return NULL;
	int d;
	if (lmi_wrap_dim("cumsum", dim, x->ndim, &d)) return NULL;
	lm_dtype rt = lm_dtype_is_float(x->dtype) ? x->dtype : LM_INT64;
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *out = xc ? lmi_empty_as("cumsum", x, x->ndim, x->shape, rt) : NULL;
	if (out && lmi_run("cumsum", LMI_OP_CUMSUM, &(lmi_params){.dim = {.dim = d}}, x->dtype, 1,
	                   (const lm_tensor *[]){xc}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(xc);
	out = lmi_finish(out, LMI_OP_CUMSUM, &(lmi_params){.dim = {.dim = d}}, 1, &x, 0, NULL, NULL);
	return out;
}

/* ---------------------------------------------------------------- tril / triu */

static lm_tensor *triangle(const char *name, lmi_op op, const lm_tensor *x, int64_t k)
{
	if (lmi_check_arg(name, "input", x) || lmi_check_device(name, 1, &x)) return NULL;
	if (x->ndim < 2)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: needs a matrix (or a batch of them), got shape %s",
		                     name, lmi_shape_s(x));
	int64_t M = x->shape[x->ndim - 2], N = x->shape[x->ndim - 1];
	/* every diagonal beyond the matrix gives the same result; clamped, row + k cannot overflow */
	k = k > N ? N : k < -M ? -M : k;
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *out = xc ? lmi_empty_as(name, x, x->ndim, x->shape, x->dtype) : NULL;
	if (out && lmi_run(name, op, &(lmi_params){.triangle = {.k = k}}, x->dtype, 1, (const lm_tensor *[]){xc}, 1,
	                   (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(xc);
	out = lmi_finish(out, op, &(lmi_params){.triangle = {.k = k}}, 1, &x, 0, NULL, NULL);
	return out;
}

lm_tensor *lm_tril(const lm_tensor *x, int64_t k) { return triangle("tril", LMI_OP_TRIL, x, k); }
lm_tensor *lm_triu(const lm_tensor *x, int64_t k) { return triangle("triu", LMI_OP_TRIU, x, k); }

/* ---------------------------------------------------------------- repeat */

lm_tensor *lm_repeat(const lm_tensor *x, int nrep, const int64_t *repeats)
{
	if (lmi_check_arg("repeat", "input", x) || lmi_check_device("repeat", 1, &x)) return NULL;
	if (nrep < x->ndim || nrep > LM_MAX_DIMS || (nrep > 0 && !repeats))
		return lmi_fail_null(LM_ERR_ARG, "repeat: %d repeat counts for a tensor of shape %s: need "
		                     "between %d and %d", nrep, lmi_shape_s(x), x->ndim, LM_MAX_DIMS);
	int64_t xshape[LM_MAX_DIMS], shape[LM_MAX_DIMS];
	int lead = nrep - x->ndim;
	for (int d = 0; d < nrep; d++) {
		if (repeats[d] < 0)
			return lmi_fail_null(LM_ERR_ARG, "repeat: repeat count %lld for dim %d is negative",
			                     (long long)repeats[d], d + 1);
		xshape[d] = d < lead ? 1 : x->shape[d - lead];
		if (__builtin_mul_overflow(xshape[d], repeats[d], &shape[d]))
			return lmi_fail_null(LM_ERR_OVERFLOW, "repeat: dim %d of size %lld repeated %lld times "
			                     "overflows", d + 1, (long long)xshape[d], (long long)repeats[d]);
	}
	lm_tensor *out = lmi_empty_as("repeat", x, nrep, shape, x->dtype);
	if (!out) return NULL;
	if (lm_tensor_numel(out) > 0) {
		/* x into the corner block: out's strides, x's (padded) shape */
		lm_tensor *corner = lmi_view_of(out, nrep, xshape, out->stride, 0);
		lm_status s = corner ? lmi_copy(corner, x) : lm_last_status();
		lm_tensor_release(corner);
		lmi_params prm = {.repeat = {.ndims = nrep}};
		for (int d = 0; d < nrep; d++) prm.repeat.repeats[d] = repeats[d];
		if (s || lmi_run("repeat", LMI_OP_REPEAT, &prm, x->dtype, 1, (const lm_tensor *[]){x}, 1, (lm_tensor *[]){out})) {
			lm_tensor_release(out);
			return NULL;
		}
	}
	lmi_params prm = {.repeat = {.ndims = nrep}};
	for (int d = 0; d < nrep; d++) prm.repeat.repeats[d] = repeats[d];
	out = lmi_finish(out, LMI_OP_REPEAT, &prm, 1, &x, 0, NULL, NULL);
	return out;
}

/* ---------------------------------------------------------------- flip */

lm_tensor *lm_flip(const lm_tensor *x, int ndims, const int *dims)
{
	if (lmi_check_arg("flip", "input", x) || lmi_check_device("flip", 1, &x)) return NULL;
	if (ndims < 0 || ndims > LM_MAX_DIMS || (ndims > 0 && !dims))
		return lmi_fail_null(LM_ERR_ARG, "flip: %d dims given", ndims);
	int64_t stride[LM_MAX_DIMS], offset = x->offset;
	int wrapped[LM_MAX_DIMS];
	bool seen[LM_MAX_DIMS] = {false};
	for (int i = 0; i < x->ndim; i++) stride[i] = x->stride[i];
	for (int k = 0; k < ndims; k++) {
		int d;
		if (lmi_wrap_dim("flip", dims[k], x->ndim, &d)) return NULL;
		if (seen[d])
			return lmi_fail_null(LM_ERR_ARG, "flip: dim %d appears more than once", d + 1);
		seen[d] = true;
		wrapped[k] = d;
		if (x->ndim == 0) continue;
		/* element i of the flipped dim is element size-1-i of x's */
		if (x->shape[d] > 0) offset += (x->shape[d] - 1) * x->stride[d];
		stride[d] = -x->stride[d];
	}
	lm_tensor *v = lmi_view_of(x, x->ndim, x->shape, stride, offset);
	lm_tensor *out = v ? lmi_contiguous_copy(v, x->dtype) : NULL;
	lm_tensor_release(v);
	lmi_params prm = {.dims = {.ndims = ndims}};
	for (int k = 0; k < ndims; k++) prm.dims.dims[k] = wrapped[k];
	out = lmi_finish(out, LMI_OP_FLIP, &prm, 1, &x, 0, NULL, NULL);
	return out;
}

/* ---------------------------------------------------------------- pad */

/* Negative pads crop, as torch.nn.functional.pad: x narrowed by what they remove (a view, so the
 * gradient flows back through it), then padded by the non-negative rest. */
static lm_tensor *crop_then_pad(const lm_tensor *x, int npairs, const int64_t *pads, double value)
{
	int64_t rest[2 * LM_MAX_DIMS];
	lm_tensor *cur = lm_tensor_retain((lm_tensor *)x);
	for (int p = 0; p < npairs && cur; p++) {
		int d = x->ndim - 1 - p;
		int64_t before = pads[2 * p], after = pads[2 * p + 1], size = x->shape[d];
		/* compared before negating: -INT64_MIN overflows */
		if ((before < 0 && before < -size) || (after < 0 && after < -size) ||
		    (before < 0 && after < 0 && -before > size + after)) {
			lm_tensor_release(cur);
			return lmi_fail_null(LM_ERR_ARG, "pad: padding (%lld, %lld) crops more than dim %d of "
			                     "shape %s holds", (long long)before, (long long)after, d + 1,
			                     lmi_shape_s(x));
		}
		int64_t cb = before < 0 ? -before : 0, ca = after < 0 ? -after : 0;
		rest[2 * p] = before - (before < 0 ? before : 0);
		rest[2 * p + 1] = after - (after < 0 ? after : 0);
		lm_tensor *next = cb || ca ? lm_narrow(cur, d, cb, size - cb - ca) : lm_tensor_retain(cur);
		lm_tensor_release(cur);
		cur = next;
	}
	lm_tensor *out = cur ? lm_pad(cur, npairs, rest, value) : NULL;
	lm_tensor_release(cur);
	return out;
}

lm_tensor *lm_pad(const lm_tensor *x, int npairs, const int64_t *pads, double value)
{
	if (lmi_check_arg("pad", "input", x) || lmi_check_device("pad", 1, &x)) return NULL;
	if (npairs < 0 || npairs > x->ndim || (npairs > 0 && !pads))
		return lmi_fail_null(LM_ERR_ARG, "pad: %d (before, after) pairs for a tensor of shape %s: "
		                     "at most one per dim", npairs, lmi_shape_s(x));
	for (int k = 0; k < 2 * npairs; k++)
		if (pads[k] < 0) return crop_then_pad(x, npairs, pads, value);
	int64_t shape[LM_MAX_DIMS], start = 0;
	for (int i = 0; i < x->ndim; i++) shape[i] = x->shape[i];
	for (int p = 0; p < npairs; p++) {
		int d = x->ndim - 1 - p; /* pairs run from the last dim backwards */
		int64_t before = pads[2 * p], after = pads[2 * p + 1];
		if (__builtin_add_overflow(shape[d], before, &shape[d]) ||
		    __builtin_add_overflow(shape[d], after, &shape[d]))
			return lmi_fail_null(LM_ERR_OVERFLOW, "pad: dim %d padded by (%lld, %lld) overflows",
			                     d + 1, (long long)before, (long long)after);
	}
	if (!lm_dtype_is_float(x->dtype) && !(value == value))
		return lmi_fail_null(LM_ERR_ARG, "pad: cannot pad the %s tensor with NaN",
		                     lm_dtype_name(x->dtype));
	lm_tensor *out = lmi_empty_as("pad", x, x->ndim, shape, x->dtype);
	if (!out) return NULL;
	for (int p = 0; p < npairs; p++) start += pads[2 * p] * out->stride[x->ndim - 1 - p];
	lm_tensor *w = lm_tensor_numel(x) ? lmi_view_of(out, x->ndim, x->shape, out->stride, start)
	                                  : NULL;
	lm_status s = lmi_fill(out, value);
	if (!s && lm_tensor_numel(x)) s = w ? lmi_copy(w, x) : lm_last_status();
	lm_tensor_release(w);
	if (s) {
		lm_tensor_release(out);
		return NULL;
	}
	lmi_params prm = {.pad = {.npairs = npairs}};
	for (int k = 0; k < 2 * npairs; k++) prm.pad.pads[k] = pads[k];
	out = lmi_finish(out, LMI_OP_PAD, &prm, 1, &x, 0, NULL, NULL);
	return out;
}
