/*
 * nn.c — torch.nn.functional's layers, activations, losses and normalisation.
 *
 * softmax, log_softmax, gelu and the NLL gather are fused ops with their own loops
 * (../backend/cpu/nn.c) and backward rules written with other ops; everything else (linear,
 * cross-entropy, MSE, BCE, dropout, layer and batch norm) is composed from ops, so its gradient
 * comes from theirs. Convolution, pooling and embedding are in conv.c. Read next: conv.c.
 */
#include <math.h>

#include "lumen/nn.h"
#include "ops.h"
#include "ops/rule.h"

/* Temporaries of a composed op live in an lmi_scope (rule.h), released together. give: returns t
 * (+1) out of the scope: the caller owns it, the scope still releases its own ref. */
static lm_tensor *give(lm_tensor *t) { return lm_tensor_retain(t); }

static lm_tensor *reduce_loss(const lm_tensor *l, lm_reduction red)
{
	switch (red) {
	case LM_REDUCTION_MEAN: return lm_mean(l, LM_DIM_ALL, false);
	case LM_REDUCTION_SUM: return lm_sum(l, LM_DIM_ALL, false);
	case LM_REDUCTION_NONE: return lm_tensor_retain((lm_tensor *)l);
	default: return lmi_fail_null(LM_ERR_ARG, "loss: unknown reduction %d", (int)red);
	}
}

/* ---------------------------------------------------------------- linear */

