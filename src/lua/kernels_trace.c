/*
 * kernels_trace.c — the lumen.Trace userdata that info.trace holds: `#trace`, `trace[i]`
 * (1-based), `trace:filter{...}`, `trace:steps()`, `trace:launches()`, `trace:arrays()`,
 * `trace.truncated`, `.seen`, `.cap`, `.name`.
 *
 * A trace box holds one reference (lm_trace_retain), released by __gc and __close. Ids inside
 * events (block, warp, lane, step, index) stay 0-based as in the CUDA code they describe.
 * Read next: docs/trace.md, kernels_sparse.c.
 */
#include <string.h>

#include "lml_kernels.h"

/* The trace box at idx; raises "self must be a trace (info.trace), got X" otherwise. */
static lm_trace **tracebox(lua_State *L, int idx)
{
	lm_trace **box = luaL_testudata(L, idx, LML_TRACE_MT);
	if (!box) lml_typeerror(L, idx, "self", "a trace (info.trace)");
	return box;
}

static lm_trace *checktrace(lua_State *L, int idx)
{
	lm_trace **box = tracebox(L, idx);
	if (!*box) lml_error(L, "the trace is closed");
	return *box;
}

lm_trace **lml_newtracebox(lua_State *L)
{
	lm_trace **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	luaL_setmetatable(L, LML_TRACE_MT);
	return box;
}

/* Pushes event i (0-based) as a table. */
static void push_event(lua_State *L, const lm_trace *t, int64_t i)
{
	const lm_trace_event *e = lm_trace_event_get(t, i);
	lua_createtable(L, 0, 16);
	lml_setnumber(L, "value", e->value);
	lml_setint(L, "cycle", (int64_t)e->cycle);
	lml_setint(L, "latency", e->latency);
	lml_setint(L, "index", e->index);
	lml_setint(L, "block", e->block);
	lml_setint(L, "step", e->step);
	lml_setint(L, "mask", e->mask);
	lml_setint(L, "aux", e->aux);
	lml_setint(L, "warp", e->warp);
	lml_setint(L, "line", e->line);
	lml_setint(L, "lane", e->lane);
	lml_setint(L, "launch", e->launch);
	lml_setstring(L, "kind", lm_trace_kind_name(e->kind));
	lml_setstring(L, "space", lm_trace_space_name(e->space));
	lm_trace_array a;
	if (e->array != LM_TRACE_NO_ARRAY && lm_trace_array_get(t, e->array, &a) == LM_OK)
		lml_setstring(L, "array", a.name);
}

static int t_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_trace_count(checktrace(L, 1)));
	return 1;
}

static int t_gc(lua_State *L)
{
	lm_trace **box = tracebox(L, 1);
	if (*box) lml_checkrelease(L, "a trace");
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

/* ---------------------------------------------------------------- trace:filter */

static const char *space_names[LM_SPACE_COUNT + 1]; /* lm_trace_space_name's, set at open */

/* option kind: an event kind's name, parsed by the core ("unknown event kind 'fetch'") */
static void filter_kind(lua_State *L, int idx, const lml_field *f, void *dst)
{
	if (lua_type(L, idx) != LUA_TSTRING) lml_typeerror(L, idx, "option kind", "a string");
	(void)f;
	if (lm_trace_kind_from_name(lua_tostring(L, idx), dst) != LM_OK) lml_kernel_error(L);
}

/* trace:filter{kind=, space=, step=, block=, warp=, lane=, launch=} -> array of events */
static int t_filter(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(lm_trace_filter, kind, LML_CUSTOM, .check = filter_kind),
		LML_FIELD(lm_trace_filter, space, LML_NAME, .names = space_names),
		LML_FIELD(lm_trace_filter, step, LML_INTEGER),
		LML_FIELD(lm_trace_filter, block, LML_INTEGER),
		LML_FIELD(lm_trace_filter, warp, LML_INTEGER),
		LML_FIELD(lm_trace_filter, lane, LML_INTEGER),
		LML_FIELD(lm_trace_filter, launch, LML_INT),
		LML_FIELDS_END,
	};
	lm_trace *t = checktrace(L, 1);
	lm_trace_filter f;
	lm_trace_filter_init(&f);
	if (!lua_isnoneornil(L, 2) && !lua_istable(L, 2))
		lml_typeerror(L, 2, "the filter", "a table such as {kind='load'}");
	lml_readopts(L, 2, "filter key", fields, &f);
	lua_newtable(L);
	lua_Integer n = 0;
	for (int64_t i = lm_trace_find(t, &f, 0); i >= 0; i = lm_trace_find(t, &f, i + 1)) {
		push_event(L, t, i);
		lua_rawseti(L, -2, ++n);
	}
	return 1;
}

/* ---------------------------------------------------------------- the trace's tables */

