/*
 * lumen/autograd.h — reverse-mode automatic differentiation over a dynamic graph.
 *
 * A tensor that requires grad records, for each op applied to it, a node (the op's backward rule,
 * edges to the inputs' nodes, saved tensors). lm_backward walks the graph from a root in reverse
 * topological order (iteratively: deep chains cannot overflow the stack) and accumulates into the
 * .grad of the leaves. Read next: src/autograd/graph.h, engine.c, gradcheck.c.
 */
#ifndef LUMEN_AUTOGRAD_H
#define LUMEN_AUTOGRAD_H

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Grad mode (lm_grad_enabled, lm_set_grad_enabled): lumen/core.h. */

/* Marks a leaf as requiring grad (floating dtypes only; a non-leaf is an error). */
lm_status lm_tensor_requires_grad_(lm_tensor *t, bool flag);
bool lm_tensor_requires_grad(const lm_tensor *t);
bool lm_tensor_is_leaf(const lm_tensor *t);
/* The accumulated gradient of a leaf (borrowed), or NULL. */
lm_tensor *lm_tensor_grad(const lm_tensor *t);
/* Replaces (or with NULL clears) the gradient with a detached alias of g (g's storage, no graph,
 * not requiring grad: a gradient can never keep t alive). Shape and dtype must match. */
lm_status lm_tensor_set_grad(lm_tensor *t, lm_tensor *g);
/* Name of the op that made t ("MulBackward"), or NULL for leaves. */
const char *lm_tensor_grad_fn_name(const lm_tensor *t);

/*
 * The node that made t (t.grad_fn as an object, PyTorch's Node): +1, or NULL for a leaf. A node
 * keeps its inputs' nodes (and the leaves it accumulates into) alive, not its output.
 */
typedef struct lmi_node lm_node;
lm_node *lm_tensor_grad_fn(const lm_tensor *t);
lm_node *lm_node_retain(lm_node *n);
void lm_node_release(lm_node *n);
const char *lm_node_name(const lm_node *n);    /* "MulBackward" */
const char *lm_node_op(const lm_node *n);      /* the op that ran: "mul" (the op list's name) */
int lm_node_ninputs(const lm_node *n);
/* Input k (0-based) as backward reaches it: its node (+1) when it was made by an op that
 * requires grad, else NULL with *leaf set (borrowed) when it is a leaf that requires grad (its
 * gradient accumulates there), else NULL and *leaf NULL (no gradient flows to it). */
lm_node *lm_node_input(const lm_node *n, int k, const lm_tensor **leaf);

/* One parameter of the op, as recorded (lm_node_param). */
typedef enum lm_param_kind {
	LM_PARAM_INT,
	LM_PARAM_FLOAT,
	LM_PARAM_BOOL,
	LM_PARAM_DIM,   /* 0-based; LM_DIM_ALL: every dim */
	LM_PARAM_INDEX, /* 0-based position along a dim */
	LM_PARAM_DEVICE,
	LM_PARAM_INTS
} lm_param_kind;
typedef struct lm_param {
	const char *name;     /* "dim", "keepdim" */
	lm_param_kind kind;
	double f;             /* LM_PARAM_FLOAT */
	int64_t i;            /* INT, BOOL (0/1), DIM, INDEX, DEVICE */
	int n;                /* LM_PARAM_INTS: ints[0..n) */
	int64_t ints[2 * LM_MAX_DIMS];
} lm_param;
int lm_node_nparams(const lm_node *n);
/* Parameter j (0 <= j < lm_node_nparams). */
lm_status lm_node_param(const lm_node *n, int j, lm_param *out);

/*
 * Computes gradients of root w.r.t. every leaf that requires grad and adds them into their .grad
 * (a new tensor for a leaf without one, else added in place into the existing .grad).
 * grad: the gradient of root (same shape, dtype and device); NULL is allowed only for one-element
 * roots (ones). retain_graph: keep saved tensors so backward can run through the graph again;
 * without it each node's saved tensors are freed once its rule ran, and a later backward through
 * the node fails with LM_ERR_STATE. Errors (nothing is accumulated): a root that does not require
 * grad (LM_ERR_STATE), a non-scalar root without grad (LM_ERR_SHAPE), grad of the wrong shape
 * (LM_ERR_SHAPE) or dtype (LM_ERR_DTYPE), a saved tensor changed in place since the forward
 * (LM_ERR_STATE). Runs with grad mode off; iterative (no recursion over the graph's depth).
 * See docs/autograd.md.
 */
