/*
 * inspect.c — looking at a graph from outside (include/lumen/autograd.h "inspecting a graph"):
 * the nodes reachable from a tensor in the order backward runs them, their inputs, one node's
 * rule run on a given gradient, and a per-node check of the rules against float64 finite
 * differences; for the visualizer's graph scene and for lessons.
 *
 * Design: capture walks the graph iteratively (an explicit work list, a pointer hash map from
 * node to index), counts each node's consumers, and orders the nodes as the engine does (Kahn's
 * algorithm with a LIFO ready list, inputs pushed in order), so node i is the i-th rule a backward
 * runs. It never touches the engine's scratch fields (pending, grad, visit): a graph can be
 * inspected while another is being differentiated. The check needs no forward functions: the
 * user's function rebuilds the graph on moved inputs while lmi_record's hook keeps every op's
 * output, and each rule is compared with the differences of its own inputs and output.
 * Read next: engine.c (the order), graph.h (nodes), src/viz/scenes/graph.c.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ops/ops.h"

/* ---------------------------------------------------------------- a pointer -> index map */

typedef struct ptrmap {
	const void **key;
	int64_t *val;
	size_t cap, n;
} ptrmap;

static size_t slot_of(const ptrmap *m, const void *k)
{
	size_t h = (size_t)(((uintptr_t)k >> 4) * 0x9e3779b97f4a7c15ull) & (m->cap - 1);
	while (m->key[h] && m->key[h] != k) h = (h + 1) & (m->cap - 1);
	return h;
}

static void ptrmap_free(ptrmap *m)
{
	lm_free(m->key, m->cap * sizeof *m->key);
	lm_free(m->val, m->cap * sizeof *m->val);
	*m = (ptrmap){0};
}

static lm_status ptrmap_put(ptrmap *m, const void *k, int64_t v)
{
	if (2 * (m->n + 1) > m->cap) { /* grow: at most half full */
		ptrmap b = {0};
		b.cap = m->cap ? 2 * m->cap : 64;
		b.key = lm_alloc(b.cap * sizeof *b.key);
		b.val = lm_alloc(b.cap * sizeof *b.val);
		if (!b.key || !b.val) {
			ptrmap_free(&b);
			return lm_last_status();
		}
		memset(b.key, 0, b.cap * sizeof *b.key);
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i]) {
				size_t h = slot_of(&b, m->key[i]);
				b.key[h] = m->key[i];
				b.val[h] = m->val[i];
				b.n++;
			}
		ptrmap_free(m);
		*m = b;
	}
	size_t h = slot_of(m, k);
	if (!m->key[h]) m->n++;
	m->key[h] = k;
	m->val[h] = v;
	return LM_OK;
}

static int64_t ptrmap_get(const ptrmap *m, const void *k)
{
	if (!m->cap) return -1;
	size_t h = slot_of(m, k);
	return m->key[h] ? m->val[h] : -1;
}

/* ---------------------------------------------------------------- capture */

typedef struct opcount {
	const char *name;
	int64_t count;
} opcount;

struct lm_graph {
	lmi_node *root;     /* +1: keeps the whole graph alive */
	lmi_node **order;   /* every reachable node, in backward order */
	int64_t total, listed, cap_order;
	ptrmap index;       /* node -> its place in order */
	opcount *ops;
	int nops, cap_ops;
	int64_t depth;
};

static lm_status grow_nodes(lmi_node ***v, int64_t *cap, int64_t need)
{
	if (need <= *cap) return LM_OK;
	int64_t c = *cap ? 2 * *cap : 256;
	while (c < need) c *= 2;
	lmi_node **p = lm_alloc((size_t)c * sizeof *p);
	if (!p) return lm_last_status();
	if (*cap) memcpy(p, *v, (size_t)*cap * sizeof *p);
	lm_free(*v, (size_t)*cap * sizeof **v);
	*v = p;
	*cap = c;
	return LM_OK;
}

