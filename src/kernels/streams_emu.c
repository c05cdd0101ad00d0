/*
 * streams_emu.c — the host code of the emulated streams: the vector add of body/vector_add.h
 * compiled for the emulator, launched once per segment of body/streams_plan.h on that segment's
 * part of the vectors (as the CUDA host code launches it in the segment's stream), each launch's
 * modelled cycles kept for the timeline (streams.c).
 * Read next: body/streams_plan.h, body/vector_add.h, streams.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#include "kernels/body/vector_add.h"

#define LMK_ARGS lmk_add_args
#define LMK_SFX0 /* one type: no suffix */
#define LMK_SFX1
LMI_EMU_KERNELS(LMK_STREAMS_KERNELS, kernels)

lm_status lmi_emu_vector_add(lmi_simt *s, const lmi_kcall *k, void *run)
{
	lmi_streams_run *r = run;
	const lmi_streams_call *c = &r->c;
	(void)k;
	lmi_simt_array arrays[3] = {
		lmi_emu_array("A", LM_FLOAT32, c->a, c->n, 0, 0, true),
		lmi_emu_array("B", LM_FLOAT32, c->b, c->n, 0, 0, true),
		lmi_emu_array("C", LM_FLOAT32, c->c, c->n, 0, 0, false),
	};
	for (int seg = 0; seg < c->segments; seg++) {
		int64_t lo, len;
		lmk_segment(c, seg, &lo, &len);
		lmk_add_args a = {(void *)(c->a + lo), (void *)(c->b + lo), c->c + lo, (unsigned)len};
		lmk_launch l = lmk_segment_launch(c, len);
		lmi_simt_launch L = lmi_emu_launch(kernels, 0, &l, &a, arrays, 3);
		uint64_t before = lmi_simt_counters_get(s)->cycles;
		lm_status st = lmi_simt_run(s, &L);
		if (st) return st;
		r->cycles[seg] = lmi_simt_counters_get(s)->cycles - before;
	}
	return LM_OK;
}
