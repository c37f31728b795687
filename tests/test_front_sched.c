/* test_front_sched.c - scheduling hints of a kernel file (seed 004
 * `schedule`; NKI with_schedule / no_reorder; docs/kernel-format.md
 * "Scheduling"): the program order they force, the semaphore waits they
 * add, and their errors. */
#include "front_json_util.h"

#include "back_util.h"

/* a kernel with the tiles x, a, b, c (128 x 64 fp32), the body, and an
 * optional top-level "schedule" (' for ") */
static int parse_sched(const char *body, const char *schedule, tir_kernel_t *k, tpb_err_t *e)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{'inputs': [{'name': 'in', 'shape': [128, 64], 'dtype': 'float32'}],"
             " 'outputs': [{'name': 'out', 'shape': [128, 64], 'dtype': 'float32'}],"
             "%s%s%s 'body': [" T("x", "[128, 64]", "float32") T("a", "[128, 64]", "float32")
             T("b", "[128, 64]", "float32") T("c", "[128, 64]", "float32")
             "{'op': 'load', 'dst': 'x', 'src': 'in', 'name': 'ld'}, %s]}",
             schedule ? " 'schedule': " : "", schedule ? schedule : "", schedule ? "," : "", body);
    char *j = dq(buf);
    enc_front_opts_t o = {NULL, 0, 0, NULL};
    memset(e, 0, sizeof *e);
    int rc = parse_opts(j, &o, k, e);
    free(j);
    return rc;
}

static int op_index(const tir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->nops; i++)
        if (!strcmp(k->ops[i].name, name))
            return i;
    return -1;
}

/* the lowered instruction of op `name` */
static const bir_inst_t *inst_of(bu_run_t *r, const tir_kernel_t *k, const char *name)
{
    int i = op_index(k, name);
    bir_block_t *b = bu_block(r);
    for (int n = 0; n < b->ninsts; n++)
        if (b->insts[n].tir_op == i && b->insts[n].isa.op != ISA_OP_NOP)
            return &b->insts[n];
    return NULL;
}

static int inst_pos(bu_run_t *r, const tir_kernel_t *k, const char *name)
{
    const bir_inst_t *in = inst_of(r, k, name);
    return in ? (int)(in - bu_block(r)->insts) : -1;
}

/* does the instruction (or a Nop right before it on its engine) wait on sem? */
static bool waits_on(bu_run_t *r, const bir_inst_t *in, int sem)
{
    const bir_inst_t *first = bu_block(r)->insts;
    for (const bir_inst_t *p = in; p >= first; p--) {
        if (p != in && (p->engine != in->engine || p->isa.op != ISA_OP_NOP))
            break;
        if (p->isa.sync.wait_en && (int)p->isa.sync.wait_sem == sem)
            return true;
    }
    return false;
}

#define PLUS1 "{'op': 'tensor_scalar', 'dst': 'b', 'src': 'x', 'op0': 'add', 'operand0': 1, " \
              "'engine': 'dve', 'name': 'plus1'%s}"
#define RECIP "{'op': 'tensor_scalar', 'dst': 'a', 'src': 'x', 'op0': 'reciprocal', " \
              "'engine': '%s', 'name': 'recip'}"

/* NKI's example: "plus1" depends on "recip".  In program order plus1
 * comes first; the edge moves it after recip (same engine: only the order
 * changes; no memory links them, so without the edge plus1 stays first). */
