/*
 * lumen/optim.h — the training loop's core operations: fused optimizer updates (SGD, Adam/AdamW,
 * RMSprop), gradient clipping, and the data loader's batch gathering, seeded permutations and
 * whole-batch augmentations.
 *
 * Each optimizer update is one pass over a parameter: the gradient, the state tensors and the
 * parameter are read once and written once, with PyTorch 1.13's arithmetic in the parameter's
 * dtype (its order of operations, so float32 results match torch.optim's to rounding). States are
 * tensors of the parameter's shape and dtype, contiguous, owned by the caller (zero-filled before
 * the first step). These are updates, not ops: nothing is recorded for autograd, and the
 * parameter may require grad. Errors name the function and the offending shapes or values.
 * Read next: src/ops/optim.c, src/ops/batch.c, lua/lumen/optim/.
 */
#ifndef LUMEN_OPTIM_H
#define LUMEN_OPTIM_H

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- optimizer updates */

typedef struct lm_sgd_opts {
	double lr, momentum, dampening, weight_decay;
	bool nesterov, maximize;
} lm_sgd_opts;

/*
 * d = grad (+ weight_decay p); with momentum: buf = d on the first step (first = true), else
 * buf = momentum buf + (1 - dampening) d, and d = nesterov ? d + momentum buf : buf; p -= lr d.
 * buf may be NULL when momentum is 0.
 */
lm_status lm_sgd_step_(lm_tensor *p, const lm_tensor *grad, lm_tensor *buf, const lm_sgd_opts *o,
                       bool first);

typedef struct lm_adam_opts {
	double lr, beta1, beta2, eps, weight_decay;
	int64_t step;   /* the step being taken, from 1 (bias correction 1 - beta^step) */
	bool amsgrad;   /* keep vmax = max(vmax, v) and divide by it */
	bool decoupled; /* AdamW: p *= 1 - lr weight_decay, instead of grad += weight_decay p */
	bool maximize;
} lm_adam_opts;

/*
 * m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2;
 * p -= lr / (1 - beta1^step) * m / (sqrt(v or vmax) / sqrt(1 - beta2^step) + eps).
 * vmax is needed (and only used) with amsgrad.
 */
lm_status lm_adam_step_(lm_tensor *p, const lm_tensor *grad, lm_tensor *m, lm_tensor *v,
                        lm_tensor *vmax, const lm_adam_opts *o);

typedef struct lm_rmsprop_opts {
	double lr, alpha, eps, weight_decay, momentum;
	bool centered, maximize;
} lm_rmsprop_opts;

/*
 * sq = alpha sq + (1 - alpha) g^2; avg = sqrt(sq - gavg^2 if centered (gavg = alpha gavg +
 * (1 - alpha) g first), else sq) + eps; with momentum: buf = momentum buf + g / avg, p -= lr buf;
 * else p -= lr g / avg. buf is needed when momentum > 0, gavg when centered.
 */
lm_status lm_rmsprop_step_(lm_tensor *p, const lm_tensor *grad, lm_tensor *sq, lm_tensor *buf,
                           lm_tensor *gavg, const lm_rmsprop_opts *o);

/*
 * The norm of all n gradients taken together (norm_type 2, any p > 0, or INFINITY for the max);
 * when it exceeds max_norm, every gradient is scaled in place by max_norm / (norm + 1e-6), as
 * torch.nn.utils.clip_grad_norm_. NULL entries are skipped. *total receives the norm.
 */
lm_status lm_clip_grad_norm_(int64_t n, lm_tensor *const *grads, double max_norm, double norm_type,
                             double *total);

/* ---------------------------------------------------------------- batches */

/* The rows idx[0..n) (0-based, along dim 1 of src) as a new contiguous tensor (n, ...): one copy
 * per row, in parallel for large batches. Not recorded for autograd. */
lm_tensor *lm_take_rows(const lm_tensor *src, const int64_t *idx, int64_t n);
/* A permutation of 0..n-1 into out, from Philox keyed by seed at counter stream: the same (seed,
 * stream) gives the same permutation on every machine and thread count (Fisher-Yates). */
lm_status lm_randperm_seeded(int64_t n, uint64_t seed, uint64_t stream, int64_t *out);
/* x (N, C, H, W) zero-padded by pad on each side, cropped to (oh, ow) at offsets (N, 2) int64
 * (top, left in the padded image, 0 <= top <= H + 2 pad - oh). */
lm_tensor *lm_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t oh, int64_t ow,
                         int64_t pad);
/* x (N, ..., W) with the last dim reversed for the samples whose mask (N, any dtype) is nonzero. */
lm_tensor *lm_flip_batch(const lm_tensor *x, const lm_tensor *mask);

#ifdef __cplusplus
}
#endif
#endif
