/*
 * pipeline.c — the pipeline scene: pipeline parallelism's schedules as a timeline, K stages (rows)
 * by time slots (columns), each micro-batch's forward (F) and backward (B) in its slot, the idle
 * slots — the bubble — hatched.
 *
 * The schedule is computed here, with every F and B taking one slot: each stage runs its ops in a
 * fixed order, each as soon as what it needs is done (F of micro-batch m on stage k after F of m
 * on stage k - 1; B of m on stage k after B of m on stage k + 1, or after its own F on the last
 * stage). GPipe's order: all forwards, then the backwards in reverse; 1F1B's (PipeDream-flush):
 * K - k - 1 forwards to warm up, then one forward and one backward in turn, then the remaining
 * backwards. Both take 2 (M + K - 1) slots, so both idle 2 (K - 1) slots per stage, the bubble
 * (K - 1) / (M + K - 1); 1F1B keeps at most K - k micro-batches' activations on stage k where
 * GPipe keeps all M. Counters: the bubble counted from the timeline drawn, next to the formula,
 * and the peak activations held per stage — computed from this model of the schedule.
 * viz.show('pipeline', pipe) draws a step of dist.Pipeline as it ran instead (lm_viz_pipeline):
 * every stage's ops at their measured start and end (seconds, dist.wtime), the idle time between
 * them hatched, and — the other view (Tab) — the same ops placed in slots in the order the stages
 * really ran them; its counters are the measured bubble (idle time over K x span), the counted one
 * and the formula, labelled as measured on the run's MPI ranks.
 * Steps: one per time slot, the timeline filling up (the measured view reveals the ops that have
 * started by the same fraction of the span). Read next: docs/viz.md ("pipeline").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_K 8
#define MAX_M 32
#define MAX_T (2 * (MAX_M + MAX_K))

typedef struct op {
	char kind; /* 'F', 'B' or 0 (idle) */
	int micro;
} op;

typedef struct pipe_scene {
	int K, M, T;
	bool onef1b;
	op grid[MAX_K][MAX_T];
	int peak[MAX_K]; /* activations held at most */
	int idle;
	float lh, cw, cell, label_w;
	/* a measured run (viz.show('pipeline', pipe)): each stage's ops in the order it ran them */
	bool measured, slots_view;
	op ran[MAX_K][2 * MAX_M];
	double t0[MAX_K][2 * MAX_M], t1[MAX_K][2 * MAX_M];
	double tmin, tmax, busy;
	char source[160];
	float row, plot_w;
} pipe_scene;

static void schedule(pipe_scene *s)
{
	int K = s->K, M = s->M;
	op order[MAX_K][2 * MAX_M];
	int n[MAX_K];
	for (int k = 0; k < K; k++) {
		n[k] = 0;
		if (s->measured) {
			for (int i = 0; i < 2 * M; i++) order[k][n[k]++] = s->ran[k][i];
		} else if (!s->onef1b) {
			for (int m = 0; m < M; m++) order[k][n[k]++] = (op){'F', m};
			for (int m = M - 1; m >= 0; m--) order[k][n[k]++] = (op){'B', m};
		} else {
			int warm = K - k - 1 < M ? K - k - 1 : M, f = 0, b = 0;
			for (; f < warm; f++) order[k][n[k]++] = (op){'F', f};
			while (f < M) {
				order[k][n[k]++] = (op){'F', f++};
				order[k][n[k]++] = (op){'B', b++};
			}
			while (b < M) order[k][n[k]++] = (op){'B', b++};
		}
	}
	int fdone[MAX_K][MAX_M], bdone[MAX_K][MAX_M], next[MAX_K] = {0}; /* the slot each ended in, or -1 */
	for (int k = 0; k < K; k++)
		for (int m = 0; m < M; m++) fdone[k][m] = bdone[k][m] = -1;
	int t = 0, left = 2 * K * M;
	memset(s->grid, 0, sizeof s->grid);
	while (left > 0 && t < MAX_T) {
		for (int k = 0; k < K; k++) {
			if (next[k] >= n[k]) continue;
			op o = order[k][next[k]];
			bool ok = o.kind == 'F' ? (k == 0 || (fdone[k - 1][o.micro] >= 0 && fdone[k - 1][o.micro] < t))
			                        : (k == K - 1 ? (fdone[k][o.micro] >= 0 && fdone[k][o.micro] < t)
			                                      : (bdone[k + 1][o.micro] >= 0 && bdone[k + 1][o.micro] < t));
			if (!ok) continue;
			s->grid[k][t] = o;
			if (o.kind == 'F') fdone[k][o.micro] = t;
			else bdone[k][o.micro] = t;
			next[k]++;
			left--;
		}
		t++;
	}
	s->T = t;
	s->idle = 0;
	for (int k = 0; k < K; k++) {
		int held = 0;
		s->peak[k] = 0;
		for (int u = 0; u < s->T; u++) {
			op o = s->grid[k][u];
			if (!o.kind) s->idle++;
			else if (o.kind == 'F' && ++held > s->peak[k]) s->peak[k] = held;
			else if (o.kind == 'B') held--;
		}
	}
}

