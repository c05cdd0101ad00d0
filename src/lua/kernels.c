/*
 * kernels.c — the C half of the `kernels` module (lumen/kernels.h): kernels.reduce, scan,
 * histogram, matmul, conv2d, spmv, divergence, streams and latency, and the info table each call
 * returns. The userdata live beside it: kernels_trace.c (info.trace), kernels_sparse.c
 * (kernels.sparse); the options of each call: kernel_opts.c.
 *
 * Design: as every binding (lml.h): all arguments checked first, then boxes for everything the
 * call will own (the result tensor, the core's info object, the trace), then the core call, then
 * the info table built from the boxed info (which may raise: the boxes' __gc free what they hold).
 * lua/lumen/kernels.lua makes this the `kernels` module. Read next: docs/trace.md.
 */
#include <string.h>

#include "lml_kernels.h"
#include "lumen/isa.h"

#define INFO_MT "lumen.KernelInfoBox"    /* owns the core's info while the table is built */
#define INFO_OF "lumen.InfoOf"           /* registry: info table -> its box (weak keys) */
#define INFO_TABLE_MT "lumen.KernelInfo" /* the info table users see */

/* ---------------------------------------------------------------- shared by the three files */

_Noreturn int lml_kernel_error(lua_State *L)
{
	const char *e = lm_last_error(), *f = lml_fname(L);
	size_t n = strlen(f);
	if (strncmp(e, f, n) == 0 && e[n] == ':') luaL_error(L, "%s", e);
	lml_core_error(L);
}

void lml_kernels_class(lua_State *L, const char *mt, const char *cls, const luaL_Reg *meta,
                       const luaL_Reg *methods, const char *const *fields)
{
	char prefix[32];
	if (luaL_newmetatable(L, mt)) {
		snprintf(prefix, sizeof prefix, "%s:", cls);
		lml_setfuncs(L, -1, prefix, meta, 0);
		prefix[0] = (char)(prefix[0] - 'A' + 'a'); /* "Trace:__len", "trace:filter" */
		lua_newtable(L);
		lml_setfuncs(L, -1, prefix, methods, 0);
		lua_setfield(L, -2, "methods");
		lua_newtable(L);
		for (int i = 0; fields[i]; i++) {
			lua_pushstring(L, fields[i]);
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "fields");
	}
	lua_pop(L, 1);
}

int lml_kernels_method(lua_State *L)
{
	if (lua_type(L, 2) != LUA_TSTRING || !lua_getmetatable(L, 1)) {
		lua_pushnil(L);
		return 1;
	}
	lua_getfield(L, -1, "methods");
	lua_getfield(L, -1, lua_tostring(L, 2));
	return 1;
}

/* ---------------------------------------------------------------- the calls */

static int info_gc(lua_State *L)
{
	lm_kernel_info **box = luaL_checkudata(L, 1, INFO_MT);
	lm_kernel_info_free(*box);
	*box = NULL;
	return 0;
}

