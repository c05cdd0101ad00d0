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

static const char *const reductions[] = {"mean", "sum", "none", NULL}; /* lm_reduction's order */
static const char *conv_algos[LM_CONV_ALGO_COUNT + 1];              /* lm_conv_algo_name's */

/* option reduction = 'mean' | 'sum' | 'none', alone or with label_smoothing */
typedef struct loss_opts {
	int reduction;
	double label_smoothing;
} loss_opts;

static const lml_field reduction_field[] = {
	LML_FIELD(loss_opts, reduction, LML_NAME, .names = reductions),
	LML_FIELDS_END,
};

/* Raises unless both values of the pair option name are at least min. */
static void check_pair_min(lua_State *L, const char *name, const int64_t *v, int64_t min)
{
	if (v[0] < min || v[1] < min)
		lml_error(L, "option %s must be at least %lld, got {%lld, %lld}", name, (long long)min,
		          (long long)v[0], (long long)v[1]);
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
	LML_RETURN(L, lm_unary(op, t));
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
	LML_RETURN(L, lm_leaky_relu(t, slope));
}

/* F.gelu(x [, {approximate='none'|'tanh'}]) */
static int f_gelu(lua_State *L)
{
	static const char *const approx[] = {"none", "tanh", NULL};
	static const lml_field fields[] = {{.key = "approximate", .kind = LML_NAME, .names = approx},
	                                   LML_FIELDS_END};
	lm_tensor *t = lml_checktensor(L, 1, "input");
	int tanh_approx = 0;
	lml_readopts(L, 2, NULL, fields, &tanh_approx);
	LML_RETURN(L, lm_gelu(t, tanh_approx));
}

/* F.softmax(x [, dim = -1]), F.log_softmax(x [, dim = -1]) */
static int softmax(lua_State *L, int log)
{
	lm_tensor *t = lml_checktensor(L, 1, "input");
	int d = lua_isnoneornil(L, 2) ? -1 : lml_checkdim(L, 2, lm_tensor_ndim(t), 0, "dim");
	LML_RETURN(L, log ? lm_log_softmax(t, d) : lm_softmax(t, d));
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
	LML_RETURN(L, lm_linear(x, w, b));
}

/* F.conv2d(x, w [, b [, {stride=, padding=, dilation=, groups=, algo=}]]) */
typedef struct conv_opts {
	lm_conv2d_opts c;
	int algo;
} conv_opts;

static int f_conv2d(lua_State *L)
{
	static const lml_field fields[] = {
		{.key = "stride", .kind = LML_PAIR, .offset = offsetof(conv_opts, c.stride)},
		{.key = "padding", .kind = LML_PAIR, .offset = offsetof(conv_opts, c.padding)},
		{.key = "dilation", .kind = LML_PAIR, .offset = offsetof(conv_opts, c.dilation)},
		{.key = "groups", .kind = LML_INTEGER, .offset = offsetof(conv_opts, c.groups)},
		LML_FIELD(conv_opts, algo, LML_NAME, .names = conv_algos),
		LML_FIELDS_END,
	};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *w = lml_checktensor(L, 2, "weight");
	lm_tensor *b = opt_tensor(L, 3, "bias");
	conv_opts o = {{{1, 1}, {0, 0}, {1, 1}, 1}, LM_CONV_AUTO};
	lml_readopts(L, 4, NULL, fields, &o);
	check_pair_min(L, "stride", o.c.stride, 1);
	check_pair_min(L, "padding", o.c.padding, 0);
	check_pair_min(L, "dilation", o.c.dilation, 1);
	if (o.c.groups < 1) lml_error(L, "option groups must be at least 1, got %lld",
	                              (long long)o.c.groups);
	LML_RETURN(L, lm_conv2d_algo(x, w, b, &o.c, (lm_conv_algo)o.algo));
}

