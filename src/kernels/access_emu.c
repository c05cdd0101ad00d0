/*
 * access_emu.c — the host code of the emulated memory-access demos: the kernels of body/access.h
 * compiled for the emulator, and the launch of body/access_plan.h (as cuda/access.cu makes it),
 * with x and y under their 2-D shapes and the transpose's tile under its (TILE, pitch) layout.
 * Read next: body/access_plan.h, body/access.h, access.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/access.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_access_args
LMI_EMU_KERNELS(LMK_ACCESS_KERNELS, kernels)

lm_status lmi_emu_access(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_access_call *c = &((lmi_access_run *)run)->c;
	lm_dtype dt = k->dtype;
	bool transpose = c->kind >= LMI_ACCESS_TRANSPOSE_NAIVE;
	int64_t out = lmk_access_out_len(c);
	lmi_simt_array arrays[2] = {
		lmi_emu_array("x", dt, c->x, c->rows * c->cols, c->rows, c->cols, true),
		lmi_emu_array("y", dt, c->y, out, transpose ? c->cols : 1, transpose ? c->rows : out,
		              false),
	};
	lmk_access_args a = lmk_access_args_of(c, (void *)c->x, c->y);
	lmk_launch l = lmk_access_launch(c);
	int64_t pitch = LMK_ACCESS_TILE + (c->kind == LMI_ACCESS_TRANSPOSE_PADDED);
	lmi_simt_layout tile = {"tile", LMK_ACCESS_TILE, pitch};
	lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, &l, &a, arrays, 2);
	L.layouts = &tile;
	L.nlayouts = 1;
	return lmi_simt_run(s, &L);
}
