/*
 * bench_kernels.c — the course's kernels, measured on the SIMD path in use (the first line says
 * which; LUMEN_ISA=scalar|avx2|avx512 picks another): the CPU scans and reduction over 2^26
 * float32 against two anchors measured in the same run, memcpy of the same bytes and the plain
 * sequential loop `s += x[i]; y[i] = s` (targets: the work-efficient scan at least 70% of memcpy's
 * speed and never slower than the plain loop, at 1 and 2 threads); the emulator's speed in events
 * per second and the time to a full 1,024-element Kogge-Stone trace (target: under 50 ms, so that
 * a scene opens at once).
 *
 * Design: every row goes through the public calls (lm_kernel_scan / lm_kernel_reduce), which time
 * the CPU runs themselves (one warm-up, median of 5, monotonic clock); the anchors are timed the
 * same way in the same run (memcpy at 1 thread and at all threads, each thread copying its share).
 * "vs memcpy" is memcpy's time over the row's time for the same 256 MiB of input, "vs plain" the
 * plain loop's time over the row's.
 * Kernels II, the CPU's variants as the lecture contrasts them, at 1 and 2 threads: the histogram
 * of 2^26 bytes (256 bins) privatized, with global atomics and aggregated, against a plain
 * counting loop (`c[x[i]]++`, per thread), on random bytes and on runs of equal bytes (targets
 * for the privatized run: >= 3.5 GB/s at 1 thread and >= 6 at 2, random bytes); SpMV of a random
 * 16384 x 16384 matrix of 1% density in CSR, ELL and JDS (target: ELL and JDS >= 50% of CSR's
 * GB/s); the work-inefficient (Kogge-Stone) scan against the work-efficient one; tiled against
 * naive matmul in the emulator (modelled cycles, global loads) and on the CPU (GFLOP/s per tile,
 * with OpenBLAS's sgemm through lm_matmul as the anchor). Each row says what ran (info.impl).
 * Every measured run times its operands from memory: the driver flushes them from the caches
 * before each timed run (src/kernels/driver.c). The cold-cache row shows why: a reduction of
 * 1 MiB (it fits in the caches) timed as the info reports it, and the same loop timed warm.
 * Usage: bench_kernels [log2 n] (default 26).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "bench_util.h"
#include "kernels/cpu_kernels.h"
#include "lumen/core.h"
#include "lumen/kernels.h"
#include "lumen/ops.h"

static double now_ms(void) { return 1e3 * bench_now(); }

static double memcpy_ms(void *dst, const void *src, size_t bytes, int threads)
{
	double t[5];
	for (int r = -1; r < 5; r++) {
		double t0 = now_ms();
#pragma omp parallel num_threads(threads)
		{
			int id = omp_get_thread_num(), p = omp_get_num_threads();
			size_t per = (bytes / (size_t)p + 63) & ~(size_t)63;
			size_t lo = per * (size_t)id < bytes ? per * (size_t)id : bytes;
			size_t hi = lo + per < bytes ? lo + per : bytes;
			memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
		}
		if (r >= 0) t[r] = now_ms() - t0;
	}
	return bench_median(t, 5);
}

static double run_ms(const char *pattern, const lm_tensor *x, const char *backend,
                     const char *algo, int64_t block, lm_kernel_info **keep)
{
	lm_kernel_opts o;
	lm_kernel_opts_init(&o);
	o.backend = backend;
	o.algo = algo;
	o.block = block;
	lm_tensor *y;
	lm_kernel_info *info;
	lm_status st = strcmp(pattern, "scan") == 0 ? lm_kernel_scan(x, &o, &y, &info)
	                                            : lm_kernel_reduce(x, &o, &y, &info);
	if (st) {
		fprintf(stderr, "bench_kernels: %s\n", lm_last_error());
		exit(1);
	}
	double ms = 0;
	lm_kernel_info_counter(info, "time_ms", &ms);
	lm_tensor_release(y);
	if (keep) *keep = info;
	else lm_kernel_info_free(info);
	return ms;
}

/* The anchor: the plain sequential scan, from memory like the measured runs. */
static double plain_scan_ms(const float *x, float *y, int64_t n)
{
	double t[5];
	for (int r = -1; r < 5; r++) {
		lmi_cache_flush(x, (size_t)n * sizeof *x);
		lmi_cache_flush(y, (size_t)n * sizeof *y);
		double t0 = now_ms();
		float s = 0;
		for (int64_t i = 0; i < n; i++) {
			s += x[i];
			y[i] = s;
		}
		if (r >= 0) t[r] = now_ms() - t0;
	}
	return bench_median(t, 5);
}

