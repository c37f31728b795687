/* lower.c - tile IR -> backend IR: name-based dispatch and shared operand
 * helpers.  Each tile-IR op is routed by its NKI name (tir_op_name) to the
 * lowering of its family, like the production codegen's
 * getattr(self, "codegen" + name) dispatch. */
#include "lower.h"
#include "strutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*lower_fn)(lower_ctx_t *c);

typedef struct {
    const char *name;   /* tile-IR op name */
    lower_fn fn;
} lower_entry_t;

/* codegenNoOp: no silicon effect, nothing emitted. */
static int lower_noop(lower_ctx_t *c)
{
    (void)c;
    return 0;
}

static const lower_entry_t lower_table[] = {
    {"load", lower_dma}, {"store", lower_dma}, {"dma_copy", lower_dma},
    {"dma_transpose", lower_dma}, {"indirect_load", lower_dma},
    {"indirect_save", lower_dma}, {"local_gather", lower_dma},
    {"gather_flattened", lower_dma}, {"broadcast_partition", lower_dma},
    {"memset", lower_select}, {"stream_shuffle", lower_select},
    {"iota", lower_select}, {"range_select", lower_select}, {"select_reduce", lower_select}, {"affine_select", lower_select}, {"max8", lower_select},
    {"find_index8", lower_select}, {"match_replace8", lower_select},
    {"select", lower_select}, {"dropout", lower_select},
    {"matmul", lower_matmul}, {"matmul_mx", lower_matmul}, {"matmul_sparse", lower_matmul},
    {"transpose", lower_transpose},
    {"activation", lower_activation}, {"activate2", lower_activation},
    {"tensor_tensor", lower_tensor}, {"tensor_scalar", lower_tensor},
    {"scalar_tensor_tensor", lower_tensor}, {"tensor_copy", lower_tensor},
    {"tensor_tensor_scan", lower_tensor}, {"quantize_mx", lower_tensor},
    {"tensor_reduce", lower_reduce}, {"tensor_partition_reduce", lower_reduce},
    {"core_barrier", lower_misc}, {"load_tensor_to_register", lower_misc},
    {"bn_stats", lower_misc}, {"bn_aggr", lower_misc}, {"coll_sync", lower_misc},
    {"noop", lower_noop},
    {"rng", lower_rng}, {"rand2", lower_rng}, {"rand_get_state", lower_rng},
    {"rand_set_state", lower_rng}, {"set_rng_seed", lower_rng},
    {"register_move", lower_reg}, {"register_store", lower_reg},
    {"inline_asm", lower_asm}, {"inline_asm_bytes", lower_asm},
    {"tensor_scalar_cumulative", lower_seq}, {"tensor_scalar_reduce", lower_seq},
    {"sequence_bounds", lower_seq}, {"nonzero_with_count", lower_seq}, {"topk", lower_seq},
    {"exponential", lower_seq},
};

static lower_fn find_lowering(const char *name)
{
    for (size_t i = 0; i < sizeof lower_table / sizeof lower_table[0]; i++)
        if (strcmp(lower_table[i].name, name) == 0)
            return lower_table[i].fn;
    return NULL;
}

int lw_err(lower_ctx_t *c, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tpb_errf(c->err, "op %d '%s' (%s, %s): %s", c->opi, c->op->name,
                    tir_op_name(c->op->kind), c->op->path[0] ? c->op->path : "?", msg);
}

/* Explicit dependencies (process_dep_edges): every instruction of op i
 * (descriptors aside: their trigger carries the transfer) writes the token
 * [i, i+1) of BIR_SPACE_DEP when a later op names it in deps, and reads the
 * token of each op it names itself. */
