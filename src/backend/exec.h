/*
 * exec.h — one computation as a device receives it: the op node. An op fills an lmi_exec on its
 * stack (no allocation, nothing copied: the eager path stays as cheap as a function call), with
 * the op of the one list of ops (../ops/oplist.h), its typed parameters — the same union its
 * autograd node keeps, plus the few loop-only fields (kind LOOP) the op derives from the
 * shapes; the node points at the op's own — its inputs
 * and the outputs it allocated, and hands it to lmi_compute (backend.c): the device of the
 * tensors answers supports_op(node) and runs compute(node). One call, one wording when a device
 * lacks the op: "<fname>: the <device> device has no <op> loop for <dtype> (shape <shape>)".
 *
 * What a device may assume of a node: the ops layer has checked the arguments, computed the
 * result's shape, converted the inputs to the loop's dtype (dtype below) and allocated the
 * outputs on the inputs' device; a loop fails only on what the data or the machine decides (an
 * interrupt, memory, an index out of range, an integer division by zero), with the thread's
 * error set and naming fname.
 * Read next: backend.h (the device table), cpu/backend_cpu.c (the CPU's compute).
 */
#ifndef LUMEN_EXEC_H
#define LUMEN_EXEC_H

#include "core/lmi.h"
#include "ops/oplist.h"

#define LMI_EXEC_SRC 7 /* the most: a fused kernel's inputs (ops/program.c) */
#define LMI_EXEC_DST 4

/*
 * A fused kernel (a program's group of elementwise nodes, ../ops/program.c): its instructions run
 * in order on each block of elements, reading the kernel's operands (outputs first, then inputs,
 * all at the outputs' shape, inputs broadcast) or registers (values made and used inside the
 * kernel), each instruction one of the elementwise loops (unary, binary, where, add_scaled) in
 * its own dtype. A device that runs it computes each element as the nodes one by one would.
 *
 * A fused kernel may end in a reduction (red != 0: the prologue of a sum, mean, amax or amin):
 * the instructions then run over the reduction's input shape (red_ndim, red_shape), whose last
 * dims from red_keep on are reduced, and the value ref red_in is folded into the last output
 * (contiguous, red_shape's first red_keep dims) as the reduction node alone folds a contiguous
 * input: the same lanes, the same split across threads, so the same bits.
 */
#define LMI_FUSED_MAX_OUT 4
#define LMI_FUSED_MAX_INSTR 48
#define LMI_FUSED_MAX_REGS 24
#define LMI_FUSED_REG 100 /* an operand reference >= this is register (ref - LMI_FUSED_REG) */
typedef struct lmi_fused_instr {
	int loop;        /* LMI_BE_OP_unary, _binary, _where, _add_scaled (backend.h) */
	int code;        /* unary: lm_unop or lmi_cpu_unop_ext; binary: lm_binop */
	double p0, p1;   /* unary's parameters; add_scaled's alpha in p0 */
	lm_dtype dtype;  /* the loop's dtype (a comparison's inputs'; its result is uint8) */
	lm_dtype out_dtype;
	int out, nin, in[3];
} lmi_fused_instr;
typedef struct lmi_fused {
	int nout, nin, ninstr, nregs;
	lmi_fused_instr instr[LMI_FUSED_MAX_INSTR];
	lm_dtype reg_dtype[LMI_FUSED_MAX_REGS];
	int red;       /* 1 + the lm_redop the kernel ends in (LM_SUM, LM_MEAN, LM_MAX, LM_MIN), or 0 */
	int red_in;    /* the reference it reduces (a register or an input) */
	lm_dtype red_dtype;
	int red_ndim, red_keep;
	int64_t red_shape[LM_MAX_DIMS];
	void *jit;     /* the CPU's generated kernel for it, once made (backend/cpu/jit.c; 1: none) */
} lmi_fused;

typedef struct lmi_exec {
	lmi_op op;                          /* the list's op (its row: lmi_ops[op]) */
	const lmi_params *p;                /* its parameters (p->\<its params struct>; never NULL) */
	const char *fname;                  /* the caller, for what the loop reports */
	lm_dtype dtype;                     /* the dtype the loop runs in */
	int nsrc, ndst;
	const lm_tensor *src[LMI_EXEC_SRC]; /* inputs (NULL: an absent optional one) */
	lm_tensor *dst[LMI_EXEC_DST];       /* outputs, allocated (an in-place op: dst[0] == src[0]; the
	                                     * optimizers: dst = p and its states, src[1] = the gradient) */
	int64_t count;                      /* count_correct's answer */
	const lmi_fused *fused;             /* LMI_OP_FUSED: the kernel (dst: its outputs, src: inputs) */
} lmi_exec;

/* ---------------------------------------------------------------- geometry every device derives */

/* A tensor of shape s viewed as (outer, R, inner) around dim d (a 0-d tensor: 1, 1, 1). */
static inline void lmi_exec_split(const lm_tensor *t, int64_t d, int64_t *outer, int64_t *R, int64_t *inner)
{
	*outer = *inner = 1;
	*R = t->ndim ? t->shape[d] : 1;
	for (int i = 0; i < t->ndim; i++) {
		if (i < d) *outer *= t->shape[i];
		if (i > d) *inner *= t->shape[i];
	}
}

/* The batch dims of a matmul of A (..., M, K) and B (..., K, N), broadcast (checked by the op). */
static inline void lmi_exec_batch(const lm_tensor *A, const lm_tensor *B, int *bnd, int64_t *bshape)
{
	int na = A->ndim - 2, nb = B->ndim - 2, n = na > nb ? na : nb;
	for (int i = 0; i < n; i++) {
		int ia = i - (n - na), ib = i - (n - nb);
		int64_t sa = ia >= 0 ? A->shape[ia] : 1, sb = ib >= 0 ? B->shape[ib] : 1;
		bshape[i] = sa == 1 ? sb : sa;
	}
	*bnd = n;
}

/* The shape of x left-padded with 1s to n dims (repeat's corner block). */
static inline void lmi_exec_padded(const lm_tensor *x, int n, int64_t *shape)
{
	int lead = n - x->ndim;
	for (int d = 0; d < n; d++) shape[d] = d < lead ? 1 : x->shape[d - lead];
}

#endif
