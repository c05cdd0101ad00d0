/*
 * conv2d.h — the 2-D convolution kernels of the course (PMPP chapter 7), written once for CUDA and
 * the emulator.
 *
 *   P[row][col] = sum over i < mh, j < mw of F[i][j] * N[row + i - r_y][col + j - r_x]
 *   r_y = (mh - 1) / 2, r_x = (mw - 1) / 2; N: (h, w) image, F: (mh, mw) mask, P: (h, w)
 *
 * Input elements outside the image are "ghost cells" with value 0 (they are never loaded). One
 * thread computes one output pixel; the versions differ in where the mask and the image come from:
 *   v1 naive         mask and image from global memory: two global loads per multiply-add
 *   v2 constant      the mask in constant memory (every lane of a warp reads the same mask element
 *                    at the same time: one broadcast, cached), the image still from global memory
 *   v3 tiled input   a block per INPUT tile: (tile + 2 r) squared threads each load one input
 *                    element (the output tile plus its halo cells) into shared memory; after the
 *                    barrier only the inner tile x tile threads compute (the others are idle: see
 *                    the branch in the trace). Global loads per output: about (tile + 2r)^2 / tile^2
 *   v4 tiled output  a block per OUTPUT tile: tile x tile threads load the (tile + 2r)^2 input tile
 *                    together, several elements each, then every thread computes: no idle threads,
 *                    a little more index arithmetic
 * The tiled versions read the mask from constant memory too, and need odd mask sides (a halo of r
 * cells on each side). ADD(value, f * x) is one fused multiply-add: one add event; the products
 * with ghost cells that the tiled versions compute are padding (ADD_PAD, in idle_lanes).
 * The includer defines T and KFN; macros: simt_macros.h. No include guard.
 * Host code: ../conv2d_emu.c (emulator), ../cuda/conv2d.cu (CUDA).
 */

/* The mask in constant memory (filled by the host before the launch; LMI_CONV_MAX_MASK elements
 * are reserved per element type). */
CONSTANT(T, KFN(F_c), LMI_CONV_MAX_MASK);

/* Whether input element (r, c) is a ghost cell: the tiled kernels multiply the zeros their tile
 * holds there, adds that are padding (ADD_PAD), not the convolution's work. */
DEVICE int KFN(conv2d_ghost)(int r, int c, int h, int w)
{
	return r < 0 || r >= h || c < 0 || c >= w;
}

/* v1: blockDim = (tile, tile), one output pixel per thread. */
KERNEL KFN(conv2d_naive)(GLOBAL const T *N, GLOBAL const T *F, GLOBAL T *P, int h, int w, int mh, int mw)
{
	int col = (int)(blockIdx.x * blockDim.x + threadIdx.x);
	int row = (int)(blockIdx.y * blockDim.y + threadIdx.y);
	int ry = (mh - 1) / 2, rx = (mw - 1) / 2;
	if (row < h && col < w) {
		T value = (T)0;
		for (int i = 0; i < mh; i++)
			for (int j = 0; j < mw; j++) {
				int in_row = row - ry + i, in_col = col - rx + j;
				if (in_row >= 0 && in_row < h && in_col >= 0 && in_col < w) {
					T f = LOAD(F, i * mw + j);
					T x = LOAD(N, in_row * w + in_col);
					value = ADD(value, f * x);
				}
			}
		STORE(P, row * w + col, value);
	}
}

/* v2: as v1, the mask from constant memory. */
KERNEL KFN(conv2d_constant)(GLOBAL const T *N, GLOBAL T *P, int h, int w, int mh, int mw CONSTANT_ARG(T, KFN(F_c)))
{
	int col = (int)(blockIdx.x * blockDim.x + threadIdx.x);
	int row = (int)(blockIdx.y * blockDim.y + threadIdx.y);
	int ry = (mh - 1) / 2, rx = (mw - 1) / 2;
	if (row < h && col < w) {
		T value = (T)0;
		for (int i = 0; i < mh; i++)
			for (int j = 0; j < mw; j++) {
				int in_row = row - ry + i, in_col = col - rx + j;
				if (in_row >= 0 && in_row < h && in_col >= 0 && in_col < w) {
					T f = LOAD(KFN(F_c), i * mw + j);
					T x = LOAD(N, in_row * w + in_col);
					value = ADD(value, f * x);
				}
			}
		STORE(P, row * w + col, value);
	}
}

