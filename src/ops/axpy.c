/*
 * axpy.c — add_scaled: a + alpha * b in one pass (torch.add(a, b, alpha=...)), and its in-place
 * form, the update step of the optimizers (w -= lr * g is add_scaled_(w, g, -lr)).
 *
 * Written as two ops, a * 2 + b reads and writes a temporary as large as the result: 5 passes of
 * memory for 3. Lumen does not fuse expressions, so this op is the fused form to reach for.
 * Broadcasting and dtypes as for add (lm_promote_types); integer results need an integral alpha.
 * Backward: ga = sum_to(g), gb = sum_to(alpha * g). Read next: ../backend/cpu/axpy.c.
 */
#include <math.h>

#include "ops.h"

/* f[0] = alpha. */
lm_status lmi_bw_add_scaled(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	if (n->in[0].needs_grad) {
		lm_tensor *s = lmi_sum_to(g, n->in[0].ndim, n->in[0].shape);
		gin[0] = s ? lmi_as_dtype(s, n->in[0].dtype) : NULL;
		lm_tensor_release(s);
		if (!gin[0]) return lm_last_status();
	}
	if (n->in[1].needs_grad) {
		lm_tensor *m = lm_binary_scalar(LM_MUL, g, n->p.add_scaled.alpha);
		lm_tensor *s = m ? lmi_sum_to(m, n->in[1].ndim, n->in[1].shape) : NULL;
		gin[1] = s ? lmi_as_dtype(s, n->in[1].dtype) : NULL;
		lm_tensor_release(m);
		lm_tensor_release(s);
		if (!gin[1]) {
			lm_status st = lm_last_status();
			lm_tensor_release(gin[0]);
			gin[0] = NULL;
			return st;
		}
	}
	return LM_OK;
}

/* alpha must be finite, and integral for an integer result. */
static lm_status check_alpha(const char *name, lm_dtype ct, double alpha)
{
	if (!isfinite(alpha))
		return lmi_fail(LM_ERR_ARG, "%s: alpha %g is not finite", name, alpha);
	if (!lm_dtype_is_float(ct) && (alpha != floor(alpha) || fabs(alpha) > 9e18))
		return lmi_fail(LM_ERR_ARG, "%s: alpha %g must be an integer for %s tensors", name, alpha,
		                lm_dtype_name(ct));
	return LM_OK;
}

lm_tensor *lm_add_scaled(const lm_tensor *a, const lm_tensor *b, double alpha)
{
	const lm_tensor *in[2] = {a, b};
	if (lmi_check_arg("add_scaled", "first operand", a) ||
	    lmi_check_arg("add_scaled", "second operand", b) || lmi_check_device("add_scaled", 2, in))
		return NULL;
	int nd;
	int64_t shape[LM_MAX_DIMS];
	if (lm_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &nd, shape))
		return lmi_fail_null(LM_ERR_SHAPE, "add_scaled: shapes %s and %s cannot be broadcast "
		                     "together", lmi_shape_s(a), lmi_shape_s(b));
	lm_dtype ct = lm_promote_types(a->dtype, b->dtype);
	if (check_alpha("add_scaled", ct, alpha)) return NULL;
	lm_tensor *ac = lmi_as_dtype(a, ct), *bc = ac ? lmi_as_dtype(b, ct) : NULL, *out = NULL;
	if (bc) out = lmi_empty_as("add_scaled", ac, nd, shape, ct);
	if (out && lmi_run("add_scaled", LMI_OP_ADD_SCALED, &(lmi_params){.add_scaled = {.alpha = alpha}}, ct, 2,
	                   (const lm_tensor *[]){ac, bc}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(ac);
	lm_tensor_release(bc);
	out = lmi_finish(out, LMI_OP_ADD_SCALED, &(lmi_params){.add_scaled = {.alpha = alpha}}, 2, in, 0, NULL, NULL);
	return out;
}

lm_status lm_add_scaled_(lm_tensor *a, const lm_tensor *b, double alpha)
{
	const lm_tensor *in[2] = {a, b};
	lm_status s;
	if ((s = lmi_check_arg("add_scaled_", "first operand", a)) ||
	    (s = lmi_check_arg("add_scaled_", "second operand", b)) ||
	    (s = lmi_check_device("add_scaled_", 2, in)) || (s = lmi_inplace_check("add_scaled_", a)))
		return s;
	int nd;
	int64_t shape[LM_MAX_DIMS];
	bool same = !lm_broadcast_shapes(a->ndim, a->shape, b->ndim, b->shape, &nd, shape) &&
	            nd == a->ndim;
	for (int i = 0; same && i < nd; i++) same = shape[i] == a->shape[i];
	if (!same)
		return lmi_fail(LM_ERR_SHAPE, "add_scaled_: the second operand %s does not broadcast to the "
		                "in-place operand %s", lmi_shape_s(b), lmi_shape_s(a));
	if (lmi_has_internal_overlap(a))
		return lmi_fail(LM_ERR_ARG, "add_scaled_: the tensor of shape %s has broadcast (expanded) "
		                "dims; clone it before writing in place", lmi_shape_s(a));
	lm_dtype ct = lm_promote_types(a->dtype, b->dtype);
	if (lm_dtype_is_float(ct) && !lm_dtype_is_float(a->dtype))
		return lmi_fail(LM_ERR_DTYPE, "add_scaled_: the result type %s cannot be stored in the %s "
		                "tensor", lm_dtype_name(ct), lm_dtype_name(a->dtype));
	if ((s = check_alpha("add_scaled_", a->dtype, alpha))) return s;
	/* b in a's dtype; a copy when it shares a's storage (it could overlap with another layout) */
	lm_tensor *bc = (b->storage == a->storage || b->dtype != a->dtype)
	                        ? lmi_contiguous_copy(b, a->dtype)
	                        : lm_tensor_retain((lm_tensor *)b);
	if (!bc) return lm_last_status();
	lmi_bump_version(a);
	s = lmi_run("add_scaled_", LMI_OP_ADD_SCALED, &(lmi_params){.add_scaled = {.alpha = alpha}}, a->dtype, 2,
	            (const lm_tensor *[]){a, bc}, 1, (lm_tensor *[]){a});
	lm_tensor_release(bc);
	return s;
}
