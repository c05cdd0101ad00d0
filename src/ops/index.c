/*
 * index.c — ops that read or write by index: index_select, gather, scatter_add, masked_fill,
 * one_hot.
 *
 * Index tensors are int64 (int32 accepted), 0-based; a value outside [0, size) is an
 * LM_ERR_INDEX naming the op, the value, its position and the dim (1-based, as every message:
 * check_range). 0-d operands are treated as
 * 1-element 1-D ones. Backward rules: index_select and gather scatter-add the gradient into zeros
 * of the input's shape; scatter_add passes g to x and gathers it for src; masked_fill zeroes g
 * where the mask is set. Read next: ../backend/cpu/index.c, sort.c.
 */
#include "ops.h"

/* ---------------------------------------------------------------- helpers */

static lm_status check_index_dtype(const char *name, const lm_tensor *idx)
{
	if (idx->dtype != LM_INT64 && idx->dtype != LM_INT32)
		return lmi_fail(LM_ERR_DTYPE, "%s: the index must be int64 (or int32), got %s", name,
		                lm_dtype_name(idx->dtype));
	return LM_OK;
}

/*
 * The first entry of the index tensor idx outside [0, size), as an error naming it, its position
 * and the dim in 1-based terms (messages count from 1: lumen/core.h); LM_OK when every entry lies
 * inside. The extremes come first (two reductions), so only a failing call scans for the
 * position. dim < 0: the entries are classes (one_hot). The backend checks again (a safety net).
 */
static lm_status check_range(const char *name, const lm_tensor *idx, int64_t size, int dim)
{
	int64_t n = lm_tensor_numel(idx);
	if (n == 0) return LM_OK;
	double lo = 0, hi = 0;
	lm_tensor *mn = lm_amin(idx, LM_DIM_ALL, false), *mx = mn ? lm_amax(idx, LM_DIM_ALL, false) : NULL;
	lm_status s = mx ? LM_OK : lm_last_status();
	if (!s && !(s = lm_tensor_item(mn, &lo))) s = lm_tensor_item(mx, &hi);
	lm_tensor_release(mn);
	lm_tensor_release(mx);
	if (s) return lmi_fail_as(name);
	if (lo >= 0 && hi < (double)size) return LM_OK;
	int64_t pos[LM_MAX_DIMS] = {0}, pos1[LM_MAX_DIMS];
	for (int64_t k = 0; k < n; k++) {
		const char *p = lmi_elem_ptr(idx, pos);
		int64_t v = idx->dtype == LM_INT64 ? *(const int64_t *)p : *(const int32_t *)p;
		if (v < 0 || v >= size) {
			for (int i = 0; i < idx->ndim; i++) pos1[i] = pos[i] + 1;
			char where[LM_SHAPE_STR_MAX];
			if (idx->ndim == 1) snprintf(where, sizeof where, "%lld", (long long)pos1[0]);
			else snprintf(where, sizeof where, "%s", lmi_dims_s(idx->ndim, pos1));
			/* v + 1: index values count from 1 too (there is no "from the end" for them) */
			if (dim < 0)
				return lmi_fail(LM_ERR_INDEX, "%s: class %lld at position %s is out of range for "
				                "%lld classes", name, (long long)v + 1, where, (long long)size);
			return lmi_fail(LM_ERR_INDEX, "%s: index %lld at position %s is out of range for dim "
			                "%d of size %lld", name, (long long)v + 1, where, dim + 1, (long long)size);
		}
		for (int d = idx->ndim - 1; d >= 0; d--) { /* odometer, C order */
			if (++pos[d] < idx->shape[d]) break;
			pos[d] = 0;
		}
	}
	return LM_OK;
}

/* t itself (+1), or for a 0-d t a 1-element 1-D view. */
static lm_tensor *at_least_1d(const lm_tensor *t)
{
	if (t->ndim > 0) return lm_tensor_retain((lm_tensor *)t);
	int64_t one = 1, st = 1;
	return lmi_view_of(t, 1, &one, &st, t->offset);
}

