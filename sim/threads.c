/* threads.c - the worker pool behind tpb sim --threads (threads.h).
 *
 * One job at a time.  The caller publishes (fn, arg, parts) under the
 * mutex, bumps a generation counter and wakes the workers; then the caller
 * and every worker that is awake claim parts from one atomic ticket (the
 * generation in the high half, the next part in the low half) until none
 * is left.  A worker that wakes late, after its job is over, finds another
 * generation in the ticket and claims nothing, so the caller never waits
 * for a worker that is not running (a busy machine, more threads than
 * cores): it runs the parts itself.  The caller returns once every part
 * has finished, so nothing of a job outlives sim_pool_run. */
#include "threads.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    sim_pool_t *pool;
    unsigned id;        /* 1..nthreads-1 */
} sim_worker_t;

struct sim_pool {
    unsigned nthreads;  /* counting the caller */
    unsigned started;   /* workers running (0 until the first split job) */
    bool failed;        /* a worker could not be started: run on the caller */
    bool split_all;     /* ignore sim_pool_parts' threshold (tests) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    uint32_t gen;       /* job generation (under mu) */
    unsigned finished;  /* parts of the current job finished (under mu) */
    bool quit;
    sim_pool_fn fn;
    void *arg;
    unsigned parts;
    _Atomic uint64_t ticket; /* gen << 32 | next part to claim */
    pthread_t *tid;
    sim_worker_t *w;
};

/* Claim the next part of generation gen; false when none is left or the
 * job is over. */
static bool claim(sim_pool_t *p, uint32_t gen, unsigned parts, unsigned *part)
{
    uint64_t t = atomic_load(&p->ticket);
    for (;;) {
        if ((uint32_t)(t >> 32) != gen || (uint32_t)t >= parts)
            return false;
        if (atomic_compare_exchange_weak(&p->ticket, &t, t + 1)) {
            *part = (uint32_t)t;
            return true;
        }
    }
}

/* Run the parts of generation gen this thread can claim; returns how many. */
static unsigned run_parts(sim_pool_t *p, uint32_t gen, unsigned parts, sim_pool_fn fn,
                          void *arg)
{
    unsigned n = 0, part;
    while (claim(p, gen, parts, &part)) {
        fn(arg, part);
        n++;
    }
    return n;
}

static void *worker_main(void *arg)
{
    sim_worker_t *w = arg;
    sim_pool_t *p = w->pool;
    uint32_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->gen == seen)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        sim_pool_fn fn = p->fn;
        void *a = p->arg;
        unsigned parts = p->parts;
        pthread_mutex_unlock(&p->mu);
        unsigned n = run_parts(p, seen, parts, fn, a);
        pthread_mutex_lock(&p->mu);
        /* only parts of this generation were claimed: its job is still
         * waiting for them */
        p->finished += n;
        if (n && p->finished == parts)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

sim_pool_t *sim_pool_new(unsigned nthreads, bool split_all)
{
    sim_pool_t *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->nthreads = nthreads ? nthreads : 1;
    p->split_all = split_all;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->go, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->done, NULL) != 0) {
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    return p;
}

/* Stop and join the workers started so far. */
static void stop_workers(sim_pool_t *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->tid[i], NULL);
    p->started = 0;
}

void sim_pool_destroy(sim_pool_t *p)
{
    if (!p)
        return;
    stop_workers(p);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
    free(p->tid);
    free(p->w);
    free(p);
}

unsigned sim_pool_threads(const sim_pool_t *p)
{
    return p && !p->failed ? p->nthreads : 1;
}

/* Start the nthreads - 1 workers; on any failure join those started and
 * fall back to the caller alone. */
static bool start_workers(sim_pool_t *p)
{
    unsigned n = p->nthreads - 1;
    p->tid = calloc(n, sizeof *p->tid);
    p->w = calloc(n, sizeof *p->w);
    if (!p->tid || !p->w) {
        p->failed = true;
        return false;
    }
    for (unsigned i = 0; i < n; i++) {
        p->w[i] = (sim_worker_t){ p, i + 1 };
        if (pthread_create(&p->tid[i], NULL, worker_main, &p->w[i]) != 0) {
            stop_workers(p);
            p->failed = true;
            return false;
        }
        p->started++;
    }
    return true;
}

void sim_pool_run(sim_pool_t *p, unsigned parts, sim_pool_fn fn, void *arg)
{
    bool split = parts > 1 && p && !p->failed && p->nthreads > 1;
    if (split && p->started == 0 && !start_workers(p))
        split = false;
    if (!split) {
        for (unsigned i = 0; i < parts; i++)
            fn(arg, i);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->parts = parts;
    p->finished = 0;
    uint32_t gen = ++p->gen;
    atomic_store(&p->ticket, (uint64_t)gen << 32);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    unsigned n = run_parts(p, gen, parts, fn, arg);
    pthread_mutex_lock(&p->mu);
    p->finished += n;
    while (p->finished < parts)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

unsigned sim_pool_parts(const sim_pool_t *p, uint64_t work, uint64_t threshold)
{
    unsigned n = sim_pool_threads(p);
    if (p && p->split_all)
        return n;
    uint64_t by_work = threshold ? work / threshold : n;
    if (by_work < n)
        n = by_work ? (unsigned)by_work : 1;
    return n;
}

unsigned sim_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)(n > (long)SIM_MAX_THREADS ? (long)SIM_MAX_THREADS : n) : 1;
}
