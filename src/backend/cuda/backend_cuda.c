/*
 * backend_cuda.c — the CUDA device (../backend.h), liblumen's side: plain C that turns each loop's
 * tensors into arrays (tensor_api.h) for the CUDA module's kernels, the device memory behind
 * storage (the caching allocator, cache.h, over the module's cudaMalloc), and the
 * lm.cuda.memory_* figures. Its compute is its loops table through ../loops.c.
 *
 * The device is made on the first move of a tensor to the GPU (lmi_backend_open ->
 * lmi_cuda_backend_load): the module loaded, a device found, the module's stream and cuBLAS
 * handle made; start-up never touches CUDA. Loops not written here stay NULL (the two Winograd
 * loops: conv2d takes im2col + cuBLAS there; count_correct: four ops instead), so supports_node
 * says no and the op is refused naming itself, the device, the loop and the dtype (lmi_refuse);
 * the nn, product and optimizer loops take float32 / float64, the elementwise ones and
 * reduce_dims every dtype (integers as on the CPU: wrapping), the loops that move data by
 * position every dtype. Index errors come back as the CPU words them. `lumen --ops` shows it all.
 * Read next: tensor.cu, nn.cu, move.cu, sort.cu, cache.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cuda/cache.h"
#include "backend/cuda/tensor_api.h"
#include "backend/cuda_module.h"
#include "lumen/cuda.h"

_Static_assert((int)LMI_CU_CLAMP == (int)LMI_CLAMP && (int)LMI_CU_DIV_S == (int)LMI_DIV_S,
               "tensor_api.h's unary codes follow backend.h's");
_Static_assert(LM_MAX_DIMS <= LMI_CU_MAX_DIMS, "lmi_cu_arr holds every tensor");

static const lmi_cuda_tensor_api *api;
static lmi_cache *cache;

/* ---------------------------------------------------------------- helpers */

/* A module call's result as a Lumen status: out of memory, or a device error with CUDA's
 * message, named after fname. */
static lm_status cu(const char *fname, int err, const char *msg)
{
	if (!err) return LM_OK;
	if (err == LMI_CU_ERR_OOM)
		return lmi_fail(LM_ERR_NOMEM, "%s: out of device memory (%s)", fname, msg);
	return lmi_fail(LM_ERR_DEVICE, "%s: %s", fname, msg);
}

#define CU(fname, call)                                                                            \
	do {                                                                                       \
		char msg[512] = "";                                                                \
		size_t cap = sizeof msg;                                                           \
		return cu(fname, (call), msg);                                                     \
	} while (0)

static lmi_cu_arr arr(const lm_tensor *t)
{
	lmi_cu_arr a;
	memset(&a, 0, sizeof a);
	a.data = lmi_data(t);
	a.dtype = t->dtype;
	a.ndim = t->ndim;
	for (int i = 0; i < t->ndim; i++) a.shape[i] = t->shape[i], a.stride[i] = t->stride[i];
	return a;
}

static bool is_float(lm_dtype dt)
{
	return dt == LM_FLOAT32 || dt == LM_FLOAT64;
}

/* ---------------------------------------------------------------- memory and the core's loops */

static int raw_alloc(void *ctx, void **p, size_t n, bool *oom, char *msg, size_t cap)
{
	(void)ctx;
	int e = api->malloc(p, n, msg, cap);
	*oom = e == LMI_CU_ERR_OOM;
	return e;
}

static int raw_free(void *ctx, void *p, char *msg, size_t cap)
{
	(void)ctx;
	return api->free(p, msg, cap);
}

static void *m_alloc(size_t n)
{
	return lmi_cache_alloc(cache, "cuda", n);
}
static void m_free(void *p, size_t n)
{
	lmi_cache_free(cache, p, n);
}

static lm_status m_memcpy(void *dst, const void *src, size_t n, lmi_copy_kind k, bool pinned)
{
	int kind = k == LMI_TO_DEVICE ? 0 : k == LMI_TO_HOST ? 1 : 2;
	CU("cuda copy", api->memcpy(dst, src, n, kind, pinned, msg, cap));
}

