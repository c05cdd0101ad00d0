/*
 * graph_passes.c — the graph scene's compiled view (issue 31): an lm.graph Graph as captured and
 * after each rewrite of its passes (dce, fold, cse, simplify, fuse), one rewrite per step. Kernels
 * are boxes in program order (columns: the longest path from the values read from outside; rows:
 * program order), edges run from the kernel that produced a value to the kernels reading it, the
 * values read from outside (inputs, constants, state) sit in the left column. The step's rewrite is
 * marked: the nodes it removed stay where they were, faded and struck out; a merge is a link from
 * the node dropped to the node kept; a fold turns the node into a constant (hatched); a fused
 * kernel is drawn around its members' ops. A strip above the graph gives the kernels and bytes of
 * this step and of step 0, counted from the program by lm.graph (g:snapshot(k):cost()), never
 * measured.
 *
 * Design: lua/lumen/viz_passes.lua describes every step as flat arrays (lm_viz_passes, viz.h); this
 * file copies them and only lays out and draws: it knows neither Lua nor lm.graph's passes. graph.c
 * dispatches to these functions when the scene was given a compiled graph.
 * Read next: lua/lumen/viz_passes.lua, lua/lumen/graph.lua, graph.c (the autograd view).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

typedef struct pnode {
	lm_viz_gnode n;
	char label[48], detail[64];
	vz_rect r;
} pnode;

typedef struct pstep {
	char pass[24], action[16], text[320];
	double cost[3]; /* kernels, bytes read, bytes written */
	int first, count;       /* its nodes: node[first .. first + count) */
	int efirst, ecount;     /* its edges */
} pstep;

struct vzs_passes {
	pnode *node;
	lm_viz_gedge *edge;
	pstep *step;
	int nnodes, nedges, nsteps;
	int ncols, nrows;
	float top, lh;
	char name[160], source[96];
};

static const char *const cost_names[3] = {"kernels", "bytes_read", "bytes_written"};
static const char *const state_names[4] = {"live", "rewritten", "removed", "folded"};
static const char *const kind_names[4] = {"kernel", "fused", "op", "value"};

void vzs_passes_free(vzs_passes *p)
{
	if (!p) return;
	vz_free(p->node);
	vz_free(p->edge);
	vz_free(p->step);
	vz_free(p);
}

static void copy_str(char *dst, size_t cap, const char *s) { snprintf(dst, cap, "%s", s ? s : ""); }

vzs_passes *vzs_passes_new(const lm_viz_passes *d, const char *fname)
{
	vzs_passes *p = vz_calloc(1, sizeof *p);
	if (!p) goto nomem;
	p->node = vz_calloc((size_t)(d->nnodes ? d->nnodes : 1), sizeof *p->node);
	p->edge = vz_calloc((size_t)(d->nedges ? d->nedges : 1), sizeof *p->edge);
	p->step = vz_calloc((size_t)d->nsteps, sizeof *p->step);
	if (!p->node || !p->edge || !p->step) goto nomem;
	p->nnodes = d->nnodes, p->nedges = d->nedges, p->nsteps = d->nsteps;
	copy_str(p->name, sizeof p->name, d->name);
	copy_str(p->source, sizeof p->source, d->source ? d->source : "counted from the program (lm.graph)");
	for (int k = 0; k < d->nsteps; k++) {
		pstep *s = &p->step[k];
		copy_str(s->pass, sizeof s->pass, d->steps[k].pass);
		copy_str(s->action, sizeof s->action, d->steps[k].action);
		copy_str(s->text, sizeof s->text, d->steps[k].text);
		s->cost[0] = d->steps[k].kernels, s->cost[1] = d->steps[k].bytes_read, s->cost[2] = d->steps[k].bytes_written;
		s->first = s->efirst = -1;
	}
	for (int i = 0; i < d->nnodes; i++) {
		pnode *n = &p->node[i];
		n->n = d->nodes[i];
		copy_str(n->label, sizeof n->label, d->nodes[i].label);
		copy_str(n->detail, sizeof n->detail, d->nodes[i].detail);
		n->n.label = n->n.detail = NULL; /* borrowed: the copies above stand for them */
		if (i > 0 && n->n.step < d->nodes[i - 1].step) goto order;
		pstep *s = &p->step[n->n.step];
		if (s->first < 0) s->first = i;
		s->count = i - s->first + 1;
		if (n->n.col + 1 > p->ncols) p->ncols = n->n.col + 1;
		if (n->n.row + 1 > p->nrows) p->nrows = n->n.row + 1;
	}
	for (int i = 0; i < d->nedges; i++) {
		p->edge[i] = d->edges[i];
		if ((i > 0 && p->edge[i].step < d->edges[i - 1].step) || p->node[p->edge[i].from].n.step != p->edge[i].step ||
		    p->node[p->edge[i].to].n.step != p->edge[i].step)
			goto order;
		pstep *s = &p->step[p->edge[i].step];
		if (s->efirst < 0) s->efirst = i;
		s->ecount = i - s->efirst + 1;
	}
	return p;
order:
	vzs_passes_free(p);
	lm_set_error(LM_ERR_ARG, "%s: the graph scene takes its nodes and edges step by step, in order, each edge "
	             "between two nodes of its step", fname);
	return NULL;
nomem:
	vzs_passes_free(p);
	lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	return NULL;
}

