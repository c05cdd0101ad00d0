/*
 * optable_nn.c — op-table rows for the neural-network functional ops (lumen/nn.h). References
 * are plain loops in double over elements read with lm_tensor_get; logsumexp, erf, the
 * normalisations and the convolution sums are written out here independently of the library.
 */
#include <math.h>
#include <string.h>

#include "lumen/nn.h"
#include "optable.h"

enum { N_SOFTMAX, N_LOG_SOFTMAX, N_GELU, N_GELU_TANH, N_LINEAR, N_NLL, N_CE, N_MSE, N_BCE,
       N_LAYER_NORM, N_BATCH_NORM_TRAIN, N_BATCH_NORM_EVAL, N_CONV2D, N_MAX_POOL, N_AVG_POOL,
       N_EMBEDDING, N_DROPOUT_EVAL, N_CONV2D_WINOGRAD };

static lm_tensor *floats(ot_rng *r, int nd, const int64_t *shape, lm_dtype dt, ot_layout l,
                         double lo, double hi)
{
	return ot_make(r, nd, shape, dt, l, lo, hi);
}

/* integer class indices in [0, c) */
static lm_tensor *classes(ot_rng *r, int nd, const int64_t *shape, int64_t c)
{
	lm_tensor *t = lm_zeros(nd, shape, LM_INT64);
	int64_t n = lm_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) ot_set_linear(t, i, (double)ot_int(r, 0, c - 1));
	return t;
}

/* ---------------------------------------------------------------- generators */

