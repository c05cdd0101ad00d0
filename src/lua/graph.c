/*
 * graph.c — the C half of lm.compile and lm.graph (lua/lumen/graph.lua): lm._graph.begin / end
 * / cancel / broken around a capture (lumen/graph.h), a capture's nodes, values and storages as
 * Lua tables, and programs built from them step by step and run. Nodes, values, storages, inputs
 * and results are numbered from 1 here, as everything is in Lua.
 * Read next: include/lumen/graph.h, lua/lumen/graph.lua.
 */
#include <string.h>

#include "lml.h"
#include "lml_kernels.h"
#include "lumen/graph.h"
#include "lumen/kernels.h"

#define CAPTURE_MT "lumen.Capture"
#define PROGRAM_MT "lumen.Program"
#define MAX_RESULTS 64

/* ---------------------------------------------------------------- where the program stands */

/* The innermost Lua line outside Lumen's own library (lua/lumen/), else the innermost Lua line. */
static void where_fn(void *ud, char *buf, size_t cap)
{
	lua_State *L = ud;
	lua_Debug ar;
	char first[LUA_IDSIZE + 24] = "";
	for (int level = 0; lua_getstack(L, level, &ar); level++) {
		if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0) continue;
		char here[LUA_IDSIZE + 24];
		snprintf(here, sizeof here, "%s:%d", ar.short_src, ar.currentline);
		if (!first[0]) memcpy(first, here, sizeof here);
		if (!strstr(ar.short_src, "lua/lumen/") && strcmp(ar.what, "C") != 0) {
			snprintf(buf, cap, "%s", here);
			return;
		}
	}
	snprintf(buf, cap, "%s", first);
}

/* ---------------------------------------------------------------- captures */

static lm_capture *check_capture(lua_State *L, int idx)
{
	lm_capture **box = luaL_checkudata(L, idx, CAPTURE_MT);
	if (!*box) lml_error(L, "%s: the capture was released", lml_fname(L));
	return *box;
}

static int capture_gc(lua_State *L)
{
	lm_capture **box = luaL_checkudata(L, 1, CAPTURE_MT);
	lm_capture_release(*box);
	*box = NULL;
	return 0;
}

/* tensors from the list at idx into ts (at most cap); their count */
static int tensor_list(lua_State *L, int idx, lm_tensor **ts, int cap, const char *what)
{
	luaL_checktype(L, idx, LUA_TTABLE);
	int n = (int)luaL_len(L, idx);
	if (n > cap) lml_error(L, "%s: at most %d %s, got %d", lml_fname(L), cap, what, n);
	for (int k = 0; k < n; k++) {
		lua_rawgeti(L, idx, k + 1);
		ts[k] = lml_totensor(L, -1);
		if (!ts[k]) lml_error(L, "%s: %s %d is not a tensor", lml_fname(L), what, k + 1);
		lua_pop(L, 1);
	}
	return n;
}

static int g_begin(lua_State *L)
{
	lm_tensor *ts[MAX_RESULTS];
	int n = tensor_list(L, 1, ts, MAX_RESULTS, "inputs");
	if (lm_capture_begin(n, ts, where_fn, L)) lml_core_error(L);
	return 0;
}

static int g_end(lua_State *L)
{
	lm_tensor *ts[MAX_RESULTS];
	int n = tensor_list(L, 1, ts, MAX_RESULTS, "results");
	lm_capture **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	luaL_setmetatable(L, CAPTURE_MT);
	if (!(*box = lm_capture_end(n, ts))) lml_core_error(L);
	return 1;
}

static int g_cancel(lua_State *L)
{
	(void)L;
	lm_capture_cancel();
	return 0;
}

static int g_capturing(lua_State *L)
{
	lua_pushboolean(L, lm_capture_capturing());
	return 1;
}

static int g_count(lua_State *L)
{
	lua_pushinteger(L, lm_capture_recorded());
	return 1;
}

static int g_break(lua_State *L)
{
	lm_capture_break(luaL_checkstring(L, 1));
	return 0;
}

