/*
 * tensor.cl — the OpenCL device's kernels for tensors (backend_opencl.c builds and launches them).
 *
 * Built once per element type: the host passes -DT=float (or double) and, for the copies, TD and
 * TS (destination and source types); the same source serves every type. Arrays come as a buffer
 * and an element offset (cl_runtime.h: device memory behind addresses); strided tensors carry a
 * geometry (shape and up to four stride sets, broadcast dims with stride 0) by value, and each
 * work-item walks its elements with a grid-stride loop, so any launch size covers any n. The
 * arithmetic follows the CPU's (../scalar_math.h): relu and sign keep a NaN, maximum and minimum
 * propagate one, round is half to even (rint), the optimizers are torch.optim's in T.
 * OpenCL C 1.2: no generic address space, no templates.
 */
#ifdef LM_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double ACC; /* the reductions' accumulator */
#else
typedef float ACC;
#endif

typedef struct geo {
	long n;         /* elements */
	long shape[8];
	long st[4][8];  /* strides in elements: [0] the output, [1..3] the inputs */
	int nd;
	int pad_;
} geo;

/* the offsets of element i of g in each of its k arrays */
#define GEO_OFFSETS(g, i, o, k)                                                                    \
	do {                                                                                       \
		long q_ = (i);                                                                     \
		if ((g).nd == 1) { /* one run (contiguous operands): no division */                \
			for (int j_ = 0; j_ < (k); j_++) (o)[j_] = q_ * (g).st[j_][0];             \
			break;                                                                     \
		}                                                                                  \
		for (int j_ = 0; j_ < (k); j_++) (o)[j_] = 0;                                      \
		for (int d_ = (g).nd - 1; d_ >= 0; d_--) {                                         \
			long c_ = q_ % (g).shape[d_];                                              \
			q_ /= (g).shape[d_];                                                       \
			for (int j_ = 0; j_ < (k); j_++) (o)[j_] += c_ * (g).st[j_][d_];           \
		}                                                                                  \
	} while (0)

#define FOR_ALL(i, n) for (long i = get_global_id(0); i < (n); i += get_global_size(0))

#ifdef TD
/* ---------------------------------------------------------------- copies and fills (TD, TS) */
__kernel void copy(__global TD *d, long od, __global const TS *s, long os, geo g)
{
	FOR_ALL(i, g.n) {
		long o[2];
		GEO_OFFSETS(g, i, o, 2);
		d[od + o[0]] = (TD)s[os + o[1]];
	}
}

__kernel void fill(__global TD *d, long od, geo g, TD v)
{
	FOR_ALL(i, g.n) {
		long o[1];
		GEO_OFFSETS(g, i, o, 1);
		d[od + o[0]] = v;
	}
}
#endif

#ifdef T
/* ---------------------------------------------------------------- elementwise */

/* backend.h's unary codes: lm_unop (0..16) then the parametrised ones */
enum { U_EXP, U_LOG, U_SQRT, U_ABS, U_NEG, U_SIN, U_COS, U_TANH, U_SIGMOID, U_RELU, U_SIGN,
       U_FLOOR, U_CEIL, U_ROUND, U_RSQRT, U_RECIPROCAL, U_SQUARE, U_CLAMP, U_LEAKY_RELU,
       U_POW_SCALAR, U_ADD_SCALED, U_ADD_S, U_MUL_S, U_DIV_S };

#ifdef UT /* integers: as the CPU's, wrapping (the arithmetic runs in the unsigned twin UT) */
T ipow(T b, long e)
{
	UT r = 1, x = (UT)b;
	while (e > 0) {
		if (e & 1) r *= x;
		x *= x;
		e >>= 1;
	}
	return (T)r;
}

