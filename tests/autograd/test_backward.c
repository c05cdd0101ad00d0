/*
 * test_backward.c — the engine: the classic pitfalls (a tensor used twice, diamonds, views of
 * leaves, in-place changes of saved tensors, backward twice), bad input (roots that do not
 * require grad, non-scalar roots without grad, grads of the wrong shape or dtype), grad mode,
 * accumulation across calls, a 100,000-op chain, memory returning to its level, a 1,000-step MLP
 * loop that does not grow, an allocation-failure sweep through backward, and .grad that cannot
 * make a reference cycle.
 * Read next: test_gradcheck.c, ../../src/autograd/engine.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gradcheck_util.h"
#include "testutil.h"

static void near(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol * (1 + fabs(want))))
		fail_msg("%s: got %.12g, expected %.12g", what, got, want);
}

static lm_tensor *leaf(int ndim, const int64_t *shape, const double *v)
{
	lm_tensor *t = gc_tensor(ndim, shape, v);
	assert_non_null(t);
	assert_int_equal(lm_tensor_requires_grad_(t, true), LM_OK);
	return t;
}

static lm_tensor *sum_all(const lm_tensor *t)
{
	lm_tensor *s = lm_sum(t, LM_DIM_ALL, false);
	assert_non_null(s);
	return s;
}

static size_t live_bytes(void)
{
	lm_memory_stats m;
	lm_memory_stats_get(&m);
	return m.live_bytes;
}

static int64_t live_tensors(void)
{
	lm_memory_stats m;
	lm_memory_stats_get(&m);
	return m.live_tensors;
}

/* ---------------------------------------------------------------- pitfalls */

