/*
 * test_gradcheck.c — gradcheck itself (it catches a wrong gradient and names the worst element;
 * it refuses unsuitable inputs; it leaves .grad as it was), chains of ops through gradcheck
 * (softmax cross-entropy, log-sum-exp, a normalisation, an MLP, attention, views and joins of
 * views, a diamond with broadcasting), and the documented choices of the rules where no
 * derivative exists: ties of maximum/minimum and max/min, prod at zeros, norms at 0, pow at 0,
 * piecewise-constant ops. Read next: test_gradcheck_table.c, ../../docs/autograd.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_util.h"
#include "testutil.h"

static void near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol * (1 + fabs(want))))
		fail_msg("%s: got %.12g, expected %.12g", what, got, want);
}

/* A float64 leaf of the given shape, values spread over [lo, hi] (distinct, none at 0). */
static lm_tensor *rand_leaf(ot_rng *r, int ndim, const int64_t *shape, double lo, double hi)
{
	lm_tensor *t = lm_empty(ndim, shape, LM_FLOAT64);
	assert_non_null(t);
	gc_spread(r, t, lo, hi, 0.3);
	assert_int_equal(lm_tensor_requires_grad_(t, true), LM_OK);
	return t;
}

static void expect_ok(lm_gradcheck_fn fn, void *ctx, int n, lm_tensor *const *in, const char *what)
{
	lm_gradcheck_report rep;
	lm_status s = lm_gradcheck(fn, ctx, n, in, NULL, &rep);
	if (s) fail_msg("%s: gradcheck failed to run: %s", what, lm_last_error());
	if (!rep.ok) fail_msg("%s: %s", what, rep.message);
}

/* Releases a NULL-terminated list. */
static void drop(lm_tensor **ts)
{
	for (; *ts; ts++) lm_tensor_release(*ts);
}

/* ---------------------------------------------------------------- gradcheck itself */

/* x * detach(x): backward says x, the truth is 2x. */
static lm_tensor *wrong_square(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	lm_tensor *d = lm_detach(in[0]), *y = lm_mul(in[0], d);
	lm_tensor_release(d);
	return y;
}

static void test_catches_wrong_gradient(void **state)
{
	(void)state;
	/* the largest |x| (so the largest error) sits at [1, 2] */
	double v[6] = {0.1, -0.2, 0.3, 0.4, 0.5, -3.0};
	lm_tensor *x = gc_tensor(2, (int64_t[]){2, 3}, v);
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	lm_gradcheck_report rep;
	assert_int_equal(lm_gradcheck(wrong_square, NULL, 1, &x, NULL, &rep), LM_OK);
	assert_false(rep.ok);
	assert_int_equal(rep.input, 0);
	assert_int_equal(rep.ndim, 2);
	assert_int_equal(rep.index[0], 1);
	assert_int_equal(rep.index[1], 2);
	near(rep.numeric / rep.analytic, 2, 1e-6, "numeric is twice analytic");
	assert_non_null(strstr(rep.message, "[1, 2]"));
	assert_null(lm_tensor_grad(x)); /* .grad left as it was */
	lm_tensor_release(x);
}

static lm_tensor *square_fn(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	return lm_mul(in[0], in[0]);
}

static lm_tensor *failing_fn(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	return lm_matmul(in[0], in[0]); /* (3) x (3) is fine; (2, 3) x (2, 3) is not */
}

static lm_tensor *to32_fn(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	return lm_to_dtype(in[0], LM_FLOAT32);
}

