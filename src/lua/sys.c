/*
 * sys.c — the process around the tensors: memory statistics and cap (lm.memory,
 * lm.set_memory_limit, lm.empty_cache), threads, build information, lm.cuda, and lm.sys (a
 * monotonic clock, directory listing and the terminal's size, used by the test runner, the
 * benchmarks and the lesson runner).
 *
 * Nothing here touches tensors. Read next: lumen.c (how the module is put together).
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lml.h"
#include "lumen/io.h"
#include "lumen/cuda.h"
#include "lumen/opencl.h"

/* lm.memory() -> {live_bytes=, peak_bytes=, cached_bytes=, limit_bytes=, allocs=, cache_hits=,
 * live_tensors=} */
static int l_memory(lua_State *L)
{
	lm_memory_stats s;
	lm_memory_stats_get(&s);
	lua_createtable(L, 0, 8);
	lml_setint(L, "live_bytes", (int64_t)s.live_bytes);
	lml_setint(L, "peak_bytes", (int64_t)s.peak_bytes);
	lml_setint(L, "cached_bytes", (int64_t)s.cached_bytes);
	lml_setint(L, "limit_bytes", (int64_t)s.limit_bytes);
	lml_setint(L, "allocs", (int64_t)s.allocs);
	lml_setint(L, "cache_hits", (int64_t)s.cache_hits);
	lml_setint(L, "live_tensors", (int64_t)s.live_tensors);
	lml_setboolean(L, "caching", lm_memory_caching());
	return 1;
}

/* lm.set_memory_limit(bytes) (0: the default, the machine's RAM) -> the previous limit */
static int l_set_memory_limit(lua_State *L)
{
	int64_t n = lml_checkcount(L, 1, "bytes");
	lm_memory_stats s;
	lm_memory_stats_get(&s);
	lm_memory_set_limit((size_t)n);
	lua_pushinteger(L, (lua_Integer)s.limit_bytes);
	return 1;
}

static int l_empty_cache(lua_State *L)
{
	(void)L;
	lm_memory_empty_cache();
	return 0;
}

static int l_reset_peak_memory(lua_State *L)
{
	(void)L;
	lm_memory_reset_peak();
	return 0;
}

