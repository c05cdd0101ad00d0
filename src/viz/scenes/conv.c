/*
 * conv.c — the 2-D convolution scene (PMPP chapter 7): the input image with the current block's
 * output tile, its halo cells and its input tile (ghost cells outside the image drawn hatched),
 * the shared-memory copy N_s filling as the block loads it, the mask in constant (or global)
 * memory, and the output cells filling in block by block. Tab switches between the four kernels
 * (naive, constant, tiled-input, tiled-output) run on the same image, mask and tile; each draws
 * what it loaded, so the naive kernel's repeated loads of one input cell show as counts and the
 * tiled ones' single loads as a tile. Global loads per output pixel and the reuse of each loaded
 * input element stand beside the textbook's formulas.
 *
 * What is read from a trace (docs/trace.md "2-D convolution"): per block (launch 0), the global
 * loads of N (step 0 of the tiled kernels: the input tile; ghost cells are never loaded), the
 * stores of P, loads of the mask (F in global, F_c in constant memory) and of N_s. A step of the
 * scene is a barrier phase of a block: the tiled kernels have two per block (load, compute), the
 * others one. Built from a conv2d run with a trace (the other kernels run on its image and mask),
 * from a run without one (a demonstration input) or from options.
 * Read next: matmul.c (tiles of two matrices), histogram.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

#define NALGOS 4
static const char *const algos[NALGOS] = {"naive", "constant", "tiled-input", "tiled-output"};
enum { NAIVE, CONSTANT, TILED_IN, TILED_OUT };
static bool tiled(int a) { return a == TILED_IN || a == TILED_OUT; }

/* Cell states (names[] order). */
enum { S_IDLE, S_ACTIVE, S_HALO, S_GHOST, S_SHARED, S_DONE, S_PENDING, S_MASK, NSTATES };
static const char *const state_names[NSTATES] = {"idle", "active", "halo", "ghost", "in shared memory",
                                                 "done", "pending", "mask"};
enum { WHY_NONE, WHY_EVEN_MASK, WHY_THREADS };

/* A state as the hover says it. */
static const char *state_label(const char *st)
{
	static const char *const zh[NSTATES] = {"空闲", "活跃", "光环单元", "幽灵单元", "在共享内存中", "已完成", "待处理", "掩码"};
	for (int i = 0; i < NSTATES && vz_zh(); i++)
		if (strcmp(st, state_names[i]) == 0) return zh[i];
	return st;
}

typedef struct cblock {
	int64_t first, count;   /* its global loads of N: loads[first .. first + count) */
	int64_t ofirst, ocount; /* its stores of P: outs / outv[ofirst ..) */
	int64_t mask_loads, shared_loads;
	bool complete;          /* every event of it was kept */
} cblock;

typedef struct crun {
	bool ok;
	int why;                /* why the kernel could not run here (WHY_*) */
	lm_viz_run run;
	int gx, gy, tx, ty;     /* grid and block dims */
	cblock *blocks;
	int nblocks;
	int32_t *loads;
	int64_t nloads, cap_loads;
	int32_t *outs;
	double *outv;
	int64_t nouts, cap_outs;
} crun;

typedef struct conv_scene {
	lm_viz_run given[VZS_GIVEN];
	int ngiven;
	bool demo, truncated_input;
	int64_t h, w, mh, mw, ry, rx, tile, in_h, in_w;
	double *img, *mask;
	crun runs[NALGOS];
	int vmap[NALGOS], nvariants, variant;
	/* per frame */
	vz_color *col;          /* h*w (input) + h*w (output) + in_h*in_w (N_s) + mh*mw (mask) */
	uint8_t *state;
	double *val;
	int32_t *count;         /* loads of each input cell by the current block */
	bool *hatch;
	vzs_grid g_in, g_out, g_sh, g_mask;
	/* layout (world) */
	float cs, csh, top;
	vz_rect in_r, sh_r, mask_r, out_r, text_r;
	char numbers[1024];      /* the numbers beside the mask as last drawn (their hover) */
	double t;
	char fname[32];
} conv_scene;

/* ---------------------------------------------------------------- reading a trace */

static void crun_free(crun *r)
{
	vz_run_clear(&r->run);
	vz_free(r->blocks);
	vz_free(r->loads);
	vz_free(r->outs);
	vz_free(r->outv);
	memset(r, 0, sizeof *r);
}

static bool push_load(crun *r, int32_t i)
{
	if (r->nloads == r->cap_loads) {
		int64_t c = r->cap_loads ? 2 * r->cap_loads : 1024;
		int32_t *p = vz_realloc(r->loads, (size_t)c * sizeof *p);
		if (!p) return false;
		r->loads = p;
		r->cap_loads = c;
	}
	r->loads[r->nloads++] = i;
	return true;
}

static bool push_out(crun *r, int32_t i, double v)
{
	if (r->nouts == r->cap_outs) {
		int64_t c = r->cap_outs ? 2 * r->cap_outs : 1024;
		int32_t *p = vz_realloc(r->outs, (size_t)c * sizeof *p);
		double *q = p ? vz_realloc(r->outv, (size_t)c * sizeof *q) : NULL;
		if (p) r->outs = p;
		if (!q) return false;
		r->outv = q;
		r->cap_outs = c;
	}
	r->outs[r->nouts] = i;
	r->outv[r->nouts++] = v;
	return true;
}

/* The events of one block's barrier phase. */
static lm_status read_phase(crun *r, const lm_trace *t, const lm_trace_step *s, cblock *b, int ids[4])
{
	int64_t end = s->first + s->count, kept = lm_trace_count(t);
	if (s->count == 0 || end > kept) b->complete = false;
	if (end > kept) end = kept;
	for (int64_t i = s->first; i < end; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		bool ok = true;
		if (e->kind == LM_TRACE_LOAD && e->array == ids[0]) ok = push_load(r, (int32_t)e->index);
		else if (e->kind == LM_TRACE_STORE && e->array == ids[1]) ok = push_out(r, (int32_t)e->index, e->value);
		else if (e->kind == LM_TRACE_LOAD && e->array == ids[2]) b->mask_loads++;
		else if (e->kind == LM_TRACE_LOAD && e->array == ids[3]) b->shared_loads++;
		if (!ok) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
	}
	return LM_OK;
}

