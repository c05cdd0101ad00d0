/*
 * queues.c — the queues scene: kernels.bang's timeline (lua/lumen/bang.lua, AICS chapter 8) as the
 * slide draws it: one row per cluster (its 4 cores as lanes) against modelled cycles, each unit a
 * bar across the clusters (UNIONx) or the core (BLOCK) it ran on, coloured by kernel and named with
 * its type; below, a band per queue with each kernel's span: issued (a tick), waiting in the queue
 * (dashed), running from its first unit's start to its last unit's end. Steps place the units in
 * the order they started; a core with nothing running before the step's moment is hatched idle.
 * viz.show('queues', info) draws an info (q:sync(), dev:info()); without one, the AICS slide's
 * example — Kernel1 UNION2, Kernel2 UNION1, Kernel3 UNION4 in one queue on 4 clusters: the first
 * two start together, the third when all four clusters are free — run here by the emulator's rules.
 *
 * Also here, shared with mlu.c and pingpong.c (vz.h): the runs copied and checked (vz_bang_load)
 * and the demonstrations, computed with kernels.bang's placement rules and default cost model
 * (bang.model(): a copy costs latency + bytes / bandwidth, an intrinsic issue + n / lanes);
 * tests/viz/test_bang_scenes.lua runs the same kernels on kernels.bang and compares.
 * Read next: lua/lumen/bang.lua (Device:sync, Device:info), mlu.c, pingpong.c, docs/viz.md.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/scenes/vzs.h"

/* ---------------------------------------------------------------- the runs (shared) */

void vz_bang_free(vz_bang *b)
{
	vz_free(b->kernels);
	vz_free(b->units);
	vz_free(b->core);
	vz_free(b->task);
	vz_free(b->cluster);
	vz_free(b->nram);
	vz_free(b->wram);
	vz_free(b->sram);
	vz_free(b->spans);
	memset(b, 0, sizeof *b);
}

const char *vz_bang_source(const vz_bang *b)
{
	if (b->demo)
		return vz_tr("emulated, modelled cycles (kernels.bang): a demonstration", "模拟，模型周期（kernels.bang）：演示");
	return vz_tr("emulated, modelled cycles (kernels.bang)", "模拟，模型周期（kernels.bang）");
}

vz_color vz_bang_color(int kernel) { return vz_category(kernel); }

char *vz_bang_device(const vz_bang *b, char *buf, size_t cap)
{
	VZ_SNPRINTF_TR(buf, cap, "MLU (emulated): %d x %d x %d clusters x 4 cores (cards x chips x clusters); NRAM %.0f KiB, "
	               "WRAM %.0f KiB a core, SRAM %.0f KiB a cluster", "MLU（模拟）：%d × %d × %d 个簇 × 4 个核（板卡 × 芯片 × 簇）；"
	               "每核 NRAM %.0f KiB、WRAM %.0f KiB，每簇 SRAM %.0f KiB", b->cards, b->chips, b->clusters_per_chip,
	               b->cap_nram / 1024, b->cap_wram / 1024, b->cap_sram / 1024);
	return buf;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

char *vz_bang_ranges(char *buf, size_t cap, const int *ids, int n)
{
	int v[256];
	if (n > 256) n = 256;
	memcpy(v, ids, (size_t)n * sizeof *v);
	qsort(v, (size_t)n, sizeof *v, cmp_int);
	buf[0] = '\0';
	for (int i = 0; i < n;) {
		int j = i;
		while (j + 1 < n && v[j + 1] <= v[j] + 1) j++;
		if (v[j] > v[i]) vz_append(buf, cap, "%s%d-%d", i ? ", " : "", v[i], v[j]);
		else vz_append(buf, cap, "%s%d", i ? ", " : "", v[i]);
		i = j + 1;
	}
	return buf;
}

double vz_timeline_moment(const double *times, int ntimes, int steps, int k, double end)
{
	int n = steps - 1;
	if (k < 0) k = 0;
	if (k >= n) return end;
	return times[(int)((int64_t)(k + 1) * ntimes / n) - 1];
}

void vz_bang_axis(vz_frame *f, double lo, double hi, float x0, float w, float y, float top, float bottom)
{
	double span = hi - lo, raw = span / 6, mag = pow(10, floor(log10(raw > 0 ? raw : 1))), step = mag;
	if (raw > 5 * mag) step = 10 * mag;
	else if (raw > 2 * mag) step = 5 * mag;
	else if (raw > mag) step = 2 * mag;
	float last = -HUGE_VALF, gap = vz_char_width(f, VZ_FONT_TINY) * 2;
	char t[32];
	for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
		float x = x0 + (float)((v - lo) / (span > 0 ? span : 1)) * w;
		snprintf(t, sizeof t, "%.0f", v + 0.0); /* + 0.0: -0 (a tick at 0 from below) prints 0 */
		float tw = vz_text_width(f, VZ_FONT_TINY, t), left = fminf(fmaxf(x - tw / 2, x0), x0 + w - tw);
		vz_line(f, x, top, x, bottom, 1, vz_th.grid);
		if (left < last + gap) continue;
		vz_text_draw(f, left, y, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, t);
		vz_cell *c = vz_cell_add(f, vz_r(left, y, tw, vz_text_height(f, VZ_FONT_TINY)), "tick");
		c->value = v, c->has_value = true, c->state = "tick", c->color = vz_th.bg;
		last = left + tw;
	}
}

void vz_bang_bar(vz_frame *f, vz_rect r, vz_color fill, vz_color line)
{
	float z = vz_zoom(f);
	vz_cell_fill(f, r, fill, r.w * z >= 4 && r.h * z >= 4 ? 1 : 0, line);
}

static const char *type_name(int x)
{
	switch (x) {
	case 0: return "BLOCK";
	case 1: return "UNION1";
	case 2: return "UNION2";
	case 4: return "UNION4";
	default: return "UNION8";
	}
}

static bool whole(double v, double lo, double hi) { return v >= lo && v <= hi && v == floor(v); }

