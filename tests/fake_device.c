/*
 * fake_device.c — the fake device of fake_device.h: tagged host memory, raw copies that untag,
 * and a compute that runs the CPU's on the node with CPU views of the device's bytes: a whole
 * device in the two functions of the one device interface (backend.h), and one line to register.
 *
 * A node's tensors are turned into views (struct view: a storage header and a tensor header
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
	atomic_llong calls[LMI_OP_COUNT];
	atomic_llong fail_after;
} st = {.fail_after = -1};

fake_device_stats fake_device_get_stats(void)
{
	fake_device_stats s = {st.live_bytes, st.allocs,        st.to_device, st.to_host,
	                       st.on_device,  st.pinned_copies, st.foreign,   {0}};
	for (int i = 0; i < LMI_OP_COUNT; i++) s.calls[i] = st.calls[i];
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

/* ---------------------------------------------------------------- the device's compute */

static bool supports_node(const lmi_exec *e)
{
	return cpu->supports_node(e);
}

/* The node with its device tensors turned into CPU views of the same bytes, run by the CPU. */
static lm_status compute(const lmi_exec *e)
{
	views v_;
	v_.n = v_.ns = 0;
	st.calls[e->op]++;
	lmi_exec h = *e;
	for (int k = 0; k < e->nsrc; k++) h.src[k] = H(e->src[k]);
	for (int k = 0; k < e->ndst; k++) h.dst[k] = H(e->dst[k]);
	lm_status s = cpu->compute(&h);
	((lmi_exec *)e)->count = h.count;
	return s;
}

const lmi_backend fake_device_backend = {
    .version = LMI_BACKEND_VERSION,
    .name = "fake",
    .device = LM_CUDA,
    .mem = &fake_mem,
    .supports_node = supports_node,
    .compute = compute,
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
