/*
 * launch.c — kernels.launch(fn, {grid=, block=, shared=, args=, const=, ...}): a student's kernel,
 * a Lua function fn(t, ...) run once per thread on the SIMT emulator (lumen/launch.h), with the
 * trace, counters, latency model and checks of the shipped kernels; and kernels.racecheck.
 *
 * Design: every thread of the running block is a Lua coroutine; the emulator's scheduler resumes
 * them (thread after thread, barrier phase after barrier phase) through run_thread, and t:sync()
 * yields back to it. Tensor arguments, constant and shared arrays reach the kernel as 0-based
 * arrays (userdata "lumen.KernelArray") whose __index / __newindex go through lm_launch_load /
 * lm_launch_store with the line of the Lua code that made them, so what the emulator checks and
 * records is what the student wrote. Nothing here raises across the emulator's C frames: Lua
 * errors happen inside a coroutine and end there (lua_resume returns them); everything that can
 * raise (arguments, coroutines, the t tables) is made before the launch, the messages after it.
 * Hooks are per coroutine, so each thread gets a count hook that stops it on lm_interrupted()
 * (Ctrl-C) and forwards to the program's hook of the calling and the main thread (the REPL's
 * interrupt, the visualizer's pump) and to a debug.sethook count hook, which then stop a kernel
 * that never returns.
 * Read next: include/lumen/launch.h, src/kernels/external.c, docs/student-kernels.md.
 */
#include <math.h>
#include <string.h>

#include "lml_kernels.h"
#include "lumen/launch.h"

#define ARRAY_MT "lumen.KernelArray"
#define T_MT "lumen.KernelThread"
#define NAMED_MT "lumen.KernelNamed" /* t.shared and t.const: unknown names are errors */
#define HOOK_COUNT 1000              /* instructions between checks of a running thread */
#define MAX_ARRAYS (LM_LAUNCH_MAX_ARRAYS + LM_LAUNCH_MAX_SHARED)
#define MAX_ARGS 32

/* What a kernel indexes: a tensor argument, a constant or a shared array of one launch. */
typedef struct karray {
	uint64_t launch; /* the launch it belongs to */
	int slot;        /* its index in the launch's arrays */
	int64_t length;
	lm_dtype dtype;
	lm_trace_space space;
	char name[41];
} karray;

typedef struct launch_state {
	lua_State *L, *main;
	uint64_t id;
	lm_launch *l;
	int fn, ts, cos, args, blockidx, box; /* absolute stack indices in L */
	int nargs, nthreads;
	lua_State *co[LM_KERNEL_MAX_BLOCK];
	int running;          /* the thread being run, or -1 */
	bool synced;          /* it called t:sync() */
	int failed;           /* the thread whose coroutine raised, or -1 */
	bool lua_error;       /* ... with an error of its own (not a check of the emulator) */
	unsigned failed_at[6]; /* its threadIdx and blockIdx */
	lm_dtype dtype;       /* t:add rounds to it */
	int hook_count;       /* instructions between hook calls */
	long since_forward;   /* instructions since the caller's count hook was last called */
	lm_launch_array arrays[MAX_ARRAYS];
	int narrays;
	lm_tensor *held[MAX_ARRAYS]; /* the arrays' tensors (retained; contiguous copies of views) */
	lm_tensor *view[MAX_ARRAYS]; /* the view a copy is written back to (NULL: held is the arg) */
	uint8_t *marks[MAX_ARRAYS];  /* the argument's never-written marks (lm.empty), or NULL */
	uint8_t *gathered[MAX_ARRAYS]; /* ... gathered in C order for a view that was copied */
	int nheld;
} launch_state;

static launch_state *current;  /* the launch running on this Lua state (one at a time) */
static uint64_t next_launch = 1;

/* ---------------------------------------------------------------- inside a kernel */

static int caller_line(lua_State *L)
{
	lua_Debug ar;
	if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar) && ar.currentline > 0)
		return ar.currentline < 65535 ? ar.currentline : 65535;
	return 0;
}

/* Raises the emulator's message (the running thread has failed) in the thread's coroutine. */
static _Noreturn void raise_fault(lua_State *L)
{
	lua_pushstring(L, lm_last_error());
	lua_error(L);
	__builtin_unreachable();
}

/* The launch whose thread is running on L, or an error. */
static launch_state *running_on(lua_State *L, const char *what)
{
	launch_state *st = current;
	if (!st || st->running < 0 || st->co[st->running] != L)
		luaL_error(L, "kernels.launch: %s is only valid inside a running kernel (fn(t, ...) of "
		           "kernels.launch)", what);
	return st;
}

/* The array at idx of the running launch; fails the thread (naming what) when it is not one. */
static karray *check_array(lua_State *L, launch_state *st, int idx, const char *what, int line)
{
	karray *a = luaL_testudata(L, idx, ARRAY_MT);
	if (a && a->launch == st->id) return a;
	char d[LML_DESCRIBE_MAX], msg[200];
	if (a)
		snprintf(msg, sizeof msg, "%s at line %d: array '%s' belongs to another kernel launch", what,
		         line, a->name);
	else
		snprintf(msg, sizeof msg, "%s at line %d: expected an array of the kernel (a tensor argument, "
		         "t.shared.NAME or t.const.NAME), got %s", what, line, lml_describe(L, idx, d, sizeof d));
	lm_launch_fail(st->l, LM_ERR_ARG, msg);
	raise_fault(L);
}

/* The index at idx for array a: an integer (integral floats too), else the thread fails. */
static int64_t check_index(lua_State *L, launch_state *st, const karray *a, int idx, int line)
{
	int64_t i;
	if (lml_isinteger(L, idx, &i)) return i;
	char d[LML_DESCRIBE_MAX], msg[240];
	snprintf(msg, sizeof msg, "index of %s array '%s' at line %d must be an integer, got %s (arrays "
	         "are indexed from 0, as in CUDA C)", lm_trace_space_name(a->space), a->name, line,
	         lml_describe(L, idx, d, sizeof d));
	lm_launch_fail(st->l, LM_ERR_ARG, msg);
	raise_fault(L);
}

static double check_value(lua_State *L, launch_state *st, int idx, const char *what, int line)
{
	if (lua_type(L, idx) == LUA_TNUMBER) return lua_tonumber(L, idx);
	char d[LML_DESCRIBE_MAX], msg[200];
	snprintf(msg, sizeof msg, "%s at line %d must be a number, got %s", what, line,
	         lml_describe(L, idx, d, sizeof d));
	lm_launch_fail(st->l, LM_ERR_ARG, msg);
	raise_fault(L);
}

static bool int_dtype(lm_dtype dt) { return lm_dtype_traits_of(dt)->is_int; }

/* The array at 1 and the index at 2 of a load or a store in the running launch: the array, the
 * launch, the caller's line and the checked index. */
static int64_t array_access(lua_State *L, bool store, karray **a, launch_state **st, int *line)
{
	*a = lua_touserdata(L, 1);
	*st = running_on(L, store ? "storing into a kernel array" : "indexing a kernel array");
	*line = caller_line(L);
	if ((*a)->launch != (*st)->id) check_array(L, *st, 1, store ? "a store" : "a load", *line);
	return check_index(L, *st, *a, 2, *line);
}

