/*
 * reduce.cu — the CUDA module's reductions of the rows of a contiguous (rows, R) matrix
 * (tensor_api.h's reduce_rows and stat_rows; backend_cuda.c moves the reduced dims last first),
 * in double with cu_common.cuh's warp-shuffle trees.
 *
 * sum, mean, max, min, argmax, argmin: one block per row; a few long rows (fewer than 1024 rows of
 * at least 65536 entries: a full reduction) split each row into chunks of at least 32768 entries
 * so that about 2048 blocks share the work, each writing a partial (value, index) to a buffer
 * made once, and a second kernel combines each row's partials in chunk order: the same result on
 * every run (the tree's shape depends only on the sizes), max / min keeping the first maximum and
 * NaN rules of combine(). Integer inputs (cpu/reduce.c's semantics): max / min / arg through
 * double as the CPU compares them (the same tree, into the input's dtype), sum / prod wrapping
 * in uint64 into int64, mean as that sum / R into float32 (k_reduce_int, one block per row).
 * prod / var / std / norm of floats: one block per row (k_stats).
 * Read next: nn.cu.
 */
#include <math.h>

#include "backend/cuda/cu_common.cuh"

/* ---------------------------------------------------------------- sum, mean, max, min, arg */

#define MAX_PARTS 2048 /* partials of all rows of one call (rows * chunks <= this) */

static double *part_v;
static int64_t *part_i;

__device__ inline Acc identity(int op)
{
	return Acc{0.0, op == LM_SUM || op == LM_MEAN ? 0 : -1};
}

/* A row's result into out / idx, as the CPU stores it (mean of no entries: NaN). */
template <typename T>
__device__ inline void store_row(int op, Acc a, int64_t R, T *out, int64_t *idx, int64_t row)
{
	if (op == LM_MEAN) a.v = R ? a.v / (double)R : (double)NAN;
	if (op == LM_ARGMAX || op == LM_ARGMIN) idx[row] = a.i;
	else out[row] = (T)a.v;
	if ((op == LM_MAX || op == LM_MIN) && idx) idx[row] = a.i;
}

/* Block b folds chunk b % chunks (clen entries) of row b / chunks: the row's result when it has
 * one chunk, else a partial. */
template <typename T>
__global__ void k_reduce(int op, const T *x, int64_t rows, int64_t R, int64_t chunks, int64_t clen,
                         T *out, int64_t *idx, double *pv, int64_t *pi)
{
	__shared__ double sv[32];
	__shared__ int64_t si[32];
	const Acc id = identity(op);
	for (int64_t b = blockIdx.x; b < rows * chunks; b += gridDim.x) {
		int64_t row = b / chunks, j0 = (b % chunks) * clen, j1 = j0 + clen < R ? j0 + clen : R;
		const T *p = x + row * R;
		Acc a = id;
		for (int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x)
			a = combine(op, a, Acc{(double)p[j], j});
		a = block_combine(op, a, id, sv, si);
		if (threadIdx.x == 0) {
			if (chunks == 1) store_row(op, a, R, out, idx, row);
			else pv[b] = a.v, pi[b] = a.i;
		}
	}
}

/* One block per row: its chunks' partials combined. */
template <typename T>
__global__ void k_reduce_parts(int op, const double *pv, const int64_t *pi, int64_t rows,
                               int64_t chunks, int64_t R, T *out, int64_t *idx)
{
	__shared__ double sv[32];
	__shared__ int64_t si[32];
	const Acc id = identity(op);
	for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
		Acc a = id;
		for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x)
			a = combine(op, a, Acc{pv[row * chunks + c], pi[row * chunks + c]});
		a = block_combine(op, a, id, sv, si);
		if (threadIdx.x == 0) store_row(op, a, R, out, idx, row);
	}
}

