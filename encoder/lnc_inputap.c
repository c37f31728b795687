/* lnc_inputap.c - attachWholeTensorInputAP (bir_linker notes §3 (j):
 * "whole-tensor AP on linked inputs"): each linked input's whole-tensor
 * access pattern, attached to the cloned instructions that read it
 * (lnc.h, docs/multicore.md "Link"). */
#include <stdio.h>

#include "lnc.h"

static bool linked_input(const lnc_mloc_t *ml)
{
    return ml->space == ISA_SPACE_HBM && ml->bytes > 0 &&
           (ml->kind == LNC_ML_INPUT || ml->kind == LNC_ML_CONSTANT);
}

/* Bytes [lo, hi) a descriptor side spans; a 3-D descriptor adds its
 * planes (outer step step2 bytes, count2 planes). */
static void dap_span(const isa_dap_t *d, int64_t step2, uint32_t count2, int64_t *lo,
                     int64_t *hi)
{
    isa_dap_span(d, (int64_t)d->addr, lo, hi);
    int64_t ext = step2 * (count2 ? (int64_t)count2 - 1 : 0);
    if (ext < 0)
        *lo += ext;
    else
        *hi += ext;
}

static int attach(lnc_module_t *m, const lnc_func_t *fn, lnc_inst_t *in, tpb_err_t *err)
{
    const isa_dap_t *src;
    bool ranged;
    int64_t step2 = 0;
    uint32_t count2 = 1;
    if (isa_op_is_direct_dma(in->isa.op)) {
        src = &in->isa.f.DDESC.src;
        ranged = in->isa.f.DDESC.src_reg == ISA_REG_NONE;
        if (in->isa.op == ISA_OP_DMA_DIRECT3D) {
            step2 = in->isa.f.D3DESC.src_step2;
            count2 = in->isa.f.D3DESC.count2;
        }
    } else if (in->isa.op == ISA_OP_DMA_INDIRECT2D) {
        src = &in->isa.f.DIND.src;
        ranged = false;   /* rows picked at run time */
    } else {
        return 0;
    }
    if (src->space != ISA_SPACE_HBM)
        return 0;
    int64_t lo, hi;
    dap_span(src, step2, count2, &lo, &hi);
    for (int i = 0; i < m->nmlocs; i++) {
        lnc_mloc_t *ml = &m->mlocs[i];
        int64_t a = (int64_t)ml->addr, b = a + (int64_t)ml->bytes;
        if (!linked_input(ml) || (int64_t)src->addr < a || (int64_t)src->addr >= b)
            continue;
        if (ranged && (lo < a || hi > b))
            return tpb_errf(err, "%s instruction '%s' reads [%lld, %lld) of input '%s', outside "
                                 "its whole-tensor access pattern [%lld, %lld)",
                            fn->name, in->name, (long long)lo, (long long)hi, ml->name,
                            (long long)a, (long long)b);
        in->input_ap = i;
        ml->ap_readers++;
        return 0;
    }
    return 0;
}

int lnc_attach_whole_tensor_input_aps(lnc_module_t *m, tpb_err_t *err)
{
    for (int i = 0; i < m->nmlocs; i++) {
        m->mlocs[i].whole_ap = linked_input(&m->mlocs[i]);
        m->mlocs[i].ap_readers = 0;
    }
    for (int f = 1; f < m->nfuncs; f++)
        for (int b = 0; b < m->funcs[f].nblocks; b++)
            for (int i = 0; i < m->funcs[f].blocks[b].n; i++)
                if (m->funcs[f].blocks[b].insts[i].opc == LNC_OPC_ISA &&
                    attach(m, &m->funcs[f], &m->funcs[f].blocks[b].insts[i], err))
                    return -1;
    return 0;
}