int vzs_passes_steps(const vzs_passes *p) { return p->nsteps; }

/* ---------------------------------------------------------------- layout */

void vzs_passes_layout(vzs_passes *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	p->lh = lh;
	p->top = lh * 6.2f; /* the legend, the rewrite's text and the cost table */
	float colw = fmaxf(c->w / (float)(p->ncols > 0 ? p->ncols : 1), 12 * cw);
	float bw = fminf(colw * 0.8f, 22 * cw);
	float rowh = fmaxf((c->h - p->top) / (float)(p->nrows > 0 ? p->nrows : 1), lh * 3.6f);
	float bh = fminf(rowh * 0.55f, lh * 2.4f);
	for (int i = 0; i < p->nnodes; i++) {
		pnode *n = &p->node[i];
		float x = (float)n->n.col * colw + (colw - bw) / 2;
		float y = p->top + (float)n->n.row * rowh + (rowh - bh) / 2 + lh * 0.4f;
		n->r = vz_r(x, y, bw, bh);
	}
	/* a fused kernel encloses its ops, with a line for its name above them */
	for (int i = 0; i < p->nnodes; i++) {
		pnode *n = &p->node[i];
		if (n->n.kind != LM_VIZ_GN_FUSED) continue;
		float x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY;
		for (int j = i + 1; j < p->nnodes && p->node[j].n.step == n->n.step; j++) {
			if (p->node[j].n.parent != i) continue;
			vz_rect m = p->node[j].r;
			x0 = fminf(x0, m.x), y0 = fminf(y0, m.y), x1 = fmaxf(x1, m.x + m.w), y1 = fmaxf(y1, m.y + m.h);
		}
		if (x0 > x1) continue; /* no member given: its own cell */
		float pad = lh * 0.35f;
		n->r = vz_r(x0 - pad, y0 - pad - lh * 1.1f, x1 - x0 + 2 * pad, y1 - y0 + 2 * pad + lh * 1.1f);
	}
	*ww = fmaxf(c->w, colw * (float)p->ncols);
	*wh = fmaxf(c->h, p->top + rowh * (float)p->nrows + lh);
}

/* ---------------------------------------------------------------- drawing */

static vz_color node_color(const pnode *n)
{
	switch (n->n.state) {
	case LM_VIZ_GS_REWRITTEN: return n->n.kind == LM_VIZ_GN_FUSED ? vz_mix(vz_th.active, vz_th.bg, 0.6) : vz_th.active;
	case LM_VIZ_GS_REMOVED: return vz_mix(vz_th.idle, vz_th.bg, 0.55);
	case LM_VIZ_GS_FOLDED: return vz_mix(vz_th.active, vz_th.bg, 0.45);
	default:
		if (n->n.kind == LM_VIZ_GN_FUSED) return vz_mix(vz_th.common, vz_th.bg, 0.7);
		if (n->n.kind == LM_VIZ_GN_VALUE) return vz_th.idle;
		return vz_mix(vz_th.path_a, vz_th.bg, 0.55);
	}
}

static vz_rect node_rect(const vzs_passes *p, int i) { return p->node[i].r; }

