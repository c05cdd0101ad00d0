/*
 * histogram.c — the histogram scene (PMPP chapter 9): the input flowing into bins, one barrier
 * phase of one block per step; for the privatized and aggregated kernels the per-block private
 * copies in shared memory and their merge into the global histogram; for the aggregated one the
 * runs each atomic adds; a heat map of same-address atomics per bin and step (the queue the
 * hardware serialises); and the three algorithms' counters side by side, all on the same input.
 *
 * What is read from a trace (docs/trace.md "Histogram"): each thread's loads of `data` belong to
 * its next atomic (an atomic adding c covers the c oldest loads not yet counted, which is how the
 * aggregated kernel's runs come out); an atomic's `index` is its bin, `aux` its place in the queue
 * of same-address atomics of its block and step. Built from a histogram run with a trace (the
 * other two algorithms run on its input), from a run without one, or from options.
 * Read next: reduce.c, divergence.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define NALGOS 3
static const char *const algos[NALGOS] = {"global-atomic", "privatized", "aggregated"};

/* One animation step: a barrier phase of one block. */
typedef struct hstep {
	uint32_t block, step;
	int64_t first_atomic, natomics; /* into atomics[] */
	int max_queue;                  /* the longest same-address queue (aux + 1) */
	int kind;                       /* 0: count into global, 1: count into private, 2: merge, 3: other */
} hstep;

typedef struct hatomic {
	int64_t event;
	uint32_t bin, queue, latency, thread, block;
	double value;
	bool shared;
	int64_t first_elem, nelems;     /* the input elements it counts (into elems[]) */
} hatomic;

typedef struct hrun {
	lm_viz_run run;
	int blocks, threads;
	hstep *steps;
	int nsteps;
	hatomic *atomics;
	int64_t natomics;
	int64_t *elems;                 /* input element indices, grouped by atomic */
	int64_t *elem_step;             /* the step each element is counted in (-1: never) */
	int32_t *elem_bin;
	double *global_after;           /* nsteps x bins: the global histogram after each step */
	double *private_after;          /* blocks x bins: each private copy once counted, or NULL */
	int *private_step;              /* blocks: the step it is counted in (-1: never) */
	double *private_scratch;        /* blocks x bins: the copies as they stand at a step */
	int max_queue;
} hrun;

typedef struct hist_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo, text_bins;
	int64_t n, bins;
	double *values;                 /* the input: bin indices */
	char *letters;                  /* text inputs: the letter of each element */
	hrun runs[NALGOS];
	int variant;
	vz_image *input_img, *heat_img, *priv_img;
	vzs_grid priv_grid;
	int img_step;                   /* the step the images were filled for (-1: none) */
	double t;                       /* the time last drawn */
	/* layout */
	vz_rect in_r, priv_r, bars_r, heat_r;
	float row_label_w, heat_label_w, priv_rh;
	int in_cols, in_rows;
	char fname[32];
} hist_scene;

/* ---------------------------------------------------------------- reading a trace */

static void hrun_free(hrun *h)
{
	vz_run_clear(&h->run);
	vz_free(h->steps);
	vz_free(h->atomics);
	vz_free(h->elems);
	vz_free(h->elem_step);
	vz_free(h->elem_bin);
	vz_free(h->global_after);
	vz_free(h->private_after);
	vz_free(h->private_step);
	vz_free(h->private_scratch);
	memset(h, 0, sizeof *h);
}

typedef struct pending {
	int64_t *q;   /* element indices loaded and not yet counted, oldest first */
	int n, cap;
} pending;

static bool pend_push(pending *p, int64_t e)
{
	if (p->n == p->cap) {
		int c = p->cap ? p->cap * 2 : 8;
		int64_t *q = vz_realloc(p->q, (size_t)c * sizeof *q);
		if (!q) return false;
		p->q = q;
		p->cap = c;
	}
	p->q[p->n++] = e;
	return true;
}

/* Events of one trace step into atomics (and the elements they count). */
static lm_status read_step(hrun *h, const lm_trace *t, const lm_trace_step *s, int data, int64_t n,
                           pending *pend, int64_t *nel, int64_t *cap_at)
{
	int64_t end = s->first + s->count, kept = lm_trace_count(t);
	if (end > kept) end = kept;
	for (int64_t i = s->first; i < end; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		uint32_t th = (uint32_t)e->warp * 32 + e->lane;
		if (th >= (uint32_t)h->threads) continue;
		if (e->kind == LM_TRACE_LOAD && e->array == data && (int64_t)e->index < n) {
			if (!pend_push(&pend[th], e->index)) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
			continue;
		}
		if (e->kind != LM_TRACE_ATOMIC) continue;
		if (h->natomics == *cap_at) {
			int64_t c = *cap_at ? *cap_at * 2 : 1024;
			hatomic *a = vz_realloc(h->atomics, (size_t)c * sizeof *a);
			if (!a) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
			h->atomics = a;
			*cap_at = c;
		}
		hatomic *a = &h->atomics[h->natomics++];
		a->event = i;
		a->bin = e->index;
		a->queue = e->aux;
		a->latency = e->latency;
		a->thread = th;
		a->block = e->block;
		a->value = e->value;
		a->shared = e->space == LM_SPACE_SHARED;
		a->first_elem = *nel;
		a->nelems = 0;
		/* an atomic of the counting phase covers the oldest `value` loads of its thread */
		pending *p = &pend[th];
		int64_t c = (int64_t)e->value;
		if (p->n > 0 && c > 0) {
			if (c > p->n) c = p->n;
			for (int64_t k = 0; k < c; k++) {
				int64_t el = p->q[k];
				h->elems[(*nel)++] = el;
				h->elem_step[el] = h->nsteps;
				h->elem_bin[el] = (int32_t)e->index;
			}
			memmove(p->q, p->q + c, (size_t)(p->n - c) * sizeof *p->q);
			p->n -= (int)c;
			a->nelems = c;
		}
	}
	return LM_OK;
}

