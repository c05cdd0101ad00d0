/*
 * engine.c — lm_backward: runs the backward rules of a graph in reverse topological order.
 *
 * Design: two passes, both with explicit work lists on the heap (no recursion: a chain of 100,000
 * ops is a loop, not a stack). Pass 1 walks from the root, collects every node once and counts in
 * node->pending how many consumers will send it a gradient; it also refuses freed graphs and saved
 * tensors changed in place before any gradient moves. Pass 2 (Kahn's algorithm) runs a node's rule
 * once all its consumers have added into node->grad, with grad mode off. Leaf gradients collect in
 * a small hash map and are added into .grad only when every rule has succeeded.
 * Read next: graph.h (nodes, edges), the rules in ../ops/, gradcheck.c.
 */
#include <stdatomic.h>
#include <string.h>

#include "../ops/ops.h"

/* ---------------------------------------------------------------- a growable array of nodes */

typedef struct nodevec {
	lmi_node **v;
	size_t n, cap;
} nodevec;

static lm_status nodevec_push(nodevec *a, lmi_node *x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		lmi_node **v = lm_alloc(cap * sizeof *v);
		if (!v) return lm_last_status();
		if (a->n) memcpy(v, a->v, a->n * sizeof *v);
		lm_free(a->v, a->cap * sizeof *v);
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return LM_OK;
}

static void nodevec_free(nodevec *a)
{
	lm_free(a->v, a->cap * sizeof *a->v);
	*a = (nodevec){0};
}

/* ---------------------------------------------------------------- leaf gradients */
/* Open addressing keyed by the leaf's address; capacity a power of two above twice the count. */

typedef struct leafslot {
	lm_tensor *leaf; /* borrowed: the edges that lead to it hold it */
	lm_tensor *grad; /* +1 */
	int64_t pending; /* edges into it not run yet, counted only with a ready hook (reported at 0) */
} leafslot;

typedef struct leafmap {
	leafslot *slot;
	size_t cap;
} leafmap;

static lm_status leafmap_init(leafmap *m, size_t nleaf_edges)
{
	size_t cap = 16;
	while (cap < 2 * nleaf_edges + 2) cap *= 2;
	m->slot = lm_alloc(cap * sizeof *m->slot);
	if (!m->slot) return lm_last_status();
	memset(m->slot, 0, cap * sizeof *m->slot);
	m->cap = cap;
	return LM_OK;
}

static leafslot *leafmap_find(leafmap *m, const lm_tensor *leaf)
{
	size_t h = (size_t)(((uintptr_t)leaf >> 4) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->slot[h].leaf && m->slot[h].leaf != leaf) h = (h + 1) & (m->cap - 1);
	return &m->slot[h];
}

static void leafmap_free(leafmap *m)
{
	for (size_t i = 0; i < m->cap; i++) lm_tensor_release(m->slot[i].grad);
	lm_free(m->slot, m->cap * sizeof *m->slot);
	*m = (leafmap){0};
}

/* ---------------------------------------------------------------- hooks (lm_set_backward_hooks) */

static _Thread_local lm_leaf_ready_fn ready_hook;
static _Thread_local lm_backward_done_fn done_hook;
static _Thread_local void *hook_ud;

void lm_set_backward_hooks(lm_leaf_ready_fn ready, lm_backward_done_fn done, void *ud)
{
	ready_hook = ready;
	done_hook = done;
	hook_ud = ud;
}

void lm_tensor_watch_grad(lm_tensor *t, bool on)
{
	if (t) t->watched = on;
}

/* ---------------------------------------------------------------- accumulation */

/* Whether nobody but the holder of this one reference can see t's memory, so adding into it in
 * place is invisible to everyone else. */
static bool exclusive(const lm_tensor *t)
{
	if (t->refcount != 1 || t->storage->refcount != 1) return false;
	for (int i = 0; i < t->ndim; i++)
		if (t->stride[i] == 0 && t->shape[i] > 1) return false;
	return true;
}

