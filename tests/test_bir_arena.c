/* The backend's arena (common/arena.h) and what lives in it: instruction
 * names (bir_inst_set_name), accesses (bir_inst_access), ISA bodies
 * (bir_inst_body_new/own), rare parts (bir_inst_rare) and their move to
 * another module when a core's module is cloned and freed (bir_inst_adopt). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "hugepage.h"
#include "bir.h"

/* Records never move while the arena grows: every one still holds what was
 * written into it after 10^4 more allocations (several chunks, one larger
 * than the biggest chunk), each aligned and zeroed when handed out. */
static void test_arena_records_stay(void **state)
{
    (void)state;
    tpb_arena_t a = {0};
    enum { N = 10000 };
    static uint64_t *rec[N];
    for (int i = 0; i < N; i++) {
        size_t n = (size_t)(i % 7 + 1) * sizeof(uint64_t);
        rec[i] = tpb_arena_alloc(&a, n, alignof(uint64_t));
        assert_non_null(rec[i]);
        assert_int_equal((uintptr_t)rec[i] % alignof(uint64_t), 0);
        for (size_t w = 0; w < n / sizeof(uint64_t); w++) {
            assert_int_equal(rec[i][w], 0);
            rec[i][w] = (uint64_t)i * 131 + w;
        }
        if (i == N / 2)
            assert_non_null(tpb_arena_alloc(&a, (size_t)3 << 20, 1));   /* own chunk */
        (void)tpb_arena_alloc(&a, 1, 1);   /* misalign the next one */
    }
    for (int i = 0; i < N; i++)
        for (size_t w = 0; w < (size_t)(i % 7 + 1); w++)
            assert_int_equal(rec[i][w], (uint64_t)i * 131 + w);
    tpb_arena_free(&a);
    assert_null(a.head);
}

/* strdup keeps the exact bytes and length; consecutive copies are packed
 * (no per-string padding beyond the terminator). */
static void test_arena_strdup_exact(void **state)
{
    (void)state;
    tpb_arena_t a = {0};
    const char *x = tpb_arena_strdup(&a, "add.3"), *y = tpb_arena_strdup(&a, "");
    const char *z = tpb_arena_strdup(&a, "wait.mul");
    assert_string_equal(x, "add.3");
    assert_string_equal(y, "");
    assert_string_equal(z, "wait.mul");
    assert_ptr_equal(y, x + 6);
    assert_ptr_equal(z, y + 1);
    /* strndup: the first n bytes and a terminator (the bytes are not
     * cleared first), right after a record filled with other bytes */
    char *dirty = tpb_arena_alloc(&a, 64, 1);
    memset(dirty, 'x', 64);
    const char *w = tpb_arena_strndup(&a, "load.12345", 4);
    assert_ptr_equal(w, dirty + 64);
    assert_string_equal(w, "load");
    const char *v = tpb_arena_strndup(&a, "q", 0);
    assert_ptr_equal(v, w + 5);
    assert_string_equal(v, "");
    /* copy: the bytes as given at the requested alignment, after the
     * 2-byte string above (so padding is needed) */
    const int64_t rec[3] = {-1, 42, INT64_MAX};
    int64_t *c = tpb_arena_copy(&a, rec, sizeof rec, 8);
    assert_non_null(c);
    assert_int_equal((uintptr_t)c % 8, 0);
    assert_true((const char *)c > v + 1);
    assert_memory_equal(c, rec, sizeof rec);
    tpb_arena_free(&a);
}

/* Extending the newest block grows it in place; extending an older one (or
 * one whose chunk is full) copies it, leaving the old block as it was. */
static void test_arena_extend(void **state)
{
    (void)state;
    tpb_arena_t a = {0};
    uint32_t *p = tpb_arena_extend(&a, NULL, 0, 4, 4);
    assert_non_null(p);
    p[0] = 11;
    uint32_t *q = tpb_arena_extend(&a, p, 4, 8, 4);
    assert_ptr_equal(q, p);   /* newest: in place */
    assert_int_equal(q[0], 11);
    assert_int_equal(q[1], 0);
    q[1] = 22;
    uint32_t *other = tpb_arena_alloc(&a, 4, 4);
    assert_non_null(other);
    uint32_t *r = tpb_arena_extend(&a, p, 8, 12, 4);   /* no longer newest */
    assert_ptr_not_equal(r, p);
    assert_int_equal(r[0], 11);
    assert_int_equal(r[1], 22);
    assert_int_equal(r[2], 0);
    r[0] = 99;
    assert_int_equal(p[0], 11);   /* the old block is untouched */
    /* newest again, but its chunk (4 KiB, the first) has no room for 2 MiB:
     * the block moves to a chunk of its own */
    uint32_t *s = tpb_arena_extend(&a, r, 12, (size_t)2 << 20, 4);
    assert_non_null(s);
    assert_ptr_not_equal(s, r);
    assert_int_equal(s[0], 99);
    assert_int_equal(s[3], 0);
    tpb_arena_free(&a);
}

