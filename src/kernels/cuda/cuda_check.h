/*
 * cuda_check.h — the module's rules for CUDA calls: every call is checked, every launch is
 * followed by cudaGetLastError, and a failure leaves a message naming the call in msg and jumps to
 * the function's `out:` label (which frees what was allocated). Functions using these declare
 * `int rc = 0;`, `char *msg`, `size_t msg_cap` and all their locals before the first check (C++
 * forbids jumping over initialisations).
 * Read next: scan.cu, reduce.cu.
 */
#ifndef LUMEN_KERNELS_CUDA_CHECK_H
#define LUMEN_KERNELS_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>

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

#endif
