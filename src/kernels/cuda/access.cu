/*
 * access.cu — the memory-access demos of ../body/access.h compiled by nvcc, and their host code:
 * the launch of ../body/access_plan.h (as the emulator's, ../access_emu.c, makes it), timed with
 * CUDA events. Each timed run is one launch (y is written whole).
 * Read next: ../body/access_plan.h, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/access.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_ACCESS_KERNELS, lmk_access_args)

template <typename E>
static int access(const lmi_access_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	E *dx = NULL, *dy = NULL;
	size_t sx = (size_t)(c->rows * c->cols) * sizeof(E);
	size_t sy = (size_t)lmk_access_out_len(c) * sizeof(E);
	lmk_launch l = lmk_access_launch(c);
	lmk_access_args a;
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_LAUNCH(&l, &a, E);
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &dx, c->x, sx));
	CUDA_TRY(lmk_device(&b, &dy, NULL, sy));
	a = lmk_access_args_of(c, dx, dy);
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->y, dy, sy, cudaMemcpyDeviceToHost));
	t->launches = 1;
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_access(const lmi_access_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return access<decltype(e)>(c, t, msg, msg_cap); });
}
