/* sim.c - machine state, the event scheduler and engine sequencing.
 *
 * Events happen in the order (time in ps, kind, core, unit, insertion
 * order): semaphore updates and DMA events in a binary heap, engine steps
 * on the engines themselves (at most one pending each; they sort last at
 * equal times).  Each engine issues its decoded stream in order; an
 * instruction starts when its semaphore wait holds and the engine is free,
 * executes its semantics at its start time, and occupies the engine for its
 * cost.  While nothing else comes before the engine's next start, the
 * engine keeps issuing inline (the hot loop), applying semaphore updates
 * that fall due in between.  See docs/timing.md. */
#include "hugepage.h"
#include "prefetch.h"
#include "sim_int.h"
#include "ops.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sim_options_default(sim_options_t *o)
{
    memset(o, 0, sizeof *o);
    o->max_cycles = SIM_DEFAULT_MAX_CYCLES;
}

uint64_t sim_mhz(double ghz)
{
    uint64_t m = (uint64_t)(ghz * 1000.0 + 0.5);
    return m ? m : 1;
}

uint64_t sim_ps_to_cycle_ceil(uint64_t ps, uint64_t mhz)
{
    /* every ps time is an exact time rounded up by < SIM_PS_EPS ps, so step
     * back by the tolerance before rounding up to the next clock edge */
    ps = ps > SIM_PS_EPS ? ps - SIM_PS_EPS : 0;
    return (ps / 1000000ull) * mhz + ((ps % 1000000ull) * mhz + 999999ull) / 1000000ull;
}

uint64_t sim_cycles_to_ps(double ghz, uint64_t n)
{
    return sim_cycle_to_ps(n, sim_mhz(ghz));
}

uint64_t sim_ps_to_ref_cycles(const tpb_target_t *t, uint64_t ps)
{
    uint64_t mhz = sim_mhz(t->clk_ref);
    return (ps / 1000000ull) * mhz + (ps % 1000000ull) * mhz / 1000000ull;
}

uint64_t sim_ps_dur_to_ref(const tpb_target_t *t, uint64_t ps)
{
    uint64_t mhz = sim_mhz(t->clk_ref);
    return (ps / 1000000ull) * mhz + ((ps % 1000000ull) * mhz + 500000ull) / 1000000ull;
}

/* Reference cycles covering [0, ps): the end of the last activity. */
static uint64_t ps_to_ref_ceil(const tpb_target_t *t, uint64_t ps)
{
    return sim_ps_to_cycle_ceil(ps, sim_mhz(t->clk_ref));
}

