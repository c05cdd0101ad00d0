/*
 * quant.c — the quantization scene: a weight matrix W (rows = output channels, columns = input
 * channels) rounded onto a grid of 2^b levels, one scale per tensor, per row (output channel) or
 * per group of consecutive columns; the histogram of the values with the grid over it, the
 * rounding error |w - w'| of every element as a heat map, and SmoothQuant moving the outlier
 * channels of the activations X into W (X_j / s_j, W_j * s_j). The numbers come from
 * quant_data.c (PyTorch's affine quantization in float32, as lm.quant's); every one shown says
 * that it was computed here, on the CPU.
 *
 * Steps: W and its histogram; the grid per tensor, per channel (row r), per group (group g of
 * row r), each with its error map; the three error maps on one colour scale; SmoothQuant before
 * and after. The variant (Tab; option granularity) is the granularity W is quantized with in the
 * last three steps. Built from viz.show('quant', W [, {activations = X, ...}]) or from options
 * (a seeded 16 x 64 W and 32 x 64 X, each with three outlier input channels).
 * Read next: docs/viz.md ("quant"), quant_data.c, tensor.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/quant.h"

static int quant_steps(void *p)
{
	(void)p;
	return NSTEPS;
}
static int quant_variants(void *p)
{
	(void)p;
	return NGRAN;
}
static const char *quant_variant_name(void *p, int v)
{
	(void)p;
	return vzq_gran_names[v];
}
static int quant_initial_variant(void *p)
{
	return ((vzq_scene *)p)->variant;
}

static void quant_set_variant(void *p, int v)
{
	vzq_scene *s = p;
	s->variant = v;
	vzq_smooth_w(s, v); /* out of memory: the numbers of the last one stay, labelled as its */
}

/* ---------------------------------------------------------------- layout */

/* "per tensor", "per channel", "per group" in the labels' language (the variants keep their
 * names: the option's words). */
static const char *gran_label(int g)
{
	static const char *const zh[NGRAN] = {"逐张量", "逐通道", "逐组"};
	static const char *const en[NGRAN] = {"per tensor", "per channel", "per group"};
	return vz_zh() ? zh[g] : en[g];
}

/* The small print: the tiny font, but Chinese in the small one (at 9 px it blurs). */
static vz_font fine_print(void)
{
	return vz_zh() ? VZ_FONT_SMALL : VZ_FONT_TINY;
}

static void quant_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	vzq_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 440 * c->scale);
	float lh = s->lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL),
	      gap = lh * 1.4f;
	s->fh = vz_text_height(f, fine_print());
	float ha = H * 0.6f, wl = W * 0.45f, margin = cw;
	for (int g = 0; g < NGRAN; g++)
		margin = fmaxf(margin, vz_text_width(f, VZ_FONT_SMALL, gran_label(g)) + cw);
	/* the plot, its axis, three strips of levels and the line under them */
	float strips_h = 3 * lh * 1.2f, axis_h = lh * 1.4f, under = lh * 1.3f;
	s->hist_t = vz_r(0, 0, wl, lh);
	s->plot = vz_r(margin, lh * 1.5f, wl - margin,
	               fmaxf(lh * 3, ha - lh * 1.5f - axis_h - strips_h - under));
	s->strips = vz_r(margin, s->plot.y + s->plot.h + axis_h, wl - margin, strips_h);
	float rx = wl + gap;
	s->map_t = vz_r(rx, 0, W - rx, lh);
	/* the map, then under it a colour bar and the MSE boxes */
	s->map = vz_r(rx, lh * 1.5f, W - rx, fmaxf(lh * 3, ha - lh * 1.5f - lh * 3.4f));
	float by = ha + lh * 0.8f, bh = H - by, nw = fminf(W * 0.3f, 46 * cw),
	      chart = (W - nw - 2 * gap) / 2;
	s->bars_x = vz_r(0, by, chart, bh);
	s->bars_w = vz_r(chart + gap, by, chart, bh);
	s->nums = vz_r(2 * (chart + gap), by, W - 2 * (chart + gap), bh);
	*ww = W;
	*wh = H;
}

/* ---------------------------------------------------------------- what a step shows */

static int step_of(const vz_frame *f)
{
	return (int)floor(f->t + 1e-9);
}

/* The granularity a step's grid is of (-1: none, X's at the SmoothQuant steps). */
static int step_gran(const vzq_scene *s, int st)
{
	return st >= ST_TENSOR && st <= ST_GROUP ? st - ST_TENSOR
	       : st == ST_ERRORS                 ? s->variant
	                                         : -1;
}

/* The granule shown at granularity g, and its parameters. */
static int64_t shown_granule(const vzq_scene *s, int g)
{
	return g == G_TENSOR ? 0 : g == G_CHANNEL ? s->row : s->row * s->ngroups + s->group;
}
static vzq_params shown_params(const vzq_scene *s, int g)
{
	return s->par[g][shown_granule(s, g)];
}

/* "all of W", "row 3", "group 2 of row 3" (1-based, as Lua counts). */
static char *granule_name(const vzq_scene *s, int g, char *buf, size_t cap)
{
	if (g == G_TENSOR)
		snprintf(buf, cap, "%s", vz_tr("all of W", "整个 W"));
	else if (g == G_CHANNEL)
		VZ_SNPRINTF_TR(buf, cap, "row %lld", "第 %lld 行", (long long)s->row + 1);
	else if (vz_zh()) /* the Chinese names the row first: two calls */
		snprintf(buf, cap, "第 %lld 行的第 %lld 组", (long long)s->row + 1,
		         (long long)s->group + 1);
	else
		snprintf(buf, cap, "group %lld of row %lld", (long long)s->group + 1,
		         (long long)s->row + 1);
	return buf;
}

/* "int4 symmetric" */
static char *scheme_name(const vzq_scheme *q, char *buf, size_t cap)
{
	VZ_SNPRINTF_TR(buf, cap, "int%d %s", "int%d %s", q->bits,
	               q->sym ? vz_tr("symmetric", "对称") : vz_tr("asymmetric", "非对称"));
	return buf;
}

/* ---------------------------------------------------------------- colours */

static vz_color value_color(double v, double vmax)
{
	double t = vmax > 0 ? v / vmax : 0;
	return t < 0 ? vz_mix(VZ_RGB(255, 255, 255), vz_th.path_a, -t)
	             : vz_mix(VZ_RGB(255, 255, 255), vz_th.active, t);
}

static vz_color grid_color(void)
{
	return vz_okabe_ito[VZ_OI_VERMILLION];
}
/* SmoothQuant's result: bluish green, apart from the outliers' vermillion and the step's orange */
static vz_color after_color(void)
{
	return vz_okabe_ito[VZ_OI_GREEN];
}

