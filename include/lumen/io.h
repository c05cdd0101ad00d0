/*
 * lumen/io.h — tensor files: safetensors (named tensors), GGUF (ggml's named tensors, quantized
 * ones too), NumPy .npy (one array) and IDX (the MNIST format, gzip'ed or plain, streamed through
 * zlib); images (PNG through libpng, JPEG through libjpeg).
 *
 * Design: every reader works on a byte source (a file, or a buffer for tests and the fuzzer) and
 * checks the whole header — magic, lengths, dtypes, shapes, offsets, sizes against the bytes that
 * exist — before it allocates anything, so a malformed or hostile file is an LM_ERR_IO error that
 * names the file and what is wrong, never a crash or an allocation the file cannot back. Data is
 * read straight into the tensor's storage. Writers produce exactly what numpy and the reference
 * safetensors library write (little-endian, C order, the same alignment), into a temporary file
 * renamed over the target when complete.
 *
 * Ownership as everywhere: tensors returned are +1; an lm_tensor_map is released with
 * lm_tensor_map_free. Read next: src/io/ (source.c, json.c, safetensors.c, gguf.c, npy.c, idx.c,
 * image.c), docs/nn.md ("Files").
 */
#ifndef LUMEN_IO_H
#define LUMEN_IO_H

#include <stdio.h>

#include "lumen/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A set of named tensors and string metadata, as a safetensors or GGUF file holds them. */
typedef struct lm_tensor_map {
	int64_t n;
	char **names;         /* NUL-terminated, in the order of the file's header */
	lm_tensor **tensors;  /* +1 each */
	int64_t nmeta;
	char **meta_keys;     /* the header's __metadata__ (string -> string), in file order */
	char **meta_values;
} lm_tensor_map;

/* Releases the tensors and strings of m and zeroes it (a zeroed map is a no-op). */
void lm_tensor_map_free(lm_tensor_map *m);

/* The largest safetensors header accepted (the reference library's limit). */
#define LM_SAFETENSORS_MAX_HEADER ((uint64_t)100 << 20)

/*
 * Reads a safetensors file. dtypes F32, F64, I32, I64, U8, F16, BF16 and I8 load as they are;
 * BOOL loads as uint8, I16 and U16 as int32, U32 as int64; others (U64, F8_*) are
 * LM_ERR_UNSUPPORTED. A U8 entry that the metadata keys lumen.dtype.<name> ("q8_0" or "q4_0") and
 * lumen.shape.<name> (the element shape as a JSON list) describe loads as that block tensor (the
 * bytes as they are); those keys are consumed (not in the map's metadata), and metadata that does
 * not fit the entry is an LM_ERR_IO error naming the tensor. On failure *out is left zeroed.
 */
lm_status lm_safetensors_load(const char *path, lm_tensor_map *out);
/* The same from a buffer; what names it in messages. */
lm_status lm_safetensors_parse(const void *buf, size_t len, const char *what, lm_tensor_map *out);
/*
 * Writes n tensors (names unique, non-empty, valid UTF-8, not "__metadata__") and nmeta metadata
 * pairs (may be 0; keys starting "lumen.dtype." or "lumen.shape." are refused). Tensors of any
 * layout are written in C order, sorted as the reference library sorts them (larger itemsize
 * first, then by name), the header padded with spaces to 8 bytes. A block tensor (q8_0, q4_0) of
 * shape [d1, ..., dn] is written as U8 [d1, ..., dn / 32 * type_size] (its bytes) with the
 * metadata lumen.dtype.<name> = "q4_0" and lumen.shape.<name> = "[d1,...,dn]".
 */
lm_status lm_safetensors_save(const char *path, int64_t n, const char *const *names,
                              const lm_tensor *const *tensors, int64_t nmeta,
                              const char *const *meta_keys, const char *const *meta_values);

/*
 * Reads a GGUF file (version 3, or 2; little-endian). ggml types F32, F16, BF16, F64, I8, I32, I64,
 * Q8_0 and Q4_0 load as Lumen's dtypes (the blocks' bytes as they are), the C-order shape being ne
 * reversed (n_dims 0 loads as a 0-d tensor); any other type is LM_ERR_UNSUPPORTED naming it
 * ("Q4_K (12) is not a Lumen dtype"). Every metadata value comes back as text: integers in
 * decimal, floats with the fewest digits that read back exactly, bools as "true" / "false",
 * strings as they are (one holding a NUL is refused), arrays as JSON ("[1,2]", "[\"a\"]").
 * Tensors are in the file's order. On failure *out is left zeroed.
 */
