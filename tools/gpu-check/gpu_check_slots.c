/*
 * gpu_check_slots.c — the CUDA tensor backend's kernels of tensor_api.h versions 3 and 4 (nn.cu,
 * move.cu, sort.cu, ewise_int.cu, tensor.cu's stat_rows) against plain loops written here from the
 * CPU backend's contracts (src/backend/cpu/cpu_move.h, nn.c, train.c, reduce.c), one row each.
 * Moves, integer sums and sums of small integers must be exact; float64 arithmetic within 1e-12
 * (relative, the device's erf / pow and fused multiply-adds round differently), float32 within
 * 1e-5. Strided inputs (transposed views), NaN, -0, ties, collisions of scatter indices and the
 * index-out-of-range and sort-too-long errors are part of the inputs. Read next:
 * ../../src/backend/cuda/move.cu, docs/gpu-check.md.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/tensor_api.h"
#include "gpu_check.h"
#include "lumen/ops.h"

static const lmi_cuda_tensor_api *T;
static char msg[512];

static void *put(const void *h, size_t n)
{
	void *d = gc_dev(n ? n : 1);
	if (n) gc_up(d, h, n);
	return d;
}

static void release(void *d)
{
	T->free(d, msg, sizeof msg);
}

static double *ints(int64_t n, int lo, int hi, double scale)
{
	double *h = malloc(sizeof(double) * (size_t)(n ? n : 1));
	for (int64_t i = 0; i < n; i++) h[i] = gc_int(lo, hi) * scale;
	return h;
}

/* |got - want| within rel of max(1, |want|); NaN only against NaN */
static int near(double got, double want, double rel, double *worst)
{
	if (want != want) return got != got;
	double err = fabs(got - want) / fmax(1.0, fabs(want));
	if (err > *worst) *worst = err;
	return err <= rel;
}

/* ---------------------------------------------------------------- prod, var, std, norm */

static double ref_stat(int op, const double *q, int64_t R, double p)
{
	double s = 0, m2 = 0;
	if (op == LM_PROD) {
		s = 1;
		for (int64_t j = 0; j < R; j++) s *= q[j];
		return s;
	}
	if (op == LM_VAR || op == LM_STD) {
		for (int64_t j = 0; j < R; j++) s += q[j];
		double mean = s / (double)R;
		for (int64_t j = 0; j < R; j++) m2 += (q[j] - mean) * (q[j] - mean);
		double v = (double)R - p > 0 ? m2 / ((double)R - p) : NAN;
		return op == LM_STD ? sqrt(v) : v;
	}
	for (int64_t j = 0; j < R; j++) {
		double a = fabs(q[j]);
		if (isinf(p))
			s = a != a || a > s ? (s != s ? s : a) : s;
		else
			s += p == 2 ? a * a : p == 1 ? a : p == 0 ? (q[j] != 0) : pow(a, p);
	}
	return isinf(p) || p == 0 || p == 1 ? s : p == 2 ? sqrt(s) : pow(s, 1 / p);
}

static void check_stats(tally *tl)
{
	enum { ROWS = 5, R = 1001 };
	double *hx = ints(ROWS * R, -8, 12, 0.25), hout[ROWS], worst = 0;
	hx[4 * R + 17] = NAN;
	double *dx = put(hx, sizeof(double) * ROWS * R), *dout = gc_dev(sizeof hout);
	static const struct {
		int op;
		double p;
	} cs[] = {{LM_VAR, 1},  {LM_STD, 0},         {LM_NORM, 2}, {LM_NORM, 1},
	          {LM_NORM, 0}, {LM_NORM, INFINITY}, {LM_NORM, 3}, {LM_VAR, 1001}};
	int e = 0, ok = 1;
	for (size_t c = 0; !e && c < sizeof cs / sizeof cs[0]; c++) {
		e = T->stat_rows(cs[c].op, LM_FLOAT64, dx, ROWS, R, dout, cs[c].p, msg, sizeof msg);
		gc_down(hout, dout, sizeof hout);
		for (int r = 0; !e && r < ROWS; r++)
			ok &= near(hout[r], ref_stat(cs[c].op, hx + r * R, R, cs[c].p), 1e-12,
			           &worst);
	}
	/* prod of float32 rows of -1, 1 and 2: exact */
	float hp[3 * 20], hq[3];
	for (int i = 0; i < 60; i++) hp[i] = (float)(gc_int(0, 3) == 0 ? -1 : gc_int(1, 3));
	float *dp = put(hp, sizeof hp), *dq = gc_dev(sizeof hq);
	if (!e) e = T->stat_rows(LM_PROD, LM_FLOAT32, dp, 3, 20, dq, 0, msg, sizeof msg);
	gc_down(hq, dq, sizeof hq);
	for (int r = 0; !e && r < 3; r++) {
		double want = 1;
		for (int j = 0; j < 20; j++) want *= hp[r * 20 + j];
		ok &= hq[r] == (float)want;
	}
	char d[96];
	snprintf(d, sizeof d, "max rel. error %.1e", worst);
	gc_row(tl, "var, std, norm p=2/1/0/inf/3, prod; NaN rows", !e && ok, e ? msg : d);
	free(hx);
	release(dx), release(dout), release(dp), release(dq);
}

/* ---------------------------------------------------------------- gelu, max pooling, RMSprop */

static double gelu_ref(double x, int t, int grad)
{
	const double k = 0.7978845608028654, c = 0.044715;
	if (t) {
		double th = tanh(k * (x + c * x * x * x));
		return grad ? 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * k * (1 + 3 * c * x * x)
		            : 0.5 * x * (1 + th);
	}
	double cdf = 0.5 * (1 + erf(x / sqrt(2.0)));
	return grad ? cdf + x * exp(-0.5 * x * x) / sqrt(2 * M_PI) : x * cdf;
}

