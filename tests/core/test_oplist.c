/*
 * test_oplist.c — the one list of ops (src/ops/oplist.h) is whole and true: names unique, a
 * backward rule exactly where a grad_fn name is, every parameter field inside its struct, the
 * public description (lm_op_describe, lm_op_supported) agreeing with the rows, and every op
 * tested: by a row of the op table (tests/optable*.c: values on random shapes, layouts and
 * dtypes, and gradcheck) under its own name, or — for the few the table cannot run — by the test
 * file named below, which must exist and mention it. A new op without a test fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "autograd/graph.h"
#include "ops/oplist.h"
#include "optable.h"

static void test_rows(void **state)
{
	(void)state;
	int with_bw = 0;
	for (int i = 0; i < LMI_OP_COUNT; i++) {
		const lmi_op_info *o = &lmi_ops[i];
		assert_non_null(o->name);
		for (int j = 0; j < i; j++)
			if (strcmp(lmi_ops[j].name, o->name) == 0) fail_msg("op name '%s' twice", o->name);
		if ((o->grad_name != NULL) != (o->backward != lmi_bw_none))
			fail_msg("%s: a grad_fn name without a backward rule, or the reverse", o->name);
		with_bw += o->grad_name != NULL;
		assert_int_equal(lmi_op_find(o->name), i);
		assert_true(o->arity == -1 || (o->arity >= 1 && o->arity <= 5));
		assert_true(o->rule >= 0 && o->rule < LMI_DT_RULE_COUNT);
		assert_true(o->slot == LMI_SLOT_COPY || o->slot == LMI_SLOT_VIEW || o->slot == LMI_SLOT_OPS ||
		            (o->slot >= 0 && o->slot < LMI_BE_OP_COUNT));
		/* the list's loop and the devices' (loops.c) agree */
		assert_int_equal(o->slot >= 0 ? o->slot : LMI_BE_OP_COUNT, lmi_loop_of((lmi_op)i));
		for (int f = 0; f < o->nfields; f++) {
			const lmi_param_field *pf = &o->fields[f];
			assert_true(pf->offset < sizeof(lmi_params));
			if (pf->kind == LMI_PK_INTS) assert_true(pf->count_of < sizeof(lmi_params) && pf->mult >= 1);
		}
		lm_op_desc d;
		assert_int_equal(lm_op_describe(i, &d), LM_OK);
		assert_string_equal(d.name, o->name);
		int shown = 0;
		for (int f = 0; f < o->nfields; f++) shown += o->fields[f].kind != LMI_PK_LOOP;
		assert_int_equal(d.nparams, shown);
		/* the CPU runs every op on float32 (one_hot: on its indices) */
		assert_int_equal(lm_op_supported(i, LM_CPU, o->rule == LMI_DT_INDICES ? LM_INT64
		                                             : i == LMI_OP_INT_MM   ? LM_UINT8
		                                                                    : LM_FLOAT32), 1);
	}
	assert_int_equal(lm_op_count(), LMI_OP_COUNT);
	assert_true(with_bw > 60);
	lm_op_desc d;
	assert_int_equal(lm_op_describe(LMI_OP_COUNT, &d), LM_ERR_INDEX);
	/* the dtype rule: a float-only op refuses int32 on every device; exp of int32 runs */
	assert_int_equal(lm_op_supported(LMI_OP_SOFTMAX, LM_CPU, LM_INT32), 0);
	assert_int_equal(lm_op_supported(LMI_OP_EXP, LM_CPU, LM_INT32), 1);
	assert_int_equal(lm_op_supported(LMI_OP_ONE_HOT, LM_CPU, LM_FLOAT32), 0);
	assert_int_equal(lm_op_supported(LMI_OP_ONE_HOT, LM_CPU, LM_INT64), 1);
	/* the GPU's column is what its backend implements, with or without a GPU */
	assert_int_equal(lm_op_supported(LMI_OP_COUNT_CORRECT, LM_CUDA, LM_FLOAT32), 0);
	assert_int_equal(lm_op_supported(LMI_OP_MATMUL, LM_CUDA, LM_FLOAT32), 1);
}

