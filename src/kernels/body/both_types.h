/*
 * both_types.h — includes the kernel body LMK_BODY (a header name) once per element type, as
 * both hosts do: T = float with kernels named name_f32, then T = double with name_f64 (KFN adds
 * the suffix). A body over integer data (histogram.h) defines LMK_T0, LMK_T1 (unsigned char, int)
 * and LMK_SFX0, LMK_SFX1 (_u8, _i32) first. LMK_SFX0 and LMK_SFX1 stay defined: the emulator's
 * entries (../patterns.h) and the CUDA launchers (../cuda/cuda_host.h) use them.
 * No include guard: an includer includes it once, after body/simt_macros.h.
 */
#ifndef LMK_T0
#define LMK_T0 float
#define LMK_T1 double
#define LMK_SFX0 _f32
#define LMK_SFX1 _f64
#endif

#define T LMK_T0
#define KFN(name) LMK_CAT(name, LMK_SFX0)
#include LMK_BODY
#undef T
#undef KFN
#define T LMK_T1
#define KFN(name) LMK_CAT(name, LMK_SFX1)
#include LMK_BODY
#undef T
#undef KFN
