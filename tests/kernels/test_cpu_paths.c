/*
 * test_cpu_paths.c — the kernels' CPU runs on every SIMD path this machine supports (scalar,
 * avx2, avx512; the others are reported as skipped): each path, chosen through lumen/isa.h as a
 * user would (lm_isa_set; LUMEN_ISA goes the same way), gives the sequential references exactly
 * for the scans (both CPU algorithms), sums, histograms (privatized, global-atomic, aggregated),
 * SpMV (CSR, ELL, JDS; ELL's padding never multiplied: an infinite x[0] that no row uses leaves
 * every result finite) and matmuls (naive, tiled at several tiles); lengths around every vector
 * width and chunk boundary; the same bits for 1 and 2 threads; streaming and unaligned outputs
 * agree; a path the CPU lacks cannot be selected; info.impl names the path that ran.
 */
#include "kernels/cpu_kernels.h"
#include "ktest.h"
#include "lumen/isa.h"

static const lm_isa paths[] = {LM_ISA_SCALAR, LM_ISA_AVX2, LM_ISA_AVX512};
#define NPATHS 3
/* elements per chunk of the chained scans: float32, float64 */
#define CHUNK32 (LMI_CPU_CHUNK_BYTES / 4)
#define CHUNK64 (LMI_CPU_CHUNK_BYTES / 8)

/* Selects path p for Lumen and for the kernels' direct calls; false when the CPU lacks it. */
static bool use_path(lm_isa p)
{
	if (!lm_isa_supported(p)) return false;
	assert_int_equal(lm_isa_set(p), LM_OK);
	assert_int_equal(lmi_cpu_set_isa((int)p), 0);
	return true;
}

static int setup(void **state)
{
	(void)state;
	for (int i = 0; i < NPATHS; i++)
		print_message("%s path: %s\n", lm_isa_name(paths[i]),
		              lm_isa_supported(paths[i]) ? "tested" : "SKIPPED (this CPU or build lacks it)");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lm_isa_set(lm_isa_best());
	lmi_cpu_set_isa((int)lm_isa_best());
	return 0;
}

static lm_kernel_info *run(const char *pattern, const lm_tensor *x, const char *algo, int64_t block,
                           bool inclusive, lm_tensor **y)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	o.algo = algo;
	o.block = block;
	o.inclusive = inclusive;
	o.repeats = 1;
	lm_kernel_info *info = NULL;
	lm_status st = strcmp(pattern, "scan") == 0 ? lm_kernel_scan(x, &o, y, &info)
	                                            : lm_kernel_reduce(x, &o, y, &info);
	if (st) fail_msg("%s %s: %s", pattern, algo, lm_last_error());
	return info;
}

/* The path's run went through the kernels' table of that path. */
static void test_path_selection(void **state)
{
	(void)state;
	lm_tensor *x = kt_ints(100, LM_FLOAT32, -3, 5), *y;
	for (int i = 0; i < NPATHS; i++) {
		if (!use_path(paths[i])) {
			int before = lmi_cpu_isa();
			assert_int_equal(lmi_cpu_set_isa((int)paths[i]), -1);
			assert_int_equal(lmi_cpu_isa(), before);
			assert_int_not_equal(lm_isa_set(paths[i]), LM_OK);
			continue;
		}
		lmi_cpu_set_isa(LMI_CPU_SCALAR); /* the run must set it back from lumen/isa.h */
		lm_kernel_info *info = run("scan", x, "hierarchical", 0, true, &y);
		assert_int_equal(lmi_cpu_isa(), (int)paths[i]);
		const char *impl = lm_kernel_info_impl(info); /* names the path that ran */
		if (strncmp(impl, "cpu: ", 5) || !strstr(impl, lm_isa_name(paths[i])))
			fail_msg("%s: info.impl \"%s\" does not name the path", lm_isa_name(paths[i]), impl);
		lm_kernel_info_free(info);
		lm_tensor_release(y);
		assert_string_equal(lmi_cpu_isa_name(lmi_cpu_isa()), lm_isa_name(paths[i]));
	}
	assert_int_equal(lmi_cpu_set_isa(-1), -1);
	assert_int_equal(lmi_cpu_set_isa(LMI_CPU_ISA_COUNT), -1);
	assert_true(lmi_cpu_isa_supported(LMI_CPU_SCALAR));
	assert_string_equal(lmi_cpu_isa_name(7), "?");
	lm_tensor_release(x);
}

