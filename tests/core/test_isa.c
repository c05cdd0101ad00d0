/*
 * test_isa.c — the run-time SIMD dispatch (lumen/isa.h, src/core/cpu_isa.c).
 *
 * The choice itself on made-up CPUs (lmi_isa_choose: unknown names, paths the CPU lacks, auto,
 * any case), lm_isa_set's errors, and then every path this machine supports (scalar, avx2,
 * avx512) running the backend's vectorised loops against the same double-precision references:
 * elementwise math in every dtype and layout (dense, broadcast, transposed, large streamed
 * outputs), a + alpha*b, and reductions of views of every kind through lmi_cpu_reduce_dims
 * (transposed, permuted, narrowed, strided, flipped, expanded with stride 0, empty and size-1
 * dims, several dims at once, long lines split across threads). A path the CPU lacks is reported
 * as skipped by cmocka. The object-code check (no AVX-512 in the avx2 and scalar files) is
 * tests/core/isa_objects.sh.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/cpu/cpu.h"
#include "core/cpu_isa.h"
#include "core/lmi.h"
#include "testutil.h"

/* ---------------------------------------------------------------- the choice */

static void test_choose(void **state)
{
	(void)state;
	char w[320];
	const char *why[LM_ISA_COUNT] = {"", "this CPU lacks avx2, fma", "this CPU lacks avx512f"};
	unsigned all = 7, v3 = 3, none = 1;
	/* unset, empty and auto: the best, silently */
	assert_int_equal(lmi_isa_choose(NULL, all, why, w, sizeof w), LM_ISA_AVX512);
	assert_string_equal(w, "");
	assert_int_equal(lmi_isa_choose("", v3, why, w, sizeof w), LM_ISA_AVX2);
	assert_string_equal(w, "");
	assert_int_equal(lmi_isa_choose("AUTO", none, why, w, sizeof w), LM_ISA_SCALAR);
	assert_string_equal(w, "");
	/* a path the CPU has: taken, any case */
	assert_int_equal(lmi_isa_choose("scalar", all, why, w, sizeof w), LM_ISA_SCALAR);
	assert_string_equal(w, "");
	assert_int_equal(lmi_isa_choose("AVX2", all, why, w, sizeof w), LM_ISA_AVX2);
	assert_string_equal(w, "");
	/* a path the CPU lacks: the best it has, and a warning that says why */
	assert_int_equal(lmi_isa_choose("avx512", v3, why, w, sizeof w), LM_ISA_AVX2);
	assert_non_null(strstr(w, "LUMEN_ISA=avx512"));
	assert_non_null(strstr(w, "lacks avx512f"));
	assert_non_null(strstr(w, "using avx2"));
	assert_int_equal(lmi_isa_choose("avx2", none, why, w, sizeof w), LM_ISA_SCALAR);
	assert_non_null(strstr(w, "lacks avx2, fma"));
	assert_non_null(strstr(w, "using scalar"));
	/* an unknown name: the best, and a warning naming it and the known ones */
	assert_int_equal(lmi_isa_choose("sse9", all, why, w, sizeof w), LM_ISA_AVX512);
	assert_non_null(strstr(w, "LUMEN_ISA=sse9"));
	assert_non_null(strstr(w, "scalar, avx2, avx512"));
	assert_non_null(strstr(w, "using avx512"));
	/* a very long name is cut, not overflowing the message */
	char longname[600];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	assert_int_equal(lmi_isa_choose(longname, none, why, w, sizeof w), LM_ISA_SCALAR);
	assert_true(strlen(w) < sizeof w);
}