lm_kernel_info *lml_info_of(lua_State *L, int idx)
{
	if (!lua_istable(L, idx)) return NULL;
	idx = lua_absindex(L, idx);
	lm_kernel_info *info = NULL;
	if (lua_getfield(L, LUA_REGISTRYINDEX, INFO_OF) == LUA_TTABLE) {
		lua_pushvalue(L, idx);
		if (lua_rawget(L, -2) == LUA_TUSERDATA) {
			lm_kernel_info **box = luaL_testudata(L, -1, INFO_MT);
			info = box ? *box : NULL;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return info;
}

lm_kernel_info **lml_newinfobox(lua_State *L)
{
	lm_kernel_info **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	luaL_setmetatable(L, INFO_MT);
	return box;
}

/* info.counters (name -> value) and info.counter_names (in order) */
static void push_counters(lua_State *L, const lm_kernel_info *info)
{
	int n = lm_kernel_info_counter_count(info);
	lua_createtable(L, 0, n);
	lua_createtable(L, n, 0);
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
}

static void push_span(lua_State *L, const void *info, int64_t i)
{
	lm_kernel_span sp;
	lm_kernel_info_span_get(info, (int)i, &sp);
	lua_createtable(L, 0, 8);
	lml_setstring(L, "schedule", sp.schedule);
	lml_setstring(L, "op", sp.op);
	lml_setstring(L, "track", sp.track);
	lml_setint(L, "segment", sp.segment);
	lml_setint(L, "stream", sp.stream);
	lml_setnumber(L, "start_ms", sp.start_ms);
	lml_setnumber(L, "end_ms", sp.end_ms);
	lml_setnumber(L, "bytes", sp.bytes);
}

/* info.timeline: {schedule=, op=, track=, segment=, stream=, start_ms=, end_ms=, bytes=}, ... */
static void push_timeline(lua_State *L, const lm_kernel_info *info)
{
	int ns = lm_kernel_info_span_count(info);
	if (!ns) return;
	lml_push_array(L, ns, push_span, info);
	lua_setfield(L, -2, "timeline");
}

/* Pushes the info table for the info in the box at infobox; the table keeps the box (and so the
 * C object) for as long as it lives, so the visualizer can take the run from the object itself
 * (lml_info_of) instead of reading the table back. */
void lml_push_info(lua_State *L, int infobox, int tracebox, int want_trace)
{
	infobox = lua_absindex(L, infobox);
	lm_kernel_info *info = *(lm_kernel_info **)lua_touserdata(L, infobox);
	lua_createtable(L, 0, 8);
	if (lua_getfield(L, LUA_REGISTRYINDEX, INFO_OF) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_createtable(L, 0, 1);
		lua_pushliteral(L, "k");
		lua_setfield(L, -2, "__mode");
		lua_setmetatable(L, -2);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, INFO_OF);
	}
	lua_pushvalue(L, -2);
	lua_pushvalue(L, infobox);
	lua_rawset(L, -3);
	lua_pop(L, 1);
	luaL_setmetatable(L, INFO_TABLE_MT);
	lml_setstring(L, "source", lm_kernel_info_source(info));
	lml_setstring(L, "device", lm_kernel_info_device(info));
	lml_setstring(L, "provenance", lm_kernel_info_provenance(info));
	lml_setstring(L, "pattern", lm_kernel_info_pattern(info));
	lml_setstring(L, "algo", lm_kernel_info_algo(info));
	lml_setstring(L, "impl", lm_kernel_info_impl(info));   /* what ran */
	lml_setstring(L, "label", lm_kernel_info_label(info)); /* tostring's first line */
	if (lm_kernel_info_model(info)) lml_setstring(L, "model", lm_kernel_info_model(info));
	push_counters(L, info);
	lm_trace *t = lm_kernel_info_trace(info);
	if (t && want_trace) { /* trace=false: none, though the emulator records one anyway */
		lm_trace **box = lua_touserdata(L, tracebox);
		*box = lm_trace_retain(t);
		lua_pushvalue(L, tracebox);
		lua_setfield(L, -2, "trace");
	}
	push_timeline(L, info);
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
	lm_kernel_info **ibox = lml_newinfobox(L);
	int infobox = lua_gettop(L);
	lml_newtracebox(L);
	int tracebox = lua_gettop(L);
	lm_tensor *y = NULL;
	lm_status st = core_call(c, &y, ibox);
	if (st == LM_ERR_NOMEM && lml_retry_nomem(L)) st = core_call(c, &y, ibox);
	if (st != LM_OK) lml_kernel_error(L);
	lml_setbox(L, out, y);
	lua_pushvalue(L, outbox);
	lml_push_info(L, infobox, tracebox, c->o.trace != 0);
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
		lml_typeerror(L, 1, "argument 1", "a string or a tensor of bin indices");
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

/* kernels.coalescing(x [, opts]) and kernels.transpose(x [, opts]): the memory-access demos */
static int k_coalescing(lua_State *L)
{
	call_args c = {.kind = CALL_ONE, .one = lm_kernel_coalescing};
	c.a = lml_checktensor(L, 1, "argument 1");
	lml_kernel_opts(L, 2, "coalescing", &c.o);
	return run_call(L, &c);
}

static int k_transpose(lua_State *L)
{
	call_args c = {.kind = CALL_ONE, .one = lm_kernel_transpose};
	c.a = lml_checktensor(L, 1, "argument 1");
	lml_kernel_opts(L, 2, "transpose", &c.o);
	return run_call(L, &c);
}

/* kernels.spmv(A, x [, {format='coo'|'csr'|'ell'|'jds', backend=, block=, ...}]) */
static int k_spmv(lua_State *L)
{
	call_args c = {.kind = CALL_SPMV};
	c.sparse = lml_checksparse(L, 1, "argument 1");
	c.a = lml_checktensor(L, 2, "argument 2");
	lml_kernel_opts(L, 3, "spmv", &c.o);
	return run_call(L, &c);
}

/* kernels.latency([{global=, shared=, constant=, arith=, barrier=, sms=, issue=, sector=,
 *                   warps_per_sm=, blocks_per_sm=, shared_per_sm=} | 'default'])
 * -> the model now in force (fields not given keep their values) */
static int k_latency(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(lm_latency_model, global, LML_NUMBER),
		LML_FIELD(lm_latency_model, shared, LML_NUMBER),
		LML_FIELD(lm_latency_model, constant, LML_NUMBER),
		LML_FIELD(lm_latency_model, arith, LML_NUMBER),
		LML_FIELD(lm_latency_model, barrier, LML_NUMBER),
		LML_FIELD(lm_latency_model, sms, LML_NUMBER),
		LML_FIELD(lm_latency_model, issue, LML_NUMBER),
		LML_FIELD(lm_latency_model, sector, LML_NUMBER),
		LML_FIELD(lm_latency_model, warps_per_sm, LML_NUMBER),
		LML_FIELD(lm_latency_model, blocks_per_sm, LML_NUMBER),
		LML_FIELD(lm_latency_model, shared_per_sm, LML_NUMBER),
		LML_FIELDS_END,
	};
	lm_latency_model m;
	if (lua_type(L, 1) == LUA_TSTRING && strcmp(lua_tostring(L, 1), "default") == 0) {
		lm_kernel_latency_reset();
	} else if (!lua_isnoneornil(L, 1)) {
		if (!lua_istable(L, 1)) lml_typeerror(L, 1, "argument 1", "a table of latencies or 'default'");
		lm_kernel_latency_get(&m);
		lml_readopts(L, 1, "latency", fields, &m);
		if (lm_kernel_latency_set(&m) != LM_OK) lml_kernel_error(L);
	}
	lm_kernel_latency_get(&m);
	lua_createtable(L, 0, 11);
	for (int k = 0; fields[k].key; k++)
		lml_setint(L, fields[k].key, (int64_t)*(double *)((char *)&m + fields[k].offset));
	return 1;
}

/* kernels.cpu_info() -> {isa=, cpu=, threads=}: the SIMD path the cpu runs take now (lumen/isa.h),
 * the CPU's model and the threads they use: what a measured time depends on (lm.tune keys its
 * cache by them). */
static int k_cpu_info(lua_State *L)
{
	lua_createtable(L, 0, 3);
	lml_setstring(L, "isa", lm_isa_name(lm_isa_active()));
	lml_setstring(L, "cpu", lm_cpu_model());
	lml_setint(L, "threads", lm_get_num_threads());
	return 1;
}

/* ---------------------------------------------------------------- kernels.opencl */

/* sizes: a number or a list of 1..3 numbers, into v; returns the dims */
static int opencl_sizes(lua_State *L, int idx, const char *what, int64_t *v)
{
	if (lua_isinteger(L, idx) || lua_type(L, idx) == LUA_TNUMBER) {
		v[0] = lml_checkinteger(L, idx, what);
		return 1;
	}
	if (lua_type(L, idx) != LUA_TTABLE)
		lml_error(L, "kernels.opencl: %s must be a number or a list of 1 to 3 numbers, got %s", what,
		          luaL_typename(L, idx));
	int n = (int)lua_rawlen(L, idx);
	if (n < 1 || n > 3)
		lml_error(L, "kernels.opencl: %s has %d entries (1 to 3)", what, n);
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, idx, i + 1);
		if (!lua_isinteger(L, -1))
			lml_error(L, "kernels.opencl: %s[%d] must be an integer, got %s", what, i + 1,
			          luaL_typename(L, -1));
		v[i] = lua_tointeger(L, -1);
		lua_pop(L, 1);
	}
	return n;
}

