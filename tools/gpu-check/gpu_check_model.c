/*
 * gpu_check_model.c — the lectures' comparisons (docs/trace.md, "The lectures' comparisons,
 * modelled"): the emulator's modelled cycles beside CUDA's measured times for the same kernels on
 * the same inputs, and whether the two rank them alike.
 *
 * Design: each comparison is a list of variants of one plan call (body/<pattern>_plan.h); every
 * variant runs once on the emulator (lmi_emu_<pattern> on an lmi_simt without a trace: the
 * counters and cycles are complete without one, under the default latency model) and once through
 * the CUDA table (median of 5), and its result is checked against the first variant's. The
 * emulator is liblumen's own (simt*.c, simt_model.c, latency.c, the *_emu.c hosts, with
 * src/core's allocator, errors and dtypes; gpu_check_shim.c supplies the rest), so the build still
 * needs only a C compiler, CMake and the CUDA toolkit.
 * Read next: gpu_check.c (main), ../../src/kernels/simt_model.c (the model).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_check.h"
#include "kernels/patterns.h"
#include "kernels/sparse_formats.h"

/* One variant: its name, how to run it on a simulator (emu) and on the GPU (cuda), and its
 * output (n elements of elem bytes) for the comparison. */
typedef struct variant {
	const char *name;
	lm_status (*emu)(lmi_simt *s, const lmi_kcall *k, void *run);
	int (*cuda)(const lmi_cuda_kernels *api, void *run, lmi_cuda_timing *t, char *msg, size_t cap);
	void *run;
	const void *out;
	size_t out_bytes;
} variant;

static void *xcalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);
	if (!p) {
		fprintf(stderr, "gpu-check: out of host memory (%zu bytes)\n", n);
		exit(1);
	}
	return p;
}

static int cuda_reduce(const lmi_cuda_kernels *api, void *run, lmi_cuda_timing *t, char *msg, size_t cap)
{
	return api->reduce(&((lmi_reduce_run *)run)->c, t, msg, cap);
}
static int cuda_divergence(const lmi_cuda_kernels *api, void *run, lmi_cuda_timing *t, char *msg, size_t cap)
{
	return api->divergence(&((lmi_divergence_run *)run)->c, t, msg, cap);
}
static int cuda_access(const lmi_cuda_kernels *api, void *run, lmi_cuda_timing *t, char *msg, size_t cap)
{
	return api->access(&((lmi_access_run *)run)->c, t, msg, cap);
}
static int cuda_spmv(const lmi_cuda_kernels *api, void *run, lmi_cuda_timing *t, char *msg, size_t cap)
{
	return api->spmv(&((lmi_spmv_run *)run)->c, t, msg, cap);
}

/* Modelled cycles of v (0 and a message on failure). */
static double modelled(const variant *v, lm_dtype dt)
{
	lm_latency_model lat;
	lm_kernel_latency_default(&lat);
	lmi_simt *s = lmi_simt_new("gpu-check", NULL, &lat);
	if (!s) return 0;
	lmi_kcall k;
	memset(&k, 0, sizeof k);
	k.fname = "gpu-check";
	k.dtype = dt;
	double cyc = 0;
	if (v->emu(s, &k, v->run) == LM_OK) cyc = (double)lmi_simt_counters_get(s)->cycles;
	else printf("    emulator: %s\n", lm_last_error());
	lmi_simt_free(s);
	return cyc;
}

/* Runs the variants of one comparison; the lecture's claim: variant 0 is slower than variant 1
 * (and each later one than the next). Prints a row per variant and the verdicts; api NULL: the
 * model only (gpu_check --model, on a machine without a GPU). */
