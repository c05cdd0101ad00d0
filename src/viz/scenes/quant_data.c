/*
 * quant_data.c — the quant scene's numbers (quant.c draws them): W and X, given (read as float32,
 * checked: 2-D, finite) or the demonstration's (N(0, 1) from Philox keyed by the option seed, its
 * own counters: the user's generator is not touched; three input channels of each times outlier);
 * W fake-quantized per tensor, per row and per group; SmoothQuant; the histograms drawn.
 *
 * The arithmetic is PyTorch's affine quantization in float32, the same as lm.quant's: symmetric
 * s = max|w| / (2^(b-1) - 1), q = clamp(round(w / s), -(2^(b-1) - 1), 2^(b-1) - 1); asymmetric
 * s = (max(w, 0) - min(w, 0)) / (2^b - 1), z = clamp(round(-min / s), 0, 2^b - 1),
 * q = clamp(round(w / s) + z, 0, 2^b - 1); w' = s (q - z); round = half to even; s = max(s, eps)
 * (float32's epsilon: a zero range divides by it instead of by 0). SmoothQuant as its authors'
 * smooth_ln_fcs: s_j = max|X_j|^alpha / max(max|W_j|, 1e-5)^(1 - alpha), at least 1e-5, with
 * Lumen's float32 pow (x^0.5 is sqrtf); X quantized int8 per tensor, W at the scene's scheme, the
 * errors measured in the original units (Q(X / s) s, Q(W s) / s) and on Y = X W^T (in float64).
 * Read next: quant.c, tests/viz/test_quant.lua (the same arithmetic in tensor ops).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/quant.h"

#define MAX_ELEMS (1 << 22)               /* W and X: 2048 x 2048 at most */
#define EPS32     1.1920928955078125e-07f /* float32's epsilon: the least scale (PyTorch) */
#define SQ_MIN    1e-5f                   /* SmoothQuant's clamp of max|W_j| and of s_j */
#define NDEMO_OUT 3 /* outlier input channels of the demonstration's W and X */

const char *const vzq_gran_names[NGRAN] = {"tensor", "channel", "group"};

/* ---------------------------------------------------------------- the arithmetic */

static void scheme_init(vzq_scheme *q, int bits, bool sym)
{
	q->bits = bits;
	q->sym = sym;
	q->qmin = sym ? -((1 << (bits - 1)) - 1) : 0;
	q->qmax = sym ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
}

/* Round half to even (the default rounding mode), as torch.round and lm's round. */
static float round_even(float v)
{
	return nearbyintf(v);
}

/* The scale and zero point of rows r0..r1-1, columns c0..c1-1 of a matrix of `cols` columns. */
static vzq_params choose(const vzq_scheme *q, const float *m, int64_t cols, int64_t r0, int64_t r1,
                         int64_t c0, int64_t c1)
{
	float lo = 0, hi = 0, amax = 0; /* the range always holds 0 */
	for (int64_t r = r0; r < r1; r++)
		for (int64_t c = c0; c < c1; c++) {
			float v = m[r * cols + c];
			lo = fminf(lo, v), hi = fmaxf(hi, v), amax = fmaxf(amax, fabsf(v));
		}
	vzq_params p = {q->sym ? amax / (float)q->qmax : (hi - lo) / (float)(q->qmax - q->qmin), 0};
	if (!(p.s >= EPS32)) p.s = EPS32;
	if (!q->sym) p.z = (int)fminf(fmaxf(round_even(-lo / p.s), (float)q->qmin), (float)q->qmax);
	return p;
}

float vzq_fake_quant(const vzq_scheme *q, vzq_params p, float v, int *code)
{
	float r = fminf(fmaxf(round_even(v / p.s) + (float)p.z, (float)q->qmin), (float)q->qmax);
	if (code) *code = (int)r;
	return p.s * (r - (float)p.z);
}

/* Chooses the parameters of every granule of m (rows x cols) at granularity g and fake-quantizes
 * m into out. */
static void quantize(const vzq_scene *s, const vzq_scheme *q, int g, const float *m,
                     vzq_params *par, float *out)
{
	for (int64_t k = 0; k < vzq_granules(s, g); k++) {
		int64_t r0 = g == G_TENSOR ? 0 : g == G_CHANNEL ? k : k / s->ngroups;
		int64_t r1 = g == G_TENSOR ? s->rows : r0 + 1;
		int64_t c0 = g == G_GROUP ? (k % s->ngroups) * s->gsize : 0,
		        c1 = g == G_GROUP ? c0 + s->gsize : s->cols;
		par[k] = choose(q, m, s->cols, r0, r1, c0, c1);
	}
	for (int64_t r = 0; r < s->rows; r++)
		for (int64_t c = 0; c < s->cols; c++)
			out[r * s->cols + c] = vzq_fake_quant(q, par[vzq_granule_of(s, g, r, c)],
			                                      m[r * s->cols + c], NULL);
}

