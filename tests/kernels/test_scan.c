/*
 * test_scan.c — kernels.scan: every variant on every available run equals the sequential scan
 * (inputs of small integers, so every order of additions is exact), for lengths that are not
 * multiples of the block, length 1, and every power-of-two block from 1 to 1024; the textbook
 * counts of Kogge-Stone and Brent-Kung come out of the trace; the golden trace of a 16-element
 * Kogge-Stone scan; bad input is refused with messages naming the limit. Every case runs on
 * contiguous, transposed and narrowed inputs (ktest.h: kt_layout).
 */
#include "ktest.h"

static const char *const algos[] = {"kogge-stone", "brent-kung", "hierarchical"};

/* Runs one scan on each layout of the input and checks it against the sequential reference. */
static void check_scan(const char *backend, const char *algo, int64_t n, int64_t block,
                       lm_dtype dt, bool inclusive)
{
	lm_tensor *x = kt_ints(n, dt, -3, 5);
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.block = block;
	o.inclusive = inclusive;
	o.repeats = 1;
	for (int layout = 0; layout < KT_LAYOUTS; layout++) {
		lm_tensor *xl = kt_layout(x, layout), *y = NULL;
		lm_kernel_info *info = NULL;
		if (lm_kernel_scan(xl, &o, &y, &info) != LM_OK)
			fail_msg("%s %s n=%lld block=%lld %s: %s", backend, algo, (long long)n,
			         (long long)block, kt_layout_name[layout], lm_last_error());
		assert_int_equal(lm_tensor_dtype(y), dt);
		assert_int_equal(lm_tensor_numel(y), n);
		int64_t bad = kt_scan_mismatch(x, y, inclusive, 0);
		if (bad >= 0)
			fail_msg("%s %s %s %s n=%lld block=%lld %s: y[%lld] = %g", backend, algo,
			         lm_dtype_name(dt), inclusive ? "inclusive" : "exclusive", (long long)n,
			         (long long)block, kt_layout_name[layout], (long long)bad, kt_get(y, bad));
		assert_string_equal(lm_kernel_info_source(info), backend);
		lm_kernel_info_free(info);
		lm_tensor_release(y);
		lm_tensor_release(xl);
	}
	lm_tensor_release(x);
}

static void test_emu_every_block(void **state)
{
	(void)state;
	for (int a = 0; a < 3; a++)
		for (int64_t b = 1; b <= 1024; b *= 2) {
			int64_t section = a == 1 ? 2 * b : a == 2 ? 4 * b : b;
			check_scan("emu", algos[a], 1, b, LM_FLOAT32, true);
			check_scan("emu", algos[a], section + 3, b, LM_FLOAT32, true); /* ragged, 2 blocks */
		}
}

static void test_emu_many_blocks(void **state)
{
	(void)state;
	/* three levels of block sums: 1000 elements in sections of 4 */
	for (int a = 0; a < 3; a++) {
		check_scan("emu", algos[a], 1000, a == 0 ? 4 : 2, LM_FLOAT32, true);
		check_scan("emu", algos[a], 777, 32, LM_FLOAT64, false);
		check_scan("emu", algos[a], 5000, 0, LM_FLOAT32, false); /* default block */
		check_scan("emu", algos[a], 33, 1, LM_FLOAT64, true);
	}
}

static void test_cpu(void **state)
{
	(void)state;
	int64_t sizes[] = {1, 2, 17, 1000, 65537, (1 << 20) + 3};
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
		for (int incl = 0; incl < 2; incl++) {
			check_scan("cpu", "kogge-stone", sizes[s], 0, LM_FLOAT32, incl);
			check_scan("cpu", "brent-kung", sizes[s], 0, LM_FLOAT64, incl);
		}
}

