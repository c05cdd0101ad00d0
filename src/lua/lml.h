/*
 * lml.h — what the Lua binding files share: tensor boxes, argument checks, errors, GC pacing.
 *
 * Design: a tensor is a full userdata holding one lm_tensor * (one reference, released by __gc
 * and __close; NULL once closed). Every binding is a C closure whose first upvalue is its Lua name
 * ("lm.zeros", "Tensor:view"), so every error names the function the user called. Bindings check
 * all arguments first, create the result box, then call the core and raise with the core's
 * message; no C-owned memory is ever held across a call that can raise (STYLE.md).
 * Dims and indices are 1-based in Lua (negatives count from the end) and 0-based in the core:
 * lml_checkdim / lml_checkindex convert and range-check them in Lua terms.
 * Read next: lml.c (the helpers), tensor.c (the metatable), docs/lua.md.
 */
#ifndef LUMEN_LML_H
#define LUMEN_LML_H

#include <lauxlib.h>
#include <lua.h>
#include <stddef.h>

#include "lumen/autograd.h"
#include "lumen/core.h"
#include "lumen/ops.h"

#define LML_TENSOR_MT "lumen.Tensor"

/* ---------------------------------------------------------------- registration */

/*
 * Sets table[name] = closure(fn, upvalue 1 = prefix .. name) for each entry (the table is at
 * index t). nup extra upvalues, on the stack top, are shared by every closure (popped).
 */
void lml_setfuncs(lua_State *L, int t, const char *prefix, const luaL_Reg *regs, int nup);

/* Each binding file adds its functions: metamethods to the Tensor metatable (index mt), methods
 * to the Tensor method table (index m), module functions to the lumen table (index lm). */
void lml_open_tensor(lua_State *L, int mt, int m, int lm);
void lml_open_create(lua_State *L, int mt, int m, int lm);
void lml_open_view(lua_State *L, int mt, int m, int lm);
void lml_open_math(lua_State *L, int mt, int m, int lm);
void lml_open_reduce(lua_State *L, int mt, int m, int lm);
void lml_open_autograd(lua_State *L, int mt, int m, int lm);
void lml_open_functional(lua_State *L, int mt, int m, int lm);
void lml_open_index(lua_State *L, int mt, int m, int lm);
void lml_open_shape(lua_State *L, int mt, int m, int lm);
void lml_open_sys(lua_State *L, int mt, int m, int lm);
void lml_open_kernels(lua_State *L, int mt, int m, int lm); /* kernels.c: lm._kernels */
/* kernel_opts.c: reads the options table at idx of kernels.<call> into o, checking each key and
 * value against the call's row of the options table (unknown keys and values are errors). */
struct lm_kernel_opts;
void lml_kernel_opts(lua_State *L, int idx, const char *call, struct lm_kernel_opts *o);
/* g:kernel's options (a program's fused group as one of the kernels: lua/lumen/graph.lua). */
void lml_fused_opts(lua_State *L, int idx, struct lm_kernel_opts *o);
/* Pushes {call = {args=, {key=, kind=, values=, default=, doc=}, ...}, ...}: the same rows, for
 * :help (lm._kernels.options). */
void lml_push_kernel_options(lua_State *L);
void lml_open_viz(lua_State *L, int mt, int m, int lm);     /* viz_loader.c: lm._viz */
void lml_open_io(lua_State *L, int mt, int m, int lm);      /* io.c: lm.save, lm.load, ... */
void lml_open_optim(lua_State *L, int mt, int m, int lm);   /* optim.c: lm._optim, F.bce_with_logits */
void lml_open_data(lua_State *L, int mt, int m, int lm);    /* data.c: lm._data */
void lml_open_dist(lua_State *L, int mt, int m, int lm);    /* dist_loader.c: lm._dist_open */
void lml_open_dlp(lua_State *L, int mt, int m, int lm);     /* dlp.c: lm._dlp */
void lml_open_graph(lua_State *L, int mt, int m, int lm);   /* graph.c: lm._graph (lm.compile) */
/* The tostring of a tensor (print.c): pushes the text. */
int lml_tensor_tostring(lua_State *L);
/* The __index / __newindex of element access (view.c); idx is the key's index. */
int lml_index_get(lua_State *L, lm_tensor *t, int key);
int lml_index_set(lua_State *L, lm_tensor *t, int key, int value);

/* The C half of `require 'lumen'` (package.preload['lumen.core']). */
int luaopen_lumen_core(lua_State *L);
/* Installs the module searcher (ahead of the path searchers) for lumen's Lua files in luadir,
 * and preloads 'lumen.core'. */
