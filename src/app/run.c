/*
 * run.c — running Lua code for the program: the one SIGINT handler and the one Lua hook,
 * protected calls with a traceback, error reports, scripts with lua.c's `arg`, -e chunks, the
 * test runner, and the tick the REPL calls while it waits.
 *
 * Ctrl-C while Lua runs (inside app_docall): the handler calls lm_interrupt() so long C
 * operations stop (they fail with "interrupted"), and arms the hook, which raises "interrupted!"
 * at the next Lua call, return or instruction of the running coroutine; a second Ctrl-C within a
 * second ends the process. Outside app_docall (the REPL's prompt) a Ctrl-C only sets a flag
 * (app_sigint_take). Scripts have the handler during app_docall only; the REPL keeps it
 * (app_signals_install). Limit: a loop inside a coroutine other than the running state's main
 * one is not reached by the hook (Lua hooks are per coroutine); C operations still stop, and the
 * second Ctrl-C exits. Read next: main.c, repl.c.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "app.h"
#include "lua/lml.h"
#include "lumen/core.h"
#include "lumen/isa.h"

/* ---------------------------------------------------------------- Ctrl-C and the Lua hook */

static lua_State *volatile running;          /* the state app_docall runs, or NULL */
static volatile sig_atomic_t interrupting;   /* a Ctrl-C is being delivered to running */
static volatile sig_atomic_t idle_sigint;    /* a Ctrl-C outside app_docall (at the prompt) */
static volatile sig_atomic_t winched;        /* the terminal was resized */
static struct timespec first_press;          /* when the pending interrupt began */
static pthread_t main_thread;
static bool main_thread_known;

/*
 * The program's one Lua hook. The SIGINT handler arms it (every call, return and instruction):
 * it raises "interrupted!" and stays armed until app_docall returns, so a pcall that swallows the
 * error meets it again at its next instruction. Lua has one hook slot: the visualizer's event
 * pump, while Lua runs, belongs here too (arm this hook, call app_tick), never in a second hook.
 */
static volatile sig_atomic_t tick_due;       /* the live timer fired: pump the window (below) */

/* The hook the live tick found on the state (a debug.sethook count hook: a lesson check's budget,
 * a user's), put back after the tick instead of no hook at all. */
static lua_Hook saved_hook;
static lua_State *saved_on;
static int saved_mask, saved_count;

static void app_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	if (interrupting) {
		lua_sethook(L, app_hook, LUA_MASKCOUNT, 1);
		luaL_error(L, "interrupted!");
	}
	if (L == saved_on) {
		lua_sethook(L, saved_hook, saved_hook ? saved_mask : 0, saved_hook ? saved_count : 0);
		saved_hook = NULL;
		saved_on = NULL;
	} else {
		lua_sethook(L, NULL, 0, 0); /* a coroutine that an earlier interrupt reached */
	}
	if (tick_due) {
		tick_due = 0;
		app_tick(); /* the window's events; it runs no Lua */
	}
}