static lm_status m_copy(lm_tensor *dst, const lm_tensor *src)
{
	lmi_cu_arr d = arr(dst), s = arr(src);
	CU("cuda copy", api->copy(&d, &s, msg, cap));
}

static lm_status m_fill(lm_tensor *t, double v)
{
	lmi_cu_arr d = arr(t);
	CU("cuda fill", api->fill(&d, v, msg, cap));
}

static lm_status m_random(lm_tensor *t, const lmi_rng_call *c)
{
	lmi_cu_arr d = arr(t);
	lmi_cu_rng r = {c->kind, c->f64, c->a, c->b, c->lo, c->range, c->seed, c->offset};
	CU("cuda random", api->random(&d, &r, msg, cap));
}

static void *m_host_alloc(size_t n)
{
	void *p = NULL;
	char msg[512] = "";
	lm_status s = cu("pin_memory", api->host_alloc(&p, n, msg, sizeof msg), msg);
	return s ? NULL : p;
}

static void m_host_free(void *p, size_t n)
{
	char msg[512];
	(void)n;
	api->host_free(p, msg, sizeof msg);
}

static const lmi_device_ops cuda_mem = {
    .alloc = m_alloc,
    .free = m_free,
    .memcpy = m_memcpy,
    .copy = m_copy,
    .fill = m_fill,
    .random = m_random,
    .host_alloc = m_host_alloc,
    .host_free = m_host_free,
};

/* ---------------------------------------------------------------- elementwise */

static lm_status s_unary(int op, lm_tensor *out, const lm_tensor *x, double p0, double p1)
{
	lmi_cu_arr o = arr(out), a = arr(x);
	CU("cuda unary", api->unary(op, &o, &a, p0, p1, msg, cap));
}

static lm_status s_binary(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b)
{
	lmi_cu_arr o = arr(out), x = arr(a), y = arr(b);
	char msg[512] = "";
	int e = api->binary(op, &o, &x, &y, msg, sizeof msg);
	if (e == LMI_CU_ERR_ZERO_DIV) /* cpu/divmod.c's words */
		return lmi_fail(LM_ERR_ARG, "binary: integer division by zero (the %s divisor holds a 0)",
		                lm_dtype_name(b->dtype));
	return cu("cuda binary", e, msg);
}

static lm_status s_where(lm_tensor *out, const lm_tensor *c, const lm_tensor *a, const lm_tensor *b)
{
	lmi_cu_arr o = arr(out), m = arr(c), x = arr(a), y = arr(b);
	CU("where", api->where(&o, &m, &x, &y, msg, cap));
}

static lm_status s_add_scaled(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double al)
{
	lmi_cu_arr o = arr(out), x = arr(a), y = arr(b);
	CU("add_scaled", api->add_scaled(&o, &x, &y, al, msg, cap));
}

/* ---------------------------------------------------------------- reductions */

/* var / std / norm of integers (out float32): the rows converted to float64 and reduced in
 * double, as the CPU computes them, into a float64 temporary stored into out. */
static lm_status int_stats(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
                           double p)
{
	int64_t rows, R;
	lm_tensor *c = lmi_rows_of(x, mask, LM_FLOAT64, &rows, &R);
	lm_tensor *t = c ? lmi_empty_on("cuda reduce_dims", LM_CUDA, out->ndim, out->shape, LM_FLOAT64)
	                 : NULL;
	lm_status s = t ? LM_OK : lm_last_status();
	if (!s) {
		char msg[512] = "";
		s = cu("cuda reduce_dims",
		       api->stat_rows(op, LM_FLOAT64, lmi_data(c), rows, R, lmi_data(t), p, msg,
		                      sizeof msg),
		       msg);
	}
	if (!s) s = m_copy(out, t);
	lm_tensor_release(c);
	lm_tensor_release(t);
	return s;
}

