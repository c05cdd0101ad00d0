/*
 * tensor.cu — the CUDA module's tensor kernels (tensor_api.h): memory, copies with pinned
 * staging, strided copy / fill / Philox, float elementwise ops on any strides, cuBLAS
 * strided-batched GEMM, softmax, NLL and the fused SGD / Adam updates; and the table of every
 * file's entries (reduce.cu: row reductions; ewise_int.cu: integer elementwise; nn.cu, move.cu,
 * sort.cu: the slots added in version 3).
 *
 * Rules: every CUDA and cuBLAS call is checked and every launch followed by cudaGetLastError
 * (the message names the call); element indices are 64-bit and kernels loop over their range
 * with a grid stride, so no grid exceeds the limits; everything runs in order on one stream, so a
 * block the caching allocator hands out again is not reused before the kernels that used it
 * have run. Read next: backend_cuda.c.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cu_common.cuh"
#include "core/philox.h"

static cudaStream_t stream;
static cublasHandle_t blas;
#define STAGE_BYTES ((size_t)4 << 20)
static void *stage[2];
static cudaEvent_t stage_ev[2];

cudaStream_t lmi_cu_stream(void) { return stream; }

/* ---------------------------------------------------------------- setup and memory */

static int t_init(char *msg, size_t cap)
{
	TRY(cudaSetDevice(0));
	TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	BLAS(cublasCreate(&blas));
	BLAS(cublasSetStream(blas, stream));
	for (int i = 0; i < 2; i++) {
		TRY(cudaMallocHost(&stage[i], STAGE_BYTES));
		TRY(cudaEventCreateWithFlags(&stage_ev[i], cudaEventDisableTiming));
	}
	return 0;
}

static int t_malloc(void **p, size_t n, char *msg, size_t cap)
{
	cudaError_t e = cudaMalloc(p, n ? n : 1);
	if (e != cudaSuccess) {
		(void)cudaGetLastError(); /* out of memory is not sticky: clear it */
		snprintf(msg, cap, "cudaMalloc(%zu bytes) failed: %s (error %d)", n, cudaGetErrorString(e),
		         (int)e);
		return e == cudaErrorMemoryAllocation ? LMI_CU_ERR_OOM : (int)e;
	}
	return 0;
}

static int t_free(void *p, char *msg, size_t cap)
{
	TRY(cudaFree(p));
	return 0;
}

static int t_host_alloc(void **p, size_t n, char *msg, size_t cap)
{
	TRY(cudaMallocHost(p, n ? n : 1));
	return 0;
}

static int t_host_free(void *p, char *msg, size_t cap)
{
	TRY(cudaFreeHost(p));
	return 0;
}

static int t_sync(char *msg, size_t cap)
{
	TRY(cudaStreamSynchronize(stream));
	return 0;
}

static int t_timer(int what, double *ms, char *msg, size_t cap)
{
	static cudaEvent_t ev[2];
	static bool made;
	if (!made) {
		TRY(cudaEventCreate(&ev[0]));
		TRY(cudaEventCreate(&ev[1]));
		made = true;
	}
	TRY(cudaEventRecord(ev[what ? 1 : 0], stream));
	if (what) {
		float t = 0;
		TRY(cudaEventSynchronize(ev[1]));
		TRY(cudaEventElapsedTime(&t, ev[0], ev[1]));
		*ms = t;
	}
	return 0;
}

/* Pageable host memory through the two pinned staging buffers, chunk by chunk: the host's
 * memcpy of one chunk overlaps the device's copy of the other. */
