/*
 * loss_logits.c — binary cross-entropy on logits (torch.nn.functional.binary_cross_entropy_with_logits).
 *
 * loss = (1 - y) x + w (max(-x, 0) + log(1 + exp(-|x|))),  w = 1 + (pos_weight - 1) y,
 * the softplus(-x) = -log sigmoid(x) written so that no exp overflows (logits of +-1e4 are fine).
 * The forward is composed of ops without recording; the node has its own rule, because the
 * composition's kinks (|x|, max) would give the wrong gradient at x = 0:
 *   d/dx = (1 - y) - w sigmoid(-x),  d/dy = -x + (pos_weight - 1) softplus(-x),
 *   d/dpos_weight = y softplus(-x).
 * Read next: nn.c (the other losses).
 */
#include <math.h>

#include "lumen/nn.h"
#include "ops.h"
#include "ops/rule.h"

/* softplus(-x) = max(-x, 0) + log1p(exp(-|x|)), log1p(e) computed as Goldberg does it: with u = 1 + e
 * rounded, log(u) e / (u - 1), or e itself where u - 1 rounds to 0 (a confident logit: log(1 + e)
 * would give 0 there, and the loss of x = 20 would be 0 instead of 2.06e-9 in float32) */
static lm_tensor *softplus_neg(lmi_scope *s, const lm_tensor *x)
{
	lm_tensor *nx = lmi_keep(s, lm_neg(x)), *r = nx ? lmi_keep(s, lm_relu(nx)) : NULL;
	lm_tensor *a = r ? lmi_keep(s, lm_abs(x)) : NULL, *na = a ? lmi_keep(s, lm_neg(a)) : NULL;
	lm_tensor *e = na ? lmi_keep(s, lm_exp(na)) : NULL;
	lm_tensor *u = e ? lmi_keep(s, lm_binary_scalar(LM_ADD, e, 1)) : NULL;
	lm_tensor *d = u ? lmi_keep(s, lm_binary_scalar(LM_SUB, u, 1)) : NULL;
	lm_tensor *lu = d ? lmi_keep(s, lm_log(u)) : NULL;
	lm_tensor *le = lu ? lmi_keep(s, lm_mul(lu, e)) : NULL;
	lm_tensor *zero = le ? lmi_keep(s, lm_binary_scalar(LM_EQ, d, 0)) : NULL;
	/* where d is 0 the quotient is 0/0: a 1 in its place keeps the unused branch finite */
	lm_tensor *safe = zero ? lmi_keep(s, lm_where(zero, u, d)) : NULL;
	lm_tensor *q = safe ? lmi_keep(s, lm_div(le, safe)) : NULL;
	lm_tensor *l = q ? lmi_keep(s, lm_where(zero, e, q)) : NULL;
	return l ? lmi_keep(s, lm_add(r, l)) : NULL;
}

/* w = 1 + (pw - 1) y, or NULL for pw absent (w = 1) */
static lm_tensor *weight(lmi_scope *s, const lm_tensor *y, const lm_tensor *pw, bool *fail)
{
	*fail = false;
	if (!pw) return NULL;
	lm_tensor *p1 = lmi_keep(s, lm_binary_scalar(LM_SUB, pw, 1)), *py = p1 ? lmi_keep(s, lm_mul(p1, y)) : NULL;
	lm_tensor *w = py ? lmi_keep(s, lm_binary_scalar(LM_ADD, py, 1)) : NULL;
	*fail = !w;
	return w;
}

/* Saved: [0] x, [1] y, [2] pos_weight (i[0] = 1 when present). */
lm_status lmi_bw_bce_logits(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *x, *y, *pw = NULL;
	lm_status st;
	if ((st = lmi_node_saved(n, 0, &x)) || (st = lmi_node_saved(n, 1, &y)) ||
	    (n->p.bce_logits.pos_weight && (st = lmi_node_saved(n, 2, &pw))))
		return st;
	lmi_scope s = {0};
	bool fail;
	lm_tensor *w = weight(&s, y, pw, &fail);
	if (fail) goto oom;
	if (n->in[0].needs_grad) { /* g ((1 - y) - w sigmoid(-x)) */
		lm_tensor *ny = lmi_keep(&s, lm_rbinary_scalar(LM_SUB, 1, y)), *nx = ny ? lmi_keep(&s, lm_neg(x)) : NULL;
		lm_tensor *sg = nx ? lmi_keep(&s, lm_sigmoid(nx)) : NULL;
		lm_tensor *ws = sg ? (w ? lmi_keep(&s, lm_mul(w, sg)) : sg) : NULL;
		lm_tensor *d = ws ? lmi_keep(&s, lm_sub(ny, ws)) : NULL;
		if (!d || !(gin[0] = lm_mul(g, d))) goto oom;
	}
	if (n->in[1].needs_grad || (n->nin > 2 && n->in[2].needs_grad)) {
		lm_tensor *sp = softplus_neg(&s, x);
		if (!sp) goto oom;
		if (n->in[1].needs_grad) { /* g (-x + (pw - 1) softplus(-x)) */
			lm_tensor *d = lmi_keep(&s, lm_neg(x));
			if (d && pw) {
				lm_tensor *p1 = lmi_keep(&s, lm_binary_scalar(LM_SUB, pw, 1));
				lm_tensor *t = p1 ? lmi_keep(&s, lm_mul(p1, sp)) : NULL;
				d = t ? lmi_keep(&s, lm_add(d, t)) : NULL;
			}
			if (!d || !(gin[1] = lm_mul(g, d))) goto oom;
		}
		if (n->nin > 2 && n->in[2].needs_grad) { /* sum_to(g y softplus(-x)) */
			lm_tensor *t = lmi_keep(&s, lm_mul(y, sp)), *gt = t ? lmi_keep(&s, lm_mul(g, t)) : NULL;
			if (!gt || !(gin[2] = lmi_sum_to(gt, n->in[2].ndim, n->in[2].shape))) goto oom;
		}
	}
	lmi_scope_end(&s);
	return LM_OK;
oom:
	st = lm_last_status();
	for (int k = 0; k < n->nin; k++) {
		lm_tensor_release(gin[k]);
		gin[k] = NULL;
	}
	lmi_scope_end(&s);
	return st ? st : LM_ERR_INTERNAL;
}

