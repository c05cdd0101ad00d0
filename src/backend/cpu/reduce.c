/*
 * reduce.c — CPU reductions over the middle axis of a contiguous (outer, R, inner) view.
 *
 * Floats accumulate in double and integers in 64 bits, so float32 sums of millions of elements
 * stay accurate (a dense float32 line adds short float blocks first, see dense_sum_float); the
 * dense loops keep independent lanes, which the compiler vectorises without reassociating. Layouts:
 *   inner == 1: each output reduces one dense line of R elements (row sums, all-reductions);
 *               a single huge line is split across threads and the partial results combined.
 *   inner > 1 : sums accumulate whole rows of `inner` elements (vectorised across the row);
 *               other ops walk strided lines.
 * Read next: ../../ops/reduce.c (shapes, dtypes, autograd).
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/cpu.h"

typedef struct acc {
	double s;      /* sum, or sum of |x|^p, or running mean (var) */
	double m2;     /* var: sum of squared deviations */
	double best;   /* max/min */
	int64_t bi;    /* arg index */
	uint64_t is;   /* integer sum / product */
	int64_t n;     /* elements seen */
	bool nan;      /* max/min saw a NaN */
} acc;

static void acc_init(lm_redop op, acc *a)
{
	memset(a, 0, sizeof *a);
	a->bi = -1;
	if (op == LM_PROD) {
		a->s = 1;
		a->is = 1;
	}
}

/* ---------------------------------------------------------------- one line */

/* Dense sum of n values of T into a double, 16 lanes. */
#define DENSE_SUM(T)                                                                                \
	static inline double dense_sum_##T(const T *x, int64_t n)                                              \
	{                                                                                           \
		double l[16] = {0};                                                                     \
		int64_t i = 0;                                                                          \
		for (; i + 16 <= n; i += 16)                                                            \
			for (int k = 0; k < 16; k++) l[k] += (double)x[i + k];                              \
		double s = 0;                                                                           \
		for (; i < n; i++) s += (double)x[i];                                                   \
		for (int k = 0; k < 16; k++) s += l[k];                                                 \
		return s;                                                                               \
	}
DENSE_SUM(double)

/*
 * Dense float32 sum: converting every element to double made the loop compute-bound (8.6 ms for
 * 16M elements against 4.9 ms to stream them here). Instead 32 float lanes each add 64 elements
 * of a 2048-element block (a rounding error near 64 ulp at worst, a few ulp in practice), and the
 * block's lanes go into 32 double accumulators: double accuracy across blocks, float speed.
 */
#define FBLOCK 2048
static inline double dense_sum_float(const float *x, int64_t n)
{
	double part[32] = {0};
	int64_t i = 0;
	for (; i + FBLOCK <= n; i += FBLOCK) {
		float l[32] = {0};
		for (int64_t j = 0; j < FBLOCK; j += 32)
			for (int k = 0; k < 32; k++) l[k] += x[i + j + k];
		for (int k = 0; k < 32; k++) part[k] += (double)l[k];
	}
	double s = 0;
	for (; i < n; i++) s += (double)x[i];
	for (int k = 0; k < 32; k++) s += part[k];
	return s;
}
DENSE_SUM(int32_t)
DENSE_SUM(int64_t)
DENSE_SUM(uint8_t)

#define DENSE_ISUM(T)                                                                               \
	static inline uint64_t dense_isum_##T(const T *x, int64_t n)                                           \
	{                                                                                           \
		uint64_t l[8] = {0};                                                                    \
		int64_t i = 0;                                                                          \
		for (; i + 8 <= n; i += 8)                                                              \
			for (int k = 0; k < 8; k++) l[k] += (uint64_t)(int64_t)x[i + k];                    \
		uint64_t s = 0;                                                                         \
		for (; i < n; i++) s += (uint64_t)(int64_t)x[i];                                        \
		for (int k = 0; k < 8; k++) s += l[k];                                                  \
		return s;                                                                               \
	}
DENSE_ISUM(int32_t)
DENSE_ISUM(int64_t)
DENSE_ISUM(uint8_t)
DENSE_ISUM(float)
DENSE_ISUM(double)

/*
 * Folds line x[0], x[st], ..., x[(R-1)*st] into a, with element indices starting at i0.
 * VAR uses Welford's update (merged across lines with Chan's formula in acc_merge).
 */
