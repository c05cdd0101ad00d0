/*
 * rule.c — helpers shared by the backward rules (see rule.h). Ops only: no loops over memory.
 */
#include "ops/rule.h"

#include "lumen/ops.h"

lm_tensor *lmi_grad_keepdim(const lm_tensor *g, int ndim, const int64_t *shape, int dim)
{
	int64_t k[LM_MAX_DIMS];
	for (int i = 0; i < ndim; i++) k[i] = (dim == LM_DIM_ALL || i == dim) ? 1 : shape[i];
	bool same = g->ndim == ndim;
	for (int i = 0; same && i < ndim; i++) same = g->shape[i] == k[i];
	if (same) return lm_tensor_retain((lm_tensor *)g);
	return lm_reshape(g, ndim, k);
}

lm_tensor *lmi_grad_scalar(const lm_tensor *like, double v, lm_dtype dt)
{
	return lmi_scalar_on(lmi_dev(like), v, dt);
}

lm_tensor *lmi_grad_mask(const lm_tensor *g, const lm_tensor *mask)
{
	lm_tensor *zero = lmi_scalar_on(lmi_dev(g), 0, g->dtype);
	if (!zero) return NULL;
	lm_tensor *r = lm_where(mask, g, zero);
	lm_tensor_release(zero);
	return r;
}
