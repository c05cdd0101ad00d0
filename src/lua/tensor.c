/*
 * tensor.c — the lumen.Tensor metatable: lifetime (__gc, __close), __index / __newindex (methods,
 * the grad fields, element access), __len, inspection, conversion, and lm.tensor.
 *
 * __index looks a string key up in the method table (lm.Tensor, so Lua code can add methods),
 * then in the fields (grad, requires_grad, grad_fn, is_leaf); any other key is element access
 * (view.c). lm.tensor walks a nested table twice: once for the shape, once to fill a tensor that
 * already sits in its box. Read next: view.c, math.c, print.c.
 */
#include <math.h>
#include <string.h>

#include "lml.h"
#include "lumen/cuda.h"
#include "lumen/opencl.h"

/* ---------------------------------------------------------------- lifetime */

/* __gc, __close and x:close(): releases the tensor now; later uses raise "tensor is closed".
 * Refused inside a finalizer (lml_may_release), where it could free a tensor that the call the
 * collector interrupted is using; dropping the reference is enough there. */
static int tensor_gc(lua_State *L)
{
	lm_tensor **b = lml_tobox(L, 1);
	if (b && *b) {
		lml_checkrelease(L, "a tensor");
		lm_tensor *t = *b;
		*b = NULL;
		lm_tensor_release(t);
	}
	return 0;
}

static int tensor_close(lua_State *L)
{
	if (!lml_tobox(L, 1)) lml_typeerror(L, 1, "self", "a tensor");
	return tensor_gc(L);
}

static int tensor_is_closed(lua_State *L)
{
	lm_tensor **b = lml_tobox(L, 1);
	if (!b) {
		lml_typeerror(L, 1, "self", "a tensor");
	}
	lua_pushboolean(L, *b == NULL);
	return 1;
}

/* ---------------------------------------------------------------- fields and element access */

/* The fields that read like attributes: x.grad, x.requires_grad, x.grad_fn, x.is_leaf. */
static int push_field(lua_State *L, lm_tensor *t, const char *k)
{
	if (strcmp(k, "grad") == 0) {
		/* the box first: making it may run a finalizer that sets x.grad (freeing the old one) */
		lm_tensor **box = lml_newbox(L);
		lm_tensor *g = lm_tensor_grad(t);
		if (g)
			*box = lm_tensor_retain(g);
		else
			lua_pushnil(L);
		return 1;
	}
	if (strcmp(k, "requires_grad") == 0) {
		lua_pushboolean(L, lm_tensor_requires_grad(t));
		return 1;
	}
	if (strcmp(k, "grad_fn") == 0) {
		lml_push_grad_fn(L, t); /* the node object, or nil (autograd.c) */
		return 1;
	}
	if (strcmp(k, "is_leaf") == 0) {
		lua_pushboolean(L, lm_tensor_is_leaf(t));
		return 1;
	}
	return 0;
}

/* A key that is neither a method nor a field: lm._tensor_missing (lua/lumen/init.lua) raises for
 * the methods docs/API.md promises that are not built yet; anything else is nil, as for a table. */
static int missing(lua_State *L)
{
	lua_pushliteral(L, "_tensor_missing");
	if (lua_rawget(L, lua_upvalueindex(3)) == LUA_TFUNCTION) {
		lua_pushvalue(L, 2);
		lua_call(L, 1, 0);
	} else {
		lua_pop(L, 1);
	}
	lua_pushnil(L);
	return 1;
}

/* Whether the running __index was called by ipairs' iterator (upvalue 4, captured at start-up):
 * for i, v in ipairs(x) then ends at #x + 1 instead of raising "index out of range". */
static int called_by_ipairs(lua_State *L)
{
	lua_Debug ar;
	if (lua_isnil(L, lua_upvalueindex(4)) || !lua_getstack(L, 1, &ar) || !lua_getinfo(L, "f", &ar))
		return 0;
	int same = lua_rawequal(L, -1, lua_upvalueindex(4));
	lua_pop(L, 1);
	return same;
}