/* Records come zeroed whether their chunk is malloc'ed (cleared per
 * record) or a fresh mapping (not cleared: head_zero).  Every record is
 * filled with ones before the next is taken, so a skipped clear in a
 * reused block would show; the mapped chunks are reached (head_zero set
 * where the platform maps them), and an extend in place zeroes its growth
 * in both kinds of chunk. */
/* tpb_arena_reserve: the first chunk holds the reserved bytes (records
 * come from one chunk, adjacent), zeroed; no effect once a chunk exists. */
static void test_arena_reserve_first_chunk(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {   /* malloc'ed, then a huge-page mapping */
        tpb_arena_t a = {0};
        size_t n = big ? (size_t)3 << 20 : (size_t)100 << 10, rec = 200;
        assert_int_equal(tpb_arena_reserve(&a, n), 0);
        const tpb_arena_chunk_t *head = a.head;
        assert_non_null(head);
        unsigned char *first = tpb_arena_alloc(&a, rec, 8), *p = first;
        for (size_t i = 1; i < n / rec; i++) {
            p = tpb_arena_alloc(&a, rec, 8);
            assert_ptr_equal(p, first + i * rec);   /* no new chunk */
            for (size_t b = 0; b < rec; b += 50)
                assert_int_equal(p[b], 0);
            p[0] = 1;
        }
        assert_ptr_equal(a.head, head);
        assert_int_equal(tpb_arena_reserve(&a, (size_t)64 << 20), 0);
        assert_ptr_equal(a.head, head);   /* not empty: unchanged */
        tpb_arena_free(&a);
    }
    tpb_arena_t a = {0};
    assert_int_equal(tpb_arena_reserve(&a, 100), 0);   /* a few bytes: nothing yet */
    assert_null(a.head);
}

static void test_arena_zero_without_clearing(void **state)
{
    (void)state;
    tpb_arena_t a = {0};
    bool mapped = false;
    size_t total = 0;
    unsigned char *prev = NULL;
    size_t prev_n = 0;
    for (int i = 0; total < (size_t)24 << 20; i++) {
        size_t n = 1 + (size_t)(i * 37 % 3001);
        bool ext = i % 5 == 4 && prev;   /* in place or copied: the old bytes kept */
        unsigned char *p = ext ? tpb_arena_extend(&a, prev, prev_n, prev_n + n, 8)
                               : tpb_arena_alloc(&a, n, i % 2 ? 1 : 8);
        assert_non_null(p);
        size_t from = ext ? prev_n : 0, to = from + n;
        for (size_t b = 0; b < from; b++)
            assert_int_equal(p[b], 0xff);
        for (size_t b = from; b < to; b++)
            if (p[b] != 0)
                fail_msg("record %d: byte %zu of %zu is %u", i, b, to, p[b]);
        memset(p, 0xff, to);
        mapped |= a.head_zero;
        prev = p, prev_n = to;
        total += n;
    }
    assert_int_equal(mapped, tpb_array_fresh_zero(TPB_ARRAY_MAP_MIN));
    tpb_arena_free(&a);
    assert_false(a.head_zero);
}

/* Accesses live in the arena: consecutive ones of one instruction are one
 * block; a copy shares them, and adding one to the copy never changes
 * what the original holds; a full list refuses the ninth. */
static void test_access_sharing(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    assert_null(in.acc);
    bir_access_t r = {.space = ISA_SPACE_SBUF, .p0 = 0, .p1 = 4, .lo = 0, .hi = 16, .write = 0};
    bir_access_t w = {.space = ISA_SPACE_SBUF, .p0 = 0, .p1 = 4, .lo = 64, .hi = 80, .write = 1};
    assert_true(bir_inst_access(&m, &in, &r));
    const bir_access_t *first = in.acc;
    assert_true(bir_inst_access(&m, &in, &w));
    assert_ptr_equal(in.acc, first);   /* grown in place */
    bir_inst_t copy = in;
    bir_access_t x = w;
    x.lo = 128, x.hi = 144;
    assert_true(bir_inst_access(&m, &copy, &x));
    assert_true(bir_inst_access(&m, &in, &r));   /* the original after the copy grew */
    assert_int_equal(copy.nacc, 3);
    assert_int_equal(in.nacc, 3);
    assert_int_equal((uint64_t)copy.acc[2].lo, 128);
    assert_int_equal((uint64_t)in.acc[2].lo, 0);
    assert_int_equal((uint64_t)in.acc[1].lo, 64);
    assert_int_equal((uint64_t)copy.acc[1].lo, 64);
    while (in.nacc < BIR_MAX_ACCESS)
        assert_true(bir_inst_access(&m, &in, &r));
    assert_false(bir_inst_access(&m, &in, &r));
    assert_false(in.oom);   /* full, not out of memory */
    assert_int_equal(in.nacc, BIR_MAX_ACCESS);
    assert_true(bir_block_append(bir_main_block(&m), &in, &err) >= 0);
    bir_module_free(&m);
}

