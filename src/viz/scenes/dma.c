/*
 * dma.c — the dma scene: lumen.dlp's double-buffered scratchpads against compute (AICS chapters
 * 6-7): for each run, on one time axis in cycles, the DMA engine's ifmap and filter prefetches
 * (filling one half of a scratchpad while the array reads the other), the ofmap drains, the array's
 * folds, and the stalls — the cycles the array waits because a prefetch had not landed (ifmap,
 * filter) or the output buffer was full (ofmap). Up to three runs stacked (enough bandwidth against
 * too little). Steps reveal the events in the order they start (at most 240 steps); the last shows
 * the totals. Every number is the report's (a:run(layer, {events = N})), i.e. SCALE-Sim's counting:
 * a prefetch before cycle 0 is the first fill, a stall of n cycles at cycle t delays the array's
 * next demand to t + 1 + n.
 * viz.show('dma', r) or viz.show('dma', {a = r1, b = r2}); without data a 32 x 32 WS array on a
 * 16 x 16 x 8 convolution with 128 filters of 5 x 5 at bandwidth 10 against 2 words a cycle, run
 * here by lm_dlp_run (options bandwidth, compare, dataflow).
 * Read next: src/dlp/dlp.c (the events), systolic.c, docs/viz.md ("dma").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_RUNS 3
#define MAX_STEPS 240
#define MAX_EVENTS 200000
#define NLANES 5

enum { EV_IFMAP, EV_FILTER, EV_DRAIN, EV_STALL, EV_FOLD };
/* event kind -> lane (top to bottom): ifmap DMA, filter DMA, ofmap drain, compute, stall */
static const int lane_of[5] = {0, 1, 2, 4, 3};
static const char *const kind_names[5] = {"ifmap", "filter", "drain", "stall", "fold"};
static const char *const run_groups[MAX_RUNS] = {"a", "b", "c"};

typedef struct dm_ev {
	int kind, operand;   /* operand: a stall's (0 ifmap, 1 filter, 2 ofmap) */
	int64_t fold;        /* a fold's index (0-based) */
	double t0, t1;       /* the cycles it covers, [t0, t1) */
	double words, stalled; /* a transfer's words; the stall cycles inside a fold */
	double next;         /* the next start in its lane (its label stops there) */
	double until;        /* a fold: where it first stalls (its label stops there), else t1 */
} dm_ev;

typedef struct dm_run {
	char label[96], name[48], given[48]; /* label: made again in the labels' language at each entry (relabel) */
	lm_dlp_report rep;
	int64_t rows, cols, bandwidth, dropped;
	int dataflow;
	bool user;
	dm_ev *ev;           /* by t0 */
	int n;
	double stall[3];     /* stall cycles by operand, from the events */
} dm_run;

typedef struct dm_scene {
	dm_run run[MAX_RUNS];
	vz_dlp_facets facets[MAX_RUNS];
	int nruns, ntimes, steps;
	bool demo;
	double *times, lo, hi;
	float lh, cw, label_w, plot_w, top, band, head, lane, legend_y;
} dm_scene;

static void dm_destroy(void *p)
{
	dm_scene *s = p;
	if (!s) return;
	for (int i = 0; i < MAX_RUNS; i++) vz_free(s->run[i].ev); /* a run that failed its checks has its events too */
	vz_free(s->times);
	vz_free(s);
}