lm_status lm_gguf_load(const char *path, lm_tensor_map *out);
/* The same from a buffer; what names it in messages. */
lm_status lm_gguf_parse(const void *buf, size_t len, const char *what, lm_tensor_map *out);
/*
 * Writes a GGUF version 3 file of n tensors (names unique, non-empty, valid UTF-8 of at most 63
 * bytes, ggml's limit; at most 4 dims, ggml's limit; a 0-d tensor is written as ne [1], as ggml
 * writes a scalar, and reads back as shape [1]; uint8 has no ggml type and is refused) in the
 * order given, each at an offset aligned to 32 bytes, and nmeta metadata pairs written as string
 * values, except general.alignment: a power of two written as uint32, which sets the alignment.
 * general.architecture = "lumen" is added first unless given.
 */
lm_status lm_gguf_save(const char *path, int64_t n, const char *const *names,
                       const lm_tensor *const *tensors, int64_t nmeta,
                       const char *const *meta_keys, const char *const *meta_values);

/*
 * Reads a .npy file (format versions 1.0, 2.0 and 3.0; C or Fortran order, the result is C order
 * and contiguous). dtypes <f4 <f8 <i4 <i8 |u1 load as they are, in either byte order; |b1 as uint8,
 * <f2 as float32, |i1 <i2 <u2 as int32, <u4 as int64. Object and structured arrays are
 * LM_ERR_UNSUPPORTED.
 */
lm_tensor *lm_npy_load(const char *path);
lm_tensor *lm_npy_parse(const void *buf, size_t len, const char *what);
/* Writes t as format 1.0 (2.0 when the header needs it), C order, little-endian. */
lm_status lm_npy_save(const char *path, const lm_tensor *t);

/* How an IDX file is read. A zeroed struct reads the file's own dtype, everything, unscaled. */
typedef struct lm_idx_opts {
	bool to_float32;  /* convert to float32 multiplied by scale (e.g. 1/255 for images) */
	double scale;     /* used with to_float32; 0 means 1 */
	int64_t limit;    /* read at most this many entries along dim 1 (0: all) */
} lm_idx_opts;

/*
 * Reads an IDX file (gzip'ed or plain): big-endian magic 0x000008TT (type TT: 08 ubyte, 09 byte,
 * 0B short, 0C int, 0D float, 0E double) with the number of dims in its last byte, then the dims,
 * then the data. ubyte loads as uint8, byte/short/int as int32, float as float32, double as
 * float64 (unless opts ask for float32). The data must match the dims exactly: a short file is
 * "truncated", a longer one has "trailing bytes".
 */
lm_tensor *lm_idx_load(const char *path, const lm_idx_opts *opts);
lm_tensor *lm_idx_parse(const void *buf, size_t len, const char *what, const lm_idx_opts *opts);

/* ---------------------------------------------------------------- images (PNG, JPEG) */

/* The channels an image loads as: the file's own (gray 1, gray + alpha 2, RGB 3, RGBA 4), or
 * converted to gray (1), RGB (3) or RGBA (4). */
typedef enum lm_image_mode { LM_IMAGE_ASIS = 0, LM_IMAGE_GRAY, LM_IMAGE_RGB, LM_IMAGE_RGBA } lm_image_mode;

/* How an image is read. A zeroed struct (or NULL) reads the file's channels as float32. */
typedef struct lm_image_load_opts {
	lm_image_mode mode;
	lm_dtype dtype;   /* LM_FLOAT32 or LM_FLOAT64 (values / 255, in [0, 1]) or LM_UINT8 (the bytes) */
} lm_image_load_opts;

/*
 * Reads a PNG (through libpng) or a JPEG (through libjpeg) into a new (C, H, W) tensor; the format
 * is told by the first bytes, not the name. PNG: every color type and bit depth — palettes, gray
 * of 1, 2 or 4 bits and tRNS are expanded (a tRNS adds an alpha channel), 16-bit samples keep
 * their high byte (libpng's png_set_strip_16), interlaced files are read whole. JPEG: gray, YCbCr
 * and RGB; CMYK and YCCK are LM_ERR_UNSUPPORTED. Conversions: gray -> RGB replicates the gray,
 * RGB -> gray is ITU-R BT.601 luma rounded as PIL's convert('L') ((19595 R + 38470 G + 7471 B +
 * 2^15) >> 16), RGB or RGBA drops alpha (it is not composited), RGBA adds an opaque alpha where
 * the file has none. Errors name the file: not a regular file, not a PNG or JPEG (naming its first
 * bytes), truncated or corrupt (libpng's or libjpeg's message; their warnings are dropped, never
 * printed), sizes past a tensor's (LM_ERR_OVERFLOW) or the memory limit (LM_ERR_NOMEM). Built
 * without libpng (LUMEN_NO_PNG) or libjpeg (LUMEN_NO_JPEG), that format is LM_ERR_UNSUPPORTED,
 * saying which package to install.
 */