static lm_status s_reduce_dims(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
                               lm_tensor *idx, double p)
{
	bool arg = op == LM_ARGMAX || op == LM_ARGMIN;
	bool stat = op == LM_PROD || op == LM_VAR || op == LM_STD || op == LM_NORM;
	if (!is_float(x->dtype)) { /* integers: reduce_rows's exact sums, products, picks, means */
		if (op == LM_VAR || op == LM_STD || op == LM_NORM) return int_stats(op, x, mask, out, p);
		stat = false;
	}
	int64_t rows, R;
	lm_tensor *c = lmi_rows_of(x, mask, x->dtype, &rows, &R);
	if (!c) return lm_last_status();
	char msg[512] = "";
	int e = stat ? api->stat_rows(op, x->dtype, lmi_data(c), rows, R, lmi_data(out), p, msg,
	                              sizeof msg)
	             : api->reduce_rows(op, x->dtype, lmi_data(c), rows, R, arg ? NULL : lmi_data(out),
	                                arg   ? (int64_t *)lmi_data(out)
	                                : idx ? (int64_t *)lmi_data(idx)
	                                      : NULL,
	                                msg, sizeof msg);
	lm_tensor_release(c);
	return cu("cuda reduce_dims", e, msg);
}

/* ---------------------------------------------------------------- products */

static lm_status s_matmul(const lm_tensor *a, const lm_tensor *b, int bnd, const int64_t *bshape,
                          lm_tensor *out)
{
	int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
	int64_t batch = 1, sA, sB;
	for (int i = 0; i < bnd; i++) batch *= bshape[i];
	lm_tensor *A = lmi_batch_operand(a, bnd, bshape, &sA),
	          *B = A ? lmi_batch_operand(b, bnd, bshape, &sB) : NULL;
	lm_status s = B ? LM_OK : lm_last_status();
	if (!s) {
		char msg[512] = "";
		s = cu("matmul",
		       api->gemm(a->dtype, batch, M, N, K, lmi_data(A), sA, lmi_data(B), sB,
		                 lmi_data(out), M * N, 0, msg, sizeof msg),
		       msg);
	}
	lm_tensor_release(A);
	lm_tensor_release(B);
	return s;
}

static lm_status s_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b, lm_tensor *out)
{
	lm_tensor *ap, *bp;
	int64_t M, N, nK;
	lm_status s = lmi_batch_sum_operands(a, b, &ap, &bp, &M, &N, &nK);
	if (!s) {
		char msg[512] = "";
		s = cu("matmul",
		       api->gemm(a->dtype, 1, M, N, nK, lmi_data(ap), 0, lmi_data(bp), 0, lmi_data(out), 0,
		                 0, msg, sizeof msg),
		       msg);
	}
	lm_tensor_release(ap);
	lm_tensor_release(bp);
	return s;
}

/* ---------------------------------------------------------------- nn */

static lm_status s_softmax(const lm_tensor *x, lm_tensor *y, int64_t outer, int64_t R,
                           int64_t inner, bool logsm)
{
	CU(logsm ? "log_softmax" : "softmax",
	   api->softmax(x->dtype, lmi_data(x), lmi_data(y), outer, R, inner, logsm, msg, cap));
}

static lm_status s_nll(const lm_tensor *logp, const lm_tensor *t, lm_tensor *out, int64_t N,
                       int64_t C, int64_t L)
{
	CU("nll_loss", api->nll(logp->dtype, lmi_data(logp), (const int64_t *)lmi_data(t),
	                        lmi_data(out), N, C, L, msg, cap));
}

static lm_status s_nll_grad(const lm_tensor *g, const lm_tensor *t, lm_tensor *gx, int64_t N,
                            int64_t C, int64_t L)
{
	CU("nll_loss backward", api->nll_grad(g->dtype, lmi_data(g), (const int64_t *)lmi_data(t),
	                                      lmi_data(gx), N, C, L, msg, cap));
}

static lm_status s_gelu(lm_tensor *out, const lm_tensor *x, const lm_tensor *g, bool tanh_approx)
{
	lmi_cu_arr o = arr(out), a = arr(x), b = g ? arr(g) : arr(x);
	CU(g ? "gelu backward" : "gelu", api->gelu(&o, &a, g ? &b : NULL, tanh_approx, msg, cap));
}

