/* Fuzz-style robustness: mutate valid kernel files with a seeded PRNG and
 * check the front-end always returns cleanly (0, or -1 with a message).
 * Run under ASan/UBSan to catch memory errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include <cmocka.h>

#include "fileio.h"
#include "builder.h"
#include "frontend.h"

typedef struct {
    uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r)
{
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33);
}

/* Mutations that keep a chance of staying JSON: JSON-significant bytes,
 * digits, names, deletions and duplications of ranges. */
static size_t mutate(rng_t *r, char *buf, size_t len, size_t cap)
{
    static const char *const tokens[] = {
        "{", "}", "[", "]", ",", ":", "\"", "0", "-1", "128", "99999999999", "1e308", "null",
        "true", "\"op\"", "\"for\"", "\"tile\"", "\"body\"", "[]", "{}", "\"a[0:1]\"",
        "\"i*\"", "\"min(\"", "\"::\"", "\"pid\"", "\"psum\"", "\\u0000", "\"x\"",
    };
    int n = 1 + (int)(rnd(r) % 4);
    for (int m = 0; m < n && len > 0; m++) {
        size_t pos = rnd(r) % len;
        switch (rnd(r) % 5) {
        case 0:   /* flip a byte */
            buf[pos] = (char)(rnd(r) & 0x7f);
            break;
        case 1: { /* delete a range */
            size_t k = 1 + rnd(r) % 16;
            if (pos + k > len)
                k = len - pos;
            memmove(buf + pos, buf + pos + k, len - pos - k);
            len -= k;
            break;
        }
        case 2: { /* insert a token */
            const char *t = tokens[rnd(r) % (sizeof tokens / sizeof tokens[0])];
            size_t k = strlen(t);
            if (len + k < cap) {
                memmove(buf + pos + k, buf + pos, len - pos);
                memcpy(buf + pos, t, k);
                len += k;
            }
            break;
        }
        case 3: { /* duplicate a range */
            size_t k = 1 + rnd(r) % 64;
            if (pos + k > len)
                k = len - pos;
            if (len + k < cap) {
                memmove(buf + pos + k, buf + pos, len - pos);
                len += k;
            }
            break;
        }
        default: /* replace a digit with a big one */
            for (size_t i = pos; i < len; i++)
                if (buf[i] >= '0' && buf[i] <= '9') {
                    buf[i] = (char)('0' + rnd(r) % 10);
                    break;
                }
            break;
        }
    }
    buf[len] = 0;
    return len;
}

static void fuzz_file(const char *path, uint64_t seed, int rounds)
{
    uint8_t *orig;
    size_t olen;
    tpb_err_t err;
    if (fio_read_all(path, &orig, &olen, &err))
        fail_msg("%s", err.msg);
    size_t cap = olen * 2 + 4096;
    char *buf = malloc(cap);
    rng_t r = {seed};
    int ok = 0, failed = 0;
    for (int i = 0; i < rounds; i++) {
        memcpy(buf, orig, olen);
        size_t len = mutate(&r, buf, olen, cap);
        tir_kernel_t k;
        memset(&err, 0, sizeof err);
        enc_front_opts_t o = {NULL, (int)(rnd(&r) % 2), 100000, NULL};
        int rc = enc_parse_kernel_json_opts(buf, len, "fuzz.json", TPB_SOURCE_DIR "/examples/kernels",
                                            &o, &k, &err);
        if (rc == 0) {
            ok++;
            assert_true(k.nops >= 0 && k.nops <= 100000);
            for (int n = 0; n < k.nops; n++)
                assert_true(k.ops[n].dst->tensor < k.ntensors);
        } else {
            assert_int_equal(rc, -1);
            failed++;
            assert_true(err.msg[0] != 0);
            assert_non_null(strstr(err.msg, "fuzz.json"));
        }
        tir_kernel_free(&k);
    }
    /* the mutations must exercise both outcomes */
    assert_true(failed > 0);
    assert_true(ok + failed == rounds);
    free(buf);
    free(orig);
}

/* ---- structure-aware mutation: valid JSON, wrong values ---- */

static void collect(cJSON *n, cJSON **nodes, int *count, int cap)
{
    for (cJSON *c = n->child; c; c = c->next) {
        if (*count < cap)
            nodes[(*count)++] = c;
        collect(c, nodes, count, cap);
    }
}