/* The colours of heat map m (computed once, kept). */
static const vz_color *map_colors(vzq_scene *s, int m)
{
	if (s->col[m]) return s->col[m];
	int64_t n = s->rows * s->cols;
	vz_color *c = s->col[m] = vz_malloc((size_t)n * sizeof *c);
	if (!c) return NULL;
	double vmax = 0;
	for (int64_t i = 0; m == M_VALUES && i < n; i++) vmax = fmax(vmax, fabs(s->w[i]));
	const float *d = m == M_SQ_AFTER    ? s->wsq
	                 : m == M_SQ_BEFORE ? s->deq[s->sq_for]
	                 : m >= M_ERR_T     ? s->deq[m - M_ERR_T]
	                                    : NULL;
	double e = m >= M_SQ_BEFORE ? s->emax_sq : s->emax;
	for (int64_t i = 0; i < n; i++)
		c[i] = m == M_VALUES ? value_color(s->w[i], vmax)
		                     : vz_viridis(e > 0 ? fabs((double)(s->w[i] - d[i])) / e : 0);
	return c;
}

/* ---------------------------------------------------------------- the histogram and its grids */

static double nice_step(double range, int n)
{
	double raw = range / n, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static float hx(const vzq_scene *s, const vzq_hist *h, double v)
{
	return s->plot.x + (float)((v - h->lo) / (h->hi - h->lo)) * s->plot.w;
}

/* Ticks and their values under the plot, where the labels do not touch. */
static void draw_axis(vz_frame *f, const vzq_scene *s, const vzq_hist *h)
{
	double step = nice_step(h->hi - h->lo, 6);
	float y = s->plot.y + s->plot.h, last = -1e9f, cw = vz_char_width(f, VZ_FONT_SMALL);
	vz_line(f, s->plot.x, y, s->plot.x + s->plot.w, y, 1, vz_th.text_dim);
	for (double v = ceil(h->lo / step) * step; v <= h->hi; v += step) {
		double t = fabs(v) < step * 1e-6 ? 0 : v;
		char num[32];
		snprintf(num, sizeof num, "%.3g", t);
		float x = hx(s, h, t), w = vz_text_width(f, VZ_FONT_SMALL, num);
		vz_line(f, x, y, x, y + s->lh * 0.3f, 1, vz_th.text_dim);
		if (x - w / 2 < last + cw || x + w / 2 > s->plot.x + s->plot.w + cw * 2) continue;
		vz_text_draw(f, x, y + s->lh * 0.3f, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text_dim,
		             num);
		last = x + w / 2;
	}
}

static void draw_bins(vz_frame *f, const vzq_scene *s, const vzq_hist *h, const char *group)
{
	vz_fill(f, s->plot, VZ_RGB(255, 255, 255));
	vz_outline(f, s->plot, 1, vz_th.panel_line);
	int32_t top = 1;
	for (int b = 0; b < HBINS; b++) top = h->count[b] > top ? h->count[b] : top;
	float bw = s->plot.w / HBINS, base = s->plot.y + s->plot.h, th = s->plot.h - s->lh * 0.4f;
	for (int b = 0; b < HBINS; b++) {
		vz_rect r = vz_r(s->plot.x + (float)b * bw, s->plot.y, bw, s->plot.h);
		if (h->count[b]) { /* the square root of the count: the tails show */
			float bh = fmaxf(1, th * (float)sqrt((double)h->count[b] / top));
			vz_fill(f, vz_r(r.x, base - bh, fmaxf(1, bw - 0.5f), bh), vz_th.path_a);
		}
		vz_cell *c = vz_cell_add(f, r, "bin");
		c->group = group;
		c->index = b;
		c->value = h->count[b];
		c->has_value = true;
		c->color = vz_th.path_a;
		c->state = h->count[b] ? "values" : "empty";
	}
}

/* Every k-th level so that the lines stay 3 pixels apart on screen (k = 1: all of them). */
static int thin(const vz_frame *f, const vzq_scene *s, const vzq_hist *h, vzq_params p)
{
	double px = p.s / (h->hi - h->lo) * s->plot.w * vz_zoom(f);
	return px >= 3 ? 1 : (int)ceil(3 / fmax(px, 1e-9));
}

/* The levels of a grid as lines over the plot (each a cell "level", its value the level). */
static int draw_grid(vz_frame *f, const vzq_scene *s, const vzq_hist *h, const vzq_scheme *q,
                     vzq_params p, const char *group)
{
	int k = thin(f, s, h, p);
	vz_color c = grid_color();
	for (int code = q->qmin; code <= q->qmax; code++) {
		double v = vzq_level(p, code);
		if (v < h->lo || v > h->hi || (code - p.z) % k) continue;
		float x = hx(s, h, v);
		vz_line(f, x, s->plot.y, x, s->plot.y + s->plot.h, 1, vz_fade(c, 0.85));
		vz_cell *cell = vz_cell_add(f, vz_r(x - 1.5f, s->plot.y, 3, s->plot.h), "level");
		cell->group = group;
		/* its place among the 2^b levels (the code itself can be negative) */
		cell->index = code - q->qmin;
		cell->value = v;
		cell->has_value = true;
		cell->color = c;
		cell->state = "level";
	}
	return k;
}

/* How many levels of a grid fall inside the histogram's range. */
static int levels_inside(const vzq_hist *h, const vzq_scheme *q, vzq_params p)
{
	int n = 0;
	for (int code = q->qmin; code <= q->qmax; code++)
		n += vzq_level(p, code) >= h->lo && vzq_level(p, code) <= h->hi;
	return n;
}

/* One strip: a label in the margin and the grid's levels inside the range as ticks. */
static void draw_strip(vz_frame *f, const vzq_scene *s, const vzq_hist *h, int i, const char *label,
                       const vzq_scheme *q, vzq_params p, bool current, const char *group,
                       int index)
{
	float rh = s->strips.h / 3, y = s->strips.y + (float)i * rh;
	vz_color c = current ? grid_color() : vz_th.text_dim;
	vz_text_draw(f, 0, y + (rh - s->lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
	             current ? vz_th.text : vz_th.text_dim, label);
	vz_rect r = vz_r(s->strips.x, y + rh * 0.15f, s->strips.w, rh * 0.7f);
	vz_line(f, r.x, r.y + r.h / 2, r.x + r.w, r.y + r.h / 2, 1, vz_fade(vz_th.text_dim, 0.4));
	int k = thin(f, s, h, p);
	for (int code = q->qmin; code <= q->qmax; code++) {
		double v = vzq_level(p, code);
		if (v < h->lo || v > h->hi || (code - p.z) % k) continue;
		float x = hx(s, h, v);
		vz_line(f, x, r.y, x, r.y + r.h, current ? 2 : 1, c);
	}
	vz_cell *cell = vz_cell_add(f, vz_r(0, y, s->strips.x + s->strips.w, rh), "levels");
	cell->group = group;
	cell->index = index;
	cell->value = levels_inside(h, q, p);
	cell->has_value = true;
	cell->color = c;
	cell->state = current ? "active" : "idle";
}

/* Text cut to the width w with an ellipsis. */
static void text_fit(vz_frame *f, float x, float y, float w, vz_font font, vz_color c,
                     const char *t)
{
	char buf[400];
	snprintf(buf, sizeof buf, "%s", t);
	vz_text_fit(f, font, buf, sizeof buf, w);
	vz_text_draw(f, x, y, font, VZ_ALIGN_LEFT, c, buf);
}

static void draw_hist_w(vz_frame *f, vzq_scene *s, int st)
{
	int g = step_gran(s, st);
	const vzq_hist *h = &s->hist[g == G_CHANNEL ? H_ROW : g == G_GROUP ? H_GROUP : H_W];
	char t[300], gn[64], num[32];
	if (g < 0)
		VZ_SNPRINTF_TR(t, sizeof t,
		               "W's %lld values: histogram (bar height: square root of the count)",
		               "W 的 %lld 个值：直方图（柱高：计数的平方根）", (long long)h->n);
	else
		VZ_SNPRINTF_TR(t, sizeof t, "%s (%lld values) and its grid, s = %s: %s",
		               "%s（%lld 个值）及其网格，s = %s：%s",
		               granule_name(s, g, gn, sizeof gn), (long long)h->n,
		               vzs_short(num, sizeof num, shown_params(s, g).s), gran_label(g));
	text_fit(f, 0, 0, s->hist_t.w, VZ_FONT_SMALL, vz_th.text, t);
	draw_bins(f, s, h, g < 0 ? "W" : vzq_gran_names[g]);
	draw_axis(f, s, h);
	if (g < 0) {
		text_fit(f, 0, s->strips.y, s->plot.x + s->plot.w, VZ_FONT_SMALL, vz_th.text_dim,
		         vz_tr("-> the grid of 2^b levels one scale gives, per tensor, per "
		               "channel, per group",
		               "→ 一个缩放因子给出 2^b 个量化级：逐张量、逐通道、逐组"));
		return;
	}
	vz_layer(f);
	int k = draw_grid(f, s, h, &s->qs, shown_params(s, g), vzq_gran_names[g]);
	int upto = st == ST_ERRORS ? G_GROUP : g, n[NGRAN] = {0};
	for (int i = 0; i <= upto; i++) {
		draw_strip(f, s, h, i, gran_label(i), &s->qs, shown_params(s, i), i == g,
		           vzq_gran_names[i], i);
		n[i] = levels_inside(h, &s->qs, shown_params(s, i));
	}
	int all = s->qs.qmax - s->qs.qmin + 1;
	if (upto == G_TENSOR)
		VZ_SNPRINTF_TR(t, sizeof t, "levels in this range: %d of %d",
		               "此范围内的量化级：%d / %d", n[0], all);
	else if (upto == G_CHANNEL)
		VZ_SNPRINTF_TR(t, sizeof t,
		               "levels in this range of %d: per tensor %d, per channel %d",
		               "此范围内的量化级（共 %d）：逐张量 %d，逐通道 %d", all, n[0], n[1]);
	else
		VZ_SNPRINTF_TR(
		    t, sizeof t,
		    "levels in this range of %d: per tensor %d, per channel %d, per group %d",
		    "此范围内的量化级（共 %d）：逐张量 %d，逐通道 %d，逐组 %d", all, n[0], n[1],
		    n[2]);
	if (k > 1) VZ_APPEND_TR(t, sizeof t, "; 1 in %d drawn", "；每 %d 条画 1 条", k);
	text_fit(f, 0, s->strips.y + s->strips.h + s->lh * 0.15f, s->plot.x + s->plot.w,
	         VZ_FONT_SMALL, vz_th.text_dim, t);
}

/* Steps 5 and 6: X's values, before SmoothQuant and after (X_j / s_j on the same axis). */
static void draw_hist_x(vz_frame *f, vzq_scene *s, int st)
{
	bool after = st == ST_SQ_AFTER;
	const vzq_hist *h = &s->hist[after ? H_XS : H_X];
	char t[300], a[32], b[32];
	if (after)
		VZ_SNPRINTF_TR(t, sizeof t,
		               "X / s_j (%lld values), X's axis: int8 per tensor, s = %s (was %s)",
		               "X / s_j（%lld 个值，X 的坐标轴）：逐张量 int8，s = %s（原为 %s）",
		               (long long)h->n, vzs_short(a, sizeof a, s->xpar2.s),
		               vzs_short(b, sizeof b, s->xpar.s));
	else
		VZ_SNPRINTF_TR(t, sizeof t,
		               "the activations X (%lld values): the int8 grid per tensor, s = %s",
		               "激活 X（%lld 个值）：逐张量 int8 网格，s = %s", (long long)h->n,
		               vzs_short(a, sizeof a, s->xpar.s));
	text_fit(f, 0, 0, s->hist_t.w, VZ_FONT_SMALL, vz_th.text, t);
	draw_bins(f, s, h, after ? "x after" : "x");
	draw_axis(f, s, h);
	vz_layer(f);
	int k = draw_grid(f, s, h, &s->q8, after ? s->xpar2 : s->xpar, after ? "x after" : "x");
	draw_strip(f, s, h, 0, vz_tr("before", "之前"), &s->q8, s->xpar, !after, "x", 0);
	if (after)
		draw_strip(f, s, h, 1, vz_tr("after", "之后"), &s->q8, s->xpar2, true, "x after",
		           1);
	if (after)
		VZ_SNPRINTF_TR(t, sizeof t, "int8 levels inside this range: %d before, %d after (of 255)",
		               "此范围内的 int8 量化级：之前 %d，之后 %d（共 255）",
		               levels_inside(h, &s->q8, s->xpar), levels_inside(h, &s->q8, s->xpar2));
	else
		VZ_SNPRINTF_TR(t, sizeof t, "int8 levels inside this range: %d of 255",
		               "此范围内的 int8 量化级：%d / 255", levels_inside(h, &s->q8, s->xpar));
	if (k > 1) VZ_APPEND_TR(t, sizeof t, "; 1 in %d drawn", "；每 %d 条画 1 条", k);
	text_fit(f, 0, s->strips.y + s->strips.h + s->lh * 0.15f, s->plot.x + s->plot.w,
	         VZ_FONT_SMALL, vz_th.text_dim, t);
}

/* ---------------------------------------------------------------- the heat maps */

static const char *const map_groups[NMAPS] = {"W",     "tensor",   "channel",
                                              "group", "w before", "w after"};

/* The granularity a map's error is of (-1: W's values). */
static int map_gran(const vzq_scene *s, int m)
{
	return m == M_VALUES ? -1 : m <= M_ERR_G ? m - M_ERR_T : s->sq_for;
}

/* The map m at (x, y), cells cw x ch; outlines the granule of its granularity and, per group,
 * the groups' borders. Returns its height. */
static float draw_map(vz_frame *f, vzq_scene *s, int m, vzs_grid *g, float x, float y, float cw,
                      float ch)
{
	const vz_color *col = map_colors(s, m);
	vz_rect r = vz_r(x, y, cw * (float)s->cols, ch * (float)s->rows);
	if (!col) return r.h;
	vz_cell *c = vzs_grid_draw(f, g, r, (int)s->rows, (int)s->cols, col,
	                           m == M_VALUES ? "weight" : "error", 0);
	c->group = map_groups[m];
	c->tag = m;
	int gr = map_gran(s, m);
	if (gr == G_GROUP && s->ngroups > 1 && (float)s->gsize * cw * vz_zoom(f) >= 4)
		for (int64_t k = 1; k < s->ngroups; k++) {
			float gx = x + (float)(k * s->gsize) * cw;
			vz_line(f, gx, y, gx, y + r.h, 1, vz_fade(VZ_RGB(255, 255, 255), 0.7));
		}
	vz_outline(f, r, 1, vz_th.panel_line);
	if (gr == G_CHANNEL || gr == G_GROUP) {
		vz_rect o = gr == G_CHANNEL
		                ? vz_r(x, y + (float)s->row * ch, r.w, ch)
		                : vz_r(x + (float)(s->group * s->gsize) * cw,
		                       y + (float)s->row * ch, (float)s->gsize * cw, ch);
		vz_outline(f, vz_r(o.x - 1, o.y - 1, o.w + 2, o.h + 2), 2, vz_th.highlight);
	}
	return r.h;
}

/* A colour bar: lo, the scale, hi and what it is. */
static void colour_bar(vz_frame *f, const vzq_scene *s, float x, float y, float w, bool diverging,
                       double hi, const char *what)
{
	char a[32], b[32];
	if (diverging)
		snprintf(a, sizeof a, "%s", vzs_short(b, sizeof b, -hi));
	else
		snprintf(a, sizeof a, "0");
	vzs_short(b, sizeof b, hi);
	float cw = vz_char_width(f, VZ_FONT_SMALL), bw = fminf(w * 0.3f, 160 * f->scale);
	float x0 = x + vz_text_width(f, VZ_FONT_SMALL, a) + cw * 0.5f;
	vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, a);
	for (int i = 0; i < 32; i++) {
		double t = (i + 0.5) / 32;
		vz_color c = diverging ? value_color(2 * t - 1, 1) : vz_viridis(t);
		vz_fill(
		    f,
		    vz_r(x0 + bw * (float)i / 32, y + s->lh * 0.15f, bw / 32 + 0.5f, s->lh * 0.7f),
		    c);
	}
	float x1 = x0 + bw + cw * 0.5f;
	x1 += vz_text_draw(f, x1, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, b) + cw * 1.5f;
	text_fit(f, x1, y, x + w - x1, VZ_FONT_SMALL, vz_th.text_dim, what);
}

/* The three MSE boxes under the maps (steps 1 to 4): the current granularity's lit. */
static void mse_boxes(vz_frame *f, vzq_scene *s, float y, int cur, int upto)
{
	float gap = s->lh * 0.6f, bw = (s->map.w - 2 * gap) / 3, h = s->lh * 1.4f;
	for (int g = 0; g <= upto; g++) {
		vz_rect r = vz_r(s->map.x + (float)g * (bw + gap), y, bw, h);
		vz_color c = g == cur ? vz_th.active : vz_th.idle;
		vz_cell_fill(f, r, c, 1, vz_mix(c, VZ_RGB(0, 0, 0), 0.3));
		char t[120], num[32];
		VZ_SNPRINTF_TR(t, sizeof t, "%s: MSE %s", "%s：均方误差 %s", gran_label(g),
		               vz_number(num, sizeof num, s->mse[g]));
		char fit[120];
		snprintf(fit, sizeof fit, "%s", t);
		vz_text_fit(f, VZ_FONT_SMALL, fit, sizeof fit, bw - s->lh * 0.8f);
		vz_text_draw(f, r.x + s->lh * 0.4f, r.y + (h - s->lh) / 2, VZ_FONT_SMALL,
		             VZ_ALIGN_LEFT, vz_text_on(c), fit);
		vz_cell *cell = vz_cell_add(f, r, "mse");
		cell->group = vzq_gran_names[g];
		cell->index = g;
		cell->value = s->mse[g];
		cell->has_value = true;
		cell->color = c;
		cell->state = g == cur ? "active" : "idle";
	}
}

static void draw_maps(vz_frame *f, vzq_scene *s, int st)
{
	float cw = fminf(s->map.w / (float)s->cols, s->map.h / (float)s->rows);
	char t[300], num[32], sch[40];
	int g = step_gran(s, st);
	float y = s->map.y, bottom;
	scheme_name(&s->qs, sch, sizeof sch);
	if (st == ST_VALUES) {
		VZ_SNPRINTF_TR(t, sizeof t,
		               "W, %lld x %lld: rows = output channels, columns = input channels",
		               "W，%lld x %lld：行 = 输出通道，列 = 输入通道", (long long)s->rows,
		               (long long)s->cols);
		bottom = y + draw_map(f, s, M_VALUES, &s->grid[0], s->map.x, y, cw, cw);
	} else if (st == ST_ERRORS) {
		VZ_SNPRINTF_TR(t, sizeof t, "|w - w'| (%s), one colour scale for the three",
		               "|w − w'|（%s），三者共用一个色标", sch);
		float band = s->map.h / 3, ch = fminf(cw, (band - s->lh * 1.2f) / (float)s->rows);
		for (int k = 0; k < NGRAN; k++) {
			float by = y + (float)k * band;
			char l[160];
			VZ_SNPRINTF_TR(l, sizeof l, "%s: MSE %s", "%s：均方误差 %s", gran_label(k),
			               vz_number(num, sizeof num, s->mse[k]));
			vz_text_draw(f, s->map.x, by, fine_print(), VZ_ALIGN_LEFT,
			             k == s->variant ? vz_th.text : vz_th.text_dim, l);
			draw_map(f, s, M_ERR_T + k, &s->grid[k], s->map.x, by + s->fh * 1.1f, cw,
			         ch);
		}
		bottom = y + 2 * band + s->fh * 1.1f + ch * (float)s->rows;
	} else if (st <= ST_GROUP) {
		VZ_SNPRINTF_TR(t, sizeof t, "|w - w'| per element, %s (%s)",
		               "每个元素的 |w − w'|，%s（%s）", gran_label(g), sch);
		bottom = y + draw_map(f, s, M_ERR_T + g, &s->grid[0], s->map.x, y, cw, cw);
	} else {
		bool after = st == ST_SQ_AFTER;
		if (after)
			VZ_SNPRINTF_TR(t, sizeof t, "after: |w - Q(w s_j) / s_j|, %s, %s",
			               "之后：|w − Q(w s_j) / s_j|，%s，%s", gran_label(s->sq_for),
			               sch);
		else
			VZ_SNPRINTF_TR(t, sizeof t, "W's error |w - w'| before SmoothQuant, %s, %s",
			               "SmoothQuant 之前 W 的误差 |w − w'|，%s，%s",
			               gran_label(s->sq_for), sch);
		bottom = y + draw_map(f, s, after ? M_SQ_AFTER : M_SQ_BEFORE, &s->grid[0], s->map.x,
		                      y, cw, cw);
	}
	text_fit(f, s->map_t.x, 0, s->map_t.w, VZ_FONT_SMALL, vz_th.text, t);
	float by = bottom + s->lh * 0.4f;
	if (st == ST_VALUES) {
		double vmax = 0;
		for (int64_t i = 0; i < s->rows * s->cols; i++) vmax = fmax(vmax, fabs(s->w[i]));
		colour_bar(f, s, s->map.x, by, s->map.w, true, vmax,
		           vz_tr("W's values (blue -, orange +)", "W 的值（蓝 −，橙 +）"));
		return;
	}
	colour_bar(f, s, s->map.x, by, s->map.w, false, st >= ST_SQ_BEFORE ? s->emax_sq : s->emax,
	           st >= ST_SQ_BEFORE ? vz_tr("|w - w'|, before and after on one scale",
	                                      "|w − w'|，前后共用一个色标")
	                              : vz_tr("|w - w'|, one scale for the three granularities",
	                                      "|w − w'|，三种粒度共用一个色标"));
	if (st <= ST_ERRORS) mse_boxes(f, s, by + s->lh * 1.4f, g, st == ST_ERRORS ? G_GROUP : g);
}

/* ---------------------------------------------------------------- SmoothQuant */

/* max|X_j| (or max|W_j|) per input channel as bars: before, and at the last step after (before
 * faded behind it); a channel above 4 times the median's is an outlier (vermillion). */
static void bar_chart(vz_frame *f, vzq_scene *s, vz_rect r, bool x, bool after)
{
	const float *before = x ? s->xmax : s->wmax, *aft = x ? s->xmax2 : s->wmax2;
	double med = x ? s->xmed : s->wmed, top = 0;
	for (int64_t j = 0; j < s->cols; j++) top = fmax(top, fmax(before[j], aft[j]));
	char t[200], num[32];
	if (x)
		VZ_SNPRINTF_TR(t, sizeof t,
		               "activations: max|X_j| per input channel (%lld tokens), 0 .. %s",
		               "激活：每个输入通道的 max|X_j|（%lld 个词元），0 .. %s",
		               (long long)s->tokens, vzs_short(num, sizeof num, top));
	else
		VZ_SNPRINTF_TR(t, sizeof t,
		               "weights: max|W_j| per input channel (%lld rows), 0 .. %s",
		               "权重：每个输入通道的 max|W_j|（%lld 行），0 .. %s",
		               (long long)s->rows, vzs_short(num, sizeof num, top));
	text_fit(f, r.x, r.y, r.w, VZ_FONT_SMALL, vz_th.text, t);
	vz_rect pl = vz_r(r.x, r.y + s->lh * 1.4f, r.w, r.h - s->lh * 2.9f);
	vz_fill(f, pl, VZ_RGB(255, 255, 255));
	vz_outline(f, pl, 1, vz_th.panel_line);
	float bw = pl.w / (float)s->cols, base = pl.y + pl.h;
	for (int64_t j = 0; j < s->cols; j++) {
		vz_rect slot = vz_r(pl.x + (float)j * bw, pl.y, bw, pl.h);
		bool out = before[j] > 4 * med;
		vz_color cb = out ? vz_okabe_ito[VZ_OI_VERMILLION] : vz_th.path_a,
		         ca = after_color();
		float hb = top > 0 ? (float)(before[j] / top) * pl.h : 0,
		      ha = top > 0 ? (float)(aft[j] / top) * pl.h : 0;
		/* at least a pixel wide on screen: narrower bars (a thousand channels) would cover
		 * no pixel */
		float gap = bw >= 4 ? 1 : 0, px = 1 / vz_zoom(f), room = pl.x + pl.w - slot.x;
		vz_fill(f, vz_r(slot.x, base - hb, fminf(room, fmaxf(px, bw - gap)), hb),
		        after ? vz_fade(cb, 0.3) : cb);
		if (after)
			vz_fill(f,
			        vz_r(slot.x + bw * 0.2f, base - ha,
			             fminf(room, fmaxf(px, bw * 0.6f)), ha),
			        ca);
		vz_cell *c = vz_cell_add(f, slot, "bar");
		c->group = x ? "x" : "w";
		c->index = (int32_t)j;
		c->value = after ? aft[j] : before[j];
		c->has_value = true;
		c->color = after ? ca : cb;
		c->state = after ? "after" : out ? "outlier" : "before";
	}
	/* channel numbers (1-based): 1 and every 2^k-th, far enough apart for their labels */
	float cw = vz_char_width(f, VZ_FONT_SMALL), last = -1e9f;
	int64_t every = 1;
	while ((float)every * bw < cw * 5 && every < s->cols) every *= 2;
	for (int64_t k = 1; k <= s->cols; k = k == 1 && every > 1 ? every : k + every) {
		float xc = pl.x + ((float)k - 0.5f) * bw;
		snprintf(num, sizeof num, "%lld", (long long)k);
		/* under its bar, inside the chart */
		float w = vz_text_width(f, VZ_FONT_SMALL, num), lx = fmaxf(pl.x, xc - w / 2);
		if (lx < last + cw || lx + w > pl.x + pl.w) continue;
		vz_text_draw(f, lx, base + s->lh * 0.15f, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
		             vz_th.text_dim, num);
		last = lx + w;
	}
}

/* Wrapped text in a column of width w (lines broken at spaces); returns the y after it. */
static float wrapped(vz_frame *f, float x, float y, float w, vz_font font, vz_color c,
                     const char *t)
{
	int cols = (int)(w / vz_char_width(f, font));
	float lh = vz_text_height(f, font);
	while (*t && cols > 4) {
		size_t skip = 0, n = vz_wrap_line(t, cols, &skip);
		char line[400];
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1),
		         t);
		vz_text_draw(f, x, y, font, VZ_ALIGN_LEFT, c, line);
		y += lh;
		t += n + skip;
		if (!n && !skip) break;
	}
	return y;
}

