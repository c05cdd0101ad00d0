/*
 * test_qgemm.c — the int8 product of quantized layers (src/backend/cpu/qgemm_loops.h) on every
 * path this CPU can run (scalar always; AVX2; AVX-512 with VNNI or without), against a plain int64
 * loop: random shapes with odd, 1 and 0 sizes, row strides past the row, the whole input range,
 * and the saturation case a pairwise int16 path would get wrong (255 * 127 + 255 * 127 and the
 * -128 side), exactly. And the q4_0 x q8_0 dot product (qdot_loops.h) on every path against the
 * same sum in double from the bytes (any bytes, -128 included), and the matrix-vector product
 * built on it against the float64 product of the dequantized matrix and vector. The float16 and
 * bfloat16 row conversions of every path, bit for bit against core/half.h's element functions,
 * on every 16-bit pattern and a million float32 ones (NaNs, infinities, subnormals included).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/simd.h"
#include "core/half.h"
#include "core/quant.h"
#include "lumen/isa.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

/* the paths this build has and this CPU runs */
static int paths(const lmi_simd_table **t)
{
	int n = 0;
	static const lm_isa isas[] = {LM_ISA_SCALAR, LM_ISA_AVX2, LM_ISA_AVX512};
	for (int i = 0; i < 3; i++)
		if (lm_isa_supported(isas[i]) && lmi_simd_for(isas[i])) t[n++] = lmi_simd_for(isas[i]);
	if (n < 3) print_message("test_qgemm: %d of the 3 paths run on this machine\n", n);
	return n;
}

/* runs one product on one path and compares it with the int64 loop */
static void check(const lmi_simd_table *t, int64_t m, int64_t n, int64_t k, const uint8_t *a,
                  int64_t lda, const int8_t *b, int64_t ldb, int64_t ldc, const char *what)
{
	int32_t *c = malloc((size_t)(m * ldc + 1) * sizeof *c);
	assert_non_null(c);
	for (int64_t i = 0; i < m * ldc + 1; i++) c[i] = 0x5a5a5a5a; /* padding must stay */
	assert_int_equal(t->gemm_u8s8(m, n, k, a, lda, b, ldb, c, ldc), LM_OK);
	for (int64_t i = 0; i < m; i++) {
		for (int64_t j = 0; j < n; j++) {
			int64_t want = 0;
			for (int64_t p = 0; p < k; p++) want += (int64_t)a[i * lda + p] * b[p * ldb + j];
			if (c[i * ldc + j] != want)
				fail_msg("%s (%s): %lldx%lldx%lld, C[%lld][%lld] = %d, want %lld", what, t->gemm_u8s8_how(),
				         (long long)m, (long long)n, (long long)k, (long long)i, (long long)j,
				         c[i * ldc + j], (long long)want);
		}
		for (int64_t j = n; j < ldc; j++) assert_int_equal(c[i * ldc + j], 0x5a5a5a5a);
	}
	free(c);
}

static void test_random_shapes(void **state)
{
	(void)state;
	const lmi_simd_table *t[3];
	int np = paths(t);
	static const int64_t sizes[] = {0, 1, 2, 3, 5, 6, 7, 13, 17, 24, 25, 33, 63, 64, 65, 97};
	enum { NS = sizeof sizes / sizeof sizes[0] };
	for (int trial = 0; trial < 120; trial++) {
		int64_t m = sizes[next() % NS], n = sizes[next() % NS], k = sizes[next() % NS];
		if (trial == 0) m = 130, n = 200, k = 301; /* several panels and row blocks */
		int64_t lda = k + next() % 3, ldb = n + next() % 3, ldc = n + next() % 3;
		uint8_t *a = malloc((size_t)(m * lda + 1));
		int8_t *b = malloc((size_t)(k * ldb + 1));
		assert_true(a && b);
		for (int64_t i = 0; i < m * lda; i++) a[i] = (uint8_t)next();
		for (int64_t i = 0; i < k * ldb; i++) b[i] = (int8_t)next();
		for (int p = 0; p < np; p++) check(t[p], m, n, k, a, lda, b, ldb, ldc, "random");
		free(a);
		free(b);
	}
}

static void test_extremes(void **state)
{
	(void)state;
	const lmi_simd_table *t[3];
	int np = paths(t);
	enum { M = 7, N = 70, K = 65 };
	static uint8_t a[M * K];
	static int8_t b[K * N];
	/* 255 x 127 everywhere: pairs of 64770 (past int16), K of them */
	memset(a, 255, sizeof a);
	memset(b, 127, sizeof b);
	for (int p = 0; p < np; p++) check(t[p], M, N, K, a, K, b, N, N, "255 x 127");
	/* 255 x -128 */
	memset(b, 0x80, sizeof b);
	for (int p = 0; p < np; p++) check(t[p], M, N, K, a, K, b, N, N, "255 x -128");
	/* alternating signs in a row: partial sums swing across the int16 range */
	for (int i = 0; i < K * N; i++) b[i] = (int8_t)((i / N) % 2 ? -128 : 127);
	for (int p = 0; p < np; p++) check(t[p], M, N, K, a, K, b, N, N, "alternating");
	/* k = 0: C is all zeros */
	for (int p = 0; p < np; p++) check(t[p], M, N, 0, a, K, b, N, N, "k = 0");
}

