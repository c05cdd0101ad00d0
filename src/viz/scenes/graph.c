/*
 * graph.c — the autograd graph of a tensor (micrograd's draw_dot, tinygrad's VIZ, as a tape that
 * runs): a box per op node (its grad_fn name, its output's shape and dtype), the leaves that
 * require grad (parameters) and the constant inputs, edges labelled with the shapes and dtypes
 * that flow along them, inputs on the left and the root on the right. A step runs one node's
 * backward rule, in the order lm_backward runs them, and shows the gradient arriving at each of
 * its inputs (its norm; the values on hover); with a gradcheck (viz.show(y, {gradcheck=fn,
 * inputs={...}})) each node that ran shows its rule's error against float64 finite differences.
 *
 * The scene owns an lm_graph (src/autograd/inspect.c) and runs the rules itself on its own copies
 * of the gradients (lm_graph_node_backward): nothing is accumulated into any .grad, and the graph
 * can be stepped again. Graphs of more than MAX_SHOWN nodes are summarised: the first nodes in
 * backward order are drawn, the rest counted by op in one box.
 * Given a compiled graph instead (viz.show(g) of an lm.graph Graph), the scene is its other view:
 * graph_passes.c draws it, each callback below hands over to it.
 * Read next: include/lumen/autograd.h, tensor.c, graph_passes.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumen/autograd.h"
#include "lumen/ops.h"
#include "viz/scenes/vzs.h"

#define MAX_SHOWN 240

enum { B_NODE, B_LEAF, B_CONST, B_MORE };

typedef struct gbox {
	int kind;
	int64_t node;          /* B_NODE: its index in the graph */
	const lm_tensor *leaf; /* B_LEAF */
	char name[40], shape[232];
	int layer;
	float pos;             /* order within the layer */
	vz_rect r;
	/* the gradient that arrived (summary) */
	bool has_grad;
	double norm, first[4];
	int nfirst;
	int arrived_step;      /* the step at which its (last) contribution arrived */
} gbox;

typedef struct gedge {
	int from, to;          /* boxes: an input and the node that consumed it */
	int k;                 /* input k of the consumer */
	char label[232];
	double norm;           /* the gradient passed back along it (NaN: none) */
} gedge;

typedef struct graph_scene {
	lm_graph *g;
	int64_t total, shown;
	gbox *box;
	int nbox;
	gedge *edge;
	int nedge;
	int *node_box;         /* node index -> box (shown nodes) */
	double *check;         /* per shown node, or NULL */
	bool freed;            /* an earlier backward freed the saved tensors */
	char error[200];       /* why a rule could not run (the core's message; else error_kind) */
	int error_kind;        /* 1: no gradient reached a node, 2: the saved tensors were freed */
	int nlayers;
	float bw, bh, colw;
	char fname[32];
	vzs_passes *passes;    /* viz.show(g) of an lm.graph Graph: the compiled view (graph_passes.c) draws */
} graph_scene;

/* ---------------------------------------------------------------- building */

static void fmt_shape(char *buf, size_t cap, lm_dtype dt, int ndim, const int64_t *shape)
{
	char s[LM_SHAPE_STR_MAX];
	lm_shape_str(ndim, shape, s, sizeof s);
	if (ndim == 0) snprintf(s, sizeof s, "0-d");
	const char *d = dt == LM_FLOAT32 ? "f32" : dt == LM_FLOAT64 ? "f64" : lm_dtype_name(dt);
	snprintf(buf, cap, "%s %s", s, d);
}

static int add_box(graph_scene *s, int kind)
{
	gbox *b = &s->box[s->nbox];
	memset(b, 0, sizeof *b);
	b->kind = kind;
	b->node = -1;
	b->arrived_step = -1;
	return s->nbox++;
}

static int leaf_box(graph_scene *s, const lm_tensor *leaf, const lm_graph_input *in)
{
	for (int i = 0; i < s->nbox; i++)
		if (s->box[i].kind == B_LEAF && s->box[i].leaf == leaf) return i;
	int b = add_box(s, B_LEAF);
	s->box[b].leaf = leaf;
	snprintf(s->box[b].name, sizeof s->box[b].name, "leaf");
	if (in->ndim == 0 || (in->ndim == 1 && in->shape[0] == 1)) { /* a scalar leaf: its value names it */
		double v;
		if (lm_tensor_item(leaf, &v) == LM_OK) snprintf(s->box[b].name, sizeof s->box[b].name, "leaf %.4g", v);
	}
	fmt_shape(s->box[b].shape, sizeof s->box[b].shape, in->dtype, in->ndim, in->shape);
	return b;
}

/* Boxes for the shown nodes, their leaves and constants, the edges between them, one box for
 * the rest when the graph is summarised. */
