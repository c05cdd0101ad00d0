/*
 * reduce.cu — the reductions of ../body/reduce.h compiled by nvcc, and their host code: the
 * launch of ../body/reduce_plan.h (as the emulator's host code, ../reduce_emu.c, makes it),
 * timed with CUDA events.
 *
 * Design: the in-place versions (naive, convergent) destroy their input, so every run starts from
 * a fresh device-to-device copy of the zero-padded input, made before the start event (the
 * preparation of lmk_time); zeroing the output is part of the timed run (the atomics add into it).
 * Read next: ../body/reduce_plan.h, scan.cu, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/reduce.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_REDUCE_KERNELS, lmk_reduce_args)

template <typename E>
static int reduce(const lmi_reduce_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	lmk_reduce_plan p;
	lmk_reduce_plan_make(&p, c, sizeof(E));
	size_t len = (size_t)p.len * sizeof(E);
	E *pristine = NULL, *input = NULL, *output = NULL;
	lmk_reduce_args a;
	auto prepare = [&]() -> int {
		int rc = 0;
		if (p.in_place) CUDA_TRY(cudaMemcpy(input, pristine, len, cudaMemcpyDeviceToDevice));
	out:
		return rc;
	};
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_TRY(cudaMemsetAsync(output, 0, sizeof(E)));
		CUDA_LAUNCH(&p.launch, &a, E);
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &input, p.in_place ? NULL : c->x, len));
	CUDA_TRY(lmk_device(&b, &output, NULL, sizeof(E)));
	if (p.in_place) {
		CUDA_TRY(lmk_device(&b, &pristine, NULL, len));
		CUDA_TRY(cudaMemset(pristine, 0, len));
		CUDA_TRY(cudaMemcpy(pristine, c->x, (size_t)c->n * sizeof(E), cudaMemcpyHostToDevice));
	}
	a = {input, output, (unsigned)c->n, c->coarsen};
	if ((rc = lmk_time(t, run, prepare, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->y, output, sizeof(E), cudaMemcpyDeviceToHost));
	t->launches = 1;
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_reduce(const lmi_reduce_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return reduce<decltype(e)>(c, t, msg, msg_cap); });
}
