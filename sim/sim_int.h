/* sim_int.h - machine state shared by the simulator core files (sim.c,
 * loader.c, sync.c, dma.c, control.c, trace.c, stats.c).  Not a public
 * header: use sim.h.  Times are integer picoseconds ("ps") unless named
 * otherwise. */
#ifndef TPB_SIM_INT_H
#define TPB_SIM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "dueq.h"
#include "exec.h"
#include "ops.h"   /* SIM_PORTS */
#include "sim.h"

#define SIM_ENGINES 5            /* isa_tpb_engines order: PE ACT POOL DVE SP */
#define SIM_CALL_DEPTH 64
#define SIM_MAX_CORES 8
#define SIM_DMA_MAX_ENGINES 32
#define SIM_DMA_LANE_TID 100     /* trace tid = 100 + queue*8 + slot */
#define SIM_DMA_TRACE_SLOTS 8    /* slots per queue in the trace (dma_queue_depth beyond: last) */

/* A reference to the instruction (or DMA transfer) that did something:
 * used for `waited_for` and DMA `issuer` in the trace. */
typedef struct {
    int16_t core;                /* -1 = none */
    uint16_t tid;                /* trace tid: 1..5 engine, 100+ DMA lane */
    uint32_t pc;                 /* bundle index of the instruction */
    uint64_t start_ps;           /* start of that event; SIM_NO_TIME if unknown */
} sim_ref_t;
#define SIM_NO_TIME UINT64_MAX

typedef enum {
    ENG_READY,                   /* an ENGINE_STEP event is pending */
    ENG_WAIT_SEM,                /* blocked on its instruction's semaphore wait */
    ENG_WAIT_BARRIER,            /* arrived at a CoreBarrier, not released */
    ENG_BARRIER_RELEASED,        /* released; completes the barrier next step */
    ENG_DONE,
} sim_eng_state_t;

typedef struct {
    char *name;                  /* sidecar debug name, or NULL (in debug's block) */
    char *src;                   /* sidecar debug src path, or NULL (in debug's block) */
    char *buf;                   /* sidecar debug rotating buffers ("t#2/4"), or NULL */
} sim_debug_t;

/* What the run learnt about one class of identical compute instructions
 * (memo.c). */
#define SIM_NO_CLASS UINT32_MAX
typedef struct {
    uint64_t cost;               /* cycles (impl->cost), once cost_ok */
    bool cost_ok;
    bool checked;                /* --timing-only: a member passed its checks
                                    (pure opcodes only: sim_memo_pure) */
    bool ran;                    /* a member ran (its plan is made on the second) */
    struct sim_plan *plan;       /* the operands a member resolved (ops.h), or NULL */
    sim_fp_t *fp;                /* once checked: the memory a member touches (pipe.c) */
    uint64_t lat;                /* a member's result latency (pipe.c) */
    unsigned ports;              /* the shared ports a member needs (port.c) */
    bool ports_ok;               /* ports known for every member (a pure class) */
} sim_memo_t;

/* A result still in flight on its engine (pipe.c): the engine cycle at
 * which it is written and the regions written. */
#define SIM_FLY_REGIONS 4
#define SIM_FLY 8
typedef struct {
    uint64_t done;
    sim_region_t r[SIM_FLY_REGIONS];
    uint8_t n;
    bool all;                    /* writes counted as touching everything */
} sim_fly_t;

