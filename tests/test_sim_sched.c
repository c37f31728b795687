/* The scheduler's ordered sets (sim/dueq.h, sim_int.h): the due engines in
 * step order against the scan of every due engine they replaced, the event
 * heap's pop order against a plain minimum search, and the inline
 * semaphore update against the general one (sync.c), and the per-instruction
 * step record against the decoded instruction it copies (memo.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim_int.h"
#include "sim_testlib.h"

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* The former search: due engines in ascending bit order, a later one
 * replacing the best only when strictly earlier. */
static int scan_first(const bool *due, const uint64_t *t)
{
    int best = -1;
    for (int b = 0; b < SIM_DUEQ_MAX; b++)
        if (due[b] && (best < 0 || t[b] < t[best]))
            best = b;
    return best;
}

static void test_dueq_matches_scan(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int round = 0; round < 200; round++) {
        sim_dueq_t q = { .n = 0 };
        bool due[SIM_DUEQ_MAX] = { false };
        uint64_t t[SIM_DUEQ_MAX] = { 0 };
        /* few bits and few times: many ties, full and empty sets */
        unsigned nbits = 1 + (unsigned)(rng_next(&x) % SIM_DUEQ_MAX);
        uint64_t span = 1 + rng_next(&x) % 8;
        uint64_t now = 0;
        for (int step = 0; step < 2000; step++) {
            unsigned r = (unsigned)(rng_next(&x) % 8);
            unsigned b = (unsigned)(rng_next(&x) % nbits);
            if (r < 4) { /* (re)schedule at or after now */
                uint64_t at = now + rng_next(&x) % span;
                if (due[b])
                    sim_dueq_remove(&q, b);
                sim_dueq_insert(&q, at, b);
                due[b] = true;
                t[b] = at;
            } else if (r < 7) { /* the first one steps */
                int f = scan_first(due, t);
                if (f < 0) {
                    assert_int_equal(q.n, 0);
                    continue;
                }
                assert_true(q.n > 0);
                sim_due_t d = sim_dueq_first(&q);
                assert_int_equal(d.bit, f);
                assert_int_equal(d.t, t[f]);
                sim_dueq_pop(&q);
                due[f] = false;
                now = t[f];
            } else { /* any one leaves (or none, if b is not due) */
                sim_dueq_remove(&q, b);
                due[b] = false;
            }
            unsigned n = 0;
            for (unsigned k = 0; k < SIM_DUEQ_MAX; k++)
                n += due[k];
            assert_int_equal(q.n, n);
        }
    }
}

/* Random events pushed and popped in any interleaving come out by time,
 * then kind, core, unit and insertion order; a pop may also replace the
 * top by an event stamped earlier (sim_heap_replace_top, the engine hot
 * loop's held update) or queue a stamped event later (sim_heap_insert). */
