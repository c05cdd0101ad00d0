/*
 * conv2d_emu.c — the host code of the emulated 2-D convolutions: the kernels of body/conv2d.h
 * compiled for the emulator, the mask copied into their constant memory, and the launch of
 * body/conv2d_plan.h (as cuda/conv2d.cu makes it).
 *
 * Design: constant memory is a static array per element type, as on a GPU (cudaMemcpyToSymbol
 * fills a __constant__ array): a mutex keeps two calls from other threads apart. The arrays carry
 * their 2-D shapes for the tiles-and-halos scene.
 * Read next: body/conv2d_plan.h, body/conv2d.h, conv2d.c.
 */
#include <pthread.h>
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/conv2d.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_conv_args
LMI_EMU_KERNELS(LMK_CONV_KERNELS, kernels)

static pthread_mutex_t constant_lock = PTHREAD_MUTEX_INITIALIZER;

lm_status lmi_emu_conv2d(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_conv_call *c = &((lmi_conv_run *)run)->c;
	lm_dtype dt = k->dtype;
	size_t elem = lm_dtype_size(dt);
	int64_t in_h, in_w, h = c->h, w = c->w, mh = c->mh, mw = c->mw;
	lmk_conv_input_tile(c->tile, mh, mw, &in_h, &in_w);
	bool uses_constant = c->algo != LMI_CONV_NAIVE;
	void *F_c = c->is_double ? (void *)F_c_f64 : (void *)F_c_f32;
	lmi_simt_array arrays[3] = {
		lmi_emu_array("N", dt, c->img, h * w, h, w, true),
		lmi_emu_array("P", dt, c->out, h * w, h, w, false),
		lmi_emu_array(uses_constant ? "F_c" : "F", dt, uses_constant ? F_c : c->mask, mh * mw, mh,
		              mw, true),
	};
	if (uses_constant) arrays[2].space = LM_SPACE_CONSTANT;
	lmi_simt_layout layout = {"N_s", in_h, in_w};
	lmk_conv_args a = lmk_conv_args_of(c, (void *)c->img, (void *)c->mask, c->out);
	lmk_launch l = lmk_conv_launch(c, elem);
	lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, &l, &a, arrays, 3);
	L.layouts = &layout;
	L.nlayouts = 1;
	if (!uses_constant) return lmi_simt_run(s, &L);
	pthread_mutex_lock(&constant_lock); /* cudaMemcpyToSymbol, then the launch */
	memcpy(F_c, c->mask, (size_t)(mh * mw) * elem);
	lm_status st = lmi_simt_run(s, &L);
	pthread_mutex_unlock(&constant_lock);
	return st;
}
