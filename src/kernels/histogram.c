/*
 * histogram.c — lm_kernel_histogram / lm_kernel_histogram_bytes: counts per bin, run on the
 * emulator, natively on the CPU or on a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the input is checked before anything runs (bins 1..4096, every bin index in range);
 * the emulated and CUDA runs count into 32-bit counters (at most 2^31 - 1 elements) that are
 * widened into the int64 result, the CPU run into 64-bit totals.
 * Read next: histogram_emu.c, body/histogram_plan.h, body/histogram.h, cpu_histogram.c.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

#define MAX_BINS 4096

static const char *const algos[LMI_HIST_ALGO_COUNT] = {
	[LMI_HIST_GLOBAL_ATOMIC] = "global-atomic",
	[LMI_HIST_PRIVATIZED] = "privatized",
	[LMI_HIST_AGGREGATED] = "aggregated",
};

static int hist_cpu(const lmi_kcall *k, void *run)
{
	lmi_hist_run *r = run;
	const lmi_hist_call *c = &r->c;
	(void)k;
	const atomic_int *stop = &lmi_interrupt_flag;
	memset(r->counts, 0, c->bins * sizeof *r->counts);
	if (c->algo == LMI_HIST_PRIVATIZED)
		return c->is_u8 ? lmi_cpu_histogram_u8(c->data, c->n, r->lut, r->counts, stop)
		                : lmi_cpu_histogram_i32(c->data, c->n, c->bins, r->counts, stop);
	int agg = c->algo == LMI_HIST_AGGREGATED; /* else global-atomic */
	return c->is_u8 ? lmi_cpu_histogram_atomic_u8(c->data, c->n, r->lut, r->counts, agg, stop)
	                : lmi_cpu_histogram_atomic_i32(c->data, c->n, r->counts, agg, stop);
}

static int hist_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                     lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->histogram(&((lmi_hist_run *)run)->c, t, msg, msg_cap);
}

/* The 32-bit counts of the emu and cuda runs into the int64 result; bins and (emu, cuda) coarsen. */
static lm_status hist_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                             const lmi_simt_counters *emu)
{
	lmi_hist_run *r = run;
	(void)emu;
	if (k->backend != LMI_BACKEND_CPU)
		for (unsigned b = 0; b < r->c.bins; b++) r->counts[b] = r->c.histo[b];
	lmi_info_add(info, "bins", r->c.bins);
	if (k->backend != LMI_BACKEND_CPU) lmi_info_add(info, "coarsen", k->coarsen); /* GPU threads' */
	return LM_OK;
}

/* The three CPU histograms of cpu_histogram.c: each is its variant. */
static unsigned hist_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	const lmi_hist_call *c = &((const lmi_hist_run *)run)->c;
	int nt = lmi_cpu_kernel_threads();
	(void)k;
	if (c->algo == LMI_HIST_PRIVATIZED)
		snprintf(buf, cap, "privatized, %d sub-histograms per thread, %d threads",
		         c->is_u8 ? 8 : lmi_cpu_histogram_copies(c->bins), nt);
	else if (c->algo == LMI_HIST_GLOBAL_ATOMIC)
		snprintf(buf, cap, "global-atomic, an __atomic add on the shared histogram per element, %d "
		         "threads", nt);
	else
		snprintf(buf, cap, "aggregated, one __atomic add on the shared histogram per run of a bin, "
		         "%d threads", nt);
	return LMI_CPU_IS_VARIANT;
}

static const lmi_pattern pattern = {
	.name = "histogram",
	.body = "body/histogram.h",
	.emu = lmi_emu_histogram,
	.cpu = hist_cpu,
	.cuda = hist_cuda,
	.finish = hist_finish,
	.cpu_impl = hist_cpu_impl,
};

