/*
 * dlp.h — a deep-learning processor, cycle by cycle: a systolic array fed from double-buffered
 * scratchpads by a DMA engine (AICS chapters 6–7).
 *
 * The array is R×C processing elements; a layer is a GEMM (M, N, K) or a convolution, seen as the
 * GEMM of its im2col matrices (M = output pixels, N = filters, K = window = Fh·Fw·C). A dataflow
 * keeps one operand in the array (OS: the outputs, WS: the weights, IS: the inputs), maps two
 * dimensions on the array's rows and columns (Sr, Sc) and streams the third (T) through it; what
 * does not fit is split into folds of R×C, one after the other.
 *
 * The counting follows SCALE-Sim (v2's model as released in scalesim 3.0.0 on PyPI, with its v3
 * additions — custom layouts, sparsity, Ramulator — off; docs/dlp.md says where and how): each fold
 * is a matrix of demands, one row per cycle, skewed as the wavefront enters the array; the ifmap and
 * filter scratchpads serve reads from an active half while a DMA fills the other half from DRAM
 * (USER mode: at the given words per cycle, a demand the active half does not hold stalls the
 * array until the prefetch lands; CALC mode: no stalls, the bandwidth DRAM would need is estimated);
 * the ofmap scratchpad drains to DRAM and stalls the array when it is full. Every reported number —
 * cycles, stalls, utilizations, SRAM and DRAM accesses, their first and last cycles, bandwidths —
 * equals SCALE-Sim's for the same configuration and layer (tests/lua/test_dlp.lua keeps them).
 *
 * Beyond SCALE-Sim: bank conflicts of a banked SRAM (word-interleaved banks with a number of ports
 * each, counted per demand row; reported apart, they do not change SCALE-Sim's numbers), the
 * timeline of DMA transfers and stalls (for the dma scene), and what each PE holds at a cycle.
 */
#ifndef LUMEN_DLP_H
#define LUMEN_DLP_H

#include <stdint.h>

#include "lumen/core.h"

typedef enum { LM_DLP_OS, LM_DLP_WS, LM_DLP_IS } lm_dlp_dataflow;

typedef struct {
	int64_t rows, cols;                      /* the array: R × C PEs */
	lm_dlp_dataflow dataflow;
	int64_t ifmap_kb, filter_kb, ofmap_kb;   /* scratchpads, KiB of one-byte words */
	int64_t bandwidth;                       /* DRAM words per cycle (USER mode) */
	int user_bandwidth;                      /* 1: USER (stalls at that bandwidth), 0: CALC */
	int64_t ifmap_offset, filter_offset, ofmap_offset; /* address spaces, SCALE-Sim's defaults */
	int64_t banks, ports;                    /* banked SRAM (0 banks: not modelled) */
} lm_dlp_config;

typedef struct {
	int64_t ifmap_h, ifmap_w, filter_h, filter_w, channels, filters, stride;
} lm_dlp_layer;

enum { LM_DLP_IFMAP, LM_DLP_FILTER, LM_DLP_OFMAP };

/* One DMA transfer, stall or fold start, for the timelines (cycles as SCALE-Sim counts them). */
typedef struct {
	int kind;          /* 0 ifmap prefetch, 1 filter prefetch, 2 ofmap drain, 3 stall, 4 fold */
	int64_t start, end; /* cycles, inclusive; a stall: the cycle it began and its length in end */
	int64_t words;     /* words moved; a stall: which operand stalled (0..2); a fold: its index */
} lm_dlp_event;

typedef struct {
	int64_t cap, n, dropped;  /* the caller's array of cap events; beyond it, counted */
	lm_dlp_event *ev;
} lm_dlp_events;

