/*
 * gpu_check_shim.c — the two symbols of liblumen's core that the emulator's objects reach beyond
 * src/core/{alloc,error,dtype}.c, which gpu-check builds: the interrupt flag (src/core/parallel.c,
 * which pulls in threads and BLAS hooks) and the live-tensor count of the allocator's statistics
 * (src/core/tensor.c). gpu-check never interrupts and holds no tensors.
 * Read next: gpu_check_model.c.
 */
#include <stdatomic.h>
#include <stdint.h>

atomic_int lmi_interrupt_flag;

int64_t lmi_live_tensors(void);
int64_t lmi_live_tensors(void) { return 0; }
