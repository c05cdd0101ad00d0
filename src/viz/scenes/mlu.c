/*
 * mlu.c — the mlu scene: the hierarchy kernels.bang emulates (lua/lumen/bang.lua, AICS chapter 8)
 * as nested boxes, cards ⊃ chips ⊃ clusters ⊃ 4 cores, at one moment of a run: each cluster with
 * its SRAM in use (the peak of the units running on it, over the cluster's capacity), each core
 * with the unit running on it — its kernel, type and taskId — and its NRAM and WRAM in use (the
 * unit's peak on that core, over a core's capacity); a core with nothing running is hatched idle.
 * Steps: the moments something changes, every distinct time a unit starts or ends (a unit runs
 * from its start up to, not including, its end). viz.show('mlu', info) draws an info (q:sync(),
 * dev:info()); without one, the AICS slide's example (queues.c's demonstration). The boxes are
 * sized from the area: the arrangement of cards, chips and clusters in rows and columns that gives
 * the largest cores wins. Read next: queues.c (the runs, the demonstration), docs/viz.md ("mlu").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_CORES (4 * VZ_BANG_MAX_CLUSTERS)

typedef struct mlu_scene {
	vz_bang b;
	double *times;
	int ntimes;
	float lh, cw, pad, gap, hdr, hdr_cl, core_w, core_h;
	int cl_cols, chip_cols, card_cols;
	float cl_w, cl_h, chip_w, chip_h, card_w, card_h, legend_y;
} mlu_scene;

/* What runs at a moment: per core the unit and its row in the core tables (-1: idle), per cluster
 * the SRAM in use and a unit on it. */
typedef struct moment {
	int unit[MAX_CORES], row[MAX_CORES], cl_unit[VZ_BANG_MAX_CLUSTERS], busy;
	double sram[VZ_BANG_MAX_CLUSTERS];
} moment;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void mlu_destroy(void *p)
{
	mlu_scene *s = p;
	if (!s) return;
	vz_bang_free(&s->b);
	vz_free(s->times);
	vz_free(s);
}

static void *mlu_create(const vz_build *b)
{
	mlu_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (vz_bang_load(&s->b, b->bang, 0, "mlu", b->fname) != LM_OK) {
		vz_free(s);
		return NULL;
	}
	s->times = vz_calloc(2 * (size_t)s->b.nunits, sizeof *s->times);
	if (!s->times) {
		mlu_destroy(s);
		return NULL;
	}
	int n = 0;
	for (int i = 0; i < s->b.nunits; i++) s->times[n++] = s->b.units[i].start, s->times[n++] = s->b.units[i].stop;
	qsort(s->times, (size_t)n, sizeof *s->times, cmp_double);
	for (int i = 0; i < n; i++)
		if (s->ntimes == 0 || s->times[i] != s->times[s->ntimes - 1]) s->times[s->ntimes++] = s->times[i];
	return s;
}

static int mlu_steps(void *p) { return ((mlu_scene *)p)->ntimes; }
static int mlu_variants(void *p) { (void)p; return 1; }
static const char *mlu_variant_name(void *p, int v) { (void)p, (void)v; return "device"; }
static void mlu_set_variant(void *p, int v) { (void)p, (void)v; }

static void at(const mlu_scene *s, double now, moment *m)
{
	const vz_bang *b = &s->b;
	for (int c = 0; c < b->cores; c++) m->unit[c] = m->row[c] = -1;
	for (int c = 0; c < b->clusters; c++) m->cl_unit[c] = -1, m->sram[c] = 0;
	m->busy = 0;
	for (int i = 0; i < b->nunits; i++) {
		const vz_bang_unit *u = &b->units[i];
		if (!(u->start <= now && now < u->stop)) continue;
		for (int j = 0; j < u->ncores; j++) {
			int c = b->core[u->core0 + j];
			m->unit[c] = i, m->row[c] = u->core0 + j;
			m->busy++;
		}
		for (int j = 0; j < u->nclusters; j++) {
			int c = b->cluster[u->cluster0 + j];
			m->sram[c] += b->sram[u->cluster0 + j];
			if (m->cl_unit[c] < 0) m->cl_unit[c] = i;
		}
	}
}

