/*
 * lumen/core.h — the tensor core: errors, dtypes, tensors over refcounted storage, views, copies,
 * random numbers, memory accounting, threads and interrupts.
 *
 * Design: an lm_tensor is an opaque, refcounted handle (shape/strides/offset, up to LM_MAX_DIMS
 * dims) over a refcounted storage; views share storage. Every function that fails returns a status
 * (or NULL) and leaves a message in thread-local storage (lm_last_error()); nothing here prints,
 * exits or longjmps on user input.
 *
 * Ownership: every lm_tensor * returned by a function is owned by the caller (+1) and must be given
 * back with lm_tensor_release(). Arguments are borrowed; nothing steals a reference.
 *
 * Dimensions are 0-based in C; negative dims count from the end (-1 is the last), as in PyTorch.
 * Messages count from 1, as the Lua API does (see "errors" below).
 * Read next: lumen/ops.h (math), lumen/autograd.h, docs/architecture.md.
 */
#ifndef LUMEN_CORE_H
#define LUMEN_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LUMEN_VERSION_MAJOR 0
#define LUMEN_VERSION_MINOR 1
#define LUMEN_VERSION_PATCH 0
#define LUMEN_VERSION "0.1.0"

#define LM_MAX_DIMS 8

/* ---------------------------------------------------------------- errors */
/*
 * Messages are read by Lua users (the bindings pass most of them on), so they count from 1: "dim 1"
 * is the first dim, "tensor 1" the first of a list, "input 1" the first input, "position [1, 2]"
 * the first row's second element, "index 3 is out of range for dim 1 of size 2" the third entry.
 * A dim or index that a C caller passed is quoted in the same terms (C's 0 is "1"; a negative one,
 * counted from the end, reads the same in both). The C API itself stays 0-based.
 */

typedef enum lm_status {
	LM_OK = 0,
	LM_ERR_ARG,         /* a bad argument value (negative size, unknown name, ...) */
	LM_ERR_SHAPE,       /* shapes that do not fit together */
	LM_ERR_DTYPE,       /* a dtype the operation does not accept */
	LM_ERR_INDEX,       /* an index or dim out of range */
	LM_ERR_NOMEM,       /* allocation failed or exceeded the cap */
	LM_ERR_OVERFLOW,    /* an element count or byte size overflows */
	LM_ERR_DEVICE,      /* device missing or tensors on different devices */
	LM_ERR_STATE,       /* an object in the wrong state (freed graph, closed tensor, ...) */
	LM_ERR_IO,          /* file or format errors */
	LM_ERR_INTERRUPTED, /* lm_interrupt() was called while the operation ran */
	LM_ERR_UNSUPPORTED, /* a valid request this build cannot serve */
	LM_ERR_INTERNAL,
	LM_STATUS_COUNT
} lm_status;

/* The message of the last failure on this thread ("" when none). Valid until the next failure. */
const char *lm_last_error(void);
/* The status of the last failure on this thread (LM_OK when none). */
lm_status lm_last_status(void);
void lm_clear_error(void);
const char *lm_status_name(lm_status s);
/* Sets the thread's error; returns s. For callers above the core that report their own failures. */
lm_status lm_set_error(lm_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * The language of what Lumen writes for people beyond error messages of the API: the emulator's
 * sanitizer reports (races, out-of-bounds and uninitialised reads, deadlocks), the labels of the
 * visualizer's scenes, the lessons. Process-wide: what lm_set_lang chose (the lesson runner's
 * :lang), else LUMEN_LANG ('zh', 'en', a locale name), else LANG (zh_* gives Chinese), else English.
 */
typedef enum lm_lang { LM_LANG_EN = 0, LM_LANG_ZH } lm_lang;
void lm_set_lang(lm_lang lang);
void lm_reset_lang(void); /* back to the environment's */
lm_lang lm_get_lang(void);
/* The same, and where it came from (":lang", "LUMEN_LANG=zh", "LANG=...", "the default"; valid
 * until the next call on this thread). */
lm_lang lm_lang_why(const char **why);

/* ---------------------------------------------------------------- dtypes and devices */