static void check_gelu(tally *tl)
{
	enum { A = 6, B = 7 };
	double *hx = ints(A * B, -12, 13, 0.25), *hg = ints(A * B, -3, 4, 0.5), hy[A * B];
	double *dx = put(hx, sizeof hy), *dg = put(hg, sizeof hy), *dy = gc_dev(sizeof hy);
	/* x as the transpose of the (B, A) buffer: shape (A, B), strides (1, A) */
	lmi_cu_arr x = gc_arr(dx, LM_FLOAT64, 2, (int64_t[]){A, B});
	x.stride[0] = 1, x.stride[1] = A;
	lmi_cu_arr g = gc_arr(dg, LM_FLOAT64, 2, (int64_t[]){A, B});
	lmi_cu_arr y = gc_arr(dy, LM_FLOAT64, 2, (int64_t[]){A, B});
	int e = 0, ok = 1;
	double worst = 0;
	for (int t = 0; t < 2; t++)
		for (int grad = 0; !e && grad < 2; grad++) {
			e = T->gelu(&y, &x, grad ? &g : NULL, t, msg, sizeof msg);
			gc_down(hy, dy, sizeof hy);
			for (int i = 0; !e && i < A; i++)
				for (int j = 0; j < B; j++) {
					double want = gelu_ref(hx[j * A + i], t, grad) *
					              (grad ? hg[i * B + j] : 1);
					ok &= near(hy[i * B + j], want, 1e-12, &worst);
				}
		}
	char d[96];
	snprintf(d, sizeof d, "max rel. error %.1e", worst);
	gc_row(tl, "gelu (erf, tanh) and backward, float64 transposed", !e && ok, e ? msg : d);
	free(hx), free(hg);
	release(dx), release(dg), release(dy);
}

static void check_max_pool(tally *tl)
{
	enum { P = 3, H = 7, W = 9 };
	static const int64_t wins[2][6] = {{3, 3, 2, 2, 1, 1}, {2, 2, 2, 2, 0, 0}};
	float hx[P * H * W], hy[P * H * W];
	int64_t hi[P * H * W];
	for (int i = 0; i < P * H * W; i++) hx[i] = (float)gc_int(-3, 4);
	hx[H * W + 3 * W + 4] = NAN;
	float *dx = put(hx, sizeof hx), *dy = gc_dev(sizeof hy);
	int64_t *di = gc_dev(sizeof hi);
	int e = 0, ok = 1;
	for (int c = 0; !e && c < 2; c++) {
		const int64_t *w = wins[c];
		int64_t OH = (H + 2 * w[4] - w[0]) / w[2] + 1,
		        OW = (W + 2 * w[5] - w[1]) / w[3] + 1;
		e = T->max_pool2d(LM_FLOAT32, dx, dy, di, P, H, W, OH, OW, w, msg, sizeof msg);
		gc_down(hy, dy, sizeof(float) * P * OH * OW);
		gc_down(hi, di, sizeof(int64_t) * P * OH * OW);
		for (int64_t o = 0; !e && o < P * OH * OW; o++) {
			int64_t ow = o % OW, oh = (o / OW) % OH, pl = o / (OW * OH);
			int64_t i0 = oh * w[2] - w[4], j0 = ow * w[3] - w[5];
			float best = 0;
			int64_t at = -1;
			for (int64_t r = i0 < 0 ? 0 : i0; r < i0 + w[0] && r < H; r++)
				for (int64_t q = j0 < 0 ? 0 : j0; q < j0 + w[1] && q < W; q++) {
					float v = hx[pl * H * W + r * W + q];
					if (at < 0 || v > best || (v != v && best == best))
						best = v, at = r * W + q;
				}
			ok &= hi[o] == at && (best != best ? hy[o] != hy[o] : hy[o] == best);
		}
	}
	gc_row(tl, "max_pool2d float32 3x3/2 pad 1 and 2x2/2, a NaN", !e && ok, e ? msg : "");
	release(dx), release(dy), release(di);
}

static void check_rmsprop(tally *tl)
{
	enum { N = 1000 };
	double *p = ints(N, -5, 6, 0.1), *g = ints(N, -5, 6, 0.3), *sq = ints(N, 0, 4, 0.2);
	double *buf = ints(N, -2, 3, 0.1), *ga = ints(N, -2, 3, 0.05), got[N], worst = 0;
	double *dp = put(p, sizeof got), *dg = put(g, sizeof got), *ds = put(sq, sizeof got);
	double *db = put(buf, sizeof got), *da = put(ga, sizeof got);
	const double f[6] = {0.9, 0.01, 0.05, 1e-8, 0.7, 0}; /* alpha wd lr eps momentum maximize */
	int e = T->rmsprop(LM_FLOAT64, dp, dg, ds, db, da, N, f, msg, sizeof msg), ok = !e;
	gc_down(got, dp, sizeof got);
	for (int i = 0; ok && i < N; i++) {
		double gi = g[i] + f[1] * p[i], s2 = sq[i] * f[0] + (1 - f[0]) * gi * gi;
		double a = ga[i] * f[0] + gi * (1 - f[0]), avg = sqrt(s2 - a * a) + f[3];
		double b = buf[i] * f[4] + gi / avg;
		ok &= near(got[i], p[i] - f[2] * b, 1e-12, &worst);
	}
	char d[96];
	snprintf(d, sizeof d, "max rel. error %.1e", worst);
	gc_row(tl, "rmsprop float64 centered, momentum, weight decay", ok, e ? msg : d);
	free(p), free(g), free(sq), free(buf), free(ga);
	release(dp), release(dg), release(ds), release(db), release(da);
}

/* ---------------------------------------------------------------- crop, flip */

