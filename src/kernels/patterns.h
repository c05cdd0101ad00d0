/*
 * patterns.h (internal) — what the pattern files (scan.c, reduce.c, ... and their _emu.c hosts)
 * share: options resolved and checked once, the pattern driver, the info object it fills, and
 * the emulator's side of the launch plans.
 *
 * Design: a public call (lm_kernel_scan) is the pattern's checks plus three callbacks. The checks
 * resolve its lm_kernel_opts into an lmi_kcall (backend chosen, algorithm looked up, block and
 * coarsening defaulted and checked against the limits), take its inputs and output through the
 * lmi_kcall (made contiguous, allocated, released at the end whatever happens) and fill the
 * pattern's run struct (the call of its body/<pattern>_plan.h plus what the cpu run needs).
 * lmi_pattern_run then runs it one of three ways (an lmi_pattern: emu, cpu, cuda) and fills an
 * lm_kernel_info with counters in a fixed order: the emulator's, or the measured time, bytes and
 * GB/s (+ gflops, threads or launches and block), then the pattern's own (finish).
 * Read next: driver.c (the driver), kernels.c (options, info), scan.c (a pattern), scan_emu.c.
 */
#ifndef LUMEN_KERNELS_PATTERNS_H
#define LUMEN_KERNELS_PATTERNS_H

#include <string.h>

#include "core/lmi.h"
#include "kernels/body/plan.h"
#include "kernels/cpu_kernels.h"
#include "kernels/fused_call.h"
#include "kernels/cuda/cuda_api.h"
#include "kernels/simt.h"
#include "lumen/kernels.h"

typedef enum { LMI_BACKEND_EMU, LMI_BACKEND_CPU, LMI_BACKEND_CUDA, LMI_BACKEND_OPENCL } lmi_backend;

typedef struct lmi_kcall {
	const char *fname;     /* "kernels.scan": names the call in every message */
	lmi_backend backend;
	int algo;              /* index into the pattern's algorithm names */
	const char *algo_name;
	unsigned block;        /* threads per block */
	unsigned coarsen;      /* elements per thread where the variant coarsens */
	unsigned tile;         /* matmul, conv2d: the tile width (lmi_kcall_tile) */
	bool inclusive;
	int64_t trace_cap;
	int repeats;
	lm_dtype dtype;
	int64_t n;
	bool any_block;        /* lmi_kcall_shape accepts any block 1..1024, not only powers of two */
	bool gave_block, gave_coarsen, gave_tile; /* given, not defaulted (a cpu run names those it
	                                             does not use in info.impl) */
	/* set by the pattern's checks for lmi_pattern_run */
	char name[128];        /* the trace's name (emulated runs): "scan kogge-stone inclusive float32" */
	double bytes;          /* what an ideal run moves (each operand once): the measured GB/s */
	double flops;          /* > 0: the measured runs add gflops */
	double sms;            /* > 0: the emulated run's multiprocessors, else the latency model's */
	/* what the call holds while it runs (lmi_kcall_input, _output, _alloc, _operand) */
	lm_status status;      /* the first failure among those */
	lm_tensor *held[4], *out;
	int nheld, nbufs, noperands;
	struct {
		void *p;
		size_t bytes;
	} bufs[4];
	struct {
		const void *p;
		size_t bytes;
	} operands[16]; /* every array a cpu run touches: flushed from the caches before timed runs */
} lmi_kcall;

/* *opts, or the defaults (lm_kernel_opts_init) when opts is NULL. */
lm_kernel_opts lmi_opts_or_default(const lm_kernel_opts *opts);
/* The same, with backend 'auto' (or none) turned into 'cpu' when the options ask for a knob only
 * the cpu runs have (matmul's tile_m, tile_n, tile_k, order; conv2d's tile_h, tile_w, order) and no
 * trace: 'auto' means a backend that can run what was asked, as trace=true means 'emu'. */
static inline lm_kernel_opts lmi_opts_cpu_if_auto(const lm_kernel_opts *opts)
{
	lm_kernel_opts o = lmi_opts_or_default(opts);
	bool cpu = o.tile_m || o.tile_n || o.tile_k || o.tile_h || o.tile_w || o.order;
	bool is_auto = !o.backend || strcmp(o.backend, "auto") == 0;
	if (cpu && o.trace != 1 && is_auto) o.backend = "cpu";
	return o;
}

/* What a pattern can run on (lmi_kcall_begin): patterns without a cpu run (divergence, streams)
 * take "auto" to mean cuda with a GPU, else emu, and reject "cpu". */