static void test_heap_order(void **state)
{
    (void)state;
    sim_t *s = calloc(1, sizeof *s);
    assert_non_null(s);
    enum { N = 4000 };
    uint64_t *pend_t = malloc(N * sizeof *pend_t), *pend_o = malloc(N * sizeof *pend_o);
    uint32_t *pend_v = malloc(N * sizeof *pend_v);
    assert_non_null(pend_t);
    assert_non_null(pend_o);
    assert_non_null(pend_v);
    uint64_t x = 12345, seq = 0;
    size_t np = 0;
    tpb_err_t err;
    for (int step = 0; step < 3 * N; step++) {
        bool push = np < N && (np == 0 || rng_next(&x) % 3 != 0);
        unsigned how = (unsigned)(rng_next(&x) % 3); /* push, stamp then insert, replace */
        sim_event_t ev = { .t = rng_next(&x) % 16, .kind = (uint8_t)(rng_next(&x) % 3),
                           .core = (uint8_t)(rng_next(&x) % 4),
                           .unit = (uint16_t)(rng_next(&x) % 5), .val = (uint32_t)step };
        if (push && how < 2) {
            if (how == 0) {
                assert_int_equal(sim_heap_push(s, &ev, &err), 0);
            } else {
                sim_heap_stamp(&s->heap, &ev);
                assert_int_equal(sim_heap_insert(s, &ev, &err), 0);
            }
            pend_t[np] = ev.t;
            pend_o[np] = sim_ev_order(ev.kind, ev.core, ev.unit, seq++);
            pend_v[np] = ev.val;
            np++;
            continue;
        }
        bool replace = push; /* pop the top and queue ev in one step */
        if (replace)
            sim_heap_stamp(&s->heap, &ev);
        size_t best = 0;
        for (size_t k = 1; k < np; k++)
            if (pend_t[k] < pend_t[best] || (pend_t[k] == pend_t[best] && pend_o[k] < pend_o[best]))
                best = k;
        assert_int_equal(s->heap.n, np);
        assert_int_equal(s->heap.v[0].t, pend_t[best]);
        assert_int_equal(s->heap.v[0].ord, pend_o[best]);
        assert_int_equal(s->heap.v[0].val, pend_v[best]);
        if (replace) {
            sim_heap_replace_top(&s->heap, &ev);
            pend_t[best] = ev.t;
            pend_o[best] = sim_ev_order(ev.kind, ev.core, ev.unit, seq++);
            pend_v[best] = ev.val;
            continue;
        }
        sim_heap_drop(&s->heap);
        np--;
        pend_t[best] = pend_t[np];
        pend_o[best] = pend_o[np];
        pend_v[best] = pend_v[np];
    }
    free(pend_t);
    free(pend_o);
    free(pend_v);
    free(s->heap.v);
    free(s);
}

/* Three engines bump semaphores (their own and shared ones, at read or at
 * completion) while SP waits on each in turn: the run without a trace
 * (inline updates whenever no engine waits on the updated semaphore) has
 * the cycles and per-engine statistics of the run with one (every update
 * through sync.c). */
static void run_stats(tb_t *b, bool trace, sim_engine_stats_t st[5], uint64_t *cycles)
{
    sim_options_t o;
    sim_options_default(&o);
    o.trace = trace;
    sim_t *s;
    tpb_err_t err;
    assert_int_equal(tb_run(b, &o, &s, &err), 0);
    *cycles = tb_cycles(s);
    for (unsigned k = 0; k < 5; k++)
        sim_get_engine_stats(s, 0, k, &st[k]);
    sim_free(s);
}

static void test_inline_update_wakes(void **state)
{
    (void)state;
    uint64_t x = 777;
    for (int round = 0; round < 20; round++) {
        tb_t b;
        tb_init(&b, 1);
        const unsigned eng[3] = { TB_ACT, TB_POOL, TB_DVE };
        uint32_t total[4] = { 0 };
        for (unsigned e = 0; e < 3; e++) {
            unsigned n = 20 + (unsigned)(rng_next(&x) % 40);
            for (unsigned i = 0; i < n; i++) {
                isa_inst_t in = tb_op(ISA_OP_NOP);
                unsigned sem = (unsigned)(rng_next(&x) % 4);
                tb_upd(&in, sem, ISA_SEMOP_SEM_INC, 0, rng_next(&x) % 2);
                total[sem]++;
                tb_add(&b, 0, eng[e], in);
            }
        }
        /* SP waits for growing values of each semaphore, in turn */
        uint32_t need[4] = { 0 };
        for (int w = 0; w < 12; w++) {
            unsigned sem = (unsigned)(rng_next(&x) % 4);
            if (need[sem] >= total[sem])
                continue;
            need[sem] += 1 + (uint32_t)(rng_next(&x) % (total[sem] - need[sem]));
            isa_inst_t in = tb_op(ISA_OP_NOP);
            tb_wait(&in, sem, need[sem]);
            tb_add(&b, 0, TB_SP, in);
        }
        tb_add(&b, 0, TB_SP, tb_op(ISA_OP_NOP));
        tb_write(&b);
        sim_engine_stats_t a[5], t[5];
        uint64_t ca, ct;
        run_stats(&b, false, a, &ca);
        run_stats(&b, true, t, &ct);
        assert_int_equal(ca, ct);
        for (unsigned k = 0; k < 5; k++) {
            assert_int_equal(a[k].instructions, t[k].instructions);
            assert_int_equal(a[k].busy_cycles, t[k].busy_cycles);
            assert_int_equal(a[k].sem_wait_cycles, t[k].sem_wait_cycles);
        }
        tb_free(&b);
    }
}

