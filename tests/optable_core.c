/*
 * optable_core.c — op-table rows for the Foundation I ops: unary math, binary arithmetic and
 * comparisons, where, reductions, matmul, copies and views. Each reference reads elements with
 * lm_tensor_get and computes in double with plain loops — nothing here calls the op under test.
 */
#include <math.h>
#include <string.h>

#include "optable.h"

/* ---------------------------------------------------------------- unary */

static bool float_fn(int op)
{
	return op == LM_EXP || op == LM_LOG || op == LM_SQRT || op == LM_SIN || op == LM_COS ||
	       op == LM_TANH || op == LM_SIGMOID || op == LM_RSQRT || op == LM_RECIPROCAL;
}

enum { F_CLAMP = 100, F_POW_SCALAR, F_LEAKY };

static double unary_ref_value(int fn, double v, const double *p, lm_dtype dt)
{
	switch (fn) {
	case LM_EXP: return exp(v);
	case LM_LOG: return log(v);
	case LM_SQRT: return sqrt(v);
	case LM_ABS: return fabs(v);
	case LM_NEG: return -v;
	case LM_SIN: return sin(v);
	case LM_COS: return cos(v);
	case LM_TANH: return tanh(v);
	case LM_SIGMOID: return 1 / (1 + exp(-v));
	case LM_RELU: return v < 0 ? 0 : v;
	case LM_SIGN: return (v > 0) - (v < 0);
	case LM_FLOOR: return floor(v);
	case LM_CEIL: return ceil(v);
	case LM_ROUND: return nearbyint(v);
	case LM_RSQRT: return 1 / sqrt(v);
	case LM_RECIPROCAL: return 1 / v;
	case LM_SQUARE: return v * v;
	case F_CLAMP: {
		double lo = p[0], hi = p[1];
		if (!lm_dtype_is_float(dt)) { /* integer bounds, clipped to the dtype's range */
			double tmin = dt == LM_UINT8 ? 0 : -2147483648.0, tmax = dt == LM_UINT8 ? 255 : 2147483647.0;
			lo = fmin(fmax(ceil(lo), tmin), tmax);
			hi = fmin(fmax(floor(hi), tmin), tmax);
		}
		return v < lo ? lo : v > hi ? hi : v;
	}
	case F_POW_SCALAR: return pow(v, p[0]);
	case F_LEAKY: return v > 0 ? v : v * p[0];
	default: return NAN;
	}
}

static lm_dtype unary_result(const ot_case *c)
{
	lm_dtype dt = lm_tensor_dtype(c->in[0]);
	int fn = c->op->fn;
	if (lm_dtype_is_float(dt)) return dt;
	if (float_fn(fn)) return LM_FLOAT32;
	if (fn == F_POW_SCALAR && (c->p[0] != floor(c->p[0]) || c->p[0] < 0)) return LM_FLOAT32;
	return dt;
}

static lm_tensor *ref_unary(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	lm_tensor *out = ot_new(lm_tensor_ndim(x), lm_tensor_shape(x), unary_result(c));
	int64_t n = lm_tensor_numel(x);
	for (int64_t i = 0; i < n; i++)
		ot_set_linear(out, i, unary_ref_value(c->op->fn, ot_get_linear(x, i), c->p, lm_tensor_dtype(x)));
	return out;
}

static lm_tensor *run_unary(const ot_case *c)
{
	switch (c->op->fn) {
	case F_CLAMP: return lm_clamp(c->in[0], c->p[0], c->p[1]);
	case F_POW_SCALAR: return lm_pow_scalar(c->in[0], c->p[0]);
	case F_LEAKY: return lm_leaky_relu(c->in[0], c->p[0]);
	default: return lm_unary((lm_unop)c->op->fn, c->in[0]);
	}
}

static void gen_clamp(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_unary(op, r, dt, l, c);
	c->p[0] = ot_uniform(r, -2, 0.5);
	c->p[1] = c->p[0] + ot_uniform(r, 0, 2.5);
	ot_describe(c, op, dt, l);
}

static void gen_pow_scalar(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	static const double ps[] = {2, 3, 0.5, -1, 1.7, 0, 1, -2.5};
	ot_gen_unary(op, r, dt, l, c);
	c->p[0] = ps[ot_int(r, 0, 7)];
	if (!lm_dtype_is_float(dt) && c->p[0] < 0) c->p[0] = 2; /* 0 ^ -1 */
	ot_describe(c, op, dt, l);
}

