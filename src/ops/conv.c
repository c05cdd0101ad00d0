/*
 * conv.c — convolution, pooling and embedding, mostly composed from im2col / col2im, matmul,
 * scatter_add and index_select, so their gradients follow from those ops' rules.
 *
 * conv2d runs one of two algorithms (lm_conv_algo; the automatic choice is measured, see
 * winograd_by_default). im2col: cols = im2col(x) (N, C*R*S, L); y = W (K, C*R*S) · cols -> (N, K,
 * L), per group; its backward is matmul's (W^T · g, g · cols^T summed over the batch) and col2im,
 * the adjoint of im2col. Winograd F(2x2, 3x3) for 3x3 stride-1 layers: one fused forward and one
 * fused backward in the CPU backend (backend/cpu/winograd.c), recorded as one node. max_pool2d
 * is one fused loop that also records argmax positions; its backward scatter-adds the gradient
 * there. avg_pool2d averages im2col's windows (padding counted).
 * Read next: nn.c, window.c (im2col), ../backend/cpu/winograd.c.
 */
#include <string.h>

#include "lumen/isa.h"
#include "lumen/nn.h"
#include "ops.h"

/* ---------------------------------------------------------------- conv2d */

/* A checked conv2d call: the geometry and the algorithm that will run. */
typedef struct conv_plan {
	int64_t N, C, H, W, K, R, S, g, OH, OW;
	lm_window2d win;
	lm_conv_algo algo;
} conv_plan;

static const char *const algo_names[LM_CONV_ALGO_COUNT] = {"auto", "im2col", "winograd"};

const char *lm_conv_algo_name(lm_conv_algo a)
{
	return (int)a >= 0 && a < LM_CONV_ALGO_COUNT ? algo_names[a] : "?";
}

/*
 * The automatic choice, by measurement (bench_nn, docs/architecture.md): Winograd computes 3x3
 * stride-1 layers 3-4x faster than im2col + OpenBLAS from 8 input channels on here (AVX-512 and
 * AVX2 paths), but with 1-4 channels its 16-channel vectors are mostly padding and im2col wins;
 * on the scalar path it is not vectorised at all. float64 keeps im2col (exact to the last bits of
 * a matmul); algo = 'winograd' asks for it in any case it can compute.
 */
static bool winograd_by_default(const lm_tensor *x, const conv_plan *p)
{
	return x->dtype == LM_FLOAT32 && p->C >= 8 && lm_isa_active() != LM_ISA_SCALAR &&
	       lm_tensor_device(x) == LM_CPU;
}

