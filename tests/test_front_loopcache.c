/* The front-end's compiled loop bodies (encoder/expr.c enc_expr_compile,
 * expr_slice.c, fj_operands.c, frontend_json.c decode_stmt): a loop body's
 * statements, operand strings and index expressions are parsed once and
 * re-evaluated every iteration.  These tests fail on a cache that keeps a
 * value, a tensor or an error from the wrong iteration. */
#include "front_json_util.h"

#include <ctype.h>

#include "expr.h"
#include "fj.h"

/* ---- compiled expressions against the parser ---- */

static const char *const exprs[] = {
    "i * 128 + n // 3", "(i % 2) * 128", "-i ** 2", "2 ** i", "min(i, n) + max(1, 2, i)",
    "cdiv(n, i + 4)", "floor(n / 7) - i", "i >= 2", "(i == 1) * 5 + (i != 1)", "n // (i - 3)",
    "n % (i + 1)", "abs(i - 2) * sign(i)", "trunc(i / 2)", "nl.program_id(0) + i", "floor(pi) + i",
    "i * 4611686018427387904", "ceil(i * 0.5)", "+i - -i",
};

/* eval(text) at every i in -4..6 equals the program compiled at i0 run at i:
 * the same value and pid dependence, or a failure of both. */
static void replay_matches(const char *text, int64_t i0)
{
    enc_env_t env;
    enc_env_init(&env);
    enc_env_push(&env, "pid", 1, true);
    enc_env_push(&env, "pid0", 1, true);
    enc_env_push(&env, "n", 300, false);
    enc_env_push(&env, "i", i0, false);
    enc_expr_t *prog = NULL;
    enc_val_t v, w;
    char msg[256];
    if (enc_expr_compile(text, &env, &prog, &v, msg, sizeof msg))
        fail_msg("'%s' at i=%lld: %s", text, (long long)i0, msg);
    assert_non_null(prog);
    for (int64_t i = -4; i <= 6; i++) {
        env.vars[env.n - 1].value = i;
        int a = enc_expr_eval(text, &env, &v, msg, sizeof msg);
        int b = enc_expr_run(prog, &env, &w);
        if (a != b)
            fail_msg("'%s' at i=%lld: eval %d, replay %d", text, (long long)i, a, b);
        if (!a && (v.v != w.v || v.pid_dep != w.pid_dep))
            fail_msg("'%s' at i=%lld: eval %lld, replay %lld", text, (long long)i,
                     (long long)v.v, (long long)w.v);
    }
    enc_expr_free(prog);
    enc_env_free(&env);
}

static void test_expr_replay(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof exprs / sizeof exprs[0]; k++)
        replay_matches(exprs[k], 1);
}

/* A name bound by an inner `let` after compiling is found by the replay. */
static void test_expr_replay_shadow(void **state)
{
    (void)state;
    enc_env_t env;
    enc_env_init(&env);
    enc_env_push(&env, "k", 5, false);
    enc_expr_t *prog = NULL;
    enc_val_t v;
    char msg[128];
    assert_int_equal(enc_expr_compile("k * 2", &env, &prog, &v, msg, sizeof msg), 0);
    assert_int_equal(v.v, 10);
    enc_env_push(&env, "k", 7, true);
    assert_int_equal(enc_expr_run(prog, &env, &v), 0);
    assert_int_equal(v.v, 14);
    assert_true(v.pid_dep);
    enc_env_pop_to(&env, 0);
    assert_int_equal(enc_expr_run(prog, &env, &v), -1);   /* k unbound: the parser's error */
    enc_expr_free(prog);
    enc_env_free(&env);
}

/* Slice operands: compiled at one i, run at others, equal to the parser. */
static void test_slice_replay(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "a[(i%2)*128:(i%2)*128+128, :]", "t[i, ::2, 1:, :i+3:2]", "x[ds(i * 4, 4 - i), i]",
        "y", "z[n // (i - 2)]",
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        enc_env_t env;
        enc_env_init(&env);
        enc_env_push(&env, "n", 300, false);
        enc_env_push(&env, "i", 0, false);
        enc_slice_t s1[ENC_MAX_SLICES], s2[ENC_MAX_SLICES];
        int n1, n2;
        bool d1, d2;
        char name[64], msg[256];
        enc_slice_prog_t *prog = NULL;
        if (enc_slice_operand_compile(ops[k], &env, name, sizeof name, s1, &n1, &d1, msg,
                                      sizeof msg, &prog))
            fail_msg("'%s': %s", ops[k], msg);
        assert_non_null(prog);
        for (int64_t i = -3; i <= 6; i++) {
            env.vars[1].value = i;
            int a = enc_parse_slice_operand(ops[k], &env, name, sizeof name, s1, &n1, &d1, msg,
                                            sizeof msg);
            int b = enc_slice_prog_run(prog, &env, s2, &n2, &d2);
            if (a != b)
                fail_msg("'%s' at i=%lld: parse %d, replay %d", ops[k], (long long)i, a, b);
            if (a)
                continue;
            assert_int_equal(n1, n2);
            assert_int_equal(d1, d2);
            assert_same_slices(s1, s2, n1);
        }
        enc_slice_prog_free(prog);
        enc_env_free(&env);
    }
}

