/*
 * streams.c — lm_kernel_streams: a vector add split into segments, each copied to the device,
 * added and copied back, serially (one stream) and overlapped (a stream per segment): the
 * lecture's "GPU as part of the PC" and "streams and task parallelism". Emulated (a modelled
 * timeline) or on a GPU (measured with events). There is no cpu run.
 *
 * The model of the emulated run, stated (docs/trace.md):
 *   - a copy of b bytes takes b / pcie_gbps (default 25 GB/s, PCIe 4 x16 in practice); nothing
 *     per call (no launch or copy overhead);
 *   - copy engines: 2 (default: host-to-device and device-to-host copies run at the same time)
 *     or 1 (all copies take turns);
 *   - a kernel takes its modelled cycles (the emulated vector add of the segment, its blocks
 *     spread over `sms` multiprocessors, default 8) at clock_ghz (default 1.5); one kernel at a
 *     time (each fills the GPU);
 *   - within a stream, operations run in order; an engine that is free starts the ready
 *     operation issued first (streams issued breadth-first, as the lecture recommends for one
 *     copy engine).
 * Serial: one stream, so every operation waits for the one before. Overlapped: the copies of one
 * segment run while another's kernel does.
 * Read next: streams_emu.c, body/vector_add.h, cuda/streams.cu.
 */
#include <stdio.h>
#include <string.h>

#include "kernels/patterns.h"

#define MAX_SEGMENTS 255 /* launches of one trace */

enum { OP_H2D, OP_KERNEL, OP_D2H, NOPS };
static const char *const op_name[NOPS] = {"h2d", "kernel", "d2h"};

typedef struct model {
	int segments, engines;
	double h2d_ms[MAX_SEGMENTS], kernel_ms[MAX_SEGMENTS], d2h_ms[MAX_SEGMENTS];
	double bytes[MAX_SEGMENTS]; /* bytes of one vector's part */
} model;

static double duration(const model *md, int seg, int op)
{
	return op == OP_H2D ? md->h2d_ms[seg] : op == OP_KERNEL ? md->kernel_ms[seg] : md->d2h_ms[seg];
}

/* The engine (track) an operation runs on. */
static const char *track(const model *md, int op)
{
	if (op == OP_KERNEL) return "compute";
	if (md->engines == 1) return "copy";
	return op == OP_H2D ? "h2d" : "d2h";
}

static int engine_of(const model *md, int op)
{
	return op == OP_KERNEL ? 0 : md->engines == 1 || op == OP_H2D ? 1 : 2;
}

static lm_status span(lm_kernel_info *info, const char *schedule, const model *md, int seg,
                      int stream, int op, double start, double end)
{
	lm_kernel_span sp = {
		.schedule = schedule,
		.op = op_name[op],
		.track = track(md, op),
		.segment = seg,
		.stream = stream,
		.start_ms = start,
		.end_ms = end,
		.bytes = op == OP_H2D ? 2 * md->bytes[seg] : op == OP_D2H ? md->bytes[seg] : 3 * md->bytes[seg],
	};
	return lmi_info_add_span(info, &sp);
}

/* One stream: every operation after the one before. */
static lm_status serial(const model *md, lm_kernel_info *info, double *total)
{
	double t = 0;
	for (int s = 0; s < md->segments; s++)
		for (int op = 0; op < NOPS; op++) {
			double d = duration(md, s, op);
			lm_status st = span(info, "serial", md, s, 0, op, t, t + d);
			if (st) return st;
			t += d;
		}
	*total = t;
	return LM_OK;
}

/* A stream per segment; each engine, when free, starts the ready operation issued first. */
static lm_status overlapped(const model *md, lm_kernel_info *info, double *total)
{
	double free_at[3] = {0, 0, 0}, ready[MAX_SEGMENTS];
	double start[MAX_SEGMENTS][NOPS], end[MAX_SEGMENTS][NOPS];
	int next[MAX_SEGMENTS]; /* the stream's next operation */
	for (int s = 0; s < md->segments; s++) ready[s] = 0, next[s] = 0;
	for (int left = md->segments * NOPS; left > 0; left--) {
		int best = -1;
		double best_start = 0;
		for (int s = 0; s < md->segments; s++) { /* segment order = issue order */
			if (next[s] == NOPS) continue;
			double at = ready[s] > free_at[engine_of(md, next[s])] ? ready[s]
			                                                        : free_at[engine_of(md, next[s])];
			if (best < 0 || at < best_start) best = s, best_start = at;
		}
		int op = next[best]++;
		start[best][op] = best_start;
		end[best][op] = best_start + duration(md, best, op);
		ready[best] = free_at[engine_of(md, op)] = end[best][op];
	}
	double last = 0;
	for (int s = 0; s < md->segments; s++)
		for (int op = 0; op < NOPS; op++) {
			lm_status st = span(info, "overlapped", md, s, s, op, start[s][op], end[s][op]);
			if (st) return st;
			if (end[s][op] > last) last = end[s][op];
		}
	*total = last;
	return LM_OK;
}