static lm_status conv_plan_make(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                                const lm_conv2d_opts *o, lm_conv_algo algo, conv_plan *p)
{
	if (lmi_check_float("conv2d", "input", x) || lmi_check_float("conv2d", "weight", w) ||
	    (b && lmi_check_float("conv2d", "bias", b)))
		return lm_last_status();
	if (x->dtype != w->dtype || (b && b->dtype != x->dtype))
		return lmi_fail(LM_ERR_DTYPE, "conv2d: input %s, weight %s%s%s must have one dtype",
		                lm_dtype_name(x->dtype), lm_dtype_name(w->dtype), b ? " and bias " : "",
		                b ? lm_dtype_name(b->dtype) : "");
	if (x->ndim != 4 || w->ndim != 4)
		return lmi_fail(LM_ERR_SHAPE, "conv2d: expects input (N, C, H, W) and weight (K, C/groups, "
		                "R, S), got %s and %s", lmi_shape_s(x), lmi_shape_s(w));
	int64_t g = o->groups ? o->groups : 1;
	int64_t st[2], dl[2];
	for (int i = 0; i < 2; i++) {
		st[i] = o->stride[i] ? o->stride[i] : 1;
		dl[i] = o->dilation[i] ? o->dilation[i] : 1;
		if (st[i] < 0 || dl[i] < 0 || o->padding[i] < 0)
			return lmi_fail(LM_ERR_ARG, "conv2d: stride %lld, padding %lld and dilation %lld must "
			                "be positive (padding >= 0)", (long long)o->stride[i],
			                (long long)o->padding[i], (long long)o->dilation[i]);
	}
	if ((int)algo < 0 || algo >= LM_CONV_ALGO_COUNT)
		return lmi_fail(LM_ERR_ARG, "conv2d: algo %d is not one of auto, im2col, winograd",
		                (int)algo);
	p->N = x->shape[0], p->C = x->shape[1], p->H = x->shape[2], p->W = x->shape[3];
	p->K = w->shape[0], p->R = w->shape[2], p->S = w->shape[3], p->g = g;
	if (g < 1 || p->C % g || p->K % g)
		return lmi_fail(LM_ERR_ARG, "conv2d: groups %lld must divide both the %lld input and "
		                "the %lld output channels", (long long)g, (long long)p->C, (long long)p->K);
	if (w->shape[1] != p->C / g)
		return lmi_fail(LM_ERR_SHAPE, "conv2d: weight %s expects %lld input channels per group, "
		                "the input %s has %lld (groups %lld)", lmi_shape_s(w),
		                (long long)w->shape[1], lmi_shape_s(x), (long long)(p->C / g), (long long)g);
	if (b && (b->ndim != 1 || b->shape[0] != p->K))
		return lmi_fail(LM_ERR_SHAPE, "conv2d: bias of shape %s for %lld output channels",
		                lmi_shape_s(b), (long long)p->K);
	p->win = (lm_window2d){p->R, p->S, st[0], st[1], o->padding[0], o->padding[1], dl[0], dl[1]};
	if (lm_window2d_out(&p->win, p->H, p->W, &p->OH, &p->OW)) {
		char msg[400];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		return lmi_fail(lm_last_status(), "conv2d: input %s, weight %s: %s", lmi_shape_s(x),
		                lmi_shape_s(w), msg);
	}
	bool wino = p->R == 3 && p->S == 3 && st[0] == 1 && st[1] == 1 && dl[0] == 1 && dl[1] == 1 &&
	            g == 1;
	p->algo = algo;
	if (p->algo == LM_CONV_WINOGRAD && !wino)
		return lmi_fail(LM_ERR_ARG, "conv2d: algo 'winograd' computes 3x3 kernels with stride 1, "
		                "dilation 1 and groups 1; got kernel %lldx%lld, stride %lldx%lld, dilation "
		                "%lldx%lld, groups %lld (algo 'im2col' or 'auto' computes it)",
		                (long long)p->R, (long long)p->S, (long long)st[0], (long long)st[1],
		                (long long)dl[0], (long long)dl[1], (long long)g);
	static const lmi_params none;
	lmi_exec we = {.op = LMI_OP_CONV2D_WINOGRAD, .p = &none, .fname = "conv2d", .dtype = x->dtype, .nsrc = 1, .src = {x}};
	if (p->algo == LM_CONV_WINOGRAD && !lmi_supports(&we)) return lmi_refuse(&we); /* no Winograd loop there */
	if (p->algo == LM_CONV_AUTO)
		p->algo = wino && winograd_by_default(x, p) ? LM_CONV_WINOGRAD : LM_CONV_IM2COL;
	return LM_OK;
}

static const lm_conv2d_opts conv_defaults = {{1, 1}, {0, 0}, {1, 1}, 1};

lm_conv_algo lm_conv2d_which(const lm_tensor *x, const lm_tensor *w, const lm_conv2d_opts *o,
                             lm_conv_algo algo)
{
	conv_plan p;
	return conv_plan_make(x, w, NULL, o ? o : &conv_defaults, algo, &p) ? LM_CONV_AUTO : p.algo;
}

/* Output positions below which conv2d and conv_transpose2d fold the batch into one gemm (their
 * per-image gemms would have fewer than this many columns). */
#define WIDE_L 256

/* cols = im2col(x) (N, C*R*S, L); y = W (K, C*R*S) . cols -> (N, K, L), per group; recorded as
 * those ops, whose rules give the gradient. */
