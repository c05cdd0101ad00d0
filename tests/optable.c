/*
 * optable.c — the op table's machinery: a test RNG, tensors in every layout, input generators,
 * reference helpers and the tolerance check. The rows themselves are in optable_*.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optable.h"

/* ---------------------------------------------------------------- rng (splitmix64) */

uint64_t ot_next(ot_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double ot_uniform(ot_rng *r, double lo, double hi)
{
	return lo + (hi - lo) * ((double)(ot_next(r) >> 11) * 0x1.0p-53);
}

int64_t ot_int(ot_rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(ot_next(r) % (uint64_t)(hi - lo + 1));
}

/* ---------------------------------------------------------------- layouts */

const char *ot_layout_name(ot_layout l)
{
	static const char *const n[] = {"contiguous", "transposed", "narrowed", "expanded"};
	return l < OT_LAYOUT_COUNT ? n[l] : "?";
}

static void fill_random(ot_rng *r, lm_tensor *t, double lo, double hi)
{
	int64_t n = lm_tensor_numel(t);
	lm_dtype dt = lm_tensor_dtype(t);
	for (int64_t i = 0; i < n; i++) {
		double v;
		if (lm_dtype_is_float(dt)) {
			v = ot_uniform(r, lo, hi);
		} else {
			/* small integers, within [lo, hi] where the row narrows the range */
			int64_t a = dt == LM_UINT8 ? 0 : -5, b = dt == LM_UINT8 ? 9 : 5;
			if (ceil(lo) > (double)a) a = (int64_t)ceil(lo);
			if (floor(hi) < (double)b) b = (int64_t)floor(hi);
			if (b < a) b = a;
			v = (double)ot_int(r, a, b);
		}
		ot_set_linear(t, i, v);
	}
}

lm_tensor *ot_make(ot_rng *r, int ndim, const int64_t *shape, lm_dtype dt, ot_layout l, double lo,
                   double hi)
{
	lm_tensor *t = NULL, *base = NULL;
	switch (l) {
	case OT_CONTIGUOUS:
		t = lm_empty(ndim, shape, dt);
		if (t) fill_random(r, t, lo, hi);
		return t;
	case OT_TRANSPOSED: {
		int64_t rev[LM_MAX_DIMS];
		int perm[LM_MAX_DIMS];
		for (int i = 0; i < ndim; i++) {
			rev[i] = shape[ndim - 1 - i];
			perm[i] = ndim - 1 - i;
		}
		base = lm_empty(ndim, rev, dt);
		if (!base) return NULL;
		fill_random(r, base, lo, hi);
		t = lm_permute(base, perm);
		break;
	}
	case OT_NARROWED: {
		/* each dim one larger (two for the last), then narrowed back to shape */
		int64_t big[LM_MAX_DIMS] = {0};
		for (int i = 0; i < ndim; i++) big[i] = shape[i] + (i == ndim - 1 ? 2 : 1);
		base = lm_empty(ndim, big, dt);
		if (!base) return NULL;
		fill_random(r, base, lo, hi);
		t = lm_tensor_retain(base);
		for (int i = 0; i < ndim && t; i++) {
			lm_tensor *n = lm_narrow(t, i, 1, shape[i]);
			lm_tensor_release(t);
			t = n;
		}
		break;
	}
	case OT_EXPANDED: {
		/* every other dim (starting with a random one) of size > 1 broadcast from size 1 */
		int64_t small[LM_MAX_DIMS];
		int k = (int)ot_int(r, 0, 1);
		for (int i = 0; i < ndim; i++) small[i] = ((i + k) % 2 == 0) ? 1 : shape[i];
		base = lm_empty(ndim, small, dt);
		if (!base) return NULL;
		fill_random(r, base, lo, hi);
		t = lm_expand(base, ndim, shape);
		break;
	}
	default: return NULL;
	}
	lm_tensor_release(base);
	return t;
}

int ot_shape(ot_rng *r, int min_nd, int max_nd, int64_t *shape)
{
	static const int64_t pool[] = {1, 2, 3, 5, 7, 16, 17, 33, 1, 2, 3, 4};
	int nd = (int)ot_int(r, min_nd, max_nd);
	int64_t numel = 1;
	for (int i = 0; i < nd; i++) {
		shape[i] = pool[ot_int(r, 0, (int64_t)(sizeof pool / sizeof pool[0]) - 1)];
		if (ot_int(r, 0, 29) == 0) shape[i] = 0;
		/* keep cases small: at most ~4k elements */
		while (numel * shape[i] > 4096 && shape[i] > 1) shape[i] /= 2;
		numel *= shape[i] ? shape[i] : 1;
	}
	return nd;
}

void ot_case_free(ot_case *c)
{
	for (int i = 0; i < OT_MAX_IN; i++) {
		lm_tensor_release(c->in[i]);
		c->in[i] = NULL;
	}
}

/* ---------------------------------------------------------------- generators */

void ot_describe(ot_case *c, const ot_op *op, lm_dtype dt, ot_layout l)
{
	c->op = op;
	c->dtype = dt;
	int n = snprintf(c->desc, sizeof c->desc, "%s %s %s:", op->name, lm_dtype_name(dt),
	                 ot_layout_name(l));
	for (int i = 0; i < c->nin && n < (int)sizeof c->desc; i++) {
		char b[LM_SHAPE_STR_MAX];
		if (!c->in[i]) continue;
		n += snprintf(c->desc + n, sizeof c->desc - (size_t)n, " %s",
		              lm_shape_str(lm_tensor_ndim(c->in[i]), lm_tensor_shape(c->in[i]), b, sizeof b));
	}
	if (n < (int)sizeof c->desc)
		snprintf(c->desc + n, sizeof c->desc - (size_t)n, " p=[%g %g %g]", c->p[0], c->p[1], c->p[2]);
}

void ot_gen_unary(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 4, shape);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	ot_describe(c, op, dt, l);
}

