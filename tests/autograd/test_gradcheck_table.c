/*
 * test_gradcheck_table.c — gradcheck over every differentiable op-table row: float64 inputs in
 * every layout (contiguous, transposed, narrowed, expanded), random shapes with broadcasting,
 * size-0 and size-1 dims. One cmocka test per row.
 *
 * Inputs are moved off kinks and ties (gc_spread; clamp bounds and maximum/minimum pairs kept
 * apart), cases whose forward is not finite are drawn again, and large cases are drawn again so
 * the numeric pass stays cheap. Every test also checks that no tensor outlives it.
 * Read next: ../gradcheck_util.h, test_backward.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gradcheck_util.h"
#include "testutil.h"

#define TRIALS 10
#define MAX_NUMEL 600  /* all inputs together */
#define MAX_CHECKS 32  /* elements per input checked by central differences */

static bool named(const ot_op *op, const char *name) { return strcmp(op->name, name) == 0; }

/* Draws a case that gradcheck can judge: small, smooth around the point, finite. Returns false
 * when none was found (then the case is empty). */
static bool draw(const ot_op *op, ot_rng *r, ot_layout l, ot_case *c)
{
	static const double us[OT_MAX_IN] = {0.3, 0.2, 0.35, 0.15};
	for (int attempt = 0; attempt < 200; attempt++) {
		*c = (ot_case){0};
		op->gen(op, r, LM_FLOAT64, l, c);
		if (named(op, "to_dtype")) c->p[0] = LM_FLOAT64; /* float32 cannot pass eps = 1e-6 */
		int64_t total = 0;
		for (int k = 0; k < c->nin; k++) total += c->in[k] ? lm_tensor_numel(c->in[k]) : 0;
		bool ok = total <= MAX_NUMEL;
		for (int k = 0; ok && k < c->nin; k++)
			if (c->in[k] && lm_tensor_dtype(c->in[k]) == LM_FLOAT64)
				gc_spread(r, c->in[k], op->lo, op->hi, us[k]);
		if (ok && named(op, "clamp")) /* away from the bounds */
			ok = gc_min_dist(c->in[0], c->p[0]) > 1e-3 && gc_min_dist(c->in[0], c->p[1]) > 1e-3;
		if (ok && (named(op, "maximum") || named(op, "minimum")))
			ok = gc_min_gap(c->in[0], c->in[1]) > 1e-3;
		if (ok) {
			bool was = lm_set_grad_enabled(false);
			lm_tensor *out = op->run(c);
			lm_set_grad_enabled(was);
			if (!out) fail_msg("%s: the forward failed: %s", c->desc, lm_last_error());
			ok = gc_all_finite(out);
			/* std at 0 has no derivative */
			if (ok && named(op, "std")) ok = gc_min_value(out) > 1e-3;
			lm_tensor_release(out);
		}
		if (ok) {
			ot_describe(c, op, LM_FLOAT64, l);
			return true;
		}
		ot_case_free(c);
	}
	return false;
}

static void run_row(void **state)
{
	const ot_op *op = *state;
	lm_memory_stats before, after;
	lm_memory_stats_get(&before);
	int failures = 0, cases = 0;
	ot_rng r = {0xabc + (uint64_t)op->fn * 104729u + (uint64_t)op->nin};
	for (int l = 0; l < OT_LAYOUT_COUNT; l++)
		for (int t = 0; t < TRIALS; t++) {
			ot_case c;
			if (!draw(op, &r, (ot_layout)l, &c)) fail_msg("%s: no usable case drawn", op->name);
			for (int k = 0; k < c.nin; k++)
				if (c.in[k] && lm_dtype_is_float(lm_tensor_dtype(c.in[k])))
					assert_int_equal(lm_tensor_requires_grad_(c.in[k], true), LM_OK);
			lm_gradcheck_opts o = {.max_elements = MAX_CHECKS};
			lm_gradcheck_report rep;
			lm_status s = lm_gradcheck(gc_run_case, &c, c.nin, c.in, &o, &rep);
			if (s) fail_msg("%s: gradcheck failed to run: %s", c.desc, lm_last_error());
			if (!rep.ok) {
				if (failures < 5) print_message("  %s: %s\n", c.desc, rep.message);
				failures++;
			}
			cases++;
			if (getenv("GC_VERBOSE")) print_message("  %s: %s\n", c.desc, rep.message);
			ot_case_free(&c);
		}
	lm_memory_stats_get(&after);
	if (failures) fail_msg("%s: %d of %d cases have wrong gradients", op->name, failures, cases);
	assert_int_equal(after.live_tensors, before.live_tensors);
	assert_int_equal(after.live_bytes, before.live_bytes);
}

int main(void)
{
	int n, m = 0;
	const ot_op *ops = ot_all(&n);
	struct CMUnitTest *tests = calloc((size_t)n, sizeof *tests);
	for (int i = 0; i < n; i++) {
		if (!ops[i].differentiable || !(ops[i].dtypes & (1u << LM_FLOAT64))) continue;
		tests[m].name = ops[i].name;
		tests[m].test_func = run_row;
		tests[m].initial_state = (void *)&ops[i];
		m++;
	}
	int rc = _cmocka_run_group_tests("gradcheck_table", tests, (size_t)m, NULL, NULL);
	free(tests);
	return rc;
}
