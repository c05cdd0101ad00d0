/*
 * reduce.c — reductions: sum, mean, prod, amax, amin, var, std, norm, max, min, argmax, argmin.
 *
 * Without a dim a reduction covers every element and gives a 0-d tensor; with a dim (1-based,
 * negatives from the end) it removes that dim unless keepdim; sum, mean, prod, amax, amin, var,
 * std and norm also take a table of dims ({1, 3}; {} is every dim, as PyTorch's dim=[]), reduced
 * at once (lm_reduce_dims). max/min with a dim return values
 * and int64 indices; indices are 1-based in Lua: a copy of the core's 0-based ones plus 1 (the
 * core saved its own for the backward rule), and argmax/argmin add 1 in place (nothing saved
 * them). Read next: autograd.c.
 */
#include <math.h>
#include <string.h>

#include "lml.h"

/* Reads ([dim [, keepdim]]) at arguments 2 and 3. */
static int dim_arg(lua_State *L, lm_tensor *t, int *keepdim)
{
	*keepdim = lml_optboolean(L, 3, "keepdim", 0);
	if (lua_isnoneornil(L, 2)) return LM_DIM_ALL;
	return lml_checkdim(L, 2, lm_tensor_ndim(t), 0, "dim");
}

/* The table of dims at idx, when there is one: its dims (0-based, checked, each once) into dims;
 * returns their count, or -1 when idx holds no table. */
static int dims_table(lua_State *L, int idx, const lm_tensor *t, int *dims)
{
	if (lua_type(L, idx) != LUA_TTABLE || lml_tobox(L, idx)) return -1;
	lua_Unsigned n = lua_rawlen(L, idx);
	int nd = lm_tensor_ndim(t), seen[LM_MAX_DIMS] = {0};
	if (n > (lua_Unsigned)(nd > 0 ? nd : 1))
		lml_error(L, "%llu dims given for a %d-d tensor", (unsigned long long)n, nd);
	for (int k = 0; k < (int)n; k++) {
		lua_rawgeti(L, idx, k + 1);
		int d = lml_checkdim(L, -1, nd, 0, "dim");
		lua_pop(L, 1);
		if (seen[d]++) lml_error(L, "dim %d appears more than once in the list of dims", d + 1);
		dims[k] = d;
	}
	return (int)n;
}

/* A reduction over the dims of a table at argument idx (keepdim at idx + 1), or -1 when idx is no
 * table: pushes the result. p: var/std's correction, norm's p. */
static int reduce_table(lua_State *L, lm_redop op, int idx, double p)
{
	lm_tensor *t = lml_checkself(L);
	int dims[LM_MAX_DIMS];
	int n = dims_table(L, idx, t, dims);
	if (n < 0) return -1;
	int keepdim = lml_optboolean(L, idx + 1, "keepdim", 0);
	lm_tensor *r;
	LML_PUSH(L, r, lm_reduce_dims(op, t, n, dims, keepdim, p));
	return 1;
}

/* max/min/argmax/argmin take one dim: a table names the function that takes several. */
static void one_dim_only(lua_State *L, const char *instead)
{
	if (lua_type(L, 2) == LUA_TTABLE && !lml_tobox(L, 2))
		lml_error(L, "takes one dim, not a table of dims (as in PyTorch)%s", instead);
}

static lm_tensor *reduce_call(lm_redop op, lm_tensor *t, int d, int keepdim)
{
	switch (op) {
	case LM_SUM: return lm_sum(t, d, keepdim);
	case LM_MEAN: return lm_mean(t, d, keepdim);
	case LM_PROD: return lm_prod(t, d, keepdim);
	case LM_MAX: return lm_amax(t, d, keepdim);
	case LM_MIN: return lm_amin(t, d, keepdim);
	case LM_ARGMAX: return lm_argmax(t, d, keepdim);
	case LM_ARGMIN: return lm_argmin(t, d, keepdim);
	default: return lm_reduce(op, t, d, keepdim);
	}
}

static int reduce(lua_State *L, lm_redop op)
{
	lm_tensor *t = lml_checkself(L);
	if (op == LM_ARGMAX || op == LM_ARGMIN) one_dim_only(L, "");
	else if (reduce_table(L, op, 2, 0) == 1) return 1;
	int keepdim, d = dim_arg(L, t, &keepdim);
	lm_tensor *r;
	LML_PUSH(L, r, reduce_call(op, t, d, keepdim));
	if ((op == LM_ARGMAX || op == LM_ARGMIN) && lm_binary_scalar_(LM_ADD, r, 1))
		lml_core_error(L);
	return 1;
}

static int r_sum(lua_State *L) { return reduce(L, LM_SUM); }
static int r_amax(lua_State *L) { return reduce(L, LM_MAX); }
static int r_amin(lua_State *L) { return reduce(L, LM_MIN); }
static int r_mean(lua_State *L) { return reduce(L, LM_MEAN); }
static int r_prod(lua_State *L) { return reduce(L, LM_PROD); }
static int r_argmax(lua_State *L) { return reduce(L, LM_ARGMAX); }
static int r_argmin(lua_State *L) { return reduce(L, LM_ARGMIN); }