static void gen_nn(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t s[LM_MAX_DIMS];
	int nd;
	switch (op->fn) {
	case N_SOFTMAX:
	case N_LOG_SOFTMAX:
	case N_GELU:
	case N_GELU_TANH:
	case N_DROPOUT_EVAL:
		nd = ot_shape(r, op->fn <= N_LOG_SOFTMAX ? 1 : 0, 4, s);
		c->nin = 1;
		c->in[0] = floats(r, nd, s, dt, l, op->lo, op->hi);
		c->p[0] = nd ? (double)ot_int(r, -nd, nd - 1) : 0;
		break;
	case N_LINEAR: {
		int64_t in = ot_int(r, 1, 9), out = ot_int(r, 1, 7);
		nd = ot_shape(r, 0, 2, s);
		s[nd++] = in;
		c->nin = 3;
		c->in[0] = floats(r, nd, s, dt, l, -1, 1);
		c->in[1] = floats(r, 2, (int64_t[]){out, in}, dt, (ot_layout)ot_int(r, 0, 2), -1, 1);
		c->in[2] = ot_int(r, 0, 3) ? floats(r, 1, &out, dt, OT_CONTIGUOUS, -1, 1) : NULL;
		break;
	}
	case N_NLL:
	case N_CE: {
		int64_t N = ot_int(r, 1, 6), C = ot_int(r, 1, 7), sp = ot_int(r, 0, 2) ? 0 : ot_int(r, 1, 3);
		int64_t ls[3] = {N, C, sp}, ts[2] = {N, sp};
		c->nin = 2;
		c->in[0] = floats(r, sp ? 3 : 2, ls, dt, l, op->fn == N_NLL ? -3 : -4, op->fn == N_NLL ? 0 : 4);
		c->in[1] = classes(r, sp ? 2 : 1, ts, C);
		c->p[0] = (double)ot_int(r, 0, 2);                                 /* reduction */
		c->p[1] = op->fn == N_CE && ot_int(r, 0, 1) ? ot_uniform(r, 0, 0.3) : 0; /* smoothing */
		break;
	}
	case N_MSE:
	case N_BCE:
		nd = ot_shape(r, 0, 3, s);
		c->nin = 2;
		c->in[0] = floats(r, nd, s, dt, l, op->fn == N_BCE ? 0.02 : -2, op->fn == N_BCE ? 0.98 : 2);
		c->in[1] = floats(r, nd, s, dt, (ot_layout)ot_int(r, 0, 3), op->fn == N_BCE ? 0 : -2,
		                  op->fn == N_BCE ? 1 : 2);
		c->p[0] = (double)ot_int(r, 0, 2);
		break;
	case N_LAYER_NORM: {
		nd = ot_shape(r, 1, 4, s);
		for (int i = 0; i < nd; i++)
			if (!s[i]) s[i] = 2;
		int k = (int)ot_int(r, 1, nd);
		c->nin = 3;
		c->in[0] = floats(r, nd, s, dt, l, -2, 2);
		c->p[0] = k;
		c->p[1] = 1e-5;
		if (ot_int(r, 0, 2)) c->in[1] = floats(r, k, s + nd - k, dt, OT_CONTIGUOUS, 0.5, 1.5);
		if (ot_int(r, 0, 2)) c->in[2] = floats(r, k, s + nd - k, dt, OT_CONTIGUOUS, -1, 1);
		break;
	}
	case N_BATCH_NORM_TRAIN:
	case N_BATCH_NORM_EVAL: {
		int64_t N = ot_int(r, 2, 5), C = ot_int(r, 1, 4);
		nd = (int)ot_int(r, 2, 4);
		s[0] = N;
		s[1] = C;
		for (int i = 2; i < nd; i++) s[i] = ot_int(r, 1, 4);
		c->nin = 3;
		c->in[0] = floats(r, nd, s, dt, l, -2, 2);
		if (ot_int(r, 0, 2)) c->in[1] = floats(r, 1, &C, dt, OT_CONTIGUOUS, 0.5, 1.5);
		if (ot_int(r, 0, 2)) c->in[2] = floats(r, 1, &C, dt, OT_CONTIGUOUS, -1, 1);
		c->p[0] = 1e-5;
		c->p[1] = 0.1;
		break;
	}
	case N_CONV2D: {
		int64_t g = ot_int(r, 1, 2), N = ot_int(r, 1, 2), C = g * ot_int(r, 1, 2), K = g * ot_int(r, 1, 3);
		int64_t kh = ot_int(r, 1, 3), kw = ot_int(r, 1, 3);
		c->p[0] = (double)ot_int(r, 1, 2); /* stride */
		c->p[1] = (double)ot_int(r, 0, 1); /* padding */
		c->p[2] = (double)ot_int(r, 1, 2); /* dilation */
		c->p[3] = (double)g;
		int64_t H = (kh - 1) * (int64_t)c->p[2] + 1 + ot_int(r, 0, 4), W = (kw - 1) * (int64_t)c->p[2] + 1 + ot_int(r, 0, 5);
		c->nin = 3;
		c->in[0] = floats(r, 4, (int64_t[]){N, C, H, W}, dt, l, -1, 1);
		c->in[1] = floats(r, 4, (int64_t[]){K, C / g, kh, kw}, dt, (ot_layout)ot_int(r, 0, 2), -1, 1);
		c->in[2] = ot_int(r, 0, 1) ? floats(r, 1, &K, dt, OT_CONTIGUOUS, -1, 1) : NULL;
		break;
	}
	case N_CONV2D_WINOGRAD: { /* 3x3, stride 1: channel counts across the 16-lane padding */
		int64_t N = ot_int(r, 1, 2), C = ot_int(r, 1, 20), K = ot_int(r, 1, 19);
		c->p[0] = 1;
		c->p[1] = (double)ot_int(r, 0, 2); /* padding */
		c->p[2] = 1;
		c->p[3] = 1;
		int64_t pd = (int64_t)c->p[1], H = 3 - 2 * pd + ot_int(r, 2 * pd, 6), W = 3 - 2 * pd + ot_int(r, 2 * pd, 7);
		c->nin = 3;
		c->in[0] = floats(r, 4, (int64_t[]){N, C, H, W}, dt, l, -1, 1);
		c->in[1] = floats(r, 4, (int64_t[]){K, C, 3, 3}, dt, (ot_layout)ot_int(r, 0, 2), -1, 1);
		c->in[2] = ot_int(r, 0, 1) ? floats(r, 1, &K, dt, OT_CONTIGUOUS, -1, 1) : NULL;
		break;
	}
	case N_MAX_POOL:
	case N_AVG_POOL: {
		int64_t k = ot_int(r, 1, 3);
		c->p[0] = (double)k;
		c->p[1] = (double)ot_int(r, 1, 3);     /* stride */
		c->p[2] = (double)ot_int(r, 0, k / 2); /* padding */
		int64_t H = k + ot_int(r, 0, 5), W = k + ot_int(r, 0, 6);
		c->nin = 1;
		c->in[0] = floats(r, 4, (int64_t[]){ot_int(r, 1, 2), ot_int(r, 1, 3), H, W}, dt, l, -2, 2);
		break;
	}
	case N_EMBEDDING: {
		int64_t n = ot_int(r, 1, 9), d = ot_int(r, 1, 5);
		nd = ot_shape(r, 0, 2, s);
		c->nin = 2;
		c->in[0] = classes(r, nd, s, n);
		c->in[1] = floats(r, 2, (int64_t[]){n, d}, dt, l, -1, 1);
		break;
	}
	}
	ot_describe(c, op, dt, l);
}

