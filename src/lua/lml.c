/*
 * lml.c — the helpers every binding uses: names and errors, tensor boxes, numbers, shapes,
 * dims, element reads, and the GC pacer (option tables and names: options.c).
 *
 * Errors are raised with luaL_error(L, "%s: %s", name, msg), so a message is never a format
 * string, and luaL_error adds the caller's file:line. Values in messages are described without
 * calling metamethods (a user's __tostring may recurse or raise). Read next: tensor.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lml.h"

/* ---------------------------------------------------------------- registration */

void lml_setfuncs(lua_State *L, int t, const char *prefix, const luaL_Reg *regs, int nup)
{
	t = lua_absindex(L, t);
	for (; regs->name; regs++) {
		lua_pushfstring(L, "%s%s", prefix, regs->name);
		for (int i = 0; i < nup; i++) lua_pushvalue(L, -1 - nup);
		lua_pushcclosure(L, regs->func, 1 + nup);
		lua_setfield(L, t, regs->name);
	}
	lua_pop(L, nup);
}

/* ---------------------------------------------------------------- errors */

const char *lml_fname(lua_State *L)
{
	const char *s = lua_tostring(L, lua_upvalueindex(1));
	return s ? s : "lumen";
}

_Noreturn int lml_error(lua_State *L, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	luaL_error(L, "%s: %s", lml_fname(L), msg);
	__builtin_unreachable(); /* lua_error longjmps */
}

_Noreturn int lml_core_error(lua_State *L)
{
	char msg[600];
	const char *e = lm_last_error();
	snprintf(msg, sizeof msg, "%s", *e ? e : "failed (no message from the core)");
	/* "select: index 5 ..." -> "index 5 ...": the Lua name replaces the core's. */
	const char *p = msg;
	while (*p && (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))) p++;
	const char *body = (p > msg && p[0] == ':' && p[1] == ' ') ? p + 2 : msg;
	/* "lm.sys.write_file: ..." from a core routine given the Lua name: said once */
	size_t n = strlen(lml_fname(L));
	if (strncmp(msg, lml_fname(L), n) == 0 && msg[n] == ':' && msg[n + 1] == ' ') body = msg + n + 2;
	luaL_error(L, "%s: %s", lml_fname(L), body);
	__builtin_unreachable();
}

const char *lml_describe(lua_State *L, int idx, char *buf, size_t cap)
{
	switch (lua_type(L, idx)) {
	case LUA_TNONE: snprintf(buf, cap, "no value"); break;
	case LUA_TNIL: snprintf(buf, cap, "nil"); break;
	case LUA_TBOOLEAN: snprintf(buf, cap, "%s", lua_toboolean(L, idx) ? "true" : "false"); break;
	case LUA_TNUMBER:
		if (lua_isinteger(L, idx))
			snprintf(buf, cap, "%lld", (long long)lua_tointeger(L, idx));
		else if (isnan(lua_tonumber(L, idx)))
			snprintf(buf, cap, "nan");
		else
			snprintf(buf, cap, "%.14g", lua_tonumber(L, idx));
		break;
	case LUA_TSTRING: {
		size_t n;
		const char *s = lua_tolstring(L, idx, &n);
		if (n > 24)
			snprintf(buf, cap, "string '%.20s...'", s);
		else
			snprintf(buf, cap, "string '%s'", s);
		break;
	}
	case LUA_TUSERDATA: {
		lm_tensor **b = lml_tobox(L, idx);
		if (b && !*b)
			snprintf(buf, cap, "a closed tensor");
		else if (b)
			snprintf(buf, cap, "a tensor");
		else
			snprintf(buf, cap, "a userdata");
		break;
	}
	default: snprintf(buf, cap, "a %s", luaL_typename(L, idx)); break;
	}
	return buf;
}

/* ---------------------------------------------------------------- GC pacing */

static struct {
	size_t debt;      /* tensor bytes stored in boxes since the last collection */
	size_t threshold; /* collect when debt exceeds this */
	double last_end;  /* when the last collection ended (seconds), 0 before the first */
} pacer = {0, LML_GC_MIN_BYTES, 0};

