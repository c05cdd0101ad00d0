/*
 * jit.c — generated C for a fused elementwise kernel (../exec.h's lmi_fused), compiled at run time
 * by the system's C compiler and loaded, where one is present; fused.c's interpreter otherwise.
 *
 * The interpreter runs each instruction of a group over a block of elements through the SIMD
 * kernel the node alone would run, so every value makes a round trip through an L1 buffer per
 * instruction: a chain of four cheap ops costs about as much arithmetic as its memory traffic.
 * Generated code keeps the values in vector registers: one loop, each element loaded once,
 * computed by the group's expressions in order, stored once.
 *
 * Only instructions whose result is exact IEEE arithmetic are generated — + - * /, maximum and
 * minimum, the comparisons, where, abs, neg, relu, sign, floor, ceil, sqrt, rsqrt, reciprocal,
 * square, clamp, leaky_relu, a power of 2, 3, 1, 0.5 or -1, the scalar forms, add_scaled — on
 * float32 and float64 (uint8 for comparisons): these round the same wherever they run, so the
 * generated kernel gives the interpreter's bits (tested). exp, log, the trigonometric functions,
 * integers and everything else stay with the interpreter. The expressions are those of
 * ewise_loops.h and ../scalar_math.h, written again here as text; compiled -std=c11 (no FMA
 * contraction) -O3 for the SIMD path in use.
 *
 * A kernel is generated for a group of at least 2^18 elements (lm._graph.jit{min =}: below that
 * the interpreter's cost is small and a compiler run, ~0.1 s, is not worth it), compiled once per
 * text into the cache directory ($XDG_CACHE_HOME/lumen/jit, or ~/.cache/lumen/jit; the file's
 * name is a hash of the text and the flags) and loaded with dlopen. LUMEN_JIT=0 turns it off;
 * no compiler, a failed compile or an unwritable cache turns it off for the process, silently
 * (lmi_cpu_jit_status says what happened). Read next: fused.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/simd.h"
#include "lumen/graph.h"

extern char **environ;

/* ---------------------------------------------------------------- the text */

typedef struct sbuf {
	char *s;
	size_t n, cap;
	bool bad;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
	if (b->bad) return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->bad = true;
			return;
		}
		if ((size_t)k < b->cap - b->n) {
			b->n += (size_t)k;
			return;
		}
		size_t nc = b->cap * 2 + (size_t)k + 64;
		char *q = realloc(b->s, nc);
		if (!q) {
			b->bad = true;
			return;
		}
		b->s = q;
		b->cap = nc;
	}
}

static const char *ctype(lm_dtype d)
{
	switch (d) {
	case LM_FLOAT32: return "float";
	case LM_FLOAT64: return "double";
	case LM_UINT8: return "unsigned char";
	default: return NULL;
	}
}

/* A number of dtype d as a C constant of that type, exactly. */
static void put_const(sbuf *b, lm_dtype d, double v)
{
	if (d == LM_FLOAT32)
		put(b, "((float)%a)", (double)(float)v);
	else
		put(b, "(%a)", v);
}

