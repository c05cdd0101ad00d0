/*
 * kernel_opts.c — the options of each `kernels` call, as one field table per call (options.c's
 * lml_field: key, kind, where it goes in lm_kernel_opts, the values of a string option, default,
 * a line of text). The binding reads a call's options through its table (lml_readopts), and
 * :help kernels.<call> prints the same rows (lm._kernels.options, read by lua/lumen/help.lua),
 * so what help says and what the binding accepts cannot drift; tests/lua/test_kernels_options.lua
 * runs every documented option and value through the binding and the core.
 *
 * Read next: options.c (the reader), kernels.c, include/lumen/kernels.h (what the core does with
 * each option).
 */
#include <string.h>

#include "lml.h"
#include "lumen/kernels.h"

/* ---------------------------------------------------------------- checks beyond the kinds */

/* The core reads 0 and NULL as "the default": a count given must be at least 1, a number greater
 * than 0, a variant's name one of the call's. */
static void positive(lua_State *L, int idx, const lml_field *f, void *dst)
{
	(void)dst;
	char d[LML_DESCRIBE_MAX];
	double v = lua_tonumber(L, idx);
	bool count = f->kind != LML_NUMBER;
	if (count ? v < 1 : !(v > 0))
		lml_error(L, "option %s must be %s, got %s", f->key, count ? "at least 1" : "greater than 0",
		          lml_describe(L, idx, d, sizeof d));
}

static void repeats(lua_State *L, int idx, const lml_field *f, void *dst)
{
	positive(L, idx, f, dst);
	if (*(int *)dst > 1000) lml_error(L, "option repeats must lie in 1..1000, got %d", *(int *)dst);
}

/* A tile of the cpu runs (tile_m, ..., tile_w): 1..LM_KERNEL_MAX_CPU_TILE (the core reads 0 as
 * its default, so 0 given is refused here). */
static void cpu_tile(lua_State *L, int idx, const lml_field *f, void *dst)
{
	int64_t v = *(int64_t *)dst;
	(void)idx;
	if (v < 1 || v > LM_KERNEL_MAX_CPU_TILE)
		lml_error(L, "%s = %lld: must be between 1 and %d", f->key, (long long)v,
		          LM_KERNEL_MAX_CPU_TILE);
}

/* A variant's name, in the core's words ("unknown algo 'x' (expected 'a', 'b' or 'c')"): the
 * core checks the same names again, with the same message. */
static void variant(lua_State *L, int idx, const lml_field *f, void *dst)
{
	const char *s = *(const char **)dst;
	for (int i = 0; f->names[i]; i++)
		if (strcmp(s, f->names[i]) == 0) return;
	char list[LML_LIST_MAX];
	(void)idx;
	lml_error(L, "unknown %s '%.40s' (expected %s)", f->key, s, lml_list(f->names, 1, list, sizeof list));
}

/* ---------------------------------------------------------------- the rows */

#define OPT(member, kind_, ...) LML_FIELD(lm_kernel_opts, member, kind_, __VA_ARGS__)
#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ALGO(def_, doc_, ...) OPT(algo, LML_STRING, .names = NAMES(__VA_ARGS__), .check = variant, .def = def_, .doc = doc_)
#define COUNT(member, def_, doc_) OPT(member, LML_INTEGER, .check = positive, .def = def_, .doc = doc_)
#define BACKEND(def_, ...)                                                                          \
	OPT(backend, LML_STRING, .names = NAMES(__VA_ARGS__), .def = def_,                              \
	    .doc = "where it runs: the SIMT emulator (traced, modelled cycles), the CPU or a GPU "     \
	           "(measured), or an OpenCL device (measured by events; PoCL runs it on the CPU); 'auto' picks "   \
	           "cuda when a GPU exists")
#define ALL_BACKENDS "emu", "cpu", "cuda", "opencl", "auto"
#define GPU_BACKENDS "emu", "cuda", "auto" /* the patterns that show what only a GPU has */
#define POW2_BLOCK(def_) COUNT(block, def_, "threads per block: a power of two from 1 to 1024")
#define COMMON                                                                                      \
	OPT(trace, LML_BOOLEAN, .def = "false",                                                         \
	    .doc = "record info.trace (every thread's loads, stores, adds, barriers); needs the "      \
	           "emulator. backend='emu' records one unless trace=false"),                           \
	COUNT(trace_cap, "1048576", "events kept before the trace is truncated"),                       \
	OPT(repeats, LML_INT, .check = repeats, .def = "5",                                             \
	    .doc = "timed runs after a warm-up (cpu, cuda); the median is reported"),                   \
	LML_FIELDS_END

