/*
 * lumen/kernels.h — the course's parallel patterns (reduction, scans), each run three ways:
 * "emu" (the CUDA kernel body on the SIMT emulator, traced, modelled cycles), "cpu" (a native
 * OpenMP implementation, timed) and "cuda" (the same body compiled by nvcc, timed with events).
 *
 * Design: every call takes an options struct (lm_kernel_opts, initialised by lm_kernel_opts_init)
 * whose fields mirror the Lua options of docs/API.md, and returns a result tensor plus an
 * lm_kernel_info: where the numbers came from (source, device), named counters in a fixed order,
 * and, for emulated runs, a trace of what every thread did. Counters of emulated runs are counted
 * from the trace events, never from formulas.
 * Ownership: *out and *info are owned by the caller (lm_tensor_release, lm_kernel_info_free); the
 * trace of an info is borrowed unless retained with lm_trace_retain.
 * Read next: docs/trace.md (the event record, the latency model), src/kernels/simt.h.
 */
#ifndef LUMEN_KERNELS_H
#define LUMEN_KERNELS_H

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- options */

/* The limits the emulator and the CUDA runs enforce, as on NVIDIA GPUs since Fermi. */
#define LM_KERNEL_MAX_BLOCK 1024        /* threads per block */
#define LM_KERNEL_MAX_SHARED (48 * 1024) /* bytes of shared memory per block */
#define LM_KERNEL_WARP 32

typedef struct lm_kernel_opts {
	const char *backend; /* "emu", "cpu", "cuda" or "auto" (NULL: "auto": cuda if a GPU, else cpu) */
	const char *algo;    /* the variant; NULL: the pattern's default */
	int64_t block;       /* threads per block; 0: one block when the input fits, else 256 */
	int64_t coarsen;     /* elements per thread where a variant coarsens; 0: its default */
	int trace;           /* 1: record a trace (selects "emu" when backend is "auto"); 0: no
	                        trace asked (emu still records one); -1: default (0) */
	int inclusive;       /* scans: 1 inclusive, 0 exclusive; -1: default (inclusive) */
	int64_t trace_cap;   /* events kept before the trace is truncated; 0: LM_TRACE_DEFAULT_CAP */
	int repeats;         /* timed runs after one warm-up (cpu, cuda); the median is reported; 0: 5 */
} lm_kernel_opts;

void lm_kernel_opts_init(lm_kernel_opts *o);

/* ---------------------------------------------------------------- the latency model */
/*
 * Modelled cycles of an emulated run (docs/trace.md states the model): per barrier phase, each warp
 * issues its instructions one after the other (divergent paths one after the other too), a warp
 * instruction costing the latency of its kind; an atomic waits behind every earlier same-address
 * atomic of its block and phase; the warps of a block overlap (the phase takes as long as its slowest
 * warp, plus a barrier); blocks run one after another on each of `sms` multiprocessors.
 */
typedef struct lm_latency_model {
	double global;   /* global memory load/store/atomic: 400 */
	double shared;   /* shared memory load/store/atomic: 20 */
	double constant; /* constant memory, all lanes on one address (broadcast): 4; each further
	                    distinct address of the warp instruction costs another 4 */
	double arith;    /* an add (or a branch): 1 */
	double barrier;  /* __syncthreads: 20 */
	double sms;      /* multiprocessors the blocks are spread over (round robin): 1 */
} lm_latency_model;

/* The defaults above. */
void lm_kernel_latency_default(lm_latency_model *out);
/* The model used by the next emulated runs (process-wide). */
void lm_kernel_latency_get(lm_latency_model *out);
/* Sets it: latencies whole numbers of cycles in 0..1e9, sms an integer in 1..65536; LM_ERR_ARG
 * names the field. */
lm_status lm_kernel_latency_set(const lm_latency_model *m);
void lm_kernel_latency_reset(void);

/* ---------------------------------------------------------------- traces */

