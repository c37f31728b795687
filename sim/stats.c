/* stats.c - run statistics as JSON (`--stats-json`, and otherData.stats of
 * the trace).  Cycles are reference-clock cycles (docs/timing.md). */
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "fileio.h"

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static cJSON *engine_json(const sim_t *s, unsigned ci, unsigned k, uint64_t total)
{
    sim_engine_stats_t es;
    sim_get_engine_stats(s, ci, k, &es);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", es.name);
    cJSON_AddBoolToObject(o, "present", es.present);
    cJSON_AddNumberToObject(o, "instructions", (double)es.instructions);
    cJSON_AddNumberToObject(o, "busy_cycles", (double)es.busy_cycles);
    cJSON_AddNumberToObject(o, "utilisation", ratio(es.busy_cycles, total));
    cJSON_AddNumberToObject(o, "sem_wait_cycles", (double)es.sem_wait_cycles);
    cJSON_AddNumberToObject(o, "barrier_wait_cycles", (double)es.barrier_wait_cycles);
    cJSON_AddNumberToObject(o, "port_wait_cycles", (double)es.port_wait_cycles);
    return o;
}

static cJSON *queue_json(const sim_t *s, const sim_queue_stats_t *q)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "queue", q->queue);
    if (q->name)
        cJSON_AddStringToObject(o, "name", q->name);
    cJSON_AddNumberToObject(o, "bytes", (double)q->bytes);
    cJSON_AddNumberToObject(o, "transfers", (double)q->transfers);
    cJSON_AddNumberToObject(o, "descriptors", (double)q->descriptors);
    cJSON_AddNumberToObject(o, "busy_cycles", (double)q->busy_cycles);
    /* bytes per ns of busy time = GB/s */
    double ns = (double)q->busy_cycles / s->t->clk_ref;
    cJSON_AddNumberToObject(o, "bandwidth_gbps", ns > 0 ? (double)q->bytes / ns : 0.0);
    return o;
}

/* DMA activity of one core: the time any transfer was in flight, and each
 * DMA engine's bytes and busy time (docs/timing.md, DMA). */
static void dma_engines_json(const sim_t *s, unsigned ci, cJSON *co, uint64_t total)
{
    const sim_core_t *c = &s->cores[ci];
    uint64_t act = sim_ps_to_ref_cycles(s->t, c->dma_active_ps);
    cJSON_AddNumberToObject(co, "dma_active_cycles", (double)act);
    cJSON_AddNumberToObject(co, "dma_utilisation", ratio(act, total));
    cJSON *arr = cJSON_AddArrayToObject(co, "dma_engines");
    for (unsigned i = 0; i < s->t->dma_engines && i < SIM_DMA_MAX_ENGINES; i++) {
        if (!c->dma_engine_bytes[i])
            continue;
        uint64_t busy = sim_ps_to_ref_cycles(s->t, c->dma_engine_busy_ps[i]);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "engine", i);
        cJSON_AddNumberToObject(o, "bytes", (double)c->dma_engine_bytes[i]);
        cJSON_AddNumberToObject(o, "busy_cycles", (double)busy);
        cJSON_AddNumberToObject(o, "busy_ns", (double)c->dma_engine_busy_ps[i] / 1000.0);
        cJSON_AddNumberToObject(o, "utilisation", ratio(busy, total));
        cJSON_AddItemToArray(arr, o);
    }
}

