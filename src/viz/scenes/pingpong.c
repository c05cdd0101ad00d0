/*
 * pingpong.c — the pingpong scene: double buffering on kernels.bang (lua/lumen/bang.lua, AICS
 * chapter 8) against single buffering, for one core: each run's DMA lane (its copies, on the IO
 * clock) and compute lane (its intrinsics) on one time axis from the kernel's start, the moments
 * both are busy (the overlap) beneath them and the idle time hatched; single-buffered above,
 * ping-pong below. Steps reveal the spans in the order they start (at most 240 steps: a longer run
 * reveals several starts a step); the last step marks the cycles saved.
 * Data: viz.show('pingpong', {single = info1, double = info2}), each info from a device with
 * dev:record(true) before the launch (its timeline's spans); a run is the info's last kernel, so
 * two launches on one device work too. Counters per run: the kernel's cycles (start to end), the
 * core's DMA busy, compute busy and overlap (unions of its spans), and the cycles saved — all
 * kernels.bang's modelled cycles. Without data: a relu + sigmoid kernel both ways (queues.c).
 * Read next: queues.c (the runs, the demonstrations), docs/viz.md ("pingpong").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_STEPS 240

typedef struct pp_run {
	int kernel;
	double total;        /* the kernel's stop - start */
	vz_bang_span *sp;    /* the core's spans of the kernel, times from its start, by t0 */
	int n;
	double *busy[2];     /* merged intervals (pairs) of DMA [0] and compute [1] */
	int nbusy[2];
	double *ov;          /* where both are busy (pairs) */
	int nov;
	double dma, compute, overlap;
} pp_run;

typedef struct pp_scene {
	vz_bang b[2];
	pp_run run[2];
	int core, ntimes, steps;
	double *times, tmax;
	float lh, cw, label_w, plot_w, top, band, lane, strip, legend_y;
} pp_scene;

