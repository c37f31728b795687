/* emit.c - the Generator: one program-order walk over the scheduled BIR.
 *
 * For every instruction the L2 opcode is derived once (the ISA table's
 * NEURON_ISA_TPB_OPCODE value) and used by all three CodeGenModes:
 *   COLLECT_OPCODES (0)  insert it (and its prefixes' opcodes) into the
 *                        instruction's opcode set; no bytes (its own walk,
 *                        emit_collect.c)
 *   RUN_ISA_CHECKS (1)   encode the bundle(s), route them by the
 *                        instruction's own engine (findBin) to a lazily
 *                        opened <Engine>.bin, optional per-instruction dump,
 *                        count them (histogram keyed by the same opcode),
 *                        queue the L2 legality check (flushed after the walk)
 *   GENERATE_ISACODE (2) encode on the stack and validate at once; no files
 * Any other mode is an error. */
#include "backend.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytehash.h"
#include "fileio.h"
#include "hugepage.h"

int enc_check_mode(int mode, tpb_err_t *err)
{
    if (mode != ENC_COLLECT_OPCODES && mode != ENC_RUN_ISA_CHECKS && mode != ENC_GENERATE_ISACODE)
        return tpb_errf(err, "Wrong CodeGenMode. It must be one of GENERATE_ISACODE, "
                             "RUN_ISA_CHECKS, or COLLECT_OPCODES");
    return 0;
}

/* ---- encode cache ----
 * Unrolled loops emit the same instruction body again and again; only the
 * synchronisation header (wait/update values) changes.  isa_encode is a pure
 * function of the instruction's opcode, header and body (the members of its
 * format's struct: isa_encode reads no other byte of the union), so the
 * bundles of a body are cached (key: the opcode and those body bytes, plus
 * the PredExt prefix) and on a hit only the header fields of the main
 * bundle are rewritten, from the ISA table's HDR field descriptors, with the
 * encoder's own range checks.
 * A header value those checks reject falls back to isa_encode, so errors
 * read exactly as without the cache.  Direct-mapped, GEN_CACHE_SLOTS
 * slots; a collision just replaces the entry.  A slot names its entry in a
 * dense array filled in miss order (cache_add): an unrolled kernel has a
 * few dozen bodies, and entries spread over all 2.3 MB of slots touched a
 * page each (a page fault each on a VM); a kernel with thousands of bodies
 * gets the whole array in huge pages. */
#define GEN_CACHE_SLOTS 4096u
/* entries before the array goes to its full size (a few pages) */
#define GEN_CACHE_SMALL 64
_Static_assert(GEN_CACHE_SLOTS <= UINT16_MAX, "gen_t.cache_slot holds 1 + an entry index");
/* bundles of one instruction: its PredExt prefixes, an ApExt, itself */
#define EMIT_MAX_BUNDLES (ISA_MAX_PREDEXT + 2)

struct gen_cache_entry {
    bool has_pred;
    uint8_t nb;
    uint32_t validated;      /* engines whose wire validation passed (mode 2) */
    int8_t last_engine;      /* the engine of its last use (-1: none) */
    unsigned last_use;       /* that engine's instruction count then */
    uint64_t hash;
    isa_inst_t key;          /* op and body bytes compared; sync: the header
                                the bundles carry */
    bir_sync_t csync;        /* that header as the BIR holds it (same_sync) */
    isa_fmt_PREDEXT_t pred;
    uint8_t bundles[3][ISA_BUNDLE_BYTES];
};

/* The bytes of in->f the encoding depends on: its format's struct
 * (bir_body_size, without the call: in->isa.op is in the table here). */
static size_t body_size(const bir_inst_t *in)
{
    return isa_formats[isa_ops[in->isa.op].format].struct_size;
}

/* bir_isa_expand for the encoder (in->isa.op in the table): the op, the
 * header and the body, without clearing the 300-byte struct first.  Every
 * reader of the result reads only those (the encoder its format's struct,
 * the cache its body bytes, the delta encoder the header and body words);
 * the clearing was most of the cost of an uncached instruction's
 * expansion. */
static void expand_for_encode(const bir_inst_t *in, isa_inst_t *out)
{
    out->op = in->isa.op;
    out->l2 = in->isa.l2;
    bir_sync_expand(&in->isa.sync, &out->sync);
    memcpy(&out->f, bir_body(in), body_size(in));
}

/* The PredExt prefix of the key: in->pred, or zeros. */
static const isa_fmt_PREDEXT_t *key_pred(const bir_inst_t *in)
{
    static const isa_fmt_PREDEXT_t none;
    return in->has_pred ? &bir_rare(in)->pred : &none;
}

static uint64_t cache_hash(const bir_inst_t *in, size_t body)
{
    uint64_t h = tpb_hash_word(0xcbf29ce484222325ull ^ (uint64_t)in->has_pred,
                               (uint64_t)in->isa.op);
    h = tpb_hash_bytes(h, bir_body(in), body);
    return in->has_pred ? tpb_hash_bytes(h, &bir_rare(in)->pred, sizeof(isa_fmt_PREDEXT_t)) : h;
}

