/*
 * winograd.c — 3x3, stride-1 convolution by Winograd's minimal filtering F(2x2, 3x3), forward and
 * backward, on the CPU (float32 through the SIMD table of the path in use, float64 by plain loops).
 *
 * Each 2x2 block of outputs ("tile") is computed from the 4x4 input patch d under it as
 *     Y = A^T [ U . V ] A,   U = G g G^T (per filter g),   V = B^T d B (per patch)
 * (. elementwise over the 16 positions xi of the 4x4 transformed domain): 16 multiplications per
 * tile and channel pair instead of 36, so the 16 products over channels, M[xi] = V[xi] U[xi]
 * (tiles x C times C x K), carry 2.25x fewer flops than a direct or im2col convolution. The
 * matrices (Lavin & Gray 2016):
 *     B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]   G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
 *     A^T = [1 1 1 0; 0 1 -1 -1]
 * Backward is the exact adjoint of that computation, so the gradients are those of the forward
 * Lumen computed (gradcheck sees one function): with dM = A g A^T (g the output gradient's 2x2
 * tile), dV[xi] = dM[xi] U[xi]^T and dx = sum over tiles of B dV B^T (overlapping patches add),
 * dU[xi] = sum over tiles of V[xi]^T dM[xi] and dw = G^T dU G. Error: the transforms add and
 * subtract in float32 (V has entries up to 4x an input, G halves), so the result differs from a
 * direct convolution by a few float32 ulp of the sums' magnitude; tests/nn/test_conv_winograd.c
 * measures and bounds it (docs/architecture.md gives the figures).
 *
 * Layout: per image, the input is transposed once into a zero-padded NHWC buffer (rows of pixels
 * of cp channels, cp = C rounded up to 16) so every transform is vectorised across channels; tiles
 * are taken in blocks of NB: transform the block's patches into V (16 planes of NB x cp), the 16
 * products into M (16 planes of NB x kp) with the register-tiled kernel of gemm_loops.h, and M
 * back into the NHWC output, transposed to NCHW at the end of the image. A block's V, M and the
 * weights' U[xi] (cp x kp) stay in the L2 cache. Images are spread over the threads; the weight
 * gradient keeps one dU per thread, summed in thread order (deterministic). Read next:
 * winograd_loops.h, gemm_loops.h, ../../ops/conv.c (when it is used).
 */
#include <string.h>

#include "backend/cpu/nn.h"
#include "backend/cpu/simd.h"

#define NB 96 /* tiles per block: a multiple of the GEMM tile's 12 (AVX-512) and 6 (AVX2) rows */

static int team_size(void)
{
#ifdef _OPENMP
	return omp_get_num_threads();
#else
	return 1;
#endif
}

/* the float64 loops: the template of winograd_loops.h with scalar doubles */
#define WT double
#define WV double
#define WVW 1
#define WFN(name) name##_f64
#define WLOAD(p) (*(p))
#define WSTORE(p, v) (*(p) = (v))
#define WZERO() 0.0
#include "backend/cpu/winograd_loops.h"

LMI_PLAIN_GEMM(gemm_f64, double)

typedef struct wino_loops_f64 {
	void (*in_tf)(const double *, int64_t, int64_t, int64_t, int64_t, int64_t, double *, int64_t);
	void (*out_tf)(const double *, int64_t, int64_t, int64_t, int64_t, int64_t, const double *,
	               double *, int64_t, int64_t);
	void (*out_tf_adj)(const double *, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
	                   double *, int64_t);
	void (*in_tf_adj)(const double *, int64_t, int64_t, int64_t, int64_t, int64_t, double *,
	                  int64_t);
	void (*gemm)(int64_t, int64_t, int64_t, const double *, int64_t, int64_t, const double *,
	             int64_t, double *, int64_t, bool);
} wino_loops_f64;

static const wino_loops_f64 loops_f64 = {in_tf_f64, out_tf_f64, out_tf_adj_f64, in_tf_adj_f64,
                                         gemm_f64};

/* ---------------------------------------------------------------- geometry */

typedef struct wgeom {
	int64_t N, C, H, W, K, ph, pw, OH, OW;
	int64_t th, tw, tiles; /* tiles per image: th x tw */
	int64_t hp, wp;        /* the padded image: rows and pixels per row */
	int64_t cp, kp;        /* channels rounded up to 16 */
	int64_t nb;            /* tiles per block */
} wgeom;