static cJSON *random_value(rng_t *r)
{
    static const char *const strs[] = {
        "t", "a[0:1]", "a[::0]", "x[i*128:(i+1)*128, :]", "min(", "i // 0", "pid", "psum",
        "float64", "exp", "add", "skip", "pool", "act", "ta[0:rows, :]", "99999999999999999999",
        "tab", "sa", "ps", "1 - pid", "t[0:200]", "-1", "cdiv(300, 0)", "nl.ds(0, 128)",
        "out[300, 0]", "",
    };
    switch (rnd(r) % 8) {
    case 0: return cJSON_CreateNumber((double)(int32_t)rnd(r));
    case 1: return cJSON_CreateNumber((double)(rnd(r) % 300));
    case 2: return cJSON_CreateNumber(1e300);
    case 3: return cJSON_CreateBool(rnd(r) & 1);
    case 4: return cJSON_CreateArray();
    case 5: return cJSON_CreateObject();
    case 6: {
        cJSON *a = cJSON_CreateArray();
        int n = (int)(rnd(r) % 5);
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber((double)(rnd(r) % 600) - 100));
        return a;
    }
    default: return cJSON_CreateString(strs[rnd(r) % (sizeof strs / sizeof strs[0])]);
    }
}

static void fuzz_tree(const char *path, uint64_t seed, int rounds)
{
    uint8_t *orig;
    size_t olen;
    tpb_err_t err;
    if (fio_read_all(path, &orig, &olen, &err))
        fail_msg("%s", err.msg);
    rng_t r = {seed};
    int ok = 0, failed = 0;
    for (int i = 0; i < rounds; i++) {
        cJSON *root = cJSON_ParseWithLength((const char *)orig, olen);
        assert_non_null(root);
        cJSON *nodes[4096];
        int n = 0;
        collect(root, nodes, &n, 4096);
        int muts = 1 + (int)(rnd(&r) % 3);
        for (int m = 0; m < muts && n > 0; m++) {
            cJSON *victim = nodes[rnd(&r) % (unsigned)n];
            cJSON *nv = random_value(&r);
            /* replace in place: swap payloads so the node list stays valid */
            cJSON tmp = *victim;
            victim->type = nv->type;
            victim->valuedouble = nv->valuedouble;
            victim->valueint = nv->valueint;
            victim->valuestring = nv->valuestring;
            victim->child = nv->child;
            nv->type = tmp.type;
            nv->valuestring = tmp.valuestring;
            nv->child = tmp.child;
            cJSON_Delete(nv);
            /* the removed subtree's nodes are gone: rebuild the list */
            n = 0;
            collect(root, nodes, &n, 4096);
        }
        char *text = cJSON_PrintUnformatted(root);
        cJSON_Delete(root);
        tir_kernel_t k;
        memset(&err, 0, sizeof err);
        enc_front_opts_t o = {NULL, 0, 100000, NULL};
        int rc = enc_parse_kernel_json_opts(text, strlen(text), "tree.json",
                                            TPB_SOURCE_DIR "/examples/kernels", &o, &k, &err);
        if (rc == 0) {
            ok++;
            char *txt;
            assert_int_equal(enc_tir_format(&k, &txt, NULL, &err), 0);
            free(txt);
        } else {
            assert_int_equal(rc, -1);
            failed++;
            assert_non_null(strstr(err.msg, "tree.json"));
            /* structure-aware mutations keep the JSON valid */
            assert_null(strstr(err.msg, "invalid JSON"));
        }
        tir_kernel_free(&k);
        free(text);
    }
    assert_true(failed > 0);
    assert_true(ok > 0);
    free(orig);
}

static void test_fuzz_tree(void **state)
{
    (void)state;
    fuzz_tree(TPB_SOURCE_DIR "/examples/kernels/attention.json", 3, 700);
    fuzz_tree(TPB_SOURCE_DIR "/examples/kernels/tensor_add.json", 5, 700);
    fuzz_tree(TPB_SOURCE_DIR "/examples/kernels/multicore_relu.json", 9, 300);
}

/* ---- hand-built ops through the C API: random fields, never a crash ---- */

static tir_ap_t random_ap(rng_t *r, int ntensors)
{
    tir_ap_t a;
    memset(&a, 0, sizeof a);
    a.tensor = (int)(rnd(r) % (unsigned)(ntensors + 1)) - 1;
    a.ndim = (int)(rnd(r) % 4);
    a.offset = (int64_t)(rnd(r) % 600) - 50;
    for (int d = 0; d < TIR_MAX_DIMS; d++) {
        a.count[d] = (rnd(r) % 8 == 0) ? (int64_t)(rnd(r) % 200) : 1 + (int64_t)(rnd(r) % 128);
        a.step[d] = (rnd(r) % 4 == 0) ? (int64_t)(rnd(r) % 2048) - 1024 : 1;
    }
    if (rnd(r) % 16 == 0)
        a.count[0] = (int64_t)1 << 40;
    return a;
}

