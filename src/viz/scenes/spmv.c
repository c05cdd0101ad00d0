/*
 * spmv.c — the sparse matrix-vector scene (PMPP chapter 14): one matrix in the four formats of
 * the lecture, each run on the emulator with the same x. Left, the matrix with x above and y
 * beside it; middle, the format's arrays as the kernel reads them (COO's row/col/val, CSR's
 * row_ptr, ELL's rows padded to the longest, stored column by column, padding hatched, JDS's rows
 * sorted by length with the permutation); right, each thread's work, one cell per product, grouped
 * by block, the longest row of each block outlined: it decides the block's time. A step is one
 * iteration of the threads' loops: every thread's t-th product lights in all three pictures.
 *
 * What is read from a trace (docs/trace.md "SpMV"): per thread (launch 0), the loads of `val` in
 * order (its products, by slot), of `col` (the column read) and of `row` (COO) or `perm` (JDS, the
 * row the result goes to). From these a traced run's matrix is rebuilt, so the other formats run
 * on it; x comes from its loads (entries never read stay 0: no format reads them).
 * Read next: conv.c, docs/trace.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define NFMT 4
static const char *const fmts[NFMT] = {"coo", "csr", "ell", "jds"};
static const char *const fmt_title[NFMT] = {"COO", "CSR", "ELL", "JDS"};
enum { COO, CSR, ELL, JDS };

enum { S_ZERO, S_PENDING, S_ACTIVE, S_DONE, S_PAD, S_INDEX, S_LONGEST, NSTATES };
static const char *const state_names[NSTATES] = {"zero", "pending", "active", "done", "padding", "index", "longest"};

/* A state as the hover says it. */
static const char *state_label(const char *st)
{
	static const char *const zh[NSTATES] = {"零", "待计算", "本次迭代", "已完成", "填充", "索引", "最长行"};
	for (int i = 0; i < NSTATES && vz_zh(); i++)
		if (strcmp(st, state_names[i]) == 0) return zh[i];
	return st;
}

#define MAXARR 5
#define MAXLINES 4 /* a flat array wraps into at most this many lines of the format column */
#define NGRIDS (5 + MAXARR * MAXLINES)

typedef struct sarr {
	const char *name;
	int64_t len;
	double *v;
} sarr;

/* One thread's products, read from a trace. */
typedef struct sprod {
	int32_t slot, col, row;  /* row: -1 until known */
	double val;
} sprod;

typedef struct sfmt {
	lm_viz_run run;
	int nthreads, block;
	int *work;               /* products per thread */
	int64_t *first;          /* into prod[] */
	sprod *prod;
	int64_t nprod;
	int maxwork;
	int64_t nslots;          /* entries of val (ELL: m x width with padding) */
	int32_t *slot_iter, *slot_thread; /* per slot: the iteration and the thread using it (-1: none) */
	sarr arr[MAXARR];
	int narr;
	int64_t width;           /* ELL, JDS: the longest row */
} sfmt;

typedef struct spmv_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo;
	int64_t m, n, nnz, block;
	int32_t *rows, *cols;    /* the nonzeros (triples, 0-based) */
	double *vals, *x, *dense; /* dense: m x n, NAN where zero */
	double *y;
	sfmt f[NFMT];
	int variant;
	vz_color *col;
	uint8_t *state;
	double *val;
	bool *hatch;
	vzs_grid grids[NGRIDS];
	float cs, ac, pc, bar_h; /* cells: matrix, flat arrays, ELL/JDS packed rows; a thread's bar */
	int64_t per;             /* cells per line of a flat array */
	vz_rect mat_r, x_r, y_r, fmt_r, work_r;
	double t;
	char fname[32];
} spmv_scene;

/* ---------------------------------------------------------------- reading a trace */

static void sfmt_free(sfmt *f)
{
	vz_run_clear(&f->run);
	vz_free(f->work);
	vz_free(f->first);
	vz_free(f->prod);
	vz_free(f->slot_iter);
	vz_free(f->slot_thread);
	for (int i = 0; i < f->narr; i++) vz_free(f->arr[i].v);
	memset(f, 0, sizeof *f);
}

static int thread_of(const lm_trace_event *e, unsigned bdim) { return (int)(e->block * bdim + e->warp * 32u + e->lane); }

/* Each thread's products in order: the val slot, the column read before it, the value; the row
 * from the thread (CSR, ELL), its `row` load (COO) or its `perm` load (JDS). */
