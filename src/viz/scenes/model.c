/*
 * model.c — a model's layers (viz.show(module)): a column of boxes, one per leaf module in order,
 * with what it is ("Linear 784 -> 256") and its parameter count; a Conv2d's filters as a grid of
 * small images (blue negative, orange positive, on one scale per layer); and, while the model
 * trains under viz.watch (the examples' --viz), a histogram of each layer's activations and of its
 * parameters' gradients, updated live (CNN Explainer's overview, TensorBoard's histograms).
 *
 * The layers come from lua/lumen/viz.lua (the binding hands a list: lm_viz_model); the filters are
 * copied when the scene is made; the histograms live in live.c, so they survive switching scenes.
 * A step highlights one layer and says what its parameters are. From options alone the scene shows
 * a LeNet-like demonstration with random initial filters, and says so. A model without filters (an
 * MLP) has no filters column: the histograms take its width.
 * Read next: live.c, lua/lumen/viz.lua (viz.watch).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAXLAYERS 128
#define MAXFILT 64   /* output channels drawn per Conv2d */
#define MAXIN 8      /* input channels drawn per filter */

typedef struct mlayer {
	char name[64], kind[32], desc[96];
	int64_t params;
	/* Conv2d filters (out, in, kh, kw), as drawn: out x min(in, MAXIN) images of kh x kw */
	int fo, fi, fh, fw, fi_total, fo_total;
	double *w, wmax;
	vz_image *img;
	vz_rect box, filt_r, act_r, grad_r;
} mlayer;

typedef struct model_scene {
	char name[64], id[32];
	int64_t params;
	bool demo;
	mlayer L[MAXLAYERS];
	int n;
	bool filters;    /* some layer has filters to draw: the filters column exists */
	uint64_t seen;
	float lh;
	char fname[32];
} model_scene;

/* ---------------------------------------------------------------- create */

static void model_destroy(void *p)
{
	model_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->n; i++) {
		vz_free(s->L[i].w);
		vz_image_free(s->L[i].img);
	}
	vz_free(s);
}

/* The filters of a Conv2d weight (out, in, kh, kw), at most MAXFILT x MAXIN of them. */
static lm_status copy_filters(mlayer *l, const lm_tensor *w, const char *fname)
{
	if (lm_tensor_ndim(w) != 4) return LM_OK;
	const int64_t *sh = lm_tensor_shape(w);
	l->fo_total = (int)sh[0];
	l->fi_total = (int)sh[1];
	l->fo = (int)(sh[0] < MAXFILT ? sh[0] : MAXFILT);
	l->fi = (int)(sh[1] < MAXIN ? sh[1] : MAXIN);
	l->fh = (int)sh[2];
	l->fw = (int)sh[3];
	if (l->fh > 15 || l->fw > 15 || l->fh < 1 || l->fw < 1) { /* too large to read as small images */
		l->fo = 0;
		return LM_OK;
	}
	l->w = vz_malloc((size_t)(l->fo * l->fi * l->fh * l->fw) * sizeof *l->w);
	if (!l->w) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	l->wmax = 0;
	for (int o = 0; o < l->fo; o++)
		for (int c = 0; c < l->fi; c++)
			for (int y = 0; y < l->fh; y++)
				for (int x = 0; x < l->fw; x++) {
					int64_t idx[4] = {o, c, y, x};
					double v = 0;
					lm_tensor_get(w, idx, &v);
					l->w[((o * l->fi + c) * l->fh + y) * l->fw + x] = v;
					if (fabs(v) > l->wmax) l->wmax = fabs(v);
				}
	return LM_OK;
}

