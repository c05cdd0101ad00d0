/*
 * features.c — CNN Explainer's main view of a model on one input (viz.show(model, {input = x})):
 * the input image, then every layer's output for it as feature maps (a column per layer, one
 * small image per channel, blue negative and orange positive on one scale per layer), vectors
 * (a Linear's output) as a column of cells, and the softmax of the last layer's output as bars
 * with the class names.
 *
 * Steps: 0 the whole network; 1..n one layer, its maps large; for a Conv2d the arithmetic of one
 * output cell (the largest of the first map): the input window of each input channel, the kernel,
 * their products summed with the bias, equal to the cell (recomputed here from the copies of the
 * input, weight and bias, and checked against the value the model produced); the last step the
 * softmax: logits and probabilities. Hovering a Conv2d cell anywhere gives its arithmetic in
 * numbers; a ReLU cell its input and output; a pooling cell its window's values.
 * The layers' outputs come from Lua (lua/lumen/viz.lua runs the model once under forward hooks);
 * everything is copied when the scene is made. From options alone: a small demonstration network
 * with random weights on a random 12 x 12 image, computed here, labelled as such.
 * Read next: model.c, lua/lumen/viz.lua (viz._features).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_LAYERS  32
#define MAX_DRAWN   12    /* maps drawn per layer column */
#define MAX_VEC     48    /* vector cells drawn per column */
#define MAX_TOTAL   (8 << 20) /* elements of all outputs together */
#define MAX_CLASSES 32

typedef struct flayer {
	char name[64], kind[32], desc[96];
	int c, h, w;                /* output: c maps of h x w (a vector: h = w = 1) */
	double *out, vmax;
	vz_color *col;              /* c x h x w */
	vzs_grid *grid;             /* c (overview) */
	vzs_grid *zgrid;            /* c (zoom) */
	/* Conv2d: the arithmetic */
	bool conv;
	int ci, hi, wi, kh, kw, sh, sw, ph, pw, dh, dw, groups;
	double *in, *weight, *bias; /* (ci, hi, wi), (c, ci / groups, kh, kw), (c) or NULL */
	int sel_c, sel_y, sel_x;    /* the cell the zoom explains */
	/* layout (world) */
	float x, colw, map;
} flayer;

typedef struct feat_scene {
	char fname[32], name[64], source[160];
	bool demo;
	int ic, ih, iw;
	double *input, imax;
	vz_color *icol;
	vzs_grid igrid[3];
	flayer L[MAX_LAYERS];
	int n;
	char cls[MAX_CLASSES][32];
	int ncls;
	double prob[MAX_CLASSES], logit[MAX_CLASSES];
	bool softmax;               /* the last output is a vector of ncls values */
	/* layout */
	float lh, cw, top, in_map, zoom, height;
} feat_scene;

/* ---------------------------------------------------------------- colours and arithmetic */

static vz_color value_color(double v, double vmax)
{
	double t = vmax > 0 ? fmax(-1, fmin(1, v / vmax)) : 0;
	return t < 0 ? vz_mix(VZ_RGB(255, 255, 255), vz_th.path_a, -t) : vz_mix(VZ_RGB(255, 255, 255), vz_th.active, t);
}

static double conv_at(const flayer *l, int c, int y, int x, double *terms_abs)
{
	int cpg = l->ci / l->groups, opg = l->c / l->groups, g = c / opg;
	double sum = l->bias ? l->bias[c] : 0, ab = 0;
	for (int k = 0; k < cpg; k++) {
		int ch = g * cpg + k;
		for (int ky = 0; ky < l->kh; ky++)
			for (int kx = 0; kx < l->kw; kx++) {
				int iy = y * l->sh - l->ph + ky * l->dh, ix = x * l->sw - l->pw + kx * l->dw;
				if (iy < 0 || ix < 0 || iy >= l->hi || ix >= l->wi) continue;
				double p = l->in[((size_t)ch * l->hi + (size_t)iy) * l->wi + (size_t)ix] *
				           l->weight[(((size_t)c * cpg + (size_t)k) * l->kh + (size_t)ky) * l->kw + (size_t)kx];
				sum += p;
				ab += fabs(p);
			}
	}
	if (terms_abs) *terms_abs = ab;
	return sum;
}

static void colour_layer(flayer *l)
{
	size_t n = (size_t)l->c * l->h * l->w;
	l->vmax = 0;
	for (size_t i = 0; i < n; i++) l->vmax = fmax(l->vmax, fabs(l->out[i]));
	for (size_t i = 0; i < n; i++) l->col[i] = value_color(l->out[i], l->vmax);
}

/* ---------------------------------------------------------------- create */

static void free_layer(flayer *l)
{
	for (int i = 0; l->grid && i < l->c; i++) vzs_grid_free(&l->grid[i]);
	for (int i = 0; l->zgrid && i < l->c; i++) vzs_grid_free(&l->zgrid[i]);
	vz_free(l->grid), vz_free(l->zgrid), vz_free(l->out), vz_free(l->col), vz_free(l->in), vz_free(l->weight);
	vz_free(l->bias);
}

