/*
 * cu_common.cuh — what the CUDA module's tensor kernel files share (tensor.cu, nn.cu, move.cu,
 * sort.cu): the checks that turn a failed CUDA / cuBLAS call or launch into an error code with a
 * message (every function using them has `char *msg, size_t cap` in scope), the module's one
 * stream, the grid-stride launch shape, and the strided geometry of elementwise kernels (an
 * output and up to MAXOPS operands broadcast to it by their strides, 64-bit offsets).
 * Internal to the module: liblumen sees tensor_api.h only. Read next: tensor.cu.
 */
#ifndef LUMEN_BACKEND_CUDA_COMMON_CUH
#define LUMEN_BACKEND_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/tensor_api.h"
#include "backend/scalar_math.h"
#include "lumen/ops.h"

#define TRY(call)                                                                                  \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			snprintf(msg, cap, "%s failed: %s (error %d)", #call, cudaGetErrorString(e_),  \
			         (int)e_);                                                         \
			return (int)e_;                                                            \
		}                                                                                  \
	} while (0)
#define LAUNCHED(name)                                                                             \
	do {                                                                                       \
		cudaError_t e_ = cudaGetLastError();                                               \
		if (e_ != cudaSuccess) {                                                           \
			snprintf(msg, cap, "launch of %s failed: %s (error %d)", name,                 \
			         cudaGetErrorString(e_), (int)e_);                                 \
			return (int)e_;                                                            \
		}                                                                                  \
	} while (0)
#define BLAS(call)                                                                                 \
	do {                                                                                       \
		cublasStatus_t s_ = (call);                                                        \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                                 \
			snprintf(msg, cap, "%s failed: cuBLAS status %d", #call, (int)s_);             \
			return 1000 + (int)s_;                                                     \
		}                                                                                  \
	} while (0)

/* The stream every kernel and copy of the module runs on, in order (tensor.cu makes it). */
cudaStream_t lmi_cu_stream(void);

static const int THREADS = 256;

/* Blocks for n items at THREADS each, capped (the kernels loop with a grid stride). */
static inline unsigned blocks_for(int64_t n)
{
	int64_t b = (n + THREADS - 1) / THREADS;
	if (b < 1) b = 1;
	return (unsigned)(b > 1048576 ? 1048576 : b);
}


#define GRID_LOOP(i, n)                                                                            \
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                  \
	     i += (int64_t)gridDim.x * blockDim.x)

/* Launches kernel K<E> for elements of esize = 1, 4 or 8 bytes (a pure move of bit patterns;
 * the kernels take void pointers and read them as E). */
#define BY_SIZE(esize, K, n, ...)                                                                  \
	do {                                                                                       \
		unsigned nb_ = blocks_for(n);                                                      \
		cudaStream_t s_ = lmi_cu_stream();                                                 \
		if ((esize) == 1)                                                                  \
			K<uint8_t><<<nb_, THREADS, 0, s_>>>(__VA_ARGS__);                          \
		else if ((esize) == 4)                                                             \
			K<uint32_t><<<nb_, THREADS, 0, s_>>>(__VA_ARGS__);                         \
		else                                                                               \
			K<uint64_t><<<nb_, THREADS, 0, s_>>>(__VA_ARGS__);                         \
	} while (0)

/* Bytes of an element of dtype dt. */
__host__ __device__ static inline size_t dsize(int dt)
{
	return dt == LM_FLOAT64 || dt == LM_INT64 ? 8 : dt == LM_UINT8 ? 1 : 4;
}

/* ---------------------------------------------------------------- strided geometry */

#define MAXOPS 4
struct Geo {
	int nd;
	int contiguous; /* every operand dense in out's order: offsets are the index */
	int64_t n;
	int64_t shape[LMI_CU_MAX_DIMS];
	int64_t st[MAXOPS][LMI_CU_MAX_DIMS];
};

/* out's geometry with operands ops[0..k) broadcast to it by their strides. */
static inline Geo make_geo(const lmi_cu_arr *out, int k, const lmi_cu_arr *const *ops)
{
	Geo g;
	memset(&g, 0, sizeof g);
	g.nd = out->ndim;
	g.n = 1;
	for (int d = 0; d < g.nd; d++) g.shape[d] = out->shape[d], g.n *= out->shape[d];
	g.contiguous = 1;
	for (int o = 0; o < k; o++) {
		const lmi_cu_arr *a = ops[o];
		int64_t expect = 1;
		for (int d = g.nd - 1; d >= 0; d--) {
			int j = d - (g.nd - a->ndim);
			int64_t s = j < 0 || (a->shape[j] == 1 && g.shape[d] != 1) ? 0 : a->stride[j];
			g.st[o][d] = s;
			if (g.shape[d] != 1 && s != expect) g.contiguous = 0;
			expect *= g.shape[d];
		}
	}
	return g;
}

__device__ inline void offsets(const Geo &g, int64_t i, int k, int64_t *off)
{
	for (int o = 0; o < k; o++) off[o] = g.contiguous ? i : 0;
	if (g.contiguous) return;
	for (int d = g.nd - 1; d >= 0; d--) {
		int64_t c = i % g.shape[d];
		i /= g.shape[d];
		for (int o = 0; o < k; o++) off[o] += c * g.st[o][d];
	}
}


/* ---------------------------------------------------------------- reduction trees */

/* A running result: a sum, or a value with its index (max / min: NaN wins, then the first). */
struct Acc {
	double v;
	int64_t i;
};