static lm_status read_products(sfmt *f, const lm_trace *t, int fmt, const char *fname)
{
	lm_trace_launch la;
	if (lm_trace_launch_get(t, 0, &la) != LM_OK) return lm_set_error(LM_ERR_ARG, "%s: the trace has no launch", fname);
	unsigned bdim = la.block[0];
	f->block = (int)bdim;
	f->nthreads = (int)(la.grid[0] * bdim);
	int ival = vz_trace_array(t, "val", LM_SPACE_GLOBAL, -1), icol = vz_trace_array(t, "col", LM_SPACE_GLOBAL, -1);
	int irow = vz_trace_array(t, fmt == COO ? "row" : "perm", LM_SPACE_GLOBAL, -1);
	f->work = vz_calloc((size_t)f->nthreads + 1, sizeof *f->work);
	f->first = vz_calloc((size_t)f->nthreads + 1, sizeof *f->first);
	int32_t *lastcol = vz_calloc((size_t)f->nthreads + 1, sizeof *lastcol), *row = vz_malloc(((size_t)f->nthreads + 1) * sizeof *row);
	if (!f->work || !f->first || !lastcol || !row) {
		vz_free(lastcol);
		vz_free(row);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	int64_t n = lm_trace_count(t);
	for (int64_t i = 0; i < n; i++) { /* pass 1: products per thread */
		const lm_trace_event *e = lm_trace_event_get(t, i);
		int th = thread_of(e, bdim);
		if (e->launch == 0 && e->kind == LM_TRACE_LOAD && e->array == ival && th < f->nthreads) f->work[th]++;
	}
	for (int th = 0; th < f->nthreads; th++) {
		f->first[th + 1] = f->first[th] + f->work[th];
		if (f->work[th] > f->maxwork) f->maxwork = f->work[th];
		row[th] = fmt == CSR || fmt == ELL ? th : -1;
	}
	f->nprod = f->first[f->nthreads];
	f->prod = vz_calloc((size_t)(f->nprod > 0 ? f->nprod : 1), sizeof *f->prod);
	if (!f->prod) {
		vz_free(lastcol);
		vz_free(row);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	memset(f->work, 0, (size_t)f->nthreads * sizeof *f->work);
	for (int64_t i = 0; i < n; i++) { /* pass 2: the products */
		const lm_trace_event *e = lm_trace_event_get(t, i);
		int th = thread_of(e, bdim);
		if (e->launch != 0 || e->kind != LM_TRACE_LOAD || th >= f->nthreads) continue;
		if (e->array == icol) lastcol[th] = (int32_t)e->value;
		else if (e->array == irow) row[th] = (int32_t)e->value;
		else if (e->array == ival) f->prod[f->first[th] + f->work[th]++] = (sprod){(int32_t)e->index, lastcol[th], -1, e->value};
	}
	for (int th = 0; th < f->nthreads; th++)
		for (int k = 0; k < f->work[th]; k++) f->prod[f->first[th] + k].row = row[th];
	vz_free(lastcol);
	vz_free(row);
	return LM_OK;
}

/* Per slot of val: the iteration and thread that use it (padding: none). */
static lm_status index_slots(sfmt *f, const char *fname)
{
	f->slot_iter = vz_malloc((size_t)(f->nslots > 0 ? f->nslots : 1) * sizeof *f->slot_iter);
	f->slot_thread = vz_malloc((size_t)(f->nslots > 0 ? f->nslots : 1) * sizeof *f->slot_thread);
	if (!f->slot_iter || !f->slot_thread) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	for (int64_t i = 0; i < f->nslots; i++) f->slot_iter[i] = f->slot_thread[i] = -1;
	for (int th = 0; th < f->nthreads; th++)
		for (int k = 0; k < f->work[th]; k++) {
			int32_t sl = f->prod[f->first[th] + k].slot;
			if (sl >= 0 && sl < f->nslots) {
				f->slot_iter[sl] = k;
				f->slot_thread[sl] = th;
			}
		}
	return LM_OK;
}

/* The format's arrays, as the kernels read them. */
static lm_status read_arrays(sfmt *f, const lm_sparse *a, int fmt, const char *fname)
{
	static const char *const names[NFMT][MAXARR] = {
		{"row", "col", "val", NULL}, {"row_ptr", "col", "val", NULL}, {"row_nnz", "col", "val", NULL},
		{"perm", "row_nnz", "iter_ptr", "col", "val"}};
	for (int i = 0; i < MAXARR && names[fmt][i]; i++) {
		lm_tensor *x = lm_sparse_array(a, fmts[fmt], names[fmt][i]);
		if (!x) return vz_error_prefix(0, fname);
		sarr *s = &f->arr[f->narr++];
		s->name = names[fmt][i];
		s->len = lm_tensor_numel(x);
		s->v = vz_malloc((size_t)(s->len > 0 ? s->len : 1) * sizeof *s->v);
		if (!s->v) {
			lm_tensor_release(x);
			return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
		}
		for (int64_t k = 0; k < s->len; k++) lm_tensor_get(x, &k, &s->v[k]);
		lm_tensor_release(x);
		if (strcmp(s->name, "val") == 0) f->nslots = s->len;
	}
	f->width = lm_sparse_ell_width(a);
	return LM_OK;
}

static const sarr *array_of(const sfmt *f, const char *name)
{
	for (int i = 0; i < f->narr; i++)
		if (strcmp(f->arr[i].name, name) == 0) return &f->arr[i];
	return NULL;
}

/* ---------------------------------------------------------------- create */

static void spmv_destroy(void *p)
{
	spmv_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < NFMT; i++) sfmt_free(&s->f[i]);
	for (int i = 0; i < NGRIDS; i++) vzs_grid_free(&s->grids[i]);
	vz_free(s->rows);
	vz_free(s->cols);
	vz_free(s->vals);
	vz_free(s->x);
	vz_free(s->y);
	vz_free(s->dense);
	vz_free(s->col);
	vz_free(s->state);
	vz_free(s->val);
	vz_free(s->hatch);
	vz_free(s);
}

static int fmt_index(const char *a)
{
	for (int i = 0; i < NFMT; i++)
		if (strcmp(a, fmts[i]) == 0) return i;
	return -1;
}

static bool alloc_triples(spmv_scene *s, int64_t nnz)
{
	s->rows = vz_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *s->rows);
	s->cols = vz_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *s->cols);
	s->vals = vz_malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *s->vals);
	s->nnz = nnz;
	return s->rows && s->cols && s->vals;
}