static void test_used_twice(void **state)
{
	(void)state;
	double v[3] = {1.5, -2, 0.25};
	lm_tensor *x = leaf(1, (int64_t[]){3}, v);
	lm_tensor *y = lm_mul(x, x), *z = lm_add(y, x), *l = sum_all(z);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	const lm_tensor *g = lm_tensor_grad(x);
	assert_non_null(g);
	for (int i = 0; i < 3; i++) near(gc_at(g, i), 2 * v[i] + 1, 1e-12, "d(x*x + x)");
	lm_tensor_release(l);
	lm_tensor_release(z);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

static void test_diamond(void **state)
{
	(void)state;
	/* h = 2x; out = sum(exp(h) + sin(h)): both branches meet again */
	double v[4] = {0.1, -0.4, 0.7, 1.2};
	lm_tensor *x = leaf(2, (int64_t[]){2, 2}, v);
	lm_tensor *h = lm_binary_scalar(LM_MUL, x, 2), *a = lm_exp(h), *b = lm_sin(h);
	lm_tensor *c = lm_add(a, b), *l = sum_all(c);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	for (int i = 0; i < 4; i++)
		near(gc_at(lm_tensor_grad(x), i), 2 * (exp(2 * v[i]) + cos(2 * v[i])), 1e-12, "diamond");
	assert_null(lm_tensor_grad(h)); /* non-leaves keep no .grad */
	lm_tensor *ts[] = {l, c, b, a, h, x};
	for (int i = 0; i < 6; i++) lm_tensor_release(ts[i]);
}

static void test_view_of_leaf(void **state)
{
	(void)state;
	double v[12];
	for (int i = 0; i < 12; i++) v[i] = 0.5 * i - 2;
	lm_tensor *x = leaf(2, (int64_t[]){4, 3}, v);
	/* rows 1..2, transposed: sum(v^2) touches only those rows */
	lm_tensor *n = lm_narrow(x, 0, 1, 2), *t = lm_transpose(n, 0, 1), *sq = lm_mul(t, t);
	lm_tensor *l = sum_all(sq);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	const lm_tensor *g = lm_tensor_grad(x);
	for (int i = 0; i < 12; i++) {
		int row = i / 3;
		near(gc_at(g, i), row == 1 || row == 2 ? 2 * v[i] : 0, 1e-12, "view of a leaf");
	}
	lm_tensor *ts[] = {l, sq, t, n, x};
	for (int i = 0; i < 5; i++) lm_tensor_release(ts[i]);
}

/* Many selects and narrows of one tensor (a sequence's steps xs[t]): the engine adds each step's
 * gradient into the existing gradient's window in place; the sums must be the same as the rule's
 * zeros-and-add, for a non-leaf and a leaf, with a window visited twice, a transposed source, and
 * another consumer of the whole tensor. */
static void test_windows_accumulate(void **state)
{
	(void)state;
	double v[24];
	for (int i = 0; i < 24; i++) v[i] = 0.25 * i - 2.5;
	for (int as_leaf = 0; as_leaf < 2; as_leaf++) {
		lm_tensor *x = leaf(3, (int64_t[]){4, 3, 2}, v);
		/* y = 3 x (a node) or x itself (a leaf), transposed to (2, 3, 4) */
		lm_tensor *y0 = as_leaf ? lm_tensor_retain(x) : lm_binary_scalar(LM_MUL, x, 3);
		lm_tensor *y = lm_permute(y0, (int[]){2, 1, 0});
		double k = as_leaf ? 1 : 3;
		/* l = sum_t sum(y[:, :, t] * (t + 1)) + sum(y[1] ^ 2) + sum(narrow(y, 2, 1, 2)) + sum(y) */
		lm_tensor *l = NULL;
		lm_tensor *parts[8];
		int np = 0;
		for (int t = 0; t < 4; t++) {
			lm_tensor *s = lm_select(y, 2, t), *m = lm_binary_scalar(LM_MUL, s, t + 1);
			parts[np++] = sum_all(m);
			lm_tensor_release(m);
			lm_tensor_release(s);
		}
		lm_tensor *r = lm_select(y, 0, 1), *r2 = lm_mul(r, r);
		parts[np++] = sum_all(r2);
		lm_tensor *w = lm_narrow(y, 2, 1, 2);
		parts[np++] = sum_all(w);
		parts[np++] = sum_all(y);
		for (int i = 0; i < np; i++) {
			if (!l) {
				l = parts[i];
				continue;
			}
			lm_tensor *sum = lm_add(l, parts[i]);
			lm_tensor_release(l);
			lm_tensor_release(parts[i]);
			l = sum;
		}
		assert_int_equal(lm_backward(l, NULL, false), LM_OK);
		const lm_tensor *g = lm_tensor_grad(x);
		assert_non_null(g);
		for (int i = 0; i < 24; i++) {
			int a = i / 6, c = i % 2; /* x[a][b][c] = y[c][b][a] */
			double dy = (a + 1) + (c == 1 ? 2 * k * v[i] : 0) + (a == 1 || a == 2 ? 1 : 0) + 1;
			near(gc_at(g, i), k * dy, 1e-12, as_leaf ? "windows of a leaf" : "windows of a node");
		}
		lm_tensor *ts[] = {l, w, r2, r, y, y0, x};
		for (int i = 0; i < 7; i++) lm_tensor_release(ts[i]);
	}
}

static void test_inplace_on_saved(void **state)
{
	(void)state;
	double v[2] = {1, 2};
	lm_tensor *x = leaf(1, (int64_t[]){2}, v), *w = gc_tensor(1, (int64_t[]){2}, v);
	/* w does not require grad, so it may change in place; MulBackward saved it */
	lm_tensor *y = lm_mul(x, w), *l = sum_all(y);
	assert_int_equal(lm_binary_scalar_(LM_ADD, w, 1), LM_OK);
	EXPECT_STATUS(lm_backward(l, NULL, false), LM_ERR_STATE, "modified in place");
	assert_null(lm_tensor_grad(x)); /* nothing moved before the check */
	lm_tensor_release(l);
	lm_tensor_release(y);

	/* an output changed under no_grad: ExpBackward saved it */
	lm_tensor *e = lm_exp(x);
	l = sum_all(e);
	bool was = lm_set_grad_enabled(false);
	assert_int_equal(lm_binary_scalar_(LM_MUL, e, 2), LM_OK);
	lm_set_grad_enabled(was);
	EXPECT_STATUS(lm_backward(l, NULL, false), LM_ERR_STATE, "ExpBackward");
	lm_tensor_release(l);
	lm_tensor_release(e);
	lm_tensor_release(w);
	lm_tensor_release(x);
}

static void test_inplace_refused(void **state)
{
	(void)state;
	double v[2] = {1, 2};
	lm_tensor *x = leaf(1, (int64_t[]){2}, v), *y = lm_exp(x), *s = lm_select(x, 0, 1);
	EXPECT_STATUS(lm_binary_scalar_(LM_ADD, x, 1), LM_ERR_STATE, "requires grad");
	EXPECT_STATUS(lm_unary_(LM_EXP, y), LM_ERR_STATE, "requires grad");
	EXPECT_STATUS(lm_fill_(s, 0), LM_ERR_STATE, "requires grad"); /* a view of a leaf */
	bool was = lm_set_grad_enabled(false); /* the optimizer's case */
	assert_int_equal(lm_binary_scalar_(LM_ADD, x, 1), LM_OK);
	lm_set_grad_enabled(was);
	lm_tensor_release(s);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

static void test_backward_twice(void **state)
{
	(void)state;
	double v[3] = {0.5, 1, 2};
	lm_tensor *x = leaf(1, (int64_t[]){3}, v);
	lm_tensor *y = lm_exp(x), *l = sum_all(y);
	assert_int_equal(lm_backward(l, NULL, true), LM_OK);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK); /* kept: runs again, grads add */
	for (int i = 0; i < 3; i++) near(gc_at(lm_tensor_grad(x), i), 2 * exp(v[i]), 1e-12, "twice");
	EXPECT_STATUS(lm_backward(l, NULL, false), LM_ERR_STATE, "retain_graph");
	lm_tensor_release(l);
	lm_tensor_release(y);

	/* a graph without saved tensors is refused the same way */
	lm_tensor *a = lm_add(x, x);
	l = sum_all(a);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	EXPECT_STATUS(lm_backward(l, NULL, false), LM_ERR_STATE, "freed");
	lm_tensor_release(l);
	lm_tensor_release(a);
	lm_tensor_release(x);
}

/* ---------------------------------------------------------------- bad input */

static void test_bad_roots(void **state)
{
	(void)state;
	double v[6] = {1, 2, 3, 4, 5, 6};
	lm_tensor *c = gc_tensor(2, (int64_t[]){2, 3}, v);
	EXPECT_STATUS(lm_backward(c, NULL, false), LM_ERR_STATE, "does not require grad");
	EXPECT_STATUS(lm_backward(NULL, NULL, false), LM_ERR_ARG, "NULL");
	lm_tensor *x = leaf(2, (int64_t[]){2, 3}, v), *y = lm_exp(x);
	EXPECT_STATUS(lm_backward(y, NULL, false), LM_ERR_SHAPE, "one-element");
	lm_tensor *g = lm_ones(1, (int64_t[]){6}, LM_FLOAT64);
	EXPECT_STATUS(lm_backward(y, g, false), LM_ERR_SHAPE, "grad has shape [6]");
	lm_tensor_release(g);
	g = lm_ones(2, (int64_t[]){2, 3}, LM_FLOAT32);
	EXPECT_STATUS(lm_backward(y, g, false), LM_ERR_DTYPE, "float32");
	lm_tensor_release(g);
	assert_null(lm_tensor_grad(x));
	/* the right grad works, weighting each element */
	g = gc_tensor(2, (int64_t[]){2, 3}, v);
	assert_int_equal(lm_backward(y, g, false), LM_OK);
	for (int i = 0; i < 6; i++) near(gc_at(lm_tensor_grad(x), i), v[i] * exp(v[i]), 1e-12, "grad");
	lm_tensor_release(g);
	lm_tensor_release(y);
	lm_tensor_release(x);
	lm_tensor_release(c);
}

static void test_root_is_leaf(void **state)
{
	(void)state;
	double v[2] = {3, 4};
	lm_tensor *x = leaf(1, (int64_t[]){2}, v), *g = gc_tensor(1, (int64_t[]){2}, v);
	assert_int_equal(lm_backward(x, g, false), LM_OK);
	assert_int_equal(lm_backward(x, g, false), LM_OK);
	near(gc_at(lm_tensor_grad(x), 1), 8, 0, "leaf root");
	assert_false(lm_tensor_shares_storage(lm_tensor_grad(x), g)); /* .grad is its own copy */
	lm_tensor_release(g);
	lm_tensor_release(x);
}

static void test_integer_cannot_require_grad(void **state)
{
	(void)state;
	lm_tensor *i = lm_zeros(1, (int64_t[]){3}, LM_INT64);
	EXPECT_STATUS(lm_tensor_requires_grad_(i, true), LM_ERR_DTYPE, "float");
	assert_false(lm_tensor_requires_grad(i));
	lm_tensor_release(i);
	/* integer results of ops on float tensors that require grad carry no gradient */
	double v[3] = {1, 5, 2};
	lm_tensor *x = leaf(1, (int64_t[]){3}, v), *am = lm_argmax(x, 0, false);
	lm_tensor *cmp = lm_binary_scalar(LM_GT, x, 1.5);
	assert_false(lm_tensor_requires_grad(am));
	assert_false(lm_tensor_requires_grad(cmp));
	lm_tensor_release(cmp);
	lm_tensor_release(am);
	lm_tensor_release(x);
}

/* ---------------------------------------------------------------- grad mode and fields */

static void test_no_grad_and_detach(void **state)
{
	(void)state;
	double v[2] = {1, 2};
	lm_tensor *x = leaf(1, (int64_t[]){2}, v);
	bool was = lm_set_grad_enabled(false);
	assert_true(was);
	assert_false(lm_grad_enabled());
	lm_tensor *y = lm_mul(x, x);
	assert_false(lm_tensor_requires_grad(y));
	assert_null(lm_tensor_grad_fn_name(y));
	lm_set_grad_enabled(true);
	lm_tensor *d = lm_detach(x), *z = lm_mul(d, d);
	assert_false(lm_tensor_requires_grad(d));
	assert_true(lm_tensor_is_leaf(d));
	assert_false(lm_tensor_requires_grad(z));
	/* detach cuts the graph: d(x * detach(x)) = detach(x) */
	lm_tensor *w = lm_mul(x, d), *l = sum_all(w);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	for (int i = 0; i < 2; i++) near(gc_at(lm_tensor_grad(x), i), v[i], 0, "detach");
	lm_tensor *ts[] = {l, w, z, d, y, x};
	for (int i = 0; i < 6; i++) lm_tensor_release(ts[i]);
}

static void test_grad_fn_names(void **state)
{
	(void)state;
	double v[6] = {1, 2, 3, 4, 5, 6};
	lm_tensor *x = leaf(2, (int64_t[]){2, 3}, v), *xt = lm_transpose(x, 0, 1);
	assert_null(lm_tensor_grad_fn_name(x));
	assert_true(lm_tensor_is_leaf(x));
	struct {
		lm_tensor *t;
		const char *name;
	} c[] = {
		{lm_mul(x, x), "MulBackward"},           {lm_exp(x), "ExpBackward"},
		{lm_sum(x, 0, false), "SumBackward"},    {lm_amax(x, LM_DIM_ALL, false), "MaxBackward"},
		{lm_matmul(x, xt), "MatmulBackward"},    {lm_transpose(x, 0, 1), "TransposeBackward"},
		{lm_clamp(x, 0, 1), "ClampBackward"},    {lm_pow_scalar(x, 2), "PowBackward"},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		assert_non_null(c[i].t);
		assert_string_equal(lm_tensor_grad_fn_name(c[i].t), c[i].name);
		assert_false(lm_tensor_is_leaf(c[i].t));
		lm_tensor_release(c[i].t);
	}
	lm_tensor_release(xt);
	lm_tensor_release(x);
}

static void test_accumulate_across_calls(void **state)
{
	(void)state;
	double v[3] = {1, 2, 3};
	lm_tensor *x = leaf(1, (int64_t[]){3}, v);
	lm_tensor *handle = NULL;
	for (int k = 0; k < 3; k++) {
		lm_tensor *y = lm_binary_scalar(LM_MUL, x, (double)(k + 1)), *l = sum_all(y);
		assert_int_equal(lm_backward(l, NULL, false), LM_OK);
		if (k == 0) handle = lm_tensor_retain(lm_tensor_grad(x));
		lm_tensor_release(l);
		lm_tensor_release(y);
	}
	/* 1 + 2 + 3, added in place: an earlier handle on .grad sees the sum */
	for (int i = 0; i < 3; i++) near(gc_at(lm_tensor_grad(x), i), 6, 0, "accumulated");
	assert_ptr_equal(handle, lm_tensor_grad(x));
	lm_tensor_release(handle);
	/* a cleared .grad starts again */
	assert_int_equal(lm_tensor_set_grad(x, NULL), LM_OK);
	lm_tensor *y = lm_neg(x), *l = sum_all(y);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	near(gc_at(lm_tensor_grad(x), 0), -1, 0, "cleared");
	lm_tensor_release(l);
	lm_tensor_release(y);
	lm_tensor_release(x);
}

static void test_grad_dtype_conversion(void **state)
{
	(void)state;
	/* a float32 leaf in a float64 computation gets a float32 gradient */
	float fv[3] = {1, 2, 3};
	lm_tensor *x = lm_from_data(fv, 1, (int64_t[]){3}, LM_FLOAT32);
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	double dv[3] = {0.5, 0.25, 2};
	lm_tensor *w = gc_tensor(1, (int64_t[]){3}, dv);
	lm_tensor *y = lm_mul(x, w), *d = lm_to_dtype(x, LM_FLOAT64), *z = lm_add(y, d);
	lm_tensor *l = sum_all(z);
	assert_int_equal(lm_tensor_dtype(l), LM_FLOAT64);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	const lm_tensor *g = lm_tensor_grad(x);
	assert_int_equal(lm_tensor_dtype(g), LM_FLOAT32);
	for (int i = 0; i < 3; i++) near(gc_at(g, i), dv[i] + 1, 1e-7, "dtype");
	lm_tensor *ts[] = {l, z, d, y, w, x};
	for (int i = 0; i < 6; i++) lm_tensor_release(ts[i]);
}

/* ---------------------------------------------------------------- depth and memory */

static void test_chain_100k(void **state)
{
	(void)state;
	size_t bytes0 = live_bytes();
	int64_t tensors0 = live_tensors();
	double v[2] = {1, -2};
	lm_tensor *x = leaf(1, (int64_t[]){2}, v), *y = lm_tensor_retain(x);
	for (int i = 0; i < 100000; i++) { /* alternate ops so every kind of node is deep */
		lm_tensor *n = (i % 2) ? lm_binary_scalar(LM_ADD, y, 0.5) : lm_binary_scalar(LM_MUL, y, 1.0);
		assert_non_null(n);
		lm_tensor_release(y);
		y = n;
	}
	lm_tensor *l = sum_all(y);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	near(gc_at(lm_tensor_grad(x), 0), 1, 0, "chain");
	near(gc_at(lm_tensor_grad(x), 1), 1, 0, "chain");
	lm_tensor_release(l);
	lm_tensor_release(y); /* releases 100,000 nodes without recursion */
	lm_tensor_release(x);
	assert_int_equal(live_bytes(), bytes0);
	assert_int_equal(live_tensors(), tensors0);
}

static void test_chain_100k_released_unused(void **state)
{
	(void)state;
	/* a deep graph dropped without any backward: every step is made and recorded, and
	 * releasing the end frees all 200,000 nodes and their tensors (iteratively) */
	size_t bytes0 = live_bytes();
	int64_t tensors0 = live_tensors();
	double v[1] = {1};
	lm_tensor *x = leaf(1, (int64_t[]){1}, v), *y = lm_tensor_retain(x);
	for (int i = 0; i < 100000; i++) {
		lm_tensor *n = lm_exp(y);
		assert_non_null(n);
		lm_tensor *m = lm_binary_scalar(LM_MUL, n, 0.0);
		assert_non_null(m);
		lm_tensor_release(n);
		lm_tensor_release(y);
		y = m;
	}
	/* exp(0 * ...) * 0 = 0, recorded: y is the end of the chain, not a leaf */
	near(gc_at(y, 0), 0, 0, "chain value");
	assert_true(lm_tensor_requires_grad(y));
	assert_false(lm_tensor_is_leaf(y));
	assert_string_equal(lm_tensor_grad_fn_name(y), "MulBackward");
	/* the graph holds only the nodes (exp saves its output, a 1-element tensor each): x and y
	 * are the live tensors beyond those */
	assert_true(live_tensors() > tensors0 + 2);
	lm_tensor_release(y);
	assert_int_equal(live_tensors(), tensors0 + 1); /* x alone */
	lm_tensor_release(x);
	assert_int_equal(live_bytes(), bytes0);
	assert_int_equal(live_tensors(), tensors0);
}

/* A small MLP step: (N, IN) -> relu -> (N, OUT), mean squared error. Returns the loss. */
typedef struct mlp {
	lm_tensor *w1, *b1, *w2, *b2, *x, *t;
} mlp;

static double mlp_step(mlp *m, double lr)
{
	lm_tensor *h0 = lm_matmul(m->x, m->w1), *h1 = lm_add(h0, m->b1), *h = lm_relu(h1);
	lm_tensor *o0 = lm_matmul(h, m->w2), *o = lm_add(o0, m->b2), *d = lm_sub(o, m->t);
	lm_tensor *sq = lm_unary(LM_SQUARE, d), *loss = lm_mean(sq, LM_DIM_ALL, false);
	assert_non_null(loss);
	double lv;
	assert_int_equal(lm_tensor_item(loss, &lv), LM_OK);
	assert_int_equal(lm_backward(loss, NULL, false), LM_OK);
	lm_tensor *ts[] = {loss, sq, d, o, o0, h, h1, h0};
	for (int i = 0; i < 8; i++) lm_tensor_release(ts[i]);
	/* SGD under no_grad: p -= lr * p.grad; then zero the grads in place */
	bool was = lm_set_grad_enabled(false);
	lm_tensor *ps[] = {m->w1, m->b1, m->w2, m->b2};
	for (int i = 0; i < 4; i++) {
		lm_tensor *g = lm_tensor_grad(ps[i]);
		assert_non_null(g);
		lm_tensor *step = lm_binary_scalar(LM_MUL, g, lr);
		assert_int_equal(lm_binary_(LM_SUB, ps[i], step), LM_OK);
		lm_tensor_release(step);
		assert_int_equal(lm_zero_(g), LM_OK);
	}
	lm_set_grad_enabled(was);
	return lv;
}

static void mlp_init(mlp *m, int64_t n, int64_t in, int64_t hid, int64_t out)
{
	lm_manual_seed(7);
	m->x = lm_randn(2, (int64_t[]){n, in}, LM_FLOAT32);
	m->t = lm_randn(2, (int64_t[]){n, out}, LM_FLOAT32);
	lm_tensor *w1 = lm_randn(2, (int64_t[]){in, hid}, LM_FLOAT32);
	lm_tensor *w2 = lm_randn(2, (int64_t[]){hid, out}, LM_FLOAT32);
	m->w1 = lm_binary_scalar(LM_MUL, w1, 1 / sqrt((double)in));
	m->w2 = lm_binary_scalar(LM_MUL, w2, 1 / sqrt((double)hid));
	lm_tensor_release(w1);
	lm_tensor_release(w2);
	m->b1 = lm_zeros(1, (int64_t[]){hid}, LM_FLOAT32);
	m->b2 = lm_zeros(1, (int64_t[]){out}, LM_FLOAT32);
	lm_tensor *ps[] = {m->w1, m->b1, m->w2, m->b2};
	for (int i = 0; i < 4; i++) assert_int_equal(lm_tensor_requires_grad_(ps[i], true), LM_OK);
}

static void mlp_free(mlp *m)
{
	lm_tensor *ts[] = {m->w1, m->b1, m->w2, m->b2, m->x, m->t};
	for (int i = 0; i < 6; i++) lm_tensor_release(ts[i]);
}

static void test_saved_freed_after_backward(void **state)
{
	(void)state;
	lm_tensor *x = lm_rand(1, (int64_t[]){100000}, LM_FLOAT64);
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	lm_tensor *y = lm_exp(x), *l = sum_all(y);
	lm_tensor_release(y); /* now only ExpBackward's saved alias keeps exp(x) */
	size_t before = live_bytes();
	assert_int_equal(lm_backward(l, NULL, true), LM_OK); /* retained: exp(x) stays */
	lm_tensor_set_grad(x, NULL);
	assert_int_equal(live_bytes(), before);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK); /* freed: exp(x) goes */
	lm_tensor_set_grad(x, NULL);
	/* exp(x)'s storage and the saved aliases' headers */
	assert_true(live_bytes() <= before - 100000 * sizeof(double));
	lm_tensor_release(l);
	lm_tensor_release(x);
}

