/*
 * dlp.c — the C half of `require 'lumen.dlp'`: lm._dlp.run and lm._dlp.pe_state over
 * src/dlp/dlp.c. lua/lumen/dlp.lua checks the user's tables, fills the defaults and builds these
 * flat ones (field names as lm_dlp_config / lm_dlp_layer's members).
 * Read next: include/lumen/dlp.h, lua/lumen/dlp.lua.
 */
#include <stddef.h>
#include <string.h>

#include "lml.h"
#include "lumen/dlp.h"

typedef struct {
	lm_dlp_config c;
	int dataflow, mode;
} cfg_in;

static const char *const dataflows[] = {"os", "ws", "is", NULL};
static const char *const modes[] = {"calc", "user", NULL};

static const lml_field cfg_fields[] = {
	LML_FIELD(cfg_in, c.rows, LML_INTEGER),
	LML_FIELD(cfg_in, c.cols, LML_INTEGER),
	LML_FIELD(cfg_in, dataflow, LML_NAME, .names = dataflows),
	LML_FIELD(cfg_in, mode, LML_NAME, .names = modes),
	LML_FIELD(cfg_in, c.ifmap_kb, LML_INTEGER),
	LML_FIELD(cfg_in, c.filter_kb, LML_INTEGER),
	LML_FIELD(cfg_in, c.ofmap_kb, LML_INTEGER),
	LML_FIELD(cfg_in, c.bandwidth, LML_INTEGER),
	LML_FIELD(cfg_in, c.ifmap_offset, LML_INTEGER),
	LML_FIELD(cfg_in, c.filter_offset, LML_INTEGER),
	LML_FIELD(cfg_in, c.ofmap_offset, LML_INTEGER),
	LML_FIELD(cfg_in, c.banks, LML_INTEGER),
	LML_FIELD(cfg_in, c.ports, LML_INTEGER),
	LML_FIELDS_END,
};

static const lml_field layer_fields[] = {
	LML_FIELD(lm_dlp_layer, ifmap_h, LML_INTEGER),
	LML_FIELD(lm_dlp_layer, ifmap_w, LML_INTEGER),
	LML_FIELD(lm_dlp_layer, filter_h, LML_INTEGER),
	LML_FIELD(lm_dlp_layer, filter_w, LML_INTEGER),
	LML_FIELD(lm_dlp_layer, channels, LML_INTEGER),
	LML_FIELD(lm_dlp_layer, filters, LML_INTEGER),
	LML_FIELD(lm_dlp_layer, stride, LML_INTEGER),
	LML_FIELDS_END,
};

/* the C names of the fields are "c.rows": the tables use the member's last part */
static void read_config(lua_State *L, int idx, lm_dlp_config *out)
{
	cfg_in in;
	memset(&in, 0, sizeof in);
	in.c = lm_dlp_config_default();
	in.dataflow = (int)in.c.dataflow;
	in.mode = in.c.user_bandwidth;
	lml_field f[sizeof cfg_fields / sizeof cfg_fields[0]];
	memcpy(f, cfg_fields, sizeof f);
	for (size_t i = 0; f[i].key; i++) {
		const char *dot = strchr(f[i].key, '.');
		if (dot) f[i].key = dot + 1;
	}
	lml_readopts(L, idx, "DLP field", f, &in);
	*out = in.c;
	out->dataflow = (lm_dlp_dataflow)in.dataflow;
	out->user_bandwidth = in.mode == 1;
}

static void setint(lua_State *L, const char *k, int64_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, k);
}

static void setnum(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

/* a double that holds an integer is pushed as one (cycles), others as floats */
static void setcycle(lua_State *L, const char *k, double v)
{
	if (v >= -9e15 && v <= 9e15 && v == (double)(int64_t)v) setint(L, k, (int64_t)v);
	else setnum(L, k, v);
}

/* Arguments 1 and 2: the array's configuration and the layer, as lua/lumen/dlp.lua passes them. */
static void read_args(lua_State *L, lm_dlp_config *c, lm_dlp_layer *l)
{
	memset(l, 0, sizeof *l);
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 2, LUA_TTABLE);
	read_config(L, 1, c);
	l->stride = 1;
	lml_readopts(L, 2, "layer field", layer_fields, l);
}

