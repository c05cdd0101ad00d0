/*
 * spmv.c — lm_kernel_spmv: y = A x for a sparse A (sparse.c) in one of four formats, run on the
 * emulator, natively on the CPU or on a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the format is the variant (opts->format, like algo elsewhere). Counters of every run
 * describe the layout the lecture compares: nonzeros, rows, the longest row, ELL's padding, and
 * the work per thread (products: 1 per thread for COO, a row's nonzeros otherwise), its maximum
 * and mean; the emulated run adds what the trace counted, the measured runs time and GB/s over
 * the bytes an ideal run moves (the format's arrays once, x once, y once).
 * Read next: spmv_emu.c, body/spmv.h, cpu_spmv.c.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

static const char *const formats[LMI_SPMV_FORMAT_COUNT] = {
	[LMI_SPMV_COO] = "coo",
	[LMI_SPMV_CSR] = "csr",
	[LMI_SPMV_ELL] = "ell",
	[LMI_SPMV_JDS] = "jds",
};

typedef struct cpu_run {
	const lmi_kcall *k;
	const lmi_sparse_view *A;
	const void *x;
	void *y;
} cpu_run;

static int cpu_once(void *arg)
{
	cpu_run *r = arg;
	const lmi_sparse_view *A = r->A;
	const atomic_int *stop = &lmi_interrupt_flag;
	int dbl = A->dtype == LM_FLOAT64;
	switch (r->k->algo) {
	case LMI_SPMV_COO:
		return lmi_cpu_spmv_coo(dbl, A->row, A->col, A->val, r->x, r->y, A->m, A->nnz, stop);
	case LMI_SPMV_CSR:
		if (dbl) return lmi_cpu_spmv_csr_f64(A->row_ptr, A->col, A->val, r->x, r->y, A->m, stop);
		return lmi_cpu_spmv_csr_f32(A->row_ptr, A->col, A->val, r->x, r->y, A->m, stop);
	case LMI_SPMV_ELL:
		return lmi_cpu_spmv_ell(dbl, A->ell_col, A->ell_val, A->row_nnz, r->x, r->y, A->m, stop);
	default:
		return lmi_cpu_spmv_jds(dbl, A->perm, A->iter_ptr, A->jds_nnz, A->jds_col, A->jds_val, r->x,
		                        r->y, A->m, stop);
	}
}

/* Bytes of the format's arrays, plus x and y once each. */
static double ideal_bytes(int format, const lmi_sparse_view *A)
{
	double e = (double)lm_dtype_size(A->dtype), nnz = (double)A->nnz, m = (double)A->m;
	double xy = ((double)A->n + m) * e, slots = (double)(A->width * A->m);
	switch (format) {
	case LMI_SPMV_COO: return nnz * (8 + e) + xy;
	case LMI_SPMV_CSR: return nnz * (4 + e) + (m + 1) * 4 + xy;
	case LMI_SPMV_ELL: return slots * (4 + e) + m * 4 + xy;
	default: return nnz * (4 + e) + m * 8 + (double)(A->width + 1) * 4 + xy;
	}
}

static lm_status run(const lmi_kcall *k, const lmi_sparse_view *A, const void *x, void *y,
                     lm_kernel_info *info)
{
	lm_status st = LM_OK;
	switch (k->backend) {
	case LMI_BACKEND_EMU: {
		char name[128];
		snprintf(name, sizeof name, "spmv %s %lldx%lld nnz %lld %s", k->algo_name, (long long)A->m,
		         (long long)A->n, (long long)A->nnz, lm_dtype_name(A->dtype));
		lmi_simt *s;
		if ((st = lmi_emu_start(k, name, info, 0, &s)) != LM_OK) return st;
		st = lmi_emu_spmv(s, k, k->algo, A, x, y);
		if (st == LM_OK) lmi_info_add_emu(info, lmi_simt_counters_get(s), k);
		lmi_simt_free(s);
		break;
	}
	case LMI_BACKEND_CPU: {
		cpu_run r = {k, A, x, y};
		double ms;
		if ((st = lmi_time_median(k->fname, k->repeats, cpu_once, NULL, &r, &ms)) != LM_OK) return st;
		lmi_info_add_measured(info, ms, ideal_bytes(k->algo, A));
		lmi_info_add(info, "threads", k->algo == LMI_SPMV_COO ? 1 : lmi_cpu_kernel_threads());
		break;
	}
	case LMI_BACKEND_CUDA: {
		const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
		if (!api) return lm_last_status();
		lmi_cuda_spmv_call c = {
			.format = k->algo, .is_double = A->dtype == LM_FLOAT64, .m = A->m, .n = A->n,
			.nnz = A->nnz, .width = A->width, .row = A->row, .row_ptr = A->row_ptr,
			.repeats = k->repeats, .x = x, .y = y, .block = k->block,
		};
		switch (k->algo) {
		case LMI_SPMV_ELL: c.col = A->ell_col, c.val = A->ell_val, c.row_nnz = A->row_nnz; break;
		case LMI_SPMV_JDS:
			c.col = A->jds_col, c.val = A->jds_val, c.row_nnz = A->jds_nnz;
			c.perm = A->perm, c.iter_ptr = A->iter_ptr;
			break;
		default: c.col = A->col, c.val = A->val; break;
		}
		char msg[512] = "";
		if (api->spmv(&c, msg, sizeof msg)) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
		lmi_info_add_measured(info, c.time_ms, ideal_bytes(k->algo, A));
		lmi_info_add(info, "block", k->block);
		break;
	}
	}
	return st;
}