#define LINE(T, ISFLOAT)                                                                            \
	static void line_##T(lm_redop op, const T *x, int64_t R, int64_t st, int64_t i0, double p,      \
	                     acc *a)                                                                \
	{                                                                                           \
		switch (op) {                                                                           \
		case LM_SUM:                                                                            \
		case LM_MEAN:                                                                           \
			if (ISFLOAT) {                                                                      \
				if (st == 1)                                                                    \
					a->s += dense_sum_##T(x, R);                                                \
				else                                                                            \
					for (int64_t k = 0; k < R; k++) a->s += (double)x[k * st];                  \
			} else {                                                                            \
				if (st == 1)                                                                    \
					a->is += dense_isum_##T(x, R);                                              \
				else                                                                            \
					for (int64_t k = 0; k < R; k++) a->is += (uint64_t)(int64_t)x[k * st];      \
			}                                                                                   \
			break;                                                                              \
		case LM_PROD:                                                                           \
			for (int64_t k = 0; k < R; k++) {                                                   \
				if (ISFLOAT)                                                                    \
					a->s *= (double)x[k * st];                                                  \
				else                                                                            \
					a->is *= (uint64_t)(int64_t)x[k * st];                                      \
			}                                                                                   \
			break;                                                                              \
		case LM_MAX:                                                                            \
		case LM_ARGMAX:                                                                         \
			for (int64_t k = 0; k < R && !a->nan; k++) {                                        \
				double v = (double)x[k * st];                                                   \
				if (v != v) {                                                                   \
					a->nan = true;                                                              \
					a->best = v;                                                                \
					a->bi = i0 + k;                                                             \
				} else if (a->bi < 0 || v > a->best) {                                          \
					a->best = v;                                                                \
					a->bi = i0 + k;                                                             \
				}                                                                               \
			}                                                                                   \
			break;                                                                              \
		case LM_MIN:                                                                            \
		case LM_ARGMIN:                                                                         \
			for (int64_t k = 0; k < R && !a->nan; k++) {                                        \
				double v = (double)x[k * st];                                                   \
				if (v != v) {                                                                   \
					a->nan = true;                                                              \
					a->best = v;                                                                \
					a->bi = i0 + k;                                                             \
				} else if (a->bi < 0 || v < a->best) {                                          \
					a->best = v;                                                                \
					a->bi = i0 + k;                                                             \
				}                                                                               \
			}                                                                                   \
			break;                                                                              \
		case LM_VAR:                                                                            \
		case LM_STD:                                                                            \
			for (int64_t k = 0; k < R; k++) {                                                   \
				double v = (double)x[k * st], d = v - a->s;                                     \
				a->n++;                                                                         \
				a->s += d / (double)a->n;                                                       \
				a->m2 += d * (v - a->s);                                                        \
			}                                                                                   \
			break;                                                                              \
		case LM_NORM:                                                                           \
			if (p == 2) {                                                                       \
				for (int64_t k = 0; k < R; k++) {                                               \
					double v = (double)x[k * st];                                               \
					a->s += v * v;                                                              \
				}                                                                               \
			} else if (p == 1) {                                                                \
				for (int64_t k = 0; k < R; k++) a->s += fabs((double)x[k * st]);               \
			} else if (isinf(p)) {                                                              \
				for (int64_t k = 0; k < R; k++) {                                               \
					double v = fabs((double)x[k * st]);                                         \
					if (v != v || v > a->s) a->s = v != v ? v : (a->s != a->s ? a->s : v);     \
				}                                                                               \
			} else if (p == 0) {                                                                \
				for (int64_t k = 0; k < R; k++) a->s += x[k * st] != 0;                         \
			} else {                                                                            \
				for (int64_t k = 0; k < R; k++) a->s += pow(fabs((double)x[k * st]), p);        \
			}                                                                                   \
			break;                                                                              \
		default: LM_ASSERT(0 && "reduce op");                                                   \
		}                                                                                       \
		if (op != LM_VAR && op != LM_STD) a->n += R;                                            \
	}

LINE(float, 1)
LINE(double, 1)
LINE(int32_t, 0)
LINE(int64_t, 0)
LINE(uint8_t, 0)

static void line(lm_redop op, lm_dtype dt, const char *x, int64_t R, int64_t st, int64_t i0,
                 double p, acc *a)
{
	switch (dt) {
	case LM_FLOAT32: line_float(op, (const float *)x, R, st, i0, p, a); break;
	case LM_FLOAT64: line_double(op, (const double *)x, R, st, i0, p, a); break;
	case LM_INT32: line_int32_t(op, (const int32_t *)x, R, st, i0, p, a); break;
	case LM_INT64: line_int64_t(op, (const int64_t *)x, R, st, i0, p, a); break;
	case LM_UINT8: line_uint8_t(op, (const uint8_t *)x, R, st, i0, p, a); break;
	default: LM_ASSERT(0 && "dtype");
	}
}

