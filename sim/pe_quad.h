/* pe_quad.h - the PE's MX load and matmul on packed quads (pe_quad.c),
 * called by pe.c's LdWeightsMX and MatmulMX when their data are *_x4
 * quads; operands resolved and checked by the caller (mx_quad_check). */
#ifndef TPB_SIM_PE_QUAD_H
#define TPB_SIM_PE_QUAD_H

#include <stdbool.h>

#include "ops.h"

/* Load src's quads (scaled) into the cells from (row_pos, col_pos). */
void sim_pe_quad_load(sim_exec_ctx_t *ctx, unsigned row_pos, unsigned col_pos,
                      const sim_opnd_t *src, const sim_opnd_t *scale);
/* dst = (or +=) the quad weights times mv's scaled quads; rscale: the
 * optional per-row output factor. */
int sim_pe_quad_matmul(sim_exec_ctx_t *ctx, unsigned row_pos, unsigned col_pos,
                       const sim_opnd_t *mv, const sim_opnd_t *scale, const sim_opnd_t *dst,
                       bool accumulate, const float *rscale);

#endif
