/*
 * create.c — tensor creation (zeros, ones, empty, full, arange, linspace, eye, *_like) and random
 * numbers (rand, randn, randint, manual_seed, uniform_, normal_, bernoulli_).
 *
 * Every creation function takes sizes as numbers or as one table, then an optional options table
 * {dtype=, requires_grad=, device=}. Sizes are checked here (so errors speak Lua: 1-based size
 * numbers) before the core allocates; the core enforces the memory cap. Read next: tensor.c.
 */
#include <math.h>

#include "lml.h"

/* Parses (sizes... [, opts]) from argument first on: the last argument is options when it is a
 * table without an array part; a nil after a sizes table is an absent options table. */
static int sizes_and_opts(lua_State *L, int first, int64_t *shape, lml_opts *o)
{
	int top = lua_gettop(L), last = top, optidx = 0;
	if (top >= first && lml_isopts(L, top) && !lml_tobox(L, top)) {
		optidx = top;
		last = top - 1;
	} else if (top > first && lua_isnil(L, top) && lua_type(L, top - 1) == LUA_TTABLE) {
		last = top - 1;
	}
	lml_checkopts(L, optidx ? optidx : top + 1, o);
	int n = lml_checkshape(L, first, last, shape, 0);
	lml_checkdevice(L, o);
	return n;
}

typedef enum { K_ZEROS, K_ONES, K_EMPTY, K_RAND, K_RANDN } kind;

static lm_tensor *make(kind k, int n, const int64_t *shape, lm_dtype dt)
{
	switch (k) {
	case K_ZEROS: return lm_zeros(n, shape, dt);
	case K_ONES: return lm_ones(n, shape, dt);
	case K_EMPTY: return lm_empty(n, shape, dt);
	case K_RAND: return lm_rand(n, shape, dt);
	default: return lm_randn(n, shape, dt);
	}
}

static int create(lua_State *L, kind k)
{
	lml_opts o;
	int64_t shape[LM_MAX_DIMS];
	int n = sizes_and_opts(L, 1, shape, &o);
	if ((k == K_RAND || k == K_RANDN) && !lm_dtype_is_float(o.dtype))
		lml_error(L, "needs a float dtype, got %s", lm_dtype_name(o.dtype));
	lm_tensor *t;
	LML_PUSH(L, t, make(k, n, shape, o.dtype));
	if (k == K_EMPTY && lm_tensor_mark_uninitialized(t)) lml_core_error(L); /* the initcheck's */
	lml_applyopts(L, t, &o);
	return 1;
}

static int l_zeros(lua_State *L) { return create(L, K_ZEROS); }
static int l_ones(lua_State *L) { return create(L, K_ONES); }
static int l_empty(lua_State *L) { return create(L, K_EMPTY); }
static int l_rand(lua_State *L) { return create(L, K_RAND); }
static int l_randn(lua_State *L) { return create(L, K_RANDN); }

/* lm.full({d1, ...}, value [, opts]) */
static int l_full(lua_State *L)
{
	lml_opts o;
	int64_t shape[LM_MAX_DIMS];
	if (lua_type(L, 1) != LUA_TTABLE || lml_tobox(L, 1))
		lml_typeerror(L, 1, "argument 1", "a table of sizes such as {2, 3}");
	int n = lml_checkshape(L, 1, 1, shape, 0);
	double v = lml_checknumber(L, 2, "value");
	lml_checkopts(L, 3, &o);
	lml_checkdevice(L, &o);
	if (!o.has_dtype && lua_isinteger(L, 2) && !o.requires_grad) o.dtype = LM_INT64;
	lml_checkstore(L, 2, o.dtype, "value", NULL);
	lm_tensor *exact = lml_exact_integer(L, 2, o.dtype); /* past 2^53 */
	lm_tensor *t;
	LML_PUSH(L, t, lm_full(n, shape, o.dtype, v));
	if (exact && lm_copy_(t, exact)) lml_core_error(L);
	lml_applyopts(L, t, &o);
	return 1;
}

/* lm.zeros_like(x [, opts]), lm.ones_like, lm.full_like(x, v [, opts]), lm.rand_like, randn_like:
 * of x's shape, dtype and device */
