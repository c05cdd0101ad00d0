/*
 * fibre.c — stacks with guard pages and the switch between the scheduler and a fibre.
 *
 * Design: one mmap per pool holds n stacks, each with a PROT_NONE guard page below it, so a kernel
 * body that overflows its stack faults at once instead of overwriting a neighbour. The pool of the
 * first emulator is kept for the life of the process (mapping and protecting 1,024 stacks costs
 * ~1 ms; a launch of 2^17 threads reuses them block after block). The switch saves only what the
 * System V ABI asks a callee to keep (rbx, rbp, r12-r15, rsp, MXCSR, x87 control word); the
 * ucontext fallback also saves the signal mask (a syscall per switch, ~0.7 us here).
 * Read next: simt.c.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/lmi.h"
#include "kernels/fibre.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define ASAN_FIBRES 1
#define STACK_SIZE (256u * 1024u) /* instrumented frames are larger */
#else
#define ASAN_FIBRES 0
#define STACK_SIZE (64u * 1024u)
#endif

struct lmi_fibre_pool {
	char *base;
	size_t map_size;
	int n;
	bool shared; /* the process-wide pool (kept), else private (unmapped on give) */
	lmi_fibre fibres[LMI_FIBRE_MAX];
};

/* The scheduler's side of the switch, per OS thread. */
static _Thread_local struct {
#if defined(__x86_64__)
	void *sp;
#else
	ucontext_t uc;
#endif
	void *asan_fake;
	const void *stack_bottom; /* the scheduler's stack, as ASan reports it on the first switch */
	size_t stack_size;
	lmi_fibre *starting; /* the fibre being entered for the first time (ucontext path) */
} sched;

/* ---------------------------------------------------------------- the switch */

#if defined(__x86_64__)
/*
 * lmi_fibre_switch_(save, to): pushes the callee-saved state on the current stack, stores the stack
 * pointer in *save, loads `to` as the stack pointer and pops the state found there. A fresh fibre's
 * stack is laid out by lmi_fibre_init so that the pops end in lmi_fibre_trampoline_ with r12 = the
 * fibre and r13 = fibre_entry.
 */
__asm__(".text\n"
	".globl lmi_fibre_switch_\n"
	".hidden lmi_fibre_switch_\n"
	".type lmi_fibre_switch_, @function\n"
	"lmi_fibre_switch_:\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	subq $8, %rsp\n"
	"	stmxcsr (%rsp)\n"
	"	fnstcw 4(%rsp)\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	ldmxcsr (%rsp)\n"
	"	fldcw 4(%rsp)\n"
	"	addq $8, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	ret\n"
	".size lmi_fibre_switch_, .-lmi_fibre_switch_\n"
	".globl lmi_fibre_trampoline_\n"
	".hidden lmi_fibre_trampoline_\n"
	".type lmi_fibre_trampoline_, @function\n"
	"lmi_fibre_trampoline_:\n"
	"	movq %r12, %rdi\n"
	"	callq *%r13\n"
	"	ud2\n"
	".size lmi_fibre_trampoline_, .-lmi_fibre_trampoline_\n");
void lmi_fibre_switch_(void **save, void *to);
void lmi_fibre_trampoline_(void);
#endif

static inline void asan_start(void **fake_save, const void *bottom, size_t size)
{
#if ASAN_FIBRES
	__sanitizer_start_switch_fiber(fake_save, bottom, size);
#else
	(void)fake_save, (void)bottom, (void)size;
#endif
}

static inline void asan_finish(void *fake, const void **bottom_old, size_t *size_old)
{
#if ASAN_FIBRES
	__sanitizer_finish_switch_fiber(fake, bottom_old, size_old);
#else
	(void)fake, (void)bottom_old, (void)size_old;
#endif
}

/* First code a fibre runs (on its own stack). */
static void fibre_entry(lmi_fibre *f)
{
	/* Learn the scheduler's stack from ASan: the yields below switch back to it. */
	asan_finish(NULL, &sched.stack_bottom, &sched.stack_size);
	f->fn(f->arg);
	lmi_fibre_exit(f);
}

#if !defined(__x86_64__)
static void fibre_entry_uc(void) { fibre_entry(sched.starting); }
#endif

void lmi_fibre_init(lmi_fibre *f, void (*fn)(void *), void *arg)
{
	f->fn = fn;
	f->arg = arg;
	f->asan_fake = NULL;
	f->kill = false;
#if defined(__x86_64__)
	uintptr_t top = ((uintptr_t)f->stack + f->stack_size) & ~(uintptr_t)15;
	uint64_t *s = (uint64_t *)top;
	s[-1] = (uint64_t)(uintptr_t)lmi_fibre_trampoline_; /* popped by `ret` */
	s[-2] = 0;                                         /* rbp */
	s[-3] = 0;                                         /* rbx */
	s[-4] = (uint64_t)(uintptr_t)f;                    /* r12: the argument */
	s[-5] = (uint64_t)(uintptr_t)fibre_entry;          /* r13: the function */
	s[-6] = 0;                                         /* r14 */
	s[-7] = 0;                                         /* r15 */
	s[-8] = 0x1F80u | ((uint64_t)0x037Fu << 32);       /* default MXCSR, x87 control word */
	f->sp = &s[-8];
#else
	getcontext(&f->uc);
	f->uc.uc_stack.ss_sp = f->stack;
	f->uc.uc_stack.ss_size = f->stack_size;
	f->uc.uc_link = NULL;
	makecontext(&f->uc, fibre_entry_uc, 0);
#endif
}

