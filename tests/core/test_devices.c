/*
 * test_devices.c — tensors on a second device without a GPU: the fake device of
 * tests/fake_device.h (LM_CUDA served by the CPU's loops on memory nothing else can read) stands
 * for the GPU, so that the device plumbing of the core and the ops is tested here: storage on a
 * device, copies across devices in every layout and dtype, placement, mixed-device errors, random
 * streams equal to the CPU's, the optimizers' updates and batch augmentations through the
 * device's slots, count_correct through its slot and through ops where a device lacks it, out of
 * device memory, and every op-table row through the dispatch (values,
 * gradients, placement and mixed inputs: ot_run_rows).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/philox.h"
#include "fake_device.h"
#include "ops/ops.h"
#include "lumen/nn.h"
#include "lumen/cuda.h"
#include "lumen/optim.h"
#include "optable.h"
#include "testutil.h"

static lm_tensor *seq(int ndim, const int64_t *shape, lm_dtype dt)
{
	lm_tensor *t = lm_empty(ndim, shape, dt);
	int64_t n = lm_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) ot_set_linear(t, i, (double)((i * 37) % 101) - 50);
	return t;
}

static void assert_same(const lm_tensor *got, const lm_tensor *want)
{
	char why[256];
	lm_tensor *h = lm_to_device(got, LM_CPU);
	assert_non_null(h);
	if (!ot_close(h, want, 0, 0, why, sizeof why)) fail_msg("%s", why);
	lm_tensor_release(h);
}

/* Copies to and from the device: every dtype pair, contiguous and strided, broadcast sources
 * crossing once in their compact form. */
static void test_copies(void **state)
{
	(void)state;
	const int64_t shape[3] = {3, 5, 7};
	/* the five native dtypes (int8, float16, bfloat16 live on the CPU: test_placement_and_errors) */
	for (int a = 0; a < LM_INT8; a++) {
		lm_tensor *x = seq(3, shape, (lm_dtype)a), *d = lm_to_device(x, LM_CUDA);
		assert_non_null(d);
		assert_int_equal(lm_tensor_device(d), LM_CUDA);
		assert_true(lm_tensor_is_contiguous(d));
		assert_same(d, x);
		for (int b = 0; b < LM_INT8; b++) {
			/* device -> host converting, into a transposed destination */
			lm_tensor *h = lm_empty(3, (int64_t[]){7, 5, 3}, (lm_dtype)b);
			lm_tensor *ht = lm_permute(h, (int[]){2, 1, 0});
			assert_int_equal(lm_copy_(ht, d), LM_OK);
			lm_tensor *want = lm_to_dtype(x, (lm_dtype)b);
			char why[256];
			if (!ot_close(ht, want, 0, 0, why, sizeof why))
				fail_msg("to host %d->%d: %s", a, b, why);
			/* host (strided) -> device converting */
			lm_tensor *dd = lm_empty_like(d);
			assert_int_equal(lm_copy_(dd, ht), LM_OK);
			lm_tensor *back = lm_to_dtype(dd, (lm_dtype)a);
			lm_tensor *exp_ = lm_to_dtype(want, (lm_dtype)a);
			assert_same(back, exp_);
			lm_tensor_release(exp_);
			lm_tensor_release(back);
			lm_tensor_release(dd);
			lm_tensor_release(want);
			lm_tensor_release(ht);
			lm_tensor_release(h);
		}
		lm_tensor_release(d);
		lm_tensor_release(x);
	}
	/* a (1, 7) row expanded to (1000, 7) crosses as 7 values */
	lm_tensor *row = seq(2, (int64_t[]){1, 7}, LM_FLOAT32);
	lm_tensor *big = lm_expand(row, 2, (int64_t[]){1000, 7});
	lm_tensor *dbig = lm_empty(2, (int64_t[]){1000, 7}, LM_FLOAT32);
	lm_tensor *dev = lm_to_device(dbig, LM_CUDA);
	fake_device_stats s0 = fake_device_get_stats();
	assert_int_equal(lm_copy_(dev, big), LM_OK);
	fake_device_stats s1 = fake_device_get_stats();
	assert_int_equal(s1.to_device - s0.to_device, 7 * 4);
	assert_same(dev, big);
	lm_tensor_release(dev);
	lm_tensor_release(dbig);
	lm_tensor_release(big);
	lm_tensor_release(row);
	assert_int_equal(fake_device_get_stats().live_bytes, 0);
}

