/*
 * simt_race.c — the emulator's race check, as compute-sanitizer's racecheck does it on a GPU: two
 * accesses to the same element of global or shared memory that nothing orders, at least one of
 * them a write (a plain store; an atomic counts as a write against plain accesses, never against
 * another atomic). Two threads of a block are unordered within one barrier phase; two blocks are
 * never ordered (a GPU runs them in any order, and at the same time), so their plain accesses to
 * one global element conflict in any phases. Either may come first: the result depends on timing.
 * This is what a student sees after deleting a __syncthreads() (t:sync() in a Lua kernel), or a
 * merge into a global histogram without atomics.
 *
 * Design: at the end of each phase (simt.c, run_block, when s->racecheck) the raw events are read
 * thread by thread, in thread order, into a table keyed by (array range, index) holding the first
 * thread that read, wrote and updated atomically each element. Because the threads come in order,
 * "some other thread read it" is "the first reader is not me", so one record per element suffices.
 * The table is cleared in O(1) by a stamp. Read-only arrays are skipped (they cannot race). The
 * global accesses also go into a second table that lives for the whole launch, keyed the same way,
 * holding the first block (and its thread and line) that read, wrote and updated each element;
 * blocks come in order too, so the same argument holds for blocks.
 * The first race found fails the launch, naming both threads (and blocks), both lines, the array
 * and the index, and what fixes it: an atomic for a read-modify-write (h[v] = h[v] + 1, which no
 * barrier can order), a guard when several threads store one element, a barrier when one thread
 * reads what another writes in the same phase, another launch (or atomics) across blocks.
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

/* What the threads of the phase (the blocks of the launch) did to one element: the first of each
 * kind of access (-1: none yet), and the line; in the launch table also the thread of that block. */
typedef struct race_slot {
	uint64_t key;
	uint32_t stamp;
	int32_t reader, writer, atomic; /* a thread (phase table) or a block (launch table) */
	uint16_t read_line, write_line, atomic_line;
	uint16_t read_thread, write_thread, atomic_thread; /* launch table: the thread of the block */
} race_slot;

typedef struct race_table {
	race_slot *slots;
	size_t cap, n;
	uint32_t stamp;
} race_table;

typedef struct simt_race {
	race_table phase;  /* the threads of the block's current phase */
	race_table launch; /* the blocks of the launch, global arrays only */
} simt_race;

static void table_free(race_table *t)
{
	if (t->slots) lm_free(t->slots, t->cap * sizeof *t->slots);
	memset(t, 0, sizeof *t);
}

void lmi_simt_race_free(lmi_simt *s)
{
	simt_race *r = s->race;
	if (!r) return;
	table_free(&r->phase);
	table_free(&r->launch);
	lm_free(r, sizeof *r);
	s->race = NULL;
}

static bool table_alloc(race_table *r, size_t cap)
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