static int l_set_num_threads(lua_State *L)
{
	/* OpenMP ends the process when it cannot start a thread (libgomp: "Thread creation
	 * failed"), which 4096 threads do under a container's pids or memory limit: at most 4 per
	 * core (64 on small machines), which no loop here profits from exceeding anyway. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int64_t most = cpus > 16 ? 4 * (int64_t)cpus : 64;
	int64_t n = lml_checkinteger(L, 1, "n");
	if (n < 0 || n > most)
		lml_error(L, "n must lie in 0..%lld (0: all cores; at most 4 threads per core, 64 on "
		          "small machines), got %lld", (long long)most, (long long)n);
	lm_set_num_threads((int)n);
	return 0;
}

static int l_get_num_threads(lua_State *L)
{
	lua_pushinteger(L, lm_get_num_threads());
	return 1;
}

/* lm.build_info() -> {version=, blas=, blas_threading=, openmp=, cuda=, sanitize=, compiler=} */
static int l_build_info(lua_State *L)
{
	lm_build_info b;
	lm_build_info_get(&b);
	lua_createtable(L, 0, 8);
	lml_setstring(L, "version", b.version);
	lml_setstring(L, "blas", b.blas);
	lml_setstring(L, "blas_threading", b.blas_threading);
	lml_setboolean(L, "openmp", b.openmp);
	lml_setboolean(L, "cuda", b.cuda_built);
	lml_setboolean(L, "sanitize", b.sanitize);
	lml_setstring(L, "compiler", b.compiler);
	lua_pushliteral(L, LUA_RELEASE);
	lua_setfield(L, -2, "lua");
	if (b.threading_warning) {
		lml_setstring(L, "threading_warning", b.threading_warning);
	}
	return 1;
}

/* ---------------------------------------------------------------- lm.cuda */

/* lm.cuda.is_available(): loads the CUDA module on first use and asks the driver. */
static int l_cuda_is_available(lua_State *L)
{
	lua_pushboolean(L, lm_cuda_is_available());
	return 1;
}

/* lm.cuda.device_name() -> the name of device 0, or nil, reason */
static int l_cuda_device_name(lua_State *L)
{
	const char *n = lm_cuda_is_available() ? lm_cuda_device_name() : NULL;
	if (n) {
		lua_pushstring(L, n);
		return 1;
	}
	lua_pushnil(L);
	lua_pushstring(L, lm_cuda_is_available() ? lm_last_error() : lm_cuda_unavailable_reason());
	return 2;
}

/* lm.cuda.unavailable_reason() -> why no GPU can be used ("" when one can) */
static int l_cuda_unavailable_reason(lua_State *L)
{
	lua_pushstring(L, lm_cuda_is_available() ? "" : lm_cuda_unavailable_reason());
	return 1;
}

/* ---------------------------------------------------------------- lm.opencl */

/* lm.opencl.is_available(): loads the OpenCL ICD loader on first use and asks its platforms. */
static int l_opencl_is_available(lua_State *L)
{
	lua_pushboolean(L, lm_opencl_is_available());
	return 1;
}

/* lm.opencl.unavailable_reason() -> why no OpenCL device can be used (nil when one can) */
static int l_opencl_unavailable_reason(lua_State *L)
{
	if (lm_opencl_is_available()) lua_pushnil(L);
	else lua_pushstring(L, lm_opencl_unavailable_reason());
	return 1;
}

/* lm.opencl.device_name() -> the name of the device Lumen uses, or nil, reason */
static int l_opencl_device_name(lua_State *L)
{
	const char *n = lm_opencl_is_available() ? lm_opencl_device_name() : NULL;
	if (n) {
		lua_pushstring(L, n);
		return 1;
	}
	lua_pushnil(L);
	lua_pushstring(L, lm_opencl_unavailable_reason());
	return 2;
}

/* lm.opencl.devices() -> {{name=, platform=, version=, c_version=, driver=, compute_units=,
 * global_mem=, local_mem=, max_alloc=, max_work_group=, fp64=, in_use=}, ...} */
static int l_opencl_devices(lua_State *L)
{
	int n = lm_opencl_device_count();
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lm_opencl_device_info d;
		if (lm_opencl_describe(i, &d)) continue;
		lua_createtable(L, 0, 12);
		lml_setstring(L, "name", d.name);
		lml_setstring(L, "platform", d.platform);
		lml_setstring(L, "version", d.version);
		lml_setstring(L, "c_version", d.c_version);
		lml_setstring(L, "driver", d.driver);
		lml_setint(L, "compute_units", d.compute_units);
		lml_setint(L, "global_mem", d.global_mem);
		lml_setint(L, "local_mem", d.local_mem);
		lml_setint(L, "max_alloc", d.max_alloc);
		lml_setint(L, "max_work_group", d.max_work_group);
		lml_setboolean(L, "fp64", d.fp64);
		lml_setboolean(L, "in_use", d.in_use);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* lm.opencl.synchronize() */
static int l_opencl_synchronize(lua_State *L)
{
	if (lm_opencl_synchronize()) lml_error(L, "%s", lm_last_error());
	return 0;
}

/* lm.opencl.program_stats() -> {compiles=, hits=}: programs built and served from the cache */
static int l_opencl_program_stats(lua_State *L)
{
	int64_t c = 0, h = 0;
	lm_opencl_program_stats(&c, &h);
	lua_createtable(L, 0, 2);
	lml_setint(L, "compiles", c);
	lml_setint(L, "hits", h);
	return 1;
}

static const luaL_Reg opencl_functions[] = {
	{"is_available", l_opencl_is_available},
	{"unavailable_reason", l_opencl_unavailable_reason},
	{"device_name", l_opencl_device_name},
	{"devices", l_opencl_devices},
	{"synchronize", l_opencl_synchronize},
	{"program_stats", l_opencl_program_stats},
	{NULL, NULL},
};

/* ---------------------------------------------------------------- lm.sys */

/* lm.sys.clock() -> seconds on a monotonic clock (float) */
static int l_clock(lua_State *L)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
	return 1;
}

/* A DIR * owned by a userdata, so that a memory error while listing cannot leak it. */
static int dir_gc(lua_State *L)
{
	DIR **p = lua_touserdata(L, 1);
	if (p && *p) {
		closedir(*p);
		*p = NULL;
	}
	return 0;
}

/* lm.sys.listdir(path) -> array of entry names (without . and ..), or nil, message */
static int l_listdir(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_typeerror(L, 1, "path", "a string");
	const char *path = lua_tostring(L, 1);
	DIR **box = lua_newuserdatauv(L, sizeof *box, 0);
	*box = NULL;
	if (luaL_newmetatable(L, "lumen.Dir")) {
		lua_pushcfunction(L, dir_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	lua_newtable(L);
	*box = opendir(path);
	if (!*box) {
		lua_pushnil(L);
		lua_pushfstring(L, "%s: %s", path, strerror(errno));
		return 2;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(*box)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
		lua_pushstring(L, e->d_name);
		lua_rawseti(L, -2, ++n);
	}
	closedir(*box);
	*box = NULL;
	return 1;
}

/* lm.sys.isdir(path) -> boolean */
static int l_isdir(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_typeerror(L, 1, "path", "a string");
	struct stat st;
	lua_pushboolean(L, stat(lua_tostring(L, 1), &st) == 0 && S_ISDIR(st.st_mode));
	return 1;
}

/* lm.sys.isfile(path) -> true for a regular file (a symlink followed), else false and what is
 * there: 'missing', or 'a directory', 'a FIFO (named pipe)', ... (nothing is opened: a check that
 * cannot block, for code that looks before it reads). */
static int l_isfile(lua_State *L)
{
	if (lua_type(L, 1) != LUA_TSTRING)
		lml_typeerror(L, 1, "path", "a string");
	struct stat st;
	int rc = stat(lua_tostring(L, 1), &st);
	if (rc == 0 && S_ISREG(st.st_mode)) {
		lua_pushboolean(L, 1);
		return 1;
	}
	lua_pushboolean(L, 0);
	lua_pushstring(L, rc != 0 ? (errno == ENOENT || errno == ENOTDIR ? "missing" : strerror(errno))
	                  : S_ISDIR(st.st_mode) ? "a directory" : S_ISCHR(st.st_mode) ? "a character device"
	                  : S_ISBLK(st.st_mode) ? "a block device" : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
	                  : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file");
	return 2;
}

/* lm.sys.executable() -> the path of the running program (for tests that start it again) */
static int l_executable(lua_State *L)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushlstring(L, exe, (size_t)n);
	return 1;
}

/* lm.sys.fail_alloc_after(k): the k-th allocation from now fails (0 disables); for leak tests */
static int l_fail_alloc_after(lua_State *L)
{
	int64_t k = lml_checkcount(L, 1, "k");
	lm_memory_fail_after((uint64_t)k);
	return 0;
}

/* lm.sys.term_size() -> columns, rows of the terminal on stdout (else stderr), or nil when
 * neither is a terminal (the lesson runner wraps its text to the width) */
/* lm.sys.lang([l]) -> the language of messages, scenes and lessons ('en' or 'zh') and where it
 * came from; with l ('en', 'zh', a locale name) sets it, with false goes back to the
 * environment's (lumen/core.h, lm_lang_why). */
static int l_lang(lua_State *L)
{
	if (lua_type(L, 1) == LUA_TSTRING) {
		const char *l = lua_tostring(L, 1);
		if ((l[0] | 0x20) == 'z' && (l[1] | 0x20) == 'h') lm_set_lang(LM_LANG_ZH);
		else if ((l[0] | 0x20) == 'e' && (l[1] | 0x20) == 'n') lm_set_lang(LM_LANG_EN);
		else lml_error(L, "unknown language '%s' (en or zh)", l);
	} else if (lua_isboolean(L, 1) && !lua_toboolean(L, 1)) {
		lm_reset_lang();
	} else if (!lua_isnoneornil(L, 1)) {
		lml_typeerror(L, 1, "argument 1", "'en', 'zh' or false");
	}
	const char *why;
	lua_pushstring(L, lm_lang_why(&why) == LM_LANG_ZH ? "zh" : "en");
	lua_pushstring(L, why);
	return 2;
}

/* lm.sys.write_file(path, text): the whole file, written safely (lm_file_*: regular files only,
 * mode, owner and links kept, never half-written; lumen/io.h). */
/* A path argument: a string without NUL bytes. */
static const char *path_arg(lua_State *L, int idx)
{
	if (lua_type(L, idx) != LUA_TSTRING) lml_typeerror(L, idx, "argument 1 (the path)", "a string");
	size_t n;
	const char *p = lua_tolstring(L, idx, &n);
	if (n == 0 || strlen(p) != n) lml_error(L, "the path is empty or holds a NUL byte");
	return p;
}

static int l_write_file(lua_State *L)
{
	const char *path = path_arg(L, 1);
	if (lua_type(L, 2) != LUA_TSTRING) lml_typeerror(L, 2, "argument 2 (the text)", "a string");
	size_t n;
	const char *text = lua_tolstring(L, 2, &n);
	lm_file_writer *w;
	if (lm_file_begin("lm.sys.write_file", path, &w)) lml_core_error(L);
	lm_status st = lm_file_write(w, text, n);
	if (st) {
		lm_file_abort(w);
		lml_core_error(L);
	}
	if (lm_file_commit(w)) lml_core_error(L);
	return 0;
}

/* lm.sys.check_write(path) -> true, or nil and why: whether path may be written as a file (a new
 * one, or a regular file this user may write; a symlink is followed): for files written as they go
 * (a CSV log), which cannot go through write_file. */
static int l_check_write(lua_State *L)
{
	const char *path = path_arg(L, 1);
	if (lm_file_check("lm.sys.check_write", path)) {
		lua_pushnil(L);
		lua_pushstring(L, lm_last_error());
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* lm.sys.read_file(path) -> the whole file, or nil, why and what ('missing', 'not regular',
 * 'unreadable'): a regular file only (a symlink followed), so a FIFO or /dev/zero where a file
 * is meant is refused at once instead of blocking or reading for ever (lm_file_open_read). */
static int l_read_file(lua_State *L)
{
	const char *path = path_arg(L, 1);
	const char *kind;
	int fd = lm_file_open_read(path, &kind);
	const char *what = NULL;
	char why[400];
	if (fd < 0 && kind) {
		snprintf(why, sizeof why, "%.300s: it is %s, not a regular file", path, kind);
		what = "not regular";
	} else if (fd < 0) {
		snprintf(why, sizeof why, "%.300s: %s", path, strerror(errno));
		what = errno == ENOENT || errno == ENOTDIR ? "missing" : "unreadable";
	}
	luaL_Buffer b;
	if (!what) {
		luaL_buffinit(L, &b);
		for (;;) {
			char *p = luaL_prepbuffer(&b);
			ssize_t n = read(fd, p, LUAL_BUFFERSIZE);
			if (n < 0 && errno == EINTR) continue;
			if (n < 0) {
				snprintf(why, sizeof why, "%.300s: %s", path, strerror(errno));
				what = "unreadable";
				break;
			}
			if (n == 0) break;
			luaL_addsize(&b, (size_t)n);
		}
		close(fd);
		if (!what) {
			luaL_pushresult(&b);
			return 1;
		}
	}
	lua_pushnil(L);
	lua_pushstring(L, why);
	lua_pushstring(L, what);
	return 3;
}

static int l_term_size(lua_State *L)
{
	struct winsize w;
	for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
		if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &w) == 0 && w.ws_col > 0) {
			lua_pushinteger(L, w.ws_col);
			lua_pushinteger(L, w.ws_row);
			return 2;
		}
	}
	lua_pushnil(L);
	return 1;
}

/* lm.ops() -> {{name=, backward=, arity=, loop=, dtypes=, params={...}, devices={cpu={...},
 * cuda={...}}}, ...}: the op table (lumen/ops.h, `lumen --ops`); a device's list holds the input
 * dtypes it runs the op for (the CUDA one: what its backend implements, GPU or not). */
static int l_ops(lua_State *L)
{
	int n = lm_op_count();
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lm_op_desc o;
		if (lm_op_describe(i, &o)) lml_core_error(L);
		lua_createtable(L, 0, 8);
		lml_setstring(L, "name", o.name);
		if (o.grad_name) lml_setstring(L, "backward", o.grad_name);
		lml_setint(L, "arity", o.arity);
		lml_setstring(L, "loop", o.loop);
		lml_setstring(L, "dtypes", o.dtypes);
		lua_createtable(L, o.nparams, 0);
		for (int k = 0; k < o.nparams; k++) {
			lua_pushstring(L, o.params[k]);
			lua_rawseti(L, -2, k + 1);
		}
		lua_setfield(L, -2, "params");
		lua_createtable(L, 0, 3);
		static const lm_device devs[] = {LM_CPU, LM_CUDA, LM_OPENCL};
		for (int d = 0; d < 3; d++) {
			lua_newtable(L);
			int k = 0;
			for (int dt = 0; dt < LM_DTYPE_COUNT; dt++) {
				if (lm_op_supported(i, devs[d], (lm_dtype)dt) != 1) continue;
				lua_pushstring(L, lm_dtype_name((lm_dtype)dt));
				lua_rawseti(L, -2, ++k);
			}
			lua_setfield(L, -2, lm_device_name(devs[d]));
		}
		lua_setfield(L, -2, "devices");
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static const luaL_Reg functions[] = {
	{"memory", l_memory},
	{"set_memory_limit", l_set_memory_limit},
	{"empty_cache", l_empty_cache},
	{"reset_peak_memory", l_reset_peak_memory},
	{"set_num_threads", l_set_num_threads},
	{"get_num_threads", l_get_num_threads},
	{"build_info", l_build_info},
	{"ops", l_ops},
	{NULL, NULL},
};

/* lm.cuda.memory_allocated() and the rest: the caching allocator's figures, in bytes (0 before
 * the first tensor moves to the GPU: nothing is loaded to answer them). */
static int l_cuda_memory_allocated(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_cuda_memory_allocated());
	return 1;
}

static int l_cuda_max_memory_allocated(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_cuda_max_memory_allocated());
	return 1;
}

static int l_cuda_memory_cached(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)lm_cuda_memory_cached());
	return 1;
}

