/* memo.c - instruction classes: what the run may remember about a compute
 * instruction it has already executed once.
 *
 * At load, the compute instructions of each engine stream are grouped into
 * classes of identical instructions: same opcode, same format fields (every
 * byte of the format struct), same folded PredExt.  Synchronisation fields
 * and positions are not part of the key, so the unrolled copies of one
 * loop body, or the iterations of a rolled loop, share a class.  What the
 * scheduler keeps per class (sim.c:exec_compute):
 *
 * - the cost: a cost function sees only the target, the engine and the
 *   decoded instruction (sim_cost_fn), so one call per class gives every
 *   member's cycles;
 * - with --timing-only, that one member passed the operand checks, for the
 *   opcodes whose timing-only execution is nothing but those checks
 *   (sim_memo_pure): later members skip the execution.  The first member
 *   of a class always runs in full, so errors (which stop the run) are the
 *   same, at the same instruction;
 * - from its second member on, the operands a member resolved (ops.h
 *   sim_plan_t, sim.c:class_plan): a later member copies operand k when
 *   its pattern, name and access are the stored one's (tap.c).
 *
 * The same pass over the stream copies what the scheduler's hot loop reads
 * of every instruction into its 16-byte step record (sim_step_of).
 *
 * docs/performance-log.md ("Operand plans per instruction class"). */
#include <stdlib.h>
#include <string.h>

#include "bytehash.h"
#include "hugepage.h"
#include "sim_int.h"

static size_t body_bytes(const isa_decoded_t *d)
{
    return isa_formats[isa_ops[d->inst.op].format].struct_size;
}


static uint64_t key_hash(const isa_decoded_t *d)
{
    uint64_t h = tpb_hash_word(0x9e3779b97f4a7c15ull, (uint64_t)d->inst.op << 16 | (uint64_t)d->inst.l2 << 8 |
                                                 d->has_pred);
    h = tpb_hash_bytes(h, &d->inst.f, body_bytes(d));
    if (d->has_pred)
        h = tpb_hash_bytes(h, &d->pred, sizeof d->pred);
    return h;
}

static bool key_eq(const isa_decoded_t *a, const isa_decoded_t *b)
{
    return a->inst.op == b->inst.op && a->inst.l2 == b->inst.l2 && a->has_pred == b->has_pred &&
           memcmp(&a->inst.f, &b->inst.f, body_bytes(a)) == 0 &&
           (!a->has_pred || memcmp(&a->pred, &b->pred, sizeof a->pred) == 0);
}

/* One zeroed block holds the step records, the classes and the hash table
 * that finds them (kept with them, unused after the build): from
 * TPB_ARRAY_MAP_MIN on it is a mapping in huge pages, one page fault per
 * 2 MiB instead of one per 4 KiB of three separate blocks
 * (docs/performance-log.md, "Page faults of `tpb sim`"). */
int sim_memo_build(sim_engine_t *e, const sim_opimpl_t *const *impl, tpb_err_t *err)
{
    size_t n = e->stream.count, m = n ? n : 1;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t bytes = m * sizeof *e->step + m * sizeof *e->cls + cap * sizeof(uint32_t);
    /* the step records are made in the same pass as the classes: the
     * decoded stream is read once (it is much larger than the caches) */
    e->step = tpb_array_zalloc(bytes);
    if (!e->step)
        return tpb_errf(err, "out of memory (%zu instruction records)", n);
    e->step_bytes = bytes;
    uint32_t *cls = (uint32_t *)(e->step + m);
    uint32_t *slot = cls + m;                         /* representative index + 1 */
    if (n >= UINT32_MAX) {                            /* no memo: every instruction runs */
        for (size_t i = 0; i < n; i++)
            e->step[i] = sim_step_of(&e->stream.insts[i]);
        return 0;
    }
    uint32_t ncls = 0;
    for (size_t i = 0; i < n; i++) {
        const isa_decoded_t *d = &e->stream.insts[i];
        e->step[i] = sim_step_of(d);
        cls[i] = SIM_NO_CLASS;
        if (d->inst.op >= ISA_OP_COUNT || !impl[d->inst.op])
            continue;
        size_t j = (size_t)key_hash(d) & (cap - 1);
        while (slot[j] && !key_eq(&e->stream.insts[slot[j] - 1], d))
            j = (j + 1) & (cap - 1);
        if (!slot[j]) {
            slot[j] = (uint32_t)i + 1;
            cls[i] = ncls++;
        } else
            cls[i] = cls[slot[j] - 1];
    }
    sim_memo_t *mm = calloc(ncls ? ncls : 1, sizeof *mm);
    if (!mm)
        return 0;
    e->cls = cls;
    e->memo = mm;
    e->nclasses = ncls;
    return 0;
}

void sim_memo_free(sim_engine_t *e)
{
    for (uint32_t k = 0; e->memo && k < e->nclasses; k++) {
        free(e->memo[k].plan);
        free(e->memo[k].fp);
    }
    free(e->memo);   /* cls is in step's block (sim_memo_build) */
    e->cls = NULL;
    e->memo = NULL;
    e->nclasses = 0;
}

/* Opcodes whose --timing-only execution only checks the instruction's
 * operands against the memory sizes and engine rules: it reads no memory,
 * register, accumulator, PE or generator state and changes none (their
 * arithmetic, accumulator and PRNG updates are all behind !timing_only;
 * see dve.c, act.c, pool.c).  TensorScalarGEP's s0 is moved by a
 * register, so its check is not a function of the instruction alone. */
bool sim_memo_pure(const isa_decoded_t *d)
{
    switch (d->inst.op) {
    case ISA_OP_TENSOR_SCALAR:
    case ISA_OP_TENSOR_SCALAR_PTR:
        return !d->inst.f.TS.s0_reg_en;
    case ISA_OP_TENSOR_COPY:
    case ISA_OP_TENSOR_TENSOR:
    case ISA_OP_TENSOR_TENSOR_BITVEC:
    case ISA_OP_SCALAR_TENSOR_TENSOR:
    case ISA_OP_TENSOR_REDUCE:
    case ISA_OP_TENSOR_PARTITION_REDUCE:
    case ISA_OP_ACTIVATION:
    case ISA_OP_ACTIVATE2:
    case ISA_OP_ACTIVATION_ACC:
        return true;
    default:
        return false;
    }
}

sim_step_t sim_step_of(const isa_decoded_t *d)
{
    const isa_sync_t *h = &d->inst.sync;
    unsigned f = 0;
    if (h->upd_en && (h->upd_at_read || !sim_dma_upd_at_transfer_end(&d->inst)))
        f = (h->upd_at_read ? SIM_STEP_UPD_READ : SIM_STEP_UPD_END) |
            (h->upd_remote ? SIM_STEP_UPD_REMOTE : 0);
    f |= (h->wait_en ? SIM_STEP_WAIT : 0) |
         (d->inst.op == ISA_OP_CORE_BARRIER ? SIM_STEP_BARRIER : 0);
    return (sim_step_t){
        .pc = d->pc, .wait_val = h->wait_val, .upd_val = (uint16_t)h->upd_val,
        .flags = (uint8_t)f,
        .cls = (uint8_t)(d->inst.op < ISA_OP_COUNT ? isa_ops[d->inst.op].cls : 0),
        .wait_sem = (uint8_t)h->wait_sem, .wait_reg = (uint8_t)h->wait_reg,
        .upd_sem = (uint8_t)h->upd_sem, .upd_op = (uint8_t)h->upd_op,
    };
}
