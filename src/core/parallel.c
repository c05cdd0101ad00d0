/*
 * parallel.c — the one thread pool (OpenMP), the interrupt flag, and errors carried out of worker
 * threads.
 *
 * Two pools fighting over 2 cores made a PyTorch epoch 3.6x slower here, so Lumen loads the
 * OpenMP build of OpenBLAS (backend/cpu/blas.c) and keeps both thread counts equal: the CPU
 * backend registers a hook when it loads OpenBLAS (lmi_set_thread_hook), and every change of the
 * count here is passed on through it. The core knows no BLAS. Read next: iter.c (the parallel
 * elementwise driver), ../backend/cpu/blas.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "iter.h"

atomic_int lmi_interrupt_flag;

void lm_interrupt(void) { atomic_store(&lmi_interrupt_flag, 1); }
void lm_interrupt_clear(void) { atomic_store(&lmi_interrupt_flag, 0); }
bool lm_interrupted(void) { return atomic_load(&lmi_interrupt_flag) != 0; }

static atomic_int nthreads; /* set once by init, then by lm_set_num_threads */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void (*_Atomic thread_hook)(int n); /* another pool to keep at the same count, or NULL */

static int cores(void)
{
#ifdef _OPENMP
	return omp_get_num_procs();
#else
	return 1;
#endif
}

static void apply_threads(int n)
{
	atomic_store(&nthreads, n);
#ifdef _OPENMP
	omp_set_num_threads(n);
#endif
	void (*hook)(int) = atomic_load(&thread_hook);
	if (hook) hook(n);
}

/* The count at start: OMP_NUM_THREADS when the user set it (omp_get_max_threads reads it; it is the
 * cores otherwise), as PyTorch and OpenBLAS honour it. */
static void init(void)
{
#ifdef _OPENMP
	int n = omp_get_max_threads();
	apply_threads(n > 0 ? n : cores());
#else
	apply_threads(cores());
#endif
}

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

void lmi_set_thread_hook(void (*hook)(int n))
{
	atomic_store(&thread_hook, hook);
	if (hook) hook(lmi_num_threads());
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
