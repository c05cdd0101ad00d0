/*
 * run.c — runs, what scenes are drawn from: a kernel result's provenance, counters and trace
 * (from an lm_kernel_info, or from a trace alone), the source label every counter is shown under,
 * and reading a kernel's input back out of its trace (so a scene can run the other algorithms of
 * the lecture on the same input).
 *
 * A run made from a trace alone gets its counters counted here from the trace: the step table
 * (complete even when the events were truncated) gives adds, steps and modelled cycles; the
 * events give loads, stores and atomics by space (only those kept: a truncated trace says so).
 * Read next: scenes/scan.c (a scene that uses all of this).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/vz.h"

const char *vz_run_source_label(const lm_viz_run *r, char *buf, size_t cap)
{
	if (strcmp(r->source, "emu") == 0) snprintf(buf, cap, "%s", vz_tr("emulated (modelled cycles)", "模拟器（模型周期）"));
	else if (strcmp(r->source, "cpu") == 0) VZ_SNPRINTF_TR(buf, cap, "CPU %s, measured", "CPU %s，实测", r->device);
	else if (strcmp(r->source, "cuda") == 0) VZ_SNPRINTF_TR(buf, cap, "CUDA %s, measured", "CUDA %s，实测", r->device);
	else snprintf(buf, cap, "%s (%s)", r->source, r->provenance);
	return buf;
}

double vz_run_counter(const lm_viz_run *r, const char *name, double def)
{
	for (int i = 0; i < r->ncounters; i++)
		if (strcmp(r->counters[i].name, name) == 0) return r->counters[i].value;
	return def;
}

bool vz_run_has(const lm_viz_run *r, const char *name)
{
	for (int i = 0; i < r->ncounters; i++)
		if (strcmp(r->counters[i].name, name) == 0) return true;
	return false;
}

static void add_counter(lm_viz_run *r, const char *name, double v)
{
	for (int i = 0; i < r->ncounters; i++)
		if (strcmp(r->counters[i].name, name) == 0) {
			r->counters[i].value = v;
			return;
		}
	if (r->ncounters >= LM_VIZ_MAX_COUNTERS) return;
	snprintf(r->counters[r->ncounters].name, sizeof r->counters[0].name, "%s", name);
	r->counters[r->ncounters++].value = v;
}

void vz_run_from_info(lm_viz_run *r, const lm_kernel_info *info)
{
	memset(r, 0, sizeof *r);
	snprintf(r->pattern, sizeof r->pattern, "%s", lm_kernel_info_pattern(info));
	snprintf(r->algo, sizeof r->algo, "%s", lm_kernel_info_algo(info));
	snprintf(r->source, sizeof r->source, "%s", lm_kernel_info_source(info));
	snprintf(r->device, sizeof r->device, "%s", lm_kernel_info_device(info));
	snprintf(r->provenance, sizeof r->provenance, "%s", lm_kernel_info_provenance(info));
	int n = lm_kernel_info_counter_count(info);
	for (int i = 0; i < n; i++)
		add_counter(r, lm_kernel_info_counter_name(info, i), lm_kernel_info_counter_value(info, i));
	lm_trace *t = lm_kernel_info_trace(info);
	r->trace = t ? lm_trace_retain(t) : NULL;
	int ns = lm_kernel_info_span_count(info);
	if (ns > 0 && (r->spans = vz_calloc((size_t)ns, sizeof *r->spans))) {
		r->owns_spans = true;
		for (int i = 0; i < ns; i++) {
			lm_kernel_span k;
			if (lm_kernel_info_span_get(info, i, &k) != LM_OK) break;
			lm_viz_span *d = &r->spans[r->nspans++];
			snprintf(d->schedule, sizeof d->schedule, "%s", k.schedule);
			snprintf(d->op, sizeof d->op, "%s", k.op);
			snprintf(d->track, sizeof d->track, "%s", k.track);
			d->segment = k.segment;
			d->stream = k.stream;
			d->start_ms = k.start_ms;
			d->end_ms = k.end_ms;
			d->bytes = k.bytes;
		}
	}
}

/* Counters from the step table (complete) and the kept events. */
static void count_trace(lm_viz_run *r, const lm_trace *t)
{
	int64_t nsteps = lm_trace_step_count(t), adds = 0, barriers = 0, steps = 0;
	int nl = lm_trace_launch_count(t);
	uint64_t end = 0;
	for (int l = 0; l < nl; l++) {
		lm_trace_launch la;
		if (lm_trace_launch_get(t, l, &la) != LM_OK) continue;
		if (la.end_cycle > end) end = la.end_cycle;
		/* per launch, the largest sum of depth over a block's steps (docs/trace.md): a coarsened
		 * thread's dependent adds count as steps, as the kernels' own counter has them */
		int64_t best = 0, cur = 0;
		uint32_t block = UINT32_MAX;
		for (int64_t i = la.first_step; i < la.first_step + la.nsteps; i++) {
			lm_trace_step s;
			if (lm_trace_step_get(t, i, &s) != LM_OK) continue;
			if (s.block != block) {
				block = s.block;
				cur = 0;
			}
			cur += s.depth;
			if (cur > best) best = cur;
		}
		steps += best;
	}
	for (int64_t i = 0; i < nsteps; i++) {
		lm_trace_step s;
		if (lm_trace_step_get(t, i, &s) != LM_OK) continue;
		adds += s.adds;
		barriers += s.barrier;
	}
	int64_t by[LM_TRACE_KIND_COUNT][LM_SPACE_COUNT] = {{0}};
	int64_t n = lm_trace_count(t);
	for (int64_t i = 0; i < n; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		if (e->kind < LM_TRACE_KIND_COUNT && e->space < LM_SPACE_COUNT) by[e->kind][e->space]++;
	}
	add_counter(r, "modelled_cycles", (double)end);
	add_counter(r, "steps", (double)steps);
	add_counter(r, "adds", (double)adds);
	add_counter(r, "global_loads", (double)by[LM_TRACE_LOAD][LM_SPACE_GLOBAL]);
	add_counter(r, "global_stores", (double)by[LM_TRACE_STORE][LM_SPACE_GLOBAL]);
	add_counter(r, "shared_loads", (double)by[LM_TRACE_LOAD][LM_SPACE_SHARED]);
	add_counter(r, "shared_stores", (double)by[LM_TRACE_STORE][LM_SPACE_SHARED]);
	add_counter(r, "atomics", (double)by[LM_TRACE_ATOMIC][LM_SPACE_GLOBAL]);
	add_counter(r, "shared_atomics", (double)by[LM_TRACE_ATOMIC][LM_SPACE_SHARED]);
	add_counter(r, "barriers", (double)barriers);
	add_counter(r, "events", (double)lm_trace_seen(t));
	add_counter(r, "launches", (double)nl);
}