/* The CPU scan is chained over fixed chunks: the same bits for any number of threads. */
static void test_cpu_same_for_any_threads(void **state)
{
	(void)state;
	int64_t shape[1] = {(1 << 21) + 5};
	int saved = lm_get_num_threads();
	for (int d = 0; d < 2; d++) {
		lm_tensor *x = lm_rand(1, shape, d ? LM_FLOAT64 : LM_FLOAT32), *y[2];
		for (int t = 0; t < 2; t++) {
			lm_set_num_threads(t + 1);
			lm_kernel_info *info;
			lm_kernel_opts o;
			lm_kernel_opts_init(&o);
			o.backend = "cpu";
			o.repeats = 1;
			o.inclusive = d; /* exclusive for float32, inclusive for float64 */
			assert_int_equal(lm_kernel_scan(x, &o, &y[t], &info), LM_OK);
			lm_kernel_info_free(info);
		}
		assert_memory_equal(lm_tensor_data(y[0]), lm_tensor_data(y[1]), lm_tensor_nbytes(y[0]));
		for (int t = 0; t < 2; t++) lm_tensor_release(y[t]);
		lm_tensor_release(x);
	}
	lm_set_num_threads(saved);
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) {
		/* no GPU here: 'cuda' is a clear error, 'auto' picks the CPU */
		lm_tensor *x = kt_ints(10, LM_FLOAT32, 0, 4), *y = NULL;
		lm_kernel_info *info = NULL;
		lm_kernel_opts o;
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		assert_true(strlen(lm_cuda_unavailable_reason()) > 0);
		KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_DEVICE,
		                "kernels.scan: backend 'cuda' is not available: ", lm_cuda_unavailable_reason());
		assert_null(y);
		assert_null(info);
		assert_null(lm_cuda_device_name());
		o.backend = "auto";
		assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
		assert_string_equal(lm_kernel_info_source(info), "cpu");
		assert_string_equal(lm_kernel_info_provenance(info), "CPU, measured");
		lm_kernel_info_free(info);
		lm_tensor_release(y);
		lm_tensor_release(x);
		return;
	}
	for (int a = 0; a < 3; a++)
		for (int64_t b = 1; b <= 1024; b *= 2) {
			check_scan("cuda", algos[a], 1, b, LM_FLOAT32, true);
			check_scan("cuda", algos[a], 100003, b, LM_FLOAT32, true);
			check_scan("cuda", algos[a], 4097, b, LM_FLOAT64, false);
		}
}

static void test_real_values(void **state)
{
	(void)state;
	/* not integers: the kernels compute in the input's dtype, within rounding of the reference */
	int64_t shape[1] = {3000};
	for (int d = 0; d < 2; d++) {
		lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
		lm_tensor *x = lm_rand(1, shape, dt);
		const char *backends[] = {"emu", "cpu"};
		for (int b = 0; b < 2; b++) {
			lm_kernel_opts o;
			lm_kernel_opts_init(&o);
			o.backend = backends[b];
			o.algo = "brent-kung";
			o.repeats = 1;
			lm_tensor *y;
			lm_kernel_info *info;
			assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
			int64_t bad = kt_scan_mismatch(x, y, true, d ? 1e-12 : 2e-5);
			if (bad >= 0) fail_msg("%s %s: y[%lld] = %.17g", backends[b], lm_dtype_name(dt),
			                       (long long)bad, kt_get(y, bad));
			lm_kernel_info_free(info);
			lm_tensor_release(y);
		}
		lm_tensor_release(x);
	}
}

/* ---------------------------------------------------------------- counted from the trace */

static lm_kernel_info *emu_scan(const char *algo, int64_t n, int64_t block, lm_tensor **xout)
{
	lm_tensor *x = kt_ints(n, LM_FLOAT32, 0, 4), *y;
	lm_kernel_info *info;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.algo = algo;
	o.block = block;
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	lm_tensor_release(y);
	if (xout) *xout = x;
	else lm_tensor_release(x);
	return info;
}

/* Counts the add events and the steps with adds in the trace itself. */
static void count_trace(const lm_trace *t, int64_t *adds, int64_t *steps)
{
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	f.kind = LM_TRACE_ADD;
	*adds = 0;
	int64_t last_step = -1;
	*steps = 0;
	for (int64_t i = lm_trace_find(t, &f, 0); i >= 0; i = lm_trace_find(t, &f, i + 1)) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		(*adds)++;
		if ((int64_t)e->step != last_step) (*steps)++, last_step = e->step;
	}
}

