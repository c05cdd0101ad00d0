/*
 * spmv.cu — the SpMV kernels of ../body/spmv.h compiled by nvcc, and their host code: the same
 * launch as the emulator's (../spmv_emu.c), timed with CUDA events.
 *
 * Design: the format's arrays and x are copied once; each timed run is one launch between two
 * events (for COO with the zeroing of y before it: the atomics add into y, so zeroing is part of
 * the run). One warm-up, then `repeats` runs; the median is reported.
 * Read next: ../body/spmv.h, matmul.cu.
 */
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/kernels_cuda.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/spmv.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/spmv.h"
#undef T
#undef KFN

static const char *const kernel_name[LMI_SPMV_FORMAT_COUNT] = {"spmv_coo", "spmv_csr", "spmv_ell",
                                                               "spmv_jds"};

/* Device copies of the arrays of one format. */
typedef struct dev {
	int *row, *col, *row_ptr, *row_nnz, *perm, *iter_ptr;
	void *val, *x, *y;
} dev;

static void launch(const lmi_cuda_spmv_call *c, const dev *d, unsigned grid, const float *)
{
	const float *val = (const float *)d->val, *x = (const float *)d->x;
	float *y = (float *)d->y;
	unsigned m = (unsigned)c->m;
	switch (c->format) {
	case LMI_SPMV_COO:
		spmv_coo_f32<<<grid, c->block>>>(d->row, d->col, val, x, y, (unsigned)c->nnz);
		break;
	case LMI_SPMV_CSR: spmv_csr_f32<<<grid, c->block>>>(d->row_ptr, d->col, val, x, y, m); break;
	case LMI_SPMV_ELL: spmv_ell_f32<<<grid, c->block>>>(d->col, val, d->row_nnz, x, y, m); break;
	default:
		spmv_jds_f32<<<grid, c->block>>>(d->perm, d->iter_ptr, d->row_nnz, d->col, val, x, y, m);
		break;
	}
}

static void launch(const lmi_cuda_spmv_call *c, const dev *d, unsigned grid, const double *)
{
	const double *val = (const double *)d->val, *x = (const double *)d->x;
	double *y = (double *)d->y;
	unsigned m = (unsigned)c->m;
	switch (c->format) {
	case LMI_SPMV_COO:
		spmv_coo_f64<<<grid, c->block>>>(d->row, d->col, val, x, y, (unsigned)c->nnz);
		break;
	case LMI_SPMV_CSR: spmv_csr_f64<<<grid, c->block>>>(d->row_ptr, d->col, val, x, y, m); break;
	case LMI_SPMV_ELL: spmv_ell_f64<<<grid, c->block>>>(d->col, val, d->row_nnz, x, y, m); break;
	default:
		spmv_jds_f64<<<grid, c->block>>>(d->perm, d->iter_ptr, d->row_nnz, d->col, val, x, y, m);
		break;
	}
}

/* Copies n elements of size es from host to a new device buffer (at least 8 bytes). */
#define TO_DEVICE(dst, src, n, es)                                                                 \
	do {                                                                                       \
		if (src) {                                                                         \
			CUDA_TRY(cudaMalloc((void **)&(dst), (size_t)(n) * (es) + 8));             \
			CUDA_TRY(cudaMemcpy((dst), (src), (size_t)(n) * (es), cudaMemcpyHostToDevice)); \
		}                                                                                  \
	} while (0)

template <typename E> static int spmv(lmi_cuda_spmv_call *c, char *msg, size_t msg_cap)
{
	int rc = 0;
	dev d = {};
	cudaEvent_t start = NULL, stop = NULL;
	float ms = 0;
	int64_t slots = c->format == LMI_SPMV_ELL ? c->width * c->m : c->nnz;
	int64_t threads = c->format == LMI_SPMV_COO ? c->nnz : c->m;
	unsigned grid = (unsigned)((threads + c->block - 1) / c->block);
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	if (grid == 0) grid = 1;
	if (c->format == LMI_SPMV_COO) TO_DEVICE(d.row, c->row, c->nnz, sizeof(int));
	if (c->format == LMI_SPMV_CSR) TO_DEVICE(d.row_ptr, c->row_ptr, c->m + 1, sizeof(int));
	if (c->format == LMI_SPMV_ELL || c->format == LMI_SPMV_JDS)
		TO_DEVICE(d.row_nnz, c->row_nnz, c->m, sizeof(int));
	if (c->format == LMI_SPMV_JDS) {
		TO_DEVICE(d.perm, c->perm, c->m, sizeof(int));
		TO_DEVICE(d.iter_ptr, c->iter_ptr, c->width + 1, sizeof(int));
	}
	TO_DEVICE(d.col, c->col, slots, sizeof(int));
	TO_DEVICE(d.val, c->val, slots, sizeof(E));
	TO_DEVICE(d.x, c->x, c->n, sizeof(E));
	CUDA_TRY(cudaMalloc(&d.y, (size_t)c->m * sizeof(E)));
	CUDA_TRY(cudaMemset(d.y, 0, (size_t)c->m * sizeof(E)));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	for (int r = -1; r < c->repeats; r++) { /* r = -1: the warm-up */
		CUDA_TRY(cudaEventRecord(start));
		if (c->format == LMI_SPMV_COO) CUDA_TRY(cudaMemsetAsync(d.y, 0, (size_t)c->m * sizeof(E)));
		launch(c, &d, grid, (const E *)NULL);
		CUDA_LAUNCHED(kernel_name[c->format], grid, c->block);
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		if (r >= 0) times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->y, d.y, (size_t)c->m * sizeof(E), cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
out:
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	void *bufs[] = {d.row, d.col, d.row_ptr, d.row_nnz, d.perm, d.iter_ptr, d.val, d.x, d.y};
	for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
		if (bufs[i]) cudaFree(bufs[i]);
	free(times);
	return rc;
}

int lmi_cuda_spmv(lmi_cuda_spmv_call *c, char *msg, size_t msg_cap)
{
	return c->is_double ? spmv<double>(c, msg, msg_cap) : spmv<float>(c, msg, msg_cap);
}
