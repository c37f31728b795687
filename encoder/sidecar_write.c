/* sidecar_write.c - the <Engine>.json sidecars (docs/artifacts.md): the
 * engine's header (queues, opcodes, DVE table, collectives) and one debug
 * entry per instruction, streamed through jsonw.h; the compact form's
 * entries leave out what the entry before implies (sidecar_form.h). */
#include "backend.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "hugepage.h"
#include "jsonw.h"
#include "prefetch.h"
#include "sidecar_form.h"
#include "smallfmt.h"

static const char *buf_string(const buf_table_t *bt, int op)
{
    return bt->off ? bt->pool.buf + bt->off[op] : "";
}

int art_jcache_init(art_jcache_t *c)
{
    /* what is read before it is written: the slots' strings (NULL: empty;
     * a slot's other members are read only after its string matched), the
     * victims and the counters -- not the whole 8 KiB (a small kernel's
     * sidecar writes a few dozen entries) */
    memset(c->s, 0, sizeof c->s);
    memset(c->victim, 0, sizeof c->victim);
    c->hits = c->misses = 0;
    return jb_init_mem(&c->text, 4096);
}

void art_jcache_free(art_jcache_t *c)
{
    if (c->text.buf)
        jb_free(&c->text);
}

/* The slot holding c's text for member (key, s): "key":<s's JSON>
 * (jb_cjson_member); -1 when it is not cached (yet): its first sighting
 * only marks a slot (a string named once, such as a straight-line
 * kernel's paths, is not worth the copy), the second fills it.  -1 also
 * when out of memory. */
static inline __attribute__((always_inline)) int jcache_slot(art_jcache_t *c, const char *key,
                                                            size_t n, const char *s)
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
        return (int)i;
    }
    c->misses++;
    if (!same) {   /* seen once */
        c->s[i] = s;
        c->key[i] = key;
        c->klen[i] = n;
        c->len[i] = UINT32_MAX;
        return -1;
    }
    if (c->text.len > ART_JCACHE_TEXT) {   /* start over: bounded memory */
        memset(c->s, 0, sizeof c->s);
        c->text.len = 0;
    }
    size_t from = c->text.len;
    jb_cjson_member(&c->text, key, n, s);
    if (c->text.failed || c->text.len - from >= UINT32_MAX) {
        c->s[i] = NULL;
        return -1;
    }
    c->s[i] = s;
    c->off[i] = (uint32_t)from;
    c->len[i] = (uint32_t)(c->text.len - from);
    return (int)i;
}

/* jcache_slot's text and its length; NULL when not cached. */
static const char *jcache_get(art_jcache_t *c, const char *key, size_t n, const char *s,
                              uint32_t *len)
{
    int i = jcache_slot(c, key, n, s);
    if (i < 0)
        return NULL;
    *len = c->len[i];
    return c->text.buf + c->off[i];
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

/* What one debug entry holds: the members it writes (NULL / false: left
 * out), decided once for both writers. */
typedef struct {
    bool pc, op_index;
    long long pcv;
    int op_index_v;
    const char *name, *inst, *src, *op, *bir, *buf;
    size_t nname, ninst;   /* strlen of the op's and the instruction's names */
    const tir_asm_t *inl;
} entry_t;

/* The members of in's entry; prev != NULL: the compact form, which leaves
 * out what the entry before implies (sidecar_form.h), prev updated. */
static void entry_plan(entry_t *en, const art_ops_t *ops, const bir_inst_t *in, long long pc,
                       sidecar_prev_t *prev)
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
    en->pc = !prev || pc != prev->pc + 1;
    en->pcv = pc;
    en->name = !cont ? name : NULL;
    /* the lengths only of the names written: in->name sits beside its
     * instruction's body in the BIR arena, mostly a cache miss here, and a
     * strlen of every one cost ~15 % of compile-mix3 (performance-log.md
     * "Cache misses the instruction counts do not show") */
    en->nname = en->name ? strlen(name) : 0;
    en->inst = !prev || (in->name != name && strcmp(in->name, name)) ? in->name : NULL;
    en->ninst = en->inst ? strlen(in->name) : 0;
    /* src and op are mostly the same pointer (interned paths, op names) */
    en->src = !prev || !prev->src || (prev->src != src && strcmp(prev->src, src)) ? src : NULL;
    en->op = !prev || !prev->op || (prev->op != op && strcmp(prev->op, op)) ? op : NULL;
    en->bir = !in->is_activate2 && !in->is_stt ? NULL   /* the BIR form behind the ISA opcode */
              : in->is_activate2 ? "Activation is_activate2=1" : "TensorScalarPtr is_stt=1";
    en->op_index = has_op && !cont;
    en->op_index_v = in->tir_op;
    en->inl = en->op_index && ops->inl ? ops->inl[in->tir_op] : NULL;
    en->buf = en->op_index && bufs[0] ? bufs : NULL;
    if (prev) {
        prev->pc = pc;
        prev->src = src;
        prev->op = op;
        prev->name = name;
        prev->op_index = has_op ? in->tir_op : -1;
        prev->buf = bufs;
    }
}