typedef enum lm_dtype {
	LM_FLOAT32 = 0,
	LM_FLOAT64,
	LM_INT32,
	LM_INT64,
	LM_UINT8,
	LM_INT8,     /* two's complement; arithmetic wraps as the other integers do */
	LM_FLOAT16,  /* IEEE binary16: conversions round to nearest even, overflow to infinity */
	LM_BFLOAT16, /* float32's top 16 bits: rounded to nearest even */
	LM_Q8_0,     /* blocks of 32 values: a float16 scale and 32 int8 (ggml's Q8_0, 34 bytes) */
	LM_Q4_0,     /* blocks of 32 values: a float16 scale and 32 4-bit codes (ggml's Q4_0, 18 bytes) */
	LM_DTYPE_COUNT
} lm_dtype;

typedef enum lm_device { LM_CPU = 0, LM_CUDA, LM_OPENCL } lm_device;

/* The type table: one row per dtype, the one place that knows what an element is. A block holds
 * block_size elements in type_size bytes (1 element in its own size, except the block types Q8_0
 * and Q4_0: 32 values in 34 and 18 bytes, which only conversions, matmul weights and files take).
 * compute_as: the dtype a device's loops compute in when they have none for this one (float16 and
 * bfloat16: float32, rounded once into the result, as PyTorch's CPU loops do; int8: int32, the
 * result wrapped back; the block types: float32); itself for the five native dtypes. Conversions: to_float /
 * from_float convert n elements (n a multiple of block_size) to and from float32; get / set one
 * element as a double (set from a double: floats round, integers truncate, then wrap modulo
 * 2^bits as C's unsigned conversion; NaN and infinities give 0); get_int / set_int one element as
 * an exact integer (floats truncate and wrap as set; set_int into a float rounds the integer once).
 * min / max: an integer type's range (0 and 0 for floats). rank orders lm_promote_types. */
typedef struct lm_dtype_traits {
	const char *name;
	int64_t block_size;
	size_t type_size;
	bool is_int, is_signed;
	int rank;
	int64_t min, max;
	lm_dtype compute_as;
	void (*to_float)(const void *x, float *y, int64_t n);
	void (*from_float)(const float *x, void *y, int64_t n);
	double (*get)(const void *p);
	void (*set)(void *p, double v);
	int64_t (*get_int)(const void *p);
	void (*set_int)(void *p, int64_t v);
} lm_dtype_traits;

/* dt's row of the type table; NULL for a value that is not a dtype. */
const lm_dtype_traits *lm_dtype_traits_of(lm_dtype dt);

size_t lm_dtype_size(lm_dtype dt); /* bytes of an element (type_size / block_size); 0 when bad */
const char *lm_dtype_name(lm_dtype dt); /* "float32", ... ; "?" for a bad value */
/* Parses "float32"/"float"/"float64"/"double"/"int32"/"int"/"int64"/"long"/"uint8"/"byte"/"int8"/
 * "float16"/"half"/"bfloat16"/"q8_0"/"q4_0". */
lm_status lm_dtype_from_name(const char *name, lm_dtype *out);
bool lm_dtype_is_float(lm_dtype dt); /* the float types and the block types */
bool lm_dtype_is_block(lm_dtype dt);  /* q8_0, q4_0 */
/* The dtype both operands are computed in, as PyTorch promotes: float64 > float32 > float16,
 * bfloat16 > int64 > int32 > int8, uint8; float16 with bfloat16 gives float32, int8 with uint8
 * int32 (PyTorch's int16, which Lumen lacks). A block type promotes as float32. */
lm_dtype lm_promote_types(lm_dtype a, lm_dtype b);
const char *lm_device_name(lm_device d);

/* ---------------------------------------------------------------- tensors */

typedef struct lm_tensor lm_tensor;

lm_tensor *lm_tensor_retain(lm_tensor *t); /* +1; returns t (NULL passes through) */
void lm_tensor_release(lm_tensor *t);      /* -1; NULL is a no-op */

