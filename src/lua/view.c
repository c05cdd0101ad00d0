/*
 * view.c — views (view, reshape, t, transpose, permute, narrow, select, expand, squeeze,
 * unsqueeze, flatten), copies (contiguous, clone, detach) and element access x[i], x[{i, j}],
 * x[{{a, b}, j}] with assignment.
 *
 * An index table is parsed and range-checked in full (in Lua terms: 1-based, negatives from the
 * end, ranges inclusive) before any tensor is made; then a chain of core select/narrow calls
 * builds the view, each step releasing the previous one, so nothing leaks if a step fails.
 * Read next: math.c.
 */
#include <string.h>

#include "lml.h"

/* ---------------------------------------------------------------- shape views */

static int t_view_like(lua_State *L, int reshape)
{
	lm_tensor *t = lml_checkself(L);
	int64_t shape[LM_MAX_DIMS];
	int n = lml_checkshape(L, 2, lua_gettop(L), shape, 1);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *r;
	if (reshape)
		LML_TRY(L, r, lm_reshape(t, n, shape));
	else
		r = lm_view(t, n, shape);
	return lml_result(L, box, r);
}

static int t_view(lua_State *L) { return t_view_like(L, 0); }
static int t_reshape(lua_State *L) { return t_view_like(L, 1); }

/* An integer list (a table) at idx into out (at most LM_MAX_DIMS): its length. */
static int int_list(lua_State *L, int idx, int64_t *out, const char *what)
{
	if (lua_type(L, idx) != LUA_TTABLE) lml_typeerror(L, idx, what, "a table of integers");
	int n = (int)lua_rawlen(L, idx);
	if (n > LM_MAX_DIMS) lml_error(L, "%s has %d entries, at most %d dims are supported", what, n, LM_MAX_DIMS);
	for (int i = 0; i < n; i++) {
		lua_rawgeti(L, idx, i + 1);
		out[i] = lml_checkinteger(L, -1, what);
		lua_pop(L, 1);
	}
	return n;
}

/* x:as_strided(size, stride [, storage_offset = x's]): a view with any sizes and strides (in
 * elements; the offset 0-based, as PyTorch's), bounds-checked against x's storage */
static int t_as_strided(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int64_t shape[LM_MAX_DIMS], stride[LM_MAX_DIMS];
	int n = int_list(L, 2, shape, "size");
	int m = int_list(L, 3, stride, "stride");
	if (n != m) lml_error(L, "size has %d entries and stride %d: one stride per dim", n, m);
	int64_t off = lua_isnoneornil(L, 4) ? lm_tensor_offset(t) : lml_checkinteger(L, 4, "storage_offset");
	LML_RETURN(L, lm_as_strided(t, n, shape, stride, off));
}

static int t_t(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_tensor_ndim(t) > 2)
		lml_error(L, "expects a tensor of at most 2 dims, got %d dims (use transpose)",
		          lm_tensor_ndim(t));
	LML_RETURN(L, lm_t(t));
}

static int t_transpose(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int n = lm_tensor_ndim(t);
	int a = lml_checkdim(L, 2, n, 0, "dim1");
	int b = lml_checkdim(L, 3, n, 0, "dim2");
	LML_RETURN(L, lm_transpose(t, a, b));
}

static int t_permute(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int n = lm_tensor_ndim(t), dims[LM_MAX_DIMS], seen[LM_MAX_DIMS] = {0};
	int first = 2, count = lua_gettop(L) - 1, tbl = 0;
	if (count == 1 && lua_type(L, 2) == LUA_TTABLE) {
		tbl = 1;
		count = (int)lua_rawlen(L, 2);
	}
	if (count != n)
		lml_error(L, "expected %d dims (a permutation of 1..%d), got %d", n, n, count);
	for (int i = 0; i < n; i++) {
		int idx = first + i;
		if (tbl) {
			lua_rawgeti(L, 2, i + 1);
			idx = lua_gettop(L);
		}
		int d = lml_checkdim(L, idx, n, 0, "dim");
		if (seen[d]) lml_error(L, "dim %d appears twice in the permutation", d + 1);
		seen[d] = 1;
		dims[i] = d;
		if (tbl) lua_pop(L, 1);
	}
	LML_RETURN(L, lm_permute(t, dims));
}

