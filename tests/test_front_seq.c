/* test_front_seq.c - bad input to the accumulator and sequence op family
 * (encoder/fj_ops_seq.c, validate_seq.c), to activate2's NKI parameters and
 * to NKI mask= (fj_ops_compute.c fj_get_mask, fj_mask.c):
 * every error names the op path and the field.  The working forms are pinned by the golden cases
 * ts_cumulative_scan, ts_reduce_chain, sequence_bounds, nonzero_count and
 * topk_snake. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "frontend.h"

/* tiles every case may use; one op is appended as body[14] */
static const char TILES[] =
    "{`op`: `tile`, `name`: `x`, `shape`: [16, 32], `dtype`: `float32`},"
    "{`op`: `tile`, `name`: `y`, `shape`: [16, 32], `dtype`: `float32`},"
    "{`op`: `tile`, `name`: `xi`, `shape`: [16, 32], `dtype`: `int32`},"
    "{`op`: `tile`, `name`: `c`, `shape`: [16, 1], `dtype`: `float32`},"
    "{`op`: `tile`, `name`: `ci`, `shape`: [16, 1], `dtype`: `int32`},"
    "{`op`: `tile`, `name`: `r`, `shape`: [16, 2], `dtype`: `float32`},"
    "{`op`: `tile`, `name`: `ids`, `shape`: [1, 32], `dtype`: `float32`},"
    "{`op`: `tile`, `name`: `b`, `shape`: [1, 2, 32], `dtype`: `float32`},"
    "{`op`: `tile`, `name`: `bh`, `shape`: [1, 2, 32], `dtype`: `float16`},"
    "{`op`: `tile`, `name`: `nz`, `shape`: [16, 33], `dtype`: `int32`},"
    "{`op`: `tile`, `name`: `s`, `shape`: [32, 3], `dtype`: `bfloat16`},"
    "{`op`: `tile`, `name`: `v`, `shape`: [32, 8], `dtype`: `bfloat16`},"
    "{`op`: `tile`, `name`: `iv`, `shape`: [32, 8], `dtype`: `uint32`},"
    "{`op`: `tile`, `name`: `s8`, `shape`: [8, 3], `dtype`: `bfloat16`},";

static int parse(const char *op, tpb_err_t *e)
{
    size_t n = strlen(TILES) + strlen(op) + 64;
    char *s = malloc(n);
    snprintf(s, n, "{`inputs`: [], `outputs`: [], `body`: [%s%s]}", TILES, op);
    for (char *p = s; *p; p++)
        *p = *p == '`' ? '"' : *p == '\'' ? '"' : *p;
    tir_kernel_t k;
    enc_front_opts_t o = {NULL, 0, 0, NULL};
    memset(e, 0, sizeof *e);
    int rc = enc_parse_kernel_json_opts(s, strlen(s), "k.json", ".", &o, &k, e);
    tir_kernel_free(&k);
    free(s);
    return rc;
}

typedef struct {
    const char *op, *field, *what;
} bad_t;

