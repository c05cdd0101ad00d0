/*
 * test_optable.c — every op-table row against its reference, in every dtype the row takes, in
 * every layout (contiguous, transposed, narrowed, expanded), on random shapes. One cmocka test per
 * row and device table (src/backend/backend.h): the CPU's, and CUDA's when a GPU is usable, whose
 * rows also check placement, gradients against the CPU's and mixed-device errors (ot_run_rows,
 * tests/optable_run.c); without a GPU the CUDA rows are skipped with the reason printed. A
 * failure prints the case (op, dtype, layout, input shapes, parameters) and the first
 * mismatching element. Each test also checks that no tensor outlives it.
 */
#include <stdio.h>

#include "optable.h"
#include "testutil.h"

int main(void)
{
	int n;
	ot_all(&n);
	const lmi_backend *bes[2] = {&lmi_cpu_backend, lmi_backend_open("optable", LM_CUDA)};
	int nbe = bes[1] ? 2 : 1;
	printf("op table: %d rows on %s%s\n", n, nbe == 2 ? "cpu and " : "cpu",
	       nbe == 2 ? bes[1]->name : "");
	if (nbe == 1) printf("op table: the CUDA rows are skipped: %s\n", lm_last_error());
	return ot_run_rows("optable", nbe, bes, NULL);
}
