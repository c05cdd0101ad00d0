/*
 * simt_impl.h (internal to simt.c and simt_model.c) — the emulator's state.
 *
 * During a barrier phase each thread appends raw events (one per LOAD, STORE, ADD, ATOMIC_ADD,
 * BRANCH) to one buffer; threads run one after another, so thread t's events are the contiguous
 * range [ev_start, ev_end). At the end of the phase simt_model.c turns that buffer into warp
 * instructions, trace events, counters and cycles.
 * Read next: simt.c (scheduler, memory checks), simt_model.c (warp instructions, cycles).
 */
#ifndef LUMEN_KERNELS_SIMT_IMPL_H
#define LUMEN_KERNELS_SIMT_IMPL_H

#include <stdio.h>
#include <string.h>

#include "kernels/fibre.h"
#include "kernels/simt.h"
#include "kernels/trace.h"
#include "lumen/launch.h"

typedef struct lmi_raw_ev {
	double value;
	uint32_t index;
	uint32_t aux;   /* branch: 1 taken; add: 1 on padding (ADD_PAD); atomics: set by the model
	                   (earlier same-address atomics) */
	uint16_t line;
	uint8_t kind, space, array; /* array: trace array id */
	uint8_t size;               /* bytes of the element accessed (0 for adds, branches) */
	uint8_t range;              /* accesses: the range (s->ranges) of the array */
	uint8_t pad_;
} lmi_raw_ev;

enum { TH_READY, TH_WAIT, TH_DONE, TH_FAULT };

typedef struct simt_thread {
	lmi_fibre *fibre;
	lmi_dim3 idx;
	uint32_t linear;
	uint8_t state;
	bool started;
	uint16_t wait_line;
	uint16_t wait_from; /* the kernel's own line that led to the barrier (external threads) */
	uint32_t wait_site; /* tells apart barrier calls on one line reached through other calls */
	int shared_decls; /* __shared__ declarations reached in this block */
	int64_t ev_start, ev_end;
} simt_thread;

/* An address range a kernel may access: a global/constant array or a shared array. */
typedef struct simt_range {
	uintptr_t base, end;
	size_t elem;
	lm_dtype dtype;
	lm_trace_space space;
	bool readonly;
	int trace_id;
	const char *name;
	int64_t length;
	bool has_parts; /* the dynamic shared array once SHARED_PART carved it: never cached */
	uint8_t *init;  /* global: per element, whether it holds a value (NULL: all do) */
} simt_range;

#define SIMT_MAX_SHARED_DECLS 16
#define SIMT_MAX_PARTS 8
#define SIMT_MAX_RANGES (LMI_SIMT_MAX_ARRAYS + SIMT_MAX_SHARED_DECLS + SIMT_MAX_PARTS + 1)
#define SIMT_MAX_KNOWN 64
#define SIMT_MAX_STEP_EVENTS (1 << 24)

typedef struct shared_decl {
	int line;
	size_t offset, bytes;
	int range;
} shared_decl;

typedef struct simt_known {
	const void *data;
	const char *name;
	int trace_id;
} simt_known;

typedef struct simt_model simt_model; /* simt_model.c's scratch tables */

struct lmi_simt {
	const char *fname;
	lm_trace *trace; /* borrowed, may be NULL */
	lm_latency_model lat;
	lmi_simt_counters c;

	/* the launch */
	const lmi_simt_launch *L;
	int launch_no;
	simt_range ranges[SIMT_MAX_RANGES];
	int nranges, last_range;
	shared_decl decls[SIMT_MAX_SHARED_DECLS];
	int ndecls;
	size_t static_shared; /* bytes of static __shared__ arrays (after the dynamic ones) */
	int dyn_range;        /* range of the dynamic shared array, -1 until declared */
	int part_range[SIMT_MAX_PARTS]; /* ranges of its named parts (SHARED_PART) */
	int nparts;
	int region_lo, region_hi; /* lmi_simt_set_region */
	unsigned char *smem;  /* LM_KERNEL_MAX_SHARED bytes, reused block after block */
	simt_known known[SIMT_MAX_KNOWN]; /* arrays of earlier launches keep their trace ids */
	int nknown;

	/* the block */
	simt_thread *threads; /* LM_KERNEL_MAX_BLOCK */
	int nthreads;
	lmi_dim3 block_idx;
	uint32_t block_linear;
	simt_thread *cur;
	uint32_t step;
	uint64_t block_start;  /* modelled cycle the block started */
	uint64_t block_cycles; /* modelled cycles of its completed steps (the block alone) */
	uint64_t block_issue;  /* the SM's issue cycles its steps needed */
	uint64_t block_mem;    /* the SM's memory-pipe cycles (sectors) its steps needed */
	int64_t block_add_steps; /* dependent add steps: over its steps, the most data adds of a thread */
	int64_t launch_add_steps; /* the most of any block of the launch */

	/* raw events of the current step */
	lmi_raw_ev *raw;
	int64_t nraw, raw_cap;
	uint64_t poll;

	/* the first failure of the launch: the message, and what it was (lm_kernel_last_fault) */
	lm_status fault_status;
	char fault_msg[1000];
	char fault_tail[640]; /* said after "by thread ... (kernel K)" (then cleared), when set */
	lm_kernel_fault fault;

	/* the initcheck: on, and which bytes of the block's shared memory a thread has written */
	bool initcheck;
	uint8_t *sinit; /* LM_KERNEL_MAX_SHARED bytes, cleared with the block's shared memory */
	/* The phase's first read of an element no thread had written, reported at the end of the
	 * phase unless the race check finds a race there first: a thread reading what another thread
	 * of the phase writes only later (in the emulator's order) is missing a barrier, not a store. */
	struct {
		bool set;
		int thread, range, line, kind;
		int64_t index;
	} uninit;