static lm_status bad(const char *fname, const char *scene, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static lm_status bad(const char *fname, const char *scene, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return lm_set_error(LM_ERR_ARG, "%s: the %s scene: %s", fname, scene, msg);
}

/* ---------------------------------------------------------------- the demonstrations */

/* kernels.bang's default model (bang.model()): GDRAM <-> NRAM latency and bytes a cycle, the
 * intrinsics' issue cost and lanes */
enum { M_LATENCY = 200, M_BW = 32, M_ISSUE = 8, M_LANES = 64 };

typedef struct demo_data {
	lm_viz_bang d;
	const char *names[3], *whats[4];
	double kernels[3 * 5], units[3 * 6], cores[28 * 4], clusters[7 * 2], spans[4 * 16 * 7];
} demo_data;

/* The AICS slide: Kernel1 UNION2 (8 tasks), Kernel2 UNION1 (4), Kernel3 UNION4 (16), one queue, 4
 * clusters; each task of a kernel doing c cycles of work declares NRAM 4096c, WRAM 2048c bytes and
 * an SRAM array of 8192c bytes a cluster, and adds 64c elements (issue + c cycles):
 *   local a = k:nram('float32', 1024 * c); k:wram('float32', 512 * c); k:sram('float32', 2048 * c, 'tile')
 *   k:__bang_add(a, a, a, 64 * c)
 * Placement as Device:sync: a kernel places its units once the one before it in the queue placed
 * all of its own, each on the lowest x whole clusters free at the time, else at the next time a
 * cluster frees. */
static void demo_slide(demo_data *m)
{
	static const struct { const char *name; int x, dim, c; } K[3] = {
		{"Kernel1", 2, 8, 100}, {"Kernel2", 1, 4, 60}, {"Kernel3", 4, 16, 50}};
	double free_at[4] = {0, 0, 0, 0}, t = 0;
	int nu = 0, nc = 0, nl = 0;
	for (int k = 0; k < 3; k++) {
		int per = 4 * K[k].x, x = K[k].x;
		double dur = M_ISSUE + ceil(64.0 * K[k].c / M_LANES), start = -1, stop = 0;
		m->names[k] = K[k].name;
		for (int u = 0; u < K[k].dim / per; u++) {
			int picked[4], np;
			for (;;) {
				np = 0;
				for (int cl = 0; cl < 4 && np < x; cl++)
					if (free_at[cl] <= t) picked[np++] = cl;
				if (np == x) break;
				double next = HUGE_VAL;
				for (int cl = 0; cl < 4; cl++)
					if (free_at[cl] > t) next = fmin(next, free_at[cl]);
				t = next;
			}
			double *row = m->units + 6 * nu++;
			row[0] = k, row[1] = u, row[2] = t, row[3] = t + dur, row[4] = per, row[5] = x;
			for (int i = 0; i < x; i++) {
				for (int j = 0; j < 4; j++) {
					double *cr = m->cores + 4 * nc++;
					cr[0] = picked[i] * 4 + j, cr[1] = u * per + i * 4 + j, cr[2] = 4096.0 * K[k].c, cr[3] = 2048.0 * K[k].c;
				}
				m->clusters[2 * nl] = picked[i], m->clusters[2 * nl + 1] = 8192.0 * K[k].c;
				nl++;
				free_at[picked[i]] = t + dur;
			}
			if (start < 0) start = t;
			stop = fmax(stop, t + dur);
		}
		double *kr = m->kernels + 5 * k;
		kr[0] = x, kr[1] = 1, kr[2] = 0, kr[3] = start, kr[4] = stop;
	}
	m->d.nkernels = 3, m->d.nunits = nu, m->d.ncores = nc, m->d.nclusters = nl;
	m->d.clusters_per_chip = 4;
}

/* A relu + sigmoid of 65,536 floats by 4 tasks (UNION1, one cluster) in chunks of 4,096 (docs/viz.md
 * "pingpong"): single-buffered, each chunk copied in (__memcpy), activated twice and copied out;
 * double-buffered (ping-pong), the next chunk's __memcpy_async issued before this one's compute,
 * stores asynchronous, __sync_io before a buffer is read. A synchronous copy waits for both clocks
 * and moves both; an asynchronous one runs on the IO clock from max(IO, compute); compute runs on
 * its own clock. */
static void demo_pingpong(demo_data *m, bool dbl)
{
	enum { CHUNK = 4096, STEPS = 4, LOAD = 0, STORE = 1, RELU = 2, SIGMOID = 3 };
	double copy = M_LATENCY + ceil(CHUNK * 4.0 / M_BW), act = M_ISSUE + ceil((double)CHUNK / M_LANES), end = 0;
	int ns = 0;
	m->whats[LOAD] = "GDRAM2NRAM", m->whats[STORE] = "NRAM2GDRAM";
	m->whats[RELU] = "__bang_active_relu", m->whats[SIGMOID] = "__bang_active_sigmoid";
	for (int core = 0; core < 4; core++) {
		double c = 0, io = 0, t0;
#define SPAN(kind, a, b, what)                                                                      \
	do {                                                                                        \
		double *r_ = m->spans + 7 * ns++;                                                   \
		r_[0] = 0, r_[1] = (kind), r_[2] = core, r_[3] = core, r_[4] = (a), r_[5] = (b), r_[6] = (what); \
	} while (0)
		if (!dbl) {
			for (int s = 0; s < STEPS; s++) {
				t0 = fmax(c, io);
				SPAN(0, t0, t0 + copy, LOAD);
				c = io = t0 + copy;
				SPAN(1, c, c + act, RELU);
				c += act;
				SPAN(1, c, c + act, SIGMOID);
				c += act;
				t0 = fmax(c, io);
				SPAN(0, t0, t0 + copy, STORE);
				c = io = t0 + copy;
			}
		} else {
			t0 = fmax(io, c);
			SPAN(0, t0, t0 + copy, LOAD);
			io = t0 + copy;
			for (int s = 0; s < STEPS; s++) {
				c = fmax(c, io); /* __sync_io */
				if (s + 1 < STEPS) {
					t0 = fmax(io, c);
					SPAN(0, t0, t0 + copy, LOAD);
					io = t0 + copy;
				}
				SPAN(1, c, c + act, RELU);
				c += act;
				SPAN(1, c, c + act, SIGMOID);
				c += act;
				t0 = fmax(io, c);
				SPAN(0, t0, t0 + copy, STORE);
				io = t0 + copy;
			}
			c = fmax(c, io);
		}
#undef SPAN
		end = fmax(end, fmax(c, io));
		double *cr = m->cores + 4 * core;
		cr[0] = core, cr[1] = core, cr[2] = (dbl ? 2 : 1) * CHUNK * 4.0, cr[3] = 0;
	}
	m->names[0] = dbl ? "relu_sigmoid_pingpong" : "relu_sigmoid_single";
	double *u = m->units;
	u[0] = 0, u[1] = 0, u[2] = 0, u[3] = end, u[4] = 4, u[5] = 1;
	m->clusters[0] = 0, m->clusters[1] = 0;
	double *k = m->kernels;
	k[0] = 1, k[1] = 1, k[2] = 0, k[3] = 0, k[4] = end;
	m->d.nkernels = 1, m->d.nunits = 1, m->d.ncores = 4, m->d.nclusters = 1, m->d.nspans = ns, m->d.nwhats = 4;
	m->d.clusters_per_chip = 1;
}

static void demo_fill(demo_data *m, int which)
{
	memset(m, 0, sizeof *m);
	m->d.cards = m->d.chips = 1;
	m->d.nram = 512 * 1024, m->d.wram = 1024 * 1024, m->d.sram = 2048 * 1024;
	if (which == 0) demo_slide(m);
	else demo_pingpong(m, which == 2);
	m->d.kernels = m->kernels, m->d.units = m->units, m->d.cores = m->cores, m->d.clusters = m->clusters;
	m->d.spans = m->spans, m->d.names = m->names, m->d.whats = m->whats;
}

/* ---------------------------------------------------------------- copying and checking */

typedef struct order_key {
	double start;
	int i;
} order_key;

static int cmp_start(const void *a, const void *b)
{
	const order_key *x = a, *y = b;
	if (x->start != y->start) return x->start < y->start ? -1 : 1;
	return x->i - y->i;
}

static lm_status take_kernels(vz_bang *b, const lm_viz_bang *r, const char *scene, const char *fname)
{
	for (int k = 0; k < r->nkernels; k++) {
		const double *v = r->kernels + 5 * k;
		vz_bang_kernel *K = &b->kernels[k];
		if (!(v[0] == 0 || v[0] == 1 || v[0] == 2 || v[0] == 4 || v[0] == 8) || (v[0] > 0 && v[0] > b->clusters))
			return bad(fname, scene, "kernel %d's type is %g: BLOCK (0) or UNIONx, x = 1, 2, 4, 8 clusters of %d", k + 1, v[0],
			           b->clusters);
		if (!whole(v[1], 1, 1e6)) return bad(fname, scene, "kernel %d's queue is %g, not a queue id (1, 2, ...)", k + 1, v[1]);
		if (!isfinite(v[2]) || !isfinite(v[3]) || !isfinite(v[4]) || v[4] < v[3] || v[3] < v[2])
			return bad(fname, scene, "kernel %d is issued at %g, starts at %g and stops at %g: not issued <= start <= stop",
			           k + 1, v[2], v[3], v[4]);
		const char *name = r->names && r->names[k] ? r->names[k] : "?";
		snprintf(K->name, sizeof K->name, "%s", name);
		vz_utf8_trim(K->name);
		K->x = (int)v[0], K->queue = (int)v[1], K->issued = v[2], K->start = v[3], K->stop = v[4];
		snprintf(K->type, sizeof K->type, "%s", type_name(K->x));
		b->t_lo = fmin(b->t_lo, K->issued);
		b->t_hi = fmax(b->t_hi, K->stop);
	}
	return LM_OK;
}

static lm_status take_units(vz_bang *b, const lm_viz_bang *r, const char *scene, const char *fname, int *old_of)
{
	order_key *key = vz_calloc((size_t)r->nunits, sizeof *key);
	double *busy = vz_calloc((size_t)b->cores, sizeof *busy);
	if (!key || !busy) {
		vz_free(key);
		vz_free(busy);
		return LM_ERR_NOMEM;
	}
	for (int c = 0; c < b->cores; c++) busy[c] = -HUGE_VAL;
	int c0 = 0, l0 = 0;
	lm_status st = LM_OK;
	for (int u = 0; u < r->nunits && st == LM_OK; u++) {
		const double *v = r->units + 6 * u;
		if (!whole(v[0], 0, r->nkernels - 1)) {
			st = bad(fname, scene, "unit %d names kernel %g of %d", u + 1, v[0] + 1, r->nkernels);
			break;
		}
		const vz_bang_kernel *K = &b->kernels[(int)v[0]];
		int nc = K->x ? 4 * K->x : 1, nl = K->x ? K->x : 1;
		if (!whole(v[1], 0, 1e9) || !isfinite(v[2]) || !isfinite(v[3]) || v[3] < v[2])
			st = bad(fname, scene, "unit %d (%s) runs from %g to %g: not start <= stop", u + 1, K->name, v[2], v[3]);
		else if (v[4] != nc || v[5] != nl)
			st = bad(fname, scene, "unit %d of %s (%s) has %g cores on %g clusters; a %s unit has %d on %d", u + 1, K->name,
			         K->type, v[4], v[5], K->type, nc, nl);
		else if (c0 + nc > r->ncores || l0 + nl > r->nclusters)
			st = bad(fname, scene, "the core and cluster tables end before unit %d's rows", u + 1);
		if (st != LM_OK) break;
		key[u] = (order_key){v[2], u};
		b->units[u] = (vz_bang_unit){(int)v[0], (int)v[1], v[2], v[3], c0, nc, l0, nl};
		for (int i = 0; i < nl && st == LM_OK; i++) {
			const double *cl = r->clusters + 2 * (l0 + i);
			if (!whole(cl[0], 0, b->clusters - 1))
				st = bad(fname, scene, "unit %d (%s) runs on cluster %g; the device has clusters 0..%d", u + 1, K->name, cl[0],
				         b->clusters - 1);
			else if (!(cl[1] >= 0 && cl[1] <= b->cap_sram))
				st = bad(fname, scene, "unit %d (%s) uses %g bytes of SRAM on cluster %g; a cluster has %g", u + 1, K->name,
				         cl[1], cl[0], b->cap_sram);
			b->cluster[l0 + i] = (int)cl[0], b->sram[l0 + i] = cl[1];
		}
		for (int i = 0; i < nc && st == LM_OK; i++) {
			const double *cr = r->cores + 4 * (c0 + i);
			bool mine = false;
			for (int j = 0; j < nl; j++) mine = mine || (whole(cr[0], 0, b->cores - 1) && b->cluster[l0 + j] == (int)cr[0] / 4);
			if (!mine)
				st = bad(fname, scene, "unit %d (%s) lists core %g, which is not on its clusters", u + 1, K->name, cr[0]);
			else if (!whole(cr[1], 0, 1e12))
				st = bad(fname, scene, "unit %d (%s): core %g's taskId is %g", u + 1, K->name, cr[0], cr[1]);
			else if (!(cr[2] >= 0 && cr[2] <= b->cap_nram) || !(cr[3] >= 0 && cr[3] <= b->cap_wram))
				st = bad(fname, scene, "unit %d (%s): core %g uses %g bytes of NRAM and %g of WRAM; a core has %g and %g", u + 1,
				         K->name, cr[0], cr[2], cr[3], b->cap_nram, b->cap_wram);
			b->core[c0 + i] = (int)cr[0], b->task[c0 + i] = (int)cr[1], b->nram[c0 + i] = cr[2], b->wram[c0 + i] = cr[3];
		}
		c0 += nc, l0 += nl;
	}
	if (st == LM_OK && (c0 != r->ncores || l0 != r->nclusters))
		st = bad(fname, scene, "%d core and %d cluster rows for units that ran on %d and %d", r->ncores, r->nclusters, c0, l0);
	if (st == LM_OK) { /* the order they started in; one core runs one unit at a time */
		qsort(key, (size_t)r->nunits, sizeof *key, cmp_start);
		vz_bang_unit *sorted = vz_calloc((size_t)r->nunits, sizeof *sorted);
		if (!sorted) st = LM_ERR_NOMEM;
		for (int i = 0; sorted && i < r->nunits; i++) sorted[i] = b->units[key[i].i], old_of[key[i].i] = i;
		if (sorted) {
			vz_free(b->units);
			b->units = sorted;
		}
		for (int i = 0; st == LM_OK && i < r->nunits; i++) {
			const vz_bang_unit *U = &b->units[i];
			for (int j = 0; j < U->ncores && st == LM_OK; j++) {
				int c = b->core[U->core0 + j];
				if (busy[c] > U->start)
					st = bad(fname, scene, "core %d runs unit %d of %s from %g while an earlier unit runs until %g: not one "
					         "device's timeline", c, U->index, b->kernels[U->kernel].name, U->start, busy[c]);
				busy[c] = fmax(busy[c], U->stop);
			}
			b->kernels[U->kernel].units++;
			b->t_lo = fmin(b->t_lo, U->start);
			b->t_hi = fmax(b->t_hi, U->stop);
		}
	}
	vz_free(key);
	vz_free(busy);
	return st;
}

static lm_status take_spans(vz_bang *b, const lm_viz_bang *r, const char *scene, const char *fname, const int *old_of)
{
	for (int i = 0; i < r->nspans; i++) {
		const double *v = r->spans + 7 * i;
		if (!whole(v[0], 0, r->nunits - 1) || (v[1] != 0 && v[1] != 1) || !whole(v[2], 0, b->cores - 1) ||
		    !whole(v[3], 0, 1e12) || !isfinite(v[4]) || !isfinite(v[5]) || v[5] < v[4] || !whole(v[6], -1, r->nwhats - 1))
			return bad(fname, scene, "span %d (unit %g, kind %g, core %g, %g to %g) is not a DMA (0) or compute (1) span of a "
			           "unit on a core of the device with t0 <= t1", i + 1, v[0] + 1, v[1], v[2], v[4], v[5]);
		vz_bang_span *s = &b->spans[i];
		s->unit = old_of[(int)v[0]], s->compute = v[1] == 1, s->core = (int)v[2], s->task = (int)v[3];
		s->t0 = v[4], s->t1 = v[5];
		snprintf(s->what, sizeof s->what, "%s", v[6] >= 0 && r->whats && r->whats[(int)v[6]] ? r->whats[(int)v[6]] : "?");
		vz_utf8_trim(s->what);
	}
	return LM_OK;
}

lm_status vz_bang_load(vz_bang *b, const lm_viz_bang *run, int demo, const char *scene, const char *fname)
{
	memset(b, 0, sizeof *b);
	demo_data m;
	if (!run) {
		demo_fill(&m, demo);
		run = &m.d;
		b->demo = true;
	}
	const lm_viz_bang *r = run;
	int64_t clusters = (int64_t)r->cards * r->chips * r->clusters_per_chip;
	if (r->cards < 1 || r->chips < 1 || r->clusters_per_chip < 1 || clusters > VZ_BANG_MAX_CLUSTERS)
		return bad(fname, scene, "it draws devices of 1 to %d clusters; got %d card(s) x %d chip(s) x %d clusters",
		           VZ_BANG_MAX_CLUSTERS, r->cards, r->chips, r->clusters_per_chip);
	if (!(r->nram > 0 && r->wram > 0 && r->sram > 0 && isfinite(r->nram + r->wram + r->sram)))
		return bad(fname, scene, "the capacities NRAM %g, WRAM %g, SRAM %g bytes must be positive", r->nram, r->wram, r->sram);
	if (r->nkernels < 1 || r->nkernels > VZ_BANG_MAX_KERNELS || r->nunits < 1 || r->nunits > VZ_BANG_MAX_UNITS)
		return bad(fname, scene, "it draws 1 to %d kernels of 1 to %d units in all; got %d and %d (nothing ran yet: sync the "
		           "queue first)", VZ_BANG_MAX_KERNELS, VZ_BANG_MAX_UNITS, r->nkernels, r->nunits);
	if (r->nspans < 0 || r->nspans > VZ_BANG_MAX_SPANS || r->ncores < 1 || r->nclusters < 1 || !r->kernels || !r->units ||
	    !r->cores || !r->clusters || (r->nspans > 0 && !r->spans))
		return bad(fname, scene, "the tables of the run are missing or too long (at most %d spans)", VZ_BANG_MAX_SPANS);
	b->cards = r->cards, b->chips = r->chips, b->clusters_per_chip = r->clusters_per_chip;
	b->clusters = (int)clusters, b->cores = 4 * (int)clusters;
	b->cap_nram = r->nram, b->cap_wram = r->wram, b->cap_sram = r->sram;
	b->nkernels = r->nkernels, b->nunits = r->nunits, b->nspans = r->nspans;
	b->t_lo = HUGE_VAL, b->t_hi = -HUGE_VAL;
	b->kernels = vz_calloc((size_t)r->nkernels, sizeof *b->kernels);
	b->units = vz_calloc((size_t)r->nunits, sizeof *b->units);
	b->core = vz_calloc((size_t)r->ncores, sizeof *b->core);
	b->task = vz_calloc((size_t)r->ncores, sizeof *b->task);
	b->nram = vz_calloc((size_t)r->ncores, sizeof *b->nram);
	b->wram = vz_calloc((size_t)r->ncores, sizeof *b->wram);
	b->cluster = vz_calloc((size_t)r->nclusters, sizeof *b->cluster);
	b->sram = vz_calloc((size_t)r->nclusters, sizeof *b->sram);
	b->spans = vz_calloc(r->nspans ? (size_t)r->nspans : 1, sizeof *b->spans);
	int *old_of = vz_calloc((size_t)r->nunits, sizeof *old_of);
	lm_status st = LM_ERR_NOMEM;
	if (b->kernels && b->units && b->core && b->task && b->nram && b->wram && b->cluster && b->sram && b->spans && old_of) {
		st = take_kernels(b, r, scene, fname);
		if (st == LM_OK) st = take_units(b, r, scene, fname, old_of);
		if (st == LM_OK) st = take_spans(b, r, scene, fname, old_of);
	}
	vz_free(old_of);
	if (st != LM_OK) vz_bang_free(b);
	if (!(b->t_hi > b->t_lo)) b->t_hi = b->t_lo + 1;
	return st;
}

/* ---------------------------------------------------------------- the queues scene */

typedef struct queues_scene {
	vz_bang b;
	int nq, queue_of[VZ_BANG_MAX_KERNELS], krow[VZ_BANG_MAX_KERNELS]; /* a kernel's band and row in it */
	int queues[VZ_BANG_MAX_KERNELS];
	float lh, cw, label_w, plot_w, top, row, qtop, kh, legend_y;
} queues_scene;

static void queues_destroy(void *p)
{
	queues_scene *s = p;
	if (!s) return;
	vz_bang_free(&s->b);
	vz_free(s);
}

static void *queues_create(const vz_build *b)
{
	queues_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	if (vz_bang_load(&s->b, b->bang, 0, "queues", b->fname) != LM_OK) {
		vz_free(s);
		return NULL;
	}
	/* the queues in order of id, each kernel a row of its queue's band, in launch order */
	int rows = 0;
	for (int k = 0; k < s->b.nkernels; k++) {
		int q = 0;
		while (q < s->nq && s->queues[q] != s->b.kernels[k].queue) q++;
		if (q == s->nq) s->queues[s->nq++] = s->b.kernels[k].queue;
	}
	qsort(s->queues, (size_t)s->nq, sizeof s->queues[0], cmp_int);
	for (int q = 0; q < s->nq; q++)
		for (int k = 0; k < s->b.nkernels; k++)
			if (s->b.kernels[k].queue == s->queues[q]) s->queue_of[k] = q, s->krow[k] = rows++;
	return s;
}

static int queues_steps(void *p) { return ((queues_scene *)p)->b.nunits + 1; } /* a unit a step, then the end */
static int queues_variants(void *p) { (void)p; return 1; }
static const char *queues_variant_name(void *p, int v) { (void)p, (void)v; return "timeline"; }
static void queues_set_variant(void *p, int v) { (void)p, (void)v; }

static void queues_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	queues_scene *s = p;
	const vz_frame *f = c->metrics;
	float W = fmaxf(c->w, 900 * c->scale), H = fmaxf(c->h, 380 * c->scale);
	s->lh = vz_text_height(f, VZ_FONT_SMALL);
	s->cw = vz_char_width(f, VZ_FONT_SMALL);
	char t[48];
	VZ_SNPRINTF_TR(t, sizeof t, "cluster %d", "簇 %d", s->b.clusters - 1);
	float a = vz_text_width(f, VZ_FONT_SMALL, t);
	VZ_SNPRINTF_TR(t, sizeof t, "queue %d", "队列 %d", s->queues[s->nq - 1]);
	s->label_w = fmaxf(a, vz_text_width(f, VZ_FONT_SMALL, t)) + s->cw * 1.5f;
	s->plot_w = W - s->label_w - s->cw * 2;
	s->top = s->lh * 1.5f;
	float avail = H - s->top - s->lh * 2.8f, nk = (float)s->b.nkernels + 0.5f * (float)(s->nq - 1);
	s->row = fminf(s->lh * 5.0f, avail * 0.62f / (float)s->b.clusters);
	s->kh = fminf(s->lh * 2.0f, (avail - s->row * (float)s->b.clusters - s->lh) / nk);
	s->qtop = s->top + s->row * (float)s->b.clusters + s->lh;
	s->legend_y = s->qtop + s->kh * nk + s->lh * 0.6f;
	*ww = W;
	*wh = H;
}