/* x:narrow(dim, start, length): elements start .. start + length - 1 along dim. */
static int t_narrow(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int n = lm_tensor_ndim(t);
	if (n == 0) lml_error(L, "cannot narrow a 0-d tensor");
	int d = lml_checkdim(L, 2, n, 0, "dim");
	int64_t start = lml_checkinteger(L, 3, "start"), len = lml_checkinteger(L, 4, "length");
	int64_t size = lm_tensor_shape(t)[d];
	int64_t s0 = start > 0 ? start - 1 : start + size;
	if (start == 0 || s0 < 0 || s0 > size)
		lml_error(L, "start %lld is out of range for dim %d of size %lld", (long long)start, d + 1,
		          (long long)size);
	if (len < 0 || len > size - s0)
		lml_error(L, "length %lld from start %lld does not fit dim %d of size %lld",
		          (long long)len, (long long)start, d + 1, (long long)size);
	LML_RETURN(L, lm_narrow(t, d, s0, len));
}

static int t_select(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int n = lm_tensor_ndim(t);
	if (n == 0) lml_error(L, "cannot select from a 0-d tensor");
	int d = lml_checkdim(L, 2, n, 0, "dim");
	int64_t i = lml_toindex(L, lml_checkinteger(L, 3, "index"), lm_tensor_shape(t)[d], d + 1,
	                        "index");
	LML_RETURN(L, lm_select(t, d, i));
}

static int t_expand(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int64_t shape[LM_MAX_DIMS];
	int top = lua_gettop(L), n = 0;
	char d[LML_DESCRIBE_MAX];
	int tbl = top == 2 && lua_type(L, 2) == LUA_TTABLE;
	int count = tbl ? (int)lua_rawlen(L, 2) : top - 1;
	if (count > LM_MAX_DIMS) lml_error(L, "%d sizes given, at most %d dims", count, LM_MAX_DIMS);
	for (int i = 0; i < count; i++) {
		int idx = 2 + i;
		if (tbl) {
			lua_rawgeti(L, 2, i + 1);
			idx = lua_gettop(L);
		}
		int64_t v;
		if (!lml_isinteger(L, idx, &v) || v < -1)
			lml_error(L, "size %d must be a non-negative integer or -1, got %s", i + 1,
			          lml_describe(L, idx, d, sizeof d));
		shape[n++] = v;
		if (tbl) lua_pop(L, 1);
	}
	if (n < lm_tensor_ndim(t))
		lml_error(L, "cannot expand a %d-d tensor to %d dims", lm_tensor_ndim(t), n);
	LML_RETURN(L, lm_expand(t, n, shape));
}

static int t_expand_as(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	lm_tensor *o = lml_checktensor(L, 2, "argument 1");
	LML_RETURN(L, lm_expand(t, lm_tensor_ndim(o), lm_tensor_shape(o)));
}

static int t_squeeze(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int d = LM_ALL_DIMS;
	if (!lua_isnoneornil(L, 2)) d = lml_checkdim(L, 2, lm_tensor_ndim(t), 0, "dim");
	if (d != LM_ALL_DIMS && lm_tensor_ndim(t) == 0) d = LM_ALL_DIMS;
	LML_RETURN(L, lm_squeeze(t, d));
}

static int t_unsqueeze(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_tensor_ndim(t) >= LM_MAX_DIMS)
		lml_error(L, "the tensor already has the maximum of %d dims", LM_MAX_DIMS);
	int d = lml_checkdim(L, 2, lm_tensor_ndim(t), 1, "dim");
	LML_RETURN(L, lm_unsqueeze(t, d));
}