static void test_refuses_bad_input(void **state)
{
	(void)state;
	lm_gradcheck_report rep;
	float fv[3] = {1, 2, 3};
	lm_tensor *f = lm_from_data(fv, 1, (int64_t[]){3}, LM_FLOAT32);
	assert_int_equal(lm_tensor_requires_grad_(f, true), LM_OK);
	EXPECT_STATUS(lm_gradcheck(square_fn, NULL, 1, &f, NULL, &rep), LM_ERR_DTYPE, "float64");
	double v[6] = {1, 2, 3, 4, 5, 6};
	lm_tensor *x = gc_tensor(2, (int64_t[]){2, 3}, v);
	EXPECT_STATUS(lm_gradcheck(square_fn, NULL, 1, &x, NULL, &rep), LM_ERR_ARG, "no input");
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	EXPECT_STATUS(lm_gradcheck(failing_fn, NULL, 1, &x, NULL, &rep), LM_ERR_SHAPE, "matmul");
	EXPECT_STATUS(lm_gradcheck(to32_fn, NULL, 1, &x, NULL, &rep), LM_ERR_DTYPE, "float32");
	lm_tensor *e = lm_exp(x);
	EXPECT_STATUS(lm_gradcheck(square_fn, NULL, 1, &e, NULL, &rep), LM_ERR_ARG, "leaves");
	EXPECT_STATUS(lm_gradcheck(NULL, NULL, 1, &x, NULL, &rep), LM_ERR_ARG, "required");
	/* the caller's .grad survives a check */
	lm_tensor *g = lm_ones(2, (int64_t[]){2, 3}, LM_FLOAT64);
	assert_int_equal(lm_tensor_set_grad(x, g), LM_OK);
	assert_int_equal(lm_gradcheck(square_fn, NULL, 1, &x, NULL, &rep), LM_OK);
	assert_true(rep.ok);
	assert_true(lm_tensor_shares_storage(lm_tensor_grad(x), g)); /* set_grad keeps an alias */
	near(gc_at(g, 4), 1, 0, ".grad untouched");
	lm_tensor *ts[] = {g, e, x, f, NULL};
	drop(ts);
}

/* ---------------------------------------------------------------- chains */

/* cross-entropy of softmax(x @ w + b) against one-hot targets, from core ops */
static lm_tensor *softmax_xent(void *ctx, int n, lm_tensor *const *in)
{
	(void)n;
	const lm_tensor *target = ctx;
	lm_tensor *z0 = lm_matmul(in[0], in[1]), *z = lm_add(z0, in[2]);
	lm_tensor *m = lm_amax(z, 1, true), *zc = lm_sub(z, m), *e = lm_exp(zc);
	lm_tensor *s = lm_sum(e, 1, true), *ls = lm_log(s), *lp = lm_sub(zc, ls);
	lm_tensor *pick = lm_mul(lp, target), *tot = lm_sum(pick, LM_DIM_ALL, false);
	lm_tensor *loss = lm_binary_scalar(LM_MUL, tot, -1.0 / 4);
	lm_tensor *ts[] = {z0, z, m, zc, e, s, ls, lp, pick, tot, NULL};
	drop(ts);
	return loss;
}

static void test_chain_softmax_xent(void **state)
{
	(void)state;
	ot_rng r = {1};
	double tv[12] = {0};
	for (int i = 0; i < 4; i++) tv[i * 3 + (i % 3)] = 1;
	lm_tensor *t = gc_tensor(2, (int64_t[]){4, 3}, tv);
	lm_tensor *in[3] = {rand_leaf(&r, 2, (int64_t[]){4, 5}, -1, 1),
	                    rand_leaf(&r, 2, (int64_t[]){5, 3}, -1, 1),
	                    rand_leaf(&r, 1, (int64_t[]){3}, -0.5, 0.5)};
	expect_ok(softmax_xent, t, 3, in, "softmax cross-entropy");
	lm_tensor *ts[] = {in[0], in[1], in[2], t, NULL};
	drop(ts);
}

/* (x - mean) / sqrt(var + 1e-5) * g + b over the last dim, then tanh */
static lm_tensor *normalise(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	lm_tensor *mu = lm_mean(in[0], -1, true), *v = lm_var(in[0], -1, true, 0);
	lm_tensor *ve = lm_binary_scalar(LM_ADD, v, 1e-5), *sd = lm_sqrt(ve);
	lm_tensor *xc = lm_sub(in[0], mu), *xn = lm_div(xc, sd), *xs = lm_mul(xn, in[1]);
	lm_tensor *xb = lm_add(xs, in[2]), *y = lm_tanh(xb);
	lm_tensor *ts[] = {mu, v, ve, sd, xc, xn, xs, xb, NULL};
	drop(ts);
	return y;
}

