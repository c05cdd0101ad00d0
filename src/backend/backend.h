/*
 * backend.h — the devices: the one interface through which ops reach a device (ggml's backend
 * interface is the model), their registry, and the loops table the CPU and CUDA implement their
 * compute with.
 *
 * An op builds a node (exec.h: the op of the list, its parameters, inputs and outputs) and
 * lmi_compute (ops/common.c) asks the node's device supports_node and runs compute; a device that
 * lacks an op is refused in one wording (lmi_refuse). What a device may assume of a node is in
 * exec.h: checked arguments, result shapes computed, inputs converted to the loop's dtype, outputs
 * allocated; a loop fails only on what the data or the machine decides, with the thread's error
 * set. No device records autograd nodes.
 *
 * The CPU (cpu/backend_cpu.c: the loops of that directory) is always registered and runs every
 * node. The CUDA device (cuda/backend_cuda.c, in liblumen: plain C that turns each loop's tensors
 * into pointers, shapes and strides for the CUDA module's kernels, cuda/tensor_api.h) is
 * registered on first use, when a tensor is first moved to the GPU (lmi_backend_open loads it);
 * no op file names a device. A device other than the CPU also carries what the core needs to keep
 * tensors there (mem: memory, raw copies, the copy / fill / random loops), which registration
 * hands to the core (lmi_device_set). Read next: exec.h, loops.c, cpu/backend_cpu.c, backend.c,
 * cuda/backend_cuda.c, ../ops/ops.h.
 */
#ifndef LUMEN_BACKEND_H
#define LUMEN_BACKEND_H

#include "backend/exec.h"
#include "core/lmi.h"
#include "lumen/ops.h"
#include "lumen/optim.h"

#define LMI_DEVICE_COUNT (LM_OPENCL + 1)

/* 2: mem, the optimizers' updates and the batch augmentations; 3: count_correct; 4: one compute(node);
 * 5: the quantized products int_mm and linear_blocks; 6: lstm_cell, attention; 7: fused; 8: im2col_nhwc. Bumped
 * when the interface changes, like
 * LMI_CUDA_MODULE_VERSION. */
#define LMI_BACKEND_VERSION 8

/* The loop families, once: their names (for supports_op, lm.ops and messages) in table order. */
#define LMI_BACKEND_OPS(X)                                                                         \
	X(unary) X(binary) X(where) X(add_scaled) X(reduce_dims) X(count_correct) X(matmul)            \
	X(matmul_batch_sum) X(softmax) X(gelu) X(nll) X(nll_grad) X(max_pool2d) X(winograd_conv)      \
	X(winograd_conv_backward) X(im2col) X(col2im) X(im2col_nhwc) X(index_select) X(gather) X(scatter_add)         \
	X(one_hot) X(sort) X(cumsum) X(triangle) X(repeat_fill) X(sgd_step) X(adam_step)              \
	X(rmsprop_step) X(crop_batch) X(flip_batch) X(int_mm) X(linear_blocks) X(lstm_cell) \
	X(gru_cell) X(attention) X(fused)

#define LMI_BE_ENUM_(name) LMI_BE_OP_##name,
typedef enum lmi_be_op { LMI_BACKEND_OPS(LMI_BE_ENUM_) LMI_BE_OP_COUNT } lmi_be_op;
#undef LMI_BE_ENUM_

/* The unary loop's variants with parameters, numbered after the public lm_unop. */
enum lmi_cpu_unop_ext {
	LMI_CLAMP = LM_UNOP_COUNT, /* clamp(v, p0, p1) */
	LMI_LEAKY_RELU,            /* v > 0 ? v : v * p0 */
	LMI_POW_SCALAR,            /* v ^ p0 */
	LMI_ADD_SCALED,            /* v * p0 + p1 */
	LMI_ADD_S,                 /* v + p0 (floats) */
	LMI_MUL_S,                 /* v * p0 (floats) */
	LMI_DIV_S,                 /* v / p0 (floats) */
	LMI_UNOP_EXT_COUNT
};

/* The unary loop's code and parameters for a node of the unary family (exp .. pow_scalar and the
 * in-place scalar ops): true, or false when e is not one. */
