/*
 * cpu_isa.c — run-time choice of the SIMD path of Lumen's CPU loops (see lumen/isa.h).
 *
 * Once, at the first call: ask the CPU what it has (__builtin_cpu_supports, which also checks that
 * the OS saves the wide registers), read LUMEN_ISA, decide (lmi_isa_choose, a pure function the
 * tests drive with made-up CPUs), and publish the result in one atomic int that the loops read.
 * A path needs every feature its files were compiled for: avx2 = x86-64-v3 (AVX, AVX2, FMA, BMI1,
 * BMI2, F16C, LZCNT, MOVBE), avx512 = x86-64-v4 (v3 plus AVX-512 F, CD, BW, DQ, VL), so a wrong
 * request can never reach an instruction the CPU lacks. The per-ISA files are compiled only where
 * CMake could give them those flags (LUMEN_SIMD_X86); elsewhere only the scalar path exists.
 * Read next: ../backend/cpu/simd.h (the tables of loops), CMakeLists.txt (the flags).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define X86_CPU 1
#endif

#include "cpu_isa.h"
#include "lmi.h"

atomic_int lmi_isa_current = -1;

enum reason { BY_BEST, BY_ENV, BY_CALL };
static atomic_int chosen_by = BY_BEST;
static unsigned have_mask = 1u << LM_ISA_SCALAR;
static char why_missing[LM_ISA_COUNT][160];
static char warning[320];
static char cpu_model[64] = "unknown";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const isa_names[LM_ISA_COUNT] = {"scalar", "avx2", "avx512"};
static const char *const isa_what[LM_ISA_COUNT] = {
	"portable C for the x86-64 baseline, not vectorised",
	"AVX2 + FMA, x86-64-v3, 8 float lanes",
	"AVX-512 F/CD/BW/DQ/VL + FMA, x86-64-v4, 16 float lanes",
};

const char *lm_isa_name(lm_isa isa)
{
	return (int)isa >= 0 && isa < LM_ISA_COUNT ? isa_names[isa] : "?";
}

lm_status lm_isa_parse(const char *name, lm_isa *out)
{
	for (int i = 0; name && i < LM_ISA_COUNT; i++)
		if (!strcasecmp(name, isa_names[i])) {
			*out = (lm_isa)i;
			return LM_OK;
		}
	return lmi_fail(LM_ERR_ARG, "isa: '%s' is not one of scalar, avx2, avx512", name ? name : "(null)");
}

lm_isa lmi_isa_choose(const char *request, unsigned have, const char *const why[LM_ISA_COUNT],
                      char *warn, size_t warn_size)
{
	lm_isa best = LM_ISA_SCALAR;
	for (int i = 0; i < LM_ISA_COUNT; i++)
		if (have & (1u << i)) best = (lm_isa)i;
	warn[0] = '\0';
	if (!request || !request[0] || !strcasecmp(request, "auto")) return best;
	lm_isa want = LM_ISA_SCALAR;
	int known = 0;
	for (int i = 0; i < LM_ISA_COUNT; i++)
		if (!strcasecmp(request, isa_names[i])) {
			want = (lm_isa)i;
			known = 1;
		}
	if (!known) {
		snprintf(warn, warn_size, "LUMEN_ISA=%.40s is not a SIMD path Lumen has (scalar, avx2, "
		         "avx512 or auto): using %s, the best this CPU supports", request, isa_names[best]);
		return best;
	}
	if (!(have & (1u << want))) {
		snprintf(warn, warn_size, "LUMEN_ISA=%s: %s; using %s, the best this CPU supports",
		         isa_names[want], why && why[want] && why[want][0] ? why[want] : "not available",
		         isa_names[best]);
		return best;
	}
	return want;
}

#ifdef X86_CPU
/* Appends the names of the features in list that the CPU lacks to out. */
#define NEED(cond, name)                                                                            \
	do {                                                                                        \
		if (!(cond)) {                                                                          \
			size_t l_ = strlen(out);                                                            \
			snprintf(out + l_, n - l_, "%s%s", l_ ? ", " : "", name);                           \
		}                                                                                       \
	} while (0)

static void missing_v3(char *out, size_t n)
{
	NEED(__builtin_cpu_supports("avx"), "avx");
	NEED(__builtin_cpu_supports("avx2"), "avx2");
	NEED(__builtin_cpu_supports("fma"), "fma");
	NEED(__builtin_cpu_supports("bmi"), "bmi");
	NEED(__builtin_cpu_supports("bmi2"), "bmi2");
	NEED(__builtin_cpu_supports("f16c"), "f16c");
	NEED(__builtin_cpu_supports("lzcnt"), "lzcnt");
	NEED(__builtin_cpu_supports("movbe"), "movbe");
	NEED(__builtin_cpu_supports("popcnt"), "popcnt");
	NEED(__builtin_cpu_supports("sse4.2"), "sse4.2");
}