/* Reshapes r (+1, consumed) to the 0-d shape when want_0d. */
static lm_tensor *back_to_0d(lm_tensor *r, bool want_0d)
{
	if (!r || !want_0d) return r;
	lm_tensor *v = lmi_tensor_wrap(r->storage, r->dtype, 0, NULL, NULL, r->offset);
	lm_tensor_release(r);
	return v;
}

/* zeros of input k's shape and dtype with g scatter-added at index along dim. */
static lm_tensor *scatter_into_zeros(lmi_node *n, int k, int dim, const lm_tensor *index,
                                     const lm_tensor *g)
{
	const lmi_edge *e = &n->in[k];
	lm_tensor *z = lmi_zeros_as(g, e->ndim, e->shape, g->dtype);
	if (!z) return NULL;
	lm_tensor *r = lm_scatter_add(z, dim, index, g);
	lm_tensor_release(z);
	if (r && r->dtype != e->dtype) {
		lm_tensor *c = lmi_contiguous_copy(r, e->dtype);
		lm_tensor_release(r);
		r = c;
	}
	return r;
}

/* ---------------------------------------------------------------- backward rules */

/* index_select: gx = zeros(x).index_add(dim, index, g), as a scatter_add with the 1-D index
 * broadcast to g's shape along dim. i[0] = dim; saved: [0] = index (1-D or 0-d). */
lm_status lmi_bw_index_select(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *index;
	lm_status s = lmi_node_saved(n, 0, &index);
	if (s) return s;
	int dim = (int)n->p.dim.dim, nd = g->ndim;
	if (n->in[0].ndim == 0) { /* a 0-d x: every index was 0, so its gradient is sum(g) */
		lm_tensor *sg = lm_sum(g, LM_DIM_ALL, false);
		gin[0] = sg ? lmi_as_dtype(sg, n->in[0].dtype) : NULL;
		lm_tensor_release(sg);
		return gin[0] ? LM_OK : lm_last_status();
	}
	/* index (n) viewed as (1, .., n, .., 1) at dim, expanded to g's shape */
	int64_t vshape[LM_MAX_DIMS], vstride[LM_MAX_DIMS] = {0};
	for (int i = 0; i < nd; i++) vshape[i] = i == dim ? g->shape[i] : 1;
	vstride[dim] = index->ndim ? index->stride[0] : 0;
	lm_tensor *v = lmi_view_of(index, nd, vshape, vstride, index->offset);
	lm_tensor *ix = v ? lm_expand(v, nd, g->shape) : NULL;
	lm_tensor_release(v);
	if (!ix) return lm_last_status();
	gin[0] = scatter_into_zeros(n, 0, dim, ix, g);
	lm_tensor_release(ix);
	return gin[0] ? LM_OK : lm_last_status();
}

/* gather: gx = zeros(x).scatter_add(dim, index, g). i[0] = dim; saved: [0] = index. */
lm_status lmi_bw_gather(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *index;
	lm_status s = lmi_node_saved(n, 0, &index);
	if (s) return s;
	gin[0] = scatter_into_zeros(n, 0, (int)n->p.dim.dim, index, g);
	return gin[0] ? LM_OK : lm_last_status();
}

/* scatter_add(x, dim, index, src): gx = g; gsrc = g.gather(dim, index) (zeros where src is
 * larger than index). i[0] = dim; saved: [0] = index. */
lm_status lmi_bw_scatter_add(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *index;
	lm_status s = lmi_node_saved(n, 0, &index);
	if (s) return s;
	if (n->in[0].needs_grad) {
		gin[0] = lmi_as_dtype(g, n->in[0].dtype);
		if (!gin[0]) return lm_last_status();
	}
	if (!n->in[1].needs_grad) return LM_OK;
	const lmi_edge *e = &n->in[1];
	lm_tensor *gs = lm_gather(g, (int)n->p.dim.dim, index);
	bool same = gs && gs->ndim == e->ndim;
	for (int i = 0; same && i < e->ndim; i++) same = gs->shape[i] == e->shape[i];
	if (gs && !same) { /* src larger than index: the gathered block in a corner of zeros */
		lm_tensor *z = lmi_zeros_as(gs, e->ndim, e->shape, gs->dtype);
		lm_tensor *w = z ? lmi_view_of(z, gs->ndim, gs->shape, z->stride, 0) : NULL;
		s = w ? lmi_copy(w, gs) : lm_last_status();
		lm_tensor_release(w);
		lm_tensor_release(gs);
		gs = s ? NULL : z;
		if (s) lm_tensor_release(z);
	}
	if (gs && gs->dtype != e->dtype) {
		lm_tensor *c = lmi_contiguous_copy(gs, e->dtype);
		lm_tensor_release(gs);
		gs = c;
	}
	if (!gs) {
		s = lm_last_status();
		lm_tensor_release(gin[0]);
		gin[0] = NULL;
		return s;
	}
	gin[1] = gs;
	return LM_OK;
}

