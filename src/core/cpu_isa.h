/*
 * cpu_isa.h — internals of the run-time SIMD dispatch (lumen/isa.h is the public side).
 *
 * lmi_isa() is the fast read every dispatched loop makes (one relaxed atomic load once the choice
 * is made). lmi_isa_choose is the pure decision, separated from the CPU so that tests can feed
 * it CPUs this machine is not. Read next: cpu_isa.c, ../backend/cpu/simd.h.
 */
#ifndef LUMEN_CPU_ISA_H
#define LUMEN_CPU_ISA_H

#include <stdatomic.h>

#include "lumen/isa.h"

extern atomic_int lmi_isa_current; /* an lm_isa, or -1 before the first choice */
lm_isa lmi_isa_init(void);

/* The path in use, as fast as a load. */
static inline lm_isa lmi_isa(void)
{
	int v = atomic_load_explicit(&lmi_isa_current, memory_order_acquire);
	return v >= 0 ? (lm_isa)v : lmi_isa_init();
}

/*
 * The choice: request is LUMEN_ISA's value (NULL or "" or "auto": the best); have is a bit mask
 * (1 << isa) of the paths the CPU and build support (the scalar bit must be set); why[isa] says
 * why a path is missing ("this CPU lacks avx512bw, avx512vl"). Returns the path to use and writes
 * a warning into warn (empty when there is nothing to say).
 */
lm_isa lmi_isa_choose(const char *request, unsigned have, const char *const why[LM_ISA_COUNT],
                      char *warn, size_t warn_size);

#endif
