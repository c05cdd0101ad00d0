/*
 * edit.c — reading the REPL's lines: libedit (BSD; GNU readline is GPL-3) through its
 * readline-compatible callback interface when stdin and stdout are terminals, fgets otherwise.
 *
 * Design: on a terminal, edit_read installs the callback handler (which shows the prompt and puts
 * the terminal in raw mode) and polls stdin with a 16 ms timeout, feeding each readable byte to
 * rl_callback_read_char and calling app_tick() between (the visualizer pumps its window there).
 * Signals stay with the program (rl_catch_signals = 0): libedit's own handlers re-raise to the
 * whole process group, and libedit has no rl_callback_sigcleanup. Ctrl-C at the prompt arrives
 * as a flag (app_sigint_take) that makes poll return; the line is dropped. Completion asks the
 * REPL for candidates and hands them to rl_completion_matches. Read next: repl.c.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "edit.h"
#include "lumen/io.h"

#ifdef LUMEN_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

static struct {
	bool open, interactive;
	char *history;
	char *last; /* the last line added to the history */
	char *prefill; /* what the next prompt's input line starts with (edit_prefill) */
	edit_complete_fn complete;
	void *ud;
#ifdef LUMEN_HAVE_LIBEDIT
	bool done;   /* the line callback ran */
	char *line;  /* what it got (NULL: end of input) */
	char **cands; /* candidates of the completion in progress */
	size_t next;
#endif
} E;

bool edit_interactive(void)
{
	return E.interactive;
}

const char *edit_plain_reason(void)
{
	if (E.interactive) return NULL;
#ifdef LUMEN_HAVE_LIBEDIT
	return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) ? "libedit failed to start"
	                                                      : "standard input or output is not a terminal";
#else
	return "this lumen was built without libedit";
#endif
}

/* ---------------------------------------------------------------- plain reads */

static edit_result read_plain(const char *prompt, char **line)
{
	bool tty = isatty(STDIN_FILENO);
	(void)app_sigint_take(); /* a Ctrl-C from before this prompt */
	if (tty) {
		fputs(prompt, stdout);
		fflush(stdout);
	}
	size_t cap = 256, n = 0;
	char *buf = malloc(cap);
	if (!buf) return EDIT_EOF;
	for (;;) {
		errno = 0;
		if (!fgets(buf + n, (int)(cap - n), stdin)) {
			bool sigint = app_sigint_take();
			if (errno == EINTR || sigint) {
				clearerr(stdin);
				free(buf);
				if (tty) fputc('\n', stdout);
				return EDIT_INTERRUPTED;
			}
			if (n > 0) break; /* a last line without a newline */
			free(buf);
			return EDIT_EOF;
		}
		n += strlen(buf + n);
		if (n > 0 && buf[n - 1] == '\n') {
			buf[--n] = '\0';
			if (n > 0 && buf[n - 1] == '\r') buf[--n] = '\0';
			break;
		}
		if (cap - n < 2) {
			char *bigger = realloc(buf, cap * 2);
			if (!bigger) break;
			buf = bigger;
			cap *= 2;
		}
	}
	*line = buf;
	return EDIT_LINE;
}

/* ---------------------------------------------------------------- libedit */

#ifdef LUMEN_HAVE_LIBEDIT

static void on_line(char *line)
{
	E.done = true;
	E.line = line;
	rl_callback_handler_remove();
}

static void free_cands(void)
{
	if (!E.cands) return;
	for (size_t i = 0; E.cands[i]; i++) free(E.cands[i]);
	free(E.cands);
	E.cands = NULL;
}

/* The generator rl_completion_matches calls until it returns NULL; libedit frees what it gets. */
static char *next_cand(const char *text, int state)
{
	(void)text;
	if (state == 0) E.next = 0;
	if (!E.cands || !E.cands[E.next]) return NULL;
	return strdup(E.cands[E.next++]);
}