/* a[i]: integer arrays read as Lua integers, exactly (int64 past 2^53 too) */
static int array_index(lua_State *L)
{
	karray *a;
	launch_state *st;
	int line;
	int64_t i = array_access(L, false, &a, &st, &line);
	if (int_dtype(a->dtype)) {
		int64_t v;
		if (lm_launch_load_int(st->l, a->slot, i, line, &v)) raise_fault(L);
		lua_pushinteger(L, (lua_Integer)v);
		return 1;
	}
	double v;
	if (lm_launch_load(st->l, a->slot, i, line, &v)) raise_fault(L);
	lua_pushnumber(L, v);
	return 1;
}

/* a[i] = v: a Lua integer into an integer array is stored exactly; a float is converted (truncated
 * toward zero) */
static int array_newindex(lua_State *L)
{
	karray *a;
	launch_state *st;
	int line;
	int64_t i = array_access(L, true, &a, &st, &line);
	if (int_dtype(a->dtype) && lua_isinteger(L, 3)) {
		if (lm_launch_store_int(st->l, a->slot, i, (int64_t)lua_tointeger(L, 3), line)) raise_fault(L);
		return 0;
	}
	double v = check_value(L, st, 3, "the value stored", line);
	if (lm_launch_store(st->l, a->slot, i, v, line)) raise_fault(L);
	return 0;
}

static int array_len(lua_State *L)
{
	lua_pushinteger(L, ((karray *)luaL_checkudata(L, 1, ARRAY_MT))->length);
	return 1;
}

static int array_tostring(lua_State *L)
{
	karray *a = luaL_checkudata(L, 1, ARRAY_MT);
	lua_pushfstring(L, "kernel array '%s' (%s %s, %d elements, indexed from 0)", a->name,
	                lm_trace_space_name(a->space), lm_dtype_name(a->dtype), (int)a->length);
	return 1;
}

/* t:sync(): __syncthreads(). The barrier is told apart from others by its line and the calls
 * that led to it (a t:sync() inside a helper function called from two branches is two barriers):
 * site hashes every frame's function and current line, from the t:sync() down to the kernel, whose
 * current line is `from`. Two t:sync() calls on one line through the same calls stay one barrier
 * (Lua gives lines, not the instruction). */
static int t_sync(lua_State *L)
{
	launch_state *st = running_on(L, "t:sync()");
	lua_Debug ar;
	uint32_t site = 2166136261u;
	int from = 0;
	for (int level = 1; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sl", &ar)) break;
		uint64_t parts[3] = {(uint64_t)(uintptr_t)ar.source, (uint64_t)ar.linedefined,
		                     (uint64_t)(ar.currentline > 0 ? ar.currentline : 0)};
		for (int k = 0; k < 3; k++) site = (site ^ (uint32_t)(parts[k] ^ parts[k] >> 32)) * 16777619u;
		if (ar.currentline > 0) from = ar.currentline;
	}
	int line = caller_line(L);
	if (lm_launch_sync_at(st->l, line, from, site)) raise_fault(L);
	st->synced = true;
	return lua_yield(L, 0);
}

/* t:atomic_add(array, i, v) -> the old value */
static int t_atomic_add(lua_State *L)
{
	launch_state *st = running_on(L, "t:atomic_add()");
	int line = caller_line(L);
	karray *a = check_array(L, st, 2, "t:atomic_add(array, i, v) (note the colon)", line);
	int64_t i = check_index(L, st, a, 3, line);
	if ((a->dtype == LM_INT32 || a->dtype == LM_INT64) && lua_isinteger(L, 4)) {
		int64_t old;
		if (lm_launch_atomic_add_int(st->l, a->slot, i, (int64_t)lua_tointeger(L, 4), line, &old))
			raise_fault(L);
		lua_pushinteger(L, (lua_Integer)old);
		return 1;
	}
	double v = check_value(L, st, 4, "the value of t:atomic_add", line), old;
	if (lm_launch_atomic_add(st->l, a->slot, i, v, line, &old)) raise_fault(L);
	if (int_dtype(a->dtype)) lua_pushinteger(L, (lua_Integer)old);
	else lua_pushnumber(L, old);
	return 1;
}

/* t:add(x, y [, pad]) -> x + y, an addition of data the counters count (ADD, ADD_PAD) */
static int t_add(lua_State *L)
{
	launch_state *st = running_on(L, "t:add()");
	int line = caller_line(L);
	double x = check_value(L, st, 2, "t:add(x, y): x (note the colon)", line);
	double y = check_value(L, st, 3, "t:add(x, y): y", line);
	bool pad = lua_toboolean(L, 4);
	if (lua_isinteger(L, 2) && lua_isinteger(L, 3)) {
		lua_Integer s = (lua_Integer)((uint64_t)lua_tointeger(L, 2) + (uint64_t)lua_tointeger(L, 3));
		if (lm_launch_add(st->l, (double)s, pad, line)) raise_fault(L);
		lua_pushinteger(L, s);
		return 1;
	}
	double s = st->dtype == LM_FLOAT32 ? (double)(float)(x + y) : x + y; /* in the kernel's dtype */
	if (lm_launch_add(st->l, s, pad, line)) raise_fault(L);
	lua_pushnumber(L, s);
	return 1;
}

/* t:branch(cond) -> cond as a boolean: a branch the trace draws as divergence */
static int t_branch(lua_State *L)
{
	launch_state *st = running_on(L, "t:branch()");
	bool taken = lua_toboolean(L, 2);
	if (lm_launch_branch(st->l, taken, caller_line(L))) raise_fault(L);
	lua_pushboolean(L, taken);
	return 1;
}

/* t.shared.NAME / t.const.NAME of a name the launch does not declare */
static int named_index(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	lua_getmetatable(L, 1);
	lua_getfield(L, -1, "__what");
	bool shared = strcmp(lua_tostring(L, -1), "shared") == 0;
	const char *name = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : lml_describe(L, 2, d, sizeof d);
	return luaL_error(L, "t.%s.%s is not declared: give it in the launch's options, %s = {%s = %s}",
	                  shared ? "shared" : "const", name, shared ? "shared" : "const", name,
	                  shared ? "size" : "tensor");
}

/* ---------------------------------------------------------------- the hook */

/* Every hook_count instructions of a running thread: Ctrl-C (lm_interrupt) stops it, and the
 * count hook of the thread that launched it and of the main thread (the REPL's interrupt, the
 * visualizer's pump, a debug.sethook count hook) is called as if the kernel ran there. */