static lm_tensor *conv2d_im2col(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                                const conv_plan *p)
{
	int64_t N = p->N, K = p->K, g = p->g;
	int64_t CRS = p->C / g * p->R * p->S, L = p->OH * p->OW;
	lm_tensor *cols = NULL, *colsg = NULL, *wg = NULL, *y = NULL, *yb = NULL, *out = NULL;
	cols = lm_im2col(x, &p->win); /* (N, C*R*S, L) */
	if (!cols) goto done;
	if (g == 1 && N > 1 && L < WIDE_L) {
		/* small outputs (a deep layer's 7 x 7): one gemm (K, CRS) . (CRS, N * L) instead of N thin
		 * ones, the columns and the product moved once each (measured: bench/generative) */
		lm_tensor *ct = NULL, *cc = NULL, *cv = NULL, *yk = NULL, *yv = NULL, *yp = NULL;
		wg = lm_reshape(w, 2, (int64_t[]){K, CRS});
		ct = wg ? lm_permute(cols, (int[]){1, 0, 2}) : NULL; /* (CRS, N, L) */
		cc = ct ? lm_contiguous(ct) : NULL;
		cv = cc ? lm_view(cc, 2, (int64_t[]){CRS, N * L}) : NULL;
		yk = cv ? lm_matmul(wg, cv) : NULL;                    /* (K, N * L) */
		yv = yk ? lm_view(yk, 3, (int64_t[]){K, N, L}) : NULL;
		yp = yv ? lm_permute(yv, (int[]){1, 0, 2}) : NULL;     /* (N, K, L) */
		y = yp ? lm_contiguous(yp) : NULL;
		lm_tensor_release(ct);
		lm_tensor_release(cc);
		lm_tensor_release(cv);
		lm_tensor_release(yk);
		lm_tensor_release(yv);
		lm_tensor_release(yp);
	} else if (g == 1) {
		wg = lm_reshape(w, 2, (int64_t[]){K, CRS});
		y = wg ? lm_matmul(wg, cols) : NULL; /* (N, K, L) */
	} else {
		colsg = lm_view(cols, 4, (int64_t[]){N, g, CRS, L});
		wg = colsg ? lm_reshape(w, 3, (int64_t[]){g, K / g, CRS}) : NULL;
		y = wg ? lm_matmul(wg, colsg) : NULL; /* (N, g, K/g, L) */
	}
	if (!y) goto done;
	if (b) {
		lm_tensor *bv = lm_view(b, g == 1 ? 3 : 4, g == 1 ? (int64_t[]){1, K, 1} : (int64_t[]){1, g, K / g, 1});
		yb = bv ? lm_add(y, bv) : NULL;
		lm_tensor_release(bv);
		if (!yb) goto done;
	}
	out = lm_reshape(yb ? yb : y, 4, (int64_t[]){N, K, p->OH, p->OW});
done:
	lm_tensor_release(cols);
	lm_tensor_release(colsg);
	lm_tensor_release(wg);
	lm_tensor_release(y);
	lm_tensor_release(yb);
	return out;
}

/*
 * The Winograd convolution's gradients, the exact adjoint of its forward (backend/cpu/winograd.c)
 * in one fused pass over the images, like max pooling's fused loop: gx and gw from the saved
 * x and w; gb = the sum of g over (N, OH, OW). Saved: [0] = x, [1] = w (contiguous);
 * i[0], i[1] = the padding.
 */
