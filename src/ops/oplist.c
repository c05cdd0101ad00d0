/*
 * oplist.c — the op list (oplist.h) as data: one lmi_op_info per op, with the fields of its
 * parameter struct, made by the same X-macros as the enum and the structs, so nothing here can
 * drift from the list. Read next: oplist.h, ../autograd/graph.h.
 */
#include <string.h>

#include "autograd/graph.h"
#include "backend/backend.h"
#include "core/lmi.h"
#include "lumen/autograd.h"
#include "ops/oplist.h"

/* The public enums index into the list: the unary ops from LMI_OP_EXP, the binary ones from
 * LMI_OP_ADD, the reductions from LMI_OP_SUM, in the enums' order. */
_Static_assert(LMI_OP_SQUARE - LMI_OP_EXP == LM_SQUARE - LM_EXP, "lm_unop and the list agree");
_Static_assert(LMI_OP_RELU - LMI_OP_EXP == LM_RELU, "lm_unop and the list agree");
_Static_assert(LMI_OP_REMAINDER - LMI_OP_ADD == LM_REMAINDER, "lm_binop and the list agree");
_Static_assert(LMI_OP_GE - LMI_OP_ADD == LM_GE, "lm_binop and the list agree");
_Static_assert(LMI_OP_NORM - LMI_OP_SUM == LM_NORM, "lm_redop and the list agree");
_Static_assert(LMI_OP_ARGMAX - LMI_OP_SUM == LM_ARGMAX, "lm_redop and the list agree");

/* ---------------------------------------------------------------- the parameter fields */

