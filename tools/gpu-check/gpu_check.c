/*
 * gpu_check.c — every pattern's CUDA run against the CPU, on random inputs, in one table.
 *
 * Design: calls the CUDA module's tables (src/backend/cuda_module.h: the device;
 * src/kernels/cuda/cuda_api.h: the kernels) directly, the way liblumen does after dlopen, and the
 * native CPU runs (src/kernels/cpu_kernels.c). Inputs are random integers in [-2, 3), so every
 * partial sum is exact in float32 and float64 whatever the order of additions: each result must
 * equal the sequential reference exactly. Sizes include 1, ragged lengths and 2^24 (the timing
 * rows); blocks from 1 to 1024. The patterns of kernels II
 * (histogram, matmul, conv2d, SpMV, divergence, streams) follow in gpu_check_two.c, then the
 * lectures' comparisons, the model's cycles beside CUDA's times, in gpu_check_model.c.
 * Usage: gpu_check [--quick] [--model] (--model: only the model's column of the comparisons, no
 * GPU needed). Exit: 0 all equal, 1 a mismatch or CUDA error, 2 no GPU.
 * Read next: docs/gpu-check.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda_module.h"
#include "kernels/cuda/cuda_api.h"
#include "kernels/cpu_kernels.h"
#include "gpu_check.h"

static const char *const scan_algos[LMI_SCAN_ALGO_COUNT] = {"kogge-stone", "brent-kung",
                                                            "hierarchical"};
static const char *const reduce_algos[LMI_REDUCE_ALGO_COUNT] = {"naive", "convergent", "shared",
                                                                "coarsened"};

double gc_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
#define now_ms gc_now_ms

static uint64_t rng = 0x9E3779B97F4A7C15ull;
int gc_int(int lo, int hi)
{
	rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
	return lo + (int)((rng * 0x2545F4914F6CDD1Dull) >> 33) % (hi - lo);
}
static int next_int(void) { return gc_int(-2, 3); } /* values in [-2, 3) */

static void fill(void *x, int64_t n, int dbl)
{
	for (int64_t i = 0; i < n; i++) {
		int v = next_int();
		if (dbl) ((double *)x)[i] = v;
		else ((float *)x)[i] = (float)v;
	}
}

static double at(const void *p, int64_t i, int dbl)
{
	return dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Median of 5 timed CPU runs after a warm-up, each with its operands flushed from the caches
 * (lmi_cache_flush), as liblumen times them. */
static double cpu_ms(int scan, int dbl, const void *x, void *y, int64_t n, int inclusive)
{
	double t[5];
	size_t sb = lmi_cpu_scratch_bytes(n, dbl ? sizeof(double) : sizeof(float)) + 1;
	size_t bytes = (size_t)n * (dbl ? sizeof(double) : sizeof(float));
	void *scratch = malloc(sb);
	for (int r = -1; r < 5; r++) {
		lmi_cache_flush(x, bytes);
		lmi_cache_flush(y, scan ? bytes : 8);
		lmi_cache_flush(scratch, sb);
		double t0 = now_ms();
		if (scan && dbl) lmi_cpu_scan_f64(x, y, n, !inclusive, NULL, scratch);
		else if (scan) lmi_cpu_scan_f32(x, y, n, !inclusive, NULL, scratch);
		else if (dbl) lmi_cpu_sum_f64(x, n, y, NULL, scratch);
		else lmi_cpu_sum_f32(x, n, y, NULL, scratch);
		if (r >= 0) t[r] = now_ms() - t0;
	}
	free(scratch);
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			double s = t[j];
			t[j] = t[j - 1];
			t[j - 1] = s;
		}
	return t[2];
}

