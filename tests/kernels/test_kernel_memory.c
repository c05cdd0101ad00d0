/*
 * test_kernel_memory.c — the kernels leak nothing: every call, successful or failing (bad input,
 * a kernel fault inside the emulator, an allocation that fails at any point), leaves the counting
 * allocator's live bytes where they were; for the patterns of kernels II too (sparse matrices,
 * timelines, constant memory).
 */
#include "ktest.h"

static size_t live(void)
{
	lm_memory_stats s;
	lm_memory_stats_get(&s);
	return s.live_bytes;
}

static lm_status run(const char *pattern, const char *backend, const char *algo, lm_tensor *x,
                     int64_t block)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.block = block;
	o.repeats = 1;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	lm_status st = strcmp(pattern, "scan") == 0 ? lm_kernel_scan(x, &o, &y, &info)
	                                            : lm_kernel_reduce(x, &o, &y, &info);
	if (st == LM_OK) {
		assert_non_null(y);
		assert_non_null(info);
	} else {
		assert_null(y);
		assert_null(info);
	}
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	return st;
}

static void test_no_leaks(void **state)
{
	(void)state;
	lm_tensor *x = kt_ints(1000, LM_FLOAT32, 0, 4);
	size_t before = live();
	assert_int_equal(run("scan", "emu", "hierarchical", x, 8), LM_OK);
	assert_int_equal(run("scan", "cpu", "kogge-stone", x, 8), LM_OK);
	assert_int_equal(run("reduce", "emu", "naive", x, 8), LM_OK);
	assert_int_equal(run("scan", "emu", "nonsense", x, 8), LM_ERR_ARG);
	assert_int_equal(live(), before);
	lm_tensor_release(x);
}

static uint64_t allocs(void)
{
	lm_memory_stats s;
	lm_memory_stats_get(&s);
	return s.allocs;
}

/* Fails the k-th allocation for every k a successful call makes: each call either succeeds
 * (a trace that cannot grow is truncated, not an error) or fails with LM_ERR_NOMEM, and nothing
 * leaks either way. */
static void sweep(const char *pattern, const char *backend, const char *algo, int64_t block)
{
	lm_tensor *x = kt_ints(700, LM_FLOAT64, 0, 4);
	size_t before = live();
	uint64_t a0 = allocs();
	assert_int_equal(run(pattern, backend, algo, x, block), LM_OK);
	uint64_t n = allocs() - a0, failed = 0;
	assert_true(n > 0);
	for (uint64_t k = 1; k <= n; k++) {
		lm_memory_fail_after(k);
		lm_status st = run(pattern, backend, algo, x, block);
		lm_memory_fail_after(0);
		if (st != LM_OK && st != LM_ERR_NOMEM)
			fail_msg("%s %s: failing allocation %llu gave %s: %s", pattern, algo,
			         (unsigned long long)k, lm_status_name(st), lm_last_error());
		failed += st == LM_ERR_NOMEM;
		if (st && getenv("KT_VERBOSE") && strstr(lm_last_error(), "events"))
			printf("  %s\n", lm_last_error());
		if (live() != before)
			fail_msg("%s %s: failing allocation %llu leaked %zd bytes", pattern, algo,
			         (unsigned long long)k, (ssize_t)(live() - before));
	}
	if (getenv("KT_VERBOSE"))
		printf("%s %s %s: %llu allocations, %llu failures\n", pattern, backend, algo,
		       (unsigned long long)n, (unsigned long long)failed);
	assert_true(failed > 0);
	lm_tensor_release(x);
}

static void test_allocation_failures(void **state)
{
	(void)state;
	sweep("scan", "emu", "hierarchical", 8);
	sweep("scan", "emu", "kogge-stone", 8);
	sweep("reduce", "emu", "naive", 1024); /* the event buffer grows inside a fibre */
	sweep("reduce", "emu", "convergent", 8);
	sweep("scan", "cpu", "brent-kung", 8);
	sweep("reduce", "cpu", "shared", 8);
}

/* ---------------------------------------------------------------- kernels II */

typedef struct inputs {
	lm_tensor *u8, *i32, *a, *b, *img, *mask, *rows, *cols, *vals, *x;
} inputs;

