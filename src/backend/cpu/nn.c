/*
 * nn.c — CPU loops of the fused neural-network ops: softmax / log-softmax along a dim, GELU and
 * its derivative, the gather of the NLL loss and its scatter, and max pooling with indices.
 * Everything else in nn (layer norm, losses, convolution) is composed from other ops.
 * Read next: ../../ops/nn.c.
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/blas.h"
#include "backend/cpu/nn.h"
#include "backend/scalar_math.h"

#pragma omp declare simd notinbranch
extern float expf(float);
#pragma omp declare simd notinbranch
extern double exp(double);

/* ---------------------------------------------------------------- softmax */

#define SOFTMAX(T, EXP, LOG)                                                                        \
	static void softmax_##T(const T *x, T *y, int64_t outer, int64_t R, int64_t inner, bool lg)     \
	{                                                                                           \
		int64_t lines = outer * inner;                                                          \
		_Pragma("omp parallel for schedule(static) if (lines * R > LMI_PARALLEL_GRAIN)")        \
		for (int64_t l = 0; l < lines; l++) {                                                   \
			int64_t o = l / inner, j = l % inner;                                               \
			const T *xl = x + o * R * inner + j;                                                \
			T *yl = y + o * R * inner + j;                                                      \
			T m = -INFINITY;                                                                    \
			for (int64_t k = 0; k < R; k++) m = xl[k * inner] > m ? xl[k * inner] : m;         \
			if (isinf(m) && m < 0) m = 0; /* all -inf: exp gives 0s, the sum 0 -> nan/-inf */   \
			double s = 0;                                                                       \
			if (inner == 1) {                                                                   \
				_Pragma("omp simd reduction(+ : s)") for (int64_t k = 0; k < R; k++)            \
				{                                                                               \
					T e = EXP(xl[k] - m);                                                       \
					yl[k] = e;                                                                  \
					s += e;                                                                     \
				}                                                                               \
			} else {                                                                            \
				for (int64_t k = 0; k < R; k++) {                                               \
					T e = EXP(xl[k * inner] - m);                                               \
					yl[k * inner] = e;                                                          \
					s += e;                                                                     \
				}                                                                               \
			}                                                                                   \
			if (lg) {                                                                           \
				T ls = (T)LOG(s) + m;                                                           \
				for (int64_t k = 0; k < R; k++) yl[k * inner] = xl[k * inner] - ls;             \
			} else {                                                                            \
				T inv = (T)(1.0 / s);                                                           \
				for (int64_t k = 0; k < R; k++) yl[k * inner] *= inv;                           \
			}                                                                                   \
		}                                                                                       \
	}
SOFTMAX(float, expf, log)
SOFTMAX(double, exp, log)

lm_status lmi_cpu_softmax(const lm_tensor *x, lm_tensor *y, int64_t outer, int64_t R,
                          int64_t inner, bool log_softmax)
{
	if (x->dtype == LM_FLOAT32)
		softmax_float((const float *)lmi_data(x), (float *)lmi_data(y), outer, R, inner, log_softmax);
	else
		softmax_double((const double *)lmi_data(x), (double *)lmi_data(y), outer, R, inner,
		               log_softmax);
	return LM_OK;
}

/* ---------------------------------------------------------------- GELU */

/* lmi_gelu and lmi_gelu_grad (scalar_math.h), in double. */

typedef struct gelu_ctx {
	bool tanh_approx;
	bool grad; /* operands: (out, x) or (out, x, g) */
	lm_dtype dt;
} gelu_ctx;

static void gelu_kernel(void *vctx, char **p, const int64_t *s, int64_t n)
{
	const gelu_ctx *c = vctx;
	for (int64_t i = 0; i < n; i++) {
		double x = c->dt == LM_FLOAT32 ? *(const float *)(p[1] + i * s[1]) : *(const double *)(p[1] + i * s[1]);
		double v;
		if (c->grad) {
			double g = c->dt == LM_FLOAT32 ? *(const float *)(p[2] + i * s[2])
			                               : *(const double *)(p[2] + i * s[2]);
			v = g * lmi_gelu_grad(x, c->tanh_approx);
		} else {
			v = lmi_gelu(x, c->tanh_approx);
		}
		if (c->dt == LM_FLOAT32)
			*(float *)(p[0] + i * s[0]) = (float)v;
		else
			*(double *)(p[0] + i * s[0]) = v;
	}
}

