/*
 * cpu_dense.c — the CPU runs of the dense patterns: matrix multiplication (naive and cache-blocked)
 * and the 2-D convolution.
 *
 * Matmul, naive: the textbook triple loop, one dot product per element of C; B is read down a
 * column (a stride of n elements), so every load of B touches another cache line: the CPU's form
 * of the uncoalesced, untiled GPU kernel. Blocked: the CPU's form of tiling. C is computed in
 * micro-tiles of 4 rows x one vector panel of columns (32 floats or 16 doubles: 8 AVX-512
 * accumulators that stay in registers), over k in slices of KB: the slice of B's panel (KB x 32
 * floats, 32 KiB) stays in L1 while every row block of A streams past it, as a shared-memory tile
 * of N stays on chip while the threads of a block use it. Edges are masked (any m, k, n).
 * Convolution: for each output row, the mask's rows and columns outside, a vectorised sweep along
 * the row inside (only the columns whose input lies in the image: ghost cells cost nothing).
 * OpenMP over rows (blocks of rows for matmul); stop is polled per row block.
 * Read next: body/matmul.h and body/conv2d.h (the same patterns on a GPU).
 */
#include <string.h>

#include "kernels/cpu_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#define KB 256 /* k slice of the blocked matmul */
#define MB 64  /* rows of A per task */

#ifdef _OPENMP
#define OMP_FOR_DYNAMIC _Pragma("omp parallel for schedule(dynamic) num_threads(nt)")
#define OMP_FOR_STATIC _Pragma("omp parallel for schedule(static) num_threads(nt)")
#else
#define OMP_FOR_DYNAMIC
#define OMP_FOR_STATIC
#endif

static inline int stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed) != 0;
}

/* ---------------------------------------------------------------- naive */

