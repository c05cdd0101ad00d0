/*
 * fused_map.c — g:kernel (lm_program_kernel, lumen/graph.h): a compiled program's fused group
 * described for the course's kernels — the engine's instructions (backend/exec.h's lmi_fused) as
 * body/fused_plan.h's codes, the group's geometry merged to at most 4 dims, the engine's own run
 * of it as the pattern's cpu run — then run by fused.c. Apart from fused.c because the engine's
 * device headers and the patterns' share names.
 * Read next: fused.c, ../ops/program.c (lmi_program_group), body/fused_plan.h.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "kernels/fused_call.h"
#include "lumen/graph.h"
#include "ops/ops.h"

/* The body's code of instruction in, or -1. */
static int code_of(const lmi_fused_instr *in)
{
	switch (in->loop) {
	case LMI_BE_OP_binary:
		if (in->code > LM_GE || in->code == LM_POW) return -1;
		return in->code == LM_MAXIMUM   ? LMK_FUSED_MAX
		       : in->code == LM_MINIMUM ? LMK_FUSED_MIN
		       : in->code >= LM_EQ      ? LMK_FUSED_EQ + (in->code - LM_EQ)
		                                : LMK_FUSED_ADD + in->code;
	case LMI_BE_OP_where: return LMK_FUSED_WHERE;
	case LMI_BE_OP_add_scaled: return LMK_FUSED_AXPY;
	case LMI_BE_OP_unary: break;
	default: return -1;
	}
	switch (in->code) {
	case LM_NEG: return LMK_FUSED_NEG;
	case LM_ABS: return LMK_FUSED_ABS;
	case LM_RELU: return LMK_FUSED_RELU;
	case LM_SIGN: return LMK_FUSED_SIGN;
	case LM_FLOOR: return LMK_FUSED_FLOOR;
	case LM_CEIL: return LMK_FUSED_CEIL;
	case LM_SQRT: return LMK_FUSED_SQRT;
	case LM_RSQRT: return LMK_FUSED_RSQRT;
	case LM_RECIPROCAL: return LMK_FUSED_RECIP;
	case LM_SQUARE: return LMK_FUSED_SQUARE;
	case LM_EXP: return LMK_FUSED_EXP;
	case LM_LOG: return LMK_FUSED_LOG;
	case LM_SIN: return LMK_FUSED_SIN;
	case LM_COS: return LMK_FUSED_COS;
	case LM_TANH: return LMK_FUSED_TANH;
	case LM_SIGMOID: return LMK_FUSED_SIGMOID;
	case LMI_CLAMP: return LMK_FUSED_CLAMP;
	case LMI_LEAKY_RELU: return LMK_FUSED_LEAKY;
	case LMI_ADD_SCALED: return LMK_FUSED_SCALE_ADD;
	case LMI_ADD_S: return LMK_FUSED_ADD_S;
	case LMI_MUL_S: return LMK_FUSED_MUL_S;
	case LMI_DIV_S: return LMK_FUSED_DIV_S;
	case LMI_POW_SCALAR: {
		double e = in->dtype == LM_FLOAT32 ? (double)(float)in->p0 : in->p0;
		return e == 2 ? LMK_FUSED_SQUARE : e == 3 ? LMK_FUSED_CUBE : e == 1 ? LMK_FUSED_COPY
		       : e == 0.5 ? LMK_FUSED_SQRT : e == -1 ? LMK_FUSED_RECIP : -1;
	}
	default: return -1;
	}
}


typedef struct fused_cpu_ud {
	const lmi_fused *f;
	lm_tensor *const *ops;
} fused_cpu_ud;

static int fused_cpu_run(void *ud)
{
	const fused_cpu_ud *u = ud;
	return lmi_cpu_fused(u->f, u->ops, (const lm_tensor *const *)u->ops + u->f->nout) != LM_OK;
}


static const char *fused_cpu_impl(void *ud)
{
	const fused_cpu_ud *u = ud;
	void *jit = __atomic_load_n(&((lmi_fused *)u->f)->jit, __ATOMIC_ACQUIRE);
	return jit && jit != (void *)1 ? "generated C (backend/cpu/jit.c)" : "the vectorised interpreter (backend/cpu/fused.c)";
}

