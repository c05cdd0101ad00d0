/*
 * main.c — the lumen command line. For now: --version, --help; the Lua program and the REPL
 * come with the next issues.
 */
#include <stdio.h>
#include <string.h>

#include "lumen/core.h"

static void print_version(void)
{
	lm_build_info bi;
	lm_build_info_get(&bi);
	printf("Lumen %s\n", bi.version);
	printf("  BLAS: %s (%s threads)\n", bi.blas, bi.blas_threading);
	printf("  OpenMP: %s, %d threads\n", bi.openmp ? "yes" : "no", lm_get_num_threads());
	printf("  CUDA: %s\n", bi.cuda_built ? "built (loaded on first use)" : "not built");
	printf("  compiler: %s%s\n", bi.compiler, bi.sanitize ? ", ASan+UBSan" : "");
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: lumen [--version] [--help]\n");
		return 0;
	}
	print_version();
	return 0;
}