lm_tensor *lm_linear(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b)
{
	if (x && w && lmi_is_block(w->dtype)) return lmi_linear_blocks(x, w, b); /* quant.c */
	LMI_HALF_VIA_F32(lm_linear(x, w, b), &x, &w, &b);
	if (lmi_check_float("linear", "input", x) || lmi_check_float("linear", "weight", w)) return NULL;
	if (w->ndim != 2)
		return lmi_fail_null(LM_ERR_SHAPE, "linear: weight must be (out, in), got shape %s",
		                     lmi_shape_s(w));
	if (x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
		return lmi_fail_null(LM_ERR_SHAPE,
		                     "linear: input of shape %s does not match weight %s (in features %lld)",
		                     lmi_shape_s(x), lmi_shape_s(w), (long long)w->shape[1]);
	if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
		return lmi_fail_null(LM_ERR_SHAPE, "linear: bias of shape %s for %lld out features",
		                     lmi_shape_s(b), (long long)w->shape[0]);
	lm_tensor *wt = lm_t(w);
	lm_tensor *y = wt ? lm_matmul(x, wt) : NULL;
	lm_tensor_release(wt);
	if (!y || !b) return y;
	lm_tensor *z = lm_add(y, b);
	lm_tensor_release(y);
	return z;
}

/* ---------------------------------------------------------------- softmax */

/* softmax: gx = y * (g - sum(g * y, dim));  log_softmax: gx = g - exp(y) * sum(g, dim).
 * Saved: [0] = y; i[0] = dim. */
lm_status lmi_bw_softmax(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *y;
	lm_status s = lmi_node_saved(n, 0, &y);
	if (s) return s;
	int dim = (int)n->p.softmax.dim;
	lmi_scope sc = {0};
	lm_tensor *r = NULL;
	if (n->op == LMI_OP_SOFTMAX) {
		lm_tensor *gy = lmi_keep(&sc, lm_mul(g, y)), *sum = gy ? lmi_keep(&sc, lm_sum(gy, dim, true)) : NULL;
		lm_tensor *d = sum ? lmi_keep(&sc, lm_sub(g, sum)) : NULL;
		r = d ? lm_mul(y, d) : NULL;
	} else {
		lm_tensor *sum = lmi_keep(&sc, lm_sum(g, dim, true)), *p = sum ? lmi_keep(&sc, lm_exp(y)) : NULL;
		lm_tensor *ps = p ? lmi_keep(&sc, lm_mul(p, sum)) : NULL;
		r = ps ? lm_sub(g, ps) : NULL;
	}
	lmi_scope_end(&sc);
	gin[0] = r;
	return r ? LM_OK : lm_last_status();
}

static lm_tensor *softmax(const char *name, const lm_tensor *x, int dim, bool lg)
{
	if (lmi_check_float(name, "input", x) || lmi_check_device(name, 1, &x)) return NULL;
	int d;
	if (lmi_wrap_dim(name, dim, x->ndim, &d)) return NULL;
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *y = xc ? lmi_empty_as(name, x, x->ndim, x->shape, x->dtype) : NULL;
	/* no elements: no lines to run ([2^32, 0] has 2^32) */
	if (y && lm_tensor_numel(y) > 0 &&
	    lmi_run(name, lg ? LMI_OP_LOG_SOFTMAX : LMI_OP_SOFTMAX, &(lmi_params){.softmax = {.dim = d}}, x->dtype, 1,
	            (const lm_tensor *[]){xc}, 1, (lm_tensor *[]){y})) {
		lm_tensor_release(y);
		y = NULL;
	}
	lm_tensor_release(xc);
	y = lmi_finish(y, lg ? LMI_OP_LOG_SOFTMAX : LMI_OP_SOFTMAX, &(lmi_params){.softmax = {.dim = d}}, 1, &x, 1,
	               (const lm_tensor *const[]){y}, NULL);
	return y;
}

lm_tensor *lm_softmax(const lm_tensor *x, int dim) { return softmax("softmax", x, dim, false); }
lm_tensor *lm_log_softmax(const lm_tensor *x, int dim) { return softmax("log_softmax", x, dim, true); }

/* ---------------------------------------------------------------- gelu */

/* gx = g * gelu'(x), by the fused derivative loop. Saved: [0] = x; i[0] = tanh form. */
lm_status lmi_bw_gelu(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *x;
	lm_status s = lmi_node_saved(n, 0, &x);
	if (s) return s;
	lm_tensor *out = lmi_empty_as("gelu backward", g, g->ndim, g->shape, g->dtype);
	lm_tensor *xc = out ? lmi_as_dtype(x, g->dtype) : NULL;
	if (xc && (s = lmi_run("gelu backward", LMI_OP_GELU_BACKWARD, &n->p, g->dtype, 2, (const lm_tensor *[]){xc, g}, 1,
	                       (lm_tensor *[]){out}))) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(xc);
	gin[0] = out;
	return out ? LM_OK : lm_last_status();
}

lm_tensor *lm_gelu(const lm_tensor *x, bool tanh_approx)
{
	if (lmi_check_float("gelu", "input", x) || lmi_check_device("gelu", 1, &x)) return NULL;
	lm_tensor *y = lmi_empty_as("gelu", x, x->ndim, x->shape, x->dtype);
	if (y && lmi_run("gelu", LMI_OP_GELU, &(lmi_params){.gelu = {.tanh_approx = tanh_approx}}, x->dtype, 1,
	                 (const lm_tensor *[]){x}, 1, (lm_tensor *[]){y})) {
		lm_tensor_release(y);
		y = NULL;
	}
	y = lmi_finish(y, LMI_OP_GELU, &(lmi_params){.gelu = {.tanh_approx = tanh_approx}}, 1, &x, 1, &x, NULL);
	return y;
}

/* ---------------------------------------------------------------- the LSTM's gates */

/* ga, gc from the fused backward loop. Saved: [0] = act (the gates' activations), [1] = c,
 * [2] = hc. */
lm_status lmi_bw_lstm_cell(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *act, *c, *hc;
	lm_status s;
	if ((s = lmi_node_saved(n, 0, &act)) || (s = lmi_node_saved(n, 1, &c)) || (s = lmi_node_saved(n, 2, &hc)))
		return s;
	lm_tensor *gg = lmi_as_dtype(g, hc->dtype), *gcont = gg ? lm_contiguous(gg) : NULL;
	lm_tensor *ga = gcont ? lmi_empty_as("lstm_cell backward", hc, 2, act->shape, hc->dtype) : NULL;
	lm_tensor *gc = ga ? lmi_empty_as("lstm_cell backward", hc, 2, c->shape, hc->dtype) : NULL;
	if (gc && (s = lmi_run("lstm_cell backward", LMI_OP_LSTM_CELL_BACKWARD, NULL, hc->dtype, 4,
	                       (const lm_tensor *[]){act, c, hc, gcont}, 2, (lm_tensor *[]){ga, gc}))) {
		lm_tensor_release(ga);
		lm_tensor_release(gc);
		ga = gc = NULL;
	}
	lm_tensor_release(gg);
	lm_tensor_release(gcont);
	if (!gc) {
		lm_tensor_release(ga);
		return lm_last_status();
	}
	gin[0] = ga;
	gin[1] = gc;
	return LM_OK;
}

lm_tensor *lm_lstm_cell(const lm_tensor *a, const lm_tensor *c)
{
	static const char fname[] = "lstm_cell";
	const lm_tensor *in[2] = {a, c};
	if (lmi_check_float(fname, "gates", a) || lmi_check_float(fname, "cell state", c) ||
	    lmi_check_device(fname, 2, in))
		return NULL;
	if (c->ndim != 2 || a->ndim != 2 || a->shape[0] != c->shape[0] || a->shape[1] != 4 * c->shape[1] ||
	    a->dtype != c->dtype)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: gates %s (%s) and cell state %s (%s) must be (B, 4H) and (B, H) of "
		                     "one dtype", fname, lmi_shape_s(a), lm_dtype_name(a->dtype), lmi_shape_s(c),
		                     lm_dtype_name(c->dtype));
	LMI_HALF_VIA_F32(lm_lstm_cell(a, c), &a, &c);
	int64_t B = c->shape[0], H = c->shape[1];
	lm_tensor *ac = lm_contiguous(a), *cc = ac ? lm_contiguous(c) : NULL;
	lm_tensor *hc = cc ? lmi_empty_as(fname, c, 2, (int64_t[]){B, 2 * H}, c->dtype) : NULL;
	lm_tensor *act = hc ? lmi_empty_as(fname, c, 2, (int64_t[]){B, 4 * H}, c->dtype) : NULL;
	if (act && lmi_run(fname, LMI_OP_LSTM_CELL, NULL, c->dtype, 2, (const lm_tensor *[]){ac, cc}, 2,
	                   (lm_tensor *[]){hc, act})) {
		lm_tensor_release(hc);
		hc = NULL;
	}
	if (!act) {
		lm_tensor_release(hc);
		hc = NULL;
	}
	hc = lmi_finish(hc, LMI_OP_LSTM_CELL, NULL, 2, in, 3, (const lm_tensor *[]){act, cc, hc}, NULL);
	lm_tensor_release(act);
	lm_tensor_release(ac);
	lm_tensor_release(cc);
	return hc;
}

/* ---------------------------------------------------------------- the GRU's gates */

