/*
 * cpu_loops_scalar.c — the scalar path of the kernels' CPU loops (cpu_simd.h): the x86-64
 * baseline, no vector instructions and no vectorisation, on any machine. Not a plain loop either:
 * the scan's dependent chain is one addition per eight elements (each block of eight is scanned
 * on its own, then offset by the carry), the sums add blocks of eight summed on their own, the
 * dot products keep four accumulators, so that the path runs at the speed of the instructions it
 * has rather than at the latency of one addition per element.
 * Read next: cpu_loops_avx2.c (the same with eight lanes), cpu_loops.h.
 */
#include <string.h>

#include "kernels/cpu_simd.h"

LMI_CPU_TARGET_BEGIN(LMI_CPU_FEATURES_SCALAR)
LMI_CPU_NO_VECTORIZE

/* The sum of each block of eight in order (x0 + x1, + x2, ... + x7: blocks are independent, so
 * they overlap in the pipeline), added into s; then the tail in order. */
#define BLOCK_SUM(T) (((((((x[i] + x[i + 1]) + x[i + 2]) + x[i + 3]) + x[i + 4]) + x[i + 5]) + \
                       x[i + 6]) + x[i + 7])
#define SUM(T, name)                                                                               \
	static double name(const void *xv, int64_t n)                                              \
	{                                                                                          \
		const T *x = xv;                                                                   \
		T s = 0;                                                                           \
		int64_t i = 0;                                                                     \
		for (; i + 8 <= n; i += 8) {                                                       \
			LMI_CPU_PREFETCH(x + i);                                                   \
			s += BLOCK_SUM(T);                                                         \
		}                                                                                  \
		for (; i < n; i++) s += x[i];                                                      \
		return s;                                                                          \
	}
SUM(float, sum_f32)
SUM(double, sum_f64)

/* A block of eight: its own prefix sums p1..p7 (independent of the carry, so blocks overlap in
 * the pipeline; p7 is BLOCK_SUM's sum), then y = carry + p, and one addition into the carry and
 * one into the block sums' total (SUM's s). */
#define BLOCK8(T, EXCL)                                                                            \
	{                                                                                          \
		T x0 = x[i], p1 = x0 + x[i + 1], p2 = p1 + x[i + 2], p3 = p2 + x[i + 3];           \
		T p4 = p3 + x[i + 4], p5 = p4 + x[i + 5], p6 = p5 + x[i + 6], p7 = p6 + x[i + 7];  \
		if (EXCL) {                                                                        \
			y[i] = carry, y[i + 1] = carry + x0, y[i + 2] = carry + p1;                \
			y[i + 3] = carry + p2, y[i + 4] = carry + p3, y[i + 5] = carry + p4;       \
			y[i + 6] = carry + p5, y[i + 7] = carry + p6;                              \
		} else {                                                                           \
			y[i] = carry + x0, y[i + 1] = carry + p1, y[i + 2] = carry + p2;           \
			y[i + 3] = carry + p3, y[i + 4] = carry + p4, y[i + 5] = carry + p5;       \
			y[i + 6] = carry + p6, y[i + 7] = carry + p7;                              \
		}                                                                                  \
		carry += p7;                                                                       \
		s += p7;                                                                           \
	}

#define SCAN(T, name)                                                                              \
	static double name(const void *xv, void *yv, int64_t n, double carry_in, int exclusive,     \
	                   int stream)                                                             \
	{                                                                                          \
		const T *x = xv;                                                                   \
		T *y = yv, carry = (T)carry_in, s = 0;                                             \
		int64_t i = 0;                                                                     \
		(void)stream;                                                                      \
		if (exclusive)                                                                     \
			for (; i + 8 <= n; i += 8) {                                               \
				LMI_CPU_PREFETCH(x + i);                                           \
				BLOCK8(T, 1)                                                       \
			}                                                                          \
		else                                                                               \
			for (; i + 8 <= n; i += 8) {                                               \
				LMI_CPU_PREFETCH(x + i);                                           \
				BLOCK8(T, 0)                                                       \
			}                                                                          \
		for (; i < n; i++) {                                                               \
			T v = x[i];                                                                \
			y[i] = exclusive ? carry : carry + v;                                      \
			carry += v;                                                                \
			s += v;                                                                    \
		}                                                                                  \
		return s;                                                                          \
	}
SCAN(float, scan_f32)
SCAN(double, scan_f64)

#define DOT(T, name)                                                                               \
	static T name(const int32_t *col, const T *val, const T *x, int64_t lo, int64_t hi)        \
	{                                                                                          \
		T a = 0, b = 0, c = 0, d = 0;                                                      \
		int64_t i = lo;                                                                    \
		for (; i + 4 <= hi; i += 4) {                                                      \
			a += val[i] * x[col[i]], b += val[i + 1] * x[col[i + 1]];                  \
			c += val[i + 2] * x[col[i + 2]], d += val[i + 3] * x[col[i + 3]];          \
		}                                                                                  \
		for (; i < hi; i++) a += val[i] * x[col[i]];                                       \
		return (a + b) + (c + d);                                                          \
	}
DOT(float, dot_f32)
DOT(double, dot_f64)

#define SLOT(T, name)                                                                              \
	static void name(T *acc, const T *val, const int32_t *col, const T *x, int64_t n,          \
	                 const int32_t *nnz, int32_t t, const T *next_val, const int32_t *next_col) \
	{                                                                                          \
		(void)next_val, (void)next_col;                                                    \
		for (int64_t i = 0; i < n; i++)                                                    \
			if (!nnz || nnz[i] > t) acc[i] += val[i] * x[col[i]];                      \
	}
SLOT(float, slot_f32)
SLOT(double, slot_f64)

#include "kernels/cpu_loops.h"

LMI_CPU_TARGET_END

const lmi_cpu_loops lmi_cpu_loops_scalar = {
	.isa = LMI_CPU_SCALAR,
	.scan_how = "blocks of 8 scanned in scalar registers, then offset by the carry",
	LMI_CPU_LOOPS_ENTRIES,
};
