/* The synchronise pass's vector clocks (encoder/sched_clock.c): past
 * states kept as a log of changes with a checkpoint every SCLK_SPAN
 * changes must merge exactly like the full copy per producer they
 * replace (a dense model here), and cost one log entry per change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hugepage.h"
#include "sched_clock.h"

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

#define NENG 4
#define MAXMARK 4096
#define PROBE NENG
_Static_assert(ISA_ENG_COUNT > NENG, "a probe engine besides the NENG random ones");

/* A recorded mark and the dense copy of the clock it stands for. */
typedef struct {
    int eng;
    uint32_t mark;
    uint32_t dense[BIR_MAX_SEMS];
} rec_t;

/* Engine e's clock back to all zero (the tests' probes; the pass never
 * lowers a clock, so its record of merged marks goes too). */
static void zero_clock(sclk_t *c, int e)
{
    memset(c->now[e], 0, sizeof c->now[e]);
    memset(c->seen[e], 0, sizeof c->seen[e]);
}

static void check_now(const sclk_t *c, uint32_t model[][BIR_MAX_SEMS], int nsems)
{
    for (int e = 0; e < NENG; e++)
        for (int s = 0; s < nsems; s++)
            assert_int_equal(c->now[e][s], model[e][s]);
}

/* Random raises (mostly one semaphore at a time, as producers do), marks
 * and merges of earlier marks, on nsems semaphores. */
/* *pooled (with a pool): the logs in it at the end, *own: those that
 * outgrew their first room and are not. */
static void run_random_pool(uint32_t seed, int nsems, int steps, uint32_t hint, sched_pool_t *pool,
                            int *pooled, int *own)
{
    sclk_t c;
    sclk_init(&c, nsems);
    sclk_reserve(&c, hint);
    c.pool = pool;
    static uint32_t model[NENG][BIR_MAX_SEMS];
    memset(model, 0, sizeof model);
    rec_t *rec = calloc(MAXMARK, sizeof *rec);
    assert_non_null(rec);
    int nrec = 0;
    uint32_t count[BIR_MAX_SEMS] = {0};
    for (int i = 0; i < steps; i++) {
        int e = (int)(lcg(&seed) % NENG);
        uint32_t op = lcg(&seed) % 8;
        if (op < 4) {   /* a producer: mark, then its own semaphore advances */
            if (nrec < MAXMARK) {
                rec[nrec].eng = e;
                rec[nrec].mark = sclk_mark(&c, e);
                memcpy(rec[nrec].dense, model[e], sizeof rec[nrec].dense);
                nrec++;
            }
            int s = (int)(lcg(&seed) % (uint32_t)nsems);
            count[s] += 1 + lcg(&seed) % 3;
            assert_int_equal(sclk_raise(&c, e, s, count[s]), 0);
            if (count[s] > model[e][s])
                model[e][s] = count[s];
        } else if (op < 7 && nrec) {   /* a wait: merge an earlier producer's clock */
            const rec_t *r = &rec[lcg(&seed) % (uint32_t)nrec];
            assert_int_equal(sclk_merge(&c, e, r->eng, r->mark), 0);
            for (int s = 0; s < nsems; s++)
                if (r->dense[s] > model[e][s])
                    model[e][s] = r->dense[s];
        } else {   /* a raise below the current value changes nothing */
            int s = (int)(lcg(&seed) % (uint32_t)nsems);
            assert_int_equal(sclk_raise(&c, e, s, model[e][s] / 2), 0);
        }
        check_now(&c, model, nsems);
    }
    /* every recorded state is still reproduced exactly: merged into an
     * all-zero probe engine (never a source, so zeroing it between probes
     * breaks nothing), and into its own engine, which is ahead of it */
    for (int r = 0; r < nrec; r++) {
        zero_clock(&c, PROBE);
        assert_int_equal(sclk_merge(&c, PROBE, rec[r].eng, rec[r].mark), 0);
        for (int s = 0; s < nsems; s++)
            assert_int_equal(c.now[PROBE][s], rec[r].dense[s]);
        uint32_t n = c.log[rec[r].eng].n;
        assert_int_equal(sclk_merge(&c, rec[r].eng, rec[r].eng, rec[r].mark), 0);
        assert_int_equal(c.log[rec[r].eng].n, n);
    }
    for (int e = 0; pool && e < NENG; e++) {
        if (sched_pool_has(pool, c.log[e].val))
            ++*pooled;
        else if (c.log[e].cap > SCLK_FIRST)
            ++*own;
    }
    sclk_free(&c);
    free(rec);
}

static void run_random_hint(uint32_t seed, int nsems, int steps, uint32_t hint)
{
    run_random_pool(seed, nsems, steps, hint, NULL, NULL, NULL);
}

static void run_random(uint32_t seed, int nsems, int steps)
{
    run_random_hint(seed, nsems, steps, 0);
}