/* Room for accesses is reserved with the name and body (bir_inst_name_body):
 * none for an ISA op until one of its instructions needed some, then as
 * many as the most one has needed.  The accesses go between the name and
 * the body (right before it); a list that outgrows its room moves, keeping every access; a
 * room never survives an adopt into another module; the body stays last
 * (a mode setter grows it in place). */
static void test_access_room(void **state)
{
    (void)state;
    bir_module_t m, m2;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    assert_int_equal(bir_module_init(&m2, 1, 1, &err), 0);
    bir_access_t r = {.space = ISA_SPACE_SBUF, .p0 = 0, .p1 = 4, .lo = 0, .hi = 16, .write = 0};
    bir_access_t w = {.space = ISA_SPACE_SBUF, .p0 = 0, .p1 = 4, .lo = 64, .hi = 80, .write = 1};
    bir_inst_t a;
    bir_inst_init(&a, BIR_ACTIVATION, ISA_OP_ACTIVATION);
    assert_true(bir_inst_name_body(&m, &a, "a", 1));
    assert_int_equal(a.acc_room, 0);   /* nothing learned yet */
    assert_null(a.acc);
    assert_true(bir_inst_access(&m, &a, &r));
    assert_true(bir_inst_access(&m, &a, &w));
    assert_int_equal(m.acc_room[ISA_OP_ACTIVATION], 2);
    assert_int_equal(m.acc_room[ISA_OP_TENSOR_COPY], 0);   /* per ISA op */

    bir_inst_t b;
    bir_inst_init(&b, BIR_ACTIVATION, ISA_OP_ACTIVATION);
    assert_true(bir_inst_name_body(&m, &b, "bb", 2));
    assert_int_equal(b.acc_room, 2);
    assert_non_null(b.acc);
    /* one block: name, room, body (bir_inst_share gives back the body,
     * then the room, as the arena's newest bytes) */
    assert_true(b.name + 3 <= (const char *)b.acc && (const char *)b.acc < b.name + 16);
    assert_ptr_equal((const char *)(b.acc + 2), (const char *)b.isa.f);
    assert_int_equal((uintptr_t)b.acc % _Alignof(bir_access_t), 0);
    assert_string_equal(b.name, "bb");
    const bir_access_t *room = b.acc;
    assert_true(bir_inst_access(&m, &b, &w));
    assert_true(bir_inst_access(&m, &b, &r));
    assert_ptr_equal(b.acc, room);   /* written into the room */
    assert_int_equal((uint64_t)b.acc[0].lo, 64);
    assert_int_equal((uint64_t)b.acc[1].lo, 0);
    isa_body_t *body = b.isa.f;
    bir_inst_set_is_activate2(&m, &b, true);   /* ACT 160 -> ACT2 192 bytes */
    assert_ptr_equal(b.isa.f, body);   /* the body is still last: grown in place */
    assert_ptr_equal(b.acc, room);
    bir_access_t x = w;
    x.lo = 128, x.hi = 144;
    assert_true(bir_inst_access(&m, &b, &x));   /* outgrows the room: moved */
    assert_int_equal(b.nacc, 3);
    assert_true(b.acc != room);
    assert_int_equal(b.acc_room, 0);
    assert_int_equal((uint64_t)b.acc[0].lo, 64);
    assert_int_equal((uint64_t)b.acc[1].lo, 0);
    assert_int_equal((uint64_t)b.acc[2].lo, 128);
    assert_int_equal(m.acc_room[ISA_OP_ACTIVATION], 3);   /* as built, not ACT2 */
    assert_int_equal(m.acc_room[ISA_OP_ACTIVATE2], 0);
    assert_true(bir_inst_access(&m, &b, &r));   /* then extended in place */
    assert_int_equal((uint64_t)b.acc[2].lo, 128);
    assert_int_equal(m.acc_room[ISA_OP_ACTIVATION], 4);

    bir_inst_t c;   /* a room left empty, adopted by another module */
    bir_inst_init(&c, BIR_ACTIVATION, ISA_OP_ACTIVATION);
    assert_true(bir_inst_name_body(&m, &c, "c", 1));
    assert_int_equal(c.acc_room, 4);
    assert_true(bir_inst_adopt(&m2, &c));
    assert_int_equal(c.acc_room, 0);
    assert_int_equal(c.acc_key, 0);
    assert_true(bir_inst_access(&m2, &c, &r));
    assert_int_equal(m2.acc_room[ISA_OP_ACTIVATION], 0);   /* m's counts stay m's */
    assert_true(bir_block_append(bir_main_block(&m), &b, &err) >= 0);
    bir_module_free(&m);
    assert_int_equal((uint64_t)c.acc[0].lo, 0);   /* ASan: not in m's freed arena */
    bir_module_free(&m2);
}