typedef struct {
    bool present;                /* has a stream */
    isa_engine_t id;
    unsigned slot;               /* 0..4 = index in isa_tpb_engines, tid-1 */
    isa_stream_t stream;
    sim_debug_t *debug;          /* [stream.count] or NULL; its strings follow it
                                    in the same block (sidecar.c) */
    size_t debug_bytes;          /* that block's size (tpb_array_free) */
    bool has_table;              /* the sidecar has a dve_table (LowerDVE) */
    uint32_t table[8];           /* its L2 opcodes (256-bit set) */
    uint64_t clk_mhz;            /* engine clock */
    uint32_t regs[ISA_NUM_REGS];
    float acc[128];
    sim_rng_t rng;               /* PRNG state (rng.c) */
    sim_scratch_t scratch;       /* operand offset tables (see exec.h) */
    sim_tap_memo_t tap_memo[SIM_TAP_MEMO]; /* checked linear patterns (exec.h) */
    sim_exec_ctx_t ctx;          /* what its compute ops see: built once (sim.c) */
    bool ctx_ok;
    uint32_t call_stack[SIM_CALL_DEPTH]; /* return instruction indices */
    unsigned call_depth;
    size_t idx;                  /* next instruction index */
    sim_eng_state_t state;
    uint64_t issue_ps;           /* when the engine reached insts[idx] */
    uint64_t edge_ps, edge_cycle; /* end of its last instruction: ps and engine cycle */
    bool due;                    /* a step is pending at due_t (sim_schedule_engine) */
    uint64_t due_t;
    uint8_t due_bit;             /* its tie order in sim_t.dueq: core * 8 + slot */
    uint64_t arrive_ps;          /* when its semaphore wait ended (barrier arrival) */
    uint64_t busy_ps, sem_wait_ps, barrier_wait_ps;
    uint64_t ninst;
    uint64_t pe_bg_cycles;       /* PE: cycles of the Matmul just run (background LS) */
    /* the result pipeline (pipe.c, docs/timing.md "Result latency") */
    sim_fp_t fp;                 /* the running compute instruction's operands */
    const sim_fp_t *cur_fp;      /* its footprint (fp or its class's), NULL: not a
                                    compute instruction or no result pipeline */
    uint64_t cur_lat;            /* its result latency, engine cycles (with cur_fp) */
    unsigned cur_ports;          /* the shared ports it needs (port.c SIM_PORT_*), 0 */
    uint64_t port_wait_ps;       /* waiting for a port another engine held */
    sim_fly_t fly[SIM_FLY];      /* results in flight, oldest first (ring from fly0) */
    unsigned fly0, nfly;
    uint64_t retire_cycle;       /* engine cycle by which every result issued is written */
    uint64_t flush_cycle;        /* results dropped from a full ring are written by then */
    sim_ref_t barrier_last;      /* the last arriver that released us */
    uint32_t barrier_seq;        /* the rendezvous it waits at: its core's arrival
                                    number at barriers of that cores mask */
    bool loops_checked;          /* trace: execs decided (sim_trace_iter) */
    uint32_t *execs;             /* trace, streams with a backward branch: times each
                                    instruction ran (its loop iteration), else NULL */
    uint32_t *cls;               /* [stream.count] instruction class (memo.c), or
                                    SIM_NO_CLASS; NULL: no classes (out of memory);
                                    in step's block */
    sim_memo_t *memo;            /* [nclasses] what the run learnt about each class */
    uint32_t nclasses;
    struct sim_step *step;       /* [stream.count] sim_step_of() each instruction
                                    (memo.c sim_memo_build) */
    size_t step_bytes;           /* its block's size (tpb_array_free), which
                                    holds cls too */
} sim_engine_t;

/* One descriptor queued by PseudoDmaDirect2d / PseudoDmaIndirect2d, with
 * the registers resolved at issue. */
typedef struct {
    const isa_decoded_t *d;
    uint32_t pc;
    uint8_t engine_slot;
    int64_t src_addr, dst_addr;  /* after register offsets */
    bool deferred;               /* bounded: its register-moved sides are checked
                                    against HBM at the trigger (dma.c) */
} sim_desc_t;

typedef struct sim_xfer {
    sim_desc_t *descs;
    unsigned ndesc;
    unsigned queue;
    sim_ref_t issuer;            /* the DmaTrigger */
    const isa_decoded_t *trigger;
    uint8_t engine_slot;
    size_t trigger_idx;
    uint64_t submit_ps, start_ps, end_ps;
    uint64_t bytes;
    bool skipped;                /* out of its trigger's bounds with oob skip: moves nothing */
    unsigned slot;               /* lowest slot free among its queue's transfers in flight */
    struct sim_xfer *next;
} sim_xfer_t;

