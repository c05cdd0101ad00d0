/*
 * cl_runtime.c — loading the OpenCL ICD loader, choosing the device, the program cache, device
 * memory behind addresses, and launches (cl_runtime.h says why each is as it is).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend/opencl/cl_runtime.h"
#include "lumen/opencl.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static lmi_cl cl;
static bool ready;
static char reason[512];
static void *lib;

/* every device of every platform, in order (for lm_opencl_describe) */
#define MAX_DEVICES 16
static struct {
	cl_platform_id platform;
	cl_device_id device;
} all[MAX_DEVICES];
static int ndevices, chosen = -1;

static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;
void lmi_cl_lock(void) { pthread_mutex_lock(&launch_lock); }
void lmi_cl_unlock(void) { pthread_mutex_unlock(&launch_lock); }

const char *lmi_cl_error_name(cl_int e)
{
	switch (e) {
#define N_(c) case c: return #c;
		N_(CL_SUCCESS)
		N_(CL_DEVICE_NOT_FOUND) N_(CL_DEVICE_NOT_AVAILABLE) N_(CL_COMPILER_NOT_AVAILABLE)
		    N_(CL_MEM_OBJECT_ALLOCATION_FAILURE) N_(CL_OUT_OF_RESOURCES) N_(
		        CL_OUT_OF_HOST_MEMORY) N_(CL_BUILD_PROGRAM_FAILURE) N_(CL_INVALID_VALUE)
		        N_(CL_INVALID_PLATFORM) N_(CL_INVALID_DEVICE) N_(CL_INVALID_CONTEXT) N_(
		            CL_INVALID_COMMAND_QUEUE) N_(CL_INVALID_MEM_OBJECT)
		            N_(CL_INVALID_BUILD_OPTIONS) N_(CL_INVALID_PROGRAM) N_(
		                CL_INVALID_PROGRAM_EXECUTABLE) N_(CL_INVALID_KERNEL_NAME)
		                N_(CL_INVALID_KERNEL) N_(CL_INVALID_ARG_INDEX) N_(
		                    CL_INVALID_ARG_VALUE) N_(CL_INVALID_ARG_SIZE)
		                    N_(CL_INVALID_KERNEL_ARGS) N_(CL_INVALID_WORK_DIMENSION) N_(
		                        CL_INVALID_WORK_GROUP_SIZE) N_(CL_INVALID_WORK_ITEM_SIZE)
		                        N_(CL_INVALID_GLOBAL_OFFSET) N_(CL_INVALID_EVENT) N_(
		                            CL_INVALID_OPERATION) N_(CL_INVALID_BUFFER_SIZE)
		                            N_(CL_INVALID_GLOBAL_WORK_SIZE) N_(
		                                CL_PROFILING_INFO_NOT_AVAILABLE)
		                                N_(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) N_(
		                                    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
		                                    N_(CL_MISALIGNED_SUB_BUFFER_OFFSET) case -1001
		    : return "CL_PLATFORM_NOT_FOUND_KHR";
#undef N_
	default: return "an OpenCL error";
	}
}

lm_status lmi_cl_fail(const char *fname, const char *call, cl_int e)
{
	bool oom = e == CL_MEM_OBJECT_ALLOCATION_FAILURE || e == CL_OUT_OF_HOST_MEMORY ||
	           e == CL_OUT_OF_RESOURCES;
	return lmi_fail(oom ? LM_ERR_NOMEM : LM_ERR_DEVICE, "%s: %s failed: %s (%d)", fname, call,
	                lmi_cl_error_name(e), (int)e);
}

/* ---------------------------------------------------------------- loading */

static void info_str(cl_device_id d, cl_device_info what, char *out, size_t cap)
{
	out[0] = '\0';
	if (cl.clGetDeviceInfo(d, what, cap, out, NULL) != CL_SUCCESS) out[0] = '\0';
	out[cap - 1] = '\0';
}

static bool pick(const char *want, int i)
{
	if (!want || !*want) return i == 0;
	char *end;
	long k = strtol(want, &end, 10);
	if (*end == '\0') return k == i;
	char name[256];
	info_str(all[i].device, CL_DEVICE_NAME, name, sizeof name);
	return strstr(name, want) != NULL;
}

static void load(void)
{
#ifndef LUMEN_OPENCL_BUILT
	snprintf(reason, sizeof reason, "this build has no OpenCL parts (the OpenCL headers, Debian's "
	                                "opencl-headers, were not found when it was configured)");
	return;
#endif
	const char *names[] = {"libOpenCL.so.1", "libOpenCL.so"};
	for (size_t i = 0; i < 2 && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(reason, sizeof reason, "no OpenCL ICD loader (libOpenCL.so.1: Debian's "
		                                "ocl-icd-libopencl1) could be loaded: %.200s", dlerror());
		return;
	}
#define LOAD_(f)                                                                                   \
	if (!(*(void **)&cl.f = dlsym(lib, #f))) {                                                 \
		snprintf(reason, sizeof reason, "the OpenCL loader lacks %s", #f);                 \
		return;                                                                            \
	}
	LMI_CL_FUNCS(LOAD_)
#undef LOAD_
	cl_platform_id plats[8];
	cl_uint np = 0;
	cl_int e = cl.clGetPlatformIDs(8, plats, &np);
	if (e != CL_SUCCESS || np == 0) {
		snprintf(
		    reason, sizeof reason,
		    "the OpenCL loader finds no platform (%s): install an "
		    "ICD such as PoCL (Debian's pocl-opencl-icd), which runs OpenCL on the CPU",
		    e == CL_SUCCESS || e == -1001 ? "none registered in /etc/OpenCL/vendors"
		                                  : lmi_cl_error_name(e));
		return;
	}
	for (cl_uint p = 0; p < np && p < 8; p++) {
		cl_device_id devs[MAX_DEVICES];
		cl_uint nd = 0;
		if (cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES, devs, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint d = 0; d < nd && ndevices < MAX_DEVICES; d++) {
			all[ndevices].platform = plats[p];
			all[ndevices++].device = devs[d];
		}
	}
	if (ndevices == 0) {
		snprintf(reason, sizeof reason, "the OpenCL platforms have no device");
		return;
	}
	const char *want = getenv("LUMEN_OPENCL_DEVICE");
	for (int i = 0; i < ndevices && chosen < 0; i++)
		if (pick(want, i)) chosen = i;
	if (chosen < 0) {
		snprintf(reason, sizeof reason, "LUMEN_OPENCL_DEVICE=%.100s names none of the %d OpenCL "
		         "devices (lm.opencl.devices() lists them)", want, ndevices);
		return;
	}
	cl.platform = all[chosen].platform;
	cl.device = all[chosen].device;
	info_str(cl.device, CL_DEVICE_NAME, cl.name, sizeof cl.name);
	cl.clGetDeviceInfo(cl.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof cl.max_work_group,
	                   &cl.max_work_group, NULL);
	cl.clGetDeviceInfo(cl.device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof cl.max_item, cl.max_item,
	                   NULL);
	cl.clGetDeviceInfo(cl.device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof cl.local_mem, &cl.local_mem,
	                   NULL);
	cl_device_fp_config fp = 0;
	cl.clGetDeviceInfo(cl.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL);
	cl.fp64 = fp != 0;
	cl.clGetDeviceInfo(cl.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cl.units, &cl.units, NULL);
	if (cl.units == 0) cl.units = 1;
	cl.ctx = cl.clCreateContext(NULL, 1, &cl.device, NULL, NULL, &e);
	if (e == CL_SUCCESS)
		cl.queue = cl.clCreateCommandQueue(cl.ctx, cl.device, CL_QUEUE_PROFILING_ENABLE, &e);
	if (e != CL_SUCCESS) {
		snprintf(reason, sizeof reason, "OpenCL device '%s': making a context and queue failed: "
		         "%s", cl.name, lmi_cl_error_name(e));
		return;
	}
	ready = true;
}

const lmi_cl *lmi_cl_get(const char *fname)
{
	pthread_once(&once, load);
	if (ready) return &cl;
	return lmi_fail_null(LM_ERR_DEVICE, "%s: no OpenCL device: %s", fname, reason);
}

bool lm_opencl_is_available(void)
{
	pthread_once(&once, load);
	return ready;
}

const char *lm_opencl_unavailable_reason(void)
{
	pthread_once(&once, load);
	return ready ? "" : reason;
}

const char *lm_opencl_device_name(void)
{
	return lmi_cl_get("opencl") ? cl.name : NULL;
}

int lm_opencl_device_count(void)
{
	pthread_once(&once, load);
	return ndevices;
}

lm_status lm_opencl_describe(int i, lm_opencl_device_info *d)
{
	pthread_once(&once, load);
	if (!d) return lmi_fail(LM_ERR_ARG, "opencl.devices: info must not be NULL");
	if (i < 0 || i >= ndevices)
		return lmi_fail(LM_ERR_INDEX, "opencl.devices: device %d of %d", i, ndevices);
	memset(d, 0, sizeof *d);
	cl_device_id dev = all[i].device;
	info_str(dev, CL_DEVICE_NAME, d->name, sizeof d->name);
	info_str(dev, CL_DEVICE_VERSION, d->version, sizeof d->version);
	info_str(dev, CL_DEVICE_OPENCL_C_VERSION, d->c_version, sizeof d->c_version);
	info_str(dev, CL_DRIVER_VERSION, d->driver, sizeof d->driver);
	d->platform[0] = '\0';
	cl.clGetPlatformInfo(all[i].platform, CL_PLATFORM_NAME, sizeof d->platform, d->platform, NULL);
	d->platform[sizeof d->platform - 1] = '\0';
	cl_uint cu = 0;
	cl_ulong gm = 0, lm = 0, ma = 0;
	size_t wg = 0;
	cl_device_fp_config fp = 0;
	cl.clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
	cl.clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gm, &gm, NULL);
	cl.clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL);
	cl.clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof ma, &ma, NULL);
	cl.clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
	cl.clGetDeviceInfo(dev, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL);
	d->compute_units = (int)cu;
	d->global_mem = (int64_t)gm, d->local_mem = (int64_t)lm, d->max_alloc = (int64_t)ma;
	d->max_work_group = (int64_t)wg;
	d->fp64 = fp != 0;
	d->in_use = ready && i == chosen;
	return LM_OK;
}

lm_status lm_opencl_synchronize(void)
{
	if (!lmi_cl_get("opencl.synchronize")) return lm_last_status();
	cl_int e = cl.clFinish(cl.queue);
	return e == CL_SUCCESS ? LM_OK : lmi_cl_fail("opencl.synchronize", "clFinish", e);
}

/* ---------------------------------------------------------------- programs */

typedef struct entry {
	struct entry *next;
	uint64_t hash;
	char *key; /* options, '\0', source */
	size_t keylen;
	cl_program program;
} entry;
static entry *programs;
static pthread_mutex_t program_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t compiles, hits;

void lm_opencl_program_stats(int64_t *c, int64_t *h)
{
	pthread_mutex_lock(&program_lock);
	if (c) *c = compiles;
	if (h) *h = hits;
	pthread_mutex_unlock(&program_lock);
}

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The compiler's temporary file names in a build log ("/root/.cache/pocl/kcache/tempfile_x.cl:2:10")
 * become "<source>", so that a message points at the source's lines; "Device ... failed to build
 * the program" lines, which repeat the error, go. In place. */
static void tidy_log(char *log)
{
	char *w = log;
	for (char *r = log; *r;) {
		char *line_end = strchr(r, '\n');
		size_t len = line_end ? (size_t)(line_end - r) + 1 : strlen(r);
		if (strncmp(r, "Device ", 7) == 0 && memmem(r, len, "failed to build", 15)) {
			r += len;
			continue;
		}
		char *cl_at = memmem(r, len, ".cl:", 4);
		if (cl_at) {
			char *start = cl_at;
			while (start > r && start[-1] != ' ' && start[-1] != '\t') start--;
			size_t head = (size_t)(start - r);
			memmove(w, r, head);
			w += head;
			memcpy(w, "<source>", 8);
			w += 8;
			size_t rest = len - (size_t)(cl_at + 3 - r);
			memmove(w, cl_at + 3, rest);
			w += rest;
		} else {
			memmove(w, r, len);
			w += len;
		}
		r += len;
	}
	*w = '\0';
	while (w > log && (w[-1] == '\n' || w[-1] == ' ')) *--w = '\0';
}

cl_program lmi_cl_program(const char *fname, const char *what, const char *src, size_t len,
                          const char *options, lmi_cl_build *info)
{
	if (!lmi_cl_get(fname)) return NULL;
	if (!options) options = "";
	size_t olen = strlen(options), keylen = olen + 1 + len;
	uint64_t h = fnv(fnv(1469598103934665603ull, options, olen + 1), src, len);
	pthread_mutex_lock(&program_lock);
	for (entry *e = programs; e; e = e->next)
		if (e->hash == h && e->keylen == keylen && memcmp(e->key, options, olen + 1) == 0 &&
		    memcmp(e->key + olen + 1, src, len) == 0) {
			hits++;
			pthread_mutex_unlock(&program_lock);
			if (info) *info = (lmi_cl_build){0, true};
			return e->program;
		}
	double t0 = now_ms();
	cl_int err;
	cl_program p = cl.clCreateProgramWithSource(cl.ctx, 1, &src, &len, &err);
	if (err != CL_SUCCESS) {
		pthread_mutex_unlock(&program_lock);
		lmi_cl_fail(fname, "clCreateProgramWithSource", err);
		return NULL;
	}
	/* PoCL's compiler also prints its diagnostics ("1 error generated.") on stderr; they are in
	 * the build log, which the error carries, so stderr is quiet while it builds */
	fflush(stderr);
	int saved = fcntl(2, F_DUPFD_CLOEXEC, 0), quiet = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (saved >= 0 && quiet >= 0) dup2(quiet, 2);
	err = cl.clBuildProgram(p, 1, &cl.device, options, NULL, NULL);
	if (saved >= 0 && quiet >= 0) dup2(saved, 2);
	if (saved >= 0) close(saved);
	if (quiet >= 0) close(quiet);
	if (err != CL_SUCCESS) {
		size_t n = 0;
		cl.clGetProgramBuildInfo(p, cl.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
		char *log = malloc(n + 1);
		if (log) {
			log[0] = '\0';
			cl.clGetProgramBuildInfo(p, cl.device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
			log[n] = '\0';
			while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == '\0')) log[--n] = '\0';
		}
		cl.clReleaseProgram(p);
		pthread_mutex_unlock(&program_lock);
		if (log) tidy_log(log);
		if (err == CL_BUILD_PROGRAM_FAILURE)
			lmi_fail(LM_ERR_ARG, "%s: the OpenCL C source (%s) does not compile on %s:\n%.3500s",
			         fname, what, cl.name, log && *log ? log : "(the compiler left no log)");
		else
			lmi_fail(LM_ERR_DEVICE, "%s: building the OpenCL program (%s) failed: %s%s%.2000s",
			         fname, what, lmi_cl_error_name(err), log && *log ? "\n" : "",
			         log ? log : "");
		free(log);
		return NULL;
	}
	entry *e = malloc(sizeof *e);
	char *key = malloc(keylen);
	if (!e || !key) {
		free(e);
		free(key);
		cl.clReleaseProgram(p);
		pthread_mutex_unlock(&program_lock);
		return lmi_fail_null(LM_ERR_NOMEM, "%s: out of memory", fname);
	}
	memcpy(key, options, olen + 1);
	memcpy(key + olen + 1, src, len);
	*e = (entry){programs, h, key, keylen, p};
	programs = e;
	compiles++;
	pthread_mutex_unlock(&program_lock);
	if (info) *info = (lmi_cl_build){now_ms() - t0, false};
	return p;
}

cl_kernel lmi_cl_kernel(const char *fname, cl_program p, const char *name)
{
	cl_int e;
	cl_kernel k = cl.clCreateKernel(p, name, &e);
	if (e != CL_SUCCESS) {
		if (e == CL_INVALID_KERNEL_NAME)
			return lmi_fail_null(LM_ERR_ARG, "%s: the program has no kernel '%s'", fname, name);
		lmi_cl_fail(fname, "clCreateKernel", e);
		return NULL;
	}
	return k;
}

/* ---------------------------------------------------------------- memory behind addresses */

typedef struct range {
	char *base;
	size_t span; /* reserved bytes (more than the buffer's: a one-past-the-end address is its own) */
	size_t bytes;
	cl_mem mem;
} range;
static range *ranges;
static size_t nranges, cap_ranges;
static pthread_rwlock_t range_lock = PTHREAD_RWLOCK_INITIALIZER;

/* the index of the last range with base <= p, or -1 */
static ptrdiff_t find(const char *p)
{
	size_t lo = 0, hi = nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ranges[mid].base <= p) lo = mid + 1;
		else hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

void *lmi_cl_alloc(size_t n)
{
	static const char *const fname = "opencl alloc";
	if (!lmi_cl_get(fname)) return NULL;
	cl_int e;
	cl_mem m = cl.clCreateBuffer(cl.ctx, CL_MEM_READ_WRITE, n ? n : 8, NULL, &e);
	if (e != CL_SUCCESS) {
		lmi_cl_fail(fname, "clCreateBuffer", e);
		return NULL;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE), span = (n / page + 1) * page;
	char *base = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		cl.clReleaseMemObject(m);
		return lmi_fail_null(LM_ERR_NOMEM, "%s: no address range left for %zu bytes", fname, n);
	}
	pthread_rwlock_wrlock(&range_lock);
	if (nranges == cap_ranges) {
		size_t c = cap_ranges ? 2 * cap_ranges : 64;
		range *r = realloc(ranges, c * sizeof *r);
		if (!r) {
			pthread_rwlock_unlock(&range_lock);
			munmap(base, span);
			cl.clReleaseMemObject(m);
			return lmi_fail_null(LM_ERR_NOMEM, "%s: out of host memory", fname);
		}
		ranges = r, cap_ranges = c;
	}
	size_t at = (size_t)(find(base) + 1);
	memmove(ranges + at + 1, ranges + at, (nranges - at) * sizeof *ranges);
	ranges[at] = (range){base, span, n, m};
	nranges++;
	pthread_rwlock_unlock(&range_lock);
	return base;
}

