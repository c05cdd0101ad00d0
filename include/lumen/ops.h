/*
 * lumen/ops.h — tensor operations: elementwise math, comparisons, reductions, matmul, joins,
 * indexing.
 *
 * Every function returns a new tensor (+1, contiguous) or NULL with lm_last_error() set; in-place
 * variants end in an underscore and return a status. Binary operations broadcast by NumPy rules on
 * any strides and compute in lm_promote_types(a, b); comparisons give uint8. Operations on inputs
 * that require grad record an autograd node (see lumen/autograd.h) unless grad mode is off.
 *
 * Dims are 0-based, negatives count from the end. Read next: src/ops/ (dispatch and backward
 * rules), src/backend/cpu/ (the loops).
 */
#ifndef LUMEN_OPS_H
#define LUMEN_OPS_H

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- unary */

typedef enum lm_unop {
	LM_EXP = 0,
	LM_LOG,
	LM_SQRT,
	LM_ABS,
	LM_NEG,
	LM_SIN,
	LM_COS,
	LM_TANH,
	LM_SIGMOID,
	LM_RELU,
	LM_SIGN,
	LM_FLOOR,
	LM_CEIL,
	LM_ROUND, /* half to even, as PyTorch */
	LM_RSQRT,
	LM_RECIPROCAL,
	LM_SQUARE,
	LM_UNOP_COUNT
} lm_unop;

const char *lm_unop_name(lm_unop op);
/* Floating ops (exp, log, ...) on integer input give float32; abs, neg, sign, relu, floor, ceil,
 * round and square keep the dtype. */
lm_tensor *lm_unary(lm_unop op, const lm_tensor *x);
lm_status lm_unary_(lm_unop op, lm_tensor *x); /* x must already have the result dtype */

lm_tensor *lm_exp(const lm_tensor *x);
lm_tensor *lm_log(const lm_tensor *x);
lm_tensor *lm_sqrt(const lm_tensor *x);
lm_tensor *lm_abs(const lm_tensor *x);
lm_tensor *lm_neg(const lm_tensor *x);
lm_tensor *lm_sin(const lm_tensor *x);
lm_tensor *lm_cos(const lm_tensor *x);
lm_tensor *lm_tanh(const lm_tensor *x);
lm_tensor *lm_sigmoid(const lm_tensor *x);
lm_tensor *lm_relu(const lm_tensor *x);
lm_tensor *lm_sign(const lm_tensor *x);
lm_tensor *lm_floor(const lm_tensor *x);
lm_tensor *lm_ceil(const lm_tensor *x);
lm_tensor *lm_round(const lm_tensor *x);

/* min(max(x, lo), hi); pass -INFINITY / INFINITY for a missing bound. lo > hi is an error. */
lm_tensor *lm_clamp(const lm_tensor *x, double lo, double hi);
lm_status lm_clamp_(lm_tensor *x, double lo, double hi);
/* x ^ p elementwise with a number exponent (integer x with fractional p gives float32). */
lm_tensor *lm_pow_scalar(const lm_tensor *x, double p);
/* max(x, 0) + slope * min(x, 0) */
lm_tensor *lm_leaky_relu(const lm_tensor *x, double slope);

/* ---------------------------------------------------------------- binary */

typedef enum lm_binop {
	LM_ADD = 0,
	LM_SUB,
	LM_MUL,
	LM_DIV, /* true division: integer inputs give float32 */
	LM_POW,
	LM_MAXIMUM,
	LM_MINIMUM,
	LM_EQ, /* comparisons give uint8 0/1 */
	LM_NE,
	LM_LT,
	LM_LE,
	LM_GT,
	LM_GE,
	/* a // b rounds the quotient toward -inf and a % b takes the divisor's sign, so that
	 * a == (a // b) * b + a % b (torch.floor_divide / torch.remainder, Lua's // and %). Integers
	 * stay integers (division by an integer 0 is LM_ERR_ARG); floats follow IEEE (x // 0 is
	 * +-inf, x % 0 NaN). remainder is differentiable (d/da = 1, d/db = -(a // b)); floor_divide
	 * has gradient 0 (as floor). */
	LM_FLOOR_DIVIDE,
	LM_REMAINDER,
	LM_BINOP_COUNT
} lm_binop;

const char *lm_binop_name(lm_binop op);
/* eq, ne, lt, le, gt, ge: a uint8 result. Inline, so that the backends' loops can ask it without
 * calling up into the ops. */
