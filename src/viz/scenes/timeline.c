/*
 * timeline.c — the streams scene (ECE408 "task parallelism"): a Gantt chart of the segments of a
 * vector add, each copied to the device, added and copied back, once on one stream (serial) and
 * once on a stream per segment (overlapped), on one time axis, with the engines each schedule
 * keeps busy and the speedup. Tab switches between 2, 3 and 4 streams (and the given run); a
 * step moves the time cursor to the next moment an operation starts or ends.
 *
 * What it draws from: the run's spans (info.timeline, docs/trace.md "Spans"): the modelled
 * timeline of an emulated run, or the CUDA events of a measured one, each span labelled with its
 * source. A trace alone has the launches but not the copies: that is an error, not a guess.
 * Read next: docs/trace.md, spmv.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAXV 5

enum { OP_H2D, OP_KERNEL, OP_D2H, NOPS };
static const char *const op_label_en[NOPS] = {"copy to device (A, B)", "kernel (C = A + B)", "copy back (C)"};
static const char *const op_label_zh[NOPS] = {"拷贝到设备（A、B）", "内核（C = A + B）", "拷回主机（C）"};
static const char *op_label(int op) { return vz_zh() ? op_label_zh[op] : op_label_en[op]; }

/* A schedule and a span's state as the labels say them. */
static const char *sched_label(const char *sched)
{
	return !vz_zh() ? sched : strcmp(sched, "serial") == 0 ? "串行" : "重叠";
}

static const char *state_label(const char *st)
{
	return !vz_zh() ? st : st[0] == 'd' ? "已完成" : st[0] == 'a' ? "运行中" : "待运行";
}
static const char *const op_short[NOPS] = {"H2D", "K", "D2H"};

typedef struct tvar {
	char name[48];
	lm_viz_run run;
	int segments;
	double serial_ms, overlapped_ms;
	double *times;  /* the cursor's moments: 0 and every span boundary, sorted */
	int ntimes;
} tvar;

typedef struct tl_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	tvar v[MAXV];
	int nv, variant;
	int64_t bytes, copy_engines;
	vz_rect chart_r;
	float label_w, row_h, lh;
	char fname[32];
} tl_scene;

static int op_of(const char *op) { return strcmp(op, "h2d") == 0 ? OP_H2D : strcmp(op, "kernel") == 0 ? OP_KERNEL : OP_D2H; }