static lm_status build(graph_scene *s)
{
	int64_t cap = s->shown * 2 + 8;
	for (int64_t i = 0; i < s->shown; i++) cap += lm_graph_node_ninputs(s->g, i);
	s->box = vz_calloc((size_t)cap, sizeof *s->box);
	s->edge = vz_calloc((size_t)cap, sizeof *s->edge);
	s->node_box = vz_malloc((size_t)(s->shown + 1) * sizeof *s->node_box);
	if (!s->box || !s->edge || !s->node_box) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory", s->fname);
	for (int64_t i = 0; i < s->shown; i++) {
		int b = add_box(s, B_NODE);
		s->box[b].node = i;
		s->node_box[i] = b;
		snprintf(s->box[b].name, sizeof s->box[b].name, "%s", lm_graph_node_name(s->g, i));
		lm_dtype dt;
		int nd;
		int64_t sh[LM_MAX_DIMS];
		lm_graph_node_output(s->g, i, &dt, &nd, sh);
		fmt_shape(s->box[b].shape, sizeof s->box[b].shape, dt, nd, sh);
		if (lm_graph_node_freed(s->g, i)) s->freed = true;
	}
	int more = -1;
	if (s->shown < s->total) {
		more = add_box(s, B_MORE);
		snprintf(s->box[more].name, sizeof s->box[more].name, "%lld more nodes", (long long)(s->total - s->shown));
	}
	for (int64_t i = 0; i < s->shown; i++)
		for (int k = 0; k < lm_graph_node_ninputs(s->g, i); k++) {
			lm_graph_input in;
			if (lm_graph_node_input(s->g, i, k, &in) != LM_OK) continue;
			int from;
			if (in.kind == LM_GRAPH_NODE) from = in.node < s->shown ? s->node_box[in.node] : more;
			else if (in.kind == LM_GRAPH_LEAF) from = leaf_box(s, in.leaf, &in);
			else {
				from = add_box(s, B_CONST);
				snprintf(s->box[from].name, sizeof s->box[from].name, "input");
				fmt_shape(s->box[from].shape, sizeof s->box[from].shape, in.dtype, in.ndim, in.shape);
			}
			if (from < 0) continue;
			gedge *e = &s->edge[s->nedge++];
			e->from = from;
			e->to = s->node_box[i];
			e->k = k;
			e->norm = NAN;
			fmt_shape(e->label, sizeof e->label, in.dtype, in.ndim, in.shape);
		}
	return LM_OK;
}

/* Layers by the longest path from the root (root: 0), inputs one further than their consumers;
 * in each layer, boxes ordered by the mean position of their consumers (one sweep from the root). */
static void arrange(graph_scene *s)
{
	for (int i = 0; i < s->nbox; i++) s->box[i].layer = 0;
	for (int pass = 0; pass < s->nbox + 1; pass++) { /* edges point from input to consumer */
		bool changed = false;
		for (int e = 0; e < s->nedge; e++) {
			gbox *a = &s->box[s->edge[e].from], *b = &s->box[s->edge[e].to];
			if (a->layer < b->layer + 1) {
				a->layer = b->layer + 1;
				changed = true;
			}
		}
		if (!changed) break;
	}
	s->nlayers = 0;
	for (int i = 0; i < s->nbox; i++)
		if (s->box[i].layer + 1 > s->nlayers) s->nlayers = s->box[i].layer + 1;
	int *count = vz_calloc((size_t)s->nlayers, sizeof *count);
	if (!count) return;
	for (int L = 0; L < s->nlayers; L++) {
		for (int i = 0; i < s->nbox; i++) {
			gbox *b = &s->box[i];
			if (b->layer != L) continue;
			double sum = 0;
			int n = 0;
			for (int e = 0; e < s->nedge; e++)
				if (s->edge[e].from == i) {
					sum += s->box[s->edge[e].to].pos + 0.01 * s->edge[e].k;
					n++;
				}
			b->pos = n ? (float)(sum / n) : (float)count[L];
			count[L]++;
		}
		/* spread the layer: ranks of pos, centred */
		for (int i = 0; i < s->nbox; i++) {
			if (s->box[i].layer != L) continue;
			int rank = 0;
			for (int j = 0; j < s->nbox; j++)
				if (s->box[j].layer == L && (s->box[j].pos < s->box[i].pos || (s->box[j].pos == s->box[i].pos && j < i))) rank++;
			s->box[i].pos = (float)rank - (float)(count[L] - 1) / 2;
		}
	}
	vz_free(count);
}

/* Its norm and first few values (C order). */
static void summarise(gbox *bx, const lm_tensor *g)
{
	lm_tensor *n2 = lm_norm(g, 2, LM_DIM_ALL, false), *c = lm_contiguous(g);
	bx->has_grad = n2 && lm_tensor_item(n2, &bx->norm) == LM_OK;
	bx->nfirst = 0;
	for (int64_t j = 0; c && j < 4 && j < lm_tensor_numel(c); j++) {
		int64_t idx[LM_MAX_DIMS] = {0}, r = j;
		for (int d = lm_tensor_ndim(c) - 1; d >= 0; d--) {
			int64_t n = lm_tensor_size(c, d);
			idx[d] = n ? r % n : 0;
			r = n ? r / n : 0;
		}
		lm_tensor_get(c, idx, &bx->first[bx->nfirst++]);
	}
	lm_tensor_release(n2);
	lm_tensor_release(c);
}

