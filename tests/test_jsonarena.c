/* common/jsonarena: the arena JSON reader against cJSON 1.7.15 itself.
 * Every text of a corpus (hand-written cases, their truncations and
 * single-byte edits, deterministic random documents) is parsed by both;
 * they must agree on success, on the end / failure position and on every
 * node (type, key, valuestring, valuedouble's bits, valueint, links). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jsonarena_diff.h"
#include "jsonread.h"

typedef struct {
    const char *s;
    size_t n;
} text_t;

#define T(lit) { lit, sizeof lit - 1 }

/* A failure message naming the text (escaped) and what differs. */
static void diff_fail(const char *s, size_t n, const char *what)
{
    char shown[200];
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < sizeof shown; i++) {
        unsigned char c = (unsigned char)s[i];
        o += (size_t)snprintf(shown + o, sizeof shown - o, c >= 32 && c < 127 ? "%c" : "\\x%02x", c);
    }
    fail_msg("text '%s' (%zu bytes): %s", shown, n, what);
}

/* Both parsers on s[0..n); returns whether it parsed. */
static bool check_text(const char *s, size_t n)
{
    bool parsed;
    const char *d = ja_diff_text(s, n, &parsed);
    if (d)
        diff_fail(s, n, d);
    return parsed;
}

/* The text, each of its prefixes and each single-byte edit to a byte of
 * `edits`: failure positions everywhere in it. */
static void check_variants(const char *s, size_t n)
{
    static const char edits[] = "\"\\,:[]{} \n\t\x01\x7f\0u0-+eE.xnt9";
    check_text(s, n);
    char *buf = malloc(n + 1);
    assert_non_null(buf);
    for (size_t k = 0; k < n; k++)
        check_text(s, k);
    for (size_t i = 0; i < n; i++)
        for (size_t e = 0; e < sizeof edits - 1; e++) {
            memcpy(buf, s, n);
            buf[i] = edits[e];
            check_text(buf, n);
        }
    free(buf);
}

