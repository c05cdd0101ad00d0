/*
 * tree.c — the picture the scan and reduction scenes share: the elements of one block as a row of
 * cells per step (the input, then the array after each textbook step), the cells an add wrote lit,
 * the others grey, and an arrow from each add's operands to the element it wrote. Rows whose cells
 * are too narrow on screen become one image each; arrows too dense to tell apart are thinned.
 *
 * The data flow comes from addnet.c; a scene gives the box, the row labels and the title. The
 * hover text names the array as the kernel does (XY, input, input_s).
 * Read next: scan.c, reduce.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

void vzs_tree_free(vzs_tree *p)
{
	for (int r = 0; p->grids && r <= p->net.nsteps; r++) vzs_grid_free(&p->grids[r]);
	vz_free(p->grids);
	vz_free(p->scratch);
	vz_run_clear(&p->run);
	vzs_addnet_free(&p->net);
	vz_free(p->rows);
	vz_free(p->writer);
	memset(p, 0, sizeof *p);
}

lm_status vzs_tree_build(vzs_tree *p, const lm_viz_run *run, uint32_t block,
                         const char *(*title)(const char *algo), const char *fname)
{
	memset(p, 0, sizeof *p);
	vz_run_copy(&p->run, run);
	snprintf(p->name, sizeof p->name, "%s", run->algo);
	p->title = title;
	if (vzs_addnet_build(run->trace, 0, block, &p->net) != LM_OK) {
		char msg[512];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		vzs_tree_free(p);
		return lm_set_error(LM_ERR_ARG, "%s: this %s trace cannot be drawn: %s", fname, run->pattern, msg);
	}
	lm_trace_array a;
	lm_trace_array_get(run->trace, p->net.array, &a);
	snprintf(p->array, sizeof p->array, "%s", a.name);
	int rows = p->net.nsteps + 1;
	int64_t len = p->net.length;
	p->rows = vz_malloc((size_t)rows * (size_t)len * sizeof *p->rows);
	p->writer = vz_malloc((size_t)rows * (size_t)len * sizeof *p->writer);
	p->grids = vz_calloc((size_t)rows, sizeof *p->grids);
	p->scratch = vz_malloc((size_t)len * sizeof *p->scratch);
	if (!p->rows || !p->writer || !p->grids || !p->scratch) {
		vzs_tree_free(p);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	for (int r = 0; r < rows; r++) {
		vzs_addnet_values(&p->net, r, p->rows + (size_t)r * (size_t)len);
		int *w = p->writer + (size_t)r * (size_t)len;
		for (int64_t i = 0; i < len; i++) w[i] = -1;
		if (r == 0) continue;
		const vzs_step *s = &p->net.steps[r - 1];
		for (int i = s->first; i < s->first + s->count; i++) {
			const vzs_add *ad = &p->net.adds[i];
			if (ad->dst >= p->net.lo && ad->dst < p->net.lo + len && ad->dst_array == p->net.array)
				w[ad->dst - p->net.lo] = i;
		}
	}
	return LM_OK;
}

void vzs_tree_layout(vzs_tree *p, vz_rect box, float rows_h, const vz_layout_ctx *c)
{
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), bh = vz_text_height(f, VZ_FONT_BODY);
	p->box = box;
	p->label_w = 13 * vz_char_width(f, VZ_FONT_SMALL);
	p->top = box.y + bh + lh * 0.6f;
	int rows = p->net.nsteps + 1;
	p->cell_w = (box.w - p->label_w) / (float)p->net.length;
	p->pitch = (rows_h > 0 ? rows_h : box.y + box.h - p->top) / (float)rows;
	p->cell_h = fminf(fmaxf(p->pitch * 0.46f, 3), 30 * c->scale);
	if (p->cell_h > p->cell_w * 1.4f && p->cell_w > 10) p->cell_h = fmaxf(p->cell_w * 1.4f, lh + 2);
}

/* How cell i of row r looks at step k (u: how far the next row has faded in). */
static vz_color cell_look(const vzs_tree *p, int r, int64_t i, int k, double u, const char **state)
{
	vz_color c;
	if (r == 0) {
		*state = "input";
		c = vz_mix(vz_th.pending, vz_okabe_ito[VZ_OI_SKY], 0.28);
	} else {
		bool w = p->writer[(size_t)r * (size_t)p->net.length + (size_t)i] >= 0;
		*state = w ? "active" : "idle";
		c = w ? vz_th.active : vz_th.idle;
	}
	if (r > k + 1 || (r == k + 1 && u <= 0)) {
		*state = "pending";
		return vz_th.pending;
	}
	return r == k + 1 ? vz_mix(vz_th.pending, c, u) : c;
}

