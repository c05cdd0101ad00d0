/*
 * optable_run.c — runs the op table on device tables (optable.h, ot_run_rows): one cmocka test
 * per row and table. On the CPU a row's cases are compared with the reference. On another device
 * each case's inputs are placed there with their very layout (strides, offset, broadcast dims:
 * the whole storage crosses), and the op must put its result on that device, agree with the
 * reference, give the gradients the CPU gives (float rows: d sum(op(x)) / dx, computed on both
 * devices) and refuse inputs split between the device and the CPU with an error naming both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optable.h"
#include "testutil.h"

typedef struct row_state {
	const ot_op *op;
	const lmi_backend *be;
	const char *(*after_case)(void);
	char name[96];
} row_state;

#define TRIALS 8

lm_tensor *ot_place(const lm_tensor *t, lm_device dev)
{
	if (!t || t->storage->device == dev) return t ? lm_tensor_retain((lm_tensor *)t) : NULL;
	const lmi_device_ops *ops = lmi_device_ops_for(dev);
	if (!ops)
		return lmi_fail_null(LM_ERR_DEVICE, "ot_place: no %s device", lm_device_name(dev));
	lm_storage *s = lmi_storage_new(t->storage->nbytes, dev);
	if (!s) return NULL;
	lm_status e = t->storage->nbytes ? ops->memcpy(s->data, t->storage->data,
	                                               t->storage->nbytes, LMI_TO_DEVICE, false)
	                                 : LM_OK;
	lm_tensor *d =
	    e ? NULL : lmi_tensor_wrap(s, t->dtype, t->ndim, t->shape, t->stride, t->offset);
	lmi_storage_release(s);
	return d;
}

/* A copy of case c with input k on dev for each k in mask (the rest shared, +1). */
static bool place_case(const ot_case *c, ot_case *d, lm_device dev, unsigned mask)
{
	*d = *c;
	for (int k = 0; k < OT_MAX_IN; k++) d->in[k] = NULL;
	for (int k = 0; k < OT_MAX_IN; k++) {
		if (!c->in[k]) continue;
		d->in[k] = (mask >> k) & 1 ? ot_place(c->in[k], dev) : lm_tensor_retain(c->in[k]);
		if (!d->in[k]) return false;
	}
	return true;
}

/* The forward on the device: placement and values. Returns false with why set. */
static bool check_forward(const row_state *rs, const ot_case *c, const lm_tensor *want, double rtol,
                          double atol, char *why, size_t cap)
{
	ot_case d;
	lm_device dev = rs->be->device;
	bool ok = place_case(c, &d, dev, ~0u);
	lm_tensor *got = ok ? rs->op->run(&d) : NULL, *host = NULL;
	if (!ok)
		snprintf(why, cap, "placing the inputs failed: %s", lm_last_error());
	else if (!got)
		snprintf(why, cap, "failed on %s: %s", rs->be->name, lm_last_error()), ok = false;
	else if (lm_tensor_device(got) != dev)
		snprintf(why, cap, "the result is on %s", lm_device_name(lm_tensor_device(got))),
		    ok = false;
	else if (!(host = lm_to_device(got, LM_CPU)))
		snprintf(why, cap, "copying the result back failed: %s", lm_last_error()),
		    ok = false;
	else
		ok = ot_close(host, want, rtol, atol, why, cap);
	lm_tensor_release(got);
	lm_tensor_release(host);
	ot_case_free(&d);
	return ok;
}

/* The float inputs' gradients of sum(op(inputs)) on case c (on whatever device its inputs are):
 * g[k] (+1, on the CPU) or NULL. False when the op or backward fails. */
static bool grads_of(const ot_op *op, ot_case *c, lm_tensor **g)
{
	for (int k = 0; k < OT_MAX_IN; k++) {
		g[k] = NULL;
		if (c->in[k] && lm_dtype_is_float(lm_tensor_dtype(c->in[k])))
			lm_tensor_requires_grad_(c->in[k], true);
	}
	lm_tensor *y = op->run(c);
	bool diff = y && lm_tensor_requires_grad(y) && lm_dtype_is_float(lm_tensor_dtype(y));
	lm_tensor *s = diff ? lm_sum(y, LM_DIM_ALL, false) : NULL;
	bool ok = y && (!diff || (s && lm_backward(s, NULL, false) == LM_OK));
	for (int k = 0; ok && k < OT_MAX_IN; k++) {
		lm_tensor *gk = c->in[k] ? lm_tensor_grad(c->in[k]) : NULL;
		if (gk && !(g[k] = lm_to_device(gk, LM_CPU))) ok = false;
	}
	lm_tensor_release(y);
	lm_tensor_release(s);
	return ok;
}