/* Every length around the vector widths (8, 16, 32, 64 per step) and the chunks. */
static const int64_t scan_sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 1000,
                                     CHUNK64 - 1, CHUNK64 + 3, CHUNK32, 2 * CHUNK32 + 77};

static void test_scans_exact(void **state)
{
	(void)state;
	const char *algos[] = {"hierarchical", "brent-kung", "kogge-stone", "kogge-stone"};
	const int64_t blocks[] = {0, 0, 1024, 32};
	int saved = lm_get_num_threads();
	for (int p = 0; p < NPATHS; p++) {
		if (!use_path(paths[p])) continue;
		for (size_t s = 0; s < sizeof scan_sizes / sizeof scan_sizes[0]; s++)
			for (int d = 0; d < 2; d++) {
				int64_t n = scan_sizes[s];
				lm_tensor *x = kt_ints(n, d ? LM_FLOAT64 : LM_FLOAT32, -3, 5), *y;
				int threads = n > CHUNK64 ? 2 : 1; /* one chunk runs on one thread */
				for (int a = 0; a < 4; a++)
					for (int t = 1; t <= threads; t++) {
						bool incl = (a + t + (int)s) % 2;
						lm_set_num_threads(t);
						lm_kernel_info *info = run("scan", x, algos[a], blocks[a], incl, &y);
						int64_t bad = kt_scan_mismatch(x, y, incl, 0);
						if (bad >= 0)
							fail_msg("%s %s block %lld %s n=%lld %d threads %s: y[%lld] = %g",
							         lm_isa_name(paths[p]), algos[a], (long long)blocks[a],
							         d ? "float64" : "float32", (long long)n, t,
							         incl ? "inclusive" : "exclusive", (long long)bad, kt_get(y, bad));
						lm_kernel_info_free(info);
						lm_tensor_release(y);
					}
				lm_tensor *r;
				lm_kernel_info *info = run("reduce", x, "shared", 0, true, &r);
				if (kt_get(r, 0) != kt_sum(x))
					fail_msg("%s sum n=%lld: %g, expected %g", lm_isa_name(paths[p]), (long long)n,
					         kt_get(r, 0), kt_sum(x));
				lm_kernel_info_free(info);
				lm_tensor_release(r);
				lm_tensor_release(x);
			}
	}
	lm_set_num_threads(saved);
}

/* Random floats (rounding visible): 1 and 2 threads give the same bits on each path, for the
 * scans and the sum; an output that cannot take streaming stores (misaligned) the same bits as
 * one that does. */
static void test_same_bits(void **state)
{
	(void)state;
	int64_t n = (1 << 21) + 3 * 64 + 5; /* streamed (>= 2^21), several chunks */
	float *x = malloc((size_t)n * 4), *y[3], s[2];
	void *scratch = malloc(lmi_cpu_scratch_bytes(n, 4));
	assert_non_null(x);
	for (int i = 0; i < 3; i++) y[i] = malloc((size_t)(n + 16) * 4);
	lm_tensor *r = lm_rand(1, &n, LM_FLOAT32);
	memcpy(x, lm_tensor_data(r), (size_t)n * 4);
	lm_tensor_release(r);
	int saved = lm_get_num_threads();
	for (int p = 0; p < NPATHS; p++) {
		if (!use_path(paths[p])) continue;
		for (int ks = 0; ks < 2; ks++) {
			for (int t = 0; t < 3; t++) {
				lm_set_num_threads(t == 0 ? 1 : 2);
				float *out = t == 2 ? y[2] + 1 : y[t]; /* t == 2: misaligned */
				int rc = ks ? lmi_cpu_scan_kogge_stone_f32(x, out, n, 0, 256, NULL, scratch)
				            : lmi_cpu_scan_f32(x, out, n, 0, NULL, scratch);
				assert_int_equal(rc, 0);
				if (t < 2) assert_int_equal(lmi_cpu_sum_f32(x, n, &s[t], NULL, scratch), 0);
			}
			if (memcmp(y[0], y[1], (size_t)n * 4) || memcmp(y[0], y[2] + 1, (size_t)n * 4))
				fail_msg("%s %s scan: the bits differ between 1, 2 threads or a misaligned output",
				         lm_isa_name(paths[p]), ks ? "kogge-stone" : "chained");
			assert_memory_equal(&s[0], &s[1], sizeof s[0]);
			assert_true(fabs(y[0][n - 1] - s[0]) <= 1e-3 * fabs(s[0]));
		}
	}
	lm_set_num_threads(saved);
	for (int i = 0; i < 3; i++) free(y[i]);
	free(x);
	free(scratch);
}