static int add_dep_tokens(lower_ctx_t *c, int first, const bool *target)
{
    bir_block_t *b = bir_main_block(c->m);
    const tir_op_t *op = c->op;
    for (int n = first; n < b->ninsts; n++) {
        bir_inst_t *in = &b->insts[n];
        if (in->is_dma_desc)
            continue;
        for (int d = -1; d < op->rare->ndeps; d++) {
            int who = d < 0 ? c->opi : op->rare->deps[d];
            if (d < 0 && !target[c->opi])
                continue;
            bir_access_t t = {.space = BIR_SPACE_DEP, .p0 = 0, .p1 = 1, .lo = (uint64_t)who,
                              .hi = (uint64_t)who + 1, .write = d < 0};
            if (!bir_inst_access(c->m, in, &t))
                return in->oom ? lw_err(c, "out of memory")
                               : lw_err(c, "too many memory accesses to add a dependency token");
        }
    }
    return 0;
}

/* The instructions a spill load / store made (from index first on) are
 * spill transfers: the queue pass puts them on the spill queues and the
 * stats count their bytes (encoder/spill.c). */
static void mark_spill(lower_ctx_t *c, int first)
{
    bir_block_t *b = bir_main_block(c->m);
    uint8_t kind = c->op->flags & TIR_F_SPILL_SAVE ? BIR_SPILL_SAVE : BIR_SPILL_RELOAD;
    for (int j = first; j < b->ninsts; j++)
        b->insts[j].spill = kind;
}

int lower_kernel(lower_ctx_t *c)
{
    /* the name dispatch and the name, resolved once per op kind (name_of
     * and by_kind are read only where resolved) */
    lower_fn by_kind[TIR_OP_COUNT];
    const char *name_of[TIR_OP_COUNT];
    bool resolved[TIR_OP_COUNT] = {false};
    bool *target = NULL;
    for (int i = 0; i < c->k->nops && !c->no_deps; i++)
        for (int d = 0; d < c->k->ops[i].rare->ndeps; d++) {
            int who = c->k->ops[i].rare->deps[d];
            c->opi = i;
            c->op = &c->k->ops[i];
            if (who < 0 || who >= i) {
                free(target);
                return lw_err(c, "deps: op %d is not an earlier op", who);
            }
            if (!target && !(target = calloc((size_t)c->k->nops, sizeof *target)))
                return lw_err(c, "out of memory");
            target[who] = true;
        }
    /* an instruction or more per op: the block sized once for them */
    int rc = bir_block_reserve(bir_main_block(c->m), c->k->nops, c->err);
    /* the names, bodies and accesses take 200-330 arena bytes per op (the
     * bench kernels): the first chunk for most of them at once; a failure
     * leaves the arena as it was (it reports its own out of memory) */
    (void)tpb_arena_reserve(&c->m->arena, (size_t)c->k->nops * 128);
    lw_tap_memo_clear(c);
    for (int i = 0; i < c->k->nops && !rc; i++) {
        c->opi = i;
        c->op = &c->k->ops[i];
        c->sub = 0;
        unsigned kind = (unsigned)c->op->kind;
        const char *name;
        lower_fn fn;
        if (kind < TIR_OP_COUNT) {
            if (!resolved[kind]) {
                name_of[kind] = tir_op_name(c->op->kind);
                by_kind[kind] = find_lowering(name_of[kind]), resolved[kind] = true;
            }
            name = name_of[kind], fn = by_kind[kind];
        } else {
            name = tir_op_name(c->op->kind);
            fn = find_lowering(name);
        }
        c->kind_of = c->op, c->op_kind = name;
        if (!fn) {
            rc = lw_err(c, "no lowering for op kind '%s' in the single-core back-end", name);
            break;
        }
        int first = bir_main_block(c->m)->ninsts;
        rc = fn(c);
        if (!rc && (c->op->flags & (TIR_F_SPILL_SAVE | TIR_F_SPILL_RELOAD)))
            mark_spill(c, first);
        if (!rc && target && (target[i] || c->op->rare->ndeps))
            rc = add_dep_tokens(c, first, target);
        if (!rc && c->op_done)
            rc = c->op_done(c->op_done_arg, i);
    }
    free(target);
    return rc;
}