static void gen_leaky(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_unary(op, r, dt, l, c);
	c->p[0] = ot_uniform(r, 0.01, 0.3);
	ot_describe(c, op, dt, l);
}

/* ---------------------------------------------------------------- binary */

static lm_tensor *run_binary(const ot_case *c) { return lm_binary((lm_binop)c->op->fn, c->in[0], c->in[1]); }

/* The quotient and remainder by their definition: a = q b + m, q an integer, m of b's sign and
 * |m| < |b| (long double: exact for the values drawn). */
static double divmod_ref(int op, double a, double b)
{
	long double q = floorl((long double)a / (long double)b), m = (long double)a - q * (long double)b;
	if (m != 0 && ((m < 0) != (b < 0))) {
		q -= 1;
		m += b;
	}
	return op == LM_FLOOR_DIVIDE ? (double)q : (double)m;
}

static double binary_ref_value(int op, double a, double b)
{
	switch (op) {
	case LM_ADD: return a + b;
	case LM_SUB: return a - b;
	case LM_MUL: return a * b;
	case LM_DIV: return a / b;
	case LM_POW: return pow(a, b);
	case LM_MAXIMUM: return a > b ? a : b;
	case LM_MINIMUM: return a < b ? a : b;
	case LM_EQ: return a == b;
	case LM_NE: return a != b;
	case LM_LT: return a < b;
	case LM_LE: return a <= b;
	case LM_GT: return a > b;
	case LM_GE: return a >= b;
	case LM_FLOOR_DIVIDE:
	case LM_REMAINDER: return divmod_ref(op, a, b);
	default: return NAN;
	}
}

/* a // b and a % b (floor division, the remainder with b's sign): a in [-3, 3] (uint8: [0, 9]),
 * b away from zero with either sign, in the same broadcast shapes as every binary row. */
static void gen_divmod(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_binary(op, r, dt, l, c);
	bool neg = dt != LM_UINT8 && ot_int(r, 0, 1);
	for (int k = 0; k < 2; k++) {
		lm_tensor *t = c->in[k];
		int nd = lm_tensor_ndim(t);
		int64_t shape[LM_MAX_DIMS];
		for (int i = 0; i < nd; i++) shape[i] = lm_tensor_shape(t)[i];
		ot_layout tl = k == 0 ? l : (ot_layout)ot_int(r, 0, OT_LAYOUT_COUNT - 1);
		lm_tensor_release(t);
		c->in[k] = k == 0 ? ot_make(r, nd, shape, dt, tl, dt == LM_UINT8 ? 0 : -3, dt == LM_UINT8 ? 9 : 3)
		                  : ot_make(r, nd, shape, dt, tl, neg ? -3 : 0.5, neg ? -0.5 : 3);
	}
	ot_describe(c, op, dt, l);
}

/* Broadcast shape of the inputs, computed independently of lm_broadcast_shapes. */
static int bcast_shape(int n, lm_tensor *const *ts, int64_t *shape)
{
	int nd = 0;
	for (int k = 0; k < n; k++)
		if (lm_tensor_ndim(ts[k]) > nd) nd = lm_tensor_ndim(ts[k]);
	for (int i = 0; i < nd; i++) {
		shape[i] = 1;
		for (int k = 0; k < n; k++) {
			int tn = lm_tensor_ndim(ts[k]), j = i - (nd - tn);
			if (j >= 0 && lm_tensor_shape(ts[k])[j] != 1) shape[i] = lm_tensor_shape(ts[k])[j];
		}
	}
	return nd;
}

static lm_tensor *ref_binary(const ot_case *c)
{
	int op = c->op->fn;
	int64_t shape[LM_MAX_DIMS], idx[LM_MAX_DIMS];
	int nd = bcast_shape(2, c->in, shape);
	lm_dtype dt = lm_tensor_dtype(c->in[0]);
	lm_dtype rt = lm_binop_is_comparison((lm_binop)op)                 ? LM_UINT8
	              : (op == LM_DIV && !lm_dtype_is_float(dt))           ? LM_FLOAT32
	                                                                     : dt;
	lm_tensor *out = ot_new(nd, shape, rt);
	int64_t n = lm_tensor_numel(out);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		double a = ot_get_bcast(c->in[0], nd, idx), b = ot_get_bcast(c->in[1], nd, idx);
		if (dt == LM_FLOAT32 && op <= LM_POW) { /* float32 arithmetic rounds each operation */
			float fa = (float)a, fb = (float)b;
			double v = binary_ref_value(op, fa, fb);
			ot_set_linear(out, i, op == LM_POW ? v : (double)(float)v);
		} else {
			ot_set_linear(out, i, binary_ref_value(op, a, b));
		}
	}
	return out;
}

