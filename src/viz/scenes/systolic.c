/*
 * systolic.c — the systolic scene: lumen.dlp's R x C array (lua/lumen/dlp.lua, src/dlp/dlp.c; AICS
 * chapters 6-7) one cycle a step, PE by PE: which PEs multiply-accumulate (orange), what each holds
 * (the stationary operand: OS the output's partial sum, WS the weight, IS the input), the operands
 * entering the array's edges skewed one cycle per row and column, the wavefront, the fold being
 * computed in the map of folds, and the MACs per cycle (the fill and drain of the wavefront) with
 * the utilization so far. Every state is lm_dlp_pe_state's (what a:pe_state says), every count
 * lm_dlp_run's, i.e. SCALE-Sim's counting; the steps are compute cycles (demand rows), the stalls
 * of the scratchpads are the dma scene's.
 * viz.show('systolic', array, layer) draws an array of up to 32 x 32 PEs (steps: every fold's cycles
 * up to MAX_CYCLES, or one fold with the option fold); without data a 4 x 4 OS array on a GEMM
 * 6 x 5 x 4 (options rows, cols, dataflow, m, n, k).
 * Also here, shared with dma.c and energy.c (vz.h): the source label and the dataflows' names.
 * Read next: include/lumen/dlp.h (lm_dlp_pe_state), dma.c, energy.c, docs/viz.md ("systolic").
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

/* ---------------------------------------------------------------- shared with dma.c and energy.c */

const char *vz_dlp_source(bool demo)
{
	if (demo)
		return vz_tr("emulated: lumen.dlp (SCALE-Sim v2 counting): a demonstration", "模拟：lumen.dlp（SCALE-Sim v2 计数）：演示");
	return vz_tr("emulated: lumen.dlp (SCALE-Sim v2 counting)", "模拟：lumen.dlp（SCALE-Sim v2 计数）");
}

const char *vz_dlp_dataflow(int dataflow) { return dataflow == LM_DLP_OS ? "OS" : dataflow == LM_DLP_WS ? "WS" : "IS"; }

const char *vz_dlp_stationary(int dataflow)
{
	switch (dataflow) {
	case LM_DLP_OS: return vz_tr("output stationary", "输出驻留");
	case LM_DLP_WS: return vz_tr("weight stationary", "权重驻留");
	default: return vz_tr("input stationary", "输入驻留");
	}
}

lm_dlp_config vz_dlp_config(int64_t rows, int64_t cols, int dataflow, int64_t bandwidth)
{
	lm_dlp_config c = lm_dlp_config_default();
	c.rows = rows, c.cols = cols, c.dataflow = (lm_dlp_dataflow)dataflow, c.bandwidth = bandwidth;
	return c;
}

enum { F_BANDWIDTH = VZ_DLP_BANDWIDTH, F_DATAFLOW = VZ_DLP_DATAFLOW, F_ARRAY, F_MODE, F_LAYER, F_COUNT };

static bool facet_same(int f, const vz_dlp_facets *a, const vz_dlp_facets *b)
{
	switch (f) {
	case F_BANDWIDTH: return a->bandwidth == b->bandwidth;
	case F_DATAFLOW: return a->dataflow == b->dataflow;
	case F_ARRAY: return a->rows == b->rows && a->cols == b->cols;
	case F_MODE: return a->user == b->user;
	default: return strcmp(a->layer ? a->layer : "", b->layer ? b->layer : "") == 0;
	}
}

static void facet_text(char *buf, size_t cap, int f, const vz_dlp_facets *a)
{
	switch (f) {
	case F_BANDWIDTH: VZ_APPEND_TR(buf, cap, "bandwidth %lld", "带宽 %lld", (long long)a->bandwidth); break;
	case F_DATAFLOW: vz_append(buf, cap, "%s", vz_dlp_dataflow(a->dataflow)); break;
	case F_ARRAY: vz_append(buf, cap, "%lldx%lld", (long long)a->rows, (long long)a->cols); break;
	case F_MODE: vz_append(buf, cap, "%s", a->user ? "USER" : "CALC"); break;
	default: vz_append(buf, cap, "%s", a->layer ? a->layer : "?");
	}
}

char *vz_dlp_label(char *buf, size_t cap, const vz_dlp_facets *runs, int n, int i, int first)
{
	buf[0] = '\0';
	const char *given = runs[i].given ? runs[i].given : "";
	if (given[0]) vz_append(buf, cap, "%s (", given);
	size_t at = strlen(buf);
	const int order[F_COUNT + 1] = {first, F_BANDWIDTH, F_DATAFLOW, F_ARRAY, F_MODE, F_LAYER};
	bool seen[F_COUNT] = {false};
	for (int k = 0; k <= F_COUNT; k++) {
		int f = order[k];
		if (seen[f]) continue;
		seen[f] = true;
		bool differs = n == 1 && f == first;
		for (int j = 1; j < n; j++) differs = differs || !facet_same(f, &runs[0], &runs[j]);
		if (!differs) continue;
		if (strlen(buf) > at) vz_append(buf, cap, ", ");
		facet_text(buf, cap, f, &runs[i]);
	}
	bool same = given[0] && strlen(buf) > at; /* {os = r}: "os", not "os (OS)" */
	for (size_t k = 0; same && (buf[at + k] || given[k]); k++)
		same = tolower((unsigned char)buf[at + k]) == tolower((unsigned char)given[k]);
	if (same) buf[at] = '\0';
	if (strlen(buf) == at) { /* nothing differs (or the name says it): the name given, else the run's number */
		if (given[0]) snprintf(buf, cap, "%s", given);
		else VZ_SNPRINTF_TR(buf, cap, "run %d", "运行 %d", i + 1);
	} else if (given[0]) {
		vz_append(buf, cap, ")");
	}
	return buf;
}

/* ---------------------------------------------------------------- the scene */

#define MAX_PES 32      /* rows and columns drawn cell by cell */
#define MAX_CYCLES 4096 /* steps: the compute cycles of the folds shown */

/* What a PE is doing, as drawn (and as viz.layout() names it). */
enum { PE_PENDING, PE_LOADING, PE_HOLDS, PE_MAC, PE_PARTIAL, PE_DONE, PE_UNUSED, PE_NSTATES };
static const char *const state_names[PE_NSTATES] = {"pending", "loading", "holds", "mac", "partial", "done", "unused"};

typedef struct sy_scene {
	lm_dlp_config cfg;
	lm_dlp_layer layer;
	lm_dlp_report rep;
	char name[48];
	bool demo;
	int64_t R, C, folds, fold0, nfolds, fold_rows, cycles; /* folds shown: fold0 .. fold0 + nfolds - 1 */
	int steps, drawn; /* drawn: the step last drawn (the hover of a fold) */
	int32_t *macs;   /* MACs in each cycle shown */
	int64_t *cum;    /* MACs up to and including each cycle shown, the folds before the first shown included */
	lm_dlp_pe *pe;   /* scratch: the PEs at one cycle */
	vz_color *fold_color;
	uint8_t *fold_state;
	vzs_grid fold_grid;
	/* layout */
	float lh, tl, cw, tcw, top, left_w, gx, gy, cell, rx, rw, map_y, map_h, map_cell, stats_y, chart_y, chart_h, legend_y;
} sy_scene;

