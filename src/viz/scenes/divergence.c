/*
 * divergence.c — the warp-divergence scene (PMPP 4.5): warps as 32-lane rows over time, one
 * column per warp instruction in issue order, each active lane coloured by the path it takes,
 * idle lanes hatched, the branch and the reconvergence point marked, and each warp's SIMD
 * efficiency over its divergent region. Tab switches between the demo's patterns (even-odd,
 * half-warp, data, warp, none), all run with the same number of warps; their counters sit side by
 * side.
 *
 * Paths are read from the trace, not from the pattern's name: a source line belongs to path A
 * when every instruction on it after a branch has only lanes that took the branch (the branch
 * event's aux), to path B when only lanes that did not; a line with lanes of both (or instructions
 * of both kinds of warp) is the converged code after the if/else, and a warp's first instruction
 * there after its branch is its reconvergence point.
 * Read next: docs/trace.md ("Warp divergence"), histogram.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define NPATTERNS 5
static const char *const patterns[NPATTERNS] = {"even-odd", "half-warp", "data", "warp", "none"};
static const char *const conditions[NPATTERNS] = {"lane % 2 == 0", "lane < 16", "x[i] > 0.5",
                                                   "warp % 2 == 0", "no branch"};

/* The branch condition as the labels say it (the last pattern has none). */
static const char *condition(int v) { return v == NPATTERNS - 1 ? vz_tr(conditions[v], "无分支") : conditions[v]; }

enum { CLS_COMMON, CLS_A, CLS_B };

typedef struct winst {
	uint8_t kind, space, array, cls;
	uint16_t line;
	uint32_t mask, taken;  /* taken: for a branch, the lanes that took it */
	uint64_t cycle;
	uint32_t latency;
	int64_t event;
} winst;

typedef struct dwarp {
	int block, warp;       /* warp within its block */
	int first, count;      /* instructions: inst[first .. first + count) */
	int branch, reconverge; /* slots (-1: none) */
	double efficiency;     /* over the divergent region (1 without one) */
} dwarp;

typedef struct drun {
	char pattern[16];
	lm_viz_run run;
	winst *inst;
	int ninst;
	dwarp *warps;
	int nwarps, slots;
	bool diverges;
} drun;

typedef struct div_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo;
	int64_t warps;
	drun runs[NPATTERNS];
	int nruns, variant;
	/* layout */
	float label_w, slot_w, lane_h, warp_gap, top, eff_x;
	vzs_grid *grids;      /* a warp drawn as an image when its lanes are too thin (nwarps) */
	int ngrids;
	double t;             /* the time last drawn */
	char fname[32];
} div_scene;

/* ---------------------------------------------------------------- reading a trace */

static void drun_free(drun *d)
{
	vz_run_clear(&d->run);
	vz_free(d->inst);
	vz_free(d->warps);
	memset(d, 0, sizeof *d);
}

/* Warp instructions: consecutive events of one warp at one cycle, line and kind. */
static lm_status read_instructions(drun *d, const lm_trace *t)
{
	int64_t n = lm_trace_count(t);
	int cap = 0, wcap = 0;
	int last_block = -1, last_warp = -1;
	for (int64_t i = 0; i < n; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		if (e->kind == LM_TRACE_BARRIER) continue;
		if ((int)e->block != last_block || (int)e->warp != last_warp) {
			if (!vz_grow((void **)&d->warps, &wcap, d->nwarps + 1, sizeof *d->warps, 64))
				return lm_last_status();
			dwarp *w = &d->warps[d->nwarps++];
			memset(w, 0, sizeof *w);
			w->block = (int)e->block;
			w->warp = e->warp;
			w->first = d->ninst;
			w->branch = w->reconverge = -1;
			last_block = (int)e->block;
			last_warp = e->warp;
		}
		dwarp *w = &d->warps[d->nwarps - 1];
		winst *prev = w->count ? &d->inst[d->ninst - 1] : NULL;
		if (prev && prev->cycle == e->cycle && prev->line == e->line && prev->kind == e->kind) {
			if (e->kind == LM_TRACE_BRANCH) prev->taken = e->aux;
			continue;
		}
		if (!vz_grow((void **)&d->inst, &cap, d->ninst + 1, sizeof *d->inst, 256))
			return lm_last_status();
		winst *in = &d->inst[d->ninst++];
		memset(in, 0, sizeof *in);
		in->kind = e->kind;
		in->space = e->space;
		in->array = e->array;
		in->line = e->line;
		in->mask = e->mask;
		in->taken = e->kind == LM_TRACE_BRANCH ? e->aux : 0;
		in->cycle = e->cycle;
		in->latency = e->latency;
		in->event = i;
		w->count++;
		if (e->kind == LM_TRACE_BRANCH && w->branch < 0) w->branch = w->count - 1;
	}
	return LM_OK;
}