static double seconds_between(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

/* Async-signal-safe: flags, lm_interrupt, lua_sethook (documented as safe in a handler), and for
 * the second Ctrl-C within a second, write and the default action. */
static void on_sigint(int sig)
{
	int saved_errno = errno;
	if (main_thread_known && !pthread_equal(pthread_self(), main_thread)) {
		/* delivered to a worker thread (OpenMP, OpenBLAS): hand it to the Lua thread */
		pthread_kill(main_thread, sig);
		errno = saved_errno;
		return;
	}
	lua_State *L = running;
	if (!L) {
		idle_sigint = 1;
		errno = saved_errno;
		return;
	}
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (interrupting && seconds_between(first_press, t) < 1.0) {
		static const char msg[] = "\n" APP_NAME ": Ctrl-C twice within a second: exiting\n";
		ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
		(void)w;
		signal(sig, SIG_DFL);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		_exit(130);
	}
	first_press = t;
	interrupting = 1;
	lm_interrupt(); /* long C loops stop too */
	lua_sethook(L, app_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
	/* and the coroutine that runs now (a loop in coroutine.wrap, a kernel thread): hooks are per
	 * thread, the main state's would never run */
	lua_State *co = lml_running_thread();
	if (co && co != L) lua_sethook(co, app_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
	errno = saved_errno;
}

static void on_sigwinch(int sig)
{
	(void)sig;
	winched = 1;
}

/* flags: 0 for SIGINT, so a read at the prompt (or in Lua code) returns EINTR; SA_RESTART for
 * SIGWINCH, so resizing the window never fails a read of the user's code (poll, which the REPL
 * waits in, returns EINTR either way). */
static void set_handler(int sig, void (*fn)(int), int flags, struct sigaction *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	sigaction(sig, &sa, old);
}

void app_signals_install(void)
{
	main_thread = pthread_self();
	main_thread_known = true;
	set_handler(SIGINT, on_sigint, 0, NULL);
	set_handler(SIGWINCH, on_sigwinch, SA_RESTART, NULL);
}

bool app_sigint_take(void)
{
	if (!idle_sigint) return false;
	idle_sigint = 0;
	return true;
}

bool app_sigwinch_take(void)
{
	if (!winched) return false;
	winched = 0;
	return true;
}

/* ---------------------------------------------------------------- the tick */

static app_tick_fn tick_fn;
static void *tick_ud;

void app_set_tick(app_tick_fn fn, void *ud)
{
	tick_fn = fn;
	tick_ud = ud;
}

void app_tick(void)
{
	if (tick_fn) tick_fn(tick_ud);
}

/* ---------------------------------------------------------------- the live tick while Lua runs */

/*
 * While a window is open (app_tick_live(true)) and Lua runs, a timer signal every 40 ms arms the
 * one hook for the next instruction, and the hook calls app_tick. Between ticks no hook is set,
 * so Lua runs at full speed (a count hook set all the time costs a call per instruction in Lua
 * 5.4). The signal goes to the Lua thread only (SIGEV_THREAD_ID) and is restartable (SA_RESTART).
 * A long C operation is not interrupted: its window waits for it.
 * 40 ms, not the REPL's 16: while Lua runs, frames come 10 times a second at most (the viewer's
 * busy pump), so 25 ticks a second answer the window in time, and each tick (the signal, the
 * display server's queue read, ~50 us) is paid 25 times a second instead of 60 (bench/viz, the
 * MLP epoch with --viz: 1.019x -> 1.013x the epoch without).
 */
#define LIVE_SIGNAL (SIGRTMIN + 2)
#define LIVE_PERIOD_NS 40000000L

static volatile sig_atomic_t live;
static timer_t live_timer;
static bool live_timer_made;

static void on_live_tick(int sig)
{
	int saved_errno = errno;
	if (main_thread_known && !pthread_equal(pthread_self(), main_thread)) {
		pthread_kill(main_thread, sig);
	} else {
		lua_State *L = running;
		if (L && live && !interrupting) {
			tick_due = 1;
			lua_Hook h = lua_gethook(L);
			if (h != app_hook) { /* keep the state's own hook for after the tick */
				saved_on = L;
				saved_hook = h;
				saved_mask = lua_gethookmask(L);
				saved_count = lua_gethookcount(L);
			}
			lua_sethook(L, app_hook, LUA_MASKCOUNT, 1);
		}
	}
	errno = saved_errno;
}

static void live_timer_set(bool on)
{
	if (!live_timer_made) {
		if (!on) return;
		/* to the Lua thread itself: OpenMP and BLAS workers waiting in the loop are not woken */
		struct sigevent ev;
		memset(&ev, 0, sizeof ev);
		ev.sigev_notify = SIGEV_THREAD_ID;
		ev._sigev_un._tid = gettid();
		ev.sigev_signo = LIVE_SIGNAL;
		set_handler(LIVE_SIGNAL, on_live_tick, SA_RESTART, NULL);
		if (timer_create(CLOCK_MONOTONIC, &ev, &live_timer) != 0) return; /* no pumping, no harm */
		live_timer_made = true;
	}
	struct itimerspec it;
	memset(&it, 0, sizeof it);
	if (on) {
		it.it_value.tv_nsec = LIVE_PERIOD_NS;
		it.it_interval.tv_nsec = LIVE_PERIOD_NS;
	}
	timer_settime(live_timer, 0, &it, NULL);
}

bool app_lua_running(void) { return running != NULL; }

void app_tick_live(bool on)
{
	live = on;
	if (running) live_timer_set(on); /* opened or closed while a call runs */
}

/* ---------------------------------------------------------------- protected calls */

/* The message handler: the message (or a description of a non-string error) plus a traceback. */
static int traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int app_docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, traceback);
	lua_insert(L, base);
	if (!main_thread_known) {
		main_thread = pthread_self();
		main_thread_known = true;
	}
	lua_State *outer = running;
	if (!outer) {
		interrupting = 0;
		lm_interrupt_clear(); /* a stale request must not stop this call */
	}
	struct sigaction old;
	set_handler(SIGINT, on_sigint, 0, &old);
	running = L;
	if (!outer && live) live_timer_set(true);
	int status = lua_pcall(L, narg, nres, base);
	if (!outer && live_timer_made) live_timer_set(false);
	running = outer;
	sigaction(SIGINT, &old, NULL);
	if (!outer) {
		/* the interrupt ends with the call that received it */
		lua_sethook(L, NULL, 0, 0);
		saved_hook = NULL;
		saved_on = NULL;
		interrupting = 0;
		tick_due = 0;
		lm_interrupt_clear();
	}
	lua_remove(L, base);
	return status;
}

int app_report(lua_State *L, int status)
{
	if (status != LUA_OK) {
		const char *msg = lua_tostring(L, -1);
		fprintf(stderr, "%s: %s\n", APP_NAME, msg ? msg : "(error object is not a string)");
		fflush(stderr);
		lua_pop(L, 1);
	}
	return status;
}

/* ---------------------------------------------------------------- chunks and scripts */

int app_dostring(lua_State *L, const char *code, const char *chunkname)
{
	int status = luaL_loadbuffer(L, code, strlen(code), chunkname);
	if (status == LUA_OK) status = app_docall(L, 0, 0);
	return app_report(L, status);
}

void app_set_arg(lua_State *L, char **argv, int argc, int script)
{
	/* every run passes here once: the place to say that LUMEN_ISA could not be followed */
	if (lm_isa_warning()) fprintf(stderr, APP_NAME ": warning: %s\n", lm_isa_warning());
	lua_createtable(L, argc - script > 0 ? argc - script : 0, script + 1);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

int app_dofile(lua_State *L, char **argv, int argc, int script)
{
	const char *name = argv[script];
	if (strcmp(name, "-") == 0) name = NULL; /* stdin */
	int status = luaL_loadfile(L, name);
	if (status == LUA_OK) {
		int n = argc - script - 1;
		luaL_checkstack(L, n + 1, "too many arguments to the script");
		for (int i = 1; i <= n; i++) lua_pushstring(L, argv[script + i]);
		status = app_docall(L, n, 0);
	}
	return app_report(L, status);
}

int app_run_tests(lua_State *L, char **paths, int n)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lumen.test");
	int status = app_docall(L, 1, 1);
	if (app_report(L, status) != LUA_OK) return 1;
	lua_getfield(L, -1, "main");
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushstring(L, paths[i]);
		lua_rawseti(L, -2, i + 1);
	}
	status = app_docall(L, 1, 1);
	if (app_report(L, status) != LUA_OK) return 1;
	int failed = (int)lua_tointeger(L, -1);
	lua_pop(L, 2);
	return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- version */

void app_print_version(FILE *out)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	fprintf(out, "Lumen %s (%s)\n", bi.version, LUA_RELEASE);
	fprintf(out, "  BLAS: %s, %s threading\n", bi.blas, bi.blas_threading);
	fprintf(out, "  OpenMP: %s, %d threads\n", bi.openmp ? "yes" : "no", lm_get_num_threads());
	fprintf(out, "  SIMD: %s\n  CPU: %s\n", lm_isa_describe(), lm_cpu_model());
	if (lm_isa_warning()) fprintf(out, "  warning: %s\n", lm_isa_warning());
	fprintf(out, "  CUDA: %s\n", bi.cuda_built ? "yes (built; loaded on first use)" : "no (not built)");
	fprintf(out, "  SDL: %s\n", app_viz_description());
	fprintf(out, "  Lua library: %s\n", app_luadir());
	fprintf(out, "  compiler: %s%s\n", bi.compiler, bi.sanitize ? ", ASan+UBSan" : "");
	if (bi.threading_warning) fprintf(out, "  warning: %s\n", bi.threading_warning);
}

void app_print_banner(FILE *out, bool colour)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	fprintf(out, "%sLumen %s%s%s (%s; %s %s, %d threads; SIMD %s; CUDA %s; visualizer %s)\n",
	        colour ? "\033[1m" : "", bi.version, bi.sanitize ? " [ASan+UBSan]" : "",
	        colour ? "\033[0m" : "", LUA_RELEASE,
	        bi.blas, bi.blas_threading, lm_get_num_threads(), lm_isa_name(lm_isa_active()),
	        bi.cuda_built ? "module built, loaded on first use" : "not built",
	        app_viz_description()[0] == 'y' ? "built (viz.show)" : "not built");
	fprintf(out, "Type :help for help, :help NAME for a function (:help lm.zeros); Tab completes; "
	             "Ctrl-C interrupts; Ctrl-D or :quit leaves.\n");
	if (bi.threading_warning) fprintf(out, "warning: %s\n", bi.threading_warning);
}
