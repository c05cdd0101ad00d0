/*
 * divergence.cu — the divergence demo of ../body/divergence.h compiled by nvcc, and its host code:
 * the launch of ../body/divergence_plan.h (as the emulator's, ../divergence_emu.c, makes it),
 * timed with CUDA events. A GPU reports no lanes, only the time: compare the patterns' times
 * (even-odd against warp or none).
 * Read next: ../body/divergence_plan.h, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#include "kernels/body/divergence.h"

#define LMK_SFX0 /* one type: no suffix */
LMK_CUDA_KERNEL(LMK_DIVERGENCE_KERNELS, lmk_divergence_args, float)

int lmi_cuda_divergence(const lmi_divergence_call *c, lmi_cuda_timing *t, char *msg,
                        size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	float *x = NULL, *y = NULL;
	size_t bytes = (size_t)c->warps * 32 * sizeof(float);
	lmk_launch l = lmk_divergence_launch(c);
	lmk_divergence_args a;
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_LAUNCH(&l, &a, float);
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &x, c->x, bytes));
	CUDA_TRY(lmk_device(&b, &y, NULL, bytes));
	a = {x, y, c->pattern};
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->y, y, bytes, cudaMemcpyDeviceToHost));
out:
	lmk_free(&b);
	return rc;
}
