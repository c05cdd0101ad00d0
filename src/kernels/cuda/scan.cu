/*
 * scan.cu — the scans of ../body/scan.h compiled by nvcc, and their host code: the same launches as
 * the emulator's host code (../scan_emu.c), timed with CUDA events.
 *
 * Design: device buffers for X, Y and every level of block sums are allocated up front; a run is
 * the block scans of level 0, the scan of the sums (recursively, in place), and scan_add_sums. One
 * warm-up run, then `repeats` runs each between two events; the median is reported. Copies to and
 * from the GPU are outside the timed region.
 * Read next: ../body/scan.h, reduce.cu.
 */
#include <stdlib.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/kernels_cuda.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/scan.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/scan.h"
#undef T
#undef KFN

#define MAX_LEVELS 40

static const char *const block_scan_name[LMI_SCAN_ALGO_COUNT] = {
	"scan_kogge_stone", "scan_brent_kung", "scan_coarsened"};

/* The launches of a scan: per level, the block size, section and number of sections. */
typedef struct plan {
	int algo, levels;
	unsigned coarsen;
	unsigned block[MAX_LEVELS], section[MAX_LEVELS], nb[MAX_LEVELS];
	int64_t len[MAX_LEVELS]; /* elements scanned at the level */
	void *S[MAX_LEVELS];     /* the level's block sums (nb > 1) */
} plan;

static unsigned section_of(int algo, unsigned block, unsigned coarsen)
{
	return algo == LMI_SCAN_BRENT_KUNG ? 2 * block : algo == LMI_SCAN_HIERARCHICAL ? coarsen * block : block;
}

static void make_plan(plan *p, const lmi_cuda_call *c)
{
	p->algo = c->algo;
	p->coarsen = c->coarsen;
	p->levels = 0;
	int64_t n = c->n;
	for (int l = 0; l < MAX_LEVELS; l++) {
		unsigned block = c->block;
		if (l > 0 && section_of(c->algo, block, c->coarsen) < 2) block = 2; /* each level shrinks */
		p->block[l] = block;
		p->section[l] = section_of(c->algo, block, c->coarsen);
		p->nb[l] = (unsigned)((n + p->section[l] - 1) / p->section[l]);
		p->len[l] = n;
		p->S[l] = NULL;
		p->levels = l + 1;
		if (p->nb[l] <= 1) break;
		n = p->nb[l];
	}
}

static void launch_block_scan(const plan *p, int l, const float *X, float *Y, int excl)
{
	unsigned nb = p->nb[l], b = p->block[l], n = (unsigned)p->len[l];
	size_t smem = p->section[l] * sizeof(float);
	float *S = (float *)p->S[l];
	switch (p->algo) {
	case LMI_SCAN_KOGGE_STONE: scan_kogge_stone_f32<<<nb, b, smem>>>(X, Y, n, excl, S); break;
	case LMI_SCAN_BRENT_KUNG: scan_brent_kung_f32<<<nb, b, smem>>>(X, Y, n, excl, S); break;
	default: scan_coarsened_f32<<<nb, b, smem>>>(X, Y, n, excl, S, p->coarsen); break;
	}
}

static void launch_block_scan(const plan *p, int l, const double *X, double *Y, int excl)
{
	unsigned nb = p->nb[l], b = p->block[l], n = (unsigned)p->len[l];
	size_t smem = p->section[l] * sizeof(double);
	double *S = (double *)p->S[l];
	switch (p->algo) {
	case LMI_SCAN_KOGGE_STONE: scan_kogge_stone_f64<<<nb, b, smem>>>(X, Y, n, excl, S); break;
	case LMI_SCAN_BRENT_KUNG: scan_brent_kung_f64<<<nb, b, smem>>>(X, Y, n, excl, S); break;
	default: scan_coarsened_f64<<<nb, b, smem>>>(X, Y, n, excl, S, p->coarsen); break;
	}
}

