/*
 * cpu_loops.h (internal, included once by each cpu_loops_<isa>.c inside its target region) — the
 * kernels' loops that plain C expresses for every path: the compiler vectorises them for the
 * path's registers (not at all for scalar). Each function is static; the includer puts them in its
 * table (cpu_simd.h says what each does).
 *
 * Histogram counting: a single counter array makes the loop wait on itself (`c[x[i]]++` reads a
 * counter the previous iteration may just have written: a run of equal values is a chain of
 * store-to-load forwardings, ~5 cycles each), so consecutive elements go to different
 * sub-histograms and their increments overlap; bytes are read eight at a time and taken out with
 * shifts (fewer instructions than eight byte loads). Counting is bound by its loads and stores on
 * every path, so it is the same C on each: an AVX-512 version (16 lane-private histograms, gather
 * + add + scatter of 16 counters, no conflicts) was measured at 2.3 GB/s against 4.2 for this loop
 * on one core of the 2-core EPYC (2^26 random bytes), and not kept.
 * Read next: cpu_simd.h, cpu_histogram.c, cpu_kernels.c (the Kogge-Stone scan), cpu_dense.c.
 */

/* 256 byte counters x 8 sub-histograms; byte j of each 4-byte word goes to sub-histogram j (or
 * j + 4 for the second word), so eight consecutive bytes never touch the same counter. */
static void count_u8(const uint8_t *x, int64_t n, uint32_t (*c)[256])
{
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		uint32_t a, b, d, e;
		memcpy(&a, x + i, 4);
		memcpy(&b, x + i + 4, 4);
		memcpy(&d, x + i + 8, 4);
		memcpy(&e, x + i + 12, 4);
		c[0][a & 255]++, c[1][(a >> 8) & 255]++, c[2][(a >> 16) & 255]++, c[3][a >> 24]++;
		c[4][b & 255]++, c[5][(b >> 8) & 255]++, c[6][(b >> 16) & 255]++, c[7][b >> 24]++;
		c[0][d & 255]++, c[1][(d >> 8) & 255]++, c[2][(d >> 16) & 255]++, c[3][d >> 24]++;
		c[4][e & 255]++, c[5][(e >> 8) & 255]++, c[6][(e >> 16) & 255]++, c[7][e >> 24]++;
	}
	for (; i < n; i++) c[i & 7][x[i]]++;
}

/* int32 bin indices in 0..bins-1: element i goes to copy i % copies. */
static void count_i32(const int32_t *x, int64_t n, uint32_t *sub, int64_t bins, int copies)
{
	uint32_t *p[8];
	for (int k = 0; k < 8; k++) p[k] = sub + (k % copies) * bins;
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		p[0][x[i]]++, p[1][x[i + 1]]++, p[2][x[i + 2]]++, p[3][x[i + 3]]++;
		p[4][x[i + 4]]++, p[5][x[i + 5]]++, p[6][x[i + 6]]++, p[7][x[i + 7]]++;
	}
	for (; i < n; i++) p[i & 7][x[i]]++;
}

/* Kogge-Stone over a section in the cache (cpu_kernels.c): the first step reads x, each later
 * one the previous step's result; every step adds each element's neighbour s places back (n - s
 * additions: the work-inefficient scan's n log2 n in all). */
#define KS_SECTION(T, name)                                                                        \
	static double name(const T *x, T *y, int64_t n, double carry_in, int exclusive, T *buf)    \
	{                                                                                          \
		const T *prev = x;                                                                 \
		T *next = buf, carry = (T)carry_in;                                                \
		for (int64_t s = 1; s < n; s *= 2) {                                               \
			for (int64_t i = 0; i < s; i++) next[i] = prev[i];                         \
			for (int64_t i = s; i < n; i++) next[i] = prev[i] + prev[i - s];           \
			prev = next;                                                               \
			next = next == buf ? buf + n : buf;                                        \
		}                                                                                  \
		if (exclusive) {                                                                   \
			y[0] = carry;                                                              \
			for (int64_t i = 1; i < n; i++) y[i] = carry + prev[i - 1];                \
		} else {                                                                           \
			for (int64_t i = 0; i < n; i++) y[i] = carry + prev[i];                    \
		}                                                                                  \
		return n > 0 ? carry + prev[n - 1] : carry;                                        \
	}
KS_SECTION(float, ks_section_f32)
KS_SECTION(double, ks_section_f64)
#undef KS_SECTION

/* C tile += A tile B tile: a row of C's tile gains a multiple of a row of B's tile per element of
 * A's (the loop over columns is the vector loop). */
#define TILE(T, name)                                                                              \
	static void name(T *c, int64_t ldc, const T *a, int64_t lda, const T *b, int64_t ldb,      \
	                 int64_t ti, int64_t tp, int64_t tj)                                       \
	{                                                                                          \
		for (int64_t i = 0; i < ti; i++) {                                                 \
			T *restrict ci = c + i * ldc;                                              \
			for (int64_t p = 0; p < tp; p++) {                                         \
				T av = a[i * lda + p];                                             \
				const T *restrict bp = b + p * ldb;                                \
				for (int64_t j = 0; j < tj; j++) ci[j] += av * bp[j];              \
			}                                                                          \
		}                                                                                  \
	}
TILE(float, tile_f32)
TILE(double, tile_f64)
#undef TILE

/* The table's loop entries: the same names in every path's file (each file sets .isa and
 * .scan_how, then this). */
#define LMI_CPU_LOOPS_ENTRIES                                                                     \
	.sum_f32 = sum_f32, .sum_f64 = sum_f64, .scan_f32 = scan_f32, .scan_f64 = scan_f64,        \
	.ks_section_f32 = ks_section_f32, .ks_section_f64 = ks_section_f64, .count_u8 = count_u8,  \
	.count_i32 = count_i32, .dot_f32 = dot_f32, .dot_f64 = dot_f64, .slot_f32 = slot_f32,      \
	.slot_f64 = slot_f64, .tile_f32 = tile_f32, .tile_f64 = tile_f64
