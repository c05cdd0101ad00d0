/*
 * lumen.c — luaopen_lumen_core: puts the module together (the Tensor metatable and method table,
 * then each binding file's functions) and marks what the C core does not provide yet.
 *
 * `require 'lumen'` loads lua/lumen/init.lua, which requires this C half as 'lumen.core' and adds
 * the Lua half. Functions of ../shared/docs/API.md whose C implementation has not landed are
 * bound to a function that raises "<name> is not available in this build yet (...)", so a
 * script learns exactly what is missing instead of calling nil. Read next: loader.c, lml.h.
 */
#include "lml.h"

void lml_register_metatable(lua_State *L); /* lml.c */

/* upvalues: 1 name, 2 what is missing */
static int unavailable(lua_State *L)
{
	return luaL_error(L, "%s is not available in this build yet (%s)", lml_fname(L),
	                  lua_tostring(L, lua_upvalueindex(2)));
}

typedef struct pending {
	const char *name;
	int where;    /* 1: lm.name, 2: Tensor:name, 3: both */
	const char *missing;
} pending;

/*
 * API.md names waiting for C functions (declared in include/lumen, not yet defined in src).
 * When one lands, bind it in its file and delete its row here.
 */
static const pending pending_fns[] = {
	{"cat", 1, "the C function lm_cat has not landed"},
	{"stack", 1, "the C function lm_stack has not landed"},
	{"index_select", 3, "the C function lm_index_select has not landed"},
	{"gather", 3, "the C function lm_gather has not landed"},
	{"masked_fill", 3, "the C function lm_masked_fill has not landed"},
	{"sort", 3, "the C function lm_sort has not landed"},
	{"topk", 3, "the C function lm_topk has not landed"},
	{"backward", 2, "the autograd engine (lm_backward) has not landed"},
	{NULL, 0, NULL},
};

static void mark_pending(lua_State *L, int m, int lm)
{
	for (const pending *p = pending_fns; p->name; p++) {
		if (p->where & 1) {
			lua_pushfstring(L, "lm.%s", p->name);
			lua_pushstring(L, p->missing);
			lua_pushcclosure(L, unavailable, 2);
			lua_setfield(L, lm, p->name);
		}
		if (p->where & 2) {
			lua_pushfstring(L, "Tensor:%s", p->name);
			lua_pushstring(L, p->missing);
			lua_pushcclosure(L, unavailable, 2);
			lua_setfield(L, m, p->name);
		}
	}
	lua_getfield(L, lm, "autograd");
	lua_pushliteral(L, "lm.autograd.gradcheck");
	lua_pushliteral(L, "the C function lm_gradcheck has not landed");
	lua_pushcclosure(L, unavailable, 2);
	lua_setfield(L, -2, "gradcheck");
	lua_pop(L, 1);
}

int luaopen_lumen_core(lua_State *L)
{
	lua_newtable(L); /* lm */
	int lm = lua_gettop(L);
	luaL_newmetatable(L, LML_TENSOR_MT); /* sets __name */
	int mt = lua_gettop(L);
	lml_register_metatable(L);
	lua_newtable(L); /* methods */
	int m = lua_gettop(L);
	lml_open_tensor(L, mt, m, lm);
	lml_open_create(L, mt, m, lm);
	lml_open_view(L, mt, m, lm);
	lml_open_math(L, mt, m, lm);
	lml_open_reduce(L, mt, m, lm);
	lml_open_autograd(L, mt, m, lm);
	lml_open_functional(L, mt, m, lm);
	lml_open_sys(L, mt, m, lm);
	mark_pending(L, m, lm);
	lua_pushvalue(L, m);
	lua_setfield(L, lm, "Tensor"); /* the method table: Lua code may add methods */
	lua_getfield(L, LUA_REGISTRYINDEX, "lumen.luadir"); /* set by lml_install_loader */
	lua_setfield(L, lm, "lua_dir");
	lua_settop(L, lm);
	return 1;
}
