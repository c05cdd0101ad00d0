/*
 * copy.c — strided copies with broadcasting and dtype conversion, and fills: the loops every other
 * op uses to move data between layouts. No autograd here (see ../ops/copy.c for the public,
 * differentiable lm_contiguous / lm_clone / lm_to_dtype / lm_copy_). Tensors on another device
 * are copied and filled by that device's loops (lmi_device_ops), and copies between the host and
 * a device go through device.c.
 */
#include <math.h>
#include <string.h>

#include "iter.h"

/* Float->integer conversion as lmi_store does it, whichever path converts (lmi.h, lmi_wrap_u64:
 * truncation, then modulo 2^bits; NaN and infinities give 0; a plain cast of those is UB). */
#define CONV_F(T, v) _Generic((T)0, int32_t: (int32_t)(uint32_t)lmi_wrap_u64(v),                     \
	int64_t: (int64_t)lmi_wrap_u64(v), uint8_t: (uint8_t)lmi_wrap_u64(v), default: (T)(v))

/* One kernel per (destination, source) pair. Float sources go through lmi_wrap_u64 when the
 * destination is an integer; everything else is a C conversion (integers wrap modulo 2^bits). */
#define COPY_KERNEL(DT, ST, SRC_IS_FLOAT)                                                           \
	static void copy_##DT##_##ST(void *ctx, char **p, const int64_t *s, int64_t n)                  \
	{                                                                                           \
		(void)ctx;                                                                              \
		DT *d = (DT *)p[0];                                                                     \
		const char *src = p[1];                                                                 \
		int64_t ds = s[0] / (int64_t)sizeof(DT), ss = s[1];                                     \
		if (ds == 1 && ss == (int64_t)sizeof(ST)) {                                             \
			const ST *x = (const ST *)src;                                                      \
			for (int64_t i = 0; i < n; i++)                                                     \
				d[i] = SRC_IS_FLOAT ? CONV_F(DT, (double)x[i]) : (DT)x[i];                      \
		} else {                                                                                \
			for (int64_t i = 0; i < n; i++) {                                                   \
				ST v = *(const ST *)(src + i * ss);                                             \
				d[i * ds] = SRC_IS_FLOAT ? CONV_F(DT, (double)v) : (DT)v;                       \
			}                                                                                   \
		}                                                                                       \
	}

#define COPY_ROW(DT)                                                                                \
	COPY_KERNEL(DT, float, 1)                                                                       \
	COPY_KERNEL(DT, double, 1)                                                                      \
	COPY_KERNEL(DT, int32_t, 0)                                                                     \
	COPY_KERNEL(DT, int64_t, 0) COPY_KERNEL(DT, uint8_t, 0)

COPY_ROW(float)
COPY_ROW(double)
COPY_ROW(int32_t)
COPY_ROW(int64_t)
COPY_ROW(uint8_t)

#define ROW(DT) {copy_##DT##_float, copy_##DT##_double, copy_##DT##_int32_t, copy_##DT##_int64_t, \
	copy_##DT##_uint8_t}
static const lmi_iter_kernel copy_kernels[LM_DTYPE_COUNT][LM_DTYPE_COUNT] = {
	ROW(float), ROW(double), ROW(int32_t), ROW(int64_t), ROW(uint8_t),
};

/*
 * The pairs with a storage-only type (int8, float16, bfloat16) on either side, through the type
 * table: from an integer, the exact integer (set_int: wraps into an integer, rounds once into a
 * float); from a float, its value (set: truncates and wraps into an integer as CONV_F; into float16
 * and bfloat16 through float32, as PyTorch converts). Dense rows of float32 to and from float16
 * and bfloat16 take the table's row converters (to_float / from_float).
 */
typedef struct table_pair {
	const lm_dtype_traits *d, *s;
	int row; /* dense rows by the table's row converters: 1 float32 -> d, 2 s -> float32, 0 none */
} table_pair;