static lm_status crun_build(crun *r, const lm_viz_run *run, int algo, const char *fname)
{
	memset(r, 0, sizeof *r);
	vz_run_copy(&r->run, run);
	const lm_trace *t = run->trace;
	lm_trace_launch la;
	if (vz_trace_check(t, fname) != LM_OK || lm_trace_launch_get(t, 0, &la) != LM_OK) {
		crun_free(r);
		return LM_ERR_ARG;
	}
	r->gx = (int)la.grid[0];
	r->gy = (int)la.grid[1];
	r->tx = (int)la.block[0];
	r->ty = (int)la.block[1];
	r->nblocks = r->gx * r->gy;
	r->blocks = vz_calloc((size_t)(r->nblocks > 0 ? r->nblocks : 1), sizeof *r->blocks);
	if (!r->blocks) {
		crun_free(r);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	int ids[4] = {vz_trace_array(t, "N", LM_SPACE_GLOBAL, -1), vz_trace_array(t, "P", LM_SPACE_GLOBAL, -1),
	              algo == NAIVE ? vz_trace_array(t, "F", LM_SPACE_GLOBAL, -1)
	                            : vz_trace_array(t, "F_c", LM_SPACE_CONSTANT, -1),
	              vz_trace_array(t, "N_s", LM_SPACE_SHARED, -1)};
	for (int b = 0; b < r->nblocks; b++) r->blocks[b].complete = false;
	uint32_t cur = UINT32_MAX;
	lm_status st = LM_OK;
	for (int64_t i = la.first_step; st == LM_OK && i < la.first_step + la.nsteps; i++) {
		lm_trace_step s;
		if (lm_trace_step_get(t, i, &s) != LM_OK || (int)s.block >= r->nblocks) continue;
		cblock *b = &r->blocks[s.block];
		if (s.block != cur) { /* blocks run one after another: a block's phases are together */
			cur = s.block;
			b->first = r->nloads;
			b->ofirst = r->nouts;
			b->complete = true;
		}
		st = read_phase(r, t, &s, b, ids);
		b->count = r->nloads - b->first;
		b->ocount = r->nouts - b->ofirst;
	}
	r->ok = st == LM_OK;
	if (st != LM_OK) crun_free(r);
	return st;
}

/* ---------------------------------------------------------------- create */

static void conv_destroy(void *p)
{
	conv_scene *s = p;
	if (!s) return;
	for (int i = 0; i < s->ngiven; i++) vz_run_clear(&s->given[i]);
	for (int i = 0; i < NALGOS; i++) crun_free(&s->runs[i]);
	vzs_grid_free(&s->g_in);
	vzs_grid_free(&s->g_out);
	vzs_grid_free(&s->g_sh);
	vzs_grid_free(&s->g_mask);
	vz_free(s->img);
	vz_free(s->mask);
	vz_free(s->col);
	vz_free(s->state);
	vz_free(s->val);
	vz_free(s->count);
	vz_free(s->hatch);
	vz_free(s);
}

static int algo_index(const char *a)
{
	if (strcmp(a, "tiled") == 0) return TILED_IN;
	for (int i = 0; i < NALGOS; i++)
		if (strcmp(a, algos[i]) == 0) return i;
	return -1;
}

/* A 3 x 3 (or 5 x 5) binomial blur as the lecture's mask: small integers, so outputs read as integers. */
static void demo_mask(double *m, int64_t side)
{
	static const double b3[3] = {1, 2, 1}, b5[5] = {1, 4, 6, 4, 1};
	const double *b = side == 5 ? b5 : b3;
	for (int64_t i = 0; i < side; i++)
		for (int64_t j = 0; j < side; j++) m[i * side + j] = b[i] * b[j];
}

/* The image and mask of a traced run (N's loads cover every element; the mask's, all of it). */
static lm_status input_from_trace(conv_scene *s, const lm_viz_run *r, const char *fname)
{
	const lm_trace *t = r->trace;
	int n = vz_trace_array(t, "N", LM_SPACE_GLOBAL, -1), p = vz_trace_array(t, "P", LM_SPACE_GLOBAL, -1);
	if (n < 0 || p < 0)
		return lm_set_error(LM_ERR_ARG, "%s: not a trace of a 2-D convolution (it has no arrays N and P): "
		                    "%s", fname, lm_trace_name(t));
	lm_trace_array na;
	lm_trace_array_get(t, n, &na);
	s->h = na.rows;
	s->w = na.cols;
	bool constant = vz_trace_array(t, "F_c", LM_SPACE_CONSTANT, -1) >= 0;
	int f = constant ? vz_trace_array(t, "F_c", LM_SPACE_CONSTANT, -1) : vz_trace_array(t, "F", LM_SPACE_GLOBAL, -1);
	lm_trace_array fa;
	if (f < 0 || lm_trace_array_get(t, f, &fa) != LM_OK)
		return lm_set_error(LM_ERR_ARG, "%s: the convolution trace has no mask (F or F_c)", fname);
	s->mh = fa.rows;
	s->mw = fa.cols;
	int64_t got = 0;
	s->img = vz_calloc((size_t)(s->h * s->w), sizeof *s->img);
	double *x = vz_trace_input(t, "N", &got);
	if (!s->img || !x) {
		vz_free(x);
		return s->img ? vz_error_prefix(LM_ERR_ARG, fname) : lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	memcpy(s->img, x, (size_t)(got < s->h * s->w ? got : s->h * s->w) * sizeof *x);
	vz_free(x);
	s->truncated_input = lm_trace_truncated(t);
	double *m = vz_trace_values(t, constant ? "F_c" : "F", constant ? LM_SPACE_CONSTANT : LM_SPACE_GLOBAL, &got);
	s->mask = vz_calloc((size_t)(s->mh * s->mw), sizeof *s->mask);
	if (!m || !s->mask) {
		vz_free(m);
		return vz_error_prefix(LM_ERR_ARG, fname);
	}
	memcpy(s->mask, m, (size_t)(got < s->mh * s->mw ? got : s->mh * s->mw) * sizeof *m);
	vz_free(m);
	return LM_OK;
}

static lm_status demo_input(conv_scene *s, const lm_viz_opts *o, const char *fname)
{
	s->h = vz_opt_int(o, "h", 16);
	s->w = vz_opt_int(o, "w", 16);
	s->mh = s->mw = vz_opt_int(o, "mask", 3);
	s->img = vz_malloc((size_t)(s->h * s->w) * sizeof *s->img);
	s->mask = vz_malloc((size_t)(s->mh * s->mw) * sizeof *s->mask);
	if (!s->img || !s->mask) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	demo_mask(s->mask, s->mh);
	return vzs_demo_values(vz_opt_string(o, "input", "random"), s->h * s->w, s->img, fname);
}

/* Every kernel on the scene's input with its tile (the given run for its own kernel). */
static lm_status run_all(conv_scene *s, const lm_viz_run *have, int have_algo, const char *fname)
{
	for (int a = 0; a < NALGOS; a++) {
		crun *r = &s->runs[a];
		if (have && a == have_algo) {
			if (crun_build(r, have, a, fname) != LM_OK) return lm_last_status();
			continue;
		}
		if (tiled(a) && (s->mh % 2 == 0 || s->mw % 2 == 0)) {
			r->why = WHY_EVEN_MASK;
			continue;
		}
		if (a == TILED_IN && (s->in_h > 32 || s->in_w > 32 || s->in_h * s->in_w > 1024)) {
			r->why = WHY_THREADS;
			continue;
		}
		lm_viz_run run;
		if (vzs_run_conv2d(s->img, s->h, s->w, s->mask, s->mh, s->mw, algos[a], s->tile, &run, fname) != LM_OK)
			return lm_last_status();
		lm_status st = crun_build(r, &run, a, fname);
		vz_run_clear(&run);
		if (st != LM_OK) return st;
	}
	return LM_OK;
}

static lm_status alloc_frame(conv_scene *s, const char *fname)
{
	size_t n = (size_t)(2 * s->h * s->w + s->in_h * s->in_w + s->mh * s->mw);
	s->col = vz_calloc(n, sizeof *s->col);
	s->state = vz_calloc(n, sizeof *s->state);
	s->val = vz_calloc(n, sizeof *s->val);
	s->hatch = vz_calloc(n, sizeof *s->hatch);
	s->count = vz_calloc((size_t)(s->h * s->w), sizeof *s->count);
	if (!s->col || !s->state || !s->val || !s->hatch || !s->count)
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", fname);
	return LM_OK;
}

static void *conv_create(const vz_build *b)
{
	conv_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	const lm_viz_run *traced = vzs_keep_runs(b, s->given, &s->ngiven);
	const lm_viz_run *from = traced ? traced : b->nruns ? &b->runs[0] : NULL;
	lm_status st = LM_OK;
	int first = from ? algo_index(from->algo) : algo_index(vz_opt_string(b->opts, "algo", "tiled-input"));
	if (first < 0) first = TILED_IN;
	s->tile = from ? (int64_t)vz_run_counter(from, "tile", 16) : vz_opt_int(b->opts, "tile", 4);
	if (traced) st = vz_trace_check(traced->trace, b->fname) == LM_OK ? input_from_trace(s, traced, b->fname) : LM_ERR_ARG;
	else st = demo_input(s, b->opts, b->fname);
	s->demo = from && !traced;
	if (st == LM_OK) {
		s->ry = (s->mh - 1) / 2;
		s->rx = (s->mw - 1) / 2;
		s->in_h = s->tile + 2 * s->ry;
		s->in_w = s->tile + 2 * s->rx;
		st = run_all(s, traced, first, b->fname);
	}
	if (st == LM_OK) st = alloc_frame(s, b->fname);
	if (st != LM_OK) {
		conv_destroy(s);
		return NULL;
	}
	for (int a = 0; a < NALGOS; a++) {
		if (!s->runs[a].ok) continue;
		if (a == first) s->variant = s->nvariants;
		s->vmap[s->nvariants++] = a;
	}
	return s;
}

/* ---------------------------------------------------------------- steps */

static const crun *cur_run(const conv_scene *s) { return &s->runs[s->vmap[s->variant]]; }
static int cur_algo(const conv_scene *s) { return s->vmap[s->variant]; }
static int phases(const conv_scene *s) { return tiled(cur_algo(s)) ? 2 : 1; }

static int conv_steps(void *p)
{
	conv_scene *s = p;
	return 1 + cur_run(s)->nblocks * phases(s);
}

/* Step k >= 1 -> the block and its phase (0: load / naive compute, 1: tiled compute). */
static void step_block(const conv_scene *s, int k, int *block, int *phase)
{
	int ph = phases(s);
	*block = (k - 1) / ph;
	*phase = (k - 1) % ph;
	if (ph == 1) *phase = 1; /* the one phase of the untiled kernels computes */
}

static int conv_variants(void *p) { return ((conv_scene *)p)->nvariants; }
static const char *conv_variant_name(void *p, int v) { return algos[((conv_scene *)p)->vmap[v]]; }
static void conv_set_variant(void *p, int v) { ((conv_scene *)p)->variant = v; }
static int conv_initial_variant(void *p) { return ((conv_scene *)p)->variant; }

/* ---------------------------------------------------------------- layout */

static void conv_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	conv_scene *s = p;
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), gap = 2.2f * lh;
	s->top = lh * 3.2f;
	float mid = fmaxf(c->w * 0.24f, 34 * vz_char_width(f, VZ_FONT_SMALL));
	float avail_w = c->w - mid - 2 * gap, avail_h = c->h - s->top - lh * 0.5f;
	float cs = fminf(avail_w / (float)(2 * s->w + 2 * s->rx), avail_h / (float)(s->h + 2 * s->ry));
	s->cs = fmaxf(cs, 0.5f);
	s->csh = fminf(fminf(mid / (float)s->in_w, avail_h * 0.42f / (float)s->in_h), fmaxf(1.6f * s->cs, 26 * c->scale));
	float x = 0;
	s->in_r = vz_r(x + (float)s->rx * s->cs, s->top + (float)s->ry * s->cs, (float)s->w * s->cs, (float)s->h * s->cs);
	x += (float)(s->w + 2 * s->rx) * s->cs + gap;
	s->sh_r = vz_r(x, s->top, (float)s->in_w * s->csh, (float)s->in_h * s->csh);
	s->mask_r = vz_r(x, s->sh_r.y + s->sh_r.h + lh * 2.4f, (float)s->mw * s->csh, (float)s->mh * s->csh);
	s->text_r = vz_r(x, s->mask_r.y + s->mask_r.h + lh * 0.8f, mid, c->h - (s->mask_r.y + s->mask_r.h));
	x += mid + gap;
	s->out_r = vz_r(x, s->top + (float)s->ry * s->cs, (float)s->w * s->cs, (float)s->h * s->cs);
	*ww = fmaxf(c->w, x + s->out_r.w);
	*wh = c->h;
}

