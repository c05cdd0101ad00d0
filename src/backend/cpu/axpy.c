/*
 * axpy.c — CPU loop of out = a + alpha * b, driven by lmi_iter_run_out (broadcasting, OpenMP
 * chunks, large outputs streamed), with the 1-D kernel of the path in use (simd.h; the kernels,
 * one per dtype with the dense and broadcast layouts specialised, are in ewise_loops.h).
 * Read next: ../../ops/axpy.c.
 */
#include "backend/cpu/axpy.h"
#include "backend/cpu/simd.h"

lm_status lmi_cpu_add_scaled(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double alpha)
{
	LM_ASSERT(a->dtype == out->dtype && b->dtype == out->dtype);
	lmi_axpy_ctx c = {alpha, 0};
	if (!lm_dtype_is_float(out->dtype)) /* integral and in range: checked by the op */
		c.i = alpha < -9.2e18 ? INT64_MIN : alpha > 9.2e18 ? INT64_MAX : (int64_t)alpha;
	lmi_iter it;
	const lm_tensor *ops[3] = {out, a, b};
	lmi_iter_init(&it, 3, ops, out->ndim, out->shape);
	/* an in-place update (out is a: a parameter, read again soon) stays in the cache */
	size_t es = out->storage == a->storage ? 0 : lmi_elem_size(out->dtype);
	return lmi_iter_run_out(&it, lmi_simd()->axpy[out->dtype], &c, es);
}
