/* Multi-core link (encoder/lnc_link.c) on hand-built per-core modules:
 * the sgLnk name, dispatcher order, returns and completion barriers, the
 * global CoreBarrier renumber, unified memory locations, aliases, demoted
 * outputs, merged queues/semaphores, the LNC=1 path, error cases, and a
 * simulated deadlock when one core skips a barrier. */
#define _DEFAULT_SOURCE 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fileio.h"
#include "lnc.h"
#include "sim.h"

static void add_isa(lnc_module_t *m, int engine, isa_op_t op, const char *name)
{
    char bname[64];
    snprintf(bname, sizeof bname, "nc%d.%s", m->core, isa_engine_name((isa_engine_t)engine));
    lnc_block_t *b = lnc_func_block(m, 0, engine, bname, NULL);
    assert_non_null(b);
    lnc_inst_t in;
    lnc_inst_init(&in, op == ISA_OP_CORE_BARRIER ? BIR_CORE_BARRIER : LNC_OPC_ISA, name);
    in.engine = engine;
    in.isa.op = op;
    in.isa.l2 = isa_ops[op].l2;
    assert_true(lnc_block_append(b, &in, NULL) >= 0);
}

static int nbarriers(const lnc_module_t *m)
{
    int n = 0;
    for (int b = 0; b < m->funcs[0].nblocks; b++)
        for (int i = 0; i < m->funcs[0].blocks[b].n; i++)
            n += m->funcs[0].blocks[b].insts[i].opc == BIR_CORE_BARRIER;
    return n;
}

static void add_barrier(lnc_module_t *m, int engine, unsigned mask)
{
    int local = nbarriers(m);
    char name[64];
    snprintf(name, sizeof name, "barrier_%d", local);
    add_isa(m, engine, ISA_OP_CORE_BARRIER, name);
    lnc_block_t *b = lnc_func_block(m, 0, engine, "", NULL);
    lnc_inst_t *in = &b->insts[b->n - 1];
    in->isa.f.CB.cores = mask;
    in->isa.f.CB.id = (uint32_t)local;
    in->local_id = local;
}

static void add_mloc(lnc_module_t *m, const char *name, int tensor, lnc_mkind_t kind,
                     lnc_mkind_t kkind, uint64_t addr, int remote_core)
{
    lnc_mloc_t ml;
    memset(&ml, 0, sizeof ml);
    snprintf(ml.name, sizeof ml.name, "%s", name);
    ml.tensor = tensor;
    ml.kind = kind;
    ml.kkind = kkind;
    ml.space = kind == LNC_ML_LOCAL ? ISA_SPACE_SBUF : ISA_SPACE_HBM;
    ml.external = kkind == LNC_ML_INPUT || kkind == LNC_ML_OUTPUT || kkind == LNC_ML_CONSTANT;
    ml.addr = addr;
    ml.bytes = kind == LNC_ML_LOCAL ? 0 : 1024;
    ml.remote_core = remote_core;
    if (remote_core >= 0)
        snprintf(ml.remote_name, sizeof ml.remote_name, "%s", name);
    assert_true(lnc_add_mloc(m, &ml, NULL) >= 0);
}

