/*
 * simt_model.c — from the events of one barrier phase to warp instructions, modelled cycles, trace
 * events and counters.
 *
 * Design: the emulator runs threads one after another, but a GPU issues one instruction for all
 * the lanes of a warp that are on the same path. So the events of the lanes of a warp are grouped:
 * the k-th event at source line L of kind K of every lane is one warp instruction (an "issue"),
 * its active mask the lanes that have it. Lanes on different paths of a branch have different
 * (L, K, k) and get separate issues, executed one after the other: that is SIMT divergence, with
 * no reconvergence stack needed. The issues of a warp are ordered by merging the lanes' program
 * orders (a new issue goes just before the next one that lane shares with earlier lanes).
 * Cycles (lumen/kernels.h, docs/trace.md): an issue costs its kind's latency; an atomic waits
 * behind every earlier same-address atomic of the block's phase; the phase lasts as long as its
 * slowest warp, plus the barrier.
 * Read next: trace.c (where the events go), docs/trace.md.
 */
#include <string.h>

#include "core/lmi.h"
#include "kernels/simt_impl.h"

/* ---------------------------------------------------------------- a small hash map */
/* uint64 keys to int64 values; cleared in O(1) by bumping a stamp. */

typedef struct u64map {
	uint64_t *keys;
	int64_t *vals;
	uint32_t *stamps;
	uint32_t stamp;
	size_t cap, n;
} u64map;

static void map_free(u64map *m)
{
	if (m->keys) lm_free(m->keys, m->cap * sizeof *m->keys);
	if (m->vals) lm_free(m->vals, m->cap * sizeof *m->vals);
	if (m->stamps) lm_free(m->stamps, m->cap * sizeof *m->stamps);
	memset(m, 0, sizeof *m);
}

static bool map_alloc(u64map *m, size_t cap)
{
	m->cap = cap;
	m->keys = lm_alloc(cap * sizeof *m->keys);
	m->vals = lm_alloc(cap * sizeof *m->vals);
	m->stamps = lm_alloc(cap * sizeof *m->stamps);
	if (!m->keys || !m->vals || !m->stamps) return false;
	memset(m->stamps, 0, cap * sizeof *m->stamps);
	m->stamp = 1;
	m->n = 0;
	return true;
}

static void map_clear(u64map *m)
{
	m->n = 0;
	if (++m->stamp == 0) {
		memset(m->stamps, 0, m->cap * sizeof *m->stamps);
		m->stamp = 1;
	}
}

static inline size_t map_hash(uint64_t k, size_t cap)
{
	k ^= k >> 29;
	k *= 0xbf58476d1ce4e5b9ull;
	k ^= k >> 32;
	return (size_t)k & (cap - 1);
}

static bool map_grow(u64map *m)
{
	u64map n = {0};
	if (!map_alloc(&n, m->cap * 2)) {
		map_free(&n);
		return false;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->stamps[i] != m->stamp) continue;
		size_t h = map_hash(m->keys[i], n.cap);
		while (n.stamps[h] == n.stamp) h = (h + 1) & (n.cap - 1);
		n.stamps[h] = n.stamp;
		n.keys[h] = m->keys[i];
		n.vals[h] = m->vals[i];
		n.n++;
	}
	map_free(m);
	*m = n;
	return true;
}

/* The value slot of key (found: whether it existed); NULL when memory ran out. */
static int64_t *map_slot(u64map *m, uint64_t key, bool *found)
{
	if ((m->n + 1) * 2 > m->cap && !map_grow(m)) return NULL;
	size_t h = map_hash(key, m->cap);
	while (m->stamps[h] == m->stamp) {
		if (m->keys[h] == key) {
			*found = true;
			return &m->vals[h];
		}
		h = (h + 1) & (m->cap - 1);
	}
	m->stamps[h] = m->stamp;
	m->keys[h] = key;
	m->n++;
	*found = false;
	return &m->vals[h];
}

/* ---------------------------------------------------------------- the model's tables */

typedef struct issue {
	int32_t ev[32];      /* raw event of each lane (-1: lane inactive) */
	uint32_t mask, taken;
	int32_t next, prev;  /* the warp's issue order */
	uint64_t start;      /* cycles from the start of the phase */
	uint32_t latency;
	uint16_t line;
	uint8_t kind, space;
} issue;

typedef struct addr_info {
	int64_t count;    /* atomics on the address so far in this phase */
	int32_t distinct; /* threads among them */
	int32_t last_tid;
} addr_info;

