/*
 * device.c — tensors on a device other than the CPU, as the core sees them: the device's
 * operations (memory, raw copies, its copy / fill / random loops: lmi_device_ops, registered by
 * the backend's table), copies between the host and the device, and creation on a device.
 *
 * A copy across devices moves the bytes once, in the smaller layout: the source without its
 * broadcast dims (an expand of a (1, n) row to (m, n) crosses as n values) and in the narrower of
 * the two dtypes; the broadcast, the strides of the destination and the other conversion run on
 * the side that has the data, by that side's copy loop. A contiguous destination of the source's
 * shape and dtype receives the bytes directly. Read next: copy.c, ../backend/backend.h.
 */
#include "lmi.h"

#define DEVICES (LM_OPENCL + 1)

static const lmi_device_ops *_Atomic devices[DEVICES];

void lmi_device_set(lm_device d, const lmi_device_ops *ops)
{
	LM_ASSERT(d > LM_CPU && d < DEVICES);
	atomic_store_explicit(&devices[d], ops, memory_order_release);
}

const lmi_device_ops *lmi_device_ops_for(lm_device d)
{
	return d > LM_CPU && d < DEVICES ? atomic_load_explicit(&devices[d], memory_order_acquire)
	                                 : NULL;
}

/* ---------------------------------------------------------------- creation */

lm_tensor *lmi_full_on(const char *fname, lm_device dev, int ndim, const int64_t *shape,
                       lm_dtype dt, double v)
{
	lm_tensor *t = lmi_empty_on(fname, dev, ndim, shape, dt);
	if (t && lmi_fill(t, v)) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

lm_tensor *lmi_on_device(const lm_tensor *t, lm_device dev)
{
	if (t->storage->device == dev) return lm_tensor_retain((lm_tensor *)t);
	lm_tensor *c = lmi_empty_on("copy", dev, t->ndim, t->shape, t->dtype);
	if (c && lmi_copy(c, t)) {
		lm_tensor_release(c);
		return NULL;
	}
	return c;
}

/* ---------------------------------------------------------------- copies across devices */

/* t without its broadcast dims: each stride-0 dim of size > 1 seen as size 1 (a view). */
static lm_tensor *compact(const lm_tensor *t)
{
	int64_t shape[LM_MAX_DIMS];
	for (int i = 0; i < t->ndim; i++) shape[i] = t->stride[i] == 0 ? 1 : t->shape[i];
	return lmi_tensor_wrap(t->storage, t->dtype, t->ndim, shape, t->stride, t->offset);
}

static bool same_shape(const lm_tensor *a, const lm_tensor *b)
{
	if (a->ndim != b->ndim) return false;
	for (int i = 0; i < a->ndim; i++)
		if (a->shape[i] != b->shape[i]) return false;
	return true;
}

/* Whether dst can take src's bytes as they are: both contiguous, one shape and dtype. */
static bool direct(const lm_tensor *dst, const lm_tensor *src)
{
	return dst->dtype == src->dtype && same_shape(dst, src) && lm_tensor_is_contiguous(dst) &&
	       lm_tensor_is_contiguous(src);
}

/* The dtype the bytes cross in: the narrower of the two. */
static lm_dtype moved_dtype(const lm_tensor *dst, const lm_tensor *src)
{
	return lmi_elem_size(dst->dtype) < lmi_elem_size(src->dtype) ? dst->dtype : src->dtype;
}

/* A contiguous tensor of t's shape in dtype dt on t's device: t itself when it is one. */
static lm_tensor *dense(const lm_tensor *t, lm_dtype dt)
{
	if (t->dtype == dt && lm_tensor_is_contiguous(t)) return lm_tensor_retain((lm_tensor *)t);
	return lmi_contiguous_copy(t, dt);
}

static lm_status raw(lm_device dev, void *d, const void *s, size_t n, lmi_copy_kind k, bool pinned)
{
	return n ? lmi_device_ops_for(dev)->memcpy(d, s, n, k, pinned) : LM_OK;
}

/* dst on a device, src on the CPU. */
static lm_status to_device(lm_tensor *dst, const lm_tensor *src,
                           lm_status (*cpu_copy)(lm_tensor *, const lm_tensor *))
{
	lm_device dev = dst->storage->device;
	lm_tensor *sc = compact(src), *hc = NULL, *dt = NULL;
	lm_status s = LM_OK;
	(void)cpu_copy;
	if (!sc) return lm_last_status();
	if (!(hc = dense(sc, moved_dtype(dst, sc)))) goto fail;
	if (direct(dst, hc)) {
		s = raw(dev, lmi_data(dst), lmi_data(hc), lm_tensor_nbytes(hc), LMI_TO_DEVICE,
		        hc->storage->pinned);
		goto done;
	}
	if (!(dt = lmi_empty_on("copy", dev, hc->ndim, hc->shape, hc->dtype))) goto fail;
	s = raw(dev, lmi_data(dt), lmi_data(hc), lm_tensor_nbytes(hc), LMI_TO_DEVICE,
	        hc->storage->pinned);
	if (!s) s = lmi_device_ops_for(dev)->copy(dst, dt);
	goto done;
fail:
	s = lm_last_status();
done:
	lm_tensor_release(sc);
	lm_tensor_release(hc);
	lm_tensor_release(dt);
	return s;
}

/* dst on the CPU, src on a device. */
static lm_status to_host(lm_tensor *dst, const lm_tensor *src,
                         lm_status (*cpu_copy)(lm_tensor *, const lm_tensor *))
{
	lm_device dev = src->storage->device;
	lm_tensor *sc = compact(src), *dc = NULL, *ht = NULL;
	lm_status s = LM_OK;
	if (!sc) return lm_last_status();
	if (!(dc = dense(sc, moved_dtype(dst, sc)))) goto fail;
	if (direct(dst, dc)) {
		s = raw(dev, lmi_data(dst), lmi_data(dc), lm_tensor_nbytes(dc), LMI_TO_HOST,
		        dst->storage->pinned);
		goto done;
	}
	if (!(ht = lmi_empty("copy", dc->ndim, dc->shape, dc->dtype))) goto fail;
	s = raw(dev, lmi_data(ht), lmi_data(dc), lm_tensor_nbytes(dc), LMI_TO_HOST, false);
	if (!s) s = cpu_copy(dst, ht);
	goto done;
fail:
	s = lm_last_status();
done:
	lm_tensor_release(sc);
	lm_tensor_release(dc);
	lm_tensor_release(ht);
	return s;
}

lm_status lmi_copy_across(lm_tensor *dst, const lm_tensor *src,
                          lm_status (*cpu_copy)(lm_tensor *, const lm_tensor *))
{
	lm_device dd = dst->storage->device, sd = src->storage->device;
	if (lm_tensor_numel(dst) == 0) return LM_OK;
	if (dd != LM_CPU && !lmi_device_ops_for(dd))
		return lmi_fail(LM_ERR_DEVICE, "copy: no %s device is set up", lm_device_name(dd));
	if (sd != LM_CPU && !lmi_device_ops_for(sd))
		return lmi_fail(LM_ERR_DEVICE, "copy: no %s device is set up", lm_device_name(sd));
	if (sd == LM_CPU) return to_device(dst, src, cpu_copy);
	if (dd == LM_CPU) return to_host(dst, src, cpu_copy);
	/* two devices: through the host */
	lm_tensor *h = lmi_on_cpu(src);
	lm_status s = h ? to_device(dst, h, cpu_copy) : lm_last_status();
	lm_tensor_release(h);
	return s;
}