static void add_queue(lnc_module_t *m, const char *name, int engine, int id, int sem)
{
    m->queues = realloc(m->queues, (size_t)(m->nqueues + 1) * sizeof *m->queues);
    assert_non_null(m->queues);
    lnc_queue_t *q = &m->queues[m->nqueues++];
    memset(q, 0, sizeof *q);
    snprintf(q->name, sizeof q->name, "%s", name);
    q->engine = engine;
    q->ninst = 1;
    q->inst[0] = (lnc_qinst_t){m->core, id, sem, engine};
    m->sems = realloc(m->sems, (size_t)(m->nsems + 1) * sizeof *m->sems);
    assert_non_null(m->sems);
    lnc_sem_t *s = &m->sems[m->nsems++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->core = m->core;
    s->id = sem;
}

static void core_init(lnc_module_t *m, int core, int ncores)
{
    lnc_module_init(m, "k", core);
    m->ncores = ncores;
    assert_int_equal(lnc_add_func(m, "main", core, NULL), 0);
}

static const lnc_func_t *func_of_core(const lnc_module_t *m, int core)
{
    for (int f = 0; f < m->nfuncs; f++)
        if (m->funcs[f].core == core)
            return &m->funcs[f];
    fail_msg("no function for core %d", core);
    return NULL;
}

static const lnc_block_t *block_of(const lnc_func_t *f, int engine)
{
    for (int b = 0; b < f->nblocks; b++)
        if (f->blocks[b].engine == engine)
            return &f->blocks[b];
    return NULL;
}

static const lnc_inst_t *find_inst(const lnc_func_t *f, const char *name)
{
    for (int b = 0; b < f->nblocks; b++)
        for (int i = 0; i < f->blocks[b].n; i++)
            if (!strcmp(f->blocks[b].insts[i].name, name))
                return &f->blocks[b].insts[i];
    return NULL;
}

/* Every id first seen in the walk (functions in order, barriers in each
 * core's program order) is exactly the number of distinct ids seen before:
 * the renumber is global and monotonic.  Within one core function the ids
 * are distinct. */
static void check_barrier_ids(const lnc_module_t *m)
{
    int seen = 0;
    for (int f = 0; f < m->nfuncs; f++) {
        const lnc_func_t *fn = &m->funcs[f];
        int ids[64], n = 0;
        for (int want = 0; want < 64; want++)
            for (int b = 0; b < fn->nblocks; b++)
                for (int i = 0; i < fn->blocks[b].n; i++) {
                    const lnc_inst_t *in = &fn->blocks[b].insts[i];
                    if (in->opc == BIR_CORE_BARRIER && in->local_id == want)
                        ids[n++] = (int)in->isa.f.CB.id;
                }
        for (int i = 0; i < n; i++)   /* every barrier a new id, in walk order */
            assert_int_equal(ids[i], seen++);
    }
    assert_int_equal(seen, m->nbarrier_ids);
}

/* two cores: core 0 produces `partials` for core 1; both write `out`;
 * core 1 writes `dead`, which nobody reads */
static void build_two(lnc_module_t c[2])
{
    for (int i = 0; i < 2; i++) {
        core_init(&c[i], i, 2);
        add_isa(&c[i], ISA_ENG_SP, ISA_OP_NOP, "load_a");
        add_barrier(&c[i], ISA_ENG_POOL, 0x3);
        add_isa(&c[i], ISA_ENG_SP, ISA_OP_NOP, "store_out");
        add_mloc(&c[i], "a", 0, LNC_ML_INPUT, LNC_ML_INPUT, 0, -1);
        add_mloc(&c[i], "out", 1, LNC_ML_OUTPUT, LNC_ML_OUTPUT, 1024, -1);
        char local[32];
        snprintf(local, sizeof local, "nc%d.t", i);
        add_mloc(&c[i], local, 4, LNC_ML_LOCAL, LNC_ML_LOCAL, 0, -1);
        add_queue(&c[i], "qSyncIO0", ISA_ENG_SP, 0, 5);
    }
    add_mloc(&c[0], "partials", 2, LNC_ML_OUTPUT, LNC_ML_SCRATCH, 2048, -1);
    add_mloc(&c[1], "partials", 2, LNC_ML_INPUT, LNC_ML_SCRATCH, 2048, 0);
    add_mloc(&c[1], "dead", 3, LNC_ML_OUTPUT, LNC_ML_SCRATCH, 3072, -1);
    add_queue(&c[1], "qPool0", ISA_ENG_POOL, 1, 6);
}

static void test_link_two_cores(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_two(c);
    int before0 = c[0].funcs[0].blocks[0].n;
    lnc_rlt_t r = {2, 0, 1};
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, &r, 1, &l, &err), 0);
    assert_string_equal(l.name, "k/sgLnk");
    assert_int_equal(l.core, -1);
    /* the inputs were copied, not edited */
    assert_int_equal(c[0].nfuncs, 1);
    assert_int_equal(c[0].funcs[0].blocks[0].n, before0);

    /* dispatcher: one call per core, in core order */
    assert_int_equal(l.nfuncs, 3);
    assert_string_equal(l.funcs[0].name, "main");
    const lnc_block_t *d = &l.funcs[0].blocks[0];
    assert_int_equal(d->n, 2);
    for (int i = 0; i < 2; i++) {
        char want[64];
        lnc_call_name(want, sizeof want, i, 0);
        assert_string_equal(d->insts[i].name, want);
        assert_int_equal(d->insts[i].opc, LNC_OPC_CALL);
        assert_int_equal(l.funcs[d->insts[i].callee].core, i);
    }
    assert_string_equal(d->insts[0].name, "call_def_0_instance_0");
    assert_string_equal(d->insts[1].name, "call_def_1_instance_0");

    for (int core = 0; core < 2; core++) {
        const lnc_func_t *f = func_of_core(&l, core);
        char rn[32], cn[32];
        snprintf(rn, sizeof rn, "return_%d", core);
        snprintf(cn, sizeof cn, "cb_return_%d", core);
        /* every other engine block ends with the Return */
        for (int b = 0; b < f->nblocks; b++) {
            const lnc_block_t *bl = &f->blocks[b];
            if (bl->engine == ISA_ENG_SP)
                continue;
            assert_int_equal(bl->insts[bl->n - 1].opc, LNC_OPC_RETURN);
            assert_string_equal(bl->insts[bl->n - 1].name, rn);
        }
        /* the SP block: its Return, then the completion barrier (the seed's
         * order: it runs once the function has returned to the dispatcher) */
        const lnc_block_t *sp = block_of(f, ISA_ENG_SP);
        assert_non_null(sp);
        assert_string_equal(sp->insts[sp->n - 2].name, rn);
        assert_int_equal(sp->insts[sp->n - 2].opc, LNC_OPC_RETURN);
        assert_string_equal(sp->insts[sp->n - 1].name, cn);
        assert_int_equal(sp->insts[sp->n - 1].opc, BIR_CORE_BARRIER);
        assert_int_equal(sp->insts[sp->n - 1].isa.f.CB.cores, 0x3);
        /* the queue switch leads the SP block and selects this core's instance */
        char sq[64];
        snprintf(sq, sizeof sq, "I-SQI-qSyncIO0-nc%d", core);
        assert_string_equal(sp->insts[0].name, sq);
        assert_int_equal(sp->insts[0].opc, LNC_OPC_SQI);
        assert_string_equal(l.queues[sp->insts[0].queue].name, "qSyncIO0");
        assert_int_equal(l.queues[sp->insts[0].queue].inst[sp->insts[0].qinst].core, core);
    }
    assert_non_null(find_inst(func_of_core(&l, 1), "I-SQI-qPool0-nc1"));
    assert_null(find_inst(func_of_core(&l, 0), "I-SQI-qPool0-nc0"));

    /* barrier ids: one monotonic pass, unique over the module (the cores
     * meet by counting, not by id) */
    assert_int_equal(l.nbarrier_ids, 4);
    assert_int_equal(find_inst(func_of_core(&l, 0), "barrier_0")->isa.f.CB.id, 0);
    assert_int_equal(find_inst(func_of_core(&l, 0), "cb_return_0")->isa.f.CB.id, 1);
    assert_int_equal(find_inst(func_of_core(&l, 1), "barrier_0")->isa.f.CB.id, 2);
    assert_int_equal(find_inst(func_of_core(&l, 1), "cb_return_1")->isa.f.CB.id, 3);
    check_barrier_ids(&l);

    /* one location per shared buffer, locals kept apart */
    int na = 0;
    for (int i = 0; i < l.nmlocs; i++)
        na += !strcmp(l.mlocs[i].name, "a");
    assert_int_equal(na, 1);
    assert_true(lnc_find_mloc(&l, "nc0.t") >= 0);
    assert_true(lnc_find_mloc(&l, "nc1.t") >= 0);
    /* alias producer-out -> consumer-in; demoted outputs */
    assert_int_equal(l.naliases, 1);
    assert_string_equal(l.mlocs[l.aliases[0].mloc].name, "partials");
    assert_int_equal(l.aliases[0].producer, 0);
    assert_int_equal(l.aliases[0].consumer, 1);
    assert_string_equal(l.aliases[0].out_name, "nc0:partials");
    assert_string_equal(l.aliases[0].inp_name, "nc1:partials");
    const lnc_mloc_t *p = &l.mlocs[lnc_find_mloc(&l, "partials")];
    assert_int_equal(p->kind, LNC_ML_INTERMEDIATE);
    assert_false(p->external);
    const lnc_mloc_t *dead = &l.mlocs[lnc_find_mloc(&l, "dead")];
    assert_int_equal(dead->kind, LNC_ML_SCRATCH);
    assert_false(dead->external);
    const lnc_mloc_t *out = &l.mlocs[lnc_find_mloc(&l, "out")];
    assert_int_equal(out->kind, LNC_ML_OUTPUT);
    assert_true(out->external);
    assert_int_equal(l.mlocs[lnc_find_mloc(&l, "a")].kind, LNC_ML_INPUT);

    /* queues folded by name, semaphores in one namespace */
    assert_int_equal(l.nqueues, 2);
    assert_string_equal(l.queues[0].name, "qSyncIO0");
    assert_int_equal(l.queues[0].ninst, 2);
    assert_int_equal(l.queues[0].inst[0].core, 0);
    assert_int_equal(l.queues[0].inst[1].core, 1);
    assert_string_equal(l.queues[1].name, "qPool0");
    assert_int_equal(l.queues[1].ninst, 1);
    assert_int_equal(l.nsems, 3);
    assert_string_equal(l.sems[0].name, "nc0.qSyncIO0");
    assert_string_equal(l.sems[1].name, "nc1.qSyncIO0");

    char *js = lnc_module_json(&l);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"call_def_1_instance_0\""));
    assert_non_null(strstr(js, "\"intermediate\""));
    free(js);
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

