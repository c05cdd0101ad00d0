/*
 * addnet.c — the data flow of the adds of one block, read from its trace: for each add event,
 * the two elements it read and the element its sum was stored to, grouped by textbook step (a
 * barrier phase with adds). The scan and reduction scenes draw their trees from this.
 *
 * How operands are found (docs/trace.md: a thread's events keep its program order): an add uses
 * the thread's loads since its previous add — the two most recent ones (PMPP's `mine` and `left`),
 * or, when it loaded only one, that one and the value it used last time (a register such as
 * `before` in the scan's phase 3). Its sum goes to the thread's next store, which may lie in the
 * next barrier phase (Kogge-Stone stores after a barrier, to avoid the write-after-read race).
 * Read next: scan.c, reduce.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

typedef struct operand {
	int32_t index;
	uint8_t array;
} operand;

typedef struct thread_state {
	operand hist[2]; /* the last two loads, [1] the latest */
	int fresh;       /* loads since the last add */
	operand last_first;
	int pending;     /* the add waiting for its store, or -1 */
} thread_state;

static bool grow(void **p, int *cap, int need, size_t size)
{
	if (need <= *cap) return true;
	int c = *cap ? *cap * 2 : 256;
	while (c < need) c *= 2;
	void *q = vz_realloc(*p, (size_t)c * size);
	if (!q) return false;
	*p = q;
	*cap = c;
	return true;
}

/* One event of the block, in trace order. */
static lm_status take(vzs_addnet *n, thread_state *ts, int *cap, const lm_trace_event *e, int64_t id)
{
	int th = e->warp * 32 + e->lane;
	if (th >= n->threads) return LM_OK;
	thread_state *s = &ts[th];
	switch (e->kind) {
	case LM_TRACE_LOAD:
		s->hist[0] = s->hist[1];
		s->hist[1] = (operand){(int32_t)e->index, e->array};
		s->fresh++;
		return LM_OK;
	case LM_TRACE_ADD: {
		if (!grow((void **)&n->adds, cap, n->nadds + 1, sizeof *n->adds))
			return lm_set_error(LM_ERR_NOMEM, "viz: out of memory reading the adds");
		vzs_add *a = &n->adds[n->nadds];
		memset(a, 0, sizeof *a);
		a->event = id;
		a->value = e->value;
		a->thread = th;
		a->warp = e->warp;
		a->lane = e->lane;
		a->mask = e->mask;
		a->dst = -1;
		operand first = {-1, LM_TRACE_NO_ARRAY}, second = {-1, LM_TRACE_NO_ARRAY};
		if (s->fresh >= 2) {
			first = s->hist[0];
			second = s->hist[1];
		} else if (s->fresh == 1) {
			first = s->last_first;
			second = s->hist[1];
		}
		a->src[0] = first.index;
		a->src_array[0] = first.array;
		a->src[1] = second.index;
		a->src_array[1] = second.array;
		s->last_first = first;
		s->fresh = 0;
		s->pending = n->nadds++;
		return LM_OK;
	}
	case LM_TRACE_STORE:
		if (s->pending >= 0) {
			vzs_add *a = &n->adds[s->pending];
			a->dst = (int32_t)e->index;
			a->dst_array = e->array;
			s->pending = -1;
		}
		return LM_OK;
	default:
		return LM_OK;
	}
}

/* Warps issuing, lanes and the stride of each step. */
static void summarise(vzs_addnet *n)
{
	for (int k = 0; k < n->nsteps; k++) {
		vzs_step *st = &n->steps[k];
		uint64_t seen[32] = {0}; /* warps seen, up to 2048 threads */
		int stride = 0;
		for (int i = st->first; i < st->first + st->count; i++) {
			const vzs_add *a = &n->adds[i];
			if (a->warp < 2048 && !(seen[a->warp / 64] & (1ull << (a->warp % 64)))) {
				seen[a->warp / 64] |= 1ull << (a->warp % 64);
				st->warps_issued++;
				st->lanes += __builtin_popcount(a->mask);
			}
			for (int j = 0; j < 2; j++)
				if (a->dst >= 0 && a->src[j] >= 0 && a->src_array[j] == a->dst_array &&
				    abs(a->dst - a->src[j]) > stride)
					stride = abs(a->dst - a->src[j]);
		}
		st->stride = stride;
	}
}

/* The array most adds of the last step write, its element range, its contents before the first
 * add step. */
