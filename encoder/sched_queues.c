/* sched_queues.c - engines and DMA queues of the instructions
 * (docs/compiler.md "Engines and queues"); the synchronisation that follows
 * is in schedule.c. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include "sched_engine.h"
#include "sched_name.h"

int sched_engine_sem(int engine)
{
    for (int i = 0; i < 5; i++)
        if ((int)isa_tpb_engines[i] == engine)
            return i;
    return -1;
}

static int pick_engine(const bir_inst_t *in)
{
    static const int pref_vector[] = {ISA_ENG_DVE, ISA_ENG_POOL, ISA_ENG_ACT};
    static const int pref_pool[] = {ISA_ENG_POOL, ISA_ENG_DVE};
    static const int pref_act[] = {ISA_ENG_ACT};
    static const int pref_pe[] = {ISA_ENG_PE};
    static const int pref_any[] = {ISA_ENG_SP, ISA_ENG_POOL, ISA_ENG_ACT, ISA_ENG_DVE, ISA_ENG_PE};
    const int *pref;
    int n;
    switch (isa_ops[in->isa.op].cls) {
    case ISA_CLASS_MATMUL: pref = pref_pe, n = 1; break;
    case ISA_CLASS_ACT: pref = pref_act, n = 1; break;
    case ISA_CLASS_POOL: pref = pref_pool, n = 2; break;
    case ISA_CLASS_VECTOR: pref = pref_vector, n = 3; break;
    default: pref = pref_any, n = 5; break;
    }
    for (int i = 0; i < n; i++)
        if (in->engines & (1u << pref[i]))
            return pref[i];
    return ISA_ENG_UNASSIGNED;
}

/* Engine of instruction in (kept when pinned), `pick` when it names none
 * (pick_engine's class default, or the workload estimate's choice), and
 * its check (inline: a call per instruction cost as much as the work). */
static inline int assign_engine(bir_inst_t *in, int i, int pick, tpb_err_t *err)
{
    if (in->dma_group >= 0) {
        /* descriptors and trigger issue from one engine: SP unless pinned */
        if (in->engine == ISA_ENG_UNASSIGNED)
            in->engine = ISA_ENG_SP;
    } else if (in->engine == ISA_ENG_UNASSIGNED) {
        in->engine = (int8_t)(pick >= 0 ? pick : pick_engine(in));
    }
    if (in->engine == ISA_ENG_UNASSIGNED || !(in->engines & (1u << in->engine)) ||
        !(isa_ops[in->isa.op].engines & (1u << in->engine)))
        return tpb_errf(err, "instruction %d '%s' (%s, %s): %s cannot run on %s", i, in->name,
                        in->src ? in->src : "", isa_ops[in->isa.op].mnemonic, isa_ops[in->isa.op].mnemonic,
                        in->engine == ISA_ENG_UNASSIGNED
                            ? "any engine"
                            : isa_engine_name((isa_engine_t)in->engine));
    return 0;
}

/* assign_engine with the workload estimate on (se->on): an instruction
 * that names no engine and has a choice of engines computing the same
 * values goes where the estimate says it finishes first
 * (sched_engine.c); every instruction then enters the estimate. */
static int assign_engine_est(seng_t *se, bir_block_t *b, int i, tpb_err_t *err)
{
    bir_inst_t *in = &b->insts[i];
    seng_enter(se, b, i);
    int pick = -1;
    if (in->engine == ISA_ENG_UNASSIGNED && in->dma_group < 0) {
        unsigned cand = seng_choices(se->t, in);
        if (cand)
            pick = seng_pick(se, b, i, cand, pick_engine(in));
    }
    if (assign_engine(in, i, pick, err))
        return -1;
    seng_note(se, b, i);
    return 0;
}

static inline int assign_one(seng_t *se, bir_block_t *b, int i, tpb_err_t *err)
{
    return se->on ? assign_engine_est(se, b, i, err) : assign_engine(&b->insts[i], i, -1, err);
}

/* Engines of instructions from..n-1 of b. */
static int assign_engines_from(seng_t *se, bir_block_t *b, int from, tpb_err_t *err)
{
    for (int i = from; i < b->ninsts; i++)
        if (assign_one(se, b, i, err))
            return -1;
    return 0;
}

