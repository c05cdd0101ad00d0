/*
 * test_optable.c — every op-table row against its reference, in every dtype the row takes, in
 * every layout (contiguous, transposed, narrowed, expanded), on random shapes. One cmocka test per
 * row and device table (src/backend/backend.h): the CPU's, CUDA's when a GPU is usable and
 * OpenCL's when an OpenCL device is (PoCL runs it on the CPU), whose
 * rows also check placement, gradients against the CPU's and mixed-device errors (ot_run_rows,
 * tests/optable_run.c); without a GPU (or OpenCL) those rows are skipped with the reason printed. A
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
	const lmi_backend *bes[3] = {&lmi_cpu_backend};
	int nbe = 1;
	if ((bes[nbe] = lmi_backend_open("optable", LM_CUDA)) != NULL) nbe++;
	else printf("op table: the CUDA rows are skipped: %s\n", lm_last_error());
	if ((bes[nbe] = lmi_backend_open("optable", LM_OPENCL)) != NULL) nbe++;
	else printf("op table: the OpenCL rows are skipped: %s\n", lm_last_error());
	printf("op table: %d rows on", n);
	for (int i = 0; i < nbe; i++) printf(" %s", bes[i]->name);
	printf("\n");
	return ot_run_rows("optable", nbe, bes, NULL);
}
