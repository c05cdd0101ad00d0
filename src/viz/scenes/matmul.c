/*
 * matmul.c — the matrix multiplication scene (PMPP chapters 3 and 5): A (m x k) left of C, B
 * (k x n) above it, one block's tile of C and, phase by phase, the tiles of A and B it brings into
 * shared memory (Mds, Nds, drawn in the free corner), the partial products accumulating in the C
 * tile, and the global and shared loads counted as they happen. Tab switches between the naive
 * kernel and the tiled one at several tile sizes, all on the same A and B; the naive kernel's
 * phases are the same slices of k, read straight from global memory, each element as often as
 * the threads that use it (the counts on the cells).
 *
 * What is read from a trace (docs/trace.md "Tiled matmul"): for the block shown (launch 0), each
 * global load of M or N (its index gives the element, and so the phase: the slice of k it
 * belongs to), each shared load, and each thread's adds (their values are the running dot
 * products). The tiled kernel has two barrier phases per tile (load, compute); the naive kernel
 * has none, so its phases are cut from its loop by the index of k.
 * Read next: conv.c, docs/trace.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define MAXV 5 /* naive and up to four tile sizes */

enum { S_IDLE, S_ACTIVE, S_SHARED, S_DONE, S_PENDING, S_PARTIAL, NSTATES };
static const char *const state_names[NSTATES] = {"idle", "active", "in shared memory", "done", "pending",
                                                 "partial"};

/* A state as the hover says it. */
static const char *state_label(const char *st)
{
	static const char *const zh[NSTATES] = {"空闲", "活跃", "在共享内存中", "已完成", "待处理", "部分和"};
	for (int i = 0; i < NSTATES && vz_zh(); i++)
		if (strcmp(st, state_names[i]) == 0) return zh[i];
	return st;
}

typedef struct mvar {
	bool naive;
	int tile;
	char name[24];
	lm_viz_run run;
	int gx, gy, block, bx, by, phases;
	/* the block shown, per phase: */
	int64_t *gl, *sl;          /* global and shared loads in phase ph (phases entries) */
	int32_t *cnt_a, *cnt_b;    /* per element of A / B: loads by this block up to each phase: phases x (m k), phases x (k n) */
	double *psum;              /* phases x T^2: each thread's dot product after phase ph (NAN: none) */
	bool complete;
} mvar;

typedef struct mm_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo, truncated_input;
	int64_t m, k, n;
	double *a, *b;
	mvar vars[MAXV];
	int nvars, variant;
	int64_t block_opt;
	vz_color *col;
	uint8_t *state;
	double *val;
	vzs_grid g_a, g_b, g_c, g_ms, g_ns;
	vz_rect a_r, b_r, c_r, ms_r, ns_r, text_r;
	char numbers[512];       /* the numbers beside the tiles as last drawn (their hover) */
	float cs;
	double t;
	char fname[32];
} mm_scene;

/* ---------------------------------------------------------------- reading a trace */

static void mvar_free(mvar *v)
{
	vz_run_clear(&v->run);
	vz_free(v->gl);
	vz_free(v->sl);
	vz_free(v->cnt_a);
	vz_free(v->cnt_b);
	vz_free(v->psum);
	memset(v, 0, sizeof *v);
}

/* The phase of a global load: the slice of k its element lies in. */
static int load_phase(const mm_scene *s, const mvar *v, bool is_m, uint32_t idx)
{
	int64_t kk = is_m ? (int64_t)idx % s->k : (int64_t)idx / s->n;
	int ph = (int)(kk / v->tile);
	return ph < v->phases ? ph : v->phases - 1;
}

/* Reads the events of block v->block: loads per phase, counts per element, running sums. */
static lm_status read_block(mm_scene *s, mvar *v, const lm_trace *t, const lm_trace_launch *la)
{
	int idm = vz_trace_array(t, "M", LM_SPACE_GLOBAL, -1), idn = vz_trace_array(t, "N", LM_SPACE_GLOBAL, -1);
	int64_t T = v->tile, adds_per_phase_naive = T;
	int32_t *nadds = vz_calloc((size_t)(T * T), sizeof *nadds);
	if (!nadds) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	int64_t kept = lm_trace_count(t);
	bool seen = false;
	v->complete = true;
	for (int64_t i = la->first_step; i < la->first_step + la->nsteps; i++) {
		lm_trace_step st;
		if (lm_trace_step_get(t, i, &st) != LM_OK || (int)st.block != v->block) continue;
		seen = true;
		int64_t end = st.first + st.count;
		if (st.count == 0 || end > kept) v->complete = false;
		if (end > kept) end = kept;
		int step_ph = v->naive ? 0 : (int)st.step / 2;
		if (step_ph >= v->phases) step_ph = v->phases - 1;
		for (int64_t j = st.first; j < end; j++) {
			const lm_trace_event *e = lm_trace_event_get(t, j);
			int th = e->warp * 32 + e->lane;
			if (th >= T * T) continue;
			if (e->kind == LM_TRACE_LOAD && e->space == LM_SPACE_GLOBAL && (e->array == idm || e->array == idn)) {
				bool is_m = e->array == idm;
				int ph = load_phase(s, v, is_m, e->index);
				v->gl[ph]++;
				int64_t len = is_m ? s->m * s->k : s->k * s->n;
				if ((int64_t)e->index < len) (is_m ? v->cnt_a : v->cnt_b)[(int64_t)ph * len + e->index]++;
			} else if (e->kind == LM_TRACE_LOAD && e->space == LM_SPACE_SHARED) {
				v->sl[step_ph]++;
			} else if (e->kind == LM_TRACE_ADD) {
				int ph = v->naive ? (int)(nadds[th] / adds_per_phase_naive) : step_ph;
				nadds[th]++;
				if (ph < v->phases) v->psum[(int64_t)ph * T * T + th] = e->value;
			}
		}
	}
	vz_free(nadds);
	if (!seen)
		return lm_set_error(LM_ERR_ARG, "%s: block %d is not in the trace (its first %lld events; a smaller "
		                    "matrix or block shows)", s->fname, v->block, (long long)kept);
	/* counts up to each phase, running sums carried over phases without adds */
	int64_t la_ = s->m * s->k, lb = s->k * s->n;
	for (int ph = 1; ph < v->phases; ph++) {
		for (int64_t i = 0; i < la_; i++) v->cnt_a[ph * la_ + i] += v->cnt_a[(ph - 1) * la_ + i];
		for (int64_t i = 0; i < lb; i++) v->cnt_b[ph * lb + i] += v->cnt_b[(ph - 1) * lb + i];
		for (int64_t i = 0; i < T * T; i++)
			if (isnan(v->psum[ph * T * T + i])) v->psum[ph * T * T + i] = v->psum[(ph - 1) * T * T + i];
	}
	return LM_OK;
}