static void test_set_and_names(void **state)
{
	(void)state;
	lm_isa was = lm_isa_active();
	assert_true(lm_isa_supported(LM_ISA_SCALAR));
	assert_true(lm_isa_supported(lm_isa_best()));
	assert_true(lm_isa_supported(was));
	EXPECT_STATUS(lm_isa_set(LM_ISA_COUNT), LM_ERR_ARG, "isa_set: 3");
	EXPECT_STATUS(lm_isa_set((lm_isa)-1), LM_ERR_ARG, "isa_set: -1");
	for (int i = 0; i < LM_ISA_COUNT; i++) {
		lm_isa isa = (lm_isa)i, parsed;
		assert_int_equal(lm_isa_parse(lm_isa_name(isa), &parsed), LM_OK);
		assert_int_equal(parsed, isa);
		if (lm_isa_supported(isa)) {
			assert_int_equal(lm_isa_set(isa), LM_OK);
			assert_int_equal(lm_isa_active(), isa);
			assert_non_null(strstr(lm_isa_describe(), lm_isa_name(isa)));
			assert_non_null(strstr(lm_isa_describe(), "set by lm_isa_set"));
		} else {
			EXPECT_STATUS(lm_isa_set(isa), LM_ERR_UNSUPPORTED, lm_isa_name(isa));
		}
	}
	EXPECT_STATUS(lm_isa_parse("neon", &(lm_isa){0}), LM_ERR_ARG, "'neon' is not one of");
	assert_string_equal(lm_isa_name(LM_ISA_COUNT), "?");
	assert_non_null(lm_cpu_model());
	assert_int_equal(lm_isa_set(was), LM_OK);
}

/* ---------------------------------------------------------------- helpers */

static double at(const lm_tensor *t, const int64_t *idx)
{
	double v;
	assert_int_equal(lm_tensor_get(t, idx, &v), LM_OK);
	return v;
}

/* Runs the body for every index idx of shape (C order); e_ counts the elements. */
#define FOR_INDEX(nd, shape, idx, ...)                                                             \
	do {                                                                                        \
		int64_t idx[LM_MAX_DIMS] = {0}, n_ = 1;                                                 \
		for (int d_ = 0; d_ < (nd); d_++) n_ *= (shape)[d_];                                    \
		for (int64_t e_ = 0; e_ < n_; e_++) {                                                   \
			__VA_ARGS__;                                                                        \
			for (int d_ = (nd) - 1; d_ >= 0; d_--) {                                            \
				if (++idx[d_] < (shape)[d_]) break;                                             \
				idx[d_] = 0;                                                                    \
			}                                                                                   \
		}                                                                                       \
	} while (0)

static bool close_to(double got, double want, double rtol, double atol)
{
	if (isnan(want)) return isnan(got);
	if (isinf(want)) return got == want;
	return fabs(got - want) <= atol + rtol * fabs(want);
}

static lm_isa path; /* the path the current test runs */

static void use_path(lm_isa isa)
{
	if (!lm_isa_supported(isa)) {
		print_message("[  SKIPPED ] path %s: not supported here\n", lm_isa_name(isa));
		skip();
	}
	assert_int_equal(lm_isa_set(isa), LM_OK);
	path = isa;
}

/* ---------------------------------------------------------------- elementwise */

typedef double (*ref1)(double);
static double r_sigmoid(double v) { return 1 / (1 + exp(-v)); }
static double r_relu(double v) { return v < 0 ? 0 : v; }
static double r_sign(double v) { return (v > 0) - (v < 0); }
static double r_square(double v) { return v * v; }
static double r_recip(double v) { return 1 / v; }
static double r_rsqrt(double v) { return 1 / sqrt(v); }
static double r_round(double v) { return nearbyint(v); }

/* y = op(x) against ref in double, for a positive-valued x (log, sqrt) when pos. */
static void check_unary(const lm_tensor *x, lm_unop op, ref1 ref, double rtol)
{
	lm_tensor *y = lm_unary(op, x);
	assert_non_null(y);
	int nd = lm_tensor_ndim(x);
	const int64_t *sh = lm_tensor_shape(x);
	FOR_INDEX(nd, sh, i, {
		double want = ref(at(x, i)), got = at(y, i);
		if (lm_tensor_dtype(x) == LM_FLOAT32) want = (float)want;
		if (!close_to(got, want, rtol, 1e-30))
			fail_msg("%s: unary op %d at element %lld: %.9g, want %.9g", lm_isa_name(path), op,
			         (long long)e_, got, want);
	});
	lm_tensor_release(y);
}

typedef double (*ref2)(double, double);
static double r_add(double a, double b) { return a + b; }
static double r_sub(double a, double b) { return a - b; }
static double r_mul(double a, double b) { return a * b; }
static double r_div(double a, double b) { return a / b; }
static double r_max(double a, double b) { return a > b ? a : b; }
static double r_lt(double a, double b) { return a < b; }

