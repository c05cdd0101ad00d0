/*
 * fake_device.h — a device table for tests that need a second device without a GPU: it serves
 * LM_CUDA (named "fake") with the CPU's loops, run on memory that only its own functions can
 * reach. Its "device pointers" are host addresses with bit 62 flipped, which fault when anything
 * but the table dereferences them, so an op or a core function that reads a device tensor through
 * a pointer, instead of through its device's loops or a copy, crashes the test at once. Its
 * compute turns a node's device tensors into CPU views of the same bytes and runs the CPU's
 * compute; a CPU tensor reaching it (an op that placed a result or a temporary on the wrong
 * device) is counted in fake_device_stats.foreign.
 * Read next: fake_device.c, ../src/backend/backend.h.
 */
#ifndef LUMEN_TESTS_FAKE_DEVICE_H
#define LUMEN_TESTS_FAKE_DEVICE_H

#include <stdint.h>

#include "backend/backend.h"

typedef struct fake_device_stats {
	int64_t live_bytes, allocs;            /* device memory held, allocations made */
	int64_t to_device, to_host, on_device; /* bytes moved by the raw copies */
	int64_t pinned_copies;                 /* raw copies whose host side was page-locked */
	int64_t foreign;                       /* CPU tensors that reached a slot */
	int64_t calls[LMI_OP_COUNT];           /* nodes computed, per op */
} fake_device_stats;

/* The table (device LM_CUDA, name "fake"). */
extern const lmi_backend fake_device_backend;
/* Registers it (in place of any CUDA table) / removes it again (no fake tensor may be alive). */
void fake_device_register(void);
void fake_device_unregister(void);
fake_device_stats fake_device_get_stats(void);
/* Makes the next n allocations succeed and the one after fail with LM_ERR_NOMEM (-1: never). */
void fake_device_fail_after(int64_t n);

#endif