void ot_gen_binary(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS], sa[LM_MAX_DIMS], sb[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 4, shape);
	/* a: the full shape with some dims set to 1; b: trailing dims, some set to 1 */
	int nb = (int)ot_int(r, 0, nd);
	for (int i = 0; i < nd; i++) sa[i] = ot_int(r, 0, 3) == 0 ? 1 : shape[i];
	for (int i = 0; i < nb; i++) sb[i] = ot_int(r, 0, 3) == 0 ? 1 : shape[nd - nb + i];
	bool swap = ot_int(r, 0, 1);
	c->nin = 2;
	c->in[swap] = ot_make(r, nd, sa, dt, l, op->lo, op->hi);
	c->in[!swap] = ot_make(r, nb, sb, dt, (ot_layout)ot_int(r, 0, OT_LAYOUT_COUNT - 1), op->lo, op->hi);
	ot_describe(c, op, dt, l);
}

void ot_gen_reduce(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, 0, 4, shape);
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	/* dim: LM_DIM_ALL a third of the time, else any dim, negative half of the time */
	if (nd == 0 || ot_int(r, 0, 2) == 0) {
		c->p[0] = LM_DIM_ALL;
	} else {
		int d = (int)ot_int(r, 0, nd - 1);
		c->p[0] = ot_int(r, 0, 1) ? d : d - nd;
	}
	c->p[1] = (double)ot_int(r, 0, 1);
	ot_describe(c, op, dt, l);
}

/* ---------------------------------------------------------------- reference helpers */

void ot_unravel(int64_t i, int ndim, const int64_t *shape, int64_t *idx)
{
	for (int d = ndim - 1; d >= 0; d--) {
		idx[d] = shape[d] ? i % shape[d] : 0;
		i = shape[d] ? i / shape[d] : 0;
	}
}

