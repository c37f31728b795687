/* dma.c - DMA queues and descriptor execution.
 *
 * PseudoDmaDirect2d / PseudoDmaIndirect2d queue a descriptor on their
 * queue (registers resolved and both sides bounds-checked at issue, a
 * bounded descriptor's register-moved sides at its trigger); DmaTrigger
 * checks its register bounds (oob skip: the transfer moves nothing) and
 * submits the last `ndesc` queued descriptors of its queue as one
 * transfer.  Transfers of one queue run in order; queues run concurrently
 * and share the core's DMA engines.  Data moves when a transfer starts;
 * the trigger's "at complete" semaphore update fires when it ends, and so
 * does a descriptor's remote one (upd_remote: its remote semaphore).
 * Exact rules: docs/semantics-dma.md; timing: docs/timing.md. */
#include "dma_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric.h"


/* ---- bounds checks at descriptor issue ---- */

static int addr_error(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, const char *opnd,
                      const isa_dap_t *p, int64_t a, tpb_err_t *err)
{
    if (p->space == ISA_SPACE_HBM)
        return sim_inst_errf(err, c, e, idx,
                             "operand %s: HBM address %lld (element of %u bytes) is outside HBM "
                             "(%llu bytes)",
                             opnd, (long long)a, isa_dtype_size(p->dtype),
                             (unsigned long long)s->hbm_bytes);
    return sim_inst_errf(err, c, e, idx,
                         "operand %s: %s address 0x%llx (partition %lld, offset %lld, element "
                         "of %u bytes) is outside %s of core %u (%u partitions x %u bytes)",
                         opnd, space_name(p->space), (unsigned long long)a,
                         (long long)(a >= 0 ? a / PITCH : -1), (long long)(a >= 0 ? a % PITCH : a),
                         isa_dtype_size(p->dtype), space_name(p->space), p->core,
                         s->t->partitions, space_pb(s, p->space));
}

static bool chip_elem_ok(const sim_t *s, unsigned sp, int64_t a, unsigned size)
{
    if (a < 0)
        return false;
    int64_t part = a / PITCH, off = a % PITCH;
    return part < (int64_t)s->t->partitions && off + size <= (int64_t)space_pb(s, sp);
}

/* Row j of an on-chip pattern passes the per-row check of dap_check
 * through its one-partition branch: the row lies in one partition and its
 * lowest and highest elements are in bounds. */
static bool chip_row_ok(const sim_t *s, const isa_dap_t *p, int64_t first, int64_t span)
{
    unsigned size = isa_dtype_size(p->dtype);
    int64_t last = first + span;
    int64_t lo = first < last ? first : last, hi = first < last ? last : first;
    return lo >= 0 && lo / PITCH == hi / PITCH && chip_elem_ok(s, p->space, lo, size) &&
           chip_elem_ok(s, p->space, hi, size);
}

/* Every row of an on-chip pattern passes when its first and last rows do,
 * in two cases where the bounds are monotone in the row index: a row step
 * of whole partitions (every row has the same offsets, the partition moves
 * monotonically: both ends bound it), or all rows inside one partition
 * (the lowest and highest element of the whole pattern bound it).  false:
 * not shown, check row by row (which reports the first failing element). */
static bool chip_rows_ok(const sim_t *s, const isa_dap_t *p, int64_t addr)
{
    uint32_t n0 = p->count[0], n1 = p->count[1];
    int64_t span = (int64_t)p->step[0] * (int64_t)(n0 - 1);
    int64_t end = addr + (int64_t)(n1 - 1) * p->step[1];
    if (p->step[1] % PITCH == 0)
        return chip_row_ok(s, p, addr, span) && chip_row_ok(s, p, end, span);
    int64_t a = addr < end ? addr : end, b = addr < end ? end : addr;
    int64_t lo = span < 0 ? a + span : a, hi = span < 0 ? b : b + span;
    return chip_row_ok(s, p, lo, hi - lo);
}

