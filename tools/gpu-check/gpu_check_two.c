/*
 * gpu_check_two.c — the GPU check of the patterns of kernels II: histogram, matmul, conv2d, SpMV,
 * the divergence demo and streams. Every CUDA run is compared with a sequential reference on
 * random small integers (so every sum is exact in any order); the timed rows also run the CPU
 * version (src/kernels/cpu_*.c) and print both times.
 * Rows: what, dtype, size, block/tile, result, cuda ms, GB/s (or GFLOP/s), cpu ms, GB/s.
 * Read next: gpu_check.c (main, scan, reduce), docs/gpu-check.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "kernels/cpu_kernels.h"
#include "kernels/sparse_formats.h"

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p) {
		fprintf(stderr, "gpu-check: out of host memory for %zu bytes\n", n);
		exit(1);
	}
	return p;
}

/* One row: the verdict of a CUDA run (err: its status, bad: mismatches), and the times. */
static void row(tally *tl, const char *what, const char *dtype, const char *size, unsigned block,
                int err, const char *msg, int64_t bad, const char *first_bad, double cuda_ms,
                double cpu_ms, double work, const char *unit)
{
	tl->runs++;
	if (err || bad) tl->failures++;
	printf("%-26s %-7s %14s %6u  %-10s", what, dtype, size, block,
	       err ? "CUDA ERROR" : bad ? "MISMATCH" : "ok");
	if (!err && cuda_ms > 0)
		printf(" %9.3f %8.1f", cuda_ms, work / (cuda_ms * 1e6));
	if (!err && cpu_ms > 0) printf(" %9.3f %8.1f %s", cpu_ms, work / (cpu_ms * 1e6), unit);
	else if (!err && cuda_ms > 0) printf(" %18s %s", "", unit);
	printf("\n");
	if (err) printf("    %s\n", msg);
	else if (bad) printf("    %lld differences, the first %s\n", (long long)bad, first_bad);
}

static double median5(double *t)
{
	for (int i = 1; i < 5; i++)
		for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
			double s = t[j];
			t[j] = t[j - 1];
			t[j - 1] = s;
		}
	return t[2];
}

/* ---------------------------------------------------------------- histogram */

static void histogram(const lmi_cuda_kernels *api, tally *tl, int algo, int is_u8, int scaled, int64_t n,
                      unsigned bins, unsigned block, int same, int timed)
{
	static const char *const names[] = {"histogram global-atomic", "histogram privatized",
	                                    "histogram aggregated"};
	void *data = xmalloc((size_t)n * (is_u8 ? 1 : 4));
	for (int64_t i = 0; i < n; i++) {
		int v = same ? 3 % (int)bins : gc_int(0, is_u8 && !scaled ? (bins < 256 ? (int)bins : 256)
		                                                   : is_u8 ? 256 : (int)bins);
		if (is_u8) ((uint8_t *)data)[i] = (uint8_t)v;
		else ((int32_t *)data)[i] = v;
	}
	uint32_t *got = xmalloc(bins * sizeof *got);
	int64_t *want = calloc(bins, sizeof *want), *cpu = calloc(bins, sizeof *cpu);
	for (int64_t i = 0; i < n; i++) {
		unsigned v = is_u8 ? ((uint8_t *)data)[i] : (unsigned)((int32_t *)data)[i];
		want[scaled ? v * bins / 256 : v]++;
	}
	lmi_hist_call c = {.algo = algo, .is_u8 = is_u8, .scaled = scaled, .data = data, .n = n,
	                   .bins = bins, .block = block, .coarsen = algo == LMI_HIST_AGGREGATED ? 8 : 1,
	                   .histo = got};
	lmi_cuda_timing ct = {.repeats = timed ? 5 : 1};
	char msg[512] = "", first[96] = "";
	int err = api->histogram(&c, &ct, msg, sizeof msg);
	int64_t bad = 0;
	for (unsigned b = 0; !err && b < bins; b++)
		if (got[b] != (uint64_t)want[b] && !bad++)
			snprintf(first, sizeof first, "at bin %u: %u, expected %lld", b, got[b], (long long)want[b]);
	double cpu_ms = 0;
	if (timed) {
		uint16_t lut[256];
		for (unsigned b = 0; b < 256; b++) lut[b] = (uint16_t)(scaled ? b * bins / 256 : b % bins);
		double t[5];
		for (int r = -1; r < 5; r++) {
			lmi_cache_flush(data, (size_t)n * (is_u8 ? 1 : 4));
			lmi_cache_flush(cpu, bins * sizeof *cpu);
			double t0 = gc_now_ms();
			if (is_u8) lmi_cpu_histogram_u8(data, n, lut, cpu, NULL);
			else lmi_cpu_histogram_i32(data, n, bins, cpu, NULL);
			if (r >= 0) t[r] = gc_now_ms() - t0;
		}
		cpu_ms = median5(t);
	}
	char size[48], dt[16];
	snprintf(size, sizeof size, "%lld x %u", (long long)n, bins);
	snprintf(dt, sizeof dt, "%s", is_u8 ? (scaled ? "bytes" : "uint8") : "int32");
	row(tl, names[algo], same ? "same" : dt, size, block, err, msg, bad, first, timed ? ct.time_ms : 0,
	    cpu_ms, (double)n * (is_u8 ? 1 : 4), "GB/s");
	free(data);
	free(got);
	free(want);
	free(cpu);
}