/* kernels.opencl(source, {global=, local=, args=, kernel=, repeats=}) -> info */
static int k_opencl(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING) lml_typeerror(L, 1, "source", "a string of OpenCL C");
	const char *src = lua_tostring(L, 1);
	if (lua_type(L, 2) != LUA_TTABLE)
		lml_typeerror(L, 2, "options", "a table such as {global = n, args = {...}}");
	static const char *const keys[] = {"global", "local", "args", "kernel", "repeats", NULL};
	lua_pushnil(L);
	while (lua_next(L, 2)) {
		bool known = false;
		for (int i = 0; keys[i]; i++)
			known |= lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), keys[i]) == 0;
		if (!known)
			lml_error(L, "kernels.opencl: unknown option %s (expected global, local, args, kernel "
			          "or repeats)", lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "(not a name)");
		lua_pop(L, 1);
	}
	lm_opencl_launch l;
	memset(&l, 0, sizeof l);
	l.repeats = 1;
	lua_getfield(L, 2, "global");
	if (lua_isnil(L, -1)) lml_error(L, "kernels.opencl: option global is required (work-items per dim)");
	l.dims = opencl_sizes(L, lua_gettop(L), "global", l.global);
	lua_getfield(L, 2, "local");
	if (!lua_isnil(L, -1)) {
		int nd = opencl_sizes(L, lua_gettop(L), "local", l.local);
		if (nd != l.dims)
			lml_error(L, "kernels.opencl: local has %d dims, global %d", nd, l.dims);
		l.has_local = true;
	}
	lua_getfield(L, 2, "kernel");
	if (!lua_isnil(L, -1)) {
		if (lua_type(L, -1) != LUA_TSTRING) lml_typeerror(L, lua_gettop(L), "kernel", "a kernel's name");
		l.kernel = lua_tostring(L, -1);
	}
	lua_getfield(L, 2, "repeats");
	if (!lua_isnil(L, -1)) {
		if (!lua_isinteger(L, -1)) lml_error(L, "kernels.opencl: repeats must be an integer");
		l.repeats = (int)lua_tointeger(L, -1);
	}
	lua_getfield(L, 2, "args");
	int at = lua_gettop(L);
	if (!lua_isnil(L, at) && lua_type(L, at) != LUA_TTABLE)
		lml_typeerror(L, at, "args", "a list of tensors, numbers and {local_bytes = N}");
	int n = lua_isnil(L, at) ? 0 : (int)lua_rawlen(L, at);
	if (n > 64) lml_error(L, "kernels.opencl: %d arguments (at most 64)", n);
	lm_opencl_arg args[64];
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, at, i + 1);
		lm_tensor *t = lml_totensor(L, -1);
		memset(&args[i], 0, sizeof args[i]);
		if (t) {
			args[i].kind = LM_OPENCL_ARG_TENSOR, args[i].tensor = t;
		} else if (lua_type(L, -1) == LUA_TNUMBER) {
			args[i].kind = LM_OPENCL_ARG_NUMBER, args[i].number = lua_tonumber(L, -1);
		} else if (lua_type(L, -1) == LUA_TTABLE) {
			lua_getfield(L, -1, "local_bytes");
			if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1)
				lml_error(L, "kernels.opencl: argument %d: a table argument is {local_bytes = N}, N "
				          "a positive integer", i + 1);
			args[i].kind = LM_OPENCL_ARG_LOCAL, args[i].local_bytes = lua_tointeger(L, -1);
			lua_pop(L, 1);
		} else {
			lml_error(L, "kernels.opencl: argument %d must be a tensor, a number or {local_bytes = "
			          "N}, got %s", i + 1, luaL_typename(L, -1));
		}
		lua_pop(L, 1);
	}
	l.nargs = n;
	l.args = args;
	lm_opencl_result r;
	if (lm_kernel_opencl(src, &l, &r)) lml_kernel_error(L);
	lua_createtable(L, 0, 12);
	lml_setstring(L, "kernel", r.kernel);
	lml_setstring(L, "device", r.device);
	lml_setnumber(L, "time_ms", r.time_ms);
	lml_setnumber(L, "compile_ms", r.compile_ms);
	lml_setboolean(L, "cached", r.cached);
	lml_setstring(L, "source", "opencl");
	lml_setstring(L, "provenance", "OpenCL, measured by events");
	char label[512];
	snprintf(label, sizeof label, "OpenCL kernel '%s': %.3f ms, measured by events (%s; median of %d)",
	         r.kernel, r.time_ms, r.device, l.repeats);
	lml_setstring(L, "label", label);
	lua_createtable(L, l.dims, 0);
	for (int d = 0; d < l.dims; d++) {
		lua_pushinteger(L, l.global[d]);
		lua_rawseti(L, -2, d + 1);
	}
	lua_setfield(L, -2, "global");
	if (l.has_local) {
		lua_createtable(L, l.dims, 0);
		for (int d = 0; d < l.dims; d++) {
			lua_pushinteger(L, l.local[d]);
			lua_rawseti(L, -2, d + 1);
		}
		lua_setfield(L, -2, "local");
	}
	return 1;
}

