/*
 * epoch.c — gpu_epoch: examples/mlp_fashion.lua's MLP (784-256-10, ReLU) or
 * examples/cnn_fashion.lua's CNN (conv 3x3 16 - ReLU - pool 2, conv 3x3 32 - ReLU - pool 2, linear)
 * trained on Fashion-MNIST through Lumen's C API, on the CPU or the GPU: SGD lr 0.1, batch 128,
 * PyTorch's default initialisation (U(-1/sqrt(fan_in), 1/sqrt(fan_in))), the images scaled to
 * [0, 1] and normalised by the data set's mean and std, shuffled by a seeded permutation per epoch.
 * It is what tools/gpu-check.sh runs for issue 22's epoch rows: the lent GPU machines have no Lua,
 * so the examples themselves cannot run there.
 *
 *   gpu_epoch --model mlp|cnn --device cpu|cuda [--data DIR] [--epochs N] [--limit N]
 *             [--threads N] [--seed N]
 *
 * DIR holds train-images-idx3-ubyte(.gz), train-labels-idx1-ubyte(.gz), t10k-... (the uncompressed
 * names are tried first). Prints one line per epoch: the training loop's seconds (batches moved
 * to the device, forward, backward, SGD; the device synchronised at the end), images per second,
 * the mean training loss and the test accuracy. Exit status 0; 1 an error, printed; 2 --device
 * cuda without a usable GPU (the reason printed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lumen/autograd.h"
#include "lumen/core.h"
#include "lumen/cuda.h"
#include "lumen/io.h"
#include "lumen/nn.h"
#include "lumen/ops.h"
#include "lumen/optim.h"

#define MAXP 6
#define BATCH 128
#define LR 0.1
#define MEAN 0.2860 /* Fashion-MNIST's, as data.FashionMNIST normalises */
#define STD 0.3530

typedef struct model {
	bool cnn;
	int np;
	lm_tensor *p[MAXP]; /* weights and biases, in layer order */
} model;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static _Noreturn void die(const char *what)
{
	fprintf(stderr, "gpu_epoch: %s: %s\n", what, lm_last_error());
	exit(1);
}

/* The tensor t, or an exit naming what failed. */
static lm_tensor *ok(lm_tensor *t, const char *what)
{
	if (!t) die(what);
	return t;
}

static void check(lm_status st, const char *what)
{
	if (st != LM_OK) die(what);
}

/* A parameter of shape (ndim, shape) drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) on the CPU (the
 * same numbers whatever the device), then moved to dev and marked as requiring grad. */
static lm_tensor *param(int ndim, const int64_t *shape, int64_t fan_in, lm_device dev)
{
	lm_tensor *t = ok(lm_empty(ndim, shape, LM_FLOAT32), "a parameter");
	double b = 1 / sqrt((double)fan_in);
	check(lm_uniform_(t, -b, b), "initialising a parameter");
	if (dev != LM_CPU) {
		lm_tensor *d = ok(lm_to_device(t, dev), "moving a parameter to the GPU");
		lm_tensor_release(t);
		t = d;
	}
	check(lm_tensor_requires_grad_(t, true), "requires_grad");
	return t;
}

static void model_init(model *m, bool cnn, lm_device dev)
{
	memset(m, 0, sizeof *m);
	m->cnn = cnn;
	if (!cnn) {
		m->p[0] = param(2, (int64_t[]){256, 784}, 784, dev);
		m->p[1] = param(1, (int64_t[]){256}, 784, dev);
		m->p[2] = param(2, (int64_t[]){10, 256}, 256, dev);
		m->p[3] = param(1, (int64_t[]){10}, 256, dev);
		m->np = 4;
	} else {
		m->p[0] = param(4, (int64_t[]){16, 1, 3, 3}, 9, dev);
		m->p[1] = param(1, (int64_t[]){16}, 9, dev);
		m->p[2] = param(4, (int64_t[]){32, 16, 3, 3}, 144, dev);
		m->p[3] = param(1, (int64_t[]){32}, 144, dev);
		m->p[4] = param(2, (int64_t[]){10, 32 * 7 * 7}, 32 * 7 * 7, dev);
		m->p[5] = param(1, (int64_t[]){10}, 32 * 7 * 7, dev);
		m->np = 6;
	}
}

/* conv 3x3 (padding 1) - ReLU - max-pool 2 of x; +1 */
static lm_tensor *conv_block(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b)
{
	lm_conv2d_opts co = {.padding = {1, 1}};
	lm_pool2d_opts po = {.kernel = {2, 2}};
	lm_tensor *c = ok(lm_conv2d(x, w, b, &co), "conv2d");
	lm_tensor *r = ok(lm_relu(c), "relu");
	lm_tensor *p = ok(lm_max_pool2d(r, &po, NULL), "max_pool2d");
	lm_tensor_release(c);
	lm_tensor_release(r);
	return p;
}

