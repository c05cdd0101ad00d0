/*
 * fake_device.c — the fake device of fake_device.h: tagged host memory, raw copies that untag,
 * and a table whose slots run the CPU's loops on CPU views of the device's bytes.
 *
 * A slot's arguments are turned into views (struct view: a storage header and a tensor header
 * on the stack, over the untagged bytes); two arguments on one storage get one view storage, so
 * the CPU loops see the same aliasing as the device's would. The views never record autograd
 * and are never freed (their refcounts start high). The random loop draws from philox.h block by
 * block, as a GPU's kernel does, and so checks that the header gives the CPU's streams.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "fake_device.h"

#define TAG ((uintptr_t)1 << 62)

static void *tagged(const void *p)
{
	return (void *)((uintptr_t)p ^ TAG);
}

static struct {
	atomic_llong live_bytes, allocs, to_device, to_host, on_device, pinned_copies, foreign;
	atomic_llong calls[LMI_BE_OP_COUNT];
	atomic_llong fail_after;
} st = {.fail_after = -1};

fake_device_stats fake_device_get_stats(void)
{
	fake_device_stats s = {st.live_bytes, st.allocs,        st.to_device, st.to_host,
	                       st.on_device,  st.pinned_copies, st.foreign,   {0}};
	for (int i = 0; i < LMI_BE_OP_COUNT; i++) s.calls[i] = st.calls[i];
	return s;
}

void fake_device_fail_after(int64_t n)
{
	st.fail_after = n;
}

/* ---------------------------------------------------------------- memory and raw copies */

static void *f_alloc(size_t n)
{
	if (st.fail_after == 0)
		return lmi_fail_null(LM_ERR_NOMEM, "fake: out of device memory (%zu bytes asked)",
		                     n);
	if (st.fail_after > 0) st.fail_after--;
	void *p = malloc(n ? n : 1);
	if (!p) return lmi_fail_null(LM_ERR_NOMEM, "fake: out of memory");
	st.live_bytes += (long long)n;
	st.allocs++;
	return tagged(p);
}

static void f_free(void *p, size_t n)
{
	st.live_bytes -= (long long)n;
	free(tagged(p));
}

static lm_status f_memcpy(void *dst, const void *src, size_t n, lmi_copy_kind k, bool pinned)
{
	if (k != LMI_TO_HOST) dst = tagged(dst);
	if (k != LMI_TO_DEVICE) src = tagged(src);
	memcpy(dst, src, n);
	if (k == LMI_TO_DEVICE)
		st.to_device += (long long)n;
	else if (k == LMI_TO_HOST)
		st.to_host += (long long)n;
	else
		st.on_device += (long long)n;
	if (pinned) st.pinned_copies++;
	return LM_OK;
}

/* page-locked host memory: plain memory here, counted as such by the copies */
static void *f_host_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p ? p : lmi_fail_null(LM_ERR_NOMEM, "fake: out of host memory");
}

static void f_host_free(void *p, size_t n)
{
	(void)n;
	free(p);
}

/* ---------------------------------------------------------------- views of device tensors */

#define MAX_VIEWS 8
typedef struct views {
	int n, ns;
	const lm_tensor *from[MAX_VIEWS];
	lm_tensor t[MAX_VIEWS];
	const lm_storage *sfrom[MAX_VIEWS];
	lm_storage s[MAX_VIEWS];
} views;

/* A CPU view of device tensor t (NULL stays NULL); a CPU tensor is counted as foreign and
 * passed as it is. */
static lm_tensor *host(views *v, const lm_tensor *t)
{
	if (!t) return NULL;
	if (t->storage->device != LM_CUDA) {
		if (getenv("FAKE_DEVICE_ABORT")) abort(); /* for a debugger's backtrace */
		st.foreign++;
		return (lm_tensor *)t;
	}
	for (int i = 0; i < v->n; i++)
		if (v->from[i] == t) return &v->t[i];
	LM_ASSERT(v->n < MAX_VIEWS);
	int k = -1;
	for (int i = 0; i < v->ns; i++)
		if (v->sfrom[i] == t->storage) k = i;
	if (k < 0) {
		k = v->ns++;
		v->sfrom[k] = t->storage;
		v->s[k] = *t->storage;
		v->s[k].device = LM_CPU;
		v->s[k].data = tagged(t->storage->data);
		v->s[k].refcount = 1 << 30;
		v->s[k].free_fn = NULL;
	}
	lm_tensor *h = &v->t[v->n];
	v->from[v->n++] = t;
	*h = *t;
	h->storage = &v->s[k];
	h->refcount = 1 << 30;
	h->requires_grad = false;
	h->grad = NULL;
	h->grad_fn = NULL;
	return h;
}