/* Lines after a branch: A-only, B-only or common (see the header comment). */
static lm_status classify(drun *d)
{
	/* per source line: seen on path A only, on path B only, or with lanes of both */
	uint8_t *a_ok = vz_calloc(3 * 65536, 1);
	if (!a_ok) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
	uint8_t *b_ok = a_ok + 65536, *mixed = b_ok + 65536;
	for (int w = 0; w < d->nwarps; w++) {
		const dwarp *dw = &d->warps[w];
		if (dw->branch < 0) continue;
		const winst *br = &d->inst[dw->first + dw->branch];
		uint32_t all = br->mask, taken = br->taken & all, other = all & ~taken;
		for (int k = dw->branch + 1; k < dw->count; k++) {
			const winst *in = &d->inst[dw->first + k];
			bool in_a = (in->mask & ~taken) == 0, in_b = (in->mask & ~other) == 0;
			if (in_a && !in_b) a_ok[in->line] = 1;
			else if (in_b && !in_a) b_ok[in->line] = 1;
			else mixed[in->line] = 1;
		}
	}
	for (int w = 0; w < d->nwarps; w++) {
		dwarp *dw = &d->warps[w];
		int active = 0, slots = 0;
		for (int k = 0; k < dw->count; k++) {
			winst *in = &d->inst[dw->first + k];
			in->cls = CLS_COMMON;
			if (dw->branch >= 0 && k > dw->branch && !mixed[in->line] && !(a_ok[in->line] && b_ok[in->line]))
				in->cls = a_ok[in->line] ? CLS_A : b_ok[in->line] ? CLS_B : CLS_COMMON;
			if (dw->branch >= 0 && k > dw->branch && dw->reconverge < 0 && in->cls == CLS_COMMON)
				dw->reconverge = k;
			if (dw->branch >= 0 && k > dw->branch && dw->reconverge < 0) {
				active += __builtin_popcount(in->mask);
				slots++;
			}
		}
		dw->efficiency = slots ? (double)active / (32.0 * slots) : 1.0;
		if (dw->count > d->slots) d->slots = dw->count;
		if (dw->branch >= 0 && dw->efficiency < 1) d->diverges = true;
	}
	vz_free(a_ok);
	return LM_OK;
}