/* ---- kernels ---- */

static char *err_of(const char *body)
{
    tpb_err_t e;
    fails(body, &e);
    return strdup(e.msg);
}

/* An error at a late iteration (the compiled form exists by then) reads
 * exactly as when that iteration is the loop's first (nothing compiled). */
static void test_late_error_same_text(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {T("t", "[32, 512]", "float32")
         "{'op': 'for', 'var': 'i', 'range': [0, 12], 'body': ["
         " {'op': 'load', 'dst': 't', 'src': 'a[i*32:i*32+32, :]'}]}",
         T("t", "[32, 512]", "float32")
         "{'op': 'for', 'var': 'i', 'range': [9, 12], 'body': ["
         " {'op': 'load', 'dst': 't', 'src': 'a[i*32:i*32+32, :]'}]}"},
        {T("t", "[1, 512]", "float32")
         "{'op': 'for', 'var': 'i', 'range': [0, 6], 'body': ["
         " {'op': 'load', 'dst': 't', 'src': 'a[60 // (i - 4) + 70, :]'}]}",
         T("t", "[1, 512]", "float32")
         "{'op': 'for', 'var': 'i', 'range': [4, 6], 'body': ["
         " {'op': 'load', 'dst': 't', 'src': 'a[60 // (i - 4) + 70, :]'}]}"},
        {T("t", "[1, 512]", "float32")
         "{'op': 'for', 'var': 'i', 'range': [0, 6], 'body': ["
         " {'op': 'load', 'dst': 't[:, 0:3]', 'src': 'a[0:1, ds(i, 3 * (i < 3))]'}]}",
         T("t", "[1, 512]", "float32")
         "{'op': 'for', 'var': 'i', 'range': [3, 6], 'body': ["
         " {'op': 'load', 'dst': 't[:, 0:3]', 'src': 'a[0:1, ds(i, 3 * (i < 3))]'}]}"},
    };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
        char *late = err_of(pairs[p][0]), *first = err_of(pairs[p][1]);
        if (strcmp(late, first))
            fail_msg("late '%s' != first '%s'", late, first);
        assert_non_null(strstr(late, "body[1].body[0]"));
        free(late);
        free(first);
    }
}

/* A tile declared in the body (shadowing an outer one) is a new tensor in
 * every iteration; the body's operands resolve to this iteration's. */
static void test_body_tile_per_iteration(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           T("w", "[1, 512]", "float32")
           " {'op': 'load', 'dst': 'w', 'src': 'a[i:i+1, :]'},"
           " {'op': 'store', 'dst': 'out[3-i:4-i, :]', 'src': 'w'}]}",
           &k);
    assert_int_equal(k.nops, 8);
    for (int i = 0; i < 4; i++) {
        const tir_op_t *ld = &k.ops[2 * i], *st = &k.ops[2 * i + 1];
        assert_int_equal(ld->src[0]->offset, (int64_t)i * 512);
        assert_int_equal(st->dst->offset, (int64_t)(3 - i) * 512);
        assert_int_equal(ld->dst->tensor, st->src[0]->tensor);
        for (int q = 0; q < i; q++)
            assert_int_not_equal(ld->dst->tensor, k.ops[2 * q].dst->tensor);
        assert_string_equal(k.tensors[ld->dst->tensor].path, "body[1].body[0]");   /* not the outer w */
    }
    tir_kernel_free(&k);
}

/* Nested loops, an index of both variables, and a `let` rebound every
 * iteration. */
static void test_nested_and_let(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'for', 'var': 'j', 'range': [0, 4], 'body': ["
           "  {'op': 'let', 'var': 'r', 'value': '(i * 4 + j) * 2'},"
           "  {'op': 'load', 'dst': 'w', 'src': 'a[i*4+j:i*4+j+1, :]'},"
           "  {'op': 'store', 'dst': 'out[r:r+1, ds(j * 8, 8)]', 'src': 'w[:, 0:8]'}]}]}",
           &k);
    assert_int_equal(k.nops, 24);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            const tir_op_t *ld = &k.ops[2 * (i * 4 + j)], *st = ld + 1;
            assert_int_equal(ld->src[0]->offset, (int64_t)(i * 4 + j) * 512);
            assert_int_equal(st->dst->offset, (int64_t)(i * 4 + j) * 2 * 512 + j * 8);
        }
    tir_kernel_free(&k);
}

/* Many operand strings in one loop body against the compiled-operand
 * cache (fj_operands.c cop_find: 64 sets of 4 ways): 80 (sets holding
 * two to four of them: hits in every way) and 400 (sets overflowing: a
 * find evicts every iteration).  Each op must get its own string's slices
 * at this iteration's i. */
