/*
 * histogram_plan.h — the launch of a histogram, written once for both hosts (../histogram_emu.c
 * and ../cuda/histogram.cu): the call, the kernels of histogram.h with their arguments, and the
 * one launch.
 *
 * Design: a grid of ceil(n / (block * coarsen)) blocks, so each thread handles about `coarsen`
 * elements; the privatized versions get bins * 4 bytes of dynamic shared memory (at most 16 KiB
 * for 4096 bins: every bin count fits). The host zeroes the global histogram first (cudaMemset
 * on a GPU). The kernels come in two element types of data: unsigned char (_u8) and int (_i32).
 * Read next: histogram.h (the kernels), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_HISTOGRAM_PLAN_H
#define LUMEN_KERNELS_BODY_HISTOGRAM_PLAN_H

#include "kernels/body/plan.h"

enum {
	LMI_HIST_GLOBAL_ATOMIC = 0,
	LMI_HIST_PRIVATIZED,
	LMI_HIST_AGGREGATED,
	LMI_HIST_ALGO_COUNT
};

/* A histogram as asked: n elements of data (uint8 when is_u8, else int32) into bins uint32
 * counters (host memory). */
typedef struct lmi_hist_call {
	int algo;      /* LMI_HIST_* */
	int is_u8;
	int scaled;    /* bytes of a text: byte b counts in bin b * bins / 256 */
	const void *data;
	int64_t n;     /* 1 .. 2^31 - 1 */
	unsigned bins; /* 1..4096 */
	unsigned block, coarsen;
	uint32_t *histo; /* out: bins counts */
} lmi_hist_call;

typedef struct lmk_hist_args {
	LMK_PTR data;
	unsigned n;
	LMK_PTR histo;
	unsigned bins, coarsen;
	int scaled;
} lmk_hist_args;

/* The kernels, in the order of LMI_HIST_*. */
#define LMK_HIST_KERNELS(K_)                                                                       \
	K_(histogram_global_atomic, (a->data, a->n, a->histo, a->bins, a->scaled))                 \
	K_(histogram_privatized, (a->data, a->n, a->histo, a->bins, a->scaled))                    \
	K_(histogram_aggregated, (a->data, a->n, a->histo, a->bins, a->scaled, a->coarsen))
enum { LMK_HIST_KERNELS(LMK_KERNEL_ID) LMK_HIST_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_HIST_KERNEL_COUNT == (int)LMI_HIST_ALGO_COUNT, "a kernel a variant");

static inline lmk_launch lmk_hist_launch(const lmi_hist_call *c)
{
	unsigned grid = lmk_blocks(c->n, (int64_t)c->block * c->coarsen);
	return lmk_launch_1d(c->algo, grid, c->block,
	                     c->algo == LMI_HIST_GLOBAL_ATOMIC ? 0 : c->bins * sizeof(unsigned));
}

static inline lmk_hist_args lmk_hist_args_of(const lmi_hist_call *c, LMK_PTR data, LMK_PTR histo)
{
	lmk_hist_args a = {data, (unsigned)c->n, histo, c->bins, c->coarsen, c->scaled};
	return a;
}

#endif
