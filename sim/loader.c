/* loader.c - read an artifact directory (docs/artifacts.md): tensor-map.json,
 * nc<i>/sg0/<Engine>.bin (decoded once), <Engine>.json sidecars, def.json,
 * constant tensors; bind .npy inputs; read back outputs. */
#include "sim_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cJSON.h"
#include "fileio.h"
#include "hugepage.h"
#include "jsonread.h"
#include "numeric.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int read_json(const char *path, cJSON **out, tpb_err_t *err)
{
    return tpb_json_read_file(path, out, err);
}

/* A tree that is only read while loading: its nodes live in `a` (freed by
 * the caller with tpb_arena_free, never cJSON_Delete).  placement.json is
 * kept in sim_t and copied into stats, so it stays a cJSON tree. */
static int read_json_ro(tpb_arena_t *a, const char *path, cJSON **out, tpb_err_t *err)
{
    return tpb_json_read_file_arena(a, path, out, err);
}

static char *dup_str(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- tensor map ---- */

static int parse_tensor(sim_t *s, const char *path, int i, const cJSON *j, sim_tensor_t *t,
                        tpb_err_t *err)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(j, "kind");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(j, "shape");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(j, "dtype");
    const cJSON *addr = cJSON_GetObjectItemCaseSensitive(j, "hbm_addr");
    const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(j, "bytes");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(j, "file");
    if (!cJSON_IsString(name) || !cJSON_IsString(kind) || !cJSON_IsArray(shape) ||
        !cJSON_IsString(dtype) || !cJSON_IsNumber(addr))
        return tpb_errf(err, "%s: tensors[%d]: needs string name, kind, dtype, array shape and "
                        "number hbm_addr", path, i);
    const char *k = kind->valuestring;
    if (strcmp(k, "input") && strcmp(k, "output") && strcmp(k, "constant") && strcmp(k, "scratch"))
        return tpb_errf(err, "%s: tensors[%d] (%s): field kind: '%s' is not input, output, "
                        "constant or scratch", path, i, name->valuestring, k);
    int dt = isa_dtype_by_name(dtype->valuestring);
    if (dt < 0)
        return tpb_errf(err, "%s: tensors[%d] (%s): field dtype: unknown dtype '%s'", path, i,
                        name->valuestring, dtype->valuestring);
    t->name = dup_str(name->valuestring);
    t->kind = dup_str(k);
    t->dtype = (unsigned)dt;
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(j, "print_prefix");
    if (cJSON_IsString(pp))
        t->print_prefix = dup_str(pp->valuestring);
    int nd = cJSON_GetArraySize(shape);
    if (nd > NPY_MAX_DIMS)
        return tpb_errf(err, "%s: tensors[%d] (%s): field shape: more than %d dims", path, i,
                        t->name, NPY_MAX_DIMS);
    t->ndim = nd;
    uint64_t n = 1;
    for (int d = 0; d < nd; d++) {
        const cJSON *v = cJSON_GetArrayItem(shape, d);
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e12 ||
            v->valuedouble != (double)(int64_t)v->valuedouble)
            return tpb_errf(err, "%s: tensors[%d] (%s): field shape[%d]: not a valid size", path, i,
                            t->name, d);
        t->shape[d] = (int64_t)v->valuedouble;
        if (t->shape[d] && n > (1ull << 40) / (uint64_t)t->shape[d])
            n = (1ull << 40) + 1; /* reported below */
        else
            n *= (uint64_t)t->shape[d];
    }
    if (addr->valuedouble < 0 || addr->valuedouble > 1e15)
        return tpb_errf(err, "%s: tensors[%d] (%s): field hbm_addr %.0f is out of range", path, i,
                        t->name, addr->valuedouble);
    if (addr->valuedouble != (double)(uint64_t)addr->valuedouble)
        return tpb_errf(err, "%s: tensors[%d] (%s): field hbm_addr %g is not an integer", path, i,
                        t->name, addr->valuedouble);
    if (n > (1ull << 40))
        return tpb_errf(err, "%s: tensors[%d] (%s): field shape: %llu elements is too large", path,
                        i, t->name, (unsigned long long)n);
    t->addr = (uint64_t)addr->valuedouble;
    t->bytes = n * isa_dtype_size(t->dtype);
    if (cJSON_IsNumber(bytes) && bytes->valuedouble != (double)t->bytes)
        return tpb_errf(err, "%s: tensors[%d] (%s): field bytes: %.0f but shape x dtype gives %llu",
                        path, i, t->name, bytes->valuedouble, (unsigned long long)t->bytes);
    if (t->addr + t->bytes > s->hbm_bytes)
        return tpb_errf(err, "%s: tensors[%d] (%s): [%llu, %llu) is outside hbm_bytes %llu", path,
                        i, t->name, (unsigned long long)t->addr,
                        (unsigned long long)(t->addr + t->bytes), (unsigned long long)s->hbm_bytes);
    if (cJSON_IsString(file))
        t->file = dup_str(file->valuestring);
    else if (!strcmp(k, "constant"))
        return tpb_errf(err, "%s: tensors[%d] (%s): a constant needs a string field file", path, i,
                        t->name);
    return 0;
}

