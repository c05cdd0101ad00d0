/*
 * cpu_kernels.h — the native CPU runs of the patterns: plain loops over raw arrays, OpenMP across
 * cores, SIMD within a core on the path chosen at run time (scalar, AVX2 + FMA or AVX-512: every
 * build has all three, cpu_simd.h), no tensors and no Lumen calls, so that tools/gpu-check can
 * build them beside the CUDA kernels with nothing but a C compiler.
 *
 * They are the CPU's answer to the same problems, not emulations of the GPU kernels, except where
 * the contrast between two algorithms is itself the lesson and is measured on this hardware: the
 * Kogge-Stone scan against the work-efficient one, global atomics against private histograms,
 * the naive matmul against the tiled one. The work-efficient scan is a single-pass chained scan
 * over chunks (each chunk's sum, then its prefix from the chunks before it, then the chunk scanned
 * from that prefix), each chunk scanned 8 or 16 elements at a time inside vector registers.
 * stop (may be NULL) is polled between chunks; when it becomes non-zero the functions return 1
 * with the output incomplete. Otherwise they return 0.
 * Read next: cpu_kernels.c, cpu_simd.h.
 */
#ifndef LUMEN_KERNELS_CPU_KERNELS_H
#define LUMEN_KERNELS_CPU_KERNELS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- the SIMD path */

/* The paths, numbered as lumen/isa.h's lm_isa (liblumen passes lm_isa values straight in). */
enum { LMI_CPU_SCALAR, LMI_CPU_AVX2, LMI_CPU_AVX512, LMI_CPU_ISA_COUNT };
/* Whether this build and CPU (and its OS) can run path isa: avx2 needs AVX2, FMA, BMI1/2, F16C,
 * LZCNT, MOVBE; avx512 those and AVX-512 F, CD, BW, DQ, VL. */
int lmi_cpu_isa_supported(int isa);
/* The path the runs below take: the one last set, else the best the CPU supports. */
int lmi_cpu_isa(void);
/* Selects the path (0), or leaves it unchanged and returns -1 when it is not supported. liblumen
 * sets lumen/isa.h's choice (best, LUMEN_ISA, lm_isa_set) before each measured run. */
int lmi_cpu_set_isa(int isa);
/* "scalar", "avx2", "avx512" ("?" otherwise). */
const char *lmi_cpu_isa_name(int isa);
/* How the path in use scans a chunk ("16 floats (8 doubles) per AVX-512 register, ..."). */
const char *lmi_cpu_scan_how(void);

/* Bytes of scratch memory the calls below need for n elements of elem bytes (0: none; then
 * scratch may be NULL). The caller allocates it (Lumen: lm_alloc). */
size_t lmi_cpu_scratch_bytes(int64_t n, size_t elem);

/* Bytes per chunk of the chained scans and sums (read from memory once, then again from L2). */
#define LMI_CPU_CHUNK_BYTES (512 * 1024)

/* y[i] = x[0] + ... + x[i] (inclusive) or + x[i-1] (exclusive; y[0] = 0). x, y: n elements.
 * The work-efficient chained scan: n additions to sum the chunks, n to scan them (one pass over
 * memory on one thread). The result is the same for any number of threads. */
int lmi_cpu_scan_f32(const float *x, float *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch);
int lmi_cpu_scan_f64(const double *x, double *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch);
/* The same chunks, each scanned as sections of `section` elements (1..1024) by Kogge-Stone:
 * ceil(log2 section) steps over the section in the cache, each adding every element's neighbour
 * 1, 2, 4, ... places back (section * log2 section additions, against section for a sequential
 * scan), the sections chained by a carry. The same for any number of threads. */
int lmi_cpu_scan_kogge_stone_f32(const float *x, float *y, int64_t n, int exclusive,
                                 unsigned section, const atomic_int *stop, void *scratch);
int lmi_cpu_scan_kogge_stone_f64(const double *x, double *y, int64_t n, int exclusive,
                                 unsigned section, const atomic_int *stop, void *scratch);

/* *out = x[0] + ... + x[n-1], the same for any number of threads. */
int lmi_cpu_sum_f32(const float *x, int64_t n, float *out, const atomic_int *stop, void *scratch);
int lmi_cpu_sum_f64(const double *x, int64_t n, double *out, const atomic_int *stop, void *scratch);

/* Threads the parallel loops use (OpenMP's count; 1 without OpenMP). */
int lmi_cpu_kernel_threads(void);