/* four cores with pair barriers {0,1} / {2,3} and an all-core barrier,
 * handed to the linker out of order */
/* Four cores, passed out of order (2, 0, 3, 1): a pair barrier ({0,1} or
 * {2,3}), work, an all-core barrier, the pair barrier again. */
static void build_four(lnc_module_t c[4])
{
    int order[4] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++) {
        int core = order[i];
        unsigned pair = core < 2 ? 0x3 : 0xC;
        core_init(&c[i], core, 4);
        add_barrier(&c[i], ISA_ENG_POOL, pair);
        add_isa(&c[i], ISA_ENG_SP, ISA_OP_NOP, "work");
        add_barrier(&c[i], ISA_ENG_SP, 0xF);
        add_barrier(&c[i], ISA_ENG_POOL, pair);
        add_mloc(&c[i], "x", 0, LNC_ML_INPUT, LNC_ML_INPUT, 0, -1);
        add_queue(&c[i], "qSyncIO0", ISA_ENG_SP, 0, 5);
    }
}

static void test_link_four_cores(void **state)
{
    (void)state;
    lnc_module_t c[4], l, lk;
    build_four(c);
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 4, NULL, 0, &lk, &err), 0);
    /* cores 0 and 1 run one body (pair 0x3), cores 2 and 3 another (0xC):
     * two module definitions with two instances each */
    assert_int_equal(lk.nfuncs, 3);
    assert_int_equal(lk.ndefs, 2);
    const lnc_block_t *d = &lk.funcs[0].blocks[0];
    assert_int_equal(d->n, 4);
    for (int i = 0; i < 4; i++) {
        char want[64];
        snprintf(want, sizeof want, "call_def_%d_instance_%d", i / 2, i % 2);
        assert_string_equal(d->insts[i].name, want);
        assert_int_equal(lk.funcs[d->insts[i].callee].core, i / 2 * 2);
        assert_int_equal(d->insts[i].call_core, i);
    }
    /* the per-core sections: each instance bound for its core */
    assert_int_equal(lnc_bind_instances(&lk, &l, &err), 0);
    assert_int_equal(l.nfuncs, 5);
    for (int i = 0; i < 4; i++)
        assert_int_equal(l.funcs[l.funcs[0].blocks[0].insts[i].callee].core, i);
    check_barrier_ids(&lk);
    /* the instances of one definition run its barriers (one id), the two
     * definitions never share one */
    for (int k = 0; k < 3; k++) {
        char bn[32];
        snprintf(bn, sizeof bn, "barrier_%d", k);
        unsigned i0 = find_inst(func_of_core(&l, 0), bn)->isa.f.CB.id;
        unsigned i1 = find_inst(func_of_core(&l, 1), bn)->isa.f.CB.id;
        unsigned i2 = find_inst(func_of_core(&l, 2), bn)->isa.f.CB.id;
        unsigned i3 = find_inst(func_of_core(&l, 3), bn)->isa.f.CB.id;
        assert_int_equal(i0, i1);
        assert_int_equal(i2, i3);
        assert_int_equal(i0, (unsigned)k);
        assert_int_equal(i2, 4u + (unsigned)k);
    }
    /* definition 0: pair #0, all #0, pair #1, completion; definition 1 the same */
    assert_int_equal(l.nbarrier_ids, 8);
    unsigned cb = find_inst(func_of_core(&l, 3), "cb_return_3")->isa.f.CB.id;
    assert_int_equal(cb, 7);
    assert_int_equal(find_inst(func_of_core(&l, 0), "cb_return_0")->isa.f.CB.id, 3);
    assert_int_equal(find_inst(func_of_core(&l, 3), "cb_return_3")->isa.f.CB.cores, 0xF);
    assert_int_equal(l.nqueues, 1);
    assert_int_equal(l.queues[0].ninst, 4);
    lnc_module_free(&l);
    lnc_module_free(&lk);
    for (int i = 0; i < 4; i++)
        lnc_module_free(&c[i]);
}