/* gx, ghg, gh from the fused backward loop. Saved: [0] = act (r, z, n), [1] = hg, [2] = h. */
lm_status lmi_bw_gru_cell(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *act, *hg, *h;
	lm_status s;
	if ((s = lmi_node_saved(n, 0, &act)) || (s = lmi_node_saved(n, 1, &hg)) || (s = lmi_node_saved(n, 2, &h)))
		return s;
	lm_tensor *gg = lmi_as_dtype(g, h->dtype), *gcont = gg ? lm_contiguous(gg) : NULL;
	lm_tensor *gx = gcont ? lmi_empty_as("gru_cell backward", h, 2, act->shape, h->dtype) : NULL;
	lm_tensor *ghg = gx ? lmi_empty_as("gru_cell backward", h, 2, act->shape, h->dtype) : NULL;
	lm_tensor *gh = ghg ? lmi_empty_as("gru_cell backward", h, 2, h->shape, h->dtype) : NULL;
	s = gh ? lmi_run("gru_cell backward", LMI_OP_GRU_CELL_BACKWARD, NULL, h->dtype, 4,
	                 (const lm_tensor *[]){act, hg, h, gcont}, 3, (lm_tensor *[]){gx, ghg, gh})
	       : lm_last_status();
	lm_tensor_release(gg);
	lm_tensor_release(gcont);
	if (s) {
		lm_tensor_release(gx);
		lm_tensor_release(ghg);
		lm_tensor_release(gh);
		return s;
	}
	gin[0] = gx;
	gin[1] = ghg;
	gin[2] = gh;
	return LM_OK;
}

lm_tensor *lm_gru_cell(const lm_tensor *xg, const lm_tensor *hg, const lm_tensor *h)
{
	static const char fname[] = "gru_cell";
	const lm_tensor *in[3] = {xg, hg, h};
	if (lmi_check_float(fname, "input gates", xg) || lmi_check_float(fname, "hidden gates", hg) ||
	    lmi_check_float(fname, "hidden state", h) || lmi_check_device(fname, 3, in))
		return NULL;
	if (h->ndim != 2 || xg->ndim != 2 || hg->ndim != 2 || xg->shape[0] != h->shape[0] ||
	    hg->shape[0] != h->shape[0] || xg->shape[1] != 3 * h->shape[1] || hg->shape[1] != 3 * h->shape[1] ||
	    xg->dtype != h->dtype || hg->dtype != h->dtype)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: input gates %s, hidden gates %s and hidden state %s (%s, %s, %s) must "
		                     "be (B, 3H), (B, 3H) and (B, H) of one dtype", fname, lmi_shape_s(xg), lmi_shape_s(hg),
		                     lmi_shape_s(h), lm_dtype_name(xg->dtype), lm_dtype_name(hg->dtype),
		                     lm_dtype_name(h->dtype));
	LMI_HALF_VIA_F32(lm_gru_cell(xg, hg, h), &xg, &hg, &h);
	int64_t B = h->shape[0], H = h->shape[1];
	lmi_scope sc = {0};
	lm_tensor *xc = lmi_keep(&sc, lm_contiguous(xg)), *gc = xc ? lmi_keep(&sc, lm_contiguous(hg)) : NULL;
	lm_tensor *hc = gc ? lmi_keep(&sc, lm_contiguous(h)) : NULL;
	lm_tensor *out = hc ? lmi_empty_as(fname, h, 2, (int64_t[]){B, H}, h->dtype) : NULL;
	lm_tensor *act = out ? lmi_keep(&sc, lmi_empty_as(fname, h, 2, (int64_t[]){B, 3 * H}, h->dtype)) : NULL;
	if (!act || lmi_run(fname, LMI_OP_GRU_CELL, NULL, h->dtype, 3, (const lm_tensor *[]){xc, gc, hc}, 2,
	                    (lm_tensor *[]){out, act})) {
		lm_tensor_release(out);
		out = NULL;
	}
	out = lmi_finish(out, LMI_OP_GRU_CELL, NULL, 3, in, 3, (const lm_tensor *[]){act, gc, hc}, NULL);
	lmi_scope_end(&sc);
	return out;
}

/* ---------------------------------------------------------------- attention, fused */

/* dq, dk, dv by the recomputing loop. Saved: [0..2] = q, k, v as (BH, L|S, E|Ev), [3] = out
 * (BH, L, Ev), [4] = lse (BH, L). */
