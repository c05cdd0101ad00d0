/*
 * kernels.c — what every pattern call shares: options (lm_kernel_opts) resolved and checked once,
 * and the info object (source, device, counters in order, trace). The driver: driver.c.
 *
 * Design: all checks happen before anything runs, with messages that name the call, the value and
 * the limit ("kernels.scan: block 2048 exceeds the limit of 1024 threads per block"). Counters are
 * an ordered list of (name, value), so Lua, the printer and the scenes show them in one order.
 * Read next: scan.c, reduce.c (the patterns), simt.h (the emulator).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/patterns.h"
#include "kernels/trace.h"
#include "lumen/cuda.h"
#include "lumen/opencl.h"

#define MAX_COUNTERS 56

struct lm_kernel_info {
	char source[8];
	char device[200];
	char provenance[240];
	char pattern[16];
	char algo[32];
	char impl[320];  /* what ran: "emu: scan_kogge_stone (body/scan.h)" */
	char model[1024]; /* emulated runs: the latency model, stated (else empty) */
	char label[512]; /* "scan kogge-stone: emulated, modelled cycles (SIMT emulator on ...)" */
	int ncounters;
	struct {
		char name[24];
		double value;
	} counters[MAX_COUNTERS];
	lm_trace *trace;
	lm_kernel_span *spans; /* a timeline (streams) */
	int nspans, spans_cap;
};

/* ---------------------------------------------------------------- options */

void lm_kernel_opts_init(lm_kernel_opts *o)
{
	memset(o, 0, sizeof *o);
	o->backend = "auto";
	o->trace = -1;
	o->inclusive = -1;
}

lm_kernel_opts lmi_opts_or_default(const lm_kernel_opts *opts)
{
	lm_kernel_opts o;
	if (opts) return *opts;
	lm_kernel_opts_init(&o);
	return o;
}

static lm_status pick_backend(const char *fname, const lm_kernel_opts *o, int runs, lmi_backend *out)
{
	const char *b = o->backend ? o->backend : "auto";
	bool trace = o->trace == 1;
	lmi_backend none = runs == LMI_RUNS_NO_CPU ? LMI_BACKEND_EMU : LMI_BACKEND_CPU;
	if (strcmp(b, "emu") == 0) *out = LMI_BACKEND_EMU;
	else if (strcmp(b, "cpu") == 0) *out = LMI_BACKEND_CPU;
	else if (strcmp(b, "cuda") == 0) *out = LMI_BACKEND_CUDA;
	else if (strcmp(b, "opencl") == 0) *out = LMI_BACKEND_OPENCL;
	else if (strcmp(b, "auto") == 0)
		*out = trace ? LMI_BACKEND_EMU : lm_cuda_is_available() ? LMI_BACKEND_CUDA : none;
	else
		return lmi_fail(LM_ERR_ARG, "%s: unknown backend '%s' (expected 'emu', 'cpu', 'cuda', 'opencl' or 'auto')",
		                fname, b);
	if (*out == LMI_BACKEND_CPU && runs == LMI_RUNS_NO_CPU)
		return lmi_fail(LM_ERR_UNSUPPORTED,
		                "%s: there is no cpu run of this pattern (it shows what a GPU does: warps, "
		                "host-device copies); use backend='emu' or 'cuda'",
		                fname);
	if (trace && *out != LMI_BACKEND_EMU)
		return lmi_fail(LM_ERR_UNSUPPORTED,
		                "%s: trace=true needs backend='emu' (the %s run is measured, not traced)",
		                fname, b);
	return LM_OK;
}

lm_status lmi_kcall_resolve(const char *fname, const lm_tensor *x, const lm_kernel_opts *opts,
                            const char *const *algos, int nalgos, int default_algo, lmi_kcall *k)
{
	return lmi_kcall_resolve_runs(fname, x, opts, algos, nalgos, default_algo, LMI_RUNS_ALL, k);
}

