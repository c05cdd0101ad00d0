/*
 * autograd.c — the autograd bindings: requires_grad_, backward, grad mode (lm.no_grad,
 * lm.set_grad_enabled, lm.is_grad_enabled) and lm.autograd.gradcheck. The fields x.grad,
 * x.requires_grad, x.grad_fn, x.is_leaf are read and written in tensor.c (__index, __newindex).
 *
 * lm.no_grad runs the function through lua_pcall so that grad mode is restored however the
 * function ends, then re-raises its error unchanged. gradcheck calls the user's Lua function
 * from inside lm_gradcheck: each call goes through lua_pcall (an error must not longjmp through
 * the C frames of the core), and an error comes back to the core as a failed evaluation.
 * Read next: functional.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* y:backward([grad] [, {retain_graph=}]) */
static void clear_hooks(lua_State *L);
static void custom_sweep(lua_State *L);

/* The Lua state whose call is running a backward on this thread: lm.autograd.Function's rules
 * call their Lua backward on it (the caller's thread, a coroutine's too). */
static _Thread_local lua_State *backward_L;

lua_State *lml_backward_state(lua_State *L)
{
	lua_State *prev = backward_L;
	backward_L = L;
	return prev;
}

static int t_backward(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	lm_tensor *g = NULL;
	int oi = 2;
	if (lml_tobox(L, 2)) {
		g = lml_checktensor(L, 2, "grad");
		oi = 3;
	} else if (lua_isnil(L, 2)) {
		oi = 3;
	}
	static const lml_field fields[] = {{.key = "retain_graph", .kind = LML_BOOLEAN}, LML_FIELDS_END};
	int retain = 0;
	if (!lua_isnoneornil(L, oi) && lua_type(L, oi) != LUA_TTABLE)
		lml_typeerror(L, oi, oi == 2 ? "argument 1" : "argument 2",
		              "a gradient tensor or options {retain_graph=}");
	lml_readopts(L, oi, NULL, fields, &retain);
	if (!lm_tensor_requires_grad(t))
		lml_error(L, "the tensor does not require grad and has no grad_fn (did an input have "
		          "requires_grad = true?)");
	if (!g && lm_tensor_numel(t) != 1) {
		char b[LM_SHAPE_STR_MAX];
		lml_error(L, "a gradient is needed for a tensor of shape %s (only one-element tensors "
		          "take none)", lm_shape_str(lm_tensor_ndim(t), lm_tensor_shape(t), b, sizeof b));
	}
	/* no retry after a failure: a failed backward may already have freed the graph */
	lua_State *prev = lml_backward_state(L);
	lm_status st = lm_backward(t, g, retain);
	lml_backward_state(prev);
	clear_hooks(L); /* the hooks serve one backward (DDP arms them at each forward) */
	custom_sweep(L); /* the Functions' states this backward released */
	if (st) lml_core_error(L);
	return 0;
}

/* ---------------------------------------------------------------- grad_fn */

/* y.grad_fn: the node that made y, as PyTorch's: grad_fn:name() ("MulBackward"), grad_fn.op
 * ("mul"), grad_fn.next_functions (one {fn, 1} per input: the input's own grad_fn, an
 * AccumulateGrad whose .variable is the leaf, or {nil, 1} where no gradient flows) and
 * grad_fn.params (the op's recorded parameters, named as the op list names them; dims 1-based).
 * tostring and .. give the name, so printing and concatenating read as before. */
#define GRADFN_MT "lumen.GradFn"
#define ACCUMULATE_MT "lumen.AccumulateGrad"

void lml_push_grad_fn(lua_State *L, const lm_tensor *t)
{
	lm_node **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	luaL_setmetatable(L, GRADFN_MT);
	*box = lm_tensor_grad_fn(t);
	if (!*box) {
		lua_pop(L, 1);
		lua_pushnil(L);
	}
}

static lm_node *check_gradfn(lua_State *L, int idx)
{
	lm_node **box = luaL_testudata(L, idx, GRADFN_MT);
	if (!box || !*box) lml_typeerror(L, idx, "self", "a grad_fn (x.grad_fn)");
	return *box;
}

