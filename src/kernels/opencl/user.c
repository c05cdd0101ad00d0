/*
 * user.c — kernels.opencl: an OpenCL C kernel a student writes as a string, built and run on the
 * OpenCL device with tensors and numbers as its arguments (lumen/kernels.h, lm_kernel_opencl).
 *
 * Design: the program is built with -cl-kernel-arg-info, so every parameter can be checked
 * against what was passed before anything runs: a pointer to __global or __constant memory takes
 * a tensor of the pointee's dtype (float -> float32, int -> int32, ...), a __local pointer a
 * byte count, a value parameter a number that fits its type. Tensors are copied into buffers of
 * their own (a CPU tensor from its data, an OpenCL tensor by a device copy), and after the last
 * run every tensor whose parameter is not const gets the buffer's bytes back, in place. Each of
 * the `repeats` runs starts from the arguments as given (the buffers are refilled, untimed), so
 * a kernel that accumulates (+=, atomics) gives the result of one run; its time is the event's
 * (start to end), the median over the runs. The source is the student's alone, so the build
 * log's <source>:LINE:COL are lines of what they wrote.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/opencl/cl_runtime.h"
#include "lumen/kernels.h"

static const char *const fname = "kernels.opencl";

/* the dtype a pointee or value type name stands for; LM_DTYPE_COUNT: none */
static lm_dtype dtype_of(const char *type, bool *is_unsigned)
{
	static const struct {
		const char *name;
		lm_dtype dt;
		bool u;
	} map[] = {{"float", LM_FLOAT32, 0}, {"double", LM_FLOAT64, 0}, {"int", LM_INT32, 0},
	           {"uint", LM_INT32, 1},    {"long", LM_INT64, 0},    {"ulong", LM_INT64, 1},
	           {"uchar", LM_UINT8, 1},   {"char", LM_INT8, 0},     {"unsigned int", LM_INT32, 1},
	           {"unsigned char", LM_UINT8, 1}};
	char t[64];
	snprintf(t, sizeof t, "%s", type);
	char *star = strchr(t, '*');
	if (star) *star = '\0';
	for (size_t n = strlen(t); n > 0 && t[n - 1] == ' '; n--) t[n - 1] = '\0';
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcmp(t, map[i].name) == 0) {
			if (is_unsigned) *is_unsigned = map[i].u;
			return map[i].dt;
		}
	return LM_DTYPE_COUNT;
}

typedef struct param {
	char name[64], type[64];
	cl_kernel_arg_address_qualifier space;
	bool is_const;
	void *buf;      /* the tensor's buffer (device address) */
	size_t bytes;
	const void *src;    /* what refills it: host bytes, or a device address */
	bool src_on_device;
	void *host;     /* a CPU tensor's contiguous bytes (owned) */
} param;

static void release(param *p, int n)
{
	for (int i = 0; i < n; i++) {
		if (p[i].buf) lmi_cl_free(p[i].buf);
		free(p[i].host);
	}
}

/* buffer <- its source (a refill before each run) */
static lm_status fill(const lmi_cl *cl, param *p)
{
	cl_mem m, s;
	size_t off, soff;
	lmi_cl_ref(p->buf, &m, &off);
	if (p->bytes == 0) return LM_OK;
	cl_int e;
	if (p->src_on_device) {
		lmi_cl_ref(p->src, &s, &soff);
		e = cl->clEnqueueCopyBuffer(cl->queue, s, m, soff, 0, p->bytes, 0, NULL, NULL);
	} else {
		e = cl->clEnqueueWriteBuffer(cl->queue, m, CL_TRUE, 0, p->bytes, p->src, 0, NULL, NULL);
	}
	return e ? lmi_cl_fail(fname, "copying an argument in", e) : LM_OK;
}

/* the kernel to run: `want`, or the program's only one */
static cl_kernel pick_kernel(const lmi_cl *cl, cl_program prog, const char *want, char *name,
                             size_t cap)
{
	if (want && *want) {
		snprintf(name, cap, "%s", want);
		return lmi_cl_kernel(fname, prog, want);
	}
	cl_kernel ks[16];
	cl_uint n = 0;
	cl_int e = cl->clCreateKernelsInProgram(prog, 16, ks, &n);
	if (e) {
		lmi_cl_fail(fname, "clCreateKernelsInProgram", e);
		return NULL;
	}
	if (n == 0) return lmi_fail_null(LM_ERR_ARG, "%s: the source defines no __kernel function", fname);
	char names[512] = "";
	for (cl_uint i = 0; i < n; i++) {
		char nm[64] = "";
		cl->clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof nm, nm, NULL);
		size_t l = strlen(names);
		snprintf(names + l, sizeof names - l, "%s'%s'", i ? ", " : "", nm);
		if (i == 0) snprintf(name, cap, "%s", nm);
	}
	for (cl_uint i = 1; i < n; i++) cl->clReleaseKernel(ks[i]);
	if (n > 1) {
		cl->clReleaseKernel(ks[0]);
		return lmi_fail_null(LM_ERR_ARG, "%s: the source defines %u kernels (%s): name the one to "
		                     "run with kernel = '...'", fname, n, names);
	}
	return ks[0];
}