static uint64_t tensors_extent(const cJSON *tensors)
{
    uint64_t hi = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, tensors)
    {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "hbm_addr");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "bytes");
        if (cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble >= 0 && b->valuedouble >= 0 &&
            a->valuedouble + b->valuedouble < 1e15 && a->valuedouble + b->valuedouble > (double)hi)
            hi = (uint64_t)(a->valuedouble + b->valuedouble);
    }
    return hi;
}

static unsigned count_core_dirs(const char *dir)
{
    unsigned n = 0;
    char p[4200];
    while (n < 64) {
        snprintf(p, sizeof p, "%s/nc%u", dir, n);
        if (!fio_is_dir(p))
            break;
        n++;
    }
    return n;
}

static int load_tensor_map(sim_t *s, const char *dir, tpb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/tensor-map.json", dir);
    tpb_arena_t arena = { 0 };
    cJSON *root;
    if (read_json_ro(&arena, path, &root, err) != 0) {
        tpb_arena_free(&arena);
        return -1;
    }
    int rc = -1;
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    const cJSON *kern = cJSON_GetObjectItemCaseSensitive(root, "kernel");
    const cJSON *tgt = cJSON_GetObjectItemCaseSensitive(root, "target");
    const cJSON *nc = cJSON_GetObjectItemCaseSensitive(root, "num_cores");
    const cJSON *hb = cJSON_GetObjectItemCaseSensitive(root, "hbm_bytes");
    const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(root, "tensors");
    if (!cJSON_IsObject(root)) {
        tpb_errf(err, "%s: top level must be an object", path);
        goto out;
    }
    if (cJSON_IsString(fmt) && strcmp(fmt->valuestring, "tpbsim-tensor-map")) {
        tpb_errf(err, "%s: field format: '%s' is not tpbsim-tensor-map", path, fmt->valuestring);
        goto out;
    }
    if (!cJSON_IsArray(tensors)) {
        tpb_errf(err, "%s: field tensors %s", path, tensors ? "must be an array" : "missing (an array of tensors)");
        goto out;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    if (ver && (!cJSON_IsNumber(ver) || ver->valuedouble != 1)) {
        tpb_errf(err, "%s: field version: this simulator reads version 1", path);
        goto out;
    }
    s->kernel = dup_str(cJSON_IsString(kern) ? kern->valuestring : "");
    s->t = s->opt.target;
    if (!s->t && cJSON_IsString(tgt)) {
        s->t = tpb_target_get(tgt->valuestring);
        if (!s->t) {
            tpb_errf(err, "%s: field target: unknown target '%s' (known: %s)", path,
                     tgt->valuestring, tpb_target_names());
            goto out;
        }
    }
    if (!s->t)
        s->t = tpb_target_default();
    if (s->opt.target && cJSON_IsString(tgt) && strcmp(tgt->valuestring, s->t->name))
        sim_add_warning(s, "%s: compiled for target %s, simulated with %s parameters", path,
                        tgt->valuestring, s->t->name);
    if (cJSON_IsNumber(nc)) {
        if (nc->valuedouble < 1 || nc->valuedouble > s->t->max_cores ||
            nc->valuedouble > SIM_MAX_CORES || nc->valuedouble != (double)(int)nc->valuedouble) {
            tpb_errf(err, "%s: field num_cores: %g is not an integer in 1..%u", path,
                     nc->valuedouble,
                     s->t->max_cores < SIM_MAX_CORES ? s->t->max_cores : SIM_MAX_CORES);
            goto out;
        }
        s->ncores = (unsigned)nc->valuedouble;
    } else {
        s->ncores = count_core_dirs(dir);
        if (s->ncores == 0) {
            tpb_errf(err, "%s: no num_cores and no nc0/ directory", path);
            goto out;
        }
        if (s->ncores > SIM_MAX_CORES || s->ncores > s->t->max_cores) {
            tpb_errf(err, "%s: %u core directories, more than the %u supported", dir, s->ncores,
                     s->t->max_cores);
            goto out;
        }
    }
    if (cJSON_IsNumber(hb)) {
        if (hb->valuedouble < 0 || hb->valuedouble > (double)s->t->hbm_bytes ||
            hb->valuedouble != (double)(uint64_t)hb->valuedouble) {
            tpb_errf(err, "%s: field hbm_bytes: %g is not an integer in 0..%llu (target %s)", path,
                     hb->valuedouble, (unsigned long long)s->t->hbm_bytes, s->t->name);
            goto out;
        }
        s->hbm_bytes = (uint64_t)hb->valuedouble;
    } else {
        s->hbm_bytes = tensors_extent(tensors);
    }
    if (s->hbm_bytes > s->t->hbm_bytes) {
        tpb_errf(err, "%s: field hbm_bytes: %llu exceeds the %llu bytes of target %s", path,
                 (unsigned long long)s->hbm_bytes, (unsigned long long)s->t->hbm_bytes, s->t->name);
        goto out;
    }
    int nt = tensors ? cJSON_GetArraySize(tensors) : 0;
    s->tensors = calloc(nt ? (size_t)nt : 1, sizeof *s->tensors);
    if (!s->tensors) {
        tpb_errf(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < nt; i++) {
        s->ntensors = (unsigned)i + 1;
        if (parse_tensor(s, path, i, cJSON_GetArrayItem(tensors, i), &s->tensors[i], err) != 0)
            goto out;
        for (int k = 0; k < i; k++)
            if (!strcmp(s->tensors[k].name, s->tensors[i].name)) {
                tpb_errf(err, "%s: tensors[%d]: duplicate tensor name '%s'", path, i,
                         s->tensors[i].name);
                goto out;
            }
    }
    rc = 0;
out:
    tpb_arena_free(&arena);
    return rc;
}

/* ---- per core ---- */

/* rb: the loader's read buffer (the parse copies what it keeps) */
static int load_sidecar(sim_engine_t *e, const char *path, fio_buf_t *rb, tpb_err_t *err)
{
    if (!fio_exists(path))
        return 0;
    size_t len;
    if (fio_read_buf(path, rb, &len, err) != 0)
        return -1;
    return sim_sidecar_parse(e, path, rb->p, len, true, NULL, err);
}

static int load_def(sim_t *s, sim_core_t *c, const char *path, tpb_err_t *err)
{
    if (!fio_exists(path))
        return 0;
    tpb_arena_t arena = { 0 };
    cJSON *root;
    if (read_json_ro(&arena, path, &root, err) != 0) {
        tpb_arena_free(&arena);
        return -1;
    }
    int rc = 0, i = 0;
    const cJSON *j;
    const cJSON *sems = cJSON_GetObjectItemCaseSensitive(root, "semaphores");
    const cJSON *queues = cJSON_GetObjectItemCaseSensitive(root, "queues");
    if (!cJSON_IsObject(root) || (sems && !cJSON_IsArray(sems)) || (queues && !cJSON_IsArray(queues))) {
        tpb_arena_free(&arena);
        return tpb_errf(err, "%s: %s", path, !cJSON_IsObject(root) ? "top level must be an object"
                        : sems && !cJSON_IsArray(sems) ? "field semaphores must be an array"
                                                       : "field queues must be an array");
    }
    cJSON_ArrayForEach(j, sems)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= ISA_NUM_SEMAPHORES ||
            id->valuedouble != (double)(int)id->valuedouble) {
            rc = tpb_errf(err, "%s: semaphores[%d]: field id missing, not an integer or outside "
                          "0..%d", path, i, ISA_NUM_SEMAPHORES - 1);
            break;
        }
        if (cJSON_IsString(name) && !c->sem[(int)id->valuedouble].name)
            c->sem[(int)id->valuedouble].name = strdup(name->valuestring);
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(j, queues)
    {
        if (rc)
            break;
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= s->t->dma_queues ||
            id->valuedouble != (double)(int)id->valuedouble) {
            rc = tpb_errf(err, "%s: queues[%d]: field id missing, not an integer or outside 0..%u",
                          path, i, s->t->dma_queues - 1);
            break;
        }
        if (cJSON_IsString(name) && !c->queues[(int)id->valuedouble].name)
            c->queues[(int)id->valuedouble].name = strdup(name->valuestring);
        i++;
    }
    tpb_arena_free(&arena);
    return rc;
}