static int c_counts(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	lua_createtable(L, 0, 5);
	lua_pushinteger(L, lm_capture_nnodes(c));
	lua_setfield(L, -2, "nodes");
	lua_pushinteger(L, lm_capture_nvalues(c));
	lua_setfield(L, -2, "values");
	lua_pushinteger(L, lm_capture_nstorages(c));
	lua_setfield(L, -2, "storages");
	lua_createtable(L, lm_capture_ninputs(c), 0);
	for (int k = 0; k < lm_capture_ninputs(c); k++) {
		lua_pushinteger(L, lm_capture_input(c, k) + 1);
		lua_rawseti(L, -2, k + 1);
	}
	lua_setfield(L, -2, "inputs");
	lua_createtable(L, lm_capture_noutputs(c), 0);
	for (int k = 0; k < lm_capture_noutputs(c); k++) {
		lua_pushinteger(L, lm_capture_output(c, k) + 1);
		lua_rawseti(L, -2, k + 1);
	}
	lua_setfield(L, -2, "outputs");
	return 1;
}

static void push_ids(lua_State *L, int n, const int *ids)
{
	lua_createtable(L, n, 0);
	for (int k = 0; k < n; k++) {
		if (ids[k] < 0)
			lua_pushboolean(L, 0); /* an absent optional input */
		else
			lua_pushinteger(L, ids[k] + 1);
		lua_rawseti(L, -2, k + 1);
	}
}

static void push_param(lua_State *L, const lm_param *p)
{
	switch (p->kind) {
	case LM_PARAM_FLOAT: lua_pushnumber(L, p->f); break;
	case LM_PARAM_BOOL: lua_pushboolean(L, p->i != 0); break;
	case LM_PARAM_DIM:
		if (p->i == LM_DIM_ALL)
			lua_pushliteral(L, "all");
		else
			lua_pushinteger(L, p->i + 1);
		break;
	case LM_PARAM_INDEX: lua_pushinteger(L, p->i + 1); break;
	case LM_PARAM_DEVICE: lua_pushstring(L, lm_device_name((lm_device)p->i)); break;
	case LM_PARAM_INTS:
		lua_createtable(L, p->n, 0);
		for (int k = 0; k < p->n; k++) {
			lua_pushinteger(L, p->ints[k] + (strcmp(p->name, "dims") == 0 ? 1 : 0));
			lua_rawseti(L, -2, k + 1);
		}
		break;
	default: lua_pushinteger(L, p->i); break;
	}
}

static int c_node(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	int i = (int)luaL_checkinteger(L, 2) - 1;
	lm_capture_node n;
	if (lm_capture_node_get(c, i, &n)) lml_core_error(L);
	lua_createtable(L, 0, 12);
	lua_pushstring(L, n.kind);
	lua_setfield(L, -2, "kind");
	lua_pushstring(L, n.op);
	lua_setfield(L, -2, "op");
	lua_pushstring(L, n.fname);
	lua_setfield(L, -2, "fname");
	lua_pushstring(L, n.where);
	lua_setfield(L, -2, "where");
	lua_pushstring(L, n.loop);
	lua_setfield(L, -2, "loop");
	lua_pushstring(L, lm_dtype_name(n.dtype));
	lua_setfield(L, -2, "dtype");
	push_ids(L, n.nin, n.in);
	lua_setfield(L, -2, "inputs");
	push_ids(L, n.nout, n.out);
	lua_setfield(L, -2, "outputs");
	if (strcmp(n.kind, "fill") == 0) {
		lua_pushnumber(L, n.value);
		lua_setfield(L, -2, "value");
	}
	int np = lm_capture_node_nparams(c, i);
	lua_createtable(L, 0, np);
	for (int j = 0; j < np; j++) {
		lm_param p;
		if (lm_capture_node_param(c, i, j, &p)) lml_core_error(L);
		push_param(L, &p);
		lua_setfield(L, -2, p.name);
	}
	lua_setfield(L, -2, "params");
	lua_pushboolean(L, lm_capture_node_fusable(c, i));
	lua_setfield(L, -2, "fusable");
	if (n.added) {
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, "added");
	}
	const char *anchor = lm_capture_node_anchor(c, i);
	if (anchor) {
		lua_pushstring(L, anchor);
		lua_setfield(L, -2, "anchor");
	}
	return 1;
}