/* The anchor: the plain histogram loop, each thread over its share into its own counters. */
static double plain_histogram_ms(const uint8_t *x, int64_t n, int threads)
{
	double t[5];
	for (int r = -1; r < 5; r++) {
		int64_t total[256] = {0};
		double t0 = now_ms();
#pragma omp parallel num_threads(threads)
		{
			uint32_t c[256] = {0};
			int id = omp_get_thread_num(), p = omp_get_num_threads();
			int64_t lo = n * id / p, hi = n * (id + 1) / p;
			for (int64_t i = lo; i < hi; i++) c[x[i]]++;
#pragma omp critical
			for (int b = 0; b < 256; b++) total[b] += c[b];
		}
		if (r >= 0) t[r] = now_ms() - t0;
		if (total[0] < 0) abort(); /* keeps the loop */
	}
	return bench_median(t, 5);
}

/* Exits with the message when a call failed; releases its output tensor. */
static void check(lm_status st, lm_tensor **out)
{
	if (st) {
		fprintf(stderr, "bench_kernels: %s\n", lm_last_error());
		exit(1);
	}
	lm_tensor_release(*out);
}

static double counter(lm_kernel_info *info, const char *name)
{
	double v = 0;
	lm_kernel_info_counter(info, name, &v);
	return v;
}

/* info.impl of a run, indented under its row. */
static void impl_line(const lm_kernel_info *info)
{
	printf("    %s\n", lm_kernel_info_impl(info));
}

static void histograms(int all)
{
	lm_kernel_opts o;
	lm_tensor *out;
	lm_kernel_info *info;
	int counts[2] = {1, all > 1 ? 2 : 1};
	/* 2^26 random bytes, and bytes in runs (an image's flat regions) */
	int64_t n = (int64_t)1 << 26;
	lm_tensor *bytes = lm_randint(0, 256, 1, &n, LM_UINT8), *runs = lm_empty(1, &n, LM_UINT8);
	for (int64_t i = 0; i < n; i++) ((uint8_t *)lm_tensor_data(runs))[i] = (uint8_t)((i / 4096) * 37);
	printf("\n%-44s %7s %10s %10s %10s\n", "cpu histogram, 2^26 bytes, 256 bins", "threads",
	       "time ms", "GB/s", "vs plain");
	const char *algos[] = {"privatized", "aggregated", "global-atomic"};
	for (int k = 0; k < 2; k++)
		for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
			lm_set_num_threads(counts[c]);
			double plain = plain_histogram_ms(lm_tensor_data(k ? runs : bytes), n, counts[c]);
			printf("%-44s %7d %10.2f %10.2f %9.2fx\n",
			       k ? "plain loop c[x[i]]++, runs of 4096 (anchor)" : "plain loop c[x[i]]++, random (anchor)",
			       counts[c], plain, n / (plain * 1e6), 1.0);
			for (int a = 0; a < 3; a++) {
				lm_kernel_opts_init(&o);
				o.backend = "cpu";
				o.algo = algos[a];
				o.repeats = a == 0 ? 5 : 3;
				check(lm_kernel_histogram(k ? runs : bytes, 256, &o, &out, &info), &out);
				double ms = counter(info, "time_ms");
				char what[64];
				snprintf(what, sizeof what, "%s, %s", algos[a], k ? "runs" : "random");
				printf("%-44s %7d %10.2f %10.2f %9.2fx\n", what, counts[c], ms,
				       counter(info, "gbps"), plain / ms);
				impl_line(info);
				lm_kernel_info_free(info);
			}
		}
	lm_set_num_threads(all);
	printf("target: privatized >= 3.5 GB/s at 1 thread, >= 6 at 2 (random bytes)\n");
	lm_tensor_release(bytes);
	lm_tensor_release(runs);
}