static void test_random_small(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 20; seed++)
        run_random(seed, 7, 3000);
}

static void test_random_wide(void **state)
{
    (void)state;
    for (uint32_t seed = 100; seed <= 105; seed++)
        run_random(seed, BIR_MAX_SEMS, 5000);
    run_random(7, 1, 2000);
}

/* Marks exactly on checkpoint boundaries (0, SCLK_SPAN, 2 x SCLK_SPAN)
 * and right after them. */
static void test_span_edges(void **state)
{
    (void)state;
    sclk_t c;
    sclk_init(&c, 3);
    uint32_t dense[4 * SCLK_SPAN + 2][3];
    uint32_t marks[4 * SCLK_SPAN + 2];
    for (uint32_t i = 0; i < 4 * SCLK_SPAN + 2; i++) {
        marks[i] = sclk_mark(&c, 0);
        memcpy(dense[i], c.now[0], sizeof dense[i]);
        assert_int_equal(sclk_raise(&c, 0, (int)(i % 3), i + 1), 0);
    }
    for (uint32_t i = 0; i < 4 * SCLK_SPAN + 2; i++) {
        zero_clock(&c, 1);
        assert_int_equal(sclk_merge(&c, 1, 0, marks[i]), 0);
        for (int s = 0; s < 3; s++)
            assert_int_equal(c.now[1][s], dense[i][s]);
    }
    sclk_free(&c);
}

/* One change per producer costs one log entry and a checkpoint per
 * SCLK_SPAN of them, not a copy of all semaphores. */
static void test_sparse_cost(void **state)
{
    (void)state;
    sclk_t c;
    sclk_init(&c, BIR_MAX_SEMS);
    const uint32_t n = 10000;
    for (uint32_t i = 1; i <= n; i++)
        assert_int_equal(sclk_raise(&c, 2, 3, i), 0);
    assert_int_equal(c.log[2].n, n);
    assert_int_equal(c.log[2].nck, (n + SCLK_SPAN - 1) / SCLK_SPAN);
    assert_int_equal(c.log[0].n, 0);
    sclk_free(&c);
}

/* sclk_reserve: the log that outgrows its first room takes the hint at
 * once (past TPB_ARRAY_MAP_MIN: a huge-page block), then doubles; merges
 * stay exact across each move (random runs with small and large hints). */
static void test_reserve(void **state)
{
    (void)state;
    for (uint32_t seed = 20; seed <= 23; seed++) {
        run_random_hint(seed, BIR_MAX_SEMS, 5000, 300);
        run_random_hint(seed, 5, 5000, 100000);
    }
    sclk_t c;
    sclk_init(&c, BIR_MAX_SEMS);
    sclk_reserve(&c, 200000);
    const uint32_t n = 250000;
    for (uint32_t i = 1; i <= n; i++) {
        assert_int_equal(sclk_raise(&c, 2, (int)(i % 7), i), 0);
        if (i == SCLK_FIRST)
            assert_int_equal(c.log[2].cap, SCLK_FIRST);
        if (i == SCLK_FIRST + 1 || i == 200000) {
            assert_int_equal(c.log[2].cap, 200000);
            assert_true(c.log[2].bytes >= TPB_ARRAY_MAP_MIN);
        }
    }
    assert_int_equal(c.log[2].cap, 400000);
    assert_int_equal(c.log[2].nck, (n + SCLK_SPAN - 1) / SCLK_SPAN);
    /* engine 1 takes engine 2's clock at marks on both sides of each move */
    const uint32_t marks[] = {1, SCLK_FIRST - 1, SCLK_FIRST, SCLK_FIRST + 1, 131072, 200000, 200001, n};
    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
        zero_clock(&c, 1);
        assert_int_equal(sclk_merge(&c, 1, 2, marks[k]), 0);
        for (int s = 0; s < 7; s++) {   /* the last value each semaphore got */
            uint32_t last = 0;
            for (uint32_t i = marks[k]; i > 0 && i + 7 > marks[k] && !last; i--)
                last = i % 7 == (uint32_t)s ? i : 0;
            assert_int_equal(c.now[1][s], last);
        }
    }
    sclk_free(&c);
}

/* The pool: blocks from SCHED_MAP_FROM on, aligned, zero, one after the
 * other while they fit; sched_array_move copies what is kept and leaves
 * a pooled block to the pool. */
