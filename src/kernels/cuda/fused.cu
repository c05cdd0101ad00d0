/*
 * fused.cu — a compiled program's fused group on a real GPU: the kernel of ../body/fused.h
 * compiled by nvcc (one thread per element, the program a parameter) and its host code, the
 * launch of ../body/fused_plan.h (as the emulator's, ../fused_emu.c, makes it), timed with CUDA
 * events. Each operand is copied to the device whole; the results are copied back.
 * Read next: ../body/fused_plan.h, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/fused.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_FUSED_KERNELS, lmk_fused_args)

template <typename E>
static int fused(const lmi_fused_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	E *d[LMK_FUSED_OPS] = {};
	int nops = c->prog.nout + c->prog.nin;
	lmk_launch l = lmk_fused_launch(c);
	lmk_fused_args a;
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_LAUNCH(&l, &a, E);
	out:
		return rc;
	};
	a.prog = c->prog;
	for (int j = 0; j < nops; j++)
		CUDA_TRY(lmk_device(&b, &d[j], j < c->prog.nout ? NULL : c->op[j], (size_t)c->len[j] * sizeof(E)));
	for (int j = 0; j < LMK_FUSED_OPS; j++) a.a[j] = j < nops ? d[j] : NULL;
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	for (int j = 0; j < c->prog.nout; j++)
		CUDA_TRY(cudaMemcpy(c->op[j], d[j], (size_t)c->len[j] * sizeof(E), cudaMemcpyDeviceToHost));
	t->launches = 1;
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_fused(const lmi_fused_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return fused<decltype(e)>(c, t, msg, msg_cap); });
}