static int cmp_span(const void *a, const void *b)
{
	const vz_bang_span *x = a, *y = b;
	if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
	if (x->compute != y->compute) return x->compute ? 1 : -1;
	return x->t1 < y->t1 ? -1 : x->t1 > y->t1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void run_free(pp_run *r)
{
	vz_free(r->sp);
	vz_free(r->busy[0]);
	vz_free(r->busy[1]);
	vz_free(r->ov);
}

static void pp_destroy(void *p)
{
	pp_scene *s = p;
	if (!s) return;
	for (int i = 0; i < 2; i++) {
		run_free(&s->run[i]);
		vz_bang_free(&s->b[i]);
	}
	vz_free(s->times);
	vz_free(s);
}

/* The union of the spans of one kind (sorted by t0) as pairs into out; returns their count. */
static int merge(const vz_bang_span *sp, int n, bool compute, double *out, double *total)
{
	int k = 0;
	*total = 0;
	for (int i = 0; i < n; i++) {
		if (sp[i].compute != compute) continue;
		if (k && sp[i].t0 <= out[2 * k - 1]) out[2 * k - 1] = fmax(out[2 * k - 1], sp[i].t1);
		else out[2 * k] = sp[i].t0, out[2 * k + 1] = sp[i].t1, k++;
	}
	for (int i = 0; i < k; i++) *total += out[2 * i + 1] - out[2 * i];
	return k;
}

static const char *run_name(int i) { return i ? vz_tr("ping-pong", "乒乓") : vz_tr("single-buffered", "单缓冲"); }

static bool take_run(pp_scene *s, int i, const char *fname)
{
	const vz_bang *b = &s->b[i];
	pp_run *r = &s->run[i];
	r->kernel = -1;
	for (int u = 0; u < b->nunits; u++) r->kernel = r->kernel < b->units[u].kernel ? b->units[u].kernel : r->kernel;
	const vz_bang_kernel *K = &b->kernels[r->kernel];
	r->total = K->stop - K->start;
	r->sp = vz_calloc(b->nspans ? (size_t)b->nspans : 1, sizeof *r->sp);
	for (int k = 0; k < 2; k++) r->busy[k] = vz_calloc(2 * (size_t)(b->nspans + 1), sizeof *r->busy[k]);
	r->ov = vz_calloc(4 * (size_t)(b->nspans + 1), sizeof *r->ov);
	if (!r->sp || !r->busy[0] || !r->busy[1] || !r->ov) return false;
	for (int k = 0; k < b->nspans; k++) {
		const vz_bang_span *x = &b->spans[k];
		if (b->units[x->unit].kernel != r->kernel || x->core != s->core) continue;
		r->sp[r->n] = *x;
		r->sp[r->n].t0 -= K->start, r->sp[r->n].t1 -= K->start;
		r->n++;
	}
	if (r->n == 0) {
		const char *which = i ? "double-buffered (double)" : "single-buffered (single)";
		if (b->nspans == 0)
			lm_set_error(LM_ERR_ARG, "%s: the pingpong scene: the %s run has no DMA or compute spans: call dev:record(true) "
			             "before its launch", fname, which);
		else {
			int cores[256], nc = 0;
			char ids[160];
			for (int u = 0; u < b->nunits; u++)
				for (int j = 0; j < b->units[u].ncores && nc < 256; j++)
					if (b->units[u].kernel == r->kernel) cores[nc++] = b->core[b->units[u].core0 + j];
			lm_set_error(LM_ERR_ARG, "%s: the pingpong scene: the %s run's kernel %s has no spans on core %d (option core; it "
			             "ran on cores %s)", fname, which, K->name, s->core, vz_bang_ranges(ids, sizeof ids, cores, nc));
		}
		return false;
	}
	qsort(r->sp, (size_t)r->n, sizeof *r->sp, cmp_span);
	r->nbusy[0] = merge(r->sp, r->n, false, r->busy[0], &r->dma);
	r->nbusy[1] = merge(r->sp, r->n, true, r->busy[1], &r->compute);
	for (int a = 0, c = 0; a < r->nbusy[0] && c < r->nbusy[1];) { /* the intersection of two sorted unions */
		double lo = fmax(r->busy[0][2 * a], r->busy[1][2 * c]), hi = fmin(r->busy[0][2 * a + 1], r->busy[1][2 * c + 1]);
		if (hi > lo) r->ov[2 * r->nov] = lo, r->ov[2 * r->nov + 1] = hi, r->nov++, r->overlap += hi - lo;
		if (r->busy[0][2 * a + 1] < r->busy[1][2 * c + 1]) a++;
		else c++;
	}
	return true;
}

static void *pp_create(const vz_build *b)
{
	pp_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	s->core = (int)vz_opt_int(b->opts, "core", 0);
	for (int i = 0; i < 2; i++) {
		if (vz_bang_load(&s->b[i], b->bang ? &b->bang[i] : NULL, 1 + i, "pingpong", b->fname) != LM_OK ||
		    !take_run(s, i, b->fname)) {
			pp_destroy(s);
			return NULL;
		}
	}
	s->times = vz_calloc((size_t)(s->run[0].n + s->run[1].n), sizeof *s->times);
	if (!s->times) {
		pp_destroy(s);
		return NULL;
	}
	int n = 0;
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < s->run[i].n; k++) s->times[n++] = s->run[i].sp[k].t0;
	qsort(s->times, (size_t)n, sizeof *s->times, cmp_double);
	for (int k = 0; k < n; k++)
		if (s->ntimes == 0 || s->times[k] != s->times[s->ntimes - 1]) s->times[s->ntimes++] = s->times[k];
	s->steps = (s->ntimes < MAX_STEPS ? s->ntimes : MAX_STEPS) + 1; /* the last: the end of both */
	s->tmax = fmax(s->run[0].total, s->run[1].total);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < s->run[i].n; k++) s->tmax = fmax(s->tmax, s->run[i].sp[k].t1);
	if (!(s->tmax > 0)) s->tmax = 1;
	return s;
}

static int pp_steps(void *p) { return ((pp_scene *)p)->steps; }
static int pp_variants(void *p) { (void)p; return 1; }
static const char *pp_variant_name(void *p, int v) { (void)p, (void)v; return "lanes"; }
static void pp_set_variant(void *p, int v) { (void)p, (void)v; }

/* The moment step k shows: the latest start it reveals; the last step, the end. */
static double moment(const pp_scene *s, int k) { return vz_timeline_moment(s->times, s->ntimes, s->steps, k, s->tmax); }

