/*
 * app_viz.c — the program's side of the visualizer: the window's events handled from the REPL's
 * tick and, while Lua runs, from the one Lua hook (run.c's live tick); --headless; --snapshot
 * SCENE OUT.png [--step N] [--opts k=v,...]; waiting for a window that a script left open.
 *
 * The window code is a module loaded on the first call into viz (src/lua/lml_viz.h): these hooks
 * are set when it loads, and a run that showed nothing never loads it. Built without the
 * visualizer (no LUMEN_HAVE_VIZ), --headless is accepted (there is no window to avoid) and
 * --snapshot says that this build has no window. Read next: src/lua/viz_loader.c, run.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

#ifdef LUMEN_HAVE_VIZ
#include <lauxlib.h>

#include "lua/lml_viz.h"

const char *app_viz_description(void)
{
	return "yes (SDL2 + OpenGL 3.3 core, module " LUMEN_VIZ_MODULE_NAME " loaded on first use; a "
	       "window on a display, offscreen without one)";
}

static const lml_viz_module *viz;
static bool headless_wanted;

/* From the REPL's tick (waiting for input) or from the Lua hook (a script runs). */
static void pump(void *ud)
{
	(void)ud;
	if (app_lua_running()) viz->pump_busy();
	else viz->pump();
}

/* The module just loaded (the first call into viz): its window is the program's from now on. */
static void on_load(const lml_viz_module *m)
{
	viz = m;
	viz->set_headless(headless_wanted);
	viz->set_live_callback(app_tick_live);
	app_set_tick(pump, NULL);
}

void app_viz_init(bool headless)
{
	headless_wanted = headless;
	if (viz) viz->set_headless(headless);
	lml_viz_on_load(on_load);
}

static volatile int stop_waiting;

static void on_sigint(int sig)
{
	(void)sig;
	stop_waiting = 1;
}

void app_viz_finish(bool interactive)
{
	if (!viz) return; /* nothing was shown: the module was never loaded */
	if (!interactive && viz->is_open() && !viz->is_offscreen(NULL)) {
		/* a script showed something: keep it on screen until the window is closed (or Ctrl-C) */
		fprintf(stderr, APP_NAME ": the window stays open until you close it (Esc) or press Ctrl-C\n");
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sigint;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old);
		viz->wait_closed(&stop_waiting);
		sigaction(SIGINT, &old, NULL);
	}
	viz->shutdown();
}

/* A scene whose demonstration Lua builds (the graph scene's compiled graph): viz._snapshot of
 * lua/lumen/viz.lua in a Lua state of its own. */
static int snapshot_lua(const lml_viz_module *m, const char *scene, const char *out, const char *step,
                        const char *opts)
{
	m->set_headless(true);
	lua_State *L = app_newstate();
	if (!L) return 1;
	int st = luaL_loadstring(L, "return require('lumen.viz')._snapshot(...)");
	if (st == LUA_OK) {
		lua_pushstring(L, scene);
		lua_pushstring(L, out);
		if (step) lua_pushstring(L, step);
		else lua_pushnil(L);
		if (opts) lua_pushstring(L, opts);
		else lua_pushnil(L);
		st = lua_pcall(L, 4, 0, 0); /* its errors are the user's (a step past the end): no traceback */
	}
	if (st != LUA_OK) fprintf(stderr, APP_NAME ": %s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error)");
	lua_close(L);
	m->shutdown();
	return st == LUA_OK ? 0 : 1;
}

static int snapshot(const char *scene, const char *out, const char *step, const char *opts)
{
	const lml_viz_module *m = lml_viz_load();
	if (!m) {
		fprintf(stderr, APP_NAME ": --snapshot: %s\n", lm_last_error());
		return 1;
	}
	if (m->lua_demo && m->lua_demo(scene, opts)) return snapshot_lua(m, scene, out, step, opts);
	return m->snapshot(scene, out, step, opts);
}

#else /* no visualizer in this build */

const char *app_viz_description(void)
{
	return "no (built without SDL2, SDL2_ttf, libepoxy or libpng: viz says so)";
}

void app_viz_init(bool headless) { (void)headless; }
void app_viz_finish(bool interactive) { (void)interactive; }

static int snapshot(const char *scene, const char *out, const char *step, const char *opts)
{
	(void)scene, (void)out, (void)step, (void)opts;
	fprintf(stderr, APP_NAME ": --snapshot: this Lumen was built without a window (SDL2, SDL2_ttf, "
	        "libepoxy or libpng were missing at build time)\n");
	return 1;
}

#endif

int app_snapshot_main(int argc, char **argv, int i)
{
	if (i + 2 >= argc || argv[i + 1][0] == '-' || argv[i + 2][0] == '-') {
		fprintf(stderr, APP_NAME ": usage: " APP_NAME " --snapshot SCENE OUT.png [--step N] "
		        "[--opts k=v,...]\n");
		return 1;
	}
	const char *scene = argv[i + 1], *out = argv[i + 2], *step = NULL, *opts = NULL;
	for (int k = i + 3; k < argc; k += 2) {
		bool is_step = strcmp(argv[k], "--step") == 0, is_opts = strcmp(argv[k], "--opts") == 0;
		if (!is_step && !is_opts) {
			fprintf(stderr, APP_NAME ": --snapshot takes --step N and --opts k=v,..., not '%s'\n", argv[k]);
			return 1;
		}
		if (k + 1 >= argc) {
			fprintf(stderr, APP_NAME ": %s needs a value\n", argv[k]);
			return 1;
		}
		if (is_step) step = argv[k + 1];
		else opts = argv[k + 1];
	}
	return snapshot(scene, out, step, opts);
}