static inline bool lmi_exec_unary(const lmi_exec *e, int *code, double *p0, double *p1)
{
	*p0 = *p1 = 0;
	switch (e->op) {
	case LMI_OP_CLAMP: *code = LMI_CLAMP, *p0 = e->p->clamp.min, *p1 = e->p->clamp.max; return true;
	case LMI_OP_LEAKY_RELU: *code = LMI_LEAKY_RELU, *p0 = e->p->leaky_relu.negative_slope; return true;
	case LMI_OP_POW_SCALAR: *code = LMI_POW_SCALAR, *p0 = e->p->pow_scalar.exponent; return true;
	case LMI_OP_ADD_SCALAR_: *code = LMI_ADD_S, *p0 = e->p->scalar.value; return true;
	case LMI_OP_MUL_SCALAR_: *code = LMI_MUL_S, *p0 = e->p->scalar.value; return true;
	case LMI_OP_DIV_SCALAR_: *code = LMI_DIV_S, *p0 = e->p->scalar.value; return true;
	default:
		if (e->op < LMI_OP_EXP || e->op > LMI_OP_SQUARE) return false;
		*code = (int)(e->op - LMI_OP_EXP);
		return true;
	}
}

/* A reduction node's lm_redop, dim mask and p (the norm's p, the variance's correction). */
static inline lm_redop lmi_exec_reduce(const lmi_exec *e, uint32_t *mask, double *p)
{
	lm_redop op = (lm_redop)(e->op - LMI_OP_SUM);
	*mask = (uint32_t)e->p->reduce.mask; /* the reductions' structs begin alike */
	*p = op == LM_NORM ? e->p->norm.p : (op == LM_VAR || op == LM_STD) ? e->p->var.correction : 0;
	return op;
}

/*
 * A device, as the ops and the core reach it: the one device interface. Its buffers (mem: memory,
 * raw copies, the copy / fill / random loops; NULL for the CPU, whose memory the core serves),
 * whether it runs a node (supports_node: it may be asked with no tensors in the node, for the op
 * table, and answers for the op and dtype then) and running it (compute). A device is one folder
 * implementing these and one line in the registry (backend.c); the fake device of the tests
 * (tests/fake_device.c) is the smallest, running the CPU's compute on its own memory.
 */
typedef struct lmi_backend {
	int version;      /* LMI_BACKEND_VERSION */
	const char *name; /* "cpu" */
	lm_device device;
	const lmi_device_ops *mem;
	bool (*supports_node)(const lmi_exec *e);
	lm_status (*compute)(const lmi_exec *e);
	/* Optional (NULL: node by node with compute): a whole graph of nodes in order, each reading
	 * what the earlier ones wrote — where a device gains from seeing them together (one launch,
	 * one stream) — and a pass that may rewrite the graph before it runs (fuse, drop; *n may
	 * shrink). lmi_compute_graph (ops/common.c) runs them. */
	lm_status (*compute_graph)(lmi_exec *nodes, int n);
	lm_status (*graph_optimize)(lmi_exec *nodes, int *n);
} lmi_backend;

/*
 * The loops a device may implement its compute with: one function per family of ops, with the
 * arguments unpacked from the node (lmi_loops_compute does that, the same way for every device
 * that uses it: the CPU and the CUDA one). A device leaves the families it lacks NULL; supports_op
 * says which dtypes each runs.
 */
