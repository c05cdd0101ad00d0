/*
 * latency.c — the latency model of the emulator's modelled cycles (stated in docs/trace.md).
 *
 * One process-wide model, read once at the start of every emulated call (the trace keeps a copy),
 * set from C or from Lua's kernels.latency{...}. A mutex keeps a reader from seeing half a write.
 * Read next: simt_model.c (where the numbers are used).
 */
#include <math.h>
#include <pthread.h>

#include "core/lmi.h"
#include "lumen/kernels.h"

static const lm_latency_model defaults = {
	.global = 400, .shared = 20, .constant = 4, .arith = 1, .barrier = 20, .sms = 1,
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static lm_latency_model current = {
	.global = 400, .shared = 20, .constant = 4, .arith = 1, .barrier = 20, .sms = 1,
};

void lm_kernel_latency_default(lm_latency_model *out) { *out = defaults; }

void lm_kernel_latency_get(lm_latency_model *out)
{
	pthread_mutex_lock(&lock);
	*out = current;
	pthread_mutex_unlock(&lock);
}

static lm_status check(const char *field, double v, double hi)
{
	if (!isfinite(v) || v < 0 || v > hi || v != floor(v))
		return lmi_fail(LM_ERR_ARG, "kernels.latency: %s = %g must be a whole number of cycles in 0..%g",
		                field, v, hi);
	return LM_OK;
}

lm_status lm_kernel_latency_set(const lm_latency_model *m)
{
	const double hi = 1e9; /* keeps every modelled count well inside uint64 */
	lm_status st;
	if ((st = check("global", m->global, hi)) || (st = check("shared", m->shared, hi)) ||
	    (st = check("constant", m->constant, hi)) || (st = check("arith", m->arith, hi)) ||
	    (st = check("barrier", m->barrier, hi)))
		return st;
	if (!(m->sms >= 1 && m->sms <= 65536 && m->sms == floor(m->sms)))
		return lmi_fail(LM_ERR_ARG, "kernels.latency: sms = %g must be an integer in 1..65536",
		                m->sms);
	pthread_mutex_lock(&lock);
	current = *m;
	pthread_mutex_unlock(&lock);
	return LM_OK;
}

void lm_kernel_latency_reset(void)
{
	pthread_mutex_lock(&lock);
	current = defaults;
	pthread_mutex_unlock(&lock);
}