/* ---------------------------------------------------------------- colours of a step */

static vz_color state_color(int st)
{
	switch (st) {
	case S_ACTIVE: return vz_th.active;
	case S_HALO: return vz_okabe_ito[VZ_OI_PURPLE];
	case S_GHOST: return vz_th.idle;
	case S_SHARED: return vz_mix(vz_th.path_a, vz_th.bg, 0.62);
	case S_DONE: return vz_mix(vz_th.common, vz_th.bg, 0.5);
	case S_PENDING: return vz_th.pending;
	case S_MASK: return vz_okabe_ito[VZ_OI_SKY];
	default: return vz_th.idle;
	}
}

/* Whether input (r, c) lies in block b's output tile. */
static bool in_out_tile(const conv_scene *s, const crun *r, int b, int64_t row, int64_t col)
{
	int bx = b % r->gx, by = b / r->gx;
	return row >= by * s->tile && row < (by + 1) * s->tile && col >= bx * s->tile && col < (bx + 1) * s->tile;
}

/* The input, output, N_s and mask cells as they stand at step k. */
static void colour_step(conv_scene *s, int k)
{
	const crun *r = cur_run(s);
	int64_t hw = s->h * s->w, nsh = s->in_h * s->in_w;
	uint8_t *in = s->state, *out = in + hw, *sh = out + hw, *mk = sh + nsh;
	double *ov = s->val + hw, *shv = ov + hw;
	memset(s->count, 0, (size_t)hw * sizeof *s->count);
	memset(s->hatch, 0, (size_t)(2 * hw + nsh + s->mh * s->mw) * sizeof *s->hatch);
	for (int64_t i = 0; i < hw; i++) {
		in[i] = S_IDLE;
		out[i] = S_PENDING;
		s->val[i] = s->img[i];
		ov[i] = NAN;
	}
	for (int64_t i = 0; i < s->mh * s->mw; i++) {
		mk[i] = S_MASK;
		s->val[2 * hw + nsh + i] = s->mask[i];
	}
	int b = -1, ph = 0;
	if (k >= 1) step_block(s, k, &b, &ph);
	for (int j = 0; j < r->nblocks && j <= b; j++) { /* outputs of the blocks done, and this one's */
		const cblock *bl = &r->blocks[j];
		if (j == b && ph == 0) break;
		for (int64_t o = bl->ofirst; o < bl->ofirst + bl->ocount; o++) {
			if (r->outs[o] < 0 || r->outs[o] >= hw) continue;
			out[r->outs[o]] = j == b ? S_ACTIVE : S_DONE;
			ov[r->outs[o]] = r->outv[o];
		}
	}
	for (int64_t i = 0; i < nsh; i++) {
		sh[i] = S_PENDING;
		shv[i] = NAN;
	}
	if (b < 0) return;
	const cblock *bl = &r->blocks[b];
	for (int64_t l = bl->first; l < bl->first + bl->count; l++)
		if (r->loads[l] >= 0 && r->loads[l] < hw) s->count[r->loads[l]]++;
	int bx = b % r->gx, by = b / r->gx;
	int64_t row0 = by * s->tile - s->ry, col0 = bx * s->tile - s->rx;
	for (int64_t i = 0; i < hw; i++) {
		if (!s->count[i]) continue;
		bool halo = tiled(cur_algo(s)) && !in_out_tile(s, r, b, i / s->w, i % s->w);
		in[i] = !tiled(cur_algo(s)) || ph == 0 ? (halo ? S_HALO : S_ACTIVE) : S_SHARED;
	}
	if (!tiled(cur_algo(s))) return;
	for (int64_t e = 0; e < nsh; e++) { /* N_s: the input tile (ghost cells hold 0) */
		int64_t row = row0 + e / s->in_w, col = col0 + e % s->in_w;
		bool ghost = row < 0 || row >= s->h || col < 0 || col >= s->w;
		shv[e] = ghost ? 0 : s->img[row * s->w + col];
		s->hatch[2 * hw + e] = ghost;
		sh[e] = ghost ? S_GHOST : ph == 1 ? S_SHARED
		        : (row >= by * s->tile && row < (by + 1) * s->tile && col >= bx * s->tile && col < (bx + 1) * s->tile)
		            ? S_ACTIVE : S_HALO;
	}
}

