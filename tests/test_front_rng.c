/* Front-end of the random-number ops (encoder/fj_ops_rng.c,
 * validate_rng.c), the rounding ALU ops, dma_compute, the register ops
 * (fj_ops_reg.c), HBM tensor reshape views and NKI's sendrecv arguments: NKI
 * names, parameters and engine defaults, and every error naming the op
 * path and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "frontend.h"

#define T(name, shape, dt) "{'op': 'tile', 'name': '" name "', 'shape': " shape ", 'dtype': '" dt "'},"
#define TP(name, shape, dt) \
    "{'op': 'tile', 'name': '" name "', 'shape': " shape ", 'dtype': '" dt "', 'buffer': 'psum'},"

/* Parse a kernel of the given target and body (' for "); returns the
 * front-end's result, the kernel in *k (freed by the caller on success). */
static int run(const char *target, const char *body, tir_kernel_t *k, tpb_err_t *e)
{
    char buf[8192];
    const char *grid = "";
    if (!strcmp(target, "trn2/nc2")) {
        target = "trn2";
        grid = "'grid': ['nc(2)'], ";
    }
    snprintf(buf, sizeof buf, "{%s'target': '%s', 'inputs': [{'name': 'a', 'shape': [128, 64], "
             "'dtype': 'float32'}], 'body': [%s]}", grid, target, body);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    memset(e, 0, sizeof *e);
    enc_front_opts_t o = {NULL, 0, 0, NULL};
    int rc = enc_parse_kernel_json_opts(buf, strlen(buf), "k.json", ".", &o, k, e);
    if (rc)
        tir_kernel_free(k);
    return rc;
}

static void bad(const char *target, const char *body, const char *field, const char *what)
{
    tir_kernel_t k;
    tpb_err_t e;
    if (run(target, body, &k, &e) == 0) {
        tir_kernel_free(&k);
        fail_msg("accepted: %s", body);
    }
    if (!strstr(e.msg, "body[") || !strstr(e.msg, field) || (what && !strstr(e.msg, what)))
        fail_msg("message '%s' lacks the path, '%s' or '%s'", e.msg, field, what ? what : "");
}

