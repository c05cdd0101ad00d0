/*
 * lumen/graph.h — a function's kernels captured as a graph, and that graph run again.
 *
 * A capture (lm_capture_begin .. lm_capture_end) records, on the calling thread, every kernel the
 * engine launches at the top level while it runs: each device node an op hands to its device (the
 * op of the one list of ops, its parameters, its dtype, its input and output tensors), each copy,
 * fill and draw of random numbers. Forward ops, the backward rules autograd runs and the
 * optimizers' updates are all kernels, so a training step is captured whole. Views launch
 * nothing: they appear as the geometry of the values the nodes read.
 *
 * A value is a (storage, geometry, dtype) a node reads or writes; a storage is one of
 *   input  the memory of an input tensor (rebound to the new inputs at each run),
 *   temp   made by a node during the capture (kept, and reused by every run: static memory),
 *   state  memory that existed before the capture and a node writes (a parameter, a gradient),
 *   const  memory that existed before, or was filled by the host (from Lua values) during the
 *          capture, and that nodes only read.
 * A capture breaks (lm_capture_end fails naming the reason and the place) where replaying the
 * kernels would not do what the function did: an input changed in place, a value read on the host
 * and used to compute, a host-filled tensor later changed in place, lm_capture_break.
 *
 * A program (lm_program) is a list of steps over a trace's values: a node of the trace (with
 * inputs that may be other values of the same geometry: what a pass substituted), or a fused group
 * of elementwise nodes run as one kernel in one pass over memory. lm_program_run binds new inputs
 * (same dtype, shape, strides and device as at the capture: the caller's guards), runs the steps
 * and returns the outputs in fresh memory; it counts the kernels it launched and the bytes their
 * operands span. Read next: src/core/capture.c (recording), src/ops/program.c (running),
 * lua/lumen/graph.lua (lm.compile, lm.graph, the passes), docs/graph.md.
 */
#ifndef LUMEN_GRAPH_H
#define LUMEN_GRAPH_H

#include "lumen/autograd.h"
#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lm_capture lm_capture;

/* Writes where the program stands ("model.lua:12") into buf; called at each recorded kernel. */
typedef void (*lm_capture_where_fn)(void *ud, char *buf, size_t cap);

/* Starts a capture on this thread with inputs (their storages become input storages; two inputs
 * sharing memory is LM_ERR_ARG). One capture per thread at a time (LM_ERR_STATE). */
lm_status lm_capture_begin(int ninputs, lm_tensor *const *inputs, lm_capture_where_fn where, void *ud);
/* Ends it: the trace (+1) with outputs as its results, or NULL when the capture broke or an
 * output is not a tensor a node wrote or an input (the error names why and where). */
lm_capture *lm_capture_end(int noutputs, lm_tensor *const *outputs);
/* Ends it, discarding what was recorded (no-op without one). */
void lm_capture_cancel(void);
bool lm_capture_capturing(void);
/* How many kernels the running capture has recorded (-1: none runs). */
int lm_capture_recorded(void);
/* Breaks the running capture (the first reason is kept, with where it happened). */
void lm_capture_break(const char *why);
lm_capture *lm_capture_retain(lm_capture *t);
void lm_capture_release(lm_capture *t);

typedef enum lm_store_kind { LM_STORE_INPUT, LM_STORE_TEMP, LM_STORE_STATE, LM_STORE_CONST } lm_store_kind;
const char *lm_store_kind_name(lm_store_kind k); /* "input", "temp", "state", "const" */

typedef struct lm_capture_storage {
	lm_store_kind kind;
	int input;      /* LM_STORE_INPUT: which input (0-based); else -1 */
	size_t nbytes;
	int writes;     /* how many nodes write it */
	bool escapes;   /* held outside the trace when it ended (a tensor, a .grad, a saved tensor) */
	bool output;    /* a result lives there */
} lm_capture_storage;