/* LeNet-5's layers, as Lumen's nn would report them, with random initial filters. */
static lm_status demo_model(model_scene *s)
{
	static const struct { const char *kind, *desc; int64_t params; int conv[4]; } d[] = {
		{"Conv2d", "1 -> 6, kernel 5, padding 2", 156, {6, 1, 5, 5}}, {"ReLU", "", 0, {0}},
		{"MaxPool2d", "kernel 2, stride 2", 0, {0}}, {"Conv2d", "6 -> 16, kernel 5", 2416, {16, 6, 5, 5}},
		{"ReLU", "", 0, {0}}, {"MaxPool2d", "kernel 2, stride 2", 0, {0}}, {"Flatten", "", 0, {0}},
		{"Linear", "400 -> 120", 48120, {0}}, {"ReLU", "", 0, {0}}, {"Linear", "120 -> 84", 10164, {0}},
		{"ReLU", "", 0, {0}}, {"Linear", "84 -> 10", 850, {0}},
	};
	snprintf(s->name, sizeof s->name, "LeNet-5 (a demonstration: random initial weights)");
	s->demo = true;
	uint64_t z = 0x9E3779B97F4A7C15ull; /* its own generator: the user's lm.manual_seed stream is left alone */
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		mlayer *l = &s->L[s->n++];
		snprintf(l->name, sizeof l->name, "%zu", i + 1);
		snprintf(l->kind, sizeof l->kind, "%s", d[i].kind);
		snprintf(l->desc, sizeof l->desc, "%s", d[i].desc);
		l->params = d[i].params;
		s->params += d[i].params;
		if (!d[i].conv[0]) continue;
		int64_t sh[4] = {d[i].conv[0], d[i].conv[1], d[i].conv[2], d[i].conv[3]};
		int64_t n = sh[0] * sh[1] * sh[2] * sh[3];
		double *v = vz_malloc((size_t)n * sizeof *v);
		if (!v) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
		for (int64_t j = 0; j < n; j++) {
			z ^= z << 13, z ^= z >> 7, z ^= z << 17;
			v[j] = (double)(z % 20001) / 10000.0 - 1.0;
		}
		lm_tensor *w = lm_from_data(v, 4, sh, LM_FLOAT64);
		vz_free(v);
		if (!w) return vz_error_prefix(0, s->fname);
		lm_status st = copy_filters(l, w, s->fname);
		lm_tensor_release(w);
		if (st != LM_OK) return st;
	}
	return LM_OK;
}

/* FNV-1a over the model's name and identity, parameter count and layers (name, kind, description,
 * count): the same model shown again, unless its layers changed. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

static uint64_t model_sig(const model_scene *s)
{
	uint64_t h = fnv(14695981039346656037ull, s->name, strlen(s->name) + 1);
	h = fnv(h, s->id, strlen(s->id) + 1);
	h = fnv(h, &s->params, sizeof s->params);
	h = fnv(h, &s->demo, sizeof s->demo);
	for (int i = 0; i < s->n; i++) {
		const mlayer *l = &s->L[i];
		h = fnv(h, l->name, strlen(l->name) + 1);
		h = fnv(h, l->kind, strlen(l->kind) + 1);
		h = fnv(h, l->desc, strlen(l->desc) + 1);
		h = fnv(h, &l->params, sizeof l->params);
	}
	return h;
}

static void *model_create(const vz_build *b)
{
	model_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	lm_status st = LM_OK;
	const lm_viz_model *m = b->model;
	if (b->nruns > 0)
		st = lm_set_error(LM_ERR_ARG, "%s: the model scene draws an nn module (viz.show(model)), not a %s result",
		                  b->fname, b->runs[0].pattern);
	else if (!m) st = demo_model(s);
	else if (m->nlayers > MAXLAYERS)
		st = lm_set_error(LM_ERR_ARG, "%s: the model has %d layers; the model scene draws at most %d", b->fname,
		                  m->nlayers, MAXLAYERS);
	else {
		snprintf(s->name, sizeof s->name, "%s", m->name);
		snprintf(s->id, sizeof s->id, "%s", m->id);
		s->params = m->params;
		for (int i = 0; i < m->nlayers && st == LM_OK; i++) {
			mlayer *l = &s->L[s->n++];
			snprintf(l->name, sizeof l->name, "%s", m->layers[i].name);
			snprintf(l->kind, sizeof l->kind, "%s", m->layers[i].kind);
			snprintf(l->desc, sizeof l->desc, "%s", m->layers[i].desc);
			l->params = m->layers[i].params;
			if (m->layers[i].weight) st = copy_filters(l, m->layers[i].weight, b->fname);
		}
	}
	/* the histograms are this model's from now on (kept when the same model is shown again) */
	if (st == LM_OK) vz_live_model_reset(s->n, model_sig(s));
	if (st != LM_OK) {
		model_destroy(s);
		return NULL;
	}
	s->seen = vz_live_version();
	return s;
}

