/*
 * bench_ewise.c — elementwise and reduction bandwidth: Lumen against memcpy of the same bytes,
 * measured in the same run, at 1 and 2 threads.
 *
 * Cases on 16M float32 (64 MB per tensor): c = a + b, c = a * 2 + b (as a user writes it: two
 * ops and a temporary; and fused, lm_add_scaled), s = sum(a); and the broadcast c = a + row on a
 * 4096 x 4096 matrix.
 * Bandwidth counts the bytes the expression must move (inputs read + output written: 3 x 64 MB
 * for a + b, 64 MB for sum); the anchor is memcpy of 64 MB (64 MB read + 64 MB written), split
 * over the same number of threads. Ratio = Lumen's bandwidth / memcpy's (target >= 0.70).
 * Each number is the median of interleaved rounds (anchor, Lumen, anchor, ...), so a slow phase
 * of the machine hits both. A third table puts Lumen's 1- and 2-thread times side by side, and a
 * fourth sweeps sizes from below the parallel grain (32768 elements) to 16M at 1 and 2 threads.
 * The last compares reductions over non-contiguous dims with PyTorch CPU, measured in the same run
 * (bench/ewise/torch_anchor.py through /usr/bin/python3): x:t():sum(1) and x:t():sum(2) of a
 * 4096^2 matrix, the sum of a transposed (2^26, 2) (all of it, and over its long dim), and
 * lm.ones(1):expand(2^31):sum(), a stride-0 dim (target: Lumen <= 1.5x PyTorch's time).
 * The first table (small tensors, 1 to 1,024 elements) is the dispatch: the time of one op call
 * where the loop is nothing, against a plain C loop over the same floats (its anchor, measured in
 * the same run). LUMEN_BENCH_ONLY=dispatch prints that table alone (to compare two builds, ABAB).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "lumen/ops.h"

#define N (16ll << 20) /* elements */
#define ROUNDS 15

static lm_tensor *a, *b, *row, *m;
static float *src, *dst;
static int threads;

/* The anchor: memcpy of N floats, split in `threads` contiguous parts. */
static void anchor(void)
{
	size_t bytes = (size_t)N * sizeof(float);
#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		size_t lo = bytes * (size_t)t / (size_t)nt, hi = bytes * (size_t)(t + 1) / (size_t)nt;
		lo &= ~(size_t)63;
		hi = t == nt - 1 ? bytes : hi & ~(size_t)63;
		memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
	}
}

enum { ADD, AXPY, FUSED, SUM, ROW, NCASES };
static const char *const names[NCASES] = {"c = a + b", "c = a * 2 + b", "  fused: add_scaled(b, a, 2)",
                                          "s = sum(a)", "c = a + row (4096x4096)"};
static const double traffic[NCASES] = {3, 3, 3, 1, 2}; /* x 64 MB moved by the expression */

static void lumen(int c)
{
	lm_tensor *r = NULL, *t = NULL;
	switch (c) {
	case ADD: r = lm_add(a, b); break;
	case AXPY:
		t = lm_binary_scalar(LM_MUL, a, 2);
		CHECK(t);
		r = lm_add(t, b);
		break;
	case FUSED: r = lm_add_scaled(b, a, 2); break;
	case SUM: r = lm_sum(a, LM_DIM_ALL, false); break;
	case ROW: r = lm_add(m, row); break;
	}
	CHECK(r);
	lm_tensor_release(t);
	lm_tensor_release(r);
}