static void copy_by_table(void *ctx, char **p, const int64_t *s, int64_t n)
{
	const table_pair *tp = ctx;
	const lm_dtype_traits *d = tp->d, *t = tp->s;
	if (tp->row && s[0] == (int64_t)d->type_size && s[1] == (int64_t)t->type_size) {
		if (tp->row == 1)
			d->from_float((const float *)p[1], p[0], n);
		else
			t->to_float(p[1], (float *)p[0], n);
		return;
	}
	if (t->is_int)
		for (int64_t i = 0; i < n; i++) d->set_int(p[0] + i * s[0], t->get_int(p[1] + i * s[1]));
	else
		for (int64_t i = 0; i < n; i++) d->set(p[0] + i * s[0], t->get(p[1] + i * s[1]));
}

/* Copies to or from a block type (CPU, both dense): through float32, whole rows at once (a block
 * tensor's last dim is a multiple of its block). */
static lm_status copy_blocks(lm_tensor *dst, const lm_tensor *src)
{
	const lm_dtype_traits *d = &lmi_dtypes[dst->dtype], *s = &lmi_dtypes[src->dtype];
	int64_t n = lm_tensor_numel(dst);
	if (dst->dtype == src->dtype) {
		if (!lm_tensor_is_contiguous(dst) || !lm_tensor_is_contiguous(src))
			return lmi_block_refuse("copy_", dst->dtype);
		memcpy(lmi_data(dst), lmi_data(src), lm_tensor_nbytes(dst));
		return LM_OK;
	}
	lm_tensor *f = NULL;
	lm_status st = LM_OK;
	if (s->block_size > 1) { /* dequantize into float32, then into dst's type and layout */
		if (!lm_tensor_is_contiguous(src)) return lmi_block_refuse("copy_", src->dtype);
		if (!(f = lmi_empty("copy_", src->ndim, src->shape, LM_FLOAT32))) return lm_last_status();
		s->to_float(lmi_data(src), (float *)lmi_data(f), n);
		st = d->block_size > 1 ? copy_blocks(dst, f) : lmi_copy(dst, f);
	} else { /* quantize a dense float32 copy of src */
		if (!lm_tensor_is_contiguous(dst)) return lmi_block_refuse("copy_", dst->dtype);
		if (!(f = lmi_empty("copy_", dst->ndim, dst->shape, LM_FLOAT32))) return lm_last_status();
		const float *x = (const float *)lmi_data(f);
		if (!(st = lmi_copy(f, src)))
			for (int64_t i = 0; i < n; i++)
				if (!isfinite(x[i])) {
					st = lmi_fail(LM_ERR_ARG, "to %s: element %lld (1-based, in C order) of shape %s is %s; "
					              "quantization takes finite values only", d->name, lmi_1(i),
					              lmi_shape_s(dst), isnan(x[i]) ? "nan" : x[i] > 0 ? "inf" : "-inf");
					break;
				}
		if (!st) d->from_float(x, lmi_data(dst), n);
	}
	lm_tensor_release(f);
	return st;
}

/* Same-dtype copy of a row: memcpy when both are dense, else a typed strided loop. */
#define MOVE_ROW(T)                                                                                 \
	static void move_##T(char **p, const int64_t *s, int64_t n)                                     \
	{                                                                                           \
		for (int64_t i = 0; i < n; i++) *(T *)(p[0] + i * s[0]) = *(const T *)(p[1] + i * s[1]); \
	}
MOVE_ROW(uint8_t)
MOVE_ROW(uint32_t)
MOVE_ROW(uint64_t)

static void copy_bytes(void *ctx, char **p, const int64_t *s, int64_t n)
{
	size_t es = *(const size_t *)ctx;
	if (s[0] == (int64_t)es && s[1] == (int64_t)es) {
		memcpy(p[0], p[1], (size_t)n * es);
		return;
	}
	switch (es) {
	case 1: move_uint8_t(p, s, n); break;
	case 4: move_uint32_t(p, s, n); break;
	case 8: move_uint64_t(p, s, n); break;
	default:
		for (int64_t i = 0; i < n; i++) memcpy(p[0] + i * s[0], p[1] + i * s[1], es);
	}
}