static int staged(void *dst, const void *src, size_t n, bool to_device, char *msg, size_t cap)
{
	size_t nchunks = (n + STAGE_BYTES - 1) / STAGE_BYTES;
	for (size_t k = 0; k < nchunks; k++) {
		size_t off = k * STAGE_BYTES, len = n - off < STAGE_BYTES ? n - off : STAGE_BYTES;
		int b = (int)(k & 1);
		TRY(cudaEventSynchronize(stage_ev[b])); /* the buffer's previous chunk is done */
		if (to_device) {
			memcpy(stage[b], (const char *)src + off, len);
			TRY(cudaMemcpyAsync((char *)dst + off, stage[b], len, cudaMemcpyHostToDevice, stream));
			TRY(cudaEventRecord(stage_ev[b], stream));
		} else {
			TRY(cudaMemcpyAsync(stage[b], (const char *)src + off, len, cudaMemcpyDeviceToHost,
			                    stream));
			TRY(cudaEventRecord(stage_ev[b], stream));
			TRY(cudaEventSynchronize(stage_ev[b]));
			memcpy((char *)dst + off, stage[b], len);
		}
	}
	if (to_device) TRY(cudaStreamSynchronize(stream)); /* the host side may change next */
	return 0;
}

static int t_memcpy(void *dst, const void *src, size_t n, int kind, int host_pinned, char *msg,
                    size_t cap)
{
	if (!n) return 0;
	if (kind == 2) {
		TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream));
		return 0;
	}
	if (!host_pinned && n > ((size_t)1 << 20)) return staged(dst, src, n, kind == 0, msg, cap);
	TRY(cudaMemcpyAsync(dst, src, n, kind == 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
	                    stream));
	TRY(cudaStreamSynchronize(stream)); /* the bytes are where they go when this returns */
	return 0;
}

/* A value of any dtype, kept exact for integers. */
struct Val {
	double f;
	int64_t i;
	int is_int;
};

__device__ inline Val load(const void *p, int dt, int64_t off)
{
	Val v = {0, 0, 0};
	switch (dt) {
	case LM_FLOAT32: v.f = ((const float *)p)[off]; break;
	case LM_FLOAT64: v.f = ((const double *)p)[off]; break;
	case LM_INT32: v.i = ((const int32_t *)p)[off], v.is_int = 1; break;
	case LM_INT64: v.i = ((const int64_t *)p)[off], v.is_int = 1; break;
	default: v.i = ((const uint8_t *)p)[off], v.is_int = 1; break;
	}
	if (v.is_int) v.f = (double)v.i;
	return v;
}

/* Stores v converting as C does for in-range values (floats to integers truncate). */
__device__ inline void store(void *p, int dt, int64_t off, Val v)
{
	int64_t iv = v.is_int ? v.i : (v.f != v.f ? 0 : v.f >= 9.2e18 ? INT64_MAX : v.f <= -9.2e18 ? INT64_MIN : (int64_t)v.f);
	switch (dt) {
	case LM_FLOAT32: ((float *)p)[off] = v.is_int ? (float)v.i : (float)v.f; break;
	case LM_FLOAT64: ((double *)p)[off] = v.is_int ? (double)v.i : v.f; break;
	case LM_INT32: ((int32_t *)p)[off] = (int32_t)iv; break;
	case LM_INT64: ((int64_t *)p)[off] = iv; break;
	default: ((uint8_t *)p)[off] = (uint8_t)iv; break;
	}
}


/* ---------------------------------------------------------------- copy, fill, random */

__global__ void k_copy(Geo g, void *d, int ddt, const void *s, int sdt)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[2];
		offsets(g, i, 2, off);
		store(d, ddt, off[0], load(s, sdt, off[1]));
	}
}

static bool dense(const lmi_cu_arr *a)
{
	int64_t expect = 1;
	for (int d = a->ndim - 1; d >= 0; d--) {
		if (a->shape[d] != 1 && a->stride[d] != expect) return false;
		expect *= a->shape[d];
	}
	return true;
}

static int t_copy(const lmi_cu_arr *dst, const lmi_cu_arr *src, char *msg, size_t cap)
{
	const lmi_cu_arr *ops[2] = {dst, src};
	Geo g = make_geo(dst, 2, ops);
	if (!g.n) return 0;
	if (g.contiguous && dst->dtype == src->dtype && dst->ndim == src->ndim && dense(src)) {
		TRY(cudaMemcpyAsync(dst->data, src->data, (size_t)g.n * dsize(dst->dtype),
		                    cudaMemcpyDeviceToDevice, stream));
		return 0;
	}
	k_copy<<<blocks_for(g.n), THREADS, 0, stream>>>(g, dst->data, dst->dtype, src->data, src->dtype);
	LAUNCHED("k_copy");
	return 0;
}