static void launch_hook(lua_State *co, lua_Debug *ar)
{
	launch_state *st = current;
	if (!st) return;
	if (lm_interrupted()) { /* at every instruction from now on: a pcall cannot swallow it */
		lua_sethook(co, launch_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
		luaL_error(co, "interrupted!");
	}
	st->since_forward += st->hook_count;
	lua_State *from[2] = {st->L, st->main};
	for (int k = 0; k < 2; k++) {
		lua_State *f = from[k];
		if (k == 1 && f == st->L) break;
		lua_Hook h = lua_gethook(f);
		if (!h || h == launch_hook || !(lua_gethookmask(f) & LUA_MASKCOUNT)) continue;
		if (st->since_forward < lua_gethookcount(f)) continue;
		st->since_forward = 0;
		h(co, ar); /* may raise: the thread ends with its error */
		if (lua_gethook(co) != launch_hook) /* the program's hook clears itself on co */
			lua_sethook(co, launch_hook, LUA_MASKCOUNT, st->hook_count);
	}
}

/* ---------------------------------------------------------------- running a thread */

static void set_blockidx(launch_state *st)
{
	unsigned b[3];
	lm_launch_where(st->l, NULL, b, NULL, NULL);
	static const char *const xyz[3] = {"x", "y", "z"};
	for (int k = 0; k < 3; k++) {
		lua_pushinteger(st->L, b[k]);
		lua_setfield(st->L, st->blockidx, xyz[k]);
	}
}

static int run_thread(void *ctx, lm_launch *l, int thread, bool first)
{
	launch_state *st = ctx;
	lua_State *L = st->L, *co = st->co[thread];
	st->l = l;
	int nargs = 0;
	if (first) {
		if (thread == 0) set_blockidx(st);
		if (lua_status(co) != LUA_OK || lua_gettop(co) != 0 || !lua_checkstack(co, st->nargs + 4)) {
			lm_launch_fail(l, LM_ERR_STATE, "its coroutine cannot be started");
			return LM_LAUNCH_FAULT;
		}
		lua_pushvalue(L, st->fn);
		lua_rawgeti(L, st->ts, thread + 1);
		for (int k = 0; k < st->nargs; k++) lua_pushvalue(L, st->args + k);
		lua_xmove(L, co, 2 + st->nargs);
		nargs = 1 + st->nargs;
	}
	st->running = thread;
	st->synced = false;
	int nres = 0;
	int r = lml_resume(co, L, nargs, &nres);
	st->running = -1;
	if (r == LUA_YIELD) {
		lua_pop(co, nres);
		if (lm_launch_failed(l)) return LM_LAUNCH_FAULT;
		if (!st->synced) {
			lm_launch_fail(l, LM_ERR_STATE, "the kernel yielded without t:sync() (a thread waits only "
			               "at a barrier; coroutine.yield does not belong in a kernel)");
			return LM_LAUNCH_FAULT;
		}
		return LM_LAUNCH_WAIT;
	}
	if (r == LUA_OK) {
		lua_settop(co, 0);
		return lm_launch_failed(l) ? LM_LAUNCH_FAULT : LM_LAUNCH_DONE;
	}
	/* an error: its message (with the coroutine's traceback) is made after the launch */
	st->failed = thread;
	lm_launch_where(l, st->failed_at, st->failed_at + 3, NULL, NULL);
	if (!lm_launch_failed(l)) {
		st->lua_error = true;
		lm_launch_fail(l, LM_ERR_ARG, "a Lua error");
	}
	return LM_LAUNCH_FAULT;
}

/* ---------------------------------------------------------------- the arguments */

static void release_held(launch_state *st)
{
	for (int i = 0; i < st->nheld; i++) {
		lm_tensor_release(st->held[i]);
		lm_tensor_release(st->view[i]);
		if (st->gathered[i]) lm_free(st->gathered[i], (size_t)st->arrays[i].length);
		st->gathered[i] = NULL;
	}
	st->nheld = 0;
}

/* The marks (storage-indexed, lm_tensor_init_marks) of x's elements to or from buf, in C order. */
static void map_marks(const lm_tensor *x, uint8_t *marks, uint8_t *buf, bool gather)
{
	int nd = lm_tensor_ndim(x);
	const int64_t *shape = lm_tensor_shape(x), *stride = lm_tensor_strides(x);
	int64_t n = lm_tensor_numel(x), idx[LM_MAX_DIMS] = {0}, at = lm_tensor_offset(x);
	for (int64_t j = 0; j < n; j++) {
		if (gather) buf[j] = marks[at];
		else marks[at] = buf[j];
		for (int d = nd - 1; d >= 0; d--) { /* the next index, C order */
			at += stride[d];
			if (++idx[d] < shape[d]) break;
			at -= stride[d] * shape[d]; /* bounded: a tensor's extents fit in its storage */
			idx[d] = 0;
		}
	}
}

static int state_gc(lua_State *L)
{
	release_held(lua_touserdata(L, 1));
	return 0;
}

/* The storage elements a view can reach: [*lo, *hi] (offsets from the storage's start). */
static void view_span(const lm_tensor *t, int64_t *lo, int64_t *hi)
{
	int64_t a = lm_tensor_offset(t), b = a;
	const int64_t *sh = lm_tensor_shape(t), *sd = lm_tensor_strides(t);
	for (int d = 0; d < lm_tensor_ndim(t); d++) {
		if (sh[d] == 0) { *lo = 0, *hi = -1; return; } /* no element at all */
		int64_t ext = (sh[d] - 1) * sd[d]; /* bounded: a tensor that exists fits in its storage */
		if (ext < 0) a += ext;
		else b += ext;
	}
	*lo = a, *hi = b;
}

/* Whether two views of one storage are the same array (dtype, offset, shape and strides). */
static bool same_view(const lm_tensor *a, const lm_tensor *b)
{
	int nd = lm_tensor_ndim(a);
	if (lm_tensor_dtype(a) != lm_tensor_dtype(b) || nd != lm_tensor_ndim(b) ||
	    lm_tensor_offset(a) != lm_tensor_offset(b))
		return false;
	for (int d = 0; d < nd; d++)
		if (lm_tensor_shape(a)[d] != lm_tensor_shape(b)[d] || lm_tensor_strides(a)[d] != lm_tensor_strides(b)[d])
			return false;
	return true;
}

/* Marks (mark) or tests (!mark: whether any is marked) the storage elements of t that fall in
 * [lo, lo + n) in the bitmap m. */
static bool walk_elements(const lm_tensor *t, uint8_t *m, int64_t lo, int64_t n, bool mark)
{
	int nd = lm_tensor_ndim(t);
	const int64_t *shape = lm_tensor_shape(t), *stride = lm_tensor_strides(t);
	int64_t count = lm_tensor_numel(t), idx[LM_MAX_DIMS] = {0}, at = lm_tensor_offset(t);
	for (int64_t j = 0; j < count; j++) {
		if (at >= lo && at < lo + n) {
			if (mark) m[at - lo] = 1;
			else if (m[at - lo]) return true;
		}
		for (int d = nd - 1; d >= 0; d--) {
			at += stride[d];
			if (++idx[d] < shape[d]) break;
			at -= stride[d] * shape[d]; /* bounded: a tensor's extents fit in its storage */
			idx[d] = 0;
		}
	}
	return false;
}

/* Whether two views of one storage share an element: their spans, then element by element over
 * the spans' overlap (past 2^26 elements of it, overlapping spans count as sharing). */
static bool views_overlap(const lm_tensor *a, const lm_tensor *b)
{
	int64_t alo, ahi, blo, bhi;
	view_span(a, &alo, &ahi);
	view_span(b, &blo, &bhi);
	int64_t lo = alo > blo ? alo : blo, hi = ahi < bhi ? ahi : bhi;
	if (lo > hi) return false;
	int64_t n = hi - lo + 1;
	if (n > ((int64_t)1 << 26)) return true;
	uint8_t *m = lm_alloc((size_t)n);
	if (!m) return true;
	memset(m, 0, (size_t)n);
	walk_elements(a, m, lo, n, true);
	bool shared = walk_elements(b, m, lo, n, false);
	lm_free(m, (size_t)n);
	return shared;
}

/* A new array of the launch (its proxy pushed) for tensor x (borrowed from the stack), or the one
 * x already is: the same tensor passed twice, or another view of the same elements in the same
 * layout (y:t() twice), is one array, so writes through either reach the other and the race
 * check sees both. Views that share some elements in another layout are refused: copied apart,
 * each would see a stale copy of the other's writes. */
static void tensor_array(lua_State *L, launch_state *st, lm_tensor *x, const char *name,
                         lm_trace_space space)
{
	for (int i = 0; i < st->nheld; i++) {
		lm_tensor *y = st->view[i] ? st->view[i] : st->held[i];
		bool alias = y == x || (lm_tensor_shares_storage(y, x) && same_view(y, x));
		if (alias && st->arrays[i].space == space) {
			lua_rawgeti(L, st->box, i + 1);
			return;
		}
		if (lm_tensor_shares_storage(y, x) && views_overlap(y, x))
			lml_error(L, "'%s' and '%s' are views of one tensor that share elements in different "
			          "layouts%s: on a GPU they would be one memory, but a kernel here gets each as "
			          "its own array; pass one of them (index it as the other in the kernel), or a "
			          "copy (x:clone())", st->arrays[i].name, name,
			          alias ? " (one as a constant array)" : "");
	}
	if (st->nheld >= LM_LAUNCH_MAX_ARRAYS)
		lml_error(L, "more than %d tensor and constant arrays (the emulator's limit)", LM_LAUNCH_MAX_ARRAYS);
	if (lm_tensor_device(x) != LM_CPU) lml_error(L, "array '%s' is not on the CPU", name);
	lm_dtype dt = lm_tensor_dtype(x);
	if (lm_tensor_numel(x) >= ((int64_t)1 << 32))
		lml_error(L, "array '%s' has %lld elements; the emulator indexes at most 2^32 - 1", name,
		          (long long)lm_tensor_numel(x));
	int k = st->nheld;
	lm_tensor *c = lm_contiguous(x);
	if (!c) lml_core_error(L);
	st->held[k] = c;
	st->view[k] = c == x ? NULL : lm_tensor_retain(x); /* written back after the launch */
	st->nheld++;
	if (c == x) lm_tensor_release(c), st->held[k] = lm_tensor_retain(x);
	int nd = lm_tensor_ndim(x);
	const int64_t *sh = lm_tensor_shape(x);
	uint8_t *init = NULL; /* lm.empty's never-written elements, for the initcheck */
	st->marks[k] = space == LM_SPACE_GLOBAL ? lm_tensor_init_marks(x) : NULL;
	if (st->marks[k] && !st->view[k]) {
		init = st->marks[k] + lm_tensor_offset(x);
	} else if (st->marks[k]) {
		if (!(st->gathered[k] = lm_alloc((size_t)lm_tensor_numel(x)))) lml_error(L, "out of memory");
		map_marks(x, st->marks[k], st->gathered[k], true);
		init = st->gathered[k];
	}
	st->arrays[st->narrays++] = (lm_launch_array){
		.name = name, .space = space, .dtype = dt, .data = lm_tensor_data(st->held[k]),
		.length = lm_tensor_numel(x), .rows = nd == 2 ? sh[0] : 0, .cols = nd == 2 ? sh[1] : 0,
		.init = init,
	};
	karray *a = lua_newuserdatauv(L, sizeof *a, 0);
	*a = (karray){.launch = st->id, .slot = k, .length = lm_tensor_numel(x), .dtype = dt, .space = space};
	snprintf(a->name, sizeof a->name, "%s", name);
	luaL_setmetatable(L, ARRAY_MT);
	lua_pushvalue(L, -1);
	lua_rawseti(L, st->box, k + 1); /* box[k + 1]: the proxy of array k */
}

/* The value of one argument at idx (pushed for the kernel): tensors become arrays. */
static void push_arg(lua_State *L, launch_state *st, int idx, const char *name, int pos)
{
	char d[LML_DESCRIBE_MAX];
	idx = lua_absindex(L, idx);
	switch (lua_type(L, idx)) {
	case LUA_TNIL:
	case LUA_TNUMBER:
	case LUA_TBOOLEAN:
	case LUA_TSTRING: lua_pushvalue(L, idx); return;
	default: break;
	}
	lm_tensor *x = lml_totensor(L, idx);
	if (x) {
		tensor_array(L, st, x, name, LM_SPACE_GLOBAL);
		return;
	}
	if (lml_tobox(L, idx)) lml_error(L, "args[%d] ('%s') is a closed tensor", pos, name);
	lml_error(L, "args[%d] ('%s') is %s; a kernel takes tensors (its device arrays), numbers, "
	          "booleans and strings", pos, name, lml_describe(L, idx, d, sizeof d));
}

/* fn's parameter names after t into names (NULL past the named ones); their count. */
static int param_names(lua_State *L, int fn, const char **names, int cap)
{
	int n = 0;
	lua_pushvalue(L, fn);
	for (int k = 2; n < cap; k++) {
		const char *p = lua_getlocal(L, NULL, k);
		if (!p) break;
		names[n++] = p; /* the prototype holds the string */
	}
	lua_pop(L, 1);
	for (int k = n; k < cap; k++) names[k] = NULL;
	return n;
}

/* The kernel's arguments, from opts.args (a list, or a table by parameter name), converted and
 * pushed in order from st->args. */
static void read_args(lua_State *L, launch_state *st, int opts)
{
	const char *names[MAX_ARGS];
	int nparams = param_names(L, st->fn, names, MAX_ARGS);
	int t = lml_rawfield(L, opts, "args") == LUA_TNIL ? 0 : lua_gettop(L);
	if (!t) lua_pop(L, 1);
	else if (lua_type(L, t) != LUA_TTABLE || lml_tobox(L, t))
		lml_typeerror(L, t, "option args", "a table of the kernel's arguments");
	lua_Integer n = t ? (lua_Integer)lua_rawlen(L, t) : 0;
	bool named = false;
	if (t) { /* every key: 1..n, or (named) a parameter's name */
		lua_pushnil(L);
		while (lua_next(L, t)) {
			lua_pop(L, 1);
			int64_t k;
			if (lml_isinteger(L, -1, &k) && k >= 1 && k <= n) continue;
			if (lua_type(L, -1) != LUA_TSTRING || n > 0)
				lml_error(L, "option args must be a list {a, b, ...} or a table {name = value} by the "
				          "kernel's parameter names, not both");
			const char *key = lua_tostring(L, -1);
			int found = 0;
			for (int i = 0; i < nparams && !found; i++) found = strcmp(names[i], key) == 0;
			if (!found) lml_error(L, "args.%s: the kernel has no parameter '%s' after t", key, key);
			named = true;
		}
	}
	if (named) n = nparams;
	if (n > MAX_ARGS) lml_error(L, "%lld arguments are more than %d", (long long)n, MAX_ARGS);
	st->args = lua_gettop(L) + 1;
	for (lua_Integer i = 1; i <= n; i++) {
		const char *name = i <= nparams ? names[i - 1] : NULL;
		if (!name) { /* kept alive in the box: the launch's arrays borrow their names */
			lua_pushfstring(L, "arg%d", (int)i);
			lua_pushvalue(L, -1);
			lua_rawset(L, st->box);
			lua_pushfstring(L, "arg%d", (int)i);
			lua_rawget(L, st->box);
			name = lua_tostring(L, -1);
			lua_pop(L, 1);
		}
		if (named) {
			lua_pushstring(L, name);
			lua_rawget(L, t);
		} else {
			lua_rawgeti(L, t, i);
		}
		push_arg(L, st, -1, name, (int)i);
		lua_remove(L, -2); /* the value as given */
	}
	st->nargs = (int)n;
}

/* A shared array's declaration: a size, {size [, dtype]}, or {size=, dtype=, rows=, cols=} (read
 * by the shared option reader; rows x cols alone give the size). */
typedef struct shared_decl {
	int64_t size, rows, cols;
	lm_dtype dtype;
} shared_decl;

static const lml_field shared_fields[] = {
	LML_FIELD(shared_decl, size, LML_INTEGER, .def = "rows x cols", .doc = "elements"),
	LML_FIELD(shared_decl, dtype, LML_DTYPE, .def = "the kernel's", .doc = "the elements' dtype"),
	LML_FIELD(shared_decl, rows, LML_INTEGER, .def = "none", .doc = "rows of a 2-D array (row after row)"),
	LML_FIELD(shared_decl, cols, LML_INTEGER, .def = "none", .doc = "its columns"),
	LML_FIELDS_END,
};

static void read_shared_decl(lua_State *L, int v, const char *name, shared_decl *d)
{
	char dsc[LML_DESCRIBE_MAX];
	if (lua_type(L, v) == LUA_TNUMBER) {
		d->size = lml_checkinteger(L, v, "a shared array's size");
	} else if (lua_type(L, v) != LUA_TTABLE || lml_tobox(L, v)) {
		lml_typeerror(L, v, "option shared's values", "a size, {size, dtype} or {size=, dtype=, rows=, cols=}");
	} else if (lml_isopts(L, v)) {
		lml_readopts(L, v, "key of a shared array", shared_fields, d);
	} else { /* {size, dtype} (either order) and nothing after them */
		lua_Integer len = (lua_Integer)lua_rawlen(L, v);
		for (lua_Integer i = 1; i <= len && i <= 2; i++) {
			lua_rawgeti(L, v, i);
			if (lua_type(L, -1) == LUA_TSTRING) d->dtype = lml_checkdtype(L, -1, "a shared array's dtype");
			else d->size = lml_checkinteger(L, -1, "a shared array's size");
			lua_pop(L, 1);
		}
		lua_pushinteger(L, len < 2 ? len : 2);
		if (lua_next(L, v)) {
			if (lua_type(L, -2) == LUA_TSTRING) snprintf(dsc, sizeof dsc, "'%.40s'", lua_tostring(L, -2));
			else lml_describe(L, -2, dsc, sizeof dsc);
			lml_error(L, "shared array '%s': {size, dtype} takes nothing more, got key %s (a 2-D array: "
			          "{size=, dtype=, rows=, cols=})", name, dsc);
		}
	}
	if (!d->size && d->rows > 0 && d->cols > 0 && lml_mul_overflows(d->rows, d->cols, &d->size))
		lml_error(L, "shared array '%s': rows %lld x cols %lld is past any size", name,
		          (long long)d->rows, (long long)d->cols);
}

/* Declares the arrays of the table opts[key] (const: name -> tensor; shared: name -> size or
 * a declaration read by read_shared_decl) and pushes the table t.<key> of their proxies: its index. */
static int read_named(lua_State *L, launch_state *st, int opts, const char *key)
{
	bool shared = key[0] == 's';
	int t = lml_rawfield(L, opts, key) == LUA_TNIL ? 0 : lua_gettop(L);
	if (t && lua_type(L, t) != LUA_TTABLE)
		lml_typeerror(L, t, shared ? "option shared" : "option const",
		              shared ? "a table {name = size, {size, dtype} or {size=, rows=, cols=, dtype=}}"
		                     : "a table {name = tensor}");
	lua_newtable(L);
	int out = lua_gettop(L);
	luaL_setmetatable(L, shared ? NAMED_MT "s" : NAMED_MT "c");
	if (!t) return out;
	char d[LML_DESCRIBE_MAX];
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			lml_error(L, "option %s: names must be strings, got key %s", key, lml_describe(L, -2, d, sizeof d));
		const char *name = lua_tostring(L, -2);
		size_t len = strlen(name);
		if (len == 0 || len > 40) lml_error(L, "option %s: the name '%.40s' must have 1 to 40 characters", key, name);
		if (!shared) {
			lm_tensor *x = lml_totensor(L, -1);
			if (!x) lml_typeerror(L, -1, "a constant array (option const)", "a tensor");
			tensor_array(L, st, x, name, LM_SPACE_CONSTANT);
		} else {
			shared_decl sd = {.dtype = st->dtype};
			read_shared_decl(L, lua_gettop(L), name, &sd);
			int64_t n = sd.size, rows = sd.rows, cols = sd.cols;
			lm_dtype dt = sd.dtype;
			if (n < 1 || n > LM_KERNEL_MAX_SHARED)
				lml_error(L, "shared array '%s' has %lld elements; give 1 to %d", name, (long long)n,
				          LM_KERNEL_MAX_SHARED);
			if (rows || cols) {
				int64_t rc;
				if (rows < 1 || cols < 1 || lml_mul_overflows(rows, cols, &rc) || rc != n)
					lml_error(L, "shared array '%s': rows %lld x cols %lld must be its %lld elements",
					          name, (long long)rows, (long long)cols, (long long)n);
			}
			if (st->narrays >= MAX_ARRAYS) lml_error(L, "too many arrays");
			int k = st->narrays;
			st->arrays[st->narrays++] = (lm_launch_array){.name = name, .space = LM_SPACE_SHARED,
			                                              .dtype = dt, .length = n, .rows = rows, .cols = cols};
			karray *a = lua_newuserdatauv(L, sizeof *a, 0);
			*a = (karray){.launch = st->id, .slot = k, .length = n, .dtype = dt, .space = LM_SPACE_SHARED};
			snprintf(a->name, sizeof a->name, "%s", name);
			luaL_setmetatable(L, ARRAY_MT);
		}
		lua_setfield(L, out, name); /* t.shared.NAME: the name stays alive in the options table */
		lua_pop(L, 1);
	}
	return out;
}