T unary_value(int op, T v, T p0, T p1)
{
	switch (op) {
	case U_ABS: return v < 0 ? (T)(0 - (UT)v) : v;
	case U_NEG: return (T)(0 - (UT)v);
	case U_RELU: return v < 0 ? (T)0 : v;
	case U_SIGN: return (T)((v > 0) - (v < 0));
	case U_SQUARE: return (T)((UT)v * (UT)v);
	case U_CLAMP: return v < p0 ? p0 : (v > p1 ? p1 : v);
	case U_POW_SCALAR: return ipow(v, (long)p0);
	default: return v; /* floor, ceil, round */
	}
}
#else
T unary_value(int op, T v, T p0, T p1)
{
	switch (op) {
	case U_EXP: return exp(v);
	case U_LOG: return log(v);
	case U_SQRT: return sqrt(v);
	case U_ABS: return fabs(v);
	case U_NEG: return -v;
	case U_SIN: return sin(v);
	case U_COS: return cos(v);
	case U_TANH: return tanh(v);
	case U_SIGMOID: return (T)1 / ((T)1 + exp(-v));
	case U_RELU: return v < (T)0 ? (T)0 : v;
	case U_SIGN: return v != v ? v : (T)((v > 0) - (v < 0));
	case U_FLOOR: return floor(v);
	case U_CEIL: return ceil(v);
	case U_ROUND: return rint(v);
	case U_RSQRT: return (T)1 / sqrt(v);
	case U_RECIPROCAL: return (T)1 / v;
	case U_SQUARE: return v * v;
	case U_CLAMP: return v < p0 ? p0 : (v > p1 ? p1 : v);
	case U_LEAKY_RELU: return v > (T)0 ? v : v * p0;
	case U_POW_SCALAR:
		if (p0 == (T)2) return v * v;
		if (p0 == (T)3) return v * v * v;
		if (p0 == (T)1) return v;
		if (p0 == (T)0.5) return sqrt(v);
		if (p0 == (T)-1) return (T)1 / v;
		return pow(v, p0);
	case U_ADD_SCALED: return v * p0 + p1;
	case U_ADD_S: return v + p0;
	case U_MUL_S: return v * p0;
	default: return v / p0; /* U_DIV_S */
	}
}
#endif

__kernel void unary(__global T *o, long oo, __global const T *x, long ox, geo g, int op, T p0, T p1)
{
#ifdef OPC
	op = OPC;
#endif
	FOR_ALL(i, g.n) {
		long f[2];
		GEO_OFFSETS(g, i, f, 2);
		o[oo + f[0]] = unary_value(op, x[ox + f[1]], p0, p1);
	}
}

/* lm_binop: add sub mul div pow maximum minimum, then the comparisons (into uchar) */
enum { B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAXIMUM, B_MINIMUM, B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE,
       B_FLOOR_DIVIDE, B_REMAINDER };

#ifdef UT
/* a // b and a % b as Python's (the host checked that no divisor is 0) */
T binary_value(int op, T a, T b)
{
	switch (op) {
	case B_ADD: return (T)((UT)a + (UT)b);
	case B_SUB: return (T)((UT)a - (UT)b);
	case B_MUL: return (T)((UT)a * (UT)b);
	case B_POW: return ipow(a, (long)b);
	case B_MAXIMUM: return a > b ? a : b;
	case B_MINIMUM: return a < b ? a : b;
	case B_FLOOR_DIVIDE: {
		if (b == -1) return (T)(0 - (UT)a); /* INT_MIN // -1 wraps */
		T q = a / b;
		return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
	}
	default: {
		if (b == -1) return 0;
		T m = a % b;
		return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
	}
	}
}
#else
T floor_div(T a, T b)
{
	if (b == 0) return a / b;
	T m = fmod(a, b), div = (a - m) / b;
	if (m != 0 && ((b < 0) != (m < 0))) div -= 1;
	if (div == 0) return copysign((T)0, a / b);
	T q = floor(div);
	return div - q > (T)0.5 ? q + 1 : q;
}

T floor_mod(T a, T b)
{
	T m = fmod(a, b);
	if (m != 0 && ((b < 0) != (m < 0))) m += b;
	return m;
}

