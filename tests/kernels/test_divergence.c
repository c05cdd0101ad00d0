/*
 * test_divergence.c — kernels.divergence: every pattern computes its two paths right; the SIMD
 * efficiency over the divergent region is 0.5 for even/odd and half-warp splits and 1.0 without
 * divergence; the trace holds each warp's active mask per path; the reduction of issue 8 shows
 * the same effect (naive against convergent); bad input.
 */
#include "ktest.h"

static lm_kernel_info *demo(const char *backend, const char *pattern, int64_t warps, int64_t block,
                            lm_tensor **out)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.pattern = pattern;
	o.warps = warps;
	o.block = block;
	o.repeats = 1;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	if (lm_kernel_divergence(&o, &y, &info) != LM_OK)
		fail_msg("%s %s: %s", backend, pattern ? pattern : "(default)", lm_last_error());
	assert_int_equal(lm_tensor_numel(y), warps * 32);
	/* every result is x + 10 or x - 10 (x in [0, 1)), by the path taken */
	for (int64_t i = 0; i < warps * 32; i++) {
		double v = kt_get(y, i);
		if (!((v >= 10 && v < 11) || (v >= -10 && v < -9)))
			fail_msg("%s %s: y[%lld] = %g is on neither path", backend,
			         pattern ? pattern : "(default)", (long long)i, v);
		bool first = v >= 10, lane_even = i % 32 % 2 == 0, low = i % 32 < 16;
		if (pattern && strcmp(pattern, "even-odd") == 0) assert_true(first == lane_even);
		if (pattern && strcmp(pattern, "half-warp") == 0) assert_true(first == low);
		if (pattern && strcmp(pattern, "none") == 0) assert_true(first);
		if (pattern && strcmp(pattern, "warp") == 0) assert_true(first == ((i % block) / 32 % 2 == 0));
	}
	if (out) *out = y;
	else lm_tensor_release(y);
	return info;
}

static void test_efficiency(void **state)
{
	(void)state;
	struct {
		const char *pattern;
		double eff;
		int divergent; /* warps whose branch splits */
	} cases[] = {{"even-odd", 0.5, 4}, {"half-warp", 0.5, 4}, {"warp", 1.0, 0}, {"none", 1.0, 0}};
	double cycles[4];
	for (int c = 0; c < 4; c++) {
		lm_kernel_info *info = demo("emu", cases[c].pattern, 4, 128, NULL);
		assert_true(fabs(kt_counter(info, "simd_efficiency") - cases[c].eff) < 1e-12);
		assert_int_equal(kt_counter(info, "divergent_branches"), cases[c].divergent);
		assert_true(kt_counter(info, "simd_efficiency_kernel") >= cases[c].eff);
		cycles[c] = kt_counter(info, "modelled_cycles");
		lm_kernel_info_free(info);
	}
	/* the divergent warps run both paths one after the other */
	assert_true(cycles[0] > cycles[3]);
	assert_true(cycles[1] > cycles[2]);
	/* data-dependent: somewhere between (random values split most warps) */
	lm_kernel_info *info = demo("emu", "data", 8, 256, NULL);
	double e = kt_counter(info, "simd_efficiency");
	assert_true(e >= 0.5 && e < 1.0);
	assert_true(kt_counter(info, "divergent_branches") > 0);
	lm_kernel_info_free(info);
	/* the default pattern is even-odd */
	info = demo("emu", NULL, 1, 0, NULL);
	assert_true(fabs(kt_counter(info, "simd_efficiency") - 0.5) < 1e-12);
	lm_kernel_info_free(info);
}

