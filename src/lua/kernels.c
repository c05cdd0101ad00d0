/*
 * kernels.c — the C half of the `kernels` module (lumen/kernels.h): kernels.reduce, scan, histogram,
 * matmul, conv2d, sparse, spmv, divergence, streams and latency, the trace userdata that
 * info.trace holds, and the sparse-matrix userdata (lumen.Sparse).
 *
 * Design: as every binding (lml.h): all arguments checked first, then boxes for everything the
 * call will own (the result tensor, the core's info object, the trace), then the core call, then
 * the info table built from the boxed info (which may raise: the boxes' __gc free what they hold).
 * A trace is a userdata holding one reference (lm_trace_retain); `#trace`, `trace[i]` (1-based),
 * `trace:filter{...}`, `trace:steps()`, `trace:launches()`, `trace:arrays()`, `trace.truncated`.
 * Ids inside events (block, warp, lane, step, index) stay 0-based as in the CUDA code they
 * describe. lua/lumen/kernels.lua makes this the `kernels` module. Read next: docs/trace.md.
 */
#include <string.h>

#include "lml.h"
#include "lumen/kernels.h"

#define TRACE_MT "lumen.Trace"
#define INFO_MT "lumen.KernelInfoBox" /* owns the core's info while the table is built */
#define INFO_TABLE_MT "lumen.KernelInfo"   /* the info table users see */
#define SPARSE_MT "lumen.Sparse"

/* ---------------------------------------------------------------- errors */

/* The core names the call "kernels.scan", as Lua does: raise its message as it is. */
_Noreturn static int kernel_error(lua_State *L)
{
	const char *e = lm_last_error(), *f = lml_fname(L);
	size_t n = strlen(f);
	if (strncmp(e, f, n) == 0 && e[n] == ':') luaL_error(L, "%s", e);
	lml_core_error(L);
}

/* ---------------------------------------------------------------- options */

static const char *opt_string(lua_State *L, int t, const char *k)
{
	const char *s = NULL;
	if (lml_rawfield(L, t, k) != LUA_TNIL) {
		if (lua_type(L, -1) != LUA_TSTRING) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "option %s must be a string, got %s", k, lml_describe(L, -1, d, sizeof d));
		}
		s = lua_tostring(L, -1); /* the string stays alive: the options table holds it */
	}
	lua_pop(L, 1);
	return s;
}

static int64_t opt_integer(lua_State *L, int t, const char *k, int64_t def)
{
	char what[40];
	snprintf(what, sizeof what, "option %s", k);
	lml_rawfield(L, t, k);
	int64_t v = lml_optinteger(L, -1, what, def);
	lua_pop(L, 1);
	return v;
}

/* ---------------------------------------------------------------- traces */

/* The trace box at idx; raises "self must be a trace, got X" otherwise. */
static lm_trace **tracebox(lua_State *L, int idx)
{
	lm_trace **box = luaL_testudata(L, idx, TRACE_MT);
	if (!box) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "self must be a trace (info.trace), got %s", lml_describe(L, idx, d, sizeof d));
	}
	return box;
}

static lm_trace *checktrace(lua_State *L, int idx)
{
	lm_trace **box = tracebox(L, idx);
	if (!*box) lml_error(L, "the trace is closed");
	return *box;
}

static void setnum(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static void setint(lua_State *L, const char *k, int64_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

/* Pushes event i (0-based) as a table. */
static void push_event(lua_State *L, const lm_trace *t, int64_t i)
{
	const lm_trace_event *e = lm_trace_event_get(t, i);
	lua_createtable(L, 0, 16);
	setnum(L, "value", e->value);
	setint(L, "cycle", (int64_t)e->cycle);
	setint(L, "latency", e->latency);
	setint(L, "index", e->index);
	setint(L, "block", e->block);
	setint(L, "step", e->step);
	setint(L, "mask", e->mask);
	setint(L, "aux", e->aux);
	setint(L, "warp", e->warp);
	setint(L, "line", e->line);
	setint(L, "lane", e->lane);
	setint(L, "launch", e->launch);
	lua_pushstring(L, lm_trace_kind_name(e->kind));
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, lm_trace_space_name(e->space));
	lua_setfield(L, -2, "space");
	lm_trace_array a;
	if (e->array != LM_TRACE_NO_ARRAY && lm_trace_array_get(t, e->array, &a) == LM_OK) {
		lua_pushstring(L, a.name);
		lua_setfield(L, -2, "array");
	}
}

static int t_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_trace_count(checktrace(L, 1)));
	return 1;
}

