/*
 * main.c — the lumen command line: the REPL (no script, or -i), scripts (`lumen FILE.lua
 * [args]`), -e chunks, the Lua test runner (--test), lessons (--lesson, --check-lesson),
 * --version and --help.
 *
 * Options come first, as in lua.c: everything after the script name belongs to the script (the
 * global `arg`, and `...` in its chunk). An error prints its traceback and exits with status 1,
 * except before the REPL (-i), which starts anyway with the state as the error left it.
 * Read next: app.h, state.c, run.c, repl.c.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
	        "  --lesson NAME   the REPL with a lesson open where you stopped (:lessons there\n"
	        "                  lists them; :help lesson)\n"
	        "  --check-lesson FILE...\n"
	        "                  check lesson files as the tests do (fields, code, scenes offscreen,\n"
	        "                  exercises); docs/lessons.md is the format\n"
	        "  --lesson-notebook NAME OUT.ipynb [--lang en|zh]\n"
	        "                  write a lesson as a Jupyter notebook (text, code and checked\n"
	        "                  exercise cells)\n"
	        "  --install-jupyter-kernel [--user | --prefix P]\n"
	        "                  install the Jupyter kernel 'lumen' (\"Lumen (Lua)\"); default --user\n"
	        "  --kernel IN_FD OUT_FD\n"
	        "                  the Lua side of that kernel (its Python wrapper starts it)\n"
	        "  --snapshot SCENE OUT.png [--step N] [--opts k=v,...]\n"
	        "                  render a scene (viz.scenes() lists them) offscreen to a PNG\n"
	        "  --test PATH...  run the Lua tests: every test_*.lua in each directory PATH (or\n"
	        "                  the file PATH); ends with 'N passed, N failed'\n"
	        "  --version, -v   print the version and the features of this build\n"
	        "  --ops           print the op table: every op, its backward rule, the device loop it\n"
	        "                  runs and the dtypes the cpu and cuda devices run it for\n"
	        "  --help, -h      print this help\n"
	        "  --              stop handling options\n"
	        "Scripts see Lumen preloaded: lm (require 'lumen') and F (lm.nn.functional).\n");
}

/*
 * --lesson NAME and --check-lesson FILE... go to the lesson runner (lua/lumen/lesson.lua):
 * lesson._cli_lesson(name) checks the name (nearest names when unknown) and opens the lesson when
 * the REPL starts; lesson._check_file(path) checks a file as the lesson tests do. Both return the
 * exit status.
 */
static int lesson_call(lua_State *L, const char *fn, const char *arg)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lesson");
	if (app_docall(L, 1, 1) != LUA_OK) return app_report(L, LUA_ERRRUN), 1;
	lua_getfield(L, -1, fn);
	lua_remove(L, -2);
	lua_pushstring(L, arg);
	if (app_docall(L, 1, 1) != LUA_OK) return app_report(L, LUA_ERRRUN), 1;
	int rc = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 1;
	lua_pop(L, 1);
	return rc;
}

/* --install-jupyter-kernel and --lesson-notebook: lumen.kernel's install(opts) and
 * notebook(name, out, lang), which return the exit status. argv[i] is the option. */
static int kernel_tool(int argc, char **argv, int i)
{
	app_viz_init(true);
	lua_State *L = app_newstate();
	if (!L) return 1;
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lumen.kernel");
	int rc = 1;
	if (app_docall(L, 1, 1) != LUA_OK) {
		app_report(L, LUA_ERRRUN);
		goto done;
	}
	bool install = strcmp(argv[i], "--install-jupyter-kernel") == 0;
	lua_getfield(L, -1, install ? "install" : "notebook_cli");
	lua_newtable(L); /* the arguments after the option */
	for (int k = i + 1; k < argc; k++) {
		lua_pushstring(L, argv[k]);
		lua_rawseti(L, -2, k - i);
	}
	if (app_docall(L, 1, 1) != LUA_OK) {
		app_report(L, LUA_ERRRUN);
		goto done;
	}
	rc = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 1;
done:
	app_viz_finish(false);
	lua_close(L);
	return rc;
}

