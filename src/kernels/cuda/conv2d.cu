/*
 * conv2d.cu — the 2-D convolutions of ../body/conv2d.h compiled by nvcc, and their host code: the
 * launch of ../body/conv2d_plan.h (as the emulator's, ../conv2d_emu.c, makes it), the mask copied
 * into __constant__ memory with cudaMemcpyToSymbol, timed with CUDA events.
 *
 * Design: the image (and, for the naive version, the mask) are copied once; each timed run is one
 * launch. A mutex keeps the constant mask of one call from being overwritten by another thread's
 * call before its launches are done.
 * Read next: ../body/conv2d_plan.h, matmul.cu, cuda_host.h.
 */
#include <pthread.h>

#include "kernels/body/simt_macros.h"
#include "kernels/cuda/cuda_host.h"

#define LMK_BODY "kernels/body/conv2d.h"
#include "kernels/body/both_types.h"

LMK_CUDA_KERNELS(LMK_CONV_KERNELS, lmk_conv_args)

static pthread_mutex_t constant_lock = PTHREAD_MUTEX_INITIALIZER;

/* The mask into the __constant__ array of its element type. */
template <typename E> static cudaError_t to_constant(const void *mask, size_t bytes)
{
	return sizeof(E) == sizeof(double) ? cudaMemcpyToSymbol(F_c_f64, mask, bytes)
	                                   : cudaMemcpyToSymbol(F_c_f32, mask, bytes);
}

template <typename E>
static int conv2d(const lmi_conv_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	int rc = 0, locked = 0;
	lmk_buffers b = {};
	E *n = NULL, *f = NULL, *p = NULL;
	size_t si = (size_t)(c->h * c->w) * sizeof(E), sm = (size_t)(c->mh * c->mw) * sizeof(E);
	lmk_launch l = lmk_conv_launch(c, sizeof(E));
	lmk_conv_args a;
	auto run = [&]() -> int {
		int rc = 0;
		CUDA_LAUNCH(&l, &a, E);
	out:
		return rc;
	};
	CUDA_TRY(lmk_device(&b, &n, c->img, si));
	CUDA_TRY(lmk_device(&b, &f, c->mask, sm));
	CUDA_TRY(lmk_device(&b, &p, NULL, si));
	a = lmk_conv_args_of(c, n, f, p);
	pthread_mutex_lock(&constant_lock);
	locked = 1;
	if (c->algo != LMI_CONV_NAIVE) CUDA_TRY(to_constant<E>(c->mask, sm));
	if ((rc = lmk_time(t, run, msg, msg_cap)) != 0) goto out;
	CUDA_TRY(cudaMemcpy(c->out, p, si, cudaMemcpyDeviceToHost));
out:
	if (locked) pthread_mutex_unlock(&constant_lock);
	lmk_free(&b);
	return rc;
}

int lmi_cuda_conv2d(const lmi_conv_call *c, lmi_cuda_timing *t, char *msg, size_t msg_cap)
{
	return lmk_by_dtype(c->is_double, [&](auto e) { return conv2d<decltype(e)>(c, t, msg, msg_cap); });
}