static void many_operand_strings(int nloads)
{
    enum { TRIPS = 3 };
    static char body[400 * 80 + 256];
    size_t o = (size_t)snprintf(body, sizeof body, "%s{'op': 'for', 'var': 'i', 'range': [0, %d], "
                                "'body': [", T("w", "[1, 512]", "float32"), TRIPS);
    for (int n = 0; n < nloads; n++)
        o += (size_t)snprintf(body + o, sizeof body - o,   /* rows i*97 + 0..96: a has 300 */
                              "%s{'op': 'load', 'dst': 'w', 'src': 'a[i*97+%d:i*97+%d, :]'}",
                              n ? ", " : "", n % 97, n % 97 + 1);
    snprintf(body + o, sizeof body - o, "]}");
    tir_kernel_t k;
    parses(body, &k);
    assert_int_equal(k.nops, nloads * TRIPS);
    for (int i = 0; i < TRIPS; i++)
        for (int n = 0; n < nloads; n++)
            assert_int_equal(k.ops[i * nloads + n].src[0]->offset,
                             (int64_t)(i * 97 + n % 97) * 512);
    tir_kernel_free(&k);
}

static void test_many_operand_strings(void **state)
{
    (void)state;
    many_operand_strings(80);
    many_operand_strings(400);
}

/* A body statement's name, engine, deps and schedule are read once
 * (frontend_json.c op_head) and its op path interned once: every
 * iteration's op still carries them, deps resolve to this iteration's op,
 * and ops without a name keep their per-op default name. */
static void test_op_head_per_iteration(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'tensor_scalar', 'name': 'ts', 'engine': 'pool', 'dst': 'w',"
           "  'src': 'w', 'op0': 'add', 'operand0': 1.0},"
           " {'op': 'tensor_copy', 'deps': ['ts'], 'engine': 'act', 'dst': 'w',"
           "  'src': 'w'},"
           " {'op': 'tensor_copy', 'dst': 'w', 'src': 'w'}]}",
           &k);
    assert_int_equal(k.nops, 9);
    for (int i = 0; i < 3; i++) {
        const tir_op_t *ts = &k.ops[3 * i], *cp = ts + 1, *cp2 = ts + 2;
        assert_string_equal(ts->name, "ts");
        assert_int_equal(ts->engine, ISA_ENG_POOL);
        assert_int_equal(ts->rare->ndeps, 0);
        assert_string_equal(ts->path, "body[1].body[0]");
        assert_int_equal(cp->engine, ISA_ENG_ACT);
        assert_int_equal(cp->rare->ndeps, 1);
        assert_int_equal(cp->rare->deps[0], 3 * i);
        assert_string_equal(cp->path, "body[1].body[1]");
        assert_int_equal(cp2->engine, ISA_ENG_UNASSIGNED);
        assert_int_equal(cp2->rare->ndeps, 0);
        assert_string_equal(cp2->path, "body[1].body[2]");
        char want[32];
        snprintf(want, sizeof want, "tensor_copy_%d", 3 * i + 2);
        assert_string_equal(cp2->name, want);
    }
    tir_kernel_free(&k);
}

/* tensor_scalar and activation keep a body statement's constant fields
 * (fj_ops_compute.c op_consts_t): the operands still move every iteration,
 * and fields given as loop expressions are never kept. */
static void test_op_consts_per_iteration(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[4, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           " {'op': 'tensor_scalar', 'dst': 'w[i:i+1, :]', 'src': 'w[3-i:4-i, :]',"
           "  'op0': 'multiply', 'operand0': 2.5, 'reverse0': true, 'op1': 'add',"
           "  'operand1': -1},"
           " {'op': 'tensor_scalar', 'dst': 'w[i:i+1, :]', 'src': 'w[i:i+1, :]',"
           "  'op0': 'add', 'operand0': 'i * 2', 'reverse1': 'i > 1'},"
           " {'op': 'activation', 'dst': 'w[i:i+1, :]', 'src': 'w[0:1, :]',"
           "  'func': 'exp', 'scale': 0.5, 'accumulate': true},"
           " {'op': 'activation', 'dst': 'w[0:1, :]', 'src': 'w[i:i+1, :]',"
           "  'func': 'relu', 'scale': 'i + 1'}]}",
           &k);
    assert_int_equal(k.nops, 16);
    for (int i = 0; i < 4; i++) {
        const tir_op_t *a = &k.ops[4 * i], *b = a + 1, *c = a + 2, *d = a + 3;
        assert_int_equal(a->dst->offset, (int64_t)i * 512);
        assert_int_equal(a->src[0]->offset, (int64_t)(3 - i) * 512);
        assert_int_equal(a->op0, ISA_ALU_MULTIPLY);
        assert_int_equal(a->op1, ISA_ALU_ADD);
        assert_true(a->s0.imm == 2.5 && a->s1.imm == -1 && !a->s0.is_ap);
        assert_int_equal(a->flags & (TIR_F_REV0 | TIR_F_REV1), TIR_F_REV0);
        assert_int_equal(b->op0, ISA_ALU_ADD);
        assert_true(b->s0.imm == 2 * i);
        assert_int_equal(b->flags & (TIR_F_REV0 | TIR_F_REV1), i > 1 ? TIR_F_REV1 : 0);
        assert_int_equal(c->dst->offset, (int64_t)i * 512);
        assert_int_equal(c->func, ISA_ACTFN_EXP);
        assert_true(c->s0.imm == 0.5);
        assert_true(c->flags & TIR_F_ACCUMULATE);
        assert_int_equal(d->src[0]->offset, (int64_t)i * 512);
        assert_int_equal(d->func, ISA_ACTFN_RELU);
        assert_true(d->s0.imm == i + 1);
        assert_false(d->flags & TIR_F_ACCUMULATE);
    }
    tir_kernel_free(&k);
    /* an operand error in a later iteration reads as in the first */
    char *late = err_of(T("w", "[4, 512]", "float32")
                        "{'op': 'for', 'var': 'i', 'range': [0, 6], 'body': ["
                        " {'op': 'tensor_scalar', 'dst': 'w[i:i+1, :]', 'src': 'w[0:1, :]',"
                        "  'op0': 'add', 'operand0': 1.0}]}");
    char *first = err_of(T("w", "[4, 512]", "float32")
                         "{'op': 'for', 'var': 'i', 'range': [4, 6], 'body': ["
                         " {'op': 'tensor_scalar', 'dst': 'w[i:i+1, :]', 'src': 'w[0:1, :]',"
                         "  'op0': 'add', 'operand0': 1.0}]}");
    if (strcmp(late, first))
        fail_msg("late '%s' != first '%s'", late, first);
    assert_non_null(strstr(late, "dst"));
    free(late);
    free(first);
}