/* One number of the SmoothQuant table, drawn and registered (kind "sq"). */
static void sq_number(vz_frame *f, vzq_scene *s, float x, float y, const char *group, bool after,
                      double v, bool shown)
{
	char num[32];
	if (!shown) {
		vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "-");
		return;
	}
	snprintf(num, sizeof num, "%.3e", v);
	float w = vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, num);
	vz_cell *c = vz_cell_add(f, vz_r(x, y, w, s->lh), "sq");
	c->group = group;
	c->state = after ? "after" : "before";
	c->value = v;
	c->has_value = true;
	c->color = vz_th.bg;
}

/* The MSE of X, W and Y = X W^T before SmoothQuant and, at the last step, after it. */
static void draw_numbers(vz_frame *f, vzq_scene *s, int st)
{
	vz_rect r = s->nums;
	float cw = vz_char_width(f, VZ_FONT_SMALL), lh = s->lh, y = r.y;
	char t[300];
	VZ_SNPRINTF_TR(
	    t, sizeof t,
	    "SmoothQuant (alpha %.2g): s_j = max|X_j|^a / max|W_j|^(1-a), X_j / s_j, W_j s_j",
	    "SmoothQuant（alpha %.2g）：s_j = max|X_j|^a / max|W_j|^(1-a)，X_j / s_j，W_j s_j",
	    s->alpha);
	y = wrapped(f, r.x, y, r.w, VZ_FONT_SMALL, vz_th.text, t);
	y = wrapped(f, r.x, y, r.w, fine_print(), vz_th.text_dim,
	            vz_tr("mean squared error, computed here (CPU, float32 rounding)",
	                  "均方误差，在此计算（CPU，float32 舍入）")) +
	    lh * 0.3f;
	float c1 = r.x + 16 * cw, c2 = c1 + 11 * cw;
	vz_text_draw(f, c1, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
	             vz_tr("before", "之前"));
	vz_text_draw(f, c2, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
	             vz_tr("after", "之后"));
	y += lh * 1.1f;
	bool now = st >= ST_SQ_BEFORE, after = st == ST_SQ_AFTER;
	const char *groups[3] = {"x", "w", "y"};
	const double *v[3] = {s->x_mse, s->w_mse, s->y_mse};
	for (int i = 0; i < 3; i++) {
		if (i == 0)
			snprintf(t, sizeof t, "X int8/%s", vz_tr("tensor", "张量"));
		else if (i == 1)
			snprintf(t, sizeof t, "W int%d/%s", s->qs.bits, vzq_gran_names[s->sq_for]);
		else
			snprintf(t, sizeof t, "Y = X W^T");
		text_fit(f, r.x, y, 15 * cw, VZ_FONT_SMALL, vz_th.text, t);
		sq_number(f, s, c1, y, groups[i], false, v[i][0], now);
		sq_number(f, s, c2, y, groups[i], true, v[i][1], after);
		y += lh * 1.1f;
	}
	y += lh * 0.3f;
	float x = vzs_legend(f, r.x, y, vz_okabe_ito[VZ_OI_VERMILLION], false,
	                     vz_tr("outlier (> 4x median)", "离群（> 4 倍中位数）"));
	if (x > r.x + r.w * 0.75f) x = r.x, y += lh * 1.2f;
	vzs_legend(f, x, y, after_color(), false, vz_tr("after", "之后"));
	if (s->y_tokens < s->tokens) {
		VZ_SNPRINTF_TR(t, sizeof t, "Y over the first %lld of %lld tokens",
		               "Y 只算前 %lld / %lld 个词元", (long long)s->y_tokens,
		               (long long)s->tokens);
		wrapped(f, r.x, y + lh * 1.3f, r.w, fine_print(), vz_th.text_dim, t);
	}
}