__global__ void k_fill(Geo g, void *d, int dt, Val v)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[1];
		offsets(g, i, 1, off);
		store(d, dt, off[0], v);
	}
}

static int t_fill(const lmi_cu_arr *dst, double value, char *msg, size_t cap)
{
	const lmi_cu_arr *ops[1] = {dst};
	Geo g = make_geo(dst, 1, ops);
	if (!g.n) return 0;
	Val v = {value, 0, 0};
	k_fill<<<blocks_for(g.n), THREADS, 0, stream>>>(g, dst->data, dst->dtype, v);
	LAUNCHED("k_fill");
	return 0;
}

/* One thread per Philox block, as rng.c numbers them (philox.h). */
__global__ void k_random(void *d, int dt, int64_t n, lmi_cu_rng r)
{
	int pb = lmi_rng_per_block(r.kind, r.f64);
	int64_t nb = (n + pb - 1) / pb;
	GRID_LOOP(bi, nb)
	{
		uint32_t w[4];
		lmi_philox_block(r.seed, r.offset + (uint64_t)bi, w);
		if (r.kind == LMI_RNG_RANDINT) {
			int64_t iv[2];
			lmi_rng_randint(w, r.lo, r.range, iv);
			for (int k = 0; k < 2 && bi * 2 + k < n; k++) {
				Val v = {0, iv[k], 1};
				store(d, dt, bi * 2 + k, v);
			}
			continue;
		}
		double val[4];
		lmi_rng_values(r.kind, r.f64, r.a, r.b, w, val);
		for (int k = 0; k < pb && bi * pb + k < n; k++) {
			Val v = {val[k], 0, 0};
			store(d, dt, bi * pb + k, v);
		}
	}
}

static int t_random(const lmi_cu_arr *dst, const lmi_cu_rng *r, char *msg, size_t cap)
{
	int64_t n = 1;
	for (int d = 0; d < dst->ndim; d++) n *= dst->shape[d];
	if (!n) return 0;
	int pb = r->kind == LMI_RNG_NORMAL || r->kind == LMI_RNG_RANDINT || r->f64 ? 2 : 4;
	k_random<<<blocks_for((n + pb - 1) / pb), THREADS, 0, stream>>>(dst->data, dst->dtype, n, *r);
	LAUNCHED("k_random");
	return 0;
}

/* ---------------------------------------------------------------- elementwise */

template <typename T> __device__ inline T unop(int op, T v, T p0, T p1)
{
	switch (op) {
	case LM_EXP: return exp(v);
	case LM_LOG: return log(v);
	case LM_SQRT: return sqrt(v);
	case LM_ABS: return fabs(v);
	case LM_NEG: return -v;
	case LM_SIN: return sin(v);
	case LM_COS: return cos(v);
	case LM_TANH: return tanh(v);
	case LM_SIGMOID: return lmi_sigmoid(v);
	case LM_RELU: return lmi_relu(v);
	case LM_SIGN: return lmi_sign(v);
	case LM_FLOOR: return floor(v);
	case LM_CEIL: return ceil(v);
	case LM_ROUND: return lmi_round_even(v);
	case LM_RSQRT: return lmi_rsqrt(v);
	case LM_RECIPROCAL: return (T)1 / v;
	case LM_SQUARE: return v * v;
	case LMI_CU_CLAMP: return lmi_clamp(v, p0, p1);
	case LMI_CU_LEAKY_RELU: return lmi_leaky_relu(v, p0);
	case LMI_CU_POW_SCALAR: return pow(v, p0);
	case LMI_CU_ADD_SCALED: return v * p0 + p1;
	case LMI_CU_ADD_S: return v + p0;
	case LMI_CU_MUL_S: return v * p0;
	default: return v / p0; /* LMI_CU_DIV_S */
	}
}

