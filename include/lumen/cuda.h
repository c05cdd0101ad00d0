/*
 * lumen/cuda.h — is there a GPU? The CUDA parts of Lumen live in a module (liblumen_cuda.so)
 * loaded on first use, so a program linked with liblumen starts fast and runs where the CUDA
 * libraries are missing; these calls load it and ask the driver.
 * Read next: lumen/kernels.h (backend = "cuda" / "auto").
 */
#ifndef LUMEN_CUDA_H
#define LUMEN_CUDA_H

#include <stdbool.h>
#include <stddef.h>

#include "lumen/core.h"

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

/* The devices the driver reports (0 without a usable GPU; Lumen uses device 0). */
int lm_cuda_device_count(void);

/* Device memory (src/backend/cuda: the caching allocator). Tensors' blocks are rounded up to
 * size classes; freed blocks stay cached for reuse. All 0 before the first tensor is moved to
 * the GPU (nothing is loaded to answer them). */
size_t lm_cuda_memory_allocated(void);     /* bytes of the blocks tensors hold */
size_t lm_cuda_max_memory_allocated(void); /* its peak since start or the last reset */
size_t lm_cuda_memory_cached(void);        /* bytes of the free blocks kept */
void lm_cuda_reset_peak_memory_stats(void);
/* Returns the cached free blocks to the driver. */
lm_status lm_cuda_empty_cache(void);
/* Waits until the GPU has run everything queued. */
lm_status lm_cuda_synchronize(void);
/* Whether the CUDA backend is loaded (a tensor was moved to the GPU); nothing is loaded to ask. */
bool lm_cuda_in_use(void);
/* GPU time by CUDA events on the stream every op runs on (the REPL's :time): start records the
 * start; stop records the end, waits for the GPU to reach it and sets *ms to the milliseconds
 * between. LM_ERR_STATE before the first tensor is on the GPU (nothing ran there to time) and for
 * a stop without a start; LM_ERR_DEVICE with CUDA's message when an event call fails. */
lm_status lm_cuda_timer_start(void);
lm_status lm_cuda_timer_stop(double *ms);

#ifdef __cplusplus
}
#endif
#endif
