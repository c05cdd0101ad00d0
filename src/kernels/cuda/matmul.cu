/*
 * matmul.cu — the matrix multiplications of ../body/matmul.h compiled by nvcc, and their host
 * code: the launch of ../body/matmul_plan.h (as the emulator's, ../matmul_emu.c, makes it), timed
 * with CUDA events.
 *
 * Design: A and B are copied once; each timed run is one launch (C is written whole, no zeroing
 * needed).
 * Read next: ../body/matmul_plan.h, histogram.cu, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/matmul.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_MATMUL_KERNELS, lmk_matmul_args)

template <typename E>
static int matmul(const lmi_matmul_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	E *da = NULL, *db = NULL, *dc = NULL;
	size_t sa = (size_t)(c->m * c->k) * sizeof(E), sb = (size_t)(c->k * c->n) * sizeof(E);
	size_t sc = (size_t)(c->m * c->n) * sizeof(E);
	lmk_launch l = lmk_matmul_launch(c, sizeof(E));
	lmk_matmul_args a;
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_LAUNCH(&l, &a, E);
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &da, c->a, sa));
	CUDA_TRY(lmk_device(&b, &db, c->b, sb));
	CUDA_TRY(lmk_device(&b, &dc, NULL, sc));
	a = lmk_matmul_args_of(c, da, db, dc);
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->c, dc, sc, cudaMemcpyDeviceToHost));
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_matmul(const lmi_matmul_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return matmul<decltype(e)>(c, t, msg, msg_cap); });
}