/* The global histogram after each step; each block's private copy and the step it is counted in
 * (a block counts into its copy in one barrier phase, so the copy is 0 before it and complete
 * after it: blocks x bins numbers, not a copy per step). */
static lm_status accumulate(hrun *h, int64_t bins)
{
	size_t gb = (size_t)h->nsteps * (size_t)bins, pb = (size_t)h->blocks * (size_t)bins;
	h->global_after = vz_calloc(gb ? gb : 1, sizeof *h->global_after);
	bool priv = false;
	for (int64_t i = 0; i < h->natomics; i++) priv |= h->atomics[i].shared;
	if (priv) {
		h->private_after = vz_calloc(pb ? pb : 1, sizeof *h->private_after);
		h->private_scratch = vz_calloc(pb ? pb : 1, sizeof *h->private_scratch);
		h->private_step = vz_malloc((size_t)h->blocks * sizeof *h->private_step);
	}
	if (!h->global_after || (priv && (!h->private_after || !h->private_scratch || !h->private_step)))
		return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
	for (int b = 0; priv && b < h->blocks; b++) h->private_step[b] = -1;
	for (int k = 0; k < h->nsteps; k++) {
		double *g = h->global_after + (size_t)k * (size_t)bins;
		if (k) memcpy(g, g - bins, (size_t)bins * sizeof *g);
		const hstep *s = &h->steps[k];
		for (int64_t i = s->first_atomic; i < s->first_atomic + s->natomics; i++) {
			const hatomic *a = &h->atomics[i];
			if ((int64_t)a->bin >= bins || (int)a->block >= h->blocks) continue;
			if (a->shared) {
				h->private_after[(size_t)a->block * (size_t)bins + a->bin] += a->value;
				if (h->private_step[a->block] < 0) h->private_step[a->block] = k;
			} else {
				g[a->bin] += a->value;
			}
		}
	}
	return LM_OK;
}

/* The private copies as they stand after step k (1-based; 0: before any). */
static const double *private_at(const hrun *h, int64_t bins, int k)
{
	for (int b = 0; b < h->blocks; b++) {
		bool counted = h->private_step[b] >= 0 && h->private_step[b] < k;
		double *dst = h->private_scratch + (size_t)b * (size_t)bins;
		if (counted) memcpy(dst, h->private_after + (size_t)b * (size_t)bins, (size_t)bins * sizeof *dst);
		else memset(dst, 0, (size_t)bins * sizeof *dst);
	}
	return h->private_scratch;
}

static lm_status hrun_build(hrun *h, const lm_viz_run *run, int64_t n, int64_t bins, const char *fname)
{
	memset(h, 0, sizeof *h);
	vz_run_copy(&h->run, run);
	const lm_trace *t = run->trace;
	lm_trace_launch la;
	lm_trace_launch_get(t, 0, &la);
	h->blocks = (int)(la.grid[0] * la.grid[1] * la.grid[2]);
	h->threads = (int)(la.block[0] * la.block[1] * la.block[2]);
	int data = vz_trace_array(t, "data", LM_SPACE_GLOBAL, -1);
	h->steps = vz_calloc((size_t)la.nsteps + 1, sizeof *h->steps);
	h->elems = vz_malloc((size_t)n * sizeof *h->elems);
	h->elem_step = vz_malloc((size_t)n * sizeof *h->elem_step);
	h->elem_bin = vz_malloc((size_t)n * sizeof *h->elem_bin);
	pending *pend = vz_calloc((size_t)h->threads, sizeof *pend);
	lm_status st = LM_OK;
	if (!h->steps || !h->elems || !h->elem_step || !h->elem_bin || !pend)
		st = lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	for (int64_t i = 0; st == LM_OK && i < n; i++) {
		h->elem_step[i] = -1;
		h->elem_bin[i] = -1;
	}
	int64_t nel = 0, cap_at = 0;
	uint32_t cur_block = UINT32_MAX;
	for (int64_t i = la.first_step; st == LM_OK && i < la.first_step + la.nsteps; i++) {
		lm_trace_step s;
		lm_trace_step_get(t, i, &s);
		if (s.block != cur_block) { /* a new block: its threads start afresh */
			for (int k = 0; k < h->threads; k++) pend[k].n = 0;
			cur_block = s.block;
		}
		hstep *k = &h->steps[h->nsteps];
		k->block = s.block;
		k->step = s.step;
		k->first_atomic = h->natomics;
		st = read_step(h, t, &s, data, n, pend, &nel, &cap_at);
		k->natomics = h->natomics - k->first_atomic;
		bool shared = false, global = false;
		for (int64_t a = k->first_atomic; a < h->natomics; a++) {
			if ((int)h->atomics[a].queue + 1 > k->max_queue) k->max_queue = (int)h->atomics[a].queue + 1;
			if (h->atomics[a].shared) shared = true;
			else global = true;
		}
		k->kind = shared ? 1 : global ? (h->atomics[k->first_atomic].nelems ? 0 : 2) : 3;
		if (k->max_queue > h->max_queue) h->max_queue = k->max_queue;
		h->nsteps++;
	}
	for (int k = 0; pend && k < h->threads; k++) vz_free(pend[k].q);
	vz_free(pend);
	if (st == LM_OK && h->nsteps == 0) st = lm_set_error(LM_ERR_ARG, "%s: the histogram trace has no steps", fname);
	if (st == LM_OK) st = accumulate(h, bins);
	if (st != LM_OK) hrun_free(h);
	return st;
}

/* ---------------------------------------------------------------- create */

static void hist_destroy(void *p)
{
	hist_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < NALGOS; i++) hrun_free(&s->runs[i]);
	vz_image_free(s->input_img);
	vz_image_free(s->heat_img);
	vz_image_free(s->priv_img);
	vzs_grid_free(&s->priv_grid);
	vz_free(s->values);
	vz_free(s->letters);
	vz_free(s);
}