int sched_assign_engines(bir_module_t *m, const tpb_target_t *t, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(m);
    seng_t se;
    if (seng_init(&se, t, b, NULL, 0, 0))
        return tpb_errf(err, "out of memory assigning engines");
    int rc = assign_engines_from(&se, b, 0, err);
    seng_free(&se);
    return rc;
}

/* Queue spreading (docs/compiler.md): SP, the DMA issuer unless an op
 * pins another engine, spreads its transfers round-robin in program order
 * over one queue per DMA ring (dma_engines = 16: qSyncIO0..qSyncIO15, DMA
 * overview: 16 queues per engine, a transfer uses one queue id on all 16
 * engines); another issuing engine alternates between two queues. */
static void queue_name(int engine, int k, char *out, size_t len)
{
    const char *base;
    switch (engine) {
    case ISA_ENG_SP: base = "qSyncIO"; break;
    case ISA_ENG_ACT: base = "qActIO"; break;
    case ISA_ENG_POOL: base = "qGpSimdIO"; break;
    case ISA_ENG_DVE: base = "qVectorIO"; break;
    default: base = "qPEIO"; break;
    }
    sched_name_num(out, len, base, k);
}

#define QUEUES_PER_OTHER_ENGINE 2
#define SP_RINGS_MAX 16

static unsigned queues_for(const tpb_target_t *t, int engine)
{
    if (engine != ISA_ENG_SP)
        return QUEUES_PER_OTHER_ENGINE;
    unsigned n = t->dma_engines < SP_RINGS_MAX ? t->dma_engines : SP_RINGS_MAX;
    return n ? n : 1;
}

/* The queue called name (made when new, issued by engine). */
static int named_queue(bir_module_t *m, const tpb_target_t *t, int engine, const char *name,
                       tpb_err_t *err)
{
    for (int q = 0; q < m->nqueues; q++)
        if (strcmp(m->queues[q].name, name) == 0)
            return q;
    if (m->nqueues >= BIR_MAX_QUEUES || (unsigned)m->nqueues >= t->dma_queues ||
        m->nsems >= BIR_MAX_SEMS)
        return tpb_errf(err, "out of DMA queues");
    bir_queue_t *q = &m->queues[m->nqueues];
    q->id = m->nqueues;
    sched_name_cat(q->name, sizeof q->name, name, "");
    q->engine = engine;
    q->semaphore = m->nsems;
    m->sems[m->nsems].id = m->nsems;
    sched_name_cat(m->sems[m->nsems].name, sizeof m->sems[0].name, name, "");
    m->nsems++;
    return m->nqueues++;
}

static int get_queue(bir_module_t *m, const tpb_target_t *t, int engine, int k, tpb_err_t *err)
{
    char name[32];
    queue_name(engine, k, name, sizeof name);
    return named_queue(m, t, engine, name, err);
}

/* Spill transfers (bir_inst_t.spill, encoder/spill.c) are issued by SP on
 * queues of their own, named as the production compiler's:
 * qSyncSpillReload0 and qSyncSpillReload1, alternating in program order,
 * so spill traffic neither waits behind nor delays the kernel's own
 * transfers on qSyncIO*. */
#define SPILL_QUEUES 2

int sched_assign_queues(bir_module_t *m, const tpb_target_t *t, tpb_err_t *err)
{
    return sched_assign_queues_rr(m, t, NULL, 0, 0, err);
}

#define QWALK_BODIES 64
/* The queue spreading's state over one walk of the block. */
typedef struct {
    const tpb_target_t *t;
    const sched_rr_event_t *ev;
    int nev, nextev;
    int (*slots)[ISA_ENG_COUNT];
    int rr[ISA_ENG_COUNT];
    int cur_group, cur_q;
    /* get_queue's answer per (engine, k), once known: queue names do not
     * change here, so the lookup by name is done once per queue */
    int known_q[ISA_ENG_COUNT][SP_RINGS_MAX];
    int spill_rr, known_spill[SPILL_QUEUES];
    /* set_queue_field's recent answers: body `from` with queue q is body
     * `to` (the lowering's bodies are shared, so a loop's DMAs bring the
     * same few bodies to each queue); direct-mapped on the pair */
    struct qwalk_body {
        const isa_body_t *from, *to;
        uint32_t q;
    } bodies[QWALK_BODIES];
} qwalk_t;

