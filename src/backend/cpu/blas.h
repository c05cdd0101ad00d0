/*
 * blas.h — the OpenBLAS functions Lumen uses, reached through lmi_blas() (loaded on first use;
 * see blas.c for why it is not linked). A benchmark's "direct cblas_sgemm" anchor calls
 * lmi_blas()->sgemm: the same library and kernels Lumen uses.
 *
 * The CBLAS interface is declared here (its standard enum values and the signatures of
 * cblas_sgemm / cblas_dgemm with 32-bit integer sizes, the ABI of Debian's OpenBLAS), not taken
 * from cblas.h: the library is found at run time anyway, and liblumen then builds where no BLAS
 * headers are installed (a lent GPU machine: tools/gpu-check.sh builds it there).
 */
#ifndef LUMEN_BACKEND_CPU_BLAS_H
#define LUMEN_BACKEND_CPU_BLAS_H

#include "core/lmi.h"

typedef enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 } CBLAS_ORDER;
typedef enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 } CBLAS_TRANSPOSE;
typedef int blasint;

typedef struct lmi_blas_api {
	void (*sgemm)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
	              const float *, blasint, const float *, blasint, float, float *, blasint);
	void (*dgemm)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, double,
	              const double *, blasint, const double *, blasint, double, double *, blasint);
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
