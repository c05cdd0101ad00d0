/*
 * viz.c — the `viz` module's C half (docs/API.md "viz"; lua/lumen/viz.lua makes it the module):
 * the only part of the visualizer that knows Lua. It turns Lua values into what src/viz takes
 * (runs from kernels' info tables and traces, options from tables) and the viewer's answers into
 * Lua values (pick and layout tables, state, colours), and raises the viewer's errors.
 *
 * Design: as every binding (lml.h): arguments checked first, then one call into src/viz, whose
 * messages already name the Lua function (it is given lml_fname). The traces of the runs are
 * borrowed from their userdata for the call; a scene keeps its own references. Part of the
 * visualizer module (lml_viz.h); without SDL2 at build time the program's viz_loader.c says that
 * this build has no window. Read next: src/viz/viz.h, src/viz/viewer.c, docs/viz.md.
 */
#include <stdio.h>
#include <string.h>

#include "lml_kernels.h"
#include "lml_viz.h"

#include "viz/viz.h"

#define TRACE_MT "lumen.Trace" /* kernels.c: a box holding one lm_trace * */


/* The viewer's error; its messages name the Lua function, except what comes from below it (the
 * allocator's "alloc: ... would exceed the limit"), which gets the name put in front. */
static int fail(lua_State *L)
{
	const char *e = lm_last_error(), *f = lml_fname(L);
	size_t n = strlen(f);
	if (strncmp(e, f, n) == 0 && e[n] == ':') return luaL_error(L, "%s", e);
	return luaL_error(L, "%s: %s", f, e);
}

/* Tells the user once that the window is offscreen (no display). */
static void notice(void)
{
	const char *n = lm_viz_take_notice();
	if (n) {
		fprintf(stderr, "%s\n", n);
		fflush(stderr);
	}
}

/* ---------------------------------------------------------------- reading Lua values */

static void copy_field(lua_State *L, int t, const char *k, char *dst, size_t cap)
{
	dst[0] = '\0';
	if (lml_rawfield(L, t, k) == LUA_TSTRING) snprintf(dst, cap, "%s", lua_tostring(L, -1));
	lua_pop(L, 1);
}

static lm_trace *totrace(lua_State *L, int idx)
{
	lm_trace **box = luaL_testudata(L, idx, TRACE_MT);
	return box ? *box : NULL;
}

static bool is_info(lua_State *L, int idx)
{
	if (!lua_istable(L, idx)) return false;
	bool pattern = lml_rawfield(L, idx, "pattern") == LUA_TSTRING;
	bool counters = lml_rawfield(L, idx, "counters") == LUA_TTABLE;
	lua_pop(L, 2);
	return pattern && counters;
}

static double num_field(lua_State *L, int t, const char *k)
{
	double v = lml_rawfield(L, t, k) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
	lua_pop(L, 1);
	return v;
}

