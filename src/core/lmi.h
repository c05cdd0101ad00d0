/*
 * lmi.h — internals shared by the files of liblumen (core, backend, ops, autograd, kernels).
 *
 * Defines the tensor and storage structs behind the opaque handles of lumen/core.h, the error
 * helpers every function uses, the strided-iteration helpers of the CPU loops, copies, and grad
 * mode. Nothing above liblumen (bindings, app, viz) includes this.
 * Read next: tensor.c (creation, views), iter.c, copy.c, ../backend/backend.h (the device tables
 * the ops call).
 */
#ifndef LUMEN_LMI_H
#define LUMEN_LMI_H

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "lumen/core.h"

/* ---------------------------------------------------------------- structs */

typedef struct lm_storage {
	int64_t refcount;
	lm_device device;
	void *data;
	size_t nbytes;
	uint64_t version; /* bumped by in-place writes; autograd compares saved versions */
	/* How data is freed: NULL means lm_free(data, nbytes) on the CPU, the device's free
	 * (lmi_device_ops) elsewhere. */
	void (*free_fn)(void *ctx, void *data, size_t nbytes);
	void *free_ctx;
	bool pinned; /* CPU memory page-locked for fast device copies (lm_tensor_pin_memory) */
	/* lm.empty's elements that hold no value yet (lm_tensor_mark_uninitialized): a byte per
	 * element of init_elem bytes, 1 once written; valid while version == init_version. */
	uint8_t *init_marks;
	size_t init_elem;
	uint64_t init_version;
	/* Made after how many others (lmi_storage_new; 0: not counted): a capture tells the storages
	 * made while it ran from those that were there before (capture.c). */
	uint64_t serial;
} lm_storage;

struct lmi_node;

struct lm_tensor {
	int64_t refcount;
	lm_storage *storage;
	lm_dtype dtype;
	int ndim;
	int64_t shape[LM_MAX_DIMS];
	int64_t stride[LM_MAX_DIMS]; /* elements: the public API's and Lua's (PyTorch's) strides */
	int64_t offset;              /* elements */
	/* The same geometry in bytes, set once where the tensor is made (lmi_tensor_wrap, from the
	 * type table's sizes) and read by the engine's generic code: the data pointer, the strided
	 * iterator. A typed loop indexing T * uses stride (nb / sizeof(T)). */
	int64_t nb[LM_MAX_DIMS];
	int64_t byte_offset;
	/* autograd */
	bool requires_grad;   /* leaf: set by the user; non-leaf: some input required grad */
	bool is_view;         /* shares storage with the tensor it was made from */
	lm_tensor *grad;      /* accumulated gradient of a leaf, or NULL */
	struct lmi_node *grad_fn; /* the node that made this tensor (+1), NULL for leaves */
	bool watched;         /* leaf: lm_backward reports its finished gradient (lm_set_backward_hooks) */
};

/* ---------------------------------------------------------------- errors */

