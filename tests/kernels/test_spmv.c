/*
 * test_spmv.c — lm_sparse and kernels.spmv: the four formats built from dense matrices and from
 * triples (0- and 1-based, unsorted, duplicates) hold the same matrix; ELL's padding and layout
 * and JDS's order and permutation are exact; every format on every available run equals the
 * sequential product, with empty rows, a 1x1 matrix and a matrix with no nonzeros; the counters
 * (atomics of COO, work per thread, padding); bad input. Every case of the correctness tests runs
 * on contiguous, transposed and narrowed inputs (the dense matrix and x; ktest.h: kt_layout).
 */
#include "ktest.h"

static const char *const formats[] = {"coo", "csr", "ell", "jds"};

/* A random m x n matrix of small integers with about density of them non-zero, rows in
 * empty[] (if any) all zero. */
static lm_tensor *random_dense(int64_t m, int64_t n, double density, lm_dtype dt,
                               const int64_t *empty, int nempty)
{
	lm_tensor *u = lm_rand(2, (int64_t[]){m, n}, LM_FLOAT64);
	lm_tensor *v = lm_randint(1, 5, 2, (int64_t[]){m, n}, LM_FLOAT64);
	lm_tensor *d = lm_zeros(2, (int64_t[]){m, n}, dt);
	for (int64_t i = 0; i < m * n; i++) {
		bool zero = kt_get(u, i) >= density;
		for (int e = 0; e < nempty; e++) zero |= i / n == empty[e];
		double x = zero ? 0 : kt_get(v, i);
		if (dt == LM_FLOAT64) ((double *)lm_tensor_data(d))[i] = x;
		else ((float *)lm_tensor_data(d))[i] = (float)x;
	}
	lm_tensor_release(u);
	lm_tensor_release(v);
	return d;
}

/* y = A x for a random x in layout `layout` (kt_layout), against the dense product. */
static lm_kernel_info *spmv_in(const char *backend, const char *format, const lm_sparse *A,
                               const lm_tensor *dense, int64_t block, int layout)
{
	int64_t m = lm_sparse_rows(A), n = lm_sparse_cols(A);
	lm_dtype dt = lm_sparse_dtype(A);
	lm_tensor *x = lm_randint(-3, 4, 1, &n, dt), *xl = kt_layout(x, layout), *y = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.format = format;
	o.block = block;
	o.repeats = 1;
	lm_kernel_info *info = NULL;
	if (lm_kernel_spmv(A, xl, &o, &y, &info) != LM_OK)
		fail_msg("%s %s %lldx%lld %s: %s", backend, format, (long long)m, (long long)n,
		         kt_layout_name[layout], lm_last_error());
	assert_int_equal(lm_tensor_numel(y), m);
	for (int64_t r = 0; r < m; r++) {
		double s = 0;
		for (int64_t c = 0; c < n; c++) s += kt_get(dense, r * n + c) * kt_get(x, c);
		if (kt_get(y, r) != s)
			fail_msg("%s %s %lldx%lld block %lld %s: y[%lld] = %g, expected %g", backend, format,
			         (long long)m, (long long)n, (long long)block, kt_layout_name[layout],
			         (long long)r, kt_get(y, r), s);
	}
	lm_tensor_release(x);
	lm_tensor_release(xl);
	lm_tensor_release(y);
	return info;
}

static lm_kernel_info *spmv(const char *backend, const char *format, const lm_sparse *A,
                            const lm_tensor *dense, int64_t block)
{
	return spmv_in(backend, format, A, dense, block, KT_CONTIGUOUS);
}

/* Every format, the matrix built from each layout of the dense one and x in that layout. */
static void check_all(const char *backend, int64_t m, int64_t n, double density, lm_dtype dt,
                      const int64_t *empty, int nempty, int64_t block)
{
	lm_tensor *d = random_dense(m, n, density, dt, empty, nempty);
	for (int layout = 0; layout < KT_LAYOUTS; layout++) {
		lm_tensor *dl = kt_layout(d, layout);
		lm_sparse *A = lm_sparse_from_dense(dl);
		assert_non_null(A);
		for (int f = 0; f < 4; f++)
			lm_kernel_info_free(spmv_in(backend, formats[f], A, d, block, layout));
		lm_sparse_release(A);
		lm_tensor_release(dl);
	}
	lm_tensor_release(d);
}

