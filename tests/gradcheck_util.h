/*
 * gradcheck_util.h — helpers for the autograd tests: inputs without kinks or ties, checks on
 * outputs, and gradcheck over an op-table case.
 *
 * Central differences need a smooth function around the point: relu/abs at 0, max/min at a tie,
 * clamp at a bound have no derivative there. The tests move the inputs, never the op:
 * gc_spread gives every memory location of a float64 tensor its own value on a shuffled grid
 * (no two equal, none at 0, no x = -y). Read next: tests/autograd/test_gradcheck_table.c.
 */
#ifndef LUMEN_GRADCHECK_UTIL_H
#define LUMEN_GRADCHECK_UTIL_H

#include "optable.h"

/*
 * Rewrites the distinct memory locations of t (float64) with the values lo + (k + u) (hi - lo) / N,
 * k a random permutation of 0..N-1, N the number of locations. With u in (0, 0.5) and 2u not an
 * integer, no value is 0 and no two have equal magnitude; the gap is (hi - lo) / N.
 */
void gc_spread(ot_rng *r, lm_tensor *t, double lo, double hi, double u);
/* The smallest |a - b| over the broadcast of a and b (float64); INFINITY when empty. */
double gc_min_gap(const lm_tensor *a, const lm_tensor *b);
/* The smallest |t - v| over t's elements; INFINITY when empty. */
double gc_min_dist(const lm_tensor *t, double v);
/* Whether every element is finite. */
bool gc_all_finite(const lm_tensor *t);
/* Smallest element (INFINITY when empty). */
double gc_min_value(const lm_tensor *t);
/* A gradcheck function that runs an op-table case (ctx is the ot_case). */
lm_tensor *gc_run_case(void *ctx, int n, lm_tensor *const *inputs);
/* A float64 tensor from values (C order). */
lm_tensor *gc_tensor(int ndim, const int64_t *shape, const double *values);
/* Element i (C order) of t as a double. */
double gc_at(const lm_tensor *t, int64_t i);

#endif