static int gradfn_gc(lua_State *L)
{
	lm_node **box = lua_touserdata(L, 1);
	lm_node_release(*box);
	*box = NULL;
	return 0;
}

static int gradfn_name(lua_State *L)
{
	lua_pushstring(L, lm_node_name(check_gradfn(L, 1)));
	return 1;
}

static int gradfn_tostring(lua_State *L)
{
	lm_node **box = luaL_testudata(L, 1, GRADFN_MT);
	lua_pushstring(L, box && *box ? lm_node_name(*box) : "grad_fn (released)");
	return 1;
}

/* a .. b where one side is a grad_fn: its name in the string */
static int gradfn_concat(lua_State *L)
{
	for (int i = 1; i <= 2; i++) {
		if (luaL_testudata(L, i, GRADFN_MT)) {
			lua_pushstring(L, lm_node_name(check_gradfn(L, i)));
			lua_replace(L, i);
		} else if (!lua_isstring(L, i)) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "attempt to concatenate a grad_fn with %s", lml_describe(L, i, d, sizeof d));
		}
	}
	lua_concat(L, 2);
	return 1;
}

static int gradfn_eq(lua_State *L)
{
	lm_node **a = luaL_testudata(L, 1, GRADFN_MT), **b = luaL_testudata(L, 2, GRADFN_MT);
	lua_pushboolean(L, a && b && *a == *b);
	return 1;
}

static void push_params(lua_State *L, const lm_node *n)
{
	lua_createtable(L, 0, lm_node_nparams(n));
	for (int j = 0; j < lm_node_nparams(n); j++) {
		lm_param p;
		if (lm_node_param(n, j, &p)) lml_core_error(L);
		switch (p.kind) {
		case LM_PARAM_FLOAT: lua_pushnumber(L, p.f); break;
		case LM_PARAM_BOOL: lua_pushboolean(L, p.i != 0); break;
		case LM_PARAM_DIM:
			if (p.i == LM_DIM_ALL) continue; /* over every dim: no dim */
			lua_pushinteger(L, p.i + 1);
			break;
		case LM_PARAM_INDEX: lua_pushinteger(L, p.i + 1); break;
		case LM_PARAM_DEVICE: lua_pushstring(L, lm_device_name((lm_device)p.i)); break;
		case LM_PARAM_INTS:
			lua_createtable(L, p.n, 0);
			for (int k = 0; k < p.n; k++) {
				/* the dims of permute and flip are dims: 1-based as every dim in Lua */
				bool dims = strcmp(p.name, "dims") == 0;
				lua_pushinteger(L, p.ints[k] + (dims ? 1 : 0));
				lua_rawseti(L, -2, k + 1);
			}
			break;
		default: lua_pushinteger(L, p.i); break;
		}
		lua_setfield(L, -2, p.name);
	}
}

static int accumulate_name(lua_State *L)
{
	lua_pushliteral(L, "AccumulateGrad");
	return 1;
}

static void push_next_functions(lua_State *L, const lm_node *n)
{
	int k = lm_node_ninputs(n);
	lua_createtable(L, k, 0);
	for (int i = 0; i < k; i++) {
		const lm_tensor *leaf;
		lm_node *in = lm_node_input(n, i, &leaf);
		lua_createtable(L, 2, 0);
		if (in) {
			lm_node **box = lua_newuserdatauv(L, sizeof *box, 0);
			*box = in; /* +1 from lm_node_input, released by __gc */
			luaL_setmetatable(L, GRADFN_MT);
		} else if (leaf) {
			lua_createtable(L, 0, 1); /* AccumulateGrad {variable = the leaf} */
			lml_pushtensor(L, (lm_tensor *)leaf);
			lua_setfield(L, -2, "variable");
			luaL_setmetatable(L, ACCUMULATE_MT);
		} else {
			lua_pushnil(L);
		}
		lua_rawseti(L, -2, 1);
		lua_pushinteger(L, 1); /* the input's output number: every node has one output */
		lua_rawseti(L, -2, 2);
		lua_rawseti(L, -2, i + 1);
	}
}