static void feat_destroy(void *p)
{
	feat_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->n; i++) free_layer(&s->L[i]);
	for (int i = 0; i < 3; i++) vzs_grid_free(&s->igrid[i]);
	vz_free(s->input), vz_free(s->icol);
	vz_free(s);
}

static double *copy_of(const lm_tensor *t, size_t n)
{
	double *d = vz_malloc((n ? n : 1) * sizeof *d);
	if (d && n) memcpy(d, lm_tensor_data(t), n * sizeof *d);
	return d;
}

static size_t numel_of(const lm_tensor *t)
{
	size_t n = 1;
	for (int i = 0; i < lm_tensor_ndim(t); i++) n *= (size_t)lm_tensor_shape(t)[i];
	return n;
}

/* The layer's shape, output and colours; the grids. */
static lm_status alloc_layer(flayer *l, const char *fname)
{
	size_t n = (size_t)l->c * l->h * l->w;
	l->col = vz_malloc((n ? n : 1) * sizeof *l->col);
	l->grid = vz_calloc((size_t)l->c, sizeof *l->grid);
	l->zgrid = vz_calloc((size_t)l->c, sizeof *l->zgrid);
	if (!l->col || !l->grid || !l->zgrid || !l->out) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	colour_layer(l);
	return LM_OK;
}

/* The zoomed cell: the largest of the first map. */
static void select_cell(flayer *l)
{
	double best = -INFINITY;
	for (int y = 0; y < l->h; y++)
		for (int x = 0; x < l->w; x++)
			if (l->out[(size_t)y * l->w + (size_t)x] > best) best = l->out[(size_t)y * l->w + (size_t)x], l->sel_y = y, l->sel_x = x;
	l->sel_c = 0;
}

static void softmax_of(feat_scene *s)
{
	const flayer *last = &s->L[s->n - 1];
	s->softmax = s->n > 0 && last->h == 1 && last->w == 1 && last->c >= 2 && last->c <= MAX_CLASSES;
	if (!s->softmax) return;
	double mx = -INFINITY, sum = 0;
	for (int i = 0; i < last->c; i++) mx = fmax(mx, last->out[i]);
	for (int i = 0; i < last->c; i++) sum += s->prob[i] = exp((s->logit[i] = last->out[i]) - mx);
	for (int i = 0; i < last->c; i++) s->prob[i] /= sum;
	if (s->ncls != last->c) { /* no names (or another count): numbers */
		for (int i = 0; i < last->c; i++) snprintf(s->cls[i], sizeof s->cls[i], "%d", i + 1);
		s->ncls = last->c;
	}
}

/* The demonstration: a 12 x 12 random image, Conv2d(1, 4, 3, padding 1), ReLU, MaxPool2d(2),
 * Conv2d(4, 6, 3), ReLU, Flatten, Linear(6 * 4 * 4, 5), weights from a fixed generator. */
static uint64_t demo_z = 0x9E3779B97F4A7C15ull;
static double demo_rand(void)
{
	demo_z ^= demo_z << 13, demo_z ^= demo_z >> 7, demo_z ^= demo_z << 17;
	return (double)(demo_z % 20001) / 10000.0 - 1.0;
}