/* The run's ops, checked: each stage runs every F and B of micro-batches 0..M-1 once, each F before
 * its B. Returns false (an error set) otherwise. */
static bool take_run(pipe_scene *s, const lm_viz_pipeline *d, const char *fname)
{
	s->measured = true;
	s->K = d->K;
	s->M = d->M;
	s->onef1b = d->schedule && strcmp(d->schedule, "1f1b") == 0;
	snprintf(s->source, sizeof s->source, "%s", d->source && *d->source ? d->source : "given by the caller");
	s->tmin = HUGE_VAL;
	s->tmax = -HUGE_VAL;
	for (int k = 0; k < s->K; k++) {
		bool seen_f[MAX_M] = {false}, seen_b[MAX_M] = {false};
		for (int i = 0; i < 2 * s->M; i++) {
			int j = k * 2 * s->M + i, m = d->micro[j];
			char kind = d->kinds[j];
			bool *seen = kind == 'F' ? seen_f : seen_b;
			if (m < 0 || m >= s->M || (kind != 'F' && kind != 'B') || seen[m] || (kind == 'B' && !seen_f[m])) {
				lm_set_error(LM_ERR_ARG, "%s: the pipeline scene: stage %d's op %d (%c%d) is not its micro-batch's "
				             "only %s%s", fname, k + 1, i + 1, kind, m + 1, kind == 'F' ? "forward" : "backward",
				             kind == 'B' ? " after its forward" : "");
				return false;
			}
			seen[m] = true;
			s->ran[k][i] = (op){kind, m};
			s->t0[k][i] = d->t0[j];
			s->t1[k][i] = d->t1[j];
			s->tmin = fmin(s->tmin, d->t0[j]);
			s->tmax = fmax(s->tmax, d->t1[j]);
			s->busy += d->t1[j] - d->t0[j];
		}
	}
	if (!(s->tmax > s->tmin)) s->tmax = s->tmin + 1e-9;
	return true;
}

static void *pipe_create(const vz_build *b)
{
	const lm_viz_pipeline *d = b->pipeline;
	if (d && (d->K < 1 || d->K > MAX_K || d->M < 1 || d->M > MAX_M)) {
		lm_set_error(LM_ERR_ARG, "%s: the pipeline scene draws 1 to %d stages and 1 to %d micro-batches, got %d and %d",
		             b->fname, MAX_K, MAX_M, d->K, d->M);
		return NULL;
	}
	pipe_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (d) {
		if (!take_run(s, d, b->fname)) {
			vz_free(s);
			return NULL;
		}
	} else {
		s->K = (int)vz_opt_int(b->opts, "stages", 4);
		s->M = (int)vz_opt_int(b->opts, "micro", 6);
		s->onef1b = strcmp(vz_opt_string(b->opts, "schedule", "gpipe"), "1f1b") == 0;
	}
	schedule(s);
	return s;
}

