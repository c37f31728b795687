/* sidecar_write.c - the <Engine>.json sidecars (docs/artifacts.md): the
 * engine's header (queues, opcodes, DVE table, collectives) and one debug
 * entry per instruction, streamed through jsonw.h; the compact form's
 * entries leave out what the entry before implies (sidecar_form.h). */
#include "backend.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "jsonw.h"
#include "sidecar_form.h"

static const char *buf_string(const buf_table_t *bt, int op)
{
    return bt->off ? bt->pool.buf + bt->off[op] : "";
}

int art_jcache_init(art_jcache_t *c)
{
    memset(c, 0, sizeof *c);
    return jb_init_mem(&c->text, 4096);
}

void art_jcache_free(art_jcache_t *c)
{
    if (c->text.buf)
        jb_free(&c->text);
}

/* c's text for member (key, s): "key":<s's JSON> (jb_cjson_member); NULL
 * when it is not cached (yet): its first sighting only marks the slot (a
 * string named once, such as a straight-line kernel's paths, is not worth
 * the copy), the second fills it.  NULL also when out of memory. */
static const char *jcache_get(art_jcache_t *c, const char *key, size_t n, const char *s,
                              uint32_t *len)
{
    uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
    unsigned set = (unsigned)(h >> 56) & (ART_JCACHE_SLOTS / 2 - 1), i = 2 * set;
    bool same = c->s[i] == s && c->key[i] == key && c->klen[i] == n;
    if (!same) {
        i++;
        same = c->s[i] == s && c->key[i] == key && c->klen[i] == n;
    }
    if (!same)
        i = 2 * set + c->victim[set];
    c->victim[set] = (uint8_t)(~i & 1);   /* the other way goes next */
    if (same && c->len[i] != UINT32_MAX) {
        c->hits++;
        *len = c->len[i];
        return c->text.buf + c->off[i];
    }
    c->misses++;
    if (!same) {   /* seen once */
        c->s[i] = s;
        c->key[i] = key;
        c->klen[i] = n;
        c->len[i] = UINT32_MAX;
        return NULL;
    }
    if (c->text.len > ART_JCACHE_TEXT) {   /* start over: bounded memory */
        memset(c->s, 0, sizeof c->s);
        c->text.len = 0;
    }
    size_t from = c->text.len;
    jb_cjson_member(&c->text, key, n, s);
    if (c->text.failed || c->text.len - from >= UINT32_MAX) {
        c->s[i] = NULL;
        return NULL;
    }
    c->s[i] = s;
    c->off[i] = (uint32_t)from;
    c->len[i] = (uint32_t)(c->text.len - from);
    *len = c->len[i];
    return c->text.buf + from;
}

void art_member_cached(jw_t *w, art_jcache_t *c, const char *key, size_t n, const char *s)
{
    uint32_t len;
    const char *text = c ? jcache_get(c, key, n, s, &len) : NULL;
    if (!text)
        jw_member_str(w, key, n, s);
    else if (!jw_member_text(w, text, len))   /* not compact: the value after "key": */
        jw_member_raw(w, key, n, text + n + 3, len - n - 3);
}
#define kvl_cached(w, c, lit, s) art_member_cached((w), (c), "" lit "", sizeof(lit) - 1, (s))

/* What the previous debug entry of a compact sidecar implies
 * (sidecar_form.h). */
typedef struct {
    long long pc;
    const char *src, *op, *name;
    int op_index;                /* -1: none */
    const char *buf;             /* in the buf table, or "" */
    jw_num_memo_t op_index_memo; /* the last op_index written */
} sidecar_prev_t;

/* One debug entry; prev != NULL: the compact form, which leaves out what
 * the entry before implies (sidecar_form.h). */
