/*
 * tensor.c — storage and tensor lifetimes, creation, inspection and element access.
 *
 * A tensor is a header (dtype, shape, strides, offset, autograd fields) over a refcounted storage.
 * Creation checks every size and the element count for overflow before asking the allocator, which
 * enforces the memory cap. Read next: view.c (views), copy.c, iter.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmi.h"

static atomic_llong live_tensors;

int64_t lmi_live_tensors(void);
int64_t lmi_live_tensors(void) { return atomic_load(&live_tensors); }

/* ---------------------------------------------------------------- storage */

lm_storage *lmi_storage_new(size_t nbytes, lm_device dev)
{
	const lmi_device_ops *ops = dev == LM_CPU ? NULL : lmi_device_ops_for(dev);
	if (dev != LM_CPU && !ops)
		return lmi_fail_null(LM_ERR_DEVICE, "storage: no %s device is set up",
		                     lm_device_name(dev));
	lm_storage *s = lm_alloc(sizeof *s);
	if (!s) return NULL;
	void *data = ops ? ops->alloc(nbytes) : lm_alloc(nbytes);
	if (!data) {
		lm_free(s, sizeof *s);
		return NULL;
	}
	*s = (lm_storage){.refcount = 1, .device = dev, .data = data, .nbytes = nbytes, .serial = lmi_storage_serial_next()};
	return s;
}

void lmi_storage_retain(lm_storage *s) { s->refcount++; }

void lmi_storage_release(lm_storage *s)
{
	if (!s || --s->refcount > 0) return;
	if (s->init_marks) lm_free(s->init_marks, s->nbytes / s->init_elem);
	if (s->free_fn)
		s->free_fn(s->free_ctx, s->data, s->nbytes);
	else if (s->device != LM_CPU)
		lmi_device_ops_for(s->device)->free(s->data, s->nbytes);
	else
		lm_free(s->data, s->nbytes);
	lm_free(s, sizeof *s);
}

/* ---------------------------------------------------------------- shapes */

void lmi_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride)
{
	int64_t acc = 1;
	for (int i = ndim - 1; i >= 0; i--) {
		stride[i] = acc;
		acc *= shape[i] > 1 ? shape[i] : 1;
	}
}

lm_status lmi_check_shape(const char *fname, int ndim, const int64_t *shape)
{
	if (ndim < 0 || ndim > LM_MAX_DIMS)
		return lmi_fail(LM_ERR_ARG, "%s: %d dims requested, at most %d are supported", fname, ndim,
		                LM_MAX_DIMS);
	if (ndim > 0 && !shape) return lmi_fail(LM_ERR_ARG, "%s: shape is NULL", fname);
	for (int i = 0; i < ndim; i++)
		if (shape[i] < 0)
			return lmi_fail(LM_ERR_ARG, "%s: size %lld at dim %lld is negative", fname,
			                (long long)shape[i], lmi_1(i));
	return LM_OK;
}

lm_status lmi_numel_checked(const char *fname, int ndim, const int64_t *shape, int64_t *out)
{
	lm_status s = lmi_check_shape(fname, ndim, shape);
	if (s) return s;
	/* The sizes other than 0 must multiply without overflow too: strides and the loops that run
	 * over some of the dims ([0, 2^40, 2^40] has no elements but a stride of 2^80) use them. */
	int64_t n = 1, nonzero = 1;
	for (int i = 0; i < ndim; i++)
		if (__builtin_mul_overflow(n, shape[i], &n) ||
		    (shape[i] && __builtin_mul_overflow(nonzero, shape[i], &nonzero)))
			return lmi_fail(LM_ERR_OVERFLOW, "%s: the element count of shape %s overflows (the "
			                "sizes other than 0 must multiply to less than 2^63)", fname,
			                lmi_dims_s(ndim, shape));
	*out = n;
	return LM_OK;
}

lm_status lmi_wrap_dim(const char *fname, int dim, int ndim, int *out)
{
	int n = ndim > 0 ? ndim : 1; /* a 0-d tensor accepts dim 0 / -1, as in PyTorch */
	if (dim < -n || dim >= n)
		return lmi_fail(LM_ERR_INDEX, "%s: dim %lld is out of range for a %d-d tensor (expected "
		                "1..%d or -%d..-1)", fname, lmi_1(dim), ndim, n, n);
	*out = dim < 0 ? dim + n : dim;
	return LM_OK;
}

/* ---------------------------------------------------------------- tensors */

