/*
 * loops.c — a device's compute through its loops (lmi_loops, backend.h): the node's arguments
 * unpacked once, for every device that implements its compute with loops — the CPU and the CUDA
 * one — so the unpacking exists once, and the geometry a loop wants (outer, R, inner around a
 * dim; a matmul's batch; repeat's corner) is derived from the node's shapes and parameters here.
 * Read next: exec.h, cpu/backend_cpu.c.
 */
#include "backend/backend.h"

lmi_be_op lmi_loop_of(lmi_op op)
{
	if ((op >= LMI_OP_EXP && op <= LMI_OP_POW_SCALAR) || op == LMI_OP_ADD_SCALAR_ || op == LMI_OP_MUL_SCALAR_ ||
	    op == LMI_OP_DIV_SCALAR_)
		return LMI_BE_OP_unary;
	if (op >= LMI_OP_ADD && op <= LMI_OP_REMAINDER) return LMI_BE_OP_binary;
	if (op >= LMI_OP_SUM && op <= LMI_OP_NORM) return LMI_BE_OP_reduce_dims;
	switch (op) {
	case LMI_OP_WHERE:
	case LMI_OP_MASKED_FILL: return LMI_BE_OP_where;
	case LMI_OP_ADD_SCALED: return LMI_BE_OP_add_scaled;
	case LMI_OP_COUNT_CORRECT: return LMI_BE_OP_count_correct;
	case LMI_OP_MATMUL:
	case LMI_OP_MM: return LMI_BE_OP_matmul;
	case LMI_OP_MATMUL_BATCH_SUM: return LMI_BE_OP_matmul_batch_sum;
	case LMI_OP_SOFTMAX:
	case LMI_OP_LOG_SOFTMAX: return LMI_BE_OP_softmax;
	case LMI_OP_GELU:
	case LMI_OP_GELU_BACKWARD: return LMI_BE_OP_gelu;
	case LMI_OP_NLL_LOSS: return LMI_BE_OP_nll;
	case LMI_OP_NLL_GRAD: return LMI_BE_OP_nll_grad;
	case LMI_OP_MAX_POOL2D: return LMI_BE_OP_max_pool2d;
	case LMI_OP_CONV2D_WINOGRAD: return LMI_BE_OP_winograd_conv;
	case LMI_OP_CONV2D_WINOGRAD_BACKWARD: return LMI_BE_OP_winograd_conv_backward;
	case LMI_OP_IM2COL: return LMI_BE_OP_im2col;
	case LMI_OP_COL2IM: return LMI_BE_OP_col2im;
	case LMI_OP_IM2COL_NHWC: return LMI_BE_OP_im2col_nhwc;
	case LMI_OP_INDEX_SELECT: return LMI_BE_OP_index_select;
	case LMI_OP_GATHER: return LMI_BE_OP_gather;
	case LMI_OP_SCATTER_ADD: return LMI_BE_OP_scatter_add;
	case LMI_OP_ONE_HOT: return LMI_BE_OP_one_hot;
	case LMI_OP_SORT:
	case LMI_OP_TOPK: return LMI_BE_OP_sort;
	case LMI_OP_CUMSUM: return LMI_BE_OP_cumsum;
	case LMI_OP_TRIL:
	case LMI_OP_TRIU: return LMI_BE_OP_triangle;
	case LMI_OP_REPEAT: return LMI_BE_OP_repeat_fill;
	case LMI_OP_SGD_STEP: return LMI_BE_OP_sgd_step;
	case LMI_OP_ADAM_STEP: return LMI_BE_OP_adam_step;
	case LMI_OP_RMSPROP_STEP: return LMI_BE_OP_rmsprop_step;
	case LMI_OP_CROP_BATCH: return LMI_BE_OP_crop_batch;
	case LMI_OP_FLIP_BATCH: return LMI_BE_OP_flip_batch;
	case LMI_OP_INT_MM: return LMI_BE_OP_int_mm;
	case LMI_OP_LINEAR_BLOCKS: return LMI_BE_OP_linear_blocks;
	case LMI_OP_LSTM_CELL:
	case LMI_OP_LSTM_CELL_BACKWARD: return LMI_BE_OP_lstm_cell;
	case LMI_OP_GRU_CELL:
	case LMI_OP_GRU_CELL_BACKWARD: return LMI_BE_OP_gru_cell;
	case LMI_OP_FLASH_ATTENTION:
	case LMI_OP_FLASH_ATTENTION_BACKWARD: return LMI_BE_OP_attention;
	case LMI_OP_FUSED: return LMI_BE_OP_fused;
	default: return LMI_BE_OP_COUNT;
	}
}

