/*
 * dlp.c — the systolic array and its scratchpads, one demand row (one cycle) at a time.
 *
 * A run walks the folds of a layer in SCALE-Sim's order (column folds outside, row folds inside);
 * each fold is fold_rows cycles of demands — which ifmap and filter words the array's edges read
 * and how many ofmap words it writes in that cycle — computed from the dataflow's skew without
 * building the matrices (geometry below). The demands go to three buffers (memory below): two read
 * buffers, whose prefetch order is the fold's operand matrix read diagonal by diagonal (or row by
 * row, where SCALE-Sim does so), and a write buffer draining to DRAM. The model and its quirks are
 * SCALE-Sim's and are kept on purpose, so that every number equals its own (docs/dlp.md lists
 * them: a negative "stall" when a prefetch lands early, partial lines counted whole in a drain,
 * the OS ofmap write count's extra R + C per fold).
 * Read next: include/lumen/dlp.h (the contract), docs/dlp.md, lua/lumen/dlp.lua (the Lua API).
 */
#include "lumen/dlp.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- geometry */

typedef struct {
	lm_dlp_config c;
	lm_dlp_layer l;
	int64_t R, C;             /* array rows, columns */
	int64_t M, N, K, Eh, Ew;  /* GEMM view; output height, width */
	int64_t Sr, Sc, T, rf, cf, fold_rows;
	/* an ifmap address is pofs[p] + kofs[k] (valid while py[p] + ky[k] < H and px[p] + kx[k] < W) */
	int64_t *pofs, *kofs;
	int32_t *py, *px, *ky, *kx;
} geo;

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t ifmap_addr(const geo *g, int64_t p, int64_t k)
{
	if (g->py[p] + g->ky[k] >= g->l.ifmap_h || g->px[p] + g->kx[k] >= g->l.ifmap_w)
		return -1; /* a window hanging over the edge (see geo_init) */
	return g->pofs[p] + g->kofs[k];
}

static void geo_free(geo *g)
{
	free(g->pofs), free(g->kofs), free(g->py), free(g->px), free(g->ky), free(g->kx);
	g->pofs = g->kofs = NULL, g->py = g->px = g->ky = g->kx = NULL;
}

static lm_status geo_tables(geo *g)
{
	g->pofs = malloc((size_t)g->M * sizeof *g->pofs);
	g->kofs = malloc((size_t)g->K * sizeof *g->kofs);
	g->py = malloc((size_t)g->M * sizeof *g->py);
	g->px = malloc((size_t)g->M * sizeof *g->px);
	g->ky = malloc((size_t)g->K * sizeof *g->ky);
	g->kx = malloc((size_t)g->K * sizeof *g->kx);
	if (!g->pofs || !g->kofs || !g->py || !g->px || !g->ky || !g->kx) {
		geo_free(g);
		return lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
	}
	int64_t W = g->l.ifmap_w, Ch = g->l.channels, s = g->l.stride, fwc = g->l.filter_w * Ch;
	for (int64_t p = 0; p < g->M; p++) {
		int64_t y = p / g->Ew * s, x = p % g->Ew * s;
		g->py[p] = (int32_t)y, g->px[p] = (int32_t)x;
		g->pofs[p] = (y * W + x) * Ch + g->c.ifmap_offset;
	}
	for (int64_t k = 0; k < g->K; k++) {
		int64_t y = k / fwc, rem = k % fwc, x = rem / Ch, ch = rem % Ch;
		g->ky[k] = (int32_t)y, g->kx[k] = (int32_t)x;
		g->kofs[k] = (y * W + x) * Ch + ch;
	}
	return LM_OK;
}

static int64_t filter_addr(const geo *g, int64_t k, int64_t n) { return n * g->K + k + g->c.filter_offset; }

