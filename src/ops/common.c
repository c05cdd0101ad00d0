/*
 * common.c — helpers every op file uses: recording a result, checking arguments, dtype
 * conversion without autograd, and reducing a broadcast gradient back to an input's shape.
 */
#include "ops.h"

lm_tensor *lmi_finish(lm_tensor *out, lmi_op op, const lmi_params *p, int nin, const lm_tensor *const *in,
                      int nsave, const lm_tensor *const *save, lmi_node **node)
{
	lmi_node *n = NULL;
	if (node) *node = NULL;
	if (!out) return NULL;
	if (lmi_record(out, op, &lmi_ops[op], p, nin, in, &n)) goto fail;
	if (n)
		for (int k = 0; k < nsave; k++)
			if (save[k] && lmi_node_save(n, save[k])) goto fail;
	if (node) *node = n;
	return out;
fail:
	lm_tensor_release(out);
	return NULL;
}

/* The tensor whose device runs e. */
static const lm_tensor *exec_tensor(const lmi_exec *e)
{
	return e->ndst > 0 && e->dst[0] ? e->dst[0] : e->src[0];
}

bool lmi_supports(const lmi_exec *e)
{
	const lmi_backend *b = lmi_backend_for(exec_tensor(e)->storage->device);
	return b && b->supports_node(e);
}

lm_status lmi_refuse(const lmi_exec *e)
{
	const lm_tensor *t = exec_tensor(e);
	lm_device d = t->storage->device;
	const lmi_backend *b = lmi_backend_for(d);
	if (!b)
		return lmi_fail(LM_ERR_UNSUPPORTED, "%s: no %s device in this build", e->fname, lm_device_name(d));
	return lmi_fail(LM_ERR_UNSUPPORTED, "%s: the %s device has no %s loop for %s (shape %s)", e->fname, b->name,
	                lmi_ops[e->op].name, lm_dtype_name(e->dtype), lmi_shape_s(t));
}

/* A block-type tensor among e's: the refusal naming e's caller (no loop reads blocks; the ops
 * that take them convert first: copies, matmul, lm.quant). */
static lm_status check_blocks(const lmi_exec *e)
{
	if (lmi_ops[e->op].rule == LMI_DT_QUANT) return LM_OK; /* the quantized products take blocks */
	for (int k = 0; k < e->nsrc; k++)
		if (e->src[k] && lmi_is_block(e->src[k]->dtype)) return lmi_block_refuse(e->fname, e->src[k]->dtype);
	for (int k = 0; k < e->ndst; k++)
		if (e->dst[k] && lmi_is_block(e->dst[k]->dtype)) return lmi_block_refuse(e->fname, e->dst[k]->dtype);
	return LM_OK;
}

/*
 * e in a dtype its device has no loop for (int8, float16, bfloat16): run in the type table's
 * compute_as dtype (int32, float32) on converted copies of the inputs and outputs of e's dtype,
 * then convert the outputs back, so each result element is rounded (or wrapped) once, as
 * PyTorch's CPU loops compute float16 and bfloat16 in float32 and accumulate its sums there.
 * Inputs and outputs of other dtypes (indices, masks, int64 sums) pass as they are; an output that
 * is also an input (in place) is converted once and written back.
 */
static lm_status compute_as(const lmi_backend *b, lmi_exec *e)
{
	lm_dtype st = e->dtype, ct = lmi_dtypes[st].compute_as;
	lmi_exec w = *e;
	w.dtype = ct;
	if (ct == st || !b->supports_node(&w)) return lmi_refuse(e);
	lm_tensor *src[LMI_EXEC_SRC] = {0}, *dst[LMI_EXEC_DST] = {0};
	lm_status s = LM_OK;
	for (int k = 0; k < e->nsrc && !s; k++)
		if (e->src[k] && e->src[k]->dtype == st && !(src[k] = lmi_contiguous_copy(e->src[k], ct)))
			s = lm_last_status();
	for (int k = 0; k < e->ndst && !s; k++) {
		if (!e->dst[k] || e->dst[k]->dtype != st) continue;
		for (int j = 0; j < e->nsrc && !dst[k]; j++)
			if (e->src[j] == e->dst[k]) dst[k] = lm_tensor_retain(src[j]);
		if (!dst[k] && !(dst[k] = lmi_contiguous_copy(e->dst[k], ct))) s = lm_last_status();
	}
	for (int k = 0; k < e->nsrc; k++)
		if (src[k]) w.src[k] = src[k];
	for (int k = 0; k < e->ndst; k++)
		if (dst[k]) w.dst[k] = dst[k];
	if (!s) s = b->compute(&w);
	e->count = w.count;
	for (int k = 0; k < e->ndst && !s; k++)
		if (dst[k]) s = lmi_copy(e->dst[k], dst[k]);
	for (int k = 0; k < LMI_EXEC_SRC; k++) lm_tensor_release(src[k]);
	for (int k = 0; k < LMI_EXEC_DST; k++) lm_tensor_release(dst[k]);
	return s;
}

