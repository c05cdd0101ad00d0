/*
 * tensor.c — the tensor scene: how shape, strides and offset map a tensor onto its storage. The
 * storage is a row of cells (wrapped to the width), the tensor's elements a grid above it (the
 * last dim across, the others down, blocks of the next-to-last dim apart), each element linked to
 * the storage cell it lives in: offset + sum_d i_d * stride_d. The cells the view reaches are lit
 * (an expand's stride 0 reaches one cell from several elements, counted), the others stay grey.
 * A step walks the elements in C order with the formula spelled out; the variant contiguous()
 * shows the copy it makes (a new storage in C order, the cell being copied flashing), or that it
 * makes none.
 *
 * Built from viz.show(x) for a tensor without a grad_fn (the scene keeps its own reference), or
 * from options (a 3 x 4 arange and one view of it). Storages of more than MAX_CELLS elements are
 * drawn as images; a tensor with no elements draws its storage and says so.
 * Read next: graph.c, docs/viz.md ("tensor").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumen/autograd.h"
#include "viz/scenes/vzs.h"

enum { S_IDLE, S_REACHED, S_ACTIVE, S_COPY, S_PENDING, NSTATES };
static const char *const state_names[NSTATES] = {"idle", "reached", "active", "copied", "pending"};

typedef struct tensor_scene {
	lm_tensor *t;
	char label[64];          /* how it was made (options) or "x" */
	int ndim;
	int64_t shape[LM_MAX_DIMS], stride[LM_MAX_DIMS], offset, numel, storage;
	double *sv;              /* the storage's values (storage entries) */
	int64_t *off;            /* each element's storage offset (C order) */
	int32_t *hits;           /* per storage cell: elements reaching it */
	bool contiguous, copy;   /* variant: the contiguous() copy */
	int64_t rows, cols, block; /* the element grid: rows x cols, a gap every `block` rows */
	/* layout */
	vz_rect el_r, st_r, cp_r;
	float ec, sc;            /* element and storage cell sizes */
	int64_t per_row;         /* storage cells per row */
	vz_color *col;
	uint8_t *state;
	double *val;
	vzs_grid g_el, g_st, g_cp, g_st_last, g_cp_last; /* _last: a storage's shorter last row */
	double t_drawn;
	char fname[32];
} tensor_scene;

/* ---------------------------------------------------------------- create */

static void tensor_destroy(void *p)
{
	tensor_scene *s = p;
	if (!s) return;
	lm_tensor_release(s->t);
	vz_free(s->sv);
	vz_free(s->off);
	vz_free(s->hits);
	vz_free(s->col);
	vz_free(s->state);
	vz_free(s->val);
	vzs_grid_free(&s->g_el);
	vzs_grid_free(&s->g_st);
	vzs_grid_free(&s->g_cp);
	vzs_grid_free(&s->g_st_last);
	vzs_grid_free(&s->g_cp_last);
	vz_free(s);
}

/* The demonstration: a 3 x 4 arange (storage i holds i) and one view of it. */
static lm_tensor *demo_tensor(const lm_viz_opts *o, char *label, size_t cap, const char *fname)
{
	const char *v = vz_opt_string(o, "view", "transpose");
	int64_t shape[2] = {3, 4};
	lm_tensor *a = lm_arange(0, 12, 1, LM_FLOAT32), *x = a ? lm_view(a, 2, shape) : NULL, *r = NULL;
	lm_tensor_release(a);
	if (!x) {
		vz_error_prefix(0, fname);
		return NULL;
	}
	if (strcmp(v, "transpose") == 0) r = lm_t(x), snprintf(label, cap, "x:t()");
	else if (strcmp(v, "narrow") == 0) r = lm_narrow(x, 1, 1, 2), snprintf(label, cap, "x:narrow(2, 2, 2)");
	else if (strcmp(v, "select") == 0) r = lm_select(x, 1, 2), snprintf(label, cap, "x:select(2, 3)");
	else if (strcmp(v, "expand") == 0) {
		int64_t es[2] = {3, 4}, one[2] = {1, 4};
		lm_tensor *row = lm_narrow(x, 0, 1, 1), *rv = row ? lm_view(row, 2, one) : NULL;
		r = rv ? lm_expand(rv, 2, es) : NULL;
		lm_tensor_release(row);
		lm_tensor_release(rv);
		snprintf(label, cap, "x[2]:view(1, 4):expand(3, 4)");
	} else r = lm_tensor_retain(x), snprintf(label, cap, "x = lm.arange(0, 12):view(3, 4)");
	lm_tensor_release(x);
	if (!r) vz_error_prefix(0, fname);
	return r;
}