/* c = a op b (broadcast) against ref; exact (rtol 0) for the IEEE operations. */
static void check_binary(const lm_tensor *a, const lm_tensor *b, lm_binop op, ref2 ref,
                         double rtol)
{
	lm_tensor *c = lm_binary(op, a, b);
	assert_non_null(c);
	int nd = lm_tensor_ndim(c);
	const int64_t *sh = lm_tensor_shape(c);
	int na = lm_tensor_ndim(a), nb = lm_tensor_ndim(b);
	FOR_INDEX(nd, sh, i, {
		int64_t ia[LM_MAX_DIMS], ib[LM_MAX_DIMS];
		for (int d = 0; d < na; d++) ia[d] = lm_tensor_shape(a)[d] == 1 ? 0 : i[nd - na + d];
		for (int d = 0; d < nb; d++) ib[d] = lm_tensor_shape(b)[d] == 1 ? 0 : i[nd - nb + d];
		double want = ref(at(a, ia), at(b, ib)), got = at(c, i);
		if (lm_tensor_dtype(c) == LM_FLOAT32) want = (float)want;
		if (lm_tensor_dtype(c) == LM_INT32) want = (double)(int32_t)(uint32_t)(int64_t)want;
		if (!close_to(got, want, rtol, 0))
			fail_msg("%s: binary op %d at element %lld: %.9g, want %.9g", lm_isa_name(path), op,
			         (long long)e_, got, want);
	});
	lm_tensor_release(c);
}

static void ewise_float(lm_dtype dt)
{
	double tr = dt == LM_FLOAT32 ? 4e-7 : 1e-15; /* IEEE ops: exact after rounding */
	double tm = dt == LM_FLOAT32 ? 3e-6 : 1e-13; /* vector math: a few ulp */
	lm_tensor *x = lm_randn(2, (int64_t[]){37, 61}, dt);
	lm_tensor *pos = lm_rand(2, (int64_t[]){37, 61}, dt);
	assert_int_equal(lm_binary_scalar_(LM_ADD, pos, 0.25), LM_OK);
	lm_tensor *xt = lm_transpose(x, 0, 1); /* (61, 37), strided */
	const ref1 refs[] = {exp, tanh, sin, cos, r_sigmoid, r_relu, r_sign, floor, ceil, r_round,
	                     r_square, fabs};
	const lm_unop ops[] = {LM_EXP, LM_TANH, LM_SIN, LM_COS, LM_SIGMOID, LM_RELU, LM_SIGN,
	                       LM_FLOOR, LM_CEIL, LM_ROUND, LM_SQUARE, LM_ABS};
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		bool exact = ops[k] != LM_EXP && ops[k] != LM_TANH && ops[k] != LM_SIN &&
		             ops[k] != LM_COS && ops[k] != LM_SIGMOID;
		check_unary(x, ops[k], refs[k], exact ? tr : tm);
		check_unary(xt, ops[k], refs[k], exact ? tr : tm);
	}
	check_unary(pos, LM_LOG, log, tm);
	check_unary(pos, LM_SQRT, sqrt, tr);
	check_unary(pos, LM_RSQRT, r_rsqrt, tr * 2);
	check_unary(pos, LM_RECIPROCAL, r_recip, tr);
	lm_tensor *row = lm_randn(1, (int64_t[]){61}, dt), *col = lm_randn(2, (int64_t[]){37, 1}, dt);
	lm_tensor *s = lm_randn(0, NULL, dt);
	const lm_binop bops[] = {LM_ADD, LM_SUB, LM_MUL, LM_DIV, LM_MAXIMUM, LM_LT};
	const ref2 brefs[] = {r_add, r_sub, r_mul, r_div, r_max, r_lt};
	for (size_t k = 0; k < sizeof bops / sizeof bops[0]; k++) {
		check_binary(x, pos, bops[k], brefs[k], tr); /* dense */
		check_binary(x, row, bops[k], brefs[k], tr); /* a row broadcast */
		check_binary(col, x, bops[k], brefs[k], tr); /* a column broadcast */
		check_binary(x, s, bops[k], brefs[k], tr);   /* a scalar */
		check_binary(xt, xt, bops[k], brefs[k], tr); /* strided */
	}
	/* where and a + alpha * b (not fused: bit for bit the two-op expression) */
	lm_tensor *m = lm_binary_scalar(LM_GT, x, 0.0), *w = lm_where(m, x, row);
	lm_tensor *ax = lm_add_scaled(x, pos, -1.5);
	assert_non_null(w);
	assert_non_null(ax);
	FOR_INDEX(2, lm_tensor_shape(x), i, {
		double xv = at(x, i), want = xv > 0 ? xv : at(row, &i[1]);
		assert_true(at(w, i) == want);
		double a2 = dt == LM_FLOAT32 ? (double)((float)xv + (float)(-1.5f * (float)at(pos, i)))
		                             : xv + -1.5 * at(pos, i);
		if (at(ax, i) != a2)
			fail_msg("%s: add_scaled at %lld: %.9g, want %.9g", lm_isa_name(path), (long long)e_,
			         at(ax, i), a2);
	});
	lm_tensor *all[] = {x, pos, xt, row, col, s, m, w, ax};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
}

