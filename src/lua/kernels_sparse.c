/*
 * kernels_sparse.c — kernels.sparse and the lumen.Sparse userdata it returns: a sparse matrix
 * held in COO, CSR, ELL and JDS at once (lm_sparse), for kernels.spmv. `A:dense()`,
 * `A:arrays(format)`, `A:row_nnz()`, `A.shape`, `A.nnz`, `A.dtype`, `A.ell_width`, `A.padding`.
 *
 * A box holds one reference, released by __gc and __close. Rows and columns are 1-based in Lua;
 * the arrays of a format are shown as the kernels read them (0-based int32 indices).
 * Read next: kernels.c (kernels.spmv), src/kernels/sparse.c.
 */
#include <string.h>

#include "lml_kernels.h"

static lm_sparse **sparsebox(lua_State *L, int idx, const char *what)
{
	lm_sparse **box = luaL_testudata(L, idx, LML_SPARSE_MT);
	if (!box) lml_typeerror(L, idx, what, "a sparse matrix (kernels.sparse)");
	return box;
}

lm_sparse *lml_checksparse(lua_State *L, int idx, const char *what)
{
	lm_sparse **box = sparsebox(L, idx, what);
	if (!*box) lml_error(L, "the sparse matrix is closed");
	return *box;
}

static int sp_gc(lua_State *L)
{
	lm_sparse **box = sparsebox(L, 1, "self");
	if (*box) lml_checkrelease(L, "a sparse matrix");
	lm_sparse_release(*box);
	*box = NULL;
	return 0;
}

/* ---------------------------------------------------------------- kernels.sparse */

/* Pushes the value of field k of the table at t, and when it is an array of numbers, a boxed
 * tensor of dtype dt made from it (integers for LM_INT64); returns the tensor either way. */
static lm_tensor *field_tensor(lua_State *L, int t, const char *k, lm_dtype dt)
{
	lml_rawfield(L, t, k);
	int v = lua_gettop(L);
	lm_tensor *x = lml_totensor(L, v);
	if (x) return x; /* the tensor stays on the stack */
	if (!lua_istable(L, v)) lml_typeerror(L, v, k, "a table of numbers or a tensor");
	int64_t n = (int64_t)lua_rawlen(L, v);
	lm_tensor *y;
	LML_PUSH(L, y, lm_empty(1, &n, dt));
	for (int64_t i = 0; i < n; i++) {
		lua_rawgeti(L, v, (lua_Integer)i + 1);
		char what[48];
		snprintf(what, sizeof what, "%s[%lld]", k, (long long)i + 1);
		if (dt == LM_INT64) ((int64_t *)lm_tensor_data(y))[i] = lml_checkinteger(L, -1, what);
		else if (dt == LM_FLOAT64) ((double *)lm_tensor_data(y))[i] = lml_checknumber(L, -1, what);
		else ((float *)lm_tensor_data(y))[i] = (float)lml_checknumber(L, -1, what);
		lua_pop(L, 1);
	}
	return y;
}

/* shape = {m, n} */
static void read_shape(lua_State *L, int idx, const lml_field *f, void *dst)
{
	(void)f;
	int64_t *mn = dst;
	if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) != 2)
		lml_typeerror(L, idx, "shape", "a table {m, n}");
	lua_rawgeti(L, idx, 1);
	mn[0] = lml_checkinteger(L, -1, "shape[1]");
	lua_rawgeti(L, idx, 2);
	mn[1] = lml_checkinteger(L, -1, "shape[2]");
	lua_pop(L, 2);
}

typedef struct coo_table {
	int rows, cols, vals; /* (their values are read by field_tensor) */
	int64_t shape[2];
	lm_dtype dtype;
} coo_table;

/* kernels.sparse(dense) or kernels.sparse{rows=, cols=, vals=, shape={m, n} [, dtype=]}
 * (1-based rows and cols, tables or tensors) -> a lumen.Sparse */
static int k_sparse(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(coo_table, rows, LML_CUSTOM),
		LML_FIELD(coo_table, cols, LML_CUSTOM),
		LML_FIELD(coo_table, vals, LML_CUSTOM),
		LML_FIELD(coo_table, shape, LML_CUSTOM, .check = read_shape),
		LML_FIELD(coo_table, dtype, LML_DTYPE),
		LML_FIELDS_END,
	};
	lm_sparse **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	luaL_setmetatable(L, LML_SPARSE_MT);
	int b = lua_gettop(L);
	lm_tensor *dense = lml_totensor(L, 1);
	lm_sparse *a;
	if (dense) {
		LML_TRY(L, a, lm_sparse_from_dense(dense));
	} else {
		if (!lua_istable(L, 1))
			lml_typeerror(L, 1, "argument 1", "a dense matrix (a tensor) or a table {rows=, cols=, "
			              "vals=, shape=}");
		coo_table c = {.dtype = LM_FLOAT32};
		if (!(lml_readopts(L, 1, "key", fields, &c) & 8)) {
			lua_pushnil(L);
			read_shape(L, lua_gettop(L), NULL, c.shape); /* raises: shape is required */
		}
		lm_tensor *rows = field_tensor(L, 1, "rows", LM_INT64);
		lm_tensor *cols = field_tensor(L, 1, "cols", LM_INT64);
		lm_tensor *vals = field_tensor(L, 1, "vals", c.dtype);
		LML_TRY(L, a, lm_sparse_from_coo(rows, cols, vals, c.shape[0], c.shape[1], 1));
	}
	if (!a) lml_kernel_error(L);
	*box = a;
	lua_pushvalue(L, b);
	return 1;
}