static lm_status geo_init(geo *g, const lm_dlp_config *c, const lm_dlp_layer *l)
{
	static const char *fn = "dlp.run";
	memset(g, 0, sizeof *g);
	g->c = *c;
	g->l = *l;
	if (c->rows < 1 || c->cols < 1)
		return lm_set_error(LM_ERR_ARG, "%s: the array must have at least 1 row and 1 column (rows=%lld, cols=%lld)",
		                    fn, (long long)c->rows, (long long)c->cols);
	if (c->rows > 4096 || c->cols > 4096)
		return lm_set_error(LM_ERR_ARG, "%s: rows=%lld, cols=%lld: at most 4096 each", fn, (long long)c->rows,
		                    (long long)c->cols);
	const int64_t kb[3] = {c->ifmap_kb, c->filter_kb, c->ofmap_kb};
	static const char *const kbname[3] = {"ifmap_sram_kb", "filter_sram_kb", "ofmap_sram_kb"};
	for (int i = 0; i < 3; i++)
		if (kb[i] < 1 || kb[i] > (INT64_C(1) << 30))
			return lm_set_error(LM_ERR_ARG, "%s: %s=%lld: an SRAM needs at least 1 KiB (and at most 2^30)", fn,
			                    kbname[i], (long long)kb[i]);
	if (c->user_bandwidth && (c->bandwidth < 1 || c->bandwidth > (INT64_C(1) << 20)))
		return lm_set_error(LM_ERR_ARG, "%s: bandwidth=%lld words per cycle: must be between 1 and 2^20", fn,
		                    (long long)c->bandwidth);
	if (c->banks < 0 || c->banks > 4096 || (c->banks > 0 && (c->ports < 1 || c->ports > 64)))
		return lm_set_error(LM_ERR_ARG, "%s: banks=%lld, ports=%lld: banks 0..4096, ports 1..64 per bank", fn,
		                    (long long)c->banks, (long long)c->ports);
	const int64_t d[6] = {l->ifmap_h, l->ifmap_w, l->filter_h, l->filter_w, l->channels, l->filters};
	static const char *const dname[6] = {"ifmap_h", "ifmap_w", "filter_h", "filter_w", "channels", "filters"};
	for (int i = 0; i < 6; i++)
		if (d[i] < 1 || d[i] > (INT64_C(1) << 24))
			return lm_set_error(LM_ERR_ARG, "%s: layer %s=%lld: must be between 1 and 2^24", fn, dname[i],
			                    (long long)d[i]);
	if (l->stride < 1 || l->stride > 1024)
		return lm_set_error(LM_ERR_ARG, "%s: layer stride=%lld: must be between 1 and 1024", fn, (long long)l->stride);
	if (l->filter_h > l->ifmap_h || l->filter_w > l->ifmap_w)
		return lm_set_error(LM_ERR_ARG, "%s: the filter (%lldx%lld) is larger than its input (%lldx%lld)", fn,
		                    (long long)l->filter_h, (long long)l->filter_w, (long long)l->ifmap_h,
		                    (long long)l->ifmap_w);
	g->R = c->rows;
	g->C = c->cols;
	/* SCALE-Sim rounds the output size up: the last window may hang over the input's edge, and
	 * the words it would read there are no requests (addresses -1). */
	g->Eh = cdiv(l->ifmap_h - l->filter_h + l->stride, l->stride);
	g->Ew = cdiv(l->ifmap_w - l->filter_w + l->stride, l->stride);
	g->M = g->Eh * g->Ew;
	g->N = l->filters;
	g->K = l->filter_h * l->filter_w * l->channels;
	const int64_t lim = INT32_MAX;
	if (g->K > lim / g->M || g->K > lim / g->N || g->M > lim / g->N ||
	    l->ifmap_h * l->ifmap_w > lim / l->channels)
		return lm_set_error(LM_ERR_ARG, "%s: the layer's operand matrices (M=%lld, N=%lld, K=%lld) exceed 2^31 elements",
		                    fn, (long long)g->M, (long long)g->N, (long long)g->K);
	switch (c->dataflow) {
	case LM_DLP_OS: g->Sr = g->M, g->Sc = g->N, g->T = g->K; break;
	case LM_DLP_WS: g->Sr = g->K, g->Sc = g->N, g->T = g->M; break;
	case LM_DLP_IS: g->Sr = g->K, g->Sc = g->M, g->T = g->N; break;
	default: return lm_set_error(LM_ERR_ARG, "%s: unknown dataflow %d", fn, (int)c->dataflow);
	}
	g->rf = cdiv(g->Sr, g->R);
	g->cf = cdiv(g->Sc, g->C);
	g->fold_rows = c->dataflow == LM_DLP_OS ? g->T + g->R + g->C - 2 : 2 * g->R + g->C + g->T - 2;
	if (g->rf * g->cf > lim / g->fold_rows)
		return lm_set_error(LM_ERR_ARG, "%s: %lld folds of %lld cycles: too many to simulate", fn,
		                    (long long)(g->rf * g->cf), (long long)g->fold_rows);
	return LM_OK;
}

/*
 * The demands of cycle t of fold (fr, fc): ifmap and filter addresses in the order of the array's
 * edge, and the number of ofmap words written. Derived from SCALE-Sim's fold matrices: a block of
 * an operand matrix, padded to the array, framed by idle rows and skewed one cycle per column.
 */
static void demand_row(const geo *g, int64_t fr, int64_t fc, int64_t t, int64_t *ia, int *ni, int64_t *fa,
                       int *nf, int *no)
{
	int64_t R = g->R, C = g->C, T = g->T;
	int a = 0, b = 0, o = 0;
	switch (g->c.dataflow) {
	case LM_DLP_OS:
		for (int64_t c = 0; c < R; c++) { /* row c of the array gets pixel fr*R+c, window t-c */
			int64_t k = t - c, p = fr * R + c;
			if (k >= 0 && k < T && p < g->M && (ia[a] = ifmap_addr(g, p, k)) >= 0) a++;
		}
		for (int64_t c = 0; c < C; c++) {
			int64_t k = t - c, n = fc * C + c;
			if (k >= 0 && k < T && n < g->N) fa[b++] = filter_addr(g, k, n);
		}
		for (int64_t c = 0; c < C; c++) { /* the outputs leave bottom row first */
			int64_t u = t - c - (T - 1), p = fr * R + R - 1 - u, n = fc * C + c;
			if (u >= 0 && u < R && p < g->M && n < g->N) o++;
		}
		break;
	case LM_DLP_WS:
		for (int64_t c = 0; c < R; c++) {
			int64_t u = t - c - R, k = fr * R + c;
			if (u >= 0 && u < T && k < g->K && (ia[a] = ifmap_addr(g, u, k)) >= 0) a++;
		}
		if (t < R) { /* the weights shift in, last row first */
			int64_t k = fr * R + R - 1 - t;
			for (int64_t c = 0; c < C && k < g->K; c++) {
				int64_t n = fc * C + c;
				if (n < g->N) fa[b++] = filter_addr(g, k, n);
			}
		}
		for (int64_t c = 0; c < C; c++) {
			int64_t u = t - c - (2 * R - 1), n = fc * C + c;
			if (u >= 0 && u < T && n < g->N) o++;
		}
		break;
	case LM_DLP_IS:
		if (t < R) { /* the inputs shift in, last row first */
			int64_t k = fr * R + R - 1 - t;
			for (int64_t c = 0; c < C && k < g->K; c++) {
				int64_t p = fc * C + c;
				if (p < g->M && (ia[a] = ifmap_addr(g, p, k)) >= 0) a++;
			}
		}
		for (int64_t r = 0; r < R; r++) {
			int64_t u = t - r - R, k = fr * R + r;
			if (u >= 0 && u < T && k < g->K) fa[b++] = filter_addr(g, k, u);
		}
		for (int64_t c = 0; c < C; c++) {
			int64_t u = t - c - (2 * R - 1), p = fc * C + c;
			if (u >= 0 && u < T && p < g->M) o++;
		}
		break;
	}
	*ni = a, *nf = b, *no = o;
}

