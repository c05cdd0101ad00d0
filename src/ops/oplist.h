/*
 * oplist.h — every op of the engine, once. From this list come the op enum (lmi_op), each op's
 * name, its grad_fn name and backward rule, its typed parameters, its arity, the device loop it
 * runs and its dtype rule (lmi_op_info, oplist.c); lm.ops() and `lumen --ops` print it, the
 * autograd node holds an lmi_op and its parameters (graph.h), and the op-table test checks that
 * every row here has a test row (tests/optable.c) and a help entry.
 *
 * A row: X(ID, name, grad, params, arity, slot, rule, bw)
 *   ID      LMI_OP_<ID>
 *   name    what lm.ops() and messages call it ("exp", "index_select")
 *   grad    its grad_fn's name ("ExpBackward"), or NULL: no backward rule (comparisons, argmax,
 *           the optimizers' updates, the loops only backward rules run)
 *   params  its parameter struct, lmi_p_<params> (LMI_PARAMS below: typed, named fields)
 *   arity   inputs (-1: a list, as cat and stack take)
 *   slot    the device loop it runs (LMI_BE_OP_<slot>, backend.h), or copy: the core's copies over
 *           the device's memory (every device runs them), view: geometry only, no loop, or ops:
 *           made of other ops (recorded as one node for its backward)
 *   rule    its dtype rule (lmi_dtype_rule below)
 *   bw      the backward function, lmi_bw_<bw> (defined beside the op's forward), or none
 *
 * Read next: oplist.c (the info table), ../autograd/graph.h (the node), ops.h.
 */
#ifndef LUMEN_OPLIST_H
#define LUMEN_OPLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lumen/core.h"

/* ---------------------------------------------------------------- dtype rules */

typedef enum lmi_dtype_rule {
	LMI_DT_SAME,     /* any dtype; the result keeps it (abs, add, views, copies) */
	LMI_DT_FLOATFN,  /* any dtype; integers compute in float32 (exp, div, mean) */
	LMI_DT_FLOAT,    /* float32 and float64 only (softmax, gelu, the optimizers) */
	LMI_DT_COMPARE,  /* any dtype; the result is uint8 (eq, lt) */
	LMI_DT_INDEX,    /* any dtype; the result is int64 positions (argmax) */
	LMI_DT_WIDEN,    /* any dtype; integers accumulate in int64 (sum, prod, cumsum) */
	LMI_DT_INDICES,  /* integer indices (int32, int64) in, int64 out (one_hot) */
	LMI_DT_QUANT,    /* quantized operands: uint8 x int8 -> exact int32 (int_mm); float32 x a
	                  * block-type weight (q8_0, q4_0) -> float32 (linear_blocks) */
	LMI_DT_RULE_COUNT
} lmi_dtype_rule;

/* ---------------------------------------------------------------- parameters */

/*
 * P(name, fields): the parameter struct lmi_p_<name>; each field is
 *   LMI_PF(type, field, kind)                  one value (kind: int, float, bool, dim, device)
 *   LMI_PA(field, cap, count)                  int64_t field[cap], its first `count` entries used
 * A dim is 0-based here and shown 1-based to Lua (as every dim is there).
 */
/*
 * P(name, fields): the parameter struct lmi_p_<name>; each field names its struct again (so that
 * its offset can be taken where the field tables are made, oplist.c):
 *   LMI_PF(struct, type, field, kind)            one value; kind: INT, FLOAT, BOOL, DIM, INDEX, DEVICE,
 *                                                or LOOP (an int64_t the device loop needs, derived
 *                                                by the op: not a parameter a user gave, not shown)
 *   LMI_PA(struct, field, cap, count, mult)      int64_t field[cap], of which the first
 *                                                count * mult entries are used
 * A dim and an index (a position along a dim) are 0-based here (a dim of LM_DIM_ALL: every dim)
 * and shown 1-based to Lua, as every dim and index is there. The reductions' structs begin alike
 * (dim, keepdim): a rule may read those of any of them through reduce.
 */
