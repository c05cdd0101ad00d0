/*
 * test_maxpool.c — max_pool2d's values and indices against a naive reference on inputs full of
 * ties and NaNs, on every path the CPU loop takes: the written-out 2x2 stride-2 window (even and
 * odd sizes, rows with and without a NaN) and the general window (padding, overlap, windows
 * entirely in the padding). The rule: the first maximum in row-major window order, or the first
 * NaN, which propagates (PyTorch's). The op table checks values and gradients on random inputs;
 * random floats have no ties, so which index wins is checked here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lumen/nn.h"
#include "testutil.h"

/* x: (P, H, W) doubles; fills want (P, OH, OW) values and indices within the plane. */
static void reference(const double *x, int64_t P, int64_t H, int64_t W, int64_t k, int64_t s,
                      int64_t pd, int64_t OH, int64_t OW, double *want, int64_t *wi)
{
	for (int64_t p = 0; p < P; p++)
		for (int64_t oh = 0; oh < OH; oh++)
			for (int64_t ow = 0; ow < OW; ow++) {
				double best = -INFINITY;
				int64_t bi = -1;
				for (int64_t i = oh * s - pd; i < oh * s - pd + k; i++)
					for (int64_t j = ow * s - pd; j < ow * s - pd + k; j++) {
						if (i < 0 || i >= H || j < 0 || j >= W) continue;
						double v = x[(p * H + i) * W + j];
						if (bi >= 0 && isnan(best)) continue; /* the first NaN stays */
						if (bi < 0 || v > best || isnan(v)) {
							best = v;
							bi = i * W + j;
						}
					}
				want[(p * OH + oh) * OW + ow] = best;
				wi[(p * OH + oh) * OW + ow] = bi;
			}
}

static void check_case(lm_dtype dt, int64_t N, int64_t C, int64_t H, int64_t W, int64_t k,
                       int64_t s, int64_t pd, double nan_rate)
{
	int64_t P = N * C, n = P * H * W;
	double *x = malloc((size_t)n * sizeof *x);
	assert_non_null(x);
	for (int64_t i = 0; i < n; i++) { /* few distinct values: many ties */
		x[i] = (double)(rand() % 5) - 2;
		if ((double)rand() / RAND_MAX < nan_rate) x[i] = NAN;
	}
	lm_tensor *xd = lm_from_data(x, 4, (int64_t[]){N, C, H, W}, LM_FLOAT64);
	lm_tensor *xt = lm_to_dtype(xd, dt);
	assert_non_null(xt);
	lm_pool2d_opts o = {{k, k}, {s, s}, {pd, pd}};
	lm_tensor *idx = NULL;
	lm_tensor *y = lm_max_pool2d(xt, &o, &idx);
	if (!y) fail_msg("max_pool2d: %s", lm_last_error());
	int64_t OH = lm_tensor_shape(y)[2], OW = lm_tensor_shape(y)[3];
	double *want = malloc((size_t)(P * OH * OW) * sizeof *want);
	int64_t *wi = malloc((size_t)(P * OH * OW) * sizeof *wi);
	assert_non_null(want);
	assert_non_null(wi);
	reference(x, P, H, W, k, s, pd, OH, OW, want, wi);
	lm_tensor *yd = lm_to_dtype(y, LM_FLOAT64);
	lm_tensor *ic = lm_contiguous(idx);
	const double *got = lm_tensor_data(yd);
	const int64_t *gi = lm_tensor_data(ic);
	for (int64_t i = 0; i < P * OH * OW; i++) {
		int same = isnan(want[i]) ? isnan(got[i]) : got[i] == want[i];
		if (!same || gi[i] != wi[i])
			fail_msg("%s [%lld, %lld, %lld, %lld] k=%lld s=%lld p=%lld: output %lld is %g at %lld, "
			         "expected %g at %lld", lm_dtype_name(dt), (long long)N, (long long)C,
			         (long long)H, (long long)W, (long long)k, (long long)s, (long long)pd,
			         (long long)i, got[i], (long long)gi[i], want[i], (long long)wi[i]);
	}
	lm_tensor_release(ic);
	lm_tensor_release(yd);
	lm_tensor_release(idx);
	lm_tensor_release(y);
	lm_tensor_release(xt);
	lm_tensor_release(xd);
	free(wi);
	free(want);
	free(x);
}

static void test_two_by_two(void **state)
{
	(void)state;
	srand(7);
	static const int64_t sizes[][2] = {{28, 28}, {14, 14}, {7, 9}, {2, 2}, {3, 2}, {33, 64}, {4, 31}};
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
			lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
			check_case(dt, 2, 3, sizes[i][0], sizes[i][1], 2, 2, 0, 0.0);  /* no NaN: the fast rows */
			check_case(dt, 2, 3, sizes[i][0], sizes[i][1], 2, 2, 0, 0.03); /* some rows redone */
		}
}

static void test_general_windows(void **state)
{
	(void)state;
	srand(11);
	static const int64_t geo[][3] = {{3, 1, 1}, {3, 2, 1}, {2, 1, 0}, {2, 2, 1}, {4, 3, 2}, {1, 1, 0}};
	for (int d = 0; d < 2; d++)
		for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) {
			lm_dtype dt = d ? LM_FLOAT64 : LM_FLOAT32;
			check_case(dt, 1, 2, 9, 10, geo[i][0], geo[i][1], geo[i][2], 0.0);
			check_case(dt, 1, 2, 9, 10, geo[i][0], geo[i][1], geo[i][2], 0.05);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEAK_TEST(test_two_by_two),
		LEAK_TEST(test_general_windows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
