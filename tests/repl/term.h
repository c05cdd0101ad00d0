/*
 * term.h — a program under a pseudo-terminal, and a small screen that shows what a user would
 * see: the REPL's tests (test_repl.c) and its benchmark (bench/repl) drive `lumen` through it.
 *
 * Header-only (static functions, so each includer compiles what it uses). term_start runs the
 * program under forkpty with a fixed window; term_send types keys; the term_wait_* functions
 * read its output into the screen until a condition holds or a deadline passes — tests wait
 * for what the screen shows, never for a fixed time. The screen understands what libedit and
 * Lumen write with TERM=xterm: printable bytes, CR LF BS BEL TAB, CSI cursor moves (A B C D G
 * H f d), erases (K J X P @ L M), SGR and private modes (ignored), OSC strings (ignored).
 * Lines scroll into an unbounded-enough history (TERM_MAXLINES), so a line index taken before
 * a command still names the same line afterwards.
 */
#ifndef LUMEN_TESTS_REPL_TERM_H
#define LUMEN_TESTS_REPL_TERM_H

#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TERM_ROWS     40
#define TERM_COLS     160
#define TERM_MAXLINES 20000

typedef struct term {
	pid_t pid;
	int fd;
	bool eof;     /* the program closed the terminal */
	bool reaped;  /* waitpid collected it; status is valid */
	int status;
	char *raw;    /* every byte the program wrote */
	size_t nraw, rawcap;
	char (*lines)[TERM_COLS]; /* history + screen; the screen is lines[top .. top + ROWS) */
	int top, row, col;        /* cursor on the screen */
	int esc;                  /* parser state: 0 text, 1 ESC, 2 CSI, 3 OSC, 4 one more byte */
	char csi[64];
	int ncsi;
	char text[TERM_COLS + 1]; /* term_line's buffer */
} term;

static inline double term_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void term_sleep(double s)
{
	struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&t, &t) != 0 && errno == EINTR) {}
}

/* ---------------------------------------------------------------- the screen */

static inline char *term_cell_row(term *t, int r)
{
	return t->lines[t->top + r];
}

static inline void term_clear_row(term *t, int r, int from, int to)
{
	if (from < 0) from = 0;
	if (to > TERM_COLS) to = TERM_COLS;
	if (from < to) memset(term_cell_row(t, r) + from, ' ', (size_t)(to - from));
}

static inline void term_linefeed(term *t)
{
	if (t->row < TERM_ROWS - 1) {
		t->row++;
		return;
	}
	if (t->top + TERM_ROWS < TERM_MAXLINES) {
		t->top++;
		term_clear_row(t, TERM_ROWS - 1, 0, TERM_COLS);
	} else { /* out of history: keep overwriting the last screen (tests never get here) */
		memmove(t->lines[t->top], t->lines[t->top + 1], (size_t)(TERM_ROWS - 1) * TERM_COLS);
		term_clear_row(t, TERM_ROWS - 1, 0, TERM_COLS);
	}
}

static inline int term_clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static inline void term_csi(term *t, char final)
{
	int p[8] = {0}, np = 0;
	const char *s = t->csi;
	if (*s == '?' || *s == '>' || *s == '=') return; /* private modes: nothing to draw */
	while (*s && np < 8) {
		p[np] = (int)strtol(s, (char **)&s, 10);
		np++;
		if (*s == ';') s++;
		else break;
	}
	int n = p[0] > 0 ? p[0] : 1;
	char *line = term_cell_row(t, t->row);
	switch (final) {
	case 'A': t->row = term_clamp(t->row - n, 0, TERM_ROWS - 1); break;
	case 'B': t->row = term_clamp(t->row + n, 0, TERM_ROWS - 1); break;
	case 'C': t->col = term_clamp(t->col + n, 0, TERM_COLS - 1); break;
	case 'D': t->col = term_clamp(t->col - n, 0, TERM_COLS - 1); break;
	case 'G': case '`': t->col = term_clamp(n - 1, 0, TERM_COLS - 1); break;
	case 'd': t->row = term_clamp(n - 1, 0, TERM_ROWS - 1); break;
	case 'H': case 'f':
		t->row = term_clamp(n - 1, 0, TERM_ROWS - 1);
		t->col = term_clamp((np > 1 && p[1] > 0 ? p[1] : 1) - 1, 0, TERM_COLS - 1);
		break;
	case 'K':
		if (p[0] == 0) term_clear_row(t, t->row, t->col, TERM_COLS);
		else if (p[0] == 1) term_clear_row(t, t->row, 0, t->col + 1);
		else term_clear_row(t, t->row, 0, TERM_COLS);
		break;
	case 'J':
		if (p[0] == 0) {
			term_clear_row(t, t->row, t->col, TERM_COLS);
			for (int r = t->row + 1; r < TERM_ROWS; r++) term_clear_row(t, r, 0, TERM_COLS);
		} else if (p[0] == 1) {
			for (int r = 0; r < t->row; r++) term_clear_row(t, r, 0, TERM_COLS);
			term_clear_row(t, t->row, 0, t->col + 1);
		} else {
			for (int r = 0; r < TERM_ROWS; r++) term_clear_row(t, r, 0, TERM_COLS);
		}
		break;
	case 'X': term_clear_row(t, t->row, t->col, t->col + n); break;
	case 'P':
		n = term_clamp(n, 0, TERM_COLS - t->col);
		memmove(line + t->col, line + t->col + n, (size_t)(TERM_COLS - t->col - n));
		term_clear_row(t, t->row, TERM_COLS - n, TERM_COLS);
		break;
	case '@':
		n = term_clamp(n, 0, TERM_COLS - t->col);
		memmove(line + t->col + n, line + t->col, (size_t)(TERM_COLS - t->col - n));
		term_clear_row(t, t->row, t->col, t->col + n);
		break;
	case 'L': case 'M': {
		n = term_clamp(n, 0, TERM_ROWS - t->row);
		int rest = TERM_ROWS - t->row - n;
		if (final == 'L') {
			memmove(t->lines[t->top + t->row + n], t->lines[t->top + t->row], (size_t)rest * TERM_COLS);
			for (int r = t->row; r < t->row + n; r++) term_clear_row(t, r, 0, TERM_COLS);
		} else {
			memmove(t->lines[t->top + t->row], t->lines[t->top + t->row + n], (size_t)rest * TERM_COLS);
			for (int r = TERM_ROWS - n; r < TERM_ROWS; r++) term_clear_row(t, r, 0, TERM_COLS);
		}
		break;
	}
	default: break; /* m (colours), h, l, r, n, ...: nothing to draw */
	}
}