/* Gradients on the device against those on the CPU, and that they stay on the device. */
static bool check_grads(const row_state *rs, const ot_case *c, double rtol, double atol, char *why,
                        size_t cap)
{
	ot_case h, d;
	lm_tensor *gh[OT_MAX_IN] = {0}, *gd[OT_MAX_IN] = {0};
	bool ok = place_case(c, &h, LM_CPU, ~0u) && place_case(c, &d, rs->be->device, ~0u);
	/* the CPU's own gradient, on fresh leaves (detached from c's) */
	for (int k = 0; ok && k < OT_MAX_IN; k++)
		if (h.in[k]) {
			lm_tensor *t = lm_detach(h.in[k]);
			lm_tensor_release(h.in[k]);
			h.in[k] = t;
		}
	if (ok && !grads_of(rs->op, &h, gh)) {
		ok = true; /* not differentiable here (the CPU refuses too): nothing to compare */
		goto done;
	}
	if (ok && !grads_of(rs->op, &d, gd)) {
		snprintf(why, cap, "backward failed on %s: %s", rs->be->name, lm_last_error());
		ok = false;
	}
	for (int k = 0; ok && k < OT_MAX_IN; k++) {
		if (!gh[k] != !gd[k]) {
			snprintf(why, cap, "input %d: a gradient on one device only", k + 1);
			ok = false;
		} else if (gh[k]) {
			lm_tensor *raw = lm_tensor_grad(d.in[k]);
			if (raw && lm_tensor_device(raw) != rs->be->device) {
				snprintf(why, cap, "input %d: the gradient is on %s", k + 1,
				         lm_device_name(lm_tensor_device(raw)));
				ok = false;
			} else if (!ot_close_grad(gd[k], gh[k], rtol, atol, why, cap)) {
				char tmp[200];
				snprintf(tmp, sizeof tmp, "%s", why);
				snprintf(why, cap, "gradient of input %d: %s", k + 1, tmp);
				ok = false;
			}
		}
	}
done:
	for (int k = 0; k < OT_MAX_IN; k++) {
		lm_tensor_release(gh[k]);
		lm_tensor_release(gd[k]);
	}
	ot_case_free(&h);
	ot_case_free(&d);
	return ok;
}

/* With input 1 on the device and the others on the CPU, the op must fail naming both devices. */
static bool check_mixed(const row_state *rs, const ot_case *c, char *why, size_t cap)
{
	int others = 0;
	for (int k = 1; k < OT_MAX_IN; k++) others += c->in[k] != NULL;
	if (!others || !c->in[0]) return true;
	ot_case d;
	bool ok = place_case(c, &d, rs->be->device, 1u);
	lm_tensor *y = ok ? rs->op->run(&d) : NULL;
	const char *msg = lm_last_error(), *dev = lm_device_name(rs->be->device);
	if (ok && y) {
		snprintf(why, cap, "inputs on %s and cpu were accepted", dev);
		ok = false;
	} else if (ok && (lm_last_status() != LM_ERR_DEVICE || !strstr(msg, dev) ||
	                  !strstr(msg, "cpu"))) {
		snprintf(why, cap, "mixed devices: the error does not name both (%s)", msg);
		ok = false;
	}
	lm_tensor_release(y);
	ot_case_free(&d);
	return ok;
}