/* where(cond, a, b): cond uint8 0/1, all three broadcast. */
static void gen_where(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_binary(op, r, dt, l, c);
	c->in[2] = c->in[1];
	c->in[1] = c->in[0];
	int nd = lm_tensor_ndim(c->in[1]);
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < nd; i++) shape[i] = ot_int(r, 0, 2) == 0 ? 1 : lm_tensor_shape(c->in[1])[i];
	c->in[0] = ot_make(r, nd, shape, LM_UINT8, (ot_layout)ot_int(r, 0, 3), 0, 1);
	c->nin = 3;
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_where(const ot_case *c) { return lm_where(c->in[0], c->in[1], c->in[2]); }

static lm_tensor *ref_where(const ot_case *c)
{
	int64_t shape[LM_MAX_DIMS], idx[LM_MAX_DIMS];
	int nd = bcast_shape(3, c->in, shape);
	lm_tensor *out = ot_new(nd, shape, lm_tensor_dtype(c->in[1]));
	int64_t n = lm_tensor_numel(out);
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, nd, shape, idx);
		double cond = ot_get_bcast(c->in[0], nd, idx);
		ot_set_linear(out, i, ot_get_bcast(c->in[cond != 0 ? 1 : 2], nd, idx));
	}
	return out;
}

/* ---------------------------------------------------------------- reductions */

enum { R_MAXV = 200, R_MAXI, R_MINV, R_MINI };

static lm_tensor *run_reduce(const ot_case *c)
{
	int dim = (int)c->p[0];
	bool keep = c->p[1] != 0;
	int fn = c->op->fn;
	if (fn >= R_MAXV) {
		lm_tensor *v = NULL, *ix = NULL;
		if (dim == LM_DIM_ALL) return lm_amax(c->in[0], dim, keep); /* not reached: gen sets a dim */
		lm_status s = (fn <= R_MAXI ? lm_max_dim : lm_min_dim)(c->in[0], dim, keep, &v, &ix);
		if (s) return NULL;
		if (fn == R_MAXV || fn == R_MINV) {
			lm_tensor_release(ix);
			return v;
		}
		lm_tensor_release(v);
		return ix;
	}
	switch (fn) {
	case LM_VAR: return lm_var(c->in[0], dim, keep, (int)c->p[2]);
	case LM_STD: return lm_std(c->in[0], dim, keep, (int)c->p[2]);
	case LM_NORM: return lm_norm(c->in[0], c->p[2], dim, keep);
	default: return lm_reduce((lm_redop)fn, c->in[0], dim, keep);
	}
}

static void gen_reduce_params(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_reduce(op, r, dt, l, c);
	if (op->fn == LM_VAR || op->fn == LM_STD) c->p[2] = (double)ot_int(r, 0, 1);
	if (op->fn == LM_NORM) {
		static const double ps[] = {2, 1, INFINITY, 3, 0.5, 0};
		c->p[2] = ps[ot_int(r, 0, 5)];
	}
	/* max/min with indices need a dim, and (as all picking reductions) a non-empty one */
	int fn = op->fn;
	bool picks = fn >= R_MAXV || fn == LM_MAX || fn == LM_MIN || fn == LM_ARGMAX || fn == LM_ARGMIN;
	if (picks) {
		const lm_tensor *x = c->in[0];
		int nd = lm_tensor_ndim(x);
		if (fn >= R_MAXV && c->p[0] == LM_DIM_ALL) c->p[0] = nd ? (double)ot_int(r, 0, nd - 1) : 0;
		if (lm_tensor_numel(x) == 0) { /* replace with a non-empty input */
			int64_t shape[LM_MAX_DIMS];
			for (int i = 0; i < nd; i++) shape[i] = lm_tensor_shape(x)[i] ? lm_tensor_shape(x)[i] : 2;
			lm_tensor_release(c->in[0]);
			c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
		}
	}
	ot_describe(c, op, dt, l);
}