lm_status lmi_kcall_resolve_runs(const char *fname, const lm_tensor *x, const lm_kernel_opts *opts,
                                 const char *const *algos, int nalgos, int default_algo, int runs,
                                 lmi_kcall *k)
{
	memset(k, 0, sizeof *k);
	k->fname = fname;
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: the input tensor is NULL", fname);
	if (lm_tensor_device(x) != LM_CPU)
		return lmi_fail(LM_ERR_DEVICE, "%s: the input is on %s; pass a CPU tensor (the cuda run "
		                "copies it to the GPU itself)", fname, lm_device_name(lm_tensor_device(x)));
	lm_dtype dt = lm_tensor_dtype(x);
	if (dt != LM_FLOAT32 && dt != LM_FLOAT64)
		return lmi_fail(LM_ERR_DTYPE, "%s: the input has dtype %s; this pattern takes float32 or "
		                "float64 tensors", fname, lm_dtype_name(dt));
	if (lm_tensor_numel(x) == 0)
		return lmi_fail(LM_ERR_ARG, "%s: the input is empty (shape %s); give at least one element",
		                fname, lmi_shape_s(x));
	return lmi_kcall_begin(fname, opts, algos, nalgos, default_algo, runs, lm_tensor_numel(x), dt,
	                       k);
}

lm_status lmi_name_lookup(const char *fname, const char *what, const char *name,
                          const char *const *names, int count, int *index)
{
	for (int i = 0; i < count; i++)
		if (strcmp(name, names[i]) == 0) return *index = i, LM_OK;
	char list[200] = "";
	size_t len = 0;
	for (int i = 0; i < count && len < sizeof list; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'",
		                        i == 0 ? "" : i == count - 1 ? " or " : ", ", names[i]);
	return lmi_fail(LM_ERR_ARG, "%s: unknown %s '%s' (expected %s)", fname, what, name, list);
}

lm_status lmi_kcall_begin(const char *fname, const lm_kernel_opts *opts, const char *const *algos,
                          int nalgos, int default_algo, int runs, int64_t n, lm_dtype dt,
                          lmi_kcall *k)
{
	lm_kernel_opts defaults = lmi_opts_or_default(opts);
	opts = &defaults;
	memset(k, 0, sizeof *k);
	k->fname = fname;
	k->dtype = dt;
	k->n = n;
	lm_status st = pick_backend(fname, opts, runs, &k->backend);
	if (st) return st;
	if (k->backend != LMI_BACKEND_CPU && k->n > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: %lld elements are more than the %s run's 32-bit indices "
		                "allow (2147483647)", fname, (long long)k->n,
		                lmi_backend_name(k->backend));
	k->algo = default_algo;
	if (opts->algo && (st = lmi_name_lookup(fname, "algo", opts->algo, algos, nalgos, &k->algo)))
		return st;
	k->algo_name = algos[k->algo];
	if (opts->inclusive < -1 || opts->inclusive > 1)
		return lmi_fail(LM_ERR_ARG, "%s: inclusive = %d must be 1, 0 or -1 (default)", fname,
		                opts->inclusive);
	k->inclusive = opts->inclusive != 0;
	if (opts->trace < -1 || opts->trace > 1)
		return lmi_fail(LM_ERR_ARG, "%s: trace = %d must be 1, 0 or -1 (default)", fname, opts->trace);
	k->trace_cap = opts->trace_cap ? opts->trace_cap : LM_TRACE_DEFAULT_CAP;
	if (k->trace_cap < 1 || k->trace_cap > ((int64_t)1 << 28))
		return lmi_fail(LM_ERR_ARG, "%s: trace_cap %lld must be in 1..2^28 events", fname,
		                (long long)opts->trace_cap);
	k->repeats = opts->repeats ? opts->repeats : 5;
	if (k->repeats < 1 || k->repeats > 1000)
		return lmi_fail(LM_ERR_ARG, "%s: repeats %d must be in 1..1000", fname, opts->repeats);
	return LM_OK;
}