/* The step record made at load (memo.c sim_step_of) says what the hot loop
 * used to read of the decoded instruction: an update is scheduled as the
 * instruction runs unless it waits for a DMA transfer's end (a
 * DmaTrigger's, a descriptor's remote one), at its start or end, local or
 * remote; the wait, the pc and the opcode's class; wait values and events
 * made from it are those made from the header. */
static void test_step_record(void **state)
{
    (void)state;
    uint64_t x = 99;
    sim_engine_t *e = calloc(1, sizeof *e);
    assert_non_null(e);
    for (unsigned r = 0; r < ISA_NUM_REGS; r++)
        e->regs[r] = (uint32_t)rng_next(&x);
    for (unsigned op = 0; op < ISA_OP_COUNT; op++)
        for (unsigned bits = 0; bits < 32; bits++) {
            isa_decoded_t d;
            memset(&d, 0, sizeof d);
            d.inst.op = (isa_op_t)op;
            d.pc = (uint32_t)rng_next(&x);
            isa_sync_t *h = &d.inst.sync;
            h->upd_en = bits & 1;
            h->upd_at_read = bits >> 1 & 1;
            h->upd_remote = bits >> 2 & 1;
            h->wait_en = bits >> 3 & 1;
            h->wait_reg = bits >> 4 & 1 ? 1 + (uint32_t)(rng_next(&x) % 15) : 0;
            h->wait_sem = (uint32_t)(rng_next(&x) % 256);
            h->wait_val = (uint32_t)rng_next(&x);
            h->upd_sem = (uint32_t)(rng_next(&x) % 256);
            h->upd_op = (uint32_t)(rng_next(&x) % 16);
            h->upd_val = (uint32_t)(rng_next(&x) % 65536);
            sim_step_t st = sim_step_of(&d);
            bool at_issue = h->upd_en && (h->upd_at_read || !sim_dma_upd_at_transfer_end(&d.inst));
            bool dma_end = op == ISA_OP_DMA_TRIGGER ||
                           ((op == ISA_OP_DMA_DIRECT2D || op == ISA_OP_DMA_DIRECT3D ||
                             op == ISA_OP_DMA_INDIRECT2D) && (bits & 4));
            assert_int_equal(at_issue, (bits & 1) && ((bits & 2) || !dma_end));
            assert_int_equal((st.flags & SIM_STEP_UPD_READ) != 0, at_issue && (bits & 2));
            assert_int_equal((st.flags & SIM_STEP_UPD_END) != 0, at_issue && !(bits & 2));
            assert_int_equal((st.flags & SIM_STEP_UPD_REMOTE) != 0, at_issue && (bits & 4));
            assert_int_equal((st.flags & SIM_STEP_WAIT) != 0, h->wait_en);
            assert_int_equal((st.flags & SIM_STEP_BARRIER) != 0, op == ISA_OP_CORE_BARRIER);
            assert_int_equal(st.cls, isa_ops[op].cls);
            assert_int_equal(st.pc, d.pc);
            assert_int_equal(st.wait_sem, h->wait_sem);
            assert_int_equal(sim_step_wait_value(e, &st), sim_sync_wait_value(e, h));
            sim_ref_t w = { .core = 1, .tid = 2, .pc = 3, .start_ps = 4 };
            sim_event_t a = sim_step_event(&st, 3, 77, w), b = sim_sync_event(h, 3, 77, w);
            assert_int_equal(a.t, b.t);
            assert_int_equal(a.kind, b.kind);
            assert_int_equal(a.core, b.core);
            assert_int_equal(a.unit, b.unit);
            assert_int_equal(a.val, b.val);
            assert_memory_equal(&a.ref, &b.ref, sizeof a.ref);
        }
    free(e);
}

/* The inline increment leaves an update that would pass 2^32-1 to the
 * general one, which reports it; the one before it is applied inline. */
