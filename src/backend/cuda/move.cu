/*
 * move.cu — the CUDA module's kernels that move data by position (cpu/cpu_move.h's contracts):
 * index_select, gather, scatter_add, one_hot, cumsum, tril / triu and repeat's tiling.
 *
 * Indices out of range: the ops layer has checked them already (through a host copy), so this
 * is the second line: a kernel skips such an entry and records its position in idx's row-major
 * order with atomicMin on the module's device word (lmi_cu_word, also ewise_int.cu's zero
 * divisor flag; one module, one stream, one caller at a time); the call then reads the word back
 * (one small copy and a wait) and returns LMI_CU_ERR_INDEX with the first bad position and its
 * value, which the table turns into the CPU's message. scatter_add adds by atomics (float sums in
 * no fixed order: the last bits may differ from the CPU's sequential sums; uint8 through a
 * compare-and-swap on the aligned 32-bit word holding the byte). cumsum runs one thread per line, in the CPU's order
 * (double sums for floats, wrapping int64 for integers), so its results equal the CPU's.
 * Read next: sort.cu.
 */
#include "backend/cuda/cu_common.cuh"

/* ---------------------------------------------------------------- the device word */

static int64_t *d_word, *h_word; /* one word on the device, its pinned host copy (made once) */

int lmi_cu_word_reset(char *msg, size_t cap)
{
	if (!d_word) {
		TRY(cudaMalloc((void **)&d_word, sizeof *d_word));
		TRY(cudaMallocHost((void **)&h_word, sizeof *h_word));
	}
	TRY(cudaMemsetAsync(d_word, 0x7f, sizeof *d_word, lmi_cu_stream())); /* LMI_CU_WORD_NONE */
	return 0;
}

int64_t *lmi_cu_word(void)
{
	return d_word;
}

int lmi_cu_word_read(int64_t *v, char *msg, size_t cap)
{
	TRY(cudaMemcpyAsync(h_word, d_word, sizeof *d_word, cudaMemcpyDeviceToHost, lmi_cu_stream()));
	TRY(cudaStreamSynchronize(lmi_cu_stream()));
	*v = *h_word;
	return 0;
}

/* ---------------------------------------------------------------- bad indices */

static int bad_reset(char *msg, size_t cap)
{
	return lmi_cu_word_reset(msg, cap);
}

/* Waits for the kernels; LMI_CU_ERR_INDEX with bad = {position, value} when one was recorded. */
static int bad_read(const lmi_cu_arr *idx, int64_t *bad, char *msg, size_t cap)
{
	int64_t pos;
	int e = lmi_cu_word_read(&pos, msg, cap);
	if (e || pos == LMI_CU_WORD_NONE) return e;
	int64_t off = 0, q = pos;
	for (int d = idx->ndim - 1; d >= 0; d--) {
		off += (q % idx->shape[d]) * idx->stride[d];
		q /= idx->shape[d];
	}
	size_t es = idx->dtype == LM_INT64 ? 8 : 4;
	TRY(cudaMemcpyAsync(h_word, (const char *)idx->data + off * (int64_t)es, es,
	                    cudaMemcpyDeviceToHost, lmi_cu_stream()));
	TRY(cudaStreamSynchronize(lmi_cu_stream()));
	bad[0] = pos;
	bad[1] = es == 8 ? *h_word : (int64_t) * (const int32_t *)h_word;
	snprintf(msg, cap, "index %lld at position %lld is out of range", (long long)bad[1],
	         (long long)pos);
	return LMI_CU_ERR_INDEX;
}

__device__ inline int64_t load_index(const void *p, int dt, int64_t off)
{
	return dt == LM_INT64 ? ((const int64_t *)p)[off] : (int64_t)((const int32_t *)p)[off];
}

__device__ inline void mark_bad(int64_t *flag, int64_t pos)
{
	atomicMin((unsigned long long *)flag, (unsigned long long)pos);
}

/* ---------------------------------------------------------------- index_select */

template <typename E>
__global__ void k_index_select(const void *xv, int64_t outer, int64_t size, int64_t inner,
                               const void *ip, int idt, int64_t n, void *ov, int64_t *flag)
{
	const E *x = (const E *)xv;
	E *out = (E *)ov;
	GRID_LOOP(i, outer * n * inner)
	{
		int64_t in = i % inner, r = i / inner, j = r % n, o = r / n;
		int64_t v = load_index(ip, idt, j);
		if (v < 0 || v >= size) {
			mark_bad(flag, j);
			continue;
		}
		out[i] = x[(o * size + v) * inner + in];
	}
}

