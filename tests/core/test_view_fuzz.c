/*
 * test_view_fuzz.c — random chains of views checked against an explicit model.
 *
 * The model of a view is the list of base-storage positions of its elements in C order. Each
 * random step (transpose, permute, narrow, select, expand, unsqueeze, squeeze, flatten, view,
 * reshape, t) is applied both to the tensor and to the model; after each step every element read
 * through the view must equal the base value at the model's position, and a write through the
 * view must land there. Thousands of chains, with seeds printed on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lmi.h"
#include "optable.h"
#include "testutil.h"

typedef struct model {
	int nd;
	int64_t shape[LM_MAX_DIMS];
	int64_t *pos; /* base position of each element, C order */
	int64_t n;
} model;

static int64_t numel(int nd, const int64_t *s)
{
	int64_t n = 1;
	for (int i = 0; i < nd; i++) n *= s[i];
	return n;
}

/* Builds a new model of shape (nd, s) whose element at multi-index j takes old[src(j)]. */
typedef void (*mapfn)(const model *old, const int64_t *j, int64_t *oi, const int64_t *arg);

static void remap(model *m, int nd, const int64_t *s, mapfn f, const int64_t *arg)
{
	model old = *m;
	int64_t n = numel(nd, s), j[LM_MAX_DIMS], oi[LM_MAX_DIMS];
	int64_t *pos = malloc((size_t)(n ? n : 1) * sizeof *pos);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, s, j);
		f(&old, j, oi, arg);
		int64_t lin = 0;
		for (int k = 0; k < old.nd; k++) lin = lin * old.shape[k] + oi[k];
		pos[i] = old.pos[lin];
	}
	free(old.pos);
	m->pos = pos;
	m->n = n;
	m->nd = nd;
	memcpy(m->shape, s, sizeof(int64_t) * (size_t)nd);
}

/* arg: [0..nd) the permutation (new dim k reads old dim arg[k]) */
static void map_perm(const model *o, const int64_t *j, int64_t *oi, const int64_t *a)
{
	for (int k = 0; k < o->nd; k++) oi[a[k]] = j[k];
}
/* arg: dim, start */
static void map_narrow(const model *o, const int64_t *j, int64_t *oi, const int64_t *a)
{
	for (int k = 0; k < o->nd; k++) oi[k] = j[k] + (k == a[0] ? a[1] : 0);
}
/* arg: dim, index */
static void map_select(const model *o, const int64_t *j, int64_t *oi, const int64_t *a)
{
	for (int k = 0, m = 0; k < o->nd; k++) oi[k] = k == a[0] ? a[1] : j[m++];
}
/* arg: number of new leading dims */
static void map_expand(const model *o, const int64_t *j, int64_t *oi, const int64_t *a)
{
	for (int k = 0; k < o->nd; k++) oi[k] = o->shape[k] == 1 ? 0 : j[k + a[0]];
}
/* view, reshape, flatten, squeeze, unsqueeze: the C-order element sequence is unchanged, only the
 * shape changes */
static void remap_linear(model *m, int nd, const int64_t *s)
{
	m->nd = nd;
	memcpy(m->shape, s, sizeof(int64_t) * (size_t)nd);
}

/* Checks the view against the model: reads, then one write. */
static bool check(const lm_tensor *v, const model *m, lm_tensor *base, char *why, size_t cap)
{
	if (lm_tensor_ndim(v) != m->nd) {
		snprintf(why, cap, "ndim %d, model %d", lm_tensor_ndim(v), m->nd);
		return false;
	}
	for (int k = 0; k < m->nd; k++)
		if (lm_tensor_shape(v)[k] != m->shape[k]) {
			snprintf(why, cap, "dim %d is %lld, model %lld", k, (long long)lm_tensor_shape(v)[k],
			         (long long)m->shape[k]);
			return false;
		}
	/* the engine's byte geometry (nb, byte_offset: what the iterator walks) is the public one
	 * times the element size */
	int64_t es = (int64_t)lm_dtype_size(v->dtype);
	for (int k = 0; k < m->nd; k++)
		if (v->nb[k] != v->stride[k] * es) { /* (shapes here are small: no overflow) */
			snprintf(why, cap, "dim %d: byte stride %lld, element stride %lld", k, (long long)v->nb[k],
			         (long long)v->stride[k]);
			return false;
		}
	if (v->byte_offset != v->offset * es ||
	    (const char *)lm_tensor_data(v) != (const char *)v->storage->data + v->offset * es) {
		snprintf(why, cap, "byte offset %lld for element offset %lld", (long long)v->byte_offset,
		         (long long)v->offset);
		return false;
	}
	const double *b = lm_tensor_data(base);
	for (int64_t i = 0; i < m->n; i++) {
		double got = ot_get_linear(v, i);
		if (got != b[m->pos[i]]) {
			snprintf(why, cap, "element %lld reads %g, model says base[%lld] = %g", (long long)i,
			         got, (long long)m->pos[i], b[m->pos[i]]);
			return false;
		}
	}
	return true;
}