/* The boxes for cores of core_w x core_h. */
static void sizes(mlu_scene *s, int cl_cols, int chip_cols, int card_cols, float core_w, float core_h, float *w, float *h)
{
	const vz_bang *b = &s->b;
	int cl_rows = (b->clusters_per_chip + cl_cols - 1) / cl_cols, chip_rows = (b->chips + chip_cols - 1) / chip_cols;
	int card_rows = (b->cards + card_cols - 1) / card_cols;
	s->cl_w = 2 * s->pad + 2 * core_w + s->gap;
	s->cl_h = s->hdr_cl + 2 * core_h + s->gap + s->pad;
	s->chip_w = 2 * s->pad + (float)cl_cols * s->cl_w + (float)(cl_cols - 1) * s->gap;
	s->chip_h = s->hdr + (float)cl_rows * s->cl_h + (float)(cl_rows - 1) * s->gap + s->pad;
	s->card_w = 2 * s->pad + (float)chip_cols * s->chip_w + (float)(chip_cols - 1) * s->gap;
	s->card_h = s->hdr + (float)chip_rows * s->chip_h + (float)(chip_rows - 1) * s->gap + s->pad;
	*w = (float)card_cols * s->card_w + (float)(card_cols - 1) * s->gap;
	*h = (float)card_rows * s->card_h + (float)(card_rows - 1) * s->gap;
}

static void mlu_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	mlu_scene *s = p;
	const vz_bang *b = &s->b;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 700 * c->scale), H = fmaxf(c->h, 340 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->pad = s->cw * 0.8f, s->gap = s->cw * 0.8f;
	s->hdr = s->lh * 1.35f, s->hdr_cl = s->lh * 2.5f;
	float avail = H - s->lh * 1.6f, want_w = s->cw * 20, want_h = s->lh * 5.4f, best = -1;
	for (int a = 1; a <= b->cards; a++)
		for (int h = 1; h <= b->chips; h++)
			for (int l = 1; l <= b->clusters_per_chip; l++) {
				float w0, h0, w1, h1;
				sizes(s, l, h, a, 0, 0, &w0, &h0);
				sizes(s, l, h, a, 1, 1, &w1, &h1);
				float cw = (W - w0) / (w1 - w0), ch = (avail - h0) / (h1 - h0), score = fminf(cw / want_w, ch / want_h);
				if (score > best + 1e-4f) best = score, s->cl_cols = l, s->chip_cols = h, s->card_cols = a;
			}
	float w0, h0, w1, h1, tw, th;
	sizes(s, s->cl_cols, s->chip_cols, s->card_cols, 0, 0, &w0, &h0);
	sizes(s, s->cl_cols, s->chip_cols, s->card_cols, 1, 1, &w1, &h1);
	s->core_w = fmaxf((W - w0) / (w1 - w0), s->cw * 13);
	s->core_h = fmaxf((avail - h0) / (h1 - h0), s->lh * 4.9f);
	sizes(s, s->cl_cols, s->chip_cols, s->card_cols, s->core_w, s->core_h, &tw, &th);
	s->legend_y = th + s->lh * 0.5f;
	*ww = fmaxf(W, tw);
	*wh = fmaxf(H, th + s->lh * 1.6f);
}

static int step_of(const vz_frame *f, int steps)
{
	int k = (int)floor(f->t + 1e-9);
	return k < 0 ? 0 : k >= steps ? steps - 1 : k;
}

/* Whether a line of font fits a height h (world) as drawn now. */
static bool fits_h(const vz_frame *f, vz_font font, float h) { return vz_text_height(f, font) <= h + 0.5f; }

