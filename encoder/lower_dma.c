/* lower_dma.c - data movement.
 *
 *   load / store / dma_copy / broadcast_partition
 *       -> PseudoDmaDirect2d descriptor(s) + one DmaTrigger
 *   dma_transpose -> the same with the source access permuted (pinned to Pool,
 *       descriptors flagged transpose)
 *   indirect_load / indirect_save -> PseudoDmaIndirect2d + DmaTrigger
 *       (gather; scatter overwrite or scatter-add = compute add)
 *   local_gather -> IndirectCopy;  gather_flattened -> PoolGather
 *
 * Access-pattern legalisation (the simple-vs-complicated gate): both sides
 * become lists of (byte step, element count) dims; a joint decomposition
 * splits them so every joint dim is one dim on each side; contiguous runs are
 * collapsed (on both sides at once); dims whose count exceeds the 16-bit
 * field are factored.  If the joint dims fit the target's stride budget
 * (dma_max_strides) the DMA is simple: one PseudoDmaDirect2d.  Otherwise it
 * is complicated: one multi-dim PseudoDmaDirect3d when the joint dims fit
 * its 3 dims (dma_desc_dims) and the transfer is not scaled; beyond that the
 * outer dims are enumerated, one descriptor per outer index, all under one
 * DmaTrigger -- unless that needs more than dma_max_descriptors, when it
 * cannot be legalised. */
#include "lower_dma_int.h"

#include <stddef.h>
#include <string.h>


static unsigned space_of(const tir_tensor_t *t)
{
    switch (t->kind) {
    case TIR_T_SBUF: return ISA_SPACE_SBUF;
    case TIR_T_PSUM: return ISA_SPACE_PSUM;
    default: return ISA_SPACE_HBM;
    }
}

static int build_side(lower_ctx_t *c, const tir_ap_t *a, const char *role, bool write,
                      dside_t *s)
{
    tir_tensor_t vt;   /* a dtype view: the tensor's bytes seen as that dtype */
    const tir_tensor_t *t = tir_ap_tensor(lw_tensor(c, a), a, &vt);
    if (!t)
        return lw_err(c, "%s: missing operand", role);
    const bir_mloc_t *ml = &c->m->mlocs[a->tensor];
    memset(s, 0, offsetof(dside_t, d));   /* d[] is written up to nd, and read only so far */
    s->space = space_of(t);
    s->dtype = t->dtype;
    s->dsz = isa_dtype_size(t->dtype);
    s->elems = 1;
    if (a->offset < 0)
        return lw_err(c, "%s: negative offset", role);
    int64_t lo = 0, hi = 0;   /* element offsets relative to the base (free part) */
    int64_t tile_row = 1;     /* SBUF/PSUM: elements per partition row */
    if (s->space == ISA_SPACE_HBM) {
        s->base = ml->addr + (uint64_t)a->offset * s->dsz;
        for (int d = 0; d < a->ndim; d++) {
            int64_t span = a->step[d] * (a->count[d] - 1);
            if (span < 0) lo += span; else hi += span;
        }
        int64_t total = 1;
        for (int d = 0; d < t->ndim; d++)
            total *= t->shape[d];
        if (a->offset + lo < 0 || a->offset + hi >= total)
            return lw_err(c, "%s: access runs outside '%s' (elements %lld..%lld of %lld)", role,
                          t->name, (long long)(a->offset + lo), (long long)(a->offset + hi),
                          (long long)total);
        s->acc = (bir_access_t){.space = ISA_SPACE_HBM, .p0 = 0, .p1 = 1,
                                .lo = s->base + (uint64_t)lo * s->dsz,
                                .hi = s->base + (uint64_t)(hi + 1) * s->dsz, .write = write};
        s->total = total;
    } else {
        int64_t row = tir_tile_row(t);
        tile_row = row;
        int64_t start = a->offset / row, foff = a->offset % row;
        int64_t np = a->ndim >= 1 ? a->count[0] : 1;
        if (a->ndim >= 1 && np > 1 && a->step[0] != 0 && (a->step[0] < 0 || a->step[0] % row))
            return lw_err(c, "%s: dim 0 of an access to tile '%s' must step over partitions", role,
                          t->name);
        int64_t pstep = a->ndim >= 1 ? a->step[0] : row;
        /* partition AP (seed 002 addComplicatedDMAAP): the access names np
         * partitions (local_access_partition_size) over a hull of
         * (np-1)*m+1 (input_hull_size); when they differ (stride m > 1) the
         * partition AP is re-derived with step m partitions
         * (tonga_partition_ap), else it is the access's own: step one
         * partition, or 0 for a partition broadcast */
        int64_t m = np > 1 ? pstep / row : 1;
        int64_t hull = pstep ? (np - 1) * m + 1 : 1;
        if (start + hull > (int64_t)c->t->partitions)
            return lw_err(c, "%s: partitions of '%s' exceed %u", role, t->name, c->t->partitions);
        for (int d = 1; d < a->ndim; d++) {
            int64_t span = a->step[d] * (a->count[d] - 1);
            if (span < 0) lo += span; else hi += span;
        }
        if (foff + lo < 0 || foff + hi >= row)
            return lw_err(c, "%s: access runs outside tile '%s'", role, t->name);
        s->base = (uint64_t)start * ISA_DMA_PARTITION_PITCH + ml->addr + (uint64_t)foff * s->dsz;
        unsigned p1 = (unsigned)(start + hull);
        s->acc = (bir_access_t){.space = s->space, .p0 = (unsigned)start, .p1 = p1,
                                .lo = ml->addr + (uint64_t)(foff + lo) * s->dsz,
                                .hi = ml->addr + (uint64_t)(foff + hi + 1) * s->dsz,
                                .write = write};
        s->row = row;
        s->hull = hull;
    }
    s->lo = lo;
    s->hi = hi;
    for (int d = 0; d < a->ndim; d++) {
        s->elems *= (uint64_t)a->count[d];
        if (a->count[d] == 1)
            continue;
        if (s->nd >= MAX_BDIMS)
            return lw_err(c, "%s: too many dims", role);
        bool pdim = d == 0 && s->space != ISA_SPACE_HBM;
        s->d[s->nd].step = pdim ? (a->step[0] ? (a->step[0] / tile_row) * (int64_t)ISA_DMA_PARTITION_PITCH : 0)
                                : a->step[d] * (int64_t)s->dsz;
        s->d[s->nd].count = a->count[d];
        s->nd++;
    }
    return 0;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Joint decomposition, innermost first.  Returns the dim count or -1 when
 * the two element orders have no common product structure. */
static int joint_dims(const dside_t *s, const dside_t *d, jdim_t *out, int max)
{
    int i = s->nd - 1, j = d->nd - 1, n = 0;
    int64_t fs = 1, fd = 1;
    while (i >= 0 && j >= 0) {
        int64_t rs = s->d[i].count / fs, rd = d->d[j].count / fd;
        int64_t m = gcd64(rs, rd);
        if (m <= 1 || n >= max)
            return -1;
        out[n++] = (jdim_t){m, s->d[i].step * fs, d->d[j].step * fd};
        fs *= m;
        fd *= m;
        if (fs == s->d[i].count) { i--; fs = 1; }
        if (fd == d->d[j].count) { j--; fd = 1; }
    }
    return (i < 0 && j < 0) ? n : -1;
}

/* s with each dim merged into the one outside it where that one steps over
 * it exactly (a contiguous run of dims becomes one dim). */
static dside_t merged_runs(const dside_t *s)
{
    dside_t m = *s;
    int k = 0;
    for (int i = 0; i < s->nd; i++) {
        if (k > 0 && m.d[k - 1].step == s->d[i].step * s->d[i].count) {
            m.d[k - 1].step = s->d[i].step;
            m.d[k - 1].count *= s->d[i].count;
            continue;
        }
        m.d[k++] = s->d[i];
    }
    m.nd = k;
    return m;
}

/* Collapse contiguous runs (on both sides), then factor counts > 65535. */
static int legalize_joint(jdim_t *j, int n, int max)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (k > 0 && j[i].s_step == j[k - 1].s_step * j[k - 1].count &&
            j[i].d_step == j[k - 1].d_step * j[k - 1].count) {
            j[k - 1].count *= j[i].count;
            continue;
        }
        j[k++] = j[i];
    }
    jdim_t out[MAX_BDIMS * 2];
    int m = 0;
    for (int i = 0; i < k; i++) {
        jdim_t x = j[i];
        while (x.count > 65535) {
            int64_t f = 0;
            for (int64_t cand = 65535; cand > 1; cand--)
                if (x.count % cand == 0) { f = cand; break; }
            if (!f || m >= MAX_BDIMS * 2)
                return -1;
            out[m++] = (jdim_t){f, x.s_step, x.d_step};
            x = (jdim_t){x.count / f, x.s_step * f, x.d_step * f};
        }
        if (m >= MAX_BDIMS * 2)
            return -1;
        out[m++] = x;
    }
    if (m > max)
        return -1;
    memcpy(j, out, (size_t)m * sizeof *j);
    return m;
}

