/*
 * cpu_dense.c — the CPU runs of the dense patterns: matrix multiplication (naive and tiled) and
 * the 2-D convolution.
 *
 * Matmul, naive: the textbook triple loop, one dot product per element of C; B is read down a
 * column (a stride of n elements), so every load of B touches another cache line: the CPU's form
 * of the uncoalesced, untiled GPU kernel. Tiled: the CPU's form of the shared-memory tiles, with
 * the lecture's tile width: C in tile x tile blocks, each gaining, for k in slices of tile, the
 * product of a tile of A and a tile of B. The three tiles (3 x 4 KiB of floats at tile 32) stay
 * in L1 while they are used, as the GPU's tiles stay on chip; each element of B's tile is loaded
 * from memory once per tile row of C instead of once per row. Tile 1 is the naive loop with a
 * call per multiply-add; larger tiles show what reuse buys, up to L1's size. Not a BLAS: no
 * packing, no register blocking. The tiles may be rectangular (tile_m x tile_n of C, k in slices
 * of tile_k) and the three tile loops may come in any of six orders: the knobs lm.tune searches
 * (docs/tune.md). Whatever the tiling, each element of C adds its products in increasing k.
 * Convolution: output tiles (default: one per row, the whole row), in each the mask's rows and
 * columns and the tile's rows in the order asked, a vectorised sweep along a row segment inside
 * (only the columns whose input lies in the image: ghost cells cost nothing).
 * OpenMP over strips of C (matmul) or output tiles (conv2d); stop is polled per strip or tile.
 * Read next: body/matmul.h and body/conv2d.h (the same patterns on a GPU), cpu_loops.h.
 */
#include <string.h>

#include "kernels/cpu_simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef _OPENMP
#define OMP_FOR_DYNAMIC _Pragma("omp parallel for schedule(dynamic) num_threads(nt)")
#define OMP_FOR_STATIC _Pragma("omp parallel for schedule(static) num_threads(nt)")
#else
#define OMP_FOR_DYNAMIC
#define OMP_FOR_STATIC
#endif

/* ---------------------------------------------------------------- naive */

