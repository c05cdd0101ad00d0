/*
 * quant_mv.c — the quantized matrix-vector product (cpu.h): x quantized to q8_0 once, then each
 * row's q4_0 blocks against it by the SIMD path's dot product (qdot_loops.h), rows spread over
 * the threads. The weights are read once, 18 bytes per 32 values: the product runs at the speed
 * of memory, which is the point of a 4-bit matrix. Read next: qdot_loops.h.
 */
#include "backend/cpu/cpu.h"
#include "backend/cpu/simd.h"
#include "core/quant.h"

lm_status lmi_cpu_matvec_q4_0(const void *w, int64_t rows, int64_t cols, const float *x, float *y)
{
	int64_t nb = cols / LMI_QK;
	size_t bytes = (size_t)nb * sizeof(lmi_block_q8_0) + 1;
	void *xq = lm_alloc(bytes);
	if (!xq) return lm_last_status();
	lmi_quantize_q8_0(x, xq, cols);
	float (*dot)(const void *, const void *, int64_t) = lmi_simd()->dot_q4_0_q8_0;
	const char *wb = w;
	int nt = rows * cols >= (1 << 20) ? lmi_num_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(nt)
	for (int64_t i = 0; i < rows; i++) y[i] = dot(wb + i * nb * (int64_t)sizeof(lmi_block_q4_0), xq, nb);
	lm_free(xq, bytes);
	return LM_OK;
}