/*
 * A 2-D transposing copy (dst dense along its rows, src dense along its columns, or the other way
 * round) in 32 x 32 tiles, so that both sides stay in cache: row-by-row it would touch a new cache
 * line for every element of the strided side.
 */
#define TILE 32
#define TRANSPOSE(T)                                                                                \
	static void transpose_##T(char *d, const char *s, int64_t rows, int64_t cols, int64_t drs,      \
	                          int64_t dcs, int64_t srs, int64_t scs)                               \
	{                                                                                           \
		_Pragma("omp parallel for schedule(static) if (rows * cols > LMI_PARALLEL_GRAIN)")      \
		for (int64_t i0 = 0; i0 < rows; i0 += TILE)                                             \
			for (int64_t j0 = 0; j0 < cols; j0 += TILE)                                         \
				for (int64_t i = i0; i < i0 + TILE && i < rows; i++)                            \
					for (int64_t j = j0; j < j0 + TILE && j < cols; j++)                        \
						*(T *)(d + i * drs + j * dcs) = *(const T *)(s + i * srs + j * scs);    \
	}
TRANSPOSE(uint32_t)
TRANSPOSE(uint64_t)

static bool try_transpose(const lmi_iter *it, size_t es)
{
	if (it->ndim != 2 || (es != 4 && es != 8) || it->numel < 4096) return false;
	const int64_t *d = it->stride[0], *s = it->stride[1], e = (int64_t)es;
	bool pattern = (d[1] == e && s[0] == e) || (d[0] == e && s[1] == e);
	if (!pattern) return false;
	if (es == 4)
		transpose_uint32_t(it->base[0], it->base[1], it->shape[0], it->shape[1], d[0], d[1], s[0], s[1]);
	else
		transpose_uint64_t(it->base[0], it->base[1], it->shape[0], it->shape[1], d[0], d[1], s[0], s[1]);
	return true;
}

/* Copies between two CPU tensors. */
static lm_status copy_cpu(lm_tensor *dst, const lm_tensor *src)
{
	if (lmi_is_block(dst->dtype) || lmi_is_block(src->dtype)) return copy_blocks(dst, src);
	lmi_iter it;
	const lm_tensor *ops[2] = {dst, src};
	lmi_iter_init(&it, 2, ops, dst->ndim, dst->shape);
	if (dst->dtype == src->dtype) {
		size_t es = lmi_elem_size(dst->dtype);
		if (it.ndim == 1 && it.stride[0][0] == (int64_t)es && it.stride[1][0] == (int64_t)es &&
		    it.numel < LMI_PARALLEL_GRAIN) {
			memcpy(it.base[0], it.base[1], (size_t)it.numel * es);
			return LM_OK;
		}
		if (!lmi_check_interrupt() && try_transpose(&it, es)) return LM_OK;
		return lmi_iter_run(&it, copy_bytes, &es);
	}
	lmi_iter_kernel k = dst->dtype < LM_INT8 && src->dtype < LM_INT8 ? copy_kernels[dst->dtype][src->dtype] : NULL;
	if (k) return lmi_iter_run(&it, k, NULL);
	table_pair tp = {&lmi_dtypes[dst->dtype], &lmi_dtypes[src->dtype], 0};
	if (src->dtype == LM_FLOAT32 && lmi_elem_size(dst->dtype) == 2) tp.row = 1; /* float16, bfloat16 */
	if (dst->dtype == LM_FLOAT32 && lmi_elem_size(src->dtype) == 2) tp.row = 2;
	return lmi_iter_run(&it, copy_by_table, &tp);
}

