/*
 * lumen/kernels.h — the course's parallel patterns (reduction, scans, histogram, matmul, 2-D
 * convolution, SpMV, warp divergence, streams), each run up to three ways:
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
	/* the patterns of "kernels II" (each field: 0 or NULL for its default) */
	int64_t tile;        /* matmul, conv2d: tile width (output tile for conv2d); 0: 16 */
	const char *format;  /* spmv: "coo", "csr" (default), "ell" or "jds" */
	const char *pattern; /* divergence: "even-odd" (default), "half-warp", "data", "warp", "none" */
	int64_t warps;       /* divergence: warps of 32 threads; 0: 4 */
	int64_t segments;    /* streams: segments of the vector add; 0: 4 */
	int64_t bytes;       /* streams: bytes of each vector (A, B, C); 0: 2^18 (emu), 2^26 (cuda) */
	int64_t copy_engines; /* streams (emu): 1 or 2; 0: 2 */
	double pcie_gbps;    /* streams (emu): host-device bandwidth in GB/s; 0: 25 */
	double clock_ghz;    /* streams (emu): the clock that turns modelled cycles into time; 0: 1.5 */
	int64_t sms;         /* streams (emu): multiprocessors the vector add's blocks spread over; 0: 8 */
	/* the cpu runs' tiling, the knobs lm.tune searches (0 or NULL: the default; each tile
	   1..LM_KERNEL_MAX_CPU_TILE; giving one with backend "auto" runs on the cpu, with "emu" or
	   "cuda" it is an error: the GPU's tile is `tile`) */
	int64_t tile_m, tile_n, tile_k; /* matmul "tiled": C in tile_m x tile_n blocks, k in slices
	                                   of tile_k; 0: tile */
	int64_t tile_h, tile_w;         /* conv2d: output tiles of tile_h rows x tile_w columns;
	                                   0: 1 row, the whole width (one tile per row) */
	const char *order; /* the order of the tile loops, outermost first. matmul: "ijk" (default),
	                      "ikj", "jik", "jki", "kij", "kji" (i: C's rows, j: its columns, k: the
	                      sum); conv2d: "tile-row-mask" (default), "tile-mask-row",
	                      "mask-tile-row" */
} lm_kernel_opts;

/* The largest tile_m, tile_n, tile_k, tile_h, tile_w. */
#define LM_KERNEL_MAX_CPU_TILE 4096

void lm_kernel_opts_init(lm_kernel_opts *o);

/* ---------------------------------------------------------------- the latency model */
/*
 * Modelled cycles of an emulated run (docs/trace.md states the model and what it ignores). Per
 * barrier phase of a block: each warp issues its instructions one after the other (divergent paths
 * one after the other too) and waits for each load (global, shared, constant) and atomic before
 * its next instruction; a store costs it only its issue. A global access is grouped per warp
 * instruction into 128-byte lines (one request each: a line more costs `issue` more) and 32-byte
 * sectors (each moved over the SM's memory pipe in `sector` cycles); a shared access into the 32
 * banks of 4-byte words (an n-way bank conflict replays it n - 1 times, `issue` each); constant
 * memory serialises distinct addresses; an atomic waits behind every earlier same-address atomic
 * of its block and phase. The phase takes its slowest warp's chain of latencies, or the cycles the
 * SM needs to issue every warp's instructions and replays, or to move its sectors, whichever is
 * longest, plus a barrier. Occupancy: as many blocks as fit (warps_per_sm, blocks_per_sm,
 * shared_per_sm) are resident on an SM together; a wave of resident blocks lasts its slowest
 * block's latency, or its blocks' issue or sector cycles added up, whichever is longer: enough
 * resident warps hide memory latency. Blocks go round robin to `sms` multiprocessors.
 */