typedef struct {
    sim_desc_t *pending;         /* queued, not yet triggered */
    unsigned npending, cap;
    sim_xfer_t *head, *tail;     /* submitted, in order; head completes first */
    sim_xfer_t *next_start;      /* first submitted transfer not started yet */
    unsigned inflight;           /* started, not completed (<= dma_queue_depth) */
    uint64_t last_end;           /* end of the last started transfer (in-order completion) */
    bool busy;                   /* a start event is pending */
    unsigned max_slot;           /* highest slot a completed transfer used (trace lanes) */
    uint32_t slots_busy;         /* bit k: a transfer in flight holds slot k */
    char *name;                  /* def.json, owned, or NULL */
    uint64_t bytes, transfers, descriptors, busy_ps;
    uint64_t bytes_to_hbm;       /* of bytes: transfers whose destination is HBM */
} sim_queue_t;

typedef struct {
    uint32_t value;
    sim_ref_t last_writer;
    uint32_t wake_at;            /* the least value that an engine blocked on it
                                    needs (UINT32_MAX: none; kept by sim.c
                                    pass_wait and sync.c wake_waiters) */
    char *name;                  /* def.json, owned, or NULL */
} sim_sem_t;

typedef struct {
    unsigned index;
    char dir[4096];
    sim_engine_t eng[SIM_ENGINES];
    sim_sem_t sem[ISA_NUM_SEMAPHORES];
    sim_queue_t *queues;         /* [target->dma_queues] */
    uint64_t dma_engine_free[SIM_DMA_MAX_ENGINES]; /* ps */
    uint64_t dma_engine_busy_ps[SIM_DMA_MAX_ENGINES], dma_engine_bytes[SIM_DMA_MAX_ENGINES];
    uint64_t dma_hbm_free;       /* ps: the core's HBM bandwidth share is booked up to here */
    uint64_t dge_free[4];        /* ps: each hardware DGE instance is busy up to here */
    unsigned dma_nactive;        /* transfers in flight on the core */
    uint64_t dma_active_since, dma_active_ps; /* union of in-flight time */
    unsigned dma_rr;             /* round-robin pointer across queues */
    uint8_t *sbuf, *psum;         /* tpb_array_zalloc'ed (common/hugepage.h) */
    uint8_t *sbuf_init, *psum_init;
    size_t sbuf_bytes, psum_bytes; /* their sizes (tpb_array_free) */
    sim_lazy_t sbuf_z, psum_z;   /* their sentinel, filled on first use (lazy.h) */
    sim_pe_state_t *pe;
    uint32_t barrier_seq[256];   /* CoreBarrier arrivals so far, per cores mask */
    uint8_t sem_waiters;         /* bit per engine slot in ENG_WAIT_SEM (sync.c) */
    /* the memory ports two engines share (port.c): held up to free_ps
     * (ps) by an instruction of engine `owner` */
    struct { uint64_t free_ps; int owner; } port[SIM_PORTS];
} sim_core_t;

/* One rendezvous: the seq-th CoreBarrier of every core in mask (a barrier
 * is a remote semaphore signal to each peer and a local wait: cores meet by
 * counting, the id is the instruction's label). */
typedef struct {
    uint32_t id;                 /* the first arriver's barrier id (reports) */
    uint32_t seq;
    uint32_t mask;               /* participants */
    uint32_t arrived;
    uint64_t last_ps;
    sim_ref_t last;
} sim_barrier_t;

typedef enum {
    EV_SEM = 0,                  /* apply a semaphore update */
    EV_DMA_DONE = 1,
    EV_DMA_START = 2,
    EV_ENGINE = 3,               /* an engine step: not a heap event, sorts last */
} sim_ev_kind_t;

/* Tie order of events at one time: kind, core, unit, then insertion order,
 * packed into one word (kind 2 bits | core 3 | unit 16 | sequence 43). */
#define SIM_EV_SEQ_BITS 43
_Static_assert(SIM_MAX_CORES <= 8 && EV_ENGINE <= 3, "event order packs core in 3 bits, kind in 2");
_Static_assert(SIM_MAX_CORES * 8 <= SIM_DUEQ_MAX && SIM_ENGINES <= 8,
               "sim_t.dueq holds one entry per (core, engine slot): core * 8 + slot");
