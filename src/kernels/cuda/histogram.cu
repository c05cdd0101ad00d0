/*
 * histogram.cu — the histograms of ../body/histogram.h compiled by nvcc, and their host code: the
 * launch of ../body/histogram_plan.h (as the emulator's host code, ../histogram_emu.c, makes it),
 * with real atomics, timed with CUDA events.
 *
 * Design: the input is copied once; every timed run zeroes the global histogram (part of the run:
 * the atomics add into it) and launches the kernel; the last run's counts are copied back.
 * Read next: ../body/histogram_plan.h, reduce.cu, cuda_host.h.
 */
#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_T0 unsigned char
#define LMK_T1 int
#define LMK_SFX0 _u8
#define LMK_SFX1 _i32
#define LMK_BODY "kernels/body/histogram.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_HIST_KERNELS, lmk_hist_args)

template <typename E>
static int histogram(const lmi_hist_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0;
	lmk_buffers b = {};
	E *data = NULL;
	unsigned *histo = NULL;
	size_t hbytes = c->bins * sizeof(unsigned);
	lmk_launch l = lmk_hist_launch(c);
	lmk_hist_args a;
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_TRY(cudaMemsetAsync(histo, 0, hbytes));
		CUDA_LAUNCH(&l, &a, E);
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &data, c->data, (size_t)c->n * sizeof(E)));
	CUDA_TRY(lmk_device(&b, &histo, NULL, hbytes));
	a = lmk_hist_args_of(c, data, histo);
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->histo, histo, hbytes, cudaMemcpyDeviceToHost));
out:
	lmk_free(&b);
	return rc;
}

int lmi_cuda_histogram(const lmi_hist_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return c->is_u8 ? histogram<unsigned char>(c, t, msg, msg_cap)
	                : histogram<int>(c, t, msg, msg_cap);
}