/* Both calls once their input is in r: block, coarsening, the result and the counters. */
static lm_status histogram(lmi_kcall *k, const lm_kernel_opts *opts, lmi_hist_run *r,
                           lm_tensor **out, lm_kernel_info **info)
{
	lmi_hist_call *c = &r->c;
	bool aggregated = k->algo == LMI_HIST_AGGREGATED;
	k->any_block = true;
	lm_status st = lmi_kcall_shape(k, opts, true, aggregated ? 8 : 1, 1);
	if (st) return lmi_kcall_fail(k, st);
	c->algo = k->algo;
	c->n = k->n;
	c->block = k->block;
	c->coarsen = k->coarsen;
	int64_t shape[1] = {c->bins};
	r->counts = lmi_kcall_output(k, lm_zeros(1, shape, LM_INT64));
	if (k->backend != LMI_BACKEND_CPU) c->histo = lmi_kcall_alloc(k, c->bins * sizeof *c->histo);
	for (unsigned b = 0; b < 256; b++) /* direct indices were checked to lie below bins */
		r->lut[b] = (uint16_t)(c->scaled ? b * c->bins / 256 : b < c->bins ? b : 0);
	snprintf(k->name, sizeof k->name, "histogram %s %u bins %s", k->algo_name, c->bins,
	         c->is_u8 ? (c->scaled ? "bytes" : "uint8") : "int32");
	k->bytes = (double)k->n * (c->is_u8 ? 1.0 : 4.0); /* one read */
	return lmi_pattern_run(&pattern, k, r, out, info);
}

static lm_status check_bins(const char *f, int64_t bins)
{
	if (bins < 1 || bins > MAX_BINS)
		return lmi_fail(LM_ERR_ARG, "%s: bins %lld must be in 1..%d", f, (long long)bins, MAX_BINS);
	return LM_OK;
}

lm_status lm_kernel_histogram(const lm_tensor *x, int64_t bins, const lm_kernel_opts *opts,
                              lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.histogram";
	lm_status st = lmi_kcall_start(f, out, info);
	if (st) return st;
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: the input tensor is NULL", f);
	if (lm_tensor_device(x) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the input is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(x)));
	lm_dtype dt = lm_tensor_dtype(x);
	if (dt != LM_UINT8 && dt != LM_INT32)
		return lmi_fail(LM_ERR_DTYPE, "%s: the input has dtype %s; give uint8 or int32 bin indices "
		                "(or a string of bytes)", f, lm_dtype_name(dt));
	if (lm_tensor_numel(x) == 0)
		return lmi_fail(LM_ERR_ARG, "%s: the input is empty (shape %s); give at least one element",
		                f, lmi_shape_s(x));
	if ((st = check_bins(f, bins)) != LM_OK) return st;
	lmi_kcall k;
	if ((st = lmi_kcall_begin(f, opts, algos, LMI_HIST_ALGO_COUNT, LMI_HIST_PRIVATIZED,
	                          LMI_RUNS_ALL, lm_tensor_numel(x), dt, &k)) != LM_OK)
		return st;
	lmi_hist_run r = {.c = {.is_u8 = dt == LM_UINT8, .bins = (unsigned)bins}};
	int64_t value, at;
	if ((r.c.data = lmi_kcall_input(&k, x)) &&
	    (at = lmi_first_out_of_range_raw(dt, r.c.data, k.n, 0, bins, &value)) >= 0)
		return lmi_kcall_fail(&k, lmi_fail(LM_ERR_INDEX, "%s: element %lld (0-based) is %lld, not a "
		                                   "bin index in 0..%lld (bins %lld)", f, (long long)at,
		                                   (long long)value, (long long)bins - 1, (long long)bins));
	return histogram(&k, opts, &r, out, info);
}

lm_status lm_kernel_histogram_bytes(const void *bytes, int64_t n, int64_t bins,
                                    const lm_kernel_opts *opts, lm_tensor **out,
                                    lm_kernel_info **info)
{
	const char *f = "kernels.histogram";
	lm_status st = lmi_kcall_start(f, out, info);
	if (st) return st;
	if (!bytes && n > 0) return lmi_fail(LM_ERR_ARG, "%s: the bytes are NULL", f);
	if (n < 1) return lmi_fail(LM_ERR_ARG, "%s: the input is empty (0 bytes); give at least one", f);
	if ((st = check_bins(f, bins)) != LM_OK) return st;
	lmi_kcall k;
	if ((st = lmi_kcall_begin(f, opts, algos, LMI_HIST_ALGO_COUNT, LMI_HIST_PRIVATIZED,
	                          LMI_RUNS_ALL, n, LM_UINT8, &k)) != LM_OK)
		return st;
	lmi_hist_run r = {.c = {.is_u8 = 1, .scaled = 1, .data = bytes, .bins = (unsigned)bins}};
	lmi_kcall_operand(&k, bytes, (size_t)n);
	return histogram(&k, opts, &r, out, info);
}
