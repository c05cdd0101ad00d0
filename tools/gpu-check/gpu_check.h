/*
 * gpu_check.h — what the two halves of the GPU check share: the tally of runs and failures, the
 * clock, and the random integers that make every sum exact.
 * Read next: gpu_check.c (scan, reduce, main), gpu_check_two.c (the patterns of kernels II).
 */
#ifndef LUMEN_GPU_CHECK_H
#define LUMEN_GPU_CHECK_H

#include <stdint.h>

#include "backend/cuda/tensor_api.h"
#include "kernels/cuda/cuda_api.h"

typedef struct tally {
	int runs, failures;
} tally;

double gc_now_ms(void);
/* xorshift64* integers in [lo, hi) */
int gc_int(int lo, int hi);
/* Histogram, matmul, conv2d, SpMV, divergence and streams rows of the table. */
void gc_kernels_two(const lmi_cuda_kernels *api, tally *tl, int quick);
/* The lectures' comparisons: the emulator's modelled cycles beside CUDA's times (gpu_check_model.c). */
void gc_model_rankings(const lmi_cuda_kernels *api, tally *tl, int quick);
/* The tensor backend's kernels against CPU references, and issue 22's Measure rows
 * (gpu_check_tensor.c). */
void gc_tensor_backend(tally *tl, int quick);
/* Its helpers: a result row; device memory (exits when none), copies up and down; a contiguous
 * array. */
void gc_row(tally *tl, const char *what, int ok, const char *detail);
void *gc_dev(size_t n);
void gc_up(void *d, const void *h, size_t n);
void gc_down(void *h, const void *d, size_t n);
lmi_cu_arr gc_arr(void *p, int dt, int nd, const int64_t *shape);
/* The slots of version 3 (gpu_check_slots.c): gelu, max pooling, RMSprop, crop / flip, prod /
 * var / std / norm, the index ops, cumsum, triangles, repeat and sort, against loops here. */
void gc_tensor_slots(tally *tl);

#endif
