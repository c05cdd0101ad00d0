/*
 * cpu_kernels.h — the native CPU runs of the patterns: plain loops over raw arrays, OpenMP across
 * cores, AVX-512 within a core (with a portable fallback), no tensors and no Lumen calls, so that
 * tools/gpu-check can build them beside the CUDA kernels with nothing but a C compiler.
 *
 * They are the CPU's answer to the same problems, not emulations of the GPU kernels: a scan is a
 * single-pass chained scan over chunks (each chunk's sum, then its prefix from the chunks before it,
 * then the chunk scanned from that prefix), each chunk scanned sixteen elements at a time by a
 * Kogge-Stone scan inside one vector register.
 * stop (may be NULL) is polled between chunks; when it becomes non-zero the functions return 1
 * with the output incomplete. Otherwise they return 0.
 * Read next: cpu_kernels.c.
 */
#ifndef LUMEN_KERNELS_CPU_KERNELS_H
#define LUMEN_KERNELS_CPU_KERNELS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of scratch memory the calls below need for n elements of elem bytes (0: none; then
 * scratch may be NULL). The caller allocates it (Lumen: lm_alloc). */
size_t lmi_cpu_scratch_bytes(int64_t n, size_t elem);

/* y[i] = x[0] + ... + x[i] (inclusive) or + x[i-1] (exclusive; y[0] = 0). x, y: n elements.
 * The result is the same for any number of threads. */
int lmi_cpu_scan_f32(const float *x, float *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch);
int lmi_cpu_scan_f64(const double *x, double *y, int64_t n, int exclusive, const atomic_int *stop,
                     void *scratch);

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
 * most 4096). Per-thread private histograms, several per thread. */
int lmi_cpu_histogram_u8(const uint8_t *x, int64_t n, const uint16_t lut[256], int64_t *counts,
                         const atomic_int *stop);
int lmi_cpu_histogram_i32(const int32_t *x, int64_t n, int64_t bins, int64_t *counts,
                          const atomic_int *stop);

/* C (m x n) = A (m x k) B (k x n), row-major (cpu_dense.c). naive: the triple loop, a dot product
 * per element of C (B read down a column); blocked: cache blocking, B read along rows. */
int lmi_cpu_matmul_naive_f32(const float *a, const float *b, float *c, int64_t m, int64_t k,
                             int64_t n, const atomic_int *stop);
int lmi_cpu_matmul_naive_f64(const double *a, const double *b, double *c, int64_t m, int64_t k,
                             int64_t n, const atomic_int *stop);
int lmi_cpu_matmul_blocked_f32(const float *a, const float *b, float *c, int64_t m, int64_t k,
                               int64_t n, const atomic_int *stop);
int lmi_cpu_matmul_blocked_f64(const double *a, const double *b, double *c, int64_t m, int64_t k,
                               int64_t n, const atomic_int *stop);

/* "Same" 2-D convolution with zero ghost cells (cpu_dense.c): out (h x w), mask (mh x mw) anchored
 * at ((mh - 1) / 2, (mw - 1) / 2). */
int lmi_cpu_conv2d_f32(const float *img, const float *mask, float *out, int64_t h, int64_t w,
                       int64_t mh, int64_t mw, const atomic_int *stop);
int lmi_cpu_conv2d_f64(const double *img, const double *mask, double *out, int64_t h, int64_t w,
                       int64_t mh, int64_t mw, const atomic_int *stop);

/* y = A x in CSR (cpu_spmv.c), OpenMP over rows split so that each thread gets about the same
 * number of nonzeros; and the other formats (arrays as lm_sparse_array names them). */
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

#endif