static lm_status mvar_build(mm_scene *s, mvar *v, const lm_viz_run *run)
{
	vz_run_copy(&v->run, run);
	const lm_trace *t = run->trace;
	lm_trace_launch la;
	if (vz_trace_check(t, s->fname) != LM_OK || lm_trace_launch_get(t, 0, &la) != LM_OK) return LM_ERR_ARG;
	v->gx = (int)la.grid[0];
	v->gy = (int)la.grid[1];
	int nb = v->gx * v->gy;
	v->block = (int)(s->block_opt < nb ? s->block_opt : nb - 1);
	v->bx = v->block % v->gx;
	v->by = v->block / v->gx;
	v->phases = (int)((s->k + v->tile - 1) / v->tile);
	int64_t T2 = (int64_t)v->tile * v->tile;
	v->gl = vz_calloc((size_t)v->phases, sizeof *v->gl);
	v->sl = vz_calloc((size_t)v->phases, sizeof *v->sl);
	v->cnt_a = vz_calloc((size_t)(v->phases * s->m * s->k), sizeof *v->cnt_a);
	v->cnt_b = vz_calloc((size_t)(v->phases * s->k * s->n), sizeof *v->cnt_b);
	v->psum = vz_malloc((size_t)(v->phases * T2) * sizeof *v->psum);
	if (!v->gl || !v->sl || !v->cnt_a || !v->cnt_b || !v->psum)
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	for (int64_t i = 0; i < v->phases * T2; i++) v->psum[i] = NAN;
	return read_block(s, v, t, &la);
}

/* ---------------------------------------------------------------- create */

static void mm_destroy(void *p)
{
	mm_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < s->nvars; i++) mvar_free(&s->vars[i]);
	vzs_grid *g[] = {&s->g_a, &s->g_b, &s->g_c, &s->g_ms, &s->g_ns};
	for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) vzs_grid_free(g[i]);
	vz_free(s->a);
	vz_free(s->b);
	vz_free(s->col);
	vz_free(s->state);
	vz_free(s->val);
	vz_free(s);
}

/* Events the emulator records for blocks 0..block of a kernel: enough to keep the one shown. */
static int64_t trace_cap_for(const mm_scene *s, bool naive, int64_t T)
{
	int64_t phases = (s->k + T - 1) / T;
	double per_block = naive ? (double)(T * T) * (3.0 * (double)s->k + 2) : (double)(T * T) * (double)phases * (3.0 * (double)T + 8) + (double)(T * T);
	double cap = per_block * (double)(s->block_opt + 1) * 1.1 + 4096;
	return cap > (double)LM_TRACE_DEFAULT_CAP ? LM_TRACE_DEFAULT_CAP : (int64_t)cap;
}

static lm_status inputs_from_trace(mm_scene *s, const lm_viz_run *r)
{
	const lm_trace *t = r->trace;
	int im = vz_trace_array(t, "M", LM_SPACE_GLOBAL, -1), in = vz_trace_array(t, "N", LM_SPACE_GLOBAL, -1);
	if (im < 0 || in < 0 || vz_trace_array(t, "P", LM_SPACE_GLOBAL, -1) < 0)
		return lm_set_error(LM_ERR_ARG, "%s: not a trace of a matrix multiplication (it has no arrays M, N and "
		                    "P): %s", s->fname, lm_trace_name(t));
	lm_trace_array ma, na;
	lm_trace_array_get(t, im, &ma);
	lm_trace_array_get(t, in, &na);
	s->m = ma.rows;
	s->k = ma.cols;
	s->n = na.cols;
	s->a = vz_calloc((size_t)(s->m * s->k), sizeof *s->a);
	s->b = vz_calloc((size_t)(s->k * s->n), sizeof *s->b);
	if (!s->a || !s->b) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	const char *names[2] = {"M", "N"};
	double *dst[2] = {s->a, s->b};
	int64_t len[2] = {s->m * s->k, s->k * s->n};
	for (int i = 0; i < 2; i++) {
		int64_t got = 0;
		double *x = vz_trace_input(t, names[i], &got);
		if (!x) return vz_error_prefix(LM_ERR_ARG, s->fname);
		memcpy(dst[i], x, (size_t)(got < len[i] ? got : len[i]) * sizeof *x);
		vz_free(x);
	}
	s->truncated_input = lm_trace_truncated(t);
	return LM_OK;
}

