/*
 * scan_emu.c — the host code of the emulated scans: the kernels of body/scan.h compiled for the
 * emulator, and the launches of a hierarchical scan, as a CUDA host program would make them.
 *
 * Design: a level scans n elements in sections of `section` elements, one block each. When there
 * is more than one section, every block also writes its total to S; the next level scans S in
 * place (the same kernel, inclusive), and scan_add_sums adds each section's predecessor totals.
 * The block sums are scanned with the same block size, except that a level whose section is a
 * single element (Kogge-Stone with block 1) uses blocks of 2 so that each level shrinks.
 * ../cuda/scan.cu makes the same launches on a GPU.
 * Read next: body/scan.h (the kernels), simt.h (the emulator), scan.c (the public call).
 */
#include <stdio.h>
#include <string.h>

#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/scan.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/scan.h"
#undef T
#undef KFN

/* The kernels' parameters, unpacked by the entry functions below (what cudaLaunchKernel does). */
typedef struct scan_args {
	const void *X;
	void *Y;
	void *S;
	unsigned n, coarsen, section;
	int exclusive;
} scan_args;

static void ks_f32(void *p)
{
	scan_args *a = p;
	scan_kogge_stone_f32(a->X, a->Y, a->n, a->exclusive, a->S);
}
static void ks_f64(void *p)
{
	scan_args *a = p;
	scan_kogge_stone_f64(a->X, a->Y, a->n, a->exclusive, a->S);
}
static void bk_f32(void *p)
{
	scan_args *a = p;
	scan_brent_kung_f32(a->X, a->Y, a->n, a->exclusive, a->S);
}
static void bk_f64(void *p)
{
	scan_args *a = p;
	scan_brent_kung_f64(a->X, a->Y, a->n, a->exclusive, a->S);
}
static void co_f32(void *p)
{
	scan_args *a = p;
	scan_coarsened_f32(a->X, a->Y, a->n, a->exclusive, a->S, a->coarsen);
}
static void co_f64(void *p)
{
	scan_args *a = p;
	scan_coarsened_f64(a->X, a->Y, a->n, a->exclusive, a->S, a->coarsen);
}
static void add_f32(void *p)
{
	scan_args *a = p;
	scan_add_sums_f32(a->Y, a->S, a->n, a->section);
}
static void add_f64(void *p)
{
	scan_args *a = p;
	scan_add_sums_f64(a->Y, a->S, a->n, a->section);
}

static void (*const block_scan[LMI_SCAN_ALGO_COUNT][2])(void *) = {
	[LMI_SCAN_KOGGE_STONE] = {ks_f32, ks_f64},
	[LMI_SCAN_BRENT_KUNG] = {bk_f32, bk_f64},
	[LMI_SCAN_HIERARCHICAL] = {co_f32, co_f64},
};
static const char *const block_scan_name[LMI_SCAN_ALGO_COUNT] = {
	[LMI_SCAN_KOGGE_STONE] = "scan_kogge_stone",
	[LMI_SCAN_BRENT_KUNG] = "scan_brent_kung",
	[LMI_SCAN_HIERARCHICAL] = "scan_coarsened",
};

static unsigned section_of(const lmi_kcall *k, unsigned block)
{
	switch (k->algo) {
	case LMI_SCAN_BRENT_KUNG: return 2 * block;
	case LMI_SCAN_HIERARCHICAL: return k->coarsen * block;
	default: return block;
	}
}

static lmi_simt_array global(const char *name, const void *data, int64_t n, lm_dtype dt, bool ro)
{
	return (lmi_simt_array){.name = name, .space = LM_SPACE_GLOBAL, .dtype = dt,
	                        .data = (void *)data, .length = n, .readonly = ro};
}

/* Scans n elements of X into Y (X == Y: in place). level 0 is the input; deeper levels scan the
 * block sums of the level above. */
static lm_status scan_level(lmi_simt *s, const lmi_kcall *k, const void *X, const char *xname,
                            void *Y, const char *yname, int64_t n, bool exclusive, int level)
{
	static const char *const sums_name[] = {"S", "S2", "S3", "S4", "S5", "S6", "S7", "S8"};
	size_t elem = lm_dtype_size(k->dtype);
	int d = k->dtype == LM_FLOAT64;
	unsigned block = k->block;
	if (level > 0 && section_of(k, block) < 2) block = 2; /* each level must shrink */
	unsigned section = section_of(k, block);
	int64_t nb = (n + section - 1) / section;
	const char *sname = sums_name[level < 8 ? level : 7];
	void *S = NULL;
	if (nb > 1 && !(S = lm_alloc((size_t)nb * elem)))
		return lmi_fail(LM_ERR_NOMEM, "%s: out of memory for %lld block sums", k->fname, (long long)nb);

	lmi_simt_array arrays[3];
	int na = 0;
	if (X != Y) arrays[na++] = global(xname, X, n, k->dtype, true);
	arrays[na++] = global(yname, Y, n, k->dtype, false);
	if (S) arrays[na++] = global(sname, S, nb, k->dtype, false);
	scan_args a = {.X = X, .Y = Y, .S = S, .n = (unsigned)n, .coarsen = k->coarsen,
	               .section = section, .exclusive = exclusive};
	lmi_simt_launch L = {
		.kernel = block_scan_name[k->algo],
		.grid = {(unsigned)nb, 1, 1},
		.block = {block, 1, 1},
		.dyn_shared = section * elem,
		.entry = block_scan[k->algo][d],
		.args = &a,
		.arrays = arrays,
		.narrays = na,
	};
	lm_status st = lmi_simt_run(s, &L);
	if (st == LM_OK && S) {
		st = scan_level(s, k, S, sname, S, sname, nb, false, level + 1);
		if (st == LM_OK) {
			lmi_simt_array add_arrays[2] = {global(yname, Y, n, k->dtype, false),
			                                global(sname, S, nb, k->dtype, true)};
			lmi_simt_launch A = {
				.kernel = "scan_add_sums",
				.grid = {(unsigned)(nb - 1), 1, 1},
				.block = {block, 1, 1},
				.entry = add_f32,
				.args = &a,
				.arrays = add_arrays,
				.narrays = 2,
			};
			A.entry = d ? add_f64 : add_f32;
			st = lmi_simt_run(s, &A);
		}
	}
	if (S) lm_free(S, (size_t)nb * elem);
	return st;
}

lm_status lmi_emu_scan(lmi_simt *s, const lmi_kcall *k, const void *x, void *out)
{
	return scan_level(s, k, x, "X", out, "Y", k->n, !k->inclusive, 0);
}