/* The semaphores before the queues' and the walk's state; -1 when out of
 * memory (then nothing is set). */
static int qwalk_init(qwalk_t *w, bir_module_t *m, const tpb_target_t *t,
                      const sched_rr_event_t *ev, int nev, int nslots)
{
    memset(w, 0, sizeof *w);
    w->slots = nslots > 0 ? calloc((size_t)nslots, sizeof *w->slots) : NULL;
    if (nslots > 0 && !w->slots)
        return -1;
    w->t = t, w->ev = ev, w->nev = nev;
    w->cur_group = -1, w->cur_q = -1;
    memset(w->known_q, -1, sizeof w->known_q);
    memset(w->known_spill, -1, sizeof w->known_spill);
    /* engine semaphores first: ids 0..4; then the collective slots (ids
     * BIR_COLL_SEM0.., the same on every core: peers name them) */
    m->nsems = 5;
    for (int i = 0; i < 5; i++) {
        m->sems[i].id = i;
        sched_name_cat(m->sems[i].name, sizeof m->sems[i].name, isa_engine_name(isa_tpb_engines[i]), "");
    }
    for (int i = 0; i < m->coll_sems && m->nsems < BIR_MAX_SEMS; i++, m->nsems++) {
        m->sems[m->nsems].id = m->nsems;
        if (i == 0)
            sched_name_cat(m->sems[m->nsems].name, sizeof m->sems[0].name, "CollDone", "");
        else
            sched_name_num(m->sems[m->nsems].name, sizeof m->sems[0].name, "CollReady+", i);
    }
    return 0;
}

/* The rr slots saved and restored up to op `op` (loop events). */
__attribute__((noinline)) static void qwalk_events(qwalk_t *w, int op)
{
    for (; w->nextev < w->nev && w->ev[w->nextev].op <= op; w->nextev++) {
        const sched_rr_event_t *e = &w->ev[w->nextev];
        if (e->save)
            memcpy(w->slots[e->slot], w->rr, sizeof w->rr);
        else
            memcpy(w->rr, w->slots[e->slot], sizeof w->rr);
    }
}

/* The queue k of engine, looked up by name (made when new) the first
 * time; -1 on error. */
__attribute__((noinline)) static int qwalk_queue(qwalk_t *w, bir_module_t *m, int engine, int k,
                                                 tpb_err_t *err)
{
    int q = get_queue(m, w->t, engine, k, err);
    if (q >= 0)
        w->known_q[engine][k] = q;   /* k < queues_for <= SP_RINGS_MAX */
    return q;
}

/* The queue of DMA instruction in (engine assigned, dma_group >= 0: the
 * caller tests it, most instructions are not DMA), in program order.
 * Inline, the rare steps (loop events, a queue's first use) out of line:
 * a call per DMA instruction saving the registers of those steps cost
 * most of the walk (compile-live: 50 instructions per DMA). */
/* The next spill queue (SPILL_QUEUES above); -1 on error. */
__attribute__((noinline)) static int qwalk_spill(qwalk_t *w, bir_module_t *m, bir_inst_t *in,
                                                 tpb_err_t *err)
{
    int k = w->spill_rr++ % SPILL_QUEUES;
    if (w->known_spill[k] < 0) {
        char name[32];
        sched_name_num(name, sizeof name, "qSyncSpillReload", k);
        w->known_spill[k] = named_queue(m, w->t, in->engine, name, err);
    }
    return w->known_spill[k];
}

/* The body's queue operand: a body that may be shared (bir_inst_share)
 * changes as a copy, itself shared with equal ones (bir_inst_body_share;
 * the pair (body, queue) met again takes the same copy); an instruction's
 * own body is written in place. */
