/*
 * matmul.c — torch.matmul semantics over the CPU gemm.
 *
 * 1-D operands are promoted to matrices ((K) -> (1, K) on the left, (K, 1) on the right) and the
 * added dim is removed from the result. Batch dims broadcast. When the right operand has no batch
 * dims and the left one's batch folds into its rows (a dense (..., M, K)), the whole product is
 * one gemm: the Linear-layer case. Otherwise one gemm per batch entry (the CPU backend runs them in
 * parallel over the batch when the matrices are small, OpenBLAS single-threaded inside each).
 * Read next: ../backend/cpu/matmul.c.
 */
#include <string.h>

#include "ops/rule.h"
#include "ops.h"

/*
 * out = A B over broadcast batch dims, A: (..., M, K), B: (..., K, N), G = dL/d(out):
 *   dA = G B^T  (..., M, K)     dB = A^T G  (..., K, N)
 * each summed over the batch dims its operand was broadcast along (lmi_sum_to). A 1-D operand
 * was promoted to a matrix ((K) -> (1, K) on the left, (K, 1) on the right) and its added dim
 * removed from out: G gets that dim back first, and the gradient loses it at the end. When B is
 * one matrix and A has batch dims (the Linear layer), dB is one product over the folded batch.
 * saved: [0] = a, [1] = b, in the compute dtype.
 */
lm_status lmi_bw_matmul(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	const lm_tensor *a, *b;
	lm_status s;
	if ((s = lmi_node_saved(n, 0, &a)) || (s = lmi_node_saved(n, 1, &b))) return s;
	lmi_scope sc = {0};
	lm_tensor *A, *B, *G, *t0, *t1;
	bool a1 = a->ndim == 1, b1 = b->ndim == 1;
	RULE_T(&sc, A, a1 ? lm_unsqueeze(a, 0) : lm_tensor_retain((lm_tensor *)a));
	RULE_T(&sc, B, b1 ? lm_unsqueeze(b, 1) : lm_tensor_retain((lm_tensor *)b));
	RULE_T(&sc, G, lm_tensor_retain((lm_tensor *)g));
	if (b1) RULE_T(&sc, G, lm_unsqueeze(G, -1));
	if (a1) RULE_T(&sc, G, lm_unsqueeze(G, -2));
	if (n->in[0].needs_grad) { /* dA = G B^T */
		RULE_T(&sc, t0, lm_transpose(B, -1, -2));
		if (A->ndim == 2 && G->ndim > 2 && B->ndim == G->ndim && g->dtype == b->dtype) {
			/* one matrix against a batch (convolution's weight): accumulate over the batch */
			RULE_T(&sc, t0, lmi_matmul_batch_sum(G, t0));
		} else {
			RULE_T(&sc, t1, lm_matmul(G, t0));
			RULE_T(&sc, t0, lmi_sum_to(t1, A->ndim, A->shape));
		}
		if (!(gin[0] = lm_reshape(t0, a->ndim, a->shape))) goto fail;
	}
	if (n->in[1].needs_grad) { /* dB = A^T G */
		int64_t K = A->shape[A->ndim - 1], N = G->shape[G->ndim - 1];
		if (B->ndim == 2 && A->ndim >= 2) { /* fold A's batch into rows: (K, rows) (rows, N) */
			lm_tensor *A2, *G2;
			int64_t rows = A->shape[A->ndim - 2];
			for (int i = 0; i < A->ndim - 2; i++) rows *= A->shape[i];
			RULE_T(&sc, A2, lm_reshape(A, 2, (int64_t[]){rows, K}));
			RULE_T(&sc, G2, lm_reshape(G, 2, (int64_t[]){rows, N}));
			if (B->stride[0] == 1 && B->shape[1] > 1) {
				/* B is column-major (the w^T of a Linear layer): produce dB in that layout,
				 * dB = (G^T A)^T, so that the transpose's own backward hands the leaf a
				 * contiguous gradient instead of a strided one to copy */
				RULE_T(&sc, t0, lm_transpose(G2, 0, 1));
				RULE_T(&sc, t0, lm_matmul(t0, A2));
				RULE_T(&sc, t1, lm_transpose(t0, 0, 1));
			} else {
				RULE_T(&sc, t0, lm_transpose(A2, 0, 1));
				RULE_T(&sc, t1, lm_matmul(t0, G2));
			}
		} else {
			RULE_T(&sc, t0, lm_transpose(A, -1, -2));
			RULE_T(&sc, t0, lm_matmul(t0, G));
			RULE_T(&sc, t1, lmi_sum_to(t0, B->ndim, B->shape));
		}
		if (!(gin[1] = lm_reshape(t1, b->ndim, b->shape))) goto fail;
	}
	return lmi_rule_end(&sc, gin, false);
fail:
	return lmi_rule_end(&sc, gin, true);
}

/* The batch dims (all but the last two) of a and b do not broadcast: names the first pair that
 * differs by its dim in the operands (1-based; counted from the end when their ndims differ). */
static void batch_error(const char *name, const lm_tensor *a, const lm_tensor *b, int na, int nb)
{
	int n = na > nb ? na : nb;
	for (int i = 0; i < n; i++) {
		int ia = i - (n - na), ib = i - (n - nb);
		int64_t sa = ia >= 0 ? a->shape[ia] : 1, sb = ib >= 0 ? b->shape[ib] : 1;
		if (sa == sb || sa == 1 || sb == 1) continue;
		lmi_fail(LM_ERR_SHAPE, "%s: the batch dims of %s and %s cannot be broadcast together "
		         "(dim %lld: %lld vs %lld)", name, lmi_shape_s(a), lmi_shape_s(b),
		         na == nb ? lmi_1(i) : (long long)(i - n - 2), (long long)sa, (long long)sb);
		return;
	}
	lmi_fail(LM_ERR_SHAPE, "%s: the batch dims of %s and %s cannot be broadcast together", name,
	         lmi_shape_s(a), lmi_shape_s(b));
}

