/* sync.c - semaphores (the sync header of every instruction), core
 * barriers and the description of blocked engines for deadlock reports.
 * Rules: docs/timing.md "Synchronisation". */
#include "sim_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_sync_schedule_remote(sim_t *s, sim_core_t *c, const isa_sync_t *h, uint64_t t,
                             sim_ref_t writer, const sim_engine_t *e, size_t idx, tpb_err_t *err)
{
    if (h->upd_core >= s->ncores) {
        if (e)
            return sim_inst_errf(err, c, e, idx,
                                 "remote semaphore update names core %u (upd_core) but the "
                                 "artifact has %u core(s)",
                                 h->upd_core, s->ncores);
        return tpb_errf(err, "core %u: remote semaphore update names core %u but the artifact "
                        "has %u core(s)", c->index, h->upd_core, s->ncores);
    }
    sim_event_t ev = sim_sync_event(h, h->upd_core, t, writer);
    return sim_heap_push(s, &ev, err);
}

/* The engines blocked on `sem` whose wait now passes become ready, in slot
 * order.  Only the engines in ENG_WAIT_SEM are looked at (c->sem_waiters,
 * kept by sim.c pass_wait): usually none, and the update costs nothing. */
static void wake_waiters(sim_t *s, sim_core_t *c, unsigned sem)
{
    uint32_t wake_at = UINT32_MAX; /* of the engines still blocked on sem */
    for (unsigned m = c->sem_waiters; m; m &= m - 1) {
        unsigned k = (unsigned)__builtin_ctz(m);
        sim_engine_t *e = &c->eng[k];
        const isa_sync_t *h = &e->stream.insts[e->idx].inst.sync;
        if (h->wait_sem != sem)
            continue;
        if (!sim_sync_wait_ok(c, e, h)) {
            uint32_t need = sim_sync_wait_value(e, h);
            wake_at = need < wake_at ? need : wake_at;
            continue;
        }
        c->sem_waiters &= (uint8_t)~(1u << k);
        e->state = ENG_READY;
        sim_schedule_engine(s, e, s->now);
    }
    c->sem[sem].wake_at = wake_at;
}

static const char *writer_text(const sim_t *s, sim_ref_t r, char *buf, size_t len)
{
    if (r.core < 0)
        snprintf(buf, len, "nobody");
    else if (r.tid >= SIM_DMA_LANE_TID)
        snprintf(buf, len, "core %d DMA queue %u (trigger pc %u)", r.core,
                 (unsigned)(r.tid - SIM_DMA_LANE_TID) / 8, r.pc);
    else
        snprintf(buf, len, "core %d %s pc %u", r.core,
                 isa_engine_name(isa_tpb_engines[r.tid - 1]), r.pc);
    (void)s;
    return buf;
}

int sim_sync_apply_slow(sim_t *s, const sim_event_t *ev, tpb_err_t *err)
{
    sim_core_t *c = &s->cores[ev->core];
    sim_sem_t *S = &c->sem[ev->unit];
    unsigned op = ev->val >> 24;
    uint64_t v = S->value, imm = ev->val & 0xFFFFu;
    switch (op) {
    case ISA_SEMOP_SEM_INC: v += 1; break;
    case ISA_SEMOP_SEM_DEC: v = v - 1; break;
    case ISA_SEMOP_SEM_ADD_IMM: v += imm; break;
    case ISA_SEMOP_SEM_SUB_IMM: v = v - imm; break;
    case ISA_SEMOP_SEM_WR_IMM: v = imm; break;
    case ISA_SEMOP_EVT_SET: v = 1; break;
    case ISA_SEMOP_EVT_CLR: v = 0; break;
    default: return tpb_errf(err, "core %u S%u: unknown semaphore op %u", c->index, ev->unit, op);
    }
    if ((op == ISA_SEMOP_SEM_DEC || op == ISA_SEMOP_SEM_SUB_IMM) &&
        ((op == ISA_SEMOP_SEM_DEC && S->value == 0) || (op == ISA_SEMOP_SEM_SUB_IMM && imm > S->value))) {
        char w[128];
        return tpb_errf(err,
                        "core %u semaphore S%u%s%s underflow: %s by %llu from %u (update by %s)",
                        c->index, ev->unit, S->name ? " " : "", S->name ? S->name : "",
                        isa_enum_name(ISA_FT_SEMOP, op), (unsigned long long)(op == ISA_SEMOP_SEM_DEC ? 1 : imm),
                        S->value, writer_text(s, ev->ref, w, sizeof w));
    }
    if (v > UINT32_MAX) {
        char w[128];
        return tpb_errf(err, "core %u semaphore S%u overflow past 2^32-1 (update by %s)", c->index,
                        ev->unit, writer_text(s, ev->ref, w, sizeof w));
    }
    S->value = (uint32_t)v;
    S->last_writer = ev->ref;
    if (s->opt.trace)
        sim_trace_sem(s, c->index, ev->unit, S->value);
    if (c->sem_waiters)
        wake_waiters(s, c, ev->unit);
    else
        S->wake_at = UINT32_MAX;
    return 0;
}

/* ---- core barriers ---- */