/* ---------------------------------------------------------------- drawing */

/* The image's range, for its idle cells' greys. */
static void image_range(const conv_scene *s, double *lo, double *hi)
{
	*lo = INFINITY, *hi = -INFINITY;
	for (int64_t i = 0; i < s->h * s->w; i++) *lo = fmin(*lo, s->img[i]), *hi = fmax(*hi, s->img[i]);
	if (!(*hi > *lo)) *hi = *lo + 1;
}

/* The colours of n cells from off by their states; the input's idle cells: the image in greys. */
static void cell_colors(conv_scene *s, int64_t off, int64_t n)
{
	double lo, hi;
	image_range(s, &lo, &hi);
	for (int64_t i = off; i < off + n; i++) {
		s->col[i] = state_color(s->state[i]);
		if (i < s->h * s->w && s->state[i] == S_IDLE)
			s->col[i] = vz_mix(VZ_RGB(246, 246, 244), VZ_RGB(150, 150, 150), (s->img[i] - lo) / (hi - lo));
	}
}

static void draw_matrix(vz_frame *f, conv_scene *s, vzs_grid *g, vz_rect r, int rows, int cols, int64_t off,
                        const char *kind, const char *group, bool values)
{
	cell_colors(s, off, (int64_t)rows * cols);
	vzs_matrix m = {rows, cols, s->col + off, s->val + off, s->state + off, state_names, kind, group, 0,
	                (int32_t)off, values, s->hatch + off};
	vzs_matrix_draw(f, g, r, &m);
}