/* LowerDVE's table: with a dve_table in the sidecar, every compute
 * instruction of the stream (sync, control, DMA and prefixes aside) must use
 * an opcode the table holds. */
static int check_table(const sim_engine_t *e, const char *path, tpb_err_t *err)
{
    if (!e->has_table)
        return 0;
    for (size_t i = 0; i < e->stream.count; i++) {
        const isa_decoded_t *d = &e->stream.insts[i];
        const isa_opinfo_t *oi = &isa_ops[d->inst.op];
        if (oi->cls == ISA_CLASS_SYNC || oi->cls == ISA_CLASS_CONTROL ||
            oi->cls == ISA_CLASS_DMA || oi->cls == ISA_CLASS_PREFIX)
            continue;
        if (!(e->table[oi->l2 >> 5] >> (oi->l2 & 31) & 1u))
            return tpb_errf(err, "%s: dve_table: opcode 0x%02x (%s) of the instruction at pc %u "
                                 "is not in the engine's DVE table",
                            path, oi->l2, oi->mnemonic, d->pc);
    }
    return 0;
}

/* What loading every stream of an artifact shares: one read buffer for
 * all the files (fio_read_buf), whose pages are faulted in once and not
 * per file, and one set of decode plans (isa_plans_t; NULL: out of memory,
 * each stream builds its own), instead of a table allocated and built per
 * stream. */
typedef struct {
    fio_buf_t rb;
    isa_plans_t *plans;
} load_ctx_t;