static void sy_destroy(void *p)
{
	sy_scene *s = p;
	if (!s) return;
	vz_free(s->macs);
	vz_free(s->cum);
	vz_free(s->pe);
	vz_free(s->fold_color);
	vz_free(s->fold_state);
	vzs_grid_free(&s->fold_grid);
	vz_free(s);
}

/* The fold shown at step k and its cycle (-1: before the first cycle, step 0). */
static void at_step(const sy_scene *s, int k, int64_t *fold, int64_t *t)
{
	if (k <= 0) {
		*fold = s->fold0, *t = -1;
		return;
	}
	int64_t g = k - 1;
	*fold = s->fold0 + g / s->fold_rows;
	*t = g % s->fold_rows;
}

/* SCALE-Sim's order: column folds outside, row folds inside. */
static int64_t fold_row(const sy_scene *s, int64_t f) { return f % s->rep.row_folds; }
static int64_t fold_col(const sy_scene *s, int64_t f) { return f / s->rep.row_folds; }

static void pe_at(sy_scene *s, int64_t fold, int64_t t)
{
	if (lm_dlp_pe_state(&s->cfg, &s->layer, fold_row(s, fold), fold_col(s, fold), t, s->pe) != LM_OK)
		for (int64_t i = 0; i < s->R * s->C; i++) s->pe[i] = (lm_dlp_pe){0, -1, -1, -1}; /* (checked at create) */
}

/* The demonstration's array (dlp.array's defaults) and a GEMM. */
static void demo_config(const lm_viz_opts *o, lm_dlp_config *c, lm_dlp_layer *l)
{
	const char *df = vz_opt_string(o, "dataflow", "os");
	*c = vz_dlp_config(vz_opt_int(o, "rows", 4), vz_opt_int(o, "cols", 4),
	                   strcmp(df, "ws") == 0 ? LM_DLP_WS : strcmp(df, "is") == 0 ? LM_DLP_IS : LM_DLP_OS, 10);
	int64_t m = vz_opt_int(o, "m", 6), n = vz_opt_int(o, "n", 5), k = vz_opt_int(o, "k", 4);
	*l = (lm_dlp_layer){.ifmap_h = m, .ifmap_w = k, .filter_h = 1, .filter_w = k, .channels = 1, .filters = n, .stride = 1};
}

static void *sy_create(const vz_build *b)
{
	static const char *const demo_opts[] = {"rows", "cols", "dataflow", "m", "n", "k"};
	const lm_viz_dlp *d = b->dlp;
	if (d)
		for (size_t i = 0; i < sizeof demo_opts / sizeof demo_opts[0]; i++)
			if (vz_opt_given(b->opts, demo_opts[i])) {
				lm_set_error(LM_ERR_ARG, "%s: the systolic scene: option %s is the demonstration's; the array and layer given "
				             "decide it", b->fname, demo_opts[i]);
				return NULL;
			}
	sy_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	s->demo = !d;
	if (d) {
		s->cfg = d->config, s->layer = d->layer;
		snprintf(s->name, sizeof s->name, "%s", d->name ? d->name : "layer");
	} else {
		demo_config(b->opts, &s->cfg, &s->layer);
		snprintf(s->name, sizeof s->name, "gemm");
	}
	s->R = s->cfg.rows, s->C = s->cfg.cols;
	if (s->R < 1 || s->C < 1 || s->R > MAX_PES || s->C > MAX_PES) {
		lm_set_error(LM_ERR_ARG, "%s: the systolic scene draws arrays of 1 to %d x %d PEs cell by cell, got %lld x %lld "
		             "(a:with{rows = 16, cols = 16} is a smaller one)", b->fname, MAX_PES, MAX_PES, (long long)s->R,
		             (long long)s->C);
		goto fail;
	}
	if (lm_dlp_run(&s->cfg, &s->layer, &s->rep, NULL) != LM_OK) {
		vz_error_prefix(0, b->fname);
		goto fail;
	}
	s->folds = s->rep.row_folds * s->rep.col_folds;
	s->fold_rows = s->rep.fold_rows;
	int64_t want = vz_opt_int(b->opts, "fold", 0);
	if (want > s->folds) {
		lm_set_error(LM_ERR_ARG, "%s: the systolic scene: option fold = %lld, but the layer has %lld folds (%lld x %lld)", b->fname,
		             (long long)want, (long long)s->folds, (long long)s->rep.row_folds, (long long)s->rep.col_folds);
		goto fail;
	}
	s->fold0 = want > 0 ? want - 1 : 0;
	s->nfolds = want > 0 ? 1 : s->folds;
	if (s->nfolds * s->fold_rows > MAX_CYCLES) s->nfolds = MAX_CYCLES / s->fold_rows > 0 ? MAX_CYCLES / s->fold_rows : 1;
	s->cycles = s->nfolds * s->fold_rows < MAX_CYCLES ? s->nfolds * s->fold_rows : MAX_CYCLES;
	s->steps = (int)s->cycles + 1;
	s->macs = vz_calloc((size_t)s->cycles, sizeof *s->macs);
	s->cum = vz_calloc((size_t)s->cycles, sizeof *s->cum);
	s->pe = vz_calloc((size_t)(s->R * s->C), sizeof *s->pe);
	if (!s->macs || !s->cum || !s->pe) goto fail;
	int64_t before = 0; /* the MACs of the folds before the first shown: ru x cu PEs, T each */
	for (int64_t f = 0; f < s->fold0; f++) {
		int64_t ru = s->rep.Sr - fold_row(s, f) * s->R, cu = s->rep.Sc - fold_col(s, f) * s->C;
		before += (ru < s->R ? ru : s->R) * (cu < s->C ? cu : s->C) * s->rep.T;
	}
	for (int64_t g = 0; g < s->cycles; g++) { /* the MACs of each cycle, as lm_dlp_pe_state gives them */
		int64_t f = s->fold0 + g / s->fold_rows;
		if (lm_dlp_pe_state(&s->cfg, &s->layer, fold_row(s, f), fold_col(s, f), g % s->fold_rows, s->pe) != LM_OK) {
			vz_error_prefix(0, b->fname);
			goto fail;
		}
		for (int64_t i = 0; i < s->R * s->C; i++) s->macs[g] += s->pe[i].mac;
		s->cum[g] = (g ? s->cum[g - 1] : before) + s->macs[g];
	}
	return s;
fail:
	sy_destroy(s);
	return NULL;
}

static int sy_steps(void *p) { return ((sy_scene *)p)->steps; }
static int sy_variants(void *p) { (void)p; return 1; }
static const char *sy_variant_name(void *p, int v) { (void)p, (void)v; return "array"; }
static void sy_set_variant(void *p, int v) { (void)p, (void)v; }

static int step_of(const sy_scene *s, const vz_frame *f)
{
	int k = (int)floor(f->t + 1e-9);
	return k < 0 ? 0 : k >= s->steps ? s->steps - 1 : k;
}

