/*
 * optim.c — the C side of lua/lumen/optim/: one fused update per parameter (lumen/optim.h), read
 * by the Lua optimizers as lm._optim.sgd(p, buf, ...) etc., gradient clipping, and
 * F.binary_cross_entropy_with_logits.
 *
 * The update functions are private (the optimizers in optim/ are the API): positional arguments,
 * checked here, and the parameter's .grad read in C (no box per step). Read next: data.c,
 * lua/lumen/optim/init.lua.
 */
#include <math.h>
#include <string.h>

#include "lml.h"
#include "lumen/nn.h"
#include "lumen/optim.h"

/* The parameter at idx and its gradient (NULL when it has none). */
static lm_tensor *param_and_grad(lua_State *L, int idx, lm_tensor **grad)
{
	lm_tensor *p = lml_checktensor(L, idx, "parameter");
	*grad = lm_tensor_grad(p);
	return p;
}

static lm_tensor *opt_state(lua_State *L, int idx, const char *what)
{
	return lua_isnoneornil(L, idx) ? NULL : lml_checktensor(L, idx, what);
}

static double num(lua_State *L, int idx, const char *what) { return lml_checknumber(L, idx, what); }
static int flag(lua_State *L, int idx) { return lua_toboolean(L, idx); }

/* sgd(p, buf|nil, lr, momentum, dampening, weight_decay, nesterov, maximize, first) -> stepped */
static int o_sgd(lua_State *L)
{
	lm_tensor *g, *p = param_and_grad(L, 1, &g);
	lm_tensor *buf = opt_state(L, 2, "momentum_buffer");
	lm_sgd_opts o = {num(L, 3, "lr"), num(L, 4, "momentum"), num(L, 5, "dampening"),
	                 num(L, 6, "weight_decay"), flag(L, 7), flag(L, 8)};
	if (!g) {
		lua_pushboolean(L, 0);
		return 1;
	}
	if (lm_sgd_step_(p, g, buf, &o, flag(L, 9))) lml_core_error(L);
	lua_pushboolean(L, 1);
	return 1;
}

/* adam(p, m, v, vmax|nil, lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled,
 * maximize) -> stepped */
static int o_adam(lua_State *L)
{
	lm_tensor *g, *p = param_and_grad(L, 1, &g);
	lm_tensor *m = lml_checktensor(L, 2, "exp_avg"), *v = lml_checktensor(L, 3, "exp_avg_sq");
	lm_tensor *vmax = opt_state(L, 4, "max_exp_avg_sq");
	lm_adam_opts o = {num(L, 5, "lr"), num(L, 6, "beta1"), num(L, 7, "beta2"), num(L, 8, "eps"),
	                  num(L, 9, "weight_decay"), lml_checkinteger(L, 10, "step"), flag(L, 11),
	                  flag(L, 12), flag(L, 13)};
	if (!g) {
		lua_pushboolean(L, 0);
		return 1;
	}
	if (lm_adam_step_(p, g, m, v, vmax, &o)) lml_core_error(L);
	lua_pushboolean(L, 1);
	return 1;
}

/* rmsprop(p, square_avg, buf|nil, grad_avg|nil, lr, alpha, eps, weight_decay, momentum,
 * centered, maximize) -> stepped */
static int o_rmsprop(lua_State *L)
{
	lm_tensor *g, *p = param_and_grad(L, 1, &g);
	lm_tensor *sq = lml_checktensor(L, 2, "square_avg");
	lm_tensor *buf = opt_state(L, 3, "momentum_buffer"), *ga = opt_state(L, 4, "grad_avg");
	lm_rmsprop_opts o = {num(L, 5, "lr"), num(L, 6, "alpha"), num(L, 7, "eps"),
	                     num(L, 8, "weight_decay"), num(L, 9, "momentum"), flag(L, 10), flag(L, 11)};
	if (!g) {
		lua_pushboolean(L, 0);
		return 1;
	}
	if (lm_rmsprop_step_(p, g, sq, buf, ga, &o)) lml_core_error(L);
	lua_pushboolean(L, 1);
	return 1;
}

/* clip_grad_norm(params (array of tensors), max_norm, norm_type) -> total norm */
static int o_clip(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	luaL_checktype(L, 1, LUA_TTABLE);
	double max_norm = num(L, 2, "max_norm"), p = num(L, 3, "norm_type");
	lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
	lm_tensor **gs = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *gs, 0);
	for (lua_Integer i = 1; i <= n; i++) {
		lua_rawgeti(L, 1, i);
		lm_tensor *t = lml_totensor(L, -1);
		if (!t) lml_error(L, "parameter %lld is %s, expected a tensor", (long long)i, lml_describe(L, -1, d, sizeof d));
		gs[i - 1] = lm_tensor_grad(t);
		lua_pop(L, 1);
	}
	double total = 0;
	if (lm_clip_grad_norm_(n, gs, max_norm, p, &total)) lml_core_error(L);
	lua_pushnumber(L, total);
	return 1;
}

static const luaL_Reg optim_fns[] = {
	{"sgd", o_sgd},
	{"adam", o_adam},
	{"rmsprop", o_rmsprop},
	{"clip_grad_norm", o_clip},
	{NULL, NULL},
};

/* ---------------------------------------------------------------- F.binary_cross_entropy_with_logits */

/* F.binary_cross_entropy_with_logits(x, y [, {reduction=, pos_weight=}]) */
static int f_bce_logits(lua_State *L)
{
	static const char *const reductions[] = {"mean", "sum", "none", NULL}; /* lm_reduction's */
	typedef struct { int reduction; lm_tensor *pos_weight; } bce_opts;
	static const lml_field fields[] = {
		LML_FIELD(bce_opts, reduction, LML_NAME, .names = reductions),
		LML_FIELD(bce_opts, pos_weight, LML_TENSOR),
		LML_FIELDS_END,
	};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *y = lml_checktensor(L, 2, "target");
	bce_opts o = {LM_REDUCTION_MEAN, NULL};
	lml_readopts(L, 3, NULL, fields, &o);
	LML_RETURN(L, lm_binary_cross_entropy_with_logits(x, y, o.pos_weight,
	                                                  (lm_reduction)o.reduction));
}

void lml_open_optim(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lua_newtable(L);
	lml_setfuncs(L, -1, "optim.", optim_fns, 0);
	lua_setfield(L, lm, "_optim");
	lua_getfield(L, lm, "nn");
	lua_getfield(L, -1, "functional");
	lua_pushliteral(L, "F.binary_cross_entropy_with_logits");
	lua_pushcclosure(L, f_bce_logits, 1);
	lua_setfield(L, -2, "binary_cross_entropy_with_logits");
	lua_pop(L, 2);
}
