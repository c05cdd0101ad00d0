/*
 * repl.c — the interactive loop of `lumen` and `lumen -i FILE`: read a line, evaluate it as
 * lua.c does, print the results; commands after ':'.
 *
 * Design: lines come through edit.h (libedit on a terminal, fgets otherwise). A chunk is tried as
 * `return <chunk>` first, so expressions print; a syntax error that ends in <eof> asks for more
 * on the ".. " prompt; a trailing ';' keeps the results quiet; the first result goes to `_`.
 * Everything runs through app_docall (traceback, Ctrl-C); results are printed by lumen.repl's
 * show (tensors through their tostring). :time and the report of slow commands are timed here;
 * the other commands, completion, help and :who are Lua (lua/lumen/repl.lua).
 * Read next: edit.c, run.c (Ctrl-C), lua/lumen/repl.lua.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "app.h"
#include "lumen/cuda.h"
#include "edit.h"

#define REPL_KEY  "lumen.repl"  /* the registry field holding the lumen.repl table */
#define CHUNKNAME "=stdin"

#define C_PROMPT "\033[1;32m"
#define C_ERROR  "\033[31m"
#define C_DIM    "\033[2m"
#define C_RESET  "\033[0m"

typedef struct repl {
	lua_State *L;
	bool colour;  /* stdout takes colours */
	bool ecolour; /* stderr takes colours */
	char *chunk;  /* the lines of the chunk being read */
	size_t len, cap;
	bool timed; /* the chunk came after :time */
	bool expr;  /* the chunk continues an unfinished expression */
} repl;

enum { GO_ON, QUIT };

/* ---------------------------------------------------------------- helpers */

static bool colour_ok(int fd)
{
	const char *no = getenv("NO_COLOR"); /* https://no-color.org: present and not empty */
	if (no && no[0]) return false;
	const char *term = getenv("TERM");
	return isatty(fd) && term && term[0] && strcmp(term, "dumb") != 0;
}

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fmt_time(char *buf, size_t n, double s)
{
	if (s < 1e-3)
		snprintf(buf, n, "%.0f us", s * 1e6);
	else if (s < 1.0)
		snprintf(buf, n, "%.1f ms", s * 1e3);
	else
		snprintf(buf, n, "%.2f s", s);
}

/* Pushes lumen.repl[name] (a function) and returns true, or pushes nothing and returns false. */
static bool push_repl_fn(lua_State *L, const char *name)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, REPL_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		return false;
	}
	if (lua_getfield(L, -1, name) != LUA_TFUNCTION) {
		lua_pop(L, 2);
		return false;
	}
	lua_remove(L, -2);
	return true;
}

static void chunk_reset(repl *r)
{
	r->len = 0;
	r->timed = false;
	r->expr = false;
	if (r->chunk) r->chunk[0] = '\0';
}

static bool chunk_add(repl *r, const char *line)
{
	size_t n = strlen(line), need = r->len + n + 2;
	if (need > r->cap) {
		size_t cap = r->cap ? r->cap : 256;
		while (cap < need) cap *= 2;
		char *p = realloc(r->chunk, cap);
		if (!p) return false;
		r->chunk = p;
		r->cap = cap;
	}
	if (r->len) r->chunk[r->len++] = '\n';
	memcpy(r->chunk + r->len, line, n + 1);
	r->len += n;
	return true;
}

/* ---------------------------------------------------------------- errors */

/* A traceback is worth showing when some frame is neither C nor the typed chunk itself. */
static bool useful_frame(const char *l, size_t n)
{
	if (n >= 4 && strncmp(l, "[C]:", 4) == 0) return false;
	if (n >= 10 && memcmp(l + n - 10, "main chunk", 10) == 0) return false;
	return true;
}

/* Prints an error message (with its traceback) to stderr: the message in red, then the frames
 * below the REPL's own call, dimmed, when they say more than the message. */
static void print_error(repl *r, const char *msg)
{
	const char *tb = strstr(msg, "\nstack traceback:");
	int mlen = tb ? (int)(tb - msg) : (int)strlen(msg);
	fflush(stdout);
	/* the terminal echoed ^C where the cursor was: start a line of our own */
	if (isatty(STDIN_FILENO) && strstr(msg, "interrupted")) fputc('\n', stderr);
	fprintf(stderr, "%s%.*s%s\n", r->ecolour ? C_ERROR : "", mlen, msg, r->ecolour ? C_RESET : "");
	if (!tb) return;
	const char *frames = strchr(tb + 1, '\n');
	if (!frames) return;
	/* drop the last frame when it is the REPL's own call ("[C]: in ?") */
	const char *end = frames + strlen(frames);
	const char *last = end;
	while (last > frames && last[-1] != '\n') last--;
	if (strcmp(last, "\t[C]: in ?") == 0) end = last - 1;
	bool useful = false;
	for (const char *l = frames + 1; l < end;) {
		const char *e = memchr(l, '\n', (size_t)(end - l));
		if (!e) e = end;
		const char *s = l + strspn(l, "\t ");
		if (s < e && useful_frame(s, (size_t)(e - s))) useful = true;
		l = e + 1;
	}
	if (!useful) return;
	fprintf(stderr, "%sstack traceback:%.*s%s\n", r->ecolour ? C_DIM : "", (int)(end - frames),
	        frames, r->ecolour ? C_RESET : "");
}