/* 1 vs 2 threads across sizes, around the parallel grain too: c = a + b, s = sum(a), exp(a). */
static void size_sweep(void)
{
	static const int64_t sizes[] = {4096, 32768, 65536, 262144, 1 << 20, 4 << 20, 16 << 20};
	printf("\n%-10s %24s %24s %24s\n", "elements", "a + b  1T / 2T (us)", "sum(a)  1T / 2T (us)",
	       "exp(a)  1T / 2T (us)");
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int64_t n = sizes[k];
		lm_tensor *x = lm_narrow(a, 0, 0, n), *y = lm_narrow(b, 0, 0, n);
		CHECK(x && y);
		double t[3][3];
		for (int th = 1; th <= 2; th++) {
			lm_set_num_threads(th);
			int reps = (int)(4e6 / (double)n) + 1;
			double ts[3][ROUNDS];
			for (int r = 0; r < ROUNDS; r++)
				for (int op = 0; op < 3; op++) {
					double t0 = bench_now();
					for (int i = 0; i < reps; i++) {
						lm_tensor *z = op == 0 ? lm_add(x, y) : op == 1 ? lm_sum(x, LM_DIM_ALL, false)
						                                                : lm_exp(x);
						CHECK(z);
						lm_tensor_release(z);
					}
					ts[op][r] = (bench_now() - t0) / reps;
				}
			for (int op = 0; op < 3; op++) t[th][op] = bench_median(ts[op], ROUNDS);
		}
		printf("%-10lld", (long long)n);
		for (int op = 0; op < 3; op++)
			printf(" %11.1f / %9.1f %s", 1e6 * t[1][op], 1e6 * t[2][op],
			       t[2][op] > 1.1 * t[1][op] ? "<" : " ");
		printf("\n");
		lm_tensor_release(x);
		lm_tensor_release(y);
	}
	printf("(< marks a size where 2 threads were more than 10%% slower than 1)\n");
}

/* ---------------------------------------------------------------- non-contiguous reductions */

enum { TSUM_DIM, TSUM_ROWS, PAIR_ALL, PAIR_DIM, EXPAND_ALL, NRED };
static const char *const red_names[NRED] = {"x:t():sum(1)  x 4096x4096", "x:t():sum(2)  x 4096x4096",
                                            "y:t():sum()   y (2^26, 2)", "y:t():sum(2)  y (2^26, 2)",
                                            "ones(1):expand(2^31):sum()"};
static const char *const red_keys[NRED] = {"tsum_dim", "tsum_rows", "pair_all", "pair_dim",
                                           "expand_all"};
static const double red_bytes[NRED] = {4.0 * 4096 * 4096, 4.0 * 4096 * 4096, 4.0 * (1 << 27),
                                       4.0 * (1 << 27), 0}; /* the storage read */

static void red_case(int c, lm_tensor *xt, lm_tensor *yt, lm_tensor *e)
{
	lm_tensor *r = NULL;
	switch (c) {
	case TSUM_DIM: r = lm_sum(xt, 0, false); break;
	case TSUM_ROWS: r = lm_sum(xt, 1, false); break;
	case PAIR_ALL: r = lm_sum(yt, LM_DIM_ALL, false); break;
	case PAIR_DIM: r = lm_sum(yt, 1, false); break;
	case EXPAND_ALL: r = lm_sum(e, LM_DIM_ALL, false); break;
	}
	CHECK(r);
	lm_tensor_release(r);
}

/* PyTorch's times for the same cases at `threads` threads (NAN when PyTorch is missing). */
static void red_anchor(int th, double *t, char *version)
{
	char cmd[1024], line[256];
	for (int c = 0; c < NRED; c++) t[c] = NAN;
	snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/bench/ewise/torch_anchor.py %d 2>/dev/null",
	         LUMEN_SOURCE_DIR, th);
	FILE *p = popen(cmd, "r");
	if (!p) return;
	while (fgets(line, sizeof line, p)) {
		char name[64];
		double v;
		if (sscanf(line, "version %63s", name) == 1) snprintf(version, 64, "%s", name);
		if (sscanf(line, "%63s %lf", name, &v) != 2) continue;
		for (int c = 0; c < NRED; c++)
			if (!strcmp(name, red_keys[c])) t[c] = v;
	}
	pclose(p);
}

