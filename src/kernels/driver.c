/*
 * driver.c — the pattern driver: what every public call of include/lumen/kernels.h does after
 * its checks. It holds the call's inputs, output and buffers (released whatever happens), runs the
 * pattern one of three ways, times the measured runs and fills the info.
 *
 * Design: a pattern is an lmi_pattern (patterns.h): an emulated run, one native cpu run and a
 * CUDA run through the module's table, plus what it adds to the info (finish). The cpu run is
 * timed here: a warm-up, then the median of `repeats` runs, each started with every operand
 * flushed from the caches, so that GB/s is memory bandwidth even for inputs that fit in the cache
 * (the CUDA module flushes the GPU's L2 the same way: cuda/cuda_host.h). Counters come in one
 * order: the emulator's, or time_ms, bytes, gbps (+ gflops), threads (cpu) or launches and block
 * (cuda); then the pattern's own.
 * Read next: patterns.h, scan.c (a pattern using it), kernels.c (options and the info).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda_module.h"
#include "kernels/opencl/opencl_kernels.h"
#include "core/cpu_isa.h"
#include "kernels/cpu_kernels.h"
#include "kernels/patterns.h"

/* ---------------------------------------------------------------- what a call holds */

lm_status lmi_kcall_start(const char *fname, lm_tensor **out, lm_kernel_info **info)
{
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", fname);
	*out = NULL;
	*info = NULL;
	return LM_OK;
}

static void *failed(lmi_kcall *k, lm_status st)
{
	if (!k->status) k->status = st;
	return NULL;
}

void lmi_kcall_operand(lmi_kcall *k, const void *p, size_t bytes)
{
	int cap = (int)(sizeof k->operands / sizeof k->operands[0]);
	LM_ASSERT(k->noperands < cap);
	k->operands[k->noperands].p = p;
	k->operands[k->noperands++].bytes = bytes;
}

const void *lmi_kcall_input(lmi_kcall *k, const lm_tensor *x)
{
	if (k->status) return NULL;
	lm_tensor *c = lm_contiguous(x);
	if (!c) return failed(k, lm_last_status());
	LM_ASSERT(k->nheld < (int)(sizeof k->held / sizeof k->held[0]));
	k->held[k->nheld++] = c;
	lmi_kcall_operand(k, lm_tensor_data(c), lm_tensor_nbytes(c));
	return lm_tensor_data(c);
}

void *lmi_kcall_output(lmi_kcall *k, lm_tensor *y)
{
	if (!y) return failed(k, lm_last_status());
	if (k->status) {
		lm_tensor_release(y);
		return NULL;
	}
	LM_ASSERT(!k->out);
	k->out = y;
	lmi_kcall_operand(k, lm_tensor_data(y), lm_tensor_nbytes(y));
	return lm_tensor_data(y);
}

void *lmi_kcall_alloc(lmi_kcall *k, size_t bytes)
{
	if (k->status || bytes == 0) return NULL;
	void *p = lm_alloc(bytes);
	if (!p)
		return failed(k, lmi_fail(LM_ERR_NOMEM, "%s: out of memory for %zu bytes", k->fname, bytes));
	LM_ASSERT(k->nbufs < (int)(sizeof k->bufs / sizeof k->bufs[0]));
	k->bufs[k->nbufs].p = p;
	k->bufs[k->nbufs++].bytes = bytes;
	lmi_kcall_operand(k, p, bytes);
	return p;
}

static void release_held(lmi_kcall *k)
{
	for (int i = 0; i < k->nheld; i++) lm_tensor_release(k->held[i]);
	for (int i = 0; i < k->nbufs; i++) lm_free(k->bufs[i].p, k->bufs[i].bytes);
	lm_tensor_release(k->out);
	k->nheld = k->nbufs = k->noperands = 0;
	k->out = NULL;
}

lm_status lmi_kcall_fail(lmi_kcall *k, lm_status st)
{
	release_held(k);
	return st;
}

/* ---------------------------------------------------------------- the three runs */

/* "a + b" of names[0..n). */
static void join_names(const char *const *names, int n, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " + " : "", names[i]);
}

static lm_status run_emu(const lmi_pattern *pt, const lmi_kcall *k, void *run, lm_kernel_info *info)
{
	lmi_simt *s;
	lm_status st = lmi_emu_start(k, k->name, info, k->sms, &s);
	if (st) return st;
	if ((st = pt->emu(s, k, run)) == LM_OK) {
		const lmi_simt_counters *c = lmi_simt_counters_get(s);
		const char *ran[LMI_SIMT_MAX_KERNELS];
		char names[200];
		int n = lmi_simt_kernels_run(s, ran, LMI_SIMT_MAX_KERNELS);
		join_names(ran, n < LMI_SIMT_MAX_KERNELS ? n : LMI_SIMT_MAX_KERNELS, names, sizeof names);
		lmi_info_set_impl(info, "emu: %s (%s)", names, pt->body);
		lm_latency_model lat;
		lm_trace_latency(lm_kernel_info_trace(info), &lat);
		lmi_info_set_model(info, &lat);
		lmi_info_add_emu(info, c, k);
		if (pt->finish) st = pt->finish(info, k, run, c);
	}
	lmi_simt_free(s);
	return st;
}

