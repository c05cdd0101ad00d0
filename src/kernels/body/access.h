/*
 * access.h — the memory-access demos of the course (PMPP chapter 6, "memory coalescing", and the
 * shared-memory bank conflicts of a tiled transpose), written once for CUDA and the emulator.
 *
 * The same work, laid out two ways, costs differently because of how a warp's 32 lanes meet
 * memory: global memory moves 32-byte sectors of 128-byte lines, shared memory serves 32 banks of
 * 4-byte words at once.
 *   sum_columns   out[j] = sum over i of x[i][j]: thread j walks column j, so in each step the
 *                 lanes of a warp read consecutive addresses: one line, four sectors (coalesced)
 *   sum_rows      out[i] = sum over j of x[i][j]: thread i walks row i, so in each step the lanes
 *                 read addresses a row apart: 32 lines per load (strided)
 *   transpose_naive   out[c][r] = x[r][c] straight from global memory: reads coalesced, writes a
 *                 row apart (strided)
 *   transpose_shared  through a TILE x TILE tile in shared memory: both global accesses coalesced,
 *                 but the tile is read down a column: all 32 lanes hit one bank (32-way conflict)
 *   transpose_padded  the same with a padding column (a pitch of TILE + 1 words): a column's
 *                 elements fall in 32 different banks, no conflict
 * x is rows x cols, row-major. A transpose block is TILE x LMK_ACCESS_ROWS threads, each copying
 * TILE / LMK_ACCESS_ROWS elements of its column of the tile.
 * The includer defines T and KFN; macros: simt_macros.h. No include guard.
 * Host code: ../access_emu.c (emulator), ../cuda/access.cu (CUDA).
 */

/* Coalesced: thread j sums column j. */
KERNEL KFN(sum_columns)(GLOBAL const T *x, GLOBAL T *out, unsigned rows, unsigned cols)
{
	unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j < cols) {
		T sum = LOAD(x, j);
		for (unsigned i = 1; i < rows; i++) {
			T v = LOAD(x, i * cols + j);
			sum = ADD(sum, v);
		}
		STORE(out, j, sum);
	}
}

/* Strided: thread i sums row i. */
KERNEL KFN(sum_rows)(GLOBAL const T *x, GLOBAL T *out, unsigned rows, unsigned cols)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < rows) {
		T sum = LOAD(x, i * cols);
		for (unsigned j = 1; j < cols; j++) {
			T v = LOAD(x, i * cols + j);
			sum = ADD(sum, v);
		}
		STORE(out, i, sum);
	}
}

/* Block (bx, by) transposes the tile of x at rows by*TILE.., columns bx*TILE.. */
KERNEL KFN(transpose_naive)(GLOBAL const T *x, GLOBAL T *out, unsigned rows, unsigned cols)
{
	unsigned c = blockIdx.x * LMK_ACCESS_TILE + threadIdx.x;
	for (unsigned k = threadIdx.y; k < LMK_ACCESS_TILE; k += blockDim.y) {
		unsigned r = blockIdx.y * LMK_ACCESS_TILE + k;
		if (r < rows && c < cols) {
			T v = LOAD(x, r * cols + c);
			STORE(out, c * rows + r, v); /* lanes (consecutive c) a column of out apart */
		}
	}
}

/* The tiled transpose with a tile of row pitch `pitch` elements: row k of the tile is read in
 * (lanes along it: coalesced), then column threadIdx.x of the tile is written out as a row of out
 * (coalesced again), reading the tile down a column. */
DEVICE void KFN(transpose_tile)(GLOBAL const T *x, GLOBAL T *out, unsigned rows, unsigned cols, LOCAL T *tile,
                                unsigned pitch)
{
	unsigned tx = threadIdx.x;
	unsigned c = blockIdx.x * LMK_ACCESS_TILE + tx;
	for (unsigned k = threadIdx.y; k < LMK_ACCESS_TILE; k += blockDim.y) {
		unsigned r = blockIdx.y * LMK_ACCESS_TILE + k;
		if (r < rows && c < cols) {
			T v = LOAD(x, r * cols + c);
			STORE(tile, k * pitch + tx, v);
		}
	}
	__syncthreads(); /* the whole tile is in */
	unsigned oc = blockIdx.y * LMK_ACCESS_TILE + tx; /* a column of out: a row of x */
	for (unsigned k = threadIdx.y; k < LMK_ACCESS_TILE; k += blockDim.y) {
		unsigned orow = blockIdx.x * LMK_ACCESS_TILE + k; /* a row of out: a column of x */
		if (orow < cols && oc < rows) {
			T v = LOAD(tile, tx * pitch + k); /* down column k of the tile */
			STORE(out, orow * rows + oc, v);
		}
	}
}

KERNEL KFN(transpose_shared)(GLOBAL const T *x, GLOBAL T *out, unsigned rows, unsigned cols)
{
	SHARED(T, tile, LMK_ACCESS_TILE * LMK_ACCESS_TILE); /* tile: (TILE, TILE) */
	KFN(transpose_tile)(x, out, rows, cols, tile, LMK_ACCESS_TILE);
}

KERNEL KFN(transpose_padded)(GLOBAL const T *x, GLOBAL T *out, unsigned rows, unsigned cols)
{
	SHARED(T, tile, LMK_ACCESS_TILE * (LMK_ACCESS_TILE + 1)); /* tile: (TILE, TILE + 1) */
	KFN(transpose_tile)(x, out, rows, cols, tile, LMK_ACCESS_TILE + 1);
}