/* ---------------------------------------------------------------- matmul */

static void fill(void *p, int64_t n, int dbl, int lo, int hi)
{
	for (int64_t i = 0; i < n; i++) {
		int v = gc_int(lo, hi);
		if (dbl) ((double *)p)[i] = v;
		else ((float *)p)[i] = (float)v;
	}
}

static double at(const void *p, int64_t i, int dbl)
{
	return dbl ? ((const double *)p)[i] : ((const float *)p)[i];
}

/* Compares n values; returns the number of differences and describes the first. */
static int64_t compare(const void *got, const void *want, int64_t n, int dbl, char *first, size_t cap)
{
	int64_t bad = 0;
	for (int64_t i = 0; i < n; i++)
		if (at(got, i, dbl) != at(want, i, dbl) && !bad++)
			snprintf(first, cap, "at %lld: %.17g, expected %.17g", (long long)i, at(got, i, dbl),
			         at(want, i, dbl));
	return bad;
}

static void matmul(const lmi_cuda_kernels *api, tally *tl, int algo, int dbl, int64_t m, int64_t k,
                   int64_t n, unsigned tile, int timed)
{
	size_t es = dbl ? 8 : 4;
	void *a = xmalloc((size_t)(m * k) * es), *b = xmalloc((size_t)(k * n) * es);
	void *c = xmalloc((size_t)(m * n) * es), *ref = xmalloc((size_t)(m * n) * es);
	fill(a, m * k, dbl, -2, 3);
	fill(b, k * n, dbl, -2, 3);
	lmi_matmul_call call = {.algo = algo, .is_double = dbl, .a = a, .b = b, .c = c, .m = m,
	                        .k = k, .n = n, .tile = tile};
	lmi_cuda_timing ct = {.repeats = timed ? 5 : 1};
	char msg[512] = "", first[128] = "";
	int err = api->matmul(&call, &ct, msg, sizeof msg);
	double t[5];
	for (int r = timed ? -1 : 4; r < 5; r++) { /* the reference; timed: the CPU's median */
		lmi_cache_flush(a, (size_t)(m * k) * es);
		lmi_cache_flush(b, (size_t)(k * n) * es);
		lmi_cache_flush(ref, (size_t)(m * n) * es);
		double t0 = gc_now_ms();
		if (dbl) lmi_cpu_matmul_tiled_f64(a, b, ref, m, k, n, tile, NULL);
		else lmi_cpu_matmul_tiled_f32(a, b, ref, m, k, n, tile, NULL);
		if (r >= 0) t[r] = gc_now_ms() - t0;
	}
	int64_t bad = err ? 0 : compare(c, ref, m * n, dbl, first, sizeof first);
	char size[48];
	snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)m, (long long)k, (long long)n);
	row(tl, algo ? "matmul tiled" : "matmul naive", dbl ? "float64" : "float32", size, tile, err,
	    msg, bad, first, timed ? ct.time_ms : 0, timed ? median5(t) : 0,
	    2.0 * (double)m * (double)k * (double)n, "GFLOP/s");
	free(a);
	free(b);
	free(c);
	free(ref);
}

