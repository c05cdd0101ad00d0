/*
 * optim.c — the optimizers' updates, each one fused pass over a parameter (lumen/optim.h).
 *
 * torch.optim (1.13, its per-tensor path) runs an SGD-with-momentum step as 3-4 tensor ops and an
 * Adam step as ~8, each a pass over memory; here each is one loop that reads p, g and the states
 * once and writes them once, doing the same arithmetic in the same order in the parameter's dtype
 * (scalars converted to it as PyTorch does), so float32 results agree with torch.optim's to
 * rounding. This file checks and prepares; the loops are the device's (backend.h's sgd_step,
 * adam_step, rmsprop_step: ../backend/cpu/train.c on the CPU), so a parameter on the GPU is
 * updated there. A non-contiguous parameter or gradient goes through a contiguous copy (and the
 * parameter is copied back). Clipping sums squares in double. Read next: batch.c.
 */
#include <math.h>

#include "lumen/optim.h"
#include "ops.h"

static int threads_for(int64_t n) { return n >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1; }

/* ---------------------------------------------------------------- checks */

static lm_status same_geometry(const char *fname, const char *what, const lm_tensor *p,
                               const lm_tensor *t, bool need_contiguous)
{
	if (!t) return lmi_fail(LM_ERR_ARG, "%s: %s is NULL", fname, what);
	bool same = t->ndim == p->ndim && t->dtype == p->dtype;
	for (int i = 0; same && i < p->ndim; i++) same = t->shape[i] == p->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_SHAPE, "%s: %s of shape %s (%s) does not match the parameter %s (%s)",
		                fname, what, lmi_shape_s(t), lm_dtype_name(t->dtype), lmi_shape_s(p),
		                lm_dtype_name(p->dtype));
	if (need_contiguous && !lm_tensor_is_contiguous(t))
		return lmi_fail(LM_ERR_ARG, "%s: the state %s must be contiguous", fname, what);
	if (t->storage->device != p->storage->device)
		return lmi_fail(LM_ERR_DEVICE, "%s: %s is on %s, the parameter on %s", fname, what,
		                lm_device_name(t->storage->device), lm_device_name(p->storage->device));
	return LM_OK;
}

static lm_status check_param(const char *fname, const lm_tensor *p, const lm_tensor *g, double lr)
{
	if (!p) return lmi_fail(LM_ERR_ARG, "%s: the parameter is NULL", fname);
	if (!lm_dtype_is_float(p->dtype))
		return lmi_fail(LM_ERR_DTYPE, "%s: parameters must be float tensors, got %s", fname,
		                lm_dtype_name(p->dtype));
	if (!(lr >= 0) || !isfinite(lr))
		return lmi_fail(LM_ERR_ARG, "%s: the learning rate must be a finite number >= 0, got %g", fname, lr);
	if (lmi_has_internal_overlap(p))
		return lmi_fail(LM_ERR_ARG, "%s: the parameter of shape %s has broadcast (expanded) dims",
		                fname, lmi_shape_s(p));
	return same_geometry(fname, "the gradient", p, g, false);
}

/* The parameter's data to update: p itself when contiguous, else a contiguous copy (*copy set). */
static lm_tensor *work_param(lm_tensor *p, lm_tensor **copy)
{
	*copy = NULL;
	if (lm_tensor_is_contiguous(p)) return p;
	*copy = lmi_contiguous_copy(p, p->dtype);
	return *copy;
}

/* After the update (status s): write a copy back, bump versions. */
static lm_status finish_param(lm_tensor *p, lm_tensor *copy, lm_status s)
{
	if (copy && !s) s = lmi_copy(p, copy);
	lm_tensor_release(copy);
	lmi_bump_version(p);
	return s;
}

static void bump(lm_tensor *t)
{
	if (t) lmi_bump_version(t);
}

/* ---------------------------------------------------------------- SGD */