static int t_gc(lua_State *L)
{
	lm_trace **box = tracebox(L, 1);
	if (*box && !lml_may_release(L))
		lml_error(L, "cannot close a trace inside a finalizer (__gc): a call that is running may "
		          "be using it");
	lm_trace_release(*box);
	*box = NULL;
	return 0;
}

static int t_tostring(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	if (lm_trace_truncated(t))
		lua_pushfstring(L, "trace of %s: %I events (truncated at %I events of %I)", lm_trace_name(t),
		                (lua_Integer)lm_trace_count(t), (lua_Integer)lm_trace_cap(t),
		                (lua_Integer)lm_trace_seen(t));
	else
		lua_pushfstring(L, "trace of %s: %I events, %I steps", lm_trace_name(t),
		                (lua_Integer)lm_trace_count(t), (lua_Integer)lm_trace_step_count(t));
	return 1;
}

/* trace:filter{kind=, space=, step=, block=, warp=, lane=, launch=} -> array of events */
static int t_filter(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	if (!lua_isnoneornil(L, 2)) {
		if (!lua_istable(L, 2)) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "the filter must be a table such as {kind='load'}, got %s",
			          lml_describe(L, 2, d, sizeof d));
		}
		lua_pushnil(L);
		while (lua_next(L, 2)) {
			lua_pop(L, 1);
			const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
			if (strcmp(k, "kind") && strcmp(k, "space") && strcmp(k, "step") && strcmp(k, "block") &&
			    strcmp(k, "warp") && strcmp(k, "lane") && strcmp(k, "launch")) {
				char d[LML_DESCRIBE_MAX];
				lml_error(L, "unknown filter key %s (expected kind, space, step, block, warp, lane "
				             "or launch)", lml_describe(L, -1, d, sizeof d));
			}
		}
		const char *kind = opt_string(L, 2, "kind"), *space = opt_string(L, 2, "space");
		if (kind && lm_trace_kind_from_name(kind, &f.kind) != LM_OK) kernel_error(L);
		if (space) {
			f.space = -2;
			for (int s = 0; s < LM_SPACE_COUNT; s++)
				if (strcmp(space, lm_trace_space_name(s)) == 0) f.space = s;
			if (f.space == -2)
				lml_error(L, "unknown space '%s' (expected none, global, shared or constant)", space);
		}
		f.step = opt_integer(L, 2, "step", -1);
		f.block = opt_integer(L, 2, "block", -1);
		f.warp = opt_integer(L, 2, "warp", -1);
		f.lane = opt_integer(L, 2, "lane", -1);
		f.launch = (int)opt_integer(L, 2, "launch", -1);
	}
	lua_newtable(L);
	lua_Integer n = 0;
	for (int64_t i = lm_trace_find(t, &f, 0); i >= 0; i = lm_trace_find(t, &f, i + 1)) {
		push_event(L, t, i);
		lua_rawseti(L, -2, ++n);
	}
	return 1;
}

/* trace:steps() -> array of {launch=, block=, step=, first=, count=, start_cycle=, cycles=,
 * adds=, barrier=}; first is the 1-based index of its first event in the trace */
