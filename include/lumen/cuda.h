/*
 * lumen/cuda.h — is there a GPU? The CUDA parts of Lumen live in a module (liblumen_cuda.so)
 * loaded on first use, so a program linked with liblumen starts fast and runs where the CUDA
 * libraries are missing; these calls load it and ask the driver.
 * Read next: lumen/kernels.h (backend = "cuda" / "auto").
 */
#ifndef LUMEN_CUDA_H
#define LUMEN_CUDA_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a CUDA device can be used: the module loads and the driver reports at least one device.
 * When false, lm_cuda_unavailable_reason() says why. Never fails otherwise. */
bool lm_cuda_is_available(void);
/* Why lm_cuda_is_available() is false ("" when it is true): module not found, no driver, ... */
const char *lm_cuda_unavailable_reason(void);
/* The name of device 0 ("NVIDIA H100 80GB HBM3"), or NULL with the error set when there is none. */
const char *lm_cuda_device_name(void);

#ifdef __cplusplus
}
#endif
#endif
