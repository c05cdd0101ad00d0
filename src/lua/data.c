/*
 * data.c — the C side of lua/lumen/data/ and of the training examples: batch gathering by index
 * (lm._data.take), seeded permutations, whole-batch crops and flips, and the deferred Ctrl-C of a
 * training loop (lm._data.catch_interrupt).
 *
 * Deferred Ctrl-C: while a loop has asked for it, SIGINT only sets a flag that the loop reads
 * between steps (so a step is never cut in half: the model and the optimizer stay consistent and
 * usable in the REPL). A second Ctrl-C before the loop has seen the first hands the signal to the
 * handler that was there before (the program's: it interrupts the running code; a third within a
 * second ends the process), so a loop stuck inside a step can still be stopped.
 * Read next: lua/lumen/data/init.lua.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <lualib.h>

#include "lml.h"
#include "lumen/optim.h"

/* ---------------------------------------------------------------- batches */

/* take(src, perm (int64, 0-based), first (0-based), count) -> rows src[perm[first .. first+count)] */
static int d_take(lua_State *L)
{
	lm_tensor *src = lml_checktensor(L, 1, "data");
	lm_tensor *perm = lml_checktensor(L, 2, "permutation");
	int64_t first = lml_checkinteger(L, 3, "first"), count = lml_checkinteger(L, 4, "count");
	if (lm_tensor_dtype(perm) != LM_INT64 || lm_tensor_ndim(perm) != 1 || !lm_tensor_is_contiguous(perm))
		lml_error(L, "the permutation must be a contiguous 1-D int64 tensor");
	if (first < 0 || count < 0 || first > lm_tensor_numel(perm) - count)
		lml_error(L, "rows %lld..%lld are outside the permutation of %lld", (long long)first + 1,
		          (long long)(first + count), (long long)lm_tensor_numel(perm));
	LML_RETURN(L, lm_take_rows(src, (const int64_t *)lm_tensor_data(perm) + first, count));
}

/* randperm(n, seed, stream) -> int64 tensor of 0..n-1 permuted */
static int d_randperm(lua_State *L)
{
	int64_t n = lml_checkinteger(L, 1, "n");
	if (n < 0) lml_error(L, "n must be >= 0, got %lld", (long long)n);
	uint64_t seed = (uint64_t)lml_checkinteger(L, 2, "seed"), stream = (uint64_t)lml_checkinteger(L, 3, "stream");
	lm_tensor *t;
	LML_PUSH(L, t, lm_empty(1, &n, LM_INT64));
	if (lm_randperm_seeded(n, seed, stream, lm_tensor_data(t))) lml_core_error(L);
	return 1;
}

/* crop(x, offsets (N, 2) int64, oh, ow, pad) */
static int d_crop(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "batch"), *o = lml_checktensor(L, 2, "offsets");
	int64_t oh = lml_checkinteger(L, 3, "height"), ow = lml_checkinteger(L, 4, "width");
	int64_t pad = lml_checkinteger(L, 5, "padding");
	LML_RETURN(L, lm_crop_batch(x, o, oh, ow, pad));
}

/* flip(x, mask (N)) */
static int d_flip(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "batch"), *m = lml_checktensor(L, 2, "mask");
	LML_RETURN(L, lm_flip_batch(x, m));
}

/* ---------------------------------------------------------------- deferred Ctrl-C */

static volatile sig_atomic_t requested; /* a Ctrl-C arrived since the loop last looked */
static volatile sig_atomic_t capturing;
static struct sigaction previous;       /* the handler to give a second Ctrl-C to */

static void on_sigint(int sig)
{
	if (!requested) {
		requested = 1;
		return;
	}
	/* the second press before the loop noticed the first: the previous handler's turn */
	capturing = 0;
	sigaction(SIGINT, &previous, NULL);
	raise(sig); /* delivered when this handler returns */
}

/* catch_interrupt(on) -> whether a Ctrl-C was pending (and clears it) */
static int d_catch(lua_State *L)
{
	int on = lua_toboolean(L, 1);
	int was = requested;
	requested = 0;
	struct sigaction sa, cur;
	sigaction(SIGINT, NULL, &cur);
	if (on) {
		if (cur.sa_handler != on_sigint) { /* not ours already: keep the one to chain to */
			memset(&sa, 0, sizeof sa);
			sa.sa_handler = on_sigint;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGINT, &sa, &previous);
		}
		capturing = 1;
	} else if (capturing || cur.sa_handler == on_sigint) {
		if (cur.sa_handler == on_sigint) sigaction(SIGINT, &previous, NULL);
		capturing = 0;
	}
	lua_pushboolean(L, was);
	return 1;
}

/* interrupt_requested() -> whether a Ctrl-C arrived since catch_interrupt(true) */
static int d_requested(lua_State *L)
{
	lua_pushboolean(L, requested != 0);
	return 1;
}

/* ---------------------------------------------------------------- terminals and memory */

/* isatty(file) -> whether the Lua file (io.stdout, ...) is a terminal */
static int d_isatty(lua_State *L)
{
	luaL_Stream *st = luaL_testudata(L, 1, LUA_FILEHANDLE);
	lua_pushboolean(L, st && st->f && isatty(fileno(st->f)));
	return 1;
}

/* peak_rss() -> the process's peak resident set size in bytes (getrusage) */
static int d_peak_rss(lua_State *L)
{
	struct rusage ru;
	lua_pushinteger(L, getrusage(RUSAGE_SELF, &ru) == 0 ? (lua_Integer)ru.ru_maxrss * 1024 : -1);
	return 1;
}

static const luaL_Reg data_fns[] = {
	{"isatty", d_isatty},
	{"peak_rss", d_peak_rss},
	{"take", d_take},
	{"randperm", d_randperm},
	{"crop", d_crop},
	{"flip", d_flip},
	{"catch_interrupt", d_catch},
	{"interrupt_requested", d_requested},
	{NULL, NULL},
};

void lml_open_data(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lua_newtable(L);
	lml_setfuncs(L, -1, "data.", data_fns, 0);
	lua_setfield(L, lm, "_data");
}