static const text_t corpus[] = {
    T(""), T(" "), T("\n\t\r "), T("\0"), T("null"), T("nul"), T("true"), T("false"), T("fals"),
    T("True"), T("null "), T(" null"), T("nullx"), T("[null,true,false]"),
    /* numbers */
    T("0"), T("-0"), T("-0.0"), T("0.0"), T("1"), T("-1"), T("01"), T("-01"), T("1."), T("-.5"),
    T(".5"), T("+1"), T("-"), T("--1"), T("-+1"), T("1e5"), T("1E5"), T("1e+5"), T("1e-5"),
    T("1e"), T("1e+"), T("1ee5"), T("1.5e3.2"), T("0x10"), T("1e400"), T("-1e400"), T("1e-400"),
    T("4.9e-324"), T("2.2250738585072011e-308"), T("1.7976931348623157e308"),
    T("2147483647"), T("2147483648"), T("-2147483648"), T("-2147483649"), T("2147483646.5"),
    T("-2147483648.5"), T("9007199254740993"), T("123456789012345"), T("1234567890123456"),
    T("999999999999999"), T("-999999999999999"), T("9999999999999999"), T("0.1"),
    T("0.30000000000000004"), T("1-2"), T("12+"), T("3e2e"), T("[1,-0,2]"),
    T("123456789012345678901234567890123456789012345678901234567890123"),
    T("1234567890123456789012345678901234567890123456789012345678901234"),
    T("0.00000000000000000000000000000000000000000000000000000000000001234"),
    T("[1111111111111111111111111111111111111111111111111111111111111111111]"),
    T("-123456789012345678901234567890123456789012345678901234567890123e5"),
    /* strings */
    T("\"\""), T("\"abc\""), T("\"a"), T("\""), T("\"\\\""), T("\"\\"), T("\"\\\\\""),
    T("\"\\b\\f\\n\\r\\t\\/\\\\\\\"\""), T("\"\\x\""), T("\"\\a\""), T("\"\\u0041\""),
    T("\"\\u00e9\\u20AC\""), T("\"\\u0000x\""), T("\"\\u12\""), T("\"\\u123\""), T("\"\\uZZZZ\""),
    T("\"\\u00zz\""), T("\"\\ud83d\\ude00\""), T("\"\\uD83D\\uDE00\""), T("\"\\ud83d\""),
    T("\"\\ud83dx\""), T("\"\\ud83d\\u0041\""), T("\"\\ud83d\\ude0\""), T("\"\\ude00\""),
    T("\"\\udbff\\udfff\""), T("\"\\ud800\\udc00\""), T("\"\\ud83d\\n\""), T("\"\\uFFFF\\u07FF\\u0080\""),
    T("\"tab\there\""), T("\"nul\0in\""), T("\"\xc3\xa9\xff\""), T("\"\\u0020\\u007f\""),
    /* containers */
    T("[]"), T("[ ]"), T("["), T("]"), T("[1"), T("[1,"), T("[1, "), T("[1,]"), T("[,1]"),
    T("[1 2]"), T("[1,,2]"), T("[[]]"), T("[[],[[]]]"), T("{}"), T("{ }"), T("{"), T("}"),
    T("{\"a\""), T("{\"a\":"), T("{\"a\": "), T("{\"a\":1"), T("{\"a\":1,"), T("{\"a\":1, "),
    T("{\"a\":1,}"), T("{a:1}"), T("{'a':1}"), T("{\"a\" 1}"), T("{\"a\":1 \"b\":2}"),
    T("{\"a\":1,\"a\":2,\"A\":3}"), T("{\"\":0}"), T("{1:2}"), T("{\"a\":[1,{\"b\":null}],\"c\":\"d\"}"),
    T("{\"k\\u00e9y\":\"v\\nal\"}"), T("{\"a\"\0:\0 1\0}"), T("[1,\0 2]"), T("[1]\0garbage"),
    T("[1] x"), T("{\"a\":1}}"), T("[1]]"), T("\xef\xbb\xbf[1]"), T("\xef\xbb\xbf[]"),
    T("\xef\xbb\xbf" "1"), T("\xef\xbb\xbf"), T("\xef\xbb[1]"), T(" \x01 [\x1f 1 \x20]\x02"),
    T("{\"op\": \"load\", \"dst\": \"t[0:1, 0:4]\", \"src\": \"a[i, 0:4]\", \"deps\": [\"x\"]}"),
};

static void test_corpus(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
        check_variants(corpus[i].s, corpus[i].n);
}

/* Strings read 16 bytes, then 8 bytes at a time (scan_plain): a quote,
 * an escape, a byte with the top bit set (0xa2 / 0xdc: '"' / '\\' with
 * it) or a NUL at every offset of strings 0..40 bytes long, inside a
 * longer text (a short and a long tail) and at its very end (fewer than 8
 * or 16 bytes left), each text also cut short. */
static void test_string_words(void **state)
{
    (void)state;
    static const char marks[][3] = {"\"", "\\n", "\\\"", "\xa2", "\xdc", "\x80", "\0"};
    static const char tails[][40] = {"", " \"padding text\"", " \"a longer padding text, 32 B\""};
    char s[96];
    for (size_t len = 0; len <= 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++)
                for (size_t tail = 0; tail < sizeof tails / sizeof tails[0]; tail++) {
                    size_t o = 0;
                    s[o++] = '"';
                    for (size_t i = 0; i <= len; i++) {   /* the mark before byte `at` */
                        if (i == at) {
                            size_t k = m == sizeof marks / sizeof marks[0] - 1 ? 1
                                                                               : strlen(marks[m]);
                            memcpy(s + o, marks[m], k);
                            o += k;
                        }
                        if (i < len)
                            s[o++] = (char)('a' + i % 26);
                    }
                    s[o++] = '"';
                    /* more text after the string: the wide reads see past it */
                    memcpy(s + o, tails[tail], strlen(tails[tail]));
                    o += strlen(tails[tail]);
                    check_text(s, o);
                    for (size_t cut = 1; cut < o; cut += 3)
                        check_text(s, cut);
                }
}

