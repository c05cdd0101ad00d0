/*
 * detection.c — the detection scene: images with their ground-truth boxes and a detector's
 * predicted boxes, before and after non-maximum suppression, each kept box marked as a true or a
 * false positive at an IoU threshold (the rule mAP counts with).
 *
 * Steps: 0 the images and their ground truth (dashed); 1 every candidate box the detector gave
 * (thin, faded by score); 2 the boxes NMS kept, labelled "class score", green when it matches a
 * ground-truth box of its class at IoU >= the threshold not matched by a higher-scored box (a true
 * positive), red when not; the ground truth boxes no kept box matched (misses) hatched.
 * Counters: per step the boxes drawn, and at step 2 TP, FP, misses (FN), precision, recall and
 * the mean IoU of the true positives, all computed here from the boxes given. Hovering a box
 * tells its class, score, best IoU with the truth and its verdict.
 * Built from viz.show('detection', {images =, truth =, pred =, ...}) (lua/lumen/viz.lua checks
 * the data and runs lm.vision.nms when no keep list is given), or from options: a demonstration
 * of random rectangles and noisy candidates around them plus false ones (Philox keyed by seed),
 * labelled as such, NMS run here.
 * Read next: docs/viz.md ("detection"), lua/lumen/vision.lua, attention.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_IMAGES 16
#define MAX_SIDE   256
#define MAX_BOXES  4096
#define MAX_CLASSES 32
#define NAME_CAP   24

enum { ST_TRUTH, ST_CANDIDATES, ST_KEPT, ST_COUNT };

typedef struct det_scene {
	char fname[32], source[160];
	bool demo;
	int n, h, w;                       /* images */
	vz_color *pix;                     /* n x h x w */
	vzs_grid grid[MAX_IMAGES];
	lm_viz_box *truth, *pred;
	int ntruth, npred, nclasses;
	char cls[MAX_CLASSES][NAME_CAP];
	double iou_threshold;
	/* computed at step 2 */
	int8_t *verdict;                   /* per prediction: 1 TP, 0 FP, -1 not kept */
	double *best_iou;                  /* per prediction: its best IoU with a truth box of its class */
	bool *matched;                     /* per truth box */
	int tp, fp, fn, kept;
	double mean_iou;
	/* layout (world) */
	int cols, rows;
	float cell, gap, lh, cw, top;
} det_scene;

/* ---------------------------------------------------------------- boxes */

static double iou(const lm_viz_box *a, const lm_viz_box *b)
{
	double iw = fmin(a->x2, b->x2) - fmax(a->x1, b->x1), ih = fmin(a->y2, b->y2) - fmax(a->y1, b->y1);
	double inter = iw > 0 && ih > 0 ? iw * ih : 0;
	double uni = (a->x2 - a->x1) * (a->y2 - a->y1) + (b->x2 - b->x1) * (b->y2 - b->y1) - inter;
	return uni > 0 ? inter / uni : 0;
}

/* Kept predictions by decreasing score (ties: the lower index) are matched greedily to the
 * unmatched truth box of their image and class with the highest IoU; a match at IoU >= the
 * threshold is a true positive (the rule of PASCAL VOC's AP). */
