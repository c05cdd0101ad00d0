/*
 * bench_util.h — what every benchmark needs: a monotonic clock, the median of repeated timings,
 * a CHECK that stops the program with the library's message, and the line that says which CPU
 * and SIMD path (lumen/isa.h; LUMEN_ISA=scalar|avx2|avx512 picks another) produced the figures.
 * Header-only (each bench/<name>/ directory is its own program).
 */
#ifndef LUMEN_BENCH_UTIL_H
#define LUMEN_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lumen/core.h"
#include "lumen/isa.h"

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of t[0..n) (sorts t; the mean of the middle two when n is even). */
static inline double bench_median(double *t, int n)
{
	qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
	return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* Prints the CPU, the SIMD path of Lumen's loops and any LUMEN_ISA warning before main runs:
 * every benchmark starts with this line, so each figure says which path measured it. */
__attribute__((constructor)) static void bench_print_isa(void)
{
	if (lm_isa_warning()) fprintf(stderr, "warning: %s\n", lm_isa_warning());
	printf("CPU: %s; Lumen SIMD path: %s\n", lm_cpu_model(), lm_isa_describe());
}

/* Stops the benchmark when x is false, with Lumen's last error. */
#define CHECK(x)                                                                                    \
	do {                                                                                        \
		if (!(x)) {                                                                             \
			fprintf(stderr, "%s: %s failed: %s\n", program_invocation_short_name, #x,           \
			        lm_last_error());                                                           \
			exit(1);                                                                            \
		}                                                                                       \
	} while (0)

#endif