static lm_status check(const lm_tensor *x, const lm_tensor *y, const lm_tensor *pw)
{
	static const char *const name = "binary_cross_entropy_with_logits";
	const lm_tensor *ts[3] = {x, y, pw};
	static const char *const what[3] = {"input", "target", "pos_weight"};
	for (int k = 0; k < 3; k++) {
		if (!ts[k]) {
			if (k < 2) return lmi_fail(LM_ERR_ARG, "%s: %s is NULL", name, what[k]);
			continue;
		}
		if (!lm_dtype_is_float(ts[k]->dtype))
			return lmi_fail(LM_ERR_DTYPE, "%s: %s must be a float tensor, got %s", name, what[k],
			                lm_dtype_name(ts[k]->dtype));
	}
	bool same = x->ndim == y->ndim;
	for (int i = 0; same && i < x->ndim; i++) same = x->shape[i] == y->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_SHAPE, "%s: input of shape %s and target of shape %s differ", name,
		                lmi_shape_s(x), lmi_shape_s(y));
	if (pw) {
		int nd;
		int64_t sh[LM_MAX_DIMS];
		bool fits = !lm_broadcast_shapes(x->ndim, x->shape, pw->ndim, pw->shape, &nd, sh) &&
		            nd == x->ndim;
		for (int i = 0; fits && i < nd; i++) fits = sh[i] == x->shape[i];
		if (!fits)
			return lmi_fail(LM_ERR_SHAPE, "%s: pos_weight of shape %s does not broadcast to the input's "
			                "shape %s", name, lmi_shape_s(pw), lmi_shape_s(x));
	}
	return lmi_check_device(name, 3, ts);
}

lm_tensor *lm_binary_cross_entropy_with_logits(const lm_tensor *x, const lm_tensor *y,
                                               const lm_tensor *pos_weight, lm_reduction red)
{
	if (check(x, y, pos_weight)) return NULL;
	LMI_HALF_VIA_F32(lm_binary_cross_entropy_with_logits(x, y, pos_weight, red), &x, &y, &pos_weight);
	if (red < LM_REDUCTION_MEAN || red > LM_REDUCTION_NONE)
		return lmi_fail_null(LM_ERR_ARG, "binary_cross_entropy_with_logits: unknown reduction %d", (int)red);
	bool prev = lm_set_grad_enabled(false);
	lmi_scope s = {0};
	bool fail;
	lm_tensor *w = weight(&s, y, pos_weight, &fail);
	lm_tensor *sp = fail ? NULL : softplus_neg(&s, x);
	lm_tensor *ny = sp ? lmi_keep(&s, lm_rbinary_scalar(LM_SUB, 1, y)) : NULL;
	lm_tensor *a = ny ? lmi_keep(&s, lm_mul(ny, x)) : NULL;
	lm_tensor *b = a ? (w ? lmi_keep(&s, lm_mul(w, sp)) : sp) : NULL;
	lm_tensor *l = b ? lm_add(a, b) : NULL;
	lm_set_grad_enabled(prev);
	lmi_scope_end(&s);
	if (!l) return NULL;
	const lm_tensor *in[3] = {x, y, pos_weight};
	const lm_tensor *save[3] = {x, y, pos_weight};
	l = lmi_finish(l, LMI_OP_BCE_LOGITS, &(lmi_params){.bce_logits = {.pos_weight = pos_weight != NULL}},
	               pos_weight ? 3 : 2, in, pos_weight ? 3 : 2, save, NULL);
	if (!l || red == LM_REDUCTION_NONE) return l;
	lm_tensor *r = red == LM_REDUCTION_MEAN ? lm_mean(l, LM_DIM_ALL, false) : lm_sum(l, LM_DIM_ALL, false);
	lm_tensor_release(l);
	return r;
}
