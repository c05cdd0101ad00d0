/*
 * curves.c — live training curves (TensorFlow Playground's, Torch7's optim.Logger with gnuplot):
 * one chart per quantity (loss, accuracy, lr, ...), a line per series in it (train, test),
 * the raw points faded under an exponentially smoothed line, a linear or log y axis (Tab), a
 * cursor with the values at a step (the steps replay the run; a live run stays at its newest
 * point), NaN and Inf drawn as gaps and counted, and the throughput in steps per second.
 * Not every curve is a run: the x axis is labelled with what the data call x (a CSV column's
 * header, viz.plot's x option; "x" for points no step counter gives) and a throughput is given
 * only where x counts steps or epochs (and only such series are smoothed: smoothing a curve y(x)
 * would shift it).
 *
 * The data are the live series (live.c), fed by viz.plot and by a followed CSV log; the scene
 * reads them again whenever they changed (update). Series with more points than the chart has
 * pixel columns are drawn as one min-max bar and one smoothed point per column, so 10,000 points
 * cost what 1,000 do. Smoothing is TensorBoard's: s_i = a s_{i-1} + (1 - a) y_i, debiased by
 * 1 - a^i, over the finite points; `[` and `]` change a.
 * Read next: live.c, chrome.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAXCHARTS 6

typedef struct chart {
	char name[32];
	char xlabel[64];  /* what x is in its series: "step", "lr", "step, x" */
	int series[16], nseries;
	vz_rect r, plot;
	double lo, hi;    /* the y axis (log10 values when log) */
} chart;

typedef struct curves_scene {
	bool log, from_file;
	double smoothing;
	uint64_t seen;    /* the live data version drawn */
	double *xs;       /* the distinct steps, sorted */
	int64_t nx, cap_x;
	chart charts[MAXCHARTS];
	int ncharts;
	int undrawn;      /* series past MAXCHARTS charts or 16 in a chart: said on screen */
	double *smooth;   /* scratch */
	int64_t cap_smooth;
	double x0, x1;
	float lh;
	int cursor_col;
	char fname[32];
	char xname[24];   /* what x is in every series, or "x" when they differ */
} curves_scene;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Whether list ("a, b") holds the word w. */
static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ',')) return true;
	return false;
}

/* Charts from the series' chart names (first appearance order) and the sorted distinct steps. */
static void gather(curves_scene *s)
{
	s->ncharts = 0;
	s->undrawn = 0;
	snprintf(s->xname, sizeof s->xname, "step");
	int64_t total = 0;
	for (int i = 0; i < vz_live_series_count(); i++) {
		const vz_series *se = vz_live_series(i);
		total += se->n;
		int c = 0;
		while (c < s->ncharts && strcmp(s->charts[c].name, se->chart) != 0) c++;
		if (c == s->ncharts) {
			if (c == MAXCHARTS) {
				s->undrawn++;
				continue;
			}
			memset(&s->charts[c], 0, sizeof s->charts[c]);
			snprintf(s->charts[c].name, sizeof s->charts[c].name, "%s", se->chart);
			s->ncharts++;
		}
		if (s->charts[c].nseries < 16) s->charts[c].series[s->charts[c].nseries++] = i;
		else s->undrawn++;
		s->from_file |= se->from_file;
		/* the axis label: the x names of the chart's series, each once */
		chart *k = &s->charts[c];
		const char *xn = vz_series_xname(se);
		if (!k->xlabel[0]) snprintf(k->xlabel, sizeof k->xlabel, "%s", xn);
		else if (!has_word(k->xlabel, xn)) vz_append(k->xlabel, sizeof k->xlabel, ", %s", xn);
		snprintf(s->xname, sizeof s->xname, "%s", i == 0 || strcmp(s->xname, xn) == 0 ? xn : "x");
	}
	if (total > s->cap_x) {
		double *p = vz_realloc(s->xs, (size_t)total * sizeof *p);
		if (!p) return;
		s->xs = p;
		s->cap_x = total;
	}
	int64_t n = 0;
	for (int i = 0; i < vz_live_series_count(); i++) {
		const vz_series *se = vz_live_series(i);
		if (se->n <= 0) continue; /* a series emptied by viz.clear: no points, maybe no arrays */
		memcpy(s->xs + n, se->x, (size_t)se->n * sizeof *se->x);
		n += se->n;
	}
	if (n > 0) qsort(s->xs, (size_t)n, sizeof *s->xs, cmp_double);
	int64_t u = 0;
	for (int64_t i = 0; i < n; i++)
		if (u == 0 || s->xs[i] != s->xs[u - 1]) s->xs[u++] = s->xs[i];
	s->nx = u;
	s->x0 = u ? s->xs[0] : 0;
	s->x1 = u ? s->xs[u - 1] : 1;
	if (s->x1 <= s->x0) s->x1 = s->x0 + 1;
}

