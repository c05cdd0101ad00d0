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
 * Read next: streams_emu.c, body/streams_plan.h, body/vector_add.h, cuda/streams.cu.
 */
#include <stdio.h>

#include "kernels/patterns.h"

#define MAX_SEGMENTS LMI_STREAMS_MAX_SEGMENTS

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

/* The bytes of one vector's part of segment seg. */
static double segment_bytes(const lmi_streams_call *c, int seg)
{
	int64_t lo, len;
	lmk_segment(c, seg, &lo, &len);
	return 4.0 * (double)len;
}

/* Emulated: the model's timeline from the launches' modelled cycles, both schedules. */
static lm_status model_finish(lm_kernel_info *info, const lmi_streams_run *r)
{
	const lmi_streams_call *c = &r->c;
	model md = {.segments = c->segments, .engines = r->engines};
	double h2d = 0, kern = 0, d2h = 0, ser, ovl;
	for (int seg = 0; seg < c->segments; seg++) {
		md.bytes[seg] = segment_bytes(c, seg);
		md.h2d_ms[seg] = 2 * md.bytes[seg] / (r->gbps * 1e6); /* A and B */
		md.d2h_ms[seg] = md.bytes[seg] / (r->gbps * 1e6);
		md.kernel_ms[seg] = (double)r->cycles[seg] / (r->ghz * 1e6);
		h2d += md.h2d_ms[seg], kern += md.kernel_ms[seg], d2h += md.d2h_ms[seg];
	}
	lm_status st;
	if ((st = serial(&md, info, &ser)) != LM_OK || (st = overlapped(&md, info, &ovl)) != LM_OK)
		return st;
	lmi_info_add(info, "serial_ms", ser);
	lmi_info_add(info, "overlapped_ms", ovl);
	lmi_info_add(info, "speedup", ser / ovl);
	lmi_info_add(info, "h2d_ms", h2d);
	lmi_info_add(info, "kernel_ms", kern);
	lmi_info_add(info, "d2h_ms", d2h);
	lmi_info_add(info, "pcie_gbps", r->gbps);
	lmi_info_add(info, "copy_engines", r->engines);
	lmi_info_add(info, "clock_ghz", r->ghz);
	lmi_info_add(info, "sms", r->sms);
	return LM_OK;
}

/* On a GPU: the spans the events measured, the two totals, the copies' GB/s. */
static lm_status measured_finish(lm_kernel_info *info, const lmi_streams_run *r)
{
	const lmi_streams_call *c = &r->c;
	const lmi_cuda_streams_result *m = &r->m;
	model md = {.segments = c->segments, .engines = 2};
	lm_status st = LM_OK;
	for (int pass = 0; pass < 2 && st == LM_OK; pass++)
		for (int seg = 0; seg < c->segments && st == LM_OK; seg++) {
			const lmi_cuda_span *e = pass ? &m->overlapped[seg] : &m->serial[seg];
			const char *sched = pass ? "overlapped" : "serial";
			int stream = pass ? seg : 0;
			md.bytes[seg] = segment_bytes(c, seg);
			if (!(st = span(info, sched, &md, seg, stream, OP_H2D, e->h2d_start, e->h2d_end)) &&
			    !(st = span(info, sched, &md, seg, stream, OP_KERNEL, e->h2d_end, e->kernel_end)))
				st = span(info, sched, &md, seg, stream, OP_D2H, e->kernel_end, e->d2h_end);
		}
	if (st) return st;
	lmi_info_add(info, "serial_ms", m->serial_ms);
	lmi_info_add(info, "overlapped_ms", m->overlapped_ms);
	lmi_info_add(info, "speedup", m->serial_ms / m->overlapped_ms);
	lmi_info_add(info, "pinned", m->pinned);
	lmi_info_add(info, "bytes", 12.0 * (double)c->n); /* over PCIe: A, B in; C out */
	lmi_info_add(info, "gbps", 12.0 * (double)c->n / (m->overlapped_ms * 1e6));
	return LM_OK;
}

static lm_status streams_finish(lm_kernel_info *info, const lmi_kcall *k, void *run,
                                const lmi_simt_counters *emu)
{
	const lmi_streams_run *r = run;
	(void)k;
	lm_status st = emu ? model_finish(info, r) : measured_finish(info, r);
	if (st) return st;
	lmi_info_add(info, "segments", r->c.segments);
	lmi_info_add(info, "vector_bytes", 4.0 * (double)r->c.n);
	return LM_OK;
}

static int streams_cuda(const lmi_cuda_kernels *api, const lmi_kcall *k, void *run,
                        lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	lmi_streams_run *r = run;
	(void)k; /* two schedules, timed by the module: r->m */
	int rc = api->streams(&r->c, &r->m, msg, msg_cap);
	snprintf(t->kernels, sizeof t->kernels, "%s", r->m.kernels);
	return rc;
}