template <typename T>
static int reduce_rows(int op, const T *x, int64_t rows, int64_t R, T *out, int64_t *idx,
                       char *msg, size_t cap)
{
	int64_t chunks = 1;
	if (rows < 1024 && R >= 65536) {
		chunks = MAX_PARTS / rows;
		if (chunks > R / 32768) chunks = R / 32768;
		if (chunks < 1) chunks = 1;
	}
	int64_t clen = (R + chunks - 1) / chunks, blocks = rows * chunks;
	if (chunks > 1 && !part_v) {
		TRY(cudaMalloc((void **)&part_v, MAX_PARTS * sizeof *part_v));
		TRY(cudaMalloc((void **)&part_i, MAX_PARTS * sizeof *part_i));
	}
	cudaStream_t s = lmi_cu_stream();
	unsigned grid = (unsigned)(blocks < 65535 ? blocks : 65535);
	k_reduce<T><<<grid, THREADS, 0, s>>>(op, x, rows, R, chunks, clen, out, idx, part_v, part_i);
	LAUNCHED("k_reduce");
	if (chunks == 1) return 0;
	grid = (unsigned)(rows < 65535 ? rows : 65535);
	k_reduce_parts<T><<<grid, THREADS, 0, s>>>(op, part_v, part_i, rows, chunks, R, out, idx);
	LAUNCHED("k_reduce_parts");
	return 0;
}

/* ---------------------------------------------------------------- integer sums, products, means */

/* cpu/reduce.c's integer sums and products: wrapping, in uint64_t, into int64 (sum, prod); and
 * means into float32 without wrapping: the high and low 32-bit halves of the elements are summed
 * apart (each sum fits 64 bits for rows under 2^31 elements) and joined in double. One block per
 * row. */
template <typename T>
__global__ void k_reduce_int(int op, const T *x, int64_t rows, int64_t R, int64_t *oi, float *of)
{
	__shared__ unsigned long long sh[32], sl[32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	bool prod = op == LM_PROD, mean = op == LM_MEAN;
	for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
		unsigned long long a = prod ? 1 : 0, lo = 0; /* mean: a sums the high halves */
		for (int64_t j = threadIdx.x; j < R; j += blockDim.x) {
			int64_t e = (int64_t)x[row * R + j];
			unsigned long long v = (unsigned long long)e;
			if (mean) {
				a += (unsigned long long)(e >> 32); /* arithmetic: a negative high half */
				lo += v & 0xffffffffull;
			} else {
				a = prod ? a * v : a + v;
			}
		}
		for (int o = 16; o > 0; o >>= 1) {
			unsigned long long b = __shfl_down_sync(0xffffffffu, a, o);
			a = prod ? a * b : a + b;
			lo += __shfl_down_sync(0xffffffffu, lo, o);
		}
		if (lane == 0) sh[warp] = a, sl[warp] = lo;
		__syncthreads();
		if (warp == 0) {
			a = lane < nw ? sh[lane] : (prod ? 1 : 0);
			lo = lane < nw ? sl[lane] : 0;
			for (int o = 16; o > 0; o >>= 1) {
				unsigned long long b = __shfl_down_sync(0xffffffffu, a, o);
				a = prod ? a * b : a + b;
				lo += __shfl_down_sync(0xffffffffu, lo, o);
			}
			if (lane == 0) {
				if (mean)
					of[row] = R ? (float)(((double)(long long)a * 4294967296.0 + (double)lo) / (double)R)
					            : NAN;
				else
					oi[row] = (int64_t)a;
			}
		}
		__syncthreads();
	}
}

template <typename T>
static int reduce_int(int op, const T *x, int64_t rows, int64_t R, void *out, int64_t *idx,
                      char *msg, size_t cap)
{
	if (op != LM_SUM && op != LM_PROD && op != LM_MEAN) /* picks: through double, as the CPU */
		return reduce_rows<T>(op, x, rows, R, (T *)out, idx, msg, cap);
	unsigned grid = (unsigned)(rows < 65535 ? rows : 65535);
	k_reduce_int<T><<<grid, THREADS, 0, lmi_cu_stream()>>>(op, x, rows, R, (int64_t *)out,
	                                                       (float *)out);
	LAUNCHED("k_reduce_int");
	return 0;
}

