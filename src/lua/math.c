/*
 * math.c — elementwise arithmetic and math: the operators (__add __sub __mul __div __unm __pow),
 * add/sub/mul/div/pow and their in-place forms, unary functions, comparisons, clamp, where,
 * maximum/minimum, matmul/mm, fill_/zero_/copy_.
 *
 * Operators and lm.* functions accept a number on either side, promoted as PyTorch does (a Lua
 * float next to an integer tensor computes in float32, a Lua integer keeps the tensor's dtype:
 * lml_number_operand); methods need a tensor self. In-place methods return self. The comparison
 * operators < <= > >= cannot give tensors in Lua (it converts their result to a boolean): they
 * raise, naming x:lt(y) and the others. Read next: reduce.c.
 */
#include <math.h>
#include <string.h>

#include "lml.h"

/* An operand: a tensor (returned) or a number (*num, NULL returned); raises otherwise. */
static lm_tensor *operand(lua_State *L, int idx, const char *what, double *num)
{
	if (lua_type(L, idx) == LUA_TNUMBER) {
		*num = lua_tonumber(L, idx);
		return NULL;
	}
	lm_tensor **b = lml_tobox(L, idx);
	if (!b) {
		lml_typeerror(L, idx, what, "a tensor or a number");
	}
	if (!*b) lml_error(L, "%s: tensor is closed", what);
	return *b;
}

static lm_tensor *apply_binary(lm_binop op, lm_tensor *a, double na, lm_tensor *b, double nb)
{
	if (a && b) return lm_binary(op, a, b);
	if (a) return op == LM_POW ? lm_pow_scalar(a, nb) : lm_binary_scalar(op, a, nb);
	return lm_rbinary_scalar(op, na, b);
}

/*
 * add/sub take {alpha=} as torch.add does: a + alpha * b (a - alpha * b), one fused pass when both
 * are tensors (lm_add_scaled). Reads the options at idx; returns whether alpha was given.
 */
static int opt_alpha(lua_State *L, int idx, lm_binop op, double *alpha)
{
	static const lml_field fields[] = {{.key = "alpha", .kind = LML_NUMBER}, LML_FIELDS_END};
	if (lua_isnoneornil(L, idx)) return 0;
	if (op != LM_ADD && op != LM_SUB) return 0;
	if (!lml_isopts(L, idx)) lml_typeerror(L, idx, "argument 3", "an options table {alpha=}");
	return lml_readopts(L, idx, NULL, fields, alpha) & 1;
}

/* a op alpha*b for add/sub with an alpha (a number operand was boxed: scaled_operand). */
static lm_tensor *apply_scaled(lm_binop op, lm_tensor *a, lm_tensor *b, double alpha)
{
	return lm_add_scaled(a, b, op == LM_SUB ? -alpha : alpha);
}

/* With {alpha=}, a number operand becomes a 0-d tensor of the dtype it takes next to other, so
 * that lm_add_scaled checks alpha against the result dtype the same way for every operand. */
static lm_tensor *scaled_operand(lua_State *L, int idx, const lm_tensor *other)
{
	return lml_boxnumber(L, idx, lml_number_dtype(L, idx, lm_tensor_dtype(other)));
}

/* PyTorch refuses integer tensors to negative integer powers (the result is not an integer). */
static void check_int_pow(lua_State *L, lm_binop op, const lm_tensor *t, int idx)
{
	if (op == LM_POW && !lm_dtype_is_float(lm_tensor_dtype(t)) && lua_isinteger(L, idx) &&
	    lua_tointeger(L, idx) < 0)
		lml_error(L, "integers to negative integer powers are not allowed (the %s tensor to the "
		          "power %lld); x:float() ^ %lld computes in float32", lm_dtype_name(lm_tensor_dtype(t)),
		          (long long)lua_tointeger(L, idx), (long long)lua_tointeger(L, idx));
}

/* The number at idx as a tensor when it cannot go to the core as a double (lml_number_operand);
 * NULL when it can. */
static lm_tensor *number_operand(lua_State *L, lm_binop op, int idx, const lm_tensor *other)
{
	if (idx == 2) check_int_pow(L, op, other, idx); /* the exponent (a number base is fine) */
	return lml_number_operand(L, idx, lm_tensor_dtype(other), lm_binop_is_comparison(op));
}

/* a op b with numbers allowed on either side (operators and lm.add(a, b), ...). */
static int arith(lua_State *L, lm_binop op)
{
	double na = 0, nb = 0;
	lm_tensor *a = operand(L, 1, "argument 1", &na);
	lm_tensor *b = operand(L, 2, "argument 2", &nb);
	if (!a && !b) lml_error(L, "expected at least one tensor, got two numbers");
	double alpha = 1;
	int scaled = opt_alpha(L, 3, op, &alpha);
	if (!a) a = scaled ? scaled_operand(L, 1, b) : number_operand(L, op, 1, b);
	else if (!b) b = scaled ? scaled_operand(L, 2, a) : number_operand(L, op, 2, a);
	LML_RETURN(L, scaled ? apply_scaled(op, a, b, alpha) : apply_binary(op, a, na, b, nb));
}

