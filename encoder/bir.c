/* bir.c - backend IR containers. */
#include "bir.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "hugepage.h"

const char *bir_opcode_name(bir_opcode_t o)
{
    switch (o) {
#define X(id, v, n) case BIR_##id: return n;
        BIR_OPCODES(X)
#undef X
    }
    return "?";
}

const char *bir_rkind_name(int kind)
{
    switch (kind) {
    case BIR_RKIND_ALL_REDUCE: return "all_reduce";
    case BIR_RKIND_REDUCE_SCATTER: return "reduce_scatter";
    default: return "none";
    }
}

int bir_module_init(bir_module_t *m, int core, int ntensors, tpb_err_t *err)
{
    memset(m, 0, sizeof *m);
    m->core = core;
    m->nmlocs = ntensors;   /* before the allocation: bir_module_free frees by it */
    m->ident_tile = -1;
    m->sbuf_fail_op = -1;
    m->funcs = calloc(1, sizeof *m->funcs);
    /* one per tensor, 10^5 in a large kernel: huge pages (hugepage.h) */
    m->mlocs = tpb_array_zalloc((size_t)(ntensors > 0 ? ntensors : 0) * sizeof *m->mlocs);
    if (!m->funcs || !m->mlocs) {
        bir_module_free(m);
        return tpb_errf(err, "out of memory creating the backend module");
    }
    m->nfuncs = 1;
    strcpy(m->funcs[0].name, "main");
    m->funcs[0].blocks = calloc(1, sizeof(bir_block_t));
    if (!m->funcs[0].blocks) {
        bir_module_free(m);
        return tpb_errf(err, "out of memory creating the backend module");
    }
    m->funcs[0].nblocks = 1;
    strcpy(m->funcs[0].blocks[0].name, "entry");
    for (int i = 0; i < ntensors; i++) {
        m->mlocs[i].tensor = i;
        m->mlocs[i].first_use = m->mlocs[i].last_use = -1;
    }
    return 0;
}

void bir_module_use_spare(bir_module_t *m, tpb_spare_t *s)
{
    m->spare = s;
    m->arena.spare = s;
    for (int f = 0; f < m->nfuncs && m->funcs; f++)
        for (int b = 0; b < m->funcs[f].nblocks; b++)
            m->funcs[f].blocks[b].spare = s;
}

void bir_module_free(bir_module_t *m)
{
    for (int f = 0; f < m->nfuncs && m->funcs; f++) {
        for (int b = 0; b < m->funcs[f].nblocks; b++)
            tpb_array_free(m->funcs[f].blocks[b].insts,
                           (size_t)m->funcs[f].blocks[b].cap * sizeof(bir_inst_t));
        free(m->funcs[f].blocks);
    }
    free(m->funcs);
    tpb_array_free(m->mlocs, (size_t)(m->nmlocs > 0 ? m->nmlocs : 0) * sizeof *m->mlocs);
    tpb_array_free(m->op_scratch, (size_t)(m->nops > 0 ? m->nops : 0) * sizeof *m->op_scratch);
    free(m->loops);
    free(m->share);
    tpb_arena_free(&m->arena);
    memset(m, 0, sizeof *m);
}


static int grow(bir_block_t *b, tpb_err_t *err)
{
    if (b->ninsts < b->cap)
        return 0;
    int nc = b->cap ? b->cap * 2 : 256;
    /* 10^5+ instructions: grown without copying, in 2 MiB pages */
    bir_inst_t *p = tpb_spare_grow(b->spare, b->insts, (size_t)b->cap * sizeof *p,
                                   (size_t)nc * sizeof *p);
    if (!p)
        return tpb_errf(err, "out of memory growing block %s", b->name);
    b->insts = p;
    b->cap = nc;
    return 0;
}

/* A block of TPB_ARRAY_MAP_MIN / 2 up to TPB_ARRAY_MAP_MIN bytes, which
 * one doubling takes past TPB_ARRAY_MAP_MIN: a spare's first pages
 * (faulted already, so their room costs nothing) rather than a heap block
 * that an op lowering to two instructions (a DMA's descriptor and
 * trigger: compile-live's 6 000 ops, 12 020 instructions) outgrows and
 * copies into a mapping.  A smaller block stays in the heap (a spare
 * taken for it is one a later phase maps afresh).  false: not such a
 * block, or no spare (the caller reserves as before). */