/* The one-line caption: what stays and what flows. */
static void caption(const sy_scene *s, char *buf, size_t cap)
{
	switch (s->cfg.dataflow) {
	case LM_DLP_OS:
		VZ_SNPRINTF_TR(buf, cap, "%s (OS): PE(r, c) keeps psum(p, n) of one output; a[p, k] enters row r from the left and "
		               "w[k, n] column c from the top, one cycle later per row and column", "%s（OS）：PE(r, c) 保留一个输出的部分和 "
		               "psum(p, n)；a[p, k] 从左边进入第 r 行，w[k, n] 从上边进入第 c 列，每行每列晚一个周期", vz_dlp_stationary(LM_DLP_OS));
		break;
	case LM_DLP_WS:
		VZ_SNPRINTF_TR(buf, cap, "%s (WS): PE(r, c) keeps w[k, n], shifted in from the top in the first %lld cycles; a[p, k] "
		               "enters the rows from the left, skewed; partial sums flow down the columns", "%s（WS）：PE(r, c) 保留 w[k, n]，"
		               "前 %lld 个周期从上边移入；a[p, k] 从左边错开进入各行；部分和沿列向下流动", vz_dlp_stationary(LM_DLP_WS),
		               (long long)s->R);
		break;
	default:
		VZ_SNPRINTF_TR(buf, cap, "%s (IS): PE(r, c) keeps a[p, k], shifted in from the top in the first %lld cycles; w[k, n] "
		               "enters the rows from the left, skewed; partial sums flow down the columns", "%s（IS）：PE(r, c) 保留 a[p, k]，"
		               "前 %lld 个周期从上边移入；w[k, n] 从左边错开进入各行；部分和沿列向下流动", vz_dlp_stationary(LM_DLP_IS),
		               (long long)s->R);
	}
}

static void sy_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	sy_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 400 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->tl = vz_text_height(f, VZ_FONT_TINY);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->tcw = vz_char_width(f, VZ_FONT_TINY);
	s->top = s->lh * 2.6f;
	s->rw = fminf(fmaxf(W * 0.36f, 300 * c->scale), 470 * c->scale);
	s->rx = W - s->rw;
	s->left_w = s->tcw * 14;
	float edge = s->tl * 2.8f; /* the operands entering at the top, leaving at the bottom */
	s->legend_y = H - s->lh * 1.4f;
	float gw = s->rx - s->cw * 3 - s->left_w, gh = s->legend_y - s->top - 2 * edge - s->lh * 0.4f;
	s->cell = fminf(fminf(gw / (float)s->C, gh / (float)s->R), 96 * c->scale);
	s->gx = s->left_w + fmaxf(0, (gw - s->cell * (float)s->C) / 2); /* centred in its part */
	s->gy = s->top + edge;
	/* right: the folds' map, the numbers of the step, the MACs per cycle */
	int64_t rf = s->rep.row_folds, cf = s->rep.col_folds;
	s->map_y = s->top + s->lh * 2.3f;
	s->map_cell = fminf(fminf(s->rw / (float)cf, H * 0.22f / (float)rf), 28 * c->scale);
	s->map_h = s->map_cell * (float)rf;
	if (s->map_cell < 2) s->map_h = fminf(H * 0.22f, s->rw * (float)rf / (float)cf);
	s->stats_y = s->map_y + s->map_h + s->lh * 0.6f;
	s->chart_y = s->stats_y + s->lh * 6.6f;
	s->chart_h = s->legend_y - s->chart_y - s->lh * 1.6f;
	*ww = W;
	*wh = H;
}

/* ---------------------------------------------------------------- what each PE does */

typedef struct pe_view {
	int state;
	int64_t p, k, n; /* 0-based GEMM indices of its operands (-1: none) */
	int64_t done;    /* OS: MACs accumulated into its psum */
} pe_view;

/* PE (r, c) at cycle t of the fold whose states are in s->pe. WS/IS load their stationary operand in
 * the first R cycles, shifted in from the top, last row first: at t < R row i <= t holds the
 * operand of row R - 1 - t + i, on its way down. */
static pe_view view_of(const sy_scene *s, int64_t fold, int64_t t, int64_t r, int64_t c)
{
	const lm_dlp_pe *e = &s->pe[r * s->C + c];
	pe_view v = {PE_PENDING, e->p, e->k, e->n, 0};
	int64_t R = s->R, T = s->rep.T;
	if (s->cfg.dataflow == LM_DLP_OS) {
		if (e->p < 0 || e->n < 0) return (pe_view){PE_UNUSED, -1, -1, -1, 0};
		int64_t done = t - r - c + 1;
		v.done = done < 0 ? 0 : done > T ? T : done;
		v.state = e->mac ? PE_MAC : v.done == 0 ? PE_PENDING : v.done == T ? PE_DONE : PE_PARTIAL;
		return v;
	}
	bool ws = s->cfg.dataflow == LM_DLP_WS;
	if ((ws && (e->k < 0 || e->n < 0)) || (!ws && (e->k < 0 || e->p < 0))) {
		if (t >= R || r > t) return (pe_view){PE_UNUSED, -1, -1, -1, 0};
	}
	if (t < R) { /* loading */
		if (r > t) return (pe_view){PE_PENDING, -1, -1, -1, 0};
		int64_t k = fold_row(s, fold) * R + R - 1 - t + r, col = fold_col(s, fold) * s->C + c;
		if (k >= s->rep.K || col >= (ws ? s->rep.N : s->rep.M)) return (pe_view){PE_UNUSED, -1, -1, -1, 0};
		return ws ? (pe_view){PE_LOADING, -1, k, col, 0} : (pe_view){PE_LOADING, col, k, -1, 0};
	}
	int64_t first = R + r + c;
	v.state = e->mac ? PE_MAC : t < first ? PE_HOLDS : PE_DONE;
	return v;
}

static vz_color state_color(int st)
{
	switch (st) {
	case PE_MAC: return vz_th.active;
	case PE_PARTIAL: return vz_mix(vz_th.bg, vz_th.active, 0.35);
	case PE_DONE: return vz_mix(vz_th.bg, vz_th.common, 0.35);
	case PE_HOLDS: return vz_mix(vz_th.bg, vz_th.path_a, 0.3);
	case PE_LOADING: return vz_mix(vz_th.bg, vz_okabe_ito[VZ_OI_YELLOW], 0.55);
	case PE_UNUSED: return vz_th.idle;
	default: return vz_th.pending;
	}
}

/* The two short lines in a PE: what it keeps, and what streams through it now (1-based). */
static void pe_lines(const sy_scene *s, const pe_view *v, bool longer, char *l1, char *l2, size_t cap)
{
	l1[0] = l2[0] = '\0';
	if (v->state == PE_UNUSED || (v->state == PE_PENDING && s->cfg.dataflow != LM_DLP_OS)) return;
	long long p = (long long)v->p + 1, k = (long long)v->k + 1, n = (long long)v->n + 1;
	switch (s->cfg.dataflow) {
	case LM_DLP_OS:
		snprintf(l1, cap, longer ? "psum %lld,%lld" : "%lld,%lld", p, n);
		if (v->state == PE_MAC) snprintf(l2, cap, longer ? "k=%lld (%lld/%lld)" : "k%lld", k, (long long)v->done, (long long)s->rep.T);
		break;
	case LM_DLP_WS:
		snprintf(l1, cap, longer ? "w %lld,%lld" : "%lld,%lld", k, n);
		if (v->state == PE_MAC) snprintf(l2, cap, longer ? "a %lld,%lld" : "p%lld", p, k);
		break;
	default:
		snprintf(l1, cap, longer ? "a %lld,%lld" : "%lld,%lld", p, k);
		if (v->state == PE_MAC) snprintf(l2, cap, longer ? "w %lld,%lld" : "n%lld", k, n);
	}
}