static int like(lua_State *L, kind k, int has_value)
{
	lm_tensor *x = lml_checktensor(L, 1, "argument 1");
	double v = has_value ? lml_checknumber(L, 2, "value") : 0;
	lml_opts o;
	lml_checkopts(L, 2 + has_value, &o);
	lml_checkdevice(L, &o);
	lm_dtype dt = o.has_dtype ? o.dtype : lm_tensor_dtype(x);
	if ((k == K_RAND || k == K_RANDN) && !lm_dtype_is_float(dt))
		lml_error(L, "needs a float dtype, got %s", lm_dtype_name(dt));
	if (has_value) lml_checkstore(L, 2, dt, "value", NULL);
	lm_tensor *exact = has_value ? lml_exact_integer(L, 2, dt) : NULL; /* past 2^53 */
	int n = lm_tensor_ndim(x);
	const int64_t *shape = lm_tensor_shape(x);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *t;
	if (has_value)
		LML_TRY(L, t, lm_full(n, shape, dt, v));
	else
		LML_TRY(L, t, make(k, n, shape, dt));
	lml_result(L, box, t);
	if (k == K_EMPTY && !has_value && lm_tensor_mark_uninitialized(t)) lml_core_error(L);
	if (exact && lm_copy_(t, exact)) lml_core_error(L);
	lml_applyopts(L, t, &o);
	if (lm_tensor_device(x) != LM_CPU) { /* on x's device, as torch's *_like */
		lm_tensor *d;
		LML_PUSH(L, d, lm_to_device(t, lm_tensor_device(x)));
	}
	return 1;
}

static int l_zeros_like(lua_State *L) { return like(L, K_ZEROS, 0); }
static int l_ones_like(lua_State *L) { return like(L, K_ONES, 0); }
static int l_empty_like(lua_State *L) { return like(L, K_EMPTY, 0); }
static int l_rand_like(lua_State *L) { return like(L, K_RAND, 0); }
static int l_randn_like(lua_State *L) { return like(L, K_RANDN, 0); }
static int l_full_like(lua_State *L) { return like(L, K_ZEROS, 1); }

/* lm.arange(stop), lm.arange(start, stop [, step]) [, opts]: integers give int64. */
static int l_arange(lua_State *L)
{
	lml_opts o;
	int top = lua_gettop(L);
	if (top >= 1 && lml_isopts(L, top)) {
		lml_checkopts(L, top, &o);
		top--;
	} else {
		lml_checkopts(L, top + 1, &o);
	}
	if (top < 1 || top > 3)
		lml_error(L, "expected (stop), (start, stop) or (start, stop, step), got %d numbers", top);
	static const char *const names[3][3] = {
		{"stop", "", ""}, {"start", "stop", ""}, {"start", "stop", "step"}};
	double v[3];
	int all_int = 1;
	for (int i = 1; i <= top; i++) {
		v[i - 1] = lml_checknumber(L, i, names[top - 1][i - 1]);
		if (!lua_isinteger(L, i)) all_int = 0;
		if (!isfinite(v[i - 1])) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "%s must be finite, got %s", names[top - 1][i - 1],
			          lml_describe(L, i, d, sizeof d));
		}
	}
	double start = top == 1 ? 0 : v[0], stop = top == 1 ? v[0] : v[1], step = top == 3 ? v[2] : 1;
	if (step == 0) lml_error(L, "step must not be 0");
	lml_checkdevice(L, &o);
	lm_dtype dt = o.has_dtype ? o.dtype : (all_int && !o.requires_grad ? LM_INT64 : LM_FLOAT32);
	/* Lua integers stay exact (past 2^53 a double would round them) */
	int64_t is = top == 1 ? 0 : lua_tointeger(L, 1), ie = lua_tointeger(L, top == 1 ? 1 : 2);
	int64_t ip = top == 3 ? lua_tointeger(L, 3) : 1;
	lm_tensor **box = lml_newbox(L);
	lm_tensor *t;
	if (all_int && !lm_dtype_is_float(dt))
		LML_TRY(L, t, lm_arange_int(is, ie, ip, dt));
	else
		LML_TRY(L, t, lm_arange(start, stop, step, dt));
	lml_result(L, box, t);
	lml_applyopts(L, t, &o);
	return 1;
}

/* lm.linspace(a, b, n [, opts]) */
static int l_linspace(lua_State *L)
{
	double a = lml_checknumber(L, 1, "start");
	double b = lml_checknumber(L, 2, "end");
	int64_t n = lml_checkcount(L, 3, "steps");
	lml_opts o;
	lml_checkopts(L, 4, &o);
	lml_checkdevice(L, &o);
	lm_tensor *t;
	LML_PUSH(L, t, lm_linspace(a, b, n, o.dtype));
	lml_applyopts(L, t, &o);
	return 1;
}