static void match(det_scene *s)
{
	int *order = vz_malloc((size_t)(s->npred ? s->npred : 1) * sizeof *order), k = 0;
	if (!order) return;
	for (int i = 0; i < s->npred; i++) {
		s->verdict[i] = -1;
		s->best_iou[i] = 0;
		if (s->pred[i].kept) order[k++] = i;
	}
	for (int a = 1; a < k; a++) /* insertion sort: k is small */
		for (int b = a; b > 0; b--) {
			const lm_viz_box *p = &s->pred[order[b - 1]], *q = &s->pred[order[b]];
			if (p->score > q->score || (p->score == q->score && order[b - 1] < order[b])) break;
			int t = order[b - 1];
			order[b - 1] = order[b], order[b] = t;
		}
	for (int t = 0; t < s->ntruth; t++) s->matched[t] = false;
	s->tp = s->fp = 0;
	s->kept = k;
	double sum = 0;
	for (int a = 0; a < k; a++) {
		int i = order[a], best = -1;
		double bi = 0;
		for (int t = 0; t < s->ntruth; t++) {
			const lm_viz_box *g = &s->truth[t];
			if (g->image != s->pred[i].image || g->cls != s->pred[i].cls) continue;
			double v = iou(&s->pred[i], g);
			if (v > s->best_iou[i]) s->best_iou[i] = v;
			if (!s->matched[t] && v > bi) bi = v, best = t;
		}
		if (best >= 0 && bi >= s->iou_threshold) {
			s->matched[best] = true;
			s->verdict[i] = 1;
			s->tp++;
			sum += bi;
		} else {
			s->verdict[i] = 0;
			s->fp++;
		}
	}
	s->fn = 0;
	for (int t = 0; t < s->ntruth; t++) s->fn += !s->matched[t];
	s->mean_iou = s->tp ? sum / s->tp : 0;
	vz_free(order);
}

/* ---------------------------------------------------------------- the demonstration */

static uint32_t demo_u32(int64_t seed, uint32_t stream, uint32_t i)
{
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)((uint64_t)seed >> 32) ^ stream};
	uint32_t ctr[4] = {i, 0, 0, 0}, r[4];
	lm_philox4x32(ctr, key, r);
	return r[0];
}

static double demo_unit(int64_t seed, uint32_t stream, uint32_t *i) { return demo_u32(seed, stream, (*i)++) / 4294967296.0; }

/* Four 48 x 48 images, each with 1..3 rectangles (class 1 "square" filled, class 2 "frame" an
 * outline) on faint noise; candidates: each object's box jittered 3 to 5 times (scores around
 * 0.8) and 2 false boxes per image (scores around 0.35); NMS at IoU 0.5. */
