/*
 * sort.c — CPU stable sort along one axis, for sort and topk.
 *
 * Two algorithms, both stable, chosen per line length R:
 *   short lines (R <= 64): (value, index) pairs, insertion sort on runs of 16, then merges that
 *     take from the left run on ties;
 *   long lines: LSD radix sort of order-preserving unsigned keys with 32-bit indices, 8 bits per
 *     pass (one histogram pass for all digits; passes where every key has the same digit are
 *     skipped). Comparison merges mispredict about every other branch: 16 lines of 256K floats
 *     took 500 ms on one core that way, against ~60 ms by radix.
 * Keys: floats map their bit patterns so that unsigned order is numeric order, with -0 made +0
 * (they compare equal) and every NaN made the largest key, so NaN comes last ascending and first
 * descending, as in PyTorch; descending sorts complement the keys. The values written out are
 * read back from x by the sorted indices, so they are bit-exact (NaN payloads, -0).
 * Lines run in parallel, each thread with its own scratch from the counting allocator; an
 * allocation failure in a worker is carried to the caller. Read next: ../../ops/sort.c.
 */
#include <string.h>

#include "backend/cpu/cpu_move.h"
#include "backend/scalar_math.h"

#define RUN 16
#define SHORT_LINE 64

/* ---------------------------------------------------------------- keys */

/* scalar_math.h's keys (the CUDA module sorts by the same), one name per element type. */
#define key_float lmi_sort_key_f32
#define key_double lmi_sort_key_f64
#define key_int32_t lmi_sort_key_i32
#define key_int64_t lmi_sort_key_i64
static inline uint32_t key_uint8_t(uint8_t v) { return v; }

/* ---------------------------------------------------------------- radix sort */

/* Sorts keys k[0..n) with their indices ix[0..n) stably; kb/ib are scratch of n entries. Returns
 * which buffer holds the result (0: k/ix, 1: kb/ib), or -1 when interrupted. */
#define RADIX(K)                                                                                    \
	static int radix_##K(K *k, uint32_t *ix, K *kb, uint32_t *ib, int64_t n)                        \
	{                                                                                           \
		enum { P = sizeof(K) };                                                                 \
		uint32_t hist[P][256];                                                                  \
		memset(hist, 0, sizeof hist);                                                           \
		for (int64_t i = 0; i < n; i++) {                                                       \
			K v = k[i];                                                                         \
			for (int p = 0; p < P; p++) hist[p][(v >> (8 * p)) & 255]++;                        \
		}                                                                                       \
		K *sk = k, *dk = kb;                                                                    \
		uint32_t *si = ix, *di = ib;                                                            \
		int where = 0;                                                                          \
		for (int p = 0; p < P; p++) {                                                           \
			uint32_t *h = hist[p];                                                              \
			if (h[(sk[0] >> (8 * p)) & 255] == (uint32_t)n) continue; /* one digit: no-op */    \
			if (n > 65536 && lmi_check_interrupt()) return -1;                                  \
			uint32_t off = 0;                                                                   \
			for (int d = 0; d < 256; d++) {                                                     \
				uint32_t c = h[d];                                                              \
				h[d] = off;                                                                     \
				off += c;                                                                       \
			}                                                                                   \
			for (int64_t i = 0; i < n; i++) {                                                   \
				K v = sk[i];                                                                    \
				uint32_t pos = h[(v >> (8 * p)) & 255]++;                                       \
				dk[pos] = v;                                                                    \
				di[pos] = si[i];                                                                \
			}                                                                                   \
			K *tk = sk;                                                                         \
			sk = dk, dk = tk;                                                                   \
			uint32_t *ti = si;                                                                  \
			si = di, di = ti;                                                                   \
			where ^= 1;                                                                         \
		}                                                                                       \
		return where;                                                                           \
	}
RADIX(uint32_t)
RADIX(uint64_t)

/* ---------------------------------------------------------------- merge sort (short lines) */

/* a strictly before b in ascending order (NaN last). */
#define LESS_F(a, b) ((a) < (b) || ((b) != (b) && (a) == (a)))
#define LESS_I(a, b) ((a) < (b))

#define MERGE_SORT(T, LESS)                                                                         \
	typedef struct pair_##T {                                                                       \
		T v;                                                                                    \
		int64_t i;                                                                              \
	} pair_##T;                                                                                 \
	static inline bool before_##T(const pair_##T *a, const pair_##T *b, bool desc)                 \
	{                                                                                           \
		return desc ? LESS(b->v, a->v) : LESS(a->v, b->v);                                      \
	}                                                                                           \
	/* Sorts p[0..n) stably with tmp of n entries; returns where the result lies. */            \
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
	}

MERGE_SORT(float, LESS_F)
MERGE_SORT(double, LESS_F)
MERGE_SORT(int32_t, LESS_I)
MERGE_SORT(int64_t, LESS_I)
MERGE_SORT(uint8_t, LESS_I)

/* ---------------------------------------------------------------- lines */

/*
 * One line: x[0], x[inner], ... (R values) -> the first k sorted values and indices, at stride
 * inner. scratch: the thread's buffer (see scratch_bytes). Returns false when interrupted.
 */