static void draw_edge(vz_frame *f, const vzs_passes *p, const lm_viz_gedge *e)
{
	vz_rect a = node_rect(p, e->from), b = node_rect(p, e->to);
	float x0 = a.x + a.w, y0 = a.y + a.h / 2, x1 = b.x, y1 = b.y + b.h / 2;
	if (e->kind == LM_VIZ_GE_LINK) { /* the node dropped -> what stands for it now: facing sides */
		float lx0 = a.x + a.w / 2, ly0 = a.y + a.h / 2, lx1 = b.x + b.w / 2, ly1 = b.y + b.h / 2;
		if (b.y + b.h < a.y) ly0 = a.y, ly1 = b.y + b.h;      /* above */
		else if (b.y > a.y + a.h) ly0 = a.y + a.h, ly1 = b.y; /* below */
		else if (b.x > a.x) lx0 = a.x + a.w, lx1 = b.x;       /* beside */
		else lx0 = a.x, lx1 = b.x + b.w;
		vz_dashed(f, lx0, ly0, lx1, ly1, 2.5f, 6, vz_th.arrow_now);
		vz_disc(f, lx1, ly1, 4, vz_th.arrow_now);
		return;
	}
	if (x1 < x0) { /* a reader to the left (state written later): leave from the producer's left */
		x0 = a.x;
		x1 = b.x + b.w;
	}
	if (e->kind == LM_VIZ_GE_OLD) vz_dashed(f, x0, y0, x1 - 1, y1, 1, 4, vz_mix(vz_th.arrow, vz_th.bg, 0.5));
	else vz_arrow(f, x0, y0, x1 - 1, y1, 1.2f, 7, vz_th.arrow);
}

static void box_text(vz_frame *f, vz_rect r, float y, const char *s, vz_color c, bool strike)
{
	char t[96];
	float pad = 0.15f * vz_text_height(f, VZ_FONT_SMALL);
	vz_font font = vz_text_fits(f, VZ_FONT_SMALL, s, r.w - 2 * pad) ? VZ_FONT_SMALL : VZ_FONT_TINY;
	snprintf(t, sizeof t, "%s", s);
	vz_text_fit(f, font, t, sizeof t, r.w - 2 * pad);
	if (!t[0]) return;
	vz_text_draw(f, r.x + r.w / 2, y, font, VZ_ALIGN_CENTER, c, t);
	if (strike) {
		float w = vz_text_width(f, font, t), h = vz_text_height(f, font);
		vz_line(f, r.x + r.w / 2 - w / 2, y + h * 0.55f, r.x + r.w / 2 + w / 2, y + h * 0.55f, 1.5f, c);
	}
}

static void draw_node(vz_frame *f, vzs_passes *p, int i, int k)
{
	pnode *n = &p->node[i];
	if (!vz_visible(f, n->r)) return;
	vz_color c = node_color(n), line = vz_mix(c, VZ_RGB(0, 0, 0), 0.35);
	bool removed = n->n.state == LM_VIZ_GS_REMOVED, folded = n->n.state == LM_VIZ_GS_FOLDED;
	float lh = p->lh, pad = 0.15f * lh;
	if (n->n.kind == LM_VIZ_GN_VALUE || folded) vz_hatch(f, n->r, c, vz_th.hatch);
	else vz_cell_fill(f, n->r, c, n->n.kind == LM_VIZ_GN_FUSED ? 2 : 1,
	                  n->n.kind == LM_VIZ_GN_FUSED ? vz_th.common : line);
	if (n->n.state == LM_VIZ_GS_REWRITTEN || folded) vz_outline(f, n->r, 2, vz_mix(vz_th.active, VZ_RGB(0, 0, 0), 0.3));
	vz_color tc = removed ? vz_th.text_dim : vz_text_on(c);
	if (n->r.h * vz_zoom(f) >= lh * 1.05f) {
		char name[96];
		if (n->n.kind == LM_VIZ_GN_VALUE) vz_fmt(name, sizeof name, "%s", !vz_zh() ? n->label
		         : strcmp(n->label, "input") == 0 ? "输入" : strcmp(n->label, "const") == 0 ? "常量"
		         : strcmp(n->label, "folded") == 0 ? "折叠常量" : strcmp(n->label, "state") == 0 ? "状态" : n->label);
		else if (n->n.kind == LM_VIZ_GN_FUSED) vz_fmt(name, sizeof name, "%s %s", vz_tr("fused:", "融合:"), n->detail);
		else vz_fmt(name, sizeof name, "%s", n->label);
		box_text(f, n->r, n->r.y + pad, name, tc, removed);
	}
	if (n->n.kind != LM_VIZ_GN_FUSED && n->n.kind != LM_VIZ_GN_OP && n->r.h * vz_zoom(f) >= lh * 2.0f)
		box_text(f, n->r, n->r.y + pad + lh * 1.0f, folded ? vz_tr("= a constant", "= 常量") : n->detail, tc, false);
	vz_cell *cell = vz_cell_add(f, n->r, kind_names[n->n.kind]);
	cell->state = state_names[n->n.state];
	cell->color = c;
	cell->index = (int32_t)n->n.id;
	cell->step = k;
	cell->tag = i;
	cell->group = n->label;
}