/* The layout's numbers: nonzeros, rows, row lengths, padding, work per thread. */
static void add_layout(lm_kernel_info *info, int format, const lmi_sparse_view *A)
{
	double threads = format == LMI_SPMV_COO ? (double)A->nnz : (double)A->m;
	lmi_info_add(info, "nnz", (double)A->nnz);
	lmi_info_add(info, "rows", (double)A->m);
	lmi_info_add(info, "row_nnz_max", (double)A->width);
	lmi_info_add(info, "row_nnz_mean", (double)A->nnz / (double)A->m);
	lmi_info_add(info, "padding", format == LMI_SPMV_ELL ? (double)(A->width * A->m - A->nnz) : 0);
	lmi_info_add(info, "work_per_thread_max", format == LMI_SPMV_COO ? (A->nnz > 0) : (double)A->width);
	lmi_info_add(info, "work_per_thread_mean", threads > 0 ? (double)A->nnz / threads : 0);
}

lm_status lm_kernel_spmv(const lm_sparse *a, const lm_tensor *x, const lm_kernel_opts *opts,
                         lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.spmv";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	if (!a) return lmi_fail(LM_ERR_ARG, "%s: the sparse matrix is NULL", f);
	lmi_sparse_view A;
	lmi_sparse_raw(a, &A);
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: the vector is NULL", f);
	if (lm_tensor_device(x) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the vector is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(x)));
	if (lm_tensor_dtype(x) != A.dtype)
		return lmi_fail(LM_ERR_DTYPE, "%s: the matrix is %s and the vector %s; give the vector the "
		                "matrix's dtype", f, lm_dtype_name(A.dtype), lm_dtype_name(lm_tensor_dtype(x)));
	if (lm_tensor_ndim(x) != 1 || lm_tensor_size(x, 0) != A.n)
		return lmi_fail(LM_ERR_SHAPE, "%s: the vector %s does not match the matrix's %lld columns "
		                "(a %lld x %lld matrix needs a 1-D vector of %lld)", f, lmi_shape_s(x),
		                (long long)A.n, (long long)A.m, (long long)A.n, (long long)A.n);
	lm_kernel_opts o;
	if (opts) o = *opts;
	else lm_kernel_opts_init(&o);
	int format = LMI_SPMV_CSR;
	if (o.format) {
		format = -1;
		for (int k = 0; k < LMI_SPMV_FORMAT_COUNT; k++)
			if (strcmp(o.format, formats[k]) == 0) format = k;
		if (format < 0)
			return lmi_fail(LM_ERR_ARG, "%s: unknown format '%s' (expected 'coo', 'csr', 'ell' or "
			                "'jds')", f, o.format);
	}
	if (o.algo)
		return lmi_fail(LM_ERR_ARG, "%s: give format, not algo (the format is the variant)", f);
	o.algo = formats[format];
	lmi_kcall k;
	lm_status st = lmi_kcall_begin(f, &o, formats, LMI_SPMV_FORMAT_COUNT, format, LMI_RUNS_ALL,
	                               A.m > A.nnz ? A.m : A.nnz, A.dtype, &k);
	if (st) return st;
	k.any_block = true;
	if ((st = lmi_kcall_shape(&k, &o, false, 1, 1)) != LM_OK) return st;
	lm_tensor *xc = lm_contiguous(x);
	lm_tensor *y = xc ? lm_zeros(1, &A.m, A.dtype) : NULL;
	lm_kernel_info *inf = y ? lmi_info_new(&k, "spmv") : NULL;
	if (!inf) {
		st = lm_last_status();
		goto out_fail;
	}
	if ((st = run(&k, &A, lm_tensor_data(xc), lm_tensor_data(y), inf)) != LM_OK) goto out_fail;
	add_layout(inf, format, &A);
	lm_tensor_release(xc);
	*out = y;
	*info = inf;
	return LM_OK;
out_fail:
	lm_kernel_info_free(inf);
	lm_tensor_release(y);
	lm_tensor_release(xc);
	return st;
}