static void pp_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	pp_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 380 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	const char *names[] = {vz_tr("compute", "计算"), vz_tr("overlap", "重叠"), "DMA"};
	s->label_w = 0;
	for (int i = 0; i < 3; i++) s->label_w = fmaxf(s->label_w, vz_text_width(f, VZ_FONT_SMALL, names[i]));
	s->label_w += s->cw * 1.5f;
	s->plot_w = W - s->label_w - s->cw * 2;
	s->top = s->lh * 1.5f;
	float avail = H - s->top - s->lh * 2.2f - 2 * s->lh * 2.4f;
	s->lane = fminf(s->lh * 4.2f, avail / 5.0f);
	s->strip = fmaxf(s->lane * 0.45f, s->lh);
	s->band = s->lh * 1.5f + 2 * s->lane + s->strip + s->lh * 0.9f;
	s->legend_y = s->top + 2 * s->band + s->lh * 0.2f;
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f, int steps)
{
	int k = (int)floor(f->t + 1e-9);
	return k < 0 ? 0 : k >= steps ? steps - 1 : k;
}

static float x_of(const pp_scene *s, double t) { return s->label_w + (float)(t / s->tmax) * s->plot_w; }

static const char *short_what(const vz_bang_span *x)
{
	if (strncmp(x->what, "__bang_active_", 14) == 0) return x->what + 14;
	if (strncmp(x->what, "__bang_", 7) == 0) return x->what + 7;
	return x->what;
}

static void label_in(vz_frame *f, vz_rect r, vz_color fill, const char *text)
{
	for (int k = 0; k < 2; k++) {
		vz_font font = k ? VZ_FONT_TINY : VZ_FONT_SMALL;
		float h = vz_text_height(f, font);
		if (h > r.h || !vz_text_fits(f, font, text, r.w - vz_char_width(f, font))) continue;
		vz_text_draw(f, r.x + r.w / 2, r.y + (r.h - h) / 2, font, VZ_ALIGN_CENTER, vz_text_on(fill), text);
		return;
	}
}

/* Hatches [from, until) of a lane where none of the merged intervals is. */
static void idle_gaps(pp_scene *s, vz_frame *f, int i, const double *iv, int n, double until, float y, float h, const char *state)
{
	double cur = 0;
	for (int k = 0; k <= n; k++) {
		double a = k < n ? fmin(iv[2 * k], until) : until;
		if (a > cur) {
			vz_rect r = vz_r(x_of(s, cur), y, x_of(s, a) - x_of(s, cur), h);
			vz_hatch(f, r, vz_th.idle, vz_th.hatch);
			vz_cell *c = vz_cell_add(f, r, "idle");
			c->group = i ? "double" : "single", c->state = state, c->color = vz_th.idle, c->row = i;
			c->value = a - cur, c->has_value = true;
			c->index = (int)cur; /* the gap's start (whole cycles) for the hover */
		}
		if (k < n) cur = fmax(cur, iv[2 * k + 1]);
		if (cur >= until) break;
	}
}