/* --kernel IN_FD OUT_FD: the Lua side of the Jupyter kernel (kernel.c). */
static int kernel_main(int argc, char **argv, int i)
{
	char *e1 = NULL, *e2 = NULL;
	long in = i + 2 < argc ? strtol(argv[i + 1], &e1, 10) : -1;
	long out = i + 2 < argc ? strtol(argv[i + 2], &e2, 10) : -1;
	if (in < 0 || out < 0 || *e1 || *e2 || in > INT_MAX || out > INT_MAX) {
		fprintf(stderr, APP_NAME ": --kernel needs two file descriptors, IN_FD OUT_FD (the Jupyter "
		        "wrapper passes them; " APP_NAME " --install-jupyter-kernel installs the kernel)\n");
		return 1;
	}
	/* no display: scenes render offscreen and reach the notebook as PNGs */
	if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) setenv("SDL_VIDEODRIVER", "offscreen", 0);
	app_viz_init(false);
	lua_State *L = app_newstate();
	if (!L) return 1;
	int rc = app_repl_prepare(L) == LUA_OK ? app_kernel_main(L, (int)in, (int)out) : 1;
	app_viz_finish(false);
	lua_close(L);
	return rc;
}

/* One file of --check-lesson, in this process (a child of check_lessons_main): 0, 1 with its
 * problems printed. Writes "done" to fd when the check itself finished (the parent then trusts
 * the status; without it the lesson ended the process: os.exit, a crash). */
static int check_one_lesson(const char *path, int fd)
{
	app_viz_init(true);
	lua_State *L = app_newstate();
	if (!L) return 1;
	int rc = lesson_call(L, "_check_file", path);
	fflush(stdout);
	fflush(stderr);
	if (write(fd, "done", 4) != 4) rc = 1;
	app_viz_finish(false);
	lua_close(L);
	return rc;
}

/* Seconds a lesson file's check may take (LUMEN_CHECK_LESSON_TIMEOUT, default 600). */
static double check_timeout(void)
{
	const char *e = getenv("LUMEN_CHECK_LESSON_TIMEOUT");
	double t = e ? atof(e) : 0;
	return t > 0 ? t : 600;
}

/*
 * lumen --check-lesson FILE...: every file checked offscreen, each in a process of its own, so
 * that a lesson that calls os.exit, loops, crashes or changes process-wide state is reported as
 * such and the files after it are still checked. 1 when one has a problem.
 */
static int check_lessons_main(int argc, char **argv, int i)
{
	if (i + 1 >= argc) {
		fprintf(stderr, APP_NAME ": --check-lesson needs a lesson file (lessons/<course>/<NN>-<slug>.lua)\n");
		return 1;
	}
	int rc = 0;
	for (int k = i + 1; k < argc; k++) {
		const char *path = argv[k];
		struct stat sb;
		if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
			fprintf(stderr, "%s: %s: give a lesson file (lessons/<course>/<NN>-<slug>.lua)\n", path,
			        stat(path, &sb) != 0 ? strerror(errno) : S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
			rc = 1;
			continue;
		}
		int p[2];
		fflush(stdout);
		fflush(stderr);
		if (pipe(p) != 0) return fprintf(stderr, APP_NAME ": pipe: %s\n", strerror(errno)), 1;
		pid_t pid = fork();
		if (pid < 0) return fprintf(stderr, APP_NAME ": fork: %s\n", strerror(errno)), 1;
		if (pid == 0) {
			close(p[0]);
			_exit(check_one_lesson(path, p[1]));
		}
		close(p[1]);
		/* wait for the child's word (or its end), within the time limit */
		char buf[8];
		size_t got = 0;
		double limit = check_timeout();
		struct timespec t0, now;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		bool timed_out = false;
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			double left = limit - ((double)(now.tv_sec - t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - t0.tv_nsec));
			if (left <= 0) {
				timed_out = true;
				break;
			}
			struct pollfd pf = {.fd = p[0], .events = POLLIN};
			int r = poll(&pf, 1, left > 1 ? 1000 : (int)(left * 1000) + 1);
			if (r < 0 && errno == EINTR) continue;
			if (r < 0) break;
			if (r == 0) continue;
			ssize_t n = read(p[0], buf + got, sizeof buf - 1 - got);
			if (n < 0 && errno == EINTR) continue;
			if (n <= 0) break; /* the child is gone (or closed the pipe) */
			got += (size_t)n;
			if (got >= 4) break;
		}
		close(p[0]);
		if (timed_out) kill(pid, SIGKILL);
		int status = 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
		if (timed_out) {
			fprintf(stderr, "%s: the check was still running after %g s and was stopped (an endless "
			        "loop in the lesson? LUMEN_CHECK_LESSON_TIMEOUT sets the limit)\n", path, limit);
			rc = 1;
		} else if (got < 4 || memcmp(buf, "done", 4) != 0) {
			if (WIFSIGNALED(status))
				fprintf(stderr, "%s: the check ended early, killed by signal %d (%s)\n", path,
				        WTERMSIG(status), strsignal(WTERMSIG(status)));
			else
				fprintf(stderr, "%s: the check ended early with exit status %d: the lesson ended the "
				        "process (os.exit?) before every step was checked\n", path,
				        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			rc = 1;
		} else {
			rc |= WIFEXITED(status) ? WEXITSTATUS(status) != 0 : 1;
		}
	}
	return rc;
}

