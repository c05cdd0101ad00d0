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
 * Cycles (lumen/kernels.h, docs/trace.md): an issue costs its warp its kind's latency (a load
 * waits for its data, a store only issues; a global access one request per 128-byte line, a shared
 * one a wavefront per bank conflict; an atomic waits behind every earlier same-address atomic of
 * the block's phase) and costs the SM issue slots and, for global memory, sectors of its memory
 * pipe; the phase lasts as long as its slowest warp or the SM's issue or memory cycles, whichever
 * is longest, plus the barrier. simt.c overlaps the resident blocks of an SM (occupancy).
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
	uint64_t issue_total, mem_total; /* the phase's SM issue and memory-pipe cycles */
	uint64_t region_max;             /* the phase's longest time of a warp in the region */
	int32_t thread_adds[LM_KERNEL_MAX_BLOCK]; /* data adds of each thread in the phase */
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

/* Sorts k[0..n) (n <= 64; usually sorted already: a warp's lanes touch ascending addresses). */
static void sort_keys(uint64_t *k, int n)
{
	for (int i = 1; i < n; i++) {
		uint64_t v = k[i];
		int j = i;
		for (; j > 0 && k[j - 1] > v; j--) k[j] = k[j - 1];
		k[j] = v;
	}
}

/* The distinct 128-byte lines and 32-byte sectors a global warp instruction touches. Addresses are
 * byte offsets from each array's start (cudaMalloc aligns arrays to 256 bytes). */
static void global_footprint(const lmi_simt *s, const issue *is, int *lines, int *sectors)
{
	uint64_t key[32];
	int n = 0, sec = 0, lin = 0;
	for (uint32_t mk = is->mask; mk; mk &= mk - 1) {
		const lmi_raw_ev *r = &s->raw[is->ev[__builtin_ctz(mk)]];
		key[n++] = (uint64_t)r->range << 40 | ((uint64_t)r->index * r->size) >> 5;
	}
	sort_keys(key, n);
	for (int i = 0; i < n; i++) {
		sec += i == 0 || key[i] != key[i - 1];
		lin += i == 0 || key[i] >> 2 != key[i - 1] >> 2;
	}
	*lines = lin;
	*sectors = sec;
}

/* The wavefronts of a shared warp instruction: shared memory is 32 banks of 4-byte words (word w
 * in bank w % 32); lanes on one word share it (a broadcast), distinct words in one bank are
 * served one after another. 1 when conflict-free. */
static int bank_ways(const lmi_simt *s, const issue *is)
{
	uint64_t word[64];
	int n = 0, ways = 1;
	uint8_t per_bank[32] = {0};
	for (uint32_t mk = is->mask; mk; mk &= mk - 1) {
		const lmi_raw_ev *r = &s->raw[is->ev[__builtin_ctz(mk)]];
		uintptr_t base = r->range < s->nranges ? s->ranges[r->range].base : (uintptr_t)s->smem;
		uint64_t byte = (uint64_t)(base - (uintptr_t)s->smem) + (uint64_t)r->index * r->size;
		for (uint64_t w = byte / 4; w <= (byte + r->size - 1) / 4 && n < 64; w++) word[n++] = w;
	}
	sort_keys(word, n);
	for (int i = 0; i < n; i++) {
		if (i > 0 && word[i] == word[i - 1]) continue;
		int c = ++per_bank[word[i] % 32];
		if (c > ways) ways = c;
	}
	return ways;
}

/* The serialised cost of an atomic warp instruction: its lanes' places in the queues of their
 * addresses (recorded in aux), and the latency behind the longest queue ahead of any lane. */
static lm_status atomic_queue(lmi_simt *s, int w, const issue *is, double base, double *cost)
{
	simt_model *m = s->model;
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
	*cost = base * (double)(1 + worst); /* behind every earlier same-address atomic */
	return LM_OK;
}

/* What issue is costs: its warp's latency (*lat), the SM's issue slots (*slots), and the 32-byte
 * sectors of global memory it moves (*sectors); counts the transactions and bank conflicts. */
static lm_status cost_of(lmi_simt *s, int w, const issue *is, double *lat, double *slots,
                         int *sectors)
{
	const lm_latency_model *m = &s->lat;
	bool load = is->kind == LM_TRACE_LOAD;
	*slots = 1;
	*sectors = 0;
	switch (is->kind) {
	case LM_TRACE_LOAD:
	case LM_TRACE_STORE:
		if (is->space == LM_SPACE_GLOBAL) {
			int lines;
			global_footprint(s, is, &lines, sectors);
			*slots = lines; /* one request per line */
			*lat = load ? m->global + (lines - 1) * m->issue : lines * m->issue;
		} else if (is->space == LM_SPACE_SHARED) {
			int ways = bank_ways(s, is);
			s->c.bank_conflicts += ways - 1;
			*slots = ways; /* one wavefront per conflicting word of a bank */
			*lat = load ? m->shared + (ways - 1) * m->issue : ways * m->issue;
		} else { /* constant: a broadcast per distinct address, one after another */
			int d = distinct_addresses(s, is);
			*slots = d;
			*lat = m->constant * d;
		}
		break;
	case LM_TRACE_ATOMIC: {
		bool global = is->space == LM_SPACE_GLOBAL;
		lm_status st = atomic_queue(s, w, is, global ? m->global : m->shared, lat);
		if (st) return st;
		if (global) {
			int lines;
			global_footprint(s, is, &lines, sectors);
		}
		break;
	}
	default: *lat = m->arith; break; /* adds and branches */
	}
	s->c.global_transactions += *sectors;
	return LM_OK;
}