/* ---------------------------------------------------------------- the ops under test */

static lm_tensor *run_nn(const ot_case *c)
{
	lm_tensor *const *in = c->in;
	switch (c->op->fn) {
	case N_SOFTMAX: return lm_softmax(in[0], (int)c->p[0]);
	case N_LOG_SOFTMAX: return lm_log_softmax(in[0], (int)c->p[0]);
	case N_GELU: return lm_gelu(in[0], false);
	case N_GELU_TANH: return lm_gelu(in[0], true);
	case N_DROPOUT_EVAL: return lm_dropout(in[0], 0.5, false);
	case N_LINEAR: return lm_linear(in[0], in[1], in[2]);
	case N_NLL: return lm_nll_loss(in[0], in[1], (lm_reduction)(int)c->p[0]);
	case N_CE: return lm_cross_entropy(in[0], in[1], (lm_reduction)(int)c->p[0], c->p[1]);
	case N_MSE: return lm_mse_loss(in[0], in[1], (lm_reduction)(int)c->p[0]);
	case N_BCE: return lm_binary_cross_entropy(in[0], in[1], (lm_reduction)(int)c->p[0]);
	case N_LAYER_NORM: {
		int k = (int)c->p[0], nd = lm_tensor_ndim(in[0]);
		return lm_layer_norm(in[0], k, lm_tensor_shape(in[0]) + nd - k, in[1], in[2], c->p[1]);
	}
	case N_BATCH_NORM_TRAIN:
	case N_BATCH_NORM_EVAL: {
		int64_t C = lm_tensor_shape(in[0])[1];
		lm_tensor *h[2] = {lm_zeros(1, &C, lm_tensor_dtype(in[0])), lm_ones(1, &C, lm_tensor_dtype(in[0]))};
		if (c->op->fn == N_BATCH_NORM_EVAL) { /* running stats 0.25 and 2 */
			lm_fill_(h[0], 0.25);
			lm_fill_(h[1], 2);
		}
		/* the running stats on the input's device (ot_run_rows runs rows on other devices) */
		lm_tensor *rm = lm_to_device(h[0], lm_tensor_device(in[0]));
		lm_tensor *rv = lm_to_device(h[1], lm_tensor_device(in[0]));
		lm_tensor_release(h[0]);
		lm_tensor_release(h[1]);
		lm_tensor *y = lm_batch_norm(in[0], rm, rv, in[1], in[2], c->op->fn == N_BATCH_NORM_TRAIN,
		                             c->p[1], c->p[0]);
		lm_tensor_release(rm);
		lm_tensor_release(rv);
		return y;
	}
	case N_CONV2D:
	case N_CONV2D_WINOGRAD: {
		int64_t st = (int64_t)c->p[0], pd = (int64_t)c->p[1], dl = (int64_t)c->p[2];
		lm_conv2d_opts o = {{st, st}, {pd, pd}, {dl, dl}, (int64_t)c->p[3]};
		return lm_conv2d_algo(in[0], in[1], in[2], &o,
		                      c->op->fn == N_CONV2D_WINOGRAD ? LM_CONV_WINOGRAD : LM_CONV_AUTO);
	}
	case N_MAX_POOL:
	case N_AVG_POOL: {
		int64_t k = (int64_t)c->p[0], st = (int64_t)c->p[1], pd = (int64_t)c->p[2];
		lm_pool2d_opts o = {{k, k}, {st, st}, {pd, pd}};
		return c->op->fn == N_MAX_POOL ? lm_max_pool2d(in[0], &o, NULL) : lm_avg_pool2d(in[0], &o);
	}
	case N_EMBEDDING: return lm_embedding(in[0], in[1]);
	default: return NULL;
	}
}