/* Runs the rules in order, keeping a summary of every gradient that arrives. */
static void run_backward(graph_scene *s)
{
	lm_tensor **acc = vz_calloc((size_t)s->nbox, sizeof *acc);
	if (!acc) return;
	lm_dtype dt;
	int nd;
	int64_t sh[LM_MAX_DIMS];
	lm_graph_node_output(s->g, 0, &dt, &nd, sh);
	acc[s->node_box[0]] = lm_ones(nd, sh, dt); /* d root / d root */
	for (int64_t i = 0; i < s->shown && !s->error[0]; i++) {
		int b = s->node_box[i];
		int nin = lm_graph_node_ninputs(s->g, i);
		if (acc[b]) summarise(&s->box[b], acc[b]); /* everything its consumers sent */
		lm_tensor *gin_small[8], **gin = nin <= 8 ? gin_small : vz_calloc((size_t)nin, sizeof *gin);
		if (!gin || !acc[b] || lm_graph_node_backward(s->g, i, acc[b], gin) != LM_OK) {
			snprintf(s->error, sizeof s->error, "%s", acc[b] ? lm_last_error() : "no gradient reached this node");
			s->error_kind = acc[b] ? 0 : 1;
			if (gin && gin != gin_small) vz_free(gin);
			break;
		}
		for (int e = 0; e < s->nedge; e++) {
			gedge *ed = &s->edge[e];
			lm_tensor *gk = ed->to == b ? gin[ed->k] : NULL;
			if (!gk) continue;
			lm_tensor *n2 = lm_norm(gk, 2, LM_DIM_ALL, false);
			if (n2) lm_tensor_item(n2, &ed->norm);
			lm_tensor_release(n2);
			int to = ed->from;
			if (s->box[to].kind == B_MORE) continue;
			if (!acc[to]) acc[to] = lm_tensor_retain(gk);
			else {
				lm_tensor *sum = lm_add(acc[to], gk);
				lm_tensor_release(acc[to]);
				acc[to] = sum;
			}
			s->box[to].arrived_step = (int)i + 1;
		}
		for (int k = 0; k < nin; k++) lm_tensor_release(gin[k]);
		if (gin != gin_small) vz_free(gin);
		lm_tensor_release(acc[b]);
		acc[b] = NULL;
	}
	for (int i = 0; i < s->nbox; i++) { /* what is left: the leaves' and constants' gradients */
		if (!acc[i]) continue;
		summarise(&s->box[i], acc[i]);
		lm_tensor_release(acc[i]);
	}
	vz_free(acc);
}

/* ---------------------------------------------------------------- demonstration graphs */

static lm_tensor *leaf(const double *v, int ndim, const int64_t *shape)
{
	lm_tensor *t = lm_from_data(v, ndim, shape, LM_FLOAT64);
	if (t && lm_tensor_requires_grad_(t, true) != LM_OK) {
		lm_tensor_release(t);
		return NULL;
	}
	return t;
}

/* micrograd's neuron: o = tanh(x1 w1 + x2 w2 + b) */
static lm_tensor *demo_neuron(void)
{
	static const double x1 = 2, x2 = 0, w1 = -3, w2 = 1, b = 6.8813735870195432;
	lm_tensor *X1 = leaf(&x1, 0, NULL), *X2 = leaf(&x2, 0, NULL), *W1 = leaf(&w1, 0, NULL), *W2 = leaf(&w2, 0, NULL);
	lm_tensor *B = leaf(&b, 0, NULL);
	lm_tensor *a = lm_mul(X1, W1), *c = lm_mul(X2, W2), *d = a && c ? lm_add(a, c) : NULL, *e = d ? lm_add(d, B) : NULL;
	lm_tensor *o = e ? lm_tanh(e) : NULL;
	lm_tensor *all[] = {X1, X2, W1, W2, B, a, c, d, e};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) lm_tensor_release(all[i]);
	return o;
}

