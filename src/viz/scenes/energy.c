/*
 * energy.c — the energy scene: where lumen.dlp's picojoules go, per level of the memory hierarchy
 * (AICS chapter 7; Eyeriss's argument): for each run (up to six side by side: OS against WS against
 * IS on one layer, say) a bar per level — the MACs, the register files, the hops between PEs, the
 * SRAM scratchpads, DRAM — of count x energy per access, with its share of the run's total, and a
 * bar of the shares. Steps reveal the levels from the MAC outwards; the last one says whether data
 * movement (every level but the MAC) takes most of the energy, computed from the numbers shown,
 * run by run. The counts are the report's (SCALE-Sim's counting), the energy per access the
 * table's (r:energy(): dlp.energy_table, which names its source).
 * viz.show('energy', r) or viz.show('energy', {r1, r2, ...}); without data a 16 x 16 array's three
 * dataflows on a 16 x 16 x 16 convolution with 32 filters of 3 x 3, run here by lm_dlp_run and
 * priced with dlp.energy_table's numbers (DEMO_TABLE below; tests/viz/test_dlp_scenes.lua checks
 * them against r:energy()).
 * Read next: lua/lumen/dlp.lua (Report:energy), systolic.c, docs/viz.md ("energy").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_RUNS 6
#define NLEVELS LM_VIZ_DLP_LEVELS

enum { L_MAC, L_REGISTER, L_PE_HOP, L_SRAM, L_DRAM };
static const char *const level_keys[NLEVELS] = {"mac", "register", "pe_hop", "sram", "dram"};
static const char *const run_groups[MAX_RUNS] = {"a", "b", "c", "d", "e", "f"};

/* dlp.energy_table (lua/lumen/dlp.lua): pJ per access of an 8-bit word at 45 nm, and its source. */

typedef struct en_run {
	char label[96], name[48], given[48], source[200]; /* label: made again at each entry (relabel) */
	lm_dlp_report rep;
	int64_t rows, cols, bandwidth;
	int dataflow;
	bool user;
	double pj[NLEVELS], counts[NLEVELS], total;
} en_run;

typedef struct en_scene {
	en_run run[MAX_RUNS];
	vz_dlp_facets facets[MAX_RUNS];
	int nruns;
	bool demo;
	double max_pj;
	float lh, tl, cw, label_w, col_w, top, row_h, share_y, verdict_y, source_y;
} en_scene;

static void en_destroy(void *p) { vz_free(p); }

static bool take_run(en_run *r, const lm_viz_dlp *d, int which, const char *fname)
{
	r->rep = d->report;
	r->rows = d->config.rows, r->cols = d->config.cols, r->dataflow = (int)d->config.dataflow;
	r->bandwidth = d->config.bandwidth, r->user = d->config.user_bandwidth != 0;
	snprintf(r->name, sizeof r->name, "%s", d->name ? d->name : "layer");
	snprintf(r->given, sizeof r->given, "%s", d->label ? d->label : "");
	snprintf(r->label, sizeof r->label, "%s %d%s%s%s", "run", which + 1, r->given[0] ? " (" : "", r->given, r->given[0] ? ")" : "");
	snprintf(r->source, sizeof r->source, "%s", d->energy_source && d->energy_source[0] ? d->energy_source : "?");
	r->total = 0;
	for (int k = 0; k < NLEVELS; k++) {
		if (!(d->pj[k] >= 0) || !isfinite(d->pj[k]) || !(d->counts[k] >= 0)) {
			lm_set_error(LM_ERR_ARG, "%s: the energy scene: %s has %s = %g pJ from %g accesses: not a non-negative number", fname,
			             r->label, level_keys[k], d->pj[k], d->counts[k]);
			return false;
		}
		r->pj[k] = d->pj[k], r->counts[k] = d->counts[k], r->total += d->pj[k];
	}
	return true;
}

/* The runs' labels in the labels' language (what differs between them: vz_dlp_label). */
static void relabel(en_scene *s)
{
	for (int i = 0; i < s->nruns; i++) {
		const en_run *r = &s->run[i];
		s->facets[i] = (vz_dlp_facets){r->bandwidth, r->rows, r->cols, r->dataflow, r->user, r->name, r->given};
	}
	for (int i = 0; i < s->nruns; i++)
		vz_dlp_label(s->run[i].label, sizeof s->run[i].label, s->facets, s->nruns, i, VZ_DLP_DATAFLOW);
}