static int64_t up16(int64_t v) { return (v + 15) / 16 * 16; }

static void geom_of(const lm_tensor *x, const lm_tensor *w, int64_t ph, int64_t pw, wgeom *g)
{
	g->N = x->shape[0], g->C = x->shape[1], g->H = x->shape[2], g->W = x->shape[3];
	g->K = w->shape[0], g->ph = ph, g->pw = pw;
	g->OH = g->H + 2 * ph - 2, g->OW = g->W + 2 * pw - 2;
	g->th = (g->OH + 1) / 2, g->tw = (g->OW + 1) / 2, g->tiles = g->th * g->tw;
	g->hp = 2 * g->th + 2, g->wp = 2 * g->tw + 2;
	g->cp = up16(g->C), g->kp = up16(g->K);
	g->nb = g->tiles < NB ? g->tiles : NB;
}

/* ---------------------------------------------------------------- per-type helpers */

/*
 * pack_in: x (C, H, W) -> xp (hp, wp, cp) at offset (ph, pw), zeros around and in the padded
 * channels. pack_out: yp (OH, OW, kp) -> y (K, OH, OW). pack_grad: g (K, OH, OW) -> gp (OH, OW,
 * kp). unpack_in: dxp (hp, wp, cp) -> dx (C, H, W). Each walks 16 pixels of a row at a time so
 * the scattered side stays in L1.
 * wtf: U[xi][c][k] (cp x kp, zero padded) = G w[k][c] G^T. wtf_adj: dw[k][c] = G^T dU[.][c][k] G.
 */
