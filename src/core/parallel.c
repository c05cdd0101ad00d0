/*
 * parallel.c — the one thread pool (OpenMP, shared with the OpenMP build of OpenBLAS), the
 * interrupt flag, errors carried out of worker threads, and build information.
 *
 * Two pools fighting over 2 cores made a PyTorch epoch 3.6x slower here, so Lumen loads the
 * OpenMP build of OpenBLAS by its full path (backend/cpu/blas.c) and sets both thread counts
 * together. lm_threading_warning() checks that openblas_get_parallel() reports OpenMP (not the
 * pthread build after all) and keeps any problem as a warning for the program to show; nothing
 * stops. Read next: iter.c (the parallel elementwise driver).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "iter.h"

#include "backend/cpu/blas.h"

atomic_int lmi_interrupt_flag;

void lm_interrupt(void) { atomic_store(&lmi_interrupt_flag, 1); }
void lm_interrupt_clear(void) { atomic_store(&lmi_interrupt_flag, 0); }
bool lm_interrupted(void) { return atomic_load(&lmi_interrupt_flag) != 0; }

static atomic_int nthreads; /* set once by init, then by lm_set_num_threads */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static char warning[512];   /* "" when the BLAS shares Lumen's pool */

static int cores(void)
{
#ifdef _OPENMP
	return omp_get_num_procs();
#else
	return 1;
#endif
}

/* The BLAS's threading model as openblas_get_parallel() reports it. */
static const char *blas_threading(const lmi_blas_api *api)
{
	if (!api) return "none";
	switch (api->get_parallel()) {
	case 0: return "sequential";
	case 1: return "pthread";
	case 2: return "openmp";
	default: return "unknown";
	}
}

/* The start-up check: is OpenBLAS the OpenMP build that shares our pool? (This loads it.) */
static void check_blas(void)
{
	const lmi_blas_api *api = lmi_blas();
	if (!api) {
		snprintf(warning, sizeof warning, "%s", lm_last_error());
		lm_clear_error();
		return;
	}
	const char *model = blas_threading(api);
	if (strcmp(model, "openmp") == 0 || strcmp(model, "sequential") == 0) return;
	Dl_info info;
	const char *file = dladdr((void *)api->get_parallel, &info) && info.dli_fname
	                           ? info.dli_fname
	                           : "libopenblas.so.0";
	snprintf(warning, sizeof warning,
	         "OpenBLAS reports '%s' threading (loaded from %s), not OpenMP: its threads and Lumen's "
	         "OpenMP loops will compete for the cores and multi-threaded runs can be several "
	         "times slower. Install libopenblas0-openmp and rebuild (CMake records its full path)",
	         model, file);
}

static void apply_threads(int n)
{
	atomic_store(&nthreads, n);
#ifdef _OPENMP
	omp_set_num_threads(n);
#endif
	lmi_blas_set_threads(n);
}

static void init(void)
{
	apply_threads(cores());
}

static pthread_once_t check_once = PTHREAD_ONCE_INIT;

void lm_set_num_threads(int n)
{
	pthread_once(&init_once, init);
	apply_threads(n <= 0 ? cores() : n);
}

int lm_get_num_threads(void) { return lmi_num_threads(); }

int lmi_num_threads(void)
{
	pthread_once(&init_once, init);
	return atomic_load_explicit(&nthreads, memory_order_relaxed);
}

const char *lm_threading_warning(void)
{
	pthread_once(&init_once, init);
	pthread_once(&check_once, check_blas);
	return warning[0] ? warning : NULL;
}

void lmi_par_init(lmi_par_err *e)
{
	atomic_store(&e->set, 0);
	e->status = LM_OK;
	e->msg[0] = '\0';
}

void lmi_par_fail(lmi_par_err *e, lm_status s, const char *fmt, ...)
{
	int expected = 0;
	if (!atomic_compare_exchange_strong(&e->set, &expected, 1)) return; /* the first one wins */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	e->status = s;
	atomic_store(&e->set, 2);
}

lm_status lmi_par_finish(lmi_par_err *e)
{
	if (atomic_load(&e->set) == 0) return LM_OK;
	return lmi_fail(e->status, "%s", e->msg);
}

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
		out->blas_threading = blas_threading(api);
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