/* time_ms, bytes, gbps and gflops of a measured run. */
static void add_measured(lm_kernel_info *info, const lmi_kcall *k, double ms)
{
	lmi_info_add_measured(info, ms, k->bytes);
	if (k->flops > 0) lmi_info_add(info, "gflops", k->flops / (ms * 1e6));
}

typedef struct cpu_timed {
	const lmi_pattern *pt;
	const lmi_kcall *k;
	void *run;
} cpu_timed;

static int cpu_once(void *p)
{
	cpu_timed *t = p;
	return t->pt->cpu(t->k, t->run);
}

/* Before each timed run: the operands start in memory, not in a cache. */
static void cpu_cold(void *p)
{
	const lmi_kcall *k = ((cpu_timed *)p)->k;
	for (int i = 0; i < k->noperands; i++) lmi_cache_flush(k->operands[i].p, k->operands[i].bytes);
}

/* info.impl of a cpu run: what it is, then what was asked that only the emu and cuda runs follow
 * ("; algo 'global-atomic' and coarsen 4 apply to emu and cuda only"). */
static void cpu_impl(const lmi_pattern *pt, const lmi_kcall *k, void *run, lm_kernel_info *info)
{
	char what[240], gpu[4][48];
	int n = 0;
	LM_ASSERT(pt->cpu_impl); /* every cpu run says what it is */
	unsigned f = pt->cpu_impl(k, run, what, sizeof what);
	if (!(f & LMI_CPU_IS_VARIANT)) {
		snprintf(gpu[n++], sizeof gpu[0], "%s '%s'", pt->variant ? pt->variant : "algo", k->algo_name);
		lmi_info_set_label(info, false);
	}
	if (k->gave_block && !(f & LMI_CPU_USES_BLOCK))
		snprintf(gpu[n++], sizeof gpu[0], "block %u", k->block);
	if (k->gave_tile && !(f & LMI_CPU_USES_TILE)) snprintf(gpu[n++], sizeof gpu[0], "tile %u", k->tile);
	if (k->gave_coarsen && !(f & LMI_CPU_USES_COARSEN))
		snprintf(gpu[n++], sizeof gpu[0], "coarsen %u", k->coarsen);
	char note[240] = "";
	size_t len = 0;
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(note + len, sizeof note - len, "%s%s",
		                        i == 0 ? "; " : i == n - 1 ? " and " : ", ", gpu[i]);
	if (n) snprintf(note + len, sizeof note - len, " appl%s to emu and cuda only", n == 1 ? "ies" : "y");
	lmi_info_set_impl(info, "cpu: %s%s", what, note);
}

static lm_status run_cpu(const lmi_pattern *pt, const lmi_kcall *k, void *run, lm_kernel_info *info)
{
	LM_ASSERT(pt->cpu); /* patterns without one pass LMI_RUNS_NO_CPU: "cpu" is refused */
	/* the kernels' SIMD path is lumen/isa.h's (LUMEN_ISA, lm_isa_set): supported by both */
	if (lmi_cpu_set_isa((int)lmi_isa())) lmi_cpu_set_isa(LMI_CPU_SCALAR);
	cpu_timed t = {pt, k, run};
	double ms;
	lm_status st = lmi_time_median(k->fname, k->repeats, cpu_once, cpu_cold, &t, &ms);
	if (st) return st;
	if (!pt->own_measures) {
		add_measured(info, k, ms);
		lmi_info_add(info, "threads", lmi_cpu_kernel_threads());
	}
	cpu_impl(pt, k, run, info);
	return pt->finish ? pt->finish(info, k, run, NULL) : LM_OK;
}

const lmi_cuda_kernels *lmi_cuda_kernels_get(const char *fname)
{
	const lmi_cuda_kernels *(*get)(void);
	*(void **)&get = lmi_cuda_module_symbol(fname, LMI_CUDA_KERNELS_SYMBOL);
	if (!get) return NULL;
	const lmi_cuda_kernels *t = get();
	if (!t || t->version != LMI_CUDA_KERNELS_VERSION)
		return lmi_fail_null(LM_ERR_DEVICE, "%s: backend 'cuda' is not available: the CUDA module "
		                     "is not of this build (kernels table version %d, expected %d)", fname,
		                     t ? t->version : -1, LMI_CUDA_KERNELS_VERSION);
	return t;
}