/* masked_fill: gx = sum_to(where(mask, 0, g), x). saved: [0] = mask (uint8). */
lm_status lmi_bw_masked_fill(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *mask;
	lm_status s = lmi_node_saved(n, 0, &mask);
	if (s) return s;
	lm_tensor *zero = lmi_scalar_on(lmi_dev(g), 0, g->dtype);
	lm_tensor *w = zero ? lm_where(mask, zero, g) : NULL;
	lm_tensor_release(zero);
	if (!w) return lm_last_status();
	gin[0] = lmi_sum_to(w, n->in[0].ndim, n->in[0].shape);
	lm_tensor_release(w);
	return gin[0] ? LM_OK : lm_last_status();
}

/* ---------------------------------------------------------------- index_select */

lm_tensor *lm_index_select(const lm_tensor *x, int dim, const lm_tensor *index)
{
	const lm_tensor *both[2] = {x, index};
	if (lmi_check_arg("index_select", "input", x) || lmi_check_arg("index_select", "index", index) ||
	    lmi_check_device("index_select", 2, both) || check_index_dtype("index_select", index))
		return NULL;
	if (index->ndim > 1)
		return lmi_fail_null(LM_ERR_SHAPE, "index_select: the index must be 1-D (or 0-d), got "
		                     "shape %s", lmi_shape_s(index));
	int d;
	if (lmi_wrap_dim("index_select", dim, x->ndim, &d)) return NULL;
	int64_t n = lm_tensor_numel(index), outer = 1, inner = 1, size = x->ndim ? x->shape[d] : 1;
	if (check_range("index_select", index, size, d)) return NULL;
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < x->ndim; i++) {
		if (i < d) outer *= x->shape[i];
		if (i > d) inner *= x->shape[i];
		shape[i] = i == d ? n : x->shape[i];
	}
	/* a 0-d x: the result takes the index's shape (0-d or (n)) */
	int ond = x->ndim ? x->ndim : index->ndim;
	if (!x->ndim && index->ndim) shape[0] = n;
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *ic = !xc ? NULL
	                : lm_tensor_is_contiguous(index) ? lm_tensor_retain((lm_tensor *)index)
	                                                 : lmi_contiguous_copy(index, index->dtype);
	lm_tensor *out = ic ? lmi_empty_as("index_select", x, ond, shape, x->dtype) : NULL;
	if (out && lmi_run("index_select", LMI_OP_INDEX_SELECT, &(lmi_params){.dim = {.dim = d}}, x->dtype, 2,
	                   (const lm_tensor *[]){xc, ic}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	const lm_tensor *save[1] = {ic};
	out = lmi_finish(out, LMI_OP_INDEX_SELECT, &(lmi_params){.dim = {.dim = d}}, 1, &x, 1, save, NULL);
	lm_tensor_release(xc);
	lm_tensor_release(ic);
	return out;
}

/* ---------------------------------------------------------------- gather / scatter_add */

/* index and x (and src) have one number of dims; index fits in x except along dim, and in src
 * everywhere. */
static lm_status check_scatter_shapes(const char *name, const lm_tensor *x, int d,
                                      const lm_tensor *index, const lm_tensor *src)
{
	if (index->ndim != x->ndim || (src && src->ndim != x->ndim))
		return lmi_fail(LM_ERR_SHAPE, "%s: the input %s, index %s%s%s must have the same number of "
		                "dims", name, lmi_shape_s(x), lmi_shape_s(index), src ? " and source " : "",
		                src ? lmi_shape_s(src) : "");
	for (int i = 0; i < x->ndim; i++) {
		if (i != d && index->shape[i] > x->shape[i])
			return lmi_fail(LM_ERR_SHAPE, "%s: index of shape %s is larger than the input %s at "
			                "dim %d (%lld > %lld)", name, lmi_shape_s(index), lmi_shape_s(x), i + 1,
			                (long long)index->shape[i], (long long)x->shape[i]);
		if (src && index->shape[i] > src->shape[i])
			return lmi_fail(LM_ERR_SHAPE, "%s: index of shape %s is larger than the source %s at "
			                "dim %d (%lld > %lld)", name, lmi_shape_s(index), lmi_shape_s(src), i + 1,
			                (long long)index->shape[i], (long long)src->shape[i]);
	}
	return LM_OK;
}

lm_tensor *lm_gather(const lm_tensor *x, int dim, const lm_tensor *index)
{
	const lm_tensor *both[2] = {x, index};
	if (lmi_check_arg("gather", "input", x) || lmi_check_arg("gather", "index", index) ||
	    lmi_check_device("gather", 2, both) || check_index_dtype("gather", index))
		return NULL;
	int d;
	if (lmi_wrap_dim("gather", dim, x->ndim, &d) || check_scatter_shapes("gather", x, d, index, NULL) ||
	    check_range("gather", index, x->ndim ? x->shape[d] : 1, d))
		return NULL;
	lm_tensor *x1 = at_least_1d(x), *i1 = x1 ? at_least_1d(index) : NULL, *out = NULL;
	if (i1) out = lmi_empty_as("gather", x, i1->ndim, i1->shape, x->dtype);
	if (out && lmi_run("gather", LMI_OP_GATHER, &(lmi_params){.dim = {.dim = d}}, x->dtype, 2,
	                   (const lm_tensor *[]){x1, i1}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	out = back_to_0d(out, x->ndim == 0);
	const lm_tensor *save[1] = {index};
	out = lmi_finish(out, LMI_OP_GATHER, &(lmi_params){.dim = {.dim = d}}, 1, &x, 1, save, NULL);
	lm_tensor_release(x1);
	lm_tensor_release(i1);
	return out;
}

lm_tensor *lm_scatter_add(const lm_tensor *x, int dim, const lm_tensor *index, const lm_tensor *src)
{
	const lm_tensor *all[3] = {x, index, src};
	if (lmi_check_arg("scatter_add", "input", x) || lmi_check_arg("scatter_add", "index", index) ||
	    lmi_check_arg("scatter_add", "source", src) || lmi_check_device("scatter_add", 3, all) ||
	    check_index_dtype("scatter_add", index))
		return NULL;
	int d;
	if (lmi_wrap_dim("scatter_add", dim, x->ndim, &d) ||
	    check_scatter_shapes("scatter_add", x, d, index, src) ||
	    check_range("scatter_add", index, x->ndim ? x->shape[d] : 1, d))
		return NULL;
	lm_dtype ct = lm_promote_types(x->dtype, src->dtype);
	lm_tensor *out = lmi_contiguous_copy(x, ct);
	lm_tensor *sc = out ? lmi_as_dtype(src, ct) : NULL;
	lm_tensor *o1 = sc ? at_least_1d(out) : NULL, *i1 = o1 ? at_least_1d(index) : NULL;
	lm_tensor *s1 = i1 ? at_least_1d(sc) : NULL;
	if (!s1 || lmi_run("scatter_add", LMI_OP_SCATTER_ADD, &(lmi_params){.dim = {.dim = d}}, ct, 2,
	                   (const lm_tensor *[]){i1, s1}, 1, (lm_tensor *[]){o1})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(o1);
	lm_tensor_release(i1);
	lm_tensor_release(s1);
	lm_tensor_release(sc);
	const lm_tensor *in[2] = {x, src}, *save[1] = {index};
	out = lmi_finish(out, LMI_OP_SCATTER_ADD, &(lmi_params){.dim = {.dim = d}}, 2, in, 1, save, NULL);
	return out;
}

/* ---------------------------------------------------------------- masked_fill */

lm_tensor *lm_masked_fill(const lm_tensor *x, const lm_tensor *mask, double value)
{
	const lm_tensor *both[2] = {x, mask};
	if (lmi_check_arg("masked_fill", "input", x) || lmi_check_arg("masked_fill", "mask", mask) ||
	    lmi_check_device("masked_fill", 2, both))
		return NULL;
	int nd;
	int64_t shape[LM_MAX_DIMS];
	if (lm_broadcast_shapes(x->ndim, x->shape, mask->ndim, mask->shape, &nd, shape))
		return lmi_fail_null(LM_ERR_SHAPE, "masked_fill: the mask of shape %s does not broadcast "
		                     "with the input of shape %s", lmi_shape_s(mask), lmi_shape_s(x));
	if (!lm_dtype_is_float(x->dtype) && !(value == value))
		return lmi_fail_null(LM_ERR_ARG, "masked_fill: cannot fill the %s tensor with NaN",
		                     lm_dtype_name(x->dtype));
	/* any dtype of mask: nonzero is true */
	lm_tensor *c = mask->dtype == LM_UINT8 ? lm_tensor_retain((lm_tensor *)mask)
	                                       : lm_binary_scalar(LM_NE, mask, 0);
	lm_tensor *v = c ? lmi_scalar_on(lmi_dev(x), value, x->dtype) : NULL;
	lm_tensor *out = v ? lmi_empty_as("masked_fill", x, nd, shape, x->dtype) : NULL;
	if (out && lmi_run("masked_fill", LMI_OP_MASKED_FILL, NULL, x->dtype, 3, (const lm_tensor *[]){c, v, x}, 1,
	                   (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	const lm_tensor *save[1] = {c};
	out = lmi_finish(out, LMI_OP_MASKED_FILL, NULL, 1, &x, 1, save, NULL);
	lm_tensor_release(c);
	lm_tensor_release(v);
	return out;
}

/* ---------------------------------------------------------------- one_hot */

lm_tensor *lm_one_hot(const lm_tensor *index, int64_t num_classes)
{
	if (lmi_check_arg("one_hot", "index", index) || lmi_check_device("one_hot", 1, &index) ||
	    check_index_dtype("one_hot", index))
		return NULL;
	if (index->ndim + 1 > LM_MAX_DIMS)
		return lmi_fail_null(LM_ERR_SHAPE, "one_hot: the result of an index of shape %s would "
		                     "have %d dims", lmi_shape_s(index), index->ndim + 1);
	lm_tensor *ic = lm_tensor_is_contiguous(index) ? lm_tensor_retain((lm_tensor *)index)
	                                               : lmi_contiguous_copy(index, index->dtype);
	if (!ic) return NULL;
	int64_t n = lm_tensor_numel(ic);
	if (num_classes < 0) { /* infer: the largest index + 1 */
		if (num_classes != -1) {
			lm_tensor_release(ic);
			return lmi_fail_null(LM_ERR_ARG, "one_hot: num_classes %lld must be >= 0 (or -1 to "
			                     "infer it)", (long long)num_classes);
		}
		if (n == 0) {
			lm_tensor_release(ic);
			return lmi_fail_null(LM_ERR_ARG, "one_hot: cannot infer the number of classes from an "
			                     "empty index; pass num_classes");
		}
		double mx = 0;
		lm_tensor *m = lm_amax(ic, LM_DIM_ALL, false);
		if (!m || lm_tensor_item(m, &mx)) {
			lm_tensor_release(m);
			lm_tensor_release(ic);
			return NULL;
		}
		lm_tensor_release(m);
		num_classes = (int64_t)mx + 1;
		if (num_classes < 1) num_classes = 1; /* negative indices are reported by the loop */
	}
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < index->ndim; i++) shape[i] = index->shape[i];
	shape[index->ndim] = num_classes;
	lm_tensor *out = check_range("one_hot", ic, num_classes, -1)
	                     ? NULL
	                     : lmi_empty_as("one_hot", index, index->ndim + 1, shape, LM_INT64);
	if (out && (lm_zero_(out) || lmi_run("one_hot", LMI_OP_ONE_HOT, &(lmi_params){.one_hot = {.classes = num_classes}},
	                                     ic->dtype, 1, (const lm_tensor *[]){ic}, 1, (lm_tensor *[]){out}))) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(ic);
	return out;
}