/* One memory's use on a row r: its name, a bar of used / cap, the percentage. */
static void mem_bar(vz_frame *f, vz_rect r, const char *name, double used, double cap, vz_color col)
{
	char pct[16];
	snprintf(pct, sizeof pct, "%.0f%%", 100 * used / cap);
	float lw = vz_text_width(f, VZ_FONT_TINY, "NRAM "), pw = vz_text_width(f, VZ_FONT_TINY, " 100%");
	bool text = fits_h(f, VZ_FONT_TINY, r.h) && lw + pw + vz_char_width(f, VZ_FONT_TINY) * 3 < r.w;
	float th = vz_text_height(f, VZ_FONT_TINY);
	vz_rect bar = text ? vz_r(r.x + lw, r.y + r.h * 0.15f, r.w - lw - pw, r.h * 0.7f) : r;
	vz_cell_fill(f, bar, vz_th.pending, 1, vz_th.panel_line);
	double frac = cap > 0 ? fmin(fmax(used / cap, 0), 1) : 0;
	if (frac > 0) vz_fill(f, vz_r(bar.x + 1, bar.y + 1, fmaxf((bar.w - 2) * (float)frac, 1), bar.h - 2), col);
	if (!text) return;
	vz_text_draw(f, r.x, r.y + (r.h - th) / 2, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, name);
	vz_text_draw(f, r.x + r.w, r.y + (r.h - th) / 2, VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text, pct);
}

/* A line of text at the top left of a box, cut to its width; false when it did not fit. */
static bool box_text(vz_frame *f, float x, float y, float w, float h, vz_font font, vz_color c, const char *s)
{
	char t[256];
	snprintf(t, sizeof t, "%s", s);
	if (!fits_h(f, font, h)) return false;
	vz_text_fit(f, font, t, sizeof t, w);
	if (!*t) return false;
	vz_text_draw(f, x, y, font, VZ_ALIGN_LEFT, c, t);
	return true;
}

static void draw_core(mlu_scene *s, vz_frame *f, const moment *m, int core, vz_rect r, int step)
{
	const vz_bang *b = &s->b;
	int u = m->unit[core];
	char t[96];
	vz_color col = u >= 0 ? vz_bang_color(b->units[u].kernel) : vz_th.idle;
	vz_color fill = u >= 0 ? vz_mix(vz_th.bg, col, 0.22) : vz_th.idle;
	if (u >= 0) vz_cell_fill(f, r, fill, 2, col);
	else {
		vz_hatch(f, r, vz_th.idle, vz_th.hatch);
		vz_outline(f, r, 1, vz_th.panel_line);
	}
	vz_cell *c = vz_cell_add(f, r, "core");
	c->index = core, c->row = core / 4, c->col = u >= 0 ? b->units[u].kernel : -1, c->step = step, c->group = "mlu";
	c->state = u >= 0 ? "running" : "idle", c->color = fill;
	if (u >= 0) c->value = b->nram[m->row[core]], c->has_value = true;
	float p = s->cw * 0.5f, x = r.x + p, w = r.w - 2 * p, y = r.y + p * 0.6f, lh = s->lh;
	VZ_SNPRINTF_TR(t, sizeof t, "core %d", "核 %d", core);
	float used = 0;
	if (fits_h(f, VZ_FONT_SMALL, lh)) used = vz_text_width(f, VZ_FONT_SMALL, t);
	if (!box_text(f, x, y, w, lh, VZ_FONT_SMALL, vz_th.text, t)) return;
	if (u < 0) {
		box_text(f, x, y + lh * 1.1f, w, lh, VZ_FONT_SMALL, vz_th.text, vz_tr("idle", "空闲"));
		return;
	}
	const vz_bang_kernel *K = &b->kernels[b->units[u].kernel];
	VZ_SNPRINTF_TR(t, sizeof t, "task %d", "任务 %d", b->task[m->row[core]]);
	float tw = vz_text_width(f, VZ_FONT_TINY, t);
	if (used + tw + s->cw < w) vz_text_draw(f, x + w, y + (lh - vz_text_height(f, VZ_FONT_TINY)) / 2, VZ_FONT_TINY,
	                                        VZ_ALIGN_RIGHT, vz_th.text, t);
	snprintf(t, sizeof t, "%s %s", K->name, K->type);
	box_text(f, x, y + lh * 1.1f, w, lh, VZ_FONT_TINY, vz_th.text, t);
	if (r.y + r.h - (y + lh * 4.25f) < 6 / vz_zoom(f)) return; /* no room for the bars above the bottom edge */
	mem_bar(f, vz_r(x, y + lh * 2.2f, w, lh * 0.95f), "NRAM", b->nram[m->row[core]], b->cap_nram, col);
	mem_bar(f, vz_r(x, y + lh * 3.25f, w, lh * 0.95f), "WRAM", b->wram[m->row[core]], b->cap_wram, col);
}