/* upvalues: 1 name, 2 the method table, 3 the lumen table, 4 ipairs' iterator (or nil) */
static int tensor_index(lua_State *L)
{
	if (lua_type(L, 2) == LUA_TSTRING) {
		lua_pushvalue(L, 2);
		if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL) return 1;
		const char *k = lua_tostring(L, 2);
		if (strcmp(k, "grad") && strcmp(k, "requires_grad") && strcmp(k, "grad_fn") &&
		    strcmp(k, "is_leaf"))
			return missing(L);
		lm_tensor **b = lml_tobox(L, 1);
		if (b && !*b) lml_error(L, "tensor is closed (reading field '%s')", k);
		return push_field(L, lml_checkself(L), k);
	}
	lm_tensor *t = lml_checkself(L);
	if (lua_isinteger(L, 2) && lm_tensor_ndim(t) > 0 && lua_tointeger(L, 2) > 0 &&
	    lua_tointeger(L, 2) - 1 == lm_tensor_shape(t)[0] && called_by_ipairs(L)) {
		lua_pushnil(L);
		return 1;
	}
	return lml_index_get(L, t, 2);
}

/* pairs(x): as ipairs(x), the entries along dim 1 (upvalue 2: ipairs' iterator). */
static int tensor_pairs(lua_State *L)
{
	lml_checkself(L);
	if (lua_isnil(L, lua_upvalueindex(2))) lml_error(L, "ipairs is not available");
	lua_pushvalue(L, lua_upvalueindex(2));
	lua_pushvalue(L, 1);
	lua_pushinteger(L, 0);
	return 3;
}

static int tensor_newindex(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *k = lua_tostring(L, 2);
		if (strcmp(k, "requires_grad") == 0) {
			if (!lua_isboolean(L, 3)) {
				lml_typeerror(L, 3, "requires_grad", "a boolean");
			}
			if (lm_tensor_requires_grad_(t, lua_toboolean(L, 3))) lml_core_error(L);
			return 0;
		}
		if (strcmp(k, "grad") == 0) {
			lm_tensor *g = NULL;
			if (!lua_isnil(L, 3)) g = lml_checktensor(L, 3, "grad");
			if (lm_tensor_set_grad(t, g)) lml_core_error(L);
			return 0;
		}
		lml_error(L, "cannot set field '%.40s' of a tensor (only grad and requires_grad; use "
		          "x[i] = v for elements)", k);
	}
	return lml_index_set(L, t, 2, 3);
}

static int tensor_len(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_tensor_ndim(t) == 0) lml_error(L, "a 0-d tensor has no length (use x:item())");
	lua_pushinteger(L, lm_tensor_shape(t)[0]);
	return 1;
}

static int tensor_tostring(lua_State *L)
{
	lm_tensor **b = lml_tobox(L, 1);
	if (b && !*b) {
		lua_pushliteral(L, "[closed tensor]");
		return 1;
	}
	lml_checkself(L);
	return lml_tensor_tostring(L);
}

/* ---------------------------------------------------------------- inspection */

static void push_dims(lua_State *L, int n, const int64_t *v)
{
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, v[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

static int t_shape(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	push_dims(L, lm_tensor_ndim(t), lm_tensor_shape(t));
	return 1;
}

/* x:size() is the shape table; x:size(d) the size of dim d. */
static int t_size(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lua_isnoneornil(L, 2)) return t_shape(L);
	int n = lm_tensor_ndim(t);
	if (n == 0) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "a 0-d tensor has no dims (asked for dim %s)", lml_describe(L, 2, d, sizeof d));
	}
	int d = lml_checkdim(L, 2, n, 0, "dim");
	lua_pushinteger(L, lm_tensor_shape(t)[d]);
	return 1;
}

static int t_stride(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int n = lm_tensor_ndim(t);
	if (lua_isnoneornil(L, 2)) {
		push_dims(L, n, lm_tensor_strides(t));
		return 1;
	}
	if (n == 0) lml_error(L, "a 0-d tensor has no dims");
	int d = lml_checkdim(L, 2, n, 0, "dim");
	lua_pushinteger(L, lm_tensor_strides(t)[d]);
	return 1;
}