int sim_inst_errf(tpb_err_t *err, const sim_core_t *c, const sim_engine_t *e, size_t idx,
                  const char *fmt, ...)
{
    if (!err)
        return -1;
    char body[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    const isa_decoded_t *d = idx < e->stream.count ? &e->stream.insts[idx] : NULL;
    snprintf(err->msg, sizeof err->msg, "core %u %s instruction %zu (pc %u) %s: %s", c->index,
             isa_engine_name(e->id), idx, d ? d->pc : 0,
             d ? isa_ops[d->inst.op].mnemonic : "?", body);
    return -1;
}

void sim_add_warning(sim_t *s, const char *fmt, ...)
{
    if (s->nwarnings >= 64)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **w = realloc(s->warnings, (s->nwarnings + 1) * sizeof *w);
    if (!w)
        return;
    s->warnings = w;
    s->warnings[s->nwarnings] = strdup(buf);
    if (s->warnings[s->nwarnings])
        s->nwarnings++;
}

/* ---- event heap ---- */

int sim_heap_grow(sim_heap_t *h, tpb_err_t *err)
{
    size_t nc = h->cap ? h->cap * 2 : 64;
    sim_event_t *v = realloc(h->v, nc * sizeof *v);
    if (!v)
        return tpb_errf(err, "out of memory (event queue)");
    h->v = v;
    h->cap = nc;
    return 0;
}

static sim_event_t heap_pop(sim_heap_t *h)
{
    sim_event_t top = h->v[0];
    sim_heap_drop(h);
    return top;
}

/* Engine steps are not heap events: each engine has at most one pending
 * step (due, due_t), and the run loop takes the earliest of the heap top and
 * the first due engine.  Every other event kind sorts before an engine step
 * at the same time, and due engines tie-break by (core, slot) -- the order
 * the heap would give them -- at a fraction of the cost of a push and a pop
 * per instruction when several engines interleave.  The due engines are
 * kept in step order (dueq.h, sim_int.h sim_schedule_engine). */

/* e is the first due engine (first_due_engine) */
static void unschedule_first(sim_t *s, sim_engine_t *e)
{
    e->due = false;
    sim_dueq_pop(&s->dueq);
}

static void push_engine(sim_t *s, sim_engine_t *e, uint64_t t)
{
    e->state = e->state == ENG_BARRIER_RELEASED ? ENG_BARRIER_RELEASED : ENG_READY;
    sim_schedule_engine(s, e, t);
}

/* The due engine that steps first (earliest time, then core, then slot), or
 * NULL. */
static sim_engine_t *first_due_engine(sim_t *s, sim_core_t **core)
{
    if (!s->dueq.n)
        return NULL;
    unsigned b = sim_dueq_first(&s->dueq).bit;
    *core = &s->cores[b >> 3];
    return &(*core)->eng[b & 7];
}

/* true when the engine may keep issuing at time t without yielding: no
 * heap event and no other engine step comes first (e itself is running,
 * not due) */
static bool may_continue(const sim_t *s, const sim_engine_t *e, uint64_t t)
{
    if (s->heap.n && s->heap.v[0].t <= t)
        return false; /* other kinds sort before engine steps at equal times */
    if (!s->dueq.n)
        return true;
    sim_due_t o = sim_dueq_first(&s->dueq);
    return o.t != t ? t < o.t : e->due_bit < o.bit;
}

/* true when the next thing to happen before the running engine's step at
 * t is a semaphore update on the heap (no other engine steps before it; the
 * running engine is not due) */
static bool sem_event_next(const sim_t *s, uint64_t t)
{
    if (!s->heap.n || s->heap.v[0].kind != EV_SEM || s->heap.v[0].t > t)
        return false;
    return !s->dueq.n || s->heap.v[0].t <= sim_dueq_first(&s->dueq).t;
}

/* ---- one instruction ---- */

/* The class's operand plan (ops.h sim_plan_t), made when a second member
 * runs (a class that runs once never needs one); none with --check-uninit,
 * whose check depends on what was written since. */
static sim_plan_t *class_plan(const sim_core_t *c, sim_memo_t *m)
{
    if (!m->plan && m->ran && !c->sbuf_init && !c->psum_init)
        m->plan = calloc(1, sizeof *m->plan); /* NULL: resolve in full */
    m->ran = true;
    return m->plan;
}

static int exec_compute(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                        uint64_t *cycles, tpb_err_t *err)
{
    /* a class member already passed the same timing-only checks (memo.c),
     * so the opcode has an implementation */
    uint32_t k = e->cls ? e->cls[e->idx] : SIM_NO_CLASS;
    sim_memo_t *m = k != SIM_NO_CLASS ? &e->memo[k] : NULL;
    if (m && m->checked) {
        *cycles = m->cost;
        e->cur_fp = m->fp;
        e->cur_lat = m->lat;
        e->cur_ports = m->ports;
        return 0;
    }
    const sim_opimpl_t *impl = d->inst.op < ISA_OP_COUNT ? s->impl[d->inst.op] : NULL;
    if (!impl || !impl->exec || !impl->cost)
        return sim_inst_errf(err, c, e, e->idx, "opcode %s has no implementation",
                             isa_ops[d->inst.op].mnemonic);
    /* the PE array state (230 KB): allocated when a core first uses it */
    if (!c->pe && s->impl_pe[d->inst.op] && !(c->pe = calloc(1, sizeof *c->pe)))
        return sim_inst_errf(err, c, e, e->idx, "out of memory (PE state)");
    /* the same for every instruction of the engine (memories, its
     * registers); rebuilt once the PE state exists or err changes */
    if (!e->ctx_ok || e->ctx.pe != c->pe || e->ctx.err != err) {
        e->ctx = (sim_exec_ctx_t){
            .target = s->t, .core = (int)c->index, .engine = e->id,
            .sbuf = c->sbuf, .psum = c->psum,
            .sbuf_pb = s->t->sbuf_partition_bytes, .psum_pb = s->t->psum_partition_bytes,
            .sbuf_init = c->sbuf_init, .psum_init = c->psum_init, .pe = c->pe,
            .sbuf_z = &c->sbuf_z, .psum_z = &c->psum_z,
            .acc = e->acc, .regs = e->regs, .rng = &e->rng,
            .timing_only = s->opt.timing_only, .pool = s->pool, .scratch = &e->scratch,
            .tap_memo = e->tap_memo, .err = err,
            .fp = sim_engine_result_latency(s->t, e->id) || sim_port_reads_operands(s->t, e->id)
                      ? &e->fp : NULL,
        };
        e->ctx_ok = true;
    }
    e->ctx.plan = m ? class_plan(c, m) : NULL;
    e->ctx.plan_i = 0;
    sim_scratch_reset(&e->scratch);
    if (err)
        err->msg[0] = 0;
    e->ctx.data_fail = false;
    e->fp.n = 0;
    e->fp.all = false;
    if (impl->exec(&e->ctx, d) != 0) {
        s->err_class = e->ctx.data_fail ? SIM_ERR_RUN : SIM_ERR_FIELD;
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err && err->msg[0] ? err->msg : "failed");
        return sim_inst_errf(err, c, e, e->idx, "%s", why);
    }
    e->cur_fp = e->ctx.fp;
    e->cur_lat = e->ctx.fp ? sim_result_latency(s->t, e->id, d->inst.op) : 0;
    /* a pure class's members touch the same memory (memo.c): their ports
     * once */
    if (m && m->ports_ok) {
        e->cur_ports = m->ports;
    } else {
        e->cur_ports = sim_port_needs(s->t, e->id, d, e->cur_fp);
        if (m && sim_memo_pure(d)) {
            m->ports = e->cur_ports;
            m->ports_ok = true;
        }
    }
    if (!m) {
        *cycles = impl->cost(s->t, e->id, d);
        return 0;
    }
    if (!m->cost_ok) {
        m->cost = impl->cost(s->t, e->id, d);
        m->cost_ok = true;
    }
    *cycles = m->cost;
    bool checked = s->opt.timing_only && !c->sbuf_init && !c->psum_init && sim_memo_pure(d);
    /* a checked member skips its execution: its class keeps the memory it
     * touches (a pure opcode's operands are its fields') */
    if (checked && e->cur_fp && !m->fp) {
        m->fp = malloc(sizeof *m->fp);
        if (m->fp)
            *m->fp = *e->cur_fp;
        else
            checked = false;
    }
    m->lat = e->cur_lat;   /* (m->ports: set above, a checked class is pure) */
    m->checked = checked;
    return 0;
}