/* The prefetch order of an operand: SCALE-Sim's prefetch matrix (the folds' blocks stacked, padded
 * to the array) read by anti-diagonals (bottom row first) or by rows. Calls fn for each word. */
typedef struct {
	int64_t rows, cols, period; /* grid; rows per fold block */
	int diag;
} pf_grid;

static pf_grid pf_shape(const geo *g, int which)
{
	pf_grid s = {0, 0, 0, 1};
	switch (g->c.dataflow) {
	case LM_DLP_OS:
		if (which == LM_DLP_IFMAP) s.rows = g->T * g->rf, s.cols = g->R, s.period = g->T;
		else s.rows = g->T * g->cf, s.cols = g->C, s.period = g->T;
		break;
	case LM_DLP_WS:
		if (which == LM_DLP_IFMAP) s.rows = g->T * g->rf, s.cols = g->R, s.period = g->T;
		else s.rows = g->K * g->cf, s.cols = g->C, s.period = g->K, s.diag = 0;
		break;
	case LM_DLP_IS:
		if (which == LM_DLP_IFMAP) s.rows = g->K * g->cf, s.cols = g->C, s.period = g->K, s.diag = 0;
		else s.rows = g->T * g->rf, s.cols = g->R, s.period = g->T;
		break;
	}
	return s;
}

static int64_t pf_elem(const geo *g, int which, int64_t row, int64_t col, int64_t period)
{
	int64_t f = row / period, i = row % period;
	switch (g->c.dataflow) {
	case LM_DLP_OS:
		if (which == LM_DLP_IFMAP) { int64_t p = f * g->R + col; return p < g->M ? ifmap_addr(g, p, i) : -1; }
		else { int64_t n = f * g->C + col; return n < g->N ? filter_addr(g, i, n) : -1; }
	case LM_DLP_WS:
		if (which == LM_DLP_IFMAP) { int64_t k = f * g->R + col; return k < g->K ? ifmap_addr(g, i, k) : -1; }
		else { int64_t n = f * g->C + col; return n < g->N ? filter_addr(g, i, n) : -1; }
	case LM_DLP_IS:
		if (which == LM_DLP_IFMAP) { int64_t p = f * g->C + col; return p < g->M ? ifmap_addr(g, p, i) : -1; }
		else { int64_t k = f * g->R + col; return k < g->K ? filter_addr(g, k, i) : -1; }
	}
	return -1;
}

typedef void (*pf_fn)(void *ctx, int64_t addr);

/* Stops early (the caller checks lm_interrupted()) when Ctrl-C asks. */
static void pf_walk(const geo *g, int which, pf_fn fn, void *ctx)
{
	pf_grid s = pf_shape(g, which);
	if (!s.diag) {
		for (int64_t r = 0; r < s.rows && !lm_interrupted(); r++)
			for (int64_t c = 0; c < s.cols; c++) {
				int64_t a = pf_elem(g, which, r, c, s.period);
				if (a >= 0) fn(ctx, a);
			}
		return;
	}
	for (int64_t d = 0; d < s.rows + s.cols - 1 && !lm_interrupted(); d++) {
		int64_t hi = d < s.rows - 1 ? d : s.rows - 1, lo = d - s.cols + 1 > 0 ? d - s.cols + 1 : 0;
		for (int64_t r = hi; r >= lo; r--) {
			int64_t a = pf_elem(g, which, r, d - r, s.period);
			if (a >= 0) fn(ctx, a);
		}
	}
}

/* ---------------------------------------------------------------- events */

static void ev_add(lm_dlp_events *ev, int kind, int64_t start, int64_t end, int64_t words)
{
	if (!ev) return;
	if (ev->n >= ev->cap) { ev->dropped++; return; }
	ev->ev[ev->n++] = (lm_dlp_event){kind, start, end, words};
}

/* ---------------------------------------------------------------- memory: read buffers */

/*
 * USER mode (SCALE-Sim's read_buffer): the prefetch order is cut into lines of ceil(words/100)
 * words; the active half is a window of lines over them (circular), the DMA's next prefetch moves
 * it on by the prefetch half's lines. A word is a hit when one of its lines is in the window; the
 * lines each address appears in are kept sorted (CSR), so a hit is a binary search.
 */
