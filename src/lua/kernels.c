/*
 * kernels.c — the C half of the `kernels` module (lumen/kernels.h): kernels.reduce, kernels.scan,
 * kernels.latency, and the trace userdata that info.trace holds.
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
	if (lua_getfield(L, t, k) != LUA_TNIL) {
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
	lua_getfield(L, t, k);
	int64_t v = lml_optinteger(L, -1, what, def);
	lua_pop(L, 1);
	return v;
}

static int opt_boolean(lua_State *L, int t, const char *k, int def)
{
	char what[40];
	snprintf(what, sizeof what, "option %s", k);
	lua_getfield(L, t, k);
	int v = lml_optboolean(L, -1, what, def);
	lua_pop(L, 1);
	return v;
}

/* Reads the options table at idx (nil/none: defaults); unknown keys are errors. */
static void check_opts(lua_State *L, int idx, lm_kernel_opts *o)
{
	static const char *const known[] = {"backend", "algo", "block", "coarsen", "trace",
	                                    "inclusive", "trace_cap", "repeats", NULL};
	lm_kernel_opts_init(o);
	if (lua_isnoneornil(L, idx)) return;
	if (!lua_istable(L, idx)) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "options must be a table, got %s", lml_describe(L, idx, d, sizeof d));
	}
	int t = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pop(L, 1);
		bool ok = false;
		if (lua_type(L, -1) == LUA_TSTRING)
			for (int k = 0; known[k] && !ok; k++) ok = strcmp(lua_tostring(L, -1), known[k]) == 0;
		if (!ok) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "unknown option %s (expected backend, algo, block, coarsen, trace, "
			             "inclusive, trace_cap or repeats)", lml_describe(L, -1, d, sizeof d));
		}
	}
	const char *b = opt_string(L, t, "backend");
	if (b) o->backend = b;
	o->algo = opt_string(L, t, "algo");
	lua_getfield(L, t, "block");
	bool block_given = !lua_isnil(L, -1);
	lua_pop(L, 1);
	o->block = opt_integer(L, t, "block", 0);
	if (block_given && o->block == 0) /* the core reads 0 as "the default" */
		lml_error(L, "option block must be a power of two from 1 to %d, got 0", LM_KERNEL_MAX_BLOCK);
	o->coarsen = opt_integer(L, t, "coarsen", 0);
	o->trace = opt_boolean(L, t, "trace", -1);
	o->inclusive = opt_boolean(L, t, "inclusive", -1);
	o->trace_cap = opt_integer(L, t, "trace_cap", 0);
	int64_t r = opt_integer(L, t, "repeats", 0);
	if (r < 0 || r > 1000) lml_error(L, "option repeats must lie in 1..1000, got %lld", (long long)r);
	o->repeats = (int)r;
}

/* ---------------------------------------------------------------- traces */

static lm_trace *checktrace(lua_State *L, int idx)
{
	lm_trace **box = luaL_checkudata(L, idx, TRACE_MT);
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
	lm_trace **box = luaL_checkudata(L, 1, TRACE_MT);
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
		luaL_checktype(L, 2, LUA_TTABLE);
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
static void push_info(lua_State *L, lm_kernel_info *info, int tracebox)
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
	if (t) {
		lm_trace **box = lua_touserdata(L, tracebox);
		*box = lm_trace_retain(t);
		lua_pushvalue(L, tracebox);
		lua_setfield(L, -2, "trace");
	}
}

typedef lm_status (*pattern_fn)(const lm_tensor *, const lm_kernel_opts *, lm_tensor **,
                                lm_kernel_info **);

static int call_pattern(lua_State *L, pattern_fn fn)
{
	lm_tensor *x = lml_checktensor(L, 1, "argument 1");
	lm_kernel_opts o;
	check_opts(L, 2, &o);
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
	lm_status st = fn(x, &o, &y, ibox);
	if (st == LM_ERR_NOMEM && lml_retry_nomem(L)) st = fn(x, &o, &y, ibox);
	if (st != LM_OK) kernel_error(L);
	lml_setbox(L, out, y);
	lua_pushvalue(L, outbox);
	push_info(L, *ibox, tracebox);
	return 2;
}

/* kernels.reduce(x [, {algo=, backend=, block=, coarsen=, trace=, repeats=, trace_cap=}]) */
static int k_reduce(lua_State *L) { return call_pattern(L, lm_kernel_reduce); }

/* kernels.scan(x [, {algo=, inclusive=, backend=, block=, coarsen=, trace=, ...}]) */
static int k_scan(lua_State *L) { return call_pattern(L, lm_kernel_scan); }

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
			lua_getfield(L, 1, names[k]);
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
	{"latency", k_latency},
	{NULL, NULL},
};

void lml_open_kernels(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	if (luaL_newmetatable(L, TRACE_MT)) {
		lml_setfuncs(L, -1, "Trace:", trace_meta, 0);
		lua_newtable(L);
		lml_setfuncs(L, -1, "trace:", trace_methods, 0);
		lua_setfield(L, -2, "methods");
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
	lua_setfield(L, lm, "_kernels"); /* lua/lumen/kernels.lua makes it the `kernels` module */
}