static lm_status check_sizes(const lmi_cl *cl, const lm_opencl_launch *l)
{
	if (l->dims < 1 || l->dims > 3)
		return lmi_fail(LM_ERR_ARG, "%s: global has %d dims (1 to 3)", fname, l->dims);
	size_t group = 1;
	for (int d = 0; d < l->dims; d++) {
		if (l->global[d] <= 0)
			return lmi_fail(LM_ERR_ARG, "%s: global size %lld in dimension %d: every size must "
			                "be at least 1", fname, (long long)l->global[d], d);
		if (!l->has_local) continue;
		if (l->local[d] <= 0)
			return lmi_fail(LM_ERR_ARG, "%s: local size %lld in dimension %d: every size must "
			                "be at least 1", fname, (long long)l->local[d], d);
		if ((size_t)l->local[d] > cl->max_item[d])
			return lmi_fail(LM_ERR_ARG, "%s: local size %lld in dimension %d exceeds the "
			                "device's limit of %zu work-items", fname, (long long)l->local[d], d,
			                cl->max_item[d]);
		if (l->global[d] % l->local[d] != 0) {
			long long g = l->global[d], loc = l->local[d], up = (g + loc - 1) / loc * loc;
			return lmi_fail(LM_ERR_ARG, "%s: local size %lld does not divide global size %lld in "
			                "dimension %d (get_global_id(%d)): OpenCL counts global in work-items, "
			                "not groups: round it up to %lld (and guard the work-items past the "
			                "end), or, if %lld was a count of groups, give %lld", fname, loc, g, d,
			                d, up, g, g * loc);
		}
		group *= (size_t)l->local[d];
	}
	if (l->has_local && group > cl->max_work_group)
		return lmi_fail(LM_ERR_ARG, "%s: a work-group of %zu work-items exceeds the device's "
		                "limit of %zu", fname, group, cl->max_work_group);
	return LM_OK;
}