static void draw_cluster(mlu_scene *s, vz_frame *f, const moment *m, int g, float x, float y, int step)
{
	const vz_bang *b = &s->b;
	char t[64];
	vz_rect r = vz_r(x, y, s->cl_w, s->cl_h);
	int u = m->cl_unit[g];
	vz_color col = u >= 0 ? vz_bang_color(b->units[u].kernel) : vz_th.panel_line;
	vz_outline(f, r, 1, vz_th.panel_line);
	vz_cell *c = vz_cell_add(f, r, "cluster");
	c->index = g, c->row = g, c->step = step, c->group = "mlu", c->state = u >= 0 ? "running" : "idle", c->color = vz_th.bg;
	c->value = m->sram[g], c->has_value = true;
	VZ_SNPRINTF_TR(t, sizeof t, "cluster %d", "簇 %d", g);
	float w = r.w - 2 * s->pad;
	box_text(f, x + s->pad, y + s->pad * 0.4f, w, s->lh, VZ_FONT_SMALL, vz_th.text, t);
	mem_bar(f, vz_r(x + s->pad, y + s->lh * 1.3f, w, s->lh * 0.95f), "SRAM", m->sram[g], b->cap_sram, col);
	for (int j = 0; j < 4; j++) {
		vz_rect cr = vz_r(x + s->pad + (float)(j % 2) * (s->core_w + s->gap), y + s->hdr_cl + (float)(j / 2) * (s->core_h + s->gap),
		                  s->core_w, s->core_h);
		if (vz_visible(f, cr)) draw_core(s, f, m, 4 * g + j, cr, step);
	}
}

