/*
 * ddp.c — the DDP timeline: one backward of nn.DistributedDataParallel from a real run
 * (viz.show('ddp', ddp): lua/lumen/dist.lua records, in seconds from the forward, when each
 * gradient bucket was full and its all-reduce started, when that all-reduce had finished, and
 * when backward's own work ended). A bar for backward's compute, and a row per bucket with its
 * all-reduce in flight from launch to end: the part before the end of backward overlaps it, the
 * rest is the wait backward's end paid.
 * Counters: buckets, the backward's compute, the all-reduces' time in all, how much of it
 * overlapped, the wait at the end — measured by the run that made the timeline (dist.wtime,
 * MPI_Wtime), on this rank. Without data: a demonstration timeline of 4 buckets, labelled as such.
 * Read next: lua/lumen/dist.lua (DistributedDataParallel), pipeline.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_BUCKETS 64

typedef struct ddp_scene {
	int n;
	double launch[MAX_BUCKETS], done[MAX_BUCKETS], backward_end, end;
	char source[160];
	bool demo;
	float lh, cw, label_w, w, row;
} ddp_scene;

static void *ddp_create(const vz_build *b)
{
	const lm_viz_ddp *d = b->ddp;
	if (d && (d->n < 1 || d->n > MAX_BUCKETS)) {
		lm_set_error(LM_ERR_ARG, "%s: the ddp scene draws 1 to %d buckets, got %d", b->fname, MAX_BUCKETS, d->n);
		return NULL;
	}
	ddp_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (d) {
		s->n = d->n;
		for (int i = 0; i < s->n; i++) {
			s->launch[i] = d->launch[i];
			s->done[i] = d->done[i] > d->launch[i] ? d->done[i] : d->launch[i];
		}
		s->backward_end = d->backward_end;
		snprintf(s->source, sizeof s->source, "%s", d->source && *d->source ? d->source : "given by the caller");
	} else { /* 4 buckets, the last layers' first; each all-reduce 1.5 ms, backward 8 ms */
		s->demo = true;
		s->n = 4;
		static const double l[4] = {2.0e-3, 3.5e-3, 5.5e-3, 8.0e-3};
		for (int i = 0; i < 4; i++) s->launch[i] = l[i], s->done[i] = l[i] + 1.5e-3;
		s->backward_end = 8.0e-3;
	}
	s->end = s->backward_end;
	for (int i = 0; i < s->n; i++) s->end = fmax(s->end, s->done[i]);
	if (s->end <= 0) s->end = 1e-6;
	return s;
}

static void ddp_destroy(void *p) { vz_free(p); }
static int ddp_steps(void *p) { return 1 + ((ddp_scene *)p)->n; }
static int ddp_variants(void *p) { (void)p; return 1; }
static const char *ddp_variant_name(void *p, int v) { (void)p, (void)v; return "timeline"; }
static void ddp_set_variant(void *p, int v) { (void)p, (void)v; }

static void ddp_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	ddp_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 800 * c->scale), H = fmaxf(c->h, 360 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = vz_text_width(f, VZ_FONT_SMALL, vz_tr("backward  ", "反向传播  ")) + s->cw * 4;
	s->w = W - s->label_w - s->cw * 2;
	s->row = fminf(s->lh * 1.8f, (H - s->lh * 6) / (float)(s->n + 1));
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f) { return (int)floor(f->t + 1e-9); }

static float x_of(const ddp_scene *s, double t) { return s->label_w + (float)(t / s->end) * s->w; }

static double overlapped(const ddp_scene *s, int i)
{
	return fmax(0, fmin(s->done[i], s->backward_end) - s->launch[i]);
}