static int t_steps(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	int64_t n = lm_trace_step_count(t);
	lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
	for (int64_t i = 0; i < n; i++) {
		lm_trace_step s;
		lm_trace_step_get(t, i, &s);
		lua_createtable(L, 0, 9);
		setint(L, "launch", s.launch);
		setint(L, "block", s.block);
		setint(L, "step", s.step);
		setint(L, "first", s.first + 1);
		setint(L, "count", s.count);
		setint(L, "start_cycle", (int64_t)s.start_cycle);
		setint(L, "cycles", (int64_t)s.cycles);
		setint(L, "adds", s.adds);
		lua_pushboolean(L, s.barrier);
		lua_setfield(L, -2, "barrier");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* trace:launches() -> array of {kernel=, grid={x,y,z}, block={x,y,z}, shared_bytes=,
 * start_cycle=, end_cycle=} */
static int t_launches(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	lua_newtable(L);
	for (int i = 0; i < lm_trace_launch_count(t); i++) {
		lm_trace_launch l;
		lm_trace_launch_get(t, i, &l);
		lua_createtable(L, 0, 6);
		lua_pushstring(L, l.kernel);
		lua_setfield(L, -2, "kernel");
		for (int g = 0; g < 2; g++) {
			lua_createtable(L, 3, 0);
			for (int d = 0; d < 3; d++) {
				lua_pushinteger(L, g ? l.block[d] : l.grid[d]);
				lua_rawseti(L, -2, d + 1);
			}
			lua_setfield(L, -2, g ? "block" : "grid");
		}
		setint(L, "shared_bytes", (int64_t)l.shared_bytes);
		setint(L, "start_cycle", (int64_t)l.start_cycle);
		setint(L, "end_cycle", (int64_t)l.end_cycle);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* trace:arrays() -> array of {name=, space=, dtype=, length=, rows=, cols=, launch=} */
static int t_arrays(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	lua_newtable(L);
	for (int i = 0; i < lm_trace_array_count(t); i++) {
		lm_trace_array a;
		lm_trace_array_get(t, i, &a);
		lua_createtable(L, 0, 7);
		lua_pushstring(L, a.name);
		lua_setfield(L, -2, "name");
		lua_pushstring(L, lm_trace_space_name(a.space));
		lua_setfield(L, -2, "space");
		lua_pushstring(L, lm_dtype_name(a.dtype));
		lua_setfield(L, -2, "dtype");
		setint(L, "length", a.length);
		setint(L, "rows", a.rows);
		setint(L, "cols", a.cols);
		if (a.launch >= 0) setint(L, "launch", a.launch);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* trace[i] (1-based) -> event table; trace.truncated, .seen, .cap, .name; methods */
static int t_index(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	int64_t i;
	if (lml_isinteger(L, 2, &i)) {
		if (i < 1 || i > lm_trace_count(t)) {
			lua_pushnil(L);
			return 1;
		}
		push_event(L, t, i - 1);
		return 1;
	}
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
	if (strcmp(k, "truncated") == 0) lua_pushboolean(L, lm_trace_truncated(t));
	else if (strcmp(k, "seen") == 0) lua_pushinteger(L, (lua_Integer)lm_trace_seen(t));
	else if (strcmp(k, "cap") == 0) lua_pushinteger(L, (lua_Integer)lm_trace_cap(t));
	else if (strcmp(k, "name") == 0) lua_pushstring(L, lm_trace_name(t));
	else {
		lua_getmetatable(L, 1);
		lua_getfield(L, -1, "methods");
		lua_getfield(L, -1, k);
	}
	return 1;
}

static const luaL_Reg trace_methods[] = {
	{"filter", t_filter},
	{"steps", t_steps},
	{"launches", t_launches},
	{"arrays", t_arrays},
	{NULL, NULL},
};

static const luaL_Reg trace_meta[] = {
	{"__len", t_len},
	{"__gc", t_gc},
	{"__close", t_gc},
	{"__tostring", t_tostring},
	{"__index", t_index},
	{NULL, NULL},
};

/* ---------------------------------------------------------------- the calls */

static int info_gc(lua_State *L)
{
	lm_kernel_info **box = luaL_checkudata(L, 1, INFO_MT);
	lm_kernel_info_free(*box);
	*box = NULL;
	return 0;
}

/* Pushes the info table for the boxed info (the box keeps ownership until collected). */
static void push_info(lua_State *L, lm_kernel_info *info, int tracebox, int want_trace)
{
	lua_createtable(L, 0, 8);
	luaL_setmetatable(L, INFO_TABLE_MT);
	lua_pushstring(L, lm_kernel_info_source(info));
	lua_setfield(L, -2, "source");
	lua_pushstring(L, lm_kernel_info_device(info));
	lua_setfield(L, -2, "device");
	lua_pushstring(L, lm_kernel_info_provenance(info));
	lua_setfield(L, -2, "provenance");
	lua_pushstring(L, lm_kernel_info_pattern(info));
	lua_setfield(L, -2, "pattern");
	lua_pushstring(L, lm_kernel_info_algo(info));
	lua_setfield(L, -2, "algo");
	int n = lm_kernel_info_counter_count(info);
	lua_createtable(L, 0, n); /* counters: name -> value */
	lua_createtable(L, n, 0); /* counter_names: in order */
	for (int i = 0; i < n; i++) {
		double v = lm_kernel_info_counter_value(info, i);
		int64_t iv = (int64_t)v;
		if ((double)iv == v) lua_pushinteger(L, (lua_Integer)iv);
		else lua_pushnumber(L, v);
		lua_setfield(L, -3, lm_kernel_info_counter_name(info, i));
		lua_pushstring(L, lm_kernel_info_counter_name(info, i));
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -3, "counter_names");
	lua_setfield(L, -2, "counters");
	lm_trace *t = lm_kernel_info_trace(info);
	if (t && want_trace) { /* trace=false: none, though the emulator records one anyway */
		lm_trace **box = lua_touserdata(L, tracebox);
		*box = lm_trace_retain(t);
		lua_pushvalue(L, tracebox);
		lua_setfield(L, -2, "trace");
	}
	int ns = lm_kernel_info_span_count(info);
	if (ns) { /* info.timeline: {schedule=, op=, track=, segment=, stream=, start_ms=, ...} */
		lua_createtable(L, ns, 0);
		for (int i = 0; i < ns; i++) {
			lm_kernel_span sp;
			lm_kernel_info_span_get(info, i, &sp);
			lua_createtable(L, 0, 8);
			lua_pushstring(L, sp.schedule);
			lua_setfield(L, -2, "schedule");
			lua_pushstring(L, sp.op);
			lua_setfield(L, -2, "op");
			lua_pushstring(L, sp.track);
			lua_setfield(L, -2, "track");
			setint(L, "segment", sp.segment);
			setint(L, "stream", sp.stream);
			setnum(L, "start_ms", sp.start_ms);
			setnum(L, "end_ms", sp.end_ms);
			setnum(L, "bytes", sp.bytes);
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "timeline");
	}
}


/* What a binding passes to its core call: the checked arguments. */
typedef struct call_args {
	const lm_tensor *a, *b;   /* tensors (a: the input, b: the second operand) */
	const char *bytes;        /* histogram of a string */
	size_t nbytes;
	int64_t bins;
	const lm_sparse *sparse;
	lm_kernel_opts o;
	lm_status (*one)(const lm_tensor *, const lm_kernel_opts *, lm_tensor **, lm_kernel_info **);
	lm_status (*two)(const lm_tensor *, const lm_tensor *, const lm_kernel_opts *, lm_tensor **,
	                 lm_kernel_info **);
	lm_status (*none)(const lm_kernel_opts *, lm_tensor **, lm_kernel_info **);
	int kind; /* which of the above, or histogram / spmv */
} call_args;

enum { CALL_ONE, CALL_TWO, CALL_NONE, CALL_HISTOGRAM, CALL_SPMV };

static lm_status core_call(const call_args *c, lm_tensor **y, lm_kernel_info **info)
{
	switch (c->kind) {
	case CALL_ONE: return c->one(c->a, &c->o, y, info);
	case CALL_TWO: return c->two(c->a, c->b, &c->o, y, info);
	case CALL_NONE: return c->none(&c->o, y, info);
	case CALL_HISTOGRAM:
		if (c->bytes) return lm_kernel_histogram_bytes(c->bytes, (int64_t)c->nbytes, c->bins, &c->o, y, info);
		return lm_kernel_histogram(c->a, c->bins, &c->o, y, info);
	default: return lm_kernel_spmv(c->sparse, c->a, &c->o, y, info);
	}
}

/* Boxes for the result, the info and the trace, the call (retried once after a collection when
 * memory ran out), then `out, info`. The arguments were checked; the Lua values they point into
 * stay on the stack. */
static int run_call(lua_State *L, const call_args *c)
{
	lm_tensor **out = lml_newbox(L);
	int outbox = lua_gettop(L);
	lm_kernel_info **ibox = lua_newuserdatauv(L, sizeof *ibox, 0);
	*ibox = NULL;
	luaL_setmetatable(L, INFO_MT);
	lm_trace **tbox = lua_newuserdatauv(L, sizeof *tbox, 0);
	*tbox = NULL;
	luaL_setmetatable(L, TRACE_MT);
	int tracebox = lua_gettop(L);
	lm_tensor *y = NULL;
	lm_status st = core_call(c, &y, ibox);
	if (st == LM_ERR_NOMEM && lml_retry_nomem(L)) st = core_call(c, &y, ibox);
	if (st != LM_OK) kernel_error(L);
	lml_setbox(L, out, y);
	lua_pushvalue(L, outbox);
	push_info(L, *ibox, tracebox, c->o.trace != 0);
	return 2;
}

static int call_pattern(lua_State *L, const char *name,
                        lm_status (*fn)(const lm_tensor *, const lm_kernel_opts *, lm_tensor **,
                                        lm_kernel_info **))
{
	call_args c = {.kind = CALL_ONE, .one = fn};
	c.a = lml_checktensor(L, 1, "argument 1");
	lml_kernel_opts(L, 2, name, &c.o);
	return run_call(L, &c);
}

/* kernels.reduce(x [, opts]): the options are kernel_opts.c's (all of them, for every call) */
static int k_reduce(lua_State *L) { return call_pattern(L, "reduce", lm_kernel_reduce); }

/* kernels.scan(x [, opts]): x 1-D (the core would scan a matrix's elements in C order as one
 * sequence, which no user means by a scan of a matrix) */
static int k_scan(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "argument 1");
	if (lm_tensor_ndim(x) != 1) {
		char b[LM_SHAPE_STR_MAX];
		lml_error(L, "x must be 1-D, got shape %s (x:flatten() scans every element in order, "
		          "x[i] one row; lm.cumsum(x, dim) scans along a dim)",
		          lm_shape_str(lm_tensor_ndim(x), lm_tensor_shape(x), b, sizeof b));
	}
	return call_pattern(L, "scan", lm_kernel_scan);
}

/* kernels.histogram(string_or_tensor, bins [, {algo=, coarsen=, backend=, block=, ...}]) */
static int k_histogram(lua_State *L)
{
	call_args c = {.kind = CALL_HISTOGRAM};
	if (lua_type(L, 1) == LUA_TSTRING) {
		c.bytes = lua_tolstring(L, 1, &c.nbytes);
	} else if (lml_totensor(L, 1)) {
		c.a = lml_totensor(L, 1);
	} else if (lml_tobox(L, 1)) {
		lml_checktensor(L, 1, "argument 1"); /* closed */
	} else {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "argument 1 must be a string or a tensor of bin indices, got %s",
		          lml_describe(L, 1, d, sizeof d));
	}
	c.bins = lml_checkinteger(L, 2, "bins (argument 2)");
	lml_kernel_opts(L, 3, "histogram", &c.o);
	/* bin indices count from 0 (a bin is a value), positions from 1 (every message) */
	lm_dtype dt = c.a ? lm_tensor_dtype(c.a) : LM_FLOAT32;
	int64_t bad, pos[LM_MAX_DIMS];
	if (c.a && (dt == LM_UINT8 || dt == LM_INT32) && c.bins >= 1 &&
	    lml_find_out_of_range(c.a, 0, c.bins - 1, &bad, pos)) {
		char b[LM_SHAPE_STR_MAX];
		lml_error(L, "element %s is %lld, not a bin index in 0..%lld (bins %lld)",
		          lm_shape_str(lm_tensor_ndim(c.a), pos, b, sizeof b), (long long)bad,
		          (long long)c.bins - 1, (long long)c.bins);
	}
	return run_call(L, &c);
}

static int call_two(lua_State *L, const char *name,
                    lm_status (*fn)(const lm_tensor *, const lm_tensor *, const lm_kernel_opts *,
                                    lm_tensor **, lm_kernel_info **))
{
	call_args c = {.kind = CALL_TWO, .two = fn};
	c.a = lml_checktensor(L, 1, "argument 1");
	c.b = lml_checktensor(L, 2, "argument 2");
	lml_kernel_opts(L, 3, name, &c.o);
	return run_call(L, &c);
}

/* kernels.matmul(a, b [, opts]) */
static int k_matmul(lua_State *L) { return call_two(L, "matmul", lm_kernel_matmul); }

/* kernels.conv2d(img, mask [, opts]) */
static int k_conv2d(lua_State *L) { return call_two(L, "conv2d", lm_kernel_conv2d); }

/* kernels.divergence([opts]) */
static int k_divergence(lua_State *L)
{
	call_args c = {.kind = CALL_NONE, .none = lm_kernel_divergence};
	lml_kernel_opts(L, 1, "divergence", &c.o);
	return run_call(L, &c);
}

/* kernels.streams([opts]) */
static int k_streams(lua_State *L)
{
	call_args c = {.kind = CALL_NONE, .none = lm_kernel_streams};
	lml_kernel_opts(L, 1, "streams", &c.o);
	return run_call(L, &c);
}

/* ---------------------------------------------------------------- sparse matrices */

static lm_sparse *checksparse(lua_State *L, int idx, const char *what)
{
	lm_sparse **box = luaL_testudata(L, idx, SPARSE_MT);
	if (!box) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "%s must be a sparse matrix (kernels.sparse), got %s", what,
		          lml_describe(L, idx, d, sizeof d));
	}
	if (!*box) lml_error(L, "the sparse matrix is closed");
	return *box;
}

static int sp_gc(lua_State *L)
{
	lm_sparse **box = luaL_testudata(L, 1, SPARSE_MT);
	if (!box) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "self must be a sparse matrix (kernels.sparse), got %s",
		          lml_describe(L, 1, d, sizeof d));
	}
	if (*box && !lml_may_release(L))
		lml_error(L, "cannot close a sparse matrix inside a finalizer (__gc): a call that is "
		          "running may be using it");
	lm_sparse_release(*box);
	*box = NULL;
	return 0;
}