static inline uint64_t sim_ev_order(unsigned kind, unsigned core, unsigned unit, uint64_t seq)
{
    return (uint64_t)kind << 62 | (uint64_t)core << 59 | (uint64_t)unit << SIM_EV_SEQ_BITS |
           (seq & ((1ull << SIM_EV_SEQ_BITS) - 1));
}

typedef struct {
    uint64_t t;                  /* ps */
    uint64_t ord;                /* sim_ev_order(): fixed tie order (set by sim_heap_push) */
    uint8_t kind, core;
    uint16_t unit;               /* engine slot, queue, or semaphore */
    uint32_t val;                /* EV_SEM: op<<24 | value; EV_DMA_START: queue */
    sim_ref_t ref;               /* EV_SEM: writer */
} sim_event_t;

typedef struct {
    sim_event_t *v;
    size_t n, cap;
    uint64_t seq;
} sim_heap_t;

/* ---- trace records (kept only with opt.trace) ---- */
typedef struct {
    uint64_t issue_ps, start_ps, end_ps;
    uint32_t idx;
    uint8_t core, slot;
    uint8_t wait_kind;           /* 0 none, 1 semaphore, 2 barrier */
    sim_ref_t waited_for;
    uint64_t port_ps;            /* of the wait, for a port another engine held (port.c) */
    uint32_t iter;               /* earlier runs of this instruction (rolled loops),
                                    UINT32_MAX = not in a stream with loops */
} sim_tr_inst_t;

typedef struct {
    uint64_t start_ps, end_ps, bytes;
    uint8_t core;
    uint16_t queue;
    uint8_t slot;                /* position among the queue's transfers in flight */
    uint32_t ndesc;
    sim_ref_t issuer;
} sim_tr_dma_t;

typedef struct {
    uint64_t t;
    uint8_t core;
    uint8_t sem;
    uint32_t value;
} sim_tr_sem_t;

typedef struct {
    sim_tr_inst_t *inst; size_t ninst, cinst;
    sim_tr_dma_t *dma;   size_t ndma, cdma;
    sim_tr_sem_t *sem;   size_t nsem, csem;
    bool oom;
} sim_trace_t;

typedef struct {
    char *name;
    char *kind;                  /* input output constant scratch */
    unsigned dtype;
    int ndim;
    int64_t shape[NPY_MAX_DIMS];
    uint64_t addr, bytes;
    char *file;
    char *print_prefix;          /* device_print debug buffer: its prefix, or NULL */
    bool bound;                  /* input supplied */
    bool sentinel_pending;       /* HBM range not yet filled with the sentinel (loader.c) */
} sim_tensor_t;

struct sim {
    sim_options_t opt;
    const tpb_target_t *t;
    char dir[4096];
    char *kernel;
    cJSON *placement;            /* placement.json of a launch grid, or NULL */
    unsigned ncores;
    sim_core_t *cores;
    uint8_t *hbm;
    uint8_t *hbm_init;           /* --check-uninit */
    uint64_t hbm_bytes;
    size_t hbm_alloc;            /* hbm's and hbm_init's size (tpb_array_free) */
    sim_tensor_t *tensors;
    unsigned ntensors;
    sim_barrier_t *barriers;
    unsigned nbarriers, cbarriers;
    sim_heap_t heap;
    sim_dueq_t dueq;             /* engines with a pending step, in step order (dueq.h) */
    uint64_t sem_lat_ps;         /* semaphore update latency (set by sim_run) */
    uint64_t now;                /* ps */
    uint64_t max_ps;
    uint64_t end_ps;
    uint64_t ninst;
    uint64_t by_class[ISA_CLASS_COUNT];
    uint64_t next_progress;
    uint64_t ref_mhz;
    bool ran;
    sim_err_class_t err_class;   /* why sim_run failed (sim_error_class) */
    sim_pool_t *pool;            /* --threads > 1: workers for large instructions (sim_run) */
    double wall_seconds;
    char **warnings;
    unsigned nwarnings;
    sim_trace_t tr;
    uint64_t dma_lat_ps;
    const sim_opimpl_t *impl[ISA_OP_COUNT]; /* sim_opimpl() of each opcode (sim_load) */
    bool impl_pe[ISA_OP_COUNT];             /* the opcode is the PE's */
};