lm_status lmi_cpu_gelu(lm_tensor *out, const lm_tensor *x, const lm_tensor *g, bool tanh_approx)
{
	gelu_ctx c = {tanh_approx, g != NULL, out->dtype};
	lmi_iter it;
	const lm_tensor *ops[3] = {out, x, g};
	lmi_iter_init(&it, g ? 3 : 2, ops, out->ndim, out->shape);
	return lmi_iter_run(&it, gelu_kernel, &c);
}

/* ---------------------------------------------------------------- NLL gather / scatter */

/* dst[d] = -src[s] for each target: gather (d = (n, l), s = (n, t[n, l], l)) or scatter (the
 * reverse). logp / gx: contiguous (N, C, L) (L = product of the spatial dims, 1 without); target:
 * contiguous int64 (N, L), already checked in range; src and dst of one float dtype each. */
static void nll_move(const lm_tensor *src, lm_tensor *dst, const lm_tensor *target, int64_t N,
                     int64_t C, int64_t L, bool scatter)
{
	const int64_t *t = (const int64_t *)lmi_data(target);
	for (int64_t n = 0; n < N; n++)
		for (int64_t l = 0; l < L; l++) {
			int64_t k = (n * C + t[n * L + l]) * L + l, j = n * L + l;
			int64_t si = scatter ? j : k, di = scatter ? k : j;
			double v = src->dtype == LM_FLOAT32 ? ((const float *)lmi_data(src))[si]
			                                    : ((const double *)lmi_data(src))[si];
			if (dst->dtype == LM_FLOAT32)
				((float *)lmi_data(dst))[di] = (float)-v;
			else
				((double *)lmi_data(dst))[di] = -v;
		}
}

/* out: (N, L) = -logp[n, t[n, l], l]. */
lm_status lmi_cpu_nll(const lm_tensor *logp, const lm_tensor *target, lm_tensor *out, int64_t N,
                      int64_t C, int64_t L)
{
	nll_move(logp, out, target, N, C, L, false);
	return LM_OK;
}

/* The adjoint: gx (N, C, L) zeroed by the caller; gx[n, t[n, l], l] = -g[n, l]. */
lm_status lmi_cpu_nll_grad(const lm_tensor *g, const lm_tensor *target, lm_tensor *gx, int64_t N,
                           int64_t C, int64_t L)
{
	nll_move(g, gx, target, N, C, L, true);
	return LM_OK;
}

/* ---------------------------------------------------------------- max pooling */

/*
 * One output cell: the first maximum of its window (rows i0..i1-1, columns j0..j1-1, clipped to
 * the image), or the first NaN, which propagates as in PyTorch. Branch-free: which value wins is a
 * select, not a jump — random activations made the branchy loop mispredict half its comparisons
 * and max pooling took half of a small CNN's step. A window entirely in the padding gives -inf, -1.
 */