/* Creation. shape may be NULL when ndim is 0 (a 0-d tensor holding one element). */
lm_tensor *lm_empty(int ndim, const int64_t *shape, lm_dtype dt);
lm_tensor *lm_zeros(int ndim, const int64_t *shape, lm_dtype dt);
lm_tensor *lm_ones(int ndim, const int64_t *shape, lm_dtype dt);
lm_tensor *lm_full(int ndim, const int64_t *shape, lm_dtype dt, double value);
lm_tensor *lm_scalar(double value, lm_dtype dt); /* 0-d */
/* Copies numel(shape) elements of dtype dt from data (C order). */
lm_tensor *lm_from_data(const void *data, int ndim, const int64_t *shape, lm_dtype dt);
/* A tensor with the same shape, dtype and device as t (contiguous), uninitialised / zero. */
lm_tensor *lm_empty_like(const lm_tensor *t);
lm_tensor *lm_zeros_like(const lm_tensor *t);
/* [start, stop) by step (step != 0); length ceil((stop - start) / step). */
lm_tensor *lm_arange(double start, double stop, double step, lm_dtype dt);
/* The same from exact integers (values past 2^53 stay exact); an integer dtype must hold every
 * value (LM_ERR_ARG otherwise, for lm_arange too: no silent wrap-around). */
lm_tensor *lm_arange_int(int64_t start, int64_t stop, int64_t step, lm_dtype dt);
lm_tensor *lm_linspace(double start, double end, int64_t n, lm_dtype dt);
lm_tensor *lm_eye(int64_t n, int64_t m, lm_dtype dt);

/* Inspection (borrowed pointers, valid while t lives). */
int lm_tensor_ndim(const lm_tensor *t);
const int64_t *lm_tensor_shape(const lm_tensor *t);
const int64_t *lm_tensor_strides(const lm_tensor *t); /* in elements */
int64_t lm_tensor_offset(const lm_tensor *t);          /* in elements, into the storage */
/* Size of dim (negative counts from the end); -1 and an error when out of range. */
int64_t lm_tensor_size(const lm_tensor *t, int dim);
int64_t lm_tensor_numel(const lm_tensor *t);
lm_dtype lm_tensor_dtype(const lm_tensor *t);
lm_device lm_tensor_device(const lm_tensor *t);
bool lm_tensor_is_contiguous(const lm_tensor *t);
size_t lm_tensor_nbytes(const lm_tensor *t); /* numel * itemsize */
/* Address of the first element (CPU tensors). Elements lie at data + sum(i_k * stride_k) * size. */
void *lm_tensor_data(const lm_tensor *t);
/* Whether a and b share storage. */
bool lm_tensor_shares_storage(const lm_tensor *a, const lm_tensor *b);
/* Storage version: bumped by every in-place write through any view (autograd checks it). */
uint64_t lm_tensor_version(const lm_tensor *t);
/*
 * Never-written elements (what lm.empty promises, checked by the kernel emulator's initcheck):
 * marks every element of t's storage (CPU) as holding no value yet. The marks are one byte per
 * element of the storage (1: written), from the storage's start (a tensor's element at storage
 * offset o is marks[o]); lm_tensor_init_marks returns them while nothing has written the storage
 * through the tensor API since (its version is unchanged), else drops them and returns NULL
 * (NULL: every element holds a value). A caller that writes raw data sets the marks of what it
 * wrote, then calls lm_tensor_init_marks_sync (the marks then hold for the current version; all
 * set, they are dropped).
 */
lm_status lm_tensor_mark_uninitialized(lm_tensor *t);
uint8_t *lm_tensor_init_marks(lm_tensor *t);
void lm_tensor_init_marks_sync(lm_tensor *t);
/* Shape as "[2, 3]" into buf (always NUL-terminated); returns buf. */
char *lm_shape_str(int ndim, const int64_t *shape, char *buf, size_t cap);
#define LM_SHAPE_STR_MAX 200

/* The value of a one-element tensor (any shape with numel 1), as a double. */
lm_status lm_tensor_item(const lm_tensor *t, double *out);
/* Element at a full index (idx has ndim entries, negatives count from the end). */
lm_status lm_tensor_get(const lm_tensor *t, const int64_t *idx, double *out);
lm_status lm_tensor_set(lm_tensor *t, const int64_t *idx, double value);

