/*
 * fused.c — the CPU's fused kernel: a compiled program's group of elementwise nodes
 * (../exec.h's lmi_fused) in one pass over memory.
 *
 * The iterator walks the kernel's operands (outputs, then inputs broadcast to the outputs' shape)
 * as every elementwise loop does (coalesced dims, OpenMP chunks, a single large output streamed
 * with non-temporal stores). Each row piece it hands over is cut into blocks of FB elements, and
 * the instructions run in order on a block, each through the same vectorised 1-D kernel of the
 * SIMD path in use that the node alone would have run (simd.h: unary, binary, where, axpy), its
 * registers FB-element buffers on the stack that stay in the L1 cache. So each element is computed
 * by the same code in the same order as the nodes one by one — the results are bit for bit the
 * unfused ones — while memory is read and written once: the intermediate values never leave the
 * cache. The price against a compiled loop per group is one indirect call per instruction per
 * block (FB = 1024 elements: a few nanoseconds against ~400 of arithmetic). Read next:
 * ../../ops/program.c (where groups are made), ewise_loops.h (the 1-D kernels).
 */
#include <string.h>

#include "backend/cpu/simd.h"
#include "core/iter.h"

#define FB 1024

typedef struct fused_ctx {
	const lmi_fused *f;
	const lmi_simd_table *simd;
} fused_ctx;

/* Runs instructions [k0, k1) on m elements: operand j at base[j], byte stride st[j]; registers in
 * regs (FB elements each). */
static void run_block(const fused_ctx *c, int k0, int k1, char *const *base, const int64_t *st, int64_t m,
                      char (*regs)[FB * 8])
{
	const lmi_fused *f = c->f;
	for (int k = k0; k < k1; k++) {
		const lmi_fused_instr *in = &f->instr[k];
		char *ptr[4];
		int64_t s[4];
		for (int j = 0; j <= in->nin; j++) {
			int r = j == 0 ? in->out : in->in[j - 1];
			if (r >= LMI_FUSED_REG) {
				ptr[j] = regs[r - LMI_FUSED_REG];
				s[j] = (int64_t)lmi_elem_size(f->reg_dtype[r - LMI_FUSED_REG]);
			} else {
				ptr[j] = base[r];
				s[j] = st[r];
			}
		}
		switch (in->loop) {
		case LMI_BE_OP_unary: {
			lmi_unary_ctx u = {in->code, in->p0, in->p1};
			c->simd->unary[in->dtype](&u, ptr, s, m);
			break;
		}
		case LMI_BE_OP_binary: {
			int o = in->code;
			c->simd->binary[in->dtype](&o, ptr, s, m);
			break;
		}
		case LMI_BE_OP_where: c->simd->where[in->dtype](NULL, ptr, s, m); break;
		default: { /* add_scaled */
			lmi_axpy_ctx a = {in->p0, 0};
			if (!lm_dtype_is_float(in->dtype))
				a.i = in->p0 < -9.2e18 ? INT64_MIN : in->p0 > 9.2e18 ? INT64_MAX : (int64_t)in->p0;
			c->simd->axpy[in->dtype](&a, ptr, s, m);
			break;
		}
		}
	}
}

static void fused_kernel(void *vctx, char **p, const int64_t *s, int64_t n)
{
	const fused_ctx *c = vctx;
	_Alignas(64) char regs[LMI_FUSED_MAX_REGS][FB * 8];
	char *base[LMI_ITER_MAX_OPS];
	int nops = c->f->nout + c->f->nin;
	for (int64_t i0 = 0; i0 < n; i0 += FB) {
		for (int j = 0; j < nops; j++) base[j] = p[j] + i0 * s[j];
		run_block(c, 0, c->f->ninstr, base, s, n - i0 < FB ? n - i0 : FB, regs);
	}
}

/* ---------------------------------------------------------------- ending in a reduction */

/*
 * The reduction's input shape is walked in C order (adjacent dims merged where every operand's
 * strides allow), one output's elements after another; each piece of a row (at most FB elements)
 * runs the instructions, and the values reduced are staged in runs of STAGE elements, which the
 * reduction folds exactly as reduce.c folds a dense line: float sums through the SIMD path's 32
 * lanes (runs of LANE_RUN * 32 = STAGE elements added in float, then in double), max/min the first
 * NaN or the first of equal values. reduce.c's choice of threads is repeated (one output per
 * thread; or, with fewer outputs than threads and long lines, each line split across the threads
 * in chunks of SPLIT_CHUNK and the partial sums merged in order), so the result is the one the
 * reduction node reading the materialised prologue gives, bit for bit.
 */
#define STAGE 2048        /* = reduce_loops.h's LANE_RUN * 32 */
#define SPLIT_CHUNK ((int64_t)1 << 20) /* reduce.c's */

typedef struct rwalk {
	int nd, nops;
	int64_t shape[LM_MAX_DIMS];
	int64_t st[LMI_ITER_MAX_OPS][LM_MAX_DIMS]; /* bytes */
	char *base[LMI_ITER_MAX_OPS];
} rwalk;

typedef struct racc {
	double part[32];
	double best;
	bool seen;
} racc;

