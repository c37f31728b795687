/* sched_engine.c - the engine of an instruction that names none, chosen by
 * workload (docs/compiler.md "Engines and queues", "Balancing"): in
 * program order, each such instruction goes to the engine, among those
 * that compute exactly its default engine's values, where it would finish
 * first, counting what that engine already has to do, its own cost there
 * (the simulator's cost functions) and the semaphore hand-off from a
 * producer on another engine. */
#include "sched_engine.h"

#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "ops.h"
#include "sim.h"

#define M(e) (1u << ISA_ENG_##e)

static bool is_float(unsigned dt) { return isa_dtype_kind(dt) == ISA_DK_F; }

static bool touches_psum(const bir_inst_t *in)
{
    for (int k = 0; k < in->nacc; k++)
        if (in->acc[k].space == ISA_SPACE_PSUM)
            return true;
    return false;
}

/* An ALU op the Activation engine computes as DVE does: arithmetic, not
 * bitwise (DVE and Pool only), nor reciprocal / divide, which DVE computes
 * at a higher precision than the Activation engine (COST reciprocal). */
static bool act_alu(unsigned op)
{
    return !isa_alu_is_bitwise(op) && op != ISA_ALU_RECIPROCAL && op != ISA_ALU_DIVIDE;
}

/* Pool and Activation beside DVE for one op, by the rules of the
 * simulator's shared DVE/Pool/Activation bodies (sim/dve.c): Pool computes
 * as DVE except TensorTensor on all-int32 operands (native integers), and
 * it has no PSUM port; Activation goes through fp32, so it takes float
 * operands only, and a same-dtype copy only for fp32 (bit-exact there). */
static unsigned value_safe(const tpb_target_t *t, const bir_inst_t *in)
{
    const isa_body_t *f = bir_body(in);
    unsigned ok = 0;
    switch ((isa_op_t)in->isa.op) {
    case ISA_OP_TENSOR_COPY: {
        unsigned a = f->COPY.in.dtype, b = f->COPY.out.dtype;
        ok = M(POOL);
        if (is_float(a) && is_float(b) && (a != b || a == ISA_DT_FP32))
            ok |= M(ACT);
        break;
    }
    case ISA_OP_TENSOR_TENSOR:
        if (is_float(f->TT.in0.dtype) && is_float(f->TT.in1.dtype) && is_float(f->TT.out.dtype) &&
            !isa_alu_is_bitwise(f->TT.op))
            ok = M(POOL);
        break;
    case ISA_OP_TENSOR_SCALAR: case ISA_OP_TENSOR_SCALAR_PTR: {
        const isa_fmt_TS_t *s = &f->TS;
        if (in->is_stt || s->s0_reg_en || isa_alu_is_bitwise(s->op0) ||
            isa_alu_is_bitwise(s->op1))
            break;
        ok = M(POOL);
        /* NKI's rule for tensor_scalar on the Scalar engine (validate.c
         * check_ts_act): on trn2 only its affine step */
        if (is_float(s->in.dtype) && is_float(s->out.dtype) && act_alu(s->op0) &&
            act_alu(s->op1) &&
            (!t->act_ts_affine_only || tir_ts_act_affine((int)s->op0, (int)s->op1)))
            ok |= M(ACT);
        break;
    }
    case ISA_OP_TENSOR_REDUCE:
        if (is_float(f->RED.in.dtype) && is_float(f->RED.out.dtype))
            ok = M(POOL);
        break;
    case ISA_OP_MEMSET:
        if (f->MEMSET.mode == ISA_MEMSET_CONST)   /* random bits: the engine's own state */
            ok = M(POOL);
        break;
    default:
        break;
    }
    if ((ok & M(POOL)) && touches_psum(in))
        ok &= ~M(POOL);   /* Pool has no PSUM port (ARCH2) */
    if (t->dve_pool_share_sbuf)
        ok &= ~M(POOL);   /* one SBUF port for both (trn1): no overlap to gain */
    return ok;
}

