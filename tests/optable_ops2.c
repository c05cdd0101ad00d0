/*
 * optable_ops2.c — op-table rows for the Foundation II ops: cat, stack, index_select, gather,
 * scatter_add, masked_fill, sort, topk, cumsum, tril/triu, one_hot, repeat, flip, pad, im2col,
 * col2im, add_scaled. Each reference walks the output (or the index) element by element with lm_tensor_get
 * and the textbook definition — nothing here calls the op under test.
 *
 * Generators cover every layout of the main input (the others get random layouts), size-0 and
 * size-1 dims, 0-d inputs where the op takes them, negative dims, int32 and int64 indices, ties
 * (sort stability) and NaN (sort order).
 */
#include <math.h>
#include <string.h>

#include "optable.h"

/* ---------------------------------------------------------------- helpers */

static double get(const lm_tensor *t, const int64_t *idx)
{
	double v = NAN;
	lm_tensor_get(t, idx, &v);
	return v;
}

static ot_layout any_layout(ot_rng *r) { return (ot_layout)ot_int(r, 0, OT_LAYOUT_COUNT - 1); }

/* An index tensor of the given shape and layout, int32 or int64 at random, values in [0, hi]. */
static lm_tensor *make_index(ot_rng *r, int nd, const int64_t *shape, ot_layout l, int64_t hi)
{
	lm_dtype dt = ot_int(r, 0, 1) ? LM_INT64 : LM_INT32;
	lm_tensor *t = ot_make(r, nd, shape, dt, l, 0, 0);
	int64_t n = t ? lm_tensor_numel(t) : 0;
	for (int64_t i = 0; i < n; i++) ot_set_linear(t, i, (double)ot_int(r, 0, hi));
	return t;
}

/* A random dim of an nd-dim tensor, negative half of the time (0 for 0-d). */
static int pick_dim(ot_rng *r, int nd)
{
	if (nd == 0) return ot_int(r, 0, 1) ? 0 : -1;
	int d = (int)ot_int(r, 0, nd - 1);
	return ot_int(r, 0, 1) ? d : d - nd;
}

static int wrap(int d, int nd) { return d < 0 ? d + (nd ? nd : 1) : d; }

/* Stores v into a reference of dtype dt, wrapping uint8 like the library's arithmetic. */
static void set_wrapped(lm_tensor *t, int64_t i, double v)
{
	if (lm_tensor_dtype(t) == LM_UINT8) v = fmod(fmod(v, 256) + 256, 256);
	ot_set_linear(t, i, v);
}

/* ---------------------------------------------------------------- cat / stack */

enum { J_CAT = 500, J_STACK };

static void gen_join(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	bool stack = op->fn == J_STACK;
	int nd = ot_shape(r, stack ? 0 : 1, stack ? 3 : 4, shape);
	int dim = stack ? (int)ot_int(r, -nd - 1, nd) : pick_dim(r, nd);
	int d = stack ? 0 : wrap(dim, nd);
	c->nin = (int)ot_int(r, 1, OT_MAX_IN);
	for (int k = 0; k < c->nin; k++) {
		int64_t s[LM_MAX_DIMS];
		memcpy(s, shape, sizeof s);
		if (!stack) s[d] = ot_int(r, 0, 5) == 0 ? 0 : ot_int(r, 1, 4);
		if (!stack && nd > 1 && k > 0 && ot_int(r, 0, 9) == 0) { /* the legacy empty (0) input */
			int64_t zero = 0;
			c->in[k] = ot_make(r, 1, &zero, dt, OT_CONTIGUOUS, op->lo, op->hi);
			continue;
		}
		c->in[k] = ot_make(r, nd, s, dt, k == 0 ? l : any_layout(r), op->lo, op->hi);
	}
	c->p[0] = dim;
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_join(const ot_case *c)
{
	return (c->op->fn == J_STACK ? lm_stack : lm_cat)(c->nin, c->in, (int)c->p[0]);
}

static lm_tensor *ref_join(const ot_case *c)
{
	bool stack = c->op->fn == J_STACK;
	/* the reference input: the first that is not the legacy empty one */
	int ref = 0;
	while (ref < c->nin - 1 && lm_tensor_ndim(c->in[ref]) == 1 && lm_tensor_shape(c->in[ref])[0] == 0)
		ref++;
	int nd = lm_tensor_ndim(c->in[ref]), ond = stack ? nd + 1 : nd;
	int d = stack ? ((int)c->p[0] < 0 ? (int)c->p[0] + nd + 1 : (int)c->p[0]) : wrap((int)c->p[0], nd);
	int64_t oshape[LM_MAX_DIMS], idx[LM_MAX_DIMS], src[LM_MAX_DIMS];
	const lm_tensor *part[OT_MAX_IN];
	int np = 0;
	for (int k = 0; k < c->nin; k++) {
		bool legacy = lm_tensor_ndim(c->in[k]) == 1 && lm_tensor_shape(c->in[k])[0] == 0;
		if (!stack && legacy && nd != 1) continue;
		part[np++] = c->in[k];
	}
	for (int i = 0, j = 0; i < ond; i++) {
		if (stack) {
			oshape[i] = i == d ? np : lm_tensor_shape(part[0])[j++];
		} else {
			oshape[i] = lm_tensor_shape(part[0])[i];
			if (i == d) {
				oshape[i] = 0;
				for (int k = 0; k < np; k++) oshape[i] += lm_tensor_shape(part[k])[d];
			}
		}
	}
	lm_dtype rt = lm_tensor_dtype(c->in[0]);
	for (int k = 1; k < c->nin; k++) rt = lm_promote_types(rt, lm_tensor_dtype(c->in[k]));
	lm_tensor *out = ot_new(ond, oshape, rt);
	int64_t n = lm_tensor_numel(out);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, ond, oshape, idx);
		int k = 0;
		if (stack) {
			k = (int)idx[d];
			for (int a = 0, b = 0; a < ond; a++)
				if (a != d) src[b++] = idx[a];
		} else {
			int64_t pos = idx[d];
			while (pos >= lm_tensor_shape(part[k])[d]) pos -= lm_tensor_shape(part[k++])[d];
			memcpy(src, idx, sizeof src);
			src[d] = pos;
		}
		ot_set_linear(out, i, get(part[k], src));
	}
	return out;
}

