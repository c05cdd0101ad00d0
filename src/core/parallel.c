/*
 * parallel.c — the one thread pool (OpenMP, shared with the OpenMP build of OpenBLAS), the
 * interrupt flag, errors carried out of worker threads, and build information.
 *
 * Two pools fighting over 2 cores made a PyTorch epoch 3.6x slower here, so Lumen links the OpenMP
 * build of OpenBLAS explicitly and sets both thread counts together.
 */
#include <stdio.h>
#include <string.h>

#include "iter.h"

#ifdef LUMEN_HAVE_OPENBLAS
#include <cblas.h>
#endif

atomic_int lmi_interrupt_flag;

void lm_interrupt(void) { atomic_store(&lmi_interrupt_flag, 1); }
void lm_interrupt_clear(void) { atomic_store(&lmi_interrupt_flag, 0); }
bool lm_interrupted(void) { return atomic_load(&lmi_interrupt_flag) != 0; }

static int nthreads; /* 0: not yet set, use the default */

static int cores(void)
{
#ifdef _OPENMP
	return omp_get_num_procs();
#else
	return 1;
#endif
}

void lm_set_num_threads(int n)
{
	if (n <= 0) n = cores();
	nthreads = n;
#ifdef _OPENMP
	omp_set_num_threads(n);
#endif
#ifdef LUMEN_HAVE_OPENBLAS
	openblas_set_num_threads(n);
#endif
}

int lm_get_num_threads(void) { return lmi_num_threads(); }

int lmi_num_threads(void)
{
	if (!nthreads) lm_set_num_threads(0);
	return nthreads;
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
#ifdef LUMEN_HAVE_OPENBLAS
	static char blas[64];
	const char *cfg = openblas_get_config();
	/* "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." -> first two words */
	int words = 0;
	size_t i = 0;
	for (; cfg[i] && i < sizeof blas - 1; i++) {
		if (cfg[i] == ' ' && ++words == 2) break;
		blas[i] = cfg[i];
	}
	blas[i] = '\0';
	out->blas = blas;
	switch (openblas_get_parallel()) {
	case 0: out->blas_threading = "sequential"; break;
	case 1: out->blas_threading = "pthread"; break;
	case 2: out->blas_threading = "openmp"; break;
	default: out->blas_threading = "unknown"; break;
	}
#else
	out->blas = "none (reference loops)";
	out->blas_threading = "none";
#endif
#ifdef _OPENMP
	out->openmp = true;
#endif
#ifdef LUMEN_CUDA_BUILT
	out->cuda_built = true;
#endif
#ifdef LUMEN_SANITIZE
	out->sanitize = true;
#endif
#ifdef __VERSION__
	out->compiler = "gcc " __VERSION__;
#else
	out->compiler = "unknown";
#endif
}
