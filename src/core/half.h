/*
 * half.h — float16 (IEEE 754 binary16) and bfloat16 to and from float32, one element, written
 * once for the host and the GPU (LMI_HD, as philox.h): the conversions of the float16 and
 * bfloat16 rows of the type table and the scales of the block types (quant.c).
 *
 * float32 -> float16 rounds to nearest, ties to even, as F16C's vcvtps2ph with rounding mode 0 and
 * a C cast to _Float16 do: values past the largest half (65504) round to infinity when they are
 * at least 65520 (halfway to the next power), smaller ones to 65504; values below the smallest
 * subnormal half (2^-24) round to zero or to it; NaN stays NaN (quiet, sign kept, the payload's top
 * bits kept), infinities stay. float32 -> bfloat16 keeps the top 16 bits rounded to nearest, ties
 * to even (never saturating: a float past bfloat16's largest rounds to infinity as in PyTorch);
 * NaN stays a quiet NaN. Widening is exact both ways (a float16 NaN comes back quiet). Read next: quant.c.
 */
#ifndef LUMEN_CORE_HALF_H
#define LUMEN_CORE_HALF_H

#include <stdint.h>
#include <string.h>

#include "core/hd.h"

LMI_HD uint32_t lmi_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

LMI_HD float lmi_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* float16 bits h as a float32 (exact). */
LMI_HD float lmi_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
	if (exp == 0x1f) /* inf; a NaN comes back quiet, as F16C's vcvtph2ps gives it */
		return lmi_bits_f32(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0));
	if (exp) return lmi_bits_f32(sign | ((exp + 112) << 23) | (man << 13)); /* normal */
	if (!man) return lmi_bits_f32(sign);                                 /* +-0 */
	/* subnormal: man * 2^-24, exact in float32 */
	float v = (float)man * 5.9604644775390625e-8f;
	return sign ? -v : v;
}

/* float32 f as float16 bits, rounded to nearest, ties to even. */
LMI_HD uint16_t lmi_f32_to_f16(float f)
{
	uint32_t u = lmi_f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
	if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); /* NaN, quiet */
	if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 (or inf): infinity */
	if (a >= 0x38800000u) { /* >= 2^-14: a normal half */
		uint32_t r = a - 0x38000000u; /* rebias the exponent 127 -> 15 */
		r += 0xfffu + ((r >> 13) & 1u); /* round to nearest even at bit 13 (a carry renormalises) */
		return (uint16_t)(sign | (r >> 13));
	}
	if (a < 0x33000000u) return (uint16_t)sign; /* below 2^-25: rounds to zero */
	/* a subnormal half: the mantissa with its hidden bit, shifted to units of 2^-24 */
	uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126 - e; /* 14..24 */
	uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
	if (rem > half || (rem == half && (q & 1u))) q++;
	return (uint16_t)(sign | q);
}

/* bfloat16 bits b as a float32 (exact). */
LMI_HD float lmi_bf16_to_f32(uint16_t b) { return lmi_bits_f32((uint32_t)b << 16); }

/* float32 f as bfloat16 bits, rounded to nearest, ties to even. */
LMI_HD uint16_t lmi_f32_to_bf16(float f)
{
	uint32_t u = lmi_f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u); /* NaN, quiet */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

#endif