static void pipe_destroy(void *p) { vz_free(p); }
static int pipe_steps(void *p) { return ((pipe_scene *)p)->T + 1; }
static int pipe_variants(void *p) { (void)p; return 2; }
static const char *pipe_variant_name(void *p, int v)
{
	if (((pipe_scene *)p)->measured) return v ? "slots" : "seconds";
	return v ? "1F1B" : "GPipe";
}
static void pipe_set_variant(void *p, int v)
{
	pipe_scene *s = p;
	if (s->measured) {
		s->slots_view = v == 1;
		return;
	}
	s->onef1b = v == 1;
	schedule(s);
}

static int pipe_initial_variant(void *p)
{
	pipe_scene *s = p;
	return s->measured ? 0 : s->onef1b ? 1 : 0;
}

static void pipe_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	pipe_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 400 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = vz_text_width(f, VZ_FONT_SMALL, vz_tr("stage 8 ", "阶段 8 ")) + s->cw;
	s->cell = fminf((W - s->label_w) / (float)s->T, (H - s->lh * 6) / (float)s->K);
	s->plot_w = W - s->label_w - s->cw;
	s->row = fminf(s->lh * 4.0f, (H - s->lh * 6) / (float)s->K);
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f) { return (int)floor(f->t + 1e-9); }