/* The general writer of an entry (the one of record); memo: compact. */
static void entry_write(jw_t *w, art_jcache_t *jc, const entry_t *en, jw_num_memo_t *memo)
{
    jw_obj_begin(w);
    if (en->pc)
        jw_kvl_int(w, "pc", en->pcv);
    if (en->name)
        jw_kvl(w, "name", en->name);
    if (en->inst)
        jw_kvl(w, "inst", en->inst);
    if (en->src)
        kvl_cached(w, jc, "src", en->src);
    if (en->op)
        kvl_cached(w, jc, "op", en->op);
    if (en->bir)
        jw_kvl(w, "bir", en->bir);
    if (en->op_index) {
        if (memo)   /* compact: mostly the last one plus a few */
            jw_kvl_int_memo(w, "op_index", en->op_index_v, memo);
        else
            jw_kvl_int(w, "op_index", en->op_index_v);
        if (en->inl) {   /* INLINE_ASM_BYTES, an opaque bundle: what the kernel said about it */
            jw_kvl(w, "sync_type", en->inl->sync_type ? "barrier" : "none");
            jw_keyl(w, "latency_estimate");
            jw_int(w, en->inl->latency_estimate);
        }
        if (en->buf)
            kvl_cached(w, jc, "buf", en->buf);
    }
    jw_obj_end(w);
}

/* A member the fast writer copies from the value cache. */
typedef struct {
    const char *key, *s;
    size_t n, ns;   /* ns: strlen(s), taken when the cache has no text for it */
    int slot;       /* jcache_slot's answer */
} cached_t;

/* Look member (key, s) up (as art_member_cached does) and return the room
 * its text needs: the cached length, or the worst case of escaping it. */
static inline __attribute__((always_inline)) size_t cached_plan(art_jcache_t *c, cached_t *m,
                                                               const char *key, size_t n,
                                                               const char *s)
{
    m->key = key, m->n = n, m->s = s;
    m->slot = jcache_slot(c, key, n, s);
    if (m->slot >= 0)
        return c->len[m->slot];
    m->ns = strlen(s);
    return n + 3 + 6 * m->ns + 2;
}

/* The layout the one-reservation writer writes: the compact form's (no
 * whitespace) or cJSON_Print's (pretty: a newline and ntab tabs before
 * each member, a tab after its colon).  Passed as a constant to the
 * always-inline writer below, so the compact one carries no test of it. */
typedef struct {
    bool pretty;
    unsigned ntab;   /* pretty: the entry's members' depth */
} entry_layout_t;

#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* ntab tabs at o (8 bytes of room to spare past them). */
ALWAYS_INLINE char *tabs_put(char *o, unsigned ntab)
{
    if (ntab <= 8) {
        memcpy(o, "\t\t\t\t\t\t\t\t", 8);
        return o + ntab;
    }
    memset(o, '\t', ntab);
    return o + ntab;
}

/* "key": at o (key[0..n) plain; pretty: a tab after the colon). */
ALWAYS_INLINE char *key_text(char *o, const char *key, size_t n, entry_layout_t l)
{
    *o++ = '"';
    tpb_copy_short(o, key, n);
    o += n;
    *o++ = '"';
    *o++ = ':';
    if (l.pretty)
        *o++ = '\t';
    return o;
}