/* lm._dlp.run(config, layer [, max_events]): the report table (README of docs/dlp.md). */
static int d_run(lua_State *L)
{
	lm_dlp_config c;
	lm_dlp_layer l;
	read_args(L, &c, &l);
	int64_t cap = lml_optinteger(L, 3, "max_events", 0);
	if (cap < 0 || cap > (INT64_C(1) << 22)) lml_error(L, "max_events must be between 0 and 2^22, got %lld", (long long)cap);
	lm_dlp_events ev = {0};
	if (cap > 0) {
		ev.cap = cap;
		ev.ev = lua_newuserdatauv(L, (size_t)cap * sizeof *ev.ev, 0); /* bounded: cap <= 2^22 */
	}
	lm_dlp_report r;
	if (lm_dlp_run(&c, &l, &r, cap > 0 ? &ev : NULL)) lml_core_error(L);
	lua_createtable(L, 0, 64);
	setint(L, "M", r.M), setint(L, "N", r.N), setint(L, "K", r.K);
	setint(L, "ofmap_h", r.ofmap_h), setint(L, "ofmap_w", r.ofmap_w);
	setint(L, "Sr", r.Sr), setint(L, "Sc", r.Sc), setint(L, "T", r.T);
	setint(L, "row_folds", r.row_folds), setint(L, "col_folds", r.col_folds);
	setint(L, "fold_cycles", r.fold_rows);
	setint(L, "macs", r.macs);
	setint(L, "total_cycles", r.total_cycles);
	setint(L, "stall_cycles", r.stall_cycles);
	setint(L, "compute_cycles", r.total_cycles - r.stall_cycles);
	setint(L, "overall_cycles", r.overall_cycles);
	setnum(L, "overall_util", r.overall_util);
	setnum(L, "mapping_efficiency", r.mapping_eff);
	setnum(L, "compute_util", r.compute_util);
	static const char *const op[3] = {"ifmap", "filter", "ofmap"};
	static const char *const sram_count[3] = {"ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes"};
	static const char *const dram_count[3] = {"ifmap_dram_reads", "filter_dram_reads", "ofmap_dram_writes"};
	char key[48];
	for (int k = 0; k < 3; k++) {
		setint(L, sram_count[k], r.sram[k]);
		setint(L, dram_count[k], r.dram[k]);
		snprintf(key, sizeof key, "%s_sram_start", op[k]), setcycle(L, key, r.sram_start[k]);
		snprintf(key, sizeof key, "%s_sram_stop", op[k]), setcycle(L, key, r.sram_stop[k]);
		snprintf(key, sizeof key, "%s_dram_start", op[k]), setcycle(L, key, r.dram_start[k]);
		snprintf(key, sizeof key, "%s_dram_stop", op[k]), setcycle(L, key, r.dram_stop[k]);
		snprintf(key, sizeof key, "avg_%s_sram_bw", op[k]), setnum(L, key, r.avg_sram_bw[k]);
		snprintf(key, sizeof key, "avg_%s_dram_bw", op[k]), setnum(L, key, r.avg_dram_bw[k]);
	}
	setint(L, "ifmap_bank_conflict_cycles", r.bank_conflict_cycles[0]);
	setint(L, "filter_bank_conflict_cycles", r.bank_conflict_cycles[1]);
	setint(L, "ifmap_bank_max_requests", r.bank_max_requests[0]);
	setint(L, "filter_bank_max_requests", r.bank_max_requests[1]);
	if (cap > 0) {
		static const char *const kinds[5] = {"ifmap", "filter", "drain", "stall", "fold"};
		lua_createtable(L, (int)ev.n, 0); /* bounded: n <= cap <= 2^22 */
		for (int64_t i = 0; i < ev.n; i++) {
			const lm_dlp_event *e = &ev.ev[i];
			lua_createtable(L, 0, 4);
			lua_pushstring(L, kinds[e->kind]);
			lua_setfield(L, -2, "kind");
			setint(L, "start", e->start);
			if (e->kind == 3) {
				setint(L, "cycles", e->end);
				lua_pushstring(L, op[e->words]);
				lua_setfield(L, -2, "operand");
			} else if (e->kind == 4) {
				setint(L, "stop", e->end);
				setint(L, "fold", e->words + 1);
			} else {
				setint(L, "stop", e->end);
				setint(L, "words", e->words);
			}
			lua_rawseti(L, -2, (lua_Integer)i + 1);
		}
		lua_setfield(L, -2, "events");
		setint(L, "events_dropped", ev.dropped);
	}
	return 1;
}

/* lm._dlp.pe_state(config, layer, fold_row, fold_col, cycle): {mac=, p=, k=, n=} per PE, row-major
 * (0-based fold and cycle; indices 0-based, -1 where unused). */