/* ---------------------------------------------------------------- conv2d */

static void conv2d(const lmi_cuda_kernels *api, tally *tl, int algo, int dbl, int64_t h, int64_t w,
                   int64_t mh, int64_t mw, unsigned tile, int timed)
{
	static const char *const names[] = {"conv2d naive", "conv2d constant", "conv2d tiled-input",
	                                    "conv2d tiled-output"};
	size_t es = dbl ? 8 : 4;
	void *img = xmalloc((size_t)(h * w) * es), *mask = xmalloc((size_t)(mh * mw) * es);
	void *out = xmalloc((size_t)(h * w) * es), *ref = xmalloc((size_t)(h * w) * es);
	fill(img, h * w, dbl, -3, 4);
	fill(mask, mh * mw, dbl, -2, 3);
	lmi_conv_call c = {.algo = algo, .is_double = dbl, .img = img, .mask = mask, .out = out,
	                   .h = h, .w = w, .mh = mh, .mw = mw, .tile = tile};
	lmi_cuda_timing ct = {.repeats = timed ? 5 : 1};
	char msg[512] = "", first[128] = "";
	int err = api->conv2d(&c, &ct, msg, sizeof msg);
	double t[5];
	for (int r = timed ? -1 : 4; r < 5; r++) {
		lmi_cache_flush(img, (size_t)(h * w) * es);
		lmi_cache_flush(mask, (size_t)(mh * mw) * es);
		lmi_cache_flush(ref, (size_t)(h * w) * es);
		double t0 = gc_now_ms();
		if (dbl) lmi_cpu_conv2d_f64(img, mask, ref, h, w, mh, mw, NULL);
		else lmi_cpu_conv2d_f32(img, mask, ref, h, w, mh, mw, NULL);
		if (r >= 0) t[r] = gc_now_ms() - t0;
	}
	int64_t bad = err ? 0 : compare(out, ref, h * w, dbl, first, sizeof first);
	char size[48];
	snprintf(size, sizeof size, "%lldx%lld m%lldx%lld", (long long)h, (long long)w, (long long)mh,
	         (long long)mw);
	row(tl, names[algo], dbl ? "float64" : "float32", size, tile, err, msg, bad, first,
	    timed ? ct.time_ms : 0, timed ? median5(t) : 0, 2.0 * (double)(h * w) * (double)(mh * mw),
	    "GFLOP/s");
	free(img);
	free(mask);
	free(out);
	free(ref);
}

/* ---------------------------------------------------------------- SpMV */

/* A random m x n matrix in CSR with about density of it non-zero; every 7th row empty. */
typedef struct csr {
	int64_t m, n, nnz, width;
	int32_t *row, *row_ptr, *row_nnz, *col, *ell_col, *perm, *iter_ptr, *jds_nnz, *jds_col;
	void *val, *ell_val, *jds_val;
} csr;