/* The slot of hash h (NULL: no cache). */
static uint16_t *cache_slot(gen_t *g, uint64_t h)
{
    return g->cache_slot ? &g->cache_slot[(h ^ h >> 32) & (GEN_CACHE_SLOTS - 1)] : NULL;
}

/* A slot's entry; NULL when it has none yet. */
static struct gen_cache_entry *slot_entry(gen_t *g, const uint16_t *slot)
{
    return slot && *slot ? &g->cache[*slot - 1] : NULL;
}

/* Bytes of the entry array with cap entries. */
static size_t cache_bytes(int cap) { return (size_t)cap * sizeof(struct gen_cache_entry); }

/* A new entry for the empty slot (the array grows, so entry pointers taken
 * before do not survive the call); NULL when out of memory (the body is
 * then not cached) or without a cache. */
static struct gen_cache_entry *cache_add(gen_t *g, uint16_t *slot)
{
    if (!slot)
        return NULL;
    if (g->ncache == g->capcache) {
        /* a slot has one entry at most, so GEN_CACHE_SLOTS are the most;
         * the small array whole at once: its pages are touched only as far
         * as entries are written, where doubling from 16 copied the
         * entries (~0.5 KiB each) twice, a small kernel's third of the
         * walk */
        int nc = !g->capcache ? GEN_CACHE_SMALL : (int)GEN_CACHE_SLOTS;
        struct gen_cache_entry *p =
            nc > g->capcache
                ? tpb_spare_grow(g->m->spare, g->cache, cache_bytes(g->capcache), cache_bytes(nc))
                : NULL;
        if (!p)
            return NULL;
        g->cache = p;
        g->capcache = nc;
    }
    *slot = (uint16_t)++g->ncache;
    return &g->cache[g->ncache - 1];
}

static inline __attribute__((always_inline)) bool cache_match(const struct gen_cache_entry *c,
                                                            uint64_t h, const bir_inst_t *in,
                                                            size_t body)
{
    /* without a PredExt both preds are the zeros of key_pred */
    return c->hash == h && c->has_pred == in->has_pred &&
           c->key.op == in->isa.op &&
           memcmp(&c->key.f, bir_body(in), body) == 0 &&
           (!in->has_pred || memcmp(&c->pred, key_pred(in), sizeof c->pred) == 0);
}

/* The entry in's engine used `period` instructions ago when it holds in's
 * body (NULL: no such entry; compared by content, so an entry since
 * replaced by another body is no match; a match is the entry the hash
 * would pick). */
static struct gen_cache_entry *recent_find(gen_t *g, const bir_inst_t *in, size_t body)
{
    if (!g->cache || in->engine < 0 || in->engine >= ISA_ENG_COUNT)
        return NULL;
    unsigned p = g->period[in->engine], n = g->nrecent[in->engine];
    if (!p || p > n)
        return NULL;
    unsigned ix = g->recent[in->engine][(n - p) % GEN_RECENT];
    struct gen_cache_entry *c = ix ? &g->cache[ix - 1] : NULL;
    return c && cache_match(c, c->hash, in, body) ? c : NULL;
}

/* c serves in's engine's next instruction; after a wrong guess the period
 * becomes the distance to c's last use on this engine. */
static inline __attribute__((always_inline)) void recent_note(gen_t *g, const bir_inst_t *in,
                                                            struct gen_cache_entry *c,
                                                            bool guessed)
{
    if (!c || in->engine < 0 || in->engine >= ISA_ENG_COUNT)
        return;
    int e = in->engine;
    unsigned n = g->nrecent[e];
    if (!guessed) {
        unsigned d = c->last_engine == e ? n - c->last_use : 0;
        g->period[e] = d <= GEN_RECENT ? d : 0;
    }
    c->last_engine = (int8_t)e;
    c->last_use = n;
    g->recent[e][n % GEN_RECENT] = (uint16_t)(c - g->cache + 1);
    g->nrecent[e] = n + 1;
}

static void set_bits(uint8_t *b, unsigned pos, unsigned width, uint32_t v)
{
    for (unsigned i = 0; i < width;) {
        unsigned p = pos + i, sh = p % 8, n = 8 - sh < width - i ? 8 - sh : width - i;
        uint8_t mask = (uint8_t)(((1u << n) - 1) << sh);
        b[p / 8] = (uint8_t)((b[p / 8] & ~mask) | ((v >> i) << sh & mask));
        i += n;
    }
}

/* set_bits for a field of at most 32 bits with 8 bytes of the bundle from
 * its first byte on (the header fields): one 64-bit little-endian
 * read-modify-write of the bytes it touches (pos % 8 + width <= 39 bits). */
static void set_bits_word(uint8_t *b, unsigned pos, unsigned width, uint32_t v)
{
    uint8_t *p = b + pos / 8;
    uint64_t w = 0, mask = ((1ull << width) - 1) << (pos % 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&w, p, 8);
    w = (w & ~mask) | ((uint64_t)v << (pos % 8) & mask);
    memcpy(p, &w, 8);
#else
    for (int i = 0; i < 8; i++)
        w |= (uint64_t)p[i] << (8 * i);
    w = (w & ~mask) | ((uint64_t)v << (pos % 8) & mask);
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(w >> (8 * i));
#endif
}