/* Writes back and evicts the cache lines of [p, p + bytes) from every cache level (clflush on
 * x86-64), so that the next run reads them from memory; returns the lines flushed: 0 where the
 * CPU offers programs no such instruction (then timed runs of inputs smaller than the caches time
 * the caches, docs/trace.md). The timing of every measured cpu run calls it on each operand. */
size_t lmi_cache_flush(const void *p, size_t bytes);
/* Lines flushed by lmi_cache_flush in this process (tests). */
int64_t lmi_cache_lines_flushed(void);

/* ---------------------------------------------------------------- kernels II (cpu_*.c) */

/* Histograms (cpu_histogram.c): counts[bin] += the elements in it (counts: bins int64, added to,
 * not cleared). Bytes: byte b counts in bin lut[b]; int32: values must lie in 0..bins-1 (bins at
 * most 4096). Privatized: per-thread private histograms, several per thread, added into counts
 * once per thread. */
int lmi_cpu_histogram_u8(const uint8_t *x, int64_t n, const uint16_t lut[256], int64_t *counts,
                         const atomic_int *stop);
int lmi_cpu_histogram_i32(const int32_t *x, int64_t n, int64_t bins, int64_t *counts,
                          const atomic_int *stop);
/* Global atomics: every thread increments the shared counts with an atomic add per element (the
 * threads contend for the same cache lines); aggregate: a run of consecutive elements of one bin
 * is one atomic add of its length. */
int lmi_cpu_histogram_atomic_u8(const uint8_t *x, int64_t n, const uint16_t lut[256],
                                int64_t *counts, int aggregate, const atomic_int *stop);
int lmi_cpu_histogram_atomic_i32(const int32_t *x, int64_t n, int64_t *counts, int aggregate,
                                 const atomic_int *stop);
/* Private counters per thread of the privatized histograms (copies of up to 4096 bins). */
#define LMI_CPU_HIST_SUB_ENTRIES 8192
/* Sub-histograms per thread for bins int32 bins (8 for bytes). */
int lmi_cpu_histogram_copies(int64_t bins);

/* C (m x n) = A (m x k) B (k x n), row-major (cpu_dense.c). naive: the triple loop, a dot product
 * per element of C (B read down a column); tiled: C in tile x tile blocks, k in slices of tile:
 * a tile of C gains the product of a tile of A and a tile of B, all three held in L1 (the CPU's
 * form of the GPU's shared-memory tiles; tile 1..1024). _tiled_ord: the same with rectangular
 * tiles (tm x tn blocks of C, k in slices of tk) and the three tile loops in any order. Every
 * order adds each element's products in increasing k, as the naive loop does, so every tiling
 * gives the same bits. */
int lmi_cpu_matmul_naive_f32(const float *a, const float *b, float *c, int64_t m, int64_t k,
                             int64_t n, const atomic_int *stop);
int lmi_cpu_matmul_naive_f64(const double *a, const double *b, double *c, int64_t m, int64_t k,
                             int64_t n, const atomic_int *stop);
int lmi_cpu_matmul_tiled_f32(const float *a, const float *b, float *c, int64_t m, int64_t k,
                             int64_t n, int64_t tile, const atomic_int *stop);
int lmi_cpu_matmul_tiled_f64(const double *a, const double *b, double *c, int64_t m, int64_t k,
                             int64_t n, int64_t tile, const atomic_int *stop);

/* The tiled matmul's knobs: tiles of C (tm x tn) and of k (tk), each >= 1, and the order of the
 * three tile loops, outermost first (lmi_cpu_matmul_orders: "ijk", the default, ... "kji"; i walks
 * C's rows, j its columns, k the sum). With i or j outermost, OpenMP shares out that loop: a thread
 * owns a strip of C. With k outermost, each slice of k is a parallel loop over the middle loop's
 * strips (a barrier between slices): no two threads ever add into the same tile of C. */
enum { LMI_MM_IJK, LMI_MM_IKJ, LMI_MM_JIK, LMI_MM_JKI, LMI_MM_KIJ, LMI_MM_KJI, LMI_MM_ORDER_COUNT };
extern const char *const lmi_cpu_matmul_orders[LMI_MM_ORDER_COUNT + 1]; /* NULL-terminated */
typedef struct lmi_cpu_mm_tiling {
	int64_t tm, tn, tk;
	int order; /* LMI_MM_* */
} lmi_cpu_mm_tiling;
int lmi_cpu_matmul_tiled_ord_f32(const float *a, const float *b, float *c, int64_t m, int64_t k,
                                 int64_t n, const lmi_cpu_mm_tiling *t, const atomic_int *stop);
