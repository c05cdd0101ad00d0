/*
 * spmv_emu.c — the host code of the emulated SpMV: the kernels of body/spmv.h compiled for the
 * emulator, and the launch of body/spmv_plan.h (as cuda/spmv.cu makes it), with the format's
 * arrays under the names the kernels give them, so the SpMV-layouts scene can tell which format's
 * array a load touched. COO's y is zeroed first (the atomics add into it).
 * Read next: body/spmv_plan.h, body/spmv.h, spmv.c.
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/spmv.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_spmv_args
LMI_EMU_KERNELS(LMK_SPMV_KERNELS, kernels)

lm_status lmi_emu_spmv(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_spmv_call *c = &((lmi_spmv_run *)run)->c;
	lmk_spmv_args a = {0};
	lmk_spmv_array list[LMK_SPMV_MAX_ARRAYS];
	lmi_simt_array arrays[LMK_SPMV_MAX_ARRAYS];
	int n = lmk_spmv_arrays(c, &a, list);
	for (int i = 0; i < n; i++) {
		const lmk_spmv_array *e = &list[i];
		arrays[i] = lmi_emu_array(e->name, e->index ? LM_INT32 : k->dtype, e->host, e->length,
		                          e->rows, e->cols, i < n - 1);
		*e->arg = (void *)e->host;
	}
	memset(c->y, 0, (size_t)c->m * lm_dtype_size(k->dtype));
	lmk_launch l = lmk_spmv_launch(c);
	lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, &l, &a, arrays, n);
	return lmi_simt_run(s, &L);
}