#define LMI_PF(s, type, field, kind) {#field, LMI_PK_##kind, offsetof(lmi_p_##s, field), 0, 0},
#define LMI_PA(s, field, cap, count, mult)                                                          \
	{#field, LMI_PK_INTS, offsetof(lmi_p_##s, field), offsetof(lmi_p_##s, count), mult},
#define FIELDS_(name, fields) static const lmi_param_field fields_##name[] = {fields{NULL, 0, 0, 0, 0}};
LMI_PARAMS(FIELDS_)
#undef FIELDS_
#undef LMI_PF
#undef LMI_PA

/* ---------------------------------------------------------------- the rows */

/* The slot column: a device loop (LMI_BE_OP_*), or the copies and views every device has. */
#define SLOT_ENUM_(name) SLOT_##name = LMI_BE_OP_##name,
enum { LMI_BACKEND_OPS(SLOT_ENUM_) SLOT_copy = LMI_SLOT_COPY, SLOT_view = LMI_SLOT_VIEW, SLOT_ops = LMI_SLOT_OPS };
#undef SLOT_ENUM_

#define ROW_(ID, name, grad, params, arity, slot, rule, bw)                                        \
	[LMI_OP_##ID] = {name,      grad,       arity,           SLOT_##slot,                            \
	                 rule,      lmi_bw_##bw, #params,        fields_##params,                        \
	                 (int)(sizeof fields_##params / sizeof fields_##params[0]) - 1},
const lmi_op_info lmi_ops[LMI_OP_COUNT] = {LMI_OPS(ROW_)};
#undef ROW_

lm_status lmi_bw_none(lmi_node *n, const lm_tensor *gout, lm_tensor **gin)
{
	(void)gout;
	(void)gin;
	return lmi_fail(LM_ERR_INTERNAL, "backward: %s has no backward rule", lmi_ops[n->op].name);
}

int lmi_op_find(const char *name)
{
	for (int i = 0; i < LMI_OP_COUNT; i++)
		if (strcmp(lmi_ops[i].name, name) == 0) return i;
	return -1;
}

const char *lmi_dtype_rule_text(lmi_dtype_rule r)
{
	switch (r) {
	case LMI_DT_SAME: return "any dtype; the result keeps it";
	case LMI_DT_FLOATFN: return "any dtype; integers compute in float32";
	case LMI_DT_FLOAT: return "float32 and float64";
	case LMI_DT_COMPARE: return "any dtype; the result is uint8";
	case LMI_DT_INDEX: return "any dtype; the result is int64 positions";
	case LMI_DT_WIDEN: return "any dtype; integers accumulate in int64";
	case LMI_DT_INDICES: return "int32 and int64 indices";
	case LMI_DT_QUANT: return "uint8 x int8 -> int32; float32 x q8_0 / q4_0 -> float32";
	default: return "?";
	}
}

/* ---------------------------------------------------------------- the public table (lumen/ops.h) */

int lm_op_count(void) { return LMI_OP_COUNT; }

lm_status lm_op_describe(int i, lm_op_desc *out)
{
	if (!out) return lmi_fail(LM_ERR_ARG, "op_describe: the result pointer is NULL");
	if (i < 0 || i >= LMI_OP_COUNT)
		return lmi_fail(LM_ERR_INDEX, "op_describe: op %d of %d", i + 1, (int)LMI_OP_COUNT);
	const lmi_op_info *o = &lmi_ops[i];
	memset(out, 0, sizeof *out);
	out->name = o->name;
	out->grad_name = o->grad_name;
	out->arity = o->arity;
	out->loop = o->slot == LMI_SLOT_COPY ? "copy" : o->slot == LMI_SLOT_VIEW ? "view" : o->slot == LMI_SLOT_OPS ? "ops"
	                                                                                   : lmi_be_op_name((lmi_be_op)o->slot);
	out->dtypes = lmi_dtype_rule_text(o->rule);
	for (int k = 0; k < o->nfields && out->nparams < LM_OP_MAX_PARAMS; k++)
		if (o->fields[k].kind != LMI_PK_LOOP) out->params[out->nparams++] = o->fields[k].name;
	return LM_OK;
}

/* The dtype op i's loop runs in for inputs of dtype dt, or -1 when the op refuses dt. */
static int loop_dtype(const lmi_op_info *o, lm_dtype dt)
{
	bool fl = lm_dtype_is_float(dt);
	switch (o->rule) {
	case LMI_DT_FLOATFN: return fl ? (int)dt : (int)LM_FLOAT32;
	case LMI_DT_FLOAT: return fl ? (int)dt : -1;
	case LMI_DT_INDICES: return dt == LM_INT32 || dt == LM_INT64 ? (int)dt : -1;
	case LMI_DT_QUANT: /* int_mm: uint8 codes (times int8); linear_blocks: a float input, in float32 */
		if (o == &lmi_ops[LMI_OP_INT_MM]) return dt == LM_UINT8 ? (int)dt : -1;
		return fl ? (int)LM_FLOAT32 : -1;
	default: return (int)dt;
	}
}

int lm_op_supported(int i, lm_device d, lm_dtype dt)
{
	if (i < 0 || i >= LMI_OP_COUNT || d < 0 || d >= LMI_DEVICE_COUNT || dt < 0 || dt >= LM_DTYPE_COUNT) return 0;
	const lmi_backend *b = lmi_backend_for(d);
	if (!b && d == LM_CUDA) b = lmi_cuda_backend_table(); /* what it implements, loaded or not */
	if (!b && d == LM_OPENCL) b = &lmi_opencl_backend;
	if (!b) return -1;
	if (lmi_is_block(dt)) return 0; /* blocks: conversions, linear weights and files only */
	if (d != LM_CPU && lmi_dtypes[dt].compute_as != dt) return 0; /* int8, float16, bfloat16: CPU only */
	int ldt = loop_dtype(&lmi_ops[i], dt);
	if (ldt < 0) return 0;
	static const lmi_params none;
	lmi_exec e = {.op = (lmi_op)i, .p = &none, .fname = "ops", .dtype = (lm_dtype)ldt}; /* no tensors */
	if (b->supports_node(&e)) return 1;
	/* int8, float16, bfloat16: CPU tensors only, in their compute_as loops (ops/common.c) */
	e.dtype = lmi_dtypes[ldt].compute_as;
	return d == LM_CPU && e.dtype != (lm_dtype)ldt && b->supports_node(&e) ? 1 : 0;
}

/* ---------------------------------------------------------------- parameters as lm_param */

int lmi_param_count(const lmi_op_info *o)
{
	int k = 0;
	for (int f = 0; f < o->nfields; f++) k += o->fields[f].kind != LMI_PK_LOOP;
	return k;
}

void lmi_param_read(const lmi_op_info *o, const lmi_params *p, int j, lm_param *out)
{
	const lmi_param_field *f = o->fields;
	for (int seen = -1;; f++) /* the j-th shown field */
		if (f->kind != LMI_PK_LOOP && ++seen == j) break;
	const char *base = (const char *)p;
	memset(out, 0, sizeof *out);
	out->name = f->name;
	switch (f->kind) {
	case LMI_PK_FLOAT:
		out->kind = LM_PARAM_FLOAT;
		memcpy(&out->f, base + f->offset, sizeof out->f);
		break;
	case LMI_PK_BOOL: {
		bool b;
		memcpy(&b, base + f->offset, sizeof b);
		out->kind = LM_PARAM_BOOL;
		out->i = b;
		break;
	}
	case LMI_PK_INTS: {
		int64_t count;
		memcpy(&count, base + f->count_of, sizeof count);
		count *= f->mult;
		out->kind = LM_PARAM_INTS;
		out->n = count < 0 ? 0 : count > 2 * LM_MAX_DIMS ? 2 * LM_MAX_DIMS : (int)count;
		memcpy(out->ints, base + f->offset, (size_t)out->n * sizeof out->ints[0]);
		break;
	}
	default:
		out->kind = f->kind == LMI_PK_DIM      ? LM_PARAM_DIM
		            : f->kind == LMI_PK_INDEX  ? LM_PARAM_INDEX
		            : f->kind == LMI_PK_DEVICE ? LM_PARAM_DEVICE
		                                       : LM_PARAM_INT;
		memcpy(&out->i, base + f->offset, sizeof out->i);
		break;
	}
}
