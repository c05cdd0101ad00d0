/*
 * gan2d.c — a GAN on 2-D points, as GAN Lab shows one: the real points and the generated ones in
 * the data plane, the discriminator's decision surface under them as a heat map (its probability
 * that a point is real), the generator's grid (a k x k grid of z mapped by G: how it bends the
 * noise into the data), and both losses over the training steps with the yardstick (the JS
 * divergence on a grid, lumen/generative.lua).
 * Data: viz.show('gan2d', gan) from a gen.GAN2D that is training (lm_viz_gan2d: everything copied,
 * labelled as computed in this process at its step), or without data a demonstration state (a
 * generator collapsed onto two of the ring's eight modes, an analytic surface), labelled as such.
 * Steps add the layers: the real points, the generated ones, D's surface, G's grid (viz.show of a
 * GAN opens at the last); Tab chooses the layers shown: everything, the points alone, the
 * discriminator, the generator. Read next: lua/lumen/generative.lua (GAN2D), docs/viz.md ("gan2d").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_POINTS 4096
#define MAX_BINS 64
#define MAX_WARP 32
#define MAX_LOSS 4096

enum { VIEW_ALL, VIEW_POINTS, VIEW_D, VIEW_G, VIEW_COUNT };

typedef struct gan_scene {
	int nreal, nfake, bins, k, nloss, steps;
	double *real, *fake, *surface, *warp, *dloss, *gloss;
	double js, lo, hi;
	char loss_kind[32];
	char source[200];
	bool demo;
	int view;
	float plot, lh, cw, chart_x, chart_w, chart_h;
} gan_scene;

static void gan_destroy(void *p)
{
	gan_scene *s = p;
	if (!s) return;
	vz_free(s->real);
	vz_free(s->fake);
	vz_free(s->surface);
	vz_free(s->warp);
	vz_free(s->dloss);
	vz_free(s->gloss);
	vz_free(s);
}

static double *copy(const double *src, size_t n)
{
	double *d = vz_calloc(n ? n : 1, sizeof *d);
	if (d && src && n) memcpy(d, src, n * sizeof *d);
	return d;
}

/* The demonstration: the ring's 8 modes (radius 2), a generator that found 2 of them. */
static bool demo(gan_scene *s)
{
	s->demo = true;
	s->nreal = 400, s->nfake = 200, s->bins = 32, s->k = 12, s->nloss = 200, s->steps = 200;
	s->lo = -3, s->hi = 3, s->js = 0.52;
	snprintf(s->loss_kind, sizeof s->loss_kind, "nonsaturating");
	s->real = vz_calloc(2 * s->nreal, sizeof *s->real);
	s->fake = vz_calloc(2 * s->nfake, sizeof *s->fake);
	s->surface = vz_calloc(s->bins * s->bins, sizeof *s->surface);
	s->warp = vz_calloc(2 * s->k * s->k, sizeof *s->warp);
	s->dloss = vz_calloc(s->nloss, sizeof *s->dloss);
	s->gloss = vz_calloc(s->nloss, sizeof *s->gloss);
	if (!s->real || !s->fake || !s->surface || !s->warp || !s->dloss || !s->gloss) return false;
	uint64_t r = 12345;
	for (int i = 0; i < s->nreal + s->nfake; i++) { /* a fixed LCG: the same picture every time */
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		double u = (double)(r >> 11) / 9007199254740992.0;
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		double v = (double)(r >> 11) / 9007199254740992.0;
		double jitter = 0.08 * (u - 0.5), jitter2 = 0.08 * (v - 0.5);
		if (i < s->nreal) {
			double a = 2 * M_PI * (i % 8) / 8;
			s->real[2 * i] = 2 * cos(a) + jitter, s->real[2 * i + 1] = 2 * sin(a) + jitter2;
		} else {
			int j = i - s->nreal;
			double a = 2 * M_PI * (j % 2 ? 1 : 2) / 8;
			s->fake[2 * j] = 2 * cos(a) + 2 * jitter, s->fake[2 * j + 1] = 2 * sin(a) + 2 * jitter2;
		}
	}
	for (int i = 0; i < s->bins; i++)
		for (int j = 0; j < s->bins; j++) {
			double y = s->lo + (s->hi - s->lo) * (i + 0.5) / s->bins, x = s->lo + (s->hi - s->lo) * (j + 0.5) / s->bins;
			double rad = sqrt(x * x + y * y);
			s->surface[i * s->bins + j] = 1 / (1 + exp(4 * (fabs(rad - 2) - 0.5)));
		}
	for (int i = 0; i < s->k; i++)
		for (int j = 0; j < s->k; j++) {
			double u = -2 + 4.0 * j / (s->k - 1), v = -2 + 4.0 * i / (s->k - 1);
			double a = 2 * M_PI * (1.5 + 0.5 * tanh(u)) / 8;
			s->warp[2 * (i * s->k + j)] = 2 * cos(a) + 0.1 * v, s->warp[2 * (i * s->k + j) + 1] = 2 * sin(a) + 0.1 * v;
		}
	for (int i = 0; i < s->nloss; i++) {
		s->dloss[i] = 1.386 - 0.3 * (1 - exp(-i / 40.0)) + 0.05 * sin(i / 5.0);
		s->gloss[i] = 0.693 + 0.5 * (1 - exp(-i / 40.0)) + 0.08 * cos(i / 7.0);
	}
	return true;
}

