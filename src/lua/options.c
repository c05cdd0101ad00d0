/*
 * options.c — the readers every binding shares for what users pass as tables and names: option
 * tables read through a field table (key, kind, offset), names looked up in a list (the idea of
 * luaL_checkoption, with Lumen's messages), the one type error, and the creation options
 * {dtype=, requires_grad=, device=}.
 *
 * One wording each, so that a user meets the same sentence in every function:
 *   <fname>: unknown option 'k' (<fname> takes a, b or c)
 *   <fname>: options must have string keys (<fname> takes a, b or c), got key X
 *   <fname>: options must be a table such as {a=...}, got X
 *   <fname>: option k must be a boolean, got X       (an integer, a number, a string, a tensor)
 *   <fname>: option k must be 'a', 'b' or 'c', got X  (a name)
 * Tables are read raw (a user's __index could close or replace what a binding holds); every key
 * is checked before any value is read, then the fields are read in the field table's order, so
 * the error a bad table gets is the same on every run. Read next: kernel_opts.c (field tables
 * with their documentation, shown by :help), functional.c.
 */
#include <limits.h>
#include <string.h>

#include "lml.h"
#include "lumen/cuda.h"
#include "lumen/opencl.h"

/* ---------------------------------------------------------------- messages */

_Noreturn int lml_typeerror(lua_State *L, int idx, const char *what, const char *expected)
{
	char d[LML_DESCRIBE_MAX];
	lml_error(L, "%s must be %s, got %s", what, expected, lml_describe(L, idx, d, sizeof d));
}

/* Appends item i of n as "a, b or c" reads (quoted 'a' when quote). Returns the new length. */
static size_t list_add(char *buf, size_t cap, size_t len, int i, int n, const char *item, int quote)
{
	if (len >= cap) return len;
	const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
	int w = snprintf(buf + len, cap - len, quote ? "%s'%s'" : "%s%s", sep, item);
	return w < 0 ? len : len + (size_t)w;
}

const char *lml_list(const char *const *items, int quote, char *buf, size_t cap)
{
	int n = 0;
	while (items[n]) n++;
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) len = list_add(buf, cap, len, i, n, items[i], quote);
	return buf;
}

/* "a, b or c" of the fields' keys. */
static const char *list_keys(const lml_field *fields, char *buf, size_t cap)
{
	int n = 0;
	while (fields[n].key) n++;
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < n; i++) len = list_add(buf, cap, len, i, n, fields[i].key, 0);
	return buf;
}

/* ---------------------------------------------------------------- names */

int lml_checkname(lua_State *L, int idx, const char *what, const char *const *names)
{
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *s = lua_tostring(L, idx);
		for (int i = 0; names[i]; i++)
			if (strcmp(s, names[i]) == 0) return i;
	}
	char list[LML_LIST_MAX];
	lml_typeerror(L, idx, what, lml_list(names, 1, list, sizeof list));
}

int lml_optname(lua_State *L, int idx, const char *what, const char *const *names, int def)
{
	return lua_isnoneornil(L, idx) ? def : lml_checkname(L, idx, what, names);
}

/* ---------------------------------------------------------------- option tables */

int lml_rawfield(lua_State *L, int t, const char *k)
{
	t = lua_absindex(L, t);
	lua_pushstring(L, k);
	return lua_rawget(L, t);
}

int lml_isopts(lua_State *L, int idx)
{
	if (lua_type(L, idx) != LUA_TTABLE) return 0;
	int arr = lua_rawgeti(L, idx, 1) != LUA_TNIL;
	lua_pop(L, 1);
	return !arr;
}

static const lml_field *find_field(const lml_field *fields, const char *k)
{
	for (const lml_field *f = fields; f->key; f++)
		if (strcmp(f->key, k) == 0) return f;
	return NULL;
}

/* An integer or a pair {h, w} (not a tensor) at idx into v[2]. */
static void read_pair(lua_State *L, int idx, const char *what, int64_t *v)
{
	if (lua_type(L, idx) == LUA_TNUMBER) {
		v[0] = v[1] = lml_checkinteger(L, idx, what);
	} else if (lua_type(L, idx) == LUA_TTABLE && !lml_tobox(L, idx) && lua_rawlen(L, idx) == 2) {
		for (int i = 0; i < 2; i++) {
			lua_rawgeti(L, idx, i + 1);
			v[i] = lml_checkinteger(L, -1, what);
			lua_pop(L, 1);
		}
	} else {
		lml_typeerror(L, idx, what, "an integer or a pair {h, w}");
	}
}