/* A two-layer perceptron on 4 random points: mean((relu(x W1 + b1) W2 + b2 - y)^2). */
static lm_tensor *demo_mlp(void)
{
	double xv[12], w1v[12], b1v[4], w2v[8], b2v[2], yv[8];
	uint64_t z = 0x12345678ull;
	double *all[] = {xv, w1v, b1v, w2v, b2v, yv};
	int len[] = {12, 12, 4, 8, 2, 8};
	for (int a = 0; a < 6; a++)
		for (int i = 0; i < len[a]; i++) {
			z ^= z << 13, z ^= z >> 7, z ^= z << 17;
			all[a][i] = (double)(z % 2000) / 1000.0 - 1.0;
		}
	int64_t sx[2] = {4, 3}, sw1[2] = {3, 4}, sb1[1] = {4}, sw2[2] = {4, 2}, sb2[1] = {2}, sy[2] = {4, 2};
	lm_tensor *x = lm_from_data(xv, 2, sx, LM_FLOAT64), *y = lm_from_data(yv, 2, sy, LM_FLOAT64);
	lm_tensor *W1 = leaf(w1v, 2, sw1), *B1 = leaf(b1v, 1, sb1), *W2 = leaf(w2v, 2, sw2), *B2 = leaf(b2v, 1, sb2);
	lm_tensor *h = x && W1 ? lm_mm(x, W1) : NULL, *h1 = h && B1 ? lm_add(h, B1) : NULL, *r = h1 ? lm_relu(h1) : NULL;
	lm_tensor *o = r && W2 ? lm_mm(r, W2) : NULL, *o1 = o && B2 ? lm_add(o, B2) : NULL, *d = o1 && y ? lm_sub(o1, y) : NULL;
	lm_tensor *q = d ? lm_mul(d, d) : NULL, *loss = q ? lm_mean(q, LM_DIM_ALL, false) : NULL;
	lm_tensor *tmp[] = {x, y, W1, B1, W2, B2, h, h1, r, o, o1, d, q};
	for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++) lm_tensor_release(tmp[i]);
	return loss;
}

/* n neurons tanh(x_i w_i + b_i) summed in a balanced tree (wide), or a chain of n tanh (deep). */
static lm_tensor *demo_many(int64_t n, bool chain)
{
	double one = 0.5;
	lm_tensor *x = leaf(&one, 0, NULL), *cur = x ? lm_tensor_retain(x) : NULL;
	if (chain) {
		for (int64_t i = 0; cur && i < n; i++) {
			lm_tensor *next = lm_tanh(cur);
			lm_tensor_release(cur);
			cur = next;
		}
		lm_tensor_release(x);
		return cur;
	}
	lm_tensor_release(cur);
	lm_tensor **terms = vz_calloc((size_t)n, sizeof *terms);
	for (int64_t i = 0; terms && x && i < n; i++) {
		double w = 0.1 * (double)(i % 7) - 0.3, b = 0.05 * (double)(i % 5);
		lm_tensor *W = leaf(&w, 0, NULL), *B = leaf(&b, 0, NULL), *m = W ? lm_mul(x, W) : NULL, *a = m && B ? lm_add(m, B) : NULL;
		terms[i] = a ? lm_tanh(a) : NULL;
		lm_tensor *tmp[] = {W, B, m, a};
		for (int k = 0; k < 4; k++) lm_tensor_release(tmp[k]);
	}
	for (int64_t w = n; terms && w > 1; w = (w + 1) / 2) /* pairwise sums */
		for (int64_t i = 0; i < w / 2; i++) {
			lm_tensor *sum = terms[2 * i] && terms[2 * i + 1] ? lm_add(terms[2 * i], terms[2 * i + 1]) : NULL;
			lm_tensor_release(terms[2 * i]);
			lm_tensor_release(terms[2 * i + 1]);
			terms[i] = sum;
			if (w % 2 && i == w / 2 - 1) terms[i + 1] = terms[w - 1];
		}
	lm_tensor *root = terms ? terms[0] : NULL;
	vz_free(terms);
	lm_tensor_release(x);
	return root;
}

static lm_status demo_graph(const lm_viz_opts *o, lm_graph **out, const char *fname)
{
	const char *expr = vz_opt_string(o, "expr", "neuron");
	int64_t n = vz_opt_int(o, "n", strcmp(expr, "chain") == 0 ? 50 : 40);
	lm_tensor *root = strcmp(expr, "mlp") == 0 ? demo_mlp() : strcmp(expr, "neuron") == 0 ? demo_neuron()
	                  : demo_many(n, strcmp(expr, "chain") == 0);
	if (!root) return vz_error_prefix(0, fname);
	*out = lm_graph_capture(root, MAX_SHOWN);
	lm_tensor_release(root);
	return *out ? LM_OK : vz_error_prefix(0, fname);
}

static void graph_destroy(void *p)
{
	graph_scene *s = p;
	if (!s) return;
	vzs_passes_free(s->passes);
	lm_graph_free(s->g);
	vz_free(s->box);
	vz_free(s->edge);
	vz_free(s->node_box);
	vz_free(s->check);
	vz_free(s);
}