/* The demonstration: one layer on a 16 x 16 array in each dataflow, priced as r:energy() does. */
static bool demo_runs(en_scene *s, const char *fname)
{
	static const lm_dlp_dataflow dfs[3] = {LM_DLP_OS, LM_DLP_WS, LM_DLP_IS};
	lm_dlp_layer l = {.ifmap_h = 16, .ifmap_w = 16, .filter_h = 3, .filter_w = 3, .channels = 16, .filters = 32, .stride = 1};
	for (int i = 0; i < 3; i++) {
		lm_viz_dlp d = {.layer = l, .name = "conv", .energy_source = lm_dlp_energy_default.source};
		d.config = vz_dlp_config(16, 16, dfs[i], 10);
		if (lm_dlp_run(&d.config, &l, &d.report, NULL) != LM_OK) {
			vz_error_prefix(0, fname);
			return false;
		}
		lm_dlp_energy(&d.report, NULL, d.counts, d.pj);
		if (!take_run(&s->run[i], &d, i, fname)) return false;
		s->nruns++;
	}
	return true;
}

static void *en_create(const vz_build *b)
{
	en_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	s->demo = !b->dlp;
	if (b->dlp) {
		for (int i = 0; i < b->ndlp && i < MAX_RUNS; i++, s->nruns++)
			if (!take_run(&s->run[i], &b->dlp[i], i, b->fname)) goto fail;
	} else if (!demo_runs(s, b->fname)) {
		goto fail;
	}
	for (int i = 0; i < s->nruns; i++)
		for (int k = 0; k < NLEVELS; k++) s->max_pj = fmax(s->max_pj, s->run[i].pj[k]);
	if (!(s->max_pj > 0)) s->max_pj = 1;
	return s;
fail:
	en_destroy(s);
	return NULL;
}

static int en_steps(void *p) { (void)p; return NLEVELS + 2; }
static int en_variants(void *p) { (void)p; return 1; }
static const char *en_variant_name(void *p, int v) { (void)p, (void)v; return "levels"; }
static void en_set_variant(void *p, int v) { (void)p, (void)v; }

static const char *level_name(int k)
{
	switch (k) {
	case L_MAC: return vz_tr("MAC", "乘加 MAC");
	case L_REGISTER: return vz_tr("register file", "寄存器堆");
	case L_PE_HOP: return vz_tr("PE to PE", "PE 间传递");
	case L_SRAM: return "SRAM";
	default: return "DRAM";
	}
}

static vz_color level_color(int k)
{
	static const int oi[NLEVELS] = {VZ_OI_ORANGE, VZ_OI_YELLOW, VZ_OI_SKY, VZ_OI_BLUE, VZ_OI_PURPLE};
	return vz_okabe_ito[oi[k]];
}

/* Picojoules in the unit that reads best ("3.767 µJ"). */
static char *joules(char *buf, size_t cap, double pj)
{
	static const char *const units[] = {"pJ", "nJ", "µJ", "mJ", "J"};
	int u = 0;
	while (fabs(pj) >= 1000 && u < 4) pj /= 1000, u++;
	snprintf(buf, cap, "%.4g %s", pj, units[u]);
	return buf;
}

static double share(const en_run *r, int k) { return r->total > 0 ? r->pj[k] / r->total : 0; }

static void en_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	en_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 380 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->tl = vz_text_height(f, VZ_FONT_TINY);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = s->cw * 17;
	s->col_w = (W - s->label_w) / (float)s->nruns;
	s->top = s->lh * 2.6f;
	s->verdict_y = H - s->lh * 2.4f;
	s->source_y = H - s->lh * 1.1f;
	s->share_y = s->verdict_y - s->lh * 2.6f;
	s->row_h = (s->share_y - s->top - s->lh * 0.4f) / NLEVELS;
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f)
{
	int k = (int)floor(f->t + 1e-9);
	return k < 0 ? 0 : k > NLEVELS + 1 ? NLEVELS + 1 : k;
}