/* The demonstration matrices: PMPP's 4 x 4 example, rows of very different lengths, or random. */
static lm_status demo_matrix(spmv_scene *s, const lm_viz_opts *o)
{
	const char *kind = vz_opt_string(o, "matrix", "skewed");
	uint64_t z = 0x9E3779B97F4A7C15ull;
#define RND() (z ^= z << 13, z ^= z >> 7, z ^= z << 17, z)
	if (strcmp(kind, "pmpp") == 0) {
		static const int32_t r[] = {0, 0, 2, 2, 2, 3, 3}, c[] = {0, 2, 1, 2, 3, 0, 3};
		static const double v[] = {3, 1, 2, 4, 1, 1, 1};
		s->m = s->n = 4;
		if (!alloc_triples(s, 7)) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
		memcpy(s->rows, r, sizeof r);
		memcpy(s->cols, c, sizeof c);
		memcpy(s->vals, v, sizeof v);
		return LM_OK;
	}
	s->m = vz_opt_int(o, "m", 12);
	s->n = vz_opt_int(o, "n", s->m);
	bool skewed = strcmp(kind, "skewed") == 0;
	int64_t cap = s->m * s->n;
	if (!alloc_triples(s, cap)) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	int64_t k = 0;
	for (int64_t r = 0; r < s->m; r++) {
		/* skewed: most rows short, every fifth long (as the lecture's power-law rows) */
		int64_t len = skewed ? (r % 5 == 1 ? s->n * 2 / 3 : (int64_t)(RND() % 3)) : (int64_t)(RND() % (uint64_t)(s->n / 3 + 2));
		if (len > s->n) len = s->n;
		for (int64_t c = 0; c < s->n && len > 0; c++) {
			if ((int64_t)(RND() % (uint64_t)(s->n - c)) >= len) continue; /* choose len of the remaining columns */
			s->rows[k] = (int32_t)r;
			s->cols[k] = (int32_t)c;
			s->vals[k++] = (double)(RND() % 9 + 1);
			len--;
		}
	}
#undef RND
	s->nnz = k;
	return LM_OK;
}

/* The matrix and x of a traced run, from its products. */
static lm_status from_trace(spmv_scene *s, const lm_viz_run *r, int fmt)
{
	const lm_trace *t = r->trace;
	int ix = vz_trace_array(t, "x", LM_SPACE_GLOBAL, -1), iy = vz_trace_array(t, "y", LM_SPACE_GLOBAL, -1);
	if (fmt < 0 || ix < 0 || iy < 0 || vz_trace_array(t, "val", LM_SPACE_GLOBAL, -1) < 0)
		return lm_set_error(LM_ERR_ARG, "%s: not a trace of an SpMV kernel (it has no arrays val, x and y): %s",
		                    s->fname, lm_trace_name(t));
	if (lm_trace_truncated(t))
		return lm_set_error(LM_ERR_ARG, "%s: the SpMV trace was truncated (%lld of %lld events kept): the matrix "
		                    "cannot be read back; run with a larger trace_cap or a smaller matrix", s->fname,
		                    (long long)lm_trace_count(t), (long long)lm_trace_seen(t));
	lm_trace_array xa, ya;
	lm_trace_array_get(t, ix, &xa);
	lm_trace_array_get(t, iy, &ya);
	s->n = xa.length;
	s->m = ya.length;
	sfmt tmp;
	memset(&tmp, 0, sizeof tmp);
	if (read_products(&tmp, t, fmt, s->fname) != LM_OK || !alloc_triples(s, tmp.nprod)) {
		sfmt_free(&tmp);
		return lm_last_status() ? lm_last_status() : lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	}
	for (int64_t i = 0; i < tmp.nprod; i++) {
		s->rows[i] = tmp.prod[i].row;
		s->cols[i] = tmp.prod[i].col;
		s->vals[i] = tmp.prod[i].val;
	}
	sfmt_free(&tmp);
	int64_t got = 0;
	double *x = vz_trace_input(t, "x", &got);
	s->x = vz_calloc((size_t)s->n, sizeof *s->x);
	if (!s->x) {
		vz_free(x);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	}
	if (x) memcpy(s->x, x, (size_t)(got < s->n ? got : s->n) * sizeof *x);
	vz_free(x);
	return LM_OK;
}

