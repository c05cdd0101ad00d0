/*
 * state.c — the Lua state of the lumen program and where its Lua library lives.
 *
 * The library directory is found from the executable itself (/proc/self/exe), never from
 * LUA_PATH or the working directory: <exe_dir>/../share/lumen/lua when installed (cmake
 * --install), else the source tree's lua/ for a binary in a build tree, else the configured
 * install prefix. Read next: run.c, ../lua/loader.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "app.h"
#include "lua/lml.h"

#ifndef LUMEN_SOURCE_LUA_DIR
#define LUMEN_SOURCE_LUA_DIR "lua"
#endif
#ifndef LUMEN_INSTALL_DATADIR
#define LUMEN_INSTALL_DATADIR "/usr/local/share/lumen"
#endif

static int has_library(const char *dir)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/lumen/init.lua", dir);
	return access(p, R_OK) == 0;
}

/* Where Lumen's Lua library is: in the program's share folder (an install, or a build's copy),
 * else the source tree's, else the install's data directory. */
const char *app_luadir(void)
{
	static char dir[PATH_MAX + 32];
	static const char *const rel[] = {"%s/../share/lumen/lua"};
	if (dir[0]) return dir;
	char real[PATH_MAX];
	if (lm_program_data_dir(rel, 1, "lumen/init.lua", dir, sizeof dir) && realpath(dir, real)) {
		snprintf(dir, sizeof dir, "%s", real);
		return dir;
	}
	if (has_library(LUMEN_SOURCE_LUA_DIR)) {
		snprintf(dir, sizeof dir, "%s", LUMEN_SOURCE_LUA_DIR);
		return dir;
	}
	snprintf(dir, sizeof dir, "%s/lua", LUMEN_INSTALL_DATADIR);
	return dir;
}

/* Loads lumen and the built modules as globals (in protected mode). */
static int preload_globals(lua_State *L)
{
	static const char *const modules[] = {"nn", "optim", "data", "kernels", "viz", "lesson"};
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lumen");
	lua_call(L, 1, 1);
	lua_pushvalue(L, -1);
	lua_setglobal(L, "lm");
	lua_getfield(L, -1, "nn");
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "functional");
		lua_setglobal(L, "F");
	}
	lua_pop(L, 2);
	/* modules of API.md that exist in this build become globals too, each loaded the first time
	 * its global is read (lm._lazy, init.lua): a start compiles none of their Lua (3.5 ms) */
	const char *dir = app_luadir();
	lua_getglobal(L, "lm");
	lua_getfield(L, -1, "_lazy");
	for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
		char p[PATH_MAX + 64], q[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/lumen/%s.lua", dir, modules[i]);
		snprintf(q, sizeof q, "%s/lumen/%s/init.lua", dir, modules[i]);
		if (access(p, R_OK) != 0 && access(q, R_OK) != 0) continue;
		lua_pushboolean(L, 1);
		lua_setfield(L, -2, modules[i]);
	}
	lua_pop(L, 2);
	/* and those not built say so when a script or the REPL reads their global (init.lua) */
	lua_getglobal(L, "lm");
	lua_getfield(L, -1, "_guard_globals");
	lua_pushglobaltable(L);
	lua_call(L, 1, 0);
	lua_pop(L, 1);
	return 0;
}

lua_State *app_newstate(void)
{
	lua_State *L = luaL_newstate();
	if (!L) {
		fprintf(stderr, APP_NAME ": cannot create the Lua state (out of memory)\n");
		return NULL;
	}
	luaL_openlibs(L);
	lml_open_coroutine(L); /* resumes Ctrl-C can reach (src/lua/coro.c) */
	const char *dir = app_luadir();
	lml_install_loader(L, dir);
	lua_pushcfunction(L, preload_globals);
	if (app_docall(L, 0, 0) != LUA_OK) {
		app_report(L, LUA_ERRRUN);
		if (!has_library(dir))
			fprintf(stderr, APP_NAME ": Lumen's Lua library was not found (looked for "
			                "lumen/init.lua in %s)\n", dir);
		lua_close(L);
		return NULL;
	}
	return L;
}