/* Each element's storage offset in C order, and how many elements reach each storage cell. */
static lm_status map_elements(tensor_scene *s)
{
	s->off = vz_malloc((size_t)(s->numel > 0 ? s->numel : 1) * sizeof *s->off);
	s->hits = vz_calloc((size_t)(s->storage > 0 ? s->storage : 1), sizeof *s->hits);
	if (!s->off || !s->hits) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	int64_t idx[LM_MAX_DIMS] = {0};
	for (int64_t e = 0; e < s->numel; e++) {
		int64_t o = s->offset;
		for (int d = 0; d < s->ndim; d++) o += idx[d] * s->stride[d];
		s->off[e] = o;
		if (o >= 0 && o < s->storage) s->hits[o]++;
		for (int d = s->ndim - 1; d >= 0; d--) { /* the next index in C order */
			if (++idx[d] < s->shape[d]) break;
			idx[d] = 0;
		}
	}
	return LM_OK;
}

static lm_status read_storage(tensor_scene *s)
{
	s->sv = vz_malloc((size_t)(s->storage > 0 ? s->storage : 1) * sizeof *s->sv);
	if (!s->sv) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	/* a 1-D view of the whole storage, read element by element in its own dtype */
	int64_t n = s->storage, one = 1;
	lm_tensor *d = lm_detach(s->t), *all = d && n > 0 ? lm_as_strided(d, 1, &n, &one, 0) : NULL;
	lm_tensor_release(d);
	if (n > 0 && !all) return vz_error_prefix(0, s->fname);
	for (int64_t i = 0; i < n; i++) lm_tensor_get(all, &i, &s->sv[i]);
	lm_tensor_release(all);
	return LM_OK;
}

