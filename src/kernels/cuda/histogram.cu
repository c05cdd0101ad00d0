/*
 * histogram.cu — the histograms of ../body/histogram.h compiled by nvcc, and their host code: the
 * same launch as the emulator's host code (../histogram_emu.c), with real atomics, timed with CUDA
 * events.
 *
 * Design: the input is copied once; every timed run zeroes the global histogram (part of the run:
 * the atomics add into it) and launches the kernel between two events. One warm-up run, then
 * `repeats` runs; the median is reported and the last run's counts are copied back.
 * Read next: ../body/histogram.h, reduce.cu.
 */
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/kernels_cuda.h"

#define IT unsigned char
#define KFN(name) LMK_CAT(name, _u8)
#include "kernels/body/histogram.h"
#undef IT
#undef KFN
#define IT int
#define KFN(name) LMK_CAT(name, _i32)
#include "kernels/body/histogram.h"
#undef IT
#undef KFN

static const char *const kernel_name[LMI_HIST_ALGO_COUNT] = {
	"histogram_global_atomic", "histogram_privatized", "histogram_aggregated"};

static void launch(const lmi_cuda_hist_call *c, unsigned grid, const unsigned char *data,
                   unsigned *histo)
{
	size_t smem = c->bins * sizeof(unsigned);
	unsigned n = (unsigned)c->n;
	switch (c->algo) {
	case LMI_HIST_GLOBAL_ATOMIC:
		histogram_global_atomic_u8<<<grid, c->block>>>(data, n, histo, c->bins, c->scaled);
		break;
	case LMI_HIST_PRIVATIZED:
		histogram_privatized_u8<<<grid, c->block, smem>>>(data, n, histo, c->bins, c->scaled);
		break;
	default:
		histogram_aggregated_u8<<<grid, c->block, smem>>>(data, n, histo, c->bins, c->scaled,
		                                                   c->coarsen);
		break;
	}
}

static void launch(const lmi_cuda_hist_call *c, unsigned grid, const int *data, unsigned *histo)
{
	size_t smem = c->bins * sizeof(unsigned);
	unsigned n = (unsigned)c->n;
	switch (c->algo) {
	case LMI_HIST_GLOBAL_ATOMIC:
		histogram_global_atomic_i32<<<grid, c->block>>>(data, n, histo, c->bins, c->scaled);
		break;
	case LMI_HIST_PRIVATIZED:
		histogram_privatized_i32<<<grid, c->block, smem>>>(data, n, histo, c->bins, c->scaled);
		break;
	default:
		histogram_aggregated_i32<<<grid, c->block, smem>>>(data, n, histo, c->bins, c->scaled,
		                                                    c->coarsen);
		break;
	}
}

template <typename E> static int histogram(lmi_cuda_hist_call *c, char *msg, size_t msg_cap)
{
	int rc = 0;
	E *data = NULL;
	unsigned *histo = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	int64_t per_block = (int64_t)c->block * c->coarsen;
	unsigned grid = (unsigned)((c->n + per_block - 1) / per_block);
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaMalloc((void **)&data, (size_t)c->n * sizeof(E)));
	CUDA_TRY(cudaMalloc((void **)&histo, c->bins * sizeof(unsigned)));
	CUDA_TRY(cudaMemcpy(data, c->data, (size_t)c->n * sizeof(E), cudaMemcpyHostToDevice));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	for (int r = -1; r < c->repeats; r++) { /* r = -1: the warm-up */
		CUDA_TRY(cudaEventRecord(start));
		CUDA_TRY(cudaMemsetAsync(histo, 0, c->bins * sizeof(unsigned)));
		launch(c, grid, data, histo);
		CUDA_LAUNCHED(kernel_name[c->algo], grid, c->block);
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->histo, histo, c->bins * sizeof(unsigned), cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
out:
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	if (data) cudaFree(data);
	if (histo) cudaFree(histo);
	free(times);
	return rc;
}

int lmi_cuda_histogram(lmi_cuda_hist_call *c, char *msg, size_t msg_cap)
{
	return c->is_u8 ? histogram<unsigned char>(c, msg, msg_cap) : histogram<int>(c, msg, msg_cap);
}
