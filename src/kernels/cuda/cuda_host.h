/*
 * cuda_host.h — what the CUDA host code of every pattern (scan.cu, reduce.cu, ...) shares: the
 * rules for CUDA calls, the device buffers of a run, the launches of a plan's kernel list for
 * both element types, and the one timing loop.
 *
 * Rules: every call is checked, every launch is followed by cudaGetLastError, and a failure
 * leaves a message naming the call in msg and jumps to the function's `out:` label (which frees
 * what was allocated). Functions (and lambdas) using CUDA_TRY declare `int rc = 0;`, have `msg`
 * and `msg_cap` in scope, and declare all their locals before the first check (C++ forbids
 * jumping over initialisations).
 * Timing (lmk_time): a warm-up, then t->repeats runs, each between two events on the default
 * stream; before each, untimed, the pattern's preparation (restoring an input an in-place kernel
 * destroyed) and a write of twice the GPU's L2 size, so that every run reads its operands from
 * device memory, not from the L2 (GB/s of small inputs is then memory bandwidth). The median is
 * reported.
 * Read next: scan.cu (a pattern's host code), ../body/plan.h.
 */
#ifndef LUMEN_KERNELS_CUDA_HOST_H
#define LUMEN_KERNELS_CUDA_HOST_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/body/plan.h"
#include "kernels/cuda/kernels_cuda.h"

#define CUDA_TRY(call)                                                                             \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			snprintf(msg, msg_cap, "%s failed: %s (error %d)", #call,                  \
			         cudaGetErrorString(e_), (int)e_);                                 \
			rc = (int)e_;                                                              \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