static bool is_load_direction(const dside_t *dst) { return dst->space != ISA_SPACE_HBM; }

static void set_dap(isa_dap_t *p, const dside_t *s, uint64_t addr, const jdim_t *j, int nj,
                    bool src)
{
    memset(p, 0, sizeof *p);
    p->addr = (uint32_t)addr;
    p->dtype = s->dtype;
    p->space = s->space;
    p->core = 0;
    for (int i = 0; i < 2; i++) {
        if (i < nj) {
            p->step[i] = (int32_t)(src ? j[i].s_step : j[i].d_step);
            p->count[i] = (uint32_t)j[i].count;
        } else {
            p->step[i] = 0;
            p->count[i] = 1;
        }
    }
}

typedef struct {
    bool transpose;
    bir_dge_compute_t compute; /* BIR DgeComputeOp (bypass 0, add 2) */
    unsigned dge;
    int engine;              /* pinned issuing engine or UNASSIGNED */
} dma_opts_t;

/* setReplicaGroups (seed 002 §6): every DMA instruction of a collective
 * (the split's pulls, encoder/lnc_collective.c) carries the replica group
 * of each of the kernel's ranks; any other DMA carries none. */
static int set_replica_groups(lower_ctx_t *c, bir_inst_t *in)
{
    const tir_op_t *op = c->op;
    if (op->rare == &tir_rare_default)   /* most ops: no groups (all -1) */
        return 0;
    int n = c->k->num_cores < 8 ? c->k->num_cores : 8;
    bool any = false;
    for (int r = 0; r < 8; r++)
        any |= op->rare->rgroup[r] >= 0;
    if (!any || n <= 0)   /* nreplica 0: the groups are never read */
        return 0;
    bir_rare_t *r = bir_inst_rare(c->m, in);
    if (!r)
        return lw_err(c, "out of memory");
    r->nreplica = (uint8_t)n;
    memcpy(r->replica, op->rare->rgroup, sizeof r->replica);
    return 0;
}

/* has_cc_expr_in_access (seed 002 §6): the access names a cross-core
 * index, i.e. its source is a tile in a peer core's SBUF (a collective's
 * pull). */