/* The lines an address appears in are lines[off .. off + n), ascending; line (at index cursor) is
 * where the last hit was found — checked first, so a hit mostly costs one memory access. */
typedef struct {
	int32_t off, n, cursor, line; /* bounded: an operand matrix has at most 2^31 words (geo_init) */
} occ;

typedef struct {
	int user;
	int which;
	int64_t base, size;
	/* USER */
	occ *occ;       /* per address: its list of lines, and where its last hit was */
	int32_t *lines;
	int64_t L, A, P, F, bw, active_size, prefetch_size, eps;
	int64_t s, e, last, nacc, dmin, dmax;
	int started;
	/* CALC (SCALE-Sim's ReadBufferEstimateBw) */
	int32_t *last_set;
	int64_t I, nA, nP, cur, elems, rs, re, ps, pe, lps, lpe, first_cycle, bw_default;
	int first_seen, done, traced;
	int64_t *set_size, nsets, capsets;
	/* bank conflicts */
	int64_t bank_cycles, bank_max;
} rbuf;

typedef struct {
	rbuf *b;
	int32_t *seq; /* the prefetch order, as addresses less the base */
	int64_t k;
} build_ctx;

static void build_seq(void *ctx, int64_t a)
{
	build_ctx *x = ctx;
	int32_t i = (int32_t)(a - x->b->base);
	x->seq[x->k++] = i;
	x->b->occ[i].n++;
}

static lm_status rbuf_init(rbuf *b, const geo *g, int which, int64_t total_bytes, int64_t bw)
{
	memset(b, 0, sizeof *b);
	b->which = which;
	b->user = g->c.user_bandwidth;
	b->base = which == LM_DLP_IFMAP ? g->c.ifmap_offset : g->c.filter_offset;
	b->size = which == LM_DLP_IFMAP ? g->l.ifmap_h * g->l.ifmap_w * g->l.channels : g->K * g->N;
	int64_t total = total_bytes; /* one-byte words */
	b->active_size = (total + 1) / 2; /* ceil(total * 0.5) */
	b->prefetch_size = total - b->active_size;
	b->bw = bw;
	if (!b->user) {
		b->I = total / 100;
		if (b->I < 1)
			return lm_set_error(LM_ERR_ARG, "dlp.run: a %s scratchpad of %lld words is too small for CALC mode (100 words at least)",
			                    which == LM_DLP_IFMAP ? "ifmap" : "filter", (long long)total);
		b->nA = 50, b->nP = 50;
		b->rs = 0, b->re = b->nA - 1, b->ps = b->pe = -1;
		b->lps = -2, b->lpe = -1;
		b->bw_default = bw;
		b->last_set = malloc((size_t)b->size * sizeof *b->last_set);
		b->capsets = 1024;
		b->set_size = malloc((size_t)b->capsets * sizeof *b->set_size);
		if (!b->last_set || !b->set_size) return lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
		for (int64_t i = 0; i < b->size; i++) b->last_set[i] = -1;
		return LM_OK;
	}
	b->eps = cdiv(total, 100);
	pf_grid s = pf_shape(g, which);
	b->F = cdiv(s.rows * s.cols, bw);
	b->occ = calloc((size_t)b->size, sizeof *b->occ);
	int64_t most = which == LM_DLP_IFMAP ? g->M * g->K : g->K * g->N; /* every word once */
	build_ctx x = {b, malloc((size_t)most * sizeof(int32_t)), 0};
	if (!b->occ || !x.seq) {
		free(x.seq);
		return lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
	}
	pf_walk(g, which, build_seq, &x);
	if (lm_interrupted()) {
		free(x.seq);
		return lm_set_error(LM_ERR_INTERRUPTED, "dlp.run: interrupted");
	}
	int64_t nvalid = x.k, at = 0;
	for (int64_t i = 0; i < b->size; i++) b->occ[i].off = (int32_t)at, at += b->occ[i].n;
	b->lines = malloc((size_t)(nvalid ? nvalid : 1) * sizeof *b->lines);
	if (!b->lines) {
		free(x.seq);
		return lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
	}
	for (int64_t k = 0; k < nvalid; k++) { /* cursor counts each list's fill here */
		occ *o = &b->occ[x.seq[k]];
		b->lines[o->off + o->cursor++] = (int32_t)(k / b->eps);
	}
	free(x.seq);
	for (int64_t i = 0; i < b->size; i++) {
		b->occ[i].cursor = 0;
		b->occ[i].line = b->occ[i].n ? b->lines[b->occ[i].off] : -1;
	}
	b->L = nvalid / b->eps + 1; /* SCALE-Sim keeps the last (possibly empty) line */
	int64_t maxA = cdiv(b->active_size, b->eps), maxP = cdiv(b->prefetch_size, b->eps);
	b->A = b->L > maxA ? maxA : b->L;
	b->P = b->L - b->A > maxP ? maxP : b->L - b->A;
	return LM_OK;
}

static void rbuf_free(rbuf *b)
{
	free(b->occ);
	free(b->lines);
	free(b->last_set);
	free(b->set_size);
}

static int in_window(const rbuf *b, int32_t line)
{
	return b->s < b->e ? line >= b->s && line < b->e : line >= b->s || line < b->e;
}