static lm_status s_max_pool2d(const lm_tensor *x, lm_tensor *y, lm_tensor *idx, int64_t planes,
                              int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t *k,
                              const int64_t *stride, const int64_t *pad)
{
	const int64_t win[6] = {k[0], k[1], stride[0], stride[1], pad[0], pad[1]};
	CU("max_pool2d", api->max_pool2d(x->dtype, lmi_data(x), lmi_data(y), (int64_t *)lmi_data(idx),
	                                 planes, H, W, OH, OW, win, msg, cap));
}

static lm_status s_sgd_step(lm_tensor *p, const lm_tensor *g, lm_tensor *buf, const lm_sgd_opts *o,
                            bool first)
{
	double f[7] = {o->lr,       o->momentum, o->dampening, o->weight_decay,
	               o->nesterov, o->maximize, first};
	CU("sgd_step_", api->sgd(p->dtype, lmi_data(p), lmi_data(g), buf ? lmi_data(buf) : NULL,
	                         lm_tensor_numel(p), f, msg, cap));
}

static lm_status s_adam_step(lm_tensor *p, const lm_tensor *g, lm_tensor *m, lm_tensor *v,
                             lm_tensor *vmax, const lm_adam_opts *o, double step_size,
                             double bc2_sqrt)
{
	double f[10] = {o->beta1,  o->beta2, o->eps,       o->weight_decay, o->lr,
	                step_size, bc2_sqrt, o->decoupled, o->amsgrad,      o->maximize};
	CU("adam_step_", api->adam(p->dtype, lmi_data(p), lmi_data(g), lmi_data(m), lmi_data(v),
	                           vmax ? lmi_data(vmax) : NULL, lm_tensor_numel(p), f, msg, cap));
}

static lm_status s_rmsprop_step(lm_tensor *p, const lm_tensor *g, lm_tensor *sq, lm_tensor *buf,
                                lm_tensor *gavg, const lm_rmsprop_opts *o)
{
	double f[6] = {o->alpha, o->weight_decay, o->lr, o->eps, o->momentum, o->maximize};
	CU("rmsprop_step_", api->rmsprop(p->dtype, lmi_data(p), lmi_data(g), lmi_data(sq),
	                                 buf ? lmi_data(buf) : NULL, gavg ? lmi_data(gavg) : NULL,
	                                 lm_tensor_numel(p), f, msg, cap));
}

static lm_status s_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t pad,
                              lm_tensor *out)
{
	CU("crop_batch", api->crop((int)lm_dtype_size(x->dtype), lmi_data(x),
	                           (const int64_t *)lmi_data(offsets), pad, x->shape[0], x->shape[1],
	                           x->shape[2], x->shape[3], out->shape[2], out->shape[3],
	                           lmi_data(out), msg, cap));
}

static lm_status s_flip_batch(const lm_tensor *x, const lm_tensor *mask, lm_tensor *out)
{
	int64_t N = x->shape[0], W = x->shape[x->ndim - 1];
	int64_t lines = N && W ? lm_tensor_numel(x) / N / W : 0;
	CU("flip_batch", api->flip((int)lm_dtype_size(x->dtype), lmi_data(x),
	                           (const uint8_t *)lmi_data(mask), lmi_data(out), N, lines, W, msg,
	                           cap));
}

/* x (N, C, H, W) contiguous -> cols (N, C*kh*kw, oh*ow), and the adjoint into out (N, C, H, W) */
static lm_status s_im2col(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                          lm_tensor *cols)
{
	const int64_t win[8] = {w->kh, w->kw, w->sh, w->sw, w->ph, w->pw, w->dh, w->dw};
	CU("im2col", api->im2col(x->dtype, lmi_data(x), lmi_data(cols), x->shape[0] * x->shape[1],
	                         x->shape[2], x->shape[3], win, oh, ow, msg, cap));
}

static lm_status s_col2im(const lm_tensor *cols, const lm_window2d *w, int64_t oh, int64_t ow,
                          lm_tensor *out)
{
	const int64_t win[8] = {w->kh, w->kw, w->sh, w->sw, w->ph, w->pw, w->dh, w->dw};
	CU("col2im",
	   api->col2im(cols->dtype, lmi_data(cols), lmi_data(out), out->shape[0] * out->shape[1],
	               out->shape[2], out->shape[3], win, oh, ow, msg, cap));
}

