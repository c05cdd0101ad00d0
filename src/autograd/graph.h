/*
 * graph.h — the autograd graph as the ops see it: nodes, edges, and the recording hook.
 *
 * Every differentiable op, after computing its output, calls lmi_record(); when grad mode is on and
 * some input requires grad, that creates a node (the op, from the one list of ops with its
 * backward rule and typed parameters, ../ops/oplist.h; one edge per input; the tensors and
 * parameters the rule needs) and makes it out->grad_fn.
 * Edges point to the inputs' own grad_fn nodes (or to the leaf tensor to accumulate into), never
 * to the non-leaf input tensors, so intermediate data is freed as soon as nothing saved it.
 * Saved tensors are detached aliases (no grad_fn: no cycles) with the storage version at save
 * time; backward refuses to use one whose storage was changed in place since.
 * Read next: graph.c (recording, release), engine.c (backward), ../ops/ (the rules).
 */
#ifndef LUMEN_GRAPH_H
#define LUMEN_GRAPH_H

#include "../core/lmi.h"
#include "lumen/autograd.h"
#include "../ops/oplist.h"

/*
 * A backward rule (lmi_bw_fn_t, named by the op's row): given the gradient of the node's output
 * (gout, the output's shape and dtype), sets gin[k] (+1) to the gradient for input k, for each k
 * with n->in[k].needs_grad; it may leave others NULL. Rules are written with other ops (never raw
 * loops), so they run on any device; the engine calls them with grad mode off.
 */

typedef struct lmi_edge {
	lmi_node *node;   /* the input's grad_fn (+1), or NULL */
	lm_tensor *leaf;  /* the input when it is a leaf that requires grad (+1), or NULL */
	bool needs_grad;  /* node or leaf set */
	lm_dtype dtype;   /* the input's geometry, for rules that reduce gradients back to it */
	int ndim;
	int64_t shape[LM_MAX_DIMS];
} lmi_edge;

#define LMI_NODE_MAX_SAVED 5 /* flash_attention keeps q, k, v, its output and the log-sum-exps */

/* A node made by lm_custom_record (lm.autograd.Function): its rule and name come from outside. */
typedef struct lmi_custom {
	lm_custom_backward_fn backward;
	lm_custom_release_fn release; /* called once: after the rule ran without retain_graph, or at free */
	void *ud;
	bool released;
	char name[64];
} lmi_custom;

struct lmi_node {
	int64_t refcount;
	lmi_op op;
	const lmi_op_info *info;                     /* lmi_ops[op]: its name, rule, fields */
	lmi_params p;                                /* the op's parameters: p.<its params> */
	int nin;
	lmi_edge *in;                                /* nin entries */
	int nsaved;
	lm_tensor *saved[LMI_NODE_MAX_SAVED];        /* detached aliases (+1) */
	uint64_t saved_version[LMI_NODE_MAX_SAVED];
	int out_ndim;                                /* the output's geometry */
	int64_t out_shape[LM_MAX_DIMS];
	lm_dtype out_dtype;
	bool freed;                                  /* saved tensors released after backward */
	lmi_custom *custom;                          /* the op custom's rule, else NULL */
	/* engine scratch: see engine.c */
	int64_t pending;
	lm_tensor *grad;
	uint64_t visit;
};

/*
 * Records op (info: its row, lmi_ops[op]) as having made out from in[0..nin), with parameters p
 * (NULL: none). When grad mode is off or no input requires grad, sets *node = NULL and returns
 * LM_OK. Otherwise creates the node (+1 held by out->grad_fn; *node is borrowed), sets
 * out->requires_grad. On failure out is left without grad_fn; the caller releases it. in may
 * contain NULL (an absent optional input).
 */
lm_status lmi_record(lm_tensor *out, lmi_op op, const lmi_op_info *info, const lmi_params *p, int nin,
                     const lm_tensor *const *in, lmi_node **node);
/* Saves a detached alias of t (and its storage version) in the node; returns its slot via
 * n->saved[n->nsaved - 1]. */
lm_status lmi_node_save(lmi_node *n, const lm_tensor *t);
/* A saved tensor, checked against in-place changes since it was saved (LM_ERR_STATE if changed,
 * naming the op). Borrowed. */
lm_status lmi_node_saved(lmi_node *n, int k, const lm_tensor **out);
/* A custom node's rule is done with its state (no retain_graph): calls its release once. */
void lmi_custom_drop(lmi_node *n);
void lmi_node_retain(lmi_node *n);
void lmi_node_release(lmi_node *n);

/* Called by lmi_record for every node it makes, while set (inspect.c: lm_graph_gradcheck records
 * the ops' outputs this way); NULL otherwise. Per thread. */
typedef void (*lmi_record_hook_fn)(void *ctx, const lm_tensor *out, lmi_node *n);
extern _Thread_local lmi_record_hook_fn lmi_record_hook;
extern _Thread_local void *lmi_record_hook_ctx;

#endif
