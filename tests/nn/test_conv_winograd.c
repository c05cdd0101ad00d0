/*
 * test_conv_winograd.c — the Winograd F(2x2, 3x3) convolution (lm_conv2d_algo with
 * LM_CONV_WINOGRAD; src/backend/cpu/winograd.c) on every SIMD path this machine supports (the
 * others are reported as skipped), against independent references: the convolution, and its
 * gradients for the input, the weights and the bias, summed in double by plain loops. Shapes cover
 * channel counts across the 16-lane padding, odd output sizes (partial tiles), paddings 0-2, one-
 * pixel images, more than one block of tiles, a non-contiguous input and both dtypes.
 *
 * The numerical error is measured, printed and bounded: relative to the magnitude of each
 * output's sum, sum |x w|, the float32 Winograd result must be within 3e-6 (16 float32 ulp; the
 * transforms add up to 4 values before and after the products), and the im2col path's error on
 * the same data is printed beside it. float64 agrees to 1e-12. Also: the automatic choice, the
 * errors of layers Winograd cannot compute, and the autograd node.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lumen/isa.h"
#include "lumen/nn.h"
#include "testutil.h"

typedef struct shape {
	int64_t N, C, K, H, W, pad;
} shape;

static const shape shapes[] = {
	{1, 1, 1, 3, 3, 0},    {2, 3, 5, 7, 6, 1},   {3, 17, 18, 9, 11, 1}, {1, 20, 33, 5, 4, 2},
	{2, 64, 64, 12, 10, 1}, {1, 8, 16, 1, 1, 1}, {1, 16, 32, 30, 26, 1}, /* 195 tiles: 3 blocks */
};

/* A contiguous float64 copy's data (the caller releases *hold). */
static const double *f64(const lm_tensor *t, lm_tensor **hold)
{
	*hold = lm_to_dtype(t, LM_FLOAT64);
	lm_tensor *c = lm_contiguous(*hold);
	lm_tensor_release(*hold);
	*hold = c;
	return lm_tensor_data(c);
}

/* The references in double: y (with the magnitudes sum |x w| + |b| in mag), gx, gw, gb. */
static void reference(const shape *s, const double *x, const double *w, const double *b,
                      const double *gy, double *y, double *mag, double *gx, double *gw, double *gb)
{
	int64_t N = s->N, C = s->C, K = s->K, H = s->H, W = s->W, p = s->pad;
	int64_t OH = H + 2 * p - 2, OW = W + 2 * p - 2;
	for (int64_t i = 0; i < N * C * H * W; i++) gx[i] = 0;
	for (int64_t i = 0; i < K * C * 9; i++) gw[i] = 0;
	for (int64_t k = 0; k < K; k++) gb[k] = 0;
	for (int64_t n = 0; n < N; n++)
		for (int64_t k = 0; k < K; k++)
			for (int64_t oy = 0; oy < OH; oy++)
				for (int64_t ox = 0; ox < OW; ox++) {
					int64_t o = ((n * K + k) * OH + oy) * OW + ox;
					double acc = b ? b[k] : 0, m = b ? fabs(b[k]) : 0, g = gy[o];
					gb[k] += g;
					for (int64_t c = 0; c < C; c++)
						for (int r = 0; r < 3; r++)
							for (int q = 0; q < 3; q++) {
								int64_t iy = oy + r - p, ix = ox + q - p;
								if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
								int64_t xi = ((n * C + c) * H + iy) * W + ix, wi = (k * C + c) * 9 + r * 3 + q;
								acc += x[xi] * w[wi];
								m += fabs(x[xi] * w[wi]);
								gx[xi] += g * w[wi];
								gw[wi] += g * x[xi];
							}
					y[o] = acc;
					mag[o] = m;
				}
}