/* The verdict, from the numbers: the share of every level but the MAC, run by run. */
static void verdict(const en_scene *s, char *buf, size_t cap)
{
	double lo = 1, hi = 0, dlo = 1, dhi = 0;
	int over = 0, largest_same = -1;
	bool same = true;
	char who_over[160] = "", who_under[160] = "";
	for (int i = 0; i < s->nruns; i++) {
		const en_run *r = &s->run[i];
		double m = 1 - share(r, L_MAC);
		lo = fmin(lo, m), hi = fmax(hi, m);
		int big = 0;
		for (int k = 1; k < NLEVELS; k++)
			if (r->pj[k] > r->pj[big]) big = k;
		if (largest_same < 0) largest_same = big;
		else if (largest_same != big) same = false;
		dlo = fmin(dlo, share(r, big)), dhi = fmax(dhi, share(r, big));
		if (m > 0.5) over++, vz_append(who_over, sizeof who_over, "%s%s", who_over[0] ? ", " : "", r->label);
		else vz_append(who_under, sizeof who_under, "%s%s", who_under[0] ? ", " : "", r->label);
	}
	char range[64], big[160] = "";
	if (hi - lo < 0.0005) snprintf(range, sizeof range, "%.1f%%", 100 * hi);
	else snprintf(range, sizeof range, "%.1f%% - %.1f%%", 100 * lo, 100 * hi);
	if (same && largest_same >= 0)
		VZ_SNPRINTF_TR(big, sizeof big, "; the largest level: %s (%.1f%% - %.1f%%)", "；最大的一级：%s（%.1f%% - %.1f%%）",
		               level_name(largest_same), 100 * dlo, 100 * dhi);
	if (over == s->nruns)
		VZ_SNPRINTF_TR(buf, cap, "moving data (registers, PE hops, SRAM, DRAM) takes %s of the energy%s: data movement dominates%s",
		               "搬运数据（寄存器、PE 间、SRAM、DRAM）占能耗的 %s%s：数据搬运占主导%s", range,
		               s->nruns > 1 ? vz_tr(" in every run", "（每个运行都是）") : "", big);
	else if (over == 0)
		VZ_SNPRINTF_TR(buf, cap, "moving data takes %s of the energy, the MACs the rest: here the arithmetic, not data movement, "
		               "dominates%s", "搬运数据占能耗的 %s，其余是 MAC：这里占主导的是计算，不是数据搬运%s", range, big);
	else
		VZ_SNPRINTF_TR(buf, cap, "moving data takes %s of the energy: more than half in %s, not in %s", "搬运数据占能耗的 %s："
		               "在 %s 中超过一半，在 %s 中没有", range, who_over, who_under);
}

static void draw_level(vz_frame *f, en_scene *s, int i, int k, int step)
{
	const en_run *r = &s->run[i];
	char t[160], e[48], n[48];
	float x = s->label_w + (float)i * s->col_w + s->cw, y = s->top + (float)k * s->row_h, w = s->col_w - s->cw * 2;
	bool shown = step > k;
	vz_color col = level_color(k);
	float bh = fminf(s->lh * 1.2f, s->row_h * 0.45f);
	vz_rect track = vz_r(x, y + s->lh * 0.1f, w, bh);
	vz_fill(f, track, vz_th.pending);
	vz_rect bar = vz_r(x, track.y, (float)(r->pj[k] / s->max_pj) * w, bh);
	if (shown) {
		vz_bang_bar(f, bar, col, vz_th.bg);
		if (step == k + 1) vz_outline(f, vz_r(x - 1, track.y - 1, fmaxf(bar.w, 2) + 2, bh + 2), 2, vz_th.highlight);
		VZ_SNPRINTF_TR(t, sizeof t, "%s (%.1f%%) = %s x %g pJ", "%s（%.1f%%）= %s × %g pJ", joules(e, sizeof e, r->pj[k]),
		               100 * share(r, k), vzs_short(n, sizeof n, r->counts[k]), r->counts[k] > 0 ? r->pj[k] / r->counts[k] : 0.0);
		if (!vz_text_fits(f, VZ_FONT_SMALL, t, w))
			VZ_SNPRINTF_TR(t, sizeof t, "%s (%.1f%%)", "%s（%.1f%%）", joules(e, sizeof e, r->pj[k]), 100 * share(r, k));
	} else {
		VZ_SNPRINTF_TR(t, sizeof t, "%s accesses", "%s 次访问", vzs_short(n, sizeof n, r->counts[k]));
	}
	vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, w);
	vz_text_draw(f, x, track.y + bh + s->lh * 0.15f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, shown ? vz_th.text : vz_th.text_dim, t);
	vz_cell *c = vz_cell_add(f, vz_r(x, y, w, s->row_h * 0.95f), "level");
	c->row = i, c->col = k, c->index = i * NLEVELS + k, c->group = run_groups[i], c->state = shown ? level_keys[k] : "hidden";
	c->color = shown ? col : vz_th.pending, c->value = r->pj[k], c->has_value = true, c->step = step;
}