int lmi_cu_reduce_rows(int op, int dtype, const void *x, int64_t rows, int64_t R, void *out,
                       int64_t *idx, char *msg, size_t cap)
{
	if (!rows) return 0;
	switch (dtype) {
	case LM_FLOAT32:
		return reduce_rows<float>(op, (const float *)x, rows, R, (float *)out, idx, msg, cap);
	case LM_FLOAT64:
		return reduce_rows<double>(op, (const double *)x, rows, R, (double *)out, idx, msg, cap);
	case LM_INT32: return reduce_int<int32_t>(op, (const int32_t *)x, rows, R, out, idx, msg, cap);
	case LM_INT64: return reduce_int<int64_t>(op, (const int64_t *)x, rows, R, out, idx, msg, cap);
	default: return reduce_int<uint8_t>(op, (const uint8_t *)x, rows, R, out, idx, msg, cap);
	}
}

/* ---------------------------------------------------------------- prod, var, std, norm */

/* The reductions with a parameter, one block per row, in double as cpu/reduce.c: prod; var / std
 * by two passes (the mean, then the squared deviations; the CPU's Welford gives the same up to
 * rounding, NaN for NaN or infinite entries alike) with correction p; norm for p = 2, 1, 0 (the
 * count of nonzeros), inf (the largest magnitude, NaN winning) and any other p > 0. */
template <typename T>
__global__ void k_stats(int op, const T *x, int64_t rows, int64_t R, T *out, double p)
{
	__shared__ double sv[32];
	__shared__ int64_t si[32];
	const Acc zero = {0.0, 0}, one = {1.0, 0}, none = {0.0, -1};
	for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
		const T *q = x + row * R;
		double v;
		if (op == LM_VAR || op == LM_STD) {
			/* integers as deviations from the row's first element (exact past 2^53, as the CPU's
			 * pivot); floats as they are */
			const bool integer = (T)0.5 == (T)0;
			const __int128 pivot = integer && R ? (__int128)(long long)q[0] : 0;
			Acc a = zero;
			for (int64_t j = threadIdx.x; j < R; j += blockDim.x)
				a.v += integer ? (double)((__int128)(long long)q[j] - pivot) : (double)q[j];
			double mean = block_combine(LM_SUM, a, zero, sv, si).v / (double)R;
			a = zero;
			for (int64_t j = threadIdx.x; j < R; j += blockDim.x) {
				double d = (integer ? (double)((__int128)(long long)q[j] - pivot) : (double)q[j]) - mean;
				a.v += d * d;
			}
			double m2 = block_combine(LM_SUM, a, zero, sv, si).v, dof = (double)R - p;
			v = dof > 0 ? m2 / dof : (double)NAN;
			if (op == LM_STD) v = sqrt(v);
		} else if (op == LM_PROD) {
			Acc a = one;
			for (int64_t j = threadIdx.x; j < R; j += blockDim.x) a.v *= (double)q[j];
			v = block_combine(LM_PROD, a, one, sv, si).v;
		} else if (isinf(p)) {
			Acc a = none;
			for (int64_t j = threadIdx.x; j < R; j += blockDim.x)
				a = combine(LM_MAX, a, Acc{fabs((double)q[j]), j});
			Acc r = block_combine(LM_MAX, a, none, sv, si);
			v = r.i < 0 ? 0.0 : r.v;
		} else {
			Acc a = zero;
			for (int64_t j = threadIdx.x; j < R; j += blockDim.x) {
				double t = fabs((double)q[j]);
				a.v += p == 2 ? t * t : p == 1 ? t : p == 0 ? (double)(q[j] != 0) : pow(t, p);
			}
			double s = block_combine(LM_SUM, a, zero, sv, si).v;
			v = p == 2 ? sqrt(s) : p == 0 || p == 1 ? s : pow(s, 1.0 / p);
		}
		if (threadIdx.x == 0) out[row] = (T)v;
	}
}

int lmi_cu_stat_rows(int op, int dtype, const void *x, int64_t rows, int64_t R, void *out,
                     double p, char *msg, size_t cap)
{
	if (!rows) return 0;
	unsigned grid = (unsigned)(rows < 65535 ? rows : 65535);
	if (dtype == LM_FLOAT32)
		k_stats<float><<<grid, THREADS, 0, lmi_cu_stream()>>>(op, (const float *)x, rows, R,
		                                                      (float *)out, p);
	else
		k_stats<double><<<grid, THREADS, 0, lmi_cu_stream()>>>(op, (const double *)x, rows, R,
		                                                       (double *)out, p);
	LAUNCHED("k_stats");
	return 0;
}