static void *graph_create(const vz_build *b)
{
	graph_scene *s = vz_calloc(1, sizeof *s);
	if (!s) return NULL;
	snprintf(s->fname, sizeof s->fname, "%s", b->fname);
	if (b->passes) { /* a compiled graph: the other view */
		if (!(s->passes = vzs_passes_new(b->passes, b->fname))) {
			graph_destroy(s);
			return NULL;
		}
		return s;
	}
	lm_status st = LM_OK;
	if (strcmp(vz_opt_string(b->opts, "expr", "neuron"), "compiled") == 0 && b->nruns == 0 && !b->graph)
		st = lm_set_error(LM_ERR_ARG, "%s: the compiled graph is captured and optimized by lm.graph, in Lua: "
		                  "viz.scene('graph', {expr = 'compiled'}), viz.show(g) of a Graph, or lumen --snapshot graph "
		                  "OUT.png --opts expr=compiled", b->fname);
	else if (b->nruns > 0) st = lm_set_error(LM_ERR_ARG, "%s: the graph scene draws a tensor's autograd graph (viz.show(y) "
	                                    "for a y with a grad_fn), not a %s result", b->fname, b->runs[0].pattern);
	else if (b->graph) {
		s->g = b->graph;
		((vz_build *)b)->graph = NULL; /* the scene owns it now */
	} else {
		st = demo_graph(b->opts, &s->g, b->fname);
	}
	if (st == LM_OK) {
		s->total = lm_graph_total(s->g);
		s->shown = lm_graph_listed(s->g) < MAX_SHOWN ? lm_graph_listed(s->g) : MAX_SHOWN;
		st = build(s);
	}
	if (st == LM_OK && b->check && (s->check = vz_malloc((size_t)s->shown * sizeof *s->check)))
		memcpy(s->check, b->check, (size_t)s->shown * sizeof *s->check);
	if (st != LM_OK) {
		graph_destroy(s);
		return NULL;
	}
	arrange(s);
	for (int i = 0; i < s->nbox; i++) s->box[i].norm = NAN;
	if (!s->freed) run_backward(s);
	else {
		snprintf(s->error, sizeof s->error, "an earlier backward freed this graph's saved tensors (pass "
		         "retain_graph=true to look at its gradients)");
		s->error_kind = 2;
	}
	return s;
}

/* ---------------------------------------------------------------- steps, layout */

static int graph_steps(void *p)
{
	graph_scene *s = p;
	return s->passes ? vzs_passes_steps(s->passes) : 1 + (int)s->shown;
}
static int graph_variants(void *p) { (void)p; return 1; }
static const char *graph_variant_name(void *p, int v)
{
	(void)v;
	return ((graph_scene *)p)->passes ? "passes" : "backward";
}
static void graph_set_variant(void *p, int v) { (void)p, (void)v; }

static void graph_layout(void *p, const vz_layout_ctx *c, float *ww, float *wh)
{
	graph_scene *s = p;
	if (s->passes) {
		vzs_passes_layout(s->passes, c, ww, wh);
		return;
	}
	const vz_frame *f = c->metrics;
	float lh = vz_text_height(f, VZ_FONT_SMALL), cw = vz_char_width(f, VZ_FONT_SMALL);
	int widest = 1;
	int *count = vz_calloc((size_t)s->nlayers, sizeof *count);
	for (int i = 0; count && i < s->nbox; i++)
		if (++count[s->box[i].layer] > widest) widest = count[s->box[i].layer];
	vz_free(count);
	float top = lh * 1.8f;
	s->colw = fmaxf(c->w / (float)s->nlayers, 3 * c->scale);
	s->bw = fminf(s->colw * 0.78f, 20 * cw);
	float rowh = fmaxf((c->h - top) / (float)widest, 2 * c->scale);
	s->bh = fminf(rowh * 0.7f, lh * 3.3f);
	float world_h = fmaxf(c->h, top + rowh * (float)widest);
	for (int i = 0; i < s->nbox; i++) {
		gbox *b = &s->box[i];
		float x = (float)(s->nlayers - 1 - b->layer) * s->colw + (s->colw - s->bw) / 2;
		float y = top + (world_h - top) / 2 + b->pos * rowh - s->bh / 2;
		float h = b->kind == B_CONST ? s->bh * 0.75f : s->bh;
		b->r = vz_r(x, y + (s->bh - h) / 2, s->bw, h);
	}
	*ww = fmaxf(c->w, s->colw * (float)s->nlayers);
	*wh = world_h;
}

/* ---------------------------------------------------------------- drawing */

static const char *box_state(const graph_scene *s, const gbox *b, int k)
{
	if (b->kind == B_NODE) return b->node < k - 1 ? "done" : b->node == k - 1 ? "active" : "pending";
	if (b->kind == B_MORE) return "summary";
	if (b->arrived_step >= 0 && b->arrived_step <= k && !s->error[0])
		return b->arrived_step == k ? "active" : "done";
	return b->kind == B_LEAF ? "leaf" : "constant";
}

static vz_color state_color(const gbox *b, const char *st)
{
	if (strcmp(st, "active") == 0) return vz_th.active;
	if (strcmp(st, "done") == 0) return b->kind == B_LEAF ? vz_mix(vz_th.common, vz_th.bg, 0.2)
	                                                       : vz_mix(vz_th.path_a, vz_th.bg, 0.55);
	if (strcmp(st, "leaf") == 0) return vz_mix(vz_th.common, vz_th.bg, 0.65);
	if (strcmp(st, "constant") == 0 || strcmp(st, "summary") == 0) return vz_th.idle;
	return vz_th.pending;
}

