/*
 * test_repl.c — the REPL as a user meets it: `lumen` under a pseudo-terminal (term.h), keys
 * typed, assertions on what the screen shows.
 *
 * Each test starts the built program (LUMEN_EXE, set by CMakeLists.txt) in a fresh temporary
 * HOME and working directory, TERM=xterm, NO_COLOR=1 except in the colour test. Every step
 * waits for what it expects (a line, the prompt) with a generous deadline, so a loaded 2-core
 * machine or a sanitizer build only makes it slower. The one fixed pause lets `while true do
 * end` start before Ctrl-C, and the Ctrl-C is repeated if it was too early.
 * Read next: term.h, src/app/repl.c, tests/repl/test_piped.lua (piped input, help, completion).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "term.h"

#ifndef LUMEN_EXE
#error "LUMEN_EXE (the path of the lumen program) must be defined by the build"
#endif

#define WAIT 60.0 /* seconds: generous, for sanitizer builds on a busy machine */

static term T;
static char dir[64];
static int mark; /* the line of the last command: its output comes after it */

static int history_kind; /* 0: none yet; 1: a FIFO at ~/.lumen_history; 2: a symlink to /dev/zero */

static void start(const char *colour_env)
{
	snprintf(dir, sizeof dir, "/tmp/lumen-repl-XXXXXX");
	if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
	char hist[128];
	snprintf(hist, sizeof hist, "%s/.lumen_history", dir);
	if (history_kind == 1 && mkfifo(hist, 0600) != 0) fail_msg("mkfifo failed");
	if (history_kind == 2 && symlink("/dev/zero", hist) != 0) fail_msg("symlink failed");
	static char home[96];
	snprintf(home, sizeof home, "HOME=%s", dir);
	const char *env[] = {home, "TERM=xterm", colour_env, NULL};
	char *argv[] = {LUMEN_EXE, NULL};
	if (!term_start(&T, argv, env, dir)) fail_msg("cannot start %s", LUMEN_EXE);
}

static int setup(void **state)
{
	(void)state;
	start("NO_COLOR=1");
	return 0;
}

/* The history file a FIFO or a symlink to /dev/zero: the REPL starts (it blocked in open(), or
 * read for ever), says once that it keeps no history, and leaves the file as it was (issue 29.2). */
static int setup_fifo_history(void **state)
{
	(void)state;
	history_kind = 1;
	start("NO_COLOR=1");
	history_kind = 0;
	return 0;
}

static int setup_zero_history(void **state)
{
	(void)state;
	history_kind = 2;
	start("NO_COLOR=1");
	history_kind = 0;
	return 0;
}