static void test_fuzz_c_ops(void **state)
{
    (void)state;
    rng_t r = {12345};
    tir_kernel_t k;
    tpb_err_t err;
    enc_builder_t b;
    assert_int_equal(enc_builder_init(&b, &k, "fuzz", NULL, &err), 0);
    enc_input(&b, "a", ISA_DT_FP32, 2, (int64_t[]){300, 512});
    enc_output(&b, "o", ISA_DT_BF16, 3, (int64_t[]){4, 8, 16});
    enc_tile(&b, "t", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    enc_tile(&b, "i", TIR_T_SBUF, ISA_DT_INT32, 2, (int64_t[]){128, 1});
    enc_tile(&b, "u", TIR_T_SBUF, ISA_DT_UINT16, 2, (int64_t[]){128, 8});
    enc_tile(&b, "p", TIR_T_PSUM, ISA_DT_FP32, 2, (int64_t[]){128, 512});
    enc_tile(&b, "w", TIR_T_SBUF, ISA_DT_BF16, 3, (int64_t[]){128, 4, 32});
    enc_shared_identity_matrix(&b, "id", 128, ISA_DT_BF16);
    assert_false(b.failed);
    int nt = k.ntensors, accepted = 0;
    for (int it = 0; it < 20000; it++) {
        tir_op_t op;
        tir_op_init(&op, (tir_opkind_t)(rnd(&r) % TIR_OP_COUNT));
        op.nsrc = (int)(rnd(&r) % 5);
        op.dst = enc_in(&b, random_ap(&r, nt));
        for (int j = 0; j < 4; j++)
            op.src[j] = enc_in(&b, random_ap(&r, nt));
        if (rnd(&r) % 2)
            op.dst2 = enc_in(&b, random_ap(&r, nt));
        if (rnd(&r) % 2)
            op.index = enc_in(&b, random_ap(&r, nt));
        if (rnd(&r) % 2)
            op.bias = enc_in(&b, random_ap(&r, nt));
        op.s0.is_ap = rnd(&r) % 3 == 0;
        op.s0.ap = enc_in(&b, random_ap(&r, nt));
        op.s1.is_ap = rnd(&r) % 3 == 0;
        op.s1.ap = enc_in(&b, random_ap(&r, nt));
        op.engine = (int)(rnd(&r) % 9) - 1;
        op.op0 = (int)(rnd(&r) % 32) - 1;
        op.op1 = (int)(rnd(&r) % 32) - 1;
        op.reduce_op = (int)(rnd(&r) % 32) - 1;
        tir_op_rare_t rare = tir_rare_default;
        rare.reduce_cmd = (int)(rnd(&r) % 7) - 1;
        op.func = (int)(rnd(&r) % 26) - 1;
        op.flags = rnd(&r) & 0xfff;
        rare.axes = rnd(&r) % 64;
        op.cmp = (int)(rnd(&r) % 8) - 1;
        int pat_ndim = (int)(rnd(&r) % 6) - 1;
        int tile_pos0 = (int)(rnd(&r) % 160) - 16;
        int tile_size1 = (int)(rnd(&r) % 160) - 16;
        unsigned compress_ratio = rnd(&r) % 5;
        rare.dge_mode = (int)(rnd(&r) % 4) - 1;
        rare.oob_mode = (int)(rnd(&r) % 3) - 1;
        rare.qos = (int)(rnd(&r) % 300) - 20;
        rare.pat_ndim = pat_ndim;
        rare.tile_pos[0] = tile_pos0;
        rare.tile_size[1] = tile_size1;
        rare.compress_ratio = compress_ratio;
        rare.n_transpose_axes = (int)(rnd(&r) % 5);
        for (int j = 0; j < 4; j++)
            rare.transpose_axes[j] = (int)(rnd(&r) % 6);
        rare.num_elem_per_idx = (int)(rnd(&r) % 40);
        rare.num_valid = (int)(rnd(&r) % 5000) - 10;
        rare.reg = (int)(rnd(&r) % 80) - 5;
        rare.barrier_cores = rnd(&r) % 8;
        rare.peer = (int)(rnd(&r) % 4) - 1;
        rare.index_bound = (int64_t)(rnd(&r) % 2000) - 10;
        op.rare = enc_rare_in(&b, &rare);
        b.failed = false;
        int rc = enc_emit(&b, &op);
        if (rc >= 0)
            accepted++;
        else
            assert_true(err.msg[0] != 0);
    }
    /* nearly all random ops are invalid; the point is that none crashes */
    assert_true(k.nops == accepted);
    enc_builder_free(&b);
    tir_kernel_free(&k);
}

static void test_fuzz_tensor_add(void **state)
{
    (void)state;
    fuzz_file(TPB_SOURCE_DIR "/examples/kernels/tensor_add.json", 1, 1500);
}

static void test_fuzz_attention(void **state)
{
    (void)state;
    fuzz_file(TPB_SOURCE_DIR "/examples/kernels/attention.json", 7, 1500);
}

static void test_fuzz_softmax(void **state)
{
    (void)state;
    fuzz_file(TPB_SOURCE_DIR "/examples/kernels/softmax.json", 42, 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_tensor_add),
        cmocka_unit_test(test_fuzz_attention),
        cmocka_unit_test(test_fuzz_softmax),
        cmocka_unit_test(test_fuzz_tree),
        cmocka_unit_test(test_fuzz_c_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
