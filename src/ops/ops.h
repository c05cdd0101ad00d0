/*
 * ops.h (internal) — what the op files share: the autograd hook, the way to a device (lmi_run /
 * lmi_compute: a node for the device the tensors are on, ../backend/exec.h), and helpers
 * for results and gradients. Each op file holds, for its ops, argument checks and result shapes,
 * the call into the backend, the backward rules its rows in oplist.h name (lmi_bw_*), and the
 * recording.
 * Read next: unary.c, binary.c, reduce.c, matmul.c, view.c.
 */
#ifndef LUMEN_OPS_INTERNAL_H
#define LUMEN_OPS_INTERNAL_H

#include <stdio.h>

#include "autograd/graph.h"
#include "backend/backend.h"
#include "core/lmi.h"
#include "lumen/autograd.h"
#include "lumen/ops.h"

/*
 * Records out as made by op (with parameters p, NULL: none) from in[0..nin) and saves
 * save[0..nsave) (NULL entries skipped) when grad is needed. Returns out, or NULL (out released)
 * on failure. *node (if node is not NULL) receives the node or NULL.
 */
lm_tensor *lmi_finish(lm_tensor *out, lmi_op op, const lmi_params *p, int nin, const lm_tensor *const *in,
                      int nsave, const lm_tensor *const *save, lmi_node **node);

/*
 * The one way an op reaches a device: runs the node e (../backend/exec.h) on the device of its
 * first output (or first input), after asking that device whether it runs it. A device that does
 * not: LM_ERR_UNSUPPORTED, "<fname>: the <device> device has no <op> loop for <dtype> (shape
 * <shape>)", the same words wherever it arises. lmi_supports asks without running (an op that
 * picks another algorithm when a device lacks one).
 */
lm_status lmi_compute(lmi_exec *e);
bool lmi_supports(const lmi_exec *e);
/* The error lmi_compute gives when e's device does not run it. */
lm_status lmi_refuse(const lmi_exec *e);
/* Runs nodes[0..n) in order on the device of the first (all must be on it): every node asked
 * first (none runs when one is refused), then the device's graph_optimize and compute_graph where
 * it has them, else compute node by node. */
lm_status lmi_compute_graph(lmi_exec *nodes, int n);
/* Builds the node on the stack and runs it: the common case, in one call. */
lm_status lmi_run(const char *fname, lmi_op op, const lmi_params *p, lm_dtype dt, int nsrc,
                  const lm_tensor *const *src, int ndst, lm_tensor *const *dst);

/* g summed down to shape (ndim, shape), which g's shape broadcasts from: leading dims summed
 * away, dims that are 1 in shape summed with keepdim. Returns g itself (+1) when shapes match. */
lm_tensor *lmi_sum_to(const lm_tensor *g, int ndim, const int64_t *shape);

/* Sum over the batch of a_i b_i for a (..., M, K), b (..., K, N) with equal batch dims -> (M, N),
 * accumulated by gemm without a batched intermediate. For backward rules; not recorded. */
lm_tensor *lmi_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b);

/* Checks that the tensors are on one device (NULL entries skipped) with a registered backend. */
lm_status lmi_check_device(const char *fname, int n, const lm_tensor *const *ts);
/* Checks that t is not NULL, naming the function and the argument. */
lm_status lmi_check_arg(const char *fname, const char *arg, const lm_tensor *t);
/* The same, and that t is float32 or float64 ("<fname>: <arg> must be float32 or float64"). */
lm_status lmi_check_float(const char *fname, const char *arg, const lm_tensor *t);

/* Re-raises the thread's error as fname's ("min: interrupted" from an op used inside another
 * becomes "gather: interrupted"): a leading "name: " is replaced. Returns the status. */
lm_status lmi_fail_as(const char *fname);

/* The window of t (shaped as the node's input) that a narrow or select node took (+1, not
 * recorded); NULL with no error set for a node of any other op (view.c). */
struct lmi_node;
lm_tensor *lmi_window_of(const struct lmi_node *n, const lm_tensor *t);

/* t itself (+1) when of dtype dt, else a contiguous converted copy (no autograd). */
lm_tensor *lmi_as_dtype(const lm_tensor *t, lm_dtype dt);
/* F.linear with a weight of a block type (quant.c) */
lm_tensor *lmi_linear_blocks(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b);

/*
 * A composite op (one made of other ops: linear, the norms, the losses, conv2d) on float16 or
 * bfloat16 inputs computes in float32 and rounds once into the result, as PyTorch's CPU kernels
 * for those types do (each step rounded to 16 bits would lose more than a unit in the last place).
 * lmi_half_begin: when the float inputs among *ts[0..n) (NULL ones skipped) promote to a 16-bit
 * type, each 16-bit one is replaced, in the caller's variable, by a float32 copy (differentiable:
 * the gradient comes back in its own dtype), and true is returned; lmi_half_end converts the
 * composite's result back and releases the copies. LMI_HALF_VIA_F32 is the two around a call.
 */
#define LMI_HALF_MAX 6
typedef struct lmi_half {
	lm_dtype dt;
	int n;
	lm_tensor *own[LMI_HALF_MAX];
} lmi_half;
bool lmi_half_begin(lmi_half *h, int n, const lm_tensor **const *ts);
lm_tensor *lmi_half_end(lmi_half *h, lm_tensor *out);
#define LMI_HALF_VIA_F32(CALL, ...)                                                                  \
	do {                                                                                         \
		const lm_tensor **const ts_[] = {__VA_ARGS__};                                           \
		lmi_half h_;                                                                             \
		if (lmi_half_begin(&h_, (int)(sizeof ts_ / sizeof ts_[0]), ts_)) return lmi_half_end(&h_, CALL); \
	} while (0)

/* Whether writing to t could write one memory location twice (a broadcast dim of size > 1). */
bool lmi_has_internal_overlap(const lm_tensor *t);

/* Step `step` of p when it is a fused elementwise group (program.c; else an error naming fname):
 * its kernel *f, its operands ops[0..f->nout + f->nin) at the group's shape (+1 each: fresh
 * outputs, then the inputs as the last run or the capture left them), each operand's name ("in
 * v4": the graph's value) and what the group computes ("(mul,add,relu)"). For the course's
 * kernels (../kernels/fused_map.c: g:kernel). */
struct lm_program;
lm_status lmi_program_group(const struct lm_program *p, int step, const char *fname, const lmi_fused **f,
                            lm_tensor **ops, char (*names)[24], char *what, size_t what_cap);

#endif
