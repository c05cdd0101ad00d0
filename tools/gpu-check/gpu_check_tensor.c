/*
 * gpu_check_tensor.c — the CUDA tensor backend's kernels (src/backend/cuda/tensor_api.h) against
 * CPU references, and the Measure rows of issue 22: SGEMM 4096^2 through the backend's gemm
 * against cuBLAS called directly (ratio >= 0.95), and elementwise add and sum of 2^26 float32 in
 * GB/s against a device-to-device copy (>= 70%). Inputs are small integers, so sums and products
 * are exact in any order; softmax compares within 1e-12 in float64; im2col and col2im exactly.
 * Random numbers must equal core/philox.h's on the host bit for bit (the CPU's streams). Read next:
 * ../../src/backend/cuda/tensor.cu, docs/gpu-check.md.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/tensor_api.h"
#include "core/philox.h"
#include "gpu_check.h"
#include "lumen/ops.h"

static const lmi_cuda_tensor_api *T;
static char msg[512];

static void row(tally *tl, const char *what, int ok, const char *detail)
{
	tl->runs++;
	if (!ok) tl->failures++;
	printf("%-44s %-6s %s\n", what, ok ? "ok" : "FAILED", detail);
}

static void *dev(size_t n)
{
	void *p = NULL;
	if (T->malloc(&p, n, msg, sizeof msg)) {
		fprintf(stderr, "gpu-check: %s\n", msg);
		exit(1);
	}
	return p;
}

static void up(void *d, const void *h, size_t n)
{
	T->memcpy(d, h, n, 0, 0, msg, sizeof msg);
}
static void down(void *h, const void *d, size_t n)
{
	T->memcpy(h, d, n, 1, 0, msg, sizeof msg);
}

static lmi_cu_arr arr(void *p, int dt, int nd, const int64_t *shape)
{
	lmi_cu_arr a;
	memset(&a, 0, sizeof a);
	a.data = p, a.dtype = dt, a.ndim = nd;
	int64_t s = 1;
	for (int i = nd - 1; i >= 0; i--) a.shape[i] = shape[i], a.stride[i] = s, s *= shape[i];
	return a;
}

static float *ints(int64_t n)
{
	float *h = malloc((size_t)n * sizeof *h);
	for (int64_t i = 0; i < n; i++) h[i] = (float)gc_int(-2, 3);
	return h;
}

static void check_random(tally *tl)
{
	enum { N = 1001 };
	float *d = dev(N * 4), h[N], want[N];
	lmi_cu_arr a = arr(d, LM_FLOAT32, 1, (int64_t[]){N});
	lmi_cu_rng r = {LMI_RNG_UNIFORM, 0, -1, 3, 0, 0, 1234, 77};
	int e = T->random(&a, &r, msg, sizeof msg);
	down(h, d, sizeof h);
	for (int64_t b = 0; b * 4 < N; b++) {
		uint32_t w[4];
		double v[4];
		lmi_philox_block(1234, 77 + (uint64_t)b, w);
		lmi_rng_values(LMI_RNG_UNIFORM, 0, -1, 3, w, v);
		for (int k = 0; k < 4 && b * 4 + k < N; k++) want[b * 4 + k] = (float)v[k];
	}
	row(tl, "random uniform float32 (Philox, CPU's stream)", !e && !memcmp(h, want, sizeof h),
	    e ? msg : "");
	T->free(d, msg, sizeof msg);
}

static void check_binary_reduce(tally *tl)
{
	/* (37, 1, 5) + (4, 5) -> (37, 4, 5) */
	float *ha = ints(37 * 5), *hb = ints(20), hout[37 * 20];
	float *da = dev(37 * 5 * 4), *db = dev(20 * 4), *dout = dev(sizeof hout);
	up(da, ha, 37 * 5 * 4);
	up(db, hb, 20 * 4);
	lmi_cu_arr o = arr(dout, LM_FLOAT32, 3, (int64_t[]){37, 4, 5});
	lmi_cu_arr a = arr(da, LM_FLOAT32, 3, (int64_t[]){37, 1, 5});
	lmi_cu_arr b = arr(db, LM_FLOAT32, 2, (int64_t[]){4, 5});
	int e = T->binary(LM_ADD, &o, &a, &b, msg, sizeof msg), ok = !e;
	down(hout, dout, sizeof hout);
	for (int i = 0; ok && i < 37; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 5; k++)
				ok &= hout[(i * 4 + j) * 5 + k] == ha[i * 5 + k] + hb[j * 5 + k];
	row(tl, "add (37,1,5)+(4,5) broadcast, float32", ok, e ? msg : "");
	/* row sums, maxima and argmaxima of (1000, 1037) */
	enum { R = 1000, C = 1037 };
	float *hx = ints((int64_t)R * C), hs[R], hm[R];
	int64_t hi[R];
	float *dx = dev((size_t)R * C * 4), *ds = dev(R * 4), *dm = dev(R * 4);
	int64_t *di = dev(R * 8);
	up(dx, hx, (size_t)R * C * 4);
	e = T->reduce_rows(LM_SUM, LM_FLOAT32, dx, R, C, ds, NULL, msg, sizeof msg);
	if (!e) e = T->reduce_rows(LM_MAX, LM_FLOAT32, dx, R, C, dm, di, msg, sizeof msg);
	down(hs, ds, sizeof hs);
	down(hm, dm, sizeof hm);
	down(hi, di, sizeof hi);
	ok = !e;
	for (int r = 0; ok && r < R; r++) {
		double s = 0, m = -1e30;
		int64_t at = 0;
		for (int c = 0; c < C; c++) {
			float v = hx[(int64_t)r * C + c];
			s += v;
			if (v > m) m = v, at = c;
		}
		ok &= hs[r] == (float)s && hm[r] == (float)m && hi[r] == at;
	}
	row(tl, "sum, max + first argmax of rows (1000, 1037)", ok, e ? msg : "");
	free(ha), free(hb), free(hx);
	T->free(da, msg, sizeof msg), T->free(db, msg, sizeof msg), T->free(dout, msg, sizeof msg);
	T->free(dx, msg, sizeof msg), T->free(ds, msg, sizeof msg), T->free(dm, msg, sizeof msg);
	T->free(di, msg, sizeof msg);
}