/* A grid or block: an integer, or {x [, y [, z]]}. */
static void read_dims(lua_State *L, int opts, const char *key, unsigned *dims, bool required)
{
	char what[32];
	dims[0] = dims[1] = dims[2] = 1;
	int v = lml_rawfield(L, opts, key) == LUA_TNIL ? 0 : lua_gettop(L);
	if (!v) {
		if (required)
			lml_error(L, "option %s is required (threads per block: a number or {x, y, z})", key);
		return;
	}
	if (lua_type(L, v) == LUA_TNUMBER) {
		snprintf(what, sizeof what, "option %s", key);
		int64_t n = lml_checkinteger(L, v, what);
		if (n < 1 || n > UINT32_MAX)
			lml_error(L, "option %s must be 1 to 2^32 - 1, got %lld", key, (long long)n);
		dims[0] = (unsigned)n;
	} else if (lua_type(L, v) == LUA_TTABLE && !lml_tobox(L, v) && lua_rawlen(L, v) >= 1 &&
	           lua_rawlen(L, v) <= 3) {
		for (int i = 0; i < (int)lua_rawlen(L, v); i++) {
			lua_rawgeti(L, v, i + 1);
			snprintf(what, sizeof what, "option %s[%d]", key, i + 1);
			int64_t n = lml_checkinteger(L, -1, what);
			if (n < 1 || n > UINT32_MAX) lml_error(L, "%s must be 1 to 2^32 - 1, got %lld", what, (long long)n);
			dims[i] = (unsigned)n;
			lua_pop(L, 1);
		}
	} else {
		lml_typeerror(L, v, key[0] == 'g' ? "option grid" : "option block",
		              "a number or {x, y, z} of 1 to 3 numbers");
	}
	lua_pop(L, 1);
}