#define LMI_PARAMS(P) \
	P(none, ) \
	P(clamp, LMI_PF(clamp, double, min, FLOAT) LMI_PF(clamp, double, max, FLOAT)) \
	P(leaky_relu, LMI_PF(leaky_relu, double, negative_slope, FLOAT)) \
	P(pow_scalar, LMI_PF(pow_scalar, double, exponent, FLOAT)) \
	P(add_scaled, LMI_PF(add_scaled, double, alpha, FLOAT)) \
	P(reduce, LMI_PF(reduce, int64_t, dim, DIM) LMI_PF(reduce, bool, keepdim, BOOL) LMI_PF(reduce, int64_t, mask, LOOP)) \
	P(var, LMI_PF(var, int64_t, dim, DIM) LMI_PF(var, bool, keepdim, BOOL) LMI_PF(var, int64_t, mask, LOOP) LMI_PF(var, double, correction, FLOAT)) \
	P(norm, LMI_PF(norm, int64_t, dim, DIM) LMI_PF(norm, bool, keepdim, BOOL) LMI_PF(norm, int64_t, mask, LOOP) LMI_PF(norm, double, p, FLOAT)) \
	P(dim, LMI_PF(dim, int64_t, dim, DIM)) \
	P(sort, LMI_PF(sort, int64_t, dim, DIM) LMI_PF(sort, int64_t, k, INT) LMI_PF(sort, bool, descending, BOOL)) \
	P(triangle, LMI_PF(triangle, int64_t, k, INT)) \
	P(one_hot, LMI_PF(one_hot, int64_t, classes, INT)) \
	P(dims, LMI_PF(dims, int64_t, ndims, INT) LMI_PA(dims, dims, LM_MAX_DIMS, ndims, 1)) \
	P(repeat, LMI_PF(repeat, int64_t, ndims, INT) LMI_PA(repeat, repeats, LM_MAX_DIMS, ndims, 1)) \
	P(pad, LMI_PF(pad, int64_t, npairs, INT) LMI_PA(pad, pads, 2 * LM_MAX_DIMS, npairs, 2)) \
	P(window, LMI_PF(window, int64_t, kh, INT) LMI_PF(window, int64_t, kw, INT) LMI_PF(window, int64_t, sh, INT) LMI_PF(window, int64_t, sw, INT) LMI_PF(window, int64_t, ph, INT) LMI_PF(window, int64_t, pw, INT) LMI_PF(window, int64_t, dh, INT) LMI_PF(window, int64_t, dw, INT) LMI_PF(window, int64_t, channels, INT) LMI_PF(window, int64_t, height, INT) LMI_PF(window, int64_t, width, INT) LMI_PF(window, int64_t, oh, LOOP) LMI_PF(window, int64_t, ow, LOOP)) \
	P(softmax, LMI_PF(softmax, int64_t, dim, DIM)) \
	P(gelu, LMI_PF(gelu, bool, tanh_approx, BOOL)) \
	P(attention, LMI_PF(attention, bool, is_causal, BOOL) LMI_PF(attention, double, scale, FLOAT)) \
	P(nll, LMI_PF(nll, int64_t, batch, INT) LMI_PF(nll, int64_t, classes, INT) LMI_PF(nll, int64_t, length, INT)) \
	P(bce_logits, LMI_PF(bce_logits, bool, pos_weight, BOOL)) \
	P(conv2d, LMI_PF(conv2d, int64_t, ph, INT) LMI_PF(conv2d, int64_t, pw, INT)) \
	P(to_device, LMI_PF(to_device, int64_t, from, DEVICE)) \
	P(transpose, LMI_PF(transpose, int64_t, dim0, DIM) LMI_PF(transpose, int64_t, dim1, DIM)) \
	P(narrow, LMI_PF(narrow, int64_t, dim, DIM) LMI_PF(narrow, int64_t, start, INDEX) LMI_PF(narrow, int64_t, length, INT)) \
	P(select, LMI_PF(select, int64_t, dim, DIM) LMI_PF(select, int64_t, index, INDEX)) \
	P(scalar, LMI_PF(scalar, double, value, FLOAT)) \
	P(pool, LMI_PF(pool, int64_t, kh, INT) LMI_PF(pool, int64_t, kw, INT) LMI_PF(pool, int64_t, sh, INT) LMI_PF(pool, int64_t, sw, INT) LMI_PF(pool, int64_t, ph, INT) LMI_PF(pool, int64_t, pw, INT)) \
	P(count, LMI_PF(count, int64_t, base, INT)) \
	P(crop, LMI_PF(crop, int64_t, pad, INT)) \
	P(sgd, LMI_PF(sgd, double, lr, FLOAT) LMI_PF(sgd, double, momentum, FLOAT) LMI_PF(sgd, double, dampening, FLOAT) LMI_PF(sgd, double, weight_decay, FLOAT) LMI_PF(sgd, bool, nesterov, BOOL) LMI_PF(sgd, bool, maximize, BOOL) LMI_PF(sgd, bool, first, BOOL)) \
	P(adam, LMI_PF(adam, double, lr, FLOAT) LMI_PF(adam, double, beta1, FLOAT) LMI_PF(adam, double, beta2, FLOAT) LMI_PF(adam, double, eps, FLOAT) LMI_PF(adam, double, weight_decay, FLOAT) LMI_PF(adam, bool, amsgrad, BOOL) LMI_PF(adam, bool, decoupled, BOOL) LMI_PF(adam, bool, maximize, BOOL) LMI_PF(adam, double, step_size, FLOAT) LMI_PF(adam, double, bc2_sqrt, FLOAT) LMI_PF(adam, int64_t, step, INT)) \
	P(rmsprop, LMI_PF(rmsprop, double, lr, FLOAT) LMI_PF(rmsprop, double, alpha, FLOAT) LMI_PF(rmsprop, double, eps, FLOAT) LMI_PF(rmsprop, double, weight_decay, FLOAT) LMI_PF(rmsprop, double, momentum, FLOAT) LMI_PF(rmsprop, bool, centered, BOOL) LMI_PF(rmsprop, bool, maximize, BOOL))

