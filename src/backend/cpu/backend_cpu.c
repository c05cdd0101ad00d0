/*
 * backend_cpu.c — the CPU's device table (../backend.h): every slot, filled with the loops of this
 * directory (OpenMP, the SIMD path chosen at run time, OpenBLAS).
 *
 * The CPU runs every op on every dtype the ops layer sends it (the ops refuse the dtypes an op
 * does not take before they dispatch), so supports_op answers yes for every slot.
 * Read next: ewise.c, reduce.c, matmul.c.
 */
#include "backend/backend.h"
#include "backend/cpu/axpy.h"
#include "backend/cpu/cpu_move.h"
#include "backend/cpu/nn.h"
#include "backend/cpu/simd.h"
#include "backend/cpu/train.h"

static bool supports_op(lmi_be_op op, lm_dtype dt)
{
	return op >= 0 && op < LMI_BE_OP_COUNT && dt >= 0 && dt < LM_DTYPE_COUNT && lmi_dtypes[dt].compute_as == dt;
}

static const lmi_loops cpu_loops;

/* Every node in the five native dtypes: the CPU has every loop for them (the ops refuse what an op
 * does not take); int8, float16 and bfloat16 run in their compute_as dtype (ops/common.c). */
static bool supports_node(const lmi_exec *e)
{
	return lmi_dtypes[e->dtype].compute_as == e->dtype;
}

static lm_status compute(const lmi_exec *e)
{
	return lmi_loops_compute(&cpu_loops, e);
}

static const lmi_loops cpu_loops = {
	.supports_op = supports_op,
	.unary = lmi_cpu_unary,
	.binary = lmi_cpu_binary,
	.where = lmi_cpu_where,
	.add_scaled = lmi_cpu_add_scaled,
	.fused = lmi_cpu_fused,
	.reduce_dims = lmi_cpu_reduce_dims,
	.count_correct = lmi_cpu_count_correct,
	.matmul = lmi_cpu_matmul,
	.matmul_batch_sum = lmi_cpu_matmul_batch_sum,
	.softmax = lmi_cpu_softmax,
	.gelu = lmi_cpu_gelu,
	.nll = lmi_cpu_nll,
	.nll_grad = lmi_cpu_nll_grad,
	.max_pool2d = lmi_cpu_max_pool2d,
	.winograd_conv = lmi_cpu_winograd_conv,
	.winograd_conv_backward = lmi_cpu_winograd_conv_backward,
	.im2col = lmi_cpu_im2col,
	.col2im = lmi_cpu_col2im,
	.im2col_nhwc = lmi_cpu_im2col_nhwc,
	.index_select = lmi_cpu_index_select,
	.gather = lmi_cpu_gather,
	.scatter_add = lmi_cpu_scatter_add,
	.one_hot = lmi_cpu_one_hot,
	.sort = lmi_cpu_sort,
	.cumsum = lmi_cpu_cumsum,
	.triangle = lmi_cpu_triangle,
	.repeat_fill = lmi_cpu_repeat_fill,
	.sgd_step = lmi_cpu_sgd_step,
	.adam_step = lmi_cpu_adam_step,
	.rmsprop_step = lmi_cpu_rmsprop_step,
	.crop_batch = lmi_cpu_crop_batch,
	.int_mm = lmi_cpu_int_mm,
	.linear_blocks = lmi_cpu_linear_blocks,
	.lstm_cell = lmi_cpu_lstm_cell,
	.gru_cell = lmi_cpu_gru_cell,
	.attention = lmi_cpu_attention,
	.flip_batch = lmi_cpu_flip_batch,
};

const lmi_backend lmi_cpu_backend = {
	.version = LMI_BACKEND_VERSION,
	.name = "cpu",
	.device = LM_CPU,
	.supports_node = supports_node,
	.compute = compute,
};

const lmi_simd_table *lmi_simd_for(lm_isa isa)
{
	switch (isa) {
	case LM_ISA_SCALAR: return &lmi_simd_scalar;
#ifdef LUMEN_SIMD_X86
	case LM_ISA_AVX2: return &lmi_simd_avx2;
	case LM_ISA_AVX512: return &lmi_simd_avx512;
#endif
	default: return NULL;
	}
}