static double gc_clock(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/*
 * The next threshold: what the program allocates, at its rate since the last collection, in
 * LML_GC_TIME_FACTOR times this collection's own time (so collecting costs about 1/FACTOR of the
 * time), between LML_GC_MIN_BYTES and the live bytes (the bound of docs/lua.md). A loop with few
 * Lua objects collects in a fraction of a millisecond and so keeps little garbage (the CNN epoch's
 * peak RSS: 847 MB with the live bytes as the threshold); one with many objects gets the bound.
 */
void lml_gc_account(lua_State *L, size_t bytes)
{
	pacer.debt += bytes;
	if (pacer.debt < pacer.threshold) return;
	size_t allocated = pacer.debt;
	pacer.debt = 0;
	double t0 = gc_clock();
	lua_gc(L, LUA_GCCOLLECT);
	double t1 = gc_clock();
	lm_memory_stats st;
	lm_memory_stats_get(&st);
	double bound = st.live_bytes > LML_GC_MIN_BYTES ? (double)st.live_bytes : (double)LML_GC_MIN_BYTES;
	double next = bound;
	if (pacer.last_end > 0 && t0 > pacer.last_end) {
		double rate = (double)allocated / (t0 - pacer.last_end); /* bytes per second */
		next = rate * (t1 - t0) * LML_GC_TIME_FACTOR; /* float */
	}
	if (next < (double)LML_GC_MIN_BYTES) next = (double)LML_GC_MIN_BYTES;
	if (next > bound) next = bound;
	pacer.threshold = (size_t)next;
	pacer.last_end = t1;
}

int lml_retry_nomem(lua_State *L)
{
	if (lm_last_status() != LM_ERR_NOMEM) return 0;
	lua_gc(L, LUA_GCCOLLECT);
	pacer.debt = 0;
	return 1;
}

/* ---------------------------------------------------------------- tensor boxes */

static const char mt_key = 'T'; /* registry[&mt_key] = the Tensor metatable */

lm_tensor **lml_newbox(lua_State *L)
{
	lm_tensor **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
	lua_setmetatable(L, -2);
	return box;
}

void lml_setbox(lua_State *L, lm_tensor **box, lm_tensor *t)
{
	*box = t;
	lml_gc_account(L, lm_tensor_nbytes(t) + LML_TENSOR_OVERHEAD);
}

int lml_result(lua_State *L, lm_tensor **box, lm_tensor *t)
{
	if (!t) return lml_core_error(L);
	lml_setbox(L, box, t);
	return 1;
}

void lml_pushtensor(lua_State *L, lm_tensor *t)
{
	lm_tensor **box = lml_newbox(L);
	*box = lm_tensor_retain(t);
}

lm_tensor **lml_tobox(lua_State *L, int idx)
{
	void *p = lua_touserdata(L, idx);
	if (!p || !lua_getmetatable(L, idx)) return NULL;
	lua_rawgetp(L, LUA_REGISTRYINDEX, &mt_key);
	int same = lua_rawequal(L, -1, -2);
	lua_pop(L, 2);
	return same ? p : NULL;
}

int lml_may_release(lua_State *L)
{
	/* Lua 5.4.4+ answers -1 while a finalizer runs (the collector is stopped during one); earlier
	 * 5.4 releases answer 0 then, as they do after collectgarbage('stop'). */
#if LUA_VERSION_RELEASE_NUM >= 50404
	if (lua_gc(L, LUA_GCISRUNNING) >= 0) return 1;
#else
	if (lua_gc(L, LUA_GCISRUNNING) > 0) return 1;
#endif
	/* The collector calls a finalizer as the metamethod __gc. When it collects while a Lua hook
	 * runs (a lesson check's instruction budget: the hook's C side, hookf, runs on the hooked
	 * function's CallInfo, which carries CIST_HOOKED), Lua names every finalizer it calls then
	 * "hook" instead: no Lua code can make such a call (a Lua hook function has a CallInfo of its
	 * own), so that name is the collector too. Refusing it leaked every tensor collected there. */
	lua_Debug ar;
	if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "n", &ar) || !ar.namewhat) return 0;
	if (strcmp(ar.namewhat, "hook") == 0) return 1;
	return strcmp(ar.namewhat, "metamethod") == 0 && ar.name && strcmp(ar.name, "__gc") == 0;
}

