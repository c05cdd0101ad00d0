/*
 * sparse_formats.c — CSR, ELL and JDS from a row-sorted COO matrix (see sparse_formats.h).
 *
 * Design: everything is counting: row lengths give CSR's offsets; ELL writes each row's entries
 * down its column of slots; JDS sorts the rows by length with a counting sort (descending, stable)
 * and then counts, per iteration t, how many sorted rows are longer than t.
 * Read next: sparse.c.
 */
#include <string.h>

#include "kernels/sparse_formats.h"

int64_t lmi_sparse_csr(int64_t m, int64_t nnz, const int32_t *row, int32_t *row_ptr,
                       int32_t *row_nnz)
{
	memset(row_nnz, 0, (size_t)m * sizeof *row_nnz);
	for (int64_t i = 0; i < nnz; i++) row_nnz[row[i]]++;
	int64_t width = 0;
	row_ptr[0] = 0;
	for (int64_t r = 0; r < m; r++) {
		row_ptr[r + 1] = row_ptr[r] + row_nnz[r];
		if (row_nnz[r] > width) width = row_nnz[r];
	}
	return width;
}

void lmi_sparse_ell(int64_t m, int64_t width, const int32_t *row_ptr, const int32_t *col,
                    const void *val, size_t elem, int32_t *ell_col, void *ell_val)
{
	memset(ell_col, 0, (size_t)(width * m) * sizeof *ell_col);
	memset(ell_val, 0, (size_t)(width * m) * elem);
	for (int64_t r = 0; r < m; r++)
		for (int64_t i = row_ptr[r]; i < row_ptr[r + 1]; i++) {
			int64_t slot = (i - row_ptr[r]) * m + r;
			ell_col[slot] = col[i];
			memcpy((char *)ell_val + (size_t)slot * elem, (const char *)val + (size_t)i * elem, elem);
		}
}

void lmi_sparse_jds(int64_t m, int64_t width, const int32_t *row_ptr, const int32_t *col,
                    const void *val, size_t elem, int32_t *perm, int32_t *iter_ptr,
                    int32_t *jds_nnz, int32_t *jds_col, void *jds_val)
{
	/* rows by decreasing length: start[len] = first sorted position of rows of that length
	 * (iter_ptr serves as the table of starts, then is overwritten) */
	memset(iter_ptr, 0, (size_t)(width + 1) * sizeof *iter_ptr);
	for (int64_t r = 0; r < m; r++) iter_ptr[width - (row_ptr[r + 1] - row_ptr[r])]++;
	int32_t pos = 0;
	for (int64_t l = 0; l <= width; l++) { /* l: width - length */
		int32_t count = iter_ptr[l];
		iter_ptr[l] = pos;
		pos += count;
	}
	for (int64_t r = 0; r < m; r++) {
		int32_t len = row_ptr[r + 1] - row_ptr[r];
		int32_t s = iter_ptr[width - len]++;
		perm[s] = (int32_t)r;
		jds_nnz[s] = len;
	}
	/* iteration t holds one entry of every sorted row longer than t: rows 0 .. count(t) - 1 */
	iter_ptr[0] = 0;
	int64_t longer = m;
	for (int64_t t = 0; t < width; t++) {
		while (longer > 0 && jds_nnz[longer - 1] <= t) longer--;
		iter_ptr[t + 1] = iter_ptr[t] + (int32_t)longer;
	}
	for (int64_t s = 0; s < m; s++) {
		int32_t r = perm[s];
		for (int32_t t = 0; t < jds_nnz[s]; t++) {
			int64_t src = row_ptr[r] + t, dst = iter_ptr[t] + s;
			jds_col[dst] = col[src];
			memcpy((char *)jds_val + (size_t)dst * elem, (const char *)val + (size_t)src * elem, elem);
		}
	}
}
