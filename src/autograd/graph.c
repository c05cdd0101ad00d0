/*
 * graph.c — recording nodes, saving tensors, and releasing the graph (grad mode itself is the
 * core's: core/grad_mode.c).
 *
 * Release is iterative (an explicit work list), so dropping the output of a 100,000-op chain does
 * not recurse 100,000 deep. Read next: engine.c.
 */
#include <string.h>

#include "graph.h"
#include "lumen/autograd.h"

_Thread_local lmi_record_hook_fn lmi_record_hook; /* see graph.h; set by inspect.c */
_Thread_local void *lmi_record_hook_ctx;

void lmi_node_retain(lmi_node *n) { n->refcount++; }

void lmi_custom_drop(lmi_node *n)
{
	lmi_custom *c = n->custom;
	if (!c || c->released) return;
	c->released = true;
	if (c->release) c->release(c->ud);
	c->ud = NULL;
}

static void free_saved(lmi_node *n)
{
	for (int k = 0; k < n->nsaved; k++) {
		lm_tensor_release(n->saved[k]);
		n->saved[k] = NULL;
	}
}

void lmi_node_release(lmi_node *n)
{
	/* Work list of nodes whose count reached zero; grows on the heap, never on the stack. */
	lmi_node *small[64], **stack = small;
	size_t cap = 64, top = 0;
	if (!n || --n->refcount > 0) return;
	stack[top++] = n;
	while (top) {
		lmi_node *x = stack[--top];
		for (int k = 0; k < x->nin; k++) {
			lm_tensor_release(x->in[k].leaf);
			lmi_node *c = x->in[k].node;
			if (!c || --c->refcount > 0) continue;
			if (top == cap) {
				lmi_node **bigger = lm_alloc(2 * cap * sizeof *bigger);
				LM_ASSERT(bigger); /* cannot report failure from a release */
				memcpy(bigger, stack, top * sizeof *stack);
				if (stack != small) lm_free(stack, cap * sizeof *stack);
				stack = bigger;
				cap *= 2;
			}
			stack[top++] = c;
		}
		free_saved(x);
		lmi_custom_drop(x);
		if (x->custom) lm_free(x->custom, sizeof *x->custom);
		lm_tensor_release(x->grad);
		lm_free(x->in, (size_t)x->nin * sizeof *x->in);
		lm_free(x, sizeof *x);
	}
	if (stack != small) lm_free(stack, cap * sizeof *stack);
}

lm_status lmi_record(lm_tensor *out, lmi_op op, const lmi_op_info *info, const lmi_params *p, int nin,
                     const lm_tensor *const *in, lmi_node **node)
{
	*node = NULL;
	if (!lmi_any_requires_grad(nin, in)) return LM_OK;
	if (!lm_dtype_is_float(out->dtype)) return LM_OK; /* integer results carry no gradient */
	lmi_node *n = lm_alloc(sizeof *n);
	if (!n) return lm_last_status();
	memset(n, 0, sizeof *n);
	n->in = lm_alloc((size_t)nin * sizeof *n->in);
	if (!n->in) {
		lm_free(n, sizeof *n);
		return lm_last_status();
	}
	memset(n->in, 0, (size_t)nin * sizeof *n->in);
	n->refcount = 1;
	n->op = op;
	n->info = info;
	if (p) n->p = *p;
	n->nin = nin;
	for (int k = 0; k < nin; k++) {
		const lm_tensor *x = in[k];
		lmi_edge *e = &n->in[k];
		if (!x) continue;
		e->dtype = x->dtype;
		e->ndim = x->ndim;
		memcpy(e->shape, x->shape, sizeof e->shape);
		if (!x->requires_grad) continue;
		e->needs_grad = true;
		if (x->grad_fn) {
			e->node = x->grad_fn;
			lmi_node_retain(e->node);
		} else {
			e->leaf = lm_tensor_retain((lm_tensor *)x);
		}
	}
	n->out_ndim = out->ndim;
	memcpy(n->out_shape, out->shape, sizeof n->out_shape);
	n->out_dtype = out->dtype;
	if (out->grad_fn) lmi_node_release(out->grad_fn);
	out->grad_fn = n;
	out->requires_grad = true;
	*node = n;
	if (lmi_record_hook) lmi_record_hook(lmi_record_hook_ctx, out, n);
	return LM_OK;
}