/* The C expression of instruction in over operands a, b, c (already C expressions). */
static bool expr(sbuf *b, const lmi_fused_instr *in, const char *a, const char *x, const char *c)
{
	lm_dtype d = in->dtype;
	const char *T = ctype(d);
	if (d != LM_FLOAT32 && d != LM_FLOAT64) return false;
	const char *sfx = d == LM_FLOAT32 ? "f" : "";
	switch (in->loop) {
	case LMI_BE_OP_binary:
		switch (in->code) {
		case LM_ADD: put(b, "(%s + %s)", a, x); return true;
		case LM_SUB: put(b, "(%s - %s)", a, x); return true;
		case LM_MUL: put(b, "(%s * %s)", a, x); return true;
		case LM_DIV: put(b, "(%s / %s)", a, x); return true;
		case LM_MAXIMUM: put(b, "((%s != %s || %s != %s) ? %s + %s : (%s > %s ? %s : %s))", a, a, x, x, a, x, a, x, a, x); return true;
		case LM_MINIMUM: put(b, "((%s != %s || %s != %s) ? %s + %s : (%s < %s ? %s : %s))", a, a, x, x, a, x, a, x, a, x); return true;
		case LM_EQ: put(b, "(unsigned char)(%s == %s)", a, x); return true;
		case LM_NE: put(b, "(unsigned char)(%s != %s)", a, x); return true;
		case LM_LT: put(b, "(unsigned char)(%s < %s)", a, x); return true;
		case LM_LE: put(b, "(unsigned char)(%s <= %s)", a, x); return true;
		case LM_GT: put(b, "(unsigned char)(%s > %s)", a, x); return true;
		case LM_GE: put(b, "(unsigned char)(%s >= %s)", a, x); return true;
		default: return false;
		}
	case LMI_BE_OP_where: put(b, "(%s ? %s : %s)", a, x, c); return true;
	case LMI_BE_OP_add_scaled:
		put(b, "(%s + ", a);
		put_const(b, d, in->p0);
		put(b, " * %s)", x);
		return true;
	case LMI_BE_OP_unary: break;
	default: return false;
	}
	switch (in->code) {
	case LM_NEG: put(b, "(-%s)", a); return true;
	case LM_ABS: put(b, "__builtin_fabs%s(%s)", sfx, a); return true;
	case LM_RELU: put(b, "(%s < (%s)0 ? (%s)0 : %s)", a, T, T, a); return true;
	case LM_SIGN: put(b, "(%s != %s ? %s : (%s)((%s > 0) - (%s < 0)))", a, a, a, T, a, a); return true;
	case LM_FLOOR: put(b, "__builtin_floor%s(%s)", sfx, a); return true;
	case LM_CEIL: put(b, "__builtin_ceil%s(%s)", sfx, a); return true;
	case LM_SQRT: put(b, "__builtin_sqrt%s(%s)", sfx, a); return true;
	case LM_RSQRT: put(b, "((%s)1 / __builtin_sqrt%s(%s))", T, sfx, a); return true;
	case LM_RECIPROCAL: put(b, "((%s)1 / %s)", T, a); return true;
	case LM_SQUARE: put(b, "(%s * %s)", a, a); return true;
	case LMI_CLAMP:
		put(b, "(%s < ", a);
		put_const(b, d, in->p0);
		put(b, " ? ");
		put_const(b, d, in->p0);
		put(b, " : (%s > ", a);
		put_const(b, d, in->p1);
		put(b, " ? ");
		put_const(b, d, in->p1);
		put(b, " : %s))", a);
		return true;
	case LMI_LEAKY_RELU:
		put(b, "(%s > (%s)0 ? %s : %s * ", a, T, a, a);
		put_const(b, d, in->p0);
		put(b, ")");
		return true;
	case LMI_POW_SCALAR: {
		double e = d == LM_FLOAT32 ? (double)(float)in->p0 : in->p0;
		if (e == 2) put(b, "(%s * %s)", a, a);
		else if (e == 3) put(b, "(%s * %s * %s)", a, a, a);
		else if (e == 1) put(b, "(%s)", a);
		else if (e == 0.5) put(b, "__builtin_sqrt%s(%s)", sfx, a);
		else if (e == -1) put(b, "((%s)1 / %s)", T, a);
		else return false;
		return true;
	}
	case LMI_ADD_SCALED:
		put(b, "(%s * ", a);
		put_const(b, d, in->p0);
		put(b, " + ");
		put_const(b, d, in->p1);
		put(b, ")");
		return true;
	case LMI_ADD_S: put(b, "(%s + ", a); put_const(b, d, in->p0); put(b, ")"); return true;
	case LMI_MUL_S: put(b, "(%s * ", a); put_const(b, d, in->p0); put(b, ")"); return true;
	case LMI_DIV_S: put(b, "(%s / ", a); put_const(b, d, in->p0); put(b, ")"); return true;
	default: return false;
	}
}