static int l_cuda_reset_peak(lua_State *L)
{
	(void)L;
	lm_cuda_reset_peak_memory_stats();
	return 0;
}

static int l_cuda_empty_cache(lua_State *L)
{
	if (lm_cuda_empty_cache()) lml_core_error(L);
	return 0;
}

static int l_cuda_synchronize(lua_State *L)
{
	if (lm_cuda_synchronize()) lml_core_error(L);
	return 0;
}

static int l_cuda_device_count(lua_State *L)
{
	lua_pushinteger(L, lm_cuda_device_count());
	return 1;
}

static const luaL_Reg cuda_functions[] = {
	{"is_available", l_cuda_is_available},
	{"device_count", l_cuda_device_count},
	{"memory_allocated", l_cuda_memory_allocated},
	{"max_memory_allocated", l_cuda_max_memory_allocated},
	{"memory_cached", l_cuda_memory_cached},
	{"reset_peak_memory_stats", l_cuda_reset_peak},
	{"empty_cache", l_cuda_empty_cache},
	{"synchronize", l_cuda_synchronize},
	{"device_name", l_cuda_device_name},
	{"unavailable_reason", l_cuda_unavailable_reason},
	{NULL, NULL},
};

static const luaL_Reg sys_functions[] = {
	{"clock", l_clock},
	{"listdir", l_listdir},
	{"isdir", l_isdir},
	{"isfile", l_isfile},
	{"term_size", l_term_size},
	{"executable", l_executable},
	{"fail_alloc_after", l_fail_alloc_after},
	{"lang", l_lang},
	{"write_file", l_write_file},
	{"read_file", l_read_file},
	{"check_write", l_check_write},
	{NULL, NULL},
};

void lml_open_sys(lua_State *L, int mt, int m, int lm)
{
	(void)mt;
	(void)m;
	lml_setfuncs(L, lm, "lm.", functions, 0);
	lua_newtable(L);
	lml_setfuncs(L, -1, "lm.cuda.", cuda_functions, 0);
	lua_setfield(L, lm, "cuda");
	lua_newtable(L);
	lml_setfuncs(L, -1, "lm.opencl.", opencl_functions, 0);
	lua_setfield(L, lm, "opencl");
	lua_newtable(L);
	lml_setfuncs(L, -1, "lm.sys.", sys_functions, 0);
	lua_setfield(L, lm, "sys");
	lua_pushliteral(L, LUMEN_VERSION);
	lua_setfield(L, lm, "version");
}
