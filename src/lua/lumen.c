/*
 * lumen.c — luaopen_lumen_core: puts the module together: the Tensor metatable and method table,
 * then each binding file's functions.
 *
 * `require 'lumen'` loads lua/lumen/init.lua, which requires this C half as 'lumen.core' and adds
 * the Lua half. Read next: loader.c, lml.h.
 */
#include "lml.h"

void lml_register_metatable(lua_State *L); /* lml.c */

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
	lml_open_index(L, mt, m, lm);
	lml_open_shape(L, mt, m, lm);
	lml_open_autograd(L, mt, m, lm);
	lml_open_functional(L, mt, m, lm); /* after index.c: F.one_hot is lm.one_hot */
	lml_open_sys(L, mt, m, lm);
	lml_open_kernels(L, mt, m, lm);
	lml_open_viz(L, mt, m, lm);
	lml_open_io(L, mt, m, lm);
	lml_open_optim(L, mt, m, lm); /* after functional.c: adds to F */
	lml_open_data(L, mt, m, lm);
	lml_open_dist(L, mt, m, lm);
	lml_open_dlp(L, mt, m, lm);
	lml_open_graph(L, mt, m, lm);
	lua_pushvalue(L, m);
	lua_setfield(L, lm, "Tensor"); /* the method table: Lua code may add methods */
	lua_getfield(L, LUA_REGISTRYINDEX, "lumen.luadir"); /* set by lml_install_loader */
	lua_setfield(L, lm, "lua_dir");
	lua_settop(L, lm);
	return 1;
}
