/*
 * conv2d.c — lm_kernel_conv2d: the 2-D convolution, run on the emulator, natively on the CPU or on
 * a GPU (see scan.c for the shape of a pattern call).
 *
 * Design: the mask's limits are checked before anything runs: sides at most the image's, odd for
 * the tiled versions (their halo is (side - 1) / 2 on each side), at most LM_KERNEL_MAX_MASK
 * elements where it lives in constant memory, and a block of at most 1024 threads for the
 * input-tile version. The emulated run adds the lecture's number: global loads per output pixel.
 * The cpu run (one loop for every algo) takes its own output tiles and loop order (tile_h, tile_w,
 * order: cpu_tiling; lm.tune searches them), which the GPU runs refuse.
 * Read next: conv2d_emu.c, body/conv2d_plan.h, body/conv2d.h, cpu_dense.c.
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

static int conv_cpu(const lmi_kcall *k, void *run)
{
	const lmi_conv_run *r = run;
	const lmi_conv_call *c = &r->c;
	const lmi_cpu_conv_tiling *t = r->cpu_given ? &r->cpu : NULL;
	(void)k;
	if (c->is_double)
		return lmi_cpu_conv2d_tiled_f64(c->img, c->mask, c->out, c->h, c->w, c->mh, c->mw,
		                                t, &lmi_interrupt_flag);
	return lmi_cpu_conv2d_tiled_f32(c->img, c->mask, c->out, c->h, c->w, c->mh, c->mw, t,
	                                &lmi_interrupt_flag);
}

static int conv_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                     lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	(void)k;
	return api->conv2d(&((lmi_conv_run *)run)->c, t, msg, msg_cap);
}

static lm_status conv_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                             const lmi_simt_counters *emu)
{
	const lmi_conv_call *c = &((lmi_conv_run *)run)->c;
	double outputs = (double)(c->h * c->w);
	(void)k;
	if (emu) lmi_info_add(info, "global_loads_per_output", (double)emu->global_loads / outputs);
	lmi_info_add(info, "tile", c->tile);
	lmi_info_add(info, "outputs", outputs);
	return LM_OK;
}

/* One CPU convolution for every algo (cpu_dense.c), tiled as asked. */
static unsigned conv_cpu_impl(const lmi_kcall *k, const void *run, char *buf, size_t cap)
{
	const lmi_conv_run *r = run;
	(void)k;
	if (!r->cpu_given)
		snprintf(buf, cap, "direct loop per output row, vectorised along the row, ghost "
		         "cells skipped; %d threads", lmi_cpu_kernel_threads());
	else
		snprintf(buf, cap, "direct loop over output tiles of %lld x %lld, loops in order "
		         "%s, vectorised along the tile's rows, ghost cells skipped; %d threads",
		         (long long)r->cpu.th, (long long)r->cpu.tw,
		         lmi_cpu_conv2d_orders[r->cpu.order], lmi_cpu_kernel_threads());
	return 0;
}

static const lmi_pattern pattern = {
	.name = "conv2d",
	.body = "body/conv2d.h",
	.emu = lmi_emu_conv2d,
	.cpu = conv_cpu,
	.cuda = conv_cuda,
	.finish = conv_finish,
	.cpu_impl = conv_cpu_impl,
};

/* Everything about the mask and the tile, before anything runs. */
static lm_status check_shape(lmi_kcall *k, const lm_kernel_opts *opts, lmi_conv_call *c)
{
	const char *f = k->fname, *an = k->algo_name;
	if (c->mh > c->h || c->mw > c->w)
		return lmi_fail(LM_ERR_SHAPE, "%s: the mask [%lld, %lld] is larger than the image [%lld, "
		                "%lld]", f, (long long)c->mh, (long long)c->mw, (long long)c->h,
		                (long long)c->w);
	bool tiled = c->algo == LMI_CONV_TILED_INPUT || c->algo == LMI_CONV_TILED_OUTPUT;
	if (tiled && (c->mh % 2 == 0 || c->mw % 2 == 0))
		return lmi_fail(LM_ERR_SHAPE, "%s: algo '%s' needs odd mask sides (a halo of (side - 1) / 2 "
		                "cells on each side); the mask is [%lld, %lld]", f, an, (long long)c->mh,
		                (long long)c->mw);
	if (c->algo != LMI_CONV_NAIVE && c->mh * c->mw > LM_KERNEL_MAX_MASK)
		return lmi_fail(LM_ERR_ARG, "%s: algo '%s' keeps the mask in constant memory, which holds at "
		                "most %d elements; the mask [%lld, %lld] has %lld", f, an,
		                LM_KERNEL_MAX_MASK, (long long)c->mh, (long long)c->mw,
		                (long long)(c->mh * c->mw));
	if (k->backend != LMI_BACKEND_CPU && c->h * c->w > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: an image of %lld x %lld pixels is more than the %s run's "
		                "32-bit indices allow", f, (long long)c->h, (long long)c->w,
		                lmi_backend_name(k->backend));
	lm_status st = lmi_kcall_tile(k, opts, &c->tile);
	if (st) return st;
	int64_t in_h, in_w;
	lmk_conv_input_tile(c->tile, c->mh, c->mw, &in_h, &in_w);
	k->block = c->tile * c->tile;
	if (c->algo == LMI_CONV_TILED_INPUT) {
		if (in_h * in_w > LM_KERNEL_MAX_BLOCK)
			return lmi_fail(LM_ERR_ARG, "%s: algo '%s' with tile %u and a [%lld, %lld] mask needs "
			                "blocks of %lld x %lld = %lld threads (the input tile), over the "
			                "limit of %d threads per block; choose a smaller tile", f, an,
			                c->tile, (long long)c->mh, (long long)c->mw, (long long)in_w,
			                (long long)in_h, (long long)(in_h * in_w), LM_KERNEL_MAX_BLOCK);
		k->block = (unsigned)(in_h * in_w);
	}
	if (tiled) {
		k->coarsen = 1;
		if ((st = lmi_kcall_check_shared(k, in_h * in_w)) != LM_OK) return st;
	}
	return LM_OK;
}