static bool model_update(void *p)
{
	model_scene *s = p;
	if (s->seen == vz_live_version()) return false;
	s->seen = vz_live_version();
	return true;
}

static int model_steps(void *p) { return 1 + ((model_scene *)p)->n; }
static int model_variants(void *p) { (void)p; return 1; }
static const char *model_variant_name(void *p, int v) { (void)p, (void)v; return "layers"; }
static void model_set_variant(void *p, int v) { (void)p, (void)v; }

/* ---------------------------------------------------------------- layout */

static void model_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	model_scene *s = p;
	const vz_frame *f = c->metrics;
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	float top = s->lh * 3.0f, gap = s->lh * 0.35f;
	float box_w = fminf(c->w * 0.3f, 44 * vz_char_width(f, VZ_FONT_SMALL));
	s->filters = false;
	for (int i = 0; i < s->n; i++) s->filters |= s->L[i].fo > 0;
	/* the filters column only when there are filters: an empty column reads as something missing */
	float fw = s->filters ? c->w * 0.26f : 0;
	float fx = box_w + s->lh, hx = fx + fw, hw = (c->w - hx - 3 * s->lh) / 2;
	/* rows: 2.4 lines each, a Conv2d as tall as its filter grid needs (wrapped to its column) */
	float units = 0;
	for (int i = 0; i < s->n; i++) units += s->L[i].fo ? 3.2f : 1;
	float unit = fminf(s->lh * 2.5f, (c->h - top - gap * (float)s->n) / (units > 0 ? units : 1));
	float y = top;
	for (int i = 0; i < s->n; i++) {
		mlayer *l = &s->L[i];
		float h = unit * (l->fo ? 3.2f : 1);
		l->box = vz_r(0, y, box_w, h);
		l->filt_r = vz_r(fx, y, fmaxf(0, fw - s->lh), h);
		l->act_r = vz_r(hx, y, hw - s->lh * 0.5f, h);
		l->grad_r = vz_r(hx + hw, y, hw - s->lh * 0.5f, h);
		y += h + gap;
	}
	*ww = c->w;
	*wh = fmaxf(c->h, y);
}

/* ---------------------------------------------------------------- drawing */

/* The model's name as the labels say it (the demonstration's in the labels' language). */
static const char *model_name(const model_scene *s)
{
	return s->demo ? vz_tr(s->name, "LeNet-5（演示：随机初始权重）") : s->name;
}

/* The small print: the tiny font, but Chinese at 9 px blurs into blots: the small one. */
static vz_font fine_print(void) { return vz_zh() ? VZ_FONT_SMALL : VZ_FONT_TINY; }

/* Blue for negative, orange for positive weights, white at 0 (one scale per layer). */
static vz_color weight_color(double v, double vmax)
{
	double t = vmax > 0 ? v / vmax : 0;
	return t < 0 ? vz_mix(VZ_RGB(255, 255, 255), vz_th.path_a, -t) : vz_mix(VZ_RGB(255, 255, 255), vz_th.active, t);
}

