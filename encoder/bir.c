/* bir.c - backend IR containers. */
#include "bir.h"

#include <limits.h>
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

int bir_block_reserve(bir_block_t *b, int n, tpb_err_t *err)
{
    if (n <= b->cap)
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

_Static_assert(ISA_OP_COUNT < 255, "bir_inst_t.acc_key holds 1 + an ISA op");

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
    /* the room first (its alignment is the block's), then the name, then the
     * body: no padding beyond the body's alignment after the name */
    const size_t al = _Alignof(isa_body_t), aa = _Alignof(bir_access_t);
    unsigned room = (unsigned)in->isa.op < ISA_OP_COUNT ? m->acc_room[in->isa.op] : 0;
    size_t name_at = room * sizeof(bir_access_t);
    size_t at = (name_at + n + t + 1 + al - 1) & ~(al - 1);   /* the body's offset */
    char *p = tpb_arena_alloc(&m->arena, at + body_bytes(in->isa.op), room && aa > al ? aa : al);
    if (!p) {
        in->name = "";
        in->oom = true;
        memset(&m->oom_body, 0, sizeof m->oom_body);
        in->isa.f = &m->oom_body;
        return false;
    }
    if (n)   /* (0: an op's first instruction, named by the op's own string) */
        memcpy(p + name_at, s, n);   /* the arena's bytes are zero: the name ends */
    if (t)
        memcpy(p + name_at + n, tail, t);
    in->name = p + name_at;
    in->acc_key = (uint8_t)(in->isa.op + 1);
    if (room) {
        in->acc = (const bir_access_t *)p;
        in->acc_room = (uint8_t)room;
    }
    in->isa.f = (isa_body_t *)(p + at);
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

isa_body_t *bir_inst_body_new(bir_module_t *m, bir_inst_t *in)
{
    return in->isa.f = body_alloc(m, in);
}

isa_body_t *bir_inst_body_own(bir_module_t *m, bir_inst_t *in)
{
    isa_body_t *f = body_alloc(m, in);
    if (f != &m->oom_body)
        memcpy(f, bir_body(in), bir_body_size(in->isa.op));
    return in->isa.f = f;
}

void bir_isa_expand(const bir_inst_t *in, isa_inst_t *out)
{
    memset(out, 0, sizeof *out);
    out->op = in->isa.op;
    out->l2 = in->isa.l2;
    out->sync = in->isa.sync;
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
    in->isa.sync = x->sync;
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