/* Folds stage[0..m) into a (a line's next elements, the first at a STAGE boundary of the line). */
static void fold_stage(const fused_ctx *c, lm_redop op, const char *stage, int64_t m, racc *a)
{
	bool f32 = c->f->red_dtype == LM_FLOAT32;
	if (op == LM_SUM || op == LM_MEAN) {
		if (f32)
			c->simd->lanes_f32((const float *)stage, m, 32, a->part);
		else
			c->simd->lanes_f64((const double *)stage, m, 32, a->part);
		return;
	}
	bool hi = op == LM_MAX;
	for (int64_t k = 0; k < m; k++) {
		double v = f32 ? (double)((const float *)stage)[k] : ((const double *)stage)[k];
		if (!a->seen) {
			a->best = v;
			a->seen = true;
		} else if (a->best == a->best && (v != v || (hi ? v > a->best : v < a->best))) {
			a->best = v;
		}
	}
}

/* Runs the instructions over elements [lo, hi) of the walk and folds the reduced value into a. */
static void walk_range(const fused_ctx *c, const rwalk *w, int64_t lo, int64_t hi, racc *a)
{
	const lmi_fused *f = c->f;
	lm_redop op = (lm_redop)(f->red - 1);
	_Alignas(64) char regs[LMI_FUSED_MAX_REGS][FB * 8];
	_Alignas(64) char stage[STAGE * 8];
	int64_t es = (int64_t)lmi_elem_size(f->red_dtype), fill = 0;
	int64_t idx[LM_MAX_DIMS], rest = lo;
	for (int d = w->nd - 1; d >= 0; d--) {
		idx[d] = w->shape[d] ? rest % w->shape[d] : 0;
		rest = w->shape[d] ? rest / w->shape[d] : 0;
	}
	char *base[LMI_ITER_MAX_OPS];
	int64_t inner[LMI_ITER_MAX_OPS];
	for (int j = 0; j < w->nops; j++) inner[j] = w->st[j][w->nd - 1];
	for (int64_t pos = lo; pos < hi;) {
		int64_t m = w->shape[w->nd - 1] - idx[w->nd - 1];
		if (m > hi - pos) m = hi - pos;
		if (m > FB) m = FB;
		if (m > STAGE - fill) m = STAGE - fill;
		for (int j = 0; j < w->nops; j++) {
			int64_t off = 0;
			for (int d = 0; d < w->nd; d++) off += idx[d] * w->st[j][d];
			base[j] = w->base[j] ? w->base[j] + off : NULL;
		}
		run_block(c, 0, f->ninstr, base, inner, m, regs);
		const char *src = f->red_in >= LMI_FUSED_REG ? regs[f->red_in - LMI_FUSED_REG] : base[f->red_in];
		int64_t sst = f->red_in >= LMI_FUSED_REG ? es : inner[f->red_in];
		if (sst == es)
			memcpy(stage + fill * es, src, (size_t)(m * es));
		else
			for (int64_t k = 0; k < m; k++) memcpy(stage + (fill + k) * es, src + k * sst, (size_t)es);
		fill += m;
		pos += m;
		if (fill == STAGE || pos == hi) {
			fold_stage(c, op, stage, fill, a);
			fill = 0;
		}
		idx[w->nd - 1] += m;
		for (int d = w->nd - 1; d > 0 && idx[d] == w->shape[d]; d--) {
			idx[d] = 0;
			idx[d - 1]++;
		}
	}
}

static double parts_sum(const double *part)
{
	double s = 0;
	for (int k = 0; k < 32; k++) s += part[k];
	return s;
}

static void store_out(lm_tensor *out, int64_t o, double v)
{
	if (out->dtype == LM_FLOAT32)
		((float *)lmi_data(out))[o] = (float)v;
	else
		((double *)lmi_data(out))[o] = v;
}