template <typename T> __global__ void k_unary(Geo g, int op, T *out, const T *x, T p0, T p1)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[2];
		offsets(g, i, 2, off);
		out[off[0]] = unop<T>(op, x[off[1]], p0, p1);
	}
}

static int t_unary(int op, const lmi_cu_arr *out, const lmi_cu_arr *x, double p0, double p1,
                   char *msg, size_t cap)
{
	if (out->dtype != LM_FLOAT32 && out->dtype != LM_FLOAT64)
		return lmi_cu_unary_int(op, out, x, p0, p1, msg, cap);
	const lmi_cu_arr *ops[2] = {out, x};
	Geo g = make_geo(out, 2, ops);
	if (!g.n) return 0;
	if (out->dtype == LM_FLOAT32)
		k_unary<float><<<blocks_for(g.n), THREADS, 0, stream>>>(g, op, (float *)out->data,
		                                                        (const float *)x->data, (float)p0,
		                                                        (float)p1);
	else
		k_unary<double><<<blocks_for(g.n), THREADS, 0, stream>>>(g, op, (double *)out->data,
		                                                         (const double *)x->data, p0, p1);
	LAUNCHED("k_unary");
	return 0;
}

/* a op b for floats; comparisons give 1 or 0 (stored as uint8 by the caller's kernel) */
template <typename T> __device__ inline T binop(int op, T a, T b)
{
	switch (op) {
	case LM_ADD: return a + b;
	case LM_SUB: return a - b;
	case LM_MUL: return a * b;
	case LM_DIV: return a / b;
	case LM_POW: return pow(a, b);
	case LM_MAXIMUM: return lmi_maximum(a, b);
	case LM_MINIMUM: return lmi_minimum(a, b);
	case LM_EQ: return a == b;
	case LM_NE: return a != b;
	case LM_LT: return a < b;
	case LM_LE: return a <= b;
	case LM_GT: return a > b;
	case LM_GE: return a >= b;
	case LM_FLOOR_DIVIDE: return (T)lmi_floor_div((double)a, (double)b);
	default: return (T)lmi_floor_mod((double)a, (double)b); /* LM_REMAINDER */
	}
}

template <typename T, typename O> __global__ void k_binary(Geo g, int op, O *out, const T *a, const T *b)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[3];
		offsets(g, i, 3, off);
		out[off[0]] = (O)binop<T>(op, a[off[1]], b[off[2]]);
	}
}

static int t_binary(int op, const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                    char *msg, size_t cap)
{
	if (a->dtype != LM_FLOAT32 && a->dtype != LM_FLOAT64)
		return lmi_cu_binary_int(op, out, a, b, msg, cap);
	const lmi_cu_arr *ops[3] = {out, a, b};
	Geo g = make_geo(out, 3, ops);
	if (!g.n) return 0;
	unsigned nb = blocks_for(g.n);
	bool cmp = out->dtype == LM_UINT8;
	if (a->dtype == LM_FLOAT32) {
		if (cmp)
			k_binary<float, uint8_t><<<nb, THREADS, 0, stream>>>(g, op, (uint8_t *)out->data,
			                                                     (const float *)a->data,
			                                                     (const float *)b->data);
		else
			k_binary<float, float><<<nb, THREADS, 0, stream>>>(g, op, (float *)out->data,
			                                                   (const float *)a->data,
			                                                   (const float *)b->data);
	} else {
		if (cmp)
			k_binary<double, uint8_t><<<nb, THREADS, 0, stream>>>(g, op, (uint8_t *)out->data,
			                                                      (const double *)a->data,
			                                                      (const double *)b->data);
		else
			k_binary<double, double><<<nb, THREADS, 0, stream>>>(g, op, (double *)out->data,
			                                                     (const double *)a->data,
			                                                     (const double *)b->data);
	}
	LAUNCHED("k_binary");
	return 0;
}

template <typename T>
__global__ void k_where(Geo g, T *out, const uint8_t *c, const T *a, const T *b)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[4];
		offsets(g, i, 4, off);
		out[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
	}
}

