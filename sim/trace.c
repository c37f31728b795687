/* trace.c - record instruction, DMA and semaphore events during the run and
 * write them as Chrome trace-event JSON (docs/trace-format.md), atomically. */
#include "sim_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dis.h"
#include "fileio.h"
#include "hugepage.h"
#include "jsonw.h"

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
            /* a long run's records fill many MB: fault them in 2 MiB pages */    \
            tpb_advise_huge_pages(p_, nc_ * sizeof *(arr));                        \
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

/* ---- writing ----
 *
 * A big run has hundreds of thousands of events, so the writer avoids the
 * printf family per event: numbers and strings go through jsonw.h (common/), and the
 * text that depends only on the instruction (its wait condition, semaphore
 * update and isa_format_inst() fields) is cached per distinct instruction
 * and copied (loops, and unrolled loops, repeat the same instruction bundle
 * many times).  The bytes are those of the original
 * printf-based writer; docs/trace-format.md is the contract. */

/* The static text of an instruction is remembered in a direct-mapped cache
 * of MEMO_SLOTS entries (a few MB at most, allocated untouched): the distinct
 * instructions of a loop body stay cached, a stream of all-different
 * instructions just replaces entries, and memory never grows with the run. */
#define MEMO_SLOTS 4096u
#define MEMO_TEXT 488u           /* longer texts are formatted every time */

typedef struct {
    isa_inst_t key;
    uint16_t pre_len, post_len;  /* ,"wait":..  |  ,"update":..,"fields":.. */
    char text[MEMO_TEXT];
} memo_slot_t;

typedef struct {
    uint64_t *tag;               /* [MEMO_SLOTS] hash | 1 of the slot's key; 0 = empty */
    memo_slot_t *slot;           /* [MEMO_SLOTS], valid where tag != 0 (never cleared:
                                    only the slots used are ever touched) */
    jb_t scratch;                /* a miss is formatted here first */
} inst_memo_t;

/* Where the static text of the current instruction is. */
typedef struct {
    const char *text;
    size_t pre_len, post_len;
} inst_text_t;

typedef struct {
    size_t off, len;             /* text in trace_writer_t.names; len 0 = not yet */
} name_ref_t;

typedef struct {
    const sim_t *s;
    jb_t out;
    inst_memo_t memo;
    jb_t names;                  /* escaped JSON strings of lane/counter names */
    name_ref_t *sem_name;        /* [ncores * ISA_NUM_SEMAPHORES] */
    name_ref_t *dma_name;        /* [ncores * dma_queues] */
    bool oom;
} trace_writer_t;

