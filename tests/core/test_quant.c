/*
 * test_quant.c — float16, bfloat16 (src/core/half.h) and the q8_0 / q4_0 blocks (src/core/quant.c)
 * against references that do not share their code: the compiler's own _Float16 (IEEE binary16,
 * round to nearest even) for every float16 pattern and a million float32 patterns; bfloat16
 * against the nearest of its two neighbours computed in double; the blocks, byte for byte, against
 * a second quantizer written here from ggml's documented layout (its scale through _Float16), on
 * rows built to hit the edges (ties at .5, zeros, the first of equal magnitudes, a negative
 * extreme); and ggml's own accuracy check: on 0.1 + 2 cos(i), 4,096 values, the total error
 * sqrt(sum of squared differences) / n stays within 0.002.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/half.h"
#include "core/quant.h"

static uint16_t ref_f16(float f)
{
	_Float16 h = (_Float16)f;
	uint16_t b;
	memcpy(&b, &h, 2);
	return b;
}

static float ref_f16_value(uint16_t b)
{
	_Float16 h;
	memcpy(&h, &b, 2);
	return (float)h;
}

static void test_f16_every_pattern(void **state)
{
	(void)state;
	for (uint32_t b = 0; b < 65536; b++) {
		float f = lmi_f16_to_f32((uint16_t)b), r = ref_f16_value((uint16_t)b);
		if (isnan(r)) {
			assert_true(isnan(f));
			assert_true(isnan(lmi_f16_to_f32(lmi_f32_to_f16(f))));
			continue;
		}
		if (lmi_f32_bits(f) != lmi_f32_bits(r)) fail_msg("f16 %04x: %a, reference %a", b, f, r);
		if (lmi_f32_to_f16(f) != b) fail_msg("f16 %04x does not come back (%04x)", b, lmi_f32_to_f16(f));
	}
}

static void check_f16(float f)
{
	uint16_t got = lmi_f32_to_f16(f), want = ref_f16(f);
	if (isnan(f)) {
		assert_true((got & 0x7c00) == 0x7c00 && (got & 0x3ff));
		return;
	}
	if (got != want) fail_msg("f32 %a (%08x) -> f16 %04x, reference %04x", f, lmi_f32_bits(f), got, want);
}

static void test_f16_rounding(void **state)
{
	(void)state;
	/* the edges: the largest half, halfway to the next power (ties to even: infinity), the
	 * subnormals and halfway below the smallest, ties between neighbours */
	static const float edges[] = {
		65504.0f, 65519.0f, 65519.99f, 65520.0f, 65536.0f, 1e10f, INFINITY, -INFINITY, 0.0f, -0.0f,
		5.9604644775390625e-8f, 2.98023223876953125e-8f, 2.9802326e-8f, 8.940697e-8f,
		6.103515625e-5f, 6.1035156e-5f, 6.0975552e-5f, 1.0009765625f, 1.00048828125f,
		1.00146484375f, 2049.0f, 2051.0f, 0.1f, -0.1f, 3.14159265f, NAN,
	};
	for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
		check_f16(edges[i]);
		check_f16(-edges[i]);
	}
	/* a million patterns spread over every exponent */
	for (uint64_t u = 0; u < (1ull << 32); u += 4093) check_f16(lmi_bits_f32((uint32_t)u));
}

/* the bfloat16 nearest f: the two neighbours compared in double, ties to the even one */
static uint16_t ref_bf16(float f)
{
	uint32_t u = lmi_f32_bits(f), lo = u & 0xffff0000u, hi = lo + 0x10000u;
	double x = f, a = lmi_bits_f32(lo);
	double b = ((hi & 0x7f800000u) == 0x7f800000u) ? copysign(ldexp(1.0, 128), x) : lmi_bits_f32(hi);
	double da = fabs(x - a), db = fabs(b - x);
	uint32_t pick = da < db ? lo : db < da ? hi : (((lo >> 16) & 1u) ? hi : lo);
	return (uint16_t)(pick >> 16);
}

static void test_bf16(void **state)
{
	(void)state;
	for (uint32_t b = 0; b < 65536; b++) {
		float f = lmi_bf16_to_f32((uint16_t)b);
		assert_int_equal(lmi_f32_bits(f), b << 16);
		if (!isnan(f)) assert_int_equal(lmi_f32_to_bf16(f), b);
		else assert_true(isnan(lmi_bf16_to_f32(lmi_f32_to_bf16(f))));
	}
	for (uint64_t u = 0; u < (1ull << 32); u += 4093) {
		float f = lmi_bits_f32((uint32_t)u);
		if (isnan(f) || isinf(f)) continue;
		uint16_t got = lmi_f32_to_bf16(f), want = ref_bf16(f);
		if (got != want) fail_msg("f32 %a -> bf16 %04x, reference %04x", f, got, want);
	}
	assert_int_equal(lmi_f32_to_bf16(lmi_bits_f32(0x3f808000u)), 0x3f80); /* a tie: to even */
	assert_int_equal(lmi_f32_to_bf16(lmi_bits_f32(0x3f818000u)), 0x3f82); /* a tie: to even */
	assert_int_equal(lmi_f32_to_bf16(lmi_bits_f32(0x7f7fffffu)), 0x7f80); /* past the largest: inf */
}

/* ---------------------------------------------------------------- the blocks */

/* q8_0 and q4_0 written again from the layout (quant.h's comment, ggml's documentation) */
static void ref_q8_0(const float *x, unsigned char *out)
{
	float amax = 0;
	for (int j = 0; j < 32; j++)
		if (fabsf(x[j]) > amax) amax = fabsf(x[j]);
	float d = amax / 127.0f, id = d == 0.0f ? 0.0f : 1.0f / d;
	uint16_t dh = ref_f16(d);
	memcpy(out, &dh, 2);
	for (int j = 0; j < 32; j++) {
		float v = x[j] * id; /* round half away from zero */
		out[2 + j] = (unsigned char)(int8_t)(v < 0 ? -floorf(-v + 0.5f) : floorf(v + 0.5f));
	}
}