/* Every reachable node once (all[]), with its consumer count (pending[], by index). */
static lm_status collect(lm_graph *g, lmi_node ***all, int64_t *nall, int64_t *cap_all, int64_t **pending)
{
	lmi_node **work = NULL;
	int64_t nw = 0, cap_w = 0, cap_p = 0;
	lm_status s = ptrmap_put(&g->index, g->root, 0);
	if (!s) s = grow_nodes(all, cap_all, 1);
	if (!s) s = grow_nodes(&work, &cap_w, 1);
	if (s) goto out;
	(*all)[(*nall)++] = g->root;
	work[nw++] = g->root;
	while (nw && !s) {
		lmi_node *x = work[--nw];
		for (int k = 0; k < x->nin && !s; k++) {
			lmi_node *c = x->in[k].node;
			if (!c || ptrmap_get(&g->index, c) >= 0) continue;
			if ((s = ptrmap_put(&g->index, c, *nall)) || (s = grow_nodes(all, cap_all, *nall + 1)) ||
			    (s = grow_nodes(&work, &cap_w, nw + 1)))
				break;
			(*all)[(*nall)++] = c;
			work[nw++] = c;
		}
	}
	if (!s) {
		cap_p = *nall;
		*pending = lm_alloc((size_t)cap_p * sizeof **pending);
		if (!*pending) s = lm_last_status();
	}
	if (!s) {
		memset(*pending, 0, (size_t)cap_p * sizeof **pending);
		for (int64_t i = 0; i < *nall; i++)
			for (int k = 0; k < (*all)[i]->nin; k++)
				if ((*all)[i]->in[k].node) (*pending)[ptrmap_get(&g->index, (*all)[i]->in[k].node)]++;
	}
out:
	lm_free(work, (size_t)cap_w * sizeof *work);
	return s;
}

static lm_status count_op(lm_graph *g, const char *name)
{
	for (int i = 0; i < g->nops; i++)
		if (g->ops[i].name == name || strcmp(g->ops[i].name, name) == 0) {
			g->ops[i].count++;
			return LM_OK;
		}
	if (g->nops == g->cap_ops) {
		int c = g->cap_ops ? 2 * g->cap_ops : 16;
		opcount *p = lm_alloc((size_t)c * sizeof *p);
		if (!p) return lm_last_status();
		if (g->nops) memcpy(p, g->ops, (size_t)g->nops * sizeof *p);
		lm_free(g->ops, (size_t)g->cap_ops * sizeof *g->ops);
		g->ops = p;
		g->cap_ops = c;
	}
	g->ops[g->nops++] = (opcount){name, 1};
	return LM_OK;
}

/* Kahn's order with a LIFO ready list (the engine's), the depth (longest path from the root), and
 * the op counts; renumbers the index map to that order. */
static lm_status order_nodes(lm_graph *g, int64_t nall, int64_t *pending)
{
	lmi_node **ready = NULL;
	int64_t nr = 0, cap_r = 0, *depth = lm_alloc((size_t)nall * sizeof *depth);
	lm_status s = depth ? grow_nodes(&g->order, &g->cap_order, nall) : lm_last_status();
	if (!s) s = grow_nodes(&ready, &cap_r, nall);
	if (s) goto out;
	memset(depth, 0, (size_t)nall * sizeof *depth);
	ready[nr++] = g->root;
	while (nr && !s) {
		lmi_node *x = ready[--nr];
		int64_t xi = ptrmap_get(&g->index, x);
		g->order[g->total++] = x;
		if (depth[xi] > g->depth) g->depth = depth[xi];
		s = count_op(g, x->info->grad_name);
		for (int k = 0; k < x->nin && !s; k++) {
			lmi_node *c = x->in[k].node;
			if (!c) continue;
			int64_t ci = ptrmap_get(&g->index, c);
			if (depth[xi] + 1 > depth[ci]) depth[ci] = depth[xi] + 1;
			if (--pending[ci] == 0) ready[nr++] = c;
		}
	}
	for (int64_t i = 0; !s && i < g->total; i++) s = ptrmap_put(&g->index, g->order[i], i);
	for (int i = 1; i < g->nops; i++) /* most frequent first (insertion sort: few names) */
		for (int j = i; j > 0 && g->ops[j].count > g->ops[j - 1].count; j--) {
			opcount t = g->ops[j];
			g->ops[j] = g->ops[j - 1];
			g->ops[j - 1] = t;
		}
out:
	lm_free(ready, (size_t)cap_r * sizeof *ready);
	lm_free(depth, (size_t)nall * sizeof *depth);
	return s;
}

