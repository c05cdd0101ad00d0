/*
 * reduce.c — the reduction scene (PMPP chapter 10): the reduction tree of the naive kernel (the
 * active threads spread apart as the stride doubles) beside the convergent one (they stay packed
 * at the front), on the same input, and under each tree the warps of the block at every step with
 * their 32 lanes lit when they add — so the divergence difference is visible: the naive kernel
 * keeps every warp issuing with fewer and fewer useful lanes, the convergent one retires whole
 * warps and runs the rest full.
 *
 * Built from a reduce run with a trace (its input is read back and the other kernel runs on it),
 * from a run without one (its counters in the panel, the picture from a demonstration input), or
 * from options (viz.scene('reduce', {n=, block=, input=})). A block of a multi-block run is drawn
 * (block 0 by default; option `block_shown`).
 * Read next: addnet.c, scan.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

/* One kernel's picture: its tree (tree.c), and under it the lanes of each warp per step. */
typedef struct tree {
	vzs_tree t;
	uint32_t *masks;     /* nsteps x warps: lanes that added (0: the warp issued no add) */
	vzs_grid *lane_grids; /* a step's lanes as an image when they are too narrow (nsteps) */
	vz_color *lane_px;   /* warps * 32 colours */
	float lanes_top, lane_w, lane_h, lane_pitch, warp_gap;
} tree;

typedef struct reduce_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo;
	int64_t n;
	uint32_t block_shown;
	tree trees[3];
	int ntrees;
	int variant;          /* 0: side by side, 1..: one tree */
	double t;             /* the time last drawn */
	char fname[32];
} reduce_scene;

static const char *tree_title(const char *algo)
{
	if (strcmp(algo, "naive") == 0) return vz_tr("naive: divergent strides (PMPP 10.3)", "naive：步长发散（PMPP 10.3）");
	if (strcmp(algo, "convergent") == 0)
		return vz_tr("convergent: threads stay packed (PMPP 10.4)", "convergent：活跃线程保持紧凑（PMPP 10.4）");
	if (strcmp(algo, "shared") == 0) return vz_tr("shared memory (PMPP 10.5)", "共享内存（PMPP 10.5）");
	return vz_tr("coarsened (PMPP 10.7)", "线程粗化（PMPP 10.7）");
}

static void tree_free(tree *t)
{
	for (int r = 0; t->lane_grids && r < t->t.net.nsteps; r++) vzs_grid_free(&t->lane_grids[r]);
	vz_free(t->lane_grids);
	vz_free(t->lane_px);
	vz_free(t->masks);
	vzs_tree_free(&t->t);
	memset(t, 0, sizeof *t);
}

