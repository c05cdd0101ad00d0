/*
 * edit.h — how the REPL reads a line, behind one small interface: libedit's readline-compatible
 * callback API under poll() when stdin is a terminal, plain fgets otherwise.
 *
 * Only edit.c includes <editline/readline.h>; the REPL sees lines, end of input, Ctrl-C at the
 * prompt, history and a completion callback. While it waits on a terminal, edit_read calls
 * app_tick() about every 16 ms (app.h). Read next: edit.c, repl.c.
 */
#ifndef LUMEN_APP_EDIT_H
#define LUMEN_APP_EDIT_H

#include <stdbool.h>

/* Completion: candidates that replace line[start, end) (end is the cursor), as a malloc'ed,
 * NULL-terminated array of malloc'ed strings (edit.c frees them), or NULL for none. */
typedef char **(*edit_complete_fn)(void *ud, const char *line, int start, int end);

typedef enum edit_result {
	EDIT_LINE,        /* *line holds a malloc'ed line without its newline */
	EDIT_EOF,         /* Ctrl-D on an empty line, or the end of piped input */
	EDIT_INTERRUPTED, /* Ctrl-C at the prompt: the line was dropped */
} edit_result;

/* Starts reading. Line editing (libedit) is used when this build has it and stdin and stdout
 * are terminals; otherwise lines come from fgets and no prompt is shown when stdin is not a
 * terminal. history_path (may be NULL) is read now and rewritten by edit_history_add; failing
 * to read or write it is not an error. Returns true when lines are edited. */
bool edit_open(const char *history_path, edit_complete_fn complete, void *ud);
/* True when edit_open chose line editing. */
bool edit_interactive(void);
/* Why lines are not edited (NULL when they are): this build has no libedit, or stdin or stdout
 * is not a terminal. */
const char *edit_plain_reason(void);
/* Shows prompt and waits for a line (see edit_result). */
edit_result edit_read(const char *prompt, char **line);
/* Puts text into the next prompt's input line, to be edited before Enter (a lesson's :edit);
 * ignored without line editing. */
void edit_prefill(const char *text);
/* Adds a line to the history (not empty ones, nor a repeat of the last) and saves the file. */
void edit_history_add(const char *line);
/* Restores the terminal and forgets the completion callback. */
void edit_close(void);

#endif