/* Results stay on their inputs' device; a device tensor meets a CPU one only in an error naming
 * both; get/set/item read and write one element through a copy. */
static void test_placement_and_errors(void **state)
{
	(void)state;
	lm_tensor *x = seq(2, (int64_t[]){4, 6}, LM_FLOAT32), *d = lm_to_device(x, LM_CUDA);
	lm_tensor *y = lm_add(d, d);
	assert_int_equal(lm_tensor_device(y), LM_CUDA);
	lm_tensor *z = lm_add(d, x);
	assert_null(z);
	assert_int_equal(lm_last_status(), LM_ERR_DEVICE);
	assert_non_null(strstr(lm_last_error(), "add"));
	assert_non_null(strstr(lm_last_error(), "cuda"));
	assert_non_null(strstr(lm_last_error(), "cpu"));
	lm_tensor *m = lm_matmul(x, lm_tensor_retain(d));
	assert_null(m);
	lm_tensor_release(d); /* the extra retain */
	assert_int_equal(lm_last_status(), LM_ERR_DEVICE);
	double v = 0;
	assert_int_equal(lm_tensor_get(d, (int64_t[]){2, 3}, &v), LM_OK);
	assert_true(v == ot_get_linear(x, 2 * 6 + 3));
	assert_int_equal(lm_tensor_set(d, (int64_t[]){2, 3}, 42.5), LM_OK);
	assert_int_equal(lm_tensor_get(d, (int64_t[]){2, 3}, &v), LM_OK);
	assert_true(v == 42.5);
	lm_tensor *s = lm_sum(d, LM_DIM_ALL, false);
	assert_int_equal(lm_tensor_device(s), LM_CUDA);
	assert_int_equal(lm_tensor_item(s, &v), LM_OK);
	/* x + x to the same; dtype conversion, views and in-place ops stay there */
	lm_tensor *t = lm_transpose(d, 0, 1), *c = lm_contiguous(t), *i = lm_to_dtype(c, LM_INT32);
	assert_int_equal(lm_tensor_device(c), LM_CUDA);
	assert_int_equal(lm_tensor_device(i), LM_CUDA);
	assert_int_equal(lm_binary_scalar_(LM_MUL, c, 2), LM_OK);
	assert_int_equal(lm_fill_(t, 1), LM_OK);
	assert_int_equal(lm_zero_(c), LM_OK);
	/* the backward's first gradient and the leaf's .grad on the device */
	lm_tensor *w = lm_to_device(x, LM_CUDA);
	lm_tensor_requires_grad_(w, true);
	lm_tensor *q = lm_mul(w, w), *qs = lm_sum(q, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(qs, NULL, false), LM_OK);
	assert_int_equal(lm_tensor_device(lm_tensor_grad(w)), LM_CUDA);
	lm_tensor *g2 = lm_binary_scalar(LM_MUL, x, 2);
	assert_same(lm_tensor_grad(w), g2);
	/* moving back to the CPU is differentiable too: the gradient returns to the device */
	lm_tensor *w2 = lm_to_device(x, LM_CUDA);
	lm_tensor_requires_grad_(w2, true);
	lm_tensor *hcpu = lm_to_device(w2, LM_CPU), *hs = lm_sum(hcpu, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(hs, NULL, false), LM_OK);
	assert_int_equal(lm_tensor_device(lm_tensor_grad(w2)), LM_CUDA);
	/* the storage-only dtypes stay on the CPU, and say so (both ways to the device) */
	lm_tensor *hf = lm_to_dtype(x, LM_FLOAT16);
	assert_null(lm_to_device(hf, LM_CUDA));
	assert_int_equal(lm_last_status(), LM_ERR_UNSUPPORTED);
	assert_non_null(strstr(lm_last_error(), "float16 tensors live on the CPU"));
	assert_null(lm_to_dtype(d, LM_BFLOAT16));
	assert_non_null(strstr(lm_last_error(), "bfloat16 tensors live on the CPU"));
	lm_tensor_release(hf);
	lm_tensor *tensors[] = {y, s, t, c, i, w, q, qs, g2, w2, hcpu, hs, d, x};
	for (size_t k = 0; k < sizeof tensors / sizeof *tensors; k++) lm_tensor_release(tensors[k]);
	assert_int_equal(fake_device_get_stats().live_bytes, 0);
}