static int cmp_ev(const void *a, const void *b)
{
	const dm_ev *x = a, *y = b;
	if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
	return x->kind - y->kind;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Copies and checks one run's events; a fold lasts from its start through the stalls that begin
 * inside it. */
static bool take_run(dm_run *r, const lm_viz_dlp *d, int which, const char *fname)
{
	r->rep = d->report;
	r->rows = d->config.rows, r->cols = d->config.cols, r->bandwidth = d->config.bandwidth;
	r->dataflow = (int)d->config.dataflow, r->user = d->config.user_bandwidth != 0;
	r->dropped = d->dropped;
	snprintf(r->name, sizeof r->name, "%s", d->name ? d->name : "layer");
	snprintf(r->given, sizeof r->given, "%s", d->label ? d->label : "");
	snprintf(r->label, sizeof r->label, "%s %d%s%s%s", "run", which + 1, r->given[0] ? " (" : "", r->given, r->given[0] ? ")" : "");
	if (d->nevents < 1) {
		lm_set_error(LM_ERR_ARG, "%s: the dma scene: %s has no events: give a:run(layer, {events = N})", fname, r->label);
		return false;
	}
	if (d->nevents > MAX_EVENTS) {
		lm_set_error(LM_ERR_ARG, "%s: the dma scene draws at most %d events a run; %s has %lld", fname, MAX_EVENTS, r->label,
		             (long long)d->nevents);
		return false;
	}
	r->ev = vz_calloc((size_t)d->nevents, sizeof *r->ev);
	if (!r->ev) return false;
	for (int64_t i = 0; i < d->nevents; i++) {
		const lm_dlp_event *e = &d->events[i];
		dm_ev *x = &r->ev[r->n];
		if (e->kind < 0 || e->kind > 4 || (e->kind == EV_STALL && (e->words < 0 || e->words > 2 || e->end < 0)) ||
		    (e->kind != EV_STALL && e->end < e->start)) {
			lm_set_error(LM_ERR_ARG, "%s: the dma scene: %s, event %lld (kind %d, %lld to %lld): not an event of lm_dlp_run", fname,
			             r->label, (long long)i + 1, e->kind, (long long)e->start, (long long)e->end);
			return false;
		}
		x->kind = e->kind;
		if (e->kind == EV_STALL) {
			x->t0 = (double)e->start + 1, x->t1 = x->t0 + (double)e->end, x->operand = (int)e->words;
			r->stall[e->words] += (double)e->end;
		} else {
			x->t0 = (double)e->start, x->t1 = (double)e->end + 1;
			if (e->kind == EV_FOLD) x->fold = e->words;
			else x->words = (double)e->words;
		}
		r->n++;
	}
	qsort(r->ev, (size_t)r->n, sizeof *r->ev, cmp_ev);
	double next[5] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
	for (int i = r->n - 1; i >= 0; i--) {
		int lane = lane_of[r->ev[i].kind];
		r->ev[i].next = next[lane];
		if (r->ev[i].t0 < next[lane]) next[lane] = r->ev[i].t0;
	}
	for (int i = 0; i < r->n; i++) { /* a fold runs on through the stalls that begin inside it */
		dm_ev *f = &r->ev[i];
		if (f->kind != EV_FOLD) continue;
		f->until = HUGE_VAL;
		for (int j = i + 1; j < r->n && r->ev[j].t0 <= f->t1; j++)
			if (r->ev[j].kind == EV_STALL && r->ev[j].t0 > f->t0) {
				f->until = fmin(f->until, r->ev[j].t0);
				f->t1 += r->ev[j].t1 - r->ev[j].t0, f->stalled += r->ev[j].t1 - r->ev[j].t0;
			}
		f->until = fmin(f->until, f->t1);
	}
	return true;
}

/* The runs' labels in the labels' language (what differs between them: vz_dlp_label). */
static void relabel(dm_scene *s)
{
	for (int i = 0; i < s->nruns; i++) {
		const dm_run *r = &s->run[i];
		s->facets[i] = (vz_dlp_facets){r->bandwidth, r->rows, r->cols, r->dataflow, r->user, r->name, r->given};
	}
	for (int i = 0; i < s->nruns; i++)
		vz_dlp_label(s->run[i].label, sizeof s->run[i].label, s->facets, s->nruns, i, VZ_DLP_BANDWIDTH);
}

/* The demonstration: lm_dlp_run with events on a 32 x 32 array (dlp.array's defaults otherwise). */
static bool demo_run(dm_run *r, const lm_viz_opts *o, int64_t bandwidth, const char *fname)
{
	const char *df = vz_opt_string(o, "dataflow", "ws");
	lm_dlp_config c = vz_dlp_config(32, 32, strcmp(df, "os") == 0 ? LM_DLP_OS : strcmp(df, "is") == 0 ? LM_DLP_IS : LM_DLP_WS,
	                                bandwidth);
	lm_dlp_layer l = {.ifmap_h = 16, .ifmap_w = 16, .filter_h = 5, .filter_w = 5, .channels = 8, .filters = 128, .stride = 1};
	lm_dlp_events ev = {.cap = 4096};
	ev.ev = vz_calloc((size_t)ev.cap, sizeof *ev.ev);
	if (!ev.ev) return false;
	lm_viz_dlp d = {.config = c, .layer = l, .name = "conv"};
	bool ok = lm_dlp_run(&c, &l, &d.report, &ev) == LM_OK;
	if (!ok) vz_error_prefix(0, fname);
	d.events = ev.ev, d.nevents = ev.n, d.dropped = ev.dropped;
	ok = ok && take_run(r, &d, 0, fname);
	vz_free(ev.ev);
	return ok;
}

static void *dm_create(const vz_build *b)
{
	static const char *const demo_opts[] = {"bandwidth", "compare", "dataflow"};
	if (b->dlp)
		for (size_t i = 0; i < sizeof demo_opts / sizeof demo_opts[0]; i++)
			if (vz_opt_given(b->opts, demo_opts[i])) {
				lm_set_error(LM_ERR_ARG, "%s: the dma scene: option %s is the demonstration's; the reports given decide it", b->fname,
				             demo_opts[i]);
				return NULL;
			}
	dm_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	s->demo = !b->dlp;
	if (b->dlp) {
		for (int i = 0; i < b->ndlp && i < MAX_RUNS; i++, s->nruns++)
			if (!take_run(&s->run[i], &b->dlp[i], i, b->fname)) goto fail;
	} else {
		int64_t bw[2] = {vz_opt_int(b->opts, "bandwidth", 10), vz_opt_int(b->opts, "compare", 2)};
		for (int i = 0; i < (bw[1] > 0 ? 2 : 1); i++, s->nruns++)
			if (!demo_run(&s->run[i], b->opts, bw[i], b->fname)) goto fail;
	}
	int n = 0;
	for (int i = 0; i < s->nruns; i++) n += s->run[i].n;
	s->times = vz_calloc((size_t)n, sizeof *s->times);
	if (!s->times) goto fail;
	n = 0;
	s->lo = HUGE_VAL, s->hi = -HUGE_VAL;
	for (int i = 0; i < s->nruns; i++) {
		const dm_run *r = &s->run[i];
		s->hi = fmax(s->hi, (double)r->rep.total_cycles);
		for (int k = 0; k < r->n; k++) {
			s->times[n++] = r->ev[k].t0;
			s->lo = fmin(s->lo, r->ev[k].t0), s->hi = fmax(s->hi, r->ev[k].t1);
		}
	}
	s->lo = fmin(s->lo, 0);
	if (!(s->hi > s->lo)) s->hi = s->lo + 1;
	qsort(s->times, (size_t)n, sizeof *s->times, cmp_double);
	for (int k = 0; k < n; k++)
		if (s->ntimes == 0 || s->times[k] != s->times[s->ntimes - 1]) s->times[s->ntimes++] = s->times[k];
	s->steps = (s->ntimes < MAX_STEPS ? s->ntimes : MAX_STEPS) + 1; /* the last: the end */
	return s;
fail:
	dm_destroy(s);
	return NULL;
}

static int dm_steps(void *p) { return ((dm_scene *)p)->steps; }
static int dm_variants(void *p) { (void)p; return 1; }
static const char *dm_variant_name(void *p, int v) { (void)p, (void)v; return "lanes"; }
static void dm_set_variant(void *p, int v) { (void)p, (void)v; }

/* The moment step k shows: the latest start it reveals; the last step, the end. */
static double moment(const dm_scene *s, int k) { return vz_timeline_moment(s->times, s->ntimes, s->steps, k, s->hi); }

static const char *lane_name(int lane)
{
	switch (lane) {
	case 0: return vz_tr("ifmap DMA", "输入 DMA");
	case 1: return vz_tr("filter DMA", "权重 DMA");
	case 2: return vz_tr("ofmap drain", "输出写回");
	case 3: return vz_tr("compute", "计算");
	default: return vz_tr("stall", "停顿");
	}
}

static vz_color kind_color(int kind, int64_t fold)
{
	switch (kind) {
	case EV_IFMAP: return vz_th.path_a;
	case EV_FILTER: return vz_okabe_ito[VZ_OI_PURPLE];
	case EV_DRAIN: return vz_th.common;
	case EV_STALL: return vz_th.highlight;
	default: return fold % 2 ? vz_mix(vz_th.bg, vz_th.active, 0.6) : vz_th.active;
	}
}

static const char *operand_name(int op) { return op == 0 ? "ifmap" : op == 1 ? "filter" : "ofmap"; }

static const char *stall_why(int op)
{
	switch (op) {
	case 0: return vz_tr("the ifmap words it needs had not arrived", "所需的 ifmap 数据尚未到达");
	case 1: return vz_tr("the filter words it needs had not arrived", "所需的权重数据尚未到达");
	default: return vz_tr("the ofmap buffer was full until its drain", "输出缓冲区已满，等待写回");
	}
}

static void dm_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	dm_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 380 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = 0;
	for (int k = 0; k < NLANES; k++) s->label_w = fmaxf(s->label_w, vz_text_width(f, VZ_FONT_SMALL, lane_name(k)));
	s->label_w += s->cw * 1.5f;
	s->plot_w = W - s->label_w - s->cw * 2;
	s->top = s->lh * 1.5f;
	s->legend_y = H - s->lh * 1.4f;
	s->head = s->lh * 1.5f;
	s->band = (s->legend_y - s->top - s->lh * 0.4f) / (float)s->nruns;
	s->lane = fminf((s->band - s->head - s->lh * 0.6f) / NLANES, s->lh * 2.6f);
	*ww = W;
	*wh = H;
}