static void check_crop_flip(tally *tl)
{
	enum { N = 3, C = 2, H = 5, W = 6, PAD = 2, OH = 4, OW = 7 };
	uint8_t hx[N * C * H * W], hy[N * C * OH * OW];
	int64_t off[2 * N];
	for (int i = 0; i < N * C * H * W; i++) hx[i] = (uint8_t)gc_int(1, 250);
	for (int n = 0; n < N; n++)
		off[2 * n] = gc_int(0, H + 2 * PAD - OH + 1),
		        off[2 * n + 1] = gc_int(0, W + 2 * PAD - OW + 1);
	uint8_t *dx = put(hx, sizeof hx), *dy = gc_dev(sizeof hy);
	int64_t *doff = put(off, sizeof off);
	int e = T->crop(1, dx, doff, PAD, N, C, H, W, OH, OW, dy, msg, sizeof msg), ok = !e;
	gc_down(hy, dy, sizeof hy);
	for (int n = 0; ok && n < N; n++)
		for (int c = 0; c < C; c++)
			for (int i = 0; i < OH; i++)
				for (int j = 0; j < OW; j++) {
					int64_t y = off[2 * n] - PAD + i,
					        x = off[2 * n + 1] - PAD + j;
					uint8_t want = y >= 0 && y < H && x >= 0 && x < W
					                   ? hx[((n * C + c) * H + y) * W + x]
					                   : 0;
					ok &= hy[((n * C + c) * OH + i) * OW + j] == want;
				}
	gc_row(tl, "crop_batch uint8 (3,2,5,6) pad 2 -> 4x7", ok, e ? msg : "");
	enum { FN = 4, L = 3, FW = 5 };
	float fx[FN * L * FW], fy[FN * L * FW];
	uint8_t mask[FN] = {1, 0, 1, 1};
	for (int i = 0; i < FN * L * FW; i++) fx[i] = (float)i;
	float *dfx = put(fx, sizeof fx), *dfy = gc_dev(sizeof fy);
	uint8_t *dm = put(mask, sizeof mask);
	e = T->flip(4, dfx, dm, dfy, FN, L, FW, msg, sizeof msg), ok = !e;
	gc_down(fy, dfy, sizeof fy);
	for (int i = 0; ok && i < FN * L * FW; i++) {
		int a = i % FW, row = i / FW, n = row / L;
		ok &= fy[i] == fx[mask[n] ? row * FW + FW - 1 - a : i];
	}
	gc_row(tl, "flip_batch float32 (4,3,5), mask 1 0 1 1", ok, e ? msg : "");
	release(dx), release(dy), release(doff), release(dfx), release(dfy), release(dm);
}

/* ---------------------------------------------------------------- the index ops */

/* e must be LMI_CU_ERR_INDEX with bad = {pos, val} */
static int index_error(int e, const int64_t *bad, int64_t pos, int64_t val)
{
	return e == LMI_CU_ERR_INDEX && bad[0] == pos && bad[1] == val;
}

static void check_index_select(tally *tl)
{
	enum { O = 3, S = 10, I = 4, K = 7 };
	double *hx = ints(O * S * I, -50, 50, 1), hy[O * K * I];
	int32_t idx[K];
	for (int j = 0; j < K; j++) idx[j] = gc_int(0, S);
	idx[2] = idx[5];
	double *dx = put(hx, sizeof(double) * O * S * I), *dy = gc_dev(sizeof hy);
	int32_t *di = put(idx, sizeof idx);
	lmi_cu_arr ia = gc_arr(di, LM_INT32, 1, (int64_t[]){K});
	int64_t bad[2] = {0, 0};
	int e = T->index_select(dx, 8, O, S, I, &ia, dy, bad, msg, sizeof msg), ok = !e;
	gc_down(hy, dy, sizeof hy);
	for (int o = 0; ok && o < O; o++)
		for (int j = 0; j < K; j++)
			for (int i = 0; i < I; i++)
				ok &= hy[(o * K + j) * I + i] == hx[(o * S + idx[j]) * I + i];
	int64_t bi[4] = {1, 12, 3, -1};
	int64_t *dbi = put(bi, sizeof bi);
	lmi_cu_arr ba = gc_arr(dbi, LM_INT64, 1, (int64_t[]){4});
	int e2 = T->index_select(dx, 8, O, S, I, &ba, dy, bad, msg, sizeof msg);
	ok &= index_error(e2, bad, 1, 12);
	gc_row(tl, "index_select float64 (3,10,4) dim 1; index 12 refused", ok, e ? msg : "");
	free(hx);
	release(dx), release(dy), release(di), release(dbi);
}