lm_graph *lm_graph_capture(const lm_tensor *root, int64_t max_nodes)
{
	if (!root || !root->grad_fn) {
		lmi_fail(LM_ERR_ARG, "graph: the tensor has no grad_fn (a leaf, or made without autograd)");
		return NULL;
	}
	lm_graph *g = lm_alloc(sizeof *g);
	if (!g) return NULL;
	memset(g, 0, sizeof *g);
	g->root = root->grad_fn;
	lmi_node_retain(g->root);
	lmi_node **all = NULL;
	int64_t nall = 0, cap_all = 0, *pending = NULL;
	lm_status s = collect(g, &all, &nall, &cap_all, &pending);
	if (!s) s = order_nodes(g, nall, pending);
	lm_free(all, (size_t)cap_all * sizeof *all);
	lm_free(pending, (size_t)nall * sizeof *pending);
	if (s) {
		lm_graph_free(g);
		return NULL;
	}
	g->listed = max_nodes > 0 && max_nodes < g->total ? max_nodes : g->total;
	return g;
}

void lm_graph_free(lm_graph *g)
{
	if (!g) return;
	lm_free(g->order, (size_t)g->cap_order * sizeof *g->order);
	ptrmap_free(&g->index);
	lm_free(g->ops, (size_t)g->cap_ops * sizeof *g->ops);
	lmi_node_release(g->root);
	lm_free(g, sizeof *g);
}

int64_t lm_graph_total(const lm_graph *g) { return g->total; }
int64_t lm_graph_listed(const lm_graph *g) { return g->listed; }
int64_t lm_graph_depth(const lm_graph *g) { return g->depth; }
int lm_graph_op_count(const lm_graph *g) { return g->nops; }

const char *lm_graph_op(const lm_graph *g, int j, int64_t *count)
{
	if (j < 0 || j >= g->nops) return NULL;
	if (count) *count = g->ops[j].count;
	return g->ops[j].name;
}

static const lmi_node *node_at(const lm_graph *g, int64_t i) { return i >= 0 && i < g->listed ? g->order[i] : NULL; }

/* ---------------------------------------------------------------- one node (t.grad_fn) */

lm_node *lm_tensor_grad_fn(const lm_tensor *t)
{
	if (!t || !t->grad_fn) return NULL;
	lmi_node_retain(t->grad_fn);
	return t->grad_fn;
}

lm_node *lm_node_retain(lm_node *n)
{
	if (n) lmi_node_retain(n);
	return n;
}

void lm_node_release(lm_node *n)
{
	if (n) lmi_node_release(n);
}

const char *lm_node_name(const lm_node *n) { return n->custom ? n->custom->name : n->info->grad_name; }
const char *lm_node_op(const lm_node *n) { return n->info->name; }
int lm_node_ninputs(const lm_node *n) { return n->nin; }

lm_node *lm_node_input(const lm_node *n, int k, const lm_tensor **leaf)
{
	*leaf = NULL;
	if (k < 0 || k >= n->nin) return NULL;
	const lmi_edge *e = &n->in[k];
	if (e->node) {
		lmi_node_retain(e->node);
		return e->node;
	}
	*leaf = e->leaf;
	return NULL;
}

/* The parameters a user gave (a loop-only field, LMI_PK_LOOP, is the op's business). */
int lm_node_nparams(const lm_node *n) { return lmi_param_count(n->info); }

lm_status lm_node_param(const lm_node *n, int j, lm_param *out)
{
	int nv = lmi_param_count(n->info);
	if (j < 0 || j >= nv) return lmi_fail(LM_ERR_INDEX, "node %s: parameter %d of %d", n->info->grad_name, j + 1, nv);
	lmi_param_read(n->info, &n->p, j, out);
	return LM_OK;
}

const char *lm_graph_node_name(const lm_graph *g, int64_t i)
{
	const lmi_node *n = node_at(g, i);
	return n ? n->info->grad_name : NULL;
}

void lm_graph_node_output(const lm_graph *g, int64_t i, lm_dtype *dtype, int *ndim, int64_t *shape)
{
	const lmi_node *n = node_at(g, i);
	if (!n) return;
	if (dtype) *dtype = n->out_dtype;
	if (ndim) *ndim = n->out_ndim;
	if (shape) memcpy(shape, n->out_shape, (size_t)n->out_ndim * sizeof *shape);
}

int lm_graph_node_ninputs(const lm_graph *g, int64_t i)
{
	const lmi_node *n = node_at(g, i);
	return n ? n->nin : 0;
}

bool lm_graph_node_freed(const lm_graph *g, int64_t i)
{
	const lmi_node *n = node_at(g, i);
	return n && n->freed;
}