/* ---------------------------------------------------------------- index_select */

static void gen_index_select(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 4, shape);
	int dim = pick_dim(r, nd), d = wrap(dim, nd);
	if (nd && shape[d] == 0) shape[d] = 3;
	c->nin = 2;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	int64_t size = nd ? shape[d] : 1, n = ot_int(r, 0, 6);
	int ind = ot_int(r, 0, 5) == 0 ? 0 : 1; /* a 0-d index now and then */
	c->in[1] = make_index(r, ind, &n, ind ? (ot_layout)ot_int(r, 0, 2) : OT_CONTIGUOUS, size - 1);
	c->p[0] = dim;
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_index_select(const ot_case *c)
{
	return lm_index_select(c->in[0], (int)c->p[0], c->in[1]);
}

static lm_tensor *ref_index_select(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *ix = c->in[1];
	int nd = lm_tensor_ndim(x), d = wrap((int)c->p[0], nd);
	int64_t oshape[LM_MAX_DIMS], idx[LM_MAX_DIMS], src[LM_MAX_DIMS];
	int64_t n = lm_tensor_numel(ix);
	int ond = nd;
	for (int i = 0; i < nd; i++) oshape[i] = i == d ? n : lm_tensor_shape(x)[i];
	if (nd == 0 && lm_tensor_ndim(ix) == 1) {
		ond = 1;
		oshape[0] = n;
	}
	lm_tensor *out = ot_new(ond, oshape, lm_tensor_dtype(x));
	int64_t total = lm_tensor_numel(out);
	for (int64_t i = 0; i < total; i++) {
		ot_unravel(i, ond, oshape, idx);
		int64_t j = ond ? (nd ? idx[d] : idx[0]) : 0;
		memcpy(src, idx, sizeof src);
		if (nd) src[d] = (int64_t)ot_get_linear(ix, j);
		ot_set_linear(out, i, get(x, src));
	}
	return out;
}

/* ---------------------------------------------------------------- gather / scatter_add */

enum { I_GATHER = 520, I_SCATTER_ADD };

static void gen_gather(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS], ishape[LM_MAX_DIMS], sshape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 4, shape);
	int dim = pick_dim(r, nd), d = wrap(dim, nd);
	if (nd && shape[d] == 0) shape[d] = 2;
	for (int i = 0; i < nd; i++) {
		ishape[i] = i == d ? ot_int(r, 0, 5) : ot_int(r, 0, shape[i]);
		if (ot_int(r, 0, 1)) ishape[i] = i == d ? ishape[i] : shape[i]; /* often the full size */
		sshape[i] = ishape[i] + (ot_int(r, 0, 3) == 0 ? 1 : 0);
	}
	bool scatter = op->fn == I_SCATTER_ADD;
	c->nin = scatter ? 3 : 2;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	c->in[1] = make_index(r, nd, ishape, any_layout(r), (nd ? shape[d] : 1) - 1);
	if (scatter) c->in[2] = ot_make(r, nd, sshape, dt, any_layout(r), op->lo, op->hi);
	c->p[0] = dim;
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_gather(const ot_case *c)
{
	if (c->op->fn == I_SCATTER_ADD) return lm_scatter_add(c->in[0], (int)c->p[0], c->in[1], c->in[2]);
	return lm_gather(c->in[0], (int)c->p[0], c->in[1]);
}