static void test_names_and_defaults(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    int rc = run("trn2", T("s", "[4, 6]", "uint32") T("v", "[4, 24]", "uint32")
                 T("r", "[4, 16]", "uint8") T("u", "[4, 16]", "bfloat16") T("lo", "[4, 1]", "float32")
                 T("sd", "[1, 1]", "int32")
                 "{'op': 'nki.isa.set_rng_seed', 'src_seeds': 'sd'},"
                 "{'op': 'nisa.rng', 'dst': 'r'},"
                 "{'op': 'rng', 'dst': 'r', 'engine': 'gpsimd'},"
                 "{'op': 'rand2', 'dst': 'u', 'min': 'lo', 'max': '2 * 3'},"
                 "{'op': 'rand_get_state', 'dst': 's'},"
                 "{'op': 'rand_set_state', 'src_seeds': 'v', 'engine': 'vector'}", &k, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(k.nops, 6);
    assert_int_equal(k.ops[0].kind, TIR_SET_RNG_SEED);
    assert_int_equal(k.ops[0].engine, ISA_ENG_DVE);
    assert_int_equal(k.ops[1].engine, ISA_ENG_DVE);    /* NKI: engine=vector */
    assert_int_equal(k.ops[2].engine, ISA_ENG_POOL);
    assert_true(k.ops[3].s0.is_ap && !k.ops[3].s1.is_ap && k.ops[3].s1.imm == 6.0);
    assert_int_equal(k.ops[4].engine, ISA_ENG_POOL);   /* NKI: engine=gpsimd */
    assert_int_equal(k.ops[5].kind, TIR_RAND_SET_STATE);
    assert_int_equal(k.ops[5].engine, ISA_ENG_DVE);
    tir_kernel_free(&k);
}

static void test_errors(void **state)
{
    (void)state;
    bad("trn2", T("f", "[4, 16]", "float32") "{'op': 'rng', 'dst': 'f'}", "field 'dst'",
        "integer dtype");
    bad("trn2", T("r", "[4, 16]", "int32") "{'op': 'rng', 'dst': 'r', 'engine': 'act'}",
        "field 'engine'", NULL);
    bad("trn2", TP("r", "[4, 16]", "int32") "{'op': 'rng', 'dst': 'r', 'engine': 'pool'}",
        "field 'dst'", "GpSimd");
    bad("trn1", T("r", "[4, 16]", "int32") "{'op': 'rng', 'dst': 'r', 'engine': 'pool'}",
        "field 'engine'", "trn1");
    bad("trn2", T("u", "[4, 16]", "float32") "{'op': 'rand2', 'dst': 'u', 'min': 0}",
        "field 'max'", "missing");
    bad("trn2", T("u", "[4, 16]", "float32") "{'op': 'rand2', 'dst': 'u', 'min': 2, 'max': 1}",
        "field 'max'", "min < max");
    bad("trn2", T("u", "[4, 16]", "float32") T("b", "[4, 1]", "int32")
        "{'op': 'rand2', 'dst': 'u', 'min': 'b', 'max': 1}", "field 'min'", "float32");
    bad("trn2", T("s", "[4, 6]", "uint32") "{'op': 'rand_get_state', 'dst': 's', 'engine': 'dve'}",
        "field 'dst'", "24 words");
    bad("trn2", T("s", "[4, 6]", "int32") "{'op': 'rand_get_state', 'dst': 's'}", "field 'dst'",
        "uint32");
    bad("trn2", TP("s", "[4, 6]", "uint32") "{'op': 'rand_set_state', 'src_seeds': 's'}",
        "field 'src_seeds'", "PSUM");
    bad("trn2", TP("s", "[4, 24]", "uint32")
        "{'op': 'rand_set_state', 'src_seeds': 's', 'engine': 'vector'}", "field 'src_seeds'",
        "SBUF");
    bad("trn1", T("s", "[4, 6]", "uint32") "{'op': 'rand_set_state', 'src_seeds': 's'}",
        "field 'engine'", "NeuronCore-v3");
    bad("trn2", T("sd", "[2, 1]", "uint32") "{'op': 'set_rng_seed', 'src_seeds': 'sd'}",
        "field 'src_seeds'", "[1, 1]");
    bad("trn2", T("sd", "[1, 1]", "uint16") "{'op': 'set_rng_seed', 'src_seeds': 'sd'}",
        "field 'src_seeds'", "32-bit");
    bad("trn2", T("sd", "[1, 1]", "uint32") "{'op': 'set_rng_seed', 'src': 'sd'}",
        "field 'src'", NULL);
}

/* nl.floor / ceil / trunc / sign / negative are unary ALU ops (no operand);
 * fmod is binary */
static void test_rounding_alu_ops(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    int rc = run("trn2", T("t", "[4, 16]", "float32") T("q", "[4, 16]", "float32")
                 "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'nl.floor'},"
                 "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'ceil', 'op1': 'trunc'},"
                 "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'fmod', 'operand0': 2.5},"
                 "{'op': 'tensor_tensor', 'dst': 't', 'in0': 't', 'in1': 'q', 'operator': 'fmod'},"
                 "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'sign', 'op1': 'negative',"
                 " 'engine': 'pool'}", &k, &e);
    if (rc)
        fail_msg("%s", e.msg);
    assert_int_equal(k.ops[0].op0, ISA_ALU_FLOOR);
    assert_int_equal(k.ops[1].op1, ISA_ALU_TRUNC);
    assert_int_equal(k.ops[2].op0, ISA_ALU_FMOD);
    assert_int_equal(k.ops[3].op0, ISA_ALU_FMOD);
    assert_int_equal(k.ops[4].op1, ISA_ALU_NEGATIVE);
    tir_kernel_free(&k);
    bad("trn2", T("t", "[4, 16]", "float32")
        "{'op': 'tensor_scalar', 'dst': 't', 'src': 't', 'op0': 'fmod'}", "field 'operand0'",
        "missing");
}

/* sendrecv: NKI's send_to_rank / recv_from_rank / pipe_id / dma_engine */
static void test_sendrecv_nki_names(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    if (run("trn2/nc2", T("m", "[128, 64]", "float32") T("o", "[128, 64]", "float32")
            "{'op': 'nisa.sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': '1 - pid', "
            "'recv_from_rank': '(pid + 1) % 2', 'pipe_id': 3, 'dma_engine': 'gpsimd_dma'}",
            &k, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.ops[0].kind, TIR_SENDRECV);
    assert_int_equal(k.ops[0].rare->peer, 1);
    tir_kernel_free(&k);
#define SR_TILES T("m", "[128, 512]", "float32") T("o", "[128, 512]", "float32")
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 1, "
        "'recv_from_rank': 0}", "field 'recv_from_rank'", "one peer");
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 1}",
        "field 'recv_from_rank'", "missing");
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 1, "
        "'recv_from_rank': 1, 'dma_engine': 'gpsimd_dma'}", "field 'dma_engine'", "256");
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 1, "
        "'recv_from_rank': 1, 'dma_engine': 'sdma'}", "field 'dma_engine'", "gpsimd_dma");
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 1, "
        "'recv_from_rank': 1, 'peer': 1}", "field 'peer'", "given twice");
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 1, "
        "'recv_from_rank': 1, 'pipe_id': 300}", "field 'pipe_id'", NULL);
    bad("trn2/nc2", SR_TILES "{'op': 'sendrecv', 'src': 'm', 'dst': 'o', 'send_to_rank': 0, "
        "'recv_from_rank': 0}", "field 'peer'", "not another program");