/* Whether the table on the stack top holds fn under a one-word string key: its name into buf. */
static bool find_key(lua_State *L, int fn, char *buf, size_t cap)
{
	bool found = false;
	lua_pushnil(L);
	while (!found && lua_next(L, -2)) {
		if (lua_type(L, -2) == LUA_TSTRING && lua_rawequal(L, -1, fn)) {
			const char *k = lua_tostring(L, -2);
			if (strlen(k) <= 40 && !strpbrk(k, " \t\n")) {
				snprintf(buf, cap, "%s", k);
				found = true;
				lua_pop(L, 1); /* the key too, below */
			}
		}
		lua_pop(L, 1);
	}
	return found;
}

/* find_key in the table on the stack top, else in its metatable's __index table (a lesson's
 * environment is a proxy whose __index holds the globals). */
static bool find_key_env(lua_State *L, int fn, char *buf, size_t cap)
{
	if (find_key(L, fn, buf, cap)) return true;
	bool found = false;
	if (lua_getmetatable(L, -1)) {
		if (lua_getfield(L, -1, "__index") == LUA_TTABLE) found = find_key(L, fn, buf, cap);
		lua_pop(L, 2);
	}
	return found;
}

/* Whether the name is one word of at most 40 characters (not a temporary like "(for state)"). */
static bool word_name(const char *k)
{
	return k && *k && *k != '(' && strlen(k) <= 40 && !strpbrk(k, " \t\n");
}