/* The filters as one image: out rows wrapped into the column, in channels side by side. */
static void draw_filters(vz_frame *f, model_scene *s, mlayer *l)
{
	if (!l->fo) return;
	int per = l->fi * (l->fw + 1); /* texels across one filter's channels, a gap after each */
	float avail = l->filt_r.w, cell_h = (float)(l->fh + 1);
	int across = 1;
	for (int a = 1; a <= l->fo; a++) { /* the most filters per row that keep texels square and fit */
		int rows = (l->fo + a - 1) / a;
		float px = fminf(avail / (float)(a * per), (l->filt_r.h - s->lh) / ((float)rows * cell_h));
		float best = fminf(avail / (float)(across * per), (l->filt_r.h - s->lh) / ((float)((l->fo + across - 1) / across) * cell_h));
		if (px > best) across = a;
	}
	int rows = (l->fo + across - 1) / across, W = across * per, H = rows * (l->fh + 1);
	float px = fminf(avail / (float)W, (l->filt_r.h - s->lh) / (float)H);
	if (!l->img || l->img->w != W || l->img->h != H) {
		vz_image_free(l->img);
		l->img = vz_image_new(W, H);
		if (!l->img) return;
		for (int o = 0; o < l->fo; o++)
			for (int c = 0; c < l->fi; c++)
				for (int y = 0; y < l->fh; y++)
					for (int x = 0; x < l->fw; x++)
						vz_image_set(l->img, (o % across) * per + c * (l->fw + 1) + x, (o / across) * (l->fh + 1) + y,
						             weight_color(l->w[((o * l->fi + c) * l->fh + y) * l->fw + x], l->wmax));
		vz_image_touch(l->img);
	}
	vz_rect r = vz_r(l->filt_r.x, l->filt_r.y + s->lh, (float)W * px, (float)H * px);
	vz_draw_image(f, r, l->img);
	VZ_TEXTF_TR(f, l->filt_r.x, l->filt_r.y, fine_print(), VZ_ALIGN_LEFT, vz_th.text_dim, "%d%s filters x %d%s channels, %dx%d",
	            "%d%s 个滤波器 × %d%s 个通道，%dx%d", l->fo, l->fo < l->fo_total ? "+" : "", l->fi,
	            l->fi < l->fi_total ? "+" : "", l->fh, l->fw);
	vz_cell *c = vz_cell_add(f, r, "filters");
	c->group = l->name;
	c->rows = H;
	c->cols = W;
	c->tag = (int32_t)(l - s->L);
	c->state = "weights";
}

static void draw_hist(vz_frame *f, const model_scene *s, int li, int kind, vz_rect r)
{
	const vz_hist *h = vz_live_hist(li, kind);
	vz_color c = kind ? vz_th.highlight : vz_th.path_a;
	vz_fill(f, r, VZ_RGB(255, 255, 255));
	vz_outline(f, r, 1, vz_th.panel_line);
	vz_cell *cell = vz_cell_add(f, r, kind ? "gradients" : "activations");
	cell->group = s->L[li].name;
	cell->index = li;
	cell->tag = li;
	cell->color = VZ_RGB(255, 255, 255);
	if (!h || !h->updates) {
		cell->state = "no data";
		if (r.h * vz_zoom(f) > s->lh)
			vz_text_draw(f, r.x + r.w / 2, r.y + (r.h - s->lh) / 2, fine_print(), VZ_ALIGN_CENTER, vz_th.text_dim,
			             kind && !s->L[li].params ? vz_tr("no parameters", "无参数") : vz_tr("no data yet", "尚无数据"));
		return;
	}
	cell->state = "live";
	cell->value = h->mean;
	cell->has_value = true;
	int64_t top = 1;
	for (int b = 0; b < VZ_HIST_BINS; b++) top = h->count[b] > top ? h->count[b] : top;
	float bw = r.w / VZ_HIST_BINS, base = r.y + r.h - s->lh * 0.1f, th = r.h - s->lh * 1.25f;
	for (int b = 0; b < VZ_HIST_BINS; b++) {
		if (!h->count[b]) continue;
		float bh = fmaxf(1, th * (float)sqrt((double)h->count[b] / (double)top)); /* sqrt: the tails show */
		vz_fill(f, vz_r(r.x + (float)b * bw, base - bh, fmaxf(1, bw - 0.5f), bh), c);
	}
	if (h->lo < 0 && h->hi > 0) { /* where 0 is */
		float zx = r.x + (float)((0 - h->lo) / (h->hi - h->lo)) * r.w;
		vz_line(f, zx, r.y + s->lh, zx, r.y + r.h, 1, vz_fade(vz_th.text, 0.5));
	}
	VZ_TEXTF_TR(f, r.x + 2, r.y + 1, fine_print(), VZ_ALIGN_LEFT, vz_th.text_dim, "%.2g .. %.2g, mean %.2g, std %.2g%s",
	            "%.2g .. %.2g，均值 %.2g，标准差 %.2g%s", h->lo, h->hi, h->mean, h->std,
	            h->nonfinite ? vz_tr(" (NaN/Inf!)", "（有 NaN/Inf！）") : "");
}