static int t_dim(lua_State *L)
{
	lua_pushinteger(L, lm_tensor_ndim(lml_checkself(L)));
	return 1;
}

static int t_numel(lua_State *L)
{
	lua_pushinteger(L, lm_tensor_numel(lml_checkself(L)));
	return 1;
}

static int t_dtype(lua_State *L)
{
	lua_pushstring(L, lm_dtype_name(lm_tensor_dtype(lml_checkself(L))));
	return 1;
}

static int t_device(lua_State *L)
{
	lua_pushstring(L, lm_device_name(lm_tensor_device(lml_checkself(L))));
	return 1;
}

static int t_is_contiguous(lua_State *L)
{
	lua_pushboolean(L, lm_tensor_is_contiguous(lml_checkself(L)));
	return 1;
}

static int t_nbytes(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_tensor_nbytes(lml_checkself(L)));
	return 1;
}

static int t_item(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_tensor_device(t) != LM_CPU) LML_PUSH(L, t, lml_host_copy(t)); /* its values, here */
	int64_t n = lm_tensor_numel(t);
	if (n != 1) {
		char b[LM_SHAPE_STR_MAX];
		lml_error(L, "the tensor has %lld elements (shape %s), not 1", (long long)n,
		          lm_shape_str(lm_tensor_ndim(t), lm_tensor_shape(t), b, sizeof b));
	}
	int64_t zero[LM_MAX_DIMS] = {0};
	lml_pushelem(L, lm_tensor_dtype(t), lml_elemptr(t, zero));
	return 1;
}

static void tolist_rec(lua_State *L, lm_tensor *t, int d, int64_t *idx)
{
	int n = lm_tensor_ndim(t);
	if (d == n) {
		lml_pushelem(L, lm_tensor_dtype(t), lml_elemptr(t, idx));
		return;
	}
	int64_t size = lm_tensor_shape(t)[d];
	luaL_checkstack(L, 4, "tolist");
	lua_createtable(L, size > INT32_MAX ? 0 : (int)size, 0);
	for (int64_t i = 0; i < size; i++) {
		idx[d] = i;
		tolist_rec(L, t, d + 1, idx);
		lua_rawseti(L, -2, i + 1);
	}
}

static int t_tolist(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_tensor_device(t) != LM_CPU) LML_PUSH(L, t, lml_host_copy(t)); /* its values, here */
	/* Lua's own memory is not capped: a tensor with no elements can still ask for billions of
	 * empty tables ([4294967296, 0]). Estimate what the tables take (a table header, 16 bytes
	 * per entry) and refuse beyond the memory limit instead of growing until the OS kills us. */
	double tables = 0, entries = 0, rows = 1;
	int n = lm_tensor_ndim(t);
	for (int d = 0; d < n; d++) {
		tables += rows;
		rows *= (double)lm_tensor_shape(t)[d];
		entries += rows;
	}
	lm_memory_stats st;
	lm_memory_stats_get(&st);
	double need = 56 * tables + 16 * entries;
	if (need > (double)st.limit_bytes) {
		char b[LM_SHAPE_STR_MAX];
		lml_error(L, "a tensor of shape %s would take about %.3g GB as Lua tables, more than the "
		          "memory limit (%.3g GB)", lm_shape_str(n, lm_tensor_shape(t), b, sizeof b),
		          need / 1e9, (double)st.limit_bytes / 1e9);
	}
	int64_t idx[LM_MAX_DIMS] = {0};
	tolist_rec(L, t, 0, idx);
	return 1;
}

static int t_version(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_tensor_version(lml_checkself(L)));
	return 1;
}

static int t_shares_storage(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	lm_tensor *o = lml_checktensor(L, 2, "argument 1");
	lua_pushboolean(L, lm_tensor_shares_storage(t, o));
	return 1;
}

/* ---------------------------------------------------------------- conversion */

/* x converted to dt; x itself when it already has dt. */
static int convert(lua_State *L, lm_tensor *t, lm_dtype dt)
{
	if (lm_tensor_dtype(t) == dt) {
		lua_pushvalue(L, 1);
		return 1;
	}
	LML_RETURN(L, lm_to_dtype(t, dt));
}