/* The logits (N, 10) of images x (N, 1, 28, 28); +1 */
static lm_tensor *forward(const model *m, const lm_tensor *x)
{
	if (!m->cnn) {
		lm_tensor *f = ok(lm_flatten(x, 1, 3), "flatten");
		lm_tensor *h = ok(lm_linear(f, m->p[0], m->p[1]), "linear");
		lm_tensor *r = ok(lm_relu(h), "relu");
		lm_tensor *out = ok(lm_linear(r, m->p[2], m->p[3]), "linear");
		lm_tensor_release(f);
		lm_tensor_release(h);
		lm_tensor_release(r);
		return out;
	}
	lm_tensor *a = conv_block(x, m->p[0], m->p[1]);
	lm_tensor *b = conv_block(a, m->p[2], m->p[3]);
	lm_tensor *f = ok(lm_flatten(b, 1, 3), "flatten");
	lm_tensor *out = ok(lm_linear(f, m->p[4], m->p[5]), "linear");
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(f);
	return out;
}

/* images (N, 1, 28, 28) float32 normalised, labels (N) int64 */
typedef struct split {
	lm_tensor *x, *y;
	int64_t n;
} split;

static lm_tensor *load_idx(const char *dir, const char *name, bool images, int64_t limit)
{
	char path[1024];
	lm_idx_opts o = {.to_float32 = images, .scale = images ? 1.0 / 255 : 0, .limit = limit};
	snprintf(path, sizeof path, "%s/%s", dir, name);
	lm_tensor *t = lm_idx_load(path, &o);
	if (!t) {
		lm_clear_error();
		snprintf(path, sizeof path, "%s/%s.gz", dir, name);
		t = lm_idx_load(path, &o);
	}
	return ok(t, name);
}

