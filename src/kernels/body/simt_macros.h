/*
 * simt_macros.h — the few macros in which every kernel body of src/kernels/body/ is written, so that
 * one source is both real CUDA (nvcc, the .cu files of src/kernels/cuda/) and an emulated,
 * instrumented kernel (gcc, src/kernels/scan_emu.c and friends).
 *
 *   KERNEL                    __global__ void         a kernel (the name goes through KFN)
 *   KFN(name)                 name_f32 / name_f64     one kernel per element type T
 *   threadIdx, blockIdx,      as in CUDA              uint3/dim3 built-ins
 *   blockDim, gridDim
 *   __syncthreads()           as in CUDA              a barrier for the block
 *   SHARED(T, a, n)           __shared__ T a[n]
 *   SHARED_DYN(T, a)          extern __shared__ T a[] (size given at launch)
 *   SHARED_PART(T, p, a, o, n) T *p = a + o           a named part of n elements of the dynamic array
 *                                                     a, from element o (PMPP's Mds/Nds carving)
 *   CONSTANT(T, a, n)         __constant__ T a[n]     file scope; the host fills it before launch
 *   LOAD(a, i)                a[i]                    read an element of global/shared/constant memory
 *                                                     (float, double, int, unsigned, unsigned char)
 *   STORE(a, i, v)            a[i] = v                write one
 *   ADD(x, y)                 x + y                   an addition of data (counted; index math is not)
 *   ADD_PAD(x, y, pad)        x + y                   the same, on padding when pad holds (a guard
 *                                                     lane past the end, a ghost cell): issued, but
 *                                                     counted in idle_lanes, not in adds
 *   ATOMIC_ADD(a, i, v)       atomicAdd(&a[i], v)     returns the old value
 *   BRANCH(c)                 c                       a condition whose divergence the trace shows
 *
 * Which conditions are BRANCH: those on the thread's index or data that decide which threads of a
 * warp do a step's work, the divergence the lessons ask about (the active threads of a scan or
 * reduction tree step, the halo threads of an input tile that sit out, the demo's split). Such a
 * condition is decided once, where it is first needed (`int adds = BRANCH(t >= stride);`), and
 * the variable guards every statement of that step, across a barrier too: one decision, one event
 * per lane (a predicate register on a GPU). Plain `if`s, which are not events:
 *   - bounds and ghost-cell checks (i < n, row < m && col < n, a pixel inside the image): only the
 *     warps at an edge diverge on them, and the lessons treat them as boundary handling;
 *   - conditions the same for every thread of a block (exclusive, S != NULL, loop bounds);
 *   - the one thread that writes its block's result (t == 0, t == blockDim.x - 1): not a step of
 *     the pattern, and the store or atomic's mask already shows its single lane;
 *   - data tests that only decide whether one access is made (a histogram's count > 0, the end of
 *     a run of equal bins): the access's event shows the lanes that made it.
 *
 * Which additions are ADD_PAD: those whose result is an element past the end of the data (a
 * scan's padded section: Kogge-Stone's threads i >= n), those whose right operand holds only
 * padding (a reduction tree's i + stride >= n), and products with ghost cells or with the zeros
 * that fill a tile beyond the matrix. The textbook counts the others: a Kogge-Stone scan of n
 * elements adds sum over s = 1, 2, 4, ... < n of (n - s), whatever the block.
 *
 * Address spaces, for OpenCL C 1.2 (which has no generic one): a kernel's or device function's
 * pointer parameters say where they point, GLOBAL (global memory) or LOCAL (shared memory); a
 * kernel that uses SHARED_DYN ends its parameters with SHARED_DYN_ARG (OpenCL passes dynamic
 * local memory as a parameter) and one that reads a CONSTANT array with CONSTANT_ARG(T, name)
 * (OpenCL's __constant arrays are parameters too). Under nvcc and gcc all four are empty.
 *
 * Under nvcc they are plain CUDA. Under OpenCL (the course's kernels on an OpenCL device:
 * ../opencl/patterns.c builds each body as OpenCL C at run time) they are OpenCL C: the
 * built-ins from get_local_id and friends, __syncthreads a barrier, ATOMIC_ADD atomic_add or a
 * compare-and-swap loop for floats. Under gcc (the emulator) every memory access is checked against
 * the array it belongs to and recorded, with the source line, as an event of the trace; ADD and
 * BRANCH record events too. A body is included once per element type: the includer defines T and
 * KFN first, so a body header has no include guard.
 * Read next: body/scan.h (a body), ../simt.h (the emulator's side).
 */
