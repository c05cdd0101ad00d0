/*
 * matmul_emu.c — the host code of the emulated matrix multiplications: the kernels of
 * body/matmul.h compiled for the emulator, and the launch of body/matmul_plan.h (as
 * cuda/matmul.cu makes it). The arrays carry their 2-D shapes for the tiles scene.
 * Read next: body/matmul_plan.h, body/matmul.h, matmul.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/matmul.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_matmul_args
LMI_EMU_KERNELS(LMK_MATMUL_KERNELS, kernels)

lm_status lmi_emu_matmul(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_matmul_call *c = &((lmi_matmul_run *)run)->c;
	lm_dtype dt = k->dtype;
	lmi_simt_array arrays[3] = {
		lmi_emu_array("M", dt, c->a, c->m * c->k, c->m, c->k, true),
		lmi_emu_array("N", dt, c->b, c->k * c->n, c->k, c->n, true),
		lmi_emu_array("P", dt, c->c, c->m * c->n, c->m, c->n, false),
	};
	lmk_matmul_args a = lmk_matmul_args_of(c, (void *)c->a, (void *)c->b, c->c);
	lmk_launch l = lmk_matmul_launch(c, lm_dtype_size(dt));
	lmi_simt_layout layouts[2] = {{"Mds", c->tile, c->tile}, {"Nds", c->tile, c->tile}};
	lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, &l, &a, arrays, 3);
	L.layouts = layouts;
	L.nlayouts = 2;
	return lmi_simt_run(s, &L);
}