lm_tensor *lm_image_load(const char *path, const lm_image_load_opts *opts);
/* The same from a buffer; what names it in messages. */
lm_tensor *lm_image_parse(const void *buf, size_t len, const char *what, const lm_image_load_opts *opts);

/* How an image is written; NULL means LM_IMAGE_SAVE_DEFAULTS. */
typedef struct lm_image_save_opts {
	int64_t nrow;     /* a batch: images per row of the grid (>= 1) */
	int64_t padding;  /* a batch: pixels of 0 between the images and around them (>= 0) */
	int quality;      /* JPEG quality, 1..100 */
	bool normalize;   /* rescale the values by their min and max to [0, 1] first */
} lm_image_save_opts;
#define LM_IMAGE_SAVE_DEFAULTS { .nrow = 8, .padding = 2, .quality = 90, .normalize = false }

/*
 * Writes x as a PNG or a JPEG, chosen by the extension (.png, .jpg, .jpeg; any case; another is
 * LM_ERR_ARG). x is (H, W), (C, H, W) with C 1 (gray), 2 (gray + alpha, PNG only), 3 (RGB) or 4
 * (RGBA, PNG only: a JPEG has no alpha, and x with one is refused), or a batch (N, C, H, W) laid
 * out as torchvision's make_grid lays it out: nrow images per row, padding pixels of 0 between
 * them and around the border (a batch of one is written alone, without padding). Values: uint8 as
 * they are; float32 and float64 clamped to [0, 1] and written as floor(v * 255 + 0.5) in their
 * own precision (torchvision's save_image; NaN gives 0); other dtypes are converted to float64
 * first; with normalize, (v - min) / max(max - min, 1e-5) first. Any layout and device. The file
 * is written whole through lm_file_begin (below): a failure leaves the target as it was. Sides are
 * at most 1000000 (libpng's limit) or 65500 (JPEG's).
 */
lm_status lm_image_save(const char *path, const lm_tensor *x, const lm_image_save_opts *opts);

/* ---------------------------------------------------------------- writing a whole file */

/*
 * Every file Lumen writes whole (tensors, PNGs, the lessons' progress) goes through these: only a
 * regular file is written (a directory, device, FIFO or socket at the path is an error; a symlink
 * is followed to the file it names; a dangling one is refused); an existing file keeps its mode,
 * its owner and its other hard links, and one this user may not write is refused; the contents go
 * to an unnamed temporary in the target's directory that replaces the target only when complete
 * and fsync'ed, so a failure, Ctrl-C or a kill (SIGKILL too) leaves the old file as it was and no
 * temporary behind. fname names the caller in messages. begin -> write ... -> commit (or abort);
 * both free the writer. commit fails with LM_ERR_INTERRUPTED, the target unchanged, when an
 * interrupt came during the write. Details: src/io/file.c.
 */
typedef struct lm_file_writer lm_file_writer;
lm_status lm_file_begin(const char *fname, const char *path, lm_file_writer **out);
lm_status lm_file_write(lm_file_writer *w, const void *buf, size_t n);
FILE *lm_file_stream(lm_file_writer *w); /* the same file as a stdio stream (libpng writes to one) */
lm_status lm_file_commit(lm_file_writer *w);
void lm_file_abort(lm_file_writer *w);
/* The checks alone, for a file written as it goes (a CSV log): LM_OK for a new file, or a
 * regular one (through a symlink) that this user may write. */
lm_status lm_file_check(const char *fname, const char *path);
/* Opens path to read only when it is a regular file (a symlink is followed), without ever
 * blocking: a FIFO is opened non-blocking and refused like a device, socket or directory (reading
 * /dev/zero or a pipe where a file is meant would never end). Returns the descriptor (blocking,
 * close-on-exec), or -1 with *not_regular NULL and errno set when it cannot be opened, or -1 with
 * *not_regular naming what it is ("a FIFO (named pipe)"). */
int lm_file_open_read(const char *path, const char **not_regular);

#ifdef __cplusplus
}
#endif
#endif