static void push_dims(lua_State *L, int n, const int64_t *d)
{
	lua_createtable(L, n, 0);
	for (int k = 0; k < n; k++) {
		lua_pushinteger(L, d[k]);
		lua_rawseti(L, -2, k + 1);
	}
}

static int c_value(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	lm_capture_value v;
	if (lm_capture_value_get(c, (int)luaL_checkinteger(L, 2) - 1, &v)) lml_core_error(L);
	lua_createtable(L, 0, 6);
	lua_pushinteger(L, v.storage + 1);
	lua_setfield(L, -2, "storage");
	lua_pushstring(L, lm_dtype_name(v.dtype));
	lua_setfield(L, -2, "dtype");
	lua_pushstring(L, lm_device_name(v.device));
	lua_setfield(L, -2, "device");
	push_dims(L, v.ndim, v.shape);
	lua_setfield(L, -2, "shape");
	push_dims(L, v.ndim, v.stride);
	lua_setfield(L, -2, "stride");
	lua_pushinteger(L, v.offset);
	lua_setfield(L, -2, "offset");
	return 1;
}

static int c_storage(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	lm_capture_storage s;
	if (lm_capture_storage_get(c, (int)luaL_checkinteger(L, 2) - 1, &s)) lml_core_error(L);
	lua_createtable(L, 0, 6);
	lua_pushstring(L, lm_store_kind_name(s.kind));
	lua_setfield(L, -2, "kind");
	if (s.input >= 0) {
		lua_pushinteger(L, s.input + 1);
		lua_setfield(L, -2, "input");
	}
	lua_pushinteger(L, (lua_Integer)s.nbytes);
	lua_setfield(L, -2, "nbytes");
	lua_pushinteger(L, s.writes);
	lua_setfield(L, -2, "writes");
	lua_pushboolean(L, s.escapes);
	lua_setfield(L, -2, "escapes");
	lua_pushboolean(L, s.output);
	lua_setfield(L, -2, "output");
	return 1;
}

static int c_tensor(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	int v = (int)luaL_checkinteger(L, 2) - 1;
	lm_tensor **box = lml_newbox(L);
	return lml_result(L, box, lm_capture_value_tensor(c, v));
}

/* cap:add_const(t), cap:add_temp(t), cap:value_of(t) -> t's value id */
static int value_call(lua_State *L, int (*fn)(lm_capture *, const lm_tensor *))
{
	lm_capture *c = check_capture(L, 1);
	int v = fn(c, lml_checktensor(L, 2, "argument 2"));
	if (v < 0) lml_core_error(L);
	lua_pushinteger(L, v + 1);
	return 1;
}

static int c_add_const(lua_State *L) { return value_call(L, lm_capture_add_const); }
static int c_add_temp(lua_State *L) { return value_call(L, lm_capture_add_temp); }
static int c_value_of(lua_State *L) { return value_call(L, lm_capture_value_of); }

/* value ids (1-based in Lua) from the list at idx into out; false entries are -1 */
static int id_list(lua_State *L, int idx, int *out, int cap, const char *what)
{
	if (lua_isnoneornil(L, idx)) return -1;
	luaL_checktype(L, idx, LUA_TTABLE);
	int n = (int)luaL_len(L, idx);
	if (n > cap) lml_error(L, "%s: at most %d %s, got %d", lml_fname(L), cap, what, n);
	for (int k = 0; k < n; k++) {
		lua_rawgeti(L, idx, k + 1);
		out[k] = lua_toboolean(L, -1) ? (int)luaL_checkinteger(L, -1) - 1 : -1;
		lua_pop(L, 1);
	}
	return n;
}