lm_status lm_sgd_step_(lm_tensor *p, const lm_tensor *grad, lm_tensor *buf, const lm_sgd_opts *o,
                       bool first)
{
	static const char *const fname = "sgd_step_";
	lm_status s;
	if (!o) return lmi_fail(LM_ERR_ARG, "%s: options are NULL", fname);
	if ((s = check_param(fname, p, grad, o->lr))) return s;
	if (!(o->momentum >= 0) || !(o->dampening >= 0 && o->dampening <= 1) || !(o->weight_decay >= 0))
		return lmi_fail(LM_ERR_ARG, "%s: momentum %g and weight_decay %g must be >= 0, dampening %g in "
		                "[0, 1]", fname, o->momentum, o->weight_decay, o->dampening);
	if (o->nesterov && (o->momentum <= 0 || o->dampening != 0))
		return lmi_fail(LM_ERR_ARG, "%s: nesterov needs momentum > 0 and dampening 0", fname);
	if (o->momentum != 0 && (s = same_geometry(fname, "momentum buffer", p, buf, true))) return s;
	if (o->momentum == 0) buf = NULL;
	lm_tensor *copy, *gc = lm_contiguous(grad), *pw = gc ? work_param(p, &copy) : NULL;
	if (!pw) {
		lm_tensor_release(gc);
		return lm_last_status();
	}
	lmi_params prm = {.sgd = {.lr = o->lr, .momentum = o->momentum, .dampening = o->dampening,
	                          .weight_decay = o->weight_decay, .nesterov = o->nesterov, .maximize = o->maximize,
	                          .first = first}};
	s = lmi_run(fname, LMI_OP_SGD_STEP, &prm, pw->dtype, 2, (const lm_tensor *[]){pw, gc}, 2, (lm_tensor *[]){pw, buf});
	lm_tensor_release(gc);
	bump(buf);
	return finish_param(p, copy, s);
}

/* ---------------------------------------------------------------- Adam, AdamW */

lm_status lm_adam_step_(lm_tensor *p, const lm_tensor *grad, lm_tensor *m, lm_tensor *v,
                        lm_tensor *vmax, const lm_adam_opts *o)
{
	const char *fname = o && o->decoupled ? "adamw_step_" : "adam_step_";
	lm_status s;
	if (!o) return lmi_fail(LM_ERR_ARG, "%s: options are NULL", fname);
	if ((s = check_param(fname, p, grad, o->lr))) return s;
	if (!(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1))
		return lmi_fail(LM_ERR_ARG, "%s: betas (%g, %g) must lie in [0, 1)", fname, o->beta1, o->beta2);
	if (!(o->eps >= 0) || !(o->weight_decay >= 0))
		return lmi_fail(LM_ERR_ARG, "%s: eps %g and weight_decay %g must be >= 0", fname, o->eps,
		                o->weight_decay);
	if (o->step < 1) return lmi_fail(LM_ERR_ARG, "%s: step %lld must be >= 1", fname, (long long)o->step);
	if ((s = same_geometry(fname, "exp_avg", p, m, true)) ||
	    (s = same_geometry(fname, "exp_avg_sq", p, v, true)) ||
	    (o->amsgrad && (s = same_geometry(fname, "max_exp_avg_sq", p, vmax, true))))
		return s;
	if (!o->amsgrad) vmax = NULL;
	double bc1 = 1 - pow(o->beta1, (double)o->step), bc2 = 1 - pow(o->beta2, (double)o->step);
	double step_size_d = o->lr / bc1, bc2_sqrt = sqrt(bc2);
	lm_tensor *copy, *gc = lm_contiguous(grad), *pw = gc ? work_param(p, &copy) : NULL;
	if (!pw) {
		lm_tensor_release(gc);
		return lm_last_status();
	}
	lmi_params prm = {.adam = {.lr = o->lr, .beta1 = o->beta1, .beta2 = o->beta2, .eps = o->eps,
	                           .weight_decay = o->weight_decay, .amsgrad = o->amsgrad, .decoupled = o->decoupled,
	                           .maximize = o->maximize, .step_size = step_size_d, .bc2_sqrt = bc2_sqrt,
	                           .step = o->step}};
	s = lmi_run(fname, LMI_OP_ADAM_STEP, &prm, pw->dtype, 2, (const lm_tensor *[]){pw, gc}, 4,
	            (lm_tensor *[]){pw, m, v, vmax});
	lm_tensor_release(gc);
	bump(m);
	bump(v);
	bump(vmax);
	return finish_param(p, copy, s);
}

/* ---------------------------------------------------------------- RMSprop */