static int algo_index(const char *a)
{
	for (int i = 0; i < NALGOS; i++)
		if (strcmp(a, algos[i]) == 0) return i;
	return -1;
}

/* The three algorithms on the scene's input (one of them may be given). */
static lm_status run_all(hist_scene *s, const lm_viz_run *have, int64_t block, int64_t coarsen,
                         const char *fname)
{
	int32_t *bins_of = vz_malloc((size_t)s->n * sizeof *bins_of);
	if (!bins_of) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	for (int64_t i = 0; i < s->n; i++) bins_of[i] = (int32_t)s->values[i];
	lm_status st = LM_OK;
	for (int i = 0; i < NALGOS && st == LM_OK; i++) {
		if (have && strcmp(have->algo, algos[i]) == 0) {
			st = hrun_build(&s->runs[i], have, s->n, s->bins, fname);
			continue;
		}
		lm_viz_run r;
		st = vzs_run_histogram(bins_of, s->n, s->bins, algos[i], block, i == 2 ? coarsen : 0, &r, fname);
		if (st != LM_OK) break;
		st = hrun_build(&s->runs[i], &r, s->n, s->bins, fname);
		vz_run_clear(&r);
	}
	vz_free(bins_of);
	return st;
}

static lm_status from_trace(hist_scene *s, const lm_viz_run *r, const char *fname)
{
	const lm_trace *t = r->trace;
	if (vz_trace_check(t, fname) != LM_OK) return LM_ERR_ARG;
	int data = vz_trace_array(t, "data", LM_SPACE_GLOBAL, -1), histo = vz_trace_array(t, "histo", LM_SPACE_GLOBAL, -1);
	if (data < 0 || histo < 0)
		return lm_set_error(LM_ERR_ARG, "%s: not a trace of a histogram kernel (it has no arrays data "
		                    "and histo): %s", fname, lm_trace_name(t));
	lm_trace_array da, ha;
	lm_trace_array_get(t, data, &da);
	lm_trace_array_get(t, histo, &ha);
	if (da.dtype != LM_INT32 && da.dtype != LM_UINT8)
		return lm_set_error(LM_ERR_ARG, "%s: histogram data of dtype %s cannot be drawn", fname, lm_dtype_name(da.dtype));
	s->bins = ha.length;
	int64_t n;
	double *x = vz_trace_input(t, "data", &n);
	if (!x && !lm_trace_truncated(t)) return vz_error_prefix(LM_ERR_ARG, fname);
	if (!x || n != da.length) {
		vz_free(x);
		return lm_set_error(LM_ERR_ARG, "%s: the histogram trace is truncated: its events load %lld of "
		                    "the %lld elements; run the kernel with a larger trace_cap", fname,
		                    x ? (long long)n : 0LL, (long long)da.length);
	}
	s->n = n;
	s->values = x;
	if (da.dtype == LM_UINT8) /* bytes of a string: byte b falls in bin b * bins / 256 */
		for (int64_t i = 0; i < n; i++) x[i] = floor(x[i] * (double)s->bins / 256.0);
	lm_trace_launch la;
	lm_trace_launch_get(t, 0, &la);
	int64_t coarsen = (int64_t)vz_run_counter(r, "coarsen", 0);
	s->variant = algo_index(r->algo) >= 0 ? algo_index(r->algo) : 1;
	return run_all(s, r, (int64_t)la.block[0], coarsen, fname);
}

/* The lecture's example: the letters of a phrase in bins of four letters (a-d, e-h, ...). */
static lm_status demo_input(hist_scene *s, const lm_viz_opts *o, const char *fname)
{
	const char *kind = vz_opt_string(o, "input", "pmpp");
	/* runs: 1024 values in runs of 32 to 127, long enough that a privatized copy's atomics queue
	 * on one bin and aggregation pays in modelled cycles too (tests/kernels/test_claims.lua) */
	int64_t n = vz_opt_int(o, "n", strcmp(kind, "runs") == 0 ? 1024 : 256);
	if (strcmp(kind, "pmpp") == 0 || strcmp(kind, "text") == 0) {
		const char *text = strcmp(kind, "pmpp") == 0 ? "programming massively parallel processors"
		                                              : vz_opt_string(o, "text", "");
		s->values = vz_malloc((strlen(text) + 1) * sizeof *s->values);
		s->letters = vz_malloc(strlen(text) + 1);
		if (!s->values || !s->letters) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
		n = 0;
		for (const char *c = text; *c; c++) {
			char l = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
			if (l < 'a' || l > 'z') continue;
			s->letters[n] = l;
			s->values[n++] = (l - 'a') / 4;
		}
		if (n == 0) return lm_set_error(LM_ERR_ARG, "%s: option text has no letters to count", fname);
		s->bins = 7;
		s->text_bins = true;
	} else {
		s->bins = vz_opt_int(o, "bins", 16);
		s->values = vz_malloc((size_t)n * sizeof *s->values);
		if (!s->values) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
		uint64_t r = 0x2545F4914F6CDD1Dull;
		int64_t run_bin = 0, run_left = 0;
		for (int64_t i = 0; i < n; i++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			if (strcmp(kind, "runs") == 0) { /* runs of equal bins, as in images: aggregation pays */
				if (run_left == 0) {
					run_bin = (int64_t)(r % (uint64_t)s->bins);
					run_left = 32 + (int64_t)((r >> 20) % 96);
				}
				s->values[i] = (double)run_bin;
				run_left--;
			} else {
				s->values[i] = (double)(r % (uint64_t)s->bins);
			}
		}
	}
	s->n = n;
	return LM_OK;
}