/* A kept statement (tensor_scalar, activation, tensor_tensor) reads a
 * string operand from the field it found at the first iteration, and an
 * operand given as a raw access pattern (an object, whose offset may be a
 * loop expression) or a number (tensor_tensor: a memset tile) the full
 * way, each iteration; a late operand error reads as a first one. */
static void test_op_consts_kept_operands(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[4, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 4], 'body': ["
           " {'op': 'tensor_scalar', 'dst': {'tensor': 'w', 'offset': 'i*512', "
           "  'ap': [[512, 1], [1, 512]]}, 'src': 'w[3-i:4-i, :]', 'op0': 'add', 'operand0': 1},"
           " {'op': 'activation', 'dst': 'w[i:i+1, :]', 'src': {'tensor': 'w', "
           "  'offset': '(3-i)*512', 'ap': [[512, 1], [1, 512]]}, 'func': 'exp'},"
           " {'op': 'tensor_tensor', 'dst': 'w[i:i+1, :]', 'in0': 'w[3-i:4-i, :]',"
           "  'in1': 'w[0:1, :]', 'operator': 'subtract'}]}",
           &k);
    assert_int_equal(k.nops, 12);
    for (int i = 0; i < 4; i++) {
        const tir_op_t *a = &k.ops[3 * i], *b = a + 1, *c = a + 2;
        assert_int_equal(a->dst->offset, (int64_t)i * 512);
        assert_int_equal(a->src[0]->offset, (int64_t)(3 - i) * 512);
        assert_int_equal(b->dst->offset, (int64_t)i * 512);
        assert_int_equal(b->src[0]->offset, (int64_t)(3 - i) * 512);
        assert_int_equal(b->func, ISA_ACTFN_EXP);
        assert_int_equal(c->dst->offset, (int64_t)i * 512);
        assert_int_equal(c->src[0]->offset, (int64_t)(3 - i) * 512);
        assert_int_equal(c->src[1]->offset, 0);
        assert_int_equal(c->op0, ISA_ALU_SUBTRACT);
        assert_int_equal(c->nsrc, 2);
    }
    tir_kernel_free(&k);
    /* a number in1 (a memset tile each iteration) is not kept: every
     * iteration makes its own */
    parses(T("w", "[4, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'tensor_tensor', 'dst': 'w[i:i+1, :]', 'in0': 'w[i:i+1, :]',"
           "  'in1': 2.0, 'operator': 'add'}]}",
           &k);
    int tt = 0, fills = 0;
    for (int i = 0; i < k.nops; i++) {
        fills += k.ops[i].kind == TIR_MEMSET;
        if (k.ops[i].kind != TIR_TENSOR_TENSOR)
            continue;
        assert_int_equal(k.ops[i].dst->offset, (int64_t)tt * 512);
        assert_int_equal(k.ops[i].op0, ISA_ALU_ADD);
        tt++;
    }
    assert_int_equal(tt, 3);
    assert_int_equal(fills, 3);
    tir_kernel_free(&k);
    /* a late tensor_tensor operand error reads as in the first iteration */
    char *late = err_of(T("w", "[4, 512]", "float32")
                        "{'op': 'for', 'var': 'i', 'range': [0, 6], 'body': ["
                        " {'op': 'tensor_tensor', 'dst': 'w[0:1, :]', 'in0': 'w[0:1, :]',"
                        "  'in1': 'w[i:i+1, :]', 'operator': 'add'}]}");
    char *first = err_of(T("w", "[4, 512]", "float32")
                         "{'op': 'for', 'var': 'i', 'range': [4, 6], 'body': ["
                         " {'op': 'tensor_tensor', 'dst': 'w[0:1, :]', 'in0': 'w[0:1, :]',"
                         "  'in1': 'w[i:i+1, :]', 'operator': 'add'}]}");
    if (strcmp(late, first))
        fail_msg("late '%s' != first '%s'", late, first);
    assert_non_null(strstr(late, "in1"));
    free(late);
    free(first);
}

/* A body tile's fields are read once when its shape is all numbers
 * (frontend_json.c tile_decl_t); a shape of loop expressions is read every
 * iteration, and every iteration declares a new tile. */
static void test_tile_decl_per_iteration(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'tile', 'name': 'p', 'shape': [2, 8], 'dtype': 'float32',"
           "  'buffer': 'psum'},"
           " {'op': 'tile', 'name': 'q', 'shape': [2, 'i + 1'], 'dtype': 'bfloat16'}]}",
           &k);
    int np = 0, nq = 0;
    for (int t = 0; t < k.ntensors; t++) {
        const tir_tensor_t *x = &k.tensors[t];
        if (!strncmp(x->name, "p", 1) && (x->name[1] == 0 || x->name[1] == '#')) {
            assert_int_equal(x->kind, TIR_T_PSUM);
            assert_int_equal(x->dtype, ISA_DT_FP32);
            assert_int_equal(x->ndim, 2);
            assert_true(x->shape[0] == 2 && x->shape[1] == 8);
            assert_string_equal(x->path, "body[0].body[0]");
            np++;
        } else if (!strncmp(x->name, "q", 1) && (x->name[1] == 0 || x->name[1] == '#')) {
            assert_int_equal(x->kind, TIR_T_SBUF);
            assert_int_equal(x->dtype, ISA_DT_BF16);
            assert_true(x->shape[0] == 2 && x->shape[1] == nq + 1);
            nq++;
        }
    }
    assert_int_equal(np, 3);
    assert_int_equal(nq, 3);
    tir_kernel_free(&k);
}

