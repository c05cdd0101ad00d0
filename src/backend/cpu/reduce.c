/*
 * reduce.c — CPU reductions of a tensor of any strides over any set of its dims.
 *
 * Floats accumulate in double and integers in 64 bits, so float32 sums of millions of elements
 * stay accurate (dense float32 lines add short float runs first, reduce_loops.h); the dense loops
 * keep independent lanes, which vectorise without reassociating, from the SIMD table of the path
 * in use (simd.h). The geometry (geom_build) drops size-1 dims, turns stride-0 reduced dims into a
 * multiplication, orders and merges the reduced dims so the innermost loop walks the closest-
 * packed memory, then picks a layout:
 *   lines: the innermost reduced dim is the closest-packed (row sums, all-reductions, x:t():sum(1)):
 *          each output folds its lines; a few outputs with long lines are split across threads
 *          and the partial results merged in order;
 *   rows : a kept dim is closer-packed (float sums over an outer dim, sums of a transposed
 *          matrix's long dim): blocks of that dim accumulate every reduced position's row piece
 *          (vectorised along the row; a short dense kept dim folds lanes instead).
 * Views are reduced where they lie: no contiguous copy (a 4096^2 transpose cost 73 ms that way).
 * Read next: ../../ops/reduce.c (shapes, dtypes, autograd).
 */
#include <math.h>
#include <string.h>

#include "backend/cpu/simd.h"
#include "backend/scalar_math.h"

