/*
 * patterns.h (internal) — what the pattern files (scan.c, reduce.c and their _emu.c hosts) share:
 * options resolved and checked once, the info object they fill, timing of the native runs.
 *
 * Design: a public call (lm_kernel_scan) resolves its lm_kernel_opts into an lmi_kcall (backend
 * chosen, algorithm looked up, block and coarsening defaulted and checked against the limits),
 * then runs one of three ways and fills an lm_kernel_info with counters in a fixed order.
 * Read next: kernels.c (this header's functions), scan.c, reduce.c.
 */
#ifndef LUMEN_KERNELS_PATTERNS_H
#define LUMEN_KERNELS_PATTERNS_H

#include "kernels/cuda/cuda_api.h"
#include "core/lmi.h"
#include "kernels/simt.h"
#include "lumen/kernels.h"

typedef enum { LMI_BACKEND_EMU, LMI_BACKEND_CPU, LMI_BACKEND_CUDA } lmi_backend;

typedef struct lmi_kcall {
	const char *fname;     /* "kernels.scan": names the call in every message */
	lmi_backend backend;
	int algo;              /* index into the pattern's algorithm names */
	const char *algo_name;
	unsigned block;        /* threads per block */
	unsigned coarsen;      /* elements per thread where the variant coarsens */
	bool inclusive;
	int64_t trace_cap;
	int repeats;
	lm_dtype dtype;
	int64_t n;
	bool any_block;        /* lmi_kcall_shape accepts any block 1..1024, not only powers of two */
} lmi_kcall;

/* What a pattern can run on (lmi_kcall_begin): patterns without a cpu run (divergence, streams)
 * take "auto" to mean cuda with a GPU, else emu, and reject "cpu". */
enum { LMI_RUNS_ALL = 0, LMI_RUNS_NO_CPU = 1 };

/*
 * Resolves opts for a pattern whose variants are algos[0..nalgos) (default algos[0]).
 * Checks the backend and algorithm names, trace (only the emulator traces), repeats and trace_cap,
 * and the input: not NULL, a CPU tensor, float32/float64, not empty. Block and coarsen are left
 * to lmi_kcall_shape.
 */
lm_status lmi_kcall_resolve(const char *fname, const lm_tensor *x, const lm_kernel_opts *opts,
                            const char *const *algos, int nalgos, int default_algo, lmi_kcall *k);
/*
 * The input-independent part of lmi_kcall_resolve, for patterns whose input is not one float
 * tensor: backend (runs: LMI_RUNS_*), algorithm, trace, repeats, trace_cap; k->n = n (elements the
 * 32-bit emu/cuda runs index) and k->dtype = dt.
 */
lm_status lmi_kcall_begin(const char *fname, const lm_kernel_opts *opts, const char *const *algos,
                          int nalgos, int default_algo, int runs, int64_t n, lm_dtype dt,
                          lmi_kcall *k);

/*
 * Block and coarsening. coarsens: whether the variant takes `coarsen` (else only 0 or 1 is
 * accepted); default_coarsen when opts->coarsen is 0. A thread handles elems_per_thread * coarsen
 * elements. block 0: the smallest power of two whose section covers n, if at most 1024, else 256.
 * Checks: block a power of two in 1..1024, coarsen in 1..1024.
 */
lm_status lmi_kcall_shape(lmi_kcall *k, const lm_kernel_opts *opts, bool coarsens,
                          unsigned default_coarsen, unsigned elems_per_thread);
/* The tile option of matmul and conv2d (default 16, 1..32); they take neither block (the block
 * follows from the tile) nor coarsen. Sets k->coarsen = 1. */
lm_status lmi_kcall_tile(lmi_kcall *k, const lm_kernel_opts *opts, unsigned *tile);
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
void lmi_info_set_trace(lm_kernel_info *info, lm_trace *t); /* takes the reference */
/* The emulator's counters, in docs/API.md's order. */
void lmi_info_add_emu(lm_kernel_info *info, const lmi_simt_counters *c, const lmi_kcall *k);
/* time_ms, bytes, gbps (+ threads for the cpu) of a measured run. */
void lmi_info_add_measured(lm_kernel_info *info, double time_ms, double bytes);

/* Runs fn(arg) once to warm up, then `repeats` times; *median_ms: the median wall time
 * (CLOCK_MONOTONIC). fn returns non-zero when interrupted: then LM_ERR_INTERRUPTED. */
lm_status lmi_time_median(const char *fname, int repeats, int (*fn)(void *), void *arg,
                          double *median_ms);

/* "AMD EPYC 9454P 48-Core Processor" (from /proc/cpuinfo), or "CPU". */
const char *lmi_cpu_model(void);

/* The emulated runs (scan_emu.c, reduce_emu.c): out is preallocated (scan: n elements, reduce:
 * one), x contiguous; s records into its trace. */
lm_status lmi_emu_scan(lmi_simt *s, const lmi_kcall *k, const void *x, void *out);
lm_status lmi_emu_reduce(lmi_simt *s, const lmi_kcall *k, const void *x, void *out);

/* histogram_emu.c: histo is zeroed, then counts bins bins. */
lm_status lmi_emu_histogram(lmi_simt *s, const lmi_kcall *k, const void *data, bool is_u8,
                            bool scaled, unsigned bins, uint32_t *histo);

/* matmul_emu.c: c = a b, (m, kk) x (kk, n), tile x tile blocks. */
lm_status lmi_emu_matmul(lmi_simt *s, const lmi_kcall *k, const void *a, const void *b, void *c,
                         int64_t m, int64_t kk, int64_t n, unsigned tile);

/* conv2d_emu.c: out = img (h, w) convolved with mask (mh, mw); algo: LMI_CONV_*. */
lm_status lmi_emu_conv2d(lmi_simt *s, const lmi_kcall *k, int algo, const void *img,
                         const void *mask, void *out, int64_t h, int64_t w, int64_t mh, int64_t mw,
                         unsigned tile);

/* The arrays of an lm_sparse (sparse.c; borrowed; see sparse_formats.h). */
typedef struct lmi_sparse_view {
	int64_t m, n, nnz, width;
	lm_dtype dtype;
	const int32_t *row, *col, *row_ptr, *row_nnz, *ell_col, *perm, *iter_ptr, *jds_nnz, *jds_col;
	const void *val, *ell_val, *jds_val;
} lmi_sparse_view;
void lmi_sparse_raw(const lm_sparse *a, lmi_sparse_view *v);

/* spmv_emu.c: y = A x in format (LMI_SPMV_*); y: m elements. */
lm_status lmi_emu_spmv(lmi_simt *s, const lmi_kcall *k, int format, const lmi_sparse_view *A,
                       const void *x, void *y);

/* divergence_emu.c: the demo over n threads (whole warps) in blocks of block. */
lm_status lmi_emu_divergence(lmi_simt *s, int pattern, const float *x, float *y, int64_t n,
                             unsigned block);

/* streams_emu.c: C = A + B over n floats, one launch per segment (segment s: elements
 * [n s / segments, n (s + 1) / segments)); cycles[s]: the modelled cycles of launch s. */
lm_status lmi_emu_vector_add(lmi_simt *s, const float *A, const float *B, float *C, int64_t n,
                             int segments, unsigned block, uint64_t *cycles);

/* A fresh emulator with a trace named name for k's call (the info takes the trace). The latency
 * model in force is used, with sms replaced when sms > 0. */
lm_status lmi_emu_start(const lmi_kcall *k, const char *name, lm_kernel_info *info, double sms,
                        lmi_simt **out);

#endif