static lm_status copy_any(lm_tensor *dst, const lm_tensor *src)
{
	lm_device dd = dst->storage->device, sd = src->storage->device;
	if (dd == LM_CPU && sd == LM_CPU) return copy_cpu(dst, src);
	if (dd == sd) return lmi_device_ops_for(dd)->copy(dst, src);
	return lmi_copy_across(dst, src, copy_cpu);
}

lm_status lmi_copy(lm_tensor *dst, const lm_tensor *src)
{
	int d = lmi_capture_enter();
	lm_status s = copy_any(dst, src);
	lmi_capture_leave(d);
	if (d == 0 && !s) lmi_capture_copy(dst, src);
	return s;
}

#define FILL_KERNEL(T)                                                                              \
	static void fill_##T(void *ctx, char **p, const int64_t *s, int64_t n)                          \
	{                                                                                           \
		T v = *(const T *)ctx;                                                                  \
		if (s[0] == (int64_t)sizeof(T)) {                                                       \
			T *d = (T *)p[0];                                                                   \
			for (int64_t i = 0; i < n; i++) d[i] = v;                                           \
		} else {                                                                                \
			for (int64_t i = 0; i < n; i++) *(T *)(p[0] + i * s[0]) = v;                        \
		}                                                                                       \
	}
/* by the element's size: a fill writes the value's bytes, whatever they mean */
FILL_KERNEL(uint8_t)
FILL_KERNEL(uint16_t)
FILL_KERNEL(uint32_t)
FILL_KERNEL(uint64_t)

static lm_status fill_any(lm_tensor *t, double value);

lm_status lmi_fill(lm_tensor *t, double value)
{
	int d = lmi_capture_enter();
	lm_status s = fill_any(t, value);
	lmi_capture_leave(d);
	if (d == 0 && !s) lmi_capture_fill(t, value);
	return s;
}

static lm_status fill_any(lm_tensor *t, double value)
{
	if (t->storage->device != LM_CPU) return lmi_device_ops_for(t->storage->device)->fill(t, value);
	if (lmi_is_block(t->dtype)) return lmi_block_refuse("fill_", t->dtype);
	union {
		uint8_t b;
		uint16_t h;
		uint32_t i;
		uint64_t l;
	} v;
	lmi_store(&v, t->dtype, value);
	lmi_iter it;
	const lm_tensor *ops[1] = {t};
	lmi_iter_init(&it, 1, ops, t->ndim, t->shape);
	size_t es = lmi_elem_size(t->dtype);
	return lmi_iter_run(&it, es == 1 ? fill_uint8_t : es == 2 ? fill_uint16_t : es == 4 ? fill_uint32_t : fill_uint64_t, &v);
}

lm_status lmi_inplace_check(const char *fname, const lm_tensor *t)
{
	if (t->requires_grad && lmi_grad_enabled())
		return lmi_fail(LM_ERR_STATE,
		                "%s: in-place change of a tensor of shape %s that requires grad; wrap it in "
		                "no_grad or work on a copy", fname, lmi_shape_s(t));
	return LM_OK;
}

lm_status lm_fill_(lm_tensor *t, double value)
{
	lm_status s = lmi_inplace_check("fill_", t);
	if (s) return s;
	lmi_bump_version(t);
	return lmi_fill(t, value);
}

lm_status lm_zero_(lm_tensor *t)
{
	lm_status s = lmi_inplace_check("zero_", t);
	if (s) return s;
	lmi_bump_version(t);
	if (lm_tensor_is_contiguous(t) && t->storage->device == LM_CPU) {
		memset(lmi_data(t), 0, lm_tensor_nbytes(t));
		return LM_OK;
	}
	return lmi_fill(t, 0);
}

lm_tensor *lmi_contiguous_copy(const lm_tensor *t, lm_dtype dt)
{
	lm_tensor *out = lmi_empty_as("contiguous", t, t->ndim, t->shape, dt);
	if (!out) return NULL;
	if (lmi_copy(out, t)) {
		lm_tensor_release(out);
		return NULL;
	}
	return out;
}