static void debug_entry(jw_t *w, art_jcache_t *jc, const art_ops_t *ops, const bir_inst_t *in,
                        long long pc, sidecar_prev_t *prev)
{
    /* name: the tile-IR op (what a trace shows); inst: the unique
     * instruction name (also used by --dump-bin-per-inst) */
    const buf_table_t *bt = &ops->bt;
    bool has_op = in->tir_op >= 0 && in->tir_op < ops->nops;
    const char *name = has_op ? ops->name[in->tir_op] : in->name;
    const char *op = in->op_kind ? in->op_kind : "sync";
    const char *src = in->src ? in->src : "";
    const char *bufs = has_op ? buf_string(bt, in->tir_op) : "";
    /* compact: the same op as the entry before (name, op_index, buf) */
    bool cont = prev && prev->name && prev->op_index == (has_op ? in->tir_op : -1) &&
                (prev->name == name || !strcmp(prev->name, name)) &&
                (prev->buf == bufs || !strcmp(prev->buf, bufs));
    jw_obj_begin(w);
    if (!prev || pc != prev->pc + 1)
        jw_kvl_int(w, "pc", pc);
    if (!cont)
        jw_kvl(w, "name", name);
    if (!prev || strcmp(in->name, name))
        jw_kvl(w, "inst", in->name);
    /* src and op are mostly the same pointer (interned paths, op names) */
    if (!prev || !prev->src || (prev->src != src && strcmp(prev->src, src)))
        kvl_cached(w, jc, "src", src);
    if (!prev || !prev->op || (prev->op != op && strcmp(prev->op, op)))
        kvl_cached(w, jc, "op", op);
    if (in->is_activate2 || in->is_stt)   /* the BIR form behind the ISA opcode */
        jw_kvl(w, "bir",
               in->is_activate2 ? "Activation is_activate2=1" : "TensorScalarPtr is_stt=1");
    if (has_op && !cont) {
        if (prev)   /* compact: mostly the last one plus a few */
            jw_kvl_int_memo(w, "op_index", in->tir_op, &prev->op_index_memo);
        else
            jw_kvl_int(w, "op_index", in->tir_op);
        const tir_asm_t *inl = ops->inl ? ops->inl[in->tir_op] : NULL;
        if (inl) {   /* INLINE_ASM_BYTES, an opaque bundle: what the kernel said about it */
            jw_kvl(w, "sync_type", inl->sync_type ? "barrier" : "none");
            jw_keyl(w, "latency_estimate");
            jw_int(w, inl->latency_estimate);
        }
        if (bufs[0])
            kvl_cached(w, jc, "buf", bufs);
    }
    jw_obj_end(w);
    if (prev) {
        prev->pc = pc;
        prev->src = src;
        prev->op = op;
        prev->name = name;
        prev->op_index = has_op ? in->tir_op : -1;
        prev->buf = bufs;
    }
}

/* Start the optional list `key` at its first entry. */
static void list_open(jw_t *w, const char *key, bool *open)
{
    if (*open)
        return;
    jw_key(w, key);
    jw_arr_begin(w);
    *open = true;
}

/* setReplicaGroups made visible: "replica_groups" lists each collective
 * DMA instruction of the engine (descriptors and trigger) with its groups
 * as rank lists (docs/multicore.md "Collectives"); absent when none. */