static void *gan_create(const vz_build *b)
{
	const lm_viz_gan2d *d = b->gan2d;
	if (d && (d->nreal < 1 || d->nreal > MAX_POINTS || d->nfake < 1 || d->nfake > MAX_POINTS || d->bins < 2 ||
	          d->bins > MAX_BINS || d->k < 2 || d->k > MAX_WARP || d->nloss < 0 || d->nloss > MAX_LOSS || !(d->hi > d->lo))) {
		lm_set_error(LM_ERR_ARG, "%s: the gan2d scene draws 1..%d points of each kind, a surface of 2..%d bins, a generator "
		             "grid of 2..%d, up to %d losses and a range lo < hi", b->fname, MAX_POINTS, MAX_BINS, MAX_WARP, MAX_LOSS);
		return NULL;
	}
	gan_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (!d) {
		if (!demo(s)) {
			gan_destroy(s);
			return NULL;
		}
		return s;
	}
	s->nreal = d->nreal, s->nfake = d->nfake, s->bins = d->bins, s->k = d->k, s->nloss = d->nloss, s->steps = d->steps;
	s->lo = d->lo, s->hi = d->hi, s->js = d->js;
	snprintf(s->loss_kind, sizeof s->loss_kind, "%s", d->loss_kind ? d->loss_kind : "?");
	snprintf(s->source, sizeof s->source, "%s", d->source && *d->source ? d->source : "given by the caller");
	s->real = copy(d->real, 2 * (size_t)s->nreal);
	s->fake = copy(d->fake, 2 * (size_t)s->nfake);
	s->surface = copy(d->surface, (size_t)s->bins * s->bins);
	s->warp = copy(d->warp, 2 * (size_t)s->k * s->k);
	s->dloss = copy(d->dloss, (size_t)s->nloss);
	s->gloss = copy(d->gloss, (size_t)s->nloss);
	if (!s->real || !s->fake || !s->surface || !s->warp || !s->dloss || !s->gloss) {
		gan_destroy(s);
		return NULL;
	}
	return s;
}

static int gan_steps(void *p) { (void)p; return 4; } /* the layers, one a step: real, generated, D, G */
static int gan_variants(void *p) { (void)p; return VIEW_COUNT; }
static const char *gan_variant_name(void *p, int v)
{
	(void)p;
	static const char *const names[VIEW_COUNT] = {"all", "points", "discriminator", "generator"};
	return v >= 0 && v < VIEW_COUNT ? names[v] : "all";
}
static void gan_set_variant(void *p, int v) { ((gan_scene *)p)->view = v; }

static void gan_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	gan_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 860 * c->scale), H = fmaxf(c->h, 440 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->plot = fminf(H - s->lh * 4, W * 0.55f);
	s->chart_x = s->plot + s->cw * 6;
	s->chart_w = W - s->chart_x - s->cw * 2;
	s->chart_h = s->plot * 0.6f;
	*ww = W;
	*wh = H;
}

/* data coordinates -> the plot's pixels (y up) */
static float px(const gan_scene *s, double x) { return (float)((x - s->lo) / (s->hi - s->lo)) * s->plot; }
static float py(const gan_scene *s, double y) { return s->plot - (float)((y - s->lo) / (s->hi - s->lo)) * s->plot; }

static vz_color real_col(void) { return vz_category(2); }
static vz_color fake_col(void) { return vz_category(3); }
/* the surface: D's "real" orange, its "generated" blue, faint under the points */
static vz_color d_real(void) { return vz_mix(vz_th.bg, vz_category(1), 0.55); }
static vz_color d_fake(void) { return vz_mix(vz_th.bg, vz_category(0), 0.45); }