static lm_tensor *ref_reduce(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int fn = c->op->fn, nd = lm_tensor_ndim(x);
	const int64_t *xs = lm_tensor_shape(x);
	bool keep = c->p[1] != 0, all = c->p[0] == LM_DIM_ALL;
	int d = all ? -1 : ((int)c->p[0] < 0 ? (int)c->p[0] + (nd ? nd : 1) : (int)c->p[0]);
	if (nd == 0) d = -1, all = true;
	lm_dtype dt = lm_tensor_dtype(x), rt = dt;
	bool fl = lm_dtype_is_float(dt);
	switch (fn) {
	case LM_SUM:
	case LM_PROD: rt = fl ? dt : LM_INT64; break;
	case LM_MEAN:
	case LM_VAR:
	case LM_STD:
	case LM_NORM: rt = fl ? dt : LM_FLOAT32; break;
	case LM_ARGMAX:
	case LM_ARGMIN:
	case R_MAXI:
	case R_MINI: rt = LM_INT64; break;
	default: rt = dt;
	}
	int64_t oshape[LM_MAX_DIMS];
	int ond = 0;
	for (int i = 0; i < nd; i++) {
		if (all || i == d) {
			if (keep) oshape[ond++] = 1;
		} else {
			oshape[ond++] = xs[i];
		}
	}
	lm_tensor *out = ot_new(ond, oshape, rt);
	int64_t nout = lm_tensor_numel(out), total = lm_tensor_numel(x);
	int64_t idx[LM_MAX_DIMS];
	for (int64_t o = 0; o < nout; o++) {
		double s = 0, p = 1, best = NAN, sq = 0;
		int64_t bi = -1, cnt = 0;
		double vals[4096 + 64];
		/* walk every element of x and keep those that map to output o */
		for (int64_t i = 0; i < total; i++) {
			ot_unravel(i, nd, xs, idx);
			int64_t lin = 0, k = 0; /* k: position along the reduced dims */
			for (int j = 0; j < nd; j++) {
				if (all || j == d)
					k = k * xs[j] + idx[j];
				else
					lin = lin * xs[j] + idx[j];
			}
			if (lin != o) continue;
			double v = ot_get_linear(x, i);
			vals[cnt++] = v;
			s += v;
			p *= v;
			bool better = fn == LM_MAX || fn == LM_ARGMAX || fn == R_MAXV || fn == R_MAXI ? v > best
			                                                                             : v < best;
			if (bi < 0 || better) {
				best = v;
				bi = k;
			}
		}
		double mean = cnt ? s / (double)cnt : NAN, v = 0;
		for (int64_t i = 0; i < cnt; i++) sq += (vals[i] - mean) * (vals[i] - mean);
		switch (fn) {
		case LM_SUM: v = s; break;
		case LM_MEAN: v = mean; break;
		case LM_PROD: v = p; break;
		case LM_MAX:
		case LM_MIN:
		case R_MAXV:
		case R_MINV: v = best; break;
		case LM_ARGMAX:
		case LM_ARGMIN:
		case R_MAXI:
		case R_MINI: v = (double)bi; break;
		case LM_VAR:
		case LM_STD: {
			double dof = (double)cnt - c->p[2];
			v = dof > 0 ? sq / dof : NAN;
			if (fn == LM_STD) v = sqrt(v);
			break;
		}
		case LM_NORM: {
			double q = c->p[2], acc = 0;
			for (int64_t i = 0; i < cnt; i++) {
				double a = fabs(vals[i]);
				if (isinf(q))
					acc = a > acc ? a : acc;
				else if (q == 0)
					acc += a != 0;
				else
					acc += pow(a, q);
			}
			v = (isinf(q) || q == 0) ? acc : pow(acc, 1 / q);
			break;
		}
		}
		ot_set_linear(out, o, v);
	}
	return out;
}

/* ---------------------------------------------------------------- matmul */