static unsigned pow2_at_least(int64_t v)
{
	unsigned p = 1;
	while ((int64_t)p < v && p < (1u << 30)) p *= 2;
	return p;
}

lm_status lmi_kcall_shape(lmi_kcall *k, const lm_kernel_opts *opts, bool coarsens,
                          unsigned default_coarsen, unsigned elems_per_thread)
{
	const char *f = k->fname;
	lm_status st = lmi_kcall_unused(k, "tile", opts && opts->tile, "it has no tiles");
	if (st) return st;
	k->gave_block = opts && opts->block;
	k->gave_coarsen = opts && opts->coarsen;
	int64_t c = opts && opts->coarsen ? opts->coarsen : default_coarsen;
	if (!coarsens && c != 1)
		return lmi_fail(LM_ERR_ARG, "%s: algo '%s' does not coarsen (coarsen %lld; only 1 here)", f,
		                k->algo_name, (long long)c);
	if (c < 1 || c > 1024)
		return lmi_fail(LM_ERR_ARG, "%s: coarsen %lld must be in 1..1024 elements per thread", f,
		                (long long)c);
	k->coarsen = (unsigned)c;
	int64_t per = (int64_t)elems_per_thread * k->coarsen;
	int64_t b = opts ? opts->block : 0;
	if (b == 0) {
		unsigned fit = pow2_at_least((k->n + per - 1) / per);
		b = fit <= LM_KERNEL_MAX_BLOCK ? fit : 256;
	}
	if (b < 1)
		return lmi_fail(LM_ERR_ARG, "%s: block %lld must be %s from 1 to %d", f, (long long)b,
		                k->any_block ? "a number of threads" : "a power of two", LM_KERNEL_MAX_BLOCK);
	if (b > LM_KERNEL_MAX_BLOCK)
		return lmi_fail(LM_ERR_ARG, "%s: block %lld exceeds the limit of %d threads per block", f,
		                (long long)b, LM_KERNEL_MAX_BLOCK);
	if ((b & (b - 1)) && !k->any_block)
		return lmi_fail(LM_ERR_ARG,
		                "%s: block %lld is not a power of two; algo '%s' needs one (1, 2, 4, ..., %d)",
		                f, (long long)b, k->algo_name, LM_KERNEL_MAX_BLOCK);
	k->block = (unsigned)b;
	return LM_OK;
}

lm_status lmi_kcall_tile(lmi_kcall *k, const lm_kernel_opts *opts, unsigned *tile)
{
	const char *f = k->fname;
	if (opts && opts->block)
		return lmi_fail(LM_ERR_ARG, "%s: give tile, not block (the block is tile x tile threads)", f);
	if (opts && opts->coarsen > 1)
		return lmi_fail(LM_ERR_ARG, "%s: algo '%s' does not coarsen (coarsen %lld; only 1 here)", f,
		                k->algo_name, (long long)opts->coarsen);
	int64_t t = opts && opts->tile ? opts->tile : 16;
	k->gave_tile = opts && opts->tile;
	if (t < 1 || t > 32)
		return lmi_fail(LM_ERR_ARG, "%s: tile %lld must be in 1..32 (a block of tile x tile threads "
		                "has at most %d)", f, (long long)t, LM_KERNEL_MAX_BLOCK);
	*tile = k->tile = (unsigned)t;
	k->coarsen = 1;
	return LM_OK;
}

const char *lmi_backend_name(lmi_backend b)
{
	return b == LMI_BACKEND_EMU ? "emu" : b == LMI_BACKEND_CPU ? "cpu" : b == LMI_BACKEND_CUDA ? "cuda" : "opencl";
}

lm_status lmi_kcall_unused(const lmi_kcall *k, const char *option, bool given, const char *why)
{
	if (!given) return LM_OK;
	return lmi_fail(LM_ERR_ARG, "%s: option %s is not used by the %s run of '%s' (%s); leave it out",
	                k->fname, option, lmi_backend_name(k->backend), k->algo_name, why);
}

