/*
 * batch.c — what the data loader does per batch, in C: gather rows by index, seeded permutations,
 * and whole-batch augmentations (random crops with zero padding, horizontal flips).
 *
 * A data set is one tensor (60,000 images in one (N, 1, 28, 28) block), so a batch is a gather of
 * rows: one memcpy per row, spread over the threads for large batches — no per-sample Lua work and
 * no per-sample tensors. Permutations are Fisher-Yates driven by Philox keyed by the loader's seed,
 * counter = (stream, i), so they depend only on (seed, epoch), never on the thread count or on
 * what else drew random numbers. The augmentations check here and run the device's loops
 * (backend.h's crop_batch, flip_batch; ../backend/cpu/train.c). None of these record autograd
 * nodes. Read next: ../lua/data.c.
 */
#include <string.h>

#include "lumen/optim.h"
#include "ops.h"

static int threads_for(int64_t work) { return work >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1; }

/* ---------------------------------------------------------------- gathering rows */

/* A source on a device: the rows gathered there by index_select (the indices cross once). */
static lm_tensor *take_rows_on_device(const lm_tensor *src, const int64_t *idx, int64_t n)
{
	lm_tensor *hi = lm_from_data(idx, 1, &n, LM_INT64);
	lm_tensor *di = hi ? lmi_on_device(hi, lmi_dev(src)) : NULL;
	bool was = lm_set_grad_enabled(false);
	lm_tensor *out = di ? lm_index_select(src, 0, di) : NULL;
	lm_set_grad_enabled(was);
	lm_tensor_release(hi);
	lm_tensor_release(di);
	return out;
}

lm_tensor *lm_take_rows(const lm_tensor *src, const int64_t *idx, int64_t n)
{
	static const char *const fname = "take_rows";
	if (!src) return lmi_fail_null(LM_ERR_ARG, "%s: the source is NULL", fname);
	if (n < 0 || (n && !idx)) return lmi_fail_null(LM_ERR_ARG, "%s: bad index list (%lld)", fname, (long long)n);
	if (src->ndim < 1)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: the source must have a dim to take rows from, got a 0-d "
		                     "tensor", fname);
	int64_t rows = src->shape[0];
	for (int64_t i = 0; i < n; i++)
		if (idx[i] < 0 || idx[i] >= rows)
			return lmi_fail_null(LM_ERR_INDEX, "%s: index %lld at position %lld is out of range for %lld "
			                     "rows", fname, (long long)idx[i] + 1, (long long)i + 1, (long long)rows);
	lmi_capture_opaque(fname, "rows are gathered by the host from a Lua index list");
	if (src->storage->device != LM_CPU) return take_rows_on_device(src, idx, n);
	lm_tensor *sc = lm_tensor_is_contiguous(src) ? lm_tensor_retain((lm_tensor *)src)
	                                             : lmi_contiguous_copy(src, src->dtype);
	if (!sc) return NULL;
	int64_t shape[LM_MAX_DIMS];
	memcpy(shape, src->shape, sizeof shape);
	shape[0] = n;
	lm_tensor *out = lmi_empty(fname, src->ndim, shape, src->dtype);
	if (out && n) {
		size_t row = rows ? lm_tensor_nbytes(sc) / (size_t)rows : 0;
		const char *from = lmi_data(sc);
		char *to = lmi_data(out);
		/* memory-bound: an epoch of MNIST batches reads and writes 188 MB each way (streaming
		 * stores measured slower here) */
#pragma omp parallel for schedule(static) num_threads(threads_for(n * (int64_t)row / 4))
		for (int64_t i = 0; i < n; i++) memcpy(to + (size_t)i * row, from + (size_t)idx[i] * row, row);
	}
	lm_tensor_release(sc);
	return out;
}

/* ---------------------------------------------------------------- permutations */

