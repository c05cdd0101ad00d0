/*
 * quant.h (internal) — the quant scene's two halves: quant_data.c (the arithmetic: W and X read
 * or made, quantized at each granularity, SmoothQuant, histograms) and quant.c (the picture and
 * its texts). Read next: quant.c.
 */
#ifndef LUMEN_VIZ_SCENES_QUANT_H
#define LUMEN_VIZ_SCENES_QUANT_H

#include "viz/scenes/vzs.h"

enum { G_TENSOR, G_CHANNEL, G_GROUP, NGRAN };
extern const char *const vzq_gran_names[NGRAN]; /* "tensor", "channel", "group": the variants */
enum { ST_VALUES, ST_TENSOR, ST_CHANNEL, ST_GROUP, ST_ERRORS, ST_SQ_BEFORE, ST_SQ_AFTER, NSTEPS };
/* the histograms: all of W, row r, group g of row r, X before and after SmoothQuant */
enum { H_W, H_ROW, H_GROUP, H_X, H_XS, NHIST };
/* the heat maps' colours, cached: W's values, the three errors, W's error before and after
 * SmoothQuant */
enum { M_VALUES, M_ERR_T, M_ERR_C, M_ERR_G, M_SQ_BEFORE, M_SQ_AFTER, NMAPS };

#define HBINS 64

typedef struct vzq_scheme {
	int bits, qmin, qmax;
	bool sym;
} vzq_scheme;

typedef struct vzq_params { /* one granule's scale and zero point */
	float s;
	int z;
} vzq_params;

typedef struct vzq_hist {
	double lo, hi;
	int32_t count[HBINS];
	int64_t n;
} vzq_hist;

typedef struct vzq_scene {
	char fname[32];
	bool demo, x_demo;
	int64_t seed;
	double outlier, alpha;
	int64_t rows, cols, tokens, gsize, ngroups, y_tokens;
	vzq_scheme qs, q8;
	float *w, *x;           /* rows x cols, tokens x cols */
	float *deq[NGRAN];      /* W dequantized at each granularity */
	vzq_params *par[NGRAN]; /* 1, rows, rows * ngroups */
	double mse[NGRAN], maxerr[NGRAN];
	int64_t row, group; /* the granule shown (0-based) */
	/* SmoothQuant */
	float *sj, *xmax, *xmax2, *wmax, *wmax2; /* per input channel */
	float *xdeq, *xdeq2; /* X quantized (int8 per tensor) before and after, in X's units */
	float *xsq;          /* Q(X / s_j): after, in the smoothed units */
	float *wsq;          /* W s_j quantized at the variant's granularity, back in W's units */
	vzq_params xpar, xpar2, *wspar;
	double *y; /* X W^T in float64, y_tokens x rows */
	double x_mse[2], w_mse[2], y_mse[2], xmed, wmed;
	int variant, sq_for; /* the granularity; the one the SmoothQuant numbers are for (the
	                        variant's, unless memory ran out when it changed) */
	vzq_hist hist[NHIST];
	vz_color *col[NMAPS];
	double emax, emax_sq; /* the colour scales of the error maps */
	vzs_grid grid[3];
	/* layout (world) */
	float lh, fh;
	vz_rect hist_t, plot, strips, map_t, map, bars_x, bars_w, nums;
} vzq_scene;

/* The level of code q: s (q - z). */
static inline float vzq_level(vzq_params p, int q)
{
	return p.s * (float)(q - p.z);
}

/* Granules (scales) at granularity g: 1, a row each, a group of a row each. */
static inline int64_t vzq_granules(const vzq_scene *s, int g)
{
	return g == G_TENSOR ? 1 : g == G_CHANNEL ? s->rows : s->rows * s->ngroups;
}

/* The granule of element (r, c) at granularity g. */
static inline int64_t vzq_granule_of(const vzq_scene *s, int g, int64_t r, int64_t c)
{
	return g == G_TENSOR ? 0 : g == G_CHANNEL ? r : r * s->ngroups + c / s->gsize;
}

/* w' = s (q - z), q = clamp(round(w / s) + z, qmin, qmax) in float32; *code: q (when not NULL). */
float vzq_fake_quant(const vzq_scheme *q, vzq_params p, float v, int *code);
/* The scene from W (b->tensor) and X (b->aux), or the demonstration's, with every number
 * computed; NULL + error naming b->fname. vzq_destroy frees it. */
void *vzq_create(const vz_build *b);
void vzq_destroy(void *p);
/* The SmoothQuant numbers of W quantized at granularity g (kept while g stays the same); out of
 * memory: the error, and those of the granularity before stay (s->sq_for says which). */
lm_status vzq_smooth_w(vzq_scene *s, int g);

#endif
