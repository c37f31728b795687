/* emit_collect.c - the Generator's COLLECT_OPCODES walk (emit.c has the
 * other modes): per instruction, the checks its encoding relies on, its
 * opcodes and its prefixes' into its engine's sets (the census and the DVE
 * table), and its bundle count, which gives every engine's pcs and the
 * rolled loops' branch targets before a byte is written.  Its own loop, not
 * the emit walk's visit: a visit per instruction (the run's frame, mode
 * switch and calls) cost more than the work. */
#include "backend.h"

#include <string.h>

static void bitset_add(uint32_t *set, uint8_t v) { set[v >> 5] |= 1u << (v & 31); }

/* gen_is_sync_inst, inline for the walks. */
static inline bool is_sync_inst(const bir_inst_t *in)
{
    return in->opc == BIR_NOP || in->opc == BIR_HALT || in->opc == BIR_CORE_BARRIER;
}

/* The ApExt-carrying fields of a format: TAP ".ndims" fields of slots 0..3
 * (looked up once per format; 255 = too many to list, scan every time). */
static void collect_ndims_fields(gen_t *g, unsigned fmt)
{
    const isa_fmtinfo_t *fi = &isa_formats[fmt];
    unsigned n = 0;
    for (unsigned i = 0; i < fi->nfields && n != 255; i++) {
        const isa_field_t *fd = &fi->fields[i];
        if (fd->opnd_kind == ISA_OPND_TAP && fd->slot >= 0 && fd->slot < 4 &&
            strstr(fd->name, ".ndims")) {
            if (n == GEN_MAX_NDIMS_FIELDS)
                n = 255;
            else
                g->fmt_ndims[fmt][n++] = (uint16_t)i;
        }
    }
    g->fmt_nndims[fmt] = (uint8_t)n;
    g->fmt_ready[fmt] = true;
}

/* An operand with > 2 free dims brings an ApExt prefix. */
static bool needs_apext(gen_t *g, const bir_inst_t *in)
{
    unsigned fmt = isa_ops[in->isa.op].format;
    const isa_fmtinfo_t *fi = &isa_formats[fmt];
    if (!g->fmt_ready[fmt])
        collect_ndims_fields(g, fmt);
    if (g->fmt_nndims[fmt] != 255) {
        for (unsigned k = 0; k < g->fmt_nndims[fmt]; k++)
            if (bir_body_field(in, &fi->fields[g->fmt_ndims[fmt][k]]) > 2)
                return true;
        return false;
    }
    for (unsigned fidx = 0; fidx < fi->nfields; fidx++) {
        const isa_field_t *fd = &fi->fields[fidx];
        if (fd->opnd_kind == ISA_OPND_TAP && fd->slot >= 0 && fd->slot < 4 &&
            strstr(fd->name, ".ndims") && bir_body_field(in, fd) > 2)
            return true;
    }
    return false;
}

/* updateBranchHintTargetPC: the COLLECT walk counts each engine's bundles,
 * so the pc after a rolled loop's last head instruction on an engine is
 * known before any byte is written: its back branch jumps there. */
static void branch_hint(gen_t *g, const bir_inst_t *in, unsigned nb)
{
    int e = in->engine;
    if (e < 0 || e >= ISA_ENG_COUNT)
        return;
    int xl = g->m->nloops + in->loop;   /* exit label slot (dynamic loops) */
    if (in->loop_role == BIR_LOOP_EXIT && in->loop >= 0 && xl < g->nloop_pc)
        g->loop_pc[xl][e] = g->pcs[e];
    g->pcs[e] += nb;
    if ((in->loop_role == BIR_LOOP_HEAD_END || in->loop_role == BIR_LOOP_GUARD) &&
        in->loop >= 0 && in->loop < g->nloop_pc)
        g->loop_pc[in->loop][e] = g->pcs[e];
}

/* A descriptor whose 1-bit wire compute field is not codegen's map of its
 * BIR DgeComputeOp (bypass 0 -> 0, add 2 -> 1). */