static lm_status compute(lmi_exec *e);

lm_status lmi_compute(lmi_exec *e)
{
	int d = lmi_capture_enter();
	lm_status s = compute(e);
	lmi_capture_leave(d);
	if (d == 0 && !s) lmi_capture_exec(e);
	return s;
}

static lm_status compute(lmi_exec *e)
{
	const lmi_backend *b = lmi_backend_for(exec_tensor(e)->storage->device);
	lm_status s = check_blocks(e);
	if (s) return s;
	if (b && !b->supports_node(e) && lmi_dtypes[e->dtype].compute_as != e->dtype) return compute_as(b, e);
	if (!b || !b->supports_node(e)) return lmi_refuse(e);
	return b->compute(e);
}

static lm_status compute_graph(lmi_exec *nodes, int n);

lm_status lmi_compute_graph(lmi_exec *nodes, int n)
{
	int d = lmi_capture_enter();
	lm_status s = compute_graph(nodes, n);
	lmi_capture_leave(d);
	for (int i = 0; d == 0 && !s && i < n; i++) lmi_capture_exec(&nodes[i]);
	return s;
}

static lm_status compute_graph(lmi_exec *nodes, int n)
{
	if (n <= 0) return LM_OK;
	lm_device d = exec_tensor(&nodes[0])->storage->device;
	const lmi_backend *b = lmi_backend_for(d);
	bool one_by_one = false; /* a node in a storage-only dtype: each through compute_as */
	for (int i = 0; i < n; i++) {
		lm_device di = exec_tensor(&nodes[i])->storage->device;
		if (di != d)
			return lmi_fail(LM_ERR_DEVICE, "%s: node %d of the graph is on %s, the first on %s", nodes[i].fname,
			                i + 1, lm_device_name(di), lm_device_name(d));
		lm_status s = check_blocks(&nodes[i]);
		if (s) return s;
		if (b && b->supports_node(&nodes[i])) continue;
		lmi_exec w = nodes[i];
		w.dtype = lmi_dtypes[w.dtype].compute_as;
		if (!b || w.dtype == nodes[i].dtype || !b->supports_node(&w)) return lmi_refuse(&nodes[i]);
		one_by_one = true;
	}
	lm_status s;
	if (one_by_one) {
		for (int i = 0; i < n; i++)
			if ((s = lmi_compute(&nodes[i]))) return s;
		return LM_OK;
	}
	if (b->graph_optimize && (s = b->graph_optimize(nodes, &n))) return s;
	if (b->compute_graph) return b->compute_graph(nodes, n);
	for (int i = 0; i < n; i++)
		if ((s = b->compute(&nodes[i]))) return s;
	return LM_OK;
}

lm_status lmi_run(const char *fname, lmi_op op, const lmi_params *p, lm_dtype dt, int nsrc,
                  const lm_tensor *const *src, int ndst, lm_tensor *const *dst)
{
	static const lmi_params none;
	lmi_exec e; /* the fields one by one: the node is built on every op call */
	e.op = op;
	e.p = p ? p : &none;
	e.fname = fname;
	e.dtype = dt;
	e.nsrc = nsrc;
	e.ndst = ndst;
	e.count = 0;
	e.fused = NULL;
	for (int k = 0; k < LMI_EXEC_SRC; k++) e.src[k] = k < nsrc ? src[k] : NULL;
	for (int k = 0; k < LMI_EXEC_DST; k++) e.dst[k] = k < ndst ? dst[k] : NULL;
	return lmi_compute(&e);
}