typedef struct lm_capture_value {
	int storage;
	lm_dtype dtype;
	lm_device device;
	int ndim;
	int64_t shape[LM_MAX_DIMS];
	int64_t stride[LM_MAX_DIMS]; /* elements */
	int64_t offset;              /* elements */
} lm_capture_value;

#define LM_CAPTURE_MAX_IN 7
#define LM_CAPTURE_MAX_OUT 4
typedef struct lm_capture_node {
	const char *kind;  /* "op", "copy", "fill", "random" */
	const char *op;    /* the op list's name ("add", "matmul"), or the kind */
	const char *fname; /* the function that launched it ("add", "backward: mul") */
	const char *where; /* the place in the program ("train.lua:31"), or "" */
	const char *loop;  /* the device loop family ("binary"), "copy", "fill", "random" */
	lm_dtype dtype;    /* the loop's dtype */
	int nin, nout;
	int in[LM_CAPTURE_MAX_IN];   /* value ids (-1: an absent optional input) */
	int out[LM_CAPTURE_MAX_OUT];
	double value;      /* a fill's value */
	bool added;        /* made by a pass (lm_capture_add_node), not recorded */
} lm_capture_node;

int lm_capture_nnodes(const lm_capture *t);
int lm_capture_nvalues(const lm_capture *t);
int lm_capture_nstorages(const lm_capture *t);
int lm_capture_ninputs(const lm_capture *t);
int lm_capture_noutputs(const lm_capture *t);
int lm_capture_input(const lm_capture *t, int k);  /* the value of input k */
int lm_capture_output(const lm_capture *t, int k); /* the value of result k */
lm_status lm_capture_node_get(const lm_capture *t, int i, lm_capture_node *out);
/* The recorded parameters of node i (lm_param, as lm_node_param gives a grad_fn's). */
int lm_capture_node_nparams(const lm_capture *t, int i);
lm_status lm_capture_node_param(const lm_capture *t, int i, int j, lm_param *out);
lm_status lm_capture_value_get(const lm_capture *t, int v, lm_capture_value *out);
lm_status lm_capture_storage_get(const lm_capture *t, int s, lm_capture_storage *out);
/* Value v as a tensor (+1; no autograd): what it held when the capture ended. */
lm_tensor *lm_capture_value_tensor(const lm_capture *t, int v);
/* Adds t as a constant of the capture (a pass's new weights: folded BatchNorm): its value id, or
 * -1 with the error set. t's memory must not be in the capture already; the capture holds it. */
int lm_capture_add_const(lm_capture *c, const lm_tensor *t);
/* Adds t's memory as a new temp storage of the capture (a pass's new intermediate: the layout
 * pass's channels-last buffers): its value id, or -1 with the error set. The capture holds it. */
int lm_capture_add_temp(lm_capture *c, const lm_tensor *t);
/* The value of t, a view of memory already in the capture (a new geometry is added): -1 with the
 * error set when t's memory is not in it. */
int lm_capture_value_of(lm_capture *c, const lm_tensor *t);
/* Appends a node a pass made: op (a name of the op list, or "copy": dst = src), its parameters
 * and loop dtype taken from node `like` (which must have the same kind of parameters; -1: none,
 * the dtype of the first output), reading values in[0..nin) and writing out[0..nout). The node is
 * checked as lm_program_add_node checks a node (arity, dtypes, a device with the loop). Its id, or
 * -1 with the error set. */
int lm_capture_add_node(lm_capture *c, const char *op, int like, int nin, const int *in, int nout, const int *out);
/* Whether the device of value v has a loop for op (a name of the op list) in v's dtype. */
bool lm_capture_supports(const lm_capture *c, const char *op, int v);
/* Whether node i's elementwise loop can run inside a fused kernel on its device. */
bool lm_capture_node_fusable(const lm_capture *t, int i);
/* What node i can anchor in a fused group on its device: "reduce" (a sum, mean, amax or amin a
 * prologue of elementwise nodes may end in and an epilogue follow: float, contiguous, over the
 * last dims), "product" (matmul, mm or the Winograd convolution, which an epilogue may follow),
 * or NULL. */