#define MAXPOOL(T)                                                                                  \
	static inline void maxcell_##T(const T *xp, int64_t W, int64_t i0, int64_t i1, int64_t j0,     \
	                               int64_t j1, T *yo, int64_t *io)                                 \
	{                                                                                           \
		if (i0 >= i1 || j0 >= j1) {                                                             \
			*yo = -INFINITY;                                                                    \
			*io = -1;                                                                           \
			return;                                                                             \
		}                                                                                       \
		T best = xp[i0 * W + j0];                                                               \
		int64_t bi = i0 * W + j0;                                                               \
		for (int64_t i = i0; i < i1; i++)                                                       \
			for (int64_t j = j0; j < j1; j++) {                                                 \
				T v = xp[i * W + j];                                                            \
				int take = (v > best) | ((v != v) & (best == best));                            \
				best = take ? v : best;                                                         \
				bi = take ? i * W + j : bi;                                                     \
			}                                                                                   \
		*yo = best;                                                                             \
		*io = bi;                                                                               \
	}                                                                                           \
	/* The common 2x2, stride 2, unpadded window (LeNet, VGG): the first maximum of the four cells \
	 * in row-major order as selects the loop over ow vectorises (this file is built with         \
	 * -fno-trapping-math, CMakeLists.txt: a float compare could trap otherwise, and gcc keeps    \
	 * the branches); a row holding a NaN is redone cell by cell with maxcell_'s NaN rule.        */ \
	static void maxpool2x2_##T(const T *restrict xp, int64_t W, int64_t OH, int64_t OW,          \
	                           T *restrict y, int64_t *restrict ix)                              \
	{                                                                                           \
		for (int64_t oh = 0; oh < OH; oh++) {                                                   \
			const T *r0 = xp + 2 * oh * W, *r1 = r0 + W;                                        \
			int64_t base = 2 * oh * W;                                                          \
			int nan = 0;                                                                        \
			for (int64_t ow = 0; ow < OW; ow++) {                                               \
				T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], d = r1[2 * ow + 1];       \
				int tb = b > a, td = d > c;                                                     \
				T mab = tb ? b : a, mcd = td ? d : c;                                           \
				int64_t iab = tb ? 1 : 0, icd = td ? W + 1 : W;                                 \
				int tc = mcd > mab;                                                             \
				y[oh * OW + ow] = tc ? mcd : mab;                                               \
				ix[oh * OW + ow] = base + 2 * ow + (tc ? icd : iab);                            \
				nan |= (a != a) | (b != b) | (c != c) | (d != d);                               \
			}                                                                                   \
			if (nan)                                                                            \
				for (int64_t ow = 0; ow < OW; ow++)                                             \
					maxcell_##T(xp, W, 2 * oh, 2 * oh + 2, 2 * ow, 2 * ow + 2, y + oh * OW + ow,  \
					            ix + oh * OW + ow);                                                 \
		}                                                                                       \
	}                                                                                           \
	static void maxpool_##T(const T *x, T *y, int64_t *ix, int64_t planes, int64_t H, int64_t W,    \
	                        int64_t OH, int64_t OW, const int64_t *k, const int64_t *st,           \
	                        const int64_t *pd)                                                     \
	{                                                                                           \
		_Pragma("omp parallel for schedule(static) if (planes * OH * OW > LMI_PARALLEL_GRAIN / 8)") \
		for (int64_t pl = 0; pl < planes; pl++) {                                               \
			const T *xp = x + pl * H * W;                                                       \
			if (k[0] == 2 && k[1] == 2 && st[0] == 2 && st[1] == 2 && pd[0] == 0 && pd[1] == 0 &&  \
			    2 * OH <= H && 2 * OW <= W) {                                                   \
				maxpool2x2_##T(xp, W, OH, OW, y + pl * OH * OW, ix + pl * OH * OW);             \
				continue;                                                                       \
			}                                                                                   \
			for (int64_t oh = 0; oh < OH; oh++) {                                               \
				int64_t h0 = oh * st[0] - pd[0];                                                \
				int64_t i0 = h0 < 0 ? 0 : h0, i1 = h0 + k[0] > H ? H : h0 + k[0];               \
				T *yr = y + (pl * OH + oh) * OW;                                                \
				int64_t *ir = ix + (pl * OH + oh) * OW;                                         \
				for (int64_t ow = 0; ow < OW; ow++) {                                           \
					int64_t w0 = ow * st[1] - pd[1];                                            \
					int64_t j0 = w0 < 0 ? 0 : w0, j1 = w0 + k[1] > W ? W : w0 + k[1];           \
					maxcell_##T(xp, W, i0, i1, j0, j1, yr + ow, ir + ow);                       \
				}                                                                               \
			}                                                                                   \
		}                                                                                       \
	}
MAXPOOL(float)
MAXPOOL(double)

lm_status lmi_cpu_max_pool2d(const lm_tensor *x, lm_tensor *y, lm_tensor *idx, int64_t planes,
                             int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t *k,
                             const int64_t *stride, const int64_t *pad)
{
	if (x->dtype == LM_FLOAT32)
		maxpool_float((const float *)lmi_data(x), (float *)lmi_data(y), (int64_t *)lmi_data(idx),
		              planes, H, W, OH, OW, k, stride, pad);
	else
		maxpool_double((const double *)lmi_data(x), (double *)lmi_data(y), (int64_t *)lmi_data(idx),
		               planes, H, W, OH, OW, k, stride, pad);
	return LM_OK;
}