static void make_csr(csr *A, int64_t m, int64_t n, double density, int dbl)
{
	size_t es = dbl ? 8 : 4;
	int64_t cap = (int64_t)((double)m * (double)n * density * 1.2) + m + 16, nnz = 0;
	A->m = m, A->n = n;
	A->row = xmalloc((size_t)cap * 4), A->col = xmalloc((size_t)cap * 4);
	A->val = xmalloc((size_t)cap * es);
	int per_row = (int)((double)n * density) + 1;
	for (int64_t r = 0; r < m; r++) {
		if (r % 7 == 3) continue;
		int len = gc_int(0, 2 * per_row);
		int64_t c = gc_int(0, 3);
		for (int t = 0; t < len && c < n && nnz < cap; t++) {
			A->row[nnz] = (int32_t)r, A->col[nnz] = (int32_t)c;
			int v = gc_int(1, 4);
			if (dbl) ((double *)A->val)[nnz] = v;
			else ((float *)A->val)[nnz] = (float)v;
			nnz++;
			c += gc_int(1, (int)(2 / density) + 1);
		}
	}
	A->nnz = nnz;
	A->row_ptr = xmalloc((size_t)(m + 1) * 4), A->row_nnz = xmalloc((size_t)m * 4);
	A->width = lmi_sparse_csr(m, nnz, A->row, A->row_ptr, A->row_nnz);
	A->ell_col = xmalloc((size_t)(A->width * m) * 4), A->ell_val = xmalloc((size_t)(A->width * m) * es);
	lmi_sparse_ell(m, A->width, A->row_ptr, A->col, A->val, es, A->ell_col, A->ell_val);
	A->perm = xmalloc((size_t)m * 4), A->iter_ptr = xmalloc((size_t)(A->width + 1) * 4);
	A->jds_nnz = xmalloc((size_t)m * 4), A->jds_col = xmalloc((size_t)nnz * 4);
	A->jds_val = xmalloc((size_t)nnz * es);
	lmi_sparse_jds(m, A->width, A->row_ptr, A->col, A->val, es, A->perm, A->iter_ptr, A->jds_nnz,
	               A->jds_col, A->jds_val);
}

static void free_csr(csr *A)
{
	void *p[] = {A->row, A->row_ptr, A->row_nnz, A->col, A->ell_col, A->perm, A->iter_ptr,
	             A->jds_nnz, A->jds_col, A->val, A->ell_val, A->jds_val};
	for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
}

static void spmv(const lmi_cuda_kernels *api, tally *tl, int format, int dbl, int64_t m, int64_t n,
                 double density, int timed)
{
	static const char *const names[] = {"spmv coo", "spmv csr", "spmv ell", "spmv jds"};
	size_t es = dbl ? 8 : 4;
	csr A;
	make_csr(&A, m, n, density, dbl);
	void *x = xmalloc((size_t)n * es), *y = xmalloc((size_t)m * es), *ref = xmalloc((size_t)m * es);
	fill(x, n, dbl, -3, 4);
	lmi_spmv_call c = {.format = format, .is_double = dbl, .m = m, .n = n, .nnz = A.nnz,
	                   .width = A.width, .row = A.row, .row_ptr = A.row_ptr, .x = x, .y = y,
	                   .block = 256};
	lmi_cuda_timing ct = {.repeats = timed ? 5 : 1};
	switch (format) {
	case LMI_SPMV_ELL: c.col = A.ell_col, c.val = A.ell_val, c.row_nnz = A.row_nnz; break;
	case LMI_SPMV_JDS:
		c.col = A.jds_col, c.val = A.jds_val, c.row_nnz = A.jds_nnz, c.perm = A.perm;
		c.iter_ptr = A.iter_ptr;
		break;
	default: c.col = A.col, c.val = A.val; break;
	}
	char msg[512] = "", first[128] = "";
	int err = api->spmv(&c, &ct, msg, sizeof msg);
	double t[5];
	for (int r = timed ? -1 : 4; r < 5; r++) {
		lmi_cache_flush(A.row_ptr, (size_t)(m + 1) * 4);
		lmi_cache_flush(A.col, (size_t)A.nnz * 4);
		lmi_cache_flush(A.val, (size_t)A.nnz * es);
		lmi_cache_flush(x, (size_t)n * es);
		lmi_cache_flush(ref, (size_t)m * es);
		double t0 = gc_now_ms();
		if (dbl) lmi_cpu_spmv_csr_f64(A.row_ptr, A.col, A.val, x, ref, m, NULL);
		else lmi_cpu_spmv_csr_f32(A.row_ptr, A.col, A.val, x, ref, m, NULL);
		if (r >= 0) t[r] = gc_now_ms() - t0;
	}
	int64_t bad = err ? 0 : compare(y, ref, m, dbl, first, sizeof first);
	char size[48];
	snprintf(size, sizeof size, "%lldx%lld nnz %lld", (long long)m, (long long)n, (long long)A.nnz);
	/* bytes of CSR: val and col per nonzero, row_ptr, x and y */
	double bytes = (double)A.nnz * (double)(es + 4) + (double)(m + 1) * 4 + (double)(m + n) * es;
	row(tl, names[format], dbl ? "float64" : "float32", size, 256, err, msg, bad, first,
	    timed ? ct.time_ms : 0, timed ? median5(t) : 0, bytes, "GB/s (cpu: csr)");
	free(x);
	free(y);
	free(ref);
	free_csr(&A);
}

