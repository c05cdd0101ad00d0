/*
 * gradcheck.c — lm_gradcheck: backward's gradients against float64 central differences.
 *
 * Design: one forward with grad on and a backward of L = sum(fn(x) * r), r fixed random weights,
 * gives the analytic gradients; then, with grad off, each checked memory location of each input
 * is set to v + eps and v - eps in place and dL/dv ~ (L+ - L-) / 2 eps. Locations, not elements:
 * an expanded input's aliased elements move together, so they are compared with the sum of their
 * analytic gradients. Read next: engine.c, tests/autograd/test_gradcheck_table.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ops/ops.h"

/* One element of an input: where it lives in storage and its C-order index in the input. */
typedef struct loc {
	int64_t off;
	int64_t idx;
} loc;

static int loc_cmp(const void *a, const void *b)
{
	const loc *x = a, *y = b;
	if (x->off != y->off) return x->off < y->off ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Fixed weights in +-[0.5, 1.5] (splitmix64), so every output element counts with its own sign. */
static lm_tensor *weights(const lm_tensor *out)
{
	lm_tensor *r = lm_empty(out->ndim, out->shape, LM_FLOAT64);
	if (!r) return NULL;
	uint64_t s = 0x5eed5eedull;
	double *p = (double *)lmi_data(r);
	for (int64_t i = 0, n = lm_tensor_numel(r); i < n; i++) {
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		double u = (double)(z >> 11) * 0x1.0p-53;
		p[i] = (z & 1 ? -1 : 1) * (0.5 + u);
	}
	return r;
}

static bool same_shape_t(const lm_tensor *a, const lm_tensor *b)
{
	if (a->ndim != b->ndim) return false;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i]) return false;
	return true;
}

static void unravel(int64_t i, int ndim, const int64_t *shape, int64_t *idx)
{
	for (int d = ndim - 1; d >= 0; d--) {
		idx[d] = shape[d] ? i % shape[d] : 0;
		i = shape[d] ? i / shape[d] : 0;
	}
}

typedef struct ctx {
	lm_gradcheck_fn fn;
	void *fctx;
	int n;
	lm_tensor *const *inputs;
	lm_tensor *r; /* the weights, made at the first call */
} ctx;

/* L = sum(fn(inputs) * r); *loss receives the 0-d result (+1), or *value its value (grad off). */
static lm_status evaluate(ctx *c, lm_tensor **loss, double *value)
{
	lm_tensor *out = c->fn(c->fctx, c->n, c->inputs);
	if (!out) {
		char msg[400];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		return lmi_fail(lm_last_status() ? lm_last_status() : LM_ERR_ARG,
		                "gradcheck: the function failed: %s", msg);
	}
	lm_status s = LM_OK;
	if (out->dtype != LM_FLOAT64) {
		s = lmi_fail(LM_ERR_DTYPE, "gradcheck: the function returned %s; central differences "
		             "need float64", lm_dtype_name(out->dtype));
		goto out;
	}
	if (!c->r && !(c->r = weights(out))) {
		s = lm_last_status();
		goto out;
	}
	if (!same_shape_t(out, c->r)) {
		s = lmi_fail(LM_ERR_SHAPE, "gradcheck: the function returned shape %s, earlier %s",
		             lmi_shape_s(out), lmi_shape_s(c->r));
		goto out;
	}
	lm_tensor *w = lm_mul(out, c->r);
	lm_tensor *l = w ? lm_sum(w, LM_DIM_ALL, false) : NULL;
	lm_tensor_release(w);
	if (!l) {
		s = lm_last_status();
		goto out;
	}
	if (loss) {
		*loss = l;
	} else {
		s = lm_tensor_item(l, value);
		lm_tensor_release(l);
	}
out:
	lm_tensor_release(out);
	return s;
}

