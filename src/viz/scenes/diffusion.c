/*
 * diffusion.c — a diffusion model's two chains on 2-D points: the forward process noising the data
 * step by step (x_t ~ q(x_t | x_0) = N(sqrt(abar_t) x_0, (1 - abar_t) I)) until it is a Gaussian,
 * and the learned reverse process bringing samples back from that Gaussian, with the noise
 * schedule under them (sqrt(abar_t), the signal kept, and sqrt(1 - abar_t), the noise added).
 * Data: viz.show('diffusion', model) from a gen.DDPM2D (lm_viz_diffusion: snapshots of both chains
 * at chosen steps, the schedule; copied, labelled as computed in this process), or without data a
 * demonstration (a ring noised in closed form by a linear schedule, the reverse drawn as the
 * forward played backwards), labelled as such.
 * Steps: the forward chain's snapshots, then the reverse chain's; the current one large, all of
 * them as thumbnails. Read next: lua/lumen/generative.lua (DDPM2D, ddpm_sample), docs/viz.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_SNAP 32
#define MAX_PTS 2048
#define MAX_T 5000

typedef struct diff_scene {
	int n, S, T;
	int ft[MAX_SNAP], rt[MAX_SNAP]; /* the step of each snapshot (0 = the data / the sample) */
	double *fwd, *rev;              /* S x n x 2 each */
	double *ab;                     /* T: abar_1 .. abar_T */
	double lo, hi;
	char schedule[32], source[200];
	bool demo;
	float lh, cw, big, thumb, chart_x, chart_w, chart_h;
} diff_scene;

static void diff_destroy(void *p)
{
	diff_scene *s = p;
	if (!s) return;
	vz_free(s->fwd);
	vz_free(s->rev);
	vz_free(s->ab);
	vz_free(s);
}