T binary_value(int op, T a, T b)
{
	switch (op) {
	case B_ADD: return a + b;
	case B_SUB: return a - b;
	case B_MUL: return a * b;
	case B_DIV: return a / b;
	case B_POW: return pow(a, b);
	case B_MAXIMUM: return (a != a || b != b) ? a + b : (a > b ? a : b);
	case B_MINIMUM: return (a != a || b != b) ? a + b : (a < b ? a : b);
	case B_FLOOR_DIVIDE: return floor_div(a, b);
	default: return floor_mod(a, b);
	}
}
#endif

__kernel void binary(__global T *o, long oo, __global const T *a, long oa, __global const T *b,
                     long ob, geo g, int op)
{
#ifdef OPC
	op = OPC; /* built for one op: the switch folds away and the loop vectorizes */
#endif
	FOR_ALL(i, g.n) {
		long f[3];
		GEO_OFFSETS(g, i, f, 3);
		o[oo + f[0]] = binary_value(op, a[oa + f[1]], b[ob + f[2]]);
	}
}

/* the same over one run of every operand (geo.nd == 1): a work-item an element, no loop, which
 * PoCL vectorizes across the work-group */
__kernel void binary1(__global T *o, long oo, long so, __global const T *a, long oa, long sa,
                      __global const T *b, long ob, long sb, long n, int op)
{
#ifdef OPC
	op = OPC;
#endif
	long i = get_global_id(0);
	if (i < n) o[oo + i * so] = binary_value(op, a[oa + i * sa], b[ob + i * sb]);
}

/* every operand dense (strides 1): plain loads and stores the compiler turns into vector ones */
__kernel void binary_dense(__global T *o, long oo, __global const T *a, long oa,
                           __global const T *b, long ob, long n, int op)
{
#ifdef OPC
	op = OPC;
#endif
	long i = get_global_id(0);
	if (i < n) o[oo + i] = binary_value(op, a[oa + i], b[ob + i]);
}

__kernel void unary_dense(__global T *o, long oo, __global const T *x, long ox, long n, int op,
                          T p0, T p1)
{
#ifdef OPC
	op = OPC;
#endif
	long i = get_global_id(0);
	if (i < n) o[oo + i] = unary_value(op, x[ox + i], p0, p1);
}

__kernel void unary1(__global T *o, long oo, long so, __global const T *x, long ox, long sx, long n,
                     int op, T p0, T p1)
{
#ifdef OPC
	op = OPC;
#endif
	long i = get_global_id(0);
	if (i < n) o[oo + i * so] = unary_value(op, x[ox + i * sx], p0, p1);
}

__kernel void compare(__global uchar *o, long oo, __global const T *a, long oa,
                      __global const T *b, long ob, geo g, int op)
{
#ifdef OPC
	op = OPC;
#endif
	FOR_ALL(i, g.n) {
		long f[3];
		GEO_OFFSETS(g, i, f, 3);
		T x = a[oa + f[1]], y = b[ob + f[2]];
		int r;
		switch (op) {
		case B_EQ: r = x == y; break;
		case B_NE: r = x != y; break;
		case B_LT: r = x < y; break;
		case B_LE: r = x <= y; break;
		case B_GT: r = x > y; break;
		default: r = x >= y; break;
		}
		o[oo + f[0]] = (uchar)r;
	}
}

__kernel void where_(__global T *o, long oo, __global const uchar *c, long oc, __global const T *a,
                     long oa, __global const T *b, long ob, geo g)
{
	FOR_ALL(i, g.n) {
		long f[4];
		GEO_OFFSETS(g, i, f, 4);
		o[oo + f[0]] = c[oc + f[1]] ? a[oa + f[2]] : b[ob + f[3]];
	}
}

__kernel void add_scaled(__global T *o, long oo, __global const T *a, long oa, __global const T *b,
                         long ob, geo g, T alpha)
{
	FOR_ALL(i, g.n) {
		long f[3];
		GEO_OFFSETS(g, i, f, 3);
		o[oo + f[0]] = a[oa + f[1]] + alpha * b[ob + f[2]];
	}
}