/* One case: the CUDA run, the sequential reference, and (for timed rows) the CPU run. */
static void check(const lmi_cuda_kernels *api, tally *tl, int scan, int algo, int dbl, int64_t n,
                  unsigned block, int inclusive, int timed)
{
	size_t es = dbl ? sizeof(double) : sizeof(float);
	void *x = malloc((size_t)n * es), *y = malloc((size_t)n * es), *yc = malloc((size_t)n * es);
	if (!x || !y || !yc) {
		fprintf(stderr, "gpu-check: out of host memory for n = %lld\n", (long long)n);
		exit(1);
	}
	fill(x, n, dbl);
	unsigned coarsen = (scan && algo == LMI_SCAN_HIERARCHICAL) ||
	                           (!scan && algo == LMI_REDUCE_COARSENED) ? 4 : 1;
	lmi_scan_call sc = {.is_double = dbl, .algo = algo, .x = x, .y = y, .n = n, .block = block,
	                    .coarsen = coarsen, .inclusive = inclusive};
	lmi_reduce_call rd = {.is_double = dbl, .algo = algo, .x = x, .y = y, .n = n, .block = block,
	                      .coarsen = coarsen};
	lmi_cuda_timing t = {.repeats = timed ? 5 : 1};
	char msg[512] = "", what[64];
	int err = scan ? api->scan(&sc, &t, msg, sizeof msg) : api->reduce(&rd, &t, msg, sizeof msg);
	snprintf(what, sizeof what, "%s %s%s", scan ? "scan" : "reduce",
	         scan ? scan_algos[algo] : reduce_algos[algo],
	         scan ? (inclusive ? " incl" : " excl") : "");
	tl->runs++;
	double worst = 0;
	int64_t bad = -1;
	if (!err) {
		double s = 0;
		for (int64_t i = 0; i < n; i++) {
			double before = s;
			s += at(x, i, dbl);
			if (!scan) continue;
			double d = at(y, i, dbl) - (inclusive ? s : before);
			if (d < 0) d = -d;
			if (d > worst) worst = d, bad = i;
		}
		if (!scan) {
			worst = at(y, 0, dbl) - s;
			if (worst < 0) worst = -worst;
			bad = worst > 0 ? 0 : -1;
		}
	}
	const char *verdict = err ? "CUDA ERROR" : worst > 0 ? "MISMATCH" : "ok";
	if (err || worst > 0) tl->failures++;
	double bytes = (scan ? 2.0 : 1.0) * (double)n * (double)es;
	printf("%-26s %-7s %10lld %6u  %-10s", what, dbl ? "float64" : "float32", (long long)n, block,
	       verdict);
	if (!err && timed) {
		double cms = cpu_ms(scan, dbl, x, yc, n, inclusive);
		printf(" %9.3f %8.1f %9.3f %8.1f", t.time_ms, bytes / (t.time_ms * 1e6), cms,
		       bytes / (cms * 1e6));
	}
	printf("\n");
	if (err) printf("    %s\n", msg);
	else if (worst > 0) printf("    first difference at %lld: %.17g\n", (long long)bad, worst);
	free(x);
	free(y);
	free(yc);
}

int main(int argc, char **argv)
{
	int quick = 0, model_only = 0;
	for (int i = 1; i < argc; i++) {
		quick |= strcmp(argv[i], "--quick") == 0;
		model_only |= strcmp(argv[i], "--model") == 0;
	}
	const lmi_cuda_module *dev = lm_cuda_module_api();
	const lmi_cuda_kernels *api = lm_cuda_kernels_api();
	char msg[512] = "", name[256] = "";
	int count = 0, err = dev->device_count(&count, msg, sizeof msg);
	if (model_only) { /* the model's column alone, no device needed */
		tally tm = {0, 0};
		gc_model_rankings(NULL, &tm, quick);
		printf("gpu-check --model: %d runs, %d failed\n", tm.runs, tm.failures);
		return tm.failures ? 1 : 0;
	}
	if (err == LMI_CUDA_ERR_NO_DRIVER || err == LMI_CUDA_ERR_NO_DEVICE || (!err && count < 1)) {
		fprintf(stderr,
		        "gpu-check: the build is complete, but there is no CUDA device here (%s).\n"
		        "gpu-check: run tools/gpu-check.sh on a machine with an NVIDIA GPU and its driver.\n",
		        err ? msg : "the driver reports none");
		return 2;
	}
	if (err || dev->device_name(0, name, sizeof name, msg, sizeof msg)) {
		fprintf(stderr, "gpu-check: CUDA failed: %s\n", msg);
		return 1;
	}
	double t0 = now_ms();
	printf("gpu-check: %s (%d device%s), CPU runs on %d threads\n", name, count, count > 1 ? "s" : "",
	       lmi_cpu_kernel_threads());
	printf("every result must equal the sequential sum exactly (integer inputs); time: median of 5\n\n");
	printf("%-26s %-7s %10s %6s  %-10s %9s %8s %9s %8s\n", "pattern", "dtype", "n", "block",
	       "result", "cuda ms", "GB/s", "cpu ms", "GB/s");
	tally tl = {0, 0};
	const int64_t small[] = {1, 1000, 100003};
	const unsigned blocks[] = {1, 32, 256, 1024};
	const int64_t big = quick ? (1 << 20) : (1 << 24);
	for (int dbl = 0; dbl < 2; dbl++) {
		for (int a = 0; a < LMI_REDUCE_ALGO_COUNT; a++) {
			for (int s = 0; s < 3; s++)
				for (int b = 0; b < 4; b++) check(api, &tl, 0, a, dbl, small[s], blocks[b], 1, 0);
			check(api, &tl, 0, a, dbl, big + 7, 256, 1, 1);
			check(api, &tl, 0, a, dbl, big, 1024, 1, 1);
		}
		for (int a = 0; a < LMI_SCAN_ALGO_COUNT; a++)
			for (int incl = 1; incl >= 0; incl--) {
				for (int s = 0; s < 3; s++)
					for (int b = 0; b < 4; b++)
						check(api, &tl, 1, a, dbl, small[s], blocks[b], incl, 0);
				check(api, &tl, 1, a, dbl, big + 7, 256, incl, 1);
				check(api, &tl, 1, a, dbl, big, 1024, incl, 1);
			}
	}
	gc_kernels_two(api, &tl, quick);
	gc_model_rankings(api, &tl, quick);
	gc_tensor_backend(&tl, quick);
	printf("\ngpu-check: %d runs, %d failed, %.1f s\n", tl.runs, tl.failures, (now_ms() - t0) / 1e3);
	return tl.failures ? 1 : 0;
}
