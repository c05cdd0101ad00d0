/*
 * simt_race.c — the emulator's race check, as compute-sanitizer's racecheck does it on a GPU: two
 * threads of a block touch the same element of global or shared memory in one barrier phase, at
 * least one of them writing (a plain store; an atomic counts as a write against plain accesses,
 * never against another atomic). No barrier orders the two, so on a GPU either may come first:
 * the result depends on timing. This is what a student sees after deleting a __syncthreads()
 * (t:sync() in a Lua kernel).
 *
 * Design: at the end of each phase (simt.c, run_block, when s->racecheck) the raw events are read
 * thread by thread, in thread order, into a table keyed by (array range, index) holding the first
 * thread that read, wrote and updated atomically each element. Because the threads come in order,
 * "some other thread read it" is "the first reader is not me", so one record per element suffices.
 * The table is cleared in O(1) by a stamp. Read-only arrays are skipped (they cannot race).
 * Blocks run one after another in the emulator and are not checked against each other.
 * The first race found fails the launch with both threads, both lines, the array and the index.
 * Read next: simt.c (where it is called), docs/trace.md ("The race check").
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/lmi.h"
#include "kernels/simt_impl.h"

static atomic_bool racecheck_on = true;

bool lm_kernel_set_racecheck(bool on) { return atomic_exchange(&racecheck_on, on); }
bool lm_kernel_racecheck(void) { return atomic_load(&racecheck_on); }

/* What the threads of the phase did to one element: the first thread of each kind of access
 * (-1: none yet) and the line it did it on. */
typedef struct race_slot {
	uint64_t key;
	uint32_t stamp;
	int16_t reader, writer, atomic;
	uint16_t read_line, write_line, atomic_line;
} race_slot;

typedef struct simt_race {
	race_slot *slots;
	size_t cap, n;
	uint32_t stamp;
} simt_race;

void lmi_simt_race_free(lmi_simt *s)
{
	simt_race *r = s->race;
	if (!r) return;
	if (r->slots) lm_free(r->slots, r->cap * sizeof *r->slots);
	lm_free(r, sizeof *r);
	s->race = NULL;
}

static bool table_alloc(simt_race *r, size_t cap)
{
	r->slots = lm_alloc(cap * sizeof *r->slots);
	if (!r->slots) return false;
	memset(r->slots, 0, cap * sizeof *r->slots);
	r->cap = cap;
	r->n = 0;
	r->stamp = 1;
	return true;
}

static inline size_t slot_hash(uint64_t k, size_t cap)
{
	k ^= k >> 31;
	k *= 0x9e3779b97f4a7c15ull;
	k ^= k >> 29;
	return (size_t)k & (cap - 1);
}

/* Doubles the table, keeping this phase's records. */
static bool table_grow(simt_race *r)
{
	simt_race n = {0};
	if (!table_alloc(&n, r->cap * 2)) return false;
	n.stamp = r->stamp;
	for (size_t i = 0; i < r->cap; i++) {
		if (r->slots[i].stamp != r->stamp) continue;
		size_t h = slot_hash(r->slots[i].key, n.cap);
		while (n.slots[h].stamp == n.stamp) h = (h + 1) & (n.cap - 1);
		n.slots[h] = r->slots[i];
		n.n++;
	}
	lm_free(r->slots, r->cap * sizeof *r->slots);
	*r = n;
	return true;
}

/* The record of key (a fresh one when it is new this phase), or NULL when memory ran out. */
static race_slot *slot_of(simt_race *r, uint64_t key)
{
	if ((r->n + 1) * 2 > r->cap && !table_grow(r)) return NULL;
	size_t h = slot_hash(key, r->cap);
	while (r->slots[h].stamp == r->stamp) {
		if (r->slots[h].key == key) return &r->slots[h];
		h = (h + 1) & (r->cap - 1);
	}
	race_slot *sl = &r->slots[h];
	*sl = (race_slot){.key = key, .stamp = r->stamp, .reader = -1, .writer = -1, .atomic = -1};
	r->n++;
	return sl;
}

static lm_status begin_phase(lmi_simt *s)
{
	simt_race *r = s->race;
	if (!r) {
		if (!(r = lm_alloc(sizeof *r))) return LM_ERR_NOMEM;
		memset(r, 0, sizeof *r);
		if (!table_alloc(r, 1024)) {
			lm_free(r, sizeof *r);
			return LM_ERR_NOMEM;
		}
		s->race = r;
	}
	r->n = 0;
	if (++r->stamp == 0) { /* wrapped: every old stamp could match again */
		memset(r->slots, 0, r->cap * sizeof *r->slots);
		r->stamp = 1;
	}
	return LM_OK;
}

static const char *verb(int kind)
{
	return kind == LM_TRACE_LOAD ? "read" : kind == LM_TRACE_STORE ? "wrote" : "updated (atomicAdd)";
}