/* A body DMA's options are kept when dma_qos is a number (fj_ops_dma.c
 * dma_opts_t); a dma_qos expression is read every iteration. */
static void test_dma_opts_per_iteration(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[4, 512]", "float32")
           "{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'load', 'dst': 'w[i:i+1, :]', 'src': 'a[i:i+1, :]',"
           "  'dma_qos': 7, 'dge_mode': 'hw'},"
           " {'op': 'store', 'dst': 'out[i:i+1, :]', 'src': 'w[i:i+1, :]',"
           "  'dma_qos': 'i * 3', 'rmw_op': 'add'}]}",
           &k);
    assert_int_equal(k.nops, 6);
    for (int i = 0; i < 3; i++) {
        const tir_op_t *ld = &k.ops[2 * i], *st = ld + 1;
        assert_int_equal(ld->rare->qos, 7);
        assert_int_equal(ld->rare->dge_mode, ISA_DGE_HW);
        assert_int_equal(ld->src[0]->offset, (int64_t)i * 512);
        assert_int_equal(st->rare->qos, 3 * i);
        assert_true(st->flags & TIR_F_RMW_ADD);
        assert_int_equal(st->dst->offset, (int64_t)i * 512);
    }
    tir_kernel_free(&k);
}

/* A flat body's DMA statement finds its optional fields in one pass over
 * its keys (fj_ops_dma.c dma_keys): each field, alone or after the others,
 * reaches the op as when it was looked up by name; absent ones are the
 * defaults; a bad value still fails naming the field. */
