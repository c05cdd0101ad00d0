/*
 * access.c — lm_kernel_coalescing and lm_kernel_transpose: the memory-access demos of the
 * coalescing and shared-memory lectures (body/access.h), emulated (the model's sectors, lines and
 * bank conflicts in the counters) or on a GPU (timed). There is no cpu run: the lesson is how a
 * warp's lanes meet memory.
 *
 * Design: both calls take a 2-D float32/float64 matrix and share one plan (body/access_plan.h);
 * the variant is the kernel. Options they do not use (coarsen, tile, and the transpose's block,
 * fixed at 32 x 8 threads) are errors naming the option and the run.
 * Read next: body/access.h, body/access_plan.h, access_emu.c.
 */
#include <stdio.h>

#include "kernels/patterns.h"

static int access_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                       lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->access(&((lmi_access_run *)run)->c, t, msg, msg_cap);
}

/* The shape of the matrix, for the scenes and the lesson's arithmetic. */
static lm_status access_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                               const lmi_simt_counters *emu)
{
	const lmi_access_call *c = &((lmi_access_run *)run)->c;
	(void)k, (void)emu;
	lmi_info_add(info, "rows", (double)c->rows);
	lmi_info_add(info, "cols", (double)c->cols);
	return LM_OK;
}

static const lmi_pattern coalescing = {
	.name = "coalescing",
	.body = "body/access.h",
	.emu = lmi_emu_access,
	.cuda = access_cuda,
	.finish = access_finish,
};

static const lmi_pattern transpose = {
	.name = "transpose",
	.body = "body/access.h",
	.emu = lmi_emu_access,
	.cuda = access_cuda,
	.finish = access_finish,
};

/* The matrix and the options both calls share; fills r's call but for the kind. */
static lm_status begin(const char *f, const lm_tensor *x, const lm_kernel_opts *opts,
                       const char *const *algos, int nalgos, int def, lmi_kcall *k,
                       lmi_access_run *r)
{
	lm_kernel_opts o = lmi_opts_or_default(opts);
	lm_status st;
	if (x && lm_tensor_ndim(x) != 2)
		return lmi_fail(LM_ERR_SHAPE, "%s: x %s must be a matrix (2-D)", f, lmi_shape_s(x));
	if ((st = lmi_kcall_resolve_runs(f, x, &o, algos, nalgos, def, LMI_RUNS_NO_CPU, k)) != LM_OK)
		return st;
	if ((st = lmi_kcall_unused(k, "tile", o.tile != 0, "it has no tiling option")) != LM_OK)
		return st;
	r->c.is_double = k->dtype == LM_FLOAT64;
	r->c.rows = lm_tensor_size(x, 0);
	r->c.cols = lm_tensor_size(x, 1);
	return LM_OK;
}

/* Takes the input and the output of n elements (shape), names the trace, runs. */
static lm_status run(const lmi_pattern *pt, lmi_kcall *k, const lm_tensor *x, lmi_access_run *r,
                     int ndim, const int64_t *shape, lm_tensor **out, lm_kernel_info **info)
{
	lmi_access_call *c = &r->c;
	c->x = lmi_kcall_input(k, x);
	c->y = lmi_kcall_output(k, lm_empty(ndim, shape, k->dtype));
	snprintf(k->name, sizeof k->name, "%s %s %lldx%lld %s", pt->name, k->algo_name,
	         (long long)c->rows, (long long)c->cols, lm_dtype_name(k->dtype));
	size_t elem = lm_dtype_size(k->dtype);
	k->bytes = (double)(c->rows * c->cols + lmk_access_out_len(c)) * (double)elem;
	return lmi_pattern_run(pt, k, r, out, info);
}

lm_status lm_kernel_coalescing(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                               lm_kernel_info **info)
{
	const char *f = "kernels.coalescing";
	static const char *const algos[] = {"coalesced", "strided"};
	lmi_kcall k;
	lmi_access_run r = {.c = {0}};
	lm_status st = lmi_kcall_start(f, out, info);
	if (st || (st = begin(f, x, opts, algos, 2, 0, &k, &r)) != LM_OK) return st;
	r.c.kind = k.algo == 0 ? LMI_ACCESS_SUM_COLUMNS : LMI_ACCESS_SUM_ROWS;
	int64_t sums = r.c.kind == LMI_ACCESS_SUM_COLUMNS ? r.c.cols : r.c.rows;
	k.n = sums; /* the threads: one per sum */
	k.any_block = true;
	if ((st = lmi_kcall_shape(&k, opts, false, 1, 1)) != LM_OK) return st;
	if (r.c.rows * r.c.cols > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: x %s has more elements than 32-bit indices allow", f,
		                lmi_shape_s(x));
	r.c.block = k.block;
	return run(&coalescing, &k, x, &r, 1, &sums, out, info);
}

lm_status lm_kernel_transpose(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                              lm_kernel_info **info)
{
	const char *f = "kernels.transpose";
	static const char *const algos[] = {"naive", "shared", "padded"};
	lmi_kcall k;
	lmi_access_run r = {.c = {0}};
	lm_status st = lmi_kcall_start(f, out, info);
	if (st || (st = begin(f, x, opts, algos, 3, 2, &k, &r)) != LM_OK) return st;
	if ((st = lmi_kcall_unused(&k, "block", opts && opts->block,
	                           "its blocks are 32 x 8 threads, a 32 x 32 tile each")) != LM_OK ||
	    (st = lmi_kcall_unused(&k, "coarsen", opts && opts->coarsen, "it does not coarsen")) != LM_OK)
		return st;
	r.c.kind = LMI_ACCESS_TRANSPOSE_NAIVE + k.algo;
	if (r.c.rows * r.c.cols > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: x %s has more elements than 32-bit indices allow", f,
		                lmi_shape_s(x));
	k.block = LMK_ACCESS_TILE * LMK_ACCESS_ROWS;
	k.coarsen = 1;
	int64_t shape[2] = {r.c.cols, r.c.rows};
	return run(&transpose, &k, x, &r, 2, shape, out, info);
}
