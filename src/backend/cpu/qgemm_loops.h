/*
 * qgemm_loops.h — the int8 matrix product of quantized layers, included by each simd_<isa>.c:
 *
 *   C (m x n int32, row stride ldc) = A (m x k uint8, lda) B (k x n int8, ldb)
 *
 * exact over the whole input range: every product and every partial sum is formed in 32 bits
 * without saturation (255 * 127 + 255 * 127 = 64770 is exact; vpmaddubsw, which would saturate
 * that pair to 32767, is not used). C is exact while it fits int32 (k <= 65,793 guarantees it);
 * past that every path wraps alike, modulo 2^32.
 *
 * Paths: scalar, the plain triple loop; AVX2, both operands widened to int16 and vpmaddwd adding
 * pairs into int32 (4 rows x 24 columns of C in 12 registers); AVX-512 with VNNI (chosen at run
 * time on the CPU's flag), vpdpbusd adding groups of four u8 x s8 products into int32 (6 rows x 64
 * columns in 24 registers; 12 x 32 when C has at most 32 columns), else the AVX2 kernel. The AVX2
 * path takes 6 x 16 tiles where 24 divides the columns badly (16, 32). The vector paths pack both operands first (k
 * padded with zeros to the group, A by row blocks, B by column panels) and write C through the
 * valid rows and columns only; the column panels are shared among the threads. Read next:
 * ../../../tests/core/test_qgemm.c.
 */

#ifdef LMI_SIMD_SCALAR

static lm_status gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                           const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	for (int64_t i = 0; i < m; i++) {
		int32_t *ci = c + i * ldc;
		for (int64_t j = 0; j < n; j++) ci[j] = 0;
		for (int64_t p = 0; p < k; p++) {
			uint32_t av = a[i * lda + p];
			const int8_t *bp = b + p * ldb;
			for (int64_t j = 0; j < n; j++) ci[j] = (int32_t)((uint32_t)ci[j] + av * (uint32_t)(int32_t)bp[j]);
		}
	}
	return LM_OK;
}
static const char *gemm_u8s8_how(void) { return "the plain triple loop in int32 (scalar path)"; }

#else

#include <immintrin.h>

/* A vector path: its tile (mr rows by nc columns of C), the group of k its instruction adds
 * (kg: 2 int16 pairs or 4 bytes, 4 bytes either way per (group, row) of A and per (group, column)
 * of B, k padded with zeros) and its tile kernel over one packed row block and column panel. */
typedef struct qg_path {
	int mr, nc, kg;
	void (*tile)(const void *ap, const void *bp, int64_t kgn, int32_t *c, int64_t ldc, int64_t rows,
	             int64_t cols);
} qg_path;

/* One packed group of kg values v[0..kg) (zeros past the matrix): int16 pairs (kg 2) or bytes. */
static inline void qg_group(char *o, int kg, const int *v)
{
	if (kg == 2) {
		int16_t h[2] = {(int16_t)v[0], (int16_t)v[1]};
		memcpy(o, h, 4);
	} else {
		int8_t t[4] = {(int8_t)v[0], (int8_t)v[1], (int8_t)v[2], (int8_t)v[3]};
		memcpy(o, t, 4);
	}
}

/* Row block ib of A (mr rows) and column panel jp of B (nc columns), packed: group q of row i
 * (or column j) at (q * width + i or j in the block) * 4 bytes from the block's start. */
static void qg_pack_a(const qg_path *P, const uint8_t *a, int64_t lda, int64_t m, int64_t k, int64_t kgn,
                      int64_t ib, char *ap)
{
	const int kg = P->kg;
	for (int r = 0; r < P->mr; r++) {
		int64_t i = ib * P->mr + r;
		int64_t whole = i < m ? k / kg : 0; /* the groups inside the matrix: copied, or widened */
		const uint8_t *row = a + i * lda;
		if (kg == 4)
			for (int64_t q = 0; q < whole; q++) memcpy(ap + (q * P->mr + r) * 4, row + q * 4, 4);
		else
			for (int64_t q = 0; q < whole; q++) {
				int16_t h[2] = {row[q * 2], row[q * 2 + 1]};
				memcpy(ap + (q * P->mr + r) * 4, h, 4);
			}
		for (int64_t q = whole; q < kgn; q++) {
			int v[4] = {0, 0, 0, 0};
			for (int e = 0; e < kg && i < m && q * kg + e < k; e++) v[e] = a[i * lda + q * kg + e];
			qg_group(ap + (q * P->mr + r) * 4, kg, v);
		}
	}
}