/* ---- sim.c ---- */
/* a happens before b: time, then the tie order */
static inline bool sim_ev_before(const sim_event_t *a, const sim_event_t *b)
{
    return a->t != b->t ? a->t < b->t : a->ord < b->ord;
}
int sim_heap_grow(sim_heap_t *h, tpb_err_t *err);
/* Give an event its fixed tie order (its insertion order is now). */
static inline void sim_heap_stamp(sim_heap_t *h, sim_event_t *ev)
{
    ev->ord = sim_ev_order(ev->kind, ev->core, ev->unit, h->seq++);
}
/* Queue an event stamped by sim_heap_stamp. */
static inline int sim_heap_insert(sim_t *s, const sim_event_t *ev, tpb_err_t *err)
{
    sim_heap_t *h = &s->heap;
    if (h->n == h->cap && sim_heap_grow(h, err) != 0)
        return -1;
    const sim_event_t x = *ev;
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!sim_ev_before(&x, &h->v[p]))
            break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = x;
    return 0;
}
/* Queue an event (its ord is set here).  Inline: every instruction that
 * updates a semaphore pushes one. */
static inline int sim_heap_push(sim_t *s, const sim_event_t *ev, tpb_err_t *err)
{
    sim_event_t x = *ev;
    sim_heap_stamp(&s->heap, &x);
    return sim_heap_insert(s, &x, err);
}
/* Replace the top event v[0] (read it first) by ev, stamped by
 * sim_heap_stamp: one sift-down instead of sim_heap_drop and then
 * sim_heap_insert (an engine's hot loop applies an update and queues its
 * own).  The pop order is the same: events are ordered by (t, ord) alone. */
static inline void sim_heap_replace_top(sim_heap_t *h, const sim_event_t *ev)
{
    size_t n = h->n, i = 0;
    sim_event_t *v = h->v;
    for (;;) {
        size_t l = 2 * i + 1, m = l;
        if (l >= n)
            break;
        if (l + 1 < n && sim_ev_before(&v[l + 1], &v[l]))
            m = l + 1;
        if (!sim_ev_before(&v[m], ev))
            break;
        v[i] = v[m];
        i = m;
    }
    v[i] = *ev;
}
/* Remove the top event v[0] (read it first): the last one takes its place
 * and sifts down from the root, compared where it lies (v[n] is outside
 * the shrunk heap, so nothing is copied out first). */
static inline void sim_heap_drop(sim_heap_t *h)
{
    size_t n = --h->n;
    if (n)
        sim_heap_replace_top(h, &h->v[n]);
}
/* Let engine e take its next step at time t (ps).  Inline: once per
 * instruction when engines interleave. */
static inline void sim_schedule_engine(sim_t *s, sim_engine_t *e, uint64_t t)
{
    if (e->due)
        sim_dueq_remove(&s->dueq, e->due_bit);
    sim_dueq_insert(&s->dueq, t, e->due_bit);
    e->due = true;
    e->due_t = t;
}
/* Take the run's next step when it is an engine's, as the run loop
 * (sim.c sim_run) would: the first due engine (dueq.h), when no heap event
 * comes before it (they sort first at equal times) and it is within
 * --max-cycles.  Then *c and *e are that engine, no longer due, and s->now
 * its time; false: left to the run loop.  An engine that yields takes the
 * next step this way (sim.c engine_run), without a return to the run loop
 * per instruction when engines interleave. */
static inline bool sim_take_next_engine(sim_t *s, sim_core_t **c, sim_engine_t **e)
{
    if (!s->dueq.n)
        return false;
    sim_due_t o = sim_dueq_first(&s->dueq);
    if ((s->heap.n && s->heap.v[0].t <= o.t) || o.t > s->max_ps)
        return false;
    sim_dueq_pop(&s->dueq);
    *c = &s->cores[o.bit >> 3];
    *e = &(*c)->eng[o.bit & 7];
    (*e)->due = false;
    s->now = o.t;
    return true;
}
/* Prefix for errors about instruction idx of engine e on core c:
 * "core 0 SP instruction 3 (pc 3) PseudoDmaDirect2d: ". */