unsigned seng_choices(const tpb_target_t *t, const bir_inst_t *in)
{
    if (in->engine != ISA_ENG_UNASSIGNED || in->dma_group >= 0 ||
        isa_ops[in->isa.op].cls != ISA_CLASS_VECTOR)
        return 0;
    unsigned legal = in->engines & isa_ops[in->isa.op].engines;
    if (!(legal & M(DVE)))   /* the default engine of the vector class */
        return 0;
    unsigned c = M(DVE) | (value_safe(t, in) & legal);
    return c & (c - 1) ? c : 0;
}

/* ---- the estimate ---- */

/* The instruction as the simulator's cost functions take it (they read
 * its op and body). */
static void decoded_of(const bir_inst_t *in, isa_decoded_t *d)
{
    bir_isa_expand(in, &d->inst);
}

/* What engine e takes for in (decoded as d, or NULL when it is no compute
 * instruction), ps: the simulator's cost of a compute instruction, the
 * sequencer's issue cost of anything else (docs/timing.md). */
static uint64_t cost_ps(const tpb_target_t *t, const sim_opimpl_t *impl, const isa_decoded_t *d,
                        int e)
{
    uint64_t cyc = impl && d ? impl->cost(t, (isa_engine_t)e, d) : t->seq_issue_cycles;
    return sim_cycles_to_ps(tpb_target_engine_ghz(t, e), cyc ? cyc : 1);
}

/* Of that cost, what is result latency rather than engine time (the
 * simulator's result pipeline, sim/pipe.c): the engine takes its next
 * instruction that much before this one's result is written. */
static uint64_t latency_ps(const tpb_target_t *t, const sim_opimpl_t *impl, const bir_inst_t *in,
                           int e, uint64_t cost)
{
    if (!impl)
        return 0;
    uint64_t lat = sim_cycles_to_ps(tpb_target_engine_ghz(t, e),
                                    sim_result_latency(t, (isa_engine_t)e, (isa_op_t)in->isa.op));
    return lat < cost ? lat : 0;
}

/* Whether engine e's compute instruction d (NULL: none) takes the port
 * DVE and Pool share, by the simulator's rule (sim/port.c): on trn2 Pool's
 * and DVE's perf mode; on trn1, where the choice never moves work to Pool
 * (value_safe), a named Pool instruction and DVE's SBUF work (its
 * operands unknown here: all of DVE's). */
static bool uses_bus(const tpb_target_t *t, const isa_decoded_t *d, int e)
{
    return d && (sim_port_needs(t, (isa_engine_t)e, d, NULL) >> SIM_PORT_SBUF_DVE_POOL & 1u);
}

/* The start of engine e's instruction d no earlier than `start`: after the
 * shared port's holder on the other engine. */
static uint64_t after_bus(const seng_t *s, const isa_decoded_t *d, int e, uint64_t start)
{
    if (uses_bus(s->t, d, e) && s->bus_owner != e && s->bus_free > start)
        return s->bus_free;
    return start;
}

/* The cost implementation of a compute instruction, else NULL. */
static const sim_opimpl_t *cost_impl(const bir_inst_t *in)
{
    const sim_opimpl_t *impl = in->is_dma_desc ? NULL : sim_opimpl((isa_op_t)in->isa.op);
    return impl && impl->cost ? impl : NULL;
}

static uint64_t acc_key(const bir_access_t *a)
{
    return ((uint64_t)a->lo | (uint64_t)a->p0 << 48 | (uint64_t)a->space << 56) + 1;
}

static seng_writer_t *writer(seng_t *s, uint64_t key)
{
    uint64_t h = key * 0x9e3779b97f4a7c15ull;
    return &s->w[h >> 52];   /* SENG_WRITERS = 2^12 */
}

/* When in could start on engine e for its inputs: the last writers'
 * completion, plus the hand-off from another engine. */
static uint64_t ready_on(seng_t *s, const bir_inst_t *in, int e)
{
    uint64_t r = 0;
    for (int k = 0; k < in->nacc; k++) {
        const bir_access_t *a = &in->acc[k];
        if (a->write)
            continue;
        uint64_t key = acc_key(a);
        const seng_writer_t *w = writer(s, key);
        if (w->key != key)
            continue;
        uint64_t at = w->done + (w->engine >= 0 && w->engine != e ? s->sem_ps : 0);
        r = at > r ? at : r;
    }
    return r;
}