/* tpb_arena_pop gives back only the arena's newest bytes, and the bytes
 * it gives back come out zeroed again. */
static void test_arena_pop(void **state)
{
    (void)state;
    tpb_arena_t a = {0};
    unsigned char *x = tpb_arena_alloc(&a, 16, 8);
    unsigned char *y = tpb_arena_alloc(&a, 24, 8);
    assert_non_null(x);
    assert_non_null(y);
    memset(y, 0xab, 24);
    assert_false(tpb_arena_pop(&a, x, 16));   /* not the newest */
    assert_false(tpb_arena_pop(&a, y, 16));   /* not its end */
    assert_true(tpb_arena_pop(&a, y + 8, 16));
    assert_true(tpb_arena_pop(&a, y, 8));
    unsigned char *z = tpb_arena_alloc(&a, 24, 8);
    assert_ptr_equal(z, y);
    for (int i = 0; i < 24; i++)
        assert_int_equal(z[i], 0);
    tpb_arena_free(&a);
}

/* bir_inst_share: an instruction whose body and accesses equal an earlier
 * one's points at that one's, and its own room and body go back to the
 * arena (the next record starts where its room did); one whose body
 * differs keeps its own (remembered for the next) and still shares equal
 * accesses; bir_inst_body_share replaces a body without changing the
 * instructions that share the old one. */