/* The kernel's name: opts.name, the local or upvalue of the caller that holds it, the global it is
 * stored in (in the caller's environment: a lesson's, a test file's, or _G), or "anonymous" (an
 * inline function: messages then say "(kernel anonymous)"; option name= names it). */
static const char *kernel_name(lua_State *L, int fn, const char *given, char *buf, size_t cap)
{
	snprintf(buf, cap, "anonymous");
	if (given) {
		if (!*given || strlen(given) > 40) lml_error(L, "option name must have 1 to 40 characters");
		if (strpbrk(given, " \t\n")) lml_error(L, "option name '%.40s' must be one word", given);
		snprintf(buf, cap, "%s", given);
		return buf;
	}
	lua_Debug ar;
	if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "fu", &ar)) {
		int caller = lua_gettop(L);
		const char *up;
		bool param = false; /* a parameter's name (run(kernel, x)) says less than the global's */
		for (int i = 1; (up = lua_getlocal(L, &ar, i)) != NULL; i++) { /* local function add1 ... */
			bool hit = word_name(up) && lua_rawequal(L, -1, fn);
			lua_pop(L, 1);
			if (hit && i <= ar.nparams) {
				snprintf(buf, cap, "%s", up);
				param = true;
			} else if (hit) {
				snprintf(buf, cap, "%s", up);
				lua_settop(L, caller - 1);
				return buf;
			}
		}
		if (param) { /* the global it is stored in, if any, else the parameter's name */
			char global[48];
			bool found = false;
			for (int i = 1; !found && (up = lua_getupvalue(L, caller, i)) != NULL; i++) {
				if (strcmp(up, "_ENV") == 0 && lua_istable(L, -1)) found = find_key_env(L, fn, global, sizeof global);
				lua_pop(L, 1);
			}
			if (!found) {
				lua_pushglobaltable(L);
				found = find_key(L, fn, global, sizeof global);
				lua_pop(L, 1);
			}
			if (found) snprintf(buf, cap, "%s", global);
			lua_settop(L, caller - 1);
			return buf;
		}
		for (int i = 1; (up = lua_getupvalue(L, caller, i)) != NULL; i++) { /* ... one scope out */
			bool hit = strcmp(up, "_ENV") != 0 && word_name(up) && lua_rawequal(L, -1, fn);
			lua_pop(L, 1);
			if (hit) {
				snprintf(buf, cap, "%s", up);
				lua_settop(L, caller - 1);
				return buf;
			}
		}
		for (int i = 1; (up = lua_getupvalue(L, caller, i)) != NULL; i++) { /* the caller's _ENV */
			if (strcmp(up, "_ENV") == 0 && lua_istable(L, -1) && find_key_env(L, fn, buf, cap)) {
				lua_settop(L, caller - 1);
				return buf;
			}
			lua_pop(L, 1);
		}
		lua_settop(L, caller - 1);
	}
	lua_pushglobaltable(L);
	find_key(L, fn, buf, cap);
	lua_pop(L, 1);
	return buf;
}

/* The thread tables t and the coroutines, made before the launch (nothing raises during it). */
static void make_threads(lua_State *L, launch_state *st, const unsigned *block, int shared, int consts,
                         const unsigned *grid)
{
	static const char *const xyz[3] = {"x", "y", "z"};
	lua_createtable(L, 0, 3); /* blockIdx (set for each block), blockDim, gridDim */
	st->blockidx = lua_gettop(L);
	for (int k = 0; k < 3; k++) lml_setint(L, xyz[k], 0);
	lua_createtable(L, 0, 3);
	int bdim = lua_gettop(L);
	for (int k = 0; k < 3; k++) lml_setint(L, xyz[k], block[k]);
	lua_createtable(L, 0, 3);
	int gdim = lua_gettop(L);
	for (int k = 0; k < 3; k++) lml_setint(L, xyz[k], grid[k]);
	lua_createtable(L, st->nthreads, 0);
	st->ts = lua_gettop(L);
	lua_createtable(L, st->nthreads, 0);
	st->cos = lua_gettop(L);
	/* a debug.sethook hook of the caller: its function for every thread too */
	lua_getfield(L, LUA_REGISTRYINDEX, "_HOOKKEY");
	int hooks = lua_gettop(L);
	bool lua_hook = lua_istable(L, hooks) && lua_gethook(L);
	for (int i = 0; i < st->nthreads; i++) {
		lua_createtable(L, 0, 10);
		lua_createtable(L, 0, 3);
		lml_setint(L, "x", (unsigned)i % block[0]);
		lml_setint(L, "y", (unsigned)i / block[0] % block[1]);
		lml_setint(L, "z", (unsigned)i / (block[0] * block[1])); /* bounded: checked to 1024 threads */
		lua_setfield(L, -2, "threadIdx");
		lua_pushvalue(L, st->blockidx);
		lua_setfield(L, -2, "blockIdx");
		lua_pushvalue(L, bdim);
		lua_setfield(L, -2, "blockDim");
		lua_pushvalue(L, gdim);
		lua_setfield(L, -2, "gridDim");
		lml_setint(L, "warp", i / 32);
		lml_setint(L, "lane", i % 32);
		lua_pushvalue(L, shared);
		lua_setfield(L, -2, "shared");
		lua_pushvalue(L, consts);
		lua_setfield(L, -2, "const");
		luaL_setmetatable(L, T_MT);
		lua_rawseti(L, st->ts, i + 1);
		lua_State *co = lua_newthread(L);
		st->co[i] = co;
		lua_sethook(co, launch_hook, LUA_MASKCOUNT, st->hook_count);
		if (lua_hook) { /* _HOOKKEY[co] = _HOOKKEY[L] */
			lua_pushvalue(L, -1);
			lua_pushthread(L);
			lua_rawget(L, hooks);
			lua_rawset(L, hooks);
		}
		lua_rawseti(L, st->cos, i + 1);
	}
	lua_pop(L, 1); /* _HOOKKEY */
}

/* ---------------------------------------------------------------- kernels.launch */

typedef struct launch_opts {
	const char *name;
	int racecheck, initcheck;
	int64_t trace_cap;
	lm_dtype dtype;
} launch_opts;

static void ignore(lua_State *L, int idx, const lml_field *f, void *dst)
{
	(void)L, (void)idx, (void)f, (void)dst;
}