static void test_inline_update_overflow(void **state)
{
    (void)state;
    sim_t *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->ncores = 1;
    s->cores = calloc(1, sizeof *s->cores);
    assert_non_null(s->cores);
    sim_sem_t *S = &s->cores[0].sem[3];
    S->value = UINT32_MAX - 1;
    S->wake_at = UINT32_MAX; /* nobody waits */
    sim_event_t ev = { .t = 5, .kind = EV_SEM, .unit = 3, .val = (uint32_t)ISA_SEMOP_SEM_INC << 24,
                       .ref = { .core = 0, .tid = 1, .pc = 9 } };
    tpb_err_t err = { .msg = "" };
    assert_int_equal(sim_sync_apply(s, &ev, &err), 0);
    assert_int_equal(S->value, UINT32_MAX);
    assert_int_equal(S->last_writer.pc, 9);
    assert_int_equal(sim_sync_apply(s, &ev, &err), -1);
    assert_non_null(strstr(err.msg, "overflow"));
    assert_int_equal(S->value, UINT32_MAX);
    free(s->cores);
    free(s);
}

/* sim_take_next_engine takes a step exactly when the run loop would run
 * that engine next: the first due engine, no heap event at or before its
 * time, and within --max-cycles (random due sets and heap tops, many
 * ties). */
static void test_take_next_engine(void **state)
{
    (void)state;
    sim_t *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->ncores = 2;
    s->cores = calloc(2, sizeof *s->cores);
    assert_non_null(s->cores);
    for (unsigned ci = 0; ci < 2; ci++)
        for (unsigned k = 0; k < SIM_ENGINES; k++)
            s->cores[ci].eng[k].due_bit = (uint8_t)(ci * 8 + k);
    uint64_t x = 4242;
    tpb_err_t err;
    for (int round = 0; round < 5000; round++) {
        s->dueq = (sim_dueq_t){ .n = 0 };
        s->heap.n = 0;
        s->max_ps = rng_next(&x) % 12;
        s->now = 99;
        for (unsigned ci = 0; ci < 2; ci++)
            for (unsigned k = 0; k < SIM_ENGINES; k++) {
                sim_engine_t *e = &s->cores[ci].eng[k];
                e->due = false;
                if (rng_next(&x) % 3 == 0)
                    sim_schedule_engine(s, e, rng_next(&x) % 10);
            }
        unsigned nev = (unsigned)(rng_next(&x) % 3);
        for (unsigned i = 0; i < nev; i++) {
            sim_event_t ev = { .t = rng_next(&x) % 10, .kind = (uint8_t)(rng_next(&x) % 3) };
            assert_int_equal(sim_heap_push(s, &ev, &err), 0);
        }
        /* the run loop's rule: the earliest due engine by (time, core, slot) */
        sim_engine_t *first = NULL;
        for (unsigned ci = 0; ci < 2; ci++)
            for (unsigned k = 0; k < SIM_ENGINES; k++) {
                sim_engine_t *e = &s->cores[ci].eng[k];
                if (e->due && (!first || e->due_t < first->due_t))
                    first = e;
            }
        bool expect = first && !(s->heap.n && s->heap.v[0].t <= first->due_t) &&
                      first->due_t <= s->max_ps;
        unsigned n0 = s->dueq.n;
        sim_core_t *c = NULL;
        sim_engine_t *e = NULL;
        bool took = sim_take_next_engine(s, &c, &e);
        assert_int_equal(took, expect);
        if (took) {
            assert_ptr_equal(e, first);
            assert_ptr_equal(c, &s->cores[first->due_bit >> 3]);
            assert_false(e->due);
            assert_int_equal(s->now, first->due_t);
            assert_int_equal(s->dueq.n, n0 - 1);
        } else {
            assert_int_equal(s->now, 99);
            assert_int_equal(s->dueq.n, n0);
        }
    }
    free(s->heap.v);
    free(s->cores);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dueq_matches_scan),
        cmocka_unit_test(test_heap_order),
        cmocka_unit_test(test_inline_update_wakes),
        cmocka_unit_test(test_step_record),
        cmocka_unit_test(test_inline_update_overflow),
        cmocka_unit_test(test_take_next_engine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
