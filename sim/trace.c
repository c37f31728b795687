/* trace.c - record instruction, DMA and semaphore events during the run and
 * write them as Chrome trace-event JSON (docs/trace-format.md), atomically. */
#include "sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dis.h"
#include "fileio.h"

#define GROW(arr, n, cap, oomflag)                                                   \
    do {                                                                           \
        if ((n) == (cap)) {                                                        \
            size_t nc_ = (cap) ? (cap) * 2 : 1024;                                 \
            void *p_ = realloc((arr), nc_ * sizeof *(arr));                        \
            if (!p_) {                                                             \
                (oomflag) = true;                                                  \
                return;                                                            \
            }                                                                      \
            (arr) = p_;                                                            \
            (cap) = nc_;                                                           \
        }                                                                          \
    } while (0)

void sim_trace_inst(sim_t *s, const sim_tr_inst_t *r)
{
    sim_trace_t *t = &s->tr;
    GROW(t->inst, t->ninst, t->cinst, t->oom);
    t->inst[t->ninst++] = *r;
}

void sim_trace_dma(sim_t *s, const sim_tr_dma_t *r)
{
    sim_trace_t *t = &s->tr;
    GROW(t->dma, t->ndma, t->cdma, t->oom);
    t->dma[t->ndma++] = *r;
}

void sim_trace_sem(sim_t *s, unsigned core, unsigned sem, uint32_t value)
{
    sim_trace_t *t = &s->tr;
    GROW(t->sem, t->nsem, t->csem, t->oom);
    t->sem[t->nsem++] = (sim_tr_sem_t){ .t = s->now, .core = (uint8_t)core, .sem = (uint8_t)sem,
                                        .value = value };
}

void sim_trace_free(sim_trace_t *tr)
{
    free(tr->inst);
    free(tr->dma);
    free(tr->sem);
    memset(tr, 0, sizeof *tr);
}

/* ---- writing ---- */

static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void put_us(FILE *f, uint64_t ps)
{
    fprintf(f, "%" PRIu64 ".%06" PRIu64, ps / 1000000u, ps % 1000000u);
}

/* One monotone mapping for every timestamp of the trace (round to the
 * nearest reference cycle), so events that do not overlap in time never
 * overlap in cycles either. */
static uint64_t ref_at(const sim_t *s, uint64_t ps)
{
    return sim_ps_dur_to_ref(s->t, ps);
}

static void put_ref(FILE *f, sim_ref_t r)
{
    fprintf(f, "{\"pid\":%d,\"tid\":%u,\"pc\":%u}", r.core + 1, r.tid, r.pc);
}

static void put_meta(FILE *f, const sim_t *s)
{
    for (unsigned ci = 0; ci < s->ncores; ci++) {
        const sim_core_t *c = &s->cores[ci];
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"core%u\"}},\n",
                ci + 1, ci);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"args\":{\"sort_index\":%u}},\n",
                ci + 1, ci);
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            if (!c->eng[k].present)
                continue;
            fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
                    ci + 1, k + 1);
            put_str(f, isa_engine_name(isa_tpb_engines[k]));
            fprintf(f, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
                    "\"args\":{\"sort_index\":%u}},\n", ci + 1, k + 1, k + 1);
        }
        for (unsigned q = 0; q < s->t->dma_queues; q++) {
            const sim_queue_t *Q = &c->queues[q];
            if (!Q->transfers)
                continue;
            char name[160];
            snprintf(name, sizeof name, "q%u%s%s [0]", q, Q->name ? " " : "", Q->name ? Q->name : "");
            unsigned tid = SIM_DMA_LANE_TID + q * 8;
            fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
                    ci + 1, tid);
            put_str(f, name);
            fprintf(f, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
                    "\"args\":{\"sort_index\":%u}},\n", ci + 1, tid, tid);
        }
    }
}

static void put_inst(FILE *f, const sim_t *s, const sim_tr_inst_t *r)
{
    const sim_engine_t *e = &s->cores[r->core].eng[r->slot];
    const isa_decoded_t *d = &e->stream.insts[r->idx];
    const isa_opinfo_t *oi = &isa_ops[d->inst.op];
    fprintf(f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"name\":", r->core + 1u, r->slot + 1u);
    put_str(f, oi->mnemonic);
    fprintf(f, ",\"cat\":");
    put_str(f, isa_class_name(oi->cls));
    fprintf(f, ",\"ts\":");
    put_us(f, r->start_ps);
    fprintf(f, ",\"dur\":");
    put_us(f, r->end_ps - r->start_ps);
    uint64_t sc = ref_at(s, r->start_ps);
    uint64_t ic = ref_at(s, r->issue_ps);
    fprintf(f, ",\"args\":{\"pc\":%u,\"index\":%u,\"opcode\":%u,\"start_cycle\":%" PRIu64
            ",\"end_cycle\":%" PRIu64 ",\"issue_cycle\":%" PRIu64 ",\"wait_cycles\":%" PRIu64,
            d->pc, r->idx, d->inst.l2, sc, ref_at(s, r->end_ps), ic, sc - ic);
    const isa_sync_t *h = &d->inst.sync;
    char wait[96] = "";
    if (h->wait_en)
        snprintf(wait, sizeof wait, "S%u>=%u", h->wait_sem, h->wait_val);
    if (d->inst.op == ISA_OP_CORE_BARRIER) {
        size_t o = strlen(wait);
        snprintf(wait + o, sizeof wait - o, "%sbarrier %u cores=0x%x", o ? " " : "",
                 d->inst.f.CB.id, d->inst.f.CB.cores);
    }
    if (wait[0]) {
        fprintf(f, ",\"wait\":");
        put_str(f, wait);
    }
    fprintf(f, ",\"waited_for\":[");
    if (r->waited_for.core >= 0)
        put_ref(f, r->waited_for);
    fprintf(f, "]");
    if (h->upd_en) {
        char upd[96];
        snprintf(upd, sizeof upd, "S%u%s %s %u @%s", h->upd_sem, "", isa_enum_name(ISA_FT_SEMOP, h->upd_op)
                 ? isa_enum_name(ISA_FT_SEMOP, h->upd_op) : "?", h->upd_val,
                 h->upd_at_read ? "read" : "complete");
        if (h->upd_remote) {
            size_t o = strlen(upd);
            snprintf(upd + o, sizeof upd - o, " core%u", h->upd_core);
        }
        fprintf(f, ",\"update\":");
        put_str(f, upd);
    }
    char fields[1024];
    isa_format_inst(&d->inst, fields, sizeof fields);
    fprintf(f, ",\"fields\":");
    put_str(f, fields);
    if (e->debug && e->debug[r->idx].src) {
        fprintf(f, ",\"src\":");
        put_str(f, e->debug[r->idx].src);
    }
    if (e->debug && e->debug[r->idx].name) {
        fprintf(f, ",\"op_name\":");
        put_str(f, e->debug[r->idx].name);
    }
    fprintf(f, "}}");
}