/* ---------------------------------------------------------------- references */

static double get(const lm_tensor *t, const int64_t *idx)
{
	double v = NAN;
	lm_tensor_get(t, idx, &v);
	return v;
}

static lm_tensor *reduce_ref(lm_tensor *l, int red)
{
	if (red == LM_REDUCTION_NONE) return l;
	int64_t n = lm_tensor_numel(l);
	double s = 0;
	for (int64_t i = 0; i < n; i++) s += ot_get_linear(l, i);
	lm_tensor *out = lm_scalar(red == LM_REDUCTION_MEAN ? (n ? s / (double)n : NAN) : s, lm_tensor_dtype(l));
	lm_tensor_release(l);
	return out;
}

/* softmax / log_softmax along dim d */
static lm_tensor *ref_softmax(const ot_case *c, bool lg)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x);
	const int64_t *xs = lm_tensor_shape(x);
	int d = nd ? ((int)c->p[0] < 0 ? (int)c->p[0] + nd : (int)c->p[0]) : 0;
	lm_tensor *out = ot_new(nd, xs, lm_tensor_dtype(x));
	int64_t n = lm_tensor_numel(x), idx[LM_MAX_DIMS], j[LM_MAX_DIMS];
	int64_t R = nd ? xs[d] : 1;
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, xs, idx);
		memcpy(j, idx, sizeof j);
		double m = -INFINITY, s = 0;
		for (int64_t k = 0; k < R; k++) {
			if (nd) j[d] = k;
			double v = get(x, j);
			m = v > m ? v : m;
		}
		for (int64_t k = 0; k < R; k++) {
			if (nd) j[d] = k;
			s += exp(get(x, j) - m);
		}
		double v = get(x, idx);
		ot_set_linear(out, i, lg ? v - m - log(s) : exp(v - m) / s);
	}
	return out;
}

static lm_tensor *ref_gelu(const ot_case *c, bool th)
{
	const lm_tensor *x = c->in[0];
	lm_tensor *out = ot_new(lm_tensor_ndim(x), lm_tensor_shape(x), lm_tensor_dtype(x));
	int64_t n = lm_tensor_numel(x);
	for (int64_t i = 0; i < n; i++) {
		double v = ot_get_linear(x, i);
		double y = th ? 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
		              : 0.5 * v * erfc(-v / sqrt(2));
		ot_set_linear(out, i, y);
	}
	return out;
}

static lm_tensor *ref_linear(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
	int nd = lm_tensor_ndim(x);
	int64_t in = lm_tensor_shape(w)[1], out = lm_tensor_shape(w)[0], os[LM_MAX_DIMS], idx[LM_MAX_DIMS];
	memcpy(os, lm_tensor_shape(x), sizeof(int64_t) * (size_t)nd);
	os[nd - 1] = out;
	lm_tensor *y = ot_new(nd, os, lm_tensor_dtype(x));
	int64_t n = lm_tensor_numel(y);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, os, idx);
		int64_t o = idx[nd - 1];
		double s = b ? get(b, &o) : 0;
		for (int64_t k = 0; k < in; k++) {
			idx[nd - 1] = k;
			s += get(x, idx) * get(w, (int64_t[]){o, k});
		}
		ot_set_linear(y, i, s);
	}
	return y;
}