static lm_status demo(feat_scene *s)
{
	demo_z = 0x9E3779B97F4A7C15ull;
	snprintf(s->name, sizeof s->name, "a small CNN");
	s->ic = 1, s->ih = 12, s->iw = 12;
	s->input = vz_malloc(144 * sizeof *s->input);
	if (!s->input) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	for (int i = 0; i < 144; i++) s->input[i] = fabs(demo_rand());
	const double *prev = s->input;
	int pc = 1, ph = 12, pw = 12;
	static const struct { const char *kind; int out, k, pad; } d[] = {
		{"Conv2d", 4, 3, 1}, {"ReLU", 0, 0, 0}, {"MaxPool2d", 0, 2, 0}, {"Conv2d", 6, 3, 0}, {"ReLU", 0, 0, 0},
		{"Flatten", 0, 0, 0}, {"Linear", 5, 0, 0},
	};
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		flayer *l = &s->L[s->n++];
		snprintf(l->name, sizeof l->name, "%zu", i + 1);
		snprintf(l->kind, sizeof l->kind, "%s", d[i].kind);
		if (strcmp(d[i].kind, "Conv2d") == 0) {
			l->conv = true;
			l->ci = pc, l->hi = ph, l->wi = pw, l->kh = l->kw = d[i].k, l->sh = l->sw = 1, l->ph = l->pw = d[i].pad;
			l->dh = l->dw = 1, l->groups = 1;
			l->c = d[i].out, l->h = ph + 2 * d[i].pad - d[i].k + 1, l->w = pw + 2 * d[i].pad - d[i].k + 1;
			snprintf(l->desc, sizeof l->desc, "%d -> %d, kernel %d%s", pc, l->c, d[i].k, d[i].pad ? ", padding 1" : "");
			l->in = vz_malloc((size_t)pc * ph * pw * sizeof *l->in);
			l->weight = vz_malloc((size_t)l->c * pc * 9 * sizeof *l->weight);
			l->bias = vz_malloc((size_t)l->c * sizeof *l->bias);
			l->out = vz_malloc((size_t)l->c * l->h * l->w * sizeof *l->out);
			if (!l->in || !l->weight || !l->bias || !l->out) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
			memcpy(l->in, prev, (size_t)pc * ph * pw * sizeof *l->in);
			for (int j = 0; j < l->c * pc * 9; j++) l->weight[j] = demo_rand() / 2;
			for (int j = 0; j < l->c; j++) l->bias[j] = demo_rand() / 10;
			for (int c = 0; c < l->c; c++)
				for (int y = 0; y < l->h; y++)
					for (int x = 0; x < l->w; x++) l->out[((size_t)c * l->h + (size_t)y) * l->w + (size_t)x] = conv_at(l, c, y, x, NULL);
		} else if (strcmp(d[i].kind, "ReLU") == 0 || strcmp(d[i].kind, "Flatten") == 0) {
			bool flat = d[i].kind[0] == 'F';
			l->c = flat ? pc * ph * pw : pc, l->h = flat ? 1 : ph, l->w = flat ? 1 : pw;
			size_t n = (size_t)pc * ph * pw;
			l->out = vz_malloc(n * sizeof *l->out);
			if (!l->out) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
			for (size_t j = 0; j < n; j++) l->out[j] = flat ? prev[j] : fmax(prev[j], 0);
		} else if (strcmp(d[i].kind, "MaxPool2d") == 0) {
			l->c = pc, l->h = ph / 2, l->w = pw / 2;
			snprintf(l->desc, sizeof l->desc, "kernel 2, stride 2");
			l->out = vz_malloc((size_t)l->c * l->h * l->w * sizeof *l->out);
			if (!l->out) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
			for (int c = 0; c < pc; c++)
				for (int y = 0; y < l->h; y++)
					for (int x = 0; x < l->w; x++) {
						double m = -INFINITY;
						for (int a = 0; a < 2; a++)
							for (int b = 0; b < 2; b++) m = fmax(m, prev[((size_t)c * ph + (size_t)(2 * y + a)) * pw + (size_t)(2 * x + b)]);
						l->out[((size_t)c * l->h + (size_t)y) * l->w + (size_t)x] = m;
					}
		} else { /* Linear */
			l->c = d[i].out, l->h = l->w = 1;
			snprintf(l->desc, sizeof l->desc, "%d -> %d", pc, l->c);
			l->out = vz_malloc((size_t)l->c * sizeof *l->out);
			if (!l->out) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
			for (int o = 0; o < l->c; o++) {
				double a = 0;
				for (int j = 0; j < pc; j++) a += prev[j] * demo_rand() / 4;
				l->out[o] = a;
			}
		}
		prev = l->out, pc = l->c, ph = l->h, pw = l->w;
	}
	static const char *const names[] = {"circle", "square", "cross", "line", "dot"};
	for (int i = 0; i < 5; i++) snprintf(s->cls[i], sizeof s->cls[i], "%s", names[i]);
	s->ncls = 5;
	return LM_OK;
}

static lm_status check_given(const lm_viz_features *g, const char *fname)
{
	if (!g->input || lm_tensor_ndim(g->input) != 3 || lm_tensor_dtype(g->input) != LM_FLOAT64 ||
	    !lm_tensor_is_contiguous(g->input))
		return lm_set_error(LM_ERR_ARG, "%s: the features scene takes the input as a contiguous float64 (C, H, W)", fname);
	if (g->n < 1 || g->n > MAX_LAYERS)
		return lm_set_error(LM_ERR_ARG, "%s: the features scene draws 1 to %d layers, got %d", fname, MAX_LAYERS, g->n);
	size_t total = 0;
	for (int i = 0; i < g->n; i++) {
		const lm_viz_fmap *m = &g->layers[i];
		if (!m->out || lm_tensor_ndim(m->out) != 3 || lm_tensor_dtype(m->out) != LM_FLOAT64 ||
		    !lm_tensor_is_contiguous(m->out))
			return lm_set_error(LM_ERR_ARG, "%s: the features scene: layer %d's output must be a contiguous float64 "
			                    "(C, H, W)", fname, i + 1);
		total += numel_of(m->out);
		if (m->weight) {
			const int64_t *ws = lm_tensor_shape(m->weight), *is = lm_tensor_shape(m->in), *os = lm_tensor_shape(m->out);
			if (!m->in || lm_tensor_ndim(m->weight) != 4 || lm_tensor_ndim(m->in) != 3 || m->groups < 1 ||
			    ws[0] != os[0] || is[0] != ws[1] * m->groups || ws[2] > 15 || ws[3] > 15 ||
			    (m->bias && (int64_t)numel_of(m->bias) != ws[0]))
				return lm_set_error(LM_ERR_ARG, "%s: the features scene: layer %d's convolution does not fit its input "
				                    "and output", fname, i + 1);
			total += numel_of(m->in);
		}
	}
	if (total > MAX_TOTAL)
		return lm_set_error(LM_ERR_ARG, "%s: the features scene keeps at most %d values of all layers together; this "
		                    "model's outputs have %zu (a smaller input?)", fname, MAX_TOTAL, total);
	return LM_OK;
}

