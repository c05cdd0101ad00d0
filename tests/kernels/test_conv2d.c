/*
 * test_conv2d.c — kernels.conv2d: naive, constant-memory, input-tile and output-tile versions on
 * every available run equal the sequential "same" convolution with zero ghost cells, for any image
 * size (1x1, ragged sizes, masks with different odd sides, even masks where allowed); the lecture's
 * counts of global loads per output pixel; bad input. Every case of the correctness tests runs on
 * contiguous, transposed and narrowed inputs (ktest.h: kt_layout).
 */
#include "ktest.h"

static const char *const algos[] = {"naive", "constant", "tiled-input", "tiled-output", "tiled"};

static lm_tensor *ints2(int64_t r, int64_t c, lm_dtype dt)
{
	lm_tensor *t = lm_randint(-3, 4, 2, (int64_t[]){r, c}, dt);
	assert_non_null(t);
	return t;
}

/* One convolution of a random image and mask, both in layout `layout` (kt_layout), against the
 * sequential reference. */
static lm_kernel_info *conv_in(const char *backend, const char *algo, int64_t h, int64_t w,
                               int64_t mh, int64_t mw, int64_t tile, lm_dtype dt, int layout)
{
	lm_tensor *img = ints2(h, w, dt), *mask = ints2(mh, mw, dt), *out = NULL;
	lm_tensor *il = kt_layout(img, layout), *ml = kt_layout(mask, layout);
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.tile = tile;
	o.repeats = 1;
	lm_kernel_info *info = NULL;
	if (lm_kernel_conv2d(il, ml, &o, &out, &info) != LM_OK)
		fail_msg("%s %s %lldx%lld mask %lldx%lld tile %lld %s: %s", backend, algo, (long long)h,
		         (long long)w, (long long)mh, (long long)mw, (long long)tile,
		         kt_layout_name[layout], lm_last_error());
	int64_t ry = (mh - 1) / 2, rx = (mw - 1) / 2;
	for (int64_t y = 0; y < h; y++)
		for (int64_t x = 0; x < w; x++) {
			double s = 0;
			for (int64_t i = 0; i < mh; i++)
				for (int64_t j = 0; j < mw; j++) {
					int64_t yy = y + i - ry, xx = x + j - rx;
					if (yy >= 0 && yy < h && xx >= 0 && xx < w)
						s += kt_get(mask, i * mw + j) * kt_get(img, yy * w + xx);
				}
			if (kt_get(out, y * w + x) != s)
				fail_msg("%s %s %s %lldx%lld mask %lldx%lld tile %lld %s: P[%lld][%lld] = %g, "
				         "expected %g", backend, algo, lm_dtype_name(dt), (long long)h,
				         (long long)w, (long long)mh, (long long)mw, (long long)tile,
				         kt_layout_name[layout], (long long)y, (long long)x,
				         kt_get(out, y * w + x), s);
		}
	lm_tensor *list[] = {img, mask, il, ml, out};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
	return info;
}

static lm_kernel_info *conv(const char *backend, const char *algo, int64_t h, int64_t w, int64_t mh,
                            int64_t mw, int64_t tile, lm_dtype dt)
{
	return conv_in(backend, algo, h, w, mh, mw, tile, dt, KT_CONTIGUOUS);
}

/* One case on each layout of the inputs. */
static void check(const char *backend, const char *algo, int64_t h, int64_t w, int64_t mh,
                  int64_t mw, int64_t tile, lm_dtype dt)
{
	for (int layout = 0; layout < KT_LAYOUTS; layout++)
		lm_kernel_info_free(conv_in(backend, algo, h, w, mh, mw, tile, dt, layout));
}

static void test_emu(void **state)
{
	(void)state;
	for (int a = 0; a < 5; a++) {
		check("emu", algos[a], 1, 1, 1, 1, 0, LM_FLOAT32);
		check("emu", algos[a], 7, 9, 3, 3, 4, LM_FLOAT64);
		check("emu", algos[a], 10, 13, 5, 3, 8, LM_FLOAT32); /* ragged tiles, a 5x3 mask */
		check("emu", algos[a], 6, 6, 1, 5, 1, LM_FLOAT32);
		check("emu", algos[a], 17, 5, 5, 5, 16, LM_FLOAT32);
	}
	/* even sides: only where the mask is not a halo of a tile */
	check("emu", "naive", 6, 5, 2, 4, 4, LM_FLOAT32);
	check("emu", "constant", 5, 6, 4, 2, 3, LM_FLOAT64);
}