/* x:op(y): self must be a tensor. */
static int method(lua_State *L, lm_binop op)
{
	double n = 0;
	lm_tensor *a = lml_checkself(L);
	lm_tensor *b = operand(L, 2, "argument 1", &n);
	double alpha = 1;
	int scaled = opt_alpha(L, 3, op, &alpha);
	if (!b) b = scaled ? scaled_operand(L, 2, a) : number_operand(L, op, 2, a);
	LML_RETURN(L, scaled ? apply_scaled(op, a, b, alpha) : apply_binary(op, a, 0, b, n));
}

/* x:op_(y): in place, returns self. */
static int inplace(lua_State *L, lm_binop op)
{
	double n = 0;
	lm_tensor *a = lml_checkself(L);
	lm_tensor *b = operand(L, 2, "argument 1", &n);
	double alpha = 1;
	int scaled = opt_alpha(L, 3, op, &alpha); /* before any box is pushed above the arguments */
	if (!b) b = number_operand(L, op, 2, a);
	if (scaled) { /* a += alpha * b (a -= alpha * b): the optimizer step */
		double s = op == LM_SUB ? -alpha : alpha;
		if (b ? lm_add_scaled_(a, b, s) : lm_binary_scalar_(LM_ADD, a, s * n)) lml_core_error(L); /* float */
	} else if (b ? lm_binary_(op, a, b) : lm_binary_scalar_(op, a, n)) {
		lml_core_error(L);
	}
	lua_settop(L, 1);
	return 1;
}

#define BINARY(name, OP)                                                                           \
	static int f_##name(lua_State *L) { return arith(L, OP); }                                   \
	static int m_##name(lua_State *L) { return method(L, OP); }
#define BINARY_INPLACE(name, OP)                                                                   \
	BINARY(name, OP)                                                                             \
	static int m_##name##_(lua_State *L) { return inplace(L, OP); }
BINARY_INPLACE(add, LM_ADD)
BINARY_INPLACE(sub, LM_SUB)
BINARY_INPLACE(mul, LM_MUL)
BINARY_INPLACE(div, LM_DIV)
BINARY_INPLACE(pow, LM_POW)
BINARY_INPLACE(floor_divide, LM_FLOOR_DIVIDE)
BINARY_INPLACE(remainder, LM_REMAINDER)
BINARY(maximum, LM_MAXIMUM)
BINARY(minimum, LM_MINIMUM)
BINARY(eq, LM_EQ)
BINARY(ne, LM_NE)
BINARY(lt, LM_LT)
BINARY(le, LM_LE)
BINARY(gt, LM_GT)
BINARY(ge, LM_GE)

/* x < y, x > y (__lt) and x <= y, x >= y (__le): Lua turns whatever a comparison metamethod
 * returns into one boolean, so elementwise results cannot come back through these operators. */
static int mm_lt(lua_State *L)
{
	return lml_error(L, "Lua's < and > give one boolean, so they cannot compare tensors "
	                 "elementwise: use x:lt(y) for x < y and x:gt(y) for x > y (x:gt(0), not "
	                 "x > 0); lm.lt(a, b) and lm.gt(a, b) take numbers on either side");
}

static int mm_le(lua_State *L)
{
	return lml_error(L, "Lua's <= and >= give one boolean, so they cannot compare tensors "
	                 "elementwise: use x:le(y) for x <= y and x:ge(y) for x >= y (x:ge(0), not "
	                 "x >= 0); lm.le(a, b) and lm.ge(a, b) take numbers on either side");
}

static int mm_unm(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	LML_RETURN(L, lm_neg(t));
}

/* ---------------------------------------------------------------- unary */

static int unary(lua_State *L, lm_unop op)
{
	lm_tensor *t = lml_checkself(L);
	LML_RETURN(L, lm_unary(op, t));
}

static int unary_(lua_State *L, lm_unop op)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_unary_(op, t)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

#define UNARY(name, OP)                                                                            \
	static int u_##name(lua_State *L) { return unary(L, OP); }                                   \
	static int u_##name##_(lua_State *L) { return unary_(L, OP); }