static void compare(const lmi_cuda_kernels *api, tally *tl, const char *what, const char *claim,
                    variant *v, int nv, lm_dtype dt)
{
	double cyc[4], ms[4];
	int ok = 1;
	printf("%s  (%s)\n", what, claim);
	for (int i = 0; i < nv; i++) {
		void *emu_out = xcalloc(v[i].out_bytes);
		cyc[i] = modelled(&v[i], dt);
		memcpy(emu_out, v[i].out, v[i].out_bytes); /* the emulator's result */
		lmi_cuda_timing t = {.repeats = 5};
		char msg[512] = "";
		tl->runs++;
		int err = api ? v[i].cuda(api, v[i].run, &t, msg, sizeof msg) : 0;
		int same = !err && memcmp(emu_out, v[i].out, v[i].out_bytes) == 0;
		ms[i] = err ? 0 : t.time_ms;
		if (err || !same || cyc[i] == 0) tl->failures++, ok = 0;
		if (api)
			printf("  %-24s %14.0f %12.4f  %s\n", v[i].name, cyc[i], ms[i],
			       err ? "CUDA ERROR" : same ? "ok" : "MISMATCH (cuda vs emu)");
		else
			printf("  %-24s %14.0f %12s  %s\n", v[i].name, cyc[i], "-", cyc[i] ? "ok" : "FAILED");
		if (err) printf("    %s\n", msg);
		free(emu_out);
	}
	if (!ok) return;
	int model = 1, tie = 0, cuda = 1;
	for (int i = 0; i + 1 < nv; i++) {
		model &= cyc[i] >= cyc[i + 1];
		tie |= cyc[i] == cyc[i + 1];
		cuda &= ms[i] > ms[i + 1];
	}
	const char *m = !model ? "NOT as the lecture" : tie ? "a tie (the SM's memory pipe, not the path, decides)"
	                                              : "as the lecture";
	if (api)
		printf("  ranking: model %s; CUDA %s%s\n\n", m, cuda ? "as the lecture" : "not as the lecture",
		       (model && !tie) == cuda ? "" : "  <- the model and the GPU differ");
	else
		printf("  ranking: model %s (no GPU: no CUDA times)\n\n", m);
	if (!model) tl->failures++; /* the model's order is the tests' promise; the GPU's is reported */
}

static void fill_ints(float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++) x[i] = (float)gc_int(-2, 3); /* exact sums in any order */
}

static void reductions(const lmi_cuda_kernels *api, tally *tl, int64_t n)
{
	float *x = xcalloc((size_t)n * sizeof *x), y[2] = {0, 0};
	fill_ints(x, n);
	lmi_reduce_run r[2];
	variant v[2];
	static const char *const names[] = {"naive", "convergent"};
	for (int a = 0; a < 2; a++) {
		r[a] = (lmi_reduce_run){.c = {.algo = a, .x = x, .y = &y[a], .n = n, .block = 256, .coarsen = 1}};
		v[a] = (variant){names[a], lmi_emu_reduce, cuda_reduce, &r[a], &y[a], sizeof y[a]};
	}
	char what[96];
	snprintf(what, sizeof what, "reduce %lld float32, block 256", (long long)n);
	compare(api, tl, what, "naive slower than convergent", v, 2, LM_FLOAT32);
	free(x);
}

static void divergences(const lmi_cuda_kernels *api, tally *tl, int64_t warps)
{
	int64_t n = warps * 32;
	unsigned block = n < 256 ? (unsigned)n : 256;
	float *x = xcalloc((size_t)n * sizeof *x), *y[2] = {xcalloc((size_t)n * 4), xcalloc((size_t)n * 4)};
	for (int64_t i = 0; i < n; i++) x[i] = (float)(i % 7) / 7.0f;
	lmi_divergence_run r[2];
	variant v[2];
	static const int pat[] = {LMI_DIV_EVEN_ODD, LMI_DIV_WARP};
	static const char *const names[] = {"even-odd", "warp"};
	for (int a = 0; a < 2; a++) {
		r[a] = (lmi_divergence_run){.c = {.pattern = pat[a], .warps = warps, .block = block, .x = x, .y = y[a]}};
		v[a] = (variant){names[a], lmi_emu_divergence, cuda_divergence, &r[a], y[a], (size_t)n * 4};
	}
	char what[96];
	snprintf(what, sizeof what, "divergence demo, %lld warps", (long long)warps);
	compare(api, tl, what, "the divergent branch costs a path more", v, 2, LM_FLOAT32);
	free(x), free(y[0]), free(y[1]);
}

/* The access demos on a rows x cols matrix: kinds[0..nk) compared in that order. */
static void accesses(const lmi_cuda_kernels *api, tally *tl, const char *what, const char *claim,
                     const int *kinds, const char *const *names, int nk, int64_t rows, int64_t cols)
{
	float *x = xcalloc((size_t)(rows * cols) * sizeof *x);
	fill_ints(x, rows * cols);
	lmi_access_run r[4];
	variant v[4];
	for (int a = 0; a < nk; a++) {
		r[a] = (lmi_access_run){.c = {.kind = kinds[a], .x = x, .rows = rows, .cols = cols, .block = 256}};
		size_t bytes = (size_t)lmk_access_out_len(&r[a].c) * sizeof(float);
		r[a].c.y = xcalloc(bytes);
		v[a] = (variant){names[a], lmi_emu_access, cuda_access, &r[a], r[a].c.y, bytes};
	}
	compare(api, tl, what, claim, v, nk, LM_FLOAT32);
	for (int a = 0; a < nk; a++) free(r[a].c.y);
	free(x);
}

