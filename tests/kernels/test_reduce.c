/*
 * test_reduce.c — kernels.reduce: every variant on every available run equals the sequential sum,
 * for every power-of-two block and ragged lengths; the counters the lecture reads (adds, steps,
 * one atomic per block, the divergence of the naive version); bad input. Every case of the
 * correctness tests runs on contiguous, transposed and narrowed inputs (ktest.h: kt_layout).
 */
#include "kernels/cpu_kernels.h" /* lmi_cache_lines_flushed */
#include "kernels/patterns.h"    /* lmi_time_median */
#include "ktest.h"

static const char *const algos[] = {"naive", "convergent", "shared", "coarsened"};

static lm_kernel_info *reduce(const char *backend, const char *algo, lm_tensor *x, int64_t block,
                              int64_t coarsen)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.block = block;
	o.coarsen = coarsen;
	o.repeats = 1;
	lm_tensor *y = NULL;
	lm_kernel_info *info = NULL;
	if (lm_kernel_reduce(x, &o, &y, &info) != LM_OK)
		fail_msg("%s %s n=%lld block=%lld: %s", backend, algo, (long long)lm_tensor_numel(x),
		         (long long)block, lm_last_error());
	assert_int_equal(lm_tensor_ndim(y), 0);
	assert_int_equal(lm_tensor_dtype(y), lm_tensor_dtype(x));
	lm_tensor *xc = lm_contiguous(x); /* the reference reads it in order */
	double got = kt_get(y, 0), want = kt_sum(xc);
	lm_tensor_release(xc);
	if (got != want)
		fail_msg("%s %s %s n=%lld block=%lld: %g, expected %g", backend, algo,
		         lm_dtype_name(lm_tensor_dtype(x)), (long long)lm_tensor_numel(x), (long long)block,
		         got, want);
	lm_tensor_release(y);
	return info;
}

/* One case on each layout of the input (kt_layout). */
static void check(const char *backend, const char *algo, int64_t n, int64_t block, lm_dtype dt)
{
	lm_tensor *x = kt_ints(n, dt, -3, 5);
	for (int layout = 0; layout < KT_LAYOUTS; layout++) {
		lm_tensor *xl = kt_layout(x, layout);
		lm_kernel_info_free(reduce(backend, algo, xl, block, 0));
		lm_tensor_release(xl);
	}
	lm_tensor_release(x);
}

static void test_emu_every_block(void **state)
{
	(void)state;
	for (int a = 0; a < 4; a++)
		for (int64_t b = 1; b <= 1024; b *= 2) {
			int64_t segment = 2 * b * (a == 3 ? 4 : 1);
			check("emu", algos[a], 1, b, LM_FLOAT32);
			check("emu", algos[a], segment + 5, b, a % 2 ? LM_FLOAT64 : LM_FLOAT32);
		}
	check("emu", "shared", 10000, 0, LM_FLOAT64);
	check("emu", "coarsened", 3333, 16, LM_FLOAT32);
}

static void test_cpu(void **state)
{
	(void)state;
	int64_t sizes[] = {1, 3, 1000, 65537, (1 << 21) + 7};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		check("cpu", "shared", sizes[s], 0, LM_FLOAT32);
		check("cpu", "naive", sizes[s], 0, LM_FLOAT64);
	}
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) {
		lm_tensor *x = kt_ints(10, LM_FLOAT32, 0, 4), *y = NULL;
		lm_kernel_info *info = NULL;
		lm_kernel_opts o;
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		KT_EXPECT_ERROR(lm_kernel_reduce(x, &o, &y, &info), LM_ERR_DEVICE,
		                "kernels.reduce: backend 'cuda' is not available: ");
		lm_tensor_release(x);
		return;
	}
	for (int a = 0; a < 4; a++)
		for (int64_t b = 1; b <= 1024; b *= 2) {
			check("cuda", algos[a], 1, b, LM_FLOAT32);
			check("cuda", algos[a], 1000003, b, LM_FLOAT32);
			check("cuda", algos[a], 4097, b, LM_FLOAT64);
		}
}

