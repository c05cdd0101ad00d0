/*
 * ewise_int.cu — the CUDA module's elementwise loops on integers (int32, int64, uint8), any
 * strides and broadcasting (cu_common.cuh's Geo), with cpu/ewise_loops.h's and cpu/divmod.c's
 * semantics: arithmetic wraps (computed in the unsigned twin, so no overflow is undefined), pow
 * by squaring (a negative exponent gives 1, as the CPU's loop), maximum / minimum, comparisons
 * into uint8, floor division and the remainder with the divisor's sign (INT_MIN // -1 wraps; a
 * zero divisor gives 0 there and the call LMI_CU_ERR_ZERO_DIV, found through the device word of
 * move.cu), the unary ops the ops layer sends integers (abs, neg, relu, sign, floor / ceil /
 * round as the identity, square, clamp, pow by a scalar) and a + alpha * b with an integral
 * alpha; and matmul's integer GEMM (one thread per output, wrapping). tensor.cu's unary / binary
 * / add_scaled / gemm entries send integer dtypes here.
 * Read next: move.cu.
 */
#include "backend/cuda/cu_common.cuh"

/* The formulas are scalar_math.h's (lmi_ipow, lmi_idivmod, ...), the CPU's too. */

/* ---------------------------------------------------------------- unary */

template <typename T>
__global__ void k_unary_int(Geo g, int op, T *out, const T *x, T lo, T hi, int64_t e)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[2];
		offsets(g, i, 2, off);
		T v = x[off[1]], r;
		switch (op) {
		case LM_ABS: r = lmi_iabs(v); break;
		case LM_NEG: r = lmi_ineg(v); break;
		case LM_RELU: r = lmi_irelu(v); break;
		case LM_SIGN: r = lmi_isign(v); break;
		case LM_SQUARE: r = lmi_imul(v, v); break;
		case LMI_CU_CLAMP: r = v < lo ? lo : (v > hi ? hi : v); break;
		case LMI_CU_POW_SCALAR: r = lmi_ipow(v, e); break;
		default: r = v; /* floor, ceil, round */
		}
		out[off[0]] = r;
	}
}

template <typename T>
static void launch_unary(const Geo &g, int op, const lmi_cu_arr *out, const lmi_cu_arr *x,
                         double p0, double p1)
{
	k_unary_int<T><<<blocks_for(g.n), THREADS, 0, lmi_cu_stream()>>>(
		g, op, (T *)out->data, (const T *)x->data, op == LMI_CU_CLAMP ? (T)p0 : (T)0,
		op == LMI_CU_CLAMP ? (T)p1 : (T)0, op == LMI_CU_POW_SCALAR ? (int64_t)p0 : 0);
}

int lmi_cu_unary_int(int op, const lmi_cu_arr *out, const lmi_cu_arr *x, double p0, double p1,
                     char *msg, size_t cap)
{
	switch (op) {
	case LM_ABS: case LM_NEG: case LM_RELU: case LM_SIGN: case LM_FLOOR: case LM_CEIL:
	case LM_ROUND: case LM_SQUARE: case LMI_CU_CLAMP: case LMI_CU_POW_SCALAR: break;
	default: snprintf(msg, cap, "unary: op %d has no integer loop", op); return 1;
	}
	const lmi_cu_arr *ops[2] = {out, x};
	Geo g = make_geo(out, 2, ops);
	if (!g.n) return 0;
	if (out->dtype == LM_INT32) launch_unary<int32_t>(g, op, out, x, p0, p1);
	else if (out->dtype == LM_INT64) launch_unary<int64_t>(g, op, out, x, p0, p1);
	else launch_unary<uint8_t>(g, op, out, x, p0, p1);
	LAUNCHED("k_unary_int");
	return 0;
}

/* ---------------------------------------------------------------- binary */