static void quant_draw(void *p, vz_frame *f)
{
	vzq_scene *s = p;
	int st = step_of(f);
	if (st >= ST_SQ_BEFORE)
		draw_hist_x(f, s, st);
	else
		draw_hist_w(f, s, st);
	draw_maps(f, s, st);
	bar_chart(f, s, s->bars_x, true, st == ST_SQ_AFTER);
	bar_chart(f, s, s->bars_w, false, st == ST_SQ_AFTER);
	draw_numbers(f, s, st);
}

/* ---------------------------------------------------------------- text */

static void quant_title(void *p, char *buf, size_t cap)
{
	vzq_scene *s = p;
	char sch[40];
	VZ_SNPRINTF_TR(
	    buf, cap, "quant: W %lld x %lld%s, %s, groups of %lld; X %lld x %lld%s",
	    "量化：W %lld x %lld%s，%s，每组 %lld 个；X %lld x %lld%s", (long long)s->rows,
	    (long long)s->cols, s->demo ? vz_tr(" (a demonstration)", "（演示）") : "",
	    scheme_name(&s->qs, sch, sizeof sch), (long long)s->gsize, (long long)s->tokens,
	    (long long)s->cols, s->x_demo ? vz_tr(" (a demonstration)", "（演示）") : "");
}

