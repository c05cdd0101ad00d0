/*
 * cpu_spmv.c — the CPU runs of SpMV in the four formats of PMPP chapter 14, each walked the way a
 * CPU reads memory best.
 *
 * CSR is the CPU's format: a row's nonzeros are contiguous, so a core streams col and val and
 * gathers x (8 or 16 at a time on the vector paths, masked at the row's end). The rows are split
 * between the threads by nonzeros, not by rows (a binary search in row_ptr), so that a few long
 * rows do not leave one thread with most of the work: the load balance JDS buys on a GPU.
 * ELL and JDS are stored for a GPU: slot t of every row together (column-major), so that a warp's
 * threads, one row each, read consecutive addresses. One CPU thread walking one row would jump m
 * elements from slot to slot, a cache line per entry. So a thread takes a block of
 * LMI_CPU_SPMV_BLOCK_ROWS consecutive rows (sorted rows for JDS) and sweeps it slot by slot: the
 * block's entries of one slot are contiguous (a stream, vectorised, the next slot prefetched),
 * the block's sums stay in L1, and the rows' results are written once at the end. ELL masks the
 * padding (a row's slots past its length); JDS needs no mask: its rows are sorted by length, so
 * the rows that have slot t are a prefix of the block. Blocks are taken dynamically (JDS's first
 * blocks hold the longest rows). COO is one sequential pass (threads splitting it would share
 * rows and need atomics).
 * Read next: body/spmv.h (the GPU kernels), sparse_formats.h (the arrays), cpu_simd.h.
 */
#include <string.h>