/* *acc += g, taking over the reference to g. In place when *acc is exclusive, else a new sum. */
static lm_status accumulate(lm_tensor **acc, lm_tensor *g)
{
	if (!*acc) {
		*acc = g;
		return LM_OK;
	}
	lm_status s = LM_OK;
	if (exclusive(*acc)) {
		s = lm_binary_(LM_ADD, *acc, g);
	} else {
		lm_tensor *sum = lm_add(*acc, g);
		if (sum) {
			lm_tensor_release(*acc);
			*acc = sum;
		} else {
			s = lm_last_status();
		}
	}
	lm_tensor_release(g);
	return s;
}

/* Adds g (the leaf's shape and dtype) into leaf->grad: the gradient itself becomes .grad when no
 * one else can see it, else a contiguous copy; an existing .grad is added into in place (like
 * PyTorch, so a handle on .grad sees the sum) unless it has broadcast dims, then replaced. */
static lm_status add_to_leaf(lm_tensor *leaf, lm_tensor *g)
{
	if (!leaf->grad) {
		if (exclusive(g) && lm_tensor_is_contiguous(g)) {
			leaf->grad = lm_tensor_retain(g);
			return LM_OK;
		}
		leaf->grad = lmi_contiguous_copy(g, leaf->dtype);
		return leaf->grad ? LM_OK : lm_last_status();
	}
	if (lmi_has_internal_overlap(leaf->grad)) {
		lm_tensor *sum = lm_add(leaf->grad, g);
		if (!sum) return lm_last_status();
		lm_tensor_release(leaf->grad);
		leaf->grad = sum;
		return LM_OK;
	}
	return lm_binary_(LM_ADD, leaf->grad, g);
}

/* ---------------------------------------------------------------- checks */

static bool same_shape(int na, const int64_t *a, int nb, const int64_t *b)
{
	if (na != nb) return false;
	for (int i = 0; i < na; i++)
		if (a[i] != b[i]) return false;
	return true;
}

/* A node that a backward may enter: not freed, saved tensors unchanged. */
static lm_status check_node(lmi_node *n)
{
	if (n->freed)
		return lmi_fail(LM_ERR_STATE,
		                "backward: %s: the graph was freed by an earlier backward; pass "
		                "retain_graph=true to the first backward to run it twice", n->info->grad_name);
	for (int k = 0; k < n->nsaved; k++) {
		const lm_tensor *t;
		lm_status s = lmi_node_saved(n, k, &t);
		if (s) return s;
	}
	return LM_OK;
}

static lm_status check_root(const lm_tensor *root, const lm_tensor *grad)
{
	if (!root) return lmi_fail(LM_ERR_ARG, "backward: the root tensor is NULL");
	if (!root->requires_grad)
		return lmi_fail(LM_ERR_STATE,
		                "backward: the tensor of shape %s does not require grad (no input of the "
		                "ops that made it requires grad, or it was made under no_grad)",
		                lmi_shape_s(root));
	if (!grad) {
		if (lm_tensor_numel(root) != 1)
			return lmi_fail(LM_ERR_SHAPE,
			                "backward: a gradient can be created implicitly only for one-element "
			                "tensors; the root has shape %s (%lld elements): pass grad",
			                lmi_shape_s(root), (long long)lm_tensor_numel(root));
		return LM_OK;
	}
	if (!same_shape(grad->ndim, grad->shape, root->ndim, root->shape))
		return lmi_fail(LM_ERR_SHAPE, "backward: grad has shape %s, the root has shape %s",
		                lmi_shape_s(grad), lmi_shape_s(root));
	if (grad->dtype != root->dtype)
		return lmi_fail(LM_ERR_DTYPE, "backward: grad has dtype %s, the root has dtype %s",
		                lm_dtype_name(grad->dtype), lm_dtype_name(root->dtype));
	if (grad->storage->device != root->storage->device)
		return lmi_fail(LM_ERR_DEVICE, "backward: grad is on %s, the root on %s",
		                lm_device_name(grad->storage->device),
		                lm_device_name(root->storage->device));
	return LM_OK;
}

