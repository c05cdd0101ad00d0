/*
 * index.c — CPU loops of the indexing ops: index_select, gather, scatter_add, one_hot.
 *
 * gather and scatter_add walk the positions of the index tensor in "lines": a line fixes every
 * coordinate but dim, so the lines of scatter_add write disjoint outputs and can run on separate
 * threads without atomics, in a fixed order (deterministic sums). Indices are checked inside the
 * workers; the first bad one is carried to the caller with lmi_par_*. index_select copies whole
 * inner rows (memcpy) of a contiguous input. Read next: ../../ops/index.c.
 */
#include <string.h>

#include "backend/cpu/cpu_move.h"

/* The index at p (int32 or int64). */
static inline int64_t load_index(const char *p, lm_dtype dt)
{
	return dt == LM_INT64 ? *(const int64_t *)p : (int64_t)*(const int32_t *)p;
}

/* Threads for a loop of `work` element moves: one below the grain. */
static int threads_for(int64_t work)
{
	return work >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
}

/* ---------------------------------------------------------------- index_select */

lm_status lmi_cpu_index_select(const char *fname, const lm_tensor *x, int64_t outer, int64_t size,
                               int64_t inner, const lm_tensor *idx, lm_tensor *out)
{
	int64_t n = lm_tensor_numel(idx);
	const char *ip = lmi_data(idx);
	size_t isz = lmi_elem_size(idx->dtype), es = lmi_elem_size(x->dtype);
	/* The index is short next to the data it moves: check it once, here, in order. */
	for (int64_t j = 0; j < n; j++) {
		int64_t v = load_index(ip + (size_t)j * isz, idx->dtype);
		if (v < 0 || v >= size)
			return lmi_fail(LM_ERR_INDEX, "%s: index %lld (at position %lld) is out of range for a "
			                "dim of size %lld", fname, (long long)v, (long long)j, (long long)size);
	}
	const char *xb = lmi_data(x);
	char *ob = lmi_data(out);
	int64_t rows = outer * n;
	size_t rowb = (size_t)inner * es;
	lmi_par_err perr;
	lmi_par_init(&perr);
#pragma omp parallel for schedule(static) num_threads(threads_for(rows * inner))
	for (int64_t r = 0; r < rows; r++) {
		if ((r & 1023) == 0 && lmi_check_interrupt()) {
			lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "%s: interrupted", fname);
			continue;
		}
		if (atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;
		int64_t o = r / n, j = r % n;
		int64_t v = load_index(ip + (size_t)j * isz, idx->dtype);
		const char *src = xb + (size_t)(o * size + v) * rowb;
		char *dst = ob + (size_t)r * rowb;
		switch (inner == 1 ? es : 0) { /* single elements: typed moves, not memcpy calls */
		case 1: *dst = *src; break;
		case 4: *(uint32_t *)dst = *(const uint32_t *)src; break;
		case 8: *(uint64_t *)dst = *(const uint64_t *)src; break;
		default: memcpy(dst, src, rowb);
		}
	}
	return lmi_par_finish(&perr);
}

/* ---------------------------------------------------------------- lines of positions */

/* Offset (elements) of the start of line l for an operand with strides st, the index's shape
 * (nd dims) without dim; pos receives the line's coordinates (pos[dim] = 0). */
static int64_t line_offset(int64_t l, int nd, int dim, const int64_t *shape, const int64_t *st,
                           int64_t *pos)
{
	int64_t off = 0;
	for (int d = nd - 1; d >= 0; d--) {
		if (d == dim) {
			pos[d] = 0;
			continue;
		}
		pos[d] = l % shape[d];
		l /= shape[d];
		off += pos[d] * st[d];
	}
	return off;
}

/* Lines (every coordinate but dim fixed) and how often to poll for interrupts. */
static void line_counts(const lm_tensor *idx, int dim, int64_t *nlines, int64_t *len, int64_t *poll)
{
	int64_t n = 1;
	for (int d = 0; d < idx->ndim; d++)
		if (d != dim) n *= idx->shape[d];
	*nlines = n;
	*len = idx->shape[dim];
	*poll = *len >= 4096 ? 1 : 4096 / (*len ? *len : 1);
}

static void bad_index(lmi_par_err *e, const char *fname, int64_t v, int dim, int64_t size,
                      int nd, int64_t *pos, int64_t k)
{
	pos[dim] = k;
	lmi_par_fail(e, LM_ERR_INDEX, "%s: index %lld at position %s is out of range for dim %d of "
	             "size %lld", fname, (long long)v, lmi_dims_s(nd, pos), dim, (long long)size);
}

/* ---------------------------------------------------------------- gather */

/* out[line, k] = x[line, idx[line, k]] with T the element's bit pattern (a pure move). */
#define GATHER_LINES(T)                                                                             \
	do {                                                                                        \
		_Pragma("omp parallel for schedule(static) num_threads(nt)")                            \
		for (int64_t l = 0; l < nlines; l++) {                                                  \
			if (l % poll == 0 && lmi_check_interrupt())                                         \
				lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "gather: interrupted");                 \
			if (atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;                \
			int64_t pos[LM_MAX_DIMS];                                                           \
			const T *xl = (const T *)xb + line_offset(l, nd, dim, idx->shape, x->stride, pos);  \
			const char *il = ib + line_offset(l, nd, dim, idx->shape, idx->stride, pos) * isz;  \
			T *ol = (T *)ob + line_offset(l, nd, dim, idx->shape, out->stride, pos);            \
			for (int64_t k = 0; k < len; k++) {                                                 \
				int64_t v = load_index(il + k * istep, idx->dtype);                             \
				if (v < 0 || v >= size) {                                                       \
					bad_index(&perr, "gather", v, dim, size, nd, pos, k);                       \
					break;                                                                      \
				}                                                                               \
				ol[k * ostep] = xl[v * xstep];                                                  \
			}                                                                                   \
		}                                                                                       \
	} while (0)