/* a 1 in flag[0] when any element of b is 0 (integer // and %: the CPU's error) */
__kernel void any_zero(__global const T *b, long ob, geo g, __global int *flag)
{
	FOR_ALL(i, g.n) {
		long f[1];
		GEO_OFFSETS(g, i, f, 1);
		if (b[ob + f[0]] == 0) flag[0] = 1;
	}
}

/* ---------------------------------------------------------------- reductions over rows */

/* lm_redop */
enum { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN, R_ARGMAX, R_ARGMIN, R_VAR, R_STD, R_NORM };

#define RGROUP 64 /* work-items per row: the launch's local size */

#ifdef UT /* integer sums and products wrap in 64 bits, as the CPU's */
typedef ulong SUMT;
#define TO_SUM(v) ((ulong)(long)(v))
#else /* float ones accumulate in ACC (double where the device has it), as the CPU's */
typedef ACC SUMT;
#define TO_SUM(v) ((ACC)(v))
#endif

/* whether candidate b (at pb) replaces a (at pa) as the max (big) or min: the first of equal
 * values, a NaN counting as beyond every number */
bool pick_better(T a, long pa, T b, long pb, bool big)
{
	if (pb < 0) return false;
	if (pa < 0) return true;
	if (a != a) return b != b && pb < pa;
	if (b != b) return true;
	return big ? (b > a || (b == a && pb < pa)) : (b < a || (b == a && pb < pa));
}

/* Reduces row r of x (rows x R, contiguous) per work-group of RGROUP items: each item a strided
 * part, then a tree in local memory. out: T for floats and for the picks; long for integer sums
 * and products; float for integer means (a uchar pointer, cast by the op). idx: the position of
 * the max / min, or the arg op's result. p: the norm's p or the variance's correction. */
__kernel void reduce_rows(__global const T *x, long ox, long R, __global uchar *out, long oo,
                          __global long *idx, long oi, int op, int has_out, int has_idx, ACC p)
{
	__local SUMT vs[RGROUP];
	__local T vp[RGROUP];
	__local long at[RGROUP];
	long r = get_group_id(0);
	int t = get_local_id(0);
	__global const T *row = x + ox + r * R;
	bool pick = op == R_MAX || op == R_MIN || op == R_ARGMAX || op == R_ARGMIN;
	bool big = op == R_MAX || op == R_ARGMAX;
	SUMT acc = op == R_PROD ? (SUMT)1 : (SUMT)0;
	T pv = 0;
	long pos = -1;
#ifndef UT
	bool inf_norm = op == R_NORM && isinf(p);
	if (inf_norm) pick = true, big = true;
#endif
	for (long j = t; j < R; j += RGROUP) {
		T e = row[j];
		if (pick) {
#ifndef UT
			if (op == R_NORM) e = fabs(e);
#endif
			if (pick_better(pv, pos, e, j, big)) pv = e, pos = j;
		} else if (op == R_PROD) {
			acc *= TO_SUM(e);
#ifndef UT
		} else if (op == R_NORM) {
			ACC a = fabs((ACC)e);
			acc += p == 2 ? a * a : p == 1 ? a : p == 0 ? (ACC)(a != 0) : pow(a, p);
		} else if (op == R_VAR || op == R_STD || op == R_MEAN) {
			acc += (ACC)e - (ACC)row[0]; /* shifted by a pivot: equal entries give it exactly */
#endif
		} else {
			acc += TO_SUM(e);
		}
	}
	vs[t] = acc;
	vp[t] = pv;
	at[t] = pos;
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int s = RGROUP / 2; s > 0; s /= 2) {
		if (t < s) {
			if (pick) {
				if (pick_better(vp[t], at[t], vp[t + s], at[t + s], big))
					vp[t] = vp[t + s], at[t] = at[t + s];
			} else if (op == R_PROD) {
				vs[t] = vs[t] * vs[t + s];
			} else {
				vs[t] = vs[t] + vs[t + s];
			}
		}
		barrier(CLK_LOCAL_MEM_FENCE);
	}