/* A node with many inputs (cat of 12 leaves): each gets its own slice of the gradient. */
static void test_wide_node(void **state)
{
	(void)state;
	lm_tensor *xs[12];
	for (int k = 0; k < 12; k++) {
		double v[2] = {k, -k};
		xs[k] = leaf(1, (int64_t[]){2}, v);
	}
	lm_tensor *c = lm_cat(12, xs, 0), *sq = lm_mul(c, c), *l = sum_all(sq);
	assert_non_null(l);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	for (int k = 0; k < 12; k++) {
		near(gc_at(lm_tensor_grad(xs[k]), 0), 2.0 * k, 0, "cat slice");
		near(gc_at(lm_tensor_grad(xs[k]), 1), -2.0 * k, 0, "cat slice");
		lm_tensor_release(xs[k]);
	}
	lm_tensor_release(l);
	lm_tensor_release(sq);
	lm_tensor_release(c);
}

static void test_memory_returns(void **state)
{
	(void)state;
	size_t bytes0 = live_bytes();
	int64_t tensors0 = live_tensors();
	mlp m;
	mlp_init(&m, 16, 8, 32, 4);
	size_t bytes1 = live_bytes();
	int64_t tensors1 = live_tensors();
	/* forward + backward, then drop the grads: back to the level before the forward */
	mlp_step(&m, 0.0);
	lm_tensor *ps[] = {m.w1, m.b1, m.w2, m.b2};
	for (int i = 0; i < 4; i++) lm_tensor_set_grad(ps[i], NULL);
	assert_int_equal(live_bytes(), bytes1);
	assert_int_equal(live_tensors(), tensors1);
	mlp_free(&m);
	assert_int_equal(live_bytes(), bytes0);
	assert_int_equal(live_tensors(), tensors0);
}