static void draw_chart(gan_scene *s, vz_frame *f, float top)
{
	float x0 = s->chart_x, w = s->chart_w, h = s->chart_h;
	vz_outline(f, vz_r(x0, top, w, h), 1, vz_th.panel_line);
	if (s->nloss < 1) return;
	double lo = HUGE_VAL, hi = -HUGE_VAL;
	for (int i = 0; i < s->nloss; i++) {
		lo = fmin(lo, fmin(s->dloss[i], s->gloss[i]));
		hi = fmax(hi, fmax(s->dloss[i], s->gloss[i]));
	}
	if (!(hi > lo)) hi = lo + 1;
	char t[48];
	snprintf(t, sizeof t, "%.3g", hi);
	vz_text_draw(f, x0 - s->cw * 0.5f, top, VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text_dim, t);
	snprintf(t, sizeof t, "%.3g", lo);
	vz_text_draw(f, x0 - s->cw * 0.5f, top + h - vz_text_height(f, VZ_FONT_TINY), VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text_dim, t);
	int stride = s->nloss > 400 ? s->nloss / 400 : 1;
	for (int which = 0; which < 2; which++) {
		const double *v = which ? s->gloss : s->dloss;
		vz_color c = which ? fake_col() : vz_category(0);
		float lx = 0, ly = 0;
		for (int i = 0; i < s->nloss; i += stride) {
			float x = x0 + w * (s->nloss > 1 ? (float)i / (float)(s->nloss - 1) : 0.5f);
			float y = top + h - (float)((v[i] - lo) / (hi - lo)) * h;
			if (i) vz_line(f, lx, ly, x, y, 1.5f, c);
			lx = x, ly = y;
		}
	}
	vz_cell *c = vz_cell_add(f, vz_r(x0, top, w, h), "losses");
	c->value = s->nloss ? s->dloss[s->nloss - 1] : 0, c->has_value = true;
	float y = top + h + s->lh * 0.3f;
	float x = vzs_legend(f, x0, y, vz_category(0), false, vz_tr("D's loss", "判别器损失"));
	vzs_legend(f, x, y, fake_col(), false, vz_tr("G's loss", "生成器损失"));
}

static void gan_draw(void *p, vz_frame *f)
{
	gan_scene *s = p;
	int step = (int)floor(f->t + 1e-9);
	bool surface = (s->view == VIEW_ALL || s->view == VIEW_D) && step >= 2;
	bool warp = (s->view == VIEW_ALL || s->view == VIEW_G) && step >= 3, fake = step >= 1;
	/* the discriminator's surface: one cell per bin, orange = real, blue = generated */
	float cell = s->plot / (float)s->bins;
	for (int i = 0; i < s->bins; i++)
		for (int j = 0; j < s->bins; j++) {
			double v = s->surface[i * s->bins + j];
			vz_rect r = vz_r((float)j * cell, s->plot - (float)(i + 1) * cell, cell, cell);
			if (surface) vz_fill(f, r, vz_mix(d_fake(), d_real(), v));
			vz_cell *c = vz_cell_add(f, r, "surface");
			c->row = i, c->col = j, c->value = v, c->has_value = true, c->group = surface ? "shown" : "hidden";
		}
	vz_outline(f, vz_r(0, 0, s->plot, s->plot), 1, vz_th.panel_line);
	if (warp) { /* G's grid: each z and its right and upper neighbour, joined */
		vz_color c = vz_fade(vz_th.text_dim, 0.7);
		for (int i = 0; i < s->k; i++)
			for (int j = 0; j < s->k; j++) {
				const double *a = s->warp + 2 * (i * s->k + j);
				if (j + 1 < s->k) vz_line(f, px(s, a[0]), py(s, a[1]), px(s, a[2]), py(s, a[3]), 1, c);
				if (i + 1 < s->k) {
					const double *b = s->warp + 2 * ((i + 1) * s->k + j);
					vz_line(f, px(s, a[0]), py(s, a[1]), px(s, b[0]), py(s, b[1]), 1, c);
				}
			}
	}
	float rad = fmaxf(1.5f, s->plot / 260);
	for (int i = 0; i < s->nreal; i++) {
		double x = s->real[2 * i], y = s->real[2 * i + 1];
		if (x >= s->lo && x <= s->hi && y >= s->lo && y <= s->hi) vz_disc(f, px(s, x), py(s, y), rad, real_col());
	}
	for (int i = 0; fake && i < s->nfake; i++) {
		double x = s->fake[2 * i], y = s->fake[2 * i + 1];
		if (x >= s->lo && x <= s->hi && y >= s->lo && y <= s->hi) vz_disc(f, px(s, x), py(s, y), rad, fake_col());
	}
	char t[64];
	snprintf(t, sizeof t, "%.3g", s->lo);
	vz_text_draw(f, 0, s->plot + 2, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
	snprintf(t, sizeof t, "%.3g", s->hi);
	vz_text_draw(f, s->plot, s->plot + 2, VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text_dim, t);
	float y = s->plot + s->lh * 1.2f;
	float x = vzs_legend(f, 0, y, real_col(), false, vz_tr("real", "真实"));
	x = vzs_legend(f, x, y, fake_col(), false, vz_tr("generated", "生成"));
	x = vzs_legend(f, x, y, d_real(), false, vz_tr("D says real", "D 判为真"));
	vzs_legend(f, x, y, d_fake(), false, vz_tr("D says generated", "D 判为生成"));
	draw_chart(s, f, s->lh);
}

static const char *src_of(const gan_scene *s)
{
	return s->demo ? vz_tr("a demonstration (no GAN trained): run examples/gan_2d.lua --viz", "演示（没有训练 GAN）：运行 examples/gan_2d.lua --viz")
	               : s->source;
}

static void gan_title(void *p, char *buf, size_t cap)
{
	gan_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "GAN on 2-D points: step %d, %s loss; %s", "二维点上的 GAN：第 %d 步，%s 损失；%s", s->steps,
	               s->loss_kind, s->demo ? src_of(s) : vz_tr("computed in this process (the panel says how)", "在本进程中计算（见面板）"));
}