static void draw_pe_text(vz_frame *f, const sy_scene *s, vz_rect r, const pe_view *v, vz_color fill)
{
	char a[64], b[64];
	float px = 2 / vz_zoom(f), tl = vz_text_height(f, VZ_FONT_TINY);
	for (int longer = 1; longer >= 0; longer--) {
		pe_lines(s, v, longer, a, b, sizeof a);
		if (!vz_text_fits(f, VZ_FONT_TINY, a, r.w - px) || (b[0] && !vz_text_fits(f, VZ_FONT_TINY, b, r.w - px))) continue;
		int lines = b[0] && 2 * tl <= r.h - px ? 2 : 1;
		if (tl > r.h - px) return;
		float y = r.y + (r.h - (float)lines * tl) / 2;
		vz_text_draw(f, r.x + r.w / 2, y, VZ_FONT_TINY, VZ_ALIGN_CENTER, vz_text_on(fill), a);
		if (lines == 2) vz_text_draw(f, r.x + r.w / 2, y + tl, VZ_FONT_TINY, VZ_ALIGN_CENTER, vz_text_on(fill), b);
		return;
	}
}

/* ---------------------------------------------------------------- the edges: operands entering, outputs leaving */

enum { EDGE_LEFT, EDGE_TOP, EDGE_BOTTOM };

/* The operand at an edge of row or column i at cycle t (0-based indices; false: none), as the
 * demands of src/dlp/dlp.c read them: its text ("a[5,2]", 1-based) into buf. */
static bool edge_operand(const sy_scene *s, int64_t fold, int64_t t, int side, int64_t i, char *buf, size_t cap)
{
	int64_t R = s->R, C = s->C, T = s->rep.T, M = s->rep.M, N = s->rep.N, K = s->rep.K;
	int64_t fr = fold_row(s, fold), fc = fold_col(s, fold), u;
	if (t < 0) return false;
	switch (s->cfg.dataflow * 3 + side) {
	case LM_DLP_OS * 3 + EDGE_LEFT: /* a[p, k]: p = fr R + i, k = t - i */
		u = t - i;
		if (u < 0 || u >= T || fr * R + i >= M) return false;
		snprintf(buf, cap, "a[%lld,%lld]", (long long)(fr * R + i + 1), (long long)(u + 1));
		return true;
	case LM_DLP_OS * 3 + EDGE_TOP: /* w[k, n]: k = t - i, n = fc C + i */
		u = t - i;
		if (u < 0 || u >= T || fc * C + i >= N) return false;
		snprintf(buf, cap, "w[%lld,%lld]", (long long)(u + 1), (long long)(fc * C + i + 1));
		return true;
	case LM_DLP_WS * 3 + EDGE_LEFT: /* a[p, k]: p = t - R - i, k = fr R + i */
		u = t - R - i;
		if (u < 0 || u >= T || fr * R + i >= K) return false;
		snprintf(buf, cap, "a[%lld,%lld]", (long long)(u + 1), (long long)(fr * R + i + 1));
		return true;
	case LM_DLP_IS * 3 + EDGE_LEFT: /* w[k, n]: k = fr R + i, n = t - R - i */
		u = t - R - i;
		if (u < 0 || u >= T || fr * R + i >= K) return false;
		snprintf(buf, cap, "w[%lld,%lld]", (long long)(fr * R + i + 1), (long long)(u + 1));
		return true;
	case LM_DLP_WS * 3 + EDGE_TOP: /* the weights shift in, last row first */
	case LM_DLP_IS * 3 + EDGE_TOP: {
		int64_t k = fr * R + R - 1 - t, col = fc * C + i;
		if (t >= R || k >= K || col >= (s->cfg.dataflow == LM_DLP_WS ? N : M)) return false;
		if (s->cfg.dataflow == LM_DLP_WS) snprintf(buf, cap, "w[%lld,%lld]", (long long)(k + 1), (long long)(col + 1));
		else snprintf(buf, cap, "a[%lld,%lld]", (long long)(col + 1), (long long)(k + 1));
		return true;
	}
	case LM_DLP_WS * 3 + EDGE_BOTTOM: /* the finished psum(p, n) leaves column i */
	case LM_DLP_IS * 3 + EDGE_BOTTOM: {
		u = t - i - (2 * R - 1);
		int64_t col = fc * C + i;
		if (u < 0 || u >= T || col >= (s->cfg.dataflow == LM_DLP_WS ? N : M)) return false;
		if (s->cfg.dataflow == LM_DLP_WS) snprintf(buf, cap, "o[%lld,%lld]", (long long)(u + 1), (long long)(col + 1));
		else snprintf(buf, cap, "o[%lld,%lld]", (long long)(col + 1), (long long)(u + 1));
		return true;
	}
	default: return false;
	}
}

static void draw_edges(vz_frame *f, sy_scene *s, int64_t fold, int64_t t, int step)
{
	char buf[48];
	vz_color ink = vz_th.arrow_now;
	float cs = s->cell, gh = cs * (float)s->R, head = fminf(cs * 0.3f, s->tl * 0.6f);
	for (int64_t r = 0; r < s->R; r++) { /* left: into the rows */
		float y = s->gy + ((float)r + 0.5f) * cs;
		if (!edge_operand(s, fold, t, EDGE_LEFT, r, buf, sizeof buf)) continue;
		vz_arrow(f, s->gx - s->tcw * 1.6f, y, s->gx - 1, y, 1.5f, head, ink);
		vz_font font = vz_text_height(f, VZ_FONT_SMALL) <= cs && vz_text_fits(f, VZ_FONT_SMALL, buf, s->left_w - s->tcw * 2.2f)
		                   ? VZ_FONT_SMALL : VZ_FONT_TINY;
		if (vz_text_height(f, font) <= cs + 1e-3f) {
			vz_text_fit(f, font, buf, sizeof buf, s->left_w - s->tcw * 2.2f);
			vz_text_draw(f, s->gx - s->tcw * 1.9f, y - vz_text_height(f, font) / 2, font, VZ_ALIGN_RIGHT, ink, buf);
		}
		vz_cell *c = vz_cell_add(f, vz_r(s->gx - s->left_w, y - cs / 2, s->left_w, cs), "operand");
		c->group = "left", c->state = "entering", c->row = (int32_t)r, c->step = step, c->color = ink;
	}
	int sides[2] = {EDGE_TOP, EDGE_BOTTOM};
	for (int k = 0; k < 2; k++)
		for (int64_t i = 0; i < s->C; i++) {
			if (!edge_operand(s, fold, t, sides[k], i, buf, sizeof buf)) continue;
			float x = s->gx + ((float)i + 0.5f) * cs, y0 = k ? s->gy + gh + 1 : s->gy - s->tl * 1.2f;
			vz_arrow(f, x, y0, x, y0 + s->tl * 1.2f - 1, 1.5f, head, ink);
			float ty = k ? y0 + s->tl * 1.25f : s->gy - s->tl * 2.5f;
			vz_font font = s->lh <= s->tl * 1.45f && vz_text_fits(f, VZ_FONT_SMALL, buf, cs - 2 / vz_zoom(f)) ? VZ_FONT_SMALL : VZ_FONT_TINY;
			if (vz_text_fits(f, font, buf, cs - 2 / vz_zoom(f))) vz_text_draw(f, x, ty, font, VZ_ALIGN_CENTER, ink, buf);
			vz_cell *c = vz_cell_add(f, vz_r(x - cs / 2, k ? s->gy + gh : s->gy - s->tl * 2.6f, cs, s->tl * 2.6f), "operand");
			c->group = k ? "bottom" : "top", c->state = k ? "leaving" : "entering", c->col = (int32_t)i, c->step = step,
			c->color = ink;
		}
}