static int step_of(const dm_scene *s, const vz_frame *f)
{
	int k = (int)floor(f->t + 1e-9);
	return k < 0 ? 0 : k >= s->steps ? s->steps - 1 : k;
}

static float x_of(const dm_scene *s, double t) { return s->label_w + (float)((t - s->lo) / (s->hi - s->lo)) * s->plot_w; }

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

static float lane_y(const dm_scene *s, int i, int lane) { return s->top + (float)i * s->band + s->head + (float)lane * s->lane; }

static void draw_run(dm_scene *s, vz_frame *f, int i, double now)
{
	const dm_run *r = &s->run[i];
	char t[96];
	for (int k = 0; k < NLANES; k++) {
		float y = lane_y(s, i, k);
		vz_text_draw(f, 0, y + (s->lane - s->lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, k == 4 ? vz_th.highlight : vz_th.text, lane_name(k));
		vz_rect lr = vz_r(s->label_w, y, s->plot_w, s->lane);
		vz_outline(f, lr, 1, vz_th.panel_line);
		vz_cell *lc = vz_cell_add(f, lr, "lane");
		lc->row = i, lc->col = k, lc->group = run_groups[i], lc->state = k == 3 ? "compute" : k == 4 ? "stall" : kind_names[k];
		lc->color = vz_th.bg;
	}
	/* compute idles before its first fold and while stalled: hatched up to now */
	float yc = lane_y(s, i, 3), z = vz_zoom(f);
	double until = fmin(now, (double)r->rep.total_cycles);
	if (until > 0) vz_hatch(f, vz_r(x_of(s, 0), yc, x_of(s, until) - x_of(s, 0), s->lane), vz_th.idle, vz_th.hatch);
	float filled[NLANES];
	for (int k = 0; k < NLANES; k++) filled[k] = -HUGE_VALF;
	for (int k = 0; k < r->n; k++) {
		const dm_ev *e = &r->ev[k];
		if (e->t0 > now) break;
		int lane = lane_of[e->kind];
		float x0 = x_of(s, e->t0), x1 = fmaxf(x_of(s, e->t1), x0 + 1.5f / z);
		if (x1 <= filled[lane] + 0.5f / z) continue; /* thinner than a pixel behind the last bar drawn in the lane */
		filled[lane] = x1;
		vz_color col = kind_color(e->kind, e->fold);
		vz_rect br = vz_r(x0, lane_y(s, i, lane), x1 - x0, s->lane);
		vz_bang_bar(f, br, col, vz_th.bg);
		if (e->kind == EV_FOLD) snprintf(t, sizeof t, "%lld", (long long)e->fold + 1);
		else if (e->kind == EV_STALL) snprintf(t, sizeof t, "%s %.0f", operand_name(e->operand), e->t1 - e->t0);
		else snprintf(t, sizeof t, "%.0f w", e->words);
		float xl = fminf(e->kind == EV_FOLD ? x_of(s, e->until) : x1, e->next < HUGE_VAL ? x_of(s, e->next) : x1);
		label_in(f, vz_r(x0, br.y, xl - x0, s->lane), col, t);
		vz_cell *c = vz_cell_add(f, br, e->kind == EV_FOLD ? "fold" : e->kind == EV_STALL ? "stall" : "transfer");
		c->index = k, c->row = i, c->group = run_groups[i], c->color = col;
		c->state = e->kind == EV_STALL ? operand_name(e->operand) : kind_names[e->kind];
		c->value = e->kind == EV_FOLD || e->kind == EV_STALL ? e->t1 - e->t0 : e->words, c->has_value = true;
	}
	vz_layer(f); /* the array waits while stalled: hatched over the fold it interrupts */
	for (int k = 0; k < r->n && r->ev[k].t0 <= now; k++)
		if (r->ev[k].kind == EV_STALL)
			vz_hatch(f, vz_r(x_of(s, r->ev[k].t0), yc, fmaxf(x_of(s, r->ev[k].t1) - x_of(s, r->ev[k].t0), 1.5f / z), s->lane), vz_th.idle,
			         vz_th.hatch);
	/* where the run's compute ends (total_cycles) */
	float xe = x_of(s, (double)r->rep.total_cycles), y0 = lane_y(s, i, 0);
	vz_line(f, xe, y0 - s->lh * 0.2f, xe, y0 + NLANES * s->lane + 2, 2, vz_th.text);
}

static void draw_heading(dm_scene *s, vz_frame *f, int i)
{
	const dm_run *r = &s->run[i];
	char t[240];
	float y0 = s->top + (float)i * s->band;
	VZ_SNPRINTF_TR(t, sizeof t, "%s: %lldx%lld %s on %s, DRAM %lld words/cycle (%s): %lld cycles, %lld stalled (%.0f%%)",
	               "%s：%lldx%lld %s，%s，DRAM 每周期 %lld 字（%s）：%lld 周期，停顿 %lld（%.0f%%）", r->label, (long long)r->rows,
	               (long long)r->cols, vz_dlp_dataflow(r->dataflow), r->name, (long long)r->bandwidth,
	               r->user ? vz_tr("USER mode", "USER 模式") : vz_tr("CALC mode: an estimate", "CALC 模式：估计"),
	               (long long)r->rep.total_cycles, (long long)r->rep.stall_cycles,
	               r->rep.total_cycles > 0 ? 100.0 * (double)r->rep.stall_cycles / (double)r->rep.total_cycles : 0.0);
	vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, s->plot_w - s->cw);
	float w = vz_text_width(f, VZ_FONT_SMALL, t);
	vz_fill(f, vz_r(s->label_w, y0 + s->lh * 0.15f, w + s->cw, s->lh * 1.1f), vz_th.bg);
	vz_text_draw(f, s->label_w + s->cw * 0.5f, y0 + s->lh * 0.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
	vz_cell *c = vz_cell_add(f, vz_r(s->label_w, y0, s->plot_w, s->lh * 1.4f), "run");
	c->row = i, c->group = run_groups[i], c->state = "run", c->color = vz_th.bg;
	c->value = (double)r->rep.total_cycles, c->has_value = true;
}

static void dm_draw(void *p, vz_frame *f)
{
	dm_scene *s = p;
	relabel(s);
	int step = step_of(s, f);
	double now = moment(s, step);
	float bottom = s->top + (float)s->nruns * s->band - s->lh * 0.3f;
	vz_text_draw(f, 0, 0, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, vz_tr("cycles", "周期"));
	vz_bang_axis(f, s->lo, s->hi, s->label_w, s->plot_w, 0, s->top - 3, bottom);
	vz_line(f, x_of(s, 0), s->top - 3, x_of(s, 0), bottom, 1.5f, vz_th.text_dim); /* cycle 0: the first fold */
	vz_layer(f); /* the lanes over the grid */
	for (int i = 0; i < s->nruns; i++) draw_run(s, f, i, now);
	vz_line(f, x_of(s, now), s->top - 3, x_of(s, now), bottom, 2, vz_th.highlight);
	vz_layer(f); /* the headings over the lines */
	for (int i = 0; i < s->nruns; i++) draw_heading(s, f, i);
	float x = vzs_legend(f, 0, s->legend_y, vz_th.path_a, false, vz_tr("ifmap prefetch", "输入预取"));
	x = vzs_legend(f, x, s->legend_y, vz_okabe_ito[VZ_OI_PURPLE], false, vz_tr("filter prefetch", "权重预取"));
	x = vzs_legend(f, x, s->legend_y, vz_th.common, false, vz_tr("ofmap drain", "输出写回"));
	x = vzs_legend(f, x, s->legend_y, vz_th.active, false, vz_tr("a fold computing", "折叠计算中"));
	x = vzs_legend(f, x, s->legend_y, vz_th.highlight, false, vz_tr("stall", "停顿"));
	vzs_legend(f, x, s->legend_y, vz_th.idle, true, vz_tr("the array idle", "阵列空闲"));
}

static void dm_title(void *p, char *buf, size_t cap)
{
	dm_scene *s = p;
	relabel(s);
	char runs[200] = "";
	for (int i = 0; i < s->nruns; i++)
		VZ_APPEND_TR(runs, sizeof runs, "%s%s: %lld cycles, %lld stalled", "%s%s：%lld 周期，停顿 %lld", i ? "; " : "", s->run[i].label,
		             (long long)s->run[i].rep.total_cycles, (long long)s->run[i].rep.stall_cycles);
	VZ_SNPRINTF_TR(buf, cap, "DMA against compute, double-buffered: %s; %s", "DMA 与计算，双缓冲：%s；%s", runs, vz_dlp_source(s->demo));
}

/* What starts at the moment in run i ("stall 13019 (ofmap), fold 23"). */
static void starting(const dm_scene *s, int i, double now, char *buf, size_t cap)
{
	const dm_run *r = &s->run[i];
	int n = 0;
	buf[0] = '\0';
	for (int k = 0; k < r->n; k++) {
		const dm_ev *e = &r->ev[k];
		if (e->t0 != now) continue;
		if (n++ >= 2) continue;
		if (n > 1) vz_append(buf, cap, ", ");
		if (e->kind == EV_FOLD) VZ_APPEND_TR(buf, cap, "fold %lld", "折叠 %lld", (long long)e->fold + 1);
		else if (e->kind == EV_STALL)
			VZ_APPEND_TR(buf, cap, "a stall of %.0f cycles (%s: %s)", "停顿 %.0f 周期（%s：%s）", e->t1 - e->t0, operand_name(e->operand),
			             stall_why(e->operand));
		else VZ_APPEND_TR(buf, cap, "%s of %.0f words to %.0f", "%s %.0f 字，到 %.0f", lane_name(lane_of[e->kind]), e->words, e->t1 - 1);
	}
	if (!n) snprintf(buf, cap, "%s", vz_tr("nothing starts", "无新事件"));
}

static void dm_step_label(void *p, int step, char *buf, size_t cap)
{
	dm_scene *s = p;
	relabel(s);
	buf[0] = '\0';
	if (step >= s->steps - 1) {
		VZ_APPEND_TR(buf, cap, "%s", "%s", vz_tr("the end: ", "结束："));
		for (int i = 0; i < s->nruns; i++) {
			const dm_run *r = &s->run[i];
			VZ_APPEND_TR(buf, cap, "%s%s %lld cycles (%lld stalled: ifmap %.0f, filter %.0f, ofmap %.0f)", "%s%s %lld 周期（停顿 %lld：ifmap %.0f，"
			             "filter %.0f，ofmap %.0f）", i ? "; " : "", r->label, (long long)r->rep.total_cycles, (long long)r->rep.stall_cycles,
			             r->stall[0], r->stall[1], r->stall[2]);
		}
		return;
	}
	double now = moment(s, step);
	VZ_APPEND_TR(buf, cap, "cycle %.0f: ", "第 %.0f 周期：", now);
	for (int i = 0; i < s->nruns; i++) {
		char a[200];
		starting(s, i, now, a, sizeof a);
		vz_append(buf, cap, "%s%s: %s", i ? "; " : "", s->run[i].label, a);
	}
}

static void dm_counters(void *p, vz_panel *pn)
{
	dm_scene *s = p;
	relabel(s);
	for (int i = 0; i < s->nruns; i++) {
		const dm_run *r = &s->run[i];
		int c = vz_panel_column(pn, r->label, vz_dlp_source(s->demo));
		const struct { const char *name; double v; } rows[] = {
			{"total_cycles", (double)r->rep.total_cycles}, {"stall_cycles", (double)r->rep.stall_cycles},
			{"stall_ifmap", r->stall[0]}, {"stall_filter", r->stall[1]}, {"stall_ofmap", r->stall[2]},
			{"bandwidth", (double)r->bandwidth}, {"ifmap_dram_reads", (double)r->rep.dram[0]},
			{"filter_dram_reads", (double)r->rep.dram[1]}, {"ofmap_dram_writes", (double)r->rep.dram[2]},
			{"avg_ifmap_dram_bw", r->rep.avg_dram_bw[0]}, {"avg_filter_dram_bw", r->rep.avg_dram_bw[1]},
			{"avg_ofmap_dram_bw", r->rep.avg_dram_bw[2]}, {"events", (double)r->n},
		};
		for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) vz_panel_set(pn, c, rows[k].name, rows[k].v);
		if (r->dropped > 0)
			VZ_NOTE_TR(pn, "%s: %lld later events were not kept (a:run(layer, {events = N}) with a larger N)", "%s：其后 %lld 个事件未保留"
			           "（用更大的 N 调用 a:run(layer, {events = N})）", r->label, (long long)r->dropped);
	}
	vz_panel_note(pn, "%s", vz_tr("stall_*: the stall events by operand; bandwidth: DRAM words a cycle; avg_*_dram_bw: words over "
	                              "the cycles that moved them", "stall_*：按操作数分的停顿事件；bandwidth：每周期 DRAM 字数；avg_*_dram_bw："
	                              "字数除以传输所用的周期"));
}

