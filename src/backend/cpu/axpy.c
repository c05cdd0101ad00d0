/*
 * axpy.c — CPU loop of out = a + alpha * b, driven by lmi_iter_run_out (broadcasting, OpenMP
 * chunks, large outputs streamed).
 *
 * One 1-D kernel per dtype with the layouts that matter specialised: all dense (vectorised), one
 * side broadcast along the row (a bias or a scalar), and general strides. Written as a + alpha*b
 * rather than fma so that float results match the two-op expression a + (alpha * b) bit for bit.
 * Integer arithmetic wraps (done in unsigned types). Read next: ../../ops/axpy.c.
 */
#include "backend/cpu/axpy.h"

typedef struct axpy_ctx {
	double f;  /* alpha for float dtypes */
	int64_t i; /* alpha for integer dtypes (integral; wraps like the arithmetic) */
} axpy_ctx;

#define AXPY_KERNEL(NAME, T, CT, ALPHA, EXPR)                                                           \
	static void NAME(void *vctx, char **p, const int64_t *s, int64_t n)                             \
	{                                                                                           \
		const axpy_ctx *c_ = vctx;                                                              \
		const CT al = (CT)(ALPHA);                                                              \
		const int64_t es = (int64_t)sizeof(T);                                                  \
		if (s[0] == es && s[1] == es && s[2] == es) {                                           \
			T *o = (T *)p[0];                                                                   \
			const T *a = (const T *)p[1], *b = (const T *)p[2];                                 \
			_Pragma("omp simd") for (int64_t i = 0; i < n; i++) o[i] = EXPR(a[i], b[i]);        \
		} else if (s[0] == es && s[1] == es && s[2] == 0) {                                     \
			T *o = (T *)p[0];                                                                   \
			const T *a = (const T *)p[1], bv = *(const T *)p[2];                                \
			_Pragma("omp simd") for (int64_t i = 0; i < n; i++) o[i] = EXPR(a[i], bv);          \
		} else if (s[0] == es && s[1] == 0 && s[2] == es) {                                     \
			T *o = (T *)p[0];                                                                   \
			const T av = *(const T *)p[1], *b = (const T *)p[2];                                \
			_Pragma("omp simd") for (int64_t i = 0; i < n; i++) o[i] = EXPR(av, b[i]);          \
		} else {                                                                                \
			for (int64_t i = 0; i < n; i++)                                                     \
				*(T *)(p[0] + i * s[0]) =                                                       \
					EXPR(*(const T *)(p[1] + i * s[1]), *(const T *)(p[2] + i * s[2]));         \
		}                                                                                       \
	}

#define FAXPY(x, y) ((x) + al * (y))
#define IAXPY32(x, y) ((int32_t)((uint32_t)(x) + al * (uint32_t)(y)))
#define IAXPY64(x, y) ((int64_t)((uint64_t)(x) + al * (uint64_t)(y)))
#define IAXPY8(x, y) ((uint8_t)((uint32_t)(x) + al * (uint32_t)(y)))

/* integer alpha as the wrapped unsigned factor (alpha is integral, checked by the op) */
AXPY_KERNEL(axpy_f32, float, float, c_->f, FAXPY)
AXPY_KERNEL(axpy_f64, double, double, c_->f, FAXPY)
AXPY_KERNEL(axpy_i32, int32_t, uint32_t, (uint64_t)c_->i, IAXPY32)
AXPY_KERNEL(axpy_i64, int64_t, uint64_t, (uint64_t)c_->i, IAXPY64)
AXPY_KERNEL(axpy_u8, uint8_t, uint32_t, (uint64_t)c_->i, IAXPY8)

static const lmi_iter_kernel kernels[LM_DTYPE_COUNT] = {axpy_f32, axpy_f64, axpy_i32, axpy_i64,
                                                        axpy_u8};

lm_status lmi_cpu_add_scaled(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double alpha)
{
	LM_ASSERT(a->dtype == out->dtype && b->dtype == out->dtype);
	axpy_ctx c = {alpha, 0};
	if (!lm_dtype_is_float(out->dtype)) /* integral and in range: checked by the op */
		c.i = alpha < -9.2e18 ? INT64_MIN : alpha > 9.2e18 ? INT64_MAX : (int64_t)alpha;
	lmi_iter it;
	const lm_tensor *ops[3] = {out, a, b};
	lmi_iter_init(&it, 3, ops, out->ndim, out->shape);
	/* an in-place update (out is a: a parameter, read again soon) stays in the cache */
	size_t es = out->storage == a->storage ? 0 : lm_dtype_size(out->dtype);
	return lmi_iter_run_out(&it, kernels[out->dtype], &c, es);
}
