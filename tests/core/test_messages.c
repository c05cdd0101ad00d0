/*
 * test_messages.c — every message counts from 1: a sweep of the op table's error paths.
 *
 * The core counts dims from 0 and its messages count from 1, as the Lua API does (lumen/core.h,
 * "Errors"): "dim 1" is the first dim, "tensor 1" the first of a list, "position [1, 1]" the first
 * element. For every row of the op table (tests/optable*.c), a valid case is generated and then
 * broken one way at a time: each parameter (dims, counts, bounds) set out of range, each input
 * replaced by one of another shape, another number of dims, a 0-d tensor or another dtype. Every
 * failure's message must be free of 0-based phrases ("dim 0", "tensor 0", "index 0",
 * "position [0", ...): the perturbations never pass a 0 that a message could quote back.
 * The Lua side (the bindings) has its own sweep: tests/lua/test_messages.lua.
 */
#include <ctype.h>
#include <stdio.h>

#include "optable.h"
#include "testutil.h"

/* The 0-based phrase in msg, or NULL: WORD 0 (not followed by a digit or '.'), and "[0" after
 * position/element. */
static const char *zero_based(const char *msg)
{
	static const char *const words[] = {"dim", "dims", "tensor", "input", "inputs", "index",
	                                    "element", "position", "argument", "operand", "entry",
	                                    "pair", "row", "column", "class", "target", NULL};
	for (int w = 0; words[w]; w++) {
		size_t n = strlen(words[w]);
		for (const char *p = strstr(msg, words[w]); p; p = strstr(p + 1, words[w])) {
			if (p > msg && isalnum((unsigned char)p[-1])) continue;
			const char *q = p + n;
			if (q[0] == ' ' && q[1] == '0' && !isdigit((unsigned char)q[2]) && q[2] != '.')
				return p;
			if (q[0] == ' ' && q[1] == '[' && q[2] == '0' && (w == 6 || w == 7)) return p;
		}
	}
	return NULL;
}

typedef struct sweep {
	int calls, errors, distinct;
	char seen[512][96]; /* distinct messages, digits removed (error paths, not values) */
	char bad[1024];
} sweep;

static void note(sweep *s, const ot_case *c, const char *how)
{
	const char *m = lm_last_error();
	s->errors++;
	char key[96];
	size_t k = 0;
	for (const char *p = m; *p && k < sizeof key - 1; p++)
		if (!isdigit((unsigned char)*p)) key[k++] = *p;
	key[k] = '\0';
	int found = 0;
	for (int i = 0; i < s->distinct && !found; i++) found = strcmp(s->seen[i], key) == 0;
	if (!found && s->distinct < 512) snprintf(s->seen[s->distinct++], sizeof s->seen[0], "%s", key);
	const char *z = zero_based(m);
	if (z && !s->bad[0])
		snprintf(s->bad, sizeof s->bad, "%s (%s): \"%s\" counts from 0 at \"%.12s\"", c->desc, how,
		         m, z);
}

static void run(sweep *s, const ot_case *c, const char *how)
{
	s->calls++;
	lm_clear_error();
	lm_tensor *r = c->op->run(c);
	if (r) {
		lm_tensor_release(r);
		return;
	}
	if (lm_last_status() != LM_OK) note(s, c, how);
}

/* A tensor like t (its dtype) of another shape: kind 0: one more element in the last dim; 1: an
 * extra leading dim of 3; 2: 0-d. Ones, so that index inputs stay valid indices. */
static lm_tensor *reshaped(const lm_tensor *t, int kind)
{
	int64_t shape[LM_MAX_DIMS];
	int nd = lm_tensor_ndim(t);
	for (int i = 0; i < nd; i++) shape[i] = lm_tensor_shape(t)[i];
	if (kind == 0) {
		if (nd == 0) return NULL;
		shape[nd - 1] += 1;
	} else if (kind == 1) {
		if (nd == LM_MAX_DIMS) return NULL;
		memmove(shape + 1, shape, sizeof shape[0] * (size_t)nd);
		shape[0] = 3;
		nd++;
	} else {
		nd = 0;
	}
	return lm_ones(nd, shape, lm_tensor_dtype(t));
}

static void sweep_case(sweep *s, ot_case *c)
{
	static const double params[] = {5, -7, 9};
	for (int j = 0; j < 4; j++)
		for (size_t v = 0; v < sizeof params / sizeof params[0]; v++) {
			double keep = c->p[j];
			c->p[j] = params[v];
			run(s, c, "a parameter out of range");
			c->p[j] = keep;
		}
	for (int k = 0; k < c->nin; k++) {
		lm_tensor *orig = c->in[k];
		if (!orig) continue;
		for (int kind = 0; kind < 4; kind++) {
			lm_tensor *t;
			if (kind < 3) {
				t = reshaped(orig, kind);
			} else {
				lm_dtype dt = lm_dtype_is_float(lm_tensor_dtype(orig)) ? LM_INT64 : LM_FLOAT32;
				t = lm_to_dtype(orig, dt);
			}
			if (!t) continue;
			c->in[k] = t;
			run(s, c, kind == 0 ? "a longer last dim" : kind == 1 ? "an extra dim" : kind == 2 ? "0-d"
			                                                            : "another dtype");
			c->in[k] = orig;
			lm_tensor_release(t);
		}
	}
}