static void dm_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	dm_scene *s = p;
	relabel(s);
	if (c->row < 0 || c->row >= s->nruns) return;
	const dm_run *r = &s->run[c->row];
	if (strcmp(c->kind, "lane") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s: the %s lane", "%s：%s 通道", r->label, lane_name(c->col));
		return;
	}
	if (strcmp(c->kind, "run") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s: %lld cycles (%lld stalled); %lld from the first DRAM read to the last DRAM write (overall_cycles); %s",
		               "%s：%lld 周期（停顿 %lld）；从第一次 DRAM 读到最后一次 DRAM 写共 %lld 周期（overall_cycles）；%s", r->label,
		               (long long)r->rep.total_cycles, (long long)r->rep.stall_cycles, (long long)r->rep.overall_cycles,
		               vz_dlp_source(s->demo));
		return;
	}
	if (c->index < 0 || c->index >= r->n) return;
	const dm_ev *e = &r->ev[c->index];
	if (e->kind == EV_FOLD) {
		int64_t rf = r->rep.row_folds > 0 ? r->rep.row_folds : 1;
		char extra[80] = "";
		if (e->stalled > 0) VZ_SNPRINTF_TR(extra, sizeof extra, " + %.0f stalled", " + %.0f 个停顿周期", e->stalled);
		VZ_SNPRINTF_TR(buf, cap, "%s: fold %lld (row fold %lld, column fold %lld): cycles %.0f to %.0f, %lld compute cycles%s",
		               "%s：折叠 %lld（行折叠 %lld，列折叠 %lld）：周期 %.0f 到 %.0f，%lld 个计算周期%s", r->label, (long long)e->fold + 1,
		               (long long)(e->fold % rf) + 1, (long long)(e->fold / rf) + 1, e->t0, e->t1 - 1, (long long)r->rep.fold_rows,
		               extra);
	} else if (e->kind == EV_STALL) {
		VZ_SNPRINTF_TR(buf, cap, "%s: a stall of %.0f cycles after cycle %.0f: %s (%s); the array resumes at %.0f", "%s：停顿 %.0f 周期，"
		               "在第 %.0f 周期后：%s（%s）；阵列在 %.0f 继续", r->label, e->t1 - e->t0, e->t0 - 1, operand_name(e->operand),
		               stall_why(e->operand), e->t1);
	} else {
		double cyc = e->t1 - e->t0;
		VZ_SNPRINTF_TR(buf, cap, "%s: %s, cycles %.0f to %.0f (%.0f cycles): %.0f words, %.2f words/cycle of %lld%s", "%s：%s，周期 %.0f "
		               "到 %.0f（%.0f 周期）：%.0f 字，每周期 %.2f 字（带宽 %lld）%s", r->label, lane_name(lane_of[e->kind]), e->t0, e->t1 - 1,
		               cyc, e->words, cyc > 0 ? e->words / cyc : 0.0, (long long)r->bandwidth,
		               e->t1 <= 0 ? vz_tr("; before cycle 0: the first fill", "；周期 0 之前：首次填充") : "");
	}
}

static const vz_option dm_options[] = {
	{"bandwidth", VZ_OPT_INT, 1, 1 << 20, NULL, "10", "the demonstration's first run: DRAM words a cycle"},
	{"compare", VZ_OPT_INT, 0, 1 << 20, NULL, "2", "the demonstration's second run's bandwidth (0: one run)"},
	{"dataflow", VZ_OPT_CHOICE, 0, 0, "os ws is", "ws", "the demonstration's dataflow"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_dma = {
	.name = "dma",
	.summary = "lumen.dlp: the double-buffered scratchpads' DMA (ifmap, filter prefetches, ofmap drains) against the folds, "
	           "with the stalls and the operand that caused each (viz.show('dma', report or {a =, b =}))",
	.patterns = "",
	.options = dm_options,
	.create = dm_create,
	.destroy = dm_destroy,
	.steps = dm_steps,
	.variants = dm_variants,
	.variant_name = dm_variant_name,
	.set_variant = dm_set_variant,
	.layout = dm_layout,
	.draw = dm_draw,
	.title = dm_title,
	.step_label = dm_step_label,
	.counters = dm_counters,
	.describe = dm_describe,
};