static lm_tensor *ref_gather(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *ix = c->in[1];
	int nd = lm_tensor_ndim(x), d = wrap((int)c->p[0], nd);
	int64_t idx[LM_MAX_DIMS], at[LM_MAX_DIMS];
	int64_t n = lm_tensor_numel(ix);
	if (c->op->fn == I_GATHER) {
		lm_tensor *out = ot_new(nd, lm_tensor_shape(ix), lm_tensor_dtype(x));
		for (int64_t i = 0; i < n; i++) {
			ot_unravel(i, nd, lm_tensor_shape(ix), idx);
			memcpy(at, idx, sizeof at);
			if (nd) at[d] = (int64_t)get(ix, idx);
			ot_set_linear(out, i, get(x, at));
		}
		return out;
	}
	/* scatter_add: a copy of x (promoted dtype) with src[p] added at p[dim] = index[p] */
	const lm_tensor *src = c->in[2];
	lm_dtype rt = lm_promote_types(lm_tensor_dtype(x), lm_tensor_dtype(src));
	lm_tensor *out = ot_new(nd, lm_tensor_shape(x), rt);
	int64_t nx = lm_tensor_numel(x);
	double acc[4096 + 64];
	for (int64_t i = 0; i < nx; i++) acc[i] = ot_get_linear(x, i);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, lm_tensor_shape(ix), idx);
		memcpy(at, idx, sizeof at);
		if (nd) at[d] = (int64_t)get(ix, idx);
		int64_t lin = 0;
		for (int k = 0; k < nd; k++) lin = lin * lm_tensor_shape(x)[k] + at[k];
		double v = get(src, idx);
		acc[lin] = rt == LM_FLOAT32 ? (double)((float)acc[lin] + (float)v) : acc[lin] + v;
	}
	for (int64_t i = 0; i < nx; i++) set_wrapped(out, i, acc[i]);
	return out;
}

/* ---------------------------------------------------------------- masked_fill */

static void gen_masked_fill(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_binary(op, r, dt, l, c); /* in[0], in[1]: broadcastable shapes */
	lm_tensor *m = c->in[1];
	c->in[1] = ot_make(r, lm_tensor_ndim(m), lm_tensor_shape(m), ot_int(r, 0, 3) ? LM_UINT8 : dt,
	                   any_layout(r), 0, 1);
	lm_tensor_release(m);
	c->p[0] = lm_dtype_is_float(dt) ? ot_uniform(r, -3, 3) : (double)ot_int(r, 0, 9);
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_masked_fill(const ot_case *c) { return lm_masked_fill(c->in[0], c->in[1], c->p[0]); }

static lm_tensor *ref_masked_fill(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *m = c->in[1];
	int nd = lm_tensor_ndim(x) > lm_tensor_ndim(m) ? lm_tensor_ndim(x) : lm_tensor_ndim(m);
	int64_t shape[LM_MAX_DIMS], idx[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) {
		int ix = i - (nd - lm_tensor_ndim(x)), im = i - (nd - lm_tensor_ndim(m));
		int64_t a = ix >= 0 ? lm_tensor_shape(x)[ix] : 1, b = im >= 0 ? lm_tensor_shape(m)[im] : 1;
		shape[i] = a == 1 ? b : a;
	}
	lm_tensor *out = ot_new(nd, shape, lm_tensor_dtype(x));
	int64_t n = lm_tensor_numel(out);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		ot_set_linear(out, i, ot_get_bcast(m, nd, idx) != 0 ? c->p[0] : ot_get_bcast(x, nd, idx));
	}
	return out;
}

/* ---------------------------------------------------------------- sort / topk */

enum { S_SORT_V = 540, S_SORT_I, S_TOPK_V, S_TOPK_I };