static sim_barrier_t *find_barrier(sim_t *s, uint32_t mask, uint32_t seq, bool create)
{
    for (unsigned i = 0; i < s->nbarriers; i++)
        if (s->barriers[i].mask == mask && s->barriers[i].seq == seq)
            return &s->barriers[i];
    if (!create)
        return NULL;
    for (unsigned i = 0; i < s->nbarriers; i++)   /* reuse a released one */
        if (!s->barriers[i].arrived) {
            sim_barrier_t *b = &s->barriers[i];
            memset(b, 0, sizeof *b);
            b->mask = mask;
            b->seq = seq;
            return b;
        }
    if (s->nbarriers == s->cbarriers) {
        unsigned nc = s->cbarriers ? s->cbarriers * 2 : 8;
        sim_barrier_t *b = realloc(s->barriers, nc * sizeof *b);
        if (!b)
            return NULL;
        s->barriers = b;
        s->cbarriers = nc;
    }
    sim_barrier_t *b = &s->barriers[s->nbarriers++];
    memset(b, 0, sizeof *b);
    b->mask = mask;
    b->seq = seq;
    return b;
}

static void release_barrier(sim_t *s, sim_barrier_t *b, uint64_t t)
{
    for (unsigned ci = 0; ci < s->ncores; ci++) {
        if (!(b->mask & (1u << ci)))
            continue;
        sim_core_t *c = &s->cores[ci];
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            sim_engine_t *e = &c->eng[k];
            if (e->state != ENG_WAIT_BARRIER || e->barrier_seq != b->seq ||
                e->stream.insts[e->idx].inst.f.CB.cores != b->mask)
                continue;
            e->state = ENG_BARRIER_RELEASED;
            e->barrier_last = b->last;
            sim_schedule_engine(s, e, t);
        }
    }
    b->arrived = 0;
}

/* The cores in `cores` rendezvous by counting (hardware-facts §3: each core
 * signals a remote semaphore on its peers and waits on its own): a core's
 * k-th CoreBarrier with a given mask meets every other participant's k-th
 * with that mask.  The id labels the instruction (unique after the link's
 * renumber) and is not compared. */
int sim_barrier_arrive(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                       uint64_t t, tpb_err_t *err)
{
    uint32_t id = d->inst.f.CB.id, mask = d->inst.f.CB.cores;
    uint32_t me = 1u << c->index;
    if (mask == 0)
        return sim_inst_errf(err, c, e, e->idx, "CoreBarrier %u: cores mask is empty", id);
    if (mask >> s->ncores)
        return sim_inst_errf(err, c, e, e->idx,
                             "CoreBarrier %u: cores mask 0x%x names a core beyond the %u "
                             "core(s) of the artifact",
                             id, mask, s->ncores);
    if (!(mask & me))
        return sim_inst_errf(err, c, e, e->idx,
                             "CoreBarrier %u: cores mask 0x%x does not include this core", id,
                             mask);
    uint32_t seq = c->barrier_seq[mask & 0xffu]++;
    sim_barrier_t *b = find_barrier(s, mask, seq, true);
    if (!b)
        return tpb_errf(err, "out of memory (barriers)");
    if (!b->arrived)
        b->id = id;
    b->arrived |= me;
    b->last_ps = t;
    b->last = (sim_ref_t){ .core = (int16_t)c->index, .tid = (uint16_t)(e->slot + 1), .pc = d->pc,
                           .start_ps = SIM_NO_TIME };
    e->barrier_seq = seq;
    if (b->arrived != b->mask)
        return 1;
    e->barrier_last = b->last;
    release_barrier(s, b, t);
    b->seq = UINT32_MAX;   /* released: free for reuse */
    return 0;
}

static void cores_text(uint32_t mask, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < 32 && off < len; i++)
        if (mask & (1u << i))
            off += (size_t)snprintf(buf + off, len - off, "%s%u", off ? "," : "", i);
    if (!off)
        snprintf(buf, len, "none");
}

void sim_describe_block(const sim_t *s, const sim_core_t *c, const sim_engine_t *e, char *buf,
                        size_t len)
{
    const isa_decoded_t *d = &e->stream.insts[e->idx];
    if (e->state == ENG_WAIT_BARRIER) {
        uint32_t id = d->inst.f.CB.id;
        const sim_barrier_t *b = NULL;
        for (unsigned i = 0; i < s->nbarriers; i++)
            if (s->barriers[i].arrived && s->barriers[i].seq == e->barrier_seq &&
                s->barriers[i].mask == d->inst.f.CB.cores)
                b = &s->barriers[i];
        char have[64], miss[64];
        cores_text(b ? b->arrived : 0, have, sizeof have);
        cores_text(b ? b->mask & ~b->arrived : 0, miss, sizeof miss);
        snprintf(buf, len, "waits at CoreBarrier %u (cores 0x%x): arrived core(s) %s; not "
                 "arrived: %s", id, d->inst.f.CB.cores, have, miss);
        return;
    }
    const isa_sync_t *h = &d->inst.sync;
    const sim_sem_t *S = &c->sem[h->wait_sem];
    char w[128];
    snprintf(buf, len, "waits for S%u%s%s >= %u (value %u, last updated by %s)", h->wait_sem,
             S->name ? " " : "", S->name ? S->name : "", sim_sync_wait_value(e, h), S->value,
             writer_text(s, S->last_writer, w, sizeof w));
}