static void *feat_create(const vz_build *b)
{
	const lm_viz_features *g = b->features;
	if (g && check_given(g, b->fname) != LM_OK) return NULL;
	feat_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->demo = !g;
	if (g) {
		snprintf(s->name, sizeof s->name, "%s", g->name);
		snprintf(s->source, sizeof s->source, "%s", g->source && *g->source ? g->source : "given by the caller");
		const int64_t *is = lm_tensor_shape(g->input);
		s->ic = (int)is[0], s->ih = (int)is[1], s->iw = (int)is[2];
		s->input = copy_of(g->input, numel_of(g->input));
		if (!s->input) goto nomem;
		for (int i = 0; i < g->n; i++) {
			const lm_viz_fmap *m = &g->layers[i];
			flayer *l = &s->L[s->n++];
			snprintf(l->name, sizeof l->name, "%s", m->name);
			snprintf(l->kind, sizeof l->kind, "%s", m->kind);
			snprintf(l->desc, sizeof l->desc, "%s", m->desc);
			const int64_t *os = lm_tensor_shape(m->out);
			l->c = (int)os[0], l->h = (int)os[1], l->w = (int)os[2];
			l->out = copy_of(m->out, numel_of(m->out));
			if (m->weight) {
				const int64_t *ws = lm_tensor_shape(m->weight), *ins = lm_tensor_shape(m->in);
				l->conv = true;
				l->ci = (int)ins[0], l->hi = (int)ins[1], l->wi = (int)ins[2], l->kh = (int)ws[2], l->kw = (int)ws[3];
				l->sh = m->stride[0], l->sw = m->stride[1], l->ph = m->padding[0], l->pw = m->padding[1];
				l->dh = m->dilation[0], l->dw = m->dilation[1], l->groups = m->groups;
				l->in = copy_of(m->in, numel_of(m->in));
				l->weight = copy_of(m->weight, numel_of(m->weight));
				l->bias = m->bias ? copy_of(m->bias, numel_of(m->bias)) : NULL;
				if (!l->in || !l->weight || (m->bias && !l->bias)) goto nomem;
			}
		}
		for (int c = 0; c < g->nclasses && c < MAX_CLASSES; c++) {
			snprintf(s->cls[c], sizeof s->cls[c], "%s", g->classes && g->classes[c] ? g->classes[c] : "?");
			vz_utf8_trim(s->cls[c]);
		}
		s->ncls = g->nclasses < MAX_CLASSES ? g->nclasses : MAX_CLASSES;
	} else if (demo(s) != LM_OK) {
		feat_destroy(s);
		return NULL;
	}
	size_t ni = (size_t)s->ic * s->ih * s->iw;
	s->icol = vz_malloc((ni ? ni : 1) * sizeof *s->icol);
	if (!s->icol) goto nomem;
	for (size_t i = 0; i < ni; i++) s->imax = fmax(s->imax, fabs(s->input[i]));
	for (size_t i = 0; i < ni; i++) {
		double t = s->imax > 0 ? fabs(s->input[i]) / s->imax : 0;
		uint8_t v = (uint8_t)lrint(255 * (1 - t)); /* dark ink on white, as CNN Explainer draws digits */
		s->icol[i] = VZ_RGB(v, v, v);
	}
	for (int i = 0; i < s->n; i++) {
		if (alloc_layer(&s->L[i], b->fname) != LM_OK) {
			feat_destroy(s);
			return NULL;
		}
		if (s->L[i].conv) select_cell(&s->L[i]);
	}
	softmax_of(s);
	return s;
nomem:
	vz_error_prefix(0, b->fname);
	feat_destroy(s);
	return NULL;
}

/* ---------------------------------------------------------------- layout */

static int feat_steps(void *p) { feat_scene *s = p; return 1 + s->n + (s->softmax ? 1 : 0); }
static int feat_variants(void *p) { (void)p; return 1; }
static const char *feat_variant_name(void *p, int v) { (void)p, (void)v; return "feature maps"; }
static void feat_set_variant(void *p, int v) { (void)p, (void)v; }

static bool is_vector(const flayer *l) { return !l->conv && l->h == 1 && l->w == 1; }

static void feat_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	feat_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 440 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->top = s->lh * 2.4f;
	int cols = 1 + s->n + (s->softmax ? 1 : 0);
	float colw = W / (float)cols;
	s->in_map = fminf(colw - s->cw, (H - s->top - s->lh * 2) / (float)(s->ic < 3 ? s->ic : 3) - s->lh * 0.5f);
	float x = colw;
	for (int i = 0; i < s->n; i++, x += colw) {
		flayer *l = &s->L[i];
		l->x = x, l->colw = colw;
		int shown = l->c < MAX_DRAWN ? l->c : MAX_DRAWN;
		l->map = is_vector(l) ? fminf(colw * 0.5f, (H - s->top - s->lh * 2) / (float)(l->c < MAX_VEC ? l->c : MAX_VEC))
		                      : fminf(colw - s->cw, (H - s->top - s->lh * 2) / (float)shown - s->lh * 0.3f);
	}
	s->zoom = fminf(W * 0.45f, H - s->top - s->lh * 4);
	s->height = H;
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f) { return (int)floor(f->t + 1e-9); }

/* ---------------------------------------------------------------- drawing */