#define NAIVE(T, name)                                                                             \
	int name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n,                    \
	         const atomic_int *stop)                                                           \
	{                                                                                          \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		OMP_FOR_STATIC                                                                     \
		for (int64_t i = 0; i < m; i++) {                                                  \
			if (quit || lmi_cpu_stopped(stop)) {                                               \
				quit = 1;                                                          \
				continue;                                                          \
			}                                                                          \
			for (int64_t j = 0; j < n; j++) {                                          \
				T s = 0;                                                           \
				for (int64_t p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];  \
				c[i * n + j] = s;                                                  \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
NAIVE(float, lmi_cpu_matmul_naive_f32)
NAIVE(double, lmi_cpu_matmul_naive_f64)

/* ---------------------------------------------------------------- tiled */

const char *const lmi_cpu_matmul_orders[LMI_MM_ORDER_COUNT + 1] = {
	[LMI_MM_IJK] = "ijk", [LMI_MM_IKJ] = "ikj", [LMI_MM_JIK] = "jik",
	[LMI_MM_JKI] = "jki", [LMI_MM_KIJ] = "kij", [LMI_MM_KJI] = "kji", NULL,
};

/* The tile loops of an order: dims d[0] (outermost) .. d[2], each 0 (i: rows of C), 1 (j: its
 * columns) or 2 (k); the tile along each dim (ts) and the number of tiles (nb). */
typedef struct mm_loops {
	int d[3];
	int64_t len[3], ts[3], nb[3];
} mm_loops;

static mm_loops mm_loops_of(int64_t m, int64_t k, int64_t n, const lmi_cpu_mm_tiling *t)
{
	mm_loops l = {.len = {m, n, k}, .ts = {t->tm, t->tn, t->tk}};
	const char *name = lmi_cpu_matmul_orders[t->order];
	for (int x = 0; x < 3; x++) {
		l.d[x] = name[x] == 'i' ? 0 : name[x] == 'j' ? 1 : 2;
		if (l.ts[x] < 1) l.ts[x] = 1;
		l.nb[x] = (l.len[x] + l.ts[x] - 1) / l.ts[x];
	}
	return l;
}

/* One step of every order: the tile of C at tile indices at[0] (row), at[1] (column) gains the
 * product of A's tile to its left and B's tile above it, in slice at[2] of k. The path's tile loop
 * (cpu_loops.h) vectorises along the tile's columns. */
#define TILE_STEP(T, tile_fn)                                                                      \
	static void mm_step_##T(const lmi_cpu_loops *L, const mm_loops *l, const int64_t at[3],    \
	                        const T *a, const T *b, T *c)                                      \
	{                                                                                          \
		int64_t i0 = at[0] * l->ts[0], j0 = at[1] * l->ts[1], p0 = at[2] * l->ts[2];       \
		int64_t m = l->len[0], n = l->len[1], k = l->len[2];                               \
		L->tile_fn(c + i0 * n + j0, n, a + i0 * k + p0, k, b + p0 * n + j0, n,             \
		           m - i0 < l->ts[0] ? m - i0 : l->ts[0],                                  \
		           k - p0 < l->ts[2] ? k - p0 : l->ts[2],                                  \
		           n - j0 < l->ts[1] ? n - j0 : l->ts[1]);                                 \
	}
TILE_STEP(float, tile_f32)
TILE_STEP(double, tile_f64)

/* C's strip number s along dim (0: a block of rows, 1: a block of columns) set to zero. */
#define ZERO_STRIP(T)                                                                              \
	static void zero_strip_##T(const mm_loops *l, int dim, int64_t s, T *c)                    \
	{                                                                                          \
		int64_t m = l->len[0], n = l->len[1], at = s * l->ts[dim];                         \
		int64_t len = l->len[dim] - at < l->ts[dim] ? l->len[dim] - at : l->ts[dim];       \
		if (dim == 0) {                                                                    \
			memset(c + at * n, 0, (size_t)(len * n) * sizeof(T));                      \
			return;                                                                    \
		}                                                                                  \
		for (int64_t i = 0; i < m; i++)                                                    \
			memset(c + i * n + at, 0, (size_t)len * sizeof(T));                        \
	}
ZERO_STRIP(float)
ZERO_STRIP(double)

/* i or j outermost: a task is one strip of C (a block of rows or of columns), zeroed, then
 * finished by the inner two loops; tasks never share a tile of C. k outermost: C zeroed first,
 * then for each slice of k (in order: each element's sum keeps its order) a parallel loop over
 * the middle loop's strips, the implicit barrier of `omp for` between slices. */
#define TILED_ORD(T, name)                                                                         \
	int name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n,                    \
	         const lmi_cpu_mm_tiling *t, const atomic_int *stop)                               \
	{                                                                                          \
		const lmi_cpu_loops *L = lmi_cpu_loops_get();                                      \
		mm_loops l = mm_loops_of(m, k, n, t);                                              \
		const int d0 = l.d[0], d1 = l.d[1], d2 = l.d[2];                                   \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		if (d0 != 2) {                                                                     \
			OMP_FOR_DYNAMIC                                                            \
			LMI_FOR_BLOCKS_UNTIL_STOPPED(s, l.nb[d0], quit, stop) {                    \
				int64_t at[3];                                                     \
				at[d0] = s;                                                        \
				zero_strip_##T(&l, d0, s, c);                                      \
				for (at[d1] = 0; at[d1] < l.nb[d1]; at[d1]++)                      \
					for (at[d2] = 0; at[d2] < l.nb[d2]; at[d2]++)              \
						mm_step_##T(L, &l, at, a, b, c);                   \
			}                                                                          \
			return quit;                                                               \
		}                                                                                  \
		OMP_FOR_STATIC                                                                     \
		for (int64_t s = 0; s < l.nb[0]; s++) zero_strip_##T(&l, 0, s, c);                 \
		for (int64_t p = 0; p < l.nb[2] && !quit; p++) {                                   \
			OMP_FOR_STATIC                                                             \
			LMI_FOR_BLOCKS_UNTIL_STOPPED(s, l.nb[d1], quit, stop) {                    \
				int64_t at[3];                                                     \
				at[2] = p, at[d1] = s;                                             \
				for (at[d2] = 0; at[d2] < l.nb[d2]; at[d2]++)                      \
					mm_step_##T(L, &l, at, a, b, c);                           \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
TILED_ORD(float, lmi_cpu_matmul_tiled_ord_f32)
TILED_ORD(double, lmi_cpu_matmul_tiled_ord_f64)

/* The lecture's square tiles in the default order. */
int lmi_cpu_matmul_tiled_f32(const float *a, const float *b, float *c, int64_t m, int64_t k,
                             int64_t n, int64_t tile, const atomic_int *stop)
{
	lmi_cpu_mm_tiling t = {tile, tile, tile, LMI_MM_IJK};
	return lmi_cpu_matmul_tiled_ord_f32(a, b, c, m, k, n, &t, stop);
}

int lmi_cpu_matmul_tiled_f64(const double *a, const double *b, double *c, int64_t m, int64_t k,
                             int64_t n, int64_t tile, const atomic_int *stop)
{
	lmi_cpu_mm_tiling t = {tile, tile, tile, LMI_MM_IJK};
	return lmi_cpu_matmul_tiled_ord_f64(a, b, c, m, k, n, &t, stop);
}

/* ---------------------------------------------------------------- 2-D convolution */

const char *const lmi_cpu_conv2d_orders[LMI_CONV_ORD_COUNT + 1] = {
	[LMI_CONV_ORD_TILE_ROW_MASK] = "tile-row-mask",
	[LMI_CONV_ORD_TILE_MASK_ROW] = "tile-mask-row",
	[LMI_CONV_ORD_MASK_TILE_ROW] = "mask-tile-row",
	NULL,
};

/* The output tiles: th x tw each (the last ones cut at the image's edge), nx across. */
typedef struct conv_tiles {
	int64_t h, w, mh, mw, ry, rx, th, tw, nx, count;
} conv_tiles;

static conv_tiles conv_tiles_of(int64_t h, int64_t w, int64_t mh, int64_t mw,
                                const lmi_cpu_conv_tiling *t)
{
	conv_tiles g = {h, w, mh, mw, (mh - 1) / 2, (mw - 1) / 2, 1, w, 0, 0};
	if (t) g.th = t->th, g.tw = t->tw;
	if (g.th < 1) g.th = 1;
	if (g.tw < 1) g.tw = w;
	g.nx = (w + g.tw - 1) / g.tw;
	g.count = g.nx * ((h + g.th - 1) / g.th);
	return g;
}

/* The vector loop of every order, out[x] += f * in[x] over one row segment of a tile, for mask
 * element (i, j): only the columns whose input lies in the image (ghost cells cost nothing). */
#define CONV_SWEEP(T)                                                                              \
	static void sweep_##T(const conv_tiles *g, const T *img, const T *mask, T *out, int64_t y, \
	                      int64_t i, int64_t j, int64_t x0, int64_t x1)                        \
	{                                                                                          \
		int64_t yy = y + i - g->ry, dx = j - g->rx;                                        \
		if (yy < 0 || yy >= g->h) return;                                                  \
		int64_t xa = x0 > -dx ? x0 : -dx, xb = x1 < g->w - dx ? x1 : g->w - dx;            \
		T f = mask[i * g->mw + j];                                                         \
		T *restrict o = out + y * g->w + xa;                                               \
		const T *restrict in = img + yy * g->w + xa + dx;                                  \
		for (int64_t x = 0; x < xb - xa; x++) o[x] += f * in[x];                           \
	}
CONV_SWEEP(float)
CONV_SWEEP(double)

/* Tile number s of g: rows [y0, y1), columns [x0, x1), zeroed when zero is set; then its rows and
 * the mask in the order asked (tile-row-mask or tile-mask-row; mask-tile-row passes one mask
 * element, i and j, and no zeroing). */
#define CONV_TILE(T)                                                                               \
	static void conv_tile_##T(const conv_tiles *g, const T *img, const T *mask, T *out,        \
	                          int64_t s, int order, int64_t mi, int64_t mj)                    \
	{                                                                                          \
		int64_t y0 = s / g->nx * g->th, x0 = s % g->nx * g->tw;                            \
		int64_t y1 = y0 + g->th < g->h ? y0 + g->th : g->h;                                \
		int64_t x1 = x0 + g->tw < g->w ? x0 + g->tw : g->w;                                \
		if (order == LMI_CONV_ORD_MASK_TILE_ROW) {                                         \
			for (int64_t y = y0; y < y1; y++)                                          \
				sweep_##T(g, img, mask, out, y, mi, mj, x0, x1);                   \
			return;                                                                    \
		}                                                                                  \
		for (int64_t y = y0; y < y1; y++)                                                  \
			memset(out + y * g->w + x0, 0, (size_t)(x1 - x0) * sizeof(T));             \
		if (order == LMI_CONV_ORD_TILE_ROW_MASK)                                           \
			for (int64_t y = y0; y < y1; y++)                                          \
				for (int64_t i = 0; i < g->mh; i++)                                \
					for (int64_t j = 0; j < g->mw; j++)                        \
						sweep_##T(g, img, mask, out, y, i, j, x0, x1);     \
		else                                                                               \
			for (int64_t i = 0; i < g->mh; i++)                                        \
				for (int64_t j = 0; j < g->mw; j++)                                \
					for (int64_t y = y0; y < y1; y++)                          \
						sweep_##T(g, img, mask, out, y, i, j, x0, x1);     \
	}
CONV_TILE(float)
CONV_TILE(double)

/* OpenMP over the tiles (each thread owns whole tiles of the output); mask-tile-row zeroes the
 * output first, then runs a parallel loop over the tiles per mask element, in the mask's order. */
#define CONV(T, name)                                                                              \
	int name(const T *img, const T *mask, T *out, int64_t h, int64_t w, int64_t mh,            \
	         int64_t mw, const lmi_cpu_conv_tiling *t, const atomic_int *stop)                 \
	{                                                                                          \
		conv_tiles g = conv_tiles_of(h, w, mh, mw, t);                                     \
		int order = t ? t->order : LMI_CONV_ORD_TILE_ROW_MASK;                             \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		if (order != LMI_CONV_ORD_MASK_TILE_ROW) {                                         \
			OMP_FOR_STATIC                                                             \
			LMI_FOR_BLOCKS_UNTIL_STOPPED(s, g.count, quit, stop) {                     \
				conv_tile_##T(&g, img, mask, out, s, order, 0, 0);                 \
			}                                                                          \
			return quit;                                                               \
		}                                                                                  \
		OMP_FOR_STATIC                                                                     \
		for (int64_t y = 0; y < h; y++) memset(out + y * w, 0, (size_t)w * sizeof(T));     \
		for (int64_t e = 0; e < mh * mw && !quit; e++) {                                   \
			OMP_FOR_STATIC                                                             \
			LMI_FOR_BLOCKS_UNTIL_STOPPED(s, g.count, quit, stop) {                     \
				conv_tile_##T(&g, img, mask, out, s, order, e / mw, e % mw);       \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
CONV(float, lmi_cpu_conv2d_tiled_f32)
CONV(double, lmi_cpu_conv2d_tiled_f64)

/* The default: a tile per output row (the whole row), the mask inside. */
int lmi_cpu_conv2d_f32(const float *img, const float *mask, float *out, int64_t h, int64_t w,
                       int64_t mh, int64_t mw, const atomic_int *stop)
{
	return lmi_cpu_conv2d_tiled_f32(img, mask, out, h, w, mh, mw, NULL, stop);
}

int lmi_cpu_conv2d_f64(const double *img, const double *mask, double *out, int64_t h, int64_t w,
                       int64_t mh, int64_t mw, const atomic_int *stop)
{
	return lmi_cpu_conv2d_tiled_f64(img, mask, out, h, w, mh, mw, NULL, stop);
}