/* x:flatten([start [, end]]): dims start..end merged into one (defaults 1 and -1). */
static int t_flatten(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	int n = lm_tensor_ndim(t);
	int s = lua_isnoneornil(L, 2) ? 0 : lml_checkdim(L, 2, n, 0, "start dim");
	int e = lua_isnoneornil(L, 3) ? (n > 0 ? n - 1 : 0) : lml_checkdim(L, 3, n, 0, "end dim");
	if (s > e) lml_error(L, "start dim %d comes after end dim %d", s + 1, e + 1);
	LML_RETURN(L, lm_flatten(t, s, e));
}

/* ---------------------------------------------------------------- copies */

static int t_contiguous(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	if (lm_tensor_is_contiguous(t)) {
		lua_settop(L, 1);
		return 1;
	}
	LML_RETURN(L, lm_contiguous(t));
}

static int t_clone(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	LML_RETURN(L, lm_clone(t));
}

static int t_detach(lua_State *L)
{
	lm_tensor *t = lml_checkself(L);
	LML_RETURN(L, lm_detach(t));
}

/* ---------------------------------------------------------------- element access */

typedef struct step {
	int select; /* 1: select index a at dim; 0: narrow dim to [a, a + len) */
	int dim;    /* in the tensor being built (selects remove dims) */
	int64_t a, len;
} step;

/* Parses the key at index key against t; returns the number of steps. */
static int parse_key(lua_State *L, lm_tensor *t, int key, step *steps)
{
	char d[LML_DESCRIBE_MAX];
	int n = lm_tensor_ndim(t);
	const int64_t *shape = lm_tensor_shape(t);
	int64_t i;
	if (lml_isinteger(L, key, &i)) {
		if (n == 0) lml_error(L, "cannot index a 0-d tensor (use x:item())");
		steps[0] = (step){1, 0, lml_toindex(L, i, shape[0], 1, "index"), 0};
		return 1;
	}
	if (lua_type(L, key) != LUA_TTABLE || lml_tobox(L, key)) {
		if (lml_tobox(L, key))
			lml_error(L, "indexing with a tensor is not supported (use index_select, gather or "
			          "masked_fill)");
		lml_typeerror(L, key, "an index", "an integer or a table such as {i, j} or {{a, b}, j}");
	}
	int count = (int)lua_rawlen(L, key), nsteps = 0, cur = 0;
	if (count > n) lml_error(L, "%d indices for a %d-d tensor", count, n);
	for (int k = 0; k < count; k++) {
		int tp = lua_rawgeti(L, key, k + 1);
		int64_t size = shape[k];
		if (tp == LUA_TNUMBER) {
			if (!lml_isinteger(L, -1, &i))
				lml_error(L, "index %d must be an integer, got %s", k + 1,
				          lml_describe(L, -1, d, sizeof d));
			steps[nsteps++] = (step){1, cur, lml_toindex(L, i, size, k + 1, "index"), 0};
		} else if (tp == LUA_TTABLE && !lml_tobox(L, -1)) {
			int len = (int)lua_rawlen(L, -1);
			int64_t a = 1, b = -1;
			if (len > 2)
				lml_error(L, "range %d must be {}, {a} or {a, b}, got a table of %d entries", k + 1,
				          len);
			if (len >= 1) {
				lua_rawgeti(L, -1, 1);
				if (!lml_isinteger(L, -1, &a))
					lml_error(L, "range %d: start must be an integer, got %s", k + 1,
					          lml_describe(L, -1, d, sizeof d));
				lua_pop(L, 1);
				b = a;
			}
			if (len == 2) {
				lua_rawgeti(L, -1, 2);
				if (!lml_isinteger(L, -1, &b))
					lml_error(L, "range %d: end must be an integer, got %s", k + 1,
					          lml_describe(L, -1, d, sizeof d));
				lua_pop(L, 1);
			}
			int64_t a0 = a > 0 ? a - 1 : a + size, b0 = b > 0 ? b - 1 : b + size;
			if (b == 0) b0 = -1; /* {1, 0}: the empty range {a, a-1} at the start */
			if (len > 0 && (a == 0 || a0 < 0 || a0 > size || (a0 == size && len == 1)))
				lml_error(L, "range %d: start %lld is out of range for dim %d of size %lld", k + 1,
				          (long long)a, k + 1, (long long)size);
			if (len > 0 && (b0 < a0 - 1 || b0 >= size))
				lml_error(L, "range %d: end %lld is out of range for dim %d of size %lld (start "
				          "%lld)", k + 1, (long long)b, k + 1, (long long)size, (long long)a);
			if (len > 0) steps[nsteps++] = (step){0, cur, a0, b0 - a0 + 1};
			cur++;
		} else {
			lml_error(L, "index %d must be an integer or a range {a, b}, got %s", k + 1,
			          lml_describe(L, -1, d, sizeof d));
		}
		lua_pop(L, 1);
	}
	return nsteps;
}