#define WINO_HELPERS(T)                                                                             \
	static void pack_in_##T(const T *x, const wgeom *g, T *xp)                                     \
	{                                                                                           \
		size_t row = (size_t)(g->wp * g->cp), es = sizeof(T); /* zeros: the border only */      \
		memset(xp, 0, (size_t)g->ph * row * es);                                                \
		memset(xp + (g->H + g->ph) * (int64_t)row, 0, (size_t)(g->hp - g->H - g->ph) * row * es); \
		for (int64_t y = 0; y < g->H; y++) {                                                    \
			T *r = xp + (y + g->ph) * (int64_t)row;                                             \
			memset(r, 0, (size_t)(g->pw * g->cp) * es);                                         \
			memset(r + (g->W + g->pw) * g->cp, 0, (size_t)((g->wp - g->W - g->pw) * g->cp) * es); \
			if (g->cp > g->C)                                                                   \
				for (int64_t px = 0; px < g->W; px++)                                           \
					memset(r + (px + g->pw) * g->cp + g->C, 0, (size_t)(g->cp - g->C) * es);    \
		}                                                                                       \
		for (int64_t y = 0; y < g->H; y++)                                                      \
			for (int64_t x0 = 0; x0 < g->W; x0 += 16) {                                         \
				int64_t n = g->W - x0 < 16 ? g->W - x0 : 16;                                    \
				T *d = xp + ((y + g->ph) * g->wp + x0 + g->pw) * g->cp;                         \
				for (int64_t c = 0; c < g->C; c++) {                                            \
					const T *s = x + (c * g->H + y) * g->W + x0;                                \
					for (int64_t j = 0; j < n; j++) d[j * g->cp + c] = s[j];                    \
				}                                                                               \
			}                                                                                   \
	}                                                                                           \
	static void unpack_in_##T(const T *dxp, const wgeom *g, T *dx)                              \
	{                                                                                           \
		for (int64_t y = 0; y < g->H; y++)                                                      \
			for (int64_t x0 = 0; x0 < g->W; x0 += 16) {                                         \
				int64_t n = g->W - x0 < 16 ? g->W - x0 : 16;                                    \
				const T *s = dxp + ((y + g->ph) * g->wp + x0 + g->pw) * g->cp;                  \
				for (int64_t c = 0; c < g->C; c++) {                                            \
					T *d = dx + (c * g->H + y) * g->W + x0;                                     \
					for (int64_t j = 0; j < n; j++) d[j] = s[j * g->cp + c];                    \
				}                                                                               \
			}                                                                                   \
	}                                                                                           \
	static void pack_out_##T(const T *yp, const wgeom *g, T *y)                                 \
	{                                                                                           \
		for (int64_t oy = 0; oy < g->OH; oy++)                                                  \
			for (int64_t x0 = 0; x0 < g->OW; x0 += 16) {                                        \
				int64_t n = g->OW - x0 < 16 ? g->OW - x0 : 16;                                  \
				const T *s = yp + (oy * g->OW + x0) * g->kp;                                    \
				for (int64_t k = 0; k < g->K; k++) {                                            \
					T *d = y + (k * g->OH + oy) * g->OW + x0;                                   \
					for (int64_t j = 0; j < n; j++) d[j] = s[j * g->kp + k];                    \
				}                                                                               \
			}                                                                                   \
	}                                                                                           \
	static void pack_grad_##T(const T *gy, const wgeom *g, T *gp)                               \
	{                                                                                           \
		if (g->kp != g->K) memset(gp, 0, (size_t)(g->OH * g->OW * g->kp) * sizeof(T));          \
		for (int64_t oy = 0; oy < g->OH; oy++)                                                  \
			for (int64_t x0 = 0; x0 < g->OW; x0 += 16) {                                        \
				int64_t n = g->OW - x0 < 16 ? g->OW - x0 : 16;                                  \
				T *d = gp + (oy * g->OW + x0) * g->kp;                                          \
				for (int64_t k = 0; k < g->K; k++) {                                            \
					const T *s = gy + (k * g->OH + oy) * g->OW + x0;                            \
					for (int64_t j = 0; j < n; j++) d[j * g->kp + k] = s[j];                    \
				}                                                                               \
			}                                                                                   \
	}                                                                                           \
	static void wtf_##T(const T *w, const wgeom *g, T *u)                                       \
	{                                                                                           \
		memset(u, 0, (size_t)(16 * g->cp * g->kp) * sizeof(T));                                 \
		for (int64_t k = 0; k < g->K; k++)                                                      \
			for (int64_t c = 0; c < g->C; c++) {                                                \
				const T *f = w + (k * g->C + c) * 9;                                            \
				T t[4][3];                                                                      \
				for (int j = 0; j < 3; j++) {                                                   \
					t[0][j] = f[j];                                                             \
					t[1][j] = (T)0.5 * (f[j] + f[3 + j] + f[6 + j]);                            \
					t[2][j] = (T)0.5 * (f[j] - f[3 + j] + f[6 + j]);                            \
					t[3][j] = f[6 + j];                                                         \
				}                                                                               \
				for (int i = 0; i < 4; i++) {                                                   \
					T r[4] = {t[i][0], (T)0.5 * (t[i][0] + t[i][1] + t[i][2]),                  \
					          (T)0.5 * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};                 \
					for (int j = 0; j < 4; j++) u[((4 * i + j) * g->cp + c) * g->kp + k] = r[j]; \
				}                                                                               \
			}                                                                                   \
	}                                                                                           \
	static void wtf_adj_##T(const T *du, const wgeom *g, T *dw)                                 \
	{                                                                                           \
		for (int64_t k = 0; k < g->K; k++)                                                      \
			for (int64_t c = 0; c < g->C; c++) {                                                \
				T s[4][4], t[3][4];                                                             \
				for (int x = 0; x < 16; x++) s[x / 4][x % 4] = du[(x * g->cp + c) * g->kp + k]; \
				for (int j = 0; j < 4; j++) {                                                   \
					t[0][j] = s[0][j] + (T)0.5 * (s[1][j] + s[2][j]);                           \
					t[1][j] = (T)0.5 * (s[1][j] - s[2][j]);                                     \
					t[2][j] = (T)0.5 * (s[1][j] + s[2][j]) + s[3][j];                           \
				}                                                                               \
				T *f = dw + (k * g->C + c) * 9;                                                 \
				for (int i = 0; i < 3; i++) {                                                   \
					f[3 * i + 0] = t[i][0] + (T)0.5 * (t[i][1] + t[i][2]);                      \
					f[3 * i + 1] = (T)0.5 * (t[i][1] - t[i][2]);                                \
					f[3 * i + 2] = (T)0.5 * (t[i][1] + t[i][2]) + t[i][3];                      \
				}                                                                               \
			}                                                                                   \
	}
WINO_HELPERS(float)
WINO_HELPERS(double)

/* ---------------------------------------------------------------- drivers */