/* ---------------------------------------------------------------- the LSTM's gates */

/*
 * Forward, per row b and unit j (a, act: (B, 4H) in PyTorch's gate order i, f, g, o):
 *   i = s(a_i), f = s(a_f), g = tanh(a_g), o = s(a_o); c' = f c + i g; h = o tanh(c')
 * Backward from dh, dc' (ghc = [dh | dc']): t = tanh(c'), dc = dc' + dh o (1 - t^2);
 *   da_o = dh t o (1 - o), da_i = dc g i (1 - i), da_f = dc c f (1 - f), da_g = dc i (1 - g^2),
 *   dc_prev = dc f.
 */
#define LSTM_CELL(T, SIG, TANH)                                                                    \
	static void lstm_forward_##T(const T *a, const T *c, T *hc, T *act, int64_t B, int64_t H)       \
	{                                                                                           \
		_Pragma("omp parallel for schedule(static) if (B * H > LMI_PARALLEL_GRAIN)")            \
		for (int64_t b = 0; b < B; b++) {                                                       \
			const T *ab = a + b * 4 * H, *cb = c + b * H;                                       \
			T *act_b = act + b * 4 * H, *hb = hc + b * 2 * H;                                   \
			for (int64_t j = 0; j < H; j++) {                                                   \
				T i = SIG(ab[j]), f = SIG(ab[H + j]), g = TANH(ab[2 * H + j]), o = SIG(ab[3 * H + j]); \
				T cn = f * cb[j] + i * g;                                                       \
				act_b[j] = i, act_b[H + j] = f, act_b[2 * H + j] = g, act_b[3 * H + j] = o;     \
				hb[j] = o * TANH(cn);                                                           \
				hb[H + j] = cn;                                                                 \
			}                                                                                   \
		}                                                                                       \
	}                                                                                           \
	static void lstm_backward_##T(const T *act, const T *c, const T *hc, const T *ghc, T *ga, T *gc, \
	                              int64_t B, int64_t H)                                         \
	{                                                                                           \
		_Pragma("omp parallel for schedule(static) if (B * H > LMI_PARALLEL_GRAIN)")            \
		for (int64_t b = 0; b < B; b++) {                                                       \
			const T *ac = act + b * 4 * H, *cb = c + b * H, *hb = hc + b * 2 * H;               \
			const T *gh = ghc + b * 2 * H;                                                      \
			T *gab = ga + b * 4 * H, *gcb = gc + b * H;                                         \
			for (int64_t j = 0; j < H; j++) {                                                   \
				T i = ac[j], f = ac[H + j], g = ac[2 * H + j], o = ac[3 * H + j];               \
				T t = TANH(hb[H + j]), dh = gh[j];                                              \
				T dc = gh[H + j] + dh * o * (1 - t * t);                                        \
				gab[j] = dc * g * i * (1 - i);                                                  \
				gab[H + j] = dc * cb[j] * f * (1 - f);                                          \
				gab[2 * H + j] = dc * i * (1 - g * g);                                          \
				gab[3 * H + j] = dh * t * o * (1 - o);                                          \
				gcb[j] = dc * f;                                                                \
			}                                                                                   \
		}                                                                                       \
	}
LSTM_CELL(float, lmi_sigmoidf, tanhf)
LSTM_CELL(double, lmi_sigmoid, tanh)

lm_status lmi_cpu_lstm_cell(const lm_tensor *a, const lm_tensor *c, lm_tensor *hc, lm_tensor *act,
                            const lm_tensor *ghc, lm_tensor *ga, lm_tensor *gc)
{
	int64_t B = c->shape[0], H = c->shape[1];
	bool f32 = c->dtype == LM_FLOAT32;
#define P(T, t) ((T *)lmi_data(t))
	if (!ghc) {
		if (f32)
			lstm_forward_float(P(const float, a), P(const float, c), P(float, hc), P(float, act), B, H);
		else
			lstm_forward_double(P(const double, a), P(const double, c), P(double, hc), P(double, act), B, H);
	} else if (f32) {
		lstm_backward_float(P(const float, act), P(const float, c), P(const float, hc), P(const float, ghc),
		                    P(float, ga), P(float, gc), B, H);
	} else {
		lstm_backward_double(P(const double, act), P(const double, c), P(const double, hc), P(const double, ghc),
		                     P(double, ga), P(double, gc), B, H);
	}
#undef P
	return LM_OK;
}