static int step_of(const vz_frame *f, int steps)
{
	int k = (int)floor(f->t + 1e-9);
	return k < 0 ? 0 : k >= steps ? steps - 1 : k;
}

static float x_of(const queues_scene *s, double t)
{
	return s->label_w + (float)((t - s->b.t_lo) / (s->b.t_hi - s->b.t_lo)) * s->plot_w;
}

static float krow_y(const queues_scene *s, int k) { return s->qtop + ((float)s->krow[k] + 0.5f * (float)s->queue_of[k]) * s->kh; }

/* The clusters idle at the moment of step (nothing placed so far runs on any of their cores). */
static int idle_clusters(const queues_scene *s, int step, int *out)
{
	double now = s->b.units[step].start;
	bool busy[VZ_BANG_MAX_CLUSTERS] = {false};
	for (int i = 0; i <= step; i++) {
		const vz_bang_unit *u = &s->b.units[i];
		if (u->start <= now && now < u->stop)
			for (int j = 0; j < u->ncores; j++) busy[s->b.core[u->core0 + j] / 4] = true;
	}
	int n = 0;
	for (int c = 0; c < s->b.clusters; c++)
		if (!busy[c]) out[n++] = c;
	return n;
}

/* A label inside r when it fits (the small font, else the tiny one; cut with an ellipsis). */
static void bar_label(vz_frame *f, vz_rect r, vz_color fill, const char *text)
{
	char t[96];
	for (int k = 0; k < 2; k++) {
		vz_font font = k ? VZ_FONT_TINY : VZ_FONT_SMALL;
		float h = vz_text_height(f, font), pad = vz_char_width(f, font) * 0.6f;
		if (h > r.h || r.w < pad * 6) continue;
		snprintf(t, sizeof t, "%s", text);
		vz_text_fit(f, font, t, sizeof t, r.w - 2 * pad);
		if (strlen(t) < 4) continue;
		vz_text_draw(f, r.x + pad, r.y + (r.h - h) / 2, font, VZ_ALIGN_LEFT, vz_text_on(fill), t);
		return;
	}
}