static void test_dma_flat_option_keys(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("w", "[1, 512]", "float32")
           "{'op': 'load', 'dst': 'w', 'src': 'a[0:1, :]'},"
           "{'op': 'load', 'dst': 'w', 'src': 'a[1:2, :]', 'dge_mode': 'hw'},"
           "{'op': 'load', 'src': 'a[2:3, :]', 'dma_qos': 9, 'dst': 'w'},"
           "{'op': 'load', 'dst': 'w', 'src': 'a[3:4, :]', 'src_reg': 3},"
           "{'op': 'load', 'dst': 'w', 'src': 'a[4:5, :]', 'other': 0.5},"
           "{'op': 'store', 'dst': 'out[0:1, :]', 'src': 'w', 'rmw_op': 'add'},"
           "{'op': 'store', 'dst': 'out[1:2, :]', 'src': 'w', 'dst_reg': 2},"
           "{'op': 'store', 'dst': 'out[2:3, :]', 'src': 'w', 'dma_qos': 4, 'rmw_op': 'add',"
           " 'dge_mode': 'sw'}",
           &k);
    assert_int_equal(k.nops, 9);   /* the fill value's memset before the fifth load */
    const tir_op_t *o = k.ops;
    for (int i = 0; i < 9; i++) {
        int want_dge = i == 1 ? ISA_DGE_HW : i == 8 ? ISA_DGE_SW : ISA_DGE_NONE;
        if (o[i].kind == TIR_MEMSET)
            continue;
        assert_int_equal(o[i].rare->dge_mode, want_dge);
        assert_int_equal(o[i].rare->oob_mode, ISA_OOB_ERROR);
        assert_int_equal(o[i].rare->qos, i == 2 ? 9 : i == 8 ? 4 : 0);
        assert_int_equal(o[i].rare->src_reg, i == 3 ? 3 : -1);
        assert_int_equal(o[i].rare->dst_reg, i == 7 ? 2 : -1);
        assert_int_equal(!!(o[i].flags & TIR_F_RMW_ADD), i == 6 || i == 8);
    }
    assert_int_equal(o[4].kind, TIR_MEMSET);
    assert_int_equal(o[5].kind, TIR_LOAD);
    tir_kernel_free(&k);
    fails_with(T("w", "[1, 512]", "float32")
               "{'op': 'store', 'dst': 'out[0:1, :]', 'src': 'w', 'rmw_op': 'max'}",
               "rmw_op", "only add");
    fails_with(T("w", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 'w', 'src': 'a[0:1, :]', 'dma_qos': 2000000}",
               "dma_qos", NULL);
    fails_with(T("w", "[1, 512]", "float32")
               "{'op': 'load', 'dst': 'w', 'src': 'a[0:1, :]', 'src_reg': 99}",
               "src_reg", NULL);
}

/* A plain load/store keeps its dst/src fields after the first iteration:
 * a body tile is each iteration's own, slices follow the loop variable, a
 * load with `other` (a memset first) is never kept, and a late operand
 * error reads as a first one. */
static void test_dma_kept_operands(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses("{'op': 'for', 'var': 'i', 'range': [0, 3], 'body': ["
           " {'op': 'tile', 'name': 'b', 'shape': [1, 512], 'dtype': 'float32'},"
           " {'op': 'load', 'dst': 'b', 'src': 'a[2*i:2*i+1, :]'},"
           " {'op': 'load', 'dst': 'b', 'src': 'a[i:i+1, :]', 'other': 0.5},"
           " {'op': 'store', 'dst': 'out[i:i+1, :]', 'src': 'b'}]}",
           &k);
    int loads = 0, stores = 0, fills = 0, prev_tile = -1;
    for (int i = 0; i < k.nops; i++) {
        const tir_op_t *op = &k.ops[i];
        if (op->kind == TIR_MEMSET)
            fills++;
        else if (op->kind == TIR_LOAD && loads++ % 2 == 0) {
            int it = loads / 2;
            assert_int_equal(op->src[0]->offset, (int64_t)2 * it * 512);
            assert_true(op->dst->tensor != prev_tile);   /* this iteration's tile */
            prev_tile = op->dst->tensor;
        } else if (op->kind == TIR_STORE) {
            assert_int_equal(op->dst->offset, (int64_t)stores * 512);
            assert_int_equal(op->src[0]->tensor, prev_tile);
            stores++;
        }
    }
    assert_int_equal(loads, 6);
    assert_int_equal(stores, 3);
    assert_int_equal(fills, 3);
    tir_kernel_free(&k);
    char *late = err_of("{'op': 'for', 'var': 'i', 'range': [0, 400], 'body': ["
                        " {'op': 'tile', 'name': 'b', 'shape': [1, 512], 'dtype': 'float32'},"
                        " {'op': 'load', 'dst': 'b', 'src': 'a[i:i+1, :]'}]}");
    char *first = err_of("{'op': 'for', 'var': 'i', 'range': [300, 400], 'body': ["
                         " {'op': 'tile', 'name': 'b', 'shape': [1, 512], 'dtype': 'float32'},"
                         " {'op': 'load', 'dst': 'b', 'src': 'a[i:i+1, :]'}]}");
    if (strcmp(late, first))
        fail_msg("late '%s' != first '%s'", late, first);
    assert_non_null(strstr(late, "src"));
    free(late);
    free(first);
}

/* fj_field finds a key among keys that share its first one or two bytes,
 * and the empty or one-letter keys; the first of duplicate keys wins. */
static void test_field_lookup(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"op\": 1, \"op0\": 2, \"operand0\": 3, \"o\": 4, \"\": 5, "
                           "\"operator\": 6, \"op\": 7, \"dst\": 8, \"d\": 9}");
    assert_non_null(o);
    const char *keys[] = {"op", "op0", "operand0", "o", "", "operator", "dst", "d"};
    const int want[] = {1, 2, 3, 4, 5, 6, 8, 9};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *it = fj_field(o, keys[i]);
        assert_non_null(it);
        assert_int_equal(it->valueint, want[i]);
    }
    const char *absent[] = {"ops", "op1", "operand", "opera", "ds", "dstx", "x", "p"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        assert_null(fj_field(o, absent[i]));
    assert_null(fj_field(o, NULL));
    assert_null(fj_field(NULL, "op"));
    cJSON_Delete(o);
}

