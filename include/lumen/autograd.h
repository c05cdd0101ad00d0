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

#ifdef __cplusplus
}
#endif
#endif