/* The checks isa_encode applies to one field value. */
static bool header_value_ok(const isa_field_t *f, uint32_t v)
{
    switch (f->type) {
    case ISA_FT_S:
        if (f->width < 32) {
            int32_t s = (int32_t)v, lo = -(int32_t)(1u << (f->width - 1));
            return s >= lo && s <= -lo - 1;
        }
        return true;
    case ISA_FT_U:
    case ISA_FT_F32:
    case ISA_FT_HEX:
        return f->width >= 32 || !(v >> f->width);
    default: /* enum kinds (BOOL, DTYPE, SPACE, ALU, ...) */
        return (f->width >= 32 || !(v >> f->width)) && isa_enum_name(f->type, v) != NULL;
    }
}

/* Whether two BIR headers are the same bytes (then their expansions are
 * equal and a bundle carrying one carries the other: no patch).  A pair
 * that differs only in the flags byte's unused bits just takes
 * patch_header. */
static inline bool same_sync(const bir_sync_t *a, const bir_sync_t *b)
{
    _Static_assert(sizeof(bir_sync_t) == 12, "two loads");
    uint64_t x, y;
    uint32_t u, v;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    memcpy(&u, (const char *)a + 8, 4);
    memcpy(&v, (const char *)b + 8, 4);
    return ((x ^ y) | (u ^ v)) == 0;
}

/* Rewrite the sync header fields of bundle b, which carries ref's header,
 * from in->sync: only the fields whose values differ (ref's passed the
 * encoder's checks); false when a value would not encode (the caller
 * encodes from scratch for the error). */
static bool patch_header(const isa_sync_t *sync_in, const isa_inst_t *ref, uint8_t *b)
{
    if (memcmp(sync_in, &ref->sync, sizeof *sync_in) == 0)
        return true;
    const isa_fmtinfo_t *h = &isa_formats[ISA_FMT_HDR];
    const uint8_t *sync = (const uint8_t *)sync_in, *rsync = (const uint8_t *)&ref->sync;
    for (unsigned i = 0; i < h->nfields; i++) {
        const isa_field_t *f = &h->fields[i];
        uint32_t v, r;
        memcpy(&v, sync + f->offset, sizeof v);   /* isa_field_get of a header field */
        memcpy(&r, rsync + f->offset, sizeof r);
        if (v == r)
            continue;
        if (!header_value_ok(f, v))
            return false;
        if (f->bitpos / 8 + 8 <= ISA_BUNDLE_BYTES)
            set_bits_word(b, f->bitpos, f->width, v);
        else
            set_bits(b, f->bitpos, f->width, v);
    }
    return true;
}

int gen_init(gen_t *g, int mode, const bir_module_t *m, const char *dir, bool dump_per_inst,
             tpb_err_t *err)
{
    memset(g, 0, sizeof *g);
    if (enc_check_mode(mode, err))
        return -1;
    g->mode = mode;
    g->m = m;
    g->dir = dir;
    g->dump_per_inst = dump_per_inst;
    if (m->nloops > 0) {
        /* [0, nloops): back-branch targets; [nloops, 2 nloops): exit labels */
        g->loop_pc = calloc((size_t)m->nloops * 2, sizeof *g->loop_pc);
        if (!g->loop_pc)
            return tpb_errf(err, "out of memory in the generator");
        g->nloop_pc = m->nloops * 2;
    }
    if (mode != ENC_COLLECT_OPCODES) {
        g->cache_slot = calloc(GEN_CACHE_SLOTS, sizeof *g->cache_slot);   /* entries: on use */
        g->plans = isa_plans_new();
        if (!g->cache_slot || !g->plans)
            return tpb_errf(err, "out of memory in the generator");
    }
    return 0;
}

void gen_free(gen_t *g)
{
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (g->bin[e]) {
            jb_free(&g->binbuf[e]);   /* an abandoned stream: nothing more written */
            fclose(g->bin[e]);
            unlink(g->bin_path[e]);
            g->bin[e] = NULL;
        }
        free(g->bin_path[e]);
        g->bin_path[e] = NULL;
        if (!g->dbg_lent[e])
            tpb_array_free(g->dbg[e], (size_t)g->capdbg[e] * sizeof *g->dbg[e]);
        g->dbg[e] = NULL;
        g->capdbg[e] = g->ndbg[e] = 0;
        g->dbg_lent[e] = false;
        g->col[e] = NULL;   /* in dbg_block */
        g->ncol[e] = g->capcol[e] = 0;
    }
    tpb_array_free(g->dbg_block, g->dbg_block_bytes);
    g->dbg_block = NULL;
    g->dbg_block_bytes = 0;
    g->spare = NULL;   /* in dbg_block */
    g->nspare = g->spare_used = 0;
    free(g->loop_pc);
    g->loop_pc = NULL;
    free(g->checks);
    tpb_array_free(g->cache, cache_bytes(g->capcache));
    free(g->cache_slot);
    isa_plans_free(g->plans);
    g->plans = NULL;
    g->checks = NULL;
    g->cache = NULL;
    g->cache_slot = NULL;
    g->ncache = g->capcache = 0;
}