/* Check every element of the 2-D pattern (rows = p->count[1]). */
static int dap_check(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, const char *opnd,
                     const isa_dap_t *p, int64_t addr, tpb_err_t *err)
{
    unsigned size = isa_dtype_size(p->dtype);
    uint32_t n0 = p->count[0], n1 = p->count[1];
    if (!n0 || !n1)
        return 0;
    int64_t s0 = p->step[0], s1 = p->step[1];
    if (p->space == ISA_SPACE_HBM) {
        int64_t lo, hi;
        isa_dap_span(p, addr, &lo, &hi);
        if (lo < 0)
            return addr_error(s, c, e, idx, opnd, p, lo, err);
        if (hi > (int64_t)s->hbm_bytes)
            return addr_error(s, c, e, idx, opnd, p, hi - size, err);
        return 0;
    }
    if (!on_chip(p->space))
        return sim_inst_errf(err, c, e, idx, "operand %s: space %s is not a DMA space", opnd,
                             space_name(p->space));
    if (p->core >= s->ncores)
        return sim_inst_errf(err, c, e, idx,
                             "operand %s: core %u owns the %s side but the artifact has %u "
                             "core(s)",
                             opnd, p->core, space_name(p->space), s->ncores);
    if (chip_rows_ok(s, p, addr))
        return 0;
    int64_t span = s0 * (int64_t)(n0 - 1);
    for (uint32_t j = 0; j < n1; j++) {
        int64_t first = addr + (int64_t)j * s1, last = first + span;
        int64_t lo = first < last ? first : last, hi = first < last ? last : first;
        if (lo >= 0 && lo / PITCH == hi / PITCH) {
            /* arithmetic sequence between two points of one partition */
            if (!chip_elem_ok(s, p->space, lo, size))
                return addr_error(s, c, e, idx, opnd, p, lo, err);
            if (!chip_elem_ok(s, p->space, hi, size))
                return addr_error(s, c, e, idx, opnd, p, hi, err);
            continue;
        }
        for (uint32_t i = 0; i < n0; i++)
            if (!chip_elem_ok(s, p->space, first + (int64_t)i * s0, size))
                return addr_error(s, c, e, idx, opnd, p, first + (int64_t)i * s0, err);
    }
    return 0;
}

/* ---- descriptor issue ---- */

static int queue_push(sim_queue_t *q, const sim_desc_t *d, tpb_err_t *err)
{
    if (q->npending == q->cap) {
        unsigned nc = q->cap ? q->cap * 2 : 16;
        sim_desc_t *v = realloc(q->pending, nc * sizeof *v);
        if (!v)
            return tpb_errf(err, "out of memory (DMA queue)");
        q->pending = v;
        q->cap = nc;
    }
    q->pending[q->npending++] = *d;
    return 0;
}

static int reg_offset(sim_core_t *c, sim_engine_t *e, size_t idx, const char *what, uint32_t reg,
                      unsigned size, int64_t *off, tpb_err_t *err)
{
    *off = 0;
    if (reg == ISA_REG_NONE)
        return 0;
    if (reg >= ISA_NUM_REGS)
        return sim_inst_errf(err, c, e, idx, "%s r%u out of range (0..%d, or 255 for none)", what,
                             reg, ISA_NUM_REGS - 1);
    *off = (int64_t)(int32_t)e->regs[reg] * size;
    return 0;
}

/* A register-offset side that left memory: the message names the register
 * field and the offset it added (docs/kernel-format.md). Returns -1. */
static int reg_note(tpb_err_t *err, const sim_engine_t *e, const char *what, uint32_t reg)
{
    if (!err || reg == ISA_REG_NONE || reg >= ISA_NUM_REGS)
        return -1;
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, " (moved by %s r%u = %d elements)", what, reg,
             (int32_t)e->regs[reg]);
    return -1;
}

static int check_queue(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, uint32_t q,
                       tpb_err_t *err)
{
    if (q >= s->t->dma_queues)
        return sim_inst_errf(err, c, e, idx, "queue %u out of range (target %s has %u queues)", q,
                             s->t->name, s->t->dma_queues);
    return 0;
}


/* isa_dma_dtypes_ok for a descriptor: arith = dst add or a scale. */
static int quad_check(sim_core_t *c, sim_engine_t *e, size_t idx, const isa_dap_t *src,
                      const isa_dap_t *dst, bool arith, tpb_err_t *err)
{
    if (isa_dma_dtypes_ok(src->dtype, dst->dtype, arith))
        return 0;
    return sim_inst_errf(err, c, e, idx,
                         "a packed MX dtype or an MX scale moves only into itself, without "
                         "compute or scale (src %s, dst %s)",
                         isa_dtype_name(src->dtype), isa_dtype_name(dst->dtype));
}