/* The device's random loop (philox.h, block by block) draws the CPU's streams. */
static void test_random_streams(void **state)
{
	(void)state;
	const int64_t shape[1] = {1001};
	for (int dt = 0; dt < LM_INT8; dt++) {
		lm_tensor *h = lm_zeros(1, shape, (lm_dtype)dt), *d = lm_to_device(h, LM_CUDA);
		bool fl = lm_dtype_is_float((lm_dtype)dt);
		for (int kind = fl ? 0 : 2; kind < 3; kind++) {
			lm_tensor *pair[2] = {h, d};
			for (int k = 0; k < 2; k++) {
				lm_manual_seed(1234 + (uint64_t)kind);
				lm_status s = kind == 0   ? lm_uniform_(pair[k], -1, 5)
				              : kind == 1 ? lm_normal_(pair[k], 1, 2)
				                          : lm_bernoulli_(pair[k], 0.3);
				assert_int_equal(s, LM_OK);
			}
			assert_same(d, h);
		}
		/* randint makes CPU tensors only: the device's loop asked directly for the same
		 * blocks */
		lm_manual_seed(99);
		uint64_t seed = lm_rng_seed(), off = lm_rng_offset();
		int64_t lo = dt == LM_UINT8 ? 3 : -1000, hi = dt == LM_UINT8 ? 250 : 100000;
		lm_tensor *r = lm_randint(lo, hi, 1, shape, (lm_dtype)dt);
		lmi_rng_call c = {
		    LMI_RNG_RANDINT, dt == LM_FLOAT64, 0, 0, lo, (uint64_t)(hi - lo), seed, off};
		assert_int_equal(lmi_device_ops_for(LM_CUDA)->random(d, &c), LM_OK);
		assert_same(d, r);
		lm_tensor_release(r);
		lm_tensor_release(d);
		lm_tensor_release(h);
	}
}

/* The optimizers' updates run through the device's slots and agree with the CPU's. */
static void test_optimizers(void **state)
{
	(void)state;
	const int64_t shape[2] = {7, 9};
	lm_manual_seed(7);
	lm_tensor *p = lm_randn(2, shape, LM_FLOAT32), *g = lm_randn(2, shape, LM_FLOAT32);
	lm_tensor *hp[3], *dp[3], *hs[3][3], *ds[3][3];
	for (int o = 0; o < 3; o++) {
		hp[o] = lm_clone(p);
		dp[o] = lm_to_device(p, LM_CUDA);
		for (int k = 0; k < 3; k++) {
			hs[o][k] = lm_zeros(2, shape, LM_FLOAT32);
			ds[o][k] = lm_to_device(hs[o][k], LM_CUDA);
		}
	}
	lm_tensor *dg = lm_to_device(g, LM_CUDA);
	fake_device_stats s0 = fake_device_get_stats();
	lm_sgd_opts so = {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true};
	lm_adam_opts ao = {.lr = 0.01,
	                   .beta1 = 0.9,
	                   .beta2 = 0.999,
	                   .eps = 1e-8,
	                   .weight_decay = 0.1,
	                   .amsgrad = true,
	                   .decoupled = true};
	lm_rmsprop_opts ro = {
	    .lr = 0.01, .alpha = 0.99, .eps = 1e-8, .momentum = 0.5, .centered = true};
	for (int step = 1; step <= 3; step++) {
		ao.step = step;
		assert_int_equal(lm_sgd_step_(hp[0], g, hs[0][0], &so, step == 1), LM_OK);
		assert_int_equal(lm_sgd_step_(dp[0], dg, ds[0][0], &so, step == 1), LM_OK);
		assert_int_equal(lm_adam_step_(hp[1], g, hs[1][0], hs[1][1], hs[1][2], &ao), LM_OK);
		assert_int_equal(lm_adam_step_(dp[1], dg, ds[1][0], ds[1][1], ds[1][2], &ao),
		                 LM_OK);
		assert_int_equal(lm_rmsprop_step_(hp[2], g, hs[2][0], hs[2][1], hs[2][2], &ro),
		                 LM_OK);
		assert_int_equal(lm_rmsprop_step_(dp[2], dg, ds[2][0], ds[2][1], ds[2][2], &ro),
		                 LM_OK);
	}
	fake_device_stats s1 = fake_device_get_stats();
	assert_int_equal(s1.calls[LMI_OP_SGD_STEP] - s0.calls[LMI_OP_SGD_STEP], 3);
	assert_int_equal(s1.calls[LMI_OP_ADAM_STEP] - s0.calls[LMI_OP_ADAM_STEP], 3);
	assert_int_equal(s1.calls[LMI_OP_RMSPROP_STEP] - s0.calls[LMI_OP_RMSPROP_STEP], 3);
	for (int o = 0; o < 3; o++) {
		assert_same(dp[o], hp[o]);
		for (int k = 0; k < 3; k++) assert_same(ds[o][k], hs[o][k]);
	}
	/* a CPU gradient for a device parameter: an error naming both */
	assert_int_equal(lm_sgd_step_(dp[0], g, ds[0][0], &so, false), LM_ERR_DEVICE);
	assert_non_null(strstr(lm_last_error(), "cuda"));
	assert_non_null(strstr(lm_last_error(), "cpu"));
	/* clipping reads device gradients */
	double hn = 0, dn = 0;
	lm_tensor *hg = lm_clone(g), *dg2 = lm_to_device(g, LM_CUDA);
	assert_int_equal(lm_clip_grad_norm_(1, &hg, 1.0, 2, &hn), LM_OK);
	assert_int_equal(lm_clip_grad_norm_(1, &dg2, 1.0, 2, &dn), LM_OK);
	assert_true(fabs(hn - dn) <= 1e-12 * hn);
	assert_same(dg2, hg);
	lm_tensor_release(hg);
	lm_tensor_release(dg2);
	for (int o = 0; o < 3; o++) {
		lm_tensor_release(hp[o]);
		lm_tensor_release(dp[o]);
		for (int k = 0; k < 3; k++) {
			lm_tensor_release(hs[o][k]);
			lm_tensor_release(ds[o][k]);
		}
	}
	lm_tensor_release(dg);
	lm_tensor_release(p);
	lm_tensor_release(g);
	assert_int_equal(fake_device_get_stats().live_bytes, 0);
}