static void one_chain(uint64_t seed)
{
	ot_rng r = {seed};
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(&r, 1, 4, shape);
	for (int i = 0; i < nd; i++)
		if (!shape[i]) shape[i] = 2;
	int64_t n = numel(nd, shape);
	lm_tensor *base = lm_arange(0, (double)n, 1, LM_FLOAT64);
	lm_tensor *v = lm_view(base, nd, shape);
	model m = {nd, {0}, malloc((size_t)n * sizeof(int64_t)), n};
	memcpy(m.shape, shape, sizeof shape);
	for (int64_t i = 0; i < n; i++) m.pos[i] = i;
	char why[256] = "";
	for (int step = 0; step < 12; step++) {
		lm_tensor *w = NULL;
		int op = (int)ot_int(&r, 0, 9);
		int d = m.nd ? (int)ot_int(&r, 0, m.nd - 1) : 0;
		int64_t s2[LM_MAX_DIMS], a[LM_MAX_DIMS];
		memcpy(s2, m.shape, sizeof s2);
		switch (op) {
		case 0: { /* transpose */
			if (m.nd < 2) continue;
			int e = (int)ot_int(&r, 0, m.nd - 1);
			for (int k = 0; k < m.nd; k++) a[k] = k;
			a[d] = e;
			a[e] = d;
			s2[d] = m.shape[e];
			s2[e] = m.shape[d];
			w = lm_transpose(v, d, e - m.nd); /* negative dims too */
			if (w) remap(&m, m.nd, s2, map_perm, a);
			break;
		}
		case 1: { /* permute */
			int p[LM_MAX_DIMS];
			for (int k = 0; k < m.nd; k++) p[k] = k;
			for (int k = m.nd - 1; k > 0; k--) {
				int j = (int)ot_int(&r, 0, k), t = p[k];
				p[k] = p[j];
				p[j] = t;
			}
			for (int k = 0; k < m.nd; k++) {
				a[k] = p[k];
				s2[k] = m.shape[p[k]];
			}
			w = lm_permute(v, p);
			if (w) remap(&m, m.nd, s2, map_perm, a);
			break;
		}
		case 2: { /* narrow */
			if (!m.nd) continue;
			int64_t st = ot_int(&r, 0, m.shape[d]), len = ot_int(&r, 0, m.shape[d] - st);
			if (len == 0 && ot_int(&r, 0, 3)) len = m.shape[d] - st; /* keep most chains non-empty */
			s2[d] = len;
			a[0] = d;
			a[1] = st;
			w = lm_narrow(v, d, st, len);
			if (w) remap(&m, m.nd, s2, map_narrow, a);
			break;
		}
		case 3: { /* select */
			if (!m.nd || !m.shape[d] || m.nd == 1) continue;
			int64_t i = ot_int(&r, 0, m.shape[d] - 1);
			int k2 = 0;
			for (int k = 0; k < m.nd; k++)
				if (k != d) s2[k2++] = m.shape[k];
			a[0] = d;
			a[1] = i;
			w = lm_select(v, d, i - (ot_int(&r, 0, 1) ? m.shape[d] : 0));
			if (w) remap(&m, m.nd - 1, s2, map_select, a);
			break;
		}
		case 4: { /* expand: size-1 dims to 3, maybe a new leading dim */
			if (m.nd >= LM_MAX_DIMS) continue;
			int lead = (int)ot_int(&r, 0, 1);
			int64_t es[LM_MAX_DIMS];
			if (lead) es[0] = 2;
			for (int k = 0; k < m.nd; k++) es[k + lead] = m.shape[k] == 1 ? 3 : m.shape[k];
			a[0] = lead;
			w = lm_expand(v, m.nd + lead, es);
			if (w) remap(&m, m.nd + lead, es, map_expand, a);
			break;
		}
		case 5: { /* unsqueeze */
			if (m.nd >= LM_MAX_DIMS) continue;
			int at = (int)ot_int(&r, 0, m.nd);
			int64_t us[LM_MAX_DIMS];
			for (int k = 0, j = 0; k <= m.nd; k++) us[k] = k == at ? 1 : m.shape[j++];
			w = lm_unsqueeze(v, at);
			if (w) remap_linear(&m, m.nd + 1, us);
			break;
		}
		case 6: { /* squeeze all */
			int64_t ss[LM_MAX_DIMS];
			int k2 = 0;
			for (int k = 0; k < m.nd; k++)
				if (m.shape[k] != 1) ss[k2++] = m.shape[k];
			w = lm_squeeze(v, LM_ALL_DIMS);
			if (w) remap_linear(&m, k2, ss);
			break;
		}
		case 7: { /* flatten a range */
			if (!m.nd) continue;
			int e = (int)ot_int(&r, d, m.nd - 1);
			int64_t fs[LM_MAX_DIMS];
			int k2 = 0;
			for (int k = 0; k < d; k++) fs[k2++] = m.shape[k];
			fs[k2] = 1;
			for (int k = d; k <= e; k++) fs[k2] *= m.shape[k];
			k2++;
			for (int k = e + 1; k < m.nd; k++) fs[k2++] = m.shape[k];
			w = lm_flatten(v, d, e);
			if (w) remap_linear(&m, k2, fs);
			break;
		}
		case 8: { /* view when the strides allow, else reshape, which copies */
			int64_t rs[2] = {-1, 1}, s3[2] = {m.n, 1};
			if (!m.n) continue;
			w = lm_view(v, 2, rs);
			if (!w) {
				lm_clear_error();
				w = lm_reshape(v, 2, rs);
			}
			if (w) remap_linear(&m, 2, s3);
			break;
		}
		default: { /* t() on at most 2 dims */
			if (m.nd > 2) continue;
			if (m.nd == 2) {
				a[0] = 1;
				a[1] = 0;
				s2[0] = m.shape[1];
				s2[1] = m.shape[0];
			}
			w = lm_t(v);
			if (w && m.nd == 2) remap(&m, 2, s2, map_perm, a);
			break;
		}
		}
		if (!w) fail_msg("seed %llu step %d op %d: %s", (unsigned long long)seed, step, op, lm_last_error());
		if (!lm_tensor_shares_storage(w, base)) {
			/* only reshape and flatten may copy (when the strides cannot express the result);
			 * the model then continues on the copy */
			if (op != 7 && op != 8)
				fail_msg("seed %llu step %d: op %d copied instead of making a view",
				         (unsigned long long)seed, step, op);
			assert_true(lm_tensor_is_contiguous(w));
			lm_tensor_release(base);
			base = lm_tensor_retain(w);
			for (int64_t i = 0; i < m.n; i++) m.pos[i] = i;
		}
		lm_tensor_release(v);
		v = w;
		if (!check(v, &m, base, why, sizeof why))
			fail_msg("seed %llu step %d op %d: %s", (unsigned long long)seed, step, op, why);
	}
	/* a write through the final view lands where the model says */
	if (m.n > 0) {
		int64_t i = ot_int(&r, 0, m.n - 1), idx[LM_MAX_DIMS];
		ot_unravel(i, m.nd, m.shape, idx);
		bool overlap = false;
		for (int k = 0; k < m.nd; k++) overlap |= lm_tensor_strides(v)[k] == 0 && m.shape[k] > 1;
		if (!overlap) {
			assert_int_equal(lm_tensor_set(v, idx, -7), LM_OK);
			double got = ((const double *)lm_tensor_data(base))[m.pos[i]];
			if (got != -7)
				fail_msg("seed %llu: a write through the view to element %lld did not reach "
				         "base[%lld] (%g)", (unsigned long long)seed, (long long)i,
				         (long long)m.pos[i], got);
		}
	}
	free(m.pos);
	lm_tensor_release(v);
	lm_tensor_release(base);
}

static void test_view_chains(void **state)
{
	(void)state;
	lm_memory_stats a, b;
	lm_memory_stats_get(&a);
	for (uint64_t seed = 1; seed <= 3000; seed++) one_chain(seed);
	lm_memory_stats_get(&b);
	assert_int_equal(a.live_tensors, b.live_tensors);
	assert_int_equal(a.live_bytes, b.live_bytes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_view_chains)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
