/*
 * functional.c — lm.nn.functional (the global F in scripts): the differentiable functions of the
 * core that neural networks use, bound as F.name(x, ...).
 *
 * Only what the C core provides is here (relu, sigmoid, tanh, leaky_relu so far); the NN ops of
 * a later issue (linear, conv2d, softmax, losses, ...) are added as they land in the core.
 * Read next: sys.c.
 */
#include <math.h>

#include "lml.h"

static int unary(lua_State *L, lm_unop op)
{
	lm_tensor *t = lml_checktensor(L, 1, "input");
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_unary(op, t));
	return lml_result(L, box, r);
}

static int f_relu(lua_State *L) { return unary(L, LM_RELU); }
static int f_sigmoid(lua_State *L) { return unary(L, LM_SIGMOID); }
static int f_tanh(lua_State *L) { return unary(L, LM_TANH); }

/* F.leaky_relu(x [, negative_slope = 0.01]) */
static int f_leaky_relu(lua_State *L)
{
	lm_tensor *t = lml_checktensor(L, 1, "input");
	double slope = lml_optnumber(L, 2, "negative_slope", 0.01);
	if (!isfinite(slope)) lml_error(L, "negative_slope must be finite, got %g", slope);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_leaky_relu(t, slope));
	return lml_result(L, box, r);
}

static const luaL_Reg functions[] = {
	{"relu", f_relu},
	{"sigmoid", f_sigmoid},
	{"tanh", f_tanh},
	{"leaky_relu", f_leaky_relu},
	{NULL, NULL},
};

void lml_open_functional(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lua_newtable(L); /* lm.nn */
	lua_newtable(L); /* lm.nn.functional */
	lml_setfuncs(L, -1, "F.", functions, 0);
	lua_setfield(L, -2, "functional");
	lua_setfield(L, lm, "nn");
}