static void spmv(int all)
{
	lm_kernel_opts o;
	lm_tensor *out;
	lm_kernel_info *info;
	int counts[2] = {1, all > 1 ? 2 : 1};
	/* a random 16384 x 16384 matrix with 1%% of its entries non-zero */
	int64_t m = 16384, nnz = m * m / 100;
	lm_tensor *rows = lm_randint(0, m, 1, &nnz, LM_INT32), *cols = lm_randint(0, m, 1, &nnz, LM_INT32);
	lm_tensor *vals = lm_rand(1, &nnz, LM_FLOAT32), *x = lm_rand(1, &m, LM_FLOAT32);
	lm_sparse *A = lm_sparse_from_coo(rows, cols, vals, m, m, 0);
	if (!A) {
		fprintf(stderr, "bench_kernels: %s\n", lm_last_error());
		exit(1);
	}
	printf("\n%-44s %7s %10s %10s %10s %10s\n", "cpu spmv, 16384^2, 1% dense, float32", "threads",
	       "time ms", "GB/s", "GFLOP/s", "vs csr");
	printf("(%lld nonzeros, the longest row %lld: ELL pads %lld slots; GB/s over each format's own "
	       "bytes)\n", (long long)lm_sparse_nnz(A), (long long)lm_sparse_ell_width(A),
	       (long long)lm_sparse_ell_padding(A));
	const char *fmts[] = {"csr", "ell", "jds"};
	double worst = 1e9;
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		lm_set_num_threads(counts[c]);
		double csr = 0;
		for (int f = 0; f < 3; f++) {
			lm_kernel_opts_init(&o);
			o.backend = "cpu";
			o.format = fmts[f];
			check(lm_kernel_spmv(A, x, &o, &out, &info), &out);
			double ms = counter(info, "time_ms"), gbps = counter(info, "gbps");
			if (f == 0) csr = gbps;
			else if (gbps / csr < worst) worst = gbps / csr;
			printf("%-44s %7d %10.2f %10.2f %10.2f %9.0f%%\n", fmts[f], counts[c], ms, gbps,
			       2.0 * (double)lm_sparse_nnz(A) / (ms * 1e6), 100.0 * gbps / csr);
			impl_line(info);
			lm_kernel_info_free(info);
		}
	}
	lm_set_num_threads(all);
	printf("target: ELL and JDS >= 50%% of CSR's GB/s: %s (lowest %.0f%%)\n",
	       worst >= 0.5 ? "met" : "MISSED", 100.0 * worst);
	lm_sparse_release(A);
	lm_tensor *list[] = {rows, cols, vals, x};
	for (int i = 0; i < 4; i++) lm_tensor_release(list[i]);
}

/* OpenBLAS's sgemm through lm_matmul: the anchor of the CPU matmuls. */
static double blas_ms(const lm_tensor *a, const lm_tensor *b)
{
	double t[5];
	for (int r = -1; r < 5; r++) {
		double t0 = now_ms();
		lm_tensor *c = lm_matmul(a, b);
		if (r >= 0) t[r] = now_ms() - t0;
		if (!c) {
			fprintf(stderr, "bench_kernels: %s\n", lm_last_error());
			exit(1);
		}
		lm_tensor_release(c);
	}
	return bench_median(t, 5);
}

static void matmuls(int all)
{
	lm_kernel_opts o;
	lm_tensor *out;
	lm_kernel_info *info;
	int counts[2] = {1, all > 1 ? 2 : 1};
	/* the emulator's counts at 64^3 */
	int64_t e = 64;
	lm_tensor *a = lm_rand(2, (int64_t[]){e, e}, LM_FLOAT32), *b = lm_rand(2, (int64_t[]){e, e}, LM_FLOAT32);
	printf("\n%-44s %14s %14s %10s\n", "emulated matmul 64 x 64 x 64", "modelled cyc", "global loads",
	       "time ms");
	const char *algo[] = {"naive", "tiled", "tiled", "tiled"};
	int64_t tiles[] = {16, 8, 16, 32};
	for (int k = 0; k < 4; k++) {
		lm_kernel_opts_init(&o);
		o.backend = "emu";
		o.algo = algo[k];
		o.tile = tiles[k];
		double t0 = now_ms();
		check(lm_kernel_matmul(a, b, &o, &out, &info), &out);
		char what[64];
		snprintf(what, sizeof what, "%s, tile %lld", algo[k], (long long)tiles[k]);
		printf("%-44s %14.0f %14.0f %10.1f\n", what, counter(info, "modelled_cycles"),
		       counter(info, "global_loads"), now_ms() - t0);
		lm_kernel_info_free(info);
	}
	lm_tensor_release(a);
	lm_tensor_release(b);
	/* the CPU's: naive, tiled per tile, and OpenBLAS */
	int64_t sz = 512;
	a = lm_rand(2, (int64_t[]){sz, sz}, LM_FLOAT32);
	b = lm_rand(2, (int64_t[]){sz, sz}, LM_FLOAT32);
	printf("\n%-44s %7s %10s %10s %10s\n", "cpu matmul 512^3, float32", "threads", "time ms",
	       "GFLOP/s", "vs naive");
	double flops = 2.0 * (double)(sz * sz * sz);
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		lm_set_num_threads(counts[c]);
		double blas = blas_ms(a, b), naive = 0;
		const int64_t tl[] = {0, 1, 4, 8, 16, 32}; /* 0: naive */
		for (int k = 0; k < 6; k++) {
			lm_kernel_opts_init(&o);
			o.backend = "cpu";
			o.algo = tl[k] ? "tiled" : "naive";
			o.tile = tl[k]; /* 0: the default (naive takes no tile) */
			o.repeats = tl[k] == 1 ? 1 : 3;
			check(lm_kernel_matmul(a, b, &o, &out, &info), &out);
			double ms = counter(info, "time_ms");
			if (!tl[k]) naive = ms;
			char what[64];
			snprintf(what, sizeof what, tl[k] ? "tiled, tile %lld" : "naive (triple loop)", (long long)tl[k]);
			printf("%-44s %7d %10.2f %10.2f %9.2fx\n", what, counts[c], ms, counter(info, "gflops"),
			       naive / ms);
			impl_line(info);
			lm_kernel_info_free(info);
		}
		printf("%-44s %7d %10.2f %10.2f %9.2fx\n", "lm.matmul, OpenBLAS sgemm (anchor)", counts[c],
		       blas, flops / (blas * 1e6), naive / blas);
	}
	lm_set_num_threads(all);
	lm_tensor_release(a);
	lm_tensor_release(b);
}

