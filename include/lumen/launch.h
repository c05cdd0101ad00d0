/*
 * lumen/launch.h — kernels whose threads the caller runs ("external threads"): the SIMT emulator
 * schedules a grid of them exactly as it schedules the shipped kernel bodies (block after block;
 * within a block, barrier phase after barrier phase, the threads in order, warps of 32), and calls
 * back to run one thread until its next barrier or its end. Every load, store, atomic, add and
 * branch of the thread goes through the calls below, which check and record it as the macros of
 * the C bodies do (src/kernels/body/simt_macros.h), so an external kernel gets the same trace,
 * counters, latency model and checks: out-of-bounds accesses, barrier deadlocks, races, errors.
 * Lua kernels (`kernels.launch`, src/lua/launch.c: a coroutine per thread) are built on it.
 *
 * Design: nothing longjmps and nothing runs on a fibre. run() returns when the thread called
 * lm_launch_sync (it waits at a barrier: LM_LAUNCH_WAIT) or finished (LM_LAUNCH_DONE). A call that
 * fails its check (an index out of bounds, a store to a read-only array, an interrupt) returns an
 * error and marks the thread failed: run() then stops the thread and returns LM_LAUNCH_FAULT, and
 * the launch fails with the emulator's message, which names the thread, the block, the array and
 * the 0-based index. A thread that fails for a reason of its own (a Lua error) calls
 * lm_launch_fail. The race check (on by default for every emulated run, shipped kernels too:
 * lm_kernel_set_racecheck) compares, at the end of each barrier phase, what the threads of the
 * block read and wrote in it, and what each block did to global memory against what the blocks
 * before it did (blocks are not ordered on a GPU). The initcheck (on unless no_initcheck) fails a
 * read of shared memory that no thread of the block wrote, and of a global element marked never
 * written. What stopped a failed launch: lm_kernel_last_fault.
 * Read next: docs/student-kernels.md, src/kernels/external.c, src/kernels/simt_race.c.
 */
#ifndef LUMEN_LAUNCH_H
#define LUMEN_LAUNCH_H

#include <stdbool.h>
#include <stdint.h>

#include "lumen/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LM_LAUNCH_MAX_ARRAYS 16 /* global and constant arrays of one launch */
#define LM_LAUNCH_MAX_SHARED 16 /* shared arrays of one launch */

typedef struct lm_launch lm_launch; /* a launch being run: handed to run() */

/* What run() reports about the thread it ran. */
enum { LM_LAUNCH_WAIT = 0, LM_LAUNCH_DONE = 1, LM_LAUNCH_FAULT = 2 };

/* An array the kernel may touch. Elements are indexed from 0, as in CUDA C. */
typedef struct lm_launch_array {
	const char *name;     /* as the kernel calls it: messages, the trace (borrowed) */
	lm_trace_space space; /* LM_SPACE_GLOBAL, LM_SPACE_CONSTANT (read-only) or LM_SPACE_SHARED */
	lm_dtype dtype;       /* float32, float64, int32, int64 or uint8 */
	void *data;           /* global, constant: `length` contiguous elements (borrowed, alive for
	                         the launch); shared: NULL (each block gets it zeroed) */
	uint8_t *init;        /* global: which elements hold a value (1) and which were never written
	                         (0: a fresh lm.empty buffer): a load or atomicAdd of a 0 is the
	                         initcheck's error, a store sets it to 1 (borrowed, `length` bytes;
	                         NULL: every element holds a value) */
	int64_t length;       /* elements: 0 .. 2^32 - 1 (shared: at least 1) */
	int64_t rows, cols;   /* a 2-D layout hint for scenes (0, 0: 1-D); rows * cols = length */
	bool readonly;        /* global arrays only loaded (a store is an error) */
} lm_launch_array;