static void report(repl *r, lua_State *L)
{
	const char *msg = lua_tostring(L, -1);
	print_error(r, msg ? msg : "(error object is not a string)");
	lua_pop(L, 1);
	fflush(stderr);
}

/* ---------------------------------------------------------------- evaluation */

static bool at_eof(lua_State *L, int status)
{
	size_t n;
	const char *msg = status == LUA_ERRSYNTAX ? lua_tolstring(L, -1, &n) : NULL;
	return msg && n >= 5 && strcmp(msg + n - 5, "<eof>") == 0;
}

/* Pushes the chunk compiled as `return <chunk>` (or its syntax error); returns the status. */
static int load_as_expression(repl *r)
{
	lua_State *L = r->L;
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, "return ");
	luaL_addlstring(&b, r->chunk, r->len);
	luaL_pushresult(&b);
	size_t n;
	const char *ret = lua_tolstring(L, -1, &n);
	int status = luaL_loadbuffer(L, ret, n, CHUNKNAME);
	lua_remove(L, -2);
	return status;
}

/* Compiles the chunk, as an expression when `return <chunk>` compiles. Returns LUA_OK (the
 * function pushed), a syntax error with its message pushed, or -1 when the chunk is incomplete
 * (nothing pushed): as lua.c, a statement whose error is at <eof>, and also an unfinished
 * expression (`1 +`), which lua.c rejects. */
static int load_chunk(repl *r)
{
	lua_State *L = r->L;
	int status = load_as_expression(r);
	if (status == LUA_OK) return LUA_OK;
	bool expr_eof = at_eof(L, status);
	lua_pop(L, 1);
	status = luaL_loadbuffer(L, r->chunk, r->len, CHUNKNAME);
	if (status == LUA_OK) return LUA_OK;
	bool stmt_eof = at_eof(L, status);
	if (expr_eof || stmt_eof) {
		lua_pop(L, 1);
		if (!stmt_eof) r->expr = true; /* read on as an expression */
		return -1;
	}
	if (r->expr) { /* the expression's message points at what went wrong */
		lua_pop(L, 1);
		status = load_as_expression(r);
	}
	return status;
}

/* Input ended inside a chunk (`for i = 1, 3 do` and no `end`): the chunk never ran, so say what
 * is unfinished with the compiler's message, as lua.c does ("'end' expected near <eof>"; the
 * expression's message for an unfinished expression, as load_chunk). False when no chunk was
 * pending. */
static bool report_unfinished(repl *r)
{
	if (r->len == 0) return false;
	lua_State *L = r->L;
	int status = r->expr ? load_as_expression(r) : luaL_loadbuffer(L, r->chunk, r->len, CHUNKNAME);
	if (status == LUA_OK) /* cannot happen: it was incomplete when its last line came */
		lua_pop(L, 1);
	else
		report(r, L);
	chunk_reset(r);
	return status != LUA_OK;
}

/* True when the chunk's last non-blank character is ';' (print nothing). */
static bool quiet_chunk(const repl *r)
{
	size_t n = r->len;
	while (n > 0 && strchr(" \t\r\n", r->chunk[n - 1])) n--;
	return n > 0 && r->chunk[n - 1] == ';';
}

/* GPU time around one command: CUDA events when the CUDA backend was loaded before it (a tensor
 * had been moved to the GPU); else, or when an event call fails, why not. */
typedef struct gpu_time {
	bool started, measured;
	double ms;
	char why[200];
} gpu_time;

static void gpu_time_start(gpu_time *g)
{
	memset(g, 0, sizeof *g);
	if (!lm_cuda_in_use()) return;
	g->started = lm_cuda_timer_start() == LM_OK;
	if (!g->started) {
		snprintf(g->why, sizeof g->why, "%s", lm_last_error());
		lm_clear_error();
	}
}

