/*
 * quant.c — the quantized products, with no autograd (their inputs are codes): lm_int_mm, the
 * exact uint8 x int8 -> int32 matrix product the int8 layers run (nn.quantized, lm.quant), and
 * F.linear with a block-type weight (q8_0, q4_0: ggml's scheme, each row of the input quantized to
 * q8_0 once and every weight row's blocks against it). Both are device loops (backend.h: int_mm,
 * linear_blocks); the CPU's are in ../backend/cpu/quant_mv.c. Read next: ../../lua/lumen/quant.lua.
 */
#include "lumen/nn.h"
#include "ops.h"

lm_tensor *lm_int_mm(const lm_tensor *a, const lm_tensor *b)
{
	static const char fname[] = "int_mm";
	const lm_tensor *in[2] = {a, b};
	if (lmi_check_arg(fname, "first operand", a) || lmi_check_arg(fname, "second operand", b) ||
	    lmi_check_device(fname, 2, in))
		return NULL;
	if (a->dtype != LM_UINT8 || b->dtype != LM_INT8)
		return lmi_fail_null(LM_ERR_DTYPE, "%s: takes uint8 (M, K) times int8 (K, N), got %s times %s", fname,
		                     lm_dtype_name(a->dtype), lm_dtype_name(b->dtype));
	if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0])
		return lmi_fail_null(LM_ERR_SHAPE, "%s: shapes %s and %s do not multiply (need (M, K) and (K, N))", fname,
		                     lmi_shape_s(a), lmi_shape_s(b));
	lm_tensor *ac = lm_contiguous(a), *bc = ac ? lm_contiguous(b) : NULL;
	lm_tensor *out = bc ? lmi_empty_as(fname, a, 2, (int64_t[]){a->shape[0], b->shape[1]}, LM_INT32) : NULL;
	if (out && lmi_run(fname, LMI_OP_INT_MM, NULL, LM_UINT8, 2, (const lm_tensor *[]){ac, bc}, 1,
	                   (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(ac);
	lm_tensor_release(bc);
	return out;
}

lm_tensor *lmi_linear_blocks(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b)
{
	static const char fname[] = "linear";
	if (lmi_check_float(fname, "input", x)) return NULL;
	if (x->storage->device != w->storage->device || !lmi_backend_for(x->storage->device))
		return lmi_fail_null(LM_ERR_DEVICE, "%s: the input is on %s, the %s weight on %s", fname,
		                     lm_device_name(x->storage->device), lm_dtype_name(w->dtype),
		                     lm_device_name(w->storage->device));
	if (w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
		return lmi_fail_null(LM_ERR_SHAPE, "%s: input of shape %s does not match the %s weight %s (out, in)", fname,
		                     lmi_shape_s(x), lm_dtype_name(w->dtype), lmi_shape_s(w));
	if (lm_tensor_requires_grad(x) && lmi_grad_enabled()) {
		/* training through a frozen quantized weight (QLoRA's case): the gradient reaches x through
		 * the dequantized weight */
		lm_tensor *wf = lm_to_dtype(w, LM_FLOAT32), *y = wf ? lm_linear(x, wf, b) : NULL;
		lm_tensor_release(wf);
		return y;
	}
	int64_t K = w->shape[1], N = w->shape[0], M = K ? lm_tensor_numel(x) / K : 0;
	lm_tensor *xf = lmi_contiguous_copy(x, LM_FLOAT32);
	lm_tensor *out = xf ? lmi_empty_as(fname, x, 2, (int64_t[]){M, N}, LM_FLOAT32) : NULL;
	lm_tensor *x2 = out ? lmi_view_of(xf, 2, (int64_t[]){M, K}, (int64_t[]){K, 1}, 0) : NULL;
	lm_tensor *y = NULL;
	if (x2 && !lmi_run(fname, LMI_OP_LINEAR_BLOCKS, NULL, LM_FLOAT32, 2, (const lm_tensor *[]){x2, w}, 1,
	                   (lm_tensor *[]){out})) {
		int64_t shape[LM_MAX_DIMS];
		for (int i = 0; i < x->ndim - 1; i++) shape[i] = x->shape[i];
		shape[x->ndim - 1] = N;
		y = lm_reshape(out, x->ndim, shape);
	}
	lm_tensor_release(xf);
	lm_tensor_release(x2);
	lm_tensor_release(out);
	if (y && b) {
		lm_tensor *z = lm_add(y, b);
		lm_tensor_release(y);
		y = z;
	}
	if (y && y->dtype != x->dtype) { /* the input's float type, as linear keeps it */
		lm_tensor *z = lm_to_dtype(y, x->dtype);
		lm_tensor_release(y);
		y = z;
	}
	return y;
}