static int t_where(const lmi_cu_arr *out, const lmi_cu_arr *c, const lmi_cu_arr *a,
                   const lmi_cu_arr *b, char *msg, size_t cap)
{
	const lmi_cu_arr *ops[4] = {out, c, a, b};
	Geo g = make_geo(out, 4, ops);
	if (!g.n) return 0;
	/* a select moves bit patterns: every dtype by its size */
	size_t es = dsize(out->dtype);
	const uint8_t *m = (const uint8_t *)c->data;
	if (es == 1)
		k_where<uint8_t><<<blocks_for(g.n), THREADS, 0, stream>>>(
			g, (uint8_t *)out->data, m, (const uint8_t *)a->data, (const uint8_t *)b->data);
	else if (es == 4)
		k_where<uint32_t><<<blocks_for(g.n), THREADS, 0, stream>>>(
			g, (uint32_t *)out->data, m, (const uint32_t *)a->data, (const uint32_t *)b->data);
	else
		k_where<uint64_t><<<blocks_for(g.n), THREADS, 0, stream>>>(
			g, (uint64_t *)out->data, m, (const uint64_t *)a->data, (const uint64_t *)b->data);
	LAUNCHED("k_where");
	return 0;
}

template <typename T>
__global__ void k_axpy(Geo g, T *out, const T *a, const T *b, T alpha)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[3];
		offsets(g, i, 3, off);
		out[off[0]] = a[off[1]] + alpha * b[off[2]];
	}
}

static int t_add_scaled(const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                        double alpha, char *msg, size_t cap)
{
	if (out->dtype != LM_FLOAT32 && out->dtype != LM_FLOAT64)
		return lmi_cu_axpy_int(out, a, b, alpha, msg, cap);
	const lmi_cu_arr *ops[3] = {out, a, b};
	Geo g = make_geo(out, 3, ops);
	if (!g.n) return 0;
	if (out->dtype == LM_FLOAT32)
		k_axpy<float><<<blocks_for(g.n), THREADS, 0, stream>>>(
			g, (float *)out->data, (const float *)a->data, (const float *)b->data, (float)alpha);
	else
		k_axpy<double><<<blocks_for(g.n), THREADS, 0, stream>>>(
			g, (double *)out->data, (const double *)a->data, (const double *)b->data, alpha);
	LAUNCHED("k_axpy");
	return 0;
}

/* ---------------------------------------------------------------- GEMM */

static int t_gemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,
                  int64_t sA, const void *B, int64_t sB, void *C, int64_t sC, double beta,
                  char *msg, size_t cap)
{
	if (dtype != LM_FLOAT32 && dtype != LM_FLOAT64)
		return lmi_cu_igemm(dtype, batch, M, N, K, A, sA, B, sB, C, sC, beta, msg, cap);
	if (M > INT_MAX || N > INT_MAX || K > INT_MAX || batch > INT_MAX) {
		snprintf(msg, cap, "gemm: sizes %lld x %lld x %lld (batch %lld) exceed cuBLAS's int",
		         (long long)M, (long long)N, (long long)K, (long long)batch);
		return 1;
	}
	if (!M || !N || !batch) return 0;
	/* row-major C = A B is column-major C^T = B^T A^T: cuBLAS computes (N x M) = (N x K)(K x M) */
	int m = (int)N, n = (int)M, k = (int)K > 0 ? (int)K : 1;
	if (dtype == LM_FLOAT32) {
		const float one = 1, b = (float)beta;
		BLAS(cublasSgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, (int)K, &one,
		                               (const float *)B, m, sB, (const float *)A, k, sA, &b,
		                               (float *)C, m, sC, (int)batch));
	} else {
		const double one = 1;
		BLAS(cublasDgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, (int)K, &one,
		                               (const double *)B, m, sB, (const double *)A, k, sA, &beta,
		                               (double *)C, m, sC, (int)batch));
	}
	return 0;
}

/* ---------------------------------------------------------------- softmax, NLL */