static inline bool lm_binop_is_comparison(lm_binop op) { return op >= LM_EQ && op <= LM_GE; }
/* The result shape of broadcasting a and b; an error names both shapes. */
lm_status lm_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                              int64_t *out);

lm_tensor *lm_binary(lm_binop op, const lm_tensor *a, const lm_tensor *b);
/* a op s, and s op a (s a number: it does not promote an integer tensor unless fractional). */
lm_tensor *lm_binary_scalar(lm_binop op, const lm_tensor *a, double s);
lm_tensor *lm_rbinary_scalar(lm_binop op, double s, const lm_tensor *a);
/* a = a op b in place (b broadcast to a's shape; the result is converted to a's dtype). */
lm_status lm_binary_(lm_binop op, lm_tensor *a, const lm_tensor *b);
lm_status lm_binary_scalar_(lm_binop op, lm_tensor *a, double s);

lm_tensor *lm_add(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_sub(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_mul(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_div(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_pow(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_maximum(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_minimum(const lm_tensor *a, const lm_tensor *b);
/* cond ? a : b elementwise, all three broadcast; cond of any dtype (nonzero is true). */
lm_tensor *lm_where(const lm_tensor *cond, const lm_tensor *a, const lm_tensor *b);
/* a + alpha * b in one pass, broadcasting like add (torch.add(a, b, alpha=...)): the fused form of
 * `a * 2 + b`, which as two ops reads and writes a temporary. Integer results need an integral
 * alpha. The in-place form (b broadcast to a's shape) is the optimizers' update, w -= lr * g. */
lm_tensor *lm_add_scaled(const lm_tensor *a, const lm_tensor *b, double alpha);
lm_status lm_add_scaled_(lm_tensor *a, const lm_tensor *b, double alpha);

/* ---------------------------------------------------------------- reductions */

typedef enum lm_redop {
	LM_SUM = 0,
	LM_MEAN,
	LM_PROD,
	LM_MAX,
	LM_MIN,
	LM_ARGMAX, /* int64 indices (0-based; the first of equal values) */
	LM_ARGMIN,
	LM_VAR,    /* with correction 1 (unbiased) through lm_reduce; see lm_var */
	LM_STD,
	LM_NORM,   /* 2-norm through lm_reduce; see lm_norm */
	LM_REDOP_COUNT
} lm_redop;

#define LM_DIM_ALL (-2000) /* reduce over every element; keepdim keeps all dims as size 1 */

const char *lm_redop_name(lm_redop op);
/* Reduction over one dim (or LM_DIM_ALL). Sums of integers give int64, means/var/std/norm of
 * integers give float32. Reducing an empty tensor: sum 0, prod 1, mean/var NaN, max/min/arg an
 * error. */
lm_tensor *lm_reduce(lm_redop op, const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_sum(const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_mean(const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_prod(const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_amax(const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_amin(const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_argmax(const lm_tensor *x, int dim, bool keepdim);
lm_tensor *lm_argmin(const lm_tensor *x, int dim, bool keepdim);
/* *count = the number of rows r of logits (N, C; any dtype and strides: integers compared as
 * float64, as lm_argmax does) whose argmax (the first largest; a NaN counts as largest) plus base
 * equals labels[r] (N; an integer dtype): a batch's correct predictions in one pass (base 1 for
 * Lua's 1-based labels). No graph is recorded. N = 0 gives 0; C = 0 with N > 0 is an error. */
lm_status lm_count_correct(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
                           int64_t *count);
/* Variance with Bessel-style correction (1: unbiased, 0: population). */
lm_tensor *lm_var(const lm_tensor *x, int dim, bool keepdim, int correction);
lm_tensor *lm_std(const lm_tensor *x, int dim, bool keepdim, int correction);
/* (sum |x|^p)^(1/p); p = INFINITY gives max |x|. */
lm_tensor *lm_norm(const lm_tensor *x, double p, int dim, bool keepdim);
/*
 * Over several dims at once (torch.sum(x, dim=(0, 2))): dims lists 0-based dims (negatives from the
 * end), each at most once; ndims 0 means every dim (as PyTorch's dim=[]). keepdim keeps them as
 * size 1. p: the correction of LM_VAR/LM_STD (1 unbiased), the p of LM_NORM, ignored otherwise.
 * LM_ARGMAX/LM_ARGMIN take one dim only (LM_ERR_ARG).
 */
lm_tensor *lm_reduce_dims(lm_redop op, const lm_tensor *x, int ndims, const int *dims,
                          bool keepdim, double p);
/* Max/min along dim: values and int64 indices (0-based, the first occurrence). */
lm_status lm_max_dim(const lm_tensor *x, int dim, bool keepdim, lm_tensor **values,
                     lm_tensor **indices);
lm_status lm_min_dim(const lm_tensor *x, int dim, bool keepdim, lm_tensor **values,
                     lm_tensor **indices);

/* ---------------------------------------------------------------- linear algebra */

/* torch.matmul semantics: 1-D·1-D (dot, 0-d), 2-D·2-D, 1-D promoted to a matrix and squeezed
 * back, batched with broadcast batch dims. Floats through BLAS; integers by a plain loop. */
lm_tensor *lm_matmul(const lm_tensor *a, const lm_tensor *b);
lm_tensor *lm_mm(const lm_tensor *a, const lm_tensor *b); /* 2-D only */

/* ---------------------------------------------------------------- joins, indexing, shaping */
/*
 * (Foundation II; src/ops/join.c, index.c, sort.c, shape.c, window.c.) Indices are int64 (int32
 * accepted), 0-based, and must lie in [0, size): anything else is LM_ERR_INDEX naming the op, the
 * value, its position and the size. 0-d inputs act as one-element 1-D ones where an op needs a
 * dim. Every float result records an autograd node unless noted.
 */

/* Joins n >= 1 tensors along an existing dim (sizes equal elsewhere) / a new dim (all shapes
 * equal). The result dtype promotes over all inputs. cat skips 1-D empty (0,) inputs whatever
 * the others' shape (PyTorch's legacy rule); 0-d inputs cannot be concatenated. */
lm_tensor *lm_cat(int n, lm_tensor *const *ts, int dim);
lm_tensor *lm_stack(int n, lm_tensor *const *ts, int dim);
/* x with dim replaced by the 1-D (or 0-d) index's entries: out[.., j, ..] = x[.., index[j], ..]. */
lm_tensor *lm_index_select(const lm_tensor *x, int dim, const lm_tensor *index);
/* out has index's shape: out[i][j] = x[i][index[i][j]] for dim 1. index has x's number of dims
 * and no larger size than x outside dim. */
lm_tensor *lm_gather(const lm_tensor *x, int dim, const lm_tensor *index);
/* A copy of x with src added at index along dim (out[i][index[i][j]] += src[i][j] for dim 1);
 * index no larger than src anywhere nor than x outside dim; dtype promote(x, src). Repeated
 * indices add up, in a fixed order (deterministic). */
lm_tensor *lm_scatter_add(const lm_tensor *x, int dim, const lm_tensor *index, const lm_tensor *src);
/* value where mask (any dtype, nonzero is true) is set, x elsewhere; x and mask broadcast. */
lm_tensor *lm_masked_fill(const lm_tensor *x, const lm_tensor *mask, double value);
/* Stable sort along dim: values and int64 indices (*values and *indices set only on success).
 * NaN sorts last ascending and first descending; -0 and +0 are equal (kept in order). */
lm_status lm_sort(const lm_tensor *x, int dim, bool descending, lm_tensor **values,
                  lm_tensor **indices);
/* The k largest (or smallest) along dim, sorted (ties: the lower index first); 0 <= k <= size. */
lm_status lm_topk(const lm_tensor *x, int64_t k, int dim, bool largest, lm_tensor **values,
                  lm_tensor **indices);
/* Running sum along dim; integer inputs give int64. */
lm_tensor *lm_cumsum(const lm_tensor *x, int dim);
/* Keeps elements on and below (tril) / above (triu) the diagonal + k of the last two dims. */
lm_tensor *lm_tril(const lm_tensor *x, int64_t k);
lm_tensor *lm_triu(const lm_tensor *x, int64_t k);
/* int index tensor -> (..., num_classes) int64 of 0/1 (no autograd). num_classes -1: the largest
 * index + 1. */
lm_tensor *lm_one_hot(const lm_tensor *index, int64_t num_classes);
/* Tiles x: repeats[i] copies along dim i (nrep >= ndim; extra leading dims are added). */
lm_tensor *lm_repeat(const lm_tensor *x, int nrep, const int64_t *repeats);
/* Reverses the listed dims (each at most once; negatives count from the end). */
lm_tensor *lm_flip(const lm_tensor *x, int ndims, const int *dims);
/* Constant padding: pads has 2*npairs entries (before, after) for the LAST npairs dims, last dim
 * first (torch.nn.functional.pad order). Negative pads crop (as PyTorch): (-1, -1) removes the first
 * and last element of the dim; cropping more than the dim holds is LM_ERR_ARG. */
lm_tensor *lm_pad(const lm_tensor *x, int npairs, const int64_t *pads, double value);

/*
 * 2-D windows for convolution. x: (N, C, H, W) -> cols: (N, C*kh*kw, L), L = oh*ow, with
 * oh = (H + 2 ph - dh (kh - 1) - 1) / sh + 1 (ow likewise); row c*kh*kw + ki*kw + kj of cols holds
 * x[c, oy*sh - ph + ki*dh, ox*sw - pw + kj*dw] at column oy*ow + ox (0 in the padding): the layout
 * of torch.nn.functional.unfold. A 3-D (C, H, W) input is one unbatched image. A window larger
 * than the padded input is LM_ERR_SHAPE; kernel/stride/dilation < 1 or padding < 0, LM_ERR_ARG.
 */
typedef struct lm_window2d {
	int64_t kh, kw;
	int64_t sh, sw; /* stride, >= 1 */
	int64_t ph, pw; /* zero padding, >= 0 */
	int64_t dh, dw; /* dilation, >= 1 */
} lm_window2d;
/* The output size of w on an h x wd image, checked as above. */
lm_status lm_window2d_out(const lm_window2d *w, int64_t h, int64_t wd, int64_t *oh, int64_t *ow);
lm_tensor *lm_im2col(const lm_tensor *x, const lm_window2d *w);
/* Channels last: x (N, H, W, C) or (H, W, C) -> (N, oh*ow, kh*kw*C) (or (oh*ow, kh*kw*C)): one row
 * per output position, window position (ki, kj)'s C channels at columns (ki*kw + kj)*C.. (zeros
 * outside the image). What a convolution in NHWC multiplies by its (K, kh, kw, C) weights; the
 * graph compiler's layout pass uses it. Not differentiable (LM_ERR_ARG when x requires grad);
 * devices without the loop answer LM_ERR_UNSUPPORTED (the CPU has it). */
lm_tensor *lm_im2col_nhwc(const lm_tensor *x, const lm_window2d *w);
/* im2col's adjoint: cols (N, C*kh*kw, L) (or (C*kh*kw, L)) -> (N, C, h, w), overlapping windows
 * summed. */
lm_tensor *lm_col2im(const lm_tensor *cols, int64_t channels, int64_t h, int64_t w,
                     const lm_window2d *win);

/* ---------------------------------------------------------------- the op table */

/*
 * The engine's ops, as its one list of ops holds them (src/ops/oplist.h): lm.ops() and
 * `lumen --ops` print this. i from 0 to lm_op_count() - 1.
 */
#define LM_OP_MAX_PARAMS 12
typedef struct lm_op_desc {
	const char *name;       /* "exp" */
	const char *grad_name;  /* "ExpBackward"; NULL: no backward rule */
	int arity;              /* inputs; -1: a list of them */
	const char *loop;       /* the device loop it runs ("unary"); "copy": the device's copies;
	                         * "view": geometry only, no loop */
	const char *dtypes;     /* the dtype rule in words ("any dtype; integers compute in float32") */
	int nparams;
	const char *params[LM_OP_MAX_PARAMS]; /* the names of its recorded parameters */
} lm_op_desc;
int lm_op_count(void);
lm_status lm_op_describe(int i, lm_op_desc *out);
/* Whether device d runs op i on inputs of dtype dt (after the op's dtype rule: exp of int32
 * runs the float32 loop; int8, float16 and bfloat16 run on the CPU in the int32 and float32 loops,
 * rounded once into the result): 1 yes, 0 no (the op refuses the dtype, or the device has no loop
 * for it; the block types: 0, they are no op's input), -1 when this build has no backend for d. For the GPU this is what its backend implements,
 * whether or not a GPU is present (lm_cuda_is_available says that). */
int lm_op_supported(int i, lm_device d, lm_dtype dt);

#ifdef __cplusplus
}
#endif
#endif
