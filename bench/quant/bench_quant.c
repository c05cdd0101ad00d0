/*
 * bench_quant.c — the int8 product of quantized layers (src/backend/cpu/qgemm_loops.h) against
 * OpenBLAS sgemm of the same shape (lmi_blas()->sgemm: the library Lumen loaded) and against
 * Lumen's float32 matmul, in the same run, 1 and 2 threads, median of interleaved rounds. The
 * int8 figures count the multiply-adds as 2 operations each (GOP/s), as the float ones do.
 * Then the q4_0 matrix-vector product (x quantized to q8_0 on the fly, cpu.h's lmi_cpu_matvec_q4_0)
 * at 4096 x 4096 against float32 matrix-vector products of the same shape (OpenBLAS sgemm with one
 * column, and lm_matmul), in GB/s of the weight bytes each reads. Last, float16 and bfloat16 rows
 * of 16M values to and from float32 on the path in use against the scalar path (core/half.h
 * element by element). The CNN at batch 256 comes with the quantized layers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cpu/blas.h"
#include "backend/cpu/cpu.h"
#include "core/quant.h"
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
	/* the matrix-vector product of a 4-bit matrix */
	printf("\nq4_0 matrix-vector, y = W x, W 4096 x 4096 (q4_0: 18 bytes per 32 weights; float32: 4 per "
	       "weight); GB/s of weight bytes\n");
	printf("%-8s %11s %9s %12s %9s %11s %9s %13s %13s\n", "threads", "q4_0 ms", "GB/s", "sgemv* ms",
	       "GB/s", "Lumen ms", "GB/s", "sgemv*/q4_0", "Lumen/q4_0");
	enum { R = 4096, C = 4096 };
	int64_t wsh[2] = {R, C}, xsh[2] = {C, 1};
	lm_tensor *W = lm_randn(2, wsh, LM_FLOAT32), *X = lm_randn(2, xsh, LM_FLOAT32);
	size_t qbytes = (size_t)R * (C / 32) * sizeof(lmi_block_q4_0);
	void *wq = malloc(qbytes);
	float *y = malloc(R * sizeof(float));
	CHECK(W && X && wq && y);
	const float *pw = lm_tensor_data(W), *px = lm_tensor_data(X);
	for (int64_t r = 0; r < R; r++) lmi_quantize_q4_0(pw + r * C, (char *)wq + r * (C / 32) * (int64_t)sizeof(lmi_block_q4_0), C);
	for (int threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		double xq[MAXR], xs[MAXR], xl[MAXR];
		int rounds = 15, reps = 10;
		for (int r = -1; r < rounds; r++) {
			double t0 = bench_now();
			for (int i = 0; i < reps; i++) CHECK(lmi_cpu_matvec_q4_0(wq, R, C, px, y) == LM_OK);
			double tq = (bench_now() - t0) / reps;
			t0 = bench_now();
			for (int i = 0; i < reps; i++)
				blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, 1, C, 1.0f, pw, C, px, 1, 0.0f, y, 1);
			double tsg = (bench_now() - t0) / reps;
			t0 = bench_now();
			for (int i = 0; i < reps; i++) {
				lm_tensor *o = lm_matmul(W, X);
				CHECK(o);
				lm_tensor_release(o);
			}
			double tl = (bench_now() - t0) / reps;
			if (r >= 0) xq[r] = tq, xs[r] = tsg, xl[r] = tl;
		}
		double mq = bench_median(xq, rounds), ms = bench_median(xs, rounds), ml = bench_median(xl, rounds);
		double fb = (double)R * C * 4;
		printf("%-8d %11.3f %9.1f %12.3f %9.1f %11.3f %9.1f %13.2f %13.2f\n", threads, 1e3 * mq, qbytes / mq / 1e9,
		       1e3 * ms, fb / ms / 1e9, 1e3 * ml, fb / ml / 1e9, ms / mq, ml / mq);
	}
	printf("* sgemv: OpenBLAS sgemm with one column (the library Lumen loaded)\n");

	/* float16 / bfloat16 rows */
	enum { H = 1 << 24 };
	float *hf = malloc(H * sizeof(float));
	uint16_t *hh = malloc(H * sizeof(uint16_t));
	CHECK(hf && hh);
	for (int64_t i = 0; i < H; i++) hf[i] = (float)(i % 65521) * 0.37f - 12000.0f;
	const lmi_simd_table *sc = lmi_simd_for(LM_ISA_SCALAR);
	printf("\nfloat16 / bfloat16 rows of %d values, 1 thread, ms for the row (memory-bound: 64 MB of float32 read or written)\n", H);
	printf("%-22s %12s %12s %9s\n", "conversion", "path ms", "scalar ms", "speedup");
	for (int c = 0; c < 4; c++) {
		static const char *const names[4] = {"float32 -> float16", "float16 -> float32", "float32 -> bfloat16", "bfloat16 -> float32"};
		double tp[MAXR], ts[MAXR];
		for (int r = -1; r < 7; r++)
			for (int w = 0; w < 2; w++) {
				const lmi_simd_table *u = w ? sc : t;
				double t0 = bench_now();
				if (c == 0) u->half.f16_from_f32(hf, hh, H);
				else if (c == 1) u->half.f16_to_f32(hh, hf, H);
				else if (c == 2) u->half.bf16_from_f32(hf, hh, H);
				else u->half.bf16_to_f32(hh, hf, H);
				double dt = bench_now() - t0;
				if (r >= 0) (w ? ts : tp)[r] = dt;
			}
		double mp = bench_median(tp, 7), ms = bench_median(ts, 7);
		printf("%-22s %12.2f %12.2f %9.2f\n", names[c], 1e3 * mp, 1e3 * ms, ms / mp);
	}
	free(hf);
	free(hh);
	lm_tensor_release(W);
	lm_tensor_release(X);
	free(wq);
	free(y);
	return 0;
}