static void check_gather_scatter(tally *tl)
{
	/* gather along dim 1 of x (5, 6) seen as the transpose of a (6, 5) buffer */
	enum { A = 5, B = 6, K = 4 };
	float hx[A * B], hy[A * K];
	int64_t idx[A * K], bad[2] = {0, 0};
	for (int i = 0; i < A * B; i++) hx[i] = (float)gc_int(-100, 100);
	for (int i = 0; i < A * K; i++) idx[i] = gc_int(0, B);
	float *dx = put(hx, sizeof hx), *dy = gc_dev(sizeof hy);
	int64_t *di = put(idx, sizeof idx);
	lmi_cu_arr x = gc_arr(dx, LM_FLOAT32, 2, (int64_t[]){A, B});
	x.stride[0] = 1, x.stride[1] = A;
	lmi_cu_arr ia = gc_arr(di, LM_INT64, 2, (int64_t[]){A, K});
	lmi_cu_arr y = gc_arr(dy, LM_FLOAT32, 2, (int64_t[]){A, K});
	int e = T->gather(&x, 1, &ia, &y, bad, msg, sizeof msg), ok = !e;
	gc_down(hy, dy, sizeof hy);
	for (int i = 0; ok && i < A; i++)
		for (int k = 0; k < K; k++) ok &= hy[i * K + k] == hx[idx[i * K + k] * A + i];
	gc_row(tl, "gather float32 dim 1 of a transposed (5,6)", ok, e ? msg : "");
	/* scatter_add along dim 0: out (4, 6), idx and src (7, 6), many collisions; int64, float32,
	 * uint8 (wrapping, through the byte compare-and-swap) */
	enum { R = 4, C = 6, M = 7 };
	int32_t sidx[M * C];
	for (int i = 0; i < M * C; i++) sidx[i] = gc_int(0, R);
	int32_t *dsi = put(sidx, sizeof sidx);
	lmi_cu_arr si = gc_arr(dsi, LM_INT32, 2, (int64_t[]){M, C});
	static const int dts[3] = {LM_INT64, LM_FLOAT32, LM_UINT8};
	ok = 1, e = 0;
	for (int t = 0; !e && t < 3; t++) {
		int dt = dts[t];
		size_t es = dt == LM_INT64 ? 8 : dt == LM_FLOAT32 ? 4 : 1;
		double want[R * C];
		unsigned char ho[R * C * 8], hs[M * C * 8], got[R * C * 8];
		for (int i = 0; i < R * C + M * C; i++) {
			int v = dt == LM_UINT8 ? gc_int(0, 256) : gc_int(-1000, 1000);
			unsigned char *at = i < R * C ? ho + i * es : hs + (i - R * C) * es;
			if (dt == LM_INT64)
				*(int64_t *)at = v;
			else if (dt == LM_FLOAT32)
				*(float *)at = (float)v;
			else
				*at = (uint8_t)v;
			if (i < R * C) want[i] = v;
		}
		for (int m = 0; m < M; m++)
			for (int c = 0; c < C; c++) {
				const unsigned char *at = hs + (m * C + c) * es;
				double v = dt == LM_INT64     ? (double)*(const int64_t *)at
				           : dt == LM_FLOAT32 ? *(const float *)at
				                              : *at;
				double *w = &want[sidx[m * C + c] * C + c];
				*w = dt == LM_UINT8 ? (double)(uint8_t)((int)*w + (int)v) : *w + v;
			}
		void *dout = put(ho, R * C * es), *dsrc = put(hs, M * C * es);
		lmi_cu_arr o = gc_arr(dout, dt, 2, (int64_t[]){R, C});
		lmi_cu_arr s = gc_arr(dsrc, dt, 2, (int64_t[]){M, C});
		e = T->scatter_add(&o, 0, &si, &s, bad, msg, sizeof msg);
		gc_down(got, dout, R * C * es);
		for (int i = 0; !e && i < R * C; i++) {
			const unsigned char *at = got + i * es;
			double v = dt == LM_INT64     ? (double)*(const int64_t *)at
			           : dt == LM_FLOAT32 ? *(const float *)at
			                              : *at;
			ok &= v == want[i];
		}
		if (t == 0) { /* one index out of range: refused, with its position */
			int32_t keep = sidx[9];
			sidx[9] = R;
			int32_t *dbad = put(sidx, sizeof sidx);
			lmi_cu_arr bi = gc_arr(dbad, LM_INT32, 2, (int64_t[]){M, C});
			ok &= index_error(T->scatter_add(&o, 0, &bi, &s, bad, msg, sizeof msg), bad,
			                  9, R);
			release(dbad);
			sidx[9] = keep;
		}
		release(dout), release(dsrc);
	}
	gc_row(tl, "scatter_add dim 0, int64 / float32 / uint8, collisions", !e && ok,
	       e ? msg : "");
	release(dx), release(dy), release(di), release(dsi);
}

static void check_one_hot(tally *tl)
{
	enum { N = 10, CL = 5 };
	int64_t idx[N], got[N * CL], bad[2] = {0, 0};
	for (int i = 0; i < N; i++) idx[i] = gc_int(0, CL);
	int64_t *di = put(idx, sizeof idx), *dout = gc_dev(sizeof got);
	lmi_cu_arr o = gc_arr(dout, LM_INT64, 2, (int64_t[]){N, CL});
	lmi_cu_arr ia = gc_arr(di, LM_INT64, 1, (int64_t[]){N});
	int e = T->fill(&o, 0, msg, sizeof msg);
	if (!e) e = T->one_hot(&ia, CL, dout, bad, msg, sizeof msg);
	gc_down(got, dout, sizeof got);
	int ok = !e;
	for (int i = 0; ok && i < N * CL; i++) ok &= got[i] == (idx[i / CL] == i % CL);
	idx[3] = CL;
	gc_up(di, idx, sizeof idx);
	ok &= index_error(T->one_hot(&ia, CL, dout, bad, msg, sizeof msg), bad, 3, CL);
	gc_row(tl, "one_hot int64 10 x 5; class 5 refused", ok, e ? msg : "");
	release(di), release(dout);
}

/* ---------------------------------------------------------------- cumsum, triangles, repeat */

static void check_cumsum(tally *tl)
{
	enum { O = 2, R = 50, I = 3 };
	double *hx = ints(O * R * I, -9, 10, 0.5), hy[O * R * I];
	double *dx = put(hx, sizeof hy), *dy = gc_dev(sizeof hy);
	int e = T->cumsum(LM_FLOAT64, dx, O, R, I, dy, msg, sizeof msg), ok = !e;
	gc_down(hy, dy, sizeof hy);
	for (int o = 0; ok && o < O; o++)
		for (int i = 0; i < I; i++) {
			double s = 0;
			for (int r = 0; r < R; r++) {
				s += hx[(o * R + r) * I + i];
				ok &= hy[(o * R + r) * I + i] == s;
			}
		}
	int32_t hi[3 * 40];
	int64_t ho[3 * 40];
	for (int i = 0; i < 120; i++) hi[i] = gc_int(-1000000, 1000000) * 2000;
	int32_t *di = put(hi, sizeof hi);
	int64_t *dout = gc_dev(sizeof ho);
	if (!e) e = T->cumsum(LM_INT32, di, 3, 40, 1, dout, msg, sizeof msg);
	gc_down(ho, dout, sizeof ho);
	for (int o = 0; !e && o < 3; o++) {
		int64_t s = 0;
		for (int r = 0; r < 40; r++) ok &= ho[o * 40 + r] == (s += hi[o * 40 + r]);
	}
	gc_row(tl, "cumsum float64 (2,50,3) dim 1, int32 -> int64", !e && ok, e ? msg : "");
	free(hx);
	release(dx), release(dy), release(di), release(dout);
}

