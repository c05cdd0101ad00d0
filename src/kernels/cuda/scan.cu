/*
 * scan.cu — the scans of ../body/scan.h compiled by nvcc, and their host code: the launches of
 * ../body/scan_plan.h (as the emulator's host code, ../scan_emu.c, makes them), timed with CUDA
 * events.
 *
 * Design: device buffers for X, Y and every level's block sums are allocated up front; a run is
 * the plan's launches in order (the block scans of every level, then scan_add_sums back up).
 * Copies to and from the GPU are outside the timed region (cuda_host.h: lmk_time).
 * Read next: ../body/scan_plan.h, reduce.cu, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/scan.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_SCAN_KERNELS, lmk_scan_args)

template <typename E>
static int scan(const lmi_scan_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	lmk_scan_plan p;
	E *X = NULL, *Y = NULL;
	LMK_PTR sums[LMK_SCAN_MAX_LEVELS];
	size_t bytes = (size_t)c->n * sizeof(E);
	lmk_scan_plan_make(&p, c, sizeof(E));
	auto run = [&]() -> int {
		int rc = 0;
		for (int i = 0; i < p.nlaunches; i++) {
			const lmk_launch *l = &p.launch[i];
			lmk_scan_args a = lmk_scan_args_of(&p, l, c, X, Y, sums);
			CUDA_LAUNCH(l, &a, E);
		}
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &X, c->x, bytes));
	CUDA_TRY(lmk_device(&b, &Y, NULL, bytes));
	for (int l = 0; l + 1 < p.levels; l++) {
		E *S = NULL;
		CUDA_TRY(lmk_device(&b, &S, NULL, p.sections[l] * sizeof(E)));
		sums[l] = S;
	}
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->y, Y, bytes, cudaMemcpyDeviceToHost));
	t->launches = p.nlaunches;
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_scan(const lmi_scan_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return scan<decltype(e)>(c, t, msg, msg_cap); });
}
