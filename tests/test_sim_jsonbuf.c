/* The trace writer's fast formatters (common/jsonw.h) must produce exactly
 * the bytes of the printf conversions they replace: checked against
 * snprintf on edge values and on many pseudo-random values, and the JSON
 * escaping against a plain reference implementation of the documented rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jsonw.h"
#include "xorshift.h"

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
    return xorshift64(&r->s);
}

/* A value of random magnitude: all digit counts are equally likely. */
static uint64_t any_magnitude(rng_t *r)
{
    return next(r) >> (next(r) % 64);
}

/* The text a jb_t fills when `fn` appends v to an empty memory buffer. */
#define APPEND_TEXT(fn, v, out)                                                    \
    do {                                                                           \
        jb_t b_;                                                                   \
        assert_int_equal(jb_init_mem(&b_, 8), 0);                                  \
        fn(&b_, (v));                                                              \
        assert_false(jb_failed(&b_));                                              \
        assert_true(b_.len < sizeof(out));                                         \
        memcpy((out), b_.buf, b_.len);                                             \
        (out)[b_.len] = 0;                                                         \
        jb_free(&b_);                                                              \
    } while (0)

static void check_u64(uint64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%" PRIu64, v);
    APPEND_TEXT(jb_u64, v, got);
    if (strcmp(want, got) != 0)
        fail_msg("jb_u64(%s) gave '%s'", want, got);
}

static void check_i64(int64_t v)
{
    char want[32], got[32];
    snprintf(want, sizeof want, "%" PRId64, v);
    APPEND_TEXT(jb_i64, v, got);
    if (strcmp(want, got) != 0)
        fail_msg("jb_i64(%s) gave '%s'", want, got);
}

static void check_us(uint64_t ps)
{
    char want[48], got[48];
    snprintf(want, sizeof want, "%" PRIu64 ".%06" PRIu64, ps / 1000000u, ps % 1000000u);
    APPEND_TEXT(jb_us, ps, got);
    if (strcmp(want, got) != 0)
        fail_msg("jb_us(%" PRIu64 ") gave '%s', want '%s'", ps, got, want);
}

static void test_u64_matches_snprintf(void **state)
{
    (void)state;
    for (uint64_t v = 0; v < 20000; v++)
        check_u64(v);
    for (uint64_t p = 1, k = 0; k < 20; k++, p *= 10) {
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
    }
    for (unsigned k = 0; k < 64; k++) {
        uint64_t p = (uint64_t)1 << k;
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
    }
    check_u64(UINT32_MAX);
    check_u64(UINT64_MAX);
    check_u64(UINT64_MAX - 1);
    check_u64(10000000000000000000ull);
    rng_t r = { 0x1234567887654321ull };
    for (int i = 0; i < 200000; i++)
        check_u64(any_magnitude(&r));
}

static void test_i64_matches_snprintf(void **state)
{
    (void)state;
    check_i64(0);
    check_i64(-1);
    check_i64(1);
    check_i64(INT64_MIN);
    check_i64(INT64_MIN + 1);
    check_i64(INT64_MAX);
    check_i64(INT32_MIN);
    check_i64(-100);
    check_i64(-99);
    rng_t r = { 0x9e3779b97f4a7c15ull };
    for (int i = 0; i < 100000; i++) {
        int64_t v = (int64_t)any_magnitude(&r);
        check_i64(v);
        check_i64(-v);
    }
}

static void test_us_matches_snprintf(void **state)
{
    (void)state;
    const uint64_t edges[] = { 0, 1, 9, 10, 999999, 1000000, 1000001, 1999999, 123456789,
                               UINT64_MAX, UINT64_MAX - 999999, 18446744073709000000ull };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_us(edges[i]);
    for (uint64_t ps = 0; ps < 3000000; ps += 997)
        check_us(ps);
    rng_t r = { 42 };
    for (int i = 0; i < 200000; i++)
        check_us(any_magnitude(&r));
}

/* The documented escaping rule, written the plain way. */
static void ref_escape(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    n += (size_t)snprintf(out + n, cap - n, "\"");
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            n += (size_t)snprintf(out + n, cap - n, "\\%c", ch);
        else if (ch < 0x20)
            n += (size_t)snprintf(out + n, cap - n, "\\u%04x", ch);
        else
            n += (size_t)snprintf(out + n, cap - n, "%c", ch);
    }
    snprintf(out + n, cap - n, "\"");
}