bool lmi_loops_supports(const lmi_loops *L, const lmi_exec *e)
{
	lmi_be_op loop = lmi_loop_of(e->op);
	if (loop == LMI_BE_OP_COUNT) return true; /* copies and views: every device has them */
	if (loop == LMI_BE_OP_fused && !L->fused) return false;
	if (loop == LMI_BE_OP_im2col_nhwc && !L->im2col_nhwc) return false;
	return L->supports_op(loop, e->dtype);
}

lm_status lmi_loops_compute(const lmi_loops *L, const lmi_exec *e)
{
	const lm_tensor *const *s = e->src;
	lm_tensor *const *d = e->dst;
	const lmi_params *p = e->p;
	int code;
	double p0, p1;
	if (e->op >= LMI_OP_ADD && e->op <= LMI_OP_REMAINDER) /* the commonest first: a compare */
		return L->binary((lm_binop)(e->op - LMI_OP_ADD), d[0], s[0], s[1]);
	if (lmi_exec_unary(e, &code, &p0, &p1)) return L->unary(code, d[0], s[0], p0, p1);
	if (e->op >= LMI_OP_SUM && e->op <= LMI_OP_NORM) {
		uint32_t mask;
		double pv;
		lm_redop op = lmi_exec_reduce(e, &mask, &pv);
		return L->reduce_dims(op, s[0], mask, d[0], d[1], pv);
	}
	int64_t outer, R, inner;
	switch (e->op) {
	case LMI_OP_WHERE:
	case LMI_OP_MASKED_FILL: return L->where(d[0], s[0], s[1], s[2]);
	case LMI_OP_ADD_SCALED: return L->add_scaled(d[0], s[0], s[1], p->add_scaled.alpha);
	case LMI_OP_COUNT_CORRECT:
		return L->count_correct(s[0], s[1], p->count.base, &((lmi_exec *)e)->count);
	case LMI_OP_MATMUL:
	case LMI_OP_MM: {
		int bnd;
		int64_t bshape[LM_MAX_DIMS];
		lmi_exec_batch(s[0], s[1], &bnd, bshape);
		return L->matmul(s[0], s[1], bnd, bshape, d[0]);
	}
	case LMI_OP_MATMUL_BATCH_SUM: return L->matmul_batch_sum(s[0], s[1], d[0]);
	case LMI_OP_SOFTMAX:
	case LMI_OP_LOG_SOFTMAX:
		lmi_exec_split(s[0], p->softmax.dim, &outer, &R, &inner);
		return L->softmax(s[0], d[0], outer, R, inner, e->op == LMI_OP_LOG_SOFTMAX);
	case LMI_OP_GELU: return L->gelu(d[0], s[0], NULL, p->gelu.tanh_approx);
	case LMI_OP_GELU_BACKWARD: return L->gelu(d[0], s[0], s[1], p->gelu.tanh_approx);
	case LMI_OP_NLL_LOSS: return L->nll(s[0], s[1], d[0], p->nll.batch, p->nll.classes, p->nll.length);
	case LMI_OP_NLL_GRAD: return L->nll_grad(s[0], s[1], d[0], p->nll.batch, p->nll.classes, p->nll.length);
	case LMI_OP_MAX_POOL2D: {
		const lm_tensor *x = s[0], *y = d[0];
		return L->max_pool2d(x, d[0], d[1], x->shape[0] * x->shape[1], x->shape[2], x->shape[3], y->shape[2],
		                          y->shape[3], (int64_t[]){p->pool.kh, p->pool.kw}, (int64_t[]){p->pool.sh, p->pool.sw},
		                          (int64_t[]){p->pool.ph, p->pool.pw});
	}
	case LMI_OP_CONV2D_WINOGRAD: return L->winograd_conv(s[0], s[1], s[2], p->conv2d.ph, p->conv2d.pw, d[0]);
	case LMI_OP_CONV2D_WINOGRAD_BACKWARD:
		return L->winograd_conv_backward(s[0], s[1], s[2], p->conv2d.ph, p->conv2d.pw, d[0], d[1]);
	case LMI_OP_IM2COL:
	case LMI_OP_COL2IM:
	case LMI_OP_IM2COL_NHWC: {
		const lmi_p_window *w = &p->window;
		lm_window2d win = {w->kh, w->kw, w->sh, w->sw, w->ph, w->pw, w->dh, w->dw};
		/* the loops read dense planes; a compiled program may hand them another layout of the same
		 * elements (the graph compiler's layout pass, one rewrite at a time): made dense first */
		lm_tensor *xc = lm_tensor_is_contiguous(s[0]) ? NULL : lmi_contiguous_copy(s[0], s[0]->dtype);
		const lm_tensor *x = xc ? xc : s[0];
		if (!lm_tensor_is_contiguous(s[0]) && !xc) return lm_last_status();
		lm_status st = e->op == LMI_OP_IM2COL_NHWC ? L->im2col_nhwc(x, &win, w->oh, w->ow, d[0])
		               : e->op == LMI_OP_IM2COL    ? L->im2col(x, &win, w->oh, w->ow, d[0])
		                                           : L->col2im(x, &win, w->oh, w->ow, d[0]);
		lm_tensor_release(xc);
		return st;
	}
	case LMI_OP_INDEX_SELECT:
		lmi_exec_split(s[0], p->dim.dim, &outer, &R, &inner);
		return L->index_select(e->fname, s[0], outer, R, inner, s[1], d[0]);
	case LMI_OP_GATHER: return L->gather(s[0], (int)p->dim.dim, s[1], d[0]);
	case LMI_OP_SCATTER_ADD: return L->scatter_add(d[0], (int)p->dim.dim, s[0], s[1]);
	case LMI_OP_ONE_HOT: return L->one_hot(s[0], p->one_hot.classes, d[0]);
	case LMI_OP_SORT:
	case LMI_OP_TOPK:
		lmi_exec_split(s[0], p->sort.dim, &outer, &R, &inner);
		return L->sort(s[0], outer, R, inner, p->sort.k, p->sort.descending, d[0], d[1]);
	case LMI_OP_CUMSUM:
		lmi_exec_split(s[0], p->dim.dim, &outer, &R, &inner);
		return L->cumsum(s[0], outer, R, inner, d[0]);
	case LMI_OP_TRIL:
	case LMI_OP_TRIU: {
		const lm_tensor *x = s[0];
		int64_t M = x->shape[x->ndim - 2], N = x->shape[x->ndim - 1];
		int64_t B = M && N ? lm_tensor_numel(x) / (M * N) : 0;
		return L->triangle(x, B, M, N, p->triangle.k, e->op == LMI_OP_TRIU, d[0]);
	}
	case LMI_OP_REPEAT: {
		int64_t xshape[LM_MAX_DIMS];
		lmi_exec_padded(s[0], (int)p->repeat.ndims, xshape);
		return L->repeat_fill(d[0], xshape, p->repeat.repeats);
	}
	case LMI_OP_SGD_STEP: {
		lm_sgd_opts o = {p->sgd.lr, p->sgd.momentum, p->sgd.dampening, p->sgd.weight_decay, p->sgd.nesterov,
		                 p->sgd.maximize};
		return L->sgd_step(d[0], s[1], d[1], &o, p->sgd.first);
	}
	case LMI_OP_ADAM_STEP: {
		const lmi_p_adam *a = &p->adam;
		lm_adam_opts o = {.lr = a->lr, .beta1 = a->beta1, .beta2 = a->beta2, .eps = a->eps, .weight_decay = a->weight_decay,
		                  .amsgrad = a->amsgrad, .decoupled = a->decoupled, .maximize = a->maximize};
		return L->adam_step(d[0], s[1], d[1], d[2], d[3], &o, a->step_size, a->bc2_sqrt);
	}
	case LMI_OP_RMSPROP_STEP: {
		const lmi_p_rmsprop *r = &p->rmsprop;
		lm_rmsprop_opts o = {r->lr, r->alpha, r->eps, r->weight_decay, r->momentum, r->centered, r->maximize};
		return L->rmsprop_step(d[0], s[1], d[1], d[2], d[3], &o);
	}
	case LMI_OP_CROP_BATCH: return L->crop_batch(s[0], s[1], p->crop.pad, d[0]);
	case LMI_OP_FLIP_BATCH: return L->flip_batch(s[0], s[1], d[0]);
	case LMI_OP_INT_MM: return L->int_mm(s[0], s[1], d[0]);
	case LMI_OP_LINEAR_BLOCKS: return L->linear_blocks(s[0], s[1], d[0]);
	case LMI_OP_LSTM_CELL: return L->lstm_cell(s[0], s[1], d[0], d[1], NULL, NULL, NULL);
	/* backward: src = act, c, hc, ghc; dst = ga, gc */
	case LMI_OP_LSTM_CELL_BACKWARD: return L->lstm_cell(NULL, s[1], (lm_tensor *)s[2], (lm_tensor *)s[0], s[3], d[0], d[1]);
	case LMI_OP_GRU_CELL: return L->gru_cell(s[0], s[1], s[2], d[0], d[1], NULL, NULL, NULL, NULL);
	/* backward: src = act, hg, h, ghn; dst = gx, ghg, gh */
	case LMI_OP_GRU_CELL_BACKWARD:
		return L->gru_cell(NULL, s[1], s[2], NULL, (lm_tensor *)s[0], s[3], d[0], d[1], d[2]);
	case LMI_OP_FLASH_ATTENTION:
		return L->attention(s[0], s[1], s[2], p->attention.is_causal, p->attention.scale, d[0], d[1], NULL, NULL, NULL,
		                    NULL, NULL);
	/* backward: src = q, k, v, stats, dO; dst = dq, dk, dv */
	case LMI_OP_FLASH_ATTENTION_BACKWARD:
		return L->attention(s[0], s[1], s[2], p->attention.is_causal, p->attention.scale, NULL, NULL, s[3], s[4], d[0],
		                    d[1], d[2]);
	case LMI_OP_FUSED: return L->fused(e->fused, d, s);
	default:
		return lmi_fail(LM_ERR_INTERNAL, "%s: op %d runs no loop of a device", e->fname, (int)e->op);
	}
}

