/*
 * reduce.c — lm_kernel_reduce: the sum of all elements, run on the emulator, natively on the CPU
 * or on a GPU (see scan.c for the shape of a pattern call).
 * Read next: reduce_emu.c, body/reduce.h, cpu_kernels.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"
#include "kernels/trace.h"

static const char *const algos[LMI_REDUCE_ALGO_COUNT] = {
	[LMI_REDUCE_NAIVE] = "naive",
	[LMI_REDUCE_CONVERGENT] = "convergent",
	[LMI_REDUCE_SHARED] = "shared",
	[LMI_REDUCE_COARSENED] = "coarsened",
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
	if (r->k->dtype == LM_FLOAT64)
		return lmi_cpu_sum_f64(r->x, r->k->n, r->y, &lmi_interrupt_flag, r->scratch);
	return lmi_cpu_sum_f32(r->x, r->k->n, r->y, &lmi_interrupt_flag, r->scratch);
}

static lm_status run_emu(const lmi_kcall *k, const void *x, void *y, lm_kernel_info *info)
{
	char name[128];
	snprintf(name, sizeof name, "reduce %s %s", k->algo_name, lm_dtype_name(k->dtype));
	lmi_simt *s;
	lm_status st = lmi_emu_start(k, name, info, 0, &s);
	if (st) return st;
	st = lmi_emu_reduce(s, k, x, y);
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
	lm_status st = lmi_time_median(k->fname, k->repeats, cpu_once, NULL, &r, &ms);
	if (r.scratch) lm_free(r.scratch, sb);
	if (st) return st;
	lmi_info_add_measured(info, ms, (double)k->n * (double)lm_dtype_size(k->dtype)); /* one read */
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
		.repeats = k->repeats,
	};
	char msg[512] = "";
	int err = api->reduce(&c, msg, sizeof msg);
	if (err) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
	lmi_info_add_measured(info, c.time_ms, (double)k->n * (double)lm_dtype_size(k->dtype));
	lmi_info_add(info, "launches", c.launches);
	lmi_info_add(info, "block", k->block);
	return LM_OK;
}

lm_status lm_kernel_reduce(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                           lm_kernel_info **info)
{
	const char *f = "kernels.reduce";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	lmi_kcall k;
	lm_status st = lmi_kcall_resolve(f, x, opts, algos, LMI_REDUCE_ALGO_COUNT, LMI_REDUCE_SHARED, &k);
	if (st) return st;
	bool coarsened = k.algo == LMI_REDUCE_COARSENED;
	if ((st = lmi_kcall_shape(&k, opts, coarsened, coarsened ? 4 : 1, 2)) != LM_OK) return st;
	bool uses_shared = k.algo == LMI_REDUCE_SHARED || coarsened;
	if (uses_shared && (st = lmi_kcall_check_shared(&k, k.block)) != LM_OK) return st;

	lm_tensor *xc = lm_contiguous(x);
	if (!xc) return lm_last_status();
	lm_tensor *y = lm_empty(0, NULL, k.dtype);
	lm_kernel_info *inf = y ? lmi_info_new(&k, "reduce") : NULL;
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
