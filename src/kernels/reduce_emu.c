/*
 * reduce_emu.c — the host code of the emulated reductions: the kernels of body/reduce.h compiled
 * for the emulator, and the launch of body/reduce_plan.h (as cuda/reduce.cu makes it).
 * Read next: body/reduce_plan.h, body/reduce.h (the kernels), reduce.c (the public call).
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define LMK_BODY "kernels/body/reduce.h"
#include "kernels/body/both_types.h"

#define LMK_ARGS lmk_reduce_args
LMI_EMU_KERNELS(LMK_REDUCE_KERNELS, kernels)

lm_status lmi_emu_reduce(lmi_simt *s, const lmi_kcall *k, void *run)
{
	const lmi_reduce_call *c = &((lmi_reduce_run *)run)->c;
	size_t elem = lm_dtype_size(k->dtype);
	lmk_reduce_plan p;
	lmk_reduce_plan_make(&p, c, elem);
	void *input = (void *)c->x;
	if (p.in_place) {
		if (!(input = lm_alloc((size_t)p.len * elem)))
			return lmi_fail(LM_ERR_NOMEM, "%s: out of memory for a copy of the input", k->fname);
		memcpy(input, c->x, (size_t)c->n * elem);
		memset((char *)input + (size_t)c->n * elem, 0, (size_t)(p.len - c->n) * elem);
	}
	memset(c->y, 0, elem);
	lmi_simt_array arrays[2] = {
		lmi_emu_array("input", k->dtype, input, p.len, 0, 0, !p.in_place),
		lmi_emu_array("output", k->dtype, c->y, 1, 0, 0, false),
	};
	lmk_reduce_args a = {input, c->y, (unsigned)c->n, c->coarsen};
	lmi_simt_launch L = lmi_emu_launch(kernels, c->is_double, &p.launch, &a, arrays, 2);
	lm_status st = lmi_simt_run(s, &L);
	if (p.in_place) lm_free(input, (size_t)p.len * elem);
	return st;
}
