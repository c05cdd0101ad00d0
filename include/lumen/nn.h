/*
 * lumen/nn.h — the neural-network functional ops (torch.nn.functional): layers, activations,
 * losses, normalisation, convolution and pooling. All differentiable through lumen/autograd.h.
 *
 * Shapes follow PyTorch: images are (N, C, H, W), class indices are int64 (int32 accepted) and
 * 0-based in C. Every function returns a new tensor (+1) or NULL with lm_last_error() set.
 * Read next: src/ops/nn.c, src/ops/conv.c.
 */
#ifndef LUMEN_NN_H
#define LUMEN_NN_H

#include "lumen/core.h"
#include "lumen/ops.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lm_reduction {
	LM_REDUCTION_MEAN = 0,
	LM_REDUCTION_SUM,
	LM_REDUCTION_NONE
} lm_reduction;

/* x: (..., in), w: (out, in), b: (out) or NULL -> (..., out) = x w^T + b */
/* w (out, in) may be of a block type (q8_0, q4_0): then each row of x is quantized to q8_0 and
 * multiplied by the blocks (ggml's scheme; no gradient for w, x's through the dequantized w). */
lm_tensor *lm_linear(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b);
/* The exact product of uint8 (M, K) and int8 (K, N) codes, int32 (M, N): what the int8 layers
 * (nn.quantized, lm.quant) run; no autograd. */
lm_tensor *lm_int_mm(const lm_tensor *a, const lm_tensor *b);
/* One LSTM step's gates, fused: a (B, 4H) pre-activations in PyTorch's order (i, f, g, o), c (B, H)
 * the cell state -> (B, 2H) = [h | c'] with c' = s(f) c + s(i) tanh(g), h = s(o) tanh(c');
 * differentiable in a and c (one loop each way). */
lm_tensor *lm_lstm_cell(const lm_tensor *a, const lm_tensor *c);
/* One GRU step's gates, fused: xg (B, 3H) the input's part (W_ih x + b_ih), hg (B, 3H) the hidden
 * state's (W_hh h + b_hh), in PyTorch's order (r, z, n), h (B, H) -> h' = (1 - z) n + z h with
 * r = s(x_r + h_r), z = s(x_z + h_z), n = tanh(x_n + r h_n); differentiable in all three. */
lm_tensor *lm_gru_cell(const lm_tensor *xg, const lm_tensor *hg, const lm_tensor *h);
/* softmax(q k^T scale [+ causal mask j <= i]) v without the L x S matrix: q (..., L, E), k (..., S, E),
 * v (..., S, Ev), the same leading dims; scale <= 0 or not finite: 1 / sqrt(E). An online softmax
 * forward (memory linear in the sequence) and a backward that recomputes the weights (FlashAttention's
 * scheme); differentiable in q, k and v. */
lm_tensor *lm_flash_attention(const lm_tensor *q, const lm_tensor *k, const lm_tensor *v, bool is_causal,
                              double scale);

/* Numerically stable along dim (no overflow at logits of +-1e4). */
lm_tensor *lm_softmax(const lm_tensor *x, int dim);
lm_tensor *lm_log_softmax(const lm_tensor *x, int dim);
/* x * Phi(x); tanh_approx: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
lm_tensor *lm_gelu(const lm_tensor *x, bool tanh_approx);

/*
 * logits: (N, C) or (N, C, d1, ...), target: (N) or (N, d1, ...) class indices in [0, C).
 * label_smoothing in [0, 1]: the target distribution is (1 - s) one-hot + s / C.
 */
lm_tensor *lm_cross_entropy(const lm_tensor *logits, const lm_tensor *target, lm_reduction red,
                            double label_smoothing);
/* logp: log-probabilities, shapes as cross_entropy: -logp[i, target[i]] */
lm_tensor *lm_nll_loss(const lm_tensor *logp, const lm_tensor *target, lm_reduction red);
lm_tensor *lm_mse_loss(const lm_tensor *input, const lm_tensor *target, lm_reduction red);
/* p in [0, 1] (checked), logs clamped at -100 as PyTorch does. */
lm_tensor *lm_binary_cross_entropy(const lm_tensor *p, const lm_tensor *target, lm_reduction red);
/* Binary cross-entropy on logits x (stable for any x): (1 - y) x + w softplus(-x) with
 * w = 1 + (pos_weight - 1) y; target y of x's shape; pos_weight (NULL: 1) broadcast to x's shape.
 * src/ops/loss_logits.c. */
lm_tensor *lm_binary_cross_entropy_with_logits(const lm_tensor *x, const lm_tensor *y,
                                               const lm_tensor *pos_weight, lm_reduction red);

/* Zeroes elements with probability p and scales the rest by 1/(1-p); the identity (x itself, +1)
 * when not training or p == 0. Uses the global RNG. */