/* F.conv_transpose2d(x, w [, b [, {stride=, padding=, output_padding=, dilation=, groups=}]]) */
static int f_conv_transpose2d(lua_State *L)
{
	static const lml_field fields[] = {
		{.key = "stride", .kind = LML_PAIR, .offset = offsetof(lm_conv_transpose2d_opts, stride)},
		{.key = "padding", .kind = LML_PAIR, .offset = offsetof(lm_conv_transpose2d_opts, padding)},
		{.key = "output_padding", .kind = LML_PAIR, .offset = offsetof(lm_conv_transpose2d_opts, output_padding)},
		{.key = "dilation", .kind = LML_PAIR, .offset = offsetof(lm_conv_transpose2d_opts, dilation)},
		{.key = "groups", .kind = LML_INTEGER, .offset = offsetof(lm_conv_transpose2d_opts, groups)},
		LML_FIELDS_END,
	};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *w = lml_checktensor(L, 2, "weight");
	lm_tensor *b = opt_tensor(L, 3, "bias");
	lm_conv_transpose2d_opts o = {{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1};
	lml_readopts(L, 4, NULL, fields, &o);
	check_pair_min(L, "stride", o.stride, 1);
	check_pair_min(L, "padding", o.padding, 0);
	check_pair_min(L, "output_padding", o.output_padding, 0);
	check_pair_min(L, "dilation", o.dilation, 1);
	if (o.groups < 1) lml_error(L, "option groups must be at least 1, got %lld", (long long)o.groups);
	LML_RETURN(L, lm_conv_transpose2d(x, w, b, &o));
}

/* F.unfold(x, kernel_size [, {stride=, padding=, dilation=, layout='nchw'|'nhwc'}]): im2col, torch's
 * layout; 'nhwc': x (N, H, W, C) -> (N, L, kh*kw*C), a row per output position */
typedef struct unfold_opts {
	int64_t stride[2], padding[2], dilation[2];
	const char *layout;
} unfold_opts;

static int f_unfold(lua_State *L)
{
	static const lml_field fields[] = {
		{.key = "stride", .kind = LML_PAIR, .offset = offsetof(unfold_opts, stride)},
		{.key = "padding", .kind = LML_PAIR, .offset = offsetof(unfold_opts, padding)},
		{.key = "dilation", .kind = LML_PAIR, .offset = offsetof(unfold_opts, dilation)},
		{.key = "layout", .kind = LML_STRING, .offset = offsetof(unfold_opts, layout)},
		LML_FIELDS_END,
	};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	int64_t k[2];
	if (lua_type(L, 2) == LUA_TNUMBER) {
		k[0] = k[1] = lml_checkinteger(L, 2, "kernel size");
	} else if (lua_type(L, 2) == LUA_TTABLE && !lml_tobox(L, 2) && lua_rawlen(L, 2) == 2) {
		for (int i = 0; i < 2; i++) {
			lua_rawgeti(L, 2, i + 1);
			k[i] = lml_checkinteger(L, -1, "kernel size");
			lua_pop(L, 1);
		}
	} else {
		lml_typeerror(L, 2, "the kernel size", "an integer or a pair {kh, kw}");
	}
	unfold_opts o = {{1, 1}, {0, 0}, {1, 1}, "nchw"};
	lml_readopts(L, 3, NULL, fields, &o);
	bool nhwc = strcmp(o.layout, "nhwc") == 0;
	if (!nhwc && strcmp(o.layout, "nchw") != 0)
		luaL_error(L, "F.unfold: layout must be 'nchw' or 'nhwc', got '%s'", o.layout);
	lm_window2d w = {k[0], k[1], o.stride[0], o.stride[1], o.padding[0], o.padding[1], o.dilation[0], o.dilation[1]};
	LML_RETURN(L, nhwc ? lm_im2col_nhwc(x, &w) : lm_im2col(x, &w));
}

/* F.lstm_cell(gates (B, 4H), c (B, H)) -> (B, 2H) = [h | c'] (nn.LSTM's step) */
static int f_lstm_cell(lua_State *L)
{
	lm_tensor *a = lml_checktensor(L, 1, "gates");
	lm_tensor *c = lml_checktensor(L, 2, "cell state");
	LML_RETURN(L, lm_lstm_cell(a, c));
}

/* F.gru_cell(xg (B, 3H), hg (B, 3H), h (B, H)) -> h' (nn.GRU's step) */
static int f_gru_cell(lua_State *L)
{
	lm_tensor *xg = lml_checktensor(L, 1, "input gates");
	lm_tensor *hg = lml_checktensor(L, 2, "hidden gates");
	lm_tensor *h = lml_checktensor(L, 3, "hidden state");
	LML_RETURN(L, lm_gru_cell(xg, hg, h));
}

/* F.flash_attention(q, k, v [, {is_causal=false, scale=}]): the fused attention (nn.c) */
typedef struct flash_opts {
	int is_causal;
	double scale;
} flash_opts;

static int f_flash_attention(lua_State *L)
{
	static const lml_field fields[] = {
		LML_FIELD(flash_opts, is_causal, LML_BOOLEAN),
		LML_FIELD(flash_opts, scale, LML_NUMBER),
		LML_FIELDS_END,
	};
	lm_tensor *q = lml_checktensor(L, 1, "query");
	lm_tensor *k = lml_checktensor(L, 2, "key");
	lm_tensor *v = lml_checktensor(L, 3, "value");
	flash_opts o = {0, 0};
	lml_readopts(L, 4, NULL, fields, &o);
	if (o.scale < 0 || !isfinite(o.scale)) lml_error(L, "option scale must be a positive finite number, got %g", o.scale);
	LML_RETURN(L, lm_flash_attention(q, k, v, o.is_causal, o.scale));
}

/* lm.quant.int_mm(a uint8 (M, K), b int8 (K, N)) -> int32 (M, N), exact */
static int q_int_mm(lua_State *L)
{
	lm_tensor *a = lml_checktensor(L, 1, "first operand");
	lm_tensor *b = lml_checktensor(L, 2, "second operand");
	LML_RETURN(L, lm_int_mm(a, b));
}

/* The kernel (k or {kh, kw}) at arg 2 and {stride=, padding=[, return_indices=]} at arg 3. */
typedef struct pool_opts {
	lm_pool2d_opts p;
	int return_indices;
} pool_opts;

static void read_pool_opts(lua_State *L, pool_opts *o, int with_indices)
{
#define POOL_FIELDS                                                                                \
	{.key = "stride", .kind = LML_PAIR, .offset = offsetof(pool_opts, p.stride)},                  \
	{.key = "padding", .kind = LML_PAIR, .offset = offsetof(pool_opts, p.padding)}
	static const lml_field fields[] = {
		POOL_FIELDS, LML_FIELD(pool_opts, return_indices, LML_BOOLEAN), LML_FIELDS_END};
	static const lml_field fields_no_indices[] = {POOL_FIELDS, LML_FIELDS_END};
	*o = (pool_opts){0};
	if (lua_type(L, 2) == LUA_TNUMBER) {
		o->p.kernel[0] = o->p.kernel[1] = lml_checkinteger(L, 2, "kernel size");
	} else if (lua_type(L, 2) == LUA_TTABLE && !lml_tobox(L, 2) && lua_rawlen(L, 2) == 2) {
		for (int i = 0; i < 2; i++) {
			lua_rawgeti(L, 2, i + 1);
			o->p.kernel[i] = lml_checkinteger(L, -1, "kernel size");
			lua_pop(L, 1);
		}
	} else {
		lml_typeerror(L, 2, "the kernel size", "an integer or a pair {kh, kw}");
	}
	if (o->p.kernel[0] < 1 || o->p.kernel[1] < 1)
		lml_error(L, "the kernel size must be at least 1, got {%lld, %lld}",
		          (long long)o->p.kernel[0], (long long)o->p.kernel[1]);
	lml_readopts(L, 3, NULL, with_indices ? fields : fields_no_indices, o);
	check_pair_min(L, "stride", o->p.stride, 0);
	check_pair_min(L, "padding", o->p.padding, 0);
}

/* F.max_pool2d(x, k [, {stride=, padding=, return_indices=}]) -> y [, indices (1-based)] */
static int f_max_pool2d(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	pool_opts o;
	read_pool_opts(L, &o, 1);
	int want = o.return_indices;
	lm_tensor **box = lml_newbox(L);
	lm_tensor **ibox = want ? lml_newbox(L) : NULL;
	lm_tensor *r, *idx = NULL;
	LML_TRY(L, r, lm_max_pool2d(x, &o.p, want ? &idx : NULL));
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
	pool_opts o;
	read_pool_opts(L, &o, 0);
	LML_RETURN(L, lm_avg_pool2d(x, &o.p));
}

/* F.dropout(x [, p = 0.5 [, training = true]]) */
static int f_dropout(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	double p = lml_optnumber(L, 2, "p", 0.5);
	int training = lml_optboolean(L, 3, "training", 1);
	if (!(p >= 0 && p <= 1)) lml_error(L, "p must lie in [0, 1], got %g", p);
	LML_RETURN(L, lm_dropout(x, p, training));
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
	LML_RETURN(L, lm_layer_norm(x, n, shape, w, b, eps));
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
	LML_RETURN(L, lm_batch_norm(x, rm, rv, w, b, training, momentum, eps));
}

/* F.embedding(idx, w): rows of w (n, d) at the 1-based indices idx */
static int f_embedding(lua_State *L)
{
	lm_tensor *w = lml_checktensor(L, 2, "weight");
	if (lm_tensor_ndim(w) != 2)
		lml_error(L, "weight must be a matrix (n, d), got %d dims", lm_tensor_ndim(w));
	lm_tensor *idx = lml_index0(L, 1, "indices", lm_tensor_shape(w)[0]);
	LML_RETURN(L, lm_embedding(idx, w));
}

/* F.pad(x, pads [, value = 0]): pads = {left, right [, top, bottom, ...]}, last dim first */
static int f_pad(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	if (lua_type(L, 2) != LUA_TTABLE || lml_tobox(L, 2))
		lml_typeerror(L, 2, "pads", "a table such as {1, 1} or {1, 1, 2, 2}");
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
	static const lml_field fields[] = {
		LML_FIELD(loss_opts, reduction, LML_NAME, .names = reductions),
		LML_FIELD(loss_opts, label_smoothing, LML_NUMBER),
		LML_FIELDS_END,
	};
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lml_checktensor(L, 2, "target");
	loss_opts o = {LM_REDUCTION_MEAN, 0};
	lml_readopts(L, 3, NULL, fields, &o);
	double s = o.label_smoothing;
	if (!(s >= 0 && s <= 1)) lml_error(L, "option label_smoothing must lie in [0, 1], got %g", s);
	if (lm_tensor_ndim(x) == 0) lml_error(L, "input must have a dim of classes, got a 0-d tensor");
	lm_tensor *t = lml_index0(L, 2, "target", classes(x));
	LML_RETURN(L, lm_cross_entropy(x, t, (lm_reduction)o.reduction, s));
}

/* F.nll_loss(logp, target [, {reduction=}]) */
static int f_nll_loss(lua_State *L)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lml_checktensor(L, 2, "target");
	loss_opts o = {LM_REDUCTION_MEAN, 0};
	lml_readopts(L, 3, NULL, reduction_field, &o);
	if (lm_tensor_ndim(x) == 0) lml_error(L, "input must have a dim of classes, got a 0-d tensor");
	lm_tensor *t = lml_index0(L, 2, "target", classes(x));
	LML_RETURN(L, lm_nll_loss(x, t, (lm_reduction)o.reduction));
}