void lml_install_loader(lua_State *L, const char *luadir);

/* ---------------------------------------------------------------- errors */

/* The Lua name of the running binding (its first upvalue), or "lumen". */
const char *lml_fname(lua_State *L);
/* Raises "<fname>: <formatted message>" (printf formats; never pass user text as fmt). */
_Noreturn int lml_error(lua_State *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Raises the core's last error, its leading "cname: " replaced by the Lua name. */
_Noreturn int lml_core_error(lua_State *L);
/* a * b of two sizes (element counts, extents, dims), checked: true when the product overflows
 * int64 (*out is then unspecified). Every product of values that came from Lua goes through it, or
 * says on its line why it cannot overflow ("bounded: ..."): tools/lint_sizes.lua checks. */
static inline bool lml_mul_overflows(int64_t a, int64_t b, int64_t *out) { return __builtin_mul_overflow(a, b, out); }
/* A short description of the value at idx for messages ("-1", "2.5", "nil", "a table", "string
 * 'abc'"); never calls metamethods. Written into buf. */
const char *lml_describe(lua_State *L, int idx, char *buf, size_t cap);
#define LML_DESCRIBE_MAX 64

/* ---------------------------------------------------------------- tensors */

/* Pushes a new, empty tensor box (NULL inside) with the Tensor metatable. */
lm_tensor **lml_newbox(lua_State *L);
/* Stores t (+1, owned by the box from now on) and accounts its bytes to the GC pacer. */
void lml_setbox(lua_State *L, lm_tensor **box, lm_tensor *t);
/* With box on the stack top: stores t and returns 1, or raises the core's error when t is NULL. */
int lml_result(lua_State *L, lm_tensor **box, lm_tensor *t);
/* Pushes a new box holding t +1 (t retained here). May raise (memory): t must be borrowed. */
void lml_pushtensor(lua_State *L, lm_tensor *t);

/* Pushes t.grad_fn: the node object (autograd.c), or nil for a leaf. */
void lml_push_grad_fn(lua_State *L, const lm_tensor *t);

/* The box at idx when it is a tensor userdata (open or closed), else NULL. */
lm_tensor **lml_tobox(lua_State *L, int idx);
/*
 * Whether an explicit release (x:close(), __close, a direct call of a __gc metamethod) may free
 * the object now. Not inside a finalizer: the collector runs finalizers at allocation points inside
 * bindings, and a binding further down the stack may be using what the finalizer would free. The
 * collector's own call of __gc (on an unreachable object) is always allowed.
 */
int lml_may_release(lua_State *L);
/* Raises "cannot close <what> inside a finalizer ..." unless lml_may_release. */
void lml_checkrelease(lua_State *L, const char *what);
/* The tensor at idx, or NULL when it is not a tensor (or is closed). */
lm_tensor *lml_totensor(lua_State *L, int idx);
/* The tensor at idx; raises "<what> must be a tensor, got X" or "tensor is closed". */
lm_tensor *lml_checktensor(lua_State *L, int idx, const char *what);
/* The same for argument 1: "self" for methods (Tensor:...), "argument 1" for functions. */
lm_tensor *lml_checkself(lua_State *L);

/* ---------------------------------------------------------------- numbers */

/* Whether idx holds a number (not a string) with an integral value in int64 range. */
int lml_isinteger(lua_State *L, int idx, int64_t *out);
/* An integer argument (integral floats accepted, 2.5, NaN, strings rejected). */
int64_t lml_checkinteger(lua_State *L, int idx, const char *what);
int64_t lml_optinteger(lua_State *L, int idx, const char *what, int64_t def);
/* A non-negative integer argument ("<what> must be non-negative, got -1"). */
int64_t lml_checkcount(lua_State *L, int idx, const char *what);
/*
 * Numbers reach the core as doubles, which round integers past 2^53 (2^53 + 1 compares equal to
 * 2^53). When idx holds such a Lua integer and the tensor it goes with is int64 (dt), pushes a
 * boxed 0-d int64 tensor holding it exactly and returns it; otherwise pushes nothing, returns NULL.
 */
lm_tensor *lml_exact_integer(lua_State *L, int idx, lm_dtype dt);
/*
 * Lua numbers next to tensors follow PyTorch (docs/lua.md, "Numbers next to tensors"): a Lua
 * float next to an integer tensor computes in float32 (the default float dtype), a Lua integer
 * keeps the tensor's dtype, and a float tensor keeps its dtype either way. lml_number_dtype is the
 * dtype the number at idx takes next to a tensor of dtype dt.
 */
lm_dtype lml_number_dtype(lua_State *L, int idx, lm_dtype dt);
/*
 * The number at idx as an operand next to a tensor of dtype dt, for the cases where it cannot reach
 * the core as a double (lm_binary_scalar keeps an integer tensor integral and rounds past 2^53):
 * a Lua float next to an integer tensor (a 0-d float32), a Lua integer past 2^53 next to int64 (an
 * exact 0-d int64), and, when cmp (a comparison), a Lua integer outside dt's range (a 0-d int64,
 * so that a uint8 44 is not equal to 300). Pushes the box and returns the tensor; otherwise
 * returns NULL and pushes nothing.
 */
lm_tensor *lml_number_operand(lua_State *L, int idx, lm_dtype dt, int cmp);
/*
 * Checks that the number at idx can be stored in a tensor of dtype dt (creation, fills,
 * assignment): integer dtypes take finite values whose truncation toward zero lies in their range
 * (fractions truncate, as in PyTorch), floats take any number. Raises "<what> 300 is out of range
 * for uint8 (0..255)" or "<what> nan cannot be stored in an int64 tensor". elem: a path such as
 * "[2][3]" after what, or NULL.
 */
void lml_checkstore(lua_State *L, int idx, lm_dtype dt, const char *what, const char *elem);
/* Pushes a box holding a 0-d tensor of dtype dt with the number at idx (exact for Lua integers in
 * int64; a number outside an integer dtype's range wraps, as arithmetic on it does) and returns it. */
lm_tensor *lml_boxnumber(lua_State *L, int idx, lm_dtype dt);
/* Stores the number at idx (checked by lml_checkstore) into the element at p of dtype dt: exactly
 * for Lua integers, truncated toward zero for floats. */
void lml_storenumber(lua_State *L, int idx, lm_dtype dt, char *p);
/* A number argument (not a string). */
double lml_checknumber(lua_State *L, int idx, const char *what);
double lml_optnumber(lua_State *L, int idx, const char *what, double def);
/* A boolean argument (nil/none gives def). */
int lml_optboolean(lua_State *L, int idx, const char *what, int def);

/* ---------------------------------------------------------------- shapes, dims, indices */

/*
 * Sizes from the arguments first..last: either numbers or one table of numbers. Each size must
 * be a non-negative integer (or -1 once when allow_infer); checks the dim count and that the
 * element count does not overflow. Returns ndim.
 */
int lml_checkshape(lua_State *L, int first, int last, int64_t *shape, int allow_infer);
/* Converts a 1-based dim (negatives from the end) of a tensor with ndim dims to 0-based;
 * a 0-d tensor accepts 1 and -1. extra = 1 for unsqueeze (ndim + 1 positions). */
int lml_checkdim(lua_State *L, int idx, int ndim, int extra, const char *what);
/* Converts a 1-based index (negatives from the end) along a dim of size n to 0-based. */
int64_t lml_toindex(lua_State *L, int64_t i, int64_t n, int dim1, const char *what);

/* ---------------------------------------------------------------- options and names (options.c) */

/* Raises "<what> must be <expected>, got <the value at idx, described>". */
_Noreturn int lml_typeerror(lua_State *L, int idx, const char *what, const char *expected);
/* "a, b or c" of a NULL-terminated list ('a', 'b' or 'c' when quote), into buf. */
const char *lml_list(const char *const *items, int quote, char *buf, size_t cap);
#define LML_LIST_MAX 400

/* The index of the string at idx in the NULL-terminated names (luaL_checkoption's idea); raises
 * "<what> must be 'a', 'b' or 'c', got X" otherwise. lml_optname: def for nil/none. */
int lml_checkname(lua_State *L, int idx, const char *what, const char *const *names);
int lml_optname(lua_State *L, int idx, const char *what, const char *const *names, int def);

/* What a field of an option table holds, and the C type it is stored as. */
typedef enum lml_kind {
	LML_BOOLEAN, /* int, 0 or 1 */
	LML_INTEGER, /* int64_t (integral floats accepted; 2.5, NaN and strings refused) */
	LML_INT,     /* int, range-checked */
	LML_NUMBER,  /* double */
	LML_STRING,  /* const char *, alive while the options table is (names: documentation only) */
	LML_NAME,    /* int: the index of the value in names */
	LML_DTYPE,   /* lm_dtype, from its name */
	LML_TENSOR,  /* lm_tensor *, borrowed (the options table holds it) */
	LML_PAIR,    /* int64_t[2]: an integer for both, or a pair {h, w} */
	LML_CUSTOM,  /* nothing: check reads and stores the value */
} lml_kind;

/* One key of an option table: its kind and where its value goes (offsetof in the caller's
 * struct). check (optional) is called after the kind's own reading with the value's stack index
 * and its destination: further checks (ranges), or all of the reading for LML_CUSTOM. def and
 * doc are for help (lml_push_fields). A field table ends with {NULL}. */
typedef struct lml_field {
	const char *key;
	lml_kind kind;
	size_t offset;
	const char *const *names; /* LML_NAME: the accepted names, NULL-terminated */
	void (*check)(lua_State *L, int idx, const struct lml_field *f, void *dst);
	const char *def, *doc;
} lml_field;
/* A field named as the member of type it is stored in; more members designated after kind. */
#define LML_FIELD(type, member, kind_, ...)                                                        \
	{ .key = #member, .kind = (kind_), .offset = offsetof(type, member), __VA_ARGS__ }
#define LML_FIELDS_END { .key = NULL }

/*
 * Reads the option table at idx (nil or none: nothing) into out: raises when it is not a table,
 * when a key is not a string or not one of fields ("unknown <noun> 'k' (<fname> takes a, b or c)";
 * noun NULL: "option"), and when a value is not of its field's kind ("option k must be ..."). The
 * fields absent keep what out holds (set the defaults first). Returns the mask of the fields
 * given (bit i: fields[i]; at most 32 fields).
 */
unsigned lml_readopts(lua_State *L, int idx, const char *noun, const lml_field *fields, void *out);
/* Pushes {{key=, kind=, values=, default=, doc=}, ...} of a field table (for :help). */
void lml_push_fields(lua_State *L, const lml_field *fields);

/* Pushes t[k] of the table at index t without metamethods (a user's __index could close or
 * replace what a binding holds) and returns its type. Options and other user tables are read so. */
int lml_rawfield(lua_State *L, int t, const char *k);
/* Whether idx holds an options table: a table (not a tensor) without an array part [1]. */
int lml_isopts(lua_State *L, int idx);

/* Fields of the table on the stack top, for the tables bindings return. */
void lml_setint(lua_State *L, const char *k, int64_t v);
void lml_setnumber(lua_State *L, const char *k, double v);
void lml_setstring(lua_State *L, const char *k, const char *v);
void lml_setboolean(lua_State *L, const char *k, int v);
/* Pushes the array {v1, ..., vn} of the values push(L, ud, i) leaves on the stack, i from 0. */
void lml_push_array(lua_State *L, int64_t n, void (*push)(lua_State *L, const void *ud, int64_t i),
                    const void *ud);

/* The creation options {dtype=, requires_grad=, device=}. */
typedef struct lml_opts {
	lm_dtype dtype;
	int has_dtype;
	int requires_grad;
	lm_device device;
	int has_device;
} lml_opts;

/* Reads {dtype=, requires_grad=, device=} at idx (nil/none allowed); unknown keys are errors. */
void lml_checkopts(lua_State *L, int idx, lml_opts *o);
/* A dtype name argument. */
lm_dtype lml_checkdtype(lua_State *L, int idx, const char *what);
/* Raises the reason why a tensor cannot be put on the GPU (no driver or device, or asked at creation). */
_Noreturn void lml_nocuda(lua_State *L);
_Noreturn void lml_noopencl(lua_State *L);
/* A tensor on a device, copied to the host for its values (not recorded for autograd; +1, NULL
 * with the error set). */
lm_tensor *lml_host_copy(const lm_tensor *t); /* why device opencl cannot be used, or how to */
/* Applies requires_grad / device of o to the tensor in box (after creation). */
void lml_applyopts(lua_State *L, lm_tensor *t, const lml_opts *o);
/* Raises when o asks for a device this build cannot serve. Call before creating. */
void lml_checkdevice(lua_State *L, const lml_opts *o);

/* ---------------------------------------------------------------- index tensors */

/*
 * Index tensors are 1-based in Lua, 0-based in the core. Checks that the tensor at arg holds
 * int64 or int32 values in 1..hi (hi < 0: no range check), then pushes a box holding the 0-based
 * copy and returns it.
 */
lm_tensor *lml_index0(lua_State *L, int arg, const char *what, int64_t hi);
/* The first value of the integer tensor t (int64, int32 or uint8) outside [lo, hi] in C order:
 * returns 1 and sets *bad and, when pos is not NULL, its 1-based position (ndim entries). */
int lml_find_out_of_range(const lm_tensor *t, int64_t lo, int64_t hi, int64_t *bad, int64_t *pos);
/* Stores values v in vbox and i + 1 (the 1-based form of the indices i the core returned) in
 * ibox; v and i are +1 from the core, i is released. Raises on failure. Never adds in place: the
 * core may have saved i for a backward rule (max, sort, topk). */
void lml_setpair(lua_State *L, lm_tensor **vbox, lm_tensor *v, lm_tensor **ibox, lm_tensor *i);

/* ---------------------------------------------------------------- elements */

/* Reads the element at byte offset off of t's data as a Lua value (integer for integer dtypes). */
void lml_pushelem(lua_State *L, lm_dtype dt, const char *p);
/* Element addresses: data + sum(idx[i] * stride[i]) * itemsize. */
const char *lml_elemptr(const lm_tensor *t, const int64_t *idx);

/* ---------------------------------------------------------------- Lua functions of tensors */

/*
 * A Lua function of tensors called from the core (gradcheck's fn: lm_gradcheck,
 * lm_graph_gradcheck). ctx is an lml_tensor_fn; the call is protected, so it never raises: an
 * error of the function (or a result that is not a tensor) gives NULL, the error in lm_last_error
 * and its first message kept in err. what names the function in messages ("fn").
 */
typedef struct lml_tensor_fn {
	lua_State *L;
	int fn;           /* stack index of the function, in the frame that runs the core call */
	const char *what; /* "fn", "the gradcheck function" */
	char err[400];    /* the function's first error */
} lml_tensor_fn;
lm_tensor *lml_call_tensor_fn(void *ctx, int n, lm_tensor *const *inputs);
/* Makes L the state on which lm.autograd.Function's backwards run (around a core call that may
 * run a backward: lm_backward, lm_gradcheck); returns the previous one, to be put back. */
lua_State *lml_backward_state(lua_State *L);

/* ---------------------------------------------------------------- memory and the GC */

/*
 * GC pacing: Lua sees a tensor as a small userdata, not as the memory behind it. Every tensor
 * stored in a box adds its bytes to a debt; when the debt exceeds a threshold, a full collection
 * runs; the threshold is what is allocated in LML_GC_TIME_FACTOR times the collection's own time,
 * between LML_GC_MIN_BYTES and the live tensor bytes after it (see docs/lua.md).
 */
void lml_gc_account(lua_State *L, size_t bytes);
#define LML_GC_MIN_BYTES ((size_t)64 << 20)
#define LML_GC_TIME_FACTOR 100.0
#define LML_TENSOR_OVERHEAD 320 /* header + storage struct + allocator rounding, per tensor */
/* After a core failure with LM_ERR_NOMEM: collects garbage and returns 1 (the caller retries
 * once); returns 0 for other failures. */
int lml_retry_nomem(lua_State *L);
#define LML_TRY(L, var, expr)                                                                      \
	do {                                                                                         \
		(var) = (expr);                                                                          \
		if (!(var) && lml_retry_nomem(L)) (var) = (expr);                                        \
	} while (0)
/*
 * A new tensor made by expr (+1), pushed in a box and stored in var. The box is made first (so
 * the result is owned before anything can raise), expr runs (again after a collection when
 * memory ran out), and a NULL raises the core's error. The arguments expr uses must have been
 * checked and be held by the stack. LML_RETURN: the same as the binding's one result (the end of
 * most bindings).
 */
#define LML_PUSH(L, var, expr)                                                                     \
	do {                                                                                         \
		lm_tensor **lml_box_ = lml_newbox(L);                                                    \
		LML_TRY(L, var, expr);                                                                   \
		lml_result(L, lml_box_, var);                                                            \
	} while (0)
#define LML_RETURN(L, expr)                                                                        \
	do {                                                                                         \
		lm_tensor *lml_r_;                                                                       \
		LML_PUSH(L, lml_r_, expr);                                                               \
		return 1;                                                                                \
	} while (0)

/* coro.c: the coroutine Lumen resumes now (NULL: the main thread runs), for Ctrl-C; lml_resume
 * is lua_resume recording it; lml_open_coroutine replaces coroutine.resume and coroutine.wrap by
 * versions that resume through it. */
lua_State *lml_running_thread(void);
int lml_resume(lua_State *co, lua_State *from, int nargs, int *nres);
void lml_open_coroutine(lua_State *L);

#endif
