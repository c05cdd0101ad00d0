/*
 * functional.c — lm.nn.functional (the global F in scripts): the differentiable functions of
 * lumen/nn.h and the activations, as F.name(x, ...) with PyTorch's defaults.
 *
 * Lua conventions: dims are 1-based (negatives from the end), class and embedding indices are
 * 1-based (checked here, then handed to the core 0-based), options are a trailing table
 * ({stride=, padding=, dilation=, groups=}, {reduction='mean'|'sum'|'none'}, ...) whose unknown
 * keys are errors. Read next: sys.c.
 */
#include <math.h>
#include <string.h>

#include "lml.h"
#include "lumen/nn.h"

/* ---------------------------------------------------------------- options */

/* Raises on keys of the options table at idx that are not in allowed (NULL-terminated). */
static void check_keys(lua_State *L, int idx, const char *const *allowed, const char *list)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_isnoneornil(L, idx)) return;
	if (lua_type(L, idx) != LUA_TTABLE || lml_tobox(L, idx))
		lml_error(L, "options must be a table (%s), got %s", list,
		          lml_describe(L, idx, d, sizeof d));
	idx = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		int ok = 0;
		if (lua_type(L, -2) == LUA_TSTRING)
			for (int i = 0; allowed[i]; i++) ok |= strcmp(lua_tostring(L, -2), allowed[i]) == 0;
		if (!ok) {
			if (lua_type(L, -2) == LUA_TSTRING)
				lml_error(L, "unknown option '%.40s' (expected %s)", lua_tostring(L, -2), list);
			lml_error(L, "options must have string keys (%s), got key %s", list,
			          lml_describe(L, -2, d, sizeof d));
		}
		lua_pop(L, 1);
	}
}

/* Pushes opts[name] (nil when opts is absent). */
static int field(lua_State *L, int idx, const char *name)
{
	if (lua_type(L, idx) != LUA_TTABLE) {
		lua_pushnil(L);
		return LUA_TNIL;
	}
	return lml_rawfield(L, idx, name);
}

/* A pair option (a number for both, or {h, w}) into v; def when absent. min: the least value. */
static void pair_opt(lua_State *L, int idx, const char *name, int64_t def, int64_t min, int64_t *v)
{
	char d[LML_DESCRIBE_MAX];
	int tp = field(L, idx, name);
	v[0] = v[1] = def;
	if (tp == LUA_TNUMBER) {
		v[0] = v[1] = lml_checkinteger(L, -1, name);
	} else if (tp == LUA_TTABLE && !lml_tobox(L, -1) && lua_rawlen(L, -1) == 2) {
		for (int i = 0; i < 2; i++) {
			lua_rawgeti(L, -1, i + 1);
			v[i] = lml_checkinteger(L, -1, name);
			lua_pop(L, 1);
		}
	} else if (tp != LUA_TNIL) {
		lml_error(L, "option %s must be an integer or a pair {h, w}, got %s", name,
		          lml_describe(L, -1, d, sizeof d));
	}
	if (v[0] < min || v[1] < min)
		lml_error(L, "option %s must be at least %lld, got {%lld, %lld}", name, (long long)min,
		          (long long)v[0], (long long)v[1]);
	lua_pop(L, 1);
}

static lm_reduction reduction_opt(lua_State *L, int idx)
{
	char d[LML_DESCRIBE_MAX];
	int tp = field(L, idx, "reduction");
	lm_reduction r = LM_REDUCTION_MEAN;
	if (tp != LUA_TNIL) {
		const char *s = tp == LUA_TSTRING ? lua_tostring(L, -1) : "";
		if (strcmp(s, "mean") == 0) r = LM_REDUCTION_MEAN;
		else if (strcmp(s, "sum") == 0) r = LM_REDUCTION_SUM;
		else if (strcmp(s, "none") == 0) r = LM_REDUCTION_NONE;
		else lml_error(L, "option reduction must be 'mean', 'sum' or 'none', got %s",
		               lml_describe(L, -1, d, sizeof d));
	}
	lua_pop(L, 1);
	return r;
}