void lw_coll_slots(lower_ctx_t *c)
{
    int n = c->k->num_cores > 1 ? c->k->num_cores : 2;
    if (c->m->coll_sems < n)
        c->m->coll_sems = n;
}

int lw_coll_remote_upd(lower_ctx_t *c, bir_inst_t *in)
{
    const tir_op_t *op = c->op;
    if (op->rare->sync_sem < 0 || op->rare->sync_sem >= 8 || op->rare->sync_core >= 8)
        return lw_err(c, "collective semaphore slot %d / core %d outside 0..7", op->rare->sync_sem,
                      op->rare->sync_core);
    lw_coll_slots(c);
    if (op->rare->sync_core < 0)
        return 0;
    in->isa.sync.upd_en = 1;
    in->isa.sync.upd_remote = 1;
    in->isa.sync.upd_core = (uint32_t)op->rare->sync_core;
    in->isa.sync.upd_sem = (uint32_t)(BIR_COLL_SEM0 + op->rare->sync_sem);
    in->isa.sync.upd_op = ISA_SEMOP_SEM_INC;
    in->isa.sync.upd_val = 1;
    return 0;
}

void lw_inst(lower_ctx_t *c, bir_inst_t *in, bir_opcode_t opc, isa_op_t op)
{
    bir_inst_init(in, opc, op);
    in->tir_op = c->opi;
    c->ptr_inst = in;
    c->nptr = 0;
    /* the name lower_kernel looked up for the op (a caller that set c->op
     * itself: looked up here) */
    in->op_kind = c->kind_of == c->op ? c->op_kind : tir_op_name(c->op->kind);
    in->src = c->op->path;
    /* the first instruction takes the op's name, the next "<name>.<k>" with
     * the name cut to 50 bytes (cut as set_name would); out of memory:
     * lw_emit's append refuses it */
    const char *name = c->op->name;
    if (c->sub == 0) {
        c->name_n = strnlen(name, BIR_NAME_LEN - 1);   /* once per op */
        /* a whole name is the op's own string (the kernel outlives the
         * module, as for src): no copy, and the sidecar writer sees that
         * the two are one by their address, without reading the name (a
         * cache miss by then) */
        bool whole = c->name_n < BIR_NAME_LEN - 1;
        bir_inst_name_body(c->m, in, name, whole ? 0 : c->name_n);   /* the body last: a mode setter grows it */
        if (whole && !in->oom)
            in->name = name;
    } else {
        char tail[24];
        tail[0] = '.';
        tail[1] = (char)('0' + c->sub);   /* one digit (a DMA's trigger: ".1"): no digit count */
        size_t t = c->sub < 10 ? 2 : 1 + su_long(tail + 1, c->sub);
        bir_inst_name_body_tail(c->m, in, name, c->name_n < 50 ? c->name_n : 50, tail, t);
    }
    c->sub++;
}

/* The engines read a per-partition scalar (a PTR: an address without a
 * partition) on the partitions of the instruction's output, its lanes
 * (docs/semantics.md "PTR operand").  A PTR tile access that starts
 * elsewhere, or covers fewer partitions, would be read from other
 * partitions than the kernel names: refused.  The Max8 family (8 values
 * per partition on in's partitions) and the sequencer's TensorLoad /
 * TensorStore (one partition the op names) place theirs otherwise. */