const char *lm_capture_node_anchor(const lm_capture *t, int i);
/* Sets parameter `name` of node i (a float or bool field; the optimizers' step and learning
 * rate change between runs): later runs use it. The Adam node's bias corrections follow from
 * `step`, `lr`, `beta1`, `beta2`. */
lm_status lm_capture_node_set(lm_capture *t, int i, const char *name, double v);

/* ---------------------------------------------------------------- programs */

typedef struct lm_program lm_program;

lm_program *lm_program_new(lm_capture *t); /* empty; holds t */
void lm_program_release(lm_program *p);
/* Appends node i of the trace, reading `in` and writing `out` (value ids; NULL: the node's own).
 * A substituted value must have the node's value's dtype, shape and device. */
lm_status lm_program_add_node(lm_program *p, int node, const int *in, const int *out);
/* Appends a fused group: nodes (fusable elementwise nodes in order, each reading its own inputs
 * after the substitutions in ins: ins[k] lists node k's inputs, NULL its own; and writing outs[k],
 * -1 or outs NULL its own result: a value of the same dtype and shape), writing the values
 * of mat (each one of the nodes' outputs, of the group's shape). Values a member writes and a
 * later member reads live in registers; values read from outside are the kernel's inputs.
 * One member may be an anchor (lm_capture_node_anchor): a reduction, with the members before it
 * its prologue (over its input's shape) and those after its epilogue (over its result's); or a
 * product, with the members after it its epilogue over its whole result (run in panels of rows).
 * Up to 8 values then (4 each side); the anchor's own result is written in any case. */
lm_status lm_program_add_fused(lm_program *p, int nnodes, const int *nodes, const int *const *ins, const int *outs,
                               int nmat, const int *mat);
/* Result k of the program is value v (default: the trace's outputs). */
lm_status lm_program_set_output(lm_program *p, int k, int v);
int lm_program_nsteps(const lm_program *p);

typedef struct lm_program_info {
	int64_t kernels;       /* steps launched */
	int64_t bytes_read;    /* bytes the kernels' inputs span (a broadcast dim counted once) */
	int64_t bytes_written; /* bytes the kernels' outputs span */
} lm_program_info;
/* Runs p on inputs (the capture's count, dtypes, shapes, strides and devices: LM_ERR_ARG naming
 * the first that differs); outputs[k] receives result k (+1). info may be NULL. */
lm_status lm_program_run(lm_program *p, int ninputs, lm_tensor *const *inputs, int noutputs,
                         lm_tensor **outputs, lm_program_info *info);
/* What running p launches, without running it. */
lm_status lm_program_cost(const lm_program *p, lm_program_info *info);

/* Step `step` (0-based) of p, a fused elementwise group, run once more as one of the course's
 * kernels on the values it reads as the last run (or the capture) left them: opts->backend "emu"
 * (the SIMT emulator: info.trace, the threads scene), "cpu" (the engine's fused kernel, timed) or
 * "cuda" (a generic kernel interpreting the group, timed); block, repeats, trace_cap as the
 * kernels take them. results[0..*nresults) receive the group's results at its shape (+1 each;
 * results has room for 4). A group with a reduction or a product, integer or mixed dtypes: an
 * error that says so. */
struct lm_kernel_opts;
struct lm_kernel_info;
lm_status lm_program_kernel(lm_program *p, int step, const struct lm_kernel_opts *opts, int *nresults,
                            lm_tensor **results, struct lm_kernel_info **info);

/* The CPU's code generator for fused kernels (src/backend/cpu/jit.c): on 1 generates C for the
 * groups it can (compiled at their first large run by the system's compiler, cached on disk), 0
 * interprets every group, -1 leaves it; min_elements the fewest elements a generated group has
 * (-1 leaves it; 2^18 at start). Returns what it does now; *compiled and *loaded (may be NULL):
 * kernels compiled and loaded in this process. */
const char *lm_graph_codegen(int on, int64_t min_elements, int *compiled, int *loaded);

#ifdef __cplusplus
}
#endif
#endif