/* Batches: rows taken from a device data set, crops and flips run by the device's slots. */
static void test_batches(void **state)
{
	(void)state;
	lm_tensor *x = seq(4, (int64_t[]){5, 2, 6, 7}, LM_FLOAT32), *d = lm_to_device(x, LM_CUDA);
	int64_t idx[4] = {4, 0, 0, 2};
	lm_tensor *hr = lm_take_rows(x, idx, 4), *dr = lm_take_rows(d, idx, 4);
	assert_non_null(dr);
	assert_int_equal(lm_tensor_device(dr), LM_CUDA);
	assert_same(dr, hr);
	int64_t offv[10] = {0, 0, 4, 4, 1, 3, 2, 0, 3, 1};
	lm_tensor *off = lm_from_data(offv, 2, (int64_t[]){5, 2}, LM_INT64);
	lm_tensor *hc = lm_crop_batch(x, off, 6, 7, 2), *dc = lm_crop_batch(d, off, 6, 7, 2);
	assert_non_null(dc);
	assert_int_equal(lm_tensor_device(dc), LM_CUDA);
	assert_same(dc, hc);
	uint8_t mv[5] = {1, 0, 1, 1, 0};
	lm_tensor *mask = lm_from_data(mv, 1, (int64_t[]){5}, LM_UINT8);
	lm_tensor *hf = lm_flip_batch(x, mask), *df = lm_flip_batch(d, mask);
	assert_non_null(df);
	assert_int_equal(lm_tensor_device(df), LM_CUDA);
	assert_same(df, hf);
	fake_device_stats s = fake_device_get_stats();
	assert_true(s.calls[LMI_OP_CROP_BATCH] >= 1 && s.calls[LMI_OP_FLIP_BATCH] >= 1);
	lm_tensor *tensors[] = {x, d, hr, dr, off, hc, dc, mask, hf, df};
	for (size_t k = 0; k < sizeof tensors / sizeof *tensors; k++) lm_tensor_release(tensors[k]);
	assert_int_equal(fake_device_get_stats().live_bytes, 0);
}

/* count_correct on the device: through its slot, and composed of argmax, eq and sum where a
 * device has no such slot (the same table without it), each equal to a naive count on the host. */