static void test_op_table_messages_count_from_1(void **state)
{
	(void)state;
	int count;
	const ot_op *ops = ot_all(&count);
	static sweep s; /* large: not on the stack */
	memset(&s, 0, sizeof s);
	for (int i = 0; i < count; i++) {
		const ot_op *op = &ops[i];
		for (int dt = 0; dt < LM_DTYPE_COUNT; dt++) {
			if (!(op->dtypes & (1u << dt))) continue;
			for (int rep = 0; rep < 2; rep++) {
				ot_rng r = {0x5eedull * (uint64_t)(i + 1) + (uint64_t)(dt * 7 + rep)};
				ot_case c;
				memset(&c, 0, sizeof c);
				op->gen(op, &r, (lm_dtype)dt, OT_CONTIGUOUS, &c);
				sweep_case(&s, &c);
				ot_case_free(&c);
			}
		}
	}
	fprintf(stderr, "op table sweep: %d rows, %d calls, %d failed, %d distinct messages\n", count,
	        s.calls, s.errors, s.distinct);
	if (s.bad[0]) fail_msg("%s", s.bad);
	assert_true(s.distinct >= 40); /* the sweep reaches the error paths it is meant to */
}

/* The phrases the sweep looks for are found where they are (the check itself is checked). */
static void test_the_check_finds_0_based_phrases(void **state)
{
	(void)state;
	assert_non_null(zero_based("cat: tensor 0 has shape [2, 4]"));
	assert_non_null(zero_based("add: shapes [2] and [4] (dim 0: 2 vs 4)"));
	assert_non_null(zero_based("gather: index 7 at position [0, 1]"));
	assert_null(zero_based("cat: tensor 1 has shape [0, 4] (dim 10: 2 vs 3)"));
	assert_null(zero_based("pad: value 0.5, dim 2 of size 0"));
	assert_null(zero_based("sum: cannot reduce over an empty dim of shape [0, 4]"));
}

/* The examples the issue quoted (1-based now), and the range messages of dims and indices. */
static void test_messages_quoted_by_the_issue(void **state)
{
	(void)state;
	lm_tensor *a = lm_ones(2, (int64_t[]){2, 3}, LM_FLOAT32), *b = lm_ones(2, (int64_t[]){2, 4}, LM_FLOAT32);
	lm_tensor *c = lm_zeros(2, (int64_t[]){4, 3}, LM_FLOAT32);
	EXPECT_NULL(lm_cat(2, (lm_tensor *[]){a, b}, 0), LM_ERR_SHAPE,
	            "cat: tensor 2 has shape [2, 4] but tensor 1 has shape [2, 3]: sizes must match except "
	            "in dim 1 (dim 2: 4 vs 3)");
	EXPECT_NULL(lm_add(a, c), LM_ERR_SHAPE, "(dim 1: 2 vs 4)");
	EXPECT_NULL(lm_select(a, 0, 2), LM_ERR_INDEX, "select: index 3 is out of range for dim 1 of size 2");
	EXPECT_NULL(lm_select(a, -1, -4), LM_ERR_INDEX, "select: index -4 is out of range for dim 2 of size 3");
	EXPECT_NULL(lm_expand(a, 2, (int64_t[]){4, 3}), LM_ERR_SHAPE, "(dim 1: 2 vs 4)");
	EXPECT_NULL(lm_stack(2, (lm_tensor *[]){a, b}, 0), LM_ERR_SHAPE, "tensor 2 has shape [2, 4] but tensor 1");
	EXPECT_NULL(lm_where(a, a, c), LM_ERR_SHAPE, "(dim 1: 2 vs 4)");
	EXPECT_NULL(lm_maximum(a, c), LM_ERR_SHAPE, "(dim 1: 2 vs 4)");
	EXPECT_STATUS(lm_binary_(LM_ADD, a, c), LM_ERR_SHAPE, "(dim 1: 2 vs 4)");
	lm_tensor *idx = lm_zeros(2, (int64_t[]){3, 3}, LM_INT64);
	EXPECT_NULL(lm_gather(a, 1, idx), LM_ERR_SHAPE, "larger than the input [2, 3] at dim 1 (3 > 2)");
	EXPECT_NULL(lm_sum(a, 2, false), LM_ERR_INDEX, "sum: dim 3 is out of range for a 2-d tensor "
	            "(expected 1..2 or -2..-1)");
	lm_tensor *objs[] = {a, b, c, idx};
	for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) lm_tensor_release(objs[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		LEAK_TEST(test_op_table_messages_count_from_1),
		LEAK_TEST(test_the_check_finds_0_based_phrases),
		LEAK_TEST(test_messages_quoted_by_the_issue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
