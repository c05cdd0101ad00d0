/*
 * conv2d_emu.c — the host code of the emulated 2-D convolutions: the kernels of body/conv2d.h
 * compiled for the emulator, the mask copied into their constant memory, and the one launch.
 *
 * Design: the grid covers the output in tiles (x: columns, y: rows, as in PMPP): blocks of
 * tile x tile threads, or (tile + 2r)^2 for the input-tile version, whose input tile with its halo
 * lives in dynamic shared memory. Constant memory is a static array per element type, as on a GPU
 * (cudaMemcpyToSymbol fills a __constant__ array): a mutex keeps two calls from other threads
 * apart. The arrays carry their 2-D shapes for the tiles-and-halos scene.
 * ../cuda/conv2d.cu makes the same launches.
 * Read next: body/conv2d.h, conv2d.c.
 */
#include <pthread.h>
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/conv2d.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/conv2d.h"
#undef T
#undef KFN

typedef struct conv_args {
	const void *N, *F;
	void *P;
	int h, w, mh, mw, tile;
} conv_args;

static void naive_f32(void *p)
{
	conv_args *a = p;
	conv2d_naive_f32(a->N, a->F, a->P, a->h, a->w, a->mh, a->mw);
}
static void naive_f64(void *p)
{
	conv_args *a = p;
	conv2d_naive_f64(a->N, a->F, a->P, a->h, a->w, a->mh, a->mw);
}
static void constant_f32(void *p)
{
	conv_args *a = p;
	conv2d_constant_f32(a->N, a->P, a->h, a->w, a->mh, a->mw);
}
static void constant_f64(void *p)
{
	conv_args *a = p;
	conv2d_constant_f64(a->N, a->P, a->h, a->w, a->mh, a->mw);
}
static void tiled_input_f32(void *p)
{
	conv_args *a = p;
	conv2d_tiled_input_f32(a->N, a->P, a->h, a->w, a->mh, a->mw, a->tile);
}
static void tiled_input_f64(void *p)
{
	conv_args *a = p;
	conv2d_tiled_input_f64(a->N, a->P, a->h, a->w, a->mh, a->mw, a->tile);
}
static void tiled_output_f32(void *p)
{
	conv_args *a = p;
	conv2d_tiled_output_f32(a->N, a->P, a->h, a->w, a->mh, a->mw, a->tile);
}
static void tiled_output_f64(void *p)
{
	conv_args *a = p;
	conv2d_tiled_output_f64(a->N, a->P, a->h, a->w, a->mh, a->mw, a->tile);
}

static void (*const kernels[LMI_CONV_ALGO_COUNT][2])(void *) = {
	[LMI_CONV_NAIVE] = {naive_f32, naive_f64},
	[LMI_CONV_CONSTANT] = {constant_f32, constant_f64},
	[LMI_CONV_TILED_INPUT] = {tiled_input_f32, tiled_input_f64},
	[LMI_CONV_TILED_OUTPUT] = {tiled_output_f32, tiled_output_f64},
};
static const char *const kernel_name[LMI_CONV_ALGO_COUNT] = {
	[LMI_CONV_NAIVE] = "conv2d_naive",
	[LMI_CONV_CONSTANT] = "conv2d_constant",
	[LMI_CONV_TILED_INPUT] = "conv2d_tiled_input",
	[LMI_CONV_TILED_OUTPUT] = "conv2d_tiled_output",
};

static pthread_mutex_t constant_lock = PTHREAD_MUTEX_INITIALIZER;

lm_status lmi_emu_conv2d(lmi_simt *s, const lmi_kcall *k, int algo, const void *img,
                         const void *mask, void *out, int64_t h, int64_t w, int64_t mh, int64_t mw,
                         unsigned tile)
{
	bool dbl = k->dtype == LM_FLOAT64;
	size_t elem = lm_dtype_size(k->dtype);
	int64_t ry = (mh - 1) / 2, rx = (mw - 1) / 2;
	int64_t in_h = tile + 2 * ry, in_w = tile + 2 * rx;
	bool uses_constant = algo != LMI_CONV_NAIVE;
	void *F_c = dbl ? (void *)F_c_f64 : (void *)F_c_f32;
	lmi_simt_array arrays[3] = {
		{.name = "N", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = (void *)img,
		 .length = h * w, .rows = h, .cols = w, .readonly = true},
		{.name = "P", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = out, .length = h * w,
		 .rows = h, .cols = w},
		{.name = uses_constant ? "F_c" : "F",
		 .space = uses_constant ? LM_SPACE_CONSTANT : LM_SPACE_GLOBAL, .dtype = k->dtype,
		 .data = uses_constant ? F_c : (void *)mask, .length = mh * mw, .rows = mh, .cols = mw,
		 .readonly = true},
	};
	lmi_simt_layout layout = {"N_s", in_h, in_w};
	conv_args a = {img, mask, out, (int)h, (int)w, (int)mh, (int)mw, (int)tile};
	lmi_simt_launch L = {
		.kernel = kernel_name[algo],
		.grid = {(unsigned)((w + tile - 1) / tile), (unsigned)((h + tile - 1) / tile), 1},
		.block = {tile, tile, 1},
		.entry = kernels[algo][dbl],
		.args = &a,
		.arrays = arrays,
		.narrays = 3,
		.layouts = &layout,
		.nlayouts = 1,
	};
	if (algo == LMI_CONV_TILED_INPUT) L.block = (lmi_dim3){(unsigned)in_w, (unsigned)in_h, 1};
	if (algo == LMI_CONV_TILED_INPUT || algo == LMI_CONV_TILED_OUTPUT)
		L.dyn_shared = (size_t)(in_h * in_w) * elem;
	if (!uses_constant) return lmi_simt_run(s, &L);
	pthread_mutex_lock(&constant_lock); /* cudaMemcpyToSymbol, then the launch */
	memcpy(F_c, mask, (size_t)(mh * mw) * elem);
	lm_status st = lmi_simt_run(s, &L);
	pthread_mutex_unlock(&constant_lock);
	return st;
}