static void *hist_create(const vz_build *b)
{
	hist_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	s->img_step = -1;
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	lm_status st;
	if (traced) {
		st = from_trace(s, traced, b->fname);
	} else {
		s->demo = b->nruns > 0;
		st = demo_input(s, b->opts, b->fname);
		const char *a = vz_opt_string(b->opts, "algo", b->nruns ? b->runs[0].algo : "privatized");
		s->variant = algo_index(a) >= 0 ? algo_index(a) : 1;
		if (st == LM_OK)
			st = run_all(s, NULL, vz_opt_int(b->opts, "block", s->n <= 64 ? 16 : 0),
			             vz_opt_int(b->opts, "coarsen", 0), b->fname);
	}
	if (st != LM_OK) {
		hist_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, variants, layout */

static int hist_steps(void *p)
{
	hist_scene *s = p;
	return s->runs[s->variant].nsteps + 1;
}

static int hist_variants(void *p)
{
	(void)p;
	return NALGOS;
}

static const char *hist_variant_name(void *p, int v)
{
	(void)p;
	return algos[v];
}

static int hist_initial_variant(void *p) { return ((hist_scene *)p)->variant; }

static void hist_set_variant(void *p, int v)
{
	hist_scene *s = p;
	s->variant = v;
	s->img_step = -1;
}

static int hr_blocks(const hist_scene *s) { return s->runs[s->variant].blocks; }

static void hist_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	hist_scene *s = p;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), top = lh * 1.6f, gap = lh * 1.8f;
	float left_w = c->w * 0.68f, right_x = left_w + 24 * c->scale;
	float h = c->h - top;
	bool priv = s->runs[s->variant].private_after != NULL;
	float in_h = h * 0.22f, priv_h = priv ? h * 0.26f : 0, bars_h = h - in_h - priv_h - gap * (priv ? 3 : 2);
	/* a heading (lh * 1.3 above its row), then a line for what arrives (the aggregated runs' +n) */
	float head = lh * 2.4f;
	float cw = vz_char_width(f, VZ_FONT_SMALL);
	s->row_label_w = 9 * cw;
	s->heat_label_w = 10 * cw;
	s->in_r = vz_r(0, top + lh * 1.3f, left_w, in_h - lh * 1.3f);
	s->priv_r = vz_r(s->row_label_w, top + in_h + gap + head, left_w - s->row_label_w, priv_h - head);
	s->bars_r = vz_r(s->row_label_w, top + in_h + priv_h + gap * (priv ? 2 : 1) + head,
	                 left_w - s->row_label_w, bars_h - head - lh * 1.3f);
	if (hr_blocks(s) > 0) s->priv_rh = fminf(s->priv_r.h / (float)hr_blocks(s), 26 * c->scale);
	/* the heat map: at most 22 pixels a row, the colour scale under it */
	const hrun *hr = &s->runs[s->variant];
	float heat_h = fminf(h - lh * 5.4f, (float)hr->nsteps * 22 * c->scale);
	s->heat_r = vz_r(right_x + s->heat_label_w, top + lh * 2.6f, c->w - right_x - s->heat_label_w, heat_h);
	/* the input as a grid of cells, as square as the box allows */
	int64_t cols = s->n;
	float cell = s->in_r.w / (float)cols;
	while (cell < s->in_r.h / (float)((s->n + cols - 1) / cols) * 0.5f && cols > 1) {
		cols = (cols + 1) / 2;
		cell = s->in_r.w / (float)cols;
	}
	s->in_cols = (int)cols;
	s->in_rows = (int)((s->n + cols - 1) / cols);
	*ww = c->w;
	*wh = c->h;
}

/* ---------------------------------------------------------------- drawing */

static vz_color bin_color(const hist_scene *s, int64_t bin)
{
	if (s->bins <= 7) return vz_category((int)bin);
	return vz_viridis(s->bins > 1 ? (double)bin / (double)(s->bins - 1) : 0);
}

static const char *bin_label(const hist_scene *s, int64_t b, char *buf, size_t cap)
{
	if (s->text_bins) {
		char lo = (char)('a' + 4 * b), hi = (char)('a' + 4 * b + 3 > 'z' ? 'z' : 'a' + 4 * b + 3);
		snprintf(buf, cap, "%c-%c", lo, hi);
	} else {
		snprintf(buf, cap, "%lld", (long long)b);
	}
	return buf;
}

static vz_rect input_cell(const hist_scene *s, int64_t i)
{
	float cw = s->in_r.w / (float)s->in_cols, ch = fminf(s->in_r.h / (float)s->in_rows, cw * 1.2f + 8);
	return vz_r(s->in_r.x + (float)(i % s->in_cols) * cw, s->in_r.y + (float)(i / s->in_cols) * ch, cw, ch);
}

static void draw_input(vz_frame *f, hist_scene *s, const hrun *h, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	VZ_TEXTF_TR(f, s->in_r.x, s->in_r.y - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	            "input: %lld elements, coloured by bin (faded: not counted yet; outlined: counted in this step)",
	            "输入：%lld 个元素，按所属的桶着色（浅色：尚未计数；描边：本步计数）", (long long)s->n);
	bool small = input_cell(s, 0).w * vz_zoom(f) >= 6;
	if (!small) { /* many elements: one image, one pixel per element */
		if (!s->input_img) s->input_img = vz_image_new(s->in_cols, s->in_rows);
		if (s->input_img && s->img_step != k) {
			for (int64_t i = 0; i < s->n; i++) {
				bool done = h->elem_step[i] >= 0 && h->elem_step[i] < k;
				vz_color c = bin_color(s, (int64_t)s->values[i]);
				vz_image_set(s->input_img, (int)(i % s->in_cols), (int)(i / s->in_cols),
				             done ? c : vz_mix(vz_th.bg, c, 0.2));
			}
		}
		vz_rect r = vz_r(s->in_r.x, s->in_r.y, s->in_r.w, input_cell(s, 0).h * (float)s->in_rows);
		vz_draw_image(f, r, s->input_img);
		vz_cell *g = vz_cell_add(f, r, "element");
		g->group = "input";
		g->rows = s->in_rows;
		g->cols = s->in_cols;
		g->index = 0;
		return;
	}
	for (int64_t i = 0; i < s->n; i++) {
		vz_rect r = input_cell(s, i);
		vz_rect cr = vz_r(r.x + r.w * 0.05f, r.y + r.h * 0.05f, r.w * 0.9f, r.h * 0.9f);
		if (!vz_visible(f, cr)) continue;
		int64_t st = h->elem_step[i];
		bool done = st >= 0 && st < k, now = st == k - 1;
		vz_color c = bin_color(s, (int64_t)s->values[i]);
		if (!done) c = vz_mix(vz_th.bg, c, 0.22);
		vzs_value_cell(f, cr, c, s->values[i], false);
		if (now) vz_outline(f, vz_r(cr.x - 1, cr.y - 1, cr.w + 2, cr.h + 2), 2, vz_th.text);
		char lbl[24];
		if (s->letters) snprintf(lbl, sizeof lbl, "%c", s->letters[i]);
		else vzs_short(lbl, sizeof lbl, s->values[i]);
		if (vz_text_fits(f, VZ_FONT_BODY, lbl, cr.w * 0.9f))
			vz_text_draw(f, cr.x + cr.w / 2, cr.y + (cr.h - vz_text_height(f, VZ_FONT_BODY)) / 2,
			             VZ_FONT_BODY, VZ_ALIGN_CENTER, done ? vz_text_on(c) : vz_th.text_dim, lbl);
		vz_cell *cell = vz_cell_add(f, cr, "element");
		cell->group = "input";
		cell->state = now ? "active" : done ? "done" : "pending";
		cell->color = c;
		cell->index = (int32_t)i;
		cell->value = s->values[i];
		cell->has_value = true;
	}
}