static int32_t iat(const lm_tensor *t, int64_t i) { return ((const int32_t *)lm_tensor_data(t))[i]; }

static lm_tensor *arr(const lm_sparse *A, const char *format, const char *name)
{
	lm_tensor *t = lm_sparse_array(A, format, name);
	if (!t) fail_msg("%s.%s: %s", format, name, lm_last_error());
	return t;
}

static void test_formats(void **state)
{
	(void)state;
	/* rows of lengths 2, 0, 3, 1 */
	double dense[4][5] = {{1, 0, 2, 0, 0}, {0, 0, 0, 0, 0}, {3, 4, 0, 0, 5}, {0, 0, 0, 6, 0}};
	lm_tensor *d = lm_from_data(dense, 2, (int64_t[]){4, 5}, LM_FLOAT64);
	lm_sparse *A = lm_sparse_from_dense(d);
	assert_int_equal(lm_sparse_nnz(A), 6);
	assert_int_equal(lm_sparse_ell_width(A), 3);
	assert_int_equal(lm_sparse_ell_padding(A), 4 * 3 - 6); /* exact: m x width - nnz */
	lm_tensor *rp = arr(A, "csr", "row_ptr"), *ec = arr(A, "ell", "col"), *ev = arr(A, "ell", "val");
	int32_t want_rp[] = {0, 2, 2, 5, 6};
	for (int i = 0; i < 5; i++) assert_int_equal(iat(rp, i), want_rp[i]);
	/* ELL, column-major: slot t of row r at t * 4 + r; padding col 0, val 0 */
	int32_t want_ec[] = {0, 0, 0, 3, 2, 0, 1, 0, 0, 0, 4, 0};
	double want_ev[] = {1, 0, 3, 6, 2, 0, 4, 0, 0, 0, 5, 0};
	for (int i = 0; i < 12; i++) {
		assert_int_equal(iat(ec, i), want_ec[i]);
		assert_true(kt_get(ev, i) == want_ev[i]);
	}
	/* JDS: rows by decreasing length 2 (3), 0 (2), 3 (1), 1 (0) */
	lm_tensor *perm = arr(A, "jds", "perm"), *ip = arr(A, "jds", "iter_ptr");
	lm_tensor *jv = arr(A, "jds", "val"), *jn = arr(A, "jds", "row_nnz");
	int32_t want_perm[] = {2, 0, 3, 1}, want_ip[] = {0, 3, 5, 6}, want_jn[] = {3, 2, 1, 0};
	double want_jv[] = {3, 1, 6, 4, 2, 5};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(iat(perm, i), want_perm[i]);
		assert_int_equal(iat(ip, i), want_ip[i]);
		assert_int_equal(iat(jn, i), want_jn[i]);
	}
	for (int i = 0; i < 6; i++) assert_true(kt_get(jv, i) == want_jv[i]);
	lm_tensor *back = lm_sparse_to_dense(A);
	for (int i = 0; i < 20; i++) assert_true(kt_get(back, i) == kt_get(d, i));
	lm_tensor *list[] = {rp, ec, ev, perm, ip, jv, jn, back};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
	KT_EXPECT_ERROR(lm_sparse_array(A, "csr", "perm") ? LM_OK : lm_last_status(), LM_ERR_ARG,
	                "no array 'perm' in format 'csr'");
	for (int f = 0; f < 4; f++) {
		lm_kernel_info *info = spmv("emu", formats[f], A, d, 2);
		assert_int_equal(kt_counter(info, "padding"), f == 2 ? 6 : 0);
		assert_int_equal(kt_counter(info, "nnz"), 6);
		assert_int_equal(kt_counter(info, "row_nnz_max"), 3);
		assert_int_equal(kt_counter(info, "work_per_thread_max"), f == 0 ? 1 : 3);
		assert_true(fabs(kt_counter(info, "work_per_thread_mean") - (f == 0 ? 1 : 1.5)) < 1e-12);
		assert_int_equal(kt_counter(info, "adds"), f == 0 ? 0 : 6);
		assert_int_equal(kt_counter(info, "atomics"), f == 0 ? 6 : 0);
		lm_kernel_info_free(info);
	}
	lm_sparse_release(A);
	lm_tensor_release(d);
}