/* After kernel<<<...>>>: launch errors (bad configuration, no kernel image for this GPU). */
#define CUDA_LAUNCHED(name, grid, block)                                                           \
	do {                                                                                       \
		cudaError_t e_ = cudaGetLastError();                                               \
		if (e_ != cudaSuccess) {                                                           \
			snprintf(msg, msg_cap, "launch of %s<<<%u, %u>>> failed: %s (error %d)", name, \
			         (unsigned)(grid), (unsigned)(block), cudaGetErrorString(e_), (int)e_); \
			rc = (int)e_;                                                              \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

/* The same after the launch of a plan's launch l of the kernel called name. */
#define CUDA_LAUNCHED_PLAN(name, l)                                                                \
	CUDA_LAUNCHED(name, (l)->grid.x * (l)->grid.y * (l)->grid.z,                                \
	              (l)->block.x * (l)->block.y * (l)->block.z)

/* Adds a kernel's name to names (LMI_CUDA_KERNEL_NAMES bytes: " + " between names, each once). */
static inline void lmk_note_kernel(char *names, const char *name)
{
	size_t n = strlen(names), k = strlen(name);
	for (const char *p = strstr(names, name); p; p = strstr(p + 1, name))
		if ((p == names || p[-1] == ' ') && (p[k] == '\0' || p[k] == ' ')) return;
	if (n + k + 4 < LMI_CUDA_KERNEL_NAMES) snprintf(names + n, LMI_CUDA_KERNEL_NAMES - n, "%s%s", n ? " + " : "", name);
}

/* Launches a plan's launch l with arguments a on the default stream (lmk_run of the element
 * type E: LMK_CUDA_KERNELS below), then checks it; notes the kernel in the timing t in scope. */
#define CUDA_LAUNCH(l, a, E)                                                                       \
	do {                                                                                       \
		lmk_run((l), (a), 0, (const E *)0);                                                \
		CUDA_LAUNCHED_PLAN(lmk_kernel_name[(l)->kernel], (l));                             \
		lmk_note_kernel(t->kernels, lmk_kernel_name[(l)->kernel]);                         \
	} while (0)

/* ---------------------------------------------------------------- device buffers */

/* The device memory of a run, freed together by lmk_free. */
typedef struct lmk_buffers {
	void *p[16];
	int n;
} lmk_buffers;

/* *out = a new device buffer of bytes (at least 8: an empty array still gets an address), filled
 * from host when host != NULL. */
template <typename P>
static cudaError_t lmk_device(lmk_buffers *b, P **out, const void *host, size_t bytes)
{
	void *d = NULL;
	cudaError_t e = cudaMalloc(&d, bytes ? bytes : 8);
	if (e != cudaSuccess) return e;
	b->p[b->n++] = d; /* at most 16 per run */
	*out = (P *)d;
	return host && bytes ? cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) : cudaSuccess;
}

/* Cleanup: errors here would hide the first one, so they are not reported. */
static inline void lmk_free(lmk_buffers *b)
{
	for (int i = 0; i < b->n; i++) cudaFree(b->p[i]);
	b->n = 0;
}

/* ---------------------------------------------------------------- launches of a kernel list */

static inline dim3 lmk_dim(lmk_dim3 d) { return dim3(d.x, d.y, d.z); }

/*
 * LMK_CUDA_KERNELS(LIST, ARGS) defines, for a plan's kernel list K_(name, args) (../body/plan.h)
 * and its argument struct, lmk_run(l, a, stream, (const LMK_T0 *)0) and the same for LMK_T1
 * (../body/both_types.h: float and double), which launch kernel l->kernel of the list (suffixed
 * LMK_SFX0 or LMK_SFX1) with l's grid, block and shared bytes and the arguments the list reads
 * from a; and lmk_kernel_name[], the kernels' names in list order. LMK_CUDA_KERNEL(LIST, ARGS, E):
 * the same for kernels of one type E (LMK_SFX0 empty).
 */
#define LMK_CUDA_CASE0(name, args)                                                                 \
	case LMK_K_##name:                                                                         \
		LMK_CAT(name, LMK_SFX0)<<<lmk_dim(l->grid), lmk_dim(l->block), l->shared, stream>>> args; \
		break;
#define LMK_CUDA_CASE1(name, args)                                                                 \
	case LMK_K_##name:                                                                         \
		LMK_CAT(name, LMK_SFX1)<<<lmk_dim(l->grid), lmk_dim(l->block), l->shared, stream>>> args; \
		break;
#define LMK_CUDA_LAUNCHER_(LIST, ARGS, E, CASE)                                                    \
	static void lmk_run(const lmk_launch *l, const ARGS *a, cudaStream_t stream, const E *)    \
	{                                                                                          \
		switch (l->kernel) {                                                               \
			LIST(CASE)                                                                 \
		default: break;                                                                    \
		}                                                                                  \
	}
#define LMK_CUDA_KERNEL(LIST, ARGS, E)                                                             \
	LMK_CUDA_LAUNCHER_(LIST, ARGS, E, LMK_CUDA_CASE0)                                          \
	static const char *const lmk_kernel_name[] = {LIST(LMK_KERNEL_NAME)};
#define LMK_CUDA_KERNELS(LIST, ARGS)                                                               \
	LMK_CUDA_LAUNCHER_(LIST, ARGS, LMK_T0, LMK_CUDA_CASE0)                                     \
	LMK_CUDA_KERNEL(LIST, ARGS, LMK_T1)

/* Runs f with a value of the call's element type: f(float()) or, when is_double, f(double()). The
 * one dispatch from a call to the host code of its type: template <typename E> run(...). */
template <typename F> static int lmk_by_dtype(int is_double, F f)
{
	return is_double ? f(double()) : f(float());
}

/* ---------------------------------------------------------------- timing */

/* The median of v[0..n) (sorts v). */
static inline double lmk_median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline int lmk_no_preparation() { return 0; }

/*
 * Times run() as the header block says: prepare() (untimed) and the L2 flush before each run,
 * run() between the events; a warm-up, then t->repeats runs; t->time_ms: the median. run and
 * prepare return 0 or the CUDA error they met (with msg written), which ends the timing.
 */
template <typename Run, typename Prepare>
static int lmk_time(lmi_cuda_timing *t, Run run, Prepare prepare, char *msg, size_t msg_cap)
{
	int rc = 0, l2 = 0;
	void *flush = NULL;
	size_t flush_bytes = 0;
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	double *times = (double *)calloc((size_t)t->repeats, sizeof(double));
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
	flush_bytes = 2 * (size_t)l2;
	if (flush_bytes) CUDA_TRY(cudaMalloc(&flush, flush_bytes));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	for (int r = -1; r < t->repeats; r++) { /* r = -1: the warm-up */
		if ((rc = prepare()) != 0) goto out;
		if (flush) CUDA_TRY(cudaMemsetAsync(flush, r & 1, flush_bytes));
		CUDA_TRY(cudaEventRecord(start));
		if ((rc = run()) != 0) goto out;
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop)); /* faults in the kernels surface here */
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	t->time_ms = lmk_median(times, t->repeats);
out:
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	if (flush) cudaFree(flush);
	free(times);
	return rc;
}

template <typename Run>
static int lmk_time(lmi_cuda_timing *t, Run run, char *msg, size_t msg_cap)
{
	return lmk_time(t, run, lmk_no_preparation, msg, msg_cap);
}

#endif
