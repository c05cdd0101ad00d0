/*
 * absent.c — the OpenCL entry points of a build configured without the OpenCL headers (Debian's
 * opencl-headers): every call says so, and the device's table runs nothing, so `lumen --ops`
 * lists an empty opencl column and x:to('opencl') fails with the reason.
 */
#include "backend/backend.h"
#include "lumen/kernels.h"
#include "lumen/opencl.h"
#include "kernels/opencl/opencl_kernels.h"

static const char *const why = "this build has no OpenCL parts (the OpenCL headers, Debian's "
                               "opencl-headers, were not found when it was configured)";

bool lm_opencl_is_available(void) { return false; }
const char *lm_opencl_unavailable_reason(void) { return why; }
int lm_opencl_device_count(void) { return 0; }
lm_status lm_opencl_describe(int i, lm_opencl_device_info *info)
{
	(void)info;
	return lmi_fail(LM_ERR_INDEX, "opencl.devices: device %d of 0", i);
}
const char *lm_opencl_device_name(void)
{
	return lmi_fail_null(LM_ERR_DEVICE, "opencl: %s", why);
}
lm_status lm_opencl_synchronize(void) { return lmi_fail(LM_ERR_DEVICE, "opencl.synchronize: %s", why); }
void lm_opencl_program_stats(int64_t *compiles, int64_t *hits)
{
	if (compiles) *compiles = 0;
	if (hits) *hits = 0;
}

static bool supports_node(const lmi_exec *e)
{
	(void)e;
	return false;
}

static lm_status compute(const lmi_exec *e)
{
	return lmi_fail(LM_ERR_DEVICE, "%s: %s", e->fname, why);
}

const lmi_backend lmi_opencl_backend = {
    .version = LMI_BACKEND_VERSION,
    .name = "opencl",
    .device = LM_OPENCL,
    .supports_node = supports_node,
    .compute = compute,
};

const lmi_backend *lmi_opencl_backend_load(const char *fname)
{
	return lmi_fail_null(LM_ERR_DEVICE, "%s: no OpenCL device: %s", fname, why);
}

const lmi_cuda_kernels *lmi_opencl_kernels_get(const char *fname)
{
	return lmi_fail_null(LM_ERR_DEVICE, "%s: backend 'opencl' is not available: %s", fname, why);
}

lm_status lm_kernel_opencl(const char *source, const lm_opencl_launch *launch, lm_opencl_result *res)
{
	(void)source, (void)launch, (void)res;
	return lmi_fail(LM_ERR_DEVICE, "kernels.opencl: %s", why);
}