/* x:var([dim [, keepdim]] [, {unbiased=, correction=}]) — unbiased (correction 1) by default. */
static int var_std(lua_State *L, int std)
{
	lm_tensor *t = lml_checkself(L);
	int top = lua_gettop(L), correction = 1;
	if (top >= 2 && lml_isopts(L, top) && !lml_tobox(L, top)) { /* (a table of dims has [1]) */
		typedef struct { int unbiased; int64_t correction; } var_opts;
		static const lml_field fields[] = {
			LML_FIELD(var_opts, unbiased, LML_BOOLEAN),
			LML_FIELD(var_opts, correction, LML_INTEGER),
			LML_FIELDS_END,
		};
		var_opts o = {1, 1};
		unsigned given = lml_readopts(L, top, NULL, fields, &o);
		if ((given & 2) && (o.correction < 0 || o.correction > 1000000))
			lml_error(L, "option correction must be >= 0, got %lld", (long long)o.correction);
		correction = given & 2 ? (int)o.correction : o.unbiased; /* unbiased=false: correction 0 */
		lua_settop(L, top - 1);
	}
	if (reduce_table(L, std ? LM_STD : LM_VAR, 2, correction) == 1) return 1;
	int keepdim, d = dim_arg(L, t, &keepdim);
	LML_RETURN(L, std ? lm_std(t, d, keepdim, correction) : lm_var(t, d, keepdim, correction));
}

static int r_var(lua_State *L) { return var_std(L, 0); }
static int r_std(lua_State *L) { return var_std(L, 1); }

/* x:norm([p [, dim [, keepdim]]]): the p-norm (2 by default; math.huge for max |x|). */
static int r_norm(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	double p = 2;
	if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "fro") == 0)
		p = 2;
	else
		p = lml_optnumber(L, 2, "p", 2);
	if (isnan(p) || p < 0) lml_error(L, "p must be a non-negative number, got %g", p);
	if (reduce_table(L, LM_NORM, 3, p) == 1) return 1;
	int keepdim = lml_optboolean(L, 4, "keepdim", 0);
	int d = lua_isnoneornil(L, 3) ? LM_DIM_ALL : lml_checkdim(L, 3, lm_tensor_ndim(t), 0, "dim");
	LML_RETURN(L, lm_norm(t, p, d, keepdim));
}

/* x:max(), x:max(dim [, keepdim]) -> values, indices (1-based), x:max(y) -> maximum. */
static int max_min(lua_State *L, int is_max)
{
	lm_tensor *t = lml_checkself(L);
	lm_tensor *o = lml_totensor(L, 2);
	one_dim_only(L, is_max ? "; x:amax({...}) reduces over several" : "; x:amin({...}) reduces over several");
	if (o) {
		LML_RETURN(L, is_max ? lm_maximum(t, o) : lm_minimum(t, o));
	}
	if (lua_isnoneornil(L, 2)) {
		LML_RETURN(L, is_max ? lm_amax(t, LM_DIM_ALL, false) : lm_amin(t, LM_DIM_ALL, false));
	}
	int keepdim, d = dim_arg(L, t, &keepdim);
	lm_tensor **vbox = lml_newbox(L);
	lm_tensor **ibox = lml_newbox(L);
	lm_tensor *v = NULL, *i = NULL;
	lm_status s = is_max ? lm_max_dim(t, d, keepdim, &v, &i) : lm_min_dim(t, d, keepdim, &v, &i);
	if (s == LM_ERR_NOMEM && lml_retry_nomem(L))
		s = is_max ? lm_max_dim(t, d, keepdim, &v, &i) : lm_min_dim(t, d, keepdim, &v, &i);
	if (s) lml_core_error(L);
	lml_setpair(L, vbox, v, ibox, i);
	return 2;
}

static int r_max(lua_State *L) { return max_min(L, 1); }
static int r_min(lua_State *L) { return max_min(L, 0); }

static const luaL_Reg methods[] = {
	{"sum", r_sum},       {"mean", r_mean}, {"prod", r_prod}, {"var", r_var},
	{"amax", r_amax},     {"amin", r_amin},
	{"std", r_std},       {"norm", r_norm}, {"max", r_max},   {"min", r_min},
	{"argmax", r_argmax}, {"argmin", r_argmin},
	{NULL, NULL},
};

/* nn.utils.count_correct(logits, labels) -> the number of rows whose argmax is the label (1-based
 * labels, as argmax's); lm._count_correct, which lua/lumen/nn/utils.lua hands out */
static int r_count_correct(lua_State *L)
{
	lm_tensor *logits = lml_checktensor(L, 1, "logits");
	lm_tensor *labels = lml_checktensor(L, 2, "labels");
	int64_t n;
	if (lm_count_correct(logits, labels, 1, &n)) lml_core_error(L);
	lua_pushinteger(L, (lua_Integer)n);
	return 1;
}

void lml_open_reduce(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", methods, 0);
	lua_pushliteral(L, "nn.utils.count_correct");
	lua_pushcclosure(L, r_count_correct, 1);
	lua_setfield(L, lm, "_count_correct");
}