static int check_ptr_partitions(lower_ctx_t *c, const bir_inst_t *in)
{
    if (c->ptr_inst != in || !c->nptr)
        return 0;
    c->ptr_inst = NULL;
    switch (isa_ops[in->isa.op].format) {
    case ISA_FMT_FIDX: case ISA_FMT_MR: case ISA_FMT_MIMR: case ISA_FMT_TLOAD: case ISA_FMT_TSTORE:
        return 0;
    default:
        break;
    }
    const bir_access_t *out = NULL;
    for (int i = 0; i < in->nacc && !out; i++) {
        const bir_access_t *a = &in->acc[i];
        bool is_ptr = false;
        for (unsigned k = 0; k < c->nptr; k++)
            is_ptr |= c->ptr[k].acc == i;
        if (a->write && !is_ptr && (a->space == ISA_SPACE_SBUF || a->space == ISA_SPACE_PSUM))
            out = a;
    }
    if (!out)
        return 0;
    for (unsigned k = 0; k < c->nptr; k++) {
        const bir_access_t *a = &in->acc[c->ptr[k].acc];
        if (a->p0 != out->p0 || a->p1 - a->p0 < out->p1 - out->p0)
            return lw_err(c, "%s: a per-partition scalar on partitions %u..%u, but the output is "
                             "on partitions %u..%u; the engine reads per-partition scalars on the "
                             "output's partitions (place it there, e.g. copy it to partition %u)",
                          c->ptr[k].role, (unsigned)a->p0, (unsigned)a->p1 - 1, (unsigned)out->p0,
                          (unsigned)out->p1 - 1, (unsigned)out->p0);
    }
    return 0;
}

int lw_emit(lower_ctx_t *c, bir_inst_t *in)
{
    if (check_ptr_partitions(c, in))
        return -1;
    int req = c->op->engine;
    if (req != ISA_ENG_UNASSIGNED && in->engine == ISA_ENG_UNASSIGNED && !in->is_dma_desc &&
        in->isa.op != ISA_OP_DMA_TRIGGER) {
        if (req < 0 || req >= ISA_ENG_COUNT || !isa_engine_is_tpb((isa_engine_t)req))
            return lw_err(c, "requested engine %d is not a TPB engine", req);
        if (!(in->engines & (1u << req)))
            return lw_err(c, "engine %s cannot execute %s", isa_engine_name((isa_engine_t)req),
                          isa_ops[in->isa.op].mnemonic);
        in->engine = req;
    }
    return lw_append(c, in);
}

int lw_append(lower_ctx_t *c, bir_inst_t *in)
{
    bir_block_t *b = bir_main_block(c->m);
    if (in == &b->insts[b->ninsts])   /* built in its slot: nothing else points at its parts */
        bir_inst_share(c->m, in);
    return bir_block_append(b, in, c->err) < 0 ? -1 : 0;
}

bool lw_has(const tir_ap_t *a) { return a->tensor >= 0; }

typedef struct {
    int64_t step, count;
} dim_t;

/* Free dims of a tile AP, innermost first, count-1 dims dropped and
 * contiguous neighbours merged when they agree on `axes` membership (bit b =
 * free dim b counted from the innermost).  *mapped gets `axes` renumbered to
 * the merged dims. */
static int free_dims(const tir_ap_t *a, int first, unsigned axes, dim_t *out, unsigned *mapped)
{
    int n = 0;
    bool red[TIR_MAX_DIMS] = {false};
    for (int d = a->ndim - 1; d >= first; d--) {
        bool r = (axes >> (a->ndim - 1 - d)) & 1u;
        if (a->count[d] == 1)
            continue;
        if (n > 0 && red[n - 1] == r && a->step[d] == out[n - 1].step * out[n - 1].count &&
            out[n - 1].count * a->count[d] <= 65535) {
            out[n - 1].count *= a->count[d];
            continue;
        }
        out[n].step = a->step[d];
        out[n].count = a->count[d];
        red[n] = r;
        n++;
    }
    *mapped = 0;
    for (int i = 0; i < n; i++)
        if (red[i])
            *mapped |= 1u << i;
    return n;
}

int lw_count_free_dims(const tir_ap_t *a, unsigned axes)
{
    dim_t f[TIR_MAX_DIMS];
    unsigned mapped;
    return free_dims(a, a->ndim >= 1 ? 1 : 0, axes, f, &mapped);
}

/* The memo key's hash: the AP's offset, first count, rank, the reduce
 * axes and the tile's address (the fields that tell apart the operands of
 * nearby ops). */
