/*
 * samples.c — generated images as a grid that follows a model while it trains: one row per class
 * asked for (a conditional model's samples, the class names on the left) or a square grid, and —
 * when a classifier judged them (the yardstick of lumen/generative.lua) — each image framed by
 * whether the classifier recognised the class asked for, with the per-class accuracy at the row's
 * end.
 * Data: viz.show('samples', {images = (N, C, H, W) in [0, 1], labels = {...}, predicted = {...},
 * classes = {...}, step =, source =}) (lm_viz_samples, copied; lua/lumen/viz.lua), called again as
 * training goes; without data a demonstration (10 classes of drawn shapes), labelled as such.
 * Steps: 0 the images; 1 the classifier's verdicts. Read next: lua/lumen/generative.lua.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_IMAGES 256
#define MAX_SIDE 64
#define MAX_CLASSES 32

typedef struct samples_scene {
	int n, c, h, w, ncls, step_no;
	vz_color *pix;                  /* n x h x w */
	vzs_grid grid[MAX_IMAGES];
	int label[MAX_IMAGES], pred[MAX_IMAGES]; /* 0-based, -1: none */
	bool has_label, has_pred, demo;
	char cls[MAX_CLASSES][32];
	char source[200];
	int rows, cols, row_of[MAX_IMAGES], col_of[MAX_IMAGES];
	float cell, label_w, lh, cw;
} samples_scene;

static void samples_destroy(void *p)
{
	samples_scene *s = p;
	if (!s) return;
	for (int i = 0; i < MAX_IMAGES; i++) vzs_grid_free(&s->grid[i]);
	vz_free(s->pix);
	vz_free(s);
}

static vz_color pixel(const double *v, int c, size_t plane, size_t at)
{
	double r = v[at], g = c >= 3 ? v[plane + at] : r, b = c >= 3 ? v[2 * plane + at] : r;
	r = fmin(1, fmax(0, r)), g = fmin(1, fmax(0, g)), b = fmin(1, fmax(0, b));
	return VZ_RGB((int)(r * 255 + 0.5), (int)(g * 255 + 0.5), (int)(b * 255 + 0.5));
}

/* rows: one per class present (in class order) when labelled, else a square */
static void arrange(samples_scene *s)
{
	if (s->has_label) {
		int row_of_class[MAX_CLASSES], count[MAX_CLASSES] = {0};
		for (int k = 0; k < MAX_CLASSES; k++) row_of_class[k] = -1;
		for (int i = 0; i < s->n; i++) count[s->label[i]]++;
		s->rows = 0, s->cols = 0;
		for (int k = 0; k < MAX_CLASSES; k++)
			if (count[k]) row_of_class[k] = s->rows++, s->cols = count[k] > s->cols ? count[k] : s->cols;
		int used[MAX_CLASSES] = {0};
		for (int i = 0; i < s->n; i++) s->row_of[i] = row_of_class[s->label[i]], s->col_of[i] = used[s->label[i]]++;
	} else {
		s->cols = (int)ceil(sqrt((double)s->n));
		s->rows = (s->n + s->cols - 1) / s->cols;
		for (int i = 0; i < s->n; i++) s->row_of[i] = i / s->cols, s->col_of[i] = i % s->cols;
	}
}

static bool demo(samples_scene *s)
{
	s->demo = true;
	s->n = 40, s->c = 1, s->h = s->w = 16, s->ncls = 10, s->has_label = s->has_pred = true;
	static const char *const names[10] = {"disc", "ring", "square", "frame", "cross", "bar", "column", "diagonal", "corner",
	                                      "dot"};
	for (int k = 0; k < 10; k++) snprintf(s->cls[k], sizeof s->cls[k], "%s", names[k]);
	s->pix = vz_calloc((size_t)s->n * s->h * s->w, sizeof *s->pix);
	if (!s->pix) return false;
	for (int i = 0; i < s->n; i++) {
		int k = i / 4, j = i % 4;
		s->label[i] = k, s->pred[i] = j == 3 && k % 3 == 0 ? (k + 1) % 10 : k; /* some misread */
		for (int y = 0; y < 16; y++)
			for (int x = 0; x < 16; x++) {
				double dx = x - 7.5 - (j - 1.5) * 0.6, dy = y - 7.5, r = sqrt(dx * dx + dy * dy), v = 0;
				switch (k) {
				case 0: v = r < 5; break;
				case 1: v = r < 6 && r > 3.5; break;
				case 2: v = fabs(dx) < 5 && fabs(dy) < 5; break;
				case 3: v = fabs(dx) < 6 && fabs(dy) < 6 && !(fabs(dx) < 4 && fabs(dy) < 4); break;
				case 4: v = fabs(dx) < 1.5 || fabs(dy) < 1.5; break;
				case 5: v = fabs(dy) < 2; break;
				case 6: v = fabs(dx) < 2; break;
				case 7: v = fabs(dx - dy) < 2; break;
				case 8: v = dx < -2 && dy < -2; break;
				default: v = r < 2; break;
				}
				s->pix[((size_t)i * 16 + y) * 16 + x] = v ? VZ_RGB(235, 235, 235) : VZ_RGB(20, 20, 20);
			}
	}
	s->step_no = 0;
	return true;
}

