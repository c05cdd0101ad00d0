/*
 * histogram_emu.c — the host code of the emulated histograms: the kernels of body/histogram.h
 * compiled for the emulator (bytes and int32 bin indices), and their one launch.
 *
 * Design: a grid of ceil(n / (block * coarsen)) blocks, so each thread handles about `coarsen`
 * elements; the privatized versions get bins * 4 bytes of dynamic shared memory (at most 16 KiB
 * for 4096 bins: every bin count fits). The global histogram is zeroed first (cudaMemset on a GPU).
 * ../cuda/histogram.cu makes the same launch.
 * Read next: body/histogram.h (the kernels), histogram.c (the public call).
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define IT unsigned char
#define KFN(name) LMK_CAT(name, _u8)
#include "kernels/body/histogram.h"
#undef IT
#undef KFN
#define IT int
#define KFN(name) LMK_CAT(name, _i32)
#include "kernels/body/histogram.h"
#undef IT
#undef KFN

typedef struct hist_args {
	const void *data;
	unsigned n;
	unsigned *histo;
	unsigned bins, coarsen;
	int scaled;
} hist_args;

static void global_u8(void *p)
{
	hist_args *a = p;
	histogram_global_atomic_u8(a->data, a->n, a->histo, a->bins, a->scaled);
}
static void global_i32(void *p)
{
	hist_args *a = p;
	histogram_global_atomic_i32(a->data, a->n, a->histo, a->bins, a->scaled);
}
static void privatized_u8(void *p)
{
	hist_args *a = p;
	histogram_privatized_u8(a->data, a->n, a->histo, a->bins, a->scaled);
}
static void privatized_i32(void *p)
{
	hist_args *a = p;
	histogram_privatized_i32(a->data, a->n, a->histo, a->bins, a->scaled);
}
static void aggregated_u8(void *p)
{
	hist_args *a = p;
	histogram_aggregated_u8(a->data, a->n, a->histo, a->bins, a->scaled, a->coarsen);
}
static void aggregated_i32(void *p)
{
	hist_args *a = p;
	histogram_aggregated_i32(a->data, a->n, a->histo, a->bins, a->scaled, a->coarsen);
}

static void (*const kernels[LMI_HIST_ALGO_COUNT][2])(void *) = {
	[LMI_HIST_GLOBAL_ATOMIC] = {global_u8, global_i32},
	[LMI_HIST_PRIVATIZED] = {privatized_u8, privatized_i32},
	[LMI_HIST_AGGREGATED] = {aggregated_u8, aggregated_i32},
};
static const char *const kernel_name[LMI_HIST_ALGO_COUNT] = {
	[LMI_HIST_GLOBAL_ATOMIC] = "histogram_global_atomic",
	[LMI_HIST_PRIVATIZED] = "histogram_privatized",
	[LMI_HIST_AGGREGATED] = "histogram_aggregated",
};

lm_status lmi_emu_histogram(lmi_simt *s, const lmi_kcall *k, const void *data, bool is_u8,
                            bool scaled, unsigned bins, uint32_t *histo)
{
	memset(histo, 0, bins * sizeof *histo);
	int64_t per_block = (int64_t)k->block * k->coarsen;
	int64_t nb = (k->n + per_block - 1) / per_block;
	lmi_simt_array arrays[2] = {
		{.name = "data", .space = LM_SPACE_GLOBAL, .dtype = is_u8 ? LM_UINT8 : LM_INT32,
		 .data = (void *)data, .length = k->n, .readonly = true},
		{.name = "histo", .space = LM_SPACE_GLOBAL, .dtype = LM_INT32, .data = histo,
		 .length = bins},
	};
	hist_args a = {.data = data, .n = (unsigned)k->n, .histo = histo, .bins = bins,
	               .coarsen = k->coarsen, .scaled = scaled};
	lmi_simt_launch L = {
		.kernel = kernel_name[k->algo],
		.grid = {(unsigned)nb, 1, 1},
		.block = {k->block, 1, 1},
		.dyn_shared = k->algo == LMI_HIST_GLOBAL_ATOMIC ? 0 : bins * sizeof(unsigned),
		.entry = kernels[k->algo][!is_u8],
		.args = &a,
		.arrays = arrays,
		.narrays = 2,
	};
	return lmi_simt_run(s, &L);
}