static lm_status demo_inputs(mm_scene *s, const lm_viz_opts *o)
{
	s->m = vz_opt_int(o, "m", 8);
	s->k = vz_opt_int(o, "k", s->m);
	s->n = vz_opt_int(o, "n", s->m);
	s->a = vz_malloc((size_t)(s->m * s->k) * sizeof *s->a);
	s->b = vz_malloc((size_t)(s->k * s->n) * sizeof *s->b);
	if (!s->a || !s->b) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	const char *in = vz_opt_string(o, "input", "random");
	/* B continues A's sequence, so a random A and B differ */
	double *both = vz_malloc((size_t)(s->m * s->k + s->k * s->n) * sizeof *both);
	if (!both) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	lm_status st = vzs_demo_values(in, s->m * s->k + s->k * s->n, both, s->fname);
	memcpy(s->a, both, (size_t)(s->m * s->k) * sizeof *both);
	memcpy(s->b, both + s->m * s->k, (size_t)(s->k * s->n) * sizeof *both);
	if (strcmp(in, "random") != 0) memcpy(s->b, both, (size_t)(s->k * s->n < s->m * s->k ? s->k * s->n : s->m * s->k) * sizeof *both);
	vz_free(both);
	return st;
}

/* naive (with the first tile's block) and tiled at up to four sizes around the first tile. */
static lm_status run_all(mm_scene *s, const lm_viz_run *have, bool have_naive, int64_t tile0)
{
	/* powers of two up to the matrix (and 32), a window of four around the first tile, which is in */
	int64_t cand[8], nc = 0, tiles[4], nt = 0, big = s->m > s->n ? s->m : s->n;
	for (int64_t T = 2; T <= 32; T *= 2)
		if (T <= big || nc == 0) cand[nc++] = T;
	int at = 0;
	for (int i = 0; i < nc; i++)
		if (cand[i] <= tile0) at = i;
	int lo = at - 2 < 0 ? 0 : at - 2;
	if (lo + 4 > nc) lo = nc - 4 < 0 ? 0 : (int)nc - 4;
	for (int i = lo; i < nc && nt < 4; i++) tiles[nt++] = cand[i];
	bool has0 = false;
	for (int i = 0; i < nt; i++) has0 |= tiles[i] == tile0;
	if (!has0) tiles[at - lo < nt ? at - lo : nt - 1] = tile0; /* a tile that is not a power of two */
	for (int i = -1; i < nt; i++) {
		mvar *v = &s->vars[s->nvars];
		v->naive = i < 0;
		v->tile = (int)(i < 0 ? tile0 : tiles[i]);
		snprintf(v->name, sizeof v->name, v->naive ? "naive" : "tiled %d", v->tile);
		lm_status st;
		if (have && have_naive == v->naive && (v->naive || v->tile == tile0)) {
			st = mvar_build(s, v, have);
		} else {
			lm_viz_run run;
			st = vzs_run_matmul(s->a, s->b, s->m, s->k, s->n, v->naive ? "naive" : "tiled", v->tile,
			                    trace_cap_for(s, v->naive, v->tile), &run, s->fname);
			if (st == LM_OK) {
				st = mvar_build(s, v, &run);
				vz_run_clear(&run);
			}
		}
		s->nvars++;
		if (st != LM_OK) return st;
		if (have && have_naive == v->naive && (v->naive || v->tile == tile0)) s->variant = s->nvars - 1;
	}
	return LM_OK;
}