static const lml_field launch_fields[] = {
	{.key = "grid", .kind = LML_CUSTOM, .check = ignore, .def = "1",
	 .doc = "blocks: a number or {x, y, z}"},
	{.key = "block", .kind = LML_CUSTOM, .check = ignore, .def = "required",
	 .doc = "threads per block: a number or {x, y, z} (at most 1024 threads)"},
	{.key = "shared", .kind = LML_CUSTOM, .check = ignore, .def = "none",
	 .doc = "shared arrays {NAME = size, {size, dtype} or {size=, dtype=, rows=, cols=}, ...}, each block's own, zeroed: t.shared.NAME[i]"},
	{.key = "args", .kind = LML_CUSTOM, .check = ignore, .def = "none",
	 .doc = "the kernel's arguments after t: a list, or a table by parameter name; tensors become 0-based arrays"},
	{.key = "const", .kind = LML_CUSTOM, .check = ignore, .def = "none",
	 .doc = "constant-memory arrays {NAME = tensor}: t.const.NAME[i] (read-only)"},
	LML_FIELD(launch_opts, name, LML_STRING, .def = "the global's name", .doc = "the kernel's name in the trace and messages"),
	LML_FIELD(launch_opts, racecheck, LML_BOOLEAN, .def = "true",
	          .doc = "check for races: in each barrier phase of a block, and between blocks"),
	LML_FIELD(launch_opts, initcheck, LML_BOOLEAN, .def = "true",
	          .doc = "fail a read of shared memory (or of an lm.empty tensor) that nothing wrote yet"),
	LML_FIELD(launch_opts, trace_cap, LML_INTEGER, .def = "2^20", .doc = "events the trace keeps"),
	LML_FIELD(launch_opts, dtype, LML_DTYPE, .def = "the first float tensor's",
	          .doc = "what t:add rounds to and the shared arrays' default dtype"),
	LML_FIELDS_END,
};

/* Pushes the message of a failed launch: a Lua error of a thread with the thread and the block,
 * or the emulator's message; then the failing coroutine's traceback. */
static void push_failure(lua_State *L, launch_state *st, const char *emu_msg, const char *kernel)
{
	lua_State *co = st->failed >= 0 ? st->co[st->failed] : NULL;
	if (st->lua_error && co) {
		const unsigned *w = st->failed_at;
		int type = lua_type(co, -1);
		const char *m = type == LUA_TSTRING || type == LUA_TNUMBER ? lua_tostring(co, -1)
		                                                           : "(an error object that is not a string)";
		lua_pushfstring(L, "kernels.launch: %s by thread (%d,%d,%d) in block (%d,%d,%d) (kernel %s)", m,
		                (int)w[0], (int)w[1], (int)w[2], (int)w[3], (int)w[4], (int)w[5], kernel);
	} else {
		lua_pushstring(L, emu_msg);
	}
	if (co) {
		lua_pushliteral(L, "\n");
		luaL_traceback(L, co, NULL, 0);
		lua_concat(L, 3);
	}
}

static int k_launch(lua_State *L)
{
	char d[LML_DESCRIBE_MAX], kname[48], where[128];
	if (lua_type(L, 1) != LUA_TFUNCTION)
		lml_error(L, "argument 1 (the kernel) must be a function fn(t, ...), got %s",
		          lml_describe(L, 1, d, sizeof d));
	if (current) lml_error(L, "a kernel cannot launch a kernel (kernels.launch inside a running kernel)");
	lm_kernel_clear_fault();
	if (lua_type(L, 2) != LUA_TTABLE || lml_tobox(L, 2))
		lml_error(L, "argument 2 must be the launch's options {grid=, block=, args=, ...}, got %s",
		          lml_describe(L, 2, d, sizeof d));
	lua_settop(L, 2);
	launch_opts o = {.racecheck = -1, .initcheck = -1, .dtype = (lm_dtype)-1};
	lml_readopts(L, 2, NULL, launch_fields, &o);
	launch_state *st = lua_newuserdatauv(L, sizeof *st, 0);
	memset(st, 0, sizeof *st);
	luaL_setmetatable(L, "lumen.KernelLaunchState");
	st->L = L;
	st->fn = 1;
	st->id = next_launch++;
	st->failed = st->running = -1;
	lua_newtable(L); /* box: the array proxies by slot, the argument names */
	st->box = lua_gettop(L);
	lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
	st->main = lua_tothread(L, -1);
	lua_pop(L, 1);

	unsigned grid[3], block[3];
	read_dims(L, 2, "grid", grid, false);
	read_dims(L, 2, "block", block, true);
	int64_t nt, nb; /* each dim < 2^32: a product of three can pass 2^64 (2^31 x 2^31 x 4 wrapped to 0) */
	bool over = lml_mul_overflows(block[0], block[1], &nt) || lml_mul_overflows(nt, block[2], &nt);
	if (over || nt > LM_KERNEL_MAX_BLOCK) {
		char count[40] = " (past 2^63)";
		if (!over) snprintf(count, sizeof count, " = %lld", (long long)nt);
		lml_error(L, "a block of %u x %u x %u%s threads exceeds the limit of %d threads per block", block[0],
		          block[1], block[2], count, LM_KERNEL_MAX_BLOCK);
	}
	if (lml_mul_overflows(grid[0], grid[1], &nb) || lml_mul_overflows(nb, grid[2], &nb) || nb > UINT32_MAX)
		lml_error(L, "a grid of %u x %u x %u blocks is more than the emulator's 2^32 - 1 blocks", grid[0],
		          grid[1], grid[2]);
	st->nthreads = (int)nt;
	read_args(L, st, 2);
	int consts_at = read_named(L, st, 2, "const"); /* before shared: the kernel's dtype may come from a constant */
	if (o.dtype == (lm_dtype)-1) {
		o.dtype = LM_FLOAT32;
		for (int i = st->narrays - 1; i >= 0; i--)
			if (st->arrays[i].dtype == LM_FLOAT32 || st->arrays[i].dtype == LM_FLOAT64) o.dtype = st->arrays[i].dtype;
	}
	if (o.dtype != LM_FLOAT32 && o.dtype != LM_FLOAT64)
		lml_error(L, "option dtype must be float32 or float64 (what t:add computes in), got %s",
		          lm_dtype_name(o.dtype));
	st->dtype = o.dtype;
	int shared_at = read_named(L, st, 2, "shared");
	st->hook_count = HOOK_COUNT;
	if (lua_gethook(L) && (lua_gethookmask(L) & LUA_MASKCOUNT) && lua_gethookcount(L) < HOOK_COUNT)
		st->hook_count = lua_gethookcount(L) > 0 ? lua_gethookcount(L) : 1;
	make_threads(L, st, block, shared_at, consts_at, grid);
	if (!lua_checkstack(L, st->nargs + 8)) lml_error(L, "too many arguments for the Lua stack");

	lua_Debug ar;
	lua_pushvalue(L, 1);
	lua_getinfo(L, ">S", &ar);
	snprintf(where, sizeof where, "Lua, %s:%d", ar.short_src, ar.linedefined);
	lm_launch_desc desc = {
		.fname = "kernels.launch",
		.kernel = kernel_name(L, 1, o.name, kname, sizeof kname),
		.where = where,
		.grid = {grid[0], grid[1], grid[2]},
		.block = {block[0], block[1], block[2]},
		.arrays = st->arrays,
		.narrays = st->narrays,
		.dtype = st->dtype,
		.trace_cap = o.trace_cap,
		.no_racecheck = o.racecheck == 0,
		.no_initcheck = o.initcheck == 0,
		.run = run_thread,
		.ctx = st,
	};
	lm_kernel_info **ibox = lml_newinfobox(L);
	int infobox = lua_gettop(L);
	lml_newtracebox(L);
	int tracebox = lua_gettop(L);
	current = st;
	lm_status status = lm_kernel_launch(&desc, ibox);
	current = NULL;
	char emu_msg[512];
	snprintf(emu_msg, sizeof emu_msg, "%s", lm_last_error());
	/* views get what the kernel wrote into their copies, whatever happened; the marks of
	 * lm.empty's elements follow what it wrote */
	for (int i = 0; i < st->nheld; i++) {
		lm_tensor *arg = st->view[i] ? st->view[i] : st->held[i];
		if (st->view[i] && st->arrays[i].space == LM_SPACE_GLOBAL && lm_copy_(st->view[i], st->held[i]))
			lml_core_error(L);
		if (st->gathered[i]) map_marks(arg, st->marks[i], st->gathered[i], false);
		if (st->marks[i]) lm_tensor_init_marks_sync(arg);
	}
	release_held(st);
	if (status != LM_OK) {
		push_failure(L, st, emu_msg, desc.kernel);
		return lua_error(L);
	}
	lml_push_info(L, infobox, tracebox, 1);
	lua_pushvalue(L, -1); /* the last run, for kernels.last_run() */
	lua_setfield(L, LUA_REGISTRYINDEX, "lumen.last_launch");
	return 1;
}