/* ---------------------------------------------------------------- drawing */

static void draw_array(vz_frame *f, sy_scene *s, int64_t fold, int64_t t, int step)
{
	float cs = s->cell;
	for (int64_t r = 0; r < s->R; r++)
		for (int64_t c = 0; c < s->C; c++) {
			vz_rect cr = vz_r(s->gx + (float)c * cs, s->gy + (float)r * cs, cs, cs);
			pe_view v = view_of(s, fold, t, r, c);
			vz_color col = state_color(v.state);
			if (v.state == PE_UNUSED) {
				vz_hatch(f, cr, col, vz_th.hatch);
				vz_outline(f, cr, 1, vz_mix(col, VZ_RGB(0, 0, 0), 0.25));
			} else {
				vz_cell_fill(f, cr, col, cs * vz_zoom(f) >= 4 ? 1 : 0, vz_mix(col, VZ_RGB(0, 0, 0), 0.25));
				draw_pe_text(f, s, cr, &v, col);
			}
			vz_cell *cell = vz_cell_add(f, cr, "pe");
			cell->row = (int32_t)r, cell->col = (int32_t)c, cell->index = (int32_t)(r * s->C + c), cell->step = step;
			cell->state = state_names[v.state], cell->color = col, cell->group = vz_dlp_dataflow(s->cfg.dataflow);
			cell->block = (int32_t)fold;
			if (s->cfg.dataflow == LM_DLP_OS && v.state != PE_UNUSED) cell->value = (double)v.done, cell->has_value = true;
		}
	/* the wavefront: the diagonal the newest operands reach this cycle (r + c = t, or t - R after a load) */
	int64_t d = s->cfg.dataflow == LM_DLP_OS ? t : t - s->R;
	if (t >= 0 && d >= 0 && d <= s->R + s->C - 2) {
		float e = (float)(d + 1) * cs, gw = (float)s->C * cs, gh = (float)s->R * cs;
		float x0 = fminf(e, gw), y0 = e - x0, y1 = fminf(e, gh), x1 = e - y1; /* the line x + y = e inside the grid */
		vz_dashed(f, s->gx + x0, s->gy + y0, s->gx + x1, s->gy + y1, 2, fmaxf(cs * 0.15f, 3), vz_th.highlight);
	}
}

static void fold_map(vz_frame *f, sy_scene *s, int64_t fold)
{
	int64_t rf = s->rep.row_folds, cf = s->rep.col_folds, n = rf * cf;
	char t[200];
	VZ_SNPRINTF_TR(t, sizeof t, "folds: %lld x %lld of %lld x %lld PEs; fold %lld of %lld", "折叠：%lld × %lld 个，每个 %lld × %lld 个 PE；"
	               "第 %lld / %lld 个", (long long)rf, (long long)cf, (long long)s->R, (long long)s->C, (long long)fold + 1, (long long)n);
	vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, s->rw);
	vz_text_draw(f, s->rx, s->top, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
	const char *rows_are = s->cfg.dataflow == LM_DLP_OS ? "M" : "K", *cols_are = s->cfg.dataflow == LM_DLP_IS ? "M" : "N";
	VZ_SNPRINTF_TR(t, sizeof t, "rows: Sr = %s = %lld, columns: Sc = %s = %lld, streamed: T = %lld", "行：Sr = %s = %lld，列：Sc = %s = %lld，"
	               "流过：T = %lld", rows_are, (long long)s->rep.Sr, cols_are, (long long)s->rep.Sc, (long long)s->rep.T);
	vz_text_fit(f, VZ_FONT_TINY, t, sizeof t, s->rw);
	vz_text_draw(f, s->rx, s->top + s->lh * 1.1f, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
	if (!s->fold_color) {
		s->fold_color = vz_calloc((size_t)n, sizeof *s->fold_color);
		s->fold_state = vz_calloc((size_t)n, 1);
		if (!s->fold_color || !s->fold_state) return;
	}
	static const char *const names[] = {"pending", "current", "done"};
	for (int64_t i = 0; i < n; i++) { /* map cell (fr, fc) is fold fc * rf + fr */
		int64_t fr = i / cf, fc = i % cf, k = fc * rf + fr;
		uint8_t st = k < fold ? 2 : k == fold ? 1 : 0;
		s->fold_state[i] = st;
		s->fold_color[i] = st == 1 ? vz_th.active : st == 2 ? vz_mix(vz_th.bg, vz_th.common, 0.45) : vz_th.pending;
	}
	float w = s->map_cell >= 2 ? s->map_cell * (float)cf : s->rw;
	vzs_matrix m = {.rows = (int)rf, .cols = (int)cf, .color = s->fold_color, .state = s->fold_state, .names = names,
	                .kind = "fold", .group = "folds"};
	vzs_matrix_draw(f, &s->fold_grid, vz_r(s->rx, s->map_y, w, s->map_h), &m);
}

static void stats(vz_frame *f, sy_scene *s, int64_t fold, int64_t t, int step)
{
	char t1[200];
	float y = s->stats_y, x = s->rx;
	int64_t RC = s->R * s->C, g = step - 1, mac = step > 0 ? s->macs[g] : 0, cum = step > 0 ? s->cum[g] : 0;
	int64_t shown = step > 0 ? s->cum[g] - s->cum[0] + s->macs[0] : 0; /* the MACs of the cycles shown so far */
	VZ_SNPRINTF_TR(t1, sizeof t1, "row fold %lld of %lld, column fold %lld of %lld", "行折叠 %lld / %lld，列折叠 %lld / %lld",
	               (long long)fold_row(s, fold) + 1, (long long)s->rep.row_folds, (long long)fold_col(s, fold) + 1,
	               (long long)s->rep.col_folds);
	vz_text_fit(f, VZ_FONT_SMALL, t1, sizeof t1, s->rw);
	vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t1);
	if (step > 0)
		VZ_SNPRINTF_TR(t1, sizeof t1, "cycle %lld of %lld in the fold (compute cycle %lld)", "折叠内第 %lld / %lld 个周期（计算周期 %lld）",
		               (long long)t, (long long)s->fold_rows, (long long)g);
	else VZ_SNPRINTF_TR(t1, sizeof t1, "before cycle 0: %lld cycles a fold", "周期 0 之前：每个折叠 %lld 个周期", (long long)s->fold_rows);
	vz_text_fit(f, VZ_FONT_SMALL, t1, sizeof t1, s->rw);
	vz_text_draw(f, x, y + s->lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t1);
	VZ_SNPRINTF_TR(t1, sizeof t1, "MACs this cycle: %lld of %lld PEs (%.1f%%)", "本周期 MAC：%lld / %lld 个 PE（%.1f%%）", (long long)mac,
	               (long long)RC, 100.0 * (double)mac / (double)RC);
	vz_text_fit(f, VZ_FONT_SMALL, t1, sizeof t1, s->rw);
	vz_text_draw(f, x, y + s->lh * 2.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t1);
	VZ_SNPRINTF_TR(t1, sizeof t1, "MACs so far: %lld of %lld (M N K)", "累计 MAC：%lld / %lld（M N K）", (long long)cum, (long long)s->rep.macs);
	vz_text_fit(f, VZ_FONT_SMALL, t1, sizeof t1, s->rw);
	vz_text_draw(f, x, y + s->lh * 3.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t1);
	VZ_SNPRINTF_TR(t1, sizeof t1, "utilization so far: %lld / (%lld PEs x %lld cycles) = %.1f%%", "至今利用率：%lld / (%lld 个 PE × %lld 个周期) = %.1f%%",
	               (long long)shown, (long long)RC, (long long)step, step > 0 ? 100.0 * (double)shown / (double)(RC * step) : 0.0);
	vz_text_fit(f, VZ_FONT_SMALL, t1, sizeof t1, s->rw);
	vz_text_draw(f, x, y + s->lh * 4.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t1);
	snprintf(t1, sizeof t1, "%s", vz_dlp_source(s->demo));
	vz_text_fit(f, VZ_FONT_TINY, t1, sizeof t1, s->rw);
	vz_text_draw(f, x, y + s->lh * 5.5f, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t1);
	vz_cell *c = vz_cell_add(f, vz_r(x, y, s->rw, s->lh * 6.3f), "stats");
	c->state = "stats", c->step = step, c->value = (double)mac, c->has_value = true, c->color = vz_th.bg;
}