/* The value at idx (the stack top) of field f, checked for its kind and stored at dst. */
static void read_field(lua_State *L, int idx, const lml_field *f, void *dst)
{
	char what[48];
	snprintf(what, sizeof what, "option %s", f->key);
	switch (f->kind) {
	case LML_BOOLEAN:
		if (!lua_isboolean(L, idx)) lml_typeerror(L, idx, what, "a boolean");
		*(int *)dst = lua_toboolean(L, idx);
		break;
	case LML_INTEGER: *(int64_t *)dst = lml_checkinteger(L, idx, what); break;
	case LML_INT: {
		int64_t v = lml_checkinteger(L, idx, what);
		if (v < INT_MIN || v > INT_MAX)
			lml_error(L, "%s must be an integer in %d..%d, got %lld", what, INT_MIN, INT_MAX,
			          (long long)v);
		*(int *)dst = (int)v;
		break;
	}
	case LML_NUMBER: *(double *)dst = lml_checknumber(L, idx, what); break;
	case LML_STRING:
		if (lua_type(L, idx) != LUA_TSTRING) lml_typeerror(L, idx, what, "a string");
		*(const char **)dst = lua_tostring(L, idx); /* alive: the options table holds it */
		break;
	case LML_NAME: *(int *)dst = lml_checkname(L, idx, what, f->names); break;
	case LML_DTYPE: *(lm_dtype *)dst = lml_checkdtype(L, idx, what); break;
	case LML_TENSOR: *(lm_tensor **)dst = lml_checktensor(L, idx, what); break;
	case LML_PAIR: read_pair(L, idx, what, dst); break;
	case LML_CUSTOM: break;
	}
	if (f->check) f->check(L, idx, f, dst);
}

unsigned lml_readopts(lua_State *L, int idx, const char *noun, const lml_field *fields, void *out)
{
	if (lua_isnoneornil(L, idx)) return 0;
	char d[LML_DESCRIBE_MAX], keys[LML_LIST_MAX];
	if (lua_type(L, idx) != LUA_TTABLE || lml_tobox(L, idx))
		lml_error(L, "options must be a table such as {%s=...}, got %s", fields[0].key,
		          lml_describe(L, idx, d, sizeof d));
	int t = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		lua_pop(L, 1); /* the key stays for lua_next: never converted (lua_tostring on a string only) */
		const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
		if (!k)
			lml_error(L, "options must have string keys (%s takes %s), got key %s", lml_fname(L),
			          list_keys(fields, keys, sizeof keys), lml_describe(L, -1, d, sizeof d));
		if (!find_field(fields, k))
			lml_error(L, "unknown %s '%.40s' (%s takes %s)", noun ? noun : "option", k, lml_fname(L),
			          list_keys(fields, keys, sizeof keys));
	}
	unsigned given = 0;
	for (int i = 0; fields[i].key; i++) {
		if (lml_rawfield(L, t, fields[i].key) != LUA_TNIL) {
			read_field(L, lua_gettop(L), &fields[i], (char *)out + fields[i].offset);
			given |= 1u << i;
		}
		lua_pop(L, 1);
	}
	return given;
}

void lml_push_fields(lua_State *L, const lml_field *fields)
{
	static const char *const kinds[] = {
		[LML_BOOLEAN] = "boolean", [LML_INTEGER] = "integer", [LML_INT] = "integer",
		[LML_NUMBER] = "number",   [LML_STRING] = "string",   [LML_NAME] = "string",
		[LML_DTYPE] = "dtype",     [LML_TENSOR] = "tensor",   [LML_PAIR] = "integer or {h, w}",
		[LML_CUSTOM] = "value",
	};
	lua_newtable(L);
	for (int i = 0; fields[i].key; i++) {
		const lml_field *f = &fields[i];
		lua_createtable(L, 0, 5);
		lml_setstring(L, "key", f->key);
		lml_setstring(L, "kind", kinds[f->kind]);
		if (f->names) {
			lua_newtable(L);
			for (int j = 0; f->names[j]; j++) {
				lua_pushstring(L, f->names[j]);
				lua_rawseti(L, -2, j + 1);
			}
			lua_setfield(L, -2, "values");
		}
		lml_setstring(L, "default", f->def ? f->def : "none");
		lml_setstring(L, "doc", f->doc ? f->doc : "");
		lua_rawseti(L, -2, i + 1);
	}
}