void lml_checkrelease(lua_State *L, const char *what)
{
	if (!lml_may_release(L))
		lml_error(L, "cannot close %s inside a finalizer (__gc): a call that is running may be "
		          "using it (drop the reference instead)", what);
}

lm_tensor *lml_totensor(lua_State *L, int idx)
{
	lm_tensor **b = lml_tobox(L, idx);
	return b ? *b : NULL;
}

lm_tensor *lml_checktensor(lua_State *L, int idx, const char *what)
{
	lm_tensor **b = lml_tobox(L, idx);
	if (!b) lml_typeerror(L, idx, what, "a tensor");
	if (!*b) {
		if (strcmp(what, "self") == 0 || strcmp(what, "argument 1") == 0)
			lml_error(L, "tensor is closed");
		lml_error(L, "%s: tensor is closed", what);
	}
	return *b;
}

lm_tensor *lml_checkself(lua_State *L)
{
	lm_tensor **b = lml_tobox(L, 1);
	if (b && *b) return *b; /* the fast path */
	return lml_checktensor(L, 1, strncmp(lml_fname(L), "Tensor:", 7) == 0 ? "self" : "argument 1");
}

/* Called once by luaopen_lumen_core with the metatable on the stack top. */
void lml_register_metatable(lua_State *L);
void lml_register_metatable(lua_State *L)
{
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, &mt_key);
}

/* ---------------------------------------------------------------- numbers */

int lml_isinteger(lua_State *L, int idx, int64_t *out)
{
	if (lua_type(L, idx) != LUA_TNUMBER) return 0;
	if (lua_isinteger(L, idx)) {
		*out = lua_tointeger(L, idx);
		return 1;
	}
	double d = lua_tonumber(L, idx);
	/* 2^63 itself is out of range; every double below it converts exactly. */
	if (!(d == floor(d)) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) return 0;
	*out = (int64_t)d;
	return 1;
}

int64_t lml_checkinteger(lua_State *L, int idx, const char *what)
{
	int64_t v;
	if (!lml_isinteger(L, idx, &v)) lml_typeerror(L, idx, what, "an integer");
	return v;
}

int64_t lml_checkcount(lua_State *L, int idx, const char *what)
{
	int64_t v = lml_checkinteger(L, idx, what);
	if (v < 0) lml_error(L, "%s must be non-negative, got %lld", what, (long long)v);
	return v;
}

int64_t lml_optinteger(lua_State *L, int idx, const char *what, int64_t def)
{
	return lua_isnoneornil(L, idx) ? def : lml_checkinteger(L, idx, what);
}

lm_tensor *lml_exact_integer(lua_State *L, int idx, lm_dtype dt)
{
	if (dt != LM_INT64 || !lua_isinteger(L, idx)) return NULL;
	lua_Integer v = lua_tointeger(L, idx);
	if (v >= -((lua_Integer)1 << 53) && v <= ((lua_Integer)1 << 53)) return NULL;
	lm_tensor *t;
	LML_PUSH(L, t, lm_empty(0, NULL, LM_INT64));
	*(int64_t *)lm_tensor_data(t) = (int64_t)v;
	return t;
}

lm_dtype lml_number_dtype(lua_State *L, int idx, lm_dtype dt)
{
	return !lm_dtype_is_float(dt) && !lua_isinteger(L, idx) ? LM_FLOAT32 : dt;
}

/* The range of an integer dtype (the type table's), for messages and checks. */
static void int_range(lm_dtype dt, int64_t *lo, int64_t *hi)
{
	const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
	*lo = ty->min, *hi = ty->max;
}

