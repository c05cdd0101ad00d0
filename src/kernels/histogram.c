/*
 * histogram.c — lm_kernel_histogram / lm_kernel_histogram_bytes: counts per bin, run on the
 * emulator, natively on the CPU or on a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the input is checked before anything runs (bins 1..4096, every bin index in range);
 * the emulated and CUDA runs count into 32-bit counters (at most 2^31 - 1 elements) that are
 * widened into the int64 result, the CPU run into 64-bit totals.
 * Read next: histogram_emu.c, body/histogram.h, cpu_histogram.c.
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

/* What is being counted. */
typedef struct hist_input {
	const void *data;
	bool is_u8;  /* bytes, else int32 */
	bool scaled; /* bytes of a text: bin b * bins / 256 */
	unsigned bins;
} hist_input;

typedef struct cpu_run {
	const lmi_kcall *k;
	const hist_input *in;
	int64_t *counts;
	uint16_t lut[256];
} cpu_run;

static int cpu_once(void *p)
{
	cpu_run *r = p;
	memset(r->counts, 0, r->in->bins * sizeof *r->counts);
	if (r->in->is_u8)
		return lmi_cpu_histogram_u8(r->in->data, r->k->n, r->lut, r->counts, &lmi_interrupt_flag);
	return lmi_cpu_histogram_i32(r->in->data, r->k->n, r->in->bins, r->counts, &lmi_interrupt_flag);
}

static lm_status run_cpu(const lmi_kcall *k, const hist_input *in, int64_t *counts,
                         lm_kernel_info *info)
{
	cpu_run r = {k, in, counts, {0}};
	for (unsigned b = 0; b < 256; b++) /* direct indices were checked to lie below bins */
		r.lut[b] = (uint16_t)(in->scaled ? b * in->bins / 256 : b < in->bins ? b : 0);
	double ms;
	lm_status st = lmi_time_median(k->fname, k->repeats, cpu_once, NULL, &r, &ms);
	if (st) return st;
	lmi_info_add_measured(info, ms, (double)k->n * (in->is_u8 ? 1.0 : 4.0)); /* one read */
	lmi_info_add(info, "threads", lmi_cpu_kernel_threads());
	return LM_OK;
}

static lm_status run_emu(const lmi_kcall *k, const hist_input *in, uint32_t *histo,
                         lm_kernel_info *info)
{
	char name[128];
	snprintf(name, sizeof name, "histogram %s %u bins %s", k->algo_name, in->bins,
	         in->is_u8 ? (in->scaled ? "bytes" : "uint8") : "int32");
	lmi_simt *s;
	lm_status st = lmi_emu_start(k, name, info, 0, &s);
	if (st) return st;
	st = lmi_emu_histogram(s, k, in->data, in->is_u8, in->scaled, in->bins, histo);
	if (st == LM_OK) lmi_info_add_emu(info, lmi_simt_counters_get(s), k);
	lmi_simt_free(s);
	return st;
}

static lm_status run_cuda(const lmi_kcall *k, const hist_input *in, uint32_t *histo,
                          lm_kernel_info *info)
{
	const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
	if (!api) return lm_last_status();
	lmi_cuda_hist_call c = {
		.algo = k->algo,
		.is_u8 = in->is_u8,
		.scaled = in->scaled,
		.data = in->data,
		.n = k->n,
		.bins = in->bins,
		.block = k->block,
		.coarsen = k->coarsen,
		.repeats = k->repeats,
		.histo = histo,
	};
	char msg[512] = "";
	if (api->histogram(&c, msg, sizeof msg)) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
	lmi_info_add_measured(info, c.time_ms, (double)k->n * (in->is_u8 ? 1.0 : 4.0));
	lmi_info_add(info, "block", k->block);
	return LM_OK;
}