static void test_share_bodies_and_accesses(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_access_t r = {.space = ISA_SPACE_SBUF, .p0 = 0, .p1 = 4, .lo = 0, .hi = 16, .write = 0};
    bir_inst_t in[4];
    const bir_access_t *room[4];
    for (int i = 0; i < 4; i++) {
        bir_inst_init(&in[i], BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
        assert_true(bir_inst_name_body(&m, &in[i], "n.1", 3));
        room[i] = in[i].acc;
        assert_true(bir_inst_access(&m, &in[i], &r));
        in[i].isa.f->COPY.in.addr = i == 2 ? 128 : 64;
        bir_inst_share(&m, &in[i]);
        if (i == 1) {   /* its room and body given back */
            unsigned char *next = tpb_arena_alloc(&m.arena, 1, 1);
            assert_ptr_equal(next, (const unsigned char *)room[1]);
            assert_int_equal(*next, 0);
        }
    }
    assert_null(room[0]);   /* the first: no room yet (then 1 for the next) */
    assert_non_null(room[1]);
    assert_non_null(in[0].acc);   /* and keeps its own list */
    assert_ptr_equal(in[1].isa.f, in[0].isa.f);
    assert_ptr_equal(in[1].acc, in[0].acc);
    assert_int_equal(in[1].acc_room, 0);   /* a further access extends a copy */
    assert_string_equal(in[1].name, "n.1");   /* the name stays */
    assert_true(in[2].isa.f != in[0].isa.f);   /* another body */
    assert_ptr_equal(in[2].acc, in[0].acc);
    assert_int_equal(in[2].isa.f->COPY.in.addr, 128);
    assert_ptr_equal(in[3].isa.f, in[0].isa.f);
    assert_true(bir_inst_access(&m, &in[1], &r));   /* extends a copy */
    assert_int_equal(in[1].nacc, 2);
    assert_int_equal(in[0].nacc, 1);
    assert_true(in[1].acc != in[0].acc);

    isa_body_t x;
    memcpy(&x, in[1].isa.f, bir_body_size(ISA_OP_TENSOR_COPY));
    x.COPY.in.addr = 128;
    assert_true(bir_inst_body_share(&m, &in[1], &x));   /* equal to in[2]'s */
    assert_ptr_equal(in[1].isa.f, in[2].isa.f);
    x.COPY.in.addr = 256;
    assert_true(bir_inst_body_share(&m, &in[3], &x));   /* new: a copy of x */
    assert_true(in[3].isa.f != &x && in[3].isa.f != in[0].isa.f);
    assert_int_equal(in[3].isa.f->COPY.in.addr, 256);
    assert_int_equal(in[0].isa.f->COPY.in.addr, 64);   /* the sharers unchanged */
    bir_inst_t y;
    bir_inst_init(&y, BIR_TENSOR_COPY, ISA_OP_TENSOR_COPY);
    assert_true(bir_inst_body_share(&m, &y, &x));   /* remembered: in[3]'s */
    assert_ptr_equal(y.isa.f, in[3].isa.f);
    bir_module_free(&m);
}

/* A name is cut to BIR_NAME_LEN - 1 bytes, as the old inline char[64] did. */
static void test_name_cut(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    char longname[200];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    bir_inst_t in;
    bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
    assert_string_equal(in.name, "");
    assert_true(bir_inst_set_name(&m, &in, longname));
    assert_int_equal(strlen(in.name), BIR_NAME_LEN - 1);
    assert_memory_equal(in.name, longname, BIR_NAME_LEN - 1);
    assert_true(bir_inst_set_name(&m, &in, "mul.7"));
    assert_string_equal(in.name, "mul.7");
    bir_module_free(&m);
}

/* An instruction whose arena parts could not be allocated (oom, set by
 * bir_inst_set_name / bir_inst_access / bir_inst_rare) is refused by the
 * append and the insert instead of being stored incomplete. */
static void test_append_refuses_unnamed(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
    in.oom = true;
    assert_true(bir_block_append(bir_main_block(&m), &in, &err) < 0);
    assert_non_null(strstr(err.msg, "out of memory building an instruction"));
    assert_true(bir_block_insert(bir_main_block(&m), 0, &in, &err) < 0);
    assert_int_equal(bir_main_block(&m)->ninsts, 0);
    bir_module_free(&m);
}

/* bir_inst_name_body_tail stores the name and the tail joined (the body
 * after them); an instruction built in its slot (bir_block_next) is
 * committed in place, and refused there too when its arena parts failed. */
static void test_name_tail_in_slot(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_block_t *b = bir_main_block(&m);
    bir_inst_t *in = bir_block_next(b, &err);
    assert_non_null(in);
    bir_inst_init(in, BIR_NOP, ISA_OP_NOP);
    assert_true(bir_inst_name_body_tail(&m, in, "load_abcdef", 4, ".12", 3));
    assert_string_equal(in->name, "load.12");
    assert_int_equal(bir_block_append(b, in, &err), 0);
    assert_ptr_equal(in, &b->insts[0]);   /* in place: no copy */
    in = bir_block_next(b, &err);
    bir_inst_init(in, BIR_NOP, ISA_OP_NOP);
    assert_true(bir_inst_name_body(&m, in, "mul", 3));
    assert_string_equal(in->name, "mul");
    in->oom = true;
    assert_true(bir_block_append(b, in, &err) < 0);
    assert_int_equal(b->ninsts, 1);
    assert_string_equal(b->insts[0].name, "load.12");
    bir_module_free(&m);
}

/* bir_block_reserve: a small reservation is malloc'ed and grows by doubling;
 * one past TPB_ARRAY_MAP_MIN takes its mapping's whole room and grows past
 * it (a move of the mapping); never shrinks; the instructions stay. */
static void test_block_reserve(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    bir_block_t *b = bir_main_block(&m);
    assert_int_equal(bir_block_reserve(b, 10, &err), 0);
    assert_int_equal(b->cap, 10);
    int big = (int)(TPB_ARRAY_MAP_MIN / sizeof(bir_inst_t)) + 1;
    for (int i = 0; i < 3 * big; i++) {
        if (i == 20) {
            assert_int_equal(bir_block_reserve(b, big, &err), 0);
            assert_int_equal((size_t)b->cap,
                             tpb_array_room((size_t)big * sizeof(bir_inst_t)) / sizeof(bir_inst_t));
            assert_int_equal(bir_block_reserve(b, 5, &err), 0);   /* no shrink */
            assert_true(b->cap >= big);
        }
        bir_inst_t in;
        bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
        in.tir_op = i;
        assert_int_equal(bir_block_append(b, &in, &err), i);
    }
    for (int i = 0; i < 3 * big; i++)
        assert_int_equal(b->insts[i].tir_op, i);
    bir_module_free(&m);
}

/* bir_block_reserve with the job's spares: a block one doubling takes past
 * TPB_ARRAY_MAP_MIN (half of it or more) is a spare's pages, whole, with
 * the instructions already there; a smaller one stays malloc'ed and
 * leaves the spare to a later phase. */
static void test_block_reserve_spare(void **state)
{
    (void)state;
    tpb_spare_t spare;
    memset(&spare, 0, sizeof spare);
    char *old = tpb_array_grow(NULL, 0, TPB_ARRAY_MAP_MIN);
    assert_non_null(old);
    memset(old, 1, TPB_ARRAY_MAP_MIN);   /* its pages in memory: kept by the put */
    tpb_spare_put(&spare, old, TPB_ARRAY_MAP_MIN);
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    bir_module_use_spare(&m, &spare);
    bir_block_t *b = bir_main_block(&m);
    assert_int_equal(bir_block_reserve(b, 10, &err), 0);   /* small: the heap */
    assert_int_equal(b->cap, 10);
    for (int i = 0; i < 5; i++) {
        bir_inst_t in;
        bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
        in.tir_op = i;
        assert_int_equal(bir_block_append(b, &in, &err), i);
    }
    int half = (int)(TPB_ARRAY_MAP_MIN / 2 / sizeof(bir_inst_t)) + 1;
    assert_int_equal(bir_block_reserve(b, half, &err), 0);
#ifdef __linux__
    assert_ptr_equal(b->insts, old);   /* the spare's pages, not a heap block */
    assert_int_equal((size_t)b->cap,
                     tpb_array_room(TPB_ARRAY_MAP_MIN) / sizeof(bir_inst_t));
#endif
    assert_true(b->cap >= half);
    for (int i = 0; i < 5; i++)
        assert_int_equal(b->insts[i].tir_op, i);
    for (int i = 5; i < 2 * half; i++) {   /* the doubling a DMA's two instructions make */
        bir_inst_t in;
        bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
        in.tir_op = i;
        assert_int_equal(bir_block_append(b, &in, &err), i);
    }
#ifdef __linux__
    assert_ptr_equal(b->insts, old);   /* grown in its room: no copy */
#endif
    for (int i = 0; i < 2 * half; i++)
        assert_int_equal(b->insts[i].tir_op, i);
    bir_module_free(&m);
    tpb_spare_release(&spare);
}

/* A copy adopted by another module keeps its name after the first module is
 * freed (the multi-core link clones each core's module, then frees it). */
static void test_adopt_outlives_source(void **state)
{
    (void)state;
    bir_module_t a, b;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&a, 0, 1, &err), 0);
    assert_int_equal(bir_module_init(&b, 1, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
    assert_true(bir_inst_set_name(&a, &in, "load.2"));
    bir_access_t acc = {.space = ISA_SPACE_HBM, .p0 = 0, .p1 = 1, .lo = 8, .hi = 24, .write = 1};
    assert_true(bir_inst_access(&a, &in, &acc));
    assert_true(bir_inst_access(&a, &in, &acc));
    bir_inst_t copy = in;
    assert_true(bir_inst_adopt(&b, &copy));
    assert_ptr_not_equal(copy.name, in.name);
    assert_ptr_not_equal(copy.acc, in.acc);
    bir_module_free(&a);   /* ASan: a use after free if copy still borrowed a's arena */
    assert_string_equal(copy.name, "load.2");
    assert_int_equal(copy.nacc, 2);
    assert_int_equal((uint64_t)copy.acc[1].hi, 24);
    assert_int_equal((uint64_t)copy.acc[1].write, 1);
    bir_module_free(&b);
}

/* An instruction without rare parts reads zeros; bir_inst_rare gives it a
 * record of its own, and a second call on a copy makes a fresh one, so
 * writing through it leaves the original's record as it was. */
static void test_rare_copy_on_write(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_DMA_TRIGGER, ISA_OP_DMA_TRIGGER);
    assert_null(in.rare);
    assert_int_equal(bir_rare(&in)->nreplica, 0);
    assert_int_equal(bir_rare(&in)->pred.offset, 0);
    bir_rare_t *r = bir_inst_rare(&m, &in);
    assert_non_null(r);
    assert_ptr_equal(in.rare, r);
    r->nreplica = 2, r->replica[1] = 5, r->red_op = 3;
    bir_inst_t copy = in;
    bir_rare_t *rc = bir_inst_rare(&m, &copy);
    assert_non_null(rc);
    assert_ptr_not_equal(rc, r);
    assert_int_equal(rc->replica[1], 5);   /* the contents come along */
    rc->replica[1] = 7;
    assert_int_equal(bir_rare(&in)->replica[1], 5);
    assert_int_equal(bir_rare(&copy)->replica[1], 7);
    assert_int_equal(bir_rare_none.nreplica, 0);   /* the shared zero record stays zero */
    bir_module_free(&m);
}