void lmi_fibre_resume(lmi_fibre *f)
{
	asan_start(&sched.asan_fake, f->stack, f->stack_size);
#if defined(__x86_64__)
	lmi_fibre_switch_(&sched.sp, f->sp);
#else
	sched.starting = f;
	swapcontext(&sched.uc, &f->uc);
#endif
	asan_finish(sched.asan_fake, NULL, NULL);
}

void lmi_fibre_yield(lmi_fibre *f)
{
	asan_start(&f->asan_fake, sched.stack_bottom, sched.stack_size);
#if defined(__x86_64__)
	lmi_fibre_switch_(&f->sp, sched.sp);
#else
	swapcontext(&f->uc, &sched.uc);
#endif
	asan_finish(f->asan_fake, &sched.stack_bottom, &sched.stack_size);
	if (f->kill) lmi_fibre_exit(f); /* abandoned: unwind nothing, just leave for good */
}

_Noreturn void lmi_fibre_exit(lmi_fibre *f)
{
	(void)f;
#if ASAN_FIBRES
	/* Frames still on this stack (ours and, for an abandoned fibre, the kernel's) never return:
	 * clear their redzones so the next fibre on this stack starts with clean shadow memory. */
	char *lo = (char *)__builtin_frame_address(0) - 1024;
	if (lo < f->stack) lo = f->stack;
	__asan_unpoison_memory_region(lo, (size_t)(f->stack + f->stack_size - lo));
#endif
	asan_start(NULL, sched.stack_bottom, sched.stack_size); /* NULL: this fibre's fake stack dies */
#if defined(__x86_64__)
	void *dead_sp;
	lmi_fibre_switch_(&dead_sp, sched.sp);
#else
	swapcontext(&f->uc, &sched.uc);
#endif
	__builtin_unreachable();
}

void lmi_fibre_abandon(lmi_fibre *f)
{
	/* Resumed once more, its yield sees the flag and exits: ASan frees its fake stack and the
	 * shadow of its frames is cleared (lmi_fibre_exit). No longjmp, no unwinding. */
	f->kill = true;
	lmi_fibre_resume(f);
}

/* ---------------------------------------------------------------- pools */

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static lmi_fibre_pool *shared_pool;

static lmi_fibre_pool *pool_new(int n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t slot = STACK_SIZE + page;
	/* calloc, not lm_alloc: the shared pool lives as long as the process and is no tensor memory */
	lmi_fibre_pool *p = calloc(1, sizeof *p);
	if (!p) return NULL;
	p->map_size = slot * (size_t)n;
	void *m = mmap(NULL, p->map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		free(p);
		return NULL;
	}
	p->base = m;
	p->n = n;
	for (int i = 0; i < n; i++) {
		char *stack = p->base + (size_t)i * slot + page; /* guard page first: stacks grow down */
		if (mprotect(stack, STACK_SIZE, PROT_READ | PROT_WRITE) != 0) {
			munmap(p->base, p->map_size);
			free(p);
			return NULL;
		}
		p->fibres[i].stack = stack;
		p->fibres[i].stack_size = STACK_SIZE;
	}
	return p;
}

static void pool_free(lmi_fibre_pool *p)
{
	munmap(p->base, p->map_size);
	free(p);
}

lm_status lmi_fibre_pool_take(const char *fname, int n, lmi_fibre_pool **out)
{
	LM_ASSERT(n >= 1 && n <= LMI_FIBRE_MAX);
	*out = NULL;
	if (pthread_mutex_trylock(&shared_lock) == 0) {
		if (!shared_pool) {
			shared_pool = pool_new(LMI_FIBRE_MAX);
			if (shared_pool) shared_pool->shared = true;
		}
		if (shared_pool) {
			*out = shared_pool;
			return LM_OK; /* the lock stays held until lmi_fibre_pool_give */
		}
		pthread_mutex_unlock(&shared_lock);
	}
	lmi_fibre_pool *p = pool_new(n);
	if (!p)
		return lmi_fail(LM_ERR_NOMEM, "%s: cannot map %d fibre stacks of %u KiB", fname, n,
		                STACK_SIZE / 1024);
	*out = p;
	return LM_OK;
}

void lmi_fibre_pool_give(lmi_fibre_pool *p)
{
	if (!p) return;
	if (p->shared)
		pthread_mutex_unlock(&shared_lock);
	else
		pool_free(p);
}

lmi_fibre *lmi_fibre_pool_get(lmi_fibre_pool *p, int i)
{
	LM_ASSERT(i >= 0 && i < p->n);
	return &p->fibres[i];
}