/* lm.eye(n [, m] [, opts]) */
static int l_eye(lua_State *L)
{
	int64_t n = lml_checkinteger(L, 1, "n"), m = n;
	int oi = 2;
	if (lua_type(L, 2) == LUA_TNUMBER) {
		m = lml_checkinteger(L, 2, "m");
		oi = 3;
	}
	if (n < 0 || m < 0) lml_error(L, "sizes must be non-negative, got %lld and %lld", (long long)n,
	                              (long long)m);
	int64_t cnt;
	if (lml_mul_overflows(n, m, &cnt))
		lml_error(L, "the element count of shape [%lld, %lld] overflows", (long long)n, (long long)m);
	lml_opts o;
	lml_checkopts(L, oi, &o);
	lml_checkdevice(L, &o);
	lm_tensor *t;
	LML_PUSH(L, t, lm_eye(n, m, o.dtype));
	lml_applyopts(L, t, &o);
	return 1;
}

/* lm.randint(lo, hi, {shape} [, opts]) or lm.randint(hi, {shape} [, opts]); hi exclusive. */
static int l_randint(lua_State *L)
{
	int64_t lo = 0, hi;
	int si;
	if (lua_type(L, 2) == LUA_TTABLE) {
		hi = lml_checkinteger(L, 1, "high");
		si = 2;
	} else {
		lo = lml_checkinteger(L, 1, "low");
		hi = lml_checkinteger(L, 2, "high");
		si = 3;
	}
	if (lua_type(L, si) != LUA_TTABLE || lml_tobox(L, si))
		lml_typeerror(L, si, "the shape", "a table such as {2, 3}");
	int64_t shape[LM_MAX_DIMS];
	int n = lml_checkshape(L, si, si, shape, 0);
	if (lo >= hi) lml_error(L, "low %lld must be less than high %lld", (long long)lo, (long long)hi);
	lml_opts o;
	lml_checkopts(L, si + 1, &o);
	lml_checkdevice(L, &o);
	lm_dtype dt = o.has_dtype ? o.dtype : LM_INT64;
	lm_tensor *t;
	LML_PUSH(L, t, lm_randint(lo, hi, n, shape, dt));
	lml_applyopts(L, t, &o);
	return 1;
}

static int l_manual_seed(lua_State *L)
{
	int64_t s = lml_checkcount(L, 1, "seed");
	lm_manual_seed((uint64_t)s);
	return 0;
}

/* lm.rng_state() -> seed, offset; lm.set_rng_state(seed, offset) */
static int l_rng_state(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_rng_seed());
	lua_pushinteger(L, (lua_Integer)lm_rng_offset());
	return 2;
}

static int l_set_rng_state(lua_State *L)
{
	/* the state is two 64-bit words, which lm.rng_state gives as Lua integers: a seed past 2^63
	 * (the default one is) comes back negative and must be taken back as it is */
	int64_t s = lml_checkinteger(L, 1, "seed");
	int64_t off = lml_checkinteger(L, 2, "offset");
	lm_rng_set_state((uint64_t)s, (uint64_t)off);
	return 0;
}

/* ---------------------------------------------------------------- in-place random */

/* x:uniform_([low = 0, high = 1]), x:normal_([mean = 0, std = 1]) -> x */
static int random2_(lua_State *L, int normal)
{
	lm_tensor *t = lml_checkself(L);
	double a = lml_optnumber(L, 2, normal ? "mean" : "low", 0);
	double b = lml_optnumber(L, 3, normal ? "std" : "high", 1);
	if (normal ? lm_normal_(t, a, b) : lm_uniform_(t, a, b)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

static int t_uniform_(lua_State *L) { return random2_(L, 0); }
static int t_normal_(lua_State *L) { return random2_(L, 1); }

static int t_bernoulli_(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	double p = lml_optnumber(L, 2, "p", 0.5);
	if (!(p >= 0 && p <= 1)) lml_error(L, "p must lie in [0, 1], got %g", p);
	if (lm_bernoulli_(t, p)) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

static const luaL_Reg functions[] = {
	{"zeros", l_zeros},
	{"ones", l_ones},
	{"empty", l_empty},
	{"full", l_full},
	{"rand", l_rand},
	{"randn", l_randn},
	{"randint", l_randint},
	{"zeros_like", l_zeros_like},
	{"ones_like", l_ones_like},
	{"empty_like", l_empty_like},
	{"full_like", l_full_like},
	{"rand_like", l_rand_like},
	{"randn_like", l_randn_like},
	{"arange", l_arange},
	{"linspace", l_linspace},
	{"eye", l_eye},
	{"manual_seed", l_manual_seed},
	{"rng_state", l_rng_state},
	{"set_rng_state", l_set_rng_state},
	{NULL, NULL},
};

static const luaL_Reg methods[] = {
	{"uniform_", t_uniform_},
	{"normal_", t_normal_},
	{"bernoulli_", t_bernoulli_},
	{NULL, NULL},
};

void lml_open_create(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	lml_setfuncs(L, lm, "lm.", functions, 0);
	lml_setfuncs(L, m, "Tensor:", methods, 0);
}
