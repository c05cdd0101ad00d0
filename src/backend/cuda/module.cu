/*
 * module.cu — the entry point of the CUDA module (liblumen_cuda.so): the function table that
 * liblumen's loader (../cuda_loader.c) asks for, with the device queries and the patterns' runs.
 *
 * Design: the only exported symbol is lm_cuda_module_api(); everything else is reached through
 * the table, so liblumen needs no CUDA headers and the module can be absent. Every CUDA call is
 * checked; cudaErrorInsufficientDriver (35) and cudaErrorNoDevice (100) come back as they are, and
 * the loader reads them as "no GPU".
 * Read next: ../cuda_api.h, ../../kernels/cuda/scan.cu.
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "backend/cuda_api.h"
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

static const lmi_cuda_api table = {
	LMI_CUDA_API_VERSION, device_count,     device_name,       lmi_cuda_scan,
	lmi_cuda_reduce,      lmi_cuda_histogram, lmi_cuda_matmul, lmi_cuda_conv2d,
	lmi_cuda_spmv,        lmi_cuda_divergence, lmi_cuda_streams,
};

extern "C" const lmi_cuda_api *lm_cuda_module_api(void) { return &table; }