static bool has_cc_expr_in_access(const tir_op_t *op, const dside_t *src)
{
    return op->rare->remote_core >= 0 && src->space != ISA_SPACE_HBM;
}

/* add_sb_to_sb_cc_ap (seed 002 §6): the SB<->SB collective access pattern.
 * The joint dims (the same flattening as every DMA, 002-16) give the
 * strides; the source side names the peer's SBUF by a core index relative
 * to the issuing core (0 = local; the linker makes it absolute,
 * docs/multicore.md "Collectives"). The peer must be in the issuing
 * core's replica group when the DMA carries groups. */
static int add_sb_to_sb_cc_ap(lower_ctx_t *c, const dside_t *dst, isa_dap_t *src)
{
    const tir_op_t *op = c->op;
    if (dst->space == ISA_SPACE_HBM)
        return lw_err(c, "a collective pull from core %d's SBUF needs an SBUF destination",
                      op->rare->remote_core);
    if (op->rare->remote_core >= 8 || op->rare->remote_core == op->core)
        return lw_err(c, "collective peer core %d is not another core of the kernel",
                      op->rare->remote_core);
    if (op->core >= 0 && op->core < 8 && op->rare->rgroup[op->core] >= 0 &&
        op->rare->rgroup[op->rare->remote_core] != op->rare->rgroup[op->core])
        return lw_err(c, "collective peer core %d is outside replica group %d", op->rare->remote_core,
                      op->rare->rgroup[op->core]);
    src->core = (uint32_t)(op->rare->remote_core - op->core) & 7u;
    return 0;
}

static int dge_of(lower_ctx_t *c)
{
    int g = c->op->rare->dge_mode;
    if (g < ISA_DGE_NONE || g > ISA_DGE_HW)
        return lw_err(c, "dge_mode %d is not none/sw/hw", g);
    return 0;
}

/* The L1 opcode a DMA op's trigger carries (the notes' BIR family):
 * load -> InstLoad (19); gather -> GenericIndirectLoad (42); scatter
 * overwrite -> GenericIndirectSave (44); everything else, including the
 * scatter-add RMW (a DMACopy with the add compute op) -> DMACopy (32). */
static bir_opcode_t trigger_l1(const tir_op_t *op)
{
    if (op->rare->local_reduce)
        return BIR_REDUCE;   /* codegenLocalReduceOp: a collective's reduce step */
    switch (op->kind) {
    case TIR_LOAD: return BIR_INST_LOAD;
    case TIR_INDIRECT_LOAD: return BIR_GENERIC_INDIRECT_LOAD;
    case TIR_INDIRECT_SAVE:
        return op->flags & TIR_F_RMW_ADD ? BIR_DMA_COPY : BIR_GENERIC_INDIRECT_SAVE;
    default: return BIR_DMA_COPY;
    }
}

/* The register offsets (elements) that keep a register-moved HBM side
 * inside its tensor (reg_side made s->acc the tensor's bytes): its
 * trigger's bounds, checked by the simulator before anything moves --
 * NKI's out-of-bound check of a dynamic address, oob_mode error stopping
 * the run and skip moving nothing (docs/semantics-dma.md). */
static void reg_bounds(const dside_t *s, int32_t *lo, int32_t *hi)
{
    int64_t off = (int64_t)(s->base - s->acc.lo) / (int64_t)s->dsz;
    int64_t a = -(off + s->lo), b = s->total - 1 - (off + s->hi);
    *lo = a < INT32_MIN ? INT32_MIN : (int32_t)a;
    *hi = b > INT32_MAX ? INT32_MAX : (int32_t)b;
}

static void set_reg_bounds(const tir_op_t *op, isa_fmt_DTRIG_t *t, const dside_t *src,
                           const dside_t *dst)
{
    if (op->rare->src_reg < 0 && op->rare->dst_reg < 0)
        return;
    t->oob = tir_oob_skip(op) ? ISA_OOB_SKIP : ISA_OOB_ERROR;
    t->src_bound = op->rare->src_reg >= 0;
    t->dst_bound = op->rare->dst_reg >= 0;
    if (t->src_bound)
        reg_bounds(src, &t->src_lo, &t->src_hi);
    if (t->dst_bound)
        reg_bounds(dst, &t->dst_lo, &t->dst_hi);
}

static int emit_trigger(lower_ctx_t *c, int group, unsigned ndesc, const dside_t *src,
                        const dside_t *dst, const dma_opts_t *o)
{
    bir_inst_t *tr = lw_inst_new(c, trigger_l1(c->op), ISA_OP_DMA_TRIGGER);
    if (!tr)
        return -1;
    tr->isa.f->DTRIG.ndesc = ndesc;
    tr->isa.f->DTRIG.unique = !!(c->op->flags & TIR_F_UNIQUE_IDX);
    /* setTransposeOp: the fixed XZYW code on every transpose (seed 002 s.3) */
    tr->isa.f->DTRIG.transpose_op = o->transpose ? ISA_XPOSE_XZYW : ISA_XPOSE_NONE;
    set_reg_bounds(c->op, &tr->isa.f->DTRIG, src, dst);
    tr->dma_group = group;
    tr->engine = o->engine;
    if (set_replica_groups(c, tr))
        return -1;
    if (tr->opc == BIR_REDUCE) {   /* setop, setKind, setLocal(True) */
        bir_rare_t *r = bir_inst_rare(c->m, tr);
        if (!r)
            return lw_err(c, "out of memory");
        r->red_op = (uint8_t)c->op->op0;
        r->red_kind = c->op->rare->local_reduce == TIR_REDUCE_SCATTER ? BIR_RKIND_REDUCE_SCATTER
                                                                : BIR_RKIND_ALL_REDUCE;
        r->red_local = true;
    }
    if (src->acc.hi > src->acc.lo)   /* empty: a peer's tile (lower_direct) */
        bir_inst_access(c->m, tr, &src->acc);
    bir_inst_access(c->m, tr, &dst->acc);
    bir_inst_set_dge_compute(tr, o->compute);
    if (o->compute == BIR_DGE_COMPUTE_ADD) {   /* accumulate: the destination is read too */
        bir_access_t r = dst->acc;
        r.write = false;
        bir_inst_access(c->m, tr, &r);
    }
    return lw_append(c, tr);
}