UNARY(exp, LM_EXP)
UNARY(log, LM_LOG)
UNARY(sqrt, LM_SQRT)
UNARY(abs, LM_ABS)
UNARY(neg, LM_NEG)
UNARY(sin, LM_SIN)
UNARY(cos, LM_COS)
UNARY(tanh, LM_TANH)
UNARY(sigmoid, LM_SIGMOID)
UNARY(relu, LM_RELU)
UNARY(sign, LM_SIGN)
UNARY(floor, LM_FLOOR)
UNARY(ceil, LM_CEIL)
UNARY(round, LM_ROUND)
UNARY(rsqrt, LM_RSQRT)
UNARY(reciprocal, LM_RECIPROCAL)
UNARY(square, LM_SQUARE)

/* x:clamp(lo, hi): either bound may be nil. Returns the dtype the result takes (PyTorch: a Lua
 * float bound makes an integer tensor's result float32) and whether a bound is a Lua integer past
 * 2^53 next to int64, which a double would round (then clamp runs as maximum/minimum with exact
 * 0-d int64 bounds). */
static lm_dtype clamp_bounds(lua_State *L, const lm_tensor *t, double *lo, double *hi, int *exact)
{
	if (lua_isnoneornil(L, 2) && lua_isnoneornil(L, 3))
		lml_error(L, "needs at least one bound (min or max)");
	*lo = lml_optnumber(L, 2, "min", -INFINITY);
	*hi = lml_optnumber(L, 3, "max", INFINITY);
	if (isnan(*lo) || isnan(*hi)) lml_error(L, "bounds must not be NaN");
	if (*lo > *hi) lml_error(L, "min %g is greater than max %g", *lo, *hi);
	lm_dtype dt = lm_tensor_dtype(t);
	*exact = 0;
	for (int i = 2; i <= 3; i++) {
		if (lua_isnoneornil(L, i)) continue;
		if (lml_number_dtype(L, i, dt) != dt) return LM_FLOAT32;
		lua_Integer v = lua_isinteger(L, i) ? lua_tointeger(L, i) : 0;
		if (dt == LM_INT64 && (v > ((lua_Integer)1 << 53) || v < -((lua_Integer)1 << 53))) *exact = 1;
	}
	return dt;
}

/* clamp of an int64 tensor with a bound past 2^53: maximum then minimum with exact bounds. */
static lm_tensor *clamp_exact(lua_State *L, lm_tensor *t)
{
	int has_lo = !lua_isnoneornil(L, 2), has_hi = !lua_isnoneornil(L, 3); /* before any push */
	lm_tensor *lo = has_lo ? lml_boxnumber(L, 2, LM_INT64) : NULL;
	lm_tensor *hi = has_hi ? lml_boxnumber(L, 3, LM_INT64) : NULL;
	lm_tensor **box = lml_newbox(L);
	lm_tensor *a = lo ? lm_maximum(t, lo) : lm_tensor_retain(t);
	lm_tensor *r = a && hi ? lm_minimum(a, hi) : lm_tensor_retain(a);
	lm_tensor_release(a);
	lml_result(L, box, r);
	return r;
}

static int m_clamp(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	double lo, hi;
	int exact;
	lm_dtype rt = clamp_bounds(L, t, &lo, &hi, &exact);
	if (exact) {
		clamp_exact(L, t);
		return 1;
	}
	if (rt != lm_tensor_dtype(t)) { /* a float bound: clamp the float32 copy */
		lm_tensor *f;
		LML_PUSH(L, f, lm_to_dtype(t, rt));
		t = f;
	}
	LML_RETURN(L, lm_clamp(t, lo, hi));
}

static int m_clamp_(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	double lo, hi;
	int exact;
	lm_dtype rt = clamp_bounds(L, t, &lo, &hi, &exact);
	if (rt != lm_tensor_dtype(t))
		lml_error(L, "the result type %s (a float bound) cannot be stored in the %s tensor",
		          lm_dtype_name(rt), lm_dtype_name(lm_tensor_dtype(t)));
	if (exact) {
		lm_tensor *r = clamp_exact(L, t);
		if (lm_copy_(t, r)) lml_core_error(L);
	} else if (lm_clamp_(t, lo, hi)) {
		lml_core_error(L);
	}
	lua_settop(L, 1);
	return 1;
}

/* ---------------------------------------------------------------- fill, copy */

