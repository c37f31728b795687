/* hbmcheck.c - load-time audit: every HBM byte range a DMA descriptor reads
 * lies inside a tensor of tensor-map.json (docs/simulator.md, "HBM reads
 * outside the tensor map").
 *
 * Checked statically: PseudoDmaDirect2d/3d (each plane) with an HBM source and no src_reg
 * (and its HBM destination when compute=add, which reads it too).  Skipped:
 * a side with a register offset (its address is known only at run time) and
 * PseudoDmaIndirect2d (the rows it reads depend on index values); those
 * still get the run-time bounds check of dma.c. */
#include "sim_int.h"

#include <stdio.h>

static bool inside_one(const sim_t *s, int64_t lo, int64_t hi)
{
    for (unsigned i = 0; i < s->ntensors; i++) {
        const sim_tensor_t *t = &s->tensors[i];
        if (lo >= (int64_t)t->addr && hi <= (int64_t)(t->addr + t->bytes))
            return true;
    }
    return false;
}

/* The tensor closest to [lo, hi): overlapping it, else the smallest gap. */
static const sim_tensor_t *nearest(const sim_t *s, int64_t lo, int64_t hi)
{
    const sim_tensor_t *best = NULL;
    int64_t bd = 0;
    for (unsigned i = 0; i < s->ntensors; i++) {
        const sim_tensor_t *t = &s->tensors[i];
        int64_t a = (int64_t)t->addr, b = (int64_t)(t->addr + t->bytes);
        int64_t d = hi <= a ? a - hi : lo >= b ? lo - b : 0;
        if (!best || d < bd) {
            best = t;
            bd = d;
        }
    }
    return best;
}

static int range_error(const sim_t *s, const sim_core_t *c, const sim_engine_t *e, size_t idx,
                       const char *opnd, int64_t lo, int64_t hi, tpb_err_t *err)
{
    const sim_tensor_t *t = nearest(s, lo, hi);
    char near[400];
    if (t)
        snprintf(near, sizeof near, "nearest tensor '%s' (%s) declares HBM bytes [%llu, %llu) "
                 "(%llu bytes)", t->name, t->kind, (unsigned long long)t->addr,
                 (unsigned long long)(t->addr + t->bytes), (unsigned long long)t->bytes);
    else
        snprintf(near, sizeof near, "the tensor map declares no tensor");
    return sim_inst_errf(err, c, e, idx,
                         "operand %s reads HBM bytes [%lld, %lld), which is not inside a tensor "
                         "of tensor-map.json; %s",
                         opnd, (long long)lo, (long long)hi, near);
}

/* A pattern whose bounding range spans tensors is accepted row by row
 * (each row's range inside one tensor). */
static int check_read(const sim_t *s, const sim_core_t *c, const sim_engine_t *e, size_t idx,
                      const char *opnd, const isa_dap_t *p, tpb_err_t *err)
{
    if (p->space != ISA_SPACE_HBM || !p->count[0] || !p->count[1])
        return 0;
    int64_t lo, hi;
    isa_dap_span(p, (int64_t)p->addr, &lo, &hi);
    if (inside_one(s, lo, hi))
        return 0;
    isa_dap_t row = *p;
    row.count[1] = 1;
    for (uint32_t j = 0; j < p->count[1]; j++) {
        int64_t rl, rh;
        isa_dap_span(&row, (int64_t)p->addr + (int64_t)j * p->step[1], &rl, &rh);
        if (!inside_one(s, rl, rh))
            return range_error(s, c, e, idx, opnd, rl, rh, err);
    }
    return 0;
}

int sim_check_hbm_reads(const sim_t *s, const sim_core_t *c, const sim_engine_t *e,
                        tpb_err_t *err)
{
    for (size_t i = 0; i < e->stream.count; i++) {
        const isa_decoded_t *d = &e->stream.insts[i];
        if (!isa_op_is_direct_dma(d->inst.op))
            continue;
        /* D3DESC shares DDESC's leading fields (isa.h); each of its planes
         * is a 2-D pattern at the plane's addresses */
        const isa_fmt_DDESC_t *f = &d->inst.f.DDESC;
        bool d3 = d->inst.op == ISA_OP_DMA_DIRECT3D;
        uint32_t np = d3 ? d->inst.f.D3DESC.count2 : 1;
        for (uint32_t k = 0; k < np; k++) {
            isa_dap_t sp = f->src, dp = f->dst;
            if (d3) {
                sp.addr = (uint32_t)((int64_t)sp.addr + (int64_t)k * d->inst.f.D3DESC.src_step2);
                dp.addr = (uint32_t)((int64_t)dp.addr + (int64_t)k * d->inst.f.D3DESC.dst_step2);
            }
            if (f->src_reg == ISA_REG_NONE && check_read(s, c, e, i, "src", &sp, err))
                return -1;
            if (f->compute == ISA_DMAOP_ADD && f->dst_reg == ISA_REG_NONE &&
                check_read(s, c, e, i, "dst (compute=add)", &dp, err))
                return -1;
        }
    }
    return 0;
}