lm_tensor *lmi_tensor_wrap(lm_storage *s, lm_dtype dt, int ndim, const int64_t *shape,
                           const int64_t *stride, int64_t offset)
{
	lm_tensor *t = lm_alloc(sizeof *t);
	if (!t) return NULL;
	memset(t, 0, sizeof *t);
	t->refcount = 1;
	t->storage = s;
	lmi_storage_retain(s);
	t->dtype = dt;
	t->ndim = ndim;
	int64_t es = (int64_t)lmi_elem_size(dt), bs = lmi_dtypes[dt].block_size;
	for (int i = 0; i < ndim; i++) {
		t->shape[i] = shape[i];
		t->stride[i] = stride[i];
		/* past int64 only where no element exists to reach (a dim of 0 beside one of 2^63 - 1):
		 * 0 there, as the iterator walks nothing */
		if (__builtin_mul_overflow(stride[i], es, &t->nb[i])) t->nb[i] = 0;
		/* a block type: whole blocks only (the last dim's step within a block has no bytes) */
		if (bs > 1) t->nb[i] = stride[i] % bs ? 0 : stride[i] / bs * es;
	}
	t->offset = offset;
	t->byte_offset = bs > 1 ? offset / bs * es : offset * es;
	atomic_fetch_add(&live_tensors, 1);
	return t;
}

lm_tensor *lmi_empty(const char *fname, int ndim, const int64_t *shape, lm_dtype dt)
{
	return lmi_empty_on(fname, LM_CPU, ndim, shape, dt);
}

lm_tensor *lmi_empty_on(const char *fname, lm_device dev, int ndim, const int64_t *shape,
                        lm_dtype dt)
{
	int64_t n;
	size_t nbytes;
	if (dt < 0 || dt >= LM_DTYPE_COUNT)
		return lmi_fail_null(LM_ERR_DTYPE, "%s: invalid dtype %d", fname, (int)dt);
	if (lmi_numel_checked(fname, ndim, shape, &n)) return NULL;
	const lm_dtype_traits *tr = &lmi_dtypes[dt];
	if (dev != LM_CPU && tr->compute_as != dt)
		return lmi_fail_null(LM_ERR_UNSUPPORTED, "%s: %s tensors live on the CPU in this build (the %s "
		                     "device has no %s loops; convert with :float() first)", fname, tr->name,
		                     lm_device_name(dev), tr->name);
	if (tr->block_size > 1) {
		if (ndim == 0 || shape[ndim - 1] % tr->block_size)
			return lmi_fail_null(LM_ERR_SHAPE, "%s: %s holds blocks of %lld values along the last dim, "
			                     "and shape %s's last dim is %s", fname, tr->name,
			                     (long long)tr->block_size, lmi_dims_s(ndim, shape),
			                     ndim ? "not a multiple of it" : "absent (a 0-d tensor)");
		n = n / tr->block_size;
	}
	if (__builtin_mul_overflow((size_t)n, lmi_elem_size(dt), &nbytes))
		return lmi_fail_null(LM_ERR_OVERFLOW, "%s: the byte size of shape %s overflows", fname,
		                     lmi_dims_s(ndim, shape));
	lm_storage *s = lmi_storage_new(nbytes, dev);
	if (!s) {
		char why[512];
		snprintf(why, sizeof why, "%s", lm_last_error());
		return lmi_fail_null(lm_last_status(), "%s: cannot allocate shape %s of %s (%s)", fname,
		                     lmi_dims_s(ndim, shape), lm_dtype_name(dt), why);
	}
	int64_t stride[LM_MAX_DIMS];
	lmi_contiguous_strides(ndim, shape, stride);
	lm_tensor *t = lmi_tensor_wrap(s, dt, ndim, shape, stride, 0);
	lmi_storage_release(s);
	return t;
}

lm_tensor *lm_tensor_retain(lm_tensor *t)
{
	if (t) t->refcount++;
	return t;
}

void lm_tensor_release(lm_tensor *t)
{
	if (!t || --t->refcount > 0) return;
	lm_tensor_release(t->grad);
	if (t->grad_fn) lmi_node_release(t->grad_fn);
	lmi_storage_release(t->storage);
	atomic_fetch_sub(&live_tensors, 1);
	lm_free(t, sizeof *t);
}

lm_tensor *lm_empty(int ndim, const int64_t *shape, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("empty", dt), NULL;
	return lmi_empty("empty", ndim, shape, dt);
}

lm_tensor *lm_full(int ndim, const int64_t *shape, lm_dtype dt, double value)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("full", dt), NULL;
	lm_tensor *t = lmi_empty("full", ndim, shape, dt);
	if (t && lm_fill_(t, value)) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