/* ---------------------------------------------------------------- attention, online softmax */

/*
 * FlashAttention's scheme in blocks of BR query rows and BC keys, each block product by the BLAS
 * (single-threaded inside the parallel region). Forward, per (batch-head, row block): for each key
 * block (only those at or left of the diagonal when causal), S = scale Q_r K_c^T; each row's running
 * maximum m and sum l of exp(S - m) rescale the accumulated output when m grows; acc += P V_c.
 * Then O = acc / l, lse = m + log l. Nothing of size L x S exists. Backward, per batch-head,
 * recomputing P = exp(S - lse) block by block with D = rowsum(dO * O): dV_c += P^T dO_r,
 * dP = dO_r V_c^T, dS = scale P (dP - D), dQ_r += dS K_c, dK_c += dS^T Q_r.
 */
enum { ATT_BR = 64, ATT_BC = 64 };

#define ATTENTION(T, EXP, LOG, GEMM)                                                               \
	/* S (nr x nc, ld ATT_BC) for rows i0.. and keys j0..: the causal mask as -inf */              \
	static void att_mask_##T(T *S, int64_t nr, int64_t nc, int64_t i0, int64_t j0, bool causal)    \
	{                                                                                           \
		if (!causal) return;                                                                    \
		for (int64_t r = 0; r < nr; r++)                                                        \
			for (int64_t c = 0; c < nc; c++)                                                    \
				if (j0 + c > i0 + r) S[r * ATT_BC + c] = -(T)INFINITY;                          \
	}                                                                                           \
	static lm_status attention_forward_##T(const T *q, const T *k, const T *v, bool causal, T scale, T *o, \
	                                       T *lse, int64_t BH, int64_t L, int64_t S, int64_t E, int64_t Ev) \
	{                                                                                           \
		const lmi_blas_api *blas = lmi_blas();                                                  \
		int64_t nrb = (L + ATT_BR - 1) / ATT_BR;                                                \
		size_t bytes = ((size_t)ATT_BR * ATT_BC + (size_t)ATT_BR * (size_t)Ev + 2 * ATT_BR) * sizeof(T); \
		lmi_par_err perr;                                                                       \
		lmi_par_init(&perr);                                                                    \
		_Pragma("omp parallel if (BH * L * S * E > LMI_PARALLEL_GRAIN)")                        \
		{                                                                                       \
			T *Sb = lm_alloc(bytes), *acc = Sb ? Sb + ATT_BR * ATT_BC : NULL;                   \
			T *m = acc ? acc + ATT_BR * Ev : NULL, *l = m ? m + ATT_BR : NULL;                  \
			if (!Sb) lmi_par_fail(&perr, LM_ERR_NOMEM, "attention: no memory for a block");      \
			_Pragma("omp for schedule(dynamic, 1)")                                             \
			for (int64_t t = 0; t < BH * nrb; t++) {                                            \
				if (!Sb) continue;                                                              \
				if (lmi_check_interrupt()) {                                                    \
					lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "interrupted");                     \
					continue;                                                                   \
				}                                                                               \
				int64_t bh = t / nrb, i0 = (t % nrb) * ATT_BR, nr = L - i0 < ATT_BR ? L - i0 : ATT_BR; \
				const T *qb = q + (bh * L + i0) * E, *kb = k + bh * S * E, *vb = v + bh * S * Ev; \
				for (int64_t r = 0; r < nr; r++) m[r] = -(T)INFINITY, l[r] = 0;                 \
				memset(acc, 0, (size_t)(nr * Ev) * sizeof(T));                                  \
				int64_t jend = causal ? (i0 + nr < S ? i0 + nr : S) : S;                        \
				for (int64_t j0 = 0; j0 < jend; j0 += ATT_BC) {                                 \
					int64_t nc = jend - j0 < ATT_BC ? jend - j0 : ATT_BC;                       \
					blas->GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)nr, (blasint)nc, (blasint)E, \
					           scale, qb, (blasint)E, kb + j0 * E, (blasint)E, 0, Sb, ATT_BC);   \
					att_mask_##T(Sb, nr, nc, i0, j0, causal);                                   \
					for (int64_t r = 0; r < nr; r++) {                                          \
						T *sr = Sb + r * ATT_BC, mx = m[r];                                     \
						for (int64_t c = 0; c < nc; c++) mx = sr[c] > mx ? sr[c] : mx;          \
						if (mx == -(T)INFINITY) { /* a row with no key in this block */          \
							for (int64_t c = 0; c < nc; c++) sr[c] = 0;                         \
							continue;                                                           \
						}                                                                       \
						if (mx > m[r]) {                                                        \
							T corr = EXP(m[r] - mx);                                            \
							l[r] *= corr;                                                       \
							for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= corr;           \
							m[r] = mx;                                                          \
						}                                                                       \
						T sum = 0;                                                              \
						for (int64_t c = 0; c < nc; c++) sum += (sr[c] = EXP(sr[c] - mx));      \
						l[r] += sum;                                                            \
					}                                                                           \
					blas->GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)nr, (blasint)Ev, (blasint)nc, \
					           1, Sb, ATT_BC, vb + j0 * Ev, (blasint)Ev, 1, acc, (blasint)Ev);  \
				}                                                                               \
				for (int64_t r = 0; r < nr; r++) {                                              \
					T *orow = o + (bh * L + i0 + r) * Ev;                                       \
					for (int64_t e = 0; e < Ev; e++) orow[e] = acc[r * Ev + e] / l[r];          \
					lse[bh * L + i0 + r] = m[r] + LOG(l[r]);                                    \
				}                                                                               \
			}                                                                                   \
			if (Sb) lm_free(Sb, bytes);                                                         \
		}                                                                                       \
		return lmi_par_finish(&perr);                                                           \
	}                                                                                           \
	static lm_status attention_backward_##T(const T *q, const T *k, const T *v, bool causal, T scale, \
	                                        const T *stats, const T *dout, T *dq, T *dk, T *dv, int64_t BH, \
	                                        int64_t L, int64_t S, int64_t E, int64_t Ev)        \
	{                                                                                           \
		const lmi_blas_api *blas = lmi_blas();                                                  \
		size_t bytes = 2 * (size_t)ATT_BR * ATT_BC * sizeof(T);                                 \
		lmi_par_err perr;                                                                       \
		lmi_par_init(&perr);                                                                    \
		_Pragma("omp parallel if (BH * L * S * E > LMI_PARALLEL_GRAIN)")                        \
		{                                                                                       \
			T *P = lm_alloc(bytes), *dP = P ? P + ATT_BR * ATT_BC : NULL;                       \
			if (!P) lmi_par_fail(&perr, LM_ERR_NOMEM, "attention: no memory for a block");       \
			_Pragma("omp for schedule(dynamic, 1)")                                             \
			for (int64_t bh = 0; bh < BH; bh++) {                                               \
				if (!P) continue;                                                               \
				if (lmi_check_interrupt()) {                                                    \
					lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "interrupted");                     \
					continue;                                                                   \
				}                                                                               \
				const T *qb = q + bh * L * E, *kb = k + bh * S * E, *vb = v + bh * S * Ev;      \
				const T *lse = stats + bh * 2 * L, *D = lse + L, *db = dout + bh * L * Ev;      \
				T *dqb = dq + bh * L * E, *dkb = dk + bh * S * E, *dvb = dv + bh * S * Ev;      \
				memset(dqb, 0, (size_t)(L * E) * sizeof(T));                                    \
				memset(dkb, 0, (size_t)(S * E) * sizeof(T));                                    \
				memset(dvb, 0, (size_t)(S * Ev) * sizeof(T));                                   \
				for (int64_t i0 = 0; i0 < L; i0 += ATT_BR) {                                    \
					int64_t nr = L - i0 < ATT_BR ? L - i0 : ATT_BR;                             \
					int64_t jend = causal ? (i0 + nr < S ? i0 + nr : S) : S;                    \
					for (int64_t j0 = 0; j0 < jend; j0 += ATT_BC) {                             \
						int64_t nc = jend - j0 < ATT_BC ? jend - j0 : ATT_BC;                   \
						blas->GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)nr, (blasint)nc, (blasint)E, \
						           scale, qb + i0 * E, (blasint)E, kb + j0 * E, (blasint)E, 0, P, ATT_BC); \
						att_mask_##T(P, nr, nc, i0, j0, causal);                                \
						for (int64_t r = 0; r < nr; r++)                                        \
							for (int64_t c = 0; c < nc; c++) P[r * ATT_BC + c] = EXP(P[r * ATT_BC + c] - lse[i0 + r]); \
						/* dV_c += P^T dO_r; dP = dO_r V_c^T */                                  \
						blas->GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)nc, (blasint)Ev, (blasint)nr, \
						           1, P, ATT_BC, db + i0 * Ev, (blasint)Ev, 1, dvb + j0 * Ev, (blasint)Ev); \
						blas->GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)nr, (blasint)nc, (blasint)Ev, \
						           1, db + i0 * Ev, (blasint)Ev, vb + j0 * Ev, (blasint)Ev, 0, dP, ATT_BC); \
						for (int64_t r = 0; r < nr; r++)                                        \
							for (int64_t c = 0; c < nc; c++)                                    \
								dP[r * ATT_BC + c] = scale * P[r * ATT_BC + c] * (dP[r * ATT_BC + c] - D[i0 + r]); \
						/* dQ_r += dS K_c; dK_c += dS^T Q_r */                                   \
						blas->GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)nr, (blasint)E, (blasint)nc, \
						           1, dP, ATT_BC, kb + j0 * E, (blasint)E, 1, dqb + i0 * E, (blasint)E); \
						blas->GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (blasint)nc, (blasint)E, (blasint)nr, \
						           1, dP, ATT_BC, qb + i0 * E, (blasint)E, 1, dkb + j0 * E, (blasint)E); \
					}                                                                           \
				}                                                                               \
			}                                                                                   \
			if (P) lm_free(P, bytes);                                                           \
		}                                                                                       \
		return lmi_par_finish(&perr);                                                           \
	}