static void draw_share(vz_frame *f, en_scene *s, int i, int step)
{
	const en_run *r = &s->run[i];
	float x = s->label_w + (float)i * s->col_w + s->cw, w = s->col_w - s->cw * 2, h = s->lh * 1.3f, y = s->share_y;
	vz_fill(f, vz_r(x, y, w, h), vz_th.pending);
	float at = x;
	for (int k = 0; k < NLEVELS && step > k; k++) {
		float sw = (float)share(r, k) * w;
		if (sw <= 0) continue;
		vz_rect sr = vz_r(at, y, sw, h);
		vz_bang_bar(f, sr, level_color(k), vz_th.bg);
		vz_cell *c = vz_cell_add(f, sr, "share");
		c->row = i, c->col = k, c->index = i * NLEVELS + k, c->group = run_groups[i], c->state = level_keys[k];
		c->color = level_color(k), c->value = 100 * share(r, k), c->has_value = true;
		at += sw;
	}
	if (step > NLEVELS) { /* the MAC against the rest */
		char t[64];
		float mx = x + (float)share(r, L_MAC) * w;
		vz_line(f, mx, y - 3, mx, y + h + 3, 2, vz_th.text);
		VZ_SNPRINTF_TR(t, sizeof t, "data movement %.1f%%", "数据搬运 %.1f%%", 100 * (1 - share(r, L_MAC)));
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, w);
		vz_text_draw(f, x, y + h + s->lh * 0.15f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
	}
}

