/*
 * tensor_api.h — the CUDA module's tensor kernels as liblumen sees them (plain C, no CUDA
 * types): what backend_cuda.c's table calls after turning tensors into arrays (lmi_cu_arr: the
 * first element's device address, dtype, shape and strides in elements). Every function returns
 * 0 or the cudaError_t / cublasStatus_t it met, with a message naming the call in msg; launches
 * are checked; all work runs in order on the module's one stream, and a copy to the host returns
 * when the bytes are there. Exported as LMI_CUDA_TENSOR_SYMBOL, found through
 * lmi_cuda_module_symbol. Read next: tensor.cu (the kernels), backend_cuda.c.
 */
#ifndef LUMEN_BACKEND_CUDA_TENSOR_API_H
#define LUMEN_BACKEND_CUDA_TENSOR_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: im2col, col2im; 3: gelu, max_pool2d, rmsprop, crop / flip, reductions with a parameter,
 * the index ops, cumsum, triangle, repeat, sort; 4: integer unary / binary / where / add_scaled;
 * 5: integer inputs to reduce_rows and gemm; 6: timer */
#define LMI_CUDA_TENSOR_VERSION 6
#define LMI_CUDA_TENSOR_SYMBOL  "lm_cuda_tensor_api"
#define LMI_CU_MAX_DIMS         8
#define LMI_CU_ERR_OOM          2 /* cudaErrorMemoryAllocation */
/* An index out of range (bad[0]: its position, bad[1]: its value); no CUDA error */
#define LMI_CU_ERR_INDEX        (-1)
/* An integer // or % met a zero divisor (the results there are 0); no CUDA error */
#define LMI_CU_ERR_ZERO_DIV     (-2)
/* The longest line sort takes (its lines sort in shared memory) */
#define LMI_CU_SORT_MAX         4096
/* The unary loops with parameters after lm_unop's (backend.h's lmi_cpu_unop_ext, checked equal
 * in backend_cuda.c) */
enum {
	LMI_CU_CLAMP = 17,
	LMI_CU_LEAKY_RELU,
	LMI_CU_POW_SCALAR,
	LMI_CU_ADD_SCALED,
	LMI_CU_ADD_S,
	LMI_CU_MUL_S,
	LMI_CU_DIV_S
};

typedef struct lmi_cu_arr {
	void *data; /* the first element */
	int dtype;  /* lm_dtype */
	int ndim;
	int64_t shape[LMI_CU_MAX_DIMS];
	int64_t stride[LMI_CU_MAX_DIMS]; /* elements; 0 on broadcast dims */
} lmi_cu_arr;

/* The draw of lmi_rng_call (core/lmi.h), for philox.h on the device. */
typedef struct lmi_cu_rng {
	int kind, f64;
	double a, b;
	int64_t lo;
	uint64_t range, seed, offset;
} lmi_cu_rng;