static lm_status drun_build(drun *d, const lm_viz_run *run, const char *pattern, const char *fname)
{
	memset(d, 0, sizeof *d);
	snprintf(d->pattern, sizeof d->pattern, "%s", pattern);
	vz_run_copy(&d->run, run);
	if (vz_trace_check(run->trace, fname) != LM_OK || read_instructions(d, run->trace) != LM_OK) {
		drun_free(d);
		return lm_last_status();
	}
	if (d->nwarps == 0) {
		drun_free(d);
		return lm_set_error(LM_ERR_ARG, "%s: the divergence trace has no warp instructions", fname);
	}
	if (classify(d) != LM_OK) {
		drun_free(d);
		return LM_ERR_NOMEM;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

static void div_destroy(void *p)
{
	div_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < s->nruns; i++) drun_free(&s->runs[i]);
	for (int i = 0; i < s->ngrids; i++) vzs_grid_free(&s->grids[i]);
	vz_free(s->grids);
	vz_free(s);
}

static int pattern_index(const char *p)
{
	for (int i = 0; i < NPATTERNS; i++)
		if (strcmp(p, patterns[i]) == 0) return i;
	return -1;
}

/* Every pattern with the same warps and block; the given run's trace for its own. */
static lm_status run_patterns(div_scene *s, const lm_viz_run *have, int64_t block, const char *fname)
{
	for (int i = 0; i < NPATTERNS; i++) {
		lm_status st;
		if (have && strcmp(have->algo, patterns[i]) == 0) {
			st = drun_build(&s->runs[i], have, patterns[i], fname);
		} else {
			lm_viz_run r;
			st = vzs_run_divergence(patterns[i], s->warps, block, &r, fname);
			if (st == LM_OK) {
				st = drun_build(&s->runs[i], &r, patterns[i], fname);
				vz_run_clear(&r);
			}
		}
		if (st != LM_OK) return st;
		s->nruns++;
	}
	return LM_OK;
}

static void *div_create(const vz_build *b)
{
	div_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	lm_status st = LM_OK;
	int64_t block = vz_opt_int(b->opts, "block", 0);
	const lm_viz_run *from = traced ? traced : b->nruns ? &b->runs[0] : NULL;
	if (traced) {
		if (vz_trace_check(traced->trace, b->fname) != LM_OK) st = LM_ERR_ARG;
		else if (vz_trace_array(traced->trace, "x", LM_SPACE_GLOBAL, -1) < 0 ||
		         vz_trace_array(traced->trace, "y", LM_SPACE_GLOBAL, -1) < 0)
			st = lm_set_error(LM_ERR_ARG, "%s: not a trace of the divergence demo (it has no arrays x "
			                  "and y): %s", b->fname, lm_trace_name(traced->trace));
		lm_trace_launch la;
		if (st == LM_OK && lm_trace_launch_get(traced->trace, 0, &la) == LM_OK) block = la.block[0];
	}
	s->demo = from && !traced;
	s->warps = from ? (int64_t)vz_run_counter(from, "warps", 4) : vz_opt_int(b->opts, "warps", 4);
	const char *first = from ? from->algo : vz_opt_string(b->opts, "pattern", "even-odd");
	s->variant = pattern_index(first) >= 0 ? pattern_index(first) : 0;
	if (st == LM_OK) st = run_patterns(s, traced, block, b->fname);
	if (st != LM_OK) {
		div_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, variants, layout */

static int div_steps(void *p)
{
	div_scene *s = p;
	return s->runs[s->variant].slots + 1;
}

static int div_variants(void *p) { return ((div_scene *)p)->nruns; }
static const char *div_variant_name(void *p, int v) { return ((div_scene *)p)->runs[v].pattern; }
static void div_set_variant(void *p, int v) { ((div_scene *)p)->variant = v; }

static void div_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	div_scene *s = p;
	const drun *d = &s->runs[s->variant];
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	s->top = lh * 4.2f;
	s->label_w = 15 * cw;
	float eff_w = 22 * cw;
	s->slot_w = (c->w - s->label_w - eff_w) / (float)(d->slots > 0 ? d->slots : 1);
	float h = c->h - s->top - lh * 2.4f;
	s->warp_gap = fmaxf(2, fminf(8 * c->scale, h * 0.25f / (float)d->nwarps));
	s->lane_h = (h - s->warp_gap * (float)(d->nwarps - 1)) / (32.0f * (float)d->nwarps);
	if (s->lane_h > 6 * c->scale) s->lane_h = 6 * c->scale;
	s->eff_x = s->label_w + s->slot_w * (float)d->slots + cw;
	if (s->ngrids < d->nwarps) { /* images for the warps, kept across frames */
		vzs_grid *g = vz_realloc(s->grids, (size_t)d->nwarps * sizeof *g);
		if (g) {
			memset(g + s->ngrids, 0, (size_t)(d->nwarps - s->ngrids) * sizeof *g);
			s->grids = g;
			s->ngrids = d->nwarps;
		}
	}
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing */

static vz_color class_color(int cls)
{
	return cls == CLS_A ? vz_th.path_a : cls == CLS_B ? vz_th.path_b : vz_th.common;
}

static const char *short_kind(const winst *in)
{
	switch (in->kind) {
	case LM_TRACE_LOAD: return vz_tr("load", "加载");
	case LM_TRACE_STORE: return vz_tr("store", "存储");
	case LM_TRACE_ADD: return vz_tr("add", "加法");
	case LM_TRACE_ATOMIC: return vz_tr("atomic", "原子");
	case LM_TRACE_BRANCH: return vz_tr("branch", "分支");
	default: return "?";
	}
}

/* How lane l looks at slot `slot` of warp dw, at step k. */
static vz_color lane_look(const drun *d, const dwarp *dw, int slot, int l, int k, const char **state)
{
	const winst *in = &d->inst[dw->first + slot];
	if (slot >= k) {
		*state = "pending";
		return vz_th.pending;
	}
	if (!((in->mask >> l) & 1u)) {
		*state = "idle";
		return vz_th.idle;
	}
	*state = in->cls == CLS_A ? "path_a" : in->cls == CLS_B ? "path_b" : "active";
	return class_color(in->cls);
}

static void lane_fields(const drun *d, const dwarp *dw, vz_cell *cell, int w, int slot, int l, const winst *in)
{
	cell->group = d->pattern;
	cell->warp = dw->warp;
	cell->block = dw->block;
	cell->lane = l;
	cell->thread = dw->warp * 32 + l;
	cell->step = slot;
	cell->row = w;
	bool on = (in->mask >> l) & 1u;
	cell->event = on ? in->event + __builtin_popcount(in->mask & ((1u << l) - 1u)) : -1;
	cell->tag = dw->first + slot;
}

static float warp_y(const div_scene *s, int w) { return s->top + (float)w * (32 * s->lane_h + s->warp_gap); }

static void draw_warp(vz_frame *f, div_scene *s, const drun *d, int w, int k)
{
	const dwarp *dw = &d->warps[w];
	float y0 = warp_y(s, w), lh = vz_text_height(f, VZ_FONT_SMALL), wh = 32 * s->lane_h;
	if (!vz_visible(f, vz_r(0, y0, s->eff_x + 200, wh))) return;
	/* every warp's name when there is room, else every few */
	int every = wh + s->warp_gap >= lh * 0.9f ? 1 : (int)ceilf(lh * 1.2f / (wh + s->warp_gap));
	if (w % every == 0)
		VZ_TEXTF_TR(f, 0, y0 + (wh - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "warp %d", "线程束 %d", w);
	if (vzs_dense(f, s->lane_h)) { /* the warp as one image: 32 rows of lanes, a column per slot */
		vz_color *px = vz_malloc((size_t)32 * (size_t)d->slots * sizeof *px);
		if (!px) return;
		const char *state;
		for (int l = 0; l < 32; l++)
			for (int slot = 0; slot < d->slots; slot++)
				px[l * d->slots + slot] = slot < dw->count ? lane_look(d, dw, slot, l, k, &state) : vz_th.bg;
		vz_cell *g = vzs_grid_draw(f, &s->grids[w], vz_r(s->label_w, y0, s->slot_w * (float)d->slots, wh), 32,
		                           d->slots, px, "lane", -1);
		vz_free(px);
		g->group = d->pattern;
		g->tag = w; /* the warp; describe turns the grid's row and col into lane and slot */
		g->warp = dw->warp;
		g->block = dw->block;
	}
	for (int slot = 0; slot < dw->count && !vzs_dense(f, s->lane_h); slot++) {
		const winst *in = &d->inst[dw->first + slot];
		float x = s->label_w + (float)slot * s->slot_w;
		for (int l = 0; l < 32; l++) {
			/* lanes touch: alternating lanes read as stripes, not as noise */
			vz_rect r = vz_r(x + s->slot_w * 0.04f, y0 + (float)l * s->lane_h, s->slot_w * 0.92f,
			                 fmaxf(s->lane_h, 0.5f));
			if (!vz_visible(f, r)) continue;
			const char *state;
			vz_color fill = lane_look(d, dw, slot, l, k, &state);
			if (strcmp(state, "idle") == 0) vz_hatch(f, r, vz_th.idle, vz_th.hatch);
			else vz_fill(f, r, fill);
			vz_cell *cell = vz_cell_add(f, r, "lane");
			cell->state = state;
			cell->color = fill;
			lane_fields(d, dw, cell, w, slot, l, in);
		}
	}
	/* the branch and the reconvergence point */
	if (dw->branch >= 0 && dw->branch < k) {
		float x = s->label_w + (float)(dw->branch + 1) * s->slot_w;
		vz_line(f, x, y0 - 1, x, y0 + wh + 1, 1.5f, vz_th.text);
	}
	if (dw->reconverge >= 0 && dw->reconverge < k) {
		float x = s->label_w + (float)dw->reconverge * s->slot_w;
		vz_dashed(f, x, y0 - 2, x, y0 + wh + 2, 2, 4, vz_th.highlight);
	}
	if (k >= dw->count && wh >= lh * 0.9f) {
		if (dw->branch >= 0)
			VZ_TEXTF_TR(f, s->eff_x, y0 + (wh - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
			            "SIMD efficiency %3.0f%%", "SIMD 效率 %3.0f%%", 100 * dw->efficiency);
		else
			VZ_TEXTF_TR(f, s->eff_x, y0 + (wh - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
			            "no branch: %3.0f%%", "无分支：%3.0f%%", 100 * dw->efficiency);
	}
}

static void draw_header(vz_frame *f, div_scene *s, const drun *d, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	const dwarp *w0 = &d->warps[0];
	float y = s->top - lh * 2.5f;
	vz_text_draw(f, 0, y + lh * 1.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
	             vz_tr("warp 0 issues:", "线程束 0 发射："));
	for (int slot = 0; slot < w0->count; slot++) {
		const winst *in = &d->inst[w0->first + slot];
		float x = s->label_w + ((float)slot + 0.5f) * s->slot_w;
		vz_color c = slot < k ? vz_th.text : vz_th.text_dim;
		if (vz_text_fits(f, VZ_FONT_SMALL, vz_tr("branch", "分支"), s->slot_w * 0.98f) ||
		    (vz_text_fits(f, VZ_FONT_SMALL, short_kind(in), s->slot_w * 0.98f)))
			vz_text_draw(f, x, y + lh * 1.2f, VZ_FONT_SMALL, VZ_ALIGN_CENTER, c, short_kind(in));
		char cyc[24];
		snprintf(cyc, sizeof cyc, "%llu", (unsigned long long)in->cycle);
		if (vz_text_fits(f, VZ_FONT_SMALL, cyc, s->slot_w * 0.98f))
			vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text_dim, cyc);
	}
	vz_text_draw(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, vz_tr("modelled cycle:", "模型周期："));
	if (w0->reconverge >= 0) { /* under the last warp, where the dashed lines end */
		float x = s->label_w + (float)w0->reconverge * s->slot_w;
		float yb = warp_y(s, d->nwarps - 1) + 32 * s->lane_h + lh * 0.3f;
		vz_text_draw(f, x, yb, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.highlight, vz_tr("reconvergence", "重新汇合"));
	}
	if (w0->branch >= 0) {
		float x = s->label_w + (float)(w0->branch + 1) * s->slot_w;
		float yb = warp_y(s, d->nwarps - 1) + 32 * s->lane_h + lh * 0.3f;
		vz_text_draw(f, x, yb, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text, vz_tr("branch", "分支"));
	}
}

static void div_draw(void *p, vz_frame *f)
{
	div_scene *s = p;
	const drun *d = &s->runs[s->variant];
	s->t = f->t;
	int k = (int)floor(f->t + 1e-9);
	float x = 0;
	char a[96];
	VZ_SNPRINTF_TR(a, sizeof a, "path A (took the branch: %s)", "路径 A（进入分支：%s）", condition(s->variant));
	x = vzs_legend(f, x, 0, vz_th.path_a, false, a);
	x = vzs_legend(f, x, 0, vz_th.path_b, false, vz_tr("path B (did not)", "路径 B（未进入）"));
	x = vzs_legend(f, x, 0, vz_th.common, false,
	               vz_tr("both paths: before the branch, after reconvergence", "两条路径共有：分支之前、汇合之后"));
	x = vzs_legend(f, x, 0, vz_th.idle, true, vz_tr("idle lane", "空闲通道"));
	draw_header(f, s, d, k);
	for (int w = 0; w < d->nwarps; w++) draw_warp(f, s, d, w, k);
}

/* ---------------------------------------------------------------- text */

static void div_title(void *p, char *buf, size_t cap)
{
	div_scene *s = p;
	const drun *d = &s->runs[s->variant];
	VZ_SNPRINTF_TR(buf, cap, "divergence: %s (%s), %d warps of 32 lanes over time%s",
	               "线程束分化：%s（%s），%d 个线程束（各 32 个通道）随时间展开%s", d->pattern, condition(s->variant),
	               d->nwarps, s->demo ? vz_tr(" (emulated; the measured run has no trace)", "（模拟运行；实测的运行没有 trace）") : "");
}

static void div_step_label(void *p, int step, char *buf, size_t cap)
{
	div_scene *s = p;
	const drun *d = &s->runs[s->variant];
	if (step == 0) {
		snprintf(buf, cap, "%s", vz_tr("each column is one warp instruction; a warp runs the two paths of a "
		                               "divergent branch one after the other",
		                               "每一列是一条线程束指令；分支发生分化时，线程束先后执行两条路径"));
		return;
	}
	const dwarp *w0 = &d->warps[0];
	if (step > w0->count) {
		snprintf(buf, cap, "%s", vz_tr("warp 0 is done", "线程束 0 已执行完毕"));
		return;
	}
	const winst *in = &d->inst[w0->first + step - 1];
	VZ_SNPRINTF_TR(buf, cap, "warp 0, instruction %d: %s at cycle %llu, %d of 32 lanes active%s",
	               "线程束 0，第 %d 条指令：%s，周期 %llu，%d/32 个通道活跃%s", step, short_kind(in),
	               (unsigned long long)in->cycle, __builtin_popcount(in->mask),
	               step - 1 == w0->reconverge ? vz_tr(" (reconverged)", "（已重新汇合）")
	               : in->cls == CLS_A         ? vz_tr(" (path A)", "（路径 A）")
	               : in->cls == CLS_B         ? vz_tr(" (path B)", "（路径 B）")
	                                          : "");
}

static void div_counters(void *p, vz_panel *pn)
{
	div_scene *s = p;
	static const char *const names[] = {"simd_efficiency", "simd_efficiency_kernel",
	                                    "divergent_branches", "modelled_cycles", "adds", "warps",
	                                    "time_ms", NULL};
	for (int i = 0; i < s->nruns; i++) vzs_panel_add(pn, s->runs[i].pattern, &s->runs[i].run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	vz_panel_note(pn, "%s", vz_tr("simd_efficiency: active lanes / (32 x instructions) over the divergent region "
	                              "(from the branch to reconvergence); _kernel: over the whole kernel.",
	                              "simd_efficiency：分化区域（从分支到重新汇合）内的活跃通道数 / (32 × 指令数)；"
	                              "_kernel：整个内核的同一比值。"));
}

static void div_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	div_scene *s = p;
	const drun *d = &s->runs[s->variant];
	if (strcmp(c->kind, "lane") != 0) return;
	if (c->rows > 0) { /* a lane of a warp drawn as an image: row = lane, col = slot */
		int w = c->tag, slot = c->col, l = c->row;
		if (w < 0 || w >= d->nwarps || slot >= d->warps[w].count) return;
		const dwarp *dw = &d->warps[w];
		c->color = lane_look(d, dw, slot, l, (int)floor(s->t + 1e-9), &c->state);
		lane_fields(d, dw, c, w, slot, l, &d->inst[dw->first + slot]);
		c->rows = c->cols = -1;
	}
	if (c->tag < 0 || c->tag >= d->ninst) return;
	const winst *in = &d->inst[c->tag];
	VZ_SNPRINTF_TR(buf, cap, "block %d, warp %d, lane %d (thread %d)\ninstruction %d: %s, line %u, cycle %llu + %u",
	               "线程块 %d，线程束 %d，通道 %d（线程 %d）\n第 %d 条指令：%s，第 %u 行，周期 %llu + %u", c->block, c->warp,
	               c->lane, c->thread, c->step + 1, short_kind(in), in->line, (unsigned long long)in->cycle,
	               in->latency);
	VZ_APPEND_TR(buf, cap, "\n%s; %d of 32 lanes active", "\n%s；%d/32 个通道活跃",
	             strcmp(c->state, "idle") == 0      ? vz_tr("this lane is idle", "该通道空闲")
	             : strcmp(c->state, "path_a") == 0  ? vz_tr("path A", "路径 A")
	             : strcmp(c->state, "path_b") == 0  ? vz_tr("path B", "路径 B")
	             : strcmp(c->state, "pending") == 0 ? vz_tr("not issued yet", "尚未发射")
	                                                : vz_tr("converged code", "汇合的代码"),
	             __builtin_popcount(in->mask));
	if (in->kind == LM_TRACE_BRANCH) VZ_APPEND_TR(buf, cap, "\nlanes that took it: 0x%08x", "\n进入分支的通道：0x%08x", in->taken);
}

static const vz_option div_options[] = {
	{"pattern", VZ_OPT_CHOICE, 0, 0, "even-odd half-warp data warp none", "even-odd", "the branch shown first"},
	{"warps", VZ_OPT_INT, 1, 256, NULL, "4", "warps of 32 threads"},
	{"block", VZ_OPT_INT, 32, 1024, NULL, "0", "threads per block (a multiple of 32)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_divergence = {
	.name = "divergence",
	.summary = "warps as 32-lane rows over time: the paths of a branch, idle lanes, reconvergence, SIMD efficiency",
	.patterns = "divergence",
	.options = div_options,
	.create = div_create,
	.destroy = div_destroy,
	.steps = div_steps,
	.variants = div_variants,
	.variant_name = div_variant_name,
	.set_variant = div_set_variant,
	.layout = div_layout,
	.draw = div_draw,
	.title = div_title,
	.step_label = div_step_label,
	.counters = div_counters,
	.describe = div_describe,
};