/* a // b (rem 0) or a % b (rem 1); a zero divisor marks the word and gives 0 */
template <typename T>
__device__ inline T divmod(T a, T b, int rem, int64_t *word)
{
	if (b == 0) {
		atomicMin((unsigned long long *)word, 0ull);
		return 0;
	}
	T r, q = lmi_idivmod(a, b, &r);
	return rem ? r : q;
}

template <typename T, typename O>
__global__ void k_binary_int(Geo g, int op, O *out, const T *pa, const T *pb, int64_t *word)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[3];
		offsets(g, i, 3, off);
		T a = pa[off[1]], b = pb[off[2]];
		O r;
		switch (op) {
		case LM_ADD: r = (O)lmi_iadd(a, b); break;
		case LM_SUB: r = (O)lmi_isub(a, b); break;
		case LM_MUL: r = (O)lmi_imul(a, b); break;
		case LM_POW: r = (O)lmi_ipow(a, (int64_t)b); break;
		case LM_MAXIMUM: r = (O)(a > b ? a : b); break;
		case LM_MINIMUM: r = (O)(a < b ? a : b); break;
		case LM_EQ: r = (O)(a == b); break;
		case LM_NE: r = (O)(a != b); break;
		case LM_LT: r = (O)(a < b); break;
		case LM_LE: r = (O)(a <= b); break;
		case LM_GT: r = (O)(a > b); break;
		case LM_GE: r = (O)(a >= b); break;
		case LM_FLOOR_DIVIDE: r = (O)divmod<T>(a, b, 0, word); break;
		default: r = (O)divmod<T>(a, b, 1, word); break; /* LM_REMAINDER */
		}
		out[off[0]] = r;
	}
}

template <typename T>
static void launch_binary(const Geo &g, int op, const lmi_cu_arr *out, const lmi_cu_arr *a,
                          const lmi_cu_arr *b, int64_t *word)
{
	unsigned nb = blocks_for(g.n);
	cudaStream_t s = lmi_cu_stream();
	if (out->dtype == LM_UINT8 && a->dtype != LM_UINT8) /* a comparison */
		k_binary_int<T, uint8_t><<<nb, THREADS, 0, s>>>(
			g, op, (uint8_t *)out->data, (const T *)a->data, (const T *)b->data, word);
	else
		k_binary_int<T, T><<<nb, THREADS, 0, s>>>(
			g, op, (T *)out->data, (const T *)a->data, (const T *)b->data, word);
}

int lmi_cu_binary_int(int op, const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                      char *msg, size_t cap)
{
	if (op == LM_DIV) {
		snprintf(msg, cap, "binary: true division has no integer loop");
		return 1;
	}
	const lmi_cu_arr *ops[3] = {out, a, b};
	Geo g = make_geo(out, 3, ops);
	if (!g.n) return 0;
	bool div = op == LM_FLOOR_DIVIDE || op == LM_REMAINDER;
	int e = div ? lmi_cu_word_reset(msg, cap) : 0;
	if (e) return e;
	int64_t *word = lmi_cu_word();
	if (a->dtype == LM_INT32) launch_binary<int32_t>(g, op, out, a, b, word);
	else if (a->dtype == LM_INT64) launch_binary<int64_t>(g, op, out, a, b, word);
	else launch_binary<uint8_t>(g, op, out, a, b, word);
	LAUNCHED("k_binary_int");
	if (!div) return 0;
	int64_t seen;
	if ((e = lmi_cu_word_read(&seen, msg, cap))) return e;
	if (seen != LMI_CU_WORD_NONE) {
		snprintf(msg, cap, "integer division by zero");
		return LMI_CU_ERR_ZERO_DIV;
	}
	return 0;
}

/* ---------------------------------------------------------------- a + alpha * b */

template <typename T, typename UT>
__global__ void k_axpy_int(Geo g, T *out, const T *a, const T *b, UT al)
{
	GRID_LOOP(i, g.n)
	{
		int64_t off[3];
		offsets(g, i, 3, off);
		out[off[0]] = (T)((UT)a[off[1]] + al * (UT)b[off[2]]);
	}
}