static void test_mlp_loop_does_not_grow(void **state)
{
	(void)state;
	mlp m;
	mlp_init(&m, 32, 8, 16, 4);
	double first = mlp_step(&m, 0.05), last = first;
	size_t bytes = live_bytes();
	int64_t tensors = live_tensors();
	for (int step = 1; step < 1000; step++) {
		last = mlp_step(&m, 0.05);
		if (live_bytes() != bytes || live_tensors() != tensors)
			fail_msg("step %d: %zu live bytes / %lld tensors, after step 1: %zu / %lld", step,
			         live_bytes(), (long long)live_tensors(), bytes, (long long)tensors);
	}
	if (!(last < 0.5 * first)) fail_msg("the MLP did not learn: loss %g -> %g", first, last);
	mlp_free(&m);
}

/* Fails the k-th allocation inside backward for k = 1, 2, ... until backward succeeds: every
 * failure is a clean error, and nothing leaks. */
static void test_allocation_failures(void **state)
{
	(void)state;
	size_t bytes0 = live_bytes();
	int64_t tensors0 = live_tensors();
	int failed = 0;
	for (uint64_t k = 1; k < 400; k++) {
		mlp m;
		mlp_init(&m, 4, 3, 5, 2);
		lm_tensor *h0 = lm_matmul(m.x, m.w1), *h1 = lm_add(h0, m.b1), *h = lm_tanh(h1);
		lm_tensor *o0 = lm_matmul(h, m.w2), *o = lm_add(o0, m.b2), *p = lm_prod(o, 1, false);
		lm_tensor *loss = lm_amax(p, LM_DIM_ALL, false);
		assert_non_null(loss);
		lm_memory_fail_after(k);
		lm_status s = lm_backward(loss, NULL, false);
		lm_memory_fail_after(0);
		lm_tensor *ts[] = {loss, p, o, o0, h, h1, h0};
		for (int i = 0; i < 7; i++) lm_tensor_release(ts[i]);
		mlp_free(&m);
		if (live_bytes() != bytes0 || live_tensors() != tensors0)
			fail_msg("failing allocation %llu: %zu bytes / %lld tensors leaked (status %s)",
			         (unsigned long long)k, live_bytes() - bytes0,
			         (long long)(live_tensors() - tensors0), lm_status_name(s));
		if (s == LM_OK) break;
		assert_int_equal(s, LM_ERR_NOMEM);
		failed++;
	}
	assert_true(failed > 10);
}

