/*
 * matmul.cu — the matrix multiplications of ../body/matmul.h compiled by nvcc, and their host
 * code: the same launch as the emulator's (../matmul_emu.c), timed with CUDA events.
 *
 * Design: A and B are copied once; each timed run is one launch between two events (C is written
 * whole, no zeroing needed). One warm-up, then `repeats` runs; the median is reported.
 * Read next: ../body/matmul.h, histogram.cu.
 */
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/kernels_cuda.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/matmul.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/matmul.h"
#undef T
#undef KFN

static void launch(const lmi_cuda_matmul_call *c, dim3 grid, dim3 block, const float *a,
                   const float *b, float *p)
{
	unsigned m = (unsigned)c->m, k = (unsigned)c->k, n = (unsigned)c->n;
	if (c->algo == LMI_MATMUL_NAIVE) matmul_naive_f32<<<grid, block>>>(a, b, p, m, k, n);
	else matmul_tiled_f32<<<grid, block, 2 * c->tile * c->tile * sizeof(float)>>>(a, b, p, m, k, n, c->tile);
}

static void launch(const lmi_cuda_matmul_call *c, dim3 grid, dim3 block, const double *a,
                   const double *b, double *p)
{
	unsigned m = (unsigned)c->m, k = (unsigned)c->k, n = (unsigned)c->n;
	if (c->algo == LMI_MATMUL_NAIVE) matmul_naive_f64<<<grid, block>>>(a, b, p, m, k, n);
	else matmul_tiled_f64<<<grid, block, 2 * c->tile * c->tile * sizeof(double)>>>(a, b, p, m, k, n, c->tile);
}

template <typename E> static int matmul(lmi_cuda_matmul_call *c, char *msg, size_t msg_cap)
{
	int rc = 0;
	E *a = NULL, *b = NULL, *p = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	dim3 block(c->tile, c->tile, 1);
	dim3 grid((unsigned)((c->n + c->tile - 1) / c->tile), (unsigned)((c->m + c->tile - 1) / c->tile), 1);
	size_t sa = (size_t)(c->m * c->k) * sizeof(E), sb = (size_t)(c->k * c->n) * sizeof(E);
	size_t sp = (size_t)(c->m * c->n) * sizeof(E);
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaMalloc((void **)&a, sa));
	CUDA_TRY(cudaMalloc((void **)&b, sb));
	CUDA_TRY(cudaMalloc((void **)&p, sp));
	CUDA_TRY(cudaMemcpy(a, c->a, sa, cudaMemcpyHostToDevice));
	CUDA_TRY(cudaMemcpy(b, c->b, sb, cudaMemcpyHostToDevice));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	for (int r = -1; r < c->repeats; r++) { /* r = -1: the warm-up */
		CUDA_TRY(cudaEventRecord(start));
		launch(c, grid, block, a, b, p);
		CUDA_LAUNCHED(c->algo == LMI_MATMUL_NAIVE ? "matmul_naive" : "matmul_tiled",
		              grid.x * grid.y, block.x * block.y);
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->c, p, sp, cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
out:
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	if (a) cudaFree(a);
	if (b) cudaFree(b);
	if (p) cudaFree(p);
	free(times);
	return rc;
}

int lmi_cuda_matmul(lmi_cuda_matmul_call *c, char *msg, size_t msg_cap)
{
	return c->is_double ? matmul<double>(c, msg, msg_cap) : matmul<float>(c, msg, msg_cap);
}
