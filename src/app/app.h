/*
 * app.h — what the files of the lumen program share: the Lua state with Lumen loaded, protected
 * calls with tracebacks and Ctrl-C, error reports, and the version text.
 *
 * main.c parses the command line and runs scripts, -e chunks and the test runner through these;
 * the REPL (repl.c, a later issue) uses the same state and the same protected call.
 * Read next: state.c (the state and where the Lua library is found), run.c, ../lua/lml.h.
 */
#ifndef LUMEN_APP_H
#define LUMEN_APP_H

#include <stdio.h>

#include <lua.h>

#define APP_NAME "lumen"

/* The directory holding lumen/init.lua and the other Lua modules (see state.c). */
const char *app_luadir(void);
/* A new state: standard libraries, Lumen's module searcher, and the globals lm (require
 * 'lumen'), F (lm.nn.functional) and every built module of API.md under its short name.
 * Returns NULL after printing the reason when Lumen's Lua library cannot be loaded. */
lua_State *app_newstate(void);

/* lua_pcall with a traceback message handler; SIGINT during the call raises "interrupted!" in
 * Lua and asks running C operations to stop (lm_interrupt). */
int app_docall(lua_State *L, int narg, int nres);
/* Prints the error at the stack top (when status is not LUA_OK) to stderr and pops it. Returns
 * status. */
int app_report(lua_State *L, int status);

/* Runs code as a chunk named chunkname. */
int app_dostring(lua_State *L, const char *code, const char *chunkname);
/* Sets the global arg (lua.c's layout: arg[0] = script, negatives before it) from argv. */
void app_set_arg(lua_State *L, char **argv, int argc, int script);
/* Runs argv[script] ('-' is stdin) with argv[script + 1 ..] as its arguments. */
int app_dofile(lua_State *L, char **argv, int argc, int script);
/* Runs the Lua test runner on paths; returns the process exit status. */
int app_run_tests(lua_State *L, char **paths, int n);

/* The version line and built features (--version); the short banner. */
void app_print_version(FILE *out);
void app_print_banner(FILE *out);

#endif
