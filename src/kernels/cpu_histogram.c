/*
 * cpu_histogram.c — the CPU runs of the histogram pattern: the three strategies of PMPP chapter 9,
 * each as the CPU does it, so that their costs can be timed on real hardware.
 *
 * Privatized: each thread counts its contiguous share of the input into private histograms on its
 * own stack (no atomics, no sharing: the CPU form of PMPP's per-block shared-memory copies), and
 * adds them into the result once at the end; several sub-histograms per thread, consecutive
 * elements going to different ones (the counting loops are cpu_loops.h's, compiled for the SIMD
 * path in use). Bytes are always counted in 256 bins and mapped to the caller's bins at the end
 * (lut), so text binned as b * bins / 256 costs nothing extra. Counters are 32-bit within a block
 * of the input and are added into 64-bit totals after each.
 * Global atomics: every element is an atomic add (`lock add`) on the shared result, from every
 * thread: the threads' cores pass the counters' cache lines back and forth, the contention the
 * lecture's first kernel suffers. Aggregated: the same atomics, but a run of consecutive elements
 * of one bin is a single atomic add of the run's length (PMPP's aggregation; it pays on inputs
 * with runs, an image's flat regions, and costs a comparison per element on random ones).
 * Read next: body/histogram.h (the same pattern on a GPU), cpu_loops.h, cpu_kernels.h.
 */
#include <string.h>

#include "kernels/cpu_simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define BLOCK ((int64_t)1 << 20)   /* elements between two polls of stop */
#define FLUSH ((int64_t)1 << 30)   /* elements counted before 32-bit counters are flushed */
#define SUB_ENTRIES LMI_CPU_HIST_SUB_ENTRIES /* 32 KiB of private counters per thread: fits L1 */

/* ---------------------------------------------------------------- privatized */

/* Adds the thread's counters into counts (one thread at a time) and clears them. */
static void flush_bytes(uint32_t (*c)[256], const uint16_t *lut, int64_t *counts)
{
	int64_t sum[256];
	for (int b = 0; b < 256; b++) {
		uint64_t s = 0;
		for (int k = 0; k < 8; k++) s += c[k][b];
		sum[b] = (int64_t)s;
	}
#ifdef _OPENMP
#pragma omp critical(lmi_cpu_histogram)
#endif
	for (int b = 0; b < 256; b++) counts[lut[b]] += sum[b];
	memset(c, 0, 8 * 256 * sizeof(uint32_t));
}

int lmi_cpu_histogram_u8(const uint8_t *x, int64_t n, const uint16_t lut[256], int64_t *counts,
                         const atomic_int *stop)
{
	const lmi_cpu_loops *L = lmi_cpu_loops_get();
	int64_t nblocks = (n + BLOCK - 1) / BLOCK;
	int quit = 0;
	int nt = lmi_cpu_kernel_threads();
	(void)nt;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) reduction(| : quit)
#endif
	{
		_Alignas(64) uint32_t c[8][256];
		memset(c, 0, sizeof c);
		int64_t since = 0;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
		LMI_FOR_BLOCKS_UNTIL_STOPPED(blk, nblocks, quit, stop) {
			int64_t lo = blk * BLOCK, len = n - lo < BLOCK ? n - lo : BLOCK;
			L->count_u8(x + lo, len, c);
			if ((since += len) >= FLUSH) {
				flush_bytes(c, lut, counts);
				since = 0;
			}
		}
		if (since) flush_bytes(c, lut, counts);
	}
	return quit;
}

int lmi_cpu_histogram_copies(int64_t bins)
{
	int copies = 8;
	while (copies > 1 && copies * bins > SUB_ENTRIES) copies /= 2;
	return copies;
}

static void flush_i32(uint32_t *sub, int64_t bins, int copies, int64_t *counts)
{
#ifdef _OPENMP
#pragma omp critical(lmi_cpu_histogram)
#endif
	for (int64_t b = 0; b < bins; b++) {
		uint64_t s = 0;
		for (int k = 0; k < copies; k++) s += sub[k * bins + b];
		counts[b] += (int64_t)s;
	}
	memset(sub, 0, (size_t)(copies * bins) * sizeof *sub);
}