/* Sets the thread's error and returns s: `return lmi_fail(LM_ERR_SHAPE, "matmul: ...");` */
lm_status lmi_fail(lm_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, returning NULL, for constructors. */
void *lmi_fail_null(lm_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Messages count from 1, as the Lua API does (lumen/core.h, "errors"): a dim, an index, a position
 * or an entry of a list is named in a message by its 1-based number. lmi_1 gives it from a 0-based
 * one; negative numbers (counted from the end, -1 the last) read the same either way.
 */
static inline long long lmi_1(int64_t i) { return i >= 0 ? (long long)i + 1 : (long long)i; }

/* Shape as text into a per-thread ring of buffers; valid until 8 more calls on this thread. */
const char *lmi_shape_s(const lm_tensor *t);
const char *lmi_dims_s(int ndim, const int64_t *shape);

#define LM_ASSERT(c)                                                                               \
	do {                                                                                         \
		if (!(c)) lmi_assert_fail(#c, __FILE__, __LINE__);                                       \
	} while (0)
_Noreturn void lmi_assert_fail(const char *what, const char *file, int line);

/* ---------------------------------------------------------------- devices (device.c) */
/*
 * What the core needs of a device other than the CPU to hold tensors there: memory, bytes moved
 * between it and the host, and the three loops the core itself runs (copies, fills, random
 * numbers). A device table of the backend (../backend/backend.h) carries these and registers
 * them with lmi_device_set when it is registered, so that the core reaches the device through
 * pointers and never calls up into the backend. Every function fails with the thread's error set.
 */
typedef enum lmi_copy_kind { LMI_TO_DEVICE, LMI_TO_HOST, LMI_ON_DEVICE } lmi_copy_kind;

/* A call of the random-number loop: the values of philox.h for blocks offset, offset + 1, ...
 * written in order to a contiguous tensor of any dtype (lmi_store's conversion). */
typedef struct lmi_rng_call {
	int kind;        /* LMI_RNG_UNIFORM, NORMAL, RANDINT, BERNOULLI (philox.h) */
	bool f64;        /* 53-bit values (a float64 result) rather than 24-bit ones */
	double a, b;     /* uniform [a, b), normal (mean a, std b), bernoulli p = a */
	int64_t lo;      /* randint: lo + (64 bits mod range) */
	uint64_t range;
	uint64_t seed, offset;
} lmi_rng_call;
/* The values of call c for n elements of contiguous host memory d of dtype dt (what the CPU
 * draws for a tensor; a device may draw on the host and copy). */
lm_status lmi_rng_fill_host(void *d, lm_dtype dt, int64_t n, const lmi_rng_call *c);

typedef struct lmi_device_ops {
	/* device memory of nbytes (a valid address for 0 bytes too); LM_ERR_NOMEM when the device
	 * has none left */
	void *(*alloc)(size_t nbytes);
	void (*free)(void *p, size_t nbytes);
	/* n raw bytes: host to device, device to host (returns when the bytes are on the host),
	 * or within the device; host_pinned: the host side is page-locked (no staging) */
	lm_status (*memcpy)(void *dst, const void *src, size_t n, lmi_copy_kind kind, bool host_pinned);
	/* dst = src broadcast to dst's shape, converting dtype; both on this device, any strides */
	lm_status (*copy)(lm_tensor *dst, const lm_tensor *src);
	lm_status (*fill)(lm_tensor *t, double value);
	/* contiguous t from call */
	lm_status (*random)(lm_tensor *t, const lmi_rng_call *call);
	/* page-locked host memory for fast copies (NULL when the device has none) */
	void *(*host_alloc)(size_t nbytes);
	void (*host_free)(void *p, size_t nbytes);
} lmi_device_ops;

/* dst = src between the CPU and a device (device.c): the bytes cross once, in the smaller of the
 * two layouts, and the conversion and broadcast run on one side; cpu_copy is the CPU's loop. */
lm_status lmi_copy_across(lm_tensor *dst, const lm_tensor *src,
                          lm_status (*cpu_copy)(lm_tensor *, const lm_tensor *));
/* Sets the operations of device d (not the CPU; NULL: none). */
void lmi_device_set(lm_device d, const lmi_device_ops *ops);
/* The operations of device d, or NULL (always NULL for the CPU, which the core serves itself). */
const lmi_device_ops *lmi_device_ops_for(lm_device d);
static inline lm_device lmi_dev(const lm_tensor *t) { return t->storage->device; }

/* ---------------------------------------------------------------- storage and tensors */

lm_storage *lmi_storage_new(size_t nbytes, lm_device dev);
void lmi_storage_retain(lm_storage *s);
void lmi_storage_release(lm_storage *s);

/* Element count of a shape, checked: LM_ERR_OVERFLOW / LM_ERR_ARG (negative size) with fname. */
lm_status lmi_numel_checked(const char *fname, int ndim, const int64_t *shape, int64_t *out);
/* Validates ndim and sizes for a new tensor, naming fname in the error. */
lm_status lmi_check_shape(const char *fname, int ndim, const int64_t *shape);
/* A new contiguous tensor on the CPU; fname names the caller in errors. */
lm_tensor *lmi_empty(const char *fname, int ndim, const int64_t *shape, lm_dtype dt);
/* The same on device dev, and on the device of tensor like (where the ops put their results). */
lm_tensor *lmi_empty_on(const char *fname, lm_device dev, int ndim, const int64_t *shape,
                        lm_dtype dt);
/* (variadic: a shape may be a compound literal, whose commas a macro would split) */
#define lmi_empty_as(fname, like, ...) lmi_empty_on(fname, lmi_dev(like), __VA_ARGS__)
/* Filled with v, zeros, and a 0-d tensor holding v, on device dev (zeros: on like's device). */
lm_tensor *lmi_full_on(const char *fname, lm_device dev, int ndim, const int64_t *shape,
                       lm_dtype dt, double v);
#define lmi_zeros_on(fname, dev, ...) lmi_full_on(fname, dev, __VA_ARGS__, 0)
#define lmi_zeros_as(like, ...) lmi_full_on("zeros", lmi_dev(like), __VA_ARGS__, 0)
#define lmi_scalar_on(dev, v, dt) lmi_full_on("scalar", dev, 0, NULL, dt, v)
/* t's values on device dev: t itself (+1) when it is there, else a contiguous copy (no
 * autograd). lmi_on_cpu: for code that reads elements through pointers. */
lm_tensor *lmi_on_device(const lm_tensor *t, lm_device dev);
#define lmi_on_cpu(t) lmi_on_device(t, LM_CPU)
/* A new tensor header over s (+1 on s) with the given geometry; no checks. */
lm_tensor *lmi_tensor_wrap(lm_storage *s, lm_dtype dt, int ndim, const int64_t *shape,
                           const int64_t *stride, int64_t offset);
/* A view of t with new geometry, sharing storage (is_view set); no autograd. */
lm_tensor *lmi_view_of(const lm_tensor *t, int ndim, const int64_t *shape, const int64_t *stride,
                       int64_t offset);
void lmi_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride);
/* Normalises dim in [-ndim, ndim) to [0, ndim); LM_ERR_INDEX with fname otherwise. */
lm_status lmi_wrap_dim(const char *fname, int dim, int ndim, int *out);
/* Address of element at linear C-order index i of t (slow; for tests and small paths). */
void *lmi_elem_ptr(const lm_tensor *t, const int64_t *idx);
/* The type table's rows (dtype.c), and the bytes of one element of a dtype already checked valid
 * whose block is one element: lm_dtype_size without the call, for the paths every op takes. */
extern const lm_dtype_traits lmi_dtypes[LM_DTYPE_COUNT];
static inline size_t lmi_elem_size(lm_dtype dt) { return lmi_dtypes[dt].type_size; }
static inline bool lmi_is_float(lm_dtype dt) { return !lmi_dtypes[dt].is_int; }
static inline bool lmi_is_block(lm_dtype dt) { return lmi_dtypes[dt].block_size > 1; }
/* The one refusal of a block-type tensor (q8_0, q4_0) by an op that reads elements: LM_ERR_DTYPE,
 * naming fname, the type and what does take it (dtype.c). */
lm_status lmi_block_refuse(const char *fname, lm_dtype dt);
static inline lm_status lmi_check_not_block(const char *fname, const lm_tensor *t)
{
	return t && lmi_is_block(t->dtype) ? lmi_block_refuse(fname, t->dtype) : LM_OK;
}
/* Reads/writes one element of a valid dtype dt at p as a double, through the table (lmi_store
 * converts as lmi_wrap_u64); float32 and float64 inline, the paths a result takes. */
static inline double lmi_load(const void *p, lm_dtype dt)
{
	return dt == LM_FLOAT32 ? (double)*(const float *)p
	     : dt == LM_FLOAT64 ? *(const double *)p : lmi_dtypes[dt].get(p);
}
static inline void lmi_store(void *p, lm_dtype dt, double v)
{
	if (dt == LM_FLOAT32)
		*(float *)p = (float)v;
	else if (dt == LM_FLOAT64)
		*(double *)p = v;
	else
		lmi_dtypes[dt].set(p, v);
}

static inline char *lmi_data(const lm_tensor *t)
{
	return (char *)t->storage->data + t->byte_offset;
}
static inline void lmi_bump_version(lm_tensor *t) { t->storage->version++; }



/*
 * Float to integer conversion, one rule for every integer dtype and every path (copies, x:long(),
 * x:byte(), fills, numbers next to integer tensors): the value is truncated toward zero and kept
 * modulo 2^bits, as integer to integer conversion keeps it (two's complement, as PyTorch and C do
 * for integers). Values that fit convert exactly, as in PyTorch; beyond the range PyTorch's result
 * is undefined (x86 gives the lowest integer) and Lumen's wraps: 300.0 -> uint8 44 and -1.0 -> 255
 * (PyTorch's too), 2^64 + 2^12 -> int64 4096. NaN and infinities give 0. Returns the low 64 bits; the caller narrows them
 * (uint64 to uint32/uint8 is modular, and gcc converts unsigned to signed modulo 2^bits).
 */
static inline uint64_t lmi_wrap_u64(double v)
{
	if (v > -9223372036854775808.0 && v < 9223372036854775808.0)
		return (uint64_t)(int64_t)v; /* the common case: a C conversion, truncating */
	if (!(v - v == 0)) return 0;  /* NaN, +-inf */
	/* |v| >= 2^63: v is an integer and a multiple of 2^11, so is its remainder, which therefore
	 * stays exact when 2^64 is added to make it non-negative */
	double m = fmod(v, 18446744073709551616.0);
	if (m < 0) m += 18446744073709551616.0;
	return (uint64_t)m;
}

/* ---------------------------------------------------------------- strided iteration */
/*
 * An lmi_iter walks up to 4 operands of the same (broadcast) shape in an order set by their
 * strides (the output's first: the densest dim innermost, C order on ties), so elementwise work
 * reads and writes memory in order whatever the layout. The shape is coalesced (adjacent dims
 * merged where every operand's strides allow), so a contiguous or wholly transposed tensor is one
 * dim. No user may depend on the visiting order. The CPU loops take the innermost dim as a 1-D kernel call and iterate the outer ones.
 */
#define LMI_ITER_MAX_OPS 8 /* a fused kernel's outputs and inputs (capture.c) */
typedef struct lmi_iter {
	int nops;
	int ndim;                               /* after coalescing, >= 1 */
	int64_t shape[LM_MAX_DIMS];             /* dims, innermost last */
	int64_t stride[LMI_ITER_MAX_OPS][LM_MAX_DIMS]; /* bytes */
	char *base[LMI_ITER_MAX_OPS];
	int64_t numel;
} lmi_iter;

/* Sets up it over ops[0..n) all viewed at shape (ndim, shape): each operand is broadcast to it
 * (its strides 0 on broadcast dims). Operands must already be broadcast-compatible. */
void lmi_iter_init(lmi_iter *it, int n, const lm_tensor *const *ops, int ndim,
                   const int64_t *shape);
/* Number of inner rows (product of all dims but the last). */
static inline int64_t lmi_iter_rows(const lmi_iter *it)
{
	return it->shape[it->ndim - 1] ? it->numel / it->shape[it->ndim - 1] : 0;
}
/* Pointers to the start of inner row r for each operand. */
void lmi_iter_row(const lmi_iter *it, int64_t r, char **ptrs);

/* Broadcast stride of t (elements) when viewed at shape (ndim, shape), right-aligned. */
void lmi_broadcast_strides(const lm_tensor *t, int ndim, const int64_t *shape, int64_t *stride);
/* The same in bytes (t->nb): what the iterator walks. */
void lmi_broadcast_nb(const lm_tensor *t, int ndim, int64_t *nb);

/* ---------------------------------------------------------------- threads and interrupts */

extern atomic_int lmi_interrupt_flag;
static inline bool lmi_check_interrupt(void)
{
	return atomic_load_explicit(&lmi_interrupt_flag, memory_order_relaxed) != 0;
}
/* Parallel loops run with OpenMP when the work exceeds this many elements. */
#define LMI_PARALLEL_GRAIN 32768
/*
 * Error carrying for OpenMP regions: workers call lmi_par_fail (the first message wins); after the
 * region the caller calls lmi_par_finish, which moves that message to the calling thread.
 */
typedef struct lmi_par_err {
	atomic_int set;
	lm_status status;
	char msg[256];
} lmi_par_err;
void lmi_par_init(lmi_par_err *e);
void lmi_par_fail(lmi_par_err *e, lm_status s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
lm_status lmi_par_finish(lmi_par_err *e);
int lmi_num_threads(void);
/* Registers a function told every thread count from now on (and the current one at once): the
 * CPU backend's way to keep OpenBLAS's pool at Lumen's count without the core knowing a BLAS. */
void lmi_set_thread_hook(void (*hook)(int n));

/* ---------------------------------------------------------------- copies (copy.c) */

/* dst = src, src broadcast to dst's shape, converting dtype. No autograd, no version bump. */
lm_status lmi_copy(lm_tensor *dst, const lm_tensor *src);
lm_status lmi_fill(lm_tensor *t, double value);
/* A new contiguous tensor with t's values in dtype dt (no autograd). */
lm_tensor *lmi_contiguous_copy(const lm_tensor *t, lm_dtype dt);
/* Refuses in-place changes of tensors that require grad while grad mode is on. */
lm_status lmi_inplace_check(const char *fname, const lm_tensor *t);

/* ---------------------------------------------------------------- grad mode (grad_mode.c) */

/* Whether grad mode is on for this thread (lm_grad_enabled). */
bool lmi_grad_enabled(void);
/* Grad mode on and some input requires grad. */
bool lmi_any_requires_grad(int n, const lm_tensor *const *ts);

/* ---------------------------------------------------------------- capture (capture.c) */
/*
 * While a capture runs on this thread (lm_capture_begin, lumen/graph.h), every kernel the engine
 * launches at the top level is recorded: a device node (lmi_compute), a copy, a fill, a draw of
 * random numbers. A launch from inside another (the copies of a dtype conversion within
 * lmi_compute) is part of it and not recorded: lmi_capture_enter returns the depth before it
 * (-1: no capture), and only a depth of 0 records.
 */
struct lm_capture;
extern _Thread_local struct lm_capture *lmi_capture_cur;
extern _Thread_local int lmi_capture_depth;
static inline int lmi_capture_enter(void) { return lmi_capture_cur ? lmi_capture_depth++ : -1; }
static inline void lmi_capture_leave(int d)
{
	if (d >= 0) lmi_capture_depth--;
}
struct lmi_exec;
void lmi_capture_exec(const struct lmi_exec *e);
void lmi_capture_copy(const lm_tensor *dst, const lm_tensor *src);
void lmi_capture_fill(const lm_tensor *t, double value);
void lmi_capture_random(const lm_tensor *t, const struct lmi_rng_call *c, lm_dtype gen_dt);
/* Work a capture cannot replay (a value read on the host and used to compute, data moved by
 * the host): the capture breaks with why, naming fname. No-op without a capture. */
void lmi_capture_opaque(const char *fname, const char *why);
/* Draws call c's kind of numbers into t again from the generator's current position (a replayed
 * random node; rng.c). */
lm_status lmi_rng_redraw(lm_tensor *t, const struct lmi_rng_call *c, lm_dtype gen_dt);
uint64_t lmi_storage_serial_next(void);

/* ---------------------------------------------------------------- the one edge upward */

/*
 * A tensor holds its autograd node (grad_fn, +1) and the core releases it with the tensor: the
 * one call from the core up into src/autograd (graph.c), as PyTorch's TensorImpl holds its
 * autograd meta. tests/core/layering.sh allows this symbol and no other upward call.
 */
struct lmi_node;
void lmi_node_release(struct lmi_node *n);

/* dlopen of one of Lumen's modules (file, e.g. "liblumen_viz.so"): from $env when set, else next
 * to the executable, <exe dir>/../lib/lumen, the build and the install directories (module.c).
 * NULL when none loads, each failure noted in tried (cap bytes). */
void *lmi_module_open(const char *file, const char *env, char *tried, size_t cap);

#endif