static lm_tensor *matmul(const char *name, lmi_op op, const lm_tensor *a,
                         const lm_tensor *b)
{
	const lm_tensor *in[2] = {a, b};
	if (lmi_check_arg(name, "first operand", a) || lmi_check_arg(name, "second operand", b) ||
	    lmi_check_device(name, 2, in))
		return NULL;
	if (a->ndim == 0 || b->ndim == 0)
		return lmi_fail_null(LM_ERR_SHAPE, "%s: both operands need at least 1 dim, got shapes %s "
		                     "and %s", name, lmi_shape_s(a), lmi_shape_s(b));
	lm_dtype ct = lm_promote_types(a->dtype, b->dtype);
	lm_tensor *ac = lmi_as_dtype(a, ct), *bc = ac ? lmi_as_dtype(b, ct) : NULL;
	lm_tensor *A = NULL, *B = NULL, *out = NULL;
	if (!bc) goto done;
	/* promote 1-D operands to matrices */
	A = a->ndim == 1 ? lmi_view_of(ac, 2, (int64_t[]){1, a->shape[0]}, (int64_t[]){0, ac->stride[0]},
	                               ac->offset)
	                 : lm_tensor_retain(ac);
	B = b->ndim == 1 ? lmi_view_of(bc, 2, (int64_t[]){b->shape[0], 1}, (int64_t[]){bc->stride[0], 0},
	                               bc->offset)
	                 : lm_tensor_retain(bc);
	if (!A || !B) goto done;
	int64_t M = A->shape[A->ndim - 2], K = A->shape[A->ndim - 1];
	int64_t K2 = B->shape[B->ndim - 2], N = B->shape[B->ndim - 1];
	if (K != K2) {
		lmi_fail(LM_ERR_SHAPE, "%s: shapes %s and %s do not align (%lld != %lld)", name,
		         lmi_shape_s(a), lmi_shape_s(b), (long long)K, (long long)K2);
		goto done;
	}
	int bnd;
	int64_t bshape[LM_MAX_DIMS];
	if (lm_broadcast_shapes(A->ndim - 2, A->shape, B->ndim - 2, B->shape, &bnd, bshape)) {
		batch_error(name, a, b, A->ndim - 2, B->ndim - 2);
		goto done;
	}
	/* result shape, without the dims that 1-D operands added */
	int64_t oshape[LM_MAX_DIMS];
	int ond = 0;
	for (int i = 0; i < bnd; i++) oshape[ond++] = bshape[i];
	if (a->ndim > 1) oshape[ond++] = M;
	if (b->ndim > 1) oshape[ond++] = N;
	if (bnd + 2 > LM_MAX_DIMS) {
		lmi_fail(LM_ERR_SHAPE, "%s: result needs %d dims", name, bnd + 2);
		goto done;
	}
	int64_t nbatch;
	if (lmi_numel_checked(name, bnd, bshape, &nbatch)) goto done;
	out = lmi_empty_as(name, a, ond, oshape, ct);
	if (!out) goto done;
	lm_status s = lmi_run(name, op, NULL, ct, 2, (const lm_tensor *[]){A, B}, 1, (lm_tensor *[]){out});
	if (s) {
		lm_tensor_release(out);
		out = NULL;
		goto done;
	}
	const lm_tensor *save[2] = {ac, bc};
	out = lmi_finish(out, op, NULL, 2, in, 2, save, NULL);
done:
	lm_tensor_release(A);
	lm_tensor_release(B);
	lm_tensor_release(ac);
	lm_tensor_release(bc);
	return out;
}

lm_tensor *lmi_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b)
{
	/* a: (..., M, K), b: (..., K, N), the same batch dims -> sum over the batch of a_i b_i: (M, N).
	 * One output accumulated by gemm with beta = 1: no (batch, M, N) intermediate. */
	const lm_tensor *in[2] = {a, b};
	if (lmi_check_device("matmul", 2, in)) return NULL;
	LM_ASSERT(a->ndim == b->ndim && a->ndim >= 2 && a->dtype == b->dtype);
	LM_ASSERT(lm_dtype_is_float(a->dtype));
	int nd = a->ndim;
	int64_t M = a->shape[nd - 2], K = a->shape[nd - 1], N = b->shape[nd - 1];
	LM_ASSERT(b->shape[nd - 2] == K);
	for (int i = 0; i < nd - 2; i++) LM_ASSERT(a->shape[i] == b->shape[i]);
	lm_tensor *out = lmi_empty_as("matmul", a, 2, (int64_t[]){M, N}, a->dtype);
	if (out && lmi_run("matmul", LMI_OP_MATMUL_BATCH_SUM, NULL, a->dtype, 2, (const lm_tensor *[]){a, b}, 1,
	                   (lm_tensor *[]){out})) {
		lm_tensor_release(out);
		out = NULL;
	}
	return out;
}

lm_tensor *lm_matmul(const lm_tensor *a, const lm_tensor *b)
{
	return matmul("matmul", LMI_OP_MATMUL, a, b);
}

lm_tensor *lm_mm(const lm_tensor *a, const lm_tensor *b)
{
	if (a && b && (a->ndim != 2 || b->ndim != 2))
		return lmi_fail_null(LM_ERR_SHAPE, "mm: expects two matrices, got shapes %s and %s",
		                     lmi_shape_s(a), lmi_shape_s(b));
	return matmul("mm", LMI_OP_MM, a, b);
}
