/*
 * lml_viz.h — the `viz` binding's shared parts: what its two halves in the visualizer module share
 * (viz.c: windows, kernel scenes, controls; viz_data.c: tensors, graphs, models, curves), and the
 * module's table (viz_module.c) that the program loads on first use (viz_loader.c).
 *
 * The visualizer (src/viz, SDL2, OpenGL, SDL2_ttf, libpng and these bindings) is a module,
 * liblumen_viz.so, dlopen'ed the first time a script or the REPL calls into `viz` (or --snapshot
 * runs): a start that draws nothing never loads SDL and its libraries. The module takes Lumen's
 * and Lua's functions from the program (which exports them). Read next: viz_loader.c, viz.c.
 */
#ifndef LUMEN_LML_VIZ_H
#define LUMEN_LML_VIZ_H

#include "lml.h"

/* viz.show(x, opts) when x is a tensor: the graph or the tensor scene. */
int lml_viz_show_tensor(lua_State *L);
/* Adds viz._show_model, viz._record, viz.plot, viz.follow, viz.clear and viz.due to the table at t. */
void lml_viz_data_funcs(lua_State *L, int t);
/* Sets all of viz's C functions (viz.c's and viz_data.c's) in the table at t. */
void lml_viz_open_funcs(lua_State *L, int t);

/* The module's table, by the symbol LML_VIZ_MODULE_SYMBOL (a function returning it). */
#define LML_VIZ_MODULE_VERSION 2
#define LML_VIZ_MODULE_SYMBOL "lml_viz_module_entry"
typedef struct lml_viz_module {
	int version;
	/* the viz.* C functions into the table at index t (the names of LML_VIZ_FUNCTIONS) */
	void (*open_lua)(lua_State *L, int t);
	void (*set_headless)(bool on);
	void (*set_live_callback)(void (*fn)(bool live));
	void (*pump)(void);
	void (*pump_busy)(void);
	bool (*is_open)(void);
	bool (*is_offscreen)(const char **why);
	void (*wait_closed)(volatile int *stop);
	void (*shutdown)(void);
	/* --snapshot SCENE OUT.png [--step N] [--opts k=v,...]: prints its error; 0 or 1 */
	int (*snapshot)(const char *scene, const char *out, const char *step, const char *opts);
	/* whether --snapshot's scene builds its demonstration in Lua with these options (the program
	 * then runs viz._snapshot of lua/lumen/viz.lua in a Lua state instead of snapshot above) */
	bool (*lua_demo)(const char *scene, const char *opts);
} lml_viz_module;

/* Every C function of viz (the module's open_lua sets exactly these; the program knows the names
 * before the module loads: completion, and the message of a build without a window). */
#define LML_VIZ_FUNCTIONS                                                                           \
	"open", "close", "is_open", "show", "scene", "step", "seek", "play", "pause", "variant",        \
	    "snapshot", "pick", "layout", "state", "scenes", "colors", "pixel", "key", "pointer",      \
	    "redraw", "pump", "zoom", "pan", "_show_model", "_show_attention", "_show_rnn", "_show_detection", "_show_features", "_show_ddp", "_show_pipeline", "_show_gan2d", "_show_diffusion", "_show_samples", "_show_bang", "_show_dlp", "_show_passes", "_record", "plot", "follow", "clear", "due"

/* The program's side (viz_loader.c). The module, loaded now if it was not (NULL, with the reason
 * in lm_last_error(), when it cannot be: not built, or the file is missing). */
const lml_viz_module *lml_viz_load(void);
/* The module if it is loaded, else NULL (never loads it). */
const lml_viz_module *lml_viz_loaded(void);
/* fn(module) runs once, when the module loads (the program sets the window up then). */
void lml_viz_on_load(void (*fn)(const lml_viz_module *m));

#endif