static int load_stream(sim_t *s, sim_core_t *c, unsigned k, const char *cdir, load_ctx_t *lc,
                       tpb_err_t *err)
{
    sim_engine_t *e = &c->eng[k];
    e->id = isa_tpb_engines[k];
    e->slot = k;
    e->due_bit = (uint8_t)(c->index * 8 + k);
    e->clk_mhz = sim_mhz(tpb_target_engine_ghz(s->t, e->id));
    uint64_t seed = s->opt.seed ^ ((uint64_t)c->index << 8 | k);
    sim_rng_seed(&e->rng, splitmix64(&seed));
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.bin", cdir, isa_engine_name(e->id));
    if (!fio_exists(path))
        return 0;
    size_t len;
    if (fio_read_buf(path, &lc->rb, &len, err) != 0)
        return -1;
    if (len == 0) {
        return tpb_errf(err, "%s: empty instruction stream (0 bytes; a stream holds at least one "
                        "64-byte bundle)", path);
    }
    isa_err_t ie;
    isa_status_t st = isa_stream_decode_planned(lc->plans, lc->rb.p, len, e->id, &e->stream, &ie);
    if (st != ISA_OK)
        return tpb_errf(err, "%s: byte offset %zu (bundle %zu)%s%s: %s", path, ie.offset,
                        ie.offset / ISA_BUNDLE_BYTES, ie.field ? ": field " : "",
                        ie.field ? ie.field : "", ie.msg);
    e->present = true;
    if (sim_memo_build(e, s->impl, err) != 0)
        return -1;
    snprintf(path, sizeof path, "%s/%s.json", cdir, isa_engine_name(e->id));
    if (load_sidecar(e, path, &lc->rb, err) || check_table(e, path, err))
        return -1;
    if (sim_check_hbm_reads(s, c, e, err) == 0)
        return 0;
    snprintf(path, sizeof path, "%s/%s.bin", cdir, isa_engine_name(e->id));
    return tpb_err_prefix(err, "%s", path);
}

/* HBM's sentinel, without filling bytes that are overwritten before
 * anything reads them: the range of an input or constant tensor that shares
 * no byte with another tensor is written whole when it is bound
 * (store_array), so it is left unfilled here and marked pending; an input
 * never bound is filled by sim_fill_pending before the run (sim_run refuses
 * to run without it anyway).  Everything else is filled now. */