static lm_status time_warp(lmi_simt *s, int w)
{
	simt_model *m = s->model;
	uint64_t t = 0, region = 0;
	for (int32_t I = m->head[w]; I >= 0; I = m->iss[I].next) {
		issue *is = &m->iss[I];
		double lat = 0, slots = 1;
		int sectors = 0;
		lm_status st = cost_of(s, w, is, &lat, &slots, &sectors);
		if (st) return st;
		is->start = t;
		is->latency = lat < UINT32_MAX ? (uint32_t)lat : UINT32_MAX;
		t += is->latency;
		m->issue_total += (uint64_t)(slots * s->lat.issue);
		m->mem_total += (uint64_t)sectors * (uint64_t)s->lat.sector;
		if (is->line > s->region_lo && is->line < s->region_hi) region += is->latency;
	}
	m->wtime[w] = t;
	if (region > m->region_max) m->region_max = region;
	return LM_OK;
}

/* ---------------------------------------------------------------- pass 3: events, counters */

static void count_event(lmi_simt *s, const lmi_raw_ev *r, int thread, int64_t *adds, int64_t *idle)
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
		const addr_info *ai = &s->model->addrs[*slot];
		if (ai->distinct >= 2) {
			c->conflicts += global;
			c->shared_conflicts += shared;
		}
		int64_t *queue = global ? &c->atomic_queue : &c->shared_atomic_queue;
		if (ai->count > *queue) *queue = ai->count;
		break;
	}
	case LM_TRACE_ADD:
		if (r->aux) { /* on padding: issued, but not the textbook's work */
			c->idle_adds++;
			(*idle)++;
		} else {
			c->adds++;
			(*adds)++;
			s->model->thread_adds[thread]++;
		}
		break;
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

/* The step's trace events and counters, warp by warp; *adds, *idle, *depth: its data adds, its
 * adds on padding, and the most data adds of one thread. */
static void emit_step(lmi_simt *s, bool barrier, int line, uint64_t t0, uint64_t core,
                      int64_t *adds, int64_t *idle, int64_t *depth)
{
	simt_model *m = s->model;
	int nwarps = (s->nthreads + 31) / 32;
	memset(m->thread_adds, 0, (size_t)s->nthreads * sizeof m->thread_adds[0]);
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
				count_event(s, r, w * 32 + l, adds, idle);
				uint32_t aux = r->kind == LM_TRACE_BRANCH ? is->taken : r->aux;
				emit(s, r, w, l, t0 + is->start, is->latency, is->mask, aux);
			}
		}
		if (barrier) {
			int lanes = s->nthreads - w * 32 < 32 ? s->nthreads - w * 32 : 32;
			uint32_t all = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
			lmi_raw_ev wait = {.value = (double)(core - m->wtime[w]),
			                   .line = (uint16_t)line,
			                   .kind = LM_TRACE_BARRIER,
			                   .space = LM_SPACE_NONE,
			                   .array = LM_TRACE_NO_ARRAY};
			for (int l = 0; l < lanes; l++)
				emit(s, &wait, w, l, t0 + m->wtime[w], (uint32_t)s->lat.barrier, all, 0);
		}
	}
	*depth = 0;
	for (int t = 0; t < s->nthreads; t++)
		if (m->thread_adds[t] > *depth) *depth = m->thread_adds[t];
}

lm_status lmi_simt_model_step(lmi_simt *s, bool barrier, int line)
{
	simt_model *m = s->model;
	int nwarps = (s->nthreads + 31) / 32;
	lm_status st;
	m->niss = 0;
	m->naddrs = 0;
	m->issue_total = m->mem_total = m->region_max = 0;
	map_clear(&m->addr);
	for (int w = 0; w < nwarps; w++)
		if ((st = group_warp(s, w)) != LM_OK) return st;
	uint64_t slowest = 0;
	for (int w = 0; w < nwarps; w++) {
		if ((st = time_warp(s, w)) != LM_OK) return st;
		if (m->wtime[w] > slowest) slowest = m->wtime[w];
	}
	/* latency-bound (the slowest warp) or throughput-bound (the SM's issue or memory pipe) */
	uint64_t core = slowest;
	if (m->issue_total > core) core = m->issue_total;
	if (m->mem_total > core) core = m->mem_total;
	uint64_t cycles = core + (barrier ? (uint64_t)s->lat.barrier : 0);
	uint64_t t0 = s->block_start + s->block_cycles;
	int64_t first = s->trace ? lmi_trace_next_index(s->trace) : 0, adds = 0, idle = 0, depth = 0;
	emit_step(s, barrier, line, t0, core, &adds, &idle, &depth);
	if (barrier) s->c.barriers++;
	if (m->region_max > s->c.region_cycles) s->c.region_cycles = m->region_max;
	s->block_add_steps += depth;
	s->block_cycles += cycles;
	s->block_issue += m->issue_total;
	s->block_mem += m->mem_total;
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
			.depth = depth,
			.idle_adds = idle,
		};
		if ((st = lmi_trace_add_step(s->trace, &ts)) != LM_OK) return st;
	}
	return LM_OK;
}