/* Register-offset (dynamic) DMA: the side's address moves by the register's
 * value (an element offset) when the trigger issues, so the compiler cannot
 * know which bytes it touches: the side's access becomes the whole HBM
 * tensor (dependencies stay conservative; the trigger's bounds keep the
 * moved access inside it, set_reg_bounds). Only HBM sides take a register. */
static int reg_side(lower_ctx_t *c, const tir_ap_t *a, int reg, const char *role, dside_t *s)
{
    if (reg < 0)
        return 0;
    if (reg >= ISA_NUM_REGS)
        return lw_err(c, "%s_reg %d outside 0..%d", role, reg, ISA_NUM_REGS - 1);
    if (s->space != ISA_SPACE_HBM)
        return lw_err(c, "%s_reg: only an HBM side takes a register offset", role);
    const bir_mloc_t *ml = &c->m->mlocs[a->tensor];
    s->acc.lo = ml->addr;
    s->acc.hi = ml->addr + ml->bytes;
    return 0;
}

/* Both sides and their legal joint dims (errors in this order: the sides,
 * their registers, the element counts, the qos, the legalisation). */
int lw_direct_sides(lower_ctx_t *c, const tir_ap_t *srcap, const tir_ap_t *dstap, dside_t *s,
                    dside_t *d, jdim_t *j, int *nj)
{
    const tir_op_t *op = c->op;
    if (build_side(c, srcap, "src", false, s) || build_side(c, dstap, "dst", true, d) ||
        reg_side(c, srcap, op->rare->src_reg, "src", s) || reg_side(c, dstap, op->rare->dst_reg, "dst", d))
        return -1;
    if (s->elems != d->elems)
        return lw_err(c, "src has %llu elements but dst has %llu", (unsigned long long)s->elems,
                      (unsigned long long)d->elems);
    /* differing dtypes: the DMA converts element by element (docs/design.md) */
    if (!isa_dma_dtypes_ok(s->dtype, d->dtype, (op->flags & TIR_F_RMW_ADD) != 0))
        return lw_err(c, "a packed MX dtype or an MX scale is copied only into itself (src %s, "
                         "dst %s)",
                      isa_dtype_numpy_name(s->dtype), isa_dtype_numpy_name(d->dtype));
    if (lw_check_qos(c))
        return -1;
    bool load = is_load_direction(d);
    int n = s->elems == 1 ? 0 : joint_dims(s, d, j, MAX_BDIMS * 2);
    if (n < 0) {
        /* shapes whose dims as written share no structure (NKI pairs the
         * elements in C order whatever the shapes: [3, 5] into [5, 3]):
         * each side's contiguous runs merged first */
        dside_t ms = merged_runs(s), md = merged_runs(d);
        n = joint_dims(&ms, &md, j, MAX_BDIMS * 2);
    }
    if (n >= 0)
        n = legalize_joint(j, n, MAX_BDIMS * 2);
    if (n < 0)
        return lw_err(c, load ? "Cannot legalize strided load!" : "Cannot legalize strided store!");
    for (int i = 0; i < n; i++)
        if (j[i].s_step > INT32_MAX || j[i].s_step < INT32_MIN || j[i].d_step > INT32_MAX ||
            j[i].d_step < INT32_MIN)
            return lw_err(c, load ? "Cannot legalize strided load!" : "Cannot legalize strided store!");
    *nj = n;
    return 0;
}

/* The engine that issues a store nobody pinned (docs/compiler.md "Engines
 * and queues"): Pool, as the production compiler's profiles show (loads on
 * qSyncIO, the store on qGpSimdIO), so that a store waiting for its data
 * does not hold up the loads SP issues after it in program order.  Spill
 * transfers and the collectives' transfers keep their issuers. */
static int store_issuer(const lower_ctx_t *c, const dside_t *s, const dside_t *d, int engine)
{
    const tir_op_t *op = c->op;
    bool on_chip = s->space == ISA_SPACE_SBUF || s->space == ISA_SPACE_PSUM;
    if (engine != ISA_ENG_UNASSIGNED || is_load_direction(d) || !on_chip ||
        (op->flags & (TIR_F_SPILL_SAVE | TIR_F_SPILL_RELOAD)) || op->rare->remote_core >= 0 ||
        op->rare->sync_core >= 0 || op->rare->local_reduce || tir_rare_kind_fields(op->rare))
        return engine;
    return ISA_ENG_POOL;
}