/*
 * The kernel's text: void lumen_fused(void *ctx, char **p, const long long *s, long long n), an
 * lmi_iter kernel. scalar[j]: operand j is one number (the fast loop reads it once); the fast loop
 * runs when every operand's stride is its element size or, for those, 0; else a strided loop.
 */
static bool gen(const lmi_fused *f, const bool *scalar, sbuf *b)
{
	int nops = f->nout + f->nin;
	lm_dtype od[LMI_ITER_MAX_OPS];
	for (int j = 0; j < nops; j++) od[j] = LM_DTYPE_COUNT;
	/* each operand's dtype, from the instructions that use it */
	for (int k = 0; k < f->ninstr; k++) {
		const lmi_fused_instr *in = &f->instr[k];
		if (in->out < LMI_FUSED_REG) od[in->out] = in->out_dtype;
		for (int j = 0; j < in->nin; j++) {
			int r = in->in[j];
			if (r >= LMI_FUSED_REG) continue;
			od[r] = in->loop == LMI_BE_OP_where && j == 0 ? LM_UINT8 : in->dtype;
		}
	}
	for (int j = 0; j < nops; j++)
		if (od[j] == LM_DTYPE_COUNT || !ctype(od[j])) return false;
	for (int r = 0; r < f->nregs; r++)
		if (!ctype(f->reg_dtype[r])) return false;
	put(b, "/* Lumen: a fused kernel of %d instructions, generated by src/backend/cpu/jit.c */\n", f->ninstr);
	put(b, "void lumen_fused(void *ctx, char **p, const long long *s, long long n);\n");
	put(b, "void lumen_fused(void *ctx, char **p, const long long *s, long long n)\n{\n\t(void)ctx;\n\tif (");
	for (int j = 0; j < nops; j++)
		put(b, "%ss[%d] == %d", j ? " && " : "", j, scalar[j] && j >= f->nout ? 0 : (int)lm_dtype_size(od[j]));
	put(b, ") {\n");
	for (int j = 0; j < nops; j++) {
		const char *T = ctype(od[j]);
		if (j < f->nout)
			put(b, "\t\t%s *restrict o%d = (%s *)p[%d];\n", T, j, T, j);
		else if (scalar[j])
			put(b, "\t\tconst %s o%d = *(const %s *)p[%d];\n", T, j, T, j);
		else
			put(b, "\t\tconst %s *restrict o%d = (const %s *)p[%d];\n", T, j, T, j);
	}
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0)
			put(b, "#pragma omp simd\n\t\tfor (long long i = 0; i < n; i++) {\n");
		else
			put(b, "\t\treturn;\n\t}\n\tfor (long long i = 0; i < n; i++) {\n");
		for (int k = 0; k < f->ninstr && !b->bad; k++) {
			const lmi_fused_instr *in = &f->instr[k];
			char opnd[3][96];
			for (int j = 0; j < 3; j++) opnd[j][0] = 0;
			for (int j = 0; j < in->nin; j++) {
				int r = in->in[j];
				if (r >= LMI_FUSED_REG)
					snprintf(opnd[j], sizeof opnd[j], "r%d", r - LMI_FUSED_REG);
				else if (pass == 1)
					snprintf(opnd[j], sizeof opnd[j], "(*(const %s *)(p[%d] + i * s[%d]))", ctype(od[r]), r, r);
				else if (r >= f->nout && scalar[r])
					snprintf(opnd[j], sizeof opnd[j], "o%d", r);
				else
					snprintf(opnd[j], sizeof opnd[j], "o%d[i]", r);
			}
			if (in->out >= LMI_FUSED_REG)
				put(b, "\t\t%s r%d = ", ctype(f->reg_dtype[in->out - LMI_FUSED_REG]), in->out - LMI_FUSED_REG);
			else if (pass == 1)
				put(b, "\t\t*(%s *)(p[%d] + i * s[%d]) = ", ctype(od[in->out]), in->out, in->out);
			else
				put(b, "\t\to%d[i] = ", in->out);
			if (!expr(b, in, opnd[0], opnd[1], opnd[2])) return false;
			put(b, ";\n");
		}
		put(b, "\t\t}\n");
	}
	put(b, "}\n");
	return !b->bad;
}