/* v3: blockDim = (tile + 2 r_x, tile + 2 r_y); block (bx, by) covers output pixels
 * [by*tile, by*tile + tile) x [bx*tile, bx*tile + tile). */
KERNEL KFN(conv2d_tiled_input)(GLOBAL const T *N, GLOBAL T *P, int h, int w, int mh, int mw, int tile CONSTANT_ARG(T, KFN(F_c)) SHARED_DYN_ARG)
{
	SHARED_DYN(T, N_s); /* N_s: (tile + 2 r_y, tile + 2 r_x) */
	int ry = (mh - 1) / 2, rx = (mw - 1) / 2;
	int in_w = tile + 2 * rx;
	int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
	int col = (int)blockIdx.x * tile + tx - rx; /* the input element this thread loads */
	int row = (int)blockIdx.y * tile + ty - ry;
	T v = (T)0;
	if (row >= 0 && row < h && col >= 0 && col < w) v = LOAD(N, row * w + col);
	STORE(N_s, ty * in_w + tx, v);
	__syncthreads();
	int tile_col = tx - rx, tile_row = ty - ry; /* its place in the output tile */
	if (BRANCH(tile_col >= 0 && tile_col < tile && tile_row >= 0 && tile_row < tile)) {
		if (row < h && col < w) {
			T value = (T)0;
			for (int i = 0; i < mh; i++)
				for (int j = 0; j < mw; j++) {
					T f = LOAD(KFN(F_c), i * mw + j);
					T x = LOAD(N_s, (tile_row + i) * in_w + tile_col + j);
					int ghost = KFN(conv2d_ghost)(row - ry + i, col - rx + j, h, w);
					value = ADD_PAD(value, f * x, ghost);
				}
			STORE(P, row * w + col, value);
		}
	}
}

/* v4: blockDim = (tile, tile); the block loads its (tile + 2 r_y) x (tile + 2 r_x) input tile,
 * thread t taking elements t, t + tile^2, ... */
KERNEL KFN(conv2d_tiled_output)(GLOBAL const T *N, GLOBAL T *P, int h, int w, int mh, int mw, int tile CONSTANT_ARG(T, KFN(F_c)) SHARED_DYN_ARG)
{
	SHARED_DYN(T, N_s); /* N_s: (tile + 2 r_y, tile + 2 r_x) */
	int ry = (mh - 1) / 2, rx = (mw - 1) / 2;
	int in_h = tile + 2 * ry, in_w = tile + 2 * rx;
	int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
	int row0 = (int)blockIdx.y * tile - ry, col0 = (int)blockIdx.x * tile - rx; /* input tile */
	for (int e = ty * tile + tx; e < in_h * in_w; e += tile * tile) {
		int r = row0 + e / in_w, c = col0 + e % in_w;
		T v = (T)0;
		if (r >= 0 && r < h && c >= 0 && c < w) v = LOAD(N, r * w + c);
		STORE(N_s, e, v);
	}
	__syncthreads();
	int row = (int)blockIdx.y * tile + ty, col = (int)blockIdx.x * tile + tx;
	if (row < h && col < w) {
		T value = (T)0;
		for (int i = 0; i < mh; i++)
			for (int j = 0; j < mw; j++) {
				T f = LOAD(KFN(F_c), i * mw + j);
				T x = LOAD(N_s, (ty + i) * in_w + tx + j);
				int ghost = KFN(conv2d_ghost)(row - ry + i, col - rx + j, h, w);
				value = ADD_PAD(value, f * x, ghost);
			}
		STORE(P, row * w + col, value);
	}
}
