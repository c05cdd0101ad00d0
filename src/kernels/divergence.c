/*
 * divergence.c — lm_kernel_divergence: the warp-divergence demo, emulated (the lanes of every
 * warp, per path, in the trace) or on a GPU (timed). There is no cpu run: a CPU has no warps.
 *
 * Design: the input is a fixed pseudo-random vector (the same for every run, so the 'data'
 * pattern's splits are reproducible); the block is 256 threads or fewer (a multiple of 32, so
 * warps are whole). simd_efficiency is replaced by its value over the divergent region (the
 * lines of divergence_paths), simd_efficiency_kernel keeps the whole kernel's.
 * Read next: body/divergence.h, body/divergence_plan.h, divergence_emu.c.
 */
#include <stdio.h>

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

static int div_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                    lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->divergence(&((lmi_divergence_run *)run)->c, t, msg, msg_cap);
}

/* Emulated: simd_efficiency over the divergent region, the whole kernel's beside it. */
static lm_status div_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                            const lmi_simt_counters *emu)
{
	(void)k;
	if (emu) {
		double whole = emu->issued_lanes ? (double)emu->active_lanes / (double)emu->issued_lanes : 1;
		lmi_info_set(info, "simd_efficiency", emu->region_issued ? (double)emu->region_active /
		                                                               (double)emu->region_issued
		                                                         : 1);
		lmi_info_add(info, "simd_efficiency_kernel", whole);
		/* the longest a warp spent in the divergent region: one path, or both one after the other */
		lmi_info_add(info, "region_cycles", (double)emu->region_cycles);
	}
	lmi_info_add(info, "warps", (double)((lmi_divergence_run *)run)->c.warps);
	return LM_OK;
}

static const lmi_pattern pattern = {
	.name = "divergence",
	.body = "body/divergence.h",
	.emu = lmi_emu_divergence,
	.cuda = div_cuda,
	.finish = div_finish,
	.variant = "pattern",
};

lm_status lm_kernel_divergence(const lm_kernel_opts *opts, lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.divergence";
	lm_status st = lmi_kcall_start(f, out, info);
	if (st) return st;
	lm_kernel_opts o = lmi_opts_or_default(opts);
	int pat = LMI_DIV_EVEN_ODD;
	if (o.pattern &&
	    (st = lmi_name_lookup(f, "pattern", o.pattern, patterns, LMI_DIV_PATTERN_COUNT, &pat)))
		return st;
	if (o.algo) return lmi_fail(LM_ERR_ARG, "%s: give pattern, not algo", f);
	int64_t warps = o.warps ? o.warps : 4;
	if (warps < 1 || warps > MAX_WARPS)
		return lmi_fail(LM_ERR_ARG, "%s: warps %lld must be in 1..%d", f, (long long)warps, MAX_WARPS);
	if (o.coarsen > 1) return lmi_fail(LM_ERR_ARG, "%s: the demo does not coarsen", f);
	if (o.tile) return lmi_fail(LM_ERR_ARG, "%s: option tile is not used: the demo has no tiles", f);
	int64_t n = warps * 32;
	int64_t block = o.block ? o.block : (n < 256 ? n : 256);
	if (block < 32 || block > LM_KERNEL_MAX_BLOCK || block % 32 || n % block)
		return lmi_fail(LM_ERR_ARG, "%s: block %lld must be a multiple of 32 (whole warps) up to %d "
		                "that divides the %lld threads of %lld warps", f, (long long)block,
		                LM_KERNEL_MAX_BLOCK, (long long)n, (long long)warps);
	o.algo = patterns[pat];
	lmi_kcall k;
	if ((st = lmi_kcall_begin(f, &o, patterns, LMI_DIV_PATTERN_COUNT, pat, LMI_RUNS_NO_CPU, n,
	                          LM_FLOAT32, &k)) != LM_OK)
		return st;
	k.block = (unsigned)block;
	k.coarsen = 1;

	lmi_divergence_run r = {.c = {.pattern = pat, .warps = warps, .block = k.block}};
	float *x = lmi_kcall_alloc(&k, (size_t)n * sizeof *x);
	if (x) fill_input(x, n);
	r.c.x = x;
	r.c.y = lmi_kcall_output(&k, lm_empty(1, &n, LM_FLOAT32));
	snprintf(k.name, sizeof k.name, "divergence %s %lld warps", patterns[pat], (long long)warps);
	k.bytes = 8.0 * (double)n;
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
