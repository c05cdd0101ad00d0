/*
 * philox.h — Philox4x32-10 and the conversion of its words into values, written once for the CPU
 * (rng.c) and the GPU (src/backend/cuda/random.cu), so that both devices draw the same numbers
 * from the same (seed, offset).
 *
 * Layout (rng.c states it for users): block b of a call is philox(ctr = {lo(offset+b),
 * hi(offset+b), 0, 0}, key = {lo(seed), hi(seed)}). Values per block: uniform float32 and
 * bernoulli below float64 4 (24 bits each), uniform float64 and bernoulli float64 2 (53 bits
 * each), normal 2 (Box-Muller on two 53-bit uniforms), randint 2 (64 bits each). Plain C that
 * nvcc also compiles (LMI_HD marks the functions host and device there); no globals.
 * Read next: rng.c.
 */
#ifndef LUMEN_CORE_PHILOX_H
#define LUMEN_CORE_PHILOX_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"

/* What a call draws (lmi_rng_call.kind). */
enum { LMI_RNG_UNIFORM, LMI_RNG_NORMAL, LMI_RNG_RANDINT, LMI_RNG_BERNOULLI };

#define LMI_PHILOX_M0 0xD2511F53u
#define LMI_PHILOX_M1 0xCD9E8D57u
#define LMI_PHILOX_W0 0x9E3779B9u
#define LMI_PHILOX_W1 0xBB67AE85u

/* The ten rounds: out = philox(ctr, key). */
LMI_HD void lmi_philox_rounds(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	for (int r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)LMI_PHILOX_M0 * c0, p1 = (uint64_t)LMI_PHILOX_M1 * c2;
		uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
		uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
		c0 = hi1 ^ c1 ^ k0;
		c1 = lo1;
		c2 = hi0 ^ c3 ^ k1;
		c3 = lo0;
		k0 += LMI_PHILOX_W0;
		k1 += LMI_PHILOX_W1;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

/* The 4 words of block number b (the offset already added) under seed. */
LMI_HD void lmi_philox_block(uint64_t seed, uint64_t b, uint32_t w[4])
{
	uint32_t ctr[4] = {(uint32_t)b, (uint32_t)(b >> 32), 0, 0};
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	lmi_philox_rounds(ctr, key, w);
}

/* A uniform double in [0, 1) from 53 bits of two words. */
LMI_HD double lmi_u53(uint32_t a, uint32_t b)
{
	return (double)(((uint64_t)a << 21) ^ (b >> 11)) * 0x1.0p-53;
}

/* Values per block for kind, at float64 precision (f64) or 24 bits (float32 and the rest). */
LMI_HD int lmi_rng_per_block(int kind, int f64)
{
	if (kind == LMI_RNG_NORMAL || kind == LMI_RNG_RANDINT) return 2;
	return f64 ? 2 : 4;
}

/*
 * The values of a uniform, bernoulli or normal block into v[0..lmi_rng_per_block): uniform in
 * [a, b) (float32: kept below b after rounding), bernoulli 1 where u < a, normal mean a, std b.
 */
LMI_HD void lmi_rng_values(int kind, int f64, double a, double b, const uint32_t w[4], double v[4])
{
	if (kind == LMI_RNG_NORMAL) {
		double u1 = lmi_u53(w[0], w[1]), u2 = lmi_u53(w[2], w[3]);
		double r = sqrt(-2.0 * log(1.0 - u1)); /* 1 - u1 in (0, 1] */
		v[0] = a + b * r * cos(2 * 3.14159265358979323846 * u2);
		v[1] = a + b * r * sin(2 * 3.14159265358979323846 * u2);
		return;
	}
	int n = f64 ? 2 : 4;
	if (f64) {
		v[0] = lmi_u53(w[0], w[1]);
		v[1] = lmi_u53(w[2], w[3]);
	} else {
		for (int i = 0; i < 4; i++) v[i] = (double)(w[i] >> 8) * 0x1.0p-24;
	}
	for (int i = 0; i < n; i++) {
		if (kind == LMI_RNG_UNIFORM) {
			v[i] = a + (b - a) * v[i];
			/* float32 rounding can land on b: keep the interval half-open */
			if (!f64 && (float)v[i] >= (float)b && b > a)
				v[i] = nextafterf((float)b, (float)a);
		} else {
			v[i] = v[i] < a ? 1.0 : 0.0;
		}
	}
}

/* randint's two values of a block: lo + (64 random bits mod range), in unsigned arithmetic (the
 * sum always lands in [lo, hi)), never through a double. */
LMI_HD void lmi_rng_randint(const uint32_t w[4], int64_t lo, uint64_t range, int64_t v[2])
{
	uint64_t x0 = ((uint64_t)w[0] << 32) | w[1], x1 = ((uint64_t)w[2] << 32) | w[3];
	v[0] = (int64_t)((uint64_t)lo + x0 % range);
	v[1] = (int64_t)((uint64_t)lo + x1 % range);
}

#endif
