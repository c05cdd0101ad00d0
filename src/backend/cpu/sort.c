/*
 * sort.c — CPU stable sort along one axis, for sort and topk.
 *
 * Each line (R elements, stride `inner`) is copied into (value, index) pairs, sorted by a
 * bottom-up merge sort (insertion sort on runs of 16, then merges that take from the left run on
 * ties: stable), and the first k pairs are written out. NaN compares as larger than every number,
 * so it comes last ascending and first descending, as in PyTorch. Lines run in parallel, each
 * thread with its own scratch from the counting allocator; an allocation failure in a worker is
 * carried to the caller. Read next: ../../ops/sort.c.
 */
#include <string.h>

#include "backend/cpu/cpu_move.h"

#define RUN 16

/* a strictly before b in ascending order (NaN last). */
#define LESS_F(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
#define LESS_I(a, b) ((a) < (b))

#define SORT_TYPE(T, LESS)                                                                          \
	typedef struct pair_##T {                                                                       \
		T v;                                                                                    \
		int64_t i;                                                                              \
	} pair_##T;                                                                                 \
	/* Whether a comes strictly before b. */                                                    \
	static inline bool before_##T(const pair_##T *a, const pair_##T *b, bool desc)                 \
	{                                                                                           \
		return desc ? LESS(b->v, a->v) : LESS(a->v, b->v);                                      \
	}                                                                                           \
	/* Sorts p[0..n) stably, tmp has n entries; returns where the result lies, or NULL when      \
	 * interrupted. */                                                                          \
	static pair_##T *msort_##T(pair_##T *p, pair_##T *tmp, int64_t n, bool desc)                  \
	{                                                                                           \
		for (int64_t lo = 0; lo < n; lo += RUN) {                                               \
			int64_t hi = lo + RUN < n ? lo + RUN : n;                                           \
			for (int64_t i = lo + 1; i < hi; i++) {                                             \
				pair_##T key = p[i];                                                            \
				int64_t j = i;                                                                  \
				for (; j > lo && before_##T(&key, &p[j - 1], desc); j--) p[j] = p[j - 1];       \
				p[j] = key;                                                                     \
			}                                                                                   \
		}                                                                                       \
		pair_##T *src = p, *dst = tmp;                                                          \
		for (int64_t w = RUN; w < n; w *= 2) {                                                  \
			if (n > 65536 && lmi_check_interrupt()) return NULL;                                \
			for (int64_t lo = 0; lo < n; lo += 2 * w) {                                         \
				int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;    \
				int64_t a = lo, b = mid, o = lo;                                                \
				while (a < mid && b < hi)                                                       \
					dst[o++] = before_##T(&src[b], &src[a], desc) ? src[b++] : src[a++];        \
				while (a < mid) dst[o++] = src[a++];                                            \
				while (b < hi) dst[o++] = src[b++];                                             \
			}                                                                                   \
			pair_##T *t = src;                                                                  \
			src = dst;                                                                          \
			dst = t;                                                                            \
		}                                                                                       \
		return src;                                                                             \
	}                                                                                           \
	static lm_status sort_lines_##T(const T *x, int64_t outer, int64_t R, int64_t inner,        \
	                                int64_t k, bool desc, T *vals, int64_t *idx)                \
	{                                                                                           \
		int64_t nlines = outer * inner;                                                         \
		lmi_par_err perr;                                                                       \
		lmi_par_init(&perr);                                                                    \
		int nt = nlines > 1 && nlines * R >= LMI_PARALLEL_GRAIN / 4 ? lmi_num_threads() : 1;   \
		_Pragma("omp parallel num_threads(nt)")                                                 \
		{                                                                                       \
			size_t bytes = 2 * (size_t)R * sizeof(pair_##T);                                    \
			pair_##T *buf = lm_alloc(bytes);                                                    \
			if (!buf) /* the allocator's message is on this worker's thread */                  \
				lmi_par_fail(&perr, lm_last_status(), "sort: scratch for a line of %lld: %s",   \
				             (long long)R, lm_last_error());                                    \
			_Pragma("omp for schedule(dynamic, 16)")                                            \
			for (int64_t l = 0; l < nlines; l++) {                                              \
				if (!buf || atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;    \
				if (lmi_check_interrupt()) {                                                    \
					lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "sort: interrupted");               \
					continue;                                                                   \
				}                                                                               \
				int64_t o = l / inner, j = l % inner;                                           \
				const T *xl = x + o * R * inner + j;                                            \
				for (int64_t r = 0; r < R; r++) buf[r] = (pair_##T){xl[r * inner], r};          \
				pair_##T *s = msort_##T(buf, buf + R, R, desc);                                 \
				if (!s) {                                                                       \
					lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "sort: interrupted");               \
					continue;                                                                   \
				}                                                                               \
				T *vl = vals + o * k * inner + j;                                               \
				int64_t *il = idx + o * k * inner + j;                                          \
				for (int64_t r = 0; r < k; r++) {                                               \
					vl[r * inner] = s[r].v;                                                     \
					il[r * inner] = s[r].i;                                                     \
				}                                                                               \
			}                                                                                   \
			lm_free(buf, bytes);                                                                \
		}                                                                                       \
		return lmi_par_finish(&perr);                                                           \
	}

SORT_TYPE(float, LESS_F)
SORT_TYPE(double, LESS_F)
SORT_TYPE(int32_t, LESS_I)
SORT_TYPE(int64_t, LESS_I)
SORT_TYPE(uint8_t, LESS_I)

lm_status lmi_cpu_sort(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                       bool descending, lm_tensor *values, lm_tensor *indices)
{
	LM_ASSERT(values->dtype == x->dtype && indices->dtype == LM_INT64);
	if (outer * inner == 0 || R == 0) return LM_OK;
	int64_t *ix = (int64_t *)lmi_data(indices);
	const void *xb = lmi_data(x);
	void *vb = lmi_data(values);
	switch (x->dtype) {
	case LM_FLOAT32: return sort_lines_float(xb, outer, R, inner, k, descending, vb, ix);
	case LM_FLOAT64: return sort_lines_double(xb, outer, R, inner, k, descending, vb, ix);
	case LM_INT32: return sort_lines_int32_t(xb, outer, R, inner, k, descending, vb, ix);
	case LM_INT64: return sort_lines_int64_t(xb, outer, R, inner, k, descending, vb, ix);
	case LM_UINT8: return sort_lines_uint8_t(xb, outer, R, inner, k, descending, vb, ix);
	default: LM_ASSERT(0 && "sort dtype");
	}
	return LM_OK;
}