/* m's text at o: copied from the cache while its slot still holds it (a
 * later member of the same entry can take the slot over), else written
 * afresh (the same bytes).  The cache holds the compact member text: in
 * the pretty layout only its value is copied, after the key. */
ALWAYS_INLINE char *cached_put_as(const art_jcache_t *c, const cached_t *m, char *o,
                                  entry_layout_t l)
{
    int i = m->slot;
    if (i >= 0 && c->s[i] == m->s && c->key[i] == m->key && c->klen[i] == m->n &&
        c->len[i] != UINT32_MAX) {
        const char *t = c->text.buf + c->off[i];
        size_t len = c->len[i];
        if (l.pretty) {
            o = key_text(o, m->key, m->n, l);
            t += m->n + 3, len -= m->n + 3;
        }
        if (len >= 8 && len <= 32) {   /* mostly ("src", "op", "buf"): no call */
            tpb_copy_short(o, t, len < 16 ? len : 16);
            if (len > 16)
                tpb_copy_short(o + len - 16, t + len - 16, 16);
        } else {
            memcpy(o, t, len);
        }
        return o + len;
    }
    o = key_text(o, m->key, m->n, l);
    return o + jw_quoted_into(o, m->s, i >= 0 ? strlen(m->s) : m->ns);
}

/* cached_put_as per layout, out of line (called up to three times an
 * entry). */
static char *cached_put_compact(const art_jcache_t *c, const cached_t *m, char *o)
{
    return cached_put_as(c, m, o, (entry_layout_t){false, 0});
}

static char *cached_put_pretty(const art_jcache_t *c, const cached_t *m, char *o)
{
    return cached_put_as(c, m, o, (entry_layout_t){true, 0});
}

/* m's text at o in layout l. */
ALWAYS_INLINE char *cached_put(const art_jcache_t *c, const cached_t *m, char *o,
                               entry_layout_t l)
{
    return l.pretty ? cached_put_pretty(c, m, o) : cached_put_compact(c, m, o);
}

/* The separator before a member: ',' unless it is the entry's first;
 * pretty: then a newline (after the ',') and the tabs. */
ALWAYS_INLINE char *sep_put(char *o, bool *first, entry_layout_t l)
{
    if (!*first) {
        *o++ = ',';
        if (l.pretty)
            *o++ = '\n';
    }
    *first = false;
    return l.pretty ? tabs_put(o, l.ntab) : o;
}

/* "key": at o (key plain), after sep_put. */
ALWAYS_INLINE char *key_put(char *o, const char *key, size_t n, bool *first, entry_layout_t l)
{
    return key_text(sep_put(o, first, l), key, n, l);
}

/* Whether the one-reservation writer may write into w where it is now: a
 * writer inside an array, with a cache, in the layout of the entries
 * (memo: compact entries, which only a compact writer takes; none: full
 * entries, which only a pretty one takes).  Asked once per stream: each
 * entry leaves w at the same depth, so the answer holds for all of them
 * (it was ~14 instructions per entry). */
static bool fast_applies(const jw_t *w, const art_jcache_t *jc, const jw_num_memo_t *memo)
{
    return jc && w->compact == (memo != NULL) && w->depth > 0 && w->depth < JW_MAX_DEPTH &&
           !w->is_obj[w->depth - 1];
}

/* entry_write's bytes in layout l (fast_applies), with one reservation:
 * false (nothing written, the cache untouched) when it does not apply to
 * this entry (an INLINE_ASM_BYTES record, a pc too wide). */