/* A column's heading over the column r, and its cell (kind "column", group what it shows). */
static void column_head(vz_frame *f, const model_scene *s, vz_rect r, float y, const char *what, const char *text)
{
	vz_text_draw(f, r.x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, text);
	vz_cell *c = vz_cell_add(f, vz_r(r.x, y, r.w, s->lh), "column");
	c->group = what;
	c->tag = -1; /* no layer's */
	c->color = vz_th.bg;
}

static void model_draw(void *p, vz_frame *f)
{
	model_scene *s = p;
	int k = (int)floor(f->t + 1e-9);
	char t[160];
	VZ_TEXTF_TR(f, 0, 0, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "%s: %s parameters", "%s：%s 个参数", model_name(s),
	            vz_number(t, sizeof t, (double)s->params));
	float hy = s->lh * 1.7f;
	if (s->n) {
		if (s->filters)
			column_head(f, s, s->L[0].filt_r, hy, "filters",
			            vz_tr("Conv2d filters (- blue, + orange)", "Conv2d 滤波器（− 蓝，+ 橙）"));
		column_head(f, s, s->L[0].act_r, hy, "activations", vz_tr("activations (live)", "激活值（实时）"));
		column_head(f, s, s->L[0].grad_r, hy, "gradients", vz_tr("parameter gradients (live)", "参数梯度（实时）"));
	}
	for (int i = 0; i < s->n; i++) {
		mlayer *l = &s->L[i];
		if (!vz_visible(f, vz_r(0, l->box.y, 1e6f, l->box.h))) continue;
		bool cur = i == k - 1;
		vz_color c = cur ? vz_th.active : l->params ? vz_mix(vz_th.common, vz_th.bg, 0.6) : vz_th.idle;
		vz_cell_fill(f, l->box, c, 1, vz_mix(c, VZ_RGB(0, 0, 0), 0.3));
		char pc[32];
		float pad = s->lh * 0.4f, y1 = l->box.y + (fminf(l->box.h, s->lh * 2.5f) - s->lh) / 2;
		float cw = l->params ? vz_text_width(f, VZ_FONT_SMALL, vz_number(pc, sizeof pc, (double)l->params)) + pad : 0;
		bool two = l->box.h >= s->lh * 2.4f && l->desc[0]; /* the description on a line of its own */
		snprintf(t, sizeof t, two ? "%s %s" : "%s %s %s", l->name, l->kind, l->desc);
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, l->box.w - 2 * pad - cw);
		vz_text_draw(f, l->box.x + pad, two ? l->box.y + pad : y1, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_text_on(c), t);
		if (two) {
			snprintf(t, sizeof t, "%s", l->desc);
			vz_text_fit(f, VZ_FONT_TINY, t, sizeof t, l->box.w - 2 * pad);
			vz_text_draw(f, l->box.x + pad, l->box.y + pad + s->lh * 1.15f, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_text_on(c), t);
		}
		if (l->params)
			vz_text_draw(f, l->box.x + l->box.w - pad, two ? l->box.y + pad : y1, VZ_FONT_SMALL, VZ_ALIGN_RIGHT,
			             vz_text_on(c), pc);
		vz_cell *cell = vz_cell_add(f, l->box, "layer");
		cell->group = l->name;
		cell->state = cur ? "active" : l->params ? "parameters" : "no parameters";
		cell->color = c;
		cell->index = i;
		cell->value = (double)l->params;
		cell->has_value = true;
		cell->tag = i;
		draw_filters(f, s, l);
		draw_hist(f, s, i, 0, l->act_r);
		draw_hist(f, s, i, 1, l->grad_r);
	}
}

