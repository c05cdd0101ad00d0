/*
 * spmv_plan.h — the launch of a sparse matrix-vector product, written once for both hosts
 * (../spmv_emu.c and ../cuda/spmv.cu): the call, the kernels of spmv.h with their arguments, the
 * arrays each format's kernel reads, and the one launch: a thread per nonzero (COO) or per row
 * (CSR, ELL, JDS).
 *
 * Design: the arrays are listed once, under the names the kernels give them, with their lengths
 * and the kernel argument each is passed as; the emulator passes them as trace arrays (ELL's slot
 * arrays with their (width, m) layout: slot t of row r at row t, column r), the CUDA host code
 * copies them to the device. y comes last; COO's is zeroed before each run (its atomics add).
 * Read next: spmv.h (the kernels), ../sparse_formats.h (the arrays), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_SPMV_PLAN_H
#define LUMEN_KERNELS_BODY_SPMV_PLAN_H

#include "kernels/body/plan.h"

enum { LMI_SPMV_COO = 0, LMI_SPMV_CSR, LMI_SPMV_ELL, LMI_SPMV_JDS, LMI_SPMV_FORMAT_COUNT };

/* y (m) = A x in one format, host arrays as lm_sparse_array names them (0-based int32 indices):
 * col, val and row_nnz are the format's own (ELL's slots, JDS's sorted rows). */
typedef struct lmi_spmv_call {
	int format, is_double;    /* LMI_SPMV_* */
	int64_t m, n, nnz, width; /* width: ELL's row length; JDS: iterations */
	const int32_t *row, *col, *row_ptr, *row_nnz, *perm, *iter_ptr;
	const void *val, *x;
	void *y;
	unsigned block;
} lmi_spmv_call;

typedef struct lmk_spmv_args {
	LMK_PTR row;
	LMK_PTR col;
	LMK_PTR val;
	LMK_PTR row_ptr;
	LMK_PTR row_nnz;
	LMK_PTR perm;
	LMK_PTR iter_ptr;
	LMK_PTR x;
	LMK_PTR y;
	unsigned m, nnz;
} lmk_spmv_args;

/* The kernels, in the order of LMI_SPMV_*. */
#define LMK_SPMV_KERNELS(K_)                                                                       \
	K_(spmv_coo, (a->row, a->col, a->val, a->x, a->y, a->nnz))                                 \
	K_(spmv_csr, (a->row_ptr, a->col, a->val, a->x, a->y, a->m))                               \
	K_(spmv_ell, (a->col, a->val, a->row_nnz, a->x, a->y, a->m))                               \
	K_(spmv_jds, (a->perm, a->iter_ptr, a->row_nnz, a->col, a->val, a->x, a->y, a->m))
enum { LMK_SPMV_KERNELS(LMK_KERNEL_ID) LMK_SPMV_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_SPMV_KERNEL_COUNT == (int)LMI_SPMV_FORMAT_COUNT, "a kernel a format");

/* An array a format's kernel reads (or writes: y). */
typedef struct lmk_spmv_array {
	const char *name;   /* as the kernel calls it */
	const void *host;
	int64_t length;     /* elements */
	int index;          /* int32 indices (else values of the call's type) */
	int64_t rows, cols; /* a 2-D layout hint (0, 0: 1-D) */
	LMK_PTR *arg;       /* the kernel argument it is passed as */
} lmk_spmv_array;

#define LMK_SPMV_MAX_ARRAYS 7

static inline lmk_spmv_array lmk_spmv_array_of(const char *name, const void *host, int64_t length,
                                               int index, LMK_PTR *arg)
{
	lmk_spmv_array r = {name, host, length, index, 0, 0, arg};
	return r;
}

/* The arrays of c's format, then x, then y: their count (at most LMK_SPMV_MAX_ARRAYS); each
 * entry's arg points into a, whose scalars are set too. */
static inline int lmk_spmv_arrays(const lmi_spmv_call *c, lmk_spmv_args *a, lmk_spmv_array *out)
{
	int64_t slots = c->format == LMI_SPMV_ELL ? c->width * c->m : c->nnz;
	int n = 0;
	a->m = (unsigned)c->m;
	a->nnz = (unsigned)c->nnz;
	switch (c->format) {
	case LMI_SPMV_COO: out[n++] = lmk_spmv_array_of("row", c->row, c->nnz, 1, &a->row); break;
	case LMI_SPMV_CSR:
		out[n++] = lmk_spmv_array_of("row_ptr", c->row_ptr, c->m + 1, 1, &a->row_ptr);
		break;
	case LMI_SPMV_JDS:
		out[n++] = lmk_spmv_array_of("perm", c->perm, c->m, 1, &a->perm);
		out[n++] = lmk_spmv_array_of("iter_ptr", c->iter_ptr, c->width + 1, 1, &a->iter_ptr);
		out[n++] = lmk_spmv_array_of("row_nnz", c->row_nnz, c->m, 1, &a->row_nnz);
		break;
	default: break;
	}
	out[n++] = lmk_spmv_array_of("col", c->col, slots, 1, &a->col);
	out[n++] = lmk_spmv_array_of("val", c->val, slots, 0, &a->val);
	if (c->format == LMI_SPMV_ELL) {
		out[n - 2].rows = out[n - 1].rows = c->width;
		out[n - 2].cols = out[n - 1].cols = c->m;
		out[n++] = lmk_spmv_array_of("row_nnz", c->row_nnz, c->m, 1, &a->row_nnz);
	}
	out[n++] = lmk_spmv_array_of("x", c->x, c->n, 0, &a->x);
	out[n++] = lmk_spmv_array_of("y", c->y, c->m, 0, &a->y);
	return n;
}

static inline lmk_launch lmk_spmv_launch(const lmi_spmv_call *c)
{
	int64_t threads = c->format == LMI_SPMV_COO ? c->nnz : c->m;
	unsigned grid = lmk_blocks(threads, c->block);
	return lmk_launch_1d(c->format, grid > 0 ? grid : 1, c->block, 0);
}

#endif