/* Mean of (a - b)^2 over n floats (the difference in float32, the sum in float64), and the largest
 * |a - b|. */
static double mse_of(const float *a, const float *b, int64_t n, double *maxerr)
{
	double sum = 0, mx = 0;
	for (int64_t i = 0; i < n; i++) {
		double d = (double)(a[i] - b[i]);
		sum += d * d;
		mx = fmax(mx, fabs(d));
	}
	if (maxerr) *maxerr = mx;
	return n ? sum / (double)n : 0;
}

/* x^p as Lumen's float32 pow does it (x:pow(0.5) is sqrtf, x:pow(1) is x, ...). */
static float lm_powf(float v, float p)
{
	if (p == 2) return v * v;
	if (p == 3) return v * v * v;
	if (p == 1) return v;
	if (p == 0.5f) return sqrtf(v);
	if (p == -1) return 1 / v;
	return powf(v, p);
}

/* The largest |m[., j]| of each column j of an n x cols matrix. */
static void col_absmax(const float *m, int64_t n, int64_t cols, float *out)
{
	for (int64_t j = 0; j < cols; j++) out[j] = 0;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < cols; j++) out[j] = fmaxf(out[j], fabsf(m[i * cols + j]));
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

static double median(const float *v, int64_t n)
{
	float *t = vz_malloc((size_t)n * sizeof *t);
	if (!t) return NAN; /* out of memory: no channel is called an outlier */
	memcpy(t, v, (size_t)n * sizeof *t);
	qsort(t, (size_t)n, sizeof *t, cmp_float);
	double m = n % 2 ? t[n / 2] : 0.5 * ((double)t[n / 2 - 1] + (double)t[n / 2]);
	vz_free(t);
	return m;
}

/* mean over y_tokens x rows of (Y - A B^T)^2, A: tokens x cols, B: rows x cols (float64 sums). */
static double y_mse(const vzq_scene *s, const float *a, const float *b)
{
	double sum = 0;
	for (int64_t t = 0; t < s->y_tokens; t++)
		for (int64_t r = 0; r < s->rows; r++) {
			double acc = 0;
			for (int64_t j = 0; j < s->cols; j++)
				acc += (double)a[t * s->cols + j] * (double)b[r * s->cols + j];
			double d = s->y[t * s->rows + r] - acc;
			sum += d * d;
		}
	return sum / (double)(s->y_tokens * s->rows);
}

/* ---------------------------------------------------------------- SmoothQuant */

/* X's side and the migration factors: they do not depend on how W is quantized. */
static void smooth_x(vzq_scene *s)
{
	int64_t nx = s->tokens * s->cols;
	col_absmax(s->x, s->tokens, s->cols, s->xmax);
	col_absmax(s->w, s->rows, s->cols, s->wmax);
	float a = (float)s->alpha, b = (float)(1 - s->alpha);
	for (int64_t j = 0; j < s->cols; j++)
		s->sj[j] =
		    fmaxf(lm_powf(s->xmax[j], a) / lm_powf(fmaxf(s->wmax[j], SQ_MIN), b), SQ_MIN);
	for (int64_t i = 0; i < nx; i++) s->xsq[i] = s->x[i] / s->sj[i % s->cols]; /* X / s_j */
	col_absmax(s->xsq, s->tokens, s->cols, s->xmax2);
	for (int64_t j = 0; j < s->cols; j++) { /* max|W_j s_j| */
		float m = 0;
		for (int64_t r = 0; r < s->rows; r++)
			m = fmaxf(m, fabsf(s->w[r * s->cols + j] * s->sj[j]));
		s->wmax2[j] = m;
	}
	s->xpar = choose(&s->q8, s->x, nx, 0, 1, 0, nx);
	s->xpar2 = choose(&s->q8, s->xsq, nx, 0, 1, 0, nx);
	for (int64_t i = 0; i < nx; i++) {
		s->xdeq[i] = vzq_fake_quant(&s->q8, s->xpar, s->x[i], NULL);
		s->xsq[i] =
		    vzq_fake_quant(&s->q8, s->xpar2, s->xsq[i], NULL); /* Q(X / s_j), smoothed */
		s->xdeq2[i] = s->xsq[i] * s->sj[i % s->cols];          /* back in X's units */
	}
	s->x_mse[0] = mse_of(s->x, s->xdeq, nx, NULL);
	s->x_mse[1] = mse_of(s->x, s->xdeq2, nx, NULL);
	for (int64_t t = 0; t < s->y_tokens; t++) /* Y = X W^T, the reference */
		for (int64_t r = 0; r < s->rows; r++) {
			double acc = 0;
			for (int64_t j = 0; j < s->cols; j++)
				acc +=
				    (double)s->x[t * s->cols + j] * (double)s->w[r * s->cols + j];
			s->y[t * s->rows + r] = acc;
		}
	s->xmed = median(s->xmax, s->cols);
	s->wmed = median(s->wmax, s->cols);
}