static void test_textbook_counts(void **state)
{
	(void)state;
	int64_t ns[] = {16, 32, 1024};
	for (int k = 0; k < 3; k++) {
		int64_t n = ns[k], lg = 0, adds, steps;
		while ((1 << lg) < n) lg++;
		/* Kogge-Stone: one block of n threads */
		lm_kernel_info *info = emu_scan("kogge-stone", n, n, NULL);
		assert_int_equal(kt_counter(info, "adds"), n * lg - (n - 1));
		assert_int_equal(kt_counter(info, "steps"), lg);
		count_trace(lm_kernel_info_trace(info), &adds, &steps);
		assert_int_equal(adds, n * lg - (n - 1));
		assert_int_equal(steps, lg);
		assert_int_equal(kt_counter(info, "global_loads"), n);
		assert_int_equal(kt_counter(info, "global_stores"), n);
		assert_int_equal(kt_counter(info, "barriers"), 2 * lg);
		lm_kernel_info_free(info);
		/* Brent-Kung (PMPP): one block of n/2 threads, two elements each */
		info = emu_scan("brent-kung", n, n / 2, NULL);
		assert_int_equal(kt_counter(info, "adds"), 2 * n - 2 - lg);
		assert_int_equal(kt_counter(info, "steps"), 2 * lg - 1);
		count_trace(lm_kernel_info_trace(info), &adds, &steps);
		assert_int_equal(adds, 2 * n - 2 - lg);
		assert_int_equal(steps, 2 * lg - 1);
		lm_kernel_info_free(info);
	}
}

