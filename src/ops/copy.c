/*
 * copy.c — the public, differentiable copies: contiguous, clone, dtype conversion, and copy_.
 * The loops are core/copy.c's. Read next: view.c.
 */
#include "ops.h"

/* The gradient passes through, converted back to the input's dtype. */
lm_status lmi_bw_copy(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	gin[0] = lmi_contiguous_copy(g, n->in[0].dtype);
	return gin[0] ? LM_OK : lm_last_status();
}

/* Across devices: the gradient goes back to the input's device (p.to_device.from). */
lm_status lmi_bw_to_device(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	gin[0] = lmi_on_device(g, (lm_device)n->p.to_device.from);
	return gin[0] ? LM_OK : lm_last_status();
}

/* (the copies take block types: they convert them, core/copy.c) */
static lm_tensor *copy_as(const char *name, const lm_tensor *t, lm_dtype dt, lmi_op op)
{
	if (lmi_check_arg(name, "input", t)) return NULL;
	if (lmi_is_block(t->dtype) ? !lmi_backend_for(t->storage->device) && lmi_check_device(name, 1, &t)
	                           : lmi_check_device(name, 1, &t) != LM_OK)
		return NULL;
	lm_tensor *out = lmi_contiguous_copy(t, dt);
	return lmi_finish(out, op, NULL, 1, &t, 0, NULL, NULL);
}

lm_tensor *lm_contiguous(const lm_tensor *t)
{
	if (t && lm_tensor_is_contiguous(t)) return lm_tensor_retain((lm_tensor *)t);
	return copy_as("contiguous", t, t ? t->dtype : LM_FLOAT32, LMI_OP_CLONE);
}

lm_tensor *lm_clone(const lm_tensor *t)
{
	return copy_as("clone", t, t ? t->dtype : LM_FLOAT32, LMI_OP_CLONE);
}

lm_tensor *lm_to_dtype(const lm_tensor *t, lm_dtype dt)
{
	if (dt < 0 || dt >= LM_DTYPE_COUNT)
		return lmi_fail_null(LM_ERR_DTYPE, "to: invalid dtype %d", (int)dt);
	if (t && t->dtype == dt) return lm_tensor_retain((lm_tensor *)t);
	if (t && t->requires_grad && lmi_grad_enabled() && (!lm_dtype_is_float(dt) || lmi_is_block(dt)))
		return lmi_fail_null(LM_ERR_DTYPE, "to: converting a tensor that requires grad to %s would "
		                     "cut the gradient; detach it first%s", lm_dtype_name(dt),
		                     lmi_is_block(dt) ? " (to train through quantization: lm.quant.fake_quantize)" : "");
	return copy_as("to", t, dt, LMI_OP_TO_DTYPE);
}

lm_status lm_copy_(lm_tensor *dst, const lm_tensor *src)
{
	lm_status s;
	if ((s = lmi_check_arg("copy_", "destination", dst)) || (s = lmi_check_arg("copy_", "source", src)) ||
	    (s = lmi_check_device("copy_", 1, (const lm_tensor *const *)&dst)) || (s = lmi_check_device("copy_", 1, &src)) ||
	    (s = lmi_inplace_check("copy_", dst)))
		return s; /* (across devices too: the bytes cross, core/device.c) */
	if (src->requires_grad && lmi_grad_enabled())
		return lmi_fail(LM_ERR_STATE, "copy_: the source of shape %s requires grad, and in-place "
		                "copies are not recorded; use where/cat, or detach the source",
		                lmi_shape_s(src));
	int nd;
	int64_t shape[LM_MAX_DIMS];
	if ((s = lm_broadcast_shapes(dst->ndim, dst->shape, src->ndim, src->shape, &nd, shape)) ||
	    nd != dst->ndim) {
		return lmi_fail(LM_ERR_SHAPE, "copy_: source shape %s cannot be broadcast to %s",
		                lmi_shape_s(src), lmi_shape_s(dst));
	}
	for (int i = 0; i < nd; i++)
		if (shape[i] != dst->shape[i])
			return lmi_fail(LM_ERR_SHAPE, "copy_: source shape %s cannot be broadcast to %s",
			                lmi_shape_s(src), lmi_shape_s(dst));
	if (lmi_has_internal_overlap(dst))
		return lmi_fail(LM_ERR_ARG, "copy_: the destination of shape %s has broadcast (expanded) "
		                "dims", lmi_shape_s(dst));
	/* a source that overlaps the destination with another layout is read from a copy */
	lm_tensor *sc = src->storage == dst->storage ? lmi_contiguous_copy(src, src->dtype)
	                                             : lm_tensor_retain((lm_tensor *)src);
	if (!sc) return lm_last_status();
	lmi_bump_version(dst);
	s = lmi_copy(dst, sc);
	lm_tensor_release(sc);
	return s;
}

lm_tensor *lm_to_device(const lm_tensor *t, lm_device dev)
{
	if (lmi_check_arg("to", "input", t)) return NULL;
	if (dev < 0 || dev >= LMI_DEVICE_COUNT)
		return lmi_fail_null(LM_ERR_DEVICE, "to: invalid device %d", (int)dev);
	if (t->storage->device == dev) return lm_tensor_retain((lm_tensor *)t);
	if (!lmi_backend_open("to", dev)) return NULL;
	lm_tensor *out = lmi_on_device(t, dev);
	out = lmi_finish(out, LMI_OP_TO_DEVICE, &(lmi_params){.to_device = {.from = t->storage->device}}, 1, &t, 0, NULL,
	                 NULL);
	return out;
}

static void free_pinned(void *ctx, void *data, size_t nbytes)
{
	((const lmi_device_ops *)ctx)->host_free(data, nbytes);
}

lm_tensor *lm_pin_memory(const lm_tensor *t)
{
	static const char *const fname = "pin_memory";
	if (lmi_check_arg(fname, "input", t)) return NULL;
	if (t->storage->device != LM_CPU)
		return lmi_fail_null(LM_ERR_DEVICE, "%s: only CPU tensors can be pinned, this one is on %s",
		                     fname, lm_device_name(t->storage->device));
	if (t->storage->pinned && lm_tensor_is_contiguous(t)) return lm_tensor_retain((lm_tensor *)t);
	const lmi_backend *b = lmi_backend_open(fname, LM_CUDA);
	if (!b) return NULL;
	if (!b->mem->host_alloc)
		return lmi_fail_null(LM_ERR_UNSUPPORTED, "%s: the %s backend has no page-locked memory",
		                     fname, b->name);
	size_t nbytes = lm_tensor_nbytes(t);
	void *data = b->mem->host_alloc(nbytes);
	if (!data) return NULL;
	lm_storage *s = lm_alloc(sizeof *s);
	if (!s) {
		b->mem->host_free(data, nbytes);
		return NULL;
	}
	*s = (lm_storage){.refcount = 1, .device = LM_CPU, .data = data, .nbytes = nbytes,
	                  .free_fn = free_pinned, .free_ctx = (void *)b->mem, .pinned = true,
	                  .serial = lmi_storage_serial_next()};
	int64_t stride[LM_MAX_DIMS];
	lmi_contiguous_strides(t->ndim, t->shape, stride);
	lm_tensor *out = lmi_tensor_wrap(s, t->dtype, t->ndim, t->shape, stride, 0);
	lmi_storage_release(s); /* out holds it */
	if (out && lmi_copy(out, t)) {
		lm_tensor_release(out);
		return NULL;
	}
	return out;
}

bool lm_tensor_is_pinned(const lm_tensor *t) { return t && t->storage->pinned; }