static bool reserve_from_spare(bir_block_t *b, int n)
{
    size_t elem = sizeof *b->insts, bytes = (size_t)n * elem;
    if (!b->spare || bytes < TPB_ARRAY_MAP_MIN / 2 || bytes >= TPB_ARRAY_MAP_MIN ||
        (size_t)b->cap * elem >= TPB_ARRAY_MAP_MIN)
        return false;
    bir_inst_t *p = tpb_spare_take(b->spare, TPB_ARRAY_MAP_MIN);
    if (!p)
        return false;
    size_t nc = tpb_array_room(TPB_ARRAY_MAP_MIN) / elem;
    if (b->ninsts)
        memcpy(p, b->insts, (size_t)b->ninsts * elem);
    tpb_array_free(b->insts, (size_t)b->cap * elem);
    b->insts = p;
    b->cap = (int)nc;   /* 2 MiB of 96-byte records */
    return true;
}

int bir_block_reserve(bir_block_t *b, int n, tpb_err_t *err)
{
    if (n <= b->cap || reserve_from_spare(b, n))
        return 0;
    /* all the room a mapping has (its last 2 MiB page is faulted whole) */
    size_t nc = tpb_array_room((size_t)n * sizeof *b->insts) / sizeof *b->insts;
    if (nc > INT_MAX / 2)
        nc = (size_t)n;   /* grow's doubling stays in int */
    bir_inst_t *p = tpb_spare_grow(b->spare, b->insts, (size_t)b->cap * sizeof *p, nc * sizeof *p);
    if (!p)
        return tpb_errf(err, "out of memory growing block %s", b->name);
    b->insts = p;
    b->cap = (int)nc;
    return 0;
}

/* An instruction whose arena parts could not be stored (bir_inst_set_name,
 * bir_inst_access, bir_inst_rare ran out of memory) is refused here, where
 * every caller already checks errors. */
static int check_built(const bir_block_t *b, const bir_inst_t *in, tpb_err_t *err)
{
    return in->oom ? tpb_errf(err, "out of memory building an instruction of block %s", b->name)
                   : 0;
}

bir_inst_t *bir_block_next_grow(bir_block_t *b, tpb_err_t *err)
{
    return grow(b, err) ? NULL : &b->insts[b->ninsts];
}

int bir_block_append_grow(bir_block_t *b, const bir_inst_t *in, tpb_err_t *err)
{
    if (check_built(b, in, err) || grow(b, err))
        return -1;
    if (in != &b->insts[b->ninsts])   /* built in place (bir_block_next): no copy */
        b->insts[b->ninsts] = *in;
    return b->ninsts++;
}

int bir_block_insert(bir_block_t *b, int pos, const bir_inst_t *in, tpb_err_t *err)
{
    if (check_built(b, in, err) || grow(b, err))
        return -1;
    memmove(&b->insts[pos + 1], &b->insts[pos], (size_t)(b->ninsts - pos) * sizeof *in);
    b->insts[pos] = *in;
    b->ninsts++;
    return pos;
}

/* A blank instruction but for its opcodes (bir_inst_init): one copy and
 * four stores instead of a clear and a dozen stores, per instruction. */
static const bir_inst_t blank_inst = {
    .engine = ISA_ENG_UNASSIGNED, .queue = -1, .dma_group = -1, .tir_op = -1, .loop = -1,
    .op_kind = "sync", .src = "", .name = "",
};

void bir_inst_init(bir_inst_t *in, bir_opcode_t opc, isa_op_t op)
{
    memcpy(in, &blank_inst, sizeof *in);
    in->opc = opc;
    in->isa.op = op;
    in->isa.l2 = isa_ops[op].l2;
    in->engines = isa_ops[op].engines;
}

bool bir_inst_set_name(bir_module_t *m, bir_inst_t *in, const char *s)
{
    const char *p = tpb_arena_strndup(&m->arena, s, strnlen(s, BIR_NAME_LEN - 1));
    if (!p) {
        in->name = "";
        in->oom = true;
        return false;
    }
    in->name = p;
    return true;
}

