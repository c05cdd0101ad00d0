/*
 * streams_emu.c — the host code of the emulated streams: the vector add of body/vector_add.h
 * compiled for the emulator, launched once per segment on that segment's part of the vectors (as
 * the CUDA host code launches it in the segment's stream), each launch's modelled cycles kept for
 * the timeline (streams.c).
 * Read next: body/vector_add.h, streams.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#include "kernels/body/vector_add.h"

typedef struct add_args {
	const float *A, *B;
	float *C;
	unsigned n;
} add_args;

static void add(void *p)
{
	add_args *a = p;
	vector_add(a->A, a->B, a->C, a->n);
}

lm_status lmi_emu_vector_add(lmi_simt *s, const float *A, const float *B, float *C, int64_t n,
                             int segments, unsigned block, uint64_t *cycles)
{
	lmi_simt_array arrays[3] = {
		{.name = "A", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = (void *)A,
		 .length = n, .readonly = true},
		{.name = "B", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = (void *)B,
		 .length = n, .readonly = true},
		{.name = "C", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = C, .length = n},
	};
	for (int seg = 0; seg < segments; seg++) {
		int64_t lo = n * seg / segments, len = n * (seg + 1) / segments - lo;
		add_args a = {A + lo, B + lo, C + lo, (unsigned)len};
		lmi_simt_launch L = {
			.kernel = "vector_add",
			.grid = {(unsigned)((len + block - 1) / block), 1, 1},
			.block = {block, 1, 1},
			.entry = add,
			.args = &a,
			.arrays = arrays,
			.narrays = 3,
		};
		uint64_t before = lmi_simt_counters_get(s)->cycles;
		lm_status st = lmi_simt_run(s, &L);
		if (st) return st;
		cycles[seg] = lmi_simt_counters_get(s)->cycles - before;
	}
	return LM_OK;
}