/* The fake device, but without a count_correct loop. */
static bool no_count_correct(const lmi_exec *e)
{
	return e->op != LMI_OP_COUNT_CORRECT && fake_device_backend.supports_node(e);
}

static void test_count_correct(void **state)
{
	(void)state;
	int64_t N = 37, C = 5;
	lm_tensor *x = lm_empty(2, (int64_t[]){N, C}, LM_FLOAT32);
	float *xv = (float *)lm_tensor_data(x);
	int64_t lv[37], want = 0;
	for (int64_t r = 0; r < N; r++) {
		for (int64_t c = 0; c < C; c++) xv[r * C + c] = (float)(((r * 7 + c * 3) % 5) - (c == 2 ? 0.5 : 0));
		xv[r * C + (r % C)] = r % 3 == 0 ? NAN : xv[r * C + (r % C)];
		int64_t best = 0;
		for (int64_t c = 1; c < C; c++) {
			float v = xv[r * C + c], b = xv[r * C + best];
			if (b != b) break;
			if (v != v || v > b) best = c;
			if (v != v) break;
		}
		lv[r] = (r * 11) % C + 1; /* 1-based */
		want += best + 1 == lv[r];
	}
	lm_tensor *lab = lm_from_data(lv, 1, (int64_t[]){N}, LM_INT64);
	lm_tensor *dx = lm_to_device(x, LM_CUDA), *dl = lm_to_device(lab, LM_CUDA);
	assert_non_null(dl);
	int64_t got = -1, host = -1;
	assert_int_equal(lm_count_correct(x, lab, 1, &host), LM_OK);
	assert_int_equal(host, want);
	fake_device_stats s0 = fake_device_get_stats();
	assert_int_equal(lm_count_correct(dx, dl, 1, &got), LM_OK);
	assert_int_equal(got, want);
	assert_int_equal(fake_device_get_stats().calls[LMI_OP_COUNT_CORRECT] -
	                     s0.calls[LMI_OP_COUNT_CORRECT], 1);
	static lmi_backend without; /* registered: it must outlive a failed assertion */
	without = fake_device_backend; /* a device with no count_correct loop: the ops' way */
	without.supports_node = no_count_correct;
	lmi_backend_register(&without);
	got = -1;
	assert_int_equal(lm_count_correct(dx, dl, 1, &got), LM_OK);
	assert_int_equal(got, want);
	lmi_backend_register(&fake_device_backend);
	/* mixed devices: an error naming both */
	assert_int_equal(lm_count_correct(dx, lab, 1, &got), LM_ERR_DEVICE);
	assert_non_null(strstr(lm_last_error(), "count_correct: the logits are on cuda but the labels on cpu"));
	lm_tensor *tensors[] = {x, lab, dx, dl};
	for (size_t k = 0; k < sizeof tensors / sizeof *tensors; k++) lm_tensor_release(tensors[k]);
	assert_int_equal(fake_device_get_stats().live_bytes, 0);
}

/* The fake device, but without a softmax loop. */
static bool no_softmax(const lmi_exec *e)
{
	return e->op != LMI_OP_SOFTMAX && fake_device_backend.supports_node(e);
}

/* An op a device does not run: one message in one wording, naming the op, the device, the dtype
 * and the shape, wherever it arises (lmi_refuse); the op table says the same. */
static void test_unsupported_wording(void **state)
{
	(void)state;
	static lmi_backend without; /* registered: it must outlive a failed assertion */
	without = fake_device_backend;
	without.supports_node = no_softmax;
	lmi_backend_register(&without);
	lm_tensor *x = lm_ones(2, (int64_t[]){2, 3}, LM_FLOAT32), *dx = lm_to_device(x, LM_CUDA);
	assert_non_null(dx);
	assert_null(lm_softmax(dx, 1));
	assert_int_equal(lm_last_status(), LM_ERR_UNSUPPORTED);
	assert_string_equal(lm_last_error(), "softmax: the fake device has no softmax loop for float32 (shape [2, 3])");
	lm_tensor *ls = lm_log_softmax(dx, 1); /* log_softmax is another op: it runs */
	bool ran = ls != NULL;
	lm_tensor_release(ls);
	int i = -1;
	lm_op_desc d;
	for (int k = 0; k < lm_op_count(); k++)
		if (lm_op_describe(k, &d) == LM_OK && strcmp(d.name, "softmax") == 0) i = k;
	assert_int_equal(lm_op_supported(i, LM_CUDA, LM_FLOAT32), 0);
	lm_tensor_release(dx);
	lm_tensor_release(x);
	lmi_backend_register(&fake_device_backend);
	assert_true(ran);
	assert_int_equal(lm_op_supported(i, LM_CUDA, LM_FLOAT32), 1);
}