lm_tensor *lml_boxnumber(lua_State *L, int idx, lm_dtype dt)
{
	lm_tensor **box = lml_newbox(L);
	lm_tensor *t;
	int exact = lua_isinteger(L, idx) || lm_dtype_is_float(dt);
	/* floats into integers convert as the core does (truncation, modulo 2^bits) */
	LML_TRY(L, t, exact ? lm_empty(0, NULL, dt) : lm_scalar(lua_tonumber(L, idx), dt));
	lml_result(L, box, t);
	if (exact) lml_storenumber(L, idx, dt, lm_tensor_data(t));
	return t;
}

lm_tensor *lml_number_operand(lua_State *L, int idx, lm_dtype dt, int cmp)
{
	if (lm_dtype_is_float(dt)) return NULL;
	if (!lua_isinteger(L, idx)) return lml_boxnumber(L, idx, LM_FLOAT32);
	lua_Integer v = lua_tointeger(L, idx);
	int64_t lo, hi;
	int_range(dt, &lo, &hi);
	if (cmp && (v < lo || v > hi)) return lml_boxnumber(L, idx, LM_INT64);
	return lml_exact_integer(L, idx, dt);
}

void lml_checkstore(lua_State *L, int idx, lm_dtype dt, const char *what, const char *elem)
{
	if (lm_dtype_is_float(dt)) return;
	int64_t lo, hi;
	int_range(dt, &lo, &hi);
	char d[LML_DESCRIBE_MAX], name[160];
	if (lua_isinteger(L, idx)) {
		lua_Integer v = lua_tointeger(L, idx);
		if (v >= lo && v <= hi) return;
	} else {
		double v = trunc(lua_tonumber(L, idx));
		/* 2^63 itself is out of int64's range; every double below it converts exactly */
		if (v >= (double)lo && (dt == LM_INT64 ? v < 9223372036854775808.0 : v <= (double)hi))
			return;
	}
	/* "value 300" or "element [2] = 300" */
	snprintf(name, sizeof name, "%s%s%s%s", what, elem ? " " : "", elem ? elem : "", elem ? " =" : "");
	lml_describe(L, idx, d, sizeof d);
	if (isnan(lua_tonumber(L, idx)))
		lml_error(L, "%s nan cannot be stored in an %s tensor (only floats hold NaN)", name,
		          lm_dtype_name(dt));
	lml_error(L, "%s %s is out of range for %s (%lld..%lld)", name, d, lm_dtype_name(dt),
	          (long long)lo, (long long)hi);
}

void lml_storenumber(lua_State *L, int idx, lm_dtype dt, char *p)
{
	int isint = lua_isinteger(L, idx);
	lua_Integer iv = isint ? lua_tointeger(L, idx) : 0;
	double v = lua_tonumber(L, idx);
	const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
	/* a float from the number (an integer through double, as Lua converts it); an integer exactly
	 * (lml_checkstore checked the range; a float truncates) */
	if (ty->is_int)
		ty->set_int(p, isint ? iv : (int64_t)v);
	else
		ty->set(p, v);
}

double lml_checknumber(lua_State *L, int idx, const char *what)
{
	if (lua_type(L, idx) != LUA_TNUMBER) lml_typeerror(L, idx, what, "a number");
	return lua_tonumber(L, idx);
}

double lml_optnumber(lua_State *L, int idx, const char *what, double def)
{
	return lua_isnoneornil(L, idx) ? def : lml_checknumber(L, idx, what);
}

int lml_optboolean(lua_State *L, int idx, const char *what, int def)
{
	if (lua_isnoneornil(L, idx)) return def;
	if (!lua_isboolean(L, idx)) lml_typeerror(L, idx, what, "a boolean");
	return lua_toboolean(L, idx);
}

/* ---------------------------------------------------------------- shapes, dims, indices */

