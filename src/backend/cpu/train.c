/*
 * train.c — CPU loops of the training loop's own operations (train.h): the optimizers' fused
 * updates, one pass over a parameter that reads p, g and the states once and writes them once
 * with torch.optim 1.13's arithmetic in the parameter's dtype (../../ops/optim.c states why), and
 * the data loader's whole-batch crop and flip. Loops are written once as macros over the element
 * type and run in parallel above LMI_PARALLEL_GRAIN elements. Read next: ../../ops/optim.c.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/train.h"
#include "backend/scalar_math.h"

static int threads_for(int64_t n)
{
	return n >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
}

/* ---------------------------------------------------------------- SGD */

#define SGD_LOOP(T, S)                                                                             \
	do {                                                                                       \
		T *w = (T *)lmi_data(p), *bf = buf ? (T *)lmi_data(buf) : NULL;                    \
		const T *gr = (const T *)lmi_data(grad);                                           \
		const T lr = (T)o->lr, wd = (T)o->weight_decay, mo = (T)o->momentum;               \
		const T damp = (T)(1 - o->dampening), sign = o->maximize ? (T)-1 : (T)1;           \
		_Pragma("omp parallel for schedule(static) num_threads(threads_for(n))") for (     \
		    int64_t i = 0; i < n; i++)                                                     \
			w[i] = lmi_sgd_update##S(w[i], sign * gr[i], bf ? bf + i : NULL, lr, wd, mo,   \
			                         damp, nesterov, first);                               \
	} while (0)

lm_status lmi_cpu_sgd_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *buf,
                           const lm_sgd_opts *o, bool first)
{
	int64_t n = lm_tensor_numel(p);
	bool nesterov = o->nesterov;
	if (p->dtype == LM_FLOAT32)
		SGD_LOOP(float, f);
	else
		SGD_LOOP(double, );
	return LM_OK;
}

/* ---------------------------------------------------------------- Adam, AdamW */

#define ADAM_LOOP(T, S, K)                                                                         \
	do {                                                                                       \
		T *w = (T *)lmi_data(p), *m1 = (T *)lmi_data(m), *m2 = (T *)lmi_data(v);           \
		T *mx = vmax ? (T *)lmi_data(vmax) : NULL;                                         \
		const T *gr = (const T *)lmi_data(grad);                                           \
		const K k = {(T)o->beta1, (T)o->beta2, (T)(1 - o->beta1), (T)(1 - o->beta2),       \
		             (T)o->weight_decay, (T)(1 - o->lr * o->weight_decay),                 \
		             (T)step_size_d, (T)bc2_sqrt, (T)o->eps, o->decoupled, o->amsgrad};    \
		const T sign = o->maximize ? (T)-1 : (T)1;                                         \
		_Pragma("omp parallel for schedule(static) num_threads(threads_for(n))") for (     \
		    int64_t i = 0; i < n; i++)                                                     \
			w[i] = lmi_adam_update##S(w[i], sign * gr[i], m1 + i, m2 + i,                  \
			                          mx ? mx + i : NULL, &k);                             \
	} while (0)

lm_status lmi_cpu_adam_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *m, lm_tensor *v,
                            lm_tensor *vmax, const lm_adam_opts *o, double step_size_d,
                            double bc2_sqrt)
{
	int64_t n = lm_tensor_numel(p);
	if (p->dtype == LM_FLOAT32)
		ADAM_LOOP(float, f, lmi_adam_kf);
	else
		ADAM_LOOP(double, , lmi_adam_kd);
	return LM_OK;
}

/* ---------------------------------------------------------------- RMSprop */

#define RMSPROP_LOOP(T, S, K)                                                                      \
	do {                                                                                       \
		T *w = (T *)lmi_data(p), *sa = (T *)lmi_data(sq);                                  \
		T *bf = buf ? (T *)lmi_data(buf) : NULL, *ga = gavg ? (T *)lmi_data(gavg) : NULL;  \
		const T *gr = (const T *)lmi_data(grad);                                           \
		const K k = {(T)o->alpha, (T)(1 - o->alpha), (T)o->weight_decay, (T)o->lr,         \
		             (T)o->eps, (T)o->momentum};                                           \
		const T sign = o->maximize ? (T)-1 : (T)1;                                         \
		_Pragma("omp parallel for schedule(static) num_threads(threads_for(n))") for (     \
		    int64_t i = 0; i < n; i++)                                                     \
			w[i] = lmi_rmsprop_update##S(w[i], sign * gr[i], sa + i, ga ? ga + i : NULL,   \
			                             bf ? bf + i : NULL, &k);                          \
	} while (0)

lm_status lmi_cpu_rmsprop_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *sq, lm_tensor *buf,
                               lm_tensor *gavg, const lm_rmsprop_opts *o)
{
	int64_t n = lm_tensor_numel(p);
	if (p->dtype == LM_FLOAT32)
		RMSPROP_LOOP(float, f, lmi_rmsprop_kf);
	else
		RMSPROP_LOOP(double, , lmi_rmsprop_kd);
	return LM_OK;
}

/* ---------------------------------------------------------------- augmentations */

lm_status lmi_cpu_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t pad,
                             lm_tensor *out)
{
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	int64_t oh = out->shape[2], ow = out->shape[3];
	const int64_t *v = (const int64_t *)lmi_data(offsets);
	size_t sz = lmi_elem_size(x->dtype);
	const char *src = lmi_data(x);
	char *dst = lmi_data(out);
	/* out arrives zeroed: the padding stays zero */
#pragma omp parallel for schedule(static) num_threads(threads_for(N *C *oh *ow))
	for (int64_t n = 0; n < N; n++) {
		int64_t top = v[2 * n] - pad, left = v[2 * n + 1] - pad;
		int64_t j0 = left < 0 ? -left : 0,
		        j1 = W - left < ow ? W - left : ow; /* columns inside */
		for (int64_t c = 0; c < C; c++)
			for (int64_t i = 0; i < oh; i++) {
				int64_t y = top + i;
				if (y < 0 || y >= H || j1 <= j0) continue;
				memcpy(dst + (size_t)(((n * C + c) * oh + i) * ow + j0) * sz,
				       src + (size_t)(((n * C + c) * H + y) * W + left + j0) * sz,
				       (size_t)(j1 - j0) * sz);
			}
	}
	return LM_OK;
}

lm_status lmi_cpu_flip_batch(const lm_tensor *x, const lm_tensor *mask, lm_tensor *out)
{
	int64_t N = x->shape[0], W = x->shape[x->ndim - 1];
	const uint8_t *mv = (const uint8_t *)lmi_data(mask);
	size_t sz = lmi_elem_size(x->dtype);
	int64_t lines = N && W ? lm_tensor_numel(x) / N / W : 0;
	const char *s = lmi_data(x);
	char *d = lmi_data(out);
#pragma omp parallel for schedule(static) num_threads(threads_for(lm_tensor_numel(x)))
	for (int64_t n = 0; n < N; n++)
		for (int64_t l = 0; l < lines; l++) {
			const char *from = s + (size_t)((n * lines + l) * W) * sz;
			char *row = d + (size_t)((n * lines + l) * W) * sz;
			if (!mv[n])
				memcpy(row, from, (size_t)W * sz);
			else
				for (int64_t a = 0; a < W; a++)
					memcpy(row + a * (int64_t)sz,
					       from + (W - 1 - a) * (int64_t)sz, sz);
		}
	return LM_OK;
}