lm_status lm_randperm_seeded(int64_t n, uint64_t seed, uint64_t stream, int64_t *out)
{
	if (n < 0 || (n && !out)) return lmi_fail(LM_ERR_ARG, "randperm: bad size %lld", (long long)n);
	for (int64_t i = 0; i < n; i++) out[i] = i;
	uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
	for (int64_t i = n - 1; i > 0; i--) {
		uint32_t ctr[4] = {(uint32_t)i, (uint32_t)((uint64_t)i >> 32), (uint32_t)stream,
		                   (uint32_t)(stream >> 32)}, r[4];
		lm_philox4x32(ctr, key, r);
		uint64_t u = (uint64_t)r[0] << 32 | r[1];
		/* an unbiased-enough draw in [0, i]: the high half of u * (i + 1) */
		int64_t j = (int64_t)(((unsigned __int128)u * (uint64_t)(i + 1)) >> 64);
		int64_t t = out[i];
		out[i] = out[j];
		out[j] = t;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- augmentations */

static lm_status check_images(const char *fname, const lm_tensor *x, int min_dims)
{
	if (!x) return lmi_fail(LM_ERR_ARG, "%s: the batch is NULL", fname);
	if (x->ndim < min_dims)
		return lmi_fail(LM_ERR_SHAPE, "%s: the batch must be (N, C, H, W), got shape %s", fname,
		                lmi_shape_s(x));
	if (!lmi_backend_for(x->storage->device))
		return lmi_fail(LM_ERR_DEVICE, "%s: no %s backend", fname, lm_device_name(x->storage->device));
	return LM_OK;
}

/* offsets (N, 2) as a contiguous int64 copy on the CPU, each checked against [0, hi] */
static lm_tensor *check_offsets(const lm_tensor *off, int64_t N, int64_t hi_top, int64_t hi_left)
{
	if (!off || off->ndim != 2 || off->shape[0] != N || off->shape[1] != 2 || lm_dtype_is_float(off->dtype))
		return lmi_fail_null(LM_ERR_SHAPE, "crop_batch: offsets must be an integer tensor (N, 2) = "
		                     "(%lld, 2), got %s", (long long)N, off ? lmi_shape_s(off) : "NULL");
	lm_tensor *oc = lmi_contiguous_copy(off, LM_INT64), *o = oc ? lmi_on_cpu(oc) : NULL;
	lm_tensor_release(oc);
	if (!o) return NULL;
	const int64_t *v = (const int64_t *)lmi_data(o);
	for (int64_t i = 0; i < N; i++)
		if (v[2 * i] < 0 || v[2 * i] > hi_top || v[2 * i + 1] < 0 || v[2 * i + 1] > hi_left) {
			lm_tensor_release(o);
			return lmi_fail_null(LM_ERR_INDEX, "crop_batch: offset (%lld, %lld) of sample %lld is outside "
			                     "0..%lld, 0..%lld", (long long)v[2 * i], (long long)v[2 * i + 1],
			                     (long long)i + 1, (long long)hi_top, (long long)hi_left);
		}
	return o;
}

lm_tensor *lm_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t oh, int64_t ow, int64_t pad)
{
	static const char *const fname = "crop_batch";
	if (check_images(fname, x, 4)) return NULL;
	if (x->ndim != 4) return lmi_fail_null(LM_ERR_SHAPE, "%s: the batch must be (N, C, H, W), got shape %s",
	                                       fname, lmi_shape_s(x));
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	if (pad < 0 || oh < 1 || ow < 1 || oh > H + 2 * pad || ow > W + 2 * pad)
		return lmi_fail_null(LM_ERR_ARG, "%s: a crop of %lld x %lld does not fit images of %lld x %lld "
		                     "padded by %lld", fname, (long long)oh, (long long)ow, (long long)H,
		                     (long long)W, (long long)pad);
	lm_tensor *o = check_offsets(offsets, N, H + 2 * pad - oh, W + 2 * pad - ow);
	if (!o) return NULL;
	lm_tensor *od = lmi_on_device(o, lmi_dev(x)); /* checked here, read there */
	lm_tensor *xc = od ? lmi_contiguous_copy(x, x->dtype) : NULL;
	const int64_t shape[4] = {N, C, oh, ow};
	lm_tensor *out = xc ? lmi_zeros_as(x, 4, shape, x->dtype) : NULL;
	if (out && lmi_run(fname, LMI_OP_CROP_BATCH, &(lmi_params){.crop = {.pad = pad}}, x->dtype, 2,
	                   (const lm_tensor *[]){xc, od}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(od);
	lm_tensor_release(o);
	lm_tensor_release(xc);
	return out;
}

lm_tensor *lm_flip_batch(const lm_tensor *x, const lm_tensor *mask)
{
	static const char *const fname = "flip_batch";
	if (check_images(fname, x, 2)) return NULL;
	int64_t N = x->shape[0];
	if (!mask || mask->ndim != 1 || mask->shape[0] != N)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: the mask must be (N) = (%lld), got %s", fname, (long long)N,
		                     mask ? lmi_shape_s(mask) : "NULL");
	/* nonzero is set, in any dtype */
	lm_tensor *mh = lmi_on_device(mask, lmi_dev(x)), *m = NULL, *out = NULL, *xc = NULL;
	if (mh) m = mh->dtype == LM_UINT8 ? lmi_contiguous_copy(mh, LM_UINT8) : lm_binary_scalar(LM_NE, mh, 0);
	lm_tensor_release(mh);
	if (m) xc = lmi_contiguous_copy(x, x->dtype);
	if (xc) out = lmi_empty_as(fname, x, x->ndim, x->shape, x->dtype);
	if (out && lmi_run(fname, LMI_OP_FLIP_BATCH, NULL, x->dtype, 2, (const lm_tensor *[]){xc, m}, 1,
	                   (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(xc);
	lm_tensor_release(m);
	return out;
}