typedef struct lmi_loops {
	/* Whether the device runs loop op on data of dtype dt (the dtype of the tensor the op asks about:
	 * its output, or its first input where the output's dtype is fixed). */
	bool (*supports_op)(lmi_be_op op, lm_dtype dt);

	/* ---- elementwise (out preallocated at the broadcast shape; inputs any strides) */
	/* out = op(x), x and out of one dtype (out may be x); op: lm_unop or lmi_cpu_unop_ext's
	 * parametrised loops (clamp, leaky_relu, pow, add_scaled, a number added, multiplied,
	 * divided by) with p0, p1 */
	lm_status (*unary)(int op, lm_tensor *out, const lm_tensor *x, double p0, double p1);
	/* out = a op b (a, b of one dtype, broadcast; out uint8 for comparisons); // and % too */
	lm_status (*binary)(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b);
	/* out = cond ? a : b (cond uint8; all broadcast) */
	lm_status (*where)(lm_tensor *out, const lm_tensor *cond, const lm_tensor *a, const lm_tensor *b);
	/* out = a + alpha * b (one pass) */
	lm_status (*add_scaled)(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double alpha);

	/* ---- reductions */
	/* x any strides reduced over the dims of mask into contiguous out (+ int64 idx for arg ops
	 * and max/min with indices); p: the norm's p or the variance's correction */
	lm_status (*reduce_dims)(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
	                         lm_tensor *idx, double p);
	/* *count = the rows r of logits (N, C; float, any strides, C > 0) whose argmax (the first
	 * largest, NaN as largest, as argmax) plus base equals labels[r] (N; int32 / int64, any
	 * stride): the accuracy of a batch in one pass, without the four ops of
	 * argmax:eq:sum:item */
	lm_status (*count_correct)(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
	                           int64_t *count);

	/* ---- products */
	/* out (batch..., M, N) = a (..., M, K) b (..., K, N) over the batch broadcast to bshape */
	lm_status (*matmul)(const lm_tensor *a, const lm_tensor *b, int bnd, const int64_t *bshape,
	                    lm_tensor *out);
	/* out (M, N) = sum over the batch of a_k b_k (same batch dims, float) */
	lm_status (*matmul_batch_sum)(const lm_tensor *a, const lm_tensor *b, lm_tensor *out);

	/* ---- fused nn loops (contiguous inputs, float) */
	lm_status (*softmax)(const lm_tensor *x, lm_tensor *y, int64_t outer, int64_t R, int64_t inner,
	                     bool log_softmax);
	/* GELU (g NULL) or its backward out = g * gelu'(x) */
	lm_status (*gelu)(lm_tensor *out, const lm_tensor *x, const lm_tensor *g, bool tanh_approx);
	/* out (N, L) = -logp[n, t[n, l], l] and its adjoint into a zeroed gx (N, C, L) */
	lm_status (*nll)(const lm_tensor *logp, const lm_tensor *target, lm_tensor *out, int64_t N,
	                 int64_t C, int64_t L);
	lm_status (*nll_grad)(const lm_tensor *g, const lm_tensor *target, lm_tensor *gx, int64_t N,
	                      int64_t C, int64_t L);
	/* planes of H x W into OH x OW maxima (+ int64 positions h * W + w) */
	lm_status (*max_pool2d)(const lm_tensor *x, lm_tensor *y, lm_tensor *idx, int64_t planes,
	                        int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t *k,
	                        const int64_t *stride, const int64_t *pad);
	/* 3x3 stride-1 convolution by Winograd F(2x2, 3x3), padding (ph, pw), and its backward */
	lm_status (*winograd_conv)(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
	                           int64_t ph, int64_t pw, lm_tensor *y);
	lm_status (*winograd_conv_backward)(const lm_tensor *x, const lm_tensor *w, const lm_tensor *gy,
	                                    int64_t ph, int64_t pw, lm_tensor *gx, lm_tensor *gw);
	/* x (N, C, H, W) -> cols (N, C*kh*kw, oh*ow), and the adjoint (windows summed) */
	lm_status (*im2col)(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
	                    lm_tensor *cols);
	lm_status (*col2im)(const lm_tensor *cols, const lm_window2d *w, int64_t oh, int64_t ow,
	                    lm_tensor *out);
	/* channels last: x (N, H, W, C) -> cols (N, oh*ow, kh*kw*C); NULL: the device has no such loop
	 * (the graph compiler's layout pass then leaves its convolutions in NCHW) */
	lm_status (*im2col_nhwc)(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
	                         lm_tensor *cols);

	/* ---- moving data by position (cpu/cpu_move.h states each) */
	lm_status (*index_select)(const char *fname, const lm_tensor *x, int64_t outer, int64_t size,
	                          int64_t inner, const lm_tensor *idx, lm_tensor *out);
	lm_status (*gather)(const lm_tensor *x, int dim, const lm_tensor *idx, lm_tensor *out);
	lm_status (*scatter_add)(lm_tensor *out, int dim, const lm_tensor *idx, const lm_tensor *src);
	lm_status (*one_hot)(const lm_tensor *idx, int64_t classes, lm_tensor *out);
	lm_status (*sort)(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
	                  bool descending, lm_tensor *values, lm_tensor *indices);
	lm_status (*cumsum)(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, lm_tensor *out);
	lm_status (*triangle)(const lm_tensor *x, int64_t B, int64_t M, int64_t N, int64_t k, bool upper,
	                      lm_tensor *out);
	lm_status (*repeat_fill)(lm_tensor *out, const int64_t *xshape, const int64_t *reps);

	/* ---- the optimizers' fused updates (lumen/optim.h states the arithmetic); every tensor
	 * contiguous, of p's shape and float dtype; the optional states NULL when unused */
	lm_status (*sgd_step)(lm_tensor *p, const lm_tensor *g, lm_tensor *buf, const lm_sgd_opts *o,
	                      bool first);
	/* step_size = lr / (1 - beta1^step), bc2_sqrt = sqrt(1 - beta2^step) */
	lm_status (*adam_step)(lm_tensor *p, const lm_tensor *g, lm_tensor *m, lm_tensor *v,
	                       lm_tensor *vmax, const lm_adam_opts *o, double step_size,
	                       double bc2_sqrt);
	lm_status (*rmsprop_step)(lm_tensor *p, const lm_tensor *g, lm_tensor *sq, lm_tensor *buf,
	                          lm_tensor *gavg, const lm_rmsprop_opts *o);

	/* ---- the data loader's whole-batch augmentations (contiguous x (N, ...), checked) */
	/* out (N, C, oh, ow) = x (N, C, H, W) zero-padded by pad, cut at offsets (N, 2) int64 */
	lm_status (*crop_batch)(const lm_tensor *x, const lm_tensor *offsets, int64_t pad,
	                        lm_tensor *out);
	/* out = x with the last dim reversed for the samples whose mask (N) uint8 entry is set */
	lm_status (*flip_batch)(const lm_tensor *x, const lm_tensor *mask, lm_tensor *out);

	/* ---- the quantized products (no autograd; contiguous operands, checked by ops/quant.c) */
	/* c (M, N) int32 = a (M, K) uint8 b (K, N) int8, exact over the whole range */
	lm_status (*int_mm)(const lm_tensor *a, const lm_tensor *b, lm_tensor *c);
	/* y (M, N) float32 = x (M, K) float32 W^T for W (N, K) of a block type (q8_0, q4_0): each row
	 * of x quantized to q8_0 once, then every row of W against it (ggml's scheme) */
	lm_status (*linear_blocks)(const lm_tensor *x, const lm_tensor *w, lm_tensor *y);

	/* ---- the LSTM's gates, fused (contiguous, float; B rows, H units) */
	/* forward: a (B, 4H) pre-activations (i, f, g, o), c (B, H) -> hc (B, 2H) = [h | c'] and act
	 * (B, 4H) the activations; backward (gact non-NULL): from act, c, hc and the gradient ghc
	 * (B, 2H) -> ga (B, 4H) and gc (B, H) */
	lm_status (*lstm_cell)(const lm_tensor *a, const lm_tensor *c, lm_tensor *hc, lm_tensor *act,
	                       const lm_tensor *ghc, lm_tensor *ga, lm_tensor *gc);

	/* ---- the GRU's gates, fused (contiguous, float): forward xg, hg (B, 3H) (r, z, n; hg with
	 * b_hh), h (B, H) -> hn (B, H) and act (B, 3H) = r, z, n; backward (ghn non-NULL): from act,
	 * hg, h and ghn -> gx (B, 3H) (the gradient of xg), ghg (B, 3H), gh (B, H) */
	lm_status (*gru_cell)(const lm_tensor *xg, const lm_tensor *hg, const lm_tensor *h, lm_tensor *hn,
	                      lm_tensor *act, const lm_tensor *ghn, lm_tensor *gx, lm_tensor *ghg, lm_tensor *gh);

	/* ---- attention without the T x T matrix (contiguous, float; BH batches of heads):
	 * forward: q (BH, L, E), k (BH, S, E), v (BH, S, Ev) -> o (BH, L, Ev) = softmax(q k^T scale
	 * [causal: j <= i]) v by an online softmax, and lse (BH, L) each row's log-sum-exp;
	 * backward (dout non-NULL): stats (BH, 2, L) = [lse; D = rowsum(dO * O)] -> dq, dk, dv */
	lm_status (*attention)(const lm_tensor *q, const lm_tensor *k, const lm_tensor *v, bool causal, double scale,
	                       lm_tensor *o, lm_tensor *lse, const lm_tensor *stats, const lm_tensor *dout,
	                       lm_tensor *dq, lm_tensor *dk, lm_tensor *dv);

	/* ---- a fused group of elementwise nodes (exec.h's lmi_fused): out[0..f->nout) of one shape,
	 * in[0..f->nin) broadcast to it, any strides */
	lm_status (*fused)(const lmi_fused *f, lm_tensor *const *out, const lm_tensor *const *in);
} lmi_loops;