static int dispatch(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                    uint64_t start, uint64_t *cycles, size_t *next, tpb_err_t *err)
{
    *cycles = s->t->seq_issue_cycles;
    *next = e->idx + 1;
    switch (d->inst.op) {
    case ISA_OP_NOP:
    case ISA_OP_CORE_BARRIER:
        return 0;
    case ISA_OP_HALT:
    case ISA_OP_CALL:
    case ISA_OP_RETURN:
    case ISA_OP_JUMP:
    case ISA_OP_BRANCH_CMP:
    case ISA_OP_REG_SET:
    case ISA_OP_REG_ADD:
    case ISA_OP_REG_MOVE:
        return sim_control_exec(s, c, e, d, next, err);
    case ISA_OP_DMA_DIRECT2D:
    case ISA_OP_DMA_DIRECT3D:
    case ISA_OP_DMA_INDIRECT2D:
        if (sim_dma_descriptor(s, c, e, e->idx, err) == 0)
            return 0;
        /* a descriptor's checks (queue, spaces, element counts, dtypes,
         * addresses) read its fields alone unless a register moves a side */
        s->err_class = isa_op_is_direct_dma(d->inst.op) &&
                               (d->inst.f.DDESC.src_reg != ISA_REG_NONE ||
                                d->inst.f.DDESC.dst_reg != ISA_REG_NONE)
                           ? SIM_ERR_RUN
                           : SIM_ERR_FIELD;
        return -1;
    case ISA_OP_DMA_TRIGGER:
        return sim_dma_trigger(s, c, e, e->idx,
                               sim_cycle_to_ps(sim_ps_to_cycle_ceil(start, e->clk_mhz) + *cycles,
                                               e->clk_mhz),
                               err);
    default:
        return exec_compute(s, c, e, d, cycles, err);
    }
}

static void engine_done(sim_t *s, sim_engine_t *e, uint64_t t)
{
    e->state = ENG_DONE;
    if (t > s->end_ps)
        s->end_ps = t;
}

