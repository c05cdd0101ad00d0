/*
 * test_histogram.c — kernels.histogram: every variant on every available run equals the
 * sequential count (uint8 and int32 bin indices, bytes binned as b * bins / 256; ragged sizes,
 * one element, bins 1 and 4096, all-equal input); the counters the lecture reads (one global
 * atomic per element for v1, at most bins x blocks for v2, fewer for v3 on runs, conflicts and
 * their serialised cycles); bad input. Every case of the correctness tests runs on contiguous,
 * transposed and narrowed inputs (ktest.h: kt_layout).
 */
#include "ktest.h"

static const char *const algos[] = {"global-atomic", "privatized", "aggregated"};

/* The element values of x as int64. */
static int64_t at(const lm_tensor *x, int64_t i)
{
	const void *d = lm_tensor_data(x);
	return lm_tensor_dtype(x) == LM_UINT8 ? ((const uint8_t *)d)[i] : ((const int32_t *)d)[i];
}

static void expect_counts(const lm_tensor *y, const int64_t *want, int64_t bins, const char *what)
{
	assert_int_equal(lm_tensor_dtype(y), LM_INT64);
	assert_int_equal(lm_tensor_numel(y), bins);
	const int64_t *got = lm_tensor_data(y);
	for (int64_t b = 0; b < bins; b++)
		if (got[b] != want[b])
			fail_msg("%s: bin %lld has %lld, expected %lld", what, (long long)b, (long long)got[b],
			         (long long)want[b]);
}

static lm_kernel_opts opts(const char *backend, const char *algo, int64_t block, int64_t coarsen)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.block = block;
	o.coarsen = coarsen;
	o.repeats = 1;
	return o;
}

/* Runs one case on a tensor of bin indices and checks the counts; returns the info. */
static lm_kernel_info *hist(const char *backend, const char *algo, const lm_tensor *x, int64_t bins,
                            int64_t block, int64_t coarsen)
{
	lm_kernel_opts o = opts(backend, algo, block, coarsen);
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	if (lm_kernel_histogram(x, bins, &o, &y, &info) != LM_OK)
		fail_msg("%s %s n=%lld bins=%lld: %s", backend, algo, (long long)lm_tensor_numel(x),
		         (long long)bins, lm_last_error());
	int64_t *want = calloc((size_t)bins, sizeof *want);
	lm_tensor *xc = lm_contiguous(x); /* the reference reads it in order */
	for (int64_t i = 0; i < lm_tensor_numel(xc); i++) want[at(xc, i)]++;
	lm_tensor_release(xc);
	char what[160];
	snprintf(what, sizeof what, "%s %s %s n=%lld bins=%lld block=%lld", backend, algo,
	         lm_dtype_name(lm_tensor_dtype(x)), (long long)lm_tensor_numel(x), (long long)bins,
	         (long long)block);
	expect_counts(y, want, bins, what);
	free(want);
	lm_tensor_release(y);
	return info;
}

/* One case on each layout of the input (kt_layout). */
static void check(const char *backend, const char *algo, int64_t n, int64_t bins, lm_dtype dt,
                  int64_t block)
{
	lm_tensor *x = kt_ints(n, dt, 0, (int)(dt == LM_UINT8 && bins > 256 ? 256 : bins));
	for (int layout = 0; layout < KT_LAYOUTS; layout++) {
		lm_tensor *xl = kt_layout(x, layout);
		lm_kernel_info_free(hist(backend, algo, xl, bins, block, 0));
		lm_tensor_release(xl);
	}
	lm_tensor_release(x);
}

/* Bytes of a text: byte b counts in bin b * bins / 256. */
static void check_bytes(const char *backend, const char *algo, int64_t n, int64_t bins)
{
	unsigned char *text = malloc((size_t)n);
	for (int64_t i = 0; i < n; i++) text[i] = (unsigned char)((i * 131 + i / 7) & 255);
	lm_kernel_opts o = opts(backend, algo, 0, 0);
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	if (lm_kernel_histogram_bytes(text, n, bins, &o, &y, &info) != LM_OK)
		fail_msg("bytes %s %s: %s", backend, algo, lm_last_error());
	int64_t *want = calloc((size_t)bins, sizeof *want);
	for (int64_t i = 0; i < n; i++) want[text[i] * bins / 256]++;
	expect_counts(y, want, bins, "bytes");
	free(want);
	free(text);
	lm_tensor_release(y);
	lm_kernel_info_free(info);
}