/* W's side at the variant's granularity: W s_j quantized, its error back in W's units, and
 * Y's error before (Q(X) Q(W)^T) and after (Q(X / s) Q(W s)^T). */
lm_status vzq_smooth_w(vzq_scene *s, int g)
{
	if (s->sq_for == g) return LM_OK;
	int64_t nw = s->rows * s->cols;
	float *ws = vz_malloc((size_t)nw * sizeof *ws), *wq = vz_malloc((size_t)nw * sizeof *wq);
	if (!ws || !wq) {
		vz_free(ws), vz_free(wq);
		return vz_error_prefix(0, s->fname);
	}
	for (int64_t i = 0; i < nw; i++) ws[i] = s->w[i] * s->sj[i % s->cols];
	quantize(s, &s->qs, g, ws, s->wspar, wq);
	for (int64_t i = 0; i < nw; i++) s->wsq[i] = wq[i] / s->sj[i % s->cols];
	double m0 = 0, m1 = 0;
	s->w_mse[0] = mse_of(s->w, s->deq[g], nw, &m0);
	s->w_mse[1] = mse_of(s->w, s->wsq, nw, &m1);
	s->y_mse[0] = y_mse(s, s->xdeq, s->deq[g]);
	s->y_mse[1] = y_mse(s, s->xsq, wq);
	s->emax_sq = fmax(m0, m1);
	vz_free(ws), vz_free(wq);
	vz_free(s->col[M_SQ_BEFORE]), vz_free(s->col[M_SQ_AFTER]);
	s->col[M_SQ_BEFORE] = s->col[M_SQ_AFTER] = NULL;
	s->sq_for = g;
	return LM_OK;
}

/* ---------------------------------------------------------------- histograms */

/* The range a grid covers: its lowest and highest level. */
static void grid_range(const vzq_scheme *q, vzq_params p, double *lo, double *hi)
{
	*lo = vzq_level(p, q->qmin);
	*hi = vzq_level(p, q->qmax);
}

/* n values into HBINS bins over the grid's range, padded 3% each side. */
static void hist_fill(vzq_hist *h, const vzq_scheme *q, vzq_params p, const float *v, int64_t n)
{
	grid_range(q, p, &h->lo, &h->hi);
	double pad = (h->hi - h->lo) * 0.03 + 1e-30;
	h->lo -= pad, h->hi += pad;
	memset(h->count, 0, sizeof h->count);
	h->n = n;
	for (int64_t i = 0; i < n; i++) {
		int b = (int)floor((v[i] - h->lo) / (h->hi - h->lo) * HBINS);
		h->count[b < 0 ? 0 : b >= HBINS ? HBINS - 1 : b]++;
	}
}

static void hist_build(vzq_scene *s)
{
	int64_t nw = s->rows * s->cols, nx = s->tokens * s->cols;
	hist_fill(&s->hist[H_W], &s->qs, s->par[G_TENSOR][0], s->w, nw);
	hist_fill(&s->hist[H_ROW], &s->qs, s->par[G_CHANNEL][s->row], s->w + s->row * s->cols,
	          s->cols);
	hist_fill(&s->hist[H_GROUP], &s->qs, s->par[G_GROUP][s->row * s->ngroups + s->group],
	          s->w + s->row * s->cols + s->group * s->gsize, s->gsize);
	hist_fill(&s->hist[H_X], &s->q8, s->xpar, s->x, nx);
	/* X / s_j on X's axis: the outliers pulled in, the grid finer */
	vzq_hist *h = &s->hist[H_XS];
	*h = s->hist[H_X];
	memset(h->count, 0, sizeof h->count);
	for (int64_t i = 0; i < nx; i++) {
		int b =
		    (int)floor((s->x[i] / s->sj[i % s->cols] - h->lo) / (h->hi - h->lo) * HBINS);
		h->count[b < 0 ? 0 : b >= HBINS ? HBINS - 1 : b]++;
	}
}