static void check_jstr(const char *s)
{
    size_t cap = 6 * (s ? strlen(s) : 0) + 3;
    char *want = malloc(cap), *got = malloc(cap);
    assert_non_null(want);
    assert_non_null(got);
    ref_escape(s, want, cap);
    jb_t b;
    assert_int_equal(jb_init_mem(&b, 8), 0);
    jb_jstr(&b, s);
    assert_false(jb_failed(&b));
    assert_true(b.len < cap);
    memcpy(got, b.buf, b.len);
    got[b.len] = 0;
    jb_free(&b);
    if (strcmp(want, got) != 0)
        fail_msg("jb_jstr gave '%s', want '%s'", got, want);
    free(want);
    free(got);
}

static void test_jstr_escaping(void **state)
{
    (void)state;
    check_jstr(NULL);
    check_jstr("");
    check_jstr("plain text");
    check_jstr("\"");
    check_jstr("\\");
    check_jstr("a\"b\\c\nd\te\x01\x1f\x7f \xc3\xa9 end");
    char one[2] = { 0, 0 };
    for (int c = 1; c < 256; c++) {
        one[0] = (char)c;
        check_jstr(one);
    }
    rng_t r = { 7 };
    char s[300];
    for (int i = 0; i < 20000; i++) {
        size_t n = (size_t)(next(&r) % (sizeof s - 1));
        for (size_t k = 0; k < n; k++) {
            /* mostly printable, with escapes and high bytes mixed in */
            unsigned v = (unsigned)(next(&r) % 300);
            s[k] = (char)(v < 200 ? 0x20 + v % 95 : v < 260 ? 1 + v % 31 : v < 280 ? '"' + (v & 1) * ('\\' - '"') : 0x80 + v % 128);
        }
        s[n] = 0;
        check_jstr(s);
    }
    /* long strings: escaped in chunks, escapes on both sides of a chunk end */
    char *big = malloc(20001);
    assert_non_null(big);
    for (int round = 0; round < 20; round++) {
        for (size_t k = 0; k < 20000; k++)
            big[k] = (char)(next(&r) % 50 ? 'a' + k % 26 : (next(&r) & 1) ? '"' : '\n');
        big[4095 + (size_t)round % 3] = '\\';
        big[20000 - (size_t)round * 997] = 0;
        check_jstr(big);
    }
    free(big);
}

/* cJSON's escaping (print_string_ptr), written the plain way: the short
 * forms of \b \f \n \r \t, \u00xx for the other control bytes. */
static size_t ref_cjson(const char *s, size_t n, char *out)
{
    size_t k = 0;
    out[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *sh = ch == '\b' ? "b" : ch == '\f' ? "f" : ch == '\n' ? "n" : ch == '\r' ? "r"
                       : ch == '\t' ? "t" : NULL;
        if (ch == '"' || ch == '\\')
            k += (size_t)sprintf(out + k, "\\%c", ch);
        else if (sh)
            k += (size_t)sprintf(out + k, "\\%s", sh);
        else if (ch < 0x20)
            k += (size_t)sprintf(out + k, "\\u%04x", ch);
        else
            out[k++] = (char)ch;
    }
    out[k++] = '"';
    return k;
}

/* jw_quoted_into (inline for 4..16 plain bytes, jw_quoted_long otherwise)
 * against the reference: every length up to 40, each byte that needs
 * escaping (and a few that do not) at each position, the bytes past n
 * never read into the text. */
static void test_quoted_into(void **state)
{
    (void)state;
    static const unsigned char special[] = { '"', '\\', 0x01, '\n', '\t', 0x1f, 0x7f, 0x80, 0xff, ' ' };
    char buf[64], want[6 * 64 + 16], got[6 * 64 + 16];
    for (size_t n = 0; n <= 40; n++)
        for (size_t at = 0; at <= n; at++)
            for (size_t k = 0; k < sizeof special; k++) {
                for (size_t i = 0; i < sizeof buf; i++)
                    buf[i] = (char)('a' + i % 26);
                if (at < n)
                    buf[at] = (char)special[k];
                buf[n] = '"';   /* past the string: must not be looked at */
                memset(got, 0x55, sizeof got);
                size_t wn = ref_cjson(buf, n, want), gn = jw_quoted_into(got, buf, n);
                assert_int_equal(gn, wn);
                assert_memory_equal(got, want, wn);
            }
}

/* jw_escape_bits: nonzero exactly when one of the 8 bytes is '"', '\\' or
 * below 0x20; every byte value at every position, among neighbours on
 * either side of each boundary (so a carry or borrow between bytes would
 * show). */
static void test_escape_bits(void **state)
{
    (void)state;
    static const unsigned char fill[] = { 'a', ' ', '!', '#', '[', ']', 0x7f, 0x80, 0xa2, 0xdc, 0xff };
    for (unsigned c = 0; c < 256; c++)
        for (unsigned at = 0; at < 8; at++)
            for (size_t f = 0; f < sizeof fill; f++) {
                unsigned char b[8];
                memset(b, fill[f], sizeof b);
                b[at] = (unsigned char)c;
                uint64_t w;
                memcpy(&w, b, 8);
                bool want = c == '"' || c == '\\' || c < 0x20;
                assert_int_equal(jw_escape_bits(w) != 0, want);
            }
}