int lmi_cu_axpy_int(const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
                    double alpha, char *msg, size_t cap)
{
	const lmi_cu_arr *ops[3] = {out, a, b};
	Geo g = make_geo(out, 3, ops);
	if (!g.n) return 0;
	/* integral and in range: checked by the op; wrapped as the CPU's unsigned factor */
	int64_t ai = alpha < -9.2e18 ? INT64_MIN : alpha > 9.2e18 ? INT64_MAX : (int64_t)alpha;
	unsigned nb = blocks_for(g.n);
	cudaStream_t s = lmi_cu_stream();
	if (out->dtype == LM_INT32)
		k_axpy_int<int32_t, uint32_t><<<nb, THREADS, 0, s>>>(
			g, (int32_t *)out->data, (const int32_t *)a->data, (const int32_t *)b->data,
			(uint32_t)(uint64_t)ai);
	else if (out->dtype == LM_INT64)
		k_axpy_int<int64_t, uint64_t><<<nb, THREADS, 0, s>>>(
			g, (int64_t *)out->data, (const int64_t *)a->data, (const int64_t *)b->data,
			(uint64_t)ai);
	else
		k_axpy_int<uint8_t, uint32_t><<<nb, THREADS, 0, s>>>(
			g, (uint8_t *)out->data, (const uint8_t *)a->data, (const uint8_t *)b->data,
			(uint32_t)(uint64_t)ai);
	LAUNCHED("k_axpy_int");
	return 0;
}

/* ---------------------------------------------------------------- integer GEMM */

/* C_b = A_b B_b (+ C_b when beta), row-major, one thread per entry of C, the sum over k wrapping
 * in UT as cpu/matmul.c's igemm (a wrapping sum does not depend on its order). */
template <typename T, typename UT>
__global__ void k_igemm(int64_t batch, int64_t M, int64_t N, int64_t K, const T *A, int64_t sA,
                        const T *B, int64_t sB, T *C, int64_t sC, int beta)
{
	GRID_LOOP(e, batch * M * N)
	{
		int64_t j = e % N, i = (e / N) % M, b = e / (M * N);
		const T *a = A + b * sA + i * K, *bb = B + b * sB + j;
		UT acc = beta ? (UT)C[b * sC + i * N + j] : (UT)0;
		for (int64_t k = 0; k < K; k++) acc = (UT)(acc + (UT)a[k] * (UT)bb[k * N]);
		C[b * sC + i * N + j] = (T)acc;
	}
}

int lmi_cu_igemm(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,
                 int64_t sA, const void *B, int64_t sB, void *C, int64_t sC, double beta,
                 char *msg, size_t cap)
{
	int64_t n = batch * M * N;
	if (!n) return 0;
	unsigned nb = blocks_for(n);
	cudaStream_t s = lmi_cu_stream();
	int bt = beta != 0;
	if (dtype == LM_INT32)
		k_igemm<int32_t, uint32_t><<<nb, THREADS, 0, s>>>(batch, M, N, K, (const int32_t *)A, sA,
		                                                  (const int32_t *)B, sB, (int32_t *)C,
		                                                  sC, bt);
	else if (dtype == LM_INT64)
		k_igemm<int64_t, uint64_t><<<nb, THREADS, 0, s>>>(batch, M, N, K, (const int64_t *)A, sA,
		                                                  (const int64_t *)B, sB, (int64_t *)C,
		                                                  sC, bt);
	else
		k_igemm<uint8_t, uint32_t><<<nb, THREADS, 0, s>>>(batch, M, N, K, (const uint8_t *)A, sA,
		                                                  (const uint8_t *)B, sB, (uint8_t *)C,
		                                                  sC, bt);
	LAUNCHED("k_igemm");
	return 0;
}