/* Tile boundaries over an image: where the blocks' output tiles meet. */
static void tile_lines(vz_frame *f, const conv_scene *s, vz_rect r)
{
	vz_color c = vz_fade(vz_th.text, 0.35);
	for (int64_t x = s->tile; x < s->w; x += s->tile)
		vz_line(f, r.x + (float)x * s->cs, r.y, r.x + (float)x * s->cs, r.y + r.h, 1, c);
	for (int64_t y = s->tile; y < s->h; y += s->tile)
		vz_line(f, r.x, r.y + (float)y * s->cs, r.x + r.w, r.y + (float)y * s->cs, 1, c);
	vz_outline(f, r, 1, vz_th.text_dim);
}

/* The current block on the input: ghost cells of its input tile outside the image, the outlines of
 * its output tile and input tile, and the naive kernel's load counts. */
static void draw_block_on_input(vz_frame *f, conv_scene *s, int b, int ph)
{
	const crun *r = cur_run(s);
	int bx = b % r->gx, by = b / r->gx;
	float cs = s->cs;
	vz_rect ot = vz_r(s->in_r.x + (float)(bx * s->tile) * cs, s->in_r.y + (float)(by * s->tile) * cs,
	                  (float)s->tile * cs, (float)s->tile * cs);
	vz_rect it = vz_r(ot.x - (float)s->rx * cs, ot.y - (float)s->ry * cs, (float)s->in_w * cs, (float)s->in_h * cs);
	if (tiled(cur_algo(s)) && ph == 0) /* ghost cells: part of the input tile, outside the image */
		for (int64_t e = 0; e < s->in_h * s->in_w; e++) {
			int64_t row = by * s->tile - s->ry + e / s->in_w, col = bx * s->tile - s->rx + e % s->in_w;
			if (row >= 0 && row < s->h && col >= 0 && col < s->w) continue;
			vz_rect g = vz_r(s->in_r.x + (float)col * cs, s->in_r.y + (float)row * cs, cs, cs);
			vz_hatch(f, g, vz_th.idle, vz_th.hatch);
			vz_cell *c = vz_cell_add(f, g, "ghost");
			c->group = algos[cur_algo(s)];
			c->state = "ghost";
			c->color = vz_th.idle;
			c->block = b;
			c->row = (int32_t)row;
			c->col = (int32_t)col;
		}
	vz_layer(f);
	if (tiled(cur_algo(s))) vz_dashed(f, it.x, it.y, it.x + it.w, it.y, 2, 5, vz_th.text);
	if (tiled(cur_algo(s))) {
		vz_dashed(f, it.x + it.w, it.y, it.x + it.w, it.y + it.h, 2, 5, vz_th.text);
		vz_dashed(f, it.x, it.y + it.h, it.x + it.w, it.y + it.h, 2, 5, vz_th.text);
		vz_dashed(f, it.x, it.y, it.x, it.y + it.h, 2, 5, vz_th.text);
	}
	vz_outline(f, ot, 2.5f, vz_th.highlight);
	if (tiled(cur_algo(s)) || !vz_text_fits(f, VZ_FONT_TINY, "x9", cs * 0.9f)) return;
	for (int64_t i = 0; i < s->h * s->w; i++) /* naive: how often this block loaded each cell */
		if (s->count[i] > 1)
			vz_textf(f, s->in_r.x + (float)(i % s->w + 1) * cs - cs * 0.05f, s->in_r.y + (float)(i / s->w) * cs,
			         VZ_FONT_TINY, VZ_ALIGN_RIGHT, vz_th.text, "x%d", s->count[i]);
}

static void draw_legend(vz_frame *f, const conv_scene *s)
{
	float x = 0;
	bool t = tiled(cur_algo(s));
	x = vzs_legend(f, x, 0, vz_th.active, false,
	               t ? vz_tr("loaded now (output tile)", "正在加载（输出分块）") : vz_tr("read now", "正在读取"));
	if (t) x = vzs_legend(f, x, 0, state_color(S_HALO), false, vz_tr("halo cell", "光环单元"));
	if (t) x = vzs_legend(f, x, 0, vz_th.idle, true, vz_tr("ghost cell (0, never loaded)", "幽灵单元（为 0，从不加载）"));
	if (t) x = vzs_legend(f, x, 0, state_color(S_SHARED), false, vz_tr("in shared memory", "在共享内存中"));
	x = vzs_legend(f, x, 0, state_color(S_DONE), false, vz_tr("output done", "输出已完成"));
	vzs_legend(f, x, 0, state_color(S_MASK), false,
	           cur_algo(s) == NAIVE ? vz_tr("mask (global memory)", "掩码（全局内存）") : vz_tr("mask (constant memory)", "掩码（常量内存）"));
}