static void test_emu(void **state)
{
	(void)state;
	for (int a = 0; a < 3; a++) {
		check("emu", algos[a], 1, 1, LM_UINT8, 0);
		check("emu", algos[a], 1000, 1, LM_INT32, 64);
		check("emu", algos[a], 777, 256, LM_UINT8, 100); /* ragged: not a multiple of the block */
		check("emu", algos[a], 3001, 4096, LM_INT32, 128);
		check("emu", algos[a], 2049, 37, LM_INT32, 1024);
		check("emu", algos[a], 65, 7, LM_UINT8, 1);
		check_bytes("emu", algos[a], 999, 10);
		check_bytes("emu", algos[a], 300, 4096);
	}
	/* all-equal input */
	lm_tensor *x = lm_full(1, (int64_t[]){1000}, LM_INT32, 5);
	for (int a = 0; a < 3; a++) lm_kernel_info_free(hist("emu", algos[a], x, 6, 256, 0));
	lm_tensor_release(x);
}

static void test_cpu(void **state)
{
	(void)state;
	int64_t sizes[] = {1, 15, 16, 17, 1000, (1 << 20) + 3, (3 << 20) + 17};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		check("cpu", "privatized", sizes[s], 256, LM_UINT8, 0);
		check("cpu", "aggregated", sizes[s], 4096, LM_INT32, 0);
		check("cpu", "global-atomic", sizes[s], 1, LM_INT32, 0);
		check("cpu", "privatized", sizes[s], 100, LM_UINT8, 0);
		check_bytes("cpu", "privatized", sizes[s], 33);
	}
	check("cpu", "privatized", 5000, 1024, LM_INT32, 0);
	lm_tensor *x = lm_full(1, (int64_t[]){100000}, LM_UINT8, 255);
	lm_kernel_info_free(hist("cpu", "privatized", x, 256, 0, 0));
	lm_tensor_release(x);
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) {
		lm_tensor *x = kt_ints(10, LM_UINT8, 0, 4), *y = NULL;
		lm_kernel_info *info = NULL;
		lm_kernel_opts o = opts("cuda", NULL, 0, 0);
		KT_EXPECT_ERROR(lm_kernel_histogram(x, 4, &o, &y, &info), LM_ERR_DEVICE,
		                "kernels.histogram: backend 'cuda' is not available: ");
		lm_tensor_release(x);
		return;
	}
	for (int a = 0; a < 3; a++) {
		check("cuda", algos[a], 1, 1, LM_UINT8, 0);
		check("cuda", algos[a], 1000003, 256, LM_UINT8, 256);
		check("cuda", algos[a], 100001, 4096, LM_INT32, 1024);
		check("cuda", algos[a], 4097, 3, LM_INT32, 33);
		check_bytes("cuda", algos[a], 100000, 50);
	}
}

