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

/* acc[j] += sum over r < rows of x[r * rs + j], j < n: eight rows added in float, then into
 * double (converting every element made the sum over a transposed 4096^2's long dim 1.6x
 * PyTorch's time on the AVX2 path; a float rounding error of a few ulp per eight rows). */
static void rowsacc_f32(double *restrict acc, const float *restrict x, int64_t rows, int64_t rs,
                        int64_t n)
{
	int64_t r = 0;
	for (; r + 8 <= rows; r += 8) {
		const float *p = x + r * rs;
		LMI_OMP_SIMD for (int64_t j = 0; j < n; j++)
		{
			float s = ((p[j] + p[rs + j]) + (p[2 * rs + j] + p[3 * rs + j])) +
			          ((p[4 * rs + j] + p[5 * rs + j]) + (p[6 * rs + j] + p[7 * rs + j]));
			acc[j] += (double)s;
		}
	}
	for (; r < rows; r++) {
		const float *p = x + r * rs;
		LMI_OMP_SIMD for (int64_t j = 0; j < n; j++) acc[j] += (double)p[j];
	}
}

static void rowsacc_f64(double *restrict acc, const double *restrict x, int64_t rows, int64_t rs,
                        int64_t n)
{
	for (int64_t r = 0; r < rows; r++) {
		const double *p = x + r * rs;
		LMI_OMP_SIMD for (int64_t j = 0; j < n; j++) acc[j] += p[j];
	}
}