static void draw_run(pp_scene *s, vz_frame *f, int i, double now, bool last)
{
	const pp_run *r = &s->run[i];
	const char *group = i ? "double" : "single";
	char t[160];
	float y0 = s->top + (float)i * s->band, yd = y0 + s->lh * 1.5f, yc = yd + s->lane, yo = yc + s->lane;
	const char *lanes[3] = {"DMA", vz_tr("compute", "计算"), vz_tr("overlap", "重叠")};
	const char *states[3] = {"dma", "compute", "overlap"};
	float ys[3] = {yd, yc, yo}, hs[3] = {s->lane, s->lane, s->strip};
	double until = fmin(now, r->total);
	for (int k = 0; k < 3; k++) {
		vz_rect lr = vz_r(s->label_w, ys[k], x_of(s, r->total) - s->label_w, hs[k]);
		vz_text_draw(f, 0, ys[k] + (hs[k] - s->lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, k == 2 ? vz_th.text_dim : vz_th.text, lanes[k]);
		vz_cell *lc = vz_cell_add(f, lr, "lane");
		lc->row = i, lc->col = k, lc->group = group, lc->state = states[k], lc->color = vz_th.bg;
		lc->value = k == 0 ? r->dma : k == 1 ? r->compute : r->overlap, lc->has_value = true;
		if (k < 2) idle_gaps(s, f, i, r->busy[k], r->nbusy[k], until, ys[k], hs[k], states[k]);
		vz_outline(f, lr, 1, vz_th.panel_line);
	}
	for (int k = 0; k < r->n; k++) {
		const vz_bang_span *x = &r->sp[k];
		if (x->t0 > now) break;
		vz_color col = x->compute ? vz_th.active : vz_th.path_a;
		float y = x->compute ? yc : yd;
		vz_rect sr = vz_r(x_of(s, x->t0), y, fmaxf(x_of(s, x->t1) - x_of(s, x->t0), 1.5f), s->lane);
		vz_bang_bar(f, sr, col, vz_th.bg);
		label_in(f, sr, col, short_what(x));
		vz_cell *sc = vz_cell_add(f, sr, "span");
		sc->index = k, sc->row = i, sc->group = group, sc->state = x->compute ? "compute" : "dma", sc->color = col;
		sc->value = x->t1 - x->t0, sc->has_value = true;
	}
	for (int k = 0; k < r->nov; k++) {
		if (r->ov[2 * k] > now) break;
		vz_rect orr = vz_r(x_of(s, r->ov[2 * k]), yo, fmaxf(x_of(s, r->ov[2 * k + 1]) - x_of(s, r->ov[2 * k]), 1.5f), s->strip);
		vz_bang_bar(f, orr, vz_th.common, vz_th.bg);
		vz_cell *oc = vz_cell_add(f, orr, "overlap");
		oc->index = k, oc->row = i, oc->group = group, oc->state = "overlap", oc->color = vz_th.common;
		oc->value = r->ov[2 * k + 1] - r->ov[2 * k], oc->has_value = true;
	}
	vz_line(f, x_of(s, r->total), y0 + s->lh * 1.3f, x_of(s, r->total), yo + s->strip + 2, 2, vz_th.text);
	double saved = s->run[0].total - s->run[1].total;
	if (i == 1 && last && saved > 0) { /* the cycles saved, after ping-pong's end */
		vz_rect sv = vz_r(x_of(s, r->total), yd, x_of(s, s->run[0].total) - x_of(s, r->total), 2 * s->lane + s->strip);
		vz_color light = vz_mix(vz_th.bg, vz_th.common, 0.3);
		vz_cell_fill(f, sv, light, 1, vz_th.common);
		VZ_SNPRINTF_TR(t, sizeof t, "%.0f saved", "省 %.0f", saved);
		label_in(f, vz_r(sv.x, sv.y + s->lane * 0.5f, sv.w, s->lane), light, t);
		vz_cell *vc = vz_cell_add(f, sv, "saved");
		vc->row = i, vc->group = group, vc->state = "saved", vc->color = light, vc->value = saved, vc->has_value = true;
	}
}

/* A run's heading, over the lines under it. */
static void draw_heading(pp_scene *s, vz_frame *f, int i)
{
	const pp_run *r = &s->run[i];
	char t[160];
	float y0 = s->top + (float)i * s->band;
	VZ_SNPRINTF_TR(t, sizeof t, "%s (%s): %.0f modelled cycles, core %d", "%s（%s）：%.0f 个模型周期，核 %d", run_name(i),
	               s->b[i].kernels[r->kernel].name, r->total, s->core);
	vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, s->plot_w);
	float w = vz_text_width(f, VZ_FONT_SMALL, t);
	vz_fill(f, vz_r(s->label_w, y0 + s->lh * 0.15f, w + s->cw, s->lh * 1.1f), vz_th.bg);
	vz_text_draw(f, s->label_w + s->cw * 0.5f, y0 + s->lh * 0.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
	vz_cell *c = vz_cell_add(f, vz_r(s->label_w, y0, s->plot_w, s->lh * 1.4f), "run");
	c->row = i, c->group = i ? "double" : "single", c->state = "run", c->color = vz_th.bg, c->value = r->total, c->has_value = true;
}

static void pp_draw(void *p, vz_frame *f)
{
	pp_scene *s = p;
	int step = step_of(f, s->steps);
	double now = moment(s, step);
	float bottom = s->top + 2 * s->band - s->lh * 0.5f;
	vz_text_draw(f, 0, 0, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, vz_tr("cycles", "周期"));
	vz_bang_axis(f, 0, s->tmax, s->label_w, s->plot_w, 0, s->top - 3, bottom);
	vz_layer(f); /* the lanes over the grid */
	for (int i = 0; i < 2; i++) draw_run(s, f, i, now, step == s->steps - 1);
	vz_line(f, x_of(s, now), s->top - 3, x_of(s, now), bottom, 2, vz_th.highlight);
	vz_layer(f); /* the headings over the lines */
	for (int i = 0; i < 2; i++) draw_heading(s, f, i);
	float x = vzs_legend(f, 0, s->legend_y, vz_th.path_a, false, vz_tr("DMA copy (IO clock)", "DMA 拷贝（IO 时钟）"));
	x = vzs_legend(f, x, s->legend_y, vz_th.active, false, vz_tr("compute (intrinsic)", "计算（内建函数）"));
	x = vzs_legend(f, x, s->legend_y, vz_th.common, false, vz_tr("both busy: the overlap", "两者都忙：重叠"));
	x = vzs_legend(f, x, s->legend_y, vz_th.idle, true, vz_tr("idle", "空闲"));
	vzs_legend(f, x, s->legend_y, vz_th.highlight, false, vz_tr("the step's moment", "这一步的时刻"));
}

static void pp_title(void *p, char *buf, size_t cap)
{
	pp_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "ping-pong, core %d: single %.0f, double %.0f, saved %.0f cycles; %s",
	               "乒乓缓冲，核 %d：单缓冲 %.0f，双缓冲 %.0f，省 %.0f 周期；%s", s->core, s->run[0].total, s->run[1].total,
	               s->run[0].total - s->run[1].total, vz_bang_source(&s->b[0]));
}