static const lmi_pattern pattern = {
	.name = "streams",
	.body = "body/vector_add.h",
	.emu = lmi_emu_vector_add,
	.cuda = streams_cuda,
	.finish = streams_finish,
	.own_measures = true,
};

/* The options of the model and the vectors, after the backend is known. */
static lm_status check_streams(const lmi_kcall *k, const lm_kernel_opts *o, lmi_streams_run *r)
{
	const char *f = k->fname;
	int64_t segments = o->segments ? o->segments : 4;
	if (segments < 1 || segments > MAX_SEGMENTS)
		return lmi_fail(LM_ERR_ARG, "%s: segments %lld must be in 1..%d", f, (long long)segments,
		                MAX_SEGMENTS);
	int64_t bytes = o->bytes ? o->bytes : k->backend == LMI_BACKEND_EMU ? 1 << 18 : 1 << 26;
	if (bytes < 4 * segments || bytes % 4 || bytes / 4 > INT32_MAX)
		return lmi_fail(LM_ERR_ARG, "%s: bytes %lld must be a multiple of 4 (float32 vectors), at "
		                "least 4 per segment (%lld segments) and at most 2^33 - 4", f,
		                (long long)bytes, (long long)segments);
	r->c.n = bytes / 4;
	r->c.segments = (int)segments;
	r->engines = o->copy_engines ? (int)o->copy_engines : 2;
	r->gbps = o->pcie_gbps ? o->pcie_gbps : 25;
	r->ghz = o->clock_ghz ? o->clock_ghz : 1.5;
	r->sms = o->sms ? (double)o->sms : 8;
	if (o->copy_engines && o->copy_engines != 1 && o->copy_engines != 2)
		return lmi_fail(LM_ERR_ARG, "%s: copy_engines %lld must be 1 or 2", f, (long long)o->copy_engines);
	if (!(r->gbps > 0 && r->gbps <= 1e6))
		return lmi_fail(LM_ERR_ARG, "%s: pcie_gbps %g must be in (0, 1e6]", f, r->gbps);
	if (!(r->ghz > 0 && r->ghz <= 100))
		return lmi_fail(LM_ERR_ARG, "%s: clock_ghz %g must be in (0, 100]", f, r->ghz);
	if (r->sms < 1 || r->sms > 65536)
		return lmi_fail(LM_ERR_ARG, "%s: sms %g must be in 1..65536", f, r->sms);
	if (o->coarsen > 1) return lmi_fail(LM_ERR_ARG, "%s: the vector add does not coarsen", f);
	if (o->tile) return lmi_fail(LM_ERR_ARG, "%s: option tile is not used: the vector add has no tiles", f);
	int64_t block = o->block ? o->block : 256;
	if (block < 1 || block > LM_KERNEL_MAX_BLOCK)
		return lmi_fail(LM_ERR_ARG, "%s: block %lld must be in 1..%d", f, (long long)block,
		                LM_KERNEL_MAX_BLOCK);
	r->c.block = (unsigned)block;
	return LM_OK;
}

lm_status lm_kernel_streams(const lm_kernel_opts *opts, lm_tensor **out, lm_kernel_info **info)
{
	const char *f = "kernels.streams";
	lm_status st = lmi_kcall_start(f, out, info);
	if (st) return st;
	lm_kernel_opts o = lmi_opts_or_default(opts);
	static const char *const algos[] = {"vector-add"};
	lmi_kcall k;
	/* the backend first: the default size depends on it */
	if ((st = lmi_kcall_begin(f, &o, algos, 1, 0, LMI_RUNS_NO_CPU, 1, LM_FLOAT32, &k)) != LM_OK)
		return st;
	lmi_streams_run r = {.engines = 0};
	if ((st = check_streams(&k, &o, &r)) != LM_OK) return st;
	k.block = r.c.block;
	k.coarsen = 1;
	k.n = r.c.n;
	k.sms = r.sms;

	size_t vb = (size_t)r.c.n * sizeof(float), sb = (size_t)r.c.segments * sizeof(lmi_cuda_span);
	float *a = lmi_kcall_alloc(&k, vb), *b = lmi_kcall_alloc(&k, vb);
	r.c.c = lmi_kcall_output(&k, lm_empty(1, &r.c.n, LM_FLOAT32));
	if (k.backend == LMI_BACKEND_CUDA) {
		r.m.serial = lmi_kcall_alloc(&k, sb);
		r.m.overlapped = lmi_kcall_alloc(&k, sb);
	}
	for (int64_t i = 0; a && b && i < r.c.n; i++) { /* small integers: C is exact */
		a[i] = (float)(i % 1000);
		b[i] = (float)(i % 7) - 3;
	}
	r.c.a = a, r.c.b = b;
	snprintf(k.name, sizeof k.name, "streams vector_add %lld floats %d segments",
	         (long long)r.c.n, r.c.segments);
	return lmi_pattern_run(&pattern, &k, &r, out, info);
}
