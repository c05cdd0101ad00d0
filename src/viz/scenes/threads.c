/*
 * threads.c — the generic scene of any traced launch, a student's kernel (kernels.launch) first:
 * GPU-Puzzles' picture of each thread's reads and writes, on the emulator's trace. One block at a
 * time (Tab cycles the blocks): its threads as cells in rows of 32 (a row is a warp, coloured by
 * warp; a lane that does nothing in the phase is grey), the arrays it touches as cells with their
 * values — those it only reads (inputs, constants) above the threads, its shared arrays right below
 * them, then the global arrays it writes, so that an arrow seldom crosses another array — and for the
 * current barrier phase an arrow per access: from the element into the thread that read it, from
 * the thread to the element it wrote (atomics in their own colour). Stepping goes phase by phase;
 * step 0 is the arrays before the block runs. Hovering a thread gives its whole history, an
 * element who read and wrote it. The panel adds GPU-Puzzles' score: the most global and shared
 * reads and writes of one thread, counted from the trace.
 *
 * Values come from the trace alone: an element's value is known from its first load (what the
 * kernel was given) or from the stores and atomics the events record; shared arrays start at zero
 * in every block, as the emulator gives them. The shipped patterns keep their own scenes; this one
 * draws them too when asked by name (viz.show(info, {scene='threads'})).
 * Read next: docs/viz.md ("The scenes"), docs/student-kernels.md, divergence.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAX_ARRAYS 32
#define MAX_ARROWS 256   /* per frame; more are thinned out thread by thread */
#define MAX_SHOWN 4096   /* elements of one array drawn */
#define FULL_BELOW 257   /* arrays this short are drawn whole, else the part the block touches */

enum { T_READ = 1, T_WRITE = 2, T_ATOMIC = 4 };

/* One memory access of a thread of the block. */
typedef struct tacc {
	int64_t event;
	double value;
	uint32_t index;
	int32_t thread;
	int32_t phase;
	uint16_t line;
	uint8_t kind, array;
} tacc;

/* An array as drawn: elements lo .. lo + n - 1, the values after each phase, what the phase did. */
typedef struct tarr {
	int id;
	lm_trace_array a;
	int64_t lo, n;
	int cols, rows;
	bool above;       /* drawn above the threads: the block only reads it (an input) */
	double *vals;     /* (nphases + 1) x n; NaN: unknown */
	uint8_t *touch;   /* (nphases + 1) x n: T_READ | T_WRITE | T_ATOMIC in that phase */
	vz_rect box;
	vzs_grid grid;
} tarr;

typedef struct thr_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	lm_viz_run run;
	lm_trace *t;
	int launch;
	lm_trace_launch la;
	uint32_t nblocks;
	int variant;
	char vname[24];
	/* the block shown */
	int nthreads, nphases;
	lm_trace_step *phases;
	uint8_t *active;   /* nphases x nthreads: the thread did something in the phase */
	tacc *acc;
	int nacc, cap_acc;
	int *phase_acc;    /* nphases + 1: accesses of phase p are acc[phase_acc[p] .. phase_acc[p+1]) */
	tarr arr[MAX_ARRAYS];
	int narr;
	bool truncated;    /* some events of the block were not kept */
	/* GPU-Puzzles' score over the launch: the most of one thread */
	int64_t max_gl, max_gs, max_sl, max_ss;
	/* layout */
	float label_w, cell, top, thr_y;
	int cols;          /* threads a row (a multiple of 32: whole warps) */
	vzs_grid thr_grid;
	double t_drawn;
	char fname[32];
} thr_scene;

/* ---------------------------------------------------------------- reading the block */

static void free_block(thr_scene *s)
{
	vz_free(s->phases);
	vz_free(s->active);
	vz_free(s->acc);
	vz_free(s->phase_acc);
	for (int i = 0; i < s->narr; i++) {
		vz_free(s->arr[i].vals);
		vz_free(s->arr[i].touch);
		vzs_grid_free(&s->arr[i].grid);
	}
	s->phases = NULL;
	s->active = NULL;
	s->acc = NULL;
	s->phase_acc = NULL;
	s->narr = s->nacc = s->cap_acc = s->nphases = 0;
}

static lm_status nomem(const thr_scene *s)
{
	return lm_set_error(LM_ERR_NOMEM, "%s: out of memory for the threads scene", s->fname);
}

static bool is_access(int kind)
{
	return kind == LM_TRACE_LOAD || kind == LM_TRACE_STORE || kind == LM_TRACE_ATOMIC;
}

