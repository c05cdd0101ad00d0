/*
 * fused.c — the CPU's fused kernel: a compiled program's group of elementwise nodes
 * (../exec.h's lmi_fused) in one pass over memory.
 *
 * The iterator walks the kernel's operands (outputs, then inputs broadcast to the outputs' shape)
 * as every elementwise loop does (coalesced dims, OpenMP chunks, a single large output streamed
 * with non-temporal stores). Each row piece it hands over is cut into blocks of FB elements, and
 * the instructions run in order on a block, each through the same vectorised 1-D kernel of the
 * SIMD path in use that the node alone would have run (simd.h: unary, binary, where, axpy), its
 * registers FB-element buffers on the stack that stay in the L1 cache. So each element is computed
 * by the same code in the same order as the nodes one by one — the results are bit for bit the
 * unfused ones — while memory is read and written once: the intermediate values never leave the
 * cache. The price against a compiled loop per group is one indirect call per instruction per
 * block (FB = 256 elements: a few nanoseconds against ~100 of arithmetic). Read next:
 * ../../ops/program.c (where groups are made), ewise_loops.h (the 1-D kernels).
 */
#include "backend/cpu/simd.h"

#define FB 1024

typedef struct fused_ctx {
	const lmi_fused *f;
	const lmi_simd_table *simd;
} fused_ctx;

static void fused_kernel(void *vctx, char **p, const int64_t *s, int64_t n)
{
	const fused_ctx *c = vctx;
	const lmi_fused *f = c->f;
	_Alignas(64) char regs[LMI_FUSED_MAX_REGS][FB * 8];
	for (int64_t i0 = 0; i0 < n; i0 += FB) {
		int64_t m = n - i0 < FB ? n - i0 : FB;
		for (int k = 0; k < f->ninstr; k++) {
			const lmi_fused_instr *in = &f->instr[k];
			char *ptr[4];
			int64_t st[4];
			for (int j = 0; j <= in->nin; j++) {
				int r = j == 0 ? in->out : in->in[j - 1];
				if (r >= LMI_FUSED_REG) {
					ptr[j] = regs[r - LMI_FUSED_REG];
					st[j] = (int64_t)lmi_elem_size(f->reg_dtype[r - LMI_FUSED_REG]);
				} else {
					ptr[j] = p[r] + i0 * s[r];
					st[j] = s[r];
				}
			}
			switch (in->loop) {
			case LMI_BE_OP_unary: {
				lmi_unary_ctx u = {in->code, in->p0, in->p1};
				c->simd->unary[in->dtype](&u, ptr, st, m);
				break;
			}
			case LMI_BE_OP_binary: {
				int o = in->code;
				c->simd->binary[in->dtype](&o, ptr, st, m);
				break;
			}
			case LMI_BE_OP_where: c->simd->where[in->dtype](NULL, ptr, st, m); break;
			default: { /* add_scaled */
				lmi_axpy_ctx a = {in->p0, 0};
				if (!lm_dtype_is_float(in->dtype))
					a.i = in->p0 < -9.2e18 ? INT64_MIN : in->p0 > 9.2e18 ? INT64_MAX : (int64_t)in->p0;
				c->simd->axpy[in->dtype](&a, ptr, st, m);
				break;
			}
			}
		}
	}
}

lm_status lmi_cpu_fused(const lmi_fused *f, lm_tensor *const *out, const lm_tensor *const *in)
{
	const lm_tensor *ops[LMI_ITER_MAX_OPS];
	int n = 0;
	for (int k = 0; k < f->nout; k++) ops[n++] = out[k];
	for (int k = 0; k < f->nin; k++) ops[n++] = in[k];
	LM_ASSERT(n <= LMI_ITER_MAX_OPS);
	lmi_iter it;
	lmi_iter_init(&it, n, ops, out[0]->ndim, out[0]->shape);
	fused_ctx c = {f, lmi_simd()};
	/* stream a single fresh output; one that is also an input, or several, are written in place */
	bool alone = f->nout == 1;
	for (int k = 0; alone && k < f->nin; k++) alone = in[k]->storage != out[0]->storage;
	return lmi_iter_run_out(&it, fused_kernel, &c, alone ? lmi_elem_size(out[0]->dtype) : 0);
}