/* Per-thread scratch of the drivers: one allocation, cut in parts; NULL parts are not needed. */
typedef struct wscratch {
	void *base;
	size_t bytes;
	void *xp, *v, *m, *yp, *dxp, *du;
} wscratch;

static bool scratch_get(wscratch *s, const wgeom *g, size_t es, bool fwd, bool gx, bool gw)
{
	size_t n_xp = (size_t)(g->hp * g->wp * g->cp), n_v = (size_t)(16 * g->nb * g->cp);
	size_t n_m = (size_t)(16 * g->nb * g->kp), n_yp = (size_t)(g->OH * g->OW * g->kp);
	size_t n_du = (size_t)(16 * g->cp * g->kp);
	size_t sizes[6] = {fwd || gw ? n_xp : 0, fwd || gx || gw ? n_v : 0, n_m, n_yp, gx ? n_xp : 0,
	                   gw ? n_du : 0};
	size_t total = 0;
	for (int i = 0; i < 6; i++) total += (sizes[i] * es + 63) / 64 * 64;
	memset(s, 0, sizeof *s);
	s->base = lm_alloc(total);
	if (!s->base) return false;
	s->bytes = total;
	char *p = s->base;
	void **parts[6] = {&s->xp, &s->v, &s->m, &s->yp, &s->dxp, &s->du};
	for (int i = 0; i < 6; i++) {
		*parts[i] = sizes[i] ? p : NULL;
		p += (sizes[i] * es + 63) / 64 * 64;
	}
	return true;
}

/*
 * The drivers, once per element type. LOOPS: the loop table (lmi_wino_loops for float,
 * wino_loops_f64 for double). Threads take whole images.
 */