/* One block per line (outer, inner) along R: the maximum, the sum of exponentials, the outputs. */
template <typename T>
__global__ void k_softmax(const T *x, T *y, int64_t outer, int64_t R, int64_t inner, int logsm)
{
	__shared__ double sv[32];
	__shared__ int64_t si[32];
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	for (int64_t line = blockIdx.x; line < outer * inner; line += gridDim.x) {
		int64_t o = line / inner, in = line % inner;
		const T *p = x + o * R * inner + in;
		T *q = y + o * R * inner + in;
		double stat[2] = {0, 0};
		for (int pass = 0; pass < 2; pass++) { /* 0: the maximum, 1: sum exp(v - max) */
			int op = pass == 0 ? LM_MAX : LM_SUM;
			Acc a = {0.0, pass == 0 ? -1 : 0};
			for (int64_t j = threadIdx.x; j < R; j += blockDim.x) {
				double v = (double)p[j * inner];
				a = combine(op, a, pass == 0 ? Acc{v, j} : Acc{exp(v - stat[0]), 0});
			}
			a = warp_combine(op, a);
			if (lane == 0) sv[warp] = a.v, si[warp] = a.i;
			__syncthreads();
			if (warp == 0) {
				a = lane < nw ? Acc{sv[lane], si[lane]} : Acc{0.0, pass == 0 ? -1 : 0};
				a = warp_combine(op, a);
				if (lane == 0) sv[0] = a.v;
			}
			__syncthreads();
			stat[pass] = sv[0];
			__syncthreads();
		}
		for (int64_t j = threadIdx.x; j < R; j += blockDim.x) {
			double v = (double)p[j * inner] - stat[0];
			q[j * inner] = (T)(logsm ? v - log(stat[1]) : exp(v) / stat[1]);
		}
	}
}

static int t_softmax(int dtype, const void *x, void *y, int64_t outer, int64_t R, int64_t inner,
                     int logsm, char *msg, size_t cap)
{
	int64_t lines = outer * inner;
	if (!lines || !R) return 0;
	unsigned grid = (unsigned)(lines < 65535 ? lines : 65535);
	if (dtype == LM_FLOAT32)
		k_softmax<float><<<grid, THREADS, 0, stream>>>((const float *)x, (float *)y, outer, R, inner,
		                                               logsm);
	else
		k_softmax<double><<<grid, THREADS, 0, stream>>>((const double *)x, (double *)y, outer, R,
		                                                inner, logsm);
	LAUNCHED("k_softmax");
	return 0;
}

template <typename T>
__global__ void k_nll(const T *logp, const int64_t *t, T *out, T *gx, const T *g, int64_t N,
                      int64_t C, int64_t L)
{
	GRID_LOOP(i, N * L)
	{
		int64_t n = i / L, l = i % L, c = t[i];
		if (out) out[i] = -logp[(n * C + c) * L + l];
		else gx[(n * C + c) * L + l] = -g[i];
	}
}

static int t_nll(int dtype, const void *logp, const int64_t *t, void *out, int64_t N, int64_t C,
                 int64_t L, char *msg, size_t cap)
{
	if (!N || !L) return 0;
	if (dtype == LM_FLOAT32)
		k_nll<float><<<blocks_for(N * L), THREADS, 0, stream>>>((const float *)logp, t, (float *)out,
		                                                        NULL, NULL, N, C, L);
	else
		k_nll<double><<<blocks_for(N * L), THREADS, 0, stream>>>((const double *)logp, t,
		                                                         (double *)out, NULL, NULL, N, C, L);
	LAUNCHED("k_nll");
	return 0;
}

static int t_nll_grad(int dtype, const void *g, const int64_t *t, void *gx, int64_t N, int64_t C,
                      int64_t L, char *msg, size_t cap)
{
	if (!N || !L) return 0;
	if (dtype == LM_FLOAT32)
		k_nll<float><<<blocks_for(N * L), THREADS, 0, stream>>>(NULL, t, NULL, (float *)gx,
		                                                        (const float *)g, N, C, L);
	else
		k_nll<double><<<blocks_for(N * L), THREADS, 0, stream>>>(NULL, t, NULL, (double *)gx,
		                                                         (const double *)g, N, C, L);
	LAUNCHED("k_nll_grad");
	return 0;
}