static void draw_overview(vz_frame *f, feat_scene *s)
{
	char t[64];
	float colw = s->n ? s->L[0].colw : 100;
	vz_text_draw(f, 0, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, vz_tr("input", "输入"));
	for (int c = 0; c < s->ic && c < 3; c++) {
		vz_rect r = vz_r(0, s->top + (float)c * (s->in_map + s->lh * 0.5f), s->in_map * (float)s->iw / (float)fmaxf(s->iw, s->ih),
		                 s->in_map * (float)s->ih / (float)fmaxf(s->iw, s->ih));
		vz_cell *cell = vzs_grid_draw(f, &s->igrid[c], r, s->ih, s->iw, s->icol + (size_t)c * s->ih * s->iw, "input", 0);
		cell->tag = c;
		vz_outline(f, r, 1, vz_th.panel_line);
	}
	for (int i = 0; i < s->n; i++) {
		flayer *l = &s->L[i];
		snprintf(t, sizeof t, "%s %s", l->name, l->kind);
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, colw - s->cw);
		vz_text_draw(f, l->x, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		VZ_SNPRINTF_TR(t, sizeof t, "%d x %d x %d", "%d x %d x %d", l->c, l->h, l->w);
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, colw - s->cw);
		vz_text_draw(f, l->x, s->lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, t);
		if (is_vector(l)) {
			int shown = l->c < MAX_VEC ? l->c : MAX_VEC;
			for (int k = 0; k < shown; k++) {
				vz_rect r = vz_r(l->x, s->top + (float)k * l->map, l->map, l->map * 0.9f);
				vz_fill(f, r, l->col[k]);
				vz_cell *cell = vz_cell_add(f, r, "value");
				cell->tag = i, cell->index = k, cell->value = l->out[k], cell->has_value = true, cell->group = "layer";
			}
			if (l->c > shown) {
				VZ_SNPRINTF_TR(t, sizeof t, "+%d more", "另 %d 个", l->c - shown);
				vz_text_draw(f, l->x, s->top + (float)shown * l->map, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
			}
			continue;
		}
		int shown = l->c < MAX_DRAWN ? l->c : MAX_DRAWN;
		float side = l->map, mw = side * (float)l->w / fmaxf((float)l->w, (float)l->h), mh = side * (float)l->h / fmaxf((float)l->w, (float)l->h);
		for (int k = 0; k < shown; k++) {
			vz_rect r = vz_r(l->x, s->top + (float)k * (side + s->lh * 0.3f), mw, mh);
			vz_cell *cell = vzs_grid_draw(f, &l->grid[k], r, l->h, l->w, l->col + (size_t)k * l->h * l->w, "map", 0);
			cell->tag = i, cell->group = "layer", cell->step = k;
			vz_outline(f, r, 1, vz_th.panel_line);
		}
		if (l->c > shown) {
			VZ_SNPRINTF_TR(t, sizeof t, "+%d maps", "另 %d 张", l->c - shown);
			vz_text_draw(f, l->x, s->top + (float)shown * (side + s->lh * 0.3f), VZ_FONT_TINY, VZ_ALIGN_LEFT,
			             vz_th.text_dim, t);
		}
	}
	if (s->softmax) { /* the probabilities */
		float x = (float)(1 + s->n) * colw, bw = colw - s->cw * 12;
		vz_text_draw(f, x, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, vz_tr("softmax", "softmax"));
		for (int k = 0; k < s->ncls; k++) {
			float y = s->top + (float)k * s->lh * 1.2f;
			snprintf(t, sizeof t, "%s", s->cls[k]);
			vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, s->cw * 10);
			vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
			vz_rect r = vz_r(x + s->cw * 10.5f, y + s->lh * 0.15f, fmaxf((float)s->prob[k] * bw, 1), s->lh * 0.7f);
			vz_fill(f, r, vz_th.active);
			vz_cell *cell = vz_cell_add(f, vz_r(x, y, colw, s->lh * 1.2f), "prob");
			cell->index = k, cell->value = s->prob[k], cell->has_value = true, cell->group = "softmax";
		}
	}
}

/* A k x k window of numbers (the input under the kernel, or the kernel). */
static void number_grid(vz_frame *f, float x, float y, float cell, int rows, int cols, const double *v, vz_color (*col)(double, double),
                        double vmax)
{
	char t[16];
	for (int r = 0; r < rows; r++)
		for (int c = 0; c < cols; c++) {
			vz_rect rc = vz_r(x + (float)c * cell, y + (float)r * cell, cell, cell);
			vz_color bg = col(v[r * cols + c], vmax);
			vz_cell_fill(f, rc, bg, 1, vz_th.panel_line);
			vzs_short(t, sizeof t, v[r * cols + c]);
			if (vz_text_fits(f, VZ_FONT_TINY, t, cell))
				vz_text_draw(f, rc.x + cell / 2, rc.y + cell / 2 - vz_text_height(f, VZ_FONT_TINY) / 2, VZ_FONT_TINY,
				             VZ_ALIGN_CENTER, vz_text_on(bg), t);
		}
}

