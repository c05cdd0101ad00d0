/*
 * test_nn_errors.c — bad input to the nn ops: each gives a status and a message naming the op
 * and the values, and leaks nothing.
 */
#include <math.h>

#include "lumen/nn.h"
#include "testutil.h"


static lm_tensor *t4(int64_t a, int64_t b, int64_t c, int64_t d)
{
	return lm_ones(4, (int64_t[]){a, b, c, d}, LM_FLOAT32);
}

static void test_conv_errors(void **state)
{
	(void)state;
	lm_tensor *x = t4(2, 3, 8, 8), *w = t4(4, 3, 3, 3), *w2 = t4(4, 2, 3, 3), *big = t4(4, 3, 11, 11);
	lm_tensor *b = lm_ones(1, (int64_t[]){5}, LM_FLOAT32), *xd = lm_ones(4, (int64_t[]){2, 3, 8, 8}, LM_FLOAT64);
	EXPECT_NULL(lm_conv2d(x, w2, NULL, NULL), LM_ERR_SHAPE,
	            "conv2d: weight [4, 2, 3, 3] expects 2 input channels per group, the input [2, 3, 8, 8] has 3");
	EXPECT_NULL(lm_conv2d(x, big, NULL, NULL), LM_ERR_SHAPE, "conv2d: input [2, 3, 8, 8], weight [4, 3, 11, 11]");
	lm_conv2d_opts pad = {{1, 1}, {2, 2}, {1, 1}, 1};
	lm_tensor *ok = lm_conv2d(x, big, NULL, &pad); /* 8 + 4 >= 11: fits once padded */
	assert_non_null(ok);
	assert_int_equal(lm_tensor_size(ok, 2), 2);
	lm_tensor_release(ok);
	lm_conv2d_opts neg = {{-1, 1}, {0, 0}, {1, 1}, 1};
	EXPECT_NULL(lm_conv2d(x, w, NULL, &neg), LM_ERR_ARG, "conv2d: stride -1");
	lm_conv2d_opts negpad = {{1, 1}, {-1, 0}, {1, 1}, 1};
	EXPECT_NULL(lm_conv2d(x, w, NULL, &negpad), LM_ERR_ARG, "padding -1");
	lm_conv2d_opts negdil = {{1, 1}, {0, 0}, {-2, 1}, 1};
	EXPECT_NULL(lm_conv2d(x, w, NULL, &negdil), LM_ERR_ARG, "dilation -2");
	lm_conv2d_opts g2 = {{1, 1}, {0, 0}, {1, 1}, 2};
	EXPECT_NULL(lm_conv2d(x, w, NULL, &g2), LM_ERR_ARG,
	            "conv2d: groups 2 must divide both the 3 input and the 4 output channels");
	lm_conv2d_opts gneg = {{1, 1}, {0, 0}, {1, 1}, -1};
	EXPECT_NULL(lm_conv2d(x, w, NULL, &gneg), LM_ERR_ARG, "groups -1");
	EXPECT_NULL(lm_conv2d(x, w, b, NULL), LM_ERR_SHAPE, "conv2d: bias of shape [5] for 4 output channels");
	EXPECT_NULL(lm_conv2d(xd, w, NULL, NULL), LM_ERR_DTYPE, "conv2d: input float64, weight float32");
	EXPECT_NULL(lm_conv2d(b, w, NULL, NULL), LM_ERR_SHAPE, "conv2d: expects input (N, C, H, W)");
	lm_tensor *objs[] = {x, w, w2, big, b, xd};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_pool_errors(void **state)
{
	(void)state;
	lm_tensor *x = t4(1, 2, 4, 4);
	lm_pool2d_opts big = {{5, 5}, {0, 0}, {0, 0}}, pad = {{2, 2}, {0, 0}, {2, 2}}, zero = {{0, 2}, {0, 0}, {0, 0}};
	EXPECT_NULL(lm_max_pool2d(x, &big, NULL), LM_ERR_SHAPE, "max_pool2d: input [1, 2, 4, 4]");
	EXPECT_NULL(lm_avg_pool2d(x, &pad), LM_ERR_ARG, "avg_pool2d: padding 2 must be at most half the kernel 2");
	EXPECT_NULL(lm_max_pool2d(x, &zero, NULL), LM_ERR_ARG, "max_pool2d: kernel 0");
	EXPECT_NULL(lm_max_pool2d(x, NULL, NULL), LM_ERR_ARG, "max_pool2d: options");
	lm_tensor_release(x);
}

static void test_loss_errors(void **state)
{
	(void)state;
	lm_tensor *x = lm_zeros(2, (int64_t[]){3, 4}, LM_FLOAT32);
	lm_tensor *t = lm_from_data((int64_t[]){0, 4, 1}, 1, (int64_t[]){3}, LM_INT64);
	lm_tensor *tn = lm_from_data((int64_t[]){0, -1, 1}, 1, (int64_t[]){3}, LM_INT64);
	lm_tensor *t2 = lm_zeros(1, (int64_t[]){2}, LM_INT64), *tf = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32);
	EXPECT_NULL(lm_cross_entropy(x, t, LM_REDUCTION_MEAN, 0), LM_ERR_INDEX,
	            "cross_entropy: target 5 at position 2 is out of range for 4 classes");
	EXPECT_NULL(lm_nll_loss(x, tn, LM_REDUCTION_SUM), LM_ERR_INDEX, "nll_loss: target 0 at position 2");
	EXPECT_NULL(lm_cross_entropy(x, t2, LM_REDUCTION_MEAN, 0), LM_ERR_SHAPE,
	            "cross_entropy: target of shape [2] does not match input [3, 4]");
	EXPECT_NULL(lm_cross_entropy(x, tf, LM_REDUCTION_MEAN, 0), LM_ERR_DTYPE, "cross_entropy: target must hold class indices");
	EXPECT_NULL(lm_cross_entropy(x, t, LM_REDUCTION_MEAN, 1.5), LM_ERR_ARG, "label_smoothing 1.5");
	EXPECT_NULL(lm_cross_entropy(x, t, (lm_reduction)7, 0), LM_ERR_ARG, "unknown reduction 7");
	lm_tensor *p = lm_full(2, (int64_t[]){3, 4}, LM_FLOAT32, 1.5), *y = lm_zeros(2, (int64_t[]){3, 4}, LM_FLOAT32);
	EXPECT_NULL(lm_binary_cross_entropy(p, y, LM_REDUCTION_MEAN), LM_ERR_ARG,
	            "binary_cross_entropy: input probabilities must lie in [0, 1], got values from 1.5 to 1.5");
	EXPECT_NULL(lm_mse_loss(x, t2, LM_REDUCTION_MEAN), LM_ERR_DTYPE, "mse_loss: target must be a float tensor");
	EXPECT_NULL(lm_mse_loss(x, tf, LM_REDUCTION_MEAN), LM_ERR_SHAPE, "mse_loss: input of shape [3, 4] and target of shape [3] differ");
	EXPECT_NULL(lm_dropout(x, 1.5, true), LM_ERR_ARG, "dropout: probability 1.5");
	EXPECT_NULL(lm_softmax(t, 0), LM_ERR_DTYPE, "softmax: input must be a float tensor (float32, float64, float16 or bfloat16), got int64");
	EXPECT_NULL(lm_log_softmax(x, 2), LM_ERR_INDEX, "log_softmax: dim 3 is out of range");
	lm_tensor *objs[] = {x, t, tn, t2, tf, p, y};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_norm_errors(void **state)
{
	(void)state;
	lm_tensor *x = lm_zeros(3, (int64_t[]){2, 3, 4}, LM_FLOAT32), *w3 = lm_ones(1, (int64_t[]){3}, LM_FLOAT32);
	EXPECT_NULL(lm_layer_norm(x, 1, (int64_t[]){3}, NULL, NULL, 1e-5), LM_ERR_SHAPE,
	            "layer_norm: normalized_shape [3] does not match the last dims of input [2, 3, 4]");
	EXPECT_NULL(lm_layer_norm(x, 4, (int64_t[]){1, 2, 3, 4}, NULL, NULL, 1e-5), LM_ERR_SHAPE, "normalized_shape of 4 dims");
	EXPECT_NULL(lm_layer_norm(x, 1, (int64_t[]){4}, w3, NULL, 1e-5), LM_ERR_SHAPE, "layer_norm: weight of shape [3], expected [4]");
	lm_tensor *rm = lm_zeros(1, (int64_t[]){4}, LM_FLOAT32);
	EXPECT_NULL(lm_batch_norm(x, rm, NULL, NULL, NULL, true, 0.1, 1e-5), LM_ERR_SHAPE,
	            "batch_norm: running_mean of shape [4] for 3 channels");
	EXPECT_NULL(lm_batch_norm(x, NULL, NULL, NULL, NULL, false, 0.1, 1e-5), LM_ERR_ARG,
	            "batch_norm: evaluation needs running_mean and running_var");
	lm_tensor *one = lm_zeros(2, (int64_t[]){1, 3}, LM_FLOAT32);
	EXPECT_NULL(lm_batch_norm(one, NULL, NULL, NULL, NULL, true, 0.1, 1e-5), LM_ERR_SHAPE,
	            "more than one value per channel");
	lm_tensor *idx = lm_from_data((int64_t[]){0, 7}, 1, (int64_t[]){2}, LM_INT64), *emb = lm_ones(2, (int64_t[]){5, 2}, LM_FLOAT32);
	EXPECT_NULL(lm_embedding(idx, emb), LM_ERR_INDEX, "embedding: index 7 out of range for 5 embeddings");
	EXPECT_NULL(lm_embedding(w3, emb), LM_ERR_DTYPE, "embedding: indices must be int64 or int32");
	lm_tensor *w = lm_ones(2, (int64_t[]){5, 3}, LM_FLOAT32);
	EXPECT_NULL(lm_linear(x, w, NULL), LM_ERR_SHAPE, "linear: input of shape [2, 3, 4] does not match weight [5, 3]");
	lm_tensor *objs[] = {x, w3, rm, one, idx, emb, w};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_dropout_statistics(void **state)
{
	(void)state;
	/* kept elements are scaled by 1/(1-p); the kept fraction is 1-p within 5 sigma */
	int64_t n = 200000;
	lm_tensor *x = lm_ones(1, &n, LM_FLOAT32);
	lm_manual_seed(3);
	lm_tensor *y = lm_dropout(x, 0.25, true);
	const float *v = lm_tensor_data(y);
	int64_t kept = 0;
	for (int64_t i = 0; i < n; i++) {
		if (v[i] != 0) {
			assert_true(fabsf(v[i] - 1 / 0.75f) < 1e-6f);
			kept++;
		}
	}
	double frac = (double)kept / (double)n, sd = sqrt(0.25 * 0.75 / (double)n);
	assert_true(fabs(frac - 0.75) < 5 * sd);
	lm_tensor *same = lm_dropout(x, 0.25, false);
	assert_ptr_equal(same, x);
	lm_tensor *all = lm_dropout(x, 1, true);
	lm_tensor *s = lm_sum(all, LM_DIM_ALL, false);
	double total;
	lm_tensor_item(s, &total);
	assert_true(total == 0);
	lm_tensor *objs[] = {x, y, same, all, s};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEAK_TEST(test_conv_errors),
		LEAK_TEST(test_pool_errors),
		LEAK_TEST(test_loss_errors),
		LEAK_TEST(test_norm_errors),
		LEAK_TEST(test_dropout_statistics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