static void ewise_int(lm_dtype dt)
{
	lm_tensor *a = lm_randint(-100, 100, 2, (int64_t[]){19, 45}, dt);
	lm_tensor *b = lm_randint(1, 50, 1, (int64_t[]){45}, dt);
	if (dt == LM_UINT8) {
		lm_tensor_release(a);
		a = lm_randint(0, 255, 2, (int64_t[]){19, 45}, dt);
	}
	lm_tensor *c = lm_mul(a, b), *d = lm_add(a, b), *n = lm_neg(a);
	assert_non_null(c);
	assert_non_null(d);
	assert_non_null(n);
	FOR_INDEX(2, lm_tensor_shape(a), i, {
		double av = at(a, i), bv = at(b, &i[1]);
		double wm = av * bv, wa = av + bv, wn = -av;
		if (dt == LM_UINT8) {
			wm = (double)((uint8_t)(int)wm);
			wa = (double)((uint8_t)(int)wa);
			wn = (double)((uint8_t)(int)wn);
		}
		assert_true(at(c, i) == wm);
		assert_true(at(d, i) == wa);
		assert_true(at(n, i) == wn);
	});
	lm_tensor *all[] = {a, b, c, d, n};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
}

/* A large result goes through the streamed-output path of lmi_iter_run_out. */
static void ewise_large(void)
{
	int64_t n = (3 << 20) + 5; /* > 8 MB of float32 */
	lm_tensor *a = lm_randn(1, &n, LM_FLOAT32), *b = lm_randn(1, &n, LM_FLOAT32);
	lm_tensor *c = lm_add(a, b), *e = lm_exp(a);
	assert_non_null(c);
	assert_non_null(e);
	const float *pa = lm_tensor_data(a), *pb = lm_tensor_data(b), *pc = lm_tensor_data(c),
	            *pe = lm_tensor_data(e);
	for (int64_t i = 0; i < n; i++) {
		if (pc[i] != pa[i] + pb[i]) fail_msg("%s: a + b at %lld", lm_isa_name(path), (long long)i);
		if (!close_to(pe[i], exp(pa[i]), 3e-6, 0))
			fail_msg("%s: exp at %lld: %.9g", lm_isa_name(path), (long long)i, pe[i]);
	}
	lm_tensor *all[] = {a, b, c, e};
	for (size_t k = 0; k < 4; k++) lm_tensor_release(all[k]);
}

static void ewise_on(lm_isa isa)
{
	use_path(isa);
	lm_manual_seed(7);
	lm_set_num_threads(2);
	ewise_float(LM_FLOAT32);
	ewise_float(LM_FLOAT64);
	ewise_int(LM_INT32);
	ewise_int(LM_INT64);
	ewise_int(LM_UINT8);
	ewise_large();
	lm_set_num_threads(0);
}

static void test_ewise_scalar(void **state) { (void)state; ewise_on(LM_ISA_SCALAR); }
static void test_ewise_avx2(void **state) { (void)state; ewise_on(LM_ISA_AVX2); }
static void test_ewise_avx512(void **state) { (void)state; ewise_on(LM_ISA_AVX512); }

/* ---------------------------------------------------------------- reductions */