static void ddp_draw(void *p, vz_frame *f)
{
	ddp_scene *s = p;
	int shown = step_of(f);
	char t[64];
	float top = s->lh * 1.5f;
	/* the time axis in ms */
	for (int k = 0; k <= 4; k++) {
		double tt = s->end * k / 4;
		snprintf(t, sizeof t, "%.3g ms", tt * 1e3);
		float tw = vz_text_draw(f, x_of(s, tt), 0, VZ_FONT_TINY, k == 4 ? VZ_ALIGN_RIGHT : VZ_ALIGN_CENTER, vz_th.text_dim, t);
		vz_cell *tc = vz_cell_add(f, vz_r(x_of(s, tt) - (k == 4 ? tw : tw / 2), 0, tw, s->lh), "tick");
		tc->value = tt, tc->has_value = true;
		vz_line(f, x_of(s, tt), top - 2, x_of(s, tt), top + (float)(s->n + 1) * s->row, 1, vz_th.grid);
	}
	float bw = vz_text_draw(f, 0, top + s->row / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	                        vz_tr("backward", "反向传播"));
	vz_cell *bl = vz_cell_add(f, vz_r(0, top + s->row / 2 - s->lh / 2, bw, s->lh), "backward");
	bl->value = s->backward_end, bl->has_value = true, bl->group = "label";
	vz_rect br = vz_r(x_of(s, 0), top + s->row * 0.15f, x_of(s, s->backward_end) - x_of(s, 0), s->row * 0.7f);
	vz_fill(f, br, vz_mix(vz_th.bg, vz_th.active, 0.8));
	vz_cell *c = vz_cell_add(f, br, "backward");
	c->value = s->backward_end, c->has_value = true;
	for (int i = 0; i < s->n; i++) {
		float y = top + (float)(i + 1) * s->row;
		VZ_SNPRINTF_TR(t, sizeof t, "bucket %d", "桶 %d", i + 1);
		float lw = vz_text_draw(f, 0, y + s->row / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		vz_cell *lc = vz_cell_add(f, vz_r(0, y + s->row / 2 - s->lh / 2, lw, s->lh), "allreduce");
		lc->index = i, lc->value = s->done[i] - s->launch[i], lc->has_value = true, lc->group = "label";
		lc->state = i < shown ? "shown" : "later";
		if (i >= shown) continue;
		double ov_end = fmin(s->done[i], s->backward_end);
		if (ov_end > s->launch[i])
			vz_fill(f, vz_r(x_of(s, s->launch[i]), y + s->row * 0.15f, x_of(s, ov_end) - x_of(s, s->launch[i]), s->row * 0.7f),
			        vz_mix(vz_th.bg, vz_th.path_a, 0.75));
		if (s->done[i] > fmax(s->launch[i], s->backward_end)) {
			double a = fmax(s->launch[i], s->backward_end);
			vz_hatch(f, vz_r(x_of(s, a), y + s->row * 0.15f, x_of(s, s->done[i]) - x_of(s, a), s->row * 0.7f),
			         vz_mix(vz_th.bg, vz_th.path_a, 0.35), vz_th.hatch);
		}
		vz_rect r = vz_r(x_of(s, s->launch[i]), y + s->row * 0.15f, fmaxf(x_of(s, s->done[i]) - x_of(s, s->launch[i]), 1),
		                 s->row * 0.7f);
		vz_outline(f, r, 1, vz_th.path_a);
		c = vz_cell_add(f, r, "allreduce");
		c->index = i, c->value = s->done[i] - s->launch[i], c->has_value = true;
		c->state = s->done[i] <= s->backward_end ? "overlapped" : "partly waited";
	}
	float y = top + (float)(s->n + 1) * s->row + s->lh;
	float x = vzs_legend(f, 0, y, vz_mix(vz_th.bg, vz_th.active, 0.8), false, vz_tr("backward's compute", "反向计算"));
	x = vzs_legend(f, x, y, vz_mix(vz_th.bg, vz_th.path_a, 0.75), false, vz_tr("all-reduce overlapping it", "与之重叠的 all-reduce"));
	vzs_legend(f, x, y, vz_mix(vz_th.bg, vz_th.path_a, 0.35), true, vz_tr("waited for after backward", "反向结束后等待的部分"));
}

static const char *src_of(const ddp_scene *s)
{
	return s->demo ? vz_tr("a demonstration timeline", "演示时间线") : s->source;
}

static void totals(const ddp_scene *s, double *comm, double *ov)
{
	*comm = *ov = 0;
	for (int i = 0; i < s->n; i++) *comm += s->done[i] - s->launch[i], *ov += overlapped(s, i);
}

static void ddp_title(void *p, char *buf, size_t cap)
{
	ddp_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "DDP: one backward, %d bucket%s; %s", "DDP：一次反向传播，%d 个桶%s；%s", s->n,
	               s->n > 1 && !vz_zh() ? "s" : "", src_of(s));
}

