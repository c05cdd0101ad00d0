/*
 * scan.c — the scan scene (PMPP chapter 11): Kogge-Stone and Brent-Kung as the textbook draws
 * them, side by side on the same input — the elements of the section as cells, one row per step,
 * an arrow per add from its two operands to the element it writes, the cells written in a step
 * lit and the idle ones grey, Brent-Kung's up-sweep and down-sweep named — with a chart of their
 * adds and steps against n (emulated runs, counted from their events). A trace of several blocks
 * (the hierarchical scan of a long array) is drawn as blocks: each block's scan, the block sums,
 * their scan, and the final add.
 *
 * Built from a scan run with a trace (viz.show(info)): its input is read back from the trace and
 * the other algorithm runs on it, so both pictures show the same numbers. A run without a trace
 * (cpu, cuda) keeps its counters in the panel, and the picture comes from emulated runs on a
 * demonstration input. viz.scene('scan', {n=, input=, block=}) builds from options alone.
 * Read next: addnet.c (the data flow), reduce.c (the same machinery for trees).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_PICS 3
#define MAX_BLOCK_VARIANTS 6
#define CHART_N 10 /* n = 2 .. 1024: one block of either kernel */

/* One single-block algorithm's picture: the tree, and where Brent-Kung turns from its up-sweep
 * to its down-sweep (the first step whose stride shrinks; 0 otherwise). */
typedef struct pic {
	vzs_tree t;
	int down_from;
} pic;

/* The hierarchical picture: global arrays after each launch. */
typedef enum hrow_kind { H_INPUT, H_SECTIONS, H_SUMS, H_SCAN_SUMS, H_ADD } hrow_kind;

typedef struct hrow {
	int array, launch;    /* values of array after launch (launch -1: the input) */
	hrow_kind kind;       /* what the row shows (its label, in the labels' language: hrow_label) */
	double *v;
	int64_t length;
	int section;          /* elements per block of the first launch (for block boxes), or 0 */
	float y;              /* layout */
} hrow;

typedef struct scan_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo;            /* the picture is of a demonstration input (a run without trace) */
	bool exclusive;
	int64_t n;
	pic pics[MAX_PICS];
	int npics;
	/* hierarchical */
	bool hier;
	hrow hrows[8];
	int nhrows, nlaunches, section, nblocks;
	float h_cell_w, h_cell_h, h_label_w;
	/* variants: side by side / each picture / (hierarchy: blocks, block b) */
	int variant, nvariants;
	char variant_names[MAX_PICS + MAX_BLOCK_VARIANTS + 1][48];
	int block_of_variant[MAX_PICS + MAX_BLOCK_VARIANTS + 1];
	lm_viz_run hrun;      /* the run the hierarchy is drawn from */
	pic block_pic;        /* the picture of the block shown (hierarchy) */
	int block_pic_block;
	/* the chart */
	double cx[CHART_N], cadds[2][CHART_N], csteps[2][CHART_N];
	int cn;
	vz_rect chart;
	float legend_y;
	double t;             /* the time last drawn (what a pick describes) */
	char fname[32];
} scan_scene;

static const char *const ks = "kogge-stone", *const bk = "brent-kung";

static const char *algo_title(const char *algo)
{
	if (strcmp(algo, ks) == 0) return "Kogge-Stone (PMPP 11.2)";
	if (strcmp(algo, bk) == 0) return "Brent-Kung (PMPP 11.4)";
	if (strcmp(algo, "hierarchical") == 0) return vz_tr("three-phase, coarsened (PMPP 11.5)", "三阶段、线程粗化（PMPP 11.5）");
	return algo;
}

/* ---------------------------------------------------------------- building pictures */

static void pic_free(pic *p)
{
	vzs_tree_free(&p->t);
	p->down_from = 0;
}

