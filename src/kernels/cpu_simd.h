/*
 * cpu_simd.h (internal to cpu_*.c) — the kernels' CPU loops whose speed depends on the vector
 * width, one table per instruction set, chosen at run time.
 *
 * Design: the loops are written once per path where the path needs its own intrinsics (the
 * in-register scans, the sums, the sparse gathers) and once for all paths where plain C compiled
 * for the path suffices (cpu_loops.h: histogram counting, Kogge-Stone steps, the tiled matmul's
 * tile product); cpu_loops_scalar.c, cpu_loops_avx2.c and cpu_loops_avx512.c each define one
 * lmi_cpu_loops table. liblumen's CMake compiles files named *_scalar.c, *_avx2.c, *_avx512.c
 * with their own -march after the build's (x86-64 without vectorisation, x86-64-v3, x86-64-v4),
 * so the avx2 file holds no AVX-512 instruction even in a -march=native build (the object code
 * is checked by tests/core/isa_objects.sh). Each file also opens a target region
 * (LMI_CPU_TARGET_*) that adds its features where no such flags are given (tools/gpu-check, built
 * with -march=native for the machine it runs on), so that every build has the three paths.
 * cpu_kernels.c picks the table (lmi_cpu_set_isa; liblumen follows lumen/isa.h's choice,
 * LUMEN_ISA included).
 * Lumen-free like the rest of cpu_*.c. Read next: cpu_loops_avx512.c, cpu_kernels.c.
 */
#ifndef LUMEN_KERNELS_CPU_SIMD_H
#define LUMEN_KERNELS_CPU_SIMD_H

#include <stdint.h>

#include "kernels/cpu_kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LMI_CPU_X86 1
#endif

/* The target regions: everything between BEGIN and END is compiled for the path. */
#define LMI_CPU_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define LMI_CPU_TARGET_BEGIN(features)                                                             \
	LMI_CPU_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
#define LMI_CPU_TARGET_END LMI_CPU_PRAGMA(clang attribute pop)
#define LMI_CPU_NO_VECTORIZE
#else
#define LMI_CPU_TARGET_BEGIN(features) LMI_CPU_PRAGMA(GCC push_options) LMI_CPU_PRAGMA(GCC target(features))
#define LMI_CPU_TARGET_END LMI_CPU_PRAGMA(GCC pop_options)
#define LMI_CPU_NO_VECTORIZE LMI_CPU_PRAGMA(GCC optimize("no-tree-vectorize", "no-tree-slp-vectorize"))
#endif
#define LMI_CPU_FEATURES_SCALAR "no-avx"
#define LMI_CPU_FEATURES_AVX2 "avx2,fma,bmi,bmi2,f16c,lzcnt,popcnt,movbe"
#if defined(__clang__)
#define LMI_CPU_FEATURES_AVX512 "avx512f,avx512bw,avx512dq,avx512vl,avx512cd,avx2,fma,bmi,bmi2"
#else
#define LMI_CPU_FEATURES_AVX512                                                                    \
	"avx512f,avx512bw,avx512dq,avx512vl,avx512cd,avx2,fma,bmi,bmi2,prefer-vector-width=512"
#endif

/* Software prefetch this many bytes ahead in the streaming loops: on the VMs measured here the
 * hardware prefetcher alone left the single-thread scan at ~60% of memcpy; 16 KiB ahead brought
 * it to ~75%. */
#define LMI_CPU_PREFETCH_BYTES 16384
#define LMI_CPU_PREFETCH(p) __builtin_prefetch((const char *)(p) + LMI_CPU_PREFETCH_BYTES, 0, 3)

typedef struct lmi_cpu_loops {
	int isa; /* LMI_CPU_SCALAR, _AVX2, _AVX512 */
	const char *scan_how; /* how a chunk is scanned: "16 floats per AVX-512 register, ..." */
	/* The sum of x[0..n), in a fixed order of this path. */
	double (*sum_f32)(const void *x, int64_t n);
	double (*sum_f64)(const void *x, int64_t n);
	/* y = carry + the scan of x[0..n) (exclusive: y[i] excludes x[i]); stream: non-temporal
	 * stores where y is aligned for them. Returns the sum of x in exactly sum_*'s order, so
	 * that a one-pass scan publishes the same chunk totals as a two-pass one. */
	double (*scan_f32)(const void *x, void *y, int64_t n, double carry, int exclusive, int stream);
	double (*scan_f64)(const void *x, void *y, int64_t n, double carry, int exclusive, int stream);
	/* Kogge-Stone over one section of n <= 1024 elements held in the cache: ceil(log2 n) steps
	 * buf[i] = prev[i] + prev[i - s] (s = 1, 2, 4, ...) through buf (2 n elements), then y =
	 * carry + the section's scan; returns carry + the section's total. */
	double (*ks_section_f32)(const float *x, float *y, int64_t n, double carry, int exclusive,
	                         float *buf);
	double (*ks_section_f64)(const double *x, double *y, int64_t n, double carry, int exclusive,
	                         double *buf);
	/* Histogram counting into a thread's private sub-histograms (cpu_histogram.c): bytes into
	 * c[8][256] (byte j of each 8 into copy j); int32 indices into `copies` copies of bins. */
	void (*count_u8)(const uint8_t *x, int64_t n, uint32_t (*c)[256]);
	void (*count_i32)(const int32_t *x, int64_t n, uint32_t *sub, int64_t bins, int copies);
	/* CSR: the dot product of row entries [lo, hi) with x. */
	float (*dot_f32)(const int32_t *col, const float *val, const float *x, int64_t lo, int64_t hi);
	double (*dot_f64)(const int32_t *col, const double *val, const double *x, int64_t lo,
	                  int64_t hi);
	/* ELL / JDS, the CPU's walk of their storage: acc[i] += val[i] * x[col[i]] for i < n where
	 * (nnz == NULL or nnz[i] > t): one slot of a block of consecutive rows, contiguous in
	 * memory. next_val / next_col: the next slot's arrays at the same rows, prefetched. */
	void (*slot_f32)(float *acc, const float *val, const int32_t *col, const float *x, int64_t n,
	                 const int32_t *nnz, int32_t t, const float *next_val, const int32_t *next_col);
	void (*slot_f64)(double *acc, const double *val, const int32_t *col, const double *x,
	                 int64_t n, const int32_t *nnz, int32_t t, const double *next_val,
	                 const int32_t *next_col);
	/* C tile (ti x tj, ldc) += A tile (ti x tp, lda) B tile (tp x tj, ldb) (cpu_dense.c). */
	void (*tile_f32)(float *c, int64_t ldc, const float *a, int64_t lda, const float *b,
	                 int64_t ldb, int64_t ti, int64_t tp, int64_t tj);
	void (*tile_f64)(double *c, int64_t ldc, const double *a, int64_t lda, const double *b,
	                 int64_t ldb, int64_t ti, int64_t tp, int64_t tj);
} lmi_cpu_loops;

extern const lmi_cpu_loops lmi_cpu_loops_scalar;
#ifdef LMI_CPU_X86
extern const lmi_cpu_loops lmi_cpu_loops_avx2, lmi_cpu_loops_avx512;
#endif

/* The table of the path in use (lmi_cpu_isa). */
const lmi_cpu_loops *lmi_cpu_loops_get(void);

#endif