/* The bounds of a direct descriptor's sides (src and/or dst) at their
 * resolved addresses: PseudoDmaDirect3d's plane k is the 2-D pattern at
 * src_step2 / dst_step2 bytes times k (D3DESC shares DDESC's leading
 * fields).  e / idx: the descriptor's engine and index. */
static int planes_check(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx,
                        const sim_desc_t *sd, bool src, bool dst, tpb_err_t *err)
{
    const isa_fmt_DDESC_t *f = &sd->d->inst.f.DDESC;
    plane_t pl = planes_of(&sd->d->inst);
    for (uint32_t k = 0; k < pl.n; k++) {
        int64_t sa = sd->src_addr + (int64_t)k * pl.sstep, da = sd->dst_addr + (int64_t)k * pl.dstep;
        if (src && dap_check(s, c, e, idx, "src", &f->src, sa, err))
            return reg_note(err, e, "src_reg", f->src_reg);
        if (dst && dap_check(s, c, e, idx, "dst", &f->dst, da, err))
            return reg_note(err, e, "dst_reg", f->dst_reg);
    }
    return 0;
}

static int direct_issue(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, sim_desc_t *sd,
                        tpb_err_t *err)
{
    const isa_fmt_DDESC_t *f = &sd->d->inst.f.DDESC;
    if (check_queue(s, c, e, idx, f->queue, err))
        return -1;
    if (dap_elems(&f->src) != dap_elems(&f->dst))
        return sim_inst_errf(err, c, e, idx,
                             "element counts differ: src %u x %u = %llu, dst %u x %u = %llu",
                             f->src.count[1], f->src.count[0],
                             (unsigned long long)dap_elems(&f->src), f->dst.count[1],
                             f->dst.count[0], (unsigned long long)dap_elems(&f->dst));
    unsigned ss = isa_dtype_size(f->src.dtype), ds = isa_dtype_size(f->dst.dtype);
    /* scaled is DDESC's alone (D3DESC holds count2 in its bits) */
    bool scaled = sd->d->inst.op == ISA_OP_DMA_DIRECT2D && f->scaled;
    if (quad_check(c, e, idx, &f->src, &f->dst, f->compute == ISA_DMAOP_ADD || scaled, err))
        return -1;
    if (f->transpose && !((ss == 2 || ss == 4) && ss == ds))
        return sim_inst_errf(err, c, e, idx,
                             "DMA transpose needs 2- or 4-byte elements of one size (src %s, "
                             "dst %s)",
                             isa_dtype_name(f->src.dtype), isa_dtype_name(f->dst.dtype));
    int64_t so, dof;
    if (reg_offset(c, e, idx, "src_reg", f->src_reg, ss, &so, err) ||
        reg_offset(c, e, idx, "dst_reg", f->dst_reg, ds, &dof, err))
        return -1;
    sd->src_addr = (int64_t)f->src.addr + so;
    sd->dst_addr = (int64_t)f->dst.addr + dof;
    /* bounded: a register-moved side is checked at the trigger, after its
     * bounds (under oob skip an out-of-bounds offset may point anywhere) */
    bool src_later = f->bounded && f->src_reg != ISA_REG_NONE;
    bool dst_later = f->bounded && f->dst_reg != ISA_REG_NONE;
    sd->deferred = src_later || dst_later;
    return planes_check(s, c, e, idx, sd, !src_later, !dst_later, err) ? -1 : (int)f->queue;
}

static int idx_tap_check(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, const isa_tap_t *t,
                         tpb_err_t *err)
{
    if (t->space != ISA_SPACE_SBUF)
        return sim_inst_errf(err, c, e, idx, "operand idx: must be in sbuf (got %s)",
                             space_name(t->space));
    if (isa_dtype_kind(t->dtype) == ISA_DK_F)
        return sim_inst_errf(err, c, e, idx, "operand idx: dtype %s is not an integer type",
                             isa_dtype_name(t->dtype));
    int64_t lo = 0, hi = 0;
    for (unsigned d = 0; d < t->ndims; d++) {
        if (!t->count[d])
            return 0;
        int64_t ext = (int64_t)t->step[d] * (int64_t)(t->count[d] - 1);
        if (ext < 0)
            lo += ext;
        else
            hi += ext;
    }
    unsigned size = isa_dtype_size(t->dtype);
    int64_t first = (int64_t)t->addr + lo * size, last = (int64_t)t->addr + hi * size + size;
    if (first < 0 || last > (int64_t)s->t->sbuf_partition_bytes)
        return sim_inst_errf(err, c, e, idx,
                             "operand idx: byte range [%lld, %lld) of each partition is outside "
                             "SBUF (%u bytes per partition)",
                             (long long)first, (long long)last, s->t->sbuf_partition_bytes);
    return 0;
}

