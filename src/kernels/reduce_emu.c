/*
 * reduce_emu.c — the host code of the emulated reductions: the kernels of body/reduce.h compiled
 * for the emulator, and their one launch.
 *
 * Design: one block per segment (2*block elements, 2*coarsen*block when coarsened), each adding its
 * partial sum to output[0] with an atomicAdd. The in-place versions (naive, convergent) work on a
 * copy of the input padded with zeros to whole segments, as the textbook's kernels assume; the
 * shared-memory versions read the input directly and treat elements past the end as 0.
 * ../cuda/reduce.cu makes the same launch on a GPU.
 * Read next: body/reduce.h (the kernels), reduce.c (the public call).
 */
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/reduce.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/reduce.h"
#undef T
#undef KFN

typedef struct reduce_args {
	void *input;
	void *output;
	unsigned n, coarsen;
} reduce_args;

static void naive_f32(void *p)
{
	reduce_args *a = p;
	reduce_naive_f32(a->input, a->output);
}
static void naive_f64(void *p)
{
	reduce_args *a = p;
	reduce_naive_f64(a->input, a->output);
}
static void convergent_f32(void *p)
{
	reduce_args *a = p;
	reduce_convergent_f32(a->input, a->output);
}
static void convergent_f64(void *p)
{
	reduce_args *a = p;
	reduce_convergent_f64(a->input, a->output);
}
static void shared_f32(void *p)
{
	reduce_args *a = p;
	reduce_shared_f32(a->input, a->output, a->n);
}
static void shared_f64(void *p)
{
	reduce_args *a = p;
	reduce_shared_f64(a->input, a->output, a->n);
}
static void coarsened_f32(void *p)
{
	reduce_args *a = p;
	reduce_coarsened_f32(a->input, a->output, a->n, a->coarsen);
}
static void coarsened_f64(void *p)
{
	reduce_args *a = p;
	reduce_coarsened_f64(a->input, a->output, a->n, a->coarsen);
}

static void (*const kernels[LMI_REDUCE_ALGO_COUNT][2])(void *) = {
	[LMI_REDUCE_NAIVE] = {naive_f32, naive_f64},
	[LMI_REDUCE_CONVERGENT] = {convergent_f32, convergent_f64},
	[LMI_REDUCE_SHARED] = {shared_f32, shared_f64},
	[LMI_REDUCE_COARSENED] = {coarsened_f32, coarsened_f64},
};
static const char *const kernel_name[LMI_REDUCE_ALGO_COUNT] = {
	[LMI_REDUCE_NAIVE] = "reduce_naive",
	[LMI_REDUCE_CONVERGENT] = "reduce_convergent",
	[LMI_REDUCE_SHARED] = "reduce_shared",
	[LMI_REDUCE_COARSENED] = "reduce_coarsened",
};

lm_status lmi_emu_reduce(lmi_simt *s, const lmi_kcall *k, const void *x, void *out)
{
	size_t elem = lm_dtype_size(k->dtype);
	bool in_place = k->algo == LMI_REDUCE_NAIVE || k->algo == LMI_REDUCE_CONVERGENT;
	int64_t segment = 2 * (int64_t)k->block * (k->algo == LMI_REDUCE_COARSENED ? k->coarsen : 1);
	int64_t nb = (k->n + segment - 1) / segment;
	int64_t len = in_place ? nb * segment : k->n;
	void *input = (void *)x;
	if (in_place) {
		if (!(input = lm_alloc((size_t)len * elem)))
			return lmi_fail(LM_ERR_NOMEM, "%s: out of memory for a copy of the input", k->fname);
		memcpy(input, x, (size_t)k->n * elem);
		memset((char *)input + (size_t)k->n * elem, 0, (size_t)(len - k->n) * elem);
	}
	memset(out, 0, elem);
	lmi_simt_array arrays[2] = {
		{.name = "input", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = input,
		 .length = len, .readonly = !in_place},
		{.name = "output", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = out, .length = 1},
	};
	reduce_args a = {.input = input, .output = out, .n = (unsigned)k->n, .coarsen = k->coarsen};
	lmi_simt_launch L = {
		.kernel = kernel_name[k->algo],
		.grid = {(unsigned)nb, 1, 1},
		.block = {k->block, 1, 1},
		.dyn_shared = in_place ? 0 : k->block * elem,
		.entry = kernels[k->algo][k->dtype == LM_FLOAT64],
		.args = &a,
		.arrays = arrays,
		.narrays = 2,
	};
	lm_status st = lmi_simt_run(s, &L);
	if (in_place) lm_free(input, (size_t)len * elem);
	return st;
}
