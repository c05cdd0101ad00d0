/*
 * io.c — the file functions of lumen/io.h in Lua: lm.save / lm.load (safetensors), lm.save_gguf /
 * lm.load_gguf, lm.save_npy / lm.load_npy, lm.load_idx, lm.load_image / lm.save_image (PNG, JPEG).
 *
 * lm.save(path, x) writes one tensor under the name "tensor" with the metadata {lumen = "tensor"},
 * so lm.load gives the tensor back; lm.save(path, {name = tensor, ...}) writes a table (a
 * state_dict) and lm.load gives a table, plus the file's metadata as a second result. A loaded
 * map is owned by a userdata with a __gc until each tensor has its box, so an error while the
 * result table is built (out of memory) leaks nothing. lm.save_gguf writes the tensors and the
 * metadata keys sorted by name (a Lua table has no order; the file is the same every time).
 * Read next: lua/lumen/data/init.lua.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lml.h"
#include "lumen/io.h"

#define MAP_MT "lumen.TensorMap"

/* ---------------------------------------------------------------- options */

static const char *check_path(lua_State *L, int idx)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, idx) != LUA_TSTRING)
		lml_error(L, "path must be a string, got %s", lml_describe(L, idx, d, sizeof d));
	size_t n;
	const char *p = lua_tolstring(L, idx, &n);
	if (n == 0) lml_error(L, "path is empty");
	if (strlen(p) != n) lml_error(L, "path holds a NUL byte");
	return p;
}

/* ---------------------------------------------------------------- a loaded map */

static int map_gc(lua_State *L)
{
	lm_tensor_map *m = luaL_checkudata(L, 1, MAP_MT);
	lm_tensor_map_free(m);
	return 0;
}