lm_status lm_backward(lm_tensor *root, const lm_tensor *grad, bool retain_graph);

/*
 * Hooks of lm_backward, for distributed data parallelism (lumen.dist's DDP): ready(ud, leaf, g)
 * is called as soon as a watched leaf's gradient of this backward is complete (every path into
 * the leaf added: g, borrowed, is what the backward will add into leaf->grad), while the rest of
 * the graph still runs; done(ud) after a backward that succeeded, once every leaf's .grad is
 * written. A status other than LM_OK stops the backward with that error. Per thread; NULL
 * functions remove them. lm_tensor_watch_grad(t, on) marks a leaf for ready.
 */
typedef lm_status (*lm_leaf_ready_fn)(void *ud, lm_tensor *leaf, const lm_tensor *g);
typedef lm_status (*lm_backward_done_fn)(void *ud);
void lm_set_backward_hooks(lm_leaf_ready_fn ready, lm_backward_done_fn done, void *ud);
void lm_tensor_watch_grad(lm_tensor *t, bool on);

/*
 * A differentiable op defined outside the engine (lm.autograd.Function: a forward and a backward
 * written in Lua). lm_custom_record makes out — computed by the caller, with no grad_fn — the
 * output of a node named name ("ScaleBackward", at most 63 bytes kept) over in[0..nin) (NULL
 * entries allowed), when grad mode is on and some input requires grad; otherwise it records
 * nothing. Its rule calls backward(ud, gout, nin, needs, gin): it sets gin[k] (+1) for inputs k
 * with needs[k], or leaves it NULL (no gradient for that input); a gradient whose shape is not
 * input k's is an error naming the node. Ownership of ud passes to the call: release(ud) runs
 * exactly once — at once when no node is made or recording fails, else when the node's rule has
 * run in a backward without retain_graph, or when the node is freed, whichever comes first.
 */
typedef lm_status (*lm_custom_backward_fn)(void *ud, const lm_tensor *gout, int nin, const bool *needs,
                                           lm_tensor **gin);
typedef void (*lm_custom_release_fn)(void *ud);
lm_status lm_custom_record(lm_tensor *out, const char *name, int nin, const lm_tensor *const *in,
                           lm_custom_backward_fn backward, lm_custom_release_fn release, void *ud);

/* Options of lm_gradcheck; a zero field takes its default (NULL opts: all defaults). */
typedef struct lm_gradcheck_opts {
	double eps;           /* central-difference step (default 1e-6) */
	double atol;          /* default 1e-5 */
	double rtol;          /* default 1e-3 */
	int64_t max_elements; /* per input, check at most this many elements, evenly spread (0: all) */
} lm_gradcheck_opts;

typedef struct lm_gradcheck_report {
	bool ok;
	int input;                   /* worst input */
	int64_t index[LM_MAX_DIMS];  /* worst element's index in that input */
	int ndim;
	double analytic, numeric;    /* at the worst element */
	double max_abs_err;
	char message[512];           /* human-readable summary */
} lm_gradcheck_report;

/* A function of the inputs returning a new tensor (+1), or NULL on error. */
typedef lm_tensor *(*lm_gradcheck_fn)(void *ctx, int n, lm_tensor *const *inputs);

/*
 * Compares backward's gradients of sum(fn(inputs) * r) (r a fixed random weight) with float64
 * central differences for each input that requires grad. Inputs that require grad must be float64
 * CPU leaves that share no storage with each other (NULL entries, absent optional inputs, are
 * passed through); fn must return float64. An element is close
 * when |analytic - numeric| <= atol + rtol * |numeric|. Inputs with broadcast (stride-0) dims are
 * perturbed per memory location, compared with the sum of the gradients of the elements that
 * alias it. The inputs' .grad are left as they were. Returns LM_OK with report->ok false (and the
 * worst element, by error over tolerance, in report) when gradients differ; an error status when
 * fn fails or the inputs are unsuitable.
 */
lm_status lm_gradcheck(lm_gradcheck_fn fn, void *ctx, int n, lm_tensor *const *inputs,
                       const lm_gradcheck_opts *opts, lm_gradcheck_report *report);