static void draw_edge(vz_frame *f, const graph_scene *s, const gedge *e, int k)
{
	const gbox *a = &s->box[e->from], *b = &s->box[e->to];
	float x0 = a->r.x + a->r.w, y0 = a->r.y + a->r.h / 2, x1 = b->r.x, y1 = b->r.y + b->r.h / 2;
	int64_t consumer = b->node;
	bool now = consumer == k - 1 && !isnan(e->norm), back = consumer < k - 1 && !isnan(e->norm);
	vz_color c = now ? vz_th.arrow_now : back ? vz_mix(vz_th.arrow_now, vz_th.bg, 0.55) : vz_th.arrow;
	if (now) vz_arrow(f, x1, y1, x0 + 2, y0, 2.5f, 9, c); /* the gradient flows back */
	else vz_arrow(f, x0, y0, x1 - 1, y1, back ? 1.5f : 1, 7, c);
	float mx = (x0 + x1) / 2, my = (y0 + y1) / 2;
	const char *lab = e->label;
	char g[64];
	if ((now || back) && !isnan(e->norm)) {
		snprintf(g, sizeof g, "|g| %.3g", e->norm);
		lab = g;
	}
	if (vz_text_fits(f, VZ_FONT_TINY, lab, (x1 - x0) * 0.9f) && s->bh * vz_zoom(f) > 14)
		vz_text_draw(f, mx, my - vz_text_height(f, VZ_FONT_TINY), VZ_FONT_TINY, VZ_ALIGN_CENTER,
		             now ? vz_th.arrow_now : vz_th.text_dim, lab);
}

/* A box's name as the labels say it: ops as autograd names them; leaves, inputs and the summary
 * box in the labels' language (b->name stays the cells' group: the API's English). */
static const char *box_name(const gbox *b, char *buf, size_t cap)
{
	long long n;
	if (!vz_zh() || b->kind == B_NODE) return b->name;
	if (b->kind == B_LEAF) return vz_fmt(buf, cap, "叶子%s", b->name + 4); /* "leaf" and its value */
	if (b->kind == B_CONST) return "输入";
	if (sscanf(b->name, "%lld", &n) == 1) return vz_fmt(buf, cap, "其余 %lld 个节点", n);
	return b->name;
}

static const char *error_text(const graph_scene *s)
{
	if (s->error_kind == 1) return vz_tr(s->error, "没有梯度到达这个节点");
	if (s->error_kind == 2)
		return vz_tr(s->error, "之前的一次 backward 已释放这张图保存的张量（传 retain_graph=true 才能查看它的梯度）");
	return s->error;
}

static void draw_box(vz_frame *f, graph_scene *s, int i, int k)
{
	gbox *b = &s->box[i];
	if (!vz_visible(f, b->r)) return;
	const char *st = box_state(s, b, k);
	vz_color c = state_color(b, st), line = vz_mix(c, VZ_RGB(0, 0, 0), 0.35);
	if (b->kind == B_CONST) vz_hatch(f, b->r, c, vz_th.hatch);
	else vz_cell_fill(f, b->r, c, b->kind == B_LEAF ? 2 : 1, b->kind == B_LEAF ? vz_th.common : line);
	if (b->kind == B_NODE && b->node == 0) vz_outline(f, b->r, 2, vz_th.text);
	float lh = vz_text_height(f, VZ_FONT_SMALL), pad = 0.15f * lh;
	vz_color tc = vz_text_on(c);
	if (b->r.h * vz_zoom(f) >= lh * 1.1f) { /* the name; a long one in the small print, cut to fit */
		char name[sizeof b->name * 2], nb[sizeof name];
		const char *nm = box_name(b, nb, sizeof nb);
		vz_font nf = vz_text_fits(f, VZ_FONT_SMALL, nm, b->r.w - 2 * pad) ? VZ_FONT_SMALL : VZ_FONT_TINY;
		snprintf(name, sizeof name, "%s", nm);
		vz_text_fit(f, nf, name, sizeof name, b->r.w - 2 * pad);
		vz_text_draw(f, b->r.x + b->r.w / 2, b->r.y + pad, nf, VZ_ALIGN_CENTER, tc, name);
	}
	if (b->r.h * vz_zoom(f) >= lh * 2.1f && vz_text_fits(f, VZ_FONT_TINY, b->shape, b->r.w))
		vz_text_draw(f, b->r.x + b->r.w / 2, b->r.y + pad + lh * 1.05f, VZ_FONT_TINY, VZ_ALIGN_CENTER, tc, b->shape);
	bool ran = b->kind == B_NODE ? b->node < k : strcmp(st, "done") == 0 || strcmp(st, "active") == 0;
	if (ran && s->check && b->kind == B_NODE && b->r.h * vz_zoom(f) >= lh * 3) { /* the rule's error */
		double err = s->check[b->node];
		char t[40];
		if (isnan(err)) snprintf(t, sizeof t, "%s", vz_tr("gradcheck: n/a", "gradcheck：不适用"));
		else snprintf(t, sizeof t, "gradcheck %.1e", err);
		vz_text_draw(f, b->r.x + b->r.w / 2, b->r.y + pad + lh * 1.95f, VZ_FONT_TINY, VZ_ALIGN_CENTER,
		             !isnan(err) && err > 1e-4 ? vz_th.highlight : tc, t);
	} else if (ran && b->kind == B_LEAF && b->has_grad && b->r.h * vz_zoom(f) >= lh * 3) {
		char t[40];
		VZ_SNPRINTF_TR(t, sizeof t, "grad |g| %.3g", "梯度 |g| %.3g", b->norm);
		vz_text_draw(f, b->r.x + b->r.w / 2, b->r.y + pad + lh * 1.95f, VZ_FONT_TINY, VZ_ALIGN_CENTER, tc, t);
	}
	vz_cell *cell = vz_cell_add(f, b->r, b->kind == B_NODE ? "node" : b->kind == B_LEAF ? "leaf" : b->kind == B_CONST ? "input" : "summary");
	cell->state = st;
	cell->color = c;
	cell->index = (int32_t)(b->kind == B_NODE ? b->node : i);
	cell->step = b->kind == B_NODE ? (int32_t)b->node + 1 : b->arrived_step;
	cell->tag = i;
	cell->group = b->name;
	if (b->has_grad && ran) {
		cell->value = b->norm;
		cell->has_value = true;
	}
}