static void kernels_two(int all)
{
	histograms(all);
	spmv(all);
	matmuls(all);
}

/* A reduction that fits in the caches: as the info reports it (operands flushed before each
 * timed run), and the same loop warm (called directly, no flush). */
static void cold_cache_row(void)
{
	int64_t n = 1 << 18;
	lm_tensor *x = lm_rand(1, &n, LM_FLOAT32);
	lm_kernel_info *info;
	run_ms("reduce", x, "cpu", "shared", 0, &info);
	double cold = counter(info, "time_ms"), t[5];
	lm_kernel_info_free(info);
	size_t sb = lmi_cpu_scratch_bytes(n, sizeof(float));
	void *scratch = malloc(sb ? sb : 1);
	float sum;
	for (int r = -1; r < 5; r++) {
		double t0 = now_ms();
		lmi_cpu_sum_f32(lm_tensor_data(x), n, &sum, NULL, scratch);
		if (r >= 0) t[r] = now_ms() - t0;
	}
	double warm = bench_median(t, 5), bytes = (double)n * sizeof(float);
	printf("%-44s %10s %10s %10s\n", "cpu reduce of 1 MiB (fits in the caches)", "time ms", "GB/s",
	       "vs cold");
	printf("%-44s %10.4f %10.2f %9.2fx\n", "operands flushed (what info reports)", cold,
	       bytes / (cold * 1e6), 1.0);
	printf("%-44s %10.4f %10.2f %9.2fx\n", "warm caches (the same loop, no flush)", warm,
	       bytes / (warm * 1e6), cold / warm);
	printf("\n");
	free(scratch);
	lm_tensor_release(x);
}

static void row(const char *what, int threads, double in_bytes, double moved, double ms,
                double memcpy_same, double plain_same)
{
	printf("%-42s %7d %9.2f %9.2f %10.2f %8.0f%% %8.2fx\n", what, threads, ms,
	       in_bytes / (ms * 1e6), moved / (ms * 1e6), 100.0 * memcpy_same / ms, plain_same / ms);
}