lm_status lmi_kcall_check_shared(const lmi_kcall *k, int64_t shared_elems)
{
	int64_t bytes = shared_elems * (int64_t)lm_dtype_size(k->dtype);
	if (bytes > LM_KERNEL_MAX_SHARED)
		return lmi_fail(LM_ERR_ARG,
		                "%s: algo '%s' with block %u and coarsen %u needs %lld bytes of shared memory "
		                "(%s), over the limit of 48 KiB (%d bytes) per block",
		                k->fname, k->algo_name, k->block, k->coarsen, (long long)bytes,
		                lm_dtype_name(k->dtype), LM_KERNEL_MAX_SHARED);
	return LM_OK;
}

/* ---------------------------------------------------------------- info */

static char cpu_model[128];

static void read_cpu_model(void)
{
	char *model = cpu_model;
	snprintf(model, sizeof cpu_model, "CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "model name", 10) != 0) continue;
			char *colon = strchr(line, ':');
			if (!colon) break;
			colon++;
			while (*colon == ' ' || *colon == '\t') colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(model, sizeof cpu_model, "%s", colon);
			break;
		}
		fclose(f);
	}
}

const char *lmi_cpu_model(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, read_cpu_model);
	return cpu_model;
}

lm_kernel_info *lmi_info_new(const lmi_kcall *k, const char *pattern)
{
	lm_kernel_info *info = lm_alloc(sizeof *info);
	if (!info) return lmi_fail_null(LM_ERR_NOMEM, "%s: out of memory", k->fname);
	memset(info, 0, sizeof *info);
	snprintf(info->pattern, sizeof info->pattern, "%s", pattern);
	snprintf(info->algo, sizeof info->algo, "%s", k->algo_name);
	switch (k->backend) {
	case LMI_BACKEND_EMU:
		snprintf(info->source, sizeof info->source, "emu");
		snprintf(info->device, sizeof info->device, "SIMT emulator on %s", lmi_cpu_model());
		snprintf(info->provenance, sizeof info->provenance, "emulated, modelled cycles");
		break;
	case LMI_BACKEND_CPU:
		snprintf(info->source, sizeof info->source, "cpu");
		snprintf(info->device, sizeof info->device, "%s", lmi_cpu_model());
		snprintf(info->provenance, sizeof info->provenance, "CPU, measured");
		break;
	case LMI_BACKEND_CUDA: {
		const char *name = lm_cuda_device_name();
		snprintf(info->source, sizeof info->source, "cuda");
		snprintf(info->device, sizeof info->device, "%s", name ? name : "CUDA device");
		snprintf(info->provenance, sizeof info->provenance, "CUDA %s, measured", info->device);
		break;
	}
	case LMI_BACKEND_OPENCL: {
		const char *name = lm_opencl_is_available() ? lm_opencl_device_name() : NULL;
		snprintf(info->source, sizeof info->source, "opencl");
		snprintf(info->device, sizeof info->device, "%s", name ? name : "OpenCL device");
		snprintf(info->provenance, sizeof info->provenance, "OpenCL, measured by events");
		break;
	}
	}
	return info;
}

void lmi_info_add(lm_kernel_info *info, const char *name, double value)
{
	LM_ASSERT(info->ncounters < MAX_COUNTERS);
	snprintf(info->counters[info->ncounters].name, sizeof info->counters[0].name, "%s", name);
	info->counters[info->ncounters++].value = value;
}

void lmi_info_set(lm_kernel_info *info, const char *name, double value)
{
	for (int k = 0; k < info->ncounters; k++)
		if (strcmp(info->counters[k].name, name) == 0) {
			info->counters[k].value = value;
			return;
		}
	lmi_info_add(info, name, value);
}

