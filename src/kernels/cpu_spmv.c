/*
 * cpu_spmv.c — the CPU runs of SpMV in the four formats of PMPP chapter 14.
 *
 * CSR is the CPU's format: a row's nonzeros are contiguous, so a core streams col and val and
 * gathers x (16 at a time with AVX-512, masked at the row's end). The rows are split between the
 * threads by nonzeros, not by rows (a binary search in row_ptr), so that a few long rows do not
 * leave one thread with most of the work: the load balance JDS buys on a GPU. ELL and JDS walk
 * their GPU layouts (slot t of a row is m elements from slot t - 1: strided on a CPU, coalesced
 * on a GPU); COO is one sequential pass (threads splitting it would share rows and need atomics).
 * Read next: body/spmv.h (the GPU kernels), sparse_formats.h (the arrays).
 */
#include "kernels/cpu_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__AVX512F__)
#include <immintrin.h>
#endif


static inline int stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed) != 0;
}

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

static float dot_f32(const int32_t *col, const float *val, const float *x, int64_t lo, int64_t hi)
{
	int64_t i = lo;
	float s = 0;
#if defined(__AVX512F__)
	__m512 acc = _mm512_setzero_ps();
	for (; i + 16 <= hi; i += 16) {
		__m512i c = _mm512_loadu_si512((const void *)(col + i));
		acc = _mm512_fmadd_ps(_mm512_loadu_ps(val + i), _mm512_i32gather_ps(c, x, 4), acc);
	}
	if (i < hi) {
		__mmask16 k = (__mmask16)((1u << (hi - i)) - 1);
		__m512i c = _mm512_maskz_loadu_epi32(k, col + i);
		__m512 g = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, c, x, 4);
		acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, val + i), g, acc);
		i = hi;
	}
	s = _mm512_reduce_add_ps(acc);
#endif
	for (; i < hi; i++) s += val[i] * x[col[i]];
	return s;
}

static double dot_f64(const int32_t *col, const double *val, const double *x, int64_t lo, int64_t hi)
{
	int64_t i = lo;
	double s = 0;
#if defined(__AVX512F__)
	__m512d acc = _mm512_setzero_pd();
	for (; i + 8 <= hi; i += 8) {
		__m256i c = _mm256_loadu_si256((const void *)(col + i));
		acc = _mm512_fmadd_pd(_mm512_loadu_pd(val + i), _mm512_i32gather_pd(c, x, 8), acc);
	}
	if (i < hi) {
		__mmask8 k = (__mmask8)((1u << (hi - i)) - 1);
		__m256i c = _mm256_maskz_loadu_epi32(k, col + i);
		__m512d g = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), k, c, x, 8);
		acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(k, val + i), g, acc);
		i = hi;
	}
	s = _mm512_reduce_add_pd(acc);
#endif
	for (; i < hi; i++) s += val[i] * x[col[i]];
	return s;
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
		int quit = 0, nt = lmi_cpu_kernel_threads();                                       \
		(void)nt;                                                                          \
		int64_t nnz = row_ptr[m];                                                          \
		OMP_PARALLEL                                                                       \
		{                                                                                  \
			int id = THREAD_ID, p = THREADS;                                           \
			int64_t r0 = id == 0 ? 0 : row_at(row_ptr, m, nnz * id / p);               \
			int64_t r1 = id == p - 1 ? m : row_at(row_ptr, m, nnz * (id + 1) / p);     \
			for (int64_t r = r0; r < r1; r++) {                                        \
				if (((r - r0) & 4095) == 0 && stopped(stop)) {                     \
					quit = 1;                                                  \
					break;                                                     \
				}                                                                  \
				y[r] = dot(col, val, x, row_ptr[r], row_ptr[r + 1]);               \
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
			if ((i & 65535) == 0 && stopped(stop)) return 1;
			yd[row[i]] += ((const double *)val)[i] * ((const double *)x)[col[i]];
		}
	} else {
		float *yf = y;
		for (int64_t r = 0; r < m; r++) yf[r] = 0;
		for (int64_t i = 0; i < nnz; i++) {
			if ((i & 65535) == 0 && stopped(stop)) return 1;
			yf[row[i]] += ((const float *)val)[i] * ((const float *)x)[col[i]];
		}
	}
	return 0;
}

#ifdef _OPENMP
#define OMP_FOR _Pragma("omp parallel for schedule(static) num_threads(nt) reduction(| : quit)")
#else
#define OMP_FOR
#endif

/* ELL: slot t of row r at t * m + r. */
#define ELL_ROW(T)                                                                                 \
	{                                                                                          \
		T s = 0;                                                                           \
		for (int64_t t = 0; t < row_nnz[r]; t++)                                           \
			s += ((const T *)val)[t * m + r] * ((const T *)x)[col[t * m + r]];         \
		((T *)y)[r] = s;                                                                   \
	}

int lmi_cpu_spmv_ell(int is_double, const int32_t *col, const void *val, const int32_t *row_nnz,
                     const void *x, void *y, int64_t m, const atomic_int *stop)
{
	int quit = 0, nt = lmi_cpu_kernel_threads();
	(void)nt;
	OMP_FOR
	for (int64_t r = 0; r < m; r++) {
		if ((r & 4095) == 0 && stopped(stop)) quit = 1;
		if (is_double) ELL_ROW(double) else ELL_ROW(float)
	}
	return quit;
}

/* JDS: the t-th nonzero of sorted row s at iter_ptr[t] + s; the result goes to row perm[s]. */
#define JDS_ROW(T)                                                                                 \
	{                                                                                          \
		T sum = 0;                                                                         \
		for (int64_t t = 0; t < row_nnz[s]; t++) {                                         \
			int64_t i = iter_ptr[t] + s;                                               \
			sum += ((const T *)val)[i] * ((const T *)x)[col[i]];                       \
		}                                                                                  \
		((T *)y)[perm[s]] = sum;                                                           \
	}

int lmi_cpu_spmv_jds(int is_double, const int32_t *perm, const int32_t *iter_ptr,
                     const int32_t *row_nnz, const int32_t *col, const void *val, const void *x,
                     void *y, int64_t m, const atomic_int *stop)
{
	int quit = 0, nt = lmi_cpu_kernel_threads();
	(void)nt;
	OMP_FOR
	for (int64_t s = 0; s < m; s++) {
		if ((s & 4095) == 0 && stopped(stop)) quit = 1;
		if (is_double) JDS_ROW(double) else JDS_ROW(float)
	}
	return quit;
}
