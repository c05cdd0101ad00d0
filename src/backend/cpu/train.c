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

static int threads_for(int64_t n)
{
	return n >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
}

/* ---------------------------------------------------------------- SGD */

#define SGD_LOOP(T)                                                                                \
	do {                                                                                       \
		T *w = (T *)lmi_data(p), *bf = buf ? (T *)lmi_data(buf) : NULL;                    \
		const T *gr = (const T *)lmi_data(grad);                                           \
		const T lr = (T)o->lr, wd = (T)o->weight_decay, mo = (T)o->momentum;               \
		const T damp = (T)(1 - o->dampening), sign = o->maximize ? (T)-1 : (T)1;           \
		_Pragma("omp parallel for schedule(static) num_threads(threads_for(n))") for (     \
		    int64_t i = 0; i < n; i++)                                                     \
		{                                                                                  \
			T d = sign * gr[i];                                                        \
			if (wd != 0) d = d + wd * w[i];                                            \
			if (mo != 0) {                                                             \
				T b = first ? d : bf[i] * mo + d * damp;                           \
				bf[i] = b;                                                         \
				d = nesterov ? d + b * mo : b;                                     \
			}                                                                          \
			w[i] = w[i] - lr * d;                                                      \
		}                                                                                  \
	} while (0)

lm_status lmi_cpu_sgd_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *buf,
                           const lm_sgd_opts *o, bool first)
{
	int64_t n = lm_tensor_numel(p);
	bool nesterov = o->nesterov;
	if (p->dtype == LM_FLOAT32)
		SGD_LOOP(float);
	else
		SGD_LOOP(double);
	return LM_OK;
}

/* ---------------------------------------------------------------- Adam, AdamW */

#define ADAM_LOOP(T, SQRT)                                                                         \
	do {                                                                                       \
		T *w = (T *)lmi_data(p), *m1 = (T *)lmi_data(m), *m2 = (T *)lmi_data(v);           \
		T *mx = vmax ? (T *)lmi_data(vmax) : NULL;                                         \
		const T *gr = (const T *)lmi_data(grad);                                           \
		const T b1 = (T)o->beta1, b2 = (T)o->beta2, c1 = (T)(1 - o->beta1),                \
		        c2 = (T)(1 - o->beta2);                                                    \
		const T wd = (T)o->weight_decay, decay = (T)(1 - o->lr * o->weight_decay);         \
		const T step_size = (T)step_size_d, bc2s = (T)bc2_sqrt, eps = (T)o->eps;           \
		const T sign = o->maximize ? (T)-1 : (T)1;                                         \
		const bool decoupled = o->decoupled, ams = o->amsgrad;                             \
		_Pragma("omp parallel for schedule(static) num_threads(threads_for(n))") for (     \
		    int64_t i = 0; i < n; i++)                                                     \
		{                                                                                  \
			T g = sign * gr[i], x = w[i];                                              \
			if (wd != 0) {                                                             \
				if (decoupled)                                                     \
					x = x * decay;                                             \
				else                                                               \
					g = g + wd * x;                                            \
			}                                                                          \
			T a = m1[i] * b1 + g * c1;                                                 \
			T b = m2[i] * b2 + c2 * g * g; /* addcmul: value * t1 * t2 */              \
			m1[i] = a;                                                                 \
			m2[i] = b;                                                                 \
			if (ams) {                                                                 \
				T mv = mx[i] > b ? mx[i] : b;                                      \
				mx[i] = mv;                                                        \
				b = mv;                                                            \
			}                                                                          \
			T denom = SQRT(b) / bc2s + eps;                                            \
			w[i] = x - step_size * (a / denom);                                        \
		}                                                                                  \
	} while (0)

lm_status lmi_cpu_adam_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *m, lm_tensor *v,
                            lm_tensor *vmax, const lm_adam_opts *o, double step_size_d,
                            double bc2_sqrt)
{
	int64_t n = lm_tensor_numel(p);
	if (p->dtype == LM_FLOAT32)
		ADAM_LOOP(float, sqrtf);
	else
		ADAM_LOOP(double, sqrt);
	return LM_OK;
}

/* ---------------------------------------------------------------- RMSprop */

#define RMSPROP_LOOP(T, SQRT)                                                                      \
	do {                                                                                       \
		T *w = (T *)lmi_data(p), *sa = (T *)lmi_data(sq);                                  \
		T *bf = buf ? (T *)lmi_data(buf) : NULL, *ga = gavg ? (T *)lmi_data(gavg) : NULL;  \
		const T *gr = (const T *)lmi_data(grad);                                           \
		const T al = (T)o->alpha, c = (T)(1 - o->alpha), wd = (T)o->weight_decay;          \
		const T lr = (T)o->lr, eps = (T)o->eps, mo = (T)o->momentum;                       \
		const T sign = o->maximize ? (T)-1 : (T)1;                                         \
		_Pragma("omp parallel for schedule(static) num_threads(threads_for(n))") for (     \
		    int64_t i = 0; i < n; i++)                                                     \
		{                                                                                  \
			T g = sign * gr[i];                                                        \
			if (wd != 0) g = g + wd * w[i];                                            \
			T s2 = sa[i] * al + c * g * g;                                             \
			sa[i] = s2;                                                                \
			T avg;                                                                     \
			if (ga) {                                                                  \
				T a = ga[i] * al + g * c;                                          \
				ga[i] = a;                                                         \
				avg = SQRT(s2 + a * a * (T)-1);                                    \
			} else {                                                                   \
				avg = SQRT(s2);                                                    \
			}                                                                          \
			avg = avg + eps;                                                           \
			if (bf) {                                                                  \
				T b = bf[i] * mo + g / avg;                                        \
				bf[i] = b;                                                         \
				w[i] = w[i] - lr * b;                                              \
			} else {                                                                   \
				w[i] = w[i] - lr * (g / avg);                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

lm_status lmi_cpu_rmsprop_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *sq, lm_tensor *buf,
                               lm_tensor *gavg, const lm_rmsprop_opts *o)
{
	int64_t n = lm_tensor_numel(p);
	if (p->dtype == LM_FLOAT32)
		RMSPROP_LOOP(float, sqrtf);
	else
		RMSPROP_LOOP(double, sqrt);
	return LM_OK;
}

/* ---------------------------------------------------------------- augmentations */

lm_status lmi_cpu_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t pad,
                             lm_tensor *out)
{
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	int64_t oh = out->shape[2], ow = out->shape[3];
	const int64_t *v = (const int64_t *)lmi_data(offsets);
	size_t sz = lm_dtype_size(x->dtype);
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
	size_t sz = lm_dtype_size(x->dtype);
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