/* Fails the launch: thread `first` did kind1 on line1, then thread `second` did kind2 on line2. */
static lm_status report(lmi_simt *s, const lmi_raw_ev *e, int first, int kind1, int line1,
                        int second, int kind2)
{
	const simt_range *rg = &s->ranges[e->range];
	const lmi_dim3 a = s->threads[first].idx, b = s->threads[second].idx, k = s->block_idx;
	const char *hazard = kind1 == LM_TRACE_LOAD ? "write-after-read"
	                     : kind2 == LM_TRACE_LOAD ? "read-after-write"
	                     : kind1 == LM_TRACE_STORE && kind2 == LM_TRACE_STORE ? "write-after-write"
	                                                                          : "atomic and plain";
	snprintf(s->fault_msg, sizeof s->fault_msg,
	         "%s race on %s array '%s' at index %u (0-based) in block (%u,%u,%u) (kernel %s): thread "
	         "(%u,%u,%u) %s it at line %d and thread (%u,%u,%u) %s it at line %d in the same barrier "
	         "phase (phase %u of the block, counted from 0), so on a GPU either may come first; a barrier between them "
	         "(__syncthreads, t:sync()) orders them",
	         hazard, lm_trace_space_name(rg->space), rg->name, e->index, k.x, k.y, k.z, s->L->kernel,
	         a.x, a.y, a.z, verb(kind1), line1, b.x, b.y, b.z, verb(kind2), e->line, s->step);
	s->fault_status = LM_ERR_STATE;
	return LM_ERR_STATE;
}

/* One access of thread t: a race with an earlier thread's access of the element, or LM_OK. */
static lm_status check_event(lmi_simt *s, const lmi_raw_ev *e, int t)
{
	race_slot *sl = slot_of(s->race, (uint64_t)e->range << 32 | e->index);
	if (!sl) {
		snprintf(s->fault_msg, sizeof s->fault_msg, "out of memory checking races in block (%u,%u,%u)",
		         s->block_idx.x, s->block_idx.y, s->block_idx.z);
		return s->fault_status = LM_ERR_NOMEM;
	}
	/* the first of each kind is the lowest thread: "not t" means another thread did it */
	switch (e->kind) {
	case LM_TRACE_LOAD:
		if (sl->writer >= 0 && sl->writer != t)
			return report(s, e, sl->writer, LM_TRACE_STORE, sl->write_line, t, LM_TRACE_LOAD);
		if (sl->atomic >= 0 && sl->atomic != t)
			return report(s, e, sl->atomic, LM_TRACE_ATOMIC, sl->atomic_line, t, LM_TRACE_LOAD);
		if (sl->reader < 0) sl->reader = (int16_t)t, sl->read_line = e->line;
		break;
	case LM_TRACE_STORE:
		if (sl->reader >= 0 && sl->reader != t)
			return report(s, e, sl->reader, LM_TRACE_LOAD, sl->read_line, t, LM_TRACE_STORE);
		if (sl->writer >= 0 && sl->writer != t)
			return report(s, e, sl->writer, LM_TRACE_STORE, sl->write_line, t, LM_TRACE_STORE);
		if (sl->atomic >= 0 && sl->atomic != t)
			return report(s, e, sl->atomic, LM_TRACE_ATOMIC, sl->atomic_line, t, LM_TRACE_STORE);
		if (sl->writer < 0) sl->writer = (int16_t)t, sl->write_line = e->line;
		break;
	default: /* an atomic: against plain accesses of other threads only */
		if (sl->reader >= 0 && sl->reader != t)
			return report(s, e, sl->reader, LM_TRACE_LOAD, sl->read_line, t, LM_TRACE_ATOMIC);
		if (sl->writer >= 0 && sl->writer != t)
			return report(s, e, sl->writer, LM_TRACE_STORE, sl->write_line, t, LM_TRACE_ATOMIC);
		if (sl->atomic < 0) sl->atomic = (int16_t)t, sl->atomic_line = e->line;
		break;
	}
	return LM_OK;
}

lm_status lmi_simt_race_phase(lmi_simt *s)
{
	if (s->nthreads < 2) return LM_OK; /* one thread cannot race with itself */
	if (begin_phase(s) != LM_OK) {
		snprintf(s->fault_msg, sizeof s->fault_msg, "out of memory for the race check");
		return s->fault_status = LM_ERR_NOMEM;
	}
	for (int t = 0; t < s->nthreads; t++) {
		const simt_thread *th = &s->threads[t];
		for (int64_t i = th->ev_start; i < th->ev_end; i++) {
			const lmi_raw_ev *e = &s->raw[i];
			if (e->kind != LM_TRACE_LOAD && e->kind != LM_TRACE_STORE && e->kind != LM_TRACE_ATOMIC)
				continue;
			if (e->space == LM_SPACE_CONSTANT || s->ranges[e->range].readonly) continue;
			lm_status st = check_event(s, e, t);
			if (st) return st;
		}
	}
	return LM_OK;
}
