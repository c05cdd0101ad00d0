/*
 * access_plan.h — the launches of the memory-access demos (coalescing, transpose), written once
 * for both hosts (../access_emu.c and ../cuda/access.cu): the call, the kernels of access.h with
 * their arguments, and the one launch.
 *
 * Design: the sums take one thread per column (sum_columns) or per row (sum_rows), in blocks of
 * `block` threads; the transposes a 2-D grid of TILE x TILE tiles (x: columns of the input, y:
 * rows), blocks of TILE x LMK_ACCESS_ROWS threads.
 * Read next: access.h (the kernels), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_ACCESS_PLAN_H
#define LUMEN_KERNELS_BODY_ACCESS_PLAN_H

#include "kernels/body/plan.h"

#define LMK_ACCESS_TILE 32 /* the warp's width: a tile column is one warp's 32 lanes */
#define LMK_ACCESS_ROWS 8  /* rows of threads per transpose block */

/* The kernels' variants, in the order of their list below. */
enum {
	LMI_ACCESS_SUM_COLUMNS = 0, /* kernels.coalescing algo 'coalesced' */
	LMI_ACCESS_SUM_ROWS,        /* 'strided' */
	LMI_ACCESS_TRANSPOSE_NAIVE, /* kernels.transpose algo 'naive' */
	LMI_ACCESS_TRANSPOSE_SHARED,
	LMI_ACCESS_TRANSPOSE_PADDED,
	LMI_ACCESS_KIND_COUNT
};

/* A demo as asked: x (rows x cols, row-major host array) into y: the column sums (cols), the row
 * sums (rows) or the transpose (cols x rows). */
typedef struct lmi_access_call {
	int kind, is_double; /* LMI_ACCESS_* */
	const void *x;
	void *y;
	int64_t rows, cols;
	unsigned block; /* threads per block of the sums */
} lmi_access_call;

typedef struct lmk_access_args {
	LMK_PTR x;
	LMK_PTR y;
	unsigned rows, cols;
} lmk_access_args;

#define LMK_ACCESS_KERNELS(K_)                                                                     \
	K_(sum_columns, (a->x, a->y, a->rows, a->cols))                                            \
	K_(sum_rows, (a->x, a->y, a->rows, a->cols))                                               \
	K_(transpose_naive, (a->x, a->y, a->rows, a->cols))                                        \
	K_(transpose_shared, (a->x, a->y, a->rows, a->cols))                                       \
	K_(transpose_padded, (a->x, a->y, a->rows, a->cols))
enum { LMK_ACCESS_KERNELS(LMK_KERNEL_ID) LMK_ACCESS_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_ACCESS_KERNEL_COUNT == (int)LMI_ACCESS_KIND_COUNT, "a kernel a variant");

/* Elements of y. */
static inline int64_t lmk_access_out_len(const lmi_access_call *c)
{
	return c->kind == LMI_ACCESS_SUM_COLUMNS ? c->cols
	       : c->kind == LMI_ACCESS_SUM_ROWS  ? c->rows
	                                         : c->rows * c->cols;
}

static inline lmk_launch lmk_access_launch(const lmi_access_call *c)
{
	if (c->kind <= LMI_ACCESS_SUM_ROWS) {
		int64_t threads = c->kind == LMI_ACCESS_SUM_COLUMNS ? c->cols : c->rows;
		return lmk_launch_1d(c->kind, lmk_blocks(threads, c->block), c->block, 0);
	}
	lmk_launch l = {c->kind,
	                {lmk_blocks(c->cols, LMK_ACCESS_TILE), lmk_blocks(c->rows, LMK_ACCESS_TILE), 1},
	                {LMK_ACCESS_TILE, LMK_ACCESS_ROWS, 1},
	                0,
	                0};
	return l;
}

static inline lmk_access_args lmk_access_args_of(const lmi_access_call *c, LMK_PTR x, LMK_PTR y)
{
	lmk_access_args a = {x, y, (unsigned)c->rows, (unsigned)c->cols};
	return a;
}

#endif