/* ---------------------------------------------------------------- the two passes */

static atomic_uint_fast64_t visit_stamp;

/* Pass 1: every node reachable from root once (in *all), with pending = its consumer count.
 * *nleaf counts the edges to leaves. */
static lm_status collect(lmi_node *root, nodevec *all, size_t *nleaf)
{
	uint64_t stamp = atomic_fetch_add(&visit_stamp, 1) + 1;
	nodevec work = {0};
	lm_status s;
	root->visit = stamp;
	root->pending = 0;
	if ((s = nodevec_push(all, root)) || (s = nodevec_push(&work, root))) goto out;
	while (work.n) {
		lmi_node *x = work.v[--work.n];
		if ((s = check_node(x))) goto out;
		for (int k = 0; k < x->nin; k++) {
			lmi_edge *e = &x->in[k];
			if (e->leaf) ++*nleaf;
			lmi_node *c = e->node;
			if (!c) continue;
			if (c->visit != stamp) {
				c->visit = stamp;
				c->pending = 0;
				if ((s = nodevec_push(all, c)) || (s = nodevec_push(&work, c))) goto out;
			}
			c->pending++;
		}
	}
out:
	nodevec_free(&work);
	return s;
}

/* A narrow or select node whose input's gradient already exists, exclusive and of the gradient's
 * dtype: adds g into that gradient's window in place (a per-step xs[t] of a sequence then costs a
 * step's bytes, not zeros of the whole sequence and their sum). Returns whether it did; *s is the
 * status of the add. */
static bool add_into_window(lmi_node *x, const lm_tensor *g, lm_tensor *acc, lm_status *s)
{
	if (!acc || !g || acc->dtype != g->dtype || !exclusive(acc)) return false;
	lm_tensor *w = lmi_window_of(x, acc);
	if (!w) return false;
	*s = lm_binary_(LM_ADD, w, g);
	lm_tensor_release(w);
	return true;
}

/* Runs x's rule on x->grad (grad mode is off) and hands each input's gradient on. Consumes
 * x->grad; frees x's saved tensors unless retain_graph. */
static lm_status run_node(lmi_node *x, nodevec *ready, leafmap *leaves, bool retain_graph)
{
	lm_tensor *gin_small[8], **gin = gin_small;
	lm_status s = LM_OK;
	if (x->nin > 8) {
		gin = lm_alloc((size_t)x->nin * sizeof *gin);
		if (!gin) return lm_last_status();
	}
	memset(gin, 0, (size_t)x->nin * sizeof *gin);
	lm_tensor *g = x->grad;
	x->grad = NULL;
	bool done = false;
	if (g && (x->op == LMI_OP_NARROW || x->op == LMI_OP_SELECT) && x->in[0].needs_grad) {
		lmi_edge *e = &x->in[0];
		if (e->node) {
			done = add_into_window(x, g, e->node->grad, &s);
		} else if (e->leaf) {
			leafslot *ls = leafmap_find(leaves, e->leaf);
			if (ls->leaf == e->leaf) done = add_into_window(x, g, ls->grad, &s);
		}
	}
	if (g && !done) s = x->info->backward(x, g, gin); /* no gradient reached x: nothing to pass on */
	lm_tensor_release(g);
	if (!s && !retain_graph) {
		for (int k = 0; k < x->nsaved; k++) {
			lm_tensor_release(x->saved[k]);
			x->saved[k] = NULL;
		}
		lmi_custom_drop(x);
		x->freed = true;
	}
	for (int k = 0; k < x->nin; k++) {
		lmi_edge *e = &x->in[k];
		lm_tensor *gk = gin[k];
		gin[k] = NULL;
		if (!s && gk && e->needs_grad) {
			if (!same_shape(gk->ndim, gk->shape, e->ndim, e->shape)) {
				s = lmi_fail(LM_ERR_INTERNAL,
				             "backward: %s gave a gradient of shape %s for its input %d of shape %s",
				             x->info->grad_name, lmi_shape_s(gk), k, lmi_dims_s(e->ndim, e->shape));
			} else if (gk->dtype != e->dtype) {
				lm_tensor *c = lmi_contiguous_copy(gk, e->dtype);
				lm_tensor_release(gk);
				gk = c;
				if (!c) s = lm_last_status();
			}
			if (!s && e->node) {
				s = accumulate(&e->node->grad, gk);
				gk = NULL;
			} else if (!s && e->leaf) {
				leafslot *ls = leafmap_find(leaves, e->leaf);
				ls->leaf = e->leaf;
				s = accumulate(&ls->grad, gk);
				gk = NULL;
			}
		}
		lm_tensor_release(gk);
		if (ready_hook && e->leaf && e->needs_grad) { /* its last edge: a watched leaf's gradient is complete */
			leafslot *ls = leafmap_find(leaves, e->leaf);
			if (ls->leaf == e->leaf && --ls->pending == 0 && !s && ready_hook && e->leaf->watched && ls->grad)
				s = ready_hook(hook_ud, e->leaf, ls->grad);
		}
		/* the consumer is done with this input, with or without a gradient for it */
		if (e->node && --e->node->pending == 0 && !s) s = nodevec_push(ready, e->node);
	}
	if (gin != gin_small) lm_free(gin, (size_t)x->nin * sizeof *gin);
	return s;
}

