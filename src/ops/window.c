/*
 * window.c — im2col and col2im: 2-D sliding windows (kernel, stride, zero padding, dilation) as
 * plain differentiable ops, for the convolution and pooling layers.
 *
 * x: (N, C, H, W) -> cols: (N, C*kh*kw, L) with L = oh*ow and
 *   oh = (H + 2*ph - dh*(kh-1) - 1) / sh + 1 (ow likewise), the layout of torch.nn.functional.unfold.
 * A 3-D (C, H, W) input is one unbatched image (cols (C*kh*kw, L)). The two ops are adjoint, so
 * each one's backward rule is the other. Read next: ../backend/cpu/window.c.
 */
#include "ops.h"

/* Checks the window's parameters against an h x wd input; names fname in errors. */
static lm_status window_out(const char *fname, const lm_window2d *w, int64_t h, int64_t wd,
                            int64_t *oh, int64_t *ow)
{
	if (!w) return lmi_fail(LM_ERR_ARG, "%s: the window is NULL", fname);
	if (w->kh < 1 || w->kw < 1 || w->sh < 1 || w->sw < 1 || w->dh < 1 || w->dw < 1)
		return lmi_fail(LM_ERR_ARG, "%s: kernel (%lld, %lld), stride (%lld, %lld) and dilation "
		                "(%lld, %lld) must all be >= 1", fname, (long long)w->kh, (long long)w->kw,
		                (long long)w->sh, (long long)w->sw, (long long)w->dh, (long long)w->dw);
	if (w->ph < 0 || w->pw < 0)
		return lmi_fail(LM_ERR_ARG, "%s: padding (%lld, %lld) must be >= 0", fname,
		                (long long)w->ph, (long long)w->pw);
	if (h < 0 || wd < 0)
		return lmi_fail(LM_ERR_ARG, "%s: image size %lld x %lld is negative", fname, (long long)h,
		                (long long)wd);
	/* sizes stay far below 2^62, so these products cannot overflow after this check */
	const int64_t big = (int64_t)1 << 30;
	if (w->kh > big || w->kw > big || w->dh > big || w->dw > big || w->ph > big || w->pw > big ||
	    h > big || wd > big)
		return lmi_fail(LM_ERR_OVERFLOW, "%s: window or image sizes above 2^30", fname);
	int64_t eh = w->dh * (w->kh - 1) + 1, ew = w->dw * (w->kw - 1) + 1;
	int64_t H = h + 2 * w->ph, W = wd + 2 * w->pw;
	if (eh > H || ew > W)
		return lmi_fail(LM_ERR_SHAPE, "%s: the window (%lld x %lld with dilation: kernel (%lld, "
		                "%lld), dilation (%lld, %lld)) is larger than the padded input (%lld x %lld: "
		                "%lld x %lld with padding (%lld, %lld))", fname, (long long)eh, (long long)ew,
		                (long long)w->kh, (long long)w->kw, (long long)w->dh, (long long)w->dw,
		                (long long)H, (long long)W, (long long)h, (long long)wd, (long long)w->ph,
		                (long long)w->pw);
	*oh = (H - eh) / w->sh + 1;
	*ow = (W - ew) / w->sw + 1;
	return LM_OK;
}

lm_status lm_window2d_out(const lm_window2d *w, int64_t h, int64_t wd, int64_t *oh, int64_t *ow)
{
	if (!oh || !ow) return lmi_fail(LM_ERR_ARG, "window2d: the result pointers must not be NULL");
	return window_out("window2d", w, h, wd, oh, ow);
}

/* ---------------------------------------------------------------- backward rules */

/* The node's parameters: the window, and the image's channels and size. */
static lmi_params window_params(const lm_window2d *w, int64_t C, int64_t H, int64_t W)
{
	return (lmi_params){.window = {.kh = w->kh, .kw = w->kw, .sh = w->sh, .sw = w->sw, .ph = w->ph, .pw = w->pw,
	                               .dh = w->dh, .dw = w->dw, .channels = C, .height = H, .width = W}};
}

