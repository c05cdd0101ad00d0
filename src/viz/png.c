/*
 * png.c — writing a frame as a PNG with libpng's simplified API (png_image_write_to_stdio), which
 * reports errors in the png_image instead of longjmp'ing through our frames (FIELD-NOTES).
 *
 * The file is opened here so a missing folder or a read-only place gives the system's reason
 * ("No such file or directory") with the path; it is written to a temporary name next to the
 * target and renamed, so a failed write never leaves half a PNG under the name asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <png.h>

#include "viz/vz.h"
#include "viz/vz_png.h"

lm_status vz_png_write(const char *path, const uint8_t *rgba, int w, int h, const char *fname)
{
	if (!path || !*path) return lm_set_error(LM_ERR_ARG, "%s: the path is empty", fname);
	size_t n = strlen(path);
	if (n > 4000) return lm_set_error(LM_ERR_ARG, "%s: the path is too long (%zu bytes)", fname, n);
	char tmp[4096 + 32];
	snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return lm_set_error(LM_ERR_IO, "%s: cannot write '%s': %s", fname, path, strerror(errno));
	/* RGB: the frame is opaque, and a third smaller without alpha */
	uint8_t *rgb = malloc((size_t)w * (size_t)h * 3);
	if (!rgb) {
		fclose(f);
		remove(tmp);
		return lm_set_error(LM_ERR_NOMEM, "%s: out of memory for a %d x %d image", fname, w, h);
	}
	for (size_t i = 0; i < (size_t)w * (size_t)h; i++) memcpy(rgb + 3 * i, rgba + 4 * i, 3);
	png_image im;
	memset(&im, 0, sizeof im);
	im.version = PNG_IMAGE_VERSION;
	im.width = (png_uint_32)w;
	im.height = (png_uint_32)h;
	im.format = PNG_FORMAT_RGB;
	int ok = png_image_write_to_stdio(&im, f, 0, rgb, 0, NULL);
	free(rgb);
	int closed = fclose(f);
	if (!ok || closed != 0) {
		remove(tmp);
		return lm_set_error(LM_ERR_IO, "%s: cannot write '%s': %s", fname, path,
		                    !ok ? im.message : strerror(errno));
	}
	if (rename(tmp, path) != 0) {
		int e = errno;
		remove(tmp);
		return lm_set_error(LM_ERR_IO, "%s: cannot write '%s': %s", fname, path, strerror(e));
	}
	return LM_OK;
}