/* ---------------------------------------------------------------- divergence, streams */

static void divergence(const lmi_cuda_kernels *api, tally *tl, int pattern, int64_t warps, int timed)
{
	static const char *const names[] = {"divergence even-odd", "divergence half-warp",
	                                    "divergence data", "divergence warp", "divergence none"};
	int64_t n = warps * 32;
	float *x = xmalloc((size_t)n * 4), *y = xmalloc((size_t)n * 4);
	for (int64_t i = 0; i < n; i++) x[i] = (float)gc_int(0, 1000) / 1000.0f;
	unsigned block = n < 256 ? (unsigned)n : 256;
	lmi_divergence_call c = {.pattern = pattern, .warps = warps, .block = block, .x = x, .y = y};
	lmi_cuda_timing ct = {.repeats = timed ? 5 : 1};
	char msg[512] = "", first[128] = "";
	int err = api->divergence(&c, &ct, msg, sizeof msg);
	int64_t bad = 0;
	for (int64_t i = 0; !err && i < n; i++) {
		unsigned lane = (unsigned)(i % 32), tid = (unsigned)(i % block);
		int take = pattern == LMI_DIV_EVEN_ODD    ? lane % 2 == 0
		           : pattern == LMI_DIV_HALF_WARP ? lane < 16
		           : pattern == LMI_DIV_DATA      ? x[i] > 0.5f
		           : pattern == LMI_DIV_WARP      ? tid / 32 % 2 == 0
		                                          : 1;
		float v = x[i];
		if (take) v = v + 1.0f, v = v + 2.0f, v = v + 3.0f, v = v + 4.0f;
		else v = v + -1.0f, v = v + -2.0f, v = v + -3.0f, v = v + -4.0f;
		if (y[i] != v && !bad++) snprintf(first, sizeof first, "at %lld: %g, expected %g", (long long)i, y[i], v);
	}
	char size[48];
	snprintf(size, sizeof size, "%lld warps", (long long)warps);
	row(tl, names[pattern], "float32", size, block, err, msg, bad, first, timed ? ct.time_ms : 0, 0,
	    8.0 * (double)n, "GB/s");
	free(x);
	free(y);
}

static void streams(const lmi_cuda_kernels *api, tally *tl, int64_t n, int segments)
{
	float *a = xmalloc((size_t)n * 4), *b = xmalloc((size_t)n * 4), *c = xmalloc((size_t)n * 4);
	for (int64_t i = 0; i < n; i++) a[i] = (float)gc_int(-100, 100), b[i] = (float)gc_int(-100, 100);
	lmi_cuda_span *ser = xmalloc((size_t)segments * sizeof *ser), *ovl = xmalloc((size_t)segments * sizeof *ovl);
	lmi_streams_call call = {.n = n, .segments = segments, .block = 256, .a = a, .b = b, .c = c};
	lmi_cuda_streams_result res = {.serial = ser, .overlapped = ovl};
	char msg[512] = "", first[128] = "";
	int err = api->streams(&call, &res, msg, sizeof msg);
	int64_t bad = 0;
	for (int64_t i = 0; !err && i < n; i++)
		if (c[i] != a[i] + b[i] && !bad++)
			snprintf(first, sizeof first, "at %lld: %g, expected %g", (long long)i, c[i], a[i] + b[i]);
	char what[48], size[48];
	snprintf(what, sizeof what, "streams %d segments", segments);
	snprintf(size, sizeof size, "%lld floats", (long long)n);
	/* the cuda column: overlapped; the cpu column: serial (both on the GPU), bytes over PCIe */
	row(tl, what, "float32", size, 256, err, msg, bad, first, err ? 0 : res.overlapped_ms,
	    err ? 0 : res.serial_ms, 12.0 * (double)n, "GB/s (overlapped | serial)");
	if (!err) printf("    speedup %.2f, pinned host memory: %s\n", res.serial_ms / res.overlapped_ms,
	                 res.pinned ? "yes" : "no");
	free(a);
	free(b);
	free(c);
	free(ser);
	free(ovl);
}