static int user_hit(rbuf *b, int64_t a)
{
	occ *o = &b->occ[a - b->base];
	if (o->n && in_window(b, o->line)) return 1;
	const int32_t *v = b->lines + o->off;
	int64_t n = o->n, lo = 0, hi = n;
	if (o->cursor + 1 < n && in_window(b, v[o->cursor + 1])) { /* the window moves on slowly */
		o->cursor++, o->line = v[o->cursor];
		return 1;
	}
	while (lo < hi) { /* the first occurrence at or after the window's start */
		int64_t mid = (lo + hi) / 2;
		if (v[mid] < b->s) lo = mid + 1;
		else hi = mid;
	}
	if (b->s < b->e ? lo < n && v[lo] < b->e : lo < n) {
		o->cursor = (int32_t)lo, o->line = v[lo];
		return 1;
	}
	if (b->s >= b->e && n > 0 && v[0] < b->e) {
		o->cursor = 0, o->line = v[0];
		return 1;
	}
	return 0;
}

static void user_first(rbuf *b, int64_t start, lm_dlp_events *ev)
{
	int64_t nl = cdiv(b->active_size, b->bw);
	if (nl >= b->F) nl = b->F;
	b->nacc += nl * b->bw;
	b->dmin = start - nl;
	b->last = b->dmax = start - 1;
	b->s = 0, b->e = b->A;
	b->started = 1;
	ev_add(ev, b->which, start - nl, start - 1, nl * b->bw);
}

static void user_next(rbuf *b, lm_dlp_events *ev)
{
	b->s = (b->s + b->P) % b->L;
	b->e = (b->s + b->A) % b->L;
	int64_t nl = cdiv(b->prefetch_size, b->bw);
	b->nacc += nl * b->bw;
	int64_t first = b->last + 2;
	b->last = b->last + nl + 1; /* requests at last+1.., answered a cycle later */
	if (b->last > b->dmax) b->dmax = b->last;
	ev_add(ev, b->which, first, b->last, nl * b->bw);
}

/* the set-based estimate (CALC): a prefetch of the sets [from, to] over the cycles [lps, lpe] */
static void calc_prefetch(rbuf *b, int64_t from, int64_t to, lm_dlp_events *ev)
{
	int64_t count = 0;
	for (int64_t i = from; i <= to; i++) count += b->set_size[i];
	b->nacc += count;
	int64_t cycles = b->lpe - b->lps + 1;
	if (cycles > 0) {
		if (!b->traced) b->dmin = b->lps + 1, b->traced = 1;
		b->dmax = b->lpe + 1;
		ev_add(ev, b->which, b->lps + 1, b->lpe + 1, count);
	}
}

static lm_status calc_push_set(rbuf *b, int64_t size)
{
	if (b->nsets == b->capsets) {
		int64_t *p = realloc(b->set_size, (size_t)b->capsets * 2 * sizeof *p);
		if (!p) return lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
		b->set_size = p;
		b->capsets *= 2;
	}
	b->set_size[b->nsets++] = size;
	return LM_OK;
}

static lm_status calc_manage(rbuf *b, int64_t cycle, int64_t a, lm_dlp_events *ev)
{
	int64_t i = a - b->base, ls = b->last_set[i];
	int64_t end = b->cur < b->re + 1 ? b->cur : b->re + 1;
	if (ls >= b->rs && ls < end) return LM_OK;  /* a hit */
	if (ls == b->cur) return LM_OK;             /* already in the set being filled */
	b->last_set[i] = (int32_t)b->cur;
	if (++b->elems < b->I) return LM_OK;
	lm_status st = calc_push_set(b, b->I);
	if (st) return st;
	b->elems = 0;
	b->cur++;
	if (b->cur != b->re + 1) return LM_OK;
	if (!b->done) {
		b->lpe = b->first_cycle - 2;
		int64_t cycles = cdiv(b->nP * b->I, b->bw_default);
		b->lps = b->lpe - cycles + 1;
		calc_prefetch(b, 0, b->nA - 1, ev);
		b->ps = b->re + 1;
		b->pe = b->ps + b->nP - 1;
		b->done = 1;
	} else {
		if (b->lpe - b->lps + 1 <= 0)
			return lm_set_error(LM_ERR_ARG, "dlp.run: CALC mode cannot estimate a prefetch over %lld cycles (the scratchpad is too small for this array)",
			                    (long long)(b->lpe - b->lps + 1));
		calc_prefetch(b, b->ps, b->pe, ev);
		b->ps += b->nP;
		b->pe += b->nP;
	}
	b->rs += b->nP;
	b->re += b->nP;
	b->lps = b->lpe + 1;
	b->lpe = cycle;
	return LM_OK;
}

static lm_status calc_complete(rbuf *b, lm_dlp_events *ev)
{
	if (b->elems > 0) {
		lm_status st = calc_push_set(b, b->elems);
		if (st) return st;
	} else {
		b->cur--;
	}
	if (!b->done) {
		b->lpe = -2;
		int64_t cycles = cdiv((b->cur + 1) * b->I, b->bw_default);
		b->lps = b->lpe - cycles + 1;
		calc_prefetch(b, 0, b->cur, ev);
		b->done = 1;
	} else {
		if (b->lpe - b->lps + 1 <= 0)
			return lm_set_error(LM_ERR_ARG, "dlp.run: CALC mode cannot estimate the last prefetch (the scratchpad is too small for this array)");
		calc_prefetch(b, b->ps, b->cur, ev);
	}
	return LM_OK;
}

