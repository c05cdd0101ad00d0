/*
 * index.c — joining and indexing: lm.cat, lm.stack, index_select, gather, scatter_add,
 * masked_fill, sort, topk, one_hot.
 *
 * Index tensors are 1-based in Lua: the binding checks their range in Lua terms and hands the
 * core a 0-based copy (lml_index0); indices coming back (sort, topk) are returned as a 1-based
 * copy (lml_setpair: the core keeps its own for the backward rule).
 * Tensor lists are read into a scratch userdata (owned by the GC), never into malloc'ed memory.
 * Read next: shape.c.
 */
#include "lml.h"

/* Reads the table of tensors at arg into a scratch array (a userdata pushed on the stack). */
static lm_tensor **tensor_list(lua_State *L, int arg, int *n)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, arg) != LUA_TTABLE || lml_tobox(L, arg))
		lml_typeerror(L, arg, "argument 1", "a table of tensors such as {a, b}");
	lua_Unsigned len = lua_rawlen(L, arg);
	if (len == 0) lml_error(L, "expects at least one tensor, got an empty table");
	if (len > 100000) lml_error(L, "too many tensors (%llu)", (unsigned long long)len);
	lm_tensor **ts = lua_newuserdatauv(L, (size_t)len * sizeof *ts, 0);
	for (lua_Unsigned i = 1; i <= len; i++) {
		lua_rawgeti(L, arg, (lua_Integer)i);
		lm_tensor **b = lml_tobox(L, -1);
		if (!b)
			lml_error(L, "element %llu of the list must be a tensor, got %s", (unsigned long long)i,
			          lml_describe(L, -1, d, sizeof d));
		if (!*b) lml_error(L, "element %llu of the list: tensor is closed", (unsigned long long)i);
		ts[i - 1] = *b;
		lua_pop(L, 1); /* still referenced by the table, which stays on the stack */
	}
	*n = (int)len;
	return ts;
}

/* lm.cat({a, b, ...} [, dim = 1]) */
static int l_cat(lua_State *L)
{
	int n;
	lua_settop(L, 2); /* the scratch list goes above the arguments */
	lm_tensor **ts = tensor_list(L, 1, &n);
	int ref = 0; /* as the core: skip 1-D empty tensors when choosing the reference */
	while (ref < n - 1 && lm_tensor_ndim(ts[ref]) == 1 && lm_tensor_shape(ts[ref])[0] == 0) ref++;
	if (lm_tensor_ndim(ts[ref]) == 0) lml_error(L, "0-d tensors cannot be concatenated (use stack)");
	int dim = lua_isnoneornil(L, 2) ? 0 : lml_checkdim(L, 2, lm_tensor_ndim(ts[ref]), 0, "dim");
	LML_RETURN(L, lm_cat(n, ts, dim));
}

/* lm.stack({a, b, ...} [, dim = 1]) */
static int l_stack(lua_State *L)
{
	int n;
	lua_settop(L, 2);
	lm_tensor **ts = tensor_list(L, 1, &n);
	int dim = lua_isnoneornil(L, 2) ? 0 : lml_checkdim(L, 2, lm_tensor_ndim(ts[0]), 1, "dim");
	LML_RETURN(L, lm_stack(n, ts, dim));
}

/* The size of dim d of x (1 for a 0-d tensor). */
static int64_t dim_size(lm_tensor *x, int d)
{
	return lm_tensor_ndim(x) ? lm_tensor_shape(x)[d] : 1;
}

/* x:index_select(dim, index) */
static int t_index_select(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int d = lml_checkdim(L, 2, lm_tensor_ndim(x), 0, "dim");
	lm_tensor *idx = lml_index0(L, 3, "index", dim_size(x, d));
	LML_RETURN(L, lm_index_select(x, d, idx));
}

/* x:gather(dim, index) */
static int t_gather(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int d = lml_checkdim(L, 2, lm_tensor_ndim(x), 0, "dim");
	lm_tensor *idx = lml_index0(L, 3, "index", dim_size(x, d));
	LML_RETURN(L, lm_gather(x, d, idx));
}

/* x:scatter_add(dim, index, src): a copy of x with src added at index along dim */
static int t_scatter_add(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int d = lml_checkdim(L, 2, lm_tensor_ndim(x), 0, "dim");
	lm_tensor *src = lml_checktensor(L, 4, "src");
	lm_tensor *idx = lml_index0(L, 3, "index", dim_size(x, d));
	LML_RETURN(L, lm_scatter_add(x, d, idx, src));
}