/* Adoption moves the rare record too: it survives its source module. */
static void test_adopt_rare(void **state)
{
    (void)state;
    bir_module_t a, b;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&a, 0, 1, &err), 0);
    assert_int_equal(bir_module_init(&b, 1, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_REDUCE, ISA_OP_DMA_TRIGGER);
    bir_rare_t *r = bir_inst_rare(&a, &in);
    assert_non_null(r);
    r->red_kind = BIR_RKIND_ALL_REDUCE, r->red_local = true;
    bir_inst_t copy = in;
    assert_true(bir_inst_adopt(&b, &copy));
    assert_ptr_not_equal(copy.rare, in.rare);
    bir_module_free(&a);
    assert_int_equal(bir_rare(&copy)->red_kind, BIR_RKIND_ALL_REDUCE);
    assert_true(bir_rare(&copy)->red_local);
    bir_inst_t plain;   /* without one: adoption leaves it NULL */
    bir_inst_init(&plain, BIR_NOP, ISA_OP_NOP);
    assert_true(bir_inst_adopt(&b, &plain));
    assert_null(plain.rare);
    bir_module_free(&b);
}

/* A body is exactly its format's struct (DmaTrigger: 20 bytes, not the
 * union's 244); a struct copy shares it, and bir_inst_body_own gives the
 * copy a fresh one first, so writing it leaves the original unchanged. */