int lmi_cu_index_select(const void *x, int esize, int64_t outer, int64_t size, int64_t inner,
                        const lmi_cu_arr *idx, void *out, int64_t *bad, char *msg, size_t cap)
{
	int64_t n = 1;
	for (int d = 0; d < idx->ndim; d++) n *= idx->shape[d];
	int64_t total = outer * n * inner;
	if (!total) return 0;
	int e = bad_reset(msg, cap);
	if (e) return e;
	BY_SIZE(esize, k_index_select, total, x, outer, size, inner, idx->data, idx->dtype, n, out,
	        lmi_cu_word());
	LAUNCHED("k_index_select");
	return bad_read(idx, bad, msg, cap);
}

/* ---------------------------------------------------------------- gather, scatter_add */

/* The positions of idx (nd dims of shape) with the strides of idx (si), of the operand indexed
 * along dim (sa, its size there: size) and of the one walked like idx (sb). */
struct IxGeo {
	int nd, dim, idt;
	int64_t n, size;
	int64_t shape[LMI_CU_MAX_DIMS], si[LMI_CU_MAX_DIMS], sa[LMI_CU_MAX_DIMS],
		sb[LMI_CU_MAX_DIMS];
};

static IxGeo ix_geo(const lmi_cu_arr *idx, int dim, const lmi_cu_arr *a, const lmi_cu_arr *b)
{
	IxGeo g;
	memset(&g, 0, sizeof g);
	g.nd = idx->ndim;
	g.dim = dim;
	g.idt = idx->dtype;
	g.size = a->shape[dim];
	g.n = 1;
	for (int d = 0; d < g.nd; d++) {
		g.shape[d] = idx->shape[d];
		g.n *= idx->shape[d];
		g.si[d] = idx->stride[d];
		g.sa[d] = a->stride[d];
		g.sb[d] = b->stride[d];
	}
	return g;
}

/* Offsets of position e: in idx, in a without dim's term, in b. */
__device__ inline void ix_offsets(const IxGeo &g, int64_t e, int64_t *oi, int64_t *oa, int64_t *ob)
{
	*oi = *oa = *ob = 0;
	for (int d = g.nd - 1; d >= 0; d--) {
		int64_t c = e % g.shape[d];
		e /= g.shape[d];
		*oi += c * g.si[d];
		if (d != g.dim) *oa += c * g.sa[d];
		*ob += c * g.sb[d];
	}
}

/* out (b) at idx's positions = x (a) at the index along dim */
template <typename E>
__global__ void k_gather(IxGeo g, const void *xv, const void *ip, void *ov, int64_t *flag)
{
	const E *x = (const E *)xv;
	E *out = (E *)ov;
	GRID_LOOP(e, g.n)
	{
		int64_t oi, oa, ob;
		ix_offsets(g, e, &oi, &oa, &ob);
		int64_t v = load_index(ip, g.idt, oi);
		if (v < 0 || v >= g.size) {
			mark_bad(flag, e);
			continue;
		}
		out[ob] = x[oa + v * g.sa[g.dim]];
	}
}

int lmi_cu_gather(const lmi_cu_arr *x, int dim, const lmi_cu_arr *idx, const lmi_cu_arr *out,
                  int64_t *bad, char *msg, size_t cap)
{
	IxGeo g = ix_geo(idx, dim, x, out);
	if (!g.n) return 0;
	int e = bad_reset(msg, cap);
	if (e) return e;
	BY_SIZE(dsize(x->dtype), k_gather, g.n, g, x->data, idx->data, out->data, lmi_cu_word());
	LAUNCHED("k_gather");
	return bad_read(idx, bad, msg, cap);
}

__device__ inline void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ inline void atomic_add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
__device__ inline void atomic_add(int64_t *p, int64_t v)
{
	atomicAdd((unsigned long long *)p, (unsigned long long)v); /* wraps as the CPU's sum */
}
/* a byte: compare-and-swap on its aligned 32-bit word (device allocations are 256-aligned, so
 * the word lies in the allocation's memory) */