static unsigned tap_memo_slot(const tir_ap_t *a, unsigned axes, uint64_t addr)
{
    uint64_t h = (uint64_t)a->offset ^ addr << 1 ^ (uint64_t)a->count[0] << 13 ^
                 (uint64_t)a->ndim << 29 ^ (uint64_t)axes << 33;
    h *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(((h >> 32) * LW_TAP_MEMO) >> 32);   /* the product's top bits */
}

static int record_access(lower_ctx_t *c, bir_inst_t *in, bir_access_t acc, bool write,
                         const char *role)
{
    acc.write = write;
    if (!bir_inst_access(c->m, in, &acc))
        return in->oom ? lw_err(c, "out of memory") : lw_err(c, "%s: too many operands", role);
    return 0;
}

static int tap_full(lower_ctx_t *c, const tir_ap_t *a, const char *role, unsigned axes,
                    isa_tap_t *out, unsigned *mapped, bir_access_t *acc);

int lw_tap_axes(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write, const char *role,
                unsigned axes, isa_tap_t *out, unsigned *mapped)
{
    tir_tensor_t vt;
    /* a dtype view is the tile in its dtype: the memo's row and dtype are the view's */
    const tir_tensor_t *t = tir_ap_tensor(lw_tensor(c, a), a, &vt);
    lw_memo_t *mm = &c->memo;
    if (!t || a->tensor >= c->m->nmlocs) {   /* not a memo key: the full path's error */
        bir_access_t acc;
        if (tap_full(c, a, role, axes, out, mapped, &acc))
            return -1;
        return record_access(c, in, acc, write, role);
    }
    int64_t row = tir_tile_row(t);
    uint64_t addr = c->m->mlocs[a->tensor].addr;
    unsigned slot = tap_memo_slot(a, axes, addr);
    lw_tap_memo_t *e = &mm->tap[slot];
    if (!(mm->tap_valid >> slot & 1u) || e->axes != axes || e->addr != addr || e->row != row ||
        e->kind != t->kind || e->dtype != t->dtype || !lw_same_pattern(&e->ap, a)) {
        bir_access_t acc;
        if (tap_full(c, a, role, axes, out, mapped, &acc))
            return -1;
        *e = (lw_tap_memo_t){.axes = axes, .mapped = *mapped, .kind = t->kind,
                             .dtype = t->dtype, .row = row, .addr = addr, .ap = *a,
                             .tap = *out, .acc = acc};
        mm->tap_valid |= 1u << slot;
    } else {
        *out = e->tap;
        *mapped = e->mapped;
    }
    return record_access(c, in, e->acc, write, role);
}

void lw_tap_memo_clear(lower_ctx_t *c)
{
    c->memo.tap_valid = c->memo.dma_valid = 0;   /* the entries: not read until written */
    c->dma_use = (lw_dma_use_t){0};
}

/* The TAP of a (errors with their messages) and the access it makes
 * (write = 0). */