/* An optional tensor argument (nil allowed). */
static lm_tensor *opt_tensor(lua_State *L, int idx, const char *what)
{
	return lua_isnoneornil(L, idx) ? NULL : lml_checktensor(L, idx, what);
}

/* ---------------------------------------------------------------- activations */

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

/* F.gelu(x [, {approximate='none'|'tanh'}]) */
static int f_gelu(lua_State *L)
{
	static const char *const keys[] = {"approximate", NULL};
	lm_tensor *t = lml_checktensor(L, 1, "input");
	check_keys(L, 2, keys, "approximate");
	int tanh_approx = 0;
	if (field(L, 2, "approximate") != LUA_TNIL) {
		const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
		if (strcmp(s, "tanh") == 0) tanh_approx = 1;
		else if (strcmp(s, "none") != 0)
			lml_error(L, "option approximate must be 'none' or 'tanh'");
	}
	lua_pop(L, 1);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_gelu(t, tanh_approx));
	return lml_result(L, box, r);
}

/* F.softmax(x [, dim = -1]), F.log_softmax(x [, dim = -1]) */
static int softmax(lua_State *L, int log)
{
	lm_tensor *t = lml_checktensor(L, 1, "input");
	int d = lua_isnoneornil(L, 2) ? -1 : lml_checkdim(L, 2, lm_tensor_ndim(t), 0, "dim");
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, log ? lm_log_softmax(t, d) : lm_softmax(t, d));
	return lml_result(L, box, r);
}

static int f_softmax(lua_State *L) { return softmax(L, 0); }
static int f_log_softmax(lua_State *L) { return softmax(L, 1); }

/* ---------------------------------------------------------------- layers */

/* F.linear(x, w [, b]): x w^T + b */
static int f_linear(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *w = lml_checktensor(L, 2, "weight");
	lm_tensor *b = opt_tensor(L, 3, "bias");
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_linear(x, w, b));
	return lml_result(L, box, r);
}

/* F.conv2d(x, w [, b [, {stride=, padding=, dilation=, groups=, algo=}]]) */
static int f_conv2d(lua_State *L)
{
	static const char *const keys[] = {"stride", "padding", "dilation", "groups", "algo", NULL};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *w = lml_checktensor(L, 2, "weight");
	lm_tensor *b = opt_tensor(L, 3, "bias");
	check_keys(L, 4, keys, "stride, padding, dilation, groups, algo");
	lm_conv2d_opts o;
	lm_conv_algo algo = LM_CONV_AUTO;
	if (field(L, 4, "algo") != LUA_TNIL) {
		const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
		int a = -1;
		for (int i = 0; i < LM_CONV_ALGO_COUNT; i++)
			if (strcmp(s, lm_conv_algo_name((lm_conv_algo)i)) == 0) a = i;
		if (a < 0) lml_error(L, "option algo must be 'auto', 'im2col' or 'winograd'");
		algo = (lm_conv_algo)a;
	}
	lua_pop(L, 1);
	pair_opt(L, 4, "stride", 1, 1, o.stride);
	pair_opt(L, 4, "padding", 0, 0, o.padding);
	pair_opt(L, 4, "dilation", 1, 1, o.dilation);
	field(L, 4, "groups");
	o.groups = lml_optinteger(L, -1, "option groups", 1);
	lua_pop(L, 1);
	if (o.groups < 1) lml_error(L, "option groups must be at least 1, got %lld",
	                            (long long)o.groups);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_conv2d_algo(x, w, b, &o, algo));
	return lml_result(L, box, r);
}