static void test_chain_normalise(void **state)
{
	(void)state;
	ot_rng r = {2};
	lm_tensor *in[3] = {rand_leaf(&r, 3, (int64_t[]){2, 3, 6}, -2, 2),
	                    rand_leaf(&r, 1, (int64_t[]){6}, 0.5, 1.5),
	                    rand_leaf(&r, 1, (int64_t[]){6}, -0.5, 0.5)};
	expect_ok(normalise, NULL, 3, in, "normalisation");
	lm_tensor *ts[] = {in[0], in[1], in[2], NULL};
	drop(ts);
}

/* two-layer MLP with sigmoid and leaky relu, the batch as a 3-D tensor */
static lm_tensor *mlp(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	lm_tensor *h0 = lm_matmul(in[0], in[1]), *h1 = lm_add(h0, in[2]), *h = lm_leaky_relu(h1, 0.1);
	lm_tensor *o0 = lm_matmul(h, in[3]), *o = lm_sigmoid(o0), *y = lm_std(o, 1, false, 1);
	lm_tensor *ts[] = {h0, h1, h, o0, o, NULL};
	drop(ts);
	return y;
}

static void test_chain_mlp(void **state)
{
	(void)state;
	ot_rng r = {3};
	lm_tensor *in[4] = {rand_leaf(&r, 3, (int64_t[]){2, 3, 4}, -1, 1),
	                    rand_leaf(&r, 2, (int64_t[]){4, 5}, -1, 1),
	                    rand_leaf(&r, 1, (int64_t[]){5}, -0.3, 0.3),
	                    rand_leaf(&r, 2, (int64_t[]){5, 2}, -1, 1)};
	expect_ok(mlp, NULL, 4, in, "MLP");
	lm_tensor *ts[] = {in[0], in[1], in[2], in[3], NULL};
	drop(ts);
}

/* softmax(q k^T / sqrt(d)) v with batched matmuls and a transposed view */
static lm_tensor *attention(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	lm_tensor *kt = lm_transpose(in[1], -1, -2), *s0 = lm_matmul(in[0], kt);
	lm_tensor *s = lm_binary_scalar(LM_DIV, s0, 2.0), *m = lm_amax(s, -1, true);
	lm_tensor *sc = lm_sub(s, m), *e = lm_exp(sc), *z = lm_sum(e, -1, true), *p = lm_div(e, z);
	lm_tensor *y = lm_matmul(p, in[2]);
	lm_tensor *ts[] = {kt, s0, s, m, sc, e, z, p, NULL};
	drop(ts);
	return y;
}

static void test_chain_attention(void **state)
{
	(void)state;
	ot_rng r = {4};
	lm_tensor *in[3] = {rand_leaf(&r, 3, (int64_t[]){2, 3, 4}, -1, 1),
	                    rand_leaf(&r, 3, (int64_t[]){2, 5, 4}, -1, 1),
	                    rand_leaf(&r, 2, (int64_t[]){5, 3}, -1, 1)}; /* v broadcast over batch */
	expect_ok(attention, NULL, 3, in, "attention");
	lm_tensor *ts[] = {in[0], in[1], in[2], NULL};
	drop(ts);
}

/* views on views: narrow, permute, expand, reshape, select, squeeze; a diamond through them */
static lm_tensor *views(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	lm_tensor *a = lm_narrow(in[0], 1, 1, 3);                  /* (4, 3, 2) */
	lm_tensor *b = lm_permute(a, (int[]){2, 0, 1});            /* (2, 4, 3) */
	lm_tensor *c = lm_unsqueeze(in[1], 0);                     /* (1, 4, 3) */
	lm_tensor *d = lm_expand(c, 3, (int64_t[]){2, 4, 3});
	lm_tensor *e = lm_mul(b, d), *f = lm_reshape(e, 2, (int64_t[]){8, 3});
	lm_tensor *g = lm_select(f, 1, 2), *h = lm_sin(a), *hs = lm_sum(h, LM_DIM_ALL, false);
	lm_tensor *y = lm_add(g, hs); /* a depends on in[0] twice: through e and through h */
	lm_tensor *ts[] = {a, b, c, d, e, f, g, h, hs, NULL};
	drop(ts);
	return y;
}

static void test_chain_views(void **state)
{
	(void)state;
	ot_rng r = {5};
	lm_tensor *in[2] = {rand_leaf(&r, 3, (int64_t[]){4, 5, 2}, -2, 2),
	                    rand_leaf(&r, 2, (int64_t[]){4, 3}, -2, 2)};
	expect_ok(views, NULL, 2, in, "views");
	lm_tensor *ts[] = {in[0], in[1], NULL};
	drop(ts);
}