/* The MACs of each cycle of the fold shown: the wavefront filling and draining the array. */
static void chart(vz_frame *f, sy_scene *s, int64_t fold, int64_t t)
{
	if (s->chart_h < s->lh * 2) return;
	char t1[160];
	VZ_SNPRINTF_TR(t1, sizeof t1, "MACs per cycle in fold %lld (of %lld PEs)", "折叠 %lld 中每周期的 MAC（共 %lld 个 PE）", (long long)fold + 1,
	               (long long)(s->R * s->C));
	vz_text_fit(f, VZ_FONT_SMALL, t1, sizeof t1, s->rw);
	vz_text_draw(f, s->rx, s->chart_y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t1);
	float y0 = s->chart_y + s->lh * 1.2f, h = s->chart_h - s->lh * 1.2f, x0 = s->rx, w = s->rw;
	vz_rect box = vz_r(x0, y0, w, h);
	vz_fill(f, box, vz_th.pending);
	int64_t g0 = (fold - s->fold0) * s->fold_rows, n = s->fold_rows;
	if (g0 + n > s->cycles) n = s->cycles - g0;
	if (n <= 0) return;
	double RC = (double)(s->R * s->C);
	float bw = w / (float)n;
	for (int64_t i = 0; i < n; i++) {
		double m = s->macs[g0 + i];
		vz_color col = i < t ? vz_mix(vz_th.bg, vz_th.active, 0.55) : i == t ? vz_th.active : vz_mix(vz_th.bg, vz_th.arrow, 0.35);
		float bh = (float)(m / RC) * h;
		vz_rect br = vz_r(x0 + (float)i * bw, y0 + h - bh, fmaxf(bw, 1.0f / vz_zoom(f)), bh);
		if (bh > 0) vz_fill(f, br, col);
		if (n <= 512) {
			vz_cell *c = vz_cell_add(f, vz_r(x0 + (float)i * bw, y0, bw, h), "cycle");
			c->index = (int32_t)i, c->block = (int32_t)fold, c->value = m, c->has_value = true, c->color = col;
			c->state = i < t ? "past" : i == t ? "now" : "later";
		}
	}
	vz_outline(f, box, 1, vz_th.panel_line);
	if (t >= 0) vz_outline(f, vz_r(x0 + (float)t * bw, y0, fmaxf(bw, 2), h), 1.5f, vz_th.highlight);
}

static void sy_draw(void *p, vz_frame *f)
{
	sy_scene *s = p;
	int step = step_of(s, f);
	int64_t fold, t;
	at_step(s, step, &fold, &t);
	s->drawn = step;
	char cap[400], line[400];
	caption(s, cap, sizeof cap);
	const char *rest = cap;
	for (int i = 0; i < 2 && *rest; i++) { /* two lines, the second cut with an ellipsis */
		size_t skip = 0, n = vz_wrap_line(rest, (int)((s->rx - s->cw * 2) / s->cw), &skip);
		snprintf(line, sizeof line, "%.*s", (int)(i == 1 ? strlen(rest) : n), rest);
		vz_text_fit(f, VZ_FONT_SMALL, line, sizeof line, s->rx - s->cw * 2);
		vz_text_draw(f, 0, (float)i * s->lh * 1.05f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, line);
		rest += n + skip;
	}
	pe_at(s, fold, t);
	draw_array(f, s, fold, t, step);
	draw_edges(f, s, fold, t, step);
	fold_map(f, s, fold);
	stats(f, s, fold, t, step);
	chart(f, s, fold, t);
	float x = vzs_legend(f, 0, s->legend_y, vz_th.active, false, vz_tr("MAC this cycle", "本周期 MAC"));
	if (s->cfg.dataflow == LM_DLP_OS) {
		x = vzs_legend(f, x, s->legend_y, state_color(PE_PARTIAL), false, vz_tr("partial sum", "部分和"));
	} else {
		x = vzs_legend(f, x, s->legend_y, state_color(PE_LOADING), false, vz_tr("shifting in", "移入中"));
		x = vzs_legend(f, x, s->legend_y, state_color(PE_HOLDS), false, vz_tr("holds, waits", "驻留，等待"));
	}
	x = vzs_legend(f, x, s->legend_y, state_color(PE_DONE), false, vz_tr("done", "完成"));
	x = vzs_legend(f, x, s->legend_y, vz_th.idle, true, vz_tr("unused in this fold", "本折叠未用"));
	vzs_legend(f, x, s->legend_y, vz_th.highlight, false, vz_tr("wavefront", "波前"));
}

static void layer_line(const sy_scene *s, char *buf, size_t cap)
{
	VZ_SNPRINTF_TR(buf, cap, "%s: M %lld, N %lld, K %lld", "%s：M %lld，N %lld，K %lld", s->name, (long long)s->rep.M,
	               (long long)s->rep.N, (long long)s->rep.K);
}

