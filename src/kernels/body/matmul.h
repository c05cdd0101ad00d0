/*
 * matmul.h — the matrix multiplication kernels of the course (PMPP chapters 3 and 5), written once
 * for CUDA and the emulator.
 *
 *   P = M N,  M: (m, k), N: (k, n), P: (m, n), all row-major
 *
 * One thread computes one element of P: the dot product of a row of M and a column of N. The
 * versions differ in where the operands come from:
 *   v1 naive  every operand from global memory: 2k global loads per element of P, so each element
 *             of M and N is loaded by every thread that uses it (n times for M, m times for N)
 *   v2 tiled  a tile x tile block first copies one tile of M and one of N into shared memory
 *             (one element of each per thread), waits, and computes tile partial products from
 *             there; k / tile phases. Each global element is now loaded once per block that needs
 *             it: tile times fewer global loads. Elements outside the matrices load as 0 (boundary
 *             checks), so any m, k, n work.
 * ADD(value, a * b) is one fused multiply-add on the GPU: one add event; m k n of them are data
 * (ADD_PAD marks the tiled kernel's products with the zeros past the matrices' edges).
 * The includer defines T and KFN; macros: simt_macros.h. No include guard.
 * Host code: ../matmul_emu.c (emulator), ../cuda/matmul.cu (CUDA).
 */

/* v1: blockDim = (tile, tile); thread (x, y) of block (bx, by) computes P[row][col]. */
KERNEL KFN(matmul_naive)(GLOBAL const T *M, GLOBAL const T *N, GLOBAL T *P, unsigned m, unsigned k, unsigned n)
{
	unsigned row = blockIdx.y * blockDim.y + threadIdx.y;
	unsigned col = blockIdx.x * blockDim.x + threadIdx.x;
	if (row < m && col < n) {
		T value = (T)0;
		for (unsigned i = 0; i < k; i++) {
			T a = LOAD(M, row * k + i);
			T b = LOAD(N, i * n + col);
			value = ADD(value, a * b);
		}
		STORE(P, row * n + col, value);
	}
}

/* v2: the tiles live in the dynamic shared memory, carved into Mds and Nds (tile x tile each), as
 * PMPP does when the tile width is chosen at run time. */
KERNEL KFN(matmul_tiled)(GLOBAL const T *M, GLOBAL const T *N, GLOBAL T *P, unsigned m, unsigned k, unsigned n,
                         unsigned tile SHARED_DYN_ARG)
{
	SHARED_DYN(T, MN_s); /* MN_s: (2, tile, tile) */
	SHARED_PART(T, Mds, MN_s, 0, tile * tile);
	SHARED_PART(T, Nds, MN_s, tile * tile, tile * tile);
	unsigned tx = threadIdx.x, ty = threadIdx.y;
	unsigned row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
	T value = (T)0;
	for (unsigned ph = 0; ph < (k + tile - 1) / tile; ph++) {
		/* phase ph: this thread brings M[row][ph*tile + tx] and N[ph*tile + ty][col] */
		T a = (T)0, b = (T)0;
		if (row < m && ph * tile + tx < k) a = LOAD(M, row * k + ph * tile + tx);
		if (ph * tile + ty < k && col < n) b = LOAD(N, (ph * tile + ty) * n + col);
		STORE(Mds, ty * tile + tx, a);
		STORE(Nds, ty * tile + tx, b);
		__syncthreads(); /* the tiles are complete */
		/* a thread outside P, or a product beyond k, adds the zeros that fill the tiles */
		int pad = row >= m || col >= n;
		for (unsigned i = 0; i < tile; i++) {
			T mv = LOAD(Mds, ty * tile + i);
			T nv = LOAD(Nds, i * tile + tx);
			value = ADD_PAD(value, mv * nv, pad || ph * tile + i >= k);
		}
		__syncthreads(); /* everyone is done with the tiles before the next phase overwrites them */
	}
	if (row < m && col < n) STORE(P, row * n + col, value);
}
