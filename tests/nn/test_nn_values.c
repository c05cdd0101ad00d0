/*
 * test_nn_values.c — the nn ops against values computed by PyTorch 1.13 (Debian's python3-torch)
 * with tests/nn/torch_values.py, which prints the constants below from the same literal inputs.
 * Complements the op table's independent double-loop references with a second, outside oracle,
 * including logits of +-1e4 (no overflow) and a cross-entropy gradient.
 */
#include <math.h>
#include <stdio.h>

#include "lumen/nn.h"
#include "testutil.h"

static void expect(const char *what, const lm_tensor *t, const double *want, int64_t n, double tol)
{
	if (!t) fail_msg("%s: failed: %s", what, lm_last_error());
	if (lm_tensor_numel(t) < n) fail_msg("%s: %lld elements, expected %lld", what,
	                                     (long long)lm_tensor_numel(t), (long long)n);
	lm_tensor *c = lm_contiguous(t);
	const double *v = lm_tensor_data(c);
	for (int64_t i = 0; i < n; i++)
		if (!(fabs(v[i] - want[i]) <= tol * (1 + fabs(want[i]))))
			fail_msg("%s: element %lld is %.10g, PyTorch gives %.10g", what, (long long)i, v[i], want[i]);
	lm_tensor_release(c);
}

#define N_OF(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

static lm_tensor *logits(void)
{
	static const double x[] = {1.0, -2.0, 3.0, 0.5, 0.25, 0.0, -1.5, 2.0, -3.0, 1.0, 1e4, -1e4};
	return lm_from_data(x, 2, (int64_t[]){3, 4}, LM_FLOAT64);
}