lm_status lmi_cpu_gather(const lm_tensor *x, int dim, const lm_tensor *idx, lm_tensor *out)
{
	int nd = idx->ndim;
	int64_t nlines, len, poll;
	line_counts(idx, dim, &nlines, &len, &poll);
	if (nlines == 0 || len == 0) return LM_OK;
	const char *xb = lmi_data(x), *ib = lmi_data(idx);
	char *ob = lmi_data(out);
	int64_t isz = (int64_t)lmi_elem_size(idx->dtype), size = x->shape[dim];
	int64_t xstep = x->stride[dim], istep = idx->stride[dim] * isz, ostep = out->stride[dim];
	int nt = threads_for(nlines * len);
	lmi_par_err perr;
	lmi_par_init(&perr);
	switch (lmi_elem_size(x->dtype)) {
	case 1: GATHER_LINES(uint8_t); break;
	case 4: GATHER_LINES(uint32_t); break;
	default: GATHER_LINES(uint64_t); break;
	}
	return lmi_par_finish(&perr);
}

/* ---------------------------------------------------------------- scatter_add */

/* out[line, idx[line, k]] += src[line, k]; ADD(a, b) is the dtype's (wrapping) sum. */
#define SCATTER_LINES(T, ADD)                                                                       \
	do {                                                                                        \
		_Pragma("omp parallel for schedule(static) num_threads(nt)")                            \
		for (int64_t l = 0; l < nlines; l++) {                                                  \
			if (l % poll == 0 && lmi_check_interrupt())                                         \
				lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "scatter_add: interrupted");            \
			if (atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;                \
			int64_t pos[LM_MAX_DIMS];                                                           \
			const T *sl = (const T *)sb + line_offset(l, nd, dim, idx->shape, src->stride, pos); \
			const char *il = ib + line_offset(l, nd, dim, idx->shape, idx->stride, pos) * isz;  \
			T *ol = (T *)ob + line_offset(l, nd, dim, idx->shape, out->stride, pos);            \
			for (int64_t k = 0; k < len; k++) {                                                 \
				int64_t v = load_index(il + k * istep, idx->dtype);                             \
				if (v < 0 || v >= size) {                                                       \
					bad_index(&perr, "scatter_add", v, dim, size, nd, pos, k);                  \
					break;                                                                      \
				}                                                                               \
				ol[v * ostep] = ADD(ol[v * ostep], sl[k * sstep]);                              \
			}                                                                                   \
		}                                                                                       \
	} while (0)

#define FADD(a, b) ((a) + (b))
#define IADD32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define IADD64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define IADD8(a, b) ((uint8_t)((a) + (b)))

lm_status lmi_cpu_scatter_add(lm_tensor *out, int dim, const lm_tensor *idx, const lm_tensor *src)
{
	LM_ASSERT(out->dtype == src->dtype);
	int nd = idx->ndim;
	int64_t nlines, len, poll;
	line_counts(idx, dim, &nlines, &len, &poll);
	if (nlines == 0 || len == 0) return LM_OK;
	const char *sb = lmi_data(src), *ib = lmi_data(idx);
	char *ob = lmi_data(out);
	int64_t isz = (int64_t)lmi_elem_size(idx->dtype), size = out->shape[dim];
	int64_t sstep = src->stride[dim], istep = idx->stride[dim] * isz, ostep = out->stride[dim];
	int nt = threads_for(nlines * len);
	lmi_par_err perr;
	lmi_par_init(&perr);
	switch (out->dtype) {
	case LM_FLOAT32: SCATTER_LINES(float, FADD); break;
	case LM_FLOAT64: SCATTER_LINES(double, FADD); break;
	case LM_INT32: SCATTER_LINES(int32_t, IADD32); break;
	case LM_INT64: SCATTER_LINES(int64_t, IADD64); break;
	case LM_UINT8: SCATTER_LINES(uint8_t, IADD8); break;
	default: LM_ASSERT(0 && "scatter_add dtype");
	}
	return lmi_par_finish(&perr);
}

/* ---------------------------------------------------------------- one_hot */

lm_status lmi_cpu_one_hot(const lm_tensor *idx, int64_t classes, lm_tensor *out)
{
	LM_ASSERT(lm_tensor_is_contiguous(idx) && out->dtype == LM_INT64);
	int64_t n = lm_tensor_numel(idx);
	const char *ib = lmi_data(idx);
	size_t isz = lmi_elem_size(idx->dtype);
	int64_t *o = (int64_t *)lmi_data(out);
	lmi_par_err perr;
	lmi_par_init(&perr);
#pragma omp parallel for schedule(static) num_threads(threads_for(n * classes))
	for (int64_t i = 0; i < n; i++) {
		if ((i & 4095) == 0 && lmi_check_interrupt())
			lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "one_hot: interrupted");
		int64_t v = load_index(ib + (size_t)i * isz, idx->dtype);
		if (v < 0 || v >= classes) {
			lmi_par_fail(&perr, LM_ERR_INDEX, "one_hot: class %lld (at position %lld) is out of "
			             "range for %lld classes", (long long)v, (long long)i, (long long)classes);
			continue;
		}
		o[i * classes + v] = 1;
	}
	return lmi_par_finish(&perr);
}