static lm_status tree_build(tree *t, const lm_viz_run *run, uint32_t block, const char *fname)
{
	memset(t, 0, sizeof *t);
	if (vzs_tree_build(&t->t, run, block, tree_title, fname) != LM_OK) return lm_last_status();
	const vzs_addnet *n = &t->t.net;
	t->masks = vz_calloc((size_t)n->nsteps * (size_t)n->warps + 1, sizeof *t->masks);
	t->lane_grids = vz_calloc((size_t)n->nsteps + 1, sizeof *t->lane_grids);
	t->lane_px = vz_malloc((size_t)n->warps * 32 * sizeof *t->lane_px);
	if (!t->masks || !t->lane_grids || !t->lane_px) {
		tree_free(t);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	for (int r = 0; r < n->nsteps; r++)
		for (int i = n->steps[r].first; i < n->steps[r].first + n->steps[r].count; i++)
			if (n->adds[i].warp < n->warps)
				t->masks[(size_t)r * (size_t)n->warps + n->adds[i].warp] |= n->adds[i].mask;
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

static void reduce_destroy(void *p)
{
	reduce_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < s->ntrees; i++) tree_free(&s->trees[i]);
	vz_free(s);
}

static lm_status add_tree(reduce_scene *s, const lm_viz_run *r, const char *fname)
{
	if (s->ntrees >= 3) return LM_OK;
	if (tree_build(&s->trees[s->ntrees], r, s->block_shown, fname) != LM_OK) return lm_last_status();
	s->ntrees++;
	return LM_OK;
}

/* naive and convergent on x with the given block (0: the kernels' default). */
static lm_status both(reduce_scene *s, const double *x, int64_t n, int64_t block,
                      const lm_viz_run *have, const char *fname)
{
	static const char *const algos[] = {"naive", "convergent"};
	for (int i = 0; i < 2; i++) {
		if (have && strcmp(have->algo, algos[i]) == 0) {
			if (add_tree(s, have, fname) != LM_OK) return lm_last_status();
			continue;
		}
		lm_viz_run r;
		if (vzs_run_reduce(x, n, algos[i], block, &r, fname) != LM_OK) return lm_last_status();
		lm_status st = add_tree(s, &r, fname);
		vz_run_clear(&r);
		if (st != LM_OK) return st;
	}
	if (have && strcmp(have->algo, "naive") && strcmp(have->algo, "convergent"))
		return add_tree(s, have, fname);
	return LM_OK;
}

static lm_status from_trace(reduce_scene *s, const lm_viz_run *r, const char *fname)
{
	if (vz_trace_check(r->trace, fname) != LM_OK) return LM_ERR_ARG;
	if (vz_trace_array(r->trace, "input", LM_SPACE_GLOBAL, -1) < 0 ||
	    vz_trace_array(r->trace, "output", LM_SPACE_GLOBAL, -1) < 0)
		return lm_set_error(LM_ERR_ARG, "%s: not a trace of a reduce kernel (it has no arrays input "
		                    "and output): %s", fname, lm_trace_name(r->trace));
	lm_trace_launch la;
	lm_trace_launch_get(r->trace, 0, &la);
	uint32_t blocks = la.grid[0] * la.grid[1] * la.grid[2];
	if (s->block_shown >= blocks)
		return lm_set_error(LM_ERR_ARG, "%s: option block_shown is %u but the run has %u blocks",
		                    fname, s->block_shown, blocks);
	int64_t n;
	double *x = vz_trace_input(r->trace, "input", &n);
	if (!x) return vz_error_prefix(LM_ERR_ARG, fname);
	s->n = n;
	lm_status st = both(s, x, n, (int64_t)la.block[0], r, fname);
	vz_free(x);
	return st;
}

static void *reduce_create(const vz_build *b)
{
	reduce_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->block_shown = (uint32_t)vz_opt_int(b->opts, "block_shown", 0);
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	lm_status st;
	if (traced) {
		st = from_trace(s, traced, b->fname);
	} else {
		s->demo = b->nruns > 0;
		/* 4096 elements in blocks of 64 by default: 32 blocks share the modelled SM, so the warps
		 * the naive tree keeps issuing with idle lanes cost what the lecture says (one block alone
		 * is latency-bound: both trees take its slowest warp's time) */
		int64_t n = vz_opt_int(b->opts, "n", 4096), block = vz_opt_int(b->opts, "block", 64);
		double *x = vz_malloc((size_t)n * sizeof *x);
		st = x ? vzs_demo_values(vz_opt_string(b->opts, "input", "arange"), n, x, b->fname)
		       : lm_set_error(LM_ERR_NOMEM, "%s: out of memory", b->fname);
		s->n = n;
		if (st == LM_OK) st = both(s, x, n, block, NULL, b->fname);
		vz_free(x);
	}
	if (st != LM_OK) {
		reduce_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, variants, layout */

static int reduce_steps(void *p)
{
	reduce_scene *s = p;
	int most = 0;
	for (int i = 0; i < s->ntrees; i++)
		if ((s->variant == 0 ? i < 2 : i == s->variant - 1) && s->trees[i].t.net.nsteps > most)
			most = s->trees[i].t.net.nsteps;
	return most + 1;
}

static int reduce_variants(void *p) { return 1 + ((reduce_scene *)p)->ntrees; }

static const char *reduce_variant_name(void *p, int v)
{
	reduce_scene *s = p;
	return v == 0 ? "side by side" : s->trees[v - 1].t.name;
}

static void reduce_set_variant(void *p, int v) { ((reduce_scene *)p)->variant = v; }

static void tree_layout(tree *t, vz_rect box, const vz_layout_ctx *c)
{
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), bh = vz_text_height(f, VZ_FONT_BODY);
	const vzs_addnet *n = &t->t.net;
	float rows_h = (box.h - bh - lh * 0.6f) * 0.52f;
	vzs_tree_layout(&t->t, box, rows_h, c);
	/* the lanes: one row per step, the warps side by side, 32 lanes each */
	t->lanes_top = t->t.top + rows_h + lh * 1.8f;
	t->lane_pitch = (box.y + box.h - t->lanes_top) / (float)n->nsteps;
	t->lane_h = fminf(fmaxf(t->lane_pitch * 0.6f, 3), 18 * c->scale);
	/* right of the lanes, after a gap: "32/32 warps 100%" (16 columns; in Chinese 17) */
	float avail = box.w - t->t.label_w - 18 * vz_char_width(f, VZ_FONT_SMALL);
	t->warp_gap = fmaxf(2, avail * 0.02f);
	if (n->warps > 8) t->warp_gap = fmaxf(1, avail * 0.004f);
	t->lane_w = (avail - t->warp_gap * (float)n->warps) / (float)(32 * n->warps);
}

static void reduce_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	reduce_scene *s = p;
	float lh = vz_text_height(c->metrics, VZ_FONT_SMALL), top = lh * 1.6f, gap = 20 * c->scale;
	if (s->variant == 0) {
		int nt = s->ntrees < 2 ? s->ntrees : 2;
		float w = (c->w - gap * (float)(nt - 1)) / (float)nt;
		for (int i = 0; i < nt; i++) tree_layout(&s->trees[i], vz_r((float)i * (w + gap), top, w, c->h - top), c);
	} else {
		tree_layout(&s->trees[s->variant - 1], vz_r(0, top, c->w, c->h - top), c);
	}
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing */

static void row_label(const vzs_tree *t, int r, char *buf, size_t cap, const void *ud)
{
	(void)t, (void)ud;
	VZ_SNPRINTF_TR(buf, cap, "step %d", "第 %d 步", r);
}

/* How lane l of warp w looks in step r (1-based) at step k. */
static vz_color lane_look(const tree *t, int r, int w, int l, int k, const char **state)
{
	uint32_t m = t->masks[(size_t)(r - 1) * (size_t)t->t.net.warps + w];
	bool on = (m >> l) & 1u;
	if (r > k) {
		*state = "pending";
		return vz_th.pending;
	}
	*state = m == 0 ? "not issued" : on ? "active" : "idle";
	return m == 0 ? vz_th.pending : on ? vz_th.path_a : vz_th.idle;
}

static void lane_fields(const tree *t, vz_cell *cell, int r, int w, int l)
{
	cell->group = t->t.name;
	cell->step = r;
	cell->warp = w;
	cell->lane = l;
	cell->thread = w * 32 + l;
	cell->block = (int32_t)t->t.net.block;
}

static void draw_lanes(vz_frame *f, tree *t, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	const vzs_addnet *n = &t->t.net;
	char head[160];
	snprintf(head, sizeof head, "%s", vz_tr("lanes of each warp that add in the step (a warp with none lit issues no add)",
	                                         "各线程束在本步做加法的通道（全不亮的线程束不发射加法）"));
	vz_text_fit(f, VZ_FONT_SMALL, head, sizeof head, t->t.box.w);
	vz_text_draw(f, t->t.box.x, t->lanes_top - lh * 1.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, head);
	bool dense = vzs_dense(f, t->lane_w * 1.6f);
	const char *state;
	for (int r = 1; r <= n->nsteps; r++) {
		float y = t->lanes_top + (float)(r - 1) * t->lane_pitch, x0 = t->t.box.x + t->t.label_w;
		const vzs_step *st = &n->steps[r - 1];
		VZ_TEXTF_TR(f, t->t.box.x, y + (t->lane_h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
		            r <= k ? vz_th.text : vz_th.text_dim, "step %d", "第 %d 步", r);
		float x = x0;
		if (dense) { /* the step's lanes as one image (warp gaps left out) */
			for (int w = 0; w < n->warps; w++)
				for (int l = 0; l < 32; l++) t->lane_px[w * 32 + l] = lane_look(t, r, w, l, k, &state);
			float width = 32 * t->lane_w * (float)n->warps + t->warp_gap * (float)(n->warps - 1);
			vz_cell *g = vzs_grid_draw(f, &t->lane_grids[r - 1], vz_r(x0, y, width, t->lane_h), 1,
			                           32 * n->warps, t->lane_px, "lane", -1);
			g->group = t->t.name;
			g->step = r;
			x = x0 + width + t->warp_gap;
		} else {
			for (int w = 0; w < n->warps; w++, x += 32 * t->lane_w + t->warp_gap)
				for (int l = 0; l < 32; l++) {
					vz_rect lr = vz_r(x + (float)l * t->lane_w, y, fmaxf(t->lane_w * 0.85f, 0.5f), t->lane_h);
					vz_color c = lane_look(t, r, w, l, k, &state);
					if (strcmp(state, "not issued") == 0) vz_hatch(f, lr, vz_th.pending, vz_th.hatch);
					else vz_fill(f, lr, c);
					vz_cell *cell = vz_cell_add(f, lr, "lane");
					cell->state = state;
					cell->color = c;
					lane_fields(t, cell, r, w, l);
				}
		}
		if (r <= k) {
			double eff = st->warps_issued ? (double)st->lanes / (32.0 * st->warps_issued) : 0;
			VZ_TEXTF_TR(f, x + 4, y + (t->lane_h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
			            "%d/%d warps %3.0f%%", "%d/%d 线程束 %3.0f%%", st->warps_issued, n->warps, 100 * eff);
		}
	}
	/* warp numbers under the last row */
	float x = t->t.box.x + t->t.label_w, y = t->lanes_top + (float)n->nsteps * t->lane_pitch;
	for (int w = 0; w < n->warps; w++, x += 32 * t->lane_w + t->warp_gap)
		if (32 * t->lane_w > 6 * vz_char_width(f, VZ_FONT_SMALL))
			VZ_TEXTF_TR(f, x + 16 * t->lane_w, y, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text_dim, "warp %d",
			            "线程束 %d", w);
}

static void draw_one(vz_frame *f, tree *t, double time)
{
	int k = (int)floor(time + 1e-9);
	if (k > t->t.net.nsteps) k = t->t.net.nsteps;
	vzs_tree_draw(f, &t->t, time, row_label, NULL);
	draw_lanes(f, t, k);
}

static void reduce_draw(void *p, vz_frame *f)
{
	reduce_scene *s = p;
	s->t = f->t;
	float x = 0;
	x = vzs_legend(f, x, 0, vz_mix(vz_th.pending, vz_okabe_ito[VZ_OI_SKY], 0.28), false, vz_tr("input", "输入"));
	x = vzs_legend(f, x, 0, vz_th.active, false, vz_tr("partial sum written in this step", "本步写入的部分和"));
	x = vzs_legend(f, x, 0, vz_th.idle, false, vz_tr("idle", "空闲"));
	x = vzs_legend(f, x, 0, vz_th.path_a, false, vz_tr("lane that adds", "做加法的通道"));
	x = vzs_legend(f, x, 0, vz_th.pending, true, vz_tr("warp issues no add", "线程束不发射加法"));
	if (s->variant == 0)
		for (int i = 0; i < s->ntrees && i < 2; i++) draw_one(f, &s->trees[i], f->t);
	else
		draw_one(f, &s->trees[s->variant - 1], f->t);
}

/* ---------------------------------------------------------------- text */

static void reduce_title(void *p, char *buf, size_t cap)
{
	reduce_scene *s = p;
	const tree *t = &s->trees[0];
	lm_trace_launch la;
	lm_trace_launch_get(t->t.run.trace, 0, &la);
	unsigned blocks = la.grid[0] * la.grid[1] * la.grid[2];
	const char *demo = s->demo ? vz_tr(", demonstration input", "，演示输入") : "";
	if (blocks <= 1) {
		VZ_SNPRINTF_TR(buf, cap, "reduce: naive and convergent trees on the same %lld elements, one block of "
		               "%d threads (%d warps)%s", "归约：naive 与 convergent 两棵归约树，同一组 %lld 个元素，"
		               "一个线程块 %d 个线程（%d 个线程束）%s", (long long)s->n, t->t.net.threads, t->t.net.warps, demo);
	} else {
		VZ_SNPRINTF_TR(buf, cap, "reduce: naive and convergent trees on the same %lld elements: block %u of %u "
		               "(%d threads, %d warps)%s", "归约：naive 与 convergent 两棵归约树，同一组 %lld 个元素：第 %u 个"
		               "线程块，共 %u 个（%d 个线程，%d 个线程束）%s", (long long)s->n, t->t.net.block, blocks,
		               t->t.net.threads, t->t.net.warps, demo);
	}
}

static void reduce_step_label(void *p, int step, char *buf, size_t cap)
{
	reduce_scene *s = p;
	if (step == 0) {
		snprintf(buf, cap, "%s", vz_tr("the input: each thread will add pairs of partial sums, step by step",
		                               "输入：每个线程将逐步把部分和两两相加"));
		return;
	}
	buf[0] = '\0';
	for (int i = 0; i < s->ntrees && i < 2; i++) {
		const tree *t = &s->trees[i];
		if (s->variant && i != s->variant - 1) continue;
		if (step > t->t.net.nsteps) {
			VZ_APPEND_TR(buf, cap, "%s%s: done", "%s%s：已完成", buf[0] ? "  |  " : "", t->t.name);
			continue;
		}
		const vzs_step *st = &t->t.net.steps[step - 1];
		VZ_APPEND_TR(buf, cap, "%s%s: stride %d, %d threads add in %d warps", "%s%s：步长 %d，%d 个线程在 %d 个线程束中做加法",
		             buf[0] ? "  |  " : "", t->t.name, st->stride, st->count, st->warps_issued);
	}
}

static void reduce_counters(void *p, vz_panel *pn)
{
	reduce_scene *s = p;
	static const char *const names[] = {"modelled_cycles", "steps", "adds", "simd_efficiency",
	                                    "divergent_branches", "global_loads", "global_stores",
	                                    "barriers", "time_ms", "gbps", NULL};
	for (int i = 0; i < s->ntrees; i++) vzs_panel_add(pn, s->trees[i].t.name, &s->trees[i].t.run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	if (s->demo)
		VZ_NOTE_TR(pn, "The picture shows emulated runs on a %lld-element demonstration input: the measured run "
		           "has no trace.", "图中是在 %lld 个元素的演示输入上的模拟运行：实测的运行没有 trace。", (long long)s->n);
	if (s->ntrees >= 1 && s->trees[0].t.run.trace) {
		lm_trace_launch la;
		lm_trace_launch_get(s->trees[0].t.run.trace, 0, &la);
		unsigned blocks = la.grid[0] * la.grid[1] * la.grid[2];
		if (blocks > 1)
			VZ_NOTE_TR(pn, "modelled_cycles: the whole launch, %u blocks on one SM: the naive tree's warps keep "
			           "issuing with idle lanes, slots the other blocks' warps need.",
			           "modelled_cycles：整个启动，%u 个块共用一个 SM：朴素树的线程束带着空闲通道继续发射，占用了"
			           "其他块的线程束需要的发射槽。", blocks);
		else
			vz_panel_note(pn, "%s", vz_tr("modelled_cycles: one block alone waits for its slowest warp in both "
			                             "trees; the difference shows once blocks share the SM (n = 4096, block = 64).",
			                             "modelled_cycles：只有一个块时，两棵树都在等最慢的线程束；多个块共用 SM 时差别"
			                             "才显出来（n = 4096，block = 64）。"));
	}
}

static void reduce_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	reduce_scene *s = p;
	const tree *t = NULL;
	for (int i = 0; i < s->ntrees; i++)
		if (c->group && strcmp(s->trees[i].t.name, c->group) == 0) t = &s->trees[i];
	if (!t) return;
	if (strcmp(c->kind, "lane") != 0) {
		vzs_tree_describe(&t->t, c, s->t, buf, cap);
		return;
	}
	if (c->rows > 0) { /* a lane of a step drawn as an image */
		int w = c->col / 32, l = c->col % 32, k = (int)floor(s->t + 1e-9);
		if (c->step < 1 || c->step > t->t.net.nsteps || w >= t->t.net.warps) return;
		c->color = lane_look(t, c->step, w, l, k, &c->state);
		lane_fields(t, c, c->step, w, l);
		c->rows = c->cols = -1;
	}
	VZ_SNPRINTF_TR(buf, cap, "%s, step %d: warp %d, lane %d (thread %d)\n%s", "%s，第 %d 步：线程束 %d，通道 %d（线程 %d）\n%s",
	               t->t.name, c->step, c->warp, c->lane, c->thread,
	               strcmp(c->state, "active") == 0 ? vz_tr("adds in this step", "本步做加法")
	               : strcmp(c->state, "idle") == 0
	                   ? vz_tr("idle: its warp issues the add, this lane is masked off", "空闲：所在线程束发射了加法，但这个通道被屏蔽")
	               : strcmp(c->state, "not issued") == 0 ? vz_tr("its warp issues no add in this step", "所在线程束本步不发射加法")
	                                                     : vz_tr("not reached yet", "尚未到达"));
}

static const vz_option reduce_options[] = {
	{"n", VZ_OPT_INT, 2, 4096, NULL, "4096", "elements of the demonstration input"},
	{"block", VZ_OPT_INT, 1, 1024, NULL, "64", "threads per block (a power of two; 0: one block)"},
	{"input", VZ_OPT_CHOICE, 0, 0, "arange ones pmpp random", "arange", "the demonstration input"},
	{"block_shown", VZ_OPT_INT, 0, 1e6, NULL, "0", "the block whose tree is drawn"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_reduce = {
	.name = "reduce",
	.summary = "the naive and convergent reduction trees side by side, with the active lanes of each warp",
	.patterns = "reduce",
	.options = reduce_options,
	.create = reduce_create,
	.destroy = reduce_destroy,
	.steps = reduce_steps,
	.variants = reduce_variants,
	.variant_name = reduce_variant_name,
	.set_variant = reduce_set_variant,
	.layout = reduce_layout,
	.draw = reduce_draw,
	.title = reduce_title,
	.step_label = reduce_step_label,
	.counters = reduce_counters,
	.describe = reduce_describe,
};
