/*
 * kernel.c — `lumen --kernel IN_FD OUT_FD`: the Lua half of the Jupyter kernel. Its Python half
 * (lua/lumen/jupyter_kernel.py, a wrapper kernel on ipykernel that owns the wire protocol) starts
 * this process, writes requests to IN_FD and reads replies from OUT_FD; the process's own stdout
 * and stderr are pipes the wrapper forwards as stream messages as they come.
 *
 * Framing, both ways: a header line "KIND LENGTH\n" (requests; replies are "LENGTH\n") and LENGTH
 * bytes. Requests: execute, complete, inspect, is_complete (the body: a first line of numbers,
 * then the code), and shutdown. Replies are JSON objects written by lua/lumen/kernel.lua through
 * `_send`, after stdout and stderr are flushed, so a stream's text reaches the wrapper before the
 * result that follows it.
 *
 * The cell runs here, as the REPL runs a line: compiled by kernel.prepare, called through
 * app_docall (a SIGINT from the wrapper's interrupt raises "interrupted!" in Lua and stops C
 * operations), then kernel.results or kernel.error and kernel.done in calls of their own, so an
 * interrupt ends with the call it stopped. Between requests a SIGINT only sets a flag (dropped).
 * While it waits for a request the visualizer's tick runs every 16 ms (a window, where there is
 * a display, stays responsive). The process ends at end of input or when the wrapper dies
 * (PR_SET_PDEATHSIG).
 * Read next: lua/lumen/kernel.lua, lua/lumen/jupyter_kernel.py.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <lauxlib.h>

#include "app.h"

#define KERNEL_KEY "lumen.kernel"
#define MAX_REQUEST ((size_t)64 << 20) /* a cell of 64 MiB is a client's mistake */

static int out_fd = -1;

static bool write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* kernel._send(payload): stdout and stderr flushed first, then the frame. */
static int l_send(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	fflush(stdout);
	fflush(stderr);
	char head[32];
	int h = snprintf(head, sizeof head, "%zu\n", n);
	if (!write_all(out_fd, head, (size_t)h) || !write_all(out_fd, s, n))
		return luaL_error(L, "kernel: the Jupyter wrapper is gone (%s)", strerror(errno));
	return 0;
}

/* Waits for input on fd, calling the tick about every 16 ms meanwhile: a scene's window (where
 * there is a display) keeps answering between cells, as it does at the REPL's prompt. */
static void wait_input(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	while (poll(&p, 1, 16) == 0 || (p.revents == 0)) app_tick();
}

/* Reads one byte at a time up to '\n' (the header is short); false at end of input. */
static bool read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	wait_input(fd);
	for (;;) {
		char c;
		ssize_t r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR) continue; /* a Ctrl-C while idle */
		if (r <= 0) return false;
		if (c == '\n') break;
		if (n + 1 < cap) buf[n++] = c;
	}
	buf[n] = '\0';
	return true;
}

static bool read_body(int fd, char *p, size_t n)
{
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static bool push_kernel_fn(lua_State *L, const char *name)
{
	lua_getfield(L, LUA_REGISTRYINDEX, KERNEL_KEY);
	lua_getfield(L, -1, name);
	lua_remove(L, -2);
	if (lua_isfunction(L, -1)) return true;
	lua_pop(L, 1);
	return false;
}

/* Calls kernel.<name>(args already pushed: nargs of them) in a protected call of its own; an
 * error inside the kernel's own Lua (not the user's code) goes to stderr. */
static void call_kernel(lua_State *L, const char *name, int nargs)
{
	if (!push_kernel_fn(L, name)) {
		lua_pop(L, nargs);
		fprintf(stderr, APP_NAME ": kernel.%s is missing\n", name);
		return;
	}
	lua_insert(L, -nargs - 1);
	app_report(L, app_docall(L, nargs, 0));
}

static double now_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* execute: kernel.prepare(body) -> fn (or nil: it reported the problem); fn() through
 * app_docall; kernel.results(...) or kernel.error(msg); kernel.done(ok, wall, cpu). */
static void execute(lua_State *L, const char *body, size_t n)
{
	int base = lua_gettop(L);
	if (!push_kernel_fn(L, "prepare")) return;
	lua_pushlstring(L, body, n);
	int status = app_docall(L, 1, 1);
	if (status != LUA_OK) {
		app_report(L, status);
		lua_pushboolean(L, 0);
		lua_pushnumber(L, 0);
		lua_pushnumber(L, 0);
		call_kernel(L, "done", 3);
		lua_settop(L, base);
		return;
	}
	if (!lua_isfunction(L, -1)) { /* a syntax error, already sent */
		lua_settop(L, base);
		lua_pushboolean(L, 0);
		lua_pushnumber(L, 0);
		lua_pushnumber(L, 0);
		call_kernel(L, "done", 3);
		return;
	}
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	status = app_docall(L, 0, LUA_MULTRET);
	double wall = now_s(CLOCK_MONOTONIC) - w0, cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	bool ok = status == LUA_OK;
	if (ok) {
		int nres = lua_gettop(L) - base;
		call_kernel(L, "results", nres);
	} else {
		call_kernel(L, "error", 1);
	}
	lua_settop(L, base);
	lua_pushboolean(L, ok);
	lua_pushnumber(L, wall);
	lua_pushnumber(L, cpu);
	call_kernel(L, "done", 3);
	lua_settop(L, base);
}

int app_kernel_main(lua_State *L, int in, int out)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGTERM); /* the wrapper killed: this process goes too */
	if (getppid() == 1) return 1;
#endif
	out_fd = out;
	setvbuf(stdout, NULL, _IONBF, 0); /* print reaches the notebook as it happens */
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lumen.kernel");
	int status = app_docall(L, 1, 1);
	if (status != LUA_OK) return app_report(L, status), 1;
	lua_pushcfunction(L, l_send);
	lua_setfield(L, -2, "_send");
	lua_setfield(L, LUA_REGISTRYINDEX, KERNEL_KEY);
	app_signals_install();
	call_kernel(L, "start", 0);
	char head[128];
	char *buf = NULL;
	size_t cap = 0;
	while (read_line(in, head, sizeof head)) {
		app_sigint_take(); /* a Ctrl-C between cells stops nothing */
		char kind[32];
		unsigned long long len = 0;
		if (sscanf(head, "%31s %llu", kind, &len) != 2 || len > MAX_REQUEST) {
			fprintf(stderr, APP_NAME ": kernel: a malformed request header '%.60s' (expected 'KIND LENGTH')\n", head);
			break;
		}
		if (len + 1 > cap) {
			char *nb = realloc(buf, (size_t)len + 1);
			if (!nb) {
				fprintf(stderr, APP_NAME ": kernel: no memory for a request of %llu bytes\n", len);
				break;
			}
			buf = nb;
			cap = (size_t)len + 1;
		}
		if (!read_body(in, buf, (size_t)len)) break;
		buf[len] = '\0';
		if (strcmp(kind, "shutdown") == 0) break;
		if (strcmp(kind, "execute") == 0) {
			execute(L, buf, (size_t)len);
		} else {
			lua_pushstring(L, kind);
			lua_pushlstring(L, buf, (size_t)len);
			call_kernel(L, "request", 2);
		}
	}
	free(buf);
	return 0;
}
