/* The linker's name index (encoder/lnc_names.c) against lnc_find_mloc, the
 * linear walk it replaces: random names with repeats (the first location
 * of a name answers), synced in batches across every growth of the table,
 * names never added; and a two-core link with thousands of tiles per core
 * (the shape that made the walk quadratic) unifying what it did before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lnc.h"

static void add_named(lnc_module_t *m, const char *name, int tensor, lnc_mkind_t kind)
{
    lnc_mloc_t ml;
    memset(&ml, 0, sizeof ml);
    snprintf(ml.name, sizeof ml.name, "%s", name);
    ml.tensor = tensor;
    ml.kind = ml.kkind = kind;
    ml.space = kind == LNC_ML_LOCAL ? ISA_SPACE_SBUF : ISA_SPACE_HBM;
    ml.external = kind != LNC_ML_LOCAL;
    ml.bytes = kind == LNC_ML_LOCAL ? 0 : 1024;
    ml.remote_core = -1;
    assert_true(lnc_add_mloc(m, &ml, NULL) >= 0);
}

/* Every name of the pool (and some never added) answers as the walk does
 * over the indexed locations. */
static void check_against_walk(const lnc_names_t *x, const lnc_module_t *m, int pool)
{
    for (int k = 0; k < pool + 50; k++) {
        char name[32];
        snprintf(name, sizeof name, k < pool ? "t_%d" : "absent_%d", k);
        assert_int_equal(lnc_names_find(x, m, name), lnc_find_mloc(m, name));
    }
}

static void test_names_oracle(void **state)
{
    (void)state;
    srand(16);
    const int pool = 2500;
    lnc_module_t m;
    lnc_module_init(&m, "k", 0);
    lnc_names_t x = {0};
    assert_int_equal(lnc_names_find(&x, &m, "t_0"), -1);   /* zero-initialised: empty */
    assert_int_equal(lnc_names_sync(&x, &m, NULL), 0);
    check_against_walk(&x, &m, pool);
    int batches = 0;
    while (m.nmlocs < 6000) {
        int n = 1 + rand() % (batches % 4 == 0 ? 900 : 40);
        for (int i = 0; i < n; i++) {
            char name[32];
            snprintf(name, sizeof name, "t_%d", rand() % pool);   /* repeats: the first wins */
            add_named(&m, name, m.nmlocs, LNC_ML_LOCAL);
        }
        assert_int_equal(lnc_names_sync(&x, &m, NULL), 0);
        assert_int_equal(x.n, m.nmlocs);
        assert_true(x.cap >= 2u * (uint32_t)m.nmlocs);   /* load factor at most 1/2 */
        check_against_walk(&x, &m, pool);
        batches++;
    }
    assert_true(batches > 10);
    lnc_names_free(&x);
    assert_null(x.slot);
    lnc_module_free(&m);
}

/* Two cores of many tiles each, a shared input and output: the linked
 * module has every core's tiles under their own names once, and one
 * location for each shared buffer. */
static void test_link_many_tiles(void **state)
{
    (void)state;
    enum { TILES = 4000 };
    lnc_module_t c[2], l;
    for (int i = 0; i < 2; i++) {
        lnc_module_init(&c[i], "k", i);
        c[i].ncores = 2;
        assert_int_equal(lnc_add_func(&c[i], "main", i, NULL), 0);
        lnc_block_t *b = lnc_func_block(&c[i], 0, ISA_ENG_SP, "sp", NULL);
        assert_non_null(b);
        lnc_inst_t in;
        lnc_inst_init(&in, LNC_OPC_ISA, "nop");
        in.engine = ISA_ENG_SP;
        in.isa.op = ISA_OP_NOP;
        in.isa.l2 = isa_ops[ISA_OP_NOP].l2;
        assert_true(lnc_block_append(b, &in, NULL) >= 0);
        add_named(&c[i], "a", 0, LNC_ML_INPUT);
        add_named(&c[i], "out", 1, LNC_ML_OUTPUT);
        for (int t = 0; t < TILES; t++) {
            char name[32];
            snprintf(name, sizeof name, "nc%d.t_%d", i, t);
            add_named(&c[i], name, 2 + t, LNC_ML_LOCAL);
        }
    }
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_int_equal(l.nmlocs, 2 + 2 * TILES);
    int a = lnc_find_mloc(&l, "a"), out = lnc_find_mloc(&l, "out");
    assert_int_equal(a, 0);
    assert_int_equal(out, 1);
    assert_int_equal(l.mlocs[out].kind, LNC_ML_OUTPUT);
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < TILES; t += 97) {
            char name[32];
            snprintf(name, sizeof name, "nc%d.t_%d", i, t);
            int u = lnc_find_mloc(&l, name);
            assert_int_equal(u, 2 + i * TILES + t);
            assert_int_equal(l.mlocs[u].tensor, 2 + t);
        }
    lnc_module_free(&l);
    for (int i = 0; i < 2; i++)
        lnc_module_free(&c[i]);
}

/* A tile name on both cores still collides (the index finds the first
 * core's location as the walk did). */
static void test_link_collision_found(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    for (int i = 0; i < 2; i++) {
        lnc_module_init(&c[i], "k", i);
        c[i].ncores = 2;
        assert_int_equal(lnc_add_func(&c[i], "main", i, NULL), 0);
        for (int t = 0; t < 300; t++) {
            char name[32];
            snprintf(name, sizeof name, "nc%d.t_%d", i, t);
            add_named(&c[i], name, t, LNC_ML_LOCAL);
        }
    }
    add_named(&c[1], "nc0.t_250", 999, LNC_ML_LOCAL);
    tpb_err_t err = {{0}};
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_non_null(strstr(err.msg, "Name collision for Input 'nc0.t_250' in subgraph nc1"));
    for (int i = 0; i < 2; i++)
        lnc_module_free(&c[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_oracle),
        cmocka_unit_test(test_link_many_tiles),
        cmocka_unit_test(test_link_collision_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