static lm_window2d node_window(const lmi_node *n)
{
	const lmi_p_window *p = &n->p.window;
	return (lm_window2d){p->kh, p->kw, p->sh, p->sw, p->ph, p->pw, p->dh, p->dw};
}

/* im2col's adjoint is col2im: gx = col2im(g). */
lm_status lmi_bw_im2col(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	lm_window2d w = node_window(n);
	gin[0] = lm_col2im(g, n->p.window.channels, n->p.window.height, n->p.window.width, &w);
	return gin[0] ? LM_OK : lm_last_status();
}

/* col2im's adjoint is im2col: gcols = im2col(g). */
lm_status lmi_bw_col2im(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	lm_window2d w = node_window(n);
	gin[0] = lm_im2col(g, &w);
	return gin[0] ? LM_OK : lm_last_status();
}

/* ---------------------------------------------------------------- forward */

/* Runs window op `op` on x seen as the dense 4-D shape s (copied first when strided) into a new
 * result of shape (ond, oshape): the result, or NULL with the error set. */
static lm_tensor *run_dense4(const char *fname, lmi_op op, const lm_tensor *x, const int64_t s[4],
                             const lmi_params *prm, int ond, const int64_t *oshape)
{
	lm_tensor *out = lmi_empty_as(fname, x, ond, oshape, x->dtype);
	lm_tensor *xc = !out ? NULL
	                : lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                             : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *x4 = xc ? lmi_view_of(xc, 4, s, (int64_t[]){s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}, xc->offset)
	                   : NULL;
	if (!x4 || lmi_run(fname, op, prm, x->dtype, 1, (const lm_tensor *[]){x4}, 1, (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(x4);
	lm_tensor_release(xc);
	return out;
}

lm_tensor *lm_im2col(const lm_tensor *x, const lm_window2d *w)
{
	if (lmi_check_arg("im2col", "input", x) || lmi_check_device("im2col", 1, &x)) return NULL;
	if (x->ndim != 4 && x->ndim != 3)
		return lmi_fail_null(LM_ERR_SHAPE, "im2col: expects (N, C, H, W) or (C, H, W), got shape %s",
		                     lmi_shape_s(x));
	bool batched = x->ndim == 4;
	int64_t N = batched ? x->shape[0] : 1, C = x->shape[x->ndim - 3];
	int64_t H = x->shape[x->ndim - 2], W = x->shape[x->ndim - 1], oh, ow;
	if (window_out("im2col", w, H, W, &oh, &ow)) return NULL;
	int64_t rows, L = oh * ow;
	if (__builtin_mul_overflow(C, w->kh * w->kw, &rows))
		return lmi_fail_null(LM_ERR_OVERFLOW, "im2col: C*kh*kw overflows for shape %s",
		                     lmi_shape_s(x));
	int64_t shape[3] = {N, rows, L};
	lmi_params prm = window_params(w, C, H, W);
	prm.window.oh = oh;
	prm.window.ow = ow;
	lm_tensor *out = run_dense4("im2col", LMI_OP_IM2COL, x, (int64_t[]){N, C, H, W}, &prm, batched ? 3 : 2,
	                            shape + !batched);
	return lmi_finish(out, LMI_OP_IM2COL, &prm, 1, &x, 0, NULL, NULL);
}

/* Channels last (ops.h): one row per output position; a node without a backward rule. */
lm_tensor *lm_im2col_nhwc(const lm_tensor *x, const lm_window2d *w)
{
	if (lmi_check_arg("im2col_nhwc", "input", x) || lmi_check_device("im2col_nhwc", 1, &x)) return NULL;
	if (x->ndim != 4 && x->ndim != 3)
		return lmi_fail_null(LM_ERR_SHAPE, "im2col_nhwc: expects (N, H, W, C) or (H, W, C), got shape %s",
		                     lmi_shape_s(x));
	if (lm_grad_enabled() && lm_tensor_requires_grad(x))
		return lmi_fail_null(LM_ERR_ARG, "im2col_nhwc: has no backward rule and the input requires grad "
		                     "(use im2col, or call it under lm.no_grad)");
	bool batched = x->ndim == 4;
	int64_t N = batched ? x->shape[0] : 1, C = x->shape[x->ndim - 1];
	int64_t H = x->shape[x->ndim - 3], W = x->shape[x->ndim - 2], oh, ow;
	if (window_out("im2col_nhwc", w, H, W, &oh, &ow)) return NULL;
	int64_t cols, L = oh * ow;
	if (__builtin_mul_overflow(C, w->kh * w->kw, &cols))
		return lmi_fail_null(LM_ERR_OVERFLOW, "im2col_nhwc: kh*kw*C overflows for shape %s", lmi_shape_s(x));
	int64_t shape[3] = {N, L, cols};
	lmi_params prm = window_params(w, C, H, W);
	prm.window.oh = oh;
	prm.window.ow = ow;
	return run_dense4("im2col_nhwc", LMI_OP_IM2COL_NHWC, x, (int64_t[]){N, H, W, C}, &prm, batched ? 3 : 2,
	                  shape + !batched);
}

lm_tensor *lm_col2im(const lm_tensor *cols, int64_t channels, int64_t h, int64_t wd,
                     const lm_window2d *w)
{
	if (lmi_check_arg("col2im", "columns", cols) || lmi_check_device("col2im", 1, &cols))
		return NULL;
	if (cols->ndim != 3 && cols->ndim != 2)
		return lmi_fail_null(LM_ERR_SHAPE, "col2im: expects columns (N, C*kh*kw, L) or (C*kh*kw, "
		                     "L), got shape %s", lmi_shape_s(cols));
	if (channels < 0)
		return lmi_fail_null(LM_ERR_ARG, "col2im: channels %lld is negative", (long long)channels);
	int64_t oh, ow;
	if (window_out("col2im", w, h, wd, &oh, &ow)) return NULL;
	bool batched = cols->ndim == 3;
	int64_t N = batched ? cols->shape[0] : 1, rows = cols->shape[cols->ndim - 2];
	int64_t L = cols->shape[cols->ndim - 1], want;
	if (__builtin_mul_overflow(channels, w->kh * w->kw, &want) || rows != want || L != oh * ow)
		return lmi_fail_null(LM_ERR_SHAPE, "col2im: columns of shape %s do not match %lld channels "
		                     "with a %lld x %lld kernel on a %lld x %lld image (expected %lld rows "
		                     "of %lld x %lld = %lld positions)", lmi_shape_s(cols),
		                     (long long)channels, (long long)w->kh, (long long)w->kw, (long long)h,
		                     (long long)wd, (long long)want, (long long)oh,
		                     (long long)ow, (long long)(oh * ow));
	int64_t shape[4] = {N, channels, h, wd};
	lm_tensor *out = lmi_empty_as("col2im", cols, batched ? 4 : 3, shape + !batched, cols->dtype);
	lm_tensor *cc = !out ? NULL
	                : lm_tensor_is_contiguous(cols) ? lm_tensor_retain((lm_tensor *)cols)
	                                                : lmi_contiguous_copy(cols, cols->dtype);
	lm_tensor *o4 = cc ? lmi_view_of(out, 4, shape, (int64_t[]){channels * h * wd, h * wd, wd, 1},
	                                 0)
	                   : NULL;
	lmi_params prm = window_params(w, channels, h, wd);
	prm.window.oh = oh;
	prm.window.ow = ow;
	if (!o4 || lmi_run("col2im", LMI_OP_COL2IM, &prm, cols->dtype, 1, (const lm_tensor *[]){cc}, 1, (lm_tensor *[]){o4})) {
		lm_tensor_release(out);
		out = NULL;
	}
	lm_tensor_release(o4);
	lm_tensor_release(cc);
	out = lmi_finish(out, LMI_OP_COL2IM, &prm, 1, &cols, 0, NULL, NULL);
	return out;
}