static int cycle_limit_error(sim_t *s, sim_core_t *c, sim_engine_t *e, tpb_err_t *err)
{
    return sim_inst_errf(err, c, e, e->idx,
                         "simulation exceeded --max-cycles %llu (runaway program? raise "
                         "--max-cycles if the kernel is genuinely this long)",
                         (unsigned long long)s->opt.max_cycles);
}

/* Passes the wait of the current instruction.  Returns 1 when the engine
 * must block, 0 to start now, -1 on error.  Fills the trace wait info. */
static int pass_wait(sim_t *s, sim_core_t *c, sim_engine_t *e, const isa_decoded_t *d,
                     const sim_step_t *st, uint64_t now, sim_tr_inst_t *tr, tpb_err_t *err)
{
    if (e->state == ENG_BARRIER_RELEASED) {
        e->barrier_wait_ps += now - e->arrive_ps;
        tr->wait_kind = 2;
        tr->waited_for = e->barrier_last;
        e->state = ENG_READY;
        return 0;
    }
    if (st->flags & SIM_STEP_WAIT) {
        uint32_t need = sim_step_wait_value(e, st);
        sim_sem_t *S = &c->sem[st->wait_sem];
        if (S->value < need) {
            e->state = ENG_WAIT_SEM;
            c->sem_waiters |= (uint8_t)(1u << e->slot);
            if (need < S->wake_at)
                S->wake_at = need;
            return 1;
        }
        tr->wait_kind = 1;
        tr->waited_for = S->last_writer;
    }
    e->sem_wait_ps += now - e->issue_ps;
    e->arrive_ps = now;
    e->state = ENG_READY;
    if (st->flags & SIM_STEP_BARRIER) {
        int r = sim_barrier_arrive(s, c, e, d, now, err);
        if (r != 0) {
            if (r > 0)
                e->state = ENG_WAIT_BARRIER;
            return r;
        }
        tr->wait_kind = 2;
        tr->waited_for = e->barrier_last;
    }
    return 0;
}

/* Trace: how many times the current instruction ran before, in a stream
 * with a backward branch (a rolled loop, docs/compiler.md); UINT32_MAX in
 * straight-line streams (no "iter" in their trace). */
static uint32_t sim_trace_iter(sim_engine_t *e)
{
    if (!e->loops_checked) {
        e->loops_checked = true;
        bool loop = false;
        for (size_t i = 0; i < e->stream.count && !loop; i++) {
            const isa_inst_t *in = &e->stream.insts[i].inst;
            uint32_t tg = in->op == ISA_OP_BRANCH_CMP ? in->f.BR.target
                          : in->op == ISA_OP_JUMP    ? in->f.CALL.target
                                                     : UINT32_MAX;
            loop = tg <= e->stream.insts[i].pc;
        }
        if (loop)
            e->execs = calloc(e->stream.count, sizeof *e->execs);
    }
    return e->execs ? e->execs[e->idx]++ : UINT32_MAX;
}