/* Checks argument i against parameter p and sets it. */
static lm_status set_arg(cl_kernel k, int i, param *p, const lm_opencl_arg *a)
{
	lmi_cl_args A = {k, (cl_uint)i, 0, NULL};
	bool pointer = strchr(p->type, '*') != NULL;
	if (p->space == CL_KERNEL_ARG_ADDRESS_LOCAL) {
		if (a->kind != LM_OPENCL_ARG_LOCAL)
			return lmi_fail(LM_ERR_ARG, "%s: argument %d (%s %s) is a __local pointer: pass "
			                "{local_bytes = N}", fname, i + 1, p->type, p->name);
		lmi_cl_arg_local(&A, (size_t)a->local_bytes);
	} else if (pointer) {
		if (a->kind != LM_OPENCL_ARG_TENSOR)
			return lmi_fail(LM_ERR_ARG, "%s: argument %d (%s %s) points to %s memory: pass a "
			                "tensor", fname, i + 1, p->type, p->name,
			                p->space == CL_KERNEL_ARG_ADDRESS_CONSTANT ? "__constant" : "__global");
		lm_tensor *t = a->tensor;
		lm_dtype want = dtype_of(p->type, NULL);
		if (want == LM_DTYPE_COUNT)
			return lmi_fail(LM_ERR_UNSUPPORTED, "%s: argument %d (%s %s): Lumen passes tensors of "
			                "float, double, int, uint, long, ulong, uchar and char", fname, i + 1,
			                p->type, p->name);
		if (t->dtype != want)
			return lmi_fail(LM_ERR_DTYPE, "%s: argument %d (%s %s) wants a %s tensor, got %s",
			                fname, i + 1, p->type, p->name, lm_dtype_name(want),
			                lm_dtype_name(t->dtype));
		p->bytes = lm_tensor_nbytes(t);
		if (!(p->buf = lmi_cl_alloc(p->bytes))) return lm_last_status();
		if (t->storage->device == LM_OPENCL) {
			if (!lm_tensor_is_contiguous(t))
				return lmi_fail(LM_ERR_ARG, "%s: argument %d (%s) is a strided view on the OpenCL "
				                "device: pass x:contiguous()", fname, i + 1, p->name);
			p->src = lmi_data(t), p->src_on_device = true;
		} else if (t->storage->device == LM_CPU) {
			lm_tensor *c = lm_contiguous(t);
			if (!c) return lm_last_status();
			p->host = malloc(p->bytes ? p->bytes : 1);
			if (p->host && p->bytes) memcpy(p->host, lmi_data(c), p->bytes);
			lm_tensor_release(c);
			if (!p->host) return lmi_fail(LM_ERR_NOMEM, "%s: out of memory", fname);
			p->src = p->host;
		} else {
			return lmi_fail(LM_ERR_DEVICE, "%s: argument %d (%s) is on %s: pass a CPU or OpenCL "
			                "tensor", fname, i + 1, p->name, lm_device_name(t->storage->device));
		}
		cl_mem m;
		size_t off;
		lmi_cl_ref(p->buf, &m, &off);
		lmi_cl_arg(&A, sizeof m, &m);
	} else {
		if (a->kind != LM_OPENCL_ARG_NUMBER)
			return lmi_fail(LM_ERR_ARG, "%s: argument %d (%s %s) is a value: pass a number",
			                fname, i + 1, p->type, p->name);
		bool u = false;
		lm_dtype dt = dtype_of(p->type, &u);
		double v = a->number;
		if (dt == LM_DTYPE_COUNT)
			return lmi_fail(LM_ERR_UNSUPPORTED, "%s: argument %d (%s %s): Lumen passes numbers "
			                "as float, double, int, uint, long, ulong, uchar or char", fname,
			                i + 1, p->type, p->name);
		if (dt != LM_FLOAT32 && dt != LM_FLOAT64) {
			double lo = u                ? 0
			            : dt == LM_INT8  ? -128
			            : dt == LM_INT32 ? -2147483648.0
			                             : -9.2233720368547758e18;
			double hi = dt == LM_UINT8  ? 255
			            : dt == LM_INT8 ? 127
			            : dt == LM_INT32
			                ? (u ? 4294967295.0 : 2147483647.0)
			                : (u ? 1.8446744073709552e19 : 9.2233720368547758e18);
			if (v != floor(v) || v < lo || v > hi)
				return lmi_fail(LM_ERR_ARG, "%s: argument %d (%s %s) is %.17g, which is no %s value",
				                fname, i + 1, p->type, p->name, v, p->type);
		}
		/* the value in the parameter's own width (dtype_of's types) */
		if (dt == LM_FLOAT32) {
			cl_float x = (cl_float)v;
			lmi_cl_arg(&A, sizeof x, &x);
		} else if (dt == LM_FLOAT64) {
			lmi_cl_arg(&A, sizeof v, &v);
		} else if (dt == LM_INT32) {
			cl_uint x = u ? (cl_uint)v : (cl_uint)(cl_int)v;
			lmi_cl_arg(&A, sizeof x, &x);
		} else if (dt == LM_INT64) {
			cl_ulong x = u ? (cl_ulong)v : (cl_ulong)(cl_long)v;
			lmi_cl_arg(&A, sizeof x, &x);
		} else {
			cl_uchar x = (cl_uchar)(int)v;
			lmi_cl_arg(&A, sizeof x, &x);
		}
	}
	if (A.err)
		return lmi_fail(LM_ERR_ARG, "%s: argument %d (%s %s): clSetKernelArg failed: %s", fname,
		                i + 1, p->type, p->name, lmi_cl_error_name(A.err));
	return LM_OK;
}

/* a non-const tensor argument gets its buffer back */
static lm_status copy_back(const lmi_cl *cl, param *p, lm_tensor *t)
{
	cl_mem m;
	size_t off;
	lmi_cl_ref(p->buf, &m, &off);
	if (p->bytes == 0) return LM_OK;
	if (t->storage->device == LM_OPENCL) {
		cl_mem d;
		size_t doff;
		lmi_cl_ref(lmi_data(t), &d, &doff);
		cl_int e = cl->clEnqueueCopyBuffer(cl->queue, m, d, 0, doff, p->bytes, 0, NULL, NULL);
		lmi_bump_version(t);
		return e ? lmi_cl_fail(fname, "copying a result back", e) : LM_OK;
	}
	cl_int e = cl->clEnqueueReadBuffer(cl->queue, m, CL_TRUE, 0, p->bytes, p->host, 0, NULL, NULL);
	if (e) return lmi_cl_fail(fname, "copying a result back", e);
	lm_tensor *c = lm_from_data(p->host, t->ndim, t->shape, t->dtype);
	if (!c) return lm_last_status();
	lm_status s = lm_copy_(t, c);
	lm_tensor_release(c);
	return s;
}

/* A build failure's message with the first error's line of the source shown under it, a caret at
 * its column (the log gives <source>:LINE:COL). */