static int by_addr(const void *a, const void *b)
{
    const sim_tensor_t *x = *(const sim_tensor_t *const *)a, *y = *(const sim_tensor_t *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void fill_hbm(sim_t *s)
{
    sim_tensor_t **v = malloc((s->ntensors ? s->ntensors : 1) * sizeof *v);
    unsigned n = 0;
    for (unsigned i = 0; v && i < s->ntensors; i++)
        if (s->tensors[i].bytes)
            v[n++] = &s->tensors[i];
    if (!v || !n) {
        free(v);
        memset(s->hbm, 0xFF, s->hbm_bytes);
        return;
    }
    qsort(v, n, sizeof *v, by_addr);
    uint64_t reach = 0; /* end of the furthest range before v[i] */
    for (unsigned i = 0; i < n; i++) {
        sim_tensor_t *t = v[i];
        uint64_t end = t->addr + t->bytes;
        bool alone = t->addr >= reach && (i + 1 == n || v[i + 1]->addr >= end);
        t->sentinel_pending = alone && (!strcmp(t->kind, "input") || !strcmp(t->kind, "constant"));
        reach = end > reach ? end : reach;
    }
    uint64_t at = 0;
    for (unsigned i = 0; i < n; i++)
        if (v[i]->sentinel_pending) {
            memset(s->hbm + at, 0xFF, v[i]->addr - at);
            at = v[i]->addr + v[i]->bytes;
        }
    memset(s->hbm + at, 0xFF, s->hbm_bytes - at);
    free(v);
}

void sim_fill_pending(sim_t *s)
{
    for (unsigned i = 0; i < s->ntensors; i++) {
        sim_tensor_t *t = &s->tensors[i];
        if (t->sentinel_pending)
            memset(s->hbm + t->addr, 0xFF, t->bytes);
        t->sentinel_pending = false;
    }
}

static int alloc_core(sim_t *s, sim_core_t *c, tpb_err_t *err)
{
    size_t sb = (size_t)s->t->partitions * s->t->sbuf_partition_bytes;
    size_t pb = (size_t)s->t->partitions * s->t->psum_partition_bytes;
    /* 2 MiB-aligned mappings in huge pages (common/hugepage.h), zeroed
     * lazily by the system: --timing-only never touches SBUF/PSUM values,
     * a functional run writes each cell's sentinel on first use (lazy.h) */
    c->sbuf_bytes = sb;
    c->psum_bytes = pb;
    c->sbuf = tpb_array_zalloc(sb);
    c->psum = tpb_array_zalloc(pb);
    /* c->pe: on the first PE op (sim.c exec_compute) */
    c->queues = calloc(s->t->dma_queues ? s->t->dma_queues : 1, sizeof *c->queues);
    if (s->opt.check_uninit) {
        c->sbuf_init = tpb_array_zalloc(sb);
        c->psum_init = tpb_array_zalloc(pb);
    }
    if (!c->sbuf || !c->psum || !c->queues ||
        (s->opt.check_uninit && (!c->sbuf_init || !c->psum_init)))
        return tpb_errf(err, "out of memory (core %u state)", c->index);
    /* the sentinel is written a cell at a time on first use (lazy.h) */
    if (!s->opt.timing_only) {
        sim_lazy_init(&c->sbuf_z, c->sbuf, s->t->partitions, s->t->sbuf_partition_bytes);
        sim_lazy_init(&c->psum_z, c->psum, s->t->partitions, s->t->psum_partition_bytes);
    }
    for (unsigned i = 0; i < ISA_NUM_SEMAPHORES; i++) {
        c->sem[i].last_writer = (sim_ref_t){ .core = -1, .start_ps = SIM_NO_TIME };
        c->sem[i].wake_at = UINT32_MAX;
    }
    return 0;
}

static int load_core(sim_t *s, unsigned ci, const char *dir, load_ctx_t *lc, tpb_err_t *err)
{
    sim_core_t *c = &s->cores[ci];
    c->index = ci;
    snprintf(c->dir, sizeof c->dir, "%s/nc%u/sg0", dir, ci);
    if (!fio_is_dir(c->dir))
        return tpb_errf(err, "%s: missing core directory (tensor map says %u core(s))", c->dir,
                        s->ncores);
    if (alloc_core(s, c, err) != 0)
        return -1;
    bool any = false;
    for (unsigned k = 0; k < SIM_ENGINES; k++) {
        if (load_stream(s, c, k, c->dir, lc, err) != 0)
            return -1;
        any |= c->eng[k].present;
    }
    if (!any)
        return tpb_errf(err, "%s: no instruction stream (expected PE.bin, Activation.bin, "
                        "Pool.bin, DVE.bin or SP.bin)", c->dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/def.json", c->dir);
    return load_def(s, c, path, err);
}

/* ---- tensors <-> HBM ---- */

const sim_tensor_t *sim_find_tensor(const sim_t *s, const char *name)
{
    for (unsigned i = 0; i < s->ntensors; i++)
        if (!strcmp(s->tensors[i].name, name))
            return &s->tensors[i];
    return NULL;
}

static void shape_text(int nd, const int64_t *sh, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "(");
    for (int d = 0; d < nd && off < len; d++)
        off += (size_t)snprintf(buf + off, len - off, "%s%lld", d ? ", " : "", (long long)sh[d]);
    if (off < len)
        snprintf(buf + off, len - off, nd == 1 ? ",)" : ")");
}

/* The unsigned integer dtype that holds an MX-only dtype's bits (uint32
 * for fp8 quads, uint16 for fp4 quads, uint8 for E8M0 scales): how they
 * enter and leave the simulator (NumPy has no such types); -1 for any
 * other dtype. */
static int mx_bits_dtype(unsigned dt)
{
    if (!isa_dtype_mx_only(dt))
        return -1;
    unsigned n = isa_dtype_size(dt);
    return n == 4 ? ISA_DT_UINT32 : n == 2 ? ISA_DT_UINT16 : ISA_DT_UINT8;
}

static int store_array(sim_t *s, sim_tensor_t *t, const npy_array_t *a, const char *what,
                       tpb_err_t *err)
{
    bool same_shape = a->ndim == t->ndim;
    for (int d = 0; same_shape && d < t->ndim; d++)
        same_shape = a->shape[d] == t->shape[d];
    if (!same_shape) {
        char want[128], got[128];
        shape_text(t->ndim, t->shape, want, sizeof want);
        shape_text(a->ndim, a->shape, got, sizeof got);
        return tpb_errf(err, "%s '%s': shape %s does not match the tensor map's %s", what, t->name,
                        got, want);
    }
    uint8_t *dst = s->hbm + t->addr;
    if (a->dtype == t->dtype || (int)a->dtype == mx_bits_dtype(t->dtype)) {
        memcpy(dst, a->data, t->bytes);   /* an MX quad or scale: its bits as they are */
    } else if (a->dtype == ISA_DT_FP32 && isa_dtype_kind(t->dtype) == ISA_DK_F) {
        num_store_f32_array(dst, t->dtype, a->data, a->count);
    } else {
        return tpb_errf(err,
                        "%s '%s': element type %s does not match the tensor's %s (allowed: %s, "
                        "or float32/float64 for a float tensor; see docs/artifacts.md)",
                        what, t->name, isa_dtype_numpy_name(a->dtype),
                        isa_dtype_numpy_name(t->dtype), isa_dtype_numpy_name(t->dtype));
    }
    if (s->hbm_init)
        memset(s->hbm_init + t->addr, 1, t->bytes);
    t->sentinel_pending = false;
    return 0;
}

int sim_set_input(sim_t *s, const char *name, const npy_array_t *a, tpb_err_t *err)
{
    sim_tensor_t *t = (sim_tensor_t *)sim_find_tensor(s, name);
    if (!t)
        return tpb_errf(err, "input '%s': no tensor of that name in tensor-map.json", name);
    if (strcmp(t->kind, "input"))
        return tpb_errf(err, "input '%s': the tensor map lists it as %s, not input", name, t->kind);
    if (store_array(s, t, a, "input", err) != 0)
        return -1;
    t->bound = true;
    return 0;
}

/* An input not yet bound whose range no other tensor shares is read
 * straight from the file into HBM when the file holds exactly its dtype and
 * shape (no intermediate buffer or copy), or float32 of its shape for a
 * bf16/fp16/fp8 tensor (converted a chunk at a time); any other file goes through
 * npy_read and sim_set_input with their checks and messages. */
int sim_load_input_file(sim_t *s, const char *name, const char *path, tpb_err_t *err)
{
    npy_array_t a;
    sim_tensor_t *t = (sim_tensor_t *)sim_find_tensor(s, name);
    if (t && !strcmp(t->kind, "input") && t->sentinel_pending &&
        (npy_descr(t->dtype) || isa_dtype_kind(t->dtype) == ISA_DK_F)) {
        npy_array_t want = { .dtype = t->dtype, .ndim = t->ndim };
        memcpy(want.shape, t->shape, sizeof want.shape);
        if (npy_read_into(path, &want, s->hbm + t->addr, &a, err) != 0)
            return -1;
        if (!a.data) {
            if (s->hbm_init)
                memset(s->hbm_init + t->addr, 1, t->bytes);
            t->sentinel_pending = false;
            t->bound = true;
            return 0;
        }
    } else if (npy_read(path, &a, err) != 0) {
        return -1;
    }
    int rc = sim_set_input(s, name, &a, err);
    if (rc)
        tpb_err_prefix(err, "%s", path);
    npy_free(&a);
    return rc;
}

int sim_load_inputs_dir(sim_t *s, const char *dir, tpb_err_t *err)
{
    for (unsigned i = 0; i < s->ntensors; i++) {
        if (strcmp(s->tensors[i].kind, "input"))
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s.npy", dir, s->tensors[i].name);
        if (!fio_exists(path))
            return tpb_errf(err, "input '%s': %s not found", s->tensors[i].name, path);
        if (sim_load_input_file(s, s->tensors[i].name, path, err) != 0)
            return -1;
    }
    return 0;
}

/* Whether [addr, addr + n) meets an output's HBM range. */
static bool meets_output(const sim_t *s, uint64_t addr, uint64_t n)
{
    for (unsigned i = 0; i < s->ntensors; i++) {
        const sim_tensor_t *o = &s->tensors[i];
        if (!strcmp(o->kind, "output") && o->addr < addr + n && addr < o->addr + o->bytes)
            return true;
    }
    return false;
}

/* Every input not bound yet counts as bound (and, with --check-uninit, as
 * written); zero: its bytes are zeros (else they stay as they are: the
 * 0xFF sentinel unless timing-only runs never read them). */
static void bind_unbound_inputs(sim_t *s, bool zero)
{
    for (unsigned i = 0; i < s->ntensors; i++) {
        sim_tensor_t *t = &s->tensors[i];
        if (strcmp(t->kind, "input") || t->bound)
            continue;
        t->bound = true;
        if (t->addr >= s->hbm_bytes)
            continue;
        uint64_t n = t->bytes < s->hbm_bytes - t->addr ? t->bytes : s->hbm_bytes - t->addr;
        if (zero) {
            /* a range never written still holds the zeroed mapping's
             * pages, which a 2 GiB input need not touch: one still pending
             * (fill_hbm), or with --timing-only one no output shares
             * (sim_load fills only the outputs); else the 0xFF sentinel
             * is overwritten */
            bool fresh = t->sentinel_pending || (s->opt.timing_only && !meets_output(s, t->addr, n));
            if (!fresh)
                memset(s->hbm + t->addr, 0, n);
            t->sentinel_pending = false;
        }
        if (s->hbm_init)
            memset(s->hbm_init + t->addr, 1, n);
    }
}

/* --timing-only: inputs are never read, so an input not supplied counts
 * as bound (and, with --check-uninit, as written: DMAs still check). */
void sim_inputs_timing_only(sim_t *s) { bind_unbound_inputs(s, false); }

void sim_bind_zero_inputs(sim_t *s) { bind_unbound_inputs(s, true); }

int sim_missing_inputs(const sim_t *s, char *buf, size_t len)
{
    int n = 0;
    size_t off = 0;
    if (len)
        buf[0] = 0;
    for (unsigned i = 0; i < s->ntensors; i++)
        if (!strcmp(s->tensors[i].kind, "input") && !s->tensors[i].bound) {
            if (off < len)
                off += (size_t)snprintf(buf + off, len - off, "%s%s", n ? ", " : "",
                                        s->tensors[i].name);
            n++;
        }
    return n;
}

static int load_constants(sim_t *s, const char *dir, tpb_err_t *err)
{
    for (unsigned i = 0; i < s->ntensors; i++) {
        sim_tensor_t *t = &s->tensors[i];
        if (strcmp(t->kind, "constant"))
            continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, t->file);
        npy_array_t a;
        if (npy_read(path, &a, err) != 0)
            return -1;
        int rc = store_array(s, t, &a, "constant", err);
        npy_free(&a);
        if (rc)
            return tpb_err_prefix(err, "%s", path);
    }
    return 0;
}

int sim_get_tensor(const sim_t *s, const char *name, npy_array_t *out, tpb_err_t *err)
{
    return sim_get_tensor_as(s, name, false, out, err);
}

int sim_get_tensor_as(const sim_t *s, const char *name, bool bits, npy_array_t *out,
                      tpb_err_t *err)
{
    const sim_tensor_t *t = sim_find_tensor(s, name);
    if (!t)
        return tpb_errf(err, "no tensor '%s' in tensor-map.json", name);
    int mxb = mx_bits_dtype(t->dtype);
    unsigned dt = npy_descr(t->dtype) ? t->dtype
                  : mxb >= 0                    ? (unsigned)mxb
                  : !bits                       ? ISA_DT_FP32
                  : isa_dtype_size(t->dtype) == 2 ? ISA_DT_UINT16 : ISA_DT_UINT8;
    if (npy_alloc(out, dt, t->ndim, t->shape, err) != 0)
        return -1;
    const uint8_t *src = s->hbm + t->addr;
    if (dt == t->dtype || bits || mxb >= 0) {
        memcpy(out->data, src, t->bytes);
    } else {
        num_load_f32_array(out->data, src, t->dtype, out->count);
    }
    return 0;
}

/* Tensor t as a .npy file image: a dtype NumPy has is written straight
 * from HBM after its header (*data points into HBM: no copy); bf16/fp8 go
 * through sim_get_tensor (float32) into one buffer (*data NULL). */
static int serialize_output(const sim_t *s, const sim_tensor_t *t, uint8_t **buf, size_t *len,
                            const uint8_t **data, tpb_err_t *err)
{
    npy_array_t a;
    *data = NULL;
    if (npy_descr(t->dtype)) {
        memset(&a, 0, sizeof a);
        a.dtype = t->dtype;
        a.ndim = t->ndim;
        memcpy(a.shape, t->shape, sizeof a.shape);
        if (!(*buf = malloc(NPY_HEADER_MAX)))
            return tpb_errf(err, "out of memory");
        *data = s->hbm + t->addr;
        return npy_header(&a, *buf, len, err);
    }
    if (sim_get_tensor(s, t->name, &a, err) != 0)
        return -1;
    int rc = npy_serialize(&a, buf, len, err);
    npy_free(&a);
    return rc;
}

static int write_output(const char *path, const uint8_t *head, size_t hlen, const uint8_t *data,
                        size_t dlen, bool sync, tpb_err_t *err)
{
    fio_atomic_t f;
    if (fio_atomic_open(&f, path, err))
        return -1;
    f.nosync = !sync;
    if (fwrite(head, 1, hlen, f.f) != hlen || (dlen && fwrite(data, 1, dlen, f.f) != dlen)) {
        fio_atomic_abort(&f);
        return tpb_errf(err, "%s: write failed: %s", path, strerror(errno));
    }
    return fio_atomic_commit(&f, err);
}

int sim_stage_outputs(const sim_t *s, const char *outdir, tpb_txn_t *txn, tpb_err_t *err)
{
    /* serialise everything first: nothing is staged for an output that
     * cannot be built */
    unsigned n = 0;
    for (unsigned i = 0; i < s->ntensors; i++)
        n += !strcmp(s->tensors[i].kind, "output");
    uint8_t **bufs = calloc(n ? n : 1, sizeof *bufs);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    const sim_tensor_t **outs = calloc(n ? n : 1, sizeof *outs);
    const uint8_t **datas = calloc(n ? n : 1, sizeof *datas);
    int rc = 0;
    unsigned k = 0;
    if (!bufs || !lens || !outs || !datas)
        rc = tpb_errf(err, "out of memory");
    for (unsigned i = 0; i < s->ntensors && !rc; i++) {
        if (strcmp(s->tensors[i].kind, "output"))
            continue;
        outs[k] = &s->tensors[i];
        rc = serialize_output(s, &s->tensors[i], &bufs[k], &lens[k], &datas[k], err);
        k++;
    }
    if (!rc && fio_exists(outdir) && !fio_is_dir(outdir))
        rc = tpb_errf(err, "%s: exists and is not a directory (-o names the output directory)",
                      outdir);
    if (!rc)
        rc = fio_mkdirs(outdir, err);
    for (unsigned i = 0; i < k && !rc; i++) {
        char path[4400];
        const char *stage;
        snprintf(path, sizeof path, "%s/%s.npy", outdir, outs[i]->name);
        rc = tpb_txn_stage(txn, path, &stage, err) ||
             write_output(stage, bufs[i], lens[i], datas[i], datas[i] ? outs[i]->bytes : 0,
                          s->opt.fsync, err);
    }
    for (unsigned i = 0; i < k; i++)
        free(bufs[i]);
    free(bufs);
    free(lens);
    free(outs);
    free(datas);
    if (rc)
        tpb_txn_fix_msg(txn, err);
    return rc ? -1 : 0;
}

int sim_write_outputs(const sim_t *s, const char *outdir, tpb_err_t *err)
{
    tpb_txn_t txn;
    tpb_txn_init(&txn);
    txn.durable = s->opt.fsync;
    if (sim_stage_outputs(s, outdir, &txn, err)) {
        tpb_txn_abort(&txn);
        return -1;
    }
    return tpb_txn_commit(&txn, err);
}

/* ---- entry ---- */

/* A number, or an array of numbers (a placement entry's value). */
static bool number_or_numbers(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return true;
    if (!cJSON_IsArray(v))
        return false;
    const cJSON *x;
    cJSON_ArrayForEach(x, v)
        if (!cJSON_IsNumber(x))
            return false;
    return true;
}

/* placement.json (launch grids, written by the compiler): kept as is and
 * reported in stats.json / the trace; it does not change execution.  Its
 * shape is checked (grid: numbers; instances: objects of numbers and
 * arrays of numbers) so what is copied into stats.json and the trace is
 * the compiler's table, never an arbitrary tree (one nested near the JSON
 * depth limit made a trace no JSON reader accepts). */
static int load_placement(sim_t *s, const char *dir, tpb_err_t *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/placement.json", dir);
    if (!fio_exists(path))
        return 0;
    if (read_json(path, &s->placement, err) != 0)
        return -1;
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(s->placement, "grid");
    const cJSON *inst = cJSON_GetObjectItemCaseSensitive(s->placement, "instances");
    if (!cJSON_IsArray(inst))
        return tpb_errf(err, "%s: field 'instances': expected an array", path);
    if (grid && (!cJSON_IsArray(grid) || !number_or_numbers(grid)))
        return tpb_errf(err, "%s: field 'grid': expected an array of numbers", path);
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, inst)
    {
        if (!cJSON_IsObject(o))
            return tpb_errf(err, "%s: field 'instances[%d]': expected an object", path, i);
        const cJSON *v;
        cJSON_ArrayForEach(v, o)
            if (!number_or_numbers(v))
                return tpb_errf(err, "%s: field 'instances[%d].%s': expected a number or an array "
                                "of numbers", path, i, v->string);
        i++;
    }
    return 0;
}

