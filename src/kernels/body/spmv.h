/*
 * spmv.h — the sparse matrix-vector multiplication kernels of the course (PMPP chapter 14),
 * written once for CUDA and the emulator: y = A x, with A stored in one of four formats
 * (../sparse_formats.h describes the arrays).
 *
 *   COO  one thread per nonzero: y[row] += val * x[col] with an atomic (rows are shared)
 *   CSR  one thread per row: walks row_ptr[row] .. row_ptr[row + 1]; rows of different lengths
 *        make the threads of a warp finish at different times (load imbalance), and a warp's
 *        loads of col/val are scattered (row r's entries are far from row r + 1's)
 *   ELL  one thread per row over the padded, column-major slots: slot t of all rows is
 *        contiguous, so a warp's loads are coalesced; the threads stop at their row's length
 *        (row_nnz), the padding costs memory but no work here
 *   JDS  one thread per row in the order of decreasing length: neighbouring threads have similar
 *        lengths (less imbalance), iteration t of all rows contiguous (coalesced), no padding;
 *        the result goes to the row's original place through perm
 * Indices are int (0-based). ADD(sum, v * xv) is one fused multiply-add: one add event; the
 * number of adds of a thread is its work (its row's nonzeros; 1 for COO).
 * The includer defines T and KFN; macros: simt_macros.h. No include guard.
 * Host code: ../spmv_emu.c (emulator), ../cuda/spmv.cu (CUDA).
 */

/* COO: thread i handles nonzero i; y must be zeroed first. */
KERNEL KFN(spmv_coo)(GLOBAL const int *row, GLOBAL const int *col, GLOBAL const T *val, GLOBAL const T *x, GLOBAL T *y, unsigned nnz)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < nnz) {
		int r = LOAD(row, i);
		int c = LOAD(col, i);
		T v = LOAD(val, i);
		T xv = LOAD(x, c);
		ATOMIC_ADD(y, r, v * xv);
	}
}

/* CSR: thread r handles row r. */
KERNEL KFN(spmv_csr)(GLOBAL const int *row_ptr, GLOBAL const int *col, GLOBAL const T *val, GLOBAL const T *x, GLOBAL T *y, unsigned m)
{
	unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r < m) {
		T sum = (T)0;
		int start = LOAD(row_ptr, r);
		int end = LOAD(row_ptr, r + 1);
		for (int i = start; i < end; i++) {
			int c = LOAD(col, i);
			T v = LOAD(val, i);
			T xv = LOAD(x, c);
			sum = ADD(sum, v * xv);
		}
		STORE(y, r, sum);
	}
}

/* ELL: thread r handles row r, its slots t * m + r for t < row_nnz[r]. */
KERNEL KFN(spmv_ell)(GLOBAL const int *col, GLOBAL const T *val, GLOBAL const int *row_nnz, GLOBAL const T *x, GLOBAL T *y, unsigned m)
{
	unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r < m) {
		T sum = (T)0;
		int len = LOAD(row_nnz, r);
		for (int t = 0; t < len; t++) {
			unsigned i = (unsigned)t * m + r;
			int c = LOAD(col, i);
			T v = LOAD(val, i);
			T xv = LOAD(x, c);
			sum = ADD(sum, v * xv);
		}
		STORE(y, r, sum);
	}
}

/* JDS: thread s handles sorted row s (the original row perm[s]); its t-th nonzero is at
 * iter_ptr[t] + s. */
KERNEL KFN(spmv_jds)(GLOBAL const int *perm, GLOBAL const int *iter_ptr, GLOBAL const int *row_nnz, GLOBAL const int *col,
                     GLOBAL const T *val, GLOBAL const T *x, GLOBAL T *y, unsigned m)
{
	unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s < m) {
		T sum = (T)0;
		int len = LOAD(row_nnz, s);
		for (int t = 0; t < len; t++) {
			int i = LOAD(iter_ptr, t) + (int)s;
			int c = LOAD(col, i);
			T v = LOAD(val, i);
			T xv = LOAD(x, c);
			sum = ADD(sum, v * xv);
		}
		int r = LOAD(perm, s);
		STORE(y, r, sum);
	}
}
