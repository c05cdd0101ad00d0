/*
 * window.c — the platform part: SDL's video driver (a real window on a display, the offscreen
 * driver otherwise), the window, its OpenGL 3.3 core context, sizes and the UI scale (HiDPI).
 *
 * Choices, and why:
 *  - SDL_HINT_NO_SIGNAL_HANDLERS before SDL starts: SDL would otherwise turn Ctrl-C into SDL_QUIT
 *    and the REPL would lose it (FIELD-NOTES).
 *  - No display (neither DISPLAY nor WAYLAND_DISPLAY), --headless, or a display that cannot be
 *    opened: the offscreen driver (EGL + Mesa llvmpipe), which renders the same pixels with no
 *    X server; the user is told once. A SDL_VIDEODRIVER the user set is respected.
 *  - Mesa's llvmpipe starts render threads: on a 2-core machine they steal time from training,
 *    so LP_NUM_THREADS defaults to 0 there (the drawing thread rasterizes: a frame drawn while a
 *    script trains took 12.7 ms with one render thread waiting for a core, the offscreen frames
 *    are as fast or faster; bench/viz), 2 on larger machines, unless the user set it.
 *  - Swap interval 0: the pump runs inside the REPL's tick and the Lua hook; a vsync'ed swap would
 *    block them for up to a frame.
 *  - vz_window_sync after a frame: on X11 a swap only queues the picture (with llvmpipe, a
 *    1280 x 720 image) for the display server, which takes it in afterwards, on the cores a
 *    training loop uses; waiting for the server's reply (XSync) puts that time in the frame's
 *    own (bench/viz, the MLP epoch with --viz). libX11 is SDL's, found already loaded (no link).
 * Read next: viewer.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlfcn.h>

#include <SDL.h>
#include <SDL_syswm.h>
#include <epoxy/gl.h>

#include "viz/vz_window.h"

static bool video_up;
static char driver[32];
static char why[200];

static void set_llvmpipe_threads(void)
{
	if (getenv("LP_NUM_THREADS")) return;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	setenv("LP_NUM_THREADS", n <= 2 ? "0" : "2", 0);
}

static bool has_display(void)
{
	const char *x = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
	return (x && *x) || (w && *w);
}

static lm_status start_video(const char *name, const char *fname)
{
	if (name) SDL_SetHint(SDL_HINT_VIDEODRIVER, name);
	if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
		return lm_set_error(LM_ERR_UNSUPPORTED, "%s: SDL cannot start its video driver%s%s: %s",
		                    fname, name ? " " : "", name ? name : "", SDL_GetError());
	video_up = true;
	snprintf(driver, sizeof driver, "%s", SDL_GetCurrentVideoDriver() ? SDL_GetCurrentVideoDriver() : "?");
	/* Hold the GL library for the process: SDL unloads it with the last GL window otherwise, and
	 * Mesa's driver would be loaded (slowly) again at the next viz.open, its one-time allocations
	 * left unreachable (reported by LeakSanitizer). A failure here shows at context creation. */
	SDL_GL_LoadLibrary(NULL);
	return LM_OK;
}

/* Starts SDL's video once, choosing the driver (see the header comment). */
static lm_status ensure_video(bool offscreen, const char *fname)
{
	if (video_up) {
		if (offscreen && strcmp(driver, "offscreen") != 0) {
			SDL_QuitSubSystem(SDL_INIT_VIDEO);
			video_up = false;
		} else {
			return LM_OK;
		}
	}
	SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
	SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
	set_llvmpipe_threads();
	const char *user = getenv("SDL_VIDEODRIVER");
	why[0] = '\0';
	if (offscreen) {
		snprintf(why, sizeof why, "--headless");
		return start_video("offscreen", fname);
	}
	if (user && *user) {
		if (start_video(NULL, fname) != LM_OK) return LM_ERR_UNSUPPORTED;
		if (strcmp(driver, "offscreen") == 0) snprintf(why, sizeof why, "SDL_VIDEODRIVER=offscreen");
		return LM_OK;
	}
	if (!has_display()) {
		snprintf(why, sizeof why, "no display (DISPLAY is not set)");
		return start_video("offscreen", fname);
	}
	if (start_video(NULL, fname) == LM_OK) return LM_OK;
	snprintf(why, sizeof why, "the display %s cannot be opened (%s)",
	         getenv("DISPLAY") ? getenv("DISPLAY") : "", SDL_GetError());
	return start_video("offscreen", fname);
}

const char *vz_window_why(void) { return why; }