/* The block's phases and, phase by phase, its accesses and active threads. */
static lm_status read_phases(thr_scene *s, uint32_t block)
{
	int64_t ns = lm_trace_step_count(s->t);
	lm_trace_step st;
	for (int64_t i = s->la.first_step; i < s->la.first_step + s->la.nsteps && i < ns; i++)
		if (lm_trace_step_get(s->t, i, &st) == LM_OK && st.block == block) s->nphases++;
	if (!(s->phases = vz_calloc((size_t)s->nphases + 1, sizeof *s->phases)) ||
	    !(s->active = vz_calloc((size_t)(s->nphases + 1) * (size_t)s->nthreads, 1)) ||
	    !(s->phase_acc = vz_calloc((size_t)s->nphases + 2, sizeof *s->phase_acc)))
		return nomem(s);
	int p = 0;
	for (int64_t i = s->la.first_step; i < s->la.first_step + s->la.nsteps && i < ns; i++) {
		if (lm_trace_step_get(s->t, i, &st) != LM_OK || st.block != block) continue;
		s->phases[p] = st;
		s->phase_acc[p] = s->nacc;
		if (st.count == 0 && (st.adds > 0 || lm_trace_truncated(s->t))) s->truncated = true;
		for (int64_t e = st.first; e < st.first + st.count; e++) {
			const lm_trace_event *ev = lm_trace_event_get(s->t, e);
			if (!ev || ev->kind == LM_TRACE_BARRIER) continue;
			int th = ev->warp * 32 + ev->lane;
			if (th >= s->nthreads) continue;
			s->active[(size_t)p * (size_t)s->nthreads + (size_t)th] = 1;
			if (!is_access(ev->kind)) continue;
			if (s->nacc == s->cap_acc) {
				int cap = s->cap_acc ? 2 * s->cap_acc : 1024;
				tacc *a = vz_realloc(s->acc, (size_t)cap * sizeof *a);
				if (!a) return nomem(s);
				s->acc = a;
				s->cap_acc = cap;
			}
			s->acc[s->nacc++] = (tacc){.event = e, .value = ev->value, .index = ev->index,
			                           .thread = th, .phase = p, .line = ev->line,
			                           .kind = ev->kind, .array = ev->array};
		}
		p++;
	}
	s->phase_acc[p] = s->nacc;
	return LM_OK;
}

static tarr *array_of(thr_scene *s, int id)
{
	for (int i = 0; i < s->narr; i++)
		if (s->arr[i].id == id) return &s->arr[i];
	return NULL;
}

/* The arrays drawn: the launch's global and constant arrays this block touches (all of them when
 * it touches none), its shared arrays; each whole when short, else the part the block touches. */
static lm_status choose_arrays(thr_scene *s)
{
	int na = lm_trace_array_count(s->t);
	int64_t lo[256], hi[256];
	bool written[256] = {false};
	for (int id = 0; id < na && id < 256; id++) lo[id] = INT64_MAX, hi[id] = -1;
	for (int i = 0; i < s->nacc; i++) {
		int id = s->acc[i].array;
		if (id >= na) continue;
		if (s->acc[i].kind != LM_TRACE_LOAD) written[id] = true;
		if (s->acc[i].index < lo[id]) lo[id] = s->acc[i].index;
		if ((int64_t)s->acc[i].index > hi[id]) hi[id] = s->acc[i].index;
	}
	for (int pass = 0; pass < 2; pass++) /* global and constant arrays first, then shared */
		for (int id = 0; id < na && id < 256 && s->narr < MAX_ARRAYS; id++) {
			lm_trace_array a;
			if (lm_trace_array_get(s->t, id, &a) != LM_OK) continue;
			bool shared = a.space == LM_SPACE_SHARED;
			if (shared != (pass == 1)) continue;
			if (shared && a.launch != s->launch) continue;
			if (!shared && hi[id] < 0 && s->nacc > 0) continue; /* not this block's */
			tarr *t = &s->arr[s->narr++];
			memset(t, 0, sizeof *t);
			t->id = id;
			t->a = a;
			if (a.length <= FULL_BELOW || hi[id] < 0) {
				t->lo = 0;
				t->n = a.length < MAX_SHOWN ? a.length : MAX_SHOWN;
			} else {
				t->lo = lo[id];
				t->n = hi[id] - lo[id] + 1 < MAX_SHOWN ? hi[id] - lo[id] + 1 : MAX_SHOWN;
			}
			if (t->n < 1) t->n = 1;
			t->above = !shared && hi[id] >= 0 && !written[id];
			size_t cells = (size_t)(s->nphases + 1) * (size_t)t->n;
			if (!(t->vals = vz_malloc(cells * sizeof *t->vals)) || !(t->touch = vz_calloc(cells, 1)))
				return nomem(s);
		}
	return LM_OK;
}

/* Values: each element's first value (its first load, unless a store came before), then every
 * store and atomic of the launches up to this one, in trace order; this block's phases kept. */
