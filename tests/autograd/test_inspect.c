/*
 * test_inspect.c — the graph inspection API (src/autograd/inspect.c): nodes listed in the order
 * lm_backward runs them, their inputs (nodes, leaves, constants) and geometry, one node's rule run
 * on a given gradient against hand-derived values with no .grad touched, the per-node gradcheck
 * (small errors for the real rules, a large one where the function's outputs do not follow the
 * inputs, errors for another graph and for float32 inputs), a 100,000-node chain summarised, a
 * graph freed by backward, and the storage behind a view.
 * Read next: ../../src/autograd/inspect.c, test_backward.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gradcheck_util.h"
#include "lumen/autograd.h"
#include "testutil.h"

static lm_tensor *leaf(int ndim, const int64_t *shape, const double *v)
{
	lm_tensor *t = gc_tensor(ndim, shape, v);
	assert_non_null(t);
	assert_int_equal(lm_tensor_requires_grad_(t, true), LM_OK);
	return t;
}

/* y = sum((x * w) * (x * w + x)): a diamond (x * w used twice), two leaves */
static lm_tensor *diamond(lm_tensor *x, lm_tensor *w)
{
	lm_tensor *a = lm_mul(x, w), *b = lm_add(a, x), *c = lm_mul(a, b), *y = lm_sum(c, LM_DIM_ALL, false);
	assert_non_null(y);
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(c);
	return y;
}

static void test_order_and_inputs(void **state)
{
	(void)state;
	int64_t n = 3;
	double xv[3] = {1, 2, 3}, wv[3] = {0.5, -1, 2};
	lm_tensor *x = leaf(1, &n, xv), *w = leaf(1, &n, wv), *y = diamond(x, w);
	lm_graph *g = lm_graph_capture(y, 0);
	assert_non_null(g);
	assert_int_equal(lm_graph_total(g), 4);
	assert_int_equal(lm_graph_listed(g), 4);
	/* backward's order: the root, the product c, then b (its only consumer ran), then a */
	const char *want[4] = {"SumBackward", "MulBackward", "AddBackward", "MulBackward"};
	for (int i = 0; i < 4; i++) assert_string_equal(lm_graph_node_name(g, i), want[i]);
	assert_int_equal(lm_graph_depth(g), 3);
	lm_graph_input in;
	assert_int_equal(lm_graph_node_ninputs(g, 1), 2);
	assert_int_equal(lm_graph_node_input(g, 1, 0, &in), LM_OK); /* c = a * b: a is node 3 */
	assert_int_equal(in.kind, LM_GRAPH_NODE);
	assert_int_equal(in.node, 3);
	assert_int_equal(lm_graph_node_input(g, 1, 1, &in), LM_OK);
	assert_int_equal(in.node, 2);
	assert_int_equal(lm_graph_node_input(g, 2, 1, &in), LM_OK); /* b = a + x: x is a leaf */
	assert_int_equal(in.kind, LM_GRAPH_LEAF);
	assert_ptr_equal(in.leaf, x);
	assert_int_equal(in.ndim, 1);
	assert_int_equal(in.shape[0], 3);
	assert_int_equal(lm_graph_node_input(g, 1, 2, &in), LM_ERR_INDEX);
	int64_t count;
	assert_string_equal(lm_graph_op(g, 0, &count), "MulBackward");
	assert_int_equal(count, 2);
	assert_int_equal(lm_graph_op_count(g), 3);
	lm_graph_free(g);
	lm_tensor *scalar = lm_scalar(1, LM_FLOAT64);
	assert_null(lm_graph_capture(scalar, 0)); /* no grad_fn */
	assert_int_equal(lm_last_status(), LM_ERR_ARG);
	lm_tensor_release(scalar);
	lm_tensor_release(y);
	lm_tensor_release(x);
	lm_tensor_release(w);
}

