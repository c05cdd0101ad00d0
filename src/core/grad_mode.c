/*
 * grad_mode.c — grad mode: whether this thread records autograd nodes (lm.no_grad turns it off).
 *
 * It lives in the core, below the ops and autograd, because the core's in-place checks
 * (lmi_inplace_check) and every op's "record a node?" test read it; the graph itself (nodes,
 * recording, backward) is src/autograd. Read next: ../autograd/graph.c.
 */
#include "lmi.h"

static _Thread_local bool grad_off;

bool lm_grad_enabled(void) { return !grad_off; }
bool lmi_grad_enabled(void) { return !grad_off; }

bool lm_set_grad_enabled(bool on)
{
	bool prev = !grad_off;
	grad_off = !on;
	return prev;
}

bool lmi_any_requires_grad(int n, const lm_tensor *const *ts)
{
	if (grad_off) return false;
	for (int i = 0; i < n; i++)
		if (ts[i] && ts[i]->requires_grad) return true;
	return false;
}