/* Doubles the table, keeping the current records. */
static bool table_grow(race_table *r)
{
	race_table n = {0};
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

/* The record of key (a fresh one when it is new), or NULL when memory ran out. */
static race_slot *slot_of(race_table *r, uint64_t key)
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

/* Forgets every record (O(1): a new stamp). */
static void table_clear(race_table *r)
{
	r->n = 0;
	if (++r->stamp == 0) { /* wrapped: every old stamp could match again */
		memset(r->slots, 0, r->cap * sizeof *r->slots);
		r->stamp = 1;
	}
}

static bool race_state(lmi_simt *s)
{
	if (s->race) return true;
	simt_race *r = lm_alloc(sizeof *r);
	if (!r) return false;
	memset(r, 0, sizeof *r);
	if (!table_alloc(&r->phase, 1024) || !table_alloc(&r->launch, 1024)) {
		table_free(&r->phase);
		table_free(&r->launch);
		lm_free(r, sizeof *r);
		return false;
	}
	s->race = r;
	return true;
}

void lmi_simt_race_launch(lmi_simt *s)
{
	if (s->race) table_clear(&s->race->launch);
}

/* ---------------------------------------------------------------- the report */

static const char *verb(int kind)
{
	return kind == LM_TRACE_LOAD ? lmi_tr("read", "读了") : kind == LM_TRACE_STORE ? lmi_tr("wrote", "写了")
	                                                                         : lmi_tr("updated (atomicAdd)", "原子地更新了（atomicAdd）");
}

static const char *space_word(int space)
{
	return space == LM_SPACE_GLOBAL ? lmi_tr("global", "全局") : lmi_tr("shared", "共享");
}

static lmi_dim3 unlinear(uint32_t i, lmi_dim3 d)
{
	return (lmi_dim3){i % d.x, i / d.x % d.y, i / (d.x * d.y)};
}

/* In the current phase, what the threads did to the element of e: how many stored it, and whether
 * threads a and b each both read and stored it (or updated it and read it: h[v] = h[v] + 1). */
static void phase_detail(const lmi_simt *s, const lmi_raw_ev *e, int a, int b, int *writers, bool *rmw)
{
	bool read[2] = {false, false}, wrote[2] = {false, false};
	int n = 0;
	for (int t = 0; t < s->nthreads; t++) {
		const simt_thread *th = &s->threads[t];
		bool w = false;
		for (int64_t i = th->ev_start; i < th->ev_end; i++) {
			const lmi_raw_ev *r = &s->raw[i];
			if (r->range != e->range || r->index != e->index) continue;
			bool st = r->kind == LM_TRACE_STORE, ld = r->kind == LM_TRACE_LOAD;
			w |= st;
			for (int k = 0; k < 2; k++)
				if (t == (k ? b : a)) {
					read[k] |= ld;
					wrote[k] |= st;
				}
		}
		n += w;
	}
	*writers = n;
	*rmw = read[0] && wrote[0] && read[1] && wrote[1];
}

/* Whether thread t of the current phase both read and stored the element of e. */
static bool thread_rmw(const lmi_simt *s, const lmi_raw_ev *e, int t)
{
	bool read = false, wrote = false;
	const simt_thread *th = &s->threads[t];
	for (int64_t i = th->ev_start; i < th->ev_end; i++) {
		const lmi_raw_ev *r = &s->raw[i];
		if (r->range != e->range || r->index != e->index) continue;
		read |= r->kind == LM_TRACE_LOAD;
		wrote |= r->kind == LM_TRACE_STORE;
	}
	return read && wrote;
}

/* Whether the two accesses' threads differ in more than one global coordinate (blockIdx *
 * blockDim + threadIdx, per dimension): two indices of a 2-D array that collide. */
static bool two_coordinates(const lmi_simt *s, const lm_kernel_fault *f)
{
	const unsigned dim[3] = {s->L->block.x, s->L->block.y, s->L->block.z};
	int differ = 0;
	for (int k = 0; k < 3; k++)
		differ += f->first.block[k] * dim[k] + f->first.thread[k] != f->second.block[k] * dim[k] + f->second.thread[k];
	return differ > 1;
}

static const char *coordinates_advice(void)
{
	return lmi_tr("two threads with different rows and columns store to one element: their "
	              "indices collide; is each coordinate guarded on its own (row < rows and col < "
	              "cols)? a column past the end of a row lands in the next row",
	              "两个行号、列号都不同的线程写了同一个元素：它们的下标撞在一起了；每个坐标都单独做了边界"
	              "保护吗（row < rows 并且 col < cols）？越过一行末尾的列会落到下一行里");
}

/* The advice that ends a race report, by what the race is. */
static const char *advice(const lmi_simt *s, const lm_kernel_fault *f)
{
	if (f->across_blocks) {
		if (f->rmw)
			return lmi_tr("two blocks read-modify-write the element, and blocks are never ordered "
			              "(no barrier spans them): make the update atomic, t:atomic_add(array, i, v) "
			              "(atomicAdd)",
			              "两个块都对这个元素做了读-改-写，而块与块之间从来没有先后（没有跨块的屏障）：把更新改成"
			              "原子操作，t:atomic_add(array, i, v)（atomicAdd）");
		if (f->hazard == LM_HAZARD_WAW && two_coordinates(s, f)) return coordinates_advice();
		if (f->hazard == LM_HAZARD_WAW)
			return lmi_tr("two blocks store to the same element: only one should; does the index "
			              "include the block (blockIdx.x * blockDim.x + threadIdx.x), and is the store "
			              "guarded?",
			              "两个块写了同一个元素：应当只有一个块写它；下标里算上块号了吗（blockIdx.x * blockDim.x + "
			              "threadIdx.x）？写之前有边界保护吗？");
		if (f->hazard == LM_HAZARD_ATOMIC)
			return lmi_tr("one block updates the element with atomicAdd while another accesses it "
			              "plainly: during a launch every access to it must be atomic (or the plain one "
			              "belongs in another launch)",
			              "一个块用 atomicAdd 更新这个元素，另一个块却用普通读写访问它：一次启动中对它的每次访问都"
			              "必须是原子的（或者把普通访问放到另一次启动里）");
		return lmi_tr("a block reads what another block writes in the same launch, and blocks are "
		              "never ordered (no barrier spans them): use an atomic, or split the work into two "
		              "launches (a launch ends when all its blocks are done)",
		              "一个块读了另一个块在同一次启动中写的值，而块与块之间没有先后（没有跨块的屏障）：改用原子"
		              "操作，或者把工作拆成两次启动（一次启动的所有块都做完，它才结束）");
	}
	if (f->rmw)
		return lmi_tr("both threads read the element and wrote it back (a read-modify-write, as "
		              "h[v] = h[v] + 1): a barrier cannot order such updates, an atomic can: "
		              "t:atomic_add(array, i, v) (atomicAdd)",
		              "两个线程都读了这个元素又写回去（读-改-写，就像 h[v] = h[v] + 1）：屏障无法给这样的更新排序，"
		              "原子操作可以：t:atomic_add(array, i, v)（atomicAdd）");
	if (f->hazard == LM_HAZARD_WAW) {
		if (f->writers > 2)
			return lmi_tr("several threads of the block store to this one element: let one thread "
			              "write it (if t.threadIdx.x == 0 then ... end), or, for a sum, use an atomic",
			              "本块有好几个线程写这同一个元素：只让一个线程写（if t.threadIdx.x == 0 then ... end），"
			              "如果是求和，就用原子操作");
		if (two_coordinates(s, f)) return coordinates_advice();
		return lmi_tr("two threads store to one element: each element should have one writer; check "
		              "the index and the guard around the store",
		              "两个线程写了同一个元素：每个元素应当只有一个写者；检查下标和写之前的保护条件");
	}
	if (f->hazard == LM_HAZARD_ATOMIC)
		return lmi_tr("one thread updated it with atomicAdd and another accessed it plainly in the "
		              "same phase: make every access atomic, or put a barrier (t:sync(), "
		              "__syncthreads) between the atomics and the plain access",
		              "一个线程用 atomicAdd 更新它，另一个线程在同一区段用普通读写访问它：要么每次访问都用原子"
		              "操作，要么在原子操作和普通访问之间加一道屏障（t:sync()，__syncthreads）");
	return lmi_tr("a barrier between them (__syncthreads, t:sync()) orders them",
	              "在两者之间加一道屏障（__syncthreads，t:sync()）就能给它们排好顺序");
}

static const char *hazard_name(lm_hazard h)
{
	switch (h) {
	case LM_HAZARD_RAW: return lmi_tr("read-after-write", "写后读（RAW）");
	case LM_HAZARD_WAR: return lmi_tr("write-after-read", "读后写（WAR）");
	case LM_HAZARD_WAW: return lmi_tr("write-after-write", "写后写（WAW）");
	default: return lmi_tr("atomic and plain", "原子与普通访问之间的");
	}
}

static lm_hazard hazard_of(int kind1, int kind2)
{
	return kind1 == LM_TRACE_ATOMIC || kind2 == LM_TRACE_ATOMIC ? LM_HAZARD_ATOMIC
	       : kind1 == LM_TRACE_LOAD ? LM_HAZARD_WAR
	       : kind2 == LM_TRACE_LOAD ? LM_HAZARD_RAW
	       : kind1 == LM_TRACE_STORE && kind2 == LM_TRACE_STORE ? LM_HAZARD_WAW
	                                                           : LM_HAZARD_ATOMIC;
}

/* Fills s->fault's common part for a race on the element of e found at thread `second`. */
static lm_kernel_fault *race_fault(lmi_simt *s, const lmi_raw_ev *e, int second, int kind1, int kind2)
{
	const simt_range *rg = &s->ranges[e->range];
	lm_kernel_fault *f = &s->fault;
	memset(f, 0, sizeof *f);
	f->kind = LM_FAULT_RACE;
	snprintf(f->kernel, sizeof f->kernel, "%s", s->L->kernel);
	snprintf(f->array, sizeof f->array, "%s", rg->name);
	f->space = rg->space;
	f->index = e->index;
	f->length = rg->length;
	f->hazard = hazard_of(kind1, kind2);
	f->second = lmi_simt_fault_access(s, &s->threads[second], e->line, kind2);
	return f;
}

static lm_status race_failure(lmi_simt *s, const lm_kernel_fault *f)
{
	char what[200];
	const lm_fault_access *a = &f->first, *b = &f->second;
	if (f->across_blocks)
		LMI_TR_SNPRINTF(what, sizeof what, "%s race across blocks", "跨块的%s竞争", hazard_name(f->hazard));
	else
		LMI_TR_SNPRINTF(what, sizeof what, "%s race", "%s竞争", hazard_name(f->hazard));
	if (f->across_blocks)
		LMI_TR_SNPRINTF(s->fault_msg, sizeof s->fault_msg,
		                "%s on %s array '%s' at index %lld (0-based) (kernel %s): thread (%u,%u,%u) of "
		                "block (%u,%u,%u) %s it at line %d and thread (%u,%u,%u) of block (%u,%u,%u) %s "
		                "it at line %d, so on a GPU either may come first; %s",
		                "%s：%s数组 '%s' 的下标 %lld（从 0 开始）（内核 %s）：线程 (%u,%u,%u)（块 (%u,%u,%u)）"
		                "%s它（第 %d 行），线程 (%u,%u,%u)（块 (%u,%u,%u)）%s它（第 %d 行），在 GPU 上谁先谁后"
		                "都有可能；%s",
		                what, space_word(f->space), f->array, (long long)f->index, f->kernel, a->thread[0],
		                a->thread[1], a->thread[2], a->block[0], a->block[1], a->block[2], verb(a->kind),
		                a->line, b->thread[0], b->thread[1], b->thread[2], b->block[0], b->block[1],
		                b->block[2], verb(b->kind), b->line, advice(s, f));
	else
		LMI_TR_SNPRINTF(s->fault_msg, sizeof s->fault_msg,
		                "%s on %s array '%s' at index %lld (0-based) in block (%u,%u,%u) (kernel %s): "
		                "thread (%u,%u,%u) %s it at line %d and thread (%u,%u,%u) %s it at line %d in "
		                "the same barrier phase (phase %u of the block, counted from 0), so on a GPU "
		                "either may come first; %s",
		                "%s：%s数组 '%s' 的下标 %lld（从 0 开始），块 (%u,%u,%u)（内核 %s）：线程 (%u,%u,%u) "
		                "%s它（第 %d 行），线程 (%u,%u,%u) %s它（第 %d 行），两者在同一个屏障区段里（本块的第 %u "
		                "个区段，从 0 数），在 GPU 上谁先谁后都有可能；%s",
		                what, space_word(f->space), f->array, (long long)f->index, b->block[0],
		                b->block[1], b->block[2], f->kernel, a->thread[0], a->thread[1], a->thread[2],
		                verb(a->kind), a->line, b->thread[0], b->thread[1], b->thread[2], verb(b->kind),
		                b->line, s->step, advice(s, f));
	s->fault_status = LM_ERR_STATE;
	return LM_ERR_STATE;
}

/* Fails the launch: thread `first` did kind1 on line1, then thread `second` did kind2 (e). */
static lm_status report(lmi_simt *s, const lmi_raw_ev *e, int first, int kind1, int line1,
                        int second, int kind2)
{
	lm_kernel_fault *f = race_fault(s, e, second, kind1, kind2);
	f->first = lmi_simt_fault_access(s, &s->threads[first], line1, kind1);
	phase_detail(s, e, first, second, &f->writers, &f->rmw);
	if (f->hazard == LM_HAZARD_ATOMIC) f->rmw = false;
	return race_failure(s, f);
}

/* Fails the launch: thread `first` of block `block` did kind1 on line1, then thread `second` of
 * the running block did kind2 (e). */
static lm_status report_blocks(lmi_simt *s, const lmi_raw_ev *e, uint32_t block, int first, int kind1,
                               int line1, int second, int kind2, bool first_rmw)
{
	lm_kernel_fault *f = race_fault(s, e, second, kind1, kind2);
	f->across_blocks = true;
	lmi_dim3 t = unlinear((uint32_t)first, s->L->block), b = unlinear(block, s->L->grid);
	f->first = (lm_fault_access){
		.thread = {t.x, t.y, t.z}, .block = {b.x, b.y, b.z}, .line = line1, .kind = kind1};
	f->writers = 2;
	f->rmw = first_rmw && f->hazard != LM_HAZARD_ATOMIC && thread_rmw(s, e, second);
	return race_failure(s, f);
}

static lm_status out_of_memory(lmi_simt *s)
{
	snprintf(s->fault_msg, sizeof s->fault_msg, "out of memory checking races in block (%u,%u,%u)",
	         s->block_idx.x, s->block_idx.y, s->block_idx.z);
	return s->fault_status = LM_ERR_NOMEM;
}

/* ---------------------------------------------------------------- the checks */

/* One access of thread t against the earlier threads' of the phase: a race, or LM_OK. */
static lm_status check_event(lmi_simt *s, const lmi_raw_ev *e, int t)
{
	race_slot *sl = slot_of(&s->race->phase, (uint64_t)e->range << 32 | e->index);
	if (!sl) return out_of_memory(s);
	/* the first of each kind is the lowest thread: "not t" means another thread did it */
	switch (e->kind) {
	case LM_TRACE_LOAD:
		if (sl->writer >= 0 && sl->writer != t)
			return report(s, e, sl->writer, LM_TRACE_STORE, sl->write_line, t, LM_TRACE_LOAD);
		if (sl->atomic >= 0 && sl->atomic != t)
			return report(s, e, sl->atomic, LM_TRACE_ATOMIC, sl->atomic_line, t, LM_TRACE_LOAD);
		if (sl->reader < 0) sl->reader = t, sl->read_line = e->line;
		break;
	case LM_TRACE_STORE:
		if (sl->reader >= 0 && sl->reader != t)
			return report(s, e, sl->reader, LM_TRACE_LOAD, sl->read_line, t, LM_TRACE_STORE);
		if (sl->writer >= 0 && sl->writer != t)
			return report(s, e, sl->writer, LM_TRACE_STORE, sl->write_line, t, LM_TRACE_STORE);
		if (sl->atomic >= 0 && sl->atomic != t)
			return report(s, e, sl->atomic, LM_TRACE_ATOMIC, sl->atomic_line, t, LM_TRACE_STORE);
		if (sl->writer < 0) sl->writer = t, sl->write_line = e->line;
		break;
	default: /* an atomic: against plain accesses of other threads only */
		if (sl->reader >= 0 && sl->reader != t)
			return report(s, e, sl->reader, LM_TRACE_LOAD, sl->read_line, t, LM_TRACE_ATOMIC);
		if (sl->writer >= 0 && sl->writer != t)
			return report(s, e, sl->writer, LM_TRACE_STORE, sl->write_line, t, LM_TRACE_ATOMIC);
		if (sl->atomic < 0) sl->atomic = t, sl->atomic_line = e->line;
		break;
	}
	return LM_OK;
}

/* One global access of thread t of the running block against the earlier blocks' of the launch. */
static lm_status check_blocks(lmi_simt *s, const lmi_raw_ev *e, int t)
{
	race_slot *sl = slot_of(&s->race->launch, (uint64_t)e->range << 32 | e->index);
	if (!sl) return out_of_memory(s);
	int32_t b = (int32_t)s->block_linear;
	/* the blocks come in order: a first record of another block is an earlier block's */
	bool rmw = sl->reader >= 0 && sl->reader == sl->writer && sl->read_thread == sl->write_thread;
	switch (e->kind) {
	case LM_TRACE_LOAD:
		if (sl->writer >= 0 && sl->writer != b)
			return report_blocks(s, e, (uint32_t)sl->writer, sl->write_thread, LM_TRACE_STORE,
			                     sl->write_line, t, LM_TRACE_LOAD, rmw);
		if (sl->atomic >= 0 && sl->atomic != b)
			return report_blocks(s, e, (uint32_t)sl->atomic, sl->atomic_thread, LM_TRACE_ATOMIC,
			                     sl->atomic_line, t, LM_TRACE_LOAD, false);
		if (sl->reader < 0) sl->reader = b, sl->read_thread = (uint16_t)t, sl->read_line = e->line;
		break;
	case LM_TRACE_STORE:
		if (sl->writer >= 0 && sl->writer != b)
			return report_blocks(s, e, (uint32_t)sl->writer, sl->write_thread, LM_TRACE_STORE,
			                     sl->write_line, t, LM_TRACE_STORE, rmw);
		if (sl->reader >= 0 && sl->reader != b)
			return report_blocks(s, e, (uint32_t)sl->reader, sl->read_thread, LM_TRACE_LOAD,
			                     sl->read_line, t, LM_TRACE_STORE, rmw);
		if (sl->atomic >= 0 && sl->atomic != b)
			return report_blocks(s, e, (uint32_t)sl->atomic, sl->atomic_thread, LM_TRACE_ATOMIC,
			                     sl->atomic_line, t, LM_TRACE_STORE, false);
		if (sl->writer < 0) sl->writer = b, sl->write_thread = (uint16_t)t, sl->write_line = e->line;
		break;
	default:
		if (sl->reader >= 0 && sl->reader != b)
			return report_blocks(s, e, (uint32_t)sl->reader, sl->read_thread, LM_TRACE_LOAD,
			                     sl->read_line, t, LM_TRACE_ATOMIC, false);
		if (sl->writer >= 0 && sl->writer != b)
			return report_blocks(s, e, (uint32_t)sl->writer, sl->write_thread, LM_TRACE_STORE,
			                     sl->write_line, t, LM_TRACE_ATOMIC, false);
		if (sl->atomic < 0) sl->atomic = b, sl->atomic_thread = (uint16_t)t, sl->atomic_line = e->line;
		break;
	}
	return LM_OK;
}

lm_status lmi_simt_race_phase(lmi_simt *s)
{
	if (!race_state(s)) {
		snprintf(s->fault_msg, sizeof s->fault_msg, "out of memory for the race check");
		return s->fault_status = LM_ERR_NOMEM;
	}
	/* within the block (one thread cannot race with itself) */
	if (s->nthreads >= 2) {
		table_clear(&s->race->phase);
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
	}
	/* against the earlier blocks (one block cannot race with itself across its phases: they are
	 * ordered by its barriers) */
	uint32_t nblocks = s->L->grid.x * s->L->grid.y * s->L->grid.z;
	if (nblocks < 2) return LM_OK;
	for (int t = 0; t < s->nthreads; t++) {
		const simt_thread *th = &s->threads[t];
		for (int64_t i = th->ev_start; i < th->ev_end; i++) {
			const lmi_raw_ev *e = &s->raw[i];
			if (e->space != LM_SPACE_GLOBAL || s->ranges[e->range].readonly) continue;
			if (e->kind != LM_TRACE_LOAD && e->kind != LM_TRACE_STORE && e->kind != LM_TRACE_ATOMIC)
				continue;
			lm_status st = check_blocks(s, e, t);
			if (st) return st;
		}
	}
	return LM_OK;
}