/* ---------------------------------------------------------------- inputs */

/* n values of N(0, 1) from Philox4x32-10 keyed by seed and stream (its own counters: the user's
 * generator is not touched), by Box-Muller. */
static void normals(float *out, int64_t n, int64_t seed, uint32_t stream)
{
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)((uint64_t)seed >> 32) ^ stream};
	for (int64_t i = 0; i < n; i += 2) {
		uint32_t ctr[4] = {(uint32_t)(i / 2), (uint32_t)((uint64_t)(i / 2) >> 32), 0, 0},
		         r[4];
		lm_philox4x32(ctr, key, r);
		double u1 = ((double)r[0] + 1.0) / 4294967297.0, u2 = (double)r[1] / 4294967296.0;
		double rad = sqrt(-2 * log(u1));
		out[i] = (float)(rad * cos(2 * M_PI * u2));
		if (i + 1 < n) out[i + 1] = (float)(rad * sin(2 * M_PI * u2));
	}
}

/* The demonstration's outlier input channels: W's near the start, X's in the second half. */
static int64_t demo_channel(int64_t cols, int k, bool x)
{
	return ((x ? cols / 2 + 8 : 7) + (int64_t)k * 11) % cols;
}

static void demo_matrix(float *m, int64_t n, int64_t cols, int64_t seed, uint32_t stream,
                        double outlier, bool x)
{
	normals(m, n * cols, seed, stream);
	for (int k = 0; k < NDEMO_OUT && cols > 1; k++) {
		int64_t j = demo_channel(cols, k, x);
		for (int64_t i = 0; i < n; i++) m[i * cols + j] *= (float)outlier;
	}
}