static void gpu_time_stop(gpu_time *g)
{
	if (g->started) {
		g->measured = lm_cuda_timer_stop(&g->ms) == LM_OK;
		if (!g->measured) {
			snprintf(g->why, sizeof g->why, "%s", lm_last_error());
			lm_clear_error();
		}
	} else if (!g->why[0]) {
		snprintf(g->why, sizeof g->why, "%s", lm_cuda_in_use()
		         ? "this command moved the first tensor to the GPU (the next ones are timed)"
		         : "nothing has run on the GPU (x:cuda() moves a tensor there)");
	}
}

/* Runs the function on the stack top; prints its results (unless quiet) and the time taken
 * (always after :time, else when it took more than a second), the GPU's apart. */
static void evaluate(repl *r, bool quiet)
{
	lua_State *L = r->L;
	int base = lua_gettop(L) - 1;
	gpu_time g;
	gpu_time_start(&g);
	double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	int status = app_docall(L, 0, LUA_MULTRET);
	double wall = clock_s(CLOCK_MONOTONIC) - w0, cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	gpu_time_stop(&g);
	if (status == LUA_OK) {
		int n = lua_gettop(L) - base;
		if (n > 0) {
			lua_pushvalue(L, base + 1);
			lua_setglobal(L, "_");
			if (!quiet && push_repl_fn(L, "show")) {
				lua_insert(L, base + 1);
				status = app_docall(L, n, 0);
			}
		}
	}
	if (status != LUA_OK) report(r, L);
	lua_settop(L, base);
	fflush(stdout);
	char w[32], c[32], gt[32];
	fmt_time(w, sizeof w, wall);
	fmt_time(c, sizeof c, cpu);
	fmt_time(gt, sizeof gt, g.ms / 1e3);
	if (r->timed) {
		printf("%swall %s, CPU %s (all threads); ", r->colour ? C_DIM : "", w, c);
		if (g.measured)
			printf("GPU %s (CUDA events on %s: its stream from the command's first work to its "
			       "last)", gt, lm_cuda_device_name());
		else
			printf("GPU not timed: %s", g.why);
		printf("%s\n", r->colour ? C_RESET : "");
	} else if (wall > 1.0) {
		printf("%s(took %s, CPU %s", r->colour ? C_DIM : "", w, c);
		if (g.measured) printf(", GPU %s", gt);
		printf(")%s\n", r->colour ? C_RESET : "");
	}
	fflush(stdout);
}

/* The chunk so far: evaluate it when complete, wait for more when not. */
static void run_chunk(repl *r)
{
	int status = load_chunk(r);
	if (status == -1) return; /* incomplete: the next line continues it */
	if (status != LUA_OK)
		report(r, r->L);
	else
		evaluate(r, quiet_chunk(r));
	chunk_reset(r);
}

/* :name rest — :quit and :time here, the others in lumen.repl.command. */
static int command(repl *r, const char *text)
{
	size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_");
	char name[32];
	snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), text);
	const char *rest = text + n;
	rest += strspn(rest, " \t");
	if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0 || strcmp(name, "exit") == 0)
		return QUIT;
	if (strcmp(name, "time") == 0) {
		if (!rest[0]) {
			printf("usage: :time EXPR  (or a statement; runs it and prints wall and CPU time)\n");
			return GO_ON;
		}
		if (!chunk_add(r, rest)) return GO_ON;
		r->timed = true;
		run_chunk(r);
		return GO_ON;
	}
	lua_State *L = r->L;
	if (!push_repl_fn(L, "command")) {
		fprintf(stderr, APP_NAME ": the REPL's Lua side (lumen.repl) is missing\n");
		return GO_ON;
	}
	lua_pushstring(L, name);
	lua_pushstring(L, rest);
	int status = app_docall(L, 2, 1);
	int act = GO_ON;
	if (status != LUA_OK)
		report(r, L);
	else {
		const char *res = lua_tostring(L, -1);
		if (res && strcmp(res, "quit") == 0) act = QUIT;
		lua_pop(L, 1);
	}
	fflush(stdout);
	return act;
}

static int handle_line(repl *r, const char *line)
{
	if (r->len == 0) {
		const char *p = line + strspn(line, " \t");
		if (!p[0]) return GO_ON;
		if (p[0] == ':' && p[1] != ':') return command(r, p + 1); /* '::label::' is Lua */
	}
	if (!chunk_add(r, line)) {
		fprintf(stderr, APP_NAME ": out of memory for the chunk\n");
		chunk_reset(r);
		return GO_ON;
	}
	run_chunk(r);
	return GO_ON;
}

/* ---------------------------------------------------------------- completion */

struct complete_args {
	const char *line;
	int start, end;
};

/* In a protected call: lumen.repl.complete(line, start, end) -> array of candidates. */
static int complete_call(lua_State *L)
{
	struct complete_args *a = lua_touserdata(L, 1);
	if (!push_repl_fn(L, "complete")) return 0;
	lua_pushstring(L, a->line);
	lua_pushinteger(L, a->start);
	lua_pushinteger(L, a->end);
	lua_call(L, 3, 1);
	return 1;
}

