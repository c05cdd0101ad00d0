/*
 * bench_quant.c — the int8 product of quantized layers (src/backend/cpu/qgemm_loops.h) against
 * OpenBLAS sgemm of the same shape (lmi_blas()->sgemm: the library Lumen loaded) and against
 * Lumen's float32 matmul, in the same run, 1 and 2 threads, median of interleaved rounds. The
 * int8 figures count the multiply-adds as 2 operations each (GOP/s), as the float ones do.
 * The rest of issue 34's table (Q4_0 matrix-vector, the CNN at batch 256) comes with those paths.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cpu/blas.h"
#include "backend/cpu/simd.h"
#include "bench_util.h"
#include "lumen/ops.h"

#define MAXR 31

int main(void)
{
	const lmi_blas_api *blas = lmi_blas();
	CHECK(blas);
	lm_manual_seed(0);
	const lmi_simd_table *t = lmi_simd_for(lm_isa_active()); /* the path in use (LUMEN_ISA picks) */
	CHECK(t);
	printf("bench_quant: C = A B at n x n x n; int8: uint8 A, int8 B, int32 C (%s); float32: "
	       "OpenBLAS sgemm and Lumen's lm_matmul; median of interleaved rounds\n", t->gemm_u8s8_how());
	printf("%-8s %6s %11s %9s %11s %9s %11s %9s %13s %13s\n", "threads", "n", "int8 ms", "GOP/s", "sgemm ms",
	       "GFLOP/s", "Lumen ms", "GFLOP/s", "sgemm/int8", "Lumen/int8");
	static const int64_t sizes[] = {256, 1024};
	for (int threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		for (int s = 0; s < 2; s++) {
			int64_t n = sizes[s], sh[2] = {n, n};
			lm_tensor *A = lm_randn(2, sh, LM_FLOAT32), *B = lm_randn(2, sh, LM_FLOAT32);
			float *C = malloc((size_t)(n * n) * sizeof(float));
			uint8_t *qa = malloc((size_t)(n * n));
			int8_t *qb = malloc((size_t)(n * n));
			int32_t *qc = malloc((size_t)(n * n) * sizeof(int32_t));
			CHECK(A && B && C && qa && qb && qc);
			for (int64_t i = 0; i < n * n; i++) qa[i] = (uint8_t)(i * 2654435761u >> 24), qb[i] = (int8_t)(i * 40503u >> 8);
			const float *pa = lm_tensor_data(A), *pb = lm_tensor_data(B);
			double ops = 2.0 * (double)n * (double)n * (double)n, xi[MAXR], xs[MAXR], xl[MAXR];
			int rounds = n >= 1024 ? 9 : 21, reps = n >= 1024 ? 1 : 20;
			for (int r = -1; r < rounds; r++) { /* round -1 warms up */
				double t0 = bench_now();
				for (int i = 0; i < reps; i++) CHECK(t->gemm_u8s8(n, n, n, qa, n, qb, n, qc, n) == LM_OK);
				double ti = (bench_now() - t0) / reps;
				t0 = bench_now();
				for (int i = 0; i < reps; i++)
					blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, pa,
					            (int)n, pb, (int)n, 0.0f, C, (int)n);
				double tsg = (bench_now() - t0) / reps;
				t0 = bench_now();
				for (int i = 0; i < reps; i++) {
					lm_tensor *y = lm_matmul(A, B);
					CHECK(y);
					lm_tensor_release(y);
				}
				double tl = (bench_now() - t0) / reps;
				if (r >= 0) xi[r] = ti, xs[r] = tsg, xl[r] = tl;
			}
			double mi = bench_median(xi, rounds), ms = bench_median(xs, rounds), ml = bench_median(xl, rounds);
			printf("%-8d %6lld %11.3f %9.1f %11.3f %9.1f %11.3f %9.1f %13.2f %13.2f\n", threads, (long long)n,
			       1e3 * mi, ops / mi / 1e9, 1e3 * ms, ops / ms / 1e9, 1e3 * ml, ops / ml / 1e9, ms / mi, ml / mi);
			lm_tensor_release(A);
			lm_tensor_release(B);
			free(C);
			free(qa);
			free(qb);
			free(qc);
		}
	}
	return 0;
}