static void draw_zoom(vz_frame *f, feat_scene *s, int i)
{
	flayer *l = &s->L[i];
	char t[200];
	VZ_TEXTF_TR(f, 0, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "layer %s: %s %s, output %d x %d x %d",
	            "第 %s 层：%s %s，输出 %d x %d x %d", l->name, l->kind, l->desc, l->c, l->h, l->w);
	if (is_vector(l)) {
		int shown = l->c < 64 ? l->c : 64;
		float cell = fminf(s->zoom / 8, s->lh * 2.2f);
		for (int k = 0; k < shown; k++) {
			vz_rect r = vz_r((float)(k % 8) * cell, s->top + (float)(k / 8) * cell, cell, cell);
			vz_cell_fill(f, r, l->col[k], 1, vz_th.panel_line);
			vzs_short(t, sizeof t, l->out[k]);
			if (vz_text_fits(f, VZ_FONT_TINY, t, cell))
				vz_text_draw(f, r.x + cell / 2, r.y + cell / 2 - vz_text_height(f, VZ_FONT_TINY) / 2, VZ_FONT_TINY,
				             VZ_ALIGN_CENTER, vz_text_on(l->col[k]), t);
			vz_cell *c = vz_cell_add(f, r, "value");
			c->tag = i, c->index = k, c->value = l->out[k], c->has_value = true, c->group = "zoom";
		}
		return;
	}
	/* the maps, up to 16 in a 4 x 4 grid */
	int shown = l->c < 16 ? l->c : 16, per = 1;
	while (per * per < shown) per++;
	float side = s->zoom / (float)per - s->cw;
	for (int k = 0; k < shown; k++) {
		vz_rect r = vz_r((float)(k % per) * (side + s->cw), s->top + (float)(k / per) * (side + s->cw), side, side);
		vz_cell *c = vzs_grid_draw(f, &l->zgrid[k], r, l->h, l->w, l->col + (size_t)k * l->h * l->w, "map", 0);
		c->tag = i, c->group = "zoom", c->step = k;
		vz_outline(f, r, 1, vz_th.panel_line);
		if (l->conv && k == l->sel_c) {
			float cw = side / (float)l->w, chh = side / (float)l->h;
			vz_outline(f, vz_r(r.x + (float)l->sel_x * cw - 1, r.y + (float)l->sel_y * chh - 1, cw + 2, chh + 2), 2, vz_th.highlight);
		}
	}
	if (!l->conv) return;
	/* the arithmetic of the selected cell: per input channel (up to 3) the window and the kernel */
	float x0 = s->zoom + 3 * s->cw, y = s->top;
	int cpg = l->ci / l->groups, g = l->sel_c / (l->c / l->groups);
	double abs_terms, v = conv_at(l, l->sel_c, l->sel_y, l->sel_x, &abs_terms);
	double got = l->out[((size_t)l->sel_c * l->h + (size_t)l->sel_y) * l->w + (size_t)l->sel_x];
	VZ_TEXTF_TR(f, x0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	            "map %d, row %d, column %d (the largest of map 1) = bias + sum of window x kernel:",
	            "第 %d 张图第 %d 行第 %d 列（第 1 张图中最大的）= 偏置 + Σ 窗口 × 卷积核：", l->sel_c + 1, l->sel_y + 1,
	            l->sel_x + 1);
	y += s->lh * 1.5f;
	/* a cell holds "-0.123": six characters and a margin */
	int blocks = cpg < 3 ? cpg : 3;
	float room = (s->height - y - s->lh * 3 - (float)blocks * s->lh * 1.6f) / (float)(blocks * l->kh);
	float cell = fminf(fmaxf(s->cw * 6.5f, fminf(s->lh * 2.6f, (s->zoom * 0.9f) / (float)(2 * l->kw + 3))), room);
	double win[15 * 15], ker[15 * 15];
	for (int k = 0; k < cpg && k < 3; k++) {
		int ch = g * cpg + k;
		double kmax = 0, wmax = 0;
		for (int ky = 0; ky < l->kh; ky++)
			for (int kx = 0; kx < l->kw; kx++) {
				int iy = l->sel_y * l->sh - l->ph + ky * l->dh, ix = l->sel_x * l->sw - l->pw + kx * l->dw;
				bool in = iy >= 0 && ix >= 0 && iy < l->hi && ix < l->wi;
				win[ky * l->kw + kx] = in ? l->in[((size_t)ch * l->hi + (size_t)iy) * l->wi + (size_t)ix] : 0;
				ker[ky * l->kw + kx] = l->weight[(((size_t)l->sel_c * cpg + (size_t)k) * l->kh + (size_t)ky) * l->kw + (size_t)kx];
				wmax = fmax(wmax, fabs(win[ky * l->kw + kx])), kmax = fmax(kmax, fabs(ker[ky * l->kw + kx]));
			}
		bool padded = l->ph > 0 || l->pw > 0;
		VZ_TEXTF_TR(f, x0, y, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, "input channel %d%s    kernel", "输入通道 %d%s    卷积核",
		            ch + 1, padded ? vz_tr(" (0 outside the input: padding)", "（输入之外为 0：填充）") : "");
		y += vz_text_height(f, VZ_FONT_TINY) * 1.2f;
		number_grid(f, x0, y, cell, l->kh, l->kw, win, value_color, wmax);
		vz_text_draw(f, x0 + (float)l->kw * cell + cell * 0.5f, y + (float)l->kh * cell / 2 - s->lh / 2, VZ_FONT_SMALL,
		             VZ_ALIGN_LEFT, vz_th.text, "x");
		number_grid(f, x0 + (float)(l->kw + 1.5) * cell, y, cell, l->kh, l->kw, ker, value_color, kmax);
		vz_cell *c = vz_cell_add(f, vz_r(x0, y, (float)(2 * l->kw + 2) * cell, (float)l->kh * cell), "window");
		c->tag = i, c->index = ch, c->group = "arithmetic";
		y += (float)l->kh * cell + s->lh * 0.6f;
	}
	if (cpg > 3) {
		VZ_TEXTF_TR(f, x0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "... and %d more input channels", "……还有 %d 个输入通道",
		            cpg - 3);
		y += s->lh * 1.2f;
	}
	VZ_TEXTF_TR(f, x0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "= %.6g (bias %.4g + %d products), the model gave %.6g",
	            "= %.6g（偏置 %.4g + %d 个乘积），模型给出 %.6g", v, l->bias ? l->bias[l->sel_c] : 0.0,
	            cpg * l->kh * l->kw, got);
	(void)abs_terms;
}