/* One size: a non-negative integer (or -1 when allowed). k is 1-based for the message. */
static int64_t check_size(lua_State *L, int idx, int k, int allow_infer)
{
	int64_t v;
	if (!lml_isinteger(L, idx, &v) || v < (allow_infer ? -1 : 0)) {
		char d[LML_DESCRIBE_MAX];
		lml_error(L, "size %d must be a %sinteger, got %s", k,
		          allow_infer ? "non-negative (or -1) " : "non-negative ",
		          lml_describe(L, idx, d, sizeof d));
	}
	return v;
}

static char *dims_str(int n, const int64_t *shape, char *buf, size_t cap)
{
	return lm_shape_str(n, shape, buf, cap);
}

int lml_checkshape(lua_State *L, int first, int last, int64_t *shape, int allow_infer)
{
	int n = 0, infer = 0;
	if (last >= first && lua_type(L, first) == LUA_TTABLE && !lml_tobox(L, first)) {
		if (last > first) {
			char d[LML_DESCRIBE_MAX];
			lml_error(L, "sizes are given either as numbers or as one table, got a table and "
			          "then %s", lml_describe(L, first + 1, d, sizeof d));
		}
		lua_Unsigned len = lua_rawlen(L, first);
		if (len > LM_MAX_DIMS)
			lml_error(L, "%llu sizes given, at most %d dims are supported",
			          (unsigned long long)len, LM_MAX_DIMS);
		for (int k = 1; k <= (int)len; k++) {
			lua_rawgeti(L, first, k);
			shape[n++] = check_size(L, -1, k, allow_infer);
			lua_pop(L, 1);
		}
	} else {
		if (last - first + 1 > LM_MAX_DIMS)
			lml_error(L, "%d sizes given, at most %d dims are supported", last - first + 1,
			          LM_MAX_DIMS);
		for (int i = first; i <= last; i++) {
			shape[n] = check_size(L, i, n + 1, allow_infer);
			n++;
		}
	}
	int64_t count = 1; /* of the sizes other than 0 (the core's rule: see lmi_numel_checked) */
	for (int i = 0; i < n; i++) {
		if (shape[i] == 0) continue;
		if (shape[i] == -1) {
			if (infer++) {
				char b[LM_SHAPE_STR_MAX];
				lml_error(L, "only one size may be -1, got %s", dims_str(n, shape, b, sizeof b));
			}
			continue;
		}
		if (lml_mul_overflows(count, shape[i], &count)) {
			char b[LM_SHAPE_STR_MAX];
			lml_error(L, "the element count of shape %s overflows", dims_str(n, shape, b, sizeof b));
		}
	}
	return n;
}

int lml_checkdim(lua_State *L, int idx, int ndim, int extra, const char *what)
{
	int64_t d;
	int n = ndim + extra;
	if (n < 1) n = 1; /* a 0-d tensor accepts dim 1 / -1, as PyTorch accepts 0 / -1 */
	if (!lml_isinteger(L, idx, &d)) lml_typeerror(L, idx, what, "an integer");
	if (d == 0 || d > n || d < -n)
		lml_error(L, "%s %lld is out of range for a %d-d tensor (expected 1..%d or -%d..-1)", what,
		          (long long)d, ndim, n, n);
	return (int)(d > 0 ? d - 1 : d + n);
}

int64_t lml_toindex(lua_State *L, int64_t i, int64_t n, int dim1, const char *what)
{
	int64_t k = i > 0 ? i - 1 : i + n;
	if (i == 0 || k < 0 || k >= n) {
		if (n == 0)
			lml_error(L, "%s %lld is out of range for dim %d of size 0", what, (long long)i, dim1);
		lml_error(L, "%s %lld is out of range for dim %d of size %lld (expected 1..%lld or "
		          "-%lld..-1)", what, (long long)i, dim1, (long long)n, (long long)n, (long long)n);
	}
	return k;
}

/* ---------------------------------------------------------------- elements */

