/*
 * viz_module.c — the visualizer module's entry point (lml_viz.h): the table the program takes
 * from liblumen_viz.so when it loads it, and --snapshot's work, which needs the window code.
 *
 * Built into the module only (CMakeLists.txt: the visualizer's objects, viz.c, viz_data.c and this
 * file); everything else it calls (Lumen's core, Lua, the lml helpers) comes from the program.
 * Read next: viz_loader.c (the program's side), viz.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lml_viz.h"
#include "viz/viz.h"

/* --snapshot SCENE OUT.png [--step N] [--opts k=v,...]: the scene drawn offscreen at that step. */
static int snapshot(const char *scene, const char *out, const char *step, const char *opts)
{
	const char *fname = "--snapshot";
	lm_viz_opts o;
	memset(&o, 0, sizeof o);
	lm_viz_set_headless(true);
	if (opts && lm_viz_opts_parse(&o, opts, fname) != LM_OK) goto fail;
	if (step && !strstr(opts ? opts : "", "step=") && lm_viz_opts_add(&o, "step", step, fname) != LM_OK)
		goto fail;
	if (step) {
		char *end;
		long v = strtol(step, &end, 10);
		if (*end || v < 0) {
			lm_set_error(LM_ERR_ARG, "%s: --step needs a step number (0 or more), got '%s'", fname, step);
			goto fail;
		}
	}
	if (lm_viz_scene(scene, &o, fname) != LM_OK) goto fail;
	lm_viz_state st;
	lm_viz_get_state(&st);
	if (step && atol(step) >= st.steps) {
		lm_set_error(LM_ERR_ARG, "%s: --step %s is past the end: scene '%s' has steps 0..%d", fname, step,
		             scene, st.steps - 1);
		goto fail;
	}
	if (lm_viz_snapshot(out, fname) != LM_OK) goto fail;
	lm_viz_shutdown();
	return 0;
fail:
	fprintf(stderr, "lumen: %s\n", lm_last_error());
	lm_viz_shutdown();
	return 1;
}

/* Scenes whose demonstration lm.graph builds, in Lua (lua/lumen/viz.lua, viz.scene): the scene and
 * the option that asks for it. */
static const struct {
	const char *scene, *key, *value;
} lua_demos[] = {
	{"graph", "expr", "compiled"},
};

static bool lua_demo(const char *scene, const char *opts)
{
	lm_viz_opts o;
	memset(&o, 0, sizeof o);
	if (opts && lm_viz_opts_parse(&o, opts, "--snapshot") != LM_OK) return false; /* snapshot says why */
	for (size_t i = 0; i < sizeof lua_demos / sizeof lua_demos[0]; i++) {
		if (strcmp(scene, lua_demos[i].scene) != 0) continue;
		for (int k = 0; k < o.n; k++)
			if (strcmp(o.kv[k].key, lua_demos[i].key) == 0 && strcmp(o.kv[k].str, lua_demos[i].value) == 0) return true;
	}
	return false;
}

static const lml_viz_module module = {
	.version = LML_VIZ_MODULE_VERSION,
	.open_lua = lml_viz_open_funcs,
	.set_headless = lm_viz_set_headless,
	.set_live_callback = lm_viz_set_live_callback,
	.pump = lm_viz_pump,
	.pump_busy = lm_viz_pump_busy,
	.is_open = lm_viz_is_open,
	.is_offscreen = lm_viz_is_offscreen,
	.wait_closed = lm_viz_wait_closed,
	.shutdown = lm_viz_shutdown,
	.snapshot = snapshot,
	.lua_demo = lua_demo,
};

/* The one symbol the program looks up (LML_VIZ_MODULE_SYMBOL). */
__attribute__((visibility("default"))) const lml_viz_module *lml_viz_module_entry(void);
const lml_viz_module *lml_viz_module_entry(void) { return &module; }