/* ---------------------------------------------------------------- histograms */

static void check_histogram(const char *algo, lm_tensor *x, int64_t bins, int threads, lm_isa p)
{
	lm_set_num_threads(threads);
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = "cpu";
	o.algo = algo;
	o.repeats = 1;
	lm_tensor *h = NULL;
	lm_kernel_info *info = NULL;
	if (lm_kernel_histogram(x, bins, &o, &h, &info)) fail_msg("%s: %s", algo, lm_last_error());
	int64_t n = lm_tensor_numel(x), *want = calloc((size_t)bins, sizeof *want);
	const void *d = lm_tensor_data(x);
	for (int64_t i = 0; i < n; i++)
		want[lm_tensor_dtype(x) == LM_UINT8 ? ((const uint8_t *)d)[i] : ((const int32_t *)d)[i]]++;
	const int64_t *got = lm_tensor_data(h);
	for (int64_t b = 0; b < bins; b++)
		if (got[b] != want[b])
			fail_msg("%s %s %s n=%lld bins %lld %d threads: bin %lld = %lld, expected %lld",
			         lm_isa_name(p), algo, lm_dtype_name(lm_tensor_dtype(x)), (long long)n,
			         (long long)bins, threads, (long long)b, (long long)got[b], (long long)want[b]);
	free(want);
	lm_tensor_release(h);
	lm_kernel_info_free(info);
}

static void test_histograms(void **state)
{
	(void)state;
	const char *algos[] = {"privatized", "global-atomic", "aggregated"};
	const int64_t sizes[] = {1, 17, 100003};
	const int64_t bins[] = {1, 7, 256, 4096};
	int saved = lm_get_num_threads();
	for (int p = 0; p < NPATHS; p++) {
		if (!use_path(paths[p])) continue;
		for (int s = 0; s < 3; s++)
			for (int b = 0; b < 4; b++)
				for (int runs = 0; runs < 2; runs++) {
					lm_dtype dt = bins[b] > 256 || (b + s) % 2 ? LM_INT32 : LM_UINT8;
					int64_t n = sizes[s];
					lm_tensor *x = lm_randint(0, bins[b], 1, &n, dt);
					for (int64_t i = 0; runs && i < n; i++) { /* runs of 1000 equal values */
						int64_t v = (i / 1000 * 37) % bins[b];
						if (dt == LM_UINT8) ((uint8_t *)lm_tensor_data(x))[i] = (uint8_t)v;
						else ((int32_t *)lm_tensor_data(x))[i] = (int32_t)v;
					}
					for (int a = 0; a < 3; a++)
						check_histogram(algos[a], x, bins[b], s == 2 ? 1 + (a + b) % 2 : 1, paths[p]);
					lm_tensor_release(x);
				}
	}
	lm_set_num_threads(saved);
}

/* ---------------------------------------------------------------- spmv */

/* m x n of small integers, row r with about r % 7 / 7 of its entries non-zero (empty rows, long
 * and short ones), column 0 all zero. */
static lm_tensor *ragged(int64_t m, int64_t n, lm_dtype dt)
{
	lm_tensor *u = lm_rand(2, (int64_t[]){m, n}, LM_FLOAT64), *v = lm_randint(1, 5, 2, (int64_t[]){m, n}, LM_FLOAT64);
	lm_tensor *d = lm_zeros(2, (int64_t[]){m, n}, dt);
	for (int64_t i = 0; i < m * n; i++) {
		double x = i % n == 0 || kt_get(u, i) >= (double)(i / n % 7) / 7.0 ? 0 : kt_get(v, i);
		if (dt == LM_FLOAT64) ((double *)lm_tensor_data(d))[i] = x;
		else ((float *)lm_tensor_data(d))[i] = (float)x;
	}
	lm_tensor_release(u);
	lm_tensor_release(v);
	return d;
}