/* The ops the op table does not run, and the test that covers each (it must mention the needle). */
static const struct {
	const char *op, *file, *needle, *why;
} elsewhere[] = {
	{"view", "tests/lua/test_views.lua", ":view(", "a view of the same storage (the table runs reshape)"},
	{"add_scalar_", "tests/lua/test_math.lua", ":add_(2)", "the in-place number fast path"},
	{"mul_scalar_", "tests/lua/test_math.lua", ":mul_(4)", "the in-place number fast path"},
	{"div_scalar_", "tests/lua/test_math.lua", ":div_(2)", "the in-place number fast path"},
	{"gelu_backward", "tests/optable_nn.c", "\"F.gelu\"", "the loop of gelu's backward: its row's gradcheck"},
	{"mm", "tests/lua/test_math.lua", ":mm(", "matmul of two matrices (the table runs matmul)"},
	{"to_device", "tests/optable_run.c", "lm_to_device", "every row placed on each device"},
	{"count_correct", "tests/lua/test_reduce.lua", "count_correct", "an accuracy count, not a tensor"},
	{"matmul_batch_sum", "tests/optable_core.c", "\"matmul\"", "a loop of matmul's backward: its row's gradcheck"},
	{"nll_grad", "tests/optable_nn.c", "\"F.nll_loss\"", "a loop of nll_loss's backward: its row's gradcheck"},
	{"conv2d_winograd_backward", "tests/optable_nn.c", "F.conv2d_winograd", "gradcheck of conv2d_winograd"},
	{"binary_cross_entropy_with_logits", "tests/lua/test_nn_torch.lua", "with_logits", "against PyTorch"},
	{"sgd_step", "tests/core/test_devices.c", "sgd_step", "an in-place update"},
	{"adam_step", "tests/core/test_devices.c", "adam_step", "an in-place update"},
	{"rmsprop_step", "tests/core/test_devices.c", "rmsprop_step", "an in-place update"},
	{"crop_batch", "tests/core/test_devices.c", "crop_batch", "a batch augmentation"},
	{"flip_batch", "tests/core/test_devices.c", "flip_batch", "a batch augmentation"},
	{"int_mm", "tests/lua/test_quant.lua", "quant.int_mm", "integer codes, exact: against int64 matmul"},
	{"lstm_cell", "tests/lua/test_rnn.lua", "F.lstm_cell", "nn.LSTM's fused step: against the formula, PyTorch and gradcheck"},
	{"lstm_cell_backward", "tests/lua/test_rnn.lua", "gradcheck", "the loop of lstm_cell's backward: its gradchecks"},
	{"gru_cell", "tests/lua/test_rnn.lua", "F.gru_cell", "nn.GRU's fused step: against the formula, PyTorch and gradcheck"},
	{"gru_cell_backward", "tests/lua/test_rnn.lua", "gradcheck", "the loop of gru_cell's backward: its gradchecks"},
	{"flash_attention", "tests/lua/test_flash_attention.lua", "F.flash_attention", "against the composed formula, across blocks"},
	{"flash_attention_backward", "tests/lua/test_flash_attention.lua", "gradcheck", "its backward's loop: gradients and gradcheck"},
	{"custom", "tests/lua/test_autograd_function.lua", "lm.autograd.Function", "Lua forward and backward: values, gradcheck, errors"},
	{"linear_blocks", "tests/lua/test_quant.lua", "F.linear(x, wq)", "a block-type weight, within q8_0's bound"},
	{"fused", "tests/lua/test_graph.lua", "fuse: one pass over memory", "fused groups against the nodes one by one, bit for bit"},
};

static bool file_mentions(const char *rel, const char *needle)
{
	const char *root = getenv("LUMEN_SOURCE_DIR");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
	FILE *f = fopen(path, "rb");
	if (!f) return false;
	static char buf[1 << 21];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static void test_every_op_tested(void **state)
{
	(void)state;
	int nrows;
	const ot_op *rows = ot_all(&nrows);
	int missing = 0;
	for (int i = 0; i < LMI_OP_COUNT; i++) {
		const char *name = lmi_ops[i].name;
		bool found = false;
		for (int r = 0; r < nrows && !found; r++) {
			const char *rn = rows[r].name;
			if (strncmp(rn, "F.", 2) == 0) rn += 2; /* the nn rows: F.softmax */
			size_t n = strlen(name);
			/* "sort.values", "max_dim.indices": the row of one result of the op */
			found = strcmp(rn, name) == 0 || (strncmp(rn, name, n) == 0 && rn[n] == '.');
		}
		for (size_t e = 0; e < sizeof elsewhere / sizeof elsewhere[0] && !found; e++) {
			if (strcmp(elsewhere[e].op, name) != 0) continue;
			if (!file_mentions(elsewhere[e].file, elsewhere[e].needle))
				fail_msg("%s: %s was to test it (%s), but it does not mention '%s'", name, elsewhere[e].file,
				         elsewhere[e].why, elsewhere[e].needle);
			found = true;
		}
		if (!found) {
			print_message("op '%s' (src/ops/oplist.h) has no row in the op table and no test named here\n", name);
			missing++;
		}
	}
	assert_int_equal(missing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_every_op_tested),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
