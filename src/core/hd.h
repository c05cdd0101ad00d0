/*
 * hd.h — LMI_HD, the mark of a function written once for the host and the GPU: static inline in
 * C, and __host__ __device__ as well when nvcc compiles it. philox.h (random numbers) and
 * backend/scalar_math.h (the formulas of one element) are written with it.
 */
#ifndef LUMEN_CORE_HD_H
#define LUMEN_CORE_HD_H

#ifdef __CUDACC__
#define LMI_HD static inline __host__ __device__
#else
#define LMI_HD static inline
#endif

#endif
