/*
 * divergence.c — lm_kernel_divergence: the warp-divergence demo, emulated (the lanes of every
 * warp, per path, in the trace) or on a GPU (timed). There is no cpu run: a CPU has no warps.
 *
 * Design: the input is a fixed pseudo-random vector (the same for every run, so the 'data'
 * pattern's splits are reproducible); the block is 256 threads or fewer (a multiple of 32, so
 * warps are whole). simd_efficiency is replaced by its value over the divergent region (the
 * lines of divergence_paths), simd_efficiency_kernel keeps the whole kernel's.
 * Read next: body/divergence.h, divergence_emu.c.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/patterns.h"

static const char *const patterns[LMI_DIV_PATTERN_COUNT] = {
	[LMI_DIV_EVEN_ODD] = "even-odd",
	[LMI_DIV_HALF_WARP] = "half-warp",
	[LMI_DIV_DATA] = "data",
	[LMI_DIV_WARP] = "warp",
	[LMI_DIV_NONE] = "none",
};

#define MAX_WARPS 4096

/* x[i] in [0, 1), a hash of i. */
static void fill_input(float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		uint32_t h = (uint32_t)i * 2654435761u;
		h ^= h >> 15;
		h *= 2246822519u;
		h ^= h >> 13;
		x[i] = (float)(h >> 8) / 16777216.0f;
	}
}

static lm_status run(const lmi_kcall *k, int pattern, const float *x, float *y, lm_kernel_info *info)
{
	lm_status st;
	if (k->backend == LMI_BACKEND_EMU) {
		char name[64];
		snprintf(name, sizeof name, "divergence %s %lld warps", patterns[pattern], (long long)k->n / 32);
		lmi_simt *s;
		if ((st = lmi_emu_start(k, name, info, 0, &s)) != LM_OK) return st;
		st = lmi_emu_divergence(s, pattern, x, y, k->n, k->block);
		if (st == LM_OK) {
			const lmi_simt_counters *c = lmi_simt_counters_get(s);
			lmi_info_add_emu(info, c, k);
			double whole = c->issued_lanes ? (double)c->active_lanes / (double)c->issued_lanes : 1;
			lmi_info_set(info, "simd_efficiency",
			             c->region_issued ? (double)c->region_active / (double)c->region_issued : 1);
			lmi_info_add(info, "simd_efficiency_kernel", whole);
		}
		lmi_simt_free(s);
		return st;
	}
	const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
	if (!api) return lm_last_status();
	lmi_cuda_divergence_call c = {.pattern = pattern, .warps = k->n / 32, .block = k->block,
	                              .x = x, .y = y, .repeats = k->repeats};
	char msg[512] = "";
	if (api->divergence(&c, msg, sizeof msg)) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
	lmi_info_add_measured(info, c.time_ms, 8.0 * (double)k->n);
	lmi_info_add(info, "block", k->block);
	return LM_OK;
}

lm_status lm_kernel_divergence(const lm_kernel_opts *opts, lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.divergence";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	lm_kernel_opts o;
	if (opts) o = *opts;
	else lm_kernel_opts_init(&o);
	int pattern = LMI_DIV_EVEN_ODD;
	if (o.pattern) {
		pattern = -1;
		for (int p = 0; p < LMI_DIV_PATTERN_COUNT; p++)
			if (strcmp(o.pattern, patterns[p]) == 0) pattern = p;
		if (pattern < 0)
			return lmi_fail(LM_ERR_ARG, "%s: unknown pattern '%s' (expected 'even-odd', 'half-warp', "
			                "'data', 'warp' or 'none')", f, o.pattern);
	}
	if (o.algo) return lmi_fail(LM_ERR_ARG, "%s: give pattern, not algo", f);
	int64_t warps = o.warps ? o.warps : 4;
	if (warps < 1 || warps > MAX_WARPS)
		return lmi_fail(LM_ERR_ARG, "%s: warps %lld must be in 1..%d", f, (long long)warps, MAX_WARPS);
	if (o.coarsen > 1) return lmi_fail(LM_ERR_ARG, "%s: the demo does not coarsen", f);
	int64_t n = warps * 32;
	int64_t block = o.block ? o.block : (n < 256 ? n : 256);
	if (block < 32 || block > LM_KERNEL_MAX_BLOCK || block % 32 || n % block)
		return lmi_fail(LM_ERR_ARG, "%s: block %lld must be a multiple of 32 (whole warps) up to %d "
		                "that divides the %lld threads of %lld warps", f, (long long)block,
		                LM_KERNEL_MAX_BLOCK, (long long)n, (long long)warps);
	o.algo = patterns[pattern];
	lmi_kcall k;
	lm_status st = lmi_kcall_begin(f, &o, patterns, LMI_DIV_PATTERN_COUNT, pattern, LMI_RUNS_NO_CPU,
	                               n, LM_FLOAT32, &k);
	if (st) return st;
	k.block = (unsigned)block;
	k.coarsen = 1;
	float *x = lm_alloc((size_t)n * sizeof *x);
	lm_tensor *y = x ? lm_empty(1, &n, LM_FLOAT32) : NULL;
	lm_kernel_info *inf = y ? lmi_info_new(&k, "divergence") : NULL;
	if (!inf) {
		st = x ? lm_last_status() : lmi_fail(LM_ERR_NOMEM, "%s: out of memory", f);
		goto out_fail;
	}
	fill_input(x, n);
	if ((st = run(&k, pattern, x, lm_tensor_data(y), inf)) != LM_OK) goto out_fail;
	lmi_info_add(inf, "warps", (double)warps);
	lm_free(x, (size_t)n * sizeof *x);
	*out = y;
	*info = inf;
	return LM_OK;
out_fail:
	if (x) lm_free(x, (size_t)n * sizeof *x);
	lm_kernel_info_free(inf);
	lm_tensor_release(y);
	return st;
}