static double gauss(uint64_t *r)
{
	*r = *r * 6364136223846793005ull + 1442695040888963407ull;
	double u = ((double)(*r >> 11) + 0.5) / 9007199254740992.0;
	*r = *r * 6364136223846793005ull + 1442695040888963407ull;
	double v = (double)(*r >> 11) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static bool demo(diff_scene *s)
{
	s->demo = true;
	s->n = 400, s->S = 11, s->T = 200;
	snprintf(s->schedule, sizeof s->schedule, "linear");
	s->fwd = vz_calloc((size_t)s->S * s->n * 2, sizeof *s->fwd);
	s->rev = vz_calloc((size_t)s->S * s->n * 2, sizeof *s->rev);
	s->ab = vz_calloc((size_t)s->T, sizeof *s->ab);
	if (!s->fwd || !s->rev || !s->ab) return false;
	double acc = 1;
	for (int t = 0; t < s->T; t++) {
		double beta = 1e-4 + (0.04 - 1e-4) * t / (s->T - 1);
		acc *= 1 - beta;
		s->ab[t] = acc;
	}
	uint64_t r = 99;
	double x0[MAX_PTS * 2], eps[MAX_PTS * 2];
	for (int i = 0; i < s->n; i++) {
		double a = 2 * M_PI * (i % 8) / 8;
		x0[2 * i] = 2 * cos(a) + 0.05 * gauss(&r), x0[2 * i + 1] = 2 * sin(a) + 0.05 * gauss(&r);
		eps[2 * i] = gauss(&r), eps[2 * i + 1] = gauss(&r);
	}
	for (int k = 0; k < s->S; k++) {
		int t = k * s->T / (s->S - 1);
		s->ft[k] = t, s->rt[s->S - 1 - k] = t;
		double ab = t ? s->ab[t - 1] : 1;
		for (int i = 0; i < 2 * s->n; i++) {
			double v = sqrt(ab) * x0[i] + sqrt(1 - ab) * eps[i];
			s->fwd[(size_t)k * s->n * 2 + i] = v;
			s->rev[(size_t)(s->S - 1 - k) * s->n * 2 + i] = v;
		}
	}
	return true;
}

static void *diff_create(const vz_build *b)
{
	const lm_viz_diffusion *d = b->diffusion;
	if (d && (d->n < 1 || d->n > MAX_PTS || d->S < 2 || d->S > MAX_SNAP || d->T < 1 || d->T > MAX_T)) {
		lm_set_error(LM_ERR_ARG, "%s: the diffusion scene draws 1..%d points in 2..%d snapshots of a schedule of 1..%d steps",
		             b->fname, MAX_PTS, MAX_SNAP, MAX_T);
		return NULL;
	}
	diff_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (!d) {
		if (!demo(s)) goto fail;
	} else {
		s->n = d->n, s->S = d->S, s->T = d->T;
		for (int k = 0; k < s->S; k++) {
			if (d->fwd_t[k] < 0 || d->fwd_t[k] > s->T || d->rev_t[k] < 0 || d->rev_t[k] > s->T) {
				lm_set_error(LM_ERR_ARG, "%s: the diffusion scene: snapshot %d is at a step outside 0..%d", b->fname, k + 1, s->T);
				goto fail;
			}
			s->ft[k] = d->fwd_t[k], s->rt[k] = d->rev_t[k];
		}
		size_t m = (size_t)s->S * s->n * 2;
		s->fwd = vz_calloc(m, sizeof *s->fwd);
		s->rev = vz_calloc(m, sizeof *s->rev);
		s->ab = vz_calloc((size_t)s->T, sizeof *s->ab);
		if (!s->fwd || !s->rev || !s->ab) goto fail;
		memcpy(s->fwd, d->fwd, m * sizeof *s->fwd);
		memcpy(s->rev, d->rev, m * sizeof *s->rev);
		memcpy(s->ab, d->alpha_bars, (size_t)s->T * sizeof *s->ab);
		snprintf(s->schedule, sizeof s->schedule, "%s", d->schedule ? d->schedule : "?");
		snprintf(s->source, sizeof s->source, "%s", d->source && *d->source ? d->source : "given by the caller");
	}
	/* one box for every snapshot: the data's, widened to hold 3 standard deviations of the noise */
	s->lo = -3.5, s->hi = 3.5;
	for (size_t i = 0; i < (size_t)s->n * 2; i++) {
		double v = s->fwd[i];
		if (isfinite(v)) s->lo = fmin(s->lo, v * 1.15), s->hi = fmax(s->hi, v * 1.15);
	}
	return s;
fail:
	diff_destroy(s);
	return NULL;
}

static int diff_steps(void *p) { return 2 * ((diff_scene *)p)->S; }
static int diff_variants(void *p) { (void)p; return 1; }
static const char *diff_variant_name(void *p, int v) { (void)p, (void)v; return "chains"; }
static void diff_set_variant(void *p, int v) { (void)p, (void)v; }

static void diff_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	diff_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 460 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->thumb = fminf((W - s->cw * 12) / (float)s->S, H * 0.14f);
	s->big = fminf(H - 2 * s->thumb - s->lh * 6, W * 0.45f);
	s->chart_x = s->big + s->cw * 6;
	s->chart_w = W - s->chart_x - s->cw * 2;
	s->chart_h = s->big * 0.6f;
	*ww = W;
	*wh = H;
}

static void cloud(const diff_scene *s, vz_frame *f, const double *pts, vz_rect box, float rad, vz_color c)
{
	for (int i = 0; i < s->n; i++) {
		double x = pts[2 * i], y = pts[2 * i + 1];
		if (!(x >= s->lo && x <= s->hi && y >= s->lo && y <= s->hi)) continue;
		float u = box.x + (float)((x - s->lo) / (s->hi - s->lo)) * box.w;
		float v = box.y + box.h - (float)((y - s->lo) / (s->hi - s->lo)) * box.h;
		vz_disc(f, u, v, rad, c);
	}
}

/* step k: the snapshot shown (forward 0..S-1, then reverse 0..S-1) */
static void which(const diff_scene *s, int step, bool *reverse, int *k)
{
	if (step < 0) step = 0;
	if (step >= 2 * s->S) step = 2 * s->S - 1;
	*reverse = step >= s->S;
	*k = *reverse ? step - s->S : step;
}

static vz_color fwd_col(void) { return vz_category(0); }
static vz_color rev_col(void) { return vz_category(3); }