static void gen_matmul(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	static const int64_t sizes[] = {1, 2, 3, 5, 7, 16, 17, 0};
	int64_t M = sizes[ot_int(r, 0, 6)], K = sizes[ot_int(r, 0, 7)], N = sizes[ot_int(r, 0, 6)];
	int64_t sa[LM_MAX_DIMS], sb[LM_MAX_DIMS];
	int na, nb;
	switch (ot_int(r, 0, 6)) {
	case 0: na = 1, sa[0] = K, nb = 1, sb[0] = K; break;           /* dot */
	case 1: na = 2, sa[0] = M, sa[1] = K, nb = 1, sb[0] = K; break; /* matrix-vector */
	case 2: na = 1, sa[0] = K, nb = 2, sb[0] = K, sb[1] = N; break; /* vector-matrix */
	case 3: na = 3, sa[0] = 3, sa[1] = M, sa[2] = K, nb = 2, sb[0] = K, sb[1] = N; break; /* linear */
	case 4: na = 3, sa[0] = 2, sa[1] = M, sa[2] = K, nb = 3, sb[0] = 1, sb[1] = K, sb[2] = N; break;
	case 5: na = 4, sa[0] = 2, sa[1] = 1, sa[2] = M, sa[3] = K, nb = 3, sb[0] = 3, sb[1] = K, sb[2] = N; break;
	default: na = 2, sa[0] = M, sa[1] = K, nb = 2, sb[0] = K, sb[1] = N; break;
	}
	c->nin = 2;
	c->in[0] = ot_make(r, na, sa, dt, l, op->lo, op->hi);
	c->in[1] = ot_make(r, nb, sb, dt, (ot_layout)ot_int(r, 0, 2), op->lo, op->hi);
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_matmul(const ot_case *c) { return lm_matmul(c->in[0], c->in[1]); }

static lm_tensor *ref_matmul(const ot_case *c)
{
	const lm_tensor *a = c->in[0], *b = c->in[1];
	int na = lm_tensor_ndim(a), nb = lm_tensor_ndim(b);
	const int64_t *as = lm_tensor_shape(a), *bs = lm_tensor_shape(b);
	int64_t M = na >= 2 ? as[na - 2] : 1, K = as[na - 1], N = nb >= 2 ? bs[nb - 1] : 1;
	int bna = na > 2 ? na - 2 : 0, bnb = nb > 2 ? nb - 2 : 0, bnd = bna > bnb ? bna : bnb;
	int64_t bshape[LM_MAX_DIMS], oshape[LM_MAX_DIMS];
	for (int i = 0; i < bnd; i++) {
		int ia = i - (bnd - bna), ib = i - (bnd - bnb);
		int64_t x = ia >= 0 ? as[ia] : 1, y = ib >= 0 ? bs[ib] : 1;
		bshape[i] = x == 1 ? y : x;
	}
	int ond = 0;
	for (int i = 0; i < bnd; i++) oshape[ond++] = bshape[i];
	if (na >= 2) oshape[ond++] = M;
	if (nb >= 2) oshape[ond++] = N;
	lm_tensor *out = ot_new(ond, oshape, lm_tensor_dtype(a));
	int64_t nbatch = 1;
	for (int i = 0; i < bnd; i++) nbatch *= bshape[i];
	int64_t bidx[LM_MAX_DIMS], ia[LM_MAX_DIMS], ib[LM_MAX_DIMS];
	for (int64_t t = 0; t < nbatch; t++) {
		ot_unravel(t, bnd, bshape, bidx);
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double s = 0;
				for (int64_t k = 0; k < K; k++) {
					for (int q = 0; q < bna; q++) ia[q] = as[q] == 1 ? 0 : bidx[q + bnd - bna];
					for (int q = 0; q < bnb; q++) ib[q] = bs[q] == 1 ? 0 : bidx[q + bnd - bnb];
					if (na >= 2) {
						ia[na - 2] = i;
						ia[na - 1] = k;
					} else {
						ia[0] = k;
					}
					if (nb >= 2) {
						ib[nb - 2] = k;
						ib[nb - 1] = j;
					} else {
						ib[0] = k;
					}
					double x, y;
					lm_tensor_get(a, ia, &x);
					lm_tensor_get(b, ib, &y);
					s += x * y;
				}
				ot_set_linear(out, (t * M + i) * N + j, s);
			}
	}
	return out;
}

/* ---------------------------------------------------------------- copies */

enum { C_CONTIGUOUS = 300, C_CLONE, C_TO };

static void gen_copy(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	ot_gen_unary(op, r, dt, l, c);
	c->p[0] = (double)ot_int(r, 0, LM_Q8_0 - 1); /* every dtype but the block types */
	ot_describe(c, op, dt, l);
}

static lm_tensor *run_copy(const ot_case *c)
{
	switch (c->op->fn) {
	case C_CONTIGUOUS: return lm_contiguous(c->in[0]);
	case C_CLONE: return lm_clone(c->in[0]);
	default: return lm_to_dtype(c->in[0], (lm_dtype)(int)c->p[0]);
	}
}

static lm_tensor *ref_copy(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	lm_dtype rt = c->op->fn == C_TO ? (lm_dtype)(int)c->p[0] : lm_tensor_dtype(x);
	lm_tensor *out = ot_new(lm_tensor_ndim(x), lm_tensor_shape(x), rt);
	int64_t n = lm_tensor_numel(x);
	for (int64_t i = 0; i < n; i++) {
		double v = ot_get_linear(x, i);
		if (!lm_dtype_is_float(rt)) v = trunc(v);
		ot_set_linear(out, i, v);
	}
	return out;
}

/* ---------------------------------------------------------------- views */