/* Bundles collected per stream before one write() (the stream is
 * unbuffered, create_bin): a call per instruction cost more than encoding
 * it from the cache, and on a VM each call costs microseconds
 * (docs/performance-log.md "Artifact writes").  64 KiB: a 100 k-op kernel's
 * streams take a quarter of the calls 16 KiB took, and it stays malloc'ed
 * (under TPB_ARRAY_MAP_MIN), so a small kernel's stream faults in only the
 * pages it writes. */
#define GEN_BIN_BUF ((size_t)1024 * ISA_BUNDLE_BYTES)

/* Note the header bytes of the bundles stream e is about to write in its
 * opcode column (lost for good when they do not fit). */
static void col_note(gen_t *g, int e)
{
    const jb_t *bb = &g->binbuf[e];
    size_t n = bb->len / ISA_BUNDLE_BYTES;
    if (!g->col[e] || bb->failed || !bb->f)
        return;
    if (n > g->capcol[e] - g->ncol[e]) {
        g->col[e] = NULL;   /* the check reads the file back */
        return;
    }
    uint8_t *c = g->col[e] + g->ncol[e];
    for (size_t k = 0; k < n; k++)
        c[k] = (uint8_t)bb->buf[k * ISA_BUNDLE_BYTES];
    g->ncol[e] += (unsigned)n;
}

int gen_drain(gen_t *g, int e)
{
    col_note(g, e);
    jb_flush(&g->binbuf[e]);
    return jb_failed(&g->binbuf[e]) ? -1 : 0;
}

/* createBin: open <Engine>.bin under its final name: the directory is
 * the compile's staged one, renamed into place whole (fio_staged_open), so
 * a stream of its own needs no temporary; a failed one is removed. */
static FILE *create_bin(gen_t *g, int e, tpb_err_t *err)
{
    const char *name = isa_engine_name((isa_engine_t)e);
    size_t n = strlen(g->dir) + strlen(name) + sizeof "/.bin";
    if (n > 4096) {
        tpb_errf(err, "artifact path too long under %s", g->dir);
        return NULL;
    }
    free(g->bin_path[e]);
    char *path = g->bin_path[e] = malloc(n);
    if (!path) {
        tpb_errf(err, "out of memory in the generator");
        return NULL;
    }
    snprintf(path, n, "%s/%s.bin", g->dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        /* the notes' NeuronAssertion at generator.cpp:58, error code 1007 */
        tpb_errf(err, "%s: cannot create: %s (assertion 'bin != __null' failed, error code 1007)",
                 path, strerror(errno));
        return NULL;
    }
    setvbuf(f, NULL, _IONBF, 0);   /* drained whole from binbuf: one write() a drain */
    if (g->spare && g->nspare - g->spare_used >= GEN_BIN_BUF) {   /* gen_t.spare */
        jb_init_lent(&g->binbuf[e], f, g->spare + g->spare_used, GEN_BIN_BUF);
        g->spare_used += GEN_BIN_BUF;
    } else if (jb_init_file(&g->binbuf[e], f, GEN_BIN_BUF)) {
        jb_free(&g->binbuf[e]);
        fclose(f);
        unlink(path);
        tpb_errf(err, "out of memory in the generator");
        return NULL;
    }
    g->bin[e] = f;
    g->opened[e] = true;
    g->reg_engine[g->nreg++] = e;   /* addEngInstrFile + addEngDMADescFile */
    return f;
}

/* findBin: the instruction's own engine -> its stream. */
static FILE *find_bin(gen_t *g, const bir_inst_t *in, tpb_err_t *err)
{
    int e = in->engine;
    if ((unsigned)e < ISA_ENG_COUNT && g->bin[e])
        return g->bin[e];   /* opened: a TPB engine (create_bin follows the check) */
    if (e < 0 || e >= ISA_ENG_COUNT || !isa_engine_is_tpb((isa_engine_t)e)) {
        tpb_errf(err, "%s, but DMA, Unassigned and ALL are not valid TPB engines",
                 e >= 0 && e < ISA_ENG_COUNT ? isa_engine_name((isa_engine_t)e) : "?");
        return NULL;
    }
    return g->bin[e] ? g->bin[e] : create_bin(g, e, err);
}

/* createInstBin: <Engine>.<24-digit seq>.<name>.bin, written and closed. */
static int dump_inst(gen_t *g, const bir_inst_t *in, const uint8_t (*bundles)[ISA_BUNDLE_BYTES],
                     unsigned nb, tpb_err_t *err)
{
    char name[64];
    snprintf(name, sizeof name, "%s", in->name);
    for (char *p = name; *p; p++)
        if (*p == '/' || *p == '\\' || *p == ' ')
            *p = '_';
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s.%024u.%s.bin", g->dir,
                 isa_engine_name((isa_engine_t)in->engine), g->seq++, name) >= (int)sizeof path)
        return tpb_errf(err, "artifact path too long under %s", g->dir);
    return fio_write_staged(path, bundles, (size_t)nb * ISA_BUNDLE_BYTES, err);
}