static void gen_sort(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 3, shape);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	int dim = pick_dim(r, nd), d = wrap(dim, nd);
	/* sorting along a broadcast dim compares copies of one value: allowed, but pick another dim
	 * when one exists so that gradcheck (which needs distinct values) can use the case */
	for (int i = 0; nd && i < nd; i++) {
		if (lm_tensor_strides(c->in[0])[d] != 0 || shape[d] <= 1) break;
		d = (d + 1) % nd;
		dim = d;
	}
	if (lm_dtype_is_float(dt) && lm_tensor_numel(c->in[0]) && lm_tensor_is_contiguous(c->in[0])) {
		int64_t n = lm_tensor_numel(c->in[0]);
		switch (ot_int(r, 0, 3)) {
		case 0: /* ties */
			for (int64_t i = 0; i < n; i++) ot_set_linear(c->in[0], i, round(ot_get_linear(c->in[0], i)));
			break;
		case 1: /* a NaN */
			ot_set_linear(c->in[0], ot_int(r, 0, n - 1), NAN);
			break;
		default: break;
		}
	}
	c->p[0] = dim;
	c->p[1] = (double)ot_int(r, 0, 1); /* descending / largest */
	int64_t R = nd ? shape[d] : 1;
	c->p[2] = nd ? (double)ot_int(r, 0, R) : 1; /* topk's k (a 0-d input has one element) */
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_sort(const ot_case *c)
{
	lm_tensor *v = NULL, *ix = NULL;
	int fn = c->op->fn;
	lm_status s = fn <= S_SORT_I ? lm_sort(c->in[0], (int)c->p[0], c->p[1] != 0, &v, &ix)
	                             : lm_topk(c->in[0], (int64_t)c->p[2], (int)c->p[0], c->p[1] != 0, &v, &ix);
	if (s) return NULL;
	bool want_values = fn == S_SORT_V || fn == S_TOPK_V;
	lm_tensor_release(want_values ? ix : v);
	return want_values ? v : ix;
}

/* a strictly before b: ascending with NaN last, or descending with NaN first */
static bool before(double a, double b, bool desc)
{
	if (desc) return (a > b) || (isnan(a) && !isnan(b));
	return (a < b) || (isnan(b) && !isnan(a));
}

static lm_tensor *ref_sort(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x), d = wrap((int)c->p[0], nd), fn = c->op->fn;
	bool desc = c->p[1] != 0, values = fn == S_SORT_V || fn == S_TOPK_V;
	int64_t R = nd ? lm_tensor_shape(x)[d] : 1, k = fn <= S_SORT_I ? R : (int64_t)c->p[2];
	int64_t oshape[LM_MAX_DIMS], idx[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) oshape[i] = i == d ? k : lm_tensor_shape(x)[i];
	lm_tensor *out = ot_new(nd, oshape, values ? lm_tensor_dtype(x) : LM_INT64);
	/* line by line: the rank of element i is the count of elements before it, ties by index */
	int64_t lshape[LM_MAX_DIMS], nlines = 1;
	for (int i = 0; i < nd; i++) {
		lshape[i] = i == d ? 1 : lm_tensor_shape(x)[i];
		nlines *= lshape[i];
	}
	double v[64];
	for (int64_t l = 0; l < nlines; l++) {
		ot_unravel(l, nd, lshape, idx);
		for (int64_t i = 0; i < R; i++) {
			if (nd) idx[d] = i;
			v[i] = get(x, idx);
		}
		for (int64_t i = 0; i < R; i++) {
			int64_t rank = 0;
			for (int64_t j = 0; j < R; j++) {
				bool same = v[i] == v[j] || (isnan(v[i]) && isnan(v[j]));
				if (before(v[j], v[i], desc) || (same && j < i)) rank++;
			}
			if (rank >= k) continue;
			if (nd) idx[d] = rank;
			int64_t lin = 0;
			for (int q = 0; q < nd; q++) lin = lin * oshape[q] + idx[q];
			ot_set_linear(out, lin, values ? v[i] : (double)i);
		}
	}
	return out;
}

/* ---------------------------------------------------------------- cumsum */

static void gen_dim(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 4, shape);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	c->p[0] = pick_dim(r, nd);
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_cumsum(const ot_case *c) { return lm_cumsum(c->in[0], (int)c->p[0]); }

static lm_tensor *ref_cumsum(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x), d = wrap((int)c->p[0], nd);
	lm_dtype dt = lm_tensor_dtype(x);
	lm_tensor *out = ot_new(nd, lm_tensor_shape(x), lm_dtype_is_float(dt) ? dt : LM_INT64);
	int64_t n = lm_tensor_numel(x), idx[LM_MAX_DIMS];
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, lm_tensor_shape(x), idx);
		int64_t upto = nd ? idx[d] : 0;
		double s = 0;
		for (int64_t j = 0; j <= upto; j++) {
			if (nd) idx[d] = j;
			s += get(x, idx);
		}
		ot_set_linear(out, i, s);
	}
	return out;
}

/* ---------------------------------------------------------------- tril / triu */

enum { T_TRIL = 560, T_TRIU };

static void gen_triangle(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 2, 4, shape);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	c->p[0] = (double)ot_int(r, -4, 4);
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_triangle(const ot_case *c)
{
	return (c->op->fn == T_TRIU ? lm_triu : lm_tril)(c->in[0], (int64_t)c->p[0]);
}