static void quant_step_label(void *p, int step, char *buf, size_t cap)
{
	vzq_scene *s = p;
	char gn[64], a[32], b[32], c[32], d[32], e[32];
	int g = step_gran(s, step);
	switch (step) {
	case ST_VALUES:
		snprintf(buf, cap, "%s",
		         vz_tr("W's values: the histogram, and W as a heat map: outlier input "
		               "channels stand out",
		               "W 的值：直方图和热图，离群的输入通道一目了然"));
		break;
	case ST_TENSOR:
	case ST_CHANNEL:
	case ST_GROUP:
		granule_name(s, g, gn, sizeof gn);
		vzs_short(a, sizeof a, shown_params(s, g).s);
		vz_number(b, sizeof b, s->mse[g]);
		if (vz_zh()) /* English needs a plural s: two calls */
			snprintf(buf, cap, "%s：%s的网格，s = %s，共 %lld 个缩放因子；均方误差 %s",
			         gran_label(g), gn, a, (long long)vzq_granules(s, g), b);
		else
			snprintf(buf, cap, "%s: %s's grid, s = %s, %lld scale%s in all; MSE %s",
			         gran_label(g), gn, a, (long long)vzq_granules(s, g),
			         vzq_granules(s, g) > 1 ? "s" : "", b);
		break;
	case ST_ERRORS:
		VZ_SNPRINTF_TR(
		    buf, cap,
		    "the rounding error |w - w'| of the three (MSE %s, %s, %s): finer granules, "
		    "smaller steps",
		    "三种粒度的舍入误差 |w − w'|（均方误差 %s、%s、%s）：粒度越细，步长越小",
		    vz_number(a, sizeof a, s->mse[0]), vz_number(b, sizeof b, s->mse[1]),
		    vz_number(c, sizeof c, s->mse[2]));
		break;
	case ST_SQ_BEFORE: {
		double top = 0;
		for (int64_t j = 0; j < s->cols; j++) top = fmax(top, s->xmax[j]);
		VZ_SNPRINTF_TR(buf, cap,
		               "SmoothQuant, before: X's outlier channels (max|X_j| up to %s) set "
		               "X's int8 scale %s",
		               "SmoothQuant 之前：X 的离群通道（max|X_j| 最大 %s）决定了 X 的 int8 "
		               "缩放因子 %s",
		               vzs_short(a, sizeof a, top), vzs_short(b, sizeof b, s->xpar.s));
		break;
	}
	default:
		VZ_SNPRINTF_TR(
		    buf, cap,
		    "SmoothQuant, after: MSE of X %s -> %s, of W %s -> %s, of X W^T %s -> %s",
		    "SmoothQuant 之后：均方误差 X %s → %s，W %s → %s，X W^T %s → %s",
		    vz_number(a, sizeof a, s->x_mse[0]), vz_number(b, sizeof b, s->x_mse[1]),
		    vz_number(c, sizeof c, s->w_mse[0]), vz_number(gn, sizeof gn, s->w_mse[1]),
		    vz_number(d, sizeof d, s->y_mse[0]), vz_number(e, sizeof e, s->y_mse[1]));
	}
}