static void mlu_draw(void *p, vz_frame *f)
{
	mlu_scene *s = p;
	const vz_bang *b = &s->b;
	int step = step_of(f, s->ntimes);
	moment m;
	at(s, s->times[step], &m);
	char t[64];
	int cpc = b->clusters_per_chip;
	for (int a = 0; a < b->cards; a++) {
		float ax = (float)(a % s->card_cols) * (s->card_w + s->gap), ay = (float)(a / s->card_cols) * (s->card_h + s->gap);
		vz_rect ar = vz_r(ax, ay, s->card_w, s->card_h);
		/* outlines and tinted headings, not fills: under llvmpipe a frame costs its fragments */
		vz_fill(f, vz_r(ax, ay, s->card_w, s->hdr), vz_th.panel);
		vz_outline(f, ar, 1, vz_th.panel_line);
		vz_cell *c = vz_cell_add(f, ar, "card");
		c->index = a, c->group = "mlu", c->state = "card", c->color = vz_th.bg;
		VZ_SNPRINTF_TR(t, sizeof t, "card %d", "板卡 %d", a);
		box_text(f, ax + s->pad, ay + s->pad * 0.4f, s->card_w - 2 * s->pad, s->lh, VZ_FONT_SMALL, vz_th.text, t);
		for (int h = 0; h < b->chips; h++) {
			float hx = ax + s->pad + (float)(h % s->chip_cols) * (s->chip_w + s->gap);
			float hy = ay + s->hdr + (float)(h / s->chip_cols) * (s->chip_h + s->gap);
			vz_rect hr = vz_r(hx, hy, s->chip_w, s->chip_h);
			vz_fill(f, vz_r(hx, hy, s->chip_w, s->hdr), vz_mix(vz_th.panel, vz_th.bg, 0.5));
			vz_outline(f, hr, 1, vz_th.panel_line);
			c = vz_cell_add(f, hr, "chip");
			c->index = a * b->chips + h, c->row = a, c->group = "mlu", c->state = "chip", c->color = vz_th.bg;
			VZ_SNPRINTF_TR(t, sizeof t, "chip %d", "芯片 %d", h);
			box_text(f, hx + s->pad, hy + s->pad * 0.4f, s->chip_w - 2 * s->pad, s->lh, VZ_FONT_SMALL, vz_th.text, t);
			for (int l = 0; l < cpc; l++) {
				int g = (a * b->chips + h) * cpc + l;
				draw_cluster(s, f, &m, g, hx + s->pad + (float)(l % s->cl_cols) * (s->cl_w + s->gap),
				             hy + s->hdr + (float)(l / s->cl_cols) * (s->cl_h + s->gap), step);
			}
		}
	}
	char line[240];
	VZ_SNPRINTF_TR(line, sizeof line, "NRAM, WRAM: the running unit's peak on that core; SRAM: on that cluster; "
	               "hatched: idle. Emulated at cycle %.0f.", "NRAM、WRAM：正在运行的单元在该核上的峰值；SRAM：在该簇上的峰值；"
	               "斜线：空闲。模拟，第 %.0f 周期。", s->times[step]);
	box_text(f, 0, s->legend_y, s->card_w * (float)s->card_cols, s->lh, VZ_FONT_SMALL, vz_th.text_dim, line);
}

static void mlu_title(void *p, char *buf, size_t cap)
{
	mlu_scene *s = p;
	const vz_bang *b = &s->b;
	if (vz_zh())
		snprintf(buf, cap, "MLU：%d 块板卡 × %d 个芯片 × %d 个簇 × 4 个核 = %d 个核；%s", b->cards, b->chips, b->clusters_per_chip,
		         b->cores, vz_bang_source(b));
	else
		snprintf(buf, cap, "MLU: %d card%s x %d chip%s x %d cluster%s x 4 cores = %d cores; %s", b->cards, b->cards > 1 ? "s" : "",
		         b->chips, b->chips > 1 ? "s" : "", b->clusters_per_chip, b->clusters_per_chip > 1 ? "s" : "", b->cores,
		         vz_bang_source(b));
}