static const lml_field reduce_opts[] = {
	ALGO("shared", "the variant: divergent strides in global memory, convergent strides, a tree in "
	     "shared memory, or coarsened (several elements per thread first)",
	     "naive", "convergent", "shared", "coarsened"),
	BACKEND("auto", ALL_BACKENDS),
	POW2_BLOCK("one block when the input fits, else 256"),
	COUNT(coarsen, "4 (algo 'coarsened'; the others take 1)", "elements each thread adds before the tree"),
	COMMON,
};

static const lml_field scan_opts[] = {
	ALGO("kogge-stone", "the variant: Kogge-Stone (one element per thread), Brent-Kung (two per "
	     "thread), or hierarchical (coarsened sections scanned in three phases)",
	     "kogge-stone", "brent-kung", "hierarchical"),
	OPT(inclusive, LML_BOOLEAN, .def = "true", .doc = "inclusive (out[i] includes x[i]) or exclusive scan"),
	BACKEND("auto", ALL_BACKENDS),
	POW2_BLOCK("one block when the input fits, else 256"),
	COUNT(coarsen, "4 (algo 'hierarchical'; the others take 1)", "elements per thread of the hierarchical scan"),
	COMMON,
};

static const lml_field histogram_opts[] = {
	ALGO("privatized", "the variant: one global atomic per element, a private histogram per block "
	     "in shared memory, or privatized with runs of equal bins added by one atomic",
	     "global-atomic", "privatized", "aggregated"),
	BACKEND("auto", ALL_BACKENDS),
	COUNT(block, "one block when the input fits, else 256", "threads per block: any number from 1 to 1024"),
	COUNT(coarsen, "1 (8 for algo 'aggregated')", "consecutive elements per thread"),
	COMMON,
};

#define CPU_TILE(member, def_, doc_) OPT(member, LML_INTEGER, .check = cpu_tile, .def = def_, .doc = doc_)
#define CPU_TILE_RANGE "1..4096; the cpu run only (backend 'auto' then runs on the cpu); lm.tune searches it"

static const lml_field matmul_opts[] = {
	ALGO("tiled", "the variant: every operand from global memory, or tile x tile blocks staged in "
	     "shared memory", "naive", "tiled"),
	COUNT(tile, "16", "tile width 1..32 (the block is tile x tile threads; on the cpu: tile_m, "
	      "tile_n and tile_k at once)"),
	CPU_TILE(tile_m, "tile", "rows of C's cache tiles in the cpu run of 'tiled', " CPU_TILE_RANGE),
	CPU_TILE(tile_n, "tile", "columns of C's cache tiles in the cpu run of 'tiled', " CPU_TILE_RANGE),
	CPU_TILE(tile_k, "tile", "the slice of k each tile product covers in the cpu run of 'tiled', "
	         CPU_TILE_RANGE),
	OPT(order, LML_STRING, .names = NAMES("ijk", "ikj", "jik", "jki", "kij", "kji"), .check = variant,
	    .def = "ijk",
	    .doc = "the cpu run's tile loops, outermost first (i: C's rows, j: its columns, k: the "
	           "sum); OpenMP shares the outermost loop (k outermost: the middle one, slice by "
	           "slice), so no two threads add into one tile of C; every order gives the same bits"),
	BACKEND("auto", ALL_BACKENDS),
	COMMON,
};

static const lml_field conv2d_opts[] = {
	ALGO("tiled", "the variant: the mask in global or constant memory, or input tiles with their "
	     "halo in shared memory ('tiled' is 'tiled-input')",
	     "naive", "constant", "tiled", "tiled-input", "tiled-output"),
	COUNT(tile, "16", "output tile width 1..32 (tiled-input: tile + mask side - 1 <= 32)"),
	CPU_TILE(tile_h, "1", "rows of the cpu run's output tiles, " CPU_TILE_RANGE),
	CPU_TILE(tile_w, "the image's width", "columns of the cpu run's output tiles, " CPU_TILE_RANGE),
	OPT(order, LML_STRING, .names = NAMES("tile-row-mask", "tile-mask-row", "mask-tile-row"),
	    .check = variant, .def = "tile-row-mask",
	    .doc = "the cpu run's loops, outermost first: each tile's rows swept once per mask "
	           "element, each mask element swept over a tile's rows (the output tile stays in "
	           "L1), or the mask outermost (each element over the whole image); OpenMP over the "
	           "tiles; every order gives the same bits"),
	BACKEND("auto", ALL_BACKENDS),
	COMMON,
};

static const lml_field spmv_opts[] = {
	OPT(format, LML_STRING, .names = NAMES("coo", "csr", "ell", "jds"), .check = variant,
	    .def = "csr", .doc = "the sparse format the kernel reads"),
	BACKEND("auto", ALL_BACKENDS),
	COUNT(block, "one block when the work fits, else 256", "threads per block: any number from 1 to 1024"),
	COMMON,
};

