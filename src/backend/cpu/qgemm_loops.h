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
 * columns in 24 registers), else the AVX2 kernel. The vector paths pack both operands first (k
 * padded with zeros to the group, A by row blocks, B by column panels) and write C through the
 * valid rows and columns only; the column panels are shared among the threads. Read next:
 * ../../../tests/core/test_qgemm.c.
 */

#define QG_SCRATCH(bytes) lm_alloc((bytes) ? (bytes) : 1)

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

/* ---------------------------------------------------------------- AVX2: int16 pairs, vpmaddwd */

enum { W_MR = 4, W_NV = 3, W_NC = 8 * W_NV }; /* rows, vectors and columns of a tile */

/* A's rows in blocks of W_MR, each (k2, row) an int32 holding a[2 k2] and a[2 k2 + 1] as int16 */
static void wpack_a(const uint8_t *a, int64_t lda, int64_t m, int64_t k, int64_t k2n, int32_t *ap)
{
	for (int64_t ib = 0; ib < (m + W_MR - 1) / W_MR; ib++)
		for (int64_t q = 0; q < k2n; q++)
			for (int r = 0; r < W_MR; r++) {
				int64_t i = ib * W_MR + r, p = 2 * q;
				uint16_t lo = i < m && p < k ? a[i * lda + p] : 0, hi = i < m && p + 1 < k ? a[i * lda + p + 1] : 0;
				ap[(ib * k2n + q) * W_MR + r] = (int32_t)((uint32_t)lo | (uint32_t)hi << 16);
			}
}

/* B's columns in panels of W_NC, each (k2, column) two int16: b[2 k2][j], b[2 k2 + 1][j] */
static void wpack_b(const int8_t *b, int64_t ldb, int64_t k, int64_t n, int64_t k2n, int16_t *bp)
{
	for (int64_t jp = 0; jp < (n + W_NC - 1) / W_NC; jp++)
		for (int64_t q = 0; q < k2n; q++)
			for (int c = 0; c < W_NC; c++) {
				int64_t j = jp * W_NC + c, p = 2 * q;
				int16_t *o = bp + ((jp * k2n + q) * W_NC + c) * 2;
				o[0] = (int16_t)(j < n && p < k ? b[p * ldb + j] : 0);
				o[1] = (int16_t)(j < n && p + 1 < k ? b[(p + 1) * ldb + j] : 0);
			}
}

static void wtile(const int32_t *ap, const int16_t *bp, int64_t k2n, int32_t *c, int64_t ldc,
                  int64_t rows, int64_t cols)
{
	__m256i acc[W_MR][W_NV];
	for (int r = 0; r < W_MR; r++)
		for (int v = 0; v < W_NV; v++) acc[r][v] = _mm256_setzero_si256();
	for (int64_t q = 0; q < k2n; q++) {
		__m256i bv[W_NV];
		for (int v = 0; v < W_NV; v++) bv[v] = _mm256_loadu_si256((const __m256i *)(bp + (q * W_NC + 8 * v) * 2));
		for (int r = 0; r < W_MR; r++) {
			__m256i av = _mm256_set1_epi32(ap[q * W_MR + r]);
			for (int v = 0; v < W_NV; v++) acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(av, bv[v]));
		}
	}
	for (int r = 0; r < rows; r++) {
		int32_t t[W_NC];
		for (int v = 0; v < W_NV; v++) _mm256_storeu_si256((__m256i *)(t + 8 * v), acc[r][v]);
		memcpy(c + r * ldc, t, (size_t)cols * sizeof *t);
	}
}

static lm_status gemm_u8s8_w(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                             const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	int64_t k2n = (k + 1) / 2, mb = (m + W_MR - 1) / W_MR, nb = (n + W_NC - 1) / W_NC;
	size_t abytes = (size_t)(mb * k2n * W_MR) * sizeof(int32_t), bbytes = (size_t)(nb * k2n * W_NC * 2) * sizeof(int16_t);
	int32_t *ap = QG_SCRATCH(abytes);
	int16_t *bp = ap ? QG_SCRATCH(bbytes) : NULL;
	if (!bp) {
		if (ap) lm_free(ap, abytes ? abytes : 1);
		return lm_last_status();
	}
	wpack_a(a, lda, m, k, k2n, ap);
	wpack_b(b, ldb, k, n, k2n, bp);
#pragma omp parallel for schedule(static) num_threads(nb > 1 && m * n * k > 32768 ? lmi_num_threads() : 1)
	for (int64_t jp = 0; jp < nb; jp++)
		for (int64_t ib = 0; ib < mb; ib++) {
			int64_t rows = m - ib * W_MR < W_MR ? m - ib * W_MR : W_MR, cols = n - jp * W_NC < W_NC ? n - jp * W_NC : W_NC;
			wtile(ap + ib * k2n * W_MR, bp + jp * k2n * W_NC * 2, k2n, c + ib * W_MR * ldc + jp * W_NC, ldc, rows, cols);
		}
	lm_free(ap, abytes ? abytes : 1);
	lm_free(bp, bbytes ? bbytes : 1);
	return LM_OK;
}

#if defined(__AVX512F__)

/* ---------------------------------------------------------------- AVX-512 VNNI: vpdpbusd */

enum { V_MR = 6, V_NV = 4, V_NC = 16 * V_NV };

