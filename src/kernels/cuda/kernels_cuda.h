/*
 * kernels_cuda.h — the patterns' entry points inside the CUDA module (scan.cu, reduce.cu, ...),
 * which module.cu puts into the lmi_cuda_kernels table. Arguments and results as in cuda_api.h.
 * Read next: scan.cu.
 */
#ifndef LUMEN_KERNELS_CUDA_KERNELS_H
#define LUMEN_KERNELS_CUDA_KERNELS_H

#include "kernels/cuda/cuda_api.h"

#ifdef __cplusplus
extern "C" {
#endif

int lmi_cuda_scan(const lmi_scan_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_reduce(const lmi_reduce_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_histogram(const lmi_hist_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_matmul(const lmi_matmul_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_conv2d(const lmi_conv_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_spmv(const lmi_spmv_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_divergence(const lmi_divergence_call *call, lmi_cuda_timing *t, char *msg,
                        size_t msg_cap);
int lmi_cuda_access(const lmi_access_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_fused(const lmi_fused_call *call, lmi_cuda_timing *t, char *msg, size_t msg_cap);
int lmi_cuda_streams(const lmi_streams_call *call, lmi_cuda_streams_result *r, char *msg,
                     size_t msg_cap);

#ifdef __cplusplus
}
#endif
#endif