static void replay(thr_scene *s, uint32_t block)
{
	int64_t n = lm_trace_count(s->t);
	for (int i = 0; i < s->narr; i++) {
		tarr *t = &s->arr[i];
		double v0 = t->a.space == LM_SPACE_SHARED ? 0 : NAN; /* shared memory starts zeroed */
		for (int64_t j = 0; j < t->n; j++) t->vals[j] = v0;
	}
	/* pass 1: what the kernel was given (global and constant arrays) */
	uint8_t *stored = NULL;
	for (int i = 0; i < s->narr; i++)
		if (s->arr[i].a.space != LM_SPACE_SHARED) {
			stored = vz_calloc((size_t)s->narr * MAX_SHOWN, 1);
			break;
		}
	for (int64_t e = 0; stored && e < n; e++) {
		const lm_trace_event *ev = lm_trace_event_get(s->t, e);
		if (!is_access(ev->kind) || ev->space == LM_SPACE_SHARED) continue;
		tarr *t = array_of(s, ev->array);
		if (!t || (int64_t)ev->index < t->lo || (int64_t)ev->index >= t->lo + t->n) continue;
		int64_t j = (int64_t)ev->index - t->lo;
		uint8_t *seen = &stored[(size_t)(t - s->arr) * MAX_SHOWN + (size_t)j];
		if (!*seen && ev->kind == LM_TRACE_LOAD) t->vals[j] = ev->value;
		*seen = 1;
	}
	vz_free(stored);
	/* pass 2: the launches before this one and this launch's blocks before this one */
	for (int64_t e = 0; e < n; e++) {
		const lm_trace_event *ev = lm_trace_event_get(s->t, e);
		if (ev->launch > s->launch || (ev->launch == s->launch && ev->block >= block)) break;
		if (ev->kind != LM_TRACE_STORE && ev->kind != LM_TRACE_ATOMIC) continue;
		if (ev->space == LM_SPACE_SHARED) continue;
		tarr *t = array_of(s, ev->array);
		if (!t || (int64_t)ev->index < t->lo || (int64_t)ev->index >= t->lo + t->n) continue;
		double *v = &t->vals[(int64_t)ev->index - t->lo];
		*v = ev->kind == LM_TRACE_STORE ? ev->value : *v + ev->value;
	}
	/* this block, phase by phase */
	for (int p = 0; p < s->nphases; p++) {
		for (int i = 0; i < s->narr; i++) {
			tarr *t = &s->arr[i];
			memcpy(t->vals + (size_t)(p + 1) * (size_t)t->n, t->vals + (size_t)p * (size_t)t->n,
			       (size_t)t->n * sizeof *t->vals);
		}
		for (int k = s->phase_acc[p]; k < s->phase_acc[p + 1]; k++) {
			const tacc *a = &s->acc[k];
			tarr *t = array_of(s, a->array);
			if (!t || (int64_t)a->index < t->lo || (int64_t)a->index >= t->lo + t->n) continue;
			int64_t j = (int64_t)a->index - t->lo;
			double *v = &t->vals[(size_t)(p + 1) * (size_t)t->n + (size_t)j];
			uint8_t *touch = &t->touch[(size_t)(p + 1) * (size_t)t->n + (size_t)j];
			if (a->kind == LM_TRACE_LOAD) {
				*touch |= T_READ;
				if (isnan(*v)) *v = a->value;
			} else if (a->kind == LM_TRACE_STORE) {
				*touch |= T_WRITE;
				*v = a->value;
			} else {
				*touch |= T_ATOMIC;
				*v += a->value;
			}
		}
	}
}

/* GPU-Puzzles' score: the most global and shared loads and stores of one thread of the launch. */
static lm_status score(thr_scene *s)
{
	size_t threads = (size_t)s->nblocks * (size_t)s->nthreads;
	int32_t (*c)[4] = vz_calloc(threads ? threads : 1, sizeof *c);
	if (!c) return nomem(s);
	int64_t n = lm_trace_count(s->t);
	for (int64_t e = 0; e < n; e++) {
		const lm_trace_event *ev = lm_trace_event_get(s->t, e);
		if (ev->launch != s->launch || !is_access(ev->kind)) continue;
		size_t th = (size_t)ev->block * (size_t)s->nthreads + (size_t)ev->warp * 32 + ev->lane;
		if (th >= threads) continue;
		bool global = ev->space == LM_SPACE_GLOBAL, shared = ev->space == LM_SPACE_SHARED;
		bool load = ev->kind == LM_TRACE_LOAD, store = !load; /* an atomic reads and writes */
		if (global && (load || ev->kind == LM_TRACE_ATOMIC)) c[th][0]++;
		if (global && store) c[th][1]++;
		if (shared && (load || ev->kind == LM_TRACE_ATOMIC)) c[th][2]++;
		if (shared && store) c[th][3]++;
	}
	for (size_t i = 0; i < threads; i++) {
		if (c[i][0] > s->max_gl) s->max_gl = c[i][0];
		if (c[i][1] > s->max_gs) s->max_gs = c[i][1];
		if (c[i][2] > s->max_sl) s->max_sl = c[i][2];
		if (c[i][3] > s->max_ss) s->max_ss = c[i][3];
	}
	vz_free(c);
	return LM_OK;
}

static lm_status build_block(thr_scene *s, uint32_t block)
{
	free_block(s);
	s->truncated = false;
	lm_status st = read_phases(s, block);
	if (st == LM_OK) st = choose_arrays(s);
	if (st == LM_OK) replay(s, block);
	return st;
}

/* ---------------------------------------------------------------- create */

static void thr_destroy(void *p)
{
	thr_scene *s = p;
	if (!s) return;
	free_block(s);
	vzs_grid_free(&s->thr_grid);
	vz_run_clear(&s->run);
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	vz_free(s);
}