/* x.grad = x, or a gradient computed from x (whose graph holds x), kept x alive for ever: a
 * reference cycle (found by the Lua fuzzer). set_grad keeps a detached alias instead. */
static void test_set_grad_makes_no_cycle(void **state)
{
	(void)state;
	lm_tensor *x = lm_ones(1, (int64_t[]){3}, LM_FLOAT32);
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	assert_int_equal(lm_tensor_set_grad(x, x), LM_OK);
	assert_true(lm_tensor_shares_storage(lm_tensor_grad(x), x));
	assert_false(lm_tensor_requires_grad(lm_tensor_grad(x)));
	lm_tensor *y = lm_binary_scalar(LM_MUL, x, 2);
	assert_non_null(lm_tensor_grad_fn_name(y));
	assert_int_equal(lm_tensor_set_grad(x, y), LM_OK);
	assert_null(lm_tensor_grad_fn_name(lm_tensor_grad(x)));
	lm_tensor_release(y);
	lm_tensor_release(x); /* the leak check of the teardown sees whether x went */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_used_twice),
		cmocka_unit_test(test_diamond),
		cmocka_unit_test(test_view_of_leaf),
		cmocka_unit_test(test_inplace_on_saved),
		cmocka_unit_test(test_inplace_refused),
		cmocka_unit_test(test_backward_twice),
		cmocka_unit_test(test_bad_roots),
		cmocka_unit_test(test_root_is_leaf),
		cmocka_unit_test(test_integer_cannot_require_grad),
		cmocka_unit_test(test_no_grad_and_detach),
		cmocka_unit_test(test_grad_fn_names),
		cmocka_unit_test(test_accumulate_across_calls),
		cmocka_unit_test(test_grad_dtype_conversion),
		cmocka_unit_test(test_chain_100k),
		cmocka_unit_test(test_chain_100k_released_unused),
		cmocka_unit_test(test_saved_freed_after_backward),
		cmocka_unit_test(test_wide_node),
		cmocka_unit_test(test_windows_accumulate),
		cmocka_unit_test(test_memory_returns),
		cmocka_unit_test(test_mlp_loop_does_not_grow),
		cmocka_unit_test(test_allocation_failures),
		LEAK_TEST(test_set_grad_makes_no_cycle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
