/*
 * test_parallel.c — the one thread pool, errors from OpenMP workers, and interrupts.
 *
 * OpenBLAS must be the OpenMP build (no start-up warning) and lm_set_num_threads must set both
 * OpenMP's and OpenBLAS's thread counts. A failure raised in a worker thread must reach the
 * calling thread's lm_last_error (the first one wins). lm_interrupt() from another thread stops a
 * long op, which returns LM_ERR_INTERRUPTED and no result; with the flag already set, every
 * Foundation II op stops at its first poll. Nothing leaks either way.
 */
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "core/lmi.h"
#include "testutil.h"

static lm_memory_stats before;

static int setup(void **state)
{
	(void)state;
	lm_interrupt_clear();
	lm_memory_stats_get(&before);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lm_interrupt_clear();
	lm_set_num_threads(0);
	lm_memory_stats after;
	lm_memory_stats_get(&after);
	if (after.live_tensors != before.live_tensors || after.live_bytes != before.live_bytes)
		fail_msg("leak: %lld tensors, %zu bytes live (before: %lld, %zu)",
		         (long long)after.live_tensors, after.live_bytes, (long long)before.live_tensors,
		         before.live_bytes);
	return 0;
}

/* openblas_get_num_threads of the OpenBLAS that Lumen loaded (found in /proc/self/maps). */
static int blas_threads(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024], path[1024] = "";
	while (f && fgets(line, sizeof line, f)) {
		char *p = strchr(line, '/');
		if (p && strstr(p, "libopenblas")) {
			snprintf(path, sizeof path, "%s", p);
			path[strcspn(path, "\n")] = '\0';
			break;
		}
	}
	if (f) fclose(f);
	if (!path[0]) return -1;
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	int (*get)(void) = NULL;
	if (h) *(void **)&get = dlsym(h, "openblas_get_num_threads");
	int n = get ? get() : -2;
	if (h) dlclose(h);
	return n;
}

static void test_one_pool(void **state)
{
	(void)state;
	lm_build_info bi;
	lm_build_info_get(&bi); /* loads OpenBLAS and runs the start-up check */
	assert_string_equal(bi.blas_threading, "openmp");
	assert_null(bi.threading_warning);
	assert_null(lm_threading_warning());
	for (int n = 1; n <= 2; n++) {
		lm_set_num_threads(n);
		assert_int_equal(lm_get_num_threads(), n);
		assert_int_equal(omp_get_max_threads(), n);
		assert_int_equal(blas_threads(), n);
	}
	lm_set_num_threads(0); /* the default: every core */
	assert_int_equal(lm_get_num_threads(), omp_get_num_procs());
	assert_int_equal(blas_threads(), omp_get_num_procs());
}

/* A failure in worker thread 1 reaches thread 0, status and message. */
static void test_worker_error_reaches_caller(void **state)
{
	(void)state;
	lmi_par_err e;
	lmi_par_init(&e);
	int team = 0;
#pragma omp parallel num_threads(2)
	{
#pragma omp single
		team = omp_get_num_threads();
		if (omp_get_thread_num() == 1)
			lmi_par_fail(&e, LM_ERR_INDEX, "worker %d: index %d out of range", omp_get_thread_num(), 42);
	}
	if (team < 2) skip(); /* no second thread on this machine */
	lm_clear_error();
	EXPECT_STATUS(lmi_par_finish(&e), LM_ERR_INDEX, "worker 1: index 42 out of range");
	/* all fail: exactly one message arrives whole, the others are dropped */
	lmi_par_init(&e);
#pragma omp parallel num_threads(2)
	lmi_par_fail(&e, LM_ERR_ARG, "from thread %d of %d", omp_get_thread_num(), omp_get_num_threads());
	assert_int_equal(lmi_par_finish(&e), LM_ERR_ARG);
	assert_true(strcmp(lm_last_error(), "from thread 0 of 2") == 0 ||
	            strcmp(lm_last_error(), "from thread 1 of 2") == 0);
	/* no failure: LM_OK and the caller's error untouched */
	lm_clear_error();
	lmi_par_init(&e);
	assert_int_equal(lmi_par_finish(&e), LM_OK);
	assert_int_equal(lm_last_status(), LM_OK);
}

