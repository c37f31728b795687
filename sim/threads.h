/* threads.h - a fixed pool of worker threads that split one instruction's
 * work (tpb sim --threads N; docs/simulator.md "Threads").
 *
 * sim_pool_run(p, parts, fn, arg) calls fn(arg, i) once for every i in
 * 0..parts-1, each on whichever thread claims it first (the caller claims
 * too, so parts a busy machine leaves to no worker still run at once), and
 * returns when all have finished.  The callers split work so that each part
 * writes its own output elements and computes each of them exactly as the
 * one-thread path does, so results do not depend on the thread count.  The
 * workers are started on the first sim_pool_run that needs them (a run of
 * small instructions never starts a thread) and joined by
 * sim_pool_destroy. */
#ifndef TPB_SIM_THREADS_H
#define TPB_SIM_THREADS_H
#include <stdbool.h>
#include <stdint.h>

/* The largest --threads accepted. */
#define SIM_MAX_THREADS 256u

typedef struct sim_pool sim_pool_t;

typedef void (*sim_pool_fn)(void *arg, unsigned part);

/* A pool of nthreads threads counting the caller (1: no workers ever);
 * split_all: sim_pool_parts ignores its threshold (tests: every split path
 * runs even on small shapes).  NULL when out of memory. */
sim_pool_t *sim_pool_new(unsigned nthreads, bool split_all);
/* Joins the workers; NULL is allowed. */
void sim_pool_destroy(sim_pool_t *p);
/* Threads available counting the caller (1 for NULL). */
unsigned sim_pool_threads(const sim_pool_t *p);
/* Run parts 0..parts-1.  A pool whose workers cannot be started runs every
 * part on the caller: the same results, one thread. */
void sim_pool_run(sim_pool_t *p, unsigned parts, sim_pool_fn fn, void *arg);
/* How many parts to split work of `work` units into: one per threshold
 * units, at most the pool's threads (1 below 2 x threshold; with
 * split_all, the pool's threads whatever the work). */
unsigned sim_pool_parts(const sim_pool_t *p, uint64_t work, uint64_t threshold);
/* The number of online CPUs (at least 1): the default --threads. */
unsigned sim_online_cpus(void);

#endif