_Static_assert(ISA_OP_COUNT < 255, "bir_inst_t.acc_key holds 1 + an ISA op, isa.op an ISA op");
_Static_assert(ISA_ENG_COUNT <= 8, "bir_inst_t.engines: a bit per engine in 8 bits");
_Static_assert(sizeof(bir_sync_t) == 12, "bir_sync_t: the HDR fields in 12 bytes");
/* the scheduler's fields in the first cache line, the whole in 96 bytes */
_Static_assert(offsetof(bir_inst_t, acc) + sizeof(void *) <= 64, "bir_inst_t's hot fields");
_Static_assert(sizeof(bir_inst_t) == 96, "bir_inst_t is 96 bytes");

/* The body bytes of an ISA op (bir_body_size; inline here: once per
 * instruction built). */
static inline size_t body_bytes(isa_op_t op)
{
    /* an op outside the table (isa_encode reports it) has no body */
    return (unsigned)op < ISA_OP_COUNT ? isa_formats[isa_ops[op].format].struct_size : 0;
}

/* The work of bir_inst_name_body(_tail), inlined into each so the body
 * (most lowered instructions) takes no second call and no tail copy. */
static inline bool name_body(bir_module_t *m, bir_inst_t *in, const char *s, size_t n,
                             const char *tail, size_t t)
{
    /* the name first, then the room, then the body: bir_inst_share gives
     * back a shared body and then a shared room, the block's newest bytes
     * in that order; no name bytes for an op's first instruction (named
     * by the op's own string) */
    const size_t al = _Alignof(isa_body_t), aa = _Alignof(bir_access_t);
    unsigned room = (unsigned)in->isa.op < ISA_OP_COUNT ? m->acc_room[in->isa.op] : 0;
    size_t name_n = n + t ? n + t + 1 : 0;
    size_t room_at = room ? (name_n + aa - 1) & ~(aa - 1) : name_n;
    size_t at = (room_at + room * sizeof(bir_access_t) + al - 1) & ~(al - 1);   /* the body's */
    char *p = tpb_arena_alloc(&m->arena, at + body_bytes(in->isa.op), room && aa > al ? aa : al);
    if (!p) {
        in->name = "";
        in->oom = true;
        memset(&m->oom_body, 0, sizeof m->oom_body);
        in->isa.f = &m->oom_body;
        return false;
    }
    if (n)   /* the arena's bytes are zero: the name ends */
        memcpy(p, s, n);
    if (t)
        memcpy(p + n, tail, t);
    in->name = name_n ? p : "";
    in->acc_key = (uint8_t)(in->isa.op + 1);
    if (room) {
        in->acc = (const bir_access_t *)(p + room_at);
        in->acc_room = (uint8_t)room;
    }
    in->isa.f = (isa_body_t *)(p + at);
    in->body_shared = false;
    return true;
}

bool bir_inst_name_body(bir_module_t *m, bir_inst_t *in, const char *s, size_t n)
{
    return name_body(m, in, s, n, "", 0);
}

bool bir_inst_name_body_tail(bir_module_t *m, bir_inst_t *in, const char *s, size_t n,
                             const char *tail, size_t t)
{
    return name_body(m, in, s, n, tail, t);
}

/* bir_inst_share's memory: per ISA op and kind (bodies, access lists) a
 * ring of the last BIR_SHARE_WAYS distinct records, compared byte for
 * byte starting at the slot that followed the last one found the time
 * before -- a loop over a few rotating buffers repeats its bodies in a
 * fixed cycle, so the first comparison is the hit.  A run of
 * BIR_SHARE_MISS_RUN misses in a row (every body new, as when thousands of
 * tiles are each loaded once) rests the ring for BIR_SHARE_REST lookups,
 * doubling while the misses go on (at most BIR_SHARE_REST_MAX; a hit ends
 * it): nothing compared, nothing remembered. */
