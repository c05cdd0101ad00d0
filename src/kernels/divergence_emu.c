/*
 * divergence_emu.c — the host code of the emulated divergence demo: the kernel of
 * body/divergence.h compiled for the emulator, its one launch, and the divergent region's lines.
 * ../cuda/divergence.cu makes the same launch.
 * Read next: body/divergence.h, divergence.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#include "kernels/body/divergence.h"

typedef struct div_args {
	const float *x;
	float *y;
	int pattern;
} div_args;

static void demo(void *p)
{
	div_args *a = p;
	divergence_demo(a->x, a->y, a->pattern);
}

lm_status lmi_emu_divergence(lmi_simt *s, int pattern, const float *x, float *y, int64_t n,
                             unsigned block)
{
	lmi_simt_array arrays[2] = {
		{.name = "x", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = (void *)x,
		 .length = n, .readonly = true},
		{.name = "y", .space = LM_SPACE_GLOBAL, .dtype = LM_FLOAT32, .data = y, .length = n},
	};
	div_args a = {x, y, pattern};
	lmi_simt_launch L = {
		.kernel = "divergence_demo",
		.grid = {(unsigned)(n / block), 1, 1},
		.block = {block, 1, 1},
		.entry = demo,
		.args = &a,
		.arrays = arrays,
		.narrays = 2,
	};
	lmi_simt_set_region(s, LMK_DIVERGENCE_REGION_BEGIN, LMK_DIVERGENCE_REGION_END);
	return lmi_simt_run(s, &L);
}
