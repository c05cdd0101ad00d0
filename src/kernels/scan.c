/*
 * scan.c — lm_kernel_scan: prefix sums, run on the emulator, natively on the CPU or on a GPU.
 *
 * Design: options are resolved and checked first (kernels.c); then the input is made contiguous,
 * the output allocated, and one of the three runs fills it and the info: the emulator (scan_emu.c)
 * with a trace and the counters taken from it, the CPU (cpu_kernels.c) timed as the median of
 * several runs, or the CUDA module (cuda/scan.cu) timed with CUDA events.
 * Read next: scan_emu.c, body/scan.h, cpu_kernels.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"
#include "kernels/trace.h"

static const char *const algos[LMI_SCAN_ALGO_COUNT] = {
	[LMI_SCAN_KOGGE_STONE] = "kogge-stone",
	[LMI_SCAN_BRENT_KUNG] = "brent-kung",
	[LMI_SCAN_HIERARCHICAL] = "hierarchical",
};

typedef struct cpu_run {
	const lmi_kcall *k;
	const void *x;
	void *y;
	void *scratch; /* lmi_cpu_scratch_bytes */
} cpu_run;

static int cpu_once(void *p)
{
	cpu_run *r = p;
	int excl = !r->k->inclusive;
	if (r->k->dtype == LM_FLOAT64)
		return lmi_cpu_scan_f64(r->x, r->y, r->k->n, excl, &lmi_interrupt_flag, r->scratch);
	return lmi_cpu_scan_f32(r->x, r->y, r->k->n, excl, &lmi_interrupt_flag, r->scratch);
}

static lm_status run_emu(const lmi_kcall *k, const void *x, void *y, lm_kernel_info *info)
{
	char name[128];
	snprintf(name, sizeof name, "scan %s %s %s", k->algo_name, k->inclusive ? "inclusive" : "exclusive",
	         lm_dtype_name(k->dtype));
	lmi_simt *s;
	lm_status st = lmi_emu_start(k, name, info, 0, &s);
	if (st) return st;
	st = lmi_emu_scan(s, k, x, y);
	if (st == LM_OK) lmi_info_add_emu(info, lmi_simt_counters_get(s), k);
	lmi_simt_free(s);
	return st;
}

static lm_status run_cpu(const lmi_kcall *k, const void *x, void *y, lm_kernel_info *info)
{
	size_t sb = lmi_cpu_scratch_bytes(k->n, lm_dtype_size(k->dtype));
	cpu_run r = {k, x, y, sb ? lm_alloc(sb) : NULL};
	if (sb && !r.scratch) return lmi_fail(LM_ERR_NOMEM, "%s: out of memory", k->fname);
	double ms;
	lm_status st = lmi_time_median(k->fname, k->repeats, cpu_once, &r, &ms);
	if (r.scratch) lm_free(r.scratch, sb);
	if (st) return st;
	/* one read and one write of every element */
	lmi_info_add_measured(info, ms, 2.0 * (double)k->n * (double)lm_dtype_size(k->dtype));
	lmi_info_add(info, "threads", lmi_cpu_kernel_threads());
	return LM_OK;
}

static lm_status run_cuda(const lmi_kcall *k, const void *x, void *y, lm_kernel_info *info)
{
	const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
	if (!api) return lm_last_status();
	lmi_cuda_call c = {
		.is_double = k->dtype == LM_FLOAT64,
		.algo = k->algo,
		.x = x,
		.y = y,
		.n = k->n,
		.block = k->block,
		.coarsen = k->coarsen,
		.inclusive = k->inclusive,
		.repeats = k->repeats,
	};
	char msg[512] = "";
	int err = api->scan(&c, msg, sizeof msg);
	if (err) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
	lmi_info_add_measured(info, c.time_ms, 2.0 * (double)k->n * (double)lm_dtype_size(k->dtype));
	lmi_info_add(info, "launches", c.launches);
	lmi_info_add(info, "block", k->block);
	return LM_OK;
}

lm_status lm_kernel_scan(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                         lm_kernel_info **info)
{
	const char *f = "kernels.scan";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	lmi_kcall k;
	lm_status st = lmi_kcall_resolve(f, x, opts, algos, LMI_SCAN_ALGO_COUNT, LMI_SCAN_KOGGE_STONE, &k);
	if (st) return st;
	bool hier = k.algo == LMI_SCAN_HIERARCHICAL;
	unsigned per_thread = k.algo == LMI_SCAN_BRENT_KUNG ? 2 : 1;
	if ((st = lmi_kcall_shape(&k, opts, hier, hier ? 4 : 1, per_thread)) != LM_OK) return st;
	/* the section lives in shared memory */
	if ((st = lmi_kcall_check_shared(&k, (int64_t)k.block * per_thread * k.coarsen)) != LM_OK)
		return st;

	lm_tensor *xc = lm_contiguous(x);
	if (!xc) return lm_last_status();
	lm_tensor *y = lm_empty(lm_tensor_ndim(x), lm_tensor_shape(x), k.dtype);
	lm_kernel_info *inf = y ? lmi_info_new(&k, "scan") : NULL;
	if (!inf) {
		st = lm_last_status();
		goto out_fail;
	}
	switch (k.backend) {
	case LMI_BACKEND_EMU: st = run_emu(&k, lm_tensor_data(xc), lm_tensor_data(y), inf); break;
	case LMI_BACKEND_CPU: st = run_cpu(&k, lm_tensor_data(xc), lm_tensor_data(y), inf); break;
	case LMI_BACKEND_CUDA: st = run_cuda(&k, lm_tensor_data(xc), lm_tensor_data(y), inf); break;
	}
	if (st) goto out_fail;
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
