/* mx_quad.h - NeuronCore-v4 MX (the packed *_x4 dtypes): the layout rules
 * QuantizeMX (dve_mx.c) and the PE's MX load and matmul (pe_quad.c) share.
 * NKI (nki.isa.quantize_mx, nc_matmul_mx; trainium3_arch): a scaling group
 * is 8 partitions x the 4 lanes of one quad element, one uint8 (E8M0) scale
 * per group and quad column, placed by isa_mx_quad_scale_row (isa.h).
 * docs/semantics.md "MX on NeuronCore-v4". */
#ifndef TPB_SIM_MX_QUAD_H
#define TPB_SIM_MX_QUAD_H

#include <math.h>

#include "ops.h"

#define MX_QUAD_GROUP_ROWS 8

/* Data of P partitions (a multiple of 32, at most 128) and n quad columns
 * with its scale operand: uint8 (E8M0), n columns, and partitions enough
 * for the last group's row. */
static inline int mx_quad_check(sim_exec_ctx_t *ctx, const sim_opnd_t *data,
                                const sim_opnd_t *scale)
{
    if (data->nparts % 32)
        return sim_fail(ctx, "%s: MX data of %s span whole 32-partition quadrants: %u "
                        "partitions is not a multiple of 32", data->name,
                        isa_dtype_name(data->dtype), data->nparts);
    if (!isa_mx_scale_dtype(scale->dtype))
        return sim_fail(ctx, "%s: E8M0 scales are fp8e8m0 or uint8, not %s", scale->name,
                        isa_dtype_name(scale->dtype));
    unsigned rows = isa_mx_quad_scale_rows(data->nparts);
    if (scale->nparts < rows || scale->nfree != data->nfree)
        return sim_fail(ctx, "%s: %u data partitions need scales in partitions [0, %u) of it "
                        "(four per 32-partition quadrant) x %u columns, got %u x %u",
                        scale->name, data->nparts, rows, data->nfree, scale->nparts,
                        scale->nfree);
    return 0;
}

/* An E8M0 scale s as a power of two applied to x (255: NaN). */
static inline float mx_e8m0_apply(float x, unsigned s)
{
    return s == 255 ? NAN : ldexpf(x, (int)s - 127);
}

#endif
