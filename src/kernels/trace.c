/*
 * trace.c — storage and reading of kernel traces (the record is documented in docs/trace.md).
 *
 * Design: a refcounted object (the Lua userdata for info.trace may outlive the info) holding
 * chunks of fixed-size lm_trace_event records, a table of arrays, one of launches and one of
 * steps. All memory comes from the counting allocator. Reading is by index, by filter
 * (lm_trace_find walks forward from an index) and by step.
 * Read next: simt_model.c (the writer), lumen/kernels.h (the reader's view).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/lmi.h"
#include "kernels/trace.h"

#define NAME_MAX_ 48

typedef struct trace_array {
	lm_trace_array a;
	char name[NAME_MAX_];
} trace_array;

typedef struct trace_launch {
	lm_trace_launch l;
	char kernel[NAME_MAX_];
} trace_launch;

struct lm_trace {
	atomic_long refcount;
	char name[96];
	lm_dtype dtype;
	lm_latency_model lat;
	int64_t cap, count, seen;
	int64_t chunk_cap; /* the cap chunks were sized for (cap may shrink when memory runs out) */
	lm_trace_event **chunks;
	int64_t nchunks_max, nchunks;
	trace_array arrays[LMI_TRACE_MAX_ARRAYS];
	int narrays;
	trace_launch launches[LMI_TRACE_MAX_LAUNCHES];
	int nlaunches;
	lm_trace_step *steps;
	int64_t nsteps, steps_cap;
};

/* ---------------------------------------------------------------- writing */

lm_trace *lmi_trace_new(const char *name, lm_dtype dt, int64_t cap, const lm_latency_model *lat)
{
	if (cap < 1) return lmi_fail_null(LM_ERR_ARG, "trace: cap %lld must be >= 1", (long long)cap);
	lm_trace *t = lm_alloc(sizeof *t);
	if (!t) return lmi_fail_null(LM_ERR_NOMEM, "trace: out of memory");
	memset(t, 0, sizeof *t);
	atomic_init(&t->refcount, 1);
	snprintf(t->name, sizeof t->name, "%s", name);
	t->dtype = dt;
	t->lat = *lat;
	t->cap = t->chunk_cap = cap;
	t->nchunks_max = (cap + LMI_TRACE_CHUNK - 1) / LMI_TRACE_CHUNK;
	t->chunks = lm_alloc((size_t)t->nchunks_max * sizeof *t->chunks);
	if (!t->chunks) {
		lm_free(t, sizeof *t);
		return lmi_fail_null(LM_ERR_NOMEM, "trace: out of memory for %lld events", (long long)cap);
	}
	return t;
}

static size_t chunk_events(const lm_trace *t, int64_t c)
{
	/* The last chunk holds only what the cap leaves (a small cap keeps a small trace). */
	int64_t left = t->chunk_cap - c * LMI_TRACE_CHUNK;
	return (size_t)(left < LMI_TRACE_CHUNK ? left : LMI_TRACE_CHUNK);
}

lm_trace_event *lmi_trace_push(lm_trace *t)
{
	t->seen++;
	if (t->count >= t->cap) return NULL;
	int64_t c = t->count >> LMI_TRACE_CHUNK_LOG;
	if (c >= t->nchunks) {
		lm_trace_event *chunk = lm_alloc(chunk_events(t, c) * sizeof *chunk);
		if (!chunk) {
			t->cap = t->count; /* out of memory: truncate here rather than fail the run */
			return NULL;
		}
		t->chunks[t->nchunks++] = chunk;
	}
	lm_trace_event *e = &t->chunks[c][t->count & (LMI_TRACE_CHUNK - 1)];
	t->count++;
	memset(e, 0, sizeof *e);
	return e;
}

int64_t lmi_trace_next_index(const lm_trace *t) { return t->count; }

int lmi_trace_add_array(lm_trace *t, const lm_trace_array *a)
{
	if (t->narrays >= LMI_TRACE_MAX_ARRAYS) {
		lmi_fail(LM_ERR_ARG, "trace: more than %d arrays", LMI_TRACE_MAX_ARRAYS);
		return -1;
	}
	trace_array *ta = &t->arrays[t->narrays];
	ta->a = *a;
	snprintf(ta->name, sizeof ta->name, "%s", a->name ? a->name : "?");
	ta->a.name = ta->name;
	return t->narrays++;
}