/* What starts at the moment in run i ("relu (compute) to 784, ..."). */
static void starting(const pp_scene *s, int i, double now, char *buf, size_t cap)
{
	const pp_run *r = &s->run[i];
	int n = 0;
	buf[0] = '\0';
	for (int k = 0; k < r->n; k++) {
		const vz_bang_span *x = &r->sp[k];
		if (x->t0 != now) continue;
		if (n++ < 2)
			VZ_APPEND_TR(buf, cap, "%s%s (%s) to %.0f", "%s%s（%s）到 %.0f", n > 1 ? ", " : "", short_what(x),
			             x->compute ? vz_tr("compute", "计算") : "DMA", x->t1);
	}
	if (!n) snprintf(buf, cap, "%s", vz_tr("nothing starts", "无新操作"));
}

static void pp_step_label(void *p, int step, char *buf, size_t cap)
{
	pp_scene *s = p;
	if (step >= s->steps - 1) {
		VZ_SNPRINTF_TR(buf, cap, "the end: single-buffered %.0f cycles, ping-pong %.0f: %.0f saved; overlap %.0f against %.0f",
		               "结束：单缓冲 %.0f 周期，乒乓 %.0f：省 %.0f；重叠 %.0f 对 %.0f", s->run[0].total, s->run[1].total,
		               s->run[0].total - s->run[1].total, s->run[1].overlap, s->run[0].overlap);
		return;
	}
	double now = moment(s, step);
	char a[160], b[160];
	starting(s, 0, now, a, sizeof a);
	starting(s, 1, now, b, sizeof b);
	VZ_SNPRINTF_TR(buf, cap, "cycle %.0f: single-buffered: %s; ping-pong: %s", "第 %.0f 周期：单缓冲：%s；乒乓：%s", now, a, b);
}

