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

	/* the first failure of the launch */
	lm_status fault_status;
	char fault_msg[480];

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

/* simt_race.c: checks the step just run for races between its threads (LM_OK, or the failure in
 * s->fault_msg and s->fault_status); frees the check's table. */
lm_status lmi_simt_race_phase(lmi_simt *s);
void lmi_simt_race_free(lmi_simt *s);

#endif
