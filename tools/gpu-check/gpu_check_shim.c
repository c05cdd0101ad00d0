/*
 * gpu_check_shim.c — the three symbols of liblumen's core that the emulator's objects reach beyond
 * src/core/{alloc,error,dtype}.c, which gpu-check builds: the interrupt flag (src/core/parallel.c,
 * which pulls in threads and BLAS hooks) and the live-tensor count of the allocator's statistics
 * (src/core/tensor.c), and the resumption of a Lua-run thread (src/kernels/external.c, which
 * needs tensors and the patterns). gpu-check never interrupts, holds no tensors and launches no
 * Lua kernels.
 * Read next: gpu_check_model.c.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/simt_impl.h"

atomic_int lmi_interrupt_flag;

int64_t lmi_live_tensors(void);
int64_t lmi_live_tensors(void) { return 0; }

void lmi_simt_ext_resume(lmi_simt *s, simt_thread *th)
{
	(void)s, (void)th;
	fprintf(stderr, "gpu-check: a Lua-run kernel thread reached the emulator\n");
	abort();
}
