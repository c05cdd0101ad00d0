/*
 * test_lesson_interrupt.c — issue 21's bad input: "a training step interrupted with Ctrl-C leaves
 * the lesson at that step with the model usable". `lumen --lesson demo/01-train` under a
 * pseudo-terminal (term.h), on a small lesson written here whose second step trains a two-layer
 * network with nn, F.mse_loss and optim.SGD in a loop that only Ctrl-C ends (a real lesson's
 * training step ends in seconds, too soon to be sure a key lands inside it); and the real
 * aics/02-regression-to-mlp, its training function run long at the prompt and interrupted
 * (skipped when the lesson or Fashion-MNIST is missing).
 *
 * It checks: the step's code interrupted when the step is entered and again under :run, each
 * time "interrupted!" and the prompt; :where still at step 2; the training had taken steps; the
 * model's forward pass gives outputs of the right shape and finite parameters; grad mode is on
 * (a Ctrl-C inside lm.no_grad must not leave it off); one more SGD step with backward works and
 * the loss is finite; :next goes on to step 3.
 * The program is LUMEN_EXE when the build defines it, else `lumen` next to the tests' directory
 * (build/tests/test_x -> build/lumen). Same environment as test_lesson_repl.c.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "lesson_pty.h"


/* Step 2 trains until interrupted; steps_done counts the SGD steps taken. */
static const char *const train_lesson =
	"return { title = 'Training', course = 'demo', lecture = 'Demo', summary = 'A training loop.',\n"
	"  steps = {\n"
	"    { text = lesson.say('A model.', '一个模型。'), code = [[\n"
	"lm.manual_seed(1)\n"
	"model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))\n"
	"x = lm.randn(64, 4)\n"
	"y = x:sum(2, true)\n"
	"opt = optim.SGD(model:parameters(), {lr = 0.01, momentum = 0.9})\n"
	"steps_done = 0\n"
	"print('model ready')\n"
	"]] },\n"
	"    { text = lesson.say('Training.', '训练。'), code = [[\n"
	"print('training')\n"
	"while true do\n"
	"  opt:zero_grad()\n"
	"  local loss = F.mse_loss(model(x), y)\n"
	"  loss:backward()\n"
	"  opt:step()\n"
	"  lm.no_grad(function() return model(x) end)\n"
	"  steps_done = steps_done + 1\n"
	"end\n"
	"]] },\n"
	"    { text = lesson.say('Three.', '三。'), code = 'print(\"third step\")' },\n"
	"  } }\n";

static const char *lumen_exe(void)
{
#ifdef LUMEN_EXE
	return LUMEN_EXE;
#else
	static char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) fail_msg("cannot read /proc/self/exe");
	exe[n] = '\0';
	for (int cut = 0; cut < 2; cut++) { /* build/tests/test_x -> build */
		char *slash = strrchr(exe, '/');
		if (!slash) fail_msg("unexpected test path %s", exe);
		*slash = '\0';
	}
	size_t len = strlen(exe);
	snprintf(exe + len, sizeof exe - len, "/lumen");
	if (access(exe, X_OK) != 0) fail_msg("%s is not an executable (build lumen first)", exe);
	return exe;
#endif
}

static void start(const char *lesson)
{
	static char home[96], state[128], path[128];
	snprintf(home, sizeof home, "HOME=%s", dir);
	snprintf(state, sizeof state, "XDG_STATE_HOME=%s/state", dir);
	snprintf(path, sizeof path, "LUMEN_LESSON_PATH=%s/lessons", dir);
	const char *env[] = {home, state, path, "TERM=xterm", "NO_COLOR=1", "LANG=C.UTF-8", "LUMEN_LANG",
	                     "SDL_VIDEODRIVER=offscreen", "LP_NUM_THREADS=1", "OMP_NUM_THREADS=1",
	                     "COLUMNS=40", NULL};
	char *argv[] = {(char *)lumen_exe(), "--lesson", (char *)lesson, NULL};
	if (!term_start(&T, argv, env, dir)) fail_msg("cannot start %s", argv[0]);
}

static int setup(void **state)
{
	(void)state;
	lesson_dir_make("lumen-train", "01-train.lua", train_lesson);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	lesson_dir_remove("test_lesson_interrupt");
	return 0;
}