/* decode_stmt's cache of op names (jx_t.opnames, 8 entries): a flat body
 * cycling through more spellings than it holds (evictions), a spelling too
 * long for an entry (24+ bytes), loops, tiles and lets between them: every
 * op gets its own kind and engine; an unknown op after many cached names
 * reads as at the first statement. */
static void test_op_name_cache(void **state)
{
    (void)state;
    static const char *const ops[] = {
        "tensor_copy", "nl.tensor_copy", "nisa.tensor_copy", "nki.isa.tensor_copy",
        "nki.language.tensor_copy", "np.tensor_copy", "numpy.tensor_copy", "tensor_scalar",
        "nisa.tensor_scalar", "nki.isa.tensor_scalar", "nki.language.tensor_scalar",
    };
    enum { NOPS = sizeof ops / sizeof ops[0] };
    char body[16384];
    size_t o = (size_t)snprintf(body, sizeof body, T("w", "[1, 512]", "float32") "%s", "");
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NOPS; i++) {
            bool ts = strstr(ops[i], "tensor_scalar") != NULL;
            o += (size_t)snprintf(body + o, sizeof body - o,
                                  "{'op': '%s', 'engine': '%s', 'dst': 'w', 'src': 'w'%s},%s",
                                  ops[i], i % 2 ? "act" : "pool",
                                  ts ? ", 'op0': 'add', 'operand0': 1.0" : "",
                                  i == 4 ? "{'op': 'let', 'var': 'q', 'value': 2}," : "");
            assert_true(o < sizeof body);
        }
    snprintf(body + o, sizeof body - o,
             "{'op': 'for', 'var': 'i', 'range': [0, 2], 'body': ["
             " {'op': 'tensor_copy', 'dst': 'w', 'src': 'w'}]}");
    tir_kernel_t k;
    parses(body, &k);
    assert_int_equal(k.nops, 3 * NOPS + 2);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NOPS; i++) {
            const tir_op_t *op = &k.ops[round * NOPS + i];
            bool ts = strstr(ops[i], "tensor_scalar") != NULL;
            assert_int_equal(op->kind, ts ? TIR_TENSOR_SCALAR : TIR_TENSOR_COPY);
            assert_int_equal(op->engine, i % 2 ? ISA_ENG_ACT : ISA_ENG_POOL);
        }
    assert_int_equal(k.ops[3 * NOPS].kind, TIR_TENSOR_COPY);
    tir_kernel_free(&k);

    /* the unknown op's message, first statement and after the cached names */
    char *first = err_of("{'op': 'tensor_cpy', 'dst': 'w', 'src': 'w'}");
    o = (size_t)snprintf(body, sizeof body, T("w", "[1, 512]", "float32") "%s", "");
    for (int i = 0; i < NOPS; i++)
        o += (size_t)snprintf(body + o, sizeof body - o,
                              "{'op': '%s', 'dst': 'w', 'src': 'w'%s},", ops[i],
                              strstr(ops[i], "tensor_scalar") ? ", 'op0': 'add', 'operand0': 1.0"
                                                               : "");
    snprintf(body + o, sizeof body - o, "{'op': 'tensor_cpy', 'dst': 'w', 'src': 'w'}");
    char *late = err_of(body);
    assert_non_null(strstr(first, "unknown op 'tensor_cpy'"));
    assert_string_equal(strstr(first, "field 'op'"), strstr(late, "field 'op'"));
    char want[32];
    snprintf(want, sizeof want, "body[%d]", NOPS + 1);
    assert_non_null(strstr(late, want));
    free(first);
    free(late);
}

/* Slice parts that are only digits skip the expression parser
 * (expr_slice.c plain_int): the same slices as the parser's answer for the
 * same numbers in parentheses, at every length up to 20 digits (19 and 20
 * overflow or come close: the parser decides), leading zeros, blanks, and
 * parts that only start with digits. */
/* Blanks around slice parts are trimmed exactly for the bytes isspace
 * names in the C locale (expr_slice.c tests them inline): every byte
 * around every part either reads as the plain operand (a blank) or not. */
static void test_slice_blank_bytes(void **state)
{
    (void)state;
    enc_env_t env;
    enc_env_init(&env);
    enc_slice_t ref[ENC_MAX_SLICES], s[ENC_MAX_SLICES];
    int nref = -1, n = -1;
    bool dep;
    char nm[64], msg[256], text[64];
    /* numbers (the digits-only path), an empty start, ds( after blanks */
    static const char *const forms[][2] = {{"x[%c3%c:%c5%c,%c2%c]", "x[3:5, 2]"},
                                           {"x[%c:%c5, %cds(1, 2)%c]", "x[:5, ds(1, 2)]"}};
    for (int f = 0; f < 2; f++) {
        assert_int_equal(enc_parse_slice_operand(forms[f][1], &env, nm, sizeof nm, ref, &nref,
                                                 &dep, msg, sizeof msg), 0);
        for (int c = 1; c < 256; c++) {
            char b = (char)c;
            snprintf(text, sizeof text, forms[f][0], b, b, b, b, b, b);
            int rc = enc_parse_slice_operand(text, &env, nm, sizeof nm, s, &n, &dep, msg,
                                             sizeof msg);
            bool same = rc == 0 && n == nref;
            for (int q = 0; same && q < n; q++)
                same = s[q].kind == ref[q].kind && s[q].start == ref[q].start &&
                       s[q].stop == ref[q].stop && s[q].has_start == ref[q].has_start &&
                       s[q].has_stop == ref[q].has_stop;
            if (same != (isspace(c) != 0))
                fail_msg("'%s' byte %d: rc %d, read as the plain operand: %d", forms[f][0], c,
                         rc, same);
        }
    }
    enc_env_free(&env);
}