static void ddp_step_label(void *p, int step, char *buf, size_t cap)
{
	ddp_scene *s = p;
	double comm, ov;
	totals(s, &comm, &ov);
	if (step == 0) {
		VZ_SNPRINTF_TR(buf, cap, "backward's compute: %.3g ms; the buckets' all-reduces follow as they fill",
		               "反向计算：%.3g ms；各个桶填满后依次开始 all-reduce", s->backward_end * 1e3);
		return;
	}
	int i = (step - 1 < s->n ? step - 1 : s->n - 1);
	VZ_SNPRINTF_TR(buf, cap, "bucket %d: full at %.3g ms, all-reduced by %.3g ms; %.0f%% of all the all-reduce time overlaps backward",
	               "桶 %d：%.3g ms 时填满，%.3g ms 时 all-reduce 完成；全部 all-reduce 时间中 %.0f%% 与反向传播重叠", i + 1,
	               s->launch[i] * 1e3, s->done[i] * 1e3, comm > 0 ? 100 * ov / comm : 0);
}

static void ddp_counters(void *p, vz_panel *pn)
{
	ddp_scene *s = p;
	double comm, ov;
	totals(s, &comm, &ov);
	int c = vz_panel_column(pn, vz_tr("this rank", "本 rank"), src_of(s));
	vz_panel_set(pn, c, "buckets", s->n);
	vz_panel_set(pn, c, "backward_ms", s->backward_end * 1e3);
	vz_panel_set(pn, c, "allreduce_ms", comm * 1e3);
	vz_panel_set(pn, c, "overlapped_ms", ov * 1e3);
	vz_panel_set(pn, c, "wait_after_ms", (s->end - s->backward_end) * 1e3);
	vz_panel_set(pn, c, "total_ms", s->end * 1e3);
}

static void ddp_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	ddp_scene *s = p;
	if (strcmp(c->kind, "allreduce") == 0 && c->index >= 0 && c->index < s->n)
		VZ_SNPRINTF_TR(buf, cap, "bucket %d: all-reduce from %.4g to %.4g ms (%.4g ms, %.4g of it during backward)",
		               "桶 %d：all-reduce 从 %.4g 到 %.4g ms（%.4g ms，其中 %.4g 与反向传播重叠）", c->index + 1,
		               s->launch[c->index] * 1e3, s->done[c->index] * 1e3, (s->done[c->index] - s->launch[c->index]) * 1e3,
		               overlapped(s, c->index) * 1e3);
	else if (strcmp(c->kind, "tick") == 0)
		VZ_SNPRINTF_TR(buf, cap, "%.4g ms after the forward started", "前向开始后 %.4g ms", c->value * 1e3);
	else if (strcmp(c->kind, "backward") == 0)
		VZ_SNPRINTF_TR(buf, cap, "backward's own work: %.4g ms from the forward's start", "反向传播本身：从前向开始起 %.4g ms",
		               s->backward_end * 1e3);
}

static const vz_option ddp_options[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};

const vz_scene_class vz_scene_ddp = {
	.name = "ddp",
	.summary = "a DistributedDataParallel backward from a real run: backward's compute and each bucket's all-reduce, "
	           "overlapped or waited for",
	.patterns = "",
	.options = ddp_options,
	.create = ddp_create,
	.destroy = ddp_destroy,
	.steps = ddp_steps,
	.variants = ddp_variants,
	.variant_name = ddp_variant_name,
	.set_variant = ddp_set_variant,
	.layout = ddp_layout,
	.draw = ddp_draw,
	.title = ddp_title,
	.step_label = ddp_step_label,
	.counters = ddp_counters,
	.describe = ddp_describe,
};
