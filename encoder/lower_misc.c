/* lower_misc.c - core_barrier, coll_sync, load_tensor_to_register,
 * bn_stats/bn_aggr. */
#include "lower.h"

#include <string.h>

static int lower_barrier(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_CORE_BARRIER, ISA_OP_CORE_BARRIER);
    if (op->rare->barrier_id < 0 || op->rare->barrier_id > 65535)
        return lw_err(c, "barrier id %d must be 0..65535", op->rare->barrier_id);
    if (op->rare->barrier_cores == 0 || op->rare->barrier_cores > 0xFF)
        return lw_err(c, "barrier cores mask 0x%x must name cores 0..7", op->rare->barrier_cores);
    in.isa.f->CB.id = (uint32_t)op->rare->barrier_id;
    in.isa.f->CB.cores = op->rare->barrier_cores;
    if (op->engine == ISA_ENG_UNASSIGNED)
        in.engine = ISA_ENG_POOL;   /* NKI default: GpSimd blocks */
    /* a barrier orders everything on its engine: model it as touching all memory */
    bir_access_t all = {.space = ISA_SPACE_HBM, .p0 = 0, .p1 = 1, .lo = 0, .hi = BIR_ACCESS_END,
                        .write = 1};
    bir_inst_access(c->m, &in, &all);
    /* the data tile it orders (a collective's source): written, so the
     * barrier waits for every earlier reader and writer of the tile and
     * every later access waits for the barrier */
    isa_tap_t t;
    if (op->nsrc > 0 && lw_tap(c, &in, op->src[0], true, "data", &t))
        return -1;
    return lw_emit(c, &in);
}

/* The data a collective sync orders: a tile through its access pattern,
 * an HBM tensor as its whole allocated range. */
static int sync_data(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write)
{
    const tir_tensor_t *t = lw_tensor(c, a);
    if (!t)
        return 0;
    if (t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM) {
        isa_tap_t tap;
        return lw_tap(c, in, a, write, "data", &tap);
    }
    const bir_mloc_t *ml = &c->m->mlocs[a->tensor];
    bir_access_t acc = {.space = ISA_SPACE_HBM, .p0 = 0, .p1 = 1, .lo = ml->addr,
                        .hi = ml->addr + ml->bytes, .write = write};
    bir_inst_access(c->m, in, &acc);
    return 0;
}

/* coll_sync (made by the multi-core split): a Nop whose header either
 * increments a collective semaphore slot of another core when it completes
 * (upd_remote) or waits for a local slot (tir.h; docs/multicore.md
 * "Collectives").  The scheduler keeps these header fields. */
static int lower_coll_sync(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_NOP, ISA_OP_NOP);
    if (lw_coll_remote_upd(c, &in))
        return -1;
    in.engine = op->engine == ISA_ENG_UNASSIGNED ? ISA_ENG_POOL : op->engine;
    if (op->rare->sync_core >= 0) {
        in.preset_upd = true;
        if (op->nsrc > 0 && sync_data(c, &in, op->src[0], false))
            return -1;
    } else {
        in.preset_wait = true;
        in.isa.sync.wait_en = 1;
        in.isa.sync.wait_sem = (uint32_t)(BIR_COLL_SEM0 + op->rare->sync_sem);
        in.isa.sync.wait_val = op->rare->sync_val;
        if (op->dst->tensor >= 0 && sync_data(c, &in, op->dst, true))
            return -1;
    }
    return lw_emit(c, &in);
}

static int lower_tload(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_TENSOR_LOAD, ISA_OP_TENSOR_LOAD);
    isa_tap_t t;
    if (lw_tap(c, &in, op->src[0], false, "src", &t))
        return -1;
    uint64_t n = isa_tap_free_elems(&t);
    if (t.nparts != 1 || n < 1 || n > 8)
        return lw_err(c, "load_tensor_to_register reads 1..8 elements of one partition");
    if (op->rare->reg < 0 || op->rare->reg + (int)n > ISA_NUM_REGS)
        return lw_err(c, "register %d..%d outside 0..%d", op->rare->reg, op->rare->reg + (int)n - 1,
                      ISA_NUM_REGS - 1);
    in.isa.f->TLOAD.src.addr = t.addr;
    in.isa.f->TLOAD.src.dtype = t.dtype;
    in.isa.f->TLOAD.src.space = t.space;
    in.isa.f->TLOAD.part = t.start;
    in.isa.f->TLOAD.reg = (uint32_t)op->rare->reg;
    in.isa.f->TLOAD.count = (uint32_t)n;
    if (op->engine != ISA_ENG_UNASSIGNED)
        return lw_emit(c, &in);
    /* no engine named: EngineType.ALL, as the notes' TensorLoad -- every TPB
     * engine gets the value in its own registers (one TensorLoad each, the
     * same register numbers), so any engine's later register use sees it */
    for (unsigned k = 0; k < 5; k++) {   /* isa_tpb_engines */
        bir_inst_t each = in;
        if (k > 0)
            lw_inst(c, &each, BIR_TENSOR_LOAD, ISA_OP_TENSOR_LOAD);
        each.isa.f->TLOAD = in.isa.f->TLOAD;
        each.acc = in.acc;   /* shared: the accesses never change after lowering */
        each.nacc = in.nacc;
        each.acc_room = 0;   /* its own room is unused */
        each.engine = isa_tpb_engines[k];
        if (lw_emit(c, &each))
            return -1;
    }
    return 0;
}

/* bn_stats -> BNStats, bn_aggr -> BNAggr (DVE, one instruction each) */
static int lower_bn(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool st = op->kind == TIR_BN_STATS;
    bir_inst_t in;
    lw_inst(c, &in, st ? BIR_BN_STATS : BIR_BN_AGGR, st ? ISA_OP_BN_STATS : ISA_OP_BN_AGGR);
    if (lw_tap(c, &in, op->src[0], false, "data", &in.isa.f->COPY.in) ||
        lw_tap(c, &in, op->dst, true, "dst", &in.isa.f->COPY.out))
        return -1;
    if (lw_same_partitions(c, st ? "bn_stats" : "bn_aggr", &in.isa.f->COPY.in, &in.isa.f->COPY.out))
        return -1;
    in.engine = ISA_ENG_DVE;
    return lw_emit(c, &in);
}

int lower_misc(lower_ctx_t *c)
{
    if (c->op->kind == TIR_CORE_BARRIER)
        return lower_barrier(c);
    if (c->op->kind == TIR_COLL_SYNC)
        return lower_coll_sync(c);
    if (c->op->kind == TIR_BN_STATS || c->op->kind == TIR_BN_AGGR)
        return lower_bn(c);
    return lower_tload(c);
}