static int indirect_issue(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, sim_desc_t *sd,
                          tpb_err_t *err)
{
    const isa_fmt_DIND_t *f = &sd->d->inst.f.DIND;
    if (check_queue(s, c, e, idx, f->queue, err))
        return -1;
    if (idx_tap_check(s, c, e, idx, &f->idx, err))
        return -1;
    const isa_dap_t *plain = f->scatter ? &f->src : &f->dst;
    const isa_dap_t indexed = isa_dind_table(f);   /* with its rows_hi */
    uint64_t nidx = (uint64_t)f->idx.nparts * isa_tap_free_elems(&f->idx);
    if (nidx != plain->count[1])
        return sim_inst_errf(err, c, e, idx,
                             "idx has %llu indices but the %s side has %u rows (count[1])",
                             (unsigned long long)nidx, f->scatter ? "src" : "dst",
                             plain->count[1]);
    if (quad_check(c, e, idx, &f->src, &f->dst, f->compute == ISA_DMAOP_ADD, err))
        return -1;
    if (indexed.count[0] != plain->count[0])
        return sim_inst_errf(err, c, e, idx,
                             "row lengths differ: src count[0] = %u, dst count[0] = %u",
                             f->src.count[0], f->dst.count[0]);
    sd->src_addr = f->src.addr;
    sd->dst_addr = f->dst.addr;
    /* the indexed side's whole extent (all its rows) must be addressable, so
     * every in-range index is too */
    if (dap_check(s, c, e, idx, "src", f->scatter ? &f->src : &indexed, sd->src_addr, err) ||
        dap_check(s, c, e, idx, "dst", f->scatter ? &indexed : &f->dst, sd->dst_addr, err))
        return -1;
    return f->queue;
}

int sim_dma_descriptor(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, tpb_err_t *err)
{
    sim_desc_t sd = { .d = &e->stream.insts[idx], .pc = e->stream.insts[idx].pc,
                      .engine_slot = (uint8_t)e->slot };
    int q = isa_op_is_direct_dma(sd.d->inst.op) ? direct_issue(s, c, e, idx, &sd, err)
                                                 : indirect_issue(s, c, e, idx, &sd, err);
    if (q < 0)
        return -1;
    c->queues[q].descriptors++;
    return queue_push(&c->queues[q], &sd, err);
}

/* ---- trigger ---- */

static int push_start(sim_t *s, sim_core_t *c, unsigned q, uint64_t t, tpb_err_t *err)
{
    unsigned nq = s->t->dma_queues;
    /* round-robin: among starts due at the same time, queues at or after the
     * pointer go first */
    sim_event_t ev = { .t = t, .kind = EV_DMA_START, .core = (uint8_t)c->index,
                       .unit = (uint16_t)((q + nq - c->dma_rr % nq) % nq), .val = q };
    return sim_heap_push(s, &ev, err);
}

/* The trigger's transpose_op (TransposeOps, docs/semantics-dma.md): XZYW
 * makes the transfer a transpose -- every direct descriptor has its
 * CopyMode transpose bit set and every indirect one is a gather (a
 * gather-transpose: its tile side's steps place the row across the
 * transposed dims); none makes it a copy, so no descriptor may be a
 * transpose.  Other codes do not decode (enum XPOSE). */
