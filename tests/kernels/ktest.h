/*
 * ktest.h — helpers shared by the kernel tests: inputs whose sums are exact in float32 (small
 * integers), sequential references, and checks that name what differs.
 * Read next: test_scan.c.
 */
#ifndef LUMEN_TESTS_KTEST_H
#define LUMEN_TESTS_KTEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumen/cuda.h"
#include "lumen/kernels.h"
#include "testutil.h"

/* n random integers in [lo, hi) as dtype dt: every partial sum is exact in float32 while
 * n * max(|lo|, |hi|) < 2^24, so any order of additions gives the sequential result. */
static inline lm_tensor *kt_ints(int64_t n, lm_dtype dt, int lo, int hi)
{
	int64_t shape[1] = {n};
	lm_tensor *t = lm_randint(lo, hi, 1, shape, dt);
	assert_non_null(t);
	return t;
}

static inline double kt_get(const lm_tensor *t, int64_t i)
{
	const void *d = lm_tensor_data(t);
	return lm_tensor_dtype(t) == LM_FLOAT64 ? ((const double *)d)[i] : ((const float *)d)[i];
}

/*
 * The layouts every kernel test gives its tensor inputs: the same shape, dtype and values,
 * stored contiguously, transposed (strides running backwards through the dims: a permuted view of
 * a contiguous tensor of the reversed shape; 1-D: every other element of a buffer twice as long)
 * or narrowed (a view into a larger tensor with a margin before and after every dim, the margin
 * full of values that would spoil any result that read them). The kernels must make their own
 * contiguous copy, so every result equals the contiguous one.
 */
enum { KT_CONTIGUOUS, KT_TRANSPOSED, KT_NARROWED, KT_LAYOUTS };
static const char *const kt_layout_name[KT_LAYOUTS] = {"contiguous", "transposed", "narrowed"};

/* x (contiguous) in layout `layout` (+1 reference). */
static inline lm_tensor *kt_layout(const lm_tensor *x, int layout)
{
	int nd = lm_tensor_ndim(x);
	lm_dtype dt = lm_tensor_dtype(x);
	int64_t shape[8];
	lm_tensor *buf, *v;
	if (layout == KT_CONTIGUOUS || nd == 0) return lm_clone(x);
	if (layout == KT_TRANSPOSED && nd == 1) {
		buf = lm_empty(2, (int64_t[]){lm_tensor_size(x, 0), 2}, dt);
		lm_tensor *t = lm_t(buf);
		v = lm_select(t, 0, 0); /* stride 2 */
		lm_tensor_release(t);
	} else if (layout == KT_TRANSPOSED) {
		int perm[8];
		for (int d = 0; d < nd; d++) shape[d] = lm_tensor_size(x, nd - 1 - d), perm[d] = nd - 1 - d;
		buf = lm_empty(nd, shape, dt);
		v = lm_permute(buf, perm);
	} else {
		for (int d = 0; d < nd; d++) shape[d] = lm_tensor_size(x, d) + 3;
		double garbage = dt == LM_UINT8 ? 251 : dt == LM_INT32 ? 99991 : 12345.5;
		buf = lm_full(nd, shape, dt, garbage);
		v = lm_tensor_retain(buf);
		for (int d = 0; d < nd; d++) {
			lm_tensor *n = lm_narrow(v, d, 1, lm_tensor_size(x, d));
			lm_tensor_release(v);
			v = n;
		}
	}
	assert_non_null(v);
	assert_int_equal(lm_copy_(v, x), LM_OK);
	lm_tensor_release(buf);
	return v;
}

/* y must equal the sequential scan of x exactly (inputs from kt_ints); returns the first index
 * that differs, or -1. */
static inline int64_t kt_scan_mismatch(const lm_tensor *x, const lm_tensor *y, bool inclusive,
                                       double tol)
{
	int64_t n = lm_tensor_numel(x);
	double s = 0;
	for (int64_t i = 0; i < n; i++) {
		double before = s;
		s += kt_get(x, i);
		double want = inclusive ? s : before;
		if (fabs(kt_get(y, i) - want) > tol * (1 + fabs(want))) return i;
	}
	return -1;
}

static inline double kt_sum(const lm_tensor *x)
{
	double s = 0;
	for (int64_t i = 0; i < lm_tensor_numel(x); i++) s += kt_get(x, i);
	return s;
}

static inline double kt_counter(const lm_kernel_info *info, const char *name)
{
	double v = NAN;
	if (!lm_kernel_info_counter(info, name, &v)) fail_msg("no counter '%s'", name);
	return v;
}

/* The call fails with status st and a message containing every string of parts (NULL-ended). */
#define KT_EXPECT_ERROR(call, st, ...)                                                             \
	do {                                                                                       \
		lm_status got_ = (call);                                                           \
		const char *parts_[] = {__VA_ARGS__, NULL};                                        \
		if (got_ != (st))                                                                  \
			fail_msg("%s: status %s, expected %s (%s)", #call, lm_status_name(got_),     \
			         lm_status_name(st), lm_last_error());                             \
		for (int p_ = 0; parts_[p_]; p_++)                                                 \
			if (!strstr(lm_last_error(), parts_[p_]))                                  \
				fail_msg("message \"%s\" lacks \"%s\"", lm_last_error(), parts_[p_]); \
	} while (0)

#endif
