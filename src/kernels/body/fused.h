/*
 * fused.h — a compiled program's fused group (lm.graph's fuse pass) as a GPU kernel, written once
 * for CUDA and the emulator: one thread per element; each input loaded once, the group's
 * instructions run in registers, each result stored once — where the unfused graph launched a
 * kernel per node, each loading its operands from memory and storing its result. The program is
 * a parameter (fused_plan.h), interpreted per thread. Included once per element type T
 * (both_types.h); macros: simt_macros.h. No include guard.
 * Host code: ../fused_emu.c (emulator), ../cuda/fused.cu (CUDA).
 */

DEVICE T KFN(lmk_fused_op)(int code, T a, T b, T c, double p0, double p1)
{
	const T q0 = (T)p0, q1 = (T)p1, zero = (T)0, one = (T)1;
	const int f32 = sizeof(T) == 4;
	switch (code) {
	case LMK_FUSED_ADD: return a + b;
	case LMK_FUSED_SUB: return a - b;
	case LMK_FUSED_MUL: return a * b;
	case LMK_FUSED_DIV: return a / b;
	case LMK_FUSED_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);
	case LMK_FUSED_MIN: return (a != a || b != b) ? a + b : (a < b ? a : b);
	case LMK_FUSED_EQ: return a == b ? one : zero;
	case LMK_FUSED_NE: return a != b ? one : zero;
	case LMK_FUSED_LT: return a < b ? one : zero;
	case LMK_FUSED_LE: return a <= b ? one : zero;
	case LMK_FUSED_GT: return a > b ? one : zero;
	case LMK_FUSED_GE: return a >= b ? one : zero;
	case LMK_FUSED_NEG: return -a;
	case LMK_FUSED_ABS: return f32 ? (T)fabsf((float)a) : (T)fabs((double)a);
	case LMK_FUSED_RELU: return a < zero ? zero : a;
	case LMK_FUSED_SIGN: return a != a ? a : (T)((a > zero) - (a < zero));
	case LMK_FUSED_FLOOR: return f32 ? (T)floorf((float)a) : (T)floor((double)a);
	case LMK_FUSED_CEIL: return f32 ? (T)ceilf((float)a) : (T)ceil((double)a);
	case LMK_FUSED_SQRT: return f32 ? (T)sqrtf((float)a) : (T)sqrt((double)a);
	case LMK_FUSED_RSQRT: return one / (f32 ? (T)sqrtf((float)a) : (T)sqrt((double)a));
	case LMK_FUSED_RECIP: return one / a;
	case LMK_FUSED_SQUARE: return a * a;
	case LMK_FUSED_CUBE: return a * a * a;
	case LMK_FUSED_CLAMP: return a < q0 ? q0 : (a > q1 ? q1 : a);
	case LMK_FUSED_LEAKY: return a > zero ? a : a * q0;
	case LMK_FUSED_SCALE_ADD: return a * q0 + q1;
	case LMK_FUSED_ADD_S: return a + q0;
	case LMK_FUSED_MUL_S: return a * q0;
	case LMK_FUSED_DIV_S: return a / q0;
	case LMK_FUSED_COPY: return a;
	case LMK_FUSED_EXP: return f32 ? (T)expf((float)a) : (T)exp((double)a);
	case LMK_FUSED_LOG: return f32 ? (T)logf((float)a) : (T)log((double)a);
	case LMK_FUSED_SIN: return f32 ? (T)sinf((float)a) : (T)sin((double)a);
	case LMK_FUSED_COS: return f32 ? (T)cosf((float)a) : (T)cos((double)a);
	case LMK_FUSED_TANH: return f32 ? (T)tanhf((float)a) : (T)tanh((double)a);
	case LMK_FUSED_SIGMOID: return one / (one + (f32 ? (T)expf((float)-a) : (T)exp((double)-a)));
	case LMK_FUSED_WHERE: return a != zero ? b : c;
	case LMK_FUSED_AXPY: return a + q0 * b;
	default: return a;
	}
}

KERNEL KFN(fused)(lmk_fused_prog P, GLOBAL T *a0, GLOBAL T *a1, GLOBAL T *a2, GLOBAL T *a3,
                  GLOBAL T *a4, GLOBAL T *a5, GLOBAL T *a6, GLOBAL T *a7)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= (unsigned)P.n) return;
	/* each operand's element for thread i (index math, not data: not counted) */
	int off[LMK_FUSED_OPS], idx[LMK_FUSED_DIMS];
	unsigned rest = i;
	for (int d = P.ndim - 1; d >= 0; d--) {
		idx[d] = (int)(rest % (unsigned)P.shape[d]);
		rest /= (unsigned)P.shape[d];
	}
	int nops = P.nout + P.nin;
	T v[LMK_FUSED_OPS];
	for (int j = 0; j < LMK_FUSED_OPS; j++) {
		off[j] = 0;
		v[j] = (T)0;
	}
	for (int j = 0; j < nops; j++) {
		for (int d = 0; d < P.ndim; d++) off[j] += idx[d] * P.stride[j][d];
	}
	/* the inputs, each loaded once */
	if (P.nout <= 1 && 1 < nops)
		v[1] = LOAD(a1, off[1]);
	if (P.nout <= 2 && 2 < nops)
		v[2] = LOAD(a2, off[2]);
	if (P.nout <= 3 && 3 < nops)
		v[3] = LOAD(a3, off[3]);
	if (P.nout <= 4 && 4 < nops)
		v[4] = LOAD(a4, off[4]);
	if (5 < nops)
		v[5] = LOAD(a5, off[5]);
	if (6 < nops)
		v[6] = LOAD(a6, off[6]);
	if (7 < nops)
		v[7] = LOAD(a7, off[7]);
	/* the instructions, in registers */
	T r[LMK_FUSED_REGS];
	for (int k = 0; k < LMK_FUSED_REGS; k++) r[k] = (T)0;
	for (int k = 0; k < P.ninstr; k++) {
		T x[3];
		for (int j = 0; j < 3; j++) {
			int q = P.ref[k][j + 1];
			x[j] = q < 0 ? (T)0 : q >= LMK_FUSED_REG ? r[q - LMK_FUSED_REG] : v[q];
		}
		T y = KFN(lmk_fused_op)(P.code[k], x[0], x[1], x[2], P.p[k][0], P.p[k][1]);
		int o = P.ref[k][0];
		if (o >= LMK_FUSED_REG)
			r[o - LMK_FUSED_REG] = y;
		else
			v[o] = y;
	}
	/* the results, each stored once */
	if (0 < P.nout)
		STORE(a0, off[0], v[0]);
	if (1 < P.nout)
		STORE(a1, off[1], v[1]);
	if (2 < P.nout)
		STORE(a2, off[2], v[2]);
	if (3 < P.nout)
		STORE(a3, off[3], v[3]);
}