static lm_status demo(det_scene *s, int64_t seed)
{
	s->n = 4, s->h = 48, s->w = 48, s->nclasses = 2;
	snprintf(s->cls[0], NAME_CAP, "square");
	snprintf(s->cls[1], NAME_CAP, "frame");
	s->truth = vz_calloc(12, sizeof *s->truth);
	s->pred = vz_calloc(12 * 5 + 8, sizeof *s->pred);
	s->pix = vz_malloc((size_t)s->n * s->h * s->w * sizeof *s->pix);
	double *img = vz_calloc((size_t)s->h * s->w, sizeof *img);
	if (!s->truth || !s->pred || !s->pix || !img) {
		vz_free(img);
		return lm_set_error(LM_ERR_NOMEM, "%s: no memory for the detection demonstration", s->fname);
	}
	uint32_t k = 0;
	for (int m = 0; m < s->n; m++) {
		for (int p = 0; p < s->h * s->w; p++) img[p] = 0.12 * demo_unit(seed, 1, &k);
		int objects = 1 + (int)(demo_unit(seed, 2, &k) * 3);
		for (int o = 0; o < objects; o++) {
			lm_viz_box b = {0};
			double bw = 10 + 14 * demo_unit(seed, 3, &k), bh = 10 + 14 * demo_unit(seed, 3, &k);
			b.x1 = floor(demo_unit(seed, 4, &k) * (s->w - bw)), b.y1 = floor(demo_unit(seed, 4, &k) * (s->h - bh));
			b.x2 = b.x1 + floor(bw), b.y2 = b.y1 + floor(bh);
			b.cls = 1 + (int)(demo_unit(seed, 5, &k) * 2);
			b.image = m;
			for (int y = (int)b.y1; y < (int)b.y2; y++)
				for (int x = (int)b.x1; x < (int)b.x2; x++) {
					bool edge = y < b.y1 + 2 || y >= b.y2 - 2 || x < b.x1 + 2 || x >= b.x2 - 2;
					if (b.cls == 1 || edge) img[y * s->w + x] = 0.85;
				}
			s->truth[s->ntruth++] = b;
			int copies = 3 + (int)(demo_unit(seed, 6, &k) * 3);
			for (int c = 0; c < copies; c++) {
				lm_viz_box q = b;
				double jx = (demo_unit(seed, 7, &k) - 0.5) * 0.16 * bw, jy = (demo_unit(seed, 7, &k) - 0.5) * 0.16 * bh;
				q.x1 = fmax(0, b.x1 + jx), q.y1 = fmax(0, b.y1 + jy);
				q.x2 = fmin(s->w, b.x2 + jx + (demo_unit(seed, 8, &k) - 0.5) * 2);
				q.y2 = fmin(s->h, b.y2 + jy + (demo_unit(seed, 8, &k) - 0.5) * 2);
				q.score = 0.6 + 0.35 * demo_unit(seed, 9, &k);
				s->pred[s->npred++] = q;
			}
		}
		for (int c = 0; c < 2; c++) {
			lm_viz_box q = {0};
			q.x1 = floor(demo_unit(seed, 10, &k) * 30), q.y1 = floor(demo_unit(seed, 10, &k) * 30);
			q.x2 = q.x1 + 8 + floor(demo_unit(seed, 11, &k) * 10), q.y2 = q.y1 + 8 + floor(demo_unit(seed, 11, &k) * 10);
			q.cls = 1 + c, q.image = m, q.score = 0.2 + 0.3 * demo_unit(seed, 12, &k);
			s->pred[s->npred++] = q;
		}
		for (int p = 0; p < s->h * s->w; p++) {
			uint8_t g = (uint8_t)lrint(255 * fmin(fmax(img[p], 0), 1));
			s->pix[(size_t)m * s->h * s->w + (size_t)p] = VZ_RGB(g, g, g);
		}
	}
	vz_free(img);
	/* greedy NMS per image and class at 0.5 (what lm.vision.nms does for one class) */
	for (int i = 0; i < s->npred; i++) s->pred[i].kept = true;
	for (int i = 0; i < s->npred; i++) {
		if (!s->pred[i].kept) continue;
		for (int j = 0; j < s->npred; j++) {
			if (j == i || !s->pred[j].kept || s->pred[j].image != s->pred[i].image || s->pred[j].cls != s->pred[i].cls)
				continue;
			bool lower = s->pred[j].score < s->pred[i].score || (s->pred[j].score == s->pred[i].score && j > i);
			if (lower && iou(&s->pred[i], &s->pred[j]) > 0.5) s->pred[j].kept = false;
		}
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- create */

static void det_destroy(void *p)
{
	det_scene *s = p;
	if (!s) return;
	for (int i = 0; i < MAX_IMAGES; i++) vzs_grid_free(&s->grid[i]);
	vz_free(s->pix), vz_free(s->truth), vz_free(s->pred), vz_free(s->verdict), vz_free(s->best_iou);
	vz_free(s->matched);
	vz_free(s);
}

static lm_status check_box(const lm_viz_box *b, const lm_viz_detection *d, const char *what, int i,
                           const char *fname)
{
	if (b->image < 0 || b->image >= d->n)
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene's %s box %d is on image %d of %d", fname, what, i + 1,
		                    b->image + 1, d->n);
	if (b->cls < 1 || b->cls > d->nclasses)
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene's %s box %d has class %d (classes 1..%d)", fname,
		                    what, i + 1, b->cls, d->nclasses);
	if (!(b->x1 <= b->x2 && b->y1 <= b->y2) || !isfinite(b->x1 + b->x2 + b->y1 + b->y2 + b->score))
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene's %s box %d is (%g, %g, %g, %g): corners must be "
		                    "x1 <= x2 and y1 <= y2", fname, what, i + 1, b->x1, b->y1, b->x2, b->y2);
	return LM_OK;
}