#define BIR_SHARE_WAYS 8
#define BIR_SHARE_MISS_RUN 32
#define BIR_SHARE_REST 256
#define BIR_SHARE_REST_MAX 16384
typedef struct {
    const void *rec[BIR_SHARE_WAYS];   /* in the module's arena; never written */
    uint32_t len[BIR_SHARE_WAYS];      /* bytes; 0: an empty slot */
    uint8_t succ[BIR_SHARE_WAYS];      /* the slot found after this one the last time */
    uint8_t last;                      /* the slot found (or filled) last */
    uint8_t fill;                      /* the slot the next new record takes */
    uint16_t misses;                   /* lookups missed in a row */
    uint16_t rest;                     /* lookups left to skip */
    uint16_t backoff;                  /* the next rest (doubling while misses go on) */
} share_ring_t;
struct bir_share {
    share_ring_t body[ISA_OP_COUNT], acc[ISA_OP_COUNT];
};

/* Whether the n bytes at x and y are equal (n a multiple of 4): short
 * lists word by word, no call. */
static inline bool same_bytes(const void *x, const void *y, size_t n)
{
    if (n > 32)
        return memcmp(x, y, n) == 0;
    const unsigned char *p = x, *q = y;
    uint64_t d = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t u, v;
        memcpy(&u, p + i, 8);
        memcpy(&v, q + i, 8);
        d |= u ^ v;
    }
    if (i < n) {
        uint32_t u, v;
        memcpy(&u, p + i, 4);
        memcpy(&v, q + i, 4);
        d |= u ^ v;
    }
    return d == 0;
}

/* Slot w found: the cycle learnt (w follows the last one found). */
static inline const void *share_found(share_ring_t *r, unsigned w)
{
    r->succ[r->last] = (uint8_t)w;
    r->last = (uint8_t)w;
    r->misses = 0;
    r->backoff = 0;
    return r->rec[w];
}

/* share_lookup past its first comparison (slot `tried`): the others. */
static const void *share_search(share_ring_t *r, const void *p, size_t n, unsigned tried,
                                bool *keep)
{
    for (unsigned w = 0; w < BIR_SHARE_WAYS; w++)
        if (w != tried && r->len[w] == n && same_bytes(r->rec[w], p, n))
            return share_found(r, w);
    if (++r->misses >= BIR_SHARE_MISS_RUN) {
        r->misses = 0;
        r->rest = r->backoff ? r->backoff : BIR_SHARE_REST;
        r->backoff = r->rest < BIR_SHARE_REST_MAX ? (uint16_t)(2 * r->rest) : r->rest;
    }
    *keep = true;
    return NULL;
}

/* The remembered record equal to the n bytes at p (n > 0); NULL when none
 * (then *keep: whether to remember p, false while the ring rests).  The
 * slot that followed the last one found first, inline: in a loop's cycle
 * it is the hit. */
static inline __attribute__((always_inline)) const void *
share_lookup(share_ring_t *r, const void *p, size_t n, bool *keep)
{
    *keep = false;
    if (r->rest) {
        r->rest--;
        return NULL;
    }
    unsigned w = r->succ[r->last];
    if (r->len[w] == n && same_bytes(r->rec[w], p, n))
        return share_found(r, w);
    return share_search(r, p, n, w, keep);
}

static void share_remember(share_ring_t *r, const void *rec, size_t n)
{
    unsigned w = r->fill;
    r->rec[w] = rec;
    r->len[w] = (uint32_t)n;
    r->fill = (uint8_t)((w + 1) % BIR_SHARE_WAYS);
    r->succ[r->last] = (uint8_t)w;
    r->last = (uint8_t)w;
}

static struct bir_share *share_of(bir_module_t *m)
{
    if (!m->share)
        m->share = calloc(1, sizeof *m->share);   /* NULL: nothing is shared */
    return m->share;
}

void bir_inst_share(bir_module_t *m, bir_inst_t *in)
{
    struct bir_share *sh;
    unsigned op = in->isa.op;
    if (in->oom || op >= ISA_OP_COUNT || !(sh = share_of(m)))
        return;
    bool keep = false;
    isa_body_t *f = in->isa.f;
    size_t bs = f ? body_bytes(op) : 0;
    const void *fq = NULL, *aq = NULL;
    if (bs && !(fq = share_lookup(&sh->body[op], f, bs, &keep)) && keep)
        share_remember(&sh->body[op], f, bs);
    in->body_shared = fq || keep;
    const bir_access_t *a = in->acc;
    size_t as = (size_t)in->nacc * sizeof *a;
    if (as && !(aq = share_lookup(&sh->acc[op], a, as, &keep)) && keep)
        share_remember(&sh->acc[op], a, as);
    /* give back what is replaced, newest first: a list grown past its room
     * (a block of its own after the body), the body, the room before it;
     * each only while it is the arena's newest bytes */
    size_t room = (size_t)in->acc_room * sizeof *a;
    if (aq && aq != a) {
        in->acc = aq;
        in->acc_room = 0;   /* the next access extends a copy */
        if (!room)
            tpb_arena_pop(&m->arena, a, as);
    }
    if (fq && fq != f) {
        in->isa.f = (isa_body_t *)fq;
        tpb_arena_pop(&m->arena, f, bs);
    }
    if (aq && aq != a && room)
        tpb_arena_pop(&m->arena, a, room);
}

