/*
 * window.c — CPU im2col and col2im: the data movement that turns a 2-D convolution into a gemm.
 *
 * x: (N, C, H, W) -> cols: (N, C*kh*kw, L), L = oh*ow; row (c, ki, kj) of cols holds, for each
 * output pixel (oy, ox), x[c, oy*sh - ph + ki*dh, ox*sw - pw + kj*dw] (0 outside the image).
 * For each row and output line the valid ox range [lo, hi) is computed once, so the inner loop has
 * no bounds tests: a memcpy when sw == 1, a strided copy otherwise, zero fills at the edges.
 * col2im is the adjoint (adds each column entry back to its pixel). Work is split over the N*C
 * planes with OpenMP: a plane's rows of cols and its pixels belong to one thread, so col2im
 * needs no atomics. Read next: ../../ops/window.c.
 */
#include <string.h>

#include "backend/cpu/cpu_move.h"

#define SBUF 8192 /* bytes of the L1 buffer for streamed output lines */

/* floor(a / b) for b > 0 and any sign of a. */
static inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Output columns ox in [lo, hi) read input columns ox*sw + x0 inside [0, W). */
static inline void valid_range(int64_t x0, int64_t sw, int64_t W, int64_t ow, int64_t *lo,
                               int64_t *hi)
{
	int64_t a = x0 >= 0 ? 0 : floor_div(-x0 + sw - 1, sw);      /* ceil(-x0 / sw) */
	int64_t b = W - 1 - x0 < 0 ? 0 : floor_div(W - 1 - x0, sw) + 1;
	if (a > ow) a = ow;
	if (b > ow) b = ow;
	if (b < a) b = a;
	*lo = a;
	*hi = b;
}

/* One output line: d[ox] = img row iy at columns ox*sw + x0 (zeros outside). */
#define IM2COL_LINE(T)                                                                              \
	static inline void im2col_line_##T(T *d, const T *img, int64_t H, int64_t W, int64_t iy,      \
	                                   int64_t x0, int64_t sw, int64_t lo, int64_t hi, int64_t ow) \
	{                                                                                           \
		if (iy < 0 || iy >= H) {                                                                \
			memset(d, 0, (size_t)ow * sizeof(T));                                               \
			return;                                                                             \
		}                                                                                       \
		const T *s = img + iy * W;                                                              \
		memset(d, 0, (size_t)lo * sizeof(T));                                                   \
		if (sw == 1 && hi > lo)                                                                 \
			memcpy(d + lo, s + lo + x0, (size_t)(hi - lo) * sizeof(T));                         \
		else                                                                                    \
			for (int64_t ox = lo; ox < hi; ox++) d[ox] = s[ox * sw + x0];                       \
		memset(d + hi, 0, (size_t)(ow - hi) * sizeof(T));                                       \
	}

/*
 * One (n, c) plane: img (H, W) -> its kh*kw rows of cols, each of L = oh*ow. With `stream`, the
 * lines are assembled in an L1 buffer and written out with non-temporal stores (large outputs
 * only: a VGG layer's 75 MB of columns went 12.5 -> 9 ms that way on one core).
 */
#define IM2COL_PLANE(T)                                                                             \
	static void im2col_plane_##T(const T *img, T *cols, int64_t H, int64_t W, const lm_window2d *w, \
	                            int64_t oh, int64_t ow, bool stream)                            \
	{                                                                                           \
		_Alignas(64) T buf[SBUF / sizeof(T)];                                                   \
		int64_t per = (int64_t)(SBUF / sizeof(T)) / (ow ? ow : 1); /* lines per buffer */       \
		if (per < 1) stream = false;                                                            \
		for (int64_t ki = 0; ki < w->kh; ki++)                                                  \
			for (int64_t kj = 0; kj < w->kw; kj++) {                                            \
				T *row = cols + (ki * w->kw + kj) * oh * ow;                                    \
				int64_t x0 = kj * w->dw - w->pw, lo, hi;                                        \
				valid_range(x0, w->sw, W, ow, &lo, &hi);                                        \
				for (int64_t oy = 0; oy < oh;) {                                                \
					int64_t m = stream ? (oh - oy < per ? oh - oy : per) : 1;                   \
					for (int64_t q = 0; q < m; q++)                                             \
						im2col_line_##T(stream ? buf + q * ow : row + (oy + q) * ow, img, H, W,  \
						                (oy + q) * w->sh - w->ph + ki * w->dh, x0, w->sw, lo,   \
						                hi, ow);                                                \
					if (stream) lmi_stream_copy(row + oy * ow, buf, (size_t)(m * ow) * sizeof(T)); \
					oy += m;                                                                    \
				}                                                                               \
			}                                                                                   \
		if (stream) lmi_stream_fence();                                                         \
	}