static void test_provenance_and_counters(void **state)
{
	(void)state;
	lm_kernel_info *info = emu_scan("hierarchical", 5000, 64, NULL);
	assert_string_equal(lm_kernel_info_source(info), "emu");
	assert_string_equal(lm_kernel_info_provenance(info), "emulated, modelled cycles");
	assert_string_equal(lm_kernel_info_pattern(info), "scan");
	assert_string_equal(lm_kernel_info_algo(info), "hierarchical");
	assert_non_null(strstr(lm_kernel_info_device(info), "SIMT emulator on"));
	const char *order[] = {"modelled_cycles", "steps", "adds", "global_loads", "global_stores",
	                       "shared_loads", "shared_stores", "atomics", "shared_atomics",
	                       "conflicts", "shared_conflicts", "barriers", "simd_efficiency", "bytes"};
	for (int i = 0; i < 14; i++) assert_string_equal(lm_kernel_info_counter_name(info, i), order[i]);
	assert_true(kt_counter(info, "modelled_cycles") > 0);
	/* sections of 64 x 4: 20 block sums, scanned by one block, then added back */
	assert_int_equal(kt_counter(info, "launches"), 3);
	const lm_trace *t = lm_kernel_info_trace(info);
	assert_int_equal(lm_trace_launch_count(t), 3);
	lm_trace_launch l;
	assert_int_equal(lm_trace_launch_get(t, 0, &l), LM_OK);
	assert_string_equal(l.kernel, "scan_coarsened");
	assert_int_equal(l.grid[0], 20);
	assert_int_equal(l.shared_bytes, 64 * 4 * 4);
	assert_int_equal(lm_trace_launch_get(t, 1, &l), LM_OK);
	assert_int_equal(l.grid[0], 1);
	assert_int_equal(lm_trace_launch_get(t, 2, &l), LM_OK);
	assert_string_equal(l.kernel, "scan_add_sums");
	assert_int_equal(l.grid[0], 19);
	double cycles = kt_counter(info, "modelled_cycles");
	assert_true(l.end_cycle == (uint64_t)cycles);
	lm_kernel_info_free(info);

	lm_tensor *x = kt_ints(1000, LM_FLOAT64, 0, 4), *y;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	assert_string_equal(lm_kernel_info_provenance(info), "CPU, measured");
	assert_null(lm_kernel_info_trace(info));
	assert_true(kt_counter(info, "time_ms") > 0);
	assert_int_equal(kt_counter(info, "bytes"), 2 * 1000 * 8);
	assert_true(kt_counter(info, "gbps") > 0);
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

/* ---------------------------------------------------------------- the golden trace */

static void test_golden_kogge_stone_16(void **state)
{
	(void)state;
	float v[16];
	for (int i = 0; i < 16; i++) v[i] = (float)(i + 1);
	int64_t shape[1] = {16};
	lm_tensor *x = lm_from_data(v, 1, shape, LM_FLOAT32), *y;
	lm_kernel_info *info;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	const lm_trace *t = lm_kernel_info_trace(info);
	/* render the trace, one event a line */
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap), line[256];
	for (int64_t i = 0; i < lm_trace_count(t); i++) {
		lm_trace_event_format(t, i, line, sizeof line);
		len += (size_t)snprintf(text + len, cap - len, "%s\n", line);
	}
	const char *src = getenv("LUMEN_SOURCE_DIR");
	char path[1024];
	snprintf(path, sizeof path, "%s/tests/kernels/golden/kogge_stone_16.txt", src ? src : ".");
	if (getenv("LUMEN_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fwrite(text, 1, len, f);
		fclose(f);
	}
	FILE *f = fopen(path, "r");
	if (!f) fail_msg("cannot open %s (set LUMEN_SOURCE_DIR)", path);
	char *want = calloc(1, cap);
	size_t wlen = fread(want, 1, cap - 1, f);
	fclose(f);
	if (wlen != len || memcmp(want, text, len) != 0) {
		size_t k = 0;
		while (k < len && k < wlen && want[k] == text[k]) k++;
		size_t ls = k;
		while (ls > 0 && text[ls - 1] != '\n') ls--;
		fail_msg("trace differs from %s at byte %zu:\n got: %.120s\nwant: %.120s", path, k,
		         text + ls, want + ls);
	}
	free(want);
	free(text);
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

static void test_same_input_same_trace(void **state)
{
	(void)state;
	lm_tensor *x;
	lm_kernel_info *a = emu_scan("brent-kung", 300, 32, &x), *b;
	lm_tensor *y;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.algo = "brent-kung";
	o.block = 32;
	assert_int_equal(lm_kernel_scan(x, &o, &y, &b), LM_OK);
	const lm_trace *ta = lm_kernel_info_trace(a), *tb = lm_kernel_info_trace(b);
	assert_int_equal(lm_trace_count(ta), lm_trace_count(tb));
	for (int64_t i = 0; i < lm_trace_count(ta); i++)
		assert_memory_equal(lm_trace_event_get(ta, i), lm_trace_event_get(tb, i), sizeof(lm_trace_event));
	for (int i = 0; i < lm_kernel_info_counter_count(a); i++)
		assert_true(lm_kernel_info_counter_value(a, i) == lm_kernel_info_counter_value(b, i));
	lm_kernel_info_free(a);
	lm_kernel_info_free(b);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

/* ---------------------------------------------------------------- bad input */

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *x = kt_ints(100, LM_FLOAT32, 0, 4), *y = NULL;
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.block = 2048;
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_ARG,
	                "kernels.scan: block 2048 exceeds the limit of 1024 threads per block");
	o.block = 100;
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_ARG,
	                "block 100 is not a power of two; algo 'kogge-stone' needs one");
	o.block = -4;
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_ARG, "block -4 must be a power of two");
	o.block = 1024;
	o.algo = "hierarchical";
	o.coarsen = 8;
	lm_tensor *xd = kt_ints(100, LM_FLOAT64, 0, 4);
	KT_EXPECT_ERROR(lm_kernel_scan(xd, &o, &y, &info), LM_ERR_ARG,
	                "algo 'hierarchical' with block 1024 and coarsen 8 needs 65536 bytes of shared "
	                "memory (float64), over the limit of 48 KiB (49152 bytes) per block");
	o.coarsen = 0;
	o.algo = "kogge-stone";
	o.coarsen = 4;
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_ARG, "algo 'kogge-stone' does not coarsen");
	lm_kernel_opts_init(&o);
	o.algo = "sklansky";
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_ARG,
	                "kernels.scan: unknown algo 'sklansky' (expected 'kogge-stone', 'brent-kung' or "
	                "'hierarchical')");
	lm_kernel_opts_init(&o);
	o.backend = "tpu";
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_ARG,
	                "kernels.scan: unknown backend 'tpu' (expected 'emu', 'cpu', 'cuda', 'opencl' or 'auto')");
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	o.trace = 1;
	KT_EXPECT_ERROR(lm_kernel_scan(x, &o, &y, &info), LM_ERR_UNSUPPORTED,
	                "trace=true needs backend='emu'");
	lm_kernel_opts_init(&o);
	int64_t zero[1] = {0};
	lm_tensor *empty = lm_empty(1, zero, LM_FLOAT32);
	KT_EXPECT_ERROR(lm_kernel_scan(empty, &o, &y, &info), LM_ERR_ARG,
	                "kernels.scan: the input is empty (shape [0])");
	lm_tensor *ints = kt_ints(10, LM_INT64, 0, 4);
	KT_EXPECT_ERROR(lm_kernel_scan(ints, &o, &y, &info), LM_ERR_DTYPE,
	                "kernels.scan: the input has dtype int64; this pattern takes float32 or float64");
	KT_EXPECT_ERROR(lm_kernel_scan(NULL, &o, &y, &info), LM_ERR_ARG, "kernels.scan: the input tensor is NULL");
	assert_null(y);
	assert_null(info);
	/* trace=true with 'auto' runs the emulator */
	o.trace = 1;
	assert_int_equal(lm_kernel_scan(x, &o, &y, &info), LM_OK);
	assert_string_equal(lm_kernel_info_source(info), "emu");
	assert_non_null(lm_kernel_info_trace(info));
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	lm_tensor_release(ints);
	lm_tensor_release(empty);
	lm_tensor_release(xd);
	lm_tensor_release(x);
}