static void test_edge_reorders(void **state)
{
    (void)state;
    for (int form = 0; form < 3; form++) {
        char body[1024];
        snprintf(body, sizeof body, PLUS1 "," RECIP ",{'op': 'tensor_tensor', 'dst': 'c', 'in0': 'a', "
                 "'in1': 'b', 'operator': 'add'},{'op': 'store', 'dst': 'out', 'src': 'c'}",
                 form == 2 ? ", 'schedule': ['recip']" : "", "pool");
        const char *pairs = form == 0 ? NULL : form == 1 ? "[['plus1', 'recip']]" : NULL;
        tir_kernel_t k;
        tpb_err_t e;
        if (parse_sched(body, form == 1 ? pairs : NULL, &k, &e))
            fail_msg("%s", e.msg);
        int p = op_index(&k, "plus1"), q = op_index(&k, "recip");
        if (form == 0) {
            assert_true(p < q);
            assert_int_equal(k.ops[p].rare->ndeps, 0);
        } else {
            assert_true(q < p);
            assert_int_equal(k.ops[p].rare->ndeps, 1);
            assert_int_equal(k.ops[p].rare->deps[0], q);
        }
        /* the lowered program: plus1 (DVE) waits for recip (Pool) only with the edge */
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
        const bir_inst_t *ip = inst_of(&r, &k, "plus1");
        assert_non_null(ip);
        assert_int_equal(waits_on(&r, ip, sched_engine_sem(ISA_ENG_POOL)), form != 0);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* Same engine: the engine's instruction stream order is the forced order. */
static void test_edge_same_engine_order(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        char body[1024];
        snprintf(body, sizeof body, PLUS1 "," RECIP ",{'op': 'store', 'dst': 'out', 'src': 'b'}",
                 "", "dve");
        tir_kernel_t k;
        tpb_err_t e;
        if (parse_sched(body, with ? "[['plus1', ['recip']]]" : NULL, &k, &e))
            fail_msg("%s", e.msg);
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
        int pp = inst_pos(&r, &k, "plus1"), pq = inst_pos(&r, &k, "recip");
        assert_true(pp >= 0 && pq >= 0);
        assert_int_equal(pq < pp, with);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* no_reorder: the second op (Pool) waits for the first (Activation) although
 * no memory links them; outside a block it does not. */
static void test_no_reorder(void **state)
{
    (void)state;
    for (int with = 0; with < 2; with++) {
        char body[1024];
        snprintf(body, sizeof body,
                 "%s{'op': 'activation', 'dst': 'a', 'data': 'x', 'func': 'exp', 'name': 'act0'},"
                 "{'op': 'tensor_copy', 'dst': 'b', 'src': 'x', 'engine': 'pool', 'name': 'cp1'},"
                 "{'op': 'tensor_scalar', 'dst': 'c', 'src': 'x', 'op0': 'add', 'operand0': 2, "
                 "'engine': 'dve', 'name': 'ts2'}%s,"
                 /* keep a, b, c live (else b may reuse a's space: a real WAW) */
                 "{'op': 'tensor_tensor', 'dst': 'x', 'in0': 'a', 'in1': 'b', 'operator': 'add'},"
                 "{'op': 'tensor_tensor', 'dst': 'x', 'in0': 'x', 'in1': 'c', 'operator': 'add'},"
                 "{'op': 'store', 'dst': 'out', 'src': 'x'}",
                 with ? "{'op': 'nl.no_reorder', 'body': [" : "", with ? "]}" : "");
        tir_kernel_t k;
        tpb_err_t e;
        if (parse_sched(body, NULL, &k, &e))
            fail_msg("%s", e.msg);
        int a0 = op_index(&k, "act0"), c1 = op_index(&k, "cp1"), t2 = op_index(&k, "ts2");
        assert_true(a0 < c1 && c1 < t2);
        assert_int_equal(k.ops[c1].rare->ndeps, with);
        assert_int_equal(k.ops[t2].rare->ndeps, with);
        if (with) {
            assert_int_equal(k.ops[c1].rare->deps[0], a0);
            assert_int_equal(k.ops[t2].rare->deps[0], c1);
        }
        bu_run_t r;
        assert_int_equal(bu_lower(&r, &k, tpb_target_get("trn2"), true), 0);
        assert_int_equal(waits_on(&r, inst_of(&r, &k, "cp1"), sched_engine_sem(ISA_ENG_ACT)), with);
        assert_int_equal(waits_on(&r, inst_of(&r, &k, "ts2"), sched_engine_sem(ISA_ENG_POOL)), with);
        bu_free(&r);
        tir_kernel_free(&k);
    }
}

/* What moves along: an op that reads the moved op's output moves with it. */
static void test_dependents_move_along(void **state)
{
    (void)state;
    const char *body =
        "{'op': 'tensor_scalar', 'dst': 'a', 'src': 'x', 'op0': 'add', 'operand0': 1, 'name': 'p'},"
        "{'op': 'tensor_scalar', 'dst': 'b', 'src': 'a', 'op0': 'add', 'operand0': 1, 'name': 'use'},"
        "{'op': 'tensor_scalar', 'dst': 'c', 'src': 'x', 'op0': 'add', 'operand0': 5, 'name': 'q'},"
        "{'op': 'store', 'dst': 'out', 'src': 'b'}";
    tir_kernel_t k;
    tpb_err_t e;
    if (parse_sched(body, "[['p', 'q']]", &k, &e))
        fail_msg("%s", e.msg);
    int p = op_index(&k, "p"), u = op_index(&k, "use"), q = op_index(&k, "q");
    assert_true(q < p && p < u);
    tir_kernel_free(&k);
}

static void sched_fails(const char *body, const char *schedule, const char *n1, const char *n2)
{
    tir_kernel_t k;
    tpb_err_t e;
    int rc = parse_sched(body, schedule, &k, &e);
    tir_kernel_free(&k);
    if (rc != -1)
        fail_msg("expected a failure for: %s", body);
    if (!strstr(e.msg, n1) || (n2 && !strstr(e.msg, n2)))
        fail_msg("message '%s' lacks '%s' / '%s'", e.msg, n1, n2 ? n2 : "");
}

static void test_errors(void **state)
{
    (void)state;
    const char *two =
        "{'op': 'tensor_scalar', 'dst': 'a', 'src': 'x', 'op0': 'add', 'operand0': 1, 'name': 'p'},"
        "{'op': 'tensor_scalar', 'dst': 'b', 'src': 'a', 'op0': 'add', 'operand0': 1, 'name': 'q'}";
    /* q reads p's output: p cannot run after q */
    sched_fails(two, "[['p', 'q']]", "field 'schedule': 'p' cannot run after 'q'",
                "depends on it");
    sched_fails(two, "[['p', 'zz']]", "field 'schedule'", "no op named 'zz'");
    sched_fails(two, "[['p', 'p']]", "'p' cannot be scheduled after itself", NULL);
    sched_fails(two, "[['p']]", "field 'schedule'", "entry 0: expected [op name");
    sched_fails(two, "{'p': 'q'}", "field 'schedule'", "a list of");
    /* a cycle of edges */
    const char *ind =
        "{'op': 'tensor_scalar', 'dst': 'a', 'src': 'x', 'op0': 'add', 'operand0': 1, 'name': 'p'},"
        "{'op': 'tensor_scalar', 'dst': 'b', 'src': 'x', 'op0': 'add', 'operand0': 1, 'name': 'q'}";
    sched_fails(ind, "[['p', 'q'], ['q', 'p']]", "cannot run after", NULL);
    /* per-op field */
    sched_fails("{'op': 'memset', 'dst': 'a', 'value': 1, 'schedule': 3}",
                NULL, "field 'schedule'", "an op name or a list");
    sched_fails("{'op': 'memset', 'dst': 'a', 'value': 1, 'schedule': ['nope']}",
                NULL, "field 'schedule'", "no op named 'nope'");
    sched_fails("{'op': 'no_reorder', 'body': 3}", NULL, "field 'body'", "expected an array");
    sched_fails("{'op': 'no_reorder', 'body': [], 'x': 1}", NULL, "field 'x'", "unknown field");
}

/* A move across a loop's iterations leaves that loop unrolled (roll 0); a
 * loop with "roll": true cannot be crossed. */
static void test_loops(void **state)
{
    (void)state;
    const char *body =
        "{'op': 'tensor_scalar', 'dst': 'a', 'src': 'x', 'op0': 'add', 'operand0': 1, 'name': 'p'},"
        "{'op': 'for', 'var': 'i', 'range': [2], %s 'body': ["
        " {'op': 'tensor_scalar', 'dst': 'b', 'src': 'x', 'op0': 'add', 'operand0': 'i', 'name': 'q'}]}";
    char buf[1024];
    snprintf(buf, sizeof buf, body, "");
    tir_kernel_t k;
    tpb_err_t e;
    if (parse_sched(buf, "[['p', 'q']]", &k, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.nloops, 1);
    assert_int_equal(k.loops[0].roll, 0);
    assert_string_equal(k.ops[k.nops - 1].name, "p");
    tir_kernel_free(&k);
    snprintf(buf, sizeof buf, body, "'roll': true,");
    sched_fails(buf, "[['p', 'q']]", "crosses iterations of a loop", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_reorders),
        cmocka_unit_test(test_edge_same_engine_order),
        cmocka_unit_test(test_no_reorder),
        cmocka_unit_test(test_dependents_move_along),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_loops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