static void strided_reductions(void)
{
	int64_t yshape[2] = {(int64_t)1 << 26, 2}, big = (int64_t)1 << 31, one1 = 1;
	lm_tensor *y = lm_randn(2, yshape, LM_FLOAT32), *one = lm_ones(1, &one1, LM_FLOAT32);
	CHECK(y && one);
	lm_tensor *xt = lm_transpose(m, 0, 1), *yt = lm_transpose(y, 0, 1), *e = lm_expand(one, 1, &big);
	CHECK(xt && yt && e);
	char version[64] = "not found";
	printf("\nreductions over non-contiguous dims, float32: Lumen vs PyTorch CPU (same run), median\n");
	printf("%-8s %-30s %11s %11s %11s %7s\n", "threads", "case", "Lumen ms", "Lumen GB/s",
	       "PyTorch ms", "ratio");
	for (int th = 1; th <= 2; th++) {
		lm_set_num_threads(th);
		double pt[NRED];
		red_anchor(th, pt, version);
		for (int c = 0; c < NRED; c++) {
			int reps = c >= PAIR_ALL ? 9 : 15;
			double ts[15];
			red_case(c, xt, yt, e);
			red_case(c, xt, yt, e);
			for (int r = 0; r < reps; r++) {
				double t0 = bench_now();
				red_case(c, xt, yt, e);
				ts[r] = bench_now() - t0;
			}
			double t = bench_median(ts, reps);
			if (red_bytes[c] > 0)
				printf("%-8d %-30s %11.3f %11.1f %11.3f %7.2f\n", th, red_names[c], 1e3 * t,
				       red_bytes[c] / t / 1e9, 1e3 * pt[c], t / pt[c]);
			else
				printf("%-8d %-30s %11.4f %11s %11.3f %7.4f\n", th, red_names[c], 1e3 * t, "-",
				       1e3 * pt[c], t / pt[c]);
		}
	}
	printf("PyTorch %s; GB/s = the tensor's bytes read / time; ratio = Lumen time / PyTorch time "
	       "(target <= 1.5).\nA stride-0 dim is a multiplication in Lumen, not a loop over 2^31 "
	       "elements.\n", version);
	lm_tensor *all[] = {y, one, xt, yt, e};
	for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) lm_tensor_release(all[k]);
}

/* ---------------------------------------------------------------- dispatch: small tensors */

enum { D_ADD, D_EXP, D_SUM, D_VIEW, D_MATMUL, ND };
static const char *const d_names[ND] = {"c = a + b", "c = exp(a)", "s = sum(a)", "v = a:view(n, 1)", "c = a(1,n) @ b(n,1)"};

/* One op call on tensors of n elements (the matmul: a as (1, n) times b as (n, 1)). */
static lm_tensor *d_call(int c, lm_tensor *x, lm_tensor *y, int64_t n)
{
	switch (c) {
	case D_ADD: return lm_add(x, y);
	case D_EXP: return lm_exp(x);
	case D_SUM: return lm_sum(x, LM_DIM_ALL, false);
	case D_VIEW: return lm_view(x, 2, (int64_t[]){n, 1});
	default: {
		lm_tensor *r = lm_view(x, 2, (int64_t[]){1, n}), *s = lm_view(y, 2, (int64_t[]){n, 1});
		lm_tensor *o = lm_matmul(r, s);
		lm_tensor_release(r);
		lm_tensor_release(s);
		return o;
	}
	}
}

/* The anchor: the same arithmetic as a plain loop over malloc'ed floats. */
static volatile float d_sink;
static void d_anchor(int c, const float *x, const float *y, float *z, int64_t n)
{
	float s = 0;
	switch (c) {
	case D_ADD: for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i]; break;
	case D_EXP: for (int64_t i = 0; i < n; i++) z[i] = expf(x[i]); break;
	case D_VIEW: z[0] = x[0]; break;
	default: for (int64_t i = 0; i < n; i++) s += x[i] * (c == D_SUM ? 1 : y[i]); break;
	}
	d_sink = s + z[0];
}

static void dispatch(void)
{
	static const int64_t sizes[] = {1, 16, 256, 1024};
	enum { CALLS = 4000, REPS = 9 };
	lm_set_num_threads(1);
	printf("dispatch: one op call on small float32 tensors (1 thread), median of %d rounds of %d calls;\n"
	       "anchor: a plain C loop over the same floats (in the same run). ratio = Lumen / loop.\n", REPS, CALLS);
	printf("%-24s %6s %12s %12s %9s\n", "case", "n", "Lumen us", "loop us", "ratio");
	for (int c = 0; c < ND; c++) {
		for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
			int64_t n = sizes[k];
			lm_tensor *x = lm_randn(1, &n, LM_FLOAT32), *y = lm_randn(1, &n, LM_FLOAT32);
			CHECK(x && y);
			float *z = malloc((size_t)n * sizeof *z);
			CHECK(z);
			double tl[REPS], ta[REPS];
			for (int r = 0; r < REPS; r++) {
				double t0 = bench_now();
				for (int i = 0; i < CALLS; i++) d_anchor(c, lm_tensor_data(x), lm_tensor_data(y), z, n);
				ta[r] = (bench_now() - t0) / CALLS;
				t0 = bench_now();
				for (int i = 0; i < CALLS; i++) {
					lm_tensor *o = d_call(c, x, y, n);
					CHECK(o);
					lm_tensor_release(o);
				}
				tl[r] = (bench_now() - t0) / CALLS;
			}
			double l = bench_median(tl, REPS), an = bench_median(ta, REPS);
			printf("%-24s %6lld %12.3f %12.3f %9.1f\n", d_names[c], (long long)n, 1e6 * l, 1e6 * an, l / an);
			lm_tensor_release(x);
			lm_tensor_release(y);
			free(z);
		}
	}
	printf("\n");
}

