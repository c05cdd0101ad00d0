/*
 * qdot_loops.h — the dot product of a q4_0 row with q8_0 activations (src/core/quant.h's blocks),
 * the inner loop of a quantized matrix-vector product, included by each simd_<isa>.c:
 *
 *   sum over blocks b of d4(b) * d8(b) * sum_j (q4[b][j] - 8) * q8[b][j]
 *
 * The integer sum of a block is exact (at most 32 * 8 * 128 in magnitude) whatever the bytes, the
 * scale product and the sum over blocks are float32, as ggml's. Scalar: the plain loop; vector
 * paths: the 32 nibbles unpacked into one register (low nibbles, elements 0..15, in the low
 * half), both operands widened to int16 and vpmaddwd adding pairs (no vpmaddubsw sign trick: it
 * breaks on a -128 byte), the scales widened by F16C, one fused multiply-add of the block's
 * integer sums by its scale into eight float lanes. Read next: ../../core/quant.c, qgemm_loops.h.
 */

#ifdef LMI_SIMD_SCALAR

static float dot_q4_0_q8_0(const void *x, const void *y, int64_t nb)
{
	float s = 0;
	for (int64_t b = 0; b < nb; b++) {
		lmi_block_q4_0 bx;
		lmi_block_q8_0 by;
		memcpy(&bx, (const char *)x + b * (int64_t)sizeof bx, sizeof bx);
		memcpy(&by, (const char *)y + b * (int64_t)sizeof by, sizeof by);
		int32_t sum = 0;
		for (int j = 0; j < LMI_QK / 2; j++)
			sum += ((bx.q[j] & 0x0f) - 8) * by.q[j] + ((bx.q[j] >> 4) - 8) * by.q[j + LMI_QK / 2];
		s += (float)sum * (lmi_f16_to_f32(bx.d) * lmi_f16_to_f32(by.d));
	}
	return s;
}

#else

/* the product of the two blocks' float16 scales (F16C), and the sum of eight float lanes */
static inline float qd_scale(const char *bx, const char *by)
{
	uint16_t dx, dy;
	memcpy(&dx, bx, 2);
	memcpy(&dy, by, 2);
	return _cvtsh_ss(dx) * _cvtsh_ss(dy);
}

static inline float qd_hsum(__m256 a)
{
	__m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
	h = _mm_add_ps(h, _mm_movehl_ps(h, h));
	h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
	return _mm_cvtss_f32(h);
}

static float dot_q4_0_q8_0_w(const void *x, const void *y, int64_t nb)
{
	const __m128i low = _mm_set1_epi8(0x0f);
	const __m256i eight = _mm256_set1_epi16(8);
	__m256 acc = _mm256_setzero_ps();
	for (int64_t b = 0; b < nb; b++) {
		const char *bx = (const char *)x + b * (int64_t)sizeof(lmi_block_q4_0);
		const char *by = (const char *)y + b * (int64_t)sizeof(lmi_block_q8_0);
		__m128i raw = _mm_loadu_si128((const __m128i *)(bx + 2));
		__m128i lo = _mm_and_si128(raw, low), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), low);
		/* elements 0..15 and 16..31 as int16 minus 8, against the q8 bytes widened alike */
		__m256i x0 = _mm256_sub_epi16(_mm256_cvtepu8_epi16(lo), eight);
		__m256i x1 = _mm256_sub_epi16(_mm256_cvtepu8_epi16(hi), eight);
		__m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(by + 2)));
		__m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(by + 2 + 16)));
		__m256i s = _mm256_add_epi32(_mm256_madd_epi16(x0, y0), _mm256_madd_epi16(x1, y1));
		acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(qd_scale(bx, by)), acc);
	}
	return qd_hsum(acc);
}

#if defined(__AVX512F__)
/* With VNNI: the nibbles (0..15, unsigned) times the q8 bytes by vpdpbusd, minus 8 times the sum
 * of the q8 bytes (a second vpdpbusd against a vector of 8s): the same exact integer sums in
 * half the instructions; two accumulators for two blocks in flight. */
__attribute__((target("avx512f,avx512vl,avx512vnni,f16c,fma"))) static float dot_q4_0_q8_0_vnni(const void *x,
                                                                                             const void *y,
                                                                                             int64_t nb)
{
	const __m128i low = _mm_set1_epi8(0x0f);
	const __m256i eights = _mm256_set1_epi8(8);
	__m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
	for (int64_t b = 0; b < nb; b++) {
		const char *bx = (const char *)x + b * (int64_t)sizeof(lmi_block_q4_0);
		const char *by = (const char *)y + b * (int64_t)sizeof(lmi_block_q8_0);
		__m128i raw = _mm_loadu_si128((const __m128i *)(bx + 2));
		__m256i q4 = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_and_si128(raw, low)),
		                                     _mm_and_si128(_mm_srli_epi16(raw, 4), low), 1);
		__m256i q8 = _mm256_loadu_si256((const __m256i *)(by + 2));
		__m256i s = _mm256_dpbusd_epi32(_mm256_setzero_si256(), q4, q8);
		__m256i z = _mm256_dpbusd_epi32(_mm256_setzero_si256(), eights, q8);
		acc[b & 1] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(s, z)), _mm256_set1_ps(qd_scale(bx, by)),
		                             acc[b & 1]);
	}
	return qd_hsum(_mm256_add_ps(acc[0], acc[1]));
}

static float dot_q4_0_q8_0(const void *x, const void *y, int64_t nb)
{
	return has_vnni() ? dot_q4_0_q8_0_vnni(x, y, nb) : dot_q4_0_q8_0_w(x, y, nb);
}
#else
static float dot_q4_0_q8_0(const void *x, const void *y, int64_t nb) { return dot_q4_0_q8_0_w(x, y, nb); }
#endif

#endif
