/* lnc_descreuse.c - enableDmaDescReuse ("DMA Descriptor ReUse Enabled",
 * bir_linker notes §2): the instances of one module definition share its
 * DMA descriptors.  A definition's parameters (lnc_instance.c) are HBM
 * addresses of descriptor sides; with reuse each keeps the first
 * instance's address plus a register offset of the issuing engine, and the
 * call site sets the register (RegSet before its Call), so every instance
 * runs the same descriptors.  docs/multicore.md "Module definitions and
 * instances". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lnc.h"
#include "lnc_bir.h"

static isa_dap_t *param_side(lnc_func_t *d, const lnc_param_t *p)
{
    isa_inst_t *x = &d->blocks[p->block].insts[p->inst].isa;
    if (!isa_op_is_direct_dma(x->op))
        return NULL;   /* DmaIndirect2d sides have no register offset */
    return p->side ? &x->f.DDESC.src : &x->f.DDESC.dst;
}

static uint32_t *param_reg(lnc_func_t *d, const lnc_param_t *p)
{
    isa_inst_t *x = &d->blocks[p->block].insts[p->inst].isa;
    return p->side ? &x->f.DDESC.src_reg : &x->f.DDESC.dst_reg;
}

static void mark_used(void *ctx, uint32_t *field, int count)
{
    bool *used = ctx;
    for (int i = 0; i < (count < 1 ? 1 : count); i++)
        if (*field + (uint32_t)i < ISA_NUM_REGS)
            used[*field + (uint32_t)i] = true;
}

/* The registers the block names. */
static void regs_used(const lnc_block_t *b, bool used[ISA_NUM_REGS])
{
    memset(used, 0, ISA_NUM_REGS * sizeof *used);
    for (int i = 0; i < b->n; i++) {
        bir_inst_t t;
        isa_body_t body = b->insts[i].isa.f;   /* a copy: mark_used only reads */
        memset(&t, 0, sizeof t);
        t.isa.op = b->insts[i].isa.op;
        t.isa.f = &body;
        lnc_bir_for_regs(&t, mark_used, used);
    }
}

/* Offset in elements of instance k's argument for parameter p. */
static bool arg_offset(lnc_func_t *d, int p, int k, int64_t *off)
{
    const isa_dap_t *s = param_side(d, &d->params[p]);
    unsigned elem = isa_dtype_size(s->dtype);
    int64_t delta = (int64_t)d->insts[k].args[p] - (int64_t)s->addr;
    if (!elem || delta % (int64_t)elem)
        return false;
    *off = delta / (int64_t)elem;
    return *off >= INT32_MIN && *off <= INT32_MAX;
}

static bool same_offsets(lnc_func_t *d, int p, int q)
{
    if (d->params[p].block != d->params[q].block)
        return false;
    for (int k = 0; k < d->ninsts; k++) {
        int64_t a, b;
        if (!arg_offset(d, p, k, &a) || !arg_offset(d, q, k, &b) || a != b)
            return false;
    }
    return true;
}

/* Registers for the parameters of d (reg[p]); false when d cannot share
 * its descriptors. */
static bool plan(lnc_func_t *d, int *reg)
{
    bool used[8][ISA_NUM_REGS];
    if (d->nblocks > 8)
        return false;
    for (int b = 0; b < d->nblocks; b++)
        regs_used(&d->blocks[b], used[b]);
    for (int p = 0; p < d->nparams; p++) {
        const isa_dap_t *s = param_side(d, &d->params[p]);
        int64_t off;
        if (!s || *param_reg(d, &d->params[p]) != ISA_REG_NONE)
            return false;
        for (int k = 0; k < d->ninsts; k++)
            if (!arg_offset(d, p, k, &off))
                return false;
        reg[p] = -1;
        for (int q = 0; q < p && reg[p] < 0; q++)
            if (same_offsets(d, p, q))
                reg[p] = reg[q];
        if (reg[p] >= 0)
            continue;
        bool *u = used[d->params[p].block];
        int r = ISA_NUM_REGS - 1;
        while (r >= 0 && u[r])
            r--;
        if (r < 0)
            return false;
        u[r] = true;
        reg[p] = r;
    }
    return true;
}

static int count_descriptors(const lnc_func_t *d)
{
    int n = 0;
    for (int b = 0; b < d->nblocks; b++)
        for (int i = 0; i < d->blocks[b].n; i++) {
            unsigned op = d->blocks[b].insts[i].isa.op;
            n += d->blocks[b].insts[i].opc == LNC_OPC_ISA &&
                 (isa_op_is_direct_dma(op) || op == ISA_OP_DMA_INDIRECT2D);
        }
    return n;
}

int lnc_dma_desc_reuse(lnc_module_t *m, tpb_err_t *err)
{
    m->desc_reuse = true;
    for (int f = 1; f < m->nfuncs; f++) {
        lnc_func_t *d = &m->funcs[f];
        d->ndesc = count_descriptors(d);
        if (d->ninsts < 2 || d->desc_reuse)
            continue;
        int *reg = malloc((size_t)(d->nparams > 0 ? d->nparams : 1) * sizeof *reg);
        if (!reg)
            return tpb_errf(err, "out of memory (descriptor reuse of %s)", d->name);
        if (plan(d, reg)) {
            for (int p = 0; p < d->nparams; p++) {
                d->params[p].reg = reg[p];
                d->params[p].elem = isa_dtype_size(param_side(d, &d->params[p])->dtype);
                *param_reg(d, &d->params[p]) = (uint32_t)reg[p];
            }
            d->desc_reuse = true;
            d->nshared = d->ndesc;
        }
        free(reg);
    }
    return 0;
}

/* The call site's arguments of instance x, for the block of engine b of
 * definition d: one RegSet per parameter register (LNC_OPC_ARG), in
 * register order.  Appends to out (at most ISA_NUM_REGS); returns the
 * count. */
int lnc_call_args(const lnc_func_t *d, const lnc_instance_t *x, int b, lnc_inst_t *out)
{
    int n = 0;
    if (!d->desc_reuse)
        return 0;
    bool done[ISA_NUM_REGS] = {false};
    for (int p = 0; p < d->nparams; p++) {
        const lnc_param_t *q = &d->params[p];
        if (q->block != b || q->reg < 0 || done[q->reg])
            continue;
        done[q->reg] = true;
        const isa_inst_t *x0 = &d->blocks[q->block].insts[q->inst].isa;
        uint32_t base = q->side ? x0->f.DDESC.src.addr : x0->f.DDESC.dst.addr;
        int64_t off = ((int64_t)x->args[p] - (int64_t)base) / (int64_t)q->elem;
        char name[LNC_NAME_LEN];
        snprintf(name, sizeof name, "arg_r%d", q->reg);
        lnc_inst_init(&out[n], LNC_OPC_ARG, name);
        out[n].engine = d->blocks[b].engine;
        out[n].isa.op = ISA_OP_REG_SET;
        out[n].isa.l2 = isa_ops[ISA_OP_REG_SET].l2;
        out[n].isa.f.REG.reg = (uint32_t)q->reg;
        out[n].isa.f.REG.imm = (int32_t)off;
        n++;
    }
    return n;
}