/* info.timeline (streams) into r->spans: a userdata kept in the anchor table for the call. */
static void read_spans(lua_State *L, int idx, lm_viz_run *r, int anchor)
{
	if (lml_rawfield(L, idx, "timeline") != LUA_TTABLE) {
		lua_pop(L, 1);
		return;
	}
	int tl = lua_gettop(L);
	lua_Integer n = (lua_Integer)lua_rawlen(L, tl);
	if (n > 100000) n = 100000;
	if (n > 0) {
		r->spans = lua_newuserdatauv(L, (size_t)n * sizeof *r->spans, 0);
		lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
	}
	for (lua_Integer i = 1; i <= n; i++) {
		if (lua_rawgeti(L, tl, i) != LUA_TTABLE) {
			lua_pop(L, 1);
			continue;
		}
		int e = lua_gettop(L);
		lm_viz_span *sp = &r->spans[r->nspans++];
		copy_field(L, e, "schedule", sp->schedule, sizeof sp->schedule);
		copy_field(L, e, "op", sp->op, sizeof sp->op);
		copy_field(L, e, "track", sp->track, sizeof sp->track);
		sp->segment = (int)num_field(L, e, "segment");
		sp->stream = (int)num_field(L, e, "stream");
		sp->start_ms = num_field(L, e, "start_ms");
		sp->end_ms = num_field(L, e, "end_ms");
		sp->bytes = num_field(L, e, "bytes");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* A run from the info table at idx (kernels.*'s second result). */
static void run_from_info(lua_State *L, int idx, lm_viz_run *r, int anchor)
{
	memset(r, 0, sizeof *r);
	copy_field(L, idx, "pattern", r->pattern, sizeof r->pattern);
	copy_field(L, idx, "algo", r->algo, sizeof r->algo);
	copy_field(L, idx, "source", r->source, sizeof r->source);
	copy_field(L, idx, "device", r->device, sizeof r->device);
	copy_field(L, idx, "provenance", r->provenance, sizeof r->provenance);
	lml_rawfield(L, idx, "counters");
	int c = lua_gettop(L);
	if (lml_rawfield(L, idx, "counter_names") == LUA_TTABLE) {
		int names = lua_gettop(L);
		lua_Integer n = (lua_Integer)lua_rawlen(L, names);
		for (lua_Integer i = 1; i <= n && r->ncounters < LM_VIZ_MAX_COUNTERS; i++) {
			if (lua_rawgeti(L, names, i) == LUA_TSTRING && lua_istable(L, c)) {
				lua_pushvalue(L, -1);
				lua_rawget(L, c); /* counters[name] */
				if (lua_type(L, -1) == LUA_TNUMBER) {
					lm_viz_counter *k = &r->counters[r->ncounters++];
					snprintf(k->name, sizeof k->name, "%s", lua_tostring(L, -2));
					k->value = lua_tonumber(L, -1);
				}
				lua_pop(L, 1);
			}
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 2);
	if (lml_rawfield(L, idx, "trace") == LUA_TUSERDATA) r->trace = totrace(L, -1);
	lua_pop(L, 1); /* the info table keeps the trace alive for the call */
	read_spans(L, idx, r, anchor);
}

/* A run from a kernels call's info object (no table read back, no number through text). Like the
 * other runs of a call it borrows: the trace from the info (which its table keeps alive), the
 * timeline from a userdata in the anchor table, made before anything is copied, so that an error
 * raised later in the call leaks nothing. */
static void run_from_object(lua_State *L, const lm_kernel_info *info, lm_viz_run *r, int anchor)
{
	int ns = lm_kernel_info_span_count(info);
	lm_viz_span *keep = NULL;
	if (ns > 0) {
		keep = lua_newuserdatauv(L, (size_t)ns * sizeof *keep, 0);
		lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
	}
	lm_viz_run_from_info(r, info); /* its own trace reference and timeline copy: given back below */
	int copied = r->nspans < ns ? r->nspans : ns;
	if (copied > 0) memcpy(keep, r->spans, (size_t)copied * sizeof *keep);
	lm_viz_run_clear(r);                    /* drops both; the rest of the run stays */
	r->trace = lm_kernel_info_trace(info);  /* borrowed */
	r->spans = keep;
	r->nspans = copied;
}

/* Runs from the value at idx: an info, a trace, or an array of them. Returns the count. */
static int read_runs(lua_State *L, int idx, lm_viz_run *runs, int cap, int anchor)
{
	char d[LML_DESCRIBE_MAX];
	const lm_kernel_info *info = lml_info_of(L, idx);
	if (info) { /* a kernels call's own info: the run from the C object */
		run_from_object(L, info, &runs[0], anchor);
		return 1;
	}
	if (is_info(L, idx)) { /* a table made some other way: read as it is */
		run_from_info(L, idx, &runs[0], anchor);
		return 1;
	}
	lm_trace **box = luaL_testudata(L, idx, TRACE_MT);
	if (box) {
		if (!*box) lml_error(L, "the trace is closed");
		lm_viz_run_from_trace(&runs[0], *box); /* borrowed: the userdata holds it for the call */
		return 1;
	}
	if (lua_istable(L, idx) && lua_rawlen(L, idx) > 0) {
		int n = (int)lua_rawlen(L, idx);
		if (n > cap) lml_error(L, "at most %d results at once, got %d", cap, n);
		for (int i = 0; i < n; i++) {
			lua_rawgeti(L, idx, i + 1);
			int top = lua_gettop(L);
			if (lua_istable(L, top) && lua_rawlen(L, top) > 0)
				lml_error(L, "result %d is an array: give info tables or traces", i + 1);
			if (!is_info(L, top) && !luaL_testudata(L, top, TRACE_MT))
				lml_error(L, "result %d must be the info of a kernels call or a trace, got %s", i + 1,
				          lml_describe(L, top, d, sizeof d));
			read_runs(L, top, &runs[i], 1, anchor);
			lua_pop(L, 1); /* the array keeps it alive */
		}
		return n;
	}
	return lml_error(L, "expected the info of a kernels call (out, info = kernels.scan(x)), a trace "
	                 "(info.trace), an array of them, a tensor or an nn module, got %s",
	                 lml_describe(L, idx, d, sizeof d));
}

/* Options from the table at idx into o; the key `skip` (scene) is left out. */
static void read_opts(lua_State *L, int idx, lm_viz_opts *o, const char *skip)
{
	memset(o, 0, sizeof *o);
	if (lua_isnoneornil(L, idx)) return;
	char d[LML_DESCRIBE_MAX];
	if (!lua_istable(L, idx) || lml_totensor(L, idx))
		lml_error(L, "options must be a table, got %s", lml_describe(L, idx, d, sizeof d));
	int t = lua_absindex(L, idx);
	lua_pushnil(L);
	while (lua_next(L, t)) {
		if (lua_type(L, -2) != LUA_TSTRING)
			lml_error(L, "option names must be strings, got %s", lml_describe(L, -2, d, sizeof d));
		const char *k = lua_tostring(L, -2);
		if (skip && strcmp(k, skip) == 0) {
			lua_pop(L, 1);
			continue;
		}
		char v[160];
		switch (lua_type(L, -1)) {
		case LUA_TNUMBER:
			if (lm_viz_opts_add_number(o, k, lua_tonumber(L, -1), lml_fname(L)) != LM_OK) fail(L);
			lua_pop(L, 1);
			continue;
		case LUA_TSTRING: snprintf(v, sizeof v, "%s", lua_tostring(L, -1)); break;
		case LUA_TBOOLEAN: snprintf(v, sizeof v, "%d", lua_toboolean(L, -1)); break;
		default: lml_error(L, "option %s must be a number, a string or a boolean, got %s", k,
		                   lml_describe(L, -1, d, sizeof d));
		}
		if (lm_viz_opts_add(o, k, v, lml_fname(L)) != LM_OK) fail(L);
		lua_pop(L, 1);
	}
}

static int opt_int(lua_State *L, int t, const char *k)
{
	lml_rawfield(L, t, k);
	char what[32];
	snprintf(what, sizeof what, "option %s", k);
	int64_t v = lml_optinteger(L, -1, what, 0);
	lua_pop(L, 1);
	return (int)(v > 100000 ? 100000 : v < -1 ? -1 : v);
}

/* ---------------------------------------------------------------- the functions */

/* viz.open([{width=, height=}]) -> true */
static int v_open(lua_State *L)
{
	lm_viz_open_opts o = {0, 0, false};
	if (!lua_isnoneornil(L, 1)) {
		char d[LML_DESCRIBE_MAX];
		if (!lua_istable(L, 1)) lml_error(L, "options must be a table, got %s", lml_describe(L, 1, d, sizeof d));
		lua_pushnil(L);
		while (lua_next(L, 1)) {
			const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "";
			if (strcmp(k, "width") && strcmp(k, "height"))
				lml_error(L, "unknown option %s (expected width, height)", lml_describe(L, -2, d, sizeof d));
			lua_pop(L, 1);
		}
		o.width = opt_int(L, 1, "width");
		o.height = opt_int(L, 1, "height");
		if ((o.width > 0) != (o.height > 0) || o.width < 0 || o.height < 0)
			lml_error(L, "give both width and height, as positive numbers (got %d x %d)", o.width, o.height);
	}
	if (lm_viz_open(&o, lml_fname(L)) != LM_OK) fail(L);
	notice();
	lua_pushboolean(L, 1);
	return 1;
}

static int v_close(lua_State *L)
{
	(void)L;
	lm_viz_close();
	return 0;
}

static int v_is_open(lua_State *L)
{
	lua_pushboolean(L, lm_viz_is_open());
	return 1;
}

/* viz.show(info_or_trace_or_array [, {scene=, ...}]), or a tensor: viz.show(x [, opts]),
 * viz.show(scene, x [, opts]) */
static int v_show(lua_State *L)
{
	if (lml_tobox(L, 1) || lua_type(L, 1) == LUA_TSTRING) return lml_viz_show_tensor(L); /* (scene,) tensor */
	lm_viz_run runs[8];
	lua_settop(L, 2); /* the options stay at 2 */
	lua_newtable(L);  /* keeps what the runs borrow (their spans) for the call */
	int n = read_runs(L, 1, runs, 8, lua_gettop(L));
	const char *scene = NULL;
	if (lua_istable(L, 2)) {
		int ty = lml_rawfield(L, 2, "scene");
		if (ty == LUA_TSTRING) scene = lua_tostring(L, -1); /* the options table keeps it */
		else if (ty != LUA_TNIL) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "option scene must be a string, got %s", lml_describe(L, -1, d, sizeof d));
		}
		lua_pop(L, 1);
	}
	lm_viz_opts o;
	read_opts(L, 2, &o, "scene");
	if (lm_viz_show(runs, n, scene, &o, lml_fname(L)) != LM_OK) fail(L);
	notice();
	return 0;
}

/* viz.scene(name [, opts]) */
static int v_scene(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_error(L, "the scene name must be a string (viz.scenes() lists them), got %s",
		          lml_describe(L, 1, d, sizeof d));
	lm_viz_opts o;
	read_opts(L, 2, &o, NULL);
	if (lm_viz_scene(lua_tostring(L, 1), &o, lml_fname(L)) != LM_OK) fail(L);
	notice();
	return 0;
}

static int push_step(lua_State *L)
{
	lm_viz_state s;
	lm_viz_get_state(&s);
	lua_pushinteger(L, s.step);
	lua_pushinteger(L, s.steps);
	return 2;
}

/* viz.step([n]) -> step, steps: n steps forward (back when negative), 1 by default. With the
 * window closed it does nothing and returns nil (a script that animates keeps running). */
static int v_step(lua_State *L)
{
	int64_t n = lml_optinteger(L, 1, "argument 1", 1);
	if (n < -1000000 || n > 1000000) lml_error(L, "argument 1 must lie in -1e6..1e6, got %lld", (long long)n);
	if (!lm_viz_is_open()) return 0;
	if (lm_viz_step((int)n, lml_fname(L)) != LM_OK) fail(L);
	return push_step(L);
}

/* viz.seek(step) -> step, steps */
static int v_seek(lua_State *L)
{
	int64_t n = lml_checkinteger(L, 1, "argument 1");
	if (lm_viz_seek(n < -1 ? -1 : n > 1000000000 ? 1000000000 : (int)n, lml_fname(L)) != LM_OK) fail(L);
	return push_step(L);
}

static int v_play(lua_State *L)
{
	if (!lm_viz_is_open()) return 0;
	if (lm_viz_play(true, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

static int v_pause(lua_State *L)
{
	if (!lm_viz_is_open()) return 0;
	if (lm_viz_play(false, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz.variant([name]) -> name: the next variant (as Tab), or the one named */
static int v_variant(lua_State *L)
{
	const char *name = NULL;
	if (!lua_isnoneornil(L, 1)) {
		char d[LML_DESCRIBE_MAX];
		if (lua_type(L, 1) != LUA_TSTRING)
			lml_error(L, "argument 1 must be a variant's name, got %s", lml_describe(L, 1, d, sizeof d));
		name = lua_tostring(L, 1);
	}
	if (lm_viz_variant(name, lml_fname(L)) != LM_OK) fail(L);
	lm_viz_state s;
	lm_viz_get_state(&s);
	lua_pushstring(L, s.variant);
	return 1;
}

static int v_snapshot(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_error(L, "the path must be a string, got %s", lml_describe(L, 1, d, sizeof d));
	if (lm_viz_snapshot(lua_tostring(L, 1), lml_fname(L)) != LM_OK) fail(L);
	lua_pushvalue(L, 1);
	return 1;
}

static void setint(lua_State *L, const char *k, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, k);
}

static void setstr(lua_State *L, const char *k, const char *v)
{
	if (!v) return;
	lua_pushstring(L, v);
	lua_setfield(L, -2, k);
}

static void push_rgb(lua_State *L, const uint8_t rgb[3])
{
	lua_createtable(L, 3, 0);
	for (int i = 0; i < 3; i++) {
		lua_pushinteger(L, rgb[i]);
		lua_rawseti(L, -2, i + 1);
	}
}

/* A pick or layout entry: what is set, as a table (ids stay 0-based, as in the trace). */
static void push_cell(lua_State *L, const lm_viz_pick *p, bool text)
{
	lua_createtable(L, 0, 16);
	lua_pushnumber(L, p->x);
	lua_setfield(L, -2, "x");
	lua_pushnumber(L, p->y);
	lua_setfield(L, -2, "y");
	lua_pushnumber(L, p->w);
	lua_setfield(L, -2, "w");
	lua_pushnumber(L, p->h);
	lua_setfield(L, -2, "h");
	setstr(L, "kind", p->kind);
	setstr(L, "group", p->group);
	setstr(L, "state", p->state);
	const struct { const char *k; int32_t v; } ints[] = {
		{"row", p->row}, {"col", p->col}, {"index", p->index}, {"step", p->step},
		{"thread", p->thread}, {"block", p->block}, {"warp", p->warp}, {"lane", p->lane},
		{"launch", p->launch},
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (ints[i].v >= 0) setint(L, ints[i].k, ints[i].v);
	if (p->event >= 0) setint(L, "event", (lua_Integer)p->event + 1); /* trace[event] */
	if (p->has_value) {
		lua_pushnumber(L, p->value);
		lua_setfield(L, -2, "value");
	}
	push_rgb(L, p->rgb);
	lua_setfield(L, -2, "color");
	if (text) setstr(L, "text", p->text);
}

/* viz.pick(x, y) -> table or nil: what the hover would show at drawable pixel (x, y) */
static int v_pick(lua_State *L)
{
	double x = lml_checknumber(L, 1, "x"), y = lml_checknumber(L, 2, "y");
	if (!lm_viz_is_open()) lml_error(L, "the window is closed (viz.show or viz.scene opens it)");
	lm_viz_pick p;
	if (!lm_viz_pick_at(x, y, &p)) return 0;
	push_cell(L, &p, true);
	return 1;
}

static void push_rect(lua_State *L, const float r[4])
{
	static const char *const k[4] = {"x", "y", "w", "h"};
	lua_createtable(L, 0, 4);
	for (int i = 0; i < 4; i++) {
		lua_pushnumber(L, r[i]);
		lua_setfield(L, -2, k[i]);
	}
}

/* viz.layout('text') -> array of {x=, y=, w=, h=, text=, clip={x=, y=, w=, h=}, layer=, font=}:
 * every text of the frame where it was drawn (the label tests: nothing clipped or overlapping) */
static int layout_text(lua_State *L)
{
	int n = lm_viz_text_count();
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lm_viz_text t;
		if (!lm_viz_text_get(i, &t)) break;
		push_rect(L, t.box);
		push_rect(L, t.clip);
		lua_setfield(L, -2, "clip");
		setstr(L, "text", t.text);
		setstr(L, "font", t.font);
		setint(L, "layer", t.layer);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* viz.layout() -> array of cells {x=, y=, w=, h=, kind=, state=, index=, step=, color=, ...} */
static int v_layout(lua_State *L)
{
	if (!lm_viz_is_open()) lml_error(L, "the window is closed (viz.show or viz.scene opens it)");
	if (!lua_isnoneornil(L, 1)) {
		if (lua_type(L, 1) != LUA_TSTRING) lml_typeerror(L, 1, "argument 1", "'text' or nothing");
		const char *what = lua_tostring(L, 1);
		if (strcmp(what, "text") != 0) lml_error(L, "unknown layout '%s' (nothing for the cells, or 'text')", what);
		return layout_text(L);
	}
	int n = lm_viz_cell_count();
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lm_viz_pick p;
		if (!lm_viz_cell_get(i, &p)) break;
		push_cell(L, &p, false);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* viz.state() -> {scene=, step=, steps=, variant=, variants=, playing=, speed=, width=, ...} */
static int v_state(lua_State *L)
{
	lm_viz_state s;
	lm_viz_get_state(&s);
	lua_createtable(L, 0, 14);
	lua_pushboolean(L, lm_viz_is_open());
	lua_setfield(L, -2, "open");
	const char *why = NULL;
	lua_pushboolean(L, lm_viz_is_offscreen(&why));
	lua_setfield(L, -2, "offscreen");
	setstr(L, "scene", s.scene);
	if (s.scene) {
		setint(L, "step", s.step);
		setint(L, "steps", s.steps);
		setstr(L, "variant", s.variant);
		setint(L, "variants", s.variants);
		setstr(L, "title", s.title);
		setstr(L, "step_label", s.step_label);
	}
	lua_pushboolean(L, s.playing);
	lua_setfield(L, -2, "playing");
	lua_pushnumber(L, s.speed);
	lua_setfield(L, -2, "speed");
	setint(L, "width", s.width);
	setint(L, "height", s.height);
	lua_pushnumber(L, s.scale);
	lua_setfield(L, -2, "scale");
	const float *rects[2] = {s.area, s.panel};
	static const char *const names[2] = {"area", "panel"};
	for (int i = 0; i < 2 && s.scene; i++) {
		lua_createtable(L, 0, 4);
		static const char *const k[4] = {"x", "y", "w", "h"};
		for (int j = 0; j < 4; j++) {
			lua_pushnumber(L, rects[i][j]);
			lua_setfield(L, -2, k[j]);
		}
		lua_setfield(L, -2, names[i]);
	}
	return 1;
}

/* viz.scenes() -> array of {name=, summary=, options={{name=, default=, help=}, ...}} */
static int v_scenes(lua_State *L)
{
	lua_newtable(L);
	const char *summary;
	for (int i = 0; lm_viz_scene_name(i, &summary); i++) {
		lua_createtable(L, 0, 3);
		setstr(L, "name", lm_viz_scene_name(i, NULL));
		setstr(L, "summary", summary);
		lua_newtable(L);
		const char *name, *help, *def;
		for (int k = 0; lm_viz_scene_option(i, k, &name, &help, &def); k++) {
			lua_createtable(L, 0, 3);
			setstr(L, "name", name);
			setstr(L, "default", def);
			setstr(L, "help", help);
			lua_rawseti(L, -2, k + 1);
		}
		lua_setfield(L, -2, "options");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* viz.colors() -> {active={r,g,b}, idle=..., ...}: the theme every scene draws with */
static int v_colors(lua_State *L)
{
	lua_newtable(L);
	uint8_t rgb[3];
	for (int i = 0; i < lm_viz_color_count(); i++) {
		const char *name = lm_viz_color_get(i, rgb);
		push_rgb(L, rgb);
		lua_setfield(L, -2, name);
	}
	return 1;
}

/* viz.pixel(x, y) -> r, g, b, a of the current frame (drawable pixels, from the top left) */
static int v_pixel(lua_State *L)
{
	int64_t x = lml_checkinteger(L, 1, "x"), y = lml_checkinteger(L, 2, "y");
	uint8_t c[4];
	if (x < -1 || y < -1 || x > 100000 || y > 100000) x = y = -1;
	if (lm_viz_pixel((int)x, (int)y, c, lml_fname(L)) != LM_OK) fail(L);
	for (int i = 0; i < 4; i++) lua_pushinteger(L, c[i]);
	return 4;
}

/* viz.key(name): presses a key as a user would ('space', 'right', 'tab', 's', 'escape', ...) */
static int v_key(lua_State *L)
{
	char d[LML_DESCRIBE_MAX];
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_error(L, "the key must be a string such as 'space', got %s", lml_describe(L, 1, d, sizeof d));
	if (lm_viz_key(lua_tostring(L, 1), lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz.pointer(x, y): moves the (simulated) pointer, as hovering does */
static int v_pointer(lua_State *L)
{
	double x = lml_checknumber(L, 1, "x"), y = lml_checknumber(L, 2, "y");
	lm_viz_pointer(x, y);
	return 0;
}

/* viz.zoom(factor [, x, y]): zooms about a pixel (the area's centre by default) as the wheel does;
 * viz.zoom(0) fits the scene again */
static int v_zoom(lua_State *L)
{
	double f = lml_checknumber(L, 1, "factor");
	lm_viz_state st;
	lm_viz_get_state(&st);
	double x = lml_optnumber(L, 2, "x", st.area[0] + st.area[2] / 2);
	double y = lml_optnumber(L, 3, "y", st.area[1] + st.area[3] / 2);
	if (lm_viz_zoom(f, x, y, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz.pan(dx, dy): moves the picture by that many pixels, as dragging does */
static int v_pan(lua_State *L)
{
	double dx = lml_checknumber(L, 1, "dx"), dy = lml_checknumber(L, 2, "dy");
	if (lm_viz_pan(dx, dy, lml_fname(L)) != LM_OK) fail(L);
	return 0;
}

/* viz.redraw() -> milliseconds: draws a whole frame now and waits for it (benchmarks) */
static int v_redraw(lua_State *L)
{
	if (!lm_viz_is_open()) lml_error(L, "the window is closed");
	lua_pushnumber(L, lm_viz_redraw());
	return 1;
}

/* viz.pump(): handles the window's events now (the REPL and the Lua hook do it on their own) */
static int v_pump(lua_State *L)
{
	(void)L;
	lm_viz_pump();
	return 0;
}

static const luaL_Reg functions[] = {
	{"open", v_open},       {"close", v_close},       {"is_open", v_is_open},
	{"show", v_show},       {"scene", v_scene},       {"step", v_step},
	{"seek", v_seek},       {"play", v_play},         {"pause", v_pause},
	{"variant", v_variant}, {"snapshot", v_snapshot}, {"pick", v_pick},
	{"layout", v_layout},   {"state", v_state},       {"scenes", v_scenes},
	{"colors", v_colors},   {"pixel", v_pixel},       {"key", v_key},
	{"pointer", v_pointer}, {"redraw", v_redraw},     {"pump", v_pump},
	{"zoom", v_zoom},       {"pan", v_pan},
	{NULL, NULL},
};

/* The viz.* C functions into the table at t (the module's open_lua). */
void lml_viz_open_funcs(lua_State *L, int t)
{
	t = lua_absindex(L, t);
	lml_setfuncs(L, t, "viz.", functions, 0);
	lml_viz_data_funcs(L, t);
}