static lm_status build_formats(spmv_scene *s, const lm_viz_run *have, int have_fmt)
{
	lm_sparse *a = vzs_sparse(s->rows, s->cols, s->vals, s->nnz, s->m, s->n, s->fname);
	if (!a) return lm_last_status();
	lm_status st = LM_OK;
	for (int k = 0; k < NFMT && st == LM_OK; k++) {
		sfmt *f = &s->f[k];
		if (have && k == have_fmt) vz_run_copy(&f->run, have);
		else st = vzs_run_spmv(a, s->x, fmts[k], s->block, &f->run, s->fname);
		if (st == LM_OK) st = read_arrays(f, a, k, s->fname);
		if (st == LM_OK) st = read_products(f, f->run.trace, k, s->fname);
		if (st == LM_OK) st = index_slots(f, s->fname);
	}
	lm_sparse_release(a);
	return st;
}

static lm_status dense_and_y(spmv_scene *s)
{
	s->dense = vz_malloc((size_t)(s->m * s->n) * sizeof *s->dense);
	s->y = vz_calloc((size_t)s->m, sizeof *s->y);
	if (!s->dense || !s->y) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	for (int64_t i = 0; i < s->m * s->n; i++) s->dense[i] = NAN;
	for (int64_t i = 0; i < s->nnz; i++) {
		if (s->rows[i] < 0 || s->rows[i] >= s->m || s->cols[i] < 0 || s->cols[i] >= s->n) continue;
		double *d = &s->dense[(int64_t)s->rows[i] * s->n + s->cols[i]];
		*d = (isnan(*d) ? 0 : *d) + s->vals[i];
		s->y[s->rows[i]] += s->vals[i] * s->x[s->cols[i]];
	}
	return LM_OK;
}

