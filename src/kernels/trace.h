/*
 * trace.h (internal) — how the emulator fills an lm_trace (the reading side is in lumen/kernels.h).
 *
 * Design: events live in chunks of LMI_TRACE_CHUNK fixed-size records allocated as the trace grows
 * (never one allocation per event) up to a cap; past it, events are counted (seen) but not kept, and
 * the trace says "truncated at N events". Arrays, launches and barrier phases (steps) are small
 * side tables that scenes use to find their way (a step's events are contiguous).
 * Read next: trace.c, simt_model.c (which writes the events), docs/trace.md.
 */
#ifndef LUMEN_KERNELS_TRACE_H
#define LUMEN_KERNELS_TRACE_H

#include "lumen/kernels.h"

#define LMI_TRACE_CHUNK_LOG 14
#define LMI_TRACE_CHUNK (1 << LMI_TRACE_CHUNK_LOG)
#define LMI_TRACE_MAX_ARRAYS 254
#define LMI_TRACE_MAX_LAUNCHES 255

/* A new, empty trace for the call `name` (copied); cap: events kept (>= 1). NULL + error on
 * failure. The latency model is copied for the record. */
lm_trace *lmi_trace_new(const char *name, lm_dtype dt, int64_t cap, const lm_latency_model *lat);

/* Registers an array; returns its id (0..253) or -1 with LM_ERR_ARG set when there are too many. */
int lmi_trace_add_array(lm_trace *t, const lm_trace_array *a);
/* Starts launch l (kernel name copied; cycles and steps filled by the trace). Returns its number
 * or -1 with an error set. */
int lmi_trace_begin_launch(lm_trace *t, const lm_trace_launch *l, uint64_t start_cycle);
void lmi_trace_end_launch(lm_trace *t, uint64_t end_cycle);
/* A slot for the next event, or NULL when the cap is reached or memory ran out (the trace is then
 * truncated); the event is counted as seen either way. */
lm_trace_event *lmi_trace_push(lm_trace *t);
/* Index the next pushed event will get (== lm_trace_count). */
int64_t lmi_trace_next_index(const lm_trace *t);
/* Appends a step summary. */
lm_status lmi_trace_add_step(lm_trace *t, const lm_trace_step *s);

#endif