static char **attempt_completion(const char *text, int start, int end)
{
	rl_attempted_completion_over = 1; /* no fallback to file names outside strings */
	if (!E.complete || !rl_line_buffer) return NULL;
	free_cands();
	E.cands = E.complete(E.ud, rl_line_buffer, start, end);
	char **m = (E.cands && E.cands[0]) ? rl_completion_matches(text, next_cand) : NULL;
	free_cands();
	return m;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static edit_result read_edited(const char *prompt, char **line)
{
	(void)app_sigint_take(); /* a Ctrl-C from before this prompt */
	E.done = false;
	E.line = NULL;
	fflush(stdout);
	fflush(stderr);
	rl_callback_handler_install(prompt, on_line);
	if (E.prefill) {
		/* libedit redraws the prompt and the line from where the cursor is: go back to the
		 * start of the prompt's line first */
		rl_insert_text(E.prefill);
		fputs("\r", stdout);
		fflush(stdout);
		rl_forced_update_display();
		free(E.prefill);
		E.prefill = NULL;
	}
	double last_tick = now_s();
	for (;;) {
		if (app_sigint_take()) {
			rl_callback_handler_remove(); /* cooked mode again; the next install clears the line */
			fputs("\n", stdout);
			fflush(stdout);
			return EDIT_INTERRUPTED;
		}
		if (app_sigwinch_take()) rl_resize_terminal();
		struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
		int n = poll(&p, 1, 16);
		if (n < 0 && errno != EINTR) {
			rl_callback_handler_remove();
			return EDIT_EOF;
		}
		if (n > 0) {
			if (p.revents & POLLIN) rl_callback_read_char();
			if (E.done) break;
			if (!(p.revents & POLLIN) || (p.revents & (POLLHUP | POLLERR | POLLNVAL))) {
				/* the terminal went away */
				rl_callback_handler_remove();
				return EDIT_EOF;
			}
		}
		/* tick even while keys arrive, so a window never waits on a fast typist */
		double t = now_s();
		if (n <= 0 || t - last_tick >= 0.016) {
			app_tick();
			last_tick = t;
		}
	}
	if (!E.line) {
		fputs("\n", stdout); /* Ctrl-D: leave the prompt's line */
		fflush(stdout);
		return EDIT_EOF;
	}
	*line = E.line;
	return EDIT_LINE;
}

#endif /* LUMEN_HAVE_LIBEDIT */

/* ---------------------------------------------------------------- the interface */

bool edit_open(const char *history_path, edit_complete_fn complete, void *ud)
{
	memset(&E, 0, sizeof E);
	E.open = true;
	E.complete = complete;
	E.ud = ud;
	E.history = history_path ? strdup(history_path) : NULL;
#ifdef LUMEN_HAVE_LIBEDIT
	E.interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	if (E.interactive) {
		rl_readline_name = "lumen"; /* for conditionals in ~/.editrc */
		rl_catch_signals = 0;
		/* A word for completion runs over dots and colons (lm.zeros, x:matmul, :help) and
		 * stops at operators, brackets, commas and quotes (file names inside strings). */
		rl_basic_word_break_characters = " \t\n\"'`@$><=;|&{}()[],+-*/%^~#";
		rl_completer_word_break_characters = (char *)rl_basic_word_break_characters;
		rl_completion_append_character = '\0';
		rl_attempted_completion_function = attempt_completion;
		if (rl_initialize() != 0) {
			E.interactive = false;
		} else {
			using_history();
			stifle_history(1000);
			/* a regular file (or none yet) only: a FIFO there would block the REPL's start in
			 * open(), /dev/zero never end; then it is neither read nor written, said once */
			struct stat st;
			if (E.history && stat(E.history, &st) == 0 && !S_ISREG(st.st_mode)) {
				fprintf(stderr, "lumen: the history file %s is not a regular file: no history is read or "
				        "saved\n", E.history);
				free(E.history);
				E.history = NULL;
			}
			if (E.history) (void)read_history(E.history);
		}
	}
#endif
	return E.interactive;
}

edit_result edit_read(const char *prompt, char **line)
{
	*line = NULL;
#ifdef LUMEN_HAVE_LIBEDIT
	if (E.interactive) return read_edited(prompt, line);
#endif
	return read_plain(prompt, line);
}

void edit_prefill(const char *text)
{
	free(E.prefill);
	E.prefill = E.interactive && text ? strdup(text) : NULL;
}

void edit_history_add(const char *line)
{
	if (!E.interactive || !line[strspn(line, " \t")]) return;
	if (E.last && strcmp(E.last, line) == 0) return;
	free(E.last);
	E.last = strdup(line);
#ifdef LUMEN_HAVE_LIBEDIT
	add_history(line);
	/* checked each time (it may have been replaced by a FIFO or a directory since); a read-only
	 * home is not an error. libedit rewrites the file in place (its mode becomes 0600: history is
	 * private), so links and owner stay. */
	if (E.history && lm_file_check("history", E.history) == LM_OK) (void)write_history(E.history);
#endif
}

void edit_close(void)
{
	if (!E.open) return;
#ifdef LUMEN_HAVE_LIBEDIT
	if (E.interactive) {
		rl_callback_handler_remove();
		free_cands();
	}
#endif
	free(E.history);
	free(E.last);
	free(E.prefill);
	memset(&E, 0, sizeof E);
}