static const lmi_params no_params;

/* A device that takes whole graphs: its pass and its graph runner count their calls. */
static int graph_passes, graph_runs;
static lm_status count_optimize(lmi_exec *nodes, int *n)
{
	(void)nodes;
	graph_passes++;
	assert_true(*n >= 1);
	return LM_OK;
}
static lm_status run_graph(lmi_exec *nodes, int n)
{
	graph_runs++;
	for (int i = 0; i < n; i++) {
		lm_status s = fake_device_backend.compute(&nodes[i]);
		if (s) return s;
	}
	return LM_OK;
}

/* lmi_compute_graph: two nodes on the device (y = exp(x), z = y + x), node by node on a device
 * without compute_graph, through the device's pass and runner where it has them; a node the
 * device refuses stops the graph before anything runs. */
static void test_compute_graph(void **state)
{
	(void)state;
	float xv[3] = {0, 1, -2};
	lm_tensor *x = lm_from_data(xv, 1, (int64_t[]){3}, LM_FLOAT32), *zero = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32);
	lm_tensor *dx = lm_to_device(x, LM_CUDA), *dy = lm_to_device(zero, LM_CUDA), *dz = lm_to_device(zero, LM_CUDA);
	assert_non_null(dz);
	lmi_exec g[2] = {
	    {.op = LMI_OP_EXP, .p = &no_params, .fname = "graph", .dtype = LM_FLOAT32, .nsrc = 1, .src = {dx}, .ndst = 1, .dst = {dy}},
	    {.op = LMI_OP_ADD, .p = &no_params, .fname = "graph", .dtype = LM_FLOAT32, .nsrc = 2, .src = {dy, dx}, .ndst = 1, .dst = {dz}},
	};
	static lmi_backend graphs; /* registered: it must outlive a failed assertion */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			graphs = fake_device_backend;
			graphs.graph_optimize = count_optimize;
			graphs.compute_graph = run_graph;
			lmi_backend_register(&graphs);
		}
		fake_device_stats s0 = fake_device_get_stats();
		assert_int_equal(lmi_compute_graph(g, 2), LM_OK);
		fake_device_stats s1 = fake_device_get_stats();
		assert_int_equal(s1.calls[LMI_OP_EXP] - s0.calls[LMI_OP_EXP], 1);
		assert_int_equal(s1.calls[LMI_OP_ADD] - s0.calls[LMI_OP_ADD], 1);
		lm_tensor *z = lm_to_device(dz, LM_CPU);
		for (int i = 0; i < 3; i++) assert_float_equal(((float *)lm_tensor_data(z))[i], expf(xv[i]) + xv[i], 1e-6);
		lm_tensor_release(z);
	}
	assert_int_equal(graph_passes, 1);
	assert_int_equal(graph_runs, 1);
	/* a node the device refuses: nothing runs, the one wording */
	graphs.supports_node = no_softmax;
	lmi_exec bad[2] = {g[0], {.op = LMI_OP_SOFTMAX, .p = &no_params, .fname = "graph", .dtype = LM_FLOAT32, .nsrc = 1, .src = {dy},
	                          .ndst = 1, .dst = {dz}}};
	fake_device_stats s0 = fake_device_get_stats();
	assert_int_equal(lmi_compute_graph(bad, 2), LM_ERR_UNSUPPORTED);
	assert_non_null(strstr(lm_last_error(), "graph: the fake device has no softmax loop for float32"));
	assert_int_equal(fake_device_get_stats().calls[LMI_OP_EXP], s0.calls[LMI_OP_EXP]);
	lmi_backend_register(&fake_device_backend);
	lm_tensor *all[] = {x, zero, dx, dy, dz};
	for (size_t k = 0; k < sizeof all / sizeof *all; k++) lm_tensor_release(all[k]);
}