enum { LMI_RUNS_ALL = 0, LMI_RUNS_NO_CPU = 1 };

/*
 * Resolves opts for a pattern whose variants are algos[0..nalgos) (default algos[default_algo]).
 * Checks the backend and algorithm names, trace (only the emulator traces), repeats and trace_cap,
 * and the input: not NULL, a CPU tensor, float32/float64, not empty. Block and coarsen are left
 * to lmi_kcall_shape.
 */
lm_status lmi_kcall_resolve(const char *fname, const lm_tensor *x, const lm_kernel_opts *opts,
                            const char *const *algos, int nalgos, int default_algo, lmi_kcall *k);
/* The same for a pattern that runs only where `runs` (LMI_RUNS_*) says. */
lm_status lmi_kcall_resolve_runs(const char *fname, const lm_tensor *x, const lm_kernel_opts *opts,
                                 const char *const *algos, int nalgos, int default_algo, int runs,
                                 lmi_kcall *k);
/*
 * The input-independent part of lmi_kcall_resolve, for patterns whose input is not one float
 * tensor: backend (runs: LMI_RUNS_*), algorithm, trace, repeats, trace_cap; k->n = n (elements the
 * 32-bit emu/cuda runs index) and k->dtype = dt.
 */
lm_status lmi_kcall_begin(const char *fname, const lm_kernel_opts *opts, const char *const *algos,
                          int nalgos, int default_algo, int runs, int64_t n, lm_dtype dt,
                          lmi_kcall *k);

/* *index: where name is in names; else LM_ERR_ARG "fname: unknown what 'name' (expected 'a', 'b'
 * or 'c')". */
lm_status lmi_name_lookup(const char *fname, const char *what, const char *name,
                          const char *const *names, int count, int *index);

/*
 * Block and coarsening. coarsens: whether the variant takes `coarsen` (else only 0 or 1 is
 * accepted); default_coarsen when opts->coarsen is 0. A tile is an option these patterns do not
 * have: an error (lmi_kcall_unused). A thread handles elems_per_thread * coarsen
 * elements. block 0: the smallest power of two whose section covers n, if at most 1024, else 256.
 * Checks: block a power of two in 1..1024, coarsen in 1..1024.
 */
lm_status lmi_kcall_shape(lmi_kcall *k, const lm_kernel_opts *opts, bool coarsens,
                          unsigned default_coarsen, unsigned elems_per_thread);
/* The tile option of matmul and conv2d (default 16, 1..32); they take neither block (the block
 * follows from the tile) nor coarsen. Sets k->coarsen = 1. */
lm_status lmi_kcall_tile(lmi_kcall *k, const lm_kernel_opts *opts, unsigned *tile);
/* An option given (given) that k's run does not use: LM_ERR_ARG "fname: option tile is not used
 * by the cpu run of 'naive' (why); leave it out". LM_OK when not given. */
lm_status lmi_kcall_unused(const lmi_kcall *k, const char *option, bool given, const char *why);
/* "emu", "cpu", "cuda" or "opencl". */
const char *lmi_backend_name(lmi_backend b);
/* Shared memory of shared_elems elements of the input's dtype per block: at most 48 KiB. */
lm_status lmi_kcall_check_shared(const lmi_kcall *k, int64_t shared_elems);

/* The info object. */
lm_kernel_info *lmi_info_new(const lmi_kcall *k, const char *pattern);
void lmi_info_add(lm_kernel_info *info, const char *name, double value);
/* Replaces the value of counter name (adds it when absent). */
void lmi_info_set(lm_kernel_info *info, const char *name, double value);
/* Appends a timeline span (strings must be static); LM_ERR_NOMEM when it cannot grow. */
lm_status lmi_info_add_span(lm_kernel_info *info, const lm_kernel_span *sp);
/* The first value of a contiguous uint8/int32/int64 tensor outside lo..hi-1: its position (and
 * *value), or -1 when all lie inside. */
int64_t lmi_first_out_of_range(const lm_tensor *x, int64_t lo, int64_t hi, int64_t *value);
/* The same over n elements of dtype dt at d. */
int64_t lmi_first_out_of_range_raw(lm_dtype dt, const void *d, int64_t n, int64_t lo, int64_t hi,
                                   int64_t *value);
void lmi_info_set_trace(lm_kernel_info *info, lm_trace *t); /* takes the reference */
/* The emulator's counters, in docs/API.md's order (then idle_lanes, global_transactions,
 * bank_conflicts, occupancy). */