lm_status lm_graph_node_input(const lm_graph *g, int64_t i, int k, lm_graph_input *out)
{
	const lmi_node *n = node_at(g, i);
	if (!n || k < 0 || k >= n->nin)
		return lmi_fail(LM_ERR_INDEX, "graph: node %lld input %d does not exist", (long long)i, k);
	const lmi_edge *e = &n->in[k];
	memset(out, 0, sizeof *out);
	out->node = -1;
	out->dtype = e->dtype;
	out->ndim = e->ndim;
	memcpy(out->shape, e->shape, sizeof out->shape);
	if (e->node) {
		out->kind = LM_GRAPH_NODE;
		out->node = ptrmap_get(&g->index, e->node);
	} else if (e->leaf) {
		out->kind = LM_GRAPH_LEAF;
		out->leaf = e->leaf;
	} else {
		out->kind = LM_GRAPH_CONST;
	}
	return LM_OK;
}

/* ---------------------------------------------------------------- one rule */

lm_status lm_graph_node_backward(const lm_graph *g, int64_t i, const lm_tensor *gout, lm_tensor **gin)
{
	lmi_node *n = i >= 0 && i < g->listed ? g->order[i] : NULL;
	if (!n) return lmi_fail(LM_ERR_INDEX, "graph: node %lld is not listed (0..%lld)", (long long)i, (long long)g->listed - 1);
	bool same = gout && gout->ndim == n->out_ndim && gout->dtype == n->out_dtype;
	for (int d = 0; same && d < n->out_ndim; d++) same = gout->shape[d] == n->out_shape[d];
	if (!same)
		return lmi_fail(LM_ERR_SHAPE, "graph: %s needs a gradient of shape %s (%s)", n->info->grad_name,
		                lmi_dims_s(n->out_ndim, n->out_shape), lm_dtype_name(n->out_dtype));
	if (n->freed)
		return lmi_fail(LM_ERR_STATE, "graph: %s: its saved tensors were freed by a backward (call backward with "
		                "retain_graph to look at it afterwards)", n->info->grad_name);
	for (int k = 0; k < n->nin; k++) gin[k] = NULL;
	bool was = lm_set_grad_enabled(false);
	lm_status s = n->info->backward(n, gout, gin);
	for (int k = 0; !s && k < n->nin; k++) {
		if (!gin[k] || !n->in[k].needs_grad) {
			lm_tensor_release(gin[k]);
			gin[k] = NULL;
		} else if (gin[k]->dtype != n->in[k].dtype) { /* as the engine hands it on */
			lm_tensor *c = lmi_contiguous_copy(gin[k], n->in[k].dtype);
			lm_tensor_release(gin[k]);
			gin[k] = c;
			if (!c) s = lm_last_status();
		}
	}
	lm_set_grad_enabled(was);
	if (s)
		for (int k = 0; k < n->nin; k++) {
			lm_tensor_release(gin[k]);
			gin[k] = NULL;
		}
	return s;
}

int64_t lm_tensor_storage_numel(const lm_tensor *t)
{
	size_t e = lmi_elem_size(t->dtype);
	return e ? (int64_t)(t->storage->nbytes / e) : 0;
}

/* ---------------------------------------------------------------- the check */

/* The outputs of the ops a run of fn makes, by node. */
typedef struct recorder {
	ptrmap at;          /* node -> index in out[] */
	lm_tensor **out;    /* detached aliases (+1) */
	int64_t n, cap;
	lm_status failed;
} recorder;

static void record_output(void *ctx, const lm_tensor *out, lmi_node *n)
{
	recorder *r = ctx;
	if (r->failed) return;
	if (r->n == r->cap) {
		int64_t c = r->cap ? 2 * r->cap : 256;
		lm_tensor **p = lm_alloc((size_t)c * sizeof *p);
		if (!p) {
			r->failed = lm_last_status();
			return;
		}
		if (r->n) memcpy(p, r->out, (size_t)r->n * sizeof *p);
		lm_free(r->out, (size_t)r->cap * sizeof *r->out);
		r->out = p;
		r->cap = c;
	}
	lm_tensor *a = lmi_tensor_wrap(out->storage, out->dtype, out->ndim, out->shape, out->stride, out->offset);
	if (!a || (r->failed = ptrmap_put(&r->at, n, r->n))) {
		lm_tensor_release(a);
		if (!r->failed) r->failed = lm_last_status();
		return;
	}
	r->out[r->n++] = a;
}

