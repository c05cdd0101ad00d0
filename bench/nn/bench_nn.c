/*
 * bench_nn.c — conv2d forward+backward (LeNet-like and VGG-like layers) and one MLP step
 * (784-256-10, batch 128, cross-entropy), Lumen against PyTorch CPU measured in the same run
 * (bench/nn/torch_anchor.py through /usr/bin/python3), at 1 and 2 threads. Prints images/s (or
 * ms per step) and the ratio of times Lumen / PyTorch (lower is better; 1.0 = as fast).
 *
 * Each conv row names the algorithm Lumen ran (lm_conv2d_which: the automatic choice), and the
 * VGG-like layer is also timed with each algorithm forced (im2col + OpenBLAS, Winograd), so the
 * table shows what the choice is worth. PyTorch runs with glibc's mmap threshold raised
 * (MALLOC_MMAP_THRESHOLD_ 32 MiB, its maximum, and MALLOC_TRIM_THRESHOLD_ 1 GiB): otherwise each
 * large buffer is a fresh mmap and its page faults made PyTorch's conv up to 15x slower here
 * (FIELD-NOTES.md), and the ratio would compare malloc, not convolution. Lumen's own allocator
 * reuses its blocks. The SIMD path of Lumen's loops is printed first (LUMEN_ISA picks another).
 * LUMEN_BENCH_ONLY=mlp prints the MLP step's time alone (1 thread), to compare two builds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "lumen/autograd.h"
#include "lumen/nn.h"

static lm_tensor *param(int nd, const int64_t *shape, double scale)
{
	lm_tensor *t = lm_randn(nd, shape, LM_FLOAT32);
	CHECK(t);
	if (scale != 1) CHECK(lm_binary_scalar_(LM_MUL, t, scale) == LM_OK);
	CHECK(lm_tensor_requires_grad_(t, true) == LM_OK);
	return t;
}

static void zero_grads(lm_tensor **ps, int n)
{
	for (int i = 0; i < n; i++) lm_tensor_set_grad(ps[i], NULL);
}

typedef struct conv_case {
	lm_tensor *x, *w, *b;
	lm_conv_algo algo;
} conv_case;

static const lm_conv2d_opts pad1 = {{1, 1}, {1, 1}, {1, 1}, 1};

static void conv_step(void *ctx)
{
	conv_case *c = ctx;
	lm_tensor *y = lm_conv2d_algo(c->x, c->w, c->b, &pad1, c->algo);
	CHECK(y);
	lm_tensor *s = lm_sum(y, LM_DIM_ALL, false);
	CHECK(s && lm_backward(s, NULL, false) == LM_OK);
	lm_tensor_release(s);
	lm_tensor_release(y);
	lm_tensor *ps[3] = {c->x, c->w, c->b};
	zero_grads(ps, 3);
}

typedef struct mlp_case {
	lm_tensor *x, *t, *w1, *b1, *w2, *b2;
} mlp_case;

static void mlp_step(void *ctx)
{
	mlp_case *m = ctx;
	lm_tensor *h = lm_linear(m->x, m->w1, m->b1), *r = lm_relu(h), *o = lm_linear(r, m->w2, m->b2);
	lm_tensor *loss = lm_cross_entropy(o, m->t, LM_REDUCTION_MEAN, 0);
	CHECK(loss && lm_backward(loss, NULL, false) == LM_OK);
	lm_tensor *objs[] = {h, r, o, loss};
	for (int i = 0; i < 4; i++) lm_tensor_release(objs[i]);
	lm_tensor *ps[4] = {m->w1, m->b1, m->w2, m->b2};
	zero_grads(ps, 4);
}

static double median_time(void (*fn)(void *), void *ctx, int reps)
{
	double ts[64];
	fn(ctx);
	fn(ctx);
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now();
		fn(ctx);
		ts[i] = bench_now() - t0;
	}
	qsort(ts, (size_t)reps, sizeof ts[0], bench_cmp_double);
	return ts[reps / 2];
}

/* Runs the PyTorch anchor; fills the three times (NAN when PyTorch is missing). */
static void torch_anchor(int threads, double *lenet, double *vgg, double *mlp, char *version)
{
	char cmd[1024], line[256];
	*lenet = *vgg = *mlp = NAN;
	snprintf(cmd, sizeof cmd, "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 "
	         "/usr/bin/python3 %s/bench/nn/torch_anchor.py %d 2>/dev/null", LUMEN_SOURCE_DIR, threads);
	FILE *p = popen(cmd, "r");
	if (!p) return;
	while (fgets(line, sizeof line, p)) {
		char name[64];
		double v;
		if (sscanf(line, "version %63s", name) == 1) snprintf(version, 64, "%s", name);
		if (sscanf(line, "%63s %lf", name, &v) != 2) continue;
		if (!strcmp(name, "lenet")) *lenet = v;
		if (!strcmp(name, "vgg")) *vgg = v;
		if (!strcmp(name, "mlp")) *mlp = v;
	}
	pclose(p);
}