/* The legend, the rewrite's text, and the cost table (step 0 and this step), in screen space. */
static void draw_strip(vz_frame *f, vzs_passes *p, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	float x = f->area.x + cw, y = f->area.y + lh * 0.2f;
	x = vzs_legend(f, x, y, vz_mix(vz_th.path_a, vz_th.bg, 0.55), false, vz_tr("kernel", "内核"));
	x = vzs_legend(f, x, y, vz_th.active, false, vz_tr("this step's rewrite", "本步的改写"));
	x = vzs_legend(f, x, y, vz_mix(vz_th.idle, vz_th.bg, 0.55), false, vz_tr("removed (struck out)", "已删除（划掉）"));
	x = vzs_legend(f, x, y, vz_mix(vz_th.active, vz_th.bg, 0.45), true, vz_tr("folded into a constant", "折叠为常量"));
	x = vzs_legend(f, x, y, vz_mix(vz_th.common, vz_th.bg, 0.7), false, vz_tr("fused kernel", "融合内核"));
	x = vzs_legend(f, x, y, vz_th.idle, true, vz_tr("read from outside", "外部读入"));
	(void)x;
	const pstep *s = &p->step[k];
	char t[400];
	float x0 = f->area.x + cw, avail = f->area.w - 2 * cw;
	y += lh * 1.3f;
	if (k == 0)
		vz_fmt(t, sizeof t, "%s", vz_tr("step 0: the graph as captured, before any pass", "第 0 步：捕获的计算图，尚未运行任何优化"));
	else VZ_SNPRINTF_TR(t, sizeof t, "rewrite %d (%s, %s): %s", "改写 %d（%s，%s）：%s", k, s->pass, s->action, s->text);
	vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, avail);
	vz_text_draw(f, x0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, k ? vz_th.text : vz_th.text_dim, t);
	/* the table: a column for the row names, three for the numbers */
	y += lh * 1.3f;
	const char *heads[3] = {vz_tr("kernels", "内核数"), vz_tr("bytes read", "读字节"), vz_tr("bytes written", "写字节")};
	char src[160];
	VZ_SNPRINTF_TR(src, sizeof src, "%s, not measured", "%s，非实测", vz_tr(p->source, "由程序计数（lm.graph）"));
	float numw = 16 * cw, namew = fminf(vz_text_width(f, VZ_FONT_SMALL, src) + 2 * cw, avail - 3 * numw);
	vz_text_fit(f, VZ_FONT_SMALL, src, sizeof src, namew - cw);
	vz_text_draw(f, x0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, src);
	for (int c = 0; c < 3; c++)
		vz_text_draw(f, x0 + namew + numw * (float)(c + 1), y, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text_dim, heads[c]);
	int rows[2] = {0, k};
	for (int r = 0; r < 2; r++) {
		float yy = y + lh * 1.15f * (float)(r + 1);
		const pstep *q = &p->step[rows[r]];
		if (r == 0) vz_fmt(t, sizeof t, "%s", vz_tr("step 0 (as captured)", "第 0 步（捕获时）"));
		else if (k == 0) vz_fmt(t, sizeof t, "%s", vz_tr("this step (the same)", "本步（相同）"));
		else VZ_SNPRINTF_TR(t, sizeof t, "step %d (after %s)", "第 %d 步（%s 之后）", k, q->pass);
		vz_text_draw(f, x0, yy, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		for (int c = 0; c < 3; c++) {
			char v[32];
			float xr = x0 + namew + numw * (float)(c + 1);
			snprintf(v, sizeof v, "%.0f", q->cost[c]);
			float w = vz_text_draw(f, xr, yy, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text, v);
			vz_cell *cell = vz_cell_add(f, vz_r(xr - w, yy, w, lh), "cost");
			cell->group = cost_names[c];
			cell->state = r == 0 ? "captured" : "current";
			cell->step = rows[r];
			cell->value = q->cost[c];
			cell->has_value = true;
			cell->index = -1;
			cell->tag = -1;
		}
	}
}

void vzs_passes_draw(vzs_passes *p, vz_frame *f)
{
	int k = (int)floor(f->t + 1e-9);
	if (k < 0) k = 0;
	if (k >= p->nsteps) k = p->nsteps - 1;
	const pstep *s = &p->step[k];
	for (int i = 0; i < s->count; i++) /* fused kernels first: their ops and the edges between them on top */
		if (p->node[s->first + i].n.kind == LM_VIZ_GN_FUSED) draw_node(f, p, s->first + i, k);
	vz_layer(f);
	for (int e = 0; e < s->ecount; e++) draw_edge(f, p, &p->edge[s->efirst + e]);
	for (int i = 0; i < s->count; i++)
		if (p->node[s->first + i].n.kind != LM_VIZ_GN_FUSED) draw_node(f, p, s->first + i, k);
	for (int e = 0; e < s->ecount; e++) /* links over the boxes: they join two of them */
		if (p->edge[s->efirst + e].kind == LM_VIZ_GE_LINK) draw_edge(f, p, &p->edge[s->efirst + e]);
	vz_overlay(f);
	draw_strip(f, p, k);
	vz_world(f);
}