static void push_step(lua_State *L, const void *t, int64_t i)
{
	lm_trace_step s;
	lm_trace_step_get(t, i, &s);
	lua_createtable(L, 0, 9);
	lml_setint(L, "launch", s.launch);
	lml_setint(L, "block", s.block);
	lml_setint(L, "step", s.step);
	lml_setint(L, "first", s.first + 1);
	lml_setint(L, "count", s.count);
	lml_setint(L, "start_cycle", (int64_t)s.start_cycle);
	lml_setint(L, "cycles", (int64_t)s.cycles);
	lml_setint(L, "adds", s.adds);
	lml_setboolean(L, "barrier", s.barrier);
}

/* trace:steps() -> array of {launch=, block=, step=, first=, count=, start_cycle=, cycles=,
 * adds=, barrier=}; first is the 1-based index of its first event in the trace */
static int t_steps(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	lml_push_array(L, lm_trace_step_count(t), push_step, t);
	return 1;
}

/* Pushes {x, y, z}. */
static void push_dim3(lua_State *L, const unsigned *v)
{
	lua_createtable(L, 3, 0);
	for (int d = 0; d < 3; d++) {
		lua_pushinteger(L, v[d]);
		lua_rawseti(L, -2, d + 1);
	}
}

static void push_launch(lua_State *L, const void *t, int64_t i)
{
	lm_trace_launch l;
	lm_trace_launch_get(t, (int)i, &l);
	lua_createtable(L, 0, 6);
	lml_setstring(L, "kernel", l.kernel);
	push_dim3(L, l.grid);
	lua_setfield(L, -2, "grid");
	push_dim3(L, l.block);
	lua_setfield(L, -2, "block");
	lml_setint(L, "shared_bytes", (int64_t)l.shared_bytes);
	lml_setint(L, "start_cycle", (int64_t)l.start_cycle);
	lml_setint(L, "end_cycle", (int64_t)l.end_cycle);
}

/* trace:launches() -> array of {kernel=, grid={x,y,z}, block={x,y,z}, shared_bytes=,
 * start_cycle=, end_cycle=} */
static int t_launches(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	lml_push_array(L, lm_trace_launch_count(t), push_launch, t);
	return 1;
}

static void push_array(lua_State *L, const void *t, int64_t i)
{
	lm_trace_array a;
	lm_trace_array_get(t, (int)i, &a);
	lua_createtable(L, 0, 7);
	lml_setstring(L, "name", a.name);
	lml_setstring(L, "space", lm_trace_space_name(a.space));
	lml_setstring(L, "dtype", lm_dtype_name(a.dtype));
	lml_setint(L, "length", a.length);
	lml_setint(L, "rows", a.rows);
	lml_setint(L, "cols", a.cols);
	if (a.launch >= 0) lml_setint(L, "launch", a.launch);
}

/* trace:arrays() -> array of {name=, space=, dtype=, length=, rows=, cols=, launch=} */
static int t_arrays(lua_State *L)
{
	lm_trace *t = checktrace(L, 1);
	lml_push_array(L, lm_trace_array_count(t), push_array, t);
	return 1;
}

/* trace[i] (1-based) -> event table; trace.truncated, .seen, .cap, .name; methods */
static int t_index(lua_State *L)
{
	static const char *const fields[] = {"truncated", "seen", "cap", "name", NULL};
	lm_trace *t = checktrace(L, 1);
	int64_t i;
	if (lml_isinteger(L, 2, &i)) {
		if (i >= 1 && i <= lm_trace_count(t)) push_event(L, t, i - 1);
		else lua_pushnil(L);
		return 1;
	}
	int k = -1;
	if (lua_type(L, 2) == LUA_TSTRING)
		for (int j = 0; fields[j]; j++)
			if (strcmp(lua_tostring(L, 2), fields[j]) == 0) k = j;
	switch (k) {
	case 0: lua_pushboolean(L, lm_trace_truncated(t)); return 1;
	case 1: lua_pushinteger(L, (lua_Integer)lm_trace_seen(t)); return 1;
	case 2: lua_pushinteger(L, (lua_Integer)lm_trace_cap(t)); return 1;
	case 3: lua_pushstring(L, lm_trace_name(t)); return 1;
	default: return lml_kernels_method(L);
	}
}

void lml_open_trace(lua_State *L)
{
	static const luaL_Reg methods[] = {
		{"filter", t_filter},
		{"steps", t_steps},
		{"launches", t_launches},
		{"arrays", t_arrays},
		{NULL, NULL},
	};
	static const luaL_Reg meta[] = {
		{"__len", t_len},
		{"__gc", t_gc},
		{"__close", t_gc},
		{"__tostring", t_tostring},
		{"__index", t_index},
		{NULL, NULL},
	};
	static const char *const fields[] = {"truncated", "seen", "cap", "name", NULL};
	for (int s = 0; s < LM_SPACE_COUNT; s++) space_names[s] = lm_trace_space_name(s);
	lml_kernels_class(L, LML_TRACE_MT, "Trace", meta, methods, fields);
}