static int check_transpose_op(const sim_core_t *c, const sim_engine_t *e, size_t idx,
                              unsigned op, const sim_desc_t *ds, uint32_t n, tpb_err_t *err)
{
    for (uint32_t i = 0; i < n; i++) {
        const isa_inst_t *in = &ds[i].d->inst;
        bool direct = isa_op_is_direct_dma(in->op);
        if (op == ISA_XPOSE_XZYW && (direct ? !in->f.DDESC.transpose : in->f.DIND.scatter))
            return sim_inst_errf(err, c, e, idx,
                                 "transpose_op xzyw but descriptor %u (pc %u) is not a "
                                 "transpose (%s)", i, ds[i].pc,
                                 direct ? "transpose = 0" : "an indirect scatter");
        if (op == ISA_XPOSE_NONE && direct && in->f.DDESC.transpose)
            return sim_inst_errf(err, c, e, idx,
                                 "descriptor %u (pc %u) is a transpose but the trigger's "
                                 "transpose_op is none (a transpose needs xzyw)", i, ds[i].pc);
    }
    return 0;
}

/* One side's register offset against the trigger's bounds: true inside
 * (or not bounded), else *v holds the offset in elements. */
static bool reg_in_bounds(const isa_dap_t *p, int64_t addr, uint32_t reg, bool bound, int32_t lo,
                          int32_t hi, int64_t *v)
{
    if (!bound || reg == ISA_REG_NONE)
        return true;
    *v = (addr - (int64_t)p->addr) / (int64_t)isa_dtype_size(p->dtype);
    return *v >= lo && *v <= hi;
}

/* The trigger's register bounds (src_bound / dst_bound: the dynamic-address
 * check of NKI's oob_mode, docs/semantics-dma.md), before anything moves:
 * 0 when every descriptor's register offsets are inside them, 1 when one is
 * outside under oob skip (the transfer moves nothing), -1 under oob error. */
static int bounds_check(const sim_core_t *c, const sim_engine_t *e, size_t idx,
                        const isa_fmt_DTRIG_t *t, const sim_desc_t *ds, uint32_t n,
                        tpb_err_t *err)
{
    if (!t->src_bound && !t->dst_bound)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!isa_op_is_direct_dma(ds[i].d->inst.op))
            continue;   /* an indirect descriptor has no register offset */
        const isa_fmt_DDESC_t *f = &ds[i].d->inst.f.DDESC;
        int64_t v = 0;
        bool src = !reg_in_bounds(&f->src, ds[i].src_addr, f->src_reg, t->src_bound, t->src_lo,
                                  t->src_hi, &v);
        if (!src && reg_in_bounds(&f->dst, ds[i].dst_addr, f->dst_reg, t->dst_bound, t->dst_lo,
                                  t->dst_hi, &v))
            continue;
        if (t->oob == ISA_OOB_SKIP)
            return 1;
        return sim_inst_errf(err, c, e, idx,
                             "descriptor %u (pc %u) operand %s: register offset %s r%u = %lld "
                             "elements is outside the transfer's bounds [%d, %d] (oob=error)",
                             i, ds[i].pc, src ? "src" : "dst", src ? "src_reg" : "dst_reg",
                             src ? f->src_reg : f->dst_reg, (long long)v,
                             src ? t->src_lo : t->dst_lo, src ? t->src_hi : t->dst_hi);
    }
    return 0;
}

/* The HBM checks bounded descriptors left to their trigger (direct_issue),
 * as their own issue would have made them. */
static int deferred_check(sim_t *s, sim_core_t *c, const sim_desc_t *ds, uint32_t n,
                          tpb_err_t *err)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!ds[i].deferred)
            continue;
        sim_engine_t *de = &c->eng[ds[i].engine_slot];
        const isa_fmt_DDESC_t *f = &ds[i].d->inst.f.DDESC;
        if (planes_check(s, c, de, (size_t)(ds[i].d - de->stream.insts), &ds[i],
                         f->src_reg != ISA_REG_NONE, f->dst_reg != ISA_REG_NONE, err))
            return -1;
    }
    return 0;
}