static void en_draw(void *p, vz_frame *f)
{
	en_scene *s = p;
	relabel(s);
	int step = step_of(f);
	char t[240], e[48];
	for (int i = 0; i < s->nruns; i++) { /* column heads: the run and its total */
		const en_run *r = &s->run[i];
		float x = s->label_w + (float)i * s->col_w + s->cw, w = s->col_w - s->cw * 2;
		snprintf(t, sizeof t, "%s", r->label);
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, w);
		vz_text_draw(f, x, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		VZ_SNPRINTF_TR(t, sizeof t, "%lldx%lld %s, %s: %s in all", "%lldx%lld %s，%s：共 %s", (long long)r->rows, (long long)r->cols,
		               vz_dlp_dataflow(r->dataflow), r->name, step > NLEVELS ? joules(e, sizeof e, r->total) : "?");
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, w);
		vz_text_draw(f, x, s->lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, t);
		vz_cell *c = vz_cell_add(f, vz_r(x, 0, w, s->lh * 2.2f), "run");
		c->row = i, c->group = run_groups[i], c->state = "run", c->color = vz_th.bg, c->value = r->total, c->has_value = true;
	}
	for (int k = 0; k < NLEVELS; k++) { /* row heads: the level and its energy per access */
		float y = s->top + (float)k * s->row_h;
		vz_rect sw = vz_r(0, y + s->lh * 0.15f, s->lh * 0.9f, s->lh * 0.9f);
		vz_fill(f, sw, level_color(k));
		vz_text_draw(f, s->lh * 1.3f, y + s->lh * 0.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, step > k ? vz_th.text : vz_th.text_dim, level_name(k));
		double per = s->run[0].counts[k] > 0 ? s->run[0].pj[k] / s->run[0].counts[k] : 0;
		VZ_SNPRINTF_TR(t, sizeof t, "%g pJ each", "每次 %g pJ", per);
		vz_text_draw(f, s->lh * 1.3f, y + s->lh * 1.25f, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
		for (int i = 0; i < s->nruns; i++) draw_level(f, s, i, k, step);
	}
	vz_text_draw(f, 0, s->share_y + s->lh * 0.15f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, step > 0 ? vz_th.text : vz_th.text_dim,
	             vz_tr("shares", "占比"));
	for (int i = 0; i < s->nruns; i++) draw_share(f, s, i, step);
	if (step > NLEVELS) {
		verdict(s, t, sizeof t);
		char cut[240];
		snprintf(cut, sizeof cut, "%s", t);
		vz_text_fit(f, VZ_FONT_SMALL, cut, sizeof cut, s->label_w + s->col_w * (float)s->nruns - s->cw);
		vz_text_draw(f, 0, s->verdict_y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.highlight, cut);
		vz_cell *c = vz_cell_add(f, vz_r(0, s->verdict_y, s->label_w + s->col_w * (float)s->nruns, s->lh * 1.1f), "verdict");
		c->state = "verdict", c->color = vz_th.bg;
	}
	VZ_SNPRINTF_TR(t, sizeof t, "counts: %s; pJ per access: %s", "计数：%s；每次访问的 pJ：%s", vz_dlp_source(s->demo), s->run[0].source);
	vz_text_fit(f, VZ_FONT_TINY, t, sizeof t, s->label_w + s->col_w * (float)s->nruns - s->cw);
	vz_text_draw(f, 0, s->source_y, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
	vz_cell *c = vz_cell_add(f, vz_r(0, s->source_y, s->label_w + s->col_w * (float)s->nruns, s->tl), "source");
	c->state = "source", c->color = vz_th.bg;
}

static void en_title(void *p, char *buf, size_t cap)
{
	en_scene *s = p;
	relabel(s);
	char runs[240] = "", e[48];
	for (int i = 0; i < s->nruns; i++)
		vz_append(runs, sizeof runs, "%s%s %s", i ? ", " : "", s->run[i].label, joules(e, sizeof e, s->run[i].total));
	VZ_SNPRINTF_TR(buf, cap, "energy per level: %s; counts %s, pJ per access from the energy table", "各级能耗：%s；计数%s，每次访问的 pJ 来自能耗表",
	               runs, vz_dlp_source(s->demo));
}

static void en_step_label(void *p, int step, char *buf, size_t cap)
{
	en_scene *s = p;
	relabel(s);
	if (step <= 0) {
		VZ_SNPRINTF_TR(buf, cap, "what is counted: each level's accesses (%d runs), each priced by the table", "计数的内容：每一级的访问次数"
		               "（%d 个运行），按能耗表计价", s->nruns);
		return;
	}
	if (step > NLEVELS) {
		verdict(s, buf, cap);
		return;
	}
	int k = step - 1;
	char e[48], parts[200] = "";
	for (int i = 0; i < s->nruns && i < 4; i++)
		vz_append(parts, sizeof parts, "%s%s %s (%.1f%%)", i ? ", " : "", s->run[i].label, joules(e, sizeof e, s->run[i].pj[k]),
		          100 * share(&s->run[i], k));
	static const char *const what_en[NLEVELS] = {"one multiply-accumulate each", "3 register accesses a MAC (two operands, the sum)",
	                                             "2 hops between PEs a MAC", "the array's SRAM reads and writes and the DMA's fills and drains",
	                                             "the DMA's words"};
	static const char *const what_zh[NLEVELS] = {"每次乘加一次", "每次 MAC 访问寄存器 3 次（两个操作数、累加和）", "每次 MAC 在 PE 间传递 2 次",
	                                             "阵列对 SRAM 的读写与 DMA 的填充和写回", "DMA 搬运的字"};
	VZ_SNPRINTF_TR(buf, cap, "%s: %s: %s", "%s：%s：%s", level_name(k), vz_tr(what_en[k], what_zh[k]), parts);
}

static void en_counters(void *p, vz_panel *pn)
{
	en_scene *s = p;
	relabel(s);
	for (int i = 0; i < s->nruns; i++) {
		const en_run *r = &s->run[i];
		/* more than three columns: a short source each (the panel is a column of 30 characters a source), the whole below */
		int c = vz_panel_column(pn, r->label, s->nruns > 3 ? vz_tr("emulated: lumen.dlp", "模拟：lumen.dlp") : vz_dlp_source(s->demo));
		const struct { const char *name; double v; } rows[] = {
			{"total_pj", r->total}, {"mac_pj", r->pj[L_MAC]}, {"register_pj", r->pj[L_REGISTER]}, {"pe_hop_pj", r->pj[L_PE_HOP]},
			{"sram_pj", r->pj[L_SRAM]}, {"dram_pj", r->pj[L_DRAM]}, {"movement_share", 100 * (1 - share(r, L_MAC))},
			{"macs", r->counts[L_MAC]}, {"sram_accesses", r->counts[L_SRAM]}, {"dram_words", r->counts[L_DRAM]},
		};
		for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) vz_panel_set(pn, c, rows[k].name, rows[k].v);
	}
	if (s->nruns > 3) VZ_NOTE_TR(pn, "counts: %s", "计数：%s", vz_dlp_source(s->demo));
	for (int i = 0; i < s->nruns; i++) { /* each table's source once */
		bool seen = false;
		for (int j = 0; j < i; j++) seen = seen || strcmp(s->run[j].source, s->run[i].source) == 0;
		if (!seen) VZ_NOTE_TR(pn, "pJ per access: %s", "每次访问的 pJ：%s", s->run[i].source);
	}
	vz_panel_note(pn, "%s", vz_tr("*_pj: count x pJ per access (r:energy(); 3 register accesses and 2 PE hops a MAC); movement_share: "
	                              "every level but the MAC, in percent", "*_pj：次数 × 每次的 pJ（r:energy()；每次 MAC 访问寄存器 3 次、"
	                              "在 PE 间传递 2 次）；movement_share：除 MAC 以外各级之和，百分比"));
}