/* cap:add_node(op, like, {inputs}, {outputs}) -> node id (a pass's new node) */
static int c_add_node(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	const char *op = luaL_checkstring(L, 2);
	int like = lua_isnoneornil(L, 3) ? -1 : (int)luaL_checkinteger(L, 3) - 1;
	int in[LM_CAPTURE_MAX_IN], out[LM_CAPTURE_MAX_OUT];
	int nin = id_list(L, 4, in, LM_CAPTURE_MAX_IN, "inputs"), nout = id_list(L, 5, out, LM_CAPTURE_MAX_OUT, "outputs");
	if (nin < 0 || nout < 0) lml_error(L, "add_node: lists of inputs and outputs expected");
	int id = lm_capture_add_node(c, op, like, nin, in, nout, out);
	if (id < 0) lml_core_error(L);
	lua_pushinteger(L, id + 1);
	return 1;
}

static int c_supports(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	lua_pushboolean(L, lm_capture_supports(c, luaL_checkstring(L, 2), (int)luaL_checkinteger(L, 3) - 1));
	return 1;
}

static int c_set(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	int i = (int)luaL_checkinteger(L, 2) - 1;
	const char *name = luaL_checkstring(L, 3);
	double v = lua_isboolean(L, 4) ? (double)lua_toboolean(L, 4) : luaL_checknumber(L, 4);
	if (lm_capture_node_set(c, i, name, v)) lml_core_error(L);
	return 0;
}

/* ---------------------------------------------------------------- programs */

typedef struct program_box {
	lm_program *p;
} program_box;

static lm_program *check_program(lua_State *L, int idx)
{
	program_box *b = luaL_checkudata(L, idx, PROGRAM_MT);
	if (!b->p) lml_error(L, "%s: the program was released", lml_fname(L));
	return b->p;
}

/* program:kernel(step, opts) -> {results}, info: a fused step as one of the course's kernels
 * (lm_program_kernel); backend 'emu' unless opts says otherwise. */
static int p_kernel(lua_State *L)
{
	lm_program *p = check_program(L, 1);
	int step = (int)luaL_checkinteger(L, 2) - 1;
	lm_kernel_opts o;
	lml_fused_opts(L, 3, &o);
	bool given = lua_istable(L, 3) && lua_getfield(L, 3, "backend") != LUA_TNIL;
	if (lua_istable(L, 3)) lua_pop(L, 1);
	if (!given) o.backend = "emu";
	lm_tensor **box[4];
	int boxes = lua_gettop(L) + 1;
	for (int k = 0; k < 4; k++) box[k] = lml_newbox(L);
	lm_kernel_info **ibox = lml_newinfobox(L);
	int infobox = lua_gettop(L);
	lml_newtracebox(L);
	int tracebox = lua_gettop(L);
	lm_tensor *res[4] = {0};
	int n = 0;
	if (lm_program_kernel(p, step, &o, &n, res, ibox)) lml_kernel_error(L);
	lua_createtable(L, n, 0);
	for (int k = 0; k < n; k++) {
		lml_setbox(L, box[k], res[k]);
		lua_pushvalue(L, boxes + k);
		lua_rawseti(L, -2, k + 1);
	}
	lml_push_info(L, infobox, tracebox, o.trace != 0);
	return 2;
}

static int program_gc(lua_State *L)
{
	program_box *b = luaL_checkudata(L, 1, PROGRAM_MT);
	lm_program_release(b->p);
	b->p = NULL;
	return 0;
}