static void write_replica_groups(jw_t *w, const gen_t *g, const bir_block_t *b, int e)
{
    bool open = false;
    for (int i = 0; i < g->ndbg[e]; i++) {
        const bir_inst_t *in = &b->insts[g->dbg[e][i].inst];
        const bir_rare_t *rare = bir_rare(in);
        if (!rare->nreplica)
            continue;
        list_open(w, "replica_groups", &open);
        jw_obj_begin(w);
        jw_key(w, "inst");
        jw_str(w, in->name);
        jw_key(w, "groups");
        jw_arr_begin(w);
        for (int grp = 0; grp < 8; grp++) {
            bool any = false;
            for (int r = 0; r < rare->nreplica && r < 8; r++)
                if (rare->replica[r] == grp) {
                    if (!any)
                        jw_arr_begin(w);
                    any = true;
                    jw_int(w, r);
                }
            if (any)
                jw_arr_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    }
    if (open)
        jw_arr_end(w);
}

/* codegenLocalReduceOp made visible: "reduces" lists each Reduce (38)
 * instruction of the engine with its op, kind and local flag
 * (docs/multicore.md "Collectives"); absent when none. */
static void write_reduces(jw_t *w, const gen_t *g, const bir_block_t *b, int e)
{
    bool open = false;
    for (int i = 0; i < g->ndbg[e]; i++) {
        const bir_inst_t *in = &b->insts[g->dbg[e][i].inst];
        if (in->opc != BIR_REDUCE)
            continue;
        list_open(w, "reduces", &open);
        jw_obj_begin(w);
        jw_key(w, "inst");
        jw_str(w, in->name);
        jw_key(w, "opcode");
        jw_str(w, bir_opcode_name(in->opc));
        jw_key(w, "op");
        jw_str(w, isa_enum_name(ISA_FT_ALU, bir_rare(in)->red_op));
        jw_key(w, "kind");
        jw_str(w, bir_rkind_name(bir_rare(in)->red_kind));
        jw_key(w, "local");
        jw_int(w, bir_rare(in)->red_local);
        jw_obj_end(w);
    }
    if (open)
        jw_arr_end(w);
}

/* One <Engine>.json sidecar, streamed (jsonw.h: the same bytes cJSON_Print
 * gives for the same document, without a node per field; compact (a stream
 * of at least tpb_sidecar_compact_min() entries): the compact form,
 * cJSON_PrintUnformatted's bytes with the implied members left out). */
static int write_sidecar(const gen_t *g, const bir_module_t *m, const art_ops_t *ops, int e,
                         const char *dir, bool compact, tpb_err_t *err)
{
    const bir_block_t *b = &m->funcs[0].blocks[0];
    char name[64], path[4096];
    snprintf(name, sizeof name, "%s.json", isa_engine_name((isa_engine_t)e));
    fio_atomic_t out;
    if (fio_join(path, sizeof path, dir, name, err) || fio_staged_open(&out, path, err))
        return -1;
    jw_t w;
    /* a buffer for about the text of g->ndbg[e] entries (under 256 bytes
     * each): a small sidecar's is malloc'ed, not a 2 MiB page */
    jw_init_file_cap(&w, out.f, (size_t)4096 + (size_t)g->ndbg[e] * 256);
    if (compact)
        jw_set_compact(&w);
    jw_obj_begin(&w);
    jw_key(&w, "engine");
    jw_str(&w, isa_engine_name((isa_engine_t)e));
    jw_key(&w, "core");
    jw_int(&w, m->core);
    jw_key(&w, "instructions");
    jw_int(&w, g->pcs[e]);
    jw_key(&w, "queues");
    jw_arr_begin(&w);
    for (int q = 0; q < m->nqueues; q++)
        if (m->queues[q].engine == e)
            jw_int(&w, m->queues[q].id);
    jw_arr_end(&w);
    /* the per-engine opcode manifest (COLLECT pass) */
    jw_key(&w, "opcodes");
    jw_arr_begin(&w);
    for (unsigned v = 0; v < 256; v++)
        if (g->engine_opcodes[e][v >> 5] >> (v & 31) & 1u) {
            const isa_opinfo_t *oi = isa_op_by_l2((uint8_t)v);
            jw_str(&w, oi ? oi->mnemonic : "?");
        }
    jw_arr_end(&w);
    if (e == ISA_ENG_DVE) {
        /* LowerDVE: the DVE table, sized to the opcodes the program uses on
         * DVE (sync instructions skipped); the simulator enforces it */
        jw_key(&w, "dve_table");
        jw_arr_begin(&w);
        for (unsigned v = 0; v < 256; v++)
            if (g->table_opcodes[e][v >> 5] >> (v & 31) & 1u)
                jw_int(&w, (long long)v);
        jw_arr_end(&w);
    }
    write_replica_groups(&w, g, b, e);
    write_reduces(&w, g, b, e);
    if (compact) {
        jw_key(&w, "debug_form");
        jw_str(&w, "compact");
    }
    jw_key(&w, "debug");
    jw_arr_begin(&w);
    sidecar_prev_t prev = { .pc = -1, .op_index = -1, .buf = "" };
    art_jcache_t jc;   /* out of memory: every value escaped in place */
    bool have_jc = art_jcache_init(&jc) == 0;
    for (int i = 0; i < g->ndbg[e] && !w.b.failed; i++)
        debug_entry(&w, have_jc ? &jc : NULL, ops, &b->insts[g->dbg[e][i].inst],
                    g->dbg[e][i].pc, compact ? &prev : NULL);
    art_jcache_free(&jc);
    jw_arr_end(&w);
    jw_obj_end(&w);
    int rc = 0;
    if (jw_finish(&w)) {
        rc = w.b.io_error ? tpb_errf(err, "%s: write failed", path)
                        : tpb_errf(err, "%s: out of memory serialising JSON", path);
        fio_atomic_abort(&out);
    } else {
        rc = fio_atomic_commit(&out, err);
    }
    jw_free(&w);
    return rc;
}

int art_write_sidecars_ops(const gen_t *g, const bir_module_t *m, const art_ops_t *ops,
                           const char *dir, tpb_err_t *err)
{
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        if (g->opened[e] &&
            write_sidecar(g, m, ops, e, dir, g->ndbg[e] >= tpb_sidecar_compact_min(), err))
            return -1;
    return 0;
}

int art_write_sidecars(const gen_t *g, const bir_module_t *m, const tir_kernel_t *k,
                       const char *dir, tpb_err_t *err)
{
    art_ops_t ops;
    int rc = art_ops_build(&ops, m, k)
                 ? tpb_errf(err, "%s: out of memory building the sidecars' buf table", dir)
                 : art_write_sidecars_ops(g, m, &ops, dir, err);
    art_ops_free(&ops);
    return rc;
}