struct simt_model {
	issue *iss;
	int64_t niss, iss_cap;
	addr_info *addrs;
	int64_t naddrs, addrs_cap;
	u64map issue_map, occ, addr;
	int32_t head[LM_KERNEL_MAX_BLOCK / 32];
	uint64_t wtime[LM_KERNEL_MAX_BLOCK / 32];
};

lm_status lmi_simt_model_new(lmi_simt *s)
{
	simt_model *m = lm_alloc(sizeof *m);
	if (!m) return LM_ERR_NOMEM;
	memset(m, 0, sizeof *m);
	s->model = m;
	m->iss_cap = 256;
	m->iss = lm_alloc((size_t)m->iss_cap * sizeof *m->iss);
	m->addrs_cap = 256;
	m->addrs = lm_alloc((size_t)m->addrs_cap * sizeof *m->addrs);
	if (!m->iss || !m->addrs || !map_alloc(&m->issue_map, 256) || !map_alloc(&m->occ, 64) ||
	    !map_alloc(&m->addr, 256))
		return LM_ERR_NOMEM;
	return LM_OK;
}

void lmi_simt_model_free(lmi_simt *s)
{
	simt_model *m = s->model;
	if (!m) return;
	if (m->iss) lm_free(m->iss, (size_t)m->iss_cap * sizeof *m->iss);
	if (m->addrs) lm_free(m->addrs, (size_t)m->addrs_cap * sizeof *m->addrs);
	map_free(&m->issue_map);
	map_free(&m->occ);
	map_free(&m->addr);
	lm_free(m, sizeof *m);
	s->model = NULL;
}

static bool grow(void **p, int64_t *cap, size_t elem, int64_t used)
{
	int64_t ncap = *cap * 2;
	void *n = lm_alloc((size_t)ncap * elem);
	if (!n) return false;
	memcpy(n, *p, (size_t)used * elem);
	lm_free(*p, (size_t)*cap * elem);
	*p = n;
	*cap = ncap;
	return true;
}

static int32_t new_issue(simt_model *m, const lmi_raw_ev *r)
{
	if (m->niss == m->iss_cap && !grow((void **)&m->iss, &m->iss_cap, sizeof *m->iss, m->niss))
		return -1;
	issue *is = &m->iss[m->niss];
	memset(is->ev, 0xff, sizeof is->ev);
	is->mask = is->taken = 0;
	is->next = is->prev = -1;
	is->start = 0;
	is->latency = 0;
	is->line = r->line;
	is->kind = r->kind;
	is->space = r->space;
	return (int32_t)m->niss++;
}

static inline uint64_t addr_key(const lmi_raw_ev *r)
{
	return (uint64_t)r->space << 56 | (uint64_t)r->array << 48 | r->index;
}

static lm_status nomem(const lmi_simt *s)
{
	return lmi_fail(LM_ERR_NOMEM, "%s: out of memory modelling a barrier phase", s->fname);
}

/* ---------------------------------------------------------------- pass 1: warp instructions */

static lm_status group_warp(lmi_simt *s, int w)
{
	simt_model *m = s->model;
	int32_t head = -1, tail = -1;
	map_clear(&m->issue_map);
	for (int l = 0; l < 32 && w * 32 + l < s->nthreads; l++) {
		const simt_thread *th = &s->threads[w * 32 + l];
		int32_t ph = -1, pt = -1; /* issues new with this lane, not yet placed */
		map_clear(&m->occ);
		for (int64_t e = th->ev_start; e < th->ev_end; e++) {
			const lmi_raw_ev *r = &s->raw[e];
			bool found;
			uint64_t site = (uint64_t)r->line << 3 | r->kind;
			int64_t *occ = map_slot(&m->occ, site, &found);
			if (!occ) return nomem(s);
			if (!found) *occ = 0;
			uint64_t key = site << 40 | (uint64_t)(*occ)++;
			int64_t *slot = map_slot(&m->issue_map, key, &found);
			if (!slot) return nomem(s);
			int32_t I;
			if (found) {
				I = (int32_t)*slot;
				if (ph >= 0) { /* place the new ones just before this shared issue */
					int32_t prev = m->iss[I].prev;
					if (prev >= 0) m->iss[prev].next = ph;
					else head = ph;
					m->iss[ph].prev = prev;
					m->iss[pt].next = I;
					m->iss[I].prev = pt;
					ph = pt = -1;
				}
			} else {
				I = new_issue(m, r);
				if (I < 0) return nomem(s);
				*slot = I;
				if (pt >= 0) {
					m->iss[pt].next = I;
					m->iss[I].prev = pt;
				} else {
					ph = I;
				}
				pt = I;
			}
			issue *is = &m->iss[I];
			is->mask |= 1u << l;
			is->ev[l] = (int32_t)e;
			if (r->kind == LM_TRACE_BRANCH && r->aux) is->taken |= 1u << l;
		}
		if (ph >= 0) { /* the rest of this lane's issues go last */
			if (tail >= 0) m->iss[tail].next = ph;
			else head = ph;
			m->iss[ph].prev = tail;
			tail = pt;
		}
	}
	m->head[w] = head;
	return LM_OK;
}

