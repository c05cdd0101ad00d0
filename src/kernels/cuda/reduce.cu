/*
 * reduce.cu — the reductions of ../body/reduce.h compiled by nvcc, and their host code: the same
 * launch as the emulator's host code (../reduce_emu.c), timed with CUDA events.
 *
 * Design: the in-place versions (naive, convergent) destroy their input, so every run starts from
 * a fresh device-to-device copy of the zero-padded input, made before the start event; zeroing the
 * output is part of the timed run (the atomics add into it).
 * Read next: ../body/reduce.h, scan.cu.
 */
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/kernels_cuda.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/reduce.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/reduce.h"
#undef T
#undef KFN

static const char *const kernel_name[LMI_REDUCE_ALGO_COUNT] = {
	"reduce_naive", "reduce_convergent", "reduce_shared", "reduce_coarsened"};

static void launch(int algo, unsigned grid, unsigned block, unsigned n, unsigned coarsen,
                   float *input, float *output)
{
	size_t smem = block * sizeof(float);
	switch (algo) {
	case LMI_REDUCE_NAIVE: reduce_naive_f32<<<grid, block>>>(input, output); break;
	case LMI_REDUCE_CONVERGENT: reduce_convergent_f32<<<grid, block>>>(input, output); break;
	case LMI_REDUCE_SHARED: reduce_shared_f32<<<grid, block, smem>>>(input, output, n); break;
	default: reduce_coarsened_f32<<<grid, block, smem>>>(input, output, n, coarsen); break;
	}
}

static void launch(int algo, unsigned grid, unsigned block, unsigned n, unsigned coarsen,
                   double *input, double *output)
{
	size_t smem = block * sizeof(double);
	switch (algo) {
	case LMI_REDUCE_NAIVE: reduce_naive_f64<<<grid, block>>>(input, output); break;
	case LMI_REDUCE_CONVERGENT: reduce_convergent_f64<<<grid, block>>>(input, output); break;
	case LMI_REDUCE_SHARED: reduce_shared_f64<<<grid, block, smem>>>(input, output, n); break;
	default: reduce_coarsened_f64<<<grid, block, smem>>>(input, output, n, coarsen); break;
	}
}

template <typename TT> static int reduce(lmi_cuda_call *c, char *msg, size_t msg_cap)
{
	int rc = 0;
	bool in_place = c->algo == LMI_REDUCE_NAIVE || c->algo == LMI_REDUCE_CONVERGENT;
	int64_t segment = 2 * (int64_t)c->block * (c->algo == LMI_REDUCE_COARSENED ? c->coarsen : 1);
	unsigned grid = (unsigned)((c->n + segment - 1) / segment);
	int64_t len = in_place ? (int64_t)grid * segment : c->n;
	TT *pristine = NULL, *input = NULL, *output = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	float ms = 0;
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaMalloc((void **)&input, (size_t)len * sizeof(TT)));
	CUDA_TRY(cudaMalloc((void **)&output, sizeof(TT)));
	if (in_place) {
		CUDA_TRY(cudaMalloc((void **)&pristine, (size_t)len * sizeof(TT)));
		CUDA_TRY(cudaMemset(pristine, 0, (size_t)len * sizeof(TT)));
		CUDA_TRY(cudaMemcpy(pristine, c->x, (size_t)c->n * sizeof(TT), cudaMemcpyHostToDevice));
	} else {
		CUDA_TRY(cudaMemcpy(input, c->x, (size_t)c->n * sizeof(TT), cudaMemcpyHostToDevice));
	}
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	for (int r = -1; r < c->repeats; r++) { /* r = -1: the warm-up */
		if (in_place)
			CUDA_TRY(cudaMemcpy(input, pristine, (size_t)len * sizeof(TT), cudaMemcpyDeviceToDevice));
		CUDA_TRY(cudaEventRecord(start));
		CUDA_TRY(cudaMemsetAsync(output, 0, sizeof(TT)));
		launch(c->algo, grid, c->block, (unsigned)c->n, c->coarsen, input, output);
		CUDA_LAUNCHED(kernel_name[c->algo], grid, c->block);
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->y, output, sizeof(TT), cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
	c->launches = 1;
out:
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	if (pristine) cudaFree(pristine);
	if (input) cudaFree(input);
	if (output) cudaFree(output);
	free(times);
	return rc;
}

int lmi_cuda_reduce(lmi_cuda_call *c, char *msg, size_t msg_cap)
{
	return c->is_double ? reduce<double>(c, msg, msg_cap) : reduce<float>(c, msg, msg_cap);
}