static void draw_softmax(vz_frame *f, feat_scene *s)
{
	char t[96];
	VZ_TEXTF_TR(f, 0, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	            "softmax: p_i = exp(z_i) / sum_j exp(z_j) of the last layer's %d outputs", "softmax：最后一层 %d 个输出的 p_i = exp(z_i) / Σ_j exp(z_j)",
	            s->ncls);
	float bw = s->zoom * 1.2f;
	for (int k = 0; k < s->ncls; k++) {
		float y = s->top + (float)k * s->lh * 1.4f;
		snprintf(t, sizeof t, "%s", s->cls[k]);
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, s->cw * 14);
		vz_text_draw(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		vz_rect r = vz_r(s->cw * 15, y + s->lh * 0.15f, fmaxf((float)s->prob[k] * bw, 1), s->lh * 0.8f);
		vz_fill(f, r, vz_th.active);
		snprintf(t, sizeof t, "z %.4g  p %.4f", s->logit[k], s->prob[k]);
		vz_text_draw(f, r.x + r.w + s->cw, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, t);
		vz_cell *c = vz_cell_add(f, vz_r(0, y, s->cw * 15 + bw, s->lh * 1.4f), "prob");
		c->index = k, c->value = s->prob[k], c->has_value = true, c->group = "softmax";
	}
}

static void feat_draw(void *p, vz_frame *f)
{
	feat_scene *s = p;
	int st = step_of(f);
	if (st <= 0) draw_overview(f, s);
	else if (st <= s->n) draw_zoom(f, s, st - 1);
	else draw_softmax(f, s);
}

/* ---------------------------------------------------------------- text */

static const char *src_of(const feat_scene *s)
{
	return s->demo ? vz_tr("random weights and input: a demonstration (computed here, CPU)", "随机权重与输入：演示（在此计算，CPU）")
	               : s->source;
}

static void feat_title(void *p, char *buf, size_t cap)
{
	feat_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "feature maps of %s on one %d x %d x %d input; %s", "%s 在一个 %d x %d x %d 输入上的特征图；%s",
	               s->name, s->ic, s->ih, s->iw, src_of(s));
}

static int top_class(const feat_scene *s)
{
	int b = 0;
	for (int i = 1; i < s->ncls; i++)
		if (s->prob[i] > s->prob[b]) b = i;
	return b;
}

static void feat_step_label(void *p, int step, char *buf, size_t cap)
{
	feat_scene *s = p;
	if (step == 0) {
		snprintf(buf, cap, "%s", vz_tr("every layer's output for the input (blue negative, orange positive, one scale per layer)",
		                               "每层对该输入的输出（蓝为负，橙为正，每层一个比例尺）"));
		if (s->softmax)
			VZ_APPEND_TR(buf, cap, "; predicted %s (p = %.3f)", "；预测为 %s（p = %.3f）", s->cls[top_class(s)],
			             s->prob[top_class(s)]);
		return;
	}
	if (step <= s->n) {
		const flayer *l = &s->L[step - 1];
		VZ_SNPRINTF_TR(buf, cap, "layer %s (%s): %d maps of %d x %d, values in [-%.3g, %.3g]", "第 %s 层（%s）：%d 张 %d x %d 的图，值在 [-%.3g, %.3g]",
		               l->name, l->kind, l->c, l->h, l->w, l->vmax, l->vmax);
		return;
	}
	VZ_SNPRINTF_TR(buf, cap, "softmax of the last layer: %s with p = %.3f", "最后一层的 softmax：%s，p = %.3f", s->cls[top_class(s)],
	               s->prob[top_class(s)]);
}