lm_status lmi_bw_winograd(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *x, *w;
	lm_status s;
	if ((s = lmi_node_saved(n, 0, &x)) || (s = lmi_node_saved(n, 1, &w))) return s;
	bool nx = n->in[0].needs_grad, nw = n->in[1].needs_grad, nb = n->nin > 2 && n->in[2].needs_grad;
	lm_tensor *gc = lm_tensor_is_contiguous(g) ? lm_tensor_retain((lm_tensor *)g)
	                                           : lmi_contiguous_copy(g, g->dtype);
	lm_tensor *gx = gc && nx ? lmi_empty_as("conv2d backward", x, 4, x->shape, x->dtype) : NULL;
	lm_tensor *gw = gc && nw ? lmi_empty_as("conv2d backward", w, 4, w->shape, w->dtype) : NULL;
	lm_tensor *gb = NULL;
	if (!gc || (nx && !gx) || (nw && !gw) ||
	    ((nx || nw) && lmi_run("conv2d backward", LMI_OP_CONV2D_WINOGRAD_BACKWARD, &n->p, gc->dtype, 3,
	                           (const lm_tensor *[]){x, w, gc}, 2, (lm_tensor *[]){gx, gw})))
		goto fail;
	if (nb) { /* (N, K, L) summed over L, then over N */
		int64_t K = g->shape[1];
		lm_tensor *g3 = lm_reshape(gc, 3, (int64_t[]){g->shape[0], K, g->shape[2] * g->shape[3]});
		lm_tensor *s2 = g3 ? lm_sum(g3, 2, false) : NULL;
		gb = s2 ? lm_sum(s2, 0, false) : NULL;
		lm_tensor_release(g3);
		lm_tensor_release(s2);
		if (!gb) goto fail;
	}
	lm_tensor_release(gc);
	gin[0] = gx;
	gin[1] = gw;
	if (n->nin > 2) gin[2] = gb;
	return LM_OK;
fail:
	s = lm_last_status();
	lm_tensor_release(gc);
	lm_tensor_release(gx);
	lm_tensor_release(gw);
	return s ? s : LM_ERR_INTERNAL;
}

static lm_tensor *conv2d_winograd(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                                  const conv_plan *p)
{
	if (lmi_check_device("conv2d", 3, (const lm_tensor *const[]){x, w, b})) return NULL;
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *wc = xc ? (lm_tensor_is_contiguous(w) ? lm_tensor_retain((lm_tensor *)w)
	                                                 : lmi_contiguous_copy(w, w->dtype)) : NULL;
	lm_tensor *bc = wc && b ? (lm_tensor_is_contiguous(b) ? lm_tensor_retain((lm_tensor *)b)
	                                                      : lmi_contiguous_copy(b, b->dtype)) : NULL;
	lm_tensor *y = wc && (!b || bc) ? lmi_empty_as("conv2d", x, 4, (int64_t[]){p->N, p->K, p->OH, p->OW},
	                                            x->dtype) : NULL;
	if (y && lmi_run("conv2d", LMI_OP_CONV2D_WINOGRAD, &(lmi_params){.conv2d = {.ph = p->win.ph, .pw = p->win.pw}},
	                 y->dtype, 3, (const lm_tensor *[]){xc, wc, bc}, 1, (lm_tensor *[]){y})) {
		lm_tensor_release(y);
		y = NULL;
	}
	y = lmi_finish(y, LMI_OP_CONV2D_WINOGRAD, &(lmi_params){.conv2d = {.ph = p->win.ph, .pw = p->win.pw}}, 3,
	               (const lm_tensor *const[]){x, w, b}, 2, (const lm_tensor *const[]){xc, wc}, NULL);
	lm_tensor_release(xc);
	lm_tensor_release(wc);
	lm_tensor_release(bc);
	return y;
}

lm_tensor *lm_conv2d_algo(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                          const lm_conv2d_opts *o, lm_conv_algo algo)
{
	LMI_HALF_VIA_F32(lm_conv2d_algo(x, w, b, o, algo), &x, &w, &b);
	conv_plan p;
	if (conv_plan_make(x, w, b, o ? o : &conv_defaults, algo, &p)) return NULL;
	return p.algo == LM_CONV_WINOGRAD ? conv2d_winograd(x, w, b, &p) : conv2d_im2col(x, w, b, &p);
}

lm_tensor *lm_conv2d(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                     const lm_conv2d_opts *o)
{
	return lm_conv2d_algo(x, w, b, o, LM_CONV_AUTO);
}

