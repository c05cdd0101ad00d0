/*
 * kernels_cuda.h — the patterns' entry points inside the CUDA module (scan.cu, reduce.cu), which
 * module.cu puts into the lmi_cuda_api table. Arguments and results as in ../../backend/cuda_api.h.
 * Read next: scan.cu.
 */
#ifndef LUMEN_KERNELS_CUDA_KERNELS_H
#define LUMEN_KERNELS_CUDA_KERNELS_H

#include "backend/cuda_api.h"

#ifdef __cplusplus
extern "C" {
#endif

int lmi_cuda_scan(lmi_cuda_call *call, char *msg, size_t msg_cap);
int lmi_cuda_reduce(lmi_cuda_call *call, char *msg, size_t msg_cap);

#ifdef __cplusplus
}
#endif
#endif