/* The loads of the whole run and of the current block, against the textbook's formulas. */
static void draw_numbers(vz_frame *f, conv_scene *s, int b)
{
	const crun *r = cur_run(s);
	int a = cur_algo(s);
	float lh = vz_text_height(f, VZ_FONT_SMALL), x = s->text_r.x, y0 = s->text_r.y, y = y0;
	double m2 = (double)(s->mh * s->mw), t2 = (double)(s->tile * s->tile), i2 = (double)(s->in_h * s->in_w);
	double per_out = vz_run_counter(&r->run, "global_loads_per_output", NAN);
	double formula = a == NAIVE ? 2 * m2 : a == CONSTANT ? m2 : i2 / t2;
	char *k = s->numbers;
	size_t kc = sizeof s->numbers;
	k[0] = '\0';
	const char *textbook = vz_tr("textbook", "教科书公式");
	vzs_text_line(f, k, kc, x, y, vz_th.text, "%s", vz_tr("global loads per output pixel:", "每个输出像素的全局内存读取："));
	vzs_text_line(f, k, kc, x, y += lh, vz_th.text, "  %.3g %s", per_out, vz_tr("emulated, all blocks", "模拟，全部线程块"));
	vzs_text_line(f, k, kc, x, y += lh, vz_th.text_dim, "  %.3g %s: %s", formula, textbook,
	              a == NAIVE ? "2(2r+1)^2" : a == CONSTANT ? "(2r+1)^2" : "(T+2r)^2/T^2");
	double nload = (double)r->nloads, adds = vz_run_counter(&r->run, "adds", 0);
	double reuse = nload > 0 ? adds / nload : NAN, reuse_tb = tiled(a) ? t2 * m2 / i2 : 1;
	vzs_text_line(f, k, kc, x, y += lh * 1.3f, vz_th.text, "%s", vz_tr("uses of each loaded input:", "每个载入的输入被使用："));
	vzs_text_line(f, k, kc, x, y += lh, vz_th.text, "  %.3g %s", reuse,
	              vz_tr("emulated (mults / N loads)", "模拟（乘法数 / N 的读取数）"));
	vzs_text_line(f, k, kc, x, y += lh, vz_th.text_dim, "  %.3g %s: %s", reuse_tb, textbook,
	              tiled(a) ? "T^2(2r+1)^2/(T+2r)^2" : vz_tr("1 (no reuse)", "1（无复用）"));
	vzs_text_line(f, k, kc, x, y += lh, vz_th.text_dim, "  %s",
	              vz_tr("(interior tiles; ghosts are not loaded)", "（内部分块；幽灵单元不加载）"));
	if (b >= 0) {
		const cblock *bl = &r->blocks[b];
		if (vz_zh())
			vzs_text_line(f, k, kc, x, y += lh * 1.3f, vz_th.text, "本线程块：读取 N %lld 次，算出 %lld 个输出",
			              (long long)bl->count, (long long)bl->ocount);
		else
			vzs_text_line(f, k, kc, x, y += lh * 1.3f, vz_th.text, "this block: %lld loads of N for %lld outputs",
			              (long long)bl->count, (long long)bl->ocount);
		if (!bl->complete)
			vzs_text_line(f, k, kc, x, y += lh, vz_th.highlight, "%s",
			              vz_tr("(the trace was truncated inside this block)", "（trace 在本线程块内被截断）"));
	}
	vz_cell *c = vz_cell_add(f, vz_r(x, y0, s->text_r.w, y + lh - y0), "loads"); /* the hover repeats them */
	c->group = algos[a];
	c->state = "emulated";
	c->value = per_out;
	c->has_value = !isnan(per_out);
}

static void draw_arrows(vz_frame *f, const conv_scene *s, int b, int ph)
{
	const crun *r = cur_run(s);
	int bx = b % r->gx, by = b / r->gx;
	float cs = s->cs;
	float ix = s->in_r.x + ((float)(bx * s->tile) + (float)s->tile * 0.5f) * cs;
	float iy = s->in_r.y + ((float)(by * s->tile) + (float)s->tile * 0.5f) * cs;
	float ox = s->out_r.x + (float)(bx * s->tile) * cs;
	float oy = s->out_r.y + ((float)(by * s->tile) + (float)s->tile * 0.5f) * cs;
	vz_layer(f);
	if (tiled(cur_algo(s)) && ph == 0)
		vz_arrow(f, ix, iy, s->sh_r.x - 4, s->sh_r.y + s->sh_r.h / 2, 2, 10, vz_th.arrow_now);
	if (ph == 1) {
		float sx = tiled(cur_algo(s)) ? s->sh_r.x + s->sh_r.w : ix, sy = tiled(cur_algo(s)) ? s->sh_r.y + s->sh_r.h / 2 : iy;
		vz_arrow(f, sx + 4, sy, ox, oy, 2, 10, vz_th.arrow_now);
		vz_arrow(f, s->mask_r.x + s->mask_r.w + 4, s->mask_r.y + s->mask_r.h / 2, ox, oy, 1.5f, 8, vz_fade(vz_th.arrow_now, 0.6));
	}
}

