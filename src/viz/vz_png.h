/* vz_png.h (internal) — PNG output of the visualizer (png.c). */
#ifndef LUMEN_VIZ_PNG_H
#define LUMEN_VIZ_PNG_H

#include "viz/vz.h"

/* Writes w x h RGBA pixels (rows top to bottom) as an RGB PNG at path. Errors name fname, the
 * path and the system's reason. */
lm_status vz_png_write(const char *path, const uint8_t *rgba, int w, int h, const char *fname);

#endif