/* Arrays and objects nested to `depth` levels (mixed), with a value inside. */
static char *nested(size_t depth, bool objects, size_t *n)
{
    char *s = malloc(depth * 6 + 8);
    assert_non_null(s);
    size_t o = 0;
    for (size_t i = 0; i < depth; i++) {
        if (objects && i % 2) {
            memcpy(s + o, "{\"k\":", 5);
            o += 5;
        } else {
            s[o++] = '[';
        }
    }
    s[o++] = '7';
    for (size_t i = depth; i-- > 0;)
        s[o++] = objects && i % 2 ? '}' : ']';
    *n = o;
    return s;
}

static void test_nesting_limit(void **state)
{
    (void)state;
    const size_t depths[] = {1, 2, CJSON_NESTING_LIMIT - 1, CJSON_NESTING_LIMIT,
                             CJSON_NESTING_LIMIT + 1, CJSON_NESTING_LIMIT + 7};
    for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++)
        for (int objects = 0; objects < 2; objects++) {
            size_t n;
            char *s = nested(depths[d], objects, &n);
            bool ok = check_text(s, n);
            assert_true(ok == (depths[d] <= CJSON_NESTING_LIMIT));
            check_text(s, n - 1);   /* unclosed */
            free(s);
        }
}

/* A deterministic generator of JSON-ish documents (xorshift). */
typedef struct {
    uint64_t x;
    char *buf;
    size_t n, cap;
} gen_t;

static unsigned pick(gen_t *g, unsigned k)
{
    g->x ^= g->x << 13;
    g->x ^= g->x >> 7;
    g->x ^= g->x << 17;
    return (unsigned)(g->x % k);
}

static void put(gen_t *g, const char *s)
{
    size_t k = strlen(s);
    if (g->n + k + 1 > g->cap) {
        g->cap = (g->n + k + 1) * 2;
        g->buf = realloc(g->buf, g->cap);
        assert_non_null(g->buf);
    }
    memcpy(g->buf + g->n, s, k);
    g->n += k;
}

static void gen_value(gen_t *g, int depth)
{
    static const char *const blanks[] = {"", " ", "\n", "\t\r", "  \n "};
    static const char *const atoms[] = {
        "0", "-0", "12", "-7", "3.25", "1e400", "-1e-400", "2147483648", "-2147483649",
        "123456789012345678", "6.02e23", "1E-3", "0.1", "true", "false", "null",
        "\"\"", "\"op\"", "\"a[i*128:(i+1)*128, 0:64]\"", "\"\\u00e9\\ud83d\\ude00\\n\"",
        "\"\\\"q\\\"\"", "\"\\ud800\"", "1e", "-", "\"\\q\"", "nul", "01"};
    put(g, blanks[pick(g, 5)]);
    unsigned kind = depth > 6 ? 2 : pick(g, 4);
    if (kind >= 2) {
        put(g, atoms[pick(g, sizeof atoms / sizeof atoms[0])]);
    } else {
        bool obj = kind == 1;
        put(g, obj ? "{" : "[");
        unsigned n = pick(g, 5);
        for (unsigned i = 0; i < n; i++) {
            if (i)
                put(g, pick(g, 40) ? "," : ",,");
            if (obj) {
                static const char *const keys[] = {"\"op\"", "\"Op\"", "\"dst\"", "\"\"", "\"k\\u0041\"", "k"};
                put(g, blanks[pick(g, 5)]);
                put(g, keys[pick(g, 6)]);
                put(g, blanks[pick(g, 5)]);
                put(g, pick(g, 40) ? ":" : "");
            }
            gen_value(g, depth + 1);
            put(g, blanks[pick(g, 5)]);
        }
        put(g, obj ? "}" : "]");
    }
    put(g, blanks[pick(g, 5)]);
}

static void test_generated(void **state)
{
    (void)state;
    gen_t g = {0x9E3779B97F4A7C15ull, NULL, 0, 0};
    size_t parsed = 0;
    for (int i = 0; i < 3000; i++) {
        g.n = 0;
        gen_value(&g, 0);
        parsed += check_text(g.buf, g.n);
        if (i < 40)
            check_variants(g.buf, g.n);
    }
    free(g.buf);
    assert_true(parsed > 100);   /* both outcomes are exercised */
    assert_true(parsed < 2900);
}