/* ---------------------------------------------------------------- conv_transpose2d */

lm_tensor *lm_conv_transpose2d(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                               const lm_conv_transpose2d_opts *o)
{
	static const lm_conv_transpose2d_opts defaults = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
	if (!o) o = &defaults;
	const char *fn = "conv_transpose2d";
	if (lmi_check_float(fn, "input", x) || lmi_check_float(fn, "weight", w) || (b && lmi_check_float(fn, "bias", b)))
		return NULL;
	if (x->dtype != w->dtype || (b && b->dtype != x->dtype)) {
		lmi_fail(LM_ERR_DTYPE, "%s: input %s, weight %s%s%s must have one dtype", fn, lm_dtype_name(x->dtype),
		         lm_dtype_name(w->dtype), b ? " and bias " : "", b ? lm_dtype_name(b->dtype) : "");
		return NULL;
	}
	if (x->ndim != 4 || w->ndim != 4) {
		lmi_fail(LM_ERR_SHAPE, "%s: expects input (N, C, H, W) and weight (C, K/groups, R, S), got %s and %s", fn,
		         lmi_shape_s(x), lmi_shape_s(w));
		return NULL;
	}
	int64_t g = o->groups ? o->groups : 1;
	int64_t st[2], dl[2], out[2];
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	int64_t R = w->shape[2], S = w->shape[3], in_sz[2] = {H, W}, k[2] = {R, S};
	for (int i = 0; i < 2; i++) {
		st[i] = o->stride[i] ? o->stride[i] : 1;
		dl[i] = o->dilation[i] ? o->dilation[i] : 1;
		if (st[i] < 1 || dl[i] < 1 || o->padding[i] < 0 || o->output_padding[i] < 0) {
			lmi_fail(LM_ERR_ARG, "%s: stride %lld and dilation %lld must be positive, padding %lld and "
			         "output_padding %lld at least 0", fn, (long long)o->stride[i], (long long)o->dilation[i],
			         (long long)o->padding[i], (long long)o->output_padding[i]);
			return NULL;
		}
		if (o->output_padding[i] >= st[i] && o->output_padding[i] >= dl[i]) {
			lmi_fail(LM_ERR_ARG, "%s: output_padding %lld must be smaller than the stride %lld or the "
			         "dilation %lld", fn, (long long)o->output_padding[i], (long long)st[i], (long long)dl[i]);
			return NULL;
		}
		out[i] = (in_sz[i] - 1) * st[i] - 2 * o->padding[i] + dl[i] * (k[i] - 1) + o->output_padding[i] + 1;
	}
	if (g < 1 || C % g) {
		lmi_fail(LM_ERR_ARG, "%s: groups %lld must divide the %lld input channels", fn, (long long)g, (long long)C);
		return NULL;
	}
	if (w->shape[0] != C) {
		lmi_fail(LM_ERR_SHAPE, "%s: weight %s expects %lld input channels, the input %s has %lld", fn, lmi_shape_s(w),
		         (long long)w->shape[0], lmi_shape_s(x), (long long)C);
		return NULL;
	}
	int64_t K = w->shape[1] * g; /* output channels */
	if (b && (b->ndim != 1 || b->shape[0] != K)) {
		lmi_fail(LM_ERR_SHAPE, "%s: bias of shape %s for %lld output channels", fn, lmi_shape_s(b), (long long)K);
		return NULL;
	}
	if (out[0] < 1 || out[1] < 1) {
		lmi_fail(LM_ERR_SHAPE, "%s: input %s, weight %s, stride %lldx%lld, padding %lldx%lld give an output of "
		         "%lldx%lld", fn, lmi_shape_s(x), lmi_shape_s(w), (long long)st[0], (long long)st[1],
		         (long long)o->padding[0], (long long)o->padding[1], (long long)out[0], (long long)out[1]);
		return NULL;
	}
	lm_window2d win = {R, S, st[0], st[1], 0, 0, dl[0], dl[1]};
	int64_t full[2] = {(H - 1) * st[0] + dl[0] * (R - 1) + 1, (W - 1) * st[1] + dl[1] * (S - 1) + 1};
	int64_t Kg = K / g, Cg = C / g, KRS = Kg * R * S, L = H * W;
	lm_tensor *wg = NULL, *wt = NULL, *xg = NULL, *cols = NULL, *colsv = NULL, *y = NULL, *bv = NULL, *res = NULL;
	/* cols (N, g, K/g*R*S, L) = w_g^T (K/g*R*S, C/g) . x_g (N, g, C/g, L) */
	wg = lm_reshape(w, 3, (int64_t[]){g, Cg, KRS});
	wt = wg ? lm_transpose(wg, 1, 2) : NULL;
	if (wt && g == 1 && N > 1 && L < WIDE_L) {
		/* small inputs (a generator's 7 x 7): one gemm w^T (KRS, C) . x (C, N * L), as conv2d */
		lm_tensor *w2 = lm_reshape(w, 2, (int64_t[]){C, KRS}), *w2t = w2 ? lm_transpose(w2, 0, 1) : NULL;
		lm_tensor *x3 = w2t ? lm_reshape(x, 3, (int64_t[]){N, C, L}) : NULL;
		lm_tensor *xp = x3 ? lm_permute(x3, (int[]){1, 0, 2}) : NULL, *xc = xp ? lm_contiguous(xp) : NULL;
		lm_tensor *xv = xc ? lm_view(xc, 2, (int64_t[]){C, N * L}) : NULL;
		lm_tensor *ck = xv ? lm_matmul(w2t, xv) : NULL; /* (KRS, N * L) */
		lm_tensor *cv3 = ck ? lm_view(ck, 3, (int64_t[]){KRS, N, L}) : NULL;
		lm_tensor *cp = cv3 ? lm_permute(cv3, (int[]){1, 0, 2}) : NULL;
		colsv = cp ? lm_contiguous(cp) : NULL;           /* (N, KRS, L) */
		lm_tensor_release(w2);
		lm_tensor_release(w2t);
		lm_tensor_release(x3);
		lm_tensor_release(xp);
		lm_tensor_release(xc);
		lm_tensor_release(xv);
		lm_tensor_release(ck);
		lm_tensor_release(cv3);
		lm_tensor_release(cp);
	} else {
		xg = wt ? lm_reshape(x, 4, (int64_t[]){N, g, Cg, L}) : NULL;
		cols = xg ? lm_matmul(wt, xg) : NULL;
		colsv = cols ? lm_reshape(cols, 3, (int64_t[]){N, K * R * S, L}) : NULL;
	}
	/* col2im onto the full output (no padding: the windows cover exactly H x W positions), then
	 * padding rows and columns cropped from each side, and output_padding ones given back at the
	 * bottom and right (taken from the cropped part, or zeros past its end) */
	lm_tensor *y0 = colsv ? lm_col2im(colsv, K, full[0], full[1], &win) : NULL;
	int64_t pads[4] = {-o->padding[1], o->output_padding[1] - o->padding[1], -o->padding[0],
	                   o->output_padding[0] - o->padding[0]};
	if (y0 && (pads[0] || pads[1] || pads[2] || pads[3])) {
		y = lm_pad(y0, 2, pads, 0);
		lm_tensor_release(y0);
	} else {
		y = y0;
	}
	if (y && b) {
		bv = lm_view(b, 4, (int64_t[]){1, K, 1, 1});
		res = bv ? lm_add(y, bv) : NULL;
	} else if (y) {
		res = lm_tensor_retain(y);
	}
	lm_tensor_release(wg);
	lm_tensor_release(wt);
	lm_tensor_release(xg);
	lm_tensor_release(cols);
	lm_tensor_release(colsv);
	lm_tensor_release(y);
	lm_tensor_release(bv);
	return res;
}