static lm_tensor_map *new_map(lua_State *L)
{
	lm_tensor_map *m = lua_newuserdatauv(L, sizeof *m, 0);
	memset(m, 0, sizeof *m);
	if (luaL_newmetatable(L, MAP_MT)) {
		lua_pushcfunction(L, map_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return m;
}

/* Moves tensor i of m into a new box on the stack (the map no longer owns it). */
static void take_tensor(lua_State *L, lm_tensor_map *m, int64_t i)
{
	lm_tensor **box = lml_newbox(L);
	lml_setbox(L, box, m->tensors[i]);
	m->tensors[i] = NULL;
}

/* Loads path into a new map on the stack by load (a second try after a full collection when
 * memory ran out); pushes the metadata table above it. */
static lm_tensor_map *load_map(lua_State *L, const char *path,
                               lm_status (*load)(const char *, lm_tensor_map *))
{
	lm_tensor_map *m = new_map(L);
	lm_status s;
	for (int tries = 0;; tries++) {
		s = load(path, m);
		if (!s || tries || !lml_retry_nomem(L)) break;
	}
	if (s) lml_core_error(L);
	lua_createtable(L, 0, (int)m->nmeta); /* metadata */
	for (int64_t i = 0; i < m->nmeta; i++) {
		lua_pushstring(L, m->meta_values[i]);
		lua_setfield(L, -2, m->meta_keys[i]);
	}
	return m;
}

/* Pushes {name = tensor} of every tensor of m. */
static void push_tensors(lua_State *L, lm_tensor_map *m)
{
	lua_createtable(L, 0, (int)m->n);
	for (int64_t i = 0; i < m->n; i++) {
		take_tensor(L, m, i);
		lua_setfield(L, -2, m->names[i]);
	}
}

/* lm.load(path) -> tensor or {name = tensor}, metadata */
static int l_load(lua_State *L)
{
	const char *path = check_path(L, 1);
	lm_tensor_map *m = load_map(L, path, lm_safetensors_load);
	/* lm.save(path, x)'s file: one tensor named "tensor" and Lumen's metadata key (which lm.save
	 * refuses in a user's metadata, so no table of tensors comes back as a bare tensor) */
	int single = 0;
	for (int64_t i = 0; i < m->nmeta; i++)
		single |= strcmp(m->meta_keys[i], "lumen") == 0 && strcmp(m->meta_values[i], "tensor") == 0;
	if (single && m->n == 1 && strcmp(m->names[0], "tensor") == 0)
		take_tensor(L, m, 0);
	else
		push_tensors(L, m);
	lua_insert(L, -2); /* result, metadata */
	lm_tensor_map_free(m);
	return 2;
}

/* lm.load_gguf(path) -> {name = tensor}, metadata */
static int l_load_gguf(lua_State *L)
{
	const char *path = check_path(L, 1);
	lm_tensor_map *m = load_map(L, path, lm_gguf_load);
	push_tensors(L, m);
	lua_insert(L, -2); /* tensors, metadata */
	lm_tensor_map_free(m);
	return 2;
}

/* ---------------------------------------------------------------- saving */

/* A string at idx that a C string holds whole: no NUL inside (it would cut the name short, and the
 * file would hold another name than the one given). */
static void check_text(lua_State *L, int idx, const char *what)
{
	size_t len;
	const char *p = lua_tolstring(L, idx, &len);
	if (strlen(p) != len)
		lml_error(L, "%s holds a NUL character ('%.40s\\0...'): names and metadata are text", what, p);
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The metadata option {metadata = {k = 'v'}} into scratch arrays (GC-owned userdata), sorted by
 * key; reserved: a key Lumen's own files use (NULL: none). */
static int64_t read_metadata(lua_State *L, int opts, const char *reserved, const char ***keys,
                             const char ***vals)
{
	char d[LML_DESCRIBE_MAX];
	*keys = *vals = NULL;
	if (lua_type(L, opts) != LUA_TTABLE) return 0;
	if (lml_rawfield(L, opts, "metadata") == LUA_TNIL) {
		lua_pop(L, 1);
		return 0;
	}
	if (lua_type(L, -1) != LUA_TTABLE || lml_tobox(L, -1))
		lml_error(L, "option metadata must be a table of strings, got %s",
		          lml_describe(L, -1, d, sizeof d));
	int t = lua_gettop(L);
	int64_t n = 0;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING)
			lml_error(L, "option metadata must map strings to strings, got %s -> %s",
			          lml_describe(L, -2, d, sizeof d), luaL_typename(L, -1));
		check_text(L, -2, "a metadata key");
		check_text(L, -1, "a metadata value");
		if (reserved && strcmp(lua_tostring(L, -2), reserved) == 0)
			lml_error(L, "option metadata: the key 'lumen' is Lumen's own (it marks the file of a "
			          "single tensor); use another key");
		n++;
		lua_pop(L, 1);
	}
	const char **k = lua_newuserdatauv(L, (size_t)(2 * n + 1) * sizeof(char *), 0);
	int64_t i = 0;
	lua_pushnil(L);
	while (lua_next(L, t)) {
		k[i++] = lua_tostring(L, -2);
		lua_pop(L, 1);
	}
	qsort(k, (size_t)n, sizeof *k, by_str);
	for (i = 0; i < n; i++) { /* each key's value (a string the table holds) */
		lua_pushstring(L, k[i]);
		lua_rawget(L, t);
		k[n + i] = lua_tostring(L, -1);
		lua_pop(L, 1);
	}
	/* the metadata table stays on the stack below the scratch, keeping the strings alive */
	*keys = k;
	*vals = k + n;
	return n;
}

/* The table of named tensors at idx into scratch arrays (GC-owned userdata), sorted by name; the
 * table keeps the names and tensors alive. */
static int64_t read_tensors(lua_State *L, int idx, const char ***names, const lm_tensor ***ts)
{
	char d[LML_DESCRIBE_MAX];
	int64_t n = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			lml_error(L, "the table's keys must be strings (tensor names), got key %s",
			          lml_describe(L, -2, d, sizeof d));
		check_text(L, -2, "a tensor name");
		if (!lml_tobox(L, -1))
			lml_error(L, "value of '%.60s' must be a tensor, got %s", lua_tostring(L, -2),
			          lml_describe(L, -1, d, sizeof d));
		lml_checktensor(L, -1, lua_tostring(L, -2));
		n++;
		lua_pop(L, 1);
	}
	*names = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(char *), 0);
	*ts = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof(lm_tensor *), 0);
	int64_t i = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		(*names)[i++] = lua_tostring(L, -2);
		lua_pop(L, 1);
	}
	qsort(*names, (size_t)n, sizeof **names, by_str);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, (*names)[i]);
		lua_rawget(L, idx);
		(*ts)[i] = lml_totensor(L, -1);
		lua_pop(L, 1);
	}
	return n;
}