static bool bad_dge_compute(const bir_inst_t *in)
{
    if (isa_op_is_direct_dma(in->isa.op))   /* D3DESC shares DDESC's fields */
        return in->isa.f->DDESC.compute !=
               bir_dge_compute_wire((bir_dge_compute_t)in->dge_compute);
    if (in->isa.op == ISA_OP_DMA_INDIRECT2D)
        return in->isa.f->DIND.compute != bir_dge_compute_wire((bir_dge_compute_t)in->dge_compute);
    return false;
}

static int check_failed(const bir_inst_t *in, int idx, tpb_err_t *err)
{
    if (in->isa.op != bir_codegen_isa_op(in))
        return tpb_errf(err, "instruction %d '%s': BIR %s%s%s is ISA %s, not %s", idx, in->name,
                        bir_opcode_name(in->opc), in->is_activate2 ? " is_activate2=1" : "",
                        in->is_stt ? " is_stt=1" : "", isa_ops[bir_codegen_isa_op(in)].mnemonic,
                        isa_ops[in->isa.op].mnemonic);
    return tpb_errf(err, "instruction %d '%s': DgeComputeOp %u is wire compute %u, not %u", idx,
                    in->name, (unsigned)in->dge_compute,
                    bir_dge_compute_wire((bir_dge_compute_t)in->dge_compute),
                    isa_op_is_direct_dma(in->isa.op) ? (unsigned)in->isa.f->DDESC.compute
                                                      : (unsigned)in->isa.f->DIND.compute);
}

/* The mode flags pick the encoding (the ISA op codegen would give), and a
 * descriptor's wire compute field is its DgeComputeOp's. */
static inline bool inst_ok(const bir_inst_t *in)
{
    return in->isa.op == bir_codegen_isa_op(in) && !bad_dge_compute(in);
}

int gen_check_inst(const bir_inst_t *in, int idx, tpb_err_t *err)
{
    return inst_ok(in) ? 0 : check_failed(in, idx, err);
}

bool gen_is_sync_inst(const bir_inst_t *in)
{
    return is_sync_inst(in);
}

/* An instruction's opcodes into set: its own (l2), and with pred / ap
 * its PredExt's and ApExt's (pre[0], pre[1]). */
static inline void add_opcodes(uint32_t *set, uint8_t l2, bool pred, bool ap, const uint8_t *pre)
{
    bitset_add(set, l2);
    if (pred)
        bitset_add(set, pre[0]);
    if (ap)
        bitset_add(set, pre[1]);
}

int gen_collect(gen_t *g, tpb_err_t *err)
{
    const bir_block_t *b = &g->m->funcs[0].blocks[0];
    const bir_inst_t *insts = b->insts;
    const int ninsts = b->ninsts;
    const uint8_t pre[2] = {isa_ops[ISA_OP_PRED_EXT].l2, isa_ops[ISA_OP_AP_EXT].l2};
    /* the sets are gathered here and merged into g's at the end: stores
     * through g would make the compiler reload everything after each */
    uint32_t census[ISA_ENG_COUNT][8], table[ISA_ENG_COUNT][8];
    memset(census, 0, sizeof census);
    memset(table, 0, sizeof table);
    int rc = 0;
    for (int i = 0; i < ninsts; i++) {
        const bir_inst_t *in = &insts[i];
        if (in->opc == BIR_INST_LOOP)
            continue;   /* the InstLoop marker: not an ISA instruction */
        if (!inst_ok(in)) {
            rc = check_failed(in, i, err);
            break;
        }
        int e = in->engine;
        if (e < 0 || e >= ISA_ENG_COUNT)
            continue;   /* in no engine's sets or count */
        /* the instruction's opcodes: its prefixes' and its own, into the
         * whole census and LowerDVE's view, which skips sync instructions
         * (the DVE table) */
        bool pred = in->has_pred, ap = needs_apext(g, in);
        uint8_t l2 = isa_ops[in->isa.op].l2;
        add_opcodes(census[e], l2, pred, ap, pre);
        if (!is_sync_inst(in))
            add_opcodes(table[e], l2, pred, ap, pre);
        unsigned n = 1u + ap + (pred ? 1u + bir_rare(in)->npred_more : 0u);
        branch_hint(g, in, n);
    }
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        for (int w = 0; w < 8; w++) {
            g->engine_opcodes[e][w] |= census[e][w];
            g->table_opcodes[e][w] |= table[e][w];
        }
    return rc;
}