static void test_spmv(void **state)
{
	(void)state;
	const char *formats[] = {"csr", "ell", "jds"};
	int saved = lm_get_num_threads();
	int64_t m = 2 * LMI_CPU_SPMV_BLOCK_ROWS + 77, n = 97;
	for (int d = 0; d < 2; d++) {
		lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
		lm_tensor *dense = ragged(m, n, dt), *x = lm_randint(-3, 4, 1, &n, dt);
		if (dt == LM_FLOAT64) ((double *)lm_tensor_data(x))[0] = INFINITY;
		else ((float *)lm_tensor_data(x))[0] = INFINITY; /* column 0 is empty: never multiplied */
		lm_sparse *A = lm_sparse_from_dense(dense);
		assert_non_null(A);
		assert_true(lm_sparse_ell_padding(A) > 0);
		for (int p = 0; p < NPATHS; p++) {
			if (!use_path(paths[p])) continue;
			for (int f = 0; f < 3; f++) {
				lm_set_num_threads(1 + (f + p) % 2);
				lm_kernel_opts o;
				lm_kernel_opts_init(&o);
				o.backend = "cpu";
				o.format = formats[f];
				o.repeats = 1;
				lm_tensor *y = NULL;
				lm_kernel_info *info = NULL;
				if (lm_kernel_spmv(A, x, &o, &y, &info)) fail_msg("%s: %s", formats[f], lm_last_error());
				for (int64_t r = 0; r < m; r++) {
					double s = 0;
					for (int64_t c = 1; c < n; c++) s += kt_get(dense, r * n + c) * kt_get(x, c);
					if (kt_get(y, r) != s)
						fail_msg("%s %s %s: y[%lld] = %g, expected %g", lm_isa_name(paths[p]),
						         formats[f], lm_dtype_name(dt), (long long)r, kt_get(y, r), s);
				}
				lm_tensor_release(y);
				lm_kernel_info_free(info);
			}
		}
		lm_sparse_release(A);
		lm_tensor_release(dense);
		lm_tensor_release(x);
	}
	lm_set_num_threads(saved);
}

/* ---------------------------------------------------------------- matmul */

static void test_matmul(void **state)
{
	(void)state;
	const int64_t shapes[][3] = {{1, 1, 1}, {37, 65, 19}, {64, 100, 70}, {5, 3, 33}};
	const int64_t tiles[] = {0, 1, 3, 16, 32}; /* 0: naive */
	for (int p = 0; p < NPATHS; p++) {
		if (!use_path(paths[p])) continue;
		for (int s = 0; s < 4; s++)
			for (int d = 0; d < 2; d++) {
				int64_t M = shapes[s][0], K = shapes[s][1], N = shapes[s][2];
				lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
				lm_tensor *a = lm_randint(-2, 3, 2, (int64_t[]){M, K}, dt);
				lm_tensor *b = lm_randint(-2, 3, 2, (int64_t[]){K, N}, dt);
				for (int t = 0; t < 5; t++) {
					lm_kernel_opts o;
					lm_kernel_opts_init(&o);
					o.backend = "cpu";
					o.algo = tiles[t] ? "tiled" : "naive";
					o.tile = tiles[t] ? tiles[t] : 16;
					o.repeats = 1;
					lm_tensor *c = NULL;
					lm_kernel_info *info = NULL;
					if (lm_kernel_matmul(a, b, &o, &c, &info)) fail_msg("%s", lm_last_error());
					for (int64_t i = 0; i < M; i++)
						for (int64_t j = 0; j < N; j++) {
							double want = 0;
							for (int64_t q = 0; q < K; q++)
								want += kt_get(a, i * K + q) * kt_get(b, q * N + j);
							if (kt_get(c, i * N + j) != want)
								fail_msg("%s %s tile %lld %lldx%lldx%lld: C[%lld,%lld] = %g, "
								         "expected %g", lm_isa_name(paths[p]), o.algo,
								         (long long)tiles[t], (long long)M, (long long)K,
								         (long long)N, (long long)i, (long long)j,
								         kt_get(c, i * N + j), want);
						}
					lm_tensor_release(c);
					lm_kernel_info_free(info);
				}
				lm_tensor_release(a);
				lm_tensor_release(b);
			}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_selection),
		cmocka_unit_test(test_scans_exact),
		cmocka_unit_test(test_same_bits),
		cmocka_unit_test(test_histograms),
		cmocka_unit_test(test_spmv),
		cmocka_unit_test(test_matmul),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