/* ---------------------------------------------------------------- result tables */

void lml_setint(lua_State *L, const char *k, int64_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

void lml_setnumber(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

void lml_setstring(lua_State *L, const char *k, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

void lml_setboolean(lua_State *L, const char *k, int v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, k);
}

void lml_push_array(lua_State *L, int64_t n, void (*push)(lua_State *L, const void *ud, int64_t i),
                    const void *ud)
{
	lua_createtable(L, (int)(n < 1 << 20 ? n : 1 << 20), 0);
	for (int64_t i = 0; i < n; i++) {
		push(L, ud, i);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* ---------------------------------------------------------------- dtypes, devices, creation */

lm_dtype lml_checkdtype(lua_State *L, int idx, const char *what)
{
	lm_dtype dt;
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, idx) != LUA_TSTRING) lml_typeerror(L, idx, what, "a dtype name such as 'float32'");
	if (lm_dtype_from_name(lua_tostring(L, idx), &dt))
		lml_error(L, "%s: unknown dtype %s (expected float32, float64, float16, bfloat16, int64, int32, int8, uint8, q8_0 or q4_0)",
		          what, lml_describe(L, idx, d, sizeof d));
	return dt;
}

/* option device: 'cpu', 'cuda' or 'cuda:N' */
static void check_device(lua_State *L, int idx, const lml_field *f, void *dst)
{
	(void)f;
	if (lua_type(L, idx) == LUA_TSTRING) {
		const char *s = lua_tostring(L, idx);
		if (strcmp(s, "cpu") == 0) {
			*(lm_device *)dst = LM_CPU;
			return;
		}
		if (strcmp(s, "cuda") == 0 || strncmp(s, "cuda:", 5) == 0) {
			*(lm_device *)dst = LM_CUDA;
			return;
		}
		if (strcmp(s, "opencl") == 0) {
			*(lm_device *)dst = LM_OPENCL;
			return;
		}
	}
	lml_typeerror(L, idx, "device", "'cpu', 'cuda' or 'opencl'");
}

void lml_checkopts(lua_State *L, int idx, lml_opts *o)
{
	static const lml_field fields[] = {
		LML_FIELD(lml_opts, dtype, LML_DTYPE),
		LML_FIELD(lml_opts, requires_grad, LML_BOOLEAN),
		LML_FIELD(lml_opts, device, LML_CUSTOM, .check = check_device),
		LML_FIELDS_END,
	};
	*o = (lml_opts){.dtype = LM_FLOAT32, .device = LM_CPU};
	unsigned set = lml_readopts(L, idx, NULL, fields, o);
	o->has_dtype = set & 1;
	o->has_device = (set >> 2) & 1;
}

void lml_checkdevice(lua_State *L, const lml_opts *o)
{
	if (o->device == LM_OPENCL) lml_noopencl(L);
	if (o->device != LM_CPU) lml_nocuda(L);
}

_Noreturn void lml_noopencl(lua_State *L)
{
	if (!lm_opencl_is_available())
		lml_error(L, "device 'opencl' is not available: %s", lm_opencl_unavailable_reason());
	lml_error(L, "device 'opencl' at creation is not supported: create the tensor on the CPU and "
	          "move it with :to('opencl')");
}

_Noreturn void lml_nocuda(lua_State *L)
{
	if (!lm_cuda_is_available())
		lml_error(L, "device 'cuda' is not available (no GPU): %s", lm_cuda_unavailable_reason());
	lml_error(L, "device 'cuda' at creation is not supported: create the tensor on the CPU and "
	          "move it with :cuda()");
}

void lml_applyopts(lua_State *L, lm_tensor *t, const lml_opts *o)
{
	if (o->requires_grad && lm_tensor_requires_grad_(t, true)) lml_core_error(L);
}
