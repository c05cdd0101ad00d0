/*
 * bench_autograd.c — the cost of the graph: a chain of 1,000 small elementwise ops, forward and
 * backward, against the same ops under no_grad (the time per op, and what recording and backward
 * add to it), and one MLP step (784-256-10, batch 128, cross-entropy built from core ops,
 * forward + backward + SGD) against its six gemms alone. PyTorch CPU runs the same chain and step
 * in the same session (bench/autograd/torch_anchor.py through /usr/bin/python3) when present.
 * Times are medians; the ratio is Lumen time / PyTorch time (lower is better).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "lumen/autograd.h"
#include "lumen/ops.h"

#define OPS 1000

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

static void release_all(lm_tensor **ts, int n)
{
	for (int i = 0; i < n; i++) lm_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- the chain */

typedef struct chain {
	lm_tensor *x, *w;
} chain;

/* 1,000 ops in a cycle of four: y * w, y + 0.01, tanh(y), y * 1.001. Returns sum(y). */
static lm_tensor *chain_forward(chain *c)
{
	lm_tensor *y = lm_tensor_retain(c->x);
	for (int i = 0; i < OPS; i++) {
		lm_tensor *n;
		switch (i % 4) {
		case 0: n = lm_mul(y, c->w); break;
		case 1: n = lm_binary_scalar(LM_ADD, y, 0.01); break;
		case 2: n = lm_tanh(y); break;
		default: n = lm_binary_scalar(LM_MUL, y, 1.001); break;
		}
		CHECK(n);
		lm_tensor_release(y);
		y = n;
	}
	lm_tensor *s = lm_sum(y, LM_DIM_ALL, false);
	CHECK(s);
	lm_tensor_release(y);
	return s;
}

static void chain_grad(void *ctx)
{
	chain *c = ctx;
	lm_tensor *s = chain_forward(c);
	CHECK(lm_backward(s, NULL, false) == LM_OK);
	lm_tensor_release(s);
	lm_tensor_set_grad(c->x, NULL);
}

static void chain_forward_only(void *ctx)
{
	chain *c = ctx;
	lm_tensor *s = chain_forward(c);
	lm_tensor_release(s); /* the graph is dropped unused */
}

static void chain_nograd(void *ctx)
{
	bool was = lm_set_grad_enabled(false);
	lm_tensor_release(chain_forward(ctx));
	lm_set_grad_enabled(was);
}

/* ---------------------------------------------------------------- the MLP step */

typedef struct mlp {
	lm_tensor *x, *onehot, *w1, *b1, *w2, *b2;
	lm_tensor *h, *g_out, *g_h; /* for the gemm-only anchor */
} mlp;

static void mlp_step(void *ctx)
{
	mlp *m = ctx;
	lm_tensor *a = lm_matmul(m->x, m->w1), *b = lm_add(a, m->b1), *h = lm_relu(b);
	lm_tensor *c = lm_matmul(h, m->w2), *z = lm_add(c, m->b2);
	lm_tensor *mx = lm_amax(z, 1, true), *zc = lm_sub(z, mx), *e = lm_exp(zc);
	lm_tensor *se = lm_sum(e, 1, true), *lse = lm_log(se), *lp = lm_sub(zc, lse);
	lm_tensor *pk = lm_mul(lp, m->onehot), *tot = lm_sum(pk, LM_DIM_ALL, false);
	lm_tensor *loss = lm_binary_scalar(LM_MUL, tot, -1.0 / 128);
	CHECK(loss && lm_backward(loss, NULL, false) == LM_OK);
	lm_tensor *ts[] = {a, b, h, c, z, mx, zc, e, se, lse, lp, pk, tot, loss};
	release_all(ts, 14);
	bool was = lm_set_grad_enabled(false);
	lm_tensor *ps[] = {m->w1, m->b1, m->w2, m->b2};
	for (int i = 0; i < 4; i++) { /* SGD: p -= 0.01 grad; grad dropped */
		lm_tensor *st = lm_binary_scalar(LM_MUL, lm_tensor_grad(ps[i]), 0.01);
		CHECK(st && lm_binary_(LM_SUB, ps[i], st) == LM_OK);
		lm_tensor_release(st);
		lm_tensor_set_grad(ps[i], NULL);
	}
	lm_set_grad_enabled(was);
}

/* The step's matrix products alone: x w1, h w2, g_out w2^T, h^T g_out, x^T g_h. */
static void mlp_gemms(void *ctx)
{
	mlp *m = ctx;
	bool was = lm_set_grad_enabled(false);
	lm_tensor *w2t = lm_transpose(m->w2, 0, 1), *ht = lm_transpose(m->h, 0, 1);
	lm_tensor *xt = lm_transpose(m->x, 0, 1);
	lm_tensor *p[5] = {lm_matmul(m->x, m->w1), lm_matmul(m->h, m->w2), lm_matmul(m->g_out, w2t),
	                   lm_matmul(ht, m->g_out), lm_matmul(xt, m->g_h)};
	for (int i = 0; i < 5; i++) CHECK(p[i]);
	release_all(p, 5);
	lm_tensor *ts[] = {w2t, ht, xt};
	release_all(ts, 3);
	lm_set_grad_enabled(was);
}

