/*
 * shape.c — ops that rearrange or accumulate along dims: cumsum, tril, triu, tile (repeat),
 * flip.
 *
 * Dims are 1-based with negatives from the end, checked here so errors speak Lua; counts are
 * integers (integral floats accepted). Read next: functional.c.
 */
#include "lml.h"

/* x:cumsum(dim) */
static int t_cumsum(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int d = lml_checkdim(L, 2, lm_tensor_ndim(x), 0, "dim");
	LML_RETURN(L, lm_cumsum(x, d));
}

static int triangle(lua_State *L, int upper)
{
	lm_tensor *x = lml_checkself(L);
	int64_t k = lml_optinteger(L, 2, "diagonal", 0);
	if (lm_tensor_ndim(x) < 2)
		lml_error(L, "expects a tensor of at least 2 dims, got %d", lm_tensor_ndim(x));
	LML_RETURN(L, upper ? lm_triu(x, k) : lm_tril(x, k));
}

static int t_tril(lua_State *L) { return triangle(L, 0); }
static int t_triu(lua_State *L) { return triangle(L, 1); }

/* Reads integer counts given as numbers or one table, from argument 2 on. */
static int counts(lua_State *L, int64_t *c, const char *what)
{
	int top = lua_gettop(L), tbl = top == 2 && lua_type(L, 2) == LUA_TTABLE;
	int n = tbl ? (int)lua_rawlen(L, 2) : top - 1;
	char d[LML_DESCRIBE_MAX];
	if (n > LM_MAX_DIMS) lml_error(L, "%d %s given, at most %d", n, what, LM_MAX_DIMS);
	for (int i = 0; i < n; i++) {
		int idx = 2 + i;
		if (tbl) {
			lua_rawgeti(L, 2, i + 1);
			idx = lua_gettop(L);
		}
		if (!lml_isinteger(L, idx, &c[i]))
			lml_error(L, "%s %d must be an integer, got %s", what, i + 1,
			          lml_describe(L, idx, d, sizeof d));
		if (tbl) lua_pop(L, 1);
	}
	return n;
}

/* x:tile(r1, r2, ...) (also x['repeat']): copies of x along each dim; fewer counts than dims
 * repeat the last dims (leading counts of 1 are added). */
static int t_tile(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int64_t c[LM_MAX_DIMS], reps[LM_MAX_DIMS];
	int n = counts(L, c, "repeat counts"), nd = lm_tensor_ndim(x);
	for (int i = 0; i < n; i++)
		if (c[i] < 0) lml_error(L, "repeat count %d is negative (%lld)", i + 1, (long long)c[i]);
	int total = n > nd ? n : nd;
	for (int i = 0; i < total; i++) reps[i] = i < total - n ? 1 : c[i - (total - n)];
	LML_RETURN(L, lm_repeat(x, total, reps));
}

/* x:flip(d1, d2, ...) or x:flip({d1, ...}) */
static int t_flip(lua_State *L)
{
	lm_tensor *x = lml_checkself(L);
	int64_t c[LM_MAX_DIMS];
	int dims[LM_MAX_DIMS], seen[LM_MAX_DIMS] = {0};
	int n = counts(L, c, "dims"), nd = lm_tensor_ndim(x), lim = nd > 0 ? nd : 1;
	if (n == 0) lml_error(L, "expects at least one dim");
	for (int i = 0; i < n; i++) {
		if (c[i] == 0 || c[i] > lim || c[i] < -lim)
			lml_error(L, "dim %lld is out of range for a %d-d tensor (expected 1..%d or -%d..-1)",
			          (long long)c[i], nd, lim, lim);
		dims[i] = (int)(c[i] > 0 ? c[i] - 1 : c[i] + lim);
		if (seen[dims[i]]) lml_error(L, "dim %d appears more than once", dims[i] + 1);
		seen[dims[i]] = 1;
	}
	LML_RETURN(L, lm_flip(x, n, dims));
}

static const luaL_Reg methods[] = {
	{"cumsum", t_cumsum},
	{"tril", t_tril},
	{"triu", t_triu},
	{"tile", t_tile},
	{"repeat", t_tile},
	{"flip", t_flip},
	{NULL, NULL},
};

void lml_open_shape(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", methods, 0);
}
