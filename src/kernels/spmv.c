/*
 * spmv.c — lm_kernel_spmv: y = A x for a sparse A (sparse.c) in one of four formats, run on the
 * emulator, natively on the CPU or on a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the format is the variant (opts->format, like algo elsewhere). Counters of every run
 * describe the layout the lecture compares: nonzeros, rows, the longest row, ELL's padding, and
 * the work per thread (products: 1 per thread for COO, a row's nonzeros otherwise), its maximum
 * and mean; the emulated run adds what the trace counted, the measured runs time and GB/s over
 * the bytes an ideal run moves (the format's arrays once, x once, y once).
 * Read next: spmv_emu.c, body/spmv_plan.h, body/spmv.h, cpu_spmv.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

static const char *const formats[LMI_SPMV_FORMAT_COUNT] = {
	[LMI_SPMV_COO] = "coo",
	[LMI_SPMV_CSR] = "csr",
	[LMI_SPMV_ELL] = "ell",
	[LMI_SPMV_JDS] = "jds",
};

static int spmv_cpu(const lmi_kcall *k, void *run)
{
	const lmi_spmv_call *c = &((lmi_spmv_run *)run)->c;
	const atomic_int *stop = &lmi_interrupt_flag;
	int dbl = c->is_double;
	(void)k;
	switch (c->format) {
	case LMI_SPMV_COO:
		return lmi_cpu_spmv_coo(dbl, c->row, c->col, c->val, c->x, c->y, c->m, c->nnz, stop);
	case LMI_SPMV_CSR:
		if (dbl) return lmi_cpu_spmv_csr_f64(c->row_ptr, c->col, c->val, c->x, c->y, c->m, stop);
		return lmi_cpu_spmv_csr_f32(c->row_ptr, c->col, c->val, c->x, c->y, c->m, stop);
	case LMI_SPMV_ELL:
		return lmi_cpu_spmv_ell(dbl, c->col, c->val, c->row_nnz, c->x, c->y, c->m, stop);
	default:
		return lmi_cpu_spmv_jds(dbl, c->perm, c->iter_ptr, c->row_nnz, c->col, c->val, c->x, c->y,
		                        c->m, stop);
	}
}

static int spmv_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                     lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->spmv(&((lmi_spmv_run *)run)->c, t, msg, msg_cap);
}

/* The layout's numbers: nonzeros, rows, row lengths, padding, work per thread. */
static lm_status spmv_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                             const lmi_simt_counters *emu)
{
	const lmi_spmv_call *c = &((lmi_spmv_run *)run)->c;
	bool coo = c->format == LMI_SPMV_COO;
	double threads = coo ? (double)c->nnz : (double)c->m;
	if (!emu && k->backend == LMI_BACKEND_CPU && coo) /* the CPU's COO loop is serial */
		lmi_info_set(info, "threads", 1);
	lmi_info_add(info, "nnz", (double)c->nnz);
	lmi_info_add(info, "rows", (double)c->m);
	lmi_info_add(info, "row_nnz_max", (double)c->width);
	lmi_info_add(info, "row_nnz_mean", (double)c->nnz / (double)c->m);
	lmi_info_add(info, "padding", c->format == LMI_SPMV_ELL ? (double)(c->width * c->m - c->nnz) : 0);
	lmi_info_add(info, "work_per_thread_max", coo ? (c->nnz > 0) : (double)c->width);
	lmi_info_add(info, "work_per_thread_mean", threads > 0 ? (double)c->nnz / threads : 0);
	return LM_OK;
}

/* Each format has its own CPU loop (cpu_spmv.c). */
static unsigned spmv_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	const lmi_spmv_call *c = &((const lmi_spmv_run *)run)->c;
	int nt = lmi_cpu_kernel_threads();
	(void)k;
	switch (c->format) {
	case LMI_SPMV_COO: snprintf(buf, cap, "coo: one sequential pass, 1 thread"); break;
	case LMI_SPMV_CSR:
		snprintf(buf, cap, "csr: rows split between threads by nonzeros, %d threads", nt);
		break;
	case LMI_SPMV_ELL:
		snprintf(buf, cap, "ell: blocks of rows swept slot by slot in memory order, %d threads", nt);
		break;
	default:
		snprintf(buf, cap, "jds: blocks of sorted rows swept iteration by iteration in memory "
		         "order, %d threads", nt);
		break;
	}
	return LMI_CPU_IS_VARIANT;
}

static const lmi_pattern pattern = {
	.name = "spmv",
	.body = "body/spmv.h",
	.emu = lmi_emu_spmv,
	.cpu = spmv_cpu,
	.cuda = spmv_cuda,
	.finish = spmv_finish,
	.cpu_impl = spmv_cpu_impl,
	.variant = "format",
};

