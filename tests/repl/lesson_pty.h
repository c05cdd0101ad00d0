/*
 * lesson_pty.h — what the lesson tests through a pseudo-terminal share (test_lesson_repl.c,
 * test_lesson_interrupt.c): a temporary HOME holding one lesson file under lessons/demo/, and the
 * steps of a conversation with the program (type a line, wait for a line containing a text, wait
 * for the prompt), each dumping the screen when it fails. Include it once, after cmocka.h, in a
 * test that drives one terminal T; term.h is the harness. Read next: term.h.
 */
#ifndef LUMEN_TESTS_LESSON_PTY_H
#define LUMEN_TESTS_LESSON_PTY_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "term.h"

#define WAIT 60.0 /* seconds: generous, for sanitizer builds on a busy machine */

static term T;
static char dir[64];  /* the temporary HOME: lessons/demo/<file>, state/ */
static int mark;      /* the screen line of the last typed command */

/* Makes the temporary HOME (named after prefix) holding lessons/demo/file with text. */
static void lesson_dir_make(const char *prefix, const char *file, const char *text)
{
	snprintf(dir, sizeof dir, "/tmp/%s-XXXXXX", prefix);
	if (!mkdtemp(dir)) fail_msg("mkdtemp failed");
	char p[160];
	snprintf(p, sizeof p, "%s/lessons", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/lessons/demo", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof p, "%s/lessons/demo/%s", dir, file);
	FILE *f = fopen(p, "w");
	if (!f) fail_msg("cannot write %s", p);
	fputs(text, f);
	fclose(f);
}

/* Closes the terminal and removes the temporary HOME; who names the test in a warning. */
static void lesson_dir_remove(const char *who)
{
	term_close(&T);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0) fprintf(stderr, "%s: could not remove %s\n", who, dir);
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

/* Types a command and waits for a line containing text, then the prompt. */
static void command(const char *line, const char *text)
{
	type(line);
	expect(text);
	prompt();
}

#endif