/* Direct DMA src -> dst through the gate. */
static int lower_direct(lower_ctx_t *c, const tir_ap_t *srcap, const tir_ap_t *dstap,
                        const dma_opts_t *opts)
{
    const tir_op_t *op = c->op;
    dside_t s, d;
    jdim_t j[MAX_BDIMS * 2];
    int nj;
    if (lw_direct_sides_memo(c, srcap, dstap, &s, &d, j, &nj))
        return -1;
    dma_opts_t oo = *opts;
    oo.engine = store_issuer(c, &s, &d, oo.engine);
    const dma_opts_t *o = &oo;
    bool load = is_load_direction(&d);
    unsigned per = c->t->dma_max_strides < 2 ? c->t->dma_max_strides : 2;
    if (per == 0)
        per = 1;
    /* simple: the joint dims fit the stride budget: one 2-D descriptor.
     * Complicated: one multi-dim (3-D) descriptor when the target has it,
     * the joint dims fit it and the transfer is not scaled (D3DESC has no
     * scale); more joint dims than that enumerate the outer ones, one
     * descriptor per outer index (the N-descriptor fallback). */
    bool d3 = nj > (int)per && per >= 2 && c->t->dma_desc_dims >= 3 && !op->rare->dma_scaled;
    int width = d3 ? 3 : (int)per;
    uint64_t ndesc = 1;
    for (int i = width; i < nj; i++)
        ndesc *= (uint64_t)j[i].count;
    if (ndesc > c->t->dma_max_descriptors || ndesc > 65535)
        return lw_err(c, "%s (%llu descriptors needed, target %s allows %u)",
                      load ? "Cannot legalize strided load!" : "Cannot legalize strided store!",
                      (unsigned long long)ndesc, c->t->name, c->t->dma_max_descriptors);
    int group = c->m->next_dma_group++;
    int inner = nj < width ? nj : width;   /* dims inside one descriptor */
    for (uint64_t k = 0; k < ndesc; k++) {
        /* outer index k -> byte offsets on each side */
        int64_t so = 0, dof = 0;
        uint64_t rem = k;
        for (int i = inner; i < nj; i++) {
            int64_t idx = (int64_t)(rem % (uint64_t)j[i].count);
            rem /= (uint64_t)j[i].count;
            so += idx * j[i].s_step;
            dof += idx * j[i].d_step;
        }
        /* the wire format follows the dim count (seed 002: chosen
         * downstream of the AP from dim count + dtype + DGE) */
        bir_inst_t *de = lw_inst_new(c, BIR_DMA_DESC, d3 ? ISA_OP_DMA_DIRECT3D : ISA_OP_DMA_DIRECT2D);
        if (!de)
            return -1;
        isa_fmt_DDESC_t *f = &de->isa.f->DDESC;   /* D3DESC: the same leading fields */
        set_dap(&f->src, &s, s.base + (uint64_t)so, j, inner, true);
        set_dap(&f->dst, &d, d.base + (uint64_t)dof, j, inner, false);
        if (set_replica_groups(c, de))
            return -1;
        if (has_cc_expr_in_access(op, &s) && add_sb_to_sb_cc_ap(c, &d, &f->src))
            return -1;
        f->transpose = o->transpose;
        f->dge = o->dge;
        bir_inst_set_dge_compute(de, o->compute);   /* wire bit: codegen's map */
        if (d3) {
            isa_fmt_D3DESC_t *g = &de->isa.f->D3DESC;
            g->count2 = inner > 2 ? (uint32_t)j[2].count : 1;
            g->src_step2 = inner > 2 ? (int32_t)j[2].s_step : 0;
            g->dst_step2 = inner > 2 ? (int32_t)j[2].d_step : 0;
        } else {
            f->scaled = op->rare->dma_scaled;
            f->scale = op->rare->dma_scale;
        }
        f->qos = (uint32_t)op->rare->qos;
        f->src_reg = op->rare->src_reg >= 0 ? (uint32_t)op->rare->src_reg : ISA_REG_NONE;
        f->dst_reg = op->rare->dst_reg >= 0 ? (uint32_t)op->rare->dst_reg : ISA_REG_NONE;
        f->bounded = op->rare->src_reg >= 0 || op->rare->dst_reg >= 0;   /* its trigger's bounds */
        de->is_dma_desc = true;
        de->dma_group = group;
        de->engine = o->engine;
        /* a collective pull's remote semaphore (the NEFF descriptor's
         * remote_semaphores): the last descriptor increments the source
         * core's collective slot when the transfer completes
         * (docs/semantics-dma.md) */
        if (op->rare->sync_core >= 0 && k == ndesc - 1 && lw_coll_remote_upd(c, de))
            return -1;
        if (lw_append(c, de))
            return -1;
    }
    /* a peer's tile is the peer's memory: no local access conflicts with
     * reading it (its readiness is the collective's semaphores) */
    if (has_cc_expr_in_access(op, &s))
        s.acc.hi = s.acc.lo;
    return emit_trigger(c, group, (unsigned)ndesc, &s, &d, o);
}

static int requested_engine(lower_ctx_t *c, int dflt, bool pinned, int *eng)
{
    int req = c->op->engine;
    if (req == ISA_ENG_UNASSIGNED) {
        *eng = dflt;
        return 0;
    }
    if (req < 0 || req >= ISA_ENG_COUNT || !isa_engine_is_tpb((isa_engine_t)req))
        return lw_err(c, "DMA must be issued by a TPB engine (SP, Activation, Pool, PE, DVE)");
    if (pinned && req != dflt)
        return lw_err(c, "this DMA is pinned to the %s engine", isa_engine_name((isa_engine_t)dflt));
    *eng = req;
    return 0;
}

static int lower_indirect(lower_ctx_t *c);