/* Encode one BIR instruction: [PredExt] [ApExt] main; whole is in
 * expanded (bir_isa_expand), ref NULL or a cache entry of the same opcode
 * whose main bundle the main one is encoded from (isa_encode_planned_from:
 * the same bytes and errors, only the fields that differ checked). */
static int encode(isa_plans_t *ps, const bir_inst_t *in, const isa_inst_t *whole,
                  const struct gen_cache_entry *ref,
                  uint8_t out[EMIT_MAX_BUNDLES][ISA_BUNDLE_BYTES], unsigned *nb, int idx,
                  tpb_err_t *err)
{
    isa_err_t ie;
    unsigned n = 0;
    if (in->has_pred) {
        isa_inst_t p;
        memset(&p, 0, sizeof p);
        p.op = ISA_OP_PRED_EXT;
        p.l2 = isa_ops[ISA_OP_PRED_EXT].l2;
        const bir_rare_t *r = bir_rare(in);
        for (unsigned q = 0; q <= r->npred_more; q++) {
            p.f.PREDEXT = r->pred;
            if (q) {   /* a further predicate: the first's fill and keep */
                const bir_pred_t *m = &r->pred_more[q - 1];
                p.f.PREDEXT.offset = m->offset;
                p.f.PREDEXT.cm = m->cm;
                p.f.PREDEXT.cmp = m->cmp;
                p.f.PREDEXT.rev_pred = m->rev_pred;
                p.f.PREDEXT.step0 = m->step[0], p.f.PREDEXT.step1 = m->step[1];
                p.f.PREDEXT.step2 = m->step[2], p.f.PREDEXT.step3 = m->step[3];
            }
            if (isa_encode_planned(ps, &p, out[n], &ie) != ISA_OK)
                return tpb_errf(err, "instruction %d '%s' (%s): PredExt: %s", idx, in->name,
                                in->src ? in->src : "", ie.msg);
            n++;
        }
    }
    unsigned k = 0;
    if (isa_encode_with_prefixes_from(ps, whole, ref ? &ref->key : NULL,
                                      ref ? ref->bundles[ref->nb - 1] : NULL,
                                      (uint8_t(*)[ISA_BUNDLE_BYTES])out[n], &k, &ie) != ISA_OK)
        return tpb_errf(err, "instruction %d '%s' (%s, %s): %s", idx, in->name,
                        in->src && in->src[0] ? in->src : "compiler", isa_ops[in->isa.op].mnemonic, ie.msg);
    *nb = n + k;
    return 0;
}

/* The bytes of the debug block for lists and columns of `need` bytes:
 * need, or when the block is a mapping anyway (or the largest sidecar's
 * chunk would be one) its whole 2 MiB pages with room for the streams'
 * chunks and the sidecars' one (gen_t.spare): one huge page where each
 * writer faulted in a block of its own. */
static size_t spare_bytes(const unsigned *bundles, size_t need)
{
    unsigned most = 0, streams = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        if (bundles[e] && bundles[e] <= INT_MAX) {
            most = bundles[e] > most ? bundles[e] : most;
            streams++;
        }
    size_t chunk = art_sidecar_chunk(most), bins = streams * GEN_BIN_BUF;
    if (need < TPB_ARRAY_MAP_MIN && chunk < TPB_ARRAY_MAP_MIN)
        return need;   /* small: malloc'ed, faulted in only as far as used */
    return tpb_array_room(need + 64 + (chunk > bins ? chunk : bins));
}

int gen_reserve_debug(gen_t *g, const unsigned *bundles, tpb_err_t *err)
{
    if (g->mode != ENC_RUN_ISA_CHECKS || g->dbg_block)
        return 0;
    size_t total = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        if (!g->capdbg[e] && bundles[e] <= INT_MAX)
            total += bundles[e];
    if (!total)
        return 0;
    /* one block for every engine: the lists of a 10^5-instruction program
     * share huge pages (apart, most would be malloc'ed, page by page);
     * the opcode columns (a byte per bundle) follow them */
    size_t need = total * (sizeof(gen_debug_t) + 1), bytes = spare_bytes(bundles, need);
    gen_debug_t *p = tpb_spare_grow(g->m->spare, NULL, 0, bytes);   /* written before read */
    if (!p)
        return tpb_errf(err, "out of memory in the generator");
    g->dbg_block = p;
    g->dbg_block_bytes = bytes;
    if (bytes > need) {
        size_t at = (need + 63) & ~(size_t)63;   /* the chunks start on a cache line */
        g->spare = (char *)p + at;
        g->nspare = bytes - at;
    }
    uint8_t *col = (uint8_t *)(p + total);
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        if (!g->capdbg[e] && bundles[e] && bundles[e] <= INT_MAX) {
            g->dbg[e] = p;
            g->capdbg[e] = (int)bundles[e];
            g->dbg_lent[e] = true;
            p += bundles[e];
            g->col[e] = col;
            g->capcol[e] = bundles[e];
            col += bundles[e];
        }
    return 0;
}