/* The lecture's numbers, counted from the trace. */
static void test_counters(void **state)
{
	(void)state;
	const int64_t n = 4096, bins = 64, block = 256;
	lm_tensor *x = kt_ints(n, LM_INT32, 0, (int)bins);
	/* v1: one global atomic per element, none in shared memory */
	lm_kernel_info *v1 = hist("emu", "global-atomic", x, bins, block, 0);
	assert_int_equal(kt_counter(v1, "atomics"), n);
	assert_int_equal(kt_counter(v1, "shared_atomics"), 0);
	assert_true(kt_counter(v1, "conflicts") > 0); /* 256 threads of a block into 64 bins */
	/* v2: the same in shared memory, and at most bins x blocks global atomics to merge */
	lm_kernel_info *v2 = hist("emu", "privatized", x, bins, block, 0);
	int64_t blocks = n / block;
	assert_int_equal(kt_counter(v2, "shared_atomics"), n);
	assert_true(kt_counter(v2, "atomics") <= bins * blocks);
	assert_true(kt_counter(v2, "atomics") >= bins); /* every bin is hit somewhere */
	assert_true(kt_counter(v2, "shared_conflicts") > 0);
	assert_true(kt_counter(v2, "modelled_cycles") < kt_counter(v1, "modelled_cycles"));
	lm_kernel_info_free(v1);
	lm_kernel_info_free(v2);
	lm_tensor_release(x);

	/* v3 on run-heavy input (runs of 50 equal values): far fewer atomics than v2 */
	lm_tensor *runs = lm_empty(1, &n, LM_INT32);
	for (int64_t i = 0; i < n; i++) ((int32_t *)lm_tensor_data(runs))[i] = (int32_t)(i / 50 % bins);
	v2 = hist("emu", "privatized", runs, bins, block, 8);
	lm_kernel_info *v3 = hist("emu", "aggregated", runs, bins, block, 8);
	double a2 = kt_counter(v2, "shared_atomics"), a3 = kt_counter(v3, "shared_atomics");
	assert_int_equal(a2, n);
	assert_true(a3 * 4 < a2);
	assert_int_equal(kt_counter(v3, "coarsen"), 8);
	lm_kernel_info_free(v2);
	lm_kernel_info_free(v3);
	lm_tensor_release(runs);

	/* all-equal input: every atomic of a block queues behind the others of its step */
	lm_tensor *same = lm_full(1, (int64_t[]){256}, LM_INT32, 3);
	lm_tensor *spread = lm_arange(0, 256, 1, LM_INT32);
	lm_kernel_info *hot = hist("emu", "global-atomic", same, 256, 256, 0);
	lm_kernel_info *cold = hist("emu", "global-atomic", spread, 256, 256, 0);
	assert_int_equal(kt_counter(hot, "conflicts"), 256);
	assert_int_equal(kt_counter(cold, "conflicts"), 0);
	/* 8 warps, each of whose atomics waits for all the earlier ones: the last issues after 255 */
	assert_true(kt_counter(hot, "modelled_cycles") > 100 * kt_counter(cold, "modelled_cycles") / 2);
	lm_trace *t = lm_kernel_info_trace(hot);
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	f.kind = LM_TRACE_ATOMIC;
	int64_t last = -1;
	for (int64_t i = lm_trace_find(t, &f, 0); i >= 0; i = lm_trace_find(t, &f, i + 1)) last = i;
	assert_int_equal(lm_trace_event_get(t, last)->aux, 255); /* its place in the queue */
	lm_kernel_info_free(hot);
	lm_kernel_info_free(cold);
	lm_tensor_release(same);
	lm_tensor_release(spread);
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *x = kt_ints(100, LM_UINT8, 0, 4), *y = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o = opts("emu", NULL, 0, 0);
	KT_EXPECT_ERROR(lm_kernel_histogram(x, 0, &o, &y, &info), LM_ERR_ARG,
	                "kernels.histogram: bins 0 must be in 1..4096");
	KT_EXPECT_ERROR(lm_kernel_histogram(x, 4097, &o, &y, &info), LM_ERR_ARG, "bins 4097 must be in 1..4096");
	KT_EXPECT_ERROR(lm_kernel_histogram(x, -3, &o, &y, &info), LM_ERR_ARG, "bins -3");
	KT_EXPECT_ERROR(lm_kernel_histogram_bytes("abc", 3, 5000, &o, &y, &info), LM_ERR_ARG, "bins 5000");
	KT_EXPECT_ERROR(lm_kernel_histogram_bytes("", 0, 5, &o, &y, &info), LM_ERR_ARG, "the input is empty");
	((uint8_t *)lm_tensor_data(x))[42] = 9;
	KT_EXPECT_ERROR(lm_kernel_histogram(x, 4, &o, &y, &info), LM_ERR_INDEX,
	                "kernels.histogram: element 42 (0-based) is 9, not a bin index in 0..3 (bins 4)");
	lm_tensor *neg = lm_full(1, (int64_t[]){3}, LM_INT32, -1);
	KT_EXPECT_ERROR(lm_kernel_histogram(neg, 4, &o, &y, &info), LM_ERR_INDEX, "element 0 (0-based) is -1");
	lm_tensor *f = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32);
	KT_EXPECT_ERROR(lm_kernel_histogram(f, 4, &o, &y, &info), LM_ERR_DTYPE,
	                "the input has dtype float32; give uint8 or int32 bin indices");
	lm_tensor *e = lm_zeros(1, (int64_t[]){0}, LM_UINT8);
	KT_EXPECT_ERROR(lm_kernel_histogram(e, 4, &o, &y, &info), LM_ERR_ARG, "the input is empty");
	o.algo = "sorted";
	KT_EXPECT_ERROR(lm_kernel_histogram(neg, 4, &o, &y, &info), LM_ERR_ARG,
	                "unknown algo 'sorted' (expected 'global-atomic', 'privatized' or 'aggregated')");
	o = opts("emu", NULL, 2000, 0);
	KT_EXPECT_ERROR(lm_kernel_histogram(x, 10, &o, &y, &info), LM_ERR_ARG, "block 2000 exceeds the limit");
	assert_null(y);
	assert_null(info);
	lm_tensor_release(x);
	lm_tensor_release(neg);
	lm_tensor_release(f);
	lm_tensor_release(e);
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