ALWAYS_INLINE bool entry_write_as(jw_t *w, art_jcache_t *jc, const entry_t *en,
                                  jw_num_memo_t *memo, entry_layout_t l)
{
    if (en->inl || en->pcv <= -1000000000000000LL || en->pcv >= 1000000000000000LL)
        return false;
    size_t nname = en->name ? en->nname : 0, ninst = en->inst ? en->ninst : 0;
    size_t nbir = en->bir ? strlen(en->bir) : 0;
    cached_t src, op, buf;
    /* what the writes below test, read before them (a char store could
     * alias en for the compiler, which would then load each again) */
    const bool has_src = en->src, has_op = en->op, has_buf = en->buf;
    /* the room: '{', '}' and per member ',' "key": value; pretty: per
     * member (8 at most) a newline, its tabs and a tab, the newline after
     * '{' and the one and the tabs before '}' */
    size_t room = 2 + (en->pc ? 6 + 21 : 0) + (en->name ? 8 + 6 * nname + 2 : 0) +
                  (en->inst ? 8 + 6 * ninst + 2 : 0) + (en->bir ? 7 + 6 * nbir + 2 : 0) +
                  (en->op_index ? 12 + sizeof memo->d : 0) +
                  (l.pretty ? 9 * (2 + (size_t)l.ntab) + 2 : 0);
    /* the cache is asked in entry_write's order */
    room += has_src ? 1 + cached_plan(jc, &src, "src", 3, en->src) : 0;
    room += has_op ? 1 + cached_plan(jc, &op, "op", 2, en->op) : 0;
    room += has_buf ? 1 + cached_plan(jc, &buf, "buf", 3, en->buf) : 0;
    char *o = l.pretty ? jw_raw_item_begin_any(w, room) : jw_raw_item_begin(w, room);
    if (!o) {   /* the room could not be had (the checks above passed) */
        w->b.failed = true;
        return true;
    }
    bool first = true;
    *o++ = '{';
    if (l.pretty)
        *o++ = '\n';
    if (en->pc)
        o = key_put(o, "pc", 2, &first, l), o += jw_int_into(o, en->pcv);
    if (en->name)
        o = key_put(o, "name", 4, &first, l), o += jw_quoted_into(o, en->name, nname);
    if (en->inst)
        o = key_put(o, "inst", 4, &first, l), o += jw_quoted_into(o, en->inst, ninst);
    if (has_src)
        o = cached_put(jc, &src, sep_put(o, &first, l), l);
    if (has_op)
        o = cached_put(jc, &op, sep_put(o, &first, l), l);
    if (en->bir)
        o = key_put(o, "bir", 3, &first, l), o += jw_quoted_into(o, en->bir, nbir);
    if (en->op_index) {
        o = key_put(o, "op_index", 8, &first, l);
        o += memo ? jw_num_memo_into(memo, en->op_index_v, o) : jw_int_into(o, en->op_index_v);
        if (has_buf)
            o = cached_put(jc, &buf, sep_put(o, &first, l), l);
    }
    if (l.pretty) {   /* jw_obj_end's */
        if (!first)
            *o++ = '\n';
        o = tabs_put(o, l.ntab - 1);
    }
    *o++ = '}';
    jw_raw_item_end(w, o);
    return true;
}

/* The compact entries' writer (memo: the op_index digits). */
static bool entry_write_fast(jw_t *w, art_jcache_t *jc, const entry_t *en, jw_num_memo_t *memo)
{
    return entry_write_as(w, jc, en, memo, (entry_layout_t){false, 0});
}

/* The full entries' writer in cJSON_Print's layout (a small kernel's
 * sidecars: each member through the general writers cost ~1 300
 * instructions an entry). */
static bool entry_write_pretty(jw_t *w, art_jcache_t *jc, const entry_t *en)
{
    return entry_write_as(w, jc, en, NULL, (entry_layout_t){true, (unsigned)w->depth + 1});
}

/* How far ahead art_debug_entries asks for what an entry reads: its
 * instruction's record, then (when the record has arrived) its op's name
 * and the instruction's own name (an entry's work is ~100 ns: far enough
 * for a miss to DRAM, not so far that the lines are gone again). */
#define ENTRY_AHEAD_INST 16
#define ENTRY_AHEAD_NAME 8