int main(int argc, char **argv)
{
	int lg = argc > 1 ? atoi(argv[1]) : 26;
	if (lg < 10 || lg > 30) {
		fprintf(stderr, "usage: bench_kernels [log2 n in 10..30]\n");
		return 2;
	}
	int64_t n = (int64_t)1 << lg;
	size_t bytes = (size_t)n * sizeof(float);
	lm_manual_seed(1);
	lm_tensor *x = lm_rand(1, &n, LM_FLOAT32);
	char *dst = malloc(bytes);
	if (!x || !dst) {
		fprintf(stderr, "bench_kernels: out of memory for 2 x %zu bytes\n", bytes);
		return 1;
	}
	memset(dst, 0, bytes);
	int all = lm_get_num_threads();
	lm_build_info bi;
	lm_build_info_get(&bi);

	printf("Lumen %s kernels benchmark: n = 2^%d float32 (%.0f MiB), %s, %d threads\n",
	       bi.version, lg, bytes / 1048576.0, bi.compiler, all);
	printf("time: median of 5 after a warm-up, each run with its operands flushed from the caches "
	       "(the anchors' data is larger than the caches); in GB/s = input bytes / time; moved = "
	       "bytes read + written\n\n");
	printf("%-42s %7s %9s %9s %10s %9s %9s\n", "what", "threads", "time ms", "in GB/s",
	       "moved GB/s", "vs memcpy", "vs plain");
	int counts[2] = {1, all};
	double worst_memcpy = 1e9, worst_plain = 1e9;
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		int t = counts[c];
		lm_set_num_threads(t);
		double mc = memcpy_ms(dst, lm_tensor_data(x), bytes, t);
		double pl = plain_scan_ms(lm_tensor_data(x), (float *)dst, n);
		double b = (double)bytes;
		row("memcpy (anchor)", t, b, 2 * b, mc, mc, pl);
		row("plain loop s += x[i]; y[i] = s (anchor)", t, b, 2 * b, pl, mc, pl);
		lm_kernel_info *info;
		double s = run_ms("scan", x, "cpu", "hierarchical", 0, &info);
		row("cpu scan, work-efficient (hierarchical)", t, b, 2 * b, s, mc, pl);
		impl_line(info);
		lm_kernel_info_free(info);
		if (mc / s < worst_memcpy) worst_memcpy = mc / s;
		if (pl / s < worst_plain) worst_plain = pl / s;
		for (int blk = 256; blk <= 1024; blk *= 4) {
			char what[64];
			snprintf(what, sizeof what, "cpu scan, Kogge-Stone, sections of %d", blk);
			double k = run_ms("scan", x, "cpu", "kogge-stone", blk, &info);
			row(what, t, b, 2 * b, k, mc, pl);
			impl_line(info);
			lm_kernel_info_free(info);
		}
		double r = run_ms("reduce", x, "cpu", "shared", 0, &info);
		row("cpu reduce (sum)", t, b, b, r, mc, pl);
		impl_line(info);
		lm_kernel_info_free(info);
	}
	lm_set_num_threads(all);
	printf("\ntarget: the work-efficient cpu scan >= 70%% of memcpy and never slower than the plain "
	       "loop, at 1 and %d threads: %s (lowest %.0f%% of memcpy, %.2fx the plain loop)\n\n", all,
	       worst_memcpy >= 0.7 && worst_plain >= 1 ? "met" : "MISSED", 100 * worst_memcpy,
	       worst_plain);
	cold_cache_row();

	/* the emulator: a full trace of a 1,024-element Kogge-Stone scan, then a larger run */
	printf("%-44s %10s %12s %12s\n", "emulator", "time ms", "events", "events/s");
	struct {
		const char *what, *pattern, *algo;
		int64_t n, block;
	} emu[] = {
		{"kogge-stone scan, 1024 elements, 1 block", "scan", "kogge-stone", 1024, 1024},
		{"brent-kung scan, 65536 elements", "scan", "brent-kung", 65536, 512},
		{"shared reduction, 2^18 elements", "reduce", "shared", 1 << 18, 1024},
	};
	double first_ms = 0;
	for (size_t k = 0; k < sizeof emu / sizeof emu[0]; k++) {
		lm_tensor *e = lm_rand(1, &emu[k].n, LM_FLOAT32);
		double t[5], events = 0;
		for (int r = -1; r < 5; r++) {
			lm_kernel_info *info;
			double t0 = now_ms();
			run_ms(emu[k].pattern, e, "emu", emu[k].algo, emu[k].block, &info);
			if (r >= 0) t[r] = now_ms() - t0;
			lm_kernel_info_counter(info, "events", &events);
			lm_kernel_info_free(info);
		}
		double ms = bench_median(t, 5);
		if (k == 0) first_ms = ms;
		printf("%-44s %10.2f %12.0f %12.3g\n", emu[k].what, ms, events, events / (ms * 1e-3));
		lm_tensor_release(e);
	}
	printf("\ntarget: the 1,024-element Kogge-Stone trace in under 50 ms: %s (%.1f ms)\n",
	       first_ms < 50 ? "met" : "MISSED", first_ms);
	kernels_two(all);
	free(dst);
	lm_tensor_release(x);
	return 0;
}