static void test_link_one(void **state)
{
    (void)state;
    lnc_module_t c, l;
    core_init(&c, 0, 1);
    add_isa(&c, ISA_ENG_SP, ISA_OP_NOP, "only");
    add_mloc(&c, "x", 0, LNC_ML_INPUT, LNC_ML_INPUT, 0, -1);
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link_one(&c, &l, &err), 0);
    assert_string_equal(l.name, "k/sgLnk");
    assert_int_equal(l.nfuncs, 2);
    assert_int_equal(l.funcs[0].blocks[0].n, 1);
    assert_string_equal(l.funcs[0].blocks[0].insts[0].name, "call_def_0_instance_0");
    const lnc_inst_t *cb = find_inst(&l.funcs[1], "cb_return_0");
    assert_non_null(cb);
    assert_int_equal(cb->isa.f.CB.cores, 0x1);
    assert_int_equal(cb->isa.f.CB.id, 0);
    assert_int_equal(l.nbarrier_ids, 1);
    lnc_module_free(&l);
    lnc_module_free(&c);
}

static void test_link_errors(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_two(c);
    /* the cores disagree on where a shared buffer lives */
    c[1].mlocs[lnc_find_mloc(&c[1], "out")].addr = 4096;
    tpb_err_t err = {{0}};
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_non_null(strstr(err.msg, "shared buffer 'out'"));
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
    /* core 1 names a local tile like core 0's output */
    build_two(c);
    c[1].mlocs[lnc_find_mloc(&c[1], "nc1.t")].name[0] = 0;
    snprintf(c[1].mlocs[lnc_find_mloc(&c[1], "")].name, LNC_NAME_LEN, "out");
    memset(&err, 0, sizeof err);
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_non_null(strstr(err.msg, "Name collision for Input 'out' in subgraph nc1"));
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
    /* core 1 has a scratch buffer named like core 0's kernel input */
    build_two(c);
    c[1].mlocs[lnc_find_mloc(&c[1], "a")].kkind = LNC_ML_SCRATCH;
    c[1].mlocs[lnc_find_mloc(&c[1], "a")].external = false;
    memset(&err, 0, sizeof err);
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_non_null(strstr(err.msg, "Name collision for ExtInput 'a' in Module Instance 0 "
                                    "subgraph nc1"));
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
    /* two modules claiming the same core */
    build_two(c);
    c[1].core = 0;
    memset(&err, 0, sizeof err);
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_non_null(strstr(err.msg, "NeuronCoreId 1"));
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
    assert_int_not_equal(lnc_link(c, 0, NULL, 0, &l, &err), 0);
}

