/*
 * test_launch_interrupt.c — Ctrl-C inside kernels.launch, as a user meets it: `lumen` under a
 * pseudo-terminal (term.h), a Lua kernel whose threads never return (each thread is a coroutine,
 * and Lua hooks are per coroutine: src/lua/launch.c gives every thread the program's hook), one
 * Ctrl-C, "interrupted!", and the REPL working afterwards — also when the kernel
 * swallows errors with pcall. (Outside the REPL the message names the thread: a count hook stops
 * the kernel in tests/lua/test_launch.lua.) The rest of the REPL: test_repl.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "term.h"

#ifndef LUMEN_EXE
#error "LUMEN_EXE (the path of the lumen program) must be defined by the build"
#endif

#define WAIT 60.0 /* seconds: generous, for sanitizer builds on a busy machine */

static term T;
static char dir[64];
static int mark;

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/lumen-launch-XXXXXX");
	if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
	static char home[96];
	snprintf(home, sizeof home, "HOME=%s", dir);
	const char *env[] = {home, "TERM=xterm", "NO_COLOR=1", NULL};
	char *argv[] = {LUMEN_EXE, NULL};
	if (!term_start(&T, argv, env, dir)) fail_msg("cannot start %s", LUMEN_EXE);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	term_close(&T);
	char p[160];
	snprintf(p, sizeof p, "%s/.lumen_history", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}

static void failed(const char *what, const char *detail)
{
	term_dump(&T, stderr);
	fail_msg("%s: %s", what, detail);
}

static void prompt(void)
{
	if (term_wait_prompt(&T, mark + 1, "> ", WAIT) < 0) failed("no prompt", "> ");
}

static void type(const char *line)
{
	mark = term_cursor_line(&T);
	term_send(&T, line);
	term_send(&T, "\r");
}

static void expect(const char *text)
{
	if (term_wait_line(&T, mark + 1, text, false, WAIT) < 0) failed("missing", text);
}

/* Types a line that runs until interrupted, then Ctrl-C (again if it came before the loop). */
static void interrupt(const char *line)
{
	type(line);
	if (!term_wait_cursor_past(&T, mark + 1, WAIT)) failed("the line", "not accepted");
	term_sleep(0.3);
	int got = -1;
	for (int i = 0; i < 3 && got < 0; i++) {
		term_send(&T, "\003");
		got = term_wait_line(&T, mark + 1, "interrupted!", false, i < 2 ? 5.0 : WAIT);
	}
	if (got < 0) failed("Ctrl-C", "no 'interrupted!'");
}

static void test_ctrl_c_stops_a_kernel(void **state)
{
	(void)state;
	mark = 0;
	prompt();
	interrupt("kernels.launch(function(t) while true do end end, {block = 32, grid = 4})");
	prompt(); /* the REPL's own hook answers Ctrl-C with "interrupted!" (src/app/run.c) */
	type("kernels.launch(function(t, a) a[t.threadIdx.x] = 1 end, {block = 4, args = {lm.zeros(4)}}).counters.global_stores");
	expect("4");
	prompt();
	/* a kernel that swallows errors with pcall is stopped too */
	interrupt("kernels.launch(function(t) for i = 1, 1e12 do pcall(function() while true do end end) end end, {block = 2})");
	prompt();
	type("6 * 7");
	expect("42");
	prompt();
	term_send(&T, "\004");
	if (!term_wait_exit(&T, WAIT)) failed("Ctrl-D", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ctrl_c_stops_a_kernel, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