lm_tensor *lm_zeros(int ndim, const int64_t *shape, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("zeros", dt), NULL;
	lm_tensor *t = lmi_empty("zeros", ndim, shape, dt);
	if (t) memset(t->storage->data, 0, t->storage->nbytes);
	return t;
}

lm_tensor *lm_ones(int ndim, const int64_t *shape, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("ones", dt), NULL;
	lm_tensor *t = lmi_empty("ones", ndim, shape, dt);
	if (t) lm_fill_(t, 1.0);
	return t;
}

lm_tensor *lm_scalar(double value, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("scalar", dt), NULL;
	lm_tensor *t = lmi_empty("scalar", 0, NULL, dt);
	if (t) lmi_store(t->storage->data, dt, value);
	return t;
}

lm_tensor *lm_from_data(const void *data, int ndim, const int64_t *shape, lm_dtype dt)
{
	lm_tensor *t = lmi_empty("from_data", ndim, shape, dt);
	if (t && t->storage->nbytes) {
		if (!data) {
			lm_tensor_release(t);
			return lmi_fail_null(LM_ERR_ARG, "from_data: data is NULL");
		}
		memcpy(t->storage->data, data, t->storage->nbytes);
	}
	return t;
}

lm_tensor *lm_empty_like(const lm_tensor *t)
{
	return lmi_empty_as("empty_like", t, t->ndim, t->shape, t->dtype);
}

lm_tensor *lm_zeros_like(const lm_tensor *t)
{
	return lmi_full_on("zeros_like", lmi_dev(t), t->ndim, t->shape, t->dtype, 0);
}

lm_tensor *lm_arange(double start, double stop, double step, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("arange", dt), NULL;
	if (step == 0 || !isfinite(step) || !isfinite(start) || !isfinite(stop))
		return lmi_fail_null(LM_ERR_ARG, "arange: start %g, stop %g, step %g: step must be non-zero "
		                     "and all finite", start, stop, step);
	double len = ceil((stop - start) / step);
	if (len < 0) len = 0;
	if (len > 9.0e15)
		return lmi_fail_null(LM_ERR_OVERFLOW, "arange: %g elements are too many", len);
	int64_t n = (int64_t)len;
	if (n > 0 && !lm_dtype_is_float(dt)) { /* the values must fit: no silent wrap-around */
		const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
		int64_t lo = ty->min, hi = ty->max;
		double last = start + (double)(n - 1) * step, a = trunc(start), b = trunc(last);
		double top = dt == LM_INT64 ? 9223372036854775808.0 : (double)hi + 1;
		if (a < (double)lo || a >= top || b < (double)lo || b >= top)
			return lmi_fail_null(LM_ERR_ARG, "arange: the values %g .. %g do not fit %s (%lld..%lld)",
			                     start, last, lm_dtype_name(dt), (long long)lo, (long long)hi);
	}
	lm_tensor *t = lmi_empty("arange", 1, &n, dt);
	if (!t) return NULL;
	char *p = t->storage->data;
	size_t es = lm_dtype_size(dt);
	for (int64_t i = 0; i < n; i++) lmi_store(p + i * es, dt, start + (double)i * step);
	return t;
}

lm_tensor *lm_arange_int(int64_t start, int64_t stop, int64_t step, lm_dtype dt)
{
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("arange", dt), NULL;
	if (step == 0)
		return lmi_fail_null(LM_ERR_ARG, "arange: start %lld, stop %lld: step must be non-zero",
		                     (long long)start, (long long)stop);
	/* the length in unsigned arithmetic: stop - start may exceed int64 (-2^62 .. 2^62 + 1) */
	uint64_t span = step > 0 ? (stop > start ? (uint64_t)stop - (uint64_t)start : 0)
	                         : (start > stop ? (uint64_t)start - (uint64_t)stop : 0);
	uint64_t s = step > 0 ? (uint64_t)step : (uint64_t)0 - (uint64_t)step;
	uint64_t len = span / s + (span % s != 0);
	if (len > (uint64_t)INT64_MAX)
		return lmi_fail_null(LM_ERR_OVERFLOW, "arange: %llu elements are too many",
		                     (unsigned long long)len);
	int64_t n = (int64_t)len;
	/* the last value start + (n - 1) step lies between start and stop: no overflow */
	int64_t last = n ? (int64_t)((uint64_t)start + (uint64_t)(n - 1) * (uint64_t)step) : start;
	if (n > 0 && !lm_dtype_is_float(dt)) {
		int64_t lo = lm_dtype_traits_of(dt)->min, hi = lm_dtype_traits_of(dt)->max;
		if (start < lo || start > hi || last < lo || last > hi)
			return lmi_fail_null(LM_ERR_ARG, "arange: the values %lld .. %lld do not fit %s "
			                     "(%lld..%lld)", (long long)start, (long long)last, lm_dtype_name(dt),
			                     (long long)lo, (long long)hi);
	}
	lm_tensor *t = lmi_empty("arange", 1, &n, dt);
	if (!t) return NULL;
	char *p = t->storage->data;
	size_t es = lm_dtype_size(dt);
	void (*set_int)(void *, int64_t) = lm_dtype_traits_of(dt)->set_int;
	for (int64_t i = 0; i < n; i++)
		set_int(p + i * es, (int64_t)((uint64_t)start + (uint64_t)i * (uint64_t)step));
	return t;
}