static const lml_field divergence_opts[] = {
	OPT(pattern, LML_STRING, .names = NAMES("even-odd", "half-warp", "data", "warp", "none"),
	    .check = variant, .def = "even-odd",
	    .doc = "which lanes take which path: by even/odd lane, by half warp, by a data-dependent "
	           "test, by whole warps (no divergence), or no branch"),
	COUNT(warps, "4", "warps of 32 threads, 1..4096"),
	BACKEND("auto (cuda with a GPU, else emu): there are no warps on the cpu", GPU_BACKENDS),
	COUNT(block, "the threads, up to 256",
	      "threads per block: a multiple of 32 up to 1024 that divides the threads"),
	COMMON,
};

static const lml_field streams_opts[] = {
	COUNT(segments, "4", "segments of the vector add, each on its own stream (1..255)"),
	COUNT(bytes, "262144 (emu), 67108864 (cuda)", "bytes of each float32 vector (a multiple of 4)"),
	COUNT(copy_engines, "2", "emu: copy engines, 1 or 2 (two overlap both directions)"),
	OPT(pcie_gbps, LML_NUMBER, .check = positive, .def = "25", .doc = "emu: host-device bandwidth in GB/s"),
	OPT(clock_ghz, LML_NUMBER, .check = positive, .def = "1.5",
	    .doc = "emu: the clock that turns modelled cycles into time"),
	COUNT(sms, "8", "emu: multiprocessors the kernel's blocks spread over"),
	COUNT(block, "256", "threads per block of the vector add, 1..1024"),
	BACKEND("auto (cuda with a GPU, else emu): there is no cpu run", GPU_BACKENDS),
	COMMON,
};

static const lml_field coalescing_opts[] = {
	ALGO("coalesced", "the layout a warp reads: column sums (consecutive lanes on consecutive "
	     "addresses) or row sums (the lanes a row apart)", "coalesced", "strided"),
	BACKEND("auto (cuda with a GPU, else emu): the lesson is a GPU warp's memory accesses",
	        GPU_BACKENDS),
	COUNT(block, "one block when the sums fit, else 256", "threads per block: any number from 1 to 1024"),
	COMMON,
};

static const lml_field transpose_opts[] = {
	ALGO("padded", "the variant: straight from global memory, through a 32 x 32 shared tile (read "
	     "down a column: bank conflicts), or the tile with a padding column (conflict-free)",
	     "naive", "shared", "padded"),
	BACKEND("auto (cuda with a GPU, else emu): the lesson is a GPU warp's memory accesses",
	        GPU_BACKENDS),
	COMMON,
};

static const lml_field fused_opts[] = {
	BACKEND("emu (g:kernel: the trace)", "emu", "cpu", "cuda", "auto"),
	COUNT(block, "256", "threads per block: any number from 1 to 1024"),
	COMMON,
};

/* One call: its name, its positional arguments as the signature shows them, its options. */
static const struct kcall {
	const char *name;
	const char *args;
	const lml_field *opts;
} calls[] = {
	{"reduce", "x", reduce_opts},
	{"scan", "x", scan_opts},
	{"histogram", "bytes_or_tensor, bins", histogram_opts},
	{"matmul", "a, b", matmul_opts},
	{"conv2d", "img, mask", conv2d_opts},
	{"spmv", "A, x", spmv_opts},
	{"divergence", "", divergence_opts},
	{"streams", "", streams_opts},
	{"coalescing", "x", coalescing_opts},
	{"transpose", "x", transpose_opts},
	{NULL, NULL, NULL},
};

/* ---------------------------------------------------------------- reading and showing them */

void lml_kernel_opts(lua_State *L, int idx, const char *call, lm_kernel_opts *o)
{
	lm_kernel_opts_init(o);
	for (const struct kcall *c = calls; c->name; c++)
		if (strcmp(c->name, call) == 0) {
			lml_readopts(L, idx, NULL, c->opts, o);
			return;
		}
	lml_error(L, "no options table for kernels.%s", call); /* a bug in this file */
}

void lml_fused_opts(lua_State *L, int idx, lm_kernel_opts *o)
{
	lm_kernel_opts_init(o);
	lml_readopts(L, idx, NULL, fused_opts, o);
}

void lml_push_kernel_options(lua_State *L)
{
	lua_newtable(L);
	for (const struct kcall *c = calls; c->name; c++) {
		lml_push_fields(L, c->opts);
		lml_setstring(L, "args", c->args);
		lua_setfield(L, -2, c->name);
	}
}