/* The measured run on a time axis: a bar per op from its start to its end, idle time hatched. */
static void draw_seconds(pipe_scene *s, vz_frame *f)
{
	int shown = step_of(f);
	double span = s->tmax - s->tmin, until = s->tmin + span * (double)shown / (double)s->T;
	float top = s->lh * 1.5f, sx = s->plot_w / (float)span;
	char t[48];
	for (int q = 0; q <= 4; q++) {
		snprintf(t, sizeof t, "%.1f ms", span * q / 4 * 1e3);
		vz_text_draw(f, s->label_w + s->plot_w * (float)q / 4, 0, VZ_FONT_TINY, q == 4 ? VZ_ALIGN_RIGHT : q ? VZ_ALIGN_CENTER : VZ_ALIGN_LEFT,
		             vz_th.text_dim, t);
	}
	for (int k = 0; k < s->K; k++) {
		float y = top + (float)k * s->row, h = s->row * 0.8f;
		VZ_SNPRINTF_TR(t, sizeof t, "stage %d", "阶段 %d", k + 1);
		vz_text_draw(f, 0, y + h / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		vz_rect lane = vz_r(s->label_w, y, s->plot_w * (float)((until - s->tmin) / span), h);
		if (lane.w > 0) vz_hatch(f, lane, vz_th.bg, vz_th.hatch);
		vz_outline(f, vz_r(s->label_w, y, s->plot_w, h), 1, vz_th.panel_line);
		for (int i = 0; i < 2 * s->M; i++) {
			op o = s->ran[k][i];
			bool now = s->t0[k][i] < until || shown >= s->T;
			float x0 = s->label_w + (float)(s->t0[k][i] - s->tmin) * sx;
			float w = fmaxf((float)(s->t1[k][i] - s->t0[k][i]) * sx, 1.5f);
			vz_rect r = vz_r(x0, y, w, h);
			double shade = 0.45 + 0.55 * (double)(o.micro + 1) / (double)s->M;
			vz_color col = o.kind == 'F' ? vz_mix(vz_th.bg, vz_th.active, now ? shade : 0.12)
			                             : vz_mix(vz_th.bg, vz_th.path_a, now ? shade : 0.12);
			vz_cell_fill(f, r, col, 1, vz_th.panel_line);
			snprintf(t, sizeof t, "%c%d", o.kind, o.micro + 1);
			if (now && vz_text_fits(f, VZ_FONT_TINY, t, w))
				vz_text_draw(f, x0 + w / 2, y + h / 2 - vz_text_height(f, VZ_FONT_TINY) / 2, VZ_FONT_TINY, VZ_ALIGN_CENTER,
				             vz_text_on(col), t);
			vz_cell *c = vz_cell_add(f, r, "op");
			c->state = now ? (o.kind == 'F' ? "forward" : "backward") : "later";
			c->index = o.micro;
			c->row = k, c->col = i, c->group = "measured";
		}
	}
	float y = top + (float)s->K * s->row + s->lh;
	float x = vzs_legend(f, 0, y, vz_mix(vz_th.bg, vz_th.active, 0.8), false, vz_tr("forward Fm", "前向 Fm"));
	x = vzs_legend(f, x, y, vz_mix(vz_th.bg, vz_th.path_a, 0.8), false, vz_tr("backward Bm", "反向 Bm"));
	vzs_legend(f, x, y, vz_th.bg, true, vz_tr("idle (waiting for a neighbour): the bubble", "空闲（等相邻阶段）：气泡"));
}

static void pipe_draw(void *p, vz_frame *f)
{
	pipe_scene *s = p;
	if (s->measured && !s->slots_view) {
		draw_seconds(s, f);
		return;
	}
	int shown = step_of(f);
	char t[32];
	float top = s->lh * 1.5f;
	for (int u = 0; u < s->T; u += s->T > 40 ? 5 : 1) {
		snprintf(t, sizeof t, "%d", u + 1);
		if (vz_text_fits(f, VZ_FONT_TINY, t, s->cell * (s->T > 40 ? 5 : 1)))
			vz_text_draw(f, s->label_w + ((float)u + 0.5f) * s->cell, 0, VZ_FONT_TINY, VZ_ALIGN_CENTER, vz_th.text_dim, t);
	}
	for (int k = 0; k < s->K; k++) {
		float y = top + (float)k * s->cell;
		VZ_SNPRINTF_TR(t, sizeof t, "stage %d", "阶段 %d", k + 1);
		vz_text_draw(f, 0, y + s->cell / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		for (int u = 0; u < s->T; u++) {
			vz_rect r = vz_r(s->label_w + (float)u * s->cell, y, s->cell, s->cell);
			op o = s->grid[k][u];
			bool now = u < shown;
			vz_cell *c;
			if (!o.kind) {
				if (now) vz_hatch(f, r, vz_th.bg, vz_th.hatch);
				vz_outline(f, r, 1, vz_th.panel_line);
				c = vz_cell_add(f, r, "slot");
				c->state = now ? "idle" : "later";
			} else {
				double shade = 0.45 + 0.55 * (double)(o.micro + 1) / (double)s->M;
				vz_color col = o.kind == 'F' ? vz_mix(vz_th.bg, vz_th.active, now ? shade : 0.12)
				                             : vz_mix(vz_th.bg, vz_th.path_a, now ? shade : 0.12);
				vz_cell_fill(f, r, col, 1, vz_th.panel_line);
				snprintf(t, sizeof t, "%c%d", o.kind, o.micro + 1);
				if (now && vz_text_fits(f, VZ_FONT_TINY, t, s->cell))
					vz_text_draw(f, r.x + s->cell / 2, r.y + s->cell / 2 - vz_text_height(f, VZ_FONT_TINY) / 2, VZ_FONT_TINY,
					             VZ_ALIGN_CENTER, vz_text_on(col), t);
				c = vz_cell_add(f, r, "slot");
				c->state = now ? (o.kind == 'F' ? "forward" : "backward") : "later";
				c->index = o.micro;
			}
			c->row = k, c->col = u, c->group = "timeline";
		}
	}
	float y = top + (float)s->K * s->cell + s->lh;
	float x = vzs_legend(f, 0, y, vz_mix(vz_th.bg, vz_th.active, 0.8), false, vz_tr("forward Fm", "前向 Fm"));
	x = vzs_legend(f, x, y, vz_mix(vz_th.bg, vz_th.path_a, 0.8), false, vz_tr("backward Bm", "反向 Bm"));
	vzs_legend(f, x, y, vz_th.bg, true, vz_tr("idle: the bubble", "空闲：气泡"));
}

static double bubble(const pipe_scene *s) { return (double)s->idle / ((double)s->K * s->T); }

static double measured_bubble(const pipe_scene *s) { return 1 - s->busy / ((double)s->K * (s->tmax - s->tmin)); }

static void pipe_title(void *p, char *buf, size_t cap)
{
	pipe_scene *s = p;
	if (s->measured) {
		VZ_SNPRINTF_TR(buf, cap, "pipeline as it ran: %s, %d ranks, %d micro-batches, %.1f ms; %s",
		               "流水线实际运行：%s，%d 个进程，%d 个微批次，%.1f ms；%s",
		               s->onef1b ? "1F1B" : "GPipe", s->K, s->M, (s->tmax - s->tmin) * 1e3,
		               s->slots_view ? vz_tr("its ops in slots, in the order they ran", "按实际运行顺序排入时隙")
		                             : vz_tr("measured times (Tab: slots)", "实测时间（Tab：时隙）"));
		return;
	}
	VZ_SNPRINTF_TR(buf, cap, "pipeline: %s, %d stages, %d micro-batches, %d slots; a schedule computed here (one slot per F or B)",
	               "流水线：%s，%d 个阶段，%d 个微批次，%d 个时隙；在此计算的调度（每个 F 或 B 一个时隙）",
	               s->onef1b ? "1F1B" : "GPipe", s->K, s->M, s->T);
}

static void pipe_step_label(void *p, int step, char *buf, size_t cap)
{
	pipe_scene *s = p;
	if (s->measured && !s->slots_view) {
		double span = s->tmax - s->tmin, at = span * (double)(step < s->T ? step : s->T) / (double)s->T;
		VZ_SNPRINTF_TR(buf, cap, "%.2f of %.2f ms; bubble %.4f measured, %.4f counted in slots, formula (K-1)/(M+K-1) = %.4f",
		               "%.2f / %.2f ms；气泡 实测 %.4f，按时隙数 %.4f，公式 (K-1)/(M+K-1) = %.4f", at * 1e3, span * 1e3,
		               measured_bubble(s), bubble(s), (double)(s->K - 1) / (s->M + s->K - 1));
		return;
	}
	VZ_SNPRINTF_TR(buf, cap, "slot %d of %d; bubble %.4f counted (%d idle of %d slot-stages), formula (K-1)/(M+K-1) = %.4f",
	               "第 %d / %d 个时隙；气泡 %.4f（数出来的：%d / %d 个空闲），公式 (K-1)/(M+K-1) = %.4f", step < s->T ? step : s->T,
	               s->T, bubble(s), s->idle, s->K * s->T, (double)(s->K - 1) / (s->M + s->K - 1));
}

static void pipe_counters(void *p, vz_panel *pn)
{
	pipe_scene *s = p;
	if (s->measured) {
		int c = vz_panel_column(pn, s->onef1b ? "1F1B" : "GPipe", s->source);
		vz_panel_set(pn, c, "stages", s->K);
		vz_panel_set(pn, c, "micro_batches", s->M);
		vz_panel_set(pn, c, "span_ms", (s->tmax - s->tmin) * 1e3);
		vz_panel_set(pn, c, "bubble_measured", measured_bubble(s));
		vz_panel_set(pn, c, "bubble_counted", bubble(s));
		vz_panel_set(pn, c, "bubble_formula", (double)(s->K - 1) / (s->M + s->K - 1));
		vz_panel_set(pn, c, "peak_activations_stage1", s->peak[0]);
		vz_panel_set(pn, c, "peak_activations_last", s->peak[s->K - 1]);
		vz_panel_note(pn, "%s", vz_tr("bubble_measured: idle time over stages x span, waits for messages included; "
		                              "bubble_counted: the same ops one slot each, in the order each stage ran them",
		                              "bubble_measured：空闲时间 / (阶段数 × 总时长)，含等待消息；bubble_counted：同样的操作各占一个"
		                              "时隙、按各阶段实际的运行顺序"));
		return;
	}
	const char *src = vz_tr("computed from the schedule drawn", "由所画的调度计算");
	int c = vz_panel_column(pn, s->onef1b ? "1F1B" : "GPipe", src);
	vz_panel_set(pn, c, "stages", s->K);
	vz_panel_set(pn, c, "micro_batches", s->M);
	vz_panel_set(pn, c, "slots", s->T);
	vz_panel_set(pn, c, "bubble_counted", bubble(s));
	vz_panel_set(pn, c, "bubble_formula", (double)(s->K - 1) / (s->M + s->K - 1));
	vz_panel_set(pn, c, "peak_activations_stage1", s->peak[0]);
	vz_panel_set(pn, c, "peak_activations_last", s->peak[s->K - 1]);
	vz_panel_note(pn, "%s", vz_tr("peak_activations: micro-batches whose forward ran and backward has not (their activations "
	                              "are kept); Tab switches GPipe and 1F1B",
	                              "peak_activations：前向已算、反向未算的微批次数（它们的激活要保留）；Tab 切换 GPipe 与 1F1B"));
}

static void pipe_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	pipe_scene *s = p;
	if (s->measured && !s->slots_view) {
		if (c->row < 0 || c->row >= s->K || c->col < 0 || c->col >= 2 * s->M) return;
		op o = s->ran[c->row][c->col];
		VZ_SNPRINTF_TR(buf, cap, "stage %d: %s of micro-batch %d, %.3f to %.3f ms (measured)",
		               "阶段 %d：%s（微批次 %d），%.3f 到 %.3f ms（实测）", c->row + 1,
		               o.kind == 'F' ? vz_tr("the forward", "前向") : vz_tr("the backward", "反向"), o.micro + 1,
		               (s->t0[c->row][c->col] - s->tmin) * 1e3, (s->t1[c->row][c->col] - s->tmin) * 1e3);
		return;
	}
	if (c->row < 0 || c->row >= s->K || c->col < 0 || c->col >= s->T) return;
	op o = s->grid[c->row][c->col];
	if (!o.kind)
		VZ_SNPRINTF_TR(buf, cap, "stage %d, slot %d: idle (the bubble)", "阶段 %d，第 %d 个时隙：空闲（气泡）", c->row + 1, c->col + 1);
	else
		VZ_SNPRINTF_TR(buf, cap, "stage %d, slot %d: %s of micro-batch %d", "阶段 %d，第 %d 个时隙：%s（微批次 %d）", c->row + 1,
		               c->col + 1, o.kind == 'F' ? vz_tr("the forward", "前向") : vz_tr("the backward", "反向"), o.micro + 1);
}

static const vz_option pipe_options[] = {
	{"stages", VZ_OPT_INT, 1, MAX_K, NULL, "4", "the pipeline's stages K"},
	{"micro", VZ_OPT_INT, 1, MAX_M, NULL, "6", "micro-batches M per batch"},
	{"schedule", VZ_OPT_CHOICE, 0, 0, "gpipe 1f1b", "gpipe", "the schedule (Tab switches)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_pipeline = {
	.name = "pipeline",
	.summary = "pipeline parallelism: GPipe and 1F1B as a timeline of forward and backward micro-batches per stage, the "
	           "bubble counted; or a dist.Pipeline step as it ran (viz.show('pipeline', pipe))",
	.patterns = "",
	.options = pipe_options,
	.create = pipe_create,
	.destroy = pipe_destroy,
	.steps = pipe_steps,
	.variants = pipe_variants,
	.variant_name = pipe_variant_name,
	.set_variant = pipe_set_variant,
	.initial_variant = pipe_initial_variant,
	.layout = pipe_layout,
	.draw = pipe_draw,
	.title = pipe_title,
	.step_label = pipe_step_label,
	.counters = pipe_counters,
	.describe = pipe_describe,
};