/* Pushes the value of field k of the table at t, and when it is an array of numbers, a boxed
 * tensor of dtype dt made from it (integers for LM_INT64); returns the tensor either way. */
static lm_tensor *field_tensor(lua_State *L, int t, const char *k, lm_dtype dt)
{
	lml_rawfield(L, t, k);
	int v = lua_gettop(L);
	lm_tensor *x = lml_totensor(L, v);
	if (x) return x; /* the tensor stays on the stack */
	if (!lua_istable(L, v)) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "%s must be a table of numbers or a tensor, got %s", k,
		          lml_describe(L, v, d, sizeof d));
	}
	int64_t n = (int64_t)lua_rawlen(L, v);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *y;
	LML_TRY(L, y, lm_empty(1, &n, dt));
	if (!y) lml_core_error(L);
	lml_setbox(L, box, y);
	for (int64_t i = 0; i < n; i++) {
		lua_rawgeti(L, v, (lua_Integer)i + 1);
		char what[48];
		snprintf(what, sizeof what, "%s[%lld]", k, (long long)i + 1);
		if (dt == LM_INT64) ((int64_t *)lm_tensor_data(y))[i] = lml_checkinteger(L, -1, what);
		else if (dt == LM_FLOAT64) ((double *)lm_tensor_data(y))[i] = lml_checknumber(L, -1, what);
		else ((float *)lm_tensor_data(y))[i] = (float)lml_checknumber(L, -1, what);
		lua_pop(L, 1);
	}
	return y;
}