static void quant_counters(void *p, vz_panel *pn)
{
	vzq_scene *s = p;
	const char *src = vz_tr("computed here (CPU), float32", "在此计算（CPU），float32");
	for (int g = 0; g < NGRAN; g++) {
		int col = vz_panel_column(pn, gran_label(g), src);
		vz_panel_set(pn, col, "mse", s->mse[g]);
		vz_panel_set(pn, col, "max_abs_error", s->maxerr[g]);
		vz_panel_set(pn, col, "scales", (double)vzq_granules(s, g));
	}
	for (int k = 0; k < 2; k++) {
		int col = vz_panel_column(pn,
		                          k ? vz_tr("after SmoothQuant", "SmoothQuant 之后")
		                            : vz_tr("before SmoothQuant", "SmoothQuant 之前"),
		                          src);
		vz_panel_set(pn, col, "x_mse", s->x_mse[k]);
		vz_panel_set(pn, col, "w_mse", s->w_mse[k]);
		vz_panel_set(pn, col, "y_mse", s->y_mse[k]);
	}
	char sch[40];
	VZ_NOTE_TR(pn,
	           "mse: mean (w - w')^2, %s; x_mse: X int8 per tensor; w_mse: W %s (Tab: the "
	           "granularity); y_mse: X W^T against float64; after: Q(X/s) s and Q(W s)/s in "
	           "the original units",
	           "mse：(w − w')^2 的均值，%s；x_mse：X 逐张量 int8；w_mse：W %s（Tab 切换粒度）；"
	           "y_mse：X W^T 与 float64 相比；之后：Q(X/s) s 与 Q(W s)/s，换回原单位",
	           scheme_name(&s->qs, sch, sizeof sch), gran_label(s->sq_for));
}

