/*
 * divergence_emu.c — the host code of the emulated divergence demo: the kernel of
 * body/divergence.h compiled for the emulator, the launch of body/divergence_plan.h (as
 * cuda/divergence.cu makes it), and the divergent region's lines.
 * Read next: body/divergence_plan.h, body/divergence.h, divergence.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#include "kernels/body/divergence.h"

#define LMK_ARGS lmk_divergence_args
#define LMK_SFX0 /* one type: no suffix */
#define LMK_SFX1
LMI_EMU_KERNELS(LMK_DIVERGENCE_KERNELS, kernels)

lm_status lmi_emu_divergence(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_divergence_call *c = &((lmi_divergence_run *)run)->c;
	int64_t n = c->warps * 32;
	(void)k;
	lmi_simt_array arrays[2] = {
		lmi_emu_array("x", LM_FLOAT32, c->x, n, 0, 0, true),
		lmi_emu_array("y", LM_FLOAT32, c->y, n, 0, 0, false),
	};
	lmk_divergence_args a = {(void *)c->x, c->y, c->pattern};
	lmk_launch l = lmk_divergence_launch(c);
	lmi_simt_launch L = lmi_emu_launch(kernels, 0, &l, &a, arrays, 2);
	lmi_simt_set_region(s, LMK_DIVERGENCE_REGION_BEGIN, LMK_DIVERGENCE_REGION_END);
	return lmi_simt_run(s, &L);
}