static void bank_count(rbuf *b, const lm_dlp_config *c, const int64_t *addr, int n, int64_t *tally)
{
	if (c->banks <= 0 || n == 0) return;
	int64_t most = 0;
	for (int i = 0; i < n; i++) {
		int64_t k = (addr[i] - b->base) % c->banks;
		if (++tally[k] > most) most = tally[k];
	}
	for (int i = 0; i < n; i++) tally[(addr[i] - b->base) % c->banks] = 0;
	b->bank_cycles += cdiv(most, c->ports) - 1;
	if (most > b->bank_max) b->bank_max = most;
}

/* One demand row at cycle `cycle`; returns the cycle it is served (SCALE-Sim's service_reads). */
static lm_status rbuf_service(rbuf *b, const int64_t *addr, int n, int64_t cycle, int64_t *out, lm_dlp_events *ev)
{
	if (!b->user) {
		if (!b->first_seen && n > 0) b->first_cycle = cycle, b->first_seen = 1;
		for (int i = 0; i < n; i++) {
			lm_status st = calc_manage(b, cycle, addr[i], ev);
			if (st) return st;
		}
		*out = cycle + 1;
		return LM_OK;
	}
	if (!b->started) user_first(b, cycle, ev);
	int64_t offset = 1;
	for (int i = 0; i < n; i++) {
		int64_t guard = 0;
		while (!user_hit(b, addr[i])) {
			if (++guard > b->L + 2)
				return lm_set_error(LM_ERR_STATE, "dlp.run: internal: address %lld never reaches the scratchpad",
				                    (long long)addr[i]);
			user_next(b, ev);
			int64_t p = b->last - (cycle + offset);
			offset += p; /* SCALE-Sim adds it twice when positive, and once when negative */
			if (p > 0) offset += p;
		}
	}
	*out = cycle + offset;
	return LM_OK;
}

/* ---------------------------------------------------------------- memory: the write buffer */

typedef struct {
	int64_t total, active, drain, bw, free_space, line_idx;
	int32_t *valid; /* words in each closed line */
	int64_t nlines, caplines, dstart, drain_end, nacc, dmin, dmax;
	int traced;
} wbuf;

static lm_status wbuf_close_line(wbuf *w)
{
	if (w->nlines == w->caplines) {
		int64_t cap = w->caplines ? w->caplines * 2 : 4096;
		int32_t *p = realloc(w->valid, (size_t)cap * sizeof *p);
		if (!p) return lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
		w->valid = p;
		w->caplines = cap;
	}
	w->valid[w->nlines++] = (int32_t)w->line_idx;
	w->line_idx = 0;
	return LM_OK;
}

static int64_t wbuf_drain(wbuf *w, int64_t start, lm_dlp_events *ev)
{
	int64_t end = w->dstart + cdiv(w->drain, w->bw);
	if (end > w->nlines) end = w->nlines;
	int64_t n = end - w->dstart;
	if (n <= 0) return w->drain_end; /* nothing left (SCALE-Sim never asks) */
	int64_t words = n * w->bw - (w->bw - w->valid[end - 1]); /* only the last line's gap is taken off */
	w->nacc += words;
	if (!w->traced) w->dmin = start, w->dmax = start + n - 1, w->traced = 1;
	if (start < w->dmin) w->dmin = start;
	if (start + n - 1 > w->dmax) w->dmax = start + n - 1;
	ev_add(ev, 2, start, start + n - 1, words);
	w->free_space += words;
	w->dstart = end;
	return start + n - 1;
}

static lm_status wbuf_service(wbuf *w, int n, int64_t cycle, int64_t *out, lm_dlp_events *ev)
{
	int64_t cur = cycle;
	for (int i = 0; i < n; i++) {
		w->line_idx++;
		w->free_space--;
		if (w->line_idx == w->bw) {
			lm_status st = wbuf_close_line(w);
			if (st) return st;
		}
		if (cur < w->drain_end) {
			if (w->free_space <= 0) cur = w->drain_end;
		} else if (w->free_space < w->active) {
			if (w->line_idx) {
				lm_status st = wbuf_close_line(w);
				if (st) return st;
			}
			w->drain_end = wbuf_drain(w, cur, ev);
		}
	}
	*out = cur;
	return LM_OK;
}