int seng_init(seng_t *s, const tpb_target_t *t, const bir_block_t *b, const sched_rr_event_t *ev,
              int nev, int nslots)
{
    memset(s, 0, sizeof *s);
    s->t = t;
    s->pick_i = -1;
    for (int i = 0; i < b->ninsts && !s->on; i++)
        s->on = b->insts[i].engine == ISA_ENG_UNASSIGNED && seng_choices(t, &b->insts[i]);
    if (!s->on)
        return 0;
    s->sem_ps = sim_cycles_to_ps(t->clk_ref, t->sem_latency_cycles);
    s->w = calloc(SENG_WRITERS, sizeof *s->w);
    if (!s->w)
        return -1;
    if (nev <= 0 || nslots <= 0)
        return 0;
    for (int i = 0; i < b->ninsts; i++)
        if (b->insts[i].tir_op >= s->nops)
            s->nops = b->insts[i].tir_op + 1;
    s->ev = ev, s->nev = nev;
    s->first0 = malloc((size_t)nslots * sizeof *s->first0);
    s->len = calloc((size_t)nslots, sizeof *s->len);
    s->next_start = malloc((size_t)nev * sizeof *s->next_start);
    s->op_first = malloc((size_t)(s->nops ? s->nops : 1) * sizeof *s->op_first);
    int *last = malloc((size_t)nslots * sizeof *last);
    if (!s->first0 || !s->len || !s->next_start || !s->op_first || !last) {
        free(last);
        seng_free(s);
        return -1;
    }
    memset(s->op_first, -1, (size_t)s->nops * sizeof *s->op_first);
    memset(last, -1, (size_t)nslots * sizeof *last);
    memset(s->first0, -1, (size_t)nslots * sizeof *s->first0);
    for (int x = 0; x < nev; x++) {
        int sl = ev[x].slot;
        s->next_start[x] = -1;
        if (sl < 0 || sl >= nslots)
            continue;
        if (last[sl] >= 0) {
            s->next_start[last[sl]] = ev[x].op;
            if (!s->len[sl])
                s->len[sl] = ev[x].op - ev[last[sl]].op;
        }
        last[sl] = x;
    }
    free(last);
    return 0;
}

void seng_free(seng_t *s)
{
    free(s->w);
    free(s->first0);
    free(s->len);
    free(s->next_start);
    free(s->op_first);
    memset(s, 0, sizeof *s);
}

/* The loop events up to op (rolled-loop candidates, roll.c): a first
 * iteration records its start, a later one maps its ops onto it. */
static void seng_events(seng_t *s, int op)
{
    while (s->nmir && s->mir[s->nmir - 1].end <= op)
        s->nmir--;
    for (; s->nextev < s->nev && s->ev[s->nextev].op <= op; s->nextev++) {
        const sched_rr_event_t *e = &s->ev[s->nextev];
        if (e->save) {
            s->first0[e->slot] = e->op;
            continue;
        }
        if (s->first0[e->slot] < 0 || s->nmir == SENG_MIRRORS)
            continue;
        int nx = s->next_start[s->nextev];
        s->mir[s->nmir++] = (seng_mirror_t){nx >= 0 ? nx : e->op + s->len[e->slot],
                                            e->op - s->first0[e->slot]};
    }
    while (s->nmir && s->mir[s->nmir - 1].end <= op)
        s->nmir--;
}

/* Instruction i's twin in the first iteration of the rolled-loop candidate
 * it is in, or -1: the same place in the mapped op, the same opcode. */
static int seng_twin(const seng_t *s, const bir_block_t *b, int i)
{
    const bir_inst_t *in = &b->insts[i];
    int o = in->tir_op;
    if (!s->nmir || o < 0 || o >= s->nops || s->op_first[o] < 0)
        return -1;
    int o0 = o - s->mir[s->nmir - 1].delta;
    if (o0 < 0 || o0 >= o || s->op_first[o0] < 0)
        return -1;
    int j = s->op_first[o0] + (i - s->op_first[o]);
    if (j >= i || b->insts[j].tir_op != o0 || b->insts[j].isa.op != in->isa.op)
        return -1;
    return j;
}

