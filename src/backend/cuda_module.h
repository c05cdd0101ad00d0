/*
 * cuda_module.h — how liblumen reaches the CUDA module (liblumen_cuda.so) without linking CUDA:
 * the module's device table and the loader's calls.
 *
 * Design: the module is dlopen'ed on first use (cuda_loader.c). It exports one table per part:
 * this header's device table (is there a GPU, its name), which the loader asks, and a table for
 * each part that runs on the GPU, which that part looks up by name through lmi_cuda_module_symbol
 * (the course's kernels: src/kernels/cuda/cuda_api.h; a CUDA tensor backend would add its own in
 * src/backend/cuda/: an lmi_backend device table, backend.h, which the loader registers with
 * lmi_backend_register so that the ops dispatch to it). Plain C with no CUDA types: every function returns 0 or the cudaError_t it
 * met, with a message naming the CUDA call written into msg (msg_cap bytes).
 * Read next: cuda_loader.c, ../kernels/cuda/cuda_api.h.
 */
#ifndef LUMEN_BACKEND_CUDA_MODULE_H
#define LUMEN_BACKEND_CUDA_MODULE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 3: the device queries became a table of their own (2 held the kernels too). */
#define LMI_CUDA_MODULE_VERSION 3
#define LMI_CUDA_MODULE_SYMBOL "lm_cuda_module_api"

/* cudaErrorInsufficientDriver and cudaErrorNoDevice: "there is no GPU to use", not a failure. */
#define LMI_CUDA_ERR_NO_DRIVER 35
#define LMI_CUDA_ERR_NO_DEVICE 100

typedef struct lmi_cuda_module {
	int version; /* LMI_CUDA_MODULE_VERSION */
	int (*device_count)(int *count, char *msg, size_t msg_cap);
	int (*device_name)(int device, char *name, size_t name_cap, char *msg, size_t msg_cap);
} lmi_cuda_module;

/* The module's exported entry point (extern "C"). */
const lmi_cuda_module *lm_cuda_module_api(void);

/* liblumen's side (cuda_loader.c): the address of the module's exported symbol when a device is
 * usable; else NULL with LM_ERR_DEVICE and a message that starts with fname and says why (module
 * missing, no driver, no device, no such symbol). Loads the module on the first call. */
void *lmi_cuda_module_symbol(const char *fname, const char *symbol);

#ifdef __cplusplus
}
#endif
#endif