static void recorder_free(recorder *r)
{
	for (int64_t i = 0; i < r->n; i++) lm_tensor_release(r->out[i]);
	lm_free(r->out, (size_t)r->cap * sizeof *r->out);
	ptrmap_free(&r->at);
	memset(r, 0, sizeof *r);
}

/* Fixed random values in +-[0.5, 1.5] (splitmix64 from seed). */
static lm_tensor *random_like(int ndim, const int64_t *shape, uint64_t seed)
{
	lm_tensor *t = lm_empty(ndim, shape, LM_FLOAT64);
	if (!t) return NULL;
	double *p = (double *)lmi_data(t);
	for (int64_t i = 0, n = lm_tensor_numel(t); i < n; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		p[i] = (z & 1 ? -1 : 1) * (0.5 + (double)(z >> 11) * 0x1.0p-53);
	}
	return t;
}

static double dot(const lm_tensor *a, const lm_tensor *b)
{
	lm_tensor *p = lm_mul(a, b), *s = p ? lm_sum(p, LM_DIM_ALL, false) : NULL;
	double v = NAN;
	if (s) lm_tensor_item(s, &v);
	lm_tensor_release(p);
	lm_tensor_release(s);
	return v;
}

/* One run of fn on copies of the inputs moved by scale * eps * v, recording every op's output;
 * *root (+1) is its result, *copies its inputs (+1 each), *gr its graph. */
typedef struct run {
	recorder rec;
	lm_tensor *root, *copies[LM_MAX_DIMS * 4];
	lm_graph *g;
} run;

#define MAX_INPUTS (LM_MAX_DIMS * 4)

static lm_status one_run(run *r, lm_gradcheck_fn fn, void *ctx, int n, lm_tensor *const *inputs,
                         lm_tensor *const *v, double step)
{
	memset(r, 0, sizeof *r);
	lm_status s = LM_OK;
	bool was = lm_set_grad_enabled(false);
	for (int j = 0; j < n && !s; j++) {
		if (!inputs[j]) continue;
		lm_tensor *moved = lm_clone(inputs[j]);
		if (moved && v[j] && step != 0) {
			lm_tensor *d = lm_binary_scalar(LM_MUL, v[j], step);
			lm_tensor *sum = d ? lm_add(moved, d) : NULL;
			lm_tensor_release(d);
			lm_tensor_release(moved);
			moved = sum;
		}
		if (!moved || (lm_tensor_requires_grad(inputs[j]) && (s = lm_tensor_requires_grad_(moved, true)))) {
			lm_tensor_release(moved);
			s = s ? s : lm_last_status();
			break;
		}
		r->copies[j] = moved;
	}
	lm_set_grad_enabled(true);
	if (!s) {
		lmi_record_hook = record_output;
		lmi_record_hook_ctx = &r->rec;
		r->root = fn(ctx, n, r->copies);
		lmi_record_hook = NULL;
		lmi_record_hook_ctx = NULL;
		if (!r->root) s = lm_last_status() ? lm_last_status() : LM_ERR_ARG;
		else if (r->rec.failed) s = r->rec.failed;
		else if (!(r->g = lm_graph_capture(r->root, 0))) s = lm_last_status();
	}
	lm_set_grad_enabled(was);
	return s;
}

static void run_free(run *r, int n)
{
	lm_graph_free(r->g);
	lm_tensor_release(r->root);
	for (int j = 0; j < n; j++) lm_tensor_release(r->copies[j]);
	recorder_free(&r->rec);
}

/* The output node i of run r made (borrowed), or NULL. */
static const lm_tensor *output_of(const run *r, int64_t i)
{
	int64_t k = i < r->g->total ? ptrmap_get(&r->rec.at, r->g->order[i]) : -1;
	return k >= 0 ? r->rec.out[k] : NULL;
}

/* d = (y+ - y-) / 2 eps for node i (+1), or NULL. */
static lm_tensor *difference(const run *p, const run *m, int64_t i, double eps)
{
	const lm_tensor *a = output_of(p, i), *b = output_of(m, i);
	if (!a || !b || a->dtype != LM_FLOAT64 || b->dtype != LM_FLOAT64) return NULL;
	lm_tensor *d = lm_sub(a, b), *q = d ? lm_binary_scalar(LM_MUL, d, 0.5 / eps) : NULL;
	lm_tensor_release(d);
	return q;
}