/* One call of a pattern of kernels II (by number), its results freed; the status. */
static lm_status call_two(int which, const inputs *in)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.repeats = 1;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	lm_status st = LM_OK;
	lm_sparse *A = NULL;
	switch (which) {
	case 0: o.algo = "privatized"; st = lm_kernel_histogram(in->u8, 16, &o, &y, &info); break;
	case 1:
		o.algo = "aggregated";
		st = lm_kernel_histogram_bytes("aaaabbbbccccdddd", 16, 4, &o, &y, &info);
		break;
	case 2: o.backend = "cpu"; st = lm_kernel_histogram(in->i32, 100, &o, &y, &info); break;
	case 3: o.algo = "tiled"; o.tile = 4; st = lm_kernel_matmul(in->a, in->b, &o, &y, &info); break;
	case 4: o.algo = "tiled-output"; o.tile = 4; st = lm_kernel_conv2d(in->img, in->mask, &o, &y, &info); break;
	case 5: o.algo = "constant"; st = lm_kernel_conv2d(in->img, in->mask, &o, &y, &info); break;
	case 6:
		if (!(A = lm_sparse_from_coo(in->rows, in->cols, in->vals, 6, 5, 0))) return lm_last_status();
		o.format = "jds";
		st = lm_kernel_spmv(A, in->x, &o, &y, &info);
		break;
	case 7: o.pattern = "data"; o.warps = 2; st = lm_kernel_divergence(&o, &y, &info); break;
	default: o.segments = 3; o.bytes = 4096; st = lm_kernel_streams(&o, &y, &info); break;
	}
	if (st == LM_OK) {
		assert_non_null(y);
		assert_non_null(info);
	} else {
		assert_null(y);
		assert_null(info);
	}
	lm_sparse_release(A);
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	return st;
}

static void test_allocation_failures_two(void **state)
{
	(void)state;
	int64_t rows[] = {0, 5, 2, 2, 4}, cols[] = {1, 0, 4, 3, 1};
	inputs in = {
		.u8 = kt_ints(300, LM_UINT8, 0, 16),
		.i32 = kt_ints(5000, LM_INT32, 0, 100),
		.a = lm_randint(-3, 4, 2, (int64_t[]){9, 7}, LM_FLOAT32),
		.b = lm_randint(-3, 4, 2, (int64_t[]){7, 5}, LM_FLOAT32),
		.img = lm_randint(-3, 4, 2, (int64_t[]){9, 10}, LM_FLOAT64),
		.mask = lm_randint(-3, 4, 2, (int64_t[]){3, 5}, LM_FLOAT64),
		.rows = lm_from_data(rows, 1, (int64_t[]){5}, LM_INT64),
		.cols = lm_from_data(cols, 1, (int64_t[]){5}, LM_INT64),
		.vals = kt_ints(5, LM_FLOAT32, 1, 4),
		.x = kt_ints(5, LM_FLOAT32, -2, 3),
	};
	for (int which = 0; which < 9; which++) {
		size_t before = live();
		uint64_t a0 = allocs();
		assert_int_equal(call_two(which, &in), LM_OK);
		uint64_t n = allocs() - a0, failed = 0;
		assert_true(n > 0);
		for (uint64_t k = 1; k <= n; k++) {
			lm_memory_fail_after(k);
			lm_status st = call_two(which, &in);
			lm_memory_fail_after(0);
			if (st != LM_OK && st != LM_ERR_NOMEM)
				fail_msg("call %d: failing allocation %llu gave %s: %s", which, (unsigned long long)k,
				         lm_status_name(st), lm_last_error());
			failed += st == LM_ERR_NOMEM;
			if (live() != before)
				fail_msg("call %d: failing allocation %llu leaked %zd bytes", which,
				         (unsigned long long)k, (ssize_t)(live() - before));
		}
		assert_true(failed > 0);
	}
	lm_tensor *list[] = {in.u8, in.i32, in.a, in.b, in.img, in.mask, in.rows, in.cols, in.vals, in.x};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_leaks),
		cmocka_unit_test(test_allocation_failures),
		cmocka_unit_test(test_allocation_failures_two),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