/* max |got - want| / scale[i] (scale NULL: relative to max |want|) */
static double err_of(const lm_tensor *got, const double *want, const double *scale, int64_t n)
{
	lm_tensor *h;
	const double *g = f64(got, &h);
	double e = 0, mx = 0;
	for (int64_t i = 0; i < n; i++) mx = fmax(mx, fabs(want[i]));
	for (int64_t i = 0; i < n; i++) {
		double d = fabs(g[i] - want[i]) / (scale ? fmax(scale[i], 1e-30) : fmax(mx, 1e-30));
		if (!(d <= e)) e = d; /* NaN counts as the worst */
	}
	lm_tensor_release(h);
	return e;
}

static double worst_fwd, worst_im2col, worst_grad;

/* One shape on the path in use, through autograd: forward and all three gradients. */
static void check_shape(const shape *s, lm_dtype dt, bool transposed_input)
{
	int64_t OH = s->H + 2 * s->pad - 2, OW = s->W + 2 * s->pad - 2;
	int64_t ny = s->N * s->K * OH * OW, nx = s->N * s->C * s->H * s->W, nw = s->K * s->C * 9;
	lm_tensor *x0 = transposed_input ? lm_randn(4, (int64_t[]){s->N, s->C, s->W, s->H}, dt)
	                                 : lm_randn(4, (int64_t[]){s->N, s->C, s->H, s->W}, dt);
	assert_int_equal(lm_tensor_requires_grad_(x0, true), LM_OK);
	lm_tensor *x = transposed_input ? lm_transpose(x0, 2, 3) : lm_tensor_retain(x0);
	lm_tensor *w = lm_randn(4, (int64_t[]){s->K, s->C, 3, 3}, dt), *b = lm_randn(1, &s->K, dt);
	lm_tensor *gy = lm_randn(4, (int64_t[]){s->N, s->K, OH, OW}, dt);
	assert_int_equal(lm_tensor_requires_grad_(w, true), LM_OK);
	assert_int_equal(lm_tensor_requires_grad_(b, true), LM_OK);
	lm_conv2d_opts o = {{1, 1}, {s->pad, s->pad}, {1, 1}, 1};
	lm_tensor *y = lm_conv2d_algo(x, w, b, &o, LM_CONV_WINOGRAD);
	assert_non_null(y);
	assert_string_equal(lm_tensor_grad_fn_name(y), "ConvolutionWinogradBackward");
	assert_int_equal(lm_backward(y, gy, false), LM_OK);

	lm_tensor *h[5];
	const double *xd = f64(x, &h[0]), *wd = f64(w, &h[1]), *bd = f64(b, &h[2]), *gd = f64(gy, &h[3]);
	double *ry = malloc(sizeof(double) * (size_t)(ny + 1)), *mag = malloc(sizeof(double) * (size_t)(ny + 1));
	double *rgx = malloc(sizeof(double) * (size_t)(nx + 1)), *rgw = malloc(sizeof(double) * (size_t)(nw + 1));
	double *rgb = malloc(sizeof(double) * (size_t)(s->K + 1));
	reference(s, xd, wd, bd, gd, ry, mag, rgx, rgw, rgb);
	double tol = dt == LM_FLOAT32 ? 3e-6 : 1e-12;
	double ef = err_of(y, ry, mag, ny);
	/* the gradients in x's own layout: transposed back to (N, C, H, W) for the comparison */
	lm_tensor *gxv = transposed_input ? lm_transpose(lm_tensor_grad(x0), 2, 3)
	                                  : lm_tensor_retain(lm_tensor_grad(x0));
	double ex = err_of(gxv, rgx, NULL, nx), ew = err_of(lm_tensor_grad(w), rgw, NULL, nw);
	double eb = err_of(lm_tensor_grad(b), rgb, NULL, s->K);
	if (!(ef <= tol) || !(ex <= 10 * tol) || !(ew <= 10 * tol) || !(eb <= 10 * tol))
		fail_msg("%s %s [%lld, %lld, %lld, %lld] K %lld pad %lld: errors y %.3g gx %.3g gw %.3g gb %.3g "
		         "(tolerance %.3g)", lm_isa_name(lm_isa_active()), lm_dtype_name(dt), (long long)s->N,
		         (long long)s->C, (long long)s->H, (long long)s->W, (long long)s->K,
		         (long long)s->pad, ef, ex, ew, eb, tol);
	if (dt == LM_FLOAT32) {
		worst_fwd = fmax(worst_fwd, ef);
		worst_grad = fmax(worst_grad, fmax(ex, fmax(ew, eb)));
		lm_tensor *yi = lm_conv2d_algo(x, w, b, &o, LM_CONV_IM2COL);
		assert_non_null(yi);
		worst_im2col = fmax(worst_im2col, err_of(yi, ry, mag, ny));
		lm_tensor_release(yi);
	}
	free(ry);
	free(mag);
	free(rgx);
	free(rgw);
	free(rgb);
	for (int i = 0; i < 4; i++) lm_tensor_release(h[i]);
	lm_tensor *all[] = {x0, x, w, b, gy, y, gxv};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
}