/* One (n, c) plane: img (H, W) = the sum of its kh*kw rows of cols put back. ADD wraps for ints. */
#define COL2IM_PLANE(T, ADD)                                                                        \
	static void col2im_plane_##T(const T *cols, T *img, int64_t H, int64_t W,                     \
	                            const lm_window2d *w, int64_t oh, int64_t ow)                   \
	{                                                                                           \
		memset(img, 0, (size_t)(H * W) * sizeof(T));                                            \
		for (int64_t ki = 0; ki < w->kh; ki++)                                                  \
			for (int64_t kj = 0; kj < w->kw; kj++) {                                            \
				const T *row = cols + (ki * w->kw + kj) * oh * ow;                              \
				int64_t x0 = kj * w->dw - w->pw, lo, hi;                                        \
				valid_range(x0, w->sw, W, ow, &lo, &hi);                                        \
				for (int64_t oy = 0; oy < oh; oy++) {                                           \
					int64_t iy = oy * w->sh - w->ph + ki * w->dh;                               \
					if (iy < 0 || iy >= H) continue;                                            \
					const T *s = row + oy * ow;                                                 \
					T *d = img + iy * W;                                                        \
					if (w->sw == 1) {                                                           \
						_Pragma("omp simd") for (int64_t ox = lo; ox < hi; ox++)                \
							d[ox + x0] = ADD(d[ox + x0], s[ox]);                                \
					} else {                                                                    \
						for (int64_t ox = lo; ox < hi; ox++)                                    \
							d[ox * w->sw + x0] = ADD(d[ox * w->sw + x0], s[ox]);                \
					}                                                                           \
				}                                                                               \
			}                                                                                   \
	}

#define FADD(a, b) ((a) + (b))
#define IADD32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define IADD64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define IADD8(a, b) ((uint8_t)((a) + (b)))

IM2COL_LINE(float)
IM2COL_LINE(double)
IM2COL_LINE(int32_t)
IM2COL_LINE(int64_t)
IM2COL_LINE(uint8_t)
IM2COL_PLANE(float)
IM2COL_PLANE(double)
IM2COL_PLANE(int32_t)
IM2COL_PLANE(int64_t)
IM2COL_PLANE(uint8_t)
COL2IM_PLANE(float, FADD)
COL2IM_PLANE(double, FADD)
COL2IM_PLANE(int32_t, IADD32)
COL2IM_PLANE(int64_t, IADD64)
COL2IM_PLANE(uint8_t, IADD8)

/* Runs BODY for each of the N*C planes on the thread pool, polling for interrupts. */
#define FOR_PLANES(fname, planes, work, BODY)                                                       \
	do {                                                                                        \
		lmi_par_err perr_;                                                                      \
		lmi_par_init(&perr_);                                                                   \
		int nt_ = (planes) > 1 && (work) >= LMI_PARALLEL_GRAIN ? lmi_num_threads() : 1;         \
		_Pragma("omp parallel for schedule(static) num_threads(nt_)")                           \
		for (int64_t p = 0; p < (planes); p++) {                                                \
			if (atomic_load_explicit(&perr_.set, memory_order_relaxed)) continue;               \
			if (lmi_check_interrupt()) {                                                        \
				lmi_par_fail(&perr_, LM_ERR_INTERRUPTED, "%s: interrupted", fname);             \
				continue;                                                                       \
			}                                                                                   \
			BODY;                                                                               \
		}                                                                                       \
		return lmi_par_finish(&perr_);                                                          \
	} while (0)

