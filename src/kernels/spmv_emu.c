/*
 * spmv_emu.c — the host code of the emulated SpMV: the kernels of body/spmv.h compiled for the
 * emulator, and the one launch per format: a thread per nonzero (COO) or per row (CSR, ELL, JDS).
 *
 * Design: the arrays are passed under the names the kernels give them, so the SpMV-layouts scene
 * can tell which format's array a load touched; ELL's slot arrays carry their (width, m) layout
 * (slot t of row r at column r of row t). COO's y is zeroed first (the atomics add into it).
 * ../cuda/spmv.cu makes the same launches.
 * Read next: body/spmv.h, spmv.c.
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

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

typedef struct spmv_args {
	const lmi_sparse_view *A;
	const void *x;
	void *y;
} spmv_args;

static void coo_f32(void *p)
{
	spmv_args *a = p;
	spmv_coo_f32(a->A->row, a->A->col, a->A->val, a->x, a->y, (unsigned)a->A->nnz);
}
static void coo_f64(void *p)
{
	spmv_args *a = p;
	spmv_coo_f64(a->A->row, a->A->col, a->A->val, a->x, a->y, (unsigned)a->A->nnz);
}
static void csr_f32(void *p)
{
	spmv_args *a = p;
	spmv_csr_f32(a->A->row_ptr, a->A->col, a->A->val, a->x, a->y, (unsigned)a->A->m);
}
static void csr_f64(void *p)
{
	spmv_args *a = p;
	spmv_csr_f64(a->A->row_ptr, a->A->col, a->A->val, a->x, a->y, (unsigned)a->A->m);
}
static void ell_f32(void *p)
{
	spmv_args *a = p;
	spmv_ell_f32(a->A->ell_col, a->A->ell_val, a->A->row_nnz, a->x, a->y, (unsigned)a->A->m);
}
static void ell_f64(void *p)
{
	spmv_args *a = p;
	spmv_ell_f64(a->A->ell_col, a->A->ell_val, a->A->row_nnz, a->x, a->y, (unsigned)a->A->m);
}
static void jds_f32(void *p)
{
	spmv_args *a = p;
	spmv_jds_f32(a->A->perm, a->A->iter_ptr, a->A->jds_nnz, a->A->jds_col, a->A->jds_val, a->x,
	             a->y, (unsigned)a->A->m);
}
static void jds_f64(void *p)
{
	spmv_args *a = p;
	spmv_jds_f64(a->A->perm, a->A->iter_ptr, a->A->jds_nnz, a->A->jds_col, a->A->jds_val, a->x,
	             a->y, (unsigned)a->A->m);
}

static void (*const kernels[LMI_SPMV_FORMAT_COUNT][2])(void *) = {
	[LMI_SPMV_COO] = {coo_f32, coo_f64},
	[LMI_SPMV_CSR] = {csr_f32, csr_f64},
	[LMI_SPMV_ELL] = {ell_f32, ell_f64},
	[LMI_SPMV_JDS] = {jds_f32, jds_f64},
};
static const char *const kernel_name[LMI_SPMV_FORMAT_COUNT] = {
	[LMI_SPMV_COO] = "spmv_coo",
	[LMI_SPMV_CSR] = "spmv_csr",
	[LMI_SPMV_ELL] = "spmv_ell",
	[LMI_SPMV_JDS] = "spmv_jds",
};

static lmi_simt_array ints(const char *name, const int32_t *p, int64_t len)
{
	return (lmi_simt_array){.name = name, .space = LM_SPACE_GLOBAL, .dtype = LM_INT32,
	                        .data = (void *)p, .length = len, .readonly = true};
}

static lmi_simt_array vals(const char *name, lm_dtype dt, const void *p, int64_t len, bool ro)
{
	return (lmi_simt_array){.name = name, .space = LM_SPACE_GLOBAL, .dtype = dt,
	                        .data = (void *)p, .length = len, .readonly = ro};
}

lm_status lmi_emu_spmv(lmi_simt *s, const lmi_kcall *k, int format, const lmi_sparse_view *A,
                       const void *x, void *y)
{
	lm_dtype dt = A->dtype;
	int64_t slots = A->width * A->m;
	lmi_simt_array arr[8];
	int n = 0;
	switch (format) {
	case LMI_SPMV_COO:
		arr[n++] = ints("row", A->row, A->nnz);
		arr[n++] = ints("col", A->col, A->nnz);
		arr[n++] = vals("val", dt, A->val, A->nnz, true);
		break;
	case LMI_SPMV_CSR:
		arr[n++] = ints("row_ptr", A->row_ptr, A->m + 1);
		arr[n++] = ints("col", A->col, A->nnz);
		arr[n++] = vals("val", dt, A->val, A->nnz, true);
		break;
	case LMI_SPMV_ELL:
		arr[n] = ints("col", A->ell_col, slots);
		arr[n].rows = A->width, arr[n++].cols = A->m;
		arr[n] = vals("val", dt, A->ell_val, slots, true);
		arr[n].rows = A->width, arr[n++].cols = A->m;
		arr[n++] = ints("row_nnz", A->row_nnz, A->m);
		break;
	default:
		arr[n++] = ints("perm", A->perm, A->m);
		arr[n++] = ints("iter_ptr", A->iter_ptr, A->width + 1);
		arr[n++] = ints("row_nnz", A->jds_nnz, A->m);
		arr[n++] = ints("col", A->jds_col, A->nnz);
		arr[n++] = vals("val", dt, A->jds_val, A->nnz, true);
		break;
	}
	arr[n++] = vals("x", dt, x, A->n, true);
	arr[n++] = vals("y", dt, y, A->m, false);
	memset(y, 0, (size_t)A->m * lm_dtype_size(dt));
	int64_t threads = format == LMI_SPMV_COO ? A->nnz : A->m;
	int64_t grid = (threads + k->block - 1) / k->block;
	spmv_args args = {A, x, y};
	lmi_simt_launch L = {
		.kernel = kernel_name[format],
		.grid = {(unsigned)(grid > 0 ? grid : 1), 1, 1},
		.block = {k->block, 1, 1},
		.entry = kernels[format][dt == LM_FLOAT64],
		.args = &args,
		.arrays = arr,
		.narrays = n,
	};
	return lmi_simt_run(s, &L);
}
