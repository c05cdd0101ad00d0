/*
 * plan.h — what the launch plans (body/<pattern>_plan.h) are made of: a launch (which kernel,
 * grid, block, dynamic shared bytes), the kernels' pointer arguments, and the X-macro helpers of a
 * pattern's kernel list.
 *
 * Design: a pattern's plan header is plain C that nvcc compiles too. It holds the call (what the
 * pattern was asked: host arrays, sizes, variant), the kernels' argument struct, the kernel list
 *   #define LMK_SCAN_KERNELS(K_) K_(scan_kogge_stone, (a->X, a->Y, a->n, a->exclusive, a->S)) ...
 * (each kernel's name and its argument list, read from `a`, a pointer to the argument struct), and
 * a function that computes the launches. The emulator's host code (../<pattern>_emu.c) and the
 * CUDA host code (../cuda/<pattern>.cu) include the same plan and expand the same list (into
 * emulator entries, ../patterns.h, or <<<...>>> launches, ../cuda/cuda_host.h), so the two can
 * never launch differently, nor pass different arguments.
 * Read next: scan_plan.h (a plan), ../patterns.h (the emulator's side), ../cuda/cuda_host.h.
 */
#ifndef LUMEN_KERNELS_BODY_PLAN_H
#define LUMEN_KERNELS_BODY_PLAN_H

#include <stddef.h>
#include <stdint.h>

typedef struct lmk_dim3 {
	unsigned x, y, z;
} lmk_dim3;

/* One kernel launch of a plan. */
typedef struct lmk_launch {
	int kernel;           /* index into the pattern's kernel list (LMK_K_<name>) */
	lmk_dim3 grid, block;
	size_t shared;        /* bytes of dynamic shared memory */
	int part;             /* which part of the work it does (a scan's level; else 0) */
} lmk_launch;

/* ceil(n / per): blocks of per elements (or threads) that cover n. */
static inline unsigned lmk_blocks(int64_t n, int64_t per)
{
	return (unsigned)((n + per - 1) / per);
}

static inline lmk_launch lmk_launch_1d(int kernel, unsigned grid, unsigned block, size_t shared)
{
	lmk_launch l = {kernel, {grid, 1, 1}, {block, 1, 1}, shared, 0};
	return l;
}

/*
 * A pointer argument of a kernel, stored in the argument struct: device memory under nvcc,
 * emulator (host) memory under gcc. C passes a void * to any pointer parameter; C++ needs the
 * conversion spelled out, which lmk_ptr does (to whatever pointer type the parameter has).
 */
#ifdef __cplusplus
struct lmk_ptr {
	void *p;
	lmk_ptr() : p(0) {}
	template <typename U> lmk_ptr(U *q) : p((void *)q) {}
	template <typename U> operator U *() const { return (U *)p; }
};
#define LMK_PTR lmk_ptr
#define LMK_NULL lmk_ptr()
#define LMK_STATIC_ASSERT(c, why) static_assert(c, why)
#else
#define LMK_PTR void *
#define LMK_NULL ((void *)0)
#define LMK_STATIC_ASSERT(c, why) _Static_assert(c, why)
#endif

/* Expansions of a kernel list K_(name, args): the kernels' ids (LMK_K_scan_kogge_stone, ...),
 * in list order, and their names. */
#define LMK_KERNEL_ID(name, args) LMK_K_##name,
#define LMK_KERNEL_NAME(name, args) #name,

#endif
