/*
 * test_matmul.c — kernels.matmul: naive and tiled, every available run, equal the sequential
 * product for any sizes (1x1, ragged sizes that are not multiples of the tile, tiles 1 to 32);
 * the lecture's count: the tiled kernel loads tile-width times fewer global elements; the shared
 * tiles Mds and Nds are named arrays of the trace; bad input. Every case of the correctness tests
 * runs on contiguous, transposed and narrowed inputs (ktest.h: kt_layout).
 */
#include "ktest.h"

static lm_tensor *ints2(int64_t r, int64_t c, lm_dtype dt)
{
	lm_tensor *t = lm_randint(-3, 4, 2, (int64_t[]){r, c}, dt);
	assert_non_null(t);
	return t;
}

/* One product of random matrices, both in layout `layout` (kt_layout), against the sequential
 * reference. */
static lm_kernel_info *mm_in(const char *backend, const char *algo, int64_t m, int64_t k, int64_t n,
                             int64_t tile, lm_dtype dt, int layout)
{
	lm_tensor *a = ints2(m, k, dt), *b = ints2(k, n, dt), *c = NULL;
	lm_tensor *al = kt_layout(a, layout), *bl = kt_layout(b, layout);
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.tile = tile;
	o.repeats = 1;
	lm_kernel_info *info = NULL;
	if (lm_kernel_matmul(al, bl, &o, &c, &info) != LM_OK)
		fail_msg("%s %s %lldx%lldx%lld tile %lld %s: %s", backend, algo, (long long)m, (long long)k,
		         (long long)n, (long long)tile, kt_layout_name[layout], lm_last_error());
	assert_int_equal(lm_tensor_size(c, 0), m);
	assert_int_equal(lm_tensor_size(c, 1), n);
	assert_int_equal(lm_tensor_dtype(c), dt);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t p = 0; p < k; p++) s += kt_get(a, i * k + p) * kt_get(b, p * n + j);
			if (kt_get(c, i * n + j) != s)
				fail_msg("%s %s %s %lldx%lldx%lld tile %lld %s: C[%lld][%lld] = %g, expected %g",
				         backend, algo, lm_dtype_name(dt), (long long)m, (long long)k,
				         (long long)n, (long long)tile, kt_layout_name[layout], (long long)i,
				         (long long)j, kt_get(c, i * n + j), s);
		}
	lm_tensor *list[] = {a, b, al, bl, c};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
	return info;
}

static lm_kernel_info *mm(const char *backend, const char *algo, int64_t m, int64_t k, int64_t n,
                          int64_t tile, lm_dtype dt)
{
	return mm_in(backend, algo, m, k, n, tile, dt, KT_CONTIGUOUS);
}

/* One case on each layout of the inputs. */
static void check(const char *backend, const char *algo, int64_t m, int64_t k, int64_t n,
                  int64_t tile, lm_dtype dt)
{
	for (int layout = 0; layout < KT_LAYOUTS; layout++)
		lm_kernel_info_free(mm_in(backend, algo, m, k, n, tile, dt, layout));
}

static void test_emu(void **state)
{
	(void)state;
	const char *algos[] = {"naive", "tiled"};
	for (int a = 0; a < 2; a++) {
		check("emu", algos[a], 1, 1, 1, 0, LM_FLOAT32);
		check("emu", algos[a], 5, 7, 3, 4, LM_FLOAT64);
		check("emu", algos[a], 17, 9, 11, 8, LM_FLOAT32); /* ragged in every dimension */
		check("emu", algos[a], 3, 20, 2, 1, LM_FLOAT32);
		check("emu", algos[a], 32, 32, 32, 32, LM_FLOAT32);
		check("emu", algos[a], 20, 1, 18, 16, LM_FLOAT64);
	}
}

static void test_cpu(void **state)
{
	(void)state;
	const char *algos[] = {"naive", "tiled"};
	for (int a = 0; a < 2; a++)
		for (int d = 0; d < 2; d++) {
			lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
			check("cpu", algos[a], 1, 1, 1, 0, dt);
			check("cpu", algos[a], 3, 5, 7, 0, dt);
			check("cpu", algos[a], 64, 300, 70, 0, dt);
			check("cpu", algos[a], 129, 257, 33, 0, dt);
			check("cpu", algos[a], 5, 600, 1, 0, dt);
		}
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) return; /* the "not available" error: test_bad_input */
	const char *algos[] = {"naive", "tiled"};
	for (int a = 0; a < 2; a++)
		for (int64_t tile = 1; tile <= 32; tile *= 2) {
			check("cuda", algos[a], 1, 1, 1, tile, LM_FLOAT32);
			check("cuda", algos[a], 129, 67, 95, tile, LM_FLOAT32);
			check("cuda", algos[a], 33, 100, 31, tile, LM_FLOAT64);
		}
}