lm_status lmi_bw_flash_attention(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *sv[5];
	lm_status s;
	for (int k = 0; k < 5; k++)
		if ((s = lmi_node_saved(n, k, &sv[k]))) return s;
	const lm_tensor *q = sv[0], *k = sv[1], *v = sv[2], *o = sv[3], *lse = sv[4];
	lmi_scope sc = {0};
	lm_tensor *gd = lmi_keep(&sc, lmi_as_dtype(g, q->dtype));
	lm_tensor *dout = gd ? lmi_keep(&sc, lm_reshape(gd, 3, o->shape)) : NULL;
	lm_tensor *dc = dout ? lmi_keep(&sc, lm_contiguous(dout)) : NULL;
	lm_tensor *prod = dc ? lmi_keep(&sc, lm_mul(dc, o)) : NULL;
	lm_tensor *D = prod ? lmi_keep(&sc, lm_sum(prod, 2, true)) : NULL; /* (BH, L, 1) */
	lm_tensor *lse3 = D ? lmi_keep(&sc, lm_unsqueeze(lse, 2)) : NULL;
	lm_tensor *both = lse3 ? lmi_keep(&sc, lm_cat(2, (lm_tensor *[]){lse3, D}, 2)) : NULL; /* (BH, L, 2) */
	lm_tensor *stats = both ? lmi_keep(&sc, lm_transpose(both, 1, 2)) : NULL;
	lm_tensor *st = stats ? lmi_keep(&sc, lm_contiguous(stats)) : NULL; /* (BH, 2, L) */
	lm_tensor *dq = st ? lmi_empty_as("flash_attention backward", q, 3, q->shape, q->dtype) : NULL;
	lm_tensor *dk = dq ? lmi_empty_as("flash_attention backward", q, 3, k->shape, q->dtype) : NULL;
	lm_tensor *dv = dk ? lmi_empty_as("flash_attention backward", q, 3, v->shape, q->dtype) : NULL;
	s = dv ? lmi_run("flash_attention backward", LMI_OP_FLASH_ATTENTION_BACKWARD, &n->p, q->dtype, 5,
	                 (const lm_tensor *[]){q, k, v, st, dc}, 3, (lm_tensor *[]){dq, dk, dv})
	       : lm_last_status();
	lmi_scope_end(&sc);
	lm_tensor *gs[3] = {dq, dk, dv};
	for (int j = 0; j < 3; j++) {
		if (!s && gs[j]) {
			gin[j] = lm_reshape(gs[j], n->in[j].ndim, n->in[j].shape);
			if (!gin[j]) s = lm_last_status();
		}
		lm_tensor_release(gs[j]);
	}
	return s;
}

lm_tensor *lm_flash_attention(const lm_tensor *q, const lm_tensor *k, const lm_tensor *v, bool is_causal,
                              double scale)
{
	static const char fname[] = "flash_attention";
	const lm_tensor *in[3] = {q, k, v};
	if (lmi_check_float(fname, "query", q) || lmi_check_float(fname, "key", k) ||
	    lmi_check_float(fname, "value", v) || lmi_check_device(fname, 3, in))
		return NULL;
	int nd = q->ndim;
	bool ok = nd >= 2 && k->ndim == nd && v->ndim == nd && q->dtype == k->dtype && q->dtype == v->dtype &&
	          q->shape[nd - 1] == k->shape[nd - 1] && k->shape[nd - 2] == v->shape[nd - 2];
	for (int d = 0; ok && d < nd - 2; d++) ok = q->shape[d] == k->shape[d] && q->shape[d] == v->shape[d];
	if (!ok)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: query %s, key %s and value %s (%s, %s, %s) must be (..., L, E), "
		                     "(..., S, E) and (..., S, Ev) with the same leading dims and dtype", fname,
		                     lmi_shape_s(q), lmi_shape_s(k), lmi_shape_s(v), lm_dtype_name(q->dtype),
		                     lm_dtype_name(k->dtype), lm_dtype_name(v->dtype));
	LMI_HALF_VIA_F32(lm_flash_attention(q, k, v, is_causal, scale), &q, &k, &v);
	int64_t BH = 1, L = q->shape[nd - 2], E = q->shape[nd - 1], S = k->shape[nd - 2], Ev = v->shape[nd - 1];
	for (int d = 0; d < nd - 2; d++) BH *= q->shape[d];
	if (!(scale > 0) || !isfinite(scale)) scale = E ? 1.0 / sqrt((double)E) : 1.0;
	lmi_params p = {.attention = {.is_causal = is_causal, .scale = scale}};
	lmi_scope sc = {0};
	lm_tensor *q3 = lmi_keep(&sc, lm_reshape(q, 3, (int64_t[]){BH, L, E}));
	lm_tensor *k3 = q3 ? lmi_keep(&sc, lm_reshape(k, 3, (int64_t[]){BH, S, E})) : NULL;
	lm_tensor *v3 = k3 ? lmi_keep(&sc, lm_reshape(v, 3, (int64_t[]){BH, S, Ev})) : NULL;
	lm_tensor *qc = v3 ? lmi_keep(&sc, lm_contiguous(q3)) : NULL, *kc = qc ? lmi_keep(&sc, lm_contiguous(k3)) : NULL;
	lm_tensor *vc = kc ? lmi_keep(&sc, lm_contiguous(v3)) : NULL;
	lm_tensor *o = vc ? lmi_empty_as(fname, q, 3, (int64_t[]){BH, L, Ev}, q->dtype) : NULL;
	lm_tensor *lse = o ? lmi_keep(&sc, lmi_empty_as(fname, q, 2, (int64_t[]){BH, L}, q->dtype)) : NULL;
	lm_tensor *out = NULL;
	if (lse && S == 0) {
		lmi_scope_end(&sc);
		lm_tensor_release(o);
		return lmi_fail_null(LM_ERR_SHAPE, "%s: no key to attend to (key %s)", fname, lmi_shape_s(k));
	}
	if (lse && !lmi_run(fname, LMI_OP_FLASH_ATTENTION, &p, q->dtype, 3, (const lm_tensor *[]){qc, kc, vc}, 2,
	                    (lm_tensor *[]){o, lse})) {
		int64_t shape[LM_MAX_DIMS];
		for (int d = 0; d < nd - 1; d++) shape[d] = q->shape[d];
		shape[nd - 1] = Ev;
		lm_tensor *y = lm_reshape(o, nd, shape); /* o has no graph: a plain view */
		out = lmi_finish(y, LMI_OP_FLASH_ATTENTION, &p, 3, in, 5, (const lm_tensor *[]){qc, kc, vc, o, lse}, NULL);
	}
	lm_tensor_release(o);
	lmi_scope_end(&sc);
	return out;
}