static int lower_transpose_dma(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    static const int allowed[3][4] = {{1, 0}, {2, 1, 0}, {3, 1, 2, 0}};
    int n = op->rare->n_transpose_axes, which = -1;
    for (int i = 0; i < 3; i++)
        if (n == i + 2 && memcmp(op->rare->transpose_axes, allowed[i], (size_t)n * sizeof(int)) == 0)
            which = i;
    if (which < 0)
        return lw_err(c, "dma_transpose axes must be [1,0], [2,1,0] or [3,1,2,0]");
    if (op->src[0]->ndim != n || op->dst->ndim != n)
        return lw_err(c, "dma_transpose with %d axes needs %d-D src and dst (got %d and %d)", n, n,
                      op->src[0]->ndim, op->dst->ndim);
    if (lw_has(op->index))
        return lower_indirect(c);   /* DMAIndirectTranspose */
    tir_ap_t ps = *op->src[0];
    for (int i = 0; i < n; i++) {
        ps.step[i] = op->src[0]->step[op->rare->transpose_axes[i]];
        ps.count[i] = op->src[0]->count[op->rare->transpose_axes[i]];
    }
    for (int i = 0; i < n; i++)
        if (ps.count[i] != op->dst->count[i])
            return lw_err(c, "dst dim %d has %lld elements, permuted src has %lld", i,
                          (long long)op->dst->count[i], (long long)ps.count[i]);
    dma_opts_t o = {true, BIR_DGE_COMPUTE_BYPASS, (unsigned)op->rare->dge_mode, ISA_ENG_POOL};
    if (requested_engine(c, ISA_ENG_POOL, true, &o.engine))
        return -1;
    return lower_direct(c, &ps, op->dst, &o);
}

/* Row geometry of the table side of an indirect DMA: dim 0 indirect. */
static int indirect_dap(lower_ctx_t *c, const tir_ap_t *a, const char *role, bool write,
                        isa_dap_t *p, bir_access_t *acc, uint64_t *rows)
{
    const tir_tensor_t *t = lw_tensor(c, a);
    if (!t || t->kind == TIR_T_SBUF || t->kind == TIR_T_PSUM)
        return lw_err(c, "%s: the indexed side must be an HBM tensor", role);
    if (a->ndim < 1)
        return lw_err(c, "%s: the indexed side needs an indirect dim 0", role);
    const bir_mloc_t *ml = &c->m->mlocs[a->tensor];
    unsigned dsz = isa_dtype_size(t->dtype);
    int64_t row_elems = 1, inner_step = 1;
    int nfree = 0;
    for (int d = 1; d < a->ndim; d++) {
        if (a->count[d] == 1)
            continue;
        nfree++;
        row_elems *= a->count[d];
        inner_step = a->step[d];
    }
    if (nfree > 1)
        return lw_err(c, "%s: an indexed row must be one strided run (got %d free dims)", role, nfree);
    int64_t total = 1;
    for (int d = 0; d < t->ndim; d++)
        total *= t->shape[d];
    /* rows reachable from the offset along the indirect dim */
    int64_t bound = a->step[0] > 0 ? (total - a->offset - (row_elems - 1) * inner_step + a->step[0] - 1) / a->step[0] : 1;
    if (bound < 1 || bound > (int64_t)ISA_DIND_ROWS_MAX || row_elems > 65535)
        return lw_err(c, "%s: %lld rows of %lld elements do not fit the descriptor counts (at "
                         "most %u rows of 65535 elements)",
                      role, (long long)bound, (long long)row_elems, ISA_DIND_ROWS_MAX);
    memset(p, 0, sizeof *p);
    p->addr = (uint32_t)(ml->addr + (uint64_t)a->offset * dsz);
    p->dtype = t->dtype;
    p->space = ISA_SPACE_HBM;
    p->step[0] = (int32_t)(inner_step * dsz);
    p->count[0] = (uint32_t)row_elems;
    p->step[1] = (int32_t)(a->step[0] * dsz);
    p->count[1] = (uint32_t)bound & 0xFFFFu;   /* the rest in DIND rows_hi */
    *rows = (uint64_t)bound;
    /* any row may be touched: the whole reachable table region */
    *acc = (bir_access_t){.space = ISA_SPACE_HBM, .p0 = 0, .p1 = 1, .lo = p->addr,
                          .hi = p->addr + (uint64_t)((bound - 1) * a->step[0] +
                                                     (row_elems - 1) * inner_step + 1) * dsz,
                          .write = write};
    return 0;
}

/* Tile side of a gather-transpose (DMAIndirectTranspose): src [n, A, B]
 * (dim 0 indirect, a row of A*B elements with A or B = 1), dst = src
 * permuted by the axes (2, 1, 0): [B, A, n].  Row element r of index j
 * lands at dst[.., j] along the dst dim that holds the row's src dim, so
 * the DAP's dim 0 (row) steps over that dst dim -- partitions when it is
 * dst dim 0 -- and dim 1 (one per index) over dst dim 2. */
static int gather_transpose_tile(lower_ctx_t *c, isa_dap_t *tp)
{
    const tir_op_t *op = c->op;
    const tir_ap_t *s = op->src[0], *d = op->dst;
    if (s->count[1] > 1 && s->count[2] > 1)
        return lw_err(c, "gather-transpose rows must be one dim: src dims 1 and 2 have %lld and "
                         "%lld elements (one must be 1)",
                      (long long)s->count[1], (long long)s->count[2]);
    int64_t bstep[3];
    unsigned dsz = isa_dtype_size(tp->dtype);
    for (int k = 0; k < 3; k++)
        bstep[k] = k == 0 ? (d->step[0] ? (int64_t)ISA_DMA_PARTITION_PITCH : 0)
                          : d->step[k] * (int64_t)dsz;
    int kn = -1, kr = -1, rdim = s->count[2] > 1 ? 2 : 1;
    for (int k = 0; k < 3; k++) {
        if (op->rare->transpose_axes[k] == 0)
            kn = k;
        if (op->rare->transpose_axes[k] == rdim)
            kr = k;
    }
    if (kn < 0 || kr < 0 || d->count[kn] != s->count[0])
        return lw_err(c, "gather-transpose dst must be src permuted by the axes (2, 1, 0)");
    tp->step[0] = s->count[rdim] > 1 ? (int32_t)bstep[kr] : (int32_t)dsz;
    tp->step[1] = (int32_t)bstep[kn];
    tp->count[1] = (uint32_t)d->count[kn];
    return 0;
}

