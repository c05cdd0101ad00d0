/*
 * dist_mpi.c — liblumen_dist.so: Open MPI under lumen.dist (lua/lumen/dist.lua), loaded on first
 * use (src/lua/dist_loader.c), so a program that never distributes loads no MPI.
 *
 * Each function works on whole contiguous CPU tensors in place (Lua makes them contiguous and
 * checks that the ranks agree on shape and dtype first, through `agree`): all-reduce, broadcast,
 * all-gather, reduce-scatter, send, receive, and the send-receive pair the ring and tree
 * algorithms of dist.lua are written with. Errors come back as Lua errors naming the call and
 * MPI's message (MPI_ERRORS_RETURN on the world communicator), never an abort; `abort` is there
 * for the program's end after an error (dist.lua: lm._at_exit), so no rank waits forever for one
 * that died.
 * Read next: lua/lumen/dist.lua.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <mpi.h>

#include "lua/lml.h"
#include "lumen/core.h"

/* The MPI type of an element, from the type table's row (integers by size and sign; floats of 4 and
 * 8 bytes); 16-bit floats and block types have none. */
static MPI_Datatype mpi_type(lua_State *L, const char *fname, lm_dtype dt)
{
	const lm_dtype_traits *tr = lm_dtype_traits_of(dt);
	size_t n = tr ? tr->type_size : 0;
	if (tr && tr->block_size == 1) {
		if (tr->is_int && tr->is_signed)
			return n == 1 ? MPI_INT8_T : n == 4 ? MPI_INT32_T : n == 8 ? MPI_INT64_T : MPI_DATATYPE_NULL;
		if (tr->is_int) return n == 1 ? MPI_UINT8_T : MPI_DATATYPE_NULL;
		if (n == 4 && tr->compute_as == dt) return MPI_FLOAT;
		if (n == 8) return MPI_DOUBLE;
	}
	luaL_error(L, "%s: tensors of dtype %s cannot be sent (float32, float64, int32, int64, uint8, int8)", fname,
	           lm_dtype_name(dt));
	return MPI_DATATYPE_NULL;
}

static void check_mpi(lua_State *L, const char *fname, int rc)
{
	if (rc == MPI_SUCCESS) return;
	char msg[MPI_MAX_ERROR_STRING];
	int n = 0;
	MPI_Error_string(rc, msg, &n);
	luaL_error(L, "%s: MPI failed: %s", fname, msg);
}

/* A contiguous CPU tensor argument: its data, count and MPI type. */
typedef struct buf {
	void *data;
	int count;
	MPI_Datatype type;
	lm_dtype dt;
} buf;

static buf arg_buf(lua_State *L, int idx, const char *fname)
{
	lm_tensor *t = lml_checktensor(L, idx, "tensor");
	if (!lm_tensor_is_contiguous(t)) luaL_error(L, "%s: the tensor must be contiguous", fname);
	if (lm_tensor_device(t) != LM_CPU) luaL_error(L, "%s: the tensor must be on the CPU", fname);
	int64_t n = lm_tensor_numel(t);
	if (n > INT32_MAX) luaL_error(L, "%s: %lld elements are more than one MPI message carries", fname, (long long)n);
	buf b = {lm_tensor_data(t), (int)n, mpi_type(L, fname, lm_tensor_dtype(t)), lm_tensor_dtype(t)};
	return b;
}

static MPI_Op op_of(lua_State *L, int idx, const char *fname)
{
	static const char *const names[] = {"sum", "max", "min", NULL};
	static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};
	return ops[luaL_checkoption(L, idx, "sum", names)];
	(void)fname;
}

static int peer(lua_State *L, int idx, const char *fname)
{
	lua_Integer r = luaL_checkinteger(L, idx);
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (r < 0 || r >= size) luaL_error(L, "%s: rank %lld is not in the world of %d ranks (0..%d)", fname, (long long)r, size, size - 1);
	return (int)r;
}