/* ---------------------------------------------------------------- compiling and loading */

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static int jit_off = -1;      /* -1: not decided; 1: off for the process */
static char jit_why[2048] = "not used yet";
static int64_t jit_min = (int64_t)1 << 18; /* elements */
static int jit_compiled, jit_loaded;
static char jit_dir[800]; /* the cache, once found */

static uint64_t fnv(const char *s, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static bool cache_dir(char *out, size_t cap)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char base[512];
	if (x && *x)
		snprintf(base, sizeof base, "%s", x);
	else if (home && *home)
		snprintf(base, sizeof base, "%s/.cache", home);
	else
		snprintf(base, sizeof base, "/tmp/lumen-cache-%d", (int)getuid());
	char a[600], c[700];
	snprintf(a, sizeof a, "%s/lumen", base);
	snprintf(c, sizeof c, "%s/lumen/jit", base);
	mkdir(base, 0700);
	mkdir(a, 0700);
	if (mkdir(c, 0700) != 0 && errno != EEXIST) return false;
	if (access(c, W_OK) != 0) return false;
	snprintf(out, cap, "%s", c);
	return true;
}

/* Runs argv; true when it exits 0 (its output goes to /dev/null). */
static bool run_quiet(char *const *argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) return false;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) return false;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static const char *isa_flags(void)
{
	switch (lmi_simd()->isa) {
	case LM_ISA_AVX512: return "-march=x86-64-v4 -mprefer-vector-width=512";
	case LM_ISA_AVX2: return "-march=x86-64-v3";
	default: return "-march=x86-64";
	}
}

/* The kernel of text src: from the cache, or compiled into it. NULL with jit_why set. */
static lmi_iter_kernel load(const char *src, size_t n)
{
	char dir[800];
	if (!cache_dir(dir, sizeof dir)) {
		snprintf(jit_why, sizeof jit_why, "no cache directory to write ($XDG_CACHE_HOME/lumen/jit)");
		jit_off = 1;
		return NULL;
	}
	const char *cc = getenv("LUMEN_CC");
	if (!cc || !*cc) cc = "cc";
	const char *fl = isa_flags();
	uint64_t h = fnv(src, n, 0xcbf29ce484222325ull);
	h = fnv(fl, strlen(fl), h);
	h = fnv(cc, strlen(cc), h);
	char so[900], c[900], tmp[960];
	snprintf(so, sizeof so, "%s/k%016llx.so", dir, (unsigned long long)h);
	if (access(so, R_OK) != 0) {
		snprintf(c, sizeof c, "%s/k%016llx.c", dir, (unsigned long long)h);
		snprintf(tmp, sizeof tmp, "%s/k%016llx.%d.so", dir, (unsigned long long)h, (int)getpid());
		FILE *fp = fopen(c, "w");
		if (!fp || fwrite(src, 1, n, fp) != n || fclose(fp) != 0) {
			snprintf(jit_why, sizeof jit_why, "cannot write %s", c);
			jit_off = 1;
			return NULL;
		}
		char march[64], pref[64] = "";
		sscanf(fl, "%63s %63s", march, pref);
		char *argv[16];
		int a = 0;
		argv[a++] = (char *)cc;
		argv[a++] = "-std=c11";
		argv[a++] = "-O3";
		argv[a++] = "-ffp-contract=off";
		argv[a++] = "-fno-math-errno";
		argv[a++] = "-fopenmp-simd";
		argv[a++] = march;
		if (pref[0]) argv[a++] = pref;
		argv[a++] = "-mtune=generic";
		argv[a++] = "-fPIC";
		argv[a++] = "-shared";
		argv[a++] = "-o";
		argv[a++] = tmp;
		argv[a++] = c;
		argv[a] = NULL;
		if (!run_quiet(argv) || rename(tmp, so) != 0) {
			unlink(tmp);
			snprintf(jit_why, sizeof jit_why, "'%s' could not compile a kernel (%s): the interpreter runs", cc, c);
			jit_off = 1;
			return NULL;
		}
		jit_compiled++;
	}
	void *hd = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	void *fn = hd ? dlsym(hd, "lumen_fused") : NULL;
	if (!fn) {
		snprintf(jit_why, sizeof jit_why, "cannot load %s: the interpreter runs", so);
		jit_off = 1;
		return NULL;
	}
	jit_loaded++;
	snprintf(jit_dir, sizeof jit_dir, "%s", dir);
	lmi_iter_kernel k;
	memcpy(&k, &fn, sizeof k); /* a data pointer from dlsym as a function pointer (POSIX) */
	return k;
}