/* ---------------------------------------------------------------- text */

static void model_title(void *p, char *buf, size_t cap)
{
	model_scene *s = p;
	char n[32];
	VZ_SNPRINTF_TR(buf, cap, "model: %s, %d layers, %s parameters", "模型：%s，%d 层，%s 个参数", model_name(s), s->n,
	               vz_number(n, sizeof n, (double)s->params));
}

static void model_step_label(void *p, int step, char *buf, size_t cap)
{
	model_scene *s = p;
	if (step == 0 || step > s->n) {
		snprintf(buf, cap, "%s",
		         s->demo ? vz_tr("viz.show(model) draws your model; viz.watch(model) adds live histograms while it trains",
		                         "viz.show(model) 画出你的模型；viz.watch(model) 在训练时加上实时直方图")
		                 : vz_tr("the layers in the order forward runs them; viz.watch(model) adds live histograms",
		                         "各层按 forward 运行的顺序排列；viz.watch(model) 加上实时直方图"));
		return;
	}
	const mlayer *l = &s->L[step - 1];
	char n[32];
	VZ_SNPRINTF_TR(buf, cap, "layer %s: %s%s%s, %s parameters", "层 %s：%s%s%s，%s 个参数", l->name, l->kind,
	               l->desc[0] ? " " : "", l->desc, vz_number(n, sizeof n, (double)l->params));
	if (l->fo)
		VZ_APPEND_TR(buf, cap, " (%d filters of %d x %d x %d, and %d biases)", "（%d 个 %d × %d × %d 的滤波器，以及 %d 个偏置）",
		             l->fo_total, l->fi_total, l->fh, l->fw, l->fo_total);
}

static void model_counters(void *p, vz_panel *pn)
{
	model_scene *s = p;
	int col = vz_panel_column(pn, vz_tr("parameters", "参数"), s->demo ? vz_tr("LeNet-5's layer sizes", "LeNet-5 的层尺寸")
	                                                                 : vz_tr("the module's tensors", "模块的张量"));
	for (int i = 0; i < s->n && pn->nrows < VZ_PANEL_ROWS; i++)
		if (s->L[i].params) {
			char name[40];
			snprintf(name, sizeof name, "%.16s %.20s", s->L[i].name, s->L[i].kind);
			vz_panel_set(pn, col, name, (double)s->L[i].params);
		}
	vz_panel_set(pn, col, "total", (double)s->params);
	VZ_NOTE_TR(pn, "histograms (viz.watch): the last batch's outputs and parameter gradients, up to %d values each; "
	           "bars on a square-root scale", "直方图（viz.watch）：最后一个批次的输出和参数梯度，各取至多 %d 个值；"
	           "柱高按平方根缩放", VZ_HIST_SAMPLE);
}