static bool curves_update(void *p)
{
	curves_scene *s = p;
	if (s->seen == vz_live_version()) return false;
	s->seen = vz_live_version();
	gather(s);
	return true;
}

static void curves_destroy(void *p)
{
	curves_scene *s = p;
	if (!s) return;
	vz_free(s->xs);
	vz_free(s->smooth);
	vz_free(s);
}

static void *curves_create(const vz_build *b)
{
	if (b->nruns > 0) {
		lm_set_error(LM_ERR_ARG, "%s: the curves scene draws viz.plot and viz.follow data, not kernel results (a %s "
		             "result)", b->fname, b->runs[0].pattern);
		return NULL;
	}
	curves_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->smoothing = vz_opt_number(b->opts, "smoothing", 0.6);
	s->log = strcmp(vz_opt_string(b->opts, "scale", "linear"), "log") == 0;
	if (vz_opt_given(b->opts, "csv") && vz_live_follow(vz_opt_string(b->opts, "csv", ""), b->fname) != LM_OK) {
		vz_free(s);
		return NULL;
	}
	s->seen = vz_live_version() - 1; /* gather on the first update */
	curves_update(s);
	return s;
}

static int curves_steps(void *p)
{
	curves_scene *s = p;
	return s->nx > 1 ? (int)(s->nx > 1000000 ? 1000000 : s->nx) : 1;
}

static int curves_variants(void *p) { (void)p; return 2; }
static const char *curves_variant_name(void *p, int v) { (void)p; return v ? "log" : "linear"; }
static void curves_set_variant(void *p, int v) { ((curves_scene *)p)->log = v == 1; }
static int curves_initial_variant(void *p) { return ((curves_scene *)p)->log; }

static bool curves_key(void *p, const char *k)
{
	curves_scene *s = p;
	if (strcmp(k, "[") == 0) s->smoothing = fmax(0, s->smoothing - 0.1);
	else if (strcmp(k, "]") == 0) s->smoothing = fmin(0.99, s->smoothing + 0.1);
	else return false;
	if (s->smoothing < 1e-9) s->smoothing = 0;
	return true;
}

static void curves_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	curves_scene *s = p;
	const vz_frame *f = c->metrics;
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	int n = s->ncharts > 0 ? s->ncharts : 1, cols = n <= 2 ? n : n <= 4 ? 2 : 3, rows = (n + cols - 1) / cols;
	float top = s->lh * 1.6f, gap = s->lh * 1.5f;
	float cw = (c->w - gap * (float)(cols - 1)) / (float)cols, ch = (c->h - top - gap * (float)(rows - 1)) / (float)rows;
	float left = 9 * vz_char_width(f, VZ_FONT_SMALL);
	for (int i = 0; i < s->ncharts; i++) {
		chart *k = &s->charts[i];
		k->r = vz_r((float)(i % cols) * (cw + gap), top + (float)(i / cols) * (ch + gap), cw, ch);
		k->plot = vz_r(k->r.x + left, k->r.y + s->lh * 3.3f, k->r.w - left - s->lh, k->r.h - s->lh * 6.0f);
	}
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing */

static double yval(const curves_scene *s, double v) { return s->log ? (v > 0 ? log10(v) : NAN) : v; }

/* A series' colour: one per label (train, test, ...) in every chart, in the order they appeared. */
static vz_color series_color(int i)
{
	const vz_series *se = vz_live_series(i);
	int k = 0;
	for (int j = 0; j < i; j++) {
		const vz_series *o = vz_live_series(j);
		bool seen = false;
		for (int q = 0; q < j && !seen; q++) seen = strcmp(vz_live_series(q)->label, o->label) == 0;
		if (!seen && strcmp(o->label, se->label) != 0) k++;
		if (strcmp(o->label, se->label) == 0) return series_color(j);
	}
	return vz_category(k);
}

/* Fewer points than this are not smoothed (a lagging line over a handful of evaluations misleads). */
#define SMOOTH_MIN 20

/* The smoothed values of a series up to n points (NaN where the point is not finite). */
static const double *smoothed(curves_scene *s, const vz_series *se, int64_t n)
{
	if (n > s->cap_smooth) {
		double *q = vz_realloc(s->smooth, (size_t)n * sizeof *q);
		if (!q) return NULL;
		s->smooth = q;
		s->cap_smooth = n;
	}
	double acc = 0, a = s->smoothing, w = 0;
	for (int64_t i = 0; i < n; i++) {
		double y = se->y[i];
		if (!isfinite(y)) {
			s->smooth[i] = NAN;
			continue;
		}
		acc = a * acc + (1 - a) * y;
		w = a * w + (1 - a);
		s->smooth[i] = acc / w;
	}
	return s->smooth;
}

/* Points of se with x <= the cursor's step. */
static int64_t upto(const vz_series *se, double xmax)
{
	int64_t n = 0;
	while (n < se->n && se->x[n] <= xmax) n++;
	return n;
}

/* A 1-2-5 step for about `want` ticks over [lo, hi]. */
static double nice_step(double lo, double hi, int want)
{
	double raw = (hi - lo) / want, m = pow(10, floor(log10(raw > 0 ? raw : 1)));
	double r = raw / m;
	return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * m;
}

