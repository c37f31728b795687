/* test_sim_threads.c - the --threads worker pool (sim/threads.c): every
 * part of a job runs exactly once (on whichever thread claims it), jobs
 * follow each other without leaking into one another, and the
 * split sizes follow the threshold.  The bit-identity of split matmuls is
 * checked end to end by tests/check_threads.py (threads.cmake). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "threads.h"

#define MAXP 16

typedef struct {
    unsigned hits[MAXP];      /* written by part i only */
    pthread_t who[MAXP];
    uint64_t sum[MAXP];
} job_t;

/* Each part does some work (a sum) so that parts overlap in time. */
static void part_fn(void *arg, unsigned i)
{
    job_t *j = arg;
    uint64_t s = 0;
    for (uint64_t k = 0; k < 100000; k++)
        s += k ^ i;
    j->sum[i] = s;
    j->hits[i]++;
    j->who[i] = pthread_self();
}

static void check_job(unsigned threads, unsigned parts)
{
    sim_pool_t *p = sim_pool_new(threads, false);
    assert_non_null(p);
    assert_int_equal(sim_pool_threads(p), threads);
    unsigned on_worker = 0;
    for (int round = 0; round < 50; round++) {
        job_t j;
        memset(&j, 0, sizeof j);
        sim_pool_run(p, parts, part_fn, &j);
        for (unsigned i = 0; i < MAXP; i++)
            assert_int_equal(j.hits[i], i < parts ? 1 : 0);
        for (unsigned i = 0; i < parts; i++)
            if (!pthread_equal(j.who[i], pthread_self()))
                on_worker++;
    }
    /* a pool with workers uses them (a part claimed by a worker at least
     * once in 50 jobs); one without runs everything on the caller */
    if (threads == 1 || parts == 1)
        assert_int_equal(on_worker, 0);
    sim_pool_destroy(p);
}

static void test_parts_run_once(void **state)
{
    (void)state;
    static const unsigned t[] = { 1, 2, 3, 7 };
    for (unsigned a = 0; a < sizeof t / sizeof t[0]; a++)
        for (unsigned parts = 1; parts <= t[a] + 2 && parts <= MAXP; parts++)
            check_job(t[a], parts);
}

/* Part 0 waits until part 1 has run: only a second thread can run part 1
 * meanwhile, so this returns only when two parts really run at the same
 * time (a pool that ran everything on one thread would hang here, and the
 * test would fail by its ctest timeout). */
static void rendezvous_fn(void *arg, unsigned i)
{
    atomic_int *flag = arg;
    if (i == 1) {
        atomic_store(flag, 1);
        return;
    }
    while (!atomic_load(flag))
        sched_yield();
}

static void test_parts_run_concurrently(void **state)
{
    (void)state;
    sim_pool_t *p = sim_pool_new(2, false);
    assert_non_null(p);
    for (int round = 0; round < 20; round++) {
        atomic_int flag = 0;
        sim_pool_run(p, 2, rendezvous_fn, &flag);
        assert_int_equal(atomic_load(&flag), 1);
    }
    sim_pool_destroy(p);
}

static void test_null_and_unused(void **state)
{
    (void)state;
    job_t j;
    memset(&j, 0, sizeof j);
    sim_pool_run(NULL, 3, part_fn, &j); /* no pool: the caller runs them all */
    assert_int_equal(j.hits[0] + j.hits[1] + j.hits[2], 3);
    assert_int_equal(sim_pool_threads(NULL), 1);
    sim_pool_destroy(NULL);
    /* a pool that never ran a job has no workers to join */
    sim_pool_destroy(sim_pool_new(4, false));
}

static void test_parts_threshold(void **state)
{
    (void)state;
    sim_pool_t *p = sim_pool_new(4, false);
    assert_int_equal(sim_pool_parts(p, 0, 100), 1);
    assert_int_equal(sim_pool_parts(p, 199, 100), 1);
    assert_int_equal(sim_pool_parts(p, 200, 100), 2);
    assert_int_equal(sim_pool_parts(p, 399, 100), 3);
    assert_int_equal(sim_pool_parts(p, 100000, 100), 4);
    assert_int_equal(sim_pool_parts(NULL, 100000, 100), 1);
    sim_pool_destroy(p);
    p = sim_pool_new(3, true); /* split_all: the threshold is ignored */
    assert_int_equal(sim_pool_parts(p, 1, 100), 3);
    sim_pool_destroy(p);
    assert_true(sim_online_cpus() >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parts_run_once),
        cmocka_unit_test(test_parts_run_concurrently),
        cmocka_unit_test(test_null_and_unused),
        cmocka_unit_test(test_parts_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