/* kernels.sparse(dense) or kernels.sparse{rows=, cols=, vals=, shape={m, n} [, dtype=]}
 * (1-based rows and cols, tables or tensors) -> a lumen.Sparse */
static int k_sparse(lua_State *L)
{
	lm_sparse **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	luaL_setmetatable(L, SPARSE_MT);
	int b = lua_gettop(L);
	lm_tensor *dense = lml_totensor(L, 1);
	lm_sparse *a;
	if (dense) {
		LML_TRY(L, a, lm_sparse_from_dense(dense));
	} else {
		if (!lua_istable(L, 1)) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "argument 1 must be a dense matrix (a tensor) or a table {rows=, cols=, "
			             "vals=, shape=}, got %s", lml_describe(L, 1, d, sizeof d));
		}
		lua_pushnil(L);
		while (lua_next(L, 1)) {
			lua_pop(L, 1);
			const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
			if (strcmp(k, "rows") && strcmp(k, "cols") && strcmp(k, "vals") && strcmp(k, "shape") &&
			    strcmp(k, "dtype")) {
				char d[LML_DESCRIBE_MAX];
				lml_error(L, "unknown key %s (expected rows, cols, vals, shape or dtype)",
				          lml_describe(L, -1, d, sizeof d));
			}
		}
		lm_dtype dt = LM_FLOAT32;
		if (lml_rawfield(L, 1, "dtype") != LUA_TNIL) dt = lml_checkdtype(L, -1, "dtype");
		lua_pop(L, 1);
		if (lml_rawfield(L, 1, "shape") != LUA_TTABLE || lua_rawlen(L, -1) != 2) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "shape must be a table {m, n}, got %s", lml_describe(L, -1, d, sizeof d));
		}
		lua_rawgeti(L, -1, 1);
		int64_t m = lml_checkinteger(L, -1, "shape[1]");
		lua_rawgeti(L, -2, 2);
		int64_t n = lml_checkinteger(L, -1, "shape[2]");
		lua_pop(L, 3);
		lm_tensor *rows = field_tensor(L, 1, "rows", LM_INT64);
		lm_tensor *cols = field_tensor(L, 1, "cols", LM_INT64);
		lm_tensor *vals = field_tensor(L, 1, "vals", dt);
		LML_TRY(L, a, lm_sparse_from_coo(rows, cols, vals, m, n, 1));
	}
	if (!a) kernel_error(L);
	*box = a;
	lua_pushvalue(L, b);
	return 1;
}