lm_status lmi_info_add_span(lm_kernel_info *info, const lm_kernel_span *sp)
{
	if (info->nspans == info->spans_cap) {
		int ncap = info->spans_cap ? 2 * info->spans_cap : 64;
		lm_kernel_span *n = lm_alloc((size_t)ncap * sizeof *n);
		if (!n) return lmi_fail(LM_ERR_NOMEM, "kernels: out of memory for a timeline");
		if (info->nspans) memcpy(n, info->spans, (size_t)info->nspans * sizeof *n);
		if (info->spans) lm_free(info->spans, (size_t)info->spans_cap * sizeof *n);
		info->spans = n;
		info->spans_cap = ncap;
	}
	info->spans[info->nspans++] = *sp;
	return LM_OK;
}

int lm_kernel_info_span_count(const lm_kernel_info *i) { return i->nspans; }

lm_status lm_kernel_info_span_get(const lm_kernel_info *i, int k, lm_kernel_span *out)
{
	if (k < 0 || k >= i->nspans)
		return lmi_fail(LM_ERR_INDEX, "kernels: span %d out of range (%d spans)", k, i->nspans);
	*out = i->spans[k];
	return LM_OK;
}

int64_t lmi_first_out_of_range(const lm_tensor *x, int64_t lo, int64_t hi, int64_t *value)
{
	LM_ASSERT(lm_tensor_is_contiguous(x));
	return lmi_first_out_of_range_raw(lm_tensor_dtype(x), lm_tensor_data(x), lm_tensor_numel(x),
	                                  lo, hi, value);
}

int64_t lmi_first_out_of_range_raw(lm_dtype dt, const void *d, int64_t n, int64_t lo, int64_t hi,
                                   int64_t *value)
{
	const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
	LM_ASSERT(ty && ty->is_int && "an integer tensor");
	for (int64_t i = 0; i < n; i++) {
		int64_t v = ty->get_int((const char *)d + i * (int64_t)ty->type_size);
		if (v < lo || v >= hi) return *value = v, i;
	}
	return -1;
}

lm_status lmi_emu_start(const lmi_kcall *k, const char *name, lm_kernel_info *info, double sms,
                        lmi_simt **out)
{
	lm_latency_model lat;
	lm_kernel_latency_get(&lat);
	if (sms > 0) lat.sms = sms;
	lm_trace *t = lmi_trace_new(name, k->dtype, k->trace_cap, &lat);
	if (!t) return lm_last_status();
	lmi_info_set_trace(info, t);
	*out = lmi_simt_new(k->fname, t, &lat);
	return *out ? LM_OK : lm_last_status();
}

void lmi_info_set_trace(lm_kernel_info *info, lm_trace *t)
{
	if (info->trace) lm_trace_release(info->trace);
	info->trace = t;
}

/* The emulator's int64 counters under their info names, in the order the info lists them. */
typedef struct counter_name {
	const char *name;
	size_t off;
} counter_name;
#define COUNTER(name, field) {name, offsetof(lmi_simt_counters, field)}

static void add_counters(lm_kernel_info *info, const lmi_simt_counters *c, const counter_name *t,
                         size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		memcpy(&v, (const char *)c + t[i].off, sizeof v);
		lmi_info_add(info, t[i].name, (double)v);
	}
}