/* The kernel (k or {kh, kw}) at arg 2 and {stride=, padding=} at arg 3. */
static void pool_opts(lua_State *L, lm_pool2d_opts *o, int with_indices)
{
	static const char *const keys[] = {"stride", "padding", NULL};
	static const char *const keys_i[] = {"stride", "padding", "return_indices", NULL};
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 2) == LUA_TNUMBER) {
		o->kernel[0] = o->kernel[1] = lml_checkinteger(L, 2, "kernel size");
	} else if (lua_type(L, 2) == LUA_TTABLE && !lml_tobox(L, 2) && lua_rawlen(L, 2) == 2) {
		for (int i = 0; i < 2; i++) {
			lua_rawgeti(L, 2, i + 1);
			o->kernel[i] = lml_checkinteger(L, -1, "kernel size");
			lua_pop(L, 1);
		}
	} else {
		lml_error(L, "the kernel size must be an integer or a pair {kh, kw}, got %s",
		          lml_describe(L, 2, d, sizeof d));
	}
	if (o->kernel[0] < 1 || o->kernel[1] < 1)
		lml_error(L, "the kernel size must be at least 1, got {%lld, %lld}",
		          (long long)o->kernel[0], (long long)o->kernel[1]);
	check_keys(L, 3, with_indices ? keys_i : keys,
	           with_indices ? "stride, padding, return_indices" : "stride, padding");
	pair_opt(L, 3, "stride", 0, 0, o->stride);
	pair_opt(L, 3, "padding", 0, 0, o->padding);
}

/* F.max_pool2d(x, k [, {stride=, padding=, return_indices=}]) -> y [, indices (1-based)] */
static int f_max_pool2d(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_pool2d_opts o;
	pool_opts(L, &o, 1);
	field(L, 3, "return_indices");
	int want = lml_optboolean(L, -1, "option return_indices", 0);
	lua_pop(L, 1);
	lm_tensor **box = lml_newbox(L);
	lm_tensor **ibox = want ? lml_newbox(L) : NULL;
	lm_tensor *r, *idx = NULL;
	LML_TRY(L, r, lm_max_pool2d(x, &o, want ? &idx : NULL));
	if (!r) lml_core_error(L);
	if (!want) {
		lml_setbox(L, box, r);
		return 1;
	}
	lml_setpair(L, box, r, ibox, idx);
	return 2;
}

/* F.avg_pool2d(x, k [, {stride=, padding=}]) */
static int f_avg_pool2d(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_pool2d_opts o;
	pool_opts(L, &o, 0);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_avg_pool2d(x, &o));
	return lml_result(L, box, r);
}

/* F.dropout(x [, p = 0.5 [, training = true]]) */
static int f_dropout(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	double p = lml_optnumber(L, 2, "p", 0.5);
	int training = lml_optboolean(L, 3, "training", 1);
	if (!(p >= 0 && p <= 1)) lml_error(L, "p must lie in [0, 1], got %g", p);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_dropout(x, p, training));
	return lml_result(L, box, r);
}

/* F.layer_norm(x, normalized_shape [, w [, b [, eps = 1e-5]]]) */
static int f_layer_norm(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	int64_t shape[LM_MAX_DIMS];
	int n = lml_checkshape(L, 2, 2, shape, 0);
	lm_tensor *w = opt_tensor(L, 3, "weight");
	lm_tensor *b = opt_tensor(L, 4, "bias");
	double eps = lml_optnumber(L, 5, "eps", 1e-5);
	if (!(eps >= 0)) lml_error(L, "eps must be non-negative, got %g", eps);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_layer_norm(x, n, shape, w, b, eps));
	return lml_result(L, box, r);
}

/* F.batch_norm(x, running_mean, running_var [, w, b, training = false, momentum = 0.1,
 * eps = 1e-5]) */
