/*
 * rule.h — small helpers for writing backward rules with ops.
 *
 * A rule is a short chain of ops whose temporaries all die at the end. An lmi_scope keeps them:
 * RULE_T(sc, x, expr) runs expr, keeps its result in sc (released by lmi_scope_end) and jumps to
 * the rule's `fail:` label when it returns NULL, so the op's own message stays the error.
 * The helpers below are the few shapes that recur: a gradient in the keepdim shape of a
 * reduction, a mask applied to a gradient, a number in a tensor's dtype. They are ops: this sits
 * in src/ops (beside the rules that use it), not in src/autograd, whose engine calls the rules.
 * Read next: the rules in the op files (binary.c, reduce.c, ...).
 */
#ifndef LUMEN_OPS_RULE_H
#define LUMEN_OPS_RULE_H

#include "autograd/graph.h"

#define LMI_SCOPE_MAX 32

typedef struct lmi_scope {
	lm_tensor *t[LMI_SCOPE_MAX];
	int n;
} lmi_scope;

/* Keeps t (which may be NULL) in s; returns t. */
static inline lm_tensor *lmi_keep(lmi_scope *s, lm_tensor *t)
{
	if (t) {
		LM_ASSERT(s->n < LMI_SCOPE_MAX);
		s->t[s->n++] = t;
	}
	return t;
}

/* Releases everything kept in s. */
static inline void lmi_scope_end(lmi_scope *s)
{
	while (s->n) lm_tensor_release(s->t[--s->n]);
}

/* The end of a rule with two inputs: the scope released, and on failure (fail) gin[0] too, since
 * the caller drops the gradients only when the rule succeeds. */
static inline lm_status lmi_rule_end(lmi_scope *s, lm_tensor **gin, bool fail)
{
	lmi_scope_end(s);
	if (!fail) return LM_OK;
	lm_tensor_release(gin[0]);
	gin[0] = NULL;
	return lm_last_status();
}

#define RULE_T(sc, var, expr)                                                                      \
	do {                                                                                         \
		if (!((var) = lmi_keep((sc), (expr)))) goto fail;                                        \
	} while (0)

/* g (the gradient of a reduction of an input of shape (ndim, shape) over dim, or over all dims
 * when dim == LM_DIM_ALL) viewed with the reduced dims kept as size 1, so it broadcasts against
 * the input. +1. */
lm_tensor *lmi_grad_keepdim(const lm_tensor *g, int ndim, const int64_t *shape, int dim);

/* A 0-d tensor holding v in dtype dt, on like's device. +1. */
lm_tensor *lmi_grad_scalar(const lm_tensor *like, double v, lm_dtype dt);

/* where(mask, g, 0): g where mask is nonzero, else zero, broadcast. +1. */
lm_tensor *lmi_grad_mask(const lm_tensor *g, const lm_tensor *mask);

#endif