#define SIM_PREFETCH_AHEAD 4 /* instructions; 2, 4 and 8 measured, docs/performance-log.md */
static int engine_run(sim_t *s, sim_core_t *c, sim_engine_t *e, tpb_err_t *err)
{
    uint64_t now = s->now;
    uint64_t lat = s->sem_lat_ps;
    sim_event_t held; /* our own update, queued after the updates before it */
    for (;;) {
        if (e->idx >= e->stream.count) {
            engine_done(s, e, now);
            return 0;
        }
        /* d is read only when st does not say all (sim_step_t) */
        const isa_decoded_t *d = &e->stream.insts[e->idx];
        /* functional runs read the decoded instruction (368 bytes, in a
         * stream much larger than the caches): fetch the one a few ahead */
        if (!s->opt.timing_only && e->idx + SIM_PREFETCH_AHEAD < e->stream.count) {
            const char *p = (const char *)(d + SIM_PREFETCH_AHEAD);
            _Static_assert(sizeof *d <= 6 * 64, "seven cache lines cover a decoded instruction");
            TPB_PREFETCH(p);
            TPB_PREFETCH(p + 64);
            TPB_PREFETCH(p + 128);
            TPB_PREFETCH(p + 192);
            TPB_PREFETCH(p + 256);
            TPB_PREFETCH(p + 320);
            TPB_PREFETCH(p + sizeof *d - 1);
        }
        const sim_step_t *st = &e->step[e->idx];
        sim_tr_inst_t tr; /* pass_wait fills the wait; the rest only for a trace */
        tr.wait_kind = 0;
        int w = pass_wait(s, c, e, d, st, now, &tr, err);
        if (w != 0)
            return w < 0 ? -1 : 0;
        /* instructions start on the engine's clock edges; right after the
         * engine's previous instruction, that edge is known (no division) */
        uint64_t c0, start, cycles;
        if (now == e->edge_ps) {
            c0 = e->edge_cycle;
            start = now;
        } else {
            c0 = sim_ps_to_cycle_ceil(now, e->clk_mhz);
            start = sim_cycle_to_ps(c0, e->clk_mhz);
            if (start < now)
                start = now;
        }
        size_t next;
        /* a member of a class that passed its checks (memo.c): its cost,
         * as exec_compute would give it (only compute opcodes get there) */
        uint32_t k = e->cls ? e->cls[e->idx] : SIM_NO_CLASS;
        e->cur_fp = NULL;
        e->cur_ports = 0;
        if (k != SIM_NO_CLASS && e->memo[k].checked) {
            cycles = e->memo[k].cost;
            e->cur_fp = e->memo[k].fp;
            e->cur_lat = e->memo[k].lat;
            e->cur_ports = e->memo[k].ports;
            next = e->idx + 1;
        } else if (dispatch(s, c, e, d, start, &cycles, &next, err) != 0)
            return -1;
        if (cycles == 0)
            cycles = 1; /* every instruction advances time: loops always progress */
        if (e->id == ISA_ENG_PE)
            cycles = sim_pe_pipelined_cycles(&e->pe_bg_cycles, d->inst.op, cycles,
                                             now == e->issue_ps);
        /* the result pipeline (pipe.c): the engine is busy for the cost
         * less the result latency, and a compute instruction starts after
         * the results in flight that it reads or overwrites */
        uint64_t rlat = 0;
        if (e->cur_fp) {
            rlat = e->cur_lat < cycles ? e->cur_lat : cycles - 1;
            uint64_t r = sim_pipe_ready(e, e->cur_fp, c0);
            if (r != c0) {
                c0 = r;
                start = sim_cycle_to_ps(c0, e->clk_mhz);
            }
        }
        /* a memory port another engine holds (port.c): after its holder */
        tr.port_ps = 0;
        if (e->cur_ports) {
            uint64_t f = sim_port_free(c, e->cur_ports, e->id);
            if (f > start) {
                c0 = sim_ps_to_cycle_ceil(f, e->clk_mhz);
                uint64_t s2 = sim_cycle_to_ps(c0, e->clk_mhz);
                tr.port_ps = s2 - start;
                e->port_wait_ps += tr.port_ps;
                start = s2;
            }
        }
        uint64_t c_end = c0 + cycles - rlat;
        uint64_t end = sim_cycle_to_ps(c_end, e->clk_mhz);
        if (end < start)
            end = start;
        e->edge_ps = end;
        e->edge_cycle = c_end;
        if (e->cur_ports)
            sim_port_hold(c, e->cur_ports, e->id, end);
        uint64_t c_done = sim_pipe_issue(e, e->cur_fp, c_end, rlat);
        uint64_t done = c_done == c_end ? end : sim_cycle_to_ps(c_done, e->clk_mhz);
        const isa_sync_t *h = &d->inst.sync;
        bool hold = false;
        unsigned step = st->flags;
        if (step & (SIM_STEP_UPD_READ | SIM_STEP_UPD_END)) {
            uint64_t at = (step & SIM_STEP_UPD_READ ? start : done) + lat;
            sim_ref_t me = { .core = (int16_t)c->index, .tid = (uint16_t)(e->slot + 1),
                             .pc = st->pc, .start_ps = start };
            if (!(step & SIM_STEP_UPD_REMOTE) && at > end) {
                /* a local update after our end: no event at or before end
                 * depends on it, so it is stamped now and queued below */
                held = sim_step_event(st, c->index, at, me);
                sim_heap_stamp(&s->heap, &held);
                hold = true;
            } else if (sim_sync_schedule_update(s, c, h, at, me, e, e->idx, err) != 0)
                return -1;
        }
        e->busy_ps += end - start;
        e->ninst++;
        s->ninst++;
        s->by_class[st->cls]++;
        if (s->opt.trace) {
            if (!tr.wait_kind)
                tr.waited_for = (sim_ref_t){ .core = -1, .start_ps = SIM_NO_TIME };
            tr.issue_ps = e->issue_ps; /* this instruction's until updated below */
            tr.idx = (uint32_t)e->idx;
            tr.core = (uint8_t)c->index;
            tr.slot = (uint8_t)e->slot;
            tr.iter = sim_trace_iter(e);
            tr.start_ps = start;
            tr.end_ps = end;
            sim_trace_inst(s, &tr);
        }
        if (done > s->max_ps)
            return cycle_limit_error(s, c, e, err);
        if (s->ninst >= s->next_progress) {
            s->next_progress += 1u << 20;
            if (s->opt.progress)
                s->opt.progress(s->opt.progress_user, sim_ps_to_ref_cycles(s->t, end), s->ninst);
        }
        if (done > s->end_ps)
            s->end_ps = done; /* the run ends when the last result is written */
        now = end;
        e->issue_ps = end;
        if (next == SIZE_MAX) {
            if (hold && sim_heap_insert(s, &held, err) != 0)
                return -1;
            engine_done(s, e, end);
            return 0;
        }
        e->idx = next;
        /* Semaphore updates due before our next start are applied here, in
         * heap order, instead of yielding to the main loop for each one
         * (every instruction usually bumps its engine's semaphore). */
        bool yield = false;
        while (!may_continue(s, e, end)) {
            if (!sem_event_next(s, end)) {
                if (hold && sim_heap_insert(s, &held, err) != 0)
                    return -1;
                /* e is ready (pass_wait) and not due (the run loop took its
                 * step; only blocked engines are woken or released) */
                sim_dueq_insert(&s->dueq, end, e->due_bit);
                e->due = true;
                e->due_t = end;
                yield = true;
                break;
            }
            /* applied where it lies, then dropped (or replaced by our held
             * update): an update pushes nothing */
            s->now = s->heap.v[0].t;
            if (sim_sync_apply(s, &s->heap.v[0], err) != 0)
                return -1;
            if (hold)
                sim_heap_replace_top(&s->heap, &held);
            else
                sim_heap_drop(&s->heap);
            hold = false;
        }
        if (yield) {
            if (!sim_take_next_engine(s, &c, &e))
                return 0;
            now = s->now;
            continue;
        }
        if (hold && sim_heap_insert(s, &held, err) != 0)
            return -1;
        s->now = end;
    }
}