static void pp_counters(void *p, vz_panel *pn)
{
	pp_scene *s = p;
	for (int i = 0; i < 2; i++) {
		const pp_run *r = &s->run[i];
		char src[160];
		VZ_SNPRINTF_TR(src, sizeof src, "%s; core %d", "%s；核 %d", vz_bang_source(&s->b[i]), s->core);
		int c = vz_panel_column(pn, run_name(i), src);
		vz_panel_set(pn, c, "total_cycles", r->total);
		vz_panel_set(pn, c, "dma_busy", r->dma);
		vz_panel_set(pn, c, "compute_busy", r->compute);
		vz_panel_set(pn, c, "overlap", r->overlap);
		if (i == 1) vz_panel_set(pn, c, "cycles_saved", s->run[0].total - r->total);
	}
	VZ_NOTE_TR(pn, "total_cycles: the kernel, start to end; dma_busy, compute_busy, overlap: core %d's spans (dev:record(true)); "
	           "cycles_saved = single - double", "total_cycles：核函数从开始到结束；dma_busy、compute_busy、overlap：核 %d 的区间"
	           "（dev:record(true)）；cycles_saved = 单缓冲 - 双缓冲", s->core);
}

static void pp_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	pp_scene *s = p;
	if (c->row < 0 || c->row > 1) return;
	const pp_run *r = &s->run[c->row];
	const char *name = run_name(c->row);
	if (strcmp(c->kind, "span") == 0 && c->index >= 0 && c->index < r->n) {
		const vz_bang_span *x = &r->sp[c->index];
		VZ_SNPRINTF_TR(buf, cap, "%s, core %d, task %d: %s (%s) from %.0f to %.0f: %.0f modelled cycles (emulated)",
		               "%s，核 %d，任务 %d：%s（%s）从 %.0f 到 %.0f：%.0f 个模型周期（模拟）", name, x->core, x->task, x->what,
		               x->compute ? vz_tr("compute", "计算") : vz_tr("DMA copy", "DMA 拷贝"), x->t0, x->t1, x->t1 - x->t0);
	} else if (strcmp(c->kind, "overlap") == 0 && c->index >= 0 && c->index < r->nov) {
		VZ_SNPRINTF_TR(buf, cap, "%s: DMA and compute both busy from %.0f to %.0f (%.0f cycles)", "%s：DMA 与计算同时忙，%.0f 到 %.0f"
		               "（%.0f 周期）", name, r->ov[2 * c->index], r->ov[2 * c->index + 1], r->ov[2 * c->index + 1] - r->ov[2 * c->index]);
	} else if (strcmp(c->kind, "idle") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s: %s idle for %.0f cycles from %d", "%s：%s 空闲 %.0f 周期，从 %d 起", name,
		               strcmp(c->state, "dma") == 0 ? "DMA" : vz_tr("compute", "计算"), c->value, c->index);
	} else if (strcmp(c->kind, "lane") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s: %s %.0f of %.0f cycles", "%s：%s %.0f / %.0f 周期", name,
		               c->col == 0 ? vz_tr("DMA busy", "DMA 忙") : c->col == 1 ? vz_tr("compute busy", "计算忙")
		                                                          : vz_tr("both busy (overlap)", "同时忙（重叠）"),
		               c->value, r->total);
	} else if (strcmp(c->kind, "saved") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "ping-pong ends %.0f cycles before single-buffered (%.0f against %.0f)", "乒乓比单缓冲早 %.0f 周期结束"
		               "（%.0f 对 %.0f）", c->value, s->run[1].total, s->run[0].total);
	} else if (strcmp(c->kind, "run") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s: kernel %s, %.0f cycles from its start to its end", "%s：核函数 %s，从开始到结束 %.0f 周期", name,
		               s->b[c->row].kernels[r->kernel].name, r->total);
	}
}

static const vz_option pp_options[] = {
	{"core", VZ_OPT_INT, 0, 4 * VZ_BANG_MAX_CLUSTERS - 1, NULL, "0", "the core whose DMA and compute lanes are drawn"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_pingpong = {
	.name = "pingpong",
	.summary = "BANG on a simulated MLU: one core's DMA and compute lanes single-buffered against ping-pong "
	           "(double-buffered), the overlap and the cycles saved (viz.show('pingpong', {single =, double =}))",
	.patterns = "",
	.options = pp_options,
	.create = pp_create,
	.destroy = pp_destroy,
	.steps = pp_steps,
	.variants = pp_variants,
	.variant_name = pp_variant_name,
	.set_variant = pp_set_variant,
	.layout = pp_layout,
	.draw = pp_draw,
	.title = pp_title,
	.step_label = pp_step_label,
	.counters = pp_counters,
	.describe = pp_describe,
};
