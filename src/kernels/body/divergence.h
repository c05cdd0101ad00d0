/*
 * divergence.h — the warp-divergence demo of the course (PMPP 4.5, "control divergence"),
 * written once for CUDA and the emulator.
 *
 * A warp issues one instruction for all its 32 lanes. When the lanes of a warp disagree on a
 * branch, the warp runs both paths one after the other, each with the lanes of the other path
 * switched off: half the lanes idle on each path for an even/odd split, so the divergent region
 * takes twice as long at half the SIMD efficiency. The demo's two paths have the same length (four
 * adds each); the split decides the cost:
 *   even-odd   lane % 2 == 0          every warp splits 16/16: efficiency 0.5
 *   half-warp  lane < 16              every warp splits 16/16: efficiency 0.5
 *   data       x[i] > 0.5             depends on the data: warps split where the values disagree
 *   warp       (threadIdx.x / 32) % 2 whole warps agree: a branch, but no divergence (1.0)
 *   none       no branch at all       1.0
 * The divergent region is the function divergence_paths, between the two markers below (the
 * emulator measures simd_efficiency over the lines between them).
 * Included once (float only); macros: simt_macros.h. No include guard.
 * Host code: ../divergence_emu.c (emulator), ../cuda/divergence.cu (CUDA).
 */

enum { LMK_DIVERGENCE_REGION_BEGIN = __LINE__ };
/* The divergent region: the two paths, each four dependent adds. */
DEVICE float divergence_paths(float v, int take)
{
	if (take) {
		v = ADD(v, 1.0f);
		v = ADD(v, 2.0f);
		v = ADD(v, 3.0f);
		v = ADD(v, 4.0f);
	} else {
		v = ADD(v, -1.0f);
		v = ADD(v, -2.0f);
		v = ADD(v, -3.0f);
		v = ADD(v, -4.0f);
	}
	return v;
}
enum { LMK_DIVERGENCE_REGION_END = __LINE__ };

/* pattern: LMI_DIV_* (divergence_plan.h). One thread per element of x and y. */
KERNEL divergence_demo(GLOBAL const float *x, GLOBAL float *y, int pattern)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned lane = threadIdx.x % 32;
	float v = LOAD(x, i);
	int take = 1;
	switch (pattern) {
	case LMI_DIV_EVEN_ODD: take = BRANCH(lane % 2 == 0); break;
	case LMI_DIV_HALF_WARP: take = BRANCH(lane < 16); break;
	case LMI_DIV_DATA: take = BRANCH(v > 0.5f); break;
	case LMI_DIV_WARP: take = BRANCH(threadIdx.x / 32 % 2 == 0); break;
	default: break; /* none: every lane takes the first path, no branch */
	}
	v = divergence_paths(v, take);
	STORE(y, i, v);
}
