/*
 * ops_table.c — `lumen --ops`: the engine's op table as students read it. One line per op of the
 * one list of ops (src/ops/oplist.h, through lm_op_describe): its name, its backward rule, the
 * device loop it runs, and the input dtypes each device runs it for — the CPU's answer and what
 * the CUDA backend implements (with or without a GPU here) and what the OpenCL device implements,
 * so the gaps are in plain sight.
 * lm.ops() (src/lua/sys.c) gives the same as a table. Read next: src/ops/oplist.h.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "lumen/cuda.h"
#include "lumen/opencl.h"
#include "lumen/ops.h"

static const char *const short_dt[LM_DTYPE_COUNT] = {
	[LM_FLOAT32] = "f32", [LM_FLOAT64] = "f64", [LM_INT32] = "i32", [LM_INT64] = "i64", [LM_UINT8] = "u8",
	[LM_INT8] = "i8", [LM_FLOAT16] = "f16", [LM_BFLOAT16] = "bf16", [LM_Q8_0] = "q8_0", [LM_Q4_0] = "q4_0",
};

/* "all", "f32 f64", "-" (none), or "(not built)". */
static const char *device_dtypes(int op, lm_device d, char *buf, size_t cap)
{
	int n = 0, k = 0, live = 0; /* live: the dtypes a tensor on d may have */
	buf[0] = '\0';
	for (int dt = 0; dt < LM_DTYPE_COUNT; dt++) {
		const lm_dtype_traits *tr = lm_dtype_traits_of((lm_dtype)dt);
		if (tr->block_size > 1 || (d != LM_CPU && (int)tr->compute_as != dt)) continue;
		live++;
		int s = lm_op_supported(op, d, (lm_dtype)dt);
		if (s < 0) return "(not built)";
		if (s == 0) continue;
		k += snprintf(buf + k, cap - (size_t)k, "%s%s", n ? " " : "", short_dt[dt]);
		n++;
	}
	return n == live ? "all" : n == 0 ? "-" : buf;
}

void app_print_ops(FILE *out)
{
	int count = lm_op_count(), with_bw = 0, cuda_gaps = 0;
	lm_op_desc o;
	for (int i = 0; i < count; i++)
		if (lm_op_describe(i, &o) == LM_OK && o.grad_name) with_bw++;
	fprintf(out, "Lumen's ops: %d, %d with a backward rule (src/ops/oplist.h is the list).\n", count, with_bw);
	fprintf(out, "The cpu, cuda and opencl columns: the input dtypes each device runs the op for ('all': f32 f64\n"
	             "i32 i64 u8 i8 f16 bf16 on the cpu, where i8, f16 and bf16 run in the i32 and f32 loops and are\n"
	             "rounded once into the result; the first five on cuda and opencl). The block types q8_0 and q4_0\n"
	             "are no op's input: they convert (x:float()), serve as F.linear weights and are saved in files.\n"
	             "cuda is what the CUDA backend implements; ");
	if (lm_cuda_is_available()) fprintf(out, "a GPU is here: %s.\n", lm_cuda_device_name());
	else fprintf(out, "no GPU runs it here:\n  %.300s\n", lm_cuda_unavailable_reason());
	fprintf(out, "opencl is what the OpenCL device implements (an op it lacks fails naming itself; move the\n"
	             "tensor with :cpu()); ");
	if (lm_opencl_is_available()) fprintf(out, "it runs here on %s.\n\n", lm_opencl_device_name());
	else fprintf(out, "none runs it here:\n  %.300s\n\n", lm_opencl_unavailable_reason());
	fprintf(out, "%-33s %-37s %-22s %-15s %-15s %s\n", "op", "backward", "loop", "cpu", "cuda", "opencl");
	int ocl_gaps = 0;
	for (int i = 0; i < count; i++) {
		if (lm_op_describe(i, &o)) continue;
		char cpu[64], cuda[64], ocl[64];
		const char *c = device_dtypes(i, LM_CPU, cpu, sizeof cpu);
		const char *g = device_dtypes(i, LM_CUDA, cuda, sizeof cuda);
		const char *k = device_dtypes(i, LM_OPENCL, ocl, sizeof ocl);
		if (strcmp(c, g) != 0) cuda_gaps++;
		if (strcmp(c, k) != 0) ocl_gaps++;
		fprintf(out, "%-33s %-37s %-22s %-15s %-15s %s\n", o.name, o.grad_name ? o.grad_name : "-", o.loop, c, g, k);
	}
	fprintf(out, "\nloop 'copy': the device's own copies (every device has them); 'view': geometry only, no loop.\n"
	             "%d op%s run%s on fewer dtypes on cuda than on the cpu, %d on opencl: an op a device lacks fails\n"
	             "naming the op, the device and the dtype. lm.ops() gives this table to Lua; :help lm.ops.\n",
	        cuda_gaps, cuda_gaps == 1 ? "" : "s", cuda_gaps == 1 ? "s" : "", ocl_gaps);
}