void lmi_info_add_emu(lm_kernel_info *info, const lmi_simt_counters *c, const lmi_kcall *k);
/* info.impl: what ran (the driver: "emu: ...", "cpu: ...", "cuda: ..."). */
void lmi_info_set_impl(lm_kernel_info *info, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* info.model: the latency model of an emulated run, stated. */
void lmi_info_set_model(lm_kernel_info *info, const lm_latency_model *m);
/* info.label: pattern, the variant when it ran (variant_ran), provenance and device. */
void lmi_info_set_label(lm_kernel_info *info, bool variant_ran);
/* time_ms, bytes and gbps of a measured run. */
void lmi_info_add_measured(lm_kernel_info *info, double time_ms, double bytes);

/* ---------------------------------------------------------------- the pattern driver (driver.c) */

/* The first check of every public call: out and info must not be NULL; both are set to NULL. */
lm_status lmi_kcall_start(const char *fname, lm_tensor **out, lm_kernel_info **info);
/* The data of a contiguous version of x (x itself, or a copy), held until the end of the call; an
 * operand of the cpu run. NULL when k has failed (the failure is kept in k->status). */
const void *lmi_kcall_input(lmi_kcall *k, const lm_tensor *x);
/* Takes y (NULL: the failure of the call that made it) as the call's result: handed to *out when
 * the run succeeds, released otherwise. Its data, or NULL when k has failed. */
void *lmi_kcall_output(lmi_kcall *k, lm_tensor *y);
/* bytes of host memory (lm_alloc) until the end of the call, an operand of the cpu run; NULL for
 * 0 bytes or when k has failed (LM_ERR_NOMEM is kept). */
void *lmi_kcall_alloc(lmi_kcall *k, size_t bytes);
/* Borrowed memory the cpu run touches (a sparse matrix's arrays, a string's bytes). */
void lmi_kcall_operand(lmi_kcall *k, const void *p, size_t bytes);
/* A check failed after k took inputs: releases what k holds; returns st. */
lm_status lmi_kcall_fail(lmi_kcall *k, lm_status st);

/* What a cpu run is (lmi_pattern.cpu_impl): the variant asked for, and the options it follows. */
enum {
	LMI_CPU_IS_VARIANT = 1,
	LMI_CPU_USES_BLOCK = 2,
	LMI_CPU_USES_TILE = 4,
	LMI_CPU_USES_COARSEN = 8,
};

/* A pattern: the three runs of its call and what it adds to the info. `run` is the pattern's
 * run struct (patterns.h below), filled by its checks. */
typedef struct lmi_pattern {
	const char *name; /* the info's pattern: "scan" */
	/* The header the emu and cuda runs' kernels are written in ("body/scan.h"): info.impl names
	 * the kernels that ran and where they are. */
	const char *body;
	/* The emulated run: the plan's launches on s (<pattern>_emu.c). */
	lm_status (*emu)(lmi_simt *s, const lmi_kcall *k, void *run);
	/* One native run (cpu_kernels.h), timed by the driver: the median of k->repeats after a
	 * warm-up, each started with the operands flushed from the caches; non-zero when stopped
	 * (lmi_interrupt_flag). NULL: no cpu run (LMI_RUNS_NO_CPU). */
	int (*cpu)(const lmi_kcall *k, void *run);
	/* The CUDA run through the module's table: 0, or the CUDA error with msg written. */
	int (*cuda)(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run, lmi_cuda_timing *t,
	            char *msg, size_t msg_cap);
	/* Optional, after a successful run: the pattern's own counters (and results it converts).
	 * emu: the emulator's counters for an emulated run, NULL for a measured one. */
	lm_status (*finish)(lm_kernel_info *info, const lmi_kcall *k, void *run,
	                    const lmi_simt_counters *emu);
	/* The measured runs report their own counters in finish (streams: two schedules, not one
	 * time): the driver adds none. */
	bool own_measures;
	/* What the cpu run is, for info.impl after "cpu: " ("privatized, 8 sub-histograms, 2
	 * threads"), written into buf after the timed runs. Returns LMI_CPU_* flags: IS_VARIANT when
	 * it is the variant asked for (the text then names it; else one CPU implementation serves
	 * every variant, and the driver adds "; algo 'x' applies to emu and cuda only" and leaves the
	 * variant out of the label), USES_BLOCK, USES_TILE, USES_COARSEN for the options it follows
	 * (the driver names the others given in the same words). Required with cpu. */
	unsigned (*cpu_impl)(const lmi_kcall *k, const void *run, char *buf, size_t cap);
	/* The option that picks the variant, for those words: "algo" (NULL), "format", "pattern". */
	const char *variant;
} lmi_pattern;

/*
 * Runs k's call of pattern pt (k->backend) and fills a new info: the emulator's counters, or
 * time_ms, bytes, gbps (+ gflops when k->flops > 0), then threads (cpu) or launches (when the run
 * counts them) and block (cuda), then finish's. On success *out takes the output and *info the
 * info; always releases what k holds. Returns k->status when an input or output failed before.
 */
lm_status lmi_pattern_run(const lmi_pattern *pt, lmi_kcall *k, void *run, lm_tensor **out,
                          lm_kernel_info **info);

/* Runs fn(arg) once to warm up, then `repeats` times, calling cold(arg) (may be NULL; the driver
 * flushes the operands with lmi_cache_flush, cpu_kernels.h) before each timed run; *median_ms: the
 * median wall time (CLOCK_MONOTONIC) of the timed runs. fn returns non-zero when interrupted: then
 * LM_ERR_INTERRUPTED. */
lm_status lmi_time_median(const char *fname, int repeats, int (*fn)(void *), void (*cold)(void *),
                          void *arg, double *median_ms);

/* "AMD EPYC 9454P 48-Core Processor" (from /proc/cpuinfo), or "CPU". */
const char *lmi_cpu_model(void);

/* The arrays of an lm_sparse (sparse.c; borrowed; see sparse_formats.h). */
typedef struct lmi_sparse_view {
	int64_t m, n, nnz, width;
	lm_dtype dtype;
	const int32_t *row, *col, *row_ptr, *row_nnz, *ell_col, *perm, *iter_ptr, *jds_nnz, *jds_col;
	const void *val, *ell_val, *jds_val;
} lmi_sparse_view;
void lmi_sparse_raw(const lm_sparse *a, lmi_sparse_view *v);

/* A fresh emulator with a trace named name for k's call (the info takes the trace). The latency
 * model in force is used, with sms replaced when sms > 0. */
lm_status lmi_emu_start(const lmi_kcall *k, const char *name, lm_kernel_info *info, double sms,
                        lmi_simt **out);

/* ---------------------------------------------------------------- the emulator's host code */

/* A kernel of a pattern on the emulator: its name and its entry per element type. */
typedef struct lmi_emu_kernel {
	const char *name;
	void (*entry[2])(void *args);
} lmi_emu_kernel;

/*
 * LMI_EMU_KERNELS(LIST, table) defines, for a plan's kernel list K_(name, args) (body/plan.h),
 * each kernel's two entries (unpack the arguments, call the kernel: what cudaLaunchKernel does)
 * and `table`, an lmi_emu_kernel per kernel in list order (indexed by LMK_K_<name>). The includer
 * defines LMK_ARGS (the plan's argument struct) first; LMK_SFX0, LMK_SFX1 are the kernels'
 * suffixes for entry 0 and 1 (body/both_types.h: _f32, _f64; empty for a kernel of one type).
 */
#define LMI_EMU_ENTRY(name, args)                                                                  \
	static void LMK_CAT(name, _entry0)(void *p)                                                \
	{                                                                                          \
		const LMK_ARGS *a = p;                                                             \
		LMK_CAT(name, LMK_SFX0) args;                                                      \
	}                                                                                          \
	static void LMK_CAT(name, _entry1)(void *p)                                                \
	{                                                                                          \
		const LMK_ARGS *a = p;                                                             \
		LMK_CAT(name, LMK_SFX1) args;                                                      \
	}
#define LMI_EMU_ROW(name, args) {#name, {LMK_CAT(name, _entry0), LMK_CAT(name, _entry1)}},
#define LMI_EMU_KERNELS(LIST, table)                                                               \
	LIST(LMI_EMU_ENTRY)                                                                        \
	static const lmi_emu_kernel table[] = {LIST(LMI_EMU_ROW)};

/* The emulator's launch of a plan's launch l: kernels[l->kernel], entry `type`, with args and the
 * global or constant arrays the kernel may touch. */
static inline lmi_simt_launch lmi_emu_launch(const lmi_emu_kernel *kernels, int type,
                                             const lmk_launch *l, void *args,
                                             const lmi_simt_array *arrays, int narrays)
{
	lmi_simt_launch L = {
		.kernel = kernels[l->kernel].name,
		.grid = {l->grid.x, l->grid.y, l->grid.z},
		.block = {l->block.x, l->block.y, l->block.z},
		.dyn_shared = l->shared,
		.entry = kernels[l->kernel].entry[type],
		.args = args,
		.arrays = arrays,
		.narrays = narrays,
	};
	return L;
}

/* A global array of length elements; rows x cols: its 2-D layout hint (0, 0: 1-D). */
static inline lmi_simt_array lmi_emu_array(const char *name, lm_dtype dt, const void *data,
                                           int64_t length, int64_t rows, int64_t cols,
                                           bool readonly)
{
	lmi_simt_array a = {.name = name, .space = LM_SPACE_GLOBAL, .dtype = dt, .data = (void *)data,
	                    .length = length, .rows = rows, .cols = cols, .readonly = readonly};
	return a;
}

/* ---------------------------------------------------------------- the patterns' runs */

/* scan (scan.c, scan_emu.c): the call (body/scan_plan.h), and the cpu run's scratch. */
typedef struct lmi_scan_run {
	lmi_scan_call c;
	void *scratch; /* lmi_cpu_scratch_bytes */
} lmi_scan_run;
lm_status lmi_emu_scan(lmi_simt *s, const lmi_kcall *k, void *run);

/* reduce (reduce.c, reduce_emu.c): the call (body/reduce_plan.h), and the cpu run's scratch. */
typedef struct lmi_reduce_run {
	lmi_reduce_call c;
	void *scratch; /* lmi_cpu_scratch_bytes */
} lmi_reduce_run;
lm_status lmi_emu_reduce(lmi_simt *s, const lmi_kcall *k, void *run);

/* histogram (histogram.c, histogram_emu.c): the call (body/histogram_plan.h; histo: the emu and
 * cuda runs' 32-bit counts), the int64 result the cpu run counts into, its byte -> bin table. */
typedef struct lmi_hist_run {
	lmi_hist_call c;
	int64_t *counts;
	uint16_t lut[256];
} lmi_hist_run;
lm_status lmi_emu_histogram(lmi_simt *s, const lmi_kcall *k, void *run);

/* A pattern whose run is its call alone, and its emulated entry: lmi_<name>_run { c } and
 * lmi_emu_<entry>. */
#define LMI_CALL_ONLY_RUN(name, entry)                                                              \
	typedef struct lmi_##name##_run {                                                           \
		lmi_##name##_call c;                                                                    \
	} lmi_##name##_run;                                                                         \
	lm_status lmi_emu_##entry(lmi_simt *s, const lmi_kcall *k, void *run);