static int lower_indirect(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bool scatter = op->kind == TIR_INDIRECT_SAVE;
    bool rmw = scatter && (op->flags & TIR_F_RMW_ADD);
    bool gt = op->kind == TIR_DMA_TRANSPOSE;   /* gather-transpose */
    if (dge_of(c))
        return -1;
    unsigned dge = (unsigned)op->rare->dge_mode;
    unsigned oob = tir_oob_skip(op) ? ISA_OOB_SKIP : ISA_OOB_ERROR;
    if (gt) {
        /* codegenDMAIndirectTranspose: software DGE, OOB indices skipped */
        if (dge == ISA_DGE_HW)
            return lw_err(c, "gather-transpose runs on software DGE (dge_mode none or sw, "
                             "got hw)");
        oob = ISA_OOB_SKIP;
    }
    if (dge == ISA_DGE_HW) {
        if (c->t->dge_on_vector_indirect_dma) {
            /* dynamic (DGE vector-indirect) mode */
            if (rmw)
                return lw_err(c, "IndirectRMW does not support dynamic DMA mode");
            oob = ISA_OOB_SKIP;
        } else {
            dge = ISA_DGE_SW;   /* standard descriptor form on this target */
        }
    }
    if (rmw && dge != ISA_DGE_NONE && !c->t->dge_on_dst_reduce)
        return lw_err(c, "target %s cannot reduce at the DMA destination with DGE "
                         "(dge_on_dst_reduce); use dge_mode none for scatter-add", c->t->name);
    if (op->rare->qos < 0 || op->rare->qos > 7)
        return lw_err(c, "dma_qos %d must be 0..7 for indirect DMA", op->rare->qos);
    bir_inst_t de;
    lw_inst(c, &de, BIR_DMA_INDIRECT_DESC, ISA_OP_DMA_INDIRECT2D);
    isa_fmt_DIND_t *f = &de.isa.f->DIND;
    bir_access_t tacc;
    uint64_t rows = 0;
    const tir_ap_t *table = scatter ? op->dst : op->src[0];
    const tir_ap_t *tile = scatter ? op->src[0] : op->dst;
    if (indirect_dap(c, table, scatter ? "dst" : "src", scatter, scatter ? &f->dst : &f->src,
                     &tacc, &rows))
        return -1;
    dside_t ts;
    if (build_side(c, tile, scatter ? "src" : "dst", !scatter, &ts))
        return -1;
    if (ts.space == ISA_SPACE_HBM)
        return lw_err(c, "the tile side of an indirect DMA must be SBUF");
    isa_dap_t *tp = scatter ? &f->src : &f->dst;
    memset(tp, 0, sizeof *tp);
    tp->addr = (uint32_t)ts.base;
    tp->dtype = ts.dtype;
    tp->space = ts.space;
    const isa_dap_t *rp = scatter ? &f->dst : &f->src;
    f->rows_hi = (uint32_t)(rows >> 16);
    tp->count[0] = rp->count[0];
    if (gt) {
        if (gather_transpose_tile(c, tp))
            return -1;
    } else {
        /* tile side: [P (one index per partition), row] as two DAP dims */
        if (ts.nd > 2)
            return lw_err(c, "the tile side of an indirect DMA must be [P, row]");
        tp->step[0] = (int32_t)ts.dsz;
        for (int i = 0; i < ts.nd; i++)
            if (ts.d[i].step != (int64_t)ISA_DMA_PARTITION_PITCH)
                tp->step[0] = (int32_t)ts.d[i].step;
        tp->step[1] = (int32_t)ISA_DMA_PARTITION_PITCH;
        tp->count[1] = (uint32_t)(ts.elems / (rp->count[0] ? rp->count[0] : 1));
    }
    if ((uint64_t)tp->count[1] * rp->count[0] != ts.elems)
        return lw_err(c, "tile side has %llu elements, not a multiple of the %u-element row",
                      (unsigned long long)ts.elems, rp->count[0]);
    if (isa_dtype_size(ts.dtype) != isa_dtype_size(rp->dtype) ||
        !isa_dma_dtypes_ok(ts.dtype, rp->dtype, rmw))
        return lw_err(c, "indirect DMA cannot convert between %s and %s",
                      isa_dtype_name(ts.dtype), isa_dtype_name(rp->dtype));
    if (lw_tap(c, &de, op->index, false, "index", &f->idx))
        return -1;
    if (f->idx.dtype != ISA_DT_INT32 && f->idx.dtype != ISA_DT_UINT32)
        return lw_err(c, "index tile must be int32 or uint32");
    uint64_t nidx = (uint64_t)f->idx.nparts * isa_tap_free_elems(&f->idx);
    if (nidx != tp->count[1])
        return lw_err(c, "%llu indices for %u rows", (unsigned long long)nidx, tp->count[1]);
    f->scatter = scatter;
    f->oob = oob;
    bir_inst_set_dge_compute(&de, rmw ? BIR_DGE_COMPUTE_ADD : BIR_DGE_COMPUTE_BYPASS);
    f->dge = dge;
    f->qos = (uint32_t)op->rare->qos;
    de.is_dma_desc = true;
    int group = c->m->next_dma_group++;
    de.dma_group = group;
    dma_opts_t o = {gt, (bir_dge_compute_t)de.dge_compute, dge, ISA_ENG_POOL};
    if (requested_engine(c, ISA_ENG_POOL, gt, &o.engine))
        return -1;
    de.engine = o.engine;
    bir_access_t idxacc = de.acc[0];
    de.nacc = 0;
    if (bir_block_append(bir_main_block(c->m), &de, c->err) < 0)
        return -1;
    dside_t sside = ts, dside = ts;
    if (scatter)
        dside.acc = tacc;
    else
        sside.acc = tacc;
    sside.acc.write = false;
    dside.acc.write = true;
    if (emit_trigger(c, group, 1, &sside, &dside, &o))
        return -1;
    bir_inst_t *tr = &bir_main_block(c->m)->insts[bir_main_block(c->m)->ninsts - 1];
    bir_inst_access(c->m, tr, &idxacc);
    return tr->oom ? lw_err(c, "out of memory") : 0;
}

