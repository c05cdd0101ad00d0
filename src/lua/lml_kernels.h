/*
 * lml_kernels.h — what the three files of the `kernels` binding share: kernels.c (the calls and
 * their info tables), kernels_trace.c (the lumen.Trace userdata of info.trace) and
 * kernels_sparse.c (the lumen.Sparse userdata of kernels.sparse).
 *
 * Read next: kernels.c.
 */
#ifndef LUMEN_LML_KERNELS_H
#define LUMEN_LML_KERNELS_H

#include "lml.h"
#include "lumen/kernels.h"

#define LML_TRACE_MT "lumen.Trace"
#define LML_SPARSE_MT "lumen.Sparse"

/* Raises the core's last error. The core names the call "kernels.scan", as Lua does: its message
 * is raised as it is when it starts with the binding's name. */
_Noreturn int lml_kernel_error(lua_State *L);

/*
 * A userdata class: registers metatable mt (its metamethods meta named "<Class>:__x", a table
 * "methods" of methods named "<class>:x", and the list "fields" of the fields __index answers,
 * for the REPL's Tab completion, which never calls an __index function).
 */
void lml_kernels_class(lua_State *L, const char *mt, const char *cls, const luaL_Reg *meta,
                       const luaL_Reg *methods, const char *const *fields);
/* For an __index: pushes the method named by the string key at 2 (nil when there is none). */
int lml_kernels_method(lua_State *L);

/* kernels.c: a box that owns a core info until collected (NULL inside), on the stack; the info
 * table of the boxed info (tracebox: an empty trace box for info.trace; want_trace: add it). */
lm_kernel_info **lml_newinfobox(lua_State *L);
void lml_push_info(lua_State *L, int infobox, int tracebox, int want_trace);
/* The C object behind an info table that lml_push_info made (NULL for any other value). */
lm_kernel_info *lml_info_of(lua_State *L, int idx);
/* launch.c: kernels.launch and kernels.racecheck into the kernels table at k (after its options). */
void lml_open_launch(lua_State *L, int k);

/* kernels_trace.c: the Trace class; a new empty trace box (NULL inside) on the stack. */
void lml_open_trace(lua_State *L);
lm_trace **lml_newtracebox(lua_State *L);

/* kernels_sparse.c: the Sparse class, and kernels.sparse into the table at k. */
void lml_open_sparse(lua_State *L, int k);
/* The sparse matrix at idx; raises "<what> must be a sparse matrix (kernels.sparse), got X" or
 * "the sparse matrix is closed". */
lm_sparse *lml_checksparse(lua_State *L, int idx, const char *what);

#endif