int sim_dma_trigger(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, uint64_t t,
                    tpb_err_t *err)
{
    const isa_decoded_t *d = &e->stream.insts[idx];
    uint32_t q = d->inst.f.DTRIG.queue, n = d->inst.f.DTRIG.ndesc;
    if (check_queue(s, c, e, idx, q, err))
        return -1;
    sim_queue_t *Q = &c->queues[q];
    if (n == 0)
        return sim_inst_errf(err, c, e, idx, "ndesc is 0 (a transfer needs a descriptor)");
    if (n > Q->npending)
        return sim_inst_errf(err, c, e, idx,
                             "ndesc %u but only %u descriptor(s) are queued on queue %u", n,
                             Q->npending, q);
    const sim_desc_t *ds = Q->pending + (Q->npending - n);
    if (check_transpose_op(c, e, idx, d->inst.f.DTRIG.transpose_op, ds, n, err))
        return -1;
    int out = bounds_check(c, e, idx, &d->inst.f.DTRIG, ds, n, err);
    if (out < 0 || (!out && deferred_check(s, c, ds, n, err)))
        return -1;
    sim_xfer_t *x = calloc(1, sizeof *x);
    if (!x || !(x->descs = malloc(n * sizeof *x->descs))) {
        free(x);
        return tpb_errf(err, "out of memory (DMA transfer)");
    }
    memcpy(x->descs, Q->pending + (Q->npending - n), n * sizeof *x->descs);
    Q->npending -= n;
    x->ndesc = n;
    x->skipped = out == 1;
    x->queue = q;
    x->trigger = d;
    x->trigger_idx = idx;
    x->engine_slot = (uint8_t)e->slot;
    x->issuer = (sim_ref_t){ .core = (int16_t)c->index, .tid = (uint16_t)(e->slot + 1),
                             .pc = d->pc, .start_ps = SIM_NO_TIME };
    x->submit_ps = t;
    if (Q->tail)
        Q->tail->next = x;
    else
        Q->head = x;
    Q->tail = x;
    if (!Q->next_start)
        Q->next_start = x;
    unsigned depth = s->t->dma_queue_depth ? s->t->dma_queue_depth : 1;
    if (!Q->busy && Q->inflight < depth) {
        Q->busy = true;
        return push_start(s, c, q, t, err);
    }
    return 0;
}

/* ---- timing ---- */

/* Hardware DGE (docs/timing.md): a transfer whose descriptors use dge=hw
 * is one DGE DMA instruction; it occupies the earliest-free of the core's
 * dge_hw_instances for dge_hw_ns_per_dma from the transfer's start, and its
 * data cannot move before that is done (nor before the fixed latency).
 * Returns that end time in ps, or 0 (no HW-DGE transfer, or a target
 * without hardware DGE). */
static uint64_t dge_hw_book(sim_t *s, sim_core_t *c, const sim_xfer_t *x, uint64_t now)
{
    unsigned n = s->t->dge_hw_instances;
    if (n == 0)
        return 0;
    if (n > sizeof c->dge_free / sizeof c->dge_free[0])
        n = sizeof c->dge_free / sizeof c->dge_free[0];
    bool hw = false;
    for (unsigned i = 0; i < x->ndesc && !hw; i++) {
        const isa_inst_t *in = &x->descs[i].d->inst;
        hw = (isa_op_is_direct_dma(in->op) ? in->f.DDESC.dge : in->f.DIND.dge) == ISA_DGE_HW;
    }
    if (!hw)
        return 0;
    unsigned k = 0;
    for (unsigned i = 1; i < n; i++)
        if (c->dge_free[i] < c->dge_free[k])
            k = i;
    uint64_t st = now > c->dge_free[k] ? now : c->dge_free[k];
    c->dge_free[k] = st + (uint64_t)(s->t->dge_hw_ns_per_dma * 1000.0 + 0.5);
    return c->dge_free[k];
}

unsigned sim_dma_row_eff_permille(const tpb_target_t *t, uint64_t run)
{
    return tpb_dma_row_eff_permille(t, run);
}

/* Engine time of `bytes` moved in runs of `run` bytes, in milli-bytes at
 * the engine's peak rate: 1000 * bytes / efficiency(run). */
uint64_t sim_dma_row_cost(const tpb_target_t *t, uint64_t bytes, uint64_t run)
{
    unsigned e = sim_dma_row_eff_permille(t, run);
    if (run && run < 32) {
        /* shorter than the figure's first point: each run costs what a
         * 32-byte run costs (packet-rate bound) */
        uint64_t runs = (bytes + run - 1) / run;
        return runs * ((32ull * 1000000ull + e - 1) / e);
    }
    return (bytes * 1000000ull + e - 1) / e;
}