void vz_run_from_trace(lm_viz_run *r, lm_trace *t)
{
	memset(r, 0, sizeof *r);
	/* the trace's name: "<pattern> <algo> ..." ("scan kogge-stone inclusive float32") */
	const char *name = lm_trace_name(t);
	char word[2][32] = {"", ""};
	sscanf(name, "%31s %31s", word[0], word[1]);
	snprintf(r->pattern, sizeof r->pattern, "%s", word[0]);
	snprintf(r->algo, sizeof r->algo, "%s", word[1]);
	snprintf(r->source, sizeof r->source, "emu");
	snprintf(r->device, sizeof r->device, "SIMT emulator");
	snprintf(r->provenance, sizeof r->provenance, "emulated, modelled cycles (counted from the trace)");
	r->trace = lm_trace_retain(t);
	count_trace(r, t);
}

void lm_viz_run_from_trace(lm_viz_run *r, lm_trace *t)
{
	vz_run_from_trace(r, t);
	lm_trace_release(r->trace); /* borrowed */
}

void lm_viz_run_from_info(lm_viz_run *r, const lm_kernel_info *info)
{
	vz_run_from_info(r, info);
}

void lm_viz_run_clear(lm_viz_run *r)
{
	vz_run_clear(r);
}

void vz_run_clear(lm_viz_run *r)
{
	if (r->trace) lm_trace_release(r->trace);
	r->trace = NULL;
	if (r->owns_spans) vz_free(r->spans);
	r->spans = NULL;
	r->nspans = 0;
	r->owns_spans = false;
}