static void run_row(void **state)
{
	const row_state *rs = *state;
	const ot_op *op = rs->op;
	bool cpu = rs->be->device == LM_CPU;
	/* the CPU's table serves the CPU during the row (a test may have registered another) */
	const lmi_backend *prev = cpu ? lmi_backend_register(rs->be) : NULL;
	lm_memory_stats before, after;
	lm_memory_stats_get(&before);
	int failures = 0, cases = 0, missing = 0;
	char missing_why[256] = "";
	ot_rng r = {0x1234 + (uint64_t)op->fn * 7919u + (uint64_t)op->nin};
	for (int dt = 0; dt < LM_DTYPE_COUNT; dt++) {
		if (!(op->dtypes & (1u << dt))) continue;
		if (!cpu && (int)lm_dtype_traits_of((lm_dtype)dt)->compute_as != dt) continue; /* CPU dtypes */
		for (int l = 0; l < OT_LAYOUT_COUNT; l++)
			for (int t = 0; t < TRIALS; t++) {
				ot_case c = {0};
				op->gen(op, &r, (lm_dtype)dt, (ot_layout)l, &c);
				lm_tensor *want = op->ref(&c);
				char why[256] = "";
				if (!want)
					fail_msg("%s: the reference failed: %s", c.desc,
					         lm_last_error());
				/* tolerance by the result's dtype: float32 rounding, else
				 * near-exact (another device sums in its own order) */
				lm_dtype wdt = lm_tensor_dtype(want);
				bool f32 = wdt == LM_FLOAT32;
				double rtol = f32   ? (op->rtol32 ? op->rtol32 : 1e-5)
				              : cpu ? 1e-10
				                    : 1e-9;
				double atol = f32   ? (op->atol32 ? op->atol32 : 1e-6)
				              : cpu ? 1e-10
				                    : 1e-9;
				/* a 16-bit result: computed in float32 and rounded once, against the reference
				 * rounded once from double: one unit in the last place apart at most (2^-10
				 * relative for float16, 2^-7 for bfloat16), beside the row's float32 tolerance */
				if (wdt == LM_FLOAT16) rtol = 1.0 / 1024 + (op->rtol32 ? op->rtol32 : 1e-5), atol = 1e-4 + (op->atol32 ? op->atol32 : 0);
				if (wdt == LM_BFLOAT16) rtol = 1.0 / 128 + (op->rtol32 ? op->rtol32 : 1e-5), atol = 1e-3 + (op->atol32 ? op->atol32 : 0);
				bool ok;
				if (cpu) {
					lm_tensor *got = op->run(&c);
					ok = ot_close(got, want, rtol, atol, why, sizeof why);
					lm_tensor_release(got);
				} else {
					ok = check_forward(rs, &c, want, rtol, atol, why,
					                   sizeof why) &&
					     (!op->differentiable ||
					      !lm_dtype_is_float((lm_dtype)dt) ||
					      check_grads(rs, &c, f32 ? 10 * rtol : rtol,
					                  f32 ? 10 * atol : atol, why,
					                  sizeof why)) &&
					     check_mixed(rs, &c, why, sizeof why);
				}
				const char *late = ok && rs->after_case ? rs->after_case() : NULL;
				if (late) snprintf(why, sizeof why, "%s", late), ok = false;
				if (!ok && !cpu &&
				    strstr(why, " device has no ")) { /* absent, and says so (lmi_refuse's words) */
					if (!missing++)
						snprintf(missing_why, sizeof missing_why, "%s",
						         why);
				} else if (!ok) {
					if (failures < 5) print_message("  %s: %s\n", c.desc, why);
					failures++;
				}
				cases++;
				lm_tensor_release(want);
				ot_case_free(&c);
			}
	}
	lm_memory_stats_get(&after);
	if (cpu) lmi_backend_register(prev);
	if (failures) fail_msg("%s: %d of %d cases differ", rs->name, failures, cases);
	if (missing)
		print_message("  %s: %d of %d cases not run: %s\n", rs->name, missing, cases,
		              missing_why);
	if (missing == cases) skip();
	assert_int_equal(after.live_tensors, before.live_tensors);
	assert_int_equal(after.live_bytes, before.live_bytes);
}

int ot_run_rows(const char *group, int nbe, const lmi_backend *const *bes,
                const char *(*after_case)(void))
{
	int n;
	const ot_op *ops = ot_all(&n);
	struct CMUnitTest *tests = calloc((size_t)(n * nbe), sizeof *tests);
	row_state *states = calloc((size_t)(n * nbe), sizeof *states);
	for (int k = 0; k < nbe; k++)
		for (int i = 0; i < n; i++) {
			row_state *rs = &states[k * n + i];
			rs->op = &ops[i];
			rs->be = bes[k];
			rs->after_case = after_case;
			snprintf(rs->name, sizeof rs->name, "%s/%s", rs->be->name, ops[i].name);
			tests[k * n + i] = (struct CMUnitTest){
			    .name = rs->name, .test_func = run_row, .initial_state = rs};
		}
	int rc = _cmocka_run_group_tests(group, tests, (size_t)(n * nbe), NULL, NULL);
	free(tests);
	free(states);
	return rc;
}