lm_status lm_backward(lm_tensor *root, const lm_tensor *grad, bool retain_graph)
{
	lm_status s = check_root(root, grad);
	if (s) return s;
	/* rules and sums run without recording, even when the given grad requires grad */
	bool was = lm_set_grad_enabled(false);
	lm_tensor *g0 = grad ? lm_tensor_retain((lm_tensor *)grad)
	                     : lmi_full_on("backward", root->storage->device, root->ndim, root->shape,
	                                   root->dtype, 1);
	if (!g0) {
		lm_set_grad_enabled(was);
		return lm_last_status();
	}
	if (!root->grad_fn) { /* the root is itself a leaf */
		s = add_to_leaf(root, g0);
		lm_tensor_release(g0);
		lm_set_grad_enabled(was);
		return s;
	}
	lmi_node *top = root->grad_fn;
	lmi_node_retain(top);
	nodevec all = {0}, ready = {0};
	leafmap leaves = {0};
	size_t nleaf = 0;
	if ((s = collect(top, &all, &nleaf)) || (s = leafmap_init(&leaves, nleaf))) goto out;
	for (size_t i = 0; ready_hook && i < all.n; i++) /* the edges into each leaf: report it when complete */
		for (int k = 0; k < all.v[i]->nin; k++) {
			lmi_edge *e = &all.v[i]->in[k];
			if (!e->leaf || !e->needs_grad) continue;
			leafslot *ls = leafmap_find(&leaves, e->leaf);
			ls->leaf = e->leaf;
			ls->pending++;
		}
	top->grad = g0;
	g0 = NULL;
	if ((s = nodevec_push(&ready, top))) goto out;
	while (ready.n && !s) {
		if (lmi_check_interrupt()) {
			s = lmi_fail(LM_ERR_INTERRUPTED, "backward: interrupted");
			break;
		}
		s = run_node(ready.v[--ready.n], &ready, &leaves, retain_graph);
	}
	/* every rule succeeded: now the leaves */
	for (size_t i = 0; !s && i < leaves.cap; i++)
		if (leaves.slot[i].leaf && leaves.slot[i].grad)
			s = add_to_leaf(leaves.slot[i].leaf, leaves.slot[i].grad);
	if (!s && done_hook) s = done_hook(hook_ud);
out:
	for (size_t i = 0; i < all.n; i++) { /* scratch left by a failure */
		lm_tensor_release(all.v[i]->grad);
		all.v[i]->grad = NULL;
		all.v[i]->pending = 0;
	}
	lm_tensor_release(g0);
	leafmap_free(&leaves);
	nodevec_free(&ready);
	nodevec_free(&all);
	lmi_node_release(top);
	lm_set_grad_enabled(was);
	return s;
}