__device__ inline Acc combine(int op, Acc x, Acc y)
{
	if (op == LM_SUM || op == LM_MEAN) return Acc{x.v + y.v, 0};
	if (op == LM_PROD) return Acc{x.v * y.v, 0};
	if (y.i < 0) return x;
	if (x.i < 0) return y;
	bool xn = x.v != x.v, yn = y.v != y.v;
	if (xn || yn) return xn && (!yn || x.i < y.i) ? x : y;
	bool max = op == LM_MAX || op == LM_ARGMAX;
	if (x.v == y.v) return x.i < y.i ? x : y;
	return (max ? x.v > y.v : x.v < y.v) ? x : y;
}

__device__ inline Acc warp_combine(int op, Acc a)
{
	for (int o = 16; o > 0; o >>= 1) {
		Acc b;
		b.v = __shfl_down_sync(0xffffffffu, a.v, o);
		b.i = __shfl_down_sync(0xffffffffu, a.i, o);
		a = combine(op, a, b);
	}
	return a;
}

/* a (every thread's) combined over the block, id filling the unused warps' slots; the result in
 * every thread. */
__device__ inline Acc block_combine(int op, Acc a, Acc id, double *sv, int64_t *si)
{
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	a = warp_combine(op, a);
	if (lane == 0) sv[warp] = a.v, si[warp] = a.i;
	__syncthreads();
	if (warp == 0) {
		a = lane < nw ? Acc{sv[lane], si[lane]} : id;
		a = warp_combine(op, a);
		if (lane == 0) sv[0] = a.v, si[0] = a.i;
	}
	__syncthreads();
	Acc r = {sv[0], si[0]};
	__syncthreads();
	return r;
}

/* ---------------------------------------------------------------- the other files' entries */

/* A device word for kernels to flag what the data decides (an index out of range, a zero
 * divisor) with atomicMin, its bytes reset to 0x7f (LMI_CU_WORD_NONE) and read back with a wait
 * (move.cu). */
#define LMI_CU_WORD_NONE 0x7f7f7f7f7f7f7f7fll
int lmi_cu_word_reset(char *msg, size_t cap);
int64_t *lmi_cu_word(void);
int lmi_cu_word_read(int64_t *v, char *msg, size_t cap);

/* the integer loops (ewise_int.cu), for tensor.cu's unary / binary / add_scaled / gemm */
int lmi_cu_unary_int(int op, const lmi_cu_arr *out, const lmi_cu_arr *x, double p0, double p1,
                     char *msg, size_t cap);
int lmi_cu_binary_int(int op, const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                      char *msg, size_t cap);
int lmi_cu_axpy_int(const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                    double alpha, char *msg, size_t cap);
int lmi_cu_igemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,
                 int64_t sA, const void *B, int64_t sB, void *C, int64_t sC, double beta,
                 char *msg, size_t cap);

/* tensor_api.h's functions of versions 1 to 4 kept out of tensor.cu, for its table (each states
 * its contract there) */
int lmi_cu_reduce_rows(int op, int dtype, const void *x, int64_t rows, int64_t R, void *out,
                       int64_t *idx, char *msg, size_t cap);
int lmi_cu_stat_rows(int op, int dtype, const void *x, int64_t rows, int64_t R, void *out,
                     double p, char *msg, size_t cap);
int lmi_cu_gelu(const lmi_cu_arr *out, const lmi_cu_arr *x, const lmi_cu_arr *g, int t,
                char *msg, size_t cap);
int lmi_cu_max_pool2d(int dtype, const void *x, void *y, int64_t *idx, int64_t planes, int64_t H,
                      int64_t W, int64_t OH, int64_t OW, const int64_t *w, char *msg, size_t cap);
int lmi_cu_rmsprop(int dtype, void *p, const void *g, void *sq, void *buf, void *gavg, int64_t n,
                   const double *f, char *msg, size_t cap);
int lmi_cu_crop(int esize, const void *x, const int64_t *offsets, int64_t pad, int64_t N,
                int64_t C, int64_t H, int64_t W, int64_t oh, int64_t ow, void *out, char *msg,
                size_t cap);
int lmi_cu_flip(int esize, const void *x, const uint8_t *mask, void *out, int64_t N,
                int64_t lines, int64_t W, char *msg, size_t cap);
int lmi_cu_index_select(const void *x, int esize, int64_t outer, int64_t size, int64_t inner,
                        const lmi_cu_arr *idx, void *out, int64_t *bad, char *msg, size_t cap);
int lmi_cu_gather(const lmi_cu_arr *x, int dim, const lmi_cu_arr *idx, const lmi_cu_arr *out,
                  int64_t *bad, char *msg, size_t cap);
int lmi_cu_scatter_add(const lmi_cu_arr *out, int dim, const lmi_cu_arr *idx,
                       const lmi_cu_arr *src, int64_t *bad, char *msg, size_t cap);
int lmi_cu_one_hot(const lmi_cu_arr *idx, int64_t classes, int64_t *out, int64_t *bad,
                   char *msg, size_t cap);
int lmi_cu_cumsum(int dtype, const void *x, int64_t outer, int64_t R, int64_t inner, void *out,
                  char *msg, size_t cap);
int lmi_cu_triangle(int esize, const void *x, int64_t B, int64_t M, int64_t N, int64_t k,
                    int upper, void *out, char *msg, size_t cap);
int lmi_cu_repeat_fill(int esize, void *out, int nd, const int64_t *shape, const int64_t *xshape,
                       char *msg, size_t cap);
int lmi_cu_sort(int dtype, const void *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                int descending, void *values, int64_t *indices, char *msg, size_t cap);

#endif