/* Whatever the buffer size, a FILE-backed buffer writes exactly the bytes a
 * memory buffer holds (drains, write-through of long pieces, printf). */
static void fill(jb_t *b)
{
    char big[5001];
    for (size_t i = 0; i + 1 < sizeof big; i++)
        big[i] = (char)('a' + i % 26);
    big[sizeof big - 1] = 0;
    rng_t r = { 99 };
    for (int i = 0; i < 3000; i++) {
        switch (next(&r) % 7) {
        case 0: jb_u64(b, any_magnitude(&r)); break;
        case 1: jb_i64(b, -(int64_t)(next(&r) >> 2)); break;
        case 2: jb_us(b, any_magnitude(&r)); break;
        case 3: jb_jstr(b, "x\"y\n"); break;
        case 4: jb_lit(b, ",\"key\":"); break;
        case 5: jb_put(b, big, (size_t)(next(&r) % (sizeof big - 1))); break;
        default: jb_printf(b, "%g|%s|%u", 1.5, big + 4000, 7u); break;
        }
    }
}

/* f (written from its start) holds m's bytes; closes f. */
static void assert_file_holds(FILE *f, const jb_t *m)
{
    assert_int_equal((size_t)ftell(f), m->len);
    char *got = malloc(m->len);
    assert_non_null(got);
    rewind(f);
    assert_int_equal(fread(got, 1, m->len, f), m->len);
    assert_memory_equal(got, m->buf, m->len);
    free(got);
    fclose(f);
}

static void test_file_equals_memory(void **state)
{
    (void)state;
    jb_t m;
    assert_int_equal(jb_init_mem(&m, 1), 0);
    fill(&m);
    assert_false(jb_failed(&m));
    const size_t caps[] = { 1, 7, 64, 4096, 0 };
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        FILE *f = tmpfile();
        assert_non_null(f);
        jb_t b;
        assert_int_equal(jb_init_file(&b, f, caps[c]), 0);
        fill(&b);
        jb_flush(&b);
        assert_false(jb_failed(&b));
        jb_free(&b);
        assert_file_holds(f, &m);
    }
    jb_free(&m);
}

/* A writer over a lent chunk (jb_init_lent) writes the same bytes, never
 * past the chunk, and leaves the chunk to its owner: a chunk smaller than
 * one reservation (jb_u64's 20 bytes) moves the text to a block of the
 * writer's own, which jb_free then frees (ASan: a lent chunk on the stack
 * freed, or the owned block leaked, fails). */
static void test_lent_chunk_equals_memory(void **state)
{
    (void)state;
    jb_t m;
    assert_int_equal(jb_init_mem(&m, 1), 0);
    fill(&m);
    const size_t caps[] = { 7, 64, 4096 };
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        FILE *f = tmpfile();
        assert_non_null(f);
        char chunk[4096 + 16];
        memset(chunk, '#', sizeof chunk);
        jb_t b;
        jb_init_lent(&b, f, chunk, caps[c]);
        fill(&b);
        if (caps[c] != 64)   /* moved out of the small one; kept the large one */
            assert_int_equal(b.lent, caps[c] == 4096);
        jb_flush(&b);
        assert_false(jb_failed(&b));
        jb_free(&b);
        for (size_t i = caps[c]; i < sizeof chunk; i++)
            assert_int_equal(chunk[i], '#');
        assert_file_holds(f, &m);
    }
    jb_free(&m);
}

static void test_printf_matches_snprintf(void **state)
{
    (void)state;
    jb_t b;
    assert_int_equal(jb_init_mem(&b, 2), 0);
    jb_lit(&b, "<");
    jb_printf(&b, "%g,%g,%u,%s", 0.96, 1.2, 100u, "z");
    char want[64];
    snprintf(want, sizeof want, "<%g,%g,%u,%s", 0.96, 1.2, 100u, "z");
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.buf, want, b.len);
    jb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64_matches_snprintf),
        cmocka_unit_test(test_i64_matches_snprintf),
        cmocka_unit_test(test_us_matches_snprintf),
        cmocka_unit_test(test_jstr_escaping),
        cmocka_unit_test(test_quoted_into),
        cmocka_unit_test(test_escape_bits),
        cmocka_unit_test(test_file_equals_memory),
        cmocka_unit_test(test_lent_chunk_equals_memory),
        cmocka_unit_test(test_printf_matches_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
