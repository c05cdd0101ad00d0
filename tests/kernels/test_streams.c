/*
 * test_streams.c — kernels.streams: the vector add is right in every segment; in the model the
 * overlapped schedule beats the serial one, one segment cannot overlap, two copy engines beat one,
 * the spans of the timeline obey the streams' order and the engines' exclusivity; a GPU run when
 * present; bad input.
 */
#include "ktest.h"

static lm_kernel_info *streams(const char *backend, int64_t segments, int64_t bytes, int64_t engines,
                               double gbps)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.segments = segments;
	o.bytes = bytes;
	o.copy_engines = engines;
	o.pcie_gbps = gbps;
	lm_tensor *c = NULL;
	lm_kernel_info *info = NULL;
	if (lm_kernel_streams(&o, &c, &info) != LM_OK)
		fail_msg("%s %lld segments %lld bytes: %s", backend, (long long)segments, (long long)bytes,
		         lm_last_error());
	int64_t n = lm_tensor_numel(c);
	for (int64_t i = 0; i < n; i++)
		if (kt_get(c, i) != (double)(i % 1000) + (double)(i % 7) - 3)
			fail_msg("%s: C[%lld] = %g", backend, (long long)i, kt_get(c, i));
	lm_tensor_release(c);
	return info;
}

static void spans_ok(const lm_kernel_info *info, int segments)
{
	assert_int_equal(lm_kernel_info_span_count(info), 2 * 3 * segments);
	double t = 0;
	for (int i = 0; i < lm_kernel_info_span_count(info); i++) {
		lm_kernel_span s;
		assert_int_equal(lm_kernel_info_span_get(info, i, &s), LM_OK);
		assert_true(s.end_ms >= s.start_ms);
		if (strcmp(s.schedule, "serial") == 0) { /* one after the other, no gaps */
			assert_true(fabs(s.start_ms - t) < 1e-9);
			t = s.end_ms;
			assert_int_equal(s.stream, 0);
		} else {
			assert_int_equal(s.stream, s.segment);
		}
	}
	/* overlapped: in each stream, h2d -> kernel -> d2h; on each track, no two spans overlap */
	lm_kernel_span all[6 * 64];
	int n = 0;
	for (int i = 0; i < lm_kernel_info_span_count(info); i++) {
		lm_kernel_info_span_get(info, i, &all[n]);
		if (strcmp(all[n].schedule, "overlapped") == 0) n++;
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			if (i == j) continue;
			if (all[i].segment == all[j].segment && strcmp(all[i].op, "h2d") == 0 &&
			    strcmp(all[j].op, "kernel") == 0)
				assert_true(all[j].start_ms >= all[i].end_ms - 1e-12);
			if (strcmp(all[i].track, all[j].track) == 0)
				assert_true(all[i].end_ms <= all[j].start_ms + 1e-12 ||
				            all[j].end_ms <= all[i].start_ms + 1e-12);
		}
}

static void test_model(void **state)
{
	(void)state;
	lm_kernel_info *one = streams("emu", 1, 1 << 14, 0, 0);
	assert_true(fabs(kt_counter(one, "speedup") - 1) < 1e-12); /* nothing to overlap */
	spans_ok(one, 1);
	lm_kernel_info *four = streams("emu", 4, 1 << 18, 0, 0);
	double ser = kt_counter(four, "serial_ms"), ovl = kt_counter(four, "overlapped_ms");
	assert_true(ovl < ser);
	/* the copies dominate (2 x 64 KiB in, 64 KiB out per segment at 25 GB/s, the kernel ~1 us):
	 * overlapped, the host-to-device engine is the bottleneck, so the bound is about
	 * (h2d + kernel + d2h) / (h2d + (kernel + d2h) / 4) = 1.4 */
	assert_true(kt_counter(four, "speedup") > 1.3);
	assert_true(ovl >= kt_counter(four, "h2d_ms") - 1e-12);
	assert_true(fabs(ser - kt_counter(four, "h2d_ms") - kt_counter(four, "kernel_ms") -
	                 kt_counter(four, "d2h_ms")) < 1e-9);
	assert_int_equal(kt_counter(four, "launches"), 4);
	assert_int_equal(kt_counter(four, "pcie_gbps"), 25);
	assert_int_equal(kt_counter(four, "copy_engines"), 2);
	/* 256 KiB of A and of B at 25 GB/s */
	assert_true(fabs(kt_counter(four, "h2d_ms") - 2.0 * 262144 / 25e6) < 1e-12);
	spans_ok(four, 4);
	lm_kernel_info *single = streams("emu", 4, 1 << 18, 1, 0);
	assert_true(kt_counter(single, "overlapped_ms") >= ovl);
	assert_true(kt_counter(single, "overlapped_ms") < ser);
	spans_ok(single, 4);
	/* finer segments overlap more; the copies stay the same, but each smaller kernel has fewer
	 * warps per SM to hide its memory latency (16 blocks of 256 threads on 8 SMs: two each), so
	 * the kernels take longer in all */
	lm_kernel_info *many = streams("emu", 16, 1 << 18, 0, 0);
	assert_true(kt_counter(many, "overlapped_ms") < ovl);
	assert_true(fabs(kt_counter(many, "h2d_ms") - kt_counter(four, "h2d_ms")) < 1e-12);
	assert_true(kt_counter(many, "kernel_ms") > kt_counter(four, "kernel_ms"));
	lm_kernel_info *slow = streams("emu", 4, 1 << 18, 0, 5);
	assert_true(kt_counter(slow, "h2d_ms") > 4.9 * kt_counter(four, "h2d_ms"));
	lm_kernel_info *ragged = streams("emu", 3, 4 * 1001, 0, 0);
	spans_ok(ragged, 3);
	lm_kernel_info *list[] = {one, four, single, many, slow, ragged};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_kernel_info_free(list[i]);
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) {
		lm_kernel_opts o;
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		lm_tensor *c = NULL;
		lm_kernel_info *info = NULL;
		KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_DEVICE,
		                "kernels.streams: backend 'cuda' is not available");
		return;
	}
	lm_kernel_info *info = streams("cuda", 8, 1 << 24, 0, 0);
	assert_true(kt_counter(info, "serial_ms") > 0 && kt_counter(info, "overlapped_ms") > 0);
	assert_int_equal(kt_counter(info, "pinned"), 1);
	assert_int_equal(lm_kernel_info_span_count(info), 48);
	lm_kernel_info_free(info);
	lm_kernel_info_free(streams("cuda", 3, 4 * 1001, 0, 0));
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *c = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.segments = -1;
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_ARG,
	                "kernels.streams: segments -1 must be in 1..255");
	o.segments = 256;
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_ARG, "segments 256 must be in 1..255");
	o.segments = 4;
	o.bytes = 10;
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_ARG,
	                "bytes 10 must be a multiple of 4 (float32 vectors), at least 4 per segment");
	o.bytes = 12;
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_ARG, "bytes 12 must be");
	o.bytes = 0;
	o.copy_engines = 3;
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_ARG, "copy_engines 3 must be 1 or 2");
	o.copy_engines = 0;
	o.pcie_gbps = -5;
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_ARG, "pcie_gbps -5 must be in (0, 1e6]");
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	KT_EXPECT_ERROR(lm_kernel_streams(&o, &c, &info), LM_ERR_UNSUPPORTED, "there is no cpu run");
	assert_null(c);
	assert_null(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_cuda_when_present),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