/* ---------------------------------------------------------------- operands reshaped for a device's kernels */

/* x with the dims of mask moved last, as a contiguous copy of dtype dt on the device; *rows, *R
 * set. */
lm_tensor *lmi_rows_of(const lm_tensor *x, uint32_t mask, lm_dtype dt, int64_t *rows,
                          int64_t *R)
{
	int64_t shape[LM_MAX_DIMS], stride[LM_MAX_DIMS];
	int k = 0;
	*rows = *R = 1;
	for (int pass = 0; pass < 2; pass++)
		for (int d = 0; d < x->ndim; d++)
			if ((((mask >> d) & 1u) != 0) == (pass == 1)) {
				shape[k] = x->shape[d];
				stride[k++] = x->stride[d];
				*(pass ? R : rows) *= x->shape[d];
			}
	lm_tensor *v = lmi_tensor_wrap(x->storage, x->dtype, x->ndim, shape, stride, x->offset);
	lm_tensor *c = v ? lmi_contiguous_copy(v, dt) : NULL;
	lm_tensor_release(v);
	return c;
}

/* t (..., r, c) as a contiguous (batch..., r, c) over bnd batch dims of bshape: its stride
 * between matrices is r*c, or 0 when t has one matrix for every batch entry (*sm). */
lm_tensor *lmi_batch_operand(const lm_tensor *t, int bnd, const int64_t *bshape, int64_t *sm)
{
	int64_t r = t->shape[t->ndim - 2], c = t->shape[t->ndim - 1], mine = 1;
	for (int i = 0; i < t->ndim - 2; i++) mine *= t->shape[i];
	*sm = mine == 1 ? 0 : r * c;
	if (mine == 1) /* one matrix: just contiguous */
		return lmi_contiguous_copy(t, t->dtype);
	int64_t shape[LM_MAX_DIMS], stride[LM_MAX_DIMS];
	int nd = bnd + 2, off = nd - t->ndim;
	for (int d = 0; d < nd; d++) {
		int j = d - off;
		shape[d] = d < bnd ? bshape[d] : t->shape[j];
		stride[d] = j < 0 || (t->shape[j] == 1 && shape[d] != 1) ? 0 : t->stride[j];
	}
	lm_tensor *v = lmi_tensor_wrap(t->storage, t->dtype, nd, shape, stride, t->offset);
	lm_tensor *cc = v ? lmi_contiguous_copy(v, t->dtype) : NULL;
	lm_tensor_release(v);
	return cc;
}