void lmi_cl_free(void *p)
{
	if (!p) return;
	pthread_rwlock_wrlock(&range_lock);
	ptrdiff_t i = find(p);
	LM_ASSERT(i >= 0 && ranges[i].base == p);
	range r = ranges[i];
	memmove(ranges + i, ranges + i + 1, (nranges - (size_t)i - 1) * sizeof *ranges);
	nranges--;
	pthread_rwlock_unlock(&range_lock);
	cl.clReleaseMemObject(r.mem);
	munmap(r.base, r.span);
}

bool lmi_cl_ref(const void *p, cl_mem *mem, size_t *off)
{
	pthread_rwlock_rdlock(&range_lock);
	ptrdiff_t i = find(p);
	bool ok = i >= 0 && (const char *)p <= ranges[i].base + ranges[i].bytes;
	if (ok) *mem = ranges[i].mem, *off = (size_t)((const char *)p - ranges[i].base);
	pthread_rwlock_unlock(&range_lock);
	return ok;
}

/* ---------------------------------------------------------------- arguments and launches */

void lmi_cl_arg(lmi_cl_args *a, size_t size, const void *value)
{
	if (a->err) return;
	cl_int e = cl.clSetKernelArg(a->k, a->i++, size, value);
	if (e) a->err = e, a->what = "value";
}

