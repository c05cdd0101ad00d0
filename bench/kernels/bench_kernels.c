/*
 * bench_kernels.c — the course's kernels, measured: the CPU scan and reduction over 2^26 float32
 * against memcpy of the same bytes (target: at least 70% of memcpy's speed), and the emulator's
 * speed in events per second and the time to a full 1,024-element Kogge-Stone trace (target: under
 * 50 ms, so that a scene opens at once).
 *
 * Design: every row goes through the public calls (lm_kernel_scan / lm_kernel_reduce), which time
 * the CPU runs themselves (one warm-up, median of 5, monotonic clock); memcpy is timed the same way
 * in the same run, at 1 thread and at all threads (each thread copying its share). "vs memcpy" is
 * memcpy's time over the row's time for the same 256 MiB of input.
 * Kernels II: the CPU histogram of 2^26 bytes (256 bins) at 1 and 2 threads against a plain
 * counting loop (`c[x[i]]++`, per thread) measured in the same run (targets: >= 3.5 GB/s at 1
 * thread and >= 6 at 2); the CPU CSR SpMV on a random 16384 x 16384 matrix of 1% density; tiled
 * against naive matmul in the emulator (modelled cycles, global loads) and on the CPU (GFLOP/s).
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

static void kernels_two(int all)
{
	lm_kernel_opts o;
	lm_tensor *out;
	lm_kernel_info *info;
	int counts[2] = {1, all > 1 ? 2 : 1};

	/* histogram: 2^26 random bytes, and bytes in runs (an image's flat regions) */
	int64_t n = (int64_t)1 << 26;
	lm_tensor *bytes = lm_randint(0, 256, 1, &n, LM_UINT8), *runs = lm_empty(1, &n, LM_UINT8);
	for (int64_t i = 0; i < n; i++) ((uint8_t *)lm_tensor_data(runs))[i] = (uint8_t)((i / 4096) * 37);
	printf("\n%-44s %7s %10s %10s %10s\n", "cpu histogram, 2^26 bytes, 256 bins", "threads",
	       "time ms", "GB/s", "vs plain");
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		lm_set_num_threads(counts[c]);
		const char *what[2] = {"privatized, 8 sub-histograms, random", "privatized, 8 sub-histograms, runs"};
		for (int k = 0; k < 2; k++) {
			double plain = plain_histogram_ms(lm_tensor_data(k ? runs : bytes), n, counts[c]);
			printf("%-44s %7d %10.2f %10.2f %9.2fx\n",
			       k ? "plain loop, runs of 4096 (anchor)" : "plain loop c[x[i]]++, random (anchor)",
			       counts[c], plain, n / (plain * 1e6), 1.0);
			lm_kernel_opts_init(&o);
			o.backend = "cpu";
			check(lm_kernel_histogram(k ? runs : bytes, 256, &o, &out, &info), &out);
			double ms = counter(info, "time_ms");
			printf("%-44s %7d %10.2f %10.2f %9.2fx\n", what[k], counts[c], ms, counter(info, "gbps"),
			       plain / ms);
			lm_kernel_info_free(info);
		}
	}
	lm_set_num_threads(all);
	printf("target: >= 3.5 GB/s at 1 thread, >= 6 at 2 (random bytes)\n");
	lm_tensor_release(bytes);
	lm_tensor_release(runs);

	/* SpMV: CSR of a random 16384 x 16384 matrix with 1%% of its entries non-zero */
	int64_t m = 16384, nnz = m * m / 100;
	lm_tensor *rows = lm_randint(0, m, 1, &nnz, LM_INT32), *cols = lm_randint(0, m, 1, &nnz, LM_INT32);
	lm_tensor *vals = lm_rand(1, &nnz, LM_FLOAT32), *x = lm_rand(1, &m, LM_FLOAT32);
	lm_sparse *A = lm_sparse_from_coo(rows, cols, vals, m, m, 0);
	if (!A) {
		fprintf(stderr, "bench_kernels: %s\n", lm_last_error());
		exit(1);
	}
	printf("\n%-44s %7s %10s %10s %10s\n", "cpu spmv, 16384^2, 1% dense, float32", "threads",
	       "time ms", "GB/s", "GFLOP/s");
	const char *fmts[] = {"csr", "ell", "jds"};
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		lm_set_num_threads(counts[c]);
		for (int f = 0; f < 3; f++) {
			lm_kernel_opts_init(&o);
			o.backend = "cpu";
			o.format = fmts[f];
			check(lm_kernel_spmv(A, x, &o, &out, &info), &out);
			char what[64];
			snprintf(what, sizeof what, "%s (%lld nonzeros)", fmts[f], (long long)lm_sparse_nnz(A));
			double ms = counter(info, "time_ms");
			printf("%-44s %7d %10.2f %10.2f %10.2f\n", what, counts[c], ms, counter(info, "gbps"),
			       2.0 * (double)lm_sparse_nnz(A) / (ms * 1e6));
			lm_kernel_info_free(info);
		}
	}
	lm_set_num_threads(all);
	lm_sparse_release(A);
	lm_tensor *list[] = {rows, cols, vals, x};
	for (int i = 0; i < 4; i++) lm_tensor_release(list[i]);

	/* matmul: the emulator's counts at 64^3, the CPU's speed */
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
	printf("\n%-44s %7s %10s %10s\n", "cpu matmul, float32", "threads", "time ms", "GFLOP/s");
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		lm_set_num_threads(counts[c]);
		for (int k = 0; k < 3; k++) {
			int64_t sz = k == 0 ? 512 : k == 1 ? 512 : 1024;
			a = lm_rand(2, (int64_t[]){sz, sz}, LM_FLOAT32);
			b = lm_rand(2, (int64_t[]){sz, sz}, LM_FLOAT32);
			lm_kernel_opts_init(&o);
			o.backend = "cpu";
			o.algo = k == 0 ? "naive" : "tiled";
			o.repeats = 3;
			check(lm_kernel_matmul(a, b, &o, &out, &info), &out);
			char what[64];
			snprintf(what, sizeof what, "%s (%s), %lld^3", o.algo,
			         k ? "cache-blocked" : "triple loop", (long long)sz);
			printf("%-44s %7d %10.2f %10.2f\n", what, counts[c], counter(info, "time_ms"),
			       counter(info, "gflops"));
			lm_kernel_info_free(info);
			lm_tensor_release(a);
			lm_tensor_release(b);
		}
	}
	lm_set_num_threads(all);
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
                double memcpy_ms_same)
{
	printf("%-34s %7d %10.2f %12.2f %12.2f %9.0f%%\n", what, threads, ms, in_bytes / (ms * 1e6),
	       moved / (ms * 1e6), 100.0 * memcpy_ms_same / ms);
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
	printf("%-34s %7s %10s %12s %12s %10s\n", "what", "threads", "time ms", "in GB/s",
	       "moved GB/s", "vs memcpy");
	int counts[2] = {1, all};
	for (int c = 0; c < (all > 1 ? 2 : 1); c++) {
		int t = counts[c];
		lm_set_num_threads(t);
		double mc = memcpy_ms(dst, lm_tensor_data(x), bytes, t);
		row("memcpy (anchor)", t, (double)bytes, 2.0 * (double)bytes, mc, mc);
		double s = run_ms("scan", x, "cpu", "kogge-stone", 0, NULL);
		row("cpu scan, inclusive", t, (double)bytes, 2.0 * (double)bytes, s, mc);
		double r = run_ms("reduce", x, "cpu", "shared", 0, NULL);
		row("cpu reduce (sum)", t, (double)bytes, (double)bytes, r, mc);
	}
	lm_set_num_threads(all);
	printf("\ntarget: cpu scan and reduce >= 70%% of memcpy\n\n");
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
