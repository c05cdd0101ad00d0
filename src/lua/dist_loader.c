/*
 * dist_loader.c — lm._dist_open(): loads liblumen_dist.so (Open MPI under lumen.dist: src/dist/
 * dist_mpi.c) on first use and returns its table of functions; in a build without MPI, or when the
 * module does not load, raises saying why. The program itself links no MPI, so `lumen` starts as
 * fast as without it and runs without Open MPI installed. Read next: lua/lumen/dist.lua.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "core/lmi.h"
#include "lml.h"

#ifndef LUMEN_DIST_MODULE_NAME
#define LUMEN_DIST_MODULE_NAME "liblumen_dist.so"
#endif

static int dist_open(lua_State *L)
{
#ifdef LUMEN_HAVE_DIST
	static lua_CFunction open;
	static char why[1536];
	if (!open) {
		void *h = lmi_module_open(LUMEN_DIST_MODULE_NAME, "LUMEN_DIST_MODULE", why, sizeof why);
		if (h) open = (lua_CFunction)(uintptr_t)dlsym(h, "lumen_dist_open");
		if (!open)
			return luaL_error(L, "dist: cannot load %s (%s)", LUMEN_DIST_MODULE_NAME, h ? "no lumen_dist_open in it" : why);
	}
	return open(L);
#else
	return luaL_error(L, "dist: this build of Lumen has no MPI: install Debian's libopenmpi-dev and openmpi-bin "
	                     "(./run.sh and ./test.sh do) and build again");
#endif
}

void lml_open_dist(lua_State *L, int mt, int m, int lm)
{
	(void)mt, (void)m;
	lua_pushcfunction(L, dist_open);
	lua_setfield(L, lm, "_dist_open");
#ifdef LUMEN_HAVE_DIST
	lua_pushboolean(L, 1);
#else
	lua_pushboolean(L, 0);
#endif
	lua_setfield(L, lm, "_dist_built");
}