static void mlu_step_label(void *p, int step, char *buf, size_t cap)
{
	mlu_scene *s = p;
	const vz_bang *b = &s->b;
	if (step < 0) step = 0;
	if (step >= s->ntimes) step = s->ntimes - 1;
	double now = s->times[step];
	moment m;
	at(s, now, &m);
	VZ_SNPRINTF_TR(buf, cap, "cycle %.0f (moment %d of %d): ", "第 %.0f 周期（第 %d / %d 个时刻）：", now, step + 1, s->ntimes);
	/* per kernel: the clusters (UNIONx) or cores (BLOCK) its units start on, and how many end */
	int parts = 0;
	const char *sep = vz_tr("; ", "；");
	for (int k = 0; k < b->nkernels; k++) {
		int ids[MAX_CORES], n = 0, ended = 0;
		const vz_bang_kernel *K = &b->kernels[k];
		for (int i = 0; i < b->nunits; i++) {
			const vz_bang_unit *u = &b->units[i];
			if (u->kernel != k) continue;
			if (u->start == now)
				for (int j = 0; j < (K->x ? u->nclusters : 1) && n < MAX_CORES; j++)
					ids[n++] = K->x ? b->cluster[u->cluster0 + j] : b->core[u->core0];
			if (u->stop == now && u->stop > u->start) ended++;
		}
		char list[160];
		if (n)
			VZ_APPEND_TR(buf, cap, "%s%s %s starts on %s %s", "%s%s %s 在%s %s 上开始", parts++ ? sep : "", K->name, K->type,
			             K->x ? vz_tr(n > 1 ? "clusters" : "cluster", "簇") : vz_tr(n > 1 ? "cores" : "core", "核"),
			             vz_bang_ranges(list, sizeof list, ids, n));
		if (!ended) continue;
		if (vz_zh()) vz_append(buf, cap, "%s%s 的 %d 个单元结束", parts++ ? sep : "", K->name, ended);
		else vz_append(buf, cap, "%s%d unit%s of %s end%s", parts++ ? sep : "", ended, ended > 1 ? "s" : "", K->name,
		               ended > 1 ? "" : "s");
	}
	VZ_APPEND_TR(buf, cap, "; %d of %d cores busy", "；%d / %d 个核忙", m.busy, b->cores);
}

static void mlu_counters(void *p, vz_panel *pn)
{
	mlu_scene *s = p;
	const vz_bang *b = &s->b;
	double peak[3] = {0, 0, 0}, busy = 0;
	for (int i = 0; i < b->nunits; i++) {
		const vz_bang_unit *u = &b->units[i];
		for (int j = 0; j < u->ncores; j++)
			peak[0] = fmax(peak[0], b->nram[u->core0 + j]), peak[1] = fmax(peak[1], b->wram[u->core0 + j]);
		for (int j = 0; j < u->nclusters; j++) peak[2] = fmax(peak[2], b->sram[u->cluster0 + j]);
		busy += (u->stop - u->start) * u->ncores;
	}
	double span = s->times[s->ntimes - 1] - s->times[0];
	int c = vz_panel_column(pn, vz_tr("device", "设备"), vz_bang_source(b));
	vz_panel_set(pn, c, "cards", b->cards);
	vz_panel_set(pn, c, "chips", b->chips);
	vz_panel_set(pn, c, "clusters", b->clusters);
	vz_panel_set(pn, c, "cores", b->cores);
	vz_panel_set(pn, c, "units", b->nunits);
	vz_panel_set(pn, c, "cycles", span);
	vz_panel_set(pn, c, "core_busy_share", span > 0 ? busy / (span * b->cores) : 0);
	vz_panel_set(pn, c, "peak_nram_bytes", peak[0]);
	vz_panel_set(pn, c, "peak_wram_bytes", peak[1]);
	vz_panel_set(pn, c, "peak_sram_bytes", peak[2]);
	vz_panel_set(pn, c, "nram_bytes", b->cap_nram);
	vz_panel_set(pn, c, "wram_bytes", b->cap_wram);
	vz_panel_set(pn, c, "sram_bytes", b->cap_sram);
	char dev[200];
	VZ_NOTE_TR(pn, "%s; core_busy_share: the units' core-cycles over cores x cycles (first start to last end)",
	           "%s；core_busy_share：各单元的核·周期之和 / （核数 × 周期数，从第一次开始到最后结束）",
	           vz_bang_device(b, dev, sizeof dev));
}