/* The loop family that runs op (LMI_BE_OP_COUNT: none, the copies and views). */
lmi_be_op lmi_loop_of(lmi_op op);
/* A device's supports_node and compute through its loops (loops.c). */
bool lmi_loops_supports(const lmi_loops *L, const lmi_exec *e);
lm_status lmi_loops_compute(const lmi_loops *L, const lmi_exec *e);

/* What devices' loops share (loops.c): x (on its device) with the dims of mask moved last, as a
 * contiguous copy of dtype dt there, *rows x *R; and a matmul operand t (..., r, c) as a
 * contiguous (batch..., r, c) over the bnd batch dims of bshape, *sm its stride between matrices
 * (0 when one matrix serves every batch entry). NULL with the error set. */
lm_tensor *lmi_rows_of(const lm_tensor *x, uint32_t mask, lm_dtype dt, int64_t *rows, int64_t *R);
lm_tensor *lmi_batch_operand(const lm_tensor *t, int bnd, const int64_t *bshape, int64_t *sm);
/* matmul_batch_sum as one gemm C (M, N) = A (M, nK) B (nK, N): *ap and *bp (+1 each) on the device,
 * or LM_ERR_* with both NULL. */
lm_status lmi_batch_sum_operands(const lm_tensor *a, const lm_tensor *b, lm_tensor **ap,
                                 lm_tensor **bp, int64_t *M, int64_t *N, int64_t *nK);