/* ---------------------------------------------------------------- views (share storage) */

/* Reinterprets the shape; one entry may be -1. Fails when the strides cannot express it. */
lm_tensor *lm_view(const lm_tensor *t, int ndim, const int64_t *shape);
/* A view when possible, else a contiguous copy. */
lm_tensor *lm_reshape(const lm_tensor *t, int ndim, const int64_t *shape);
lm_tensor *lm_transpose(const lm_tensor *t, int d0, int d1);
lm_tensor *lm_t(const lm_tensor *t); /* 0-, 1- or 2-D: swaps the two dims of a matrix */
lm_tensor *lm_permute(const lm_tensor *t, const int *dims); /* dims has ndim entries */
lm_tensor *lm_narrow(const lm_tensor *t, int dim, int64_t start, int64_t length);
lm_tensor *lm_select(const lm_tensor *t, int dim, int64_t index); /* removes dim */
/* Broadcasts size-1 dims (and new leading dims) to shape; -1 keeps a size. */
lm_tensor *lm_expand(const lm_tensor *t, int ndim, const int64_t *shape);
/* Removes dim if its size is 1 (a no-op view otherwise); LM_ALL_DIMS removes every size-1 dim. */
lm_tensor *lm_squeeze(const lm_tensor *t, int dim);
lm_tensor *lm_unsqueeze(const lm_tensor *t, int dim); /* dim in [-ndim-1, ndim] */
lm_tensor *lm_flatten(const lm_tensor *t, int start_dim, int end_dim);
/* A view with arbitrary sizes/strides/offset over t's storage, bounds-checked against it. */
lm_tensor *lm_as_strided(const lm_tensor *t, int ndim, const int64_t *shape, const int64_t *strides,
                         int64_t offset);
/* A new handle on the same data, cut from the autograd graph. */
lm_tensor *lm_detach(const lm_tensor *t);
#define LM_ALL_DIMS (-1000)

/* ---------------------------------------------------------------- copies */

/* t itself (+1) when contiguous, else a contiguous copy. */
lm_tensor *lm_contiguous(const lm_tensor *t);
lm_tensor *lm_clone(const lm_tensor *t); /* a contiguous copy */
/* t (+1) when already of dtype dt, else a converted contiguous copy. */
lm_tensor *lm_to_dtype(const lm_tensor *t, lm_dtype dt);
/* t (+1) when already on device dev, else a contiguous copy there (differentiable: the gradient
 * comes back to t's device). The first tensor moved to LM_CUDA loads the CUDA backend; without
 * one, LM_ERR_DEVICE says why (built without CUDA, no driver, no device). */
lm_tensor *lm_to_device(const lm_tensor *t, lm_device dev);
/* A contiguous copy of CPU tensor t in page-locked memory, which crosses to a GPU without
 * staging (needs a CUDA backend); t (+1) when it is pinned already. */
lm_tensor *lm_pin_memory(const lm_tensor *t);
bool lm_tensor_is_pinned(const lm_tensor *t);
/* Copies src into dst with broadcasting and dtype conversion (float to int truncates toward 0). */
lm_status lm_copy_(lm_tensor *dst, const lm_tensor *src);
lm_status lm_fill_(lm_tensor *t, double value);
lm_status lm_zero_(lm_tensor *t);

/* ---------------------------------------------------------------- random numbers */
/*
 * Counter-based: Philox4x32-10 keyed by the seed; each call consumes a fresh range of counters, so a
 * stream is reproducible from (seed, offset) on any device.
 */
void lm_manual_seed(uint64_t seed);
uint64_t lm_rng_seed(void);
uint64_t lm_rng_offset(void); /* counters consumed so far */
void lm_rng_set_state(uint64_t seed, uint64_t offset);
/* One Philox4x32-10 block: 4 words from counter ctr[4] and key[2]. Exposed for tests. */
void lm_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