void lmi_info_add_emu(lm_kernel_info *info, const lmi_simt_counters *c, const lmi_kcall *k)
{
	static const counter_name traffic[] = {
		COUNTER("steps", steps),
		COUNTER("adds", adds),
		COUNTER("global_loads", global_loads),
		COUNTER("global_stores", global_stores),
		COUNTER("shared_loads", shared_loads),
		COUNTER("shared_stores", shared_stores),
		COUNTER("atomics", atomics),
		COUNTER("shared_atomics", shared_atomics),
		COUNTER("conflicts", conflicts),
		COUNTER("shared_conflicts", shared_conflicts),
		COUNTER("barriers", barriers),
	};
	static const counter_name warps[] = {
		COUNTER("events", events),
		COUNTER("constant_loads", constant_loads),
		COUNTER("divergent_branches", divergent_branches),
		COUNTER("idle_lanes", idle_adds),
		COUNTER("global_transactions", global_transactions),
		COUNTER("bank_conflicts", bank_conflicts),
	};
	static const counter_name queues[] = {
		COUNTER("atomic_queue", atomic_queue),
		COUNTER("shared_atomic_queue", shared_atomic_queue),
	};
	lmi_info_add(info, "modelled_cycles", (double)c->cycles);
	add_counters(info, c, traffic, sizeof traffic / sizeof traffic[0]);
	lmi_info_add(info, "simd_efficiency",
	             c->issued_lanes ? (double)c->active_lanes / (double)c->issued_lanes : 1.0);
	lmi_info_add(info, "bytes", (double)c->bytes);
	lmi_info_add(info, "launches", c->launches);
	lmi_info_add(info, "threads", (double)c->threads);
	lmi_info_add(info, "block", k->block);
	add_counters(info, c, warps, sizeof warps / sizeof warps[0]);
	lmi_info_add(info, "occupancy", c->occupancy);
	add_counters(info, c, queues, sizeof queues / sizeof queues[0]);
}

void lmi_info_set_impl(lm_kernel_info *info, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(info->impl, sizeof info->impl, fmt, ap);
	va_end(ap);
}

void lmi_info_set_model(lm_kernel_info *info, const lm_latency_model *m)
{
	lm_kernel_latency_describe(m, info->model, sizeof info->model);
}

void lmi_info_set_label(lm_kernel_info *info, bool variant_ran)
{
	if (variant_ran)
		snprintf(info->label, sizeof info->label, "%s %s: %s (%s)", info->pattern, info->algo,
		         info->provenance, info->device);
	else
		snprintf(info->label, sizeof info->label, "%s: %s (%s)", info->pattern, info->provenance,
		         info->device);
}

void lmi_info_add_measured(lm_kernel_info *info, double time_ms, double bytes)
{
	lmi_info_add(info, "time_ms", time_ms);
	lmi_info_add(info, "bytes", bytes);
	lmi_info_add(info, "gbps", time_ms > 0 ? bytes / (time_ms * 1e6) : 0);
}

void lm_kernel_info_free(lm_kernel_info *info)
{
	if (!info) return;
	lm_trace_release(info->trace);
	if (info->spans) lm_free(info->spans, (size_t)info->spans_cap * sizeof *info->spans);
	lm_free(info, sizeof *info);
}

const char *lm_kernel_info_source(const lm_kernel_info *i) { return i->source; }
const char *lm_kernel_info_device(const lm_kernel_info *i) { return i->device; }
const char *lm_kernel_info_provenance(const lm_kernel_info *i) { return i->provenance; }
const char *lm_kernel_info_pattern(const lm_kernel_info *i) { return i->pattern; }
const char *lm_kernel_info_algo(const lm_kernel_info *i) { return i->algo; }
const char *lm_kernel_info_impl(const lm_kernel_info *i) { return i->impl; }
const char *lm_kernel_info_model(const lm_kernel_info *i) { return i->model[0] ? i->model : NULL; }
const char *lm_kernel_info_label(const lm_kernel_info *i) { return i->label; }
int lm_kernel_info_counter_count(const lm_kernel_info *i) { return i->ncounters; }
lm_trace *lm_kernel_info_trace(const lm_kernel_info *i) { return i->trace; }

const char *lm_kernel_info_counter_name(const lm_kernel_info *i, int k)
{
	return k >= 0 && k < i->ncounters ? i->counters[k].name : NULL;
}

double lm_kernel_info_counter_value(const lm_kernel_info *i, int k)
{
	return k >= 0 && k < i->ncounters ? i->counters[k].value : NAN;
}

bool lm_kernel_info_counter(const lm_kernel_info *i, const char *name, double *out)
{
	for (int k = 0; k < i->ncounters; k++)
		if (strcmp(i->counters[k].name, name) == 0) {
			*out = i->counters[k].value;
			return true;
		}
	return false;
}