static void launch_add_sums(const plan *p, int l, float *Y)
{
	scan_add_sums_f32<<<p->nb[l] - 1, p->block[l]>>>(Y, (const float *)p->S[l], (unsigned)p->len[l],
	                                                 p->section[l]);
}

static void launch_add_sums(const plan *p, int l, double *Y)
{
	scan_add_sums_f64<<<p->nb[l] - 1, p->block[l]>>>(Y, (const double *)p->S[l],
	                                                 (unsigned)p->len[l], p->section[l]);
}

/* One run of the whole scan: level l scans X into Y, then its sums, then adds them back. */
template <typename TT>
static int run_level(const plan *p, int l, const TT *X, TT *Y, int excl, int *launches, char *msg,
                     size_t msg_cap)
{
	int rc = 0;
	launch_block_scan(p, l, X, Y, excl);
	CUDA_LAUNCHED(block_scan_name[p->algo], p->nb[l], p->block[l]);
	(*launches)++;
	if (p->nb[l] > 1) {
		TT *S = (TT *)p->S[l];
		if ((rc = run_level<TT>(p, l + 1, S, S, 0, launches, msg, msg_cap)) != 0) goto out;
		launch_add_sums(p, l, Y);
		CUDA_LAUNCHED("scan_add_sums", p->nb[l] - 1, p->block[l]);
		(*launches)++;
	}
out:
	return rc;
}

template <typename TT> static int scan(lmi_cuda_call *c, char *msg, size_t msg_cap)
{
	int rc = 0, launches = 0;
	plan p;
	TT *X = NULL, *Y = NULL;
	cudaEvent_t start = NULL, stop = NULL;
	double *times = (double *)calloc((size_t)c->repeats, sizeof(double));
	size_t bytes = (size_t)c->n * sizeof(TT);
	float ms = 0;
	make_plan(&p, c);
	if (!times) {
		snprintf(msg, msg_cap, "out of host memory");
		return (int)cudaErrorMemoryAllocation;
	}
	CUDA_TRY(cudaMalloc((void **)&X, bytes));
	CUDA_TRY(cudaMalloc((void **)&Y, bytes));
	for (int l = 0; l + 1 < p.levels; l++) CUDA_TRY(cudaMalloc(&p.S[l], p.nb[l] * sizeof(TT)));
	CUDA_TRY(cudaMemcpy(X, c->x, bytes, cudaMemcpyHostToDevice));
	CUDA_TRY(cudaEventCreate(&start));
	CUDA_TRY(cudaEventCreate(&stop));
	if ((rc = run_level<TT>(&p, 0, X, Y, !c->inclusive, &launches, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaDeviceSynchronize()); /* the warm-up; faults in the kernels surface here */
	for (int r = 0; r < c->repeats; r++) {
		launches = 0;
		CUDA_TRY(cudaEventRecord(start));
		if ((rc = run_level<TT>(&p, 0, X, Y, !c->inclusive, &launches, msg, msg_cap)) != 0) goto out;
		CUDA_TRY(cudaEventRecord(stop));
		CUDA_TRY(cudaEventSynchronize(stop));
		CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
		times[r] = ms;
	}
	CUDA_TRY(cudaMemcpy(c->y, Y, bytes, cudaMemcpyDeviceToHost));
	c->time_ms = lmk_median(times, c->repeats);
	c->launches = launches;
out:
	/* cleanup: errors here would hide the first one, so they are not reported */
	if (start) cudaEventDestroy(start);
	if (stop) cudaEventDestroy(stop);
	for (int l = 0; l < p.levels; l++)
		if (p.S[l]) cudaFree(p.S[l]);
	if (X) cudaFree(X);
	if (Y) cudaFree(Y);
	free(times);
	return rc;
}

int lmi_cuda_scan(lmi_cuda_call *c, char *msg, size_t msg_cap)
{
	return c->is_double ? scan<double>(c, msg, msg_cap) : scan<float>(c, msg, msg_cap);
}