ATTENTION(float, expf, logf, sgemm)
ATTENTION(double, exp, log, dgemm)

lm_status lmi_cpu_attention(const lm_tensor *q, const lm_tensor *k, const lm_tensor *v, bool causal, double scale,
                            lm_tensor *o, lm_tensor *lse, const lm_tensor *stats, const lm_tensor *dout,
                            lm_tensor *dq, lm_tensor *dk, lm_tensor *dv)
{
	int64_t BH = q->shape[0], L = q->shape[1], E = q->shape[2], S = k->shape[1], Ev = v->shape[2];
#define P(T, t) ((T *)lmi_data(t))
	if (!dout) {
		if (q->dtype == LM_FLOAT32)
			return attention_forward_float(P(const float, q), P(const float, k), P(const float, v), causal,
			                               (float)scale, P(float, o), P(float, lse), BH, L, S, E, Ev);
		return attention_forward_double(P(const double, q), P(const double, k), P(const double, v), causal, scale,
		                                P(double, o), P(double, lse), BH, L, S, E, Ev);
	}
	lm_status s;
	if (q->dtype == LM_FLOAT32)
		s = attention_backward_float(P(const float, q), P(const float, k), P(const float, v), causal, (float)scale,
		                             P(const float, stats), P(const float, dout), P(float, dq), P(float, dk),
		                             P(float, dv), BH, L, S, E, Ev);
	else
		s = attention_backward_double(P(const double, q), P(const double, k), P(const double, v), causal, scale,
		                              P(const double, stats), P(const double, dout), P(double, dq), P(double, dk),
		                              P(double, dv), BH, L, S, E, Ev);
#undef P
	return s;
}