static void feat_counters(void *p, vz_panel *pn)
{
	feat_scene *s = p;
	int col = vz_panel_column(pn, vz_tr("network", "网络"), src_of(s));
	vz_panel_set(pn, col, "layers", s->n);
	double vals = 0;
	int convs = 0;
	double worst = 0;
	for (int i = 0; i < s->n; i++) {
		const flayer *l = &s->L[i];
		vals += (double)l->c * l->h * l->w;
		if (!l->conv) continue;
		convs++;
		/* the arithmetic checked at every cell of the first map against the model's value */
		for (int y = 0; y < l->h; y++)
			for (int x = 0; x < l->w; x++) {
				double ab, v = conv_at(l, 0, y, x, &ab), got = l->out[(size_t)y * l->w + (size_t)x];
				worst = fmax(worst, fabs(v - got) / (ab + 1e-30));
			}
	}
	vz_panel_set(pn, col, "values", vals);
	vz_panel_set(pn, col, "conv_layers", convs);
	vz_panel_set(pn, col, "arith_rel_err", worst);
	if (s->softmax) {
		vz_panel_set(pn, col, "top_p", s->prob[top_class(s)]);
		vz_panel_set(pn, col, "top_class", top_class(s) + 1);
	}
	vz_panel_note(pn, "%s", vz_tr("arith_rel_err: the largest |bias + sum of products - the model's value| / sum |products| "
	                              "over the first map of every Conv2d, the sums recomputed here from the copies of its "
	                              "input and weights",
	                              "arith_rel_err：每个 Conv2d 第一张图上 |偏置 + 乘积之和 − 模型的值| / Σ|乘积| 的最大值，"
	                              "乘积由这里根据其输入和权重的副本重算"));
}

static void feat_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	feat_scene *s = p;
	if (strcmp(c->kind, "prob") == 0 && c->index >= 0 && c->index < s->ncls) {
		VZ_SNPRINTF_TR(buf, cap, "%s: logit %.5g, probability %.5f", "%s：logit %.5g，概率 %.5f", s->cls[c->index],
		               s->logit[c->index], s->prob[c->index]);
		return;
	}
	if (strcmp(c->kind, "input") == 0) {
		if (c->row < 0 || c->col < 0 || c->row >= s->ih || c->col >= s->iw) return;
		VZ_SNPRINTF_TR(buf, cap, "input channel %d, row %d, column %d: %.5g", "输入通道 %d，第 %d 行第 %d 列：%.5g", c->tag + 1,
		               c->row + 1, c->col + 1, s->input[((size_t)c->tag * s->ih + (size_t)c->row) * s->iw + (size_t)c->col]);
		return;
	}
	int i = c->tag;
	if (i < 0 || i >= s->n) return;
	const flayer *l = &s->L[i];
	if (strcmp(c->kind, "value") == 0 && c->index >= 0 && c->index < l->c) {
		VZ_SNPRINTF_TR(buf, cap, "layer %s (%s), output %d: %.5g", "第 %s 层（%s），输出 %d：%.5g", l->name, l->kind, c->index + 1,
		               l->out[c->index]);
		return;
	}
	if (strcmp(c->kind, "map") == 0) {
		int k = c->step, y = c->row, x = c->col;
		if (k < 0 || k >= l->c || y < 0 || x < 0 || y >= l->h || x >= l->w) return;
		double v = l->out[((size_t)k * l->h + (size_t)y) * l->w + (size_t)x];
		VZ_SNPRINTF_TR(buf, cap, "layer %s (%s), map %d, row %d, column %d: %.5g", "第 %s 层（%s），第 %d 张图第 %d 行第 %d 列：%.5g",
		               l->name, l->kind, k + 1, y + 1, x + 1, v);
		if (l->conv) {
			double ab, r = conv_at(l, k, y, x, &ab);
			VZ_APPEND_TR(buf, cap, "\n= bias %.4g + %d products over input rows %d.. and columns %d.. (stride %d, padding %d, "
			                       "dilation %d) = %.6g",
			             "\n= 偏置 %.4g + %d 个乘积，输入从第 %d 行、第 %d 列起（步长 %d，填充 %d，空洞 %d）= %.6g",
			             l->bias ? l->bias[k] : 0.0, (l->ci / l->groups) * l->kh * l->kw, y * l->sh - l->ph + 1,
			             x * l->sw - l->pw + 1, l->sh, l->ph, l->dh, r);
		} else if (strcmp(l->kind, "ReLU") == 0 && i > 0 && s->L[i - 1].c == l->c && s->L[i - 1].h == l->h) {
			double in = s->L[i - 1].out[((size_t)k * l->h + (size_t)y) * l->w + (size_t)x];
			VZ_APPEND_TR(buf, cap, "\n= max(0, %.5g): the input from layer %s", "\n= max(0, %.5g)：来自第 %s 层的输入", in,
			             s->L[i - 1].name);
		}
	}
}

static const vz_option feat_options[] = {
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_features = {
	.name = "features",
	.summary = "a CNN's feature maps for one input, layer by layer (CNN Explainer's view): the convolution arithmetic "
	           "of a cell, the softmax of the output",
	.patterns = "",
	.options = feat_options,
	.create = feat_create,
	.destroy = feat_destroy,
	.steps = feat_steps,
	.variants = feat_variants,
	.variant_name = feat_variant_name,
	.set_variant = feat_set_variant,
	.layout = feat_layout,
	.draw = feat_draw,
	.title = feat_title,
	.step_label = feat_step_label,
	.counters = feat_counters,
	.describe = feat_describe,
};