/* The fields of element i of row r: its value (once shown), the thread that wrote it. */
static void cell_fields(const vzs_tree *p, vz_cell *cell, int r, int64_t i, int k)
{
	cell->group = p->name;
	cell->index = (int32_t)(p->net.lo + i);
	cell->step = r;
	cell->block = (int32_t)p->net.block;
	if (r <= k) {
		cell->value = p->rows[(size_t)r * (size_t)p->net.length + (size_t)i];
		cell->has_value = true;
	}
	int w = r > 0 ? p->writer[(size_t)r * (size_t)p->net.length + (size_t)i] : -1;
	if (w >= 0) {
		const vzs_add *a = &p->net.adds[w];
		cell->thread = a->thread;
		cell->warp = a->warp;
		cell->lane = a->lane;
		cell->event = a->event;
	}
}

float vzs_tree_x(const vzs_tree *p, int64_t i) { return p->box.x + p->label_w + (float)i * p->cell_w; }

static void arrows(vz_frame *f, const vzs_tree *p, int r, vz_color col, float width)
{
	const vzs_step *st = &p->net.steps[r - 1];
	float y_dst = p->top + (float)r * p->pitch, y_src = p->top + (float)(r - 1) * p->pitch + p->cell_h;
	float head = fminf(6, fmaxf(2.5f, p->cell_w * 0.35f));
	/* too narrow to tell arrows apart: one in `skip` (about one per 3 pixels), the slanted operand
	 * only (the vertical one is the cell's own value going down) */
	float px = p->cell_w * vz_zoom(f);
	bool thin = px < 3;
	int skip = thin ? (int)ceilf(3 / px) : 1;
	int64_t lo = p->net.lo, hi = p->net.lo + p->net.length;
	for (int i = st->first; i < st->first + st->count; i++) {
		const vzs_add *a = &p->net.adds[i];
		if (a->dst < lo || a->dst >= hi) continue;
		if (skip > 1 && (a->dst - lo) % skip != skip - 1) continue;
		float xd = vzs_tree_x(p, a->dst - lo) + p->cell_w / 2;
		float span = (float)st->stride * p->cell_w;
		if (!vz_visible(f, vz_r(xd - span - 1, y_src, 2 * span + 2, y_dst - y_src))) continue;
		for (int k = 0; k < 2; k++) {
			int32_t s = a->src[k];
			if (s < lo || s >= hi || a->src_array[k] != p->net.array || (thin && s == a->dst)) continue;
			float xs = vzs_tree_x(p, s - lo) + p->cell_w / 2;
			if (thin) vz_line(f, xs, y_src, xd, y_dst, width * 0.7f, col);
			else vz_arrow(f, xs, y_src, xd, y_dst - 0.5f, width, head, col);
		}
	}
}

/* One row: its band when current, its label, its cells (or the image of them). */
static void row(vz_frame *f, vzs_tree *p, int r, int k, double u, bool current, const char *label)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	float y = p->top + (float)r * p->pitch;
	int64_t len = p->net.length;
	if (current)
		vz_fill(f, vz_r(p->box.x, y - p->pitch * 0.12f, p->box.w, p->cell_h + p->pitch * 0.24f),
		        vz_mix(vz_th.bg, vz_th.active, 0.14));
	vz_text_draw(f, p->box.x + cw * 0.3f, y + (p->cell_h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
	             r <= k ? vz_th.text : vz_th.text_dim, label);
	const char *state;
	if (vzs_dense(f, p->cell_w)) {
		for (int64_t i = 0; i < len; i++) p->scratch[i] = cell_look(p, r, i, k, u, &state);
		vz_cell *g = vzs_grid_draw(f, &p->grids[r], vz_r(vzs_tree_x(p, 0), y, p->cell_w * (float)len, p->cell_h),
		                           1, (int)len, p->scratch, "element", (int32_t)p->net.lo);
		g->group = p->name;
		g->step = r;
		g->block = (int32_t)p->net.block;
		return;
	}
	for (int64_t i = 0; i < len; i++) {
		vz_rect cr = vz_r(vzs_tree_x(p, i) + p->cell_w * 0.04f, y, p->cell_w * 0.92f, p->cell_h);
		if (!vz_visible(f, cr)) continue;
		vz_color c = cell_look(p, r, i, k, u, &state);
		vzs_value_cell(f, cr, c, p->rows[(size_t)r * (size_t)len + (size_t)i], r <= k || u > 0.5);
		vz_cell *cell = vz_cell_add(f, cr, "element");
		cell->state = state;
		cell->color = c;
		cell_fields(p, cell, r, i, k);
	}
}