/* ---------------------------------------------------------------- pass 2: cycles */

static int distinct_addresses(const lmi_simt *s, const issue *is)
{
	int n = 0;
	for (int a = 0; a < 32; a++) {
		if (is->ev[a] < 0) continue;
		const lmi_raw_ev *ra = &s->raw[is->ev[a]];
		bool seen = false;
		for (int b = 0; b < a && !seen; b++)
			seen = is->ev[b] >= 0 && s->raw[is->ev[b]].index == ra->index &&
			       s->raw[is->ev[b]].array == ra->array;
		n += !seen;
	}
	return n;
}

static lm_status time_warp(lmi_simt *s, int w)
{
	simt_model *m = s->model;
	const lm_latency_model *lat = &s->lat;
	uint64_t t = 0;
	for (int32_t I = m->head[w]; I >= 0; I = m->iss[I].next) {
		issue *is = &m->iss[I];
		double base = is->space == LM_SPACE_GLOBAL   ? lat->global
		              : is->space == LM_SPACE_SHARED ? lat->shared
		                                             : lat->constant;
		double cost;
		switch (is->kind) {
		case LM_TRACE_LOAD:
		case LM_TRACE_STORE:
			/* constant memory broadcasts one address; each further distinct one is serialised */
			cost = is->space == LM_SPACE_CONSTANT ? base * distinct_addresses(s, is) : base;
			break;
		case LM_TRACE_ATOMIC: {
			int64_t worst = 0;
			for (int l = 0; l < 32; l++) {
				if (is->ev[l] < 0) continue;
				lmi_raw_ev *r = &s->raw[is->ev[l]];
				bool found;
				int64_t *slot = map_slot(&m->addr, addr_key(r), &found);
				if (!slot) return nomem(s);
				if (!found) {
					if (m->naddrs == m->addrs_cap &&
					    !grow((void **)&m->addrs, &m->addrs_cap, sizeof *m->addrs, m->naddrs))
						return nomem(s);
					*slot = m->naddrs;
					m->addrs[m->naddrs++] = (addr_info){0, 0, -1};
				}
				addr_info *ai = &m->addrs[*slot];
				int32_t tid = w * 32 + l;
				if (ai->last_tid != tid) {
					ai->distinct++;
					ai->last_tid = tid;
				}
				r->aux = (uint32_t)(ai->count < UINT32_MAX ? ai->count : UINT32_MAX);
				if (ai->count > worst) worst = ai->count;
				ai->count++;
			}
			cost = base * (double)(1 + worst); /* behind every earlier same-address atomic */
			break;
		}
		default: cost = lat->arith; break; /* adds and branches */
		}
		is->start = t;
		is->latency = cost < UINT32_MAX ? (uint32_t)cost : UINT32_MAX;
		t += is->latency;
	}
	m->wtime[w] = t;
	return LM_OK;
}

/* ---------------------------------------------------------------- pass 3: events, counters */

static void count_event(lmi_simt *s, const lmi_raw_ev *r, int64_t *adds)
{
	lmi_simt_counters *c = &s->c;
	bool global = r->space == LM_SPACE_GLOBAL, shared = r->space == LM_SPACE_SHARED;
	switch (r->kind) {
	case LM_TRACE_LOAD:
		c->global_loads += global;
		c->shared_loads += shared;
		c->constant_loads += r->space == LM_SPACE_CONSTANT;
		if (global) c->bytes += r->size;
		break;
	case LM_TRACE_STORE:
		c->global_stores += global;
		c->shared_stores += shared;
		if (global) c->bytes += r->size;
		break;
	case LM_TRACE_ATOMIC: {
		c->atomics += global;
		c->shared_atomics += shared;
		if (global) c->bytes += 2 * r->size; /* read-modify-write */
		bool found;
		int64_t *slot = map_slot(&s->model->addr, addr_key(r), &found);
		LM_ASSERT(slot && found); /* entered by time_warp */
		if (s->model->addrs[*slot].distinct >= 2) {
			c->conflicts += global;
			c->shared_conflicts += shared;
		}
		break;
	}
	case LM_TRACE_ADD: c->adds++, (*adds)++; break;
	case LM_TRACE_BRANCH: c->branches++; break;
	default: break;
	}
}