#define SORT_LINE(T, K)                                                                             \
	static bool sort_line_##T(const void *xv, int64_t R, int64_t inner, int64_t k, bool desc,   \
	                          void *valsv, int64_t *idx, void *scratch)                        \
	{                                                                                           \
		const T *x = xv;                                                                        \
		T *vals = valsv;                                                                        \
		if (R <= SHORT_LINE) {                                                                  \
			pair_##T *buf = scratch;                                                            \
			for (int64_t r = 0; r < R; r++) buf[r] = (pair_##T){x[r * inner], r};              \
			pair_##T *s = msort_##T(buf, buf + R, R, desc);                                     \
			for (int64_t r = 0; r < k; r++) {                                                   \
				vals[r * inner] = s[r].v;                                                       \
				idx[r * inner] = s[r].i;                                                        \
			}                                                                                   \
			return true;                                                                        \
		}                                                                                       \
		K *kk = scratch, *kb = kk + R;                                                          \
		uint32_t *ix = (uint32_t *)(kb + R), *ib = ix + R;                                      \
		const K flip = desc ? (K)~(K)0 : 0;                                                     \
		for (int64_t r = 0; r < R; r++) {                                                       \
			kk[r] = key_##T(x[r * inner]) ^ flip;                                               \
			ix[r] = (uint32_t)r;                                                                \
		}                                                                                       \
		int where = radix_##K(kk, ix, kb, ib, R);                                               \
		if (where < 0) return false;                                                            \
		const uint32_t *sorted = where ? ib : ix;                                               \
		for (int64_t r = 0; r < k; r++) {                                                       \
			uint32_t j = sorted[r];                                                             \
			vals[r * inner] = x[(int64_t)j * inner];                                            \
			idx[r * inner] = j;                                                                 \
		}                                                                                       \
		return true;                                                                            \
	}
SORT_LINE(float, uint32_t)
SORT_LINE(double, uint64_t)
SORT_LINE(int32_t, uint32_t)
SORT_LINE(int64_t, uint64_t)
SORT_LINE(uint8_t, uint32_t)

typedef bool (*sort_line_fn)(const void *x, int64_t R, int64_t inner, int64_t k, bool desc,
                             void *vals, int64_t *idx, void *scratch);

/* Scratch for one line: pairs for the merge sort, or two key and two index buffers. */
static size_t scratch_bytes(lm_dtype dt, int64_t R)
{
	size_t es = lm_dtype_size(dt), ks = es == 8 ? 8 : 4;
	if (R <= SHORT_LINE) return 2 * (size_t)R * 16; /* pair: value padded to 8, index 8 */
	return 2 * (size_t)R * (ks + 4);
}

lm_status lmi_cpu_sort(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                       bool descending, lm_tensor *values, lm_tensor *indices)
{
	LM_ASSERT(values->dtype == x->dtype && indices->dtype == LM_INT64);
	int64_t nlines = outer * inner;
	if (nlines == 0 || R == 0) return LM_OK;
	if (R > (int64_t)INT32_MAX)
		return lmi_fail(LM_ERR_UNSUPPORTED, "sort: a line of %lld elements exceeds the 2^31 that the "
		                "sort supports", (long long)R);
	static const sort_line_fn line_of[LM_DTYPE_COUNT] = {
		[LM_FLOAT32] = sort_line_float, [LM_FLOAT64] = sort_line_double,
		[LM_INT32] = sort_line_int32_t, [LM_INT64] = sort_line_int64_t,
		[LM_UINT8] = sort_line_uint8_t,
	};
	sort_line_fn fn = line_of[x->dtype];
	size_t es = lmi_elem_size(x->dtype), bytes = scratch_bytes(x->dtype, R);
	const char *xb = lmi_data(x);
	char *vb = lmi_data(values);
	int64_t *ib = (int64_t *)lmi_data(indices);
	lmi_par_err perr;
	lmi_par_init(&perr);
	int nt = nlines > 1 && nlines * R >= LMI_PARALLEL_GRAIN / 4 ? lmi_num_threads() : 1;
	if (nt > nlines) nt = (int)nlines;
#pragma omp parallel num_threads(nt)
	{
		void *buf = lm_alloc(bytes);
		if (!buf) /* the allocator's message is on this worker's thread */
			lmi_par_fail(&perr, lm_last_status(), "sort: scratch for a line of %lld: %s",
			             (long long)R, lm_last_error());
#pragma omp for schedule(dynamic, 1)
		for (int64_t l = 0; l < nlines; l++) {
			if (!buf || atomic_load_explicit(&perr.set, memory_order_relaxed)) continue;
			if (lmi_check_interrupt()) {
				lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "sort: interrupted");
				continue;
			}
			int64_t o = l / inner, j = l % inner;
			const char *xl = xb + (size_t)(o * R * inner + j) * es;
			char *vl = vb + (size_t)(o * k * inner + j) * es;
			if (!fn(xl, R, inner, k, descending, vl, ib + o * k * inner + j, buf))
				lmi_par_fail(&perr, LM_ERR_INTERRUPTED, "sort: interrupted");
		}
		lm_free(buf, bytes);
	}
	return lmi_par_finish(&perr);
}