/* The check of node i of the runs (base b, plus p, minus m). */
static double check_node(const run *b, const run *p, const run *m, int64_t i, int n, lm_tensor *const *v, double eps)
{
	const lmi_node *x = b->g->order[i];
	if (x->out_dtype != LM_FLOAT64) return NAN;
	lm_tensor *w = random_like(x->out_ndim, x->out_shape, 0xC0FFEEull + (uint64_t)i * 7919u), *dy = difference(p, m, i, eps);
	lm_tensor *gin_small[8], **gin = x->nin <= 8 ? gin_small : lm_alloc((size_t)x->nin * sizeof *gin);
	double res = NAN;
	if (!w || !dy || !gin || lm_graph_node_backward(b->g, i, w, gin) != LM_OK) goto out;
	double a = dot(w, dy), sum = 0;
	for (int k = 0; k < x->nin; k++) {
		const lmi_edge *e = &x->in[k];
		if (!gin[k]) continue;
		lm_tensor *dx = NULL;
		if (e->node) dx = difference(p, m, ptrmap_get(&b->g->index, e->node), eps);
		for (int j = 0; j < n && e->leaf && !dx; j++)
			if (b->copies[j] == e->leaf && v[j]) dx = lm_tensor_retain(v[j]);
		if (dx) sum += dot(gin[k], dx);
		else if (e->node) sum = NAN; /* an input whose difference is unknown */
		lm_tensor_release(dx);
		lm_tensor_release(gin[k]);
	}
	double scale = fmax(fabs(a), fabs(sum));
	res = scale < 1e-12 ? 0 : fabs(a - sum) / scale;
out:
	lm_tensor_release(w);
	lm_tensor_release(dy);
	if (gin && gin != gin_small) lm_free(gin, (size_t)x->nin * sizeof *gin);
	return res;
}

static lm_status check_inputs(int n, lm_tensor *const *inputs)
{
	if (n < 1 || n > MAX_INPUTS) return lmi_fail(LM_ERR_ARG, "graph gradcheck: 1..%d inputs, got %d", MAX_INPUTS, n);
	int grads = 0;
	for (int j = 0; j < n; j++) {
		if (!inputs[j] || !lm_tensor_requires_grad(inputs[j])) continue;
		grads++;
		if (inputs[j]->dtype != LM_FLOAT64)
			return lmi_fail(LM_ERR_DTYPE, "graph gradcheck: input %d is %s; finite differences need float64", j,
			                lm_dtype_name(inputs[j]->dtype));
	}
	if (!grads) return lmi_fail(LM_ERR_ARG, "graph gradcheck: no input requires grad");
	return LM_OK;
}

static bool same_graph(const lm_graph *a, const lm_graph *b)
{
	if (a->total != b->total) return false;
	for (int64_t i = 0; i < a->total; i++)
		if (strcmp(a->order[i]->info->grad_name, b->order[i]->info->grad_name) != 0) return false;
	return true;
}

lm_status lm_graph_gradcheck(const lm_graph *g, lm_gradcheck_fn fn, void *ctx, int n, lm_tensor *const *inputs,
                             double eps, double *err)
{
	lm_status s = check_inputs(n, inputs);
	if (s) return s;
	if (eps <= 0) eps = 1e-6;
	lm_tensor *v[MAX_INPUTS] = {0};
	run r[3];
	memset(r, 0, sizeof r);
	for (int j = 0; j < n && !s; j++)
		if (inputs[j] && lm_tensor_requires_grad(inputs[j]) &&
		    !(v[j] = random_like(inputs[j]->ndim, inputs[j]->shape, 0xD1CEull + (uint64_t)j * 104729u)))
			s = lm_last_status();
	const double steps[3] = {0, eps, -eps};
	for (int k = 0; k < 3 && !s; k++) s = one_run(&r[k], fn, ctx, n, inputs, v, steps[k]);
	for (int k = 0; k < 3 && !s; k++)
		if (!same_graph(g, r[k].g))
			s = lmi_fail(LM_ERR_ARG, "graph gradcheck: the function builds another graph (%lld nodes, from %s) than "
			             "the one shown (%lld nodes, from %s)", (long long)r[k].g->total, r[k].g->order[0]->info->grad_name,
			             (long long)g->total, g->order[0]->info->grad_name);
	for (int64_t i = 0; i < g->listed && !s; i++) err[i] = check_node(&r[0], &r[1], &r[2], i, n, v, eps);
	for (int k = 0; k < 3; k++) run_free(&r[k], n);
	for (int j = 0; j < n; j++) lm_tensor_release(v[j]);
	return s;
}