int sim_load_artifacts(sim_t *s, const char *dir, tpb_err_t *err)
{
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    if (!fio_is_dir(dir))
        return tpb_errf(err, "%s: not a directory", dir);
    if (load_tensor_map(s, dir, err) != 0)
        return -1;
    /* a 2 MiB-aligned mapping in huge pages: filling or reading 100+ MB
     * of tensors faults once per 2 MiB (a malloc'ed block's unaligned head
     * and tail took up to 1 024 4 KiB faults); zeroed, and with
     * --timing-only only the outputs are ever touched */
    s->hbm_alloc = s->hbm_bytes ? s->hbm_bytes : 1;
    s->hbm = tpb_array_zalloc(s->hbm_alloc);
    if (!s->hbm)
        return tpb_errf(err, "out of memory (HBM of %llu bytes)", (unsigned long long)s->hbm_bytes);
    if (s->opt.timing_only) /* only the outputs are ever read (written out as they are) */
        for (size_t i = 0; i < s->ntensors; i++) {
            const sim_tensor_t *t = &s->tensors[i];
            if (!strcmp(t->kind, "output") && t->addr < s->hbm_bytes)
                memset(s->hbm + t->addr, 0xFF,
                       t->bytes < s->hbm_bytes - t->addr ? t->bytes : s->hbm_bytes - t->addr);
        }
    else
        fill_hbm(s);
    if (s->opt.check_uninit && !(s->hbm_init = tpb_array_zalloc(s->hbm_alloc)))
        return tpb_errf(err, "out of memory (HBM init map)");
    s->cores = calloc(s->ncores, sizeof *s->cores);
    if (!s->cores)
        return tpb_errf(err, "out of memory");
    load_ctx_t lc = { .plans = isa_plans_new() };
    int rc = 0;
    for (unsigned ci = 0; ci < s->ncores && !rc; ci++)
        rc = load_core(s, ci, dir, &lc, err);
    fio_buf_free(&lc.rb);
    isa_plans_free(lc.plans);
    if (rc)
        return -1;
    if (load_placement(s, dir, err) != 0)
        return -1;
    return load_constants(s, dir, err);
}

int sim_load(const char *dir, const sim_options_t *opt, sim_t **out, tpb_err_t *err)
{
    *out = NULL;
    sim_t *s = calloc(1, sizeof *s);
    if (!s)
        return tpb_errf(err, "out of memory");
    if (opt)
        s->opt = *opt;
    else
        sim_options_default(&s->opt);
    sim_opimpl_table(s->impl, s->impl_pe, ISA_OP_COUNT);
    if (sim_load_artifacts(s, dir, err) != 0) {
        if (!s->t)
            s->t = tpb_target_default();
        sim_free(s);
        return -1;
    }
    *out = s;
    return 0;
}