static void check_triangle_repeat(tally *tl)
{
	enum { B = 2, M = 5, N = 7 };
	float hx[B * M * N], hy[B * M * N];
	for (int i = 0; i < B * M * N; i++) hx[i] = (float)(i + 1);
	float *dx = put(hx, sizeof hx), *dy = gc_dev(sizeof hy);
	int e = 0, ok = 1;
	static const int64_t ks[2] = {-1, 2};
	for (int up = 0; !e && up < 2; up++) {
		e = T->triangle(4, dx, B, M, N, ks[up], up, dy, msg, sizeof msg);
		gc_down(hy, dy, sizeof hy);
		for (int i = 0; !e && i < B * M * N; i++) {
			int64_t d = i % N - (i / N) % M;
			ok &= hy[i] == ((up ? d >= ks[up] : d <= ks[up]) ? hx[i] : 0);
		}
	}
	gc_row(tl, "tril k=-1, triu k=2 float32 (2,5,7)", !e && ok, e ? msg : "");
	/* repeat: out (4, 6, 3) int32 tiled from its (2, 3, 1) corner */
	enum { P = 4, Q = 6, S = 3 };
	int32_t ho[P * Q * S], got[P * Q * S];
	for (int i = 0; i < P * Q * S; i++) {
		int a = i / (Q * S), b = (i / S) % Q, c = i % S;
		ho[i] = a < 2 && b < 3 && c < 1 ? gc_int(-99, 100) : -12345;
	}
	int32_t *dout = put(ho, sizeof ho);
	e = T->repeat_fill(4, dout, 3, (int64_t[]){P, Q, S}, (int64_t[]){2, 3, 1}, msg, sizeof msg);
	gc_down(got, dout, sizeof got);
	ok = !e;
	for (int i = 0; ok && i < P * Q * S; i++) {
		int a = i / (Q * S), b = (i / S) % Q;
		ok &= got[i] == ho[((a % 2) * Q + b % 3) * S];
	}
	gc_row(tl, "repeat int32 (2,3,1) x (2,2,3)", ok, e ? msg : "");
	release(dx), release(dy), release(dout);
}

/* ---------------------------------------------------------------- sort */

/* the CPU's order (cpu/sort.c): NaN largest, -0 == +0, ties by position; descending reverses
 * the values' order only */
static const double *sort_vals;
static int sort_desc;

static int cmp_pos(const void *pa, const void *pb)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	double x = sort_vals[a], y = sort_vals[b];
	int xn = x != x, yn = y != y, c;
	if (xn || yn)
		c = xn - yn;
	else
		c = (x > y) - (x < y);
	if (sort_desc) c = -c;
	return c ? c : (a > b) - (a < b);
}

/* One (outer, R, inner) float32 case: the first k, values bit for bit and positions. */
static int sort_case(int64_t O, int64_t R, int64_t I, int64_t k, int desc, int *err)
{
	int64_t n = O * R * I;
	float *hx = malloc(sizeof(float) * (size_t)n),
	      *hv = malloc(sizeof(float) * (size_t)(O * k * I));
	int64_t *hi = malloc(sizeof(int64_t) * (size_t)(O * k * I)),
	        *ord = malloc(sizeof(int64_t) * (size_t)R);
	double *line = malloc(sizeof(double) * (size_t)R);
	static const float pool[6] = {0.0f, -0.0f, 1.5f, -2.0f, INFINITY, -INFINITY};
	for (int64_t i = 0; i < n; i++) {
		int r = gc_int(0, 10);
		hx[i] = r < 6 ? pool[r] : r == 6 ? NAN : (float)gc_int(-1000, 1000);
	}
	float *dx = put(hx, sizeof(float) * (size_t)n),
	      *dv = gc_dev(sizeof(float) * (size_t)(O * k * I));
	int64_t *di = gc_dev(sizeof(int64_t) * (size_t)(O * k * I));
	*err = T->sort(LM_FLOAT32, dx, O, R, I, k, desc, dv, di, msg, sizeof msg);
	gc_down(hv, dv, sizeof(float) * (size_t)(O * k * I));
	gc_down(hi, di, sizeof(int64_t) * (size_t)(O * k * I));
	int ok = !*err;
	for (int64_t o = 0; ok && o < O; o++)
		for (int64_t in = 0; in < I; in++) {
			for (int64_t r = 0; r < R; r++)
				line[r] = hx[(o * R + r) * I + in], ord[r] = r;
			sort_vals = line, sort_desc = desc;
			qsort(ord, (size_t)R, sizeof *ord, cmp_pos);
			for (int64_t t = 0; t < k; t++) {
				int64_t at = (o * k + t) * I + in;
				ok &=
				    hi[at] == ord[t] &&
				    !memcmp(&hv[at], &hx[(o * R + ord[t]) * I + in], sizeof(float));
			}
		}
	free(hx), free(hv), free(hi), free(ord), free(line);
	release(dx), release(dv), release(di);
	return ok;
}

static void check_sort(tally *tl)
{
	int e = 0, ok = sort_case(2, 1000, 3, 1000, 0, &e);
	if (!e) ok &= sort_case(5, 37, 1, 5, 1, &e);
	if (!e) ok &= sort_case(1, LMI_CU_SORT_MAX, 1, LMI_CU_SORT_MAX, 1, &e);
	if (!e) ok &= sort_case(3, 1, 2, 1, 0, &e);
	gc_row(tl, "sort float32 stable: (2,1000,3), top 5 of 37 desc, 4096", !e && ok,
	       e ? msg : "");
	/* a line longer than the limit is refused */
	float *dx = gc_dev(4 * (LMI_CU_SORT_MAX + 1)), *dv = gc_dev(4 * (LMI_CU_SORT_MAX + 1));
	int64_t *di = gc_dev(8 * (LMI_CU_SORT_MAX + 1));
	e = T->sort(LM_FLOAT32, dx, 1, LMI_CU_SORT_MAX + 1, 1, 1, 0, dv, di, msg, sizeof msg);
	gc_row(tl, "sort: a line of 4097 refused", e != 0, e ? msg : "accepted");
	release(dx), release(dv), release(di);
}

