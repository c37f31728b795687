/* artifacts.c - the files around the .bin streams (docs/artifacts.md):
 * def.json, tensor-map.json, const_<name>.npy and the sidecars' buf table
 * (the <Engine>.json sidecars themselves: sidecar_write.c).
 * Every file is written atomically. */
#include "backend.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytehash.h"
#include "fileio.h"
#include "hugepage.h"
#include "txn.h"
#include "jsonw.h"
#include "npy.h"
#include "numeric.h"

/* Write the document w holds (freed here) as dir/name.  def.json and
 * tensor-map.json go through jw_t, the one JSON writer (common/jsonw.h):
 * the same bytes cJSON_Print gave them, without a tree, a malloc per value
 * and a sprintf + sscanf per number. */
/* w's document as the file `name` in each of the ndirs directories (the
 * same bytes, serialised once), w freed. */
static int write_json_to(jw_t *w, const char *const *dirs, int ndirs, const char *name,
                         tpb_err_t *err)
{
    char path[4096];
    int rc = 0;
    for (int i = 0; i < ndirs && !rc; i++) {
        rc = fio_join(path, sizeof path, dirs[i], name, err);
        if (!rc && i == 0 && jw_finish(w))
            rc = tpb_errf(err, "%s: out of memory serialising JSON", path);
        if (!rc)
            rc = fio_write_staged(path, w->b.buf, w->b.len, err);   /* inside the staged directory */
    }
    jw_free(w);
    return rc;
}

static int write_json(jw_t *w, const char *dir, const char *name, tpb_err_t *err)
{
    return write_json_to(w, &dir, 1, name, err);
}

/* A string member; none at all for NULL (as cJSON_AddStringToObject,
 * which adds nothing then). */
static void put_str(jw_t *w, const char *key, const char *s)
{
    if (s)
        jw_member_str(w, key, strlen(key), s);
}

static const char *kind_name(tir_tensor_kind_t k)
{
    switch (k) {
    case TIR_T_INPUT: return "input";
    case TIR_T_OUTPUT: return "output";
    case TIR_T_CONSTANT: return "constant";
    case TIR_T_SCRATCH: return "scratch";
    default: return "tile";
    }
}

/* The ops' "buf" strings: buf_table_t (backend.h). */

/* A further name is left out when the string so far and it would pass this
 * many bytes (the limit of the fixed-size buffer the string once had). */
#define BUF_STR_MAX 254

/* Whether the token pool->buf[tok, tok + n) occurs in the string
 * pool->buf[from, end) as a whole space-separated item (scanning as
 * strstr does from each match's end). */
static bool buf_has_item(const jb_t *pool, size_t from, size_t end, size_t tok, size_t n)
{
    const char *s = pool->buf + from, *e = pool->buf + end, *t = pool->buf + tok;
    for (const char *p = s; p + n <= e;) {
        if (memcmp(p, t, n) != 0) {
            p++;
            continue;
        }
        if ((p == s || p[-1] == ' ') && (p + n == e || p[n] == ' '))
            return true;
        p += n;
    }
    return false;
}

/* Length of a tile name without its "#<digits>" instance suffix (the
 * suffix after the last '#', when it is one or more digits only).  Read
 * from the end: the trailing digits, then whether a '#' precedes them (a
 * loop tile's name is mostly its suffix; the base is not scanned twice). */
static size_t base_name_len(const char *nm)
{
    size_t n = strlen(nm), j = n;
    while (j > 0 && nm[j - 1] >= '0' && nm[j - 1] <= '9')
        j--;
    return j < n && j > 0 && nm[j - 1] == '#' ? j - 1 : n;
}

/* jb_u64 with the one-digit case (buffer numbers) inline. */
static void put_small_u64(jb_t *pool, uint64_t v)
{
    if (v < 10)
        jb_putc(pool, (char)('0' + v));
    else
        jb_u64(pool, v);
}

/* Append " name#b/n" (no space first) for operand tensor t of the op whose
 * string starts at `from`, unless it does not rotate, repeats or does not
 * fit. */
static bool buf_rotates(const bir_module_t *m, int t);