static void test_counters(void **state)
{
	(void)state;
	const int64_t m = 32, k = 32, n = 32;
	lm_kernel_info *naive = mm("emu", "naive", m, k, n, 8, LM_FLOAT32);
	/* naive: every thread loads a row of M and a column of N: 2 m n k */
	assert_int_equal(kt_counter(naive, "global_loads"), 2 * m * n * k);
	assert_int_equal(kt_counter(naive, "adds"), m * n * k);
	assert_int_equal(kt_counter(naive, "shared_loads"), 0);
	for (int64_t tile = 4; tile <= 16; tile *= 2) {
		lm_kernel_info *tiled = mm("emu", "tiled", m, k, n, tile, LM_FLOAT32);
		/* tiled: each global element is loaded once per block that needs it: tile times fewer */
		assert_int_equal(kt_counter(tiled, "global_loads") * tile, kt_counter(naive, "global_loads"));
		assert_int_equal(kt_counter(tiled, "shared_loads"), 2 * m * n * k);
		assert_int_equal(kt_counter(tiled, "global_stores"), m * n);
		assert_int_equal(kt_counter(tiled, "barriers"), 2 * (k / tile) * (m / tile) * (n / tile));
		assert_int_equal(kt_counter(tiled, "tile"), tile);
		/* (with tile 4 a block is half a warp: the model's blocks run one after another) */
		if (tile >= 8)
			assert_true(kt_counter(tiled, "modelled_cycles") < kt_counter(naive, "modelled_cycles"));
		if (tile == 8) { /* the tiles are named arrays with their 2-D shape */
			lm_trace *t = lm_kernel_info_trace(tiled);
			int found = 0;
			for (int id = 0; id < lm_trace_array_count(t); id++) {
				lm_trace_array ar;
				assert_int_equal(lm_trace_array_get(t, id, &ar), LM_OK);
				if (strcmp(ar.name, "Mds") == 0 || strcmp(ar.name, "Nds") == 0) {
					found++;
					assert_int_equal(ar.space, LM_SPACE_SHARED);
					assert_int_equal(ar.rows, 8);
					assert_int_equal(ar.cols, 8);
				}
				if (strcmp(ar.name, "M") == 0) assert_int_equal(ar.cols, k);
			}
			assert_int_equal(found, 2);
			lm_trace_filter f;
			lm_trace_filter_init(&f);
			f.kind = LM_TRACE_LOAD;
			f.space = LM_SPACE_SHARED;
			assert_true(lm_trace_find(t, &f, 0) >= 0);
		}
		lm_kernel_info_free(tiled);
	}
	lm_kernel_info_free(naive);
}

static void test_bad_input(void **state)
{
	(void)state;
	lm_tensor *a = ints2(3, 4, LM_FLOAT32), *b = ints2(5, 2, LM_FLOAT32), *c = NULL;
	lm_tensor *b64 = ints2(4, 2, LM_FLOAT64), *v = lm_zeros(1, (int64_t[]){4}, LM_FLOAT32);
	lm_tensor *sq = ints2(4, 4, LM_FLOAT32);
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "emu";
	KT_EXPECT_ERROR(lm_kernel_matmul(a, b, &o, &c, &info), LM_ERR_SHAPE,
	                "kernels.matmul: a [3, 4] and b [5, 2] do not chain");
	KT_EXPECT_ERROR(lm_kernel_matmul(a, b64, &o, &c, &info), LM_ERR_DTYPE,
	                "a is float32 and b float64");
	KT_EXPECT_ERROR(lm_kernel_matmul(a, v, &o, &c, &info), LM_ERR_SHAPE, "must both be matrices");
	o.tile = 33;
	KT_EXPECT_ERROR(lm_kernel_matmul(a, sq, &o, &c, &info), LM_ERR_ARG, "tile 33 must be in 1..32");
	lm_kernel_opts_init(&o);
	o.block = 64;
	KT_EXPECT_ERROR(lm_kernel_matmul(a, sq, &o, &c, &info), LM_ERR_ARG, "give tile, not block");
	if (!lm_cuda_is_available()) {
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		lm_tensor *at = ints2(4, 3, LM_FLOAT32);
		KT_EXPECT_ERROR(lm_kernel_matmul(a, at, &o, &c, &info), LM_ERR_DEVICE,
		                "kernels.matmul: backend 'cuda' is not available");
		lm_tensor_release(at);
	}
	assert_null(c);
	assert_null(info);
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(b64);
	lm_tensor_release(v);
	lm_tensor_release(sq);
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