/* Out of device memory: a clear error, nothing leaked, the device usable afterwards. */
static void test_out_of_memory(void **state)
{
	(void)state;
	lm_tensor *x = seq(2, (int64_t[]){8, 8}, LM_FLOAT32), *d = lm_to_device(x, LM_CUDA);
	fake_device_fail_after(0);
	lm_tensor *y = lm_exp(d);
	fake_device_fail_after(-1);
	assert_null(y);
	assert_int_equal(lm_last_status(), LM_ERR_NOMEM);
	assert_non_null(strstr(lm_last_error(), "device memory"));
	y = lm_exp(d);
	assert_non_null(y);
	lm_tensor_release(y);
	lm_tensor_release(d);
	lm_tensor_release(x);
	assert_int_equal(fake_device_get_stats().live_bytes, 0);
}

/* Pinned host memory crosses without staging. */
static void test_pinned(void **state)
{
	(void)state;
	lm_tensor *x = seq(2, (int64_t[]){3, 4}, LM_FLOAT64), *p = lm_pin_memory(x);
	assert_non_null(p);
	assert_true(lm_tensor_is_pinned(p));
	assert_false(lm_tensor_is_pinned(x));
	fake_device_stats s0 = fake_device_get_stats();
	lm_tensor *d = lm_to_device(p, LM_CUDA);
	assert_int_equal(fake_device_get_stats().pinned_copies - s0.pinned_copies, 1);
	assert_same(d, x);
	lm_tensor *again = lm_pin_memory(p);
	assert_ptr_equal(again, p);
	assert_null(lm_pin_memory(d));
	assert_int_equal(lm_last_status(), LM_ERR_DEVICE);
	lm_tensor_release(again);
	lm_tensor_release(d);
	lm_tensor_release(p);
	lm_tensor_release(x);
}

/* A CPU tensor that reached a fake slot: an op placed something on the wrong device. */
static const char *after_case(void)
{
	static int64_t seen;
	fake_device_stats s = fake_device_get_stats();
	if (s.foreign == seen) return NULL;
	seen = s.foreign;
	return "a CPU tensor reached the device's loop";
}

/* Without a GPU (this machine): moving a tensor there says why, and nothing is registered. */
static void test_no_gpu(void **state)
{
	(void)state;
	if (lm_cuda_is_available()) skip();
	lm_tensor *x = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32);
	assert_null(lm_to_device(x, LM_CUDA));
	assert_int_equal(lm_last_status(), LM_ERR_DEVICE);
	assert_non_null(strstr(lm_last_error(), "to: backend 'cuda' is not available"));
	assert_null(lm_pin_memory(x));
	assert_non_null(strstr(lm_last_error(), "pin_memory: backend 'cuda' is not available"));
	assert_null(lmi_backend_for(LM_CUDA));
	assert_int_equal(lm_cuda_memory_allocated(), 0);
	assert_int_equal(lm_cuda_empty_cache(), LM_OK);
	/* the GPU timer of :time: nothing to time, saying so */
	assert_false(lm_cuda_in_use());
	assert_int_equal(lm_cuda_timer_start(), LM_ERR_STATE);
	assert_non_null(strstr(lm_last_error(), "cuda.timer: no tensor was moved to the GPU yet"));
	double ms = -1;
	assert_int_equal(lm_cuda_timer_stop(&ms), LM_ERR_STATE);
	assert_true(ms == 0);
	assert_non_null(strstr(lm_last_error(), "cuda.timer: stopped without a start"));
	lm_tensor_release(x);
}

int main(void)
{
	const struct CMUnitTest first[] = {cmocka_unit_test(test_no_gpu)};
	int rc0 = cmocka_run_group_tests(first, NULL, NULL);
	fake_device_register();
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_copies),         cmocka_unit_test(test_placement_and_errors),
	    cmocka_unit_test(test_random_streams), cmocka_unit_test(test_optimizers),
	    cmocka_unit_test(test_batches),        cmocka_unit_test(test_out_of_memory),
	    cmocka_unit_test(test_pinned),         cmocka_unit_test(test_count_correct),
	    cmocka_unit_test(test_unsupported_wording), cmocka_unit_test(test_compute_graph),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	const lmi_backend *fake[1] = {&fake_device_backend};
	rc |= ot_run_rows("devices (fake)", 1, fake, after_case);
	fake_device_unregister();
	return rc | rc0;
}