static void check_gemm_softmax(tally *tl)
{
	enum { B = 3, M = 65, N = 33, K = 129 };
	double *ha = malloc(sizeof(double) * M * K), *hb = malloc(sizeof(double) * B * K * N);
	double *hc = malloc(sizeof(double) * B * M * N);
	for (int i = 0; i < M * K; i++) ha[i] = gc_int(-2, 3);
	for (int i = 0; i < B * K * N; i++) hb[i] = gc_int(-2, 3);
	double *da = dev(sizeof(double) * M * K), *db = dev(sizeof(double) * B * K * N);
	double *dc = dev(sizeof(double) * B * M * N);
	up(da, ha, sizeof(double) * M * K);
	up(db, hb, sizeof(double) * B * K * N);
	int e = T->gemm(LM_FLOAT64, B, M, N, K, da, 0, db, K * N, dc, M * N, 0, msg, sizeof msg),
	    ok = !e;
	down(hc, dc, sizeof(double) * B * M * N);
	for (int b = 0; ok && b < B; b++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				double s = 0;
				for (int k = 0; k < K; k++)
					s += ha[i * K + k] * hb[(b * K + k) * N + j];
				ok &= hc[(b * M + i) * N + j] == s;
			}
	row(tl, "gemm float64 batch 3 (A shared), 65x129x33", ok, e ? msg : "");
	/* log_softmax of (7, 100, 3) along the middle dim */
	enum { O = 7, L = 100, I = 3 };
	double hx[O * L * I], hy[O * L * I];
	for (int i = 0; i < O * L * I; i++) hx[i] = gc_int(-2, 3) * 0.37;
	double *dx = dev(sizeof hx), *dy = dev(sizeof hy);
	up(dx, hx, sizeof hx);
	e = T->softmax(LM_FLOAT64, dx, dy, O, L, I, 1, msg, sizeof msg);
	down(hy, dy, sizeof hy);
	double worst = 0;
	for (int o = 0; !e && o < O; o++)
		for (int in = 0; in < I; in++) {
			double mx = -INFINITY, s = 0;
			for (int j = 0; j < L; j++) mx = fmax(mx, hx[(o * L + j) * I + in]);
			for (int j = 0; j < L; j++) s += exp(hx[(o * L + j) * I + in] - mx);
			for (int j = 0; j < L; j++) {
				double want = hx[(o * L + j) * I + in] - mx - log(s);
				worst = fmax(worst, fabs(hy[(o * L + j) * I + in] - want));
			}
		}
	char d[64];
	snprintf(d, sizeof d, "max |error| %.1e", worst);
	row(tl, "log_softmax float64 (7, 100, 3) dim 2", !e && worst < 1e-12, e ? msg : d);
	free(ha), free(hb), free(hc);
	T->free(da, msg, sizeof msg), T->free(db, msg, sizeof msg), T->free(dc, msg, sizeof msg);
	T->free(dx, msg, sizeof msg), T->free(dy, msg, sizeof msg);
}

/* im2col against the definition, col2im by the adjoint identity <col2im(c), x> = <c, im2col(x)>
 * (integers: exact), on a window with stride, padding and dilation. */
