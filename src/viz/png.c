/*
 * png.c — writing a frame as a PNG with libpng's simplified API (png_image_write_to_stdio), which
 * reports errors in the png_image instead of longjmp'ing through our frames (FIELD-NOTES).
 *
 * The file is written the way Lumen writes every file (lm_file_*, lumen/io.h): a regular file
 * only, mode, owner and links kept, the PNG complete before it replaces anything, so a failed or
 * interrupted write never leaves half a PNG (nor a temporary) and never replaces a device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "lumen/io.h"
#include "viz/vz.h"
#include "viz/vz_png.h"

lm_status vz_png_write(const char *path, const uint8_t *rgba, int w, int h, const char *fname)
{
	/* RGB: the frame is opaque, and a third smaller without alpha */
	uint8_t *rgb = vz_malloc((size_t)w * (size_t)h * 3);
	if (!rgb) return lm_set_error(LM_ERR_NOMEM, "%s: out of memory for a %d x %d image", fname, w, h);
	for (size_t i = 0; i < (size_t)w * (size_t)h; i++) memcpy(rgb + 3 * i, rgba + 4 * i, 3);
	lm_file_writer *out;
	lm_status st = lm_file_begin(fname, path, &out);
	if (st) {
		vz_free(rgb);
		return st;
	}
	png_image im;
	memset(&im, 0, sizeof im);
	im.version = PNG_IMAGE_VERSION;
	im.width = (png_uint_32)w;
	im.height = (png_uint_32)h;
	im.format = PNG_FORMAT_RGB;
	int ok = png_image_write_to_stdio(&im, lm_file_stream(out), 0, rgb, 0, NULL);
	vz_free(rgb);
	if (!ok) {
		lm_file_abort(out);
		return lm_set_error(LM_ERR_IO, "%s: cannot write '%s': %s", fname, path, im.message);
	}
	return lm_file_commit(out);
}
