/*
 * cuda_api.h — the table of the course's kernels in the CUDA module: one run per pattern.
 *
 * Design: liblumen never links CUDA. The .cu files of this directory are built into the module
 * liblumen_cuda.so (dlopen'ed by ../../backend/cuda_loader.c), which exports this table as
 * lm_cuda_kernels_api beside its device table (../../backend/cuda_module.h); the pattern driver
 * looks it up by name (lmi_cuda_kernels_get, ../driver.c). Both sides include this header, so it
 * is plain C with no CUDA types: every function returns 0 or the cudaError_t it met, with a
 * message naming the CUDA call written into msg (msg_cap bytes). tools/gpu-check links the
 * module's sources directly and calls the same tables.
 * Read next: module.cu (the module's side), ../driver.c (liblumen's side), scan.cu.
 */
#ifndef LUMEN_KERNELS_CUDA_API_H
#define LUMEN_KERNELS_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/body/access_plan.h"
#include "kernels/body/conv2d_plan.h"
#include "kernels/body/divergence_plan.h"
#include "kernels/body/fused_plan.h"
#include "kernels/body/histogram_plan.h"
#include "kernels/body/matmul_plan.h"
#include "kernels/body/reduce_plan.h"
#include "kernels/body/scan_plan.h"
#include "kernels/body/spmv_plan.h"
#include "kernels/body/streams_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LMI_CUDA_KERNELS_VERSION 6
#define LMI_CUDA_KERNELS_SYMBOL "lm_cuda_kernels_api"

/* The calls (what a pattern is asked) and their variants, numbered alike on both sides, are in
 * the plans: ../body/<pattern>_plan.h. */

/* What a CUDA run measures: repeats in; out the median over the timed runs (CUDA events around
 * the kernels only, after a warm-up, each run started with the GPU's L2 flushed), the kernel
 * launches of one run, and the kernels launched (each name once, in order, " + " between: what
 * info.impl names). */
#define LMI_CUDA_KERNEL_NAMES 160
typedef struct lmi_cuda_timing {
	int repeats;    /* timed runs after one warm-up (>= 1) */
	double time_ms;
	int launches;
	char kernels[LMI_CUDA_KERNEL_NAMES];
} lmi_cuda_timing;

/* One timed operation of a streams run (ms from the schedule's start event). */
typedef struct lmi_cuda_span {
	double h2d_start, h2d_end, kernel_end, d2h_end;
} lmi_cuda_span;

/* What a streams run measures: the schedules of C = A + B serially on one stream, then on a
 * stream per segment (the inputs copied into pinned host buffers untimed). */
typedef struct lmi_cuda_streams_result {
	double serial_ms, overlapped_ms;    /* medians of the totals */
	lmi_cuda_span *serial, *overlapped; /* in: segments entries each; filled from the last run */
	int pinned;                         /* 1 when the host buffers were pinned */
	char kernels[LMI_CUDA_KERNEL_NAMES]; /* the kernels launched, as lmi_cuda_timing's */
} lmi_cuda_streams_result;

typedef struct lmi_cuda_kernels {
	int version; /* LMI_CUDA_KERNELS_VERSION */
	int (*scan)(const lmi_scan_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	int (*reduce)(const lmi_reduce_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	int (*histogram)(const lmi_hist_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	int (*matmul)(const lmi_matmul_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	int (*conv2d)(const lmi_conv_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	int (*spmv)(const lmi_spmv_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	int (*divergence)(const lmi_divergence_call *call, lmi_cuda_timing *t, char *msg,
	                  size_t msg_cap);
	int (*streams)(const lmi_streams_call *call, lmi_cuda_streams_result *r, char *msg,
	               size_t msg_cap);
	/* the memory-access demos: kernels.coalescing and kernels.transpose */
	int (*access)(const lmi_access_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
	/* a compiled program's fused group (lm.graph): kernels.fused / g:kernel */
	int (*fused)(const lmi_fused_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
} lmi_cuda_kernels;

/* The module's exported entry point (extern "C"). */
const lmi_cuda_kernels *lm_cuda_kernels_api(void);

/* liblumen's side (../driver.c): the table when a device is usable; else NULL with LM_ERR_DEVICE
 * and a message that starts with fname and says why (module missing, no driver, no device, a
 * module of another build). Loads the module on the first call. */
const lmi_cuda_kernels *lmi_cuda_kernels_get(const char *fname);

#ifdef __cplusplus
}
#endif
#endif