double ot_get_bcast(const lm_tensor *t, int ndim, const int64_t *idx)
{
	int tn = lm_tensor_ndim(t);
	const int64_t *ts = lm_tensor_shape(t);
	int64_t k[LM_MAX_DIMS];
	for (int i = 0; i < tn; i++) {
		int64_t j = idx[ndim - tn + i];
		k[i] = ts[i] == 1 ? 0 : j;
	}
	double v = NAN;
	lm_tensor_get(t, k, &v);
	return v;
}

lm_tensor *ot_new(int ndim, const int64_t *shape, lm_dtype dt) { return lm_zeros(ndim, shape, dt); }

void ot_set_linear(lm_tensor *t, int64_t i, double v)
{
	int64_t idx[LM_MAX_DIMS];
	ot_unravel(i, lm_tensor_ndim(t), lm_tensor_shape(t), idx);
	lm_tensor_set(t, idx, v);
}

double ot_get_linear(const lm_tensor *t, int64_t i)
{
	int64_t idx[LM_MAX_DIMS];
	double v = NAN;
	ot_unravel(i, lm_tensor_ndim(t), lm_tensor_shape(t), idx);
	lm_tensor_get(t, idx, &v);
	return v;
}

static bool any_nonfinite; /* ot_close_grad's rule, for the call in progress */

bool ot_close_grad(const lm_tensor *got, const lm_tensor *want, double rtol, double atol,
                   char *why, size_t cap)
{
	any_nonfinite = true;
	bool ok = ot_close(got, want, rtol, atol, why, cap);
	any_nonfinite = false;
	return ok;
}

bool ot_close(const lm_tensor *got, const lm_tensor *want, double rtol, double atol, char *why,
              size_t cap)
{
	char a[LM_SHAPE_STR_MAX], b[LM_SHAPE_STR_MAX];
	if (!got) {
		snprintf(why, cap, "the op failed: %s", lm_last_error());
		return false;
	}
	if (lm_tensor_dtype(got) != lm_tensor_dtype(want)) {
		snprintf(why, cap, "dtype %s, expected %s", lm_dtype_name(lm_tensor_dtype(got)),
		         lm_dtype_name(lm_tensor_dtype(want)));
		return false;
	}
	int nd = lm_tensor_ndim(got);
	bool same = nd == lm_tensor_ndim(want);
	for (int i = 0; same && i < nd; i++) same = lm_tensor_shape(got)[i] == lm_tensor_shape(want)[i];
	if (!same) {
		snprintf(why, cap, "shape %s, expected %s",
		         lm_shape_str(nd, lm_tensor_shape(got), a, sizeof a),
		         lm_shape_str(lm_tensor_ndim(want), lm_tensor_shape(want), b, sizeof b));
		return false;
	}
	int64_t n = lm_tensor_numel(got);
	for (int64_t i = 0; i < n; i++) {
		double g = ot_get_linear(got, i), w = ot_get_linear(want, i);
		bool ok;
		if (any_nonfinite && !isfinite(w))
			ok = !isfinite(g);
		else if (isnan(w))
			ok = isnan(g);
		else if (isinf(w))
			ok = g == w;
		else
			ok = fabs(g - w) <= atol + rtol * fabs(w);
		if (!ok) {
			snprintf(why, cap, "element %lld: got %.9g, expected %.9g", (long long)i, g, w);
			return false;
		}
	}
	return true;
}

/* ---------------------------------------------------------------- the registry */

const ot_op *ot_all(int *count)
{
	/* Later files add their arrays here. */
	static ot_op all[512];
	static int n = -1;
	if (n < 0) {
		n = 0;
		for (int i = 0; i < ot_core_count; i++) all[n++] = ot_core_ops[i];
		for (int i = 0; i < ot_ops2_count; i++) all[n++] = ot_ops2_ops[i];
		for (int i = 0; i < ot_nn_count; i++) all[n++] = ot_nn_ops[i];
	}
	*count = n;
	return all;
}