static int tap_full(lower_ctx_t *c, const tir_ap_t *a, const char *role, unsigned axes,
                    isa_tap_t *out, unsigned *mapped, bir_access_t *acc)
{
    tir_tensor_t vt;
    /* a dtype view (tir_ap_t.view): the tile as [partitions, row bytes /
     * size] of that dtype, the pattern counting its elements */
    const tir_tensor_t *t = tir_ap_tensor(lw_tensor(c, a), a, &vt);
    if (!t)
        return lw_err(c, "%s: missing operand", role);
    if (t->kind != TIR_T_SBUF && t->kind != TIR_T_PSUM)
        return lw_err(c, "%s: '%s' must be an SBUF or PSUM tile (compute engines cannot read HBM)",
                      role, t->name);
    const bir_mloc_t *ml = &c->m->mlocs[a->tensor];
    int64_t row = tir_tile_row(t);
    unsigned dsz = isa_dtype_size(t->dtype);
    if (a->offset < 0 || row <= 0)
        return lw_err(c, "%s: negative offset %lld into '%s'", role, (long long)a->offset, t->name);
    int64_t start = a->offset / row, foff = a->offset % row;
    int64_t nparts = 1;
    int first = 0;
    if (a->ndim >= 1) {
        nparts = a->count[0];
        first = 1;
        if (nparts > 1 && a->step[0] != row)
            return lw_err(c, "%s: dim 0 of an access to tile '%s' must step over partitions "
                             "(step %lld, row size %lld)",
                          role, t->name, (long long)a->step[0], (long long)row);
    }
    if (nparts < 1 || start + nparts > (int64_t)c->t->partitions)
        return lw_err(c, "%s: partitions %lld..%lld of '%s' exceed the %u partitions", role,
                      (long long)start, (long long)(start + nparts - 1), t->name,
                      c->t->partitions);
    /* the start-partition rule of the engines (ARCH2, as the simulator's
     * TAP check): more than 64 partitions start at 0, 33-64 at 0 or 64, up
     * to 32 at a quadrant (0/32/64/96).  The notes name no legalisation of
     * other starts, so they are refused here, naming the op */
    if (start % (int64_t)isa_start_align((uint64_t)nparts))
        return lw_err(c, "%s: access to '%s' starts at partition %lld, which is not allowed for "
                         "%lld partitions (the engines start more than 64 partitions at 0, "
                         "33-64 at 0 or 64, up to 32 at 0, 32, 64 or 96)",
                      role, t->name, (long long)start, (long long)nparts);
    dim_t f[TIR_MAX_DIMS];
    int nf = free_dims(a, first, axes, f, mapped);
    if (nf > ISA_MAX_FREE_DIMS)
        return lw_err(c, "%s: %d free dims after merging contiguous dims; the ISA has %d",
                      role, nf, ISA_MAX_FREE_DIMS);
    memset(out, 0, sizeof *out);
    int64_t lo = foff, hi = foff;
    for (int i = 0; i < nf; i++) {
        if (f[i].step < -32768 || f[i].step > 32767)
            return lw_err(c, "%s: free step %lld does not fit the 16-bit step field", role,
                          (long long)f[i].step);
        if (f[i].count > 65535)
            return lw_err(c, "%s: free count %lld does not fit the 16-bit count field", role,
                          (long long)f[i].count);
        out->step[i] = (int32_t)f[i].step;
        out->count[i] = (uint32_t)f[i].count;
        int64_t span = f[i].step * (f[i].count - 1);
        if (span < 0)
            lo += span;
        else
            hi += span;
    }
    if (lo < 0 || hi >= row)
        return lw_err(c, "%s: access runs outside tile '%s' (elements %lld..%lld of a %lld-element row)",
                      role, t->name, (long long)lo, (long long)hi, (long long)row);
    uint64_t addr = ml->addr + (uint64_t)foff * dsz;
    if (addr >= (1u << 24))
        return lw_err(c, "%s: address %llu does not fit the 24-bit address field", role,
                      (unsigned long long)addr);
    out->addr = (uint32_t)addr;
    out->dtype = t->dtype;
    out->space = t->kind == TIR_T_SBUF ? ISA_SPACE_SBUF : ISA_SPACE_PSUM;
    out->start = (uint32_t)start;
    out->nparts = (uint32_t)nparts;
    out->ndims = (uint32_t)nf;
    *acc = (bir_access_t){.space = out->space, .p0 = (unsigned)start,
                          .p1 = (unsigned)(start + nparts), .lo = ml->addr + (uint64_t)lo * dsz,
                          .hi = ml->addr + (uint64_t)(hi + 1) * dsz, .write = 0};
    return 0;
}

int lw_ptr(lower_ctx_t *c, bir_inst_t *in, const tir_ap_t *a, bool write, const char *role,
           isa_ptr_t *out)
{
    isa_tap_t tap;
    if (lw_tap(c, in, a, write, role, &tap))
        return -1;
    if (c->ptr_inst == in && c->nptr < LW_MAX_PTRS && in->nacc > 0) {   /* lw_emit checks it */
        c->ptr[c->nptr].acc = in->nacc - 1;
        c->ptr[c->nptr++].role = role;
    }
    if (isa_tap_free_elems(&tap) != 1 && tap.ndims > 0) {
        uint64_t n = 1;
        for (unsigned i = 0; i < tap.ndims; i++)
            n *= tap.count[i];
        if (n != 1)
            return lw_err(c, "%s: a per-partition scalar must be a [P,1] tile access "
                             "(%llu elements per partition)", role, (unsigned long long)n);
    }
    out->addr = tap.addr;
    out->dtype = tap.dtype;
    out->space = tap.space;
    return 0;
}