static void check_windows(tally *tl)
{
	enum { P = 3, H = 7, W = 8 };
	const int64_t w[8] = {3, 2, 2, 1, 1, 0, 1, 2}; /* kh kw sh sw ph pw dh dw */
	int64_t oh = (H + 2 * w[4] - w[6] * (w[0] - 1) - 1) / w[2] + 1;
	int64_t ow = (W + 2 * w[5] - w[7] * (w[1] - 1) - 1) / w[3] + 1;
	int64_t nc = P * w[0] * w[1] * oh * ow;
	double hx[P * H * W], *hc = malloc(sizeof(double) * (size_t)nc),
	                      *hr = malloc(sizeof(double) * (size_t)nc);
	double *hg = malloc(sizeof(double) * (size_t)nc), hb[P * H * W];
	for (int i = 0; i < P * H * W; i++) hx[i] = gc_int(-2, 3);
	for (int64_t i = 0; i < nc; i++) hg[i] = gc_int(-2, 3);
	double *dx = dev(sizeof hx), *dc = dev(sizeof(double) * (size_t)nc),
	       *dg = dev(sizeof(double) * (size_t)nc);
	double *db = dev(sizeof hb);
	up(dx, hx, sizeof hx);
	up(dg, hg, sizeof(double) * (size_t)nc);
	int e = T->im2col(LM_FLOAT64, dx, dc, P, H, W, w, oh, ow, msg, sizeof msg);
	if (!e) e = T->col2im(LM_FLOAT64, dg, db, P, H, W, w, oh, ow, msg, sizeof msg);
	down(hc, dc, sizeof(double) * (size_t)nc);
	down(hb, db, sizeof hb);
	int ok = !e;
	double lhs = 0, rhs = 0;
	for (int64_t i = 0; i < nc; i++) {
		int64_t ox = i % ow, r = i / ow, oy = r % oh;
		r /= oh;
		int64_t kj = r % w[1], ki = (r / w[1]) % w[0], p = r / w[1] / w[0];
		int64_t iy = oy * w[2] - w[4] + ki * w[6], ix = ox * w[3] - w[5] + kj * w[7];
		hr[i] = iy >= 0 && iy < H && ix >= 0 && ix < W ? hx[(p * H + iy) * W + ix] : 0;
		ok &= hc[i] == hr[i];
		rhs += hg[i] * hr[i];
	}
	for (int i = 0; i < P * H * W; i++) lhs += hb[i] * hx[i];
	row(tl, "im2col float64, 3x2 window, stride 2x1, pad 1x0, dil 1x2", ok, e ? msg : "");
	row(tl, "col2im float64: <col2im(g), x> = <g, im2col(x)>", !e && lhs == rhs, e ? msg : "");
	free(hc), free(hr), free(hg);
	T->free(dx, msg, sizeof msg), T->free(dc, msg, sizeof msg), T->free(dg, msg, sizeof msg);
	T->free(db, msg, sizeof msg);
}

/* The helpers above, for gpu_check_slots.c. */
void gc_row(tally *tl, const char *what, int ok, const char *detail)
{
	row(tl, what, ok, detail);
}
void *gc_dev(size_t n)
{
	return dev(n);
}
void gc_up(void *d, const void *h, size_t n)
{
	up(d, h, n);
}
void gc_down(void *h, const void *d, size_t n)
{
	down(h, d, n);
}
lmi_cu_arr gc_arr(void *p, int dt, int nd, const int64_t *shape)
{
	return arr(p, dt, nd, shape);
}

/* The median of 5 timed runs (after one warm-up) of f, in ms, the stream synchronised. */
static double timed(void (*f)(void *), void *ctx)
{
	double t[5];
	f(ctx);
	T->sync(msg, sizeof msg);
	for (int r = 0; r < 5; r++) {
		double t0 = gc_now_ms();
		f(ctx);
		T->sync(msg, sizeof msg);
		cudaDeviceSynchronize();
		t[r] = gc_now_ms() - t0;
	}
	for (int i = 0; i < 5; i++)
		for (int j = i + 1; j < 5; j++)
			if (t[j] < t[i]) {
				double x = t[i];
				t[i] = t[j], t[j] = x;
			}
	return t[2];
}

typedef struct bufs {
	float *a, *b, *c;
	int64_t n;
	cublasHandle_t h;
} bufs;

static void run_gemm(void *p)
{
	bufs *q = p;
	T->gemm(LM_FLOAT32, 1, 4096, 4096, 4096, q->a, 0, q->b, 0, q->c, 0, 0, msg, sizeof msg);
}

static void run_cublas(void *p)
{
	bufs *q = p;
	const float one = 1, zero = 0;
	cublasSgemm(q->h, CUBLAS_OP_N, CUBLAS_OP_N, 4096, 4096, 4096, &one, q->b, 4096, q->a, 4096,
	            &zero, q->c, 4096);
}