/* ---------------------------------------------------------------- the GRU's gates */

/*
 * Forward, per row b and unit j (xg, hg: (B, 3H) in PyTorch's order r, z, n; hg holds b_hh):
 *   r = s(x_r + h_r), z = s(x_z + h_z), n = tanh(x_n + r h_n), h' = (1 - z) n + z h
 * Backward from dh': dz = dh' (h - n) z (1 - z), dn = dh' (1 - z) (1 - n^2), dr = dn h_n r (1 - r);
 *   d x_(r, z, n) = (dr, dz, dn), d h_(r, z, n) = (dr, dz, dn r), dh = dh' z.
 */
#define GRU_CELL(T, SIG, TANH)                                                                     \
	static void gru_forward_##T(const T *xg, const T *hg, const T *h, T *hn, T *act, int64_t B, int64_t H) \
	{                                                                                           \
		_Pragma("omp parallel for schedule(static) if (B * H > LMI_PARALLEL_GRAIN)")            \
		for (int64_t b = 0; b < B; b++) {                                                       \
			const T *x = xg + b * 3 * H, *g = hg + b * 3 * H, *hb = h + b * H;                  \
			T *a = act + b * 3 * H, *o = hn + b * H;                                            \
			for (int64_t j = 0; j < H; j++) {                                                   \
				T r = SIG(x[j] + g[j]), z = SIG(x[H + j] + g[H + j]);                           \
				T n = TANH(x[2 * H + j] + r * g[2 * H + j]);                                    \
				a[j] = r, a[H + j] = z, a[2 * H + j] = n;                                       \
				o[j] = (1 - z) * n + z * hb[j];                                                 \
			}                                                                                   \
		}                                                                                       \
	}                                                                                           \
	static void gru_backward_##T(const T *act, const T *hg, const T *h, const T *ghn, T *gx, T *ghg, T *gh, \
	                             int64_t B, int64_t H)                                          \
	{                                                                                           \
		_Pragma("omp parallel for schedule(static) if (B * H > LMI_PARALLEL_GRAIN)")            \
		for (int64_t b = 0; b < B; b++) {                                                       \
			const T *a = act + b * 3 * H, *g = hg + b * 3 * H, *hb = h + b * H, *d = ghn + b * H; \
			T *dx = gx + b * 3 * H, *dg = ghg + b * 3 * H, *dh = gh + b * H;                    \
			for (int64_t j = 0; j < H; j++) {                                                   \
				T r = a[j], z = a[H + j], n = a[2 * H + j], dy = d[j];                          \
				T dz = dy * (hb[j] - n) * z * (1 - z), dn = dy * (1 - z) * (1 - n * n);         \
				T dr = dn * g[2 * H + j] * r * (1 - r);                                         \
				dx[j] = dr, dx[H + j] = dz, dx[2 * H + j] = dn;                                 \
				dg[j] = dr, dg[H + j] = dz, dg[2 * H + j] = dn * r;                             \
				dh[j] = dy * z;                                                                 \
			}                                                                                   \
		}                                                                                       \
	}