/* The pre-merge renumber (renumberCoreBarriers(vector, base)): over the
 * still-separate modules in core order, every barrier the next id from
 * `base`, unique across the modules; the merged renumber does not depend
 * on it. */
static void test_premerge_renumber(void **state)
{
    (void)state;
    lnc_module_t c[4], l, lk;
    build_four(c);
    assert_int_equal(lnc_renumber_core_barriers_premerge(c, 4, 10), 22);
    unsigned id[4][3];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 3; k++) {
            char bn[32];
            snprintf(bn, sizeof bn, "barrier_%d", k);
            id[c[i].core][k] = find_inst(func_of_core(&c[i], c[i].core), bn)->isa.f.CB.id;
        }
    for (int core = 0; core < 4; core++)
        for (int k = 0; k < 3; k++)
            assert_int_equal(id[core][k], 10u + 3u * (unsigned)core + (unsigned)k);
    /* the merged renumber gives the same answer with or without it */
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 4, NULL, 0, &lk, &err), 0);
    check_barrier_ids(&lk);
    assert_int_equal(lk.nbarrier_ids, 8);
    assert_int_equal(lnc_bind_instances(&lk, &l, &err), 0);
    assert_int_equal(find_inst(func_of_core(&l, 2), "barrier_0")->isa.f.CB.id, 4u);
    lnc_module_free(&l);
    lnc_module_free(&lk);
    for (int i = 0; i < 4; i++)
        lnc_module_free(&c[i]);
    assert_int_equal(lnc_renumber_core_barriers_premerge(c, 0, 0), -1);
}