/* The mask after lmi_kcall_resolve checked the image. */
static lm_status check_mask(const lmi_kcall *k, const lm_tensor *img, const lm_tensor *mask)
{
	const char *f = k->fname;
	if (!mask) return lmi_fail(LM_ERR_ARG, "%s: the mask is NULL", f);
	if (lm_tensor_device(mask) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the mask is on %s; pass a CPU tensor", f,
		                lm_device_name(lm_tensor_device(mask)));
	if (lm_tensor_ndim(img) != 2 || lm_tensor_ndim(mask) != 2)
		return lmi_fail(LM_ERR_SHAPE, "%s: the image %s and the mask %s must both be 2-D", f,
		                lmi_shape_s(img), lmi_shape_s(mask));
	if (lm_tensor_dtype(mask) != k->dtype)
		return lmi_fail(LM_ERR_DTYPE, "%s: the image is %s and the mask %s; give both the same "
		                "float dtype", f, lm_dtype_name(k->dtype), lm_dtype_name(lm_tensor_dtype(mask)));
	if (lm_tensor_numel(mask) == 0) return lmi_fail(LM_ERR_ARG, "%s: the mask is empty", f);
	return LM_OK;
}

#define NO_ORDER "the GPU's threads have no loop order"

/* The cpu run's knobs (tile_h, tile_w, order): only the cpu run has them; tiles
 * 1..LM_KERNEL_MAX_CPU_TILE (0: one row, the whole width), the order one of
 * lmi_cpu_conv2d_orders. */
static lm_status cpu_tiling(const lmi_kcall *k, const lm_kernel_opts *o, lmi_conv_run *r)
{
	const char *f = k->fname, *keys[2] = {"tile_h", "tile_w"};
	const int64_t v[2] = {o->tile_h, o->tile_w}, def[2] = {1, r->c.w};
	int64_t *dst[2] = {&r->cpu.th, &r->cpu.tw};
	const char *why = "it is the CPU's output tile; the GPU's is tile";
	r->cpu.order = LMI_CONV_ORD_TILE_ROW_MASK;
	for (int i = 0; i < 2; i++) {
		lm_status st = LM_OK;
		if (k->backend != LMI_BACKEND_CPU) st = lmi_kcall_unused(k, keys[i], v[i] != 0, why);
		if (st) return st;
		if (v[i] < 0 || v[i] > LM_KERNEL_MAX_CPU_TILE)
			return lmi_fail(LM_ERR_ARG, "%s: %s = %lld must be between 1 and %d (0: the "
			                "default)", f, keys[i], (long long)v[i], LM_KERNEL_MAX_CPU_TILE);
		*dst[i] = v[i] ? v[i] : def[i];
	}
	if (o->order) {
		lm_status st = k->backend != LMI_BACKEND_CPU
		                       ? lmi_kcall_unused(k, "order", true, NO_ORDER)
		                       : lmi_name_lookup(f, "order", o->order, lmi_cpu_conv2d_orders,
		                                         LMI_CONV_ORD_COUNT, &r->cpu.order);
		if (st) return st;
	}
	r->cpu_given = o->tile_h || o->tile_w || o->order;
	return LM_OK;
}

lm_status lm_kernel_conv2d(const lm_tensor *img, const lm_tensor *mask, const lm_kernel_opts *opts,
                           lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.conv2d";
	lmi_kcall k;
	lm_kernel_opts o = lmi_opts_cpu_if_auto(opts);
	lm_status st = lmi_kcall_start(f, out, info);
	if (st || (st = lmi_kcall_resolve(f, img, &o, algos, NALGOS, 2, &k)) != LM_OK ||
	    (st = check_mask(&k, img, mask)) != LM_OK)
		return st;
	lmi_conv_run r = {.c = {.algo = algo_of[k.algo], .is_double = k.dtype == LM_FLOAT64,
	                        .h = lm_tensor_size(img, 0), .w = lm_tensor_size(img, 1),
	                        .mh = lm_tensor_size(mask, 0), .mw = lm_tensor_size(mask, 1)}};
	lmi_conv_call *c = &r.c;
	if ((st = check_shape(&k, &o, c)) != LM_OK || (st = cpu_tiling(&k, &o, &r)) != LM_OK)
		return st;

	c->img = lmi_kcall_input(&k, img);
	c->mask = lmi_kcall_input(&k, mask);
	c->out = lmi_kcall_output(&k, lm_empty(2, (int64_t[]){c->h, c->w}, k.dtype));
	snprintf(k.name, sizeof k.name, "conv2d %s %lldx%lld mask %lldx%lld tile %u %s", k.algo_name,
	         (long long)c->h, (long long)c->w, (long long)c->mh, (long long)c->mw, c->tile,
	         lm_dtype_name(k.dtype));
	double outputs = (double)(c->h * c->w), elem = (double)lm_dtype_size(k.dtype);
	k.bytes = (2 * outputs + (double)(c->mh * c->mw)) * elem; /* image in, output out, mask */
	k.flops = 2 * outputs * (double)(c->mh * c->mw);         /* ghost cells included */
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