static float bin_x(const hist_scene *s, vz_rect r, int64_t b) { return r.x + (float)b * r.w / (float)s->bins; }

/* Private copies: one row per block, a cell per bin (viridis by count). */
static void draw_private(vz_frame *f, hist_scene *s, const hrun *h, int k)
{
	if (!h->private_after) return;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	vz_text_draw(f, s->priv_r.x, s->priv_r.y - lh * 2.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	             vz_tr("private histograms in shared memory, one per block (colour: count so far)",
	                   "共享内存中的私有直方图，每个线程块一份（颜色：目前的计数）"));
	const double *p = private_at(h, s->bins, k);
	double most = 1;
	const double *last = h->private_after;
	for (size_t i = 0; i < (size_t)h->blocks * (size_t)s->bins; i++)
		if (last[i] > most) most = last[i];
	float rh = s->priv_rh, cw = s->priv_r.w / (float)s->bins;
	float label_w = 0;
	int cur_block = k > 0 ? (int)h->steps[k - 1].block : -1;
	if (vzs_dense(f, cw) || rh * vz_zoom(f) < 3) { /* every copy as one image */
		size_t n = (size_t)h->blocks * (size_t)s->bins;
		vz_color *px = vz_malloc(n * sizeof *px);
		if (!px) return;
		for (size_t i = 0; i < n; i++) px[i] = p && p[i] > 0 ? vz_viridis(p[i] / most) : vz_th.pending;
		vz_rect r = vz_r(s->priv_r.x, s->priv_r.y, s->priv_r.w, rh * (float)h->blocks);
		vz_cell *g = vzs_grid_draw(f, &s->priv_grid, r, h->blocks, (int)s->bins, px, "private bin", -1);
		g->group = "histo_s";
		vz_free(px);
		if (cur_block >= 0)
			vz_outline(f, vz_r(r.x - 2, r.y + (float)cur_block * rh - 1, r.w + 4, fmaxf(rh, 1) + 2), 2, vz_th.highlight);
		return;
	}
	for (int b = 0; b < h->blocks; b++) {
		float y = s->priv_r.y + (float)b * rh;
		if (!vz_visible(f, vz_r(s->priv_r.x, y, s->priv_r.w, rh))) continue;
		if (rh * vz_zoom(f) >= lh * 0.9f)
			VZ_TEXTF_TR(f, 0, y + (rh * 0.88f - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
			            b == cur_block ? vz_th.text : vz_th.text_dim, "block %d", "线程块 %d", b);
		for (int64_t bin = 0; bin < s->bins; bin++) {
			double v = p ? p[(size_t)b * (size_t)s->bins + (size_t)bin] : 0;
			vz_rect r = vz_r(bin_x(s, s->priv_r, bin) + label_w, y, cw * 0.92f, rh * 0.88f);
			vz_color c = v > 0 ? vz_viridis(v / most) : vz_th.pending;
			vzs_value_cell(f, r, c, v, v > 0 && rh * vz_zoom(f) >= lh);
			vz_cell *cell = vz_cell_add(f, r, "private bin");
			cell->group = "histo_s";
			cell->state = b == cur_block ? "active" : "done";
			cell->color = c;
			cell->index = (int32_t)bin;
			cell->block = b;
			cell->value = v;
			cell->has_value = true;
		}
		if (b == cur_block)
			vz_outline(f, vz_r(s->priv_r.x - 2, y - 2, s->priv_r.w + 2, rh * 0.88f + 4), 2, vz_th.highlight);
	}
}

static void draw_bars(vz_frame *f, hist_scene *s, const hrun *h, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	vz_rect r = s->bars_r;
	vz_text_draw(f, r.x, r.y - lh * 2.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	             vz_tr("histo in global memory (outline: the final counts)", "全局内存中的 histo（描边：最终计数）"));
	const double *g = k > 0 ? h->global_after + (size_t)(k - 1) * (size_t)s->bins : NULL;
	const double *fin = h->global_after + (size_t)(h->nsteps - 1) * (size_t)s->bins;
	double most = 1;
	for (int64_t b = 0; b < s->bins; b++)
		if (fin[b] > most) most = fin[b];
	float bw = r.w / (float)s->bins;
	char num[32], lbl[24];
	for (int64_t b = 0; b < s->bins; b++) {
		double v = g ? g[b] : 0;
		float x = bin_x(s, r, b), fh = (float)(fin[b] / most) * (r.h - lh), vh = (float)(v / most) * (r.h - lh);
		vz_rect full = vz_r(x + bw * 0.08f, r.y + r.h - lh - fh, bw * 0.84f, fh);
		vz_outline(f, full, 1, vz_th.text_dim);
		vz_rect bar = vz_r(x + bw * 0.08f, r.y + r.h - lh - vh, bw * 0.84f, vh);
		vz_fill(f, bar, bin_color(s, b));
		if (vz_text_fits(f, VZ_FONT_SMALL, vzs_short(num, sizeof num, fin[b]), bw)) {
			vz_text_draw(f, x + bw / 2, r.y + r.h - lh, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text_dim,
			             bin_label(s, b, lbl, sizeof lbl));
			if (v > 0)
				vz_text_draw(f, x + bw / 2, bar.y - lh, VZ_FONT_SMALL, VZ_ALIGN_CENTER, vz_th.text,
				             vzs_short(num, sizeof num, v));
		}
		vz_cell *cell = vz_cell_add(f, vz_r(x, r.y, bw, r.h), "bin");
		cell->group = "histo";
		cell->state = v >= fin[b] ? "done" : "pending";
		cell->color = bin_color(s, b);
		cell->index = (int32_t)b;
		cell->value = v;
		cell->has_value = true;
	}
}

/* Over each bin an aggregated run reaches in the step, what its atomics add ("+3", several: "+2+4"):
 * one atomic for a run of equal elements. Once per bin, where it fits. */
static void flow_labels(vz_frame *f, const hist_scene *s, const hrun *h, const hstep *st)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	int64_t end = st->first_atomic + st->natomics;
	for (int64_t i = st->first_atomic; i < end; i++) {
		const hatomic *a = &h->atomics[i];
		bool seen = false;
		for (int64_t j = st->first_atomic; j < i && !seen; j++)
			seen = h->atomics[j].bin == a->bin && h->atomics[j].shared == a->shared && h->atomics[j].nelems > 1;
		if (a->nelems < 2 || seen) continue;
		char t[64] = "";
		for (int64_t j = i; j < end; j++)
			if (h->atomics[j].bin == a->bin && h->atomics[j].shared == a->shared && h->atomics[j].nelems > 1)
				vz_append(t, sizeof t, "+%lld", (long long)h->atomics[j].nelems);
		vz_rect r = a->shared ? s->priv_r : s->bars_r;
		float bw = r.w / (float)s->bins;
		if (vz_text_fits(f, VZ_FONT_SMALL, t, bw))
			vz_text_draw(f, bin_x(s, r, a->bin) + bw / 2, r.y - lh * 1.05f, VZ_FONT_SMALL, VZ_ALIGN_CENTER,
			             vz_th.text, t);
	}
}