/* A text of about n bytes repeating `unit` inside an array:
 * "[unit,unit,...]". */
static char *repeated(const char *unit, size_t n, size_t *len)
{
    size_t u = strlen(unit), o = 0;
    char *s = malloc(n + u + 2);
    assert_non_null(s);
    s[o++] = '[';
    while (o + u + 2 < n) {
        memcpy(s + o, unit, u);
        o += u;
        s[o++] = ',';
    }
    memcpy(s + o, unit, u);
    o += u;
    s[o++] = ']';
    *len = o;
    return s;
}

/* Large texts (hundreds of KiB) start with one region sized for the whole
 * tree in a fresh mapping: a kernel-like text whose tree fits it, one of
 * tiny values whose tree takes ~16x its bytes (regions past the first), and
 * one just under the size where that starts.  Every node as cJSON's. */
static void test_large_texts(void **state)
{
    (void)state;
    const char *units[] = {
        "{\"op\": \"load\", \"dst\": \"t[0:1, 0:4]\", \"src\": \"a[i, 0:4]\"}", "0",
    };
    size_t sizes[] = {(size_t)600 << 10, (size_t)300 << 10, ((size_t)128 << 10) - 64};
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n;
            char *s = repeated(units[u], sizes[z], &n);
            assert_true(check_text(s, n));
            free(s);
        }
}

/* s parsed whole into a (which the caller frees). */
static cJSON *parsed(tpb_arena_t *a, const char *s)
{
    cJSON *root;
    const char *end;
    assert_int_equal(tpb_json_arena_parse(a, s, strlen(s), &root, &end), TPB_JA_OK);
    assert_ptr_equal(end, s + strlen(s));
    return root;
}

/* cJSON's own lookups work on the arena tree: case-insensitive keys, the
 * first of duplicates, array size and index. */
static void test_cjson_calls(void **state)
{
    (void)state;
    const char *s = "{\"Op\": 1, \"op\": 2, \"list\": [10, 20, 30], \"s\": \"x\"}";
    tpb_arena_t a = {0};
    cJSON *root = parsed(&a, s);
    assert_true(cJSON_IsObject(root));
    assert_int_equal(cJSON_GetObjectItem(root, "OP")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "op")->valueint, 2);
    assert_null(cJSON_GetObjectItemCaseSensitive(root, "OP"));
    const cJSON *list = cJSON_GetObjectItem(root, "list");
    assert_true(cJSON_IsArray(list));
    assert_int_equal(cJSON_GetArraySize(list), 3);
    assert_int_equal(cJSON_GetArrayItem(list, 2)->valueint, 30);
    assert_true(cJSON_IsNumber(cJSON_GetArrayItem(list, 0)));
    assert_true(cJSON_HasObjectItem(root, "S"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(root, "s")), "x");
    tpb_arena_free(&a);
}

/* Equal plain keys in a row share one copy (jsonarena.c key_at); keys
 * meeting in a slot but differing, keys with escapes and values are their
 * own, and every key still reads as its text. */
static void test_shared_keys(void **state)
{
    (void)state;
    const char *s = "[{\"op\": \"op\", \"dst\": 1}, {\"op\": 2, \"dsT\": 3},"
                    " {\"dst\": 4, \"o\\u0070\": 5}, {\"op\": 6, \"\": 7}, {\"\": 8}]";
    tpb_arena_t a = {0};
    cJSON *root = parsed(&a, s);
    const cJSON *o[5];
    for (int i = 0; i < 5; i++)
        o[i] = cJSON_GetArrayItem(root, i);
    const cJSON *op0 = o[0]->child, *dst0 = op0->next, *op1 = o[1]->child, *dsT = op1->next;
    const cJSON *dst2 = o[2]->child, *esc = dst2->next, *op3 = o[3]->child;
    assert_ptr_equal(op0->string, op1->string);
    assert_ptr_equal(op0->string, op3->string);
    assert_ptr_not_equal(op0->valuestring, op0->string);   /* a value is not a key */
    assert_string_equal(dsT->string, "dsT");               /* its slot's, not "dst" */
    assert_ptr_not_equal(dst0->string, dsT->string);
    assert_string_equal(dst2->string, "dst");
    assert_string_equal(esc->string, "op");                /* escaped: its own copy */
    assert_ptr_not_equal(esc->string, op0->string);
    assert_string_equal(op3->next->string, "");
    assert_ptr_equal(o[4]->child->string, op3->next->string);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(o[2], "op")->valueint, 5);
    tpb_arena_free(&a);
}

