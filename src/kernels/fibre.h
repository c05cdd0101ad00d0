/*
 * fibre.h — the cooperative threads (fibres) on which the SIMT emulator runs one CUDA thread each.
 *
 * Design: a fibre is a stack from a pool (guard page below each stack) plus a saved stack pointer.
 * lmi_fibre_resume() switches from the scheduler into a fibre; lmi_fibre_yield() switches back. On
 * x86-64 the switch is a dozen hand-written instructions (callee-saved registers, MXCSR and the x87
 * control word); elsewhere it is ucontext's swapcontext. Every switch is announced to
 * AddressSanitizer (__sanitizer_start/finish_switch_fiber) in sanitizer builds. A fibre only ever
 * runs on the OS thread that created it, and nothing longjmps across fibres: errors are recorded
 * and the fibre yields for good.
 * Read next: simt.h (the emulator built on these), fibre.c.
 */
#ifndef LUMEN_KERNELS_FIBRE_H
#define LUMEN_KERNELS_FIBRE_H

#include <stdbool.h>
#include <stddef.h>

#include "lumen/core.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

/* The most fibres one pool holds: CUDA's limit of 1024 threads per block. */
#define LMI_FIBRE_MAX 1024

typedef struct lmi_fibre_pool lmi_fibre_pool;

typedef struct lmi_fibre {
#if defined(__x86_64__)
	void *sp; /* saved stack pointer while the fibre is switched out */
#else
	ucontext_t uc;
#endif
	char *stack;       /* lowest usable address (the guard page lies just below) */
	size_t stack_size;
	void (*fn)(void *); /* the fibre's body; must end with lmi_fibre_exit() */
	void *arg;
	void *asan_fake;   /* AddressSanitizer's fake stack of this fibre while it is switched out */
	bool kill;         /* set by lmi_fibre_abandon: the next return from yield exits */
} lmi_fibre;

/*
 * Takes a pool of at least n stacks (n <= LMI_FIBRE_MAX). The first caller gets the process-wide
 * pool, which is kept for later launches; a concurrent caller on another thread gets a private one.
 * Fails with LM_ERR_NOMEM (message naming fname) when the stacks cannot be mapped.
 */
lm_status lmi_fibre_pool_take(const char *fname, int n, lmi_fibre_pool **out);
void lmi_fibre_pool_give(lmi_fibre_pool *p);
/* Fibre i of the pool (0 <= i < n of the take). */
lmi_fibre *lmi_fibre_pool_get(lmi_fibre_pool *p, int i);

/* Prepares f to run fn(arg) from the start of its stack on the next resume. */
void lmi_fibre_init(lmi_fibre *f, void (*fn)(void *), void *arg);
/* Runs f until it yields or exits. Called from the scheduler (never from a fibre). */
void lmi_fibre_resume(lmi_fibre *f);
/* Called from inside f: back to the scheduler; returns when the scheduler resumes f. */
void lmi_fibre_yield(lmi_fibre *f);
/* Called from inside f: back to the scheduler for good (f may then be re-initialised). */
_Noreturn void lmi_fibre_exit(lmi_fibre *f);
/* The scheduler gives up on f (it yielded and will never be resumed): cleans up its stack. */
void lmi_fibre_abandon(lmi_fibre *f);

#endif