static int f_batch_norm(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *rm = opt_tensor(L, 2, "running_mean");
	lm_tensor *rv = opt_tensor(L, 3, "running_var");
	lm_tensor *w = opt_tensor(L, 4, "weight");
	lm_tensor *b = opt_tensor(L, 5, "bias");
	int training = lml_optboolean(L, 6, "training", 0);
	double momentum = lml_optnumber(L, 7, "momentum", 0.1);
	double eps = lml_optnumber(L, 8, "eps", 1e-5);
	if (!(eps >= 0)) lml_error(L, "eps must be non-negative, got %g", eps);
	if (!(momentum >= 0 && momentum <= 1)) lml_error(L, "momentum must lie in [0, 1], got %g",
	                                                 momentum);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_batch_norm(x, rm, rv, w, b, training, momentum, eps));
	return lml_result(L, box, r);
}

/* F.embedding(idx, w): rows of w (n, d) at the 1-based indices idx */
static int f_embedding(lua_State *L)
{
	lm_tensor *w = lml_checktensor(L, 2, "weight");
	if (lm_tensor_ndim(w) != 2)
		lml_error(L, "weight must be a matrix (n, d), got %d dims", lm_tensor_ndim(w));
	lm_tensor *idx = lml_index0(L, 1, "indices", lm_tensor_shape(w)[0]);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_embedding(idx, w));
	return lml_result(L, box, r);
}

/* F.pad(x, pads [, value = 0]): pads = {left, right [, top, bottom, ...]}, last dim first */
static int f_pad(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 2) != LUA_TTABLE || lml_tobox(L, 2))
		lml_error(L, "pads must be a table such as {1, 1} or {1, 1, 2, 2}, got %s",
		          lml_describe(L, 2, d, sizeof d));
	int n = (int)lua_rawlen(L, 2);
	if (n % 2 || n / 2 > lm_tensor_ndim(x))
		lml_error(L, "pads must hold pairs (before, after), at most one per dim of the %d-d "
		          "input, got %d numbers", lm_tensor_ndim(x), n);
	int64_t pads[2 * LM_MAX_DIMS];
	for (int i = 0; i < n; i++) { /* negative pads crop, as in PyTorch */
		char what[24];
		snprintf(what, sizeof what, "pad %d", i + 1);
		lua_rawgeti(L, 2, i + 1);
		pads[i] = lml_checkinteger(L, -1, what);
		lua_pop(L, 1);
	}
	double v = lml_optnumber(L, 3, "value", 0);
	if (!lua_isnoneornil(L, 3)) lml_checkstore(L, 3, lm_tensor_dtype(x), "value", NULL);
	lm_tensor *exact = lml_exact_integer(L, 3, lm_tensor_dtype(x)); /* int64 past 2^53 */
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	if (exact) { /* pad x - v with 0, then add v back: exact in int64's wrapping arithmetic */
		lm_tensor *dx = lm_sub(x, exact), *px = dx ? lm_pad(dx, n / 2, pads, 0) : NULL;
		r = px ? lm_add(px, exact) : NULL;
		lm_tensor_release(dx);
		lm_tensor_release(px);
	} else {
		LML_TRY(L, r, lm_pad(x, n / 2, pads, v));
	}
	return lml_result(L, box, r);
}

/* ---------------------------------------------------------------- losses */

/* The number of classes of logits (N, C, ...) or (C). */
static int64_t classes(lm_tensor *x)
{
	int n = lm_tensor_ndim(x);
	return n == 0 ? 0 : n == 1 ? lm_tensor_shape(x)[0] : lm_tensor_shape(x)[1];
}

/* F.cross_entropy(logits, target [, {reduction=, label_smoothing=}]); target: 1-based classes */
static int f_cross_entropy(lua_State *L)
{
	static const char *const keys[] = {"reduction", "label_smoothing", NULL};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lml_checktensor(L, 2, "target");
	check_keys(L, 3, keys, "reduction, label_smoothing");
	lm_reduction red = reduction_opt(L, 3);
	field(L, 3, "label_smoothing");
	double s = lml_optnumber(L, -1, "option label_smoothing", 0);
	lua_pop(L, 1);
	if (!(s >= 0 && s <= 1)) lml_error(L, "option label_smoothing must lie in [0, 1], got %g", s);
	if (lm_tensor_ndim(x) == 0) lml_error(L, "input must have a dim of classes, got a 0-d tensor");
	lm_tensor *t = lml_index0(L, 2, "target", classes(x));
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_cross_entropy(x, t, red, s));
	return lml_result(L, box, r);
}