/* lm.save(path, tensor_or_table [, {metadata = {k = 'v'}}]) */
static int l_save(lua_State *L)
{
	static const lml_field fields[] = {{.key = "metadata", .kind = LML_CUSTOM}, LML_FIELDS_END};
	char d[LML_DESCRIBE_MAX];
	const char *path = check_path(L, 1);
	int unused;
	lml_readopts(L, 3, NULL, fields, &unused); /* the keys; read_metadata reads the value */
	const char **mk, **mv;
	int64_t nmeta = read_metadata(L, 3, "lumen", &mk, &mv);
	lm_status s;
	if (lml_tobox(L, 2)) {
		lm_tensor *t = lml_checktensor(L, 2, "argument 2");
		const char *name = "tensor", *k1 = "lumen", *v1 = "tensor";
		if (nmeta) lml_error(L, "option metadata is for tables of tensors (a single tensor's file "
		                     "carries Lumen's own metadata)");
		s = lm_safetensors_save(path, 1, &name, (const lm_tensor *const *)&t, 1, &k1, &v1);
	} else {
		if (lua_type(L, 2) != LUA_TTABLE)
			lml_error(L, "argument 2 must be a tensor or a table of named tensors, got %s",
			          lml_describe(L, 2, d, sizeof d));
		const char **names;
		const lm_tensor **ts;
		int64_t n = read_tensors(L, 2, &names, &ts);
		s = lm_safetensors_save(path, n, names, ts, nmeta, mk, mv);
	}
	if (s) lml_core_error(L);
	return 0;
}

/* lm.save_gguf(path, {name = tensor, ...} [, {metadata = {k = 'v'}}]) */
static int l_save_gguf(lua_State *L)
{
	static const lml_field fields[] = {{.key = "metadata", .kind = LML_CUSTOM}, LML_FIELDS_END};
	char d[LML_DESCRIBE_MAX];
	const char *path = check_path(L, 1);
	if (lua_type(L, 2) != LUA_TTABLE || lml_tobox(L, 2))
		lml_error(L, "argument 2 must be a table of named tensors, got %s",
		          lml_describe(L, 2, d, sizeof d));
	int unused;
	lml_readopts(L, 3, NULL, fields, &unused);
	const char **mk, **mv, **names;
	const lm_tensor **ts;
	int64_t nmeta = read_metadata(L, 3, NULL, &mk, &mv);
	int64_t n = read_tensors(L, 2, &names, &ts);
	if (lm_gguf_save(path, n, names, ts, nmeta, mk, mv)) lml_core_error(L);
	return 0;
}

/* ---------------------------------------------------------------- npy and idx */

/* lm.save_npy(path, x) */
static int l_save_npy(lua_State *L)
{
	const char *path = check_path(L, 1);
	lm_tensor *t = lml_checktensor(L, 2, "argument 2");
	if (lm_npy_save(path, t)) lml_core_error(L);
	return 0;
}

/* lm.load_npy(path) -> tensor */
static int l_load_npy(lua_State *L)
{
	const char *path = check_path(L, 1);
	LML_RETURN(L, lm_npy_load(path));
}

/* lm.load_idx(path [, {scale=, limit=}]) -> tensor (scale given: float32 x scale) */
static int l_load_idx(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(lm_idx_opts, scale, LML_NUMBER),
		LML_FIELD(lm_idx_opts, limit, LML_INTEGER),
		LML_FIELDS_END,
	};
	const char *path = check_path(L, 1);
	lm_idx_opts o = {0};
	if (lml_readopts(L, 2, NULL, fields, &o) & 1) {
		o.to_float32 = true;
		if (!(o.scale > 0) || o.scale == HUGE_VAL)
			lml_error(L, "option scale must be a positive number, got %g", o.scale);
	}
	if (o.limit < 0) lml_error(L, "option limit must be non-negative, got %lld", (long long)o.limit);
	LML_RETURN(L, lm_idx_load(path, &o));
}