__device__ inline void atomic_add(uint8_t *p, uint8_t v)
{
	unsigned *w = (unsigned *)((uintptr_t)p & ~(uintptr_t)3);
	unsigned shift = (unsigned)((uintptr_t)p & 3) * 8, old = *w, seen;
	do {
		seen = old;
		unsigned byte = ((seen >> shift) + v) & 0xffu;
		old = atomicCAS(w, seen, (seen & ~(0xffu << shift)) | (byte << shift));
	} while (old != seen);
}

/* out (a) at the index along dim += src (b) at idx's positions */
template <typename T>
__global__ void k_scatter_add(IxGeo g, T *out, const void *ip, const T *src, int64_t *flag)
{
	GRID_LOOP(e, g.n)
	{
		int64_t oi, oa, ob;
		ix_offsets(g, e, &oi, &oa, &ob);
		int64_t v = load_index(ip, g.idt, oi);
		if (v < 0 || v >= g.size) {
			mark_bad(flag, e);
			continue;
		}
		atomic_add(out + oa + v * g.sa[g.dim], src[ob]);
	}
}

int lmi_cu_scatter_add(const lmi_cu_arr *out, int dim, const lmi_cu_arr *idx,
                       const lmi_cu_arr *src, int64_t *bad, char *msg, size_t cap)
{
	IxGeo g = ix_geo(idx, dim, out, src);
	if (!g.n) return 0;
	int e = bad_reset(msg, cap);
	if (e) return e;
	unsigned nb = blocks_for(g.n);
	cudaStream_t s = lmi_cu_stream();
	switch (out->dtype) {
	case LM_FLOAT32:
		k_scatter_add<float><<<nb, THREADS, 0, s>>>(g, (float *)out->data, idx->data,
		                                            (const float *)src->data, lmi_cu_word());
		break;
	case LM_FLOAT64:
		k_scatter_add<double><<<nb, THREADS, 0, s>>>(g, (double *)out->data, idx->data,
		                                             (const double *)src->data, lmi_cu_word());
		break;
	case LM_INT32:
		k_scatter_add<int32_t><<<nb, THREADS, 0, s>>>(g, (int32_t *)out->data, idx->data,
		                                              (const int32_t *)src->data, lmi_cu_word());
		break;
	case LM_INT64:
		k_scatter_add<int64_t><<<nb, THREADS, 0, s>>>(g, (int64_t *)out->data, idx->data,
		                                              (const int64_t *)src->data, lmi_cu_word());
		break;
	default:
		k_scatter_add<uint8_t><<<nb, THREADS, 0, s>>>(g, (uint8_t *)out->data, idx->data,
		                                              (const uint8_t *)src->data, lmi_cu_word());
		break;
	}
	LAUNCHED("k_scatter_add");
	return bad_read(idx, bad, msg, cap);
}

/* ---------------------------------------------------------------- one_hot */

__global__ void k_one_hot(const void *ip, int idt, int64_t n, int64_t classes, int64_t *out,
                          int64_t *flag)
{
	GRID_LOOP(i, n)
	{
		int64_t v = load_index(ip, idt, i);
		if (v < 0 || v >= classes) mark_bad(flag, i);
		else out[i * classes + v] = 1;
	}
}

int lmi_cu_one_hot(const lmi_cu_arr *idx, int64_t classes, int64_t *out, int64_t *bad,
                   char *msg, size_t cap)
{
	int64_t n = 1;
	for (int d = 0; d < idx->ndim; d++) n *= idx->shape[d];
	if (!n) return 0;
	int e = bad_reset(msg, cap);
	if (e) return e;
	k_one_hot<<<blocks_for(n), THREADS, 0, lmi_cu_stream()>>>(idx->data, idx->dtype, n, classes,
	                                                          out, lmi_cu_word());
	LAUNCHED("k_one_hot");
	return bad_read(idx, bad, msg, cap);
}

/* ---------------------------------------------------------------- cumsum */

/* One thread per line (o, j) down R; neighbouring threads take neighbouring j (coalesced when
 * inner is wide). ACC: double for floats, uint64_t (wrapping) for integers. */