static void conv_draw(void *p, vz_frame *f)
{
	conv_scene *s = p;
	s->t = f->t;
	int k = (int)floor(f->t + 1e-9), b = -1, ph = 0;
	if (k >= 1) step_block(s, k, &b, &ph);
	colour_step(s, k);
	int64_t hw = s->h * s->w, nsh = s->in_h * s->in_w;
	float lh = vz_text_height(f, VZ_FONT_SMALL);
	draw_legend(f, s);
	const char *alg = algos[cur_algo(s)];
	VZ_TEXTF_TR(f, s->in_r.x - (float)s->rx * s->cs, s->top - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	            "N: input %lld x %lld (global memory)", "N：输入 %lld × %lld（全局内存）", (long long)s->h, (long long)s->w);
	VZ_TEXTF_TR(f, s->out_r.x, s->top - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	            "P: output, %lld x %lld tiles", "P：输出，%lld × %lld 分块", (long long)s->tile, (long long)s->tile);
	draw_matrix(f, s, &s->g_in, s->in_r, (int)s->h, (int)s->w, 0, "input", alg, true);
	draw_matrix(f, s, &s->g_out, s->out_r, (int)s->h, (int)s->w, hw, "output", alg, true);
	tile_lines(f, s, s->in_r);
	tile_lines(f, s, s->out_r);
	if (tiled(cur_algo(s))) {
		VZ_TEXTF_TR(f, s->sh_r.x, s->top - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
		            "N_s: shared memory, %lld x %lld", "N_s：共享内存，%lld × %lld", (long long)s->in_h, (long long)s->in_w);
		draw_matrix(f, s, &s->g_sh, s->sh_r, (int)s->in_h, (int)s->in_w, 2 * hw, "shared", alg, true);
		vz_outline(f, s->sh_r, 1, vz_th.text_dim);
	} else {
		vz_text_draw(f, s->sh_r.x, s->top - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		             vz_tr("no shared memory: every thread reads", "没有共享内存：每个线程"));
		vz_text_draw(f, s->sh_r.x, s->top - lh * 0.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text_dim,
		             vz_tr("its neighbourhood from global memory", "从全局内存读取自己的邻域"));
	}
	if (cur_algo(s) == NAIVE)
		VZ_TEXTF_TR(f, s->mask_r.x, s->mask_r.y - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
		            "F: mask %lld x %lld (global)", "F：掩码 %lld × %lld（全局）", (long long)s->mh, (long long)s->mw);
	else
		VZ_TEXTF_TR(f, s->mask_r.x, s->mask_r.y - lh * 1.3f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
		            "F_c: mask %lld x %lld (constant)", "F_c：掩码 %lld × %lld（常量）", (long long)s->mh, (long long)s->mw);
	draw_matrix(f, s, &s->g_mask, s->mask_r, (int)s->mh, (int)s->mw, 2 * hw + nsh, "mask", alg, true);
	if (b >= 0) {
		draw_block_on_input(f, s, b, ph);
		draw_arrows(f, s, b, ph);
	}
	draw_numbers(f, s, b);
}

/* ---------------------------------------------------------------- text */

static void conv_title(void *p, char *buf, size_t cap)
{
	conv_scene *s = p;
	const crun *r = cur_run(s);
	VZ_SNPRINTF_TR(buf, cap, "2-D convolution: %s, %lld x %lld image, %lld x %lld mask, %d x %d blocks of %d x %d threads%s",
	               "二维卷积：%s，%lld × %lld 图像，%lld × %lld 掩码，%d × %d 个线程块，每块 %d × %d 个线程%s",
	               algos[cur_algo(s)], (long long)s->h, (long long)s->w, (long long)s->mh, (long long)s->mw, r->gx,
	               r->gy, r->tx, r->ty,
	               s->demo ? vz_tr(" (emulated demonstration; your run has no trace)", "（模拟演示；你的运行没有 trace）") : "");
}

static void conv_step_label(void *p, int step, char *buf, size_t cap)
{
	conv_scene *s = p;
	const crun *r = cur_run(s);
	int a = cur_algo(s);
	if (step == 0) {
		VZ_SNPRINTF_TR(buf, cap, "one thread per %s pixel; blocks run one after another here (-> to start)",
		               "每个%s像素一个线程；这里线程块依次运行（按 → 开始）",
		               a == TILED_IN ? vz_tr("input-tile", "输入分块") : vz_tr("output", "输出"));
		return;
	}
	int b, ph;
	step_block(s, step, &b, &ph);
	const cblock *bl = &r->blocks[b];
	int bx = b % r->gx, by = b / r->gx;
	if (tiled(a) && ph == 0) {
		int64_t ghosts = s->in_h * s->in_w - bl->count;
		VZ_SNPRINTF_TR(buf, cap, "block (%d, %d) loads its %lld x %lld input tile into N_s: %lld global loads, %lld ghost "
		               "cells", "线程块 (%d, %d) 把 %lld × %lld 的输入分块载入 N_s：%lld 次全局读取，%lld 个幽灵单元", bx, by,
		               (long long)s->in_h, (long long)s->in_w, (long long)bl->count, (long long)(ghosts > 0 ? ghosts : 0));
	} else if (tiled(a)) {
		VZ_SNPRINTF_TR(buf, cap, "block (%d, %d) computes %lld outputs from N_s and F_c%s",
		               "线程块 (%d, %d) 用 N_s 和 F_c 算出 %lld 个输出%s", bx, by, (long long)bl->ocount,
		               a == TILED_IN ? vz_tr("; its halo threads sit idle", "；负责光环单元的线程空闲")
		                             : vz_tr("; every thread computes", "；每个线程都参与计算"));
	} else {
		VZ_SNPRINTF_TR(buf, cap, "block (%d, %d): %lld threads load %lld input and %lld mask values (%s)",
		               "线程块 (%d, %d)：%lld 个线程读取 %lld 个输入值和 %lld 个掩码值（%s）", bx, by,
		               (long long)bl->ocount, (long long)bl->count, (long long)bl->mask_loads,
		               a == NAIVE ? vz_tr("global memory", "全局内存") : vz_tr("mask: constant memory", "掩码在常量内存"));
	}
}