static void buf_add(jb_t *pool, size_t from, const bir_module_t *m, const tir_kernel_t *k, int t)
{
    if (!buf_rotates(m, t))
        return;
    /* the declared name: a loop instance is named "<tile>#<iteration>" */
    const char *nm = k->tensors[t].name;
    size_t len = base_name_len(nm);
    size_t used = pool->len - from, sep = used ? 1 : 0;
    if (sep)
        jb_putc(pool, ' ');
    size_t tok = pool->len;
    jb_put(pool, nm, len);
    jb_putc(pool, '#');
    put_small_u64(pool, m->mlocs[t].rot_buf);
    jb_putc(pool, '/');
    put_small_u64(pool, m->mlocs[t].rot_nbuf);
    if (pool->failed)
        return;
    size_t n = pool->len - tok;
    if (used + n > BUF_STR_MAX || buf_has_item(pool, from, from + used, tok, n))
        pool->len = from + used;   /* take it back */
}

size_t art_op_buffers(jb_t *pool, const bir_module_t *m, const tir_kernel_t *k, const tir_op_t *op)
{
    size_t from = pool->len;
    buf_add(pool, from, m, k, op->dst->tensor);
    buf_add(pool, from, m, k, op->dst2->tensor);
    for (int i = 0; i < op->nsrc && i < 4; i++)
        buf_add(pool, from, m, k, op->src[i]->tensor);
    buf_add(pool, from, m, k, op->index->tensor);
    buf_add(pool, from, m, k, op->bias->tensor);
    if (op->s0.is_ap)
        buf_add(pool, from, m, k, op->s0.ap->tensor);
    if (op->s1.is_ap)
        buf_add(pool, from, m, k, op->s1.ap->tensor);
    if (pool->len == from)
        return 0;   /* the shared "" */
    jb_putc(pool, 0);
    return from;
}

/* Whether tensor t contributes a token (the test buf_add starts with). */
static bool buf_rotates(const bir_module_t *m, int t)
{
    return t >= 0 && t < m->nmlocs && m->mlocs[t].tensor == t && m->mlocs[t].rot_nbuf;
}

void art_buf_memo_release(art_buf_memo_t *memo)
{
    free(memo->tok);
    free(memo->ids);
    memo->tok = NULL, memo->ids = NULL;
    memo->ntok = 0, memo->nids = memo->capids = 0;
}

static uint64_t token_hash(const char *nm, size_t len, unsigned buf, unsigned nbuf)
{
    uint64_t h = tpb_hash_bytes(0xcbf29ce484222325ull, nm, len);
    return tpb_hash_word(h, (uint64_t)buf << 32 | nbuf);
}

/* Put token x (its id set) into the table ids of cap slots (a power of
 * two, with a free one). */
static void token_place(struct art_buf_token *ids, uint32_t cap, const struct art_buf_token *x)
{
    uint32_t i = (uint32_t)token_hash(x->nm, x->len, x->buf, x->nbuf) & (cap - 1);
    while (ids[i].nm)
        i = (i + 1) & (cap - 1);
    ids[i] = *x;
}

/* Room for one more token (the table at most half full); false when out of
 * memory. */
static bool token_room(art_buf_memo_t *memo)
{
    if (2 * (memo->nids + 1) <= memo->capids)
        return true;
    uint32_t cap = memo->capids ? 2 * memo->capids : 64;
    struct art_buf_token *ids = calloc(cap, sizeof *ids);
    if (!ids)
        return false;
    for (uint32_t i = 0; i < memo->capids; i++)
        if (memo->ids[i].nm)
            token_place(ids, cap, &memo->ids[i]);
    free(memo->ids);
    memo->ids = ids;
    memo->capids = cap;
    return true;
}

/* The number of the token (base name, buffer, buffer count), interned on
 * first sight; UINT32_MAX when out of memory. */
static uint32_t token_id(art_buf_memo_t *memo, const char *nm, size_t len, unsigned buf,
                         unsigned nbuf)
{
    if (!token_room(memo))
        return UINT32_MAX;
    uint32_t i = (uint32_t)token_hash(nm, len, buf, nbuf) & (memo->capids - 1);
    for (; memo->ids[i].nm; i = (i + 1) & (memo->capids - 1)) {
        const struct art_buf_token *x = &memo->ids[i];
        if (x->len == len && x->buf == buf && x->nbuf == nbuf && !memcmp(x->nm, nm, len))
            return x->id;
    }
    memo->ids[i] = (struct art_buf_token){nm, (uint32_t)len, buf, nbuf, memo->nids};
    return memo->nids++;
}