static int gradfn_index(lua_State *L)
{
	lm_node *n = check_gradfn(L, 1);
	const char *k = lua_tostring(L, 2);
	if (!k) return 0;
	if (strcmp(k, "name") == 0) {
		lua_pushcfunction(L, gradfn_name);
		return 1;
	}
	if (strcmp(k, "op") == 0) {
		lua_pushstring(L, lm_node_op(n));
		return 1;
	}
	if (strcmp(k, "next_functions") == 0) {
		push_next_functions(L, n);
		return 1;
	}
	if (strcmp(k, "params") == 0) {
		push_params(L, n);
		return 1;
	}
	return 0;
}

static void open_gradfn(lua_State *L)
{
	static const luaL_Reg gmeta[] = {
		{"__gc", gradfn_gc},         {"__index", gradfn_index}, {"__tostring", gradfn_tostring},
		{"__concat", gradfn_concat}, {"__eq", gradfn_eq},       {NULL, NULL},
	};
	luaL_newmetatable(L, GRADFN_MT);
	luaL_setfuncs(L, gmeta, 0);
	lua_pop(L, 1);
	luaL_newmetatable(L, ACCUMULATE_MT);
	lua_newtable(L);
	lua_pushcfunction(L, accumulate_name);
	lua_setfield(L, -2, "name");
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, accumulate_name);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
}

/* ---------------------------------------------------------------- gradcheck */

/* Protected: calls the function (argument 3) with the inputs as tensors; leaves its tensor
 * result on the stack. Upvalue 1: the lml_tensor_fn. */
static int tensor_fn_trampoline(lua_State *L)
{
	const lml_tensor_fn *c = lua_touserdata(L, lua_upvalueindex(1));
	lm_tensor *const *inputs = lua_touserdata(L, 1);
	int n = (int)lua_tointeger(L, 2);
	luaL_checkstack(L, n + 2, c->what);
	lua_pushvalue(L, 3);
	for (int k = 0; k < n; k++) {
		if (inputs[k])
			lml_pushtensor(L, inputs[k]);
		else
			lua_pushnil(L);
	}
	lua_call(L, n, 1);
	lm_tensor **b = lml_tobox(L, -1);
	if (!b || !*b) {
		char d[LML_DESCRIBE_MAX];
		return luaL_error(L, "%s must return a tensor, got %s", c->what, lml_describe(L, -1, d, sizeof d));
	}
	return 1;
}

lm_tensor *lml_call_tensor_fn(void *ctx, int n, lm_tensor *const *inputs)
{
	lml_tensor_fn *c = ctx;
	lua_State *L = c->L;
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, tensor_fn_trampoline, 1);
	lua_pushlightuserdata(L, (void *)inputs);
	lua_pushinteger(L, n);
	lua_pushvalue(L, c->fn);
	if (lua_pcall(L, 3, 1, 0) != LUA_OK) {
		/* only a string is read: converting a number would allocate, which could raise */
		const char *m = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
		if (!c->err[0]) snprintf(c->err, sizeof c->err, "%s", m ? m : "the function raised an error");
		lua_pop(L, 1);
		lm_set_error(LM_ERR_ARG, "%s failed: %s", c->what, c->err);
		return NULL;
	}
	lm_tensor *t = lm_tensor_retain(*lml_tobox(L, -1));
	lua_pop(L, 1);
	return t;
}

static void setnum(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

static int report_tostring(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TTABLE)
		return luaL_error(L, "lm.autograd.gradcheck: a report's __tostring expects the report table");
	lml_rawfield(L, 1, "message");
	return 1;
}

/* Reads {eps=, atol=, rtol=, max_elements=} at idx. */
static void gc_opts(lua_State *L, int idx, lm_gradcheck_opts *o)
{
	static const lml_field fields[] = {
		LML_FIELD(lm_gradcheck_opts, eps, LML_NUMBER),
		LML_FIELD(lm_gradcheck_opts, atol, LML_NUMBER),
		LML_FIELD(lm_gradcheck_opts, rtol, LML_NUMBER),
		LML_FIELD(lm_gradcheck_opts, max_elements, LML_INTEGER),
		LML_FIELDS_END,
	};
	memset(o, 0, sizeof *o);
	lml_readopts(L, idx, NULL, fields, o);
	if (!(o->eps >= 0) || !(o->atol >= 0) || !(o->rtol >= 0) || o->max_elements < 0)
		lml_error(L, "options eps, atol, rtol and max_elements must be non-negative");
}