static void test_counters(void **state)
{
	(void)state;
	/* one block of 512 threads over 1024 elements: a tree of log2(1024) = 10 steps, n - 1 adds,
	 * one atomic into the output */
	lm_tensor *x = kt_ints(1024, LM_FLOAT32, 0, 4);
	double eff[2];
	for (int a = 0; a < 3; a++) {
		lm_kernel_info *info = reduce("emu", algos[a], x, 512, 0);
		assert_int_equal(kt_counter(info, "adds"), 1023);
		assert_int_equal(kt_counter(info, "steps"), 10);
		assert_int_equal(kt_counter(info, "atomics"), 1);
		assert_int_equal(kt_counter(info, "conflicts"), 0);
		if (a < 2) eff[a] = kt_counter(info, "simd_efficiency");
		if (a == 2) { /* shared memory: each element read once from global memory */
			assert_int_equal(kt_counter(info, "global_loads"), 1024);
			assert_true(kt_counter(info, "shared_loads") > 0);
		} else {
			assert_int_equal(kt_counter(info, "shared_loads"), 0);
		}
		lm_kernel_info_free(info);
	}
	/* the naive version keeps whole warps issuing for a few active lanes */
	assert_true(eff[0] < 0.6);
	assert_true(eff[1] > 0.9);
	lm_tensor_release(x);

	/* many blocks: one atomic per block, all on output[0] (different blocks: no conflict) */
	x = kt_ints(10000, LM_FLOAT32, 0, 4);
	lm_kernel_info *info = reduce("emu", "coarsened", x, 64, 2);
	assert_int_equal(kt_counter(info, "atomics"), (10000 + 255) / 256);
	/* segments of 2 * 2 * 64 = 256: 39 full blocks (64 threads x 3 serial adds + a 63-add tree)
	 * and one of 16 elements (15 adds of data; the tree's other 48 add padding: idle lanes) */
	assert_int_equal(kt_counter(info, "adds"), 39 * (64 * 3 + 63) + 15);
	assert_int_equal(kt_counter(info, "idle_lanes"), 63 - 15);
	/* a thread's 3 serial adds, then the tree of log2(64) steps */
	assert_int_equal(kt_counter(info, "steps"), 3 + 6);
	assert_int_equal(kt_counter(info, "conflicts"), 0);
	lm_kernel_info_free(info);
	lm_tensor_release(x);
}

/* The timing of measured runs: a warm-up, then each timed run after the operands were flushed
 * from the caches, so that GB/s of an input smaller than the caches is memory bandwidth. */
typedef struct timed {
	int runs, colds, cold_before_run; /* cold_before_run: every timed run followed a flush */
} timed;

static int timed_run(void *p)
{
	timed *t = p;
	if (t->runs > 0 && t->colds != t->runs) t->cold_before_run = 0;
	t->runs++;
	return 0;
}

static void timed_cold(void *p) { ((timed *)p)->colds++; }

static void test_timing_starts_cold(void **state)
{
	(void)state;
	timed t = {0, 0, 1};
	double ms = -1;
	assert_int_equal(lmi_time_median("test", 4, timed_run, timed_cold, &t, &ms), LM_OK);
	assert_int_equal(t.runs, 5); /* the warm-up, then 4 */
	assert_int_equal(t.colds, 4);
	assert_true(t.cold_before_run && ms >= 0);
	/* a cpu run flushes every operand before each timed run: here 1 MiB of input, the output */
	int64_t n = 1 << 18, before = lmi_cache_lines_flushed();
	lm_tensor *x = kt_ints(n, LM_FLOAT32, 0, 4);
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	o.repeats = 3;
	lm_tensor *y;
	lm_kernel_info *info;
	assert_int_equal(lm_kernel_reduce(x, &o, &y, &info), LM_OK);
	int64_t flushed = lmi_cache_lines_flushed() - before;
#if defined(__x86_64__) || defined(__i386__)
	assert_true(flushed >= 3 * (n * 4 / 64 + 1));
	assert_true(flushed < 4 * (n * 4 / 64 + 1) + 3 * 4096); /* the operands, not more */
#else
	assert_int_equal(flushed, 0); /* no flush instruction for programs: docs/trace.md says so */
#endif
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *x = kt_ints(100, LM_FLOAT32, 0, 4), *y = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.algo = "tree";
	KT_EXPECT_ERROR(lm_kernel_reduce(x, &o, &y, &info), LM_ERR_ARG,
	                "kernels.reduce: unknown algo 'tree' (expected 'naive', 'convergent', 'shared' "
	                "or 'coarsened')");
	lm_kernel_opts_init(&o);
	o.block = 3;
	KT_EXPECT_ERROR(lm_kernel_reduce(x, &o, &y, &info), LM_ERR_ARG, "block 3 is not a power of two");
	lm_kernel_opts_init(&o);
	o.algo = "coarsened";
	o.coarsen = 2000;
	KT_EXPECT_ERROR(lm_kernel_reduce(x, &o, &y, &info), LM_ERR_ARG, "coarsen 2000 must be in 1..1024");
	lm_tensor *u = kt_ints(10, LM_UINT8, 0, 4);
	lm_kernel_opts_init(&o);
	KT_EXPECT_ERROR(lm_kernel_reduce(u, &o, &y, &info), LM_ERR_DTYPE, "the input has dtype uint8");
	assert_null(y);
	assert_null(info);
	lm_tensor_release(u);
	lm_tensor_release(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_every_block),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_cuda_when_present),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_timing_starts_cold),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