#define NAIVE(T, name)                                                                             \
	int name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n,                    \
	         const atomic_int *stop)                                                           \
	{                                                                                          \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		OMP_FOR_STATIC                                                                     \
		for (int64_t i = 0; i < m; i++) {                                                  \
			if (quit || stopped(stop)) {                                               \
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

/* ---------------------------------------------------------------- blocked */

#if defined(__AVX512F__)
/*
 * C[i..i+rows)[j..j+W) += A[i..i+rows)[p0..p1) B[p0..p1)[j..j+W), rows 1..4, W = two vectors;
 * `mask0`/`mask1` select the columns that exist (the right edge). VEC: the AVX-512 type and ops.
 */
#define MICRO(T, VEC, SUF, name)                                                                   \
	static void name(const T *a, const T *b, T *c, int64_t k, int64_t n, int64_t i, int rows,     \
	                 int64_t j, int64_t p0, int64_t p1, __mmask16 mask0, __mmask16 mask1)      \
	{                                                                                          \
		const int L = 64 / (int)sizeof(T);                                                 \
		VEC c00 = _mm512_setzero_##SUF(), c01 = c00, c10 = c00, c11 = c00, c20 = c00,       \
		    c21 = c00, c30 = c00, c31 = c00;                                               \
		const T *a0 = a + i * k, *a1 = a0 + (rows > 1) * k, *a2 = a0 + (rows > 2) * 2 * k, \
		        *a3 = a0 + (rows > 3) * 3 * k;                                             \
		for (int64_t p = p0; p < p1; p++) {                                                \
			VEC b0 = _mm512_maskz_loadu_##SUF(mask0, b + p * n + j);                   \
			VEC b1 = _mm512_maskz_loadu_##SUF(mask1, b + p * n + j + L);               \
			VEC x = _mm512_set1_##SUF(a0[p]);                                          \
			c00 = _mm512_fmadd_##SUF(x, b0, c00), c01 = _mm512_fmadd_##SUF(x, b1, c01);  \
			x = _mm512_set1_##SUF(a1[p]);                                              \
			c10 = _mm512_fmadd_##SUF(x, b0, c10), c11 = _mm512_fmadd_##SUF(x, b1, c11);  \
			x = _mm512_set1_##SUF(a2[p]);                                              \
			c20 = _mm512_fmadd_##SUF(x, b0, c20), c21 = _mm512_fmadd_##SUF(x, b1, c21);  \
			x = _mm512_set1_##SUF(a3[p]);                                              \
			c30 = _mm512_fmadd_##SUF(x, b0, c30), c31 = _mm512_fmadd_##SUF(x, b1, c31);  \
		}                                                                                  \
		VEC acc[4][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};                  \
		for (int r = 0; r < rows; r++) {                                                   \
			T *cr = c + (i + r) * n + j;                                               \
			_mm512_mask_storeu_##SUF(cr, mask0, _mm512_add_##SUF(                       \
				_mm512_maskz_loadu_##SUF(mask0, cr), acc[r][0]));                  \
			_mm512_mask_storeu_##SUF(cr + L, mask1, _mm512_add_##SUF(                   \
				_mm512_maskz_loadu_##SUF(mask1, cr + L), acc[r][1]));              \
		}                                                                                  \
	}
MICRO(float, __m512, ps, micro_f32)
MICRO(double, __m512d, pd, micro_f64)

static inline __mmask16 lanes(int64_t left, int L)
{
	if (left <= 0) return 0;
	return left >= L ? (__mmask16)((1u << L) - 1) : (__mmask16)((1u << left) - 1);
}

#define BLOCKED(T, name, micro)                                                                    \
	int name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n,                    \
	         const atomic_int *stop)                                                           \
	{                                                                                          \
		const int L = 64 / (int)sizeof(T), W = 2 * L;                                      \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		int64_t nblocks = (m + MB - 1) / MB;                                               \
		OMP_FOR_DYNAMIC                                                                    \
		for (int64_t blk = 0; blk < nblocks; blk++) {                                      \
			if (quit || stopped(stop)) {                                               \
				quit = 1;                                                          \
				continue;                                                          \
			}                                                                          \
			int64_t i0 = blk * MB, i1 = i0 + MB < m ? i0 + MB : m;                     \
			memset(c + i0 * n, 0, (size_t)((i1 - i0) * n) * sizeof(T));               \
			for (int64_t j = 0; j < n; j += W) {                                       \
				__mmask16 m0 = lanes(n - j, L), m1 = lanes(n - j - L, L);          \
				for (int64_t p0 = 0; p0 < k; p0 += KB) {                           \
					int64_t p1 = p0 + KB < k ? p0 + KB : k;                    \
					for (int64_t i = i0; i < i1; i += 4)                       \
						micro(a, b, c, k, n, i, i1 - i < 4 ? (int)(i1 - i) : 4, j, \
						      p0, p1, m0, m1);                             \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
BLOCKED(float, lmi_cpu_matmul_blocked_f32, micro_f32)
BLOCKED(double, lmi_cpu_matmul_blocked_f64, micro_f64)

#else /* no AVX-512: the same blocking, with the compiler vectorising the row update */

#define NB 256
#define BLOCKED(T, name)                                                                           \
	int name(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n,                    \
	         const atomic_int *stop)                                                           \
	{                                                                                          \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		int64_t nblocks = (m + MB - 1) / MB;                                               \
		OMP_FOR_DYNAMIC                                                                    \
		for (int64_t blk = 0; blk < nblocks; blk++) {                                      \
			if (quit || stopped(stop)) {                                               \
				quit = 1;                                                          \
				continue;                                                          \
			}                                                                          \
			int64_t i0 = blk * MB, i1 = i0 + MB < m ? i0 + MB : m;                     \
			memset(c + i0 * n, 0, (size_t)((i1 - i0) * n) * sizeof(T));               \
			for (int64_t j0 = 0; j0 < n; j0 += NB) {                                   \
				int64_t j1 = j0 + NB < n ? j0 + NB : n;                            \
				for (int64_t p0 = 0; p0 < k; p0 += KB) {                           \
					int64_t p1 = p0 + KB < k ? p0 + KB : k;                    \
					for (int64_t i = i0; i < i1; i++)                          \
						for (int64_t p = p0; p < p1; p++) {                \
							T x = a[i * k + p];                        \
							const T *bp = b + p * n;                   \
							T *cp = c + i * n;                         \
							for (int64_t j = j0; j < j1; j++)          \
								cp[j] += x * bp[j];                \
						}                                                  \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
BLOCKED(float, lmi_cpu_matmul_blocked_f32)
BLOCKED(double, lmi_cpu_matmul_blocked_f64)
#endif

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
			if (quit || ((y & 63) == 0 && stopped(stop))) {                            \
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