GRU_CELL(float, lmi_sigmoidf, tanhf)
GRU_CELL(double, lmi_sigmoid, tanh)

lm_status lmi_cpu_gru_cell(const lm_tensor *xg, const lm_tensor *hg, const lm_tensor *h, lm_tensor *hn,
                           lm_tensor *act, const lm_tensor *ghn, lm_tensor *gx, lm_tensor *ghg, lm_tensor *gh)
{
	int64_t B = h->shape[0], H = h->shape[1];
	bool f32 = h->dtype == LM_FLOAT32;
#define P(T, t) ((T *)lmi_data(t))
	if (!ghn) {
		if (f32)
			gru_forward_float(P(const float, xg), P(const float, hg), P(const float, h), P(float, hn), P(float, act), B, H);
		else
			gru_forward_double(P(const double, xg), P(const double, hg), P(const double, h), P(double, hn),
			                   P(double, act), B, H);
	} else if (f32) {
		gru_backward_float(P(const float, act), P(const float, hg), P(const float, h), P(const float, ghn),
		                   P(float, gx), P(float, ghg), P(float, gh), B, H);
	} else {
		gru_backward_double(P(const double, act), P(const double, hg), P(const double, h), P(const double, ghn),
		                    P(double, gx), P(double, ghg), P(double, gh), B, H);
	}
#undef P
	return LM_OK;
}