enum { V_TRANSPOSE = 400, V_PERMUTE, V_NARROW, V_SELECT, V_EXPAND, V_RESHAPE, V_UNSQUEEZE,
       V_SQUEEZE, V_FLATTEN };

static void gen_view(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = ot_shape(r, op->fn == V_UNSQUEEZE || op->fn == V_RESHAPE || op->fn == V_FLATTEN ? 0 : 1,
	                  4, shape);
	if (op->fn == V_SELECT || op->fn == V_NARROW)
		for (int i = 0; i < nd; i++)
			if (!shape[i]) shape[i] = 3;
	c->nin = 1;
	c->in[0] = ot_make(r, nd, shape, dt, l, op->lo, op->hi);
	int d = nd ? (int)ot_int(r, 0, nd - 1) : 0;
	c->p[0] = d;
	switch (op->fn) {
	case V_TRANSPOSE: c->p[1] = nd ? (double)ot_int(r, 0, nd - 1) : 0; break;
	case V_PERMUTE: c->p[1] = (double)ot_int(r, 0, 1000); break; /* a seed for the permutation */
	case V_NARROW:
		c->p[1] = (double)ot_int(r, 0, shape[d]);
		c->p[2] = (double)ot_int(r, 0, shape[d] - (int64_t)c->p[1]);
		break;
	case V_SELECT: c->p[1] = (double)ot_int(r, -shape[d], shape[d] - 1); break;
	case V_EXPAND: c->p[1] = (double)ot_int(r, 1, 4); break; /* new leading size */
	case V_UNSQUEEZE: c->p[0] = (double)ot_int(r, 0, nd); break;
	case V_SQUEEZE: c->p[0] = ot_int(r, 0, 2) == 0 ? LM_ALL_DIMS : d; break;
	case V_FLATTEN: c->p[1] = nd ? (double)ot_int(r, d, nd - 1) : 0; break;
	default: break;
	}
	ot_describe(c, op, dt, l);
}