static lm_isa initial_isa;

static void on_path(lm_isa isa)
{
	if (!lm_isa_supported(isa)) {
		print_message("[  SKIPPED ] path %s: not supported here\n", lm_isa_name(isa));
		skip();
	}
	assert_int_equal(lm_isa_set(isa), LM_OK);
	lm_manual_seed(3);
	worst_fwd = worst_im2col = worst_grad = 0;
	for (int threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			check_shape(&shapes[i], LM_FLOAT32, i % 3 == 1);
			if (i < 4) check_shape(&shapes[i], LM_FLOAT64, i % 2 == 1);
		}
	}
	lm_set_num_threads(0);
	print_message("  %s: float32 error / sum|x w|: Winograd %.2g (im2col %.2g); gradients / max|g|: "
	              "%.2g\n", lm_isa_name(isa), worst_fwd, worst_im2col, worst_grad);
}

static void test_winograd_scalar(void **state) { (void)state; on_path(LM_ISA_SCALAR); }
static void test_winograd_avx2(void **state) { (void)state; on_path(LM_ISA_AVX2); }
static void test_winograd_avx512(void **state) { (void)state; on_path(LM_ISA_AVX512); }

/* The automatic choice and the layers Winograd cannot compute. */
static void test_choice_and_errors(void **state)
{
	(void)state;
	lm_tensor *x8 = lm_randn(4, (int64_t[]){2, 8, 6, 6}, LM_FLOAT32);
	lm_tensor *w8 = lm_randn(4, (int64_t[]){4, 8, 3, 3}, LM_FLOAT32);
	lm_tensor *x4 = lm_randn(4, (int64_t[]){2, 4, 6, 6}, LM_FLOAT32);
	lm_tensor *w4 = lm_randn(4, (int64_t[]){4, 4, 3, 3}, LM_FLOAT32);
	lm_tensor *w5 = lm_randn(4, (int64_t[]){4, 8, 5, 5}, LM_FLOAT32);
	lm_tensor *w8g = lm_randn(4, (int64_t[]){4, 4, 3, 3}, LM_FLOAT32);
	lm_tensor *x64 = lm_to_dtype(x8, LM_FLOAT64), *w64 = lm_to_dtype(w8, LM_FLOAT64);
	lm_conv2d_opts o = {{1, 1}, {1, 1}, {1, 1}, 1}, s2 = {{2, 2}, {1, 1}, {1, 1}, 1};
	lm_conv2d_opts d2 = {{1, 1}, {2, 2}, {2, 2}, 1}, g2 = {{1, 1}, {1, 1}, {1, 1}, 2};
	lm_conv_algo vec = lm_isa_active() == LM_ISA_SCALAR ? LM_CONV_IM2COL : LM_CONV_WINOGRAD;
	assert_int_equal(lm_conv2d_which(x8, w8, &o, LM_CONV_AUTO), vec);
	assert_int_equal(lm_conv2d_which(x4, w4, &o, LM_CONV_AUTO), LM_CONV_IM2COL); /* < 8 channels */
	assert_int_equal(lm_conv2d_which(x8, w8, &s2, LM_CONV_AUTO), LM_CONV_IM2COL);
	assert_int_equal(lm_conv2d_which(x8, w5, &o, LM_CONV_AUTO), LM_CONV_IM2COL);
	assert_int_equal(lm_conv2d_which(x64, w64, &o, LM_CONV_AUTO), LM_CONV_IM2COL);
	assert_int_equal(lm_conv2d_which(x64, w64, &o, LM_CONV_WINOGRAD), LM_CONV_WINOGRAD);
	assert_int_equal(lm_conv2d_which(x4, w4, &o, LM_CONV_WINOGRAD), LM_CONV_WINOGRAD);
	assert_int_equal(lm_conv2d_which(x8, w8, &o, LM_CONV_IM2COL), LM_CONV_IM2COL);
	if (lm_isa_supported(LM_ISA_SCALAR)) { /* on the scalar path the default is im2col */
		lm_isa was = lm_isa_active();
		assert_int_equal(lm_isa_set(LM_ISA_SCALAR), LM_OK);
		assert_int_equal(lm_conv2d_which(x8, w8, &o, LM_CONV_AUTO), LM_CONV_IM2COL);
		assert_int_equal(lm_isa_set(was), LM_OK);
	}
	EXPECT_NULL(lm_conv2d_algo(x8, w8, NULL, &s2, LM_CONV_WINOGRAD), LM_ERR_ARG,
	            "conv2d: algo 'winograd' computes 3x3 kernels with stride 1");
	EXPECT_NULL(lm_conv2d_algo(x8, w8, NULL, &s2, LM_CONV_WINOGRAD), LM_ERR_ARG, "stride 2x2");
	EXPECT_NULL(lm_conv2d_algo(x8, w5, NULL, &o, LM_CONV_WINOGRAD), LM_ERR_ARG, "kernel 5x5");
	EXPECT_NULL(lm_conv2d_algo(x8, w8, NULL, &d2, LM_CONV_WINOGRAD), LM_ERR_ARG, "dilation 2x2");
	EXPECT_NULL(lm_conv2d_algo(x8, w8g, NULL, &g2, LM_CONV_WINOGRAD), LM_ERR_ARG, "groups 2");
	EXPECT_NULL(lm_conv2d_algo(x8, w8, NULL, &o, (lm_conv_algo)7), LM_ERR_ARG,
	            "conv2d: algo 7 is not one of auto, im2col, winograd");
	assert_int_equal(lm_conv2d_which(x8, w8, &o, (lm_conv_algo)-1), LM_CONV_AUTO);
	/* the ordinary checks come first and name the op, as for im2col */
	EXPECT_NULL(lm_conv2d_algo(x8, w4, NULL, &o, LM_CONV_WINOGRAD), LM_ERR_SHAPE, "conv2d: weight");
	assert_string_equal(lm_conv_algo_name(LM_CONV_WINOGRAD), "winograd");
	assert_string_equal(lm_conv_algo_name(LM_CONV_ALGO_COUNT), "?");
	/* an empty batch and a layer without bias or grads */
	lm_tensor *x0 = lm_randn(4, (int64_t[]){0, 8, 6, 6}, LM_FLOAT32);
	lm_tensor *y0 = lm_conv2d_algo(x0, w8, NULL, &o, LM_CONV_WINOGRAD);
	assert_non_null(y0);
	assert_int_equal(lm_tensor_numel(y0), 0);
	lm_tensor *all[] = {x8, w8, x4, w4, w5, w8g, x64, w64, x0, y0};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
}

static int restore(void **state)
{
	lm_isa_set(initial_isa);
	lm_set_num_threads(0);
	return lmt_leak_teardown(state);
}

int main(void)
{
	initial_isa = lm_isa_active();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_winograd_scalar, lmt_leak_setup, restore),
		cmocka_unit_test_setup_teardown(test_winograd_avx2, lmt_leak_setup, restore),
		cmocka_unit_test_setup_teardown(test_winograd_avx512, lmt_leak_setup, restore),
		cmocka_unit_test_setup_teardown(test_choice_and_errors, lmt_leak_setup, restore),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
