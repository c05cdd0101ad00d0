/*
 * half_loops.h — float16 and bfloat16 rows to and from float32, included by each simd_<isa>.c:
 * the bulk form of src/core/half.h's conversions, bit for bit the same (round to nearest even;
 * NaN quiet with its sign and top payload bits). float16 by F16C where the path has it (vcvtps2ph
 * with rounding mode 0, vcvtph2ps: x86-64-v3 and up), eight at a time, the tail by half.h;
 * bfloat16 by half.h's bit arithmetic in loops the compiler vectorises; the scalar path is half.h
 * element by element. Read next: ../../core/half.h.
 */

static void bf16_from_f32(const float *x, uint16_t *y, int64_t n)
{
	LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) y[i] = lmi_f32_to_bf16(x[i]);
}

static void bf16_to_f32(const uint16_t *x, float *y, int64_t n)
{
	LMI_OMP_SIMD for (int64_t i = 0; i < n; i++) y[i] = lmi_bf16_to_f32(x[i]);
}

#ifdef LMI_SIMD_SCALAR

static void f16_from_f32(const float *x, uint16_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++) y[i] = lmi_f32_to_f16(x[i]);
}

static void f16_to_f32(const uint16_t *x, float *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++) y[i] = lmi_f16_to_f32(x[i]);
}

#else

static void f16_from_f32(const float *x, uint16_t *y, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
	for (; i < n; i++) y[i] = lmi_f32_to_f16(x[i]);
}

static void f16_to_f32(const uint16_t *x, float *y, int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
	for (; i < n; i++) y[i] = lmi_f16_to_f32(x[i]);
}

#endif