typedef struct acc {
	double s;      /* sum, or sum of |x|^p, or running mean (var) */
	double m2;     /* var: sum of squared deviations */
	double best;   /* max/min */
	int64_t bi;    /* arg index */
	uint64_t is;   /* integer sum / product (wrapping, as int64 arithmetic does) */
	int64_t n;     /* elements seen */
	bool nan;      /* max/min saw a NaN */
	/* Integers exactly, past 2^53 where a double rounds them: */
	__int128 wide;        /* mean: the sum, without wrapping */
	long double lm, lm2;  /* var: running mean and squared deviations from ipivot (an int64
	                         difference is exact in long double's 64-bit mantissa, and values near
	                         the pivot keep the mean's fraction: 2^53 + 1/3) */
	int64_t ipivot;       /* var: the first element seen */
	int64_t ibest;        /* max/min */
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

/* Dense sums of floats: the lanes of the SIMD path in use (reduce_loops.h). */
static inline double sum_parts(const double *part)
{
	double s = 0;
	for (int k = 0; k < 32; k++) s += part[k];
	return s;
}
static inline double dense_sum_float(const float *x, int64_t n)
{
	double part[32] = {0};
	lmi_simd()->lanes_f32(x, n, 32, part);
	return sum_parts(part);
}
static inline double dense_sum_double(const double *x, int64_t n)
{
	double part[32] = {0};
	lmi_simd()->lanes_f64(x, n, 32, part);
	return sum_parts(part);
}

/* Integer lines never take the float sum (the LINE macro's dead branch needs a name). */
#define DENSE_SUM(T)                                                                                \
	static inline double dense_sum_##T(const T *x, int64_t n)                                   \
	{                                                                                           \
		double s = 0;                                                                           \
		for (int64_t i = 0; i < n; i++) s += (double)x[i];                                      \
		return s;                                                                               \
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

/* max (BETTER >) or min (<) of a line into a: integers compared as integers (2^53 + 1 > 2^53),
 * floats with the first NaN winning, else the first of equal values. */
#define BEST_OF_LINE(ISFLOAT, BETTER)                                                               \
	do {                                                                                        \
		if (!ISFLOAT) {                                                                         \
			for (int64_t k = 0; k < R; k++) {                                                   \
				int64_t v = (int64_t)x[k * st];                                                 \
				if (a->bi < 0 || v BETTER a->ibest) a->ibest = v, a->bi = i0 + k;               \
			}                                                                                   \
			a->best = (double)a->ibest;                                                         \
			break;                                                                              \
		}                                                                                       \
		for (int64_t k = 0; k < R && !a->nan; k++) {                                            \
			double v = (double)x[k * st];                                                       \
			if (v != v) {                                                                       \
				a->nan = true;                                                                  \
				a->best = v;                                                                    \
				a->bi = i0 + k;                                                                 \
			} else if (a->bi < 0 || v BETTER a->best) {                                         \
				a->best = v;                                                                    \
				a->bi = i0 + k;                                                                 \
			}                                                                                   \
		}                                                                                       \
	} while (0)

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
			} else if (op == LM_MEAN) { /* exact: an int64 mean must not wrap */               \
				for (int64_t k = 0; k < R; k++) a->wide += (int64_t)x[k * st];                  \
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
		case LM_ARGMAX: BEST_OF_LINE(ISFLOAT, >); break;                                     \
		case LM_MIN:                                                                            \
		case LM_ARGMIN: BEST_OF_LINE(ISFLOAT, <); break;                                     \
		case LM_VAR:                                                                            \
		case LM_STD:                                                                            \
			if (!ISFLOAT) { /* in long double, from a pivot: every int64 exactly */              \
				for (int64_t k = 0; k < R; k++) {                                               \
					int64_t xi = (int64_t)x[k * st];                                            \
					if (a->n == 0) a->ipivot = xi;                                              \
					long double v = (long double)((__int128)xi - a->ipivot), d = v - a->lm;    \
					a->n++;                                                                     \
					a->lm += d / (long double)a->n;                                             \
					a->lm2 += d * (v - a->lm);                                                  \
				}                                                                               \
				break;                                                                          \
			}                                                                                   \
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

/* Combines partial b (a later range of the same line) into a; integer: x's dtype is one. */
static void acc_merge(lm_redop op, acc *a, const acc *b, double p, bool integer)
{
	switch (op) {
	case LM_SUM:
	case LM_MEAN:
		a->s += b->s;
		a->is += b->is;
		a->wide += b->wide;
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
		bool max = op == LM_MAX || op == LM_ARGMAX;
		bool better = max ? b->best > a->best : b->best < a->best;
		if (integer) better = max ? b->ibest > a->ibest : b->ibest < a->ibest;
		if (b->nan || a->bi < 0 || better) {
			a->best = b->best;
			a->ibest = b->ibest;
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
		long double ln = (long double)(a->n + b->n),
		            ld = (long double)((__int128)b->ipivot - a->ipivot) + (b->lm - a->lm);
		a->lm2 += b->lm2 + ld * ld * (long double)a->n * (long double)b->n / ln;
		a->lm += ld * (long double)b->n / ln;
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
	bool fl = lmi_is_float(xdt);
	double v = 0;
	switch (op) {
	case LM_SUM: v = fl ? a->s : (double)(int64_t)a->is; break;
	case LM_MEAN: v = a->n ? (fl ? a->s / (double)a->n : (double)((long double)a->wide / (long double)a->n)) : NAN; break;
	case LM_PROD: v = fl ? a->s : (double)(int64_t)a->is; break;
	case LM_MAX:
	case LM_MIN:
	case LM_ARGMAX:
	case LM_ARGMIN: v = a->best; break;
	case LM_VAR:
	case LM_STD: {
		double dof = (double)a->n - p;
		v = dof > 0 ? (fl ? a->m2 / dof : (double)(a->lm2 / (long double)dof)) : NAN;
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
	char *o = lmi_data(out) + i * (int64_t)lmi_elem_size(out->dtype);
	if (op == LM_ARGMAX || op == LM_ARGMIN) {
		((int64_t *)lmi_data(out))[i] = a->bi;
		return;
	}
	if (out->dtype == LM_INT64 && !fl && (op == LM_SUM || op == LM_PROD))
		*(int64_t *)o = (int64_t)a->is; /* exact, beyond 2^53 */
	else if (out->dtype == LM_INT64 && !fl && (op == LM_MAX || op == LM_MIN))
		*(int64_t *)o = a->ibest; /* exact, beyond 2^53 */
	else if (out->dtype == xdt && !fl && (op == LM_MAX || op == LM_MIN))
		lmi_store(o, out->dtype, a->best);
	else
		lmi_store(o, out->dtype, v);
	if (idx) ((int64_t *)lmi_data(idx))[i] = a->bi;
}

/* ---------------------------------------------------------------- repeated elements */

/* b ** e modulo 2^64 (scalar_math.h's, computed in uint64 there) */
static uint64_t upow(uint64_t b, int64_t e) { return (uint64_t)lmi_ipow_i64((int64_t)b, e); }

/* a saw each of its elements once; makes it as if each had been seen m times. A stride-0 reduced
 * dim (expand) is a multiplication, not a loop: sum(ones(1):expand(2^31)) took 21 s as a loop. */
static void acc_repeat(lm_redop op, acc *a, int64_t m, double p)
{
	if (m == 1) return;
	switch (op) {
	case LM_SUM:
	case LM_MEAN:
		a->s *= (double)m;
		a->is *= (uint64_t)m;
		a->wide *= m;
		break;
	case LM_PROD:
		a->s = pow(a->s, (double)m);
		a->is = upow(a->is, m);
		break;
	case LM_VAR:
	case LM_STD: /* same mean, m copies of each deviation */
		a->m2 *= (double)m;
		a->lm2 *= (long double)m;
		break;
	case LM_NORM:
		if (!isinf(p)) a->s *= (double)m;
		break;
	default: break; /* max/min: the same values */
	}
	a->n *= m;
}

/* ---------------------------------------------------------------- geometry */

/*
 * A reduction of x over some of its dims, reorganised for the loops: size-1 dims dropped, for
 * ops whose result does not depend on the order (all but arg* and max/min with indices) stride-0
 * reduced dims folded into mult and negative reduced strides turned positive, reduced dims
 * ordered by decreasing stride, and neighbouring dims merged where the strides allow. The last
 * reduced dim is then the "line" the inner loops walk; for x:t():sum(1) it is a dense row of x.
 */
typedef struct rdim {
	int64_t n, st; /* size, stride in x (elements) */
} rdim;

typedef struct rgeom {
	int nk, nr;
	rdim k[LM_MAX_DIMS];      /* kept dims, in order */
	int64_t kos[LM_MAX_DIMS]; /* their strides in out (elements) */
	rdim r[LM_MAX_DIMS];      /* reduced dims, the line last; at least one (a {1, 0} if none) */
	int64_t base;             /* element offset from lmi_data(x) */
	int64_t mult;             /* times each element counts */
	int64_t nout, rcount;     /* outputs; elements per output, without mult */
	bool empty;               /* a reduced dim of size 0 */
} rgeom;

static int64_t iabs64(int64_t v) { return v < 0 ? -v : v; }

static int merge_dims(rdim *d, int64_t *os, int n)
{
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m > 0 && d[m - 1].st == d[i].st * d[i].n && (!os || os[m - 1] == os[i] * d[i].n)) {
			d[m - 1] = (rdim){d[m - 1].n * d[i].n, d[i].st};
			if (os) os[m - 1] = os[i];
			continue;
		}
		if (os) os[m] = os[i];
		d[m++] = d[i];
	}
	return m;
}

static void geom_build(int nd, const int64_t *shape, const int64_t *stride, uint32_t mask,
                       bool free_order, rgeom *g)
{
	memset(g, 0, sizeof *g);
	g->mult = g->nout = g->rcount = 1;
	int64_t os[LM_MAX_DIMS] = {0}, o = 1;
	for (int d = nd - 1; d >= 0; d--)
		if (!(mask >> d & 1)) {
			os[d] = o;
			o *= shape[d];
		}
	for (int d = 0; d < nd; d++) {
		int64_t n = shape[d], st = stride[d];
		if (mask >> d & 1) {
			if (n == 0) g->empty = true;
			if (n <= 1) continue;
			if (free_order && st == 0) {
				g->mult *= n;
				continue;
			}
			if (free_order && st < 0) { /* walk it upwards: the order does not matter */
				g->base += (n - 1) * st;
				st = -st;
			}
			g->r[g->nr++] = (rdim){n, st};
			g->rcount *= n;
		} else {
			g->nout *= n;
			if (n == 1) continue;
			g->kos[g->nk] = os[d];
			g->k[g->nk++] = (rdim){n, st};
		}
	}
	if (g->empty) g->rcount = 0;
	if (free_order) /* stable insertion sort by decreasing |stride| */
		for (int i = 1; i < g->nr; i++)
			for (int j = i; j > 0 && iabs64(g->r[j - 1].st) < iabs64(g->r[j].st); j--) {
				rdim t = g->r[j];
				g->r[j] = g->r[j - 1];
				g->r[j - 1] = t;
			}
	g->nr = merge_dims(g->r, NULL, g->nr);
	g->nk = merge_dims(g->k, g->kos, g->nk);
	if (g->nr == 0) g->r[g->nr++] = (rdim){1, 0};
}

/* An odometer over dims d[0..n) in C order: off is the element offset of the current position. */
typedef struct odo {
	const rdim *d;
	int n;
	int64_t i[LM_MAX_DIMS];
	int64_t off;
} odo;

static void odo_start(odo *o, const rdim *d, int n, int64_t pos)
{
	o->d = d;
	o->n = n;
	o->off = 0;
	for (int j = n - 1; j >= 0; j--) {
		o->i[j] = pos % d[j].n;
		pos /= d[j].n;
		o->off += o->i[j] * d[j].st;
	}
}

static inline void odo_next(odo *o)
{
	for (int j = o->n - 1; j >= 0; j--) {
		o->off += o->d[j].st;
		if (++o->i[j] < o->d[j].n) return;
		o->off -= o->d[j].st * o->d[j].n;
		o->i[j] = 0;
	}
}

/* Element offset of position pos (C order) over dims d[0..n), with strides st (or d's own). */
static int64_t pos_offset(int64_t pos, const rdim *d, const int64_t *st, int n)
{
	int64_t off = 0;
	for (int j = n - 1; j >= 0; j--) {
		off += pos % d[j].n * (st ? st[j] : d[j].st);
		pos /= d[j].n;
	}
	return off;
}

/* ---------------------------------------------------------------- lines */

#define SPLIT_CHUNK ((int64_t)1 << 20) /* elements between interrupt checks in a split line */

/* Folds elements [lo, hi) (C order over the reduced dims) of one output, at xo, into a. */
static void reduce_range(lm_redop op, lm_dtype dt, const char *xo, const rgeom *g, int64_t lo,
                         int64_t hi, double p, acc *a)
{
	int64_t es = (int64_t)lm_dtype_size(dt);
	const rdim *ln = &g->r[g->nr - 1];
	odo o;
	odo_start(&o, g->r, g->nr - 1, lo / ln->n);
	for (int64_t off = lo % ln->n; lo < hi; off = 0, odo_next(&o)) {
		int64_t m = ln->n - off < hi - lo ? ln->n - off : hi - lo;
		line(op, dt, xo + (o.off + off * ln->st) * es, m, ln->st, lo, p, a);
		lo += m;
	}
}

/* Float sums of one dense line per output (row sums, x:t():sum(1)): the lanes straight into
 * the output, without the general accumulator's bookkeeping (a tenth of the time of 4096 sums of
 * 4096 elements went there). */
static void dense_line_sums(lm_redop op, const char *base, const rgeom *g, lm_tensor *out,
                            int64_t o0, int64_t o1)
{
	const lmi_simd_table *tb = lmi_simd();
	int64_t n = g->r[0].n;
	double scale = op == LM_MEAN ? 1.0 / (double)n : (double)g->mult;
	for (int64_t o = o0; o < o1; o++) {
		double part[32] = {0};
		const char *xo = base + pos_offset(o, g->k, NULL, g->nk) * (int64_t)lmi_elem_size(out->dtype);
		if (out->dtype == LM_FLOAT32) {
			tb->lanes_f32((const float *)xo, n, 32, part);
			((float *)lmi_data(out))[o] = (float)(sum_parts(part) * scale);
		} else {
			tb->lanes_f64((const double *)xo, n, 32, part);
			((double *)lmi_data(out))[o] = sum_parts(part) * scale;
		}
	}
}

/* max/min and their indices over one float line (n > 0 elements, stride st; argmax(2) of a
 * batch's logits: dense): the line walked directly, NaN first as in line_T, without the
 * accumulator (4 of the 5 microseconds of argmax(2) of [128, 10] went to its bookkeeping). The
 * index is the first of equal values. */
#define LINE_PICKS(T)                                                                               \
	static inline void line_picks_##T(lm_redop op, const T *x, int64_t n, int64_t st, int64_t *bi, \
	                                  T *best)                                                  \
	{                                                                                           \
		bool hi = op == LM_MAX || op == LM_ARGMAX;                                              \
		T b = x[0];                                                                             \
		int64_t i = 0;                                                                          \
		if (b == b) {                                                                           \
			for (int64_t k = 1; k < n; k++) {                                                   \
				T v = x[k * st];                                                                \
				if (v != v) {                                                                   \
					b = v;                                                                      \
					i = k;                                                                      \
					break;                                                                      \
				}                                                                               \
				if (hi ? v > b : v < b) {                                                       \
					b = v;                                                                      \
					i = k;                                                                      \
				}                                                                               \
			}                                                                                   \
		}                                                                                       \
		*bi = i;                                                                                \
		*best = b;                                                                              \
	}
LINE_PICKS(float)
LINE_PICKS(double)

static void dense_line_picks(lm_redop op, const char *base, const rgeom *g, lm_dtype dt,
                             lm_tensor *out, lm_tensor *idx, int64_t o0, int64_t o1)
{
	int64_t n = g->r[0].n, es = (int64_t)lm_dtype_size(dt);
	bool arg = op == LM_ARGMAX || op == LM_ARGMIN;
	for (int64_t o = o0; o < o1; o++) {
		const char *xo = base + pos_offset(o, g->k, NULL, g->nk) * es;
		int64_t bi;
		if (dt == LM_FLOAT32) {
			float b;
			line_picks_float(op, (const float *)xo, n, 1, &bi, &b);
			if (!arg) ((float *)lmi_data(out))[o] = b;
		} else {
			double b;
			line_picks_double(op, (const double *)xo, n, 1, &bi, &b);
			if (!arg) ((double *)lmi_data(out))[o] = b;
		}
		if (arg) ((int64_t *)lmi_data(out))[o] = bi;
		else if (idx) ((int64_t *)lmi_data(idx))[o] = bi;
	}
}

static bool arg_op(lm_redop op) { return op == LM_ARGMAX || op == LM_ARGMIN; }

/* Many outputs: each output's lines on one thread. */
static lm_status lines_by_output(lm_redop op, const lm_tensor *x, const rgeom *g, lm_tensor *out,
                                 lm_tensor *idx, double p)
{
	int64_t es = (int64_t)lmi_elem_size(x->dtype);
	const char *base = lmi_data(x) + g->base * es;
	int64_t every = g->rcount >= 1024 ? 1 : 1024; /* outputs between interrupt checks */
	int nt = g->nout > 1 && g->nout * g->rcount > LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
	bool dense_sums = (op == LM_SUM || op == LM_MEAN) && lm_dtype_is_float(x->dtype) &&
	                  g->nr == 1 && g->r[0].st == 1;
	bool dense_picks = (op == LM_MAX || op == LM_MIN || op == LM_ARGMAX || op == LM_ARGMIN) &&
	                   lm_dtype_is_float(x->dtype) && g->nr == 1 && g->r[0].st == 1 &&
	                   g->r[0].n > 0 && g->mult == 1 && out->dtype == (arg_op(op) ? LM_INT64 : x->dtype);
	int stop = 0;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
	for (int64_t o = 0; o < g->nout; o++) {
		if (__atomic_load_n(&stop, __ATOMIC_RELAXED)) continue;
		if (o % every == 0 && lmi_check_interrupt()) {
			__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (dense_sums) {
			dense_line_sums(op, base, g, out, o, o + 1);
			continue;
		}
		if (dense_picks) {
			dense_line_picks(op, base, g, x->dtype, out, idx, o, o + 1);
			continue;
		}
		acc a;
		acc_init(op, &a);
		reduce_range(op, x->dtype, base + pos_offset(o, g->k, NULL, g->nk) * es, g, 0, g->rcount,
		             p, &a);
		acc_repeat(op, &a, g->mult, p);
		acc_store(op, &a, x->dtype, p, out, idx, o);
	}
	return stop ? lmi_fail(LM_ERR_INTERRUPTED, "interrupted") : LM_OK;
}

/* Few outputs with many elements each: each output's elements split across the threads, the
 * partial results merged in order (so the result does not depend on the timing). */
static lm_status lines_split(lm_redop op, const lm_tensor *x, const rgeom *g, lm_tensor *out,
                             lm_tensor *idx, double p)
{
	enum { MAXT = 256 };
	int nt = lmi_num_threads();
	if (nt > MAXT) nt = MAXT;
	int64_t es = (int64_t)lmi_elem_size(x->dtype);
	const char *base = lmi_data(x) + g->base * es;
	for (int64_t o = 0; o < g->nout; o++) {
		const char *xo = base + pos_offset(o, g->k, NULL, g->nk) * es;
		acc part[MAXT];
		int stop = 0, used = 1;
#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num_safe(), nth = 1;
#ifdef _OPENMP
			nth = omp_get_num_threads();
#endif
			int64_t lo = g->rcount * t / nth, hi = g->rcount * (t + 1) / nth;
			acc_init(op, &part[t]);
			for (int64_t c = lo; c < hi; c += SPLIT_CHUNK) {
				if (lmi_check_interrupt()) {
					__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
					break;
				}
				reduce_range(op, x->dtype, xo, g, c, hi - c < SPLIT_CHUNK ? hi : c + SPLIT_CHUNK, p,
				             &part[t]);
			}
#pragma omp single
			used = nth;
		}
		if (stop) return lmi_fail(LM_ERR_INTERRUPTED, "interrupted");
		acc a;
		acc_init(op, &a);
		for (int t = 0; t < used; t++) acc_merge(op, &a, &part[t], p, !lm_dtype_is_float(x->dtype));
		acc_repeat(op, &a, g->mult, p);
		acc_store(op, &a, x->dtype, p, out, idx, o);
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- rows */

/*
 * Float sums whose closest-packed dim is kept (a sum over rows, x:sum(1) of a matrix; or over the
 * long dim of a transposed one): the kept dim kd is walked in blocks of up to RBLOCK elements, and
 * every reduced position adds its row piece into a block of double accumulators (vectorised along
 * the row). A short dense kept dim (at most 8) whose rows follow each other in memory, as in the
 * transposed (2^26, 2), is summed as one dense stretch into lcm(k, 32) lanes folded into k.
 */
#define RBLOCK 1024

typedef struct rows_job {
	const rgeom *g;
	lm_dtype dt;
	int64_t n0, st0, os0; /* the kept dim: size, stride in x, stride in out */
	rdim ko[LM_MAX_DIMS];  /* the other kept dims */
	int64_t koos[LM_MAX_DIMS];
	int nko;
	int L;                 /* lanes of the folded case, 0 otherwise */
} rows_job;

/* sums[0..jn) += the rows j0 .. j0+jn of the kept dim over reduced positions [q0, q1). */
static void rows_range(const rows_job *jb, const char *xo, int64_t j0, int64_t jn, int64_t q0,
                       int64_t q1, double *sums)
{
	const rgeom *g = jb->g;
	const lmi_simd_table *tb = lmi_simd();
	int64_t es = (int64_t)lm_dtype_size(jb->dt);
	bool f32 = jb->dt == LM_FLOAT32;
	if (jb->L) { /* dense rows of n0: a position is one row of the last reduced dim */
		const rdim *in = &g->r[g->nr - 1];
		double part[256] = {0};
		odo o;
		odo_start(&o, g->r, g->nr - 1, q0 / in->n);
		for (int64_t row = q0 % in->n; q0 < q1; row = 0, odo_next(&o)) {
			int64_t m = in->n - row < q1 - q0 ? in->n - row : q1 - q0;
			const char *s = xo + (o.off + row * in->st) * es;
			if (f32)
				tb->lanes_f32((const float *)s, m * jb->n0, jb->L, part);
			else
				tb->lanes_f64((const double *)s, m * jb->n0, jb->L, part);
			q0 += m;
		}
		for (int l = 0; l < jb->L; l++) sums[l % jb->n0] += part[l];
		return;
	}
	if (jb->st0 == 1) { /* runs of rows along the last reduced dim, each run one call */
		const rdim *in = &g->r[g->nr - 1];
		odo o;
		odo_start(&o, g->r, g->nr - 1, q0 / in->n);
		for (int64_t row = q0 % in->n; q0 < q1; row = 0, odo_next(&o)) {
			int64_t m = in->n - row < q1 - q0 ? in->n - row : q1 - q0;
			const char *s = xo + (o.off + row * in->st + j0) * es;
			if (f32)
				tb->rowsacc_f32(sums, (const float *)s, m, in->st, jn);
			else
				tb->rowsacc_f64(sums, (const double *)s, m, in->st, jn);
			q0 += m;
		}
		return;
	}
	odo o;
	odo_start(&o, g->r, g->nr, q0);
	for (int64_t q = q0; q < q1; q++, odo_next(&o)) {
		const char *s = xo + (o.off + j0 * jb->st0) * es;
		if (f32)
			for (int64_t j = 0; j < jn; j++) sums[j] += ((const float *)s)[j * jb->st0];
		else
			for (int64_t j = 0; j < jn; j++) sums[j] += ((const double *)s)[j * jb->st0];
	}
}

static void rows_store(lm_redop op, const rows_job *jb, const double *sums, int64_t jn,
                       lm_tensor *out, int64_t o0)
{
	const rgeom *g = jb->g;
	for (int64_t j = 0; j < jn; j++) {
		double v = sums[j] * (double)g->mult;
		if (op == LM_MEAN) v = g->rcount ? sums[j] / (double)g->rcount : NAN;
		int64_t i = o0 + j * jb->os0;
		if (out->dtype == LM_FLOAT32)
			((float *)lmi_data(out))[i] = (float)v;
		else
			((double *)lmi_data(out))[i] = v;
	}
}

static int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

static lm_status rows_sum(lm_redop op, const lm_tensor *x, const rgeom *g, int kd, lm_tensor *out)
{
	rows_job jb = {g, x->dtype, g->k[kd].n, g->k[kd].st, g->kos[kd], {{0, 0}}, {0}, 0, 0};
	for (int i = 0; i < g->nk; i++)
		if (i != kd) {
			jb.ko[jb.nko] = g->k[i];
			jb.koos[jb.nko++] = g->kos[i];
		}
	const rdim *in = &g->r[g->nr - 1];
	if (jb.st0 == 1 && jb.n0 <= 8 && in->st == jb.n0) jb.L = (int)(jb.n0 * 32 / gcd64(jb.n0, 32));
	int64_t es = (int64_t)lmi_elem_size(x->dtype), blk = jb.L ? jb.n0 : RBLOCK;
	int64_t nb = (jb.n0 + blk - 1) / blk, items = g->nout / jb.n0 * nb;
	int64_t qn = g->rcount; /* reduced positions (in the folded case: rows of n0) */
	const char *base = lmi_data(x) + g->base * es;
	int nt = g->nout * g->rcount > LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
	int stop = 0;
	if (items >= nt) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt) if (nt > 1)
		for (int64_t w = 0; w < items; w++) {
			if (__atomic_load_n(&stop, __ATOMIC_RELAXED)) continue;
			if (lmi_check_interrupt()) {
				__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
				continue;
			}
			int64_t oi = w / nb, j0 = w % nb * blk, jn = jb.n0 - j0 < blk ? jb.n0 - j0 : blk;
			double sums[RBLOCK] = {0};
			rows_range(&jb, base + pos_offset(oi, jb.ko, NULL, jb.nko) * es, j0, jn, 0, qn, sums);
			rows_store(op, &jb, sums, jn, out, pos_offset(oi, jb.ko, jb.koos, jb.nko) + j0 * jb.os0);
		}
		return stop ? lmi_fail(LM_ERR_INTERRUPTED, "interrupted") : LM_OK;
	}
	/* fewer blocks than threads: split each block's positions, one accumulator block per thread */
	double *parts = lm_alloc((size_t)nt * RBLOCK * sizeof(double));
	if (!parts) return lm_last_status();
	for (int64_t w = 0; w < items && !stop; w++) {
		int64_t oi = w / nb, j0 = w % nb * blk, jn = jb.n0 - j0 < blk ? jb.n0 - j0 : blk;
		const char *xo = base + pos_offset(oi, jb.ko, NULL, jb.nko) * es;
		int used = 1;
#pragma omp parallel num_threads(nt)
		{
			int t = omp_get_thread_num_safe(), nth = 1;
#ifdef _OPENMP
			nth = omp_get_num_threads();
#endif
			double *sums = parts + (size_t)t * RBLOCK;
			for (int64_t j = 0; j < jn; j++) sums[j] = 0;
			int64_t lo = qn * t / nth, hi = qn * (t + 1) / nth;
			for (int64_t c = lo; c < hi; c += SPLIT_CHUNK / (jn ? jn : 1) + 1) {
				if (lmi_check_interrupt()) {
					__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
					break;
				}
				int64_t e = c + SPLIT_CHUNK / (jn ? jn : 1) + 1;
				rows_range(&jb, xo, j0, jn, c, e < hi ? e : hi, sums);
			}
#pragma omp single
			used = nth;
		}
		for (int t = 1; t < used; t++)
			for (int64_t j = 0; j < jn; j++) parts[j] += parts[(size_t)t * RBLOCK + j];
		rows_store(op, &jb, parts, jn, out, pos_offset(oi, jb.ko, jb.koos, jb.nko) + j0 * jb.os0);
	}
	lm_free(parts, (size_t)nt * RBLOCK * sizeof(double));
	return stop ? lmi_fail(LM_ERR_INTERRUPTED, "interrupted") : LM_OK;
}

/* ---------------------------------------------------------------- entry points */

static lm_status reduce_geom(lm_redop op, const lm_tensor *x, const rgeom *g, lm_tensor *out,
                             lm_tensor *idx, double p)
{
	if (g->nout == 0) return LM_OK;
	if (g->empty) { /* every output reduces nothing: 0, 1, NaN, ... */
		for (int64_t o = 0; o < g->nout; o++) {
			acc a;
			acc_init(op, &a);
			acc_store(op, &a, x->dtype, p, out, idx, o);
		}
		return LM_OK;
	}
	int kd = -1; /* the kept dim closest-packed in memory */
	for (int i = 0; i < g->nk; i++)
		if (kd < 0 || iabs64(g->k[i].st) < iabs64(g->k[kd].st)) kd = i;
	bool sums = (op == LM_SUM || op == LM_MEAN) && lm_dtype_is_float(x->dtype);
	if (sums && kd >= 0 && iabs64(g->k[kd].st) < iabs64(g->r[g->nr - 1].st))
		return rows_sum(op, x, g, kd, out);
	int nt = lmi_num_threads();
	if (nt > 1 && g->nout < nt && g->rcount >= 4 * LMI_PARALLEL_GRAIN)
		return lines_split(op, x, g, out, idx, p);
	return lines_by_output(op, x, g, out, idx, p);
}

static bool free_order(lm_redop op, const lm_tensor *idx)
{
	return op != LM_ARGMAX && op != LM_ARGMIN && !idx;
}

lm_status lmi_cpu_reduce(lm_redop op, const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                         lm_tensor *out, lm_tensor *idx, double p)
{
	rgeom g;
	geom_build(3, (int64_t[]){outer, R, inner}, (int64_t[]){R * inner, inner, 1}, 2u,
	           free_order(op, idx), &g);
	return reduce_geom(op, x, &g, out, idx, p);
}

lm_status lmi_cpu_reduce_dims(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
                              lm_tensor *idx, double p)
{
	rgeom g;
	geom_build(x->ndim, x->shape, x->stride, mask, free_order(op, idx), &g);
	return reduce_geom(op, x, &g, out, idx, p);
}

/* ---------------------------------------------------------------- count_correct */

/* The label at p (int32 or int64, as the ops layer sends them). */
static inline int64_t label_at(const char *p, lm_dtype dt)
{
	return dt == LM_INT64 ? *(const int64_t *)p : (int64_t)*(const int32_t *)p;
}

#define COUNT_CORRECT(T)                                                                            \
	static int64_t count_correct_##T(const T *x, int64_t N, int64_t C, int64_t s0, int64_t s1,      \
	                                 const char *lab, int64_t ls, lm_dtype ldt, int64_t base)       \
	{                                                                                               \
		int64_t hits = 0;                                                                           \
		int nt = N * C >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;                               \
		_Pragma("omp parallel for schedule(static) reduction(+ : hits) num_threads(nt) if (nt > 1)") \
		for (int64_t r = 0; r < N; r++) {                                                           \
			int64_t bi;                                                                             \
			T b;                                                                                    \
			if (s1 == 1)                                                                            \
				line_picks_##T(LM_ARGMAX, x + r * s0, C, 1, &bi, &b);                               \
			else                                                                                    \
				line_picks_##T(LM_ARGMAX, x + r * s0, C, s1, &bi, &b);                              \
			hits += bi + base == label_at(lab + r * ls, ldt);                                       \
		}                                                                                           \
		return hits;                                                                                \
	}
COUNT_CORRECT(float)
COUNT_CORRECT(double)

lm_status lmi_cpu_count_correct(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
                                int64_t *count)
{
	int64_t N = logits->shape[0], C = logits->shape[1];
	*count = 0;
	if (N == 0) return LM_OK;
	const char *lab = lmi_data(labels);
	int64_t ls = labels->nb[0];
	if (logits->dtype == LM_FLOAT32)
		*count = count_correct_float((const float *)lmi_data(logits), N, C,
		                             logits->stride[0], logits->stride[1], lab, ls, labels->dtype, base);
	else
		*count = count_correct_double((const double *)lmi_data(logits), N, C,
		                              logits->stride[0], logits->stride[1], lab, ls, labels->dtype, base);
	return LM_OK;
}