/* A list lent from dbg_block that is full moves to a block of its own. */
static gen_debug_t *own_debug(gen_t *g, int e)
{
    int cap = 0;
    if (g->capdbg[e] > INT_MAX / 2)
        return NULL;
    gen_debug_t *p = tpb_array_double(NULL, &cap, sizeof *p, 2 * g->capdbg[e]);
    if (!p)
        return NULL;
    memcpy(p, g->dbg[e], (size_t)g->ndbg[e] * sizeof *p);
    g->dbg_lent[e] = false;
    g->capdbg[e] = cap;
    return p;
}

static int add_debug(gen_t *g, int e, int pc, int inst, tpb_err_t *err)
{
    if (g->ndbg[e] == g->capdbg[e]) {
        gen_debug_t *p = g->dbg_lent[e] ? own_debug(g, e)
                                        : tpb_array_double(g->dbg[e], &g->capdbg[e], sizeof *p, 64);
        if (!p)
            return tpb_errf(err, "out of memory in the generator");
        g->dbg[e] = p;
    }
    g->dbg[e][g->ndbg[e]++] = (gen_debug_t){pc, inst};
    return 0;
}

/* Queue the L2 legality check of an instruction; one that passes (the
 * opcode is legal on the engine) is known at once and needs no entry: only
 * failing ones wait for flush_checks, which reports the first after the
 * walk, as when every check waited. */
static int enqueue_check(gen_t *g, int inst, int engine, uint8_t l2, tpb_err_t *err)
{
    const isa_opinfo_t *oi = isa_op_by_l2(l2);
    if (oi && (oi->engines & (1u << engine)))
        return 0;
    if (g->nchecks == g->capchecks) {
        int nc = g->capchecks ? g->capchecks * 2 : 256;
        struct gen_check *p = realloc(g->checks, (size_t)nc * sizeof *p);
        if (!p)
            return tpb_errf(err, "out of memory in the generator");
        g->checks = p;
        g->capchecks = nc;
    }
    g->checks[g->nchecks++] = (struct gen_check){inst, engine, l2};
    return 0;
}

/* The L2 wire validator: decode what was built and check the engine bitmap. */
static int validate_bundles(isa_plans_t *ps, const bir_inst_t *in, int idx,
                            uint8_t (*bundles)[ISA_BUNDLE_BYTES], unsigned nb, tpb_err_t *err)
{
    isa_stream_t s;
    isa_err_t ie;
    if (isa_stream_decode_planned(ps, &bundles[0][0], (size_t)nb * ISA_BUNDLE_BYTES,
                                  (isa_engine_t)in->engine, &s, &ie) != ISA_OK)
        return tpb_errf(err, "instruction %d '%s' (%s): ISA check failed: %s", idx, in->name,
                        isa_ops[in->isa.op].mnemonic, ie.msg);
    isa_stream_free(&s);
    return 0;
}

/* The entry last used for an instruction of op (NULL: none, or its slot
 * now holds another opcode's body): a miss encodes from it. */
static const struct gen_cache_entry *op_ref(const gen_t *g, isa_op_t op)
{
    unsigned ix = g->op_last[op];
    const struct gen_cache_entry *c = ix && (int)ix <= g->ncache ? &g->cache[ix - 1] : NULL;
    return c && c->key.op == op ? c : NULL;
}

static void op_note(gen_t *g, const struct gen_cache_entry *c)
{
    g->op_last[c->key.op] = (uint16_t)(c - g->cache + 1);
}

/* encode() without the cache (whole: in expanded). */
static int encode_plain(gen_t *g, const bir_inst_t *in,
                        uint8_t out[EMIT_MAX_BUNDLES][ISA_BUNDLE_BYTES], unsigned *nb, int idx,
                        tpb_err_t *err)
{
    isa_inst_t whole;
    bir_isa_expand(in, &whole);
    return encode(g->plans, in, &whole, NULL, out, nb, idx, err);
}

/* An opcode whose last GEN_BYPASS_AFTER instructions all missed the cache
 * (an unrolled kernel whose instances all differ: their addresses) skips
 * the hash lookup that would miss again and the entry it would add; every
 * GEN_BYPASS_SAMPLE-th of them still goes through the cache, so bodies
 * that start to repeat are cached again (a hit ends the run). */
#define GEN_BYPASS_AFTER 64u
#define GEN_BYPASS_SAMPLE 16u
static bool bypass(gen_t *g, isa_op_t op)
{
    unsigned n = g->op_misses[op];
    if (n < GEN_BYPASS_AFTER || (n + 1) % GEN_BYPASS_SAMPLE == 0)
        return false;   /* a sample: the lookup counts it */
    g->op_misses[op] = n + 1;
    return true;
}

/* A miss without a cache entry: encoded from the opcode's last entry. */
static int encode_uncached(gen_t *g, const bir_inst_t *in,
                           uint8_t out[EMIT_MAX_BUNDLES][ISA_BUNDLE_BYTES], unsigned *nb, int idx,
                           tpb_err_t *err)
{
    isa_inst_t whole;
    expand_for_encode(in, &whole);
    if (encode(g->plans, in, &whole, op_ref(g, in->isa.op), out, nb, idx, err))
        return -1;
    g->cache_misses++;
    g->cache_bypassed++;
    return 0;
}