static void draw_summary_text(vz_frame *f, const graph_scene *s)
{
	float lh = vz_text_height(f, VZ_FONT_SMALL), x = f->area.x, y0 = f->area.y;
	x = vzs_legend(f, x, y0, vz_th.pending, false, vz_tr("op: not run yet", "算子：尚未运行"));
	x = vzs_legend(f, x, y0, vz_th.active, false, vz_tr("its backward runs now / a gradient arrives", "正在运行其反向规则 / 梯度到达"));
	x = vzs_legend(f, x, y0, vz_mix(vz_th.path_a, vz_th.bg, 0.55), false, vz_tr("ran", "已运行"));
	x = vzs_legend(f, x, y0, vz_mix(vz_th.common, vz_th.bg, 0.65), false, vz_tr("leaf that requires grad", "需要梯度的叶子"));
	x = vzs_legend(f, x, y0, vz_th.idle, true, vz_tr("input without grad", "不需要梯度的输入"));
	if (s->shown < s->total) {
		char t[300];
		VZ_SNPRINTF_TR(t, sizeof t, "summarised: %lld of %lld nodes drawn; ops:", "已概括：画出 %lld/%lld 个节点；算子：",
		               (long long)s->shown, (long long)s->total);
		for (int j = 0; j < lm_graph_op_count(s->g) && j < 5; j++) {
			int64_t n;
			const char *nm = lm_graph_op(s->g, j, &n);
			vz_append(t, sizeof t, " %s x%lld", nm, (long long)n);
		}
		vz_text_draw(f, f->area.x, y0 + lh * 1.2f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.highlight, t);
	}
	if (s->error[0]) vz_text_draw(f, f->area.x, y0 + lh * 2.4f, VZ_FONT_SMALL, VZ_ALIGN_LEFT, vz_th.highlight, error_text(s));
	(void)x;
}

static void graph_draw(void *p, vz_frame *f)
{
	graph_scene *s = p;
	if (s->passes) {
		vzs_passes_draw(s->passes, f);
		return;
	}
	int k = (int)floor(f->t + 1e-9);
	for (int e = 0; e < s->nedge; e++) draw_edge(f, s, &s->edge[e], k);
	vz_layer(f);
	for (int i = 0; i < s->nbox; i++) draw_box(f, s, i, k);
	vz_overlay(f);
	draw_summary_text(f, s);
	vz_world(f);
}

/* ---------------------------------------------------------------- text */

static void graph_title(void *p, char *buf, size_t cap)
{
	graph_scene *s = p;
	if (s->passes) {
		vzs_passes_title(s->passes, buf, cap);
		return;
	}
	int leaves = 0;
	for (int i = 0; i < s->nbox; i++) leaves += s->box[i].kind == B_LEAF;
	VZ_SNPRINTF_TR(buf, cap, "autograd graph: %lld nodes, %d leaves that require grad, depth %lld%s",
	               "自动微分计算图：%lld 个节点，%d 个需要梯度的叶子，深度 %lld%s", (long long)s->total, leaves,
	               (long long)lm_graph_depth(s->g) + 1,
	               s->check ? vz_tr(", gradcheck per node (float64 differences)", "，逐节点 gradcheck（float64 差分）") : "");
}

static void graph_step_label(void *p, int step, char *buf, size_t cap)
{
	graph_scene *s = p;
	if (s->passes) {
		vzs_passes_step_label(s->passes, step, buf, cap);
		return;
	}
	if (step == 0) {
		snprintf(buf, cap, "%s", vz_tr("backward starts at the root with d root / d root = 1; each step runs one node's rule",
		                               "反向传播从根节点开始，d root / d root = 1；每一步运行一个节点的反向规则"));
		return;
	}
	const gbox *b = &s->box[s->node_box[step - 1]];
	VZ_SNPRINTF_TR(buf, cap, "node %d of %lld: %s runs, its gradient %s goes to its inputs",
	               "第 %d/%lld 个节点：运行 %s，把梯度（%s）传给它的输入", step, (long long)s->shown, b->name, b->shape);
	if (s->error[0]) vz_append(buf, cap, "%s", vz_tr(" (not computed: see above)", "（未计算：见上方）"));
}

