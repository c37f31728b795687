/* dma.c - DMA queues and descriptor execution.
 *
 * PseudoDmaDirect2d / PseudoDmaIndirect2d queue a descriptor on their
 * queue (registers resolved and both sides bounds-checked at issue);
 * DmaTrigger submits the last `ndesc` queued descriptors of its queue as one
 * transfer.  Transfers of one queue run in order; queues run concurrently
 * and share the core's DMA engines.  Data moves when a transfer starts;
 * the trigger's "at complete" semaphore update fires when it ends, and so
 * does a descriptor's remote one (upd_remote: its remote semaphore).
 * Exact rules: docs/semantics-dma.md; timing: docs/timing.md. */
#include "sim_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numeric.h"

#define PITCH ((int64_t)ISA_DMA_PARTITION_PITCH)

static const char *space_name(unsigned sp)
{
    const char *n = isa_enum_name(ISA_FT_SPACE, sp);
    return n ? n : "?";
}

static bool on_chip(unsigned sp) { return sp == ISA_SPACE_SBUF || sp == ISA_SPACE_PSUM; }

static uint32_t space_pb(const sim_t *s, unsigned sp)
{
    return sp == ISA_SPACE_SBUF ? s->t->sbuf_partition_bytes : s->t->psum_partition_bytes;
}

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
        sim_dap_span(p, addr, &lo, &hi);
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

static int check_queue(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, uint32_t q,
                       tpb_err_t *err)
{
    if (q >= s->t->dma_queues)
        return sim_inst_errf(err, c, e, idx, "queue %u out of range (target %s has %u queues)", q,
                             s->t->name, s->t->dma_queues);
    return 0;
}

static uint64_t dap_elems(const isa_dap_t *p) { return (uint64_t)p->count[0] * p->count[1]; }

/* The planes of a direct descriptor: one for PseudoDmaDirect2d, count2 for
 * PseudoDmaDirect3d (plane k at k * step bytes on each side). */
typedef struct {
    uint32_t n;
    int64_t sstep, dstep;
} plane_t;