const char *lml_elemptr(const lm_tensor *t, const int64_t *idx)
{
	const int64_t *st = lm_tensor_strides(t);
	int64_t off = 0;
	/* bounded: idx is inside t's shape, and a tensor that exists fits in its storage */
	for (int i = 0; i < lm_tensor_ndim(t); i++) off += idx[i] * st[i];
	return (const char *)lm_tensor_data(t) + off * (int64_t)lm_dtype_size(lm_tensor_dtype(t)); /* bounded: as above */
}

void lml_pushelem(lua_State *L, lm_dtype dt, const char *p)
{
	const lm_dtype_traits *ty = lm_dtype_traits_of(dt);
	if (!ty)
		lua_pushnil(L);
	else if (ty->block_size > 1) /* no element of a block stands alone */
		luaL_error(L, "%s is a block type: convert the tensor with x:float() to read its values", ty->name);
	else if (ty->is_int)
		lua_pushinteger(L, ty->get_int(p));
	else
		lua_pushnumber(L, ty->get(p));
}

/* ---------------------------------------------------------------- index tensors */

int lml_find_out_of_range(const lm_tensor *t, int64_t lo, int64_t hi, int64_t *bad, int64_t *pos)
{
	if (lm_tensor_device(t) != LM_CPU) { /* a device's indices: read from a CPU copy */
		lm_tensor *c = lml_host_copy(t);
		int r = c ? lml_find_out_of_range(c, lo, hi, bad, pos) : 0; /* else the op reports it */
		lm_tensor_release(c);
		return r;
	}
	int n = lm_tensor_ndim(t);
	const int64_t *shape = lm_tensor_shape(t);
	int64_t idx[LM_MAX_DIMS] = {0}, total = lm_tensor_numel(t);
	lm_dtype dt = lm_tensor_dtype(t);
	for (int64_t k = 0; k < total; k++) {
		const char *p = lml_elemptr(t, idx);
		int64_t v;
		if (dt == LM_INT64) {
			memcpy(&v, p, sizeof v);
		} else if (dt == LM_INT32) {
			int32_t w;
			memcpy(&w, p, sizeof w);
			v = w;
		} else {
			v = *(const uint8_t *)p;
		}
		if (v < lo || v > hi) {
			*bad = v;
			for (int d = 0; d < n && pos; d++) pos[d] = idx[d] + 1;
			return 1;
		}
		for (int d = n - 1; d >= 0; d--) { /* odometer over the shape, C order */
			if (++idx[d] < shape[d]) break;
			idx[d] = 0;
		}
	}
	return 0;
}

lm_tensor *lml_index0(lua_State *L, int arg, const char *what, int64_t hi)
{
	lm_tensor *t = lml_checktensor(L, arg, what);
	lm_dtype dt = lm_tensor_dtype(t);
	if (dt != LM_INT64 && dt != LM_INT32)
		lml_error(L, "%s must be an int64 or int32 tensor of 1-based indices, got %s", what,
		          lm_dtype_name(dt));
	int64_t bad;
	if (hi >= 0 && lml_find_out_of_range(t, 1, hi, &bad, NULL)) {
		if (hi == 0) lml_error(L, "%s: index %lld is out of range (the dim is empty)", what,
		                       (long long)bad);
		lml_error(L, "%s: index %lld is out of range 1..%lld (indices are 1-based)", what,
		          (long long)bad, (long long)hi);
	}
	lm_tensor *r;
	LML_PUSH(L, r, lm_binary_scalar(LM_SUB, t, 1));
	return r;
}

void lml_setpair(lua_State *L, lm_tensor **vbox, lm_tensor *v, lm_tensor **ibox, lm_tensor *i)
{
	*vbox = v; /* owned by its box before anything can run */
	lm_tensor *r = lm_binary_scalar(LM_ADD, i, 1);
	lm_tensor_release(i);
	if (!r) lml_core_error(L);
	*ibox = r;
	lml_gc_account(L, lm_tensor_nbytes(v) + lm_tensor_nbytes(r) + 2 * LML_TENSOR_OVERHEAD);
}
