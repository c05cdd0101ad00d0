/*
 * allreduce.c — the allreduce scene: how an all-reduce moves data, step by step, as lumen.dist's
 * ring and tree (lua/lumen/dist.lua) do it.
 *
 * Left, the ring: n ranks on a circle, each holding its vector cut into n chunks; a chunk's cell
 * shows how many ranks' values it already sums (pale: its own only, dark: all n). In step s of
 * the reduce-scatter (s = 0 .. n - 2) rank r sends chunk (r - s) mod n to r + 1, which adds it into
 * its own; then in the all-gather rank r passes its finished chunk (r + 1 - s) mod n on. Arrows
 * are this step's messages, each S / n bytes. Right, the binomial tree: rank r adds what r + 2^k
 * sends for each k below its lowest set bit, sends its sum up to r - 2^k, and rank 0 broadcasts
 * the total down the same edges; each message is the whole S bytes.
 * Counters: for each, the steps, the bytes each rank sends in all, the bytes on the busiest link
 * and the bus bandwidth factor 2 (n - 1) / n — all computed here from the algorithm (what the
 * Lua code sends), not measured; the step's own messages in the label.
 * Read next: lua/lumen/dist.lua, docs/viz.md ("allreduce").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_RANKS 8

typedef struct ar_scene {
	int n, levels;          /* ranks; tree levels ceil(log2 n) */
	double bytes;           /* S */
	/* ring: after step s (0 .. 2(n-1)), rank r's chunk c holds the ranks in mask */
	uint16_t ring[2 * MAX_RANKS][MAX_RANKS][MAX_RANKS];
	/* tree: after step s (0 .. 2 levels), rank r holds the ranks in mask */
	uint16_t tree[2 * 4 + 1][MAX_RANKS];
	float lh, cw, half_w, h;
} ar_scene;

static int popcount(unsigned x)
{
	int c = 0;
	for (; x; x &= x - 1) c++;
	return c;
}

static int ring_steps(const ar_scene *s) { return 2 * (s->n - 1); }
static int tree_steps(const ar_scene *s) { return 2 * s->levels; }

static void simulate(ar_scene *s)
{
	int n = s->n;
	for (int r = 0; r < n; r++)
		for (int c = 0; c < n; c++) s->ring[0][r][c] = (uint16_t)(1u << r);
	for (int st = 0; st < ring_steps(s); st++) {
		memcpy(s->ring[st + 1], s->ring[st], sizeof s->ring[st]);
		for (int r = 0; r < n; r++) {
			int to = (r + 1) % n;
			if (st < n - 1) { /* reduce-scatter: r sends chunk (r - st), to adds it */
				int c = ((r - st) % n + n) % n;
				s->ring[st + 1][to][c] |= s->ring[st][r][c];
			} else { /* all-gather: r passes chunk (r + 1 - k) on, to copies it */
				int k = st - (n - 1);
				int c = ((r + 1 - k) % n + n) % n;
				s->ring[st + 1][to][c] = s->ring[st][r][c];
			}
		}
	}
	for (int r = 0; r < n; r++) s->tree[0][r] = (uint16_t)(1u << r);
	int st = 0;
	for (int mask = 1; mask < n; mask <<= 1, st++) { /* reduce: r (a multiple of 2 mask) adds r + mask */
		memcpy(s->tree[st + 1], s->tree[st], sizeof s->tree[st]);
		for (int r = 0; r + mask < n; r += 2 * mask) s->tree[st + 1][r] |= s->tree[st][r + mask];
	}
	for (int mask = 1 << (s->levels - 1); mask >= 1 && s->levels > 0; mask >>= 1, st++) { /* broadcast down */
		memcpy(s->tree[st + 1], s->tree[st], sizeof s->tree[st]);
		for (int r = 0; r + mask < n; r += 2 * mask) s->tree[st + 1][r + mask] = s->tree[st][r];
	}
}

static void *ar_create(const vz_build *b)
{
	ar_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	s->n = (int)vz_opt_int(b->opts, "ranks", 4);
	s->bytes = vz_opt_number(b->opts, "bytes", 1 << 20);
	s->levels = 0;
	while ((1 << s->levels) < s->n) s->levels++;
	simulate(s);
	return s;
}