/* ps for `cost` milli-bytes on one engine */
uint64_t sim_dma_cost_ps(const tpb_target_t *t, uint64_t cost)
{
    /* rate in bytes per microsecond, rounded to an integer so the
     * arithmetic below is exact and machine-independent */
    uint64_t rate = (uint64_t)(t->dma_bytes_per_ns_per_engine * 1000.0 + 0.5);
    if (!rate)
        rate = 1;
    /* (cost / 1000) bytes * 10^6 ps/us / rate */
    return (cost * 1000ull + rate - 1) / rate;
}

static uint64_t hbm_ps(const tpb_target_t *t, uint64_t bytes)
{
    uint64_t rate = (uint64_t)(t->hbm_bytes_per_ns_per_core * 1000.0 + 0.5);
    if (!rate)
        return 0;
    return (bytes * 1000000ull + rate - 1) / rate;
}

static void active_change(sim_core_t *c, uint64_t now, int delta)
{
    if (delta > 0 && c->dma_nactive++ == 0)
        c->dma_active_since = now;
    if (delta < 0 && --c->dma_nactive == 0)
        c->dma_active_ps += now - c->dma_active_since;
}

/* Start the queue's next transfer (at most dma_queue_depth in flight): move
 * its data, then book its engines.  A transfer pays the fixed latency from
 * its start; each DMA engine runs its share after that latency and after
 * what it already had booked (one transfer at a time per engine), at the
 * engine rate divided by the row efficiency; the core's HBM share is a
 * second booked resource for the bytes that touch HBM.  Completions stay
 * in queue order. */
int sim_dma_start(sim_t *s, sim_core_t *c, unsigned q, tpb_err_t *err)
{
    sim_queue_t *Q = &c->queues[q];
    Q->busy = false;
    sim_xfer_t *x = Q->next_start;
    unsigned depth = s->t->dma_queue_depth ? s->t->dma_queue_depth : 1;
    if (!x || Q->inflight >= depth)
        return 0;
    unsigned ne = s->t->dma_engines;
    if (ne > SIM_DMA_MAX_ENGINES)
        ne = SIM_DMA_MAX_ENGINES;
    if (!ne)
        ne = 1;
    uint64_t eng[SIM_DMA_MAX_ENGINES] = { 0 }, cost[SIM_DMA_MAX_ENGINES] = { 0 }, hbm = 0;
    if (x->trigger->inst.f.DTRIG.unique && !s->opt.timing_only && !x->skipped &&
        sim_dma_check_unique(s, c, x, err))
        return -1;
    /* a skipped transfer (out of bounds, oob skip) moves and costs no bytes:
     * it completes after the fixed latency */
    for (unsigned i = 0; i < x->ndesc && !x->skipped; i++)
        if (sim_dma_move_desc(s, c, x, &x->descs[i], eng, cost, ne, &hbm, err))
            return -1;
    uint64_t now = s->now, lat = (uint64_t)(s->t->dma_fixed_latency_ns * 1000.0 + 0.5);
    uint64_t ready = now + lat, end = ready, bytes = 0;
    uint64_t dge_end = dge_hw_book(s, c, x, now);
    if (dge_end > ready)
        ready = end = dge_end;
    for (unsigned i = 0; i < ne; i++) {
        if (!eng[i])
            continue;
        bytes += eng[i];
        uint64_t st = ready > c->dma_engine_free[i] ? ready : c->dma_engine_free[i];
        uint64_t d = sim_dma_cost_ps(s->t, cost[i]);
        c->dma_engine_free[i] = st + d;
        c->dma_engine_busy_ps[i] += d;
        c->dma_engine_bytes[i] += eng[i];
        if (st + d > end)
            end = st + d;
    }
    if (hbm) {
        uint64_t st = ready > c->dma_hbm_free ? ready : c->dma_hbm_free;
        c->dma_hbm_free = st + hbm_ps(s->t, hbm);
        if (c->dma_hbm_free > end)
            end = c->dma_hbm_free;
    }
    if (end < Q->last_end)
        end = Q->last_end;   /* completions stay in queue order */
    Q->last_end = end;
    x->start_ps = now;
    x->end_ps = end;
    x->bytes = bytes;
    /* the lowest slot no transfer of the queue in flight holds (trace lane) */
    unsigned slot = 0;
    while (slot < 31 && (Q->slots_busy >> slot & 1u))
        slot++;
    Q->slots_busy |= 1u << slot;
    x->slot = slot;
    Q->inflight++;
    Q->next_start = x->next;
    active_change(c, now, +1);
    c->dma_rr = (q + 1) % s->t->dma_queues;
    sim_event_t ev = { .t = end, .kind = EV_DMA_DONE, .core = (uint8_t)c->index,
                       .unit = (uint16_t)q };
    if (sim_heap_push(s, &ev, err))
        return -1;
    if (Q->next_start && Q->inflight < depth) {
        Q->busy = true;
        return push_start(s, c, q, now, err);
    }
    return 0;
}

