/*
 * kernel_opts.c — the options of each `kernels` call, as one table: which keys a call takes, the
 * values of its string options, defaults, and a line of text each. The binding checks a call's
 * options against its row (kernels.c: lml_kernel_opts), and :help kernels.<call> prints the same
 * row (lm._kernels.options, read by lua/lumen/help.lua), so what help says and what the binding
 * accepts cannot drift; tests/lua/test_kernels_options.lua runs every documented option and value
 * through the binding and the core.
 *
 * Read next: kernels.c, include/lumen/kernels.h (what the core does with each option).
 */
#include <string.h>

#include "lml.h"
#include "lumen/kernels.h"

typedef enum { K_STRING, K_INTEGER, K_NUMBER, K_BOOLEAN } kind;

/* One option: key, kind, values of a string option ('|' between them; NULL: any string), the
 * default as help shows it, a line of text. */
typedef struct kopt {
	const char *key;
	kind kind;
	const char *values;
	const char *def;
	const char *doc;
} kopt;

/* One call: its name, its positional arguments as the signature shows them, its options. */
typedef struct kcall {
	const char *name;
	const char *args;
	const kopt *opts;
} kcall;

#define BACKEND(values, def)                                                                        \
	{"backend", K_STRING, values, def, "where it runs: the SIMT emulator (traced, modelled cycles), " \
	 "the CPU or a GPU (measured); 'auto' picks cuda when a GPU exists"}
#define COMMON                                                                                      \
	{"trace", K_BOOLEAN, NULL, "false", "record info.trace (every thread's loads, stores, adds, "   \
	 "barriers); needs the emulator. backend='emu' records one unless trace=false"},                \
	{"trace_cap", K_INTEGER, NULL, "1048576", "events kept before the trace is truncated"},         \
	{"repeats", K_INTEGER, NULL, "5", "timed runs after a warm-up (cpu, cuda); the median is "     \
	 "reported"},                                                                                  \
	{NULL, 0, NULL, NULL, NULL}
#define ALL_BACKENDS "emu|cpu|cuda|auto"
#define GPU_BACKENDS "emu|cuda|auto" /* the patterns that show what only a GPU has */
#define POW2_BLOCK(def)                                                                             \
	{"block", K_INTEGER, NULL, def, "threads per block: a power of two from 1 to 1024"}

static const kopt reduce_opts[] = {
	{"algo", K_STRING, "naive|convergent|shared|coarsened", "shared",
	 "the variant: divergent strides in global memory, convergent strides, a tree in shared memory, "
	 "or coarsened (several elements per thread first)"},
	BACKEND(ALL_BACKENDS, "auto"),
	POW2_BLOCK("one block when the input fits, else 256"),
	{"coarsen", K_INTEGER, NULL, "4 (algo 'coarsened'; the others take 1)",
	 "elements each thread adds before the tree"},
	COMMON,
};

static const kopt scan_opts[] = {
	{"algo", K_STRING, "kogge-stone|brent-kung|hierarchical", "kogge-stone",
	 "the variant: Kogge-Stone (one element per thread), Brent-Kung (two per thread), or "
	 "hierarchical (coarsened sections scanned in three phases)"},
	{"inclusive", K_BOOLEAN, NULL, "true", "inclusive (out[i] includes x[i]) or exclusive scan"},
	BACKEND(ALL_BACKENDS, "auto"),
	POW2_BLOCK("one block when the input fits, else 256"),
	{"coarsen", K_INTEGER, NULL, "4 (algo 'hierarchical'; the others take 1)",
	 "elements per thread of the hierarchical scan"},
	COMMON,
};

static const kopt histogram_opts[] = {
	{"algo", K_STRING, "global-atomic|privatized|aggregated", "privatized",
	 "the variant: one global atomic per element, a private histogram per block in shared memory, "
	 "or privatized with runs of equal bins added by one atomic"},
	BACKEND(ALL_BACKENDS, "auto"),
	{"block", K_INTEGER, NULL, "one block when the input fits, else 256",
	 "threads per block: any number from 1 to 1024"},
	{"coarsen", K_INTEGER, NULL, "1 (8 for algo 'aggregated')", "consecutive elements per thread"},
	COMMON,
};