static lm_status check_inputs(int n, lm_tensor *const *in)
{
	int checked = 0;
	for (int i = 0; i < n; i++) {
		const lm_tensor *t = in[i];
		if (!t || !t->requires_grad) continue; /* NULL: an absent optional input */
		checked++;
		if (t->dtype != LM_FLOAT64)
			return lmi_fail(LM_ERR_DTYPE, "gradcheck: input %d is %s; it must be float64", i,
			                lm_dtype_name(t->dtype));
		if (t->grad_fn)
			return lmi_fail(LM_ERR_ARG, "gradcheck: input %d was made by %s; pass leaves", i,
			                t->grad_fn->info->grad_name);
		if (t->storage->device != LM_CPU)
			return lmi_fail(LM_ERR_DEVICE, "gradcheck: input %d is on %s; gradcheck runs on the "
			                "CPU", i, lm_device_name(t->storage->device));
		for (int j = 0; j < i; j++)
			if (in[j] && in[j]->requires_grad && in[j]->storage == t->storage)
				return lmi_fail(LM_ERR_ARG, "gradcheck: inputs %d and %d share storage", j, i);
	}
	if (!checked) return lmi_fail(LM_ERR_ARG, "gradcheck: no input requires grad");
	return LM_OK;
}

/* The storage location of every element of t, sorted by location (then index). */
static loc *locations(const lm_tensor *t, int64_t *count)
{
	int64_t n = lm_tensor_numel(t);
	loc *l = lm_alloc((size_t)(n ? n : 1) * sizeof *l);
	if (!l) return NULL;
	int64_t idx[LM_MAX_DIMS] = {0};
	for (int64_t i = 0; i < n; i++) {
		int64_t off = t->offset;
		for (int d = 0; d < t->ndim; d++) off += idx[d] * t->stride[d];
		l[i] = (loc){off, i};
		for (int d = t->ndim - 1; d >= 0; d--) { /* next C-order index */
			if (++idx[d] < t->shape[d]) break;
			idx[d] = 0;
		}
	}
	qsort(l, (size_t)n, sizeof *l, loc_cmp);
	*count = n;
	return l;
}

typedef struct worst {
	double ratio, analytic, numeric; /* the element with the largest error / tolerance */
	double abs_err;                  /* the largest finite |analytic - numeric| */
	int input;
	int64_t idx;
	int64_t checked;
} worst;

/* Central differences over the (sampled) locations of input i, compared with grad g. */
static lm_status check_input(ctx *c, int i, const lm_tensor *g, const lm_gradcheck_opts *o,
                             worst *w)
{
	const lm_tensor *t = c->inputs[i];
	int64_t n;
	loc *l = locations(t, &n);
	if (!l) return lm_last_status();
	lm_status s = LM_OK;
	/* group starts: one per distinct location */
	int64_t ngroups = 0;
	for (int64_t k = 0; k < n; k++)
		if (k == 0 || l[k].off != l[k - 1].off) ngroups++;
	int64_t want = o->max_elements > 0 && o->max_elements < ngroups ? o->max_elements : ngroups;
	const double *gd = g ? (const double *)lmi_data(g) : NULL; /* contiguous, C order */
	double *base = (double *)t->storage->data;
	int64_t k = 0, group = 0, next_pick = 0, picked = 0;
	while (k < n && picked < want) {
		int64_t end = k + 1;
		while (end < n && l[end].off == l[k].off) end++;
		/* pick groups floor(j * ngroups / want) for j = 0, 1, ... */
		if (group == next_pick) {
			double analytic = 0;
			for (int64_t m = k; m < end; m++) analytic += gd ? gd[l[m].idx] : 0;
			double v = base[l[k].off], lp = 0, lo = 0;
			base[l[k].off] = v + o->eps;
			s = evaluate(c, NULL, &lp);
			base[l[k].off] = v - o->eps;
			if (!s) s = evaluate(c, NULL, &lo);
			base[l[k].off] = v;
			if (s) break;
			double numeric = (lp - lo) / (2 * o->eps);
			double err = fabs(analytic - numeric);
			double ratio = err / (o->atol + o->rtol * fabs(numeric));
			if (isnan(ratio)) ratio = INFINITY;
			if (w->checked == 0 || ratio > w->ratio) {
				w->ratio = ratio;
				w->analytic = analytic;
				w->numeric = numeric;
				w->input = i;
				w->idx = l[k].idx;
			}
			if (isfinite(err) && err > w->abs_err) w->abs_err = err;
			w->checked++;
			picked++;
			next_pick = picked * ngroups / want;
		}
		group++;
		k = end;
	}
	lm_free(l, (size_t)(n ? n : 1) * sizeof *l);
	return s;
}