/* lm._graph.codegen([{enabled = bool, min = n}]) -> {status =, compiled =, loaded =} */
static int g_codegen(lua_State *L)
{
	int on = -1;
	lua_Integer min = -1;
	if (lua_istable(L, 1)) {
		lua_getfield(L, 1, "enabled");
		if (!lua_isnil(L, -1)) on = lua_toboolean(L, -1);
		lua_getfield(L, 1, "min");
		if (!lua_isnil(L, -1)) {
			min = luaL_checkinteger(L, -1);
			if (min < 0) lml_error(L, "%s: min must be >= 0, got %lld", lml_fname(L), (long long)min);
		}
		lua_pop(L, 2);
	} else if (!lua_isnoneornil(L, 1)) {
		lml_error(L, "%s: takes a table {enabled =, min =} or nothing", lml_fname(L));
	}
	int compiled = 0, loaded = 0;
	const char *why = lm_graph_codegen(on, (int64_t)min, &compiled, &loaded);
	lua_createtable(L, 0, 3);
	lua_pushstring(L, why);
	lua_setfield(L, -2, "status");
	lua_pushinteger(L, compiled);
	lua_setfield(L, -2, "compiled");
	lua_pushinteger(L, loaded);
	lua_setfield(L, -2, "loaded");
	return 1;
}

static int g_program(lua_State *L)
{
	lm_capture *c = check_capture(L, 1);
	program_box *b = lua_newuserdatauv(L, sizeof *b, 0);
	b->p = NULL;
	luaL_setmetatable(L, PROGRAM_MT);
	if (!(b->p = lm_program_new(c))) lml_core_error(L);
	return 1;
}

static int p_add_node(lua_State *L)
{
	lm_program *p = check_program(L, 1);
	int node = (int)luaL_checkinteger(L, 2) - 1;
	int in[LM_CAPTURE_MAX_IN], out[LM_CAPTURE_MAX_OUT];
	for (int k = 0; k < LM_CAPTURE_MAX_IN; k++) in[k] = -1;
	for (int k = 0; k < LM_CAPTURE_MAX_OUT; k++) out[k] = -1;
	int ni = id_list(L, 3, in, LM_CAPTURE_MAX_IN, "inputs");
	int no = id_list(L, 4, out, LM_CAPTURE_MAX_OUT, "outputs");
	if (lm_program_add_node(p, node, ni < 0 ? NULL : in, no < 0 ? NULL : out)) lml_core_error(L);
	return 0;
}

#define MAX_GROUP 49 /* 48 elementwise nodes and an anchor */

static int p_add_fused(lua_State *L)
{
	lm_program *p = check_program(L, 1);
	int nodes[MAX_GROUP], mat[2 * LM_CAPTURE_MAX_OUT];
	int ins_store[MAX_GROUP][LM_CAPTURE_MAX_IN];
	const int *ins[MAX_GROUP];
	int n = id_list(L, 2, nodes, MAX_GROUP, "nodes");
	if (n < 0) lml_error(L, "%s: a list of nodes is required", lml_fname(L));
	for (int k = 0; k < n; k++) ins[k] = NULL;
	if (lua_istable(L, 3))
		for (int k = 0; k < n; k++) {
			lua_rawgeti(L, 3, k + 1);
			if (lua_istable(L, -1)) {
				for (int j = 0; j < LM_CAPTURE_MAX_IN; j++) ins_store[k][j] = -1;
				id_list(L, lua_gettop(L), ins_store[k], LM_CAPTURE_MAX_IN, "inputs");
				ins[k] = ins_store[k];
			}
			lua_pop(L, 1);
		}
	int nm = id_list(L, 4, mat, 2 * LM_CAPTURE_MAX_OUT, "outputs");
	if (nm < 0) lml_error(L, "%s: the values to write are required", lml_fname(L));
	int outs[MAX_GROUP];
	for (int k = 0; k < MAX_GROUP; k++) outs[k] = -1;
	int no = lua_istable(L, 5) ? id_list(L, 5, outs, MAX_GROUP, "member outputs") : -1;
	if (lm_program_add_fused(p, n, nodes, ins, no < 0 ? NULL : outs, nm, mat)) lml_core_error(L);
	return 0;
}

static int p_set_output(lua_State *L)
{
	lm_program *p = check_program(L, 1);
	if (lm_program_set_output(p, (int)luaL_checkinteger(L, 2) - 1, (int)luaL_checkinteger(L, 3) - 1))
		lml_core_error(L);
	return 0;
}