static void qg_pack_b(const qg_path *P, const int8_t *b, int64_t ldb, int64_t n, int64_t k, int64_t kgn,
                      int64_t jp, char *bp)
{
	const int kg = P->kg;
	int64_t j0 = jp * P->nc, w = n - j0 < P->nc ? n - j0 : P->nc; /* valid columns */
	for (int64_t q = 0; q < kgn; q++) {
		char *o = bp + q * P->nc * 4;
		if (w == P->nc && q * kg + kg <= k) { /* the interior: kg whole rows of nc columns */
			const int8_t *row = b + q * kg * ldb + j0;
			if (kg == 4)
				for (int c = 0; c < P->nc; c++)
					for (int e = 0; e < 4; e++) o[c * 4 + e] = (char)row[e * ldb + c];
			else
				for (int c = 0; c < P->nc; c++) {
					int16_t h[2] = {row[c], row[ldb + c]};
					memcpy(o + c * 4, h, 4);
				}
			continue;
		}
		for (int c = 0; c < P->nc; c++) {
			int v[4] = {0, 0, 0, 0};
			for (int e = 0; e < kg && c < w && q * kg + e < k; e++) v[e] = b[(q * kg + e) * ldb + j0 + c];
			qg_group(o + c * 4, kg, v);
		}
	}
}

/* The tile of row block ib and column panel jp, through the valid rows and columns. */
static inline void qg_one(const qg_path *P, int64_t m, int64_t n, int64_t kgn, const char *ap, const char *bp,
                          int32_t *c, int64_t ldc, int64_t ib, int64_t jp)
{
	int64_t rows = m - ib * P->mr < P->mr ? m - ib * P->mr : P->mr;
	int64_t cols = n - jp * P->nc < P->nc ? n - jp * P->nc : P->nc;
	P->tile(ap + ib * kgn * P->mr * 4, bp + jp * kgn * P->nc * 4, kgn, c + ib * P->mr * ldc + jp * P->nc, ldc, rows,
	        cols);
}

static lm_status qg_run(const qg_path *P, int64_t m, int64_t n, int64_t k, const uint8_t *a,
                        int64_t lda, const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	int64_t kgn = (k + P->kg - 1) / P->kg, mb = (m + P->mr - 1) / P->mr, nb = (n + P->nc - 1) / P->nc;
	size_t abytes = (size_t)(mb * kgn * P->mr) * 4 + 1, bbytes = (size_t)(nb * kgn * P->nc) * 4 + 1;
	char *ap = lm_alloc(abytes), *bp = ap ? lm_alloc(bbytes) : NULL;
	if (!bp) {
		if (ap) lm_free(ap, abytes);
		return lm_last_status();
	}
	int nt = m * n * k > 32768 ? lmi_num_threads() : 1;
	/* every thread packs its share of A and of B's panels; then the tiles: by column panel when
	 * there are enough panels to go round, else (a few output columns, as a convolution's 16 or 32
	 * channels give) by row block, each thread sweeping its rows over every panel */
	bool by_panel = nb >= nt;
#pragma omp parallel num_threads(nt)
	{
#pragma omp for schedule(static)
		for (int64_t ib = 0; ib < mb; ib++) qg_pack_a(P, a, lda, m, k, kgn, ib, ap + ib * kgn * P->mr * 4);
#pragma omp for schedule(static)
		for (int64_t jp = 0; jp < nb; jp++) qg_pack_b(P, b, ldb, n, k, kgn, jp, bp + jp * kgn * P->nc * 4);
		if (by_panel) {
#pragma omp for schedule(static)
			for (int64_t jp = 0; jp < nb; jp++)
				for (int64_t ib = 0; ib < mb; ib++) qg_one(P, m, n, kgn, ap, bp, c, ldc, ib, jp);
		} else {
#pragma omp for schedule(static)
			for (int64_t ib = 0; ib < mb; ib++)
				for (int64_t jp = 0; jp < nb; jp++) qg_one(P, m, n, kgn, ap, bp, c, ldc, ib, jp);
		}
	}
	lm_free(ap, abytes);
	lm_free(bp, bbytes);
	return LM_OK;
}

/* The tile kernel of a path: MR rows by NV vectors of W int32 lanes of C, accumulated over the
 * packed groups (MAC(acc, a broadcast, b vector) adds one group's products), then written through
 * the valid rows and columns. */