/* y = sum(x * w): SumBackward hands ones on, MulBackward hands w to x and x to w. */
static void test_one_rule(void **state)
{
	(void)state;
	int64_t n = 3;
	double xv[3] = {1, 2, 3}, wv[3] = {0.5, -1, 2};
	lm_tensor *x = leaf(1, &n, xv), *w = leaf(1, &n, wv), *p = lm_mul(x, w), *y = lm_sum(p, LM_DIM_ALL, false);
	lm_graph *g = lm_graph_capture(y, 0);
	assert_non_null(g);
	lm_tensor *one = lm_scalar(1, LM_FLOAT64), *gin[2] = {NULL, NULL};
	assert_int_equal(lm_graph_node_backward(g, 0, one, gin), LM_OK);
	assert_non_null(gin[0]);
	int64_t i = 2;
	double v;
	lm_tensor_get(gin[0], &i, &v);
	assert_true(v == 1);
	lm_tensor *gp = gin[0];
	gin[0] = NULL;
	assert_int_equal(lm_graph_node_backward(g, 1, gp, gin), LM_OK);
	for (int64_t k = 0; k < 3; k++) {
		lm_tensor_get(gin[0], &k, &v);
		assert_true(v == wv[k]); /* d/dx = w */
		lm_tensor_get(gin[1], &k, &v);
		assert_true(v == xv[k]); /* d/dw = x */
	}
	assert_null(lm_tensor_grad(x)); /* nothing accumulated */
	assert_null(lm_tensor_grad(w));
	lm_tensor_release(gin[0]);
	lm_tensor_release(gin[1]);
	/* a gradient of the wrong shape, a node out of range */
	assert_int_equal(lm_graph_node_backward(g, 1, one, gin), LM_ERR_SHAPE);
	assert_int_equal(lm_graph_node_backward(g, 7, one, gin), LM_ERR_INDEX);
	/* after a backward without retain_graph, the rules' saved tensors are gone */
	assert_int_equal(lm_backward(y, NULL, false), LM_OK);
	assert_true(lm_graph_node_freed(g, 1));
	assert_int_equal(lm_graph_node_backward(g, 1, gp, gin), LM_ERR_STATE);
	lm_graph_free(g);
	lm_tensor *objs[] = {one, gp, y, p, x, w};
	for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++) lm_tensor_release(objs[k]);
}

/* fn for the check: tanh(sum(x * w) + b) */
static lm_tensor *neuron(void *ctx, int n, lm_tensor *const *in)
{
	(void)n;
	int *calls = ctx;
	++*calls;
	lm_tensor *p = lm_mul(in[0], in[1]), *s = lm_sum(p, LM_DIM_ALL, false), *a = lm_add(s, in[2]), *o = lm_tanh(a);
	lm_tensor_release(p);
	lm_tensor_release(s);
	lm_tensor_release(a);
	return o;
}

/* The same ops, but each call multiplies by a constant that drifts from call to call: the output
 * moves for a reason no rule knows, and the check must see it. */
static lm_tensor *drifting(void *ctx, int n, lm_tensor *const *in)
{
	(void)n;
	int *calls = ctx;
	double c = 1 + 0.01 * ++*calls;
	lm_tensor *k = lm_full(1, (int64_t[]){3}, LM_FLOAT64, c), *w = lm_mul(in[1], k);
	lm_tensor *p = lm_mul(in[0], w), *s = lm_sum(p, LM_DIM_ALL, false), *a = lm_add(s, in[2]), *o = lm_tanh(a);
	lm_tensor *tmp[] = {k, w, p, s, a};
	for (int i = 0; i < 5; i++) lm_tensor_release(tmp[i]);
	return o;
}

