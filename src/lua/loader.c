/*
 * loader.c — how `require` finds Lumen's modules, whatever LUA_PATH says.
 *
 * A searcher placed right after package.preload (ahead of the path searchers) answers for
 * 'lumen', 'lumen.<name>' and the short names of API.md ('nn', 'optim', ...): it loads
 * <luadir>/lumen/<name>.lua (or .../init.lua), where luadir is the directory the program found
 * at start-up (src/app/state.c: next to the executable when installed, the source tree's lua/
 * in a build tree). A short name loads as require('lumen.<name>'), so both names give one table.
 * A module of API.md that does not exist yet fails with a message saying so.
 * Read next: lumen.c, lua/lumen/init.lua.
 */
#include <string.h>
#include <unistd.h>

#include "lml.h"

static const char *const planned[] = {"nn", "optim", "data", "kernels", "viz", "lesson", NULL};

static int is_planned(const char *name)
{
	for (int i = 0; planned[i]; i++)
		if (strcmp(name, planned[i]) == 0) return 1;
	return 0;
}

/* Pushes the path of module name (dots as slashes) under dir when the file exists, else
 * returns 0 and pushes nothing. */
static int find_module(lua_State *L, const char *dir, const char *name)
{
	static const char *const forms[] = {"%s/%s.lua", "%s/%s/init.lua"};
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	for (const char *p = name; *p; p++) luaL_addchar(&b, *p == '.' ? '/' : *p);
	luaL_pushresult(&b);
	const char *rel = lua_tostring(L, -1);
	for (int i = 0; i < 2; i++) {
		lua_pushfstring(L, forms[i], dir, rel);
		if (access(lua_tostring(L, -1), R_OK) == 0) {
			lua_remove(L, -2);
			return 1;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return 0;
}

/* The loader of a short name: require('lumen.<name>'). upvalues: 1 require, 2 full name. */
static int short_loader(lua_State *L)
{
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushvalue(L, lua_upvalueindex(2));
	lua_call(L, 1, 1);
	return 1;
}

static int not_built(lua_State *L, const char *name, const char *shortname)
{
	return luaL_error(L, "module '%s' is not built yet: Lumen's '%s' module (docs/API.md) comes "
	                  "with a later version; 'lumen' itself is available", name, shortname);
}

/* upvalues: 1 luadir, 2 require */
static int searcher(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	const char *dir = lua_tostring(L, lua_upvalueindex(1));
	if (is_planned(name)) {
		lua_pushfstring(L, "lumen.%s", name);
		if (!find_module(L, dir, lua_tostring(L, -1))) return not_built(L, name, name);
		lua_pop(L, 1); /* the path; the full name stays */
		lua_pushvalue(L, lua_upvalueindex(2));
		lua_insert(L, -2);
		lua_pushcclosure(L, short_loader, 2);
		lua_pushliteral(L, ":lumen");
		return 2;
	}
	if (strcmp(name, "lumen") != 0 && strncmp(name, "lumen.", 6) != 0) return 0;
	if (!find_module(L, dir, name)) {
		if (strncmp(name, "lumen.", 6) == 0 && is_planned(name + 6))
			return not_built(L, name, name + 6);
		lua_pushfstring(L, "no file for '%s' in Lumen's library %s", name, dir);
		return 1;
	}
	const char *path = lua_tostring(L, -1);
	if (luaL_loadfilex(L, path, "t") != LUA_OK)
		return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, path,
		                  lua_tostring(L, -1));
	lua_insert(L, -2); /* chunk, path */
	return 2;
}

void lml_install_loader(lua_State *L, const char *luadir)
{
	lua_pushstring(L, luadir);
	lua_setfield(L, LUA_REGISTRYINDEX, "lumen.luadir");
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "preload");
	lua_pushcfunction(L, luaopen_lumen_core);
	lua_setfield(L, -2, "lumen.core");
	lua_pop(L, 1);
	/* searchers: preload, lumen, then the path searchers */
	lua_getfield(L, -1, "searchers");
	int s = lua_gettop(L);
	lua_Integer n = (lua_Integer)lua_rawlen(L, s);
	for (lua_Integer i = n; i >= 2; i--) {
		lua_rawgeti(L, s, i);
		lua_rawseti(L, s, i + 1);
	}
	lua_pushstring(L, luadir);
	lua_getglobal(L, "require");
	lua_pushcclosure(L, searcher, 2);
	lua_rawseti(L, s, 2);
	lua_pop(L, 2);
}
