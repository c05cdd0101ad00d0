/*
 * autograd.c — the autograd bindings: requires_grad_, grad mode (lm.no_grad,
 * lm.set_grad_enabled, lm.is_grad_enabled) and the lm.autograd table. The fields x.grad,
 * x.requires_grad, x.grad_fn, x.is_leaf are read in tensor.c (__index).
 *
 * lm.no_grad runs the function through lua_pcall so that grad mode is restored however the
 * function ends, then re-raises its error unchanged. Read next: functional.c.
 */
#include "lml.h"

/* x:requires_grad_([flag]) -> x */
static int t_requires_grad_(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int flag = lml_optboolean(L, 2, "flag", 1);
	if (lm_tensor_requires_grad_(t, flag)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

/* lm.no_grad(fn, ...) -> fn's results, computed with grad mode off */
static int l_no_grad(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) != LUA_TFUNCTION)
		lml_error(L, "argument 1 must be a function, got %s", lml_describe(L, 1, d, sizeof d));
	int n = lua_gettop(L);
	bool prev = lm_set_grad_enabled(false);
	int st = lua_pcall(L, n - 1, LUA_MULTRET, 0);
	lm_set_grad_enabled(prev);
	if (st != LUA_OK) return lua_error(L);
	return lua_gettop(L);
}

/* lm.set_grad_enabled(flag) -> the previous mode */
static int l_set_grad_enabled(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (!lua_isboolean(L, 1))
		lml_error(L, "argument 1 must be a boolean, got %s", lml_describe(L, 1, d, sizeof d));
	lua_pushboolean(L, lm_set_grad_enabled(lua_toboolean(L, 1)));
	return 1;
}

static int l_is_grad_enabled(lua_State *L)
{
	lua_pushboolean(L, lm_grad_enabled());
	return 1;
}

static const luaL_Reg methods[] = {
	{"requires_grad_", t_requires_grad_},
	{NULL, NULL},
};

static const luaL_Reg functions[] = {
	{"no_grad", l_no_grad},
	{"set_grad_enabled", l_set_grad_enabled},
	{"is_grad_enabled", l_is_grad_enabled},
	{NULL, NULL},
};

void lml_open_autograd(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", functions, 0);
	lua_newtable(L); /* lm.autograd */
	lua_setfield(L, lm, "autograd");
}