static const kopt matmul_opts[] = {
	{"algo", K_STRING, "naive|tiled", "tiled",
	 "the variant: every operand from global memory, or tile x tile blocks staged in shared memory"},
	{"tile", K_INTEGER, NULL, "16", "tile width 1..32 (the block is tile x tile threads)"},
	BACKEND(ALL_BACKENDS, "auto"),
	COMMON,
};

static const kopt conv2d_opts[] = {
	{"algo", K_STRING, "naive|constant|tiled|tiled-input|tiled-output", "tiled",
	 "the variant: the mask in global or constant memory, or input tiles with their halo in shared "
	 "memory ('tiled' is 'tiled-input')"},
	{"tile", K_INTEGER, NULL, "16", "output tile width 1..32 (tiled-input: tile + mask side - 1 <= 32)"},
	BACKEND(ALL_BACKENDS, "auto"),
	COMMON,
};

static const kopt spmv_opts[] = {
	{"format", K_STRING, "coo|csr|ell|jds", "csr", "the sparse format the kernel reads"},
	BACKEND(ALL_BACKENDS, "auto"),
	{"block", K_INTEGER, NULL, "one block when the work fits, else 256",
	 "threads per block: any number from 1 to 1024"},
	COMMON,
};

static const kopt divergence_opts[] = {
	{"pattern", K_STRING, "even-odd|half-warp|data|warp|none", "even-odd",
	 "which lanes take which path: by even/odd lane, by half warp, by a data-dependent test, by "
	 "whole warps (no divergence), or no branch"},
	{"warps", K_INTEGER, NULL, "4", "warps of 32 threads, 1..4096"},
	BACKEND(GPU_BACKENDS, "auto (cuda with a GPU, else emu): there are no warps on the cpu"),
	{"block", K_INTEGER, NULL, "the threads, up to 256",
	 "threads per block: a multiple of 32 up to 1024 that divides the threads"},
	COMMON,
};

static const kopt streams_opts[] = {
	{"segments", K_INTEGER, NULL, "4", "segments of the vector add, each on its own stream (1..255)"},
	{"bytes", K_INTEGER, NULL, "262144 (emu), 67108864 (cuda)",
	 "bytes of each float32 vector (a multiple of 4)"},
	{"copy_engines", K_INTEGER, NULL, "2", "emu: copy engines, 1 or 2 (two overlap both directions)"},
	{"pcie_gbps", K_NUMBER, NULL, "25", "emu: host-device bandwidth in GB/s"},
	{"clock_ghz", K_NUMBER, NULL, "1.5", "emu: the clock that turns modelled cycles into time"},
	{"sms", K_INTEGER, NULL, "8", "emu: multiprocessors the kernel's blocks spread over"},
	{"block", K_INTEGER, NULL, "256", "threads per block of the vector add, 1..1024"},
	BACKEND(GPU_BACKENDS, "auto (cuda with a GPU, else emu): there is no cpu run"),
	COMMON,
};

static const kcall calls[] = {
	{"reduce", "x", reduce_opts},
	{"scan", "x", scan_opts},
	{"histogram", "bytes_or_tensor, bins", histogram_opts},
	{"matmul", "a, b", matmul_opts},
	{"conv2d", "img, mask", conv2d_opts},
	{"spmv", "A, x", spmv_opts},
	{"divergence", "", divergence_opts},
	{"streams", "", streams_opts},
	{NULL, NULL, NULL},
};

static const kcall *find_call(const char *name)
{
	for (const kcall *c = calls; c->name; c++)
		if (strcmp(c->name, name) == 0) return c;
	return NULL;
}