/* matmul_batch_sum's operands for one gemm: sum_i a_i b_i = [a_1 ... a_n] (M x nK) [b_1; ...; b_n]
 * (nK x N): a (n..., M, K) permuted to a contiguous (M, n, K), b contiguous; *M, *N, *nK set. */
lm_status lmi_batch_sum_operands(const lm_tensor *a, const lm_tensor *b, lm_tensor **ap,
                                 lm_tensor **bp, int64_t *M, int64_t *N, int64_t *nK)
{
	int nd = a->ndim;
	int64_t K = a->shape[nd - 1], n = 1;
	*M = a->shape[nd - 2], *N = b->shape[nd - 1];
	for (int i = 0; i < nd - 2; i++) n *= a->shape[i];
	*nK = n * K;
	*ap = *bp = NULL;
	lm_tensor *ac = lmi_contiguous_copy(a, a->dtype), *view = NULL;
	if (ac) /* (n, M, K) contiguous seen as (M, n, K) */
		view = lmi_tensor_wrap(ac->storage, ac->dtype, 3, (int64_t[]){*M, n, K},
		                       (int64_t[]){K, *M * K, 1}, ac->offset);
	if (view) *ap = lmi_contiguous_copy(view, a->dtype);
	if (*ap) *bp = lmi_contiguous_copy(b, b->dtype);
	lm_tensor_release(ac);
	lm_tensor_release(view);
	if (*bp) return LM_OK;
	lm_tensor_release(*ap);
	*ap = NULL;
	return lm_last_status();
}