/* ---------------------------------------------------------------- hover */

/* An element of a heat map: its value, code, level and error at the map's granularity. */
static void describe_element(vzq_scene *s, vz_cell *c, char *buf, size_t cap)
{
	int m = c->tag, g = map_gran(s, m);
	int64_t r = c->row, j = c->col, i = r * s->cols + j;
	if (r < 0 || r >= s->rows || j < 0 || j >= s->cols) return;
	c->index = (int32_t)i;
	c->rows = c->cols = -1;
	float w = s->w[i];
	VZ_SNPRINTF_TR(buf, cap, "W[{%lld, %lld}] = %.6g (output channel %lld, input channel %lld)",
	               "W[{%lld, %lld}] = %.6g（输出通道 %lld，输入通道 %lld）", (long long)r + 1,
	               (long long)j + 1, w, (long long)r + 1, (long long)j + 1);
	if (g < 0) {
		c->value = w, c->has_value = true, c->state = "value";
		return;
	}
	bool after = m == M_SQ_AFTER;
	vzq_params pr =
	    after ? s->wspar[vzq_granule_of(s, g, r, j)] : s->par[g][vzq_granule_of(s, g, r, j)];
	int code = 0;
	float in = after ? w * s->sj[j] : w, dq = vzq_fake_quant(&s->qs, pr, in, &code),
	      back = after ? dq / s->sj[j] : dq;
	c->value = fabs((double)(w - back));
	c->has_value = true;
	c->state = "error";
	if (after)
		VZ_APPEND_TR(buf, cap, "\nafter SmoothQuant: w s_j = %.6g (s_j = %.4g)",
		             "\nSmoothQuant 之后：w s_j = %.6g（s_j = %.4g）", in, s->sj[j]);
	VZ_APPEND_TR(
	    buf, cap,
	    "\n%s: s = %.6g, z = %d; q = clamp(round(%.4g / s) + z) = %d, w' = s (q - z) = %.6g",
	    "\n%s：s = %.6g，z = %d；q = clamp(round(%.4g / s) + z) = %d，w' = s (q − z) = %.6g",
	    gran_label(g), pr.s, pr.z, in, code, dq);
	if (after) VZ_APPEND_TR(buf, cap, "; / s_j = %.6g", "；/ s_j = %.6g", back);
	VZ_APPEND_TR(buf, cap, "\n|w - w'| = %.6g", "\n|w − w'| = %.6g", c->value);
}

/* The grid of the granule a level or strip belongs to. */
static bool grid_of(const vzq_scene *s, const char *group, const vzq_scheme **q, vzq_params *p)
{
	for (int g = 0; g < NGRAN; g++)
		if (strcmp(group, vzq_gran_names[g]) == 0)
			return *q = &s->qs, *p = shown_params(s, g), true;
	bool after = strcmp(group, "x after") == 0;
	*q = &s->q8, *p = after ? s->xpar2 : s->xpar;
	return after || strcmp(group, "x") == 0;
}