#include "kernels/cpu_simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* The first row whose nonzeros start at or after target. */
static int64_t row_at(const int32_t *row_ptr, int64_t m, int64_t target)
{
	int64_t lo = 0, hi = m;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (row_ptr[mid] < target) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

#ifdef _OPENMP
#define OMP_PARALLEL _Pragma("omp parallel num_threads(nt) reduction(| : quit)")
#define THREAD_ID omp_get_thread_num()
#define THREADS omp_get_num_threads()
#else
#define OMP_PARALLEL
#define THREAD_ID 0
#define THREADS 1
#endif

#define CSR(T, name, dot)                                                                          \
	int name(const int32_t *row_ptr, const int32_t *col, const T *val, const T *x, T *y,      \
	         int64_t m, const atomic_int *stop)                                                \
	{                                                                                          \
		const lmi_cpu_loops *L = lmi_cpu_loops_get();                                      \
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		int64_t nnz = row_ptr[m];                                                          \
		OMP_PARALLEL                                                                       \
		{                                                                                  \
			int id = THREAD_ID, p = THREADS;                                           \
			int64_t r0 = id == 0 ? 0 : row_at(row_ptr, m, nnz * id / p);               \
			int64_t r1 = id == p - 1 ? m : row_at(row_ptr, m, nnz * (id + 1) / p);     \
			for (int64_t r = r0; r < r1; r++) {                                        \
				if (((r - r0) & 4095) == 0 && lmi_cpu_stopped(stop)) {                     \
					quit = 1;                                                  \
					break;                                                     \
				}                                                                  \
				y[r] = L->dot(col, val, x, row_ptr[r], row_ptr[r + 1]);            \
			}                                                                          \
		}                                                                                  \
		return quit;                                                                       \
	}
CSR(float, lmi_cpu_spmv_csr_f32, dot_f32)
CSR(double, lmi_cpu_spmv_csr_f64, dot_f64)

int lmi_cpu_spmv_coo(int is_double, const int32_t *row, const int32_t *col, const void *val,
                     const void *x, void *y, int64_t m, int64_t nnz, const atomic_int *stop)
{
	if (is_double) {
		double *yd = y;
		for (int64_t r = 0; r < m; r++) yd[r] = 0;
		for (int64_t i = 0; i < nnz; i++) {
			if ((i & 65535) == 0 && lmi_cpu_stopped(stop)) return 1;
			yd[row[i]] += ((const double *)val)[i] * ((const double *)x)[col[i]];
		}
	} else {
		float *yf = y;
		for (int64_t r = 0; r < m; r++) yf[r] = 0;
		for (int64_t i = 0; i < nnz; i++) {
			if ((i & 65535) == 0 && lmi_cpu_stopped(stop)) return 1;
			yf[row[i]] += ((const float *)val)[i] * ((const float *)x)[col[i]];
		}
	}
	return 0;
}

#ifdef _OPENMP
#define OMP_FOR_BLOCKS _Pragma("omp parallel for schedule(dynamic) num_threads(nt) reduction(| : quit)")
#else
#define OMP_FOR_BLOCKS
#endif

#define BLOCK_ROWS LMI_CPU_SPMV_BLOCK_ROWS

/*
 * One block of rows [r0, r0 + len) of ELL (jds = 0) or JDS (jds = 1), in the element type T:
 * acc += slot t's entries for the block, for each slot, then the results out. ELL: slot t of row
 * r at t * m + r, rows shorter than t + 1 masked by row_nnz; JDS: slot t of sorted row s at
 * iter_ptr[t] + s, present for the first iter_ptr[t + 1] - iter_ptr[t] sorted rows.
 */
#define SWEEP(T, SLOT)                                                                             \
	{                                                                                          \
		_Alignas(64) T acc[BLOCK_ROWS];                                                    \
		const T *v = val;                                                                  \
		memset(acc, 0, (size_t)len * sizeof(T));                                           \
		int64_t slots = 0;                                                                 \
		for (int64_t i = 0; i < len; i++)                                                  \
			if (row_nnz[r0 + i] > slots) slots = row_nnz[r0 + i];                      \
		for (int64_t t = 0; t < slots; t++) {                                              \
			int64_t at = jds ? iter_ptr[t] + r0 : t * m + r0, cnt = len;               \
			if (jds) {                                                                 \
				int64_t have = iter_ptr[t + 1] - iter_ptr[t] - r0;                 \
				cnt = have < len ? have : len;                                     \
			}                                                                          \
			int64_t next = t + 1 >= slots ? -1 : jds ? iter_ptr[t + 1] + r0 : at + m;  \
			L->SLOT(acc, v + at, col + at, (const T *)x, cnt, jds ? NULL : row_nnz + r0,  \
			        (int32_t)t, next < 0 ? NULL : v + next, next < 0 ? NULL : col + next); \
		}                                                                                  \
		T *out = y;                                                                        \
		for (int64_t i = 0; i < len; i++) out[jds ? perm[r0 + i] : r0 + i] = acc[i];       \
	}

static int sweep(int is_double, int jds, const int32_t *perm, const int32_t *iter_ptr,
                 const int32_t *row_nnz, const int32_t *col, const void *val, const void *x,
                 void *y, int64_t m, const atomic_int *stop)
{
	const lmi_cpu_loops *L = lmi_cpu_loops_get();
	int64_t nblocks = (m + BLOCK_ROWS - 1) / BLOCK_ROWS;
	int quit = 0, nt = lmi_cpu_kernel_threads();
	(void)nt;
	OMP_FOR_BLOCKS
	LMI_FOR_BLOCKS_UNTIL_STOPPED(blk, nblocks, quit, stop) {
		int64_t r0 = blk * BLOCK_ROWS, len = m - r0 < BLOCK_ROWS ? m - r0 : BLOCK_ROWS;
		if (is_double) SWEEP(double, slot_f64) else SWEEP(float, slot_f32)
	}
	return quit;
}

int lmi_cpu_spmv_ell(int is_double, const int32_t *col, const void *val, const int32_t *row_nnz,
                     const void *x, void *y, int64_t m, const atomic_int *stop)
{
	return sweep(is_double, 0, NULL, NULL, row_nnz, col, val, x, y, m, stop);
}

int lmi_cpu_spmv_jds(int is_double, const int32_t *perm, const int32_t *iter_ptr,
                     const int32_t *row_nnz, const int32_t *col, const void *val, const void *x,
                     void *y, int64_t m, const atomic_int *stop)
{
	return sweep(is_double, 1, perm, iter_ptr, row_nnz, col, val, x, y, m, stop);
}