int lw_same_partitions(lower_ctx_t *c, const char *what, const isa_tap_t *src,
                       const isa_tap_t *dst)
{
    /* only the count must match: a different start is the engines'
     * cross-half / cross-quadrant movement (ARCH2; each start already obeys
     * the start-partition rule, lw_tap) */
    if (src->nparts != dst->nparts)
        return lw_err(c, "%s src start_partition(%u) or dst start_partition(%u) mismatch "
                         "(%u vs %u partitions)",
                      what, src->start, dst->start, src->nparts, dst->nparts);
    return 0;
}

uint32_t lw_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int lw_scalar(lower_ctx_t *c, bir_inst_t *in, const tir_scalar_t *s, const char *role,
              uint32_t *bits, uint32_t *is_ptr)
{
    if (!s->is_ap) {
        *bits = lw_f32_bits((float)s->imm);
        *is_ptr = 0;
        return 0;
    }
    isa_ptr_t p = {0, 0, 0};
    if (lw_ptr(c, in, s->ap, false, role, &p))
        return -1;
    /* a pointer scalar packs like a PTR operand: addr 24b | dtype 4b | space 2b */
    *bits = (p.addr & 0xFFFFFFu) | (p.dtype & 0xFu) << 24 | (p.space & 3u) << 28;
    *is_ptr = 1;
    return 0;
}

int lw_scalar_for(lower_ctx_t *c, bir_inst_t *in, const tir_scalar_t *s, const char *role,
                  int alu, uint32_t *bits, uint32_t *is_ptr)
{
    if (s->is_ap || !isa_alu_is_bitwise((unsigned)alu))
        return lw_scalar(c, in, s, role, bits, is_ptr);
    if (s->imm != floor(s->imm) || s->imm < -2147483648.0 || s->imm > 4294967295.0)
        return lw_err(c, "%s: %g is not a 32-bit integer (needed by %s)", role, s->imm,
                      isa_enum_name(ISA_FT_ALU, (unsigned)alu));
    *bits = s->imm < 0 ? (uint32_t)(int32_t)s->imm : (uint32_t)s->imm;
    *is_ptr = 0;
    return 0;
}

/* Round-to-nearest-even encoding of v into a small float format (exponent
 * bits eb, mantissa bits mb).  fn: no infinities, overflow -> NaN (e4m3fn). */
static uint32_t minifloat_bits(double v, int eb, int mb, bool fn)
{
    uint32_t sign = signbit(v) ? 1u : 0u;
    int bias = (1 << (eb - 1)) - 1;
    uint32_t nan = fn ? ((1u << (eb + mb)) - 1) : (((1u << eb) - 1) << mb) | (1u << (mb - 1));
    if (isnan(v))
        return nan;
    double a = fabs(v);
    int emax = fn ? (1 << eb) - 1 - bias : (1 << eb) - 2 - bias;
    double maxv = fn ? ldexp(1.0 + (double)((1 << mb) - 2) / (1 << mb), emax)
                     : ldexp(2.0 - ldexp(1.0, -mb), emax);
    uint32_t inf = fn ? nan : ((1u << eb) - 1) << mb;
    uint32_t mag;
    if (isinf(a)) {
        mag = inf;
    } else {
        int e;
        frexp(a, &e);              /* a = f * 2^e, f in [0.5,1) */
        int exp = e - 1;           /* a = 1.x * 2^exp */
        if (exp < 1 - bias)
            exp = 1 - bias;        /* subnormal range */
        double q = nearbyint(ldexp(a, mb - exp));   /* mantissa units, RNE (default mode) */
        double r = ldexp(q, exp - mb);
        if (r > maxv) {
            mag = inf;
        } else {
            uint64_t qi = (uint64_t)q;
            if (qi >= (2ull << mb)) { /* rounding carried into the next binade */
                qi >>= 1;
                exp++;
            }
            if (qi < (1ull << mb))
                mag = (uint32_t)qi;  /* subnormal */
            else
                mag = (uint32_t)(exp + bias) << mb | (uint32_t)(qi - (1ull << mb));
        }
    }
    return sign << (eb + mb) | mag;
}