typedef struct streams_opts {
	int64_t n;
	int segments, engines;
	double gbps, ghz, sms;
	unsigned block;
} streams_opts;

static lm_status run_emu(const lmi_kcall *k, const streams_opts *so, const float *a,
                         const float *b, float *c, lm_kernel_info *info)
{
	char name[96];
	snprintf(name, sizeof name, "streams vector_add %lld floats %d segments", (long long)so->n,
	         so->segments);
	lmi_simt *s;
	lm_status st = lmi_emu_start(k, name, info, so->sms, &s);
	if (st) return st;
	uint64_t cycles[MAX_SEGMENTS];
	st = lmi_emu_vector_add(s, a, b, c, so->n, so->segments, so->block, cycles);
	if (st == LM_OK) lmi_info_add_emu(info, lmi_simt_counters_get(s), k);
	lmi_simt_free(s);
	if (st) return st;
	model md = {.segments = so->segments, .engines = so->engines};
	double h2d = 0, kern = 0, d2h = 0, ser, ovl;
	for (int seg = 0; seg < so->segments; seg++) {
		int64_t len = so->n * (seg + 1) / so->segments - so->n * seg / so->segments;
		md.bytes[seg] = 4.0 * (double)len;
		md.h2d_ms[seg] = 2 * md.bytes[seg] / (so->gbps * 1e6); /* A and B */
		md.d2h_ms[seg] = md.bytes[seg] / (so->gbps * 1e6);
		md.kernel_ms[seg] = (double)cycles[seg] / (so->ghz * 1e6);
		h2d += md.h2d_ms[seg], kern += md.kernel_ms[seg], d2h += md.d2h_ms[seg];
	}
	if ((st = serial(&md, info, &ser)) != LM_OK || (st = overlapped(&md, info, &ovl)) != LM_OK)
		return st;
	lmi_info_add(info, "serial_ms", ser);
	lmi_info_add(info, "overlapped_ms", ovl);
	lmi_info_add(info, "speedup", ser / ovl);
	lmi_info_add(info, "h2d_ms", h2d);
	lmi_info_add(info, "kernel_ms", kern);
	lmi_info_add(info, "d2h_ms", d2h);
	lmi_info_add(info, "pcie_gbps", so->gbps);
	lmi_info_add(info, "copy_engines", so->engines);
	lmi_info_add(info, "clock_ghz", so->ghz);
	lmi_info_add(info, "sms", so->sms);
	return LM_OK;
}

static lm_status run_cuda(const lmi_kcall *k, const streams_opts *so, const float *a,
                          const float *b, float *c, lm_kernel_info *info)
{
	const lmi_cuda_kernels *api = lmi_cuda_kernels_get(k->fname);
	if (!api) return lm_last_status();
	size_t bytes = (size_t)so->segments * sizeof(lmi_cuda_span);
	lmi_cuda_span *ser = lm_alloc(bytes), *ovl = lm_alloc(bytes);
	lm_status st = LM_OK;
	if (!ser || !ovl) {
		st = lmi_fail(LM_ERR_NOMEM, "%s: out of memory", k->fname);
		goto out;
	}
	lmi_cuda_streams_call call = {
		.n = so->n, .segments = so->segments, .block = so->block, .a = a, .b = b, .c = c,
		.serial = ser, .overlapped = ovl,
	};
	char msg[512] = "";
	if (api->streams(&call, msg, sizeof msg)) {
		st = lmi_fail(LM_ERR_DEVICE, "%s: CUDA: %s", k->fname, msg);
		goto out;
	}
	model md = {.segments = so->segments, .engines = 2};
	for (int pass = 0; pass < 2 && st == LM_OK; pass++)
		for (int seg = 0; seg < so->segments && st == LM_OK; seg++) {
			const lmi_cuda_span *e = pass ? &ovl[seg] : &ser[seg];
			const char *sched = pass ? "overlapped" : "serial";
			int64_t len = so->n * (seg + 1) / so->segments - so->n * seg / so->segments;
			md.bytes[seg] = 4.0 * (double)len;
			if (!(st = span(info, sched, &md, seg, pass ? seg : 0, OP_H2D, e->h2d_start, e->h2d_end)) &&
			    !(st = span(info, sched, &md, seg, pass ? seg : 0, OP_KERNEL, e->h2d_end, e->kernel_end)))
				st = span(info, sched, &md, seg, pass ? seg : 0, OP_D2H, e->kernel_end, e->d2h_end);
		}
	if (st) goto out;
	lmi_info_add(info, "serial_ms", call.serial_ms);
	lmi_info_add(info, "overlapped_ms", call.overlapped_ms);
	lmi_info_add(info, "speedup", call.serial_ms / call.overlapped_ms);
	lmi_info_add(info, "pinned", call.pinned);
	lmi_info_add(info, "bytes", 12.0 * (double)so->n); /* over PCIe: A, B in; C out */
	lmi_info_add(info, "gbps", 12.0 * (double)so->n / (call.overlapped_ms * 1e6));
out:
	if (ser) lm_free(ser, bytes);
	if (ovl) lm_free(ovl, bytes);
	return st;
}