int seng_pick(seng_t *s, const bir_block_t *b, int i, unsigned cand, int def)
{
    const bir_inst_t *in = &b->insts[i];
    /* rolled-loop candidates: every iteration on the first one's engines,
     * so the iterations stay congruent (docs/compiler.md "Rolled loops") */
    int j = seng_twin(s, b, i);
    if (j >= 0 && b->insts[j].engine >= 0 && (cand >> b->insts[j].engine & 1u))
        return b->insts[j].engine;
    /* the default first, then the class's order: ties keep the default */
    static const int order[] = {ISA_ENG_DVE, ISA_ENG_POOL, ISA_ENG_ACT};
    int best = def;
    uint64_t best_end = UINT64_MAX, best_cost = 0;
    bool best_bus = false;
    const sim_opimpl_t *impl = cost_impl(in);
    isa_decoded_t d;
    if (impl)
        decoded_of(in, &d);
    for (int k = -1; k < 3; k++) {
        int e = k < 0 ? def : order[k];
        if ((k >= 0 && e == def) || !(cand >> e & 1u))
            continue;
        uint64_t r = ready_on(s, in, e);
        uint64_t start = after_bus(s, impl ? &d : NULL, e, s->avail[e] > r ? s->avail[e] : r);
        uint64_t cost = cost_ps(s->t, impl, impl ? &d : NULL, e);
        if (start + cost < best_end) {
            best = e, best_end = start + cost, best_cost = cost;
            best_bus = uses_bus(s->t, impl ? &d : NULL, e);
        }
    }
    s->pick_i = i, s->pick_e = best, s->pick_end = best_end, s->pick_cost = best_cost;
    s->pick_bus = best_bus;
    return best;
}

void seng_enter(seng_t *s, const bir_block_t *b, int i)
{
    int o = b->insts[i].tir_op;
    if (o < 0 || !s->op_first)
        return;
    if (s->nextev < s->nev || s->nmir)
        seng_events(s, o);
    if (o < s->nops && s->op_first[o] < 0)
        s->op_first[o] = i;
}

void seng_note(seng_t *s, const bir_block_t *b, int i)
{
    const bir_inst_t *in = &b->insts[i];
    int e = in->engine;
    if (e < 0 || e >= ISA_ENG_COUNT)
        return;
    bool dma = in->is_dma_desc || in->isa.op == ISA_OP_DMA_TRIGGER;
    const sim_opimpl_t *impl = cost_impl(in);
    uint64_t start = 0, end, cost;
    bool bus;
    if (s->pick_i == i && s->pick_e == e) {   /* seng_pick's estimate */
        end = s->pick_end;
        cost = s->pick_cost;
        bus = s->pick_bus;
    } else {
        uint64_t r = ready_on(s, in, e);
        isa_decoded_t d;
        if (impl)
            decoded_of(in, &d);
        bus = uses_bus(s->t, impl ? &d : NULL, e);
        start = after_bus(s, impl ? &d : NULL, e, s->avail[e] > r ? s->avail[e] : r);
        cost = cost_ps(s->t, impl, impl ? &d : NULL, e);
        end = start + cost;
    }
    s->avail[e] = end - latency_ps(s->t, impl, in, e, cost);
    if (bus && s->avail[e] >= s->bus_free) {
        s->bus_free = s->avail[e];
        s->bus_owner = e;
    }
    for (int k = 0; k < in->nacc; k++) {
        const bir_access_t *a = &in->acc[k];
        if (!a->write)
            continue;
        uint64_t key = acc_key(a);
        /* a transfer's end is not estimated: its readers wait as long on
         * every engine */
        *writer(s, key) = (seng_writer_t){key, dma ? start : end, (int8_t)(dma ? -1 : e)};
    }
}