typedef struct lm_launch_desc {
	const char *fname;  /* the caller, for messages ("kernels.launch") */
	const char *kernel; /* the kernel's name: the trace, messages, info.algo */
	const char *where;  /* where it is written, for info.impl ("Lua, stdin:3") */
	unsigned grid[3], block[3]; /* each >= 1; at most 1024 threads per block */
	const lm_launch_array *arrays;
	int narrays;        /* at most LM_LAUNCH_MAX_ARRAYS global/constant + LM_LAUNCH_MAX_SHARED shared;
	                       shared arrays together at most 48 KiB per block */
	lm_dtype dtype;     /* the trace's element type (what the kernel computes in) */
	int64_t trace_cap;  /* events the trace keeps; 0: LM_TRACE_DEFAULT_CAP */
	bool no_racecheck;  /* this launch skips the race check (else: lm_kernel_racecheck()) */
	bool no_initcheck;  /* this launch skips the initcheck: reads of shared memory no thread of the
	                       block wrote, and of global elements whose init flag is 0, then see the
	                       emulator's zeros instead of failing */
	/*
	 * Runs thread `thread` (its linear index in the block; lm_launch_where gives its indices) from
	 * where it stopped (first: from the start, in the block's first phase) until it calls
	 * lm_launch_sync and returns LM_LAUNCH_WAIT, or returns LM_LAUNCH_DONE at its end, or
	 * LM_LAUNCH_FAULT after a call of this header failed or after lm_launch_fail.
	 */
	int (*run)(void *ctx, lm_launch *l, int thread, bool first);
	void *ctx;
} lm_launch_desc;

/*
 * Runs the launch on the emulator and fills a new info (*info, owned by the caller): source
 * "emu", pattern "launch", algo = the kernel's name, the emulator's counters in docs/API.md's
 * order and the trace. Fails (nothing in *info) with the configuration errors of the emulator
 * (block over 1024 threads, shared arrays over 48 KiB, ...), or with the first failure of a
 * thread: an access out of bounds, a deadlock, a race, lm_launch_fail's message, an interrupt.
 * Array data written before a failure stays written, as on a GPU.
 */
lm_status lm_kernel_launch(const lm_launch_desc *d, lm_kernel_info **info);

/* ---------------------------------------------------------------- inside run() */

/* The running thread's threadIdx and blockIdx, and the launch's blockDim and gridDim. */
void lm_launch_where(const lm_launch *l, unsigned thread[3], unsigned block[3], unsigned block_dim[3],
                     unsigned grid_dim[3]);
/*
 * Element i of array `array` (its index in desc.arrays): *v the value loaded; a store (v converted
 * to the array's dtype: floats rounded to float32, integers truncated toward zero, out of range an
 * error); atomicAdd (*old, may be NULL: the value before). line: the source line, for the trace and
 * messages. LM_OK, or the failure (the thread is then failed; lm_last_error() says why).
 */
lm_status lm_launch_load(lm_launch *l, int array, int64_t i, int line, double *v);
lm_status lm_launch_store(lm_launch *l, int array, int64_t i, double v, int line);
lm_status lm_launch_atomic_add(lm_launch *l, int array, int64_t i, double v, int line, double *old);
/* The same for integer arrays (int32, int64, uint8), exact over the whole int64 range (a double
 * holds integers only up to 2^53): the value must fit the array's dtype (atomicAdd: int32 or int64,
 * wrapping around as on the GPU). */
lm_status lm_launch_load_int(lm_launch *l, int array, int64_t i, int line, int64_t *v);
lm_status lm_launch_store_int(lm_launch *l, int array, int64_t i, int64_t v, int line);
lm_status lm_launch_atomic_add_int(lm_launch *l, int array, int64_t i, int64_t v, int line, int64_t *old);
/* An addition of data (the ADD macro; pad: on padding, ADD_PAD), sum its result. */
lm_status lm_launch_add(lm_launch *l, double sum, bool pad, int line);
/* An instrumented branch (the BRANCH macro): the warp's lanes that take it are drawn apart. */
lm_status lm_launch_branch(lm_launch *l, bool taken, int line);
/* __syncthreads(): the thread waits at the barrier on line; run() returns LM_LAUNCH_WAIT next. */
lm_status lm_launch_sync(lm_launch *l, int line);
/* The same for a barrier reached through calls: from, the line of the kernel's own code that led
 * to it (a helper function's caller); site, a number that differs between two barrier calls that
 * share a line but not the calls leading to them. Threads of a block waiting at different
 * (line, site) pairs are the divergent-barrier error (CUDA's undefined behaviour). */