static vz_color op_color(int op)
{
	return op == OP_H2D ? vz_okabe_ito[VZ_OI_BLUE] : op == OP_KERNEL ? vz_th.active : vz_okabe_ito[VZ_OI_GREEN];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void tvar_free(tvar *v)
{
	vz_run_clear(&v->run);
	vz_free(v->times);
	memset(v, 0, sizeof *v);
}

static lm_status tvar_build(tvar *v, const lm_viz_run *run, const char *fname)
{
	vz_run_copy(&v->run, run);
	if (run->nspans > 0 && !v->run.spans) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	v->segments = 0;
	v->times = vz_malloc((size_t)(2 * run->nspans + 1) * sizeof *v->times);
	if (!v->times) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	int n = 0;
	v->times[n++] = 0;
	for (int i = 0; i < run->nspans; i++) {
		const lm_viz_span *sp = &run->spans[i];
		if (sp->segment + 1 > v->segments) v->segments = sp->segment + 1;
		bool serial = strcmp(sp->schedule, "serial") == 0;
		double *end = serial ? &v->serial_ms : &v->overlapped_ms;
		if (sp->end_ms > *end) *end = sp->end_ms;
		v->times[n++] = sp->start_ms;
		v->times[n++] = sp->end_ms;
	}
	qsort(v->times, (size_t)n, sizeof *v->times, cmp_double);
	int u = 0;
	for (int i = 0; i < n; i++) /* distinct moments (a microsecond apart at least) */
		if (u == 0 || v->times[i] - v->times[u - 1] > 1e-6) v->times[u++] = v->times[i];
	v->ntimes = u;
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

static void tl_destroy(void *p)
{
	tl_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < s->nv; i++) tvar_free(&s->v[i]);
	vz_free(s);
}

static lm_status add_variant(tl_scene *s, const lm_viz_run *run, const char *name)
{
	tvar *v = &s->v[s->nv];
	snprintf(v->name, sizeof v->name, "%s", name);
	lm_status st = tvar_build(v, run, s->fname);
	s->nv++;
	return st;
}

static void *tl_create(const vz_build *b)
{
	tl_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	vzs_keep_runs(b, s->given, &s->ngiven);
	const lm_viz_run *have = b->nruns ? &b->runs[0] : NULL;
	lm_status st = LM_OK;
	if (have && have->nspans == 0) {
		st = lm_set_error(LM_ERR_ARG, "%s: the timeline scene draws the spans of a kernels.streams result "
		                  "(info.timeline); this %s run has none (a trace alone keeps the launches, not the copies: "
		                  "show the info)", b->fname, have->pattern);
		tl_destroy(s);
		return NULL;
	}
	s->bytes = have ? (int64_t)vz_run_counter(have, "vector_bytes", 0) : vz_opt_int(b->opts, "bytes", 0);
	s->copy_engines = have && strcmp(have->source, "emu") == 0 ? (int64_t)vz_run_counter(have, "copy_engines", 0)
	                                                        : vz_opt_int(b->opts, "copy_engines", 0);
	int have_seg = 0;
	for (int i = 0; have && i < have->nspans; i++)
		if (have->spans[i].segment + 1 > have_seg) have_seg = have->spans[i].segment + 1;
	int first = vz_opt_given(b->opts, "segments") ? (int)vz_opt_int(b->opts, "segments", 4) : have ? have_seg : 4;
	for (int seg = 2; seg <= 4 && st == LM_OK; seg++) {
		char name[48];
		snprintf(name, sizeof name, "%d streams", seg);
		if (have && seg == have_seg) {
			st = add_variant(s, have, name);
		} else {
			lm_viz_run r;
			st = vzs_run_streams(seg, s->bytes, s->copy_engines, &r, b->fname);
			if (st == LM_OK) {
				st = add_variant(s, &r, name);
				vz_run_clear(&r);
			}
		}
		if (seg == first) s->variant = s->nv - 1;
	}
	if (st == LM_OK && ((have && (have_seg < 2 || have_seg > 4)) || (!have && (first < 2 || first > 4)))) {
		char name[48];
		int seg = have ? have_seg : first;
		snprintf(name, sizeof name, "%d stream%s%s", seg, seg == 1 ? "" : "s", have ? " (your run)" : "");
		if (have) st = add_variant(s, have, name);
		else {
			lm_viz_run r;
			st = vzs_run_streams(seg, s->bytes, s->copy_engines, &r, b->fname);
			if (st == LM_OK) {
				st = add_variant(s, &r, name);
				vz_run_clear(&r);
			}
		}
		s->variant = s->nv - 1;
	}
	if (st != LM_OK) {
		tl_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, layout */

static const tvar *cur(const tl_scene *s) { return &s->v[s->variant]; }
static int tl_steps(void *p) { return cur(p)->ntimes; }
static int tl_variants(void *p) { return ((tl_scene *)p)->nv; }
static const char *tl_variant_name(void *p, int v) { return ((tl_scene *)p)->v[v].name; }
static void tl_set_variant(void *p, int v) { ((tl_scene *)p)->variant = v; }
static int tl_initial_variant(void *p) { return ((tl_scene *)p)->variant; }

/* The engines' rows: H2D copies, compute, D2H copies; with one copy engine, both directions share
 * its row (no empty D2H row). */
static int engine_rows(const tl_scene *s) { return s->copy_engines == 1 ? 2 : 3; }

static void tl_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	tl_scene *s = p;
	const vz_frame *f = c->metrics;
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->label_w = 22 * vz_char_width(f, VZ_FONT_SMALL);
	const tvar *v = cur(s);
	/* rows: serial (1 stream + the engines), overlapped (segments + the engines), titles and the axis */
	float rows = 1 + (float)engine_rows(s) * 0.5f + (float)v->segments + (float)engine_rows(s) * 0.5f;
	s->row_h = fminf(3.2f * s->lh, (c->h - 11 * s->lh) / rows);
	s->chart_r = vz_r(s->label_w, s->lh * 2.4f, c->w - s->label_w - 2 * vz_char_width(f, VZ_FONT_SMALL), c->h - 3 * s->lh);
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing */

static double time_at(const tvar *v, double t)
{
	int k = (int)floor(t + 1e-9);
	if (k >= v->ntimes - 1) return v->times[v->ntimes - 1];
	if (k < 0) return 0;
	double u = t - k;
	return v->times[k] + u * (v->times[k + 1] - v->times[k]);
}

static float px_of(const tl_scene *s, double ms)
{
	const tvar *v = cur(s);
	double span = v->serial_ms > v->overlapped_ms ? v->serial_ms : v->overlapped_ms;
	return s->chart_r.x + (float)(ms / (span > 0 ? span : 1)) * s->chart_r.w;
}

/* One span as a box in its row, coloured by its operation, faded until the cursor reaches it. */
static void draw_span(vz_frame *f, const tl_scene *s, const lm_viz_span *sp, float y, float h, double now, bool label)
{
	int op = op_of(sp->op);
	vz_rect r = vz_r(px_of(s, sp->start_ms), y, fmaxf(1, px_of(s, sp->end_ms) - px_of(s, sp->start_ms)), h);
	const char *state = sp->end_ms <= now + 1e-9 ? "done" : sp->start_ms < now - 1e-9 ? "active" : "pending";
	vz_color c = state[0] == 'p' ? vz_mix(op_color(op), vz_th.bg, 0.78) : op_color(op);
	vz_cell_fill(f, r, c, 1, vz_mix(op_color(op), VZ_RGB(0, 0, 0), 0.3));
	if (state[0] == 'a') vz_outline(f, r, 2.5f, vz_th.highlight);
	char t[24];
	snprintf(t, sizeof t, "%s %d", op_short[op], sp->segment + 1);
	if (label && vz_text_fits(f, VZ_FONT_SMALL, t, r.w - 2))
		vz_text_draw(f, r.x + r.w / 2, r.y + (r.h - s->lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_CENTER,
		             state[0] == 'p' ? vz_th.text_dim : vz_text_on(c), t);
	static const char *const kinds[NOPS] = {"h2d", "kernel", "d2h"};
	vz_cell *cell = vz_cell_add(f, r, label ? kinds[op] : "engine");
	cell->group = sp->schedule;
	cell->state = state;
	cell->color = c;
	cell->index = sp->segment;
	cell->thread = sp->stream;
	cell->value = sp->end_ms - sp->start_ms;
	cell->has_value = true;
	cell->tag = op;
}

static int engine_row(const lm_viz_span *sp)
{
	return strcmp(sp->track, "compute") == 0 ? 1 : strcmp(sp->track, "d2h") == 0 ? 2 : 0;
}

/* One schedule: its stream rows, then the three engines' occupancy. Returns the y after it. */
static float draw_schedule(vz_frame *f, const tl_scene *s, const char *sched, float y, double now)
{
	const tvar *v = cur(s);
	bool serial = strcmp(sched, "serial") == 0;
	int streams = serial ? 1 : v->segments;
	double total = serial ? v->serial_ms : v->overlapped_ms;
	if (serial) VZ_TEXTF_TR(f, 0, y, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "serial: one stream, %.3f ms", "串行：一个流，%.3f ms", total);
	else
		VZ_TEXTF_TR(f, 0, y, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "overlapped: a stream per segment, %.3f ms",
		            "重叠：每段一个流，%.3f ms", total);
	y += s->lh * 1.5f;
	float rh = s->row_h, eh = s->row_h * 0.45f;
	for (int st = 0; st < streams; st++)
		VZ_TEXTF_TR(f, 0, y + (float)st * rh + (rh - s->lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "stream %d",
		            "流 %d", st);
	static const char *const engines_en[3] = {"copy engine H2D", "compute", "copy engine D2H"};
	static const char *const engines_zh[3] = {"拷贝引擎 H2D", "计算引擎", "拷贝引擎 D2H"};
	const char *const *engines = vz_zh() ? engines_zh : engines_en;
	float ey = y + (float)streams * rh + s->lh * 0.3f;
	int ne = engine_rows(s);
	/* the tiny font where a row is thin; Chinese at 9 px blurs, so the small one where it fits */
	vz_font ef = vz_zh() && eh >= s->lh ? VZ_FONT_SMALL : VZ_FONT_TINY;
	for (int e = 0; e < ne; e++)
		vz_text_draw(f, 0, ey + (float)e * eh + (eh - vz_text_height(f, ef)) / 2, ef, VZ_ALIGN_LEFT, vz_th.text_dim,
		             e == 0 && s->copy_engines == 1 ? vz_tr("copy engine (one)", "拷贝引擎（仅一个）") : engines[e]);
	for (int i = 0; i < v->run.nspans; i++) {
		const lm_viz_span *sp = &v->run.spans[i];
		if (strcmp(sp->schedule, sched) != 0) continue;
		int row = serial ? 0 : sp->stream;
		draw_span(f, s, sp, y + (float)row * rh + rh * 0.1f, rh * 0.8f, now, true);
		int er = strcmp(sp->track, "copy") == 0 ? (op_of(sp->op) == OP_KERNEL ? 1 : 0) : engine_row(sp);
		draw_span(f, s, sp, ey + (float)er * eh + eh * 0.12f, eh * 0.76f, now, false);
	}
	vz_line(f, s->chart_r.x, ey + (float)ne * eh + 2, s->chart_r.x + s->chart_r.w, ey + (float)ne * eh + 2, 1, vz_th.grid);
	return ey + (float)ne * eh + s->lh * 0.9f;
}

static void draw_axis(vz_frame *f, const tl_scene *s, float y)
{
	const tvar *v = cur(s);
	double span = v->serial_ms > v->overlapped_ms ? v->serial_ms : v->overlapped_ms;
	double step = pow(10, floor(log10(span > 0 ? span / 4 : 1)));
	if (span / step > 10) step *= 2;
	if (span / step > 10) step *= 2.5;
	vz_line(f, s->chart_r.x, y, s->chart_r.x + s->chart_r.w, y, 1, vz_th.text_dim);
	for (double t = 0; t <= span * 1.0001; t += step) {
		float x = px_of(s, t);
		vz_line(f, x, y, x, y + 4, 1, vz_th.text_dim);
		vz_textf(f, x, y + 5, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text_dim, "%g", t);
	}
	vz_text_draw(f, s->chart_r.x + s->chart_r.w, y + 5 + s->lh, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text_dim, "ms");
}

static void tl_draw(void *p, vz_frame *f)
{
	tl_scene *s = p;
	const tvar *v = cur(s);
	double now = time_at(v, f->t);
	float x = 0;
	for (int op = 0; op < NOPS; op++) x = vzs_legend(f, x, 0, op_color(op), false, op_label(op));
	x = vzs_legend(f, x, 0, vz_mix(op_color(OP_KERNEL), vz_th.bg, 0.78), false, vz_tr("not reached yet", "尚未到达"));
	char src[128];
	VZ_TEXTF_TR(f, x, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "times: %s", "时间：%s",
	            vz_run_source_label(&v->run, src, sizeof src));
	float y = s->chart_r.y;
	y = draw_schedule(f, s, "serial", y, now);
	y = draw_schedule(f, s, "overlapped", y + s->lh * 0.5f, now);
	draw_axis(f, s, y);
	float cx = px_of(s, now); /* the cursor */
	vz_layer(f);
	vz_dashed(f, cx, s->chart_r.y + s->lh * 1.2f, cx, y, 1.5f, 4, vz_th.highlight);
	double sp = v->overlapped_ms > 0 ? v->serial_ms / v->overlapped_ms : 0;
	bool modelled = strcmp(v->run.source, "emu") == 0;
	VZ_TEXTF_TR(f, s->chart_r.x + s->chart_r.w, s->chart_r.y, VZ_FONT_BODY, VZ_ALIGN_RIGHT, vz_th.text,
	            "speedup %.2fx (%s)", "加速比 %.2fx（%s）", sp,
	            modelled ? vz_tr("modelled", "模型估算") : vz_tr("measured", "实测"));
}

/* ---------------------------------------------------------------- text */

static void tl_title(void *p, char *buf, size_t cap)
{
	tl_scene *s = p;
	const tvar *v = cur(s);
	char src[128];
	if (vz_zh())
		snprintf(buf, cap, "流：向量加法分 %d 段，串行与重叠对比；时间来源：%s", v->segments,
		         vz_run_source_label(&v->run, src, sizeof src));
	else
		snprintf(buf, cap, "streams: vector add in %d segment%s, serial vs overlapped; times %s", v->segments,
		         v->segments == 1 ? "" : "s", vz_run_source_label(&v->run, src, sizeof src));
}

static void tl_step_label(void *p, int step, char *buf, size_t cap)
{
	tl_scene *s = p;
	const tvar *v = cur(s);
	double t = step < v->ntimes ? v->times[step] : 0;
	int running = 0;
	for (int i = 0; i < v->run.nspans; i++)
		running += strcmp(v->run.spans[i].schedule, "overlapped") == 0 && v->run.spans[i].start_ms <= t + 1e-9 &&
		           v->run.spans[i].end_ms > t + 1e-9;
	if (step == 0)
		snprintf(buf, cap, "%s", vz_tr("each segment: copy A and B in, add, copy C out; overlapped, one segment's copy "
		                               "runs while another computes",
		                               "每一段：拷入 A 和 B，相加，拷出 C；重叠时，一段在拷贝，另一段同时在计算"));
	else if (vz_zh())
		snprintf(buf, cap, "t = %.3f ms：重叠调度中有 %d 个操作在运行%s", t, running,
		         t >= v->overlapped_ms - 1e-9 ? "（重叠调度已完成，串行的还没有）" : "");
	else
		snprintf(buf, cap, "t = %.3f ms: %d operation%s of the overlapped schedule running%s", t, running,
		         running == 1 ? "" : "s", t >= v->overlapped_ms - 1e-9 ? " (it is done; serial is not)" : "");
}

static void tl_counters(void *p, vz_panel *pn)
{
	tl_scene *s = p;
	static const char *const names[] = {"serial_ms", "overlapped_ms", "speedup", "h2d_ms", "kernel_ms", "d2h_ms",
	                                    "segments", "copy_engines", "pcie_gbps", "vector_bytes", NULL};
	for (int i = 0; i < s->nv; i++) vzs_panel_add(pn, s->v[i].name, &s->v[i].run, names);
	vz_panel_note(pn, "%s", vz_tr("emulated: copies at pcie_gbps over copy_engines engines, the kernel's modelled cycles "
	                              "at clock_ghz; CUDA: events around each segment's copies and kernel",
	                              "模拟：拷贝按 pcie_gbps 的带宽经 copy_engines 个拷贝引擎进行，内核的模型周期按 clock_ghz "
	                              "换算成时间；CUDA：用事件为每段的拷贝和内核计时"));
}

static void tl_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	tl_scene *s = p;
	const tvar *v = cur(s);
	for (int i = 0; i < v->run.nspans; i++) {
		const lm_viz_span *sp = &v->run.spans[i];
		if (strcmp(sp->schedule, c->group) != 0 || sp->segment != c->index || op_of(sp->op) != c->tag) continue;
		char src[128];
		VZ_SNPRINTF_TR(buf, cap, "%s, segment %d, stream %d: %s\n%.4f .. %.4f ms (%.4f ms), %.0f bytes\non the %s engine; %s\n%s",
		               "%s，第 %d 段，流 %d：%s\n%.4f .. %.4f ms（%.4f ms），%.0f 字节\n在 %s 引擎上；%s\n%s",
		               sched_label(sp->schedule), sp->segment + 1, sp->stream, op_label(c->tag), sp->start_ms, sp->end_ms,
		               sp->end_ms - sp->start_ms, sp->bytes, sp->track, state_label(c->state),
		               vz_run_source_label(&v->run, src, sizeof src));
		return;
	}
}

static const vz_option tl_options[] = {
	{"segments", VZ_OPT_INT, 1, 16, NULL, "4", "segments (streams) shown first"},
	{"bytes", VZ_OPT_INT, 64, 1 << 26, NULL, "262144", "bytes of each vector"},
	{"copy_engines", VZ_OPT_INT, 1, 2, NULL, "2", "copy engines (1: copies in and out take turns)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_timeline = {
	.name = "timeline",
	.summary = "streams: a Gantt chart of copies and kernels, serial vs overlapped over 2-4 streams, with the speedup",
	.patterns = "streams",
	.options = tl_options,
	.create = tl_create,
	.destroy = tl_destroy,
	.steps = tl_steps,
	.variants = tl_variants,
	.variant_name = tl_variant_name,
	.set_variant = tl_set_variant,
	.initial_variant = tl_initial_variant,
	.layout = tl_layout,
	.draw = tl_draw,
	.title = tl_title,
	.step_label = tl_step_label,
	.counters = tl_counters,
	.describe = tl_describe,
};