/* ---------------------------------------------------------------- text */

void vzs_passes_title(vzs_passes *p, char *buf, size_t cap)
{
	const pstep *a = &p->step[0], *b = &p->step[p->nsteps - 1];
	VZ_SNPRINTF_TR(buf, cap, "compiled graph (lm.graph): %d rewrites, %.0f -> %.0f kernels%s%s",
	               "编译后的计算图（lm.graph）：%d 次改写，%.0f -> %.0f 个内核%s%s", p->nsteps - 1, a->cost[0], b->cost[0],
	               p->name[0] ? " · " : "", p->name);
}

void vzs_passes_step_label(vzs_passes *p, int step, char *buf, size_t cap)
{
	if (step <= 0) {
		snprintf(buf, cap, "%s", vz_tr("the graph as captured; each step applies one rewrite of the passes",
		                               "捕获的计算图；每一步应用优化中的一次改写"));
		return;
	}
	const pstep *s = &p->step[step < p->nsteps ? step : p->nsteps - 1];
	VZ_SNPRINTF_TR(buf, cap, "rewrite %d of %d: %s (%s), %.0f kernels", "第 %d/%d 次改写：%s（%s），%.0f 个内核", step,
	               p->nsteps - 1, s->pass, s->action, s->cost[0]);
}

void vzs_passes_counters(vzs_passes *p, vz_panel *pn)
{
	for (int c = 0; c < 2; c++) {
		const pstep *s = &p->step[c ? p->nsteps - 1 : 0];
		int col = vz_panel_column(pn, c ? vz_tr("after the passes", "优化之后") : vz_tr("as captured", "捕获时"),
		                          vz_tr(p->source, "由程序计数（lm.graph）"));
		for (int i = 0; i < 3; i++) vz_panel_set(pn, col, cost_names[i], s->cost[i]);
		vz_panel_set(pn, col, "rewrites", c ? p->nsteps - 1 : 0);
	}
	/* the rewrites by pass, in the order the log first names them */
	char t[200] = "", seen[8][24];
	int nseen = 0, count[8] = {0};
	for (int k = 1; k < p->nsteps; k++) {
		int i = 0;
		while (i < nseen && strcmp(seen[i], p->step[k].pass) != 0) i++;
		if (i == nseen && nseen < 8) snprintf(seen[nseen++], sizeof seen[0], "%s", p->step[k].pass);
		if (i < nseen) count[i]++;
	}
	for (int i = 0; i < nseen; i++) vz_append(t, sizeof t, "%s%s %d", i ? ", " : "", seen[i], count[i]);
	VZ_NOTE_TR(pn, "rewrites in g.log by pass: %s", "g.log 中各优化的改写数：%s", t);
	vz_panel_note(pn, "%s", vz_tr("kernels and bytes are what one run of the program launches and moves, counted from "
	                              "the program by lm.graph (g:snapshot(k):cost()), not measured",
	                              "内核数与字节数是程序一次运行所启动和搬运的量，由 lm.graph 从程序计数"
	                              "（g:snapshot(k):cost()），非实测"));
}

void vzs_passes_describe(vzs_passes *p, vz_cell *c, char *buf, size_t cap)
{
	if (strcmp(c->kind, "cost") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s at step %d: %.0f\n%s, not measured", "%s（第 %d 步）：%.0f\n%s，非实测",
		               c->group, (int)c->step, c->value, p->source);
		return;
	}
	if (c->tag < 0 || c->tag >= p->nnodes) return;
	const pnode *n = &p->node[c->tag];
	snprintf(buf, cap, "%s", n->label);
	if (n->detail[0]) vz_append(buf, cap, "\n%s", n->detail);
	if (n->n.kind == LM_VIZ_GN_VALUE) VZ_APPEND_TR(buf, cap, "\nvalue v%lld, read from outside the program",
	                                               "\n值 v%lld，从程序外读入", (long long)n->n.id);
	else VZ_APPEND_TR(buf, cap, "\nnode #%lld (g.nodes)", "\n节点 #%lld（g.nodes）", (long long)n->n.id);
	const pstep *s = &p->step[n->n.step];
	if (n->n.state != LM_VIZ_GS_LIVE && s->text[0]) vz_append(buf, cap, "\n%s: %s", s->pass, s->text);
}