static void test_gradcheck(void **state)
{
	(void)state;
	int64_t n = 3;
	double xv[3] = {0.3, -0.2, 0.5}, wv[3] = {0.5, -1, 2}, bv = 0.1;
	lm_tensor *in[3] = {leaf(1, &n, xv), leaf(1, &n, wv), leaf(0, NULL, &bv)};
	int calls = 0;
	lm_tensor *y = neuron(&calls, 3, in);
	lm_graph *g = lm_graph_capture(y, 0);
	assert_non_null(g);
	double err[8];
	assert_int_equal(lm_graph_gradcheck(g, neuron, &calls, 3, in, 0, err), LM_OK);
	assert_int_equal(calls, 4); /* the graph shown, then the base, plus and minus runs */
	for (int64_t i = 0; i < lm_graph_total(g); i++) {
		if (!(err[i] < 1e-6)) fail_msg("node %lld (%s): error %g", (long long)i, lm_graph_node_name(g, i), err[i]);
	}
	assert_null(lm_tensor_grad(in[0])); /* the inputs are left alone */
	assert_true(lm_tensor_version(in[0]) == 0);
	/* outputs that drift between the runs: the rules no longer explain the differences */
	lm_tensor *y2 = drifting(&calls, 3, in);
	lm_graph *g2 = lm_graph_capture(y2, 0);
	assert_int_equal(lm_graph_gradcheck(g2, drifting, &calls, 3, in, 0, err), LM_OK);
	double worst = 0;
	for (int64_t i = 0; i < lm_graph_total(g2); i++) worst = err[i] > worst ? err[i] : worst;
	if (!(worst > 1e-3)) fail_msg("a drifting function passed the check (worst error %g)", worst);
	/* another graph, float32 inputs */
	assert_int_equal(lm_graph_gradcheck(g, drifting, &calls, 3, in, 0, err), LM_ERR_ARG);
	assert_non_null(strstr(lm_last_error(), "builds another graph"));
	lm_tensor *f32 = lm_to_dtype(in[0], LM_FLOAT32);
	lm_tensor_requires_grad_(f32, true);
	lm_tensor *bad[3] = {f32, in[1], in[2]};
	assert_int_equal(lm_graph_gradcheck(g, neuron, &calls, 3, bad, 0, err), LM_ERR_DTYPE);
	lm_graph_free(g);
	lm_graph_free(g2);
	lm_tensor *objs[] = {f32, y, y2, in[0], in[1], in[2]};
	for (size_t k = 0; k < sizeof objs / sizeof objs[0]; k++) lm_tensor_release(objs[k]);
}

/* 100,000 tanh in a row: counted, 100 listed, no stack taken. */
static void test_long_chain(void **state)
{
	(void)state;
	double v = 0.5;
	lm_tensor *x = leaf(0, NULL, &v), *z = lm_tensor_retain(x);
	for (int i = 0; i < 100000; i++) {
		lm_tensor *t = lm_tanh(z);
		assert_non_null(t);
		lm_tensor_release(z);
		z = t;
	}
	lm_graph *g = lm_graph_capture(z, 100);
	assert_non_null(g);
	assert_int_equal(lm_graph_total(g), 100000);
	assert_int_equal(lm_graph_listed(g), 100);
	assert_int_equal(lm_graph_depth(g), 99999);
	assert_null(lm_graph_node_name(g, 100)); /* not listed */
	int64_t count;
	assert_string_equal(lm_graph_op(g, 0, &count), "TanhBackward");
	assert_int_equal(count, 100000);
	lm_graph_free(g);
	lm_tensor_release(z);
	lm_tensor_release(x);
}

static void test_storage_numel(void **state)
{
	(void)state;
	int64_t shape[2] = {3, 4};
	lm_tensor *a = lm_zeros(2, shape, LM_FLOAT32), *v = lm_narrow(a, 1, 1, 2), *s = lm_select(v, 0, 2);
	assert_int_equal(lm_tensor_storage_numel(a), 12);
	assert_int_equal(lm_tensor_storage_numel(v), 12);
	assert_int_equal(lm_tensor_storage_numel(s), 12);
	assert_int_equal(lm_tensor_offset(s), 9);
	lm_tensor_release(s);
	lm_tensor_release(v);
	lm_tensor_release(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_inputs), cmocka_unit_test(test_one_rule), cmocka_unit_test(test_gradcheck),
		cmocka_unit_test(test_long_chain), cmocka_unit_test(test_storage_numel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