static void *thr_create(const vz_build *b)
{
	thr_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	lm_status st = LM_OK;
	if (!b->nruns)
		st = lm_set_error(LM_ERR_ARG, "%s: the threads scene draws a traced launch: "
		                  "viz.show(info, {scene='threads'}) with the info of kernels.launch or "
		                  "of an emulated kernels call", b->fname);
	else if (!traced)
		st = lm_set_error(LM_ERR_ARG, "%s: the threads scene needs a trace: this %s run was "
		                  "measured (%s); run it with backend='emu'", b->fname, b->runs[0].pattern,
		                  b->runs[0].source);
	if (st == LM_OK) {
		vz_run_copy(&s->run, traced);
		s->t = s->run.trace;
		s->launch = (int)vz_opt_int(b->opts, "launch", 0);
		if (s->launch >= lm_trace_launch_count(s->t))
			st = lm_set_error(LM_ERR_ARG, "%s: option launch %d: the trace has %d launches (0-based)",
			                  b->fname, s->launch, lm_trace_launch_count(s->t));
	}
	if (st == LM_OK && lm_trace_launch_get(s->t, s->launch, &s->la) != LM_OK) st = lm_last_status();
	if (st == LM_OK) {
		s->nthreads = (int)(s->la.block[0] * s->la.block[1] * s->la.block[2]);
		uint64_t nb = (uint64_t)s->la.grid[0] * s->la.grid[1] * s->la.grid[2];
		s->nblocks = nb < 65536 ? (uint32_t)nb : 65536;
		int64_t first = vz_opt_int(b->opts, "block", 0);
		s->variant = first < (int64_t)s->nblocks ? (int)first : (int)s->nblocks - 1;
		st = score(s);
	}
	if (st == LM_OK) st = build_block(s, (uint32_t)s->variant);
	if (st != LM_OK) {
		thr_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, variants */

static int thr_steps(void *p) { return ((thr_scene *)p)->nphases + 1; }
static int thr_variants(void *p) { return (int)((thr_scene *)p)->nblocks; }
static int thr_initial_variant(void *p) { return ((thr_scene *)p)->variant; }

static void block_xyz(const thr_scene *s, uint32_t b, unsigned *x, unsigned *y, unsigned *z)
{
	*x = b % s->la.grid[0];
	*y = b / s->la.grid[0] % s->la.grid[1];
	*z = b / (s->la.grid[0] * s->la.grid[1]);
}

static const char *thr_variant_name(void *p, int v)
{
	thr_scene *s = p;
	snprintf(s->vname, sizeof s->vname, "block %d", v);
	return s->vname;
}

static void thr_set_variant(void *p, int v)
{
	thr_scene *s = p;
	if (v == s->variant && s->phases) return;
	s->variant = v;
	if (build_block(s, (uint32_t)v) != LM_OK) { /* out of memory: an empty block, said so */
		free_block(s);
		s->truncated = true;
	}
}

/* ---------------------------------------------------------------- layout */

/* A memory space as the labels say it. */
static const char *space_label(int space)
{
	if (!vz_zh()) return lm_trace_space_name(space);
	return space == LM_SPACE_SHARED ? "共享" : space == LM_SPACE_CONSTANT ? "常量" : "全局";
}

/* The line above an array's cells: its name, space, dtype, length (and the part drawn); returns
 * its columns. */
static int array_label(const tarr *t, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s  %s %s x%lld", t->a.name, space_label(t->a.space), lm_dtype_name(t->a.dtype),
	                 (long long)t->a.length);
	if (t->n < t->a.length && n >= 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, " [%lld..%lld]", (long long)t->lo, (long long)(t->lo + t->n - 1));
	return (int)vz_utf8_cols(buf);
}

/* Which band an array is drawn in: 0 above the threads (it is only read), 1 its shared arrays
 * right below them, 2 the global arrays it writes. */
static int band_of(const tarr *t) { return t->above ? 0 : t->a.space == LM_SPACE_SHARED ? 1 : 2; }

/* Places the arrays of band b side by side from y, a new line when the next does not fit the
 * width; returns the y below them. Each has its label line on the side away from the threads, so
 * that no arrow crosses it. */
static float place_band(thr_scene *s, int b, int cols, float cell, float lh, float cw, float avail, float y)
{
	float x = s->label_w, line_h = 0;
	char label[160];
	for (int i = 0; i < s->narr; i++) {
		tarr *t = &s->arr[i];
		if (band_of(t) != b) continue;
		bool grid2d = t->a.rows > 1 && t->a.cols <= cols && t->lo == 0 && t->n == t->a.length;
		t->cols = grid2d ? (int)t->a.cols : (int)(t->n < cols ? t->n : cols);
		t->rows = (int)((t->n + t->cols - 1) / t->cols);
		float w = fmaxf((float)t->cols * cell, (float)array_label(t, label, sizeof label) * cw);
		float h = lh * 1.15f + (float)t->rows * cell;
		if (x > s->label_w && x + w > s->label_w + avail) { /* a new line */
			y += line_h + lh * 0.8f;
			x = s->label_w;
			line_h = 0;
		}
		t->box = vz_r(x, b == 0 ? y + lh * 1.15f : y, (float)t->cols * cell, (float)t->rows * cell);
		x += w + 2 * cw;
		line_h = fmaxf(line_h, h);
	}
	return y + line_h;
}

/* Places the arrays the block only reads, the threads (cols a row), its shared arrays and the
 * global arrays it writes, top to bottom, at cell size cell; returns the height. */
static float place(thr_scene *s, int cols, float cell, float lh, float cw, float avail)
{
	s->cols = cols;
	s->cell = cell;
	float y = place_band(s, 0, cols, cell, lh, cw, avail, s->top + lh * 0.3f);
	s->thr_y = y + lh * 2.0f;
	y = s->thr_y + (float)((s->nthreads + cols - 1) / cols) * cell + lh * 1.5f;
	y = place_band(s, 1, cols, cell, lh, cw, avail, y);
	return place_band(s, 2, cols, cell, lh, cw, avail, y + lh * 0.8f) + lh;
}

/* A row of 32 threads (a warp) and arrays in rows of 32 when that fits the area; else rows of
 * 64, 128, ... (several warps a row), so that a big block is not drawn smaller than it must; and
 * when the rows are not what makes it tall (matrices, many arrays), smaller cells. */
static void thr_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	thr_scene *s = p;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	s->label_w = 20 * cw;
	s->top = lh * 1.6f;
	float avail = fmaxf(c->w - s->label_w, 32);
	int64_t widest = s->nthreads;
	for (int i = 0; i < s->narr; i++)
		if (s->arr[i].n > widest) widest = s->arr[i].n;
	float full = 34 * c->scale;
	float h = place(s, 32, fminf(avail / 32, full), lh, cw, avail);
	for (int cols = 64; h > c->h && cols <= 1024 && cols / 2 < widest; cols *= 2) {
		float h2 = place(s, cols, fminf(avail / (float)cols, full), lh, cw, avail);
		if (h2 > h * 0.9f) { /* wider rows do not make it shorter (matrices keep their rows) */
			h = place(s, cols / 2, fminf(avail / (float)(cols / 2), full), lh, cw, avail);
			break;
		}
		h = h2;
	}
	while (h > c->h && s->cell > 12 * c->scale) /* smaller cells, while their numbers can show */
		h = place(s, s->cols, s->cell * 0.9f, lh, cw, avail);
	*ww = c->w;
	*wh = fmaxf(c->h, h);
}