static vz_rect lane_rect(const queues_scene *s, int core, double a, double b)
{
	float lane = s->row * 0.92f / 4;
	return vz_r(x_of(s, a), s->top + (float)(core / 4) * s->row + (float)(core % 4) * lane, x_of(s, b) - x_of(s, a), lane);
}

static void idle_cell(vz_frame *f, vz_rect r, int core, double cycles)
{
	vz_hatch(f, r, vz_th.idle, vz_th.hatch);
	vz_cell *c = vz_cell_add(f, r, "idle");
	c->index = core, c->row = core / 4, c->group = "clusters", c->state = "idle", c->color = vz_th.idle;
	c->value = cycles, c->has_value = true;
}

/* The rows (drawn under what the units put on them). */
static void draw_rows(queues_scene *s, vz_frame *f)
{
	const vz_bang *b = &s->b;
	char t[48];
	float lane = s->row * 0.92f / 4, every = fmaxf(1, ceilf(s->lh / (s->row * vz_zoom(f))));
	for (int c = 0; c < b->clusters; c++) {
		float y = s->top + (float)c * s->row;
		VZ_SNPRINTF_TR(t, sizeof t, "cluster %d", "簇 %d", c);
		if (c % (int)every == 0 && vz_text_height(f, VZ_FONT_SMALL) <= s->row * every)
			vz_text_draw(f, 0, y + fmaxf(0, (lane * 4 - s->lh) / 2), VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
		vz_rect row = vz_r(s->label_w, y, s->plot_w, lane * 4);
		vz_cell *cc = vz_cell_add(f, vz_r(0, y, s->label_w, lane * 4), "cluster");
		cc->index = c, cc->row = c, cc->group = "clusters", cc->state = "cluster", cc->color = vz_th.bg;
		for (int j = 0; j < 4; j++) {
			vz_rect l = vz_r(row.x, y + (float)j * lane, row.w, lane);
			vz_cell *lc = vz_cell_add(f, l, "core");
			lc->index = 4 * c + j, lc->row = c, lc->group = "clusters", lc->state = "lane", lc->color = vz_th.bg;
			if (j) vz_line(f, row.x, l.y, row.x + row.w, l.y, 1, vz_th.grid);
		}
		vz_outline(f, row, 1, vz_th.panel_line);
	}
}

/* The units 0..last, the one placed at this step (step) outlined; idle time until now hatched. */
static void draw_units(queues_scene *s, vz_frame *f, int last, int step, double now)
{
	const vz_bang *b = &s->b;
	char t[96];
	float lane = s->row * 0.92f / 4;
	double cur[4 * VZ_BANG_MAX_CLUSTERS]; /* per core: the end of what ran on it so far */
	for (int c = 0; c < b->cores; c++) cur[c] = b->t_lo;
	for (int i = 0; i <= last; i++) {
		const vz_bang_unit *u = &b->units[i];
		for (int j = 0; j < u->ncores; j++) { /* the idle time before it, on each of its cores */
			int core = b->core[u->core0 + j];
			double until = fmin(u->start, now);
			if (until > cur[core]) idle_cell(f, lane_rect(s, core, cur[core], until), core, until - cur[core]);
			cur[core] = fmax(cur[core], u->stop);
		}
		vz_color col = vz_bang_color(u->kernel);
		const vz_bang_kernel *K = &b->kernels[u->kernel];
		float x0 = x_of(s, u->start), w = fmaxf(x_of(s, u->stop) - x0, 1.5f);
		/* a bar per run of neighbouring clusters (UNIONx), or the core's lane (BLOCK) */
		int ids[8];
		for (int j = 0; j < u->nclusters; j++) ids[j] = b->cluster[u->cluster0 + j];
		qsort(ids, (size_t)u->nclusters, sizeof ids[0], cmp_int);
		for (int j = 0; j < u->nclusters;) {
			int e = j;
			while (e + 1 < u->nclusters && ids[e + 1] == ids[e] + 1) e++;
			vz_rect r = K->x ? vz_r(x0, s->top + (float)ids[j] * s->row, w, s->row * (float)(e - j) + lane * 4)
			                 : vz_r(x0, s->top + (float)ids[j] * s->row + (float)(b->core[u->core0] % 4) * lane, w, lane);
			vz_bang_bar(f, r, col, vz_th.bg);
			if (i == step) vz_outline(f, r, 2, vz_th.highlight);
			snprintf(t, sizeof t, "%s %s", K->name, K->type);
			if (j == 0) bar_label(f, K->x ? vz_r(r.x, r.y, r.w, lane * 4) : r, col, t);
			vz_cell *uc = vz_cell_add(f, r, "unit");
			uc->index = i, uc->col = u->kernel, uc->row = ids[j], uc->group = "clusters";
			uc->state = i == step ? "placed now" : "placed", uc->color = col;
			uc->value = u->stop - u->start, uc->has_value = true;
			j = e + 1;
		}
	}
	for (int c = 0; c < b->cores; c++)
		if (cur[c] < now) idle_cell(f, lane_rect(s, c, cur[c], now), c, now - cur[c]);
}

static void draw_queues(queues_scene *s, vz_frame *f, int last, double now)
{
	const vz_bang *b = &s->b;
	char t[96];
	for (int q = 0; q < s->nq; q++) {
		int first = -1;
		for (int k = 0; k < b->nkernels && first < 0; k++)
			if (s->queue_of[k] == q) first = k;
		VZ_SNPRINTF_TR(t, sizeof t, "queue %d", "队列 %d", s->queues[q]);
		if (vz_text_height(f, VZ_FONT_SMALL) <= s->kh * 1.05f)
			vz_text_draw(f, 0, krow_y(s, first) + (s->kh * 0.8f - s->lh) / 2, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text, t);
	}
	for (int k = 0; k < b->nkernels; k++) {
		const vz_bang_kernel *K = &b->kernels[k];
		float y = krow_y(s, k), h = s->kh * 0.8f, mid = y + h / 2;
		if (K->issued > now) continue;
		double first = HUGE_VAL, end = -HUGE_VAL;
		int placed = 0;
		for (int i = 0; i <= last; i++)
			if (b->units[i].kernel == k) first = fmin(first, b->units[i].start), end = fmax(end, b->units[i].stop), placed++;
		vz_color col = vz_bang_color(k), light = vz_mix(vz_th.bg, col, 0.55);
		float xi = x_of(s, K->issued);
		vz_line(f, xi, y, xi, y + h, 2, vz_th.text);
		double wait_end = placed ? first : now;
		if (wait_end > K->issued) vz_dashed(f, xi, mid, x_of(s, wait_end), mid, 1.5f, 4, vz_th.text_dim);
		vz_rect r;
		if (placed) {
			r = vz_r(x_of(s, first), y, fmaxf(x_of(s, end) - x_of(s, first), 1.5f), h);
			vz_bang_bar(f, r, light, col);
			bar_label(f, r, light, K->name);
		} else {
			r = vz_r(xi - 2, y, fmaxf(x_of(s, now) - xi, 0) + 4, h);
			snprintf(t, sizeof t, "%s", K->name);
			float tw = vz_text_width(f, VZ_FONT_TINY, t);
			if (vz_text_height(f, VZ_FONT_TINY) <= h && x_of(s, now) + tw + 8 < s->label_w + s->plot_w)
				vz_text_draw(f, x_of(s, now) + 6, y + (h - vz_text_height(f, VZ_FONT_TINY)) / 2, VZ_FONT_TINY, VZ_ALIGN_LEFT,
				             vz_th.text_dim, t);
		}
		vz_cell *c = vz_cell_add(f, r, "kernel");
		c->index = k, c->col = k, c->row = s->queues[s->queue_of[k]], c->group = "queues";
		c->state = !placed ? "waiting" : placed < K->units ? "placing" : "placed";
		c->color = placed ? light : vz_th.bg;
		c->value = K->stop - K->start, c->has_value = true;
	}
}

static void queues_draw(void *p, vz_frame *f)
{
	queues_scene *s = p;
	const vz_bang *b = &s->b;
	int step = step_of(f, b->nunits + 1), last = step < b->nunits ? step : b->nunits - 1;
	double now = step < b->nunits ? b->units[step].start : b->t_hi;
	float bottom = s->qtop + s->kh * ((float)b->nkernels + 0.5f * (float)(s->nq - 1));
	vz_text_draw(f, 0, 0, VZ_FONT_TINY, VZ_ALIGN_LEFT, vz_th.text_dim, vz_tr("cycles", "周期"));
	vz_bang_axis(f, b->t_lo, b->t_hi, s->label_w, s->plot_w, 0, s->top - 3, bottom);
	for (int k = 0; k < b->nkernels; k++)
		vz_line(f, s->label_w, krow_y(s, k) + s->kh - 1, s->label_w + s->plot_w, krow_y(s, k) + s->kh - 1, 1, vz_th.grid);
	draw_rows(s, f);
	vz_layer(f); /* the units over the rows' lines */
	draw_units(s, f, last, step, now);
	draw_queues(s, f, last, now);
	vz_line(f, x_of(s, now), s->top - 3, x_of(s, now), bottom, 2, vz_th.highlight);
	float x = vzs_legend(f, 0, s->legend_y, vz_th.idle, true, vz_tr("idle core", "空闲的核"));
	x = vzs_legend(f, x, s->legend_y, vz_th.highlight, false, vz_tr("the step's moment, the unit placed", "这一步的时刻与放下的单元"));
	vz_line(f, x, s->legend_y + s->lh * 0.1f, x, s->legend_y + s->lh * 0.9f, 2, vz_th.text);
	vz_dashed(f, x, s->legend_y + s->lh / 2, x + s->lh * 1.5f, s->legend_y + s->lh / 2, 1.5f, 4, vz_th.text_dim);
	vz_text_draw(f, x + s->lh * 1.9f, s->legend_y, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.text,
	             vz_tr("a kernel issued, waiting in its queue; then its span", "核函数已发射、在队列中等待；然后是它的运行区间"));
}

static void queues_title(void *p, char *buf, size_t cap)
{
	queues_scene *s = p;
	const vz_bang *b = &s->b;
	VZ_SNPRINTF_TR(buf, cap, "queues: %d kernels, %d units, %d clusters, %.0f cycles; %s",
	               "队列：%d 个核函数，%d 个单元，%d 个簇，%.0f 周期；%s", b->nkernels, b->nunits, b->clusters, b->t_hi - b->t_lo,
	               vz_bang_source(b));
}

static void queues_step_label(void *p, int step, char *buf, size_t cap)
{
	queues_scene *s = p;
	const vz_bang *b = &s->b;
	if (step < 0) step = 0;
	if (step >= b->nunits) {
		double busy = 0, span = b->t_hi - b->t_lo;
		for (int i = 0; i < b->nunits; i++) busy += (b->units[i].stop - b->units[i].start) * b->units[i].ncores;
		VZ_SNPRINTF_TR(buf, cap, "the end, cycle %.0f: every unit placed; the %d cores were busy %.0f%% of the %.0f cycles",
		               "结束，第 %.0f 周期：所有单元都已放下；%d 个核的忙碌占比 %.0f%%（共 %.0f 个周期）", b->t_hi, b->cores,
		               100 * busy / (span * b->cores), span);
		return;
	}
	const vz_bang_unit *u = &b->units[step];
	const vz_bang_kernel *K = &b->kernels[u->kernel];
	int idle[VZ_BANG_MAX_CLUSTERS], n = idle_clusters(s, step, idle);
	char where[200], ids[160];
	vz_bang_ranges(ids, sizeof ids, b->cluster + u->cluster0, u->nclusters);
	if (K->x) VZ_SNPRINTF_TR(where, sizeof where, "cluster%s %s", "簇 %s%s", u->nclusters > 1 && !vz_zh() ? "s" : "", ids);
	else VZ_SNPRINTF_TR(where, sizeof where, "core %d", "核 %d", b->core[u->core0]);
	if (n) vz_bang_ranges(ids, sizeof ids, idle, n);
	else snprintf(ids, sizeof ids, "%s", vz_tr("none", "无"));
	VZ_SNPRINTF_TR(buf, cap, "%s %s unit %d of %d starts at cycle %.0f on %s, ends at %.0f; idle clusters then: %s",
	               "%s %s 的第 %d / %d 个单元：第 %.0f 周期在%s上开始，%.0f 结束；此刻空闲的簇：%s", K->name, K->type, u->index + 1,
	               K->units, u->start, where, u->stop, ids);
}

static void queues_counters(void *p, vz_panel *pn)
{
	queues_scene *s = p;
	const vz_bang *b = &s->b;
	if (b->nkernels <= VZ_PANEL_COLS) {
		for (int k = 0; k < b->nkernels; k++) {
			const vz_bang_kernel *K = &b->kernels[k];
			char title[64];
			snprintf(title, sizeof title, "%s %s", K->name, K->type);
			vz_utf8_trim(title);
			int c = vz_panel_column(pn, title, vz_bang_source(b));
			vz_panel_set(pn, c, "queue", K->queue);
			vz_panel_set(pn, c, "units", K->units);
			vz_panel_set(pn, c, "issued", K->issued);
			vz_panel_set(pn, c, "start", K->start);
			vz_panel_set(pn, c, "stop", K->stop);
			vz_panel_set(pn, c, "cycles", K->stop - K->start);
			vz_panel_set(pn, c, "waited", K->start - K->issued);
		}
	} else {
		int c = vz_panel_column(pn, vz_tr("all kernels", "全部核函数"), vz_bang_source(b));
		vz_panel_set(pn, c, "kernels", b->nkernels);
		vz_panel_set(pn, c, "queues", s->nq);
		vz_panel_set(pn, c, "units", b->nunits);
		vz_panel_set(pn, c, "first", b->t_lo);
		vz_panel_set(pn, c, "last", b->t_hi);
		vz_panel_set(pn, c, "cycles", b->t_hi - b->t_lo);
		VZ_NOTE_TR(pn, "%d kernels: hover a kernel's bar for its numbers", "%d 个核函数：把指针移到核函数的条上查看其数值",
		           b->nkernels);
	}
	char dev[200];
	VZ_NOTE_TR(pn, "%s; cycles = stop - start, waited = start - issued (in its queue)",
	           "%s；cycles = stop - start，waited = start - issued（在队列中等待）", vz_bang_device(b, dev, sizeof dev));
}

static void queues_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	queues_scene *s = p;
	const vz_bang *b = &s->b;
	char a[160], d[160];
	if (strcmp(c->kind, "unit") == 0 && c->index >= 0 && c->index < b->nunits) {
		const vz_bang_unit *u = &b->units[c->index];
		const vz_bang_kernel *K = &b->kernels[u->kernel];
		vz_bang_ranges(a, sizeof a, b->cluster + u->cluster0, u->nclusters);
		vz_bang_ranges(d, sizeof d, b->core + u->core0, u->ncores);
		char tasks[160];
		vz_bang_ranges(tasks, sizeof tasks, b->task + u->core0, u->ncores);
		VZ_SNPRINTF_TR(buf, cap, "%s (%s), unit %d of %d, queue %d\nclusters %s, cores %s, tasks %s\ncycles %.0f to %.0f: %.0f "
		               "modelled cycles (emulated)", "%s（%s），第 %d / %d 个单元，队列 %d\n簇 %s，核 %s，任务 %s\n周期 %.0f 到 %.0f："
		               "%.0f 个模型周期（模拟）", K->name, K->type, u->index + 1, K->units, K->queue, a, d, tasks, u->start,
		               u->stop, u->stop - u->start);
	} else if (strcmp(c->kind, "tick") == 0) {
		VZ_SNPRINTF_TR(buf, cap, "cycle %.0f (modelled by kernels.bang)", "第 %.0f 周期（kernels.bang 的模型）", c->value);
	} else if (strcmp(c->kind, "idle") == 0 && c->index >= 0) {
		VZ_SNPRINTF_TR(buf, cap, "core %d (cluster %d): idle for %.0f modelled cycles before this moment",
		               "核 %d（簇 %d）：此刻之前空闲 %.0f 个模型周期", c->index, c->index / 4, c->value);
	} else if (strcmp(c->kind, "kernel") == 0 && c->index >= 0 && c->index < b->nkernels) {
		const vz_bang_kernel *K = &b->kernels[c->index];
		VZ_SNPRINTF_TR(buf, cap, "%s (%s) in queue %d: issued at %.0f, started at %.0f (waited %.0f), stopped at %.0f: %.0f "
		               "cycles, %d unit%s (emulated)", "%s（%s），队列 %d：%.0f 发射，%.0f 开始（等待 %.0f），%.0f 结束：%.0f 个"
		               "周期，%d 个单元%s（模拟）", K->name, K->type, K->queue, K->issued, K->start, K->start - K->issued, K->stop,
		               K->stop - K->start, K->units, K->units > 1 && !vz_zh() ? "s" : "");
	} else if ((strcmp(c->kind, "core") == 0 || strcmp(c->kind, "cluster") == 0) && c->index >= 0) {
		bool core = c->kind[1] == 'o';
		int units = 0;
		double busy = 0;
		for (int i = 0; i < b->nunits; i++) {
			const vz_bang_unit *u = &b->units[i];
			bool on = false;
			for (int j = 0; j < u->ncores && !on; j++) on = core ? b->core[u->core0 + j] == c->index : b->core[u->core0 + j] / 4 == c->index;
			if (on) units++, busy += u->stop - u->start;
		}
		int cl = core ? c->index / 4 : c->index, per = b->clusters_per_chip, card = cl / per / b->chips, chip = cl / per % b->chips;
		const char *plural = units != 1 && !vz_zh() ? "s" : "";
		if (core && vz_zh())
			snprintf(buf, cap, "核 %d：簇 %d（卡 %d，芯片 %d）的第 %d 个核；%d 个单元，忙 %.0f / %.0f 周期", c->index, cl, card, chip,
			         c->index % 4, units, busy, b->t_hi - b->t_lo);
		else if (core)
			snprintf(buf, cap, "core %d: core %d of cluster %d (card %d, chip %d); %d unit%s, busy %.0f of %.0f cycles", c->index,
			         c->index % 4, cl, card, chip, units, plural, busy, b->t_hi - b->t_lo);
		else
			VZ_SNPRINTF_TR(buf, cap, "cluster %d (card %d, chip %d): %d unit%s, busy %.0f cycles in all", "簇 %d（卡 %d，芯片 %d）：%d "
			               "个单元%s，共忙 %.0f 周期", cl, card, chip, units, plural, busy);
	}
}

static const vz_option queues_options[] = {{NULL, 0, 0, 0, NULL, NULL, NULL}};

const vz_scene_class vz_scene_queues = {
	.name = "queues",
	.summary = "BANG on a simulated MLU: kernels.bang's timeline, a row per cluster against modelled cycles, each unit "
	           "(BLOCK or UNIONx) a bar on its clusters, each queue's kernels issued, waiting and running "
	           "(viz.show('queues', info))",
	.patterns = "",
	.options = queues_options,
	.create = queues_create,
	.destroy = queues_destroy,
	.steps = queues_steps,
	.variants = queues_variants,
	.variant_name = queues_variant_name,
	.set_variant = queues_set_variant,
	.layout = queues_layout,
	.draw = queues_draw,
	.title = queues_title,
	.step_label = queues_step_label,
	.counters = queues_counters,
	.describe = queues_describe,
};