static lm_status pic_build(pic *p, const lm_viz_run *run, uint32_t block, const char *fname)
{
	p->down_from = 0;
	if (vzs_tree_build(&p->t, run, block, algo_title, fname) != LM_OK) return lm_last_status();
	const vzs_addnet *n = &p->t.net;
	if (strcmp(run->algo, bk) == 0)
		for (int r = 2; r <= n->nsteps && !p->down_from; r++)
			if (n->steps[r - 1].stride < n->steps[r - 2].stride) p->down_from = r;
	return LM_OK;
}

static lm_status add_pic(scan_scene *s, const lm_viz_run *run, const char *fname)
{
	if (s->npics >= MAX_PICS) return LM_OK;
	if (pic_build(&s->pics[s->npics], run, 0, fname) != LM_OK) return lm_last_status();
	s->npics++;
	return LM_OK;
}

/* Kogge-Stone and Brent-Kung on the values x (one of them may be given already). */
static lm_status companions(scan_scene *s, const double *x, int64_t n, const lm_viz_run *have,
                            const char *fname)
{
	const char *algos[2] = {ks, bk};
	for (int i = 0; i < 2; i++) {
		if (have && strcmp(have->algo, algos[i]) == 0) {
			if (add_pic(s, have, fname) != LM_OK) return lm_last_status();
			continue;
		}
		lm_viz_run r;
		/* one block covers the input (Brent-Kung: two elements per thread) */
		int64_t block = strcmp(algos[i], ks) == 0 ? n : (n + 1) / 2;
		int64_t b = 1;
		while (b < block) b *= 2;
		if (vzs_run_scan(x, n, algos[i], b, s->exclusive, &r, fname) != LM_OK) return lm_last_status();
		lm_status st = add_pic(s, &r, fname);
		vz_run_clear(&r);
		if (st != LM_OK) return st;
	}
	if (have && strcmp(have->algo, ks) && strcmp(have->algo, bk)) return add_pic(s, have, fname);
	return LM_OK;
}