/* ---- the run ---- */

static int report_deadlock(sim_t *s, tpb_err_t *err)
{
    char buf[4096];
    size_t off = (size_t)snprintf(buf, sizeof buf,
                                  "deadlock at cycle %llu: every unfinished engine is blocked "
                                  "and no DMA is in flight:",
                                  (unsigned long long)sim_ps_to_ref_cycles(s->t, s->now));
    for (unsigned ci = 0; ci < s->ncores; ci++) {
        sim_core_t *c = &s->cores[ci];
        bool busy = false;
        for (unsigned k = 0; k < SIM_ENGINES; k++)
            busy |= c->eng[k].present && c->eng[k].state != ENG_DONE;
        /* name a finished core too: it is the one a barrier waits for */
        if (!busy && off < sizeof buf - 1)
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "\n  core %u: finished (every engine halted)", ci);
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            sim_engine_t *e = &c->eng[k];
            if (!e->present || e->state == ENG_DONE || off >= sizeof buf - 1)
                continue;
            char what[400];
            sim_describe_block(s, c, e, what, sizeof what);
            const isa_decoded_t *d = &e->stream.insts[e->idx];
            /* the op it came from (sidecar), e.g. "all_reduce_1.ready body[3]" */
            const sim_debug_t *g = e->debug ? &e->debug[e->idx] : NULL;
            char from[160] = "";
            if (g && g->name)
                snprintf(from, sizeof from, " [%s%s%s]", g->name, g->src ? " " : "",
                         g->src ? g->src : "");
            off += (size_t)snprintf(buf + off, sizeof buf - off,
                                    "\n  core %u %s instruction %zu (pc %u) %s%s: %s", ci,
                                    isa_engine_name(e->id), e->idx, d->pc,
                                    isa_ops[d->inst.op].mnemonic, from, what);
        }
        /* a classic cause: descriptors queued without their DmaTrigger */
        for (unsigned q = 0; q < s->t->dma_queues && off < sizeof buf - 1; q++)
            if (c->queues[q].npending)
                off += (size_t)snprintf(buf + off, sizeof buf - off,
                                        "\n  note: core %u queue %u has %u DMA descriptor(s) "
                                        "queued but never triggered",
                                        ci, q, c->queues[q].npending);
    }
    return tpb_errf(err, "%s", buf);
}