int main(void)
{
	lm_manual_seed(0);
	conv_case lenet = {param(4, (int64_t[]){64, 1, 28, 28}, 1), param(4, (int64_t[]){32, 1, 3, 3}, 0.3),
	                   param(1, (int64_t[]){32}, 0.1), LM_CONV_AUTO};
	conv_case vgg = {param(4, (int64_t[]){32, 64, 32, 32}, 1), param(4, (int64_t[]){64, 64, 3, 3}, 0.05),
	                 param(1, (int64_t[]){64}, 0.1), LM_CONV_AUTO};
	conv_case vgg_i = vgg, vgg_w = vgg;
	vgg_i.algo = LM_CONV_IM2COL;
	vgg_w.algo = LM_CONV_WINOGRAD;
	mlp_case mlp = {lm_randn(2, (int64_t[]){128, 784}, LM_FLOAT32), lm_randint(0, 10, 1, (int64_t[]){128}, LM_INT64),
	                param(2, (int64_t[]){256, 784}, 0.05), param(1, (int64_t[]){256}, 0.01),
	                param(2, (int64_t[]){10, 256}, 0.05), param(1, (int64_t[]){10}, 0.01)};
	char version[64] = "not found";
	lm_build_info bi;
	lm_build_info_get(&bi);
	const char *only = getenv("LUMEN_BENCH_ONLY");
	if (only && strcmp(only, "mlp") == 0) { /* the MLP step alone, 1 thread: to compare two builds (ABAB) */
		lm_set_num_threads(1);
		printf("MLP 784-256-10 batch 128 step %.4f ms\n", 1e3 * median_time(mlp_step, &mlp, 50));
		return 0;
	}
	printf("bench_nn: Lumen %s (%s, %s threads) vs PyTorch CPU, forward+backward, median time\n",
	       bi.version, bi.blas, bi.blas_threading);
	printf("%-8s %-42s %9s %14s %14s %8s\n", "threads", "case", "algo", "Lumen", "PyTorch", "ratio");
	const char *la = lm_conv_algo_name(lm_conv2d_which(lenet.x, lenet.w, &pad1, LM_CONV_AUTO));
	const char *va = lm_conv_algo_name(lm_conv2d_which(vgg.x, vgg.w, &pad1, LM_CONV_AUTO));
	for (int threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		double tl = median_time(conv_step, &lenet, 15), tv = median_time(conv_step, &vgg, 9);
		double ti = median_time(conv_step, &vgg_i, 5), tw = median_time(conv_step, &vgg_w, 9);
		double tm = median_time(mlp_step, &mlp, 50);
		double al, av, am;
		torch_anchor(threads, &al, &av, &am, version);
		printf("%-8d %-42s %9s %10.0f/s %10.0f/s %8.2f\n", threads, "conv2d 64x(1->32) 28x28 3x3 pad 1",
		       la, 64 / tl, 64 / al, tl / al);
		printf("%-8d %-42s %9s %10.1f/s %10.1f/s %8.2f\n", threads, "conv2d 32x(64->64) 32x32 3x3 pad 1",
		       va, 32 / tv, 32 / av, tv / av);
		printf("%-8d %-42s %9s %10.1f/s %10.1f/s %8.2f\n", threads, "  the same, algo forced", "im2col",
		       32 / ti, 32 / av, ti / av);
		printf("%-8d %-42s %9s %10.1f/s %10.1f/s %8.2f\n", threads, "  the same, algo forced",
		       "winograd", 32 / tw, 32 / av, tw / av);
		printf("%-8d %-42s %9s %10.3fms %10.3fms %8.2f\n", threads, "MLP 784-256-10 batch 128 step", "",
		       1e3 * tm, 1e3 * am, tm / am);
	}
	printf("PyTorch %s (its conv2d: oneDNN) with MALLOC_MMAP_THRESHOLD_=32 MiB and "
	       "MALLOC_TRIM_THRESHOLD_=1 GiB,\nso its large buffers are reused instead of page-faulted "
	       "each call (FIELD-NOTES.md);\nratio = Lumen time / PyTorch time (targets: VGG-like conv "
	       "<= 1.1, LeNet-like no slower than before, MLP <= 1.2)\n", version);
	lm_tensor *all[] = {lenet.x, lenet.w, lenet.b, vgg.x, vgg.w, vgg.b, mlp.x, mlp.t, mlp.w1, mlp.b1, mlp.w2, mlp.b2};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
	return 0;
}