/* A compiled program's fused group (lm.graph) as the generic kernel of body/fused.h: out =
 * relu(a * (1 - w) + b * w) with w a column (n x 1) broadcast over the rows, a second result
 * (a - b) * 2, on integers (exact) against a loop. */
static void fused(const lmi_cuda_kernels *api, tally *tl, int64_t rows, int64_t cols, int timed)
{
	int64_t n = rows * cols;
	float *a = xmalloc((size_t)n * 4), *b = xmalloc((size_t)n * 4), *w = xmalloc((size_t)rows * 4);
	float *y = xmalloc((size_t)n * 4), *z = xmalloc((size_t)n * 4), one = 1, two = 2;
	for (int64_t i = 0; i < n; i++) a[i] = (float)gc_int(-100, 100), b[i] = (float)gc_int(-100, 100);
	for (int64_t i = 0; i < rows; i++) w[i] = (float)gc_int(-3, 4);
	lmi_fused_call c;
	memset(&c, 0, sizeof c);
	lmk_fused_prog *P = &c.prog;
	P->n = (int)n, P->nout = 2, P->nin = 5, P->ninstr = 7, P->ndim = 2;
	P->shape[0] = (int)rows, P->shape[1] = (int)cols;
	void *ops[7] = {y, z, a, b, w, &one, &two};
	int64_t len[7] = {n, n, n, n, rows, 1, 1};
	int st[7][2] = {{(int)cols, 1}, {(int)cols, 1}, {(int)cols, 1}, {(int)cols, 1}, {1, 0}, {0, 0}, {0, 0}};
	for (int j = 0; j < 7; j++) {
		c.op[j] = ops[j], c.len[j] = len[j];
		P->stride[j][0] = st[j][0], P->stride[j][1] = st[j][1];
	}
	/* r0 = one - w; r1 = a * r0; r2 = b * w; r3 = r1 + r2; y = relu(r3); r4 = a - b; z = r4 * two */
	const int prog[7][4] = {{LMK_FUSED_SUB, 100, 5, 4},  {LMK_FUSED_MUL, 101, 2, 100}, {LMK_FUSED_MUL, 102, 3, 4},
	                        {LMK_FUSED_ADD, 103, 101, 102}, {LMK_FUSED_RELU, 0, 103, -1}, {LMK_FUSED_SUB, 104, 2, 3},
	                        {LMK_FUSED_MUL, 1, 104, 6}};
	for (int k = 0; k < 7; k++) {
		P->code[k] = prog[k][0];
		for (int j = 0; j < 3; j++) P->ref[k][j] = prog[k][j + 1];
		P->ref[k][3] = -1;
	}
	c.block = 256;
	lmi_cuda_timing ct = {.repeats = timed ? 5 : 1};
	char msg[512] = "", first[128] = "";
	int err = api->fused(&c, &ct, msg, sizeof msg);
	int64_t bad = 0;
	for (int64_t i = 0; !err && i < n; i++) {
		float wv = w[i / cols], v = a[i] * (1 - wv) + b[i] * wv, u = (a[i] - b[i]) * 2;
		v = v < 0 ? 0 : v;
		if ((y[i] != v || z[i] != u) && !bad++)
			snprintf(first, sizeof first, "at %lld: %g, %g, expected %g, %g", (long long)i, y[i], z[i], v, u);
	}
	char size[48];
	snprintf(size, sizeof size, "%lldx%lld", (long long)rows, (long long)cols);
	row(tl, "fused (lm.graph group)", "float32", size, 256, err, msg, bad, first, timed ? ct.time_ms : 0, 0,
	    4.0 * (4.0 * (double)n + (double)rows), "GB/s");
	free(a);
	free(b);
	free(w);
	free(y);
	free(z);
}