lm_tensor *lm_rand(int ndim, const int64_t *shape, lm_dtype dt);  /* U[0, 1) */
lm_tensor *lm_randn(int ndim, const int64_t *shape, lm_dtype dt); /* N(0, 1) */
lm_tensor *lm_randint(int64_t lo, int64_t hi, int ndim, const int64_t *shape, lm_dtype dt); /* [lo, hi) */
lm_status lm_uniform_(lm_tensor *t, double lo, double hi);
lm_status lm_normal_(lm_tensor *t, double mean, double std);
/* Bernoulli(p) into t (0/1 in t's dtype). */
lm_status lm_bernoulli_(lm_tensor *t, double p);

/* ---------------------------------------------------------------- memory */

typedef struct lm_memory_stats {
	size_t live_bytes;   /* bytes of storage handed out and not yet freed */
	size_t peak_bytes;   /* highest live_bytes since start or the last reset */
	size_t cached_bytes; /* freed blocks kept for reuse by the caching allocator */
	size_t limit_bytes;  /* the cap: larger totals fail with LM_ERR_NOMEM */
	uint64_t allocs;     /* allocations served */
	uint64_t cache_hits; /* of which from the cache */
	int64_t live_tensors;
} lm_memory_stats;

void lm_memory_stats_get(lm_memory_stats *out);
void lm_memory_reset_peak(void);
/* Sets the cap on live bytes (0: the default, the machine's RAM). */
void lm_memory_set_limit(size_t bytes);
/* Returns cached blocks to the system. */
void lm_memory_empty_cache(void);
/* Testing: make the k-th allocation from now fail (1 = the next); 0 disables. */
void lm_memory_fail_after(uint64_t k);
/* Whether this build's allocator caches (false in sanitizer builds). */
bool lm_memory_caching(void);

/* Raw allocations through the same counting allocator (for internal buffers and bindings). */
void *lm_alloc(size_t nbytes);
void lm_free(void *p, size_t nbytes);

/* ---------------------------------------------------------------- grad mode */

/* Grad mode of this thread (on by default): whether ops record autograd nodes (lumen/autograd.h).
 * lm_set_grad_enabled returns the previous mode. */
bool lm_grad_enabled(void);
bool lm_set_grad_enabled(bool on);

/* ---------------------------------------------------------------- threads and interrupts */

/* Sets the threads of both Lumen's parallel loops (OpenMP) and OpenBLAS. n <= 0: all cores (also
 * the default before any call). */
void lm_set_num_threads(int n);
int lm_get_num_threads(void);
/* The start-up check of the one-pool rule: NULL when OpenBLAS is the OpenMP build (or
 * sequential), else a message naming the build that was loaded and how to fix it. The program
 * should show it once; nothing else changes (a mismatch is slow, not wrong). */
const char *lm_threading_warning(void);
/* The directory of the running program (from /proc/self/exe, read once), or NULL where it cannot
 * be read: where Lumen's modules, Lua files and shaders are looked for first. */
const char *lm_program_dir(void);
/* The first of the n directories rel[i] (each a printf format whose one %s is lm_program_dir())
 * that holds the file marker (a path inside it), written into buf (cap bytes); NULL when none
 * does or the program's directory is unknown. */
const char *lm_program_data_dir(const char *const *rel, int n, const char *marker, char *buf,
                                size_t cap);

/* Asks running operations to stop (async-signal-safe). They return LM_ERR_INTERRUPTED. */
void lm_interrupt(void);
void lm_interrupt_clear(void);
bool lm_interrupted(void);

/* ---------------------------------------------------------------- build information */

typedef struct lm_build_info {
	const char *version;
	const char *blas;          /* "OpenBLAS 0.3.21" */
	const char *blas_threading; /* "openmp", "pthread", "sequential" */
	bool openmp;
	bool cuda_built;           /* CUDA parts compiled into this build */
	bool sanitize;
	const char *compiler;
	const char *threading_warning; /* lm_threading_warning(): NULL when all is well */
} lm_build_info;

void lm_build_info_get(lm_build_info *out);

#ifdef __cplusplus
}
#endif
#endif