/* matmul (matmul.c, matmul_emu.c): the call (body/matmul_plan.h), and the cpu run's tiles and
 * loop order (cpu_kernels.h; given: tile_m, tile_n, tile_k or order was asked for). */
typedef struct lmi_matmul_run {
	lmi_matmul_call c;
	lmi_cpu_mm_tiling cpu;
	bool cpu_given;
} lmi_matmul_run;
lm_status lmi_emu_matmul(lmi_simt *s, const lmi_kcall *k, void *run);

/* conv2d (conv2d.c, conv2d_emu.c): the call (body/conv2d_plan.h), and the cpu run's output tiles
 * and loop order (given: tile_h, tile_w or order was asked for; else one tile per row). */
typedef struct lmi_conv_run {
	lmi_conv_call c;
	lmi_cpu_conv_tiling cpu;
	bool cpu_given;
} lmi_conv_run;
lm_status lmi_emu_conv2d(lmi_simt *s, const lmi_kcall *k, void *run);

LMI_CALL_ONLY_RUN(spmv, spmv)             /* spmv.c, spmv_emu.c; body/spmv_plan.h */
LMI_CALL_ONLY_RUN(divergence, divergence) /* divergence.c, divergence_emu.c; body/divergence_plan.h */
LMI_CALL_ONLY_RUN(access, access)         /* the memory-access demos: access.c, access_emu.c */
/* a program's fused group (fused.c, fused_emu.c; fused_call.h): the call, and its cpu run. */
typedef struct lmi_fused_run {
	lmi_fused_call c;
	const lmi_fused_cpu *cpu;
} lmi_fused_run;
lm_status lmi_emu_fused(lmi_simt *s, const lmi_kcall *k, void *run);

/* streams (streams.c, streams_emu.c): the call (body/streams_plan.h), the model's parameters,
 * each segment's modelled cycles (the emulated run), what the GPU measured (cuda). */
typedef struct lmi_streams_run {
	lmi_streams_call c;
	int engines;
	double gbps, ghz, sms;
	uint64_t cycles[LMI_STREAMS_MAX_SEGMENTS];
	lmi_cuda_streams_result m;
} lmi_streams_run;
lm_status lmi_emu_vector_add(lmi_simt *s, const lmi_kcall *k, void *run);

#endif
