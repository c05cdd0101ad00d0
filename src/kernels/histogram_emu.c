/*
 * histogram_emu.c — the host code of the emulated histograms: the kernels of body/histogram.h
 * compiled for the emulator (bytes and int32 bin indices), and the launch of
 * body/histogram_plan.h (as cuda/histogram.cu makes it).
 * Read next: body/histogram_plan.h, body/histogram.h (the kernels), histogram.c (the public call).
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_T0 unsigned char
#define LMK_T1 int
#define LMK_SFX0 _u8
#define LMK_SFX1 _i32
#define LMK_BODY "kernels/body/histogram.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_hist_args
LMI_EMU_KERNELS(LMK_HIST_KERNELS, kernels)

lm_status lmi_emu_histogram(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_hist_call *c = &((lmi_hist_run *)run)->c;
	(void)k;
	memset(c->histo, 0, c->bins * sizeof *c->histo);
	lmi_simt_array arrays[2] = {
		lmi_emu_array("data", c->is_u8 ? LM_UINT8 : LM_INT32, c->data, c->n, 0, 0, true),
		lmi_emu_array("histo", LM_INT32, c->histo, c->bins, 0, 0, false),
	};
	lmk_hist_args a = lmk_hist_args_of(c, (void *)c->data, c->histo);
	lmk_launch l = lmk_hist_launch(c);
	lmi_simt_launch L = lmi_emu_launch(kernels, !c->is_u8, &l, &a, arrays, 2);
	return lmi_simt_run(s, &L);
}
