/*
 * fused_emu.c — the host code of an emulated fused group: the kernel of body/fused.h compiled for
 * the emulator and the launch of body/fused_plan.h (as cuda/fused.cu makes it), each operand an
 * array of its own (outputs writable, inputs read-only) under the group's 2-D shape where it has
 * two dims. Read next: body/fused_plan.h, body/fused.h, fused.c.
 */
#include <math.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/fused.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_fused_args
LMI_EMU_KERNELS(LMK_FUSED_KERNELS, kernels)

lm_status lmi_emu_fused(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_fused_call *c = &((lmi_fused_run *)run)->c;
	const lmk_fused_prog *P = &c->prog;
	lmi_simt_array arrays[LMK_FUSED_OPS];
	lmk_fused_args a;
	memset(&a, 0, sizeof a);
	a.prog = *P;
	int n = 0;
	bool two = P->ndim == 2;
	for (int j = 0; j < P->nout + P->nin; j++) {
		bool out = j < P->nout;
		const char *name = c->name[j];
		bool dense = two && P->stride[j][1] == 1 && P->stride[j][0] == P->shape[1];
		arrays[n++] = lmi_emu_array(name, k->dtype, c->op[j], c->len[j], dense ? P->shape[0] : 1,
		                            dense ? P->shape[1] : c->len[j], !out);
		a.a[j] = c->op[j];
	}
	lmk_launch l = lmk_fused_launch(c);
	lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, &l, &a, arrays, n);
	return lmi_simt_run(s, &L);
}