#undef SR_TILES
}

/* dma_compute: one DMA_COPY per source, scaled, the later ones accumulating;
 * dst named as a later source goes first (t = 0.5 a + 4 t, not 0.5 a + 4 (0.5 a)) */
static void test_dma_compute(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    if (run("trn2", T("t", "[128, 64]", "float32")
            "{'op': 'nisa.dma_compute', 'dst': 't', 'srcs': ['a', 't'], 'reduce_op': 'nl.add',"
            " 'scales': [0.5, '2 ** 2']}", &k, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.nops, 2);
    assert_int_equal(k.ops[0].kind, TIR_DMA_COPY);
    assert_true(k.ops[0].rare->dma_scaled && k.ops[0].rare->dma_scale == 4.0f);   /* t *= 4 first */
    assert_false(k.ops[0].flags & TIR_F_RMW_ADD);
    assert_true(k.ops[1].rare->dma_scaled && k.ops[1].rare->dma_scale == 0.5f);   /* then += 0.5 a */
    assert_true(k.ops[1].flags & TIR_F_RMW_ADD);
    tir_kernel_free(&k);
#define DC_TILES T("t", "[128, 64]", "float32") T("h", "[128, 64]", "bfloat16") \
                 T("i", "[128, 1]", "int32")
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': ['a'], 'reduce_op': 'max'}",
        "field 'reduce_op'", "only add");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': ['a']}", "field 'reduce_op'",
        "missing");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': [], 'reduce_op': 'add'}",
        "field 'srcs'", "non-empty");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': ['a', 't'], 'reduce_op': "
        "'add', 'scales': [1.0]}", "field 'scales'", "2 numbers");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 'h', 'srcs': ['a', 't'], 'reduce_op': "
        "'add'}", "field 'dst'", "float32");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': ['a'], 'reduce_op': 'add', "
        "'unique_indices': false}", "field 'unique_indices'", NULL);
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': [{'tensor': 'a', 'index': "
        "'i'}, 't'], 'reduce_op': 'add'}", "field 'srcs'", "indirect");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't[0:64, :]', 'srcs': ['a[0:64, :]', "
        "'t[32:96, :]'], 'reduce_op': 'add'}", "field 'srcs'", "overlaps dst");
    bad("trn2", DC_TILES "{'op': 'dma_compute', 'dst': 't', 'srcs': ['a[0:64, :]'], "
        "'reduce_op': 'add'}", "dst", NULL);
#undef DC_TILES
}

/* register_alloc / move / load / store: physical registers from r63 down,
 * one per register_alloc statement (a loop reuses it) */