/* ---------------------------------------------------------------- integer elementwise */

/* The CPU's integer arithmetic (cpu/ewise_loops.h, divmod.c) on int32, in int64 / uint32 here. */
static int32_t ref_int(int op, int32_t a, int32_t b)
{
	uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
	switch (op) {
	case LM_ADD: return (int32_t)(ua + ub);
	case LM_SUB: return (int32_t)(ua - ub);
	case LM_MUL: return (int32_t)(ua * ub);
	case LM_MAXIMUM: return a > b ? a : b;
	case LM_MINIMUM: return a < b ? a : b;
	case LM_LT: return a < b;
	case LM_POW: {
		uint32_t r = 1;
		for (int64_t e = b; e > 0; e--) r *= ua;
		return (int32_t)r;
	}
	default: { /* // and %: the divisor is never 0 here */
		if (b == -1) return op == LM_REMAINDER ? 0 : (int32_t)(0u - ua);
		int32_t q = a / b, r = a % b;
		if (r != 0 && ((r < 0) != (b < 0))) q -= 1, r += b;
		return op == LM_REMAINDER ? r : q;
	}
	}
}

static void check_int_ewise(tally *tl)
{
	/* (3, 1, 4) op (5, 4) -> (3, 5, 4), int32, with INT_MIN, INT_MAX, -1 and negatives */
	enum { A = 3, B = 5, K = 4 };
	int32_t ha[A * K], hb[B * K], got[A * B * K];
	uint8_t gc[A * B * K];
	for (int i = 0; i < A * K; i++) ha[i] = gc_int(-20, 21);
	for (int i = 0; i < B * K; i++) hb[i] = gc_int(-7, 8) ? gc_int(-7, 8) : 3;
	for (int i = 0; i < B * K; i++) hb[i] = hb[i] ? hb[i] : -1;
	ha[0] = INT32_MIN, ha[1] = INT32_MAX, hb[0] = -1, hb[1] = 2, hb[2] = 5;
	int32_t *da = put(ha, sizeof ha), *db = put(hb, sizeof hb), *dout = gc_dev(sizeof got);
	uint8_t *dc = gc_dev(sizeof gc);
	lmi_cu_arr a = gc_arr(da, LM_INT32, 3, (int64_t[]){A, 1, K});
	lmi_cu_arr b = gc_arr(db, LM_INT32, 2, (int64_t[]){B, K});
	lmi_cu_arr o = gc_arr(dout, LM_INT32, 3, (int64_t[]){A, B, K});
	lmi_cu_arr oc = gc_arr(dc, LM_UINT8, 3, (int64_t[]){A, B, K});
	static const int ops[] = {LM_ADD,     LM_SUB, LM_MUL,          LM_MAXIMUM,
	                          LM_MINIMUM, LM_LT,  LM_FLOOR_DIVIDE, LM_REMAINDER};
	int e = 0, ok = 1;
	for (size_t k = 0; !e && k < sizeof ops / sizeof ops[0]; k++) {
		int cmp = ops[k] == LM_LT;
		e = T->binary(ops[k], cmp ? &oc : &o, &a, &b, msg, sizeof msg);
		gc_down(got, dout, sizeof got);
		gc_down(gc, dc, sizeof gc);
		for (int i = 0; !e && i < A; i++)
			for (int j = 0; j < B; j++)
				for (int q = 0; q < K; q++) {
					int at = (i * B + j) * K + q;
					int32_t want =
					    ref_int(ops[k], ha[i * K + q], hb[j * K + q]);
					ok &= cmp ? gc[at] == want : got[at] == want;
				}
	}
	/* pow with small exponents; a zero divisor refused */
	int32_t pe[B * K];
	for (int i = 0; i < B * K; i++) pe[i] = gc_int(0, 6);
	gc_up(db, pe, sizeof pe);
	if (!e) e = T->binary(LM_POW, &o, &a, &b, msg, sizeof msg);
	gc_down(got, dout, sizeof got);
	for (int i = 0; !e && i < A * B * K; i++)
		ok &= got[i] == ref_int(LM_POW, ha[(i / (B * K)) * K + i % K], pe[i % (B * K)]);
	pe[7] = 0;
	gc_up(db, pe, sizeof pe);
	int ez = T->binary(LM_REMAINDER, &o, &a, &b, msg, sizeof msg);
	ok &= ez == LMI_CU_ERR_ZERO_DIV;
	/* unary on int32: abs (INT_MIN wraps), neg, sign, square, clamp [-5, 7], pow 3 */
	lmi_cu_arr x = gc_arr(da, LM_INT32, 1, (int64_t[]){A * K});
	lmi_cu_arr y = gc_arr(dout, LM_INT32, 1, (int64_t[]){A * K});
	static const int uops[] = {LM_ABS,    LM_NEG,       LM_SIGN,
	                           LM_SQUARE, LMI_CU_CLAMP, LMI_CU_POW_SCALAR};
	for (size_t k = 0; !e && k < sizeof uops / sizeof uops[0]; k++) {
		double p0 = uops[k] == LMI_CU_CLAMP ? -5 : 3, p1 = 7;
		e = T->unary(uops[k], &y, &x, p0, p1, msg, sizeof msg);
		gc_down(got, dout, sizeof(int32_t) * A * K);
		for (int i = 0; !e && i < A * K; i++) {
			int32_t v = ha[i];
			uint32_t u = (uint32_t)v;
			int32_t want = uops[k] == LM_ABS         ? (v < 0 ? (int32_t)(0u - u) : v)
			               : uops[k] == LM_NEG       ? (int32_t)(0u - u)
			               : uops[k] == LM_SIGN      ? (v > 0) - (v < 0)
			               : uops[k] == LM_SQUARE    ? (int32_t)(u * u)
			               : uops[k] == LMI_CU_CLAMP ? (v < -5  ? -5
			                                            : v > 7 ? 7
			                                                    : v)
			                                         : (int32_t)(u * u * u);
			ok &= got[i] == want;
		}
	}
	/* a + (-3) b on uint8 (wrapping), and where on int64 */
	uint8_t u8a[40], u8b[40], u8o[40], cond[40];
	int64_t wa[40], wb[40], wo[40];
	for (int i = 0; i < 40; i++) {
		u8a[i] = (uint8_t)gc_int(0, 256), u8b[i] = (uint8_t)gc_int(0, 256);
		cond[i] = (uint8_t)gc_int(0, 2), wa[i] = gc_int(-1000, 1000) * 1000003ll,
		wb[i] = -i;
	}
	uint8_t *d8a = put(u8a, 40), *d8b = put(u8b, 40), *d8o = gc_dev(40), *dcond = put(cond, 40);
	int64_t *dwa = put(wa, sizeof wa), *dwb = put(wb, sizeof wb), *dwo = gc_dev(sizeof wo);
	lmi_cu_arr a8 = gc_arr(d8a, LM_UINT8, 1, (int64_t[]){40}),
	           b8 = gc_arr(d8b, LM_UINT8, 1, (int64_t[]){40});
	lmi_cu_arr o8 = gc_arr(d8o, LM_UINT8, 1, (int64_t[]){40});
	if (!e) e = T->add_scaled(&o8, &a8, &b8, -3, msg, sizeof msg);
	gc_down(u8o, d8o, 40);
	for (int i = 0; !e && i < 40; i++)
		ok &= u8o[i] == (uint8_t)(u8a[i] + (uint32_t)-3 * u8b[i]);
	lmi_cu_arr c1 = gc_arr(dcond, LM_UINT8, 1, (int64_t[]){40});
	lmi_cu_arr xa = gc_arr(dwa, LM_INT64, 1, (int64_t[]){40}),
	           xb = gc_arr(dwb, LM_INT64, 1, (int64_t[]){40});
	lmi_cu_arr xo = gc_arr(dwo, LM_INT64, 1, (int64_t[]){40});
	if (!e) e = T->where(&xo, &c1, &xa, &xb, msg, sizeof msg);
	gc_down(wo, dwo, sizeof wo);
	for (int i = 0; !e && i < 40; i++) ok &= wo[i] == (cond[i] ? wa[i] : wb[i]);
	gc_row(tl, "int32 binary (broadcast) / unary, uint8 axpy, int64 where", !e && ok,
	       e ? msg : "");
	release(da), release(db), release(dout), release(dc), release(d8a), release(d8b);
	release(d8o), release(dcond), release(dwa), release(dwb), release(dwo);
}