typedef enum lm_trace_kind {
	LM_TRACE_LOAD = 0,
	LM_TRACE_STORE,
	LM_TRACE_ADD,     /* an addition of data elements (value: the sum) */
	LM_TRACE_ATOMIC,  /* atomicAdd (value: the operand; aux: earlier same-address atomics) */
	LM_TRACE_BARRIER, /* a lane waiting at __syncthreads (value: cycles it waited) */
	LM_TRACE_BRANCH,  /* a lane evaluating an instrumented branch (value 1 taken, 0 not; aux: the
	                     lanes of the warp that took it) */
	LM_TRACE_KIND_COUNT
} lm_trace_kind;

typedef enum lm_trace_space {
	LM_SPACE_NONE = 0, /* adds, barriers, branches */
	LM_SPACE_GLOBAL,
	LM_SPACE_SHARED,
	LM_SPACE_CONSTANT,
	LM_SPACE_COUNT
} lm_trace_space;

/* One event: what one lane did in one warp instruction. Fixed size (56 bytes). */
typedef struct lm_trace_event {
	double value;     /* see lm_trace_kind */
	uint64_t cycle;   /* modelled cycle at which the warp instruction starts (from the call's start) */
	uint32_t latency; /* modelled cycles the warp instruction takes */
	uint32_t index;   /* element index into the array (0-based) */
	uint32_t block;   /* linear block index: x + y*gridDim.x + z*gridDim.x*gridDim.y */
	uint32_t step;    /* barrier phase within the block (0-based) */
	uint32_t mask;    /* the warp's active mask for this instruction (bit i: lane i issued it) */
	uint32_t aux;     /* see lm_trace_kind */
	uint16_t warp;    /* warp within the block */
	uint16_t line;    /* source line in the kernel body header */
	uint8_t lane;     /* lane within the warp (thread = warp*32 + lane, linearised x-fastest) */
	uint8_t kind;     /* lm_trace_kind */
	uint8_t space;    /* lm_trace_space */
	uint8_t array;    /* array id (lm_trace_array_get); 255 for none */
	uint8_t launch;   /* kernel launch of the call (0-based) */
	uint8_t pad_[7];
} lm_trace_event;

#define LM_TRACE_NO_ARRAY 255
#define LM_TRACE_DEFAULT_CAP (1 << 20)

typedef struct lm_trace lm_trace;

typedef struct lm_trace_array {
	const char *name;    /* as in the kernel source ("X", "XY", ...) */
	lm_trace_space space;
	lm_dtype dtype;
	int64_t length;      /* elements */
	int64_t rows, cols;  /* a 2-D layout hint for scenes (rows 1 for 1-D arrays) */
	int launch;          /* shared arrays: the launch they belong to; -1 for global/constant */
} lm_trace_array;

typedef struct lm_trace_launch {
	const char *kernel;  /* the kernel's name in the body header ("scan_kogge_stone") */
	unsigned grid[3], block[3];
	size_t shared_bytes; /* static + dynamic shared memory per block */
	uint64_t start_cycle, end_cycle;
	int64_t first_step;  /* index of its first lm_trace_step */
	int64_t nsteps;
} lm_trace_launch;

/* One barrier phase of one block. */
typedef struct lm_trace_step {
	int launch;
	uint32_t block;
	uint32_t step;
	int64_t first;        /* its events are [first, first + count) (count 0 when truncated away) */
	int64_t count;
	uint64_t start_cycle;
	uint64_t cycles;      /* its slowest warp, plus the barrier that ends it */
	int64_t adds;         /* counted even when the events were truncated away */
	bool barrier;         /* ends at __syncthreads (else: the threads exited) */
} lm_trace_step;

/* Selects events; -1 in a field: any. */
typedef struct lm_trace_filter {
	int kind, space, launch, array;
	int64_t step, block, warp, lane;
} lm_trace_filter;

lm_trace *lm_trace_retain(lm_trace *t);
void lm_trace_release(lm_trace *t);