void vzs_tree_draw(vz_frame *f, vzs_tree *p, double t, vzs_row_label label, const void *ud)
{
	int last = p->net.nsteps, k = (int)floor(t + 1e-9);
	bool finished = t > last + 1e-9; /* a picture beside it is still running */
	if (k > last) k = last;
	double u = k >= last ? 0 : t - k;
	VZ_TEXTF_TR(f, p->box.x, p->box.y, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "%s: %d steps, %d adds",
	            "%s：%d 步，%d 次加法", p->title(p->name), p->net.nsteps, p->net.nadds);
	char text[48];
	for (int r = 0; r <= last; r++) {
		if (r == 0) snprintf(text, sizeof text, "%s", vz_tr("input", "输入"));
		else label(p, r, text, sizeof text, ud);
		row(f, p, r, k, u, r == k && !finished, text);
	}
	for (int r = 1; r <= last; r++) {
		bool now = r == k && !finished;
		if (r <= k) arrows(f, p, r, now ? vz_th.arrow_now : vz_fade(vz_th.arrow, 0.55), now ? 1.5f : 1.0f);
		else if (r == k + 1 && u > 0) arrows(f, p, r, vz_fade(vz_th.arrow_now, u), 1.5f);
	}
}

void vzs_tree_describe(const vzs_tree *p, vz_cell *c, double t, char *buf, size_t cap)
{
	int64_t lo = p->net.lo, i = c->index - lo;
	if (i < 0 || i >= p->net.length || c->step < 0 || c->step > p->net.nsteps) return;
	int k = (int)floor(t + 1e-9);
	if (c->rows > 0) { /* an element of a row drawn as an image: its own fields */
		c->color = cell_look(p, c->step, i, k, 0, &c->state);
		cell_fields(p, c, c->step, i, k);
		c->rows = c->cols = -1;
	}
	const char *title = p->title(p->name);
	if (c->step == 0) VZ_SNPRINTF_TR(buf, cap, "%s, input: %s[%d]", "%s，输入：%s[%d]", title, p->array, c->index);
	else VZ_SNPRINTF_TR(buf, cap, "%s, after step %d: %s[%d]", "%s，第 %d 步之后：%s[%d]", title, c->step, p->array,
	                    c->index);
	if (c->has_value) vz_append(buf, cap, " = %g", c->value);
	int w = c->step > 0 ? p->writer[(size_t)c->step * (size_t)p->net.length + (size_t)i] : -1;
	if (w >= 0) {
		const vzs_add *a = &p->net.adds[w];
		const double *prev = p->rows + (size_t)(c->step - 1) * (size_t)p->net.length;
		VZ_APPEND_TR(buf, cap, "\nthread %d (warp %d, lane %d) added %s[%d] + %s[%d]",
		             "\n线程 %d（线程束 %d，通道 %d）计算 %s[%d] + %s[%d]", a->thread, a->warp, a->lane, p->array,
		             a->src[0], p->array, a->src[1]);
		if (a->src[0] >= lo && a->src[1] >= lo && a->src[0] < lo + p->net.length && a->src[1] < lo + p->net.length)
			vz_append(buf, cap, " = %g + %g", prev[a->src[0] - lo], prev[a->src[1] - lo]);
		VZ_APPEND_TR(buf, cap, "\nblock %u, trace event %lld (an add)", "\n线程块 %u，trace 事件 %lld（一次加法）",
		             p->net.block, (long long)a->event + 1);
	} else if (c->step > 0) {
		vz_append(buf, cap, "\n%s", vz_tr("idle in this step: no thread adds into it", "本步空闲：没有线程写入它"));
	}
}