/* ---------------------------------------------------------------- moving data by position */

/* The index ops' errors: an index out of range as the CPU words it (cpu/index.c), else cu's. */
static lm_status index_error(const char *fname, int e, const char *msg, const int64_t *bad,
                             const lm_tensor *idx, int dim, int64_t size)
{
	if (e != LMI_CU_ERR_INDEX) return cu(fname, e, msg);
	int64_t pos[LM_MAX_DIMS], q = bad[0];
	for (int d = idx->ndim - 1; d >= 0; d--) {
		pos[d] = idx->shape[d] ? q % idx->shape[d] : 0;
		q = idx->shape[d] ? q / idx->shape[d] : 0;
	}
	return lmi_fail(LM_ERR_INDEX,
	                "%s: index %lld at position %s is out of range for dim %d of size %lld",
	                fname, (long long)bad[1], lmi_dims_s(idx->ndim, pos), dim, (long long)size);
}

static lm_status s_index_select(const char *fname, const lm_tensor *x, int64_t outer, int64_t size,
                                int64_t inner, const lm_tensor *idx, lm_tensor *out)
{
	char msg[512] = "";
	int64_t bad[2] = {0, 0};
	lmi_cu_arr i = arr(idx);
	int e = api->index_select(lmi_data(x), (int)lm_dtype_size(x->dtype), outer, size, inner, &i,
	                          lmi_data(out), bad, msg, sizeof msg);
	if (e == LMI_CU_ERR_INDEX)
		return lmi_fail(LM_ERR_INDEX,
		                "%s: index %lld (at position %lld) is out of range for a dim of size %lld",
		                fname, (long long)bad[1], (long long)bad[0], (long long)size);
	return cu(fname, e, msg);
}

static lm_status s_gather(const lm_tensor *x, int dim, const lm_tensor *idx, lm_tensor *out)
{
	char msg[512] = "";
	int64_t bad[2] = {0, 0};
	lmi_cu_arr a = arr(x), i = arr(idx), o = arr(out);
	int e = api->gather(&a, dim, &i, &o, bad, msg, sizeof msg);
	return index_error("gather", e, msg, bad, idx, dim, x->shape[dim]);
}

static lm_status s_scatter_add(lm_tensor *out, int dim, const lm_tensor *idx, const lm_tensor *src)
{
	char msg[512] = "";
	int64_t bad[2] = {0, 0};
	lmi_cu_arr o = arr(out), i = arr(idx), b = arr(src);
	int e = api->scatter_add(&o, dim, &i, &b, bad, msg, sizeof msg);
	return index_error("scatter_add", e, msg, bad, idx, dim, out->shape[dim]);
}

static lm_status s_one_hot(const lm_tensor *idx, int64_t classes, lm_tensor *out)
{
	char msg[512] = "";
	int64_t bad[2] = {0, 0};
	lmi_cu_arr i = arr(idx);
	int e = api->one_hot(&i, classes, (int64_t *)lmi_data(out), bad, msg, sizeof msg);
	if (e == LMI_CU_ERR_INDEX)
		return lmi_fail(LM_ERR_INDEX,
		                "one_hot: class %lld (at position %lld) is out of range for %lld classes",
		                (long long)bad[1], (long long)bad[0], (long long)classes);
	return cu("one_hot", e, msg);
}

static lm_status s_sort(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                        bool descending, lm_tensor *values, lm_tensor *indices)
{
	if (R > LMI_CU_SORT_MAX)
		return lmi_fail(LM_ERR_UNSUPPORTED,
		                "sort: the cuda backend has no sort loop for lines longer than %d "
		                "entries (this one has %lld); sort it on the CPU",
		                LMI_CU_SORT_MAX, (long long)R);
	CU("sort", api->sort(x->dtype, lmi_data(x), outer, R, inner, k, descending, lmi_data(values),
	                     (int64_t *)lmi_data(indices), msg, cap));
}

