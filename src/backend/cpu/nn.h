/*
 * nn.h — CPU loops of the fused neural-network ops (see nn.c). Inputs are contiguous unless said
 * otherwise; the ops layer (../../ops/nn.c) has checked shapes, dtypes and index ranges.
 */
#ifndef LUMEN_BACKEND_CPU_NN_H
#define LUMEN_BACKEND_CPU_NN_H

#include "backend/cpu/cpu.h"

/* y = softmax (or log_softmax) of contiguous x viewed as (outer, R, inner) over R. float32/64. */
lm_status lmi_cpu_softmax(const lm_tensor *x, lm_tensor *y, int64_t outer, int64_t R,
                          int64_t inner, bool log_softmax);
/* out = gelu(x), or with g: out = g * gelu'(x). Any strides, same shape. */
lm_status lmi_cpu_gelu(lm_tensor *out, const lm_tensor *x, const lm_tensor *g, bool tanh_approx);
/* backend.h's lstm_cell: the gates of an LSTM step and their backward, one pass over B x H. */
/* backend.h's attention: the online-softmax forward and the recomputing backward, by (batch, head). */
lm_status lmi_cpu_attention(const lm_tensor *q, const lm_tensor *k, const lm_tensor *v, bool causal, double scale,
                            lm_tensor *o, lm_tensor *lse, const lm_tensor *stats, const lm_tensor *dout,
                            lm_tensor *dq, lm_tensor *dk, lm_tensor *dv);
/* backend.h's gru_cell: a GRU step's gates and their backward, one pass over B x H. */
lm_status lmi_cpu_gru_cell(const lm_tensor *xg, const lm_tensor *hg, const lm_tensor *h, lm_tensor *hn,
                           lm_tensor *act, const lm_tensor *ghn, lm_tensor *gx, lm_tensor *ghg, lm_tensor *gh);
lm_status lmi_cpu_lstm_cell(const lm_tensor *a, const lm_tensor *c, lm_tensor *hc, lm_tensor *act,
                            const lm_tensor *ghc, lm_tensor *ga, lm_tensor *gc);
/* NLL gather and its adjoint over logp (N, C, L), target int64 (N, L). */
lm_status lmi_cpu_nll(const lm_tensor *logp, const lm_tensor *target, lm_tensor *out, int64_t N,
                      int64_t C, int64_t L);
lm_status lmi_cpu_nll_grad(const lm_tensor *g, const lm_tensor *target, lm_tensor *gx, int64_t N,
                           int64_t C, int64_t L);
/* Max pooling of (planes, H, W) into y (planes, OH, OW) with flat indices h * W + w. */
lm_status lmi_cpu_max_pool2d(const lm_tensor *x, lm_tensor *y, lm_tensor *idx, int64_t planes,
                             int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t *k,
                             const int64_t *stride, const int64_t *pad);

/*
 * 3x3, stride-1, dilation-1, ungrouped convolution by Winograd F(2x2, 3x3) (winograd.c): x (N, C,
 * H, W), w (K, C, 3, 3), b (K) or NULL, all contiguous float32 or float64; zero padding (ph, pw);
 * y (N, K, H + 2ph - 2, W + 2pw - 2) contiguous, written whole. LM_ERR_NOMEM (scratch) or
 * LM_ERR_INTERRUPTED on failure.
 */
lm_status lmi_cpu_winograd_conv(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                                int64_t ph, int64_t pw, lm_tensor *y);
/* Its exact adjoint: gy (y's shape, contiguous) -> gx (x's shape) and gw (w's shape), each
 * contiguous or NULL when not wanted, written whole. */
lm_status lmi_cpu_winograd_conv_backward(const lm_tensor *x, const lm_tensor *w,
                                         const lm_tensor *gy, int64_t ph, int64_t pw,
                                         lm_tensor *gx, lm_tensor *gw);

#endif