static int setup_colour(void **state)
{
	(void)state;
	start("NO_COLOR");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	term_close(&T);
	char p[160];
	static const char *const files[] = {".lumen_history", "answer.lua", NULL};
	for (int i = 0; files[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
	return 0;
}

static void failed(const char *what, const char *detail)
{
	term_dump(&T, stderr);
	fail_msg("%s: %s", what, detail);
}

/* Waits for the prompt (nothing typed) on a line after the last command. */
static void prompt(const char *p)
{
	if (term_wait_prompt(&T, mark + 1, p, WAIT) < 0) failed("no prompt", p);
}

/* Types a line (Enter included) at the prompt. */
static void type(const char *line)
{
	mark = term_cursor_line(&T);
	term_send(&T, line);
	term_send(&T, "\r");
}

/* The output after the last command has a line that contains (exact: is) text. */
static void expect(const char *text, bool exact)
{
	if (term_wait_line(&T, mark + 1, text, exact, WAIT) < 0) failed("missing", text);
}

/* Types line, expects a line that is exactly result, then the prompt. */
static void eval(const char *line, const char *result)
{
	type(line);
	expect(result, true);
	prompt("> ");
}

/* The cursor's line is exactly text (after completion, before Enter). */
static void expect_edit_line(const char *text)
{
	double end = term_now() + WAIT;
	while (strcmp(term_line(&T, term_cursor_line(&T)), text) != 0) {
		if (term_now() > end || term_pump(&T, 20) < 0) failed("edit line is not", text);
	}
}

static void test_session(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	if (term_find(&T, 0, "Lumen ", false) < 0 || term_find(&T, 0, ":help", false) < 0)
		failed("banner", "no version line or no help hint");
	/* a multi-line function, then a call */
	type("function sq(x)");
	prompt(".. ");
	type("  return x * x");
	prompt(".. ");
	type("end");
	prompt("> ");
	eval("sq(7)", "49");
	eval("_ + 1", "50");
	/* an expression with several results, a tensor */
	eval("1, 'a', nil", "1       a       nil");
	type("lm.ones(2, 3):sum()");
	expect("6.", true);
	expect("[float32 tensor of shape [] on cpu]", true);
	prompt("> ");
	/* a trailing ';' prints nothing: the prompt is on the very next line */
	type("sq(2);");
	prompt("> ");
	if (term_cursor_line(&T) != mark + 1) failed("';' printed something", "");
	/* a bad call: the message, the prompt, and the state is intact */
	type("lm.zeros(-1)");
	expect("lm.zeros: size 1 must be a non-negative integer, got -1", false);
	prompt("> ");
	type("error('boom')");
	expect("stdin:1: boom", true);
	prompt("> ");
	eval("sq(3)", "9");
	type(":quit");
	if (!term_wait_exit(&T, WAIT)) failed(":quit", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
}

static void test_interrupt(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	type("while true do end");
	if (!term_wait_cursor_past(&T, mark + 1, WAIT)) failed("the loop line", "not accepted");
	term_sleep(0.2); /* let the loop start; a Ctrl-C before it would only clear the prompt */
	int got = -1;
	for (int i = 0; i < 3 && got < 0; i++) {
		term_send(&T, "\003");
		got = term_wait_line(&T, mark + 1, "interrupted!", false, i < 2 ? 5.0 : WAIT);
	}
	if (got < 0) failed("Ctrl-C", "no 'interrupted!'");
	prompt("> ");
	eval("40 + 2", "42");
	/* a loop that swallows errors with pcall still stops */
	type("for i = 1, 1e12 do pcall(function() while true do end end) end");
	if (!term_wait_cursor_past(&T, mark + 1, WAIT)) failed("the pcall loop", "not accepted");
	term_sleep(0.2);
	got = -1;
	for (int i = 0; i < 3 && got < 0; i++) {
		term_send(&T, "\003");
		got = term_wait_line(&T, mark + 1, "interrupted!", false, i < 2 ? 5.0 : WAIT);
	}
	if (got < 0) failed("Ctrl-C in pcall", "no 'interrupted!'");
	prompt("> ");
	eval("1 + 2", "3");
	/* Ctrl-C at the prompt drops what was typed */
	mark = term_cursor_line(&T);
	term_send(&T, "abc");
	expect_edit_line("> abc");
	term_send(&T, "\003");
	prompt("> ");
	eval("6 * 7", "42");
	/* ... and at the ".." prompt drops the unfinished chunk */
	type("function f()");
	prompt(".. ");
	term_send(&T, "\003");
	prompt("> ");
	eval("7 * 7", "49");
	/* Ctrl-D leaves */
	term_send(&T, "\004");
	if (!term_wait_exit(&T, WAIT)) failed("Ctrl-D", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
	/* the history was written to $HOME/.lumen_history */
	char p[160], buf[4096] = {0};
	snprintf(p, sizeof p, "%s/.lumen_history", dir);
	FILE *f = fopen(p, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "40"));
}

static void test_double_interrupt(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	/* a C call that does not look at the interrupt (Lua's string.rep of a gigabyte): the hook
	 * waits for it to return, and a second Ctrl-C within a second ends the program (loops in
	 * Lua, coroutines included, stop at the first: tests/lua/test_interrupt.lua) */
	type("for i = 1, 100 do local s = string.rep('x', 1 << 30) end");
	if (!term_wait_cursor_past(&T, mark + 1, WAIT)) failed("the loop line", "not accepted");
	term_sleep(0.2);
	term_send(&T, "\003");
	term_sleep(0.05);
	term_send(&T, "\003");
	if (!term_wait_exit(&T, WAIT)) failed("two Ctrl-C", "the program did not end");
	assert_true(WIFSIGNALED(T.status) && WTERMSIG(T.status) == SIGINT);
	assert_true(term_find(&T, mark, "Ctrl-C twice within a second", false) >= 0);
}

static void test_completion(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	/* a table field: lm.ze<Tab> completes the common part, a second Tab lists */
	term_send(&T, "lm.ze\t");
	expect_edit_line("> lm.zeros");
	term_send(&T, "\t");
	expect("lm.zeros_like", false);
	expect_edit_line("> lm.zeros");
	mark = term_cursor_line(&T);
	term_send(&T, "(3):numel()\r");
	expect("3", true);
	prompt("> ");
	/* a method of a value */
	type("x = lm.ones(2)");
	prompt("> ");
	term_send(&T, "x:matm\t");
	expect_edit_line("> x:matmul");
	mark = term_cursor_line(&T);
	term_send(&T, "(x)\r");
	expect("2.", true);
	prompt("> ");
	term_send(&T, "x:ma\t\t");
	expect("masked_fill", false);
	expect("x:max", false);
	term_send(&T, "\003");
	prompt("> ");
	/* a global, a REPL command, a file name inside a string */
	term_send(&T, "coroutine.wr\t");
	expect_edit_line("> coroutine.wrap");
	term_send(&T, "\003");
	prompt("> ");
	term_send(&T, ":he\t");
	expect_edit_line("> :help");
	mark = term_cursor_line(&T);
	term_send(&T, " lm.ones\r");
	expect("lm.ones(d1, d2", false);
	prompt("> ");
	char p[160];
	snprintf(p, sizeof p, "%s/answer.lua", dir);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("return 6 * 7\n", f);
	fclose(f);
	term_send(&T, "dofile('ans\t");
	expect_edit_line("> dofile('answer.lua");
	mark = term_cursor_line(&T);
	term_send(&T, "')\r");
	expect("42", true);
	prompt("> ");
}

static void test_commands(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	type(":help lm.zeros");
	expect("lm.zeros(d1, d2, ... [, {dtype=, requires_grad=, device=}]) -> Tensor", true);
	expect("filled with zeros", false);
	prompt("> ");
	type(":help nn.Linear");
	expect("nn.Linear(in, out", false);
	prompt("> ");
	type(":time lm.ones(100, 100):matmul(lm.ones(100, 100)):sum()");
	expect("1000000.", true);
	expect("GPU not timed: nothing has run on the GPU", false);
	if (term_find(&T, mark + 1, "wall ", false) < 0 || term_find(&T, mark + 1, "CPU ", false) < 0)
		failed(":time", "no wall or CPU time");
	prompt("> ");
	type("w = lm.zeros(3, 4, {dtype='float64'})");
	prompt("> ");
	type(":who");
	expect("float64 [3, 4]", false);
	expect("96 B", false);
	prompt("> ");
	type(":mem");
	expect("tensor memory:", false);
	expect("peak", false);
	prompt("> ");
	/* the lesson commands reach the runner (tests/repl/test_lesson_repl.c drives it further) */
	static const char *const lessons[] = {":next", ":prev", ":run", ":check", ":hint", ":where"};
	for (size_t i = 0; i < sizeof lessons / sizeof lessons[0]; i++) {
		type(lessons[i]);
		expect("No lesson is open", false);
		prompt("> ");
	}
	type(":nosuch");
	expect("unknown command ':nosuch'", false);
	prompt("> ");
	type(":time for i = 1, 10 do");
	prompt(".. ");
	type("end");
	expect("GPU not timed", false);
	prompt("> ");
	type(":q");
	if (!term_wait_exit(&T, WAIT)) failed(":q", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
}

/* SGR sequences (ESC [ ... m) in the raw output */
static bool has_sgr(const char *raw)
{
	for (const char *p = raw; (p = strstr(p, "\033[")) != NULL; p += 2) {
		const char *q = p + 2;
		while (*q && strchr("0123456789;", *q)) q++;
		if (*q == 'm') return true;
	}
	return false;
}

static void test_colour(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	type("lm.zeros(-1)");
	expect("lm.zeros: size 1", false);
	prompt("> ");
	type("lm.ones(2)");
	expect("[float32 tensor of shape [2] on cpu]", true);
	prompt("> ");
	assert_non_null(strstr(T.raw, "\033[1;32m>"));                   /* prompt */
	assert_non_null(strstr(T.raw, "\033[31mstdin:1: lm.zeros"));      /* error */
	assert_non_null(strstr(T.raw, "\033[36m[float32 tensor of shape")); /* footer */
	term_send(&T, "\004");
	assert_true(term_wait_exit(&T, WAIT));
}

static void test_no_colour(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	type("lm.zeros(-1)");
	expect("lm.zeros: size 1", false);
	prompt("> ");
	type("lm.ones(2)");
	expect("[float32 tensor of shape [2] on cpu]", true);
	prompt("> ");
	term_send(&T, "\004");
	assert_true(term_wait_exit(&T, WAIT));
	if (has_sgr(T.raw)) failed("NO_COLOR", "colour sequences in the output");
}

static void test_odd_history(void **state)
{
	(void)state;
	mark = 0;
	prompt("> ");
	if (term_find(&T, 0, "is not a regular file: no history is read or saved", false) < 0)
		failed("history", "no message about the history file");
	eval("1 + 1", "2");
	eval("2 + 2", "4");
	type(":quit");
	if (!term_wait_exit(&T, WAIT)) failed(":quit", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
	char hist[128];
	snprintf(hist, sizeof hist, "%s/.lumen_history", dir);
	struct stat st;
	assert_int_equal(lstat(hist, &st), 0);
	assert_true(S_ISFIFO(st.st_mode) || S_ISLNK(st.st_mode));
	assert_int_equal(stat("/dev/zero", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_double_interrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_commands, setup, teardown),
		cmocka_unit_test_setup_teardown(test_colour, setup_colour, teardown),
		cmocka_unit_test_setup_teardown(test_no_colour, setup, teardown),
		cmocka_unit_test_setup_teardown(test_odd_history, setup_fifo_history, teardown),
		cmocka_unit_test_setup_teardown(test_odd_history, setup_zero_history, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