/* ---------------------------------------------------------------- losses */

/* Checks the class-index target against logp (N, C, d...) and returns it as contiguous int64
 * (N, L), with N, C, L. A 1-D logp (C) pairs with a 0-d target (N = 1). */
static lm_tensor *check_target(const char *name, const lm_tensor *logp, const lm_tensor *target,
                               int64_t *N, int64_t *C, int64_t *L)
{
	if (!target) return lmi_fail_null(LM_ERR_ARG, "%s: target is NULL", name);
	if (lm_dtype_is_float(target->dtype))
		return lmi_fail_null(LM_ERR_DTYPE, "%s: target must hold class indices (int64 or int32), "
		                     "got %s", name, lm_dtype_name(target->dtype));
	bool ok = logp->ndim >= 1 && target->ndim == (logp->ndim == 1 ? 0 : logp->ndim - 1);
	for (int i = 0, j = 0; ok && i < logp->ndim; i++)
		if (i != 1 && !(logp->ndim == 1)) ok = logp->shape[i] == target->shape[j++];
	if (!ok)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: target of shape %s does not match input %s (expected "
		                     "the input's shape without dim 2, the classes)", name,
		                     lmi_shape_s(target), lmi_shape_s(logp));
	*N = logp->ndim == 1 ? 1 : logp->shape[0];
	*C = logp->ndim == 1 ? logp->shape[0] : logp->shape[1];
	*L = 1;
	for (int i = 2; i < logp->ndim; i++) *L *= logp->shape[i];
	lm_tensor *t = lmi_contiguous_copy(target, LM_INT64);
	lm_tensor *h = t ? lmi_on_cpu(t) : NULL; /* the values checked on the host */
	if (!h) {
		lm_tensor_release(t);
		return NULL;
	}
	const int64_t *v = (const int64_t *)lmi_data(h);
	int64_t n = lm_tensor_numel(h);
	for (int64_t i = 0; i < n; i++)
		if (v[i] < 0 || v[i] >= *C) {
			/* class and position count from 1 in messages (lumen/core.h) */
			lmi_fail(LM_ERR_INDEX, "%s: target %lld at position %lld is out of range for %lld "
			         "classes", name, (long long)v[i] + 1, (long long)i + 1, (long long)*C);
			lm_tensor_release(t);
			lm_tensor_release(h);
			return NULL;
		}
	lm_tensor_release(h);
	return t;
}

/* gx = zeros with -g at the targets. Saved: [0] = target (int64, (N, L)); i[0..2] = N, C, L. */
lm_status lmi_bw_nll(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *t;
	lm_status s = lmi_node_saved(n, 0, &t);
	if (s) return s;
	lm_tensor *gx = lmi_zeros_as(g, n->in[0].ndim, n->in[0].shape, g->dtype);
	lm_tensor *gc = gx ? lmi_contiguous_copy(g, g->dtype) : NULL;
	s = gc ? lmi_run("nll_loss backward", LMI_OP_NLL_GRAD, &n->p, gc->dtype, 2, (const lm_tensor *[]){gc, t}, 1,
	                 (lm_tensor *[]){gx})
	       : lm_last_status();
	lm_tensor_release(gc);
	if (s) {
		lm_tensor_release(gx);
		return lm_last_status();
	}
	gin[0] = gx;
	return LM_OK;
}