/* Combines partial b (a later range of the same line) into a. */
static void acc_merge(lm_redop op, acc *a, const acc *b, double p)
{
	switch (op) {
	case LM_SUM:
	case LM_MEAN:
		a->s += b->s;
		a->is += b->is;
		break;
	case LM_PROD:
		a->s *= b->s;
		a->is *= b->is;
		break;
	case LM_MAX:
	case LM_ARGMAX:
	case LM_MIN:
	case LM_ARGMIN: {
		if (a->nan || b->bi < 0) break;
		bool better = op == LM_MAX || op == LM_ARGMAX ? b->best > a->best : b->best < a->best;
		if (b->nan || a->bi < 0 || better) {
			a->best = b->best;
			a->bi = b->bi;
			a->nan = b->nan;
		}
		break;
	}
	case LM_VAR:
	case LM_STD: {
		if (!b->n) break;
		if (!a->n) {
			*a = *b;
			break;
		}
		double n = (double)(a->n + b->n), d = b->s - a->s;
		a->m2 += b->m2 + d * d * (double)a->n * (double)b->n / n;
		a->s += d * (double)b->n / n;
		a->n += b->n;
		return;
	}
	case LM_NORM:
		if (isinf(p)) {
			if (b->s != b->s || b->s > a->s) a->s = b->s;
		} else {
			a->s += b->s;
		}
		break;
	default: break;
	}
	if (op != LM_VAR && op != LM_STD) a->n += b->n;
}

/* Writes the final value of a into out[i] (and idx[i]). */
static void acc_store(lm_redop op, const acc *a, lm_dtype xdt, double p, lm_tensor *out,
                      lm_tensor *idx, int64_t i)
{
	bool fl = lm_dtype_is_float(xdt);
	double v = 0;
	switch (op) {
	case LM_SUM: v = fl ? a->s : (double)(int64_t)a->is; break;
	case LM_MEAN: v = a->n ? (fl ? a->s : (double)(int64_t)a->is) / (double)a->n : NAN; break;
	case LM_PROD: v = fl ? a->s : (double)(int64_t)a->is; break;
	case LM_MAX:
	case LM_MIN:
	case LM_ARGMAX:
	case LM_ARGMIN: v = a->best; break;
	case LM_VAR:
	case LM_STD: {
		double dof = (double)a->n - p;
		v = dof > 0 ? a->m2 / dof : NAN;
		if (op == LM_STD) v = sqrt(v);
		break;
	}
	case LM_NORM:
		if (isinf(p) || p == 0)
			v = a->s;
		else if (p == 1)
			v = a->s;
		else if (p == 2)
			v = sqrt(a->s);
		else
			v = pow(a->s, 1.0 / p);
		break;
	default: break;
	}
	char *o = lmi_data(out) + i * (int64_t)lm_dtype_size(out->dtype);
	if (op == LM_ARGMAX || op == LM_ARGMIN) {
		((int64_t *)lmi_data(out))[i] = a->bi;
		return;
	}
	if (out->dtype == LM_INT64 && !fl && (op == LM_SUM || op == LM_PROD))
		*(int64_t *)o = (int64_t)a->is; /* exact, beyond 2^53 */
	else if (out->dtype == xdt && !fl && (op == LM_MAX || op == LM_MIN))
		lmi_store(o, out->dtype, a->best);
	else
		lmi_store(o, out->dtype, v);
	if (idx) ((int64_t *)lmi_data(idx))[i] = a->bi;
}

/* ---------------------------------------------------------------- drivers */

/* Sums with inner > 1: whole rows accumulate into a double buffer, vectorised along the row. */
#define ROWS_SUM(T)                                                                                 \
	static void rows_sum_##T(const T *x, int64_t R, int64_t inner, int64_t j0, int64_t jn,         \
	                         double *buf)                                                          \
	{                                                                                           \
		for (int64_t j = 0; j < jn; j++) buf[j] = 0;                                            \
		for (int64_t k = 0; k < R; k++) {                                                       \
			const T *row = x + k * inner + j0;                                                  \
			_Pragma("omp simd") for (int64_t j = 0; j < jn; j++) buf[j] += (double)row[j];      \
		}                                                                                       \
	}
ROWS_SUM(float)
ROWS_SUM(double)

#define JBLOCK 512

