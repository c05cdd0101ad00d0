/*
 * conv2d.c — lm_kernel_conv2d: the 2-D convolution, run on the emulator, natively on the CPU or on
 * a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the mask's limits are checked before anything runs: sides at most the image's, odd for
 * the tiled versions (their halo is (side - 1) / 2 on each side), at most LM_KERNEL_MAX_MASK
 * elements where it lives in constant memory, and a block of at most 1024 threads for the
 * input-tile version. The emulated run adds the lecture's number: global loads per output pixel.
 * Read next: conv2d_emu.c, body/conv2d.h, cpu_dense.c.
 */
#include <stdio.h>

#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

/* The names users give; "tiled" is the input-tile version (PMPP's main tiled kernel). */
static const char *const algos[] = {"naive", "constant", "tiled", "tiled-input", "tiled-output"};
static const int algo_of[] = {LMI_CONV_NAIVE, LMI_CONV_CONSTANT, LMI_CONV_TILED_INPUT,
                              LMI_CONV_TILED_INPUT, LMI_CONV_TILED_OUTPUT};
#define NALGOS 5
_Static_assert(LM_KERNEL_MAX_MASK == LMI_CONV_MAX_MASK, "one limit for the mask, both sides");

typedef struct conv {
	int algo; /* LMI_CONV_* */
	const void *img, *mask;
	void *out;
	int64_t h, w, mh, mw;
	unsigned tile;
} conv;

typedef struct cpu_run {
	const lmi_kcall *k;
	const conv *p;
} cpu_run;

static int cpu_once(void *arg)
{
	cpu_run *r = arg;
	const conv *p = r->p;
	if (r->k->dtype == LM_FLOAT64)
		return lmi_cpu_conv2d_f64(p->img, p->mask, p->out, p->h, p->w, p->mh, p->mw,
		                          &lmi_interrupt_flag);
	return lmi_cpu_conv2d_f32(p->img, p->mask, p->out, p->h, p->w, p->mh, p->mw, &lmi_interrupt_flag);
}

static lm_status run(const lmi_kcall *k, const conv *p, lm_kernel_info *info)
{
	double outputs = (double)(p->h * p->w), elem = (double)lm_dtype_size(k->dtype);
	double bytes = (2 * outputs + (double)(p->mh * p->mw)) * elem; /* image in, output out, mask */
	double flops = 2 * outputs * (double)(p->mh * p->mw);         /* ghost cells included */
	lm_status st = LM_OK;
	switch (k->backend) {
	case LMI_BACKEND_EMU: {
		char name[128];
		snprintf(name, sizeof name, "conv2d %s %lldx%lld mask %lldx%lld tile %u %s", k->algo_name,
		         (long long)p->h, (long long)p->w, (long long)p->mh, (long long)p->mw, p->tile,
		         lm_dtype_name(k->dtype));
		lmi_simt *s;
		if ((st = lmi_emu_start(k, name, info, 0, &s)) != LM_OK) return st;
		st = lmi_emu_conv2d(s, k, p->algo, p->img, p->mask, p->out, p->h, p->w, p->mh, p->mw, p->tile);
		if (st == LM_OK) {
			const lmi_simt_counters *c = lmi_simt_counters_get(s);
			lmi_info_add_emu(info, c, k);
			lmi_info_add(info, "global_loads_per_output", (double)c->global_loads / outputs);
		}
		lmi_simt_free(s);
		break;
	}
	case LMI_BACKEND_CPU: {
		cpu_run r = {k, p};
		double ms;
		if ((st = lmi_time_median(k->fname, k->repeats, cpu_once, NULL, &r, &ms)) != LM_OK) return st;
		lmi_info_add_measured(info, ms, bytes);
		lmi_info_add(info, "gflops", flops / (ms * 1e6));
		lmi_info_add(info, "threads", lmi_cpu_kernel_threads());
		break;
	}
	case LMI_BACKEND_CUDA: {
		const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
		if (!api) return lm_last_status();
		lmi_cuda_conv_call c = {
			.algo = p->algo, .is_double = k->dtype == LM_FLOAT64, .img = p->img,
			.mask = p->mask, .out = p->out, .h = p->h, .w = p->w, .mh = p->mh, .mw = p->mw,
			.tile = p->tile, .repeats = k->repeats,
		};
		char msg[512] = "";
		if (api->conv2d(&c, msg, sizeof msg)) return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
		lmi_info_add_measured(info, c.time_ms, bytes);
		lmi_info_add(info, "gflops", flops / (c.time_ms * 1e6));
		lmi_info_add(info, "block", k->block);
		break;
	}
	}
	if (st) return st;
	lmi_info_add(info, "tile", p->tile);
	lmi_info_add(info, "outputs", outputs);
	return LM_OK;
}