static uint64_t hash_inst(const isa_inst_t *in)
{
    const unsigned char *p = (const unsigned char *)in;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    size_t i = 0;
    for (; i + 8 <= sizeof *in; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    for (; i < sizeof *in; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

static int memo_init(inst_memo_t *m)
{
    memset(m, 0, sizeof *m);
    m->tag = calloc(MEMO_SLOTS, sizeof *m->tag);
    m->slot = malloc(MEMO_SLOTS * sizeof *m->slot);
    if (!m->tag || !m->slot || jb_init_mem(&m->scratch, 4096) != 0)
        return -1;
    return 0;
}

static void memo_free(inst_memo_t *m)
{
    free(m->tag);
    free(m->slot);
    jb_free(&m->scratch);
    memset(m, 0, sizeof *m);
}

/* ,"wait":"..." when the instruction waits on a semaphore or a barrier
 * (the same text and truncation as the original snprintf code). */
static void put_inst_wait(jb_t *b, const isa_inst_t *in)
{
    const isa_sync_t *h = &in->sync;
    char wait[96] = "";
    if (h->wait_en)
        snprintf(wait, sizeof wait, h->wait_reg ? "S%u>=%u+r%u" : "S%u>=%u", h->wait_sem,
                 h->wait_val, ISA_NUM_REGS - h->wait_reg);
    if (in->op == ISA_OP_CORE_BARRIER) {
        size_t o = strlen(wait);
        snprintf(wait + o, sizeof wait - o, "%sbarrier %u cores=0x%x", o ? " " : "",
                 in->f.CB.id, in->f.CB.cores);
    }
    if (wait[0]) {
        jb_lit(b, ",\"wait\":");
        jb_jstr(b, wait);
    }
}

/* ,"update":"..." (when it updates a semaphore) and ,"fields":"...". */
static void put_inst_update_fields(jb_t *b, const isa_inst_t *in)
{
    const isa_sync_t *h = &in->sync;
    if (h->upd_en) {
        char upd[96];
        const char *op = isa_enum_name(ISA_FT_SEMOP, h->upd_op);
        snprintf(upd, sizeof upd, "S%u %s %u @%s", h->upd_sem, op ? op : "?", h->upd_val,
                 h->upd_at_read ? "read" : "complete");
        if (h->upd_remote) {
            size_t o = strlen(upd);
            snprintf(upd + o, sizeof upd - o, " core%u", h->upd_core);
        }
        jb_lit(b, ",\"update\":");
        jb_jstr(b, upd);
    }
    char fields[1024];
    isa_format_inst(in, fields, sizeof fields);
    jb_lit(b, ",\"fields\":");
    jb_jstr(b, fields);
}

/* The static text of `in` (wait, update, fields), from the cache or
 * formatted now; valid until the next call.  False when out of memory. */
static bool inst_text(trace_writer_t *w, const isa_inst_t *in, inst_text_t *out)
{
    inst_memo_t *m = &w->memo;
    uint64_t h = hash_inst(in) | 1;
    size_t i = (size_t)(h >> 1) & (MEMO_SLOTS - 1);
    memo_slot_t *e = &m->slot[i];
    if (m->tag[i] == h && memcmp(&e->key, in, sizeof *in) == 0) {
        *out = (inst_text_t){ e->text, e->pre_len, e->post_len };
        return true;
    }
    jb_t *b = &m->scratch;
    b->len = 0;
    put_inst_wait(b, in);
    size_t mid = b->len;
    put_inst_update_fields(b, in);
    if (jb_failed(b)) {
        w->oom = true;
        return false;
    }
    *out = (inst_text_t){ b->buf, mid, b->len - mid };
    if (b->len <= MEMO_TEXT) {
        m->tag[i] = h;
        e->key = *in;
        e->pre_len = (uint16_t)mid;
        e->post_len = (uint16_t)(b->len - mid);
        memcpy(e->text, b->buf, b->len);
    }
    return true;
}

/* One monotone mapping for every timestamp of the trace (round to the
 * nearest reference cycle), so events that do not overlap in time never
 * overlap in cycles either. */
static uint64_t ref_at(const sim_t *s, uint64_t ps)
{
    return sim_ps_dur_to_ref(s->t, ps);
}

static void put_ref(jb_t *b, const sim_t *s, sim_ref_t r)
{
    jb_lit(b, "{\"pid\":");
    jb_i64(b, r.core + 1);
    jb_lit(b, ",\"tid\":");
    jb_u64(b, r.tid);
    jb_lit(b, ",\"pc\":");
    jb_u64(b, r.pc);
    if (r.start_ps != SIM_NO_TIME) {
        jb_lit(b, ",\"start_cycle\":");
        jb_u64(b, ref_at(s, r.start_ps));
    }
    jb_putc(b, '}');
}

/* The escaped JSON string of a name built by snprintf (truncated to 159
 * bytes like the original fixed buffer), cached in w->names. */
static void put_cached_name(trace_writer_t *w, name_ref_t *ref, const char *prefix, unsigned n,
                            const char *name)
{
    if (!ref->len) {
        char text[160];
        snprintf(text, sizeof text, "%s%u%s%s", prefix, n, name ? " " : "", name ? name : "");
        ref->off = w->names.len;
        jb_jstr(&w->names, text);
        if (jb_failed(&w->names)) {
            w->oom = true;
            return;
        }
        ref->len = w->names.len - ref->off;
    }
    jb_put(&w->out, w->names.buf + ref->off, ref->len);
}

static void put_meta(jb_t *b, const sim_t *s)
{
    for (unsigned ci = 0; ci < s->ncores; ci++) {
        const sim_core_t *c = &s->cores[ci];
        jb_printf(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"core%u\"}},\n",
                  ci + 1, ci);
        jb_printf(b, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"args\":{\"sort_index\":%u}},\n",
                  ci + 1, ci);
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            if (!c->eng[k].present)
                continue;
            jb_printf(b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
                      ci + 1, k + 1);
            jb_jstr(b, isa_engine_name(isa_tpb_engines[k]));
            jb_printf(b, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
                      "\"args\":{\"sort_index\":%u}},\n", ci + 1, k + 1, k + 1);
        }
        for (unsigned q = 0; q < s->t->dma_queues; q++) {
            const sim_queue_t *Q = &c->queues[q];
            if (!Q->transfers)
                continue;
            /* one lane per slot (transfer in flight at once) the queue used */
            for (unsigned sl = 0; sl <= Q->max_slot && sl < SIM_DMA_TRACE_SLOTS; sl++) {
                char name[160];
                snprintf(name, sizeof name, "q%u%s%s [%u]", q, Q->name ? " " : "",
                         Q->name ? Q->name : "", sl);
                unsigned tid = SIM_DMA_LANE_TID + q * SIM_DMA_TRACE_SLOTS + sl;
                jb_printf(b, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":",
                          ci + 1, tid);
                jb_jstr(b, name);
                jb_printf(b, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%u,\"tid\":%u,"
                          "\"args\":{\"sort_index\":%u}},\n", ci + 1, tid, tid);
            }
        }
    }
}

static void put_inst(trace_writer_t *w, const sim_tr_inst_t *r)
{
    const sim_t *s = w->s;
    jb_t *b = &w->out;
    const sim_engine_t *e = &s->cores[r->core].eng[r->slot];
    const isa_decoded_t *d = &e->stream.insts[r->idx];
    const isa_opinfo_t *oi = &isa_ops[d->inst.op];
    inst_text_t txt;
    if (!inst_text(w, &d->inst, &txt))
        return;
    jb_lit(b, "{\"ph\":\"X\",\"pid\":");
    jb_u64(b, r->core + 1u);
    jb_lit(b, ",\"tid\":");
    jb_u64(b, r->slot + 1u);
    jb_lit(b, ",\"name\":");
    jb_jstr(b, oi->mnemonic);
    jb_lit(b, ",\"cat\":");
    jb_jstr(b, isa_class_name(oi->cls));
    jb_lit(b, ",\"ts\":");
    jb_us(b, r->start_ps);
    jb_lit(b, ",\"dur\":");
    jb_us(b, r->end_ps - r->start_ps);
    uint64_t sc = ref_at(s, r->start_ps);
    uint64_t ic = ref_at(s, r->issue_ps);
    jb_lit(b, ",\"args\":{\"pc\":");
    jb_u64(b, d->pc);
    jb_lit(b, ",\"index\":");
    jb_u64(b, r->idx);
    jb_lit(b, ",\"opcode\":");
    jb_u64(b, d->inst.l2);
    jb_lit(b, ",\"start_cycle\":");
    jb_u64(b, sc);
    jb_lit(b, ",\"end_cycle\":");
    jb_u64(b, ref_at(s, r->end_ps));
    jb_lit(b, ",\"issue_cycle\":");
    jb_u64(b, ic);
    jb_lit(b, ",\"wait_cycles\":");
    jb_u64(b, sc - ic);
    uint64_t pc = r->port_ps ? ref_at(s, r->port_ps) : 0;
    if (pc) {   /* of the wait: a memory port another engine held (port.c) */
        jb_lit(b, ",\"port_wait_cycles\":");
        jb_u64(b, pc);
    }
    if (r->iter != UINT32_MAX) {
        jb_lit(b, ",\"iter\":");
        jb_u64(b, r->iter);
    }
    jb_put(b, txt.text, txt.pre_len);
    jb_lit(b, ",\"waited_for\":[");
    if (r->waited_for.core >= 0)
        put_ref(b, s, r->waited_for);
    jb_putc(b, ']');
    jb_put(b, txt.text + txt.pre_len, txt.post_len);
    if (e->debug && e->debug[r->idx].src) {
        jb_lit(b, ",\"src\":");
        jb_jstr(b, e->debug[r->idx].src);
    }
    if (e->debug && e->debug[r->idx].name) {
        jb_lit(b, ",\"op_name\":");
        jb_jstr(b, e->debug[r->idx].name);
    }
    if (e->debug && e->debug[r->idx].buf) {
        jb_lit(b, ",\"buf\":");
        jb_jstr(b, e->debug[r->idx].buf);
    }
    jb_lit(b, "}}");
}

static void put_dma(trace_writer_t *w, const sim_tr_dma_t *r)
{
    const sim_t *s = w->s;
    jb_t *b = &w->out;
    const sim_queue_t *Q = &s->cores[r->core].queues[r->queue];
    jb_lit(b, "{\"ph\":\"X\",\"pid\":");
    jb_u64(b, r->core + 1u);
    jb_lit(b, ",\"tid\":");
    jb_u64(b, SIM_DMA_LANE_TID + r->queue * (unsigned)SIM_DMA_TRACE_SLOTS + r->slot);
    jb_lit(b, ",\"name\":");
    put_cached_name(w, &w->dma_name[(size_t)r->core * s->t->dma_queues + r->queue], "DMA q",
                    r->queue, Q->name);
    jb_lit(b, ",\"cat\":\"dma\",\"ts\":");
    jb_us(b, r->start_ps);
    jb_lit(b, ",\"dur\":");
    jb_us(b, r->end_ps - r->start_ps);
    jb_lit(b, ",\"args\":{\"pc\":");
    jb_u64(b, r->issuer.pc);
    jb_lit(b, ",\"queue\":");
    jb_u64(b, r->queue);
    jb_lit(b, ",\"bytes\":");
    jb_u64(b, r->bytes);
    jb_lit(b, ",\"descriptors\":");
    jb_u64(b, r->ndesc);
    jb_lit(b, ",\"start_cycle\":");
    jb_u64(b, ref_at(s, r->start_ps));
    jb_lit(b, ",\"end_cycle\":");
    jb_u64(b, ref_at(s, r->end_ps));
    jb_lit(b, ",\"issuer\":");
    put_ref(b, s, r->issuer);
    jb_lit(b, "}}");
}

static void put_sem(trace_writer_t *w, const sim_tr_sem_t *r)
{
    const sim_sem_t *S = &w->s->cores[r->core].sem[r->sem];
    jb_t *b = &w->out;
    jb_lit(b, "{\"ph\":\"C\",\"pid\":");
    jb_u64(b, r->core + 1u);
    jb_lit(b, ",\"name\":");
    put_cached_name(w, &w->sem_name[(size_t)r->core * ISA_NUM_SEMAPHORES + r->sem], "sem S",
                    r->sem, S->name);
    jb_lit(b, ",\"ts\":");
    jb_us(b, r->t);
    jb_lit(b, ",\"args\":{\"value\":");
    jb_u64(b, r->value);
    jb_lit(b, "}}");
}

static void put_header(jb_t *b, const sim_t *s, const char *stats)
{
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    jb_lit(b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"format\":\"tpbsim-trace\",\"version\":1,"
           "\"kernel\":");
    jb_jstr(b, sum.kernel);
    jb_lit(b, ",\"target\":");
    jb_jstr(b, s->t->name);
    jb_printf(b, ",\"clock_ghz\":%g,\"total_cycles\":%" PRIu64 ",\"num_cores\":%u,"
              "\"engine_clock_ghz\":{\"PE\":%g,\"Activation\":%g,\"Pool\":%g,\"DVE\":%g,\"SP\":%g},"
              "\"stats\":",
              s->t->clk_ref, sum.total_cycles, s->ncores, s->t->clk_pe, s->t->clk_act,
              s->t->clk_pool, s->t->clk_dve, s->t->clk_sp);
    const char *st = stats ? stats : "{}";
    jb_put(b, st, strlen(st));
    jb_lit(b, "},\n\"traceEvents\":[\n");
}

static void put_events(trace_writer_t *w)
{
    const sim_t *s = w->s;
    for (size_t i = 0; i < s->tr.ninst && !w->oom; i++) {
        put_inst(w, &s->tr.inst[i]);
        jb_lit(&w->out, ",\n");
    }
    for (size_t i = 0; i < s->tr.ndma && !w->oom; i++) {
        put_dma(w, &s->tr.dma[i]);
        jb_lit(&w->out, ",\n");
    }
    /* every counter track starts at 0 at time 0 (semaphores start at 0) */
    static const size_t nbits = SIM_MAX_CORES * ISA_NUM_SEMAPHORES;
    uint8_t seen[SIM_MAX_CORES * ISA_NUM_SEMAPHORES] = { 0 };
    for (size_t i = 0; i < s->tr.nsem && !w->oom; i++) {
        const sim_tr_sem_t *r = &s->tr.sem[i];
        size_t k = (size_t)r->core * ISA_NUM_SEMAPHORES + r->sem;
        if (k < nbits && !seen[k] && r->t > 0) {
            sim_tr_sem_t z = { .t = 0, .core = r->core, .sem = r->sem, .value = 0 };
            put_sem(w, &z);
            jb_lit(&w->out, ",\n");
        }
        if (k < nbits)
            seen[k] = 1;
    }
    for (size_t i = 0; i < s->tr.nsem && !w->oom; i++) {
        put_sem(w, &s->tr.sem[i]);
        jb_lit(&w->out, ",\n");
    }
    /* a last metadata event keeps every element above comma-terminated */
    jb_lit(&w->out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"core0\"}}\n]}\n");
}

static int writer_init(trace_writer_t *w, const sim_t *s, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    size_t ncores = s->ncores ? s->ncores : 1, nq = s->t->dma_queues ? s->t->dma_queues : 1;
    w->sem_name = calloc(ncores * ISA_NUM_SEMAPHORES, sizeof *w->sem_name);
    w->dma_name = calloc(ncores * nq, sizeof *w->dma_name);
    int bad = !w->sem_name || !w->dma_name;
    bad |= jb_init_file(&w->out, f, 0) != 0;
    bad |= jb_init_mem(&w->names, 4096) != 0;
    bad |= memo_init(&w->memo) != 0;
    return bad ? -1 : 0;
}

static void writer_free(trace_writer_t *w)
{
    jb_free(&w->out);
    jb_free(&w->names);
    memo_free(&w->memo);
    free(w->sem_name);
    free(w->dma_name);
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
    a.nosync = !s->opt.fsync;
    trace_writer_t w;
    if (writer_init(&w, s, a.f) != 0) {
        writer_free(&w);
        fio_atomic_abort(&a);
        return tpb_errf(err, "%s: out of memory while writing the trace", path);
    }
    char *stats = sim_stats_json(s);
    put_header(&w.out, s, stats);
    free(stats);
    put_meta(&w.out, s);
    put_events(&w);
    jb_flush(&w.out);
    bool oom = w.oom, failed = jb_failed(&w.out);
    writer_free(&w);
    if (oom || failed || ferror(a.f)) {
        fio_atomic_abort(&a);
        return tpb_errf(err, "%s: %s", path, oom ? "out of memory while writing the trace"
                                                 : "write error");
    }
    return fio_atomic_commit(&a, err);
}