lm_status lmi_cpu_im2col(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                         lm_tensor *cols)
{
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	int64_t planes = N * C, in_plane = H * W, out_plane = w->kh * w->kw * oh * ow;
	if (planes == 0 || out_plane == 0) return LM_OK;
	const char *xb = lmi_data(x);
	char *cb = lmi_data(cols);
	size_t es = lmi_elem_size(x->dtype);
	bool stream = planes * out_plane * (int64_t)es >= LMI_STREAM_BYTES;
	/* plane p = (n, c): its rows of cols start at row c*kh*kw of sample n, i.e. p * out_plane */
#define IM2COL_CASE(T)                                                                              \
	FOR_PLANES("im2col", planes, planes * out_plane,                                            \
	           im2col_plane_##T((const T *)(xb + (size_t)(p * in_plane) * es),                   \
	                            (T *)(cb + (size_t)(p * out_plane) * es), H, W, w, oh, ow, stream))
	switch (x->dtype) {
	case LM_FLOAT32: IM2COL_CASE(float);
	case LM_FLOAT64: IM2COL_CASE(double);
	case LM_INT32: IM2COL_CASE(int32_t);
	case LM_INT64: IM2COL_CASE(int64_t);
	case LM_UINT8: IM2COL_CASE(uint8_t);
	default: LM_ASSERT(0 && "im2col dtype");
	}
#undef IM2COL_CASE
	return LM_OK;
}

lm_status lmi_cpu_col2im(const lm_tensor *cols, const lm_window2d *w, int64_t oh, int64_t ow,
                         lm_tensor *out)
{
	int64_t N = out->shape[0], C = out->shape[1], H = out->shape[2], W = out->shape[3];
	int64_t planes = N * C, in_plane = w->kh * w->kw * oh * ow, out_plane = H * W;
	if (planes == 0 || out_plane == 0) return LM_OK;
	const char *cb = lmi_data(cols);
	char *ob = lmi_data(out);
	size_t es = lmi_elem_size(out->dtype);
#define COL2IM_CASE(T)                                                                              \
	FOR_PLANES("col2im", planes, planes * (in_plane + out_plane),                               \
	           col2im_plane_##T((const T *)(cb + (size_t)(p * in_plane) * es),                  \
	                            (T *)(ob + (size_t)(p * out_plane) * es), H, W, w, oh, ow))
	switch (out->dtype) {
	case LM_FLOAT32: COL2IM_CASE(float);
	case LM_FLOAT64: COL2IM_CASE(double);
	case LM_INT32: COL2IM_CASE(int32_t);
	case LM_INT64: COL2IM_CASE(int64_t);
	case LM_UINT8: COL2IM_CASE(uint8_t);
	default: LM_ASSERT(0 && "col2im dtype");
	}
#undef COL2IM_CASE
	return LM_OK;
}

/*
 * Channels-last windows: x (N, H, W, C) contiguous -> cols (N, oh*ow, kh*kw*C) contiguous, one row
 * per output position and in it, window position by window position, the C channels of that input
 * pixel: a memcpy of C elements each (zeros outside the image), whatever the dtype. Rows of one
 * output line (n, oy) belong to one thread.
 */
static void im2col_nhwc_line(const char *img, char *d, int64_t H, int64_t W, int64_t oy, int64_t ow,
                             const lm_window2d *w, size_t run)
{
	for (int64_t ox = 0; ox < ow; ox++)
		for (int64_t ki = 0; ki < w->kh; ki++) {
			int64_t iy = oy * w->sh - w->ph + ki * w->dh;
			for (int64_t kj = 0; kj < w->kw; kj++, d += run) {
				int64_t ix = ox * w->sw - w->pw + kj * w->dw;
				if (iy < 0 || iy >= H || ix < 0 || ix >= W)
					memset(d, 0, run);
				else
					memcpy(d, img + (size_t)(iy * W + ix) * run, run);
			}
		}
}

lm_status lmi_cpu_im2col_nhwc(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                              lm_tensor *cols)
{
	int64_t N = x->shape[0], H = x->shape[1], W = x->shape[2], C = x->shape[3];
	int64_t lines = N * oh, row = w->kh * w->kw * C;
	if (lines == 0 || ow == 0 || row == 0) return LM_OK;
	const char *xb = lmi_data(x);
	char *cb = lmi_data(cols);
	size_t es = lmi_elem_size(x->dtype), run = (size_t)C * es;
	FOR_PLANES("im2col_nhwc", lines, lines * ow * row,
	           im2col_nhwc_line(xb + (size_t)((p / oh) * H * W) * run, cb + (size_t)(p * ow * row) * es, H, W,
	                            p % oh, ow, w, run));
}