static void test_registers(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    if (run("trn2", T("s", "[1, 1]", "int32")
            "{'op': 'register_alloc', 'reg': 'a', 'x': 3},"
            "{'op': 'for', 'var': 'i', 'range': [2], 'body': ["
            "  {'op': 'nisa.register_alloc', 'reg': 'b'},"
            "  {'op': 'register_move', 'dst': 'b', 'src': 'a'}]},"
            "{'op': 'register_load', 'dst': 'b', 'src': 's'},"
            "{'op': 'register_store', 'dst': 's', 'src': 'a'},"
            "{'op': 'register_move', 'dst': 'a', 'src': 'a + 1'}", &k, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.nops, 6);
    assert_int_equal(k.ops[0].kind, TIR_REGISTER_MOVE);
    assert_int_equal(k.ops[0].rare->reg, 63);
    assert_int_equal(k.ops[0].rare->reg_imm, 3);
    assert_int_equal(k.ops[1].rare->reg, 62);
    assert_int_equal(k.ops[1].rare->reg_src, 63);
    assert_int_equal(k.ops[2].rare->reg, 62);            /* same statement, same register */
    assert_int_equal(k.ops[3].kind, TIR_LOAD_TENSOR_TO_REGISTER);
    assert_int_equal(k.ops[4].kind, TIR_REGISTER_STORE);
    assert_int_equal(k.ops[5].rare->reg_src, -1);        /* 'a + 1' is an expression: 64 */
    assert_int_equal(k.ops[5].rare->reg_imm, 64);
    tir_kernel_free(&k);
    bad("trn2", "{'op': 'register_move', 'dst': 'q', 'src': 1}", "field 'dst'",
        "not a register");
    bad("trn2", "{'op': 'register_alloc', 'reg': 'q'},"
        "{'op': 'register_move', 'dst': 'q', 'src': 4294967296}", "field 'src'", "32-bit");
    bad("trn2", T("f", "[1, 1]", "float32") "{'op': 'register_alloc', 'reg': 'q'},"
        "{'op': 'register_store', 'dst': 'f', 'src': 'q'}", "field 'dst'", "int32");
    bad("trn2", T("f", "[1, 2]", "int32") "{'op': 'register_alloc', 'reg': 'q'},"
        "{'op': 'register_load', 'dst': 'q', 'src': 'f'}", "field 'src'", "exactly one");
    bad("trn2", "{'op': 'register_alloc', 'reg': 'q'},"
        "{'op': 'register_store', 'dst': 'a[0:1, 0:1]', 'src': 'q'}", "field 'dst'", "int32");
    bad("trn2", "{'op': 'register_alloc'}", "field 'reg'", "missing");
}

/* register_alloc in an "iterations" body (a loop the front-end runs per
 * iteration, whose objects are otherwise not memoised) inside a loop that
 * runs it again: every run is the same statement, so the same register
 * (a dynamic_range body must be the same instructions each time) */
static void test_registers_iterations_body(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    if (run("trn2", "{'op': 'for', 'var': 'i', 'range': [3], 'body': ["
            "  {'op': 'affine_range', 'iterations': [["
            "    {'op': 'register_alloc', 'reg': 'c', 'x': 1}]]}]}", &k, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.nops, 3);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(k.ops[i].kind, TIR_REGISTER_MOVE);
        assert_int_equal(k.ops[i].rare->reg, 63);
    }
    tir_kernel_free(&k);
}

/* NKI tensor.reshape of an HBM tensor inside operands (a: [128, 64]) */
static void test_reshape(void **state)
{
    (void)state;
    tir_kernel_t k;
    tpb_err_t e;
    if (run("trn2", T("t", "[64, 128]", "float32") T("i", "[64, 1]", "int32")
            "{'op': 'load', 'dst': 't', 'src': 'a.reshape(64, 128)'},"
            "{'op': 'load', 'dst': 't[0:32, :]', 'src': 'a.reshape((2, 32, 128))[1, :, :]'},"
            "{'op': 'dma_copy', 'dst': 't', 'src': {'tensor': 'a.reshape([64, 128])', 'index': 'i'}}",
            &k, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(k.ops[0].src[0]->step[0], 128);
    assert_int_equal(k.ops[1].src[0]->offset, 32 * 128);
    assert_int_equal(k.ops[2].kind, TIR_INDIRECT_LOAD);
    assert_int_equal(k.ops[2].src[0]->step[0], 128);
    assert_int_equal(k.ops[2].rare->index_bound, 64);
    tir_kernel_free(&k);
    bad("trn2", T("t", "[64, 128]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a.reshape(64, 100)'}",
        "field 'src'", "(8192 elements) to 6400");
    bad("trn2", T("t", "[64, 128]", "float32") "{'op': 'load', 'dst': 't.reshape(128, 64)', 'src': 'a'}",
        "field 'dst'", "only HBM tensors");
    bad("trn2", T("t", "[64, 128]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a.reshape(64, 128'}",
        "field 'src'", "unclosed");
    bad("trn2", T("t", "[64, 128]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a.reshape(n, 128)'}",
        "field 'src'", "reshape dimension 0");
    bad("trn2", T("t", "[64, 128]", "float32") "{'op': 'load', 'dst': 't', 'src': 'a.reshape(0, 128)'}",
        "field 'src'", "dimension 0 is 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_defaults),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_rounding_alu_ops),
        cmocka_unit_test(test_sendrecv_nki_names),
        cmocka_unit_test(test_dma_compute),
        cmocka_unit_test(test_registers),
        cmocka_unit_test(test_registers_iterations_body),
        cmocka_unit_test(test_reshape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
