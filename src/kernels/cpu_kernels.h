/*
 * cpu_kernels.h — the native CPU runs of the patterns: plain loops over raw arrays, OpenMP across
 * cores, AVX-512 within a core (with a portable fallback), no tensors and no Lumen calls, so that
 * tools/gpu-check can build them beside the CUDA kernels with nothing but a C compiler.
 *
 * They are the CPU's answer to the same problems, not emulations of the GPU kernels: a scan is the
 * three-phase pattern at the scale of cores (per-core chunk sums, a scan of those, each core scanning
 * its chunk from that offset), each chunk scanned sixteen elements at a time by a Kogge-Stone scan
 * inside one vector register.
 * stop (may be NULL) is polled between chunks; when it becomes non-zero the functions return 1
 * with the output incomplete. Otherwise they return 0.
 * Read next: cpu_kernels.c.
 */
#ifndef LUMEN_KERNELS_CPU_KERNELS_H
#define LUMEN_KERNELS_CPU_KERNELS_H

#include <stdatomic.h>
#include <stdint.h>

/* y[i] = x[0] + ... + x[i] (inclusive) or + x[i-1] (exclusive; y[0] = 0). x, y: n elements. */
int lmi_cpu_scan_f32(const float *x, float *y, int64_t n, int exclusive, const atomic_int *stop);
int lmi_cpu_scan_f64(const double *x, double *y, int64_t n, int exclusive, const atomic_int *stop);

/* *out = x[0] + ... + x[n-1]. */
int lmi_cpu_sum_f32(const float *x, int64_t n, float *out, const atomic_int *stop);
int lmi_cpu_sum_f64(const double *x, int64_t n, double *out, const atomic_int *stop);

/* Threads the parallel loops use (OpenMP's count; 1 without OpenMP). */
int lmi_cpu_kernel_threads(void);

#endif