static void axis_range(curves_scene *s, chart *k, double xmax)
{
	double lo = INFINITY, hi = -INFINITY;
	for (int j = 0; j < k->nseries; j++) {
		const vz_series *se = vz_live_series(k->series[j]);
		int64_t n = upto(se, xmax);
		for (int64_t i = 0; i < n; i++) {
			double v = yval(s, se->y[i]);
			if (!isfinite(v)) continue;
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	if (!isfinite(lo)) lo = 0, hi = 1;
	if (hi - lo < 1e-12) { /* a constant: a band around it */
		double d = fabs(lo) > 0 ? fabs(lo) * 0.25 : 0.5;
		lo -= d, hi += d;
	}
	if (s->log) {
		lo = floor(lo);
		hi = ceil(hi);
		if (hi <= lo) hi = lo + 1;
	} else {
		double st = nice_step(lo, hi, 5);
		lo = floor(lo / st) * st;
		hi = ceil(hi / st) * st;
	}
	k->lo = lo;
	k->hi = hi;
}

static float px(const curves_scene *s, const chart *k, double x)
{
	return k->plot.x + (float)((x - s->x0) / (s->x1 - s->x0)) * k->plot.w;
}

static float py(const chart *k, double v) { return k->plot.y + k->plot.h - (float)((v - k->lo) / (k->hi - k->lo)) * k->plot.h; }

/* What x is, as the labels say it: the run's own counters in the labels' language, the names the
 * data gave (a CSV header, x=) as they are. */
static const char *x_word(const char *xname)
{
	if (!vz_zh()) return xname;
	return strcmp(xname, "step") == 0 ? "步数" : strcmp(xname, "epoch") == 0 ? "轮次" : xname;
}

static void draw_axes(vz_frame *f, const curves_scene *s, const chart *k)
{
	vz_color dim = vz_th.text_dim;
	vz_fill(f, k->plot, VZ_RGB(255, 255, 255));
	vz_outline(f, k->plot, 1, vz_th.panel_line);
	double st = s->log ? 1 : nice_step(k->lo, k->hi, 5);
	for (double v = k->lo; v <= k->hi + st * 1e-6; v += st) {
		float y = py(k, v);
		vz_line(f, k->plot.x, y, k->plot.x + k->plot.w, y, 1, vz_th.grid);
		char t[32];
		if (s->log) snprintf(t, sizeof t, "1e%+.0f", v);
		else vzs_short(t, sizeof t, fabs(v) < st * 1e-6 ? 0 : v);
		vz_text_draw(f, k->plot.x - 4, y - s->lh * 0.5f, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, dim, t);
	}
	double xs = nice_step(s->x0, s->x1, 6);
	for (double x = ceil(s->x0 / xs) * xs; x <= s->x1 + xs * 1e-6; x += xs) {
		float X = px(s, k, x);
		vz_line(f, X, k->plot.y + k->plot.h, X, k->plot.y + k->plot.h + 4, 1, dim);
		char t[32];
		vz_text_draw(f, X, k->plot.y + k->plot.h + 5, VZ_FONT_SMALL, VZ_ALIGN_CENTER, dim, vzs_short(t, sizeof t, x));
	}
	/* the axis says what x is: a run's steps, or what the data named it (a CSV header, x=) */
	float lx = k->plot.x + k->plot.w, ly = k->plot.y + k->plot.h + 5 + s->lh;
	const char *xl = x_word(k->xlabel);
	vz_text_draw(f, lx, ly, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, dim, xl);
	float lw = vz_text_width(f, VZ_FONT_SMALL, xl);
	vz_cell *c = vz_cell_add(f, vz_r(lx - lw, ly, lw, s->lh), "xaxis");
	c->group = k->xlabel;
	c->color = dim;
	c->index = (int32_t)(k - s->charts); /* which chart, 0-based */
}

/* The raw points, faded, and the smoothed line; gaps at non-finite values (ticks on the axis). */
static void draw_series(vz_frame *f, curves_scene *s, const chart *k, int j, double xmax)
{
	const vz_series *se = vz_live_series(k->series[j]);
	vz_color c = series_color(k->series[j]);
	int64_t n = upto(se, xmax);
	/* the smoothing this series gets: a run's noisy steps, not a curve y(x), which it would shift */
	double a = se->n >= SMOOTH_MIN && vz_series_counts_progress(se) ? s->smoothing : 0;
	const double *sm = a > 0 ? smoothed(s, se, n) : NULL;
	bool dense = (float)n > k->plot.w * vz_zoom(f) / 2;
	float prev_x = NAN, prev_y = NAN, sprev_x = NAN, sprev_y = NAN;
	int last_col = -1;
	double cmin = INFINITY, cmax = -INFINITY;
	for (int64_t i = 0; i <= n; i++) {
		bool end = i == n;
		double v = end ? NAN : yval(s, se->y[i]);
		float X = end ? NAN : px(s, k, se->x[i]);
		int col = end ? -2 : (int)floorf((X - k->plot.x) * vz_zoom(f));
		if (dense && col != last_col && last_col >= 0 && isfinite(cmin)) { /* the column's min-max bar */
			float cx = k->plot.x + ((float)last_col + 0.5f) / vz_zoom(f);
			vz_line(f, cx, py(k, cmin), cx, py(k, cmax) - 0.5f, 1, vz_fade(c, 0.35));
			vz_cell *cell = vz_cell_add(f, vz_r(cx - 0.5f / vz_zoom(f), py(k, cmax) - 1, 1 / vz_zoom(f), py(k, cmin) - py(k, cmax) + 2), "points");
			cell->group = se->name;
			cell->state = "raw";
			cell->color = c;
			cell->index = (int32_t)(i - 1);
			cell->value = se->y[i - 1];
			cell->has_value = true;
			cmin = INFINITY, cmax = -INFINITY;
		}
		if (end) break;
		if (!isfinite(se->y[i]) && !s->log) { /* a gap, marked on the x axis */
			vz_line(f, X, k->plot.y + k->plot.h - 6, X, k->plot.y + k->plot.h, 2, vz_th.highlight);
			prev_x = prev_y = sprev_x = sprev_y = NAN;
			continue;
		}
		if (!isfinite(v)) { /* log axis: values <= 0 */
			prev_x = prev_y = NAN;
			continue;
		}
		float Y = py(k, v);
		if (dense) {
			cmin = fmin(cmin, v), cmax = fmax(cmax, v);
			last_col = col;
		} else {
			if (isfinite(prev_x)) vz_line(f, prev_x, prev_y, X, Y, 1, vz_fade(c, a > 0 ? 0.35 : 1));
			vz_disc(f, X, Y, 2.2f / vz_zoom(f), vz_fade(c, a > 0 ? 0.5 : 1));
			float r = 2.2f / vz_zoom(f); /* the dot: its centre pixel has the series' colour */
			vz_cell *cell = vz_cell_add(f, vz_r(X - r, Y - r, 2 * r, 2 * r), "point");
			cell->group = se->name;
			cell->state = "raw";
			cell->color = c;
			cell->index = (int32_t)i;
			cell->value = se->y[i];
			cell->has_value = true;
			if (se->x[i] == floor(se->x[i]) && fabs(se->x[i]) < 2e9) cell->step = (int32_t)se->x[i];
		}
		prev_x = X, prev_y = Y;
		double sv = sm ? yval(s, sm[i]) : NAN;
		if (isfinite(sv)) {
			float SY = py(k, sv);
			if (isfinite(sprev_x) && (!dense || X - sprev_x >= 1 / vz_zoom(f) || i == n - 1)) {
				vz_line(f, sprev_x, sprev_y, X, SY, 2, c);
				sprev_x = X, sprev_y = SY;
			} else if (!isfinite(sprev_x)) {
				sprev_x = X, sprev_y = SY;
			}
		}
	}
}

/* steps (or epochs) per second over the series' last points; NaN when x counts neither (a
 * loss against the learning rate has no rate) or the seconds are missing */
static double throughput(const vz_series *se, int64_t n)
{
	if (!vz_series_counts_progress(se)) return NAN;
	int64_t a = n > 50 ? n - 50 : 0, b = n - 1;
	while (a < b && !isfinite(se->t[a])) a++;
	if (b <= a || !isfinite(se->t[b]) || se->t[b] <= se->t[a]) return NAN;
	return (se->x[b] - se->x[a]) / (se->t[b] - se->t[a]);
}

static void draw_chart(vz_frame *f, curves_scene *s, chart *k, double xmax)
{
	axis_range(s, k, xmax);
	draw_axes(f, s, k);
	vz_textf(f, k->r.x, k->r.y, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "%s", k->name);
	vz_cell *pc = vz_cell_add(f, k->plot, "plot");
	pc->group = k->name;
	pc->state = s->log ? "log" : "linear";
	pc->color = VZ_RGB(255, 255, 255);
	pc->tag = (int32_t)(k - s->charts);
	int64_t gaps = 0;
	for (int j = 0; j < k->nseries; j++) gaps += vz_live_series(k->series[j])->nonfinite;
	pc->value = (double)gaps; /* NaN and Inf values of its series: gaps */
	pc->has_value = true;
	/* the legend: one line across the chart, as many entries as fit, then "+N more" (hover a
	 * curve's points for the others) */
	float lx = k->r.x, ly = k->r.y + s->lh * 1.25f, h = vz_text_height(f, VZ_FONT_SMALL);
	char more[48];
	for (int j = 0; j < k->nseries; j++) {
		const vz_series *se = vz_live_series(k->series[j]);
		int64_t n = upto(se, xmax);
		char t[160];
		double last = NAN;
		for (int64_t i = n - 1; i >= 0 && isnan(last); i--) last = isfinite(se->y[i]) ? se->y[i] : NAN;
		snprintf(t, sizeof t, "%s %.4g", se->label, last);
		if (se->nonfinite) VZ_APPEND_TR(t, sizeof t, " (%lld NaN/Inf: gaps)", "（%lld 个 NaN/Inf：断开）", (long long)se->nonfinite);
		VZ_SNPRINTF_TR(more, sizeof more, "+%d more", "另有 %d 条", k->nseries - j);
		float need = h * 2.45f + vz_text_width(f, VZ_FONT_SMALL, t); /* as vzs_legend advances */
		float room = k->r.x + k->r.w - lx - (j + 1 < k->nseries ? vz_text_width(f, VZ_FONT_SMALL, more) + h : 0);
		if (need > room) {
			vz_text_draw(f, lx, ly, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, more);
			break;
		}
		lx = vzs_legend(f, lx, ly, series_color(k->series[j]), false, t);
	}
	vz_clip(f, vz_r(vz_sx(f, k->plot.x), vz_sy(f, k->plot.y), k->plot.w * vz_zoom(f), k->plot.h * vz_zoom(f)));
	for (int j = 0; j < k->nseries; j++) draw_series(f, s, k, j, xmax);
	vz_clip(f, f->area);
	vz_dashed(f, px(s, k, xmax), k->plot.y, px(s, k, xmax), k->plot.y + k->plot.h, 1, 4, vz_th.highlight);
}

static double cursor_x(const curves_scene *s, double t)
{
	int64_t k = (int64_t)floor(t + 1e-9);
	return s->nx == 0 ? 0 : k >= s->nx ? s->xs[s->nx - 1] : k < 0 ? s->xs[0] : s->xs[k];
}

static void curves_draw(void *p, vz_frame *f)
{
	curves_scene *s = p;
	float x = 0;
	char t[240], fl[400];
	VZ_SNPRINTF_TR(t, sizeof t, "faded: every point; solid: smoothed (%.2g; [ and ] change it; series of fewer than %d "
	               "points or of an x other than steps: not)", "浅色：每个数据点；实线：平滑后（%.2g；按 [ 和 ] 调整；"
	               "少于 %d 个点或 x 不是步数的序列不平滑）", s->smoothing, SMOOTH_MIN);
	x = vzs_legend(f, x, 0, vz_th.text_dim, false, t);
	x = vzs_legend(f, x, 0, vz_th.highlight, false, vz_tr("NaN/Inf (a gap)", "NaN/Inf（断开）"));
	const char *follow = vz_live_follow_label(fl, sizeof fl);
	if (follow) vz_text_draw(f, x, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, follow);
	if (s->ncharts == 0) {
		vz_text_draw(f, 0, s->lh * 3, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text_dim,
		             follow ? follow : vz_tr("no data yet: viz.plot('train/loss', step, value) or viz.follow('run.csv')",
		                                     "还没有数据：viz.plot('train/loss', step, value) 或 viz.follow('run.csv')"));
		return;
	}
	double xmax = cursor_x(s, f->t);
	for (int i = 0; i < s->ncharts; i++) draw_chart(f, s, &s->charts[i], xmax);
}

/* ---------------------------------------------------------------- text */

static void curves_title(void *p, char *buf, size_t cap)
{
	curves_scene *s = p;
	const vz_series *fast = NULL;
	double best = NAN;
	for (int i = 0; i < vz_live_series_count(); i++) {
		const vz_series *se = vz_live_series(i);
		double tp = throughput(se, se->n);
		if (isfinite(tp) && (!fast || se->n > fast->n)) fast = se, best = tp;
	}
	if (vz_zh()) {
		snprintf(buf, cap, "训练曲线：%d 条曲线，%d 张图", vz_live_series_count(), s->ncharts);
		if (s->undrawn) vz_append(buf, cap, "（%d 条未画出）", s->undrawn);
		if (fast)
			vz_append(buf, cap, "，每秒 %.3g %s（%s，%s）", best,
			          strcmp(vz_series_xname(fast), "epoch") == 0 ? "轮" : "步", fast->name,
			          fast->from_file ? "日志的 seconds 列" : "viz.plot 时的挂钟时间");
		return;
	}
	snprintf(buf, cap, "curves: %d series in %d chart%s", vz_live_series_count(), s->ncharts, s->ncharts == 1 ? "" : "s");
	if (s->undrawn) vz_append(buf, cap, " (%d not drawn)", s->undrawn);
	if (fast)
		vz_append(buf, cap, ", %.3g %ss/s (%s, %s)", best, vz_series_xname(fast), fast->name,
		          fast->from_file ? "the log's seconds column" : "wall clock at viz.plot");
}

static void curves_step_label(void *p, int step, char *buf, size_t cap)
{
	curves_scene *s = p;
	if (s->nx == 0) {
		snprintf(buf, cap, "%s", vz_tr("waiting for data", "等待数据"));
		return;
	}
	double x = cursor_x(s, step);
	char v[32];
	if (vz_zh() && strcmp(s->xname, "step") == 0) snprintf(buf, cap, "第 %s 步：", vzs_short(v, sizeof v, x));
	else if (vz_zh() && strcmp(s->xname, "epoch") == 0) snprintf(buf, cap, "第 %s 轮：", vzs_short(v, sizeof v, x));
	else snprintf(buf, cap, "%s %s:", s->xname, vzs_short(v, sizeof v, x));
	for (int i = 0; i < vz_live_series_count(); i++) {
		const vz_series *se = vz_live_series(i);
		int64_t n = upto(se, x);
		if (n == 0 || se->x[n - 1] != x) continue;
		vz_append(buf, cap, " %s %.4g", se->name, se->y[n - 1]);
	}
}

static void curves_counters(void *p, vz_panel *pn)
{
	curves_scene *s = p;
	bool rates = false;
	int listed = 0;
	for (int i = 0; i < vz_live_series_count() && pn->ncols < VZ_PANEL_COLS; i++, listed++) {
		const vz_series *se = vz_live_series(i);
		int col = vz_panel_column(pn, se->name, se->from_file ? vz_tr("the CSV log, as written", "CSV 日志，按写入的内容")
		                                                      : vz_tr("viz.plot, this process", "viz.plot，本进程"));
		double last = NAN, lo = INFINITY;
		for (int64_t k = 0; k < se->n; k++)
			if (isfinite(se->y[k])) last = se->y[k], lo = fmin(lo, se->y[k]);
		vz_panel_set(pn, col, "points", (double)se->n);
		if (isfinite(last)) vz_panel_set(pn, col, "last", last);
		if (isfinite(lo)) vz_panel_set(pn, col, "min", lo);
		vz_panel_set(pn, col, "nan_inf", (double)se->nonfinite);
		double tp = throughput(se, se->n);
		if (isfinite(tp)) {
			vz_panel_set(pn, col, strcmp(vz_series_xname(se), "epoch") == 0 ? "epochs_per_s" : "steps_per_s", tp);
			rates = true;
		}
	}
	if (rates)
		vz_panel_note(pn, "%s", vz_tr("steps_per_s, epochs_per_s: over the last 50 points, from the wall clock at "
		                              "viz.plot or the log's seconds column",
		                              "steps_per_s、epochs_per_s：按最近 50 个点计算，时间取自 viz.plot 时的挂钟或日志的 "
		                              "seconds 列"));
	if (s->undrawn)
		vz_zh() ? vz_panel_note(pn, "%d 条曲线未画出：最多 %d 张图、每张 16 条（viz.clear，或列更少的日志）", s->undrawn,
		                        MAXCHARTS)
		        : vz_panel_note(pn, "%d series not drawn: %d charts of 16 series at most (viz.clear, or a log with "
		                        "fewer columns)", s->undrawn, MAXCHARTS);
	if (listed < vz_live_series_count())
		vz_zh() ? vz_panel_note(pn, "%d 条曲线不在此面板中（最多 %d 列）", vz_live_series_count() - listed, VZ_PANEL_COLS)
		        : vz_panel_note(pn, "%d series not in this panel (%d columns at most)", vz_live_series_count() - listed,
		                        VZ_PANEL_COLS);
	char fl[400];
	const char *st = vz_live_follow_label(fl, sizeof fl);
	if (st) vz_panel_note(pn, "%s", st);
}

static void curves_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	curves_scene *s = p;
	(void)s;
	if (strcmp(c->kind, "plot") == 0) {
		if (vz_zh()) snprintf(buf, cap, "%s（%s坐标）", c->group, strcmp(c->state, "log") == 0 ? "对数" : "线性");
		else snprintf(buf, cap, "%s (%s axis)", c->group, c->state);
		return;
	}
	if (strcmp(c->kind, "xaxis") == 0) {
		bool steps = strcmp(c->group, "step") == 0;
		VZ_SNPRINTF_TR(buf, cap, "x: %s (%s)", "x：%s（%s）", x_word(c->group),
		               steps ? vz_tr("the step counts of viz.plot or the log", "viz.plot 或日志给出的步数")
		                     : vz_tr("as the data name it: a CSV header or viz.plot's x option; x: not step counts",
		                             "数据自己的命名：CSV 表头或 viz.plot 的 x 选项；x：不是步数"));
		return;
	}
	for (int i = 0; i < vz_live_series_count(); i++) {
		const vz_series *se = vz_live_series(i);
		if (strcmp(se->name, c->group) != 0 || c->index < 0 || c->index >= se->n) continue;
		char v[32];
		VZ_SNPRINTF_TR(buf, cap, "%s at %s %s: %.6g", "%s，%s = %s：%.6g", se->name, x_word(vz_series_xname(se)),
		               vzs_short(v, sizeof v, se->x[c->index]), se->y[c->index]);
		if (!isfinite(se->y[c->index])) vz_append(buf, cap, "%s", vz_tr(" (not finite: drawn as a gap)", "（非有限值：画成断开）"));
		if (isfinite(se->t[c->index]))
			VZ_APPEND_TR(buf, cap, "\nat %.3f s (%s)", "\n第 %.3f 秒（%s）", se->t[c->index] - se->t[0],
			             se->from_file ? vz_tr("the log's clock", "日志的时钟") : vz_tr("since the first point", "从第一个点算起"));
		return;
	}
}

static const vz_option curves_options[] = {
	{"csv", VZ_OPT_STRING, 0, 0, NULL, "", "a CSV log to follow (as viz.follow)"},
	{"smoothing", VZ_OPT_NUMBER, 0, 0.99, NULL, "0.6", "exponential smoothing of the solid line (0: none)"},
	{"scale", VZ_OPT_CHOICE, 0, 0, "linear log", "linear", "the y axis"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_curves = {
	.name = "curves",
	.summary = "live training curves from viz.plot or a followed CSV log: smoothing, linear/log, NaN gaps, throughput",
	.patterns = "",
	.options = curves_options,
	.create = curves_create,
	.destroy = curves_destroy,
	.steps = curves_steps,
	.variants = curves_variants,
	.variant_name = curves_variant_name,
	.set_variant = curves_set_variant,
	.initial_variant = curves_initial_variant,
	.layout = curves_layout,
	.draw = curves_draw,
	.title = curves_title,
	.step_label = curves_step_label,
	.counters = curves_counters,
	.key = curves_key,
	.update = curves_update,
	.describe = curves_describe,
};