lm_tensor *lm_linspace(double a, double b, int64_t n, lm_dtype dt)
{
	if (n < 0) return lmi_fail_null(LM_ERR_ARG, "linspace: steps %lld is negative", (long long)n);
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("linspace", dt), NULL;
	lm_tensor *t = lmi_empty("linspace", 1, &n, dt);
	if (!t) return NULL;
	char *p = t->storage->data;
	size_t es = lm_dtype_size(dt);
	double step = n > 1 ? (b - a) / (double)(n - 1) : 0;
	/* The second half counts back from b so that the last element is exactly b. */
	for (int64_t i = 0; i < n; i++)
		lmi_store(p + i * es, dt, n == 1 ? a : i < n / 2 ? a + step * (double)i : b - step * (double)(n - 1 - i));
	return t;
}

lm_tensor *lm_eye(int64_t n, int64_t m, lm_dtype dt)
{
	int64_t shape[2] = {n, m < 0 ? n : m};
	if (dt >= 0 && dt < LM_DTYPE_COUNT && lmi_is_block(dt)) return lmi_block_refuse("eye", dt), NULL;
	lm_tensor *t = lm_zeros(2, shape, dt);
	if (!t) {
		/* name the right function */
		char why[512];
		const char *e = lm_last_error();
		snprintf(why, sizeof why, "%s", strncmp(e, "zeros: ", 7) == 0 ? e + 7 : e);
		return lmi_fail_null(lm_last_status(), "eye: %s", why);
	}
	char *p = t->storage->data;
	size_t es = lm_dtype_size(dt);
	for (int64_t i = 0; i < shape[0] && i < shape[1]; i++) lmi_store(p + (i * shape[1] + i) * es, dt, 1);
	return t;
}

/* ---------------------------------------------------------------- inspection */

int lm_tensor_ndim(const lm_tensor *t) { return t->ndim; }
const int64_t *lm_tensor_shape(const lm_tensor *t) { return t->shape; }
const int64_t *lm_tensor_strides(const lm_tensor *t) { return t->stride; }
int64_t lm_tensor_offset(const lm_tensor *t) { return t->offset; }
lm_dtype lm_tensor_dtype(const lm_tensor *t) { return t->dtype; }
lm_device lm_tensor_device(const lm_tensor *t) { return t->storage->device; }
void *lm_tensor_data(const lm_tensor *t) { return lmi_data(t); }
uint64_t lm_tensor_version(const lm_tensor *t) { return t->storage->version; }

/* ---------------------------------------------------------------- never-written elements */

static void drop_marks(lm_storage *s)
{
	if (!s->init_marks) return;
	lm_free(s->init_marks, s->nbytes / s->init_elem);
	s->init_marks = NULL;
}

lm_status lm_tensor_mark_uninitialized(lm_tensor *t)
{
	lm_storage *s = t->storage;
	if (s->device != LM_CPU || s->nbytes == 0) return LM_OK;
	drop_marks(s);
	size_t elem = lmi_elem_size(t->dtype), n = s->nbytes / elem;
	if (!(s->init_marks = lm_alloc(n))) return LM_ERR_NOMEM;
	memset(s->init_marks, 0, n);
	s->init_elem = elem;
	s->init_version = s->version;
	return LM_OK;
}

uint8_t *lm_tensor_init_marks(lm_tensor *t)
{
	lm_storage *s = t->storage;
	if (!s->init_marks) return NULL;
	if (s->version != s->init_version || s->init_elem != lmi_elem_size(t->dtype)) {
		drop_marks(s); /* written through the tensor API since: every element may hold a value */
		return NULL;
	}
	return s->init_marks;
}