void vz_run_copy(lm_viz_run *dst, const lm_viz_run *src)
{
	*dst = *src;
	if (dst->trace) lm_trace_retain(dst->trace);
	dst->spans = NULL;
	dst->nspans = 0;
	dst->owns_spans = false;
	if (src->nspans > 0 && (dst->spans = vz_malloc((size_t)src->nspans * sizeof *dst->spans))) {
		memcpy(dst->spans, src->spans, (size_t)src->nspans * sizeof *dst->spans);
		dst->nspans = src->nspans;
		dst->owns_spans = true;
	}
}

/* ---------------------------------------------------------------- reading traces */

int vz_trace_array(const lm_trace *t, const char *name, int space, int launch)
{
	int n = lm_trace_array_count(t);
	for (int i = 0; i < n; i++) {
		lm_trace_array a;
		if (lm_trace_array_get(t, i, &a) != LM_OK) continue;
		if (strcmp(a.name, name) != 0) continue;
		if (space >= 0 && (int)a.space != space) continue;
		if (launch >= 0 && a.launch >= 0 && a.launch != launch) continue;
		return i;
	}
	return -1;
}

double *vz_trace_input(const lm_trace *t, const char *name, int64_t *n)
{
	return vz_trace_values(t, name, LM_SPACE_GLOBAL, n);
}

double *vz_trace_values(const lm_trace *t, const char *name, int space, int64_t *n)
{
	int id = vz_trace_array(t, name, space, -1);
	lm_trace_array a;
	if (id < 0 || lm_trace_array_get(t, id, &a) != LM_OK) {
		lm_set_error(LM_ERR_ARG, "the trace has no %s array '%s'", lm_trace_space_name(space), name);
		return NULL;
	}
	double *v = vz_calloc((size_t)(a.length > 0 ? a.length : 1), sizeof *v);
	bool *seen = vz_calloc((size_t)(a.length > 0 ? a.length : 1), sizeof *seen);
	if (!v || !seen) {
		vz_free(v);
		vz_free(seen);
		return NULL;
	}
	int64_t hi = 0, count = lm_trace_count(t);
	for (int64_t i = 0; i < count; i++) {
		const lm_trace_event *e = lm_trace_event_get(t, i);
		if (e->launch != 0 || e->array != id || e->kind != LM_TRACE_LOAD) continue;
		if ((int64_t)e->index >= a.length || seen[e->index]) continue;
		seen[e->index] = true;
		v[e->index] = e->value;
		if ((int64_t)e->index + 1 > hi) hi = (int64_t)e->index + 1;
	}
	vz_free(seen);
	if (hi == 0) {
		vz_free(v);
		lm_set_error(LM_ERR_ARG, "the trace holds no loads of '%s'", name);
		return NULL;
	}
	*n = hi;
	return v;
}

lm_status vz_trace_check(const lm_trace *t, const char *what)
{
	if (!t) return lm_set_error(LM_ERR_ARG, "%s: the run has no trace", what);
	if (lm_trace_count(t) == 0)
		return lm_set_error(LM_ERR_ARG, "%s: the trace is empty (0 events%s)", what,
		                    lm_trace_seen(t) > 0 ? ", all truncated away" : "");
	return LM_OK;
}
