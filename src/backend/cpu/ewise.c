/*
 * ewise.c — the CPU elementwise ops: unary math, binary arithmetic and comparisons (// and %:
 * divmod.c), where. Each
 * sets up an lmi_iter over its operands (coalesced dims, OpenMP chunks, large outputs streamed to
 * memory with non-temporal stores: lmi_iter_run_out) and runs the 1-D kernel of the operands'
 * dtype from the SIMD table of the path in use (simd.h; the kernels are in ewise_loops.h).
 * Read next: ewise_loops.h, reduce.c, matmul.c.
 */
#include "backend/cpu/simd.h"

lm_status lmi_cpu_unary(int op, lm_tensor *out, const lm_tensor *x, double p0, double p1)
{
	LM_ASSERT(out->dtype == x->dtype);
	lmi_unary_ctx c = {op, p0, p1};
	lmi_iter it;
	const lm_tensor *ops[2] = {out, x};
	lmi_iter_init(&it, 2, ops, out->ndim, out->shape);
	return lmi_iter_run_out(&it, lmi_simd()->unary[out->dtype], &c, lmi_elem_size(out->dtype));
}

lm_status lmi_cpu_binary(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b)
{
	LM_ASSERT(a->dtype == b->dtype);
	LM_ASSERT(out->dtype == (lm_binop_is_comparison(op) ? LM_UINT8 : a->dtype));
	if (op == LM_FLOOR_DIVIDE || op == LM_REMAINDER) return lmi_cpu_divmod(op, out, a, b);
	int o = op;
	lmi_iter it;
	const lm_tensor *ops[3] = {out, a, b};
	lmi_iter_init(&it, 3, ops, out->ndim, out->shape);
	return lmi_iter_run_out(&it, lmi_simd()->binary[a->dtype], &o, lmi_elem_size(out->dtype));
}

lm_status lmi_cpu_where(lm_tensor *out, const lm_tensor *cond, const lm_tensor *a,
                        const lm_tensor *b)
{
	LM_ASSERT(cond->dtype == LM_UINT8 && a->dtype == out->dtype && b->dtype == out->dtype);
	lmi_iter it;
	const lm_tensor *ops[4] = {out, cond, a, b};
	lmi_iter_init(&it, 4, ops, out->ndim, out->shape);
	return lmi_iter_run_out(&it, lmi_simd()->where[out->dtype], NULL, lmi_elem_size(out->dtype));
}
