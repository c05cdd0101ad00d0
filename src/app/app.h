/*
 * app.h — what the files of the lumen program share: the Lua state with Lumen loaded, protected
 * calls with tracebacks and Ctrl-C, error reports, the version text, the REPL and its tick.
 *
 * main.c parses the command line and runs scripts, -e chunks and the test runner through these;
 * the REPL (repl.c) uses the same state and the same protected call, and reads lines through
 * edit.h. Read next: state.c (the state and where the Lua library is found), run.c, repl.c.
 */
#ifndef LUMEN_APP_H
#define LUMEN_APP_H

#include <stdbool.h>
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
 * Lua and asks running C operations to stop (lm_interrupt); a second SIGINT within a second
 * ends the process. The core's interrupt flag is cleared before and after the call. */
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

/* The version line and built features (--version); the REPL's two-line banner (colour: bold
 * first line). */
void app_print_version(FILE *out);
/* The op table (`lumen --ops`, ops_table.c). */
void app_print_ops(FILE *out);
void app_print_banner(FILE *out, bool colour);

/* ---------------------------------------------------------------- Ctrl-C (run.c) */

/* Keeps the program's SIGINT handler installed between app_docall calls (the REPL), plus a
 * SIGWINCH flag. Outside app_docall a Ctrl-C only sets a flag. */
void app_signals_install(void);
/* True (once) when a Ctrl-C arrived outside app_docall; true (once) after a terminal resize. */
bool app_sigint_take(void);
bool app_sigwinch_take(void);

/* ---------------------------------------------------------------- the tick (run.c) */

/* The hook point of the visualizer: fn(ud) is called about every 16 ms while the REPL waits
 * for input (also between keys), so a window can pump its events. It must return quickly and
 * must not run Lua. NULL removes it. While Lua runs, the same pump belongs in the program's one
 * Lua hook (run.c), never in a second one.
 * Where the window is created (SDL_Init), set SDL_HINT_NO_SIGNAL_HANDLERS to "1" first:
 * otherwise SDL installs its own SIGINT/SIGTERM handlers, turns Ctrl-C into an SDL_QUIT event,
 * and the REPL's Ctrl-C (run.c) no longer stops anything. */
typedef void (*app_tick_fn)(void *ud);
void app_set_tick(app_tick_fn fn, void *ud);
/* Calls the tick function, if any. */
void app_tick(void);
/* A window that needs its events handled while Lua runs opened (true) or closed (false): from
 * then on app_docall calls the tick about every 40 ms through the one Lua hook (run.c). */
void app_tick_live(bool on);
/* Whether app_docall is running Lua now (the tick then comes from the hook). */
bool app_lua_running(void);

/* ---------------------------------------------------------------- the visualizer (app_viz.c) */

/* Before anything runs: --headless, and the window's events from the tick and the Lua hook. */
void app_viz_init(bool headless);
/* At the end: a script's window stays until closed (not after the REPL), then everything goes. */
void app_viz_finish(bool interactive);
/* "yes (...)" or "no (...)": what --version says about the window. */
const char *app_viz_description(void);
/* `lumen --snapshot SCENE OUT.png [--step N] [--opts k=v,...]` at argv[i]; the exit status. */
int app_snapshot_main(int argc, char **argv, int i);

/* ---------------------------------------------------------------- the REPL (repl.c) */

/* Loads the REPL's Lua side (lumen.repl) and notes the globals that exist now, so :who shows
 * only the user's. Call it before running -e chunks or a script that precede the REPL.
 * Returns LUA_OK or reports the error. */
int app_repl_prepare(lua_State *L);
/* Runs the REPL on stdin until :quit or end of input; returns the process exit status: 1 when
 * the input ended inside a statement (which is reported, as lua.c does), else 0. With a
 * terminal: banner, line editing, history in $HOME/.lumen_history, completion, colours. */
int app_repl(lua_State *L);
/* ---------------------------------------------------------------- the Jupyter kernel (kernel.c) */
/* `lumen --kernel IN_FD OUT_FD`: serves the Jupyter wrapper's requests on in, replies on out,
 * until end of input; L has the REPL prepared. Returns the exit status. */
int app_kernel_main(lua_State *L, int in, int out);

#endif