static isa_sync_t *last_sync(lnc_module_t *m, int engine)
{
    lnc_block_t *b = lnc_func_block(m, 0, engine, "", NULL);
    return &b->insts[b->n - 1].isa.sync;
}

/* copyDeps / addBarrier: waits become dependency edges on this core's
 * updaters and on other cores' remote updates; a wait no schedule can
 * satisfy is an error naming the core, engine and instruction. */
static void test_deps_and_wait_check(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    for (int i = 0; i < 2; i++) {
        core_init(&c[i], i, 2);
        add_mloc(&c[i], "x", 0, LNC_ML_INPUT, LNC_ML_INPUT, 0, -1);
        add_isa(&c[i], ISA_ENG_POOL, ISA_OP_NOP, "signal");      /* S5 of the peer += 1 */
        isa_sync_t *h = last_sync(&c[i], ISA_ENG_POOL);
        h->upd_en = h->upd_remote = 1;
        h->upd_core = (uint32_t)(1 - i);
        h->upd_sem = 5;
        h->upd_op = ISA_SEMOP_SEM_INC;
        add_isa(&c[i], ISA_ENG_DVE, ISA_OP_NOP, "work");         /* S3 += 1 */
        h = last_sync(&c[i], ISA_ENG_DVE);
        h->upd_en = 1;
        h->upd_sem = 3;
        h->upd_op = ISA_SEMOP_SEM_INC;
        add_isa(&c[i], ISA_ENG_SP, ISA_OP_NOP, "wait_peer");     /* S5 >= 1 */
        h = last_sync(&c[i], ISA_ENG_SP);
        h->wait_en = 1, h->wait_sem = 5, h->wait_val = 1;
        add_isa(&c[i], ISA_ENG_SP, ISA_OP_NOP, "wait_work");     /* S3 >= 1 */
        h = last_sync(&c[i], ISA_ENG_SP);
        h->wait_en = 1, h->wait_sem = 3, h->wait_val = 1;
    }
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_int_equal(lnc_check_waits(&l, &err), 0);
    const lnc_func_t *f1 = func_of_core(&l, 1);
    assert_int_equal(f1->ndeps, 1);    /* wait_work on core 1's DVE */
    assert_int_equal(f1->ncross, 1);   /* wait_peer on core 0's signal */
    lnc_module_free(&l);
    /* core 0 never signals core 1 (a missing participant) */
    last_sync(&c[0], ISA_ENG_POOL)->upd_en = 0;
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_int_not_equal(lnc_check_waits(&l, &err), 0);
    assert_non_null(strstr(err.msg, "core 1 SP instruction 'wait_peer': waits for S5"));
    assert_non_null(strstr(err.msg, ">= 1 but the linked program updates it 0 time(s)"));
    lnc_module_free(&l);
    for (int i = 0; i < 2; i++)
        lnc_module_free(&c[i]);
}

/* dry_run: the no-mutate probe makes the link's own checks ("missing
 * input", the definition table) without building anything; the link makes
 * the same check first and fails with the same message. */