/* Everything about the mask and the tile, before anything runs. */
static lm_status check_shape(lmi_kcall *k, const lm_kernel_opts *opts, conv *p)
{
	const char *f = k->fname, *an = k->algo_name;
	if (p->mh > p->h || p->mw > p->w)
		return lmi_fail(LM_ERR_SHAPE, "%s: the mask [%lld, %lld] is larger than the image [%lld, "
		                "%lld]", f, (long long)p->mh, (long long)p->mw, (long long)p->h,
		                (long long)p->w);
	bool tiled = p->algo == LMI_CONV_TILED_INPUT || p->algo == LMI_CONV_TILED_OUTPUT;
	if (tiled && (p->mh % 2 == 0 || p->mw % 2 == 0))
		return lmi_fail(LM_ERR_SHAPE, "%s: algo '%s' needs odd mask sides (a halo of (side - 1) / 2 "
		                "cells on each side); the mask is [%lld, %lld]", f, an, (long long)p->mh,
		                (long long)p->mw);
	if (p->algo != LMI_CONV_NAIVE && p->mh * p->mw > LM_KERNEL_MAX_MASK)
		return lmi_fail(LM_ERR_ARG, "%s: algo '%s' keeps the mask in constant memory, which holds at "
		                "most %d elements; the mask [%lld, %lld] has %lld", f, an,
		                LM_KERNEL_MAX_MASK, (long long)p->mh, (long long)p->mw,
		                (long long)(p->mh * p->mw));
	if (k->backend != LMI_BACKEND_CPU && p->h * p->w > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: an image of %lld x %lld pixels is more than the %s run's "
		                "32-bit indices allow", f, (long long)p->h, (long long)p->w,
		                k->backend == LMI_BACKEND_EMU ? "emu" : "cuda");
	lm_status st = lmi_kcall_tile(k, opts, &p->tile);
	if (st) return st;
	int64_t in_h = p->tile + 2 * ((p->mh - 1) / 2), in_w = p->tile + 2 * ((p->mw - 1) / 2);
	k->block = p->tile * p->tile;
	if (p->algo == LMI_CONV_TILED_INPUT) {
		if (in_h * in_w > LM_KERNEL_MAX_BLOCK)
			return lmi_fail(LM_ERR_ARG, "%s: algo '%s' with tile %u and a [%lld, %lld] mask needs "
			                "blocks of %lld x %lld = %lld threads (the input tile), over the "
			                "limit of %d threads per block; choose a smaller tile", f, an,
			                p->tile, (long long)p->mh, (long long)p->mw, (long long)in_w,
			                (long long)in_h, (long long)(in_h * in_w), LM_KERNEL_MAX_BLOCK);
		k->block = (unsigned)(in_h * in_w);
	}
	if (tiled) {
		k->coarsen = 1;
		if ((st = lmi_kcall_check_shared(k, in_h * in_w)) != LM_OK) return st;
	}
	return LM_OK;
}

lm_status lm_kernel_conv2d(const lm_tensor *img, const lm_tensor *mask, const lm_kernel_opts *opts,
                           lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.conv2d";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	lmi_kcall k;
	lm_status st = lmi_kcall_resolve(f, img, opts, algos, NALGOS, 2, &k);
	if (st) return st;
	if (!mask) return lmi_fail(LM_ERR_ARG, "%s: the mask is NULL", f);
	if (lm_tensor_device(mask) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the mask is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(mask)));
	if (lm_tensor_ndim(img) != 2 || lm_tensor_ndim(mask) != 2)
		return lmi_fail(LM_ERR_SHAPE, "%s: the image %s and the mask %s must both be 2-D", f,
		                lmi_shape_s(img), lmi_shape_s(mask));
	if (lm_tensor_dtype(mask) != k.dtype)
		return lmi_fail(LM_ERR_DTYPE, "%s: the image is %s and the mask %s; give both the same "
		                "float dtype", f, lm_dtype_name(k.dtype), lm_dtype_name(lm_tensor_dtype(mask)));
	if (lm_tensor_numel(mask) == 0) return lmi_fail(LM_ERR_ARG, "%s: the mask is empty", f);
	conv p = {.algo = algo_of[k.algo], .h = lm_tensor_size(img, 0), .w = lm_tensor_size(img, 1),
	          .mh = lm_tensor_size(mask, 0), .mw = lm_tensor_size(mask, 1)};
	if ((st = check_shape(&k, opts, &p)) != LM_OK) return st;

	lm_tensor *ic = lm_contiguous(img), *mc = ic ? lm_contiguous(mask) : NULL;
	lm_tensor *y = mc ? lm_empty(2, (int64_t[]){p.h, p.w}, k.dtype) : NULL;
	lm_kernel_info *inf = y ? lmi_info_new(&k, "conv2d") : NULL;
	if (!inf) {
		st = lm_last_status();
		goto out_fail;
	}
	p.img = lm_tensor_data(ic);
	p.mask = lm_tensor_data(mc);
	p.out = lm_tensor_data(y);
	if ((st = run(&k, &p, inf)) != LM_OK) goto out_fail;
	lm_tensor_release(ic);
	lm_tensor_release(mc);
	*out = y;
	*info = inf;
	return LM_OK;
out_fail:
	lm_kernel_info_free(inf);
	lm_tensor_release(y);
	lm_tensor_release(mc);
	lm_tensor_release(ic);
	return st;
}