/* ---------------------------------------------------------------- pooling */

/* Resolves kernel/stride/padding and the output size; checks everything. */
static lm_status pool_geometry(const char *name, const lm_tensor *x, const lm_pool2d_opts *o,
                               lm_window2d *win, int64_t *OH, int64_t *OW)
{
	lm_status s = lmi_check_float(name, "input", x);
	if (s) return s;
	if (!o) return lmi_fail(LM_ERR_ARG, "%s: options (kernel size) are missing", name);
	if (x->ndim != 4)
		return lmi_fail(LM_ERR_SHAPE, "%s: expects input (N, C, H, W), got %s", name, lmi_shape_s(x));
	int64_t k[2], st[2];
	for (int i = 0; i < 2; i++) {
		k[i] = o->kernel[i];
		st[i] = o->stride[i] ? o->stride[i] : k[i];
		if (k[i] < 1 || st[i] < 1 || o->padding[i] < 0)
			return lmi_fail(LM_ERR_ARG, "%s: kernel %lld and stride %lld must be >= 1, padding %lld >= 0",
			                name, (long long)k[i], (long long)st[i], (long long)o->padding[i]);
		if (o->padding[i] > k[i] / 2)
			return lmi_fail(LM_ERR_ARG, "%s: padding %lld must be at most half the kernel %lld", name,
			                (long long)o->padding[i], (long long)k[i]);
	}
	*win = (lm_window2d){k[0], k[1], st[0], st[1], o->padding[0], o->padding[1], 1, 1};
	if (lm_window2d_out(win, x->shape[2], x->shape[3], OH, OW)) {
		char msg[400];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		return lmi_fail(lm_last_status(), "%s: input %s: %s", name, lmi_shape_s(x), msg);
	}
	return LM_OK;
}