static int d_pe_state(lua_State *L)
{
	lm_dlp_config c;
	lm_dlp_layer l;
	read_args(L, &c, &l);
	int64_t fr = lml_checkinteger(L, 3, "fold_row"), fc = lml_checkinteger(L, 4, "fold_col");
	int64_t t = lml_checkinteger(L, 5, "cycle");
	if (c.rows < 1 || c.cols < 1 || c.rows > 256 || c.cols > 256)
		lml_error(L, "rows=%lld, cols=%lld: the PE state is given for arrays up to 256 x 256", (long long)c.rows,
		          (long long)c.cols);
	lm_dlp_pe *pes = lua_newuserdatauv(L, (size_t)(c.rows * c.cols) * sizeof *pes, 0); /* bounded: 256 x 256 */
	if (lm_dlp_pe_state(&c, &l, fr, fc, t, pes)) lml_core_error(L);
	int64_t n = c.rows * c.cols; /* bounded: 256 x 256 */
	lua_createtable(L, (int)n, 0);
	for (int64_t i = 0; i < n; i++) {
		lua_createtable(L, 0, 4);
		lua_pushboolean(L, pes[i].mac);
		lua_setfield(L, -2, "mac");
		setint(L, "p", pes[i].p), setint(L, "k", pes[i].k), setint(L, "n", pes[i].n);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/* lm._dlp.energy_table(): the default table {mac=, register=, pe_hop=, sram=, dram=, source=}. */
static int d_energy_table(lua_State *L)
{
	lua_createtable(L, 0, LM_DLP_LEVELS + 1);
	for (int k = 0; k < LM_DLP_LEVELS; k++) setnum(L, lm_dlp_level_names[k], lm_dlp_energy_default.pj[k]);
	lua_pushstring(L, lm_dlp_energy_default.source);
	lua_setfield(L, -2, "source");
	return 1;
}

/* lm._dlp.energy(report, table): {counts = {...}, <level> = pJ, ..., total_pj =, source =} from a
 * report's macs, SRAM and DRAM counts and a table of non-negative pJ per access. */
static int d_energy(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 2, LUA_TTABLE);
	lm_dlp_report r;
	memset(&r, 0, sizeof r);
	static const char *const keys[7] = {"macs", "ifmap_sram_reads", "filter_sram_reads", "ofmap_sram_writes",
	                                    "ifmap_dram_reads", "filter_dram_reads", "ofmap_dram_writes"};
	int64_t *dst[7] = {&r.macs, &r.sram[0], &r.sram[1], &r.sram[2], &r.dram[0], &r.dram[1], &r.dram[2]};
	for (int i = 0; i < 7; i++) {
		lua_getfield(L, 1, keys[i]);
		int64_t v;
		if (!lml_isinteger(L, -1, &v) || v < 0) lml_error(L, "the report's %s is not a count", keys[i]);
		*dst[i] = v;
		lua_pop(L, 1);
	}
	lm_dlp_energy_table t = {.source = NULL};
	for (int k = 0; k < LM_DLP_LEVELS; k++) {
		lua_getfield(L, 2, lm_dlp_level_names[k]);
		if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0) || lua_tonumber(L, -1) > 1e30)
			lml_error(L, "table field '%s' must be a non-negative number (pJ per access)", lm_dlp_level_names[k]);
		t.pj[k] = lua_tonumber(L, -1);
		lua_pop(L, 1);
	}
	double counts[LM_DLP_LEVELS], pj[LM_DLP_LEVELS], total = 0;
	lm_dlp_energy(&r, &t, counts, pj);
	lua_createtable(L, 0, LM_DLP_LEVELS + 3);
	lua_createtable(L, 0, LM_DLP_LEVELS);
	for (int k = 0; k < LM_DLP_LEVELS; k++) setnum(L, lm_dlp_level_names[k], counts[k]);
	lua_setfield(L, -2, "counts");
	for (int k = 0; k < LM_DLP_LEVELS; k++) setnum(L, lm_dlp_level_names[k], pj[k]), total += pj[k];
	setnum(L, "total_pj", total);
	lua_getfield(L, 2, "source");
	lua_setfield(L, -2, "source");
	return 1;
}

void lml_open_dlp(lua_State *L, int mt, int m, int lm)
{
	(void)mt, (void)m;
	static const luaL_Reg fns[] = {{"run", d_run},
	                               {"pe_state", d_pe_state},
	                               {"energy", d_energy},
	                               {"energy_table", d_energy_table},
	                               {NULL, NULL}};
	lua_newtable(L);
	lml_setfuncs(L, lua_gettop(L), "dlp.", fns, 0);
	lua_setfield(L, lm, "_dlp");
}