static lm_status check_given(const lm_viz_detection *d, const char *fname)
{
	if (d->n < 1 || d->n > MAX_IMAGES || d->h < 1 || d->w < 1 || d->h > MAX_SIDE || d->w > MAX_SIDE)
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene draws 1 to %d images of at most %d x %d pixels, got "
		                    "%d of %d x %d", fname, MAX_IMAGES, MAX_SIDE, MAX_SIDE, d->n, d->h, d->w);
	if (d->nclasses < 1 || d->nclasses > MAX_CLASSES)
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene takes 1 to %d classes, got %d", fname, MAX_CLASSES,
		                    d->nclasses);
	if (d->ntruth < 0 || d->npred < 0 || d->ntruth > MAX_BOXES || d->npred > MAX_BOXES)
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene draws at most %d boxes of each kind", fname, MAX_BOXES);
	if (!(d->iou_threshold > 0 && d->iou_threshold <= 1))
		return lm_set_error(LM_ERR_ARG, "%s: the detection scene's iou threshold must be in (0, 1], got %g", fname,
		                    d->iou_threshold);
	for (int i = 0; i < d->ntruth; i++)
		if (check_box(&d->truth[i], d, "truth", i, fname)) return lm_last_status();
	for (int i = 0; i < d->npred; i++)
		if (check_box(&d->pred[i], d, "predicted", i, fname)) return lm_last_status();
	return LM_OK;
}

static void *det_create(const vz_build *b)
{
	const lm_viz_detection *d = b->detection;
	if (d && check_given(d, b->fname) != LM_OK) return NULL;
	det_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->demo = !d;
	s->iou_threshold = d ? d->iou_threshold : vz_opt_number(b->opts, "iou", 0.5);
	if (d) {
		s->n = d->n, s->h = d->h, s->w = d->w, s->nclasses = d->nclasses;
		s->ntruth = d->ntruth, s->npred = d->npred;
		size_t np = (size_t)s->n * s->h * s->w;
		s->pix = vz_malloc(np * sizeof *s->pix);
		s->truth = vz_malloc((size_t)(s->ntruth ? s->ntruth : 1) * sizeof *s->truth);
		s->pred = vz_malloc((size_t)(s->npred ? s->npred : 1) * sizeof *s->pred);
		if (!s->pix || !s->truth || !s->pred) goto nomem;
		for (size_t i = 0; i < np; i++) {
			uint8_t g = (uint8_t)lrint(255 * fmin(fmax(isfinite(d->images[i]) ? d->images[i] : 0, 0), 1));
			s->pix[i] = VZ_RGB(g, g, g);
		}
		if (s->ntruth) memcpy(s->truth, d->truth, (size_t)s->ntruth * sizeof *s->truth);
		if (s->npred) memcpy(s->pred, d->pred, (size_t)s->npred * sizeof *s->pred);
		for (int c = 0; c < s->nclasses; c++) {
			snprintf(s->cls[c], NAME_CAP, "%s", d->classes && d->classes[c] ? d->classes[c] : "?");
			vz_utf8_trim(s->cls[c]);
		}
		snprintf(s->source, sizeof s->source, "%s", d->source && *d->source ? d->source : "given by the caller");
	} else if (demo(s, vz_opt_int(b->opts, "seed", 0)) != LM_OK) {
		det_destroy(s);
		return NULL;
	}
	s->verdict = vz_malloc((size_t)(s->npred ? s->npred : 1));
	s->best_iou = vz_malloc((size_t)(s->npred ? s->npred : 1) * sizeof *s->best_iou);
	s->matched = vz_malloc((size_t)(s->ntruth ? s->ntruth : 1) * sizeof *s->matched);
	if (!s->verdict || !s->best_iou || !s->matched) goto nomem;
	match(s);
	return s;
nomem:
	vz_error_prefix(0, b->fname);
	det_destroy(s);
	return NULL;
}

/* ---------------------------------------------------------------- layout and drawing */

