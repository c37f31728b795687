/* pe_quad.c - the PE's MX load and matmul on packed quads (NeuronCore-v4,
 * NKI nc_matmul_mx): each PE cell holds four weights, one per lane, and a
 * moving quad's four lanes meet them in the same cell, so K is four times
 * the partitions (trainium3_arch "Quad-MXFP8/MXFP4").  Values are exact
 * after scaling (fp8/fp4 times a power of two); the sums are fp32:
 * dst[m][n] = sum over p ascending of (((w0 x0 + w1 x1) + w2 x2) + w3 x3),
 * the four lanes of a cell first.  docs/semantics.md "MX on
 * NeuronCore-v4". */
#include <stdlib.h>

#include "mx_quad.h"
#include "numeric.h"
#include "pe_quad.h"

void sim_pe_quad_load(sim_exec_ctx_t *ctx, unsigned row_pos, unsigned col_pos,
                      const sim_opnd_t *src, const sim_opnd_t *scale)
{
    sim_pe_state_t *pe = ctx->pe;
    for (unsigned k = 0; k < src->nparts; k++)
        for (uint32_t m = 0; m < src->nfree; m++) {
            unsigned r = row_pos + k, c = col_pos + m;
            pe->w_loaded[r][c] = 1;
            if (ctx->timing_only)
                continue;
            unsigned s = *sim_el(scale, isa_mx_quad_scale_row(k), m);
            const uint8_t *q = sim_el(src, k, m);
            for (unsigned l = 0; l < 4; l++)
                pe->w_quad[r][c][l] = mx_e8m0_apply(num_load_x4(q, src->dtype, l), s);
        }
    pe->quad = 1;
}

int sim_pe_quad_matmul(sim_exec_ctx_t *ctx, unsigned row_pos, unsigned col_pos,
                       const sim_opnd_t *mv, const sim_opnd_t *scale, const sim_opnd_t *dst,
                       bool accumulate, const float *rscale)
{
    unsigned k = mv->nparts, m = dst->nparts;
    uint32_t n = mv->nfree;
    /* the moving quads, scaled, lane by lane: x[(p * n + j) * 4 + l] */
    float *x = malloc((size_t)k * n * 4 * sizeof *x);
    if (!x)
        return sim_fail_data(ctx, "out of memory for the MX moving data (%u x %u quads)", k, n);
    for (unsigned p = 0; p < k; p++)
        for (uint32_t j = 0; j < n; j++) {
            unsigned s = *sim_el(scale, isa_mx_quad_scale_row(p), j);
            const uint8_t *q = sim_el(mv, p, j);
            for (unsigned l = 0; l < 4; l++)
                x[((size_t)p * n + j) * 4 + l] = mx_e8m0_apply(num_load_x4(q, mv->dtype, l), s);
        }
    const sim_pe_state_t *pe = ctx->pe;
    for (unsigned c = 0; c < m; c++)
        for (uint32_t j = 0; j < n; j++) {
            float acc = 0.0f;
            for (unsigned p = 0; p < k; p++) {
                const float *w = pe->w_quad[row_pos + p][col_pos + c];
                const float *v = &x[((size_t)p * n + j) * 4];
                float cell = w[0] * v[0];
                cell += w[1] * v[1];
                cell += w[2] * v[2];
                cell += w[3] * v[3];
                acc += cell;
            }
            if (rscale)   /* MX output scale: the sum times the row's factor, in fp32 */
                acc *= rscale[c];
            uint8_t *o = sim_el(dst, c, j);
            if (accumulate)
                acc = num_load_f32(o, dst->dtype) + acc;
            num_store_f32(o, dst->dtype, acc);
        }
    free(x);
    return 0;
}
