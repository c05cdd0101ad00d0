/*
 * module.c — finding and loading one of Lumen's own shared modules (liblumen_cuda.so: the CUDA
 * backend, backend/cuda_loader.c; liblumen_viz.so: the visualizer, lua/viz_loader.c), the one
 * search both use.
 *
 * Where, in order: $<env> (a path; when set it is the only place tried), the running
 * executable's directory (a build tree), <exe dir>/../<libdir>/lumen (an install moved to
 * another prefix), the build directory, the install libdir. Each failure's dlerror is noted.
 * Read next: backend/cuda_loader.c.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lmi.h"

/* Appends text to tried, "; " between (as much as fits). */
static void note(char *tried, size_t cap, const char *text)
{
	size_t n = strlen(tried), m = strlen(text);
	if (n && n + 2 < cap) memcpy(tried + n, "; ", 2), n += 2;
	if (m > cap - n - 1) m = cap - n - 1;
	memcpy(tried + n, text, m);
	tried[n + m] = '\0';
}

/* dlopen of dir/file, or of path itself when dir is NULL; a failure noted in tried. */
static void *try_open(const char *dir, const char *file, char *tried, size_t cap)
{
	char buf[PATH_MAX + 64];
	size_t d = dir ? strlen(dir) : 0, f = strlen(file);
	if (d + f + 2 > sizeof buf) return NULL;
	if (dir) {
		memcpy(buf, dir, d);
		buf[d++] = '/';
	}
	memcpy(buf + d, file, f + 1);
	void *h = dlopen(buf, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		note(tried, cap, e ? e : buf);
	}
	return h;
}

const char *lm_program_dir(void)
{
	static char dir[PATH_MAX];
	static bool read, ok;
	if (!read) {
		read = true;
		ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
		if (n > 0) {
			dir[n] = '\0';
			char *slash = strrchr(dir, '/');
			if (slash) *slash = '\0';
			ok = true;
		}
	}
	return ok ? dir : NULL;
}

const char *lm_program_data_dir(const char *const *rel, int n, const char *marker, char *buf,
                                size_t cap)
{
	const char *exe = lm_program_dir();
	if (!exe || !cap) return NULL;
	for (int i = 0; i < n; i++) {
		char probe[PATH_MAX + 256];
		int len = snprintf(buf, cap, rel[i], exe);
		if (len < 0 || (size_t)len >= cap) continue; /* cut short: not the directory */
		snprintf(probe, sizeof probe, "%s/%s", buf, marker);
		if (access(probe, R_OK) == 0) return buf;
	}
	buf[0] = '\0';
	return NULL;
}

void *lmi_module_open(const char *file, const char *env, char *tried, size_t cap)
{
	if (cap) tried[0] = '\0';
	const char *path = env ? getenv(env) : NULL;
	if (path && *path) return try_open(NULL, path, tried, cap); /* an explicit choice is final */
	void *h = NULL;
	const char *exe = lm_program_dir();
	if (exe) {
		h = try_open(exe, file, tried, cap);
#ifdef LUMEN_INSTALL_LIBDIR_REL
		char lib[PATH_MAX + 64];
		if (!h && strlen(exe) + sizeof LUMEN_INSTALL_LIBDIR_REL + 5 < sizeof lib) {
			snprintf(lib, sizeof lib, "%s/../%s", exe, LUMEN_INSTALL_LIBDIR_REL);
			h = try_open(lib, file, tried, cap);
		}
#endif
	}
#ifdef LUMEN_BUILD_DIR
	if (!h) h = try_open(LUMEN_BUILD_DIR, file, tried, cap);
#endif
#ifdef LUMEN_INSTALL_LIBDIR
	if (!h) h = try_open(LUMEN_INSTALL_LIBDIR, file, tried, cap);
#endif
	return h;
}