/* gx: zeros (N*C, H*W) with g scatter-added at the saved argmax positions.
 * Saved: [0] = indices (N*C, OH*OW). */
lm_status lmi_bw_max_pool2d(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *ix;
	lm_status s = lmi_node_saved(n, 0, &ix);
	if (s) return s;
	const int64_t *xs = n->in[0].shape;
	const int64_t zs[2] = {xs[0] * xs[1], xs[2] * xs[3]};
	lm_tensor *z = lmi_zeros_as(g, 2, zs, g->dtype);
	lm_tensor *g2 = z ? lm_reshape(g, 2, ix->shape) : NULL;
	lm_tensor *sc = g2 ? lm_scatter_add(z, 1, ix, g2) : NULL;
	lm_tensor *r = sc ? lm_reshape(sc, 4, xs) : NULL;
	lm_tensor_release(z);
	lm_tensor_release(g2);
	lm_tensor_release(sc);
	gin[0] = r;
	return r ? LM_OK : lm_last_status();
}

lm_tensor *lm_max_pool2d(const lm_tensor *x, const lm_pool2d_opts *o, lm_tensor **indices)
{
	lm_window2d win;
	int64_t OH, OW;
	if (pool_geometry("max_pool2d", x, o, &win, &OH, &OW) || lmi_check_device("max_pool2d", 1, &x))
		return NULL;
	int64_t N = x->shape[0], C = x->shape[1];
	lm_tensor *xc = lm_tensor_is_contiguous(x) ? lm_tensor_retain((lm_tensor *)x)
	                                           : lmi_contiguous_copy(x, x->dtype);
	lm_tensor *y = xc ? lmi_empty_as("max_pool2d", x, 4, (int64_t[]){N, C, OH, OW}, x->dtype) : NULL;
	lm_tensor *ix = y ? lmi_empty_as("max_pool2d", x, 2, (int64_t[]){N * C, OH * OW}, LM_INT64) : NULL;
	lmi_params pool = {.pool = {.kh = win.kh, .kw = win.kw, .sh = win.sh, .sw = win.sw, .ph = win.ph, .pw = win.pw}};
	if (ix && lmi_run("max_pool2d", LMI_OP_MAX_POOL2D, &pool, y->dtype, 1, (const lm_tensor *[]){xc}, 2,
	                  (lm_tensor *[]){y, ix})) {
		lm_tensor_release(ix);
		ix = NULL;
	}
	lm_tensor_release(xc);
	if (!ix) {
		lm_tensor_release(y);
		return NULL;
	}
	y = lmi_finish(y, LMI_OP_MAX_POOL2D, &pool, 1, &x, 1, (const lm_tensor *const[]){ix}, NULL);
	if (y && indices) {
		*indices = lm_reshape(ix, 4, (int64_t[]){N, C, OH, OW});
		if (!*indices) {
			lm_tensor_release(y);
			y = NULL;
		}
	}
	lm_tensor_release(ix);
	return y;
}

