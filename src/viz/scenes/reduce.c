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

typedef struct tree {
	char name[32];
	const char *title;
	lm_viz_run run;
	vzs_addnet net;
	double *rows;        /* (nsteps + 1) x length */
	int *writer;         /* (nsteps + 1) x length: the add writing the cell, or -1 */
	uint32_t *masks;     /* nsteps x warps: lanes that added (0: the warp issued no add) */
	vz_rect box;
	float cell_w, cell_h, pitch, top, lanes_top, lane_w, lane_h, lane_pitch, warp_gap, label_w;
} tree;

typedef struct reduce_scene {
	lm_viz_run given[4];
	int ngiven;
	bool demo;
	int64_t n;
	uint32_t block_shown;
	tree trees[3];
	int ntrees;
	int variant;          /* 0: side by side, 1..: one tree */
	char fname[32];
} reduce_scene;

static const char *tree_title(const char *algo)
{
	if (strcmp(algo, "naive") == 0) return "naive: divergent strides (PMPP 10.3)";
	if (strcmp(algo, "convergent") == 0) return "convergent: threads stay packed (PMPP 10.4)";
	if (strcmp(algo, "shared") == 0) return "shared memory (PMPP 10.5)";
	return "coarsened (PMPP 10.7)";
}

static void tree_free(tree *t)
{
	vz_run_clear(&t->run);
	vzs_addnet_free(&t->net);
	free(t->rows);
	free(t->writer);
	free(t->masks);
	memset(t, 0, sizeof *t);
}

