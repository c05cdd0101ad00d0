/*
 * viz_data.c — the `viz` functions of the scenes drawn from data (docs/API.md "viz"): viz.show of
 * a tensor (its storage) or of a tensor with a grad_fn (its autograd graph, with an optional
 * per-node gradcheck), the model scene's entry points (lua/lumen/viz.lua builds the layer list of
 * a module and calls viz._show_model; viz.watch records through viz._record), and the live
 * curves (viz.plot, viz.follow, viz.clear, viz.due).
 *
 * Design: as viz.c: arguments checked here, one call into src/viz. The gradcheck calls the user's
 * Lua function from inside lm_graph_gradcheck through lua_pcall (an error must not longjmp
 * through the core's frames): a failure comes back as a NULL result and its message is raised
 * afterwards. Read next: src/viz/data.c, src/autograd/inspect.c, lua/lumen/viz.lua.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lml_viz.h"

#ifdef LUMEN_HAVE_VIZ
#include "lumen/autograd.h"
#include "viz/viz.h"

#define MAX_INPUTS 32
#define MAX_LISTED 240

static int fail(lua_State *L) { return luaL_error(L, "%s", lm_last_error()); }

/* Options of viz.show(tensor, {...}) other than the ones read here (scene, gradcheck, inputs,
 * eps; activations for the quant scene). */
static void read_rest(lua_State *L, int idx, lm_viz_opts *o, bool quant)
{
	memset(o, 0, sizeof *o);
	if (lua_isnoneornil(L, idx)) return;
	char d[LML_DESCRIBE_MAX];
	if (!lua_istable(L, idx)) lml_error(L, "options must be a table, got %s", lml_describe(L, idx, d, sizeof d));
	int t = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
		if (!k) lml_error(L, "option names must be strings, got %s", lml_describe(L, -2, d, sizeof d));
		if (strcmp(k, "scene") && strcmp(k, "gradcheck") && strcmp(k, "inputs") && strcmp(k, "eps") &&
		    !(quant && strcmp(k, "activations") == 0)) {
			char v[160];
			if (lua_type(L, -1) == LUA_TNUMBER) snprintf(v, sizeof v, "%.17g", lua_tonumber(L, -1));
			else if (lua_type(L, -1) == LUA_TSTRING) snprintf(v, sizeof v, "%s", lua_tostring(L, -1));
			else if (lua_type(L, -1) == LUA_TBOOLEAN) snprintf(v, sizeof v, "%d", lua_toboolean(L, -1));
			else lml_error(L, "option %s must be a number, a string or a boolean, got %s", k, lml_describe(L, -1, d, sizeof d));
			if (lm_viz_opts_add(o, k, v, lml_fname(L)) != LM_OK) fail(L);
		}
		lua_pop(L, 1);
	}
}

/* ---------------------------------------------------------------- the graph's gradcheck */


/* opts.gradcheck (a function rebuilding the graph) and opts.inputs, checked before the graph is
 * captured (so a bad option cannot leak it): the function's stack index, the inputs, eps. */
typedef struct gc_args {
	int fn, n;
	lm_tensor *ins[MAX_INPUTS];
	double eps;
} gc_args;

static bool read_gradcheck(lua_State *L, int opts, gc_args *a)
{
	if (!lua_istable(L, opts)) return false;
	if (lml_rawfield(L, opts, "gradcheck") == LUA_TNIL) {
		lua_pop(L, 1);
		return false;
	}
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, -1) != LUA_TFUNCTION)
		lml_error(L, "option gradcheck must be a function that rebuilds the graph from its inputs, got %s",
		          lml_describe(L, -1, d, sizeof d));
	a->fn = lua_gettop(L); /* stays on the stack for the call */
	if (lml_rawfield(L, opts, "inputs") != LUA_TTABLE)
		lml_error(L, "option gradcheck needs inputs = {...}: the float64 leaves the function takes");
	int tin = lua_gettop(L);
	a->n = (int)lua_rawlen(L, tin);
	if (a->n < 1 || a->n > MAX_INPUTS) lml_error(L, "option inputs must hold 1..%d tensors, got %d", MAX_INPUTS, a->n);
	for (int k = 0; k < a->n; k++) {
		lua_rawgeti(L, tin, k + 1);
		a->ins[k] = lml_totensor(L, -1);
		if (!a->ins[k]) lml_error(L, "inputs[%d] must be a tensor, got %s", k + 1, lml_describe(L, -1, d, sizeof d));
		lua_pop(L, 1); /* the inputs table (on the stack) keeps them alive */
	}
	a->eps = lml_rawfield(L, opts, "eps") == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
	lua_pop(L, 1);
	return true;
}

/* The error of each listed node of g; on failure g is freed and the error raised. */
static void run_gradcheck(lua_State *L, const gc_args *a, lm_graph *g, double *err)
{
	lml_tensor_fn c = {L, a->fn, "the gradcheck function", ""};
	lm_tensor *ins[MAX_INPUTS];
	for (int k = 0; k < a->n; k++) ins[k] = lm_tensor_retain(a->ins[k]);
	lua_State *prev = lml_backward_state(L);
	lm_status st = lm_graph_gradcheck(g, lml_call_tensor_fn, &c, a->n, ins, a->eps, err);
	lml_backward_state(prev);
	for (int k = 0; k < a->n; k++) lm_tensor_release(ins[k]);
	if (st != LM_OK) {
		char msg[600];
		snprintf(msg, sizeof msg, "%s", lm_last_error());
		lm_graph_free(g);
		lml_error(L, "%s", msg);
	}
}

