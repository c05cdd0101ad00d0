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

#include "backend/cuda_api.h"
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
} lmi_kcall;

/*
 * Resolves opts for a pattern whose variants are algos[0..nalgos) (default algos[0]).
 * Checks the backend and algorithm names, trace (only the emulator traces), repeats and trace_cap,
 * and the input: not NULL, a CPU tensor, float32/float64, not empty. Block and coarsen are left
 * to lmi_kcall_shape.
 */
lm_status lmi_kcall_resolve(const char *fname, const lm_tensor *x, const lm_kernel_opts *opts,
                            const char *const *algos, int nalgos, int default_algo, lmi_kcall *k);
/*
 * Block and coarsening. coarsens: whether the variant takes `coarsen` (else only 0 or 1 is
 * accepted); default_coarsen when opts->coarsen is 0. A thread handles elems_per_thread * coarsen
 * elements. block 0: the smallest power of two whose section covers n, if at most 1024, else 256.
 * Checks: block a power of two in 1..1024, coarsen in 1..1024.
 */
lm_status lmi_kcall_shape(lmi_kcall *k, const lm_kernel_opts *opts, bool coarsens,
                          unsigned default_coarsen, unsigned elems_per_thread);
/* Shared memory of shared_elems elements of the input's dtype per block: at most 48 KiB. */
lm_status lmi_kcall_check_shared(const lmi_kcall *k, int64_t shared_elems);

/* The info object. */
lm_kernel_info *lmi_info_new(const lmi_kcall *k, const char *pattern);
void lmi_info_add(lm_kernel_info *info, const char *name, double value);
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

#endif