typedef struct {
	int64_t M, N, K, ofmap_h, ofmap_w;
	int64_t Sr, Sc, T, row_folds, col_folds, fold_rows; /* demand rows (cycles) per fold */
	int64_t macs;
	int64_t total_cycles;     /* compute + stall cycles (SCALE-Sim's "Total Cycles") */
	int64_t stall_cycles;
	int64_t overall_cycles;   /* from the first DRAM read to the last DRAM write ("incl. prefetch") */
	double overall_util, mapping_eff, compute_util;     /* percent */
	int64_t sram[3];          /* ifmap reads, filter reads, ofmap writes */
	double sram_start[3], sram_stop[3];
	double avg_sram_bw[3];
	int64_t dram[3];          /* ifmap reads, filter reads, ofmap writes (words) */
	double dram_start[3], dram_stop[3];
	double avg_dram_bw[3];
	int64_t bank_conflict_cycles[2]; /* ifmap, filter: extra cycles a banked SRAM needs */
	int64_t bank_max_requests[2];    /* the most requests one bank saw in one cycle */
} lm_dlp_report;

/* SCALE-Sim's example configuration: a 32 x 32 OS array, 64 KiB scratchpads, 10 words per cycle
 * (USER), its address offsets (filters at 10^7, outputs at 2*10^7), no banks. */
lm_dlp_config lm_dlp_config_default(void);

/* Energy, Accelergy's way (action counts x energy per action), per level. The counts of a run:
 * MACs; 3 register accesses per MAC (two operands, the accumulator); 2 PE-to-PE hops per MAC (an
 * operand arrives from a neighbour, one is passed on); SRAM: the array's reads and writes plus
 * every word the DMA moves in or out; DRAM: the DMA's words. */
enum { LM_DLP_MAC, LM_DLP_REGISTER, LM_DLP_PE_HOP, LM_DLP_SRAM, LM_DLP_DRAM, LM_DLP_LEVELS };
typedef struct {
	double pj[LM_DLP_LEVELS]; /* per access, picojoules */
	const char *source;
} lm_dlp_energy_table;
/* Per 8-bit word at 45 nm: Eyeriss's normalized costs (Chen, Emer, Sze, ISCA 2016: MAC 1x,
 * register file 1x, array 2x, global buffer 6x, DRAM 200x) scaled by Horowitz's 8-bit multiply
 * (0.2 pJ) plus add (0.03 pJ) (ISSCC 2014): 0.23, 0.23, 0.46, 1.38, 46 pJ. */
extern const lm_dlp_energy_table lm_dlp_energy_default;
extern const char *const lm_dlp_level_names[LM_DLP_LEVELS]; /* "mac", "register", "pe_hop", "sram", "dram" */
/* The counts of a run (macs, sram[], dram[] of r), and with table (NULL: the default) the pJ. */
void lm_dlp_energy(const lm_dlp_report *r, const lm_dlp_energy_table *table, double counts[LM_DLP_LEVELS],
                   double pj[LM_DLP_LEVELS]);

/* Runs one layer. ev may be NULL. Errors (LM_ERR_ARG, naming the field): an array or SRAM size
 * that is not positive, a filter larger than its input, a stride below 1, an SRAM too small for
 * the model (CALC needs 100 words per scratchpad), operand matrices past 2^31 elements. */
lm_status lm_dlp_run(const lm_dlp_config *cfg, const lm_dlp_layer *layer, lm_dlp_report *out,
                     lm_dlp_events *ev);

/* What PE (r, c) does at cycle t of fold (fr, fc): mac 1 when it multiplies-accumulates then, with
 * the GEMM indices of its operands (p: output pixel, k: window position, n: filter); the
 * stationary operand's indices are filled even when it idles (-1 where the PE is unused). */
typedef struct { int mac; int64_t p, k, n; } lm_dlp_pe;

lm_status lm_dlp_pe_state(const lm_dlp_config *cfg, const lm_dlp_layer *layer, int64_t fr,
                          int64_t fc, int64_t t, lm_dlp_pe *pes /* rows*cols */);

#endif