static void gan_step_label(void *p, int step, char *buf, size_t cap)
{
	gan_scene *s = p;
	static const char *const en[VIEW_COUNT] = {"every layer", "the points", "the discriminator's surface", "the generator's grid"};
	static const char *const zh[VIEW_COUNT] = {"全部图层", "点", "判别器的曲面", "生成器的网格"};
	static const char *const layer_en[4] = {"the real points", "+ the generated points", "+ D's surface", "+ G's grid"};
	static const char *const layer_zh[4] = {"真实的点", "+ 生成的点", "+ D 的曲面", "+ G 的网格"};
	int l = step < 0 ? 0 : step > 3 ? 3 : step;
	VZ_SNPRINTF_TR(buf, cap, "%s; JS divergence %.4f bits (real against generated, on a grid); showing %s (Tab)",
	               "%s；JS 散度 %.4f 比特（真实与生成的点，按网格统计）；显示%s（Tab）", vz_zh() ? layer_zh[l] : layer_en[l], s->js,
	               vz_zh() ? zh[s->view] : en[s->view]);
}

static void gan_counters(void *p, vz_panel *pn)
{
	gan_scene *s = p;
	int c = vz_panel_column(pn, "GAN", src_of(s));
	vz_panel_set(pn, c, "step", s->steps);
	vz_panel_set(pn, c, "d_loss", s->nloss ? s->dloss[s->nloss - 1] : 0);
	vz_panel_set(pn, c, "g_loss", s->nloss ? s->gloss[s->nloss - 1] : 0);
	vz_panel_set(pn, c, "js_bits", s->js);
	vz_panel_set(pn, c, "real_points", s->nreal);
	vz_panel_set(pn, c, "generated_points", s->nfake);
	vz_panel_note(pn, "%s", vz_tr("js_bits: gen.js_divergence of the points drawn (log2; 0 = the same histogram, 1 = disjoint); "
	                              "the surface is D's sigmoid on a grid; the lines join G(z) of neighbouring z",
	                              "js_bits：所画点的 gen.js_divergence（以 2 为底；0 表示直方图相同，1 表示不相交）；曲面是 D 在网格上的 "
	                              "sigmoid；线把相邻 z 的 G(z) 连起来"));
}

static void gan_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	gan_scene *s = p;
	if (strcmp(c->kind, "surface") == 0 && c->row >= 0 && c->row < s->bins && c->col >= 0 && c->col < s->bins) {
		double y = s->lo + (s->hi - s->lo) * (c->row + 0.5) / s->bins, x = s->lo + (s->hi - s->lo) * (c->col + 0.5) / s->bins;
		VZ_SNPRINTF_TR(buf, cap, "D(%.2f, %.2f) = %.3f: the discriminator calls a point here real with probability %.3f",
		               "D(%.2f, %.2f) = %.3f：判别器认为这里的点为真的概率是 %.3f", x, y, c->value, c->value);
	} else if (strcmp(c->kind, "losses") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "the losses over %d steps; last: D %.4f, G %.4f", "%d 步的损失；最后：D %.4f，G %.4f", s->nloss,
		               s->nloss ? s->dloss[s->nloss - 1] : 0, s->nloss ? s->gloss[s->nloss - 1] : 0);
	}
}

static const vz_option gan_options[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};

const vz_scene_class vz_scene_gan2d = {
	.name = "gan2d",
	.summary = "a GAN on 2-D points, as GAN Lab: real and generated points, the discriminator's surface, the generator's "
	           "grid, the losses and the JS divergence",
	.patterns = "",
	.options = gan_options,
	.create = gan_create,
	.destroy = gan_destroy,
	.steps = gan_steps,
	.variants = gan_variants,
	.variant_name = gan_variant_name,
	.set_variant = gan_set_variant,
	.layout = gan_layout,
	.draw = gan_draw,
	.title = gan_title,
	.step_label = gan_step_label,
	.counters = gan_counters,
	.describe = gan_describe,
};