static void quant_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	vzq_scene *s = p;
	const vzq_scheme *q;
	vzq_params pr;
	char gn[64];
	if (c->rows > 0 && c->cols > 0)
		describe_element(s, c, buf, cap);
	else if (strcmp(c->kind, "level") == 0 && grid_of(s, c->group, &q, &pr))
		VZ_SNPRINTF_TR(buf, cap, "level q = %d: s (q - z) = %.6g x (%d - %d) = %.6g",
		               "量化级 q = %d：s (q − z) = %.6g × (%d − %d) = %.6g",
		               c->index + q->qmin, pr.s, c->index + q->qmin, pr.z, c->value);
	else if (strcmp(c->kind, "levels") == 0 && grid_of(s, c->group, &q, &pr)) {
		if (q == &s->qs) /* a strip of W's: the granularity and its granule */
			VZ_SNPRINTF_TR(gn, sizeof gn, "%s, ", "%s，", gran_label(c->index));
		else
			snprintf(gn, sizeof gn, "%s", strcmp(c->group, "x") ? "int8, X / s_j" : "int8, X");
		size_t n = strlen(gn);
		if (q == &s->qs) granule_name(s, c->index, gn + n, sizeof gn - n);
		VZ_SNPRINTF_TR(buf, cap,
		               "%s: s = %.6g, z = %d, %d levels from %.4g to %.4g\n"
		               "%d of them inside the histogram's range",
		               "%s：s = %.6g，z = %d，%d 个量化级，从 %.4g 到 %.4g\n"
		               "其中 %d 个在直方图的范围内",
		               gn, pr.s, pr.z, q->qmax - q->qmin + 1, vzq_level(pr, q->qmin),
		               vzq_level(pr, q->qmax), (int)c->value);
	} else if (strcmp(c->kind, "bin") == 0)
		VZ_SNPRINTF_TR(buf, cap, "%d values in this bin (%s)", "此区间有 %d 个值（%s）",
		               (int)c->value, c->group);
	else if (strcmp(c->kind, "mse") == 0)
		VZ_SNPRINTF_TR(buf, cap,
		               "%s: MSE %.6g = mean (w - w')^2 over %lld elements, computed here "
		               "(CPU: float32 rounding, float64 sum)\nlargest |w - w'| %.6g; %lld scales",
		               "%s：均方误差 %.6g = %lld 个元素上 (w − w')^2 的均值，在此计算"
		               "（CPU：float32 舍入，float64 求和）\n最大 |w − w'| %.6g；%lld 个缩放因子",
		               gran_label(c->index), c->value, (long long)(s->rows * s->cols),
		               s->maxerr[c->index], (long long)vzq_granules(s, c->index));
	else if (strcmp(c->kind, "bar") == 0) {
		int64_t j = c->index;
		VZ_SNPRINTF_TR(buf, cap,
		               "input channel %lld: max|X_j| %.4g -> %.4g, max|W_j| %.4g -> "
		               "%.4g\ns_j = %.4g (alpha %.2g)",
		               "输入通道 %lld：max|X_j| %.4g → %.4g，max|W_j| %.4g → %.4g\ns_j = "
		               "%.4g（alpha %.2g）",
		               (long long)j + 1, s->xmax[j], s->xmax2[j], s->wmax[j], s->wmax2[j],
		               s->sj[j], s->alpha);
	} else if (strcmp(c->kind, "sq") == 0) {
		bool after = strcmp(c->state, "after") == 0;
		const char *what = *c->group == 'x' ? vz_tr("X (int8 per tensor)", "X（逐张量 int8）")
		                   : *c->group == 'w' ? "W"
		                                      : "Y = X W^T";
		if (vz_zh()) /* the sentence's order differs: two calls */
			snprintf(buf, cap, "SmoothQuant %s，%s 的均方误差：%.6g（在此计算，CPU）",
			         after ? "之后" : "之前", what, c->value);
		else
			snprintf(buf, cap, "MSE of %s %s SmoothQuant: %.6g (computed here, CPU)", what,
			         after ? "after" : "before", c->value);
	}
}

static const vz_option quant_options[] = {
	{"bits", VZ_OPT_INT, 2, 8, NULL, "4", "bits per code: 2^b levels (symmetric: 2^b - 1)"},
	{"granularity", VZ_OPT_CHOICE, 0, 0, "tensor channel group", "channel",
	 "one scale per tensor, per row (output channel), per group; the variant"},
	{"group_size", VZ_OPT_INT, 1, 65536, NULL, "32",
	 "consecutive columns of a row that share a scale; must divide the columns"},
	{"symmetric", VZ_OPT_CHOICE, 0, 0, "1 0 true false", "1",
	 "1: codes -(2^(b-1)-1)..2^(b-1)-1, z = 0; 0: codes 0..2^b-1 with a zero point"},
	{"alpha", VZ_OPT_NUMBER, 0, 1, NULL, "0.5", "SmoothQuant's migration strength"},
	{"row", VZ_OPT_INT, 0, 1e9, NULL, "0 (the finest)", "the row whose grid is shown (1-based)"},
	{"group", VZ_OPT_INT, 0, 1e9, NULL, "0 (the finest)",
	 "the group of that row whose grid is shown (1-based)"},
	{"rows", VZ_OPT_INT, 1, 2048, NULL, "16", "the demonstration W's rows (output channels)"},
	{"cols", VZ_OPT_INT, 1, 2048, NULL, "64", "the demonstration W's columns (input channels)"},
	{"tokens", VZ_OPT_INT, 1, 2048, NULL, "32", "the demonstration X's rows"},
	{"outlier", VZ_OPT_NUMBER, 1, 1000, NULL, "20",
	 "the demonstration's three outlier input channels, times this"},
	{"seed", VZ_OPT_INT, 0, 4294967295.0, NULL, "0", "the demonstration's random numbers"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_quant = {
	.name = "quant",
	.summary = "a weight matrix quantized per tensor, per channel, per group: its histogram with "
	           "the grid, the rounding error per element, outliers and SmoothQuant",
	.patterns = "",
	.options = quant_options,
	.create = vzq_create,
	.destroy = vzq_destroy,
	.steps = quant_steps,
	.variants = quant_variants,
	.variant_name = quant_variant_name,
	.set_variant = quant_set_variant,
	.initial_variant = quant_initial_variant,
	.layout = quant_layout,
	.draw = quant_draw,
	.title = quant_title,
	.step_label = quant_step_label,
	.counters = quant_counters,
	.describe = quant_describe,
};