lm_tensor *lm_dropout(const lm_tensor *x, double p, bool training);

/* Normalises over the last nshape dims (which must equal shape); w, b of that shape or NULL. */
lm_tensor *lm_layer_norm(const lm_tensor *x, int nshape, const int64_t *shape, const lm_tensor *w,
                         const lm_tensor *b, double eps);
/*
 * x: (N, C, ...). training: normalise with the batch statistics and update running_mean/var
 * (when given) in place: r = (1 - momentum) r + momentum * stat, the variance unbiased.
 * Not training: normalise with the running statistics (required then). w, b: (C) or NULL.
 */
lm_tensor *lm_batch_norm(const lm_tensor *x, lm_tensor *running_mean, lm_tensor *running_var,
                         const lm_tensor *w, const lm_tensor *b, bool training, double momentum,
                         double eps);
/* idx: int tensor of any shape with values in [0, n); w: (n, d) -> (idx.shape..., d) */
lm_tensor *lm_embedding(const lm_tensor *idx, const lm_tensor *w);

typedef struct lm_conv2d_opts {
	int64_t stride[2];   /* default 1 (0 means default) */
	int64_t padding[2];  /* default 0 */
	int64_t dilation[2]; /* default 1 (0 means default) */
	int64_t groups;      /* default 1 (0 means default) */
} lm_conv2d_opts;
/* x: (N, C, H, W), w: (K, C/groups, R, S), b: (K) or NULL -> (N, K, OH, OW); LM_CONV_AUTO. */
lm_tensor *lm_conv2d(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                     const lm_conv2d_opts *opts);
/*
 * How conv2d computes. LM_CONV_IM2COL: im2col + matmul (any kernel, stride, dilation, groups);
 * LM_CONV_WINOGRAD: Winograd F(2x2, 3x3), 3x3 kernels with stride 1, dilation 1 and groups 1
 * only (LM_ERR_ARG otherwise; CPU only), 2.25x fewer multiplications, float32 results within a
 * few ulp of the sums' magnitude of a direct convolution (docs/architecture.md); LM_CONV_AUTO:
 * Winograd where it applies, to float32 with at least 8 input channels on a vector SIMD path
 * (measured faster there), im2col elsewhere.
 */
typedef enum lm_conv_algo { LM_CONV_AUTO = 0, LM_CONV_IM2COL, LM_CONV_WINOGRAD, LM_CONV_ALGO_COUNT } lm_conv_algo;
/* lm_conv2d with the algorithm chosen. */
lm_tensor *lm_conv2d_algo(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                          const lm_conv2d_opts *opts, lm_conv_algo algo);
/* The algorithm (IM2COL or WINOGRAD) lm_conv2d_algo(x, w, NULL, opts, algo) would run; LM_CONV_AUTO
 * with the error set when the call would fail. */
lm_conv_algo lm_conv2d_which(const lm_tensor *x, const lm_tensor *w, const lm_conv2d_opts *opts,
                             lm_conv_algo algo);
/* "auto", "im2col", "winograd" ("?" out of range). */
const char *lm_conv_algo_name(lm_conv_algo algo);

typedef struct lm_conv_transpose2d_opts {
	int64_t stride[2];         /* default 1 (0 means default) */
	int64_t padding[2];        /* default 0: removed from each side of the full output */
	int64_t output_padding[2]; /* default 0: added to one side; less than the stride or the dilation */
	int64_t dilation[2];       /* default 1 (0 means default) */
	int64_t groups;            /* default 1 (0 means default) */
} lm_conv_transpose2d_opts;
/*
 * The transposed convolution (PyTorch's conv_transpose2d): conv2d's adjoint with respect to its
 * input. x: (N, C, H, W), w: (C, K/groups, R, S), b: (K) or NULL -> (N, K, OH, OW) with
 * OH = (H - 1) stride - 2 padding + dilation (R - 1) + output_padding + 1 (and OW alike). Computed
 * as cols = w^T x per group (matmul), col2im onto the full output (the overlapping windows summed)
 * and a crop of the padding (pad), so its gradients are those ops'.
 */
lm_tensor *lm_conv_transpose2d(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                               const lm_conv_transpose2d_opts *opts);

typedef struct lm_pool2d_opts {
	int64_t kernel[2];
	int64_t stride[2];  /* default: the kernel (0 means default) */
	int64_t padding[2]; /* default 0; at most half the kernel */
} lm_pool2d_opts;
/* x: (N, C, H, W) -> (N, C, OH, OW); indices (optional): int64 positions h * W + w in each plane */
lm_tensor *lm_max_pool2d(const lm_tensor *x, const lm_pool2d_opts *opts, lm_tensor **indices);
/* Averages over each window, padding counted (PyTorch's count_include_pad=True). */
lm_tensor *lm_avg_pool2d(const lm_tensor *x, const lm_pool2d_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