static void ar_destroy(void *p) { vz_free(p); }
static int ar_steps(void *p)
{
	ar_scene *s = p;
	int a = ring_steps(s), t = tree_steps(s);
	return 1 + (a > t ? a : t);
}
static int ar_variants(void *p) { (void)p; return 1; }
static const char *ar_variant_name(void *p, int v) { (void)p, (void)v; return "ring and tree"; }
static void ar_set_variant(void *p, int v) { (void)p, (void)v; }

static void ar_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	ar_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 440 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->half_w = W / 2;
	s->h = H;
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f) { return (int)floor(f->t + 1e-9); }

static vz_color fill_of(const ar_scene *s, unsigned mask)
{
	double t = (double)popcount(mask) / (double)s->n;
	return vz_mix(VZ_RGB(255, 255, 255), vz_th.active, t);
}

static void bytes_text(char *buf, size_t cap, double b)
{
	if (b >= 1 << 20) snprintf(buf, cap, "%.3g MB", b / (1 << 20));
	else if (b >= 1 << 10) snprintf(buf, cap, "%.3g KB", b / (1 << 10));
	else snprintf(buf, cap, "%.0f B", b);
}

/* the ring's picture after `done` steps, with the messages of step `done` (if any) drawn */
static void draw_ring(vz_frame *f, ar_scene *s, int done)
{
	int n = s->n, steps = ring_steps(s);
	if (done > steps) done = steps;
	float cx = s->half_w / 2, cy = s->lh * 3 + (s->h - s->lh * 6) / 2;
	float R = fminf(s->half_w * 0.32f, (s->h - s->lh * 8) * 0.36f);
	float cell = fminf(R * 0.35f, s->cw * 3.2f), barw = cell * (float)n;
	char t[96];
	VZ_TEXTF_TR(f, 0, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "ring: %s", "环：%s",
	            done == 0 ? vz_tr("each rank's own vector in n chunks", "每个 rank 自己的向量，分成 n 块")
	            : done >= steps ? vz_tr("every rank holds the whole sum", "每个 rank 都有了完整的和")
	            : done < n - 1 ? vz_tr("reduce-scatter", "规约-散播") : vz_tr("all-gather", "全收集"));
	float px[MAX_RANKS], py[MAX_RANKS];
	for (int r = 0; r < n; r++) {
		double a = -M_PI / 2 + 2 * M_PI * r / n;
		px[r] = cx + R * (float)cos(a);
		py[r] = cy + R * (float)sin(a);
	}
	if (done < steps) { /* this step's messages */
		for (int r = 0; r < n; r++) {
			int to = (r + 1) % n;
			float dx = px[to] - px[r], dy = py[to] - py[r], d = sqrtf(dx * dx + dy * dy);
			float k = (cell * 1.2f) / (d > 0 ? d : 1);
			vz_arrow(f, px[r] + dx * k, py[r] + dy * k, px[to] - dx * k, py[to] - dy * k, 2, s->cw, vz_th.arrow_now);
			int c = done < n - 1 ? ((r - done) % n + n) % n : ((r + 1 - (done - (n - 1))) % n + n) % n;
			snprintf(t, sizeof t, "%d", c);
			vz_text_draw(f, (px[r] + px[to]) / 2, (py[r] + py[to]) / 2 - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_CENTER,
			             vz_th.highlight, t);
		}
	}
	for (int r = 0; r < n; r++) {
		float x0 = px[r] - barw / 2, y0 = py[r] - cell / 2;
		for (int c = 0; c < n; c++) {
			unsigned m = s->ring[done][r][c];
			vz_rect rc = vz_r(x0 + (float)c * cell, y0, cell, cell);
			vz_cell_fill(f, rc, fill_of(s, m), 1, vz_th.panel_line);
			vz_cell *cl = vz_cell_add(f, rc, "chunk");
			cl->group = "ring", cl->index = c, cl->tag = r, cl->row = r, cl->value = popcount(m), cl->has_value = true;
			cl->state = popcount(m) == n ? "complete" : "partial";
		}
		snprintf(t, sizeof t, vz_zh() ? "rank %d" : "rank %d", r);
		vz_text_draw(f, px[r], y0 + cell + s->lh * 0.1f, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text, t);
	}
	char sb[32], line[200];
	bytes_text(sb, sizeof sb, s->bytes / n);
	VZ_SNPRINTF_TR(line, sizeof line, "an arrow: one chunk, %s (its number: which); a cell: how many ranks it sums",
	               "箭头：一块，%s（数字：第几块）；格子：已累加几个 rank", sb);
	vz_text_fit(f, VZ_FONT_SMALL, line, sizeof line, s->half_w - 2 * s->cw);
	vz_text_draw(f, 0, s->h - s->lh * 2.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, line);
}

