/*
 * axpy.h — the CPU loop of a + alpha * b in one pass (lm_add_scaled), the update step of every
 * optimizer and the fused form of `a * 2 + b`. Same contract as cpu.h: shapes, dtypes and devices
 * checked by the ops layer, the output preallocated. Read next: axpy.c, ../../ops/axpy.c.
 */
#ifndef LUMEN_BACKEND_CPU_AXPY_H
#define LUMEN_BACKEND_CPU_AXPY_H

#include "backend/cpu/cpu.h"

/* out = a + alpha * b; a, b and out of one dtype, a and b broadcast to out's shape (out may be
 * a itself). Integer dtypes use the integral alpha and wrap. */
lm_status lmi_cpu_add_scaled(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double alpha);

#endif
