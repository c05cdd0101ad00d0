/*
 * simt.h — the SIMT emulator: runs a CUDA kernel body (compiled by gcc with the macros of
 * body/simt_macros.h) over a grid of blocks on the CPU, checks every memory access, and records what
 * every thread did as trace events with modelled cycles.
 *
 * Design: the blocks of a launch run one after another; within a block, each CUDA thread is a fibre
 * (fibre.h) that runs until its next __syncthreads, in thread order, so one barrier phase ("step") of
 * the block completes before the next begins. A step's events are then grouped into warp
 * instructions (simt_model.c) for the trace, the counters and the cycles. A failing thread (an
 * out-of-bounds access, an interrupt) records why and yields for good; the scheduler then abandons
 * the block and the launch returns the error. Nothing longjmps; nothing aborts on a kernel's bug.
 * Read next: body/simt_macros.h (what a kernel body calls), simt.c, simt_model.c, trace.h.
 */
#ifndef LUMEN_KERNELS_SIMT_H
#define LUMEN_KERNELS_SIMT_H

#include <stdint.h>

#include "lumen/kernels.h"

typedef struct lmi_dim3 {
	unsigned x, y, z;
} lmi_dim3;

/* A global or constant array a launch may touch; every access is checked against it. */
typedef struct lmi_simt_array {
	const char *name;     /* as the kernel calls it */
	lm_trace_space space; /* LM_SPACE_GLOBAL or LM_SPACE_CONSTANT */
	lm_dtype dtype;
	void *data;
	int64_t length; /* elements (>= 1, < 2^32) */
	int64_t rows, cols; /* 2-D layout hint for the trace (0: 1-D) */
	bool readonly;
	uint8_t *init;  /* per element, whether it holds a value (the initcheck; NULL: all do) */
} lmi_simt_array;

#define LMI_SIMT_MAX_ARRAYS 16

/* A 2-D layout hint for a shared array of a launch, by the name the kernel gives it. */
typedef struct lmi_simt_layout {
	const char *name;
	int64_t rows, cols;
} lmi_simt_layout;

typedef struct lmi_simt_launch {
	const char *kernel; /* name, for messages and the trace */
	lmi_dim3 grid, block;
	size_t dyn_shared;  /* bytes of dynamic shared memory (SHARED_DYN) */
	void (*entry)(void *args); /* calls the kernel with args unpacked (what cudaLaunchKernel does) */
	void *args;
	const lmi_simt_array *arrays;
	int narrays; /* <= LMI_SIMT_MAX_ARRAYS */
	const lmi_simt_layout *layouts; /* for shared arrays (may be NULL) */
	int nlayouts;
	/* Non-NULL: the threads are the caller's (lumen/launch.h, external.c), not fibres running
	 * entry; its shared arrays are declared by the launch. */
	struct lm_launch *external;
} lmi_simt_launch;

/* Totals over the launches of an emulator, counted from the events (docs/trace.md defines them). */
typedef struct lmi_simt_counters {
	int64_t adds;         /* additions of data (ADD), not those on padding */
	int64_t idle_adds;    /* additions on padding or ghost cells (ADD_PAD): idle_lanes */
	int64_t global_loads, global_stores, shared_loads, shared_stores, constant_loads;
	int64_t atomics, shared_atomics, conflicts, shared_conflicts;
	int64_t atomic_queue, shared_atomic_queue; /* the longest queue of same-address atomics (global,
	                                              shared) in one barrier phase of one block */
	int64_t barriers;     /* completed __syncthreads of a block (each counts once per block) */
	int64_t steps;        /* dependent add steps: per launch the most of any block; summed */
	int64_t branches, events;
	int64_t divergent_branches; /* branch warp instructions whose lanes went both ways */
	int64_t active_lanes, issued_lanes; /* over all warp instructions, for simd_efficiency */
	int64_t region_active, region_issued; /* the same over the region (lmi_simt_set_region) */
	int64_t bytes;        /* global memory bytes loaded, stored or updated atomically */
	int64_t global_transactions; /* 32-byte sectors of global memory the warp instructions moved */
	int64_t bank_conflicts;      /* replays of shared warp instructions (an n-way conflict: n - 1) */
	uint64_t region_cycles;      /* the divergent region's cycles in the slowest warp (summed over
	                                its steps and blocks: lmi_simt_set_region) */
	double occupancy;     /* the first launch's resident warps per SM / warps_per_sm */
	uint64_t cycles;      /* modelled: the end of the last launch */
	int launches;
	int64_t threads;      /* threads launched */
} lmi_simt_counters;