static void *mm_create(const vz_build *b)
{
	mm_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	const lm_viz_run *from = traced ? traced : b->nruns ? &b->runs[0] : NULL;
	s->block_opt = vz_opt_int(b->opts, "block", 0);
	int64_t tile0 = from ? (int64_t)vz_run_counter(from, "tile", 16) : vz_opt_int(b->opts, "tile", 4);
	bool naive0 = from ? strcmp(from->algo, "naive") == 0 : strcmp(vz_opt_string(b->opts, "algo", "tiled"), "naive") == 0;
	lm_status st = LM_OK;
	if (traced) st = vz_trace_check(traced->trace, b->fname) == LM_OK ? inputs_from_trace(s, traced) : LM_ERR_ARG;
	else st = demo_inputs(s, b->opts);
	s->demo = from && !traced;
	if (st == LM_OK) st = run_all(s, traced, naive0, tile0);
	if (st == LM_OK && !traced) s->variant = naive0 ? 0 : 1 < s->nvars ? 1 : 0;
	if (st == LM_OK && !traced)
		for (int i = 1; i < s->nvars && !naive0; i++)
			if (s->vars[i].tile == tile0) s->variant = i;
	size_t cells = (size_t)(s->m * s->k + s->k * s->n + s->m * s->n + 2 * 32 * 32);
	if (st == LM_OK) {
		s->col = vz_calloc(cells, sizeof *s->col);
		s->state = vz_calloc(cells, sizeof *s->state);
		s->val = vz_calloc(cells, sizeof *s->val);
		if (!s->col || !s->state || !s->val) st = lm_set_error(LM_ERR_NOMEM, "%s: out of memory", b->fname);
	}
	if (st != LM_OK) {
		mm_destroy(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- steps */

static const mvar *cur(const mm_scene *s) { return &s->vars[s->variant]; }

static int mm_steps(void *p)
{
	const mvar *v = cur(p);
	return 1 + (v->naive ? 1 : 2) * v->phases;
}

/* Step k >= 1 -> phase and whether it is the load (tiled) or compute part. */
static void step_phase(const mvar *v, int k, int *ph, bool *load)
{
	if (v->naive) {
		*ph = k - 1;
		*load = false;
	} else {
		*ph = (k - 1) / 2;
		*load = (k - 1) % 2 == 0;
	}
}

static int mm_variants(void *p) { return ((mm_scene *)p)->nvars; }
static const char *mm_variant_name(void *p, int v) { return ((mm_scene *)p)->vars[v].name; }
static void mm_set_variant(void *p, int v) { ((mm_scene *)p)->variant = v; }
static int mm_initial_variant(void *p) { return ((mm_scene *)p)->variant; }

/* ---------------------------------------------------------------- layout */

static void mm_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	mm_scene *s = p;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), gap = lh * 1.6f, top = lh * 1.8f;
	float text_w = 40 * vz_char_width(f, VZ_FONT_SMALL);
	float cs = fminf((c->w - 2 * gap - text_w) / (float)(s->k + s->n), (c->h - top - gap - lh) / (float)(s->k + s->m));
	s->cs = fmaxf(cs, 0.25f);
	float qk = (float)s->k * s->cs, x0 = fmaxf(qk, 30 * vz_char_width(f, VZ_FONT_SMALL)) + gap;
	s->b_r = vz_r(x0, top + lh, (float)s->n * s->cs, (float)s->k * s->cs);
	s->a_r = vz_r(x0 - gap - qk, s->b_r.y + s->b_r.h + gap, qk, (float)s->m * s->cs);
	s->c_r = vz_r(x0, s->a_r.y, (float)s->n * s->cs, (float)s->m * s->cs);
	/* the free corner above A: Mds and Nds side by side, the numbers below them */
	float corner_w = x0 - gap, corner_h = s->b_r.h + gap * 0.5f;
	int T = cur(s)->tile;
	float side = fminf((corner_w - gap) / 2, corner_h * 0.55f);
	side = fminf(side, (float)T * fmaxf(s->cs * 1.4f, 30 * c->scale));
	s->ms_r = vz_r(0, top + lh, side, side);
	s->ns_r = vz_r(side + gap, top + lh, side, side);
	s->text_r = vz_r(x0 + s->b_r.w + gap, s->b_r.y, text_w, s->b_r.h);
	*ww = s->text_r.x + text_w;
	*wh = fmaxf(c->h, s->c_r.y + s->c_r.h);
}

/* ---------------------------------------------------------------- drawing */

static vz_color state_color(int st)
{
	switch (st) {
	case S_ACTIVE: return vz_th.active;
	case S_SHARED: return vz_mix(vz_th.path_a, vz_th.bg, 0.62);
	case S_DONE: return vz_mix(vz_th.common, vz_th.bg, 0.5);
	case S_PENDING: return vz_th.pending;
	case S_PARTIAL: return vz_mix(vz_th.active, vz_th.bg, 0.55);
	default: return vz_th.idle;
	}
}

static void draw_cells(vz_frame *f, mm_scene *s, vzs_grid *g, vz_rect r, int rows, int cols, int64_t off,
                       const char *kind)
{
	for (int64_t i = 0; i < (int64_t)rows * cols; i++) s->col[off + i] = state_color(s->state[off + i]);
	vzs_matrix mx = {rows, cols, s->col + off, s->val + off, s->state + off, state_names, kind, cur(s)->name,
	                 0, (int32_t)off, true, NULL};
	vzs_matrix_draw(f, g, r, &mx);
}

/* States and values of A, B, C and the shared tiles at step k. */
static void colour_step(mm_scene *s, int k)
{
	const mvar *v = cur(s);
	int64_t T = v->tile, la = s->m * s->k, lb = s->k * s->n, lc = s->m * s->n;
	uint8_t *sa = s->state, *sb = sa + la, *sc = sb + lb, *sm = sc + lc, *sn = sm + T * T;
	double *va = s->val, *vb = va + la, *vc = vb + lb, *vm = vc + lc, *vn = vm + T * T;
	memcpy(va, s->a, (size_t)la * sizeof *va);
	memcpy(vb, s->b, (size_t)lb * sizeof *vb);
	int ph = -1;
	bool load = false;
	if (k >= 1) step_phase(v, k, &ph, &load);
	int64_t r0 = (int64_t)v->by * T, c0 = (int64_t)v->bx * T, k0 = (int64_t)(ph < 0 ? 0 : ph) * T;
	for (int64_t i = 0; i < la; i++) {
		int64_t row = i / s->k, kk = i % s->k;
		bool band = row >= r0 && row < r0 + T;
		sa[i] = !band || ph < 0 ? S_IDLE : kk >= k0 && kk < k0 + T ? (load || v->naive ? S_ACTIVE : S_SHARED)
		        : kk < k0 ? S_DONE : S_IDLE;
	}
	for (int64_t i = 0; i < lb; i++) {
		int64_t kk = i / s->n, col = i % s->n;
		bool band = col >= c0 && col < c0 + T;
		sb[i] = !band || ph < 0 ? S_IDLE : kk >= k0 && kk < k0 + T ? (load || v->naive ? S_ACTIVE : S_SHARED)
		        : kk < k0 ? S_DONE : S_IDLE;
	}
	int done_ph = load ? ph - 1 : ph; /* the last phase whose products are in */
	for (int64_t i = 0; i < lc; i++) {
		int64_t row = i / s->n, col = i % s->n;
		bool mine = row >= r0 && row < r0 + T && col >= c0 && col < c0 + T;
		sc[i] = !mine || ph < 0 ? S_PENDING : done_ph >= v->phases - 1 ? S_DONE : load ? S_PARTIAL : S_ACTIVE;
		vc[i] = NAN;
		if (mine && done_ph >= 0) vc[i] = v->psum[(int64_t)done_ph * T * T + (row - r0) * T + (col - c0)];
	}
	for (int64_t i = 0; i < T * T; i++) { /* Mds = A tile, Nds = B tile of phase ph */
		int64_t ty = i / T, tx = i % T;
		bool in_a = r0 + ty < s->m && k0 + tx < s->k, in_b = k0 + ty < s->k && c0 + tx < s->n;
		bool have = ph >= 0 && !v->naive;
		sm[i] = sn[i] = !have ? S_PENDING : load ? S_ACTIVE : S_SHARED;
		vm[i] = have ? (in_a ? s->a[(r0 + ty) * s->k + k0 + tx] : 0) : NAN;
		vn[i] = have ? (in_b ? s->b[(k0 + ty) * s->n + c0 + tx] : 0) : NAN;
	}
}

/* How often this block has loaded each element of A and B so far (the naive kernel: T times). */
static void draw_counts(vz_frame *f, const mm_scene *s, int k)
{
	const mvar *v = cur(s);
	if (k < 1 || !vz_text_fits(f, VZ_FONT_TINY, "x16", s->cs * 0.95f)) return;
	int ph;
	bool load;
	step_phase(v, k, &ph, &load);
	int64_t la = s->m * s->k, lb = s->k * s->n;
	const int32_t *ca = v->cnt_a + (int64_t)ph * la, *cb = v->cnt_b + (int64_t)ph * lb;
	for (int64_t i = 0; i < la; i++)
		if (ca[i] > 1)
			vz_textf(f, s->a_r.x + (float)(i % s->k + 1) * s->cs - 1, s->a_r.y + (float)(i / s->k) * s->cs,
			         VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text, "x%d", ca[i]);
	for (int64_t i = 0; i < lb; i++)
		if (cb[i] > 1)
			vz_textf(f, s->b_r.x + (float)(i % s->n + 1) * s->cs - 1, s->b_r.y + (float)(i / s->n) * s->cs,
			         VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text, "x%d", cb[i]);
}

/* A rectangle travelling from a tile of A or B to Mds / Nds while a load step animates. */
static void draw_moving(vz_frame *f, const mm_scene *s, double t)
{
	const mvar *v = cur(s);
	int k = (int)floor(t + 1e-9);
	double u = t - k;
	if (v->naive || u <= 0.01 || k + 1 > 2 * v->phases) return;
	int ph;
	bool load;
	step_phase(v, k + 1, &ph, &load);
	if (!load) return;
	float T = (float)v->tile, cs = s->cs, e = (float)(u * u * (3 - 2 * u));
	vz_rect fa = vz_r(s->a_r.x + (float)ph * T * cs, s->a_r.y + (float)v->by * T * cs, T * cs, T * cs);
	vz_rect fb = vz_r(s->b_r.x + (float)v->bx * T * cs, s->b_r.y + (float)ph * T * cs, T * cs, T * cs);
	const vz_rect *to[2] = {&s->ms_r, &s->ns_r}, *from[2] = {&fa, &fb};
	for (int i = 0; i < 2; i++) {
		vz_rect r = vz_r(from[i]->x + (to[i]->x - from[i]->x) * e, from[i]->y + (to[i]->y - from[i]->y) * e,
		                 from[i]->w + (to[i]->w - from[i]->w) * e, from[i]->h + (to[i]->h - from[i]->h) * e);
		vz_outline(f, r, 2.5f, vz_th.arrow_now);
	}
}

static void draw_outlines(vz_frame *f, const mm_scene *s, int k)
{
	const mvar *v = cur(s);
	float T = (float)v->tile, cs = s->cs;
	vz_layer(f);
	vz_rect ct = vz_r(s->c_r.x + (float)v->bx * T * cs, s->c_r.y + (float)v->by * T * cs, T * cs, T * cs);
	vz_outline(f, ct, 2.5f, vz_th.highlight);
	vz_rect rs[3] = {s->a_r, s->b_r, s->c_r};
	for (int i = 0; i < 3; i++) vz_outline(f, rs[i], 1, vz_th.text_dim);
	vz_color grid = vz_fade(vz_th.text, 0.3f);
	for (float x = T; x < (float)s->k; x += T) vz_line(f, s->a_r.x + x * cs, s->a_r.y, s->a_r.x + x * cs, s->a_r.y + s->a_r.h, 1, grid);
	for (float y = T; y < (float)s->m; y += T) {
		vz_line(f, s->a_r.x, s->a_r.y + y * cs, s->a_r.x + s->a_r.w, s->a_r.y + y * cs, 1, grid);
		vz_line(f, s->c_r.x, s->c_r.y + y * cs, s->c_r.x + s->c_r.w, s->c_r.y + y * cs, 1, grid);
	}
	for (float x = T; x < (float)s->n; x += T) {
		vz_line(f, s->b_r.x + x * cs, s->b_r.y, s->b_r.x + x * cs, s->b_r.y + s->b_r.h, 1, grid);
		vz_line(f, s->c_r.x + x * cs, s->c_r.y, s->c_r.x + x * cs, s->c_r.y + s->c_r.h, 1, grid);
	}
	for (float y = T; y < (float)s->k; y += T) vz_line(f, s->b_r.x, s->b_r.y + y * cs, s->b_r.x + s->b_r.w, s->b_r.y + y * cs, 1, grid);
	if (k < 1) return;
	int ph;
	bool load;
	step_phase(v, k, &ph, &load);
	vz_rect ta = vz_r(s->a_r.x + (float)ph * T * cs, s->a_r.y + (float)v->by * T * cs, T * cs, T * cs);
	vz_rect tb = vz_r(s->b_r.x + (float)v->bx * T * cs, s->b_r.y + (float)ph * T * cs, T * cs, T * cs);
	vz_outline(f, ta, 2, vz_th.arrow_now);
	vz_outline(f, tb, 2, vz_th.arrow_now);
	if (!v->naive && load) {
		vz_arrow(f, ta.x + ta.w / 2, ta.y, s->ms_r.x + s->ms_r.w / 2, s->ms_r.y + s->ms_r.h + 3, 2, 10, vz_th.arrow_now);
		vz_arrow(f, tb.x, tb.y + tb.h / 2, s->ns_r.x + s->ns_r.w + 3, s->ns_r.y + s->ns_r.h / 2, 2, 10, vz_th.arrow_now);
	}
}

static void draw_numbers(vz_frame *f, mm_scene *s, int k)
{
	const mvar *v = cur(s);
	float lh = vz_text_height(f, VZ_FONT_SMALL), x = s->text_r.x, y0 = s->text_r.y, y = y0;
	int64_t gl = 0, sl = 0;
	int ph = -1;
	bool load = false;
	if (k >= 1) step_phase(v, k, &ph, &load);
	for (int i = 0; i <= ph && i < v->phases; i++) {
		gl += v->gl[i];
		sl += load && i == ph ? 0 : v->sl[i];
	}
	char *t = s->numbers;
	size_t tc = sizeof s->numbers;
	t[0] = '\0';
	bool zh = vz_zh();
	double g = vz_run_counter(&v->run, "global_loads", NAN), mnk = (double)(s->m * s->n * s->k);
	if (zh) {
		vzs_text_line(f, t, tc, x, y, vz_th.text, "线程块 (%d, %d) 到目前（模拟）：", v->bx, v->by);
		vzs_text_line(f, t, tc, x, y += lh, vz_th.text, "  全局读取 %lld，共享读取 %lld", (long long)gl, (long long)sl);
		vzs_text_line(f, t, tc, x, y += lh * 1.2f, vz_th.text, "整个内核：全局读取 %.0f 次", g);
		vzs_text_line(f, t, tc, x, y += lh, vz_th.text_dim, "  教科书公式 %s = %.0f", v->naive ? "2mnk" : "2mnk/T",
		              v->naive ? 2 * mnk : 2 * mnk / v->tile);
	} else {
		vzs_text_line(f, t, tc, x, y, vz_th.text, "block (%d, %d) so far (emulated):", v->bx, v->by);
		vzs_text_line(f, t, tc, x, y += lh, vz_th.text, "  global loads %lld, shared loads %lld", (long long)gl, (long long)sl);
		vzs_text_line(f, t, tc, x, y += lh * 1.2f, vz_th.text, "whole kernel: %.0f global loads", g);
		vzs_text_line(f, t, tc, x, y += lh, vz_th.text_dim, "  textbook %s = %.0f", v->naive ? "2mnk" : "2mnk/T",
		              v->naive ? 2 * mnk : 2 * mnk / v->tile);
	}
	if (!v->complete)
		vzs_text_line(f, t, tc, x, y += lh, vz_th.highlight, "%s",
		              vz_tr("(the trace was truncated in this block)", "（trace 在本线程块内被截断）"));
	vz_cell *c = vz_cell_add(f, vz_r(x, y0, s->text_r.w, y + lh - y0), "loads"); /* the hover repeats them */
	c->group = v->name;
	c->state = "emulated";
	c->value = g;
	c->has_value = !isnan(g);
}

static void mm_draw(void *p, vz_frame *f)
{
	mm_scene *s = p;
	const mvar *v = cur(s);
	s->t = f->t;
	int k = (int)floor(f->t + 1e-9);
	colour_step(s, k);
	int64_t T = v->tile, la = s->m * s->k, lb = s->k * s->n, lc = s->m * s->n;
	float lh = vz_text_height(f, VZ_FONT_SMALL), x = 0;
	x = vzs_legend(f, x, 0, vz_th.active, false,
	               v->naive ? vz_tr("read from global memory now / computing", "正从全局内存读取 / 计算中")
	                        : vz_tr("loaded now / computing", "正在加载 / 计算中"));
	if (!v->naive) x = vzs_legend(f, x, 0, state_color(S_SHARED), false, vz_tr("in shared memory", "在共享内存中"));
	x = vzs_legend(f, x, 0, state_color(S_DONE), false, vz_tr("used in an earlier phase / done", "已在之前的阶段用过 / 已完成"));
	vzs_legend(f, x, 0, state_color(S_PARTIAL), false, vz_tr("partial sums", "部分和"));
	vz_textf(f, s->b_r.x, s->b_r.y - lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "B (%lld x %lld)",
	         (long long)s->k, (long long)s->n);
	vz_textf(f, s->a_r.x, s->a_r.y - lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "A (%lld x %lld)",
	         (long long)s->m, (long long)s->k);
	vz_textf(f, s->c_r.x, s->c_r.y - lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	         "C = A B (%lld x %lld)", (long long)s->m, (long long)s->n);
	const char *shared = vz_tr("(shared)", "（共享）");
	draw_cells(f, s, &s->g_a, s->a_r, (int)s->m, (int)s->k, 0, "A");
	draw_cells(f, s, &s->g_b, s->b_r, (int)s->k, (int)s->n, la, "B");
	draw_cells(f, s, &s->g_c, s->c_r, (int)s->m, (int)s->n, la + lb, "C");
	if (!v->naive) {
		vz_textf(f, s->ms_r.x, s->ms_r.y - lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "Mds %s", shared);
		vz_textf(f, s->ns_r.x, s->ns_r.y - lh * 1.1f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, "Nds %s", shared);
		draw_cells(f, s, &s->g_ms, s->ms_r, (int)T, (int)T, la + lb + lc, "Mds");
		draw_cells(f, s, &s->g_ns, s->ns_r, (int)T, (int)T, la + lb + lc + T * T, "Nds");
		vz_outline(f, s->ms_r, 1, vz_th.text_dim);
		vz_outline(f, s->ns_r, 1, vz_th.text_dim);
	} else {
		vz_text_draw(f, s->ms_r.x, s->ms_r.y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		             vz_tr("naive: no shared memory;", "naive：没有共享内存，"));
		vz_text_draw(f, s->ms_r.x, s->ms_r.y + lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		             vz_tr("each thread reads its row of A", "每个线程从全局内存读取"));
		vz_text_draw(f, s->ms_r.x, s->ms_r.y + 2 * lh, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		             vz_tr("and column of B from global memory", "A 的一行和 B 的一列"));
	}
	draw_counts(f, s, k);
	draw_outlines(f, s, k);
	draw_moving(f, s, f->t);
	draw_numbers(f, s, k);
}

/* ---------------------------------------------------------------- text */

static void mm_title(void *p, char *buf, size_t cap)
{
	mm_scene *s = p;
	const mvar *v = cur(s);
	VZ_SNPRINTF_TR(buf, cap, "matmul: C = A B, %lld x %lld times %lld x %lld, %s, %d x %d blocks of %d x %d threads%s",
	               "矩阵乘法：C = A B，%lld × %lld 乘 %lld × %lld，%s，%d × %d 个线程块，每块 %d × %d 个线程%s",
	               (long long)s->m, (long long)s->k, (long long)s->k, (long long)s->n, v->name, v->gx, v->gy, v->tile,
	               v->tile, s->demo ? vz_tr(" (emulated demonstration; your run has no trace)", "（模拟演示；你的运行没有 trace）") : "");
}

static void mm_step_label(void *p, int step, char *buf, size_t cap)
{
	mm_scene *s = p;
	const mvar *v = cur(s);
	if (step == 0) {
		VZ_SNPRINTF_TR(buf, cap, "block (%d, %d) computes the outlined tile of C in %d phases of k (-> to start)",
		               "线程块 (%d, %d) 沿 k 分 %d 个阶段计算 C 中描边的分块（按 → 开始）", v->bx, v->by, v->phases);
		return;
	}
	int ph;
	bool load;
	step_phase(v, step, &ph, &load);
	int64_t k0 = (int64_t)ph * v->tile, k1 = k0 + v->tile < s->k ? k0 + v->tile : s->k;
	if (v->naive)
		VZ_SNPRINTF_TR(buf, cap, "phase %d: every thread adds a[row][i] b[i][col] for i = %lld..%lld, each operand from "
		               "global memory (%lld loads)", "阶段 %d：每个线程累加 a[row][i] b[i][col]，i = %lld..%lld，"
		               "操作数都来自全局内存（%lld 次读取）", ph + 1, (long long)k0, (long long)k1 - 1, (long long)v->gl[ph]);
	else if (load)
		VZ_SNPRINTF_TR(buf, cap, "phase %d, load: each thread copies an element of A and one of B to Mds and Nds (%lld "
		               "global loads)", "阶段 %d，加载：每个线程把 A 和 B 各一个元素复制到 Mds 和 Nds（%lld 次全局读取）",
		               ph + 1, (long long)v->gl[ph]);
	else
		VZ_SNPRINTF_TR(buf, cap, "phase %d, compute: %d partial products per thread from shared memory (%lld shared loads)",
		               "阶段 %d，计算：每个线程从共享内存算 %d 个部分积（%lld 次共享读取）", ph + 1, v->tile,
		               (long long)v->sl[ph]);
}

static void mm_counters(void *p, vz_panel *pn)
{
	mm_scene *s = p;
	static const char *const names[] = {"global_loads", "shared_loads", "adds", "bytes", "flops", "modelled_cycles",
	                                    "time_ms", "gflops", NULL};
	for (int i = 0; i < s->nvars && pn->ncols < VZ_PANEL_COLS - 1; i++) vzs_panel_add(pn, s->vars[i].name, &s->vars[i].run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	vz_panel_note(pn, "%s", vz_tr("global_loads: 2mnk for the naive kernel; 2mnk/T tiled (each element once per block "
	                              "that needs it). bytes: each operand once (an ideal run)",
	                              "global_loads：naive 内核为 2mnk；分块内核为 2mnk/T（每个元素被需要它的每个线程块"
	                              "读一次）。bytes：每个操作数只读一次（理想情况）"));
	if (s->truncated_input)
		vz_panel_note(pn, "%s", vz_tr("the trace was truncated: the other kernels run on the values it kept (0 where it "
		                              "lost them)", "trace 被截断：其他内核在它保留下来的数值上运行（丢失处为 0）"));
}

static void mm_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	mm_scene *s = p;
	const mvar *v = cur(s);
	int64_t T = v->tile, la = s->m * s->k, lb = s->k * s->n, lc = s->m * s->n, off = c->tag;
	if (strcmp(c->kind, "loads") == 0) {
		snprintf(buf, cap, "%s", s->numbers);
		return;
	}
	if (c->rows > 0 && c->cols > 0) {
		colour_step(s, (int)floor(s->t + 1e-9));
		for (int64_t j = 0; j < (int64_t)c->rows * c->cols; j++) s->col[off + j] = state_color(s->state[off + j]);
		vzs_matrix mx = {c->rows, c->cols, s->col + off, s->val + off, s->state + off, state_names, c->kind,
		                 c->group, 0, c->tag, true, NULL};
		vzs_matrix_fill(c, &mx, (int64_t)c->row * c->cols + c->col);
	}
	int64_t i = c->index;
	if (i < 0) return;
	char val[32];
	int k = (int)floor(s->t + 1e-9), ph = 0;
	bool load;
	if (k >= 1) step_phase(v, k, &ph, &load);
	if ((off == 0 && i < la) || (off == la && i < lb)) {
		bool is_a = off == 0; /* an element of A (row length k) or of B (row length n) */
		int64_t cols = is_a ? s->k : s->n;
		int32_t n = k < 1 ? 0 : is_a ? v->cnt_a[(int64_t)ph * la + i] : v->cnt_b[(int64_t)ph * lb + i];
		vzs_short(val, sizeof val, is_a ? s->a[i] : s->b[i]);
		if (vz_zh())
			snprintf(buf, cap, "%c[%lld][%lld] = %s\n本线程块到目前加载了 %d 次（%s）", is_a ? 'A' : 'B',
			         (long long)(i / cols), (long long)(i % cols), val, n, state_label(c->state));
		else
			snprintf(buf, cap, "%c[%lld][%lld] = %s\nloaded %d time%s by this block so far (%s)",
			         is_a ? 'A' : 'B', (long long)(i / cols), (long long)(i % cols), val, n,
			         n == 1 ? "" : "s", c->state);
	} else if (off == la + lb && i < lc) {
		snprintf(buf, cap, "C[%lld][%lld]%s%s\n%s", (long long)(i / s->n), (long long)(i % s->n),
		         c->has_value ? " = " : "", c->has_value ? vzs_short(val, sizeof val, c->value) : "",
		         strcmp(c->state, "pending") == 0 ? vz_tr("another block's tile", "其他线程块的分块") : state_label(c->state));
	} else if (i < T * T) {
		VZ_SNPRINTF_TR(buf, cap, "%s[%lld][%lld]%s%s (shared memory, one copy per block)", "%s[%lld][%lld]%s%s（共享内存，每个线程块一份）",
		               off == la + lb + lc ? "Mds" : "Nds", (long long)(i / T), (long long)(i % T), c->has_value ? " = " : "",
		               c->has_value ? vzs_short(val, sizeof val, c->value) : "");
	}
}

static const vz_option mm_options[] = {
	{"algo", VZ_OPT_CHOICE, 0, 0, "naive tiled", "tiled", "the kernel shown first"},
	{"m", VZ_OPT_INT, 1, 256, NULL, "8", "rows of A and C"},
	{"k", VZ_OPT_INT, 1, 256, NULL, "m", "columns of A, rows of B"},
	{"n", VZ_OPT_INT, 1, 256, NULL, "m", "columns of B and C"},
	{"tile", VZ_OPT_INT, 1, 32, NULL, "4", "tile width (the block is tile x tile threads)"},
	{"block", VZ_OPT_INT, 0, 65535, NULL, "0", "the block shown (its linear index)"},
	{"input", VZ_OPT_CHOICE, 0, 0, "random arange ones pmpp", "random", "the values of A and B"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_matmul = {
	.name = "matmul",
	.summary = "tiled matrix multiplication: tiles of A and B through shared memory into a tile of C, phase by phase",
	.patterns = "matmul",
	.options = mm_options,
	.create = mm_create,
	.destroy = mm_destroy,
	.steps = mm_steps,
	.variants = mm_variants,
	.variant_name = mm_variant_name,
	.set_variant = mm_set_variant,
	.initial_variant = mm_initial_variant,
	.layout = mm_layout,
	.draw = mm_draw,
	.title = mm_title,
	.step_label = mm_step_label,
	.counters = mm_counters,
	.describe = mm_describe,
};