int lmi_cpu_matmul_tiled_ord_f64(const double *a, const double *b, double *c, int64_t m, int64_t k,
                                 int64_t n, const lmi_cpu_mm_tiling *t, const atomic_int *stop);

/* "Same" 2-D convolution with zero ghost cells (cpu_dense.c): out (h x w), mask (mh x mw) anchored
 * at ((mh - 1) / 2, (mw - 1) / 2). */
int lmi_cpu_conv2d_f32(const float *img, const float *mask, float *out, int64_t h, int64_t w,
                       int64_t mh, int64_t mw, const atomic_int *stop);
int lmi_cpu_conv2d_f64(const double *img, const double *mask, double *out, int64_t h, int64_t w,
                       int64_t mh, int64_t mw, const atomic_int *stop);
/* The tiled form: output tiles of th rows x tw columns (each >= 1; th 1, tw w is the loop above),
 * and the order of the tile loops against the mask loops (lmi_cpu_conv2d_orders), outermost first:
 * "tile-row-mask" (a tile, then each of its rows, then the mask: the default), "tile-mask-row" (a
 * tile, then the mask, each mask element swept over the tile's rows while the output tile stays in
 * L1), "mask-tile-row" (the mask outermost: each mask element swept over the whole image, a
 * parallel loop over the tiles per element). Each output adds the mask's products in the same
 * order (mask rows, then columns) in every form: the same bits. */
enum {
	LMI_CONV_ORD_TILE_ROW_MASK,
	LMI_CONV_ORD_TILE_MASK_ROW,
	LMI_CONV_ORD_MASK_TILE_ROW,
	LMI_CONV_ORD_COUNT
};
extern const char *const lmi_cpu_conv2d_orders[LMI_CONV_ORD_COUNT + 1]; /* NULL-terminated */
typedef struct lmi_cpu_conv_tiling {
	int64_t th, tw;
	int order; /* LMI_CONV_ORD_* */
} lmi_cpu_conv_tiling;
int lmi_cpu_conv2d_tiled_f32(const float *img, const float *mask, float *out, int64_t h, int64_t w,
                             int64_t mh, int64_t mw, const lmi_cpu_conv_tiling *t,
                             const atomic_int *stop);
int lmi_cpu_conv2d_tiled_f64(const double *img, const double *mask, double *out, int64_t h,
                             int64_t w, int64_t mh, int64_t mw, const lmi_cpu_conv_tiling *t,
                             const atomic_int *stop);

/* y = A x in CSR (cpu_spmv.c), OpenMP over rows split so that each thread gets about the same
 * number of nonzeros; and the other formats (arrays as lm_sparse_array names them). ELL and JDS
 * are walked in their memory order: a thread takes a block of consecutive (sorted) rows and
 * sweeps it slot by slot, each slot's entries for the block contiguous, the block's sums in L1. */
int lmi_cpu_spmv_csr_f32(const int32_t *row_ptr, const int32_t *col, const float *val,
                         const float *x, float *y, int64_t m, const atomic_int *stop);
int lmi_cpu_spmv_csr_f64(const int32_t *row_ptr, const int32_t *col, const double *val,
                         const double *x, double *y, int64_t m, const atomic_int *stop);
int lmi_cpu_spmv_coo(int is_double, const int32_t *row, const int32_t *col, const void *val,
                     const void *x, void *y, int64_t m, int64_t nnz, const atomic_int *stop);
int lmi_cpu_spmv_ell(int is_double, const int32_t *col, const void *val, const int32_t *row_nnz,
                     const void *x, void *y, int64_t m, const atomic_int *stop);
int lmi_cpu_spmv_jds(int is_double, const int32_t *perm, const int32_t *iter_ptr,
                     const int32_t *row_nnz, const int32_t *col, const void *val, const void *x,
                     void *y, int64_t m, const atomic_int *stop);
/* Rows per block of the ELL and JDS sweeps. */
#define LMI_CPU_SPMV_BLOCK_ROWS 1024

/* Whether lm_interrupt() raised the stop flag (NULL: never). */
static inline int lmi_cpu_stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed) != 0;
}

/* for (blk = 0; blk < nblocks; blk++) BODY, but a block begun after a stop runs nothing: quit is
 * set instead (an OpenMP loop cannot break). May follow #pragma omp for. */
#define LMI_FOR_BLOCKS_UNTIL_STOPPED(blk, nblocks, quit, stop)                                      \
	for (int64_t blk = 0; blk < (nblocks); blk++)                                                \
		if ((quit) || lmi_cpu_stopped(stop))                                                     \
			(quit) = 1;                                                                          \
		else

#endif