/* Whether the transfer writes HBM (its first descriptor's destination). */
static bool xfer_to_hbm(const sim_xfer_t *x)
{
    const isa_inst_t *in = &x->descs[0].d->inst;
    const isa_dap_t *dst = isa_op_is_direct_dma(in->op) ? &in->f.DDESC.dst : &in->f.DIND.dst;
    return dst->space == ISA_SPACE_HBM;
}

int sim_dma_done(sim_t *s, sim_core_t *c, unsigned q, tpb_err_t *err)
{
    sim_queue_t *Q = &c->queues[q];
    sim_xfer_t *x = Q->head;
    if (!x)
        return 0;
    Q->head = x->next;
    if (!Q->head)
        Q->tail = NULL;
    Q->inflight--;
    Q->slots_busy &= ~(1u << x->slot);
    active_change(c, s->now, -1);
    Q->bytes += x->bytes;
    if (x->ndesc && xfer_to_hbm(x))
        Q->bytes_to_hbm += x->bytes;
    Q->transfers++;
    Q->busy_ps += x->end_ps - x->start_ps;
    if (x->end_ps > s->end_ps)
        s->end_ps = x->end_ps;
    unsigned slot = x->slot < SIM_DMA_TRACE_SLOTS ? x->slot : SIM_DMA_TRACE_SLOTS - 1;
    if (slot > Q->max_slot)
        Q->max_slot = slot;
    sim_ref_t lane = { .core = (int16_t)c->index,
                       .tid = (uint16_t)(SIM_DMA_LANE_TID + q * SIM_DMA_TRACE_SLOTS + slot),
                       .pc = x->issuer.pc, .start_ps = x->start_ps };
    if (s->opt.trace) {
        sim_tr_dma_t r = { .start_ps = x->start_ps, .end_ps = x->end_ps, .bytes = x->bytes,
                           .core = (uint8_t)c->index, .queue = (uint16_t)q, .ndesc = x->ndesc,
                           .slot = (uint8_t)slot, .issuer = x->issuer };
        sim_trace_dma(s, &r);
    }
    const isa_sync_t *h = &x->trigger->inst.sync;
    uint64_t lat = sim_cycles_to_ps(s->t->clk_ref, s->t->sem_latency_cycles);
    int rc = 0;
    if (h->upd_en && !h->upd_at_read)
        rc = sim_sync_schedule_update(s, c, h, s->now + lat, lane, &c->eng[x->engine_slot],
                                      x->trigger_idx, err);
    /* descriptors' remote semaphores fire with the transfer's completion */
    for (unsigned i = 0; i < x->ndesc && !rc; i++) {
        const isa_decoded_t *dd = x->descs[i].d;
        if (dd->inst.sync.upd_en && !dd->inst.sync.upd_at_read &&
            sim_dma_upd_at_transfer_end(&dd->inst))
            rc = sim_sync_schedule_update(s, c, &dd->inst.sync, s->now + lat, lane, NULL, 0, err);
    }
    free(x->descs);
    free(x);
    if (rc)
        return rc;
    unsigned depth = s->t->dma_queue_depth ? s->t->dma_queue_depth : 1;
    if (Q->next_start && !Q->busy && Q->inflight < depth) {
        Q->busy = true;
        return push_start(s, c, q, s->now, err);
    }
    return 0;
}

void sim_dma_free(sim_core_t *c, unsigned nqueues)
{
    for (unsigned q = 0; q < nqueues; q++) {
        sim_xfer_t *x = c->queues[q].head;
        while (x) {
            sim_xfer_t *n = x->next;
            free(x->descs);
            free(x);
            x = n;
        }
        free(c->queues[q].pending);
    }
    free(c->queues);
    c->queues = NULL;
}