static void sy_title(void *p, char *buf, size_t cap)
{
	sy_scene *s = p;
	char l[120], shown[96] = "";
	layer_line(s, l, sizeof l);
	if (s->cycles < s->nfolds * s->fold_rows)
		VZ_SNPRINTF_TR(shown, sizeof shown, " (their first %lld cycles shown)", "（显示前 %lld 个周期）", (long long)s->cycles);
	else if (s->nfolds < s->folds)
		VZ_SNPRINTF_TR(shown, sizeof shown, " (%lld shown: option fold)", "（显示 %lld 个：选项 fold）", (long long)s->nfolds);
	if (vz_zh())
		snprintf(buf, cap, "脉动阵列 %lld × %lld，%s（%s），%s：%lld 个折叠%s，每个 %lld 周期；%s", (long long)s->R, (long long)s->C,
		         vz_dlp_dataflow(s->cfg.dataflow), vz_dlp_stationary(s->cfg.dataflow), l, (long long)s->folds, shown,
		         (long long)s->fold_rows, vz_dlp_source(s->demo));
	else /* two calls: English needs the plural's s */
		snprintf(buf, cap, "systolic array %lld x %lld, %s (%s), %s: %lld fold%s%s of %lld cycles; %s", (long long)s->R, (long long)s->C,
		         vz_dlp_dataflow(s->cfg.dataflow), vz_dlp_stationary(s->cfg.dataflow), l, (long long)s->folds,
		         s->folds == 1 ? "" : "s", shown, (long long)s->fold_rows, vz_dlp_source(s->demo));
}

static void sy_step_label(void *p, int step, char *buf, size_t cap)
{
	sy_scene *s = p;
	int64_t fold, t, RC = s->R * s->C;
	at_step(s, step, &fold, &t);
	if (step <= 0) {
		const char *rows = s->cfg.dataflow == LM_DLP_OS ? vz_tr("output pixels p", "输出像素 p") : vz_tr("window positions k", "窗口位置 k");
		const char *cols = s->cfg.dataflow == LM_DLP_IS ? vz_tr("output pixels p", "输出像素 p") : vz_tr("filters n", "滤波器 n");
		VZ_SNPRINTF_TR(buf, cap, "before cycle 0: fold %lld puts %s on the %lld PE rows and %s on the %lld columns; T = %lld stream through",
		               "周期 0 之前：折叠 %lld 把%s放到 %lld 行 PE，%s放到 %lld 列；T = %lld 个流过", (long long)fold + 1, rows,
		               (long long)s->R, cols, (long long)s->C, (long long)s->rep.T);
		return;
	}
	int64_t g = step - 1;
	if (s->cfg.dataflow != LM_DLP_OS && t < s->R) {
		VZ_SNPRINTF_TR(buf, cap, "fold %lld of %lld, cycle %lld: loading the stationary %s, row %lld of %lld enters at the top",
		               "折叠 %lld / %lld，周期 %lld：装载驻留的%s，第 %lld / %lld 行从上边进入", (long long)fold + 1, (long long)s->folds,
		               (long long)t, s->cfg.dataflow == LM_DLP_WS ? vz_tr("weights", "权重") : vz_tr("inputs", "输入"),
		               (long long)(s->R - t), (long long)s->R);
		return;
	}
	VZ_SNPRINTF_TR(buf, cap, "fold %lld of %lld, cycle %lld of %lld: %lld of %lld PEs MAC (%.1f%%); %lld of %lld MACs done",
	               "折叠 %lld / %lld，周期 %lld / %lld：%lld / %lld 个 PE 做 MAC（%.1f%%）；完成 %lld / %lld 次 MAC", (long long)fold + 1,
	               (long long)s->folds, (long long)t, (long long)s->fold_rows, (long long)s->macs[g], (long long)RC,
	               100.0 * (double)s->macs[g] / (double)RC, (long long)s->cum[g], (long long)s->rep.macs);
}

static void sy_counters(void *p, vz_panel *pn)
{
	sy_scene *s = p;
	char title[64];
	snprintf(title, sizeof title, "%lldx%lld %s", (long long)s->R, (long long)s->C, vz_dlp_dataflow(s->cfg.dataflow));
	int c = vz_panel_column(pn, title, vz_dlp_source(s->demo));
	const struct { const char *name; double v; } rows[] = {
		{"M", (double)s->rep.M}, {"N", (double)s->rep.N}, {"K", (double)s->rep.K},
		{"row_folds", (double)s->rep.row_folds}, {"col_folds", (double)s->rep.col_folds},
		{"fold_cycles", (double)s->rep.fold_rows}, {"macs", (double)s->rep.macs},
		{"total_cycles", (double)s->rep.total_cycles}, {"stall_cycles", (double)s->rep.stall_cycles},
		{"compute_util", s->rep.compute_util}, {"mapping_efficiency", s->rep.mapping_eff},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) vz_panel_set(pn, c, rows[i].name, rows[i].v);
	VZ_NOTE_TR(pn, "a step is a compute cycle (SCALE-Sim's demand rows: %lld a fold); total_cycles adds the %lld stall cycles "
	           "of the scratchpads (viz.show('dma', a:run(layer, {events = N})) draws them); utilizations in percent",
	           "每一步是一个计算周期（SCALE-Sim 的需求行：每个折叠 %lld 个）；total_cycles 另含缓冲区的 %lld 个停顿周期（viz.show('dma', "
	           "a:run(layer, {events = N})) 画出它们）；利用率为百分比", (long long)s->fold_rows, (long long)s->rep.stall_cycles);
}