/* F.nll_loss(logp, target [, {reduction=}]) */
static int f_nll_loss(lua_State *L)
{
	static const char *const keys[] = {"reduction", NULL};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lml_checktensor(L, 2, "target");
	check_keys(L, 3, keys, "reduction");
	lm_reduction red = reduction_opt(L, 3);
	if (lm_tensor_ndim(x) == 0) lml_error(L, "input must have a dim of classes, got a 0-d tensor");
	lm_tensor *t = lml_index0(L, 2, "target", classes(x));
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, lm_nll_loss(x, t, red));
	return lml_result(L, box, r);
}

static int pair_loss(lua_State *L, int bce)
{
	static const char *const keys[] = {"reduction", NULL};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *t = lml_checktensor(L, 2, "target");
	check_keys(L, 3, keys, "reduction");
	lm_reduction red = reduction_opt(L, 3);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	LML_TRY(L, r, bce ? lm_binary_cross_entropy(x, t, red) : lm_mse_loss(x, t, red));
	return lml_result(L, box, r);
}

/* F.mse_loss(x, y [, {reduction=}]), F.binary_cross_entropy(p, y [, {reduction=}]) */
static int f_mse_loss(lua_State *L) { return pair_loss(L, 0); }
static int f_binary_cross_entropy(lua_State *L) { return pair_loss(L, 1); }

static const luaL_Reg functions[] = {
	{"relu", f_relu},
	{"sigmoid", f_sigmoid},
	{"tanh", f_tanh},
	{"leaky_relu", f_leaky_relu},
	{"gelu", f_gelu},
	{"softmax", f_softmax},
	{"log_softmax", f_log_softmax},
	{"linear", f_linear},
	{"conv2d", f_conv2d},
	{"max_pool2d", f_max_pool2d},
	{"avg_pool2d", f_avg_pool2d},
	{"dropout", f_dropout},
	{"layer_norm", f_layer_norm},
	{"batch_norm", f_batch_norm},
	{"embedding", f_embedding},
	{"pad", f_pad},
	{"cross_entropy", f_cross_entropy},
	{"nll_loss", f_nll_loss},
	{"mse_loss", f_mse_loss},
	{"binary_cross_entropy", f_binary_cross_entropy},
	{NULL, NULL},
};

void lml_open_functional(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lua_newtable(L); /* lm.nn */
	lua_newtable(L); /* lm.nn.functional */
	lml_setfuncs(L, -1, "F.", functions, 0);
	/* F.one_hot: lm.one_hot's C function (index.c, opened before) under its own name, so that its
	 * errors say F.one_hot */
	lua_getfield(L, lm, "one_hot");
	lua_CFunction one_hot = lua_tocfunction(L, -1);
	lua_pop(L, 1);
	lua_pushliteral(L, "F.one_hot");
	lua_pushcclosure(L, one_hot, 1);
	lua_setfield(L, -2, "one_hot");
	lua_setfield(L, -2, "functional");
	lua_setfield(L, lm, "nn");
	/* softmax and log_softmax are also methods and lm functions, as in PyTorch */
	lua_pushliteral(L, "Tensor:softmax");
	lua_pushcclosure(L, f_softmax, 1);
	lua_setfield(L, m, "softmax");
	lua_pushliteral(L, "Tensor:log_softmax");
	lua_pushcclosure(L, f_log_softmax, 1);
	lua_setfield(L, m, "log_softmax");
	lua_pushliteral(L, "lm.softmax");
	lua_pushcclosure(L, f_softmax, 1);
	lua_setfield(L, lm, "softmax");
	lua_pushliteral(L, "lm.log_softmax");
	lua_pushcclosure(L, f_log_softmax, 1);
	lua_setfield(L, lm, "log_softmax");
}