static int det_steps(void *p) { (void)p; return ST_COUNT; }
static int det_variants(void *p) { (void)p; return 1; }
static const char *det_variant_name(void *p, int v) { (void)p, (void)v; return "boxes"; }
static void det_set_variant(void *p, int v) { (void)p, (void)v; }

static void det_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	det_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 800 * c->scale), H = fmaxf(c->h, 420 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	s->top = s->lh * 1.3f;
	s->gap = s->cw * 1.5f;
	float legend = s->lh * 3.2f, best = 0;
	for (int cols = 1; cols <= s->n; cols++) { /* the grid of images that makes them largest */
		int rows = (s->n + cols - 1) / cols;
		float cell = fminf((W - (float)(cols - 1) * s->gap) / (float)cols / (float)s->w,
		                   (H - s->top - legend - (float)(rows - 1) * (s->gap + s->lh)) / (float)rows / (float)s->h);
		if (cell > best) best = cell, s->cols = cols, s->rows = rows;
	}
	s->cell = best;
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f) { return (int)floor(f->t + 1e-9); }

static vz_rect image_rect(const det_scene *s, int m)
{
	int r = m / s->cols, c = m % s->cols;
	return vz_r((float)c * ((float)s->w * s->cell + s->gap), s->top + (float)r * ((float)s->h * s->cell + s->gap + s->lh),
	            (float)s->w * s->cell, (float)s->h * s->cell);
}

static vz_rect box_rect(const det_scene *s, const lm_viz_box *b)
{
	vz_rect r = image_rect(s, b->image);
	return vz_r(r.x + (float)b->x1 * s->cell, r.y + (float)b->y1 * s->cell, fmaxf((float)(b->x2 - b->x1) * s->cell, 1),
	            fmaxf((float)(b->y2 - b->y1) * s->cell, 1));
}

static vz_color class_color(int cls) { return vz_category(cls - 1); }

static void dashed_box(vz_frame *f, vz_rect r, vz_color c)
{
	float d = 4;
	vz_dashed(f, r.x, r.y, r.x + r.w, r.y, 2, d, c);
	vz_dashed(f, r.x + r.w, r.y, r.x + r.w, r.y + r.h, 2, d, c);
	vz_dashed(f, r.x + r.w, r.y + r.h, r.x, r.y + r.h, 2, d, c);
	vz_dashed(f, r.x, r.y + r.h, r.x, r.y, 2, d, c);
}

static const vz_color tp_color = VZ_RGB(0, 158, 115), fp_color = VZ_RGB(213, 94, 0);

/* Labels placed in this frame: a label that would overlap one placed before (or leave its image)
 * is not drawn (the box's hover still says everything); boxes are labelled best first. */
#define MAX_LABELS 512
typedef struct placed {
	vz_rect r[MAX_LABELS];
	int n;
} placed;

