/*
 * iter.h — the elementwise driver over an lmi_iter (see lmi.h for the iterator itself).
 */
#ifndef LUMEN_ITER_H
#define LUMEN_ITER_H

#include "lmi.h"

#ifdef _OPENMP
#include <omp.h>
static inline int omp_get_thread_num_safe(void) { return omp_get_thread_num(); }
#else
static inline int omp_get_thread_num_safe(void) { return 0; }
#endif

/*
 * A 1-D kernel: n elements; p[k] points at operand k's first element, stride[k] is its byte
 * stride along the row (0 for a broadcast operand).
 */
typedef void (*lmi_iter_kernel)(void *ctx, char **p, const int64_t *stride, int64_t n);

/* Runs kernel over every element of it (in parallel when large). LM_ERR_INTERRUPTED when
 * lm_interrupt() was called; the outputs are then partly written. */
lm_status lmi_iter_run(const lmi_iter *it, lmi_iter_kernel kernel, void *ctx);

/*
 * The same for a kernel whose operand 0 is a fresh output of out_elsize-byte elements: when that
 * output is large (LMI_STREAM_BYTES or more) and dense along the inner dim, the kernel writes
 * blocks into an L1-resident buffer that is then streamed out with non-temporal stores: no
 * read-for-ownership of the output's lines, which made a + b on 64 MB 30% slower here.
 * Operand 0 must not be read by the kernel (it sees the buffer in its place).
 */
#define LMI_STREAM_BYTES ((int64_t)8 << 20)
lm_status lmi_iter_run_out(const lmi_iter *it, lmi_iter_kernel kernel, void *ctx,
                           size_t out_elsize);
/* The streaming copy itself, for other loops with large fresh outputs; call lmi_stream_fence()
 * before the data is read by another thread (the end of a parallel loop body). */
void lmi_stream_copy(void *dst, const void *src, size_t n);
void lmi_stream_fence(void);

#endif