static void check_leftovers(sim_t *s)
{
    for (unsigned ci = 0; ci < s->ncores; ci++)
        for (unsigned q = 0; q < s->t->dma_queues; q++) {
            sim_queue_t *Q = &s->cores[ci].queues[q];
            if (Q->npending)
                sim_add_warning(s,
                                "core %u queue %u: %u DMA descriptor(s) queued but never "
                                "triggered (first at %s pc %u)",
                                ci, q, Q->npending,
                                isa_engine_name(isa_tpb_engines[Q->pending[0].engine_slot]),
                                Q->pending[0].pc);
        }
}

static int handle_event(sim_t *s, const sim_event_t *ev, tpb_err_t *err)
{
    sim_core_t *c = &s->cores[ev->core];
    switch ((sim_ev_kind_t)ev->kind) {
    case EV_SEM:
        return sim_sync_apply(s, ev, err);
    case EV_DMA_DONE:
        return sim_dma_done(s, c, ev->unit, err);
    case EV_DMA_START:
        return sim_dma_start(s, c, ev->val, err);
    case EV_ENGINE: /* engine steps are not heap events (sim_schedule_engine) */
        break;
    }
    return 0;
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

sim_err_class_t sim_error_class(const sim_t *s)
{
    return s->err_class;
}

int sim_run(sim_t *s, tpb_err_t *err)
{
    if (s->ran)
        return tpb_errf(err, "sim_run: this simulation already ran");
    s->ran = true;
    sim_fill_pending(s);
    char missing[512];
    if (s->opt.timing_only)
        sim_inputs_timing_only(s);
    if (sim_missing_inputs(s, missing, sizeof missing) > 0)
        return tpb_errf(err, "input tensor(s) not supplied: %s", missing);
    double w0 = wall_now();
    uint64_t maxc = s->opt.max_cycles ? s->opt.max_cycles : SIM_DEFAULT_MAX_CYCLES;
    uint64_t mhz = sim_mhz(s->t->clk_ref);
    s->max_ps = maxc > UINT64_MAX / 1000000ull ? UINT64_MAX : maxc * 1000000ull / mhz;
    s->next_progress = 1u << 20;
    s->sem_lat_ps = sim_cycles_to_ps(s->t->clk_ref, s->t->sem_latency_cycles);
    /* workers start on the first instruction worth splitting; a pool that
     * cannot be had (out of memory) leaves the run on one thread */
    if (s->opt.threads > 1 && !s->opt.timing_only)
        s->pool = sim_pool_new(s->opt.threads, s->opt.split_all);
    for (unsigned ci = 0; ci < s->ncores; ci++)
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            sim_engine_t *e = &s->cores[ci].eng[k];
            if (!e->present) {
                e->state = ENG_DONE;
                continue;
            }
            push_engine(s, e, 0);
        }
    int rc = 0;
    for (;;) {
        sim_core_t *ec = NULL;
        sim_engine_t *e = first_due_engine(s, &ec);
        bool heap_first = s->heap.n && (!e || s->heap.v[0].t <= e->due_t);
        if (!heap_first && !e)
            break;
        uint64_t t = heap_first ? s->heap.v[0].t : e->due_t;
        if (t > s->max_ps) {
            rc = tpb_errf(err, "simulation exceeded --max-cycles %llu",
                          (unsigned long long)maxc);
            break;
        }
        s->now = t;
        if (heap_first) {
            sim_event_t ev = heap_pop(&s->heap);
            rc = handle_event(s, &ev, err);
        } else {
            unschedule_first(s, e);
            rc = engine_run(s, ec, e, err);
        }
        if (rc != 0)
            break;
    }
    if (rc == 0) {
        for (unsigned ci = 0; ci < s->ncores && rc == 0; ci++)
            for (unsigned k = 0; k < SIM_ENGINES; k++)
                if (s->cores[ci].eng[k].present && s->cores[ci].eng[k].state != ENG_DONE) {
                    rc = report_deadlock(s, err);
                    break;
                }
    }
    sim_pool_destroy(s->pool);
    s->pool = NULL;
    if (rc != 0 && s->err_class == SIM_ERR_NONE)
        s->err_class = SIM_ERR_RUN;
    if (rc == 0)
        check_leftovers(s);
    s->wall_seconds = wall_now() - w0;
    return rc ? -1 : 0;
}