static lm_status run_cuda(const lmi_pattern *pt, const lmi_kcall *k, void *run,
                          lm_kernel_info *info)
{
	const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
	if (!api) return lm_last_status();
	lmi_cuda_timing t = {.repeats = k->repeats};
	char msg[512] = "";
	if (pt->cuda(api, k, run, &t, msg, sizeof msg))
		return lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
	lmi_info_set_impl(info, "cuda: %s (%s)", t.kernels[0] ? t.kernels : "no kernel launched",
	                  pt->body);
	if (!pt->own_measures) {
		add_measured(info, k, t.time_ms);
		if (t.launches > 0) lmi_info_add(info, "launches", t.launches);
		lmi_info_add(info, "block", k->block);
	}
	return pt->finish ? pt->finish(info, k, run, NULL) : LM_OK;
}

/* The OpenCL run: the patterns' CUDA callbacks on the OpenCL table (opencl/opencl_kernels.h),
 * which has the runs of the patterns it builds as OpenCL C and NULL for the others. */
static lm_status run_opencl(const lmi_pattern *pt, const lmi_kcall *k, void *run,
                            lm_kernel_info *info)
{
	static const char *const built[] = {"scan", "reduce", "histogram", "matmul", "conv2d", "spmv"};
	bool ok = false;
	for (size_t i = 0; i < sizeof built / sizeof built[0]; i++) ok |= strcmp(pt->name, built[i]) == 0;
	if (!ok || !pt->cuda)
		return lmi_fail(LM_ERR_UNSUPPORTED, "%s: backend 'opencl' does not run this pattern (it "
		                "runs scan, reduce, histogram, matmul, conv2d and spmv); use 'emu', 'cpu' "
		                "or 'cuda'", k->fname);
	const lmi_cuda_kernels *api = lmi_opencl_kernels_get(k->fname);
	if (!api) return lm_last_status();
	lmi_cuda_timing t = {.repeats = k->repeats};
	char msg[1024] = "";
	if (pt->cuda(api, k, run, &t, msg, sizeof msg))
		return lmi_fail(LM_ERR_DEVICE, "%s: OpenCL: %s", k->fname, msg);
	lmi_info_set_impl(info, "opencl: %s (%s built as OpenCL C)",
	                  t.kernels[0] ? t.kernels : "no kernel launched", pt->body);
	if (!pt->own_measures) {
		add_measured(info, k, t.time_ms);
		if (t.launches > 0) lmi_info_add(info, "launches", t.launches);
		lmi_info_add(info, "block", k->block);
	}
	return pt->finish ? pt->finish(info, k, run, NULL) : LM_OK;
}

lm_status lmi_pattern_run(const lmi_pattern *pt, lmi_kcall *k, void *run, lm_tensor **out,
                          lm_kernel_info **info)
{
	lm_status st = k->status;
	lm_kernel_info *inf = NULL;
	if (!st && !(inf = lmi_info_new(k, pt->name))) st = lm_last_status();
	if (!st) {
		lmi_info_set_label(inf, true); /* a cpu run that is not the variant says so */
		switch (k->backend) {
		case LMI_BACKEND_EMU: st = run_emu(pt, k, run, inf); break;
		case LMI_BACKEND_CPU: st = run_cpu(pt, k, run, inf); break;
		case LMI_BACKEND_CUDA: st = run_cuda(pt, k, run, inf); break;
		case LMI_BACKEND_OPENCL: st = run_opencl(pt, k, run, inf); break;
		}
	}
	if (st == LM_OK) {
		*out = k->out;
		*info = inf;
		k->out = NULL;
	} else {
		lm_kernel_info_free(inf);
	}
	release_held(k);
	return st;
}

/* ---------------------------------------------------------------- timing */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

lm_status lmi_time_median(const char *fname, int repeats, int (*fn)(void *), void (*cold)(void *),
                          void *arg, double *median_ms)
{
	double times[1000];
	LM_ASSERT(repeats >= 1 && repeats <= 1000);
	if (fn(arg)) return lmi_fail(LM_ERR_INTERRUPTED, "%s: interrupted", fname); /* warm-up */
	for (int r = 0; r < repeats; r++) {
		if (cold) cold(arg);
		double t0 = now_ms();
		if (fn(arg)) return lmi_fail(LM_ERR_INTERRUPTED, "%s: interrupted", fname);
		times[r] = now_ms() - t0;
	}
	qsort(times, (size_t)repeats, sizeof times[0], cmp_double);
	*median_ms = repeats % 2 ? times[repeats / 2]
	                         : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]);
	return LM_OK;
}