/* ---------------------------------------------------------------- drawing */

static vz_rect thread_rect(const thr_scene *s, int th)
{
	return vz_r(s->label_w + (float)(th % s->cols) * s->cell, s->thr_y + (float)(th / s->cols) * s->cell,
	            s->cell * 0.92f, s->cell * 0.92f);
}

static vz_rect element_rect(const tarr *t, float cell, int64_t j)
{
	return vz_r(t->box.x + (float)(j % t->cols) * cell, t->box.y + (float)(j / t->cols) * cell,
	            cell * 0.94f, cell * 0.94f);
}

static vz_color warp_color(int warp) { return vz_category(warp); }

/* Cells too small for their numbers are drawn as one image per block of them (llvmpipe spends
 * ~0.4 us a shape; a 1,024-thread block with three arrays has 4,096 cells). */
static bool dense(const vz_frame *f, const thr_scene *s) { return s->cell * vz_zoom(f) < 10; }

static vz_color thread_look(const thr_scene *s, int th, int k, const char **state)
{
	if (k <= 0) {
		*state = "pending";
		return vz_th.pending;
	}
	if (!s->active[(size_t)(k - 1) * (size_t)s->nthreads + (size_t)th]) {
		*state = "idle";
		return vz_th.idle;
	}
	*state = "active";
	return warp_color(th / 32);
}

static vz_color element_look(const tarr *t, int64_t j, int k, const char **state)
{
	uint8_t touch = k > 0 ? t->touch[(size_t)k * (size_t)t->n + (size_t)j] : 0;
	if (touch & T_ATOMIC) {
		*state = "atomic";
		return vz_mix(vz_okabe_ito[VZ_OI_VERMILLION], VZ_RGB(255, 255, 255), 0.35);
	}
	if (touch & T_WRITE) {
		*state = touch & T_READ ? "read and written" : "written";
		return vz_th.active;
	}
	if (touch & T_READ) {
		*state = "read";
		return vz_mix(vz_th.active, VZ_RGB(255, 255, 255), 0.65);
	}
	*state = "untouched";
	return VZ_RGB(250, 250, 250);
}

static void draw_threads(vz_frame *f, thr_scene *s, int k)
{
	int rows = (s->nthreads + s->cols - 1) / s->cols, per = s->cols / 32, last = (s->nthreads - 1) / 32;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	unsigned bx, by, bz;
	block_xyz(s, (uint32_t)s->variant, &bx, &by, &bz);
	/* in the label column: arrows from the arrays above pass right of it */
	VZ_TEXTF_TR(f, 0, s->thr_y - lh * 1.25f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "block (%u,%u,%u)",
	            "线程块 (%u,%u,%u)", bx, by, bz);
	int every = s->cell >= lh * 0.8f ? 1 : (int)ceilf(lh / s->cell);
	for (int r = 0; r < rows; r += every) {
		float y = s->thr_y + (float)r * s->cell + (s->cell - lh) / 2;
		if (per == 1) VZ_TEXTF_TR(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "warp %d", "线程束 %d", r);
		else if (last > r * per)
			VZ_TEXTF_TR(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "warps %d-%d", "线程束 %d-%d", r * per,
			            last < r * per + per - 1 ? last : r * per + per - 1);
		else VZ_TEXTF_TR(f, 0, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, "warp %d", "线程束 %d", r * per);
	}
	const char *state;
	if (dense(f, s)) {
		vz_color *px = vz_malloc((size_t)rows * (size_t)s->cols * sizeof *px);
		if (!px) return;
		for (int th = 0; th < rows * s->cols; th++)
			px[th] = th < s->nthreads ? thread_look(s, th, k, &state) : vz_th.bg;
		vz_cell *g = vzs_grid_draw(f, &s->thr_grid, vz_r(s->label_w, s->thr_y, (float)s->cols * s->cell,
		                           (float)rows * s->cell), rows, s->cols, px, "thread", 0);
		vz_free(px);
		g->block = s->variant;
		g->step = k;
		return;
	}
	for (int th = 0; th < s->nthreads; th++) {
		vz_rect r = thread_rect(s, th);
		if (!vz_visible(f, r)) continue;
		vz_color c = thread_look(s, th, k, &state);
		if (strcmp(state, "idle") == 0) vz_hatch(f, r, vz_th.idle, vz_th.hatch);
		else vzs_value_cell(f, r, c, th, true);
		vz_cell *cell = vz_cell_add(f, r, "thread");
		cell->state = state;
		cell->color = c;
		cell->thread = th;
		cell->warp = th / 32;
		cell->lane = th % 32;
		cell->block = s->variant;
		cell->step = k;
	}
}