/* ---- results ---- */

void sim_get_summary(const sim_t *s, sim_summary_t *o)
{
    memset(o, 0, sizeof *o);
    o->total_ps = s->end_ps;
    o->total_cycles = ps_to_ref_ceil(s->t, s->end_ps);
    o->clock_ghz = s->t->clk_ref;
    o->num_cores = s->ncores;
    o->instructions = s->ninst;
    memcpy(o->by_class, s->by_class, sizeof o->by_class);
    o->wall_seconds = s->wall_seconds;
    o->target = s->t->name;
    o->shared_ports = sim_port_engine(s->t, ISA_ENG_DVE);
    o->kernel = s->kernel ? s->kernel : "";
    o->warnings = s->nwarnings;
}

void sim_get_engine_stats(const sim_t *s, unsigned core, unsigned k, sim_engine_stats_t *o)
{
    memset(o, 0, sizeof *o);
    if (core >= s->ncores || k >= SIM_ENGINES)
        return;
    const sim_engine_t *e = &s->cores[core].eng[k];
    o->name = isa_engine_name(isa_tpb_engines[k]);
    o->present = e->present;
    o->busy_cycles = sim_ps_dur_to_ref(s->t, e->busy_ps);
    o->instructions = e->ninst;
    o->sem_wait_cycles = sim_ps_dur_to_ref(s->t, e->sem_wait_ps);
    o->port_wait_cycles = sim_ps_dur_to_ref(s->t, e->port_wait_ps);
    o->barrier_wait_cycles = sim_ps_dur_to_ref(s->t, e->barrier_wait_ps);
}

unsigned sim_get_queue_stats(const sim_t *s, unsigned core, sim_queue_stats_t *out, unsigned max)
{
    unsigned n = 0;
    if (core >= s->ncores)
        return 0;
    for (unsigned q = 0; q < s->t->dma_queues && n < max; q++) {
        const sim_queue_t *Q = &s->cores[core].queues[q];
        if (!Q->transfers && !Q->descriptors)
            continue;
        out[n++] = (sim_queue_stats_t){ .queue = q, .name = Q->name, .bytes = Q->bytes,
                                        .bytes_to_hbm = Q->bytes_to_hbm,
                                        .transfers = Q->transfers,
                                        .descriptors = Q->descriptors,
                                        .busy_cycles = sim_ps_dur_to_ref(s->t, Q->busy_ps) };
    }
    return n;
}

const char *sim_warning(const sim_t *s, unsigned i)
{
    return i < s->nwarnings ? s->warnings[i] : NULL;
}

void sim_free(sim_t *s)
{
    if (!s)
        return;
    for (unsigned ci = 0; ci < s->ncores && s->cores; ci++) {
        sim_core_t *c = &s->cores[ci];
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            sim_engine_t *e = &c->eng[k];
            sim_debug_free(e);
            free(e->execs);
            tpb_array_free(e->step, e->step_bytes);
            sim_memo_free(e);
            isa_stream_free(&e->stream);
            sim_scratch_free(&e->scratch);
        }
        for (unsigned i = 0; i < ISA_NUM_SEMAPHORES; i++)
            free(c->sem[i].name);
        if (c->queues) {
            for (unsigned q = 0; q < s->t->dma_queues; q++)
                free(c->queues[q].name);
            sim_dma_free(c, s->t->dma_queues);
        }
        tpb_array_free(c->sbuf, c->sbuf_bytes);
        tpb_array_free(c->psum, c->psum_bytes);
        tpb_array_free(c->sbuf_init, c->sbuf_bytes);
        tpb_array_free(c->psum_init, c->psum_bytes);
        free(c->pe);
    }
    free(s->cores);
    tpb_array_free(s->hbm, s->hbm_alloc);
    tpb_array_free(s->hbm_init, s->hbm_alloc);
    for (unsigned i = 0; i < s->ntensors; i++) {
        free(s->tensors[i].name);
        free(s->tensors[i].kind);
        free(s->tensors[i].file);
        free(s->tensors[i].print_prefix);
    }
    free(s->tensors);
    free(s->barriers);
    free(s->heap.v);
    for (unsigned i = 0; i < s->nwarnings; i++)
        free(s->warnings[i]);
    free(s->warnings);
    free(s->kernel);
    cJSON_Delete(s->placement);
    sim_trace_free(&s->tr);
    free(s);
}