lm_status lm_kernel_streams(const lm_kernel_opts *opts, lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.streams";
	if (!out || !info) return lmi_fail(LM_ERR_ARG, "%s: out and info must not be NULL", f);
	*out = NULL;
	*info = NULL;
	lm_kernel_opts o;
	if (opts) o = *opts;
	else lm_kernel_opts_init(&o);
	static const char *const algos[] = {"vector-add"};
	lmi_kcall k;
	/* the backend first: the default size depends on it */
	lm_status st = lmi_kcall_begin(f, &o, algos, 1, 0, LMI_RUNS_NO_CPU, 1, LM_FLOAT32, &k);
	if (st) return st;
	int64_t segments = o.segments ? o.segments : 4;
	if (segments < 1 || segments > MAX_SEGMENTS)
		return lmi_fail(LM_ERR_ARG, "%s: segments %lld must be in 1..%d", f, (long long)segments,
		                MAX_SEGMENTS);
	int64_t bytes = o.bytes ? o.bytes : k.backend == LMI_BACKEND_EMU ? 1 << 18 : 1 << 26;
	if (bytes < 4 * segments || bytes % 4 || bytes / 4 > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: bytes %lld must be a multiple of 4 (float32 vectors), at "
		                "least 4 per segment (%lld segments) and at most 2^33 - 4", f,
		                (long long)bytes, (long long)segments);
	streams_opts so = {.n = bytes / 4, .segments = (int)segments,
	                   .engines = o.copy_engines ? (int)o.copy_engines : 2,
	                   .gbps = o.pcie_gbps ? o.pcie_gbps : 25, .ghz = o.clock_ghz ? o.clock_ghz : 1.5,
	                   .sms = o.sms ? (double)o.sms : 8};
	if (o.copy_engines && o.copy_engines != 1 && o.copy_engines != 2)
		return lmi_fail(LM_ERR_ARG, "%s: copy_engines %lld must be 1 or 2", f, (long long)o.copy_engines);
	if (!(so.gbps > 0 && so.gbps <= 1e6))
		return lmi_fail(LM_ERR_ARG, "%s: pcie_gbps %g must be in (0, 1e6]", f, so.gbps);
	if (!(so.ghz > 0 && so.ghz <= 100))
		return lmi_fail(LM_ERR_ARG, "%s: clock_ghz %g must be in (0, 100]", f, so.ghz);
	if (so.sms < 1 || so.sms > 65536)
		return lmi_fail(LM_ERR_ARG, "%s: sms %g must be in 1..65536", f, so.sms);
	if (o.coarsen > 1) return lmi_fail(LM_ERR_ARG, "%s: the vector add does not coarsen", f);
	int64_t block = o.block ? o.block : 256;
	if (block < 1 || block > LM_KERNEL_MAX_BLOCK)
		return lmi_fail(LM_ERR_ARG, "%s: block %lld must be in 1..%d", f, (long long)block,
		                LM_KERNEL_MAX_BLOCK);
	so.block = (unsigned)(k.block = (unsigned)block);
	k.coarsen = 1;
	k.n = so.n;

	size_t vb = (size_t)so.n * sizeof(float);
	float *a = lm_alloc(vb), *b = a ? lm_alloc(vb) : NULL;
	lm_tensor *c = b ? lm_empty(1, &so.n, LM_FLOAT32) : NULL;
	lm_kernel_info *inf = c ? lmi_info_new(&k, "streams") : NULL;
	if (!inf) {
		st = b ? lm_last_status() : lmi_fail(LM_ERR_NOMEM, "%s: out of memory for 3 x %zu bytes", f, vb);
		goto out_fail;
	}
	for (int64_t i = 0; i < so.n; i++) { /* small integers: C is exact */
		a[i] = (float)(i % 1000);
		b[i] = (float)(i % 7) - 3;
	}
	st = k.backend == LMI_BACKEND_EMU ? run_emu(&k, &so, a, b, lm_tensor_data(c), inf)
	                                  : run_cuda(&k, &so, a, b, lm_tensor_data(c), inf);
	if (st) goto out_fail;
	lmi_info_add(inf, "segments", so.segments);
	lmi_info_add(inf, "vector_bytes", (double)bytes);
	lm_free(a, vb);
	lm_free(b, vb);
	*out = c;
	*info = inf;
	return LM_OK;
out_fail:
	if (a) lm_free(a, vb);
	if (b) lm_free(b, vb);
	lm_kernel_info_free(inf);
	lm_tensor_release(c);
	return st;
}