/* CSR against ELL on m rows of `per` nonzeros each (no padding: only the layout differs). */
static void csr_ell(const lmi_cuda_kernels *api, tally *tl, int64_t m, int64_t per)
{
	int64_t n = m, nnz = m * per;
	int32_t *row = xcalloc((size_t)nnz * 4), *col = xcalloc((size_t)nnz * 4);
	int32_t *row_ptr = xcalloc((size_t)(m + 1) * 4), *row_nnz = xcalloc((size_t)m * 4);
	int32_t *ell_col = xcalloc((size_t)nnz * 4);
	float *val = xcalloc((size_t)nnz * 4), *ell_val = xcalloc((size_t)nnz * 4), *x = xcalloc((size_t)n * 4);
	float *y[2] = {xcalloc((size_t)m * 4), xcalloc((size_t)m * 4)};
	for (int64_t i = 0; i < nnz; i++) {
		row[i] = (int32_t)(i / per);
		col[i] = (int32_t)((i % per) * (n / per) + gc_int(0, (int)(n / per))); /* sorted in a row */
		val[i] = (float)gc_int(-2, 3);
	}
	fill_ints(x, n);
	int64_t width = lmi_sparse_csr(m, nnz, row, row_ptr, row_nnz);
	lmi_sparse_ell(m, width, row_ptr, col, val, sizeof(float), ell_col, ell_val);
	lmi_spmv_run r[2] = {
		{.c = {.format = LMI_SPMV_CSR, .m = m, .n = n, .nnz = nnz, .width = width, .row_ptr = row_ptr,
		       .col = col, .val = val, .x = x, .y = y[0], .block = 256}},
		{.c = {.format = LMI_SPMV_ELL, .m = m, .n = n, .nnz = nnz, .width = width, .row_nnz = row_nnz,
		       .col = ell_col, .val = ell_val, .x = x, .y = y[1], .block = 256}},
	};
	variant v[2] = {{"csr", lmi_emu_spmv, cuda_spmv, &r[0], y[0], (size_t)m * 4},
	                {"ell", lmi_emu_spmv, cuda_spmv, &r[1], y[1], (size_t)m * 4}};
	char what[96];
	snprintf(what, sizeof what, "spmv %lld rows of %lld nonzeros, float32", (long long)m, (long long)per);
	compare(api, tl, what, "CSR (a thread per row) slower than ELL's column-major slots", v, 2, LM_FLOAT32);
	void *all[] = {row, col, row_ptr, row_nnz, ell_col, val, ell_val, x, y[0], y[1]};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
}

void gc_model_rankings(const lmi_cuda_kernels *api, tally *tl, int quick)
{
	printf("\nthe lectures' comparisons: modelled cycles (emulator, default latency model) and CUDA "
	       "times (median of 5) of the same kernels on the same input\n");
	printf("  %-24s %14s %12s  %s\n\n", "kernel", "model cycles", "cuda ms", "result");
	int64_t side = quick ? 512 : 2048;
	reductions(api, tl, quick ? 1 << 18 : 1 << 20);
	divergences(api, tl, 4);    /* latency-bound: the second path shows */
	divergences(api, tl, 4096); /* bandwidth-bound: the model hides a 4-add path behind memory */
	static const int sums[] = {LMI_ACCESS_SUM_ROWS, LMI_ACCESS_SUM_COLUMNS};
	static const char *const sum_names[] = {"strided (row sums)", "coalesced (column sums)"};
	char what[96];
	snprintf(what, sizeof what, "sums of a %lld x %lld float32 matrix", (long long)side, (long long)side);
	accesses(api, tl, what, "strided slower than coalesced", sums, sum_names, 2, side, side);
	static const int tr[] = {LMI_ACCESS_TRANSPOSE_NAIVE, LMI_ACCESS_TRANSPOSE_SHARED,
	                         LMI_ACCESS_TRANSPOSE_PADDED};
	static const char *const tr_names[] = {"naive", "shared (conflicts)", "padded"};
	snprintf(what, sizeof what, "transpose of a %lld x %lld float32 matrix", (long long)side, (long long)side);
	accesses(api, tl, what, "naive slower than the shared tile, slower than the padded tile", tr,
	         tr_names, 3, side, side);
	csr_ell(api, tl, quick ? 1 << 14 : 1 << 16, 32);
}