/* The last object's key of s (its text's end near) shares the first
 * object's first key. */
static void last_key_shared(const char *s)
{
    tpb_arena_t a = {0};
    cJSON *root = parsed(&a, s);
    const cJSON *first = root->child->child, *last = root->child->prev->child;
    assert_string_equal(last->string, first->string);
    assert_ptr_equal(last->string, first->string);
    tpb_arena_free(&a);
}

/* A slot's key is tried as a word before the key is scanned (key_at):
 * a key that only starts like the slot's ("dst_reg", "ds"), keys of 8
 * bytes and longer, and equal keys with exactly 10 and with 9 bytes left
 * from their quote to the text's end (a word is read only with 10) share
 * as they should. */
static void test_key_words(void **state)
{
    (void)state;
    const char *s = "[{\"dst\": 1, \"dst_reg\": 2, \"ds\": 3, \"dst\": 4, \"dge_mode\": 5,"
                    " \"dge_mode\": 6, \"description\": 7, \"description\": 8}]";
    tpb_arena_t a = {0};
    cJSON *root = parsed(&a, s);
    const cJSON *m[8];
    int n = 0;
    for (const cJSON *c = root->child->child; c && n < 8; c = c->next)
        m[n++] = c;
    assert_int_equal(n, 8);
    static const char *const keys[] = {"dst", "dst_reg", "ds", "dst", "dge_mode", "dge_mode",
                                       "description", "description"};
    for (int i = 0; i < 8; i++) {
        assert_string_equal(m[i]->string, keys[i]);
        assert_int_equal(m[i]->valueint, i + 1);
    }
    assert_ptr_not_equal(m[0]->string, m[3]->string);   /* "ds" took the slot between */
    assert_ptr_equal(m[4]->string, m[5]->string);       /* 8 bytes: one word */
    assert_ptr_equal(m[6]->string, m[7]->string);       /* longer: byte by byte */
    tpb_arena_free(&a);
    last_key_shared("[{\"dst\": 1}, {\"dst\": 9}]");   /* 10 bytes from the last quote */
    last_key_shared("[{\"dst\": 1}, {\"dst\":9}]");    /* 9 */
    last_key_shared("[{\"dge_mode\": 1}, {\"dge_mode\":1}]");
}

/* The kernel-file messages are made from the reader's positions. */
static void test_messages(void **state)
{
    (void)state;
    tpb_err_t e;
    const char *s = "{\n  \"a\": [1,, 2]\n}";
    tpb_arena_t a = {0};
    cJSON *root;
    const char *end;
    assert_int_equal(tpb_json_arena_parse(&a, s, strlen(s), &root, &end), TPB_JA_SYNTAX);
    tpb_json_fail_linecol(s, strlen(s), end, false, "k.json", &e);
    assert_string_equal(e.msg, "k.json:2:11: invalid JSON near here");   /* the second comma */
    const char *t = "[1] \n x";
    assert_int_equal(tpb_json_arena_parse(&a, t, strlen(t), &root, &end), TPB_JA_OK);
    end = tpb_json_trailing_text(t, strlen(t), end);
    assert_ptr_equal(end, t + 6);
    tpb_json_fail_linecol(t, strlen(t), end, true, "k.json", &e);
    assert_string_equal(e.msg, "k.json:2:2: invalid JSON: unexpected text after the top-level value");
    static const char u[] = "[1] \0x";   /* a NUL ends the text */
    assert_null(tpb_json_trailing_text(u, sizeof u - 1, u + 3));
    assert_int_equal(tpb_json_arena_parse(&a, NULL, 0, &root, &end), TPB_JA_SYNTAX);
    assert_null(end);
    tpb_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_string_words),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_large_texts),
        cmocka_unit_test(test_cjson_calls),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_shared_keys),
        cmocka_unit_test(test_key_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