/* pow with two tensors, where, clamp, maximum, prod and norm in one expression */
static lm_tensor *mixed(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	lm_tensor *p = lm_pow(in[0], in[1]);                    /* (3, 4) ^ (4) */
	lm_tensor *c = lm_binary_scalar(LM_GT, in[1], 1.0);
	lm_tensor *w = lm_where(c, p, in[0]);
	lm_tensor *q = lm_clamp(w, 0.7, 1.8), *m = lm_maximum(q, in[1]);
	lm_tensor *pr = lm_prod(m, 0, false), *nr = lm_norm(m, 3, 1, true), *s = lm_add(nr, pr);
	lm_tensor *ts[] = {p, c, w, q, m, pr, nr, NULL};
	drop(ts);
	return s;
}

static void test_chain_mixed(void **state)
{
	(void)state;
	ot_rng r = {6};
	lm_tensor *in[2] = {rand_leaf(&r, 2, (int64_t[]){3, 4}, 0.5, 2),
	                    rand_leaf(&r, 1, (int64_t[]){4}, 0.5, 1.9)};
	expect_ok(mixed, NULL, 2, in, "mixed");
	lm_tensor *ts[] = {in[0], in[1], NULL};
	drop(ts);
}

/* ---------------------------------------------------------------- documented choices */

/* d sum(f(x)) / dx for a single input, returned as a new tensor. */
static lm_tensor *grad_of(lm_tensor *(*f)(const lm_tensor *), lm_tensor *x)
{
	lm_tensor *y = f(x), *l = lm_sum(y, LM_DIM_ALL, false);
	assert_non_null(l);
	assert_int_equal(lm_tensor_set_grad(x, NULL), LM_OK);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	lm_tensor_release(l);
	lm_tensor_release(y);
	return lm_tensor_retain(lm_tensor_grad(x));
}

static void expect_values(const lm_tensor *g, const double *want, int n, const char *what)
{
	assert_int_equal(lm_tensor_numel(g), n);
	for (int i = 0; i < n; i++) {
		char w[64];
		snprintf(w, sizeof w, "%s[%d]", what, i);
		near(gc_at(g, i), want[i], 1e-12, w);
	}
}

static lm_tensor *amax_all(const lm_tensor *x) { return lm_amax(x, LM_DIM_ALL, false); }
static lm_tensor *amin_dim(const lm_tensor *x) { return lm_amin(x, 1, false); }
static lm_tensor *max_dim_values(const lm_tensor *x)
{
	lm_tensor *v = NULL, *i = NULL;
	lm_max_dim(x, 1, false, &v, &i);
	lm_tensor_release(i);
	return v;
}
static lm_tensor *norm_inf(const lm_tensor *x) { return lm_norm(x, INFINITY, LM_DIM_ALL, false); }
static lm_tensor *norm_2(const lm_tensor *x) { return lm_norm(x, 2, 1, false); }
static lm_tensor *norm_half(const lm_tensor *x) { return lm_norm(x, 0.5, LM_DIM_ALL, false); }
static lm_tensor *prod_dim(const lm_tensor *x) { return lm_prod(x, 1, true); }
static lm_tensor *abs_fn(const lm_tensor *x) { return lm_abs(x); }
static lm_tensor *relu_fn(const lm_tensor *x) { return lm_relu(x); }
static lm_tensor *clamp_fn(const lm_tensor *x) { return lm_clamp(x, 0, 2); }
static lm_tensor *floor_fn(const lm_tensor *x) { return lm_floor(x); }
static lm_tensor *sign_fn(const lm_tensor *x) { return lm_sign(x); }
static lm_tensor *round_fn(const lm_tensor *x) { return lm_round(x); }
static lm_tensor *ceil_fn(const lm_tensor *x) { return lm_ceil(x); }