/* Triples, unsorted, 1-based, with a duplicate: the same matrix as the dense sum. */
static void test_from_triples(void **state)
{
	(void)state;
	int64_t rows[] = {3, 1, 3, 2, 1}, cols[] = {2, 4, 1, 2, 4};
	float vals[] = {5, 1, 7, 2, 10};
	lm_tensor *r = lm_from_data(rows, 1, (int64_t[]){5}, LM_INT64);
	lm_tensor *c = lm_from_data(cols, 1, (int64_t[]){5}, LM_INT64);
	lm_tensor *v = lm_from_data(vals, 1, (int64_t[]){5}, LM_FLOAT32);
	lm_sparse *A = lm_sparse_from_coo(r, c, v, 3, 4, 1);
	assert_non_null(A);
	assert_int_equal(lm_sparse_nnz(A), 5); /* duplicates kept apart */
	lm_tensor *d = lm_sparse_to_dense(A);
	float want[12] = {0, 0, 0, 11, 0, 2, 0, 0, 7, 5, 0, 0};
	for (int i = 0; i < 12; i++) assert_true(kt_get(d, i) == want[i]);
	lm_tensor *row = arr(A, "coo", "row"), *col = arr(A, "coo", "col");
	int32_t want_row[] = {0, 0, 1, 2, 2}, want_col[] = {3, 3, 1, 0, 1};
	for (int i = 0; i < 5; i++) { /* sorted by (row, col), 0-based */
		assert_int_equal(iat(row, i), want_row[i]);
		assert_int_equal(iat(col, i), want_col[i]);
	}
	for (int f = 0; f < 4; f++) lm_kernel_info_free(spmv("emu", formats[f], A, d, 0));
	for (int f = 0; f < 4; f++) lm_kernel_info_free(spmv("cpu", formats[f], A, d, 0));
	lm_tensor *list[] = {r, c, v, d, row, col};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
	lm_sparse_release(A);
}

static void test_emu(void **state)
{
	(void)state;
	int64_t empty[] = {0, 5, 6, 36};
	check_all("emu", 1, 1, 1.0, LM_FLOAT32, NULL, 0, 0);
	check_all("emu", 1, 1, 0.0, LM_FLOAT32, NULL, 0, 0); /* no nonzeros at all */
	check_all("emu", 37, 23, 0.3, LM_FLOAT32, empty, 4, 8);
	check_all("emu", 20, 50, 0.1, LM_FLOAT64, empty, 2, 33);
	check_all("emu", 64, 3, 0.9, LM_FLOAT32, NULL, 0, 0);
}

static void test_cpu(void **state)
{
	(void)state;
	int64_t empty[] = {3, 4, 999};
	check_all("cpu", 1, 1, 1.0, LM_FLOAT64, NULL, 0, 0);
	check_all("cpu", 1, 1, 0.0, LM_FLOAT32, NULL, 0, 0);
	check_all("cpu", 1000, 700, 0.05, LM_FLOAT32, empty, 3, 0);
	check_all("cpu", 300, 2000, 0.2, LM_FLOAT64, empty, 2, 0);
	check_all("cpu", 5, 40, 1.0, LM_FLOAT32, NULL, 0, 0); /* rows longer than a vector */
}

static void test_cuda_when_present(void **state)
{
	(void)state;
	if (!lm_cuda_is_available()) return; /* the "not available" error: test_bad_input */
	int64_t empty[] = {3, 4, 999};
	check_all("cuda", 1, 1, 1.0, LM_FLOAT32, NULL, 0, 0);
	check_all("cuda", 1, 1, 0.0, LM_FLOAT32, NULL, 0, 0);
	check_all("cuda", 1000, 700, 0.05, LM_FLOAT32, empty, 3, 0);
	check_all("cuda", 3000, 200, 0.2, LM_FLOAT64, empty, 2, 96);
}

