/*
 * cpu_move.h — CPU loops that move data by position rather than compute on it: indexing
 * (index_select, gather, scatter_add, one_hot), sorting, running sums, triangles, tiling and the
 * 2-D windows of convolution (im2col / col2im).
 *
 * Same contract as cpu.h: the ops layer has checked shapes, dtypes and devices; outputs are
 * preallocated and contiguous. Loops that can meet bad data (an index out of range) check it
 * themselves, in parallel, and carry the first message out of the worker threads (lmi_par_*).
 * Long loops poll the interrupt flag and return LM_ERR_INTERRUPTED; the caller then discards
 * the partly written output. Read next: index.c, sort.c, scan.c, window.c (this directory).
 */
#ifndef LUMEN_BACKEND_CPU_MOVE_H
#define LUMEN_BACKEND_CPU_MOVE_H

#include "backend/cpu/cpu.h"

/*
 * out = x.index_select(dim, idx). x contiguous, seen as (outer, size, inner); idx int32/int64,
 * contiguous, n entries, each checked against size; out contiguous (outer, n, inner).
 * fname names the op in errors.
 */
lm_status lmi_cpu_index_select(const char *fname, const lm_tensor *x, int64_t outer, int64_t size,
                               int64_t inner, const lm_tensor *idx, lm_tensor *out);

/*
 * gather: out[p] = x[p with p[dim] replaced by idx[p]] for every position p of idx (any strides);
 * out contiguous with idx's shape; x any strides, same dtype as out.
 */
lm_status lmi_cpu_gather(const lm_tensor *x, int dim, const lm_tensor *idx, lm_tensor *out);

/*
 * scatter_add: out[p with p[dim] replaced by idx[p]] += src[p] for every position p of idx.
 * out contiguous (already holding x), src any strides, same dtype as out. Positions that differ
 * only along dim run in order on one thread, so the sums are deterministic.
 */
lm_status lmi_cpu_scatter_add(lm_tensor *out, int dim, const lm_tensor *idx, const lm_tensor *src);

/* one_hot: out (numel(idx), classes) int64 zeros, set to 1 at idx; idx int32/int64, any strides. */
lm_status lmi_cpu_one_hot(const lm_tensor *idx, int64_t classes, lm_tensor *out);

/*
 * Stable sort of each line of contiguous x seen as (outer, R, inner) along R: values (x's dtype)
 * and int64 indices, both contiguous (outer, k, inner); the first k of each sorted line are
 * written (k = R for sort, k <= R for topk). NaN sorts as larger than every number.
 */
lm_status lmi_cpu_sort(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                       bool descending, lm_tensor *values, lm_tensor *indices);

/* Running sums along R of contiguous x (outer, R, inner) into out (float: same dtype, summed in
 * double; integers: int64, wrapping). */
lm_status lmi_cpu_cumsum(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                         lm_tensor *out);

/* Lower (upper = false) or upper triangle: contiguous x (B, M, N) into out, keeping j - i <= k
 * (tril) or j - i >= k (triu), zeros elsewhere. */
lm_status lmi_cpu_triangle(const lm_tensor *x, int64_t B, int64_t M, int64_t N, int64_t k,
                           bool upper, lm_tensor *out);

/*
 * Tiles out (contiguous, ndim dims, shape[d] = reps[d] * xshape[d]) from its corner block, which
 * the caller has already filled with x: block copies outward from the last dim.
 */
lm_status lmi_cpu_repeat_fill(lm_tensor *out, const int64_t *xshape, const int64_t *reps);

/*
 * 2-D windows. x: (N, C, H, W) contiguous -> cols: (N, C*kh*kw, oh*ow) contiguous; zero padding.
 * col2im is its adjoint: cols -> out (N, C, H, W), overlapping windows summed (out is written
 * completely, no need to zero it first). Parallel over (N, C).
 */
lm_status lmi_cpu_im2col(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                         lm_tensor *cols);
lm_status lmi_cpu_col2im(const lm_tensor *cols, const lm_window2d *w, int64_t oh, int64_t ow,
                         lm_tensor *out);
/* Channels last: x (N, H, W, C) contiguous -> cols (N, oh*ow, kh*kw*C) contiguous, row (oy, ox)
 * holding window position (ki, kj)'s C channels at (ki*kw + kj)*C; zero padding. Any dtype. */
lm_status lmi_cpu_im2col_nhwc(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                              lm_tensor *cols);

#endif