/* The current step's data flow: elements to the bins they are counted in, private bins to
 * global ones in a merge. */
static void draw_flow(vz_frame *f, hist_scene *s, const hrun *h, int k)
{
	if (k < 1) return;
	const hstep *st = &h->steps[k - 1];
	int drawn = 0;
	for (int64_t i = st->first_atomic; i < st->first_atomic + st->natomics && drawn < 600; i++) {
		const hatomic *a = &h->atomics[i];
		vz_color c = vz_fade(vz_th.arrow_now, a->queue > 0 ? 0.9 : 0.45);
		if (a->nelems > 0) {
			float tx, ty;
			if (a->shared) {
				float rh = s->priv_rh;
				tx = bin_x(s, s->priv_r, a->bin) + s->priv_r.w / (float)s->bins * 0.46f;
				ty = s->priv_r.y + (float)a->block * rh;
			} else {
				tx = bin_x(s, s->bars_r, a->bin) + s->bars_r.w / (float)s->bins / 2;
				ty = s->bars_r.y;
			}
			for (int64_t e = a->first_elem; e < a->first_elem + a->nelems && drawn < 600; e++, drawn++) {
				vz_rect r = input_cell(s, h->elems[e]);
				vz_arrow(f, r.x + r.w / 2, r.y + r.h, tx, ty, 1, 5, c);
			}
		} else if (!a->shared && h->private_after) { /* merge */
			float rh = s->priv_rh;
			float sx = bin_x(s, s->priv_r, a->bin) + s->priv_r.w / (float)s->bins * 0.46f;
			float tx = bin_x(s, s->bars_r, a->bin) + s->bars_r.w / (float)s->bins / 2;
			vz_arrow(f, sx, s->priv_r.y + (float)(a->block + 1) * rh, tx, s->bars_r.y, 1.2f, 5, c);
			drawn++;
		}
	}
	flow_labels(f, s, h, st);
}

static const char *phase_name(int kind)
{
	static const char *const names[2][4] = {{"count", "count", "merge", "zero"}, {"计数", "计数", "合并", "清零"}};
	return names[vz_zh()][kind];
}

/* The longest queue per bin in step st (q: bins entries). */
static void queues(const hist_scene *s, const hrun *h, int st, int *q)
{
	memset(q, 0, (size_t)s->bins * sizeof *q);
	const hstep *hs = &h->steps[st];
	for (int64_t i = hs->first_atomic; i < hs->first_atomic + hs->natomics; i++) {
		const hatomic *a = &h->atomics[i];
		if ((int64_t)a->bin < s->bins && (int)a->queue + 1 > q[a->bin]) q[a->bin] = (int)a->queue + 1;
	}
}

static vz_color queue_color(const hrun *h, int q)
{
	if (!q) return vz_th.pending;
	return vz_viridis(h->max_queue > 1 ? (double)(q - 1) / (h->max_queue - 1) : 0);
}

/* Heat map: a row per step, a column per bin, colour: the longest queue of same-address atomics
 * (cells with their numbers when they fit, else one image). */