/*
 * OpenMP's idle threads spin for a while after each parallel region before they sleep (libgomp:
 * GOMP_SPINCOUNT, 300,000 rounds by default). When other programs load the cores, those spins take
 * the time the thread with the work needs: small models (a 2-D GAN, a lesson's MLP) trained 5-30x
 * slower on 2 threads than on 1 under load. libgomp reads its environment once, when it is loaded,
 * before main: so when the user set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT, lumen asks for
 * passive waiting and starts itself again (execv of /proc/self/exe with the same arguments), once —
 * the variable it set marks the second start. Measured here (one core kept busy by another
 * program; idle): a 2-D GAN step 1.02 ms passive against 12.1 ms with libgomp's default spin and
 * 8.9 with a spin of 10,000 (idle: 1.11, 1.12, 1.27); a DCGAN step 236 ms against 417 (idle: 129,
 * 120) — waiting passively costs nothing measurable idle. docs/architecture.md ("Threads").
 */
static void passive_openmp_waits(char **argv)
{
#ifdef _OPENMP
	if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;
	if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
	execv("/proc/self/exe", argv);
	/* no re-exec (no /proc): libgomp keeps its default spin */
#else
	(void)argv;
#endif
}

int main(int argc, char **argv)
{
	passive_openmp_waits(argv);
	int script = 0, tests = 0, nexec = 0, interactive = 0;
	int headless = 0;
	const char *lesson = NULL;
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
		if (strcmp(a, "--ops") == 0) {
			app_print_ops(stdout);
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
		if (strcmp(a, "--check-lesson") == 0) return check_lessons_main(argc, argv, i);
		if (strcmp(a, "--kernel") == 0) return kernel_main(argc, argv, i);
		if (strcmp(a, "--install-jupyter-kernel") == 0 || strcmp(a, "--lesson-notebook") == 0)
			return kernel_tool(argc, argv, i);
		if (strcmp(a, "--lesson") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, APP_NAME ": --lesson needs a lesson's name (" APP_NAME
				        " -e 'print(table.concat(lesson.list(), \" \"))' lists them)\n");
				return 1;
			}
			lesson = argv[++i];
			interactive = 1;
			continue;
		}
		if (a[0] == '-' && a[1] != '\0') {
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
		if (lesson && lesson_call(L, "_cli_lesson", lesson) != 0) interactive = 0, status = 1;
		if (interactive) status = app_repl(L);
	}
	/* lm._at_exit(status), when a module set one (lumen.dist: finalize MPI, or stop the other
	 * ranks after an error) */
	lua_getglobal(L, "lm");
	if (lua_istable(L, -1) && lua_getfield(L, -1, "_at_exit") == LUA_TFUNCTION) {
		lua_pushinteger(L, status);
		app_report(L, app_docall(L, 1, 0));
		lua_pop(L, 1);
	} else {
		lua_pop(L, lua_istable(L, -1) ? 2 : 1);
	}
	app_viz_finish(interactive);
	lua_close(L);
	return status;
}