static const bad_t bad[] = {
    /* tensor_scalar_cumulative */
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op1': 'add', 'imm0': 1}",
     "field 'op0'", "missing"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', 'op1': 'add'}",
     "field 'imm0'", "missing"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'op1': 'divide', 'imm0': 1}", "field 'op1'", "not a cumulative op"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'bitwise_and', "
     "'op1': 'add', 'imm0': 1}", "field 'op0'", "not an arithmetic"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'op1': 'add', 'imm0': 1, 'reduce_cmd': 'load_reduce'}", "field 'imm1'", "missing"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'op1': 'add', 'imm0': 1, 'reduce_cmd': 'idle'}", "field 'reduce_cmd'", "idle"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'xi', 'op0': 'add', "
     "'op1': 'add', 'imm0': 1}", "field 'src'", "32-bit integers"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'op1': 'add', 'imm0': 'ci'}", "field 'imm0'", "float32"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'op1': 'add', 'imm0': 'r'}", "field 'imm0'", "[16, 1]"},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'op1': 'add', 'imm0': 1, 'engine': 'gpsimd'}", "field 'engine'", NULL},
    {"{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y[:, 0:8]', 'src': 'x', 'op0': 'add', "
     "'op1': 'add', 'imm0': 1}", "field 'dst'", "expected 16 x 32"},
    /* tensor_scalar_reduce */
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'operand0': 1}", "field 'reduce_op'", "missing"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'reduce_op': 'add'}", "field 'operand0'", "missing"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'operand0': 1, 'reduce_op': 'subtract'}", "field 'reduce_op'", "add, multiply, max or min"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'abs', "
     "'operand0': 2, 'reduce_op': 'add'}", "field 'operand0'", "unary"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'operand0': 1, 'reduce_op': 'add', 'reduce_cmd': 'load_reduce'}", "field 'reduce_init'",
     "missing"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'operand0': 1, 'reduce_op': 'add', 'reduce_init': 2}", "field 'reduce_init'", "load_reduce"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'operand0': 1, 'reduce_op': 'add', 'reduce_res': 'r'}", "field 'reduce_res'", "16 x 1"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'add', "
     "'operand0': 1, 'reduce_op': 'add', 'reduce_res': 'ci'}", "field 'reduce_res'", "float"},
    {"{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'src': 'x', 'op0': 'add', "
     "'operand0': 1, 'reduce_op': 'add'}", "'src'", NULL},
    /* exponential (Vector engine) */
    {"{'op': 'nisa.exponential', 'dst': 'y', 'src': 'x', 'engine': 'act'}", "field 'engine'",
     NULL},
    {"{'op': 'nisa.exponential', 'dst': 'y', 'src': 'x', 'reduce_cmd': 'reset'}",
     "field 'reduce_cmd'", "idle, reset_reduce"},
    {"{'op': 'nisa.exponential', 'dst': 'y', 'src': 'x', 'reduce_init': 'c'}",
     "field 'reduce_init'", "load_reduce"},
    {"{'op': 'nisa.exponential', 'dst': 'y', 'src': 'x', 'max_value': 'r'}", "field 'max_value'",
     "[16, 1]"},
    {"{'op': 'nisa.exponential', 'dst': 'y', 'src': 'x', 'reduce_res': 'ci'}",
     "field 'reduce_res'", "float"},
    /* activate2's NKI parameters */
    {"{'op': 'nisa.activate2', 'dst': 'y', 'data': 'x', 'imm0': 1, 'imm1': 2, 'op0': 'add', "
     "'reverse1': true}", "field 'reverse1'", "op1"},
    {"{'op': 'nisa.activate2', 'dst': 'y', 'data': 'x', 'imm0': 1, 'imm1': 2, 'op0': 'add', "
     "'func': 'prelu', 'relu_param': 'r'}", "field 'relu_param'", "[16, 1]"},
    {"{'op': 'nisa.activate2', 'dst': 'y', 'data': 'x', 'imm0': 1, 'imm1': 2, 'op0': 'add', "
     "'func': 'prelu', 'relu_param': 'ci'}", "field 'relu_param'", "float32"},
    {"{'op': 'nisa.activate2', 'dst': 'y', 'data': 'x', 'imm0': 'r', 'imm1': 2, 'op0': 'add'}",
     "field 'imm0'", NULL},
    /* NKI mask= */
    {"{'op': 'tensor_tensor_scan', 'dst': 'y', 'in0': 'x', 'in1': 'x', 'initial': 0, "
     "'op0': 'add', 'op1': 'add', 'mask': {'pattern': [[1, 32]]}}", "field 'mask'",
     "tensor_tensor_scan cannot take a mask: each element carries the scan"},
    {"{'op': 'max8', 'dst': 'v', 'src': 'v', 'mask': {'pattern': [[1, 8]]}}", "field 'mask'",
     "max8 cannot take a mask"},
    {"{'op': 'tensor_copy_predicated', 'dst': 'y', 'src': 'x', 'predicate': 'xi', "
     "'mask': {'pattern': [[1, 32]]}}", "field 'mask'",
     "tensor_copy_predicated cannot take a mask: dst keeps its value where the predicate fails"},
    {"{'op': 'dma_copy', 'dst': 'y', 'src': 'x', 'mask': {'pattern': [[1, 32]]}}",
     "field 'mask'", "dma_copy cannot take a mask"},
    {"{'op': 'activation', 'dst': 'y', 'src': 'x', 'func': 'exp', 'reduce_op': 'add', "
     "'reduce_res': 'c', 'mask': {'pattern': [[1, 32]]}}", "field 'mask'",
     "cannot also write reduce_res"},
    {"{'op': 'matmul', 'dst': 'y', 'stationary': 'x', 'moving': 'x', 'accumulate': true, "
     "'mask': {'pattern': [[1, 32]], 'channel_multiplier': -1}}", "field 'mask'",
     "an accumulating matmul is masked on a rectangle of dst"},
    {"{'op': 'tensor_tensor', 'dst': 'y', 'in0': 'x', 'in1': 'x', 'operator': 'add', "
     "'mask': {'pattern': [[1, 16]]}}", "field 'pattern'", "does not match dst"},
    {"{'op': 'tensor_tensor', 'dst': 'y', 'in0': 'x', 'in1': 'x', 'operator': 'add', "
     "'mask': {'pattern': [[1, 32]], 'fill': 1}}", "field 'fill'", NULL},
    {"{'op': 'tensor_tensor', 'dst': 'y', 'in0': 'x', 'in1': 'x', 'operator': 'add', "
     "'bogus': 1, 'mask': {'pattern': [[1, 32]]}}", "field 'bogus'", NULL},
    {"{'op': 'tensor_scalar', 'dst': 'y', 'src': 'x', 'op0': 'add', 'operand0': 1, "
     "'mask': 'i > 3'}", "field 'mask'", "one affine predicate"},
    {"{'op': 'tensor_scalar', 'dst': 'y', 'src': 'x', 'op0': 'add', 'operand0': 1, "
     "'mask': {'pattern': [[1, 16]]}}", "field 'pattern'", "does not match dst"},
    {"{'op': 'tensor_scalar', 'dst': 'y', 'src': 'x', 'op0': 'add', 'operand0': 1, "
     "'mask': {'pattern': [[1, 32]], 'fill': 0}}", "field 'fill'", NULL},
    {"{'op': 'tensor_copy', 'dst': 'y', 'src': 'x', 'engine': 'act', "
     "'mask': {'pattern': [[1, 32]]}}", "field 'mask'", "not on engine act"},
    {"{'op': 'tensor_copy', 'dst': 'y', 'src': 'x', "
     "'mask': {'pattern': [[1, 32]], 'cmp_op': 'sometimes'}}", "field 'cmp_op'", NULL},
    /* sequence_bounds */
    {"{'op': 'nisa.sequence_bounds', 'dst': 'b'}", "field 'segment_ids'", "missing"},
    {"{'op': 'nisa.sequence_bounds', 'dst': 'bh', 'segment_ids': 'ids'}", "field 'dst'",
     "float32 or int32"},
    {"{'op': 'nisa.sequence_bounds', 'dst': 'b[:, 0, :]', 'segment_ids': 'ids'}", "field 'dst'",
     "expected 1 x 64"},
    {"{'op': 'nisa.sequence_bounds', 'dst': 'b', 'segment_ids': 'ids', 'engine': 'vector'}",
     "field 'engine'", NULL},
    /* nonzero_with_count */
    {"{'op': 'nisa.nonzero_with_count', 'dst': 'nz', 'src': 'x', 'padding_val': 1e12}",
     "field 'padding_val'", NULL},
    {"{'op': 'nisa.nonzero_with_count', 'dst': 'xi', 'src': 'x'}", "field 'dst'",
     "expected 16 x 33"},
    {"{'op': 'nisa.nonzero_with_count', 'dst': 'x', 'src': 'xi'}", "field 'dst'", "int32"},
    {"{'op': 'nisa.nonzero_with_count', 'dst': 'nz', 'src': 'ids'}", "field 'dst'", NULL},
    /* topk */
    {"{'op': 'nisa.topk', 'val_dst': 'v', 'idx_dst': 'iv', 'src': 's'}", "field 'n'", "missing"},
    {"{'op': 'nisa.topk', 'val_dst': 'v', 'idx_dst': 'iv', 'src': 's', 'n': 4}", "field 'n'",
     "8 <= n"},
    {"{'op': 'nisa.topk', 'val_dst': 'v', 'idx_dst': 'iv', 'src': 's', 'n': 49}", "field 'src'",
     "fewer than n"},
    {"{'op': 'nisa.topk', 'val_dst': 'v', 'idx_dst': 'v', 'src': 's', 'n': 42}",
     "field 'idx_dst'", "uint32"},
    {"{'op': 'nisa.topk', 'val_dst': 'iv', 'idx_dst': 'iv', 'src': 's', 'n': 42}",
     "field 'val_dst'", "bfloat16"},
    {"{'op': 'nisa.topk', 'val_dst': 'v', 'idx_dst': 'iv', 'src': 'x', 'n': 42}", "field 'src'",
     "bfloat16"},
    {"{'op': 'nisa.topk', 'val_dst': 'v[:, 0:2]', 'idx_dst': 'iv[:, 0:2]', 'src': 's[:, 0:1]', "
     "'n': 17}", "field 'src'", "fewer than n"},
    {"{'op': 'nisa.topk', 'val_dst': 'v[0:8, :]', 'idx_dst': 'iv[0:8, :]', 'src': 's8', 'n': 42}",
     "field 'src'", "16-partition"},
    {"{'op': 'nisa.topk', 'val_dst': 'v[:, 0:1]', 'idx_dst': 'iv', 'src': 's', 'n': 42}",
     "field 'idx_dst'", NULL},
};