const bir_rare_t bir_rare_none;
const isa_body_t bir_body_none;

bir_rare_t *bir_inst_rare(bir_module_t *m, bir_inst_t *in)
{
    bir_rare_t *r = tpb_arena_alloc(&m->arena, sizeof *r, _Alignof(bir_rare_t));
    if (!r) {
        in->oom = true;
        return NULL;
    }
    *r = *bir_rare(in);
    in->rare = r;
    return r;
}

bool bir_inst_adopt(bir_module_t *m, bir_inst_t *in)
{
    in->acc_room = 0;   /* a room is the other module's, */
    in->acc_key = 0;    /* so are its counts */
    if (in->nacc > 0) {
        const bir_access_t *a = in->acc;
        in->acc = NULL;
        int n = in->nacc;
        in->nacc = 0;
        for (int i = 0; i < n; i++)
            bir_inst_access(m, in, &a[i]);
    }
    if (in->isa.f)
        bir_inst_body_own(m, in);
    return bir_inst_set_name(m, in, in->name) && (!in->rare || bir_inst_rare(m, in)) && !in->oom;
}

size_t bir_body_size(isa_op_t op) { return body_bytes(op); }

static isa_body_t *body_alloc(bir_module_t *m, bir_inst_t *in)
{
    isa_body_t *f = tpb_arena_alloc(&m->arena, body_bytes(in->isa.op), _Alignof(isa_body_t));
    if (!f) {
        in->oom = true;
        memset(&m->oom_body, 0, sizeof m->oom_body);
        f = &m->oom_body;
    }
    return f;
}

bool bir_inst_body_share(bir_module_t *m, bir_inst_t *in, const isa_body_t *x)
{
    unsigned op = in->isa.op;
    size_t bs = body_bytes(op);
    struct bir_share *sh = op < ISA_OP_COUNT && bs ? share_of(m) : NULL;
    bool keep = false;
    const void *q = sh ? share_lookup(&sh->body[op], x, bs, &keep) : NULL;
    in->body_shared = q || keep;
    if (q) {
        in->isa.f = (isa_body_t *)q;
        return true;
    }
    isa_body_t *f = body_alloc(m, in);
    if (f == &m->oom_body) {
        in->isa.f = f;
        return false;
    }
    memcpy(f, x, bs);
    in->isa.f = f;
    if (keep)
        share_remember(&sh->body[op], f, bs);
    return true;
}

isa_body_t *bir_inst_body_new(bir_module_t *m, bir_inst_t *in)
{
    in->body_shared = false;
    return in->isa.f = body_alloc(m, in);
}

isa_body_t *bir_inst_body_own(bir_module_t *m, bir_inst_t *in)
{
    isa_body_t *f = body_alloc(m, in);
    if (f != &m->oom_body)
        memcpy(f, bir_body(in), bir_body_size(in->isa.op));
    in->body_shared = false;
    return in->isa.f = f;
}

void bir_isa_expand(const bir_inst_t *in, isa_inst_t *out)
{
    memset(out, 0, sizeof *out);
    out->op = in->isa.op;
    out->l2 = in->isa.l2;
    bir_sync_expand(&in->isa.sync, &out->sync);
    memcpy(&out->f, bir_body(in), bir_body_size(in->isa.op));
}

uint32_t bir_body_field(const bir_inst_t *in, const isa_field_t *fd)
{
    uint32_t v;
    memcpy(&v, (const uint8_t *)bir_body(in) + fd->offset, sizeof v);
    return v;
}

