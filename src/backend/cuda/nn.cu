/*
 * nn.cu — the CUDA module's kernels for the nn and training slots the CNN example needs beyond
 * tensor.cu's: GELU and its derivative on any strides, max pooling with indices, the RMSprop
 * update, and the data loader's batch crop and flip. Each mirrors its CPU loop (cpu/nn.c,
 * cpu/train.c) element for element: GELU in double as the CPU computes it, max pooling's first
 * maximum or first NaN in row-major window order, RMSprop's torch.optim 1.13 arithmetic in the
 * parameter's dtype. One thread per output element with a grid stride (cu_common.cuh); every
 * launch checked. Read next: move.cu.
 */
#include <math.h>

#include "backend/cuda/cu_common.cuh"

/* ---------------------------------------------------------------- GELU */

/* lmi_gelu and lmi_gelu_grad: scalar_math.h, in double as the CPU. */

/* operands: 0 out, 1 x, 2 g (when grad) */
template <typename T>
__global__ void k_gelu(Geo g, T *out, const T *x, const T *gr, int grad, int t)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[3];
		offsets(g, i, grad ? 3 : 2, off);
		double v = (double)x[off[1]];
		out[off[0]] = (T)(grad ? (double)gr[off[2]] * lmi_gelu_grad(v, t) : lmi_gelu(v, t));
	}
}

int lmi_cu_gelu(const lmi_cu_arr *out, const lmi_cu_arr *x, const lmi_cu_arr *g, int t,
                char *msg, size_t cap)
{
	const lmi_cu_arr *ops[3] = {out, x, g ? g : x};
	Geo geo = make_geo(out, 3, ops);
	if (!geo.n) return 0;
	int grad = g != NULL;
	if (out->dtype == LM_FLOAT32)
		k_gelu<float><<<blocks_for(geo.n), THREADS, 0, lmi_cu_stream()>>>(
			geo, (float *)out->data, (const float *)x->data,
			grad ? (const float *)g->data : NULL, grad, t);
	else
		k_gelu<double><<<blocks_for(geo.n), THREADS, 0, lmi_cu_stream()>>>(
			geo, (double *)out->data, (const double *)x->data,
			grad ? (const double *)g->data : NULL, grad, t);
	LAUNCHED("k_gelu");
	return 0;
}

/* ---------------------------------------------------------------- max pooling */

struct Pool {
	int64_t planes, H, W, OH, OW, kh, kw, sh, sw, ph, pw;
};

/* One thread per output cell: its window clipped to the image, scanned in row-major order; an
 * entry replaces the best when larger, or when NaN while the best is not (cpu/nn.c maxcell_). */
template <typename T> __global__ void k_maxpool(Pool p, const T *x, T *y, int64_t *ix)
{
	GRID_LOOP(i, p.planes * p.OH * p.OW)
	{
		int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH, pl = i / (p.OW * p.OH);
		int64_t h0 = oh * p.sh - p.ph, w0 = ow * p.sw - p.pw;
		int64_t i0 = h0 < 0 ? 0 : h0, i1 = h0 + p.kh > p.H ? p.H : h0 + p.kh;
		int64_t j0 = w0 < 0 ? 0 : w0, j1 = w0 + p.kw > p.W ? p.W : w0 + p.kw;
		if (i0 >= i1 || j0 >= j1) {
			y[i] = (T)-INFINITY;
			ix[i] = -1;
			continue;
		}
		const T *xp = x + pl * p.H * p.W;
		T best = xp[i0 * p.W + j0];
		int64_t bi = i0 * p.W + j0;
		for (int64_t r = i0; r < i1; r++)
			for (int64_t c = j0; c < j1; c++) {
				T v = xp[r * p.W + c];
				if (v > best || (v != v && best == best)) best = v, bi = r * p.W + c;
			}
		y[i] = best;
		ix[i] = bi;
	}
}

int lmi_cu_max_pool2d(int dtype, const void *x, void *y, int64_t *idx, int64_t planes, int64_t H,
                      int64_t W, int64_t OH, int64_t OW, const int64_t *w, char *msg, size_t cap)
{
	Pool p = {planes, H, W, OH, OW, w[0], w[1], w[2], w[3], w[4], w[5]};
	int64_t n = planes * OH * OW;
	if (!n) return 0;
	if (dtype == LM_FLOAT32)
		k_maxpool<float><<<blocks_for(n), THREADS, 0, lmi_cu_stream()>>>(p, (const float *)x,
		                                                                 (float *)y, idx);
	else
		k_maxpool<double><<<blocks_for(n), THREADS, 0, lmi_cu_stream()>>>(p, (const double *)x,
		                                                                  (double *)y, idx);
	LAUNCHED("k_maxpool");
	return 0;
}