static void draw_array(vz_frame *f, thr_scene *s, tarr *t, int k)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	float y = t->above ? t->box.y - lh * 1.15f : t->box.y + t->box.h + lh * 0.1f;
	char label[160];
	array_label(t, label, sizeof label);
	float w = vz_text_draw(f, t->box.x, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t->a.name);
	vz_text_draw(f, t->box.x + w, y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim, label + strlen(t->a.name));
	const double *vals = t->vals + (size_t)(k > 0 ? k : 0) * (size_t)t->n;
	const char *state;
	if (dense(f, s)) {
		vz_color *px = vz_malloc((size_t)t->rows * (size_t)t->cols * sizeof *px);
		if (!px) return;
		for (int64_t j = 0; j < (int64_t)t->rows * t->cols; j++)
			px[j] = j < t->n ? element_look(t, j, k, &state) : vz_th.bg;
		vz_cell *g = vzs_grid_draw(f, &t->grid, t->box, t->rows, t->cols, px, "element", (int32_t)t->lo);
		vz_free(px);
		g->group = t->a.name;
		g->array = t->id;
		g->step = k;
		return;
	}
	for (int64_t j = 0; j < t->n; j++) {
		vz_rect r = element_rect(t, s->cell, j);
		if (!vz_visible(f, r)) continue;
		vz_color c = element_look(t, j, k, &state);
		vzs_value_cell(f, r, c, vals[j], true);
		vz_cell *cell = vz_cell_add(f, r, "element");
		cell->group = t->a.name;
		cell->state = state;
		cell->color = c;
		cell->index = (int32_t)(t->lo + j);
		cell->array = t->id;
		cell->step = k;
		cell->value = vals[j];
		cell->has_value = !isnan(vals[j]);
	}
}

/* The arrows of phase k - 1: element -> thread for a load, thread -> element for a store or an
 * atomic, in the thread's warp colour (atomics vermillion); thinned to MAX_ARROWS. */
static void draw_arrows(vz_frame *f, thr_scene *s, int k)
{
	if (k <= 0 || k > s->nphases || s->cell * vz_zoom(f) < 6) return; /* zoom in to see them */
	int from = s->phase_acc[k - 1], to = s->phase_acc[k];
	int every = (to - from) / MAX_ARROWS + 1;
	float z = 1.0f / vz_zoom(f);
	for (int i = from; i < to; i++) {
		const tacc *a = &s->acc[i];
		if (a->thread % every) continue;
		const tarr *t = array_of(s, a->array);
		if (!t || (int64_t)a->index < t->lo || (int64_t)a->index >= t->lo + t->n) continue;
		vz_rect tr = thread_rect(s, a->thread), er = element_rect(t, s->cell, (int64_t)a->index - t->lo);
		float tx = tr.x + tr.w / 2, ty = t->above ? tr.y : tr.y + tr.h;
		float ex = er.x + er.w / 2, ey = t->above ? er.y + er.h : er.y;
		vz_color c = a->kind == LM_TRACE_ATOMIC ? vz_okabe_ito[VZ_OI_VERMILLION] : warp_color(a->thread / 32);
		float head = fminf(s->cell * 0.35f, 9 * z);
		if (a->kind == LM_TRACE_LOAD)
			vz_arrow(f, ex, ey, tx, ty, 1.2f * z, head, vz_fade(c, 0.55));
		else
			vz_arrow(f, tx, ty, ex, ey, 2.0f * z, head, c);
	}
}

static void thr_draw(void *p, vz_frame *f)
{
	thr_scene *s = p;
	s->t_drawn = f->t;
	int k = (int)floor(f->t + 1e-9);
	if (k > s->nphases) k = s->nphases;
	float x = 0;
	x = vzs_legend(f, x, 0, warp_color(0), false, vz_tr("a warp's active lanes", "线程束的活跃通道"));
	x = vzs_legend(f, x, 0, vz_th.idle, true, vz_tr("idle lane", "空闲通道"));
	x = vzs_legend(f, x, 0, vz_mix(vz_th.active, VZ_RGB(255, 255, 255), 0.65), false, vz_tr("read", "读"));
	x = vzs_legend(f, x, 0, vz_th.active, false, vz_tr("written", "写"));
	x = vzs_legend(f, x, 0, vz_mix(vz_okabe_ito[VZ_OI_VERMILLION], VZ_RGB(255, 255, 255), 0.35), false,
	               "atomicAdd");
	vz_text_draw(f, x, 0, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
	             vz_tr("?: not known yet (the trace shows a value once it is read or written)",
	                   "?：尚不知道（被读或写之后 trace 才有它的值）"));
	draw_arrows(f, s, k); /* under the cells: an arrow to a far array passes beneath the others */
	vz_layer(f);
	draw_threads(f, s, k);
	for (int i = 0; i < s->narr; i++) draw_array(f, s, &s->arr[i], k);
}