static const kopt *find_opt(const kcall *c, const char *key)
{
	for (const kopt *o = c->opts; o->key; o++)
		if (strcmp(o->key, key) == 0) return o;
	return NULL;
}

/* "a, b or c" of the call's keys (or of a string option's values, quoted), into buf. */
static const char *list_keys(const kcall *c, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (const kopt *o = c->opts; o->key && n < cap; o++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? (o[1].key ? ", " : " or ") : "", o->key);
	return buf;
}

static const char *list_values(const char *values, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (const char *p = values; *p && n < cap;) {
		const char *e = strchr(p, '|');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		n += (size_t)snprintf(buf + n, cap - n, "%s'%.*s'", n ? (e ? ", " : " or ") : "", (int)len, p);
		p += len + (e != NULL);
	}
	return buf;
}

static int has_value(const char *values, const char *s)
{
	size_t len = strlen(s);
	for (const char *p = values; *p;) {
		const char *e = strchr(p, '|');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == len && strncmp(p, s, n) == 0) return 1;
		p += n + (e != NULL);
	}
	return 0;
}

/* ---------------------------------------------------------------- reading a call's options */

/* Field k of the options table at t, checked against its row; pushes it (nil when absent). */
static int field(lua_State *L, int t, const kopt *o)
{
	char d[LML_DESCRIBE_MAX], vb[200];
	int tp = lml_rawfield(L, t, o->key);
	if (tp == LUA_TNIL) return 0;
	switch (o->kind) {
	case K_STRING:
		if (tp != LUA_TSTRING)
			lml_error(L, "option %s must be a string, got %s", o->key, lml_describe(L, -1, d, sizeof d));
		/* backend is left to the core, whose message says why a pattern lacks a run */
		if (o->values && strcmp(o->key, "backend") != 0 && !has_value(o->values, lua_tostring(L, -1)))
			lml_error(L, "unknown %s '%.40s' (expected %s)", o->key, lua_tostring(L, -1),
			          list_values(o->values, vb, sizeof vb));
		break;
	case K_BOOLEAN:
		if (tp != LUA_TBOOLEAN)
			lml_error(L, "option %s must be a boolean, got %s", o->key, lml_describe(L, -1, d, sizeof d));
		break;
	case K_INTEGER: {
		char what[40];
		snprintf(what, sizeof what, "option %s", o->key);
		/* 0 means "the default" to the core: given, a count must be at least 1 */
		if (lml_checkinteger(L, -1, what) < 1)
			lml_error(L, "option %s must be at least 1, got %s", o->key, lml_describe(L, -1, d, sizeof d));
		break;
	}
	default: {
		char what[40];
		snprintf(what, sizeof what, "option %s", o->key);
		if (!(lml_checknumber(L, -1, what) > 0))
			lml_error(L, "option %s must be greater than 0, got %s", o->key,
			          lml_describe(L, -1, d, sizeof d));
		break;
	}
	}
	return 1;
}

static const char *get_string(lua_State *L, int t, const kcall *c, const char *k)
{
	const kopt *o = find_opt(c, k);
	const char *s = NULL;
	if (o && field(L, t, o)) s = lua_tostring(L, -1); /* alive: the options table holds it */
	if (o) lua_pop(L, 1);
	return s;
}

static int64_t get_integer(lua_State *L, int t, const kcall *c, const char *k)
{
	const kopt *o = find_opt(c, k);
	int64_t v = 0;
	if (o && field(L, t, o)) lml_isinteger(L, -1, &v);
	if (o) lua_pop(L, 1);
	return v;
}

static double get_number(lua_State *L, int t, const kcall *c, const char *k)
{
	const kopt *o = find_opt(c, k);
	double v = 0;
	if (o && field(L, t, o)) v = lua_tonumber(L, -1);
	if (o) lua_pop(L, 1);
	return v;
}

