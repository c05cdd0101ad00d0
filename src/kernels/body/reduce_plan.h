/*
 * reduce_plan.h — the launch of a reduction, written once for both hosts (../reduce_emu.c and
 * ../cuda/reduce.cu): the call, the kernels of reduce.h with their arguments, and the one launch.
 *
 * Design: one block per segment (2 * block elements, 2 * coarsen * block when coarsened), each
 * adding its partial sum to output[0] with an atomicAdd (the host zeroes it first). The in-place
 * versions (naive, convergent) work on a copy of the input padded with zeros to whole segments,
 * as the textbook's kernels assume; the shared-memory versions read the input directly (elements
 * past the end count as 0) and keep block elements in shared memory.
 * Read next: reduce.h (the kernels), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_REDUCE_PLAN_H
#define LUMEN_KERNELS_BODY_REDUCE_PLAN_H

#include "kernels/body/plan.h"

enum {
	LMI_REDUCE_NAIVE = 0,
	LMI_REDUCE_CONVERGENT,
	LMI_REDUCE_SHARED,
	LMI_REDUCE_COARSENED,
	LMI_REDUCE_ALGO_COUNT
};

/* A reduction as asked: *y = the sum of the n elements of x (host memory). */
typedef struct lmi_reduce_call {
	int is_double;    /* element type: float (0) or double (1) */
	int algo;         /* LMI_REDUCE_* */
	const void *x;    /* n input elements */
	void *y;          /* 1 output element */
	int64_t n;        /* 1 .. 2^31 - 1 */
	unsigned block;   /* threads per block: a power of two, 1..1024 */
	unsigned coarsen; /* coarsened: elements per thread / 2; else 1 */
} lmi_reduce_call;

typedef struct lmk_reduce_args {
	LMK_PTR input;  /* the padded copy (in place), else the input */
	LMK_PTR output; /* one element, zeroed */
	unsigned n, coarsen;
} lmk_reduce_args;

/* The kernels, in the order of LMI_REDUCE_*. */
#define LMK_REDUCE_KERNELS(K_)                                                                     \
	K_(reduce_naive, (a->input, a->output, a->n))                                              \
	K_(reduce_convergent, (a->input, a->output, a->n))                                         \
	K_(reduce_shared, (a->input, a->output, a->n))                                             \
	K_(reduce_coarsened, (a->input, a->output, a->n, a->coarsen))
enum { LMK_REDUCE_KERNELS(LMK_KERNEL_ID) LMK_REDUCE_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_REDUCE_KERNEL_COUNT == (int)LMI_REDUCE_ALGO_COUNT, "a kernel a variant");

typedef struct lmk_reduce_plan {
	int in_place;    /* naive, convergent: they overwrite a padded copy of the input */
	int64_t segment; /* elements per block */
	int64_t len;     /* elements of the kernel's input: the padded copy, or n */
	lmk_launch launch;
} lmk_reduce_plan;

static inline void lmk_reduce_plan_make(lmk_reduce_plan *p, const lmi_reduce_call *c, size_t elem)
{
	p->in_place = c->algo == LMI_REDUCE_NAIVE || c->algo == LMI_REDUCE_CONVERGENT;
	p->segment = 2 * (int64_t)c->block * (c->algo == LMI_REDUCE_COARSENED ? c->coarsen : 1);
	unsigned grid = lmk_blocks(c->n, p->segment);
	p->len = p->in_place ? (int64_t)grid * p->segment : c->n;
	p->launch = lmk_launch_1d(c->algo, grid, c->block, p->in_place ? 0 : c->block * elem);
}

#endif
