/*
 * conv2d.cu — the 2-D convolutions of ../body/conv2d.h compiled by nvcc, and their host code: the
 * same launches as the emulator's (../conv2d_emu.c), the mask copied into __constant__ memory with
 * cudaMemcpyToSymbol, timed with CUDA events.
 *
 * Design: the image (and, for the naive version, the mask) are copied once; each timed run is one
 * launch between two events. A mutex keeps the constant mask of one call from being overwritten
 * by another thread's call before its launches are done.
 * Read next: ../body/conv2d.h, matmul.cu.
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/kernels_cuda.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/conv2d.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/conv2d.h"
#undef T
#undef KFN

static const char *const kernel_name[LMI_CONV_ALGO_COUNT] = {
	"conv2d_naive", "conv2d_constant", "conv2d_tiled_input", "conv2d_tiled_output"};

static pthread_mutex_t constant_lock = PTHREAD_MUTEX_INITIALIZER;

static cudaError_t to_constant(const float *mask, size_t bytes)
{
	return cudaMemcpyToSymbol(F_c_f32, mask, bytes);
}
static cudaError_t to_constant(const double *mask, size_t bytes)
{
	return cudaMemcpyToSymbol(F_c_f64, mask, bytes);
}

static void launch(const lmi_cuda_conv_call *c, dim3 grid, dim3 block, size_t smem, const float *n,
                   const float *f, float *p)
{
	int h = (int)c->h, w = (int)c->w, mh = (int)c->mh, mw = (int)c->mw, tile = (int)c->tile;
	switch (c->algo) {
	case LMI_CONV_NAIVE: conv2d_naive_f32<<<grid, block>>>(n, f, p, h, w, mh, mw); break;
	case LMI_CONV_CONSTANT: conv2d_constant_f32<<<grid, block>>>(n, p, h, w, mh, mw); break;
	case LMI_CONV_TILED_INPUT:
		conv2d_tiled_input_f32<<<grid, block, smem>>>(n, p, h, w, mh, mw, tile);
		break;
	default: conv2d_tiled_output_f32<<<grid, block, smem>>>(n, p, h, w, mh, mw, tile); break;
	}
}

static void launch(const lmi_cuda_conv_call *c, dim3 grid, dim3 block, size_t smem,
                   const double *n, const double *f, double *p)
{
	int h = (int)c->h, w = (int)c->w, mh = (int)c->mh, mw = (int)c->mw, tile = (int)c->tile;
	switch (c->algo) {
	case LMI_CONV_NAIVE: conv2d_naive_f64<<<grid, block>>>(n, f, p, h, w, mh, mw); break;
	case LMI_CONV_CONSTANT: conv2d_constant_f64<<<grid, block>>>(n, p, h, w, mh, mw); break;
	case LMI_CONV_TILED_INPUT:
		conv2d_tiled_input_f64<<<grid, block, smem>>>(n, p, h, w, mh, mw, tile);
		break;
	default: conv2d_tiled_output_f64<<<grid, block, smem>>>(n, p, h, w, mh, mw, tile); break;
	}
}

template <typename E> static int conv2d(lmi_cuda_conv_call *c, char *msg, size_t msg_cap)
{
	int rc = 0, locked = 0;
	E *n = NULL, *f = NULL, *p = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	unsigned tile = c->tile;
	unsigned in_h = tile + 2 * (unsigned)((c->mh - 1) / 2), in_w = tile + 2 * (unsigned)((c->mw - 1) / 2);
	dim3 grid((unsigned)((c->w + tile - 1) / tile), (unsigned)((c->h + tile - 1) / tile), 1);
	dim3 block = c->algo == LMI_CONV_TILED_INPUT ? dim3(in_w, in_h, 1) : dim3(tile, tile, 1);
	size_t smem = (size_t)in_h * in_w * sizeof(E);
	size_t si = (size_t)(c->h * c->w) * sizeof(E), sm = (size_t)(c->mh * c->mw) * sizeof(E);
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaMalloc((void **)&n, si));
	CUDA_TRY(cudaMalloc((void **)&f, sm));
	CUDA_TRY(cudaMalloc((void **)&p, si));
	CUDA_TRY(cudaMemcpy(n, c->img, si, cudaMemcpyHostToDevice));
	CUDA_TRY(cudaMemcpy(f, c->mask, sm, cudaMemcpyHostToDevice));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	pthread_mutex_lock(&constant_lock);
	locked = 1;
	if (c->algo != LMI_CONV_NAIVE) CUDA_TRY(to_constant((const E *)c->mask, sm));
	for (int r = -1; r < c->repeats; r++) { /* r = -1: the warm-up */
		CUDA_TRY(cudaEventRecord(start));
		launch(c, grid, block, smem, n, f, p);
		CUDA_LAUNCHED(kernel_name[c->algo], grid.x * grid.y, block.x * block.y);
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->out, p, si, cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
out:
	if (locked) pthread_mutex_unlock(&constant_lock);
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	if (n) cudaFree(n);
	if (f) cudaFree(f);
	if (p) cudaFree(p);
	free(times);
	return rc;
}

int lmi_cuda_conv2d(lmi_cuda_conv_call *c, char *msg, size_t msg_cap)
{
	return c->is_double ? conv2d<double>(c, msg, msg_cap) : conv2d<float>(c, msg, msg_cap);
}