/* ---------------------------------------------------------------- optimizers (train.c's) */

template <typename T>
__global__ void k_sgd(T *w, const T *gr, T *bf, int64_t n, T lr, T wd, T mo, T damp, T sign,
                      int nesterov, int first)
{
	GRID_LOOP(i, n)
	w[i] = lmi_sgd_update(w[i], sign * gr[i], bf ? bf + i : (T *)0, lr, wd, mo, damp, nesterov,
	                      first);
}

static int t_sgd(int dtype, void *p, const void *g, void *buf, int64_t n, const double *f,
                 char *msg, size_t cap)
{
	if (!n) return 0;
	/* f: lr, momentum, dampening, weight_decay, nesterov, maximize, first */
	int nest = f[4] != 0, first = f[6] != 0;
	if (dtype == LM_FLOAT32)
		k_sgd<float><<<blocks_for(n), THREADS, 0, stream>>>(
			(float *)p, (const float *)g, (float *)buf, n, (float)f[0], (float)f[3], (float)f[1],
			(float)(1 - f[2]), f[5] != 0 ? -1.0f : 1.0f, nest, first);
	else
		k_sgd<double><<<blocks_for(n), THREADS, 0, stream>>>(
			(double *)p, (const double *)g, (double *)buf, n, f[0], f[3], f[1], 1 - f[2],
			f[5] != 0 ? -1.0 : 1.0, nest, first);
	LAUNCHED("k_sgd");
	return 0;
}

template <typename T, typename K>
__global__ void k_adam(T *w, const T *gr, T *m1, T *m2, T *mx, int64_t n, K k, T sign)
{
	GRID_LOOP(i, n)
	w[i] = lmi_adam_update(w[i], sign * gr[i], m1 + i, m2 + i, mx ? mx + i : (T *)0, &k);
}

static int t_adam(int dtype, void *p, const void *g, void *m, void *v, void *vmax, int64_t n,
                  const double *f, char *msg, size_t cap)
{
	if (!n) return 0;
	/* f: beta1, beta2, eps, weight_decay, lr, step_size, bc2_sqrt, decoupled, amsgrad, maximize */
	double decay = 1 - f[4] * f[3], sign = f[9] != 0 ? -1 : 1;
	int dec = f[7] != 0, ams = f[8] != 0;
	if (dtype == LM_FLOAT32) {
		lmi_adam_kf k = {(float)f[0], (float)f[1], (float)(1 - f[0]), (float)(1 - f[1]),
		                 (float)f[3], (float)decay, (float)f[5], (float)f[6], (float)f[2], dec, ams};
		k_adam<float, lmi_adam_kf><<<blocks_for(n), THREADS, 0, stream>>>(
			(float *)p, (const float *)g, (float *)m, (float *)v, (float *)vmax, n, k, (float)sign);
	} else {
		lmi_adam_kd k = {f[0], f[1], 1 - f[0], 1 - f[1], f[3], decay, f[5], f[6], f[2], dec, ams};
		k_adam<double, lmi_adam_kd><<<blocks_for(n), THREADS, 0, stream>>>(
			(double *)p, (const double *)g, (double *)m, (double *)v, (double *)vmax, n, k, sign);
	}
	LAUNCHED("k_adam");
	return 0;
}

/* ---------------------------------------------------------------- im2col, col2im */

struct Win {
	int64_t kh, kw, sh, sw, ph, pw, dh, dw;
};

/* One thread per entry of cols: (p, ki, kj, oy, ox) -> x[p, iy, ix] or 0. */
template <typename T>
__global__ void k_im2col(const T *x, T *cols, int64_t planes, int64_t H, int64_t W, Win w,
                         int64_t oh, int64_t ow)
{
	int64_t n = planes * w.kh * w.kw * oh * ow;
	GRID_LOOP(i, n)
	{
		int64_t ox = i % ow, r = i / ow, oy = r % oh;
		r /= oh;
		int64_t kj = r % w.kw;
		r /= w.kw;
		int64_t ki = r % w.kh, p = r / w.kh;
		int64_t iy = oy * w.sh - w.ph + ki * w.dh, ix = ox * w.sw - w.pw + kj * w.dw;
		cols[i] = iy >= 0 && iy < H && ix >= 0 && ix < W ? x[(p * H + iy) * W + ix] : (T)0;
	}
}