static void conv_counters(void *p, vz_panel *pn)
{
	conv_scene *s = p;
	static const char *const names[] = {"global_loads", "global_loads_per_output", "constant_loads",
	                                    "shared_loads", "adds", "idle_lanes", "simd_efficiency",
	                                    "modelled_cycles", "time_ms", NULL};
	for (int v = 0; v < s->nvariants; v++) vzs_panel_add(pn, algos[s->vmap[v]], &s->runs[s->vmap[v]].run, names);
	vzs_panel_measured(pn, s->given, s->ngiven, names);
	vz_panel_note(pn, "%s", vz_tr("global_loads_per_output: all global loads (image and, naive, mask) / outputs; "
	                              "idle_lanes: lanes that multiply ghost zeros or sit out (halo threads)",
	                              "global_loads_per_output：全部全局读取（图像，naive 还有掩码）/ 输出数；"
	                              "idle_lanes：乘幽灵单元的 0 或闲置（光环线程）的通道"));
	for (int a = 0; a < NALGOS; a++) {
		if (s->runs[a].ok || s->runs[a].why == WHY_NONE) continue;
		if (s->runs[a].why == WHY_EVEN_MASK)
			VZ_NOTE_TR(pn, "not shown: %s needs odd mask sides (a halo of r cells each side)",
			           "未显示：%s 需要奇数边长的掩码（每边 r 个光环单元）", algos[a]);
		else
			VZ_NOTE_TR(pn, "not shown: tiled-input needs (tile + 2r)^2 <= 1024 threads: tile %lld with a %lld x %lld "
			           "mask makes %lld x %lld", "未显示：tiled-input 需要 (tile + 2r)^2 <= 1024 个线程：分块 %lld 配 "
			           "%lld × %lld 的掩码得到 %lld × %lld", (long long)s->tile, (long long)s->mh, (long long)s->mw,
			           (long long)s->in_h, (long long)s->in_w);
	}
	if (s->truncated_input)
		vz_panel_note(pn, "%s", vz_tr("the trace was truncated: the other kernels run on the image it kept (0 where it lost it)",
		                              "trace 被截断：其他内核在它保留下来的图像上运行（丢失处为 0）"));
}

static void conv_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	conv_scene *s = p;
	int64_t hw = s->h * s->w, nsh = s->in_h * s->in_w;
	if (strcmp(c->kind, "loads") == 0) {
		snprintf(buf, cap, "%s", s->numbers);
		return;
	}
	if (strcmp(c->kind, "ghost") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "ghost cell (%d, %d): outside the image\nthe input tile holds 0 here; it is never loaded",
		               "幽灵单元 (%d, %d)：在图像之外\n输入分块在这里为 0，它从不被加载", c->row, c->col);
		return;
	}
	int64_t i = c->index >= 0 ? c->index : -1;
	if (c->rows > 0 && c->cols > 0) { /* an element of a matrix drawn as an image */
		colour_step(s, (int)floor(s->t + 1e-9));
		int64_t off = c->tag, el = (int64_t)c->row * c->cols + c->col;
		cell_colors(s, off, (int64_t)c->rows * c->cols);
		vzs_matrix m = {c->rows, c->cols, s->col + off, s->val + off, s->state + off, state_names, c->kind, c->group,
		                0, c->tag, true, NULL};
		vzs_matrix_fill(c, &m, el);
		i = el;
	}
	if (i < 0) return;
	char v[32];
	if (strcmp(c->kind, "input") == 0 && i < hw) {
		VZ_SNPRINTF_TR(buf, cap, "N[%lld][%lld] = %s (global memory)", "N[%lld][%lld] = %s（全局内存）", (long long)(i / s->w),
		               (long long)(i % s->w), vzs_short(v, sizeof v, s->img[i]));
		if (s->count[i] && vz_zh()) vz_append(buf, cap, "\n本线程块加载了 %d 次", s->count[i]);
		else if (s->count[i]) vz_append(buf, cap, "\nloaded %d time%s by this block", s->count[i], s->count[i] > 1 ? "s" : "");
		vz_append(buf, cap, "\n%s", state_label(c->state));
	} else if (strcmp(c->kind, "output") == 0 && i < hw) {
		snprintf(buf, cap, "P[%lld][%lld]%s%s", (long long)(i / s->w), (long long)(i % s->w),
		         c->has_value ? " = " : vz_tr(": not computed yet", "：尚未计算"), c->has_value ? vzs_short(v, sizeof v, c->value) : "");
	} else if (strcmp(c->kind, "shared") == 0 && i < nsh) {
		VZ_SNPRINTF_TR(buf, cap, "N_s[%lld][%lld] (shared memory): %s", "N_s[%lld][%lld]（共享内存）：%s", (long long)(i / s->in_w),
		               (long long)(i % s->in_w), state_label(c->state));
	} else if (strcmp(c->kind, "mask") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "mask[%lld][%lld] = %s (%s memory)", "mask[%lld][%lld] = %s（%s内存）", (long long)(i / s->mw),
		               (long long)(i % s->mw), vzs_short(v, sizeof v, s->mask[i < s->mh * s->mw ? i : 0]),
		               cur_algo(s) == NAIVE ? vz_tr("global", "全局") : vz_tr("constant", "常量"));
	}
}

static const vz_option conv_options[] = {
	{"algo", VZ_OPT_CHOICE, 0, 0, "naive constant tiled tiled-input tiled-output", "tiled-input", "the kernel shown first"},
	{"h", VZ_OPT_INT, 1, 128, NULL, "16", "image rows"},
	{"w", VZ_OPT_INT, 1, 128, NULL, "16", "image columns"},
	{"mask", VZ_OPT_INT, 1, 7, NULL, "3", "mask side (odd for the tiled kernels)"},
	{"tile", VZ_OPT_INT, 1, 32, NULL, "4", "output tile width"},
	{"input", VZ_OPT_CHOICE, 0, 0, "random arange ones pmpp", "random", "the image's values"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_conv = {
	.name = "conv",
	.summary = "tiled 2-D convolution: output tile, halo and ghost cells, the input tile in shared memory, the mask in constant memory",
	.patterns = "conv2d",
	.options = conv_options,
	.create = conv_create,
	.destroy = conv_destroy,
	.steps = conv_steps,
	.variants = conv_variants,
	.variant_name = conv_variant_name,
	.set_variant = conv_set_variant,
	.initial_variant = conv_initial_variant,
	.layout = conv_layout,
	.draw = conv_draw,
	.title = conv_title,
	.step_label = conv_step_label,
	.counters = conv_counters,
	.describe = conv_describe,
};