char *sim_stats_json(const sim_t *s)
{
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "total_cycles", (double)sum.total_cycles);
    cJSON_AddNumberToObject(root, "sim_time_ns", (double)sum.total_ps / 1000.0);
    cJSON_AddNumberToObject(root, "clock_ghz", sum.clock_ghz);
    cJSON_AddStringToObject(root, "target", sum.target);
    cJSON_AddStringToObject(root, "kernel", sum.kernel);
    cJSON_AddNumberToObject(root, "num_cores", sum.num_cores);
    if (s->placement) {   /* launch-grid instance -> core (placement.json) */
        cJSON *pl = cJSON_CreateObject();
        cJSON_AddItemToObject(pl, "grid", cJSON_Duplicate(
            cJSON_GetObjectItemCaseSensitive(s->placement, "grid"), true));
        cJSON_AddItemToObject(pl, "instances", cJSON_Duplicate(
            cJSON_GetObjectItemCaseSensitive(s->placement, "instances"), true));
        cJSON_AddItemToObject(root, "placement", pl);
    }
    cJSON_AddNumberToObject(root, "instructions", (double)sum.instructions);
    cJSON *cls = cJSON_AddObjectToObject(root, "instructions_by_class");
    for (unsigned c = 0; c < ISA_CLASS_COUNT; c++)
        if (c != ISA_CLASS_PREFIX)
            cJSON_AddNumberToObject(cls, isa_class_name((isa_class_t)c), (double)sum.by_class[c]);
    uint64_t sem_wait = 0, dma_bytes = 0, spill_save = 0, spill_reload = 0;
    cJSON *cores = cJSON_AddArrayToObject(root, "cores");
    for (unsigned ci = 0; ci < s->ncores; ci++) {
        cJSON *co = cJSON_CreateObject();
        cJSON_AddNumberToObject(co, "core", ci);
        cJSON *engs = cJSON_AddArrayToObject(co, "engines");
        for (unsigned k = 0; k < SIM_ENGINES; k++) {
            cJSON *e = engine_json(s, ci, k, sum.total_cycles);
            sem_wait += (uint64_t)cJSON_GetObjectItem(e, "sem_wait_cycles")->valuedouble;
            cJSON_AddItemToArray(engs, e);
        }
        cJSON *qs = cJSON_AddArrayToObject(co, "queues");
        sim_queue_stats_t *qv = calloc(s->t->dma_queues ? s->t->dma_queues : 1, sizeof *qv);
        unsigned nq = qv ? sim_get_queue_stats(s, ci, qv, s->t->dma_queues) : 0;
        for (unsigned i = 0; i < nq; i++) {
            dma_bytes += qv[i].bytes;
            if (qv[i].name && strstr(qv[i].name, "SpillReload")) {   /* spill queues */
                spill_save += qv[i].bytes_to_hbm;
                spill_reload += qv[i].bytes - qv[i].bytes_to_hbm;
            }
            cJSON_AddItemToArray(qs, queue_json(s, &qv[i]));
        }
        free(qv);
        dma_engines_json(s, ci, co, sum.total_cycles);
        cJSON_AddItemToArray(cores, co);
    }
    cJSON_AddNumberToObject(root, "sem_wait_cycles", (double)sem_wait);
    cJSON_AddNumberToObject(root, "dma_bytes", (double)dma_bytes);
    if (spill_save || spill_reload) {   /* a compile that spilled SBUF (docs/compiler.md) */
        cJSON_AddNumberToObject(root, "spill_save_bytes", (double)spill_save);
        cJSON_AddNumberToObject(root, "spill_reload_bytes", (double)spill_reload);
    }
    cJSON_AddNumberToObject(root, "wall_seconds", sum.wall_seconds);
    cJSON_AddNumberToObject(root, "sim_instructions_per_second",
                            sum.wall_seconds > 0 ? (double)sum.instructions / sum.wall_seconds : 0.0);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (unsigned i = 0; i < sum.warnings; i++)
        cJSON_AddItemToArray(w, cJSON_CreateString(sim_warning(s, i)));
    char *txt = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return txt;
}

int sim_write_stats_json(const sim_t *s, const char *path, tpb_err_t *err)
{
    char *txt = sim_stats_json(s);
    if (!txt)
        return tpb_errf(err, "%s: out of memory building stats", path);
    size_t n = strlen(txt);
    txt[n] = 0;
    char *withnl = malloc(n + 2);
    if (!withnl) {
        free(txt);
        return tpb_errf(err, "%s: out of memory", path);
    }
    memcpy(withnl, txt, n);
    withnl[n] = '\n';
    int rc = fio_write_atomic_sync(path, withnl, n + 1, s->opt.fsync, err);
    free(withnl);
    free(txt);
    return rc;
}