#ifndef UT
	if (op == R_VAR || op == R_STD) { /* second pass: squared deviations from the mean */
		ACC mean = R ? (ACC)row[0] + vs[0] / (ACC)R : 0;
		barrier(CLK_LOCAL_MEM_FENCE);
		ACC sq = 0;
		for (long j = t; j < R; j += RGROUP) {
			ACC d = (ACC)row[j] - mean;
			sq += d * d;
		}
		vs[t] = sq;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int s = RGROUP / 2; s > 0; s /= 2) {
			if (t < s) vs[t] += vs[t + s];
			barrier(CLK_LOCAL_MEM_FENCE);
		}
	}
#endif
	if (t != 0) return;
	if (has_idx) idx[oi + r] = at[0];
	if (!has_out) return;
	if (pick) {
		T v = vp[0];
#ifndef UT
		if (inf_norm && R == 0) v = 0;
#endif
		((__global T *)out)[oo + r] = v;
		return;
	}
#ifdef UT
	if (op == R_MEAN)
		((__global float *)out)[oo + r] = R ? (float)((double)(long)vs[0] / (double)R) : NAN;
	else
		((__global long *)out)[oo + r] = (long)vs[0];
#else
	ACC res = vs[0];
	if (op == R_MEAN) res = R ? (ACC)row[0] + res / (ACC)R : (ACC)NAN;
	else if (op == R_VAR || op == R_STD) {
		ACC dof = (ACC)R - p;
		res = dof > 0 ? res / dof : (ACC)NAN; /* as the CPU's */
		if (op == R_STD) res = sqrt(res);
	} else if (op == R_NORM) {
		res = p == 2 ? sqrt(res) : p == 1 || p == 0 ? res : pow(res, (ACC)1 / p);
	}
	((__global T *)out)[oo + r] = (T)res;
#endif
}

/* ---------------------------------------------------------------- scatter_add */

#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable

/* *p += v atomically: integers by atomic_add / atom_add, floats by compare-and-swap on their bits */
#if defined(UT)
void add_atomic(__global T *p, T v)
{
	if (sizeof(T) == 8) atom_add((volatile __global long *)p, (long)v);
	else if (sizeof(T) == 4) atomic_add((volatile __global int *)p, (int)v);
	else { /* a byte: the aligned word around it */
		__global uint *w = (__global uint *)((size_t)p & ~(size_t)3);
		uint shift = ((size_t)p & 3) * 8, old, nw;
		do {
			old = *(volatile __global uint *)w;
			nw = (old & ~(0xffu << shift)) | ((((old >> shift) + (uint)(uchar)v) & 0xffu) << shift);
		} while (atomic_cmpxchg((volatile __global uint *)w, old, nw) != old);
	}
}
#else
void add_atomic(__global T *p, T v)
{
	if (sizeof(T) == 8) {
		union { ulong u; double f; } old, nw;
		do {
			old.f = *(volatile __global double *)p;
			nw.f = old.f + v;
		} while (atom_cmpxchg((volatile __global ulong *)p, old.u, nw.u) != old.u);
	} else {
		union { uint u; float f; } old, nw;
		do {
			old.f = *(volatile __global float *)p;
			nw.f = old.f + v;
		} while (atomic_cmpxchg((volatile __global uint *)p, old.u, nw.u) != old.u);
	}
}
#endif

/* out[.., idx[e], ..] += src[e] along dim (idx int64; geometry over idx's shape: st[0] out's
 * strides with dim's 0, st[1] src's, st[2] idx's); an index outside [0, size) leaves the smallest
 * such position in bad[0] */
__kernel void scatter_add(__global T *out, long oo, long ostep, long size, __global const T *src,
                          long os, __global const long *idx, long oi, geo g, __global long *bad)
{
	FOR_ALL(e, g.n) {
		long f[3];
		GEO_OFFSETS(g, e, f, 3);
		long v = idx[oi + f[2]];
		if (v < 0 || v >= size) {
			atom_min(bad, e);
			continue;
		}
		add_atomic(out + oo + f[0] + v * ostep, src[os + f[1]]);
	}
}

/* ---------------------------------------------------------------- moves by position */

/* out[e] = x[.., idx[e], ..] along dim (geometry over idx's shape: st[0] out's strides, st[1]
 * x's with dim's 0, st[2] idx's); an index outside [0, size) leaves the smallest position in bad */