/* The reference: op over the dims in mask of x (any view), in double, by walking every element. */
static void ref_reduce(lm_redop op, const lm_tensor *x, uint32_t mask, double p, double *want,
                       int64_t *widx, int64_t nout)
{
	int nd = lm_tensor_ndim(x);
	const int64_t *sh = lm_tensor_shape(x);
	double *s = calloc((size_t)(nout ? nout : 1), sizeof(double));
	double *s2 = calloc((size_t)(nout ? nout : 1), sizeof(double));
	int64_t *cnt = calloc((size_t)(nout ? nout : 1), sizeof(int64_t));
	uint64_t *is = calloc((size_t)(nout ? nout : 1), sizeof(uint64_t)); /* wrapping integers */
	bool fl = lm_dtype_is_float(lm_tensor_dtype(x));
	for (int64_t o = 0; o < nout; o++) {
		is[o] = op == LM_PROD;
		s[o] = op == LM_PROD ? 1 : op == LM_MAX || op == LM_ARGMAX ? -INFINITY
		                          : op == LM_MIN ? INFINITY : 0;
		widx[o] = 0;
	}
	for (int pass = 0; pass < (op == LM_VAR ? 2 : 1); pass++)
		FOR_INDEX(nd, sh, i, {
			int64_t o = 0, r = 0; /* output index over kept dims, flat index over reduced */
			for (int d = 0; d < nd; d++) {
				if (mask >> d & 1)
					r = r * sh[d] + i[d];
				else
					o = o * sh[d] + i[d];
			}
			double v = at(x, i);
			switch (op) {
			case LM_SUM:
			case LM_MEAN:
				s[o] += v;
				is[o] += (uint64_t)(int64_t)v;
				break;
			case LM_PROD:
				s[o] *= v;
				is[o] *= (uint64_t)(int64_t)v;
				break;
			case LM_MAX:
			case LM_ARGMAX:
				if (v > s[o] || cnt[o] == 0) {
					s[o] = v;
					widx[o] = r;
				}
				break;
			case LM_MIN:
				if (v < s[o]) s[o] = v;
				break;
			case LM_VAR:
				if (pass == 0)
					s[o] += v;
				else
					s2[o] += (v - want[o]) * (v - want[o]);
				break;
			case LM_NORM: s[o] += pow(fabs(v), p); break;
			default: break;
			}
			if (pass == 0) cnt[o]++;
		});
	for (int64_t o = 0; o < nout; o++) {
		double n = (double)cnt[o];
		switch (op) {
		case LM_MEAN: want[o] = n ? s[o] / n : NAN; break;
		case LM_VAR: want[o] = n > 1 ? s2[o] / (n - 1) : NAN; break;
		case LM_NORM: want[o] = pow(s[o], 1 / p); break;
		case LM_SUM:
		case LM_PROD: want[o] = fl ? s[o] : (double)(int64_t)is[o]; break;
		default: want[o] = s[o];
		}
	}
	free(s);
	free(s2);
	free(cnt);
	free(is);
}

/* Variance needs the mean first: the reference runs twice (mean into want, then the squares). */
static void ref_var(const lm_tensor *x, uint32_t mask, double *want, int64_t *widx, int64_t nout)
{
	ref_reduce(LM_MEAN, x, mask, 0, want, widx, nout);
	ref_reduce(LM_VAR, x, mask, 0, want, widx, nout);
}

static const char *opname(lm_redop op) { return lm_redop_name(op); }

/* lmi_cpu_reduce_dims(op, x, mask) against the reference. */
static void check_reduce(lm_redop op, const lm_tensor *x, uint32_t mask, double p, const char *what)
{
	int nd = lm_tensor_ndim(x);
	const int64_t *sh = lm_tensor_shape(x);
	int64_t oshape[LM_MAX_DIMS], nout = 1;
	int no = 0;
	for (int d = 0; d < nd; d++)
		if (!(mask >> d & 1)) {
			oshape[no++] = sh[d];
			nout *= sh[d];
		}
	int64_t rcount = 1;
	for (int d = 0; d < nd; d++)
		if (mask >> d & 1) rcount *= sh[d];
	bool pick = op == LM_MAX || op == LM_MIN || op == LM_ARGMAX;
	if (pick && rcount == 0) return; /* refused by the op layer */
	lm_dtype xdt = lm_tensor_dtype(x), odt = xdt;
	bool fl = xdt == LM_FLOAT32 || xdt == LM_FLOAT64;
	if (op == LM_ARGMAX) odt = LM_INT64;
	else if (!fl && (op == LM_SUM || op == LM_PROD)) odt = LM_INT64;
	else if (!fl && op != LM_MAX && op != LM_MIN) odt = LM_FLOAT32;
	lm_tensor *out = lm_empty(no, oshape, odt);
	assert_non_null(out);
	if (op == LM_VAR) p = 1;
	if (op == LM_NORM && p == 0) p = 2;
	assert_int_equal(lmi_cpu_reduce_dims(op, x, mask, out, NULL, p), LM_OK);
	double *want = calloc((size_t)(nout ? nout : 1), sizeof(double));
	int64_t *widx = calloc((size_t)(nout ? nout : 1), sizeof(int64_t));
	if (op == LM_VAR)
		ref_var(x, mask, want, widx, nout);
	else
		ref_reduce(op, x, mask, p, want, widx, nout);
	double rtol = xdt == LM_FLOAT32 || odt == LM_FLOAT32 ? 2e-5 : 1e-10;
	if (!fl && (op == LM_SUM || op == LM_PROD || op == LM_MAX || op == LM_MIN)) rtol = 0;
	FOR_INDEX(no, oshape, i, {
		double got = at(out, i);
		double w = op == LM_ARGMAX ? (double)widx[e_] : want[e_];
		if (odt == LM_FLOAT32) w = (float)w;
		if (!close_to(got, w, rtol, fl ? 1e-9 : 0))
			fail_msg("%s: %s over mask 0x%x of %s %s, output %lld: %.10g, want %.10g",
			         lm_isa_name(path), opname(op), mask, what, lm_dtype_name(xdt), (long long)e_,
			         got, w);
	});
	free(want);
	free(widx);
	lm_tensor_release(out);
}