static int t_float(lua_State *L) { return convert(L, lml_checkself(L), LM_FLOAT32); }
static int t_double(lua_State *L) { return convert(L, lml_checkself(L), LM_FLOAT64); }
static int t_int(lua_State *L) { return convert(L, lml_checkself(L), LM_INT32); }
static int t_long(lua_State *L) { return convert(L, lml_checkself(L), LM_INT64); }
static int t_byte(lua_State *L) { return convert(L, lml_checkself(L), LM_UINT8); }
static int t_char(lua_State *L) { return convert(L, lml_checkself(L), LM_INT8); }
static int t_half(lua_State *L) { return convert(L, lml_checkself(L), LM_FLOAT16); }
static int t_bfloat16(lua_State *L) { return convert(L, lml_checkself(L), LM_BFLOAT16); }

/* x:cpu(), x:cuda(): x itself when it is there, else a copy (differentiable, lm_to_device) */
static int to_device(lua_State *L, lm_device dev)
{
	lm_tensor *t = lml_checkself(L), *r;
	if (lm_tensor_device(t) == dev) {
		lua_pushvalue(L, 1);
		return 1;
	}
	if (dev == LM_CUDA && !lm_cuda_is_available()) lml_nocuda(L); /* says why */
	if (dev == LM_OPENCL && !lm_opencl_is_available()) lml_noopencl(L);
	LML_PUSH(L, r, lm_to_device(t, dev));
	return 1;
}

static int t_cpu(lua_State *L) { return to_device(L, LM_CPU); }
static int t_cuda(lua_State *L) { return to_device(L, LM_CUDA); }
static int t_opencl(lua_State *L) { return to_device(L, LM_OPENCL); }

/* x:pin_memory(): a copy in page-locked memory (fast copies to the GPU); x:is_pinned() */
static int t_pin_memory(lua_State *L)
{
	lm_tensor *t = lml_checkself(L), *r;
	if (lm_tensor_device(t) == LM_CPU && !lm_cuda_is_available()) lml_nocuda(L);
	LML_PUSH(L, r, lm_pin_memory(t));
	return 1;
}

static int t_is_pinned(lua_State *L)
{
	lua_pushboolean(L, lm_tensor_is_pinned(lml_checkself(L)));
	return 1;
}

/* x:to('float64'), x:to('cpu'), x:to({dtype=, device=}) */
static int t_to(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lua_type(L, 2) == LUA_TSTRING) {
		const char *s = lua_tostring(L, 2);
		lm_dtype dt;
		if (strcmp(s, "cpu") == 0) return t_cpu(L);
		if (strcmp(s, "cuda") == 0 || strncmp(s, "cuda:", 5) == 0) return t_cuda(L);
		if (strcmp(s, "opencl") == 0) return t_opencl(L);
		if (lm_dtype_from_name(s, &dt) == LM_OK) return convert(L, t, dt);
		lml_error(L, "unknown dtype or device '%.40s' (expected float32, float64, float16, bfloat16, "
		          "int64, int32, int8, uint8, q8_0, q4_0, 'cpu', 'cuda' or 'opencl')", s);
	}
	if (lua_type(L, 2) == LUA_TTABLE) {
		lml_opts o;
		lml_checkopts(L, 2, &o);
		if (o.requires_grad) lml_error(L, "requires_grad is not an option of to (use requires_grad_)");
		if (o.has_device) { /* the device first, then the dtype on it */
			to_device(L, o.device);
			lua_replace(L, 1);
		}
		if (!o.has_dtype) {
			lua_pushvalue(L, 1);
			return 1;
		}
		return convert(L, lml_checkself(L), o.dtype);
	}
	char d[LML_DESCRIBE_MAX];
	lml_error(L, "expected a dtype name, a device name or an options table, got %s",
	          lml_describe(L, 2, d, sizeof d));
}

static int t_type(lua_State *L)
{
	lml_checkself(L);
	lua_pushliteral(L, LML_TENSOR_MT);
	return 1;
}

/* ---------------------------------------------------------------- lm.tensor */

