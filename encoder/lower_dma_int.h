/* lower_dma_int.h - what the direct-DMA lowering (lower_dma.c) and its
 * memo (lower_dma_memo.c) share: one side of a DMA as the gate sees it. */
#ifndef TPB_LOWER_DMA_INT_H
#define TPB_LOWER_DMA_INT_H

#include "lower.h"

#define MAX_BDIMS 16

typedef struct {
    int64_t step;    /* bytes */
    int64_t count;   /* elements */
} bdim_t;

typedef struct {
    unsigned space, dtype, dsz;
    uint64_t base;           /* linear byte address (SBUF/PSUM: partition*pitch + offset) */
    int nd;
    uint64_t elems;
    bir_access_t acc;
    int64_t lo, hi, total, row, hull;   /* the geometry (lw_dma_side_t) */
    bdim_t d[MAX_BDIMS];     /* outermost first, count-1 dims dropped; only d[0..nd) are set */
} dside_t;

typedef lw_jdim_t jdim_t;

/* dma_qos in range (the one check of the sides' path that reads the op;
 * inline: a memo hit runs it per DMA). */
static inline int lw_check_qos(lower_ctx_t *c)
{
    if (c->op->rare->qos < 0 || c->op->rare->qos > 255)
        return lw_err(c, "dma_qos %d must be 0..255", c->op->rare->qos);
    return 0;
}
/* Both sides of src -> dst and their legal joint dims j[*nj] (errors in
 * this order: the sides, their registers, the element counts, the qos,
 * the legalisation). */
int lw_direct_sides(lower_ctx_t *c, const tir_ap_t *srcap, const tir_ap_t *dstap, dside_t *s,
                    dside_t *d, jdim_t *j, int *nj);
/* lw_direct_sides through the DMA memo (lw_dma_memo_t): the same sides,
 * dims and errors. */
int lw_direct_sides_memo(lower_ctx_t *c, const tir_ap_t *srcap, const tir_ap_t *dstap,
                         dside_t *s, dside_t *d, jdim_t *j, int *nj);

#endif