/* per-sample -log p(target), with log-softmax first for cross-entropy */
static lm_tensor *ref_nll_ce(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *t = c->in[1];
	bool ce = c->op->fn == N_CE;
	const int64_t *xs = lm_tensor_shape(x);
	int64_t N = xs[0], C = xs[1], L = lm_tensor_ndim(x) == 3 ? xs[2] : 1;
	double ls = c->p[1];
	lm_tensor *l = ot_new(lm_tensor_ndim(t), lm_tensor_shape(t), lm_tensor_dtype(x));
	for (int64_t n = 0; n < N; n++)
		for (int64_t q = 0; q < L; q++) {
			int64_t xi[3] = {n, 0, q}, ti[2] = {n, q};
			double m = -INFINITY, s = 0, mean = 0;
			for (int64_t k = 0; k < C; k++) {
				xi[1] = k;
				m = fmax(m, get(x, xi));
			}
			for (int64_t k = 0; k < C; k++) {
				xi[1] = k;
				s += exp(get(x, xi) - m);
			}
			double lse = ce ? m + log(s) : 0;
			for (int64_t k = 0; k < C; k++) {
				xi[1] = k;
				mean += (get(x, xi) - lse) / (double)C;
			}
			xi[1] = (int64_t)get(t, ti);
			double v = -(get(x, xi) - lse);
			if (ce && ls > 0) v = (1 - ls) * v - ls * mean;
			ot_set_linear(l, n * L + q, v);
		}
	return reduce_ref(l, (int)c->p[0]);
}

static lm_tensor *ref_pointwise_loss(const ot_case *c)
{
	const lm_tensor *a = c->in[0], *b = c->in[1];
	lm_tensor *l = ot_new(lm_tensor_ndim(a), lm_tensor_shape(a), lm_tensor_dtype(a));
	int64_t n = lm_tensor_numel(a);
	for (int64_t i = 0; i < n; i++) {
		double p = ot_get_linear(a, i), y = ot_get_linear(b, i), v;
		if (c->op->fn == N_MSE)
			v = (p - y) * (p - y);
		else
			v = -(y * fmax(log(p), -100) + (1 - y) * fmax(log(1 - p), -100));
		ot_set_linear(l, i, v);
	}
	return reduce_ref(l, (int)c->p[0]);
}

static lm_tensor *ref_layer_norm(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
	int nd = lm_tensor_ndim(x), k = (int)c->p[0];
	int64_t N = 1, n = lm_tensor_numel(x);
	for (int i = nd - k; i < nd; i++) N *= lm_tensor_shape(x)[i];
	lm_tensor *y = ot_new(nd, lm_tensor_shape(x), lm_tensor_dtype(x));
	for (int64_t r0 = 0; r0 < n; r0 += N) {
		double m = 0, v = 0;
		for (int64_t i = 0; i < N; i++) m += ot_get_linear(x, r0 + i) / (double)N;
		for (int64_t i = 0; i < N; i++) v += pow(ot_get_linear(x, r0 + i) - m, 2) / (double)N;
		for (int64_t i = 0; i < N; i++) {
			double o = (ot_get_linear(x, r0 + i) - m) / sqrt(v + c->p[1]);
			if (w) o *= ot_get_linear(w, i);
			if (b) o += ot_get_linear(b, i);
			ot_set_linear(y, r0 + i, o);
		}
	}
	return y;
}

