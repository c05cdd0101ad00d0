/*
 * train.h — CPU loops of the training loop's own operations: the optimizers' fused updates and
 * the data loader's batch augmentations (train.c). Same contract as cpu.h: the ops layer
 * (../../ops/optim.c, batch.c) has checked shapes, dtypes and values and made every operand
 * contiguous; these loop over memory. Read next: train.c.
 */
#ifndef LUMEN_BACKEND_CPU_TRAIN_H
#define LUMEN_BACKEND_CPU_TRAIN_H

#include "backend/cpu/cpu.h"

lm_status lmi_cpu_sgd_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *buf,
                           const lm_sgd_opts *o, bool first);
lm_status lmi_cpu_adam_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *m, lm_tensor *v,
                            lm_tensor *vmax, const lm_adam_opts *o, double step_size,
                            double bc2_sqrt);
lm_status lmi_cpu_rmsprop_step(lm_tensor *p, const lm_tensor *grad, lm_tensor *sq, lm_tensor *buf,
                               lm_tensor *gavg, const lm_rmsprop_opts *o);
lm_status lmi_cpu_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t pad,
                             lm_tensor *out);
lm_status lmi_cpu_flip_batch(const lm_tensor *x, const lm_tensor *mask, lm_tensor *out);

#endif
