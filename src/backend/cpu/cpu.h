/*
 * cpu.h — the CPU backend: loops over memory, no shape checks, no autograd (the ops layer has
 * done both). Inputs arrive in the dtype the loop computes in; outputs are preallocated. The ops
 * reach these through the CPU's device table (backend_cpu.c, ../backend.h), not by name.
 * Read next: ewise.c, reduce.c, matmul.c.
 */
#ifndef LUMEN_BACKEND_CPU_H
#define LUMEN_BACKEND_CPU_H

#include "backend/backend.h"
#include "core/iter.h"

/* out = op(x); out and x have the same dtype and shape (x any strides; out may be x). */
lm_status lmi_cpu_unary(int op, lm_tensor *out, const lm_tensor *x, double p0, double p1);
/* out = a op b; a and b of one dtype, broadcast to out's shape; out uint8 for comparisons. An
 * integer // or % by zero is LM_ERR_ARG ("binary: integer division by zero ..."). */
lm_status lmi_cpu_binary(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b);
/* The loops of LM_FLOOR_DIVIDE and LM_REMAINDER (divmod.c). */
lm_status lmi_cpu_divmod(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b);
/* out = cond ? a : b; cond uint8; all broadcast to out's shape. */
lm_status lmi_cpu_where(lm_tensor *out, const lm_tensor *cond, const lm_tensor *a,
                        const lm_tensor *b);
/* A fused group of elementwise nodes (exec.h's lmi_fused) in one pass: fused.c. */
lm_status lmi_cpu_fused(const lmi_fused *f, lm_tensor *const *out, const lm_tensor *const *in);
/* Generated C for fused group f (jit.c), compiled and loaded on its first large run: the kernel,
 * or NULL (the interpreter runs: an op it does not generate, a small group, no compiler,
 * LUMEN_JIT=0). */
lmi_iter_kernel lmi_cpu_jit(const lmi_fused *f, lm_tensor *const *out, const lm_tensor *const *in);
/* What the generator does now ("'cc -O3 -march=x86-64-v3' kernels in DIR", "off (LUMEN_JIT=0)",
 * why it stopped...), and how many kernels it compiled and loaded in this process. */
const char *lmi_cpu_jit_status(int *compiled, int *loaded);
/* on: 1 generate, 0 do not, -1 as it is; min: the fewest elements of a generated group, -1 as it is. */
void lmi_cpu_jit_config(int on, int64_t min);

/*
 * Reduction of contiguous x viewed as (outer, R, inner) over the middle axis into contiguous out
 * (outer * inner elements, dtype per lm_reduce's rules) and, for max/min/arg ops, idx (int64, may
 * be NULL for max/min). p: the norm's p, or the variance correction.
 */
lm_status lmi_cpu_reduce(lm_redop op, const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                         lm_tensor *out, lm_tensor *idx, double p);
/*
 * The same for x of any strides (views, stride 0 included: nothing needs copying first) over the
 * dims whose bits are set in mask (bit d: dim d; several dims at once, or all of them), into
 * contiguous out whose elements are the kept dims in order (keepdim is the caller's reshape).
 * arg* and max/min with idx: one reduced dim (the index along it) or all (the C-order flat
 * index). Loops are reordered so that the innermost walks the closest-packed memory.
 */
lm_status lmi_cpu_reduce_dims(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
                              lm_tensor *idx, double p);
/* The backend's count_correct slot (../backend.h). */
lm_status lmi_cpu_count_correct(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
                                int64_t *count);

/*
 * C = A·B for float32/float64 matrices given as (pointer, rows, cols, row stride, col stride):
 * BLAS when one of the strides of each operand is 1, otherwise a copy first. C is dense
 * row-major (ldc = n). beta 0: overwrite, 1: accumulate.
 */
typedef struct lmi_mat {
	const void *data;
	int64_t rows, cols;
	int64_t rs, cs; /* elements */
} lmi_mat;
lm_status lmi_cpu_gemm(lm_dtype dt, const lmi_mat *a, const lmi_mat *b, void *c, int64_t ldc,
                       double beta);
/* Integer matmul by a plain loop (int32/int64/uint8, wrapping arithmetic). */
void lmi_cpu_gemm_int(lm_dtype dt, const lmi_mat *a, const lmi_mat *b, void *c, int64_t ldc);
/*
 * out = a b over the batch dims broadcast to (bnd, bshape): a (..., M, K), b (..., K, N) of out's
 * dtype, any strides; out dense (batch..., M, N). One gemm when b is a matrix and a dense a's
 * batch folds into rows (the Linear layer); else one per batch entry, in parallel over the batch
 * (BLAS single-threaded inside each) when the matrices are small or many.
 */
lm_status lmi_cpu_matmul(const lm_tensor *a, const lm_tensor *b, int bnd, const int64_t *bshape,
                         lm_tensor *out);
/* out (M, N) = the sum over the batch of a_k b_k (a (..., M, K), b (..., K, N), the same batch
 * dims, float): one output accumulated by gemm with beta 1, each thread into a partial of its own. */
lm_status lmi_cpu_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b, lm_tensor *out);

/* y (rows) = W x for W in q4_0 blocks (row-major, cols / 32 blocks a row; src/core/quant.h) and
 * x float32, quantized to q8_0 once (ggml's scheme: the activations on the fly); cols a multiple
 * of 32 (the caller's check). Rows in parallel; LM_ERR_NOMEM when the q8_0 copy of x cannot be
 * allocated. */
lm_status lmi_cpu_matvec_q4_0(const void *w, int64_t rows, int64_t cols, const float *x, float *y);
/* The same for W in q8_0 blocks: each row's int8 codes against x's, in int32 per block. */
lm_status lmi_cpu_matvec_q8_0(const void *w, int64_t rows, int64_t cols, const float *x, float *y);
/* backend.h's int_mm and linear_blocks (quant_mv.c): the SIMD path's u8 x s8 product; the rows of
 * x one by one through the matrix-vector products above */
lm_status lmi_cpu_int_mm(const lm_tensor *a, const lm_tensor *b, lm_tensor *c);
lm_status lmi_cpu_linear_blocks(const lm_tensor *x, const lm_tensor *w, lm_tensor *y);

#endif
