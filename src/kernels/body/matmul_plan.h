/*
 * matmul_plan.h — the launch of a matrix multiplication, written once for both hosts
 * (../matmul_emu.c and ../cuda/matmul.cu): the call, the kernels of matmul.h with their
 * arguments, and the one launch.
 *
 * Design: a 2-D grid of ceil(n / tile) x ceil(m / tile) blocks of tile x tile threads (x: columns,
 * y: rows, as in PMPP); the tiled version gets 2 tile^2 elements of dynamic shared memory (the
 * tiles Mds and Nds).
 * Read next: matmul.h (the kernels), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_MATMUL_PLAN_H
#define LUMEN_KERNELS_BODY_MATMUL_PLAN_H

#include "kernels/body/plan.h"

enum { LMI_MATMUL_NAIVE = 0, LMI_MATMUL_TILED, LMI_MATMUL_ALGO_COUNT };

/* C (m x n) = A (m x k) B (k x n), row-major host arrays; tile x tile blocks. */
typedef struct lmi_matmul_call {
	int algo, is_double;
	const void *a, *b;
	void *c;
	int64_t m, k, n;
	unsigned tile;
} lmi_matmul_call;

typedef struct lmk_matmul_args {
	LMK_PTR M;
	LMK_PTR N;
	LMK_PTR P;
	unsigned m, k, n, tile;
} lmk_matmul_args;

/* The kernels, in the order of LMI_MATMUL_*. */
#define LMK_MATMUL_KERNELS(K_)                                                                     \
	K_(matmul_naive, (a->M, a->N, a->P, a->m, a->k, a->n))                                     \
	K_(matmul_tiled, (a->M, a->N, a->P, a->m, a->k, a->n, a->tile))
enum { LMK_MATMUL_KERNELS(LMK_KERNEL_ID) LMK_MATMUL_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_MATMUL_KERNEL_COUNT == (int)LMI_MATMUL_ALGO_COUNT, "a kernel a variant");

static inline lmk_launch lmk_matmul_launch(const lmi_matmul_call *c, size_t elem)
{
	unsigned t = c->tile;
	lmk_launch l = {c->algo, {lmk_blocks(c->n, t), lmk_blocks(c->m, t), 1}, {t, t, 1},
	                c->algo == LMI_MATMUL_TILED ? 2 * (size_t)t * t * elem : 0, 0};
	return l;
}

static inline lmk_matmul_args lmk_matmul_args_of(const lmi_matmul_call *c, LMK_PTR M, LMK_PTR N,
                                                LMK_PTR P)
{
	lmk_matmul_args a = {M, N, P, (unsigned)c->m, (unsigned)c->k, (unsigned)c->n, c->tile};
	return a;
}

#endif
