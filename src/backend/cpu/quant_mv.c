/*
 * quant_mv.c — the quantized matrix-vector product (cpu.h): x quantized to q8_0 once, then each
 * row's q4_0 blocks against it by the SIMD path's dot product (qdot_loops.h), rows spread over
 * the threads. The weights are read once, 18 bytes per 32 values: the product runs at the speed
 * of memory, which is the point of a 4-bit matrix. The same for q8_0 weights (a plain loop over
 * the codes), the CPU's int_mm (the SIMD path's exact u8 x s8 product) and linear_blocks (the
 * rows of a batch through the matrix-vector product). Read next: qdot_loops.h.
 */
#include "backend/cpu/cpu.h"
#include "backend/cpu/simd.h"
#include "core/half.h"
#include "core/quant.h"

#include <string.h>

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

/* the q8_0 x q8_0 dot product of nb blocks: the codes in int32 per block, scaled once per block */
static float dot_q8_0(const lmi_block_q8_0 *w, const lmi_block_q8_0 *x, int64_t nb)
{
	float sum = 0;
	for (int64_t b = 0; b < nb; b++) {
		int32_t acc = 0;
		for (int j = 0; j < LMI_QK; j++) acc += (int32_t)w[b].q[j] * (int32_t)x[b].q[j];
		sum += (float)acc * lmi_f16_to_f32(w[b].d) * lmi_f16_to_f32(x[b].d);
	}
	return sum;
}

lm_status lmi_cpu_matvec_q8_0(const void *w, int64_t rows, int64_t cols, const float *x, float *y)
{
	int64_t nb = cols / LMI_QK;
	size_t bytes = (size_t)nb * sizeof(lmi_block_q8_0) + 1;
	lmi_block_q8_0 *xq = lm_alloc(bytes);
	if (!xq) return lm_last_status();
	lmi_quantize_q8_0(x, xq, cols);
	const lmi_block_q8_0 *wb = w;
	int nt = rows * cols >= (1 << 20) ? lmi_num_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(nt)
	for (int64_t i = 0; i < rows; i++) y[i] = dot_q8_0(wb + i * nb, xq, nb);
	lm_free(xq, bytes);
	return LM_OK;
}

lm_status lmi_cpu_int_mm(const lm_tensor *a, const lm_tensor *b, lm_tensor *c)
{
	int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
	if (M == 0 || N == 0) return LM_OK;
	if (K == 0) {
		memset(lmi_data(c), 0, (size_t)(M * N) * sizeof(int32_t));
		return LM_OK;
	}
	return lmi_simd()->gemm_u8s8(M, N, K, (const uint8_t *)lmi_data(a), K, (const int8_t *)lmi_data(b), N,
	                             (int32_t *)lmi_data(c), N);
}

lm_status lmi_cpu_linear_blocks(const lm_tensor *x, const lm_tensor *w, lm_tensor *y)
{
	int64_t M = x->shape[0], K = x->shape[1], N = w->shape[0];
	lm_status (*mv)(const void *, int64_t, int64_t, const float *, float *) =
	    w->dtype == LM_Q4_0 ? lmi_cpu_matvec_q4_0 : lmi_cpu_matvec_q8_0;
	const float *xp = (const float *)lmi_data(x);
	float *yp = (float *)lmi_data(y);
	lm_status s = LM_OK;
	/* rows of x over the threads when there are enough of them (each product then on one) */
	int nt = M >= 2 && M * N * K >= (1 << 20) ? lmi_num_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(nt)
	for (int64_t m = 0; m < M; m++) {
		lm_status sm = mv(lmi_data(w), N, K, xp + m * K, yp + m * N);
		if (sm) {
#pragma omp critical
			s = sm;
		}
	}
	return s;
}