static void emit(lmi_simt *s, const lmi_raw_ev *r, int w, int l, uint64_t cycle, uint32_t latency,
                 uint32_t mask, uint32_t aux)
{
	s->c.events++;
	if (!s->trace) return;
	lm_trace_event *e = lmi_trace_push(s->trace);
	if (!e) return;
	e->value = r ? r->value : 0;
	e->cycle = cycle;
	e->latency = latency;
	e->index = r ? r->index : 0;
	e->block = s->block_linear;
	e->step = s->step;
	e->mask = mask;
	e->aux = aux;
	e->warp = (uint16_t)w;
	e->line = r ? r->line : 0;
	e->lane = (uint8_t)l;
	e->kind = r ? r->kind : LM_TRACE_BARRIER;
	e->space = r ? r->space : LM_SPACE_NONE;
	e->array = r ? r->array : LM_TRACE_NO_ARRAY;
	e->launch = (uint8_t)s->launch_no;
}

lm_status lmi_simt_model_step(lmi_simt *s, bool barrier, int line)
{
	simt_model *m = s->model;
	int nwarps = (s->nthreads + 31) / 32;
	lm_status st;
	m->niss = 0;
	m->naddrs = 0;
	map_clear(&m->addr);
	for (int w = 0; w < nwarps; w++)
		if ((st = group_warp(s, w)) != LM_OK) return st;
	uint64_t slowest = 0;
	for (int w = 0; w < nwarps; w++) {
		if ((st = time_warp(s, w)) != LM_OK) return st;
		if (m->wtime[w] > slowest) slowest = m->wtime[w];
	}
	uint64_t cycles = slowest + (barrier ? (uint64_t)s->lat.barrier : 0);
	uint64_t t0 = s->block_start + s->block_cycles;
	int64_t first = s->trace ? lmi_trace_next_index(s->trace) : 0, adds = 0;
	for (int w = 0; w < nwarps; w++) {
		for (int32_t I = m->head[w]; I >= 0; I = m->iss[I].next) {
			const issue *is = &m->iss[I];
			s->c.active_lanes += __builtin_popcount(is->mask);
			s->c.issued_lanes += 32;
			if (is->line > s->region_lo && is->line < s->region_hi) {
				s->c.region_active += __builtin_popcount(is->mask);
				s->c.region_issued += 32;
			}
			if (is->kind == LM_TRACE_BRANCH && is->taken && is->taken != is->mask)
				s->c.divergent_branches++;
			for (uint32_t mk = is->mask; mk; mk &= mk - 1) {
				int l = __builtin_ctz(mk);
				const lmi_raw_ev *r = &s->raw[is->ev[l]];
				count_event(s, r, &adds);
				uint32_t aux = r->kind == LM_TRACE_BRANCH ? is->taken : r->aux;
				emit(s, r, w, l, t0 + is->start, is->latency, is->mask, aux);
			}
		}
		if (barrier) {
			int lanes = s->nthreads - w * 32 < 32 ? s->nthreads - w * 32 : 32;
			uint32_t all = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
			lmi_raw_ev wait = {.value = (double)(slowest - m->wtime[w]),
			                   .line = (uint16_t)line,
			                   .kind = LM_TRACE_BARRIER,
			                   .space = LM_SPACE_NONE,
			                   .array = LM_TRACE_NO_ARRAY};
			for (int l = 0; l < lanes; l++)
				emit(s, &wait, w, l, t0 + m->wtime[w], (uint32_t)s->lat.barrier, all, 0);
		}
	}
	if (barrier) s->c.barriers++;
	if (adds) s->block_add_steps++;
	s->block_cycles += cycles;
	if (s->trace) {
		lm_trace_step ts = {
			.launch = s->launch_no,
			.block = s->block_linear,
			.step = s->step,
			.first = first,
			.count = lmi_trace_next_index(s->trace) - first,
			.start_cycle = t0,
			.cycles = cycles,
			.adds = adds,
			.barrier = barrier,
		};
		if ((st = lmi_trace_add_step(s->trace, &ts)) != LM_OK) return st;
	}
	return LM_OK;
}