static bool overlaps(vz_rect a, vz_rect b)
{
	return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

static bool place(placed *pl, vz_rect r, vz_rect inside)
{
	if (pl->n >= MAX_LABELS || r.x < inside.x || r.y < inside.y || r.x + r.w > inside.x + inside.w ||
	    r.y + r.h > inside.y + inside.h)
		return false;
	for (int i = 0; i < pl->n; i++)
		if (overlaps(pl->r[i], r)) return false;
	pl->r[pl->n++] = r;
	return true;
}

/* The kept boxes' order for labelling: by decreasing score. */
static int *by_score(const det_scene *s)
{
	int *o = vz_malloc((size_t)(s->npred ? s->npred : 1) * sizeof *o);
	if (!o) return NULL;
	for (int i = 0; i < s->npred; i++) o[i] = i;
	for (int a = 1; a < s->npred; a++)
		for (int b = a; b > 0 && s->pred[o[b]].score > s->pred[o[b - 1]].score; b--) {
			int t = o[b];
			o[b] = o[b - 1], o[b - 1] = t;
		}
	return o;
}

static void det_draw(void *p, vz_frame *f)
{
	det_scene *s = p;
	int st = step_of(f);
	if (st >= ST_COUNT) st = ST_COUNT - 1;
	char t[96];
	for (int m = 0; m < s->n; m++) {
		vz_rect r = image_rect(s, m);
		vz_cell *c = vzs_grid_draw(f, &s->grid[m], r, s->h, s->w, s->pix + (size_t)m * s->h * s->w, "pixel", 0);
		c->group = "image", c->tag = m;
		vz_outline(f, r, 1, vz_th.panel_line);
		int nt = 0, nc = 0, nk = 0;
		for (int i = 0; i < s->ntruth; i++) nt += s->truth[i].image == m;
		for (int i = 0; i < s->npred; i++) nc += s->pred[i].image == m, nk += s->pred[i].image == m && s->pred[i].kept;
		if (st == ST_TRUTH)
			VZ_SNPRINTF_TR(t, sizeof t, "image %d: %d objects", "图 %d：%d 个物体", m + 1, nt);
		else if (st == ST_CANDIDATES)
			VZ_SNPRINTF_TR(t, sizeof t, "image %d: %d candidates", "图 %d：%d 个候选框", m + 1, nc);
		else
			VZ_SNPRINTF_TR(t, sizeof t, "image %d: %d kept of %d", "图 %d：保留 %d / %d", m + 1, nk, nc);
		vz_text_fit(f, VZ_FONT_SMALL, t, sizeof t, r.w);
		vz_text_draw(f, r.x, r.y + r.h + s->lh * 0.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, t);
	}
	placed *pl = vz_calloc(1, sizeof *pl); /* NULL (no memory): no labels */
	float th = vz_text_height(f, VZ_FONT_TINY);
	for (int i = 0; i < s->ntruth; i++) { /* the truth: dashed, hatched when missed at step 2 */
		vz_rect r = box_rect(s, &s->truth[i]);
		bool missed = st == ST_KEPT && !s->matched[i];
		if (missed) vz_hatch(f, r, VZ_RGB(0, 0, 0), vz_fade(fp_color, 0.35));
		dashed_box(f, r, st == ST_TRUTH ? class_color(s->truth[i].cls) : VZ_RGB(255, 255, 255));
		const char *name = s->cls[s->truth[i].cls - 1];
		vz_rect lr = vz_r(r.x + 2, r.y + 1, vz_text_width(f, VZ_FONT_TINY, name), th);
		if (st == ST_TRUTH && pl && place(pl, lr, image_rect(s, s->truth[i].image)))
			vz_text_draw(f, lr.x, lr.y, VZ_FONT_TINY, VZ_ALIGN_LEFT, class_color(s->truth[i].cls), name);
		vz_cell *c = vz_cell_add(f, r, "truth");
		c->index = i, c->tag = s->truth[i].image, c->state = missed ? "missed" : (st == ST_KEPT ? "matched" : "truth");
	}
	if (st == ST_TRUTH) {
		vz_free(pl);
		return;
	}
	int *order = st == ST_KEPT ? by_score(s) : NULL;
	for (int a = 0; a < s->npred; a++) {
		int i = order ? order[a] : a;
		const lm_viz_box *b = &s->pred[i];
		if (st == ST_KEPT && !b->kept) continue;
		vz_rect r = box_rect(s, b);
		vz_color col = st == ST_CANDIDATES ? vz_fade(class_color(b->cls), 0.35 + 0.65 * fmin(fmax(b->score, 0), 1))
		                                   : (s->verdict[i] == 1 ? tp_color : fp_color);
		vz_outline(f, r, st == ST_KEPT ? 3 : 1.5f, col);
		if (st == ST_KEPT && pl) {
			snprintf(t, sizeof t, "%s %.2f", s->cls[b->cls - 1], b->score);
			vz_rect lr = vz_r(r.x, r.y - th, vz_text_width(f, VZ_FONT_TINY, t) + 2, th);
			if (!place(pl, lr, image_rect(s, b->image))) lr.y = r.y; /* inside the box's top instead */
			if (lr.y == r.y && !place(pl, lr, image_rect(s, b->image))) lr.w = 0;
			if (lr.w > 0) {
				vz_fill(f, lr, col);
				vz_text_draw(f, lr.x + 1, lr.y, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_text_on(col), t);
			}
		}
		vz_cell *c = vz_cell_add(f, r, "box");
		c->index = i, c->tag = b->image, c->value = b->score, c->has_value = true;
		c->state = st == ST_CANDIDATES ? (b->kept ? "candidate kept" : "candidate suppressed")
		                               : (s->verdict[i] == 1 ? "TP" : "FP");
	}
	vz_free(order);
	vz_free(pl);
	/* the legend */
	float y = s->top + (float)s->rows * ((float)s->h * s->cell + s->gap + s->lh), x = 0;
	if (st == ST_KEPT) {
		x = vzs_legend(f, x, y, tp_color, false, vz_tr("true positive", "真正例"));
		x = vzs_legend(f, x, y, fp_color, false, vz_tr("false positive", "假正例"));
		x = vzs_legend(f, x, y, VZ_RGB(0, 0, 0), true, vz_tr("missed object (dashed: ground truth)", "漏检（虚线：真实框）"));
	} else {
		for (int c = 0; c < s->nclasses && c < 8; c++) x = vzs_legend(f, x, y, class_color(c + 1), false, s->cls[c]);
	}
	(void)x;
}

/* ---------------------------------------------------------------- text */

static const char *src_of(const det_scene *s)
{
	return s->demo ? vz_tr("random boxes: a demonstration", "随机框：演示") : s->source;
}

static void det_title(void *p, char *buf, size_t cap)
{
	det_scene *s = p;
	VZ_SNPRINTF_TR(buf, cap, "detection: %d image%s, %d objects, %d candidate boxes; %s",
	               "检测：%d 张图%s，%d 个物体，%d 个候选框；%s", s->n, s->n > 1 && !vz_zh() ? "s" : "", s->ntruth,
	               s->npred, src_of(s));
}

static void det_step_label(void *p, int step, char *buf, size_t cap)
{
	det_scene *s = p;
	if (step == ST_TRUTH)
		VZ_SNPRINTF_TR(buf, cap, "the ground truth: %d boxes (dashed, coloured by class)", "真实框：%d 个（虚线，按类别着色）",
		               s->ntruth);
	else if (step == ST_CANDIDATES)
		VZ_SNPRINTF_TR(buf, cap, "every candidate the detector gave: %d boxes (faded by score)",
		               "检测器给出的全部候选框：%d 个（按得分淡化）", s->npred);
	else
		VZ_SNPRINTF_TR(buf, cap, "after non-maximum suppression: %d kept; at IoU >= %.2f: %d TP, %d FP, %d missed",
		               "非极大值抑制之后：保留 %d 个；IoU >= %.2f 时：%d 个真正例，%d 个假正例，%d 个漏检", s->kept,
		               s->iou_threshold, s->tp, s->fp, s->fn);
}

static void det_counters(void *p, vz_panel *pn)
{
	det_scene *s = p;
	int col = vz_panel_column(pn, vz_tr("boxes", "框"), src_of(s));
	vz_panel_set(pn, col, "images", s->n);
	vz_panel_set(pn, col, "truth", s->ntruth);
	vz_panel_set(pn, col, "candidates", s->npred);
	vz_panel_set(pn, col, "kept", s->kept);
	vz_panel_set(pn, col, "TP", s->tp);
	vz_panel_set(pn, col, "FP", s->fp);
	vz_panel_set(pn, col, "missed", s->fn);
	vz_panel_set(pn, col, "precision", s->kept ? (double)s->tp / s->kept : 0);
	vz_panel_set(pn, col, "recall", s->ntruth ? (double)s->tp / s->ntruth : 0);
	vz_panel_set(pn, col, "mean_IoU_TP", s->mean_iou);
	VZ_NOTE_TR(pn, "computed by the scene from the boxes given: a kept box (by decreasing score) is a TP when it "
	               "overlaps an unmatched ground-truth box of its class at IoU >= %.2f; precision TP / kept, recall "
	               "TP / truth",
	           "由场景根据给定的框计算：按得分从高到低，保留的框与同类、尚未匹配的真实框 IoU >= %.2f 时是真正例；"
	           "精确率 TP / 保留数，召回率 TP / 真实框数",
	           s->iou_threshold);
}

static void det_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	det_scene *s = p;
	if (strcmp(c->kind, "box") == 0 && c->index >= 0 && c->index < s->npred) {
		const lm_viz_box *b = &s->pred[c->index];
		VZ_SNPRINTF_TR(buf, cap, "predicted box %d on image %d: %s, score %.3f, (%.1f, %.1f)-(%.1f, %.1f); best IoU "
		               "with a %s of the truth %.3f",
		               "预测框 %d（图 %d）：%s，得分 %.3f，(%.1f, %.1f)-(%.1f, %.1f)；与同类真实框的最大 IoU（%s）%.3f",
		               c->index + 1, b->image + 1, s->cls[b->cls - 1], b->score, b->x1, b->y1, b->x2, b->y2,
		               s->cls[b->cls - 1], s->best_iou[c->index]);
		if (!b->kept)
			vz_append(buf, cap, "%s", vz_tr("; suppressed by NMS", "；被 NMS 抑制"));
		else if (s->verdict[c->index] == 1)
			vz_append(buf, cap, "%s", vz_tr("; a true positive", "；真正例"));
		else
			VZ_APPEND_TR(buf, cap, "; a false positive (no unmatched %s at IoU >= %.2f)",
			             "；假正例（没有未匹配的%s与之 IoU >= %.2f）", s->cls[b->cls - 1], s->iou_threshold);
	} else if (strcmp(c->kind, "truth") == 0 && c->index >= 0 && c->index < s->ntruth) {
		const lm_viz_box *b = &s->truth[c->index];
		VZ_SNPRINTF_TR(buf, cap, "ground truth %d on image %d: %s, (%.1f, %.1f)-(%.1f, %.1f)%s",
		               "真实框 %d（图 %d）：%s，(%.1f, %.1f)-(%.1f, %.1f)%s", c->index + 1, b->image + 1,
		               s->cls[b->cls - 1], b->x1, b->y1, b->x2, b->y2,
		               s->matched[c->index] ? vz_tr(", found", "，已检出") : vz_tr(", missed", "，漏检"));
	} else if (strcmp(c->kind, "pixel") == 0) {
		int m = c->tag;
		if (m < 0 || m >= s->n || c->row < 0 || c->col < 0) return;
		VZ_SNPRINTF_TR(buf, cap, "image %d, pixel (x %d, y %d)", "图 %d，像素 (x %d, y %d)", m + 1, c->col, c->row);
	}
}

static const vz_option det_options[] = {
	{"iou", VZ_OPT_NUMBER, 0.01, 1, NULL, "0.5", "the IoU a kept box needs to count as a true positive"},
	{"seed", VZ_OPT_INT, 0, 4294967295.0, NULL, "0", "the demonstration's random numbers"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_detection = {
	.name = "detection",
	.summary = "images with ground-truth and predicted boxes, before and after non-maximum suppression, true and "
	           "false positives at an IoU threshold",
	.patterns = "",
	.options = det_options,
	.create = det_create,
	.destroy = det_destroy,
	.steps = det_steps,
	.variants = det_variants,
	.variant_name = det_variant_name,
	.set_variant = det_set_variant,
	.layout = det_layout,
	.draw = det_draw,
	.title = det_title,
	.step_label = det_step_label,
	.counters = det_counters,
	.describe = det_describe,
};