/* encode() through the cache; *c is the instruction's cache entry when it
 * holds this body (NULL when there is no cache).  A miss encodes from the
 * entry of the opcode's last instruction (an unrolled kernel's distinct
 * instances differ in a few fields). */
static int encode_cached(gen_t *g, const bir_inst_t *in, uint8_t out[EMIT_MAX_BUNDLES][ISA_BUNDLE_BYTES],
                         unsigned *nb, int idx, struct gen_cache_entry **c, tpb_err_t *err)
{
    *c = NULL;
    /* rare (NKI mask conjunctions): not cached; an op outside the table:
     * isa_encode reports it */
    if (bir_rare(in)->npred_more || (unsigned)in->isa.op >= ISA_OP_COUNT)
        return encode_plain(g, in, out, nb, idx, err);
    size_t body = body_size(in);
    struct gen_cache_entry *e = recent_find(g, in, body);
    if (!e && bypass(g, in->isa.op))
        return encode_uncached(g, in, out, nb, idx, err);
    uint64_t h = e ? e->hash : cache_hash(in, body);
    bool recent = e != NULL;
    uint16_t *slot = cache_slot(g, h);
    if (!e)
        e = slot_entry(g, slot);
    if (e && (recent || cache_match(e, h, in, body))) {
        memcpy(out, e->bundles, (size_t)e->nb * ISA_BUNDLE_BYTES);   /* the rest is not read */
        isa_sync_t hdr;
        if (same_sync(&in->isa.sync, &e->csync) ||
            (bir_sync_expand(&in->isa.sync, &hdr), patch_header(&hdr, &e->key, out[e->nb - 1]))) {
            *nb = e->nb;
            *c = e;
            g->cache_hits++;
            g->cache_recent_hits += recent;
            recent_note(g, in, e, recent);
            g->op_misses[in->isa.op] = 0;
            return 0;
        }
    }
    isa_inst_t whole;
    expand_for_encode(in, &whole);
    /* every bundle up to *nb is written; only those are read or kept */
    if (encode(g->plans, in, &whole, g->cache ? op_ref(g, in->isa.op) : NULL, out, nb, idx, err))
        return -1;
    g->cache_misses++;
    g->op_misses[in->isa.op]++;
    if (!e)   /* an empty slot; else a collision replaces its entry */
        e = cache_add(g, slot);
    if (e) {
        e->hash = h;
        e->has_pred = in->has_pred;
        e->key = whole;
        e->csync = in->isa.sync;
        e->pred = *key_pred(in);
        e->nb = (uint8_t)*nb;
        e->validated = 0;
        e->last_engine = -1;   /* a new body */
        memcpy(e->bundles, out, (size_t)*nb * ISA_BUNDLE_BYTES);
        *c = e;
        recent_note(g, in, e, false);
        op_note(g, e);
    }
    return 0;
}

