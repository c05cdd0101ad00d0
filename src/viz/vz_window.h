/*
 * vz_window.h (internal) — the SDL window and its GL context (window.c). One at a time.
 */
#ifndef LUMEN_VIZ_WINDOW_H
#define LUMEN_VIZ_WINDOW_H

#include "viz/vz.h"

typedef struct SDL_Window SDL_Window;

typedef struct vz_window {
	SDL_Window *win;
	void *gl;          /* SDL_GLContext */
	bool offscreen;    /* the offscreen driver: nothing on screen, no events */
	int w, h;          /* size in screen points */
	int dw, dh;        /* drawable pixels */
	float scale;       /* UI scale */
} vz_window;

/* Opens a window of width x height points with a GL 3.3 core context, made current. The driver
 * is chosen once per process (window.c says how). */
lm_status vz_window_open(vz_window *w, int width, int height, bool offscreen, const char *title,
                         const char *fname);
void vz_window_close(vz_window *w);
/* Reads the sizes and the UI scale again (after a resize). */
void vz_window_sizes(vz_window *w);
void vz_window_swap(vz_window *w);
/* Waits until the display server has taken in the frames swapped so far (X11; else nothing). */
void vz_window_sync(vz_window *w);
void vz_window_title(vz_window *w, const char *title);
/* Why the window is offscreen ("no display (DISPLAY is not set)", "--headless", ...), or "". */
const char *vz_window_why(void);
const char *vz_window_gl_renderer(void);
void vz_window_shutdown(void);

#endif