static void missing_v4(char *out, size_t n)
{
	missing_v3(out, n);
	NEED(__builtin_cpu_supports("avx512f"), "avx512f");
	NEED(__builtin_cpu_supports("avx512cd"), "avx512cd");
	NEED(__builtin_cpu_supports("avx512bw"), "avx512bw");
	NEED(__builtin_cpu_supports("avx512dq"), "avx512dq");
	NEED(__builtin_cpu_supports("avx512vl"), "avx512vl");
}
#undef NEED

static void read_model(void)
{
	unsigned r[12];
	if (!__get_cpuid(0x80000000u, &r[0], &r[1], &r[2], &r[3]) || r[0] < 0x80000004u) return;
	for (unsigned i = 0; i < 3; i++)
		__get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
	char s[49];
	memcpy(s, r, 48);
	s[48] = '\0';
	char *p = s;
	while (*p == ' ') p++;
	size_t l = strlen(p);
	while (l && p[l - 1] == ' ') p[--l] = '\0';
	if (l) snprintf(cpu_model, sizeof cpu_model, "%s", p);
}
#endif

/* Fills have_mask and why_missing from the CPU and the build. */
static void detect(void)
{
#ifdef X86_CPU
	__builtin_cpu_init();
	read_model();
	char miss[160] = "";
	missing_v3(miss, sizeof miss);
#ifdef LUMEN_SIMD_X86
	if (!miss[0]) have_mask |= 1u << LM_ISA_AVX2;
	else snprintf(why_missing[LM_ISA_AVX2], sizeof why_missing[0], "this CPU lacks %s", miss);
	miss[0] = '\0';
	missing_v4(miss, sizeof miss);
	if (!miss[0]) have_mask |= 1u << LM_ISA_AVX512;
	else snprintf(why_missing[LM_ISA_AVX512], sizeof why_missing[0], "this CPU lacks %s", miss);
	return;
#endif
#endif
	for (int i = LM_ISA_AVX2; i < LM_ISA_COUNT; i++)
		snprintf(why_missing[i], sizeof why_missing[0], "this build has no %s path (not built for "
		         "x86-64 with a compiler that takes -march=x86-64-v4)", isa_names[i]);
}

static void init(void)
{
	detect();
	const char *why[LM_ISA_COUNT];
	for (int i = 0; i < LM_ISA_COUNT; i++) why[i] = why_missing[i];
	const char *req = getenv("LUMEN_ISA");
	lm_isa isa = lmi_isa_choose(req, have_mask, why, warning, sizeof warning);
	bool by_env = req && req[0] && strcasecmp(req, "auto") && !warning[0];
	atomic_store(&chosen_by, by_env ? BY_ENV : BY_BEST);
	atomic_store_explicit(&lmi_isa_current, (int)isa, memory_order_release);
}

lm_isa lmi_isa_init(void)
{
	pthread_once(&once, init);
	return (lm_isa)atomic_load_explicit(&lmi_isa_current, memory_order_acquire);
}

lm_isa lm_isa_active(void) { return lmi_isa(); }

bool lm_isa_supported(lm_isa isa)
{
	lmi_isa_init();
	return (int)isa >= 0 && isa < LM_ISA_COUNT && (have_mask & (1u << isa));
}

lm_isa lm_isa_best(void)
{
	lm_isa best = LM_ISA_SCALAR;
	for (int i = 0; i < LM_ISA_COUNT; i++)
		if (lm_isa_supported((lm_isa)i)) best = (lm_isa)i;
	return best;
}

lm_status lm_isa_set(lm_isa isa)
{
	lmi_isa_init();
	if ((int)isa < 0 || isa >= LM_ISA_COUNT)
		return lmi_fail(LM_ERR_ARG, "isa_set: %d is not an lm_isa (0 .. %d)", (int)isa, LM_ISA_COUNT - 1);
	if (!lm_isa_supported(isa))
		return lmi_fail(LM_ERR_UNSUPPORTED, "isa_set: %s: %s", isa_names[isa], why_missing[isa]);
	atomic_store(&chosen_by, BY_CALL);
	atomic_store_explicit(&lmi_isa_current, (int)isa, memory_order_release);
	return LM_OK;
}

const char *lm_isa_describe(void)
{
	static _Thread_local char buf[200];
	lm_isa isa = lmi_isa();
	int by = atomic_load(&chosen_by);
	snprintf(buf, sizeof buf, "%s (%s; %s)", isa_names[isa], isa_what[isa],
	         by == BY_ENV ? "set by LUMEN_ISA" : by == BY_CALL ? "set by lm_isa_set"
	                                                           : "the best this CPU supports");
	return buf;
}

const char *lm_isa_warning(void)
{
	lmi_isa_init();
	return warning[0] ? warning : NULL;
}

const char *lm_cpu_model(void)
{
	lmi_isa_init();
	return cpu_model;
}
