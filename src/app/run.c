/*
 * run.c — running Lua code for the program: protected calls with a traceback, Ctrl-C, error
 * reports, scripts with lua.c's `arg`, -e chunks, and the test runner.
 *
 * Ctrl-C while Lua runs: the SIGINT handler sets a one-shot count hook that raises
 * "interrupted!" at the next Lua instruction and calls lm_interrupt() so long C operations stop
 * too (they fail with "interrupted"); a second Ctrl-C before the hook fires kills the process as
 * usual. The REPL will reuse app_docall. Read next: main.c.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "app.h"
#include "lumen/core.h"

/* ---------------------------------------------------------------- protected calls */

static lua_State *volatile running_state;

static void interrupt_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	luaL_error(L, "interrupted!");
}

static void on_sigint(int sig)
{
	signal(sig, SIG_DFL); /* a second Ctrl-C ends the process */
	lm_interrupt();
	if (running_state)
		lua_sethook(running_state, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* The message handler: the message (or a description of a non-string error) plus a traceback. */
static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int app_docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, traceback);
	lua_insert(L, base);
	running_state = L;
	lm_interrupt_clear();
	signal(SIGINT, on_sigint);
	int status = lua_pcall(L, narg, nres, base);
	signal(SIGINT, SIG_DFL);
	running_state = NULL;
	lm_interrupt_clear();
	lua_remove(L, base);
	return status;
}

int app_report(lua_State *L, int status)
{
	if (status != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		fprintf(stderr, "%s: %s\n", APP_NAME, msg ? msg : "(error object is not a string)");
		fflush(stderr);
		lua_pop(L, 1);
	}
	return status;
}

/* ---------------------------------------------------------------- chunks and scripts */

int app_dostring(lua_State *L, const char *code, const char *chunkname)
{
	int status = luaL_loadbuffer(L, code, strlen(code), chunkname);
	if (status == LUA_OK) status = app_docall(L, 0, 0);
	return app_report(L, status);
}

void app_set_arg(lua_State *L, char **argv, int argc, int script)
{
	lua_createtable(L, argc - script > 0 ? argc - script : 0, script + 1);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

int app_dofile(lua_State *L, char **argv, int argc, int script)
{
	const char *name = argv[script];
	if (strcmp(name, "-") == 0) name = NULL; /* stdin */
	int status = luaL_loadfile(L, name);
	if (status == LUA_OK) {
		int n = argc - script - 1;
		luaL_checkstack(L, n + 1, "too many arguments to the script");
		for (int i = 1; i <= n; i++) lua_pushstring(L, argv[script + i]);
		status = app_docall(L, n, 0);
	}
	return app_report(L, status);
}

int app_run_tests(lua_State *L, char **paths, int n)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lumen.test");
	int status = app_docall(L, 1, 1);
	if (app_report(L, status) != LUA_OK) return 1;
	lua_getfield(L, -1, "main");
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushstring(L, paths[i]);
		lua_rawseti(L, -2, i + 1);
	}
	status = app_docall(L, 1, 1);
	if (app_report(L, status) != LUA_OK) return 1;
	int failed = (int)lua_tointeger(L, -1);
	lua_pop(L, 2);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- version */

void app_print_version(FILE *out)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	fprintf(out, "Lumen %s (%s)\n", bi.version, LUA_RELEASE);
	fprintf(out, "  BLAS: %s, %s threading\n", bi.blas, bi.blas_threading);
	fprintf(out, "  OpenMP: %s, %d threads\n", bi.openmp ? "yes" : "no", lm_get_num_threads());
	fprintf(out, "  CUDA: %s\n", bi.cuda_built ? "yes (built; loaded on first use)" : "no (not built)");
	fprintf(out, "  SDL: no (the visualizer is not part of this build yet)\n");
	fprintf(out, "  Lua library: %s\n", app_luadir());
	fprintf(out, "  compiler: %s%s\n", bi.compiler, bi.sanitize ? ", ASan+UBSan" : "");
	if (bi.threading_warning) fprintf(out, "  warning: %s\n", bi.threading_warning);
}

void app_print_banner(FILE *out)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	fprintf(out, "Lumen %s (%s; %s %s; CUDA %s)\n", bi.version, LUA_RELEASE, bi.blas,
	        bi.blas_threading, bi.cuda_built ? "yes" : "no");
	if (bi.threading_warning) fprintf(out, "warning: %s\n", bi.threading_warning);
}
