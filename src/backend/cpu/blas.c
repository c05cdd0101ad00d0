/*
 * blas.c — OpenBLAS, loaded on first use with dlopen: the OpenMP build by its full path, with the
 * kernels chosen for this CPU.
 *
 * Why not link it: (1) Debian's alternatives make libopenblas.so.0 the pthread build, and two
 * thread pools fighting over the cores made training several times slower here, so Lumen wants
 * the OpenMP build, found at the path CMake recorded (LUMEN_OPENBLAS_PATH); (2) OpenBLAS chooses
 * its kernels in a library constructor from the CPU model, and on this virtual CPU ("Intel Xeon
 * Processor", AVX-512) it falls back to the generic Prescott kernels, 2x slower for SGEMM. The
 * constructor honours OPENBLAS_CORETYPE, so before loading, Lumen sets it from the CPU's features
 * (AVX-512 -> SkylakeX, AVX2+FMA -> Haswell) unless the user set it. Loading late also keeps
 * `lumen -e ''` from paying for OpenBLAS. Once loaded, its pool follows Lumen's thread count (a hook
 * registered with the core), and lm_threading_warning() checks that openblas_get_parallel()
 * reports OpenMP (not the pthread build after all), keeping any problem as a warning for the
 * program to show. Read next: matmul.c.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/blas.h"

#ifndef LUMEN_OPENBLAS_PATH
#define LUMEN_OPENBLAS_PATH "libopenblas.so.0"
#endif

static lmi_blas_api api;
static bool loaded;
static char load_error[512];
static char coretype_note[128];
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char warning[512]; /* lm_threading_warning: "" when the BLAS shares Lumen's pool */

/* The OpenBLAS kernel family for this CPU, from its features (NULL: let OpenBLAS decide). */
static const char *best_coretype(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
	return NULL;
}

static void load(void)
{
	const char *user = getenv("OPENBLAS_CORETYPE");
	if (user) {
		snprintf(coretype_note, sizeof coretype_note, "OPENBLAS_CORETYPE=%s (from the environment)", user);
	} else {
		const char *best = best_coretype();
		if (best) {
			setenv("OPENBLAS_CORETYPE", best, 0);
			snprintf(coretype_note, sizeof coretype_note, "kernels %s (chosen by Lumen)", best);
		}
	}
	void *h = dlopen(LUMEN_OPENBLAS_PATH, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_error, sizeof load_error, "cannot load OpenBLAS from %s: %s (apt-get install "
		         "libopenblas0-openmp)", LUMEN_OPENBLAS_PATH, dlerror());
		return;
	}
#define SYM(field, name)                                                                            \
	do {                                                                                        \
		*(void **)&api.field = dlsym(h, name);                                                  \
		if (!api.field) {                                                                       \
			snprintf(load_error, sizeof load_error, "OpenBLAS at %s lacks %s",                  \
			         LUMEN_OPENBLAS_PATH, name);                                                \
			return;                                                                             \
		}                                                                                       \
	} while (0)
	SYM(sgemm, "cblas_sgemm");
	SYM(dgemm, "cblas_dgemm");
	SYM(set_num_threads, "openblas_set_num_threads");
	SYM(get_parallel, "openblas_get_parallel");
	SYM(get_config, "openblas_get_config");
	SYM(get_corename, "openblas_get_corename");
#undef SYM
	loaded = true;
	lmi_set_thread_hook(api.set_num_threads); /* now, and at every lm_set_num_threads */
	/* (whether it is the OpenMP build is checked by lm_threading_warning) */
}

const lmi_blas_api *lmi_blas(void)
{
	pthread_once(&once, load);
	if (!loaded) {
		lmi_fail(LM_ERR_UNSUPPORTED, "blas: %s", load_error);
		return NULL;
	}
	return &api;
}

bool lmi_blas_loaded(void) { return loaded; }

const char *lmi_blas_threading(void)
{
	const lmi_blas_api *a = lmi_blas();
	if (!a) return "none";
	switch (a->get_parallel()) {
	case 0: return "sequential";
	case 1: return "pthread";
	case 2: return "openmp";
	default: return "unknown";
	}
}

/* The start-up check: is OpenBLAS the OpenMP build that shares our pool? (This loads it.) */
static void check_threading(void)
{
	const lmi_blas_api *a = lmi_blas();
	if (!a) {
		snprintf(warning, sizeof warning, "%s", lm_last_error());
		lm_clear_error();
		return;
	}
	const char *model = lmi_blas_threading();
	if (strcmp(model, "openmp") == 0 || strcmp(model, "sequential") == 0) return;
	Dl_info info;
	const char *file = dladdr((void *)a->get_parallel, &info) && info.dli_fname
	                           ? info.dli_fname
	                           : "libopenblas.so.0";
	snprintf(warning, sizeof warning,
	         "OpenBLAS reports '%s' threading (loaded from %s), not OpenMP: its threads and Lumen's "
	         "OpenMP loops will compete for the cores and multi-threaded runs can be several "
	         "times slower. Install libopenblas0-openmp and rebuild (CMake records its full path)",
	         model, file);
}

const char *lm_threading_warning(void)
{
	static pthread_once_t check_once = PTHREAD_ONCE_INIT;
	pthread_once(&check_once, check_threading);
	return warning[0] ? warning : NULL;
}

const char *lmi_blas_coretype_note(void) { return coretype_note; }
