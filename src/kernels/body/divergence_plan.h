/*
 * divergence_plan.h — the launch of the warp-divergence demo, written once for both hosts
 * (../divergence_emu.c and ../cuda/divergence.cu): the call, the kernel of divergence.h with its
 * arguments, and the one launch (whole blocks of whole warps).
 * Read next: divergence.h (the kernel), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_DIVERGENCE_PLAN_H
#define LUMEN_KERNELS_BODY_DIVERGENCE_PLAN_H

#include "kernels/body/plan.h"

enum {
	LMI_DIV_EVEN_ODD = 0,
	LMI_DIV_HALF_WARP,
	LMI_DIV_DATA,
	LMI_DIV_WARP,
	LMI_DIV_NONE,
	LMI_DIV_PATTERN_COUNT
};

/* The demo over warps * 32 threads, one per element of x and y (host arrays). */
typedef struct lmi_divergence_call {
	int pattern;    /* LMI_DIV_* */
	int64_t warps;
	unsigned block; /* a multiple of 32 dividing warps * 32 */
	const float *x;
	float *y;
} lmi_divergence_call;

typedef struct lmk_divergence_args {
	LMK_PTR x;
	LMK_PTR y;
	int pattern;
} lmk_divergence_args;

/* One kernel, float only. */
#define LMK_DIVERGENCE_KERNELS(K_) K_(divergence_demo, (a->x, a->y, a->pattern))
enum { LMK_DIVERGENCE_KERNELS(LMK_KERNEL_ID) LMK_DIVERGENCE_KERNEL_COUNT };

static inline lmk_launch lmk_divergence_launch(const lmi_divergence_call *c)
{
	return lmk_launch_1d(LMK_K_divergence_demo, (unsigned)(c->warps * 32 / c->block), c->block, 0);
}

#endif