static int lower_local_gather(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_INDIRECT_COPY, ISA_OP_INDIRECT_COPY);
    isa_fmt_ICOPY_t *f = &in.isa.f->ICOPY;
    if (lw_tap(c, &in, op->src[0], false, "src", &f->src) ||
        lw_tap(c, &in, op->index, false, "index", &f->idx) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    if (f->idx.dtype != ISA_DT_UINT16)
        return lw_err(c, "local_gather index must be a uint16 tile");
    /* whole 16-partition GpSimd cores: the count is validated, the start
     * is known here (a slice such as t[8:24]) */
    const isa_tap_t *taps[3] = { &f->src, &f->idx, &f->out };
    static const char *const names[3] = { "src_buffer", "index", "dst" };
    for (int i = 0; i < 3; i++)
        if (taps[i]->start % 16 || taps[i]->nparts % 16)
            return lw_err(c, "local_gather: %s covers partitions %u..%u; it runs on whole "
                          "16-partition GpSimd cores (start and count multiples of 16)",
                          names[i], taps[i]->start, taps[i]->start + taps[i]->nparts - 1);
    if (op->rare->num_elem_per_idx < 1 || op->rare->num_elem_per_idx > 255)
        return lw_err(c, "num_elem_per_idx %d must be 1..255", op->rare->num_elem_per_idx);
    if (op->rare->num_valid < 0 || op->rare->num_valid > 65535)
        return lw_err(c, "num_valid_indices %d must be 0..65535", op->rare->num_valid);
    f->elems_per_idx = (uint32_t)op->rare->num_elem_per_idx;
    f->num_valid = (uint32_t)op->rare->num_valid;
    return lw_emit(c, &in);
}

static int lower_gather_flat(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    bir_inst_t in;
    lw_inst(c, &in, BIR_POOL_GATHER, ISA_OP_POOL_GATHER);
    isa_fmt_PGATH_t *f = &in.isa.f->PGATH;
    const tir_ap_t *idx = lw_has(op->index) ? op->index : op->src[1];
    if (lw_tap(c, &in, op->src[0], false, "data", &f->data) ||
        lw_tap(c, &in, idx, false, "indices", &f->idx) ||
        lw_tap(c, &in, op->dst, true, "dst", &f->out))
        return -1;
    if (f->idx.dtype != ISA_DT_UINT32)
        return lw_err(c, "gather_flattened indices must be a uint32 tile");
    return lw_emit(c, &in);
}

int lower_dma(lower_ctx_t *c)
{
    const tir_op_t *op = c->op;
    switch (op->kind) {
    case TIR_INDIRECT_LOAD:
    case TIR_INDIRECT_SAVE: return lower_indirect(c);
    case TIR_LOCAL_GATHER: return lower_local_gather(c);
    case TIR_GATHER_FLATTENED: return lower_gather_flat(c);
    case TIR_DMA_TRANSPOSE: return lower_transpose_dma(c);
    default: break;
    }
    if (dge_of(c))
        return -1;
    dma_opts_t o = {false, BIR_DGE_COMPUTE_BYPASS, (unsigned)op->rare->dge_mode, ISA_ENG_UNASSIGNED};
    if (op->flags & TIR_F_RMW_ADD)
        o.compute = BIR_DGE_COMPUTE_ADD;
    /* a LocalReduce's op becomes the descriptors' DMA compute op: the
     * DMA engines compute add only (isa/enums.def DMAOP) */
    if (op->rare->local_reduce && (op->kind != TIR_DMA_COPY || op->op0 != ISA_ALU_ADD ||
                             o.compute != BIR_DGE_COMPUTE_ADD))
        return lw_err(c, "LocalReduce with operator %s: the DMA computes add only",
                      isa_enum_name(ISA_FT_ALU, (unsigned)op->op0));
    if (requested_engine(c, ISA_ENG_UNASSIGNED, false, &o.engine))
        return -1;
    const tir_tensor_t *dt = lw_tensor(c, op->dst);
    if (dt && dt->kind == TIR_T_CONSTANT)
        return lw_err(c, "cannot write to constant tensor '%s'", dt->name);
    if (op->kind == TIR_LOAD && dt && dt->kind != TIR_T_SBUF && dt->kind != TIR_T_PSUM)
        return lw_err(c, "load destination must be an on-chip tile");
    if (op->kind == TIR_BROADCAST_PARTITION) {
        /* one source row read by every destination partition: partition step 0 */
        tir_ap_t b = *op->src[0];
        if (b.ndim < 1 || b.count[0] != 1 || op->dst->ndim < 1)
            return lw_err(c, "broadcast_partition src must be one partition row [1,F]");
        b.count[0] = op->dst->count[0];
        b.step[0] = 0;
        return lower_direct(c, &b, op->dst, &o);
    }
    return lower_direct(c, op->src[0], op->dst, &o);
}
