/*
 * build_info.c — lm_build_info_get: what this build is and runs on (version, the BLAS and its
 * threading, OpenMP, CUDA, sanitizers, compiler), for `lumen --version`, lm.build_info() and the
 * benchmarks' headers.
 *
 * It sits in the backend layer because it asks the CPU backend's BLAS (which this loads).
 * Read next: cpu/blas.c.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cpu/blas.h"

void lm_build_info_get(lm_build_info *out)
{
	memset(out, 0, sizeof *out);
	out->version = LUMEN_VERSION;
	static char blas[160];
	const lmi_blas_api *api = lmi_blas();
	if (api) {
		/* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." -> the first two words, and the kernels */
		const char *cfg = api->get_config();
		int words = 0;
		size_t i = 0;
		for (; cfg[i] && i < 63; i++) {
			if (cfg[i] == ' ' && ++words == 2) break;
			blas[i] = cfg[i];
		}
		snprintf(blas + i, sizeof blas - i, ", %s kernels", api->get_corename());
		out->blas = blas;
		out->blas_threading = lmi_blas_threading();
	} else {
		snprintf(blas, sizeof blas, "none (%s)", lm_last_error());
		out->blas = blas;
		out->blas_threading = "none";
	}
#ifdef _OPENMP
	out->openmp = true;
#endif
#ifdef LUMEN_CUDA_BUILT
	out->cuda_built = true;
#endif
#ifdef LUMEN_SANITIZE
	out->sanitize = true;
#endif
#if defined(__clang__)
	out->compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
	out->compiler = "gcc " __VERSION__;
#else
	out->compiler = "unknown";
#endif
}