static split load_split(const char *dir, bool train, int64_t limit)
{
	split s;
	lm_tensor *x = load_idx(dir, train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte", true, limit);
	lm_tensor *y = load_idx(dir, train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte", false, limit);
	s.n = lm_tensor_size(x, 0);
	lm_tensor *c = ok(lm_binary_scalar(LM_SUB, x, MEAN), "normalising");
	lm_tensor *d = ok(lm_binary_scalar(LM_DIV, c, STD), "normalising");
	s.x = ok(lm_view(d, 4, (int64_t[]){s.n, 1, 28, 28}), "view");
	s.y = ok(lm_to_dtype(y, LM_INT64), "labels");
	lm_tensor_release(x);
	lm_tensor_release(y);
	lm_tensor_release(c);
	lm_tensor_release(d);
	return s;
}

/* The rows idx[0..n) of s, on dev; +1 each */
static void batch(const split *s, const int64_t *idx, int64_t n, lm_device dev, lm_tensor **x,
                  lm_tensor **y)
{
	lm_tensor *hx = ok(lm_take_rows(s->x, idx, n), "batch"), *hy = ok(lm_take_rows(s->y, idx, n), "batch");
	if (dev == LM_CPU) {
		*x = hx, *y = hy;
		return;
	}
	*x = ok(lm_to_device(hx, dev), "batch to the GPU");
	*y = ok(lm_to_device(hy, dev), "batch to the GPU");
	lm_tensor_release(hx);
	lm_tensor_release(hy);
}

/* Seconds of one epoch's training loop and its mean loss. */
static double train_epoch(model *m, const split *s, int epoch, uint64_t seed, lm_device dev,
                          double *mean_loss)
{
	int64_t *perm = malloc((size_t)s->n * sizeof *perm);
	if (!perm) {
		fprintf(stderr, "gpu_epoch: out of memory\n");
		exit(1);
	}
	check(lm_randperm_seeded(s->n, seed, (uint64_t)epoch, perm), "shuffling");
	lm_sgd_opts so = {.lr = LR};
	double loss_sum = 0, t0 = now_s();
	int64_t steps = 0;
	for (int64_t at = 0; at < s->n; at += BATCH, steps++) {
		int64_t n = s->n - at < BATCH ? s->n - at : BATCH;
		lm_tensor *x, *y;
		batch(s, perm + at, n, dev, &x, &y);
		lm_tensor *logits = forward(m, x);
		lm_tensor *loss = ok(lm_cross_entropy(logits, y, LM_REDUCTION_MEAN, 0), "cross_entropy");
		check(lm_backward(loss, NULL, false), "backward");
		for (int i = 0; i < m->np; i++) {
			check(lm_sgd_step_(m->p[i], lm_tensor_grad(m->p[i]), NULL, &so, false), "sgd");
			check(lm_tensor_set_grad(m->p[i], NULL), "zero_grad");
		}
		double l = 0;
		check(lm_tensor_item(loss, &l), "loss:item()"); /* as the example's progress bar reads it */
		loss_sum += l;
		lm_tensor *ts[] = {x, y, logits, loss};
		for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) lm_tensor_release(ts[k]);
	}
	if (dev == LM_CUDA) check(lm_cuda_synchronize(), "synchronize");
	free(perm);
	*mean_loss = loss_sum / (double)steps;
	return now_s() - t0;
}

/* Test accuracy, in batches of 500 without the graph. */
static double evaluate(const model *m, const split *s, lm_device dev)
{
	bool was = lm_set_grad_enabled(false);
	int64_t correct = 0, idx[500];
	for (int64_t at = 0; at < s->n; at += 500) {
		int64_t n = s->n - at < 500 ? s->n - at : 500;
		for (int64_t i = 0; i < n; i++) idx[i] = at + i;
		lm_tensor *x, *y;
		batch(s, idx, n, dev, &x, &y);
		lm_tensor *logits = forward(m, x);
		int64_t c = 0;
		check(lm_count_correct(logits, y, 0, &c), "count_correct");
		correct += c;
		lm_tensor_release(x);
		lm_tensor_release(y);
		lm_tensor_release(logits);
	}
	lm_set_grad_enabled(was);
	return (double)correct / (double)s->n;
}

static _Noreturn void usage(const char *why)
{
	fprintf(stderr, "gpu_epoch: %s\nusage: gpu_epoch --model mlp|cnn --device cpu|cuda [--data DIR] "
	        "[--epochs N] [--limit N] [--threads N] [--seed N]\n", why);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *model_name = NULL, *device = NULL, *dir = "/usr/share/datasets/fashion-mnist";
	long epochs = 1, limit = 0, threads = 0, seed = 5;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long *num = !strcmp(a, "--epochs") ? &epochs : !strcmp(a, "--limit") ? &limit
		          : !strcmp(a, "--threads") ? &threads : !strcmp(a, "--seed") ? &seed : NULL;
		if (!v) usage("an option without its value");
		if (!strcmp(a, "--model")) model_name = v;
		else if (!strcmp(a, "--device")) device = v;
		else if (!strcmp(a, "--data")) dir = v;
		else if (num) {
			char *end;
			*num = strtol(v, &end, 10);
			if (*end || *num < 0 || (num == &epochs && *num < 1)) usage("a number option needs a count");
		} else {
			usage("an unknown option");
		}
		i++;
	}
	if (!model_name || (strcmp(model_name, "mlp") && strcmp(model_name, "cnn"))) usage("--model mlp or cnn");
	if (!device || (strcmp(device, "cpu") && strcmp(device, "cuda"))) usage("--device cpu or cuda");
	lm_device dev = strcmp(device, "cuda") ? LM_CPU : LM_CUDA;
	if (dev == LM_CUDA && !lm_cuda_is_available()) {
		printf("gpu_epoch: no GPU: %s\n", lm_cuda_unavailable_reason());
		return 2;
	}
	if (threads > 0) lm_set_num_threads((int)threads);
	lm_manual_seed((uint64_t)seed);
	double t0 = now_s();
	split train = load_split(dir, true, limit), test = load_split(dir, false, 0);
	double load_s = now_s() - t0;
	model m;
	model_init(&m, !strcmp(model_name, "cnn"), dev);
	const char *where = dev == LM_CUDA ? lm_cuda_device_name() : "CPU";
	printf("%s on %s (%s, %d threads): %lld training and %lld test images, loaded in %.2f s\n",
	       model_name, device, where, lm_get_num_threads(), (long long)train.n, (long long)test.n,
	       load_s);
	const char *warn = dev == LM_CPU ? lm_threading_warning() : NULL; /* loads OpenBLAS */
	if (warn) printf("note: %s\n", warn);
	for (long e = 1; e <= epochs; e++) {
		double loss, sec = train_epoch(&m, &train, (int)e, (uint64_t)seed, dev, &loss);
		double acc = evaluate(&m, &test, dev);
		printf("%s %s epoch %ld: %.3f s, %.0f images/s, train loss %.4f, test accuracy %.2f%% "
		       "(%s measured, Lumen C API)\n", model_name, device, e, sec, (double)train.n / sec,
		       loss, 100 * acc, dev == LM_CUDA ? "CUDA" : "CPU");
	}
	for (int i = 0; i < m.np; i++) lm_tensor_release(m.p[i]);
	lm_tensor *ts[] = {train.x, train.y, test.x, test.y};
	for (size_t k = 0; k < sizeof ts / sizeof *ts; k++) lm_tensor_release(ts[k]);
	return 0;
}