static void *tensor_create(const vz_build *b)
{
	tensor_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	lm_status st = LM_OK;
	if (b->nruns > 0) st = lm_set_error(LM_ERR_ARG, "%s: the tensor scene draws a tensor (viz.show(x)), not a %s result",
	                                    b->fname, b->runs[0].pattern);
	else if (b->tensor) {
		s->t = lm_tensor_retain((lm_tensor *)b->tensor);
		snprintf(s->label, sizeof s->label, "x");
	} else if (!(s->t = demo_tensor(b->opts, s->label, sizeof s->label, b->fname))) st = lm_last_status();
	if (st == LM_OK && lm_tensor_device(s->t) != LM_CPU)
		st = lm_set_error(LM_ERR_DEVICE, "%s: the tensor scene draws CPU tensors; this one is on %s (x:cpu() first)",
		                  b->fname, lm_device_name(lm_tensor_device(s->t)));
	if (st == LM_OK) {
		s->ndim = lm_tensor_ndim(s->t);
		memcpy(s->shape, lm_tensor_shape(s->t), (size_t)s->ndim * sizeof *s->shape);
		memcpy(s->stride, lm_tensor_strides(s->t), (size_t)s->ndim * sizeof *s->stride);
		s->offset = lm_tensor_offset(s->t);
		s->numel = lm_tensor_numel(s->t);
		s->storage = lm_tensor_storage_numel(s->t);
		s->contiguous = lm_tensor_is_contiguous(s->t);
		s->cols = s->ndim ? s->shape[s->ndim - 1] : 1;
		s->rows = s->cols ? s->numel / s->cols : 0;
		s->block = s->ndim >= 3 ? s->shape[s->ndim - 2] : 0;
		st = map_elements(s);
	}
	if (st == LM_OK) st = read_storage(s);
	int64_t cells = 2 * s->storage + s->numel + 2 * s->numel + 8;
	if (st == LM_OK && (!(s->col = vz_calloc((size_t)cells, sizeof *s->col)) || !(s->state = vz_calloc((size_t)cells, 1)) ||
	                    !(s->val = vz_calloc((size_t)cells, sizeof *s->val))))
		st = lm_set_error(LM_ERR_NOMEM, "%s: out of memory", b->fname);
	if (st != LM_OK) {
		tensor_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, layout */

static int tensor_steps(void *p)
{
	tensor_scene *s = p;
	return 1 + (int)(s->numel > 1000000 ? 1000000 : s->numel);
}

static int tensor_variants(void *p) { (void)p; return 2; }
static const char *tensor_variant_name(void *p, int v) { (void)p; return v ? "contiguous()" : "view"; }
static void tensor_set_variant(void *p, int v) { ((tensor_scene *)p)->copy = v == 1; }
static int tensor_initial_variant(void *p) { return ((tensor_scene *)p)->copy; }

static void tensor_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	tensor_scene *s = p;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), top = lh * 4.4f, label_w = 10 * vz_char_width(f, VZ_FONT_SMALL);
	int64_t gaps = s->block > 0 && s->rows > 0 ? (s->rows - 1) / s->block : 0;
	float avail_h = c->h - top;
	bool copy = s->copy && !s->contiguous;
	/* the storage rows first: cells of at most 44 px, as many per row as fit */
	s->sc = fminf(44 * c->scale, fmaxf(6 * c->scale, (c->w - label_w) / (float)(s->storage > 0 ? s->storage : 1)));
	s->per_row = (int64_t)fmaxf(1, floorf((c->w - label_w) / s->sc));
	int64_t srows = s->storage > 0 ? (s->storage + s->per_row - 1) / s->per_row : 1;
	if ((float)srows * s->sc > avail_h * 0.3f) { /* a long storage: smaller cells */
		s->sc = fmaxf(1, sqrtf((c->w - label_w) * avail_h * 0.3f / (float)(s->storage > 0 ? s->storage : 1)));
		s->per_row = (int64_t)fmaxf(1, floorf((c->w - label_w) / s->sc));
		srows = (s->storage + s->per_row - 1) / s->per_row;
	}
	float st_h = (float)srows * s->sc, cp_h = copy ? (float)((s->numel + s->per_row - 1) / s->per_row) * s->sc : 0;
	float el_avail = avail_h - st_h - cp_h - lh * (copy ? 6 : 4);
	s->ec = fminf(48 * c->scale, fminf((c->w - label_w) / (float)(s->cols > 0 ? s->cols : 1),
	                                   el_avail / (float)((s->rows > 0 ? s->rows : 1) + gaps * 0.5f)));
	s->ec = fmaxf(s->ec, 0.5f);
	s->el_r = vz_r(label_w, top, (float)s->cols * s->ec, ((float)s->rows + (float)gaps * 0.5f) * s->ec);
	s->st_r = vz_r(label_w, s->el_r.y + s->el_r.h + lh * 3.2f, (float)s->per_row * s->sc, st_h);
	s->cp_r = vz_r(label_w, s->st_r.y + st_h + lh * 1.6f, (float)s->per_row * s->sc, cp_h); /* its label under it */
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing */

static vz_color state_color(int st)
{
	switch (st) {
	case S_REACHED: return vz_mix(vz_th.path_a, vz_th.bg, 0.55);
	case S_ACTIVE: return vz_th.active;
	case S_COPY: return vz_mix(vz_th.common, vz_th.bg, 0.45);
	case S_PENDING: return vz_th.pending;
	default: return vz_th.idle;
	}
}

/* Where element e (C order) is drawn. */
static vz_rect element_rect(const tensor_scene *s, int64_t e)
{
	int64_t r = e / (s->cols ? s->cols : 1), c = e % (s->cols ? s->cols : 1);
	float gap = s->block > 0 ? (float)(r / s->block) * 0.5f * s->ec : 0;
	return vz_r(s->el_r.x + (float)c * s->ec, s->el_r.y + (float)r * s->ec + gap, s->ec, s->ec);
}

static vz_rect storage_rect(const tensor_scene *s, vz_rect area, int64_t i)
{
	return vz_r(area.x + (float)(i % s->per_row) * s->sc, area.y + (float)(i / s->per_row) * s->sc, s->sc, s->sc);
}

/* The index of element e as Lua writes it: {i1, i2, ...} (1-based). */
static void lua_index(const tensor_scene *s, int64_t e, char *buf, size_t cap)
{
	int64_t idx[LM_MAX_DIMS];
	for (int d = s->ndim - 1; d >= 0; d--) {
		idx[d] = s->shape[d] ? e % s->shape[d] : 0;
		e = s->shape[d] ? e / s->shape[d] : 0;
	}
	snprintf(buf, cap, s->ndim ? "{" : "x");
	for (int d = 0; d < s->ndim; d++) vz_append(buf, cap, "%s%lld", d ? ", " : "", (long long)idx[d] + 1);
	if (s->ndim) vz_append(buf, cap, "}");
}

/* offset + i_1 s_1 + ... = o, with the 0-based indices. */
static void formula(const tensor_scene *s, int64_t e, char *buf, size_t cap)
{
	int64_t idx[LM_MAX_DIMS], r = e;
	for (int d = s->ndim - 1; d >= 0; d--) {
		idx[d] = s->shape[d] ? r % s->shape[d] : 0;
		r = s->shape[d] ? r / s->shape[d] : 0;
	}
	snprintf(buf, cap, "%lld", (long long)s->offset);
	for (int d = 0; d < s->ndim; d++) /* Lua's index i, 0-based in the sum: (i-1)*stride */
		vz_append(buf, cap, " + (%lld-1)*%lld", (long long)idx[d] + 1, (long long)s->stride[d]);
	vz_append(buf, cap, " = %lld", (long long)s->off[e]);
}

static void draw_matrix(vz_frame *f, tensor_scene *s, vzs_grid *g, vz_rect r, int rows, int cols, int64_t o,
                        const char *kind, bool values)
{
	for (int64_t i = 0; i < (int64_t)rows * cols; i++) s->col[o + i] = state_color(s->state[o + i]);
	vzs_matrix m = {rows, cols, s->col + o, s->val + o, s->state + o, state_names, kind, s->copy ? "contiguous()" : "view",
	                0, (int32_t)o, values, NULL};
	vzs_matrix_draw(f, g, r, &m);
}

/* The elements: a grid, or one image when they are many. */
static void draw_elements(vz_frame *f, tensor_scene *s, int64_t cur)
{
	int64_t o = 0;
	for (int64_t e = 0; e < s->numel; e++) {
		s->state[o + e] = e == cur ? S_ACTIVE : S_REACHED;
		s->val[o + e] = s->off[e] >= 0 && s->off[e] < s->storage ? s->sv[s->off[e]] : NAN;
	}
	if (s->block > 0 && !vzs_matrix_dense(f, s->el_r, (int)s->rows, (int)s->cols)) { /* blocks apart */
		for (int64_t b0 = 0; b0 < s->rows; b0 += s->block) {
			vz_rect r = element_rect(s, b0 * s->cols);
			int64_t rows = s->rows - b0 < s->block ? s->rows - b0 : s->block;
			draw_matrix(f, s, &s->g_el, vz_r(r.x, r.y, (float)s->cols * s->ec, (float)rows * s->ec), (int)rows,
			            (int)s->cols, o + b0 * s->cols, "element", true);
		}
		return;
	}
	if (s->numel > 0) draw_matrix(f, s, &s->g_el, vz_r(s->el_r.x, s->el_r.y, (float)s->cols * s->ec, (float)s->rows * s->ec),
	                              (int)s->rows, (int)s->cols, o, "element", true);
}

/* A storage (the tensor's, or the copy) as rows of per_row cells: its whole rows as one matrix and
 * a shorter last row as another, each with a grid of its own (a grid holds one image, and a frame
 * draws after all are recorded: a grid shared by two matrices of a frame would show the second's
 * colours twice, or free the image the first still points to); drawn as ONE image of all rows (the
 * last padded with transparent texels) when the cells are many or small. */
static void draw_storage(vz_frame *f, tensor_scene *s, vzs_grid *g, vzs_grid *g_last, vz_rect area, int64_t n,
                         int64_t o, const char *kind)
{
	for (int64_t i = 0; i < n; i++) s->col[o + i] = state_color(s->state[o + i]);
	if (n > 4096 || s->sc * vz_zoom(f) < 6 * f->scale) {
		int64_t rows = (n + s->per_row - 1) / s->per_row, cells = rows * s->per_row;
		vz_color *px = n ? vz_malloc((size_t)cells * sizeof *px) : NULL;
		if (!px) return;
		for (int64_t i = 0; i < cells; i++) px[i] = i < n ? s->col[o + i] : (vz_color){0, 0, 0, 0};
		vz_cell *c = vzs_grid_draw(f, g, vz_r(area.x, area.y, (float)s->per_row * s->sc, (float)rows * s->sc),
		                           (int)rows, (int)s->per_row, px, kind, 0);
		if (c) c->tag = (int32_t)o; /* tensor_describe: cell (row, col) is storage entry o + row * cols + col */
		vz_free(px);
		return;
	}
	int64_t full = n / s->per_row, rest = n % s->per_row;
	const char *label = s->copy ? "contiguous()" : "view";
	if (full > 0) {
		vzs_matrix m = {(int)full, (int)s->per_row, s->col + o, s->val + o, s->state + o, state_names, kind, label,
		                0, (int32_t)o, true, NULL};
		vzs_matrix_draw(f, g, vz_r(area.x, area.y, (float)s->per_row * s->sc, (float)full * s->sc), &m);
	}
	if (rest > 0) {
		int64_t r0 = full * s->per_row, at = o + r0;
		vz_rect r = storage_rect(s, area, r0);
		vzs_matrix m = {1, (int)rest, s->col + at, s->val + at, s->state + at, state_names, kind, label,
		                (int32_t)r0, (int32_t)at, true, NULL};
		vzs_matrix_draw(f, g_last, vz_r(r.x, r.y, (float)rest * s->sc, s->sc), &m);
	}
}

/* Storage indices under the cells, every 1, 2, 5, 10, 20, ... so that they do not touch. */
static void storage_ticks(vz_frame *f, const tensor_scene *s, vz_rect area, int64_t n)
{
	float need = vz_char_width(f, VZ_FONT_TINY) * (n >= 1000 ? 5 : n >= 100 ? 4 : 3);
	int64_t every = 1;
	for (int k = 0; (float)every * s->sc * vz_zoom(f) < need && every < n; k++) every = (k % 3 == 1 ? 5 : 2) * every / (k % 3 == 1 ? 2 : 1);
	for (int64_t i = 0; i < n; i += every) {
		vz_rect r = storage_rect(s, area, i);
		vz_textf(f, r.x + r.w / 2, r.y + r.h + 1, VZ_FONT_TINY, VZ_ALIGN_CENTER, vz_th.text_dim, "%lld", (long long)i);
	}
}

/* cur < 0: every element's link, faint (when there are few); else only element cur's. */
static void draw_links(vz_frame *f, const tensor_scene *s, int64_t cur)
{
	bool all = s->numel <= 64 && cur < 0;
	for (int64_t e = 0; e < s->numel; e++) {
		if (!all && e != cur) continue;
		if (s->off[e] < 0 || s->off[e] >= s->storage) continue;
		vz_rect a = element_rect(s, e), b = storage_rect(s, s->st_r, s->off[e]);
		bool now = e == cur;
		vz_line(f, a.x + a.w / 2, a.y + a.h, b.x + b.w / 2, b.y, now ? 2.5f : 1,
		        now ? vz_th.arrow_now : vz_fade(vz_th.arrow, 0.45));
	}
}

static void draw_header(vz_frame *f, const tensor_scene *s, int64_t cur)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL), x = 0;
	x = vzs_legend(f, x, 0, state_color(S_REACHED), false, vz_tr("reached by the view", "视图能访问到"));
	x = vzs_legend(f, x, 0, vz_th.idle, false, vz_tr("in the storage, not reached", "在存储中，但访问不到"));
	x = vzs_legend(f, x, 0, vz_th.active, false, vz_tr("this step's element", "本步的元素"));
	if (s->copy) vzs_legend(f, x, 0, state_color(S_COPY), false, vz_tr("copied by contiguous()", "已由 contiguous() 复制"));
	char sh[LM_SHAPE_STR_MAX], st[LM_SHAPE_STR_MAX];
	lm_shape_str(s->ndim, s->shape, sh, sizeof sh);
	lm_shape_str(s->ndim, s->stride, st, sizeof st);
	VZ_TEXTF_TR(f, 0, lh * 1.4f, VZ_FONT_BODY, VZ_ALIGN_LEFT, vz_th.text, "%s: shape %s, strides %s, offset %lld, %s %s",
	            "%s：形状 %s，步幅 %s，偏移 %lld，%s %s", s->label, sh, st, (long long)s->offset,
	            lm_dtype_name(lm_tensor_dtype(s->t)),
	            s->contiguous ? vz_tr("(contiguous)", "（连续）") : vz_tr("(not contiguous)", "（不连续）"));
	if (s->numel == 0)
		vz_text_draw(f, 0, lh * 2.7f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.highlight,
		             vz_tr("no elements: nothing in the storage is reached", "没有元素：存储中没有任何位置被访问"));
	else if (cur >= 0) {
		char ix[160], fo[300];
		lua_index(s, cur, ix, sizeof ix);
		formula(s, cur, fo, sizeof fo);
		VZ_TEXTF_TR(f, 0, lh * 2.7f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.arrow_now, "x[%s] lives at storage offset %s",
		            "x[%s] 位于存储偏移 %s", ix, fo);
	}
}