/* t's values as float32 (rows x cols; a 2-D tensor), checked: finite, on the CPU. */
static lm_status read_matrix(vzq_scene *s, const lm_tensor *t, const char *what, float **out,
                             int64_t *rows, int64_t *cols)
{
	char sh[LM_SHAPE_STR_MAX];
	int nd = lm_tensor_ndim(t);
	lm_shape_str(nd, lm_tensor_shape(t), sh, sizeof sh);
	if (nd != 2)
		return lm_set_error(LM_ERR_SHAPE,
		                    "%s: the quant scene takes %s as a 2-D matrix (%s); this one "
		                    "has %d dim%s, shape %s",
		                    s->fname, what,
		                    *what == 'W' ? "output channels x input channels"
		                                 : "tokens x input channels",
		                    nd, nd == 1 ? "" : "s", sh);
	if (lm_tensor_device(t) != LM_CPU)
		return lm_set_error(
		    LM_ERR_DEVICE,
		    "%s: the quant scene reads CPU tensors; %s is on %s (:cpu() first)", s->fname,
		    what, lm_device_name(lm_tensor_device(t)));
	lm_dtype dt = lm_tensor_dtype(t);
	if (!lm_dtype_is_float(dt) || lm_dtype_is_block(dt))
		return lm_set_error(
		    LM_ERR_DTYPE,
		    "%s: the quant scene quantizes float values; %s is %s (:float() first)",
		    s->fname, what, lm_dtype_name(dt));
	*rows = lm_tensor_shape(t)[0], *cols = lm_tensor_shape(t)[1];
	if (*rows * *cols == 0)
		return lm_set_error(LM_ERR_SHAPE,
		                    "%s: the quant scene needs values; %s has none (shape %s)",
		                    s->fname, what, sh);
	if (*rows * *cols > MAX_ELEMS)
		return lm_set_error(
		    LM_ERR_ARG,
		    "%s: the quant scene draws at most %d elements; %s has %lld (shape %s)",
		    s->fname, MAX_ELEMS, what, (long long)(*rows * *cols), sh);
	lm_tensor *f = lm_to_dtype(t, LM_FLOAT32), *c = f ? lm_contiguous(f) : NULL;
	lm_tensor_release(f);
	if (!c) return vz_error_prefix(0, s->fname);
	*out = vz_malloc((size_t)(*rows * *cols) * sizeof **out);
	if (*out) memcpy(*out, lm_tensor_data(c), (size_t)(*rows * *cols) * sizeof **out);
	lm_tensor_release(c);
	if (!*out) return vz_error_prefix(0, s->fname);
	for (int64_t i = 0; i < *rows * *cols; i++)
		if (!isfinite((*out)[i]))
			return lm_set_error(
			    LM_ERR_ARG,
			    "%s: the quant scene cannot quantize %s: element {%lld, %lld} is %s",
			    s->fname, what, (long long)(i / *cols + 1), (long long)(i % *cols + 1),
			    isnan((*out)[i]) ? "NaN" : "infinite");
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

void vzq_destroy(void *p)
{
	vzq_scene *s = p;
	if (!s) return;
	vz_free(s->w), vz_free(s->x);
	for (int g = 0; g < NGRAN; g++) vz_free(s->deq[g]), vz_free(s->par[g]);
	vz_free(s->sj), vz_free(s->xmax), vz_free(s->xmax2), vz_free(s->wmax), vz_free(s->wmax2);
	vz_free(s->xdeq), vz_free(s->xdeq2), vz_free(s->xsq), vz_free(s->wsq), vz_free(s->wspar),
	    vz_free(s->y);
	for (int m = 0; m < NMAPS; m++) vz_free(s->col[m]);
	for (int i = 0; i < 3; i++) vzs_grid_free(&s->grid[i]);
	vz_free(s);
}

/* W and X: given, or the demonstration's. */
static lm_status inputs(vzq_scene *s, const vz_build *b)
{
	const lm_viz_opts *o = b->opts;
	s->seed = vz_opt_int(o, "seed", 0);
	s->outlier = vz_opt_number(o, "outlier", 20);
	if (b->tensor) {
		if (read_matrix(s, b->tensor, "W", &s->w, &s->rows, &s->cols) != LM_OK)
			return LM_ERR_ARG;
	} else {
		s->demo = true;
		s->rows = vz_opt_int(o, "rows", 16), s->cols = vz_opt_int(o, "cols", 64);
		if (!(s->w = vz_malloc((size_t)(s->rows * s->cols) * sizeof *s->w)))
			return vz_error_prefix(0, s->fname);
		demo_matrix(s->w, s->rows, s->cols, s->seed, 1, s->outlier, false);
	}
	if (b->aux) {
		int64_t xc = 0;
		if (read_matrix(s, b->aux, "the activations X", &s->x, &s->tokens, &xc) != LM_OK)
			return LM_ERR_ARG;
		if (xc != s->cols)
			return lm_set_error(LM_ERR_SHAPE,
			                    "%s: the quant scene's activations X have %lld "
			                    "columns; W has %lld input "
			                    "channels (X: tokens x input channels)",
			                    s->fname, (long long)xc, (long long)s->cols);
	} else {
		s->x_demo = true;
		s->tokens = vz_opt_int(o, "tokens", 32);
		if (s->tokens * s->cols > MAX_ELEMS) s->tokens = MAX_ELEMS / s->cols;
		if (!(s->x = vz_malloc((size_t)(s->tokens * s->cols) * sizeof *s->x)))
			return vz_error_prefix(0, s->fname);
		demo_matrix(s->x, s->tokens, s->cols, s->seed, 2, s->outlier, true);
	}
	return LM_OK;
}

/* The options that depend on W's shape. */
static lm_status check_shape_options(vzq_scene *s, const lm_viz_opts *o)
{
	s->gsize = vz_opt_int(o, "group_size", 32);
	if (!vz_opt_given(o, "group_size") && s->cols % s->gsize)
		s->gsize = s->cols; /* the default: one group */
	if (s->cols % s->gsize)
		return lm_set_error(
		    LM_ERR_ARG,
		    "%s: the quant scene's group_size %lld does not divide W's %lld columns "
		    "(input channels)",
		    s->fname, (long long)s->gsize, (long long)s->cols);
	s->ngroups = s->cols / s->gsize;
	int64_t row = vz_opt_int(o, "row", 0), group = vz_opt_int(o, "group", 0);
	if (row > s->rows)
		return lm_set_error(LM_ERR_ARG,
		                    "%s: the quant scene's row %lld is past W's %lld rows",
		                    s->fname, (long long)row, (long long)s->rows);
	if (group > s->ngroups)
		return lm_set_error(LM_ERR_ARG,
		                    "%s: the quant scene's group %lld is past the %lld groups of a "
		                    "row (group_size %lld)",
		                    s->fname, (long long)group, (long long)s->ngroups,
		                    (long long)s->gsize);
	s->row = row - 1, s->group = group - 1;
	return LM_OK;
}

/* The granule shown when the options do not say: the row whose own grid is finest, and its group
 * whose grid is finest (where per channel and per group gain the most). */
static void pick_granule(vzq_scene *s)
{
	if (s->row < 0) {
		s->row = 0;
		for (int64_t r = 1; r < s->rows; r++)
			if (s->par[G_CHANNEL][r].s < s->par[G_CHANNEL][s->row].s) s->row = r;
	}
	if (s->group < 0) {
		s->group = 0;
		const vzq_params *g = s->par[G_GROUP] + s->row * s->ngroups;
		for (int64_t k = 1; k < s->ngroups; k++)
			if (g[k].s < g[s->group].s) s->group = k;
	}
}

static lm_status compute(vzq_scene *s)
{
	int64_t nw = s->rows * s->cols, nx = s->tokens * s->cols;
	s->y_tokens = s->tokens;
	if (s->y_tokens * nw > ((int64_t)1 << 27))
		s->y_tokens = ((int64_t)1 << 27) / nw > 0 ? ((int64_t)1 << 27) / nw : 1;
	for (int g = 0; g < NGRAN; g++)
		if (!(s->deq[g] = vz_malloc((size_t)nw * sizeof(float))) ||
		    !(s->par[g] = vz_calloc((size_t)vzq_granules(s, g), sizeof(vzq_params))))
			return vz_error_prefix(0, s->fname);
	if (!(s->sj = vz_malloc((size_t)s->cols * sizeof(float))) ||
	    !(s->xmax = vz_malloc((size_t)s->cols * sizeof(float))) ||
	    !(s->xmax2 = vz_malloc((size_t)s->cols * sizeof(float))) ||
	    !(s->wmax = vz_malloc((size_t)s->cols * sizeof(float))) ||
	    !(s->wmax2 = vz_malloc((size_t)s->cols * sizeof(float))) ||
	    !(s->xdeq = vz_malloc((size_t)nx * sizeof(float))) ||
	    !(s->xdeq2 = vz_malloc((size_t)nx * sizeof(float))) ||
	    !(s->xsq = vz_malloc((size_t)nx * sizeof(float))) ||
	    !(s->wsq = vz_malloc((size_t)nw * sizeof(float))) ||
	    !(s->wspar = vz_calloc((size_t)vzq_granules(s, G_GROUP), sizeof(vzq_params))) ||
	    !(s->y = vz_malloc((size_t)(s->y_tokens * s->rows) * sizeof(double))))
		return vz_error_prefix(0, s->fname);
	s->emax = 0;
	for (int g = 0; g < NGRAN; g++) {
		quantize(s, &s->qs, g, s->w, s->par[g], s->deq[g]);
		s->mse[g] = mse_of(s->w, s->deq[g], nw, &s->maxerr[g]);
		s->emax = fmax(s->emax, s->maxerr[g]);
	}
	pick_granule(s);
	smooth_x(s);
	s->sq_for = -1;
	if (vzq_smooth_w(s, s->variant) != LM_OK) return LM_ERR_NOMEM;
	hist_build(s);
	return LM_OK;
}

void *vzq_create(const vz_build *b)
{
	vzq_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	const lm_viz_opts *o = b->opts;
	const char *sym = vz_opt_string(o, "symmetric", "1");
	scheme_init(&s->qs, (int)vz_opt_int(o, "bits", 4),
	            strcmp(sym, "1") == 0 || strcmp(sym, "true") == 0);
	scheme_init(&s->q8, 8, true);
	s->alpha = vz_opt_number(o, "alpha", 0.5);
	const char *gran = vz_opt_string(o, "granularity", "channel");
	for (int g = 0; g < NGRAN; g++)
		if (strcmp(gran, vzq_gran_names[g]) == 0) s->variant = g;
	lm_status st = LM_OK;
	if (b->nruns > 0)
		st = lm_set_error(LM_ERR_ARG,
		                  "%s: the quant scene draws a weight matrix (viz.show('quant', "
		                  "W)), not a %s result",
		                  b->fname, b->runs[0].pattern);
	if (st == LM_OK) st = inputs(s, b);
	if (st == LM_OK) st = check_shape_options(s, o);
	if (st == LM_OK) st = compute(s);
	if (st != LM_OK) {
		vzq_destroy(s);
		return NULL;
	}
	return s;
}