int lmi_trace_begin_launch(lm_trace *t, const lm_trace_launch *l, uint64_t start_cycle)
{
	if (t->nlaunches >= LMI_TRACE_MAX_LAUNCHES) {
		lmi_fail(LM_ERR_ARG, "trace: more than %d kernel launches in one call",
		         LMI_TRACE_MAX_LAUNCHES);
		return -1;
	}
	trace_launch *tl = &t->launches[t->nlaunches];
	tl->l = *l;
	snprintf(tl->kernel, sizeof tl->kernel, "%s", l->kernel ? l->kernel : "?");
	tl->l.kernel = tl->kernel;
	tl->l.start_cycle = tl->l.end_cycle = start_cycle;
	tl->l.first_step = t->nsteps;
	tl->l.nsteps = 0;
	return t->nlaunches++;
}

void lmi_trace_end_launch(lm_trace *t, uint64_t end_cycle)
{
	LM_ASSERT(t->nlaunches > 0);
	trace_launch *tl = &t->launches[t->nlaunches - 1];
	tl->l.end_cycle = end_cycle;
	tl->l.nsteps = t->nsteps - tl->l.first_step;
}

lm_status lmi_trace_add_step(lm_trace *t, const lm_trace_step *s)
{
	if (t->nsteps == t->steps_cap) {
		int64_t ncap = t->steps_cap ? t->steps_cap * 2 : 64;
		lm_trace_step *n = lm_alloc((size_t)ncap * sizeof *n);
		if (!n) return lmi_fail(LM_ERR_NOMEM, "trace: out of memory for %lld steps", (long long)ncap);
		if (t->steps) {
			memcpy(n, t->steps, (size_t)t->nsteps * sizeof *n);
			lm_free(t->steps, (size_t)t->steps_cap * sizeof *n);
		}
		t->steps = n;
		t->steps_cap = ncap;
	}
	t->steps[t->nsteps++] = *s;
	return LM_OK;
}

/* ---------------------------------------------------------------- lifetime */

lm_trace *lm_trace_retain(lm_trace *t)
{
	if (t) atomic_fetch_add(&t->refcount, 1);
	return t;
}

void lm_trace_release(lm_trace *t)
{
	if (!t || atomic_fetch_sub(&t->refcount, 1) != 1) return;
	for (int64_t c = 0; c < t->nchunks; c++)
		lm_free(t->chunks[c], chunk_events(t, c) * sizeof(lm_trace_event));
	lm_free(t->chunks, (size_t)t->nchunks_max * sizeof *t->chunks);
	if (t->steps) lm_free(t->steps, (size_t)t->steps_cap * sizeof *t->steps);
	lm_free(t, sizeof *t);
}

/* ---------------------------------------------------------------- reading */

int64_t lm_trace_count(const lm_trace *t) { return t->count; }
int64_t lm_trace_seen(const lm_trace *t) { return t->seen; }
bool lm_trace_truncated(const lm_trace *t) { return t->seen > t->count; }
int64_t lm_trace_cap(const lm_trace *t) { return t->cap; }
const char *lm_trace_name(const lm_trace *t) { return t->name; }
lm_dtype lm_trace_dtype(const lm_trace *t) { return t->dtype; }
void lm_trace_latency(const lm_trace *t, lm_latency_model *out) { *out = t->lat; }

static inline const lm_trace_event *ev_at(const lm_trace *t, int64_t i)
{
	return &t->chunks[i >> LMI_TRACE_CHUNK_LOG][i & (LMI_TRACE_CHUNK - 1)];
}

const lm_trace_event *lm_trace_event_get(const lm_trace *t, int64_t i)
{
	if (i < 0 || i >= t->count)
		return lmi_fail_null(LM_ERR_INDEX, "trace: event %lld out of range (%lld events)",
		                     (long long)i, (long long)t->count);
	return ev_at(t, i);
}

void lm_trace_filter_init(lm_trace_filter *f)
{
	f->kind = f->space = f->launch = f->array = -1;
	f->step = f->block = f->warp = f->lane = -1;
}

static bool matches(const lm_trace_event *e, const lm_trace_filter *f)
{
	return (f->kind < 0 || e->kind == f->kind) && (f->space < 0 || e->space == f->space) &&
	       (f->launch < 0 || e->launch == f->launch) && (f->array < 0 || e->array == f->array) &&
	       (f->step < 0 || e->step == f->step) && (f->block < 0 || e->block == f->block) &&
	       (f->warp < 0 || e->warp == f->warp) && (f->lane < 0 || e->lane == f->lane);
}

