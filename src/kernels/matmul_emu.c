/*
 * matmul_emu.c — the host code of the emulated matrix multiplications: the kernels of
 * body/matmul.h compiled for the emulator, and their one launch.
 *
 * Design: a 2-D grid of ceil(n / tile) x ceil(m / tile) blocks of tile x tile threads (x: columns,
 * y: rows, as in PMPP); the tiled version gets 2 tile^2 elements of dynamic shared memory. The
 * arrays carry their 2-D shapes for the tiles scene. ../cuda/matmul.cu makes the same launch.
 * Read next: body/matmul.h, matmul.c.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/patterns.h"

#define T float
#define KFN(name) LMK_CAT(name, _f32)
#include "kernels/body/matmul.h"
#undef T
#undef KFN
#define T double
#define KFN(name) LMK_CAT(name, _f64)
#include "kernels/body/matmul.h"
#undef T
#undef KFN

typedef struct matmul_args {
	const void *M, *N;
	void *P;
	unsigned m, k, n, tile;
} matmul_args;

static void naive_f32(void *p)
{
	matmul_args *a = p;
	matmul_naive_f32(a->M, a->N, a->P, a->m, a->k, a->n);
}
static void naive_f64(void *p)
{
	matmul_args *a = p;
	matmul_naive_f64(a->M, a->N, a->P, a->m, a->k, a->n);
}
static void tiled_f32(void *p)
{
	matmul_args *a = p;
	matmul_tiled_f32(a->M, a->N, a->P, a->m, a->k, a->n, a->tile);
}
static void tiled_f64(void *p)
{
	matmul_args *a = p;
	matmul_tiled_f64(a->M, a->N, a->P, a->m, a->k, a->n, a->tile);
}

lm_status lmi_emu_matmul(lmi_simt *s, const lmi_kcall *k, const void *a, const void *b, void *c,
                         int64_t m, int64_t kk, int64_t n, unsigned tile)
{
	bool dbl = k->dtype == LM_FLOAT64, tiled = k->algo == LMI_MATMUL_TILED;
	lmi_simt_array arrays[3] = {
		{.name = "M", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = (void *)a,
		 .length = m * kk, .rows = m, .cols = kk, .readonly = true},
		{.name = "N", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = (void *)b,
		 .length = kk * n, .rows = kk, .cols = n, .readonly = true},
		{.name = "P", .space = LM_SPACE_GLOBAL, .dtype = k->dtype, .data = c, .length = m * n,
		 .rows = m, .cols = n},
	};
	matmul_args args = {a, b, c, (unsigned)m, (unsigned)kk, (unsigned)n, tile};
	lmi_simt_layout layouts[2] = {{"Mds", tile, tile}, {"Nds", tile, tile}};
	lmi_simt_launch L = {
		.kernel = tiled ? "matmul_tiled" : "matmul_naive",
		.grid = {(unsigned)((n + tile - 1) / tile), (unsigned)((m + tile - 1) / tile), 1},
		.block = {tile, tile, 1},
		.dyn_shared = tiled ? 2 * (size_t)tile * tile * lm_dtype_size(k->dtype) : 0,
		.entry = tiled ? (dbl ? tiled_f64 : tiled_f32) : (dbl ? naive_f64 : naive_f32),
		.args = &args,
		.arrays = arrays,
		.narrays = 3,
		.layouts = layouts,
		.nlayouts = 2,
	};
	return lmi_simt_run(s, &L);
}