#define WINO_DRIVERS(T, LOOPS_T)                                                                    \
	static lm_status forward_##T(const LOOPS_T *L, const wgeom *g, const T *x, const T *w,        \
	                             const T *b, T *y)                                             \
	{                                                                                           \
		size_t nu = (size_t)(16 * g->cp * g->kp) * sizeof(T), nbias = (size_t)g->kp * sizeof(T);  \
		T *u = lm_alloc(nu), *bias = b ? lm_alloc(nbias) : NULL;                                \
		if (!u || (b && !bias)) {                                                               \
			lm_free(u, nu);                                                                     \
			lm_free(bias, nbias);                                                               \
			return lm_last_status();                                                            \
		}                                                                                       \
		wtf_##T(w, g, u);                                                                       \
		if (bias) {                                                                             \
			memset(bias, 0, nbias);                                                             \
			memcpy(bias, b, (size_t)g->K * sizeof(T));                                          \
		}                                                                                       \
		lmi_par_err perr;                                                                       \
		lmi_par_init(&perr);                                                                    \
		int nt = g->N > 1 && g->N * g->tiles * g->cp * g->kp >= LMI_PARALLEL_GRAIN            \
		             ? lmi_num_threads() : 1;                                                   \
		_Pragma("omp parallel num_threads(nt)")                                                 \
		{                                                                                       \
			wscratch s;                                                                         \
			bool ok = scratch_get(&s, g, sizeof(T), true, false, false);                        \
			if (!ok) lmi_par_fail(&perr, LM_ERR_NOMEM, "conv2d: %s", lm_last_error());          \
			_Pragma("omp for schedule(static)")                                                 \
			for (int64_t n = 0; n < g->N; n++) {                                                \
				if (!ok || atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;     \
				if (lmi_check_interrupt()) {                                                    \
					lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "conv2d: interrupted");             \
					continue;                                                                   \
				}                                                                               \
				T *xp = s.xp, *v = s.v, *m = s.m, *yp = s.yp;                                   \
				pack_in_##T(x + n * g->C * g->H * g->W, g, xp);                                 \
				for (int64_t t0 = 0; t0 < g->tiles; t0 += g->nb) {                              \
					int64_t nt_ = g->tiles - t0 < g->nb ? g->tiles - t0 : g->nb;                \
					L->in_tf(xp, g->wp, g->cp, t0, nt_, g->tw, v, g->nb);                       \
					for (int xi = 0; xi < 16; xi++)                                             \
						L->gemm(nt_, g->kp, g->cp, v + xi * g->nb * g->cp, g->cp, 1,            \
						        u + xi * g->cp * g->kp, g->kp, m + xi * g->nb * g->kp, g->kp,   \
						        false);                                                         \
					L->out_tf(m, g->nb, g->kp, t0, nt_, g->tw, bias, yp, g->OH, g->OW);         \
				}                                                                               \
				pack_out_##T(yp, g, y + n * g->K * g->OH * g->OW);                              \
			}                                                                                   \
			if (ok) lm_free(s.base, s.bytes);                                                   \
		}                                                                                       \
		lm_free(u, nu);                                                                         \
		lm_free(bias, nbias);                                                                   \
		return lmi_par_finish(&perr);                                                           \
	}                                                                                           \
	/* one image's backward into s (dxp, and du accumulated); returns nothing */                \
	static void backward_image_##T(const LOOPS_T *L, const wgeom *g, const T *x, const T *gy,   \
	                               const T *ut, const wscratch *s, T *dx)                      \
	{                                                                                           \
		T *xp = s->xp, *v = s->v, *dm = s->m, *gp = s->yp, *dxp = s->dxp, *du = s->du;          \
		if (du) pack_in_##T(x, g, xp);                                                          \
		pack_grad_##T(gy, g, gp);                                                               \
		if (dxp) memset(dxp, 0, (size_t)(g->hp * g->wp * g->cp) * sizeof(T));                  \
		for (int64_t t0 = 0; t0 < g->tiles; t0 += g->nb) {                                      \
			int64_t nt_ = g->tiles - t0 < g->nb ? g->tiles - t0 : g->nb;                        \
			L->out_tf_adj(gp, g->OH, g->OW, g->kp, t0, nt_, g->tw, dm, g->nb);                  \
			if (dxp) { /* dV[xi] = dM[xi] U[xi]^T, then the patches back */                     \
				for (int xi = 0; xi < 16; xi++)                                                 \
					L->gemm(nt_, g->cp, g->kp, dm + xi * g->nb * g->kp, g->kp, 1,               \
					        ut + xi * g->kp * g->cp, g->cp, v + xi * g->nb * g->cp, g->cp, false); \
				L->in_tf_adj(v, g->nb, g->cp, t0, nt_, g->tw, dxp, g->wp);                      \
			}                                                                                   \
			if (du) { /* dU[xi] += V[xi]^T dM[xi] */                                            \
				L->in_tf(xp, g->wp, g->cp, t0, nt_, g->tw, v, g->nb);                           \
				for (int xi = 0; xi < 16; xi++)                                                 \
					L->gemm(g->cp, g->kp, nt_, v + xi * g->nb * g->cp, 1, g->cp,                \
					        dm + xi * g->nb * g->kp, g->kp, du + xi * g->cp * g->kp, g->kp, true); \
			}                                                                                   \
		}                                                                                       \
		if (dxp) unpack_in_##T(dxp, g, dx);                                                     \
	}                                                                                           \
	static lm_status backward_##T(const LOOPS_T *L, const wgeom *g, const T *x, const T *w,       \
	                              const T *gy, T *gx, T *gw)                                   \
	{                                                                                           \
		enum { MAXT = 256 };                                                                    \
		int nt = g->N > 1 && g->N * g->tiles * g->cp * g->kp >= LMI_PARALLEL_GRAIN              \
		             ? lmi_num_threads() : 1;                                                   \
		if (nt > MAXT) nt = MAXT;                                                               \
		size_t nu = (size_t)(16 * g->cp * g->kp) * sizeof(T);                                   \
		T *u = lm_alloc(nu), *ut = lm_alloc(nu);                                                \
		T *dus[MAXT] = {NULL};                                                                  \
		if (!u || !ut) {                                                                        \
			lm_free(u, nu);                                                                     \
			lm_free(ut, nu);                                                                    \
			return lm_last_status();                                                            \
		}                                                                                       \
		wtf_##T(w, g, u);                                                                       \
		for (int xi = 0; xi < 16; xi++) /* U^T per plane: (kp x cp) */                           \
			for (int64_t c = 0; c < g->cp; c++)                                                 \
				for (int64_t k = 0; k < g->kp; k++)                                             \
					ut[(xi * g->kp + k) * g->cp + c] = u[(xi * g->cp + c) * g->kp + k];         \
		lmi_par_err perr;                                                                       \
		lmi_par_init(&perr);                                                                    \
		int used = 1;                                                                           \
		_Pragma("omp parallel num_threads(nt)")                                                 \
		{                                                                                       \
			wscratch s;                                                                         \
			int t = omp_get_thread_num_safe();                                                  \
			bool ok = scratch_get(&s, g, sizeof(T), false, gx != NULL, gw != NULL);             \
			if (!ok) lmi_par_fail(&perr, LM_ERR_NOMEM, "conv2d backward: %s", lm_last_error()); \
			if (ok && s.du) {                                                                   \
				memset(s.du, 0, nu);                                                            \
				dus[t] = s.du;                                                                  \
			}                                                                                   \
			_Pragma("omp for schedule(static)")                                                 \
			for (int64_t n = 0; n < g->N; n++) {                                                \
				if (!ok || atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;     \
				if (lmi_check_interrupt()) {                                                    \
					lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "conv2d backward: interrupted");    \
					continue;                                                                   \
				}                                                                               \
				backward_image_##T(L, g, x + n * g->C * g->H * g->W,                            \
				                   gy + n * g->K * g->OH * g->OW, ut, &s,                       \
				                   gx ? gx + n * g->C * g->H * g->W : NULL);                     \
			}                                                                                   \
			_Pragma("omp barrier")                                                              \
			_Pragma("omp single")                                                               \
			{                                                                                   \
				used = team_size();                                              \
				if (gw && !atomic_load(&perr.set)) { /* the per-thread dU in order */           \
					for (int k = 1; k < used; k++)                                              \
						for (size_t i = 0; i < (size_t)(16 * g->cp * g->kp); i++)               \
							dus[0][i] += dus[k][i];                                             \
					wtf_adj_##T(dus[0], g, gw);                                                 \
				}                                                                               \
			}                                                                                   \
			if (ok) lm_free(s.base, s.bytes);                                                   \
		}                                                                                       \
		(void)used;                                                                             \
		lm_free(u, nu);                                                                         \
		lm_free(ut, nu);                                                                        \
		return lmi_par_finish(&perr);                                                           \
	}