static void test_ties_of_max_and_min(void **state)
{
	(void)state;
	double v[8] = {1, 3, 3, 2, 5, -1, 5, 5};
	lm_tensor *x = gc_tensor(2, (int64_t[]){2, 4}, v), *g;
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	/* amax over all: the three 5s share the gradient */
	g = grad_of(amax_all, x);
	expect_values(g, (double[]){0, 0, 0, 0, 1.0 / 3, 0, 1.0 / 3, 1.0 / 3}, 8, "amax ties");
	lm_tensor_release(g);
	/* max over a dim with indices: all to the first of equal values */
	g = grad_of(max_dim_values, x);
	expect_values(g, (double[]){0, 1, 0, 0, 1, 0, 0, 0}, 8, "max_dim ties");
	lm_tensor_release(g);
	/* amin over a dim: each row's minimum (no ties here) */
	g = grad_of(amin_dim, x);
	expect_values(g, (double[]){1, 0, 0, 0, 0, 1, 0, 0}, 8, "amin");
	lm_tensor_release(g);
	lm_tensor_release(x);

	/* maximum/minimum at a tie: half each */
	double a[3] = {1, 2, 3}, b[3] = {1, 5, 0};
	lm_tensor *ta = gc_tensor(1, (int64_t[]){3}, a), *tb = gc_tensor(1, (int64_t[]){3}, b);
	lm_tensor_requires_grad_(ta, true);
	lm_tensor_requires_grad_(tb, true);
	for (int k = 0; k < 2; k++) {
		lm_tensor *m = k ? lm_minimum(ta, tb) : lm_maximum(ta, tb);
		lm_tensor *l = lm_sum(m, LM_DIM_ALL, false);
		assert_int_equal(lm_backward(l, NULL, false), LM_OK);
		lm_tensor_release(l);
		lm_tensor_release(m);
	}
	/* maximum gives (0.5, 0, 1) / (0.5, 1, 0); minimum (0.5, 1, 0) / (0.5, 0, 1): summed */
	expect_values(lm_tensor_grad(ta), (double[]){1, 1, 1}, 3, "maximum+minimum a");
	expect_values(lm_tensor_grad(tb), (double[]){1, 1, 1}, 3, "maximum+minimum b");
	lm_tensor_set_grad(ta, NULL);
	lm_tensor_set_grad(tb, NULL);
	lm_tensor *m = lm_maximum(ta, tb), *l = lm_sum(m, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	expect_values(lm_tensor_grad(ta), (double[]){0.5, 0, 1}, 3, "maximum a");
	expect_values(lm_tensor_grad(tb), (double[]){0.5, 1, 0}, 3, "maximum b");
	lm_tensor *ts[] = {l, m, ta, tb, NULL};
	drop(ts);
}

static void test_prod_with_zeros(void **state)
{
	(void)state;
	/* rows: no zero, one zero, two zeros */
	double v[9] = {2, 3, 4, 2, 0, 5, 0, 7, 0};
	lm_tensor *x = gc_tensor(2, (int64_t[]){3, 3}, v), *g;
	lm_tensor_requires_grad_(x, true);
	g = grad_of(prod_dim, x);
	expect_values(g, (double[]){12, 8, 6, 0, 10, 0, 0, 0, 0}, 9, "prod zeros");
	lm_tensor_release(g);
	lm_tensor_release(x);
}

static void test_norm_edges(void **state)
{
	(void)state;
	double v[6] = {3, -4, 0, 0, 0, 0};
	lm_tensor *x = gc_tensor(2, (int64_t[]){2, 3}, v), *g;
	lm_tensor_requires_grad_(x, true);
	g = grad_of(norm_2, x); /* row 2 is all zero: gradient 0, not NaN */
	expect_values(g, (double[]){0.6, -0.8, 0, 0, 0, 0}, 6, "norm 2");
	lm_tensor_release(g);
	g = grad_of(norm_inf, x); /* max |x| = 4 at [0, 1], with the sign */
	expect_values(g, (double[]){0, -1, 0, 0, 0, 0}, 6, "norm inf");
	lm_tensor_release(g);
	g = grad_of(norm_half, x); /* |x|^(p-1) at 0 is infinite: 0 there */
	for (int i = 0; i < 6; i++) assert_true(isfinite(gc_at(g, i)));
	near(gc_at(g, 2), 0, 0, "norm 0.5 at 0");
	lm_tensor_release(g);
	lm_tensor_release(x);
}

static void test_kinks_and_constants(void **state)
{
	(void)state;
	double v[5] = {-1.5, 0, 0.5, 2, 2.5};
	lm_tensor *x = gc_tensor(1, (int64_t[]){5}, v), *g;
	lm_tensor_requires_grad_(x, true);
	g = grad_of(abs_fn, x);
	expect_values(g, (double[]){-1, 0, 1, 1, 1}, 5, "abs");
	lm_tensor_release(g);
	g = grad_of(relu_fn, x);
	expect_values(g, (double[]){0, 0, 1, 1, 1}, 5, "relu");
	lm_tensor_release(g);
	g = grad_of(clamp_fn, x); /* bounds included */
	expect_values(g, (double[]){0, 1, 1, 1, 0}, 5, "clamp");
	lm_tensor_release(g);
	lm_tensor *(*consts[])(const lm_tensor *) = {floor_fn, sign_fn, round_fn, ceil_fn};
	for (int k = 0; k < 4; k++) {
		g = grad_of(consts[k], x);
		expect_values(g, (double[]){0, 0, 0, 0, 0}, 5, "piecewise constant");
		lm_tensor_release(g);
	}
	lm_tensor_release(x);

	/* pow(a, b) at a = 0: d/db is 0 (not NaN) for b >= 0; d/da with b = 0 is 0 */
	double av[2] = {0, 2}, bv[2] = {2, 0};
	lm_tensor *a = gc_tensor(1, (int64_t[]){2}, av), *b = gc_tensor(1, (int64_t[]){2}, bv);
	lm_tensor_requires_grad_(a, true);
	lm_tensor_requires_grad_(b, true);
	lm_tensor *p = lm_pow(a, b), *l = lm_sum(p, LM_DIM_ALL, false);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	expect_values(lm_tensor_grad(a), (double[]){0, 0}, 2, "pow d/da");
	expect_values(lm_tensor_grad(b), (double[]){0, log(2)}, 2, "pow d/db");
	lm_tensor *ts[] = {l, p, a, b, NULL};
	drop(ts);
}

static lm_tensor *matmul_fn(void *ctx, int n, lm_tensor *const *in)
{
	(void)ctx;
	(void)n;
	return lm_matmul(in[0], in[1]);
}

static void test_matmul_forms(void **state)
{
	(void)state;
	/* every form of matmul, one gradcheck each (the table draws them at random too) */
	static const int64_t shapes[][2][5] = {
		/* ndim a, a dims...; ndim b, b dims... (first entry is ndim) */
		{{1, 4}, {1, 4}},             {{2, 3, 4}, {1, 4}},          {{1, 4}, {2, 4, 2}},
		{{2, 3, 4}, {2, 4, 2}},       {{3, 2, 3, 4}, {2, 4, 2}},    {{2, 3, 4}, {3, 2, 4, 2}},
		{{3, 2, 3, 4}, {3, 1, 4, 2}}, {{4, 2, 1, 3, 4}, {3, 3, 4, 2}}, {{1, 4}, {3, 2, 4, 2}},
		{{3, 2, 3, 4}, {1, 4}},
	};
	ot_rng r = {9};
	for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
		lm_tensor *in[2];
		for (int j = 0; j < 2; j++)
			in[j] = rand_leaf(&r, (int)shapes[k][j][0], &shapes[k][j][1], -1, 1);
		char what[32];
		snprintf(what, sizeof what, "matmul form %zu", k);
		expect_ok(matmul_fn, NULL, 2, in, what);
		lm_tensor_release(in[0]);
		lm_tensor_release(in[1]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catches_wrong_gradient),
		cmocka_unit_test(test_refuses_bad_input),
		cmocka_unit_test(test_chain_softmax_xent),
		cmocka_unit_test(test_chain_normalise),
		cmocka_unit_test(test_chain_mlp),
		cmocka_unit_test(test_chain_attention),
		cmocka_unit_test(test_chain_views),
		cmocka_unit_test(test_chain_mixed),
		cmocka_unit_test(test_ties_of_max_and_min),
		cmocka_unit_test(test_prod_with_zeros),
		cmocka_unit_test(test_norm_edges),
		cmocka_unit_test(test_kinks_and_constants),
		cmocka_unit_test(test_matmul_forms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