static void test_body_copy_before_write(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    assert_int_equal(bir_body_size(ISA_OP_DMA_TRIGGER), sizeof(isa_fmt_DTRIG_t));
    assert_true(bir_body_size(ISA_OP_DMA_TRIGGER) < sizeof(isa_body_t));
    bir_inst_t in;
    bir_inst_init(&in, BIR_DMA_TRIGGER, ISA_OP_DMA_TRIGGER);
    assert_null(in.isa.f);
    assert_int_equal(bir_body(&in)->DTRIG.ndesc, 0);   /* the zero body */
    isa_body_t *f = bir_inst_body_new(&m, &in);
    assert_ptr_equal(in.isa.f, f);
    assert_int_equal(f->DTRIG.ndesc, 0);
    f->DTRIG.ndesc = 3, f->DTRIG.queue = 9;
    assert_true(bir_block_append(bir_main_block(&m), &in, &err) >= 0);
    bir_inst_t copy = bir_main_block(&m)->insts[0];
    assert_ptr_equal(copy.isa.f, f);   /* shared until written */
    isa_body_t *g = bir_inst_body_own(&m, &copy);
    assert_ptr_not_equal(g, f);
    assert_int_equal(g->DTRIG.ndesc, 3);   /* the contents come along */
    g->DTRIG.queue = 4;
    assert_int_equal(bir_main_block(&m)->insts[0].isa.f->DTRIG.queue, 9);
    assert_int_equal(copy.isa.f->DTRIG.queue, 4);
    /* a bodiless instruction (a scheduler's Nop) gets a zero one */
    bir_inst_t nop;
    bir_inst_init(&nop, BIR_NOP, ISA_OP_NOP);
    assert_non_null(bir_inst_body_own(&m, &nop));
    bir_module_free(&m);
}

/* A mode setter that moves the instruction to a larger format grows its
 * body (Activation 160 -> Activate2 192 bytes) keeping what it held. */
static void test_mode_setter_grows_body(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_ACTIVATION, ISA_OP_ACTIVATION);
    bir_inst_body_new(&m, &in)->ACT.out.addr = 77;
    assert_true(bir_body_size(ISA_OP_ACTIVATE2) > bir_body_size(ISA_OP_ACTIVATION));
    bir_inst_set_is_activate2(&m, &in, true);
    assert_int_equal(in.isa.op, ISA_OP_ACTIVATE2);
    in.isa.f->ACT2.imm1 = 2.0f;
    assert_true(in.isa.f->ACT2.imm1 == 2.0f);
    /* the last field of Activate2 lies past Activation's 160 bytes */
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[ISA_OP_ACTIVATE2].format];
    unsigned hi = 0;
    for (unsigned i = 0; i < fi->nfields; i++)
        hi = fi->fields[i].offset > hi ? fi->fields[i].offset : hi;
    assert_true(hi >= bir_body_size(ISA_OP_ACTIVATION));
    uint32_t v = 0x5a5a5a5a;
    memcpy((uint8_t *)in.isa.f + hi, &v, sizeof v);   /* ASan: inside the body */
    assert_int_equal(bir_body_field(&in, &fi->fields[0]), in.isa.f->ACT2.in.addr);
    assert_int_equal(in.isa.f->ACT.out.addr, 77);
    assert_false(in.oom);
    bir_module_free(&m);
}