static void test_bad_input(void **state)
{
	(void)state;
	int64_t rows[] = {1, 4}, cols[] = {1, 2};
	float vals[] = {1, 2};
	lm_tensor *r = lm_from_data(rows, 1, (int64_t[]){2}, LM_INT64);
	lm_tensor *c = lm_from_data(cols, 1, (int64_t[]){2}, LM_INT64);
	lm_tensor *v = lm_from_data(vals, 1, (int64_t[]){2}, LM_FLOAT32);
	lm_tensor *v3 = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32), *fr = lm_zeros(1, (int64_t[]){2}, LM_FLOAT32);
#define SP(expr) ((expr) ? LM_OK : lm_last_status())
	KT_EXPECT_ERROR(SP(lm_sparse_from_coo(r, c, v, 3, 3, 1)), LM_ERR_INDEX,
	                "kernels.sparse: rows[2] = 4 is out of range 1..3 (the matrix has 3 rows)");
	KT_EXPECT_ERROR(SP(lm_sparse_from_coo(r, c, v, 4, 1, 1)), LM_ERR_INDEX,
	                "cols[2] = 2 is out of range 1..1 (the matrix has 1 columns)");
	KT_EXPECT_ERROR(SP(lm_sparse_from_coo(r, c, v, 4, 4, 0)), LM_ERR_INDEX, "rows[1] = 4 is out of range 0..3");
	KT_EXPECT_ERROR(SP(lm_sparse_from_coo(r, c, v3, 4, 4, 1)), LM_ERR_SHAPE,
	                "rows [2] must be 1-D with one entry per value (3)");
	KT_EXPECT_ERROR(SP(lm_sparse_from_coo(fr, c, v, 4, 4, 1)), LM_ERR_DTYPE, "rows has dtype float32");
	KT_EXPECT_ERROR(SP(lm_sparse_from_coo(r, c, v, 0, 4, 1)), LM_ERR_SHAPE, "shape 0 x 4");
	lm_tensor *d1 = lm_zeros(1, (int64_t[]){4}, LM_FLOAT32), *di = lm_zeros(2, (int64_t[]){2, 2}, LM_INT32);
	KT_EXPECT_ERROR(SP(lm_sparse_from_dense(d1)), LM_ERR_SHAPE, "must be 2-D");
	KT_EXPECT_ERROR(SP(lm_sparse_from_dense(di)), LM_ERR_DTYPE, "dtype int32");
	lm_sparse *A = lm_sparse_from_coo(r, c, v, 4, 4, 1);
	lm_tensor *y = NULL, *x3 = lm_zeros(1, (int64_t[]){3}, LM_FLOAT32);
	lm_tensor *x64 = lm_zeros(1, (int64_t[]){4}, LM_FLOAT64), *x4 = lm_zeros(1, (int64_t[]){4}, LM_FLOAT32);
	lm_kernel_info *info = NULL;
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	KT_EXPECT_ERROR(lm_kernel_spmv(A, x3, &o, &y, &info), LM_ERR_SHAPE,
	                "kernels.spmv: the vector [3] does not match the matrix's 4 columns");
	KT_EXPECT_ERROR(lm_kernel_spmv(A, x64, &o, &y, &info), LM_ERR_DTYPE,
	                "the matrix is float32 and the vector float64");
	o.format = "dia";
	KT_EXPECT_ERROR(lm_kernel_spmv(A, x4, &o, &y, &info), LM_ERR_ARG,
	                "unknown format 'dia' (expected 'coo', 'csr', 'ell' or 'jds')");
	if (!lm_cuda_is_available()) {
		lm_kernel_opts_init(&o);
		o.backend = "cuda";
		KT_EXPECT_ERROR(lm_kernel_spmv(A, x4, &o, &y, &info), LM_ERR_DEVICE,
		                "kernels.spmv: backend 'cuda' is not available");
	}
	assert_null(y);
	assert_null(info);
	lm_sparse_release(A);
	lm_tensor *list[] = {r, c, v, v3, fr, d1, di, x3, x64, x4};
	for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) lm_tensor_release(list[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_from_triples),
		cmocka_unit_test(test_emu),
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_cuda_when_present),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