/* Pushes a box holding the view of t that key designates. */
static lm_tensor *push_view(lua_State *L, lm_tensor *t, int key)
{
	step steps[LM_MAX_DIMS];
	int n = parse_key(L, t, key, steps);
	lm_tensor **box = lml_newbox(L);
	lm_tensor *cur = lm_tensor_retain(t);
	for (int k = 0; k < n; k++) {
		lm_tensor *next = steps[k].select ? lm_select(cur, steps[k].dim, steps[k].a)
		                                  : lm_narrow(cur, steps[k].dim, steps[k].a, steps[k].len);
		lm_tensor_release(cur);
		if (!next) lml_core_error(L);
		cur = next;
	}
	if (n == 0) { /* x[{}]: a view of the whole tensor (recorded, unlike detach) */
		lm_tensor_release(cur);
		cur = lm_tensor_ndim(t) > 0 ? lm_narrow(t, 0, 0, lm_tensor_shape(t)[0])
		                            : lm_squeeze(t, LM_ALL_DIMS);
		if (!cur) lml_core_error(L);
	}
	lml_setbox(L, box, cur);
	return cur;
}

int lml_index_get(lua_State *L, lm_tensor *t, int key)
{
	push_view(L, t, key);
	return 1;
}

int lml_index_set(lua_State *L, lm_tensor *t, int key, int value)
{
	int tp = lua_type(L, value);
	lm_tensor *src = NULL;
	if (tp == LUA_TNUMBER)
		;
	else if ((src = lml_totensor(L, value)) == NULL)
		lml_typeerror(L, value, "the value", "a number or a tensor");
	double v = tp == LUA_TNUMBER ? lua_tonumber(L, value) : 0;
	if (!src) lml_checkstore(L, value, lm_tensor_dtype(t), "the value", NULL);
	if (!src) src = lml_exact_integer(L, value, lm_tensor_dtype(t)); /* past 2^53 */
	lm_tensor *view = push_view(L, t, key);
	if (src ? lm_copy_(view, src) : lm_fill_(view, v)) lml_core_error(L);
	return 0;
}

static const luaL_Reg methods[] = {
	{"as_strided", t_as_strided},
	{"view", t_view},
	{"reshape", t_reshape},
	{"t", t_t},
	{"transpose", t_transpose},
	{"permute", t_permute},
	{"narrow", t_narrow},
	{"select", t_select},
	{"expand", t_expand},
	{"expand_as", t_expand_as},
	{"squeeze", t_squeeze},
	{"unsqueeze", t_unsqueeze},
	{"flatten", t_flatten},
	{"contiguous", t_contiguous},
	{"clone", t_clone},
	{"detach", t_detach},
	{NULL, NULL},
};

void lml_open_view(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	lml_setfuncs(L, m, "Tensor:", methods, 0);
	/* the functional forms lm.reshape(x, ...), lm.transpose(x, a, b), ... */
	lml_setfuncs(L, lm, "lm.", methods, 0);
}