static const lmi_backend *const cpu = &lmi_cpu_backend;

#define BEGIN(slot)                                                                                \
	views v_;                                                                                  \
	v_.n = v_.ns = 0;                                                                          \
	st.calls[LMI_BE_OP_##slot]++
#define H(t) host(&v_, (t))

/* ---------------------------------------------------------------- the core's loops */

static lm_status f_copy(lm_tensor *dst, const lm_tensor *src)
{
	views v_;
	v_.n = v_.ns = 0;
	return lmi_copy(H(dst), H(src));
}

static lm_status f_fill(lm_tensor *t, double value)
{
	views v_;
	v_.n = v_.ns = 0;
	return lmi_fill(H(t), value);
}

/* Element j of contiguous d (dtype dt) from block values, as rng.c stores them. */
static void store(char *d, lm_dtype dt, int64_t j, double v)
{
	if (dt == LM_FLOAT32)
		((float *)d)[j] = (float)v;
	else if (dt == LM_FLOAT64)
		((double *)d)[j] = v;
	else
		lmi_store(d + j * (int64_t)lm_dtype_size(dt), dt, v);
}

static void store_int(char *d, lm_dtype dt, int64_t j, int64_t v)
{
	switch (dt) {
	case LM_FLOAT32: ((float *)d)[j] = (float)v; break;
	case LM_FLOAT64: ((double *)d)[j] = (double)v; break;
	case LM_INT32: ((int32_t *)d)[j] = (int32_t)v; break;
	case LM_INT64: ((int64_t *)d)[j] = v; break;
	default: ((uint8_t *)d)[j] = (uint8_t)v; break;
	}
}

/* One "thread" per block, as the GPU's random kernel runs. */
static lm_status f_random(lm_tensor *t, const lmi_rng_call *c)
{
	views v_;
	v_.n = v_.ns = 0;
	lm_tensor *h = H(t);
	char *d = lmi_data(h);
	int64_t n = lm_tensor_numel(h);
	int pb = lmi_rng_per_block(c->kind, c->f64);
	for (int64_t bi = 0; bi * pb < n; bi++) {
		uint32_t w[4];
		lmi_philox_block(c->seed, c->offset + (uint64_t)bi, w);
		if (c->kind == LMI_RNG_RANDINT) {
			int64_t iv[2];
			lmi_rng_randint(w, c->lo, c->range, iv);
			for (int i = 0; i < 2 && bi * 2 + i < n; i++)
				store_int(d, h->dtype, bi * 2 + i, iv[i]);
			continue;
		}
		double val[4];
		lmi_rng_values(c->kind, c->f64, c->a, c->b, w, val);
		for (int i = 0; i < pb && bi * pb + i < n; i++)
			store(d, h->dtype, bi * pb + i, val[i]);
	}
	return LM_OK;
}

static const lmi_device_ops fake_mem = {
    .alloc = f_alloc,
    .free = f_free,
    .memcpy = f_memcpy,
    .copy = f_copy,
    .fill = f_fill,
    .random = f_random,
    .host_alloc = f_host_alloc,
    .host_free = f_host_free,
};

/* ---------------------------------------------------------------- the slots */

static bool supports_op(lmi_be_op op, lm_dtype dt)
{
	return cpu->supports_op(op, dt);
}

static lm_status f_unary(int op, lm_tensor *out, const lm_tensor *x, double p0, double p1)
{
	BEGIN(unary);
	return cpu->unary(op, H(out), H(x), p0, p1);
}

static lm_status f_binary(lm_binop op, lm_tensor *out, const lm_tensor *a, const lm_tensor *b)
{
	BEGIN(binary);
	return cpu->binary(op, H(out), H(a), H(b));
}

static lm_status f_where(lm_tensor *out, const lm_tensor *c, const lm_tensor *a, const lm_tensor *b)
{
	BEGIN(where);
	return cpu->where(H(out), H(c), H(a), H(b));
}

static lm_status f_add_scaled(lm_tensor *out, const lm_tensor *a, const lm_tensor *b, double al)
{
	BEGIN(add_scaled);
	return cpu->add_scaled(H(out), H(a), H(b), al);
}

static lm_status f_reduce_dims(lm_redop op, const lm_tensor *x, uint32_t mask, lm_tensor *out,
                               lm_tensor *idx, double p)
{
	BEGIN(reduce_dims);
	return cpu->reduce_dims(op, H(x), mask, H(out), H(idx), p);
}

static lm_status f_count_correct(const lm_tensor *logits, const lm_tensor *labels, int64_t base,
                                 int64_t *count)
{
	BEGIN(count_correct);
	return cpu->count_correct(H(logits), H(labels), base, count);
}

static lm_status f_matmul(const lm_tensor *a, const lm_tensor *b, int bnd, const int64_t *bshape,
                          lm_tensor *out)
{
	BEGIN(matmul);
	return cpu->matmul(H(a), H(b), bnd, bshape, H(out));
}

static lm_status f_matmul_batch_sum(const lm_tensor *a, const lm_tensor *b, lm_tensor *out)
{
	BEGIN(matmul_batch_sum);
	return cpu->matmul_batch_sum(H(a), H(b), H(out));
}

static lm_status f_softmax(const lm_tensor *x, lm_tensor *y, int64_t outer, int64_t R,
                           int64_t inner, bool log_softmax)
{
	BEGIN(softmax);
	return cpu->softmax(H(x), H(y), outer, R, inner, log_softmax);
}

static lm_status f_gelu(lm_tensor *out, const lm_tensor *x, const lm_tensor *g, bool tanh_approx)
{
	BEGIN(gelu);
	return cpu->gelu(H(out), H(x), H(g), tanh_approx);
}

static lm_status f_nll(const lm_tensor *logp, const lm_tensor *t, lm_tensor *out, int64_t N,
                       int64_t C, int64_t L)
{
	BEGIN(nll);
	return cpu->nll(H(logp), H(t), H(out), N, C, L);
}

static lm_status f_nll_grad(const lm_tensor *g, const lm_tensor *t, lm_tensor *gx, int64_t N,
                            int64_t C, int64_t L)
{
	BEGIN(nll_grad);
	return cpu->nll_grad(H(g), H(t), H(gx), N, C, L);
}

static lm_status f_max_pool2d(const lm_tensor *x, lm_tensor *y, lm_tensor *idx, int64_t planes,
                              int64_t H_, int64_t W, int64_t OH, int64_t OW, const int64_t *k,
                              const int64_t *stride, const int64_t *pad)
{
	BEGIN(max_pool2d);
	return cpu->max_pool2d(H(x), H(y), H(idx), planes, H_, W, OH, OW, k, stride, pad);
}

static lm_status f_winograd_conv(const lm_tensor *x, const lm_tensor *w, const lm_tensor *b,
                                 int64_t ph, int64_t pw, lm_tensor *y)
{
	BEGIN(winograd_conv);
	return cpu->winograd_conv(H(x), H(w), H(b), ph, pw, H(y));
}

static lm_status f_winograd_conv_backward(const lm_tensor *x, const lm_tensor *w,
                                          const lm_tensor *gy, int64_t ph, int64_t pw,
                                          lm_tensor *gx, lm_tensor *gw)
{
	BEGIN(winograd_conv_backward);
	return cpu->winograd_conv_backward(H(x), H(w), H(gy), ph, pw, H(gx), H(gw));
}

static lm_status f_im2col(const lm_tensor *x, const lm_window2d *w, int64_t oh, int64_t ow,
                          lm_tensor *cols)
{
	BEGIN(im2col);
	return cpu->im2col(H(x), w, oh, ow, H(cols));
}

static lm_status f_col2im(const lm_tensor *cols, const lm_window2d *w, int64_t oh, int64_t ow,
                          lm_tensor *out)
{
	BEGIN(col2im);
	return cpu->col2im(H(cols), w, oh, ow, H(out));
}

static lm_status f_index_select(const char *fname, const lm_tensor *x, int64_t outer, int64_t size,
                                int64_t inner, const lm_tensor *idx, lm_tensor *out)
{
	BEGIN(index_select);
	return cpu->index_select(fname, H(x), outer, size, inner, H(idx), H(out));
}

static lm_status f_gather(const lm_tensor *x, int dim, const lm_tensor *idx, lm_tensor *out)
{
	BEGIN(gather);
	return cpu->gather(H(x), dim, H(idx), H(out));
}

static lm_status f_scatter_add(lm_tensor *out, int dim, const lm_tensor *idx, const lm_tensor *src)
{
	BEGIN(scatter_add);
	return cpu->scatter_add(H(out), dim, H(idx), H(src));
}

static lm_status f_one_hot(const lm_tensor *idx, int64_t classes, lm_tensor *out)
{
	BEGIN(one_hot);
	return cpu->one_hot(H(idx), classes, H(out));
}

static lm_status f_sort(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
                        bool descending, lm_tensor *values, lm_tensor *indices)
{
	BEGIN(sort);
	return cpu->sort(H(x), outer, R, inner, k, descending, H(values), H(indices));
}

static lm_status f_cumsum(const lm_tensor *x, int64_t outer, int64_t R, int64_t inner,
                          lm_tensor *out)
{
	BEGIN(cumsum);
	return cpu->cumsum(H(x), outer, R, inner, H(out));
}

static lm_status f_triangle(const lm_tensor *x, int64_t B, int64_t M, int64_t N, int64_t k,
                            bool upper, lm_tensor *out)
{
	BEGIN(triangle);
	return cpu->triangle(H(x), B, M, N, k, upper, H(out));
}

static lm_status f_repeat_fill(lm_tensor *out, const int64_t *xshape, const int64_t *reps)
{
	BEGIN(repeat_fill);
	return cpu->repeat_fill(H(out), xshape, reps);
}

static lm_status f_sgd_step(lm_tensor *p, const lm_tensor *g, lm_tensor *buf, const lm_sgd_opts *o,
                            bool first)
{
	BEGIN(sgd_step);
	return cpu->sgd_step(H(p), H(g), H(buf), o, first);
}

static lm_status f_adam_step(lm_tensor *p, const lm_tensor *g, lm_tensor *m, lm_tensor *v,
                             lm_tensor *vmax, const lm_adam_opts *o, double step_size,
                             double bc2_sqrt)
{
	BEGIN(adam_step);
	return cpu->adam_step(H(p), H(g), H(m), H(v), H(vmax), o, step_size, bc2_sqrt);
}

static lm_status f_rmsprop_step(lm_tensor *p, const lm_tensor *g, lm_tensor *sq, lm_tensor *buf,
                                lm_tensor *gavg, const lm_rmsprop_opts *o)
{
	BEGIN(rmsprop_step);
	return cpu->rmsprop_step(H(p), H(g), H(sq), H(buf), H(gavg), o);
}

static lm_status f_crop_batch(const lm_tensor *x, const lm_tensor *offsets, int64_t pad,
                              lm_tensor *out)
{
	BEGIN(crop_batch);
	return cpu->crop_batch(H(x), H(offsets), pad, H(out));
}

static lm_status f_flip_batch(const lm_tensor *x, const lm_tensor *mask, lm_tensor *out)
{
	BEGIN(flip_batch);
	return cpu->flip_batch(H(x), H(mask), H(out));
}

const lmi_backend fake_device_backend = {
    .version = LMI_BACKEND_VERSION,
    .name = "fake",
    .device = LM_CUDA,
    .mem = &fake_mem,
    .supports_op = supports_op,
    .unary = f_unary,
    .binary = f_binary,
    .where = f_where,
    .add_scaled = f_add_scaled,
    .reduce_dims = f_reduce_dims,
    .count_correct = f_count_correct,
    .matmul = f_matmul,
    .matmul_batch_sum = f_matmul_batch_sum,
    .softmax = f_softmax,
    .gelu = f_gelu,
    .nll = f_nll,
    .nll_grad = f_nll_grad,
    .max_pool2d = f_max_pool2d,
    .winograd_conv = f_winograd_conv,
    .winograd_conv_backward = f_winograd_conv_backward,
    .im2col = f_im2col,
    .col2im = f_col2im,
    .index_select = f_index_select,
    .gather = f_gather,
    .scatter_add = f_scatter_add,
    .one_hot = f_one_hot,
    .sort = f_sort,
    .cumsum = f_cumsum,
    .triangle = f_triangle,
    .repeat_fill = f_repeat_fill,
    .sgd_step = f_sgd_step,
    .adam_step = f_adam_step,
    .rmsprop_step = f_rmsprop_step,
    .crop_batch = f_crop_batch,
    .flip_batch = f_flip_batch,
};

void fake_device_register(void)
{
	lmi_backend_register(&fake_device_backend);
}

void fake_device_unregister(void)
{
	LM_ASSERT(st.live_bytes == 0);
	lmi_backend_unregister(LM_CUDA);
}