/* Walks the first elements of nested tables for the shape; notes whether all are integers. */
static int infer_shape(lua_State *L, int idx, int64_t *shape)
{
	int n = 0;
	lua_pushvalue(L, idx);
	while (lua_type(L, -1) == LUA_TTABLE && !lml_tobox(L, -1)) {
		if (n == LM_MAX_DIMS) lml_error(L, "the table nests deeper than %d dims", LM_MAX_DIMS);
		lua_Unsigned len = lua_rawlen(L, -1);
		shape[n++] = (int64_t)len;
		if (len == 0) break;
		lua_rawgeti(L, -1, 1);
		lua_remove(L, -2);
	}
	lua_pop(L, 1);
	int64_t count = 1;
	for (int i = 0; i < n; i++)
		if (lml_mul_overflows(count, shape[i], &count))
			lml_error(L, "the table's element count overflows");
	return n;
}

/* Path of the element being read, for messages: "[2][3]". */
static const char *path_str(const int64_t *idx, int d, char *buf, size_t cap)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < d && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "[%lld]", (long long)idx[i] + 1);
	return buf;
}

/* Checks the nested table at the stack top against shape; counts floats into *nfloat. */
static void check_nested(lua_State *L, int ndim, const int64_t *shape, int d, int64_t *idx,
                         int64_t *nfloat)
{
	char p[128], b[LML_DESCRIBE_MAX];
	if (d == ndim) {
		if (lua_type(L, -1) != LUA_TNUMBER)
			lml_error(L, "element %s must be a number, got %s", path_str(idx, d, p, sizeof p),
			          lml_describe(L, -1, b, sizeof b));
		if (!lua_isinteger(L, -1)) (*nfloat)++;
		return;
	}
	if (lua_type(L, -1) != LUA_TTABLE || lml_tobox(L, -1))
		lml_error(L, "element %s must be a table of %lld entries (the shape is ragged), got %s",
		          path_str(idx, d, p, sizeof p), (long long)shape[d],
		          lml_describe(L, -1, b, sizeof b));
	if ((int64_t)lua_rawlen(L, -1) != shape[d])
		lml_error(L, "element %s has %llu entries, expected %lld (the shape is ragged)",
		          d ? path_str(idx, d, p, sizeof p) : "(the outer table)",
		          (unsigned long long)lua_rawlen(L, -1), (long long)shape[d]);
	luaL_checkstack(L, 3, "lm.tensor");
	for (int64_t i = 0; i < shape[d]; i++) {
		idx[d] = i;
		lua_rawgeti(L, -1, i + 1);
		check_nested(L, ndim, shape, d + 1, idx, nfloat);
		lua_pop(L, 1);
	}
}

/* Fills the contiguous data p (C order) from the checked nested table at the stack top; every
 * number is range-checked for dt first (no silent wrap-around: lml_checkstore). */
static char *fill_nested(lua_State *L, int ndim, const int64_t *shape, int d, int64_t *idx,
                         lm_dtype dt, char *p)
{
	if (d == ndim) {
		char path[128];
		lml_checkstore(L, -1, dt, ndim ? "element" : "value",
		               ndim ? path_str(idx, d, path, sizeof path) : NULL);
		lml_storenumber(L, -1, dt, p);
		return p + lm_dtype_size(dt);
	}
	for (int64_t i = 0; i < shape[d]; i++) {
		idx[d] = i;
		lua_rawgeti(L, -1, i + 1);
		p = fill_nested(L, ndim, shape, d + 1, idx, dt, p);
		lua_pop(L, 1);
	}
	return p;
}