static lm_status s_cumsum(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                          lm_tensor *out)
{
	CU("cumsum", api->cumsum(x->dtype, lmi_data(x), outer, R, inner, lmi_data(out), msg, cap));
}

static lm_status s_triangle(const lm_tensor *x, int64_t B, int64_t M, int64_t N, int64_t k,
                            bool upper, lm_tensor *out)
{
	CU(upper ? "triu" : "tril", api->triangle((int)lm_dtype_size(x->dtype), lmi_data(x), B, M, N,
	                                          k, upper, lmi_data(out), msg, cap));
}

static lm_status s_repeat_fill(lm_tensor *out, const int64_t *xshape, const int64_t *reps)
{
	(void)reps; /* out's shape is reps * xshape */
	CU("repeat", api->repeat_fill((int)lm_dtype_size(out->dtype), lmi_data(out), out->ndim,
	                              out->shape, xshape, msg, cap));
}

/* ---------------------------------------------------------------- the table */

static bool supports_op(lmi_be_op op, lm_dtype dt)
{
	switch (op) {
	case LMI_BE_OP_reduce_dims:
	case LMI_BE_OP_matmul: /* integers: a wrapping kernel, as the CPU's */
	/* elementwise: floats, and integers with the CPU's wrapping semantics */
	case LMI_BE_OP_unary:
	case LMI_BE_OP_binary:
	case LMI_BE_OP_where:
	case LMI_BE_OP_add_scaled:
	/* moves of bit patterns and integer-exact loops: every dtype */
	case LMI_BE_OP_index_select:
	case LMI_BE_OP_gather:
	case LMI_BE_OP_scatter_add:
	case LMI_BE_OP_one_hot:
	case LMI_BE_OP_sort:
	case LMI_BE_OP_cumsum:
	case LMI_BE_OP_triangle:
	case LMI_BE_OP_repeat_fill:
	case LMI_BE_OP_crop_batch:
	case LMI_BE_OP_flip_batch: return dt >= 0 && dt < LM_DTYPE_COUNT && lmi_dtypes[dt].compute_as == dt;
	case LMI_BE_OP_matmul_batch_sum:
	case LMI_BE_OP_softmax:
	case LMI_BE_OP_nll:
	case LMI_BE_OP_nll_grad:
	case LMI_BE_OP_sgd_step:
	case LMI_BE_OP_adam_step:
	case LMI_BE_OP_rmsprop_step:
	case LMI_BE_OP_gelu:
	case LMI_BE_OP_max_pool2d:
	case LMI_BE_OP_im2col:
	case LMI_BE_OP_col2im: return is_float(dt);
	default: return false; /* the slots left NULL */
	}
}

static const lmi_loops cuda_loops = {
    .supports_op = supports_op,
    .unary = s_unary,
    .binary = s_binary,
    .where = s_where,
    .add_scaled = s_add_scaled,
    .reduce_dims = s_reduce_dims,
    .matmul = s_matmul,
    .matmul_batch_sum = s_matmul_batch_sum,
    .softmax = s_softmax,
    .nll = s_nll,
    .nll_grad = s_nll_grad,
    .sgd_step = s_sgd_step,
    .adam_step = s_adam_step,
    .im2col = s_im2col,
    .col2im = s_col2im,
    .gelu = s_gelu,
    .max_pool2d = s_max_pool2d,
    .rmsprop_step = s_rmsprop_step,
    .crop_batch = s_crop_batch,
    .flip_batch = s_flip_batch,
    .index_select = s_index_select,
    .gather = s_gather,
    .scatter_add = s_scatter_add,
    .one_hot = s_one_hot,
    .sort = s_sort,
    .cumsum = s_cumsum,
    .triangle = s_triangle,
    .repeat_fill = s_repeat_fill,
};

static bool supports_node(const lmi_exec *e)
{
	return lmi_loops_supports(&cuda_loops, e);
}

static lm_status compute(const lmi_exec *e)
{
	return lmi_loops_compute(&cuda_loops, e);
}