static void *spmv_create(const vz_build *b)
{
	spmv_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	const lm_viz_run *from = traced ? traced : b->nruns ? &b->runs[0] : NULL;
	int first = fmt_index(from ? from->algo : vz_opt_string(b->opts, "format", "csr"));
	lm_status st;
	if (traced) {
		lm_trace_launch la;
		st = vz_trace_check(traced->trace, b->fname) == LM_OK ? from_trace(s, traced, first) : LM_ERR_ARG;
		s->block = st == LM_OK && lm_trace_launch_get(traced->trace, 0, &la) == LM_OK ? la.block[0] : 0;
	} else {
		s->block = vz_opt_int(b->opts, "block", 4);
		st = demo_matrix(s, b->opts);
		if (st == LM_OK && !(s->x = vz_malloc((size_t)s->n * sizeof *s->x))) st = lm_set_error(LM_ERR_NOMEM, "%s: out of memory", b->fname);
		for (int64_t j = 0; st == LM_OK && j < s->n; j++) s->x[j] = (double)(j % 3 + 1);
	}
	s->demo = from && !traced;
	s->variant = first < 0 ? CSR : first;
	if (st == LM_OK) st = build_formats(s, traced, first);
	if (st == LM_OK) st = dense_and_y(s);
	int64_t cells = 3 * s->m * s->n + 8 * (s->nnz + s->m + 2) + 4 * s->m * (s->n + 1) + 64;
	if (st == LM_OK) {
		s->col = vz_calloc((size_t)cells, sizeof *s->col);
		s->state = vz_calloc((size_t)cells, sizeof *s->state);
		s->val = vz_calloc((size_t)cells, sizeof *s->val);
		s->hatch = vz_calloc((size_t)cells, sizeof *s->hatch);
		if (!s->col || !s->state || !s->val || !s->hatch) st = lm_set_error(LM_ERR_NOMEM, "%s: out of memory", b->fname);
	}
	if (st != LM_OK) {
		spmv_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, layout */

static int spmv_steps(void *p)
{
	spmv_scene *s = p;
	return 1 + s->f[s->variant].maxwork;
}

static int spmv_variants(void *p) { (void)p; return NFMT; }
static const char *spmv_variant_name(void *p, int v) { (void)p; return fmts[v]; }
static void spmv_set_variant(void *p, int v) { ((spmv_scene *)p)->variant = v; }
static int spmv_initial_variant(void *p) { return ((spmv_scene *)p)->variant; }

/* The flat arrays' cells: the largest that fit the format column's width and the height left, an
 * array wrapping into up to MAXLINES lines (ELL: whole slots a line, slot t of every row). */
static void lay_arrays(spmv_scene *s, const sfmt *fm, float lh, float big, float room)
{
	int64_t longest = 1;
	for (int i = 0; i < fm->narr; i++)
		if (fm->arr[i].len > longest) longest = fm->arr[i].len;
	s->per = longest;
	s->ac = fminf(s->fmt_r.w / (float)(longest + 1), big);
	for (int lines = 2; lines <= MAXLINES; lines++) {
		int64_t per = (longest + lines - 1) / lines;
		if (s->variant == ELL && per > s->m) per = (per + s->m - 1) / s->m * s->m;
		float ac = fminf(s->fmt_r.w / (float)(per + 1), big), h = 0;
		for (int i = 0; i < fm->narr; i++)
			if (!(s->variant == JDS && strcmp(fm->arr[i].name, "perm") == 0))
				h += lh * 1.45f + (float)((fm->arr[i].len + per - 1) / per) * ac;
		if (ac > s->ac && h <= room) s->per = per, s->ac = ac;
	}
}

static void spmv_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	spmv_scene *s = p;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), top = lh * 3.2f, gap = lh * 2;
	float colw = c->w * 0.3f, h = c->h - top - lh;
	s->cs = fminf(colw / (float)(s->n + 2), h / (float)(s->m + 2));
	s->x_r = vz_r(0, top, (float)s->n * s->cs, s->cs);
	s->mat_r = vz_r(0, top + s->cs * 1.5f, (float)s->n * s->cs, (float)s->m * s->cs);
	s->y_r = vz_r(s->mat_r.w + s->cs * 0.5f, s->mat_r.y, s->cs, s->mat_r.h);
	float fx = s->y_r.x + s->cs + gap;
	const sfmt *fm = &s->f[s->variant];
	s->work_r = vz_r(c->w * 0.76f, top, c->w * 0.24f, h);
	s->fmt_r = vz_r(fx, top, s->work_r.x - gap - fx, h);
	/* ELL's and JDS's packed rows: at most 40% of the column's height */
	bool packed = s->variant == ELL || s->variant == JDS;
	float big = fminf(fmaxf(s->cs, 14 * c->scale), 30 * c->scale), used = 0;
	if (packed) {
		float wide = (float)(fm->width > 0 ? fm->width : 1) + 2;
		s->pc = fminf(big, fminf(s->fmt_r.h * 0.4f / (float)s->m, s->fmt_r.w / wide));
		used = lh * 1.7f + (float)s->m * s->pc;
	}
	if (s->variant == ELL) used += lh * 1.2f; /* the note on the storage order */
	lay_arrays(s, fm, lh, big, s->fmt_r.h - used);
	int rows_of_threads = fm->nthreads + fm->nthreads / (fm->block > 0 ? fm->block : 1);
	s->bar_h = fminf(lh * 1.1f, (h - lh * 2) / (float)(rows_of_threads > 0 ? rows_of_threads : 1));
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- states at a step */

static vz_color state_color(int st)
{
	switch (st) {
	case S_PENDING: return vz_mix(vz_th.path_a, vz_th.bg, 0.72);
	case S_ACTIVE: return vz_th.active;
	case S_DONE: return vz_mix(vz_th.common, vz_th.bg, 0.5);
	case S_PAD: return vz_th.idle;
	case S_INDEX: return vz_th.pending;
	case S_LONGEST: return vz_th.highlight;
	default: return vz_th.bg;
	}
}

static int iter_state(int iter, int k)
{
	return iter < 0 ? S_PAD : iter + 1 < k ? S_DONE : iter + 1 == k ? S_ACTIVE : S_PENDING;
}

/* A matrix of cells from the per-frame buffers at *off (advanced). */
static void draw_block(vz_frame *f, spmv_scene *s, int g, vz_rect r, int rows, int cols, int64_t *off,
                       const char *kind, int32_t tag, int32_t first)
{
	for (int64_t i = 0; i < (int64_t)rows * cols; i++) s->col[*off + i] = state_color(s->state[*off + i]);
	vzs_matrix m = {rows, cols, s->col + *off, s->val + *off, s->state + *off, state_names, kind,
	                fmts[s->variant], first, tag, true, s->hatch + *off};
	vzs_matrix_draw(f, &s->grids[g], r, &m);
	*off += (int64_t)rows * cols;
}

static void label(vz_frame *f, float x, float y, const char *text)
{
	vz_text_draw(f, x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, text);
}

/* The matrix (a nonzero lights when its product runs), x and y. */
static void draw_matrix(vz_frame *f, spmv_scene *s, int k, int64_t *off)
{
	const sfmt *fm = &s->f[s->variant];
	int64_t mn = s->m * s->n, o = *off;
	for (int64_t i = 0; i < mn; i++) {
		s->state[o + i] = isnan(s->dense[i]) ? S_ZERO : S_PENDING;
		s->val[o + i] = s->dense[i];
		s->hatch[o + i] = false;
	}
	for (int th = 0; th < fm->nthreads; th++)
		for (int it = 0; it < fm->work[th]; it++) {
			const sprod *pr = &fm->prod[fm->first[th] + it];
			if (pr->row >= 0 && pr->row < s->m && pr->col >= 0 && pr->col < s->n)
				s->state[o + (int64_t)pr->row * s->n + pr->col] = (uint8_t)iter_state(it, k);
		}
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	label(f, s->x_r.x, s->x_r.y - lh * 1.1f, "x");
	draw_block(f, s, 0, s->mat_r, (int)s->m, (int)s->n, off, "matrix", 0, 0);
	vz_outline(f, s->mat_r, 1, vz_th.text_dim);
	o = *off;
	for (int64_t j = 0; j < s->n; j++) {
		s->state[o + j] = S_INDEX;
		s->val[o + j] = s->x[j];
		s->hatch[o + j] = false;
	}
	draw_block(f, s, 1, s->x_r, 1, (int)s->n, off, "x", 1, 0);
	o = *off;
	for (int64_t r = 0; r < s->m; r++) { /* y[r] is written when its thread is done */
		int th = -1, len = 0;
		for (int t = 0; t < fm->nthreads && th < 0; t++)
			if (fm->work[t] > 0 && fm->prod[fm->first[t]].row == r) th = t, len = fm->work[t];
		bool done = s->variant == COO ? k >= 1 : th < 0 || len <= k;
		s->state[o + r] = done ? S_DONE : S_PENDING;
		s->val[o + r] = done ? s->y[r] : NAN;
		s->hatch[o + r] = false;
	}
	label(f, s->y_r.x, s->mat_r.y - lh * 1.1f, "y");
	draw_block(f, s, 2, s->y_r, (int)s->m, 1, off, "y", 2, 0);
}

/* A flat array of the format: index arrays plain, val / col lit by the iteration that reads them. */
static float draw_array(vz_frame *f, spmv_scene *s, int g, const sarr *a, float y, int k, int64_t *off)
{
	const sfmt *fm = &s->f[s->variant];
	float lh = vz_text_height(f, VZ_FONT_SMALL), ac = s->ac;
	bool lit = strcmp(a->name, "val") == 0 || strcmp(a->name, "col") == 0;
	int64_t o = *off;
	for (int64_t i = 0; i < a->len; i++) {
		int it = lit && i < fm->nslots ? fm->slot_iter[i] : -2;
		bool pad = s->variant == ELL && lit && it < 0;
		s->state[o + i] = it == -2 ? S_INDEX : pad ? S_PAD : (uint8_t)iter_state(it, k);
		s->val[o + i] = a->v[i];
		s->hatch[o + i] = pad;
	}
	char t[64];
	snprintf(t, sizeof t, "%s[%lld]", a->name, (long long)a->len);
	label(f, s->fmt_r.x, y, t);
	float yy = y + lh * 1.05f; /* ac and per make the longest array fit the column */
	int64_t per = (a->len + MAXLINES - 1) / MAXLINES; /* never more lines than grids */
	if (s->per > per) per = s->per;
	for (int64_t at = 0, line = 0; at < a->len; at += per, line++, yy += ac) {
		int64_t n = a->len - at < per ? a->len - at : per;
		draw_block(f, s, 5 + g * MAXLINES + (int)line, vz_r(s->fmt_r.x, yy, (float)n * ac, ac), 1, (int)n, off, a->name,
		           (int32_t)(100 + g), (int32_t)at);
	}
	return yy + lh * 0.4f;
}

/* ELL and JDS as the lecture draws them: rows packed to the left (JDS: sorted, with perm). */
static float draw_packed(vz_frame *f, spmv_scene *s, float y, int k, int64_t *off)
{
	const sfmt *fm = &s->f[s->variant];
	int64_t W = fm->width > 0 ? fm->width : 1, o = *off;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	for (int64_t i = 0; i < s->m * W; i++) {
		s->state[o + i] = s->variant == ELL ? S_PAD : S_ZERO;
		s->hatch[o + i] = s->variant == ELL;
		s->val[o + i] = s->variant == ELL ? 0 : NAN;
	}
	for (int th = 0; th < fm->nthreads && th < s->m; th++) /* thread th: row th (ELL) or sorted row th (JDS) */
		for (int it = 0; it < fm->work[th] && it < W; it++) {
			int64_t c = o + (int64_t)th * W + it;
			s->state[c] = (uint8_t)iter_state(it, k);
			s->hatch[c] = false;
			s->val[c] = fm->prod[fm->first[th] + it].val;
		}
	label(f, s->fmt_r.x, y, s->variant == ELL ? vz_tr("ELL: every row padded to the longest (hatched: padding)",
	                                                  "ELL：每行都填充到最长行的长度（斜线：填充）")
	                                          : vz_tr("JDS: rows sorted by length; perm says where each came from",
	                                                  "JDS：按长度给行排序；perm 记录每行原来的位置"));
	float ac = s->pc, x0 = s->fmt_r.x + (s->variant == JDS ? ac * 1.5f : 0);
	draw_block(f, s, 3, vz_r(x0, y + lh * 1.1f, (float)W * ac, (float)s->m * ac), (int)s->m, (int)W, off, "packed", 3, 0);
	if (s->variant == JDS) {
		const sarr *perm = array_of(fm, "perm");
		int64_t o2 = *off;
		for (int64_t r = 0; r < s->m; r++) {
			s->state[o2 + r] = S_INDEX;
			s->val[o2 + r] = perm && r < perm->len ? perm->v[r] : NAN;
			s->hatch[o2 + r] = false;
		}
		draw_block(f, s, 4, vz_r(s->fmt_r.x, y + lh * 1.1f, ac, (float)s->m * ac), (int)s->m, 1, off, "perm", 4, 0);
	}
	return y + lh * 1.1f + (float)s->m * ac + lh * 0.6f;
}

static void draw_format(vz_frame *f, spmv_scene *s, int k, int64_t *off)
{
	const sfmt *fm = &s->f[s->variant];
	float y = s->fmt_r.y;
	if (s->variant == ELL || s->variant == JDS) y = draw_packed(f, s, y, k, off);
	for (int i = 0; i < fm->narr; i++) {
		if (s->variant == JDS && strcmp(fm->arr[i].name, "perm") == 0) continue;
		y = draw_array(f, s, i, &fm->arr[i], y, k, off);
	}
	if (s->variant == ELL)
		VZ_TEXTF_TR(f, s->fmt_r.x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		            "stored column by column: slot t of row r at t*%lld + r", "按列存储：第 r 行的第 t 个槽位在 t*%lld + r",
		            (long long)s->m);
}

/* Each thread's products as a row of cells, blocks apart; the longest of each block outlined. */
static void draw_work(vz_frame *f, spmv_scene *s, int k)
{
	const sfmt *fm = &s->f[s->variant];
	float lh = vz_text_height(f, VZ_FONT_SMALL), x0 = s->work_r.x, bh = s->bar_h;
	float cw = fminf(bh, (s->work_r.w - 9 * vz_char_width(f, VZ_FONT_SMALL)) / (float)(fm->maxwork > 0 ? fm->maxwork : 1));
	label(f, x0, s->work_r.y - lh * 1.2f,
	      s->variant == COO ? vz_tr("work per thread (one per nonzero)", "每个线程的工作量（每个非零元一个线程）")
	                        : vz_tr("work per thread (one per row)", "每个线程的工作量（每行一个线程）"));
	float y = s->work_r.y;
	int B = fm->block > 0 ? fm->block : 1;
	float lx = x0 + 8 * vz_char_width(f, VZ_FONT_SMALL);
	for (int b0 = 0; b0 < fm->nthreads; b0 += B) {
		int longest = 0;
		for (int th = b0; th < b0 + B && th < fm->nthreads; th++)
			if (fm->work[th] > longest) longest = fm->work[th];
		for (int th = b0; th < b0 + B && th < fm->nthreads; th++, y += bh) {
			if (bh >= lh * 0.8f) vz_textf(f, x0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "t%d", th);
			for (int it = 0; it < fm->work[th]; it++) {
				vz_rect r = vz_r(lx + (float)it * cw, y + bh * 0.1f, cw * 0.92f, bh * 0.8f);
				int st = iter_state(it, k);
				vz_fill(f, r, state_color(st));
				vz_cell *c = vz_cell_add(f, r, "product");
				c->group = fmts[s->variant];
				c->state = state_names[st];
				c->color = state_color(st);
				c->thread = th % B;
				c->block = th / B;
				c->index = fm->prod[fm->first[th] + it].slot;
				c->step = it + 1;
				c->row = fm->prod[fm->first[th] + it].row;
				c->col = fm->prod[fm->first[th] + it].col;
				c->value = fm->prod[fm->first[th] + it].val;
				c->has_value = true;
				c->tag = th;
			}
			if (fm->work[th] == longest && longest > 0 && s->variant != COO)
				vz_outline(f, vz_r(lx - 1, y, (float)longest * cw + 2, bh), 2, vz_th.highlight);
		}
		if (s->variant != COO && bh >= lh * 0.7f && longest > 0)
			VZ_TEXTF_TR(f, lx + (float)fm->maxwork * cw + 4, y - bh, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.highlight,
			            "block %d: %d steps", "线程块 %d：%d 步", b0 / B, longest);
		y += bh;
	}
}

static void spmv_draw(void *p, vz_frame *f)
{
	spmv_scene *s = p;
	s->t = f->t;
	int k = (int)floor(f->t + 1e-9);
	float x = 0;
	x = vzs_legend(f, x, 0, vz_th.active, false, vz_tr("this iteration's product", "本次迭代的乘积"));
	x = vzs_legend(f, x, 0, state_color(S_DONE), false, vz_tr("done", "已完成"));
	x = vzs_legend(f, x, 0, state_color(S_PENDING), false, vz_tr("to come", "待计算"));
	if (s->variant == ELL) x = vzs_legend(f, x, 0, vz_th.idle, true, vz_tr("padding", "填充"));
	vzs_legend(f, x, 0, vz_th.highlight, false, vz_tr("longest row of a block (its time)", "线程块中最长的行（决定它的用时）"));
	int64_t off = 0;
	draw_matrix(f, s, k, &off);
	draw_format(f, s, k, &off);
	draw_work(f, s, k);
}

/* ---------------------------------------------------------------- text */

static void spmv_title(void *p, char *buf, size_t cap)
{
	spmv_scene *s = p;
	const sfmt *fm = &s->f[s->variant];
	VZ_SNPRINTF_TR(buf, cap, "SpMV y = A x in %s: %lld x %lld, %lld nonzeros, %d threads in blocks of %d%s",
	               "稀疏矩阵向量乘 y = A x，%s 格式：%lld × %lld，%lld 个非零元，%d 个线程，每块 %d 个%s",
	               fmt_title[s->variant], (long long)s->m, (long long)s->n, (long long)s->nnz, fm->nthreads, fm->block,
	               s->demo ? vz_tr(" (emulated demonstration; your run has no trace)", "（模拟演示；你的运行没有 trace）") : "");
}

static void spmv_step_label(void *p, int step, char *buf, size_t cap)
{
	spmv_scene *s = p;
	const sfmt *fm = &s->f[s->variant];
	if (step == 0) {
		snprintf(buf, cap, "%s", s->variant == COO ? vz_tr("COO: one thread per nonzero, adding into y with an atomic",
		                                                   "COO：每个非零元一个线程，用原子操作累加进 y")
		                         : vz_tr("one thread per row: a thread's loop runs as long as its row (-> to step)",
		                                 "每行一个线程：线程的循环次数等于该行的长度（按 → 单步）"));
		return;
	}
	int busy = 0;
	for (int th = 0; th < fm->nthreads; th++) busy += fm->work[th] >= step;
	VZ_SNPRINTF_TR(buf, cap, "iteration %d: %d of %d threads still have a product; the others wait for their block's "
	               "longest row", "第 %d 次迭代：%d/%d 个线程还有乘积要算；其余线程等待本线程块中最长的行", step, busy,
	               fm->nthreads);
}

static void spmv_counters(void *p, vz_panel *pn)
{
	spmv_scene *s = p;
	static const char *const names[] = {"nnz", "row_nnz_max", "padding", "work_per_thread_max", "work_per_thread_mean",
	                                    "global_loads", "atomics", "simd_efficiency", "modelled_cycles", "time_ms", NULL};
	for (int i = 0; i < NFMT; i++) vzs_panel_add(pn, fmt_title[i], &s->f[i].run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	vz_panel_note(pn, "%s", vz_tr("padding: ELL slots that hold no nonzero (m x longest row - nnz); work: products per thread",
	                              "padding：ELL 中不存非零元的槽位（m × 最长行 − nnz）；work：每个线程的乘积数"));
	/* a matrix drawn cell by cell fits on the modelled SM at once: every format then waits for its
	 * longest row, and JDS pays its iter_ptr load each iteration; the cycles rank the formats only
	 * on matrices that take several waves (lesson 19 step 8, tests/kernels/test_claims.lua) */
	vz_panel_note(pn, "%s", vz_tr("modelled_cycles: one wave here (each format waits for its longest row); the formats "
	                              "differ in padding and SIMD efficiency. Cycles rank them on 4096 rows (lesson 19, step 8).",
	                              "modelled_cycles：这里只有一波（每种格式都在等最长的行）；各格式的差别在填充和 SIMD 效率上。"
	                              "周期的排序要在 4096 行上看（第 19 课第 8 步）。"));
}

static void spmv_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	spmv_scene *s = p;
	char v[32];
	if (strcmp(c->kind, "product") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "block %d, thread %d: product %d of its row\nA[%d][%d] = %s (val[%d]) times x[%d]",
		               "线程块 %d，线程 %d：所在行的第 %d 个乘积\nA[%d][%d] = %s（val[%d]）乘 x[%d]", c->block, c->thread, c->step,
		               c->row, c->col, vzs_short(v, sizeof v, c->value), c->index, c->col);
		return;
	}
	if (c->rows > 0 && c->cols > 0) return; /* dense images: the cell's own fields */
	if (strcmp(c->kind, "matrix") == 0 && c->index >= 0)
		snprintf(buf, cap, "A[%lld][%lld] %s %s", (long long)(c->index / s->n), (long long)(c->index % s->n),
		         c->has_value ? "=" : "", c->has_value ? vzs_short(v, sizeof v, c->value) : vz_tr("= 0 (not stored)", "= 0（不存储）"));
	else if (c->index >= 0)
		snprintf(buf, cap, "%s[%d]%s%s\n%s", c->kind, c->index, c->has_value ? " = " : "",
		         c->has_value ? vzs_short(v, sizeof v, c->value) : "", state_label(c->state));
}

