/* dma_int.h - what the DMA issue and timing code (dma.c) and the data
 * movement (dma_move.c) share. */
#ifndef TPB_SIM_DMA_INT_H
#define TPB_SIM_DMA_INT_H

#include "sim_int.h"

#define PITCH ((int64_t)ISA_DMA_PARTITION_PITCH)

static inline const char *space_name(unsigned sp)
{
    const char *n = isa_enum_name(ISA_FT_SPACE, sp);
    return n ? n : "?";
}

static inline bool on_chip(unsigned sp) { return sp == ISA_SPACE_SBUF || sp == ISA_SPACE_PSUM; }

static inline uint32_t space_pb(const sim_t *s, unsigned sp)
{
    return sp == ISA_SPACE_SBUF ? s->t->sbuf_partition_bytes : s->t->psum_partition_bytes;
}

static inline uint64_t dap_elems(const isa_dap_t *p) { return (uint64_t)p->count[0] * p->count[1]; }

/* The planes of a direct descriptor: one for PseudoDmaDirect2d, count2 for
 * PseudoDmaDirect3d (plane k at k * step bytes on each side). */
typedef struct {
    uint32_t n;
    int64_t sstep, dstep;
} plane_t;

static inline plane_t planes_of(const isa_inst_t *in)
{
    if (in->op != ISA_OP_DMA_DIRECT3D)
        return (plane_t){1, 0, 0};
    return (plane_t){in->f.D3DESC.count2, in->f.D3DESC.src_step2, in->f.D3DESC.dst_step2};
}

/* Move one descriptor's data (transfer start): per DMA engine, bytes into
 * eng[] and cost (milli-bytes at peak) into cost[]; HBM bytes into *hbm. */
int sim_dma_move_desc(sim_t *s, sim_core_t *c, sim_xfer_t *x, const sim_desc_t *sd, uint64_t *eng,
                      uint64_t *cost, unsigned ne, uint64_t *hbm, tpb_err_t *err);
/* unique_indices: no destination row of the transfer's scatters written twice. */
/* n rows of len bytes from src (rows sstep bytes apart) to dst (dstep
 * apart), in row order as n memmoves would (dma_move.c). */
void sim_dma_copy_rows(uint8_t *dst, int64_t dstep, const uint8_t *src, int64_t sstep, uint32_t n,
                       size_t len);

int sim_dma_check_unique(sim_t *s, sim_core_t *c, sim_xfer_t *x, tpb_err_t *err);

#endif