/* A's rows in blocks of V_MR, each (k4, row) the four bytes a[4 k4 .. 4 k4 + 3] */
static void vpack_a(const uint8_t *a, int64_t lda, int64_t m, int64_t k, int64_t k4n, uint8_t *ap)
{
	for (int64_t ib = 0; ib < (m + V_MR - 1) / V_MR; ib++)
		for (int64_t q = 0; q < k4n; q++)
			for (int r = 0; r < V_MR; r++)
				for (int e = 0; e < 4; e++) {
					int64_t i = ib * V_MR + r, p = 4 * q + e;
					ap[((ib * k4n + q) * V_MR + r) * 4 + e] = i < m && p < k ? a[i * lda + p] : 0;
				}
}

/* B's columns in panels of V_NC, each (k4, column) the four bytes b[4 k4 .. 4 k4 + 3][j] */
static void vpack_b(const int8_t *b, int64_t ldb, int64_t k, int64_t n, int64_t k4n, int8_t *bp)
{
	for (int64_t jp = 0; jp < (n + V_NC - 1) / V_NC; jp++)
		for (int64_t q = 0; q < k4n; q++)
			for (int c = 0; c < V_NC; c++)
				for (int e = 0; e < 4; e++) {
					int64_t j = jp * V_NC + c, p = 4 * q + e;
					bp[((jp * k4n + q) * V_NC + c) * 4 + e] = j < n && p < k ? b[p * ldb + j] : 0;
				}
}

__attribute__((target("avx512f,avx512vnni"))) static void vtile(const uint8_t *ap, const int8_t *bp, int64_t k4n,
                                                            int32_t *c, int64_t ldc, int64_t rows, int64_t cols)
{
	__m512i acc[V_MR][V_NV];
	for (int r = 0; r < V_MR; r++)
		for (int v = 0; v < V_NV; v++) acc[r][v] = _mm512_setzero_si512();
	for (int64_t q = 0; q < k4n; q++) {
		__m512i bv[V_NV];
		for (int v = 0; v < V_NV; v++) bv[v] = _mm512_loadu_si512((const void *)(bp + (q * V_NC + 16 * v) * 4));
		for (int r = 0; r < V_MR; r++) {
			int32_t a4;
			memcpy(&a4, ap + (q * V_MR + r) * 4, 4);
			__m512i av = _mm512_set1_epi32(a4);
			for (int v = 0; v < V_NV; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
		}
	}
	for (int r = 0; r < rows; r++)
		for (int v = 0; v < V_NV && 16 * v < cols; v++) {
			int64_t left = cols - 16 * v;
			__mmask16 mk = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
			_mm512_mask_storeu_epi32(c + r * ldc + 16 * v, mk, acc[r][v]);
		}
}

static lm_status gemm_u8s8_vnni(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                                const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	int64_t k4n = (k + 3) / 4, mb = (m + V_MR - 1) / V_MR, nb = (n + V_NC - 1) / V_NC;
	size_t abytes = (size_t)(mb * k4n * V_MR * 4), bbytes = (size_t)(nb * k4n * V_NC * 4);
	uint8_t *ap = QG_SCRATCH(abytes);
	int8_t *bp = ap ? QG_SCRATCH(bbytes) : NULL;
	if (!bp) {
		if (ap) lm_free(ap, abytes ? abytes : 1);
		return lm_last_status();
	}
	vpack_a(a, lda, m, k, k4n, ap);
	vpack_b(b, ldb, k, n, k4n, bp);
#pragma omp parallel for schedule(static) num_threads(nb > 1 && m * n * k > 32768 ? lmi_num_threads() : 1)
	for (int64_t jp = 0; jp < nb; jp++)
		for (int64_t ib = 0; ib < mb; ib++) {
			int64_t rows = m - ib * V_MR < V_MR ? m - ib * V_MR : V_MR, cols = n - jp * V_NC < V_NC ? n - jp * V_NC : V_NC;
			vtile(ap + ib * k4n * V_MR * 4, bp + jp * k4n * V_NC * 4, k4n, c + ib * V_MR * ldc + jp * V_NC, ldc, rows, cols);
		}
	lm_free(ap, abytes ? abytes : 1);
	lm_free(bp, bbytes ? bbytes : 1);
	return LM_OK;
}

static bool has_vnni(void)
{
	static int known = -1;
	if (known < 0) known = __builtin_cpu_supports("avx512vnni") ? 1 : 0;
	return known == 1;
}

static lm_status gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                           const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	if (has_vnni()) return gemm_u8s8_vnni(m, n, k, a, lda, b, ldb, c, ldc);
	return gemm_u8s8_w(m, n, k, a, lda, b, ldb, c, ldc);
}
static const char *gemm_u8s8_how(void)
{
	return has_vnni() ? "AVX-512 VNNI vpdpbusd, 6 x 64 tiles" : "int16 pairs by vpmaddwd, 4 x 24 tiles (no VNNI)";
}

#else

static lm_status gemm_u8s8(int64_t m, int64_t n, int64_t k, const uint8_t *a, int64_t lda,
                           const int8_t *b, int64_t ldb, int32_t *c, int64_t ldc)
{
	return gemm_u8s8_w(m, n, k, a, lda, b, ldb, c, ldc);
}
static const char *gemm_u8s8_how(void) { return "AVX2 int16 pairs by vpmaddwd, 4 x 24 tiles"; }

#endif
#endif
