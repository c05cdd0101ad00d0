/*
 * lumen/opencl.h — is there an OpenCL device? The OpenCL runtime (an ICD loader, libOpenCL.so.1,
 * and a platform behind it: PoCL runs OpenCL C on the CPU) is loaded on first use, so a program
 * linked with liblumen starts without it and runs where it is missing; these calls load it and
 * ask the platforms. Lumen uses the first device of the first platform that has one, or the one
 * LUMEN_OPENCL_DEVICE names (its index in lm_opencl_describe's order, or part of its name).
 * Read next: lumen/kernels.h (backend = "opencl", lm_kernel_opencl), docs/opencl.md.
 */
#ifndef LUMEN_OPENCL_H
#define LUMEN_OPENCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether an OpenCL device can be used; when false lm_opencl_unavailable_reason() says why (no
 * ICD loader, no platform, no device, a build without the OpenCL headers). Never fails. */
bool lm_opencl_is_available(void);
const char *lm_opencl_unavailable_reason(void);

/* The devices of every platform, in platform order (0 when none). */
int lm_opencl_device_count(void);
typedef struct lm_opencl_device_info {
	char name[256], platform[256], version[128], c_version[128], driver[128];
	int compute_units;
	int64_t global_mem, local_mem, max_alloc;
	int64_t max_work_group;
	bool fp64;
	bool in_use; /* the device Lumen runs on */
} lm_opencl_device_info;
lm_status lm_opencl_describe(int i, lm_opencl_device_info *info);
/* The name of the device Lumen uses, or NULL with the error set when there is none. */
const char *lm_opencl_device_name(void);
/* Waits until the device has run everything queued. */
lm_status lm_opencl_synchronize(void);
/* Programs built since start (compiles) and served from Lumen's cache (hits). */
void lm_opencl_program_stats(int64_t *compiles, int64_t *hits);

#ifdef __cplusplus
}
#endif
#endif
