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
#include <cmocka.h>

#include "fileio.h"
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
        enc_front_opts_t o = {NULL, (int)(rnd(&r) % 2), 100000};
        int rc = enc_parse_kernel_json_opts(buf, len, "fuzz.json", TPB_SOURCE_DIR "/examples/kernels",
                                            &o, &k, &err);
        if (rc == 0) {
            ok++;
            assert_true(k.nops >= 0 && k.nops <= 100000);
            for (int n = 0; n < k.nops; n++)
                assert_true(k.ops[n].dst.tensor < k.ntensors);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