/* Adoption copies the body into the receiving module: it survives the
 * source module (the multi-core link frees each core's module). */
static void test_adopt_body_outlives_source(void **state)
{
    (void)state;
    bir_module_t a, b;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&a, 0, 1, &err), 0);
    assert_int_equal(bir_module_init(&b, 1, 1, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_DMA_DESC, ISA_OP_DMA_DIRECT2D);
    isa_body_t *f = bir_inst_body_new(&a, &in);
    f->DDESC.src.addr = 0x1234, f->DDESC.qos = 5;
    bir_inst_t copy = in;
    assert_true(bir_inst_adopt(&b, &copy));
    assert_ptr_not_equal(copy.isa.f, f);
    bir_module_free(&a);
    assert_int_equal(copy.isa.f->DDESC.src.addr, 0x1234);
    assert_int_equal(copy.isa.f->DDESC.qos, 5);
    bir_module_free(&b);
}

/* Every op's body round-trips: an instruction with as many fields set as
 * encode (each field given a value of its width, kept when it encodes),
 * stored as a BIR body and expanded again, is the same instruction with
 * the same bundle; every field of the format lies inside the body. */
static void test_every_format_round_trips(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 1, &err), 0);
    int checked = 0;
    for (int op = 0; op < ISA_OP_COUNT; op++) {
        const isa_fmtinfo_t *fi = &isa_formats[isa_ops[op].format];
        for (unsigned i = 0; i < fi->nfields; i++)
            assert_true(fi->fields[i].offset + sizeof(uint32_t) <= bir_body_size((isa_op_t)op));
        isa_inst_t x;
        memset(&x, 0, sizeof x);
        x.op = (isa_op_t)op;
        x.l2 = isa_ops[op].l2;
        x.sync.wait_en = 1, x.sync.wait_sem = 2, x.sync.wait_val = 5;
        uint8_t want[ISA_BUNDLE_BYTES], got[ISA_BUNDLE_BYTES];
        isa_err_t ie;
        if (isa_encode(&x, want, &ie) != ISA_OK)
            continue;   /* not encodable on its own (a prefix's partner, say) */
        for (unsigned i = 0; i < fi->nfields; i++) {
            const isa_field_t *fd = &fi->fields[i];
            uint32_t mask = fd->width >= 32 ? UINT32_MAX : (1u << fd->width) - 1;
            isa_field_set(&x, fd, (uint32_t)(i * 37u + 5u) & mask);
            if (isa_encode(&x, want, &ie) != ISA_OK)
                isa_field_set(&x, fd, 0);
        }
        assert_int_equal(isa_encode(&x, want, &ie), ISA_OK);
        bir_inst_t in;
        bir_inst_init(&in, BIR_NOP, (isa_op_t)op);
        assert_true(bir_isa_set(&m, &in, &x));
        isa_inst_t y;
        bir_isa_expand(&in, &y);
        assert_memory_equal(&x, &y, sizeof x);
        assert_int_equal(isa_encode(&y, got, &ie), ISA_OK);
        assert_memory_equal(want, got, sizeof want);
        checked++;
    }
    assert_true(checked > ISA_OP_COUNT / 2);
    bir_module_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_records_stay),
        cmocka_unit_test(test_arena_strdup_exact),
        cmocka_unit_test(test_arena_extend),
        cmocka_unit_test(test_arena_zero_without_clearing),
        cmocka_unit_test(test_arena_reserve_first_chunk),
        cmocka_unit_test(test_access_sharing),
        cmocka_unit_test(test_access_room),
        cmocka_unit_test(test_arena_pop),
        cmocka_unit_test(test_share_bodies_and_accesses),
        cmocka_unit_test(test_name_cut),
        cmocka_unit_test(test_append_refuses_unnamed),
        cmocka_unit_test(test_name_tail_in_slot),
        cmocka_unit_test(test_block_reserve),
        cmocka_unit_test(test_block_reserve_spare),
        cmocka_unit_test(test_adopt_outlives_source),
        cmocka_unit_test(test_rare_copy_on_write),
        cmocka_unit_test(test_adopt_rare),
        cmocka_unit_test(test_body_copy_before_write),
        cmocka_unit_test(test_mode_setter_grows_body),
        cmocka_unit_test(test_adopt_body_outlives_source),
        cmocka_unit_test(test_every_format_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