#define GC_MAX_INPUTS 64

/* lm.autograd.gradcheck(fn, inputs [, opts]) -> ok, report */
static int l_gradcheck(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) != LUA_TFUNCTION)
		lml_typeerror(L, 1, "argument 1", "a function");
	if (lua_type(L, 2) != LUA_TTABLE || lml_tobox(L, 2))
		lml_typeerror(L, 2, "argument 2", "a table of input tensors");
	lm_gradcheck_opts o;
	gc_opts(L, 3, &o);
	int n = (int)lua_rawlen(L, 2);
	if (n > GC_MAX_INPUTS) lml_error(L, "at most %d inputs, got %d", GC_MAX_INPUTS, n);
	lm_tensor *ins[GC_MAX_INPUTS];
	for (int k = 0; k < n; k++) {
		lua_rawgeti(L, 2, k + 1);
		if (lua_isnil(L, -1)) {
			ins[k] = NULL;
		} else {
			lm_tensor **b = lml_tobox(L, -1);
			if (!b) lml_error(L, "input %d must be a tensor, got %s", k + 1,
			                  lml_describe(L, -1, d, sizeof d));
			if (!*b) lml_error(L, "input %d: tensor is closed", k + 1);
			ins[k] = *b;
		}
		lua_pop(L, 1);
	}
	/* the core's checks of the inputs, here so that inputs are numbered from 1, as in Lua */
	int checked = 0;
	for (int k = 0; k < n; k++) {
		if (!ins[k] || !lm_tensor_requires_grad(ins[k])) continue;
		checked++;
		if (lm_tensor_dtype(ins[k]) != LM_FLOAT64)
			lml_error(L, "input %d is %s; it must be float64", k + 1,
			          lm_dtype_name(lm_tensor_dtype(ins[k])));
		if (lm_tensor_grad_fn_name(ins[k]))
			lml_error(L, "input %d was made by %s; pass leaves", k + 1,
			          lm_tensor_grad_fn_name(ins[k]));
		for (int j = 0; j < k; j++)
			if (ins[j] && lm_tensor_requires_grad(ins[j]) && lm_tensor_shares_storage(ins[j], ins[k]))
				lml_error(L, "inputs %d and %d share storage", j + 1, k + 1);
	}
	if (!checked) lml_error(L, "no input requires grad");
	luaL_checkstack(L, 8, "gradcheck");
	lml_tensor_fn c = {L, 1, "fn", ""};
	lm_gradcheck_report rep;
	memset(&rep, 0, sizeof rep);
	/* The inputs are held here (+1) while fn runs (fn may drop or close its own handles);
	 * nothing between the retains and the releases can raise. */
	for (int k = 0; k < n; k++) lm_tensor_retain(ins[k]);
	lua_State *prev = lml_backward_state(L);
	lm_status s = lm_gradcheck(lml_call_tensor_fn, &c, n, ins, &o, &rep);
	lml_backward_state(prev);
	for (int k = 0; k < n; k++) lm_tensor_release(ins[k]);
	custom_sweep(L);
	if (s) {
		if (c.err[0]) lml_error(L, "fn failed: %s", c.err);
		lml_core_error(L);
	}
	/* the core numbers the worst input and element from 0: say them from 1, as report.input
	 * and report.index do */
	const char *rest = rep.ok ? NULL : strstr(rep.message, ": analytic ");
	if (rest) {
		char idx[LM_MAX_DIMS * 24 + 3] = "[";
		size_t len = 1;
		for (int i = 0; i < rep.ndim && i < LM_MAX_DIMS && len < sizeof idx; i++)
			len += (size_t)snprintf(idx + len, sizeof idx - len, "%s%lld", i ? ", " : "",
			                        (long long)rep.index[i] + 1);
		if (len < sizeof idx - 1) strcat(idx, "]");
		char msg[sizeof rep.message + 64];
		snprintf(msg, sizeof msg, "gradcheck: input %d, element %s%s", rep.input + 1, idx, rest);
		snprintf(rep.message, sizeof rep.message, "%.*s", (int)sizeof rep.message - 1, msg);
	}
	lua_pushboolean(L, rep.ok);
	lua_createtable(L, 0, 8);
	lua_pushboolean(L, rep.ok);
	lua_setfield(L, -2, "ok");
	lua_pushstring(L, rep.message);
	lua_setfield(L, -2, "message");
	if (!rep.ok) {
		lua_pushinteger(L, rep.input + 1);
		lua_setfield(L, -2, "input");
		lua_createtable(L, rep.ndim, 0);
		for (int i = 0; i < rep.ndim && i < LM_MAX_DIMS; i++) {
			lua_pushinteger(L, rep.index[i] + 1);
			lua_rawseti(L, -2, i + 1);
		}
		lua_setfield(L, -2, "index");
		setnum(L, "analytic", rep.analytic);
		setnum(L, "numeric", rep.numeric);
	}
	setnum(L, "max_abs_err", rep.max_abs_err);
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, report_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_setmetatable(L, -2);
	return 2;
}