int64_t lm_trace_count(const lm_trace *t);      /* events kept */
int64_t lm_trace_seen(const lm_trace *t);       /* events produced (>= count) */
bool lm_trace_truncated(const lm_trace *t);     /* seen > count: "truncated at cap events" */
int64_t lm_trace_cap(const lm_trace *t);
/* Event i (0-based), borrowed; NULL and LM_ERR_INDEX for i out of range. */
const lm_trace_event *lm_trace_event_get(const lm_trace *t, int64_t i);
/* The name of the call that made it ("scan kogge-stone float32"). */
const char *lm_trace_name(const lm_trace *t);
lm_dtype lm_trace_dtype(const lm_trace *t);
/* The latency model the cycles were computed with. */
void lm_trace_latency(const lm_trace *t, lm_latency_model *out);

void lm_trace_filter_init(lm_trace_filter *f); /* all fields -1 */
/* Index of the first event >= from that matches f, or -1. */
int64_t lm_trace_find(const lm_trace *t, const lm_trace_filter *f, int64_t from);

int64_t lm_trace_step_count(const lm_trace *t);
lm_status lm_trace_step_get(const lm_trace *t, int64_t i, lm_trace_step *out);
int lm_trace_launch_count(const lm_trace *t);
lm_status lm_trace_launch_get(const lm_trace *t, int i, lm_trace_launch *out);
int lm_trace_array_count(const lm_trace *t);
lm_status lm_trace_array_get(const lm_trace *t, int id, lm_trace_array *out);

const char *lm_trace_kind_name(int kind);   /* "load", "store", "add", "atomic", "barrier", "branch" */
const char *lm_trace_space_name(int space); /* "none", "global", "shared", "constant" */
/* Parses those names; LM_ERR_ARG for others. */
lm_status lm_trace_kind_from_name(const char *name, int *out);
/* One line of text for event i (for printing and golden tests); returns buf. */
char *lm_trace_event_format(const lm_trace *t, int64_t i, char *buf, size_t cap);

/* ---------------------------------------------------------------- results */

typedef struct lm_kernel_info lm_kernel_info;

void lm_kernel_info_free(lm_kernel_info *info);
const char *lm_kernel_info_source(const lm_kernel_info *info);     /* "emu", "cpu", "cuda" */
const char *lm_kernel_info_device(const lm_kernel_info *info);     /* the CPU or GPU */
const char *lm_kernel_info_provenance(const lm_kernel_info *info); /* "emulated, modelled cycles",
                                                                      "CPU, measured",
                                                                      "CUDA <gpu>, measured" */
const char *lm_kernel_info_pattern(const lm_kernel_info *info);    /* "scan", "reduce" */
const char *lm_kernel_info_algo(const lm_kernel_info *info);
/* Counters in a fixed order (docs/API.md names them). */
int lm_kernel_info_counter_count(const lm_kernel_info *info);
const char *lm_kernel_info_counter_name(const lm_kernel_info *info, int i);
double lm_kernel_info_counter_value(const lm_kernel_info *info, int i);
/* By name: false when the run has no such counter. */
bool lm_kernel_info_counter(const lm_kernel_info *info, const char *name, double *out);
/* The trace (borrowed; NULL when none was recorded). */
lm_trace *lm_kernel_info_trace(const lm_kernel_info *info);

/* ---------------------------------------------------------------- the patterns */

/*
 * Sum of all elements of x (float32 or float64, any shape, not empty) into a 0-d tensor of x's
 * dtype. algo: "naive" (divergent strides, in global memory), "convergent", "shared" (default),
 * "coarsened" (coarsen elements per thread, default 4). block: any power of two 1..1024.
 */
lm_status lm_kernel_reduce(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                           lm_kernel_info **info);

/*
 * Prefix sums of x (float32 or float64, any shape, not empty; C order) into a tensor of x's shape
 * and dtype, inclusive or exclusive. algo: "kogge-stone" (default; one element per thread),
 * "brent-kung" (two per thread), "hierarchical" (coarsen elements per thread, default 4, scanned in
 * three phases per block). Inputs longer than one block's section are scanned hierarchically: block
 * scans, a scan of the block sums (recursively), and a kernel adding them back.
 */
lm_status lm_kernel_scan(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                         lm_kernel_info **info);

#ifdef __cplusplus
}
#endif
#endif