/* A label on the background, so that the links under it do not cross its letters. */
static void boxed_label(vz_frame *f, float y, const char *t)
{
	float pad = vz_char_width(f, VZ_FONT_SMALL) * 0.5f;
	vz_fill(f, vz_r(0, y, vz_text_width(f, VZ_FONT_SMALL, t) + pad, vz_text_height(f, VZ_FONT_SMALL)), vz_th.bg);
	vz_text_draw(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
}

static void tensor_draw(void *p, vz_frame *f)
{
	tensor_scene *s = p;
	s->t_drawn = f->t;
	int64_t k = (int64_t)floor(f->t + 1e-9), cur = k >= 1 ? k - 1 : -1;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	draw_header(f, s, cur);
	int64_t o = s->numel;
	for (int64_t i = 0; i < s->storage; i++) {
		s->state[o + i] = cur >= 0 && s->off[cur] == i ? S_ACTIVE : s->hits[i] ? S_REACHED : S_IDLE;
		s->val[o + i] = s->sv[i];
	}
	draw_links(f, s, -1); /* under the cells; the current one over them, below */
	vz_layer(f);
	vz_text_draw(f, 0, s->el_r.y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, vz_tr("elements", "元素"));
	draw_elements(f, s, cur);
	draw_storage(f, s, &s->g_st, &s->g_st_last, s->st_r, s->storage, o, "storage");
	storage_ticks(f, s, s->st_r, s->storage);
	for (int64_t i = 0; i < s->storage && s->sc * vz_zoom(f) >= 14; i++) /* stride 0: one cell, several elements */
		if (s->hits[i] > 1) {
			vz_rect r = storage_rect(s, s->st_r, i);
			vz_textf(f, r.x + r.w - 1, r.y, VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text, "x%d", s->hits[i]);
		}
	if (s->copy) {
		if (!s->contiguous) {
			int64_t c = s->numel + s->storage;
			for (int64_t e = 0; e < s->numel; e++) {
				s->state[c + e] = e == cur ? S_ACTIVE : e < cur ? S_COPY : S_PENDING;
				s->val[c + e] = e <= cur ? s->val[e] : NAN;
			}
			draw_storage(f, s, &s->g_cp, &s->g_cp_last, s->cp_r, s->numel, c, "copy");
			if (cur >= 0 && s->off[cur] >= 0 && s->off[cur] < s->storage) {
				vz_rect a = storage_rect(s, s->st_r, s->off[cur]), b = storage_rect(s, s->cp_r, cur);
				vz_layer(f);
				vz_arrow(f, a.x + a.w / 2, a.y + a.h, b.x + b.w / 2, b.y, 2.5f, 9, vz_th.active);
			}
		}
	}
	vz_layer(f); /* the labels over the faint links, the current link over them */
	char t[200];
	VZ_SNPRINTF_TR(t, sizeof t, "storage: %lld elements (0-based offsets)", "存储：%lld 个元素（偏移从 0 开始）",
	               (long long)s->storage);
	boxed_label(f, s->st_r.y - lh * 1.2f, t);
	if (s->copy) {
		if (s->contiguous)
			snprintf(t, sizeof t, "%s", vz_tr("contiguous() of a contiguous tensor returns it: no copy, the same storage",
			                                  "对连续张量调用 contiguous() 返回它自己：不复制，存储不变"));
		else
			VZ_SNPRINTF_TR(t, sizeof t, "contiguous(): a new storage of %lld, the elements in C order (strides of a fresh tensor)",
			               "contiguous()：新建 %lld 个元素的存储，元素按 C 顺序排列（新张量的步幅）", (long long)s->numel);
		boxed_label(f, s->contiguous ? s->cp_r.y - lh * 0.4f : s->cp_r.y + s->cp_r.h + lh * 0.3f, t);
	}
	vz_layer(f);
	draw_links(f, s, cur);
}

/* ---------------------------------------------------------------- text */

static void tensor_title(void *p, char *buf, size_t cap)
{
	tensor_scene *s = p;
	char sh[LM_SHAPE_STR_MAX];
	lm_shape_str(s->ndim, s->shape, sh, sizeof sh);
	int64_t reached = 0;
	for (int64_t i = 0; i < s->storage; i++) reached += s->hits[i] > 0;
	VZ_SNPRINTF_TR(buf, cap, "tensor %s: %lld elements over a storage of %lld, %lld of its cells reached",
	               "张量 %s：%lld 个元素，存储有 %lld 个位置，其中 %lld 个被访问", sh, (long long)s->numel,
	               (long long)s->storage, (long long)reached);
}

static void tensor_step_label(void *p, int step, char *buf, size_t cap)
{
	tensor_scene *s = p;
	if (step == 0 || s->numel == 0) {
		snprintf(buf, cap, "%s", s->numel ? vz_tr("each element lives at offset + sum of index * stride (-> steps through them)",
		                                          "每个元素位于 偏移 + Σ 下标 × 步幅（按 → 逐个查看）")
		                                  : vz_tr("a tensor with no elements reaches no storage", "没有元素的张量不访问任何存储"));
		return;
	}
	char ix[160], fo[300];
	lua_index(s, step - 1, ix, sizeof ix);
	formula(s, step - 1, fo, sizeof fo);
	VZ_SNPRINTF_TR(buf, cap, "element %d of %lld, x[%s]: storage %s%s", "第 %d/%lld 个元素，x[%s]：存储 %s%s", step,
	               (long long)s->numel, ix, fo,
	               s->copy && !s->contiguous ? vz_tr(", copied to the new storage's next cell", "，复制到新存储的下一个位置") : "");
}

static void tensor_counters(void *p, vz_panel *pn)
{
	tensor_scene *s = p;
	int col = vz_panel_column(pn, s->label, vz_tr("the tensor's own header", "张量自己的元数据"));
	vz_panel_set(pn, col, "dims", s->ndim);
	vz_panel_set(pn, col, "elements", (double)s->numel);
	vz_panel_set(pn, col, "storage", (double)s->storage);
	vz_panel_set(pn, col, "offset", (double)s->offset);
	int64_t reached = 0, shared = 0;
	for (int64_t i = 0; i < s->storage; i++) reached += s->hits[i] > 0, shared += s->hits[i] > 1;
	vz_panel_set(pn, col, "cells_reached", (double)reached);
	vz_panel_set(pn, col, "cells_shared", (double)shared);
	vz_panel_set(pn, col, "contiguous", s->contiguous);
	vz_panel_note(pn, "%s", vz_tr("cells_shared: storage cells several elements reach (a stride of 0, from expand)",
	                              "cells_shared：被多个元素访问的存储位置（来自 expand 的步幅 0）"));
}

static void tensor_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	tensor_scene *s = p;
	if (c->rows > 0 && c->cols > 0) { /* an image: index from the grid */
		int64_t i = c->index >= 0 ? c->index : (int64_t)c->row * c->cols + c->col;
		int64_t o = c->tag + ((int64_t)c->row * c->cols + c->col);
		if (o >= 0) {
			c->state = state_names[s->state[o]];
			c->value = s->val[o];
			c->has_value = !isnan(c->value);
		}
		c->index = (int32_t)i;
		c->rows = c->cols = -1;
	}
	int64_t i = c->index;
	char v[32], ix[160], fo[300];
	if (strcmp(c->kind, "element") == 0 && i >= 0 && i < s->numel) {
		lua_index(s, i, ix, sizeof ix);
		formula(s, i, fo, sizeof fo);
		VZ_SNPRINTF_TR(buf, cap, "x[%s] = %s\nstorage offset %s", "x[%s] = %s\n存储偏移 %s", ix,
		               vzs_short(v, sizeof v, c->value), fo);
	} else if (strcmp(c->kind, "storage") == 0 && i >= 0 && i < s->storage) {
		VZ_SNPRINTF_TR(buf, cap, "storage[%lld] = %s (0-based)\n%s", "storage[%lld] = %s（从 0 开始）\n%s", (long long)i,
		               vzs_short(v, sizeof v, s->sv[i]), s->hits[i] ? "" : vz_tr("not reached by this view", "这个视图访问不到"));
		if (s->hits[i]) {
			int shown = 0;
			for (int64_t e = 0; e < s->numel && shown < 3; e++)
				if (s->off[e] == i) {
					lua_index(s, e, ix, sizeof ix);
					vz_append(buf, cap, "%sx[%s]", shown++ ? vz_tr(", ", "、") : vz_tr("reached by ", "被访问："), ix);
				}
			if (s->hits[i] > 3) VZ_APPEND_TR(buf, cap, " (%d elements)", "（共 %d 个元素）", s->hits[i]);
		}
	} else if (strcmp(c->kind, "copy") == 0 && i >= 0 && i < s->numel) {
		lua_index(s, i, ix, sizeof ix);
		VZ_SNPRINTF_TR(buf, cap, "the copy's storage[%lld] = x[%s], from storage[%lld]", "副本的 storage[%lld] = x[%s]，来自 storage[%lld]",
		               (long long)i, ix, (long long)s->off[i]);
	}
}

static const vz_option tensor_options[] = {
	{"view", VZ_OPT_CHOICE, 0, 0, "transpose narrow select expand none", "transpose", "the demonstration view of a 3 x 4 arange"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_tensor = {
	.name = "tensor",
	.summary = "a tensor's storage, shape, strides and offset: the cells a view reaches, the copy contiguous() makes",
	.patterns = "",
	.options = tensor_options,
	.create = tensor_create,
	.destroy = tensor_destroy,
	.steps = tensor_steps,
	.variants = tensor_variants,
	.variant_name = tensor_variant_name,
	.set_variant = tensor_set_variant,
	.initial_variant = tensor_initial_variant,
	.layout = tensor_layout,
	.draw = tensor_draw,
	.title = tensor_title,
	.step_label = tensor_step_label,
	.counters = tensor_counters,
	.describe = tensor_describe,
};