/* ---------------------------------------------------------------- images */

/* lm.load_image's options as lml_readopts stores them. */
typedef struct image_load_opts {
	int mode;       /* index in image_modes, -1: the file's channels */
	lm_dtype dtype;
} image_load_opts;

static const char *const image_modes[] = {"gray", "rgb", "rgba", NULL};

/* lm.load_image(path [, {mode = 'gray' | 'rgb' | 'rgba', dtype = 'float32' | 'float64' | 'uint8'}])
 * -> tensor (C, H, W) */
static int l_load_image(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(image_load_opts, mode, LML_NAME, .names = image_modes, .def = "nil",
		          .doc = "the channels: 'gray', 'rgb', 'rgba', or nil for the file's own"),
		LML_FIELD(image_load_opts, dtype, LML_DTYPE, .def = "'float32'",
		          .doc = "float32 or float64 (in [0, 1]) or uint8 (the bytes)"),
		LML_FIELDS_END,
	};
	const char *path = check_path(L, 1);
	image_load_opts io = {-1, LM_FLOAT32};
	lml_readopts(L, 2, NULL, fields, &io);
	if (io.dtype != LM_FLOAT32 && io.dtype != LM_FLOAT64 && io.dtype != LM_UINT8)
		lml_error(L, "option dtype must be 'float32', 'float64' or 'uint8', got '%s'", lm_dtype_name(io.dtype));
	lm_image_load_opts o = {io.mode < 0 ? LM_IMAGE_ASIS : (lm_image_mode)(LM_IMAGE_GRAY + io.mode), io.dtype};
	LML_RETURN(L, lm_image_load(path, &o));
}

/* lm.save_image's options as lml_readopts stores them (a boolean is an int there). */
typedef struct image_save_opts {
	int64_t nrow, padding;
	int quality, normalize;
} image_save_opts;

/* lm.save_image(path, x [, {nrow = 8, padding = 2, quality = 90, normalize = false}]) */
static int l_save_image(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(image_save_opts, nrow, LML_INTEGER, .def = "8", .doc = "a batch: images per row of the grid"),
		LML_FIELD(image_save_opts, padding, LML_INTEGER, .def = "2",
		          .doc = "a batch: pixels of 0 between the images and around them"),
		LML_FIELD(image_save_opts, quality, LML_INT, .def = "90", .doc = "JPEG quality, 1..100"),
		LML_FIELD(image_save_opts, normalize, LML_BOOLEAN, .def = "false",
		          .doc = "rescale by the min and max to [0, 1] first"),
		LML_FIELDS_END,
	};
	const char *path = check_path(L, 1);
	lm_tensor *x = lml_checktensor(L, 2, "argument 2");
	image_save_opts so = {8, 2, 90, 0};
	lml_readopts(L, 3, NULL, fields, &so);
	if (so.nrow < 1) lml_error(L, "option nrow must be at least 1, got %lld", (long long)so.nrow);
	if (so.padding < 0 || so.padding > 1000000)
		lml_error(L, "option padding must be in 0..1000000, got %lld", (long long)so.padding);
	if (so.quality < 1 || so.quality > 100) lml_error(L, "option quality must be in 1..100, got %d", so.quality);
	lm_image_save_opts o = {.nrow = so.nrow, .padding = so.padding, .quality = so.quality,
	                        .normalize = so.normalize != 0};
	if (lm_image_save(path, x, &o)) lml_core_error(L);
	return 0;
}

static const luaL_Reg functions[] = {
	{"save", l_save},
	{"load", l_load},
	{"save_gguf", l_save_gguf},
	{"load_gguf", l_load_gguf},
	{"save_npy", l_save_npy},
	{"load_npy", l_load_npy},
	{"load_idx", l_load_idx},
	{"load_image", l_load_image},
	{"save_image", l_save_image},
	{NULL, NULL},
};

void lml_open_io(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lml_setfuncs(L, lm, "lm.", functions, 0);
}