#ifndef LUMEN_KERNELS_SIMT_MACROS_H
#define LUMEN_KERNELS_SIMT_MACROS_H

#if defined(__OPENCL_VERSION__)

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define KERNEL __kernel void
#define DEVICE static inline
#define GLOBAL __global
#define LOCAL __local
#define SHARED_DYN_ARG , __local uchar *lmk_dynamic_smem_
#define CONSTANT_ARG(T, a) , __constant T *a
#define threadIdx ((uint3)(get_local_id(0), get_local_id(1), get_local_id(2)))
#define blockIdx ((uint3)(get_group_id(0), get_group_id(1), get_group_id(2)))
#define blockDim ((uint3)(get_local_size(0), get_local_size(1), get_local_size(2)))
#define gridDim ((uint3)(get_num_groups(0), get_num_groups(1), get_num_groups(2)))
#define __syncthreads() barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
#define LOAD(a, i) ((a)[i])
#define STORE(a, i, v) ((a)[i] = (v))
#define ADD(x, y) ((x) + (y))
#define ADD_PAD(x, y, pad) ((void)(pad), (x) + (y))
#define ATOMIC_ADD(a, i, v) lmk_atomic_add(&(a)[i], (v))
#define BRANCH(c) (c)
#define SHARED(T, a, n) __local T a[n]
#define CONSTANT(T, a, n) /* a parameter: CONSTANT_ARG */
#define SHARED_DYN(T, a) __local T *a = (__local T *)lmk_dynamic_smem_
#define SHARED_PART(T, p, a, o, n) __local T *p = (a) + (o)

/* atomicAdd's overloads: the integers' are OpenCL's; a float or double adds by compare-and-swap
 * on its bits (OpenCL 1.2 has no floating atomics). Each returns the old value. */
#define LMK_CL_ATOMIC_INT_(AS, U)                                                                  \
	U __attribute__((overloadable)) lmk_atomic_add(AS U *p, U v) { return atomic_add(p, v); }
LMK_CL_ATOMIC_INT_(__global, int)
LMK_CL_ATOMIC_INT_(__global, uint)
LMK_CL_ATOMIC_INT_(__local, int)
LMK_CL_ATOMIC_INT_(__local, uint)
#define LMK_CL_ATOMIC_FLOAT_(AS, F, U, CAS)                                                        \
	F __attribute__((overloadable)) lmk_atomic_add(AS F *p, F v)                               \
	{                                                                                          \
		union { U u; F f; } old, sum;                                                      \
		do {                                                                               \
			old.f = *(volatile AS F *)p;                                               \
			sum.f = old.f + v;                                                         \
		} while (CAS((volatile AS U *)p, old.u, sum.u) != old.u);                          \
		return old.f;                                                                      \
	}
LMK_CL_ATOMIC_FLOAT_(__global, float, uint, atomic_cmpxchg)
LMK_CL_ATOMIC_FLOAT_(__local, float, uint, atomic_cmpxchg)
LMK_CL_ATOMIC_FLOAT_(__global, double, ulong, atom_cmpxchg)
LMK_CL_ATOMIC_FLOAT_(__local, double, ulong, atom_cmpxchg)

#elif defined(__CUDACC__)