static float ui_scale(vz_window *w)
{
	const char *env = getenv("LUMEN_VIZ_SCALE");
	if (env && atof(env) >= 0.5 && atof(env) <= 4) return (float)atof(env);
	float s = w->w > 0 ? (float)w->dw / (float)w->w : 1.0f;
	if (s < 1.25f && !w->offscreen) {
		/* displays that report a high DPI but no scaled drawable (X11): scale the UI ourselves */
		float dpi = 0;
		int d = SDL_GetWindowDisplayIndex(w->win);
		if (d >= 0 && SDL_GetDisplayDPI(d, &dpi, NULL, NULL) == 0 && dpi >= 150) s = roundf(dpi / 96.0f);
	}
	return s < 1 ? 1 : s;
}

void vz_window_sizes(vz_window *w)
{
	SDL_GetWindowSize(w->win, &w->w, &w->h);
	SDL_GL_GetDrawableSize(w->win, &w->dw, &w->dh);
	if (w->dw <= 0 || w->dh <= 0) {
		w->dw = w->w;
		w->dh = w->h;
	}
	w->scale = ui_scale(w);
}

lm_status vz_window_open(vz_window *w, int width, int height, bool offscreen, const char *title,
                         const char *fname)
{
	memset(w, 0, sizeof *w);
	if (ensure_video(offscreen, fname) != LM_OK) return LM_ERR_UNSUPPORTED;
	w->offscreen = strcmp(driver, "offscreen") == 0;
	SDL_GL_ResetAttributes();
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
	SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
	SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 0);
	SDL_GL_SetAttribute(SDL_GL_STENCIL_SIZE, 0);
	Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_ALLOW_HIGHDPI;
	flags |= w->offscreen ? SDL_WINDOW_HIDDEN : (SDL_WINDOW_RESIZABLE | SDL_WINDOW_SHOWN);
	w->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width, height,
	                          flags);
	if (!w->win)
		return lm_set_error(LM_ERR_UNSUPPORTED, "%s: SDL cannot create a window (%s driver): %s",
		                    fname, driver, SDL_GetError());
	w->gl = SDL_GL_CreateContext(w->win);
	if (!w->gl) {
		lm_set_error(LM_ERR_UNSUPPORTED, "%s: no OpenGL 3.3 core context (%s driver): %s; without "
		             "a display Lumen renders through Mesa (apt-get install libgl1-mesa-dri libegl1)",
		             fname, driver, SDL_GetError());
		SDL_DestroyWindow(w->win);
		w->win = NULL;
		return LM_ERR_UNSUPPORTED;
	}
	SDL_GL_MakeCurrent(w->win, w->gl);
	SDL_GL_SetSwapInterval(0);
	vz_window_sizes(w);
	return LM_OK;
}

void vz_window_close(vz_window *w)
{
	if (w->gl) SDL_GL_DeleteContext(w->gl);
	if (w->win) SDL_DestroyWindow(w->win);
	w->gl = NULL;
	w->win = NULL;
}

void vz_window_swap(vz_window *w)
{
	if (w->win && !w->offscreen) SDL_GL_SwapWindow(w->win);
}

#ifdef SDL_VIDEO_DRIVER_X11
typedef int (*xsync_fn)(Display *, Bool);

/* XSync from the libX11 that SDL loaded (NULL when it is not loaded: another video driver) */
static xsync_fn xsync_lookup(void)
{
	static bool looked;
	static xsync_fn fn;
	if (looked) return fn;
	looked = true;
	void *lib = dlopen("libX11.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (lib) {
		*(void **)&fn = dlsym(lib, "XSync");
		dlclose(lib); /* NOLOAD took a reference of its own: SDL keeps the library loaded */
	}
	return fn;
}
#endif

void vz_window_sync(vz_window *w)
{
	if (!w->win || w->offscreen) return;
#ifdef SDL_VIDEO_DRIVER_X11
	SDL_SysWMinfo info;
	SDL_VERSION(&info.version);
	if (!SDL_GetWindowWMInfo(w->win, &info) || info.subsystem != SDL_SYSWM_X11) return;
	xsync_fn xsync = xsync_lookup();
	if (xsync) xsync(info.info.x11.display, False);
#endif
}

void vz_window_title(vz_window *w, const char *title)
{
	if (w->win) SDL_SetWindowTitle(w->win, title);
}

const char *vz_window_gl_renderer(void)
{
	const char *r = (const char *)glGetString(GL_RENDERER);
	return r ? r : "?";
}

void vz_window_shutdown(void)
{
	if (video_up) SDL_QuitSubSystem(SDL_INIT_VIDEO);
	video_up = false;
}