static void test_link_dry_run(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_two(c);
    tpb_err_t err = {{0}};
    int nml = c[1].nmlocs;
    assert_int_equal(lnc_link_dry_run(c, 2, &err), 0);
    assert_int_equal(c[1].nmlocs, nml);   /* untouched */
    /* core 1 takes 'partials' from core 0, which no longer outputs it */
    c[0].mlocs[lnc_find_mloc(&c[0], "partials")].kind = LNC_ML_INPUT;
    assert_int_not_equal(lnc_link_dry_run(c, 2, &err), 0);
    assert_non_null(strstr(err.msg, "missing input 'partials' of subgraph nc1: core 0 has no "
                                    "output of that name"));
    char probe[sizeof err.msg];
    snprintf(probe, sizeof probe, "%s", err.msg);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_string_equal(err.msg, probe);
    /* the definition table: a core without a module */
    c[0].core = 1;
    assert_int_not_equal(lnc_link_dry_run(c, 2, &err), 0);
    assert_non_null(strstr(err.msg, "no module has NeuronCoreId 0"));
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

static void write_text(const char *path, const char *text)
{
    tpb_err_t err;
    assert_int_equal(fio_write_atomic(path, text, strlen(text), &err), 0);
}

/* Emit linked module l, simulate it, expect a failure; err gets it. */
static void emit_and_fail(const lnc_module_t *l, tpb_err_t *err_out)
{
    tpb_err_t err = {{0}};
    char root[512];
    snprintf(root, sizeof root, "%s/test_lnc_deadlock.%ld", TPB_BINARY_DIR, (long)getpid());
    assert_int_equal(fio_mkdirs(root, &err), 0);
    assert_int_equal(lnc_emit_linked(l, root, &err), 0);
    char path[700];
    snprintf(path, sizeof path, "%s/tensor-map.json", root);
    write_text(path, "{\"format\": \"tpbsim-tensor-map\", \"version\": 1, \"kernel\": \"k\", "
                     "\"target\": \"trn2\", \"num_cores\": 2, \"hbm_bytes\": 4096, "
                     "\"tensors\": []}");
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/nc%d/sg0/def.json", root, i);
        write_text(path, "{\"core\": 0, \"semaphores\": [], \"queues\": []}");
    }
    sim_options_t o;
    sim_options_default(&o);
    sim_t *s = NULL;
    assert_int_equal(sim_load(root, &o, &s, &err), 0);
    assert_int_not_equal(sim_run(s, &err), 0);
    if (getenv("LNC_TEST_VERBOSE"))
        printf("%s\n", err.msg);
    sim_free(s);
    snprintf(path, sizeof path, "rm -rf '%s'", root);
    assert_int_equal(system(path), 0);
    *err_out = err;
}

static void build_skipper(lnc_module_t c[2], lnc_module_t *l)
{
    for (int i = 0; i < 2; i++) {
        core_init(&c[i], i, 2);
        add_isa(&c[i], ISA_ENG_SP, ISA_OP_NOP, "work");
    }
    add_barrier(&c[0], ISA_ENG_SP, 0x3);
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, NULL, 0, l, &err), 0);
}


/* The deadlock report of core 0 waiting at its completion barrier for a
 * core 1 that finished without it. */
static void assert_core1_missed_barrier(const char *msg)
{
    assert_non_null(strstr(msg, "deadlock"));
    assert_non_null(strstr(msg, "core 0 SP instruction 1 (pc 1) CoreBarrier [cb_return_0]: "
                                "waits at CoreBarrier 1 (cores 0x3): arrived core(s) 0; "
                                "not arrived: 1"));
    assert_non_null(strstr(msg, "core 1: finished"));
}

/* Core 0 runs a barrier core 1 never reaches.  Cores meet by counting
 * (hardware-facts §3: a remote semaphore signal and a local wait), so core
 * 1's completion barrier meets core 0's barrier_0 and core 1 finishes;
 * core 0 then waits at its completion barrier forever, and the simulator
 * names both cores' positions. */