static int get_boolean(lua_State *L, int t, const kcall *c, const char *k)
{
	const kopt *o = find_opt(c, k);
	int v = -1;
	if (o && field(L, t, o)) v = lua_toboolean(L, -1);
	if (o) lua_pop(L, 1);
	return v;
}

void lml_kernel_opts(lua_State *L, int idx, const char *call, lm_kernel_opts *o)
{
	const kcall *c = find_call(call);
	lm_kernel_opts_init(o);
	if (!c) lml_error(L, "no options table for kernels.%s", call); /* a bug in this file */
	if (lua_isnoneornil(L, idx)) return;
	char d[LML_DESCRIBE_MAX], list[300];
	if (lua_type(L, idx) != LUA_TTABLE || lml_tobox(L, idx))
		lml_error(L, "options must be a table such as {%s=...}, got %s", c->opts[0].key,
		          lml_describe(L, idx, d, sizeof d));
	int t = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pop(L, 1);
		const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
		if (!k) {
			lml_error(L, "options must have string keys (kernels.%s takes %s), got key %s", c->name,
			          list_keys(c, list, sizeof list), lml_describe(L, -1, d, sizeof d));
		}
		if (!find_opt(c, k))
			lml_error(L, "unknown option '%.40s' (kernels.%s takes %s)", k, c->name,
			          list_keys(c, list, sizeof list));
	}
	const char *b = get_string(L, t, c, "backend");
	if (b) o->backend = b;
	o->algo = get_string(L, t, c, "algo");
	o->format = get_string(L, t, c, "format");
	o->pattern = get_string(L, t, c, "pattern");
	o->block = get_integer(L, t, c, "block");
	o->coarsen = get_integer(L, t, c, "coarsen");
	o->trace = get_boolean(L, t, c, "trace");
	o->inclusive = get_boolean(L, t, c, "inclusive");
	o->trace_cap = get_integer(L, t, c, "trace_cap");
	int64_t r = get_integer(L, t, c, "repeats");
	if (r > 1000) lml_error(L, "option repeats must lie in 1..1000, got %lld", (long long)r);
	o->repeats = (int)r;
	o->tile = get_integer(L, t, c, "tile");
	o->warps = get_integer(L, t, c, "warps");
	o->segments = get_integer(L, t, c, "segments");
	o->bytes = get_integer(L, t, c, "bytes");
	o->copy_engines = get_integer(L, t, c, "copy_engines");
	o->sms = get_integer(L, t, c, "sms");
	o->pcie_gbps = get_number(L, t, c, "pcie_gbps");
	o->clock_ghz = get_number(L, t, c, "clock_ghz");
}

/* ---------------------------------------------------------------- the table for help */

static const char *const kind_names[] = {"string", "integer", "number", "boolean"};

void lml_push_kernel_options(lua_State *L)
{
	lua_newtable(L);
	for (const kcall *c = calls; c->name; c++) {
		lua_newtable(L);
		lua_pushstring(L, c->args);
		lua_setfield(L, -2, "args");
		int i = 0;
		for (const kopt *o = c->opts; o->key; o++) {
			lua_createtable(L, 0, 5);
			lua_pushstring(L, o->key);
			lua_setfield(L, -2, "key");
			lua_pushstring(L, kind_names[o->kind]);
			lua_setfield(L, -2, "kind");
			if (o->values) {
				lua_newtable(L);
				int j = 0;
				for (const char *p = o->values; *p;) {
					const char *e = strchr(p, '|');
					size_t n = e ? (size_t)(e - p) : strlen(p);
					lua_pushlstring(L, p, n);
					lua_rawseti(L, -2, ++j);
					p += n + (e != NULL);
				}
				lua_setfield(L, -2, "values");
			}
			lua_pushstring(L, o->def);
			lua_setfield(L, -2, "default");
			lua_pushstring(L, o->doc);
			lua_setfield(L, -2, "doc");
			lua_rawseti(L, -2, ++i);
		}
		lua_setfield(L, -2, c->name);
	}
}