/* The kernels' description of group f over ops (outputs first, at the group's shape). */
static lm_status kernel_call(const char *fname, const lmi_fused *f, lm_tensor *const *ops, lmi_fused_call *c)
{
	int nops = f->nout + f->nin; /* c is zeroed by the caller (its names set) */
	if (nops > LMK_FUSED_OPS || f->nout > LMK_FUSED_OUTS || f->ninstr > LMK_FUSED_INSTR || f->nregs > LMK_FUSED_REGS)
		return lmi_fail(LM_ERR_ARG, "%s: a group of %d operands, %d instructions, %d registers is over the "
		                "kernel's %d, %d, %d", fname, nops, f->ninstr, f->nregs, LMK_FUSED_OPS, LMK_FUSED_INSTR,
		                LMK_FUSED_REGS);
	lm_dtype dt = ops[0]->dtype;
	for (int j = 0; j < nops; j++)
		if (ops[j]->dtype != dt || (dt != LM_FLOAT32 && dt != LM_FLOAT64))
			return lmi_fail(LM_ERR_DTYPE, "%s: operand %d is %s: the kernel takes float32 or float64 operands, "
			                "all of one dtype (here %s)", fname, j + 1, lm_dtype_name(ops[j]->dtype),
			                lm_dtype_name(dt));
	lmk_fused_prog *P = &c->prog;
	P->nout = f->nout;
	P->nin = f->nin;
	P->ninstr = f->ninstr;
	for (int i = 0; i < f->ninstr; i++) {
		const lmi_fused_instr *in = &f->instr[i];
		int code = code_of(in);
		if (code < 0)
			return lmi_fail(LM_ERR_UNSUPPORTED, "%s: instruction %d (%s code %d) is not one the kernel has", fname,
			                i + 1, lmi_be_op_name((lmi_be_op)in->loop), in->code);
		P->code[i] = code;
		P->ref[i][0] = in->out >= LMI_FUSED_REG ? LMK_FUSED_REG + in->out - LMI_FUSED_REG : in->out;
		for (int j = 0; j < 3; j++) {
			int q = j < in->nin ? in->in[j] : -1;
			P->ref[i][j + 1] = q >= LMI_FUSED_REG ? LMK_FUSED_REG + q - LMI_FUSED_REG : q;
		}
		P->p[i][0] = in->p0;
		P->p[i][1] = in->p1;
	}
	/* each operand's strides at the group's shape (the first output's), dims merged */
	const lm_tensor *g = ops[0];
	int64_t st[LMK_FUSED_OPS][LM_MAX_DIMS], ms[LMK_FUSED_OPS][LM_MAX_DIMS], shape[LM_MAX_DIMS], n = 1;
	int nd = 0;
	for (int j = 0; j < nops; j++) {
		lmi_broadcast_strides(ops[j], g->ndim, g->shape, st[j]);
		for (int d = 0; d < g->ndim; d++)
			if (st[j][d] < 0) return lmi_fail(LM_ERR_ARG, "%s: operand %d has a negative stride", fname, j + 1);
	}
	for (int d = 0; d < g->ndim; d++) {
		n *= g->shape[d];
		if (g->shape[d] == 1) continue;
		bool merge = nd > 0;
		for (int j = 0; merge && j < nops; j++) merge = ms[j][nd - 1] == st[j][d] * g->shape[d];
		if (merge) {
			shape[nd - 1] *= g->shape[d];
			for (int j = 0; j < nops; j++) ms[j][nd - 1] = st[j][d];
		} else {
			shape[nd] = g->shape[d];
			for (int j = 0; j < nops; j++) ms[j][nd] = st[j][d];
			nd++;
		}
	}
	if (nd > LMK_FUSED_DIMS)
		return lmi_fail(LM_ERR_SHAPE, "%s: the group's %s needs %d dims after merging; the kernel takes %d", fname,
		                lmi_shape_s(g), nd, LMK_FUSED_DIMS);
	if (n > INT32_MAX || n == 0)
		return lmi_fail(LM_ERR_SHAPE, "%s: the group's %s has %lld elements: the kernel takes 1 to 2^31-1", fname,
		                lmi_shape_s(g), (long long)n);
	P->n = (int)n;
	P->ndim = nd;
	for (int d = 0; d < nd; d++) P->shape[d] = (int)shape[d];
	for (int j = 0; j < nops; j++) {
		int64_t span = 1;
		for (int d = 0; d < nd; d++) {
			if (ms[j][d] > INT32_MAX) return lmi_fail(LM_ERR_SHAPE, "%s: operand %d's strides pass 2^31", fname, j + 1);
			P->stride[j][d] = (int)ms[j][d];
			span += (shape[d] - 1) * ms[j][d];
		}
		c->op[j] = lmi_data(ops[j]);
		c->len[j] = span;
	}
	c->is_double = dt == LM_FLOAT64;
	return LM_OK;
}

lm_status lm_program_kernel(lm_program *p, int step, const lm_kernel_opts *opts, int *nresults, lm_tensor **results,
                            lm_kernel_info **info)
{
	const char *fname = "g:kernel";
	if (info) *info = NULL;
	if (nresults) *nresults = 0;
	if (!p || !results || !info || !nresults) return lmi_fail(LM_ERR_ARG, "%s: NULL argument", fname);
	const lmi_fused *f = NULL;
	lm_tensor *ops[LMI_ITER_MAX_OPS] = {0};
	char what[200];
	lmi_fused_call call;
	memset(&call, 0, sizeof call);
	lm_status s = lmi_program_group(p, step, fname, &f, ops, call.name, what, sizeof what);
	if (s) return s;
	if (!(s = kernel_call(fname, f, ops, &call))) {
		size_t w = strlen(what);
		snprintf(what + w, sizeof what - w, " %s", lmi_shape_s(ops[0]));
		fused_cpu_ud ud = {f, ops};
		lmi_fused_cpu cpu = {fused_cpu_run, fused_cpu_impl, &ud};
		lm_tensor *first = NULL;
		s = lmi_kernel_fused(fname, &call, ops, &cpu, what, opts, &first, info);
		lm_tensor_release(first);
	}
	if (!s) {
		*nresults = f->nout;
		for (int k = 0; k < f->nout; k++) results[k] = lm_tensor_retain(ops[k]);
	}
	for (int k = 0; k < f->nout + f->nin; k++) lm_tensor_release(ops[k]);
	return s;
}