static inline void term_feed(term *t, unsigned char c)
{
	switch (t->esc) {
	case 1:
		if (c == '[') {
			t->esc = 2;
			t->ncsi = 0;
		} else if (c == ']') {
			t->esc = 3;
		} else if (c == '(' || c == ')' || c == '#' || c == '%') {
			t->esc = 4;
		} else {
			t->esc = 0; /* ESC 7, ESC 8, ESC =, ESC >, ...: nothing to draw */
		}
		return;
	case 2:
		if (c >= 0x40 && c <= 0x7e) {
			t->csi[t->ncsi] = '\0';
			t->esc = 0;
			term_csi(t, (char)c);
		} else if (t->ncsi < (int)sizeof t->csi - 1) {
			t->csi[t->ncsi++] = (char)c;
		}
		return;
	case 3:
		if (c == '\a' || c == '\\') t->esc = 0;
		return;
	case 4: t->esc = 0; return;
	default: break;
	}
	switch (c) {
	case 0x1b: t->esc = 1; return;
	case '\r': t->col = 0; return;
	case '\n': term_linefeed(t); return;
	case '\b': if (t->col > 0) t->col--; return;
	case '\t': t->col = term_clamp((t->col / 8 + 1) * 8, 0, TERM_COLS - 1); return;
	default: break;
	}
	if (c < 0x20 || c == 0x7f) return; /* BEL and other controls */
	if (t->col >= TERM_COLS) {
		t->col = 0;
		term_linefeed(t);
	}
	term_cell_row(t, t->row)[t->col++] = (char)c;
}

/* ---------------------------------------------------------------- the program */

/* Starts argv[0] under a pseudo-terminal in directory cwd (NULL: here). env: "NAME=value" to
 * set, "NAME" to unset, NULL-terminated. Returns false (with a message on stderr) on failure. */
static inline bool term_start(term *t, char *const argv[], const char *const env[], const char *cwd)
{
	memset(t, 0, sizeof *t);
	t->lines = malloc((size_t)TERM_MAXLINES * TERM_COLS);
	if (!t->lines) return false;
	memset(t->lines, ' ', (size_t)TERM_MAXLINES * TERM_COLS);
	struct winsize ws = {.ws_row = TERM_ROWS, .ws_col = TERM_COLS};
	t->pid = forkpty(&t->fd, NULL, NULL, &ws);
	if (t->pid < 0) {
		perror("forkpty");
		return false;
	}
	if (t->pid == 0) {
		for (int i = 0; env && env[i]; i++) {
			if (strchr(env[i], '=')) putenv((char *)env[i]);
			else unsetenv(env[i]);
		}
		if (cwd && chdir(cwd) != 0) _exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	return true;
}

/* Reads what the program wrote within timeout_ms (0: only what is there already). Returns 1
 * when something came, 0 when nothing did, -1 once the program has closed the terminal. */
static inline int term_pump(term *t, int timeout_ms)
{
	if (t->eof) return -1;
	struct pollfd p = {.fd = t->fd, .events = POLLIN};
	int n = poll(&p, 1, timeout_ms);
	if (n <= 0) return 0;
	char buf[4096];
	ssize_t got = read(t->fd, buf, sizeof buf);
	if (got <= 0) {
		if (got < 0 && errno == EINTR) return 0;
		t->eof = true; /* EIO: the slave side is closed */
		return -1;
	}
	if (t->nraw + (size_t)got + 1 > t->rawcap) {
		size_t cap = t->rawcap ? t->rawcap * 2 : 65536;
		while (cap < t->nraw + (size_t)got + 1) cap *= 2;
		char *r = realloc(t->raw, cap);
		if (!r) return -1;
		t->raw = r;
		t->rawcap = cap;
	}
	memcpy(t->raw + t->nraw, buf, (size_t)got);
	t->nraw += (size_t)got;
	t->raw[t->nraw] = '\0';
	for (ssize_t i = 0; i < got; i++) term_feed(t, (unsigned char)buf[i]);
	return 1;
}

static inline void term_send(term *t, const char *keys)
{
	size_t n = strlen(keys);
	while (n > 0) {
		ssize_t w = write(t->fd, keys, n);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) return;
		keys += w;
		n -= (size_t)w;
	}
}