static lm_status find_rows(vzs_addnet *n, const lm_trace *t, int64_t first_ev, int64_t end_ev)
{
	const vzs_step *last = &n->steps[n->nsteps - 1];
	int counts[256] = {0}, best = -1;
	for (int i = last->first; i < last->first + last->count; i++)
		if (n->adds[i].dst >= 0) counts[n->adds[i].dst_array]++;
	for (int a = 0; a < 255; a++)
		if (counts[a] && (best < 0 || counts[a] > counts[best])) best = a;
	if (best < 0) return lm_set_error(LM_ERR_ARG, "the adds of the trace store nothing");
	n->array = best;
	lm_trace_array arr;
	lm_trace_array_get(t, best, &arr);
	int64_t lo = arr.length, hi = -1;
	for (int64_t i = first_ev; i < end_ev; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		if (e->array != best || e->block != n->block || e->launch != n->launch) continue;
		if ((int64_t)e->index < lo) lo = e->index;
		if ((int64_t)e->index > hi) hi = e->index;
	}
	if (hi < lo) return lm_set_error(LM_ERR_ARG, "the trace does not touch the array it adds into");
	n->lo = lo;
	n->length = hi - lo + 1;
	n->initial = vz_malloc((size_t)n->length * sizeof *n->initial);
	if (!n->initial) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
	for (int64_t k = 0; k < n->length; k++) n->initial[k] = NAN;
	for (int64_t i = first_ev; i < end_ev; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		if (e->array != best || e->block != n->block || e->launch != n->launch) continue;
		if (e->kind != LM_TRACE_LOAD && e->kind != LM_TRACE_STORE) continue;
		double *v = &n->initial[e->index - lo];
		if (isnan(*v)) *v = e->value;
	}
	return LM_OK;
}

lm_status vzs_addnet_build(const lm_trace *t, int launch, uint32_t block, vzs_addnet *out)
{
	memset(out, 0, sizeof *out);
	out->launch = launch;
	out->block = block;
	lm_trace_launch la;
	if (lm_trace_launch_get(t, launch, &la) != LM_OK)
		return lm_set_error(LM_ERR_ARG, "the trace has no launch %d", launch);
	out->threads = (int)(la.block[0] * la.block[1] * la.block[2]);
	out->warps = (out->threads + 31) / 32;
	thread_state *ts = vz_calloc((size_t)out->threads, sizeof *ts);
	if (!ts) return lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
	for (int i = 0; i < out->threads; i++) ts[i].pending = -1;
	int cap = 0, scap = 0;
	int64_t kept = lm_trace_count(t), first_ev = -1, end_ev = -1;
	lm_status st = LM_OK;
	for (int64_t i = la.first_step; i < la.first_step + la.nsteps && st == LM_OK; i++) {
		lm_trace_step s;
		if (lm_trace_step_get(t, i, &s) != LM_OK || s.block != block) continue;
		if (s.first + s.count > kept || (s.count == 0 && lm_trace_truncated(t))) out->truncated = true;
		if (first_ev < 0) first_ev = s.first;
		int before = out->nadds;
		int64_t end = s.first + s.count < kept ? s.first + s.count : kept;
		for (int64_t e = s.first; e < end && st == LM_OK; e++)
			st = take(out, ts, &cap, lm_trace_event_get(t, e), e);
		if (end > end_ev) end_ev = end;
		if (st != LM_OK || out->nadds == before) continue;
		if (!grow((void **)&out->steps, &scap, out->nsteps + 1, sizeof *out->steps)) {
			st = lm_set_error(LM_ERR_NOMEM, "viz: out of memory");
			break;
		}
		vzs_step *k = &out->steps[out->nsteps++];
		memset(k, 0, sizeof *k);
		k->trace_step = (int)s.step;
		k->first = before;
		k->count = out->nadds - before;
		k->start_cycle = s.start_cycle;
		k->cycles = s.cycles;
	}
	vz_free(ts);
	if (st == LM_OK && first_ev < 0)
		st = lm_set_error(LM_ERR_ARG, "the trace has no block %u in launch %d", block, launch);
	if (st == LM_OK && out->nsteps == 0)
		st = lm_set_error(LM_ERR_ARG, "block %u of launch %d adds nothing%s", block, launch,
		                  out->truncated ? " in the events kept (the trace is truncated)" : "");
	if (st == LM_OK) st = find_rows(out, t, first_ev, end_ev);
	if (st != LM_OK) {
		vzs_addnet_free(out);
		return st;
	}
	summarise(out);
	return LM_OK;
}

void vzs_addnet_free(vzs_addnet *n)
{
	vz_free(n->adds);
	vz_free(n->steps);
	vz_free(n->initial);
	memset(n, 0, sizeof *n);
}

void vzs_addnet_values(const vzs_addnet *n, int s, double *out)
{
	memcpy(out, n->initial, (size_t)n->length * sizeof *out);
	for (int k = 0; k < s && k < n->nsteps; k++)
		for (int i = n->steps[k].first; i < n->steps[k].first + n->steps[k].count; i++) {
			const vzs_add *a = &n->adds[i];
			if (a->dst >= n->lo && a->dst < n->lo + n->length && a->dst_array == n->array)
				out[a->dst - n->lo] = a->value;
		}
}

void vzs_array_after(const lm_trace *t, int array, int launch, double *out, int64_t length)
{
	for (int64_t k = 0; k < length; k++) out[k] = NAN;
	int64_t n = lm_trace_count(t);
	for (int64_t i = 0; i < n; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		if (e->launch > launch) break;
		if (e->array != array || (int64_t)e->index >= length) continue;
		if (e->kind == LM_TRACE_STORE) out[e->index] = e->value;
		else if (e->kind == LM_TRACE_LOAD && isnan(out[e->index])) out[e->index] = e->value;
	}
}
