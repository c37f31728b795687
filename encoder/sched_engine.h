/* sched_engine.h - the engine of an instruction that names none, chosen
 * by workload (docs/compiler.md "Engines and queues", "Balancing").
 * Private to sched_queues.c and its tests. */
#ifndef TPB_SCHED_ENGINE_H
#define TPB_SCHED_ENGINE_H

#include <stdint.h>

#include "backend.h"
#include "target.h"

/* Recent writers of memory, direct-mapped on the access's start
 * (space, first partition, first byte): who wrote it and when it is done. */
#define SENG_WRITERS 4096
#define SENG_MIRRORS 8

typedef struct {
    uint64_t key;   /* 0: empty */
    uint64_t done;  /* estimated completion, ps */
    int8_t engine;  /* -1: a DMA transfer */
} seng_writer_t;

/* An iteration of a rolled-loop candidate after its first: its ops map to
 * the first iteration's by `delta`, up to op `end`. */
typedef struct {
    int end, delta;
} seng_mirror_t;

typedef struct {
    const tpb_target_t *t;
    bool on;                        /* some instruction has a choice */
    uint64_t avail[ISA_ENG_COUNT];  /* each engine's estimated busy end, ps */
    /* the DVE/Pool shared port (sim/port.c: trn1's SBUF, trn2's perf-mode
     * bus): held up to bus_free by an instruction of engine bus_owner */
    uint64_t bus_free;
    int bus_owner;
    bool pick_bus;                  /* seng_pick's choice takes that port */
    uint64_t sem_ps;                /* cross-engine semaphore hand-off */
    seng_writer_t *w;               /* [SENG_WRITERS] */
    /* rolled-loop candidates: their iterations get the first's engines */
    const sched_rr_event_t *ev;
    int nev, nextev;
    int *first0;                    /* [nslots] op of each candidate's first iteration */
    int *next_start;                /* [nev] the next iteration's start op, or -1 */
    int *len;                       /* [nslots] op count of an iteration */
    int *op_first;                  /* [nops] first instruction of each tile-IR op, -1 */
    int nops;
    seng_mirror_t mir[SENG_MIRRORS];
    int nmir;
    int pick_i, pick_e;             /* seng_pick's last answer and its finish */
    uint64_t pick_end;
    uint64_t pick_cost;             /* its cost on pick_e, ps (its result latency included) */
} seng_t;

/* The engines inst may run on with the same values as on its default
 * engine (0 when it names one or has no choice). */
unsigned seng_choices(const tpb_target_t *t, const bir_inst_t *in);
/* The state for block b (off when nothing has a choice); -1 when out of
 * memory. */
int seng_init(seng_t *s, const tpb_target_t *t, const bir_block_t *b, const sched_rr_event_t *ev,
              int nev, int nslots);
void seng_free(seng_t *s);
/* Instruction i of b reached (before seng_pick / seng_note): the loop
 * events up to its op. */
void seng_enter(seng_t *s, const bir_block_t *b, int i);
/* The engine for instruction i of b (unassigned, choices `cand` from
 * seng_choices, default engine `def`). */
int seng_pick(seng_t *s, const bir_block_t *b, int i, unsigned cand, int def);
/* Instruction i of b, its engine set, into the estimate. */
void seng_note(seng_t *s, const bir_block_t *b, int i);

#endif