static void model_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	model_scene *s = p;
	if (strcmp(c->kind, "column") == 0) {
		snprintf(buf, cap, "%s",
		         strcmp(c->group, "filters") == 0
		             ? vz_tr("each Conv2d's filters as small images (a row per output channel, its input channels side by "
		                     "side): blue negative, orange positive, one scale per layer",
		                     "每个 Conv2d 的滤波器画成小图（每个输出通道一行，输入通道并排）：蓝为负，橙为正，每层一个色标")
		         : strcmp(c->group, "activations") == 0
		             ? vz_tr("each layer's outputs for the last batch, as a histogram (viz.watch(model) records "
		                     "them while it trains)",
		                     "每层在最后一个批次的输出，画成直方图（训练时由 viz.watch(model) 记录）")
		             : vz_tr("the gradients of each layer's parameters after backward, as a histogram (watcher:gradients())",
		                     "backward 之后每层参数的梯度，画成直方图（watcher:gradients()）"));
		return;
	}
	if (c->tag < 0 || c->tag >= s->n) return;
	const mlayer *l = &s->L[c->tag];
	char n[32];
	if (strcmp(c->kind, "filters") == 0) {
		int per = l->fi * (l->fw + 1), across = c->cols / (per ? per : 1);
		int o = (c->row / (l->fh + 1)) * (across ? across : 1) + c->col / (per ? per : 1), ch = (c->col % per) / (l->fw + 1);
		int y = c->row % (l->fh + 1), x = (c->col % per) % (l->fw + 1);
		if (o < l->fo && y < l->fh && x < l->fw)
			VZ_SNPRINTF_TR(buf, cap, "layer %s filter %d, input channel %d, (%d, %d): weight %.4g",
			               "层 %s 滤波器 %d，输入通道 %d，(%d, %d)：权重 %.4g", l->name, o + 1, ch + 1, y + 1, x + 1,
			               l->w[((o * l->fi + ch) * l->fh + y) * l->fw + x]);
		else VZ_SNPRINTF_TR(buf, cap, "layer %s: %d filters", "层 %s：%d 个滤波器", l->name, l->fo_total);
		c->rows = c->cols = -1;
		return;
	}
	if (strcmp(c->kind, "layer") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "%s %s %s\n%s parameters", "%s %s %s\n%s 个参数", l->name, l->kind, l->desc,
		               vz_number(n, sizeof n, (double)l->params));
		return;
	}
	bool grads = strcmp(c->kind, "gradients") == 0, zh = vz_zh();
	const vz_hist *h = vz_live_hist(c->tag, grads);
	const char *what = zh ? (grads ? "梯度" : "激活值") : c->kind;
	if (!h || !h->updates) {
		if (zh) snprintf(buf, cap, "层 %s 的%s：尚未记录（训练时用 viz.watch(model)）", l->name, what);
		else snprintf(buf, cap, "%s of layer %s: nothing recorded yet (viz.watch(model) while it trains)", what, l->name);
		return;
	}
	if (zh)
		snprintf(buf, cap, "层 %s 的%s（%lld 个值，第 %llu 次更新）\n范围 %.4g .. %.4g，均值 %.4g，标准差 %.4g", l->name, what,
		         (long long)h->n, (unsigned long long)h->updates, h->lo, h->hi, h->mean, h->std);
	else
		snprintf(buf, cap, "%s of layer %s (%lld values, update %llu)\nrange %.4g .. %.4g, mean %.4g, std %.4g", what,
		         l->name, (long long)h->n, (unsigned long long)h->updates, h->lo, h->hi, h->mean, h->std);
	if (h->nonfinite) VZ_APPEND_TR(buf, cap, "\n%lld NaN/Inf values", "\n%lld 个 NaN/Inf 值", (long long)h->nonfinite);
}

const vz_scene_class vz_scene_model = {
	.name = "model",
	.summary = "an nn model's layers with parameter counts, Conv2d filters as images, live histograms while training",
	.patterns = "",
	.options = NULL,
	.create = model_create,
	.destroy = model_destroy,
	.steps = model_steps,
	.variants = model_variants,
	.variant_name = model_variant_name,
	.set_variant = model_set_variant,
	.layout = model_layout,
	.draw = model_draw,
	.title = model_title,
	.step_label = model_step_label,
	.counters = model_counters,
	.update = model_update,
	.describe = model_describe,
};