static void draw_heat(vz_frame *f, hist_scene *s, const hrun *h, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	vz_rect r = s->heat_r;
	vz_text_draw(f, r.x - s->heat_label_w, r.y - lh * 2.6f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	             vz_tr("same-address atomics per bin and step", "每个桶每一步的同地址原子操作"));
	VZ_TEXTF_TR(f, r.x - s->heat_label_w, r.y - lh * 1.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
	            "(the longest queue: 1 = no conflict, up to %d)", "（最长排队：1 = 无冲突，最多 %d）",
	            h->max_queue > 0 ? h->max_queue : 1);
	float rh = r.h / (float)h->nsteps, cw = r.w / (float)s->bins;
	int *q = vz_calloc((size_t)s->bins, sizeof *q);
	if (!q) return;
	bool cells = rh * vz_zoom(f) >= 6 && cw * vz_zoom(f) >= 6;
	if (!cells && (!s->heat_img || s->img_step < 0)) {
		vz_image_free(s->heat_img);
		s->heat_img = vz_image_new((int)s->bins, h->nsteps);
		for (int st = 0; s->heat_img && st < h->nsteps; st++) {
			queues(s, h, st, q);
			for (int64_t b = 0; b < s->bins; b++) vz_image_set(s->heat_img, (int)b, st, queue_color(h, q[b]));
		}
	}
	if (!cells) {
		vz_draw_image(f, r, s->heat_img);
		vz_cell *g = vz_cell_add(f, r, "heat");
		g->group = "conflicts";
		g->rows = h->nsteps;
		g->cols = (int32_t)s->bins;
	}
	char num[16];
	for (int st = 0; st < h->nsteps; st++) {
		float y = r.y + (float)st * rh;
		if (!vz_visible(f, vz_r(r.x - s->heat_label_w, y, r.w + s->heat_label_w, rh))) continue;
		if (rh * vz_zoom(f) >= lh * 0.9f)
			vz_textf(f, r.x - s->heat_label_w, y + (rh - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT,
			         st < k ? vz_th.text : vz_th.text_dim, "b%u %s", h->steps[st].block,
			         phase_name(h->steps[st].kind));
		if (!cells) continue;
		queues(s, h, st, q);
		for (int64_t b = 0; b < s->bins; b++) {
			vz_rect cr = vz_r(r.x + (float)b * cw, y, cw * 0.94f, rh * 0.9f);
			vz_color c = queue_color(h, q[b]);
			vz_fill(f, cr, c);
			if (q[b] && vz_text_fits(f, VZ_FONT_SMALL, vz_fmt(num, sizeof num, "%d", q[b]), cr.w) &&
			    rh * vz_zoom(f) >= lh)
				vz_text_draw(f, cr.x + cr.w / 2, cr.y + (cr.h - lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_CENTER,
				             vz_text_on(c), num);
			vz_cell *cell = vz_cell_add(f, cr, "heat");
			cell->group = "conflicts";
			cell->state = st < k ? "done" : "pending";
			cell->color = c;
			cell->row = st;
			cell->col = (int32_t)b;
			cell->index = (int32_t)b;
			cell->step = st + 1;
			cell->block = (int32_t)h->steps[st].block;
			cell->value = q[b];
			cell->has_value = true;
		}
	}
	vz_free(q);
	if (k > 0) /* the current step's row */
		vz_outline(f, vz_r(r.x - 3, r.y + (float)(k - 1) * rh - 1, r.w + 6, fmaxf(rh, 2) + 2), 2, vz_th.highlight);
	/* the colour scale */
	float sy = r.y + r.h + lh * 0.5f;
	for (int i = 0; i < 32; i++)
		vz_fill(f, vz_r(r.x + r.w * (float)i / 32, sy, r.w / 32 + 0.5f, lh * 0.6f), vz_viridis(i / 31.0));
	vz_text_draw(f, r.x, sy + lh * 0.7f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "1");
	vz_textf(f, r.x + r.w, sy + lh * 0.7f, VZ_FONT_SMALL, VZ_ALIGN_RIGHT, vz_th.text_dim, "%d",
	         h->max_queue > 1 ? h->max_queue : 1);
}

static void hist_draw(void *p, vz_frame *f)
{
	hist_scene *s = p;
	const hrun *h = &s->runs[s->variant];
	s->t = f->t;
	int k = (int)floor(f->t + 1e-9);
	if (k > h->nsteps) k = h->nsteps;
	draw_input(f, s, h, k);
	draw_private(f, s, h, k);
	draw_bars(f, s, h, k);
	draw_flow(f, s, h, k);
	draw_heat(f, s, h, k);
	s->img_step = k;
}

/* ---------------------------------------------------------------- text */

static void hist_title(void *p, char *buf, size_t cap)
{
	hist_scene *s = p;
	const hrun *h = &s->runs[s->variant];
	if (vz_zh())
		snprintf(buf, cap, "直方图：%s 内核，%lld 个%s分入 %lld 个桶%s，%d 个线程块，每块 %d 个线程",
		         algos[s->variant], (long long)s->n, s->letters ? "字母" : "元素", (long long)s->bins,
		         s->text_bins ? "（每桶四个字母）" : "", h->blocks, h->threads);
	else
		snprintf(buf, cap, "histogram: the %s kernel, %lld %s into %lld bins%s, %d block%s of %d threads",
		         algos[s->variant], (long long)s->n, s->letters ? "letters" : "elements", (long long)s->bins,
		         s->text_bins ? " of four letters" : "", h->blocks, h->blocks == 1 ? "" : "s", h->threads);
}

static void hist_step_label(void *p, int step, char *buf, size_t cap)
{
	hist_scene *s = p;
	const hrun *h = &s->runs[s->variant];
	if (step == 0 || step > h->nsteps) {
		snprintf(buf, cap, "%s", vz_tr("the input; Tab switches between the three kernels", "输入；Tab 在三个内核之间切换"));
		return;
	}
	const hstep *st = &h->steps[step - 1];
	static const char *const what[2][4] = {
		{"one global atomicAdd per element", "count into the private copy (shared atomics)",
		 "merge the private bins into the global histogram", "zero the private copy"},
		{"每个元素一次全局 atomicAdd", "计入私有副本（共享内存原子操作）", "把私有桶合并进全局直方图",
		 "把私有副本清零"}};
	VZ_SNPRINTF_TR(buf, cap, "block %u, phase %u: %s: %lld atomics, longest queue %d",
	               "线程块 %u，阶段 %u：%s：%lld 次原子操作，最长排队 %d", st->block, st->step, what[vz_zh()][st->kind],
	               (long long)st->natomics, st->max_queue);
}

static void hist_counters(void *p, vz_panel *pn)
{
	hist_scene *s = p;
	static const char *const names[] = {"atomics", "shared_atomics", "conflicts", "shared_conflicts",
	                                    "atomic_queue", "shared_atomic_queue", "modelled_cycles",
	                                    "global_loads", "barriers", "time_ms", "gbps", NULL};
	for (int i = 0; i < NALGOS; i++) vzs_panel_add(pn, algos[i], &s->runs[i].run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	if (s->demo)
		vz_panel_note(pn, "%s", vz_tr("The picture shows emulated runs on a demonstration input: the measured "
		                              "run has no trace.", "图中是在演示输入上的模拟运行：实测的运行没有 trace。"));
}

static void hist_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	hist_scene *s = p;
	const hrun *h = &s->runs[s->variant];
	char lbl[24];
	if (strcmp(c->kind, "element") == 0) {
		int64_t i = c->rows > 0 ? (int64_t)c->row * c->cols + c->col : c->index;
		if (i < 0 || i >= s->n) return;
		if (s->letters)
			VZ_SNPRINTF_TR(buf, cap, "data[%lld] = '%c': bin %s", "data[%lld] = '%c'：桶 %s", (long long)i,
			               s->letters[i], bin_label(s, (int64_t)s->values[i], lbl, sizeof lbl));
		else
			VZ_SNPRINTF_TR(buf, cap, "data[%lld] = %g: bin %s", "data[%lld] = %g：桶 %s", (long long)i, s->values[i],
			               bin_label(s, (int64_t)s->values[i], lbl, sizeof lbl));
		if (h->elem_step[i] >= 0) {
			const hstep *st = &h->steps[h->elem_step[i]];
			VZ_APPEND_TR(buf, cap, "\ncounted in step %lld (block %u)", "\n在第 %lld 步计数（线程块 %u）",
			             (long long)h->elem_step[i] + 1, st->block);
		}
	} else if (strcmp(c->kind, "bin") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "histo[%d] (bin %s) = %g so far\nfinal: %g", "histo[%d]（桶 %s）目前 = %g\n最终：%g",
		               c->index, bin_label(s, c->index, lbl, sizeof lbl), c->value,
		               h->global_after[(size_t)(h->nsteps - 1) * (size_t)s->bins + (size_t)c->index]);
	} else if (strcmp(c->kind, "private bin") == 0) {
		if (c->rows > 0) { /* one of the image */
			int k = (int)floor(s->t + 1e-9);
			if (k > h->nsteps) k = h->nsteps;
			c->block = c->row;
			c->index = c->col;
			c->value = private_at(h, s->bins, k)[(size_t)c->row * (size_t)s->bins + (size_t)c->col];
			c->has_value = true;
			c->rows = c->cols = -1;
		}
		VZ_SNPRINTF_TR(buf, cap, "block %d's histo_s[%d] (bin %s) = %g", "线程块 %d 的 histo_s[%d]（桶 %s）= %g", c->block,
		               c->index, bin_label(s, c->index, lbl, sizeof lbl), c->value);
	} else if (strcmp(c->kind, "heat") == 0) {
		if (c->row < 0 || c->row >= h->nsteps) return;
		const hstep *st = &h->steps[c->row];
		int q = 0, count = 0;
		for (int64_t i = st->first_atomic; i < st->first_atomic + st->natomics; i++)
			if ((int32_t)h->atomics[i].bin == c->col) {
				count++;
				if ((int)h->atomics[i].queue + 1 > q) q = (int)h->atomics[i].queue + 1;
			}
		VZ_SNPRINTF_TR(buf, cap, "step %d (block %u, phase %u), bin %s:\n%d atomics, the longest queue %d",
		               "第 %d 步（线程块 %u，阶段 %u），桶 %s：\n%d 次原子操作，最长排队 %d", c->row + 1, st->block, st->step,
		               bin_label(s, c->col, lbl, sizeof lbl), count, q);
	}
}

static const vz_option hist_options[] = {
	{"input", VZ_OPT_CHOICE, 0, 0, "pmpp text random runs", "pmpp", "pmpp: the book's phrase in bins of four letters; runs: runs of equal bins"},
	{"text", VZ_OPT_STRING, 0, 0, NULL, "", "the text counted by letters (input=text)"},
	{"n", VZ_OPT_INT, 1, 262144, NULL, "256 (runs: 1024)", "elements of a random input"},
	{"bins", VZ_OPT_INT, 1, 4096, NULL, "16", "bins of a random input"},
	{"block", VZ_OPT_INT, 1, 1024, NULL, "16 (short inputs)", "threads per block"},
	{"coarsen", VZ_OPT_INT, 1, 1024, NULL, "8", "elements per thread of the aggregated kernel"},
	{"algo", VZ_OPT_CHOICE, 0, 0, "global-atomic privatized aggregated", "privatized", "the kernel shown first"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_histogram = {
	.name = "histogram",
	.summary = "elements flowing into bins, private copies and their merge, the atomic conflicts per bin and step",
	.patterns = "histogram",
	.options = hist_options,
	.create = hist_create,
	.destroy = hist_destroy,
	.steps = hist_steps,
	.variants = hist_variants,
	.variant_name = hist_variant_name,
	.set_variant = hist_set_variant,
	.initial_variant = hist_initial_variant,
	.layout = hist_layout,
	.draw = hist_draw,
	.title = hist_title,
	.step_label = hist_step_label,
	.counters = hist_counters,
	.describe = hist_describe,
};
