/*
 * conv2d_plan.h — the launch of a 2-D convolution, written once for both hosts (../conv2d_emu.c
 * and ../cuda/conv2d.cu): the call, the kernels of conv2d.h with their arguments, the input tile
 * and the one launch.
 *
 * Design: the grid covers the output in tiles (x: columns, y: rows, as in PMPP): blocks of
 * tile x tile threads, or one thread per element of the input tile ((tile + 2 r)^2: the output
 * tile with its halo) for the input-tile version; both tiled versions keep the input tile in
 * dynamic shared memory. The constant-memory versions read the mask from F_c, which the host
 * fills before the launch (cudaMemcpyToSymbol on a GPU).
 * Read next: conv2d.h (the kernels), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_CONV2D_PLAN_H
#define LUMEN_KERNELS_BODY_CONV2D_PLAN_H

#include "kernels/body/plan.h"

enum {
	LMI_CONV_NAIVE = 0,
	LMI_CONV_CONSTANT,
	LMI_CONV_TILED_INPUT,
	LMI_CONV_TILED_OUTPUT,
	LMI_CONV_ALGO_COUNT
};
/* Elements of constant memory reserved for a convolution mask, per element type. */
#define LMI_CONV_MAX_MASK 2048

/* out (h x w) = img (h x w) convolved with mask (mh x mw), host arrays; tile: the output tile
 * width. */
typedef struct lmi_conv_call {
	int algo, is_double; /* LMI_CONV_* */
	const void *img, *mask;
	void *out;
	int64_t h, w, mh, mw;
	unsigned tile;
} lmi_conv_call;

typedef struct lmk_conv_args {
	LMK_PTR N; /* the image */
	LMK_PTR F; /* the mask in global memory (naive) */
	LMK_PTR P; /* the output */
	int h, w, mh, mw, tile;
} lmk_conv_args;

/* The kernels, in the order of LMI_CONV_*. */
#define LMK_CONV_KERNELS(K_)                                                                       \
	K_(conv2d_naive, (a->N, a->F, a->P, a->h, a->w, a->mh, a->mw))                             \
	K_(conv2d_constant, (a->N, a->P, a->h, a->w, a->mh, a->mw))                                \
	K_(conv2d_tiled_input, (a->N, a->P, a->h, a->w, a->mh, a->mw, a->tile))                    \
	K_(conv2d_tiled_output, (a->N, a->P, a->h, a->w, a->mh, a->mw, a->tile))
enum { LMK_CONV_KERNELS(LMK_KERNEL_ID) LMK_CONV_KERNEL_COUNT };
LMK_STATIC_ASSERT((int)LMK_CONV_KERNEL_COUNT == (int)LMI_CONV_ALGO_COUNT, "a kernel a variant");

/* The input tile of a block: its output tile plus a halo of (side - 1) / 2 on each side. */
static inline void lmk_conv_input_tile(unsigned tile, int64_t mh, int64_t mw, int64_t *in_h,
                                       int64_t *in_w)
{
	*in_h = tile + 2 * ((mh - 1) / 2);
	*in_w = tile + 2 * ((mw - 1) / 2);
}

static inline lmk_launch lmk_conv_launch(const lmi_conv_call *c, size_t elem)
{
	int64_t in_h, in_w;
	unsigned t = c->tile;
	lmk_conv_input_tile(t, c->mh, c->mw, &in_h, &in_w);
	lmk_launch l = {c->algo, {lmk_blocks(c->w, t), lmk_blocks(c->h, t), 1}, {t, t, 1}, 0, 0};
	if (c->algo == LMI_CONV_TILED_INPUT) {
		l.block.x = (unsigned)in_w;
		l.block.y = (unsigned)in_h;
	}
	if (c->algo == LMI_CONV_TILED_INPUT || c->algo == LMI_CONV_TILED_OUTPUT)
		l.shared = (size_t)(in_h * in_w) * elem;
	return l;
}

static inline lmk_conv_args lmk_conv_args_of(const lmi_conv_call *c, LMK_PTR N, LMK_PTR F,
                                            LMK_PTR P)
{
	lmk_conv_args a = {N, F, P, (int)c->h, (int)c->w, (int)c->mh, (int)c->mw, (int)c->tile};
	return a;
}

#endif