static lm_status reduce_rows_sum(lm_redop op, const lm_tensor *x, int64_t outer, int64_t R,
                                 int64_t inner, lm_tensor *out)
{
	int64_t nb = (inner + JBLOCK - 1) / JBLOCK, items = outer * nb;
	const char *base = lmi_data(x);
	size_t es = lm_dtype_size(x->dtype);
	int stop = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(lmi_num_threads()) \
	if (items > 1 && outer * R * inner > LMI_PARALLEL_GRAIN)
	for (int64_t w = 0; w < items; w++) {
		if (__atomic_load_n(&stop, __ATOMIC_RELAXED)) continue;
		if (lmi_check_interrupt()) {
			__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
			continue;
		}
		int64_t o = w / nb, j0 = (w % nb) * JBLOCK, jn = inner - j0 < JBLOCK ? inner - j0 : JBLOCK;
		double buf[JBLOCK];
		const char *xo = base + (size_t)(o * R * inner) * es;
		if (x->dtype == LM_FLOAT32)
			rows_sum_float((const float *)xo, R, inner, j0, jn, buf);
		else
			rows_sum_double((const double *)xo, R, inner, j0, jn, buf);
		for (int64_t j = 0; j < jn; j++) {
			double v = op == LM_MEAN ? (R ? buf[j] / (double)R : NAN) : buf[j];
			int64_t i = o * inner + j0 + j;
			if (out->dtype == LM_FLOAT32)
				((float *)lmi_data(out))[i] = (float)v;
			else
				((double *)lmi_data(out))[i] = v;
		}
	}
	return stop ? lmi_fail(LM_ERR_INTERRUPTED, "interrupted") : LM_OK;
}

/* One long line split across threads; partial accumulators merged in order. */
static lm_status reduce_split_line(lm_redop op, const lm_tensor *x, int64_t R, double p,
                                   lm_tensor *out, lm_tensor *idx)
{
	enum { MAXT = 256 };
	int nt = lmi_num_threads();
	if (nt > MAXT) nt = MAXT;
	acc part[MAXT];
	const char *base = lmi_data(x);
	size_t es = lm_dtype_size(x->dtype);
	int stop = 0, used = 1;
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num_safe();
		int nth = nt;
#ifdef _OPENMP
		nth = omp_get_num_threads();
#endif
		if (t < nth) {
			int64_t lo = R * t / nth, hi = R * (t + 1) / nth;
			acc_init(op, &part[t]);
			/* chunks, so an interrupt is seen within a few milliseconds */
			for (int64_t c = lo; c < hi; c += 1 << 20) {
				if (lmi_check_interrupt()) {
					__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
					break;
				}
				int64_t m = hi - c < (1 << 20) ? hi - c : (1 << 20);
				acc tmp;
				acc_init(op, &tmp);
				line(op, x->dtype, base + (size_t)c * es, m, 1, c, p, &tmp);
				acc_merge(op, &part[t], &tmp, p);
			}
		}
#pragma omp single
		used = nth;
	}
	if (stop) return lmi_fail(LM_ERR_INTERRUPTED, "interrupted");
	acc a;
	acc_init(op, &a);
	for (int t = 0; t < used; t++) acc_merge(op, &a, &part[t], p);
	acc_store(op, &a, x->dtype, p, out, idx, 0);
	return LM_OK;
}

lm_status lmi_cpu_reduce(lm_redop op, const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                         lm_tensor *out, lm_tensor *idx, double p)
{
	int64_t nout = outer * inner;
	if (nout == 0) return LM_OK;
	if ((op == LM_SUM || op == LM_MEAN) && inner > 1 && lm_dtype_is_float(x->dtype))
		return reduce_rows_sum(op, x, outer, R, inner, out);
	if (nout == 1 && R >= 4 * LMI_PARALLEL_GRAIN && lmi_num_threads() > 1)
		return reduce_split_line(op, x, R, p, out, idx);
	const char *base = lmi_data(x);
	size_t es = lm_dtype_size(x->dtype);
	int stop = 0;
#pragma omp parallel for schedule(static) num_threads(lmi_num_threads()) \
	if (nout > 1 && nout * R > LMI_PARALLEL_GRAIN)
	for (int64_t i = 0; i < nout; i++) {
		if (__atomic_load_n(&stop, __ATOMIC_RELAXED)) continue;
		if ((i & 1023) == 0 && lmi_check_interrupt()) {
			__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
			continue;
		}
		int64_t o = i / inner, j = i % inner;
		acc a;
		acc_init(op, &a);
		line(op, x->dtype, base + (size_t)(o * R * inner + j) * es, R, inner, 0, p, &a);
		acc_store(op, &a, x->dtype, p, out, idx, i);
	}
	return stop ? lmi_fail(LM_ERR_INTERRUPTED, "interrupted") : LM_OK;
}