/* kernels.last_run() -> the info of the last kernels.launch that succeeded (nil before one): what
 * a lesson draws after checking a student's kernel, which the check launched. */
static int k_last_run(lua_State *L)
{
	lua_getfield(L, LUA_REGISTRYINDEX, "lumen.last_launch");
	return 1;
}

static void push_access(lua_State *L, const lm_fault_access *a)
{
	static const char *const xyz[3] = {"x", "y", "z"};
	lua_createtable(L, 0, 4);
	lua_createtable(L, 0, 3);
	for (int k = 0; k < 3; k++) lml_setint(L, xyz[k], a->thread[k]);
	lua_setfield(L, -2, "thread");
	lua_createtable(L, 0, 3);
	for (int k = 0; k < 3; k++) lml_setint(L, xyz[k], a->block[k]);
	lua_setfield(L, -2, "block");
	if (a->line > 0) lml_setint(L, "line", a->line);
	if (a->kind >= 0) {
		lua_pushstring(L, lm_trace_kind_name(a->kind));
		lua_setfield(L, -2, "access");
	}
}

/* kernels.last_fault() -> what stopped the last emulated launch that failed (nil after one that
 * succeeded): {kind = 'bounds' | 'uninit' | 'race' | 'deadlock' | 'barrier' | 'error' |
 * 'interrupted', kernel, array, space, index (0-based), length, hazard ('read-after-write',
 * 'write-after-read', 'write-after-write', 'atomic'), across_blocks, rmw, writers, first, second
 * ({thread = {x, y, z}, block = {x, y, z}, line, access})}: what a lesson's check reads instead of
 * the message, which follows the language. */
static int k_last_fault(lua_State *L)
{
	static const char *const kinds[] = {
		[LM_FAULT_BOUNDS] = "bounds", [LM_FAULT_UNINIT] = "uninit", [LM_FAULT_RACE] = "race",
		[LM_FAULT_DEADLOCK] = "deadlock", [LM_FAULT_BARRIER] = "barrier", [LM_FAULT_ERROR] = "error",
		[LM_FAULT_INTERRUPTED] = "interrupted",
	};
	static const char *const hazards[] = {
		[LM_HAZARD_RAW] = "read-after-write", [LM_HAZARD_WAR] = "write-after-read",
		[LM_HAZARD_WAW] = "write-after-write", [LM_HAZARD_ATOMIC] = "atomic",
	};
	lm_kernel_fault f;
	lm_kernel_last_fault(&f);
	if (f.kind == LM_FAULT_NONE) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, 0, 14);
	lua_pushstring(L, kinds[f.kind]);
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, f.kernel);
	lua_setfield(L, -2, "kernel");
	if (f.array[0]) {
		lua_pushstring(L, f.array);
		lua_setfield(L, -2, "array");
		lua_pushstring(L, lm_trace_space_name(f.space));
		lua_setfield(L, -2, "space");
		lml_setint(L, "index", f.index);
		lml_setint(L, "length", f.length);
	}
	if (f.kind == LM_FAULT_RACE) {
		lua_pushstring(L, hazards[f.hazard]);
		lua_setfield(L, -2, "hazard");
		lua_pushboolean(L, f.across_blocks);
		lua_setfield(L, -2, "across_blocks");
		lua_pushboolean(L, f.rmw);
		lua_setfield(L, -2, "rmw");
		lml_setint(L, "writers", f.writers);
	}
	push_access(L, &f.first);
	lua_setfield(L, -2, "first");
	if (f.second.kind >= 0 || f.kind == LM_FAULT_BARRIER) {
		push_access(L, &f.second);
		lua_setfield(L, -2, "second");
	}
	return 1;
}

/* kernels.racecheck([on]) -> whether the race check was on: every emulated run, shipped kernels
 * and kernels.launch alike. */
static int k_racecheck(lua_State *L)
{
	if (lua_isnoneornil(L, 1)) {
		lua_pushboolean(L, lm_kernel_racecheck());
		return 1;
	}
	if (!lua_isboolean(L, 1)) lml_typeerror(L, 1, "argument 1", "a boolean");
	lua_pushboolean(L, lm_kernel_set_racecheck(lua_toboolean(L, 1)));
	return 1;
}

void lml_open_launch(lua_State *L, int k)
{
	static const luaL_Reg array_meta[] = {{"__index", array_index}, {"__newindex", array_newindex},
	                                      {"__len", array_len}, {"__tostring", array_tostring},
	                                      {NULL, NULL}};
	static const luaL_Reg t_methods[] = {{"sync", t_sync}, {"atomic_add", t_atomic_add},
	                                     {"add", t_add}, {"branch", t_branch}, {NULL, NULL}};
	if (luaL_newmetatable(L, ARRAY_MT)) luaL_setfuncs(L, array_meta, 0);
	lua_pop(L, 1);
	if (luaL_newmetatable(L, T_MT)) {
		lua_newtable(L);
		luaL_setfuncs(L, t_methods, 0);
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
	static const char *const named[2][2] = {{NAMED_MT "s", "shared"}, {NAMED_MT "c", "const"}};
	for (int i = 0; i < 2; i++) {
		if (luaL_newmetatable(L, named[i][0])) {
			lua_pushcfunction(L, named_index);
			lua_setfield(L, -2, "__index");
			lua_pushstring(L, named[i][1]);
			lua_setfield(L, -2, "__what");
		}
		lua_pop(L, 1);
	}
	if (luaL_newmetatable(L, "lumen.KernelLaunchState")) {
		lua_pushcfunction(L, state_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	static const luaL_Reg fns[] = {{"launch", k_launch}, {"racecheck", k_racecheck},
	                               {"last_fault", k_last_fault}, {"last_run", k_last_run}, {NULL, NULL}};
	lml_setfuncs(L, k, "kernels.", fns, 0);
	lml_push_fields(L, launch_fields); /* for :help kernels.launch (not in kernels.options, whose */
	lua_setfield(L, k, "launch_options"); /* calls all take lm_kernel_opts) */
}