static lm_tensor *param(int nd, const int64_t *shape, double scale)
{
	lm_tensor *t = lm_randn(nd, shape, LM_FLOAT32);
	CHECK(t && lm_binary_scalar_(LM_MUL, t, scale) == LM_OK);
	CHECK(lm_tensor_requires_grad_(t, true) == LM_OK);
	return t;
}

/* ---------------------------------------------------------------- the anchor */

typedef struct anchor {
	double chain_grad, chain_nograd, mlp;
	char version[64];
} anchor;

static void torch_anchor(int threads, int64_t n, anchor *a)
{
	char cmd[1024], line[256];
	a->chain_grad = a->chain_nograd = a->mlp = NAN;
	snprintf(a->version, sizeof a->version, "not found");
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/autograd/torch_anchor.py %d %lld 2>/dev/null",
	         LUMEN_SOURCE_DIR, threads, (long long)n);
	FILE *p = popen(cmd, "r");
	if (!p) return;
	while (fgets(line, sizeof line, p)) {
		char name[64];
		double v;
		if (sscanf(line, "version %63s", name) == 1) snprintf(a->version, sizeof a->version, "%s", name);
		if (sscanf(line, "%63s %lf", name, &v) != 2) continue;
		if (!strcmp(name, "chain_grad")) a->chain_grad = v;
		if (!strcmp(name, "chain_nograd")) a->chain_nograd = v;
		if (!strcmp(name, "mlp")) a->mlp = v;
	}
	pclose(p);
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	lm_set_num_threads(threads);
	lm_manual_seed(0);
	lm_build_info bi;
	lm_build_info_get(&bi);
	printf("bench_autograd: Lumen %s, %d thread(s), %s; medians\n", bi.version, threads, bi.blas);
	printf("%-44s %12s %12s %12s %8s\n", "case", "Lumen", "per op", "PyTorch", "ratio");
	anchor an = {0};
	static const int64_t sizes[] = {16, 1024};
	for (int k = 0; k < 2; k++) {
		int64_t n = sizes[k];
		chain c = {lm_rand(1, &n, LM_FLOAT32), lm_full(1, &n, LM_FLOAT32, 0.999)};
		CHECK(c.x && c.w && lm_tensor_requires_grad_(c.x, true) == LM_OK);
		double tg = median_time(chain_grad, &c, 15), tf = median_time(chain_forward_only, &c, 15);
		double tn = median_time(chain_nograd, &c, 15);
		torch_anchor(threads, n, &an);
		char name[80];
		snprintf(name, sizeof name, "chain %d ops on %lld floats: fwd+bwd", OPS, (long long)n);
		printf("%-44s %10.3fms %10.2fus %10.3fms %8.2f\n", name, 1e3 * tg, 1e6 * tg / OPS,
		       1e3 * an.chain_grad, tg / an.chain_grad);
		printf("%-44s %10.3fms %10.2fus %12s %8s\n", "  forward recording the graph", 1e3 * tf,
		       1e6 * tf / OPS, "", "");
		printf("%-44s %10.3fms %10.2fus %10.3fms %8.2f\n", "  forward under no_grad", 1e3 * tn,
		       1e6 * tn / OPS, 1e3 * an.chain_nograd, tn / an.chain_nograd);
		printf("%-44s %10.2fx %12s %10.2fx\n", "  fwd+bwd / no_grad forward", tg / tn, "",
		       an.chain_grad / an.chain_nograd);
		lm_tensor_release(c.x);
		lm_tensor_release(c.w);
	}
	mlp m = {0};
	m.x = lm_randn(2, (int64_t[]){128, 784}, LM_FLOAT32);
	lm_tensor *lab = lm_randint(0, 10, 1, (int64_t[]){128}, LM_INT64);
	lm_tensor *oh = lab ? lm_one_hot(lab, 10) : NULL;
	m.onehot = oh ? lm_to_dtype(oh, LM_FLOAT32) : NULL;
	CHECK(m.x && m.onehot);
	m.w1 = param(2, (int64_t[]){784, 256}, 0.05);
	m.b1 = param(1, (int64_t[]){256}, 0.01);
	m.w2 = param(2, (int64_t[]){256, 10}, 0.05);
	m.b2 = param(1, (int64_t[]){10}, 0.01);
	m.h = lm_randn(2, (int64_t[]){128, 256}, LM_FLOAT32);
	m.g_out = lm_randn(2, (int64_t[]){128, 10}, LM_FLOAT32);
	m.g_h = lm_randn(2, (int64_t[]){128, 256}, LM_FLOAT32);
	double tm = median_time(mlp_step, &m, 50), tgm = median_time(mlp_gemms, &m, 50);
	printf("%-44s %10.3fms %12s %10.3fms %8.2f\n", "MLP 784-256-10 b128 step (fwd+bwd+SGD)", 1e3 * tm,
	       "", 1e3 * an.mlp, tm / an.mlp);
	printf("%-44s %10.3fms %12s %12s %8s\n", "  its five gemms alone (floor)", 1e3 * tgm, "", "", "");
	printf("PyTorch %s (same ops, same thread count); ratio = Lumen / PyTorch\n", an.version);
	lm_tensor *ts[] = {m.x, m.onehot, m.w1, m.b1, m.w2, m.b2, m.h, m.g_out, m.g_h, lab, oh};
	release_all(ts, 11);
	return 0;
}
