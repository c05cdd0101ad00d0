/*
 * quant.c — quantizing float32 rows into the q8_0 and q4_0 blocks of quant.h and back, one block
 * at a time, the scale rounded through float16 (half.h). Plain C over any alignment (blocks are
 * 34 and 18 bytes: copied in and out, never dereferenced in place).
 */
#include <math.h>
#include <string.h>

#include "core/half.h"
#include "core/quant.h"

static lmi_block_q8_0 q8_0_of(const float *x)
{
	float amax = 0;
	for (int j = 0; j < LMI_QK; j++) amax = fmaxf(amax, fabsf(x[j]));
	float d = amax / 127, id = d != 0 ? 1.0f / d : 0.0f;
	lmi_block_q8_0 blk;
	blk.d = lmi_f32_to_f16(d);
	for (int j = 0; j < LMI_QK; j++) blk.q[j] = (int8_t)roundf(x[j] * id);
	return blk;
}

static lmi_block_q4_0 q4_0_of(const float *x)
{
	float amax = 0, m = 0; /* the value of largest magnitude, the first of equals */
	for (int j = 0; j < LMI_QK; j++)
		if (fabsf(x[j]) > amax) amax = fabsf(x[j]), m = x[j];
	float d = m / -8, id = d != 0 ? 1.0f / d : 0.0f;
	lmi_block_q4_0 blk;
	blk.d = lmi_f32_to_f16(d);
	for (int j = 0; j < LMI_QK / 2; j++) {
		int lo = (int8_t)(x[j] * id + 8.5f), hi = (int8_t)(x[j + LMI_QK / 2] * id + 8.5f);
		blk.q[j] = (uint8_t)((lo < 15 ? lo : 15) | (hi < 15 ? hi : 15) << 4);
	}
	return blk;
}

void lmi_quantize_q8_0(const float *x, void *blocks, int64_t n)
{
	for (int64_t b = 0; b < n / LMI_QK; b++) {
		lmi_block_q8_0 blk = q8_0_of(x + b * LMI_QK);
		memcpy((char *)blocks + b * (int64_t)sizeof blk, &blk, sizeof blk);
	}
}

void lmi_quantize_q4_0(const float *x, void *blocks, int64_t n)
{
	for (int64_t b = 0; b < n / LMI_QK; b++) {
		lmi_block_q4_0 blk = q4_0_of(x + b * LMI_QK);
		memcpy((char *)blocks + b * (int64_t)sizeof blk, &blk, sizeof blk);
	}
}

void lmi_dequantize_q8_0(const void *blocks, float *y, int64_t n)
{
	for (int64_t b = 0; b < n / LMI_QK; b++, y += LMI_QK) {
		lmi_block_q8_0 blk;
		memcpy(&blk, (const char *)blocks + b * (int64_t)sizeof blk, sizeof blk);
		float d = lmi_f16_to_f32(blk.d);
		for (int j = 0; j < LMI_QK; j++) y[j] = (float)blk.q[j] * d;
	}
}

void lmi_dequantize_q4_0(const void *blocks, float *y, int64_t n)
{
	for (int64_t b = 0; b < n / LMI_QK; b++, y += LMI_QK) {
		lmi_block_q4_0 blk;
		memcpy(&blk, (const char *)blocks + b * (int64_t)sizeof blk, sizeof blk);
		float d = lmi_f16_to_f32(blk.d);
		for (int j = 0; j < LMI_QK / 2; j++) {
			y[j] = (float)((blk.q[j] & 0x0f) - 8) * d;
			y[j + LMI_QK / 2] = (float)((blk.q[j] >> 4) - 8) * d;
		}
	}
}
