/*
 * backend.c — the registry of device tables (backend.h): one table per device, the CPU's from the
 * start and the GPU's loaded on the first ask, and the check an op makes before it calls a slot.
 *
 * Read next: cpu/backend_cpu.c.
 */
#include <pthread.h>

#include "backend/backend.h"

static const lmi_backend *_Atomic tables[LMI_DEVICE_COUNT] = {[LM_CPU] = &lmi_cpu_backend};

static const char *const op_names[] = {
#define LMI_BE_NAME_(name) #name,
	LMI_BACKEND_OPS(LMI_BE_NAME_)
#undef LMI_BE_NAME_
};

const char *lmi_be_op_name(lmi_be_op op)
{
	return op >= 0 && op < LMI_BE_OP_COUNT ? op_names[op] : "?";
}

const lmi_backend *lmi_backend_register(const lmi_backend *b)
{
	LM_ASSERT(b->version == LMI_BACKEND_VERSION && b->device >= 0 && b->device < LMI_DEVICE_COUNT);
	LM_ASSERT((b->device == LM_CPU) == (b->mem == NULL));
	if (b->device != LM_CPU) lmi_device_set(b->device, b->mem);
	return atomic_exchange(&tables[b->device], b);
}

const lmi_backend *lmi_backend_unregister(lm_device d)
{
	LM_ASSERT(d > LM_CPU && d < LMI_DEVICE_COUNT);
	lmi_device_set(d, NULL);
	return atomic_exchange(&tables[d], NULL);
}

const lmi_backend *lmi_backend_for(lm_device d)
{
	if (d < 0 || d >= LMI_DEVICE_COUNT) return NULL;
	return atomic_load_explicit(&tables[d], memory_order_acquire);
}

const lmi_backend *lmi_backend_open(const char *fname, lm_device d)
{
	const lmi_backend *b = lmi_backend_for(d);
	if (b || (d != LM_CUDA && d != LM_OPENCL)) {
		if (!b) lmi_fail(LM_ERR_DEVICE, "%s: no %s backend", fname, lm_device_name(d));
		return b;
	}
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&lock);
	/* the first to get here registers it (a test may have registered its own meanwhile) */
	if (!(b = lmi_backend_for(d)) && (b = d == LM_CUDA ? lmi_cuda_backend_load(fname)
	                                                 : lmi_opencl_backend_load(fname)) != NULL)
		lmi_backend_register(b);
	pthread_mutex_unlock(&lock);
	return b;
}

int lmi_backend_count(void)
{
	int n = 0;
	for (int d = 0; d < LMI_DEVICE_COUNT; d++) n += lmi_backend_for((lm_device)d) != NULL;
	return n;
}

const lmi_backend *lmi_backend_at(int i)
{
	for (int d = 0; d < LMI_DEVICE_COUNT; d++) {
		const lmi_backend *b = lmi_backend_for((lm_device)d);
		if (b && i-- == 0) return b;
	}
	return NULL;
}
