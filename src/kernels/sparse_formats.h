/*
 * sparse_formats.h — the storage formats of PMPP chapter 14 built from a row-sorted COO matrix:
 * CSR, ELL (padded, column-major) and JDS (rows sorted by length, with the permutation). Plain C on
 * caller-provided arrays, no Lumen calls, so that tools/gpu-check builds the same formats.
 *
 * Indices are 0-based int32 (as the kernels read them); values are float or double (elem bytes).
 *   CSR  row_ptr[m + 1]: row r's nonzeros are col/val[row_ptr[r] .. row_ptr[r + 1])
 *   ELL  width = the longest row; slot t of row r at t * m + r (column-major: a warp's threads
 *        read consecutive addresses); padding slots: col 0, val 0; row_nnz[r] real slots
 *   JDS  perm[s] = the row at sorted position s (rows by decreasing length, ties in row order);
 *        the t-th nonzero of sorted row s at iter_ptr[t] + s (iteration-major, no padding);
 *        jds_nnz[s] = row perm[s]'s length
 * Read next: sparse.c (lm_sparse), body/spmv.h (the kernels).
 */
#ifndef LUMEN_KERNELS_SPARSE_FORMATS_H
#define LUMEN_KERNELS_SPARSE_FORMATS_H

#include <stddef.h>
#include <stdint.h>

/* row_ptr (m + 1) and row_nnz (m) from the nnz row indices, sorted ascending. Returns the
 * longest row (ELL's width, JDS's iterations). */
int64_t lmi_sparse_csr(int64_t m, int64_t nnz, const int32_t *row, int32_t *row_ptr,
                       int32_t *row_nnz);
/* ELL's col and val (width * m each) from CSR. */
void lmi_sparse_ell(int64_t m, int64_t width, const int32_t *row_ptr, const int32_t *col,
                    const void *val, size_t elem, int32_t *ell_col, void *ell_val);
/* JDS from CSR: perm (m), iter_ptr (width + 1), jds_nnz (m), jds_col and jds_val (nnz). */
void lmi_sparse_jds(int64_t m, int64_t width, const int32_t *row_ptr, const int32_t *col,
                    const void *val, size_t elem, int32_t *perm, int32_t *iter_ptr,
                    int32_t *jds_nnz, int32_t *jds_col, void *jds_val);

#endif
