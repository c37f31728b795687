/* The sidecars' debug entries: the one-reservation writer, compact and
 * in cJSON_Print's layout (art_debug_entries, fast), against the general
 * member writers (the writer of record) on random instruction streams -- names that need
 * escaping, empty and long ones, repeats and changes of src/op/buf, pc
 * gaps, BIR mode flags, INLINE_ASM_BYTES records, ops and compiler-made
 * instructions -- in both layouts, nested in a document as the sidecar's
 * "debug" array is; and the value cache serving a loop's alternating
 * strings. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "back_util.h"
#include "jsonw.h"
#include "xorshift.h"

enum { NOPS = 40, NINST = 3000, NSTR = 12 };

static int below(uint64_t *r, int n)
{
    return (int)(xorshift64(r) % (uint64_t)n);
}

/* A string from a small set (so the value cache hits), shapes included. */
static const char *pick(uint64_t *r, const char *const *set, int n)
{
    return set[below(r, n)];
}

/* Finish two documents, which must be the same bytes, and free them. */
static void finish_same(jw_t *a, jw_t *b)
{
    assert_int_equal(jw_finish(a), 0);
    assert_int_equal(jw_finish(b), 0);
    assert_int_equal(a->b.len, b->b.len);
    assert_memory_equal(a->b.buf, b->b.buf, a->b.len);
    jw_free(a), jw_free(b);
}

/* The entries of insts through both writers; they must agree byte for
 * byte.  Full entries (!compact) go in an indented document, as in a
 * sidecar, where the fast writer writes cJSON_Print's layout; pretty: the
 * compact entry form in an indented document (the fast writer must stand
 * aside).  deep: the "debug" array nested further in arrays (more than 8
 * tabs before a member). */
static void compare(const art_ops_t *ops, const bir_inst_t *insts, const gen_debug_t *dbg, int n,
                    bool compact, bool pretty, int deep)
{
    jw_t a, b;
    jw_init(&a), jw_init(&b);
    if (compact && !pretty)
        jw_set_compact(&a), jw_set_compact(&b);
    jw_obj_begin(&a), jw_obj_begin(&b);
    jw_keyl(&a, "debug"), jw_keyl(&b, "debug");
    for (int d = 0; d <= deep; d++)
        jw_arr_begin(&a), jw_arr_begin(&b);
    art_debug_entries(&a, ops, insts, dbg, n, compact, false);
    art_debug_entries(&b, ops, insts, dbg, n, compact, true);
    for (int d = 0; d <= deep; d++)
        jw_arr_end(&a), jw_arr_end(&b);
    jw_obj_end(&a), jw_obj_end(&b);
    finish_same(&a, &b);
}