static void draw_tree(vz_frame *f, ar_scene *s, int done)
{
	int n = s->n, steps = tree_steps(s);
	if (done > steps) done = steps;
	float x0 = s->half_w, w = s->half_w;
	char t[96];
	VZ_TEXTF_TR(f, x0, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "binomial tree: %s", "二项树：%s",
	            done == 0 ? vz_tr("each rank's own vector", "每个 rank 自己的向量")
	            : done <= s->levels ? vz_tr("reduce to rank 0", "规约到 rank 0") : vz_tr("broadcast down", "向下广播"));
	/* ranks in a row; the tree's edges as arcs above: r + 2^k -> r */
	float gap = w / (float)(n + 1), y = s->lh * 3 + (s->h - s->lh * 6) * 0.62f;
	float box = fminf(gap * 0.7f, s->cw * 8);
	float px[MAX_RANKS];
	for (int r = 0; r < n; r++) px[r] = x0 + gap * (float)(r + 1);
	/* this step's messages */
	if (done < steps) {
		if (done < s->levels) {
			int mask = 1 << done;
			for (int r = 0; r + mask < n; r += 2 * mask) {
				float h = s->lh * (1.5f + 1.6f * (float)done), top = y - box / 2 - h;
				vz_line(f, px[r + mask], y - box / 2, px[r + mask], top, 2, vz_th.arrow_now);
				vz_line(f, px[r + mask], top, px[r], top, 2, vz_th.arrow_now);
				vz_arrow(f, px[r], top, px[r], y - box / 2, 2, s->cw, vz_th.arrow_now);
			}
		} else {
			int k = done - s->levels, mask = 1 << (s->levels - 1 - k);
			for (int r = 0; r + mask < n; r += 2 * mask)
				vz_arrow(f, px[r], y + box / 2, px[r + mask], y + box / 2, 2, s->cw, vz_th.arrow_now);
		}
	}
	for (int r = 0; r < n; r++) {
		unsigned m = s->tree[done][r];
		vz_rect rc = vz_r(px[r] - box / 2, y - box / 2, box, box);
		vz_cell_fill(f, rc, fill_of(s, m), 1, vz_th.panel_line);
		snprintf(t, sizeof t, "%d/%d", popcount(m), n);
		vz_text_draw(f, px[r], y - s->lh / 2, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_text_on(fill_of(s, m)), t);
		vz_cell *cl = vz_cell_add(f, rc, "vector");
		cl->group = "tree", cl->tag = r, cl->row = r, cl->value = popcount(m), cl->has_value = true;
		cl->state = popcount(m) == n ? "complete" : "partial";
		snprintf(t, sizeof t, "rank %d", r);
		vz_text_draw(f, px[r], y + box / 2 + s->lh * 0.2f, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text, t);
	}
	char sb[32], line[200];
	bytes_text(sb, sizeof sb, s->bytes);
	VZ_SNPRINTF_TR(line, sizeof line, "an arrow: the whole vector, %s; the number: ranks summed",
	               "箭头：整个向量，%s；数字：已累加的 rank 数", sb);
	vz_text_fit(f, VZ_FONT_SMALL, line, sizeof line, w - 2 * s->cw);
	vz_text_draw(f, x0, s->h - s->lh * 2.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, line);
}

static void ar_draw(void *p, vz_frame *f)
{
	ar_scene *s = p;
	int st = step_of(f);
	draw_ring(f, s, st);
	draw_tree(f, s, st);
	vz_line(f, s->half_w - s->cw, 0, s->half_w - s->cw, s->h - s->lh * 2.5f, 1, vz_th.panel_line);
}

static void ar_title(void *p, char *buf, size_t cap)
{
	ar_scene *s = p;
	char sb[32];
	bytes_text(sb, sizeof sb, s->bytes);
	VZ_SNPRINTF_TR(buf, cap, "allreduce: %d ranks, %s each; the ring against a binomial tree (lumen.dist's algorithms)",
	               "allreduce：%d 个 rank，每个 %s；环与二项树（lumen.dist 的算法）", s->n, sb);
}