/* ---------------------------------------------------------------- the ops */

#define LMI_OPS(X)                                                                                 \
	/* elementwise, one input (in lm_unop's order: LMI_OP_EXP + op) */                             \
	X(EXP, "exp", "ExpBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                         \
	X(LOG, "log", "LogBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                         \
	X(SQRT, "sqrt", "SqrtBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                      \
	X(ABS, "abs", "AbsBackward", none, 1, unary, LMI_DT_SAME, unary)                            \
	X(NEG, "neg", "NegBackward", none, 1, unary, LMI_DT_SAME, unary)                            \
	X(SIN, "sin", "SinBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                         \
	X(COS, "cos", "CosBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                         \
	X(TANH, "tanh", "TanhBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                      \
	X(SIGMOID, "sigmoid", "SigmoidBackward", none, 1, unary, LMI_DT_FLOATFN, unary)             \
	X(RELU, "relu", "ReluBackward", none, 1, unary, LMI_DT_SAME, unary)                         \
	X(SIGN, "sign", "SignBackward", none, 1, unary, LMI_DT_SAME, unary)                         \
	X(FLOOR, "floor", "FloorBackward", none, 1, unary, LMI_DT_SAME, unary)                      \
	X(CEIL, "ceil", "CeilBackward", none, 1, unary, LMI_DT_SAME, unary)                         \
	X(ROUND, "round", "RoundBackward", none, 1, unary, LMI_DT_SAME, unary)                      \
	X(RSQRT, "rsqrt", "RsqrtBackward", none, 1, unary, LMI_DT_FLOATFN, unary)                   \
	X(RECIPROCAL, "reciprocal", "ReciprocalBackward", none, 1, unary, LMI_DT_FLOATFN, unary)    \
	X(SQUARE, "square", "SquareBackward", none, 1, unary, LMI_DT_SAME, unary)                   \
	X(CLAMP, "clamp", "ClampBackward", clamp, 1, unary, LMI_DT_SAME, unary)                     \
	X(LEAKY_RELU, "leaky_relu", "LeakyReluBackward", leaky_relu, 1, unary, LMI_DT_FLOAT, unary) \
	X(POW_SCALAR, "pow_scalar", "PowBackward", pow_scalar, 1, unary, LMI_DT_FLOATFN, unary)     \
	/* elementwise, two or three inputs, broadcast (in lm_binop's order: LMI_OP_ADD + op) */        \
	X(ADD, "add", "AddBackward", none, 2, binary, LMI_DT_SAME, binary)                          \
	X(SUB, "sub", "SubBackward", none, 2, binary, LMI_DT_SAME, binary)                          \
	X(MUL, "mul", "MulBackward", none, 2, binary, LMI_DT_SAME, binary)                          \
	X(DIV, "div", "DivBackward", none, 2, binary, LMI_DT_FLOATFN, binary)                       \
	X(POW, "pow", "PowBackward", none, 2, binary, LMI_DT_SAME, binary)                          \
	X(MAXIMUM, "maximum", "MaximumBackward", none, 2, binary, LMI_DT_SAME, binary)              \
	X(MINIMUM, "minimum", "MinimumBackward", none, 2, binary, LMI_DT_SAME, binary)              \
	X(EQ, "eq", NULL, none, 2, binary, LMI_DT_COMPARE, none)                                     \
	X(NE, "ne", NULL, none, 2, binary, LMI_DT_COMPARE, none)                                     \
	X(LT, "lt", NULL, none, 2, binary, LMI_DT_COMPARE, none)                                     \
	X(LE, "le", NULL, none, 2, binary, LMI_DT_COMPARE, none)                                     \
	X(GT, "gt", NULL, none, 2, binary, LMI_DT_COMPARE, none)                                     \
	X(GE, "ge", NULL, none, 2, binary, LMI_DT_COMPARE, none)                                     \
	X(FLOOR_DIVIDE, "floor_divide", "FloorDivideBackward", none, 2, binary, LMI_DT_SAME, binary) \
	X(REMAINDER, "remainder", "RemainderBackward", none, 2, binary, LMI_DT_SAME, binary)        \
	X(WHERE, "where", "WhereBackward", none, 3, where, LMI_DT_SAME, where)                      \
	X(ADD_SCALED, "add_scaled", "AddScaledBackward", add_scaled, 2, add_scaled, LMI_DT_SAME, add_scaled) \
	X(ADD_SCALAR_, "add_scalar_", NULL, scalar, 1, unary, LMI_DT_SAME, none)                    \
	X(MUL_SCALAR_, "mul_scalar_", NULL, scalar, 1, unary, LMI_DT_SAME, none)                    \
	X(DIV_SCALAR_, "div_scalar_", NULL, scalar, 1, unary, LMI_DT_SAME, none)                    \
	X(MASKED_FILL, "masked_fill", "MaskedFillBackward", none, 2, where, LMI_DT_SAME, masked_fill) \
	/* reductions (in lm_redop's order: LMI_OP_SUM + op) */                                        \
	X(SUM, "sum", "SumBackward", reduce, 1, reduce_dims, LMI_DT_WIDEN, reduce)                  \
	X(MEAN, "mean", "MeanBackward", reduce, 1, reduce_dims, LMI_DT_FLOATFN, reduce)             \
	X(PROD, "prod", "ProdBackward", reduce, 1, reduce_dims, LMI_DT_WIDEN, reduce)               \
	X(AMAX, "amax", "MaxBackward", reduce, 1, reduce_dims, LMI_DT_SAME, reduce)                 \
	X(AMIN, "amin", "MinBackward", reduce, 1, reduce_dims, LMI_DT_SAME, reduce)                 \
	X(ARGMAX, "argmax", NULL, reduce, 1, reduce_dims, LMI_DT_INDEX, none)                        \
	X(ARGMIN, "argmin", NULL, reduce, 1, reduce_dims, LMI_DT_INDEX, none)                        \
	X(VAR, "var", "VarBackward", var, 1, reduce_dims, LMI_DT_FLOATFN, reduce)                \
	X(STD, "std", "StdBackward", var, 1, reduce_dims, LMI_DT_FLOATFN, reduce)                \
	X(NORM, "norm", "NormBackward", norm, 1, reduce_dims, LMI_DT_FLOATFN, reduce)             \
	X(COUNT_CORRECT, "count_correct", NULL, count, 2, count_correct, LMI_DT_FLOAT, none)         \
	X(CUMSUM, "cumsum", "CumsumBackward", dim, 1, cumsum, LMI_DT_WIDEN, cumsum)                 \
	X(SORT, "sort", "SortBackward", sort, 1, sort, LMI_DT_SAME, sort)                           \
	X(TOPK, "topk", "TopkBackward", sort, 1, sort, LMI_DT_SAME, sort)                           \
	/* products */                                                                                 \
	X(MATMUL, "matmul", "MatmulBackward", none, 2, matmul, LMI_DT_SAME, matmul)                 \
	X(MM, "mm", "MmBackward", none, 2, matmul, LMI_DT_SAME, matmul)                             \
	X(MATMUL_BATCH_SUM, "matmul_batch_sum", NULL, none, 2, matmul_batch_sum, LMI_DT_FLOAT, none) \
	/* neural-network loops */                                                                     \
	X(SOFTMAX, "softmax", "SoftmaxBackward", softmax, 1, softmax, LMI_DT_FLOAT, softmax)        \
	X(LOG_SOFTMAX, "log_softmax", "LogSoftmaxBackward", softmax, 1, softmax, LMI_DT_FLOAT, softmax) \
	X(GELU, "gelu", "GeluBackward", gelu, 1, gelu, LMI_DT_FLOAT, gelu)                          \
	X(GELU_BACKWARD, "gelu_backward", NULL, gelu, 2, gelu, LMI_DT_FLOAT, none)                   \
	X(LSTM_CELL, "lstm_cell", "LstmCellBackward", none, 2, lstm_cell, LMI_DT_FLOAT, lstm_cell)   \
	X(LSTM_CELL_BACKWARD, "lstm_cell_backward", NULL, none, 4, lstm_cell, LMI_DT_FLOAT, none)    \
	X(GRU_CELL, "gru_cell", "GruCellBackward", none, 3, gru_cell, LMI_DT_FLOAT, gru_cell)        \
	X(GRU_CELL_BACKWARD, "gru_cell_backward", NULL, none, 5, gru_cell, LMI_DT_FLOAT, none)       \
	X(FLASH_ATTENTION, "flash_attention", "FlashAttentionBackward", attention, 3, attention, LMI_DT_FLOAT, flash_attention) \
	X(FLASH_ATTENTION_BACKWARD, "flash_attention_backward", NULL, attention, 5, attention, LMI_DT_FLOAT, none) \
	X(CUSTOM, "custom", "CustomBackward", none, -1, ops, LMI_DT_SAME, custom)                   \
	X(NLL_LOSS, "nll_loss", "NllLossBackward", nll, 2, nll, LMI_DT_FLOAT, nll)                  \
	X(NLL_GRAD, "nll_grad", NULL, nll, 2, nll_grad, LMI_DT_FLOAT, none)                          \
	X(BCE_LOGITS, "binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward",   \
	  bce_logits, 3, ops, LMI_DT_FLOAT, bce_logits)                                              \
	X(MAX_POOL2D, "max_pool2d", "MaxPool2DBackward", pool, 1, max_pool2d, LMI_DT_FLOAT, max_pool2d) \
	X(CONV2D_WINOGRAD, "conv2d_winograd", "ConvolutionWinogradBackward", conv2d, 3, winograd_conv, \
	  LMI_DT_FLOAT, winograd)                                                                    \
	X(CONV2D_WINOGRAD_BACKWARD, "conv2d_winograd_backward", NULL, conv2d, 3,                    \
	  winograd_conv_backward, LMI_DT_FLOAT, none)                                                \
	X(IM2COL, "im2col", "Im2colBackward", window, 1, im2col, LMI_DT_SAME, im2col)               \
	X(COL2IM, "col2im", "Col2imBackward", window, 1, col2im, LMI_DT_SAME, col2im)               \
	X(IM2COL_NHWC, "im2col_nhwc", NULL, window, 1, im2col_nhwc, LMI_DT_SAME, none)              \
	/* moving data by position */                                                                  \
	X(INDEX_SELECT, "index_select", "IndexSelectBackward", dim, 2, index_select, LMI_DT_SAME, index_select) \
	X(GATHER, "gather", "GatherBackward", dim, 2, gather, LMI_DT_SAME, gather)                  \
	X(SCATTER_ADD, "scatter_add", "ScatterAddBackward", dim, 3, scatter_add, LMI_DT_SAME, scatter_add) \
	X(ONE_HOT, "one_hot", NULL, one_hot, 1, one_hot, LMI_DT_INDICES, none)                       \
	X(TRIL, "tril", "TrilBackward", triangle, 1, triangle, LMI_DT_SAME, triangle)               \
	X(TRIU, "triu", "TriuBackward", triangle, 1, triangle, LMI_DT_SAME, triangle)               \
	X(REPEAT, "repeat", "RepeatBackward", repeat, 1, repeat_fill, LMI_DT_SAME, repeat)          \
	X(FLIP, "flip", "FlipBackward", dims, 1, copy, LMI_DT_SAME, flip)                           \
	X(PAD, "pad", "PadBackward", pad, 1, copy, LMI_DT_SAME, pad)                                \
	X(CAT, "cat", "CatBackward", dim, -1, copy, LMI_DT_SAME, cat)                               \
	X(STACK, "stack", "StackBackward", dim, -1, copy, LMI_DT_SAME, stack)                       \
	X(CLONE, "clone", "CloneBackward", none, 1, copy, LMI_DT_SAME, copy)                        \
	X(TO_DTYPE, "to_dtype", "ToCopyBackward", none, 1, copy, LMI_DT_SAME, copy)                       \
	X(TO_DEVICE, "to_device", "ToCopyBackward", to_device, 1, copy, LMI_DT_SAME, to_device)     \
	/* views: geometry over the same storage, no loop */                                           \
	X(VIEW, "view", "ViewBackward", none, 1, view, LMI_DT_SAME, reshape)                        \
	X(RESHAPE, "reshape", "ReshapeBackward", none, 1, view, LMI_DT_SAME, reshape)               \
	X(SQUEEZE, "squeeze", "SqueezeBackward", none, 1, view, LMI_DT_SAME, reshape)               \
	X(UNSQUEEZE, "unsqueeze", "UnsqueezeBackward", none, 1, view, LMI_DT_SAME, reshape)         \
	X(FLATTEN, "flatten", "FlattenBackward", none, 1, view, LMI_DT_SAME, reshape)               \
	X(TRANSPOSE, "transpose", "TransposeBackward", transpose, 1, view, LMI_DT_SAME, transpose)  \
	X(PERMUTE, "permute", "PermuteBackward", dims, 1, view, LMI_DT_SAME, permute)               \
	X(NARROW, "narrow", "NarrowBackward", narrow, 1, view, LMI_DT_SAME, narrow)                 \
	X(SELECT, "select", "SelectBackward", select, 1, view, LMI_DT_SAME, select)                 \
	X(EXPAND, "expand", "ExpandBackward", none, 1, view, LMI_DT_SAME, expand)                   \
	/* the optimizers' updates and the loader's augmentations (in place, no autograd) */           \
	X(SGD_STEP, "sgd_step", NULL, sgd, 3, sgd_step, LMI_DT_FLOAT, none)                          \
	X(ADAM_STEP, "adam_step", NULL, adam, 5, adam_step, LMI_DT_FLOAT, none)                      \
	X(RMSPROP_STEP, "rmsprop_step", NULL, rmsprop, 5, rmsprop_step, LMI_DT_FLOAT, none)          \
	X(CROP_BATCH, "crop_batch", NULL, crop, 2, crop_batch, LMI_DT_SAME, none)                    \
	X(FLIP_BATCH, "flip_batch", NULL, none, 2, flip_batch, LMI_DT_SAME, none)                    \
	/* the quantized products (ops/quant.c): no autograd, the inputs are codes */                  \
	X(INT_MM, "int_mm", NULL, none, 2, int_mm, LMI_DT_QUANT, none)                               \
	X(LINEAR_BLOCKS, "linear_blocks", NULL, none, 2, linear_blocks, LMI_DT_QUANT, none) \
	/* a compiled program's fused group of elementwise nodes (ops/program.c; lmi_exec.fused) */     \
	X(FUSED, "fused", NULL, none, -1, fused, LMI_DT_SAME, none)

#define LMI_OP_ENUM_(ID, ...) LMI_OP_##ID,
typedef enum lmi_op { LMI_OPS(LMI_OP_ENUM_) LMI_OP_COUNT } lmi_op;
#undef LMI_OP_ENUM_

/* The parameter structs. */
#define LMI_PF(s, type, field, kind) type field;
#define LMI_PA(s, field, cap, count, mult) int64_t field[cap];
#define LMI_P_STRUCT_(name, fields) typedef struct lmi_p_##name { char unused_; fields } lmi_p_##name;
LMI_PARAMS(LMI_P_STRUCT_)
#undef LMI_P_STRUCT_
#undef LMI_PF
#undef LMI_PA

/* Any op's parameters: the node holds one, each op reads its own member. */
#define LMI_P_MEMBER_(name, fields) lmi_p_##name name;
typedef union lmi_params { LMI_PARAMS(LMI_P_MEMBER_) } lmi_params;
#undef LMI_P_MEMBER_

/* What a parameter field is, for printing it (grad_fn.params, lm.ops). */
typedef enum lmi_param_kind {
	LMI_PK_INT,    /* int64_t */
	LMI_PK_FLOAT,  /* double */
	LMI_PK_BOOL,   /* bool */
	LMI_PK_DIM,    /* int64_t, a 0-based dim (LM_DIM_ALL: every dim) */
	LMI_PK_INDEX,  /* int64_t, a 0-based position along a dim */
	LMI_PK_DEVICE, /* int64_t, an lm_device */
	LMI_PK_INTS,   /* int64_t[cap], count_of * mult entries */
	LMI_PK_LOOP,   /* int64_t the loop needs (a reduction's dim mask, a window's output size): not shown */
} lmi_param_kind;

typedef struct lmi_param_field {
	const char *name;
	lmi_param_kind kind;
	size_t offset;   /* in the params struct */
	size_t count_of; /* LMI_PK_INTS: the offset of the int64_t field that counts it */
	int mult;        /* LMI_PK_INTS: entries per count */
} lmi_param_field;

/* A device slot, or one of the pseudo-slots: copies, views, other ops (a composite whose forward
 * is made of ops, recorded as one node for its backward). */
#define LMI_SLOT_COPY (-1)
#define LMI_SLOT_VIEW (-2)
#define LMI_SLOT_OPS (-3)

/* The rows, as data. A backward rule: given the gradient of the node's output (gout, the output's
 * shape and dtype), sets gin[k] (+1) for each input k that needs a gradient (graph.h). */
typedef struct lmi_node lmi_node;
typedef lm_status lmi_bw_fn_t(lmi_node *n, const lm_tensor *gout, lm_tensor **gin);

/* The backward functions the rows name (defined beside their ops; lmi_bw_none fails: it stands
 * in the rows that have no rule, whose grad_name is NULL). */
#define LMI_BW_DECL_(ID, name, grad, params, arity, slot, rule, bw) lmi_bw_fn_t lmi_bw_##bw;
LMI_OPS(LMI_BW_DECL_)
#undef LMI_BW_DECL_

typedef struct lmi_op_info {
	const char *name;
	const char *grad_name;           /* NULL: no backward rule */
	int arity;                       /* -1: a list */
	int slot;                        /* lmi_be_op, LMI_SLOT_COPY or LMI_SLOT_VIEW */
	lmi_dtype_rule rule;
	lmi_bw_fn_t *backward;           /* lmi_bw_none exactly when grad_name is NULL */
	const char *params_name;         /* "reduce" */
	const lmi_param_field *fields;   /* the params' fields, nfields of them */
	int nfields;
} lmi_op_info;

extern const lmi_op_info lmi_ops[LMI_OP_COUNT];
static inline const lmi_op_info *lmi_op_get(lmi_op op) { return &lmi_ops[op]; }
/* The op named name ("exp"), or -1. */
int lmi_op_find(const char *name);
/* The dtype rule's words ("float32 and float64", ...). */
const char *lmi_dtype_rule_text(lmi_dtype_rule r);
/* The parameters of op o a user sees (not the loop-only ones), and the j-th of them in p as an
 * lm_param (lumen/autograd.h; 0 <= j < lmi_param_count(o)). */
struct lm_param;
int lmi_param_count(const lmi_op_info *o);
void lmi_param_read(const lmi_op_info *o, const lmi_params *p, int j, struct lm_param *out);

#endif