static void en_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	en_scene *s = p;
	relabel(s);
	char e[48], n[48], tot[48];
	if (strcmp(c->kind, "verdict") == 0) {
		verdict(s, buf, cap);
		return;
	}
	if (strcmp(c->kind, "source") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "counts: %s; pJ per access: %s", "计数：%s；每次访问的 pJ：%s", vz_dlp_source(s->demo), s->run[0].source);
		return;
	}
	if (c->row < 0 || c->row >= s->nruns) return;
	const en_run *r = &s->run[c->row];
	if (strcmp(c->kind, "run") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s: %lldx%lld %s on %s: %s in all, %lld cycles", "%s：%lldx%lld %s，%s：共 %s，%lld 个周期", r->label,
		               (long long)r->rows, (long long)r->cols, vz_dlp_dataflow(r->dataflow), r->name, joules(e, sizeof e, r->total),
		               (long long)r->rep.total_cycles);
		return;
	}
	if (c->col < 0 || c->col >= NLEVELS) return;
	int k = c->col;
	VZ_SNPRINTF_TR(buf, cap, "%s, %s: %s accesses x %g pJ = %s, %.1f%% of the run's %s (pJ per access: %s)", "%s，%s：%s 次访问 × %g pJ = %s，"
	               "占该运行的 %.1f%%（共 %s）（每次访问的 pJ：%s）", r->label, level_name(k), vzs_short(n, sizeof n, r->counts[k]),
	               r->counts[k] > 0 ? r->pj[k] / r->counts[k] : 0.0, joules(e, sizeof e, r->pj[k]), 100 * share(r, k),
	               joules(tot, sizeof tot, r->total), r->source);
}

static const vz_option en_options[] = {
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_energy = {
	.name = "energy",
	.summary = "lumen.dlp: where the picojoules go, per level (MAC, registers, PE hops, SRAM, DRAM), for one report or "
	           "several side by side, and whether data movement dominates (viz.show('energy', report or {r1, r2, ...}))",
	.patterns = "",
	.options = en_options,
	.create = en_create,
	.destroy = en_destroy,
	.steps = en_steps,
	.variants = en_variants,
	.variant_name = en_variant_name,
	.set_variant = en_set_variant,
	.layout = en_layout,
	.draw = en_draw,
	.title = en_title,
	.step_label = en_step_label,
	.counters = en_counters,
	.describe = en_describe,
};
