/*
 * lml_viz.h — what the two halves of the `viz` binding share: viz.c (windows, kernel scenes,
 * controls) and viz_data.c (tensors, graphs, models, curves). Read next: viz.c.
 */
#ifndef LUMEN_LML_VIZ_H
#define LUMEN_LML_VIZ_H

#include "lml.h"

/* viz.show(x, opts) when x is a tensor: the graph or the tensor scene. */
int lml_viz_show_tensor(lua_State *L);
/* Adds viz._show_model, viz._record, viz.plot, viz.follow, viz.clear and viz.due to the table at t. */
void lml_viz_data_funcs(lua_State *L, int t);

#endif