void lmi_cl_arg_array(lmi_cl_args *a, const void *p, size_t elem)
{
	cl_mem m = NULL;
	size_t off = 0;
	if (a->err) return;
	if (!lmi_cl_ref(p, &m, &off)) {
		a->err = CL_INVALID_MEM_OBJECT, a->what = "array (no OpenCL buffer holds it)";
		return;
	}
	cl_long eo = (cl_long)(off / elem);
	lmi_cl_arg(a, sizeof m, &m);
	lmi_cl_arg(a, sizeof eo, &eo);
}

void lmi_cl_arg_local(lmi_cl_args *a, size_t bytes)
{
	lmi_cl_arg(a, bytes ? bytes : 1, NULL);
}

lm_status lmi_cl_launch(const char *fname, cl_kernel k, cl_uint dims, const size_t *global,
                        const size_t *local, double *ms)
{
	cl_event ev = NULL;
	for (cl_uint d = 0; d < dims; d++)
		if (global[d] == 0) return LM_OK; /* nothing to run */
	cl_int e = cl.clEnqueueNDRangeKernel(cl.queue, k, dims, NULL, global, local, 0, NULL,
	                                     ms ? &ev : NULL);
	if (e != CL_SUCCESS) return lmi_cl_fail(fname, "clEnqueueNDRangeKernel", e);
	if (!ms) return LM_OK;
	cl_ulong t0 = 0, t1 = 0;
	e = cl.clWaitForEvents(1, &ev);
	if (e == CL_SUCCESS)
		e = cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
	if (e == CL_SUCCESS)
		e = cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
	cl.clReleaseEvent(ev);
	if (e != CL_SUCCESS) return lmi_cl_fail(fname, "waiting for a kernel", e);
	*ms = (double)(t1 - t0) / 1e6;
	return LM_OK;
}

lm_status lmi_cl_launch_1d(const char *fname, cl_kernel k, size_t n)
{
	size_t local = cl.max_work_group < 256 ? cl.max_work_group : 256;
	size_t groups = (n + local - 1) / local, most = ((size_t)1 << 30) / local;
	size_t global = (groups < most ? groups : most) * local;
	return lmi_cl_launch(fname, k, 1, &global, &local, NULL);
}