/* ---------------------------------------------------------------- methods */

static int sp_dense(lua_State *L)
{
	lm_sparse *a = lml_checksparse(L, 1, "self");
	LML_RETURN(L, lm_sparse_to_dense(a));
}

/* A:arrays(format) -> {name = tensor, ...}: the format's arrays as the kernels read them
 * (0-based int32 indices) */
static int sp_arrays(lua_State *L)
{
	static const char *const formats[] = {"coo", "csr", "ell", "jds", NULL};
	static const char *const names[][6] = {
		{"row", "col", "val", NULL},
		{"row_ptr", "col", "val", NULL},
		{"col", "val", "row_nnz", NULL},
		{"perm", "iter_ptr", "col", "val", "row_nnz", NULL},
	};
	lm_sparse *a = lml_checksparse(L, 1, "self");
	int k = lml_checkname(L, 2, "the format", formats);
	lua_newtable(L);
	for (int j = 0; names[k][j]; j++) {
		lm_tensor *t;
		LML_PUSH(L, t, lm_sparse_array(a, formats[k], names[k][j]));
		lua_setfield(L, -2, names[k][j]);
	}
	return 1;
}

/* A:row_nnz() -> int64 tensor: each row's nonzeros, in row order */
static int sp_row_nnz(lua_State *L)
{
	lm_sparse *a = lml_checksparse(L, 1, "self");
	lm_tensor **box = lml_newbox(L);
	lm_tensor *t, *w = NULL;
	LML_TRY(L, t, lm_sparse_array(a, "ell", "row_nnz"));
	if (t) w = lm_to_dtype(t, LM_INT64);
	lm_tensor_release(t);
	return lml_result(L, box, w);
}

static int sp_tostring(lua_State *L)
{
	lm_sparse *a = lml_checksparse(L, 1, "self");
	lua_pushfstring(L, "sparse %I x %I %s, %I nonzeros (ELL width %I, padding %I)",
	                (lua_Integer)lm_sparse_rows(a), (lua_Integer)lm_sparse_cols(a),
	                lm_dtype_name(lm_sparse_dtype(a)), (lua_Integer)lm_sparse_nnz(a),
	                (lua_Integer)lm_sparse_ell_width(a), (lua_Integer)lm_sparse_ell_padding(a));
	return 1;
}

static const char *const sparse_fields[] = {"shape", "nnz", "dtype", "ell_width", "padding", NULL};

/* A.shape ({m, n}), A.nnz, A.dtype, A.ell_width, A.padding; methods */
static int sp_index(lua_State *L)
{
	lm_sparse *a = lml_checksparse(L, 1, "self");
	int k = -1;
	if (lua_type(L, 2) == LUA_TSTRING)
		for (int j = 0; sparse_fields[j]; j++)
			if (strcmp(lua_tostring(L, 2), sparse_fields[j]) == 0) k = j;
	switch (k) {
	case 0:
		lua_createtable(L, 2, 0);
		lua_pushinteger(L, (lua_Integer)lm_sparse_rows(a));
		lua_rawseti(L, -2, 1);
		lua_pushinteger(L, (lua_Integer)lm_sparse_cols(a));
		lua_rawseti(L, -2, 2);
		return 1;
	case 1: lua_pushinteger(L, (lua_Integer)lm_sparse_nnz(a)); return 1;
	case 2: lua_pushstring(L, lm_dtype_name(lm_sparse_dtype(a))); return 1;
	case 3: lua_pushinteger(L, (lua_Integer)lm_sparse_ell_width(a)); return 1;
	case 4: lua_pushinteger(L, (lua_Integer)lm_sparse_ell_padding(a)); return 1;
	default: return lml_kernels_method(L);
	}
}

void lml_open_sparse(lua_State *L, int k)
{
	static const luaL_Reg methods[] = {
		{"dense", sp_dense},
		{"arrays", sp_arrays},
		{"row_nnz", sp_row_nnz},
		{NULL, NULL},
	};
	static const luaL_Reg meta[] = {
		{"__gc", sp_gc},
		{"__close", sp_gc},
		{"__tostring", sp_tostring},
		{"__index", sp_index},
		{NULL, NULL},
	};
	static const luaL_Reg functions[] = {{"sparse", k_sparse}, {NULL, NULL}};
	lml_kernels_class(L, LML_SPARSE_MT, "Sparse", meta, methods, sparse_fields);
	lml_setfuncs(L, k, "kernels.", functions, 0);
}