/* Every op over every subset of dims of x. */
static void reduce_all_masks(const lm_tensor *x, const char *what)
{
	int nd = lm_tensor_ndim(x);
	static const lm_redop ops[] = {LM_SUM, LM_MEAN, LM_PROD, LM_MAX, LM_MIN, LM_VAR, LM_NORM};
	for (uint32_t mask = 0; mask < (1u << nd); mask++)
		for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) check_reduce(ops[k], x, mask, 0, what);
	for (int d = 0; d < nd; d++) check_reduce(LM_ARGMAX, x, 1u << d, 0, what);
	if (nd > 0) check_reduce(LM_ARGMAX, x, (1u << nd) - 1, 0, what);
	check_reduce(LM_NORM, x, (1u << nd) - 1, 3, what);
}

/* x with values near 1 (products stay finite) of dtype dt. */
static lm_tensor *near_one(int nd, const int64_t *shape, lm_dtype dt)
{
	if (dt == LM_FLOAT32 || dt == LM_FLOAT64) {
		lm_tensor *t = lm_rand(nd, shape, dt);
		assert_int_equal(lm_binary_scalar_(LM_MUL, t, 0.4), LM_OK);
		assert_int_equal(lm_binary_scalar_(LM_ADD, t, 0.8), LM_OK);
		return t;
	}
	return lm_randint(dt == LM_UINT8 ? 0 : -3, 4, nd, shape, dt);
}

static void reduce_layouts(lm_dtype dt)
{
	lm_tensor *a = near_one(2, (int64_t[]){23, 70}, dt);
	lm_tensor *at_ = lm_transpose(a, 0, 1);                         /* (70, 23) */
	lm_tensor *nar = lm_narrow(at_, 0, 3, 41);                      /* (41, 23), offset */
	lm_tensor *b = near_one(3, (int64_t[]){3, 33, 5}, dt);
	lm_tensor *perm = lm_permute(b, (int[]){2, 0, 1});             /* (5, 3, 33) */
	lm_tensor *strd = lm_as_strided(a, 2, (int64_t[]){11, 35}, (int64_t[]){140, 2}, 1);
	lm_tensor *flip = lmi_view_of(a, 2, (int64_t[]){23, 70}, (int64_t[]){-70, -1}, 23 * 70 - 1);
	lm_tensor *r1 = near_one(2, (int64_t[]){1, 9}, dt);
	lm_tensor *ex = lm_expand(r1, 3, (int64_t[]){4, 30, 9});      /* strides 0 */
	lm_tensor *one = near_one(1, (int64_t[]){1}, dt);
	lm_tensor *ex1 = lm_expand(one, 2, (int64_t[]){77, 100});      /* all stride 0 */
	lm_tensor *pair = near_one(2, (int64_t[]){517, 2}, dt);
	lm_tensor *pt = lm_transpose(pair, 0, 1);                       /* (2, 517) */
	lm_tensor *e0 = near_one(2, (int64_t[]){0, 5}, dt), *e1 = near_one(3, (int64_t[]){4, 1, 6}, dt);
	lm_tensor *s0 = near_one(0, NULL, dt);
	lm_tensor *views[] = {a, at_, nar, perm, strd, flip, ex, ex1, pt, e0, e1, s0};
	const char *names[] = {"contiguous", "transposed", "narrowed", "permuted", "strided",
	                       "flipped", "expanded", "expanded scalar", "transposed (n, 2)",
	                       "empty", "size-1 dim", "0-d"};
	for (size_t k = 0; k < sizeof views / sizeof views[0]; k++) {
		assert_non_null(views[k]);
		reduce_all_masks(views[k], names[k]);
	}
	lm_tensor *more[] = {r1, one, pair, b};
	for (size_t k = 0; k < sizeof views / sizeof views[0]; k++) lm_tensor_release(views[k]);
	for (size_t k = 0; k < 4; k++) lm_tensor_release(more[k]);
}