static int sp_dense(lua_State *L)
{
	lm_sparse *a = checksparse(L, 1, "self");
	lm_tensor **box = lml_newbox(L);
	lm_tensor *d;
	LML_TRY(L, d, lm_sparse_to_dense(a));
	return lml_result(L, box, d);
}

/* A:arrays(format) -> {name = tensor, ...}: the format's arrays as the kernels read them
 * (0-based int32 indices) */
static int sp_arrays(lua_State *L)
{
	static const char *const names[][6] = {
		{"coo", "row", "col", "val", NULL, NULL},
		{"csr", "row_ptr", "col", "val", NULL, NULL},
		{"ell", "col", "val", "row_nnz", NULL, NULL},
		{"jds", "perm", "iter_ptr", "col", "val", "row_nnz"},
	};
	lm_sparse *a = checksparse(L, 1, "self");
	if (lua_type(L, 2) != LUA_TSTRING) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "the format must be 'coo', 'csr', 'ell' or 'jds', got %s",
		          lml_describe(L, 2, d, sizeof d));
	}
	const char *f = lua_tostring(L, 2);
	int k = -1;
	for (int i = 0; i < 4; i++)
		if (strcmp(f, names[i][0]) == 0) k = i;
	if (k < 0) lml_error(L, "unknown format '%s' (expected 'coo', 'csr', 'ell' or 'jds')", f);
	lua_newtable(L);
	for (int j = 1; j < 6 && names[k][j]; j++) {
		lm_tensor **box = lml_newbox(L);
		lm_tensor *t;
		LML_TRY(L, t, lm_sparse_array(a, f, names[k][j]));
		lml_result(L, box, t);
		lua_setfield(L, -2, names[k][j]);
	}
	return 1;
}

