/*
 * fused_plan.h — the launch of a compiled program's fused group (lm.graph: ../../ops/program.c)
 * as one of the course's kernels, written once for both hosts (../fused_emu.c and
 * ../cuda/fused.cu): the group as a small program passed by value, the operands, one launch.
 *
 * Design: one thread per element of the group's shape. The program (lmk_fused_prog) is the
 * group's instructions in codes of its own (LMK_FUSED_*, mapped from the engine's by ../fused.c),
 * each operand's strides at the group's shape (0 where broadcast), at most 4 dims after merging.
 * It is a kernel parameter (under 2 KiB; CUDA allows 4 KiB): a generic kernel that interprets it
 * per thread, where a code generator would write the expressions into the kernel.
 * Read next: fused.h (the kernel), plan.h.
 */
#ifndef LUMEN_KERNELS_BODY_FUSED_PLAN_H
#define LUMEN_KERNELS_BODY_FUSED_PLAN_H

#include "kernels/body/plan.h"

#define LMK_FUSED_OPS 8    /* operands: outputs first, then inputs */
#define LMK_FUSED_OUTS 4
#define LMK_FUSED_DIMS 4
#define LMK_FUSED_INSTR 48
#define LMK_FUSED_REGS 24
#define LMK_FUSED_REG 100  /* a reference >= this is register (ref - LMK_FUSED_REG) */

/* The instructions: binary, unary, where (c != 0 ? a : b) and a + p0 * b. */
enum {
	LMK_FUSED_ADD = 0, LMK_FUSED_SUB, LMK_FUSED_MUL, LMK_FUSED_DIV, LMK_FUSED_MAX, LMK_FUSED_MIN,
	LMK_FUSED_EQ, LMK_FUSED_NE, LMK_FUSED_LT, LMK_FUSED_LE, LMK_FUSED_GT, LMK_FUSED_GE,
	LMK_FUSED_NEG, LMK_FUSED_ABS, LMK_FUSED_RELU, LMK_FUSED_SIGN, LMK_FUSED_FLOOR, LMK_FUSED_CEIL,
	LMK_FUSED_SQRT, LMK_FUSED_RSQRT, LMK_FUSED_RECIP, LMK_FUSED_SQUARE, LMK_FUSED_CUBE,
	LMK_FUSED_CLAMP, LMK_FUSED_LEAKY, LMK_FUSED_SCALE_ADD, LMK_FUSED_ADD_S, LMK_FUSED_MUL_S,
	LMK_FUSED_DIV_S, LMK_FUSED_COPY, LMK_FUSED_EXP, LMK_FUSED_LOG, LMK_FUSED_SIN, LMK_FUSED_COS,
	LMK_FUSED_TANH, LMK_FUSED_SIGMOID, LMK_FUSED_WHERE, LMK_FUSED_AXPY, LMK_FUSED_CODES
};

typedef struct lmk_fused_prog {
	int n;                                     /* elements: one thread each */
	int nout, nin, ninstr, ndim;
	int shape[LMK_FUSED_DIMS];                 /* the group's, outer first */
	int stride[LMK_FUSED_OPS][LMK_FUSED_DIMS]; /* elements; 0 on a broadcast dim */
	int code[LMK_FUSED_INSTR];                 /* LMK_FUSED_* */
	int ref[LMK_FUSED_INSTR][4];               /* the result, then up to 3 operands */
	double p[LMK_FUSED_INSTR][2];              /* clamp's bounds, a scale, a slope, alpha */
} lmk_fused_prog;

/* The group as asked: its program, each operand's host array (its first element; elements
 * reached by the strides) and length, the block. */
typedef struct lmi_fused_call {
	int is_double;
	lmk_fused_prog prog;
	void *op[LMK_FUSED_OPS];
	int64_t len[LMK_FUSED_OPS];
	char name[LMK_FUSED_OPS][24]; /* what each operand is, for the trace ("v4": the graph's value) */
	unsigned block;
} lmi_fused_call;

typedef struct lmk_fused_args {
	lmk_fused_prog prog;
	LMK_PTR a[LMK_FUSED_OPS];
} lmk_fused_args;

#define LMK_FUSED_KERNELS(K_)                                                                      \
	K_(fused, (a->prog, a->a[0], a->a[1], a->a[2], a->a[3], a->a[4], a->a[5], a->a[6], a->a[7]))
enum { LMK_FUSED_KERNELS(LMK_KERNEL_ID) LMK_FUSED_KERNEL_COUNT };

static inline lmk_launch lmk_fused_launch(const lmi_fused_call *c)
{
	return lmk_launch_1d(LMK_K_fused, lmk_blocks(c->prog.n, c->block), c->block, 0);
}

#endif
