/*
 * viz_loader.c — the program's side of `viz` (lml_viz.h): lm._viz before the visualizer module is
 * loaded, the loading (once, on the first call into viz), and, in a build without a window, the
 * functions that say so.
 *
 * Design: lm._viz is made at start-up with every name of LML_VIZ_FUNCTIONS bound to a trampoline,
 * so completion lists them and lua/lumen/viz.lua can wrap them, but nothing of SDL is loaded. The
 * first trampoline called loads liblumen_viz.so (lmi_module_open: $LUMEN_VIZ_MODULE, next to the
 * executable, <exe dir>/../lib/lumen, the build and install directories), asks it for the real functions, puts them in place of the
 * trampolines still in the table (a name that Lua replaced, like viz.show, stays Lua's) and calls
 * the real one; a trampoline kept elsewhere (viz.lua's local show) forwards from then on.
 * viz.is_open answers false without loading anything. The program's window hooks (app_viz.c) are
 * set when the module loads (lml_viz_on_load). Read next: viz_module.c, viz.c.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lmi.h"
#include "lml_viz.h"

#ifndef LUMEN_VIZ_MODULE_NAME
#define LUMEN_VIZ_MODULE_NAME "liblumen_viz.so"
#endif

static const char *const names[] = {LML_VIZ_FUNCTIONS, NULL};

#ifdef LUMEN_HAVE_VIZ

static const lml_viz_module *mod;
static bool tried;
static char why[1536];
static void (*on_load)(const lml_viz_module *m);

void lml_viz_on_load(void (*fn)(const lml_viz_module *m)) { on_load = fn; }

const lml_viz_module *lml_viz_loaded(void) { return mod; }

const lml_viz_module *lml_viz_load(void)
{
	if (!mod && !tried) {
		tried = true;
		void *h = lmi_module_open(LUMEN_VIZ_MODULE_NAME, "LUMEN_VIZ_MODULE", why, sizeof why);
		const lml_viz_module *(*entry)(void) = NULL;
		if (h) *(void **)&entry = dlsym(h, LML_VIZ_MODULE_SYMBOL);
		const lml_viz_module *m = entry ? entry() : NULL;
		if (h && !entry) snprintf(why, sizeof why, "%s has no %s", LUMEN_VIZ_MODULE_NAME, LML_VIZ_MODULE_SYMBOL);
		else if (m && m->version != LML_VIZ_MODULE_VERSION)
			snprintf(why, sizeof why, "%s is of another build (version %d, expected %d)",
			         LUMEN_VIZ_MODULE_NAME, m->version, LML_VIZ_MODULE_VERSION);
		else if (m) {
			mod = m;
			if (on_load) on_load(mod);
		}
		/* a module that loaded but cannot be used stays loaded: Mesa and SDL do not unload cleanly */
	}
	if (!mod)
		lm_set_error(LM_ERR_UNSUPPORTED, "the visualizer module could not be loaded (%s; "
		             "LUMEN_VIZ_MODULE=path chooses the file)", why);
	return mod;
}

/* ---------------------------------------------------------------- lm._viz before the module */

static int trampoline(lua_State *L);

/* The real functions: made once by the module, kept in the registry. Pushes them, or raises. */
static void push_impl(lua_State *L, const char *fname)
{
	static const char key[] = "lumen.viz_impl";
	if (lua_getfield(L, LUA_REGISTRYINDEX, key) == LUA_TTABLE) return;
	lua_pop(L, 1);
	if (!lml_viz_load()) luaL_error(L, "%s: %s", fname, lm_last_error());
	lua_newtable(L);
	mod->open_lua(L, lua_gettop(L));
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, key);
	/* the trampolines still in lm._viz give way to the real functions */
	lua_pushvalue(L, lua_upvalueindex(2));
	for (int i = 0; names[i]; i++) {
		lua_getfield(L, -1, names[i]);
		bool ours = lua_tocfunction(L, -1) == trampoline;
		lua_pop(L, 1);
		if (!ours) continue;
		lua_getfield(L, -2, names[i]);
		lua_setfield(L, -2, names[i]);
	}
	lua_pop(L, 1);
}

/* viz.<name>(...): the module's function of that name, loading the module the first time. */
static int trampoline(lua_State *L)
{
	int n = lua_gettop(L);
	const char *name = lua_tostring(L, lua_upvalueindex(1));
	char fname[64];
	snprintf(fname, sizeof fname, "viz.%s", name);
	push_impl(L, fname);
	lua_getfield(L, -1, name);
	lua_remove(L, -2);
	lua_insert(L, 1);
	lua_call(L, n, LUA_MULTRET);
	return lua_gettop(L);
}

/* viz.is_open(): false until the module is loaded (asking does not load it) */
static int is_open(lua_State *L)
{
	lua_pushboolean(L, mod && mod->is_open());
	return 1;
}

void lml_open_viz(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lua_newtable(L);
	int t = lua_gettop(L);
	for (int i = 0; names[i]; i++) {
		if (strcmp(names[i], "is_open") == 0) {
			lua_pushcfunction(L, is_open);
		} else {
			lua_pushstring(L, names[i]);
			lua_pushvalue(L, t);
			lua_pushcclosure(L, trampoline, 2);
		}
		lua_setfield(L, t, names[i]);
	}
	lua_pushboolean(L, 1);
	lua_setfield(L, t, "built");
	lua_setfield(L, lm, "_viz");
}

#else /* no visualizer in this build */

void lml_viz_on_load(void (*fn)(const lml_viz_module *m)) { (void)fn; }
const lml_viz_module *lml_viz_loaded(void) { return NULL; }

const lml_viz_module *lml_viz_load(void)
{
	lm_set_error(LM_ERR_UNSUPPORTED, "this Lumen was built without a window: SDL2, SDL2_ttf, "
	             "libepoxy or libpng were missing at build time (apt-get install libsdl2-dev "
	             "libsdl2-ttf-dev libepoxy-dev libpng-dev, then rebuild)");
	return NULL;
}

static int no_window(lua_State *L)
{
	lml_viz_load();
	return luaL_error(L, "%s: %s", lml_fname(L), lm_last_error());
}

static int v_false(lua_State *L)
{
	lua_pushboolean(L, 0);
	return 1;
}

void lml_open_viz(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lua_newtable(L);
	for (int i = 0; names[i]; i++) {
		bool open = strcmp(names[i], "is_open") == 0;
		lua_pushfstring(L, "viz.%s", names[i]);
		lua_pushcclosure(L, open ? v_false : no_window, 1);
		lua_setfield(L, -2, names[i]);
	}
	lua_pushboolean(L, 0);
	lua_setfield(L, -2, "built");
	lua_setfield(L, lm, "_viz");
}

#endif
