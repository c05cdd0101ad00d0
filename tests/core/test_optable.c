/*
 * test_optable.c — every op-table row against its reference, in every dtype the row takes, in
 * every layout (contiguous, transposed, narrowed, expanded), on random shapes. One cmocka test per
 * row and registered backend (src/backend/backend.h: the device tables the ops dispatch to; each
 * row runs once per table, with that table serving its device); a failure prints the case (op,
 * dtype, layout, input shapes, parameters) and the first mismatching element. Each test also
 * checks that no tensor outlives it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "optable.h"
#include "testutil.h"

typedef struct row_state {
	const ot_op *op;
	const lmi_backend *be;
	char name[96];
} row_state;

#define TRIALS 8

static void run_row(void **state)
{
	const row_state *rs = *state;
	const ot_op *op = rs->op;
	/* the generators make their inputs on the CPU: a table of another device needs them moved
	 * there first, which no backend offers yet */
	if (rs->be->device != LM_CPU)
		fail_msg("%s: the %s backend serves %s, and the op table cannot place inputs there yet",
		         rs->name, rs->be->name, lm_device_name(rs->be->device));
	const lmi_backend *prev = lmi_backend_register(rs->be);
	lm_memory_stats before, after;
	lm_memory_stats_get(&before);
	int failures = 0, cases = 0;
	ot_rng r = {0x1234 + (uint64_t)op->fn * 7919u + (uint64_t)op->nin};
	for (int dt = 0; dt < LM_DTYPE_COUNT; dt++) {
		if (!(op->dtypes & (1u << dt))) continue;
		for (int l = 0; l < OT_LAYOUT_COUNT; l++)
			for (int t = 0; t < TRIALS; t++) {
				ot_case c = {0};
				op->gen(op, &r, (lm_dtype)dt, (ot_layout)l, &c);
				/* (optional inputs may be NULL: bias, weight of a norm) */
				lm_tensor *got = op->run(&c), *want = op->ref(&c);
				char why[256];
				if (!want) fail_msg("%s: the reference failed: %s", c.desc, lm_last_error());
				/* tolerance by the result's dtype: float32 rounding, else near-exact */
				bool f32 = lm_tensor_dtype(want) == LM_FLOAT32;
				double rtol = f32 ? (op->rtol32 ? op->rtol32 : 1e-5) : 1e-10;
				double atol = f32 ? (op->atol32 ? op->atol32 : 1e-6) : 1e-10;
				if (!ot_close(got, want, rtol, atol, why, sizeof why)) {
					if (failures < 5) print_message("  %s: %s\n", c.desc, why);
					failures++;
				}
				cases++;
				lm_tensor_release(got);
				lm_tensor_release(want);
				ot_case_free(&c);
			}
	}
	lm_memory_stats_get(&after);
	lmi_backend_register(prev);
	if (failures) fail_msg("%s: %d of %d cases differ from the reference", op->name, failures, cases);
	assert_int_equal(after.live_tensors, before.live_tensors);
	assert_int_equal(after.live_bytes, before.live_bytes);
}

int main(void)
{
	int n, nb = lmi_backend_count();
	const ot_op *ops = ot_all(&n);
	char names[256] = "";
	for (int k = 0; k < nb; k++)
		snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
		         lmi_backend_at(k)->name);
	printf("op table: %d rows on %d registered backend%s (%s)%s\n", n, nb, nb == 1 ? "" : "s", names,
	       nb == 1 ? ": each row runs once" : "");
	struct CMUnitTest *tests = calloc((size_t)(n * nb), sizeof *tests);
	row_state *states = calloc((size_t)(n * nb), sizeof *states);
	for (int k = 0; k < nb; k++)
		for (int i = 0; i < n; i++) {
			row_state *rs = &states[k * n + i];
			rs->op = &ops[i];
			rs->be = lmi_backend_at(k);
			snprintf(rs->name, sizeof rs->name, "%s/%s", rs->be->name, ops[i].name);
			tests[k * n + i] = (struct CMUnitTest){.name = rs->name, .test_func = run_row,
			                                      .initial_state = rs};
		}
	int rc = _cmocka_run_group_tests("optable", tests, (size_t)(n * nb), NULL, NULL);
	free(tests);
	free(states);
	return rc;
}