static void test_skipped_barrier_deadlocks(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_skipper(c, &l);
    tpb_err_t err;
    emit_and_fail(&l, &err);
    assert_core1_missed_barrier(err.msg);
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

/* An idle core (its programs run no op) read back from its stream-less
 * directory skips core 0's barrier: the split refuses such a kernel, and
 * were it run anyway the simulator reports the hang instead of waiting:
 * core 1's completion barrier meets core 0's barrier_0, core 0 waits at
 * its own forever. */
static void test_idle_core_skipping_barrier_deadlocks(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    core_init(&c[0], 0, 2);
    add_isa(&c[0], ISA_ENG_SP, ISA_OP_NOP, "work");
    add_barrier(&c[0], ISA_ENG_SP, 0x3);
    char dir[] = "/tmp/tpb-idle-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/def.json", dir);
    write_text(path, "{\"core\": 1, \"semaphores\": [], \"queues\": []}");
    tpb_err_t err = {{0}};
    lnc_module_init(&c[1], "k", 1);
    c[1].ncores = 2;
    assert_int_not_equal(lnc_load_core_artifacts(&c[1], dir, false, &err), 0);
    assert_non_null(strstr(err.msg, "no engine stream"));
    lnc_module_free(&c[1]);
    lnc_module_init(&c[1], "k", 1);
    c[1].ncores = 2;
    if (lnc_load_core_artifacts(&c[1], dir, true, &err))
        fail_msg("%s", err.msg);
    unlink(path);
    rmdir(dir);
    assert_int_equal(c[1].funcs[0].nblocks, 1);
    assert_int_equal(c[1].funcs[0].blocks[0].engine, ISA_ENG_SP);
    assert_int_equal(c[1].funcs[0].blocks[0].n, 0);
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    emit_and_fail(&l, &err);
    assert_core1_missed_barrier(err.msg);
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

/* Without its completion barrier core 1 simply finishes; the deadlock
 * report still names it. */
static void test_finished_core_named(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_skipper(c, &l);
    lnc_func_t *f1 = (lnc_func_t *)func_of_core(&l, 1);
    lnc_block_t *sp = &f1->blocks[0];
    assert_string_equal(sp->insts[sp->n - 1].name, "cb_return_1");
    sp->n--;
    tpb_err_t err;
    emit_and_fail(&l, &err);
    assert_non_null(strstr(err.msg, "deadlock"));
    assert_non_null(strstr(err.msg, "core 0 SP"));
    assert_non_null(strstr(err.msg, "core 1: finished"));
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

/* verifyTensorMap: the map read back from disk must bind every HBM location
 * of the linked module (a @0, out @1024, partials @2048, dead @3072; 1024 B
 * each) to the same region. */
static void test_verify_tensor_map(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_two(c);
    lnc_rlt_t r = {2, 0, 1};
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, &r, 1, &l, &err), 0);
    char dir[] = "/tmp/tpb-tmap-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tensor-map.json", dir);
    static const struct { const char *map, *want; } cases[] = {
        {"a 0 1 true;out 1024 1 false;partials 2048 1 true;"
         "dead 3072 1 true", NULL},
        {"a 0 1 true;out 1024 1 false;partials 2048 1 true",
         "memory location 'dead' of k/sgLnk has no entry"},
        {"a 0 1 true;out 1024 1 false;partials 4096 1 true;"
         "dead 3072 1 true", "'partials' is [4096, +1024) in the map but [2048, +1024)"},
        {"a 0 2 true;out 1024 1 false;partials 2048 1 true;"
         "dead 3072 1 true", "tensors 'a' and 'out' overlap"},
        {"a 0 1 true;out 1024 1 0;partials 2048 1 true;"
         "dead 3072 1 true", "tensor 'out': sbuf_compatible must be true or false"},
        {"a 0 1 true;out 1024 1 true;partials 2048 1 true;"
         "dead 7680 1 true", "outside the 8192 bytes of HBM"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* compact spec -> JSON: "name addr KiB sbuf_compatible;" per tensor */
        char json[2048];
        size_t o = (size_t)snprintf(json, sizeof json, "{\"hbm_bytes\": 8192, \"tensors\": [");
        const char *p = cases[i].map;
        char name[16], sc[8];
        int addr, kib, used, first = 1;
        while (sscanf(p, "%15s %d %d %7[^;]%n", name, &addr, &kib, sc, &used) == 4) {
            o += (size_t)snprintf(json + o, sizeof json - o,
                                  "%s{\"name\": \"%s\", \"hbm_addr\": %d, \"bytes\": %d, "
                                  "\"sbuf_compatible\": %s}",
                                  first ? "" : ", ", name, addr, kib * 1024, sc);
            first = 0;
            p += used + (p[used] == ';');
        }
        snprintf(json + o, sizeof json - o, "]}");
        write_text(path, json);
        int rc = lnc_verify_tensor_map(&l, path, &err);
        if (!cases[i].want && rc)
            fail_msg("case %zu: %s (%s)", i, err.msg, json);
        else if (cases[i].want && (rc == 0 || !strstr(err.msg, cases[i].want)))
            fail_msg("case %zu: want '%s', got rc %d '%s'", i, cases[i].want, rc, err.msg);
    }
    unlink(path);
    rmdir(dir);
    lnc_module_free(&l);
    for (int i = 0; i < 2; i++)
        lnc_module_free(&c[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_tensor_map),
        cmocka_unit_test(test_link_two_cores),
        cmocka_unit_test(test_link_four_cores),
        cmocka_unit_test(test_link_one),
        cmocka_unit_test(test_link_errors),
        cmocka_unit_test(test_link_dry_run),
        cmocka_unit_test(test_premerge_renumber),
        cmocka_unit_test(test_deps_and_wait_check),
        cmocka_unit_test(test_skipped_barrier_deadlocks),
        cmocka_unit_test(test_idle_core_skipping_barrier_deadlocks),
        cmocka_unit_test(test_finished_core_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