static void *interrupt_after(void *arg)
{
	struct timespec ts = {0, *(const long *)arg};
	nanosleep(&ts, NULL);
	lm_interrupt();
	return NULL;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * A long sort and a long im2col, interrupted from another thread after 5 ms. The op runs in a
 * loop until it reports the interrupt, so the test does not depend on how fast this machine is:
 * the interrupt lands in some call (usually the first, mid-run), and that call must return
 * LM_ERR_INTERRUPTED and no result.
 */
static void test_interrupt_from_thread(void **state)
{
	(void)state;
	lm_set_num_threads(2);
	lm_manual_seed(1);
	lm_tensor *x = lm_randn(2, (int64_t[]){16, 1 << 18}, LM_FLOAT32);
	lm_tensor *img = lm_randn(4, (int64_t[]){4, 16, 128, 128}, LM_FLOAT32);
	lm_window2d w = {5, 5, 1, 1, 2, 2, 1, 1};
	long delay = 5000000;
	for (int op = 0; op < 2; op++) {
		pthread_t th;
		pthread_create(&th, NULL, interrupt_after, &delay);
		double t0 = now(), t1 = t0;
		lm_status s = LM_OK;
		int calls = 0;
		while (s == LM_OK && now() - t0 < 10) {
			lm_tensor *v = NULL, *ix = NULL, *c = NULL;
			t1 = now();
			s = op == 0 ? lm_sort(x, 1, false, &v, &ix)
			            : ((c = lm_im2col(img, &w)) ? LM_OK : lm_last_status());
			calls++;
			if (s) {
				assert_null(v);
				assert_null(ix);
				assert_null(c);
			}
			lm_tensor_release(v);
			lm_tensor_release(ix);
			lm_tensor_release(c);
		}
		pthread_join(th, NULL);
		assert_int_equal(s, LM_ERR_INTERRUPTED);
		assert_non_null(strstr(lm_last_error(), "interrupted"));
		assert_true(lm_interrupted());
		lm_interrupt_clear();
		print_message("  %s: interrupted in call %d, which stopped after %.1f ms\n",
		              op ? "im2col" : "sort", calls, 1e3 * (now() - t1));
	}
	lm_tensor_release(x);
	lm_tensor_release(img);
}

/* With the flag set, every op returns LM_ERR_INTERRUPTED at its first poll, and no result. */
static void test_interrupt_every_op(void **state)
{
	(void)state;
	int64_t sh[2] = {256, 256};
	lm_tensor *x = lm_ones(2, sh, LM_FLOAT32), *idx = lm_zeros(2, sh, LM_INT64);
	lm_tensor *row = lm_zeros(1, (int64_t[]){256}, LM_INT64), *mask = lm_zeros(2, sh, LM_UINT8);
	lm_tensor *img = lm_ones(4, (int64_t[]){2, 4, 32, 32}, LM_FLOAT32);
	lm_window2d w = {3, 3, 1, 1, 1, 1, 1, 1};
	lm_tensor *cols = lm_im2col(img, &w), *v = NULL, *ix = NULL;
	assert_non_null(cols);
	lm_interrupt();
	EXPECT_NULL(lm_cat(2, (lm_tensor *[]){x, x}, 1), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_NULL(lm_stack(2, (lm_tensor *[]){x, x}, 0), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_NULL(lm_index_select(x, 0, row), LM_ERR_INTERRUPTED, "index_select: interrupted");
	EXPECT_NULL(lm_gather(x, 1, idx), LM_ERR_INTERRUPTED, "gather: interrupted");
	EXPECT_NULL(lm_scatter_add(x, 1, idx, x), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_NULL(lm_masked_fill(x, mask, 2), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_STATUS(lm_sort(x, 1, false, &v, &ix), LM_ERR_INTERRUPTED, "sort: interrupted");
	EXPECT_STATUS(lm_topk(x, 3, 1, true, &v, &ix), LM_ERR_INTERRUPTED, "sort: interrupted");
	assert_null(v);
	assert_null(ix);
	EXPECT_NULL(lm_cumsum(x, 0), LM_ERR_INTERRUPTED, "cumsum: interrupted");
	EXPECT_NULL(lm_tril(x, 0), LM_ERR_INTERRUPTED, "tril: interrupted");
	EXPECT_NULL(lm_one_hot(row, 3), LM_ERR_INTERRUPTED, "one_hot: interrupted");
	EXPECT_NULL(lm_repeat(x, 2, (int64_t[]){2, 2}), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_NULL(lm_flip(x, 1, (int[]){0}), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_NULL(lm_pad(x, 1, (int64_t[]){1, 1}, 0), LM_ERR_INTERRUPTED, "interrupted");
	EXPECT_NULL(lm_im2col(img, &w), LM_ERR_INTERRUPTED, "im2col: interrupted");
	EXPECT_NULL(lm_col2im(cols, 4, 32, 32, &w), LM_ERR_INTERRUPTED, "col2im: interrupted");
	lm_interrupt_clear();
	lm_tensor *ok = lm_cumsum(x, 0); /* cleared: runs again */
	assert_non_null(ok);
	lm_tensor *all[] = {ok, x, idx, row, mask, img, cols};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_pool, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_error_reaches_caller, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupt_from_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupt_every_op, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