/* The layouts of ktest.h: views that are not contiguous, with the values of the original. */
static void test_layouts(void **state)
{
	(void)state;
	int64_t shapes[][2] = {{7, 9}, {10, 0}, {2, 33}};
	for (int s = 0; s < 3; s++) {
		int nd = shapes[s][1] ? 2 : 1;
		lm_tensor *x = lm_randint(0, 100, nd, shapes[s], LM_FLOAT32);
		for (int layout = 0; layout < KT_LAYOUTS; layout++) {
			lm_tensor *v = kt_layout(x, layout), *c = lm_contiguous(v);
			assert_int_equal(lm_tensor_ndim(v), nd);
			for (int d = 0; d < nd; d++) assert_int_equal(lm_tensor_size(v, d), shapes[s][d]);
			assert_memory_equal(lm_tensor_data(c), lm_tensor_data(x), lm_tensor_nbytes(x));
			bool contiguous = layout == KT_CONTIGUOUS || (layout == KT_NARROWED && nd == 1);
			if (lm_tensor_is_contiguous(v) != contiguous)
				fail_msg("layout %s of shape %d: contiguous %d", kt_layout_name[layout], s,
				         lm_tensor_is_contiguous(v));
			lm_tensor_release(c);
			lm_tensor_release(v);
		}
		lm_tensor_release(x);
	}
}

static void test_shapes_and_views(void **state)
{
	(void)state;
	/* a 2-D, non-contiguous input is scanned in C order; the output has its shape */
	int64_t shape[2] = {7, 9};
	lm_tensor *m = lm_randint(0, 4, 2, shape, LM_FLOAT32), *mt = lm_t(m), *c = lm_contiguous(mt), *y;
	lm_kernel_info *info;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	o.block = 16;
	assert_int_equal(lm_kernel_scan(mt, &o, &y, &info), LM_OK);
	assert_int_equal(lm_tensor_ndim(y), 2);
	assert_int_equal(lm_tensor_shape(y)[0], 9);
	assert_int_equal(kt_scan_mismatch(c, y, true, 0), -1);
	lm_kernel_info_free(info);
	lm_tensor_release(y);
	lm_tensor_release(c);
	lm_tensor_release(mt);
	lm_tensor_release(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emu_every_block),
		cmocka_unit_test(test_emu_many_blocks),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_cpu_same_for_any_threads),
		cmocka_unit_test(test_cuda_when_present),
		cmocka_unit_test(test_real_values),
		cmocka_unit_test(test_textbook_counts),
		cmocka_unit_test(test_provenance_and_counters),
		cmocka_unit_test(test_golden_kogge_stone_16),
		cmocka_unit_test(test_same_input_same_trace),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_layouts),
		cmocka_unit_test(test_shapes_and_views),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