int main(void)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	if (bi.threading_warning) fprintf(stderr, "warning: %s\n", bi.threading_warning);
	lm_manual_seed(0);
	dispatch();
	const char *only = getenv("LUMEN_BENCH_ONLY");
	if (only && strcmp(only, "dispatch") == 0) return 0;
	int64_t n = N, sq[2] = {4096, 4096}, rn = 4096;
	a = lm_randn(1, &n, LM_FLOAT32);
	b = lm_randn(1, &n, LM_FLOAT32);
	m = lm_randn(2, sq, LM_FLOAT32);
	row = lm_randn(1, &rn, LM_FLOAT32);
	CHECK(a && b && m && row);
	src = aligned_alloc(64, (size_t)N * sizeof(float));
	dst = aligned_alloc(64, (size_t)N * sizeof(float));
	CHECK(src && dst);
	memcpy(src, lm_tensor_data(a), (size_t)N * sizeof(float));
	memset(dst, 0, (size_t)N * sizeof(float));

	double lt[3][NCASES], at[3];
	printf("bench_ewise: Lumen %s, %lld float32 elements (64 MB) per tensor, median of %d rounds\n",
	       bi.version, N, ROUNDS);
	printf("%-8s %-30s %11s %11s %11s %11s %7s\n", "threads", "case", "Lumen ms", "Lumen GB/s",
	       "memcpy ms", "memcpy GB/s", "ratio");
	for (threads = 1; threads <= 2; threads++) {
		lm_set_num_threads(threads);
		double ta[ROUNDS], tl[NCASES][ROUNDS];
		for (int w = 0; w < 2; w++) { /* warm: caches of the allocator, pages, pools */
			anchor();
			for (int c = 0; c < NCASES; c++) lumen(c);
		}
		for (int r = 0; r < ROUNDS; r++) {
			double t0 = bench_now();
			anchor();
			ta[r] = bench_now() - t0;
			for (int c = 0; c < NCASES; c++) {
				t0 = bench_now();
				lumen(c);
				tl[c][r] = bench_now() - t0;
			}
		}
		at[threads] = bench_median(ta, ROUNDS);
		double mbw = 2.0 * (double)N * 4 / at[threads] / 1e9;
		for (int c = 0; c < NCASES; c++) {
			lt[threads][c] = bench_median(tl[c], ROUNDS);
			double bw = traffic[c] * (double)N * 4 / lt[threads][c] / 1e9;
			printf("%-8d %-30s %11.2f %11.1f %11.2f %11.1f %7.2f\n", threads, names[c],
			       1e3 * lt[threads][c], bw, 1e3 * at[threads], mbw, bw / mbw);
		}
	}
	printf("GB/s: bytes the expression reads and writes / time; memcpy moves 2 x 64 MB. "
	       "ratio = Lumen GB/s / memcpy GB/s (target >= 0.70).\n"
	       "a * 2 + b runs as two ops (a * 2 into a temporary, then + b): 5 x 64 MB of traffic for "
	       "the 3 x 64 MB counted;\nadd_scaled(b, a, 2) is the same result (bit for bit) in one pass.\n\n");
	printf("%-30s %11s %11s %13s\n", "case", "1 thread", "2 threads", "speedup 1->2");
	for (int c = 0; c < NCASES; c++)
		printf("%-30s %9.2fms %9.2fms %13.2f\n", names[c], 1e3 * lt[1][c], 1e3 * lt[2][c],
		       lt[1][c] / lt[2][c]);
	printf("%-30s %9.2fms %9.2fms %13.2f\n", "memcpy (anchor)", 1e3 * at[1], 1e3 * at[2],
	       at[1] / at[2]);
	size_sweep();
	strided_reductions();
	lm_tensor_release(a);
	lm_tensor_release(b);
	lm_tensor_release(m);
	lm_tensor_release(row);
	free(src);
	free(dst);
	return 0;
}