	simt_model *model;

	/* the kernels launched, in order of their first launch (info.impl) */
	const char *ran[LMI_SIMT_MAX_KERNELS];
	int nran;

	/* the race check (simt_race.c): on, and its table of the phase's addresses */
	bool racecheck;
	struct simt_race *race;
};

/* simt_model.c: turns the step just run into trace events, counters and cycles. barrier: the
 * step ended at __syncthreads (on line); else every thread exited. */
lm_status lmi_simt_model_step(lmi_simt *s, bool barrier, int line);
lm_status lmi_simt_model_new(lmi_simt *s);
void lmi_simt_model_free(lmi_simt *s);

/* simt.c: doubles the raw event buffer: LM_ERR_ARG past SIMT_MAX_STEP_EVENTS, LM_ERR_NOMEM. */
lm_status lmi_simt_raw_grow(lmi_simt *s);
/* A new raw event of the step (kind and line set, no array), or NULL with *st saying why. */
static inline lmi_raw_ev *lmi_simt_raw_push(lmi_simt *s, int kind, int line, lm_status *st)
{
	if (s->nraw == s->raw_cap && (*st = lmi_simt_raw_grow(s)) != LM_OK) return NULL;
	lmi_raw_ev *e = &s->raw[s->nraw++];
	e->kind = (uint8_t)kind;
	e->line = (uint16_t)line;
	e->aux = 0;
	e->space = LM_SPACE_NONE;
	e->size = 0;
	e->array = LM_TRACE_NO_ARRAY;
	e->index = 0;
	return e;
}
/* simt.c: a shared array of n elements at byte offset of the block's shared memory, declared by
 * the host before any thread runs (an external launch's): its range, or -1 with the error set. */
int lmi_simt_add_shared_range(lmi_simt *s, const char *name, lm_dtype dt, size_t offset, int64_t n);

/* external.c: runs thread th of an external launch (s->L->external) until it waits at a barrier,
 * exits or fails, and sets th->state accordingly. */
void lmi_simt_ext_resume(lmi_simt *s, simt_thread *th);

/* simt_race.c: checks the step just run for races between its threads, and its global accesses
 * against the earlier blocks' of the launch (LM_OK, or the failure in s->fault_msg, s->fault and
 * s->fault_status); forgets the earlier launches' blocks (at the start of a launch); frees the
 * check's tables. */
lm_status lmi_simt_race_phase(lmi_simt *s);
void lmi_simt_race_launch(lmi_simt *s);
void lmi_simt_race_free(lmi_simt *s);

/* simt.c: the fault record (s->fault) of thread th failing: kind, and where (r: the array, or
 * NULL; idx; line; akind: the access, or -1). */
void lmi_simt_note_fault(lmi_simt *s, const simt_thread *th, lm_fault_kind kind, const simt_range *r,
                         int64_t idx, int line, int akind);
/* simt.c: a thread's place as a fault names it (threadIdx, blockIdx, line, access kind). */
lm_fault_access lmi_simt_fault_access(const lmi_simt *s, const simt_thread *th, int line, int kind);
/* simt.c: the report of the initcheck, for the running thread th reading element idx of range r at
 * line (kind: LM_TRACE_LOAD or _ATOMIC): fills s->fault, writes what happened (the part before "by
 * thread") into buf and why it matters into s->fault_tail. */
void lmi_simt_uninit_report(lmi_simt *s, const simt_thread *th, const simt_range *r, int64_t idx,
                            int line, int kind, char *buf, size_t cap);
/* simt.c: s->fault_msg = what, the thread and block, then s->fault_tail (cleared). */
void lmi_simt_fault_message(lmi_simt *s, const simt_thread *th, const char *what);
/* simt.c: notes a read of an element that holds no value (the first of the phase is kept). */
static inline void lmi_simt_note_uninit(lmi_simt *s, const simt_thread *th, const simt_range *r,
                                        int64_t idx, int line, int kind)
{
	if (s->uninit.set) return;
	s->uninit.set = true;
	s->uninit.thread = (int)th->linear;
	s->uninit.range = (int)(r - s->ranges);
	s->uninit.index = idx;
	s->uninit.line = line;
	s->uninit.kind = kind;
}
/* Whether element idx of r holds a value for the initcheck (shared: every byte of it was written
 * in this block); a store marks it. */
static inline bool lmi_simt_initialized(const lmi_simt *s, const simt_range *r, int64_t idx)
{
	if (r->space == LM_SPACE_SHARED) {
		const uint8_t *m = s->sinit + (r->base - (uintptr_t)s->smem) + (size_t)idx * r->elem;
		for (size_t k = 0; k < r->elem; k++)
			if (!m[k]) return false;
		return true;
	}
	return !r->init || r->init[idx];
}
static inline void lmi_simt_mark_written(lmi_simt *s, const simt_range *r, int64_t idx)
{
	if (r->space == LM_SPACE_SHARED)
		memset(s->sinit + (r->base - (uintptr_t)s->smem) + (size_t)idx * r->elem, 1, r->elem);
	else if (r->init)
		r->init[idx] = 1;
}

/* The text in the language of lm_get_lang(): en or zh. */
static inline const char *lmi_tr(const char *en, const char *zh) { return lm_get_lang() == LM_LANG_ZH ? zh : en; }
/* snprintf of the English or the Chinese format, both literals the compiler checks against the
 * same arguments (so a translation keeps their order). */
#define LMI_TR_SNPRINTF(buf, cap, en, zh, ...)                                                     \
	(lm_get_lang() == LM_LANG_ZH ? snprintf(buf, cap, zh, __VA_ARGS__)                         \
	                             : snprintf(buf, cap, en, __VA_ARGS__))

#endif