/* ---------------------------------------------------------------- text */

static void thr_title(void *p, char *buf, size_t cap)
{
	thr_scene *s = p;
	unsigned bx, by, bz;
	block_xyz(s, (uint32_t)s->variant, &bx, &by, &bz);
	if (vz_zh())
		snprintf(buf, cap, "线程：%s，线程块 (%u,%u,%u)，共 %u 个线程块，%d 个线程，%d 个屏障阶段（模拟）%s", s->la.kernel,
		         bx, by, bz, s->nblocks, s->nthreads, s->nphases, s->truncated ? "；trace 被截断：缺少部分事件" : "");
	else
		snprintf(buf, cap, "threads: %s, block (%u,%u,%u) of %u, %d thread%s, %d barrier phase%s (emulated)%s",
		         s->la.kernel, bx, by, bz, s->nblocks, s->nthreads, s->nthreads == 1 ? "" : "s", s->nphases,
		         s->nphases == 1 ? "" : "s", s->truncated ? "; the trace was truncated: some events are missing" : "");
}

static void thr_step_label(void *p, int step, char *buf, size_t cap)
{
	thr_scene *s = p;
	if (step <= 0) {
		snprintf(buf, cap, "%s", vz_tr("the arrays before the block runs; each step is one barrier phase: an arrow "
		                               "into a thread is a read, out of it a write",
		                               "线程块运行之前的数组；每一步是一个屏障阶段：指向线程的箭头是读，从线程出发的是写"));
		return;
	}
	if (step > s->nphases) step = s->nphases;
	int active = 0, loads = 0, stores = 0, atomics = 0;
	for (int th = 0; th < s->nthreads; th++) active += s->active[(size_t)(step - 1) * (size_t)s->nthreads + (size_t)th];
	for (int i = s->phase_acc[step - 1]; i < s->phase_acc[step]; i++) {
		loads += s->acc[i].kind == LM_TRACE_LOAD;
		stores += s->acc[i].kind == LM_TRACE_STORE;
		atomics += s->acc[i].kind == LM_TRACE_ATOMIC;
	}
	const lm_trace_step *ph = &s->phases[step - 1];
	int line = 0;
	for (int64_t e = ph->first; ph->barrier && e < ph->first + ph->count && !line; e++) {
		const lm_trace_event *ev = lm_trace_event_get(s->t, e);
		if (ev && ev->kind == LM_TRACE_BARRIER) line = ev->line;
	}
	VZ_SNPRINTF_TR(buf, cap, "phase %d: %d of %d threads active, %d loads, %d stores, %d atomics; ",
	               "阶段 %d：%d/%d 个线程活跃，%d 次读，%d 次写，%d 次原子操作；", step - 1, active, s->nthreads, loads,
	               stores, atomics);
	if (ph->barrier && line) VZ_APPEND_TR(buf, cap, "ends at the barrier on line %d", "在第 %d 行的屏障处结束", line);
	else if (ph->barrier) vz_append(buf, cap, "%s", vz_tr("ends at a barrier", "在屏障处结束"));
	else vz_append(buf, cap, "%s", vz_tr("ends: the threads exit", "结束：线程退出"));
}

static void thr_counters(void *p, vz_panel *pn)
{
	thr_scene *s = p;
	static const char *const names[] = {"modelled_cycles", "global_loads", "global_stores",
	                                    "shared_loads", "shared_stores", "atomics", "shared_atomics",
	                                    "barriers", "adds", "simd_efficiency", "bank_conflicts",
	                                    "global_transactions", NULL};
	char src[128], title[48];
	snprintf(title, sizeof title, "%.15s %.31s", s->run.pattern, s->run.algo);
	int col = vz_panel_column(pn, title, vz_run_source_label(&s->run, src, sizeof src));
	vz_panel_run(pn, col, &s->run, names);
	vz_panel_set(pn, col, vz_tr("most global reads/thread", "单线程最多全局读"), (double)s->max_gl);
	vz_panel_set(pn, col, vz_tr("most global writes/thread", "单线程最多全局写"), (double)s->max_gs);
	vz_panel_set(pn, col, vz_tr("most shared reads/thread", "单线程最多共享读"), (double)s->max_sl);
	vz_panel_set(pn, col, vz_tr("most shared writes/thread", "单线程最多共享写"), (double)s->max_ss);
	vz_panel_note(pn, "%s", vz_tr("most .../thread: GPU-Puzzles' score, the most accesses of one thread of the "
	                              "launch (an atomic reads and writes), counted from the trace.",
	                              "单线程最多……：GPU-Puzzles 的评分，即本次启动中一个线程的最多访问次数（原子操作"
	                              "既算读也算写），由 trace 统计。"));
}

static const char *kind_short(int kind)
{
	return kind == LM_TRACE_LOAD ? "ld" : kind == LM_TRACE_STORE ? "st" : "atomicAdd";
}

static const char *array_name(const thr_scene *s, int id)
{
	static lm_trace_array a;
	if (lm_trace_array_get(s->t, id, &a) != LM_OK) return "?";
	return a.name;
}

