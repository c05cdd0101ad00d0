/*
 * bench_util.h — what every benchmark needs: a monotonic clock, the median of repeated timings,
 * and a CHECK that stops the program with the library's message. Header-only (each bench/<name>/
 * directory is its own program).
 */
#ifndef LUMEN_BENCH_UTIL_H
#define LUMEN_BENCH_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "lumen/core.h"

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
