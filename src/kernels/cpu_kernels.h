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

#endif