static void mlu_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	mlu_scene *s = p;
	const vz_bang *b = &s->b;
	int step = c->step >= 0 && c->step < s->ntimes ? c->step : 0;
	double now = s->times[step];
	moment m;
	at(s, now, &m);
	int cpc = b->clusters_per_chip;
	if (strcmp(c->kind, "core") == 0 && c->index >= 0 && c->index < b->cores) {
		int core = c->index, cl = core / 4, u = m.unit[core];
		VZ_SNPRINTF_TR(buf, cap, "core %d (cluster %d, chip %d, card %d) at cycle %.0f: ", "核 %d（簇 %d，芯片 %d，板卡 %d），第 %.0f 周期：",
		               core, cl, cl / cpc % b->chips, cl / cpc / b->chips, now);
		if (u < 0) {
			vz_append(buf, cap, "%s", vz_tr("idle", "空闲"));
			return;
		}
		const vz_bang_unit *U = &b->units[u];
		const vz_bang_kernel *K = &b->kernels[U->kernel];
		int r = m.row[core];
		VZ_APPEND_TR(buf, cap, "%s %s, unit %d, task %d, cycles %.0f to %.0f\nNRAM %.0f of %.0f bytes (%.1f%%), WRAM %.0f of %.0f "
		             "(%.1f%%): the unit's peak (emulated)", "%s %s，第 %d 个单元，任务 %d，周期 %.0f 到 %.0f\nNRAM %.0f / %.0f 字节"
		             "（%.1f%%），WRAM %.0f / %.0f（%.1f%%）：该单元的峰值（模拟）", K->name, K->type, U->index + 1, b->task[r], U->start,
		             U->stop, b->nram[r], b->cap_nram, 100 * b->nram[r] / b->cap_nram, b->wram[r], b->cap_wram,
		             100 * b->wram[r] / b->cap_wram);
	} else if (strcmp(c->kind, "cluster") == 0 && c->index >= 0 && c->index < b->clusters) {
		int g = c->index, busy = 0;
		for (int j = 0; j < 4; j++) busy += m.unit[4 * g + j] >= 0;
		VZ_SNPRINTF_TR(buf, cap, "cluster %d (chip %d, card %d) at cycle %.0f: SRAM %.0f of %.0f bytes (%.1f%%), the peak of the units "
		               "on it (emulated); %d of 4 cores busy", "簇 %d（芯片 %d，板卡 %d），第 %.0f 周期：SRAM %.0f / %.0f 字节（%.1f%%），"
		               "其上单元的峰值（模拟）；4 个核中 %d 个忙", g, g / cpc % b->chips, g / cpc / b->chips, now, m.sram[g],
		               b->cap_sram, 100 * m.sram[g] / b->cap_sram, busy);
	} else if (strcmp(c->kind, "chip") == 0 && c->index >= 0) {
		int card = c->index / b->chips, chip = c->index % b->chips;
		if (vz_zh()) snprintf(buf, cap, "板卡 %d 的芯片 %d：%d 个簇，%d 个核", card, chip, cpc, 4 * cpc);
		else snprintf(buf, cap, "chip %d of card %d: %d clusters, %d cores", chip, card, cpc, 4 * cpc);
	} else if (strcmp(c->kind, "card") == 0 && c->index >= 0) {
		VZ_SNPRINTF_TR(buf, cap, "card %d: %d chip%s of %d clusters", "板卡 %d：%d 个芯片%s，每个 %d 个簇", c->index, b->chips,
		               b->chips > 1 && !vz_zh() ? "s" : "", cpc);
	}
}

static const vz_option mlu_options[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};

const vz_scene_class vz_scene_mlu = {
	.name = "mlu",
	.summary = "BANG on a simulated MLU: cards, chips, clusters and cores as nested boxes at each moment of a "
	           "kernels.bang run, each core's task and NRAM/WRAM in use, each cluster's SRAM (viz.show('mlu', info))",
	.patterns = "",
	.options = mlu_options,
	.create = mlu_create,
	.destroy = mlu_destroy,
	.steps = mlu_steps,
	.variants = mlu_variants,
	.variant_name = mlu_variant_name,
	.set_variant = mlu_set_variant,
	.layout = mlu_layout,
	.draw = mlu_draw,
	.title = mlu_title,
	.step_label = mlu_step_label,
	.counters = mlu_counters,
	.describe = mlu_describe,
};
