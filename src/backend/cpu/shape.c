/*
 * shape.c — CPU loops of cumsum, tril/triu and repeat.
 *
 * cumsum runs down the middle axis of an (outer, R, inner) view with a block of `inner` running
 * sums (double for floats, wrapping 64-bit for integers), so inner > 1 vectorises across the
 * block. tril/triu copy the kept part of each row and zero the rest. repeat tiles by doubling
 * block copies outward from the last dim: every byte is written by memcpy. Read next:
 * ../../ops/shape.c.
 */
#include <string.h>

#include "backend/cpu/cpu_move.h"

#define JB 256 /* running sums kept per block of the inner axis */

/* ---------------------------------------------------------------- cumsum */

#define CUMSUM(NAME, T, OT, ACC)                                                                    \
	static void NAME(const T *x, OT *out, int64_t R, int64_t inner, int64_t j0, int64_t jn)       \
	{                                                                                           \
		ACC acc[JB];                                                                            \
		for (int64_t j = 0; j < jn; j++) acc[j] = 0;                                            \
		for (int64_t r = 0; r < R; r++) {                                                       \
			const T *xr = x + r * inner + j0;                                                   \
			OT *orow = out + r * inner + j0;                                                    \
			for (int64_t j = 0; j < jn; j++) {                                                  \
				acc[j] += (ACC)xr[j];                                                           \
				orow[j] = (OT)acc[j];                                                           \
			}                                                                                   \
		}                                                                                       \
	}
CUMSUM(cumsum_f32, float, float, double)
CUMSUM(cumsum_f64, double, double, double)
/* integers: sums in uint64_t wrap like int64 arithmetic would, without undefined overflow */
CUMSUM(cumsum_i32, int32_t, int64_t, uint64_t)
CUMSUM(cumsum_i64, int64_t, int64_t, uint64_t)
CUMSUM(cumsum_u8, uint8_t, int64_t, uint64_t)

lm_status lmi_cpu_cumsum(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                         lm_tensor *out)
{
	if (outer == 0 || R == 0 || inner == 0) return LM_OK; /* first: inner may be near 2^63 */
	int64_t nb = (inner + JB - 1) / JB, items = outer * nb;
	size_t es = lmi_elem_size(x->dtype), os = lmi_elem_size(out->dtype);
	const char *xb = lmi_data(x);
	char *ob = lmi_data(out);
	lmi_par_err perr;
	lmi_par_init(&perr);
	int nt = items > 1 && outer * R * inner >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
#pragma omp parallel for schedule(dynamic, 4) num_threads(nt)
	for (int64_t w = 0; w < items; w++) {
		if (atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;
		if (lmi_check_interrupt()) {
			lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "cumsum: interrupted");
			continue;
		}
		int64_t o = w / nb, j0 = (w % nb) * JB, jn = inner - j0 < JB ? inner - j0 : JB;
		const char *xo = xb + (size_t)(o * R * inner) * es;
		char *oo = ob + (size_t)(o * R * inner) * os;
		switch (x->dtype) {
		case LM_FLOAT32: cumsum_f32((const float *)xo, (float *)oo, R, inner, j0, jn); break;
		case LM_FLOAT64: cumsum_f64((const double *)xo, (double *)oo, R, inner, j0, jn); break;
		case LM_INT32: cumsum_i32((const int32_t *)xo, (int64_t *)oo, R, inner, j0, jn); break;
		case LM_INT64: cumsum_i64((const int64_t *)xo, (int64_t *)oo, R, inner, j0, jn); break;
		case LM_UINT8: cumsum_u8((const uint8_t *)xo, (int64_t *)oo, R, inner, j0, jn); break;
		default: LM_ASSERT(0 && "cumsum dtype");
		}
	}
	return lmi_par_finish(&perr);
}

/* ---------------------------------------------------------------- tril / triu */

lm_status lmi_cpu_triangle(const lm_tensor *x, int64_t B, int64_t M, int64_t N, int64_t k,
                           bool upper, lm_tensor *out)
{
	int64_t rows = B * M;
	if (rows == 0 || N == 0) return LM_OK;
	size_t es = lmi_elem_size(x->dtype);
	const char *xb = lmi_data(x);
	char *ob = lmi_data(out);
	lmi_par_err perr;
	lmi_par_init(&perr);
	int nt = rows * N >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;
#pragma omp parallel for schedule(static) num_threads(nt)
	for (int64_t r = 0; r < rows; r++) {
		if ((r & 255) == 0 && lmi_check_interrupt()) {
			lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "%s: interrupted", upper ? "triu" : "tril");
			continue;
		}
		int64_t i = r % M;
		/* kept columns: [lo, hi) */
		int64_t lo = upper ? i + k : 0, hi = upper ? N : i + k + 1;
		lo = lo < 0 ? 0 : lo > N ? N : lo;
		hi = hi < lo ? lo : hi > N ? N : hi;
		const char *xr = xb + (size_t)(r * N) * es;
		char *orow = ob + (size_t)(r * N) * es;
		memset(orow, 0, (size_t)lo * es);
		memcpy(orow + (size_t)lo * es, xr + (size_t)lo * es, (size_t)(hi - lo) * es);
		memset(orow + (size_t)hi * es, 0, (size_t)(N - hi) * es);
	}
	return lmi_par_finish(&perr);
}

/* ---------------------------------------------------------------- repeat */

lm_status lmi_cpu_repeat_fill(lm_tensor *out, const int64_t *xshape, const int64_t *reps)
{
	int nd = out->ndim;
	if (lm_tensor_numel(out) == 0) return LM_OK;
	size_t es = lmi_elem_size(out->dtype);
	char *ob = lmi_data(out);
	/*
	 * Invariant, going from the last dim d = nd-1 to 0: for every corner prefix (i_0..i_{d-1},
	 * each i_j < xshape[j]) the block spanning dims d.. starts with its first xshape[d] slices
	 * complete (dims after d already tiled); copy that run reps[d] - 1 more times after it.
	 */
	for (int d = nd - 1; d >= 0; d--) {
		if (reps[d] == 1) continue;
		size_t run = (size_t)xshape[d] * (size_t)out->stride[d] * es; /* bytes of one tile */
		int64_t prefixes = 1;
		for (int j = 0; j < d; j++) prefixes *= xshape[j];
		for (int64_t p = 0; p < prefixes; p++) {
			if ((p & 1023) == 0 && lmi_check_interrupt())
				return lmi_fail(LM_ERR_INTERRUPTED, "repeat: interrupted");
			int64_t off = 0, q = p;
			for (int j = d - 1; j >= 0; j--) {
				off += (q % xshape[j]) * out->stride[j];
				q /= xshape[j];
			}
			char *base = ob + (size_t)off * es;
			for (int64_t t = 1; t < reps[d]; t++) memcpy(base + (size_t)t * run, base, run);
		}
	}
	return LM_OK;
}