static void diff_draw(void *p, vz_frame *f)
{
	diff_scene *s = p;
	int step = (int)floor(f->t + 1e-9);
	bool reverse;
	int k;
	which(s, step, &reverse, &k);
	const double *cur = (reverse ? s->rev : s->fwd) + (size_t)k * s->n * 2;
	vz_rect big = vz_r(0, 0, s->big, s->big);
	vz_outline(f, big, 1, vz_th.panel_line);
	cloud(s, f, cur, big, fmaxf(1.5f, s->big / 220), reverse ? rev_col() : fwd_col());
	vz_cell *c = vz_cell_add(f, big, "snapshot");
	c->index = k, c->state = reverse ? "reverse" : "forward", c->value = reverse ? s->rt[k] : s->ft[k], c->has_value = true;
	/* thumbnails: the forward row, the reverse row */
	char t[48];
	for (int row = 0; row < 2; row++) {
		float y = s->big + s->lh * 1.5f + (float)row * (s->thumb + s->lh * 1.2f);
		vz_text_draw(f, 0, y + s->thumb / 2 - s->lh / 2, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text,
		             row ? vz_tr("reverse", "反向") : vz_tr("forward", "前向"));
		for (int j = 0; j < s->S; j++) {
			vz_rect r = vz_r(s->cw * 9 + (float)j * s->thumb, y, s->thumb * 0.92f, s->thumb * 0.92f);
			bool now = (row == 1) == reverse && j == k;
			bool seen = row == 0 ? (reverse || j <= k) : (reverse && j <= k);
			vz_outline(f, r, now ? 2 : 1, now ? vz_th.highlight : vz_th.panel_line);
			if (seen) cloud(s, f, (row ? s->rev : s->fwd) + (size_t)j * s->n * 2, r, 1, row ? rev_col() : fwd_col());
			snprintf(t, sizeof t, "t=%d", row ? s->rt[j] : s->ft[j]);
			if (vz_text_fits(f, VZ_FONT_TINY, t, r.w))
				vz_text_draw(f, r.x + r.w / 2, r.y + r.h, VZ_FONT_TINY, VZ_ALIGN_CENTER, vz_th.text_dim, t);
			vz_cell *tc = vz_cell_add(f, r, "snapshot");
			tc->index = j, tc->row = row, tc->state = seen ? (row ? "reverse" : "forward") : "later";
			tc->value = row ? s->rt[j] : s->ft[j], tc->has_value = true, tc->group = "thumbnail";
		}
	}
	/* the schedule */
	float x0 = s->chart_x, w = s->chart_w, h = s->chart_h, top = s->lh;
	vz_outline(f, vz_r(x0, top, w, h), 1, vz_th.panel_line);
	for (int which_curve = 0; which_curve < 2; which_curve++) {
		float lx = 0, ly = 0;
		for (int tt = 0; tt <= s->T; tt++) {
			double ab = tt ? s->ab[tt - 1] : 1;
			double v = which_curve ? sqrt(1 - ab) : sqrt(ab);
			float x = x0 + w * (float)tt / (float)s->T, y = top + h - (float)v * h;
			if (tt) vz_line(f, lx, ly, x, y, 1.5f, which_curve ? vz_category(1) : vz_category(2));
			lx = x, ly = y;
		}
	}
	int tnow = reverse ? s->rt[k] : s->ft[k];
	float xm = x0 + w * (float)tnow / (float)s->T;
	vz_line(f, xm, top, xm, top + h, 2, vz_th.highlight);
	vz_cell *sc = vz_cell_add(f, vz_r(x0, top, w, h), "schedule");
	sc->value = tnow ? s->ab[tnow - 1] : 1, sc->has_value = true, sc->index = tnow;
	float ly = top + h + s->lh * 0.3f;
	float lx = vzs_legend(f, x0, ly, vz_category(2), false, vz_tr("sqrt(abar_t): signal", "sqrt(abar_t)：信号"));
	vzs_legend(f, lx, ly, vz_category(1), false, vz_tr("sqrt(1 - abar_t): noise", "sqrt(1 - abar_t)：噪声"));
	snprintf(t, sizeof t, "t = 0");
	vz_text_draw(f, x0, ly + s->lh * 1.3f, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
	snprintf(t, sizeof t, "t = %d", s->T);
	vz_text_draw(f, x0 + w, ly + s->lh * 1.3f, VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text_dim, t);
}

static const char *src_of(const diff_scene *s)
{
	return s->demo ? vz_tr("a demonstration (closed-form noising of a ring; no model)", "演示（圆环按闭式加噪；没有模型）")
	               : s->source;
}

static void diff_title(void *p, char *buf, size_t cap)
{
	diff_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "diffusion: %d points, T = %d, %s schedule; %s", "扩散：%d 个点，T = %d，%s 调度；%s", s->n, s->T,
	               s->schedule, s->demo ? src_of(s) : vz_tr("computed in this process (the panel says how)", "在本进程中计算（见面板）"));
}