static const lmi_backend cuda_backend = {
    .version = LMI_BACKEND_VERSION,
    .name = "cuda",
    .device = LM_CUDA,
    .mem = &cuda_mem,
    .supports_node = supports_node,
    .compute = compute,
};

/* ---------------------------------------------------------------- loading */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[768];

static void load(void)
{
	const lmi_cuda_tensor_api *(*get)(void);
	void *sym = lmi_cuda_module_symbol("cuda", LMI_CUDA_TENSOR_SYMBOL);
	if (!sym) {
		snprintf(load_error, sizeof load_error, "%s", lm_last_error());
		return;
	}
	*(void **)&get = sym;
	const lmi_cuda_tensor_api *a = get();
	if (!a || a->version != LMI_CUDA_TENSOR_VERSION) {
		snprintf(load_error, sizeof load_error,
		         "cuda: the CUDA module's tensor kernels are not of "
		         "this build (version %d, expected %d)",
		         a ? a->version : -1, LMI_CUDA_TENSOR_VERSION);
		return;
	}
	char msg[512] = "";
	int e = a->init(msg, sizeof msg);
	if (e) {
		snprintf(load_error, sizeof load_error, "cuda: setting up the device failed: %s",
		         msg);
		return;
	}
	api = a;
	lmi_raw_alloc raw = {raw_alloc, raw_free, NULL};
	if (!(cache = lmi_cache_new(&raw))) {
		api = NULL;
		snprintf(load_error, sizeof load_error, "%s", lm_last_error());
	}
}

const lmi_backend *lmi_cuda_backend_table(void) { return &cuda_backend; }

const lmi_backend *lmi_cuda_backend_load(const char *fname)
{
	pthread_once(&once, load);
	if (!api) {
		/* the reason starts "cuda: " or "cuda.<x>: ": name the caller instead */
		const char *why = strchr(load_error, ':');
		return lmi_fail_null(LM_ERR_DEVICE, "%s%s", fname, why ? why : load_error);
	}
	return &cuda_backend;
}

/* ---------------------------------------------------------------- lm.cuda.memory_* */

/* The cache, or NULL without touching CUDA when no tensor was ever moved to the GPU. */
static lmi_cache *cache_if_loaded(void)
{
	return api ? cache : NULL;
}

size_t lm_cuda_memory_allocated(void)
{
	lmi_cache *c = cache_if_loaded();
	return c ? lmi_cache_get_stats(c).allocated : 0;
}

size_t lm_cuda_max_memory_allocated(void)
{
	lmi_cache *c = cache_if_loaded();
	return c ? lmi_cache_get_stats(c).max_allocated : 0;
}

size_t lm_cuda_memory_cached(void)
{
	lmi_cache *c = cache_if_loaded();
	return c ? lmi_cache_get_stats(c).cached : 0;
}

lm_status lm_cuda_empty_cache(void)
{
	lmi_cache *c = cache_if_loaded();
	return c ? lmi_cache_empty(c) : LM_OK;
}

void lm_cuda_reset_peak_memory_stats(void)
{
	lmi_cache *c = cache_if_loaded();
	if (c) lmi_cache_reset_peak(c);
}

lm_status lm_cuda_synchronize(void)
{
	if (!api) return LM_OK;
	CU("cuda.synchronize", api->sync(msg, cap));
}

bool lm_cuda_in_use(void) { return api != NULL; }

static bool timer_started;

lm_status lm_cuda_timer_start(void)
{
	if (!api)
		return lmi_fail(LM_ERR_STATE, "cuda.timer: no tensor was moved to the GPU yet: nothing "
		                "runs there to time");
	char msg[512] = "";
	lm_status st = cu("cuda.timer", api->timer(0, NULL, msg, sizeof msg), msg);
	timer_started = st == LM_OK;
	return st;
}

lm_status lm_cuda_timer_stop(double *ms)
{
	*ms = 0;
	if (!api || !timer_started)
		return lmi_fail(LM_ERR_STATE, "cuda.timer: stopped without a start (lm_cuda_timer_start)");
	timer_started = false;
	CU("cuda.timer", api->timer(1, ms, msg, cap));
}