static void test_bad_input(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tpb_err_t e;
        if (parse(bad[i].op, &e) != -1)
            fail_msg("case %zu: expected a failure for %s", i, bad[i].op);
        if (!strstr(e.msg, "body[14]") || !strstr(e.msg, bad[i].field) ||
            (bad[i].what && !strstr(e.msg, bad[i].what)))
            fail_msg("case %zu: message '%s' lacks body[14] / %s / %s", i, e.msg, bad[i].field,
                     bad[i].what ? bad[i].what : "");
    }
}

/* NKI defaults: reduce_cmd reset_reduce, padding_val -1, index_offset 0 */
static void test_defaults(void **state)
{
    (void)state;
    static const char *const good[] = {
        "{'op': 'nisa.tensor_scalar_cumulative', 'dst': 'y', 'src': 'x', 'op0': 'add', "
        "'op1': 'subtract', 'imm0': 'c'}",
        "{'op': 'nisa.tensor_scalar_reduce', 'dst': 'y', 'data': 'x', 'op0': 'rsqrt', "
        "'reduce_op': 'min', 'reduce_res': 'c'}",
        "{'op': 'nisa.sequence_bounds', 'dst': 'b', 'segment_ids': 'ids'}",
        "{'op': 'tensor_copy', 'dst': 'y', 'src': 'x', 'mask': {'pattern': [[1, 32]], "
        "'channel_multiplier': -1, 'offset': 4, 'cmp_op': 'less'}}",
        "{'op': 'nisa.exponential', 'dst': 'y', 'src': 'x', 'max_value': 'c', "
        "'reduce_cmd': 'load_reduce', 'reduce_init': 'c', 'reduce_res': 'c'}",
        "{'op': 'nisa.nonzero_with_count', 'dst': 'nz', 'src': 'x'}",
        "{'op': 'nisa.topk', 'val_dst': 'v', 'idx_dst': 'iv', 'src': 's', 'n': 48}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        tpb_err_t e;
        if (parse(good[i], &e))
            fail_msg("case %zu: %s", i, e.msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
