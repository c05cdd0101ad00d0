/*
 * latency.c — the latency model of the emulator's modelled cycles (stated in docs/trace.md and, in
 * one paragraph, in every emulated run's info.model).
 *
 * One process-wide model, read once at the start of every emulated call (the trace keeps a copy),
 * set from C or from Lua's kernels.latency{...}. A mutex keeps a reader from seeing half a write.
 * The fields are listed once (fields[] below) with their limits.
 * Read next: simt_model.c (where the numbers are used).
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "core/lmi.h"
#include "lumen/kernels.h"

#define DEFAULTS                                                                                   \
	{                                                                                          \
		.global = 400, .shared = 20, .constant = 4, .arith = 4, .barrier = 20, .sms = 1,   \
		.issue = 1, .sector = 2, .warps_per_sm = 64, .blocks_per_sm = 32,                  \
		.shared_per_sm = 65536,                                                            \
	}

static const lm_latency_model defaults = DEFAULTS;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static lm_latency_model current = DEFAULTS;

/* Each field: its name, where it is, its range (whole numbers), and what the range means. */
static const struct field {
	const char *name;
	size_t offset;
	double lo, hi;
	const char *what;
} fields[] = {
#define F(name, lo, hi, what) {#name, offsetof(lm_latency_model, name), lo, hi, what}
	F(global, 0, 1e9, "a whole number of cycles"),
	F(shared, 0, 1e9, "a whole number of cycles"),
	F(constant, 0, 1e9, "a whole number of cycles"),
	F(arith, 0, 1e9, "a whole number of cycles"),
	F(barrier, 0, 1e9, "a whole number of cycles"),
	F(sms, 1, 65536, "an integer"),
	F(issue, 0, 1e9, "a whole number of cycles"),
	F(sector, 0, 1e9, "a whole number of cycles"),
	F(warps_per_sm, 1, 64, "an integer"),
	F(blocks_per_sm, 1, 1024, "an integer"),
	F(shared_per_sm, LM_KERNEL_MAX_SHARED, 1 << 24, "a number of bytes"),
#undef F
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

static double *field_of(lm_latency_model *m, int i) { return (double *)((char *)m + fields[i].offset); }

void lm_kernel_latency_default(lm_latency_model *out) { *out = defaults; }

void lm_kernel_latency_get(lm_latency_model *out)
{
	pthread_mutex_lock(&lock);
	*out = current;
	pthread_mutex_unlock(&lock);
}

lm_status lm_kernel_latency_set(const lm_latency_model *m)
{
	lm_latency_model c = *m;
	for (int i = 0; i < NFIELDS; i++) {
		const struct field *f = &fields[i];
		double v = *field_of(&c, i);
		/* the bounds keep every modelled count well inside uint64 */
		if (!isfinite(v) || v < f->lo || v > f->hi || v != floor(v))
			return lmi_fail(LM_ERR_ARG, "kernels.latency: %s = %g must be %s in %g..%g", f->name, v,
			                f->what, f->lo, f->hi);
	}
	pthread_mutex_lock(&lock);
	current = c;
	pthread_mutex_unlock(&lock);
	return LM_OK;
}

void lm_kernel_latency_reset(void)
{
	pthread_mutex_lock(&lock);
	current = defaults;
	pthread_mutex_unlock(&lock);
}

char *lm_kernel_latency_describe(const lm_latency_model *m, char *buf, size_t cap)
{
	snprintf(buf, cap,
	         "modelled cycles: per barrier phase, the longest of the slowest warp's chain of "
	         "latencies (a warp waits for each load: global %g, shared %g, constant %g per distinct "
	         "address; an add or branch %g; a store costs only its issue), the SM's issue cycles "
	         "(%g per warp instruction and per replay: a further 128-byte line of a global access, "
	         "a further wavefront of a shared bank conflict over 32 banks) and its memory pipe (%g "
	         "per 32-byte sector), plus %g for a barrier; divergent paths run one after the other; "
	         "an atomic waits behind every earlier same-address atomic of its block and phase; "
	         "occupancy: up to %g warps, %g blocks and %g bytes of shared memory resident per SM, a "
	         "wave of resident blocks taking its slowest block's latency or its summed issue or "
	         "sector cycles, whichever is longer; %g SM%s. Ignores: caches (every sector comes from "
	         "memory), instruction-level parallelism within a warp, registers, scheduling policy, "
	         "DRAM pages, clocks",
	         m->global, m->shared, m->constant, m->arith, m->issue, m->sector, m->barrier,
	         m->warps_per_sm, m->blocks_per_sm, m->shared_per_sm, m->sms, m->sms == 1 ? "" : "s");
	return buf;
}