/* ---------------------------------------------------------------- RMSprop (cpu/train.c's) */

template <typename T, typename K>
__global__ void k_rmsprop(T *w, const T *gr, T *sa, T *bf, T *ga, int64_t n, K k, T sign)
{
	GRID_LOOP(i, n)
	w[i] = lmi_rmsprop_update(w[i], sign * gr[i], sa + i, ga ? ga + i : (T *)0,
	                          bf ? bf + i : (T *)0, &k);
}

int lmi_cu_rmsprop(int dtype, void *p, const void *g, void *sq, void *buf, void *gavg, int64_t n,
                   const double *f, char *msg, size_t cap)
{
	if (!n) return 0;
	/* f: alpha, weight_decay, lr, eps, momentum, maximize */
	double sign = f[5] != 0 ? -1 : 1;
	if (dtype == LM_FLOAT32) {
		lmi_rmsprop_kf k = {(float)f[0], (float)(1 - f[0]), (float)f[1], (float)f[2], (float)f[3],
		                    (float)f[4]};
		k_rmsprop<float, lmi_rmsprop_kf><<<blocks_for(n), THREADS, 0, lmi_cu_stream()>>>(
			(float *)p, (const float *)g, (float *)sq, (float *)buf, (float *)gavg, n, k,
			(float)sign);
	} else {
		lmi_rmsprop_kd k = {f[0], 1 - f[0], f[1], f[2], f[3], f[4]};
		k_rmsprop<double, lmi_rmsprop_kd><<<blocks_for(n), THREADS, 0, lmi_cu_stream()>>>(
			(double *)p, (const double *)g, (double *)sq, (double *)buf, (double *)gavg, n, k,
			sign);
	}
	LAUNCHED("k_rmsprop");
	return 0;
}

/* ---------------------------------------------------------------- crop and flip */

struct Crop {
	int64_t N, C, H, W, oh, ow, pad;
};

/* One thread per output element: the padded image's pixel at the sample's offset, or 0. */
template <typename E> __global__ void k_crop(Crop c, const void *xv, const int64_t *off, void *ov)
{
	const E *x = (const E *)xv;
	E *out = (E *)ov;
	GRID_LOOP(i, c.N * c.C * c.oh * c.ow)
	{
		int64_t j = i % c.ow, r = i / c.ow, y = r % c.oh, nc = r / c.oh, n = nc / c.C;
		int64_t sy = off[2 * n] - c.pad + y, sx = off[2 * n + 1] - c.pad + j;
		out[i] = sy >= 0 && sy < c.H && sx >= 0 && sx < c.W ? x[(nc * c.H + sy) * c.W + sx] : (E)0;
	}
}

int lmi_cu_crop(int esize, const void *x, const int64_t *offsets, int64_t pad, int64_t N,
                int64_t C, int64_t H, int64_t W, int64_t oh, int64_t ow, void *out, char *msg,
                size_t cap)
{
	Crop c = {N, C, H, W, oh, ow, pad};
	int64_t n = N * C * oh * ow;
	if (!n) return 0;
	BY_SIZE(esize, k_crop, n, c, x, offsets, out);
	LAUNCHED("k_crop");
	return 0;
}

/* One thread per element of (N, lines, W): from the mirrored column where the sample flips. */
template <typename E>
__global__ void k_flip(const void *xv, const uint8_t *mask, void *ov, int64_t N, int64_t lines,
                       int64_t W)
{
	const E *x = (const E *)xv;
	E *out = (E *)ov;
	GRID_LOOP(i, N * lines * W)
	{
		int64_t a = i % W, row = i / W, n = row / lines;
		out[i] = mask[n] ? x[row * W + (W - 1 - a)] : x[i];
	}
}

int lmi_cu_flip(int esize, const void *x, const uint8_t *mask, void *out, int64_t N,
                int64_t lines, int64_t W, char *msg, size_t cap)
{
	int64_t n = N * lines * W;
	if (!n) return 0;
	BY_SIZE(esize, k_flip, n, x, mask, out, N, lines, W);
	LAUNCHED("k_flip");
	return 0;
}