static lm_tensor *ref_triangle(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x);
	int64_t k = (int64_t)c->p[0], n = lm_tensor_numel(x), idx[LM_MAX_DIMS];
	lm_tensor *out = ot_new(nd, lm_tensor_shape(x), lm_tensor_dtype(x));
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, lm_tensor_shape(x), idx);
		int64_t row = idx[nd - 2], col = idx[nd - 1];
		bool keep = c->op->fn == T_TRIU ? col - row >= k : col - row <= k;
		ot_set_linear(out, i, keep ? get(x, idx) : 0);
	}
	return out;
}

/* ---------------------------------------------------------------- one_hot */

static void gen_one_hot(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 3, shape);
	int64_t classes = ot_int(r, 1, 6);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, 0, 0);
	int64_t n = lm_tensor_numel(c->in[0]);
	for (int64_t i = 0; i < n; i++) ot_set_linear(c->in[0], i, (double)ot_int(r, 0, classes - 1));
	/* -1 (infer the count) when some index is present */
	c->p[0] = n && ot_int(r, 0, 3) == 0 ? -1 : (double)classes;
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_one_hot(const ot_case *c) { return lm_one_hot(c->in[0], (int64_t)c->p[0]); }

static lm_tensor *ref_one_hot(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x);
	int64_t n = lm_tensor_numel(x), classes = (int64_t)c->p[0], shape[LM_MAX_DIMS];
	if (classes < 0)
		for (int64_t i = 0; i < n; i++)
			if ((int64_t)ot_get_linear(x, i) + 1 > classes) classes = (int64_t)ot_get_linear(x, i) + 1;
	memcpy(shape, lm_tensor_shape(x), sizeof(int64_t) * (size_t)nd);
	shape[nd] = classes;
	lm_tensor *out = ot_new(nd + 1, shape, LM_INT64);
	for (int64_t i = 0; i < n; i++) ot_set_linear(out, i * classes + (int64_t)ot_get_linear(x, i), 1);
	return out;
}

/* ---------------------------------------------------------------- repeat / flip / pad */

enum { P_REPEAT = 580, P_FLIP, P_PAD };

static void gen_shape_op(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, op->fn == P_PAD ? 1 : 0, op->fn == P_REPEAT ? 3 : 4, shape);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	/* p[0]: a seed for the op's parameters, p[1]: the pad value */
	c->p[0] = (double)ot_int(r, 0, 1 << 20);
	c->p[1] = lm_dtype_is_float(dt) ? ot_uniform(r, -3, 3) : (double)ot_int(r, 0, 9);
	ot_describe(c, op, dt, l);
}

/* The op's parameters from the case's seed: repeat counts, flip dims, or pads. */
static int shape_params(const ot_case *c, int64_t *p, int *dims)
{
	ot_rng r = {(uint64_t)c->p[0] + 7};
	int nd = lm_tensor_ndim(c->in[0]);
	switch (c->op->fn) {
	case P_REPEAT: {
		int nrep = nd + (int)ot_int(&r, 0, 2);
		for (int i = 0; i < nrep; i++) p[i] = ot_int(&r, 0, 7) == 0 ? 0 : ot_int(&r, 1, 3);
		return nrep;
	}
	case P_FLIP: {
		int n = 0;
		for (int i = 0; i < nd; i++)
			if (ot_int(&r, 0, 1)) dims[n++] = ot_int(&r, 0, 1) ? i : i - nd;
		if (nd == 0 && ot_int(&r, 0, 1)) dims[n++] = 0;
		return n;
	}
	default: {
		int npairs = (int)ot_int(&r, 0, nd < 3 ? nd : 3);
		for (int i = 0; i < 2 * npairs; i++) p[i] = ot_int(&r, 0, 3);
		return npairs;
	}
	}
}

static lm_tensor *run_shape_op(const ot_case *c)
{
	int64_t p[2 * LM_MAX_DIMS];
	int dims[LM_MAX_DIMS];
	int n = shape_params(c, p, dims);
	switch (c->op->fn) {
	case P_REPEAT: return lm_repeat(c->in[0], n, p);
	case P_FLIP: return lm_flip(c->in[0], n, dims);
	default: return lm_pad(c->in[0], n, p, c->p[1]);
	}
}

