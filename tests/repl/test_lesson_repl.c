/*
 * test_lesson_repl.c — the lesson runner as a student meets it: `lumen --lesson NAME` under a
 * pseudo-terminal (term.h), commands typed, assertions on the screen.
 *
 * Each test starts the built program in a fresh temporary HOME with XDG_STATE_HOME inside it
 * (progress never touches the real one), LANG=C.UTF-8, NO_COLOR=1, and LUMEN_LESSON_PATH
 * pointing at a small lesson written here whose second step's code never ends; COLUMNS=40 (the
 * screen of term.h counts bytes, and a rule of 100 '─' is 300 of them). It checks: the
 * first step shown, :next, :edit putting the step's code into the input line (Ctrl-C drops the
 * rest), :check refusing and accepting what was typed at the prompt, :hint, :lang zh and :where,
 * Ctrl-C inside a check calling a student's endless loop and inside a step's endless code (the
 * lesson stays at its step), an unknown name with the nearest ones, resuming in a second session.
 * Read next: tests/lua/test_lesson.lua (the runner without a terminal), lua/lumen/lesson.lua.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "lesson_pty.h"

#ifndef LUMEN_EXE
#error "LUMEN_EXE (the path of the lumen program) must be defined by the build"
#endif


/* A lesson whose second step loops forever (written to <dir>/lessons/demo/01-loop.lua). */
static const char *const loop_lesson =
	"return { title = 'Loops', course = 'demo', lecture = 'Demo', summary = 'A loop.',\n"
	"  steps = {\n"
	"    { text = lesson.say('One.', '一。'), code = 'print(\"first step\")' },\n"
	"    { text = lesson.say('Two.', '二。'), code = 'print(\"looping\") while true do end' },\n"
	"    { text = lesson.say('Three.', '三。'), code = 'print(\"third step\")' },\n"
	"  } }\n";

static void start(const char *lesson)
{
	static char home[96], state[128], path[128];
	snprintf(home, sizeof home, "HOME=%s", dir);
	snprintf(state, sizeof state, "XDG_STATE_HOME=%s/state", dir);
	snprintf(path, sizeof path, "LUMEN_LESSON_PATH=%s/lessons", dir);
	const char *env[] = {home, state, path, "TERM=xterm", "NO_COLOR=1", "LANG=C.UTF-8", "LUMEN_LANG",
	                     "SDL_VIDEODRIVER=offscreen", "LP_NUM_THREADS=1", "COLUMNS=40", NULL};
	char *argv[] = {LUMEN_EXE, "--lesson", (char *)lesson, NULL};
	if (!term_start(&T, argv, env, dir)) fail_msg("cannot start %s", LUMEN_EXE);
}

static int setup(void **state)
{
	(void)state;
	lesson_dir_make("lumen-lesson", "01-loop.lua", loop_lesson);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lesson_dir_remove("test_lesson_repl");
	return 0;
}

/* The cursor's line is exactly text (an input line being edited). */
static void expect_edit_line(const char *text)
{
	double end = term_now() + WAIT;
	while (strcmp(term_line(&T, term_cursor_line(&T)), text) != 0) {
		if (term_now() > end || term_pump(&T, 20) < 0) failed("the input line is not", text);
	}
}

/* Ctrl-C until "interrupted!" shows (the first may come before the loop started). */
static void interrupt(void)
{
	term_sleep(0.2);
	int got = -1;
	for (int i = 0; i < 3 && got < 0; i++) {
		term_send(&T, "\003");
		got = term_wait_line(&T, mark + 1, "interrupted!", false, i < 2 ? 5.0 : WAIT);
	}
	if (got < 0) failed("Ctrl-C", "no 'interrupted!'");
	prompt();
}

static void test_scan_lesson(void **state)
{
	(void)state;
	start("ece408/16-scan");
	mark = 0;
	expect("Parallel scan: Kogge-Stone · 1/");
	expect("scan(x) 3 4 11 11 15 16 22 25");
	prompt();
	command(":next", "· 2/");
	/* :edit puts the code into the input line, one line per prompt */
	type(":edit");
	expect("The code is in the input line");
	expect_edit_line("> wants = {3, 5, 2, 7, 28, 4, 3, 0, 8, 1}");
	term_send(&T, "\r");
	expect_edit_line("> ends = lm.tensor(wants):cumsum(1):tolist()");
	term_send(&T, "\003"); /* drops the rest */
	prompt();
	expect_edit_line(">"); /* the screen keeps no trailing blank */
	/* the check calls what the student typed at the prompt */
	type("function exclusive_scan(t) return t end");
	prompt();
	command(":check", "Not yet");
	command(":hint", "Hint 1/2");
	type("function exclusive_scan(t) local y, s = {}, 0 for i = 1, #t do y[i] = s s = s + t[i] end return y end");
	prompt();
	command(":check", "Correct.");
	/* an endless loop in the student's code: the check's budget stops it and refuses it */
	type("function exclusive_scan(t) while true do end end");
	prompt();
	command(":check", "Not yet: your code was stopped after");
	/* Ctrl-C inside a check whose loop spends its time in C (the budget counts Lua
	 * instructions): back at the prompt, at the same step */
	type("function exclusive_scan(t) while true do lm.zeros(1000000):sum() end end");
	prompt();
	type(":check");
	interrupt();
	command(":where", "step 2 of");
	command(":lang zh", "语言：中文");
	command(":where", "第 2 步");
	command(":lang en", "Language: English.");
	type(":lesson scna");
	expect("there is no lesson 'scna'; the nearest:");
	expect("ece408/16-scan");
	prompt();
	type(":q");
	if (!term_wait_exit(&T, WAIT)) failed(":q", "the program did not end");
	term_close(&T);
	/* a second session resumes at step 2; the solved exercise is remembered */
	start("ece408/16-scan");
	mark = 0;
	expect("Resuming at step 2");
	expect("(you solved this one before)");
	prompt();
	command(":lessons", "step 2/");
	type(":q");
	if (!term_wait_exit(&T, WAIT)) failed(":q", "the program did not end");
}

static void test_endless_step(void **state)
{
	(void)state;
	start("demo/01-loop");
	mark = 0;
	expect("first step");
	prompt();
	type(":next");
	expect("looping");
	interrupt();
	command(":where", "step 2 of 3");
	command(":next", "third step");
	type(":prev");
	expect("looping");
	interrupt();
	command(":where", "step 2 of 3");
	command("1 + 1", "2");
	type(":q");
	if (!term_wait_exit(&T, WAIT)) failed(":q", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_scan_lesson, setup, teardown),
		cmocka_unit_test_setup_teardown(test_endless_step, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