WINO_DRIVERS(float, lmi_wino_loops)
WINO_DRIVERS(double, wino_loops_f64)

/* ---------------------------------------------------------------- entry points */

lm_status lmi_cpu_winograd_conv(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                                int64_t ph, int64_t pw, lm_tensor *y)
{
	wgeom g;
	geom_of(x, w, ph, pw, &g);
	if (g.N == 0 || g.K == 0 || g.OH <= 0 || g.OW <= 0) return LM_OK;
	if (x->dtype == LM_FLOAT32)
		return forward_float(&lmi_simd()->wino, &g, (const float *)lmi_data(x),
		                     (const float *)lmi_data(w), b ? (const float *)lmi_data(b) : NULL,
		                     (float *)lmi_data(y));
	return forward_double(&loops_f64, &g, (const double *)lmi_data(x), (const double *)lmi_data(w),
	                      b ? (const double *)lmi_data(b) : NULL, (double *)lmi_data(y));
}

lm_status lmi_cpu_winograd_conv_backward(const lm_tensor *x, const lm_tensor *w,
                                         const lm_tensor *gy, int64_t ph, int64_t pw,
                                         lm_tensor *gx, lm_tensor *gw)
{
	wgeom g;
	geom_of(x, w, ph, pw, &g);
	if (gx && g.C * g.H * g.W * g.N == 0) gx = NULL;
	if (gw) memset(lmi_data(gw), 0, (size_t)(g.K * g.C * 9) * lmi_elem_size(gw->dtype));
	if (gx) memset(lmi_data(gx), 0, (size_t)(g.N * g.C * g.H * g.W) * lmi_elem_size(gx->dtype));
	if (g.N == 0 || g.K == 0 || g.C == 0 || g.OH <= 0 || g.OW <= 0 || (!gx && !gw)) return LM_OK;
	if (x->dtype == LM_FLOAT32)
		return backward_float(&lmi_simd()->wino, &g, (const float *)lmi_data(x),
		                      (const float *)lmi_data(w), (const float *)lmi_data(gy),
		                      gx ? (float *)lmi_data(gx) : NULL, gw ? (float *)lmi_data(gw) : NULL);
	return backward_double(&loops_f64, &g, (const double *)lmi_data(x), (const double *)lmi_data(w),
	                       (const double *)lmi_data(gy), gx ? (double *)lmi_data(gx) : NULL,
	                       gw ? (double *)lmi_data(gw) : NULL);
}