/* ---------------------------------------------------------------- long rows (two passes) */

/* Few long rows take reduce.cu's chunked path: (3, 300007) and one row of 2^22 + 3 (a full
 * reduction), sums of small integers exact, max with its first index, argmin, a NaN winning. */
static void check_long_rows(tally *tl)
{
	static const int64_t shapes[2][2] = {{3, 300007}, {1, (1 << 22) + 3}};
	int e = 0, ok = 1;
	for (int k = 0; !e && k < 2; k++) {
		int64_t rows = shapes[k][0], R = shapes[k][1], n = rows * R;
		float *hx = malloc(sizeof(float) * (size_t)n), hs[3], hm[3];
		int64_t hi[3], ha[3];
		for (int64_t i = 0; i < n; i++) hx[i] = (float)gc_int(-2, 3);
		if (k == 1) hx[3000000] = NAN;
		float *dx = put(hx, sizeof(float) * (size_t)n), *ds = gc_dev(sizeof hs),
		      *dm = gc_dev(sizeof hm);
		int64_t *di = gc_dev(sizeof hi), *da = gc_dev(sizeof ha);
		e = T->reduce_rows(LM_SUM, LM_FLOAT32, dx, rows, R, ds, NULL, msg, sizeof msg);
		if (!e)
			e = T->reduce_rows(LM_MAX, LM_FLOAT32, dx, rows, R, dm, di, msg,
			                   sizeof msg);
		if (!e)
			e = T->reduce_rows(LM_ARGMIN, LM_FLOAT32, dx, rows, R, NULL, da, msg,
			                   sizeof msg);
		gc_down(hs, ds, sizeof(float) * (size_t)rows);
		gc_down(hm, dm, sizeof(float) * (size_t)rows);
		gc_down(hi, di, sizeof(int64_t) * (size_t)rows);
		gc_down(ha, da, sizeof(int64_t) * (size_t)rows);
		for (int64_t r = 0; !e && r < rows; r++) {
			const float *q = hx + r * R;
			double sum = 0;
			int64_t mx = 0, mn = 0;
			for (int64_t j = 0; j < R; j++) {
				sum += q[j];
				if (q[mx] == q[mx] && (q[j] > q[mx] || q[j] != q[j])) mx = j;
				if (q[mn] == q[mn] && (q[j] < q[mn] || q[j] != q[j])) mn = j;
			}
			ok &= (sum != sum ? hs[r] != hs[r] : hs[r] == (float)sum) && hi[r] == mx &&
			      ha[r] == mn && (q[mx] != q[mx] ? hm[r] != hm[r] : hm[r] == q[mx]);
		}
		free(hx);
		release(dx), release(ds), release(dm), release(di), release(da);
	}
	gc_row(tl, "sum, max, argmin of long rows (two passes), NaN", !e && ok, e ? msg : "");
}