__kernel void gather(__global T *out, long oo, __global const T *x, long ox_, long xstep, long size,
                     __global const long *idx, long oi, geo g, __global long *bad)
{
	FOR_ALL(e, g.n) {
		long f[3];
		GEO_OFFSETS(g, e, f, 3);
		long v = idx[oi + f[2]];
		if (v < 0 || v >= size) {
			atom_min(bad, e);
			continue;
		}
		out[oo + f[0]] = x[ox_ + f[1] + v * xstep];
	}
}

/* out (outer, n, inner) = x (outer, size, inner) at rows idx (n, checked by the host) */
__kernel void index_select(__global T *out, long oo, __global const T *x, long ox_,
                           __global const long *idx, long oi, long outer, long size, long inner,
                           long n)
{
	FOR_ALL(e, outer * n * inner) {
		long o = e / (n * inner), j = (e / inner) % n, in = e % inner;
		out[oo + e] = x[ox_ + (o * size + idx[oi + j]) * inner + in];
	}
}

#ifndef UT /* the rest: floats only */
/* ---------------------------------------------------------------- products */

#define TILE 16

/* C (batch, M, N) = A (batch, M, K) B (batch, K, N), contiguous; a matrix stride of 0 repeats
 * one matrix over the batch. PMPP's tiled kernel: a TILE x TILE group stages a tile of A and of
 * B in local memory per phase, zeros beyond the edges. */
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void matmul_tiled(__global const T *A, long oa, long sA, __global const T *B, long ob, long sB,
                  __global T *C, long oc, long sC, long M, long N, long K)
{
	__local T As[TILE][TILE];
	__local T Bs[TILE][TILE];
	int tx = get_local_id(0), ty = get_local_id(1);
	long col = get_group_id(0) * TILE + tx, row = get_group_id(1) * TILE + ty;
	long z = get_global_id(2);
	__global const T *a = A + oa + z * sA;
	__global const T *b = B + ob + z * sB;
	T acc = 0;
	for (long k0 = 0; k0 < K; k0 += TILE) {
		As[ty][tx] = row < M && k0 + tx < K ? a[row * K + k0 + tx] : (T)0;
		Bs[ty][tx] = col < N && k0 + ty < K ? b[(k0 + ty) * N + col] : (T)0;
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int k = 0; k < TILE; k++) acc += As[ty][k] * Bs[k][tx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (row < M && col < N) C[oc + z * sC + row * N + col] = acc;
}

/* ---------------------------------------------------------------- nn */

/* softmax / log-softmax of x (outer, R, inner) along R, contiguous; a work-item a line */
__kernel void softmax(__global const T *x, long ox, __global T *y, long oy, long outer, long R,
                      long inner, int logsm)
{
	FOR_ALL(l, outer * inner) {
		long o = l / inner, in = l % inner, base = o * R * inner + in;
		T m = -INFINITY;
		for (long j = 0; j < R; j++) m = fmax(m, x[ox + base + j * inner]);
		T s = 0;
		for (long j = 0; j < R; j++) s += exp(x[ox + base + j * inner] - m);
		T ls = log(s);
		for (long j = 0; j < R; j++) {
			T e = x[ox + base + j * inner] - m;
			y[oy + base + j * inner] = logsm ? e - ls : exp(e) / s;
		}
	}
}

/* out[n, l] = -logp[n, t[n, l], l] (logp (N, C, L), target (N, L) int64, contiguous) */
__kernel void nll(__global const T *lp, long olp, __global const long *tg, long otg,
                  __global T *out, long oo, long N, long C, long L)
{
	FOR_ALL(i, N * L) {
		long n = i / L, l = i % L, c = tg[otg + i];
		out[oo + i] = c >= 0 && c < C ? -lp[olp + (n * C + c) * L + l] : (T)NAN;
	}
}

__kernel void nll_grad(__global const T *g, long og, __global const long *tg, long otg,
                       __global T *gx, long ogx, long N, long C, long L)
{
	FOR_ALL(i, N * L) {
		long n = i / L, l = i % L, c = tg[otg + i];
		if (c >= 0 && c < C) gx[ogx + (n * C + c) * L + l] = -g[og + i];
	}
}

/* ---------------------------------------------------------------- convolution's data movement */

/* x (planes = N*C, H, W) contiguous -> cols (N, C*kh*kw, oh*ow): row (c, i, j), column (oy, ox)
 * holds x[c, oy*sh - ph + i*dh, ox*sw - pw + j*dw], 0 outside (cpu/window.c's layout); a work-item
 * an entry of cols */
__kernel void im2col(__global const T *x, long ox_, __global T *cols, long oc, long planes, long H,
                     long W, long kh, long kw, long sh, long sw, long ph, long pw, long dh, long dw,
                     long oh, long ow)
{
	long L = oh * ow, rows = kh * kw;
	FOR_ALL(e, planes * rows * L) {
		long p = e / (rows * L), r = (e / L) % rows, q = e % L;
		long i = r / kw, j = r % kw, y = (q / ow) * sh - ph + i * dh, xx = (q % ow) * sw - pw + j * dw;
		cols[oc + e] = y >= 0 && y < H && xx >= 0 && xx < W ? x[ox_ + (p * H + y) * W + xx] : (T)0;
	}
}

/* the adjoint: each pixel the sum of the entries of cols that read it, in the CPU's order (rows
 * i, j ascending), overwriting out; a work-item a pixel */
__kernel void col2im(__global const T *cols, long oc, __global T *out, long oo, long planes, long H,
                     long W, long kh, long kw, long sh, long sw, long ph, long pw, long dh, long dw,
                     long oh, long ow)
{
	long L = oh * ow, rows = kh * kw;
	FOR_ALL(e, planes * H * W) {
		long p = e / (H * W), y = (e / W) % H, xx = e % W;
		T acc = 0;
		for (long i = 0; i < kh; i++) {
			long ty = y + ph - i * dh;
			if (ty < 0 || ty % sh != 0 || ty / sh >= oh) continue;
			for (long j = 0; j < kw; j++) {
				long tx = xx + pw - j * dw;
				if (tx < 0 || tx % sw != 0 || tx / sw >= ow) continue;
				acc += cols[oc + (p * rows + i * kw + j) * L + (ty / sh) * ow + tx / sw];
			}
		}
		out[oo + e] = acc;
	}
}

/* max pooling of planes (H, W) into (OH, OW) maxima and their positions h*W + w: the first
 * maximum in row-major order, a NaN beyond every number (cpu/nn.c's rule) */
__kernel void max_pool2d(__global const T *x, long ox_, __global T *y, long oy, __global long *ix,
                         long oi, long planes, long H, long W, long OH, long OW, long kh, long kw,
                         long sh, long sw, long ph, long pw)
{
	FOR_ALL(e, planes * OH * OW) {
		long p = e / (OH * OW), o_h = (e / OW) % OH, o_w = e % OW;
		long h0 = o_h * sh - ph, w0 = o_w * sw - pw;
		long i0 = h0 < 0 ? 0 : h0, i1 = h0 + kh > H ? H : h0 + kh;
		long j0 = w0 < 0 ? 0 : w0, j1 = w0 + kw > W ? W : w0 + kw;
		__global const T *xp = x + ox_ + p * H * W;
		if (i0 >= i1 || j0 >= j1) {
			y[oy + e] = -INFINITY;
			ix[oi + e] = -1;
			continue;
		}
		T best = xp[i0 * W + j0];
		long bi = i0 * W + j0;
		for (long i = i0; i < i1; i++)
			for (long j = j0; j < j1; j++) {
				T v = xp[i * W + j];
				if (v > best || (v != v && best == best)) best = v, bi = i * W + j;
			}
		y[oy + e] = best;
		ix[oi + e] = bi;
	}
}

/* GELU (erf, or tanh_approx) and its backward g * gelu'(x), computed in ACC as the CPU's in double */
__kernel void gelu(__global T *o, long oo, __global const T *x, long ox_, __global const T *g, long og,
                   geo gm, int tanh_approx, int grad)
{
	FOR_ALL(i, gm.n) {
		long f[3];
		GEO_OFFSETS(gm, i, f, 3);
		ACC v = x[ox_ + f[1]], r;
		const ACC s2pi = 0.7978845608028654, is2 = 0.7071067811865476, is2pi = 0.3989422804014327;
		if (!grad) {
			r = tanh_approx ? 0.5 * v * (1 + tanh(s2pi * (v + 0.044715 * v * v * v)))
			                : 0.5 * v * (1 + erf(v * is2));
		} else {
			if (tanh_approx) {
				ACC u = s2pi * (v + 0.044715 * v * v * v), th = tanh(u);
				r = 0.5 * (1 + th) + 0.5 * v * (1 - th * th) * s2pi * (1 + 3 * 0.044715 * v * v);
			} else {
				r = 0.5 * (1 + erf(v * is2)) + v * is2pi * exp(-0.5 * v * v);
			}
			r *= (ACC)g[og + f[2]];
		}
		o[oo + f[0]] = (T)r;
	}
}

/* ---------------------------------------------------------------- optimizers (torch.optim's) */

__kernel void sgd_step(__global T *p, long op, __global const T *g, long og, __global T *buf,
                       long obuf, long n, T lr, T mo, T damp, T wd, int nesterov, int maximize,
                       int first, int has_buf)
{
	FOR_ALL(i, n) {
		T w = p[op + i], d = maximize ? -g[og + i] : g[og + i];
		if (wd != 0) d = d + wd * w;
		if (mo != 0 && has_buf) {
			T m = first ? d : buf[obuf + i] * mo + d * damp;
			buf[obuf + i] = m;
			d = nesterov ? d + m * mo : m;
		}
		p[op + i] = w - lr * d;
	}
}

__kernel void adam_step(__global T *p, long op, __global const T *g, long og, __global T *m1,
                        long om1, __global T *m2, long om2, __global T *mx, long omx, long n,
                        T b1, T b2, T c1, T c2, T wd, T decay, T step_size, T bc2s, T eps,
                        int decoupled, int ams, int maximize)
{
	FOR_ALL(i, n) {
		T w = p[op + i], gr = maximize ? -g[og + i] : g[og + i];
		if (wd != 0) {
			if (decoupled) w = w * decay;
			else gr = gr + wd * w;
		}
		T a = m1[om1 + i] * b1 + gr * c1;
		T b = m2[om2 + i] * b2 + c2 * gr * gr;
		m1[om1 + i] = a;
		m2[om2 + i] = b;
		if (ams) {
			T mv = mx[omx + i] > b ? mx[omx + i] : b;
			mx[omx + i] = mv;
			b = mv;
		}
		T denom = sqrt(b) / bc2s + eps;
		p[op + i] = w - step_size * (a / denom);
	}
}

__kernel void rmsprop_step(__global T *p, long op, __global const T *g, long og, __global T *sa,
                           long osa, __global T *bf, long obf, __global T *ga, long oga, long n,
                           T alpha, T c, T wd, T lr, T eps, T mo, int maximize, int has_buf,
                           int has_avg)
{
	FOR_ALL(i, n) {
		T w = p[op + i], gr = maximize ? -g[og + i] : g[og + i];
		if (wd != 0) gr = gr + wd * w;
		T s2 = sa[osa + i] * alpha + c * gr * gr;
		sa[osa + i] = s2;
		T avg;
		if (has_avg) {
			T a = ga[oga + i] * alpha + gr * c;
			ga[oga + i] = a;
			avg = sqrt(s2 + a * a * (T)-1);
		} else {
			avg = sqrt(s2);
		}
		avg = avg + eps;
		if (has_buf) {
			T m = bf[obf + i] * mo + gr / avg;
			bf[obf + i] = m;
			p[op + i] = w - lr * m;
		} else {
			p[op + i] = w - lr * (gr / avg);
		}
	}
}
#endif /* floats */
#endif /* T */