static void test_slice_plain_ints(void **state)
{
    (void)state;
    enc_env_t env;
    enc_env_init(&env);
    enc_env_push(&env, "i", 3, false);
    uint64_t r = 7;
    char a[128], b[128], num[3][32];
    for (int t = 0; t < 3000; t++) {
        for (int q = 0; q < 3; q++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            int len = 1 + (int)((r >> 40) % 20);
            for (int c = 0; c < len; c++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                num[q][c] = (char)('0' + (r >> 50) % 10);
            }
            num[q][len] = 0;
            if (t % 7 == 0 && q == 1)
                snprintf(num[q], sizeof num[q], "%s", "12i");   /* not only digits */
        }
        static const char *const forms[][2] = {
            {"x[%s:%s, %s]", "x[(%s):(%s), (%s)]"},
            {"x[ %s : %s :%s ]", "x[(%s):(%s):(%s)]"},
            {"x[%s, %s:, :%s]", "x[(%s), (%s):, :(%s)]"},
            {"x[ds(%s, %s), %s]", "x[ds((%s), (%s)), (%s)]"},
        };
        const char *const *f = forms[t % 4];
        snprintf(a, sizeof a, f[0], num[0], num[1], num[2]);
        snprintf(b, sizeof b, f[1], num[0], num[1], num[2]);
        enc_slice_t s1[ENC_MAX_SLICES], s2[ENC_MAX_SLICES];
        int n1 = -1, n2 = -1;
        bool d1 = true, d2 = false;
        char nm1[64], nm2[64], m1[256], m2[256];
        int rc1 = enc_parse_slice_operand(a, &env, nm1, sizeof nm1, s1, &n1, &d1, m1, sizeof m1);
        int rc2 = enc_parse_slice_operand(b, &env, nm2, sizeof nm2, s2, &n2, &d2, m2, sizeof m2);
        if (rc1 != rc2)
            fail_msg("'%s' %d ('%s') vs '%s' %d ('%s')", a, rc1, rc1 ? m1 : "", b, rc2,
                     rc2 ? m2 : "");
        if (rc1)
            continue;
        assert_string_equal(nm1, nm2);
        assert_int_equal(n1, n2);
        assert_int_equal(d1, d2);
        assert_same_slices(s1, s2, n1);
    }
    /* slice lists around the 256-byte stack copy (expr_slice.c): blanks
     * padded in, the same slices at every length */
    for (int pad = 230; pad < 280; pad++) {
        char big[400];
        snprintf(big, sizeof big, "x[%*s3:i+4, 2%*s]", pad / 2, "", pad - pad / 2, "");
        enc_slice_t s1[ENC_MAX_SLICES];
        int n1 = 0;
        bool d1 = true;
        char nm1[64], m1[256];
        assert_int_equal(enc_parse_slice_operand(big, &env, nm1, sizeof nm1, s1, &n1, &d1, m1,
                                                 sizeof m1), 0);
        assert_int_equal(n1, 2);
        assert_int_equal(s1[0].start, 3);
        assert_int_equal(s1[0].stop, 7);
        assert_int_equal(s1[1].start, 2);
        assert_false(d1);
    }
    enc_env_free(&env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr_replay),
        cmocka_unit_test(test_expr_replay_shadow),
        cmocka_unit_test(test_slice_replay),
        cmocka_unit_test(test_late_error_same_text),
        cmocka_unit_test(test_body_tile_per_iteration),
        cmocka_unit_test(test_nested_and_let),
        cmocka_unit_test(test_op_head_per_iteration),
        cmocka_unit_test(test_op_consts_per_iteration),
        cmocka_unit_test(test_op_consts_kept_operands),
        cmocka_unit_test(test_tile_decl_per_iteration),
        cmocka_unit_test(test_dma_opts_per_iteration),
        cmocka_unit_test(test_dma_kept_operands),
        cmocka_unit_test(test_dma_flat_option_keys),
        cmocka_unit_test(test_field_lookup),
        cmocka_unit_test(test_op_name_cache),
        cmocka_unit_test(test_slice_plain_ints),
        cmocka_unit_test(test_slice_blank_bytes),
        cmocka_unit_test(test_many_operand_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
