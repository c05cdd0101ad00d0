/*
 * cuda_loader.c — finds, loads and asks the CUDA module (liblumen_cuda.so) once per process.
 *
 * Design: the first call dlopens the module where lmi_module_open looks ($LUMEN_CUDA_MODULE, the
 * running executable's directory, <exe dir>/../lib/lumen, the build directory, the install
 * libdir: ../core/module.c), takes its device table (cuda_module.h) and asks for the devices. The
 * outcome, with the reason when there is no usable GPU (module missing, cudaErrorInsufficientDriver
 * = 35 or cudaErrorNoDevice = 100: no driver or no device), is kept for later calls. The parts
 * that run on the GPU take their own tables from the module by name (lmi_cuda_module_symbol; the
 * kernels: ../kernels/driver.c). Plain C, no CUDA headers: liblumen does not link CUDA.
 * Read next: cuda_module.h, ../kernels/cuda/module.cu (the module's side).
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda_module.h"
#include "core/lmi.h"
#include "lumen/cuda.h"

#ifndef LUMEN_CUDA_MODULE_NAME
#define LUMEN_CUDA_MODULE_NAME "liblumen_cuda.so"
#endif

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void *handle;              /* the module, when it loaded */
static const lmi_cuda_module *api; /* its device table */
static int ndevices;              /* devices the driver reports */
static char device_name[256];
static char reason[768];          /* why there is no usable device */

static void load(void)
{
	char tried[512] = "";
	void *h = lmi_module_open(LUMEN_CUDA_MODULE_NAME, "LUMEN_CUDA_MODULE", tried, sizeof tried);
	if (!h) {
#ifdef LUMEN_CUDA_BUILT
		snprintf(reason, sizeof reason, "the CUDA module %s was not found or did not load (tried %s)",
		         LUMEN_CUDA_MODULE_NAME, tried);
#else
		snprintf(reason, sizeof reason,
		         "this build has no CUDA parts (nvcc was not found when it was configured)");
#endif
		return;
	}
	const lmi_cuda_module *(*get)(void);
	*(void **)&get = dlsym(h, LMI_CUDA_MODULE_SYMBOL);
	const lmi_cuda_module *a = get ? get() : NULL;
	if (!a || a->version != LMI_CUDA_MODULE_VERSION) {
		snprintf(reason, sizeof reason, "the CUDA module %s is not of this build (API version %d, "
		         "expected %d)", LUMEN_CUDA_MODULE_NAME, a ? a->version : -1, LMI_CUDA_MODULE_VERSION);
		dlclose(h);
		return;
	}
	char msg[512] = "";
	int count = 0, err = a->device_count(&count, msg, sizeof msg);
	if (err == LMI_CUDA_ERR_NO_DRIVER) {
		snprintf(reason, sizeof reason, "no usable CUDA driver (%s)", msg);
	} else if (err == LMI_CUDA_ERR_NO_DEVICE) {
		snprintf(reason, sizeof reason, "no CUDA device (%s)", msg);
	} else if (err) {
		snprintf(reason, sizeof reason, "the CUDA driver failed: %s", msg);
	} else if (count < 1) {
		snprintf(reason, sizeof reason, "no CUDA device (the driver reports none)");
	} else if ((err = a->device_name(0, device_name, sizeof device_name, msg, sizeof msg)) != 0) {
		snprintf(reason, sizeof reason, "the CUDA driver failed: %s", msg);
	} else {
		ndevices = count;
	}
	handle = h; /* the module stays loaded for the life of the process */
	api = a;
}

void *lmi_cuda_module_symbol(const char *fname, const char *symbol)
{
	pthread_once(&once, load);
	if (!api || ndevices < 1)
		return lmi_fail_null(LM_ERR_DEVICE, "%s: backend 'cuda' is not available: %s", fname,
		                     reason);
	void *p = dlsym(handle, symbol);
	if (!p)
		return lmi_fail_null(LM_ERR_DEVICE, "%s: backend 'cuda' is not available: the CUDA module "
		                     "%s has no %s (not of this build)", fname, LUMEN_CUDA_MODULE_NAME,
		                     symbol);
	return p;
}

bool lm_cuda_is_available(void)
{
	pthread_once(&once, load);
	return api && ndevices > 0;
}

const char *lm_cuda_unavailable_reason(void)
{
	pthread_once(&once, load);
	return api && ndevices > 0 ? "" : reason;
}

const char *lm_cuda_device_name(void)
{
	pthread_once(&once, load);
	if (!api || ndevices < 1)
		return lmi_fail_null(LM_ERR_DEVICE, "cuda.device_name: backend 'cuda' is not available: %s",
		                     reason);
	return device_name;
}


int lm_cuda_device_count(void)
{
	pthread_once(&once, load);
	return api ? ndevices : 0;
}
