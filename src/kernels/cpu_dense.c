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
 * packing, no register blocking.
 * Convolution: for each output row, the mask's rows and columns outside, a vectorised sweep along
 * the row inside (only the columns whose input lies in the image: ghost cells cost nothing).
 * OpenMP over rows (rows of tiles for matmul); stop is polled per row or row of tiles.
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

/* A task is one row of tiles of C: zeroed, then for each tile of C in it, the products of the
 * tiles of A (to its left) and B (above it) added in k order; the path's tile loop (cpu_loops.h)
 * vectorises along the tile's columns. */
#define TILED(T, name, tile_fn)                                                                    \
	int name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n, int64_t tile,      \
	         const atomic_int *stop)                                                           \
	{                                                                                          \
		const lmi_cpu_loops *L = lmi_cpu_loops_get();                                      \
		int64_t t = tile < 1 ? 1 : tile, nblocks = (m + t - 1) / t;                        \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		OMP_FOR_DYNAMIC                                                                    \
		for (int64_t blk = 0; blk < nblocks; blk++) {                                      \
			if (quit || lmi_cpu_stopped(stop)) {                                               \
				quit = 1;                                                          \
				continue;                                                          \
			}                                                                          \
			int64_t i0 = blk * t, ti = m - i0 < t ? m - i0 : t;                        \
			memset(c + i0 * n, 0, (size_t)(ti * n) * sizeof(T));                      \
			for (int64_t j0 = 0; j0 < n; j0 += t) {                                    \
				int64_t tj = n - j0 < t ? n - j0 : t;                              \
				for (int64_t p0 = 0; p0 < k; p0 += t)                              \
					L->tile_fn(c + i0 * n + j0, n, a + i0 * k + p0, k,         \
					           b + p0 * n + j0, n, ti, k - p0 < t ? k - p0 : t, tj); \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
TILED(float, lmi_cpu_matmul_tiled_f32, tile_f32)
TILED(double, lmi_cpu_matmul_tiled_f64, tile_f64)

/* ---------------------------------------------------------------- 2-D convolution */

#define CONV(T, name)                                                                              \
	int name(const T *img, const T *mask, T *out, int64_t h, int64_t w, int64_t mh,            \
	         int64_t mw, const atomic_int *stop)                                               \
	{                                                                                          \
		int64_t ry = (mh - 1) / 2, rx = (mw - 1) / 2;                                      \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		OMP_FOR_STATIC                                                                     \
		for (int64_t y = 0; y < h; y++) {                                                  \
			if (quit || ((y & 63) == 0 && lmi_cpu_stopped(stop))) {                            \
				quit = 1;                                                          \
				continue;                                                          \
			}                                                                          \
			T *restrict o = out + y * w;                                               \
			memset(o, 0, (size_t)w * sizeof(T));                                       \
			for (int64_t i = 0; i < mh; i++) {                                         \
				int64_t yy = y + i - ry;                                           \
				if (yy < 0 || yy >= h) continue;                                   \
				const T *restrict row = img + yy * w;                              \
				for (int64_t j = 0; j < mw; j++) {                                 \
					T f = mask[i * mw + j];                                    \
					int64_t dx = j - rx; /* out[x] += f * row[x + dx] */       \
					int64_t x0 = dx < 0 ? -dx : 0, x1 = dx > 0 ? w - dx : w;   \
					for (int64_t x = x0; x < x1; x++) o[x] += f * row[x + dx]; \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
CONV(float, lmi_cpu_conv2d_f32)
CONV(double, lmi_cpu_conv2d_f64)