static void test_pool(void **state)
{
    (void)state;
    sched_pool_t none;
    sched_pool_init(&none, SCHED_MAP_FROM, NULL);   /* below TPB_ARRAY_MAP_MIN: no pool */
    assert_null(none.base);
    assert_null(sched_pool_take(&none, SCHED_MAP_FROM));
    assert_null(sched_pool_take(NULL, SCHED_MAP_FROM));
    /* a pool exists from TPB_ARRAY_MAP_MIN on; blocks of a quarter of it */
    sched_pool_t p;
    size_t room = TPB_ARRAY_MAP_MIN, q = room / 4;
    assert_true(q >= SCHED_MAP_FROM);
    sched_pool_init(&p, room, NULL);
    assert_true(p.bytes == room || p.base == NULL);
    if (!p.base)
        skip();   /* no mappings here: nothing is pooled */
    assert_null(sched_pool_take(&p, SCHED_MAP_FROM - 1));   /* small: malloc */
    char *a = sched_pool_take(&p, q + 1);
    char *b = sched_pool_take(&p, q);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(b >= a + q + 1 && (uintptr_t)b % 64 == 0);
    for (size_t i = 0; i < q; i += 4096)
        assert_int_equal(b[i], 0);
    assert_true(sched_pool_has(&p, a) && sched_pool_has(&p, b + q - 1));
    assert_null(sched_pool_take(&p, 2 * q));   /* does not fit */
    /* a malloc'ed array moves into the pool: its kept bytes come along */
    size_t bytes = 0;
    char *small = malloc(100);
    assert_non_null(small);
    memset(small, 7, 100);
    char *moved = sched_array_move(&p, small, 100, 60, q, &bytes);
    assert_true(sched_pool_has(&p, moved));
    assert_int_equal(bytes, q);
    assert_int_equal(moved[59], 7);
    assert_int_equal(moved[60], 0);
    /* the pool is full: a pooled array moves to a block of its own */
    char *own = sched_array_move(&p, moved, bytes, 60, 2 * q, &bytes);
    assert_non_null(own);
    assert_false(sched_pool_has(&p, own));
    assert_int_equal(bytes, 2 * q);
    assert_int_equal(own[59], 7);
    assert_int_equal(moved[0], 7);   /* left in the pool, not freed */
    sched_array_free(&p, own, bytes);
    sched_array_free(&p, a, q + 1);   /* pooled: nothing */
    sched_pool_free(&p);
    assert_null(p.base);
}

/* A pool from the job's spare mappings keeps their stale bytes: only a
 * block asked for zeroed (sched_pool_take_zero: the index's hash table)
 * is cleared, the others (written before read) are left as they are;
 * from a fresh mapping both are zero with nothing cleared. */
static void test_pool_from_spare(void **state)
{
    (void)state;
    size_t room = TPB_ARRAY_MAP_MIN, q = room / 4;
    tpb_spare_t spare;
    memset(&spare, 0, sizeof spare);
    unsigned char *old = tpb_array_grow(NULL, 0, room);
    assert_non_null(old);
    memset(old, 0x5a, room);   /* the last owner's bytes */
    tpb_spare_put(&spare, old, room);
    sched_pool_t p;
    sched_pool_init(&p, room, &spare);
    if (!p.base)
        skip();
#ifdef __linux__
    assert_true(p.stale);   /* the spare's pages, not a fresh mapping */
#endif
    unsigned char *raw = sched_pool_take(&p, q);
    unsigned char *zero = sched_pool_take_zero(&p, q);
    assert_non_null(raw);
    assert_non_null(zero);
    for (size_t i = 0; i < q; i += 512) {
        assert_int_equal(zero[i], 0);
        assert_int_equal(raw[i], p.stale ? 0x5a : 0);
    }
    assert_int_equal(zero[q - 1], 0);
    sched_pool_free(&p);
    tpb_spare_release(&spare);
}

/* Logs that outgrow their first room share one pool, and a log past its
 * pooled room moves to a block of its own; merges stay exact. */
static void test_pooled_logs(void **state)
{
    (void)state;
    for (uint32_t seed = 30; seed <= 32; seed++) {
        sched_pool_t p;
        uint32_t hint = 12000;   /* a log of 132 KiB: pooled (from SCHED_MAP_FROM) */
        assert_true(sclk_pool_bytes(hint, BIR_MAX_SEMS) >= SCHED_MAP_FROM);
        /* room for two of the four engines' logs (the others get their
         * own) after a block that fills the rest: a pool exists from
         * TPB_ARRAY_MAP_MIN on */
        sched_pool_init(&p, TPB_ARRAY_MAP_MIN + 2 * sclk_pool_bytes(hint, BIR_MAX_SEMS) + 64, NULL);
        if (!p.base)
            skip();
        assert_non_null(sched_pool_take(&p, TPB_ARRAY_MAP_MIN));
        int pooled = 0, own = 0;
        run_random_pool(seed, BIR_MAX_SEMS, 30000, hint, &p, &pooled, &own);
        assert_int_equal(pooled, 2);
        assert_int_equal(own, NENG - 2);
        sched_pool_free(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_random_wide),
        cmocka_unit_test(test_span_edges),
        cmocka_unit_test(test_sparse_cost),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_pool_from_spare),
        cmocka_unit_test(test_pooled_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
