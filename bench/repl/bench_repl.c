/*
 * bench_repl.c — how fast the REPL answers: start-up to the first prompt, and Ctrl-C to the
 * prompt while a tight Lua loop, a long C operation (a 4096 x 4096 matmul through OpenBLAS) and
 * an emulated kernel (kernels.reduce on the SIMT emulator) run.
 *
 * It drives the real program through a pseudo-terminal (tests/repl/term.h), as a user would:
 * start-up is timed from fork to the prompt's bytes; an interrupt from writing Ctrl-C to the
 * prompt's bytes coming back, with the Ctrl-C sent 0.3 s after the line was accepted. Medians of N
 * runs (5 by default; N=... to change). Targets: start-up under 30 ms; an interrupt as fast as
 * the operation allows (a BLAS call cannot be stopped inside; Lumen's own loops poll).
 *   usage: build/bench/bench_repl [path/to/lumen]   (default: the lumen next to bench/)
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/repl/term.h"
#include "bench_util.h"

#define WAIT 120.0

static char lumen[PATH_MAX + 16];
static char home[PATH_MAX + 8];

static bool start(term *t)
{
	const char *env[] = {home, "TERM=xterm", "NO_COLOR=1", NULL};
	char *argv[] = {lumen, NULL};
	return term_start(t, argv, env, NULL);
}

/* Waits until the output written after byte `from` ends with the prompt; returns the time it
 * arrived (term_wait_prompt would add its quiet period). */
static double wait_prompt_bytes(term *t, size_t from)
{
	double end = term_now() + WAIT;
	while (term_now() < end) {
		if (t->nraw >= from + 2 && strcmp(t->raw + t->nraw - 2, "> ") == 0) return term_now();
		if (term_pump(t, 50) < 0) break;
	}
	term_dump(t, stderr);
	exit(1);
}

/* Seconds from fork to the first prompt. */
static double startup(void)
{
	term t;
	double t0 = term_now();
	if (!start(&t)) exit(1);
	double dt = wait_prompt_bytes(&t, 0) - t0;
	term_send(&t, "\004");
	term_wait_exit(&t, WAIT);
	term_close(&t);
	return dt;
}

/* Seconds from Ctrl-C to the prompt while line runs (Ctrl-C sent `after` s after Enter);
 * *ran gets how long the line ran before Ctrl-C. */
static double interrupt(const char *setup, const char *line, double after)
{
	term t;
	if (!start(&t)) exit(1);
	if (term_wait_prompt(&t, 0, "> ", WAIT) < 0) exit(1);
	int mark = term_cursor_line(&t);
	if (setup) {
		term_send(&t, setup);
		term_send(&t, "\r");
		if (term_wait_prompt(&t, mark + 1, "> ", WAIT) < 0) exit(1);
		mark = term_cursor_line(&t);
	}
	term_send(&t, line);
	term_send(&t, "\r");
	if (!term_wait_cursor_past(&t, mark + 1, WAIT)) exit(1);
	double end = term_now() + after;
	while (term_now() < end) term_pump(&t, 5);
	size_t from = t.nraw;
	double t0 = term_now();
	term_send(&t, "\003");
	double dt = wait_prompt_bytes(&t, from) - t0;
	if (term_find(&t, mark + 1, "interrupted", false) < 0) {
		fprintf(stderr, "bench_repl: '%s' ended before Ctrl-C (no 'interrupted')\n", line);
		term_dump(&t, stderr);
		exit(1);
	}
	term_send(&t, "\004");
	term_wait_exit(&t, WAIT);
	term_close(&t);
	return dt;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		snprintf(lumen, sizeof lumen, "%s", argv[1]);
	} else {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0) return 1;
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(lumen, sizeof lumen, "%s/../lumen", exe);
	}
	if (access(lumen, X_OK) != 0) {
		fprintf(stderr, "bench_repl: %s is not an executable (build lumen first)\n", lumen);
		return 1;
	}
	char dir[] = "/tmp/lumen-bench-repl-XXXXXX";
	if (!mkdtemp(dir)) return 1;
	snprintf(home, sizeof home, "HOME=%s", dir);
	int n = getenv("N") ? atoi(getenv("N")) : 5;
	if (n < 1 || n > 100) n = 5;

	double v[100];
	startup(); /* warm-up: page cache, dynamic loader */
	for (int i = 0; i < n; i++) v[i] = startup();
	printf("%-66s %10s\n", "bench/repl (median of N runs, through a pty)", "ms");
	printf("%-66s %10.1f   (target < 30 ms)\n", "start-up to the first prompt", 1e3 * bench_median(v, n));
	fflush(stdout);

	struct {
		const char *what, *setup, *line;
		double after;
	} cases[] = {
		{"Ctrl-C -> prompt, Lua loop `while true do end`", NULL, "while true do end", 0.3},
		{"Ctrl-C -> prompt, lm.randn(4096,4096):matmul(lm.randn(4096,4096))", NULL,
		 "x = lm.randn(4096,4096):matmul(lm.randn(4096,4096))", 0.3},
		{"Ctrl-C -> prompt, a:matmul(b), 4096^2 each (one BLAS call)",
		 "a, b = lm.randn(4096,4096), lm.randn(4096,4096)", "x = a:matmul(b)", 0.3},
		{"Ctrl-C -> prompt, matmuls in a Lua loop", "a = lm.randn(1024,1024)",
		 "for i = 1, 1e9 do a:matmul(a) end", 0.3},
		{"Ctrl-C -> prompt, kernels.reduce 2^23 on the emulator", NULL,
		 "kernels.reduce(lm.ones(2^23), {backend='emu'})", 0.3},
		{"Ctrl-C -> prompt, 2^25-element sort", "s = lm.randn(2^25)", "s:sort()", 0.3},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		for (int i = 0; i < n; i++) v[i] = interrupt(cases[c].setup, cases[c].line, cases[c].after);
		printf("%-66s %10.1f\n", cases[c].what, 1e3 * bench_median(v, n));
		fflush(stdout);
	}
	char p[PATH_MAX + 32];
	snprintf(p, sizeof p, "%s/.lumen_history", dir);
	unlink(p);
	rmdir(dir);
	return 0;
}
