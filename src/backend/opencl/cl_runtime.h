/*
 * cl_runtime.h — the OpenCL runtime as liblumen uses it: the ICD loader's functions (dlopen'ed on
 * first use, never linked), the one device, context and profiling queue, programs built from
 * source and kept by (source, options), device memory behind plain addresses, and launches.
 *
 * Design: liblumen's devices keep their memory behind void * (lm_storage.data, lmi_data adds the
 * byte offset); an OpenCL buffer is a handle, not an address. Each buffer therefore gets an
 * address range of its own (reserved with mmap PROT_NONE: no memory behind it, never touched),
 * and lmi_cl_ref turns any address inside a range back into (buffer, byte offset): views, offsets
 * and the core's pointer arithmetic work unchanged, and a kernel takes each array as its buffer
 * and an element offset. Programs are built once per (source, options) and kept for the process
 * (PoCL keeps the compiled binaries on disk too: the first build of a session after a reboot is
 * the slow one). Launches are serialised by one lock (a kernel's arguments are set, then it is
 * queued); the queue is in order and profiling, so every launch can be timed by its event.
 * Read next: cl_runtime.c, backend_opencl.c (the tensor device), tensor.cl (its kernels),
 * ../../kernels/opencl/ (the course's kernels and the student's).
 */
#ifndef LUMEN_BACKEND_OPENCL_RUNTIME_H
#define LUMEN_BACKEND_OPENCL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#include "core/lmi.h"

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define LMI_CL_FUNCS(X)                                                                            \
	X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)              \
	X(clCreateContext) X(clCreateCommandQueue) X(clCreateBuffer) X(clReleaseMemObject)         \
	X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clEnqueueCopyBuffer) X(clEnqueueFillBuffer) \
	X(clCreateProgramWithSource) X(clBuildProgram) X(clGetProgramBuildInfo) X(clReleaseProgram) \
	X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) X(clGetKernelInfo)                  \
	X(clGetKernelArgInfo) X(clGetKernelWorkGroupInfo) X(clEnqueueNDRangeKernel) X(clFinish)    \
	X(clWaitForEvents) X(clGetEventProfilingInfo) X(clReleaseEvent) X(clCreateKernelsInProgram)

typedef struct lmi_cl {
#define LMI_CL_PTR_(f) __typeof__(f) *f;
	LMI_CL_FUNCS(LMI_CL_PTR_)
#undef LMI_CL_PTR_
	cl_platform_id platform;
	cl_device_id device;
	cl_context ctx;
	cl_command_queue queue;
	char name[256];
	size_t max_work_group;
	size_t max_item[3];
	cl_ulong local_mem;
	cl_uint units; /* compute units */
	bool fp64;
} lmi_cl;

/* The runtime, loaded on the first call; NULL with LM_ERR_DEVICE and a message starting with
 * fname that says why (no loader, no platform, no device, built without the headers). */
const lmi_cl *lmi_cl_get(const char *fname);
/* CL_INVALID_WORK_GROUP_SIZE -> "CL_INVALID_WORK_GROUP_SIZE". */
const char *lmi_cl_error_name(cl_int e);
/* Sets "fname: call failed: CL_..." (LM_ERR_NOMEM for the out-of-memory codes) and returns it. */
lm_status lmi_cl_fail(const char *fname, const char *call, cl_int e);

/* What building a program cost: milliseconds, 0 when it came from the cache. */
typedef struct lmi_cl_build {
	double compile_ms;
	bool cached;
} lmi_cl_build;
/* The program of src (len bytes) built with options (NULL: none), from the cache when it was built
 * before. A source that does not compile: NULL and LM_ERR_ARG "fname: the OpenCL C source
 * (what) does not compile:\n<the build log>". The program stays the cache's. */
cl_program lmi_cl_program(const char *fname, const char *what, const char *src, size_t len,
                          const char *options, lmi_cl_build *info);
/* Kernel name of p (the caller releases it); NULL with the error set. */
cl_kernel lmi_cl_kernel(const char *fname, cl_program p, const char *name);

/* Device memory: a buffer of n bytes behind an address of its own (see above); NULL with
 * LM_ERR_NOMEM / LM_ERR_DEVICE. */
void *lmi_cl_alloc(size_t n);
void lmi_cl_free(void *p);
/* The buffer and byte offset of device address p; false when p is no device address. */
bool lmi_cl_ref(const void *p, cl_mem *mem, size_t *off);

/* Setting a kernel's arguments in order: the first error is kept in err. */
typedef struct lmi_cl_args {
	cl_kernel k;
	cl_uint i;
	cl_int err;
	const char *what; /* the failing argument's kind, for the message */
} lmi_cl_args;
void lmi_cl_arg(lmi_cl_args *a, size_t size, const void *value);
/* A device array: two parameters, the buffer and the element offset (a long) of p in it. */
void lmi_cl_arg_array(lmi_cl_args *a, const void *p, size_t elem);
/* A __local parameter of bytes (at least 1). */
void lmi_cl_arg_local(lmi_cl_args *a, size_t bytes);

/* Queues k over global (dims 1..3; local NULL: the runtime's choice); ms non-NULL: waits and
 * sets the kernel's time from its event. The caller holds lmi_cl_lock from its first argument. */
lm_status lmi_cl_launch(const char *fname, cl_kernel k, cl_uint dims, const size_t *global,
                        const size_t *local, double *ms);
/* Queues k, a kernel that loops over n items with a stride of the launch's size, in groups of
 * 256 (fewer where the device allows fewer): a work-item an item up to 2^30 of them (PoCL
 * vectorizes a work-group's work-items, not a work-item's loop: one element each runs several
 * times faster than a grid-stride loop over many). */
lm_status lmi_cl_launch_1d(const char *fname, cl_kernel k, size_t n);
void lmi_cl_lock(void);
void lmi_cl_unlock(void);

/* The embedded sources (generated from the .cl and body files at build time): the text of
 * name ("tensor.cl", "body/reduce.h") and its length; NULL when there is none. */
const char *lmi_cl_source(const char *name, size_t *len);

#endif