typedef struct lm_latency_model {
	double global;   /* global memory load (or atomic): 400 cycles until the data arrives */
	double shared;   /* shared memory load (or atomic): 20 */
	double constant; /* constant memory, all lanes on one address (broadcast): 4; each further
	                    distinct address of the warp instruction costs another 4 */
	double arith;    /* an add (or a branch) before the warp's next instruction: 4 */
	double barrier;  /* __syncthreads: 20 */
	double sms;      /* multiprocessors the blocks are spread over (round robin): 1 */
	double issue;    /* SM issue cycles per warp instruction, and per replay (a further 128-byte
	                    line of a global access, a further wavefront of a bank conflict): 1 */
	double sector;   /* cycles of the SM's memory pipe per 32-byte sector of global memory
	                    (about 16 bytes per cycle per SM): 2 */
	double warps_per_sm;  /* resident warps per SM (2048 threads): 64 */
	double blocks_per_sm; /* resident blocks per SM: 32 */
	double shared_per_sm; /* bytes of shared memory per SM the resident blocks share: 65536 */
} lm_latency_model;

/* The defaults above. */
void lm_kernel_latency_default(lm_latency_model *out);
/* The model used by the next emulated runs (process-wide). */
void lm_kernel_latency_get(lm_latency_model *out);
/* Sets it: latencies and costs whole numbers of cycles in 0..1e9, sms an integer in 1..65536,
 * warps_per_sm 1..64, blocks_per_sm 1..1024, shared_per_sm 49152..2^24 bytes (a block's 48 KiB
 * always fits); LM_ERR_ARG names the field. */
lm_status lm_kernel_latency_set(const lm_latency_model *m);
void lm_kernel_latency_reset(void);
/* One paragraph saying what the model counts and what it ignores, with m's values (the info.model
 * of every emulated run); returns buf. */
char *lm_kernel_latency_describe(const lm_latency_model *m, char *buf, size_t cap);

/* ---------------------------------------------------------------- traces */

