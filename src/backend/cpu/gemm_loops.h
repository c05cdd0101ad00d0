/*
 * gemm_loops.h — the small float32 matrix products of the Winograd convolution (16 per block of
 * tiles: channels in, channels out, at most a few hundred rows), included by each simd_<isa>.c.
 *
 *   C (m x n, row stride ldc) = or += A (m x k, element (i, p) at a[i*ars + p*aps]) B (k x n, ldb)
 *
 * n is a multiple of 16. The operands are small enough to stay in L1/L2 (a 64 x 64 plane of B is
 * 16 KB), so nothing is packed: a register tile of MR rows by NV vectors of C accumulates, for
 * each p, NV loads of B's row p times MR broadcasts of A's column p (AVX-512: 12 x 2 zmm, 24 of
 * the 32 registers; AVX2: 6 x 2 ymm, 12 of 16), the classic outer-product micro-kernel. A's
 * strides let the same kernel read a Winograd plane as (tiles x channels) for the forward and
 * backward-data products and transposed (channels x tiles) for the weight gradient. The scalar
 * path is the plain triple loop. Read next: winograd.c.
 */
#ifdef LMI_SIMD_SCALAR

LMI_PLAIN_GEMM(gemm_f32, float)

#else

#include <immintrin.h>

#if defined(__AVX512F__)
typedef __m512 gvf;
#define GW 16
#define GMR 12
#define GNV 2
#define GLOAD(p) _mm512_loadu_ps(p)
#define GSTORE(p, v) _mm512_storeu_ps(p, v)
#define GSET1(x) _mm512_set1_ps(x)
#define GZERO() _mm512_setzero_ps()
#define GFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#else
typedef __m256 gvf;
#define GW 8
#define GMR 6
#define GNV 2
#define GLOAD(p) _mm256_loadu_ps(p)
#define GSTORE(p, v) _mm256_storeu_ps(p, v)
#define GSET1(x) _mm256_set1_ps(x)
#define GZERO() _mm256_setzero_ps()
#define GFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#endif

typedef void (*gemm_tile_fn)(int64_t k, const float *a, int64_t ars, int64_t aps, const float *b,
                             int64_t ldb, float *c, int64_t ldc, bool acc);

/* One MR x (NV vectors) tile of C; MR and NV constants, so the accumulators live in registers. */
#define GEMM_TILE(MR, NV)                                                                           \
	static void gemm_tile_##MR##_##NV(int64_t k, const float *a, int64_t ars, int64_t aps,      \
	                                  const float *b, int64_t ldb, float *c, int64_t ldc,      \
	                                  bool acc)                                                \
	{                                                                                           \
		gvf s[MR][NV];                                                                          \
		_Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                   \
			_Pragma("GCC unroll 4") for (int j = 0; j < NV; j++)                                \
				s[i][j] = acc ? GLOAD(c + i * ldc + j * GW) : GZERO();                          \
		for (int64_t p = 0; p < k; p++) {                                                       \
			gvf bv[NV];                                                                         \
			_Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) bv[j] = GLOAD(b + p * ldb + j * GW); \
			const float *ap = a + p * aps;                                                      \
			_Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                               \
			{                                                                                   \
				gvf av = GSET1(ap[i * ars]);                                                    \
				_Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) s[i][j] = GFMA(av, bv[j], s[i][j]); \
			}                                                                                   \
		}                                                                                       \
		_Pragma("GCC unroll 16") for (int i = 0; i < MR; i++)                                   \
			_Pragma("GCC unroll 4") for (int j = 0; j < NV; j++) GSTORE(c + i * ldc + j * GW, s[i][j]); \
	}

#define GEMM_TILES(NV)                                                                              \
	GEMM_TILE(1, NV) GEMM_TILE(2, NV) GEMM_TILE(3, NV) GEMM_TILE(4, NV) GEMM_TILE(5, NV)            \
	GEMM_TILE(6, NV) GEMM_TILE(7, NV) GEMM_TILE(8, NV) GEMM_TILE(9, NV) GEMM_TILE(10, NV)          \
	GEMM_TILE(11, NV) GEMM_TILE(12, NV)
GEMM_TILES(1)
GEMM_TILES(2)

#define GEMM_ROW(NV)                                                                                \
	{NULL, gemm_tile_1_##NV, gemm_tile_2_##NV, gemm_tile_3_##NV, gemm_tile_4_##NV,            \
	 gemm_tile_5_##NV, gemm_tile_6_##NV, gemm_tile_7_##NV, gemm_tile_8_##NV, gemm_tile_9_##NV, \
	 gemm_tile_10_##NV, gemm_tile_11_##NV, gemm_tile_12_##NV}
static const gemm_tile_fn gemm_tiles[GNV + 1][13] = {{NULL}, GEMM_ROW(1), GEMM_ROW(2)};

static void gemm_f32(int64_t m, int64_t n, int64_t k, const float *a, int64_t ars, int64_t aps,
                     const float *b, int64_t ldb, float *c, int64_t ldc, bool acc)
{
	for (int64_t j = 0; j < n; j += GNV * GW) {
		int nv = n - j >= GNV * GW ? GNV : (int)((n - j) / GW);
		for (int64_t i = 0; i < m; i += GMR) {
			int mr = m - i >= GMR ? GMR : (int)(m - i);
			gemm_tiles[nv][mr](k, a + i * ars, ars, aps, b + j, ldb, c + i * ldc + j, ldc, acc);
		}
	}
}

#endif