static const vz_option spmv_options[] = {
	{"format", VZ_OPT_CHOICE, 0, 0, "coo csr ell jds", "csr", "the format shown first"},
	{"matrix", VZ_OPT_CHOICE, 0, 0, "skewed pmpp random", "skewed", "the demonstration matrix"},
	{"m", VZ_OPT_INT, 1, 64, NULL, "12", "rows (skewed, random)"},
	{"n", VZ_OPT_INT, 1, 64, NULL, "m", "columns (skewed, random)"},
	{"block", VZ_OPT_INT, 1, 1024, NULL, "4", "threads per block"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_spmv = {
	.name = "spmv",
	.summary = "sparse matrix-vector product in COO, CSR, ELL (padding) and JDS (sorted rows): work per thread, the longest row",
	.patterns = "spmv",
	.options = spmv_options,
	.create = spmv_create,
	.destroy = spmv_destroy,
	.steps = spmv_steps,
	.variants = spmv_variants,
	.variant_name = spmv_variant_name,
	.set_variant = spmv_set_variant,
	.initial_variant = spmv_initial_variant,
	.layout = spmv_layout,
	.draw = spmv_draw,
	.title = spmv_title,
	.step_label = spmv_step_label,
	.counters = spmv_counters,
	.describe = spmv_describe,
};