static uint32_t int_bits(double v, int bits, bool is_signed)
{
    if (isnan(v))
        return 0;
    double r = nearbyint(v);
    double lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0;
    double hi = is_signed ? ldexp(1.0, bits - 1) - 1 : ldexp(1.0, bits) - 1;
    if (r < lo)
        r = lo;
    if (r > hi)
        r = hi;
    int64_t i = (int64_t)r;
    return (uint32_t)((uint64_t)i & (bits == 32 ? 0xFFFFFFFFull : ((1ull << bits) - 1)));
}

double lw_clip_scalar(double v, unsigned dt)
{
    double lo, hi;
    switch (dt) {
    case ISA_DT_FP32: hi = 3.4028234663852886e38; break;
    case ISA_DT_BF16: hi = 3.3895313892515355e38; break;
    case ISA_DT_FP16: hi = 65504.0; break;
    case ISA_DT_FP8E4M3: hi = 448.0; break;
    case ISA_DT_FP8E4M3IEEE: hi = 240.0; break;
    case ISA_DT_FP8E5M2: hi = 57344.0; break;
    case ISA_DT_INT8: lo = -128.0, hi = 127.0; goto clamp;
    case ISA_DT_INT16: lo = -32768.0, hi = 32767.0; goto clamp;
    case ISA_DT_INT32: lo = -2147483648.0, hi = 2147483647.0; goto clamp;
    case ISA_DT_UINT8: lo = 0.0, hi = 255.0; goto clamp;
    case ISA_DT_UINT16: lo = 0.0, hi = 65535.0; goto clamp;
    case ISA_DT_UINT32: lo = 0.0, hi = 4294967295.0; goto clamp;
    default: return v;
    }
    /* a float dtype with infinities keeps them (NKI's imm=-inf replaces
     * with -inf); only finite values past its range are clamped.  fp8e4m3
     * has no infinity, so there an infinity clamps to +-448 like any other
     * out-of-range value (docs/semantics.md) */
    if (isinf(v) && dt != ISA_DT_FP8E4M3)
        return v;
    lo = -hi;
clamp:
    if (v != v)
        return v;
    return v < lo ? lo : v > hi ? hi : v;
}

uint32_t lw_fill_bits(double v, unsigned dt)
{
    switch (dt) {
    case ISA_DT_FP32: return lw_f32_bits((float)v);
    case ISA_DT_BF16: {
        uint32_t u = lw_f32_bits((float)v);
        if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu))
            return (u >> 16) | 0x40u;                   /* quiet NaN */
        return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;  /* RNE */
    }
    case ISA_DT_FP16: return minifloat_bits(v, 5, 10, false);
    case ISA_DT_FP8E4M3: return minifloat_bits(v, 4, 3, true);
    case ISA_DT_FP8E4M3IEEE: return minifloat_bits(v, 4, 3, false);
    case ISA_DT_FP8E5M2: return minifloat_bits(v, 5, 2, false);
    case ISA_DT_INT8: return int_bits(v, 8, true);
    case ISA_DT_INT16: return int_bits(v, 16, true);
    case ISA_DT_INT32: return int_bits(v, 32, true);
    case ISA_DT_UINT8: return int_bits(v, 8, false);
    case ISA_DT_UINT16: return int_bits(v, 16, false);
    case ISA_DT_UINT32: return int_bits(v, 32, false);
    default: return 0;
    }
}