/* viz.show('quant', w [, opts]): opts.activations, a tensor or nil, then the other options. */
static int show_quant(lua_State *L, lm_tensor *w)
{
	char d[LML_DESCRIBE_MAX];
	lm_tensor *x = NULL;
	if (lua_istable(L, 2) && lml_rawfield(L, 2, "activations") != LUA_TNIL) {
		if (!(x = lml_totensor(L, -1)))
			lml_error(L, "option activations of scene 'quant' must be a tensor (tokens x input channels), got %s",
			          lml_describe(L, -1, d, sizeof d));
		lua_pop(L, 1); /* the options table keeps it */
	} else if (lua_istable(L, 2)) lua_pop(L, 1);
	lm_viz_opts o;
	read_rest(L, 2, &o, true);
	if (lm_viz_show_quant(w, x, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz.show(x [, opts]) for a tensor: the graph when it has a grad_fn (unless scene='tensor');
 * viz.show(scene, x [, opts]) names the scene ('tensor', 'graph', 'quant') first. */
int lml_viz_show_tensor(lua_State *L)
{
	char named[16] = "", d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) == LUA_TSTRING) { /* the named form: the rest as viz.show(x, opts) */
		snprintf(named, sizeof named, "%s", lua_tostring(L, 1));
		if (!lml_totensor(L, 2))
			lml_error(L, "viz.show('%s', x [, opts]) draws the tensor x, got %s (viz.scene('%s') builds the scene from "
			          "options)", named, lml_describe(L, 2, d, sizeof d), named);
		lua_remove(L, 1);
	}
	lm_tensor *t = lml_checktensor(L, 1, "argument 1");
	lua_settop(L, 2);
	const char *scene = named[0] ? named : NULL;
	if (lua_istable(L, 2) && lml_rawfield(L, 2, "scene") == LUA_TSTRING) {
		if (scene && strcmp(scene, lua_tostring(L, -1)))
			lml_error(L, "the scene is named twice: '%s' and scene = '%s'", scene, lua_tostring(L, -1));
		scene = lua_tostring(L, -1); /* the options table keeps it */
	}
	if (lua_istable(L, 2)) lua_pop(L, 1);
	if (scene && strcmp(scene, "graph") && strcmp(scene, "tensor") && strcmp(scene, "quant"))
		lml_error(L, "a tensor is drawn by the scene 'graph' (with a grad_fn), 'tensor' or 'quant' (a weight matrix), "
		          "not '%s'", scene);
	if (scene && strcmp(scene, "quant") == 0) return show_quant(L, t);
	lm_viz_opts o;
	read_rest(L, 2, &o, false);
	bool graph = lm_tensor_grad_fn_name(t) && !(scene && strcmp(scene, "tensor") == 0);
	if (scene && strcmp(scene, "graph") == 0 && !lm_tensor_grad_fn_name(t))
		lml_error(L, "this tensor has no grad_fn, so no autograd graph (a leaf, or made without requires_grad): "
		          "viz.show(x) draws its storage");
	if (!graph) {
		if (lm_viz_show_tensor(t, &o, lml_fname(L)) != LM_OK) fail(L);
		return 0;
	}
	gc_args a;
	memset(&a, 0, sizeof a);
	bool checked = read_gradcheck(L, 2, &a);
	lm_graph *g = lm_graph_capture(t, MAX_LISTED);
	if (!g) lml_core_error(L);
	double err[MAX_LISTED];
	if (checked) run_gradcheck(L, &a, g, err);
	if (lm_viz_show_graph(g, checked ? err : NULL, &o, lml_fname(L)) != LM_OK) fail(L); /* g is taken */
	return 0;
}

/* ---------------------------------------------------------------- the model */

static void copy_string(lua_State *L, int t, const char *k, char *dst, size_t cap)
{
	dst[0] = '\0';
	if (lml_rawfield(L, t, k) == LUA_TSTRING) snprintf(dst, cap, "%s", lua_tostring(L, -1));
	lua_pop(L, 1);
}

/* viz._show_model({name=, id=, params=, layers={{name=, kind=, desc=, params=, weight=}, ...}} [, opts]) */
static int v_show_model(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2); /* the options stay at 2 whatever is pushed below */
	lm_viz_model m;
	memset(&m, 0, sizeof m);
	copy_string(L, 1, "name", m.name, sizeof m.name);
	copy_string(L, 1, "id", m.id, sizeof m.id);
	m.params = lml_rawfield(L, 1, "params") == LUA_TNUMBER ? (int64_t)lua_tonumber(L, -1) : 0;
	lua_pop(L, 1);
	if (lml_rawfield(L, 1, "layers") != LUA_TTABLE) lml_error(L, "the model description has no layers");
	int lt = lua_gettop(L);
	int n = (int)lua_rawlen(L, lt);
	if (n > 128) lml_error(L, "the model has %d layers; the model scene draws at most 128", n);
	lm_viz_layer *layers = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *layers, 0);
	memset(layers, 0, (size_t)(n > 0 ? n : 1) * sizeof *layers);
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, lt, i + 1);
		int e = lua_gettop(L);
		copy_string(L, e, "name", layers[i].name, sizeof layers[i].name);
		copy_string(L, e, "kind", layers[i].kind, sizeof layers[i].kind);
		copy_string(L, e, "desc", layers[i].desc, sizeof layers[i].desc);
		layers[i].params = lml_rawfield(L, e, "params") == LUA_TNUMBER ? (int64_t)lua_tonumber(L, -1) : 0;
		lua_pop(L, 1);
		lml_rawfield(L, e, "weight");
		layers[i].weight = lml_totensor(L, -1); /* the layer table keeps it alive for the call */
		lua_pop(L, 2);
	}
	m.nlayers = n;
	m.layers = layers;
	lm_viz_opts o;
	read_rest(L, 2, &o, false);
	if (lm_viz_show_model(&m, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz._record(layer, kind, tensor): layer 1-based, kind 'activations' or 'gradients' */
static int v_record(lua_State *L)
{
	int64_t layer = lml_checkinteger(L, 1, "layer");
	static const char *const kinds[] = {"activations", "gradients", NULL};
	int kind = lml_checkname(L, 2, "kind", kinds);
	lm_tensor *t = lml_checktensor(L, 3, "argument 3");
	if (layer < 1 || layer > 100000) lml_error(L, "layer must lie in 1..100000, got %lld", (long long)layer);
	if (lm_viz_model_record((int)layer - 1, kind, t, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* ---------------------------------------------------------------- curves */

#define MAX_PLOT_POINTS 100000000

/* The values of a number, a table of numbers or a tensor (any shape, read in order) as n doubles
 * in a userdata pushed on the stack (freed by the GC if a later check raises). */
static double *plot_values(lua_State *L, int idx, const char *what, int64_t *n)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, idx) == LUA_TNUMBER) {
		double *out = lua_newuserdatauv(L, sizeof *out, 0);
		*out = lua_tonumber(L, idx);
		*n = 1;
		return out;
	}
	if (lml_tobox(L, idx)) {
		lm_tensor *t = lml_checktensor(L, idx, what);
		int64_t m = lm_tensor_numel(t), one = -1;
		if (m > MAX_PLOT_POINTS)
			lml_error(L, "%s holds %lld values, at most %d are plotted", what, (long long)m, MAX_PLOT_POINTS);
		double *out = lua_newuserdatauv(L, (size_t)(m ? m : 1) * sizeof *out, 0);
		lm_tensor *flat = lm_reshape(t, 1, &one);
		lm_tensor *f64 = flat ? lm_to_dtype(flat, LM_FLOAT64) : NULL;
		lm_tensor *c = f64 ? lm_contiguous(f64) : NULL;
		if (c) memcpy(out, lm_tensor_data(c), (size_t)m * sizeof *out);
		lm_tensor_release(flat);
		lm_tensor_release(f64);
		lm_tensor_release(c);
		if (!c) lml_core_error(L);
		*n = m;
		return out;
	}
	if (lua_type(L, idx) != LUA_TTABLE)
		lml_error(L, "%s must be a number, a table of numbers or a tensor, got %s", what, lml_describe(L, idx, d, sizeof d));
	lua_Unsigned m = lua_rawlen(L, idx);
	if (m > MAX_PLOT_POINTS)
		lml_error(L, "%s holds %llu values, at most %d are plotted", what, (unsigned long long)m, MAX_PLOT_POINTS);
	double *out = lua_newuserdatauv(L, (size_t)(m ? m : 1) * sizeof *out, 0);
	for (lua_Unsigned i = 1; i <= m; i++) {
		if (lua_rawgeti(L, idx, (lua_Integer)i) != LUA_TNUMBER)
			lml_error(L, "%s[%llu] must be a number, got %s", what, (unsigned long long)i, lml_describe(L, -1, d, sizeof d));
		out[i - 1] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	*n = (int64_t)m;
	return out;
}

typedef struct plot_opts {
	const char *x;
} plot_opts;

/* viz.plot(series, step, value [, {x=}]): value a number or a one-element tensor; or
 * viz.plot(series, xs, ys [, {x=}]): xs and ys tables of numbers or tensors of as many values (a
 * curve y(x) at once). Option x names what x is ('lr'); without it x is a step while every x could
 * be one, and "x" for a curve given at once. */
static int v_plot(lua_State *L)
{
	static const lml_field fields[] = {LML_FIELD(plot_opts, x, LML_STRING, .doc = "what x is (the axis label)"),
	                                   LML_FIELDS_END};
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_error(L, "the series name must be a string such as 'train/loss', got %s", lml_describe(L, 1, d, sizeof d));
	plot_opts o = {NULL};
	lml_readopts(L, 4, NULL, fields, &o);
	if (lua_type(L, 2) == LUA_TNUMBER || lua_isnoneornil(L, 2)) { /* one point */
		double step = lml_checknumber(L, 2, "step");
		double v;
		lm_tensor *t = lml_totensor(L, 3);
		if (t) {
			if (lm_tensor_numel(t) != 1) lml_error(L, "the value must be a number or a one-element tensor, got %lld elements",
			                                       (long long)lm_tensor_numel(t));
			if (lm_tensor_item(t, &v) != LM_OK) lml_core_error(L);
		} else {
			v = lml_checknumber(L, 3, "value");
		}
		if (lm_viz_plot(lua_tostring(L, 1), &step, &v, 1, o.x, lml_fname(L)) != LM_OK) fail(L);
		return 0;
	}
	int64_t nx, ny;
	const double *x = plot_values(L, 2, "x", &nx);
	const double *y = plot_values(L, 3, "y", &ny);
	if (nx != ny) lml_error(L, "x and y must hold as many values, got %lld and %lld", (long long)nx, (long long)ny);
	/* a curve given at once is a function of x, not a run's steps, unless x says otherwise (one
	 * value in a tensor is a point, as a number is) */
	const char *xname = o.x ? o.x : lua_type(L, 2) == LUA_TTABLE || nx > 1 ? "x" : NULL;
	if (lm_viz_plot(lua_tostring(L, 1), x, y, nx, xname, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz.follow(path): live curves from a CSV log as it grows; viz.follow() -> what its reading says */
static int v_follow(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_isnoneornil(L, 1)) {
		const char *st = lm_viz_follow_status();
		if (!st) return 0;
		lua_pushstring(L, st);
		return 1;
	}
	if (lua_type(L, 1) != LUA_TSTRING) lml_error(L, "the path must be a string, got %s", lml_describe(L, 1, d, sizeof d));
	if (lm_viz_follow(lua_tostring(L, 1), lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

static int v_clear(lua_State *L)
{
	(void)L;
	lm_viz_curves_clear();
	return 0;
}

/* viz.due() -> whether a live scene would draw new data now (at most 10 times a second) */
static int v_due(lua_State *L)
{
	lua_pushboolean(L, lm_viz_due());
	return 1;
}

/* viz._show_attention(W, tokens, causal, source [, opts]): W a contiguous float64 (L, H, T, T)
 * tensor and tokens T strings, both checked by lua/lumen/viz.lua (viz.show('attention', ...)). */
static int v_show_attention(lua_State *L)
{
	lm_tensor *w = lml_checktensor(L, 1, "weights");
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 5);
	if (lm_tensor_ndim(w) != 4 || lm_tensor_dtype(w) != LM_FLOAT64 || !lm_tensor_is_contiguous(w))
		lml_error(L, "the attention scene takes the weights as a contiguous float64 (layers, heads, T, T) tensor");
	const int64_t *sh = lm_tensor_shape(w);
	if (sh[2] != sh[3] || (int64_t)lua_rawlen(L, 2) != sh[2] || sh[2] > 256 || sh[0] > 64 || sh[1] > 64 ||
	    sh[0] * sh[1] > 64) /* bounded: both at most 64 by the tests before it */
		lml_error(L, "the attention scene's weights and tokens do not match");
	const char **tok = lua_newuserdatauv(L, (size_t)sh[2] * sizeof *tok + 1, 0);
	for (int64_t i = 0; i < sh[2]; i++) {
		lua_rawgeti(L, 2, i + 1);
		tok[i] = lua_tostring(L, -1); /* the table keeps the strings */
		lua_pop(L, 1);
	}
	lm_viz_attention a = {lm_tensor_data(w), (int)sh[0], (int)sh[1], (int)sh[2], tok, lua_toboolean(L, 3),
	                      lua_tostring(L, 4)};
	lm_viz_opts o;
	read_rest(L, 5, &o, false);
	if (lm_viz_show_attention(&a, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz._show_rnn({rnn=, lstm=, rnn_clipped=, lstm_clipped=}, clip, source [, opts]): contiguous
 * float64 1-D tensors of one length, checked by lua/lumen/viz.lua. */
static int v_show_rnn(lua_State *L)
{
	static const char *const names[LM_VIZ_RNN_SERIES] = {"rnn", "lstm", "rnn_clipped", "lstm_clipped"};
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 4);
	lm_viz_rnn r = {{NULL}, 0, luaL_checknumber(L, 2), lua_tostring(L, 3)};
	for (int i = 0; i < LM_VIZ_RNN_SERIES; i++) {
		lml_rawfield(L, 1, names[i]);
		lm_tensor *t = lml_totensor(L, -1);
		lua_pop(L, 1); /* the table keeps it */
		if (!t) continue;
		if (lm_tensor_ndim(t) != 1 || lm_tensor_dtype(t) != LM_FLOAT64 || !lm_tensor_is_contiguous(t) ||
		    (r.T && lm_tensor_shape(t)[0] != r.T))
			lml_error(L, "the rnn scene takes its gradient norms as contiguous float64 1-D tensors of one length");
		r.T = (int)lm_tensor_shape(t)[0];
		r.norm[i] = lm_tensor_data(t);
	}
	lm_viz_opts o;
	read_rest(L, 4, &o, false);
	if (lm_viz_show_rnn(&r, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* Boxes from a contiguous float64 (K, 8) tensor: x1, y1, x2, y2, score, image (1-based), class,
 * kept (0 or 1), as lua/lumen/viz.lua packs them; a userdata of K boxes is pushed. */
static lm_viz_box *boxes_of(lua_State *L, int idx, int *k)
{
	lm_tensor *t = lml_checktensor(L, idx, "boxes");
	if (lm_tensor_ndim(t) != 2 || lm_tensor_shape(t)[1] != 8 || lm_tensor_dtype(t) != LM_FLOAT64 ||
	    !lm_tensor_is_contiguous(t) || lm_tensor_shape(t)[0] > 4096)
		lml_error(L, "the detection scene takes its boxes as a contiguous float64 (K, 8) tensor, K <= 4096");
	*k = (int)lm_tensor_shape(t)[0];
	const double *v = lm_tensor_data(t);
	lm_viz_box *b = lua_newuserdatauv(L, (size_t)(*k ? *k : 1) * sizeof *b, 0);
	for (int i = 0; i < *k; i++, v += 8) /* bounded: K <= 4096 */
		b[i] = (lm_viz_box){v[0], v[1], v[2], v[3], v[4], (int)v[5] - 1, (int)v[6], v[7] != 0};
	return b;
}

/* viz._show_detection(images, truth, pred, classes, iou, source [, opts]): images a contiguous
 * float64 (N, H, W) tensor of values 0..1, truth and pred (K, 8) boxes (boxes_of), classes a list
 * of names; checked by lua/lumen/viz.lua. */
static int v_show_detection(lua_State *L)
{
	lm_tensor *im = lml_checktensor(L, 1, "images");
	luaL_checktype(L, 4, LUA_TTABLE);
	lua_settop(L, 7);
	if (lm_tensor_ndim(im) != 3 || lm_tensor_dtype(im) != LM_FLOAT64 || !lm_tensor_is_contiguous(im) ||
	    lm_tensor_shape(im)[0] > 16 || lm_tensor_shape(im)[1] > 256 || lm_tensor_shape(im)[2] > 256)
		lml_error(L, "the detection scene takes its images as a contiguous float64 (N, H, W) tensor, N <= 16, H, W <= 256");
	int nt, np;
	lm_viz_box *truth = boxes_of(L, 2, &nt);
	lm_viz_box *pred = boxes_of(L, 3, &np);
	int nc = (int)lua_rawlen(L, 4);
	if (nc > 32) lml_error(L, "the detection scene takes at most 32 classes, got %d", nc);
	const char *cls[32];
	for (int i = 0; i < nc; i++) {
		lua_rawgeti(L, 4, i + 1);
		cls[i] = lua_tostring(L, -1); /* the table keeps the strings */
		lua_pop(L, 1);
	}
	const int64_t *sh = lm_tensor_shape(im);
	lm_viz_detection d = {lm_tensor_data(im), (int)sh[0], (int)sh[1], (int)sh[2], truth, pred, nt, np, cls, nc,
	                      luaL_checknumber(L, 5), lua_tostring(L, 6)};
	lm_viz_opts o;
	read_rest(L, 7, &o, false);
	if (lm_viz_show_detection(&d, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* An int pair field of table idx ({h, w}), default d. */
static void int_pair(lua_State *L, int idx, const char *k, int *out, int d)
{
	out[0] = out[1] = d;
	if (lml_rawfield(L, idx, k) == LUA_TTABLE) {
		for (int i = 0; i < 2; i++) {
			lua_rawgeti(L, -1, i + 1);
			if (lua_isinteger(L, -1)) out[i] = (int)lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
}

/* viz._show_features({name =, input =, layers = {{name, kind, desc, out, in, weight, bias, stride,
 * padding, dilation, groups}, ...}, classes = {...}, source =} [, opts]), as lua/lumen/viz.lua
 * (viz._features) builds it: tensors float64 contiguous, checked again by the scene. */
static int v_show_features(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 2);
	lm_viz_features g;
	memset(&g, 0, sizeof g);
	copy_string(L, 1, "name", g.name, sizeof g.name);
	lml_rawfield(L, 1, "input");
	g.input = lml_totensor(L, -1);
	lua_pop(L, 1);
	lml_rawfield(L, 1, "source");
	g.source = lua_tostring(L, -1); /* the table keeps it */
	lua_pop(L, 1);
	if (lml_rawfield(L, 1, "layers") != LUA_TTABLE) lml_error(L, "the features scene needs layers");
	int lt = lua_gettop(L);
	int n = (int)lua_rawlen(L, lt);
	if (n > 32) lml_error(L, "the features scene draws at most 32 layers, got %d", n);
	lm_viz_fmap *m = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof *m, 0);
	memset(m, 0, (size_t)(n > 0 ? n : 1) * sizeof *m);
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, lt, i + 1);
		int e = lua_gettop(L);
		copy_string(L, e, "name", m[i].name, sizeof m[i].name);
		copy_string(L, e, "kind", m[i].kind, sizeof m[i].kind);
		copy_string(L, e, "desc", m[i].desc, sizeof m[i].desc);
		const char *const tk[] = {"out", "in", "weight", "bias"};
		const lm_tensor **tp[] = {&m[i].out, &m[i].in, &m[i].weight, &m[i].bias};
		for (int k = 0; k < 4; k++) {
			lml_rawfield(L, e, tk[k]);
			*tp[k] = lml_totensor(L, -1); /* the layer table keeps it */
			lua_pop(L, 1);
		}
		int_pair(L, e, "stride", m[i].stride, 1);
		int_pair(L, e, "padding", m[i].padding, 0);
		int_pair(L, e, "dilation", m[i].dilation, 1);
		m[i].groups = lml_rawfield(L, e, "groups") == LUA_TNUMBER ? (int)lua_tointeger(L, -1) : 1;
		lua_pop(L, 2);
	}
	g.layers = m;
	g.n = n;
	const char *cls[32];
	if (lml_rawfield(L, 1, "classes") == LUA_TTABLE) {
		int ct = lua_gettop(L);
		int nc = (int)lua_rawlen(L, ct);
		if (nc > 32) nc = 32;
		for (int i = 0; i < nc; i++) {
			lua_rawgeti(L, ct, i + 1);
			cls[i] = lua_tostring(L, -1); /* the classes table keeps the strings */
			lua_pop(L, 1);
		}
		g.classes = cls;
		g.nclasses = nc;
	}
	lm_viz_opts o;
	read_rest(L, 2, &o, false);
	if (lm_viz_show_features(&g, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz._show_ddp(launch, done, backward_end, source [, opts]): contiguous float64 1-D tensors of one
 * length (seconds), as lua/lumen/viz.lua builds them from ddp.timeline. */
static int v_show_ddp(lua_State *L)
{
	lm_tensor *a = lml_checktensor(L, 1, "launch"), *b = lml_checktensor(L, 2, "done");
	lua_settop(L, 5);
	if (lm_tensor_ndim(a) != 1 || lm_tensor_ndim(b) != 1 || lm_tensor_dtype(a) != LM_FLOAT64 ||
	    lm_tensor_dtype(b) != LM_FLOAT64 || !lm_tensor_is_contiguous(a) || !lm_tensor_is_contiguous(b) ||
	    lm_tensor_shape(a)[0] != lm_tensor_shape(b)[0] || lm_tensor_shape(a)[0] > 64)
		lml_error(L, "the ddp scene takes launch and done as contiguous float64 1-D tensors of one length, at most 64");
	lm_viz_ddp d = {lm_tensor_data(a), lm_tensor_data(b), (int)lm_tensor_shape(a)[0], luaL_checknumber(L, 3),
	                lua_tostring(L, 4)};
	lm_viz_opts o;
	read_rest(L, 5, &o, false);
	if (lm_viz_show_ddp(&d, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz._show_pipeline(K, M, ops, schedule, source [, opts]): ops a contiguous float64 (K * 2M, 4)
 * tensor, row k * 2M + i: kind (1 forward, 2 backward), micro-batch (1-based), start, end (seconds),
 * as lua/lumen/viz.lua builds it from pipe.timeline. */
static int v_show_pipeline(lua_State *L)
{
	lua_Integer K = luaL_checkinteger(L, 1), M = luaL_checkinteger(L, 2);
	lm_tensor *ops = lml_checktensor(L, 3, "ops");
	lua_settop(L, 6);
	if (K < 1 || K > 8 || M < 1 || M > 32)
		lml_error(L, "the pipeline scene draws 1 to 8 stages and 1 to 32 micro-batches, got %lld and %lld", (long long)K,
		          (long long)M);
	if (lm_tensor_ndim(ops) != 2 || lm_tensor_dtype(ops) != LM_FLOAT64 || !lm_tensor_is_contiguous(ops) ||
	    lm_tensor_shape(ops)[0] != K * 2 * M || lm_tensor_shape(ops)[1] != 4)
		lml_error(L, "the pipeline scene takes its ops as a contiguous float64 tensor of shape [%lld, 4]",
		          (long long)(K * 2 * M));
	int n = (int)(K * 2 * M);
	const double *v = lm_tensor_data(ops);
	char kinds[8 * 64];
	int micro[8 * 64];
	double t0[8 * 64], t1[8 * 64];
	for (int i = 0; i < n; i++) {
		const double *r = v + 4 * i;
		if ((r[0] != 1 && r[0] != 2) || !(r[1] >= 1 && r[1] <= (double)M) || r[1] != floor(r[1]) || !isfinite(r[2]) ||
		    !isfinite(r[3]) || r[3] < r[2])
			lml_error(L, "the pipeline scene: op %d of stage %d is not a forward or backward of a micro-batch 1..%lld "
			          "with finite start <= end", i % (int)(2 * M) + 1, i / (int)(2 * M) + 1, (long long)M);
		kinds[i] = r[0] == 1 ? 'F' : 'B';
		micro[i] = (int)r[1] - 1;
		t0[i] = r[2];
		t1[i] = r[3];
	}
	lm_viz_pipeline d = {(int)K, (int)M, kinds, micro, t0, t1, luaL_optstring(L, 4, "gpipe"), lua_tostring(L, 5)};
	lm_viz_opts o;
	read_rest(L, 6, &o, false);
	if (lm_viz_show_pipeline(&d, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* A contiguous float64 tensor of n elements at idx (n < 0: any), or an error naming what. */
static const double *f64_arg(lua_State *L, int idx, const char *what, int64_t n)
{
	lm_tensor *t = lml_checktensor(L, idx, what);
	if (lm_tensor_dtype(t) != LM_FLOAT64 || !lm_tensor_is_contiguous(t) || (n >= 0 && lm_tensor_numel(t) != n))
		lml_error(L, "the scene takes %s as a contiguous float64 tensor%s", what, n >= 0 ? " of the right size" : "");
	return lm_tensor_data(t);
}

/* viz._show_gan2d(real (n, 2), fake (m, 2), surface (b, b), warp (k*k, 2), dloss (s), gloss (s),
 * {js=, lo=, hi=, steps=, loss=}, source [, opts]): float64 tensors, as lua/lumen/viz.lua builds
 * them from a gen.GAN2D. */
static int v_show_gan2d(lua_State *L)
{
	lua_settop(L, 9);
	lm_tensor *r = lml_checktensor(L, 1, "real"), *fk = lml_checktensor(L, 2, "fake");
	lm_tensor *sf = lml_checktensor(L, 3, "surface"), *wp = lml_checktensor(L, 4, "warp");
	lm_tensor *dl = lml_checktensor(L, 5, "d losses");
	if (lm_tensor_ndim(r) != 2 || lm_tensor_shape(r)[1] != 2 || lm_tensor_ndim(fk) != 2 || lm_tensor_shape(fk)[1] != 2 ||
	    lm_tensor_ndim(sf) != 2 || lm_tensor_shape(sf)[0] != lm_tensor_shape(sf)[1] || lm_tensor_ndim(wp) != 2 ||
	    lm_tensor_shape(wp)[1] != 2 || lm_tensor_ndim(dl) != 1)
		lml_error(L, "the gan2d scene takes real and fake (n, 2), a square surface, warp (k * k, 2) and 1-d losses");
	int64_t kk = lm_tensor_shape(wp)[0], k = (int64_t)floor(sqrt((double)kk) + 0.5);
	/* bounded: k is the rounded square root of a tensor's element count, so k * k fits */
	if (k * k != kk) lml_error(L, "the gan2d scene: warp holds %lld points, not a k x k grid", (long long)kk);
	luaL_checktype(L, 7, LUA_TTABLE);
	lm_viz_gan2d d = {
		.real = f64_arg(L, 1, "real", -1), .fake = f64_arg(L, 2, "fake", -1), .surface = f64_arg(L, 3, "surface", -1),
		.warp = f64_arg(L, 4, "warp", -1), .dloss = f64_arg(L, 5, "d losses", -1),
		.gloss = f64_arg(L, 6, "g losses", lm_tensor_numel(dl)),
		.nreal = (int)lm_tensor_shape(r)[0], .nfake = (int)lm_tensor_shape(fk)[0], .bins = (int)lm_tensor_shape(sf)[0],
		.k = (int)k, .nloss = (int)lm_tensor_numel(dl),
	};
	lua_getfield(L, 7, "js");
	d.js = luaL_optnumber(L, -1, 0);
	lua_getfield(L, 7, "lo");
	d.lo = luaL_checknumber(L, -1);
	lua_getfield(L, 7, "hi");
	d.hi = luaL_checknumber(L, -1);
	lua_getfield(L, 7, "steps");
	d.steps = (int)luaL_optinteger(L, -1, 0);
	lua_getfield(L, 7, "loss");
	d.loss_kind = lua_tostring(L, -1);
	lua_pop(L, 5);
	d.source = lua_tostring(L, 8);
	lm_viz_opts o;
	read_rest(L, 9, &o, false);
	if (lm_viz_show_gan2d(&d, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz._show_diffusion(fwd (S, n, 2), rev (S, n, 2), fwd_t {..}, rev_t {..}, alpha_bars (T), schedule,
 * source [, opts]): float64 tensors and step lists, as lua/lumen/viz.lua builds them. */
static int v_show_diffusion(lua_State *L)
{
	lua_settop(L, 8);
	lm_tensor *fw = lml_checktensor(L, 1, "forward"), *rv = lml_checktensor(L, 2, "reverse");
	lm_tensor *ab = lml_checktensor(L, 5, "alpha_bars");
	if (lm_tensor_ndim(fw) != 3 || lm_tensor_shape(fw)[2] != 2 || lm_tensor_ndim(rv) != 3 ||
	    lm_tensor_shape(rv)[0] != lm_tensor_shape(fw)[0] || lm_tensor_shape(rv)[1] != lm_tensor_shape(fw)[1] ||
	    lm_tensor_shape(rv)[2] != 2 || lm_tensor_ndim(ab) != 1)
		lml_error(L, "the diffusion scene takes the chains as (S, n, 2) tensors of one shape and alpha_bars as a 1-d tensor");
	int S = (int)lm_tensor_shape(fw)[0];
	if (S < 2 || S > 32) lml_error(L, "the diffusion scene draws 2 to 32 snapshots, got %d", S);
	int ft[32], rt[32];
	for (int which = 0; which < 2; which++) {
		int idx = 3 + which;
		luaL_checktype(L, idx, LUA_TTABLE);
		if ((int)lua_rawlen(L, idx) != S) lml_error(L, "the diffusion scene: %d steps for %d snapshots", (int)lua_rawlen(L, idx), S);
		for (int k = 0; k < S; k++) {
			lua_rawgeti(L, idx, k + 1);
			(which ? rt : ft)[k] = (int)luaL_checkinteger(L, -1);
			lua_pop(L, 1);
		}
	}
	lm_viz_diffusion d = {
		.n = (int)lm_tensor_shape(fw)[1], .S = S, .T = (int)lm_tensor_numel(ab), .fwd_t = ft, .rev_t = rt,
		.fwd = f64_arg(L, 1, "forward", -1), .rev = f64_arg(L, 2, "reverse", -1), .alpha_bars = f64_arg(L, 5, "alpha_bars", -1),
		.schedule = lua_tostring(L, 6), .source = lua_tostring(L, 7),
	};
	lm_viz_opts o;
	read_rest(L, 8, &o, false);
	if (lm_viz_show_diffusion(&d, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* Reads a list of n class numbers (1-based in Lua) at idx into out (0-based); false when nil. */
static bool class_list(lua_State *L, int idx, int n, int *out, const char *what)
{
	if (lua_isnil(L, idx)) return false;
	luaL_checktype(L, idx, LUA_TTABLE);
	if ((int)lua_rawlen(L, idx) != n) lml_error(L, "the samples scene: %d %s for %d images", (int)lua_rawlen(L, idx), what, n);
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, idx, i + 1);
		out[i] = (int)luaL_checkinteger(L, -1) - 1;
		lua_pop(L, 1);
	}
	return true;
}

/* viz._show_samples(images (N, C, H, W) float64, labels | nil, predicted | nil, classes {..}, step,
 * source [, opts]) */
static int v_show_samples(lua_State *L)
{
	lua_settop(L, 7);
	lm_tensor *im = lml_checktensor(L, 1, "images");
	if (lm_tensor_ndim(im) != 4) lml_error(L, "the samples scene takes images as (N, C, H, W)");
	const int64_t *sh = lm_tensor_shape(im);
	if (sh[0] < 1 || sh[0] > 256) lml_error(L, "the samples scene draws 1 to 256 images, got %lld", (long long)sh[0]);
	int n = (int)sh[0], labels[256], pred[256];
	bool hl = class_list(L, 2, n, labels, "labels"), hp = class_list(L, 3, n, pred, "predictions");
	const char *names[32];
	int nc = 0;
	if (!lua_isnil(L, 4)) {
		luaL_checktype(L, 4, LUA_TTABLE);
		nc = (int)lua_rawlen(L, 4);
		if (nc > 32) lml_error(L, "the samples scene names at most 32 classes, got %d", nc);
		for (int k = 0; k < nc; k++) {
			lua_rawgeti(L, 4, k + 1);
			names[k] = lua_tostring(L, -1);
			lua_pop(L, 1); /* the strings stay alive in the table */
		}
	}
	lm_viz_samples d = {.images = f64_arg(L, 1, "images", -1), .n = n, .c = (int)sh[1], .h = (int)sh[2], .w = (int)sh[3],
	                    .labels = hl ? labels : NULL, .predicted = hp ? pred : NULL, .classes = names, .nclasses = nc,
	                    .step = (int)luaL_optinteger(L, 5, 0), .source = lua_tostring(L, 6)};
	lm_viz_opts o;
	read_rest(L, 7, &o, false);
	if (lm_viz_show_samples(&d, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* The float64 (n, cols) tensor in field k of the run table at t (n 0 allowed), or an error. */
static const double *bang_table(lua_State *L, int t, const char *k, int cols, int *n)
{
	lua_getfield(L, t, k);
	int idx = lua_gettop(L);
	lm_tensor *x = lml_checktensor(L, idx, k);
	if (lm_tensor_ndim(x) != 2 || lm_tensor_shape(x)[1] != cols || lm_tensor_shape(x)[0] > 1000000)
		lml_error(L, "the scene takes %s as a float64 (n, %d) tensor", k, cols);
	*n = (int)lm_tensor_shape(x)[0];
	const double *v = f64_arg(L, idx, k, -1);
	lua_pop(L, 1); /* the run table keeps the tensor */
	return v;
}

/* The strings of the list in field k of the table at t (at most max), in a userdata left on the stack. */
static const char *const *bang_names(lua_State *L, int t, const char *k, int max, int *n)
{
	lua_getfield(L, t, k);
	int list = lua_gettop(L);
	luaL_checktype(L, list, LUA_TTABLE);
	*n = (int)lua_rawlen(L, list);
	if (*n > max) lml_error(L, "the scene takes at most %d %s, got %d", max, k, *n);
	/* bounded: *n <= max, a small count of names */
	const char **out = lua_newuserdatauv(L, sizeof *out * (size_t)(*n ? *n : 1), 0);
	for (int i = 0; i < *n; i++) {
		lua_rawgeti(L, list, i + 1);
		if (lua_type(L, -1) != LUA_TSTRING) lml_error(L, "the scene takes %s as a list of strings", k);
		out[i] = lua_tostring(L, -1); /* the list keeps it */
		lua_pop(L, 1);
	}
	lua_remove(L, list);
	return out;
}

static void bang_run(lua_State *L, int t, lm_viz_bang *d)
{
	luaL_checktype(L, t, LUA_TTABLE);
	static const char *const ints[] = {"cards", "chips", "clusters_per_chip"};
	int *iv[] = {&d->cards, &d->chips, &d->clusters_per_chip};
	for (int i = 0; i < 3; i++) {
		lua_getfield(L, t, ints[i]);
		lua_Integer v = luaL_checkinteger(L, -1);
		*iv[i] = v < 0 ? 0 : v > 1000000 ? 1000000 : (int)v;
		lua_pop(L, 1);
	}
	static const char *const caps[] = {"nram", "wram", "sram"};
	double *cv[] = {&d->nram, &d->wram, &d->sram};
	for (int i = 0; i < 3; i++) {
		lua_getfield(L, t, caps[i]);
		*cv[i] = luaL_checknumber(L, -1);
		lua_pop(L, 1);
	}
	int nk;
	d->kernels = bang_table(L, t, "kernels", 5, &nk);
	d->units = bang_table(L, t, "units", 6, &d->nunits);
	d->cores = bang_table(L, t, "cores", 4, &d->ncores);
	d->clusters = bang_table(L, t, "clusters", 2, &d->nclusters);
	d->spans = bang_table(L, t, "spans", 7, &d->nspans);
	d->names = bang_names(L, t, "names", 4096, &d->nkernels);
	if (d->nkernels != nk) lml_error(L, "the scene takes a name for each of the %d kernels, got %d", nk, d->nkernels);
	d->whats = bang_names(L, t, "whats", 4096, &d->nwhats);
}

/* viz._show_bang(scene, run, run2 or nil, opts): runs as lua/lumen/viz.lua builds them from kernels.bang
 * infos: {cards=, chips=, clusters_per_chip=, nram=, wram=, sram=, names = {...}, kernels =
 * (nk, 5), units = (nu, 6), cores = (n, 4), clusters = (n, 2), spans = (ns, 7), whats = {...}} (the
 * columns of lm_viz_bang, src/viz/viz.h). */
static int v_show_bang(lua_State *L)
{
	const char *scene = luaL_checkstring(L, 1);
	bool two = strcmp(scene, "pingpong") == 0;
	lua_settop(L, 4);
	lm_viz_bang d[2];
	memset(d, 0, sizeof d);
	bang_run(L, 2, &d[0]);
	if (two) bang_run(L, 3, &d[1]);
	lm_viz_opts o;
	read_rest(L, 4, &o, false);
	if (lm_viz_show_bang(scene, d, two ? 2 : 1, &o, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* ---------------------------------------------------------------- lumen.dlp: systolic, dma, energy */

/* Fields read by name from a table that may hold more (an array's config, a dlp.Layer, a report):
 * each an int64_t or a double at offset. */
typedef struct dlp_key {
	const char *key;
	size_t offset;
	bool real;
} dlp_key;
#define DLP_INT(type, k, member) {k, offsetof(type, member), false}
#define DLP_REAL(type, k, member) {k, offsetof(type, member), true}

static const dlp_key dlp_config_keys[] = {
	DLP_INT(lm_dlp_config, "rows", rows), DLP_INT(lm_dlp_config, "cols", cols),
	DLP_INT(lm_dlp_config, "bandwidth", bandwidth), DLP_INT(lm_dlp_config, "ifmap_kb", ifmap_kb),
	DLP_INT(lm_dlp_config, "filter_kb", filter_kb), DLP_INT(lm_dlp_config, "ofmap_kb", ofmap_kb),
	DLP_INT(lm_dlp_config, "ifmap_offset", ifmap_offset), DLP_INT(lm_dlp_config, "filter_offset", filter_offset),
	DLP_INT(lm_dlp_config, "ofmap_offset", ofmap_offset), DLP_INT(lm_dlp_config, "banks", banks),
	DLP_INT(lm_dlp_config, "ports", ports), {NULL, 0, false},
};
static const dlp_key dlp_layer_keys[] = {
	DLP_INT(lm_dlp_layer, "ifmap_h", ifmap_h), DLP_INT(lm_dlp_layer, "ifmap_w", ifmap_w),
	DLP_INT(lm_dlp_layer, "filter_h", filter_h), DLP_INT(lm_dlp_layer, "filter_w", filter_w),
	DLP_INT(lm_dlp_layer, "channels", channels), DLP_INT(lm_dlp_layer, "filters", filters),
	DLP_INT(lm_dlp_layer, "stride", stride), {NULL, 0, false},
};
/* a report's fields (src/lua/dlp.c names them) as lm_dlp_report's members */
static const dlp_key dlp_report_keys[] = {
	DLP_INT(lm_dlp_report, "M", M), DLP_INT(lm_dlp_report, "N", N), DLP_INT(lm_dlp_report, "K", K),
	DLP_INT(lm_dlp_report, "ofmap_h", ofmap_h), DLP_INT(lm_dlp_report, "ofmap_w", ofmap_w),
	DLP_INT(lm_dlp_report, "Sr", Sr), DLP_INT(lm_dlp_report, "Sc", Sc), DLP_INT(lm_dlp_report, "T", T),
	DLP_INT(lm_dlp_report, "row_folds", row_folds), DLP_INT(lm_dlp_report, "col_folds", col_folds),
	DLP_INT(lm_dlp_report, "fold_cycles", fold_rows), DLP_INT(lm_dlp_report, "macs", macs),
	DLP_INT(lm_dlp_report, "total_cycles", total_cycles), DLP_INT(lm_dlp_report, "stall_cycles", stall_cycles),
	DLP_INT(lm_dlp_report, "overall_cycles", overall_cycles), DLP_REAL(lm_dlp_report, "overall_util", overall_util),
	DLP_REAL(lm_dlp_report, "mapping_efficiency", mapping_eff), DLP_REAL(lm_dlp_report, "compute_util", compute_util),
	DLP_INT(lm_dlp_report, "ifmap_sram_reads", sram[0]), DLP_INT(lm_dlp_report, "filter_sram_reads", sram[1]),
	DLP_INT(lm_dlp_report, "ofmap_sram_writes", sram[2]), DLP_INT(lm_dlp_report, "ifmap_dram_reads", dram[0]),
	DLP_INT(lm_dlp_report, "filter_dram_reads", dram[1]), DLP_INT(lm_dlp_report, "ofmap_dram_writes", dram[2]),
	DLP_REAL(lm_dlp_report, "ifmap_dram_start", dram_start[0]), DLP_REAL(lm_dlp_report, "filter_dram_start", dram_start[1]),
	DLP_REAL(lm_dlp_report, "ofmap_dram_start", dram_start[2]), DLP_REAL(lm_dlp_report, "ifmap_dram_stop", dram_stop[0]),
	DLP_REAL(lm_dlp_report, "filter_dram_stop", dram_stop[1]), DLP_REAL(lm_dlp_report, "ofmap_dram_stop", dram_stop[2]),
	DLP_REAL(lm_dlp_report, "avg_ifmap_dram_bw", avg_dram_bw[0]), DLP_REAL(lm_dlp_report, "avg_filter_dram_bw", avg_dram_bw[1]),
	DLP_REAL(lm_dlp_report, "avg_ofmap_dram_bw", avg_dram_bw[2]), {NULL, 0, false},
};

/* Reads keys of the table at t into out; a key that is absent is an error when required, else left as
 * it is. what names the table in errors. */
static void dlp_read(lua_State *L, int t, const dlp_key *keys, void *out, bool required, const char *what)
{
	char d[LML_DESCRIBE_MAX];
	for (const dlp_key *k = keys; k->key; k++) {
		int type = lml_rawfield(L, t, k->key);
		if (type == LUA_TNIL && !required) {
			lua_pop(L, 1);
			continue;
		}
		if (type != LUA_TNUMBER || (!k->real && !lua_isinteger(L, -1) && lua_tonumber(L, -1) != floor(lua_tonumber(L, -1))))
			luaL_error(L, "viz.show: %s has %s = %s, not %s", what, k->key, lml_describe(L, -1, d, sizeof d),
			           k->real ? "a number" : "an integer");
		if (k->real) *(double *)((char *)out + k->offset) = lua_tonumber(L, -1);
		else *(int64_t *)((char *)out + k->offset) = (int64_t)lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
}

/* The string field k of the table at t (alive while the table is), or NULL. */
static const char *dlp_string(lua_State *L, int t, const char *k)
{
	const char *v = lml_rawfield(L, t, k) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
	lua_pop(L, 1);
	return v;
}

/* The array: a:config() or a report (rows, cols, dataflow, mode, bandwidth; the rest as dlp.array's defaults). */
static void dlp_config(lua_State *L, int t, lm_dlp_config *c, const char *what)
{
	static const char *const dataflows[] = {"os", "ws", "is", NULL};
	static const char *const modes[] = {"calc", "user", NULL};
	*c = lm_dlp_config_default();
	dlp_read(L, t, dlp_config_keys, c, false, what);
	char w[96];
	snprintf(w, sizeof w, "%s's dataflow", what);
	if (lml_rawfield(L, t, "dataflow") != LUA_TNIL) c->dataflow = (lm_dlp_dataflow)lml_checkname(L, -1, w, dataflows);
	lua_pop(L, 1);
	snprintf(w, sizeof w, "%s's mode", what);
	if (lml_rawfield(L, t, "mode") != LUA_TNIL) c->user_bandwidth = lml_checkname(L, -1, w, modes) == 1;
	lua_pop(L, 1);
}

/* A list of LM_VIZ_DLP_LEVELS numbers in field k (pj, counts). */
static void dlp_levels(lua_State *L, int t, const char *k, double *out)
{
	if (lml_rawfield(L, t, k) == LUA_TNIL) {
		lua_pop(L, 1);
		return;
	}
	if (!lua_istable(L, -1) || lua_rawlen(L, -1) != LM_VIZ_DLP_LEVELS)
		luaL_error(L, "viz.show: the energy scene takes %s as a list of %d numbers (mac, register, pe_hop, sram, dram)", k,
		           LM_VIZ_DLP_LEVELS);
	for (int i = 0; i < LM_VIZ_DLP_LEVELS; i++) {
		lua_rawgeti(L, -1, i + 1);
		if (lua_type(L, -1) != LUA_TNUMBER) luaL_error(L, "viz.show: the energy scene: %s[%d] is not a number", k, i + 1);
		out[i] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* One run as lua/lumen/viz.lua builds it: {config = a:config() or a report, layer = a dlp.Layer,
 * report = r, name =, label =, events = (n, 4) float64 (kind, start, end, words: lm_dlp_event's
 * encoding), dropped =, pj = {5}, counts = {5}, energy_source =}. The events are copied into a
 * userdata left on the stack (the caller keeps it until the scene has copied them). */
static void dlp_run(lua_State *L, int t, lm_viz_dlp *d)
{
	luaL_checktype(L, t, LUA_TTABLE);
	memset(d, 0, sizeof *d);
	d->name = dlp_string(L, t, "name");
	d->label = dlp_string(L, t, "label");
	d->energy_source = dlp_string(L, t, "energy_source");
	int has_config = lml_rawfield(L, t, "config") == LUA_TTABLE, has_report = lml_rawfield(L, t, "report") == LUA_TTABLE;
	int rep = lua_gettop(L), cfg = rep - 1;
	if (has_config) dlp_config(L, cfg, &d->config, "the array");
	else if (has_report) dlp_config(L, rep, &d->config, "the report");
	if (has_report) dlp_read(L, rep, dlp_report_keys, &d->report, true, "the report");
	lua_pop(L, 2);
	if (lml_rawfield(L, t, "layer") == LUA_TTABLE) dlp_read(L, lua_gettop(L), dlp_layer_keys, &d->layer, true, "the layer");
	lua_pop(L, 1);
	dlp_levels(L, t, "pj", d->pj);
	dlp_levels(L, t, "counts", d->counts);
	d->dropped = lml_rawfield(L, t, "dropped") == LUA_TNUMBER ? (int64_t)lua_tonumber(L, -1) : 0;
	lua_pop(L, 1);
	if (lml_rawfield(L, t, "events") == LUA_TNIL) {
		lua_pop(L, 1);
		lua_pushnil(L); /* the slot the events' userdata would take */
		return;
	}
	int idx = lua_gettop(L);
	lm_tensor *x = lml_checktensor(L, idx, "events");
	if (lm_tensor_ndim(x) != 2 || lm_tensor_shape(x)[1] != 4 || lm_tensor_shape(x)[0] > (INT64_C(1) << 22))
		luaL_error(L, "viz.show: the dma scene takes events as a float64 (n, 4) tensor (n at most 2^22)");
	const double *v = f64_arg(L, idx, "events", -1);
	d->nevents = lm_tensor_shape(x)[0];
	/* bounded: nevents <= 2^22 */
	lm_dlp_event *ev = lua_newuserdatauv(L, sizeof *ev * (size_t)(d->nevents ? d->nevents : 1), 0);
	for (int64_t i = 0; i < d->nevents; i++)
		ev[i] = (lm_dlp_event){(int)v[4 * i], (int64_t)v[4 * i + 1], (int64_t)v[4 * i + 2], (int64_t)v[4 * i + 3]};
	d->events = ev;
	lua_remove(L, idx); /* the run table keeps the tensor; the userdata stays */
}

/* viz._show_dlp(scene, {run, ...}, opts): lumen.dlp's array and reports as lua/lumen/viz.lua builds them
 * (dlp_run above); errors name viz.show, the function the user called. */
static int v_show_dlp(lua_State *L)
{
	const char *scene = luaL_checkstring(L, 1);
	lua_settop(L, 3);
	luaL_checktype(L, 2, LUA_TTABLE);
	int n = (int)lua_rawlen(L, 2);
	lm_viz_dlp d[6];
	if (n < 1 || n > 6) luaL_error(L, "viz.show: the %s scene takes 1 to 6 runs, got %d", scene, n);
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, 2, i + 1);
		int t = lua_gettop(L);
		dlp_run(L, t, &d[i]); /* leaves the events' userdata (or nil) above the run table */
	}
	lm_viz_opts o;
	read_rest(L, 3, &o, false);
	if (lm_viz_show_dlp(scene, d, n, &o, "viz.show") != LM_OK) fail(L);
	return 0;
}

/* ---------------------------------------------------------------- lm.graph: the compiled graph */

/* A string of list t at i (the table keeps it alive), or NULL when absent. */
static const char *list_string(lua_State *L, int t, lua_Integer i)
{
	lua_rawgeti(L, t, i);
	const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
	lua_pop(L, 1);
	return v;
}

/* A number field of the table at t (what names the table in errors). */
static double num_field(lua_State *L, int t, const char *k, const char *what)
{
	if (lml_rawfield(L, t, k) != LUA_TNUMBER) luaL_error(L, "viz.show: the graph scene: %s has no number %s", what, k);
	double v = lua_tonumber(L, -1);
	lua_pop(L, 1);
	return v;
}

/* viz._show_passes(desc [, opts]): an lm.graph Graph's steps as lua/lumen/viz_passes.lua describes
 * them: desc = {name =, source =, steps = {{pass =, action =, text =, kernels =, bytes_read =,
 * bytes_written =}, ...}, nodes = float64 (n, 8): step, kind, state, id, col, row, parent (0-based,
 * -1: none), unused; labels = {n strings}, details = {n strings}, edges = float64 (m, 4): step, from,
 * to, kind}. The arrays live in userdata on the stack; the strings in desc. */
static int v_show_passes(lua_State *L)
{
	lua_settop(L, 2);
	luaL_checktype(L, 1, LUA_TTABLE);
	lm_viz_passes p = {.name = dlp_string(L, 1, "name"), .source = dlp_string(L, 1, "source")};
	if (lml_rawfield(L, 1, "steps") != LUA_TTABLE) luaL_error(L, "viz.show: the graph scene: the description has no steps");
	int ts = lua_gettop(L);
	lua_Integer ns = (lua_Integer)lua_rawlen(L, ts);
	if (ns < 1 || ns > 100000) luaL_error(L, "viz.show: the graph scene takes 1 to 100000 steps, got %d", (int)ns);
	lm_viz_gstep *st = lua_newuserdatauv(L, sizeof *st * (size_t)ns, 0); /* bounded: ns <= 100000 */
	for (lua_Integer k = 0; k < ns; k++) {
		lua_rawgeti(L, ts, k + 1);
		int t = lua_gettop(L);
		luaL_checktype(L, t, LUA_TTABLE);
		st[k] = (lm_viz_gstep){dlp_string(L, t, "pass"), dlp_string(L, t, "action"), dlp_string(L, t, "text"),
		                       num_field(L, t, "kernels", "a step"), num_field(L, t, "bytes_read", "a step"),
		                       num_field(L, t, "bytes_written", "a step")};
		lua_pop(L, 1); /* the steps table keeps its strings */
	}
	p.steps = st;
	p.nsteps = (int)ns;
	lml_rawfield(L, 1, "nodes");
	lm_tensor *nt = lml_checktensor(L, -1, "nodes");
	if (lm_tensor_ndim(nt) != 2 || lm_tensor_shape(nt)[1] != 8 || lm_tensor_shape(nt)[0] > (INT64_C(1) << 22))
		luaL_error(L, "viz.show: the graph scene takes nodes as a float64 (n, 8) tensor");
	const double *nv = f64_arg(L, lua_gettop(L), "nodes", -1);
	p.nnodes = (int)lm_tensor_shape(nt)[0];
	lm_viz_gnode *nd = lua_newuserdatauv(L, sizeof *nd * (size_t)(p.nnodes ? p.nnodes : 1), 0); /* bounded: n <= 2^22 */
	lml_rawfield(L, 1, "labels");
	int tl = lua_gettop(L);
	lml_rawfield(L, 1, "details");
	int td = lua_gettop(L);
	if (!lua_istable(L, tl) || !lua_istable(L, td) || lua_rawlen(L, tl) != (size_t)p.nnodes || lua_rawlen(L, td) != (size_t)p.nnodes)
		luaL_error(L, "viz.show: the graph scene takes labels and details, one string per node");
	for (int i = 0; i < p.nnodes; i++) {
		const double *r = nv + 8 * (size_t)i;
		nd[i] = (lm_viz_gnode){(int)r[0], (int)r[1], (int)r[2], (int64_t)r[3], (int)r[4], (int)r[5], (int)r[6],
		                       list_string(L, tl, i + 1), list_string(L, td, i + 1)};
		if (nd[i].step < 0 || nd[i].step >= p.nsteps || nd[i].kind < 0 || nd[i].kind > LM_VIZ_GN_VALUE || nd[i].state < 0 ||
		    nd[i].state > LM_VIZ_GS_FOLDED || nd[i].col < 0 || nd[i].row < 0 || nd[i].parent >= p.nnodes || !nd[i].label)
			luaL_error(L, "viz.show: the graph scene: node %d is out of range", i + 1);
	}
	p.nodes = nd;
	lml_rawfield(L, 1, "edges");
	lm_tensor *et = lml_checktensor(L, -1, "edges");
	if (lm_tensor_ndim(et) != 2 || lm_tensor_shape(et)[1] != 4 || lm_tensor_shape(et)[0] > (INT64_C(1) << 22))
		luaL_error(L, "viz.show: the graph scene takes edges as a float64 (m, 4) tensor");
	const double *ev = f64_arg(L, lua_gettop(L), "edges", -1);
	p.nedges = (int)lm_tensor_shape(et)[0];
	lm_viz_gedge *ed = lua_newuserdatauv(L, sizeof *ed * (size_t)(p.nedges ? p.nedges : 1), 0); /* bounded: m <= 2^22 */
	for (int i = 0; i < p.nedges; i++) {
		const double *r = ev + 4 * (size_t)i;
		ed[i] = (lm_viz_gedge){(int)r[0], (int)r[1], (int)r[2], (int)r[3]};
		if (ed[i].step < 0 || ed[i].step >= p.nsteps || ed[i].from < 0 || ed[i].from >= p.nnodes || ed[i].to < 0 ||
		    ed[i].to >= p.nnodes || ed[i].kind < 0 || ed[i].kind > LM_VIZ_GE_LINK)
			luaL_error(L, "viz.show: the graph scene: edge %d is out of range", i + 1);
	}
	p.edges = ed;
	lm_viz_opts o;
	read_rest(L, 2, &o, false);
	if (lm_viz_show_passes(&p, &o, "viz.show") != LM_OK) fail(L);
	return 0;
}

static const luaL_Reg functions[] = {
	{"_show_model", v_show_model}, {"_show_attention", v_show_attention}, {"_show_rnn", v_show_rnn},
	{"_show_detection", v_show_detection}, {"_show_features", v_show_features}, {"_show_ddp", v_show_ddp}, {"_show_pipeline", v_show_pipeline}, {"_show_gan2d", v_show_gan2d}, {"_show_diffusion", v_show_diffusion}, {"_show_samples", v_show_samples}, {"_show_bang", v_show_bang}, {"_show_dlp", v_show_dlp}, {"_show_passes", v_show_passes}, {"_record", v_record}, {"plot", v_plot}, {"follow", v_follow},
	{"clear", v_clear},            {"due", v_due},        {NULL, NULL},
};

void lml_viz_data_funcs(lua_State *L, int t) { lml_setfuncs(L, t, "viz.", functions, 0); }

#endif /* LUMEN_HAVE_VIZ */