typedef struct lmi_simt lmi_simt;

/*
 * An emulator for one call. fname names the caller in messages ("kernels.scan"); trace (borrowed,
 * may be NULL) receives the events; lat is copied. NULL + error on failure.
 */
lmi_simt *lmi_simt_new(const char *fname, lm_trace *trace, const lm_latency_model *lat);
void lmi_simt_free(lmi_simt *s);
/*
 * Runs one launch to completion. Checks the configuration first (block at most 1024 threads,
 * grid dims >= 1, dynamic shared memory at most 48 KiB); then reports, with thread, block, array,
 * index and source line: out-of-bounds accesses, stores to read-only arrays, reads of memory no
 * thread wrote (shared memory, arrays with init flags), barrier deadlocks and mismatched barriers,
 * races (lm_kernel_racecheck), shared memory beyond 48 KiB; LM_ERR_INTERRUPTED after
 * lm_interrupt(). lm_kernel_last_fault says what stopped a failed launch.
 */
lm_status lmi_simt_run(lmi_simt *s, const lmi_simt_launch *l);
const lmi_simt_counters *lmi_simt_counters_get(const lmi_simt *s);
/* Counts region_active/region_issued over the warp instructions of source lines lo < line < hi
 * (a divergent region of a kernel body: the lines between its branch and reconvergence). */
void lmi_simt_set_region(lmi_simt *s, int lo, int hi);
/* The kernels launched so far, each once, in the order of their first launch: their number and up
 * to cap names (the launches' kernel names). */
#define LMI_SIMT_MAX_KERNELS 8
int lmi_simt_kernels_run(const lmi_simt *s, const char **names, int cap);

/* ---------------------------------------------------------------- called by kernel bodies */
/* (through the macros of body/simt_macros.h; only from inside a running kernel) */

typedef struct lmi_simt_self {
	lmi_dim3 thread_idx, block_idx, block_dim, grid_dim;
} lmi_simt_self_t;
extern _Thread_local lmi_simt_self_t lmi_simt_self;

float lmi_simt_ld_f32(const void *base, int64_t i, int line);
double lmi_simt_ld_f64(const void *base, int64_t i, int line);
int32_t lmi_simt_ld_i32(const void *base, int64_t i, int line);
uint32_t lmi_simt_ld_u32(const void *base, int64_t i, int line);
unsigned char lmi_simt_ld_u8(const void *base, int64_t i, int line);
void lmi_simt_st_f32(const void *base, int64_t i, float v, int line);
void lmi_simt_st_f64(const void *base, int64_t i, double v, int line);
void lmi_simt_st_i32(const void *base, int64_t i, int32_t v, int line);
void lmi_simt_st_u32(const void *base, int64_t i, uint32_t v, int line);
/* a + b; pad: the add works on padding or ghost cells (ADD_PAD), not the textbook's work. */
float lmi_simt_add_f32(float a, float b, int pad, int line);
double lmi_simt_add_f64(double a, double b, int pad, int line);
int32_t lmi_simt_add_i32(int32_t a, int32_t b, int pad, int line);
/* atomicAdd: returns the old value. */
float lmi_simt_atomic_add_f32(const void *base, int64_t i, float v, int line);
double lmi_simt_atomic_add_f64(const void *base, int64_t i, double v, int line);
int32_t lmi_simt_atomic_add_i32(const void *base, int64_t i, int32_t v, int line);
uint32_t lmi_simt_atomic_add_u32(const void *base, int64_t i, uint32_t v, int line);
int lmi_simt_branch(int taken, int line);
void lmi_simt_syncthreads(int line);
/* __shared__ T name[n]: the k-th declaration a thread reaches maps to the block's k-th array. */
void *lmi_simt_shared(const char *name, lm_dtype dt, size_t elem, int64_t n, int line);
/* extern __shared__ T name[]: the launch's dynamic shared memory. */
void *lmi_simt_shared_dyn(const char *name, lm_dtype dt, size_t elem, int line);
/* A named part of n elements of the dynamic shared array, from element offset (in elements of
 * the part's type): its own trace array; accesses inside it are recorded as the part's. */
void *lmi_simt_shared_part(const char *name, void *dyn, lm_dtype dt, size_t elem, int64_t offset,
                           int64_t n, int line);

#endif
