/*
 * spmv.cu — the SpMV kernels of ../body/spmv.h compiled by nvcc, and their host code: the launch
 * of ../body/spmv_plan.h (as the emulator's, ../spmv_emu.c, makes it), timed with CUDA events.
 *
 * Design: the format's arrays (the plan's list) and x are copied once; each timed run is one
 * launch (for COO with the zeroing of y before it: the atomics add into y, so zeroing is part of
 * the run).
 * Read next: ../body/spmv_plan.h, matmul.cu, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/spmv.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_SPMV_KERNELS, lmk_spmv_args)

template <typename E>
static int spmv(const lmi_spmv_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	lmk_spmv_args a = {};
	lmk_spmv_array list[LMK_SPMV_MAX_ARRAYS];
	int n = lmk_spmv_arrays(c, &a, list);
	size_t ybytes = (size_t)c->m * sizeof(E);
	lmk_launch l = lmk_spmv_launch(c);
	auto run = [&]() -> int {
		int rc = 0;
		if (c->format == LMI_SPMV_COO) CUDA_TRY(cudaMemsetAsync(a.y, 0, ybytes));
		CUDA_LAUNCH(&l, &a, E);
	out:
		return rc;
	};
	for (int i = 0; i < n; i++) { /* y last, not copied in */
		void *d = NULL;
		size_t es = list[i].index ? sizeof(int) : sizeof(E);
		CUDA_TRY(lmk_device(&b, &d, i < n - 1 ? list[i].host : NULL, (size_t)list[i].length * es));
		*list[i].arg = d;
	}
	CUDA_TRY(cudaMemset(a.y, 0, ybytes));
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->y, a.y, ybytes, cudaMemcpyDeviceToHost));
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_spmv(const lmi_spmv_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return spmv<decltype(e)>(c, t, msg, msg_cap); });
}