lm_status lm_gradcheck(lm_gradcheck_fn fn, void *fctx, int n, lm_tensor *const *inputs,
                       const lm_gradcheck_opts *opts, lm_gradcheck_report *report)
{
	if (!fn || !report || (n > 0 && !inputs) || n < 0)
		return lmi_fail(LM_ERR_ARG, "gradcheck: fn, inputs and report are required (n = %d)", n);
	memset(report, 0, sizeof *report);
	lm_status s = check_inputs(n, inputs);
	if (s) return s;
	lm_gradcheck_opts o = {1e-6, 1e-5, 1e-3, 0};
	if (opts) {
		if (opts->eps > 0) o.eps = opts->eps;
		if (opts->atol > 0) o.atol = opts->atol;
		if (opts->rtol > 0) o.rtol = opts->rtol;
		o.max_elements = opts->max_elements;
	}
	lm_tensor **kept = lm_alloc((size_t)(n ? n : 1) * sizeof *kept);
	if (!kept) return lm_last_status();
	for (int i = 0; i < n; i++) { /* the callers' .grad, put back at the end */
		kept[i] = inputs[i] ? inputs[i]->grad : NULL;
		if (inputs[i]) inputs[i]->grad = NULL;
	}
	ctx c = {fn, fctx, n, inputs, NULL};
	worst w = {0};
	/* analytic */
	bool was = lm_set_grad_enabled(true);
	lm_tensor *loss = NULL;
	s = evaluate(&c, &loss, NULL);
	if (!s && loss->requires_grad) s = lm_backward(loss, NULL, false);
	lm_tensor_release(loss);
	/* numeric */
	lm_set_grad_enabled(false);
	for (int i = 0; !s && i < n; i++) {
		if (!inputs[i] || !inputs[i]->requires_grad) continue;
		s = check_input(&c, i, inputs[i]->grad, &o, &w);
	}
	lm_set_grad_enabled(was);
	for (int i = 0; i < n; i++) {
		if (!inputs[i]) continue;
		lm_tensor_release(inputs[i]->grad);
		inputs[i]->grad = kept[i];
	}
	lm_free(kept, (size_t)(n ? n : 1) * sizeof *kept);
	lm_tensor_release(c.r);
	if (s) return s;
	report->ok = w.checked == 0 || w.ratio <= 1;
	report->input = w.input;
	report->ndim = inputs[w.input]->ndim;
	unravel(w.idx, report->ndim, inputs[w.input]->shape, report->index);
	report->analytic = w.analytic;
	report->numeric = w.numeric;
	report->max_abs_err = w.abs_err;
	if (report->ok) {
		snprintf(report->message, sizeof report->message,
		         "gradcheck: ok: %lld elements checked, max abs error %.3g", (long long)w.checked,
		         w.abs_err);
	} else {
		snprintf(report->message, sizeof report->message,
		         "gradcheck: input %d, element %s: analytic %.10g, numeric %.10g (error %.3g, "
		         "tolerance %.3g); %lld elements checked", w.input,
		         lmi_dims_s(report->ndim, report->index), w.analytic, w.numeric,
		         fabs(w.analytic - w.numeric), o.atol + o.rtol * fabs(w.numeric),
		         (long long)w.checked);
	}
	return LM_OK;
}