static int pair_loss(lua_State *L, int bce)
{
	lm_tensor *x = lml_checktensor(L, 1, "input");
	lm_tensor *t = lml_checktensor(L, 2, "target");
	loss_opts o = {LM_REDUCTION_MEAN, 0};
	lml_readopts(L, 3, NULL, reduction_field, &o);
	lm_reduction red = (lm_reduction)o.reduction;
	LML_RETURN(L, bce ? lm_binary_cross_entropy(x, t, red) : lm_mse_loss(x, t, red));
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
	{"conv_transpose2d", f_conv_transpose2d},
	{"unfold", f_unfold},
	{"lstm_cell", f_lstm_cell},
	{"gru_cell", f_gru_cell},
	{"flash_attention", f_flash_attention},
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
	for (int i = 0; i < LM_CONV_ALGO_COUNT; i++) conv_algos[i] = lm_conv_algo_name((lm_conv_algo)i);
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
	static const luaL_Reg softmaxes[] = {{"softmax", f_softmax}, {"log_softmax", f_log_softmax},
	                                     {NULL, NULL}};
	lml_setfuncs(L, m, "Tensor:", softmaxes, 0);
	lml_setfuncs(L, lm, "lm.", softmaxes, 0);
	/* the quantized product, for lua/lumen/quant.lua (lm.quant.int_mm) */
	lua_pushliteral(L, "lm.quant.int_mm");
	lua_pushcclosure(L, q_int_mm, 1);
	lua_setfield(L, lm, "_int_mm");
}