lm_status lmi_node_save(lmi_node *n, const lm_tensor *t)
{
	if (n->nsaved >= LMI_NODE_MAX_SAVED)
		return lmi_fail(LM_ERR_INTERNAL, "%s: more than %d saved tensors", n->info->grad_name,
		                LMI_NODE_MAX_SAVED);
	lm_tensor *a = lmi_tensor_wrap(t->storage, t->dtype, t->ndim, t->shape, t->stride, t->offset);
	if (!a) return lm_last_status();
	n->saved_version[n->nsaved] = t->storage->version;
	n->saved[n->nsaved++] = a;
	return LM_OK;
}

lm_status lmi_node_saved(lmi_node *n, int k, const lm_tensor **out)
{
	if (n->freed || k >= n->nsaved || !n->saved[k])
		return lmi_fail(LM_ERR_STATE,
		                "backward: %s: the saved tensors were freed by an earlier backward; call "
		                "backward with retain_graph to run it twice", n->info->grad_name);
	if (n->saved[k]->storage->version != n->saved_version[k])
		return lmi_fail(LM_ERR_STATE,
		                "backward: %s: a tensor of shape %s saved for the gradient was modified "
		                "in place (version %llu, saved at %llu)", n->info->grad_name,
		                lmi_shape_s(n->saved[k]), (unsigned long long)n->saved[k]->storage->version,
		                (unsigned long long)n->saved_version[k]);
	*out = n->saved[k];
	return LM_OK;
}

/* ---------------------------------------------------------------- tensor fields */

lm_status lm_tensor_requires_grad_(lm_tensor *t, bool flag)
{
	if (!t) return lmi_fail(LM_ERR_ARG, "requires_grad_: tensor is NULL");
	if (flag && !lm_dtype_is_float(t->dtype))
		return lmi_fail(LM_ERR_DTYPE,
		                "requires_grad_: only float tensors can require grad, got %s",
		                lm_dtype_name(t->dtype));
	if (t->grad_fn) {
		if (flag) return LM_OK;
		return lmi_fail(LM_ERR_STATE,
		                "requires_grad_: a tensor made by %s is not a leaf; use detach() to get one "
		                "that does not require grad", t->grad_fn->info->grad_name);
	}
	t->requires_grad = flag;
	return LM_OK;
}

bool lm_tensor_requires_grad(const lm_tensor *t) { return t->requires_grad; }
bool lm_tensor_is_leaf(const lm_tensor *t) { return t->grad_fn == NULL; }
lm_tensor *lm_tensor_grad(const lm_tensor *t) { return t->grad; }

const char *lm_tensor_grad_fn_name(const lm_tensor *t)
{
	return t->grad_fn ? t->grad_fn->info->grad_name : NULL;
}

lm_status lm_tensor_set_grad(lm_tensor *t, lm_tensor *g)
{
	if (g) {
		bool same = g->ndim == t->ndim && g->dtype == t->dtype;
		for (int i = 0; same && i < t->ndim; i++) same = g->shape[i] == t->shape[i];
		if (!same)
			return lmi_fail(LM_ERR_SHAPE, "grad: a gradient of shape %s (%s) for a tensor of shape "
			                "%s (%s)", lmi_shape_s(g), lm_dtype_name(g->dtype), lmi_shape_s(t),
			                lm_dtype_name(t->dtype));
		/* a detached alias, never g itself: t.grad = t, or a gradient computed from t (whose
		 * graph holds t), would be a reference cycle that no release ever frees */
		g = lmi_tensor_wrap(g->storage, g->dtype, g->ndim, g->shape, g->stride, g->offset);
		if (!g) return lm_last_status();
	}
	lm_tensor_release(t->grad);
	t->grad = g;
	return LM_OK;
}