static void run_add(void *p)
{
	bufs *q = p;
	lmi_cu_arr o = arr(q->c, LM_FLOAT32, 1, &q->n), a = arr(q->a, LM_FLOAT32, 1, &q->n),
	           b = arr(q->b, LM_FLOAT32, 1, &q->n);
	T->binary(LM_ADD, &o, &a, &b, msg, sizeof msg);
}

static void run_sum(void *p)
{
	bufs *q = p;
	T->reduce_rows(LM_SUM, LM_FLOAT32, q->a, 1, q->n, q->c, NULL, msg, sizeof msg);
}

static void run_copy(void *p)
{
	bufs *q = p;
	T->memcpy(q->c, q->a, (size_t)q->n * 4, 2, 0, msg, sizeof msg);
}

static void measure(tally *tl, int quick)
{
	bufs q = {0};
	q.n = quick ? (1 << 22) : (1 << 26);
	size_t big =
	    (size_t)q.n * 4 > (size_t)4096 * 4096 * 4 ? (size_t)q.n * 4 : (size_t)4096 * 4096 * 4;
	q.a = dev(big), q.b = dev(big), q.c = dev(big);
	lmi_cu_arr fa = arr(q.a, LM_FLOAT32, 1, (int64_t[]){(int64_t)(big / 4)});
	lmi_cu_arr fb = arr(q.b, LM_FLOAT32, 1, (int64_t[]){(int64_t)(big / 4)});
	T->fill(&fa, 1, msg, sizeof msg);
	T->fill(&fb, 2, msg, sizeof msg);
	cublasCreate(&q.h);
	double tg = timed(run_gemm, &q), tc = timed(run_cublas, &q);
	double flop = 2.0 * 4096 * 4096 * 4096;
	char d[160];
	snprintf(d, sizeof d,
	         "backend %.2f ms (%.1f TFLOP/s), cuBLAS %.2f ms: ratio %.3f (>= 0.95)", tg,
	         flop / tg / 1e9, tc, tc / tg);
	row(tl, "Measure: SGEMM 4096^2 backend vs cuBLAS", tc / tg >= 0.95, d);
	/* the timer behind the REPL's GPU time: events around 3 SGEMMs, between half of 3 timed runs
	 * and the wall clock around them */
	double ev = 0, w0 = gc_now_ms();
	int e = T->timer(0, NULL, msg, sizeof msg);
	for (int r = 0; r < 3 && !e; r++) run_gemm(&q);
	if (!e) e = T->timer(1, &ev, msg, sizeof msg);
	double wall = gc_now_ms() - w0;
	snprintf(d, sizeof d, "events %.2f ms, wall %.2f ms, 3 x the median SGEMM %.2f ms", ev, wall,
	         3 * tg);
	row(tl, "timer (REPL :time GPU time): 3 SGEMMs", !e && ev >= 1.5 * tg && ev <= wall + 0.05,
	    e ? msg : d);
	double tcp = timed(run_copy, &q), ta = timed(run_add, &q), ts = timed(run_sum, &q);
	double gcp = 2.0 * 4 * (double)q.n / tcp / 1e6, ga = 3.0 * 4 * (double)q.n / ta / 1e6,
	       gs = 4.0 * (double)q.n / ts / 1e6;
	snprintf(d, sizeof d, "add %.0f GB/s, copy %.0f GB/s: %.0f%% (>= 70%%)", ga, gcp,
	         100 * ga / gcp);
	row(tl, "Measure: add of 2^26 float32 vs D2D copy", ga >= 0.7 * gcp, d);
	snprintf(d, sizeof d, "sum %.0f GB/s, copy %.0f GB/s: %.0f%% (>= 70%%)", gs, gcp,
	         100 * gs / gcp);
	row(tl, "Measure: sum of 2^26 float32 vs D2D copy", gs >= 0.7 * gcp, d);
	cublasDestroy(q.h);
	T->free(q.a, msg, sizeof msg), T->free(q.b, msg, sizeof msg), T->free(q.c, msg, sizeof msg);
}

void gc_tensor_backend(tally *tl, int quick)
{
	T = lm_cuda_tensor_api();
	printf(
	    "\nthe tensor backend's kernels (src/backend/cuda/tensor.cu) against CPU references\n");
	if (T->version != LMI_CUDA_TENSOR_VERSION || T->init(msg, sizeof msg)) {
		row(tl, "tensor backend: init", 0, msg);
		return;
	}
	check_random(tl);
	check_binary_reduce(tl);
	check_gemm_softmax(tl);
	check_windows(tl);
	gc_tensor_slots(tl);
	measure(tl, quick);
}