static void ar_step_label(void *p, int step, char *buf, size_t cap)
{
	ar_scene *s = p;
	int n = s->n;
	char ring[120], tree[120];
	if (step >= ring_steps(s)) VZ_SNPRINTF_TR(ring, sizeof ring, "ring done after %d steps", "环 %d 步后完成", ring_steps(s));
	else if (step < n - 1) VZ_SNPRINTF_TR(ring, sizeof ring, "ring step %d: reduce-scatter, %d messages", "环第 %d 步：规约-散播，%d 条消息", step + 1, n);
	else VZ_SNPRINTF_TR(ring, sizeof ring, "ring step %d: all-gather, %d messages", "环第 %d 步：全收集，%d 条消息", step + 1, n);
	if (step >= tree_steps(s)) VZ_SNPRINTF_TR(tree, sizeof tree, "tree done after %d steps", "树 %d 步后完成", tree_steps(s));
	else VZ_SNPRINTF_TR(tree, sizeof tree, "tree step %d", "树第 %d 步", step + 1);
	snprintf(buf, cap, "%s; %s", ring, tree);
}

static void ar_counters(void *p, vz_panel *pn)
{
	ar_scene *s = p;
	int n = s->n;
	const char *src = vz_tr("computed from the algorithm", "由算法计算");
	int a = vz_panel_column(pn, vz_tr("ring", "环"), src);
	vz_panel_set(pn, a, "ranks", n);
	vz_panel_set(pn, a, "steps", ring_steps(s));
	vz_panel_set(pn, a, "bytes_per_message", s->bytes / n);
	vz_panel_set(pn, a, "bytes_sent_per_rank", s->bytes * 2 * (n - 1) / n);
	vz_panel_set(pn, a, "busiest_link_bytes", s->bytes * 2 * (n - 1) / n);
	int t = vz_panel_column(pn, vz_tr("tree", "树"), src);
	vz_panel_set(pn, t, "ranks", n);
	vz_panel_set(pn, t, "steps", tree_steps(s));
	vz_panel_set(pn, t, "bytes_per_message", s->bytes);
	/* rank 0 receives one vector per level and sends one per level back */
	vz_panel_set(pn, t, "bytes_sent_per_rank", s->bytes * s->levels);
	vz_panel_set(pn, t, "busiest_link_bytes", n > 1 ? s->bytes * 2 : 0);
	vz_panel_note(pn, "%s", vz_tr("bytes_sent_per_rank: the ring's every rank, the tree's rank 0 (the most); busiest_link_bytes: "
	                              "both directions of one link in all; bus bandwidth (NCCL-tests) = S / t x 2(n-1)/n",
	                              "bytes_sent_per_rank：环中每个 rank 的，树中 rank 0 的（最多）；busiest_link_bytes：一条链路两个方向合计；"
	                              "总线带宽（NCCL-tests）= S / t x 2(n-1)/n"));
}

static void ar_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	ar_scene *s = p;
	if (strcmp(c->kind, "chunk") == 0)
		VZ_SNPRINTF_TR(buf, cap, "rank %d, chunk %d: the sum of %d of the %d ranks' values", "rank %d 的第 %d 块：%d / %d 个 rank 的值之和",
		               c->tag, c->index, (int)c->value, s->n);
	else if (strcmp(c->kind, "vector") == 0)
		VZ_SNPRINTF_TR(buf, cap, "rank %d: the sum of %d of the %d ranks' vectors", "rank %d：%d / %d 个 rank 的向量之和", c->tag,
		               (int)c->value, s->n);
}

static const vz_option ar_options[] = {
	{"ranks", VZ_OPT_INT, 2, MAX_RANKS, NULL, "4", "the number of ranks"},
	{"bytes", VZ_OPT_NUMBER, 1, 1e12, NULL, "1048576", "the bytes each rank's vector holds (S)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_allreduce = {
	.name = "allreduce",
	.summary = "an all-reduce step by step: the ring's reduce-scatter and all-gather beside a binomial tree, bytes per "
	           "link",
	.patterns = "",
	.options = ar_options,
	.create = ar_create,
	.destroy = ar_destroy,
	.steps = ar_steps,
	.variants = ar_variants,
	.variant_name = ar_variant_name,
	.set_variant = ar_set_variant,
	.layout = ar_layout,
	.draw = ar_draw,
	.title = ar_title,
	.step_label = ar_step_label,
	.counters = ar_counters,
	.describe = ar_describe,
};
