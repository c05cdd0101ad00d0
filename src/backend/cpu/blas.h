/*
 * blas.h — the OpenBLAS functions Lumen uses, reached through lmi_blas() (loaded on first use;
 * see blas.c for why it is not linked). A benchmark's "direct cblas_sgemm" anchor calls
 * lmi_blas()->sgemm: the same library and kernels Lumen uses.
 */
#ifndef LUMEN_BACKEND_CPU_BLAS_H
#define LUMEN_BACKEND_CPU_BLAS_H

#include <cblas.h>

#include "core/lmi.h"

typedef struct lmi_blas_api {
	void (*sgemm)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE, const enum CBLAS_TRANSPOSE,
	              const blasint, const blasint, const blasint, const float, const float *,
	              const blasint, const float *, const blasint, const float, float *, const blasint);
	void (*dgemm)(const enum CBLAS_ORDER, const enum CBLAS_TRANSPOSE, const enum CBLAS_TRANSPOSE,
	              const blasint, const blasint, const blasint, const double, const double *,
	              const blasint, const double *, const blasint, const double, double *,
	              const blasint);
	void (*set_num_threads)(int);
	int (*get_parallel)(void);
	char *(*get_config)(void);
	char *(*get_corename)(void);
} lmi_blas_api;

/* The loaded library, or NULL with an error set (LM_ERR_UNSUPPORTED) when it cannot be loaded. */
const lmi_blas_api *lmi_blas(void);
bool lmi_blas_loaded(void);
/* openblas_get_parallel() in words: "sequential", "pthread", "openmp" ("none": not loaded). */
const char *lmi_blas_threading(void);
/* How the kernels were chosen ("kernels SkylakeX (chosen by Lumen)"), "" when OpenBLAS chose. */
const char *lmi_blas_coretype_note(void);

#endif