void lm_tensor_init_marks_sync(lm_tensor *t)
{
	lm_storage *s = t->storage;
	if (!s->init_marks) return;
	s->init_version = s->version;
	size_t n = s->nbytes / s->init_elem;
	for (size_t i = 0; i < n; i++)
		if (!s->init_marks[i]) return;
	drop_marks(s); /* all written */
}

bool lm_tensor_shares_storage(const lm_tensor *a, const lm_tensor *b)
{
	return a->storage == b->storage;
}

int64_t lm_tensor_size(const lm_tensor *t, int dim)
{
	int d;
	if (t->ndim == 0) {
		lmi_fail(LM_ERR_INDEX, "size: a 0-d tensor has no dims (asked for dim %lld)", lmi_1(dim));
		return -1;
	}
	if (lmi_wrap_dim("size", dim, t->ndim, &d)) return -1;
	return t->shape[d];
}

int64_t lm_tensor_numel(const lm_tensor *t)
{
	int64_t n = 1;
	for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
	return n;
}

size_t lm_tensor_nbytes(const lm_tensor *t)
{
	return (size_t)(lm_tensor_numel(t) / lmi_dtypes[t->dtype].block_size) * lmi_elem_size(t->dtype);
}

bool lm_tensor_is_contiguous(const lm_tensor *t)
{
	int64_t acc = 1;
	for (int i = t->ndim - 1; i >= 0; i--) {
		if (t->shape[i] == 0) return true;
		if (t->shape[i] != 1 && t->stride[i] != acc) return false;
		acc *= t->shape[i];
	}
	return true;
}

void *lmi_elem_ptr(const lm_tensor *t, const int64_t *idx)
{
	int64_t off = 0;
	for (int i = 0; i < t->ndim; i++) off += idx[i] * t->stride[i];
	return lmi_data(t) + off * (int64_t)lmi_elem_size(t->dtype);
}

static lm_status check_index(const char *fname, const lm_tensor *t, const int64_t *idx,
                             int64_t *norm)
{
	for (int i = 0; i < t->ndim; i++) {
		int64_t k = idx[i] < 0 ? idx[i] + t->shape[i] : idx[i];
		if (k < 0 || k >= t->shape[i])
			return lmi_fail(LM_ERR_INDEX, "%s: index %lld is out of range for dim %lld of size %lld",
			                fname, lmi_1(idx[i]), lmi_1(i), (long long)t->shape[i]);
		norm[i] = k;
	}
	return LM_OK;
}

/* One element at p of t's storage as a double (a device's is copied to the host first). */
static lm_status load_elem(const lm_tensor *t, const char *p, double *out)
{
	if (t->storage->device == LM_CPU) {
		*out = lmi_load(p, t->dtype);
		return LM_OK;
	}
	double buf;
	lm_status s = lmi_device_ops_for(t->storage->device)
	                  ->memcpy(&buf, p, lmi_elem_size(t->dtype), LMI_TO_HOST, false);
	if (!s) *out = lmi_load(&buf, t->dtype);
	return s;
}

lm_status lm_tensor_get(const lm_tensor *t, const int64_t *idx, double *out)
{
	int64_t k[LM_MAX_DIMS];
	lm_status s = lmi_check_not_block("get", t);
	if (!s) s = check_index("get", t, idx, k);
	if (s) return s;
	return load_elem(t, lmi_elem_ptr(t, k), out);
}

lm_status lm_tensor_set(lm_tensor *t, const int64_t *idx, double value)
{
	int64_t k[LM_MAX_DIMS];
	lm_status s = lmi_check_not_block("set", t);
	if (!s) s = check_index("set", t, idx, k);
	if (s) return s;
	char *p = lmi_elem_ptr(t, k);
	if (t->storage->device == LM_CPU) {
		lmi_store(p, t->dtype, value);
	} else {
		double buf;
		lmi_store(&buf, t->dtype, value);
		s = lmi_device_ops_for(t->storage->device)
		        ->memcpy(p, &buf, lmi_elem_size(t->dtype), LMI_TO_DEVICE, false);
		if (s) return s;
	}
	lmi_bump_version(t);
	return LM_OK;
}

lm_status lm_tensor_item(const lm_tensor *t, double *out)
{
	int64_t n = lm_tensor_numel(t);
	if (lmi_is_block(t->dtype)) return lmi_block_refuse("item", t->dtype);
	if (n != 1)
		return lmi_fail(LM_ERR_SHAPE, "item: the tensor has %lld elements (shape %s), not 1",
		                (long long)n, lmi_shape_s(t));
	return load_elem(t, lmi_data(t), out);
}
