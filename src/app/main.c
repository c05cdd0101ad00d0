/*
 * main.c — the lumen command line: the REPL (no script, or -i), scripts (`lumen FILE.lua
 * [args]`), -e chunks, the Lua test runner (--test), --version and --help.
 *
 * Options come first, as in lua.c: everything after the script name belongs to the script (the
 * global `arg`, and `...` in its chunk). An error prints its traceback and exits with status 1,
 * except before the REPL (-i), which starts anyway with the state as the error left it.
 * Read next: app.h, state.c, run.c, repl.c.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "app.h"

static void print_usage(FILE *out)
{
	fprintf(out,
	        "usage: " APP_NAME " [options] [script [args]]\n"
	        "  (no script)     the interactive REPL (:help there); with piped standard input,\n"
	        "                  each line is evaluated and its results printed, without prompts\n"
	        "  script          run a Lua file ('-' reads standard input); its arguments are in\n"
	        "                  the global 'arg' (arg[0] is the script) and in '...'\n"
	        "  -e CODE         run CODE (may be repeated; runs before the script)\n"
	        "  -i              enter the REPL after the -e chunks and the script\n"
	        "  --headless      no window: scenes render offscreen (viz.snapshot writes PNGs)\n"
	        "  --snapshot SCENE OUT.png [--step N] [--opts k=v,...]\n"
	        "                  render a scene (viz.scenes() lists them) offscreen to a PNG\n"
	        "  --test PATH...  run the Lua tests: every test_*.lua in each directory PATH (or\n"
	        "                  the file PATH); ends with 'N passed, N failed'\n"
	        "  --version, -v   print the version and the features of this build\n"
	        "  --help, -h      print this help\n"
	        "  --              stop handling options\n"
	        "Scripts see Lumen preloaded: lm (require 'lumen') and F (lm.nn.functional).\n");
}

/*
 * The options of docs/API.md that come with a module this build may not have: while the module's
 * file is absent, the option says so instead of "unknown option" (lua/lumen/init.lua's lm.planned
 * does the same for the names a script meets). Once the module lands, its option is handled above
 * this check and its row is no longer reached.
 */
static int planned_option(const char *a)
{
	static const char *const planned[][2] = {
		{"--lesson", "lesson"}, {"--check-lesson", "lesson"},
	};
	for (size_t i = 0; i < sizeof planned / sizeof planned[0]; i++) {
		if (strcmp(a, planned[i][0]) != 0) continue;
		char p[4096];
		snprintf(p, sizeof p, "%s/lumen/%s.lua", app_luadir(), planned[i][1]);
		if (access(p, R_OK) == 0) return 0; /* the module is there: not a planned option now */
		fprintf(stderr, APP_NAME ": %s is not built yet: it comes with Lumen's '%s' module "
		        "(docs/API.md), which this version does not have; `" APP_NAME " --help` lists "
		        "what works now\n", a, planned[i][1]);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int script = 0, tests = 0, nexec = 0, interactive = 0;
	int headless = 0;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			print_usage(stdout);
			return 0;
		}
		if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
			app_print_version(stdout);
			return 0;
		}
		if (strcmp(a, "--test") == 0) {
			tests = i + 1;
			if (tests >= argc) {
				fprintf(stderr, APP_NAME ": --test needs at least one PATH\n");
				return 1;
			}
			break;
		}
		if (strcmp(a, "-i") == 0) {
			interactive = 1;
			continue;
		}
		if (strcmp(a, "-e") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, APP_NAME ": -e needs an argument\n");
				print_usage(stderr);
				return 1;
			}
			nexec++;
			i++;
			continue;
		}
		if (strcmp(a, "--headless") == 0) {
			headless = 1;
			continue;
		}
		if (strcmp(a, "--snapshot") == 0) return app_snapshot_main(argc, argv, i);
		if (a[0] == '-' && a[1] != '\0') {
			if (planned_option(a)) return 1;
			fprintf(stderr, APP_NAME ": unknown option '%s'\n", a);
			print_usage(stderr);
			return 1;
		}
		break;
	}
	if (!tests && i < argc) script = i;
	if (!tests && !script && !nexec) interactive = 1;

	app_viz_init(headless);
	lua_State *L = app_newstate();
	if (!L) return 1;
	int status = 0;
	if (interactive && !tests && app_repl_prepare(L) != LUA_OK) {
		lua_close(L);
		return 1;
	}
	if (tests) {
		app_set_arg(L, argv, argc, tests - 1);
		status = app_run_tests(L, argv + tests, argc - tests);
	} else {
		app_set_arg(L, argv, argc, script ? script : 0);
		for (int k = 1; k < argc && k != script && status == 0; k++) {
			if (strcmp(argv[k], "--") == 0) break;
			if (strcmp(argv[k], "-e") == 0) {
				status = app_dostring(L, argv[k + 1], "=(command line)") != LUA_OK;
				k++;
			}
		}
		if (status == 0 && script) status = app_dofile(L, argv, argc, script) != LUA_OK;
		if (interactive) status = app_repl(L);
	}
	app_viz_finish(interactive);
	lua_close(L);
	return status;
}