/* Bytes of the format's arrays, plus x and y once each. */
static double ideal_bytes(const lmi_spmv_call *c, size_t elem)
{
	double e = (double)elem, nnz = (double)c->nnz, m = (double)c->m;
	double xy = ((double)c->n + m) * e, slots = (double)(c->width * c->m);
	switch (c->format) {
	case LMI_SPMV_COO: return nnz * (8 + e) + xy;
	case LMI_SPMV_CSR: return nnz * (4 + e) + (m + 1) * 4 + xy;
	case LMI_SPMV_ELL: return slots * (4 + e) + m * 4 + xy;
	default: return nnz * (4 + e) + m * 8 + (double)(c->width + 1) * 4 + xy;
	}
}

/* The call of format on A's arrays (the format's own col, val, row_nnz). */
static lmi_spmv_call call_of(const lmi_sparse_view *A, int format)
{
	lmi_spmv_call c = {.format = format, .is_double = A->dtype == LM_FLOAT64, .m = A->m, .n = A->n,
	                   .nnz = A->nnz, .width = A->width, .row = A->row, .col = A->col,
	                   .row_ptr = A->row_ptr, .val = A->val};
	if (format == LMI_SPMV_ELL) c.col = A->ell_col, c.val = A->ell_val, c.row_nnz = A->row_nnz;
	if (format == LMI_SPMV_JDS) {
		c.col = A->jds_col, c.val = A->jds_val, c.row_nnz = A->jds_nnz;
		c.perm = A->perm, c.iter_ptr = A->iter_ptr;
	}
	return c;
}

/* The vector after the matrix. */
static lm_status check_vector(const char *f, const lmi_sparse_view *A, const lm_tensor *x)
{
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: the vector is NULL", f);
	if (lm_tensor_device(x) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the vector is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(x)));
	if (lm_tensor_dtype(x) != A->dtype)
		return lmi_fail(LM_ERR_DTYPE, "%s: the matrix is %s and the vector %s; give the vector the "
		                "matrix's dtype", f, lm_dtype_name(A->dtype), lm_dtype_name(lm_tensor_dtype(x)));
	if (lm_tensor_ndim(x) != 1 || lm_tensor_size(x, 0) != A->n)
		return lmi_fail(LM_ERR_SHAPE, "%s: the vector %s does not match the matrix's %lld columns "
		                "(a %lld x %lld matrix needs a 1-D vector of %lld)", f, lmi_shape_s(x),
		                (long long)A->n, (long long)A->m, (long long)A->n, (long long)A->n);
	return LM_OK;
}

lm_status lm_kernel_spmv(const lm_sparse *a, const lm_tensor *x, const lm_kernel_opts *opts,
                         lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.spmv";
	lm_status st = lmi_kcall_start(f, out, info);
	if (st) return st;
	if (!a) return lmi_fail(LM_ERR_ARG, "%s: the sparse matrix is NULL", f);
	lmi_sparse_view A;
	lmi_sparse_raw(a, &A);
	if ((st = check_vector(f, &A, x)) != LM_OK) return st;
	lm_kernel_opts o = lmi_opts_or_default(opts);
	int format = LMI_SPMV_CSR;
	if (o.format &&
	    (st = lmi_name_lookup(f, "format", o.format, formats, LMI_SPMV_FORMAT_COUNT, &format)))
		return st;
	if (o.algo)
		return lmi_fail(LM_ERR_ARG, "%s: give format, not algo (the format is the variant)", f);
	o.algo = formats[format];
	lmi_kcall k;
	if ((st = lmi_kcall_begin(f, &o, formats, LMI_SPMV_FORMAT_COUNT, format, LMI_RUNS_ALL,
	                          A.m > A.nnz ? A.m : A.nnz, A.dtype, &k)) != LM_OK)
		return st;
	k.any_block = true;
	if ((st = lmi_kcall_shape(&k, &o, false, 1, 1)) != LM_OK) return st;

	lmi_spmv_run r = {.c = call_of(&A, format)};
	lmi_spmv_call *c = &r.c;
	c->block = k.block;
	c->x = lmi_kcall_input(&k, x);
	c->y = lmi_kcall_output(&k, lm_zeros(1, &A.m, A.dtype));
	lmk_spmv_args unused;
	lmk_spmv_array list[LMK_SPMV_MAX_ARRAYS];
	int n = lmk_spmv_arrays(c, &unused, list);
	size_t elem = lm_dtype_size(A.dtype);
	for (int i = 0; i < n - 2; i++) /* the matrix's (x and y are the call's own) */
		lmi_kcall_operand(&k, list[i].host, (size_t)list[i].length * (list[i].index ? 4 : elem));
	snprintf(k.name, sizeof k.name, "spmv %s %lldx%lld nnz %lld %s", k.algo_name, (long long)A.m,
	         (long long)A.n, (long long)A.nnz, lm_dtype_name(A.dtype));
	k.bytes = ideal_bytes(c, elem);
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