static lm_status histogram(lmi_kcall *k, const lm_kernel_opts *opts, const hist_input *in,
                           lm_tensor **out, lm_kernel_info **info)
{
	bool aggregated = k->algo == LMI_HIST_AGGREGATED;
	k->any_block = true;
	lm_status st = lmi_kcall_shape(k, opts, true, aggregated ? 8 : 1, 1);
	if (st) return st;
	int64_t shape[1] = {in->bins};
	lm_tensor *y = lm_zeros(1, shape, LM_INT64);
	uint32_t *histo = y && k->backend != LMI_BACKEND_CPU ? lm_alloc(in->bins * sizeof *histo) : NULL;
	lm_kernel_info *inf = NULL;
	if (!y || (k->backend != LMI_BACKEND_CPU && !histo)) {
		st = y ? lmi_fail(LM_ERR_NOMEM, "%s: out of memory", k->fname) : lm_last_status();
		goto out_fail;
	}
	if (!(inf = lmi_info_new(k, "histogram"))) {
		st = lm_last_status();
		goto out_fail;
	}
	int64_t *counts = lm_tensor_data(y);
	switch (k->backend) {
	case LMI_BACKEND_EMU: st = run_emu(k, in, histo, inf); break;
	case LMI_BACKEND_CPU: st = run_cpu(k, in, counts, inf); break;
	case LMI_BACKEND_CUDA: st = run_cuda(k, in, histo, inf); break;
	}
	if (st) goto out_fail;
	if (histo)
		for (unsigned b = 0; b < in->bins; b++) counts[b] = histo[b];
	lmi_info_add(inf, "bins", in->bins);
	lmi_info_add(inf, "coarsen", k->coarsen);
	if (histo) lm_free(histo, in->bins * sizeof *histo);
	*out = y;
	*info = inf;
	return LM_OK;
out_fail:
	if (histo) lm_free(histo, in->bins * sizeof *histo);
	lm_kernel_info_free(inf);
	lm_tensor_release(y);
	return st;
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
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
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
	lm_status st = check_bins(f, bins);
	if (st) return st;
	lmi_kcall k;
	if ((st = lmi_kcall_begin(f, opts, algos, LMI_HIST_ALGO_COUNT, LMI_HIST_PRIVATIZED,
	                          LMI_RUNS_ALL, lm_tensor_numel(x), dt, &k)) != LM_OK)
		return st;
	lm_tensor *xc = lm_contiguous(x);
	if (!xc) return lm_last_status();
	int64_t value, at = lmi_first_out_of_range(xc, 0, bins, &value);
	if (at >= 0) {
		lm_tensor_release(xc);
		return lmi_fail(LM_ERR_INDEX, "%s: element %lld (0-based) is %lld, not a bin index in "
		                "0..%lld (bins %lld)", f, (long long)at, (long long)value,
		                (long long)bins - 1, (long long)bins);
	}
	hist_input in = {lm_tensor_data(xc), dt == LM_UINT8, false, (unsigned)bins};
	st = histogram(&k, opts, &in, out, info);
	lm_tensor_release(xc);
	return st;
}

lm_status lm_kernel_histogram_bytes(const void *bytes, int64_t n, int64_t bins,
                                    const lm_kernel_opts *opts, lm_tensor **out,
                                    lm_kernel_info **info)
{
	const char *f = "kernels.histogram";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	if (!bytes && n > 0) return lmi_fail(LM_ERR_ARG, "%s: the bytes are NULL", f);
	if (n < 1) return lmi_fail(LM_ERR_ARG, "%s: the input is empty (0 bytes); give at least one", f);
	lm_status st = check_bins(f, bins);
	if (st) return st;
	lmi_kcall k;
	if ((st = lmi_kcall_begin(f, opts, algos, LMI_HIST_ALGO_COUNT, LMI_HIST_PRIVATIZED,
	                          LMI_RUNS_ALL, n, LM_UINT8, &k)) != LM_OK)
		return st;
	hist_input in = {bytes, true, true, (unsigned)bins};
	return histogram(&k, opts, &in, out, info);
}