/* lm.no_grad(fn, ...) -> fn's results, computed with grad mode off */
static int l_no_grad(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TFUNCTION)
		lml_typeerror(L, 1, "argument 1", "a function");
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
	if (!lua_isboolean(L, 1))
		lml_typeerror(L, 1, "argument 1", "a boolean");
	lua_pushboolean(L, lm_set_grad_enabled(lua_toboolean(L, 1)));
	return 1;
}

static int l_is_grad_enabled(lua_State *L)
{
	lua_pushboolean(L, lm_grad_enabled());
	return 1;
}

/* ---------------------------------------------------------------- backward hooks (DDP) */

/* lm.autograd._set_hooks(ready, done): Lua functions the engine calls during the next backward
 * (x:backward() removes them when it ends, however it ends; lm_set_backward_hooks): ready(leaf, g) when a watched leaf's gradient is complete, done() after
 * the leaves' .grad are written; nil removes them. The leaf comes as its identity (lm.autograd._id). An error in one stops the backward with it.
 * Used by lumen/dist.lua (DistributedDataParallel). */
static int hooks_ref = LUA_NOREF;

static lm_status call_hook(lua_State *L, const char *which, int nargs)
{
	if (lua_pcall(L, nargs, 0, 0) == LUA_OK) return LM_OK;
	const char *m = lua_tostring(L, -1);
	lm_status st = lm_set_error(LM_ERR_STATE, "backward: the %s hook failed: %s", which, m ? m : "(not a string)");
	lua_pop(L, 1);
	return st;
}

static lm_status ready_trampoline(void *ud, lm_tensor *leaf, const lm_tensor *g)
{
	lua_State *L = ud;
	lua_rawgeti(L, LUA_REGISTRYINDEX, hooks_ref);
	lua_rawgeti(L, -1, 1);
	lua_remove(L, -2);
	lua_pushlightuserdata(L, leaf); /* the leaf's identity: lm.autograd._id(t) */
	lml_pushtensor(L, (lm_tensor *)g);
	return call_hook(L, "gradient-ready", 2);
}

static lm_status done_trampoline(void *ud)
{
	lua_State *L = ud;
	lua_rawgeti(L, LUA_REGISTRYINDEX, hooks_ref);
	lua_rawgeti(L, -1, 2);
	lua_remove(L, -2);
	return call_hook(L, "backward-done", 0);
}

static void clear_hooks(lua_State *L)
{
	if (hooks_ref == LUA_NOREF) return;
	lm_set_backward_hooks(NULL, NULL, NULL);
	luaL_unref(L, LUA_REGISTRYINDEX, hooks_ref);
	hooks_ref = LUA_NOREF;
}

static int l_set_hooks(lua_State *L)
{
	if (lua_isnoneornil(L, 1) && lua_isnoneornil(L, 2)) {
		clear_hooks(L);
		return 0;
	}
	if (!lua_isfunction(L, 1)) lml_typeerror(L, 1, "ready", "a function");
	if (!lua_isfunction(L, 2)) lml_typeerror(L, 2, "done", "a function");
	lua_createtable(L, 2, 0);
	lua_pushvalue(L, 1);
	lua_rawseti(L, -2, 1);
	lua_pushvalue(L, 2);
	lua_rawseti(L, -2, 2);
	luaL_unref(L, LUA_REGISTRYINDEX, hooks_ref);
	hooks_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lm_set_backward_hooks(ready_trampoline, done_trampoline, L);
	return 0;
}