static void put_dma(FILE *f, const sim_t *s, const sim_tr_dma_t *r)
{
    const sim_queue_t *Q = &s->cores[r->core].queues[r->queue];
    char name[160];
    snprintf(name, sizeof name, "DMA q%u%s%s", r->queue, Q->name ? " " : "", Q->name ? Q->name : "");
    fprintf(f, "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"name\":", r->core + 1u,
            SIM_DMA_LANE_TID + r->queue * 8u);
    put_str(f, name);
    fprintf(f, ",\"cat\":\"dma\",\"ts\":");
    put_us(f, r->start_ps);
    fprintf(f, ",\"dur\":");
    put_us(f, r->end_ps - r->start_ps);
    fprintf(f, ",\"args\":{\"queue\":%u,\"bytes\":%" PRIu64 ",\"descriptors\":%u,\"start_cycle\":%" PRIu64
            ",\"end_cycle\":%" PRIu64 ",\"issuer\":",
            r->queue, r->bytes, r->ndesc, ref_at(s, r->start_ps), ref_at(s, r->end_ps));
    put_ref(f, r->issuer);
    fprintf(f, "}}");
}

static void put_sem(FILE *f, const sim_t *s, const sim_tr_sem_t *r)
{
    const sim_sem_t *S = &s->cores[r->core].sem[r->sem];
    char name[160];
    snprintf(name, sizeof name, "sem S%u%s%s", r->sem, S->name ? " " : "", S->name ? S->name : "");
    fprintf(f, "{\"ph\":\"C\",\"pid\":%u,\"name\":", r->core + 1u);
    put_str(f, name);
    fprintf(f, ",\"ts\":");
    put_us(f, r->t);
    fprintf(f, ",\"args\":{\"value\":%u}}", r->value);
}

static void put_header(FILE *f, const sim_t *s, const char *stats)
{
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":\"tpbsim-trace\",\"version\":1,"
            "\"kernel\":");
    put_str(f, sum.kernel);
    fprintf(f, ",\"target\":");
    put_str(f, s->t->name);
    fprintf(f, ",\"clock_ghz\":%g,\"total_cycles\":%" PRIu64 ",\"num_cores\":%u,"
            "\"engine_clock_ghz\":{\"PE\":%g,\"Activation\":%g,\"Pool\":%g,\"DVE\":%g,\"SP\":%g},"
            "\"stats\":%s},\n\"traceEvents\":[\n",
            s->t->clk_ref, sum.total_cycles, s->ncores, s->t->clk_pe, s->t->clk_act, s->t->clk_pool,
            s->t->clk_dve, s->t->clk_sp, stats ? stats : "{}");
}

int sim_write_trace(const sim_t *s, const char *path, tpb_err_t *err)
{
    if (!s->opt.trace)
        return tpb_errf(err, "%s: tracing was not enabled for this run (sim_options_t.trace)", path);
    if (s->tr.oom)
        return tpb_errf(err, "%s: out of memory while recording the trace", path);
    fio_atomic_t a;
    if (fio_atomic_open(&a, path, err) != 0)
        return -1;
    FILE *f = a.f;
    char *stats = sim_stats_json(s);
    put_header(f, s, stats);
    free(stats);
    put_meta(f, s);
    for (size_t i = 0; i < s->tr.ninst; i++) {
        put_inst(f, s, &s->tr.inst[i]);
        fputs(",\n", f);
    }
    for (size_t i = 0; i < s->tr.ndma; i++) {
        put_dma(f, s, &s->tr.dma[i]);
        fputs(",\n", f);
    }
    for (size_t i = 0; i < s->tr.nsem; i++) {
        put_sem(f, s, &s->tr.sem[i]);
        fputs(",\n", f);
    }
    /* a last metadata event keeps every element above comma-terminated */
    fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"core0\"}}\n]}\n");
    if (ferror(f)) {
        fio_atomic_abort(&a);
        return tpb_errf(err, "%s: write error", path);
    }
    return fio_atomic_commit(&a, err);
}