static plane_t planes_of(const isa_inst_t *in)
{
    if (in->op != ISA_OP_DMA_DIRECT3D)
        return (plane_t){1, 0, 0};
    return (plane_t){in->f.D3DESC.count2, in->f.D3DESC.src_step2, in->f.D3DESC.dst_step2};
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
    /* PseudoDmaDirect3d: every plane k is the 2-D pattern at src_step2 /
     * dst_step2 bytes times k (D3DESC shares DDESC's leading fields) */
    plane_t pl = planes_of(&sd->d->inst);
    for (uint32_t k = 0; k < pl.n; k++)
        if (dap_check(s, c, e, idx, "src", &f->src, sd->src_addr + (int64_t)k * pl.sstep, err) ||
            dap_check(s, c, e, idx, "dst", &f->dst, sd->dst_addr + (int64_t)k * pl.dstep, err))
            return -1;
    return f->queue;
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
    const isa_dap_t *indexed = f->scatter ? &f->dst : &f->src;
    uint64_t nidx = (uint64_t)f->idx.nparts * isa_tap_free_elems(&f->idx);
    if (nidx != plain->count[1])
        return sim_inst_errf(err, c, e, idx,
                             "idx has %llu indices but the %s side has %u rows (count[1])",
                             (unsigned long long)nidx, f->scatter ? "src" : "dst",
                             plain->count[1]);
    if (indexed->count[0] != plain->count[0])
        return sim_inst_errf(err, c, e, idx,
                             "row lengths differ: src count[0] = %u, dst count[0] = %u",
                             f->src.count[0], f->dst.count[0]);
    sd->src_addr = f->src.addr;
    sd->dst_addr = f->dst.addr;
    /* the indexed side's whole extent (count[1] rows) must be addressable, so
     * every in-range index is too */
    if (dap_check(s, c, e, idx, "src", &f->src, sd->src_addr, err) ||
        dap_check(s, c, e, idx, "dst", &f->dst, sd->dst_addr, err))
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
    return sim_heap_push(s, ev, err);
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
    if (check_transpose_op(c, e, idx, d->inst.f.DTRIG.transpose_op,
                           Q->pending + (Q->npending - n), n, err))
        return -1;
    sim_xfer_t *x = calloc(1, sizeof *x);
    if (!x || !(x->descs = malloc(n * sizeof *x->descs))) {
        free(x);
        return tpb_errf(err, "out of memory (DMA transfer)");
    }
    memcpy(x->descs, Q->pending + (Q->npending - n), n * sizeof *x->descs);
    Q->npending -= n;
    x->ndesc = n;
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

/* ---- data movement ---- */

typedef struct {
    sim_t *s;
    sim_core_t *c;               /* issuing core */
    sim_xfer_t *x;
    const sim_desc_t *sd;
    uint64_t *eng_bytes;         /* [nengines] */
    uint64_t *eng_cost;          /* [nengines] engine time in milli-bytes at peak */
    uint64_t hbm_bytes;          /* bytes read from or written to HBM */
    unsigned nengines;
    unsigned xpermille;          /* transpose bandwidth share (1000: none) */
    bool add;
    bool scaled;                 /* DDESC scaled: src * scale in fp32 (dma_compute) */
    float scale;
    tpb_err_t *err;
} mover_t;

static int mover_errf(mover_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int mover_errf(mover_t *m, const char *fmt, ...)
{
    char body[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    sim_engine_t *e = &m->c->eng[m->x->engine_slot];
    return sim_inst_errf(m->err, m->c, e, m->x->trigger_idx,
                         "transfer on queue %u, descriptor %s at pc %u: %s", m->x->queue,
                         isa_ops[m->sd->d->inst.op].mnemonic, m->sd->pc, body);
}

static uint8_t *side_ptr(const sim_t *s, const isa_dap_t *p, int64_t a, uint8_t **init)
{
    if (p->space == ISA_SPACE_HBM) {
        *init = s->hbm_init ? s->hbm_init + a : NULL;
        return s->hbm + a;
    }
    sim_core_t *o = &s->cores[p->core];
    uint64_t off = (uint64_t)(a / PITCH) * space_pb(s, p->space) + (uint64_t)(a % PITCH);
    if (p->space == ISA_SPACE_SBUF) {
        *init = o->sbuf_init ? o->sbuf_init + off : NULL;
        return o->sbuf + off;
    }
    *init = o->psum_init ? o->psum_init + off : NULL;
    return o->psum + off;
}

static unsigned engine_of(const mover_t *m, const isa_dap_t *dst, int64_t da, const isa_dap_t *src,
                          int64_t sa, uint32_t row)
{
    const tpb_target_t *t = m->s->t;
    int64_t part;
    if (on_chip(dst->space))
        part = da / PITCH;
    else if (on_chip(src->space))
        part = sa / PITCH;
    else
        return row % m->nengines;
    unsigned e = (unsigned)(part / (t->dma_partitions_per_engine ? t->dma_partitions_per_engine : 1));
    return e < m->nengines ? e : m->nengines - 1;
}

/* Attribute `bytes` moved in contiguous runs of `run` bytes to engine e. */
static void charge(mover_t *m, unsigned e, uint64_t bytes, uint64_t run, const isa_dap_t *src,
                   const isa_dap_t *dst)
{
    m->eng_bytes[e] += bytes;
    uint64_t cost = sim_dma_row_cost(m->s->t, bytes, run);
    if (m->xpermille && m->xpermille != 1000)
        cost = (cost * 1000ull + m->xpermille - 1) / m->xpermille;
    m->eng_cost[e] += cost;
    m->hbm_bytes += (src->space == ISA_SPACE_HBM ? bytes : 0) +
                    (dst->space == ISA_SPACE_HBM ? bytes : 0);
}

static bool all_init(const uint8_t *init, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!init[i])
            return false;
    return true;
}

/* Move one element: cast through fp32 when dtypes differ (and scale it there
 * when the descriptor is scaled), accumulate with
 * compute=add. */
static int move_elem(mover_t *m, const isa_dap_t *dst, int64_t da, const isa_dap_t *src,
                     int64_t sa)
{
    uint8_t *si, *di;
    uint8_t *sp = side_ptr(m->s, src, sa, &si), *dp = side_ptr(m->s, dst, da, &di);
    unsigned ss = isa_dtype_size(src->dtype), ds = isa_dtype_size(dst->dtype);
    if (si && !all_init(si, ss))
        return mover_errf(m, "read of never-written %s memory at src address 0x%llx (--check-uninit)",
                          space_name(src->space), (unsigned long long)sa);
    if (m->add && di && !all_init(di, ds))
        return mover_errf(m, "accumulate into never-written %s memory at dst address 0x%llx "
                          "(--check-uninit)", space_name(dst->space), (unsigned long long)da);
    if (!m->add && !m->scaled && src->dtype == dst->dtype) {
        memmove(dp, sp, ss);
    } else {
        float v = num_load_f32(sp, src->dtype);
        if (m->scaled)
            v = v * m->scale;
        if (m->add)
            v = num_load_f32(dp, dst->dtype) + v;
        num_store_f32(dp, dst->dtype, v);
    }
    if (di)
        memset(di, 1, ds);
    return 0;
}

static unsigned elem_bytes(const isa_dap_t *a, const isa_dap_t *b)
{
    unsigned x = isa_dtype_size(a->dtype), y = isa_dtype_size(b->dtype);
    return x > y ? x : y;
}

/* Copy a contiguous row with memcpy when nothing else is needed. */
static bool row_fast(const mover_t *m, const isa_dap_t *dst, const isa_dap_t *src)
{
    unsigned size = isa_dtype_size(src->dtype);
    return !m->add && !m->scaled && src->dtype == dst->dtype && src->step[0] == (int32_t)size &&
           dst->step[0] == (int32_t)size && !m->s->opt.check_uninit;
}

static bool row_in_one_partition(const isa_dap_t *p, int64_t a, uint32_t n)
{
    if (!on_chip(p->space))
        return true;
    int64_t last = a + (int64_t)p->step[0] * (n - 1);
    return a / PITCH == last / PITCH && last >= a;
}

/* Contiguous bytes one side of a transpose descriptor covers: the whole
 * descriptor when its two dims tile one dense block (an on-chip side's
 * partition step never does), else the longer dim that steps by one
 * element, else one element. */
static uint64_t side_run(const isa_dap_t *p, unsigned eb)
{
    int64_t z = (int64_t)isa_dtype_size(p->dtype);
    int64_t c0 = p->count[0], c1 = p->count[1];
    if ((p->step[0] == z && p->step[1] == c0 * z) || (p->step[1] == z && p->step[0] == c1 * z))
        return (uint64_t)(c0 * c1) * eb;
    uint64_t r = eb;
    if (p->step[0] == z && (uint64_t)c0 * eb > r)
        r = (uint64_t)c0 * eb;
    if (p->step[1] == z && (uint64_t)c1 * eb > r)
        r = (uint64_t)c1 * eb;
    return r;
}

/* Hardware DMA transpose (docs/timing.md): the transpose unit reads and
 * writes whole blocks, so the run is the longer contiguous extent of the
 * two sides, at the target's transpose share of the bandwidth (source in
 * HBM or on chip).  Without hardware transpose every element is its own
 * run at full share. */
static uint64_t transpose_run(mover_t *m, const isa_dap_t *src, const isa_dap_t *dst, unsigned eb)
{
    const tpb_target_t *t = m->s->t;
    unsigned x = on_chip(src->space) ? t->dma_transpose_sbuf_permille : t->dma_transpose_hbm_permille;
    if (!x)
        return eb;
    m->xpermille = x;
    uint64_t a = side_run(src, eb), b = side_run(dst, eb);
    return a > b ? a : b;
}

/* The sentinel of every on-chip byte a descriptor side may touch, whose
 * pattern starts at address a (lazy.h) */
static void touch_side(const sim_t *s, const isa_dap_t *p, int64_t a)
{
    if (!on_chip(p->space) || p->core >= s->ncores)
        return;
    sim_core_t *o = &s->cores[p->core];
    sim_lazy_touch_dap(p->space == ISA_SPACE_SBUF ? &o->sbuf_z : &o->psum_z, a, p->step,
                       p->count, isa_dtype_size(p->dtype), PITCH);
}

static void touch_sides(const mover_t *m, const isa_dap_t *src, const isa_dap_t *dst)
{
    touch_side(m->s, src, m->sd->src_addr);
    touch_side(m->s, dst, m->sd->dst_addr);
}

/* A destination whose every row is copied whole into one partition (the
 * memmove rows of move_plane) replaces every byte of the sentinel cells
 * its rows cover completely: those are not filled (sim_lazy_cover; the
 * partly covered ones are).  false: touch the destination as usual. */
static bool cover_rows(const mover_t *m, const isa_dap_t *src, const isa_dap_t *dst,
                       int64_t src_addr, int64_t dst_addr)
{
    const sim_t *s = m->s;
    if (!on_chip(dst->space) || dst->core >= s->ncores || dst_addr < 0 ||
        src->count[0] != dst->count[0] || !src->count[0] || !row_fast(m, dst, src))
        return false;
    sim_core_t *o = &s->cores[dst->core];
    sim_lazy_t *z = dst->space == ISA_SPACE_SBUF ? &o->sbuf_z : &o->psum_z;
    uint32_t n0 = dst->count[0];
    for (uint32_t j = 0; j < dst->count[1]; j++)
        if (!row_in_one_partition(src, src_addr + (int64_t)j * src->step[1], n0) ||
            !row_in_one_partition(dst, dst_addr + (int64_t)j * dst->step[1], n0))
            return false;
    int64_t len = (int64_t)n0 * isa_dtype_size(dst->dtype);
    for (uint32_t j = 0; j < dst->count[1] && z->left; j++) {
        int64_t da = dst_addr + (int64_t)j * dst->step[1];
        if (da < 0)
            return false;
        sim_lazy_cover(z, (unsigned)(da / PITCH), da % PITCH, da % PITCH + len);
    }
    return true;
}

/* One 2-D plane of a direct descriptor, its sides starting at src_addr /
 * dst_addr (a PseudoDmaDirect2d is one plane; a PseudoDmaDirect3d's planes
 * are moved and costed one after another exactly as that many 2-D
 * descriptors would be: docs/timing.md). */
static int move_plane(mover_t *m, int64_t src_addr, int64_t dst_addr)
{
    const isa_fmt_DDESC_t *f = &m->sd->d->inst.f.DDESC;
    const isa_dap_t *src = &f->src, *dst = &f->dst;
    unsigned eb = elem_bytes(src, dst);
    bool copy = !m->s->opt.timing_only;
    if (copy) {
        touch_side(m->s, src, src_addr); /* first: a source in cells the copy covers is filled */
        if (!cover_rows(m, src, dst, src_addr, dst_addr))
            touch_side(m->s, dst, dst_addr);
    }
    uint64_t total = dap_elems(src);
    if (!total)
        return 0;
    uint64_t trun = f->transpose ? transpose_run(m, src, dst, eb) : eb;
    if (src->count[0] == dst->count[0]) {
        /* same row shape: row by row */
        uint32_t n0 = src->count[0];
        bool fast = row_fast(m, dst, src);
        /* a row is one contiguous run when both sides step by one element
         * (a transpose: see transpose_run) */
        bool cs = src->step[0] == (int32_t)isa_dtype_size(src->dtype);
        bool cd = dst->step[0] == (int32_t)isa_dtype_size(dst->dtype);
        uint64_t run = f->transpose ? trun : cs && cd ? (uint64_t)n0 * eb : eb;
        for (uint32_t j = 0; j < src->count[1]; j++) {
            int64_t sa = src_addr + (int64_t)j * src->step[1];
            int64_t da = dst_addr + (int64_t)j * dst->step[1];
            if (row_in_one_partition(src, sa, n0) && row_in_one_partition(dst, da, n0)) {
                charge(m, engine_of(m, dst, da, src, sa, j), (uint64_t)n0 * eb, run, src, dst);
                if (!copy)
                    continue;
                if (fast) {
                    uint8_t *si, *di;
                    memmove(side_ptr(m->s, dst, da, &di), side_ptr(m->s, src, sa, &si),
                            (size_t)n0 * isa_dtype_size(src->dtype));
                    continue;
                }
                for (uint32_t i = 0; i < n0; i++)
                    if (move_elem(m, dst, da + (int64_t)i * dst->step[0], src,
                                  sa + (int64_t)i * src->step[0]))
                        return -1;
                continue;
            }
            for (uint32_t i = 0; i < n0; i++) {
                int64_t a = sa + (int64_t)i * src->step[0], b = da + (int64_t)i * dst->step[0];
                charge(m, engine_of(m, dst, b, src, a, j), eb, f->transpose ? trun : eb, src, dst);
                if (copy && move_elem(m, dst, b, src, a))
                    return -1;
            }
        }
        return 0;
    }
    /* different row shapes: element k of src to element k of dst */
    uint32_t si = 0, sj = 0, di = 0, dj = 0;
    for (uint64_t k = 0; k < total; k++) {
        int64_t a = src_addr + (int64_t)sj * src->step[1] + (int64_t)si * src->step[0];
        int64_t b = dst_addr + (int64_t)dj * dst->step[1] + (int64_t)di * dst->step[0];
        charge(m, engine_of(m, dst, b, src, a, dj), eb, f->transpose ? trun : eb, src, dst);
        if (copy && move_elem(m, dst, b, src, a))
            return -1;
        if (++si == src->count[0]) { si = 0; sj++; }
        if (++di == dst->count[0]) { di = 0; dj++; }
    }
    return 0;
}

static int move_direct(mover_t *m)
{
    plane_t pl = planes_of(&m->sd->d->inst);
    for (uint32_t k = 0; k < pl.n; k++)
        if (move_plane(m, m->sd->src_addr + (int64_t)k * pl.sstep,
                       m->sd->dst_addr + (int64_t)k * pl.dstep))
            return -1;
    return 0;
}

/* Index j of the idx TAP (partition-major, then free dims outer to inner). */
static int64_t read_index(const mover_t *m, const isa_tap_t *t, uint64_t j, bool *uninit)
{
    uint64_t per = isa_tap_free_elems(t);
    uint64_t p = t->start + j / per, r = j % per;
    int64_t off = 0;
    for (unsigned d = 0; d < t->ndims; d++) {
        off += (int64_t)(r % t->count[d]) * t->step[d];
        r /= t->count[d];
    }
    unsigned size = isa_dtype_size(t->dtype);
    int64_t col = (int64_t)t->addr + off * size;
    sim_lazy_touch(&m->c->sbuf_z, (unsigned)p, 1, col, col + size);
    uint64_t byte = p * m->s->t->sbuf_partition_bytes + (uint64_t)col;
    if (m->c->sbuf_init && !all_init(m->c->sbuf_init + byte, size))
        *uninit = true;
    return num_load_i64(m->c->sbuf + byte, t->dtype);
}

static int move_indirect(mover_t *m)
{
    const isa_fmt_DIND_t *f = &m->sd->d->inst.f.DIND;
    const isa_dap_t *src = &f->src, *dst = &f->dst;
    const isa_dap_t *indexed = f->scatter ? dst : src;
    unsigned eb = elem_bytes(src, dst);
    uint32_t rows = f->scatter ? src->count[1] : dst->count[1], n0 = src->count[0];
    bool copy = !m->s->opt.timing_only;
    /* a gather-transpose (transpose_op xzyw) goes through the transpose
     * unit like a direct transpose (docs/timing.md): each gathered row is
     * one run of its contiguous bytes, at the target's transpose share */
    uint64_t xrun = eb;
    if (m->x->trigger->inst.f.DTRIG.transpose_op == ISA_XPOSE_XZYW) {
        const tpb_target_t *t = m->s->t;
        unsigned x = on_chip(indexed->space) ? t->dma_transpose_sbuf_permille
                                             : t->dma_transpose_hbm_permille;
        if (x) {
            m->xpermille = x;
            if (indexed->step[0] == (int32_t)isa_dtype_size(indexed->dtype))
                xrun = (uint64_t)n0 * eb;
        }
    }
    if (copy)
        touch_sides(m, src, dst);
    for (uint32_t j = 0; j < rows; j++) {
        int64_t ix = j;
        if (copy) {
            bool uninit = false;
            ix = read_index(m, &f->idx, j, &uninit);
            if (uninit)
                return mover_errf(m, "index %u read from never-written SBUF (--check-uninit)", j);
            if (ix < 0 || ix >= (int64_t)indexed->count[1]) {
                if (f->oob == ISA_OOB_SKIP)
                    continue;
                return mover_errf(m,
                                  "index %lld (idx element %u) is out of range [0, %u) of the "
                                  "indexed %s side (oob=error)",
                                  (long long)ix, j, indexed->count[1], f->scatter ? "dst" : "src");
            }
        } else if (j >= indexed->count[1]) {
            continue;
        }
        int64_t sa = m->sd->src_addr + (f->scatter ? (int64_t)j : ix) * src->step[1];
        int64_t da = m->sd->dst_addr + (f->scatter ? ix : (int64_t)j) * dst->step[1];
        /* a gathered/scattered row is one run when both sides are contiguous */
        if (n0 && src->step[0] == (int32_t)isa_dtype_size(src->dtype) &&
            dst->step[0] == (int32_t)isa_dtype_size(dst->dtype) &&
            row_in_one_partition(src, sa, n0) && row_in_one_partition(dst, da, n0))
            charge(m, engine_of(m, dst, da, src, sa, j), (uint64_t)n0 * eb, (uint64_t)n0 * eb, src,
                   dst);
        else
            for (uint32_t i = 0; i < n0; i++)
                charge(m, engine_of(m, dst, da + (int64_t)i * dst->step[0], src,
                                    sa + (int64_t)i * src->step[0], j), eb, xrun, src, dst);
        for (uint32_t i = 0; copy && i < n0; i++) {
            int64_t a = sa + (int64_t)i * src->step[0], b = da + (int64_t)i * dst->step[0];
            if (move_elem(m, dst, b, src, a))
                return -1;
        }
    }
    return 0;
}

/* unique_indices (DmaTrigger unique = 1): the kernel promised that no
 * destination row of the transfer's scatter descriptors repeats (seed 002
 * NeuronIndirectRMW unique_indices); a repeat is an error naming both idx
 * elements, so a wrong promise cannot pass silently. */
typedef struct {
    int64_t addr;
    uint32_t desc, j;
} uniq_row_t;

static int uniq_cmp(const void *a, const void *b)
{
    const uniq_row_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int check_unique(mover_t *m)
{
    size_t n = 0, cap = 0;
    uniq_row_t *rows = NULL;
    int rc = 0;
    for (unsigned i = 0; i < m->x->ndesc && !rc; i++) {
        const sim_desc_t *sd = &m->x->descs[i];
        if (sd->d->inst.op != ISA_OP_DMA_INDIRECT2D || !sd->d->inst.f.DIND.scatter)
            continue;
        const isa_fmt_DIND_t *f = &sd->d->inst.f.DIND;
        m->sd = sd;
        for (uint32_t j = 0; j < f->src.count[1]; j++) {
            bool uninit = false;
            int64_t ix = read_index(m, &f->idx, j, &uninit);
            if (uninit || ix < 0 || ix >= (int64_t)f->dst.count[1])
                continue;   /* reported by the move itself */
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                uniq_row_t *r = realloc(rows, cap * sizeof *r);
                if (!r) {
                    free(rows);
                    return tpb_errf(m->err, "out of memory (unique_indices check)");
                }
                rows = r;
            }
            rows[n++] = (uniq_row_t){sd->dst_addr + ix * f->dst.step[1], i, j};
        }
    }
    qsort(rows, n, sizeof *rows, uniq_cmp);
    for (size_t k = 1; k < n && !rc; k++)
        if (rows[k].addr == rows[k - 1].addr) {
            m->sd = &m->x->descs[rows[k].desc];
            rc = mover_errf(m, "unique_indices: destination row at 0x%llx is scattered to twice "
                            "(idx element %u of descriptor %u and element %u of descriptor %u)",
                            (unsigned long long)rows[k].addr, rows[k - 1].j, rows[k - 1].desc,
                            rows[k].j, rows[k].desc);
        }
    free(rows);
    return rc;
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
    if (x->trigger->inst.f.DTRIG.unique && !s->opt.timing_only) {
        mover_t um = { .s = s, .c = c, .x = x, .sd = &x->descs[0], .err = err };
        if (check_unique(&um))
            return -1;
    }
    for (unsigned i = 0; i < x->ndesc; i++) {
        const sim_desc_t *sd = &x->descs[i];
        bool direct = isa_op_is_direct_dma(sd->d->inst.op);
        bool d2 = sd->d->inst.op == ISA_OP_DMA_DIRECT2D;   /* only DDESC has scale */
        unsigned dmaop = direct ? sd->d->inst.f.DDESC.compute : sd->d->inst.f.DIND.compute;
        mover_t m = { .s = s, .c = c, .x = x, .sd = sd, .eng_bytes = eng, .eng_cost = cost,
                      .nengines = ne, .xpermille = 1000, .add = dmaop == ISA_DMAOP_ADD, .err = err,
                      .scaled = d2 && sd->d->inst.f.DDESC.scaled,
                      .scale = d2 ? sd->d->inst.f.DDESC.scale : 1.0f };
        if ((direct ? move_direct(&m) : move_indirect(&m)) != 0)
            return -1;
        hbm += m.hbm_bytes;
    }
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
    if (sim_heap_push(s, ev, err))
        return -1;
    if (Q->next_start && Q->inflight < depth) {
        Q->busy = true;
        return push_start(s, c, q, now, err);
    }
    return 0;
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