lm_tensor *lm_avg_pool2d(const lm_tensor *x, const lm_pool2d_opts *o)
{
	lm_window2d win;
	int64_t OH, OW;
	if (pool_geometry("avg_pool2d", x, o, &win, &OH, &OW)) return NULL;
	int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
	/* every channel as its own image: (N*C, 1, H, W) -> cols (N*C, kh*kw, L) -> mean over dim 1 */
	lm_tensor *x1 = lm_reshape(x, 4, (int64_t[]){N * C, 1, H, W});
	lm_tensor *cols = x1 ? lm_im2col(x1, &win) : NULL;
	lm_tensor *m = cols ? lm_mean(cols, 1, false) : NULL;
	lm_tensor *y = m ? lm_reshape(m, 4, (int64_t[]){N, C, OH, OW}) : NULL;
	lm_tensor_release(x1);
	lm_tensor_release(cols);
	lm_tensor_release(m);
	return y;
}

/* ---------------------------------------------------------------- embedding */

lm_tensor *lm_embedding(const lm_tensor *idx, const lm_tensor *w)
{
	if (!idx) return lmi_fail_null(LM_ERR_ARG, "embedding: indices are NULL");
	if (lmi_check_float("embedding", "weight", w)) return NULL;
	if (lm_dtype_is_float(idx->dtype))
		return lmi_fail_null(LM_ERR_DTYPE, "embedding: indices must be int64 or int32, got %s",
		                     lm_dtype_name(idx->dtype));
	if (w->ndim != 2)
		return lmi_fail_null(LM_ERR_SHAPE, "embedding: weight must be (n, d), got %s", lmi_shape_s(w));
	if (idx->ndim >= LM_MAX_DIMS)
		return lmi_fail_null(LM_ERR_SHAPE, "embedding: indices of %d dims leave no room for the "
		                     "embedding dim", idx->ndim);
	lm_tensor *flat = lm_reshape(idx, 1, (int64_t[]){-1});
	if (!flat) return NULL;
	/* name the op and the bad index ourselves */
	lm_tensor *fl = lmi_contiguous_copy(flat, LM_INT64);
	lm_tensor_release(flat);
	if (!fl) return NULL;
	lm_tensor *h = lmi_on_cpu(fl); /* the indices checked on the host */
	bool ok = h != NULL;
	const int64_t *v = h ? (const int64_t *)lmi_data(h) : NULL;
	for (int64_t i = 0; ok && i < lm_tensor_numel(h); i++)
		if (v[i] < 0 || v[i] >= w->shape[0]) {
			lmi_fail(LM_ERR_INDEX, "embedding: index %lld out of range for %lld embeddings",
			         (long long)v[i], (long long)w->shape[0]);
			ok = false;
		}
	lm_tensor_release(h);
	if (!ok) {
		lm_tensor_release(fl);
		return NULL;
	}
	lm_tensor *rows = lm_index_select(w, 0, fl);
	lm_tensor_release(fl);
	if (!rows) return NULL;
	int64_t shape[LM_MAX_DIMS];
	memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
	shape[idx->ndim] = w->shape[1];
	lm_tensor *out = lm_reshape(rows, idx->ndim + 1, shape);
	lm_tensor_release(rows);
	return out;
}