static void perm_of(int nd, double seed, int *perm)
{
	ot_rng r = {(uint64_t)seed + 1};
	for (int i = 0; i < nd; i++) perm[i] = i;
	for (int i = nd - 1; i > 0; i--) {
		int j = (int)ot_int(&r, 0, i), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

static lm_tensor *run_view(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x), d = (int)c->p[0];
	switch (c->op->fn) {
	case V_TRANSPOSE: return lm_transpose(x, d, (int)c->p[1]);
	case V_PERMUTE: {
		int perm[LM_MAX_DIMS];
		perm_of(nd, c->p[1], perm);
		return lm_permute(x, perm);
	}
	case V_NARROW: return lm_narrow(x, d, (int64_t)c->p[1], (int64_t)c->p[2]);
	case V_SELECT: return lm_select(x, d, (int64_t)c->p[1]);
	case V_EXPAND: {
		int64_t shape[LM_MAX_DIMS];
		shape[0] = (int64_t)c->p[1];
		for (int i = 0; i < nd; i++) shape[i + 1] = lm_tensor_shape(x)[i] == 1 ? 3 : -1;
		return lm_expand(x, nd + 1, shape);
	}
	case V_RESHAPE: {
		int64_t n = lm_tensor_numel(x), shape[2] = {-1, 1};
		return lm_reshape(x, n ? 2 : 1, shape);
	}
	case V_UNSQUEEZE: return lm_unsqueeze(x, d);
	case V_SQUEEZE: return lm_squeeze(x, d);
	case V_FLATTEN: return lm_flatten(x, d, (int)c->p[1]);
	default: return NULL;
	}
}

/* The view's elements in C order map to x's elements: compute the source index of each. */
static lm_tensor *ref_view(const ot_case *c)
{
	const lm_tensor *x = c->in[0];
	int nd = lm_tensor_ndim(x), d = (int)c->p[0];
	const int64_t *xs = lm_tensor_shape(x);
	int64_t oshape[LM_MAX_DIMS];
	int ond = 0, fn = c->op->fn, perm[LM_MAX_DIMS];
	switch (fn) {
	case V_TRANSPOSE:
	case V_PERMUTE:
		for (int i = 0; i < nd; i++) perm[i] = i;
		if (fn == V_TRANSPOSE) {
			perm[d] = (int)c->p[1];
			perm[(int)c->p[1]] = d;
		} else {
			perm_of(nd, c->p[1], perm);
		}
		for (int i = 0; i < nd; i++) oshape[ond++] = xs[perm[i]];
		break;
	case V_NARROW:
		for (int i = 0; i < nd; i++) oshape[ond++] = i == d ? (int64_t)c->p[2] : xs[i];
		break;
	case V_SELECT:
		for (int i = 0; i < nd; i++)
			if (i != d) oshape[ond++] = xs[i];
		break;
	case V_EXPAND:
		oshape[ond++] = (int64_t)c->p[1];
		for (int i = 0; i < nd; i++) oshape[ond++] = xs[i] == 1 ? 3 : xs[i];
		break;
	default: { /* reshape-like: same elements in C order */
		lm_tensor *got = run_view(c);
		if (!got) return NULL;
		ond = lm_tensor_ndim(got);
		memcpy(oshape, lm_tensor_shape(got), sizeof(int64_t) * (size_t)ond);
		lm_tensor_release(got);
		lm_tensor *out = ot_new(ond, oshape, lm_tensor_dtype(x));
		int64_t n = lm_tensor_numel(x);
		for (int64_t i = 0; i < n; i++) ot_set_linear(out, i, ot_get_linear(x, i));
		/* the shape itself is checked independently for these */
		if (fn == V_RESHAPE && n && (ond != 2 || oshape[0] != n || oshape[1] != 1)) oshape[0] = -1;
		return out;
	}
	}
	lm_tensor *out = ot_new(ond, oshape, lm_tensor_dtype(x));
	int64_t n = lm_tensor_numel(out), oi[LM_MAX_DIMS], xi[LM_MAX_DIMS];
	for (int64_t i = 0; i < n; i++) {
		ot_unravel(i, ond, oshape, oi);
		switch (fn) {
		case V_TRANSPOSE:
		case V_PERMUTE:
			for (int k = 0; k < nd; k++) xi[perm[k]] = oi[k];
			break;
		case V_NARROW:
			for (int k = 0; k < nd; k++) xi[k] = oi[k] + (k == d ? (int64_t)c->p[1] : 0);
			break;
		case V_SELECT: {
			int64_t s = (int64_t)c->p[1];
			for (int k = 0, m = 0; k < nd; k++) xi[k] = k == d ? (s < 0 ? s + xs[d] : s) : oi[m++];
			break;
		}
		case V_EXPAND:
			for (int k = 0; k < nd; k++) xi[k] = xs[k] == 1 ? 0 : oi[k + 1];
			break;
		}
		double v;
		lm_tensor_get(x, xi, &v);
		ot_set_linear(out, i, v);
	}
	return out;
}

/* ---------------------------------------------------------------- the rows */

#define UN(name, fn, dts, diff, lo, hi) {name, 1, dts, diff, lo, hi, ot_gen_unary, run_unary, ref_unary, 0, 0, fn}
#define BIN(name, fn, dts, diff, lo, hi) {name, 2, dts, diff, lo, hi, ot_gen_binary, run_binary, ref_binary, 0, 0, fn}
#define RED(name, fn, dts, diff, lo, hi, rtol) {name, 1, dts, diff, lo, hi, gen_reduce_params, run_reduce, ref_reduce, rtol, 1e-5, fn}
#define VIEW(name, fn) {name, 1, OT_ALL, true, -2, 2, gen_view, run_view, ref_view, 0, 0, fn}

const ot_op ot_core_ops[] = {
	UN("exp", LM_EXP, OT_ALL, true, -3, 3),
	UN("log", LM_LOG, OT_ALL, true, 0.1, 4),
	UN("sqrt", LM_SQRT, OT_ALL, true, 0.1, 4),
	UN("abs", LM_ABS, OT_ALL, true, -2, 2),
	UN("neg", LM_NEG, OT_ALL, true, -2, 2),
	UN("sin", LM_SIN, OT_ALL, true, -3, 3),
	UN("cos", LM_COS, OT_ALL, true, -3, 3),
	UN("tanh", LM_TANH, OT_ALL, true, -3, 3),
	UN("sigmoid", LM_SIGMOID, OT_ALL, true, -4, 4),
	UN("relu", LM_RELU, OT_ALL, true, -2, 2),
	UN("sign", LM_SIGN, OT_ALL, false, -2, 2),
	UN("floor", LM_FLOOR, OT_ALL, false, -3, 3),
	UN("ceil", LM_CEIL, OT_ALL, false, -3, 3),
	UN("round", LM_ROUND, OT_ALL, false, -3, 3),
	UN("rsqrt", LM_RSQRT, OT_ALL, true, 0.2, 4),
	UN("reciprocal", LM_RECIPROCAL, OT_FLOATS, true, 0.2, 4),
	UN("square", LM_SQUARE, OT_ALL, true, -2, 2),
	{"clamp", 1, OT_ALL, true, -3, 3, gen_clamp, run_unary, ref_unary, 0, 0, F_CLAMP},
	{"pow_scalar", 1, OT_ALL, true, 0.5, 2, gen_pow_scalar, run_unary, ref_unary, 2e-5, 1e-6, F_POW_SCALAR},
	{"leaky_relu", 1, OT_FLOATS, true, -2, 2, gen_leaky, run_unary, ref_unary, 0, 0, F_LEAKY},
	BIN("add", LM_ADD, OT_ALL, true, -2, 2),
	BIN("sub", LM_SUB, OT_ALL, true, -2, 2),
	BIN("mul", LM_MUL, OT_ALL, true, -2, 2),
	BIN("div", LM_DIV, OT_ALL, true, 0.5, 2),
	BIN("pow", LM_POW, OT_ALL, true, 0.5, 2),
	BIN("maximum", LM_MAXIMUM, OT_ALL, true, -2, 2),
	BIN("minimum", LM_MINIMUM, OT_ALL, true, -2, 2),
	BIN("eq", LM_EQ, OT_ALL, false, -2, 2),
	BIN("ne", LM_NE, OT_ALL, false, -2, 2),
	BIN("lt", LM_LT, OT_ALL, false, -2, 2),
	BIN("le", LM_LE, OT_ALL, false, -2, 2),
	BIN("gt", LM_GT, OT_ALL, false, -2, 2),
	BIN("ge", LM_GE, OT_ALL, false, -2, 2),
	/* values here; gradients in tests/lua/test_autograd.lua, on points away from the steps (a
	 * random broadcast gradcheck crosses them: the finite differences jump) */
	{"floor_divide", 2, OT_ALL, false, -3, 3, gen_divmod, run_binary, ref_binary, 0, 0, LM_FLOOR_DIVIDE},
	{"remainder", 2, OT_ALL, false, -3, 3, gen_divmod, run_binary, ref_binary, 0, 0, LM_REMAINDER},
	{"where", 3, OT_ALL, true, -2, 2, gen_where, run_where, ref_where, 0, 0, 0},
	RED("sum", LM_SUM, OT_ALL, true, -2, 2, 1e-5),
	RED("mean", LM_MEAN, OT_ALL, true, -2, 2, 1e-5),
	RED("prod", LM_PROD, OT_ALL, true, -1.3, 1.3, 1e-5),
	RED("amax", LM_MAX, OT_ALL, true, -2, 2, 0),
	RED("amin", LM_MIN, OT_ALL, true, -2, 2, 0),
	RED("argmax", LM_ARGMAX, OT_ALL, false, -2, 2, 0),
	RED("argmin", LM_ARGMIN, OT_ALL, false, -2, 2, 0),
	RED("var", LM_VAR, OT_ALL, true, -2, 2, 1e-4),
	RED("std", LM_STD, OT_ALL, true, -2, 2, 1e-4),
	RED("norm", LM_NORM, OT_ALL, true, -2, 2, 1e-4),
	RED("max_dim.values", R_MAXV, OT_ALL, true, -2, 2, 0),
	RED("max_dim.indices", R_MAXI, OT_ALL, false, -2, 2, 0),
	RED("min_dim.values", R_MINV, OT_ALL, true, -2, 2, 0),
	RED("min_dim.indices", R_MINI, OT_ALL, false, -2, 2, 0),
	{"matmul", 2, OT_ALL, true, -2, 2, gen_matmul, run_matmul, ref_matmul, 1e-4, 1e-4, 0},
	{"contiguous", 1, OT_ALL, true, -3, 3, gen_copy, run_copy, ref_copy, 0, 0, C_CONTIGUOUS},
	{"clone", 1, OT_ALL, true, -3, 3, gen_copy, run_copy, ref_copy, 0, 0, C_CLONE},
	{"to_dtype", 1, OT_ALL, true, -3, 3, gen_copy, run_copy, ref_copy, 0, 0, C_TO},
	VIEW("transpose", V_TRANSPOSE),
	VIEW("permute", V_PERMUTE),
	VIEW("narrow", V_NARROW),
	VIEW("select", V_SELECT),
	VIEW("expand", V_EXPAND),
	VIEW("reshape", V_RESHAPE),
	VIEW("unsqueeze", V_UNSQUEEZE),
	VIEW("squeeze", V_SQUEEZE),
	VIEW("flatten", V_FLATTEN),
};
const int ot_core_count = (int)(sizeof ot_core_ops / sizeof ot_core_ops[0]);
