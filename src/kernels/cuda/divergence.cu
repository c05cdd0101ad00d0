/*
 * divergence.cu — the divergence demo of ../body/divergence.h compiled by nvcc, and its host code:
 * the same launch as the emulator's (../divergence_emu.c), timed with CUDA events. A GPU reports
 * no lanes, only the time: compare the patterns' times (even-odd against warp or none).
 * Read next: ../body/divergence.h.
 */
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/kernels_cuda.h"

#include "kernels/body/divergence.h"

int lmi_cuda_divergence(lmi_cuda_divergence_call *c, char *msg, size_t msg_cap)
{
	int rc = 0;
	float *x = NULL, *y = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	size_t n = (size_t)c->warps * 32;
	unsigned block = c->block, grid = (unsigned)(n / block);
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaMalloc((void **)&x, n * sizeof(float)));
	CUDA_TRY(cudaMalloc((void **)&y, n * sizeof(float)));
	CUDA_TRY(cudaMemcpy(x, c->x, n * sizeof(float), cudaMemcpyHostToDevice));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	for (int r = -1; r < c->repeats; r++) { /* r = -1: the warm-up */
		CUDA_TRY(cudaEventRecord(start));
		divergence_demo<<<grid, block>>>(x, y, c->pattern);
		CUDA_LAUNCHED("divergence_demo", grid, block);
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->y, y, n * sizeof(float), cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
out:
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	if (x) cudaFree(x);
	if (y) cudaFree(y);
	free(times);
	return rc;
}
