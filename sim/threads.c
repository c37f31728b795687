/* threads.c - the worker pool behind tpb sim --threads (threads.h).
 *
 * One job at a time: the caller publishes (fn, arg, parts) under the mutex
 * and bumps a generation counter; worker w (1..n-1) runs part w of every
 * generation it has not seen yet when w < parts, then counts itself done.
 * The caller runs part 0 and waits until every worker has checked in, so
 * nothing of a job outlives sim_pool_run. */
#include "threads.h"

#include <pthread.h>
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
    uint64_t gen;       /* job generation */
    unsigned pending;   /* workers yet to finish the current generation */
    bool quit;
    sim_pool_fn fn;
    void *arg;
    unsigned parts;
    pthread_t *tid;
    sim_worker_t *w;
};

static void *worker_main(void *arg)
{
    sim_worker_t *w = arg;
    sim_pool_t *p = w->pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->gen == seen)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        sim_pool_fn fn = p->fn;
        void *a = p->arg;
        bool mine = w->id < p->parts;
        pthread_mutex_unlock(&p->mu);
        if (mine)
            fn(a, w->id);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
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
    if (!split || parts > p->nthreads) {
        for (unsigned i = 0; i < parts; i++)
            fn(arg, i);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->parts = parts;
    p->pending = p->started;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0);
    pthread_mutex_lock(&p->mu);
    while (p->pending)
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