lm_status lmi_check_device(const char *fname, int n, const lm_tensor *const *ts)
{
	const lm_tensor *first = NULL;
	for (int i = 0; i < n; i++) {
		if (!ts[i]) continue;
		if (!first) {
			if (lmi_is_block(ts[i]->dtype)) return lmi_block_refuse(fname, ts[i]->dtype);
			first = ts[i];
			continue;
		}
		if (lmi_is_block(ts[i]->dtype)) return lmi_block_refuse(fname, ts[i]->dtype);
		if (ts[i]->storage->device != first->storage->device)
			return lmi_fail(LM_ERR_DEVICE, "%s: tensors on different devices (%s and %s)", fname,
			                lm_device_name(first->storage->device),
			                lm_device_name(ts[i]->storage->device));
	}
	if (first && !lmi_backend_for(first->storage->device))
		return lmi_fail(LM_ERR_UNSUPPORTED, "%s: no %s implementation in this build", fname,
		                lm_device_name(first->storage->device));
	return LM_OK;
}

lm_status lmi_check_arg(const char *fname, const char *arg, const lm_tensor *t)
{
	if (!t) return lmi_fail(LM_ERR_ARG, "%s: %s is NULL", fname, arg);
	return LM_OK;
}

lm_status lmi_check_float(const char *fname, const char *arg, const lm_tensor *t)
{
	if (!t) return lmi_fail(LM_ERR_ARG, "%s: %s is NULL", fname, arg);
	if (!lm_dtype_is_float(t->dtype) || lmi_is_block(t->dtype))
		return lmi_fail(LM_ERR_DTYPE, "%s: %s must be a float tensor (float32, float64, float16 or "
		                "bfloat16), got %s", fname, arg, lm_dtype_name(t->dtype));
	return LM_OK;
}

lm_status lmi_fail_as(const char *fname)
{
	char msg[512];
	const char *e = lm_last_error(), *p = e;
	while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_') p++;
	snprintf(msg, sizeof msg, "%s", (p > e && p[0] == ':' && p[1] == ' ') ? p + 2 : e);
	lm_status s = lm_last_status();
	return lmi_fail(s ? s : LM_ERR_INTERNAL, "%s: %s", fname, msg);
}

bool lmi_half_begin(lmi_half *h, int n, const lm_tensor **const *ts)
{
	h->n = 0;
	h->dt = (lm_dtype)-1;
	for (int k = 0; k < n; k++) {
		const lm_tensor *t = *ts[k];
		if (!t || lmi_dtypes[t->dtype].is_int || lmi_is_block(t->dtype)) continue;
		h->dt = (int)h->dt < 0 ? t->dtype : lm_promote_types(h->dt, t->dtype);
	}
	if (h->dt != LM_FLOAT16 && h->dt != LM_BFLOAT16) return false;
	for (int k = 0; k < n && h->n < LMI_HALF_MAX; k++) {
		const lm_tensor *t = *ts[k];
		if (!t || (t->dtype != LM_FLOAT16 && t->dtype != LM_BFLOAT16)) continue;
		*ts[k] = h->own[h->n++] = lm_to_dtype(t, LM_FLOAT32); /* NULL (memory): the call says so */
	}
	return true;
}

lm_tensor *lmi_half_end(lmi_half *h, lm_tensor *out)
{
	lm_tensor *r = out ? lm_to_dtype(out, h->dt) : NULL;
	lm_tensor_release(out);
	for (int k = 0; k < h->n; k++) lm_tensor_release(h->own[k]);
	return r;
}

lm_tensor *lmi_as_dtype(const lm_tensor *t, lm_dtype dt)
{
	if (t->dtype == dt) return lm_tensor_retain((lm_tensor *)t);
	return lmi_contiguous_copy(t, dt);
}

bool lmi_has_internal_overlap(const lm_tensor *t)
{
	for (int i = 0; i < t->ndim; i++)
		if (t->stride[i] == 0 && t->shape[i] > 1) return true;
	return false;
}

lm_tensor *lmi_sum_to(const lm_tensor *g, int ndim, const int64_t *shape)
{
	bool same = g->ndim == ndim;
	for (int i = 0; same && i < ndim; i++) same = g->shape[i] == shape[i];
	if (same) return lm_tensor_retain((lm_tensor *)g);
	lm_tensor *t = lm_tensor_retain((lm_tensor *)g);
	while (t && t->ndim > ndim) { /* leading dims that broadcasting added */
		lm_tensor *s = lm_sum(t, 0, false);
		lm_tensor_release(t);
		t = s;
	}
	for (int i = 0; t && i < ndim; i++) {
		if (shape[i] != 1 || t->shape[i] == 1) continue;
		lm_tensor *s = lm_sum(t, i, true);
		lm_tensor_release(t);
		t = s;
	}
	return t;
}