static lm_tensor *ref_shape_op(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int64_t p[2 * LM_MAX_DIMS], oshape[LM_MAX_DIMS], idx[LM_MAX_DIMS], at[LM_MAX_DIMS];
	int dims[LM_MAX_DIMS];
	int n = shape_params(c, p, dims), nd = lm_tensor_ndim(x), ond = nd;
	const int64_t *xs = lm_tensor_shape(x);
	bool flip[LM_MAX_DIMS] = {false};
	switch (c->op->fn) {
	case P_REPEAT:
		ond = n;
		for (int i = 0; i < n; i++) oshape[i] = p[i] * (i < n - nd ? 1 : xs[i - (n - nd)]);
		break;
	case P_FLIP:
		for (int i = 0; i < nd; i++) oshape[i] = xs[i];
		for (int k = 0; k < n; k++) flip[wrap(dims[k], nd)] = true;
		break;
	default:
		for (int i = 0; i < nd; i++) oshape[i] = xs[i];
		for (int k = 0; k < n; k++) oshape[nd - 1 - k] += p[2 * k] + p[2 * k + 1];
		break;
	}
	lm_tensor *out = ot_new(ond, oshape, lm_tensor_dtype(x));
	int64_t total = lm_tensor_numel(out);
	for (int64_t i = 0; i < total; i++) {
		ot_unravel(i, ond, oshape, idx);
		double v = c->p[1];
		switch (c->op->fn) {
		case P_REPEAT:
			for (int k = 0; k < nd; k++) at[k] = idx[k + (ond - nd)] % xs[k];
			v = get(x, at);
			break;
		case P_FLIP:
			for (int k = 0; k < nd; k++) at[k] = flip[k] ? xs[k] - 1 - idx[k] : idx[k];
			v = get(x, at);
			break;
		default: {
			bool inside = true;
			for (int k = 0; k < nd; k++) {
				int q = nd - 1 - k; /* pair index of dim k, if padded */
				at[k] = idx[k] - (q < n ? p[2 * q] : 0);
				inside = inside && at[k] >= 0 && at[k] < xs[k];
			}
			if (inside) v = get(x, at);
		}
		}
		ot_set_linear(out, i, v);
	}
	return out;
}

/* ---------------------------------------------------------------- im2col / col2im */

enum { W_IM2COL = 600, W_COL2IM, W_IM2COL_NHWC };

/* The window of a case: p[0..3] = kh/kw, stride, padding, dilation packed as below. */
static lm_window2d case_window(const ot_case *c)
{
	int64_t q = (int64_t)c->p[0];
	lm_window2d w;
	w.kh = q % 4, q /= 4;
	w.kw = q % 4, q /= 4;
	w.sh = q % 3 + 1, q /= 3;
	w.sw = q % 3 + 1, q /= 3;
	w.ph = q % 3, q /= 3;
	w.pw = q % 3, q /= 3;
	w.dh = q % 2 + 1, q /= 2;
	w.dw = q % 2 + 1;
	return w;
}