int64_t lm_trace_find(const lm_trace *t, const lm_trace_filter *f, int64_t from)
{
	if (from < 0) from = 0;
	for (int64_t i = from; i < t->count; i++)
		if (matches(ev_at(t, i), f)) return i;
	return -1;
}

int64_t lm_trace_step_count(const lm_trace *t) { return t->nsteps; }

lm_status lm_trace_step_get(const lm_trace *t, int64_t i, lm_trace_step *out)
{
	if (i < 0 || i >= t->nsteps)
		return lmi_fail(LM_ERR_INDEX, "trace: step %lld out of range (%lld steps)", (long long)i,
		                (long long)t->nsteps);
	*out = t->steps[i];
	return LM_OK;
}

int lm_trace_launch_count(const lm_trace *t) { return t->nlaunches; }

lm_status lm_trace_launch_get(const lm_trace *t, int i, lm_trace_launch *out)
{
	if (i < 0 || i >= t->nlaunches)
		return lmi_fail(LM_ERR_INDEX, "trace: launch %d out of range (%d launches)", i,
		                t->nlaunches);
	*out = t->launches[i].l;
	return LM_OK;
}

int lm_trace_array_count(const lm_trace *t) { return t->narrays; }

lm_status lm_trace_array_get(const lm_trace *t, int id, lm_trace_array *out)
{
	if (id < 0 || id >= t->narrays)
		return lmi_fail(LM_ERR_INDEX, "trace: array %d out of range (%d arrays)", id, t->narrays);
	*out = t->arrays[id].a;
	return LM_OK;
}

static const char *const kind_names[LM_TRACE_KIND_COUNT] = {
	[LM_TRACE_LOAD] = "load",     [LM_TRACE_STORE] = "store",     [LM_TRACE_ADD] = "add",
	[LM_TRACE_ATOMIC] = "atomic", [LM_TRACE_BARRIER] = "barrier", [LM_TRACE_BRANCH] = "branch",
};
static const char *const space_names[LM_SPACE_COUNT] = {
	[LM_SPACE_NONE] = "none",
	[LM_SPACE_GLOBAL] = "global",
	[LM_SPACE_SHARED] = "shared",
	[LM_SPACE_CONSTANT] = "constant",
};

const char *lm_trace_kind_name(int kind)
{
	return kind >= 0 && kind < LM_TRACE_KIND_COUNT ? kind_names[kind] : "?";
}

const char *lm_trace_space_name(int space)
{
	return space >= 0 && space < LM_SPACE_COUNT ? space_names[space] : "?";
}

lm_status lm_trace_kind_from_name(const char *name, int *out)
{
	for (int k = 0; name && k < LM_TRACE_KIND_COUNT; k++)
		if (strcmp(name, kind_names[k]) == 0) {
			*out = k;
			return LM_OK;
		}
	return lmi_fail(LM_ERR_ARG,
	                "trace: unknown event kind '%s' (expected load, store, add, atomic, barrier or "
	                "branch)",
	                name ? name : "(null)");
}

char *lm_trace_event_format(const lm_trace *t, int64_t i, char *buf, size_t cap)
{
	if (cap == 0) return buf;
	const lm_trace_event *e = lm_trace_event_get(t, i);
	if (!e) {
		snprintf(buf, cap, "(no event %lld)", (long long)i);
		return buf;
	}
	char where[80] = "";
	if (e->array != LM_TRACE_NO_ARRAY && e->array < t->narrays)
		snprintf(where, sizeof where, " %s %s[%u]", space_names[e->space],
		         t->arrays[e->array].name, e->index);
	char extra[40] = "";
	if (e->kind == LM_TRACE_BRANCH) snprintf(extra, sizeof extra, " taken %08x", e->aux);
	else if (e->kind == LM_TRACE_ATOMIC) snprintf(extra, sizeof extra, " behind %u", e->aux);
	else if (e->kind == LM_TRACE_ADD && e->aux) snprintf(extra, sizeof extra, " padding");
	snprintf(buf, cap, "L%u s%u b%u w%u l%-2u %-7s%s = %.9g  cyc %llu+%u mask %08x%s line %u",
	         e->launch, e->step, e->block, e->warp, e->lane, lm_trace_kind_name(e->kind), where,
	         e->value, (unsigned long long)e->cycle, e->latency, e->mask, extra, e->line);
	return buf;
}