/* the dot product in double from the bytes themselves */
static double ref_dot(const unsigned char *x, const unsigned char *y, int64_t nb, double *mag)
{
	double s = 0;
	*mag = 0;
	for (int64_t b = 0; b < nb; b++) {
		const unsigned char *bx = x + 18 * b, *by = y + 34 * b;
		uint16_t dx, dy;
		memcpy(&dx, bx, 2);
		memcpy(&dy, by, 2);
		long sum = 0, abs_sum = 0; /* abs_sum: what the partial sums of a vector path can reach */
		for (int j = 0; j < 32; j++) {
			int q4 = (j < 16 ? bx[2 + j] & 15 : bx[2 + j - 16] >> 4) - 8;
			sum += (long)q4 * (int8_t)by[2 + j];
			abs_sum += labs((long)q4 * (int8_t)by[2 + j]);
		}
		double d = (double)lmi_f16_to_f32(dx) * lmi_f16_to_f32(dy);
		s += (double)sum * d, *mag += (double)abs_sum * fabs(d);
	}
	return s;
}

static void test_q4_dot(void **state)
{
	(void)state;
	const lmi_simd_table *t[3];
	int np = paths(t);
	enum { NB = 37 };
	static unsigned char x[NB * 18], y[NB * 34];
	for (int trial = 0; trial < 200; trial++) {
		for (int i = 0; i < NB * 18; i++) x[i] = (unsigned char)next();
		for (int i = 0; i < NB * 34; i++) y[i] = (unsigned char)(trial % 4 == 0 ? 0x80 : next()); /* -128s */
		for (int b = 0; b < NB; b++) { /* finite scales of moderate size */
			uint16_t d = lmi_f32_to_f16((float)(next() % 2000) / 1000.0f - 1.0f);
			memcpy(x + 18 * b, &d, 2);
			d = lmi_f32_to_f16((float)(next() % 2000) / 1000.0f - 1.0f);
			memcpy(y + 34 * b, &d, 2);
		}
		int64_t nb = trial % NB + (trial % 5 == 0 ? 0 : 1); /* 0 blocks too */
		if (nb > NB) nb = NB;
		double mag, want = ref_dot(x, y, nb, &mag); /* float32 sums: relative to the terms' size */
		for (int p = 0; p < np; p++) {
			double got = t[p]->dot_q4_0_q8_0(x, y, nb);
			if (fabs(got - want) > 1e-6 * mag + 1e-9)
				fail_msg("q4_0 . q8_0 on path %d (%lld blocks): %.9g, want %.9g", p, (long long)nb, got, want);
		}
	}
}

static void test_q4_matvec(void **state)
{
	(void)state;
	enum { R = 67, C = 32 * 9 };
	static float w[R * C], x[C], y[R], wd[R * C], xd[C];
	static unsigned char wq[R * C / 32 * 18], xq[C / 32 * 34];
	for (int i = 0; i < R * C; i++) w[i] = (float)((int)(next() % 2001) - 1000) / 700.0f;
	for (int i = 0; i < C; i++) x[i] = (float)((int)(next() % 2001) - 1000) / 300.0f;
	for (int r = 0; r < R; r++) lmi_quantize_q4_0(w + r * C, wq + r * (C / 32) * 18, C);
	assert_int_equal(lmi_cpu_matvec_q4_0(wq, R, C, x, y), LM_OK);
	/* against the float64 product of what the bytes hold */
	for (int r = 0; r < R; r++) lmi_dequantize_q4_0(wq + r * (C / 32) * 18, wd + r * C, C);
	lmi_quantize_q8_0(x, xq, C);
	lmi_dequantize_q8_0(xq, xd, C);
	double err_q = 0, norm = 0;
	for (int r = 0; r < R; r++) {
		double want = 0, exact = 0;
		for (int j = 0; j < C; j++) want += (double)wd[r * C + j] * xd[j], exact += (double)w[r * C + j] * x[j];
		if (fabs(y[r] - want) > 1e-4 * (1 + fabs(want))) fail_msg("row %d: %.7g, want %.7g", r, y[r], want);
		err_q += (y[r] - exact) * (y[r] - exact), norm += exact * exact;
	}
	/* and the quantization error itself stays a few percent of the result */
	assert_true(sqrt(err_q / norm) < 0.1);
}

static void test_half_rows(void **state)
{
	(void)state;
	const lmi_simd_table *t[3];
	int np = paths(t);
	enum { N = 65536 + 5 }; /* + 5: a tail past the vectors */
	static uint16_t h[N], g[N];
	static float f[N], back[N];
	for (int p = 0; p < np; p++) {
		for (int i = 0; i < N; i++) h[i] = (uint16_t)(i * 40503u); /* every pattern, shuffled */
		t[p]->half.f16_to_f32(h, f, N);
		for (int i = 0; i < N; i++)
			if (lmi_f32_bits(f[i]) != lmi_f32_bits(lmi_f16_to_f32(h[i])))
				fail_msg("path %d: f16 %04x -> %a", p, h[i], f[i]);
		t[p]->half.bf16_to_f32(h, back, N);
		for (int i = 0; i < N; i++) assert_int_equal(lmi_f32_bits(back[i]), (uint32_t)h[i] << 16);
		for (uint64_t base = 0; base < (1ull << 32); base += (uint64_t)N * 64) {
			for (int i = 0; i < N; i++) f[i] = lmi_bits_f32((uint32_t)(base + (uint64_t)i * 64 + (i % 64)));
			t[p]->half.f16_from_f32(f, g, N);
			for (int i = 0; i < N; i++)
				if (g[i] != lmi_f32_to_f16(f[i])) fail_msg("path %d: %a -> f16 %04x, want %04x", p, f[i], g[i], lmi_f32_to_f16(f[i]));
			t[p]->half.bf16_from_f32(f, g, N);
			for (int i = 0; i < N; i++)
				if (g[i] != lmi_f32_to_bf16(f[i])) fail_msg("path %d: %a -> bf16 %04x, want %04x", p, f[i], g[i], lmi_f32_to_bf16(f[i]));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_shapes),
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_q4_dot),
		cmocka_unit_test(test_q4_matvec),
		cmocka_unit_test(test_half_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