static void gen_window(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t N = ot_int(r, 0, 4) == 0 ? 0 : ot_int(r, 1, 2), C = ot_int(r, 1, 3);
	int64_t H = ot_int(r, 1, 7), W = ot_int(r, 1, 7);
	lm_window2d w;
	int64_t oh, ow;
	for (;;) { /* a window that fits the padded image */
		int64_t q = 0;
		int64_t kh = ot_int(r, 1, 3), kw = ot_int(r, 1, 3), sh = ot_int(r, 0, 2), sw = ot_int(r, 0, 2);
		int64_t ph = ot_int(r, 0, 2), pw = ot_int(r, 0, 2), dh = ot_int(r, 0, 1), dw = ot_int(r, 0, 1);
		q = ((((((dw * 2 + dh) * 3 + pw) * 3 + ph) * 3 + sw) * 3 + sh) * 4 + kw) * 4 + kh;
		c->p[0] = (double)q;
		w = case_window(c);
		if ((w.dh * (w.kh - 1) + 1 <= H + 2 * w.ph) && (w.dw * (w.kw - 1) + 1 <= W + 2 * w.pw)) break;
	}
	lm_window2d_out(&w, H, W, &oh, &ow);
	bool batched = ot_int(r, 0, 3) != 0;
	c->nin = 1;
	c->p[1] = (double)C;
	c->p[2] = (double)H;
	c->p[3] = (double)W;
	if (op->fn == W_IM2COL) {
		int64_t s[4] = {N, C, H, W};
		c->in[0] = ot_make(r, batched ? 4 : 3, s + !batched, dt, l, op->lo, op->hi);
	} else if (op->fn == W_IM2COL_NHWC) {
		int64_t s[4] = {N, H, W, C};
		c->in[0] = ot_make(r, batched ? 4 : 3, s + !batched, dt, l, op->lo, op->hi);
	} else {
		int64_t s[3] = {N, C * w.kh * w.kw, oh * ow};
		c->in[0] = ot_make(r, batched ? 3 : 2, s + !batched, dt, l, op->lo, op->hi);
	}
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_window(const ot_case *c)
{
	lm_window2d w = case_window(c);
	if (c->op->fn == W_IM2COL) return lm_im2col(c->in[0], &w);
	if (c->op->fn == W_IM2COL_NHWC) return lm_im2col_nhwc(c->in[0], &w);
	return lm_col2im(c->in[0], (int64_t)c->p[1], (int64_t)c->p[2], (int64_t)c->p[3], &w);
}

/* im2col_nhwc from its definition: out[n, oy*ow + ox, (ki*kw + kj)*C + ch] = x[n, iy, ix, ch]. */
static lm_tensor *ref_window_nhwc(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	lm_window2d w = case_window(c);
	int64_t C = (int64_t)c->p[1], H = (int64_t)c->p[2], W = (int64_t)c->p[3];
	int64_t oh = (H + 2 * w.ph - w.dh * (w.kh - 1) - 1) / w.sh + 1;
	int64_t ow = (W + 2 * w.pw - w.dw * (w.kw - 1) - 1) / w.sw + 1;
	int b = lm_tensor_ndim(x) == 4 ? 0 : 1;
	int64_t N = b ? 1 : lm_tensor_shape(x)[0], R = w.kh * w.kw * C;
	int64_t s[3] = {N, oh * ow, R};
	lm_tensor *out = ot_new(3 - b, s + b, lm_tensor_dtype(x));
	for (int64_t n = 0; n < N; n++)
		for (int64_t oy = 0; oy < oh; oy++)
			for (int64_t ox = 0; ox < ow; ox++)
				for (int64_t ki = 0; ki < w.kh; ki++)
					for (int64_t kj = 0; kj < w.kw; kj++)
						for (int64_t ch = 0; ch < C; ch++) {
							int64_t iy = oy * w.sh - w.ph + ki * w.dh, ix = ox * w.sw - w.pw + kj * w.dw;
							int64_t xi[4] = {n, iy, ix, ch};
							bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
							ot_set_linear(out, ((n * oh + oy) * ow + ox) * R + (ki * w.kw + kj) * C + ch,
							              inside ? get(x, xi + b) : 0);
						}
	return out;
}

static lm_tensor *ref_window(const ot_case *c)
{
	if (c->op->fn == W_IM2COL_NHWC) return ref_window_nhwc(c);
	const lm_tensor *x = c->in[0];
	lm_window2d w = case_window(c);
	int64_t C = (int64_t)c->p[1], H = (int64_t)c->p[2], W = (int64_t)c->p[3];
	int64_t oh = (H + 2 * w.ph - w.dh * (w.kh - 1) - 1) / w.sh + 1;
	int64_t ow = (W + 2 * w.pw - w.dw * (w.kw - 1) - 1) / w.sw + 1;
	int nd = lm_tensor_ndim(x);
	bool im2col = c->op->fn == W_IM2COL, batched = nd == (im2col ? 4 : 3);
	int64_t N = batched ? lm_tensor_shape(x)[0] : 1;
	int64_t oshape[4], xi[4], ci[3];
	lm_tensor *out;
	int b = !batched;
	if (im2col) {
		int64_t s[3] = {N, C * w.kh * w.kw, oh * ow};
		memcpy(oshape, s, sizeof s);
		out = ot_new(3 - b, oshape + b, lm_tensor_dtype(x));
	} else {
		int64_t s[4] = {N, C, H, W};
		memcpy(oshape, s, sizeof s);
		out = ot_new(4 - b, oshape + b, lm_tensor_dtype(x));
	}
	double acc[4096 + 64] = {0};
	for (int64_t n = 0; n < N; n++)
		for (int64_t ch = 0; ch < C; ch++)
			for (int64_t ki = 0; ki < w.kh; ki++)
				for (int64_t kj = 0; kj < w.kw; kj++)
					for (int64_t oy = 0; oy < oh; oy++)
						for (int64_t ox = 0; ox < ow; ox++) {
							int64_t iy = oy * w.sh - w.ph + ki * w.dh, ix = ox * w.sw - w.pw + kj * w.dw;
							int64_t row = (ch * w.kh + ki) * w.kw + kj, col = oy * ow + ox;
							bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
							int64_t x4[4] = {n, ch, iy, ix}, c3[3] = {n, row, col};
							memcpy(xi, x4, sizeof xi);
							memcpy(ci, c3, sizeof ci);
							if (im2col) {
								double v = inside ? get(x, xi + b) : 0;
								ot_set_linear(out, (n * C * w.kh * w.kw + row) * oh * ow + col, v);
							} else if (inside) {
								acc[((n * C + ch) * H + iy) * W + ix] += get(x, ci + b);
							}
						}
	if (!im2col)
		for (int64_t i = 0; i < N * C * H * W; i++) set_wrapped(out, i, acc[i]);
	return out;
}

/* ---------------------------------------------------------------- add_scaled */

static void gen_add_scaled(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_binary(op, r, dt, l, c); /* broadcastable a and b */
	c->p[0] = lm_dtype_is_float(dt) ? ot_uniform(r, -2, 2) : (double)ot_int(r, -3, 3);
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_add_scaled(const ot_case *c) { return lm_add_scaled(c->in[0], c->in[1], c->p[0]); }

static lm_tensor *ref_add_scaled(const ot_case *c)
{
	const lm_tensor *a = c->in[0], *b = c->in[1];
	int nd = lm_tensor_ndim(a) > lm_tensor_ndim(b) ? lm_tensor_ndim(a) : lm_tensor_ndim(b);
	int64_t shape[LM_MAX_DIMS], idx[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) {
		int ia = i - (nd - lm_tensor_ndim(a)), ib = i - (nd - lm_tensor_ndim(b));
		int64_t x = ia >= 0 ? lm_tensor_shape(a)[ia] : 1, y = ib >= 0 ? lm_tensor_shape(b)[ib] : 1;
		shape[i] = x == 1 ? y : x;
	}
	lm_dtype dt = lm_tensor_dtype(a);
	lm_tensor *out = ot_new(nd, shape, dt);
	int64_t n = lm_tensor_numel(out);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		double x = ot_get_bcast(a, nd, idx), y = ot_get_bcast(b, nd, idx), al = c->p[0];
		/* float32 rounds the product, then the sum */
		double v = dt == LM_FLOAT32 ? (double)((float)x + (float)((float)al * (float)y)) : x + al * y;
		set_wrapped(out, i, v);
	}
	return out;
}

/* ---------------------------------------------------------------- the rows */

const ot_op ot_ops2_ops[] = {
	{"cat", 4, OT_ALL, true, -2, 2, gen_join, run_join, ref_join, 0, 0, J_CAT},
	{"stack", 4, OT_ALL, true, -2, 2, gen_join, run_join, ref_join, 0, 0, J_STACK},
	{"index_select", 2, OT_ALL, true, -2, 2, gen_index_select, run_index_select, ref_index_select, 0, 0, 510},
	{"gather", 2, OT_ALL, true, -2, 2, gen_gather, run_gather, ref_gather, 0, 0, I_GATHER},
	{"scatter_add", 3, OT_ALL, true, -2, 2, gen_gather, run_gather, ref_gather, 1e-5, 1e-5, I_SCATTER_ADD},
	{"masked_fill", 2, OT_ALL, true, -2, 2, gen_masked_fill, run_masked_fill, ref_masked_fill, 0, 0, 530},
	{"sort.values", 1, OT_ALL, true, -3, 3, gen_sort, run_sort, ref_sort, 0, 0, S_SORT_V},
	{"sort.indices", 1, OT_ALL, false, -3, 3, gen_sort, run_sort, ref_sort, 0, 0, S_SORT_I},
	{"topk.values", 1, OT_ALL, true, -3, 3, gen_sort, run_sort, ref_sort, 0, 0, S_TOPK_V},
	{"topk.indices", 1, OT_ALL, false, -3, 3, gen_sort, run_sort, ref_sort, 0, 0, S_TOPK_I},
	{"cumsum", 1, OT_ALL, true, -2, 2, gen_dim, run_cumsum, ref_cumsum, 0, 0, 550},
	{"tril", 1, OT_ALL, true, -2, 2, gen_triangle, run_triangle, ref_triangle, 0, 0, T_TRIL},
	{"triu", 1, OT_ALL, true, -2, 2, gen_triangle, run_triangle, ref_triangle, 0, 0, T_TRIU},
	{"one_hot", 1, (1u << LM_INT32) | (1u << LM_INT64), false, 0, 0, gen_one_hot, run_one_hot, ref_one_hot, 0, 0, 570},
	{"repeat", 1, OT_ALL, true, -2, 2, gen_shape_op, run_shape_op, ref_shape_op, 0, 0, P_REPEAT},
	{"flip", 1, OT_ALL, true, -2, 2, gen_shape_op, run_shape_op, ref_shape_op, 0, 0, P_FLIP},
	{"pad", 1, OT_ALL, true, -2, 2, gen_shape_op, run_shape_op, ref_shape_op, 0, 0, P_PAD},
	{"im2col", 1, OT_ALL, true, -2, 2, gen_window, run_window, ref_window, 0, 0, W_IM2COL},
	{"col2im", 1, OT_ALL, true, -2, 2, gen_window, run_window, ref_window, 1e-5, 1e-5, W_COL2IM},
	{"im2col_nhwc", 1, OT_ALL, false, -2, 2, gen_window, run_window, ref_window, 0, 0, W_IM2COL_NHWC},
	{"add_scaled", 2, OT_ALL, true, -2, 2, gen_add_scaled, run_add_scaled, ref_add_scaled, 0, 0, 620},
};
const int ot_ops2_count = (int)(sizeof ot_ops2_ops / sizeof ot_ops2_ops[0]);