/* x:masked_fill(mask, value) */
static int t_masked_fill(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	lm_tensor *mask = lml_checktensor(L, 2, "mask");
	double v = lml_checknumber(L, 3, "value");
	lml_checkstore(L, 3, lm_tensor_dtype(x), "value", NULL);
	lm_tensor *exact = lml_exact_integer(L, 3, lm_tensor_dtype(x)); /* past 2^53: no double */
	LML_RETURN(L, exact ? lm_where(mask, exact, x) : lm_masked_fill(x, mask, v));
}

/* Pushes values and 1-based indices from a core call filling v and i. */
static int two_results(lua_State *L, lm_tensor **vbox, lm_tensor **ibox, lm_status s,
                       lm_tensor *v, lm_tensor *i)
{
	if (s) lml_core_error(L);
	lml_setpair(L, vbox, v, ibox, i);
	return 2;
}

/* x:sort([dim = -1 [, descending = false]]) -> values, indices */
static int t_sort(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int d = lua_isnoneornil(L, 2) ? -1 : lml_checkdim(L, 2, lm_tensor_ndim(x), 0, "dim");
	int desc = lml_optboolean(L, 3, "descending", 0);
	lm_tensor **vbox = lml_newbox(L), **ibox = lml_newbox(L);
	lm_tensor *v = NULL, *i = NULL;
	lm_status s = lm_sort(x, d, desc, &v, &i);
	if (s == LM_ERR_NOMEM && lml_retry_nomem(L)) s = lm_sort(x, d, desc, &v, &i);
	return two_results(L, vbox, ibox, s, v, i);
}

/* x:topk(k [, dim = -1 [, largest = true]]) -> values, indices */
static int t_topk(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int64_t k = lml_checkinteger(L, 2, "k");
	int d = lua_isnoneornil(L, 3) ? -1 : lml_checkdim(L, 3, lm_tensor_ndim(x), 0, "dim");
	int largest = lml_optboolean(L, 4, "largest", 1);
	int64_t size = dim_size(x, d < 0 ? lm_tensor_ndim(x) - 1 : d);
	if (k < 0 || k > size)
		lml_error(L, "k = %lld is out of range for a dim of size %lld", (long long)k,
		          (long long)size);
	lm_tensor **vbox = lml_newbox(L), **ibox = lml_newbox(L);
	lm_tensor *v = NULL, *i = NULL;
	lm_status s = lm_topk(x, k, d, largest, &v, &i);
	if (s == LM_ERR_NOMEM && lml_retry_nomem(L)) s = lm_topk(x, k, d, largest, &v, &i);
	return two_results(L, vbox, ibox, s, v, i);
}

/* lm.one_hot(index [, num_classes]): int64 (..., C) with 1 at each 1-based index; C defaults to
 * the largest index. */
static int l_one_hot(lua_State *L)
{
	lm_tensor *t = lml_checktensor(L, 1, "index");
	int64_t c = lml_optinteger(L, 2, "num_classes", -1);
	if (c == -1) { /* the largest index */
		lm_tensor **mb = lml_newbox(L);
		lm_tensor *m = NULL;
		double v = 0;
		if (lm_tensor_numel(t) > 0) {
			LML_TRY(L, m, lm_amax(t, LM_DIM_ALL, false));
			lml_result(L, mb, m);
			lm_tensor_item(m, &v);
		}
		c = (int64_t)v;
		lua_pop(L, 1);
	}
	if (c < 0) lml_error(L, "num_classes must be non-negative, got %lld", (long long)c);
	lm_tensor *idx = lml_index0(L, 1, "index", c);
	LML_RETURN(L, lm_one_hot(idx, c));
}

static const luaL_Reg methods[] = {
	{"index_select", t_index_select},
	{"gather", t_gather},
	{"scatter_add", t_scatter_add},
	{"masked_fill", t_masked_fill},
	{"sort", t_sort},
	{"topk", t_topk},
	{NULL, NULL},
};

static const luaL_Reg functions[] = {
	{"cat", l_cat},
	{"stack", l_stack},
	{"one_hot", l_one_hot},
	{NULL, NULL},
};

void lml_open_index(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", methods, 0);
	lml_setfuncs(L, lm, "lm.", functions, 0);
}
