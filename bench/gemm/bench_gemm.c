/*
 * bench_gemm.c — Lumen's lm_matmul against a direct cblas_sgemm call on the same buffers,
 * square float32 matrices 256..2048, at 1 and 2 threads; then a mixed workload (the forward and
 * backward of a small MLP: matmuls, bias adds, relu, sums) at 1 and 2 threads, to show the one
 * thread pool: with two pools fighting, 2 threads ran slower than 1 (FIELD-NOTES.md).
 *
 * The anchor calls the very OpenBLAS that Lumen loaded (lmi_blas()->sgemm: same library, same
 * kernels, same thread count) on the input tensors' own buffers, writing a preallocated C.
 * Lumen's time includes everything a user pays: argument checks, the result's allocation (served
 * by the caching allocator after the first call), the gemm. Times are medians of interleaved
 * rounds (anchor, Lumen, anchor, ...). Ratio = Lumen time / anchor time (target <= 1.05).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "backend/cpu/blas.h"
#include "bench_util.h"
#include "lumen/autograd.h"
#include "lumen/ops.h"

#define MAXR 41

/* One MLP step: (B, 784) -> 512 -> relu -> 256 -> relu -> 10, sum of outputs, backward. */
typedef struct mlp {
	lm_tensor *x, *w1, *b1, *w2, *b2, *w3, *b3;
} mlp;

static void mlp_step(mlp *m)
{
	lm_tensor *h1 = lm_matmul(m->x, m->w1), *a1 = h1 ? lm_add(h1, m->b1) : NULL;
	lm_tensor *r1 = a1 ? lm_relu(a1) : NULL, *h2 = r1 ? lm_matmul(r1, m->w2) : NULL;
	lm_tensor *a2 = h2 ? lm_add(h2, m->b2) : NULL, *r2 = a2 ? lm_relu(a2) : NULL;
	lm_tensor *h3 = r2 ? lm_matmul(r2, m->w3) : NULL, *a3 = h3 ? lm_add(h3, m->b3) : NULL;
	lm_tensor *s = a3 ? lm_sum(a3, LM_DIM_ALL, false) : NULL;
	CHECK(s && lm_backward(s, NULL, false) == LM_OK);
	lm_tensor *all[] = {h1, a1, r1, h2, a2, r2, h3, a3, s};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
	lm_tensor *ps[] = {m->w1, m->b1, m->w2, m->b2, m->w3, m->b3};
	for (size_t i = 0; i < 6; i++) lm_tensor_set_grad(ps[i], NULL);
}

static lm_tensor *param(int64_t r, int64_t c, double scale)
{
	lm_tensor *t = r ? lm_randn(2, (int64_t[]){r, c}, LM_FLOAT32) : lm_randn(1, &c, LM_FLOAT32);
	CHECK(t && lm_binary_scalar_(LM_MUL, t, scale) == LM_OK);
	CHECK(lm_tensor_requires_grad_(t, true) == LM_OK);
	return t;
}

int main(void)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	if (bi.threading_warning) fprintf(stderr, "warning: %s\n", bi.threading_warning);
	const lmi_blas_api *blas = lmi_blas();
	CHECK(blas);
	lm_manual_seed(0);
	static const int64_t sizes[] = {256, 512, 1024, 2048};
	double tl[3][4], ta[3][4];
	printf("bench_gemm: Lumen %s, %s (%s threading); C = A B, float32, median of interleaved rounds\n",
	       bi.version, bi.blas, bi.blas_threading);
	printf("%-8s %6s %12s %10s %12s %10s %8s\n", "threads", "n", "sgemm ms", "GFLOP/s", "Lumen ms",
	       "GFLOP/s", "ratio");
	for (int threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		for (int k = 0; k < 4; k++) {
			int64_t n = sizes[k], sh[2] = {n, n};
			lm_tensor *A = lm_randn(2, sh, LM_FLOAT32), *B = lm_randn(2, sh, LM_FLOAT32);
			float *C = malloc((size_t)(n * n) * sizeof(float));
			CHECK(A && B && C);
			const float *pa = lm_tensor_data(A), *pb = lm_tensor_data(B);
			double flop = 2.0 * (double)n * (double)n * (double)n;
			/* rounds of at least ~40 ms each, at most MAXR rounds and ~3 s in all */
			double t0 = bench_now();
			blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f, pa,
			            (int)n, pb, (int)n, 0.0f, C, (int)n);
			double one = bench_now() - t0;
			int reps = one > 0.04 ? 1 : (int)(0.04 / (one > 1e-6 ? one : 1e-6)) + 1;
			int rounds = (int)(3.0 / (2 * reps * one + 1e-9));
			rounds = rounds < 5 ? 5 : rounds > MAXR ? MAXR : rounds;
			double xa[MAXR], xl[MAXR];
			for (int w = 0; w < 2; w++) {
				lm_tensor *y = lm_matmul(A, B);
				CHECK(y);
				lm_tensor_release(y);
			}
			for (int r = 0; r < rounds; r++) {
				t0 = bench_now();
				for (int i = 0; i < reps; i++)
					blas->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0f,
					            pa, (int)n, pb, (int)n, 0.0f, C, (int)n);
				xa[r] = (bench_now() - t0) / reps;
				t0 = bench_now();
				for (int i = 0; i < reps; i++) {
					lm_tensor *y = lm_matmul(A, B);
					CHECK(y);
					lm_tensor_release(y);
				}
				xl[r] = (bench_now() - t0) / reps;
			}
			ta[threads][k] = bench_median(xa, rounds);
			tl[threads][k] = bench_median(xl, rounds);
			printf("%-8d %6lld %12.3f %10.1f %12.3f %10.1f %8.3f\n", threads, (long long)n,
			       1e3 * ta[threads][k], flop / ta[threads][k] / 1e9, 1e3 * tl[threads][k],
			       flop / tl[threads][k] / 1e9, tl[threads][k] / ta[threads][k]);
			lm_tensor_release(A);
			lm_tensor_release(B);
			free(C);
		}
	}
	printf("ratio = Lumen time / sgemm time (target <= 1.05)\n\n");

	/* the mixed workload at 1 and 2 threads */
	mlp m = {lm_randn(2, (int64_t[]){256, 784}, LM_FLOAT32), param(784, 512, 0.05), param(0, 512, 0.01),
	         param(512, 256, 0.05), param(0, 256, 0.01), param(256, 10, 0.05), param(0, 10, 0.01)};
	CHECK(m.x);
	double tm[3];
	for (int threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		double xs[MAXR];
		for (int w = 0; w < 3; w++) mlp_step(&m);
		for (int r = 0; r < 31; r++) {
			double t0 = bench_now();
			mlp_step(&m);
			xs[r] = bench_now() - t0;
		}
		tm[threads] = bench_median(xs, 31);
	}
	printf("%-44s %10s %10s %13s\n", "1 vs 2 threads (Lumen)", "1 thread", "2 threads",
	       "speedup 1->2");
	for (int k = 0; k < 4; k++)
		printf("matmul %4lld x %-4lld %25s %8.3fms %8.3fms %13.2f\n", (long long)sizes[k],
		       (long long)sizes[k], "", 1e3 * tl[1][k], 1e3 * tl[2][k], tl[1][k] / tl[2][k]);
	printf("%-44s %8.3fms %8.3fms %13.2f\n", "MLP 784-512-256-10, batch 256, fwd+bwd", 1e3 * tm[1],
	       1e3 * tm[2], tm[1] / tm[2]);
	lm_tensor *all[] = {m.x, m.w1, m.b1, m.w2, m.b2, m.w3, m.b3};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
	return 0;
}