static lm_tensor *ref_batch_norm(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
	int nd = lm_tensor_ndim(x);
	const int64_t *xs = lm_tensor_shape(x);
	int64_t N = xs[0], C = xs[1], L = lm_tensor_numel(x) / (N * C);
	bool train = c->op->fn == N_BATCH_NORM_TRAIN;
	lm_tensor *y = ot_new(nd, xs, lm_tensor_dtype(x));
	for (int64_t ch = 0; ch < C; ch++) {
		double m = 0.25, v = 2;
		if (train) {
			m = v = 0;
			for (int64_t n = 0; n < N; n++)
				for (int64_t l = 0; l < L; l++) m += ot_get_linear(x, (n * C + ch) * L + l) / (double)(N * L);
			for (int64_t n = 0; n < N; n++)
				for (int64_t l = 0; l < L; l++)
					v += pow(ot_get_linear(x, (n * C + ch) * L + l) - m, 2) / (double)(N * L);
		}
		for (int64_t n = 0; n < N; n++)
			for (int64_t l = 0; l < L; l++) {
				int64_t i = (n * C + ch) * L + l;
				double o = (ot_get_linear(x, i) - m) / sqrt(v + c->p[0]);
				if (w) o *= ot_get_linear(w, ch);
				if (b) o += ot_get_linear(b, ch);
				ot_set_linear(y, i, o);
			}
	}
	return y;
}

static lm_tensor *ref_conv2d(const ot_case *c)
{
	const lm_tensor *x = c->in[0], *w = c->in[1], *b = c->in[2];
	const int64_t *xs = lm_tensor_shape(x), *ws = lm_tensor_shape(w);
	int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], K = ws[0], R = ws[2], S = ws[3];
	int64_t st = (int64_t)c->p[0], pd = (int64_t)c->p[1], dl = (int64_t)c->p[2], g = (int64_t)c->p[3];
	int64_t OH = (H + 2 * pd - dl * (R - 1) - 1) / st + 1, OW = (W + 2 * pd - dl * (S - 1) - 1) / st + 1;
	int64_t cg = C / g, kg = K / g;
	lm_tensor *y = ot_new(4, (int64_t[]){N, K, OH, OW}, lm_tensor_dtype(x));
	for (int64_t n = 0; n < N; n++)
		for (int64_t k = 0; k < K; k++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					double s = b ? get(b, &k) : 0;
					int64_t grp = k / kg;
					for (int64_t ci = 0; ci < cg; ci++)
						for (int64_t i = 0; i < R; i++)
							for (int64_t j = 0; j < S; j++) {
								int64_t h = oh * st - pd + i * dl, wq = ow * st - pd + j * dl;
								if (h < 0 || h >= H || wq < 0 || wq >= W) continue;
								s += get(x, (int64_t[]){n, grp * cg + ci, h, wq}) *
								     get(w, (int64_t[]){k, ci, i, j});
							}
					ot_set_linear(y, ((n * K + k) * OH + oh) * OW + ow, s);
				}
	return y;
}

static lm_tensor *ref_pool(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	const int64_t *xs = lm_tensor_shape(x);
	int64_t k = (int64_t)c->p[0], st = (int64_t)c->p[1], pd = (int64_t)c->p[2];
	int64_t OH = (xs[2] + 2 * pd - k) / st + 1, OW = (xs[3] + 2 * pd - k) / st + 1;
	lm_tensor *y = ot_new(4, (int64_t[]){xs[0], xs[1], OH, OW}, lm_tensor_dtype(x));
	int64_t i = 0;
	for (int64_t n = 0; n < xs[0]; n++)
		for (int64_t ch = 0; ch < xs[1]; ch++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++, i++) {
					double best = -INFINITY, sum = 0;
					for (int64_t a = 0; a < k; a++)
						for (int64_t bq = 0; bq < k; bq++) {
							int64_t h = oh * st - pd + a, w = ow * st - pd + bq;
							if (h < 0 || h >= xs[2] || w < 0 || w >= xs[3]) continue;
							double v = get(x, (int64_t[]){n, ch, h, w});
							best = fmax(best, v);
							sum += v;
						}
					ot_set_linear(y, i, c->op->fn == N_MAX_POOL ? best : sum / (double)(k * k));
				}
	return y;
}