/* lm.autograd._watch(t, on): whether backward reports t's finished gradient to the ready hook */
static int l_watch(lua_State *L)
{
	lm_tensor *t = lml_checktensor(L, 1, "argument 1");
	lm_tensor_watch_grad(t, lua_toboolean(L, 2));
	return 0;
}

/* lm.autograd._id(t): the tensor's identity (a light userdata), what the ready hook receives */
static int l_id(lua_State *L)
{
	lua_pushlightuserdata(L, lml_checktensor(L, 1, "argument 1"));
	return 1;
}

/* ---------------------------------------------------------------- lm.autograd.Function (custom ops) */

/*
 * lm.autograd._custom(out, name, inputs, fn) -> out: records out as the output of a node named
 * name over the tensors of the list inputs, whose rule calls fn(gout, needs) (needs: a boolean per
 * input) and takes from the list it returns a gradient (or nil) per input. lumen/autograd.lua's
 * Function:apply builds fn around the user's backward.
 *
 * fn is kept in the registry (a reference) while the node may still run it. The node's release
 * can come anywhere a tensor is released — in a finalizer, in a backward, after the state closes —
 * so it never calls Lua: it puts the reference on a list of its state's owner, which the next
 * _custom, backward or gradcheck frees (custom_sweep). The owner outlives the state's close if
 * nodes do (it is counted; the state's end only marks it).
 */
typedef struct custom_owner {
	int64_t refcount;
	bool closed;     /* the state is gone: references need no freeing */
	int *dead;       /* references to free */
	size_t n, cap;
} custom_owner;

typedef struct custom_ud {
	custom_owner *owner;
	int ref;
} custom_ud;

static const char owner_key = 0;

static void owner_unref(custom_owner *o)
{
	if (--o->refcount > 0) return;
	free(o->dead);
	free(o);
}

static int owner_gc(lua_State *L)
{
	custom_owner **box = lua_touserdata(L, 1);
	if (*box) {
		(*box)->closed = true;
		owner_unref(*box);
		*box = NULL;
	}
	return 0;
}

/* This state's owner (made on first use). */
static custom_owner *owner_of(lua_State *L)
{
	lua_rawgetp(L, LUA_REGISTRYINDEX, &owner_key);
	custom_owner **box = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (box && *box) return *box;
	custom_owner *o = calloc(1, sizeof *o);
	if (!o) lml_error(L, "lm.autograd.Function: out of memory");
	box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = o;
	o->refcount = 1;
	lua_createtable(L, 0, 1);
	lua_pushcfunction(L, owner_gc);
	lua_setfield(L, -2, "__gc");
	lua_setmetatable(L, -2);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &owner_key);
	return o;
}

static void custom_sweep(lua_State *L)
{
	lua_rawgetp(L, LUA_REGISTRYINDEX, &owner_key);
	custom_owner **box = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!box || !*box) return;
	custom_owner *o = *box;
	for (size_t i = 0; i < o->n; i++) luaL_unref(L, LUA_REGISTRYINDEX, o->dead[i]);
	o->n = 0;
}

static void custom_release(void *ud)
{
	custom_ud *u = ud;
	custom_owner *o = u->owner;
	if (!o->closed) {
		if (o->n == o->cap) {
			size_t cap = o->cap ? 2 * o->cap : 16;
			int *d = realloc(o->dead, cap * sizeof *d);
			if (d) {
				o->dead = d;
				o->cap = cap;
			}
		}
		if (o->n < o->cap) o->dead[o->n++] = u->ref; /* else the reference stays (no memory to list it) */
	}
	owner_unref(o);
	free(u);
}