/* LUMEN_JIT, read once (jit_lock held). */
static void env_once(void)
{
	if (jit_off >= 0) return;
	const char *e = getenv("LUMEN_JIT");
	jit_off = e && strcmp(e, "0") == 0;
	if (jit_off) snprintf(jit_why, sizeof jit_why, "off (LUMEN_JIT=0)");
}

lmi_iter_kernel lmi_cpu_jit(const lmi_fused *f, lm_tensor *const *out, const lm_tensor *const *in)
{
	if (f->red || f->ninstr < 2) return NULL;
	void *have = __atomic_load_n(&((lmi_fused *)f)->jit, __ATOMIC_ACQUIRE);
	if (have) {
		lmi_iter_kernel hk = NULL;
		if (have != (void *)1) memcpy(&hk, &have, sizeof hk);
		return hk;
	}
	pthread_mutex_lock(&jit_lock);
	env_once();
	lmi_iter_kernel k = NULL;
	if (!jit_off && lm_tensor_numel(out[0]) >= jit_min) {
		bool scalar[LMI_ITER_MAX_OPS] = {0};
		for (int j = 0; j < f->nin; j++) scalar[f->nout + j] = lm_tensor_numel(in[j]) == 1;
		sbuf b = {malloc(4096), 0, 4096, false};
		if (!b.s) b.bad = true;
		if (gen(f, scalar, &b)) k = load(b.s, b.n);
		free(b.s);
	}
	/* the answer kept in the group (a program's, mutable; a marker for "none": a small group, or the
	 * generator off, stays interpreted without taking the lock again) — a program keeps its choice */
	void *mark = (void *)1;
	if (k) memcpy(&mark, &k, sizeof mark);
	__atomic_store_n(&((lmi_fused *)f)->jit, mark, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&jit_lock);
	return k;
}

void lmi_cpu_jit_config(int on, int64_t min)
{
	pthread_mutex_lock(&jit_lock);
	env_once(); /* the environment first, then what the caller says */
	if (on == 0) {
		jit_off = 1;
		snprintf(jit_why, sizeof jit_why, "off (lm._graph.jit)");
	} else if (on == 1 && jit_off) {
		jit_off = 0;
	}
	if (min >= 0) jit_min = min;
	pthread_mutex_unlock(&jit_lock);
}

const char *lmi_cpu_jit_status(int *compiled, int *loaded)
{
	static char on[2048];
	pthread_mutex_lock(&jit_lock);
	if (compiled) *compiled = jit_compiled;
	if (loaded) *loaded = jit_loaded;
	const char *r = jit_why;
	if (jit_off != 1) { /* on: what it runs */
		const char *cc = getenv("LUMEN_CC");
		snprintf(on, sizeof on, "'%s -std=c11 -O3 %s' for groups of %lld elements and more%s%s", cc && *cc ? cc : "cc",
		         isa_flags(), (long long)jit_min, jit_dir[0] ? ", cached in " : "", jit_dir);
		r = on;
	}
	pthread_mutex_unlock(&jit_lock);
	return r;
}

const char *lm_graph_codegen(int on, int64_t min_elements, int *compiled, int *loaded)
{
	lmi_cpu_jit_config(on, min_elements);
	return lmi_cpu_jit_status(compiled, loaded);
}
