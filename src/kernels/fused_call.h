/*
 * fused_call.h (internal) — how a compiled program (../ops/program.c) hands one of its fused
 * groups to the course's kernels (fused.c): the call of body/fused_plan.h, and the engine's own
 * run of the group for the pattern's cpu run. Kept apart from patterns.h, whose names the
 * engine's device headers share.
 * Read next: fused.c, body/fused_plan.h.
 */
#ifndef LUMEN_KERNELS_FUSED_CALL_H
#define LUMEN_KERNELS_FUSED_CALL_H

#include "kernels/body/fused_plan.h"
#include "lumen/core.h"
#include "lumen/kernels.h"

/* The cpu run: the engine's fused kernel on the group's operands. */
typedef struct lmi_fused_cpu {
	int (*run)(void *ud);          /* non-zero when stopped */
	const char *(*impl)(void *ud); /* what ran, after it ran */
	void *ud;
} lmi_fused_cpu;

/* call (prog, op and len filled; block from opts) as one of the course's kernels: backend, block,
 * repeats, trace as opts says. *out takes ops[0] (+1), which the run writes; the other results,
 * ops[1..nout), are written too. what: the group's instructions, for the trace's name. */
lm_status lmi_kernel_fused(const char *fname, const lmi_fused_call *call, lm_tensor *const *ops,
                           const lmi_fused_cpu *cpu, const char *what, const lm_kernel_opts *opts, lm_tensor **out,
                           lm_kernel_info **info);

#endif