static const luaL_Reg functions[] = {
	{"reduce", k_reduce},
	{"scan", k_scan},
	{"histogram", k_histogram},
	{"matmul", k_matmul},
	{"conv2d", k_conv2d},
	{"spmv", k_spmv},
	{"divergence", k_divergence},
	{"streams", k_streams},
	{"coalescing", k_coalescing},
	{"transpose", k_transpose},
	{"latency", k_latency},
	{"cpu_info", k_cpu_info},
	{"opencl", k_opencl},
	{NULL, NULL},
};

void lml_open_kernels(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lml_open_trace(L);
	if (luaL_newmetatable(L, INFO_MT)) {
		lua_pushcfunction(L, info_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_pop(L, 1);
	lua_newtable(L);
	lml_setfuncs(L, -1, "kernels.", functions, 0);
	lml_open_sparse(L, lua_gettop(L)); /* kernels.sparse and lumen.Sparse */
	luaL_newmetatable(L, INFO_TABLE_MT); /* kernels.lua gives it __tostring */
	lua_setfield(L, -2, "Info");
	lml_push_kernel_options(L); /* kernel_opts.c: what each call takes, for :help */
	lua_setfield(L, -2, "options");
	lml_open_launch(L, lua_gettop(L)); /* launch.c: kernels.launch, kernels.racecheck */
	lua_setfield(L, lm, "_kernels"); /* lua/lumen/kernels.lua makes it the `kernels` module */
}