/* A thread's whole history: its accesses phase by phase. */
static void describe_thread(thr_scene *s, vz_cell *c, char *buf, size_t cap)
{
	int th = c->thread;
	unsigned bx, by, bz, b0 = s->la.block[0], b1 = s->la.block[1];
	block_xyz(s, (uint32_t)s->variant, &bx, &by, &bz);
	VZ_SNPRINTF_TR(buf, cap, "thread (%u,%u,%u) of block (%u,%u,%u): warp %d, lane %d",
	               "线程 (%u,%u,%u)，属于线程块 (%u,%u,%u)：线程束 %d，通道 %d", (unsigned)th % b0, (unsigned)th / b0 % b1,
	               (unsigned)th / (b0 * b1), bx, by, bz, th / 32, th % 32);
	int phase = -1;
	for (int i = 0; i < s->nacc; i++) {
		const tacc *a = &s->acc[i];
		if (a->thread != th) continue;
		char v[24];
		if (a->phase != phase) {
			phase = a->phase;
			VZ_APPEND_TR(buf, cap, "\nphase %d:", "\n阶段 %d：", phase);
		}
		vz_append(buf, cap, " %s %s[%u]=%s", kind_short(a->kind), array_name(s, a->array), a->index,
		          vzs_short(v, sizeof v, a->value));
	}
	if (phase < 0) vz_append(buf, cap, "%s", vz_tr("\nno loads, stores or atomics", "\n没有读、写或原子操作"));
}

/* An element: its value, and who read and wrote it in the phase shown. */
static void describe_element(thr_scene *s, vz_cell *c, char *buf, size_t cap)
{
	const tarr *t = array_of(s, c->array);
	int k = c->step;
	if (!t) return;
	int64_t j = (int64_t)c->index - t->lo;
	if (j < 0 || j >= t->n) return;
	double v = t->vals[(size_t)(k > 0 ? k : 0) * (size_t)t->n + (size_t)j];
	char vs[24];
	VZ_SNPRINTF_TR(buf, cap, "%s[%d] (%s %s, 0-based) = %s %s", "%s[%d]（%s %s，下标从 0 开始）= %s %s", t->a.name,
	               c->index, space_label(t->a.space), lm_dtype_name(t->a.dtype), vzs_short(vs, sizeof vs, v),
	               k > 0 ? vz_tr("after this phase", "本阶段之后") : vz_tr("before the block", "线程块运行之前"));
	if (k <= 0 || k > s->nphases) return;
	int n = 0;
	for (int i = s->phase_acc[k - 1]; i < s->phase_acc[k] && n < 12; i++) {
		const tacc *a = &s->acc[i];
		if (a->array != t->id || (int64_t)a->index != c->index) continue;
		VZ_APPEND_TR(buf, cap, "\n%s by thread %d (line %u)", "\n%s：线程 %d（第 %u 行）",
		             a->kind == LM_TRACE_LOAD ? vz_tr("read", "读") : a->kind == LM_TRACE_STORE ? vz_tr("written", "写") : "atomicAdd",
		             a->thread, a->line);
		n++;
	}
	if (!n) vz_append(buf, cap, "%s", vz_tr("\nnot touched in this phase", "\n本阶段没有被访问"));
}

static void thr_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	thr_scene *s = p;
	if (c->rows > 0 && c->cols > 0) { /* an element of a grid drawn as an image */
		int64_t i = (int64_t)c->row * c->cols + c->col;
		const char *state;
		if (strcmp(c->kind, "thread") == 0) {
			if (i >= s->nthreads) return;
			c->thread = (int32_t)i;
			c->warp = (int32_t)i / 32;
			c->lane = (int32_t)i % 32;
			c->color = thread_look(s, (int)i, c->step, &c->state);
		} else {
			const tarr *t = array_of(s, c->array);
			if (!t || i >= t->n) return;
			c->index = (int32_t)(t->lo + i);
			c->color = element_look(t, i, c->step, &state);
			c->state = state;
			c->value = t->vals[(size_t)(c->step > 0 ? c->step : 0) * (size_t)t->n + (size_t)i];
			c->has_value = !isnan(c->value);
		}
		c->rows = c->cols = -1;
	}
	if (strcmp(c->kind, "thread") == 0) describe_thread(s, c, buf, cap);
	else if (strcmp(c->kind, "element") == 0) describe_element(s, c, buf, cap);
}

static const vz_option thr_options[] = {
	{"block", VZ_OPT_INT, 0, 1e9, NULL, "0", "the block shown first (linear index, 0-based)"},
	{"launch", VZ_OPT_INT, 0, 254, NULL, "0", "the launch of the trace shown (0-based)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_threads = {
	.name = "threads",
	.summary = "any traced launch thread by thread: each thread's reads and writes per barrier "
	           "phase, warps coloured, idle lanes grey, GPU-Puzzles' score",
	.patterns = "launch fused *",
	.options = thr_options,
	.create = thr_create,
	.destroy = thr_destroy,
	.steps = thr_steps,
	.variants = thr_variants,
	.variant_name = thr_variant_name,
	.set_variant = thr_set_variant,
	.initial_variant = thr_initial_variant,
	.layout = thr_layout,
	.draw = thr_draw,
	.title = thr_title,
	.step_label = thr_step_label,
	.counters = thr_counters,
	.describe = thr_describe,
};