static char **complete(void *ud, const char *line, int start, int end)
{
	repl *r = ud;
	lua_State *L = r->L;
	int top = lua_gettop(L);
	struct complete_args a = {line, start, end};
	lua_pushcfunction(L, complete_call);
	lua_pushlightuserdata(L, &a);
	char **out = NULL;
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
		size_t n = (size_t)lua_rawlen(L, -1), k = 0;
		out = calloc(n + 1, sizeof *out);
		for (size_t i = 1; out && i <= n; i++) {
			if (lua_rawgeti(L, -1, (lua_Integer)i) == LUA_TSTRING) {
				char *s = strdup(lua_tostring(L, -1));
				if (s) out[k++] = s;
			}
			lua_pop(L, 1);
		}
	}
	lua_settop(L, top);
	return out;
}

/* ---------------------------------------------------------------- the loop */

/* In a protected call: lumen.repl.take_input(interrupted) -> the next line queued for the input
 * line (a lesson's :edit), or nil. */
static int take_input_call(lua_State *L)
{
	bool interrupted = lua_toboolean(L, 1);
	if (!push_repl_fn(L, "take_input")) return 0;
	lua_pushboolean(L, interrupted);
	lua_call(L, 1, 1);
	return 1;
}

/* Puts the next queued line, if any, into the coming prompt's input line. */
static void prefill_next(lua_State *L, bool interrupted)
{
	int top = lua_gettop(L);
	lua_pushcfunction(L, take_input_call);
	lua_pushboolean(L, interrupted);
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
		edit_prefill(lua_tostring(L, -1));
	lua_settop(L, top);
}

int app_repl_prepare(lua_State *L)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "lumen.repl");
	int status = app_docall(L, 1, 1);
	if (status != LUA_OK) return app_report(L, status);
	lua_setfield(L, LUA_REGISTRYINDEX, REPL_KEY);
	if (push_repl_fn(L, "init")) status = app_report(L, app_docall(L, 0, 0));
	return status;
}

int app_repl(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, REPL_KEY) != LUA_TTABLE && app_repl_prepare(L) != LUA_OK) {
		lua_pop(L, 1);
		return 1;
	}
	lua_pop(L, 1);
	repl r = {.L = L};
	app_signals_install();
	char history[PATH_MAX];
	const char *home = getenv("HOME");
	bool has_history = home && home[0] &&
	                   snprintf(history, sizeof history, "%s/.lumen_history", home) <
	                           (int)sizeof history;
	bool edited = edit_open(has_history ? history : NULL, complete, &r);
	r.colour = colour_ok(STDOUT_FILENO);
	r.ecolour = colour_ok(STDERR_FILENO);
	if (lua_getfield(L, LUA_REGISTRYINDEX, REPL_KEY) == LUA_TTABLE) {
		lua_pushboolean(L, r.colour);
		lua_setfield(L, -2, "colour");
		lua_pushboolean(L, edited);
		lua_setfield(L, -2, "editing");
	}
	lua_pop(L, 1);
	const char *prompt = "> ", *more = ".. ";
	if (edited && r.colour) {
		/* \001 ... \002 bracket what takes no room on the screen; libedit drops such a
		 * sequence at the very end of the prompt, so the reset comes before the space */
		prompt = "\001" C_PROMPT "\002>\001" C_RESET "\002 ";
		more = "\001" C_PROMPT "\002..\001" C_RESET "\002 ";
	}
	if (isatty(STDIN_FILENO)) {
		app_print_banner(stdout, r.colour);
		if (!edited)
			printf("(No line editing, history or completion: %s.)\n", edit_plain_reason());
	}
	int exit_status = 0;
	/* what the command line asked for first (lumen --lesson NAME sets lumen.repl.startup) */
	if (push_repl_fn(L, "startup") && app_docall(L, 0, 0) != LUA_OK) report(&r, L);
	fflush(stdout);
	for (;;) {
		char *line;
		if (edited) prefill_next(L, false);
		edit_result e = edit_read(r.len ? more : prompt, &line);
		if (e == EDIT_EOF) {
			/* a script piped in that stops inside a statement is an error, not a silent
			 * success: its last statement did not run */
			if (report_unfinished(&r)) exit_status = 1;
			break;
		}
		if (e == EDIT_INTERRUPTED) {
			chunk_reset(&r);
			if (edited) prefill_next(L, true); /* drops what :edit queued */
			continue;
		}
		edit_history_add(line);
		int act = handle_line(&r, line);
		free(line);
		if (act == QUIT) break;
	}
	edit_close();
	free(r.chunk);
	return exit_status;
}