void gc_kernels_two(const lmi_cuda_kernels *api, tally *tl, int quick)
{
	int64_t big = quick ? 1 << 22 : 1 << 26;
	printf("\nkernels II\n");
	for (int a = 0; a < LMI_HIST_ALGO_COUNT; a++) {
		const unsigned blocks[] = {1, 32, 256, 1024};
		for (int bl = 0; bl < 4; bl++) {
			histogram(api, tl, a, 1, 0, 1, 1, blocks[bl], 0, 0);
			histogram(api, tl, a, 1, 0, 100003, 256, blocks[bl], 0, 0);
			histogram(api, tl, a, 0, 0, 100003, 4096, blocks[bl], 0, 0);
			histogram(api, tl, a, 1, 1, 1000, 100, blocks[bl], 0, 0);
		}
		histogram(api, tl, a, 0, 0, 100003, 64, 256, 1, 0); /* all equal */
		histogram(api, tl, a, 1, 0, big, 256, 256, 0, 1);
		histogram(api, tl, a, 0, 0, big / 4 + 7, 4096, 256, 0, 1);
	}
	for (int algo = 0; algo < LMI_MATMUL_ALGO_COUNT; algo++)
		for (int dbl = 0; dbl < 2; dbl++) {
			const unsigned tiles[] = {1, 8, 16, 32};
			for (int t = 0; t < 4; t++) {
				matmul(api, tl, algo, dbl, 1, 1, 1, tiles[t], 0);
				matmul(api, tl, algo, dbl, 129, 67, 95, tiles[t], 0);
			}
			matmul(api, tl, algo, dbl, quick ? 512 : 2048, quick ? 512 : 2048, quick ? 512 : 2048, 16, 1);
		}
	for (int algo = 0; algo < LMI_CONV_ALGO_COUNT; algo++)
		for (int dbl = 0; dbl < 2; dbl++) {
			conv2d(api, tl, algo, dbl, 1, 1, 1, 1, 16, 0);
			conv2d(api, tl, algo, dbl, 333, 517, 5, 5, 16, 0);
			conv2d(api, tl, algo, dbl, 100, 37, 7, 3, 8, 0);
			conv2d(api, tl, algo, dbl, 64, 64, 3, 3, 30, 0);
			conv2d(api, tl, algo, dbl, quick ? 1024 : 4096, quick ? 1024 : 4096, 7, 7, 16, 1);
		}
	for (int f = 0; f < LMI_SPMV_FORMAT_COUNT; f++)
		for (int dbl = 0; dbl < 2; dbl++) {
			spmv(api, tl, f, dbl, 1, 1, 1.0, 0);
			spmv(api, tl, f, dbl, 1000, 700, 0.05, 0);
			spmv(api, tl, f, dbl, quick ? 4096 : 16384, quick ? 4096 : 16384, 0.01, 1);
		}
	for (int p = 0; p < LMI_DIV_PATTERN_COUNT; p++) {
		divergence(api, tl, p, 1, 0);
		divergence(api, tl, p, quick ? 4096 : 65536, 1);
	}
	fused(api, tl, 1, 1, 0);
	fused(api, tl, 257, 9, 0);
	fused(api, tl, quick ? 1024 : 8192, 1027, 1);
	streams(api, tl, 1001, 3);
	const int segs[] = {1, 4, 16};
	for (int s = 0; s < 3; s++) streams(api, tl, big / 4, segs[s]);
}