static void graph_counters(void *p, vz_panel *pn)
{
	graph_scene *s = p;
	if (s->passes) {
		vzs_passes_counters(s->passes, pn);
		return;
	}
	int col = vz_panel_column(pn, vz_tr("graph", "计算图"), vz_tr("autograd (this process)", "autograd（本进程）"));
	vz_panel_set(pn, col, "nodes", (double)s->total);
	vz_panel_set(pn, col, "drawn", (double)s->shown);
	vz_panel_set(pn, col, "depth", (double)lm_graph_depth(s->g) + 1);
	for (int j = 0; j < lm_graph_op_count(s->g) && j < 8; j++) {
		int64_t n;
		const char *nm = lm_graph_op(s->g, j, &n);
		vz_panel_set(pn, col, nm, (double)n);
	}
	if (s->check) {
		double worst = 0;
		for (int64_t i = 0; i < s->shown; i++)
			if (!isnan(s->check[i]) && s->check[i] > worst) worst = s->check[i];
		int c2 = vz_panel_column(pn, "gradcheck", vz_tr("float64 central differences", "float64 中心差分"));
		vz_panel_set(pn, c2, "worst_rel_error", worst);
	}
	vz_panel_note(pn, "%s", vz_tr("a step runs one node's backward rule in lm_backward's order; the gradients shown are "
	                              "the scene's own copies (no .grad changes)",
	                              "每一步按 lm_backward 的顺序运行一个节点的反向规则；显示的梯度是场景自己的副本（不改动 .grad）"));
}

static void graph_describe(void *p, vz_cell *c, char *buf, size_t cap)
{
	graph_scene *s = p;
	if (s->passes) {
		vzs_passes_describe(s->passes, c, buf, cap);
		return;
	}
	if (c->tag < 0 || c->tag >= s->nbox) return;
	const gbox *b = &s->box[c->tag];
	char nb[96];
	VZ_SNPRINTF_TR(buf, cap, "%s\noutput %s", "%s\n输出 %s", box_name(b, nb, sizeof nb), b->shape);
	if (b->kind == B_NODE) {
		VZ_APPEND_TR(buf, cap, "\nnode %lld (its rule runs at step %lld)", "\n节点 %lld（其规则在第 %lld 步运行）",
		             (long long)b->node + 1, (long long)b->node + 1);
		if (s->check && !isnan(s->check[b->node]))
			VZ_APPEND_TR(buf, cap, "\ngradcheck: relative error %.2e", "\ngradcheck：相对误差 %.2e", s->check[b->node]);
	}
	if (b->kind == B_MORE) {
		vz_append(buf, cap, "%s", vz_tr("\nthe rest of the graph, by op:", "\n图的其余部分，按算子："));
		for (int j = 0; j < lm_graph_op_count(s->g) && j < 6; j++) {
			int64_t n;
			const char *nm = lm_graph_op(s->g, j, &n);
			vz_append(buf, cap, "\n  %s x%lld", nm, (long long)n);
		}
	}
	if (b->has_grad && c->has_value) {
		VZ_APPEND_TR(buf, cap, "\ngradient arrived: |g| = %.4g", "\n到达的梯度：|g| = %.4g", b->norm);
		for (int j = 0; j < b->nfirst; j++)
			vz_append(buf, cap, "%s%.4g", j ? ", " : vz_tr("\nfirst values: ", "\n前几个值："), b->first[j]);
	}
}

static const vz_option graph_options[] = {
	{"expr", VZ_OPT_CHOICE, 0, 0, "neuron mlp wide chain compiled", "neuron", "the demonstration graph (viz.scene): "
	 "micrograd's neuron, a two-layer perceptron's loss, n neurons summed, a chain of n tanh; compiled: a perceptron's "
	 "forward captured by lm.graph, stepped through its passes' rewrites"},
	{"n", VZ_OPT_INT, 1, 1000000, NULL, "40", "neurons (wide) or ops (chain)"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

const vz_scene_class vz_scene_graph = {
	.name = "graph",
	.summary = "a tensor's autograd graph: ops, leaves, shapes; step backward node by node, gradients arriving, "
	           "gradcheck; or an lm.graph Graph stepped through its passes, one rewrite per step",
	.patterns = "",
	.options = graph_options,
	.create = graph_create,
	.destroy = graph_destroy,
	.steps = graph_steps,
	.variants = graph_variants,
	.variant_name = graph_variant_name,
	.set_variant = graph_set_variant,
	.layout = graph_layout,
	.draw = graph_draw,
	.title = graph_title,
	.step_label = graph_step_label,
	.counters = graph_counters,
	.describe = graph_describe,
};