void art_debug_entries(jw_t *w, const art_ops_t *ops, const bir_inst_t *insts,
                       const gen_debug_t *dbg, int n, bool compact, bool fast)
{
    sidecar_prev_t prev = { .pc = -1, .op_index = -1, .buf = "" };
    art_jcache_t jc;   /* out of memory: every value escaped in place */
    art_jcache_t *c = art_jcache_init(&jc) == 0 ? &jc : NULL;
    jw_num_memo_t *memo = compact ? &prev.op_index_memo : NULL;
    bool quick = fast && fast_applies(w, c, memo);
    for (int i = 0; i < n && !w->b.failed; i++) {
        entry_t en;
        /* the prefetches stay in the loop: GCC takes a function made of
         * prefetches alone for one without effects and drops its calls */
        if (i + ENTRY_AHEAD_INST < n) {
            const bir_inst_t *ahead = &insts[dbg[i + ENTRY_AHEAD_INST].inst];
            TPB_PREFETCH(&ahead->tir_op);   /* 152-byte records: three lines */
            TPB_PREFETCH(&ahead->name);
            TPB_PREFETCH(&ahead->op_kind);
        }
        if (i + ENTRY_AHEAD_NAME < n) {
            const bir_inst_t *ahead = &insts[dbg[i + ENTRY_AHEAD_NAME].inst];
            if (ahead->tir_op >= 0 && ahead->tir_op < ops->nops)
                TPB_PREFETCH(&ops->name[ahead->tir_op]);
            TPB_PREFETCH(ahead->name);
        }
        entry_plan(&en, ops, &insts[dbg[i].inst], dbg[i].pc, compact ? &prev : NULL);
        if (!quick || !(memo ? entry_write_fast(w, c, &en, memo) : entry_write_pretty(w, c, &en)))
            entry_write(w, c, &en, memo);
    }
    art_jcache_free(&jc);
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
    if (!g->nreplica[e])
        return;   /* none on this engine (counted by the emit walk) */
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
    if (!g->nreduce[e])
        return;   /* none on this engine (counted by the emit walk) */
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
                         const char *dir, bool compact, char *chunk, size_t nchunk,
                         tpb_err_t *err)
{
    const bir_block_t *b = &m->funcs[0].blocks[0];
    char name[64], path[4096];
    snprintf(name, sizeof name, "%s.json", isa_engine_name((isa_engine_t)e));
    fio_atomic_t out;
    if (fio_join(path, sizeof path, dir, name, err) || fio_staged_open(&out, path, err))
        return -1;
    setvbuf(out.f, NULL, _IONBF, 0);
    jw_t w;
    jw_init_file_lent(&w, out.f, chunk, nchunk);
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
    art_debug_entries(&w, ops, b->insts, g->dbg[e], g->ndbg[e], compact, true);
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

size_t art_sidecar_chunk(unsigned entries)
{
    /* about the text of that many entries (under 256 bytes each): a small
     * sidecar's is malloc'ed, not a 2 MiB page */
    size_t want = (size_t)4096 + (size_t)entries * 256;
    return want < JW_CHUNK ? want : JW_CHUNK;
}

int art_write_sidecars_ops(const gen_t *g, const bir_module_t *m, const art_ops_t *ops,
                           const char *dir, tpb_err_t *err)
{
    /* one chunk for the writers, one after another: the room the debug
     * block has past its lists once the streams are closed (gen_t.spare),
     * else a block for the largest sidecar */
    int most = 0;
    bool streaming = false;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        most = g->opened[e] && g->ndbg[e] > most ? g->ndbg[e] : most;
        streaming |= g->bin[e] != NULL;
    }
    size_t n = art_sidecar_chunk((unsigned)most);
    bool lent = g->spare && !streaming && g->nspare >= n;
    char *chunk = lent ? g->spare : tpb_array_grow(NULL, 0, n);
    if (lent)
        n = g->nspare < JW_CHUNK ? g->nspare : JW_CHUNK;
    if (!chunk)
        return tpb_errf(err, "%s: out of memory serialising JSON", dir);
    int rc = 0;
    for (int e = 0; e < ISA_ENG_COUNT && !rc; e++)
        if (g->opened[e] && write_sidecar(g, m, ops, e, dir,
                                          g->ndbg[e] >= tpb_sidecar_compact_min(), chunk, n, err))
            rc = -1;
    if (!lent)
        tpb_array_free(chunk, n);
    return rc;
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