/* ---------------------------------------------------------------- the registry (backend.c) */

/* The CPU's table (cpu/backend_cpu.c), registered from the start. */
extern const lmi_backend lmi_cpu_backend;

/* Registers b as the table of b->device, in place of the one registered before, and hands its
 * mem to the core. Returns the table it replaced (NULL: none). */
const lmi_backend *lmi_backend_register(const lmi_backend *b);
/* Removes the table of device d (not the CPU's); returns it. For tests that register their own. */
const lmi_backend *lmi_backend_unregister(lm_device d);
/* The table of device d, or NULL when none is registered (the ops ask this: a tensor on d exists
 * only once d's table is registered). */
const lmi_backend *lmi_backend_for(lm_device d);
/* The same, loading it on the first ask (what moving a tensor to d calls): LM_CUDA's comes from
 * lmi_cuda_backend_load. NULL with LM_ERR_DEVICE and a message starting with fname that says why
 * (built without CUDA, no driver, no device). */
const lmi_backend *lmi_backend_open(const char *fname, lm_device d);
/* The CUDA table: the CUDA module loaded and a device found, or NULL with the error set
 * (cuda_loader.c). */
const lmi_backend *lmi_cuda_backend_load(const char *fname);
/* The OpenCL table: the runtime loaded and a device found (opencl/backend_opencl.c), or NULL with
 * the error set. */
const lmi_backend *lmi_opencl_backend_load(const char *fname);
extern const lmi_backend lmi_opencl_backend;
/* The same table without loading anything: to ask its supports_op what the CUDA backend
 * implements (lm.ops), never to run a node. */
const lmi_backend *lmi_cuda_backend_table(void);
/* The registered tables, in device order (for tests that run every op on every backend). */
int lmi_backend_count(void);
const lmi_backend *lmi_backend_at(int i);
/* The name of loop family op ("matmul"). */
const char *lmi_be_op_name(lmi_be_op op);

#endif