typedef enum lm_trace_kind {
	LM_TRACE_LOAD = 0,
	LM_TRACE_STORE,
	LM_TRACE_ADD,     /* an addition (value: the sum; aux: 1 when it works on padding or ghost
	                     cells, a guard lane's add that the textbook does not count) */
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
	int64_t adds;         /* additions of data (counted even when the events were truncated away) */
	bool barrier;         /* ends at __syncthreads (else: the threads exited) */
	int64_t depth;        /* the most data additions of one thread in this step: the dependent
	                         steps it takes (a thread adds one after another) */
	int64_t idle_adds;    /* additions on padding or ghost cells (not in adds) */
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
const char *lm_kernel_info_algo(const lm_kernel_info *info);        /* the variant asked for */
/* What actually ran: "emu: scan_kogge_stone (body/scan.h)", "cuda: reduce_shared (body/reduce.h)",
 * "cpu: <the native implementation>, 2 threads" (with "; algo 'x' applies to emu and cuda only"
 * where one CPU implementation serves every variant). */
const char *lm_kernel_info_impl(const lm_kernel_info *info);
/* The latency model of an emulated run, what it counts and what it ignores (docs/trace.md); NULL
 * for measured runs. */
const char *lm_kernel_info_model(const lm_kernel_info *info);
/* One line naming what ran where: "scan kogge-stone: emulated, modelled cycles (SIMT emulator on
 * ...)"; the variant is left out where it did not run ("histogram: CPU, measured (...)"). */
const char *lm_kernel_info_label(const lm_kernel_info *info);
/* Counters in a fixed order (docs/API.md names them). */
int lm_kernel_info_counter_count(const lm_kernel_info *info);
const char *lm_kernel_info_counter_name(const lm_kernel_info *info, int i);
double lm_kernel_info_counter_value(const lm_kernel_info *info, int i);
/* By name: false when the run has no such counter. */
bool lm_kernel_info_counter(const lm_kernel_info *info, const char *name, double *out);
/* The trace (borrowed; NULL when none was recorded). */
lm_trace *lm_kernel_info_trace(const lm_kernel_info *info);

/* One operation on a timeline (kernels.streams): a copy or a kernel of one segment, on a track
 * (the engine that ran it), in one schedule. Times in ms from the start of the schedule: modelled
 * (emu) or from CUDA events (cuda). */
typedef struct lm_kernel_span {
	const char *schedule; /* "serial" (one stream) or "overlapped" (a stream per segment) */
	const char *op;       /* "h2d" (A and B to the device), "kernel", "d2h" (C back) */
	const char *track;    /* the engine: "copy" (one copy engine), "h2d", "d2h", "compute" */
	int segment;          /* 0-based */
	int stream;           /* 0-based */
	double start_ms, end_ms;
	double bytes;         /* bytes copied (kernel: bytes read and written) */
} lm_kernel_span;

int lm_kernel_info_span_count(const lm_kernel_info *info);
/* Span i (0-based), in schedule order then segment order; LM_ERR_INDEX when out of range. */
lm_status lm_kernel_info_span_get(const lm_kernel_info *info, int i, lm_kernel_span *out);

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

/*
 * Histogram of bin indices (PMPP chapter 9) into an int64 tensor of `bins` counts (1..4096).
 * x: a uint8 or int32 tensor (any shape, not empty) whose values lie in 0..bins-1 (others are an
 * LM_ERR_INDEX error naming the first such value and its position). algo: "global-atomic" (one
 * atomicAdd on the global histogram per element), "privatized" (default: a histogram per block in
 * shared memory, merged into the global one at the end; 4096 bins x 4 bytes = 16 KiB: every
 * private copy fits in the 48 KiB), "aggregated" (privatized, each thread taking `coarsen`
 * consecutive elements and adding a run of equal bins with one atomic). coarsen: elements per thread, default 1 (8 for "aggregated"). block: any
 * number of threads 1..1024 (default: one block when the input fits, else 256).
 */
lm_status lm_kernel_histogram(const lm_tensor *x, int64_t bins, const lm_kernel_opts *opts,
                              lm_tensor **out, lm_kernel_info **info);
/* The same for n bytes (a Lua string): byte b falls in bin b * bins / 256 (integer division). */
lm_status lm_kernel_histogram_bytes(const void *bytes, int64_t n, int64_t bins,
                                    const lm_kernel_opts *opts, lm_tensor **out,
                                    lm_kernel_info **info);

/*
 * C = A B (PMPP chapter 5) for float32 or float64 matrices a: (m, k), b: (k, n) of one dtype, any
 * sizes; C: (m, n). algo: "naive" (one thread per element of C, every operand from global
 * memory), "tiled" (default: tile x tile blocks stage tiles of A and B in shared memory, so each
 * global element is loaded by one thread per tile instead of one per use). tile: 1..32 (the block
 * is tile x tile threads), default 16. The cpu run: "naive" is the textbook triple loop, "tiled"
 * a cache-blocked loop: C in tile_m x tile_n blocks (default tile x tile), each gaining the
 * products of A's and B's tiles for k in slices of tile_k (default tile), the three tile loops in
 * `order` (default "ijk": OpenMP over blocks of rows). Every order is safe under OpenMP: with i or
 * j outermost a thread owns a strip of C; with k outermost ("kij", "kji") each slice of k is a
 * parallel loop over the middle loop's strips with a barrier between slices. Every tiling and
 * order adds each element's products in increasing k: the same bits as the default.
 */
lm_status lm_kernel_matmul(const lm_tensor *a, const lm_tensor *b, const lm_kernel_opts *opts,
                           lm_tensor **out, lm_kernel_info **info);

/*
 * 2-D convolution (PMPP chapter 7; "same" size, zero ghost cells): out[y][x] = sum over the mask
 * of mask[i][j] * img[y + i - r_y][x + j - r_x] with r = (side - 1) / 2. img: (h, w), mask:
 * (mh, mw), float32 or float64 of one dtype; sides of the mask at most those of the image.
 * algo: "naive" (mask in global memory), "constant" (mask in constant memory), "tiled" (=
 * "tiled-input": a block per input tile of (tile + 2r) squared threads loads the tile with its halo
 * cells into shared memory; the inner tile x tile threads compute), "tiled-output" (a block of
 * tile x tile threads per output tile loads the input tile with its halo, several elements per
 * thread). The tiled variants need odd mask sides; constant memory holds at most
 * LM_KERNEL_MAX_MASK elements. tile: output tile width 1..32, default 16 (tiled-input: tile + 2r
 * <= 32). The cpu run (one for every algo): output tiles of tile_h x tile_w (default one tile per
 * row: 1 x w), OpenMP over the tiles, in `order`: "tile-row-mask" (default: each row of a tile
 * swept once per mask element), "tile-mask-row" (each mask element swept over the tile's rows:
 * the output tile stays in L1), "mask-tile-row" (the mask outermost, a parallel loop over the
 * tiles per mask element). Each output adds the mask's products in the same order in every form:
 * the same bits as the default.
 */
#define LM_KERNEL_MAX_MASK 2048
lm_status lm_kernel_conv2d(const lm_tensor *img, const lm_tensor *mask, const lm_kernel_opts *opts,
                           lm_tensor **out, lm_kernel_info **info);

/*
 * A sparse matrix held in the four formats of PMPP chapter 14 at once: COO (row, col, val per
 * nonzero, sorted by row then column), CSR (row_ptr of m + 1 offsets, col, val), ELL (every row
 * padded to the longest, stored column-major: slot t of row r at t * m + r; padding has col 0 and
 * val 0) and JDS (rows sorted by decreasing length, the permutation kept; iteration t of sorted
 * row r at iter_ptr[t] + r). Refcounted; immutable.
 */
typedef struct lm_sparse lm_sparse;

/* From the nonzeros of a 2-D float32/float64 tensor. NULL + error on failure. */
lm_sparse *lm_sparse_from_dense(const lm_tensor *dense);
/*
 * From nnz triples (rows[i], cols[i], vals[i]): rows and cols integer tensors (int32/int64, 1-D,
 * nnz elements) holding indices from `base` (0 or 1: Lua passes 1-based ones), vals a float32 or
 * float64 1-D tensor (its dtype is the matrix's), shape m x n (each >= 1). Entries with the same
 * (row, col) are kept apart (SpMV adds them). Errors: an index out of 1..m (or 0..m-1) naming it
 * and its position, lengths that differ, an empty or non-integer index tensor.
 */
lm_sparse *lm_sparse_from_coo(const lm_tensor *rows, const lm_tensor *cols, const lm_tensor *vals,
                              int64_t m, int64_t n, int base);
lm_sparse *lm_sparse_retain(lm_sparse *a);
void lm_sparse_release(lm_sparse *a);
int64_t lm_sparse_rows(const lm_sparse *a);
int64_t lm_sparse_cols(const lm_sparse *a);
int64_t lm_sparse_nnz(const lm_sparse *a);
lm_dtype lm_sparse_dtype(const lm_sparse *a);
int64_t lm_sparse_ell_width(const lm_sparse *a);   /* the longest row */
int64_t lm_sparse_ell_padding(const lm_sparse *a); /* m * width - nnz */
/* The dense matrix (m, n) (duplicates added). */
lm_tensor *lm_sparse_to_dense(const lm_sparse *a);
/*
 * A copy of one array of a format, as the kernels see it (0-based int32 indices): "coo": row, col,
 * val; "csr": row_ptr, col, val; "ell": col, val (width * m, column-major), row_nnz; "jds": perm,
 * iter_ptr, col, val, row_nnz (in sorted order). LM_ERR_ARG names the known ones.
 */
lm_tensor *lm_sparse_array(const lm_sparse *a, const char *format, const char *name);

/*
 * y = A x (PMPP chapter 14) in one of the formats (opts->format: "coo", "csr" default, "ell",
 * "jds"). x: a 1-D tensor of A's dtype and n elements. Every format runs on the emulator, the CPU
 * (OpenMP; CSR parallel over rows balanced by nonzeros) and CUDA. Counters add nnz, rows,
 * row_nnz_max, padding (ELL), work_per_thread_max and _mean (products per thread).
 */
lm_status lm_kernel_spmv(const lm_sparse *a, const lm_tensor *x, const lm_kernel_opts *opts,
                         lm_tensor **out, lm_kernel_info **info);

/*
 * The warp-divergence demo (opts->pattern): warps x 32 threads each take one of two paths of equal
 * length by "even-odd" lane, "half-warp" (lanes 0-15 / 16-31), "data" (a data-dependent test on
 * pseudo-random input), "warp" (whole warps alternate: a branch that does not diverge) or "none"
 * (no branch). out: the float32 results (warps x 32). simd_efficiency is measured over the
 * divergent region only (from the branch to reconvergence): 0.5 for even-odd and half-warp, 1.0
 * for warp and none; simd_efficiency_kernel over the whole kernel. Runs: emu and cuda (there are
 * no warps on the cpu: backend "cpu" is an error; "auto" picks cuda with a GPU, else emu).
 */
lm_status lm_kernel_divergence(const lm_kernel_opts *opts, lm_tensor **out, lm_kernel_info **info);

/*
 * Streams (task parallelism): C = A + B over float32 vectors of opts->bytes bytes, split into
 * opts->segments segments, each copied to the device, added and copied back, once serially (one
 * stream) and once overlapped (a stream per segment). out: C. Counters serial_ms, overlapped_ms,
 * speedup; info spans give each segment's start and end per operation. emu: a modelled timeline
 * (copies at pcie_gbps, one or two copy engines, the kernel's modelled cycles at clock_ghz);
 * cuda: real streams, pinned host memory and events per segment. There is no cpu run ("auto"
 * picks cuda with a GPU, else emu). segments: 1..255; at least one element per segment.
 */
lm_status lm_kernel_streams(const lm_kernel_opts *opts, lm_tensor **out, lm_kernel_info **info);

/*
 * The memory-coalescing demo (PMPP chapter 6): sums of a 2-D float32/float64 matrix x (m, n), one
 * thread per sum. algo "coalesced" (default): out (n) = the column sums, thread j walking column j,
 * so a warp's lanes read consecutive addresses in each step; "strided": out (m) = the row sums,
 * thread i walking row i, the lanes a row apart. The same adds and loads; global_transactions and
 * modelled_cycles differ. block: threads per block, 1..1024. Runs: emu and cuda (no cpu run).
 */
lm_status lm_kernel_coalescing(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                               lm_kernel_info **info);
/*
 * The transpose of a 2-D float32/float64 matrix x (m, n) into out (n, m), in 32 x 32 tiles with
 * blocks of 32 x 8 threads (block and tile are fixed: giving them is an error). algo "naive":
 * straight from global memory (the writes strided); "shared": through a 32 x 32 tile in shared
 * memory (both global accesses coalesced, the tile read down a column: 32-way bank conflicts);
 * "padded" (default): the tile with a padding column (32 x 33), conflict-free. Runs: emu and cuda.
 */
lm_status lm_kernel_transpose(const lm_tensor *x, const lm_kernel_opts *opts, lm_tensor **out,
                              lm_kernel_info **info);

/*
 * kernels.opencl: an OpenCL C kernel given as source, run on the OpenCL device (lumen/opencl.h).
 * The program is built once per source (cached; the build log in the error when it does not
 * compile, its lines the source's own), the kernel `kernel` (NULL: the source's only one) is
 * launched over global (dims 1..3, in work-items) in groups of local (has_local; else the
 * runtime's choice): local must divide global and fit the device's limits. Each parameter is
 * checked against its argument: a __global or __constant pointer takes a tensor (CPU or OpenCL)
 * of its pointee's dtype, a __local pointer a byte count, a value a number of its type. The
 * kernel runs `repeats` times (1..1000), each from the arguments as given; then every tensor
 * whose parameter is not const receives the results, in place. res: the kernel's name, the
 * device, the median event time, the build's time and whether it came from the cache.
 */
typedef enum { LM_OPENCL_ARG_TENSOR, LM_OPENCL_ARG_NUMBER, LM_OPENCL_ARG_LOCAL } lm_opencl_arg_kind;
typedef struct lm_opencl_arg {
	lm_opencl_arg_kind kind;
	lm_tensor *tensor;   /* TENSOR */
	double number;       /* NUMBER */
	int64_t local_bytes; /* LOCAL */
} lm_opencl_arg;
typedef struct lm_opencl_launch {
	const char *kernel; /* NULL: the only kernel of the source */
	int dims;
	int64_t global[3], local[3];
	bool has_local;
	int nargs;
	const lm_opencl_arg *args;
	int repeats;
} lm_opencl_launch;
typedef struct lm_opencl_result {
	char kernel[64], device[256];
	double time_ms, compile_ms;
	bool cached;
} lm_opencl_result;
lm_status lm_kernel_opencl(const char *source, const lm_opencl_launch *launch, lm_opencl_result *res);

#ifdef __cplusplus
}
#endif
#endif