static void test_softmax_family(void **state)
{
	(void)state;
	static const double sm[] = {0.1105537504, 0.005504147128, 0.8168878634, 0.06705423914,
	                            0.1297491867, 0.1010487682, 0.02254702784, 0.7466550172, 0, 0, 1, 0};
	static const double lsm[] = {-0.3992338619, -3.349012217, -9997, -1.701413278, -1.149233862,
	                             -1.349012217, -10001.5, -0.201413278, -4.399233862, -0.3490122168,
	                             0, -10002.20141};
	static const double ge[] = {0.8413447461, -0.0455002639, 2.995950306, 0.3457312306,
	                            0.1496765814, 0, -0.1002108019, 1.954499736};
	static const double get[] = {0.8411919906, -0.04540230591, 2.996362608, 0.3457140098,
	                             0.1496753507, 0, -0.100428423, 1.954597694};
	lm_tensor *x = logits(), *top = lm_narrow(x, 0, 0, 2);
	lm_tensor *a = lm_softmax(x, 1), *b = lm_log_softmax(x, 0), *c = lm_gelu(top, false), *d = lm_gelu(top, true);
	expect("softmax", a, sm, N_OF(sm), 1e-9);
	expect("log_softmax", b, lsm, N_OF(lsm), 1e-9);
	expect("gelu", c, ge, N_OF(ge), 1e-9);
	expect("gelu tanh", d, get, N_OF(get), 1e-9);
	lm_tensor *objs[] = {x, top, a, b, c, d};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_cross_entropy(void **state)
{
	(void)state;
	static const double mean[] = {0.7481351575}, smooth_sum[] = {1002.538155};
	static const double grad[] = {0.03685125012, 0.001834715709, -0.06103737888, 0.02235141305,
	                              -0.2900836044, 0.03368292274, 0.007515675946, 0.2488850057,
	                              0, 0, 0, 0};
	lm_tensor *x = logits(), *t = lm_from_data((int64_t[]){2, 0, 2}, 1, (int64_t[]){3}, LM_INT64);
	assert_int_equal(lm_tensor_requires_grad_(x, true), LM_OK);
	lm_tensor *l = lm_cross_entropy(x, t, LM_REDUCTION_MEAN, 0);
	lm_tensor *ls = lm_cross_entropy(x, t, LM_REDUCTION_SUM, 0.1);
	expect("cross_entropy", l, mean, 1, 1e-9);
	expect("cross_entropy smoothing", ls, smooth_sum, 1, 1e-9);
	assert_int_equal(lm_backward(l, NULL, false), LM_OK);
	expect("d cross_entropy / dx", lm_tensor_grad(x), grad, N_OF(grad), 1e-8);
	lm_tensor *objs[] = {x, t, l, ls};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

/* img = sin(arange(100)).reshape(2, 2, 5, 5); w = 0.5 cos(arange(54)).reshape(3, 2, 3, 3) */
static lm_tensor *image(void)
{
	lm_tensor *r = lm_arange(0, 100, 1, LM_FLOAT64), *s = lm_sin(r);
	lm_tensor *v = lm_reshape(s, 4, (int64_t[]){2, 2, 5, 5});
	lm_tensor_release(r);
	lm_tensor_release(s);
	return v;
}

static void test_conv_pool(void **state)
{
	(void)state;
	static const double c1[] = {0.3989777205, -0.02609744134, 0.08785565294, 0.0177031312, 0.09418027468, 0.06255549808, 0.2906506207, 0.1602854989, 0.09444828536, -0.130497495, -0.4101735139, 0.04006473033, -0.1908105375, -0.177682239, -0.3039984438, -0.150596921, -0.3417888061, -0.0718256072, 0.09280961017, 0.1485352756, 0.6291818521, 0.3944327801, 0.3352933063, 0.2001006817, 0.1745927363, 0.05246346561, 0.4748231009, 0.3672160465, 0.02728300529, 0.09978185458, 0.04453337017, 0.08513036847, 0.04462645417, 0.2132873862, 0.2173978632, 0.1166012368, -0.146484027, -0.4066939104, 0.01610630881, -0.1686297957, -0.1792750894, -0.2984604238, -0.1841351437, -0.2972923178, -0.1199801197, 0.1034589358, 0.09975010967, 0.5856153584, 0.3968951699, 0.3422396411, 0.22534342, 0.2076642732, 0.05411465072, 0.3890756911};
	static const double c2[] = {0.4887785516, 0.5995311172, 0.3029822759, 0.3775984548, 0.4631785562, 0.2340906243};
	static const double mp[] = {0.8414709848, 0.9893582466, 0.9893582466, 0.6502878402, 0.9893582466, 0.9906073557, 0.9129452507, 0.8366556385, 0.1498772097, 0.7625584505, 0.9999118601, 0.9999118601, 0.7451131605, 0.9999118601, 0.9999118601, 0.9017883476, 0.9017883476, 0.01770192511, 0.6702291758, 0.9928726481, 0.9928726481, 0.8268286795, 0.9928726481, 0.9928726481, 0.9510546533, 0.9510546533, -0.1147848138, 0.5661076369, 0.9995201586, 0.9683644611, 0.8939966636, 0.9683644611, 0.9683644611, 0.9835877454, 0.9835877454, -0.2452519855};
	static const double ap[] = {-0.09921719701, 0.6741905701, -0.2954066985, -0.457197655, -0.1904656423, 0.6946550645, -0.2083677578, -0.5238664613, -0.2783629633, 0.7028975364, -0.1176627164, -0.581318164, -0.3613626617, 0.6987729645, -0.0248874729, -0.6285419362};
	lm_tensor *img = image();
	lm_tensor *wr = lm_arange(0, 54, 1, LM_FLOAT64), *wc = lm_cos(wr), *wh = lm_binary_scalar(LM_MUL, wc, 0.5);
	lm_tensor *w = lm_reshape(wh, 4, (int64_t[]){3, 2, 3, 3});
	lm_tensor *b = lm_from_data((double[]){0.1, -0.2, 0.3}, 1, (int64_t[]){3}, LM_FLOAT64);
	lm_conv2d_opts o1 = {{2, 2}, {1, 1}, {1, 1}, 1}, o2 = {{1, 1}, {0, 0}, {2, 2}, 1};
	lm_tensor *y1 = lm_conv2d(img, w, b, &o1), *y2 = lm_conv2d(img, w, NULL, &o2);
	lm_pool2d_opts p1 = {{3, 3}, {2, 2}, {1, 1}}, p2 = {{2, 2}, {0, 0}, {0, 0}};
	lm_tensor *ix = NULL;
	lm_tensor *m = lm_max_pool2d(img, &p1, &ix), *a = lm_avg_pool2d(img, &p2);
	expect("conv2d stride 2 padding 1", y1, c1, N_OF(c1), 1e-9);
	expect("conv2d dilation 2", y2, c2, N_OF(c2), 1e-9);
	expect("max_pool2d", m, mp, N_OF(mp), 1e-9);
	expect("avg_pool2d", a, ap, N_OF(ap), 1e-9);
	assert_int_equal(lm_tensor_dtype(ix), LM_INT64);
	assert_int_equal(lm_tensor_numel(ix), N_OF(mp));
	lm_tensor *objs[] = {img, wr, wc, wh, w, b, y1, y2, m, a, ix};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

static void test_norms(void **state)
{
	(void)state;
	static const double bn[] = {-1.060087874, 0.8779058389, 1.03411707, -0.7350740665, -1.232806749, 0.6825073503, 1.097321426, -0.3697426688, -1.664363988, 0.4835184446, 1.212216347, -0.1482317721, -1.779485578, 0.2620573289, 1.189660023, 0.1504888663};
	static const double rm_want[] = {0.04602869355, 0.04436641291}, rv_want[] = {0.9215448003, 0.9249488745};
	static const double ln[] = {-0.0041933419, 1.184240202, 1.280033426, 0.1951144825, -1.073047156, -1.358509527, -0.3988198432, 0.9236876258, 1.393105612, 0.5778533843};
	lm_tensor *img = image();
	lm_tensor *r3 = lm_reshape(img, 3, (int64_t[]){2, 2, 25}), *in = lm_narrow(r3, 2, 0, 4);
	lm_tensor *rm = lm_zeros(1, (int64_t[]){2}, LM_FLOAT64), *rv = lm_ones(1, (int64_t[]){2}, LM_FLOAT64);
	lm_tensor *y = lm_batch_norm(in, rm, rv, NULL, NULL, true, 0.1, 1e-5);
	expect("batch_norm", y, bn, N_OF(bn), 1e-8);
	expect("running_mean", rm, rm_want, 2, 1e-9);
	expect("running_var", rv, rv_want, 2, 1e-9);
	lm_tensor *first = lm_select(img, 0, 0);
	lm_tensor *l = lm_layer_norm(first, 2, (int64_t[]){5, 5}, NULL, NULL, 1e-5);
	expect("layer_norm", l, ln, N_OF(ln), 1e-8);
	lm_tensor *objs[] = {img, r3, in, rm, rv, y, first, l};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_softmax_family),
		cmocka_unit_test(test_cross_entropy),
		cmocka_unit_test(test_conv_pool),
		cmocka_unit_test(test_norms),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