int sim_inst_errf(tpb_err_t *err, const sim_core_t *c, const sim_engine_t *e, size_t idx,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void sim_add_warning(sim_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t sim_mhz(double ghz);
#define SIM_PS_EPS 4             /* ps rounding tolerance, see sim_ps_to_cycle_ceil */
/* Exact clock conversions: time of cycle c of a clock (rounded up to ps),
 * and the first clock edge at or after ps. */
static inline uint64_t sim_cycle_to_ps(uint64_t c, uint64_t mhz)
{
    return (c / mhz) * 1000000ull + ((c % mhz) * 1000000ull + mhz - 1) / mhz;
}
uint64_t sim_ps_to_cycle_ceil(uint64_t ps, uint64_t mhz);
/* A duration in ps as reference cycles, rounded to nearest. */
uint64_t sim_ps_dur_to_ref(const tpb_target_t *t, uint64_t ps);

/* ---- sync.c ---- */
/* The update event of header h on the semaphores of `core` at t. */
static inline sim_event_t sim_sync_event(const isa_sync_t *h, unsigned core, uint64_t t,
                                         sim_ref_t writer)
{
    return (sim_event_t){ .t = t, .kind = EV_SEM, .core = (uint8_t)core,
                          .unit = (uint16_t)h->upd_sem,
                          .val = (uint32_t)h->upd_op << 24 | (h->upd_val & 0xFFFFu),
                          .ref = writer };
}
/* sim_sync_schedule_update of a remote update (checks upd_core). */
int sim_sync_schedule_remote(sim_t *s, sim_core_t *c, const isa_sync_t *h, uint64_t t,
                             sim_ref_t writer, const sim_engine_t *e, size_t idx, tpb_err_t *err);
/* Schedule the header update of d (local or remote) to apply at t.
 * Inline: most compute instructions update a semaphore. */
static inline int sim_sync_schedule_update(sim_t *s, sim_core_t *c, const isa_sync_t *h,
                                           uint64_t t, sim_ref_t writer, const sim_engine_t *e,
                                           size_t idx, tpb_err_t *err)
{
    if (h->upd_remote)
        return sim_sync_schedule_remote(s, c, h, t, writer, e, idx, err);
    sim_event_t ev = sim_sync_event(h, c->index, t, writer);
    return sim_heap_push(s, &ev, err);
}
/* The value a wait needs: wait_val, plus register r(64 - wait_reg) of the
 * waiting engine for a register-relative wait (wait_reg 1..15; rolled
 * loops, docs/compiler.md "Rolled loops"). */
static inline uint32_t sim_sync_wait_value(const sim_engine_t *e, const isa_sync_t *h)
{
    return h->wait_reg ? h->wait_val + e->regs[ISA_NUM_REGS - h->wait_reg] : h->wait_val;
}
/* Apply an EV_SEM event; wakes waiters. */
int sim_sync_apply_slow(sim_t *s, const sim_event_t *ev, tpb_err_t *err);
/* The usual update inline: an increment that cannot overflow, no trace
 * to record and no engine of the core that the update wakes (a final
 * store may wait on it all run long: the semaphore's wake_at says what
 * the engines blocked on it need, without a look at each); everything else (other ops, errors,
 * wake-ups, trace) in sim_sync_apply_slow. */
static inline int sim_sync_apply(sim_t *s, const sim_event_t *ev, tpb_err_t *err)
{
    sim_core_t *c = &s->cores[ev->core];
    sim_sem_t *S = &c->sem[ev->unit];
    if ((ev->val >> 24) != ISA_SEMOP_SEM_INC || s->opt.trace)
        return sim_sync_apply_slow(s, ev, err);
    /* wakes an engine, or overflows (value UINT32_MAX; wake_at <= UINT32_MAX) */
    if ((uint64_t)S->value + 1 >= S->wake_at)
        return sim_sync_apply_slow(s, ev, err);
    S->value++;
    S->last_writer = ev->ref;
    return 0;
}
/* true when the wait of h is satisfied on core c */
static inline bool sim_sync_wait_ok(const sim_core_t *c, const sim_engine_t *e,
                                    const isa_sync_t *h)
{
    return !h->wait_en || c->sem[h->wait_sem].value >= sim_sync_wait_value(e, h);
}
/* Arrive at a CoreBarrier; returns 1 if the engine must block, 0 if the
 * barrier released (all arrived), -1 on error. */
int sim_barrier_arrive(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                       uint64_t t, tpb_err_t *err);
/* Describe what a blocked engine waits for (deadlock report). */
void sim_describe_block(const sim_t *s, const sim_core_t *c, const sim_engine_t *e,
                        char *buf, size_t len);

/* ---- control.c ---- */
/* Execute a control instruction: sets *next (instruction index; SIZE_MAX
 * = engine done).  Returns 0 or -1. */
int sim_control_exec(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                     size_t *next, tpb_err_t *err);

/* ---- pe_timing.c ---- */
/* PE cycles of op after background-LS overlap; *bg carries the previous
 * Matmul's cycles (0 otherwise); no_wait: the op was ready when PE was. */
uint64_t sim_pe_pipelined_cycles(uint64_t *bg, isa_op_t op, uint64_t cycles, bool no_wait);

/* ---- dma.c ---- */
int sim_dma_descriptor(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, tpb_err_t *err);
/* hbmcheck.c: load-time audit that every statically known HBM read of the
 * stream's DMA descriptors lies inside a tensor of the tensor map */
int sim_check_hbm_reads(const sim_t *s, const sim_core_t *c, const sim_engine_t *e,
                        tpb_err_t *err);
int sim_dma_trigger(sim_t *s, sim_core_t *c, sim_engine_t *e, size_t idx, uint64_t t,
                    tpb_err_t *err);
int sim_dma_start(sim_t *s, sim_core_t *c, unsigned queue, tpb_err_t *err);
int sim_dma_done(sim_t *s, sim_core_t *c, unsigned queue, tpb_err_t *err);
/* The header's "at complete" update fires when the DMA transfer completes
 * (a DmaTrigger's, and a descriptor's remote semaphore), not at issue. */
static inline bool sim_dma_upd_at_transfer_end(const isa_inst_t *in)
{
    if (in->op == ISA_OP_DMA_TRIGGER)
        return true;
    return (isa_op_is_direct_dma(in->op) || in->op == ISA_OP_DMA_INDIRECT2D) &&
           in->sync.upd_remote;
}
void sim_dma_free(sim_core_t *c, unsigned nqueues);
/* Bytes of a transfer assigned to each DMA engine and the resulting
 * duration (exposed for the timing tests through docs/timing.md). */
unsigned sim_dma_row_eff_permille(const tpb_target_t *t, uint64_t run_bytes);
uint64_t sim_dma_row_cost(const tpb_target_t *t, uint64_t bytes, uint64_t run_bytes);
uint64_t sim_dma_cost_ps(const tpb_target_t *t, uint64_t cost);

/* ---- trace.c ---- */
void sim_trace_inst(sim_t *s, const sim_tr_inst_t *r);
void sim_trace_dma(sim_t *s, const sim_tr_dma_t *r);
void sim_trace_sem(sim_t *s, unsigned core, unsigned sem, uint32_t value);
void sim_trace_free(sim_trace_t *tr);

/* ---- sidecar.c ---- */
/* Fill e->debug from the text buf[0..len) of the sidecar `path` (needs
 * e->stream).  fast = false skips the plain-JSON scanner and uses cJSON
 * only (the tests compare the two; results and errors are the same);
 * *scanned (may be NULL) tells whether the scanner handled the text. */
int sim_sidecar_parse(sim_engine_t *e, const char *path, const uint8_t *buf, size_t len,
                      bool fast, bool *scanned, tpb_err_t *err);
void sim_debug_free(sim_engine_t *e);

/* ---- memo.c ---- */
/* Make e's step records (e->step; -1 with err set when out of memory), and
 * group its compute instructions into classes of identical ones (e->cls,
 * e->memo); without memory for those, leaves e without classes (nothing
 * is remembered, the run is the same). */
int sim_memo_build(sim_engine_t *e, const sim_opimpl_t *const *impl, tpb_err_t *err);
void sim_memo_free(sim_engine_t *e);
/* true when d's --timing-only execution is only a check of d itself */
bool sim_memo_pure(const isa_decoded_t *d);

/* What the engine's hot loop reads of an instruction, copied at load into
 * 16 bytes (memo.c sim_step_of): the header's wait and update, the pc, the
 * opcode's class, and when the update is scheduled.  A --timing-only run
 * of a class already checked (memo.c) then never reads the 368-byte
 * decoded instruction, whose stream is much larger than the caches. */
enum {
    SIM_STEP_UPD_READ = 1,       /* update at its start + latency (upd_at_read) */
    SIM_STEP_UPD_END = 2,        /* update at its end + latency (not at a DMA
                                    transfer's end: sim_dma_upd_at_transfer_end) */
    SIM_STEP_UPD_REMOTE = 4,     /* that update is on core upd_core (upd_remote) */
    SIM_STEP_WAIT = 8,           /* wait_en */
    SIM_STEP_BARRIER = 16,       /* a CoreBarrier */
};
typedef struct sim_step {
    uint32_t pc;                 /* bundle index (isa_decoded_t.pc) */
    uint32_t wait_val;           /* the header's fields of the same names */
    uint16_t upd_val;
    uint8_t flags;               /* SIM_STEP_* */
    uint8_t cls;                 /* isa_ops[op].cls (statistics) */
    uint8_t wait_sem, wait_reg, upd_sem, upd_op;
} sim_step_t;
_Static_assert(sizeof(sim_step_t) == 16, "one step record is 16 bytes");
sim_step_t sim_step_of(const isa_decoded_t *d);
/* sim_sync_wait_value and sim_sync_event of the step's header copy */
static inline uint32_t sim_step_wait_value(const sim_engine_t *e, const sim_step_t *st)
{
    return st->wait_reg ? st->wait_val + e->regs[ISA_NUM_REGS - st->wait_reg] : st->wait_val;
}
static inline sim_event_t sim_step_event(const sim_step_t *st, unsigned core, uint64_t t,
                                         sim_ref_t writer)
{
    return (sim_event_t){ .t = t, .kind = EV_SEM, .core = (uint8_t)core, .unit = st->upd_sem,
                          .val = (uint32_t)st->upd_op << 24 | st->upd_val, .ref = writer };
}

/* ---- pipe.c: results in flight on an engine ---- */
/* The first engine cycle >= c0 at which an instruction touching fp may
 * start: after every result in flight that it reads or overwrites. */
uint64_t sim_pipe_ready(sim_engine_t *e, const sim_fp_t *fp, uint64_t c0);
/* An instruction leaves the engine at cycle end with a result latency of
 * lat cycles: returns the cycle at which its result is written (results
 * are written in program order) and keeps fp's writes in flight until then. */
uint64_t sim_pipe_issue(sim_engine_t *e, const sim_fp_t *fp, uint64_t end, uint64_t lat);

/* ---- port.c (what an instruction needs: ops.h) ---- */
/* The time (ps) from which engine e may use every port of `ports`: when
 * the last instruction of another engine holding one is done. */
uint64_t sim_port_free(const sim_core_t *c, unsigned ports, isa_engine_t e);
/* Engine e's instruction holds `ports` until end (ps). */
void sim_port_hold(sim_core_t *c, unsigned ports, isa_engine_t e, uint64_t end);

/* ---- loader.c ---- */
/* --timing-only: count inputs not supplied as bound and written (loader.c). */
void sim_inputs_timing_only(sim_t *s);
void sim_fill_pending(sim_t *s);
int sim_load_artifacts(sim_t *s, const char *dir, tpb_err_t *err);
const sim_tensor_t *sim_find_tensor(const sim_t *s, const char *name);

#endif