/* init() -> rank, size */
static int d_init(lua_State *L)
{
	int done = 0;
	MPI_Initialized(&done);
	if (!done) {
		int provided;
		check_mpi(L, "dist.init", MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	}
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	lua_pushinteger(L, rank);
	lua_pushinteger(L, size);
	return 2;
}

static int d_finalize(lua_State *L)
{
	(void)L;
	int init = 0, fin = 0;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (init && !fin) MPI_Finalize();
	return 0;
}

static int d_abort(lua_State *L)
{
	int code = (int)luaL_optinteger(L, 1, 1);
	int init = 0, fin = 0;
	MPI_Initialized(&init);
	MPI_Finalized(&fin);
	if (init && !fin) MPI_Abort(MPI_COMM_WORLD, code);
	return 0;
}

static int d_barrier(lua_State *L)
{
	check_mpi(L, "dist.barrier", MPI_Barrier(MPI_COMM_WORLD));
	return 0;
}

static int d_wtime(lua_State *L)
{
	lua_pushnumber(L, MPI_Wtime());
	return 1;
}

/* agree(text) -> nil when every rank gave the same text (at most 255 bytes), else a list of the
 * texts by rank (1-based list of ranks 0..n-1). */
static int d_agree(lua_State *L)
{
	size_t n;
	const char *s = luaL_checklstring(L, 1, &n);
	char mine[256] = {0};
	memcpy(mine, s, n < 255 ? n : 255);
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char *all = lua_newuserdatauv(L, (size_t)size * 256, 0); /* bounded: size ranks of 256 bytes */
	check_mpi(L, "dist.agree", MPI_Allgather(mine, 256, MPI_CHAR, all, 256, MPI_CHAR, MPI_COMM_WORLD));
	bool same = true;
	for (int r = 1; r < size; r++) same = same && memcmp(all, all + (size_t)r * 256, 256) == 0;
	if (same) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, size, 0);
	for (int r = 0; r < size; r++) {
		all[(size_t)r * 256 + 255] = '\0';
		lua_pushstring(L, all + (size_t)r * 256);
		lua_rawseti(L, -2, r + 1);
	}
	return 1;
}

/* allreduce(t, op): in place */
static int d_allreduce(lua_State *L)
{
	buf b = arg_buf(L, 1, "dist.all_reduce");
	MPI_Op op = op_of(L, 2, "dist.all_reduce");
	check_mpi(L, "dist.all_reduce", MPI_Allreduce(MPI_IN_PLACE, b.data, b.count, b.type, op, MPI_COMM_WORLD));
	return 0;
}

/*
 * ring_allreduce(t, op): Lumen's ring all-reduce, in place, on point-to-point messages (the
 * algorithm dist.lua describes and the allreduce scene animates): t's k elements in n chunks
 * (sizes differ by at most one); reduce-scatter: in step s rank r sends chunk (r - s) mod n to
 * r + 1 and reduces chunk (r - s - 1) mod n with what r - 1 sends; all-gather: n - 1 more steps
 * pass the finished chunks on, received in place. A reduce-scatter step's chunk goes in segments
 * of RING_SEG bytes, all posted at once, so that the reduction of one segment overlaps the
 * arrival of the next (MPI_Reduce_local: received op local, the same bits as local op received
 * for sum, max and min). Every rank ends with the same bits, summed in a fixed order.
 */
#define RING_SEG (128 * 1024)

static void chunk_of(int64_t k, int n, int c, int64_t *first, int64_t *len)
{
	int64_t base = k / n, extra = k % n;
	*first = c * base + (c < extra ? c : extra);
	*len = base + (c < extra ? 1 : 0);
}