/* Lets the loop take a few steps, then Ctrl-C until "interrupted!" shows. */
static void interrupt(void)
{
	term_sleep(0.5);
	int got = -1;
	for (int i = 0; i < 3 && got < 0; i++) {
		term_send(&T, "\003");
		got = term_wait_line(&T, mark + 1, "interrupted!", false, i < 2 ? 5.0 : WAIT);
	}
	if (got < 0) failed("Ctrl-C", "no 'interrupted!'");
	prompt();
}

/* After an interrupt: the lesson at step 2, the model trained a little and still usable. */
static void model_usable(void)
{
	command(":where", "step 2 of 3");
	command("print('trained ' .. tostring(steps_done > 0))", "trained true");
	command("print('grad mode ' .. tostring(lm.is_grad_enabled()))", "grad mode true");
	command("print('forward ' .. table.concat(model(lm.randn(3, 4)):size(), 'x'))", "forward 3x1");
	command("local s = 0 for _, p in ipairs(model:parameters()) do s = s + p:abs():sum():item() end "
	        "print('finite ' .. tostring(s == s and s < math.huge))",
	        "finite true");
	command("opt:zero_grad() local l = F.mse_loss(model(x), y) l:backward() opt:step() "
	        "print('one more step ' .. tostring(l:item() < math.huge))",
	        "one more step true");
}

static void test_training_step_interrupted(void **state)
{
	(void)state;
	start("demo/01-train");
	mark = 0;
	expect("model ready");
	prompt();
	type(":next"); /* entering the step runs its training loop */
	expect("training");
	interrupt();
	model_usable();
	type(":run"); /* and again when asked */
	expect("training");
	interrupt();
	model_usable();
	command(":next", "third step");
	command(":where", "step 3 of 3");
	type(":q");
	if (!term_wait_exit(&T, WAIT)) failed(":q", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
}

/* A real lesson: aics/02-regression-to-mlp's under- and over-fitting step (found by its code,
 * which defines fit(model, name, steps): full-batch Adam on 256 Fashion-MNIST images with live
 * curves). Its own step runs in about a second, too short to be sure a key lands inside it, so
 * the student trains longer with the lesson's fit at the prompt and presses Ctrl-C; then the
 * lesson is at that step, the interrupted model runs forward, and :run trains to the end. */
static void test_real_lesson_training_interrupted(void **state)
{
	(void)state;
	const char *src = getenv("LUMEN_SOURCE_DIR");
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/lessons/aics/02-regression-to-mlp.lua", src ? src : ".");
	if (!src || access(p, R_OK) != 0) {
		fprintf(stderr, "test_lesson_interrupt: %s is not there: skipped\n", p);
		skip();
	}
	start("aics/02-regression-to-mlp");
	mark = 0;
	prompt();
	type("print('data ' .. tostring((pcall(data.FashionMNIST, {split = 'test', limit = 1}))))");
	int at = term_wait_line(&T, mark + 1, "data ", false, WAIT);
	if (at < 0) failed("missing", "data ...");
	if (strstr(term_line(&T, at), "data false")) {
		fprintf(stderr, "test_lesson_interrupt: Fashion-MNIST is not installed: skipped\n");
		skip();
	}
	prompt();
	type("for i, s in ipairs((lesson.current()).steps) do "
	     "if s.code:find('function fit(', 1, true) then fit_step = i end end "
	     "print('fit step ' .. tostring(fit_step))");
	at = term_wait_line(&T, mark + 1, "fit step ", false, WAIT);
	int n = 0;
	if (at < 0 || sscanf(strstr(term_line(&T, at), "fit step ") + 9, "%d", &n) != 1 || n < 1)
		failed("the lesson has no step defining fit(model, name, steps)", at < 0 ? "" : term_line(&T, at));
	prompt();
	char cmd[64], where[32];
	snprintf(cmd, sizeof cmd, ":step %d", n);
	command(cmd, "hidden 256:"); /* the step's own training, to its end */
	type("long = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10)) "
	     "fit(long, 'long run', 1000000)");
	interrupt();
	snprintf(where, sizeof where, "step %d of", n);
	command(":where", where);
	command("print('grad mode ' .. tostring(lm.is_grad_enabled()))", "grad mode true");
	command("print('forward ' .. table.concat(long(xte):size(), 'x'))", "forward 1000x10");
	command("print('again ' .. tostring(fit(long, 'long run', 5).train < math.huge))", "again true");
	command(":run", "hidden 256:");
	command(":where", where);
	type(":q");
	if (!term_wait_exit(&T, WAIT)) failed(":q", "the program did not end");
	assert_true(WIFEXITED(T.status) && WEXITSTATUS(T.status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_training_step_interrupted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_lesson_training_interrupted, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