/* One thread per entry of out: the sum of the cols entries whose window covers it. */
template <typename T>
__global__ void k_col2im(const T *cols, T *out, int64_t planes, int64_t H, int64_t W, Win w,
                         int64_t oh, int64_t ow)
{
	GRID_LOOP(i, planes * H * W)
	{
		int64_t x = i % W, y = (i / W) % H, p = i / (H * W);
		T acc = 0;
		for (int64_t ki = 0; ki < w.kh; ki++) {
			int64_t ty = y + w.ph - ki * w.dh;
			if (ty < 0 || ty % w.sh) continue;
			int64_t oy = ty / w.sh;
			if (oy >= oh) continue;
			for (int64_t kj = 0; kj < w.kw; kj++) {
				int64_t tx = x + w.pw - kj * w.dw;
				if (tx < 0 || tx % w.sw) continue;
				int64_t ox = tx / w.sw;
				if (ox >= ow) continue;
				acc += cols[(((p * w.kh + ki) * w.kw + kj) * oh + oy) * ow + ox];
			}
		}
		out[i] = acc;
	}
}

static Win win_of(const int64_t *w)
{
	Win r = {w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]};
	return r;
}

static int t_im2col(int dtype, const void *x, void *cols, int64_t planes, int64_t H, int64_t W,
                    const int64_t *w, int64_t oh, int64_t ow, char *msg, size_t cap)
{
	Win v = win_of(w);
	int64_t n = planes * v.kh * v.kw * oh * ow;
	if (!n) return 0;
	if (dtype == LM_FLOAT32)
		k_im2col<float><<<blocks_for(n), THREADS, 0, stream>>>((const float *)x, (float *)cols,
		                                                       planes, H, W, v, oh, ow);
	else
		k_im2col<double><<<blocks_for(n), THREADS, 0, stream>>>((const double *)x, (double *)cols,
		                                                        planes, H, W, v, oh, ow);
	LAUNCHED("k_im2col");
	return 0;
}

static int t_col2im(int dtype, const void *cols, void *out, int64_t planes, int64_t H, int64_t W,
                    const int64_t *w, int64_t oh, int64_t ow, char *msg, size_t cap)
{
	Win v = win_of(w);
	int64_t n = planes * H * W;
	if (!n) return 0;
	if (dtype == LM_FLOAT32)
		k_col2im<float><<<blocks_for(n), THREADS, 0, stream>>>((const float *)cols, (float *)out,
		                                                       planes, H, W, v, oh, ow);
	else
		k_col2im<double><<<blocks_for(n), THREADS, 0, stream>>>((const double *)cols, (double *)out,
		                                                        planes, H, W, v, oh, ow);
	LAUNCHED("k_col2im");
	return 0;
}

/* ---------------------------------------------------------------- the table */

static const lmi_cuda_tensor_api api = {
	LMI_CUDA_TENSOR_VERSION, t_init, t_malloc, t_free, t_host_alloc, t_host_free, t_memcpy,
	t_copy, t_fill, t_random, t_unary, t_binary, t_where, t_add_scaled, lmi_cu_reduce_rows, t_gemm,
	t_softmax, t_nll, t_nll_grad, t_sgd, t_adam, t_sync, t_im2col, t_col2im,
	/* 3 */
	lmi_cu_stat_rows, lmi_cu_gelu, lmi_cu_max_pool2d, lmi_cu_rmsprop, lmi_cu_crop, lmi_cu_flip,
	lmi_cu_index_select, lmi_cu_gather, lmi_cu_scatter_add, lmi_cu_one_hot, lmi_cu_cumsum,
	lmi_cu_triangle, lmi_cu_repeat_fill, lmi_cu_sort,
	/* 6 */
	t_timer,
};

extern "C" const lmi_cuda_tensor_api *lm_cuda_tensor_api(void) { return &api; }