static void sy_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	sy_scene *s = p;
	int64_t fold, t;
	at_step(s, c->step < 0 ? 0 : c->step, &fold, &t);
	if (strcmp(c->kind, "pe") == 0 && c->row >= 0 && c->col >= 0) {
		pe_at(s, fold, t);
		pe_view v = view_of(s, fold, t, c->row, c->col);
		long long r = c->row + 1, col = c->col + 1, pp = (long long)v.p + 1, k = (long long)v.k + 1, n = (long long)v.n + 1;
		int64_t first = (s->cfg.dataflow == LM_DLP_OS ? 0 : s->R) + c->row + c->col;
		switch (v.state) {
		case PE_MAC:
			if (s->cfg.dataflow == LM_DLP_OS)
				VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): a[p=%lld,k=%lld] x w[k=%lld,n=%lld] -> psum(%lld,%lld), %lld of %lld MACs "
				               "done; the psum stays (output stationary)", "PE(%lld,%lld)：a[p=%lld,k=%lld] × w[k=%lld,n=%lld] -> "
				               "psum(%lld,%lld)，已做 %lld / %lld 次 MAC；部分和留在 PE 中（输出驻留）", r, col, pp, k, k, n, pp, n,
				               (long long)v.done, (long long)s->rep.T);
			else
				VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): a[p=%lld,k=%lld] x w[k=%lld,n=%lld] + the psum from above -> psum(%lld,%lld), "
				               "passed down; %s stays (%s)", "PE(%lld,%lld)：a[p=%lld,k=%lld] × w[k=%lld,n=%lld] + 上方传来的部分和 -> "
				               "psum(%lld,%lld)，向下传；%s 留在 PE 中（%s）", r, col, pp, k, k, n, pp, n,
				               s->cfg.dataflow == LM_DLP_WS ? "w" : "a", vz_dlp_stationary(s->cfg.dataflow));
			break;
		case PE_UNUSED:
			VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): unused in fold %lld (its row or column is past the layer's %lld x %lld)",
			               "PE(%lld,%lld)：折叠 %lld 中未用（其行或列超出该层的 %lld × %lld）", r, col, (long long)fold + 1,
			               (long long)s->rep.Sr, (long long)s->rep.Sc);
			break;
		case PE_LOADING:
			VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): %s[%lld,%lld] passes through, on its way down to PE row %lld",
			               "PE(%lld,%lld)：%s[%lld,%lld] 经过，向下移往第 %lld 行 PE", r, col, s->cfg.dataflow == LM_DLP_WS ? "w" : "a",
			               s->cfg.dataflow == LM_DLP_WS ? k : pp, s->cfg.dataflow == LM_DLP_WS ? n : k,
			               (long long)(s->R - t + c->row));
			break;
		default:
			if (s->cfg.dataflow == LM_DLP_OS)
				VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): psum(%lld,%lld), %lld of %lld MACs done; its MACs run at cycles %lld to %lld of the fold",
				               "PE(%lld,%lld)：psum(%lld,%lld)，已做 %lld / %lld 次 MAC；其 MAC 在折叠的第 %lld 到 %lld 周期", r, col, pp, n,
				               (long long)v.done, (long long)s->rep.T, (long long)first, (long long)(first + s->rep.T - 1));
			else if (v.state == PE_PENDING)
				VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): empty; its operand arrives from the top by cycle %lld", "PE(%lld,%lld)：空；"
				               "其操作数在第 %lld 周期前从上边到达", r, col, (long long)s->R - 1);
			else
				VZ_SNPRINTF_TR(buf, cap, "PE(%lld,%lld): holds %s[%lld,%lld]; idle this cycle; its MACs run at cycles %lld to %lld of the fold",
				               "PE(%lld,%lld)：保留 %s[%lld,%lld]；本周期空闲；其 MAC 在折叠的第 %lld 到 %lld 周期", r, col,
				               s->cfg.dataflow == LM_DLP_WS ? "w" : "a", s->cfg.dataflow == LM_DLP_WS ? k : pp,
				               s->cfg.dataflow == LM_DLP_WS ? n : k, (long long)first, (long long)(first + s->rep.T - 1));
		}
	} else if (strcmp(c->kind, "operand") == 0) {
		char op[48];
		bool left = c->group && strcmp(c->group, "left") == 0, bottom = c->group && strcmp(c->group, "bottom") == 0;
		if (!edge_operand(s, fold, t, left ? EDGE_LEFT : bottom ? EDGE_BOTTOM : EDGE_TOP, left ? c->row : c->col, op, sizeof op))
			snprintf(op, sizeof op, "-");
		if (bottom)
			VZ_SNPRINTF_TR(buf, cap, "cycle %lld: the finished partial sum %s leaves column %d (an ofmap write)", "周期 %lld：完成的部分和 %s "
			               "离开第 %d 列（写 ofmap）", (long long)t, op, c->col + 1);
		else if (left)
			VZ_SNPRINTF_TR(buf, cap, "cycle %lld: %s enters row %d from the left (an SRAM read at the array's edge)", "周期 %lld：%s 从左边"
			               "进入第 %d 行（阵列边缘的一次 SRAM 读）", (long long)t, op, c->row + 1);
		else
			VZ_SNPRINTF_TR(buf, cap, "cycle %lld: %s enters column %d from the top (an SRAM read at the array's edge)", "周期 %lld：%s 从上边"
			               "进入第 %d 列（阵列边缘的一次 SRAM 读）", (long long)t, op, c->col + 1);
	} else if (strcmp(c->kind, "fold") == 0) {
		at_step(s, s->drawn, &fold, &t);
		int64_t fr = c->row, fc = c->col, k = fc * s->rep.row_folds + fr;
		int64_t ru = s->rep.Sr - fr * s->R < s->R ? s->rep.Sr - fr * s->R : s->R;
		int64_t cu = s->rep.Sc - fc * s->C < s->C ? s->rep.Sc - fc * s->C : s->C;
		c->state = k < fold ? "done" : k == fold ? "current" : "pending";
		VZ_SNPRINTF_TR(buf, cap, "fold %lld (row fold %lld, column fold %lld): %lld x %lld of the %lld x %lld PEs mapped (%.1f%%), "
		               "%lld cycles", "折叠 %lld（行折叠 %lld，列折叠 %lld）：映射 %lld × %lld / %lld × %lld 个 PE（%.1f%%），%lld 个周期",
		               (long long)k + 1, (long long)fr + 1, (long long)fc + 1, (long long)ru, (long long)cu, (long long)s->R,
		               (long long)s->C, 100.0 * (double)(ru * cu) / (double)(s->R * s->C), (long long)s->fold_rows);
	} else if (strcmp(c->kind, "cycle") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "fold %d, cycle %d: %.0f MACs of %lld PEs (%.1f%%)", "折叠 %d，周期 %d：%.0f 次 MAC / %lld 个 PE（%.1f%%）",
		               c->block + 1, c->index, c->value, (long long)(s->R * s->C), 100.0 * c->value / (double)(s->R * s->C));
	} else if (strcmp(c->kind, "stats") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "the step's counts, from lm_dlp_pe_state: %.0f MACs this cycle; %s", "这一步的计数，来自 lm_dlp_pe_state："
		               "本周期 %.0f 次 MAC；%s", c->value, vz_dlp_source(s->demo));
	}
}

static const vz_option sy_options[] = {
	{"fold", VZ_OPT_INT, 0, 1e9, NULL, "0", "the fold shown (1-based, SCALE-Sim's order: column folds outside); 0: every fold in turn"},
	{"rows", VZ_OPT_INT, 1, MAX_PES, NULL, "4", "the demonstration's array rows"},
	{"cols", VZ_OPT_INT, 1, MAX_PES, NULL, "4", "the demonstration's array columns"},
	{"dataflow", VZ_OPT_CHOICE, 0, 0, "os ws is", "os", "the demonstration's dataflow: output, weight or input stationary"},
	{"m", VZ_OPT_INT, 1, 4096, NULL, "6", "the demonstration's GEMM: M (output pixels)"},
	{"n", VZ_OPT_INT, 1, 4096, NULL, "5", "the demonstration's GEMM: N (filters)"},
	{"k", VZ_OPT_INT, 1, 4096, NULL, "4", "the demonstration's GEMM: K (window)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_systolic = {
	.name = "systolic",
	.summary = "lumen.dlp: an R x C systolic array cycle by cycle: which PEs MAC, what stays (OS, WS, IS), the skewed "
	           "operands, the wavefront, folds, utilization (viz.show('systolic', array, layer))",
	.patterns = "",
	.options = sy_options,
	.create = sy_create,
	.destroy = sy_destroy,
	.steps = sy_steps,
	.variants = sy_variants,
	.variant_name = sy_variant_name,
	.set_variant = sy_set_variant,
	.layout = sy_layout,
	.draw = sy_draw,
	.title = sy_title,
	.step_label = sy_step_label,
	.counters = sy_counters,
	.describe = sy_describe,
};
