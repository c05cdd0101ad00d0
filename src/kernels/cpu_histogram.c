/*
 * cpu_histogram.c — the CPU run of the histogram pattern: privatization, the CPU way.
 *
 * Each thread counts its contiguous share of the input into private histograms on its own stack
 * (no atomics, no sharing: the CPU form of PMPP's per-block shared-memory copies), and adds them
 * into the result once at the end. A single counter array would make the loop wait on itself:
 * `c[x[i]]++` reads a counter that the previous iteration may just have written (a run of equal
 * values is a chain of store-to-load forwardings, ~5 cycles each). So each thread keeps several
 * sub-histograms, consecutive elements going to different ones, and the independent increments
 * overlap; the input is read eight bytes at a time and the bytes taken out with shifts, which
 * needs fewer instructions than eight byte loads. Bytes are always counted in 256 bins and mapped
 * to the caller's bins at the end (lut), so text binned as b * bins / 256 costs nothing extra.
 * Counters are 32-bit within a block of the input and are added into 64-bit totals after each.
 * Read next: body/histogram.h (the same pattern on a GPU), cpu_kernels.h.
 */
#include <string.h>

#include "kernels/cpu_kernels.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define BLOCK ((int64_t)1 << 20)   /* elements between two polls of stop */
#define FLUSH ((int64_t)1 << 30)   /* elements counted before 32-bit counters are flushed */
#define SUB_ENTRIES 8192           /* 32 KiB of private counters per thread: fits L1 */

static inline int stopped(const atomic_int *stop)
{
	return stop && atomic_load_explicit(stop, memory_order_relaxed) != 0;
}

/* 256 byte counters x 8 sub-histograms; byte j of each 4-byte word goes to sub-histogram j (or
 * j + 4 for the second word), so eight consecutive bytes never touch the same counter. */
static void count_bytes(const uint8_t *x, int64_t n, uint32_t (*c)[256])
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
		for (int64_t blk = 0; blk < nblocks; blk++) {
			if (quit || stopped(stop)) {
				quit = 1;
				continue;
			}
			int64_t lo = blk * BLOCK, len = n - lo < BLOCK ? n - lo : BLOCK;
			count_bytes(x + lo, len, c);
			if ((since += len) >= FLUSH) {
				flush_bytes(c, lut, counts);
				since = 0;
			}
		}
		if (since) flush_bytes(c, lut, counts);
	}
	return quit;
}

/* int32 bin indices in 0..bins-1: `copies` sub-histograms of bins counters (copies * bins <=
 * SUB_ENTRIES), element i going to copy i % copies. */
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
	int copies = 8;
	while (copies > 1 && copies * bins > SUB_ENTRIES) copies /= 2;
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
		for (int64_t blk = 0; blk < nblocks; blk++) {
			if (quit || stopped(stop)) {
				quit = 1;
				continue;
			}
			int64_t lo = blk * BLOCK, len = n - lo < BLOCK ? n - lo : BLOCK;
			count_i32(x + lo, len, sub, bins, copies);
			if ((since += len) >= FLUSH) {
				flush_i32(sub, bins, copies, counts);
				since = 0;
			}
		}
		if (since) flush_i32(sub, bins, copies, counts);
	}
	return quit;
}