static lm_status tree_build(tree *t, const lm_viz_run *run, uint32_t block, const char *fname)
{
	memset(t, 0, sizeof *t);
	vz_run_copy(&t->run, run);
	snprintf(t->name, sizeof t->name, "%s", run->algo);
	t->title = tree_title(run->algo);
	if (vzs_addnet_build(run->trace, 0, block, &t->net) != LM_OK) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		tree_free(t);
		return lm_set_error(LM_ERR_ARG, "%s: this reduce trace cannot be drawn: %s", fname, msg);
	}
	int rows = t->net.nsteps + 1;
	size_t cells = (size_t)rows * (size_t)t->net.length;
	t->rows = malloc(cells * sizeof *t->rows);
	t->writer = malloc(cells * sizeof *t->writer);
	t->masks = calloc((size_t)t->net.nsteps * (size_t)t->net.warps + 1, sizeof *t->masks);
	if (!t->rows || !t->writer || !t->masks) {
		tree_free(t);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	for (int r = 0; r < rows; r++) {
		vzs_addnet_values(&t->net, r, t->rows + (size_t)r * (size_t)t->net.length);
		int *w = t->writer + (size_t)r * (size_t)t->net.length;
		for (int64_t i = 0; i < t->net.length; i++) w[i] = -1;
		if (r == 0) continue;
		const vzs_step *s = &t->net.steps[r - 1];
		for (int i = s->first; i < s->first + s->count; i++) {
			const vzs_add *a = &t->net.adds[i];
			if (a->dst >= t->net.lo && a->dst < t->net.lo + t->net.length) w[a->dst - t->net.lo] = i;
			if (a->warp < t->net.warps) t->masks[(size_t)(r - 1) * (size_t)t->net.warps + a->warp] |= a->mask;
		}
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

static void reduce_destroy(void *p)
{
	reduce_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < s->ntrees; i++) tree_free(&s->trees[i]);
	free(s);
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
	free(x);
	return st;
}

static void *reduce_create(const vz_build *b)
{
	reduce_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->block_shown = (uint32_t)vz_opt_int(b->opts, "block_shown", 0);
	const lm_viz_run *traced = NULL;
	for (int i = 0; i < b->nruns && s->ngiven < 4; i++) {
		vz_run_copy(&s->given[s->ngiven++], &b->runs[i]);
		if (b->runs[i].trace && !traced) traced = &b->runs[i];
	}
	lm_status st;
	if (traced) {
		st = from_trace(s, traced, b->fname);
	} else {
		s->demo = b->nruns > 0;
		int64_t n = vz_opt_int(b->opts, "n", 128), block = vz_opt_int(b->opts, "block", 0);
		double *x = malloc((size_t)n * sizeof *x);
		st = x ? vzs_demo_values(vz_opt_string(b->opts, "input", "arange"), n, x, b->fname)
		       : lm_set_error(LM_ERR_NOMEM, "%s: out of memory", b->fname);
		s->n = n;
		if (st == LM_OK) st = both(s, x, n, block, NULL, b->fname);
		free(x);
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
		if ((s->variant == 0 ? i < 2 : i == s->variant - 1) && s->trees[i].net.nsteps > most)
			most = s->trees[i].net.nsteps;
	return most + 1;
}

static int reduce_variants(void *p) { return 1 + ((reduce_scene *)p)->ntrees; }

static const char *reduce_variant_name(void *p, int v)
{
	reduce_scene *s = p;
	return v == 0 ? "side by side" : s->trees[v - 1].name;
}

static void reduce_set_variant(void *p, int v) { ((reduce_scene *)p)->variant = v; }

static void tree_layout(tree *t, vz_rect box, const vz_layout_ctx *c)
{
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), bh = vz_text_height(f, VZ_FONT_BODY);
	t->box = box;
	t->label_w = 9 * vz_char_width(f, VZ_FONT_SMALL);
	t->top = box.y + bh + lh * 0.5f;
	int rows = t->net.nsteps + 1;
	float tree_h = (box.y + box.h - t->top) * 0.52f;
	t->pitch = tree_h / (float)rows;
	t->cell_w = (box.w - t->label_w) / (float)t->net.length;
	t->cell_h = fminf(fmaxf(t->pitch * 0.45f, 3), 24 * c->scale);
	/* the lanes: one row per step, the warps side by side, 32 lanes each */
	t->lanes_top = t->top + tree_h + lh * 1.8f;
	float lanes_h = box.y + box.h - t->lanes_top;
	t->lane_pitch = lanes_h / (float)t->net.nsteps;
	t->lane_h = fminf(fmaxf(t->lane_pitch * 0.6f, 3), 18 * c->scale);
	float avail = box.w - t->label_w - 17 * vz_char_width(f, VZ_FONT_SMALL);
	t->warp_gap = fmaxf(2, avail * 0.02f);
	t->lane_w = (avail - t->warp_gap * (float)(t->net.warps - 1)) / (float)(32 * t->net.warps);
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

static float cx(const tree *t, int64_t i) { return t->box.x + t->label_w + (float)i * t->cell_w; }

static void tree_arrows(vz_frame *f, const tree *t, int r, vz_color col, float width)
{
	const vzs_step *st = &t->net.steps[r - 1];
	float yd = t->top + (float)r * t->pitch, ys = t->top + (float)(r - 1) * t->pitch + t->cell_h;
	bool thin = t->cell_w * vz_zoom(f) < 3;
	for (int i = st->first; i < st->first + st->count; i++) {
		const vzs_add *a = &t->net.adds[i];
		if (a->dst < t->net.lo || a->dst >= t->net.lo + t->net.length) continue;
		float xd = cx(t, a->dst - t->net.lo) + t->cell_w / 2;
		for (int k = 0; k < 2; k++) {
			if (a->src[k] < t->net.lo || a->src[k] >= t->net.lo + t->net.length) continue;
			float xs = cx(t, a->src[k] - t->net.lo) + t->cell_w / 2;
			if (thin) vz_line(f, xs, ys, xd, yd, width * 0.7f, col);
			else vz_arrow(f, xs, ys, xd, yd - 0.5f, width, fminf(6, t->cell_w * 0.4f + 2), col);
		}
	}
}

static void draw_tree(vz_frame *f, const tree *t, int k, double u)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	int64_t len = t->net.length;
	for (int r = 0; r <= t->net.nsteps; r++) {
		float y = t->top + (float)r * t->pitch;
		bool done = r <= k, fading = r == k + 1 && u > 0;
		if (r == k)
			vz_fill(f, vz_r(t->box.x, y - t->pitch * 0.12f, t->box.w, t->cell_h + t->pitch * 0.24f),
			        vz_mix(vz_th.bg, vz_th.active, 0.14));
		char label[32];
		if (r == 0) snprintf(label, sizeof label, "input");
		else snprintf(label, sizeof label, "step %d", r);
		vz_text_draw(f, t->box.x, y + (t->cell_h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
		             done ? vz_th.text : vz_th.text_dim, label);
		for (int64_t i = 0; i < len; i++) {
			vz_rect cr = vz_r(cx(t, i) + t->cell_w * 0.06f, y, t->cell_w * 0.88f, t->cell_h);
			if (!vz_visible(f, cr)) continue;
			bool w = r > 0 && t->writer[(size_t)r * (size_t)len + (size_t)i] >= 0;
			const char *state = r == 0 ? "input" : w ? "active" : "idle";
			vz_color c = r == 0 ? vz_mix(vz_th.pending, vz_okabe_ito[VZ_OI_SKY], 0.28) : w ? vz_th.active : vz_th.idle;
			if (!done && !fading) {
				c = vz_th.pending;
				state = "pending";
			} else if (fading) {
				c = vz_mix(vz_th.pending, c, u);
			}
			double v = t->rows[(size_t)r * (size_t)len + (size_t)i];
			vzs_value_cell(f, cr, c, v, done || u > 0.5);
			vz_cell *cell = vz_cell_add(f, cr, "element");
			cell->group = t->name;
			cell->state = state;
			cell->color = c;
			cell->index = (int32_t)(t->net.lo + i);
			cell->step = r;
			cell->block = (int32_t)t->net.block;
			cell->tag = 0;
			if (done) {
				cell->value = v;
				cell->has_value = true;
			}
			int wi = r > 0 ? t->writer[(size_t)r * (size_t)len + (size_t)i] : -1;
			if (wi >= 0) {
				const vzs_add *a = &t->net.adds[wi];
				cell->thread = a->thread;
				cell->warp = a->warp;
				cell->lane = a->lane;
				cell->event = a->event;
			}
		}
	}
	for (int r = 1; r <= t->net.nsteps; r++) {
		if (r <= k) tree_arrows(f, t, r, r == k ? vz_th.arrow_now : vz_fade(vz_th.arrow, 0.55), r == k ? 1.5f : 1.0f);
		else if (r == k + 1 && u > 0) tree_arrows(f, t, r, vz_fade(vz_th.arrow_now, u), 1.5f);
	}
}

static void draw_lanes(vz_frame *f, const tree *t, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	vz_text_draw(f, t->box.x, t->lanes_top - lh * 1.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	             "lanes of each warp that add in the step (a warp with none lit issues no add)");
	for (int r = 1; r <= t->net.nsteps; r++) {
		float y = t->lanes_top + (float)(r - 1) * t->lane_pitch;
		bool done = r <= k;
		const vzs_step *st = &t->net.steps[r - 1];
		char label[64];
		snprintf(label, sizeof label, "step %d", r);
		vz_text_draw(f, t->box.x, y + (t->lane_h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
		             done ? vz_th.text : vz_th.text_dim, label);
		float x = t->box.x + t->label_w;
		for (int w = 0; w < t->net.warps; w++) {
			uint32_t m = t->masks[(size_t)(r - 1) * (size_t)t->net.warps + w];
			for (int l = 0; l < 32; l++) {
				vz_rect lr = vz_r(x + (float)l * t->lane_w, y, fmaxf(t->lane_w * 0.85f, 0.5f), t->lane_h);
				bool on = (m >> l) & 1u;
				const char *state = !done ? "pending" : m == 0 ? "not issued" : on ? "active" : "idle";
				vz_color c = !done ? vz_th.pending : on ? vz_th.path_a : vz_th.idle;
				if (done && m == 0) vz_hatch(f, lr, vz_th.pending, vz_th.hatch);
				else vz_fill(f, lr, c);
				vz_cell *cell = vz_cell_add(f, lr, "lane");
				cell->group = t->name;
				cell->state = state;
				cell->color = done && m == 0 ? vz_th.pending : c;
				cell->step = r;
				cell->warp = w;
				cell->lane = l;
				cell->thread = w * 32 + l;
				cell->block = (int32_t)t->net.block;
			}
			x += 32 * t->lane_w + t->warp_gap;
		}
		if (done) {
			double eff = st->warps_issued ? (double)st->lanes / (32.0 * st->warps_issued) : 0;
			vz_textf(f, x + 4, y + (t->lane_h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
			         "%d/%d warps %3.0f%%", st->warps_issued, t->net.warps, 100 * eff);
		}
	}
	/* warp numbers under the last row */
	float x = t->box.x + t->label_w, y = t->lanes_top + (float)t->net.nsteps * t->lane_pitch;
	for (int w = 0; w < t->net.warps; w++, x += 32 * t->lane_w + t->warp_gap)
		if (32 * t->lane_w > 6 * vz_char_width(f, VZ_FONT_SMALL))
			vz_textf(f, x + 16 * t->lane_w, y, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text_dim, "warp %d", w);
}

static void draw_one(vz_frame *f, const tree *t, double time)
{
	int k = (int)floor(time);
	if (k > t->net.nsteps) k = t->net.nsteps;
	double u = k >= t->net.nsteps ? 0 : time - k;
	vz_textf(f, t->box.x, t->box.y, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "%s: %d steps, %d adds",
	         t->title, t->net.nsteps, t->net.nadds);
	draw_tree(f, t, k, u);
	draw_lanes(f, t, k);
}

static void reduce_draw(void *p, vz_frame *f)
{
	reduce_scene *s = p;
	float x = 0;
	x = vzs_legend(f, x, 0, vz_mix(vz_th.pending, vz_okabe_ito[VZ_OI_SKY], 0.28), false, "input");
	x = vzs_legend(f, x, 0, vz_th.active, false, "partial sum written in this step");
	x = vzs_legend(f, x, 0, vz_th.idle, false, "idle");
	x = vzs_legend(f, x, 0, vz_th.path_a, false, "lane that adds");
	x = vzs_legend(f, x, 0, vz_th.pending, true, "warp issues no add");
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
	lm_trace_launch_get(t->run.trace, 0, &la);
	unsigned blocks = la.grid[0] * la.grid[1] * la.grid[2];
	if (blocks <= 1) {
		snprintf(buf, cap, "reduce: naive and convergent trees on the same %lld elements, one block of "
		         "%d threads (%d warps)%s", (long long)s->n, t->net.threads, t->net.warps,
		         s->demo ? ", demonstration input" : "");
	} else {
		snprintf(buf, cap, "reduce: naive and convergent trees on the same %lld elements: block %u of %u "
		         "(%d threads, %d warps)%s", (long long)s->n, t->net.block, blocks, t->net.threads,
		         t->net.warps, s->demo ? ", demonstration input" : "");
	}
}

static void reduce_step_label(void *p, int step, char *buf, size_t cap)
{
	reduce_scene *s = p;
	if (step == 0) {
		snprintf(buf, cap, "the input: each thread will add pairs of partial sums, step by step");
		return;
	}
	buf[0] = '\0';
	for (int i = 0; i < s->ntrees && i < 2; i++) {
		const tree *t = &s->trees[i];
		if (s->variant && i != s->variant - 1) continue;
		if (step > t->net.nsteps) {
			vz_append(buf, cap, "%s%s: done", buf[0] ? "  |  " : "", t->name);
			continue;
		}
		const vzs_step *st = &t->net.steps[step - 1];
		vz_append(buf, cap, "%s%s: stride %d, %d threads add in %d warps", buf[0] ? "  |  " : "",
		          t->name, st->stride, st->count, st->warps_issued);
	}
}

static void reduce_counters(void *p, vz_panel *pn)
{
	reduce_scene *s = p;
	static const char *const names[] = {"modelled_cycles", "steps", "adds", "simd_efficiency",
	                                    "divergent_branches", "global_loads", "global_stores",
	                                    "barriers", "time_ms", "gbps", NULL};
	char src[96];
	for (int i = 0; i < s->ntrees; i++) {
		int c = vz_panel_column(pn, s->trees[i].name, vz_run_source_label(&s->trees[i].run, src, sizeof src));
		vz_panel_run(pn, c, &s->trees[i].run, names);
	}
	for (int i = 0; i < s->ngiven; i++) {
		if (s->given[i].trace) continue;
		char title[48];
		snprintf(title, sizeof title, "%s (your run)", s->given[i].algo);
		int c = vz_panel_column(pn, title, vz_run_source_label(&s->given[i], src, sizeof src));
		vz_panel_run(pn, c, &s->given[i], names);
	}
	if (s->demo)
		vz_panel_note(pn, "The picture shows emulated runs on a %lld-element demonstration input: the "
		              "measured run has no trace.", (long long)s->n);
}

static void reduce_describe(void *p, const vz_cell *c, char *buf, size_t cap)
{
	reduce_scene *s = p;
	const tree *t = NULL;
	for (int i = 0; i < s->ntrees; i++)
		if (c->group && strcmp(s->trees[i].name, c->group) == 0) t = &s->trees[i];
	if (!t) return;
	if (strcmp(c->kind, "lane") == 0) {
		snprintf(buf, cap, "%s, step %d: warp %d, lane %d (thread %d)\n%s", t->name, c->step, c->warp,
		         c->lane, c->thread,
		         strcmp(c->state, "active") == 0 ? "adds in this step"
		         : strcmp(c->state, "idle") == 0 ? "idle: its warp issues the add, this lane is masked off"
		         : strcmp(c->state, "not issued") == 0 ? "its warp issues no add in this step"
		                                               : "not reached yet");
		return;
	}
	snprintf(buf, cap, "%s, %s: input[%d]", t->name, c->step ? "after this step" : "input", c->index);
	if (c->has_value) vz_append(buf, cap, " = %g", c->value);
	int w = c->step > 0 ? t->writer[(size_t)c->step * (size_t)t->net.length + (size_t)(c->index - t->net.lo)] : -1;
	if (w >= 0) {
		const vzs_add *a = &t->net.adds[w];
		vz_append(buf, cap, "\nthread %d (warp %d, lane %d): input[%d] + input[%d]\nblock %u, trace event %lld",
		          a->thread, a->warp, a->lane, a->src[0], a->src[1], t->net.block, (long long)a->event + 1);
	}
}

static const vz_option reduce_options[] = {
	{"n", VZ_OPT_INT, 2, 4096, NULL, "128", "elements of the demonstration input"},
	{"block", VZ_OPT_INT, 1, 1024, NULL, "0", "threads per block (a power of two; 0: one block)"},
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