static lm_tensor *ref_embedding(const ot_case *c)
{
	const lm_tensor *idx = c->in[0], *w = c->in[1];
	int nd = lm_tensor_ndim(idx);
	int64_t d = lm_tensor_shape(w)[1], os[LM_MAX_DIMS];
	memcpy(os, lm_tensor_shape(idx), sizeof(int64_t) * (size_t)nd);
	os[nd] = d;
	lm_tensor *y = ot_new(nd + 1, os, lm_tensor_dtype(w));
	int64_t n = lm_tensor_numel(idx);
	for (int64_t i = 0; i < n; i++) {
		int64_t row = (int64_t)ot_get_linear(idx, i);
		for (int64_t j = 0; j < d; j++) ot_set_linear(y, i * d + j, get(w, (int64_t[]){row, j}));
	}
	return y;
}

static lm_tensor *ref_identity(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	lm_tensor *y = ot_new(lm_tensor_ndim(x), lm_tensor_shape(x), lm_tensor_dtype(x));
	for (int64_t i = 0; i < lm_tensor_numel(x); i++) ot_set_linear(y, i, ot_get_linear(x, i));
	return y;
}

static lm_tensor *ref_nn(const ot_case *c)
{
	switch (c->op->fn) {
	case N_SOFTMAX: return ref_softmax(c, false);
	case N_LOG_SOFTMAX: return ref_softmax(c, true);
	case N_GELU: return ref_gelu(c, false);
	case N_GELU_TANH: return ref_gelu(c, true);
	case N_DROPOUT_EVAL: return ref_identity(c);
	case N_LINEAR: return ref_linear(c);
	case N_NLL:
	case N_CE: return ref_nll_ce(c);
	case N_MSE:
	case N_BCE: return ref_pointwise_loss(c);
	case N_LAYER_NORM: return ref_layer_norm(c);
	case N_BATCH_NORM_TRAIN:
	case N_BATCH_NORM_EVAL: return ref_batch_norm(c);
	case N_CONV2D:
	case N_CONV2D_WINOGRAD: return ref_conv2d(c);
	case N_MAX_POOL:
	case N_AVG_POOL: return ref_pool(c);
	case N_EMBEDDING: return ref_embedding(c);
	default: return NULL;
	}
}

#define NN(name, nin, fn, diff, lo, hi) {name, nin, OT_FLOATS, diff, lo, hi, gen_nn, run_nn, ref_nn, 1e-4, 1e-5, fn}

const ot_op ot_nn_ops[] = {
	NN("F.softmax", 1, N_SOFTMAX, true, -5, 5),
	NN("F.log_softmax", 1, N_LOG_SOFTMAX, true, -5, 5),
	NN("F.gelu", 1, N_GELU, true, -3, 3),
	NN("F.gelu_tanh", 1, N_GELU_TANH, true, -3, 3),
	NN("F.dropout_eval", 1, N_DROPOUT_EVAL, true, -2, 2),
	NN("F.linear", 3, N_LINEAR, true, -1, 1),
	NN("F.nll_loss", 2, N_NLL, true, -3, 0),
	NN("F.cross_entropy", 2, N_CE, true, -4, 4),
	NN("F.mse_loss", 2, N_MSE, true, -2, 2),
	NN("F.binary_cross_entropy", 2, N_BCE, true, 0.02, 0.98),
	NN("F.layer_norm", 3, N_LAYER_NORM, true, -2, 2),
	NN("F.batch_norm_train", 3, N_BATCH_NORM_TRAIN, true, -2, 2),
	NN("F.batch_norm_eval", 3, N_BATCH_NORM_EVAL, true, -2, 2),
	NN("F.conv2d", 3, N_CONV2D, true, -1, 1),
	NN("F.conv2d_winograd", 3, N_CONV2D_WINOGRAD, true, -1, 1),
	NN("F.max_pool2d", 1, N_MAX_POOL, true, -2, 2),
	NN("F.avg_pool2d", 1, N_AVG_POOL, true, -2, 2),
	NN("F.embedding", 2, N_EMBEDDING, true, -1, 1),
};
const int ot_nn_count = (int)(sizeof ot_nn_ops / sizeof ot_nn_ops[0]);