/* The trace: per warp, the branch's taken lanes, then each path's adds with its active mask. */
static void test_trace_masks(void **state)
{
	(void)state;
	lm_kernel_info *info = demo("emu", "even-odd", 2, 64, NULL);
	lm_trace *t = lm_kernel_info_trace(info);
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	f.kind = LM_TRACE_BRANCH;
	int64_t i = lm_trace_find(t, &f, 0);
	assert_true(i >= 0);
	assert_int_equal(lm_trace_event_get(t, i)->aux, 0x55555555u);
	assert_int_equal(lm_trace_event_get(t, i)->mask, 0xffffffffu);
	for (int w = 0; w < 2; w++) {
		lm_trace_filter_init(&f);
		f.kind = LM_TRACE_ADD;
		f.warp = w;
		int even = 0, odd = 0;
		uint64_t even_cycle = 0, odd_cycle = 0;
		for (int64_t k = lm_trace_find(t, &f, 0); k >= 0; k = lm_trace_find(t, &f, k + 1)) {
			const lm_trace_event *e = lm_trace_event_get(t, k);
			if (e->mask == 0x55555555u) even++, even_cycle = e->cycle;
			else if (e->mask == 0xaaaaaaaau) odd++, odd_cycle = e->cycle;
			else fail_msg("an add of warp %d with mask %08x", w, e->mask);
		}
		assert_int_equal(even, 16 * 4);
		assert_int_equal(odd, 16 * 4);
		assert_true(odd_cycle > even_cycle); /* the second path after the first */
	}
	lm_kernel_info_free(info);
}

/* Issue 8's reduction: the naive kernel keeps diverging, the convergent one only in its last
 * steps (stride < 32). */
static void test_reduction_divergence(void **state)
{
	(void)state;
	lm_tensor *x = kt_ints(2048, LM_FLOAT32, 0, 4), *y = NULL;
	double eff[2], div[2];
	const char *algos[] = {"naive", "convergent"};
	for (int a = 0; a < 2; a++) {
		lm_kernel_opts o;
		lm_kernel_opts_init(&o);
		o.backend = "emu";
		o.algo = algos[a];
		o.block = 1024;
		lm_kernel_info *info = NULL;
		assert_int_equal(lm_kernel_reduce(x, &o, &y, &info), LM_OK);
		eff[a] = kt_counter(info, "simd_efficiency");
		div[a] = kt_counter(info, "divergent_branches");
		lm_kernel_info_free(info);
		lm_tensor_release(y);
	}
	assert_true(eff[0] < 0.6 && eff[1] > 0.9);
	/* naive: strides 1, 2, 4, 8, 16 split every active warp (32 + 32 + 32 + 32 + 32), 32 and
	 * up leave single-lane warps (no split among the warps that issue: all others idle) */
	assert_true(div[0] > 4 * div[1]);
	lm_tensor_release(x);
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	KT_EXPECT_ERROR(lm_kernel_divergence(&o, &y, &info), LM_ERR_UNSUPPORTED,
	                "kernels.divergence: there is no cpu run of this pattern");
	lm_kernel_opts_init(&o);
	o.pattern = "zigzag";
	KT_EXPECT_ERROR(lm_kernel_divergence(&o, &y, &info), LM_ERR_ARG,
	                "unknown pattern 'zigzag' (expected 'even-odd', 'half-warp', 'data', 'warp' or 'none')");
	lm_kernel_opts_init(&o);
	o.warps = -2;
	KT_EXPECT_ERROR(lm_kernel_divergence(&o, &y, &info), LM_ERR_ARG, "warps -2 must be in 1..4096");
	lm_kernel_opts_init(&o);
	o.block = 48;
	KT_EXPECT_ERROR(lm_kernel_divergence(&o, &y, &info), LM_ERR_ARG, "block 48 must be a multiple of 32");
	if (!lm_cuda_is_available()) {
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		KT_EXPECT_ERROR(lm_kernel_divergence(&o, &y, &info), LM_ERR_DEVICE,
		                "kernels.divergence: backend 'cuda' is not available");
		lm_kernel_opts_init(&o); /* auto: emu without a GPU */
		assert_int_equal(lm_kernel_divergence(&o, &y, &info), LM_OK);
		assert_string_equal(lm_kernel_info_source(info), "emu");
		lm_kernel_info_free(info);
		lm_tensor_release(y);
	} else {
		for (int p = 0; p < 5; p++) {
			const char *pats[] = {"even-odd", "half-warp", "data", "warp", "none"};
			lm_kernel_info_free(demo("cuda", pats[p], 64, 256, NULL));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_efficiency),
		cmocka_unit_test(test_trace_masks),
		cmocka_unit_test(test_reduction_divergence),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