/* Whether nm is base[0..len) followed by '#' and one or more digits (then
 * base_name_len(nm) == len and nm's base is base's). */
static bool same_base(const char *nm, const char *base, uint32_t len)
{
    if (strncmp(nm, base, len) != 0 || nm[len] != '#' || !nm[len + 1])
        return false;
    for (const char *p = nm + len + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* The token number of rotating tensor t (its name's base, buf, nbuf);
 * UINT32_MAX when out of memory.  The by_path slot of t's declaring path
 * answers for a later instance of the same tile without a hash of its
 * base. */
static uint32_t rotating_token(art_buf_memo_t *memo, const tir_tensor_t *t, unsigned buf,
                               unsigned nbuf)
{
    uint64_t h = ((uint64_t)(uintptr_t)t->path ^ (uint64_t)buf << 48 ^ (uint64_t)nbuf << 56) *
                 0x9e3779b97f4a7c15ull;
    struct art_path_token *s = &memo->by_path[h >> 58 & (ART_PATH_SLOTS - 1)];
    if (s->nm && s->path == t->path && s->buf == buf && s->nbuf == nbuf &&
        same_base(t->name, s->nm, s->len)) {
        memo->path_hits++;
        return s->id;
    }
    memo->tok_scans++;
    size_t len = base_name_len(t->name);
    uint32_t id = token_id(memo, t->name, len, buf, nbuf);
    if (id < UINT32_MAX && len < UINT32_MAX)
        *s = (struct art_path_token){t->path, t->name, (uint32_t)len, buf, nbuf, id};
    return id;
}

/* tensor_token's first use of tensor t (t >= 0). */
static uint32_t tensor_token_new(art_buf_memo_t *memo, const bir_module_t *m,
                                 const tir_kernel_t *k, int t)
{
    if (t >= m->nmlocs)
        return 1;
    if (t >= memo->ntok) {
        int n = m->nmlocs;
        uint32_t *p = realloc(memo->tok, (size_t)n * sizeof *p);
        if (!p)
            return 0;
        memset(p + memo->ntok, 0, (size_t)(n - memo->ntok) * sizeof *p);
        memo->tok = p;
        memo->ntok = n;
    }
    uint32_t v = 1;
    if (buf_rotates(m, t)) {
        uint32_t id = rotating_token(memo, &k->tensors[t], m->mlocs[t].rot_buf,
                                     m->mlocs[t].rot_nbuf);
        if (id >= UINT32_MAX - 2)
            return 0;
        v = 2 + id;
    }
    return memo->tok[t] = v;
}

/* Tensor t's entry of memo->tok (1: no token; 0: out of memory), worked
 * out on its first use. */
static inline uint32_t tensor_token(art_buf_memo_t *memo, const bir_module_t *m,
                                    const tir_kernel_t *k, int t)
{
    if (t < 0)
        return 1;   /* an absent operand */
    if (t < memo->ntok && memo->tok[t])
        return memo->tok[t];
    return tensor_token_new(memo, m, k, t);
}

static bool buf_memo_match(const struct art_buf_memo_entry *e, const struct art_buf_memo_entry *key)
{
    if (!e->off || e->n != key->n)
        return false;
    for (int j = 0; j < key->n; j++)
        if (e->tok[j] != key->tok[j])
            return false;
    return true;
}

/* art_op_buffers_memo with a memo (art_ops_add calls it per op). */
static size_t op_buffers_memo(jb_t *pool, art_buf_memo_t *memo, const bir_module_t *m,
                              const tir_kernel_t *k, const tir_op_t *op)
{
    /* the operands in art_op_buffers' order */
    int all[ART_BUF_TOKENS], na = 0;
    all[na++] = op->dst->tensor;
    all[na++] = op->dst2->tensor;
    for (int i = 0; i < op->nsrc && i < 4; i++)
        all[na++] = op->src[i]->tensor;
    all[na++] = op->index->tensor;
    all[na++] = op->bias->tensor;
    if (op->s0.is_ap)
        all[na++] = op->s0.ap->tensor;
    if (op->s1.is_ap)
        all[na++] = op->s1.ap->tensor;
    struct art_buf_memo_entry key;
    key.n = 0;
    uint64_t h = 0;
    for (int i = 0; i < na; i++) {
        uint32_t v = tensor_token(memo, m, k, all[i]);
        if (!v)
            return art_op_buffers(pool, m, k, op);   /* out of memory: no memo */
        if (v == 1)
            continue;
        key.tok[key.n++] = v;
        h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    }
    if (!key.n)
        return 0;   /* the shared "" */
    /* two ways: a loop's few keys rarely evict each other */
    struct art_buf_memo_entry *way = &memo->e[(h >> 58) & (ART_BUF_MEMO - 2)];
    memo->clock++;
    for (int w = 0; w < 2; w++)
        if (buf_memo_match(&way[w], &key)) {
            way[w].used = memo->clock;
            return way[w].off;
        }
    size_t off = art_op_buffers(pool, m, k, op);
    if (off && off <= UINT32_MAX && !pool->failed) {
        struct art_buf_memo_entry *e = way[0].used <= way[1].used ? &way[0] : &way[1];
        *e = key;
        e->off = (uint32_t)off;
        e->used = memo->clock;
    }
    return off;
}

size_t art_op_buffers_memo(jb_t *pool, art_buf_memo_t *memo, const bir_module_t *m,
                           const tir_kernel_t *k, const tir_op_t *op)
{
    return memo ? op_buffers_memo(pool, memo, m, k, op) : art_op_buffers(pool, m, k, op);
}

/* Release a memo whose per-tensor tokens were lent (buf_table_begin). */
static void memo_done(art_buf_memo_t *memo)
{
    memo->tok = NULL;
    memo->ntok = 0;
    art_buf_memo_release(memo);
    free(memo);
}

/* Start the table: its offsets in off_room (k->nops of them) and the
 * memo's per-tensor tokens in tok_room (m->nmlocs; zero already when
 * tok_zero): the caller's; *memo NULL when no tile rotates (every string
 * is "", nothing more to build); -1 when out of memory. */
static int buf_table_begin(buf_table_t *bt, art_buf_memo_t **memo, const bir_module_t *m,
                           const tir_kernel_t *k, uint32_t *off_room, uint32_t *tok_room,
                           bool tok_zero)
{
    bt->off = NULL;
    *memo = NULL;
    memset(&bt->pool, 0, sizeof bt->pool);
    bool any_rot = false;
    for (int t = 0; t < m->nmlocs && !any_rot; t++)
        any_rot = m->mlocs[t].tensor == t && m->mlocs[t].rot_nbuf;   /* as buf_add */
    if (!any_rot || k->nops <= 0)
        return 0;
    bt->off = off_room;
    art_buf_memo_t *mm = calloc(1, sizeof *mm);
    if (!mm || jb_init_mem(&bt->pool, 4096)) {
        free(mm);
        return -1;
    }
    jb_putc(&bt->pool, 0);
    if (m->nmlocs > 0) {   /* every tensor's token is looked up: no growth */
        if (!tok_zero)
            memset(tok_room, 0, (size_t)m->nmlocs * sizeof *tok_room);
        mm->tok = tok_room;
        mm->ntok = m->nmlocs;
    }
    *memo = mm;
    return 0;
}

static void buf_table_free(buf_table_t *bt)
{
    bt->off = NULL;   /* art_ops_t's block */
    if (bt->pool.buf)
        jb_free(&bt->pool);
}

/* art_ops_t's block: the names, then room for the buf table's offsets and
 * its per-tensor tokens (touched only when a tile rotates). */
static size_t ops_block_bytes(int nops, int ntensors)
{
    return (size_t)nops * (sizeof(const char *) + sizeof(uint32_t)) +
           (size_t)(ntensors > 0 ? ntensors : 0) * sizeof(uint32_t);
}

int art_ops_begin(art_ops_builder_t *b, art_ops_t *o, const bir_module_t *m,
                  const tir_kernel_t *k)
{
    memset(b, 0, sizeof *b);
    memset(o, 0, sizeof *o);
    b->o = o, b->m = m, b->k = k;
    if (k->nops <= 0)
        return 0;
    o->nops = k->nops;
    /* 10^5 ops: a megabyte, in huge pages (the names written whole, not
     * cleared) */
    o->block_bytes = ops_block_bytes(k->nops, m->nmlocs);
    if (!(o->name = tpb_array_grow(NULL, 0, o->block_bytes)))
        return -1;
    uint32_t *off = (uint32_t *)(o->name + k->nops);
    return buf_table_begin(&o->bt, &b->memo, m, k, off, off + k->nops,
                           tpb_array_fresh_zero(o->block_bytes));
}

int art_ops_add(art_ops_builder_t *b, int i)
{
    art_ops_t *o = b->o;
    const tir_op_t *op = &b->k->ops[i];
    o->name[i] = op->name;
    if (op->kind == TIR_INLINE_ASM_BYTES && op->rare->inl) {   /* rare: an array on the first */
        if (!o->inl && !(o->inl = calloc((size_t)o->nops, sizeof *o->inl)))
            return -1;
        o->inl[i] = op->rare->inl;
    }
    if (!b->memo)
        return 0;
    size_t off = op_buffers_memo(&o->bt.pool, b->memo, b->m, b->k, op);
    if (off > UINT32_MAX || o->bt.pool.failed)
        return -1;
    o->bt.off[i] = (uint32_t)off;
    return 0;
}

void art_ops_end(art_ops_builder_t *b)
{
    if (b->memo)
        memo_done(b->memo);
    b->memo = NULL;
}

int art_ops_build(art_ops_t *o, const bir_module_t *m, const tir_kernel_t *k)
{
    art_ops_builder_t b;
    int rc = art_ops_begin(&b, o, m, k);
    for (int i = 0; i < k->nops && !rc; i++)
        rc = art_ops_add(&b, i);
    art_ops_end(&b);
    return rc;
}

void art_ops_free(art_ops_t *o)
{
    tpb_array_free(o->name, o->block_bytes);
    free(o->inl);
    buf_table_free(&o->bt);
    memset(o, 0, sizeof *o);
}


int art_write_def(const bir_module_t *m, const gen_t *g, const char *dir, tpb_err_t *err)
{
    jw_t w;
    jw_init(&w);
    jw_obj_begin(&w);
    jw_kvl_int(&w, "core", m->core);
    /* the artifact registry: per engine, in createBin order, its instruction
     * file and its sidecar (ModuleArtifactInfo addEngInstrFile /
     * addEngDMADescFile) */
    jw_keyl(&w, "artifacts");
    jw_arr_begin(&w);
    for (int i = 0; i < g->nreg; i++) {
        const char *en = isa_engine_name((isa_engine_t)g->reg_engine[i]);
        char f[64];
        jw_obj_begin(&w);
        jw_member_str(&w, "engine", 6, en);
        snprintf(f, sizeof f, "%s.bin", en);
        put_str(&w, "instr_file", f);
        snprintf(f, sizeof f, "%s.json", en);
        put_str(&w, "desc_file", f);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_keyl(&w, "semaphores");
    jw_arr_begin(&w);
    for (int s = 0; s < m->nsems; s++) {
        jw_obj_begin(&w);
        jw_kvl_int(&w, "id", m->sems[s].id);
        put_str(&w, "name", m->sems[s].name);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_keyl(&w, "queues");
    jw_arr_begin(&w);
    for (int q = 0; q < m->nqueues; q++) {
        const bir_queue_t *bq = &m->queues[q];
        jw_obj_begin(&w);
        jw_kvl_int(&w, "id", bq->id);
        put_str(&w, "name", bq->name);
        put_str(&w, "engine", isa_engine_name((isa_engine_t)bq->engine));
        jw_kvl_int(&w, "semaphore", bq->semaphore);
        jw_kvl_int(&w, "transfers", bq->transfers);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    return write_json(&w, dir, "def.json", err);
}

/* bf16/fp8 constants are exchanged as float32 arrays (docs/artifacts.md). */
static int const_to_npy(const tir_tensor_t *t, npy_array_t *a, tpb_err_t *err)
{
    bool widen = isa_dtype_kind(t->dtype) == ISA_DK_F && isa_dtype_size(t->dtype) < 4 &&
                 t->dtype != ISA_DT_FP16;
    if (npy_alloc(a, widen ? ISA_DT_FP32 : t->dtype, t->ndim, t->shape, err))
        return -1;
    uint64_t n = enc_tensor_elems(t);
    const uint8_t *src = t->const_data;
    if (!widen) {
        memcpy(a->data, src, n * isa_dtype_size(t->dtype));
        return 0;
    }
    num_load_f32_array(a->data, src, t->dtype, n);   /* exact widening */
    return 0;
}

int art_write_constants(const tir_kernel_t *k, const char *dir, tpb_err_t *err)
{
    for (int i = 0; i < k->ntensors; i++) {
        const tir_tensor_t *t = &k->tensors[i];
        if (t->kind != TIR_T_CONSTANT)
            continue;
        char name[128], path[4096];
        snprintf(name, sizeof name, "const_%s.npy", t->name);
        for (char *p = name; *p; p++)
            if (*p == '/' || *p == '#')
                *p = '_';
        if (fio_join(path, sizeof path, dir, name, err))
            return -1;
        npy_array_t a;
        memset(&a, 0, sizeof a);
        if (t->const_data) {
            if (const_to_npy(t, &a, err))
                return -1;
        } else if (t->const_path && t->const_path[0]) {
            if (npy_read(t->const_path, &a, err))
                return tpb_err_prefix(err, "constant '%s'", t->name);
            if ((uint64_t)a.count != enc_tensor_elems(t)) {
                npy_free(&a);
                return tpb_errf(err, "constant '%s': %s has %zu elements, the tensor has %llu",
                                t->name, t->const_path, a.count,
                                (unsigned long long)enc_tensor_elems(t));
            }
        } else {
            return tpb_errf(err, "constant '%s' (%s) has neither data nor a file", t->name, t->path);
        }
        uint8_t *buf = NULL;
        size_t len;
        int rc = npy_serialize(&a, &buf, &len, err) ? tpb_err_prefix(err, "%s", path)
                                                    : fio_write_staged(path, buf, len, err);
        free(buf);
        npy_free(&a);
        if (rc)
            return -1;
    }
    return 0;
}

/* One entry of tensor-map.json's "tensors". */
static void tensor_map_entry(jw_t *w, const tir_tensor_t *tt, int i, const tpb_target_t *t,
                             const enc_hbm_layout_t *hbm)
{
    jw_obj_begin(w);
    put_str(w, "name", tt->name);
    put_str(w, "kind", kind_name(tt->kind));
    jw_keyl(w, "shape");
    jw_arr_begin(w);
    for (int d = 0; d < tt->ndim; d++)
        jw_num(w, (double)tt->shape[d]);
    jw_arr_end(w);
    put_str(w, "dtype", isa_dtype_numpy_name(tt->dtype));
    if (tt->print_prefix[0])
        put_str(w, "print_prefix", tt->print_prefix);
    jw_keyl(w, "hbm_addr");
    jw_num(w, (double)hbm->addr[i]);
    jw_keyl(w, "bytes");
    jw_num(w, (double)enc_tensor_bytes(tt));
    if (hbm->live_lo && tt->kind == TIR_T_SCRATCH) {
        /* shared DRAM colouring: the rendezvous epochs it is live in */
        jw_keyl(w, "live_epochs");
        jw_arr_begin(w);
        jw_int(w, hbm->live_lo[i]);
        jw_int(w, hbm->live_hi[i]);
        jw_arr_end(w);
    }
    /* the production map's sbuf_compatible: the tensor fits SBUF as
     * [partitions = dim 0, the rest along the free dim] */
    uint64_t row = tt->ndim > 0 && tt->shape[0] > 0
                       ? enc_tensor_bytes(tt) / (uint64_t)tt->shape[0] : 0;
    bool fits = tt->ndim > 0 && tt->shape[0] <= (int64_t)t->partitions &&
                row <= t->sbuf_partition_bytes;
    jw_member_raw(w, "sbuf_compatible", 15, fits ? "true" : "false", fits ? 4 : 5);
    if (tt->kind == TIR_T_CONSTANT) {
        char f[160];
        snprintf(f, sizeof f, "nc0/sg0/const_%s.npy", tt->name);
        for (char *p = f + 8; *p; p++)
            if (*p == '/' || *p == '#')
                *p = '_';
        put_str(w, "file", f);
    }
    jw_obj_end(w);
}

int enc_write_tensor_map(const tir_kernel_t *k, const tpb_target_t *t,
                         const enc_hbm_layout_t *hbm, const char *dir, tpb_err_t *err)
{
    return enc_write_tensor_maps(k, t, hbm, &dir, 1, err);
}

int enc_write_tensor_maps(const tir_kernel_t *k, const tpb_target_t *t,
                          const enc_hbm_layout_t *hbm, const char *const *dirs, int ndirs,
                          tpb_err_t *err)
{
    jw_t w;
    jw_init(&w);
    jw_obj_begin(&w);
    put_str(&w, "format", "tpbsim-tensor-map");
    jw_kvl_int(&w, "version", 1);
    put_str(&w, "kernel", k->name);
    put_str(&w, "target", t->name);
    jw_kvl_int(&w, "num_cores", k->num_cores > 0 ? k->num_cores : 1);
    jw_keyl(&w, "hbm_bytes");
    jw_num(&w, (double)hbm->total);
    jw_keyl(&w, "tensors");
    jw_arr_begin(&w);
    for (int i = 0; i < k->ntensors; i++) {
        const tir_tensor_t *tt = &k->tensors[i];
        if (tt->kind != TIR_T_SBUF && tt->kind != TIR_T_PSUM)
            tensor_map_entry(&w, tt, i, t, hbm);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    return write_json_to(&w, dirs, ndirs, "tensor-map.json", err);
}

int art_rmtree(const char *path)
{
    return fio_rmtree(path);
}

int art_install_dir(const char *src, const char *dst, tpb_err_t *err)
{
    char old[4300];
    struct stat st;   /* one stat for "exists" and "a directory" */
    bool had = stat(dst, &st) == 0;
    if (had) {
        if (!S_ISDIR(st.st_mode))
            return tpb_errf(err, "%s exists and is not a directory", dst);
        /* one atomic swap: dst is the old tree or the new one at every
         * instant, and the old one, now at src (a temporary of this
         * process: tpb_txn_recover_dir removes it should we be killed),
         * goes */
        if (fio_exchange(src, dst) == 0) {
            fio_rmtree_dir(src);
            return 0;
        }
        /* named only when needed: getpid is a system call */
        snprintf(old, sizeof old, "%s.tpbold.%ld", dst, (long)getpid());
        if (rename(dst, old) != 0)
            return tpb_errf(err, "%s: cannot replace: %s", dst, strerror(errno));
    }
    if (rename(src, dst) != 0) {
        int e = errno;
        if (had)
            rename(old, dst);
        return tpb_errf(err, "%s: cannot create: %s", dst, strerror(e));
    }
    if (had)
        fio_rmtree_dir(old);
    return 0;
}

int art_begin_dir(const char *out_dir, char *norm, size_t nnorm, char *tmp, size_t ntmp,
                  tpb_err_t *err)
{
    tmp[0] = 0;
    /* "out/" and "out" name the same directory; the temporary one must sit
     * beside it, not inside it */
    if (snprintf(norm, nnorm, "%s", out_dir) >= (int)nnorm)
        return tpb_errf(err, "output path too long");
    size_t n = strlen(norm);
    while (n > 1 && norm[n - 1] == '/')
        norm[--n] = 0;
    if (snprintf(tmp, ntmp, "%s.tpbtmp.%ld", norm, (long)getpid()) >= (int)ntmp) {
        tmp[0] = 0;
        return tpb_errf(err, "output path too long");
    }
    /* temporaries of killed compiles beside OUTDIR go (docs/reliability.md) */
    char parent[4096];
    tpb_dirname(norm, parent, sizeof parent);
    tpb_txn_recover_dir(parent);
    art_rmtree(tmp);
    return 0;
}
