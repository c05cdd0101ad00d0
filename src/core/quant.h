/*
 * quant.h — the block formats of quantized weights, in ggml's layout (so that a tensor Lumen
 * quantizes has the bytes ggml's reference quantizers give, and GGUF files carry them as they
 * are): 32 values per block with one float16 scale d.
 *
 *   q8_0: {d, int8 q[32]}, 34 bytes:   d = max|x| / 127,  q[j] = round(x[j] / d) (half away
 *         from zero, as C's roundf);   x[j] ~ d * q[j].
 *   q4_0: {d, uint8 q[16]}, 18 bytes:  d = m / -8 where m is the value of largest magnitude (the
 *         first of equals), so m itself maps to -8; q = min(15, trunc(x / d + 8.5)) in 0..15;
 *         byte j holds element j in its low nibble and element j + 16 in its high nibble;
 *         x[j] ~ d * (q[j] - 8).
 *   A block of zeros has d = 0 and every q at the zero point. The division is a multiplication by
 *   1/d computed in float32, as the reference does (bit-compatibility depends on it).
 *
 * These are the rows' conversions the type table will hold for the block dtypes (to_float:
 * dequantize, from_float: quantize); n is a multiple of 32 (the callers check it and say so).
 * Read next: quant.c, half.h.
 */
#ifndef LUMEN_CORE_QUANT_H
#define LUMEN_CORE_QUANT_H

#include <stdint.h>

#define LMI_QK 32 /* values per block */

typedef struct lmi_block_q8_0 {
	uint16_t d; /* float16 bits */
	int8_t q[LMI_QK];
} lmi_block_q8_0;

typedef struct lmi_block_q4_0 {
	uint16_t d; /* float16 bits */
	uint8_t q[LMI_QK / 2];
} lmi_block_q4_0;

_Static_assert(sizeof(lmi_block_q8_0) == 34, "q8_0 blocks are 34 bytes");
_Static_assert(sizeof(lmi_block_q4_0) == 18, "q4_0 blocks are 18 bytes");

void lmi_quantize_q8_0(const float *x, void *blocks, int64_t n);
void lmi_dequantize_q8_0(const void *blocks, float *y, int64_t n);
void lmi_quantize_q4_0(const float *x, void *blocks, int64_t n);
void lmi_dequantize_q4_0(const void *blocks, float *y, int64_t n);

#endif
