/*
 * sort.cu — the CUDA module's stable sort along one axis, for sort and topk (cpu/sort.c's
 * contract): one block per line, the line's (key, position) pairs sorted in shared memory by a
 * bitonic network padded to a power of two. Pairs compare by key, then by position: every pair
 * differs, so the network's result is the stable order whatever its exchanges.
 *
 * Keys are cpu/sort.c's: floats (float32 widened to double, which keeps the order) map their bit
 * patterns so that unsigned order is numeric order, -0 made +0 and every NaN the largest key (NaN
 * last ascending, first descending); integers flip the sign bit. Descending complements the key.
 * The values written are read back from x at the sorted positions (bit-exact). A line of up to
 * LMI_CU_SORT_MAX = 4096 entries fits the 48 KiB of shared memory a block gets without opting in
 * (8-byte key + 4-byte position each); the table refuses longer lines with a message naming the
 * limit. Read next: ../backend_cuda.c.
 */
#include "backend/cuda/cu_common.cuh"

/* scalar_math.h's keys, as cpu/sort.c sorts by (float32 widened to double keeps the order) */
__device__ inline uint64_t sort_key(const void *x, int dt, int64_t off)
{
	switch (dt) {
	case LM_FLOAT32: return lmi_sort_key_f64((double)((const float *)x)[off]);
	case LM_FLOAT64: return lmi_sort_key_f64(((const double *)x)[off]);
	case LM_INT32: return lmi_sort_key_i64((int64_t)((const int32_t *)x)[off]);
	case LM_INT64: return lmi_sort_key_i64(((const int64_t *)x)[off]);
	default: return ((const uint8_t *)x)[off];
	}
}

/* Bitonic sort of P (a power of two) pairs, then the first k written out. Dynamic shared memory:
 * P keys, then P positions. Padding pairs carry the largest key and positions >= R: last. */
__global__ void k_sort(const void *x, int dt, int64_t outer, int64_t R, int64_t inner, int64_t k,
                       int desc, int P, void *vals, int64_t *ix)
{
	extern __shared__ uint64_t sh[];
	uint64_t *key = sh;
	uint32_t *pos = (uint32_t *)(sh + P);
	size_t es = dsize(dt);
	for (int64_t line = blockIdx.x; line < outer * inner; line += gridDim.x) {
		int64_t o = line / inner, in = line % inner, base = o * R * inner + in;
		for (int i = threadIdx.x; i < P; i += blockDim.x) {
			if (i < R) {
				uint64_t kk = sort_key(x, dt, base + (int64_t)i * inner);
				key[i] = desc ? ~kk : kk;
			} else {
				key[i] = UINT64_MAX;
			}
			pos[i] = (uint32_t)i;
		}
		__syncthreads();
		for (int size = 2; size <= P; size <<= 1)
			for (int stride = size >> 1; stride > 0; stride >>= 1) {
				for (int i = threadIdx.x; i < P; i += blockDim.x) {
					int l = i ^ stride;
					if (l <= i) continue;
					bool up = (i & size) == 0;
					uint64_t ki = key[i], kl = key[l];
					uint32_t pi = pos[i], pl = pos[l];
					bool gt = ki > kl || (ki == kl && pi > pl); /* pair i after pair l */
					if (gt == up) {
						key[i] = kl, key[l] = ki;
						pos[i] = pl, pos[l] = pi;
					}
				}
				__syncthreads();
			}
		for (int64_t t = threadIdx.x; t < k; t += blockDim.x) {
			int64_t from = base + (int64_t)pos[t] * inner, to = (o * k + t) * inner + in;
			ix[to] = pos[t];
			memcpy((char *)vals + to * (int64_t)es, (const char *)x + from * (int64_t)es, es);
		}
		__syncthreads(); /* the pairs are rewritten for the next line */
	}
}

int lmi_cu_sort(int dtype, const void *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                int descending, void *values, int64_t *indices, char *msg, size_t cap)
{
	int64_t lines = outer * inner;
	if (!lines || !R || !k) return 0;
	if (R > LMI_CU_SORT_MAX) {
		snprintf(msg, cap, "sort: lines of %lld entries exceed %d", (long long)R,
		         LMI_CU_SORT_MAX);
		return 1;
	}
	int P = 1;
	while (P < R) P <<= 1;
	size_t shared = (size_t)P * (sizeof(uint64_t) + sizeof(uint32_t));
	int threads = P < THREADS ? (P < 32 ? 32 : P) : THREADS;
	unsigned grid = (unsigned)(lines < 65535 ? lines : 65535);
	k_sort<<<grid, threads, shared, lmi_cu_stream()>>>(x, dtype, outer, R, inner, k, descending,
	                                                    P, values, indices);
	LAUNCHED("k_sort");
	return 0;
}