/* lm.tensor(nested_table_or_number [, opts]) */
static int lm_tensor_new(lua_State *L)
{
	lml_opts o;
	char b[LML_DESCRIBE_MAX];
	lml_checkopts(L, 2, &o);
	lml_checkdevice(L, &o);
	int tp = lua_type(L, 1);
	if (tp != LUA_TNUMBER && (tp != LUA_TTABLE || lml_tobox(L, 1))) {
		if (lml_tobox(L, 1))
			lml_error(L, "expected a number or a nested table, got a tensor (use x:clone())");
		lml_error(L, "expected a number or a nested table of numbers, got %s",
		          lml_describe(L, 1, b, sizeof b));
	}
	int64_t shape[LM_MAX_DIMS], idx[LM_MAX_DIMS], nfloat = 0;
	int ndim = tp == LUA_TNUMBER ? 0 : infer_shape(L, 1, shape);
	lua_pushvalue(L, 1);
	check_nested(L, ndim, shape, 0, idx, &nfloat);
	/* Integers give int64 (PyTorch), unless a float is present, the table is empty, or the
	 * tensor is to require grad (only floats can). */
	lm_dtype dt = o.has_dtype ? o.dtype : LM_FLOAT32;
	int64_t count = 1;
	for (int i = 0; i < ndim; i++) count *= shape[i];
	if (!o.has_dtype && nfloat == 0 && count > 0 && !o.requires_grad) dt = LM_INT64;
	lm_tensor **box = lml_newbox(L);
	lua_insert(L, -2); /* box below the table copy */
	lm_tensor *t;
	LML_TRY(L, t, lm_empty(ndim, shape, dt));
	if (!t) lml_core_error(L);
	lml_setbox(L, box, t);
	fill_nested(L, ndim, shape, 0, idx, dt, lm_tensor_data(t));
	lua_pop(L, 1);
	lml_applyopts(L, t, &o);
	return 1;
}

static int lm_is_tensor(lua_State *L)
{
	lua_pushboolean(L, lml_tobox(L, 1) != NULL);
	return 1;
}

/* ---------------------------------------------------------------- registration */

static const luaL_Reg methods[] = {
	{"shape", t_shape},
	{"size", t_size},
	{"stride", t_stride},
	{"dim", t_dim},
	{"ndim", t_dim},
	{"numel", t_numel},
	{"nbytes", t_nbytes},
	{"dtype", t_dtype},
	{"device", t_device},
	{"pin_memory", t_pin_memory},
	{"is_pinned", t_is_pinned},
	{"is_contiguous", t_is_contiguous},
	{"item", t_item},
	{"tolist", t_tolist},
	{"version", t_version},
	{"shares_storage", t_shares_storage},
	{"float", t_float},
	{"double", t_double},
	{"int", t_int},
	{"long", t_long},
	{"byte", t_byte},
	{"char", t_char},
	{"half", t_half},
	{"bfloat16", t_bfloat16},
	{"to", t_to},
	{"cpu", t_cpu},
	{"cuda", t_cuda},
	{"opencl", t_opencl},
	{"type", t_type},
	{"close", tensor_close},
	{"is_closed", tensor_is_closed},
	{NULL, NULL},
};

static const luaL_Reg metamethods[] = {
	{"__gc", tensor_gc},
	{"__close", tensor_gc},
	{"__newindex", tensor_newindex},
	{"__len", tensor_len},
	{"__tostring", tensor_tostring},
	{NULL, NULL},
};

static const luaL_Reg functions[] = {
	{"tensor", lm_tensor_new},
	{"is_tensor", lm_is_tensor},
	{NULL, NULL},
};

void lml_open_tensor(lua_State *L, int mt, int m, int lm)
{
	lml_setfuncs(L, mt, "Tensor:", metamethods, 0);
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", functions, 0);
	/* ipairs' iterator (base library), so that __index can tell when ipairs calls it */
	if (lua_getglobal(L, "ipairs") == LUA_TFUNCTION) {
		lua_newtable(L);
		lua_call(L, 1, 1);
	} else {
		lua_pop(L, 1);
		lua_pushnil(L);
	}
	int ip = lua_gettop(L);
	/* __index = closure(name, method table, lumen table, ipairs' iterator) */
	lua_pushliteral(L, "Tensor:__index");
	lua_pushvalue(L, m);
	lua_pushvalue(L, lm);
	lua_pushvalue(L, ip);
	lua_pushcclosure(L, tensor_index, 4);
	lua_setfield(L, mt, "__index");
	lua_pushliteral(L, "Tensor:__pairs");
	lua_pushvalue(L, ip);
	lua_pushcclosure(L, tensor_pairs, 2);
	lua_setfield(L, mt, "__pairs");
	lua_pop(L, 1);
}