/* The unreduced NLL: -logp[n, target[n, ...], ...], shaped like target. */
static lm_tensor *nll_none(const char *name, const lm_tensor *logp, const lm_tensor *target)
{
	int64_t N = 0, C = 0, L = 0;
	if (lmi_check_float(name, "input", logp) || lmi_check_arg(name, "target", target) ||
	    lmi_check_device(name, 2, (const lm_tensor *const[]){logp, target}))
		return NULL;
	lm_tensor *t = check_target(name, logp, target, &N, &C, &L);
	if (!t) return NULL;
	lm_tensor *lc = lm_tensor_is_contiguous(logp) ? lm_tensor_retain((lm_tensor *)logp)
	                                              : lmi_contiguous_copy(logp, logp->dtype);
	lm_tensor *out = lc ? lmi_empty_as(name, logp, target->ndim, target->shape, logp->dtype) : NULL;
	if (out && lmi_run(name, LMI_OP_NLL_LOSS, &(lmi_params){.nll = {.batch = N, .classes = C, .length = L}},
	                   logp->dtype, 2, (const lm_tensor *[]){lc, t}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(lc);
	out = lmi_finish(out, LMI_OP_NLL_LOSS, &(lmi_params){.nll = {.batch = N, .classes = C, .length = L}}, 1, &logp, 1,
	                 (const lm_tensor *const[]){t}, NULL);
	lm_tensor_release(t);
	return out;
}

lm_tensor *lm_nll_loss(const lm_tensor *logp, const lm_tensor *target, lm_reduction red)
{
	lm_tensor *l = nll_none("nll_loss", logp, target);
	if (!l) return NULL;
	lm_tensor *r = reduce_loss(l, red);
	lm_tensor_release(l);
	return r;
}

lm_tensor *lm_cross_entropy(const lm_tensor *logits, const lm_tensor *target, lm_reduction red,
                            double ls)
{
	if (lmi_check_float("cross_entropy", "input", logits)) return NULL;
	LMI_HALF_VIA_F32(lm_cross_entropy(logits, target, red, ls), &logits, &target);
	if (!(ls >= 0 && ls <= 1))
		return lmi_fail_null(LM_ERR_ARG, "cross_entropy: label_smoothing %g is outside [0, 1]", ls);
	if (red < LM_REDUCTION_MEAN || red > LM_REDUCTION_NONE)
		return lmi_fail_null(LM_ERR_ARG, "cross_entropy: unknown reduction %d", (int)red);
	if (logits->ndim < 1)
		return lmi_fail_null(LM_ERR_SHAPE, "cross_entropy: input needs a class dim, got shape %s",
		                     lmi_shape_s(logits));
	int cdim = logits->ndim == 1 ? 0 : 1;
	lmi_scope s = {0};
	lm_tensor *out = NULL;
	lm_tensor *logp = lmi_keep(&s, lm_log_softmax(logits, cdim));
	lm_tensor *l = logp ? lmi_keep(&s, nll_none("cross_entropy", logp, target)) : NULL;
	if (!l) goto done;
	if (ls > 0) { /* (1 - s) nll + s * mean over classes of -logp */
		lm_tensor *m = lmi_keep(&s, lm_mean(logp, cdim, false));
		lm_tensor *a = m ? lmi_keep(&s, lm_binary_scalar(LM_MUL, l, 1 - ls)) : NULL;
		lm_tensor *b = a ? lmi_keep(&s, lm_binary_scalar(LM_MUL, m, -ls)) : NULL;
		l = b ? lmi_keep(&s, lm_add(a, b)) : NULL;
		if (!l) goto done;
	}
	out = reduce_loss(l, red);
done:
	lmi_scope_end(&s);
	return out;
}

static lm_status check_same_shape(const char *name, const lm_tensor *a, const lm_tensor *b)
{
	bool same = a->ndim == b->ndim;
	for (int i = 0; same && i < a->ndim; i++) same = a->shape[i] == b->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_SHAPE, "%s: input of shape %s and target of shape %s differ", name,
		                lmi_shape_s(a), lmi_shape_s(b));
	return LM_OK;
}

lm_tensor *lm_mse_loss(const lm_tensor *input, const lm_tensor *target, lm_reduction red)
{
	if (lmi_check_float("mse_loss", "input", input) || lmi_check_float("mse_loss", "target", target) ||
	    check_same_shape("mse_loss", input, target))
		return NULL;
	LMI_HALF_VIA_F32(lm_mse_loss(input, target, red), &input, &target);
	lmi_scope s = {0};
	lm_tensor *out = NULL;
	lm_tensor *d = lmi_keep(&s, lm_sub(input, target));
	lm_tensor *sq = d ? lmi_keep(&s, lm_mul(d, d)) : NULL;
	if (sq) out = reduce_loss(sq, red);
	lmi_scope_end(&s);
	return out;
}

lm_tensor *lm_binary_cross_entropy(const lm_tensor *p, const lm_tensor *y, lm_reduction red)
{
	if (lmi_check_float("binary_cross_entropy", "input", p) ||
	    lmi_check_float("binary_cross_entropy", "target", y) ||
	    check_same_shape("binary_cross_entropy", p, y))
		return NULL;
	LMI_HALF_VIA_F32(lm_binary_cross_entropy(p, y, red), &p, &y);
	lmi_scope s = {0};
	lm_tensor *out = NULL;
	/* probabilities must lie in [0, 1] */
	bool prev = lm_set_grad_enabled(false);
	lm_tensor *lo = lmi_keep(&s, lm_amin(p, LM_DIM_ALL, false)), *hi = lo ? lmi_keep(&s, lm_amax(p, LM_DIM_ALL, false)) : NULL;
	lm_set_grad_enabled(prev);
	if (lm_tensor_numel(p) && !hi) goto done;
	if (lm_tensor_numel(p)) {
		double a, b;
		lm_tensor_item(lo, &a);
		lm_tensor_item(hi, &b);
		if (!(a >= 0 && b <= 1)) {
			lmi_fail(LM_ERR_ARG, "binary_cross_entropy: input probabilities must lie in [0, 1], "
			         "got values from %g to %g", a, b);
			goto done;
		}
	}
	/* -(y log p + (1 - y) log(1 - p)), each log clamped at -100 */
	lm_tensor *lp = lmi_keep(&s, lm_log(p));
	lm_tensor *lpc = lp ? lmi_keep(&s, lm_clamp(lp, -100, INFINITY)) : NULL;
	lm_tensor *q = lpc ? lmi_keep(&s, lm_rbinary_scalar(LM_SUB, 1, p)) : NULL;
	lm_tensor *lq = q ? lmi_keep(&s, lm_log(q)) : NULL;
	lm_tensor *lqc = lq ? lmi_keep(&s, lm_clamp(lq, -100, INFINITY)) : NULL;
	lm_tensor *t1 = lqc ? lmi_keep(&s, lm_mul(y, lpc)) : NULL;
	lm_tensor *ny = t1 ? lmi_keep(&s, lm_rbinary_scalar(LM_SUB, 1, y)) : NULL;
	lm_tensor *t2 = ny ? lmi_keep(&s, lm_mul(ny, lqc)) : NULL;
	lm_tensor *sum = t2 ? lmi_keep(&s, lm_add(t1, t2)) : NULL;
	lm_tensor *neg = sum ? lmi_keep(&s, lm_neg(sum)) : NULL;
	if (neg) out = reduce_loss(neg, red);
done:
	lmi_scope_end(&s);
	return out;
}

/* ---------------------------------------------------------------- dropout */

lm_tensor *lm_dropout(const lm_tensor *x, double p, bool training)
{
	if (lmi_check_float("dropout", "input", x)) return NULL;
	if (!(p >= 0 && p <= 1))
		return lmi_fail_null(LM_ERR_ARG, "dropout: probability %g is outside [0, 1]", p);
	if (!training || p == 0) return lm_tensor_retain((lm_tensor *)x);
	lm_tensor *mask = lmi_empty_as("dropout", x, x->ndim, x->shape, x->dtype), *out = NULL;
	if (!mask) return NULL;
	if (p == 1 ? lm_zero_(mask) == LM_OK
	           : (lm_bernoulli_(mask, 1 - p) == LM_OK &&
	              lm_binary_scalar_(LM_MUL, mask, 1 / (1 - p)) == LM_OK))
		out = lm_mul(x, mask);
	lm_tensor_release(mask);
	return out;
}

/* ---------------------------------------------------------------- normalisation */

lm_tensor *lm_layer_norm(const lm_tensor *x, int nshape, const int64_t *shape, const lm_tensor *w,
                         const lm_tensor *b, double eps)
{
	if (lmi_check_float("layer_norm", "input", x)) return NULL;
	LMI_HALF_VIA_F32(lm_layer_norm(x, nshape, shape, w, b, eps), &x, &w, &b);
	if (nshape < 1 || nshape > x->ndim)
		return lmi_fail_null(LM_ERR_SHAPE, "layer_norm: normalized_shape of %d dims for input %s",
		                     nshape, lmi_shape_s(x));
	int64_t N = 1;
	for (int i = 0; i < nshape; i++) {
		if (shape[i] != x->shape[x->ndim - nshape + i])
			return lmi_fail_null(LM_ERR_SHAPE, "layer_norm: normalized_shape %s does not match the "
			                     "last dims of input %s", lmi_dims_s(nshape, shape), lmi_shape_s(x));
		N *= shape[i];
	}
	const lm_tensor *wb[2] = {w, b};
	for (int k = 0; k < 2; k++) {
		if (!wb[k]) continue;
		bool ok = wb[k]->ndim == nshape;
		for (int i = 0; ok && i < nshape; i++) ok = wb[k]->shape[i] == shape[i];
		if (!ok)
			return lmi_fail_null(LM_ERR_SHAPE, "layer_norm: %s of shape %s, expected %s",
			                     k ? "bias" : "weight", lmi_shape_s(wb[k]), lmi_dims_s(nshape, shape));
	}
	if (!(eps >= 0)) return lmi_fail_null(LM_ERR_ARG, "layer_norm: eps %g is negative", eps);
	int64_t M = N ? lm_tensor_numel(x) / N : 0;
	lmi_scope s = {0};
	lm_tensor *out = NULL;
	/* x2: (M, N); y = (x2 - mean) / sqrt(var + eps), the variance biased */
	lm_tensor *x2 = lmi_keep(&s, lm_reshape(x, 2, (int64_t[]){M, N}));
	lm_tensor *mu = x2 ? lmi_keep(&s, lm_mean(x2, 1, true)) : NULL;
	lm_tensor *xc = mu ? lmi_keep(&s, lm_sub(x2, mu)) : NULL;
	lm_tensor *sq = xc ? lmi_keep(&s, lm_mul(xc, xc)) : NULL;
	lm_tensor *var = sq ? lmi_keep(&s, lm_mean(sq, 1, true)) : NULL;
	lm_tensor *ve = var ? lmi_keep(&s, lm_binary_scalar(LM_ADD, var, eps)) : NULL;
	lm_tensor *rs = ve ? lmi_keep(&s, lm_unary(LM_RSQRT, ve)) : NULL;
	lm_tensor *y = rs ? lmi_keep(&s, lm_mul(xc, rs)) : NULL;
	lm_tensor *yr = y ? lmi_keep(&s, lm_reshape(y, x->ndim, x->shape)) : NULL;
	if (yr && w) yr = lmi_keep(&s, lm_mul(yr, w));
	if (yr && b) yr = lmi_keep(&s, lm_add(yr, b));
	if (yr) out = give(yr);
	lmi_scope_end(&s);
	return out;
}

lm_tensor *lm_batch_norm(const lm_tensor *x, lm_tensor *rmean, lm_tensor *rvar, const lm_tensor *w,
                         const lm_tensor *b, bool training, double momentum, double eps)
{
	if (lmi_check_float("batch_norm", "input", x) ||
	    lmi_check_device("batch_norm", 5, (const lm_tensor *const[]){x, rmean, rvar, w, b}))
		return NULL;
	lmi_half h;
	if (lmi_half_begin(&h, 3, (const lm_tensor **const[]){&x, &w, &b})) {
		/* 16-bit running statistics: updated in float32 copies, written back rounded */
		lm_tensor *stats[2] = {rmean, rvar}, *st32[2] = {NULL, NULL};
		for (int k = 0; k < 2; k++)
			st32[k] = stats[k] && (stats[k]->dtype == LM_FLOAT16 || stats[k]->dtype == LM_BFLOAT16)
			              ? lmi_contiguous_copy(stats[k], LM_FLOAT32) : lm_tensor_retain(stats[k]);
		lm_tensor *out = lm_batch_norm(x, st32[0], st32[1], w, b, training, momentum, eps);
		for (int k = 0; k < 2; k++) {
			if (out && st32[k] && st32[k] != stats[k] && lmi_copy(stats[k], st32[k])) {
				lm_tensor_release(out);
				out = NULL;
			}
			lm_tensor_release(st32[k]);
		}
		return lmi_half_end(&h, out);
	}
	if (x->ndim < 2)
		return lmi_fail_null(LM_ERR_SHAPE, "batch_norm: input must be (N, C, ...), got shape %s",
		                     lmi_shape_s(x));
	int64_t N = x->shape[0], C = x->shape[1], L = 1;
	for (int i = 2; i < x->ndim; i++) L *= x->shape[i];
	const lm_tensor *vecs[4] = {rmean, rvar, w, b};
	static const char *const names[4] = {"running_mean", "running_var", "weight", "bias"};
	for (int k = 0; k < 4; k++)
		if (vecs[k] && (vecs[k]->ndim != 1 || vecs[k]->shape[0] != C))
			return lmi_fail_null(LM_ERR_SHAPE, "batch_norm: %s of shape %s for %lld channels",
			                     names[k], lmi_shape_s(vecs[k]), (long long)C);
	if (!training && (!rmean || !rvar))
		return lmi_fail_null(LM_ERR_ARG, "batch_norm: evaluation needs running_mean and running_var");
	if (training && N * L <= 1)
		return lmi_fail_null(LM_ERR_SHAPE, "batch_norm: training needs more than one value per "
		                     "channel, got input %s", lmi_shape_s(x));
	if (!(momentum >= 0 && momentum <= 1) || !(eps >= 0))
		return lmi_fail_null(LM_ERR_ARG, "batch_norm: momentum %g must be in [0, 1] and eps %g >= 0",
		                     momentum, eps);
	if ((rmean && rmean->requires_grad) || (rvar && rvar->requires_grad))
		return lmi_fail_null(LM_ERR_ARG, "batch_norm: running statistics must not require grad");
	lmi_scope s = {0};
	lm_tensor *out = NULL;
	lm_tensor *x3 = lmi_keep(&s, lm_reshape(x, 3, (int64_t[]){N, C, L}));
	lm_tensor *mu = NULL, *var = NULL;
	if (!x3) goto done;
	if (training) { /* batch statistics over N and L: (1, C, 1) */
		lm_tensor *m1 = lmi_keep(&s, lm_mean(x3, 2, true));
		mu = m1 ? lmi_keep(&s, lm_mean(m1, 0, true)) : NULL;
		lm_tensor *xc = mu ? lmi_keep(&s, lm_sub(x3, mu)) : NULL;
		lm_tensor *sq = xc ? lmi_keep(&s, lm_mul(xc, xc)) : NULL;
		lm_tensor *v1 = sq ? lmi_keep(&s, lm_mean(sq, 2, true)) : NULL;
		var = v1 ? lmi_keep(&s, lm_mean(v1, 0, true)) : NULL;
		if (!var) goto done;
		if (rmean || rvar) { /* running stats, outside the graph */
			bool prev = lm_set_grad_enabled(false);
			double unbias = (double)(N * L) / (double)(N * L - 1);
			lm_tensor *mv = lmi_keep(&s, lm_reshape(mu, 1, &C)), *vv = lmi_keep(&s, lm_reshape(var, 1, &C));
			lm_tensor *nm = mv ? lmi_keep(&s, lm_binary_scalar(LM_MUL, mv, momentum)) : NULL;
			lm_tensor *nv = vv ? lmi_keep(&s, lm_binary_scalar(LM_MUL, vv, momentum * unbias)) : NULL;
			lm_status st = nm && nv ? LM_OK : lm_last_status();
			if (!st && rmean && !(st = lm_binary_scalar_(LM_MUL, rmean, 1 - momentum)))
				st = lm_binary_(LM_ADD, rmean, nm);
			if (!st && rvar && !(st = lm_binary_scalar_(LM_MUL, rvar, 1 - momentum)))
				st = lm_binary_(LM_ADD, rvar, nv);
			lm_set_grad_enabled(prev);
			if (st) goto done;
		}
	} else {
		mu = lmi_keep(&s, lm_reshape(rmean, 3, (int64_t[]){1, C, 1}));
		var = mu ? lmi_keep(&s, lm_reshape(rvar, 3, (int64_t[]){1, C, 1})) : NULL;
		if (!var) goto done;
	}
	lm_tensor *xc = lmi_keep(&s, lm_sub(x3, mu));
	lm_tensor *ve = xc ? lmi_keep(&s, lm_binary_scalar(LM_ADD, var, eps)) : NULL;
	lm_tensor *rs = ve ? lmi_keep(&s, lm_unary(LM_RSQRT, ve)) : NULL;
	lm_tensor *y = rs ? lmi_keep(&s, lm_mul(xc, rs)) : NULL;
	if (y && w) {
		lm_tensor *wv = lmi_keep(&s, lm_reshape(w, 3, (int64_t[]){1, C, 1}));
		y = wv ? lmi_keep(&s, lm_mul(y, wv)) : NULL;
	}
	if (y && b) {
		lm_tensor *bv = lmi_keep(&s, lm_reshape(b, 3, (int64_t[]){1, C, 1}));
		y = bv ? lmi_keep(&s, lm_add(y, bv)) : NULL;
	}
	lm_tensor *yr = y ? lmi_keep(&s, lm_reshape(y, x->ndim, x->shape)) : NULL;
	if (yr) out = give(yr);
done:
	lmi_scope_end(&s);
	return out;
}