/* ---------------------------------------------------------------- inspecting a graph */
/*
 * For the visualizer and lessons (src/autograd/inspect.c): the graph reachable from a tensor as a
 * list of nodes in the order lm_backward runs them, each node's inputs (another node, a leaf that
 * requires grad, or a constant) with their shapes and dtypes, one node's backward rule run on a
 * given gradient (nothing accumulated anywhere), and a per-node check of the rules against float64
 * finite differences. The storage behind a tensor, for drawing views: lm_tensor_storage_numel.
 */
typedef struct lm_graph lm_graph;

typedef enum lm_graph_input_kind {
	LM_GRAPH_NODE,   /* the output of another node (node: its index) */
	LM_GRAPH_LEAF,   /* a leaf that requires grad (leaf, borrowed while the graph lives) */
	LM_GRAPH_CONST   /* an input that needs no gradient (data, a tensor made under no_grad, or an
	                    optional input not given) */
} lm_graph_input_kind;

typedef struct lm_graph_input {
	lm_graph_input_kind kind;
	int64_t node;
	const lm_tensor *leaf;
	lm_dtype dtype;
	int ndim;
	int64_t shape[LM_MAX_DIMS];
} lm_graph_input;

/* The graph of root's grad_fn: nodes numbered in the order backward runs them (0: the root's; a
 * node after all its consumers, the engine's own order), every reachable node counted, the first
 * max_nodes listed with their inputs (0: all). Holds a reference to the graph. NULL + LM_ERR_ARG
 * when root has no grad_fn. Iterative: a 100,000-node chain takes no stack. */
lm_graph *lm_graph_capture(const lm_tensor *root, int64_t max_nodes);
void lm_graph_free(lm_graph *g);
int64_t lm_graph_total(const lm_graph *g);   /* reachable nodes */
int64_t lm_graph_listed(const lm_graph *g);  /* nodes 0 .. listed - 1 can be asked about */
/* Node i (0 <= i < listed): its grad_fn name ("MulBackward"), output geometry, inputs, and whether
 * an earlier backward freed its saved tensors. */
const char *lm_graph_node_name(const lm_graph *g, int64_t i);
void lm_graph_node_output(const lm_graph *g, int64_t i, lm_dtype *dtype, int *ndim, int64_t *shape);
int lm_graph_node_ninputs(const lm_graph *g, int64_t i);
lm_status lm_graph_node_input(const lm_graph *g, int64_t i, int k, lm_graph_input *out);
bool lm_graph_node_freed(const lm_graph *g, int64_t i);
/* The distinct op names of the whole graph with their counts (most frequent first). */
int lm_graph_op_count(const lm_graph *g);
const char *lm_graph_op(const lm_graph *g, int j, int64_t *count);
/* The longest path from node 0 to any node (the graph's depth), over all reachable nodes. */
int64_t lm_graph_depth(const lm_graph *g);

/* Runs node i's backward rule on gout (the node's output shape and dtype) with grad mode off:
 * gin[k] (+1, in input k's dtype) is the gradient for input k, NULL where none is needed
 * (gin: lm_graph_node_ninputs entries). Errors: i out of range, gout of the wrong shape or dtype,
 * saved tensors freed by an earlier backward or changed in place (LM_ERR_STATE). */
lm_status lm_graph_node_backward(const lm_graph *g, int64_t i, const lm_tensor *gout, lm_tensor **gin);

/*
 * Checks every listed node's backward rule against float64 central differences, without the
 * ops' forward functions: fn (which rebuilds the graph from inputs, float64 tensors that require
 * grad) runs on copies of the inputs moved by +eps v and -eps v (v a fixed random direction), its
 * ops' outputs recorded as they are made; for node i with output y and a random weight w,
 * a = <w, dy> (dy: the central difference of y along v) is compared with b = sum over its inputs x
 * of <rule_i(w)_x, dx> (dx the input's own difference; v for an input leaf; 0 for a constant).
 * err[i] = |a - b| / max(|a|, |b|) (0 when both are below 1e-12; NaN where a node's output is not
 * float64). fn must build the graph g shows, node for node (checked by names); g itself and the
 * inputs are not modified. eps 0: 1e-6.
 */
lm_status lm_graph_gradcheck(const lm_graph *g, lm_gradcheck_fn fn, void *ctx, int n,
                             lm_tensor *const *inputs, double eps, double *err);

/* Elements of the storage t views (its whole buffer, however little of it t reaches). */
int64_t lm_tensor_storage_numel(const lm_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
