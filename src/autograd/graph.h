/*
 * graph.h — the autograd graph as the ops see it: nodes, edges, and the recording hook.
 *
 * Every differentiable op, after computing its output, calls lmi_record(); when grad mode is on and
 * some input requires grad, that creates a node (the op's lmi_opdef with its backward rule, one
 * edge per input, and the tensors and parameters the rule needs) and makes it out->grad_fn.
 * Edges point to the inputs' own grad_fn nodes (or to the leaf tensor to accumulate into), never
 * to the non-leaf input tensors, so intermediate data is freed as soon as nothing saved it.
 * Saved tensors are detached aliases (no grad_fn: no cycles) with the storage version at save
 * time; backward refuses to use one whose storage was changed in place since.
 * Read next: graph.c (recording, release), engine.c (backward), ../ops/ (the rules).
 */
#ifndef LUMEN_GRAPH_H
#define LUMEN_GRAPH_H

#include "../core/lmi.h"

typedef struct lmi_node lmi_node;

/*
 * A backward rule: given the gradient of the node's output (gout, the output's shape and dtype),
 * sets gin[k] (+1) to the gradient for input k, for each k with n->in[k].needs_grad; it may leave
 * others NULL. Rules are written with other ops (never raw loops), so they run on any device; the
 * engine calls them with grad mode off.
 */
typedef lm_status (*lmi_backward_fn)(lmi_node *n, const lm_tensor *gout, lm_tensor **gin);

typedef struct lmi_opdef {
	const char *name; /* grad_fn name, e.g. "MulBackward" */
	lmi_backward_fn backward;
} lmi_opdef;

typedef struct lmi_edge {
	lmi_node *node;   /* the input's grad_fn (+1), or NULL */
	lm_tensor *leaf;  /* the input when it is a leaf that requires grad (+1), or NULL */
	bool needs_grad;  /* node or leaf set */
	lm_dtype dtype;   /* the input's geometry, for rules that reduce gradients back to it */
	int ndim;
	int64_t shape[LM_MAX_DIMS];
} lmi_edge;

#define LMI_NODE_MAX_SAVED 4
#define LMI_NODE_NPARAMS 24

struct lmi_node {
	int64_t refcount;
	const lmi_opdef *def;
	int nin;
	lmi_edge *in;                                /* nin entries */
	int nsaved;
	lm_tensor *saved[LMI_NODE_MAX_SAVED];        /* detached aliases (+1) */
	uint64_t saved_version[LMI_NODE_MAX_SAVED];
	double f[4];                                 /* op parameters, as the op defines them */
	int64_t i[LMI_NODE_NPARAMS];
	int out_ndim;                                /* the output's geometry */
	int64_t out_shape[LM_MAX_DIMS];
	lm_dtype out_dtype;
	bool freed;                                  /* saved tensors released after backward */
	/* engine scratch: see engine.c */
	int64_t pending;
	lm_tensor *grad;
	uint64_t visit;
};

/*
 * Records the op that made out from in[0..nin). When grad mode is off or no input requires grad,
 * sets *node = NULL and returns LM_OK. Otherwise creates the node (+1 held by out->grad_fn; *node
 * is borrowed), sets out->requires_grad. On failure out is left without grad_fn; the caller
 * releases it. in may contain NULL (an absent optional input).
 */
lm_status lmi_record(lm_tensor *out, const lmi_opdef *def, int nin, const lm_tensor *const *in,
                     lmi_node **node);
/* Saves a detached alias of t (and its storage version) in the node; returns its slot via
 * n->saved[n->nsaved - 1]. */
lm_status lmi_node_save(lmi_node *n, const lm_tensor *t);
/* A saved tensor, checked against in-place changes since it was saved (LM_ERR_STATE if changed,
 * naming the op). Borrowed. */
lm_status lmi_node_saved(lmi_node *n, int k, const lm_tensor **out);
void lmi_node_retain(lmi_node *n);
void lmi_node_release(lmi_node *n);

/* Called by lmi_record for every node it makes, while set (inspect.c: lm_graph_gradcheck records
 * the ops' outputs this way); NULL otherwise. Per thread. */
typedef void (*lmi_record_hook_fn)(void *ctx, const lm_tensor *out, lmi_node *n);
extern _Thread_local lmi_record_hook_fn lmi_record_hook;
extern _Thread_local void *lmi_record_hook_ctx;

#endif