static void *samples_create(const vz_build *b)
{
	const lm_viz_samples *d = b->samples;
	if (d && (d->n < 1 || d->n > MAX_IMAGES || (d->c != 1 && d->c != 3) || d->h < 1 || d->h > MAX_SIDE || d->w < 1 ||
	          d->w > MAX_SIDE || d->nclasses < 0 || d->nclasses > MAX_CLASSES)) {
		lm_set_error(LM_ERR_ARG, "%s: the samples scene draws 1..%d images of 1 or 3 channels, up to %d x %d, and up to %d "
		             "classes", b->fname, MAX_IMAGES, MAX_SIDE, MAX_SIDE, MAX_CLASSES);
		return NULL;
	}
	samples_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (!d) {
		if (!demo(s)) goto fail;
	} else {
		s->n = d->n, s->c = d->c, s->h = d->h, s->w = d->w, s->ncls = d->nclasses, s->step_no = d->step;
		s->has_label = d->labels != NULL, s->has_pred = d->predicted != NULL;
		for (int i = 0; i < s->n; i++) {
			s->label[i] = d->labels ? d->labels[i] : -1;
			s->pred[i] = d->predicted ? d->predicted[i] : -1;
			if ((d->labels && (s->label[i] < 0 || s->label[i] >= MAX_CLASSES)) ||
			    (d->predicted && (s->pred[i] < 0 || s->pred[i] >= MAX_CLASSES))) {
				lm_set_error(LM_ERR_ARG, "%s: the samples scene: image %d's class is outside 1..%d", b->fname, i + 1, MAX_CLASSES);
				goto fail;
			}
		}
		for (int k = 0; k < s->ncls; k++) snprintf(s->cls[k], sizeof s->cls[k], "%s", d->classes[k] ? d->classes[k] : "?");
		snprintf(s->source, sizeof s->source, "%s", d->source && *d->source ? d->source : "given by the caller");
		size_t plane = (size_t)s->h * s->w;
		s->pix = vz_calloc((size_t)s->n * plane, sizeof *s->pix);
		if (!s->pix) goto fail;
		for (int i = 0; i < s->n; i++)
			for (size_t q = 0; q < plane; q++) s->pix[(size_t)i * plane + q] = pixel(d->images + (size_t)i * s->c * plane, s->c, plane, q);
	}
	arrange(s);
	return s;
fail:
	samples_destroy(s);
	return NULL;
}

static int samples_steps(void *p) { (void)p; return 2; }
static int samples_variants(void *p) { (void)p; return 1; }
static const char *samples_variant_name(void *p, int v) { (void)p, (void)v; return "grid"; }
static void samples_set_variant(void *p, int v) { (void)p, (void)v; }

static const char *class_name(const samples_scene *s, int k, char *buf, size_t cap)
{
	if (k >= 0 && k < s->ncls) return s->cls[k];
	snprintf(buf, cap, "%s %d", vz_tr("class", "类"), k + 1);
	return buf;
}

static void samples_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	samples_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 700 * c->scale), H = fmaxf(c->h, 420 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = s->has_label ? s->cw * 14 : 0;
	float right = s->has_pred ? s->cw * 8 : 0;
	s->cell = fminf((W - s->label_w - right) / (float)s->cols, (H - s->lh * 3) / (float)s->rows);
	*ww = W;
	*wh = H;
}