static lm_status wbuf_empty_all(wbuf *w, int64_t cycle, lm_dlp_events *ev)
{
	if (w->line_idx) {
		lm_status st = wbuf_close_line(w);
		if (st) return st;
	}
	while (w->dstart < w->nlines) {
		w->drain_end = wbuf_drain(w, cycle, ev);
		cycle = w->drain_end + 1;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- the run */

static void fold_counts(const geo *g, lm_dlp_report *r)
{
	int64_t R = g->R, C = g->C, T = g->T;
	double eff = 0, util = 0;
	for (int64_t fc = 0; fc < g->cf; fc++)
		for (int64_t fr = 0; fr < g->rf; fr++) {
			int64_t ru = g->Sr - fr * R < R ? g->Sr - fr * R : R;
			int64_t cu = g->Sc - fc * C < C ? g->Sc - fc * C : C;
			int64_t mac = ru * cu, cycles;
			switch (g->c.dataflow) {
			case LM_DLP_OS:
				r->sram[0] += T * ru;
				r->sram[1] += T * cu;
				r->sram[2] += ru * cu + R + C; /* SCALE-Sim adds the padded block's rows and columns */
				cycles = (T - 1 + R) + C - 1;
				break;
			case LM_DLP_WS:
				r->sram[0] += T * ru;
				r->sram[1] += ru * cu;
				r->sram[2] += T * cu;
				cycles = (2 * R + C + T - 2) + C - 1;
				break;
			default:
				r->sram[0] += ru * cu;
				r->sram[1] += T * ru;
				r->sram[2] += T * cu;
				cycles = (2 * R + C + T - 2) + C - 1;
				break;
			}
			eff += (double)mac / (double)(R * C);
			util += (double)(mac * T) / (double)(R * C * cycles);
		}
	int64_t folds = g->rf * g->cf;
	r->mapping_eff = eff / (double)folds * 100;
	r->compute_util = util / (double)folds * 100;
}

lm_status lm_dlp_run(const lm_dlp_config *cfg, const lm_dlp_layer *layer, lm_dlp_report *r, lm_dlp_events *ev)
{
	geo g;
	lm_status st = geo_init(&g, cfg, layer);
	if (st || (st = geo_tables(&g))) return st;
	memset(r, 0, sizeof *r);
	r->M = g.M, r->N = g.N, r->K = g.K, r->ofmap_h = g.Eh, r->ofmap_w = g.Ew;
	r->Sr = g.Sr, r->Sc = g.Sc, r->T = g.T, r->row_folds = g.rf, r->col_folds = g.cf, r->fold_rows = g.fold_rows;
	r->macs = g.M * g.N * g.K;
	fold_counts(&g, r);

	int64_t rdbw = cfg->user_bandwidth ? cfg->bandwidth : 10;
	int64_t wrbw = cfg->user_bandwidth ? cfg->bandwidth : g.C;
	rbuf ib, fb;
	wbuf w = {0};
	int64_t *ia = NULL, *fa = NULL, *tally = NULL;
	memset(&ib, 0, sizeof ib);
	memset(&fb, 0, sizeof fb);
	if ((st = rbuf_init(&ib, &g, LM_DLP_IFMAP, cfg->ifmap_kb * 1024, rdbw))) goto done;
	if ((st = rbuf_init(&fb, &g, LM_DLP_FILTER, cfg->filter_kb * 1024, rdbw))) goto done;
	w.total = cfg->ofmap_kb * 1024;
	w.active = (w.total + 1) / 2;
	w.drain = w.total - w.active;
	w.bw = wrbw;
	w.free_space = w.total;
	int64_t width = g.R > g.C ? g.R : g.C;
	ia = malloc((size_t)width * sizeof *ia);
	fa = malloc((size_t)width * sizeof *fa);
	tally = cfg->banks > 0 ? calloc((size_t)cfg->banks, sizeof *tally) : NULL;
	if (!ia || !fa || (cfg->banks > 0 && !tally)) {
		st = lm_set_error(LM_ERR_NOMEM, "dlp.run: out of memory");
		goto done;
	}

	int64_t stall = 0, row = 0, total = 0, last_out = 0;
	int have[3] = {0, 0, 0};
	for (int64_t fc = 0; fc < g.cf; fc++)
		for (int64_t fr = 0; fr < g.rf; fr++) {
			ev_add(ev, 4, row + stall, row + stall + g.fold_rows - 1, fc * g.rf + fr);
			for (int64_t t = 0; t < g.fold_rows; t++, row++) {
				if ((row & 0xffff) == 0 && lm_interrupted()) {
					st = lm_set_error(LM_ERR_INTERRUPTED, "dlp.run: interrupted (Ctrl-C) at cycle %lld of %lld",
					                  (long long)row, (long long)(g.rf * g.cf * g.fold_rows));
					goto done;
				}
				int ni, nf, no;
				demand_row(&g, fr, fc, t, ia, &ni, fa, &nf, &no);
				int64_t cycle = row + stall, iout, fout, oout;
				if ((st = rbuf_service(&ib, ia, ni, cycle, &iout, ev))) goto done;
				if ((st = rbuf_service(&fb, fa, nf, cycle, &fout, ev))) goto done;
				if ((st = wbuf_service(&w, no, cycle, &oout, ev))) goto done;
				bank_count(&ib, cfg, ia, ni, tally);
				bank_count(&fb, cfg, fa, nf, tally);
				const int64_t outs[3] = {iout, fout, oout};
				const int n[3] = {ni, nf, no};
				for (int k = 0; k < 3; k++)
					if (n[k] > 0) {
						if (!have[k]) r->sram_start[k] = (double)outs[k], have[k] = 1;
						r->sram_stop[k] = (double)outs[k];
					}
				int64_t s[3] = {iout - cycle - 1, fout - cycle - 1, oout - cycle};
				int64_t m = s[0], which = 0;
				for (int k = 1; k < 3; k++)
					if (s[k] > m) m = s[k], which = k;
				if (m > 0) ev_add(ev, 3, cycle, m, which);
				stall += m;
				if (oout > total) total = oout;
				last_out = oout;
			}
		}
	if (!cfg->user_bandwidth) {
		if ((st = calc_complete(&ib, ev)) || (st = calc_complete(&fb, ev))) goto done;
	}
	if ((st = wbuf_empty_all(&w, last_out, ev))) goto done;

	r->total_cycles = total;
	r->stall_cycles = stall;
	r->overall_util = (double)(r->macs * 100) / (double)(total * g.R * g.C);
	rbuf *rb[2] = {&ib, &fb};
	for (int k = 0; k < 2; k++) {
		r->dram[k] = rb[k]->nacc;
		r->dram_start[k] = (double)rb[k]->dmin;
		r->dram_stop[k] = (double)rb[k]->dmax;
		r->bank_conflict_cycles[k] = rb[k]->bank_cycles;
		r->bank_max_requests[k] = rb[k]->bank_max;
	}
	r->dram[2] = w.nacc;
	r->dram_start[2] = (double)w.dmin;
	r->dram_stop[2] = (double)w.dmax;
	for (int k = 0; k < 3; k++) {
		r->avg_sram_bw[k] = (double)r->sram[k] / (double)total;
		r->avg_dram_bw[k] = (double)r->dram[k] / (r->dram_stop[k] - r->dram_start[k] + 1);
	}
	double first = r->dram_start[0] < r->dram_start[1] ? r->dram_start[0] : r->dram_start[1];
	r->overall_cycles = (int64_t)(r->dram_stop[2] - first);
done:
	geo_free(&g);
	rbuf_free(&ib);
	rbuf_free(&fb);
	free(w.valid);
	free(ia);
	free(fa);
	free(tally);
	return st;
}

lm_status lm_dlp_pe_state(const lm_dlp_config *cfg, const lm_dlp_layer *layer, int64_t fr, int64_t fc, int64_t t,
                          lm_dlp_pe *pes)
{
	geo g;
	lm_status st = geo_init(&g, cfg, layer);
	if (st) return st;
	if (fr < 0 || fr >= g.rf || fc < 0 || fc >= g.cf)
		return lm_set_error(LM_ERR_INDEX, "dlp.pe_state: fold (%lld, %lld) outside %lld x %lld folds", (long long)fr,
		                    (long long)fc, (long long)g.rf, (long long)g.cf);
	for (int64_t r = 0; r < g.R; r++)
		for (int64_t c = 0; c < g.C; c++) {
			lm_dlp_pe *e = &pes[r * g.C + c];
			*e = (lm_dlp_pe){0, -1, -1, -1};
			int64_t step;
			switch (cfg->dataflow) {
			case LM_DLP_OS: { /* PE (r, c) accumulates output (p, n); operand k arrives at t = k + r + c */
				int64_t p = fr * g.R + r, n = fc * g.C + c;
				if (p >= g.M || n >= g.N) break;
				e->p = p, e->n = n;
				step = t - r - c;
				if (step >= 0 && step < g.T) e->mac = 1, e->k = step;
				break;
			}
			case LM_DLP_WS: { /* PE (r, c) holds weight (k, n); input row p arrives at t = R + p + r + c */
				int64_t k = fr * g.R + r, n = fc * g.C + c;
				if (k >= g.K || n >= g.N) break;
				e->k = k, e->n = n;
				step = t - g.R - r - c;
				if (step >= 0 && step < g.T) e->mac = 1, e->p = step;
				break;
			}
			default: { /* IS: PE (r, c) holds input (p, k); filter n arrives at t = R + n + r + c */
				int64_t k = fr * g.R + r, p = fc * g.C + c;
				if (k >= g.K || p >= g.M) break;
				e->k = k, e->p = p;
				step = t - g.R - r - c;
				if (step >= 0 && step < g.T) e->mac = 1, e->n = step;
				break;
			}
			}
		}
	return LM_OK;
}

/* ---------------------------------------------------------------- defaults and energy */

lm_dlp_config lm_dlp_config_default(void)
{
	return (lm_dlp_config){.rows = 32, .cols = 32, .dataflow = LM_DLP_OS, .ifmap_kb = 64, .filter_kb = 64,
	                       .ofmap_kb = 64, .bandwidth = 10, .user_bandwidth = 1, .ifmap_offset = 0,
	                       .filter_offset = 10000000, .ofmap_offset = 20000000, .banks = 0, .ports = 1};
}

const lm_dlp_energy_table lm_dlp_energy_default = {
	{0.23, 0.23, 0.46, 1.38, 46.0},
	"Eyeriss (ISCA 2016) relative costs x Horowitz (ISSCC 2014) 8-bit MAC at 45 nm",
};

const char *const lm_dlp_level_names[LM_DLP_LEVELS] = {"mac", "register", "pe_hop", "sram", "dram"};

void lm_dlp_energy(const lm_dlp_report *r, const lm_dlp_energy_table *t, double counts[LM_DLP_LEVELS],
                   double pj[LM_DLP_LEVELS])
{
	if (!t) t = &lm_dlp_energy_default;
	double macs = (double)r->macs, dram = (double)(r->dram[0] + r->dram[1] + r->dram[2]);
	counts[LM_DLP_MAC] = macs;
	counts[LM_DLP_REGISTER] = 3 * macs;
	counts[LM_DLP_PE_HOP] = 2 * macs;
	counts[LM_DLP_SRAM] = (double)(r->sram[0] + r->sram[1] + r->sram[2]) + dram;
	counts[LM_DLP_DRAM] = dram;
	if (pj)
		for (int k = 0; k < LM_DLP_LEVELS; k++) pj[k] = counts[k] * t->pj[k];
}