template <typename T, typename OT, typename ACC>
__global__ void k_cumsum(const T *x, OT *out, int64_t outer, int64_t R, int64_t inner)
{
	GRID_LOOP(l, outer * inner)
	{
		int64_t o = l / inner, j = l % inner;
		const T *xl = x + o * R * inner + j;
		OT *ol = out + o * R * inner + j;
		ACC acc = 0;
		for (int64_t r = 0; r < R; r++) {
			acc += (ACC)xl[r * inner];
			ol[r * inner] = (OT)acc;
		}
	}
}

int lmi_cu_cumsum(int dtype, const void *x, int64_t outer, int64_t R, int64_t inner, void *out,
                  char *msg, size_t cap)
{
	if (!outer || !R || !inner) return 0;
	int64_t lines = outer * inner;
	unsigned nb = blocks_for(lines);
	cudaStream_t s = lmi_cu_stream();
	switch (dtype) {
	case LM_FLOAT32:
		k_cumsum<float, float, double><<<nb, THREADS, 0, s>>>((const float *)x, (float *)out,
		                                                      outer, R, inner);
		break;
	case LM_FLOAT64:
		k_cumsum<double, double, double><<<nb, THREADS, 0, s>>>((const double *)x,
		                                                        (double *)out, outer, R, inner);
		break;
	case LM_INT32:
		k_cumsum<int32_t, int64_t, uint64_t><<<nb, THREADS, 0, s>>>(
			(const int32_t *)x, (int64_t *)out, outer, R, inner);
		break;
	case LM_INT64:
		k_cumsum<int64_t, int64_t, uint64_t><<<nb, THREADS, 0, s>>>(
			(const int64_t *)x, (int64_t *)out, outer, R, inner);
		break;
	default:
		k_cumsum<uint8_t, int64_t, uint64_t><<<nb, THREADS, 0, s>>>(
			(const uint8_t *)x, (int64_t *)out, outer, R, inner);
		break;
	}
	LAUNCHED("k_cumsum");
	return 0;
}

/* ---------------------------------------------------------------- tril / triu */

template <typename E>
__global__ void k_triangle(const void *xv, int64_t B, int64_t M, int64_t N, int64_t k, int upper,
                           void *ov)
{
	const E *x = (const E *)xv;
	E *out = (E *)ov;
	GRID_LOOP(e, B * M * N)
	{
		int64_t j = e % N, i = (e / N) % M, d = j - i; /* |d| < 2^62: no overflow against k */
		out[e] = (upper ? d >= k : d <= k) ? x[e] : (E)0;
	}
}

int lmi_cu_triangle(int esize, const void *x, int64_t B, int64_t M, int64_t N, int64_t k,
                    int upper, void *out, char *msg, size_t cap)
{
	int64_t n = B * M * N;
	if (!n) return 0;
	BY_SIZE(esize, k_triangle, n, x, B, M, N, k, upper, out);
	LAUNCHED("k_triangle");
	return 0;
}

/* ---------------------------------------------------------------- repeat */

struct Tile {
	int nd;
	int64_t n;
	int64_t shape[LMI_CU_MAX_DIMS], xshape[LMI_CU_MAX_DIMS];
};

/* Each element outside the corner block copies the corner element at its coordinates modulo
 * xshape: the corner is only read, so no thread reads what another writes. */
template <typename E> __global__ void k_repeat(Tile t, void *ov)
{
	E *out = (E *)ov;
	GRID_LOOP(e, t.n)
	{
		int64_t q = e, src = 0, stride = 1;
		bool corner = true;
		for (int d = t.nd - 1; d >= 0; d--) {
			int64_t c = q % t.shape[d];
			q /= t.shape[d];
			corner = corner && c < t.xshape[d];
			src += (c % t.xshape[d]) * stride;
			stride *= t.shape[d];
		}
		if (!corner) out[e] = out[src];
	}
}

int lmi_cu_repeat_fill(int esize, void *out, int nd, const int64_t *shape, const int64_t *xshape,
                       char *msg, size_t cap)
{
	Tile t;
	memset(&t, 0, sizeof t);
	t.nd = nd;
	t.n = 1;
	for (int d = 0; d < nd; d++) {
		t.shape[d] = shape[d];
		t.xshape[d] = xshape[d];
		t.n *= shape[d];
	}
	if (!t.n) return 0;
	BY_SIZE(esize, k_repeat, t.n, t, out);
	LAUNCHED("k_repeat");
	return 0;
}