/* The absolute index of the cursor's line (stable while the screen scrolls). */
static inline int term_cursor_line(const term *t)
{
	return t->top + t->row;
}

/* Line i (absolute) without trailing blanks; valid until the next call. */
static inline const char *term_line(term *t, int i)
{
	if (i < 0 || i >= TERM_MAXLINES) i = 0;
	int n = TERM_COLS;
	while (n > 0 && t->lines[i][n - 1] == ' ') n--;
	memcpy(t->text, t->lines[i], (size_t)n);
	t->text[n] = '\0';
	return t->text;
}

/* Line index >= from whose text contains needle (exact: equals it), or -1. */
static inline int term_find(term *t, int from, const char *needle, bool exact)
{
	int last = term_cursor_line(t);
	for (int i = from < 0 ? 0 : from; i <= last; i++) {
		const char *l = term_line(t, i);
		if (exact ? strcmp(l, needle) == 0 : strstr(l, needle) != NULL) return i;
	}
	return -1;
}

/* Waits until a line >= from contains (exact: is) needle; returns its index or -1. */
static inline int term_wait_line(term *t, int from, const char *needle, bool exact, double timeout)
{
	double end = term_now() + timeout;
	for (;;) {
		int i = term_find(t, from, needle, exact);
		if (i >= 0) return i;
		if (term_now() > end || term_pump(t, 20) < 0) {
			while (term_pump(t, 0) > 0) {} /* whatever is left, for the dump */
			return term_find(t, from, needle, exact);
		}
	}
}

/* Waits until the cursor sits right after prompt (its text, e.g. "> ") on a line >= from with
 * nothing typed yet. Returns the line or -1. */
static inline int term_wait_prompt(term *t, int from, const char *prompt, double timeout)
{
	size_t n = strlen(prompt);
	char want[64];
	snprintf(want, sizeof want, "%s", prompt);
	while (n > 0 && want[n - 1] == ' ') want[--n] = '\0';
	double end = term_now() + timeout;
	for (;;) {
		int i = term_cursor_line(t);
		if (i >= from && t->col == (int)strlen(prompt) && strcmp(term_line(t, i), want) == 0) {
			/* the prompt is complete when nothing more arrives at once */
			if (term_pump(t, 10) <= 0 || (term_cursor_line(t) == i && t->col == (int)strlen(prompt)))
				return i;
			continue;
		}
		if (term_now() > end || term_pump(t, 20) < 0) return -1;
	}
}

/* Waits until the cursor line >= from (a typed line was accepted); returns false on timeout. */
static inline bool term_wait_cursor_past(term *t, int from, double timeout)
{
	double end = term_now() + timeout;
	while (term_cursor_line(t) < from) {
		if (term_now() > end || term_pump(t, 20) < 0) return term_cursor_line(t) >= from;
	}
	return true;
}

/* Waits for the program to end; returns false on timeout. t->status holds its wait status. */
static inline bool term_wait_exit(term *t, double timeout)
{
	double end = term_now() + timeout;
	while (!t->reaped) {
		term_pump(t, 20);
		pid_t r = waitpid(t->pid, &t->status, WNOHANG);
		if (r == t->pid) t->reaped = true;
		else if (term_now() > end) return false;
	}
	while (term_pump(t, 0) > 0) {}
	return true;
}

/* Prints the history and screen (for a failing test's report). */
static inline void term_dump(term *t, FILE *out)
{
	int last = term_cursor_line(t);
	int first = last - 60 > 0 ? last - 60 : 0;
	fprintf(out, "---- screen (lines %d..%d; cursor at column %d) ----\n", first, last, t->col);
	for (int i = first; i <= last; i++) fprintf(out, "%5d|%s\n", i, term_line(t, i));
	fprintf(out, "---- end of screen ----\n");
}

/* Ends the program (SIGKILL when still running) and frees everything. */
static inline void term_close(term *t)
{
	if (t->pid > 0 && !t->reaped) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, &t->status, 0);
		t->reaped = true;
	}
	if (t->fd > 0) close(t->fd);
	free(t->lines);
	free(t->raw);
	t->lines = NULL;
	t->raw = NULL;
	t->fd = -1;
}

#endif