static lm_status custom_backward(void *ud, const lm_tensor *g, int nin, const bool *needs, lm_tensor **gin)
{
	custom_ud *u = ud;
	lua_State *L = backward_L;
	if (!L)
		return lm_set_error(LM_ERR_STATE, "backward: an lm.autograd.Function's backward can run only "
		                    "from Lua (y:backward(), lm.autograd.gradcheck)");
	if (!lua_checkstack(L, 8)) return lm_set_error(LM_ERR_NOMEM, "backward: the Lua stack is full");
	int top = lua_gettop(L);
	lua_rawgeti(L, LUA_REGISTRYINDEX, u->ref);
	lml_pushtensor(L, (lm_tensor *)g);
	lua_createtable(L, nin, 0);
	for (int k = 0; k < nin; k++) {
		lua_pushboolean(L, needs[k]);
		lua_rawseti(L, -2, k + 1);
	}
	lm_status st = LM_OK;
	if (lua_pcall(L, 2, 1, 0) != LUA_OK) {
		const char *m = lua_tostring(L, -1);
		st = lm_set_error(LM_ERR_ARG, "%s", m ? m : "(an error object that is not a string)");
	} else if (lua_type(L, -1) != LUA_TTABLE) {
		st = lm_set_error(LM_ERR_INTERNAL, "backward: a Function's gradients came back as %s", luaL_typename(L, -1));
	} else {
		for (int k = 0; k < nin && !st; k++) {
			lua_rawgeti(L, -1, k + 1);
			lm_tensor *t = lml_totensor(L, -1);
			if (t) gin[k] = lm_tensor_retain(t);
			else if (!lua_isnil(L, -1))
				st = lm_set_error(LM_ERR_INTERNAL, "backward: a Function's gradient %d is %s", k + 1,
				                  luaL_typename(L, -1));
			lua_pop(L, 1);
		}
		if (st)
			for (int k = 0; k < nin; k++) {
				lm_tensor_release(gin[k]);
				gin[k] = NULL;
			}
	}
	lua_settop(L, top);
	return st;
}

#define CUSTOM_MAX_INPUTS 64

static int l_custom(lua_State *L)
{
	lm_tensor *out = lml_checktensor(L, 1, "argument 1");
	if (lua_type(L, 2) != LUA_TSTRING) lml_typeerror(L, 2, "argument 2", "a name");
	if (lua_type(L, 3) != LUA_TTABLE || lml_tobox(L, 3)) lml_typeerror(L, 3, "argument 3", "a table of input tensors");
	if (lua_type(L, 4) != LUA_TFUNCTION) lml_typeerror(L, 4, "argument 4", "a function");
	int n = (int)lua_rawlen(L, 3);
	if (n > CUSTOM_MAX_INPUTS)
		lml_error(L, "a Function takes at most %d tensors, got %d", CUSTOM_MAX_INPUTS, n);
	lm_tensor *ins[CUSTOM_MAX_INPUTS];
	for (int k = 0; k < n; k++) {
		lua_rawgeti(L, 3, k + 1);
		ins[k] = lml_totensor(L, -1);
		if (!ins[k]) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "input %d must be a tensor, got %s", k + 1, lml_describe(L, -1, d, sizeof d));
		}
		lua_pop(L, 1);
	}
	custom_sweep(L);
	custom_owner *o = owner_of(L);
	custom_ud *u = malloc(sizeof *u);
	if (!u) lml_error(L, "out of memory");
	lua_pushvalue(L, 4);
	u->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	u->owner = o;
	o->refcount++;
	/* from here nothing raises until the record has taken u */
	lm_status st = lm_custom_record(out, lua_tostring(L, 2), n, (const lm_tensor *const *)ins,
	                                custom_backward, custom_release, u);
	if (st) lml_core_error(L);
	lua_settop(L, 1);
	return 1;
}

static const luaL_Reg methods[] = {
	{"requires_grad_", t_requires_grad_},
	{"backward", t_backward},
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
	open_gradfn(L);
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	lml_setfuncs(L, lm, "lm.", functions, 0);
	static const luaL_Reg ag[] = {{"gradcheck", l_gradcheck}, {"_set_hooks", l_set_hooks}, {"_watch", l_watch}, {"_id", l_id}, {"_custom", l_custom}, {NULL, NULL}};
	lua_newtable(L); /* lm.autograd */
	lml_setfuncs(L, -1, "lm.autograd.", ag, 0);
	lua_setfield(L, lm, "autograd");
}