/* Long lines split across two threads, and the folded lanes of a transposed (n, 2). */
static void reduce_large(void)
{
	int64_t n = (1 << 17) + 777;
	lm_tensor *big = lm_randn(2, (int64_t[]){n, 2}, LM_FLOAT32);
	lm_tensor *bt = lm_transpose(big, 0, 1); /* (2, n): sum over dim 1 folds lanes */
	check_reduce(LM_SUM, bt, 2, 0, "large transposed (n, 2)");
	check_reduce(LM_SUM, bt, 3, 0, "large transposed (n, 2)");
	check_reduce(LM_MAX, bt, 3, 0, "large transposed (n, 2)");
	check_reduce(LM_VAR, bt, 2, 0, "large transposed (n, 2)");
	lm_tensor *one = lm_full(1, (int64_t[]){1}, LM_FLOAT32, 1.5);
	lm_tensor *huge = lm_expand(one, 1, (int64_t[]){(int64_t)1 << 40}); /* a multiplication */
	lm_tensor *s = lm_empty(0, NULL, LM_FLOAT64);
	lm_tensor *h64 = lm_to_dtype(one, LM_FLOAT64);
	lm_tensor *huge64 = lm_expand(h64, 1, (int64_t[]){(int64_t)1 << 40});
	assert_int_equal(lmi_cpu_reduce_dims(LM_SUM, huge64, 1, s, NULL, 0), LM_OK);
	assert_true(at(s, (int64_t[]){0}) == 1.5 * (double)((int64_t)1 << 40));
	assert_int_equal(lmi_cpu_reduce_dims(LM_VAR, huge64, 1, s, NULL, 1), LM_OK);
	assert_true(at(s, (int64_t[]){0}) == 0);
	lm_tensor *all[] = {big, bt, one, huge, s, h64, huge64};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
}

static void reduce_on(lm_isa isa)
{
	use_path(isa);
	lm_manual_seed(11);
	lm_set_num_threads(2);
	reduce_layouts(LM_FLOAT32);
	reduce_layouts(LM_FLOAT64);
	reduce_layouts(LM_INT32);
	reduce_layouts(LM_UINT8);
	reduce_large();
	lm_set_num_threads(0);
}

static void test_reduce_scalar(void **state) { (void)state; reduce_on(LM_ISA_SCALAR); }
static void test_reduce_avx2(void **state) { (void)state; reduce_on(LM_ISA_AVX2); }
static void test_reduce_avx512(void **state) { (void)state; reduce_on(LM_ISA_AVX512); }

static lm_isa initial_isa;

static int restore_isa(void **state)
{
	lm_isa_set(initial_isa);
	return lmt_leak_teardown(state);
}

int main(void)
{
	initial_isa = lm_isa_active(); /* the choice happens first, from the environment */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose),
		LEAK_TEST(test_set_and_names),
		cmocka_unit_test_setup_teardown(test_ewise_scalar, lmt_leak_setup, restore_isa),
		cmocka_unit_test_setup_teardown(test_ewise_avx2, lmt_leak_setup, restore_isa),
		cmocka_unit_test_setup_teardown(test_ewise_avx512, lmt_leak_setup, restore_isa),
		cmocka_unit_test_setup_teardown(test_reduce_scalar, lmt_leak_setup, restore_isa),
		cmocka_unit_test_setup_teardown(test_reduce_avx2, lmt_leak_setup, restore_isa),
		cmocka_unit_test_setup_teardown(test_reduce_avx512, lmt_leak_setup, restore_isa),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