static void samples_draw(void *p, vz_frame *f)
{
	samples_scene *s = p;
	int step = (int)floor(f->t + 1e-9);
	char t[64];
	int right[MAX_CLASSES] = {0}, total[MAX_CLASSES] = {0}, row_class[MAX_IMAGES];
	for (int r = 0; r < s->rows; r++) row_class[r] = -1;
	for (int i = 0; i < s->n; i++) {
		vz_rect r = vz_r(s->label_w + (float)s->col_of[i] * s->cell + 1, (float)s->row_of[i] * s->cell + 1, s->cell - 2, s->cell - 2);
		vz_cell *c = vzs_grid_draw(f, &s->grid[i], r, s->h, s->w, s->pix + (size_t)i * s->h * s->w, "sample", 0);
		c->index = i, c->tag = i, c->row = s->row_of[i], c->col = s->col_of[i], c->group = "image";
		if (s->has_label) row_class[s->row_of[i]] = s->label[i];
		if (s->has_pred && s->has_label) {
			bool ok = s->pred[i] == s->label[i];
			total[s->label[i]]++, right[s->label[i]] += ok;
			c->state = ok ? "recognised" : "misread";
			if (step >= 1) vz_outline(f, r, 2, ok ? vz_category(2) : vz_category(5));
		}
	}
	for (int r = 0; r < s->rows && s->has_label; r++) {
		int k = row_class[r];
		if (k < 0) continue;
		float y = (float)r * s->cell + s->cell / 2 - s->lh / 2;
		vz_text_draw(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, class_name(s, k, t, sizeof t));
		if (s->has_pred && step >= 1 && total[k]) {
			snprintf(t, sizeof t, "%d/%d", right[k], total[k]);
			vz_text_draw(f, s->label_w + (float)s->cols * s->cell + s->cw, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, t);
		}
	}
	if (s->has_pred && step >= 1) {
		float y = (float)s->rows * s->cell + s->lh * 0.5f;
		float x = vzs_legend(f, 0, y, vz_category(2), false, vz_tr("the classifier reads the class asked for", "分类器认出了所要的类"));
		vzs_legend(f, x, y, vz_category(5), false, vz_tr("it reads another", "认成了别的类"));
	}
}

static const char *src_of(const samples_scene *s)
{
	return s->demo ? vz_tr("a demonstration (drawn shapes, no model)", "演示（画出的图形，没有模型）") : s->source;
}

static void samples_title(void *p, char *buf, size_t cap)
{
	samples_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "samples: %d generated images%s; %s", "样本：%d 张生成的图%s；%s", s->n,
	               s->has_label ? vz_tr(", a row per class asked for", "，每个所要的类一行") : "",
	               s->demo ? src_of(s) : vz_tr("computed in this process (the panel says how)", "在本进程中计算（见面板）"));
}

static double accuracy(const samples_scene *s)
{
	int r = 0;
	for (int i = 0; i < s->n; i++) r += s->pred[i] == s->label[i];
	return s->n ? (double)r / s->n : 0;
}

static void samples_step_label(void *p, int step, char *buf, size_t cap)
{
	samples_scene *s = p;
	if (step == 0 || !s->has_pred || !s->has_label)
		VZ_SNPRINTF_TR(buf, cap, "the samples at training step %d", "训练第 %d 步时的样本", s->step_no);
	else
		VZ_SNPRINTF_TR(buf, cap, "the classifier recognises the class asked for in %.1f%% of them (step %d)",
		               "分类器在其中 %.1f%% 认出了所要的类（第 %d 步）", 100 * accuracy(s), s->step_no);
}

static void samples_counters(void *p, vz_panel *pn)
{
	samples_scene *s = p;
	int c = vz_panel_column(pn, vz_tr("samples", "样本"), src_of(s));
	vz_panel_set(pn, c, "images", s->n);
	vz_panel_set(pn, c, "training_step", s->step_no);
	if (s->has_pred && s->has_label) vz_panel_set(pn, c, "recognised", accuracy(s));
}

static void samples_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	samples_scene *s = p;
	/* a picked image is a grid of pixels: row, col and index are the pixel's; the image is the tag */
	if (strcmp(c->kind, "sample") != 0 || c->tag < 0 || c->tag >= s->n) return;
	char a[48], b[48];
	int i = c->tag;
	if (s->has_label && s->has_pred)
		VZ_SNPRINTF_TR(buf, cap, "sample %d, asked for %s; the classifier reads %s", "样本 %d，要的是 %s；分类器认为是 %s", i + 1,
		               class_name(s, s->label[i], a, sizeof a), class_name(s, s->pred[i], b, sizeof b));
	else if (s->has_label)
		VZ_SNPRINTF_TR(buf, cap, "sample %d, asked for %s", "样本 %d，要的是 %s", i + 1, class_name(s, s->label[i], a, sizeof a));
	else
		VZ_SNPRINTF_TR(buf, cap, "sample %d", "样本 %d", i + 1);
}

static const vz_option samples_options[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};

const vz_scene_class vz_scene_samples = {
	.name = "samples",
	.summary = "generated images as a grid that follows a model as it trains, a row per class, the classifier's verdicts",
	.patterns = "",
	.options = samples_options,
	.create = samples_create,
	.destroy = samples_destroy,
	.steps = samples_steps,
	.variants = samples_variants,
	.variant_name = samples_variant_name,
	.set_variant = samples_set_variant,
	.layout = samples_layout,
	.draw = samples_draw,
	.title = samples_title,
	.step_label = samples_step_label,
	.counters = samples_counters,
	.describe = samples_describe,
};
