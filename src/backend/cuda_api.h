/*
 * cuda_api.h — the table of functions through which liblumen uses the CUDA module.
 *
 * Design: liblumen never links CUDA. The CUDA parts (the .cu files of src/backend/cuda/ and
 * src/kernels/cuda/) are built into the module liblumen_cuda.so, whose one exported function returns this table;
 * cuda_loader.c dlopens the module on first use. Both sides include this header, so it is plain C
 * with no CUDA types: every function returns 0 or the cudaError_t it met, with a message naming
 * the CUDA call written into msg (msg_cap bytes). tools/gpu-check links the module's sources
 * directly and calls the same table.
 * Read next: cuda_loader.c (liblumen's side), cuda/module.cu (the module's side).
 */
#ifndef LUMEN_BACKEND_CUDA_API_H
#define LUMEN_BACKEND_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LMI_CUDA_API_VERSION 1
#define LMI_CUDA_API_SYMBOL "lm_cuda_module_api"

/* cudaErrorInsufficientDriver and cudaErrorNoDevice: "there is no GPU to use", not a failure. */
#define LMI_CUDA_ERR_NO_DRIVER 35
#define LMI_CUDA_ERR_NO_DEVICE 100

/* The variants, numbered alike on both sides. */
enum { LMI_SCAN_KOGGE_STONE = 0, LMI_SCAN_BRENT_KUNG, LMI_SCAN_HIERARCHICAL, LMI_SCAN_ALGO_COUNT };
enum {
	LMI_REDUCE_NAIVE = 0,
	LMI_REDUCE_CONVERGENT,
	LMI_REDUCE_SHARED,
	LMI_REDUCE_COARSENED,
	LMI_REDUCE_ALGO_COUNT
};

/* One run of a pattern on host arrays: the module copies in, times the kernels, copies out. */
typedef struct lmi_cuda_call {
	int is_double;     /* element type: float (0) or double (1) */
	int algo;          /* LMI_SCAN_* or LMI_REDUCE_* */
	const void *x;     /* n input elements (host) */
	void *y;           /* scan: n output elements; reduce: 1 (host) */
	int64_t n;         /* 1 .. 2^31 - 1 */
	unsigned block;    /* threads per block: a power of two, 1..1024 */
	unsigned coarsen;  /* elements per thread where the variant coarsens (>= 1) */
	int inclusive;     /* scans */
	int repeats;       /* timed runs after one warm-up (>= 1) */
	/* results */
	double time_ms;    /* median over the timed runs, CUDA events around the kernels only */
	int launches;      /* kernel launches per run */
} lmi_cuda_call;

typedef struct lmi_cuda_api {
	int version; /* LMI_CUDA_API_VERSION */
	int (*device_count)(int *count, char *msg, size_t msg_cap);
	int (*device_name)(int device, char *name, size_t name_cap, char *msg, size_t msg_cap);
	int (*scan)(lmi_cuda_call *call, char *msg, size_t msg_cap);
	int (*reduce)(lmi_cuda_call *call, char *msg, size_t msg_cap);
} lmi_cuda_api;

/* The module's exported entry point (extern "C"). */
const lmi_cuda_api *lm_cuda_module_api(void);

/* liblumen's side (cuda_loader.c): the table when a device is usable; else NULL with
 * LM_ERR_DEVICE and a message that starts with fname and says why (module missing, no driver, no
 * device). Loads the module on the first call. */
const lmi_cuda_api *lmi_cuda_api_get(const char *fname);

#ifdef __cplusplus
}
#endif
#endif