static int visit(gen_t *g, int idx, tpb_err_t *err)
{
    const bir_inst_t *in = &g->m->funcs[0].blocks[0].insts[idx];
    if (in->opc == BIR_INST_LOOP)
        return 0;   /* the InstLoop marker: not an ISA instruction */
    if (!g->checked && gen_check_inst(in, idx, err))
        return -1;   /* the checks of the COLLECT walk, which did not run */
    bir_inst_t br;
    isa_body_t br_body;   /* the branch's body with its target: a copy, the module's stays as lowered */
    bool fwd = in->loop_role == BIR_LOOP_SKIP || in->loop_role == BIR_LOOP_GUARD;
    if (in->loop_role == BIR_LOOP_BACK || fwd) {
        br = *in;
        memcpy(&br_body, in->isa.f, bir_body_size(in->isa.op));
        br.isa.f = &br_body;
        int slot = in->loop + (fwd ? g->m->nloops : 0);
        if (in->loop >= 0 && slot < g->nloop_pc && in->engine >= 0 &&
            in->engine < ISA_ENG_COUNT)
            br_body.BR.target = g->loop_pc[slot][in->engine];
        in = &br;
    }
    uint8_t l2 = isa_ops[in->isa.op].l2;    /* derived once, used by every mode */
    uint8_t bundles[EMIT_MAX_BUNDLES][ISA_BUNDLE_BYTES];
    unsigned nb = 0;
    struct gen_cache_entry *ce = NULL;
    switch (g->mode) {
    case ENC_RUN_ISA_CHECKS: {
        if (encode_cached(g, in, bundles, &nb, idx, &ce, err))
            return -1;
        if (bundles[nb - 1][0] != l2)
            return tpb_errf(err, "instruction %d '%s': header byte 0x%02x != opcode 0x%02x", idx,
                            in->name, bundles[nb - 1][0], l2);
        FILE *f = find_bin(g, in, err);
        if (!f)
            return -1;
        jb_t *bb = &g->binbuf[in->engine];
        if ((size_t)nb * ISA_BUNDLE_BYTES > bb->cap - bb->len)
            gen_drain(g, in->engine);   /* full: drained here, past the opcode column */
        jb_put(bb, (const char *)bundles, (size_t)nb * ISA_BUNDLE_BYTES);
        if (bb->failed)   /* jb_failed */
            return tpb_errf(err, "%s/%s.bin: write failed", g->dir,
                            isa_engine_name((isa_engine_t)in->engine));
        if (g->staging && gen_stage(g->staging, in->engine,
                                    (const uint8_t(*)[ISA_BUNDLE_BYTES])bundles, nb, err))
            return -1;   /* the staging vector: the second, independent sink */
        if (g->dump_per_inst && dump_inst(g, in, (const uint8_t(*)[ISA_BUNDLE_BYTES])bundles, nb, err))
            return -1;
        int e = in->engine;
        if (add_debug(g, e, (int)(g->pcs[e] + nb - 1), idx, err))
            return -1;
        g->nreplica[e] += bir_rare(in)->nreplica != 0;
        g->nreduce[e] += in->opc == BIR_REDUCE;
        g->pcs[e] += nb;
        for (unsigned i = 0; i < nb; i++)
            g->histogram[bundles[i][0]]++;
        return enqueue_check(g, idx, e, l2, err);
    }
    case ENC_GENERATE_ISACODE: {
        if (encode_cached(g, in, bundles, &nb, idx, &ce, err))
            return -1;
        /* the wire check depends on the body and the engine only (the
         * header values passed the encoder's checks) */
        uint32_t ebit = in->engine >= 0 && in->engine < 32 ? 1u << in->engine : 0;
        if (!(ce && ebit && (ce->validated & ebit))) {
            if (validate_bundles(g->plans, in, idx, bundles, nb, err))
                return -1;
            if (ce)
                ce->validated |= ebit;
        }
        if (g->staging && gen_stage(g->staging, in->engine,
                                    (const uint8_t(*)[ISA_BUNDLE_BYTES])bundles, nb, err))
            return -1;
        /* the census is kept in this mode too (for --stats) */
        if (in->engine >= 0 && in->engine < ISA_ENG_COUNT)
            g->pcs[in->engine] += nb;
        for (unsigned i = 0; i < nb; i++)
            g->histogram[bundles[i][0]]++;
        return 0;
    }
    default:
        return enc_check_mode(g->mode, err);
    }
}

/* flushISAChecks: the deferred engine-bitmap validation. */
static int flush_checks(gen_t *g, tpb_err_t *err)
{
    for (int i = 0; i < g->nchecks; i++) {
        const struct gen_check *c = &g->checks[i];
        const isa_opinfo_t *oi = isa_op_by_l2(c->l2);
        if (!oi || !(oi->engines & (1u << c->engine))) {
            const bir_inst_t *in = &g->m->funcs[0].blocks[0].insts[c->inst];
            return tpb_errf(err, "instruction %d '%s': opcode 0x%02x (%s) is not legal on %s",
                            c->inst, in->name, c->l2, oi ? oi->mnemonic : "?",
                            isa_engine_name((isa_engine_t)c->engine));
        }
    }
    g->nchecks = 0;
    return 0;
}

int gen_run(gen_t *g, tpb_err_t *err)
{
    if (g->mode == ENC_COLLECT_OPCODES)
        return gen_collect(g, err);   /* emit_collect.c */
    const bir_block_t *b = &g->m->funcs[0].blocks[0];
    for (int i = 0; i < b->ninsts; i++)
        if (visit(g, i, err))
            return -1;
    if (flush_checks(g, err))
        return -1;
    return g->mode == ENC_RUN_ISA_CHECKS ? gen_check_asm_mappings(g, err) : 0;
}

int gen_check_dve_coverage(const gen_t *g, tpb_err_t *err)
{
    /* coverage: every opcode the program uses on DVE must be in the DVE
     * opcode table of the ISA (its legality bitmap includes DVE) */
    for (unsigned v = 0; v < 256; v++) {
        if (!(g->table_opcodes[ISA_ENG_DVE][v >> 5] >> (v & 31) & 1u))
            continue;
        const isa_opinfo_t *oi = isa_op_by_l2((uint8_t)v);
        if (!oi || !(oi->engines & E_DVE))
            return tpb_errf(err, "DVE opcode coverage: opcode 0x%02x (%s) is used on DVE but is "
                                 "missing from the DVE opcode table",
                            v, oi ? oi->mnemonic : "unknown");
    }
    return 0;
}

int gen_finish(gen_t *g, bool ok, tpb_err_t *err)
{
    int rc = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        if (!g->bin[e])
            continue;
        bool good = ok && gen_drain(g, e) == 0 && fflush(g->bin[e]) == 0 && !ferror(g->bin[e]);
        jb_free(&g->binbuf[e]);
        if (fclose(g->bin[e]) != 0)
            good = false;
        g->bin[e] = NULL;
        if (!good) {
            unlink(g->bin_path[e]);
            if (ok && !rc)
                rc = tpb_errf(err, "%s: write failed", g->bin_path[e]);
        }
    }
    return rc;
}