static void push_info(lua_State *L, const lm_program_info *info)
{
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, info->kernels);
	lua_setfield(L, -2, "kernels");
	lua_pushinteger(L, info->bytes_read);
	lua_setfield(L, -2, "bytes_read");
	lua_pushinteger(L, info->bytes_written);
	lua_setfield(L, -2, "bytes_written");
}

static int p_cost(lua_State *L)
{
	lm_program *p = check_program(L, 1);
	lm_program_info info;
	if (lm_program_cost(p, &info)) lml_core_error(L);
	push_info(L, &info);
	lua_pushinteger(L, lm_program_nsteps(p));
	return 2;
}

/* p:run(inputs, nresults) -> {results}, info */
static int p_run(lua_State *L)
{
	lm_program *p = check_program(L, 1);
	lm_tensor *in[MAX_RESULTS];
	int n = tensor_list(L, 2, in, MAX_RESULTS, "inputs");
	int nout = (int)luaL_checkinteger(L, 3);
	if (nout < 0 || nout > MAX_RESULTS) lml_error(L, "%s: %d results", lml_fname(L), nout);
	/* the result boxes first: nothing C-owned is held across a raise */
	lua_createtable(L, nout, 0);
	int rt = lua_gettop(L);
	lm_tensor **boxes[MAX_RESULTS];
	for (int k = 0; k < nout; k++) {
		boxes[k] = lml_newbox(L);
		lua_rawseti(L, rt, k + 1);
	}
	lm_tensor *out[MAX_RESULTS];
	lm_program_info info;
	lm_status s = lm_program_run(p, n, in, nout, out, &info);
	if (s) lml_core_error(L);
	for (int k = 0; k < nout; k++) {
		lua_rawgeti(L, rt, k + 1);
		lml_setbox(L, boxes[k], out[k]);
		lua_pop(L, 1);
	}
	push_info(L, &info);
	return 2;
}

void lml_open_graph(lua_State *L, int mt, int m, int lm)
{
	(void)mt, (void)m;
	static const luaL_Reg cmeta[] = {{"__gc", capture_gc}, {NULL, NULL}};
	static const luaL_Reg cmethods[] = {{"counts", c_counts}, {"node", c_node},     {"value", c_value},
	                                    {"storage", c_storage}, {"tensor", c_tensor}, {"set", c_set},
	                                    {"add_const", c_add_const}, {"add_temp", c_add_temp},
	                                    {"value_of", c_value_of}, {"add_node", c_add_node}, {"supports", c_supports},
	                                    {NULL, NULL}};
	if (luaL_newmetatable(L, CAPTURE_MT)) {
		luaL_setfuncs(L, cmeta, 0);
		lua_newtable(L);
		lml_setfuncs(L, lua_gettop(L), "capture:", cmethods, 0);
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
	static const luaL_Reg pmeta[] = {{"__gc", program_gc}, {NULL, NULL}};
	static const luaL_Reg pmethods[] = {{"add_node", p_add_node},
	                                    {"add_fused", p_add_fused},
	                                    {"set_output", p_set_output},
	                                    {"cost", p_cost},
	                                    {"run", p_run},
	                                    {"kernel", p_kernel},
	                                    {NULL, NULL}};
	if (luaL_newmetatable(L, PROGRAM_MT)) {
		luaL_setfuncs(L, pmeta, 0);
		lua_newtable(L);
		lml_setfuncs(L, lua_gettop(L), "program:", pmethods, 0);
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
	static const luaL_Reg fns[] = {{"begin", g_begin},     {"finish", g_end},       {"cancel", g_cancel},
	                               {"capturing", g_capturing}, {"broken", g_break}, {"count", g_count}, {"program", g_program}, {"codegen", g_codegen},
	                               {NULL, NULL}};
	lua_newtable(L);
	lml_setfuncs(L, lua_gettop(L), "graph.", fns, 0);
	lua_setfield(L, lm, "_graph");
}