static int set_queue_field(qwalk_t *w, bir_module_t *m, bir_inst_t *in, uint32_t q,
                           tpb_err_t *err)
{
    isa_body_t x;
    uint32_t *field;
    if (isa_op_is_direct_dma(in->isa.op))   /* D3DESC shares DDESC's queue */
        field = &x.DDESC.queue;
    else if (in->isa.op == ISA_OP_DMA_INDIRECT2D)
        field = &x.DIND.queue;
    else if (in->isa.op == ISA_OP_DMA_TRIGGER)
        field = &x.DTRIG.queue;
    else
        return 0;
    size_t at = (size_t)((const char *)field - (const char *)&x);
    uint32_t now;
    memcpy(&now, (const char *)in->isa.f + at, sizeof now);
    if (now == q)
        return 0;
    if (!in->body_shared) {   /* its own: written in place */
        memcpy((char *)in->isa.f + at, &q, sizeof q);
        return 0;
    }
    uintptr_t h = (uintptr_t)in->isa.f >> 3;
    struct qwalk_body *e = &w->bodies[(h ^ h >> 7 ^ q * 0x9e3779b1u) % QWALK_BODIES];
    if (e->from == in->isa.f && e->q == q) {
        in->isa.f = (isa_body_t *)e->to;
        return 0;
    }
    const isa_body_t *from = in->isa.f;
    memcpy(&x, from, bir_body_size(in->isa.op));
    *field = q;
    if (!bir_inst_body_share(m, in, &x))
        return tpb_errf(err, "out of memory assigning DMA queues");
    *e = (struct qwalk_body){from, in->isa.f, q};
    return 0;
}

static inline int qwalk_step(qwalk_t *w, bir_module_t *m, bir_inst_t *in, tpb_err_t *err)
{
    if (in->spill && in->dma_group != w->cur_group) {
        w->cur_group = in->dma_group;
        if ((w->cur_q = qwalk_spill(w, m, in, err)) < 0)
            return -1;
    }
    if (in->dma_group != w->cur_group) {
        w->cur_group = in->dma_group;
        if (w->nextev < w->nev)
            qwalk_events(w, in->tir_op);
        int k = (int)((unsigned)w->rr[in->engine]++ % queues_for(w->t, in->engine));
        int q = w->known_q[in->engine][k];
        if (q < 0 && (q = qwalk_queue(w, m, in->engine, k, err)) < 0)
            return -1;
        w->cur_q = q;
    }
    in->queue = w->cur_q;
    return set_queue_field(w, m, in, (uint32_t)w->cur_q, err);
}

int sched_assign_queues_rr(bir_module_t *m, const tpb_target_t *t, const sched_rr_event_t *ev,
                           int nev, int nslots, tpb_err_t *err)
{
    qwalk_t w;
    if (qwalk_init(&w, m, t, ev, nev, nslots))
        return tpb_errf(err, "out of memory assigning DMA queues");
    bir_block_t *b = bir_main_block(m);
    int rc = 0;
    for (int i = 0; i < b->ninsts && !rc; i++)
        if (b->insts[i].dma_group >= 0)
            rc = qwalk_step(&w, m, &b->insts[i], err);
    free(w.slots);
    return rc;
}

/* Engines and queues in one walk of the block (each walk of 10^5
 * instructions reads megabytes from memory), with the two passes'
 * errors: every engine error comes before any queue error, so after a
 * queue error the engines of the rest are still checked. */
int sched_assign(bir_module_t *m, const tpb_target_t *t, const sched_rr_event_t *ev, int nev,
                 int nslots, tpb_err_t *err)
{
    bir_block_t *b = bir_main_block(m);
    qwalk_t w;
    if (qwalk_init(&w, m, t, ev, nev, nslots))
        return sched_assign_engines(m, t, err) ? -1
                                               : tpb_errf(err, "out of memory assigning DMA queues");
    seng_t se;
    if (seng_init(&se, t, b, ev, nev, nslots)) {
        free(w.slots);
        return tpb_errf(err, "out of memory assigning engines");
    }
    int rc = 0;
    for (int i = 0; i < b->ninsts; i++) {
        bir_inst_t *in = &b->insts[i];
        if (assign_one(&se, b, i, err)) {
            rc = -1;
            break;
        }
        if (in->dma_group >= 0 && qwalk_step(&w, m, in, err)) {
            rc = -1;
            assign_engines_from(&se, b, i + 1, err);   /* its error, if any, replaces the queue's */
            break;
        }
    }
    seng_free(&se);
    free(w.slots);
    return rc;
}