/* The chart: adds and steps of both algorithms for n = 2, 4, ..., 1024 (emulated, counted). */
static lm_status build_chart(scan_scene *s, const char *fname)
{
	s->cn = 0;
	for (int64_t n = 2; n <= 1024 && s->cn < CHART_N; n *= 2, s->cn++) {
		s->cx[s->cn] = (double)n;
		if (vzs_count_scan(n, ks, &s->cadds[0][s->cn], &s->csteps[0][s->cn], fname) != LM_OK ||
		    vzs_count_scan(n, bk, &s->cadds[1][s->cn], &s->csteps[1][s->cn], fname) != LM_OK)
			return lm_last_status();
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- the hierarchical picture */

/* The row's name as the cells' group (the API's: English) and as its label. */
static const char *hrow_group(hrow_kind k)
{
	static const char *const g[] = {"input X", "1. each block scans its section: Y", "   block sums S[b]",
	                                "2. one block scans the block sums: S", "3. block b adds S[b\xE2\x88\x92" "1]: Y"};
	return g[k];
}

static const char *hrow_label(hrow_kind k)
{
	static const char *const zh[] = {"输入 X", "1. 各线程块扫描自己的段：Y", "   块和 S[b]", "2. 一个线程块扫描块和：S",
	                                 "3. 线程块 b 加上 S[b−1]：Y"};
	return vz_zh() ? zh[k] : hrow_group(k);
}

static lm_status hier_add_row(scan_scene *s, const lm_trace *t, int array, int launch, hrow_kind kind)
{
	if (s->nhrows >= 8) return LM_OK;
	hrow *h = &s->hrows[s->nhrows];
	memset(h, 0, sizeof *h);
	lm_trace_array a;
	lm_trace_array_get(t, array, &a);
	h->array = array;
	h->launch = launch;
	h->length = a.length;
	h->kind = kind;
	h->v = vz_malloc((size_t)a.length * sizeof *h->v);
	if (!h->v) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
	vzs_array_after(t, array, launch < 0 ? 0 : launch, h->v, a.length);
	if (launch < 0) { /* the input: what launch 0 loaded */
		int64_t n;
		double *x = vz_trace_input(t, a.name, &n);
		if (x) {
			for (int64_t i = 0; i < a.length; i++) h->v[i] = i < n ? x[i] : NAN;
			vz_free(x);
		}
	}
	h->section = strcmp(a.name, "S") == 0 ? 0 : s->section;
	s->nhrows++;
	return LM_OK;
}

/* Rows: the input, then each launch's global outputs after it. */
static lm_status hier_build(scan_scene *s, const lm_trace *t, const char *fname)
{
	lm_trace_launch l0;
	lm_trace_launch_get(t, 0, &l0);
	int xy = vz_trace_array(t, "XY", LM_SPACE_SHARED, 0);
	lm_trace_array a;
	if (xy < 0 || lm_trace_array_get(t, xy, &a) != LM_OK)
		return lm_set_error(LM_ERR_ARG, "%s: the scan trace has no shared array XY", fname);
	s->section = (int)a.length;
	s->nblocks = (int)(l0.grid[0] * l0.grid[1] * l0.grid[2]);
	s->nlaunches = lm_trace_launch_count(t);
	int X = vz_trace_array(t, "X", LM_SPACE_GLOBAL, -1), Y = vz_trace_array(t, "Y", LM_SPACE_GLOBAL, -1);
	int S = vz_trace_array(t, "S", LM_SPACE_GLOBAL, -1);
	if (X < 0 || Y < 0) return lm_set_error(LM_ERR_ARG, "%s: the scan trace has no arrays X and Y", fname);
	if (hier_add_row(s, t, X, -1, H_INPUT) != LM_OK) return LM_ERR_NOMEM;
	for (int l = 0; l < s->nlaunches; l++) {
		lm_trace_launch la;
		lm_trace_launch_get(t, l, &la);
		bool adds = strstr(la.kernel, "add_sums") != NULL;
		bool first = l == 0;
		int out = adds || first ? Y : S;
		if (s->nlaunches != 3) out = Y; /* deeper recursions: only the output */
		hrow_kind kind = first ? H_SECTIONS : adds ? H_ADD : H_SCAN_SUMS;
		if (hier_add_row(s, t, out, l, kind) != LM_OK) return LM_ERR_NOMEM;
		if (first && S >= 0 && hier_add_row(s, t, S, 0, H_SUMS) != LM_OK) return LM_ERR_NOMEM;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- create / destroy */

static void scan_destroy(void *p)
{
	scan_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < s->npics; i++) pic_free(&s->pics[i]);
	pic_free(&s->block_pic);
	vz_run_clear(&s->hrun);
	for (int i = 0; i < s->nhrows; i++) vz_free(s->hrows[i].v);
	vz_free(s);
}

static bool is_exclusive(const lm_trace *t) { return strstr(lm_trace_name(t), "exclusive") != NULL; }

static lm_status set_block_pic(scan_scene *s, int block);

/* From a run with a trace: one block -> both algorithms; several -> the hierarchy. */
static lm_status from_trace(scan_scene *s, const lm_viz_run *r, const char *fname)
{
	if (vz_trace_check(r->trace, fname) != LM_OK) return LM_ERR_ARG;
	if (vz_trace_array(r->trace, "XY", LM_SPACE_SHARED, -1) < 0 ||
	    vz_trace_array(r->trace, "X", LM_SPACE_GLOBAL, -1) < 0)
		return lm_set_error(LM_ERR_ARG, "%s: not a trace of a scan kernel (it has no arrays X and "
		                    "XY): %s", fname, lm_trace_name(r->trace));
	s->exclusive = is_exclusive(r->trace);
	lm_trace_launch l0;
	lm_trace_launch_get(r->trace, 0, &l0);
	if (lm_trace_launch_count(r->trace) > 1 || l0.grid[0] * l0.grid[1] * l0.grid[2] > 1) {
		s->hier = true;
		vz_run_copy(&s->hrun, r);
		if (hier_build(s, r->trace, fname) != LM_OK) return lm_last_status();
		s->n = s->hrows[0].length;
		return set_block_pic(s, 0);
	}
	int64_t n;
	double *x = vz_trace_input(r->trace, "X", &n);
	if (!x) return vz_error_prefix(LM_ERR_ARG, fname);
	s->n = n;
	lm_status st = companions(s, x, n, r, fname);
	vz_free(x);
	return st;
}

static lm_status from_options(scan_scene *s, const lm_viz_opts *o, const lm_viz_run *measured,
                              const char *fname)
{
	int64_t n = vz_opt_int(o, "n", 16), block = vz_opt_int(o, "block", 0);
	s->exclusive = vz_opt_int(o, "exclusive", 0) != 0;
	double *x = vz_malloc((size_t)n * sizeof *x);
	if (!x) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	lm_status st = vzs_demo_values(vz_opt_string(o, "input", "arange"), n, x, fname);
	s->n = n;
	const char *algo = vz_opt_string(o, "algo", measured ? measured->algo : ks);
	if (st == LM_OK && block > 0) { /* several blocks: the hierarchical picture of one run */
		lm_viz_run r;
		st = vzs_run_scan(x, n, algo, block, s->exclusive, &r, fname);
		if (st == LM_OK) {
			st = from_trace(s, &r, fname);
			vz_run_clear(&r);
		}
	} else if (st == LM_OK) {
		st = companions(s, x, n, NULL, fname);
	}
	vz_free(x);
	return st;
}

static void make_variants(scan_scene *s)
{
	s->nvariants = 0;
	if (s->hier) {
		snprintf(s->variant_names[s->nvariants], 48, "blocks");
		s->block_of_variant[s->nvariants++] = -1;
		for (int b = 0; b < s->nblocks && b < MAX_BLOCK_VARIANTS; b++) {
			snprintf(s->variant_names[s->nvariants], 48, "block %d", b);
			s->block_of_variant[s->nvariants++] = b;
		}
		return;
	}
	snprintf(s->variant_names[s->nvariants++], 48, "side by side");
	for (int i = 0; i < s->npics; i++) snprintf(s->variant_names[s->nvariants++], 48, "%s", s->pics[i].t.name);
}

static void *scan_create(const vz_build *b)
{
	scan_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->block_pic_block = -1;
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven), *measured = NULL;
	for (int i = 0; i < b->nruns && !measured; i++)
		if (!b->runs[i].trace) measured = &b->runs[i];
	lm_status st;
	if (traced) st = from_trace(s, traced, b->fname);
	else {
		s->demo = measured != NULL;
		st = from_options(s, b->opts, measured, b->fname);
	}
	if (st == LM_OK && !s->hier) st = build_chart(s, b->fname);
	if (st != LM_OK) {
		scan_destroy(s);
		return NULL;
	}
	make_variants(s);
	return s;
}

/* ---------------------------------------------------------------- variants and steps */

static pic *shown_pic(scan_scene *s, int i)
{
	if (s->hier) return s->block_pic.t.rows ? &s->block_pic : NULL;
	return &s->pics[i];
}

static lm_status set_block_pic(scan_scene *s, int block)
{
	if (block == s->block_pic_block) return LM_OK;
	pic_free(&s->block_pic);
	s->block_pic_block = block;
	return pic_build(&s->block_pic, &s->hrun, (uint32_t)block, s->fname);
}

static int scan_steps(void *p)
{
	scan_scene *s = p;
	if (s->hier) {
		if (s->variant == 0) return s->nlaunches + 1;
		return s->block_pic.t.rows ? s->block_pic.t.net.nsteps + 1 : 1;
	}
	if (s->variant == 0) {
		int most = 0;
		for (int i = 0; i < s->npics && i < 2; i++)
			if (s->pics[i].t.net.nsteps > most) most = s->pics[i].t.net.nsteps;
		return most + 1;
	}
	return s->pics[s->variant - 1].t.net.nsteps + 1;
}

static int scan_variants(void *p) { return ((scan_scene *)p)->nvariants; }
static const char *scan_variant_name(void *p, int v) { return ((scan_scene *)p)->variant_names[v]; }

static void scan_set_variant(void *p, int v)
{
	scan_scene *s = p;
	s->variant = v;
	if (s->hier && s->block_of_variant[v] >= 0) set_block_pic(s, s->block_of_variant[v]);
}

/* ---------------------------------------------------------------- layout */

static void scan_layout(void *ps, const vz_layout_ctx *c, float *ww, float *wh)
{
	scan_scene *s = ps;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	s->legend_y = 0;
	float top = lh * 1.6f, h = c->h - top;
	if (s->hier && s->variant == 0) {
		s->h_label_w = 40 * vz_char_width(f, VZ_FONT_SMALL);
		top += lh * 1.2f; /* the block names above the first row */
		h -= lh * 1.2f;
		float pitch = h / (float)s->nhrows;
		for (int i = 0; i < s->nhrows; i++) s->hrows[i].y = top + (float)i * pitch;
		s->h_cell_h = fminf(pitch * 0.5f, 28 * c->scale);
		s->h_cell_w = (c->w - s->h_label_w) / (float)s->hrows[0].length;
	} else if (s->hier) {
		vzs_tree_layout(&s->block_pic.t, vz_r(0, top, c->w, h), 0, c);
	} else if (s->variant == 0) {
		float chart_w = fminf(300 * c->scale, c->w * 0.24f), gap = 16 * c->scale;
		int np = s->npics < 2 ? s->npics : 2;
		float pw = (c->w - chart_w - gap * (float)np) / (float)np;
		for (int i = 0; i < np; i++) vzs_tree_layout(&s->pics[i].t, vz_r((float)i * (pw + gap), top, pw, h), 0, c);
		s->chart = vz_r(c->w - chart_w, top, chart_w, h);
	} else {
		vzs_tree_layout(&s->pics[s->variant - 1].t, vz_r(0, top, c->w, h), 0, c);
	}
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing one picture */

static void row_label(const vzs_tree *t, int r, char *buf, size_t cap, const void *ud)
{
	const pic *p = ud;
	const vzs_step *st = &t->net.steps[r - 1];
	if (strcmp(t->name, bk) == 0)
		snprintf(buf, cap, "%s %d", p->down_from && r >= p->down_from ? vz_tr("down", "下扫") : vz_tr("up", "上扫"),
		         st->stride);
	else if (strcmp(t->name, ks) == 0) VZ_SNPRINTF_TR(buf, cap, "step %d s=%d", "第%d步 s=%d", r, st->stride);
	else VZ_SNPRINTF_TR(buf, cap, "step %d", "第 %d 步", r);
}

static void pic_draw(vz_frame *f, pic *p, double t) { vzs_tree_draw(f, &p->t, t, row_label, p); }

/* ---------------------------------------------------------------- drawing the hierarchy */

static void hier_draw(vz_frame *f, scan_scene *s, double t)
{
	int k = (int)floor(t + 1e-9);
	float lh = vz_text_height(f, VZ_FONT_SMALL), x0 = s->h_label_w;
	char num[32];
	for (int i = 0; i < s->nhrows; i++) {
		const hrow *h = &s->hrows[i];
		bool shown = h->launch < 0 || h->launch < k;
		bool now = h->launch >= 0 && h->launch == k - 1;
		float y = h->y, cw = s->h_cell_w, ch = s->h_cell_h;
		vz_text_draw(f, 0, y + (ch - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
		             shown ? vz_th.text : vz_th.text_dim, hrow_label(h->kind));
		for (int64_t e = 0; e < h->length; e++) {
			vz_rect r = vz_r(x0 + (float)e * cw, y, cw, ch);
			if (!vz_visible(f, r)) continue;
			vz_color c = !shown ? vz_th.pending : now ? vz_th.active
			             : h->launch < 0 ? vz_mix(vz_th.pending, vz_okabe_ito[VZ_OI_SKY], 0.28)
			                             : vz_mix(vz_th.active, vz_th.bg, 0.55);
			vzs_value_cell(f, r, c, h->v[e], shown && !isnan(h->v[e]));
			vz_cell *cell = vz_cell_add(f, r, "element");
			cell->group = hrow_group(h->kind);
			cell->state = !shown ? "pending" : now ? "active" : "done";
			cell->color = c;
			cell->index = (int32_t)e;
			cell->launch = h->launch;
			cell->array = h->array;
			if (h->section > 0) cell->block = (int32_t)(e / h->section);
			if (shown && !isnan(h->v[e])) {
				cell->value = h->v[e];
				cell->has_value = true;
			}
		}
		if (h->section > 0) /* block boxes */
			for (int64_t b = 0; b * h->section < h->length; b++) {
				vz_rect r = vz_r(x0 + (float)(b * h->section) * cw, y - 1, (float)h->section * cw, ch + 2);
				vz_outline(f, r, 1.5f, vz_th.text);
				if (i == 0 && r.w * vz_zoom(f) > 50)
					vz_text_draw(f, r.x + 2, y - lh - 1, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
					             vz_zh() ? vz_fmt(num, sizeof num, "线程块 %lld", (long long)b)
					                     : vz_fmt(num, sizeof num, "block %lld", (long long)b));
			}
	}
	/* arrows: each block's last element to its sum; S[b-1] to block b in the final add */
	if (s->nhrows >= 5 && k >= 1) {
		const hrow *y1 = &s->hrows[1], *sr = &s->hrows[2];
		for (int b = 0; b < s->nblocks && b < sr->length; b++) {
			float xs = x0 + ((float)((b + 1) * s->section) - 0.5f) * s->h_cell_w;
			float xd = x0 + ((float)b + 0.5f) * s->h_cell_w;
			vz_arrow(f, xs, y1->y + s->h_cell_h, xd, sr->y, 1.2f, 5, k == 1 ? vz_th.arrow_now : vz_th.arrow);
		}
	}
	if (s->nhrows >= 5 && k >= 3) {
		const hrow *sc = &s->hrows[3], *yf = &s->hrows[4];
		for (int b = 1; b < s->nblocks; b++) {
			float xs = x0 + ((float)(b - 1) + 0.5f) * s->h_cell_w;
			float xd = x0 + ((float)b + 0.5f) * (float)s->section * s->h_cell_w;
			vz_arrow(f, xs, sc->y + s->h_cell_h, xd, yf->y, 1.2f, 5, vz_th.arrow_now);
		}
	}
}

/* ---------------------------------------------------------------- the frame */

static void legend(vz_frame *f, float y)
{
	float x = 0;
	x = vzs_legend(f, x, y, vz_mix(vz_th.pending, vz_okabe_ito[VZ_OI_SKY], 0.28), false, vz_tr("input", "输入"));
	x = vzs_legend(f, x, y, vz_th.active, false, vz_tr("written by an add in this step", "本步由加法写入"));
	x = vzs_legend(f, x, y, vz_th.idle, false, vz_tr("idle (no add)", "空闲（无加法）"));
	x = vzs_legend(f, x, y, vz_th.pending, false, vz_tr("not reached yet", "尚未到达"));
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	vz_arrow(f, x, y + lh / 2, x + 2 * lh, y + lh / 2, 1.5f, 6, vz_th.arrow_now);
	vz_text_draw(f, x + 2.4f * lh, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	             vz_tr("an add's operand (this step)", "加法的操作数（本步）"));
}

static void draw_chart(vz_frame *f, scan_scene *s)
{
	vz_rect c = s->chart;
	float h = (c.h - 10) / 2;
	vzs_series adds[2] = {{"Kogge-Stone", vz_th.path_a, s->cadds[0]}, {"Brent-Kung", vz_th.path_b, s->cadds[1]}};
	vzs_series steps[2] = {{"Kogge-Stone", vz_th.path_a, s->csteps[0]}, {"Brent-Kung", vz_th.path_b, s->csteps[1]}};
	vzs_chart(f, vz_r(c.x, c.y, c.w, h), vz_tr("adds against n (emulated runs)", "加法次数随 n 的变化（模拟运行）"),
	          s->cx, s->cn, true, true, adds, 2, (double)s->n);
	vzs_chart(f, vz_r(c.x, c.y + h + 10, c.w, h), vz_tr("steps against n (emulated runs)", "步数随 n 的变化（模拟运行）"),
	          s->cx, s->cn, true, false, steps, 2, (double)s->n);
}

static void scan_draw(void *p, vz_frame *f)
{
	scan_scene *s = p;
	s->t = f->t;
	legend(f, s->legend_y);
	if (s->hier && s->variant == 0) hier_draw(f, s, f->t);
	else if (s->hier) {
		if (s->block_pic.t.rows) pic_draw(f, &s->block_pic, f->t);
	} else if (s->variant == 0) {
		for (int i = 0; i < s->npics && i < 2; i++) pic_draw(f, &s->pics[i], f->t);
		draw_chart(f, s);
	} else {
		pic_draw(f, &s->pics[s->variant - 1], f->t);
	}
}

/* ---------------------------------------------------------------- text */

static void scan_title(void *p, char *buf, size_t cap)
{
	scan_scene *s = p;
	const char *kind = s->exclusive ? vz_tr("exclusive", "排除") : vz_tr("inclusive", "包含");
	if (s->hier)
		VZ_SNPRINTF_TR(buf, cap, "scan: the hierarchical %s scan of %lld elements in %d blocks of %d",
		               "扫描：分层%s扫描，%lld 个元素，%d 个线程块，每块 %d 个", kind, (long long)s->n, s->nblocks,
		               s->section);
	else
		VZ_SNPRINTF_TR(buf, cap, "scan: Kogge-Stone and Brent-Kung, %s, on the same %lld elements%s",
		               "扫描：Kogge-Stone 与 Brent-Kung，%s扫描，同一组 %lld 个元素%s", kind, (long long)s->n,
		               s->demo ? vz_tr(" (demonstration input)", "（演示输入）") : "");
}

static void scan_step_label(void *p, int step, char *buf, size_t cap)
{
	scan_scene *s = p;
	if (s->hier && s->variant == 0) {
		static const char *const what[2][4] = {
			{"the input, cut into sections of one block each",
			 "launch 1: every block scans its section and writes its sum S[b]",
			 "launch 2: one block scans the block sums S",
			 "launch 3: block b adds S[b-1] to each of its elements: done"},
			{"输入，按线程块切成段，每块一段", "第 1 次启动：每个线程块扫描自己的段，并写出段和 S[b]",
			 "第 2 次启动：一个线程块扫描块和 S", "第 3 次启动：线程块 b 给自己的每个元素加上 S[b-1]，完成"}};
		snprintf(buf, cap, "%s", step < 4 ? what[vz_zh()][step] : "");
		return;
	}
	pic *pc = s->hier ? shown_pic(s, 0) : s->variant == 0 ? &s->pics[0] : &s->pics[s->variant - 1];
	if (!pc || !pc->t.rows) {
		VZ_SNPRINTF_TR(buf, cap, "step %d", "第 %d 步", step);
		return;
	}
	if (step == 0) {
		snprintf(buf, cap, "%s", vz_tr("the input, loaded into shared memory (XY)", "输入，已载入共享内存（XY）"));
		return;
	}
	if (s->variant == 0 && !s->hier) {
		buf[0] = '\0';
		for (int i = 0; i < s->npics && i < 2; i++) {
			const pic *q = &s->pics[i];
			if (step > q->t.net.nsteps) {
				VZ_APPEND_TR(buf, cap, "%s%s: done", "%s%s：已完成", i ? "  |  " : "", q->t.title(q->t.name));
				continue;
			}
			const vzs_step *st = &q->t.net.steps[step - 1];
			VZ_APPEND_TR(buf, cap, "%s%s: %d adds, stride %d%s", "%s%s：%d 次加法，步长 %d%s", i ? "  |  " : "",
			             q->t.name, st->count, st->stride,
			             q->down_from && step >= q->down_from ? vz_tr(" (down-sweep)", "（下扫阶段）")
			             : strcmp(q->t.name, bk) == 0         ? vz_tr(" (up-sweep)", "（上扫阶段）")
			                                                  : "");
		}
		return;
	}
	const vzs_step *st = &pc->t.net.steps[step - 1];
	VZ_SNPRINTF_TR(buf, cap, "step %d: %d threads add (stride %d), %d of %d warps issue",
	               "第 %d 步：%d 个线程做加法（步长 %d），%d/%d 个线程束发射指令", step, st->count, st->stride,
	               st->warps_issued, pc->t.net.warps);
}

static void scan_counters(void *p, vz_panel *pn)
{
	scan_scene *s = p;
	static const char *const names[] = {"steps", "adds", "modelled_cycles", "shared_loads",
	                                    "shared_stores", "barriers", "simd_efficiency",
	                                    "divergent_branches", "time_ms", "gbps", NULL};
	if (s->hier) vzs_panel_add(pn, s->hrun.algo, &s->hrun, names);
	for (int i = 0; i < s->npics; i++) vzs_panel_add(pn, s->pics[i].t.name, &s->pics[i].t.run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	if (s->demo)
		VZ_NOTE_TR(pn, "The picture shows emulated runs on a %lld-element demonstration input: the measured run "
		           "has no trace.", "图中是在 %lld 个元素的演示输入上的模拟运行：实测的运行没有 trace。", (long long)s->n);
	for (int i = 0; i < s->npics; i++)
		if (s->pics[i].t.net.truncated)
			VZ_NOTE_TR(pn, "The trace of %s is truncated: only the steps it kept are drawn.",
			           "%s 的 trace 被截断：只画出保留下来的步骤。", s->pics[i].t.name);
}

static void scan_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	scan_scene *s = p;
	if (!c->kind || strcmp(c->kind, "element") != 0) return;
	if (s->hier && s->variant == 0) {
		int k = 0;
		while (k < H_ADD && strcmp(hrow_group((hrow_kind)k), c->group) != 0) k++;
		VZ_SNPRINTF_TR(buf, cap, "%s\nelement %d", "%s\n元素 %d", hrow_label((hrow_kind)k), c->index);
		if (c->block >= 0) VZ_APPEND_TR(buf, cap, " (block %d)", "（线程块 %d）", c->block);
		if (c->has_value) vz_append(buf, cap, " = %g", c->value);
		return;
	}
	const pic *pc = NULL;
	for (int i = 0; i < s->npics; i++)
		if (strcmp(s->pics[i].t.name, c->group) == 0) pc = &s->pics[i];
	if (s->hier) pc = &s->block_pic;
	if (pc && pc->t.rows) vzs_tree_describe(&pc->t, c, s->t, buf, cap);
}

/* ---------------------------------------------------------------- the class */

static const vz_option scan_options[] = {
	{"n", VZ_OPT_INT, 1, 65536, NULL, "16", "elements of the demonstration input"},
	{"input", VZ_OPT_CHOICE, 0, 0, "arange ones pmpp random", "arange", "the demonstration input"},
	{"block", VZ_OPT_INT, 1, 1024, NULL, "0", "threads per block; smaller than the input: the hierarchical scan"},
	{"algo", VZ_OPT_CHOICE, 0, 0, "kogge-stone brent-kung hierarchical", "kogge-stone", "the algorithm of a hierarchical run (with block)"},
	{"exclusive", VZ_OPT_INT, 0, 1, NULL, "0", "1: an exclusive scan"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_scan = {
	.name = "scan",
	.summary = "Kogge-Stone and Brent-Kung scans side by side, step by step; the hierarchical scan as blocks",
	.patterns = "scan",
	.options = scan_options,
	.create = scan_create,
	.destroy = scan_destroy,
	.steps = scan_steps,
	.variants = scan_variants,
	.variant_name = scan_variant_name,
	.set_variant = scan_set_variant,
	.layout = scan_layout,
	.draw = scan_draw,
	.title = scan_title,
	.step_label = scan_step_label,
	.counters = scan_counters,
	.describe = scan_describe,
};