bool bir_isa_set(bir_module_t *m, bir_inst_t *in, const isa_inst_t *x)
{
    in->isa.op = x->op;
    in->isa.l2 = x->l2;
    bir_sync_pack(&x->sync, &in->isa.sync);
    isa_body_t *f = bir_inst_body_new(m, in);
    if (in->oom)
        return false;
    memcpy(f, &x->f, bir_body_size(x->op));
    return true;
}

isa_op_t bir_codegen_isa_op(const bir_inst_t *in)
{
    switch (in->opc) {
    case BIR_ACTIVATION:
        return in->is_activate2 ? ISA_OP_ACTIVATE2 : ISA_OP_ACTIVATION;
    case BIR_TENSOR_SCALAR_PTR:
        return in->is_stt ? ISA_OP_SCALAR_TENSOR_TENSOR : ISA_OP_TENSOR_SCALAR_PTR;
    default:
        return in->isa.op;
    }
}

static void set_codegen_op(bir_inst_t *in)
{
    isa_op_t op = bir_codegen_isa_op(in);
    in->isa.op = op;
    in->isa.l2 = isa_ops[op].l2;
    in->engines = isa_ops[op].engines;
}

/* The mode flag changed the ISA op: a format with a larger body (ACT 160 ->
 * ACT2 192 bytes, TS 156 -> STT 192) grows the body; a smaller one keeps it. */
static void set_mode_op(bir_module_t *m, bir_inst_t *in)
{
    size_t old = bir_body_size(in->isa.op);
    set_codegen_op(in);
    size_t now = bir_body_size(in->isa.op);
    if (!in->isa.f || now <= old)
        return;
    isa_body_t *f = tpb_arena_extend(&m->arena, in->isa.f, old, now, _Alignof(isa_body_t));
    if (!f) {
        in->oom = true;
        memset(&m->oom_body, 0, sizeof m->oom_body);
        f = &m->oom_body;
    }
    in->isa.f = f;
}

void bir_inst_set_is_activate2(bir_module_t *m, bir_inst_t *in, bool on)
{
    in->is_activate2 = on;
    set_mode_op(m, in);
}

void bir_inst_set_is_stt(bir_module_t *m, bir_inst_t *in, bool on)
{
    in->is_stt = on;
    set_mode_op(m, in);
}

unsigned bir_dge_compute_wire(bir_dge_compute_t v)
{
    return v == BIR_DGE_COMPUTE_ADD ? ISA_DMAOP_ADD : ISA_DMAOP_BYPASS;
}

void bir_inst_set_dge_compute(bir_inst_t *in, bir_dge_compute_t v)
{
    in->dge_compute = (uint8_t)v;
    if (isa_op_is_direct_dma(in->isa.op))   /* D3DESC shares DDESC's fields */
        in->isa.f->DDESC.compute = bir_dge_compute_wire(v);
    else if (in->isa.op == ISA_OP_DMA_INDIRECT2D)
        in->isa.f->DIND.compute = bir_dge_compute_wire(v);
}

bool bir_inst_access_grow(bir_module_t *m, bir_inst_t *in, const bir_access_t *a)
{
    if (in->nacc >= BIR_MAX_ACCESS)
        return false;
    /* consecutive accesses of one instruction extend its block in place
     * (a room is not at the arena's end: its list is copied once) */
    bir_access_t *v = tpb_arena_extend(&m->arena, (void *)in->acc, (size_t)in->nacc * sizeof *v,
                                       (size_t)(in->nacc + 1) * sizeof *v, _Alignof(bir_access_t));
    if (!v) {
        in->oom = true;
        return false;
    }
    v[in->nacc++] = *a;
    in->acc = v;
    in->acc_room = 0;
    if (in->acc_key && m->acc_room[in->acc_key - 1] < in->nacc)
        m->acc_room[in->acc_key - 1] = (uint8_t)in->nacc;   /* the next ones reserve this many */
    return true;
}

bool bir_access_overlap(const bir_access_t *a, const bir_access_t *b)
{
    if (a->space != b->space)
        return false;
    if (a->p1 <= b->p0 || b->p1 <= a->p0)
        return false;
    return a->lo < b->hi && b->lo < a->hi;
}