static void test_fast_entries_match_general(void **state)
{
    (void)state;
    static char long_s[600], opname[NOPS][24], iname[NINST][40];
    memset(long_s, 'z', sizeof long_s - 1);
    long_s[300] = '"';
    const char *const srcs[NSTR] = {"body[0].body[4]", "body[0].body[8]", "", "a\"b\\c",
                                    "tab\tnl\n", "ctl\x01", long_s, "body[0].body[12]",
                                    "x", "seventeen chars!!", "body[0].body[4].body[5].x", "body[1]"};
    const char *const kinds[5] = {"load", "store", "tensor_scalar", "activation", "sync"};
    const char *const bufs[5] = {"t#0/4", "w#1/4 v#1/4 t#1/4", "a\"#0/2", "u#3/4 t#3/4", ""};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        uint64_t r = seed * 0x9e3779b97f4a7c15ull;
        /* the ops: names, buf strings in a pool, a few inline-asm records */
        jb_t pool;
        assert_int_equal(jb_init_mem(&pool, 256), 0);
        jb_putc(&pool, 0);
        uint32_t off[NOPS];
        const char *names[NOPS];
        const tir_asm_t *inl[NOPS];
        static tir_asm_t rec;
        rec.sync_type = 1, rec.latency_estimate = 17;
        for (int i = 0; i < NOPS; i++) {
            int k = below(&r, 6);
            if (k == 5)
                snprintf(opname[i], sizeof opname[i], "odd\"name_%d", i);
            else
                snprintf(opname[i], sizeof opname[i], "%s_%d", kinds[k], i * 7);
            names[i] = opname[i];
            const char *b = bufs[below(&r, 5)];
            off[i] = b[0] ? (uint32_t)pool.len : 0;
            if (b[0])
                jb_put(&pool, b, strlen(b) + 1);
            inl[i] = below(&r, 15) ? NULL : &rec;
        }
        art_ops_t ops;
        memset(&ops, 0, sizeof ops);
        ops.nops = NOPS;
        ops.name = names;
        ops.inl = seed % 2 ? inl : NULL;
        ops.bt.pool = pool;
        ops.bt.off = seed == 3 ? NULL : off;   /* no tile rotates */
        /* the instructions: runs of an op's instructions, sync ones between */
        static bir_inst_t insts[NINST];
        static gen_debug_t dbg[NINST];
        memset(insts, 0, sizeof insts);
        int op = 0, pc = 0;
        for (int i = 0; i < NINST; i++) {
            bir_inst_t *in = &insts[i];
            if (below(&r, 3) == 0)
                op = below(&r, NOPS + 2) - 1;   /* -1 and NOPS: not an op */
            in->tir_op = op;
            int shape = below(&r, 4);
            if (op >= 0 && op < NOPS && shape == 0)
                snprintf(iname[i], sizeof iname[i], "%s", opname[op]);
            else if (op >= 0 && op < NOPS && shape == 1)
                snprintf(iname[i], sizeof iname[i], "wait.%s.1", opname[op]);
            else
                snprintf(iname[i], sizeof iname[i], "%s.%d", op >= 0 && op < NOPS ? opname[op] : "drain", i % 3);
            in->name = below(&r, 50) ? iname[i] : long_s;
            in->op_kind = below(&r, 6) ? pick(&r, kinds, 5) : NULL;
            in->src = below(&r, 8) ? pick(&r, srcs, NSTR) : NULL;
            in->is_activate2 = below(&r, 20) == 0;
            in->is_stt = below(&r, 20) == 0;
            pc += below(&r, 5) ? 1 : 1 + below(&r, 40);
            dbg[i] = (gen_debug_t){pc, i};
        }
        compare(&ops, insts, dbg, NINST, true, false, 0);
        compare(&ops, insts, dbg, NINST, false, false, 0);
        compare(&ops, insts, dbg, NINST, true, true, 0);
        compare(&ops, insts, dbg, NINST, false, false, 9);
        jb_free(&pool);
    }
}

/* Two strings that alternate (a loop's "op":"load" and "op":"store") are
 * both served from the cache whatever slots their addresses pick: each is
 * met once, copied the second time, then hit; the output stays
 * jw_member_str's.  Among the 1024 candidates some share a set with `a`
 * (a direct-mapped cache missed on every one of those). */
static void test_sidecar_value_cache_alternating(void **state)
{
    (void)state;
    enum { NCAND = 1024, ROUNDS = 8 };
    static char cand[NCAND][8];
    const char *a = "body[0].body[4]";
    for (int j = 0; j < NCAND; j++) {
        snprintf(cand[j], sizeof cand[j], "op%d", j);
        art_jcache_t c;
        assert_int_equal(art_jcache_init(&c), 0);
        jw_t x, y;
        jw_init(&x), jw_init(&y);
        jw_set_compact(&x), jw_set_compact(&y);
        jw_arr_begin(&x), jw_arr_begin(&y);
        for (int r = 0; r < ROUNDS; r++) {
            jw_obj_begin(&x), jw_obj_begin(&y);
            jw_kvl(&x, "src", a), jw_kvl(&x, "op", cand[j]);
            art_member_cached(&y, &c, "src", 3, a);
            art_member_cached(&y, &c, "op", 2, cand[j]);
            jw_obj_end(&x), jw_obj_end(&y);
        }
        jw_arr_end(&x), jw_arr_end(&y);
        finish_same(&x, &y);
        assert_int_equal(c.misses, 4);
        assert_int_equal(c.hits, 2 * ROUNDS - 4);
        art_jcache_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_entries_match_general),
        cmocka_unit_test(test_sidecar_value_cache_alternating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
