/*
 * optable.h — the op table: one row per op, iterated by generic tests.
 *
 * A row names the op, how to run it, an independent reference (naive loops over elements read
 * with lm_tensor_get, computed in double), which dtypes it takes, how to generate inputs, its
 * tolerance, and whether it is differentiable. The generic tests (tests/core/test_optable.c,
 * tests/autograd/test_gradcheck_table.c) run every row on random shapes — odd and
 * non-power-of-two sizes, size-0 and size-1 dims, 0-d — in every layout (contiguous, transposed,
 * narrowed, expanded) and every dtype the row lists. Adding an op means adding a row
 * (optable_core.c for Foundation I ops; other files for later ops, listed in optable.c).
 */
#ifndef LUMEN_OPTABLE_H
#define LUMEN_OPTABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend/backend.h"
#include "lumen/autograd.h"
#include "lumen/core.h"
#include "lumen/ops.h"

/* ---------------------------------------------------------------- random numbers for tests */

typedef struct ot_rng {
	uint64_t s;
} ot_rng;
uint64_t ot_next(ot_rng *r);
double ot_uniform(ot_rng *r, double lo, double hi);
int64_t ot_int(ot_rng *r, int64_t lo, int64_t hi); /* [lo, hi] */

/* ---------------------------------------------------------------- layouts */

typedef enum ot_layout {
	OT_CONTIGUOUS = 0,
	OT_TRANSPOSED, /* dims reversed in memory (a permuted view) */
	OT_NARROWED,   /* a window of a larger tensor */
	OT_EXPANDED,   /* some dims broadcast with stride 0 */
	OT_LAYOUT_COUNT
} ot_layout;
const char *ot_layout_name(ot_layout l);

/* A tensor of the given shape and dtype in layout l, values uniform in [lo, hi] (integers for
 * integer dtypes). */
lm_tensor *ot_make(ot_rng *r, int ndim, const int64_t *shape, lm_dtype dt, ot_layout l, double lo,
                   double hi);
/* A random shape: ndim in [min_nd, max_nd], sizes from a pool of 0, 1, 2, 3, 5, 7, 16, 17, 33
 * (size 0 rarely). */
int ot_shape(ot_rng *r, int min_nd, int max_nd, int64_t *shape);

/* ---------------------------------------------------------------- a test case */

#define OT_MAX_IN 4
typedef struct ot_op ot_op;
typedef struct ot_case {
	const ot_op *op;
	lm_dtype dtype;
	int nin;
	lm_tensor *in[OT_MAX_IN];
	double p[4]; /* op parameters (dim, keepdim, bounds, ...) */
	char desc[256];
} ot_case;
void ot_case_free(ot_case *c);

/* ---------------------------------------------------------------- rows */

struct ot_op {
	const char *name;
	int nin;
	unsigned dtypes;    /* bit (1 << dt) for each dtype the op takes */
	bool differentiable;
	double lo, hi;      /* input value range for float inputs */
	/* Fills c->in[0..nin) and c->p (all inputs of dtype dt, layout l). */
	void (*gen)(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c);
	lm_tensor *(*run)(const ot_case *c);          /* the op under test (+1 or NULL) */
	lm_tensor *(*ref)(const ot_case *c);          /* independent reference, result dtype */
	double rtol32, atol32;                        /* tolerances for float32 results (0: default) */
	int fn;                                       /* a code the run/ref functions switch on */
};

/* The 16-bit floats and int8 are CPU dtypes that run in the float32 and int32 loops (their rows
 * are skipped on other devices, where such tensors cannot live). */
#define OT_FLOATS ((1u << LM_FLOAT32) | (1u << LM_FLOAT64) | (1u << LM_FLOAT16) | (1u << LM_BFLOAT16))
#define OT_INTS ((1u << LM_INT32) | (1u << LM_INT64) | (1u << LM_UINT8) | (1u << LM_INT8))
#define OT_ALL (OT_FLOATS | OT_INTS)

/* Sets c->op/c->dtype and a description of the inputs (call at the end of a generator). */
void ot_describe(ot_case *c, const ot_op *op, lm_dtype dt, ot_layout l);
/* Generators for the common arities. */
void ot_gen_unary(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c);
void ot_gen_binary(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c); /* broadcast */
void ot_gen_reduce(const ot_op *op, ot_rng *r, lm_dtype dt, ot_layout l, ot_case *c); /* p0 dim, p1 keepdim */

/* All rows: the core rows and every later file's. */
const ot_op *ot_all(int *count);
extern const ot_op ot_core_ops[];
extern const int ot_core_count;
extern const ot_op ot_ops2_ops[]; /* optable_ops2.c: joins, indexing, sorting, shaping, windows */
extern const int ot_ops2_count;
extern const ot_op ot_nn_ops[]; /* optable_nn.c: lumen/nn.h */
extern const int ot_nn_count;

/* ---------------------------------------------------------------- reference helpers */

/* Linear C-order index -> multi-index of shape. */
void ot_unravel(int64_t i, int ndim, const int64_t *shape, int64_t *idx);
/* Element of t at the index of the broadcast shape (ndim, idx), right-aligned, size-1 dims
 * broadcast. */
double ot_get_bcast(const lm_tensor *t, int ndim, const int64_t *idx);
/* A new contiguous tensor (zeros) of dtype dt for reference results. */
lm_tensor *ot_new(int ndim, const int64_t *shape, lm_dtype dt);
void ot_set_linear(lm_tensor *t, int64_t i, double v);
double ot_get_linear(const lm_tensor *t, int64_t i);

/*
 * Compares got with want: same shape and dtype, values within atol + rtol * |want| (NaN equals
 * NaN, infinities must match). Returns true when close; otherwise writes the first mismatch into
 * why.
 */
/* The same for gradients compared across devices: where the reference is not finite (0/0 or x/0
 * at a degenerate point, whose sign and kind follow the rounding of the intermediate values) any
 * non-finite value agrees. */
bool ot_close_grad(const lm_tensor *got, const lm_tensor *want, double rtol, double atol,
                   char *why, size_t cap);
bool ot_close(const lm_tensor *got, const lm_tensor *want, double rtol, double atol, char *why,
              size_t cap);

/* ---------------------------------------------------------------- running rows (optable_run.c) */

/* t on device dev with t's very geometry (its whole storage copied there); t (+1) when there. */
lm_tensor *ot_place(const lm_tensor *t, lm_device dev);
/* Every row on each of the nbe tables as one cmocka group (a non-CPU table: placement, values,
 * gradients against the CPU's, mixed-device errors). after_case (may be NULL) is asked after
 * each case and returns a failure message or NULL. Returns cmocka's status. */
int ot_run_rows(const char *group, int nbe, const lmi_backend *const *bes,
                const char *(*after_case)(void));

#endif