static void ref_q4_0(const float *x, unsigned char *out)
{
	int at = 0;
	for (int j = 1; j < 32; j++)
		if (fabsf(x[j]) > fabsf(x[at])) at = j;
	float d = x[at] / -8.0f, id = d == 0.0f ? 0.0f : 1.0f / d;
	uint16_t dh = ref_f16(d);
	memcpy(out, &dh, 2);
	for (int j = 0; j < 16; j++) {
		int q[2];
		for (int h = 0; h < 2; h++) {
			float v = x[j + 16 * h] * id + 8.5f;
			q[h] = (int)truncf(v);
			if (q[h] > 15) q[h] = 15;
		}
		out[2 + j] = (unsigned char)(q[0] + 16 * q[1]);
	}
}

static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

/* rows of 8 blocks in several shapes: kind selects how they are drawn */
static void fill_row(float *x, int kind)
{
	for (int i = 0; i < 256; i++) {
		double u = uniform();
		switch (kind) {
		case 0: x[i] = (float)(4 * u - 2); break;                        /* uniform */
		case 1: x[i] = (float)(sqrt(-2 * log(u + 1e-12)) * cos(6.283185307 * uniform())); break;
		case 2: x[i] = (float)((int)(u * 33) - 16) * 0.25f; break;      /* many ties at .5 */
		case 3: x[i] = i % 32 == 5 ? -3.0f : (i % 32 == 9 ? 3.0f : (float)u); break; /* -m first */
		case 4: x[i] = i / 32 == 2 ? 0.0f : (float)(u * 1e-6);  break;   /* a zero block, tiny */
		default: x[i] = (float)(u * 6e4 - 3e4); break;                   /* large */
		}
	}
}

static void test_blocks_bytes(void **state)
{
	(void)state;
	float x[256];
	unsigned char got[8 * 34], want[8 * 34];
	for (int trial = 0; trial < 600; trial++) {
		fill_row(x, trial % 6);
		lmi_quantize_q8_0(x, got, 256);
		for (int b = 0; b < 8; b++) ref_q8_0(x + 32 * b, want + 34 * b);
		if (memcmp(got, want, 8 * 34)) fail_msg("q8_0 bytes differ (trial %d, kind %d)", trial, trial % 6);
		lmi_quantize_q4_0(x, got, 256);
		for (int b = 0; b < 8; b++) ref_q4_0(x + 32 * b, want + 18 * b);
		if (memcmp(got, want, 8 * 18)) fail_msg("q4_0 bytes differ (trial %d, kind %d)", trial, trial % 6);
	}
	/* the layout by hand: the first of -8 and 8 is the extreme, so d = -8 / -8 = 1 and -8 maps to
	 * q = 0; 8 -> 16.5 saturates at 15; element j in the low nibble, j + 16 in the high one */
	float y[32] = {0};
	y[0] = -8, y[16] = 8, y[1] = 3, y[17] = -2.5f;
	unsigned char q[18];
	lmi_quantize_q4_0(y, q, 32);
	uint16_t d;
	memcpy(&d, q, 2);
	assert_int_equal(d, 0x3c00);          /* 1.0 in float16 */
	assert_int_equal(q[2], 0 | 15 << 4);  /* -8 + 8.5 -> 0; 8 + 8.5 -> 16 -> 15 */
	assert_int_equal(q[3], 11 | 6 << 4);  /* 3 + 8.5 -> 11; -2.5 + 8.5 -> 6 */
	assert_int_equal(q[4], 8 | 8 << 4);   /* zeros: the zero point 8 */
}

static double total_error(const float *a, const float *b, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++) s += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
	return sqrt(s) / n;
}

static void test_blocks_accuracy(void **state)
{
	(void)state;
	enum { N = 32 * 128 };
	static float x[N], y[N];
	static unsigned char q[N / 32 * 34];
	for (int i = 0; i < N; i++) x[i] = 0.1f + 2 * cosf((float)i);
	lmi_quantize_q8_0(x, q, N);
	lmi_dequantize_q8_0(q, y, N);
	double e8 = total_error(x, y, N);
	/* q8_0: each value within half a step (d / 2, d rounded through float16) */
	for (int b = 0; b < N / 32; b++) {
		uint16_t dh;
		memcpy(&dh, q + 34 * b, 2);
		float d = lmi_f16_to_f32(dh);
		for (int j = 0; j < 32; j++) assert_true(fabsf(x[32 * b + j] - y[32 * b + j]) <= d * 0.5f + 2e-3f);
	}
	lmi_quantize_q4_0(x, q, N);
	lmi_dequantize_q4_0(q, y, N);
	double e4 = total_error(x, y, N);
	if (!(e8 <= 0.002 && e4 <= 0.002)) fail_msg("total error q8_0 %g, q4_0 %g (ggml's bound 0.002)", e8, e4);
	assert_true(e8 < e4); /* and 8 bits beat 4 */
	/* dequantizing reads back exactly what the bytes say: zero blocks give zeros */
	float z[32] = {0}, back[32];
	lmi_quantize_q4_0(z, q, 32);
	lmi_dequantize_q4_0(q, back, 32);
	for (int j = 0; j < 32; j++) assert_true(back[j] == 0.0f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_every_pattern), cmocka_unit_test(test_f16_rounding),
		cmocka_unit_test(test_bf16),             cmocka_unit_test(test_blocks_bytes),
		cmocka_unit_test(test_blocks_accuracy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