static void stats(const diff_scene *s, const double *pts, double *mean_r, double *std)
{
	double sx = 0, sy = 0, sxx = 0, syy = 0;
	for (int i = 0; i < s->n; i++) {
		double x = pts[2 * i], y = pts[2 * i + 1];
		sx += x, sy += y, sxx += x * x, syy += y * y;
	}
	double mx = sx / s->n, my = sy / s->n;
	*mean_r = sqrt(mx * mx + my * my);
	*std = sqrt(fmax(0, (sxx / s->n - mx * mx + syy / s->n - my * my) / 2));
}

static void diff_step_label(void *p, int step, char *buf, size_t cap)
{
	diff_scene *s = p;
	bool reverse;
	int k;
	which(s, step, &reverse, &k);
	int t = reverse ? s->rt[k] : s->ft[k];
	double ab = t ? s->ab[t - 1] : 1, mr, sd;
	stats(s, (reverse ? s->rev : s->fwd) + (size_t)k * s->n * 2, &mr, &sd);
	if (!reverse)
		VZ_SNPRINTF_TR(buf, cap, "forward, t = %d: x_t = %.3f x_0 + %.3f noise; the points' spread %.3f",
		               "前向，t = %d：x_t = %.3f x_0 + %.3f 噪声；点的离散程度 %.3f", t, sqrt(ab), sqrt(1 - ab), sd);
	else
		VZ_SNPRINTF_TR(buf, cap, "reverse, t = %d: the model's denoising %s; the points' spread %.3f",
		               "反向，t = %d：模型的去噪%s；点的离散程度 %.3f", t,
		               t == s->T ? vz_tr("starts from N(0, I)", "从 N(0, I) 开始")
		                         : t == 0 ? vz_tr("has made the samples x_0", "得到了样本 x_0") : vz_tr("goes on", "继续"), sd);
}

static void diff_counters(void *p, vz_panel *pn)
{
	diff_scene *s = p;
	int c = vz_panel_column(pn, vz_tr("diffusion", "扩散"), src_of(s));
	double mr, sd0, sdT, sdr;
	stats(s, s->fwd, &mr, &sd0);
	stats(s, s->fwd + (size_t)(s->S - 1) * s->n * 2, &mr, &sdT);
	stats(s, s->rev + (size_t)(s->S - 1) * s->n * 2, &mr, &sdr);
	vz_panel_set(pn, c, "T", s->T);
	vz_panel_set(pn, c, "points", s->n);
	vz_panel_set(pn, c, "abar_T", s->ab[s->T - 1]);
	vz_panel_set(pn, c, "spread_data", sd0);
	vz_panel_set(pn, c, "spread_at_T", sdT);
	vz_panel_set(pn, c, "spread_sampled", sdr);
	vz_panel_note(pn, "%s", vz_tr("spread: the points' standard deviation per coordinate; at T the forward chain is close to N(0, I) "
	                              "when abar_T is small",
	                              "spread：点在每个坐标上的标准差；abar_T 很小时，前向链在 T 处接近 N(0, I)"));
}

static void diff_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	diff_scene *s = p;
	if (strcmp(c->kind, "snapshot") == 0)
		VZ_SNPRINTF_TR(buf, cap, "%s chain at t = %.0f", "%s链，t = %.0f", strcmp(c->state, "reverse") == 0 || c->row == 1
		               ? vz_tr("the reverse", "反向") : vz_tr("the forward", "前向"), c->value);
	else if (strcmp(c->kind, "schedule") == 0)
		VZ_SNPRINTF_TR(buf, cap, "t = %d: abar_t = %.4f (signal %.3f, noise %.3f)", "t = %d：abar_t = %.4f（信号 %.3f，噪声 %.3f）",
		               c->index, c->value, sqrt(c->value), sqrt(1 - c->value));
	(void)s;
}

static const vz_option diff_options[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};

const vz_scene_class vz_scene_diffusion = {
	.name = "diffusion",
	.summary = "a diffusion model's forward chain (noising) and reverse chain (denoising) on 2-D points, with the noise "
	           "schedule",
	.patterns = "",
	.options = diff_options,
	.create = diff_create,
	.destroy = diff_destroy,
	.steps = diff_steps,
	.variants = diff_variants,
	.variant_name = diff_variant_name,
	.set_variant = diff_set_variant,
	.layout = diff_layout,
	.draw = diff_draw,
	.title = diff_title,
	.step_label = diff_step_label,
	.counters = diff_counters,
	.describe = diff_describe,
};