typedef struct lmi_cuda_tensor_api {
	int version; /* LMI_CUDA_TENSOR_VERSION */
	/* device 0 selected, the stream and the cuBLAS handle made */
	int (*init)(char *msg, size_t cap);
	int (*malloc)(void **p, size_t n, char *msg, size_t cap); /* LMI_CU_ERR_OOM: no memory */
	int (*free)(void *p, char *msg, size_t cap);
	int (*host_alloc)(void **p, size_t n, char *msg, size_t cap); /* page-locked */
	int (*host_free)(void *p, char *msg, size_t cap);
	/* kind 0 host to device, 1 device to host, 2 on the device; a large pageable host side
	 * crosses through pinned staging buffers */
	int (*memcpy)(void *dst, const void *src, size_t n, int kind, int host_pinned, char *msg,
	              size_t cap);
	/* dst = src (src's shape broadcast to dst's by its strides), converting dtype */
	int (*copy)(const lmi_cu_arr *dst, const lmi_cu_arr *src, char *msg, size_t cap);
	int (*fill)(const lmi_cu_arr *dst, double v, char *msg, size_t cap);
	int (*random)(const lmi_cu_arr *dst, const lmi_cu_rng *r, char *msg, size_t cap);
	/* elementwise on inputs of one dtype, any strides (broadcast by stride 0): floats, and
	 * (version 4) int32 / int64 / uint8 with the CPU's wrapping integer semantics; binary's
	 * integer // and % return LMI_CU_ERR_ZERO_DIV after a zero divisor */
	int (*unary)(int op, const lmi_cu_arr *out, const lmi_cu_arr *x, double p0, double p1,
	             char *msg, size_t cap);
	int (*binary)(int op, const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
	              char *msg, size_t cap);
	int (*where)(const lmi_cu_arr *out, const lmi_cu_arr *c, const lmi_cu_arr *a,
	             const lmi_cu_arr *b, char *msg, size_t cap);
	int (*add_scaled)(const lmi_cu_arr *out, const lmi_cu_arr *a, const lmi_cu_arr *b,
	                  double alpha, char *msg, size_t cap);
	/* rows of contiguous x (rows, R) reduced into out (rows) and idx (int64, may be NULL):
	 * op LM_SUM, LM_MEAN, LM_MAX, LM_MIN, LM_ARGMAX, LM_ARGMIN; float32 / float64 (out of x's
	 * dtype), and (version 5) int32 / int64 / uint8: out int64 for sum / prod (LM_PROD too,
	 * wrapping), float32 for mean, x's dtype for max / min */
	int (*reduce_rows)(int op, int dtype, const void *x, int64_t rows, int64_t R, void *out,
	                   int64_t *idx, char *msg, size_t cap);
	/* row-major C_i = A_i B_i (M x K times K x N) for i < batch, contiguous, strides between
	 * the matrices in elements (0: the same matrix for every i); beta 1 adds into C; float32 /
	 * float64 through cuBLAS, int32 / int64 / uint8 (version 5) by a wrapping kernel */
	int (*gemm)(int dtype, int64_t batch, int64_t M, int64_t N, int64_t K, const void *A,
	            int64_t sA, const void *B, int64_t sB, void *C, int64_t sC, double beta,
	            char *msg, size_t cap);
	/* contiguous x viewed as (outer, R, inner): softmax or log_softmax along R */
	int (*softmax)(int dtype, const void *x, void *y, int64_t outer, int64_t R, int64_t inner,
	               int log_softmax, char *msg, size_t cap);
	/* out (N, L) = -logp[n, t, l]; gx (N, C, L, zeroed) at the targets -= g */
	int (*nll)(int dtype, const void *logp, const int64_t *t, void *out, int64_t N, int64_t C,
	           int64_t L, char *msg, size_t cap);
	int (*nll_grad)(int dtype, const void *g, const int64_t *t, void *gx, int64_t N, int64_t C,
	                int64_t L, char *msg, size_t cap);
	/* the optimizers' fused updates (lumen/optim.h's arithmetic), contiguous, n elements;
	 * f: sgd {lr, momentum, dampening, weight_decay, nesterov, maximize, first};
	 * adam {beta1, beta2, eps, weight_decay, lr, step_size, bc2_sqrt, decoupled, amsgrad,
	 * maximize} */
	int (*sgd)(int dtype, void *p, const void *g, void *buf, int64_t n, const double *f,
	           char *msg, size_t cap);
	int (*adam)(int dtype, void *p, const void *g, void *m, void *v, void *vmax, int64_t n,
	            const double *f, char *msg, size_t cap);
	/* waits for the stream (before host reads of pageable memory, timing) */
	int (*sync)(char *msg, size_t cap);
	/* contiguous x (planes, H, W) -> cols (planes, kh*kw, oh*ow) for the window w = {kh, kw,
	 * sh, sw, ph, pw, dh, dw} (lm_window2d's order), zeros outside; col2im: the adjoint into
	 * out (planes, H, W), each output gathering its windows' entries (no atomics:
	 * deterministic) */
	int (*im2col)(int dtype, const void *x, void *cols, int64_t planes, int64_t H, int64_t W,
	              const int64_t *w, int64_t oh, int64_t ow, char *msg, size_t cap);
	int (*col2im)(int dtype, const void *cols, void *out, int64_t planes, int64_t H, int64_t W,
	              const int64_t *w, int64_t oh, int64_t ow, char *msg, size_t cap);

	/* ---- 3 (nn.cu, move.cu, sort.cu, tensor.cu's stat_rows) */
	/* rows of contiguous float x (rows, R) into out (rows): op LM_PROD, LM_VAR / LM_STD (p: the
	 * correction; NaN where R - p <= 0) or LM_NORM (p: 0, 1, 2, inf or any other p > 0) */
	int (*stat_rows)(int op, int dtype, const void *x, int64_t rows, int64_t R, void *out,
	                 double p, char *msg, size_t cap);
	/* out = gelu(x), or g * gelu'(x) when g is not NULL; float, any strides, out's shape */
	int (*gelu)(const lmi_cu_arr *out, const lmi_cu_arr *x, const lmi_cu_arr *g,
	            int tanh_approx, char *msg, size_t cap);
	/* contiguous x (planes, H, W) -> y (planes, OH, OW) and idx (int64 h * W + w) for the
	 * window w = {kh, kw, sh, sw, ph, pw}: the first maximum, or the first NaN; -inf and -1
	 * for a window wholly in the padding */
	int (*max_pool2d)(int dtype, const void *x, void *y, int64_t *idx, int64_t planes, int64_t H,
	                  int64_t W, int64_t OH, int64_t OW, const int64_t *w, char *msg, size_t cap);
	/* f: {alpha, weight_decay, lr, eps, momentum, maximize}; buf, gavg NULL when unused */
	int (*rmsprop)(int dtype, void *p, const void *g, void *sq, void *buf, void *gavg, int64_t n,
	               const double *f, char *msg, size_t cap);
	/* contiguous x (N, C, H, W) of esize-byte elements -> out (N, C, oh, ow) cut at offsets
	 * (N, 2) int64 of the image padded by pad (zeros outside), written whole */
	int (*crop)(int esize, const void *x, const int64_t *offsets, int64_t pad, int64_t N,
	            int64_t C, int64_t H, int64_t W, int64_t oh, int64_t ow, void *out, char *msg,
	            size_t cap);
	/* contiguous x (N, lines, W) -> out with W reversed where mask[n] (uint8) is set */
	int (*flip)(int esize, const void *x, const uint8_t *mask, void *out, int64_t N,
	            int64_t lines, int64_t W, char *msg, size_t cap);
	/* The index ops (cpu_move.h's contracts). Indices are int32 / int64 (idx->dtype); one out
	 * of range is skipped, and the call returns LMI_CU_ERR_INDEX with bad = {its position in
	 * idx's row-major order (the first such), its value}. */
	/* contiguous x (outer, size, inner), contiguous idx (n) -> out (outer, n, inner) */
	int (*index_select)(const void *x, int esize, int64_t outer, int64_t size, int64_t inner,
	                    const lmi_cu_arr *idx, void *out, int64_t *bad, char *msg, size_t cap);
	/* out[p] = x[p with p[dim] = idx[p]] over idx's positions; any strides */
	int (*gather)(const lmi_cu_arr *x, int dim, const lmi_cu_arr *idx, const lmi_cu_arr *out,
	              int64_t *bad, char *msg, size_t cap);
	/* out[p with p[dim] = idx[p]] += src[p] by atomics (float sums in no fixed order) */
	int (*scatter_add)(const lmi_cu_arr *out, int dim, const lmi_cu_arr *idx,
	                   const lmi_cu_arr *src, int64_t *bad, char *msg, size_t cap);
	/* out (n, classes) int64, zeroed: 1 at each contiguous idx entry */
	int (*one_hot)(const lmi_cu_arr *idx, int64_t classes, int64_t *out, int64_t *bad,
	               char *msg, size_t cap);
	/* running sums along R of contiguous x (outer, R, inner): floats in double into x's dtype,
	 * integers wrapping into int64 */
	int (*cumsum)(int dtype, const void *x, int64_t outer, int64_t R, int64_t inner, void *out,
	              char *msg, size_t cap);
	/* contiguous x (B, M, N) -> out keeping j - i <= k (lower) or >= k (upper), zeros else */
	int (*triangle)(int esize, const void *x, int64_t B, int64_t M, int64_t N, int64_t k,
	                int upper, void *out, char *msg, size_t cap);
	/* contiguous out (nd dims, shape[d] = reps[d] * xshape[d]) tiled from its corner block */
	int (*repeat_fill)(int esize, void *out, int nd, const int64_t *shape,
	                   const int64_t *xshape, char *msg, size_t cap);
	/* stable sort of the lines of contiguous x (outer, R, inner) along R, R <= LMI_CU_SORT_MAX:
	 * the first k values (bit-exact from x) and int64 indices, (outer, k, inner); NaN is the
	 * largest, -0 equals +0 */
	int (*sort)(int dtype, const void *x, int64_t outer, int64_t R, int64_t inner, int64_t k,
	            int descending, void *values, int64_t *indices, char *msg, size_t cap);

	/* ---- 6 */
	/* GPU time by two CUDA events on the stream: what 0 records the start; 1 records the end,
	 * waits for it and sets *ms to the milliseconds between (the events made on first use) */
	int (*timer)(int what, double *ms, char *msg, size_t cap);
} lmi_cuda_tensor_api;

const lmi_cuda_tensor_api *lm_cuda_tensor_api(void);

#ifdef __cplusplus
}
#endif
#endif