static int m_fill_(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	double v = lml_checknumber(L, 2, "value");
	lml_checkstore(L, 2, lm_tensor_dtype(t), "value", NULL);
	lm_tensor *exact = lml_exact_integer(L, 2, lm_tensor_dtype(t)); /* past 2^53 */
	if (exact ? lm_copy_(t, exact) : lm_fill_(t, v)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

static int m_zero_(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_zero_(t)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

static int m_copy_(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	lm_tensor *s = lml_checktensor(L, 2, "source");
	if (lm_copy_(t, s)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

/* ---------------------------------------------------------------- where, matmul */

/* A number of lm.where as a 0-d tensor of the dtype it takes next to other (PyTorch's rule:
 * lml_number_dtype; two numbers: int64 for Lua integers, float32 for floats). Its value is stored
 * in the result, so it must fit that dtype (lml_checkstore). */
static lm_tensor *where_number(lua_State *L, int idx, const lm_tensor *other, const char *what)
{
	lm_dtype dt = other ? lml_number_dtype(L, idx, lm_tensor_dtype(other))
	                    : lua_isinteger(L, idx) ? LM_INT64 : LM_FLOAT32;
	lml_checkstore(L, idx, dt, what, NULL);
	return lml_boxnumber(L, idx, dt);
}

/* lm.where(cond, a, b): a and b tensors or numbers. */
static int f_where(lua_State *L)
{
	double na = 0, nb = 0;
	lm_tensor *c = lml_checktensor(L, 1, "condition");
	lm_tensor *a = operand(L, 2, "argument 2", &na);
	lm_tensor *b = operand(L, 3, "argument 3", &nb);
	if (!a) a = where_number(L, 2, b, "argument 2");
	if (!b) b = where_number(L, 3, a, "argument 3");
	LML_RETURN(L, lm_where(c, a, b));
}

static int matmul_like(lua_State *L, int mm)
{
	lm_tensor *a = lml_checkself(L);
	lm_tensor *b = lml_checktensor(L, 2, "argument 2");
	if (mm && (lm_tensor_ndim(a) != 2 || lm_tensor_ndim(b) != 2))
		lml_error(L, "expects two matrices, got %d-d and %d-d tensors (use matmul)",
		          lm_tensor_ndim(a), lm_tensor_ndim(b));
	LML_RETURN(L, mm ? lm_mm(a, b) : lm_matmul(a, b));
}

static int f_matmul(lua_State *L) { return matmul_like(L, 0); }
static int f_mm(lua_State *L) { return matmul_like(L, 1); }

/* ---------------------------------------------------------------- registration */

#define BOTH(name) {#name, m_##name}, {#name "_", m_##name##_}
#define UN(name) {#name, u_##name}, {#name "_", u_##name##_}

static const luaL_Reg methods[] = {
	BOTH(add), BOTH(sub), BOTH(mul), BOTH(div), BOTH(pow), BOTH(floor_divide), BOTH(remainder),
	{"maximum", m_maximum}, {"minimum", m_minimum},
	{"eq", m_eq}, {"ne", m_ne}, {"lt", m_lt}, {"le", m_le}, {"gt", m_gt}, {"ge", m_ge},
	UN(exp), UN(log), UN(sqrt), UN(abs), UN(neg), UN(sin), UN(cos), UN(tanh), UN(sigmoid),
	UN(relu), UN(sign), UN(floor), UN(ceil), UN(round), UN(rsqrt), UN(reciprocal), UN(square),
	{"clamp", m_clamp}, {"clamp_", m_clamp_},
	{"fill_", m_fill_}, {"zero_", m_zero_}, {"copy_", m_copy_},
	{"matmul", f_matmul}, {"mm", f_mm},
	{NULL, NULL},
};

static const luaL_Reg functions[] = {
	{"add", f_add}, {"sub", f_sub}, {"mul", f_mul}, {"div", f_div}, {"pow", f_pow},
	{"floor_divide", f_floor_divide}, {"remainder", f_remainder},
	{"maximum", f_maximum}, {"minimum", f_minimum},
	{"eq", f_eq}, {"ne", f_ne}, {"lt", f_lt}, {"le", f_le}, {"gt", f_gt}, {"ge", f_ge},
	{"exp", u_exp}, {"log", u_log}, {"sqrt", u_sqrt}, {"abs", u_abs}, {"neg", u_neg},
	{"sin", u_sin}, {"cos", u_cos}, {"tanh", u_tanh}, {"sigmoid", u_sigmoid}, {"relu", u_relu},
	{"sign", u_sign}, {"floor", u_floor}, {"ceil", u_ceil}, {"round", u_round},
	{"rsqrt", u_rsqrt}, {"reciprocal", u_reciprocal}, {"square", u_square},
	{"clamp", m_clamp},
	{"where", f_where}, {"matmul", f_matmul}, {"mm", f_mm},
	{NULL, NULL},
};

static const luaL_Reg metamethods[] = {
	{"__add", f_add}, {"__sub", f_sub}, {"__mul", f_mul}, {"__div", f_div}, {"__pow", f_pow},
	{"__idiv", f_floor_divide}, {"__mod", f_remainder}, {"__unm", mm_unm},
	{"__lt", mm_lt}, {"__le", mm_le},
	{NULL, NULL},
};

void lml_open_math(lua_State *L, int mt, int m, int lm)
{
	lml_setfuncs(L, mt, "Tensor:", metamethods, 0);
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", functions, 0);
}
