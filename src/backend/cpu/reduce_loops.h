/*
 * reduce_loops.h — the dense inner loops of the reductions, included by each simd_<isa>.c (see
 * simd.h); the drivers (layouts, threads, every op and dtype) are in reduce.c.
 *
 * lanes: L independent accumulators, lane l adding the elements at i = l (mod L). Independent
 * lanes vectorise without reassociating any sum, so every path computes the same sums (up to the
 * order of the final additions). With L = 32 this is a dense sum; a multiple of k lanes is the sum
 * of a dense (rows, k) block into k outputs (the sum over dim 1 of a transposed (n, 2)). float32
 * lanes add runs of 64 elements in float (a rounding error near 64 ulp at worst, a few in
 * practice) and each run's lane values in double: converting every element to double made the
 * loop compute-bound (8.6 ms for 16M elements against 4.9 ms to stream them here).
 * Read next: reduce.c.
 */

#define LANE_RUN 64 /* float32 elements per lane added in float before going into double */

static void lanes_f32(const float *x, int64_t n, int L, double *part)
{
	int64_t blk = (int64_t)LANE_RUN * L, i = 0;
	if (L == 32) { /* the dense sum: a constant lane count unrolls into whole vectors */
		for (; i + blk <= n; i += blk) {
			float l[32] = {0};
			for (int64_t j = 0; j < blk; j += 32)
				LMI_OMP_SIMD for (int k = 0; k < 32; k++) l[k] += x[i + j + k];
			for (int k = 0; k < 32; k++) part[k] += (double)l[k];
		}
	} else {
		for (; i + blk <= n; i += blk) {
			float l[256];
			for (int k = 0; k < L; k++) l[k] = 0;
			for (int64_t j = 0; j < blk; j += L)
				LMI_OMP_SIMD for (int k = 0; k < L; k++) l[k] += x[i + j + k];
			for (int k = 0; k < L; k++) part[k] += (double)l[k];
		}
	}
	for (int k = 0; i < n; i++, k = k + 1 == L ? 0 : k + 1) part[k] += (double)x[i];
}

static void lanes_f64(const double *x, int64_t n, int L, double *part)
{
	int64_t i = 0;
	if (L == 32) {
		for (; i + 32 <= n; i += 32) LMI_OMP_SIMD for (int k = 0; k < 32; k++) part[k] += x[i + k];
	} else {
		for (; i + L <= n; i += L) LMI_OMP_SIMD for (int k = 0; k < L; k++) part[k] += x[i + k];
	}
	for (int k = 0; i < n; i++, k++) part[k] += x[i];
}

static void rowacc_f32(double *restrict acc, const float *restrict x, int64_t n)
{
	LMI_OMP_SIMD for (int64_t j = 0; j < n; j++) acc[j] += (double)x[j];
}

static void rowacc_f64(double *restrict acc, const double *restrict x, int64_t n)
{
	LMI_OMP_SIMD for (int64_t j = 0; j < n; j++) acc[j] += x[j];
}