static lm_status point_at_line(const char *source)
{
	lm_status st = lm_last_status();
	char msg[4096];
	snprintf(msg, sizeof msg, "%s", lm_last_error());
	const char *at = strstr(msg, "<source>:");
	long line = 0, col = 0;
	if (st != LM_ERR_ARG || !at || sscanf(at, "<source>:%ld:%ld", &line, &col) != 2 || line < 1)
		return st;
	const char *p = source;
	for (long k = 1; k < line && p; k++) {
		p = strchr(p, '\n');
		if (p) p++;
	}
	if (!p) return st;
	int len = (int)strcspn(p, "\n");
	char caret[256];
	int c = col > 0 && col < 200 ? (int)col - 1 : 0;
	for (int k = 0; k < c; k++) caret[k] = p[k] == '\t' ? '\t' : ' ';
	caret[c] = '^';
	caret[c + 1] = '\0';
	return lmi_fail(st, "%s\n%5ld | %.*s\n      | %s", msg, line, len > 200 ? 200 : len, p, caret);
}

lm_status lm_kernel_opencl(const char *source, const lm_opencl_launch *l, lm_opencl_result *res)
{
	if (!source || !l || !res)
		return lmi_fail(LM_ERR_ARG, "%s: source, launch and result must not be NULL",
		                fname);
	memset(res, 0, sizeof *res);
	const lmi_cl *cl = lmi_cl_get(fname);
	if (!cl) return lm_last_status();
	lm_status s = check_sizes(cl, l);
	if (s) return s;
	if (l->repeats < 1 || l->repeats > 1000)
		return lmi_fail(LM_ERR_ARG, "%s: repeats is %d (1 to 1000)", fname, l->repeats);
	lmi_cl_build b;
	cl_program prog = lmi_cl_program(fname, "the kernel given", source, strlen(source),
	                                 "-cl-kernel-arg-info", &b);
	if (!prog) return point_at_line(source);
	res->compile_ms = b.compile_ms;
	res->cached = b.cached;
	cl_kernel k = pick_kernel(cl, prog, l->kernel, res->kernel, sizeof res->kernel);
	if (!k) return lm_last_status();
	snprintf(res->device, sizeof res->device, "%s", cl->name);
	cl_uint nargs = 0;
	cl->clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
	param *p = calloc(nargs ? nargs : 1, sizeof *p);
	if (!p) {
		cl->clReleaseKernel(k);
		return lmi_fail(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	for (cl_uint i = 0; i < nargs; i++) {
		cl_kernel_arg_type_qualifier tq = 0;
		cl->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof p[i].name, p[i].name, NULL);
		cl->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof p[i].type, p[i].type, NULL);
		cl->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof p[i].space,
		                       &p[i].space, NULL);
		cl->clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
		p[i].is_const = (tq & CL_KERNEL_ARG_TYPE_CONST) != 0 ||
		                p[i].space == CL_KERNEL_ARG_ADDRESS_CONSTANT;
	}
	if ((int)nargs != l->nargs)
		s = lmi_fail(LM_ERR_ARG, "%s: kernel '%s' takes %u arguments, %d given", fname, res->kernel,
		             nargs, l->nargs);
	lmi_cl_lock();
	for (cl_uint i = 0; !s && i < nargs; i++) s = set_arg(k, (int)i, &p[i], &l->args[i]);
	double *times = s ? NULL : calloc((size_t)l->repeats, sizeof *times);
	if (!s && !times) s = lmi_fail(LM_ERR_NOMEM, "%s: out of memory", fname);
	size_t global[3], local[3];
	for (int d = 0; d < l->dims; d++) global[d] = (size_t)l->global[d], local[d] = (size_t)l->local[d];
	for (int r = 0; !s && r < l->repeats; r++) {
		for (cl_uint i = 0; !s && i < nargs; i++)
			if (p[i].buf && (r == 0 || !p[i].is_const)) s = fill(cl, &p[i]);
		if (!s) s = lmi_cl_launch(fname, k, (cl_uint)l->dims, global, l->has_local ? local : NULL,
		                          &times[r]);
	}
	lmi_cl_unlock();
	for (cl_uint i = 0; !s && i < nargs; i++)
		if (p[i].buf && !p[i].is_const) s = copy_back(cl, &p[i], l->args[i].tensor);
	if (!s) {
		for (int i = 1; i < l->repeats; i++)
			for (int j = i; j > 0 && times[j - 1] > times[j]; j--) {
				double t = times[j];
				times[j] = times[j - 1];
				times[j - 1] = t;
			}
		int n = l->repeats;
		res->time_ms = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
	}
	free(times);
	release(p, (int)nargs);
	free(p);
	cl->clReleaseKernel(k);
	return s;
}
