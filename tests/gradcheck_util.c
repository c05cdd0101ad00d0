/*
 * gradcheck_util.c — see gradcheck_util.h. Plain loops over elements through the public API.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_util.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Offsets (in elements, from the first element) of t's elements, sorted, duplicates removed. */
static int64_t *distinct_offsets(const lm_tensor *t, int64_t *count)
{
	int nd = lm_tensor_ndim(t);
	const int64_t *shape = lm_tensor_shape(t), *st = lm_tensor_strides(t);
	int64_t n = lm_tensor_numel(t), idx[LM_MAX_DIMS];
	int64_t *off = malloc((size_t)(n ? n : 1) * sizeof *off);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		int64_t o = 0;
		for (int d = 0; d < nd; d++) o += idx[d] * st[d];
		off[i] = o;
	}
	qsort(off, (size_t)n, sizeof *off, cmp_i64);
	int64_t m = 0;
	for (int64_t i = 0; i < n; i++)
		if (m == 0 || off[i] != off[m - 1]) off[m++] = off[i];
	*count = m;
	return off;
}

void gc_spread(ot_rng *r, lm_tensor *t, double lo, double hi, double u)
{
	int64_t n;
	int64_t *off = distinct_offsets(t, &n);
	int64_t *perm = malloc((size_t)(n ? n : 1) * sizeof *perm);
	for (int64_t i = 0; i < n; i++) perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = ot_int(r, 0, i), x = perm[i];
		perm[i] = perm[j];
		perm[j] = x;
	}
	double *base = lm_tensor_data(t);
	for (int64_t i = 0; i < n; i++) base[off[i]] = lo + ((double)perm[i] + u) * (hi - lo) / (double)n;
	free(perm);
	free(off);
}

double gc_min_gap(const lm_tensor *a, const lm_tensor *b)
{
	lm_tensor *d = lm_sub(a, b);
	double m = INFINITY;
	for (int64_t i = 0, n = d ? lm_tensor_numel(d) : 0; i < n; i++) m = fmin(m, fabs(gc_at(d, i)));
	lm_tensor_release(d);
	return m;
}

double gc_min_dist(const lm_tensor *t, double v)
{
	double m = INFINITY;
	for (int64_t i = 0, n = lm_tensor_numel(t); i < n; i++) m = fmin(m, fabs(gc_at(t, i) - v));
	return m;
}

bool gc_all_finite(const lm_tensor *t)
{
	for (int64_t i = 0, n = lm_tensor_numel(t); i < n; i++)
		if (!isfinite(gc_at(t, i))) return false;
	return true;
}

double gc_min_value(const lm_tensor *t)
{
	double m = INFINITY;
	for (int64_t i = 0, n = lm_tensor_numel(t); i < n; i++) m = fmin(m, gc_at(t, i));
	return m;
}

lm_tensor *gc_run_case(void *ctx, int n, lm_tensor *const *inputs)
{
	(void)n;
	(void)inputs; /* the case holds the same tensors */
	const ot_case *c = ctx;
	return c->op->run(c);
}

lm_tensor *gc_tensor(int ndim, const int64_t *shape, const double *values)
{
	return lm_from_data(values, ndim, shape, LM_FLOAT64);
}

double gc_at(const lm_tensor *t, int64_t i) { return ot_get_linear(t, i); }