/* A:row_nnz() -> int64 tensor: each row's nonzeros, in row order */
static int sp_row_nnz(lua_State *L)
{
	lm_sparse *a = checksparse(L, 1, "self");
	lm_tensor **box = lml_newbox(L);
	lm_tensor *t, *w = NULL;
	LML_TRY(L, t, lm_sparse_array(a, "ell", "row_nnz"));
	if (t) w = lm_to_dtype(t, LM_INT64);
	lm_tensor_release(t);
	return lml_result(L, box, w);
}

static int sp_tostring(lua_State *L)
{
	lm_sparse *a = checksparse(L, 1, "self");
	lua_pushfstring(L, "sparse %I x %I %s, %I nonzeros (ELL width %I, padding %I)",
	                (lua_Integer)lm_sparse_rows(a), (lua_Integer)lm_sparse_cols(a),
	                lm_dtype_name(lm_sparse_dtype(a)), (lua_Integer)lm_sparse_nnz(a),
	                (lua_Integer)lm_sparse_ell_width(a), (lua_Integer)lm_sparse_ell_padding(a));
	return 1;
}

/* A.shape ({m, n}), A.nnz, A.dtype, A.ell_width, A.padding; methods */
static int sp_index(lua_State *L)
{
	lm_sparse *a = checksparse(L, 1, "self");
	const char *k = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
	if (strcmp(k, "shape") == 0) {
		lua_createtable(L, 2, 0);
		lua_pushinteger(L, (lua_Integer)lm_sparse_rows(a));
		lua_rawseti(L, -2, 1);
		lua_pushinteger(L, (lua_Integer)lm_sparse_cols(a));
		lua_rawseti(L, -2, 2);
	} else if (strcmp(k, "nnz") == 0) {
		lua_pushinteger(L, (lua_Integer)lm_sparse_nnz(a));
	} else if (strcmp(k, "dtype") == 0) {
		lua_pushstring(L, lm_dtype_name(lm_sparse_dtype(a)));
	} else if (strcmp(k, "ell_width") == 0) {
		lua_pushinteger(L, (lua_Integer)lm_sparse_ell_width(a));
	} else if (strcmp(k, "padding") == 0) {
		lua_pushinteger(L, (lua_Integer)lm_sparse_ell_padding(a));
	} else {
		lua_getmetatable(L, 1);
		lua_getfield(L, -1, "methods");
		lua_getfield(L, -1, k);
	}
	return 1;
}

static const luaL_Reg sparse_methods[] = {
	{"dense", sp_dense},
	{"arrays", sp_arrays},
	{"row_nnz", sp_row_nnz},
	{NULL, NULL},
};

static const luaL_Reg sparse_meta[] = {
	{"__gc", sp_gc},
	{"__close", sp_gc},
	{"__tostring", sp_tostring},
	{"__index", sp_index},
	{NULL, NULL},
};

/* kernels.spmv(A, x [, {format='coo'|'csr'|'ell'|'jds', backend=, block=, ...}]) */
static int k_spmv(lua_State *L)
{
	call_args c = {.kind = CALL_SPMV};
	c.sparse = checksparse(L, 1, "argument 1");
	c.a = lml_checktensor(L, 2, "argument 2");
	lml_kernel_opts(L, 3, "spmv", &c.o);
	return run_call(L, &c);
}