static lm_status fused_reduce(const fused_ctx *c, lm_tensor *const *out, const lm_tensor *const *in)
{
	const lmi_fused *f = c->f;
	lm_redop op = (lm_redop)(f->red - 1);
	rwalk w = {.nops = f->nout + f->nin};
	int64_t K = 1, R = 1;
	for (int d = 0; d < f->red_ndim; d++) {
		if (d < f->red_keep)
			K *= f->red_shape[d];
		else
			R *= f->red_shape[d];
	}
	LM_ASSERT(w.nops <= LMI_ITER_MAX_OPS && R > 0);
	/* operands at the reduction's input shape (the result, the last output, is not walked) */
	int64_t st[LMI_ITER_MAX_OPS][LM_MAX_DIMS];
	for (int j = 0; j < w.nops; j++) {
		const lm_tensor *t = j < f->nout ? out[j] : in[j - f->nout];
		if (j == f->nout - 1) {
			for (int d = 0; d < f->red_ndim; d++) st[j][d] = 0;
			w.base[j] = NULL;
			continue;
		}
		lmi_broadcast_strides(t, f->red_ndim, f->red_shape, st[j]);
		w.base[j] = lmi_data(t);
		for (int d = 0; d < f->red_ndim; d++) st[j][d] *= (int64_t)lmi_elem_size(t->dtype);
	}
	/* merge adjacent dims every operand walks as one */
	w.nd = 0;
	for (int d = 0; d < f->red_ndim; d++) {
		bool merge = w.nd > 0;
		for (int j = 0; merge && j < w.nops; j++) merge = st[j][d - 1] == st[j][d] * f->red_shape[d];
		if (merge) {
			w.shape[w.nd - 1] *= f->red_shape[d];
			for (int j = 0; j < w.nops; j++) w.st[j][w.nd - 1] = st[j][d];
		} else {
			w.shape[w.nd] = f->red_shape[d];
			for (int j = 0; j < w.nops; j++) w.st[j][w.nd] = st[j][d];
			w.nd++;
		}
	}
	if (w.nd == 0) {
		w.nd = 1;
		w.shape[0] = 1;
		for (int j = 0; j < w.nops; j++) w.st[j][0] = 0;
	}
	lm_tensor *res = out[f->nout - 1];
	bool sums = op == LM_SUM || op == LM_MEAN;
	int nt = lmi_num_threads();
	int stop = 0;
	if (nt > 1 && K < nt && R >= 4 * LMI_PARALLEL_GRAIN) { /* reduce.c's lines_split */
		enum { MAXT = 256 };
		if (nt > MAXT) nt = MAXT;
		for (int64_t o = 0; o < K && !stop; o++) {
			double s[MAXT];
			racc best[MAXT];
			int used = 1;
#pragma omp parallel num_threads(nt)
			{
				int t = omp_get_thread_num_safe(), nth = 1;
#ifdef _OPENMP
				nth = omp_get_num_threads();
#endif
				int64_t lo = R * t / nth, hi = R * (t + 1) / nth;
				s[t] = 0;
				memset(&best[t], 0, sizeof best[t]);
				for (int64_t q = lo; q < hi; q += SPLIT_CHUNK) {
					if (lmi_check_interrupt()) {
						__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
						break;
					}
					int64_t e = hi - q < SPLIT_CHUNK ? hi : q + SPLIT_CHUNK;
					if (sums) {
						racc a = {{0}, 0, false};
						walk_range(c, &w, o * R + q, o * R + e, &a);
						s[t] += parts_sum(a.part);
					} else {
						walk_range(c, &w, o * R + q, o * R + e, &best[t]);
					}
				}
#pragma omp single
				used = nth;
			}
			if (stop) break;
			double v = 0;
			racc b = {{0}, 0, false};
			for (int t = 0; t < used; t++) {
				if (sums) {
					v += s[t];
				} else if (best[t].seen && b.best == b.best &&
				           (!b.seen || best[t].best != best[t].best ||
				            (op == LM_MAX ? best[t].best > b.best : best[t].best < b.best))) {
					b.best = best[t].best;
					b.seen = true;
				}
			}
			store_out(res, o, sums ? (op == LM_MEAN ? v / (double)R : v) : b.best);
		}
	} else { /* reduce.c's lines_by_output with its dense sums and picks */
		int nt2 = K > 1 && K * R > LMI_PARALLEL_GRAIN ? nt : 1;
		int64_t every = R >= 1024 ? 1 : 1024;
		double scale = op == LM_MEAN ? 1.0 / (double)R : 1.0;
#pragma omp parallel for schedule(static) num_threads(nt2) if (nt2 > 1)
		for (int64_t o = 0; o < K; o++) {
			if (__atomic_load_n(&stop, __ATOMIC_RELAXED)) continue;
			if (o % every == 0 && lmi_check_interrupt()) {
				__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
				continue;
			}
			racc a = {{0}, 0, false};
			walk_range(c, &w, o * R, (o + 1) * R, &a);
			store_out(res, o, sums ? parts_sum(a.part) * scale : a.best);
		}
	}
	return stop ? lmi_fail(LM_ERR_INTERRUPTED, "interrupted") : LM_OK;
}

lm_status lmi_cpu_fused(const lmi_fused *f, lm_tensor *const *out, const lm_tensor *const *in)
{
	if (f->red) {
		fused_ctx rc = {f, lmi_simd()};
		return fused_reduce(&rc, out, in);
	}
	const lm_tensor *ops[LMI_ITER_MAX_OPS];
	int n = 0;
	for (int k = 0; k < f->nout; k++) ops[n++] = out[k];
	for (int k = 0; k < f->nin; k++) ops[n++] = in[k];
	LM_ASSERT(n <= LMI_ITER_MAX_OPS);
	lmi_iter it;
	lmi_iter_init(&it, n, ops, out[0]->ndim, out[0]->shape);
	fused_ctx c = {f, lmi_simd()};
	/* stream a single fresh output; one that is also an input, or several, are written in place */
	bool alone = f->nout == 1;
	for (int k = 0; alone && k < f->nin; k++) alone = in[k]->storage != out[0]->storage;
	lmi_iter_kernel k = lmi_cpu_jit(f, out, in);
	return lmi_iter_run_out(&it, k ? k : fused_kernel, &c, alone ? lmi_elem_size(out[0]->dtype) : 0);
}