#define KERNEL __global__ void
#define DEVICE static __device__ __forceinline__
#define GLOBAL
#define LOCAL
#define SHARED_DYN_ARG
#define CONSTANT_ARG(T, a)
#define LOAD(a, i) ((a)[i])
#define STORE(a, i, v) ((a)[i] = (v))
#define ADD(x, y) ((x) + (y))
#define ADD_PAD(x, y, pad) ((void)(pad), (x) + (y))
#define ATOMIC_ADD(a, i, v) atomicAdd(&(a)[i], (v))
#define BRANCH(c) (c)
#define SHARED(T, a, n) __shared__ T a[n]
#define CONSTANT(T, a, n) __constant__ T a[n]
#define SHARED_DYN(T, a)                                                                           \
	extern __shared__ __align__(16) unsigned char lmk_dynamic_smem_[];                        \
	T *a = (T *)lmk_dynamic_smem_
#define SHARED_PART(T, p, a, o, n) T *p = (a) + (o)

#else /* the emulator */

#include "kernels/simt.h"

#define KERNEL static void __attribute__((unused))
#define DEVICE static inline
#define GLOBAL
#define LOCAL
#define SHARED_DYN_ARG
#define CONSTANT_ARG(T, a)
#define threadIdx (lmi_simt_self.thread_idx)
#define blockIdx (lmi_simt_self.block_idx)
#define blockDim (lmi_simt_self.block_dim)
#define gridDim (lmi_simt_self.grid_dim)
#define __syncthreads() lmi_simt_syncthreads(__LINE__)

#define LMK_DTYPE_OF(T) _Generic((T)0, float: LM_FLOAT32, double: LM_FLOAT64, int: LM_INT32,       \
                                 unsigned: LM_INT32, unsigned char: LM_UINT8)
#define LOAD(a, i)                                                                                 \
	_Generic((a)[0], float: lmi_simt_ld_f32, double: lmi_simt_ld_f64, int: lmi_simt_ld_i32,    \
	         unsigned: lmi_simt_ld_u32, unsigned char: lmi_simt_ld_u8)((a), (int64_t)(i), __LINE__)
#define STORE(a, i, v)                                                                             \
	_Generic((a)[0], float: lmi_simt_st_f32, double: lmi_simt_st_f64, int: lmi_simt_st_i32,    \
	         unsigned: lmi_simt_st_u32)((a), (int64_t)(i), (v), __LINE__)
#define ADD_PAD(x, y, pad)                                                                         \
	_Generic((x) + (y), float: lmi_simt_add_f32, double: lmi_simt_add_f64,                     \
	         int: lmi_simt_add_i32)((x), (y), (pad) ? 1 : 0, __LINE__)
#define ADD(x, y) ADD_PAD(x, y, 0)
#define ATOMIC_ADD(a, i, v)                                                                        \
	_Generic((a)[0], float: lmi_simt_atomic_add_f32, double: lmi_simt_atomic_add_f64,          \
	         int: lmi_simt_atomic_add_i32, unsigned: lmi_simt_atomic_add_u32)((a), (int64_t)(i), \
	                                                                          (v), __LINE__)
#define BRANCH(c) lmi_simt_branch((c) ? 1 : 0, __LINE__)
#define SHARED(T, a, n) T *a = (T *)lmi_simt_shared(#a, LMK_DTYPE_OF(T), sizeof(T), (n), __LINE__)
#define SHARED_DYN(T, a) T *a = (T *)lmi_simt_shared_dyn(#a, LMK_DTYPE_OF(T), sizeof(T), __LINE__)
/* The part gets its own trace array (scenes draw Mds and Nds apart): an access to an address
 * inside the part is recorded as an access to the part, at the index from the part's start. */
#define SHARED_PART(T, p, a, o, n)                                                                 \
	T *p = (T *)lmi_simt_shared_part(#p, (a), LMK_DTYPE_OF(T), sizeof(T), (int64_t)(o),       \
	                                 (int64_t)(n), __LINE__)
/* The host passes it to the launch as an array of space LM_SPACE_CONSTANT (read-only). */
#define CONSTANT(T, a, n) static T a[n]

#endif

/* Pastes the element type's suffix onto a kernel name: KFN(scan_kogge_stone) -> ..._f32. */
#define LMK_CAT_(a, b) a##b
#define LMK_CAT(a, b) LMK_CAT_(a, b)

#endif
