/* The synchronise pass's overlap test through the table of answers per
 * pair of access sets (encoder/sched_conflict.c): every answer is the
 * plain test's, the table answers repeated pairs, and it steps aside when
 * pairs do not repeat. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sched_conflict.h"

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

#define NINST 6000

typedef struct {
    bir_inst_t *insts;
    bir_access_t (*acc)[3];
    uint16_t *ids;   /* per instruction, 0: not known yet (as the pass keeps them) */
} block_t;

/* Instruction i: 1-3 accesses drawn from `kinds` shapes (few kinds:
 * sets repeat; NINST kinds: almost every set is new). */
static void make_block(block_t *b, uint32_t seed, uint32_t kinds)
{
    b->insts = calloc(NINST, sizeof *b->insts);
    b->acc = calloc(NINST, sizeof *b->acc);
    b->ids = calloc(NINST, sizeof *b->ids);
    assert_non_null(b->insts);
    assert_non_null(b->acc);
    assert_non_null(b->ids);
    uint32_t st = seed;
    for (int i = 0; i < NINST; i++) {
        bir_inst_t *in = &b->insts[i];
        uint32_t kind = lcg(&st) % kinds;
        in->nacc = 1 + (int)(kind % 3);
        for (int a = 0; a < in->nacc; a++) {
            uint32_t r = kind * 7 + (uint32_t)a * 3;
            bir_access_t *x = &b->acc[i][a];
            memset(x, 0, sizeof *x);
            x->write = a == 0;
            x->space = r % 5 == 0 ? ISA_SPACE_HBM : ISA_SPACE_SBUF;
            x->p0 = x->space == ISA_SPACE_HBM ? 0 : r % 64;
            x->p1 = x->space == ISA_SPACE_HBM ? 1 : x->p0 + 1 + r % 64;
            x->lo = (uint64_t)(r % 97) * 64;
            x->hi = x->lo + 64 + (uint64_t)(r % 5) * 64;
        }
        in->acc = b->acc[i];
    }
}

static void free_block(block_t *b)
{
    free(b->insts);
    free(b->acc);
    free(b->ids);
}

/* Random pairs (an instruction against an earlier one), as the pass asks
 * them: the table's answer is the plain test's every time. */
static void run_pairs(sconf_t *c, block_t *b, uint32_t seed, int n)
{
    uint32_t st = seed;
    for (int t = 0; t < n; t++) {
        int i = 1 + (int)(lcg(&st) % (NINST - 1)), j = (int)(lcg(&st) % (uint32_t)i);
        accs_t x;
        sconf_load(c, &x, b->insts, i);
        bool want = sconf_overlap(&x, &b->insts[j]);
        assert_int_equal(sconf_test(c, &x, b->insts, j, &b->ids[j]), want);
        if (b->ids[j] && b->ids[j] == x.id)   /* an id stands for one set */
            assert_true(b->insts[i].nacc == b->insts[j].nacc &&
                        !memcmp(b->insts[i].acc, b->insts[j].acc,
                                (size_t)b->insts[i].nacc * sizeof *b->insts[i].acc));
    }
}

static void test_conflict_table_matches_overlap(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 4; seed++) {
        block_t b;
        make_block(&b, seed, 40);
        sconf_t *c = sconf_new(NINST);
        assert_non_null(c);
        run_pairs(c, &b, seed * 77, 60000);
        /* 40 sets: most pairs are answered from the table */
        assert_true(c->from_table > 30000);
        assert_true(c->off_until == 0);
        free(c);
        free_block(&b);
    }
}

static void test_conflict_table_steps_aside(void **state)
{
    (void)state;
    block_t b;
    make_block(&b, 9, NINST);
    sconf_t *c = sconf_new(NINST);
    assert_non_null(c);
    run_pairs(c, &b, 99, 60000);
    assert_true(c->off_until > 0);   /* pairs do not repeat: the plain test */
    assert_true(c->from_table < 6000);
    free(c);
    free_block(&b);
}

/* Tables sized for a small block (16 set slots, 32 answer slots) used on
 * far more sets than that: sets and pairs evict each other, and every
 * answer is still the plain test's. */
static void test_conflict_small_tables(void **state)
{
    (void)state;
    block_t b;
    make_block(&b, 5, 40);
    sconf_t *c = sconf_new(4);
    assert_non_null(c);
    assert_int_equal(c->set_mask, 15);
    assert_int_equal(c->pair_mask, 31);
    run_pairs(c, &b, 55, 20000);
    free(c);
    free_block(&b);
}

/* 16-bit ids: once SCONF_MAX_ID sets have ids, no more are handed out
 * (the test takes the plain way) until sconf_reset, after which ids start
 * again at 1 and no answer of the old ids is left. */
static void test_conflict_ids_run_out(void **state)
{
    (void)state;
    int n = (int)SCONF_MAX_ID + 10;
    bir_inst_t *insts = calloc((size_t)n, sizeof *insts);
    bir_access_t *acc = calloc((size_t)n, sizeof *acc);
    sconf_t *c = sconf_new(n);
    assert_non_null(insts);
    assert_non_null(acc);
    assert_non_null(c);
    for (int i = 0; i < n; i++) {   /* every set its own */
        acc[i].space = ISA_SPACE_SBUF, acc[i].p0 = 0, acc[i].p1 = 1;
        acc[i].lo = (uint64_t)i * 4, acc[i].hi = acc[i].lo + 4, acc[i].write = 1;
        insts[i].nacc = 1, insts[i].acc = &acc[i];
    }
    uint32_t last = 0;
    for (int i = 0; i < n; i++) {
        uint32_t id = sconf_id(c, insts, i);
        assert_int_equal(id, i < (int)SCONF_MAX_ID ? (uint32_t)i + 1 : 0);
        last = id ? id : last;
    }
    assert_int_equal(last, SCONF_MAX_ID);
    accs_t x;
    sconf_load(c, &x, insts, 1);
    assert_int_equal(x.id, 0);   /* none left: the plain test */
    uint16_t idb = 0;
    assert_false(sconf_test(c, &x, insts, 0, &idb));
    sconf_reset(c);
    sconf_load(c, &x, insts, n - 1);
    assert_int_equal(x.id, 1);
    assert_int_equal(sconf_id(c, insts, 0), 2);   /* set 0 is new again */
    idb = 0;
    assert_true(sconf_test(c, &x, insts, n - 1, &idb));   /* a write against itself */
    assert_int_equal(idb, 1);
    free(insts);
    free(acc);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conflict_table_matches_overlap),
        cmocka_unit_test(test_conflict_table_steps_aside),
        cmocka_unit_test(test_conflict_small_tables),
        cmocka_unit_test(test_conflict_ids_run_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