lm_status lm_rmsprop_step_(lm_tensor *p, const lm_tensor *grad, lm_tensor *sq, lm_tensor *buf,
                           lm_tensor *gavg, const lm_rmsprop_opts *o)
{
	static const char *const fname = "rmsprop_step_";
	lm_status s;
	if (!o) return lmi_fail(LM_ERR_ARG, "%s: options are NULL", fname);
	if ((s = check_param(fname, p, grad, o->lr))) return s;
	if (!(o->alpha >= 0 && o->alpha <= 1) || !(o->eps >= 0) || !(o->weight_decay >= 0) ||
	    !(o->momentum >= 0))
		return lmi_fail(LM_ERR_ARG, "%s: alpha %g must lie in [0, 1]; eps %g, weight_decay %g and "
		                "momentum %g must be >= 0", fname, o->alpha, o->eps, o->weight_decay, o->momentum);
	if ((s = same_geometry(fname, "square_avg", p, sq, true)) ||
	    (o->momentum > 0 && (s = same_geometry(fname, "momentum_buffer", p, buf, true))) ||
	    (o->centered && (s = same_geometry(fname, "grad_avg", p, gavg, true))))
		return s;
	if (o->momentum <= 0) buf = NULL;
	if (!o->centered) gavg = NULL;
	lm_tensor *copy, *gc = lm_contiguous(grad), *pw = gc ? work_param(p, &copy) : NULL;
	if (!pw) {
		lm_tensor_release(gc);
		return lm_last_status();
	}
	lmi_params prm = {.rmsprop = {.lr = o->lr, .alpha = o->alpha, .eps = o->eps, .weight_decay = o->weight_decay,
	                              .momentum = o->momentum, .centered = o->centered, .maximize = o->maximize}};
	s = lmi_run(fname, LMI_OP_RMSPROP_STEP, &prm, pw->dtype, 2, (const lm_tensor *[]){pw, gc}, 4,
	            (lm_tensor *[]){pw, sq, buf, gavg});
	lm_tensor_release(gc);
	bump(sq);
	bump(buf);
	bump(gavg);
	return finish_param(p, copy, s);
}

/* ---------------------------------------------------------------- clipping */

/* sum |g|^p (or max |g| for p = inf) of a contiguous float tensor, in double */
static double norm_part(const lm_tensor *g, double p)
{
	int64_t n = lm_tensor_numel(g);
	double acc = 0;
	bool f32 = g->dtype == LM_FLOAT32;
	const float *a = f32 ? (const float *)lmi_data(g) : NULL;
	const double *b = f32 ? NULL : (const double *)lmi_data(g);
	if (isinf(p)) {
		for (int64_t i = 0; i < n; i++) {
			double v = fabs(f32 ? (double)a[i] : b[i]);
			if (v > acc || isnan(v)) acc = v;
		}
		return acc;
	}
	if (p == 2) {
#pragma omp parallel for reduction(+ : acc) schedule(static) num_threads(threads_for(n))
		for (int64_t i = 0; i < n; i++) {
			double v = f32 ? (double)a[i] : b[i];
			acc += v * v;
		}
		return acc;
	}
	for (int64_t i = 0; i < n; i++) acc += pow(fabs(f32 ? (double)a[i] : b[i]), p);
	return acc;
}

lm_status lm_clip_grad_norm_(int64_t n, lm_tensor *const *grads, double max_norm, double p,
                             double *total)
{
	static const char *const fname = "clip_grad_norm_";
	lmi_capture_opaque(fname, "the gradients' norm is read on the host and scales them");
	if (n < 0 || (n && !grads)) return lmi_fail(LM_ERR_ARG, "%s: bad gradient list", fname);
	if (!(max_norm >= 0)) return lmi_fail(LM_ERR_ARG, "%s: max_norm %g must be >= 0", fname, max_norm);
	if (!(p > 0)) return lmi_fail(LM_ERR_ARG, "%s: norm_type %g must be > 0 (or inf)", fname, p);
	double acc = 0;
	for (int64_t k = 0; k < n; k++) {
		lm_tensor *g = grads[k];
		if (!g) continue;
		if (!lm_dtype_is_float(g->dtype))
			return lmi_fail(LM_ERR_DTYPE, "%s: gradient %lld is %s", fname, (long long)k + 1,
			                lm_dtype_name(g->dtype));
		/* a device's gradient is read on the host, in float64 */
		lm_tensor *c = g->storage->device != LM_CPU ? lm_to_device(g, LM_CPU)
		             : g->dtype == LM_FLOAT32 || g->dtype == LM_FLOAT64 ? lm_contiguous(g)
		                                                              : lmi_contiguous_copy(g, LM_FLOAT32);
		if (!c) return lm_last_status();
		double part = norm_part(c, p);
		lm_tensor_release(c);
		if (isinf(p)) acc = part > acc || isnan(part) ? part : acc;
		else acc += part;
	}
	double norm = isinf(p) ? acc : pow(acc, 1 / p);
	if (total) *total = norm;
	double coef = max_norm / (norm + 1e-6);
	if (!(coef < 1)) return LM_OK; /* also NaN norms: PyTorch scales by NaN; Lumen leaves them */
	for (int64_t k = 0; k < n; k++) {
		if (!grads[k]) continue;
		lm_status s = lm_binary_scalar_(LM_MUL, grads[k], coef);
		if (s) return s;
	}
	return LM_OK;
}