/* Integer rows (int32 (4, 1001), uint8 (3, 70001)): sum and prod wrapping into int64, mean into
 * float32, max with its first index and argmin in the input's dtype; exact. */
static void check_int_rows(tally *tl)
{
	enum { R32 = 1001, R8 = 70001 };
	int32_t *h32 = malloc(sizeof(int32_t) * 4 * R32);
	uint8_t *h8 = malloc(3 * R8);
	for (int i = 0; i < 4 * R32; i++) h32[i] = gc_int(-1000000000, 1000000000);
	for (int i = 0; i < 3 * R8; i++) h8[i] = (uint8_t)gc_int(0, 256);
	for (int i = 0; i < R32; i++)
		h32[3 * R32 + i] = gc_int(1, 4); /* a product that does not wrap to 0 */
	void *d32 = put(h32, sizeof(int32_t) * 4 * R32), *d8 = put(h8, 3 * R8);
	int64_t *dout = gc_dev(64), hi[4], hix[4];
	int32_t hm[4];
	float hf[4];
	int e = 0, ok = 1;
	for (int k = 0; !e && k < 2; k++) {
		int dt = k ? LM_UINT8 : LM_INT32, rows = k ? 3 : 4, R = k ? R8 : R32;
		void *dx = k ? d8 : d32;
		for (int r = 0; r < rows; r++) {
			uint64_t s = 0, p = 1;
			int64_t mx = 0, mn = 0;
			for (int j = 0; j < R; j++) {
				int64_t v = k ? h8[r * R + j] : h32[r * R + j];
				int64_t bm = k ? h8[r * R + mx] : h32[r * R + mx],
				        bn = k ? h8[r * R + mn] : h32[r * R + mn];
				s += (uint64_t)v, p *= (uint64_t)v;
				if (v > bm) mx = j;
				if (v < bn) mn = j;
			}
			int64_t *di = (int64_t *)dout + 4;
			e = T->reduce_rows(LM_SUM, dt, (char *)dx + (size_t)r * R * (k ? 1 : 4), 1,
			                   R, dout, NULL, msg, sizeof msg);
			if (!e) gc_down(hi, dout, 8), ok &= hi[0] == (int64_t)s;
			if (!e)
				e = T->reduce_rows(LM_PROD, dt,
				                   (char *)dx + (size_t)r * R * (k ? 1 : 4), 1, R,
				                   dout, NULL, msg, sizeof msg);
			if (!e) gc_down(hi, dout, 8), ok &= hi[0] == (int64_t)p;
			if (!e)
				e = T->reduce_rows(LM_MEAN, dt,
				                   (char *)dx + (size_t)r * R * (k ? 1 : 4), 1, R,
				                   dout, NULL, msg, sizeof msg);
			if (!e)
				gc_down(hf, dout, 4),
				    ok &= hf[0] == (float)((double)(int64_t)s / R);
			if (!e)
				e = T->reduce_rows(LM_MAX, dt,
				                   (char *)dx + (size_t)r * R * (k ? 1 : 4), 1, R,
				                   dout, di, msg, sizeof msg);
			if (!e) {
				gc_down(hm, dout, 4), gc_down(hix, di, 8);
				int64_t got = k ? ((uint8_t *)hm)[0] : hm[0];
				ok &= hix[0] == mx && got == (k ? h8[r * R + mx] : h32[r * R + mx]);
			}
			if (!e)
				e = T->reduce_rows(LM_ARGMIN, dt,
				                   (char *)dx + (size_t)r * R * (k ? 1 : 4), 1, R,
				                   NULL, di, msg, sizeof msg);
			if (!e) gc_down(hix, di, 8), ok &= hix[0] == mn;
		}
	}
	gc_row(tl, "int32 / uint8 rows: sum, prod (wrapping), mean, max, argmin", !e && ok,
	       e ? msg : "");
	free(h32), free(h8);
	release(d32), release(d8), release(dout);
}

/* Integer GEMM: int32, a batch of 2 sharing A (stride 0), products that wrap; exact. */
static void check_igemm(tally *tl)
{
	enum { B = 2, M = 5, K = 7, N = 6 };
	int32_t ha[M * K], hb[B * K * N], hc[B * M * N];
	for (int i = 0; i < M * K; i++) ha[i] = gc_int(-100000, 100000);
	for (int i = 0; i < B * K * N; i++) hb[i] = gc_int(-100000, 100000);
	int32_t *da = put(ha, sizeof ha), *db = put(hb, sizeof hb), *dc = gc_dev(sizeof hc);
	int e = T->gemm(LM_INT32, B, M, N, K, da, 0, db, K * N, dc, M * N, 0, msg, sizeof msg);
	int ok = !e;
	gc_down(hc, dc, sizeof hc);
	for (int b = 0; ok && b < B; b++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				uint32_t acc = 0;
				for (int k = 0; k < K; k++)
					acc += (uint32_t)ha[i * K + k] *
					       (uint32_t)hb[(b * K + k) * N + j];
				ok &= hc[(b * M + i) * N + j] == (int32_t)acc;
			}
	gc_row(tl, "gemm int32 batch 2 (A shared), 5x7x6, wrapping", ok, e ? msg : "");
	release(da), release(db), release(dc);
}

void gc_tensor_slots(tally *tl)
{
	T = lm_cuda_tensor_api();
	check_stats(tl);
	check_gelu(tl);
	check_max_pool(tl);
	check_rmsprop(tl);
	check_crop_flip(tl);
	check_index_select(tl);
	check_gather_scatter(tl);
	check_one_hot(tl);
	check_cumsum(tl);
	check_triangle_repeat(tl);
	check_sort(tl);
	check_int_ewise(tl);
	check_long_rows(tl);
	check_int_rows(tl);
	check_igemm(tl);
}
