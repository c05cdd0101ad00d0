/*
 * custom.c — ops whose backward is given from outside the engine: lm_custom_record and the rule
 * of the op "custom" (lmi_bw_custom); the one release of its state is the graph's
 * (lmi_custom_drop, ../autograd/graph.c).
 *
 * lm.autograd.Function (src/lua/autograd.c) computes a forward in Lua and records it here; the
 * rule hands the output's gradient to the recorded callback and checks what comes back, so a
 * wrong gradient is reported under the Function's name, not as an engine fault.
 * Read next: ../autograd/graph.h (the node), ../autograd/engine.c (where the rule runs and the
 * state is dropped).
 */
#include <stdio.h>
#include <string.h>

#include "ops.h"

lm_status lm_custom_record(lm_tensor *out, const char *name, int nin, const lm_tensor *const *in,
                           lm_custom_backward_fn backward, lm_custom_release_fn release, void *ud)
{
	lm_status s = LM_OK;
	lmi_custom *c = NULL;
	if (!out || !backward || nin < 0 || (nin > 0 && !in)) {
		s = lmi_fail(LM_ERR_ARG, "lm_custom_record: an output, a backward and nin >= 0 inputs are needed");
		goto fail;
	}
	if (out->grad_fn) {
		s = lmi_fail(LM_ERR_STATE, "lm_custom_record: %s: the output already has a grad_fn (%s)",
		             name ? name : "?", out->grad_fn->custom ? out->grad_fn->custom->name
		                                                     : out->grad_fn->info->grad_name);
		goto fail;
	}
	if (!lm_grad_enabled()) goto fail; /* nothing to record: not an error */
	c = lm_alloc(sizeof *c);
	if (!c) {
		s = lm_last_status();
		goto fail;
	}
	*c = (lmi_custom){.backward = backward, .release = release, .ud = ud};
	snprintf(c->name, sizeof c->name, "%s", name && *name ? name : "CustomBackward");
	lmi_node *n = NULL;
	s = lmi_record(out, LMI_OP_CUSTOM, lmi_op_get(LMI_OP_CUSTOM), NULL, nin, in, &n);
	if (s || !n) goto fail;
	n->custom = c;
	return LM_OK;
fail:
	if (c) lm_free(c, sizeof *c);
	if (release) release(ud);
	return s;
}

/* custom: the callback's gradients, checked against the inputs' shapes. */
lm_status lmi_bw_custom(lmi_node *n, const lm_tensor *g, lm_tensor **gin)
{
	lmi_custom *c = n->custom;
	if (!c || c->released)
		return lmi_fail(LM_ERR_STATE, "backward: %s: its state was released (the graph was freed by "
		                "an earlier backward; pass retain_graph = true to the first)",
		                c ? c->name : "CustomBackward");
	bool needs_small[8] = {false}, *needs = needs_small;
	if (n->nin > 8 && !(needs = lm_alloc((size_t)n->nin * sizeof *needs))) return lm_last_status();
	for (int k = 0; k < n->nin; k++) needs[k] = n->in[k].needs_grad;
	lm_status s = c->backward(c->ud, g, n->nin, needs, gin);
	if (needs != needs_small) lm_free(needs, (size_t)n->nin * sizeof *needs);
	for (int k = 0; !s && k < n->nin; k++) {
		const lmi_edge *e = &n->in[k];
		if (!gin[k]) continue;
		if (!e->needs_grad) { /* a gradient nobody asked for: dropped */
			lm_tensor_release(gin[k]);
			gin[k] = NULL;
			continue;
		}
		bool same = gin[k]->ndim == e->ndim;
		for (int d = 0; same && d < e->ndim; d++) same = gin[k]->shape[d] == e->shape[d];
		if (!same)
			s = lmi_fail(LM_ERR_SHAPE, "backward: %s returned a gradient of shape %s for input %d, "
			             "whose shape is %s", c->name, lmi_shape_s(gin[k]), k + 1,
			             lmi_dims_s(e->ndim, e->shape));
		else if (gin[k]->storage->device != g->storage->device)
			s = lmi_fail(LM_ERR_DEVICE, "backward: %s returned a gradient for input %d on another "
			             "device than its output's gradient", c->name, k + 1);
	}
	if (s)
		for (int k = 0; k < n->nin; k++) {
			lm_tensor_release(gin[k]);
			gin[k] = NULL;
		}
	return s;
}