lm_status lm_launch_sync_at(lm_launch *l, int line, int from, uint32_t site);
/* The running thread fails: the launch ends with "<fname>: <what> in thread (x,y,z) of block
 * (x,y,z) (kernel K)". Returns st. */
lm_status lm_launch_fail(lm_launch *l, lm_status st, const char *what);
/* Whether the running thread has failed (after a failed call; run() must then return FAULT). */
bool lm_launch_failed(const lm_launch *l);

/* ---------------------------------------------------------------- what stopped a launch */

/* The emulator's checks, as compute-sanitizer's tools name them. */
typedef enum lm_fault_kind {
	LM_FAULT_NONE = 0,
	LM_FAULT_BOUNDS,      /* memcheck: an index out of an array, a store to a read-only array */
	LM_FAULT_UNINIT,      /* initcheck: a read of shared memory (or of a fresh lm.empty buffer)
	                         before anything wrote the element */
	LM_FAULT_RACE,        /* racecheck: two unordered accesses to one element, at least one a
	                         write (in one barrier phase of a block, or in two blocks) */
	LM_FAULT_DEADLOCK,    /* threads wait at a barrier that others never reach (they exited) */
	LM_FAULT_BARRIER,     /* threads of a block wait at two different barriers (divergent
	                         __syncthreads: undefined behaviour in CUDA) */
	LM_FAULT_ERROR,       /* any other failure of a thread (a Lua error, a bad value, a limit) */
	LM_FAULT_INTERRUPTED, /* Ctrl-C */
} lm_fault_kind;

typedef enum lm_hazard {
	LM_HAZARD_NONE = 0,
	LM_HAZARD_RAW,    /* read after write */
	LM_HAZARD_WAR,    /* write after read */
	LM_HAZARD_WAW,    /* write after write */
	LM_HAZARD_ATOMIC, /* an atomicAdd against a plain access */
} lm_hazard;

typedef struct lm_fault_access {
	unsigned thread[3], block[3]; /* threadIdx, blockIdx */
	int line;                     /* the source line (0: unknown) */
	int kind;                     /* LM_TRACE_LOAD, _STORE or _ATOMIC (-1: none) */
} lm_fault_access;

typedef struct lm_kernel_fault {
	lm_fault_kind kind;
	char kernel[48];
	char array[48];       /* BOUNDS, UNINIT, RACE: the array */
	lm_trace_space space; /* its memory space */
	int64_t index;        /* the element (0-based; BOUNDS: the index asked for) */
	int64_t length;       /* the array's elements */
	lm_hazard hazard;     /* RACE */
	bool across_blocks;   /* RACE: the two accesses were made by different blocks */
	bool rmw;             /* RACE: each thread (block) read the element and wrote it back, as a
	                         read-modify-write (h[v] = h[v] + 1) does: an atomic fixes it, a
	                         barrier cannot */
	int writers;          /* RACE: the threads of the phase (blocks: at least 2) that stored it */
	lm_fault_access first;  /* RACE: the earlier access; the others: the failing thread */
	lm_fault_access second; /* RACE: the later one; BARRIER: a thread at the other barrier */
} lm_kernel_fault;

/* What stopped the last emulated launch that failed on this thread (kind NONE when the last one
 * succeeded): what a lesson's check inspects instead of parsing the message. */
void lm_kernel_last_fault(lm_kernel_fault *out);
/* Forgets it (a caller about to launch: a failure before the emulator runs leaves NONE). */
void lm_kernel_clear_fault(void);

/* ---------------------------------------------------------------- the race check */

/* Whether emulated runs (every kernel: the shipped bodies and external ones) check each barrier
 * phase for races between the threads of a block; on by default. Returns the previous setting. */
bool lm_kernel_set_racecheck(bool on);
bool lm_kernel_racecheck(void);

#ifdef __cplusplus
}
#endif
#endif