static void test_cpu(void **state)
{
	(void)state;
	for (int d = 0; d < 2; d++) {
		lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
		check("cpu", "tiled", 1, 1, 1, 1, 0, dt);
		check("cpu", "naive", 100, 77, 5, 5, 0, dt);
		check("cpu", "constant", 3, 300, 3, 7, 0, dt);
		check("cpu", "naive", 4, 9, 4, 2, 0, dt);
		check("cpu", "tiled-output", 9, 9, 9, 9, 0, dt);
	}
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) return; /* the "not available" error: test_bad_input */
	for (int a = 0; a < 5; a++) {
		check("cuda", algos[a], 1, 1, 1, 1, 0, LM_FLOAT32);
		check("cuda", algos[a], 333, 517, 5, 5, 16, LM_FLOAT32);
		check("cuda", algos[a], 100, 37, 7, 3, 8, LM_FLOAT64);
		check("cuda", algos[a], 64, 64, 3, 3, 30, LM_FLOAT32);
	}
	check("cuda", "naive", 50, 40, 6, 4, 16, LM_FLOAT32);
}

/* Global loads of a 32 x 32 image, a 3x3 mask and 8 x 8 output tiles, counted from the trace. */
static void test_counters(void **state)
{
	(void)state;
	double loads[4], per[4];
	for (int a = 0; a < 4; a++) {
		lm_kernel_info *info = conv("emu", algos[a], 32, 32, 3, 3, 8, LM_FLOAT32);
		loads[a] = kt_counter(info, "global_loads");
		per[a] = kt_counter(info, "global_loads_per_output");
		assert_true(fabs(per[a] * 1024 - loads[a]) < 1e-9);
		if (a == 1) assert_int_equal(kt_counter(info, "constant_loads"), loads[a]);
		if (a == 2) assert_true(kt_counter(info, "simd_efficiency") < 1); /* the idle halo threads */
		if (a == 3) assert_int_equal(kt_counter(info, "threads"), 16 * 64);
		assert_int_equal(kt_counter(info, "global_stores"), 1024);
		lm_kernel_info_free(info);
	}
	/* constant: one image load per (pixel, in-image neighbour): (32*3 - 2)^2 */
	assert_int_equal(loads[1], 94 * 94);
	assert_int_equal(loads[0], 2 * loads[1]); /* naive loads the mask element too */
	/* tiled: each block loads its 10x10 input tile once (minus ghost cells): 38 rows x 38 cols */
	assert_int_equal(loads[2], 38 * 38);
	assert_int_equal(loads[3], 38 * 38);
	assert_true(per[2] < 1.5 && per[1] > 8);
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *img = ints2(8, 8, LM_FLOAT32), *out = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	lm_tensor *big = ints2(9, 3, LM_FLOAT32);
	KT_EXPECT_ERROR(lm_kernel_conv2d(img, big, &o, &out, &info), LM_ERR_SHAPE,
	                "kernels.conv2d: the mask [9, 3] is larger than the image [8, 8]");
	lm_tensor *even = ints2(4, 3, LM_FLOAT32);
	o.algo = "tiled";
	KT_EXPECT_ERROR(lm_kernel_conv2d(img, even, &o, &out, &info), LM_ERR_SHAPE,
	                "algo 'tiled' needs odd mask sides", "the mask is [4, 3]");
	o.algo = "tiled-output";
	KT_EXPECT_ERROR(lm_kernel_conv2d(img, even, &o, &out, &info), LM_ERR_SHAPE, "needs odd mask sides");
	lm_tensor *huge = ints2(50, 50, LM_FLOAT32), *mask50 = ints2(49, 49, LM_FLOAT32);
	o.algo = "constant";
	KT_EXPECT_ERROR(lm_kernel_conv2d(huge, mask50, &o, &out, &info), LM_ERR_ARG,
	                "constant memory, which holds at most 2048 elements; the mask [49, 49] has 2401");
	lm_tensor *m5 = ints2(5, 5, LM_FLOAT32);
	o.algo = "tiled-input";
	o.tile = 30;
	KT_EXPECT_ERROR(lm_kernel_conv2d(huge, m5, &o, &out, &info), LM_ERR_ARG,
	                "blocks of 34 x 34 = 1156 threads", "choose a smaller tile");
	lm_tensor *m64 = ints2(3, 3, LM_FLOAT64), *v = lm_zeros(1, (int64_t[]){8}, LM_FLOAT32);
	lm_kernel_opts_init(&o);
	KT_EXPECT_ERROR(lm_kernel_conv2d(img, m64, &o, &out, &info), LM_ERR_DTYPE,
	                "the image is float32 and the mask float64");
	KT_EXPECT_ERROR(lm_kernel_conv2d(v, m5, &o, &out, &info), LM_ERR_SHAPE, "must both be 2-D");
	o.algo = "fft";
	KT_EXPECT_ERROR(lm_kernel_conv2d(img, m5, &o, &out, &info), LM_ERR_ARG,
	                "unknown algo 'fft' (expected 'naive', 'constant', 'tiled', 'tiled-input' or "
	                "'tiled-output')");
	if (!lm_cuda_is_available()) {
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		KT_EXPECT_ERROR(lm_kernel_conv2d(img, m5, &o, &out, &info), LM_ERR_DEVICE,
		                "kernels.conv2d: backend 'cuda' is not available");
	}
	assert_null(out);
	assert_null(info);
	lm_tensor *list[] = {img, big, even, huge, mask50, m5, m64, v};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_cuda_when_present),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