int lmi_cpu_histogram_i32(const int32_t *x, int64_t n, int64_t bins, int64_t *counts,
                          const atomic_int *stop)
{
	if (bins < 1 || bins > SUB_ENTRIES / 2) return 0; /* the caller checks: 1..4096 */
	const lmi_cpu_loops *L = lmi_cpu_loops_get();
	int copies = lmi_cpu_histogram_copies(bins);
	int64_t nblocks = (n + BLOCK - 1) / BLOCK;
	int quit = 0;
	int nt = lmi_cpu_kernel_threads();
	(void)nt;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) reduction(| : quit)
#endif
	{
		_Alignas(64) uint32_t sub[SUB_ENTRIES];
		memset(sub, 0, (size_t)(copies * bins) * sizeof *sub);
		int64_t since = 0;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
		LMI_FOR_BLOCKS_UNTIL_STOPPED(blk, nblocks, quit, stop) {
			int64_t lo = blk * BLOCK, len = n - lo < BLOCK ? n - lo : BLOCK;
			L->count_i32(x + lo, len, sub, bins, copies);
			if ((since += len) >= FLUSH) {
				flush_i32(sub, bins, copies, counts);
				since = 0;
			}
		}
		if (since) flush_i32(sub, bins, copies, counts);
	}
	return quit;
}

/* ---------------------------------------------------------------- global atomics */

static inline void atomic_count(int64_t *counts, int64_t bin, int64_t k)
{
	__atomic_fetch_add(&counts[bin], k, __ATOMIC_RELAXED);
}

/* One block of the input: an atomic add per element, or per run of one bin (aggregate). BIN(i)
 * is element i's bin. */
#define ATOMIC_BLOCK(BIN)                                                                          \
	if (!aggregate) {                                                                          \
		for (int64_t i = lo; i < hi; i++) atomic_count(counts, BIN(i), 1);                 \
	} else {                                                                                   \
		int64_t cur = BIN(lo), run = 0;                                                    \
		for (int64_t i = lo; i < hi; i++) {                                                \
			int64_t b = BIN(i);                                                        \
			if (b != cur) {                                                            \
				atomic_count(counts, cur, run);                                    \
				cur = b;                                                           \
				run = 0;                                                           \
			}                                                                          \
			run++;                                                                     \
		}                                                                                  \
		atomic_count(counts, cur, run);                                                    \
	}

#ifdef _OPENMP
#define OMP_FOR_BLOCKS _Pragma("omp parallel for schedule(static) num_threads(nt) reduction(| : quit)")
#else
#define OMP_FOR_BLOCKS
#endif

#define BYTE_BIN(i) ((int64_t)lut[x[i]])
#define INDEX_BIN(i) ((int64_t)x[i])

/* Either input (the other NULL): bytes binned through lut, or int32 bin indices. */
static int atomic_blocks(const uint8_t *xb, const int32_t *xi, int64_t n, const uint16_t *lut,
                         int64_t *counts, int aggregate, const atomic_int *stop)
{
	int64_t nblocks = (n + BLOCK - 1) / BLOCK;
	int quit = 0, nt = lmi_cpu_kernel_threads();
	(void)nt;
	OMP_FOR_BLOCKS
	LMI_FOR_BLOCKS_UNTIL_STOPPED(blk, nblocks, quit, stop) {
		int64_t lo = blk * BLOCK, hi = n - lo < BLOCK ? n : lo + BLOCK;
		if (xb) {
			const uint8_t *x = xb;
			ATOMIC_BLOCK(BYTE_BIN);
		} else {
			const int32_t *x = xi;
			ATOMIC_BLOCK(INDEX_BIN);
		}
	}
	return quit;
}

int lmi_cpu_histogram_atomic_u8(const uint8_t *x, int64_t n, const uint16_t lut[256],
                                int64_t *counts, int aggregate, const atomic_int *stop)
{
	return atomic_blocks(x, NULL, n, lut, counts, aggregate, stop);
}

int lmi_cpu_histogram_atomic_i32(const int32_t *x, int64_t n, int64_t *counts, int aggregate,
                                 const atomic_int *stop)
{
	return atomic_blocks(NULL, x, n, NULL, counts, aggregate, stop);
}
