/*
 * coro.c — the Lua thread that is running now, for Ctrl-C: Lua hooks are per thread (lua_State),
 * so the SIGINT handler (src/app/run.c) must arm the hook of the coroutine that is running, not
 * only of the main state, or a loop inside a coroutine (coroutine.wrap(function() while true do
 * end end)()) or inside a kernel thread that cleared its hook could not be stopped.
 *
 * Design: every resume Lumen makes goes through lml_resume, which records the thread it resumes
 * for the time it runs (and restores the resumer's after: resumes nest). Lua's own
 * coroutine.resume and coroutine.wrap resume through lua_resume directly, so they are replaced by
 * equivalents written on lml_resume (same results, same errors, the wrapped error with the
 * caller's position as Lua's wrap adds it). kernels.launch resumes its thread coroutines with it.
 * Read next: src/app/run.c (on_sigint), src/lua/launch.c (run_thread).
 */
#include "lml.h"

static lua_State *volatile current; /* the thread lml_resume runs now, or NULL (the main one) */

lua_State *lml_running_thread(void) { return current; }

int lml_resume(lua_State *co, lua_State *from, int nargs, int *nres)
{
	lua_State *outer = current;
	current = co;
	int r = lua_resume(co, from, nargs, nres);
	current = outer;
	return r;
}

/* Resumes co with the n values on top of L: their number (moved onto L), or -1 with the error
 * on top of L. */
static int resume_with(lua_State *L, lua_State *co, int n)
{
	if (!lua_checkstack(co, n)) {
		lua_pushliteral(L, "too many arguments to resume");
		return -1;
	}
	lua_xmove(L, co, n);
	int nres = 0, st = lml_resume(co, L, n, &nres);
	if (st != LUA_OK && st != LUA_YIELD) {
		lua_xmove(co, L, 1); /* the error */
		return -1;
	}
	if (!lua_checkstack(L, nres + 1)) {
		lua_pop(co, nres);
		lua_pushliteral(L, "too many results to resume");
		return -1;
	}
	lua_xmove(co, L, nres);
	return nres;
}

static lua_State *thread_arg(lua_State *L, int idx)
{
	lua_State *co = lua_tothread(L, idx);
	if (!co) luaL_typeerror(L, idx, "coroutine");
	return co;
}

/* coroutine.resume(co, ...) -> true, results... | false, error */
static int co_resume(lua_State *L)
{
	lua_State *co = thread_arg(L, 1);
	int n = resume_with(L, co, lua_gettop(L) - 1);
	lua_pushboolean(L, n >= 0);
	if (n < 0) {
		lua_insert(L, -2);
		return 2;
	}
	lua_insert(L, -(n + 1));
	return n + 1;
}

/* The function coroutine.wrap returns: resumes its coroutine, raises its errors (a string error
 * of the coroutine gets the position of the wrapped function's caller in front, as in Lua). */
static int co_wrapped(lua_State *L)
{
	lua_State *co = lua_tothread(L, lua_upvalueindex(1));
	int n = resume_with(L, co, lua_gettop(L));
	if (n >= 0) return n;
	int st = lua_status(co);
	if (st != LUA_OK && st != LUA_YIELD) { /* the coroutine died: close its to-be-closed variables */
		lua_pop(L, 1);
		st = lua_resetthread(co);
		lua_xmove(co, L, 1);
	}
	if (st != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

/* coroutine.wrap(f) */
static int co_wrap(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_State *co = lua_newthread(L);
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 1);
	lua_pushcclosure(L, co_wrapped, 1);
	return 1;
}

void lml_open_coroutine(lua_State *L)
{
	if (lua_getglobal(L, "coroutine") != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	lua_pushcfunction(L, co_resume);
	lua_setfield(L, -2, "resume");
	lua_pushcfunction(L, co_wrap);
	lua_setfield(L, -2, "wrap");
	lua_pop(L, 1);
}
