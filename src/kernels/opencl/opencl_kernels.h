/*
 * opencl_kernels.h — the course's kernels on the OpenCL device: a table of the CUDA module's shape
 * (../cuda/cuda_api.h: one run per pattern, timings and messages alike), whose entries for
 * scan, reduce, histogram, matmul, conv2d and spmv build the bodies as OpenCL C (patterns.c);
 * the others are NULL.
 */
#ifndef LUMEN_KERNELS_OPENCL_KERNELS_H
#define LUMEN_KERNELS_OPENCL_KERNELS_H

#include "kernels/cuda/cuda_api.h"

/* The table when an OpenCL device is usable; else NULL with LM_ERR_DEVICE and the reason. */
const lmi_cuda_kernels *lmi_opencl_kernels_get(const char *fname);

#endif