/* kernels.latency([{global=, shared=, constant=, arith=, barrier=, sms=} | 'default'])
 * -> the model now in force (fields not given keep their values) */
static int k_latency(lua_State *L)
{
	static const char *const names[] = {"global", "shared", "constant", "arith", "barrier", "sms"};
	lm_latency_model m;
	lm_kernel_latency_get(&m);
	double *fields[] = {&m.global, &m.shared, &m.constant, &m.arith, &m.barrier, &m.sms};
	if (lua_type(L, 1) == LUA_TSTRING && strcmp(lua_tostring(L, 1), "default") == 0) {
		lm_kernel_latency_reset();
		lm_kernel_latency_get(&m);
	} else if (!lua_isnoneornil(L, 1)) {
		if (!lua_istable(L, 1)) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "expected a table of latencies or 'default', got %s",
			          lml_describe(L, 1, d, sizeof d));
		}
		lua_pushnil(L);
		while (lua_next(L, 1)) {
			lua_pop(L, 1);
			bool ok = false;
			for (int k = 0; k < 6 && !ok; k++)
				ok = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), names[k]) == 0;
			if (!ok) {
				char d[LML_DESCRIBE_MAX];
				lml_error(L, "unknown latency %s (expected global, shared, constant, arith, "
				             "barrier or sms)", lml_describe(L, -1, d, sizeof d));
			}
		}
		for (int k = 0; k < 6; k++) {
			lml_rawfield(L, 1, names[k]);
			*fields[k] = lml_optnumber(L, -1, names[k], *fields[k]);
			lua_pop(L, 1);
		}
		if (lm_kernel_latency_set(&m) != LM_OK) kernel_error(L);
	}
	lua_createtable(L, 0, 6);
	for (int k = 0; k < 6; k++) {
		lua_pushinteger(L, (lua_Integer)*fields[k]);
		lua_setfield(L, -2, names[k]);
	}
	return 1;
}

static const luaL_Reg functions[] = {
	{"reduce", k_reduce},
	{"scan", k_scan},
	{"histogram", k_histogram},
	{"matmul", k_matmul},
	{"conv2d", k_conv2d},
	{"sparse", k_sparse},
	{"spmv", k_spmv},
	{"divergence", k_divergence},
	{"streams", k_streams},
	{"latency", k_latency},
	{NULL, NULL},
};

/* Pushes the array {names...}. */
static void push_names(lua_State *L, const char *const *names)
{
	lua_newtable(L);
	for (int i = 0; names[i]; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

void lml_open_kernels(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	/* methods and fields are listed in the metatables, so that the REPL's Tab completion (which
	 * never calls an __index function) can offer them after `info.trace:` and `A.` */
	static const char *const trace_fields[] = {"truncated", "seen", "cap", "name", NULL};
	static const char *const sparse_fields[] = {"shape", "nnz", "dtype", "ell_width", "padding", NULL};
	if (luaL_newmetatable(L, TRACE_MT)) {
		lml_setfuncs(L, -1, "Trace:", trace_meta, 0);
		lua_newtable(L);
		lml_setfuncs(L, -1, "trace:", trace_methods, 0);
		lua_setfield(L, -2, "methods");
		push_names(L, trace_fields);
		lua_setfield(L, -2, "fields");
	}
	lua_pop(L, 1);
	if (luaL_newmetatable(L, SPARSE_MT)) {
		lml_setfuncs(L, -1, "Sparse:", sparse_meta, 0);
		lua_newtable(L);
		lml_setfuncs(L, -1, "sparse:", sparse_methods, 0);
		lua_setfield(L, -2, "methods");
		push_names(L, sparse_fields);
		lua_setfield(L, -2, "fields");
	}
	lua_pop(L, 1);
	if (luaL_newmetatable(L, INFO_MT)) {
		lua_pushcfunction(L, info_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	lua_newtable(L);
	lml_setfuncs(L, -1, "kernels.", functions, 0);
	luaL_newmetatable(L, INFO_TABLE_MT); /* kernels.lua gives it __tostring */
	lua_setfield(L, -2, "Info");
	lml_push_kernel_options(L); /* kernel_opts.c: what each call takes, for :help */
	lua_setfield(L, -2, "options");
	lua_setfield(L, lm, "_kernels"); /* lua/lumen/kernels.lua makes it the `kernels` module */
}
