/*
 * module.cu — the entry points of the CUDA module (liblumen_cuda.so): the device table that
 * liblumen's loader (../../backend/cuda_loader.c) asks for, and the table of the patterns' runs.
 *
 * Design: the only exported symbols are lm_cuda_module_api() (../../backend/cuda_module.h) and
 * lm_cuda_kernels_api() (cuda_api.h); everything else is reached through the tables, so liblumen
 * needs no CUDA headers and the module can be absent. Every CUDA call is checked;
 * cudaErrorInsufficientDriver (35) and cudaErrorNoDevice (100) come back as they are, and the
 * loader reads them as "no GPU". The device queries live here until a CUDA tensor backend
 * (src/backend/cuda/) takes them over.
 * Read next: cuda_api.h, scan.cu.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "backend/cuda_module.h"
#include "kernels/cuda/cuda_api.h"
#include "kernels/cuda/kernels_cuda.h"

static int device_count(int *count, char *msg, size_t msg_cap)
{
	*count = 0;
	cudaError_t e = cudaGetDeviceCount(count);
	if (e != cudaSuccess) {
		snprintf(msg, msg_cap, "cudaGetDeviceCount: %s (error %d)", cudaGetErrorString(e), (int)e);
		*count = 0;
		return (int)e;
	}
	return 0;
}

static int device_name(int device, char *name, size_t name_cap, char *msg, size_t msg_cap)
{
	cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceProperties(&prop, device);
	if (e != cudaSuccess) {
		snprintf(msg, msg_cap, "cudaGetDeviceProperties(%d): %s (error %d)", device,
		         cudaGetErrorString(e), (int)e);
		return (int)e;
	}
	snprintf(name, name_cap, "%s", prop.name);
	return 0;
}

static const lmi_cuda_module module = {LMI_CUDA_MODULE_VERSION, device_count, device_name};

static const lmi_cuda_kernels kernels = {
	LMI_CUDA_KERNELS_VERSION, lmi_cuda_scan,   lmi_cuda_reduce, lmi_cuda_histogram,
	lmi_cuda_matmul,          lmi_cuda_conv2d, lmi_cuda_spmv,   lmi_cuda_divergence,
	lmi_cuda_streams,         lmi_cuda_access, lmi_cuda_fused,
};

extern "C" const lmi_cuda_module *lm_cuda_module_api(void) { return &module; }
extern "C" const lmi_cuda_kernels *lm_cuda_kernels_api(void) { return &kernels; }