#define QG_TILE(NAME, ATTR, VT, MR, NV, W, ZERO, LOAD, SET1, MAC, STORE)                            \
	ATTR static void NAME(const void *apv, const void *bpv, int64_t kgn, int32_t *c, int64_t ldc,   \
	                      int64_t rows, int64_t cols)                                               \
	{                                                                                           \
		const char *ap = apv, *bp = bpv;                                                        \
		VT acc[MR][NV];                                                                         \
		for (int r = 0; r < MR; r++)                                                            \
			for (int v = 0; v < NV; v++) acc[r][v] = ZERO();                                    \
		for (int64_t q = 0; q < kgn; q++) {                                                     \
			VT bv[NV];                                                                          \
			for (int v = 0; v < NV; v++) bv[v] = LOAD((const void *)(bp + (q * NV * W + W * v) * 4)); \
			for (int r = 0; r < MR; r++) {                                                      \
				int32_t a4;                                                                     \
				memcpy(&a4, ap + (q * MR + r) * 4, 4);                                          \
				VT av = SET1(a4);                                                               \
				for (int v = 0; v < NV; v++) acc[r][v] = MAC(acc[r][v], av, bv[v]);             \
			}                                                                                   \
		}                                                                                       \
		for (int r = 0; r < rows; r++) {                                                        \
			int32_t t[NV * W];                                                                  \
			for (int v = 0; v < NV; v++) STORE((void *)(t + W * v), acc[r][v]);                 \
			memcpy(c + r * ldc, t, (size_t)cols * sizeof *t);                                   \
		}                                                                                       \
	}

/* ---------------------------------------------------------------- AVX2: int16 pairs, vpmaddwd */

enum { W_MR = 4, W_NV = 3, W_NC = 8 * W_NV }; /* rows, vectors and columns of a tile */

#define W_MAC(acc, a, b) _mm256_add_epi32(acc, _mm256_madd_epi16(a, b))
QG_TILE(wtile, , __m256i, W_MR, W_NV, 8, _mm256_setzero_si256, _mm256_loadu_si256, _mm256_set1_epi32, W_MAC,
        _mm256_storeu_si256)

static const qg_path wpath = {W_MR, W_NC, 2, wtile};


#if defined(__AVX512F__)

/* ---------------------------------------------------------------- AVX-512 VNNI: vpdpbusd */

enum { V_MR = 6, V_NV = 4, V_NC = 16 * V_NV };

QG_TILE(vtile, __attribute__((target("avx512f,avx512vnni"))), __m512i, V_MR, V_NV, 16, _mm512_setzero_si512,
        _mm512_loadu_si512, _mm512_set1_epi32, _mm512_dpbusd_epi32, _mm512_storeu_si512)

static const qg_path vpath = {V_MR, V_NC, 4, vtile};

/* A product of at most 32 columns (a convolution's channels): 12 rows x 32 columns, so that no
 * vector of the 64-column tile computes padding. */
enum { V2_MR = 12, V2_NV = 2, V2_NC = 16 * V2_NV };
QG_TILE(vtile32, __attribute__((target("avx512f,avx512vnni"))), __m512i, V2_MR, V2_NV, 16, _mm512_setzero_si512,
        _mm512_loadu_si512, _mm512_set1_epi32, _mm512_dpbusd_epi32, _mm512_storeu_si512)
static const qg_path vpath32 = {V2_MR, V2_NC, 4, vtile32};

static bool has_vnni(void)
{
	static int known = -1;
	if (known < 0) known = __builtin_cpu_supports("avx512vnni") ? 1 : 0;
	return known == 1;
}

static lm_status gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                           const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	const qg_path *P = !has_vnni() ? &wpath : n <= V2_NC ? &vpath32 : &vpath;
	return qg_run(P, m, n, k, a, lda, b, ldb, c, ldc);
}
static const char *gemm_u8s8_how(void)
{
	return has_vnni() ? "AVX-512 VNNI vpdpbusd, 6 x 64 tiles (12 x 32 for at most 32 columns)"
	                  : "int16 pairs by vpmaddwd, 4 x 24 tiles (no VNNI)";
}

#else

/* 6 rows x 16 columns, for products whose columns 24 divides badly (16, 32: a convolution's
 * channels would leave a third of the 24-column tile computing padding) */
enum { W2_MR = 6, W2_NV = 2, W2_NC = 8 * W2_NV };
QG_TILE(wtile16, , __m256i, W2_MR, W2_NV, 8, _mm256_setzero_si256, _mm256_loadu_si256, _mm256_set1_epi32, W_MAC,
        _mm256_storeu_si256)
static const qg_path wpath16 = {W2_MR, W2_NC, 2, wtile16};

/* The AVX2 tile that computes the fewest padding columns for n columns (24 on a tie). */
static const qg_path *qg_avx2_path(int64_t n)
{
	int64_t pad24 = (n + 23) / 24 * 24 - n, pad16 = (n + 15) / 16 * 16 - n;
	return pad16 < pad24 ? &wpath16 : &wpath;
}

static lm_status gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                           const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	return qg_run(qg_avx2_path(n), m, n, k, a, lda, b, ldb, c, ldc);
}
static const char *gemm_u8s8_how(void) { return "AVX2 int16 pairs by vpmaddwd, 4 x 24 tiles (6 x 16 where 24 divides the columns badly)"; }

#endif
#endif