static int d_ring_allreduce(lua_State *L)
{
	const char *fname = "dist.all_reduce";
	buf b = arg_buf(L, 1, fname);
	MPI_Op op = op_of(L, 2, fname);
	int n, r, esz;
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	if (n == 1) return 0;
	MPI_Type_size(b.type, &esz);
	int64_t k = b.count, seg = RING_SEG / esz;
	int right = (r + 1) % n, left = (r - 1 + n) % n;
	char *data = b.data;
	int64_t maxlen = k / n + (k % n ? 1 : 0);
	int64_t maxseg = maxlen / seg + 1;
	/* scratch and requests as userdata: an MPI error raises, and the collector frees them */
	char *scratch = lua_newuserdatauv(L, (size_t)(maxlen > 0 ? maxlen : 1) * (size_t)esz, 0);
	MPI_Request *req = lua_newuserdatauv(L, (size_t)(2 * maxseg) * sizeof *req, 0);
	for (int s = 0; s < n - 1; s++) {
		int64_t of, ol, inf, il;
		chunk_of(k, n, ((r - s) % n + n) % n, &of, &ol);
		chunk_of(k, n, ((r - s - 1) % n + n) % n, &inf, &il);
		int64_t ns_in = il > 0 ? (il + seg - 1) / seg : 1, ns_out = ol > 0 ? (ol + seg - 1) / seg : 1;
		for (int64_t j = 0; j < ns_in; j++) { /* an empty chunk still sends one empty message: pairs stay matched */
			int64_t c = il - j * seg < seg ? il - j * seg : seg;
			check_mpi(L, fname, MPI_Irecv(scratch + j * seg * esz, (int)c, b.type, left, 1, MPI_COMM_WORLD, &req[j]));
		}
		for (int64_t j = 0; j < ns_out; j++) {
			int64_t c = ol - j * seg < seg ? ol - j * seg : seg;
			check_mpi(L, fname, MPI_Isend(data + (of + j * seg) * esz, (int)c, b.type, right, 1, MPI_COMM_WORLD,
			                              &req[ns_in + j]));
		}
		for (int64_t j = 0; j < ns_in; j++) {
			int64_t c = il - j * seg < seg ? il - j * seg : seg;
			check_mpi(L, fname, MPI_Wait(&req[j], MPI_STATUS_IGNORE));
			if (c > 0)
				check_mpi(L, fname, MPI_Reduce_local(scratch + j * seg * esz, data + (inf + j * seg) * esz, (int)c,
				                                     b.type, op));
		}
		check_mpi(L, fname, MPI_Waitall((int)ns_out, req + ns_in, MPI_STATUSES_IGNORE));
	}
	for (int s = 0; s < n - 1; s++) {
		int64_t of, ol, inf, il;
		chunk_of(k, n, ((r + 1 - s) % n + n) % n, &of, &ol);
		chunk_of(k, n, ((r - s) % n + n) % n, &inf, &il);
		check_mpi(L, fname, MPI_Sendrecv(data + of * esz, (int)ol, b.type, right, 2, data + inf * esz, (int)il, b.type,
		                                 left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	lua_pop(L, 2);
	return 0;
}

/* bcast(t, root): in place */
static int d_bcast(lua_State *L)
{
	buf b = arg_buf(L, 1, "dist.broadcast");
	int root = peer(L, 2, "dist.broadcast");
	check_mpi(L, "dist.broadcast", MPI_Bcast(b.data, b.count, b.type, root, MPI_COMM_WORLD));
	return 0;
}

/* allgather(src, dst): dst holds size x src's elements */
static int d_allgather(lua_State *L)
{
	buf s = arg_buf(L, 1, "dist.all_gather"), d = arg_buf(L, 2, "dist.all_gather");
	check_mpi(L, "dist.all_gather", MPI_Allgather(s.data, s.count, s.type, d.data, s.count, s.type, MPI_COMM_WORLD));
	(void)d;
	return 0;
}

/* reduce_scatter(src, dst, op): dst holds src's elements / size */
static int d_reduce_scatter(lua_State *L)
{
	buf s = arg_buf(L, 1, "dist.reduce_scatter"), d = arg_buf(L, 2, "dist.reduce_scatter");
	MPI_Op op = op_of(L, 3, "dist.reduce_scatter");
	check_mpi(L, "dist.reduce_scatter",
	          MPI_Reduce_scatter_block(s.data, d.data, d.count, s.type, op, MPI_COMM_WORLD));
	return 0;
}

/* iallreduce(t, op) -> request: starts an all-reduce of t in place; wait(request) ends it (t must
 * stay alive until then: the caller keeps it). */
static const char REQ_MT[] = "lumen.dist.request";

static int d_iallreduce(lua_State *L)
{
	buf b = arg_buf(L, 1, "dist.all_reduce");
	MPI_Op op = op_of(L, 2, "dist.all_reduce");
	MPI_Request *r = lua_newuserdatauv(L, sizeof *r, 0);
	*r = MPI_REQUEST_NULL;
	luaL_setmetatable(L, REQ_MT);
	check_mpi(L, "dist.all_reduce", MPI_Iallreduce(MPI_IN_PLACE, b.data, b.count, b.type, op, MPI_COMM_WORLD, r));
	return 1;
}

static int d_wait(lua_State *L)
{
	MPI_Request *r = luaL_checkudata(L, 1, REQ_MT);
	if (*r != MPI_REQUEST_NULL) check_mpi(L, "dist.wait", MPI_Wait(r, MPI_STATUS_IGNORE));
	return 0;
}

static int d_send(lua_State *L)
{
	buf b = arg_buf(L, 1, "dist.send");
	int to = peer(L, 2, "dist.send");
	int tag = (int)luaL_optinteger(L, 3, 0);
	check_mpi(L, "dist.send", MPI_Send(b.data, b.count, b.type, to, tag, MPI_COMM_WORLD));
	return 0;
}

/* isend(t, to [, tag]) -> request: starts sending t; wait(request) ends it (t must stay alive and
 * unchanged until then: the caller keeps it) */
static int d_isend(lua_State *L)
{
	buf b = arg_buf(L, 1, "dist.isend");
	int to = peer(L, 2, "dist.isend");
	int tag = (int)luaL_optinteger(L, 3, 0);
	MPI_Request *r = lua_newuserdatauv(L, sizeof *r, 0);
	*r = MPI_REQUEST_NULL;
	luaL_setmetatable(L, REQ_MT);
	check_mpi(L, "dist.isend", MPI_Isend(b.data, b.count, b.type, to, tag, MPI_COMM_WORLD, r));
	return 1;
}

static int d_recv(lua_State *L)
{
	buf b = arg_buf(L, 1, "dist.recv");
	int from = peer(L, 2, "dist.recv");
	int tag = (int)luaL_optinteger(L, 3, 0);
	MPI_Status st;
	check_mpi(L, "dist.recv", MPI_Recv(b.data, b.count, b.type, from, tag, MPI_COMM_WORLD, &st));
	int got = 0;
	MPI_Get_count(&st, b.type, &got);
	if (got != b.count)
		luaL_error(L, "dist.recv: rank %d sent %d elements, the tensor here holds %d", from, got, b.count);
	return 0;
}

/* sendrecv(s, to, r, from [, tag]): s to `to` while r comes from `from` (no deadlock in a ring) */
static int d_sendrecv(lua_State *L)
{
	buf s = arg_buf(L, 1, "dist.sendrecv"), r = arg_buf(L, 3, "dist.sendrecv");
	int to = peer(L, 2, "dist.sendrecv"), from = peer(L, 4, "dist.sendrecv");
	int tag = (int)luaL_optinteger(L, 5, 0);
	MPI_Status st;
	check_mpi(L, "dist.sendrecv",
	          MPI_Sendrecv(s.data, s.count, s.type, to, tag, r.data, r.count, r.type, from, tag, MPI_COMM_WORLD, &st));
	return 0;
}

static int d_version(lua_State *L)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	MPI_Get_library_version(v, &n);
	char *nl = strchr(v, ',');
	if (nl) *nl = '\0';
	lua_pushstring(L, v);
	return 1;
}

static const luaL_Reg funcs[] = {
	{"init", d_init},           {"finalize", d_finalize},   {"abort", d_abort},
	{"barrier", d_barrier},     {"wtime", d_wtime},         {"agree", d_agree},
	{"allreduce", d_allreduce}, {"bcast", d_bcast},         {"allgather", d_allgather},
	{"reduce_scatter", d_reduce_scatter},                   {"send", d_send},
	{"recv", d_recv},           {"sendrecv", d_sendrecv},   {"version", d_version},
	{"iallreduce", d_iallreduce}, {"wait", d_wait},       {"isend", d_isend},
	{"ring_allreduce", d_ring_allreduce},
	{NULL, NULL},
};

/* The module's one entry: pushes the table of functions. */
__attribute__((visibility("default"))) int lumen_dist_open(lua_State *L);
int lumen_dist_open(lua_State *L)
{
	luaL_newmetatable(L, REQ_MT); /* requests: plain userdata (a request left unwaited is MPI's to clean) */
	lua_pop(L, 1);
	luaL_newlib(L, funcs);
	return 1;
}
