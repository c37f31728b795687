/* The sidecar writer's printf-free paths must give the bytes of the code
 * they replace:
 *  - each op's "buf" string (art_op_buffers: the rotating buffers of its
 *    operands) against the snprintf/strstr builder it replaced, on random
 *    kernels: loop-instance names, repeats, names that contain others,
 *    operands out of range, strings past the length limit;
 *  - jw_key_plain against jw_key, and short strings (one reservation, the
 *    padded tail word of the escaper) against cJSON's printers, in both
 *    layouts;
 *  - jw_member_str / jw_member_int against a key then a value (moved here
 *    from test_back_compile_speed.c with the other jsonw tests);
 *  - the sidecar's cache of escaped member values (art_member_cached)
 *    against jw_member_str. */
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
#include "cJSON.h"
#include "jsonw.h"
#include "xorshift.h"

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
    return xorshift64(&r->s);
}

static int below(rng_t *r, int n)
{
    return (int)(next(r) % (uint64_t)n);
}

/* ------------------------------------------- the replaced "buf" builder */

/* The builder before art_op_buffers, kept as the reference: one token per
 * rotating operand with snprintf, a repeat found with strstr, a 256-byte
 * output buffer. */
static void ref_buf_add(const bir_module_t *m, const tir_kernel_t *k, int t, char *out, size_t cap)
{
    if (t < 0 || t >= m->nmlocs || m->mlocs[t].tensor != t || !m->mlocs[t].rot_nbuf)
        return;
    const char *nm = k->tensors[t].name, *h = strrchr(nm, '#');
    int len = (int)strlen(nm);
    if (h && h[1] && strspn(h + 1, "0123456789") == strlen(h + 1))
        len = (int)(h - nm);
    char one[TIR_NAME_LEN + 32];
    snprintf(one, sizeof one, "%.*s#%u/%u", len, nm, m->mlocs[t].rot_buf, m->mlocs[t].rot_nbuf);
    size_t n = strlen(one), used = strlen(out);
    for (const char *p = out; (p = strstr(p, one)) != NULL; p += n)
        if ((p == out || p[-1] == ' ') && (p[n] == 0 || p[n] == ' '))
            return;
    if (used + n + 2 <= cap)
        snprintf(out + used, cap - used, "%s%s", used ? " " : "", one);
}

static void ref_op_buffers(const bir_module_t *m, const tir_kernel_t *k, const tir_op_t *op,
                           char *out, size_t cap)
{
    out[0] = 0;
    ref_buf_add(m, k, op->dst->tensor, out, cap);
    ref_buf_add(m, k, op->dst2->tensor, out, cap);
    for (int i = 0; i < op->nsrc && i < 4; i++)
        ref_buf_add(m, k, op->src[i]->tensor, out, cap);
    ref_buf_add(m, k, op->index->tensor, out, cap);
    ref_buf_add(m, k, op->bias->tensor, out, cap);
    if (op->s0.is_ap)
        ref_buf_add(m, k, op->s0.ap->tensor, out, cap);
    if (op->s1.is_ap)
        ref_buf_add(m, k, op->s1.ap->tensor, out, cap);
}

/* A tensor name of one of the shapes the rule treats differently. */
static void random_name(rng_t *r, char *out, size_t cap)
{
    static const char *stems[] = {"t", "xt", "t#", "tile", "a b", "a", "b#x", "ti", "le", "", "x##"};
    const char *stem = stems[below(r, (int)(sizeof stems / sizeof stems[0]))];
    switch (below(r, 5)) {
    case 0:   /* a loop instance: "<tile>#<iteration>" */
        snprintf(out, cap, "%s#%d", stem, below(r, 12));
        break;
    case 1: { /* long, up to as long as a name can be: strings reach the
                 length limit with every possible remainder */
        size_t n = cap - 1 - (size_t)below(r, 24);
        memset(out, 'a' + below(r, 3), n);
        out[n] = 0;
        if (below(r, 2))
            snprintf(out + n - 3, 4, "#%d", below(r, 10));
        break;
    }
    case 2:
        snprintf(out, cap, "%s#%d%c", stem, below(r, 5), below(r, 2) ? 'x' : '#');
        break;
    default:
        snprintf(out, cap, "%s", stem);
        break;
    }
}

/* An operand: mostly a tensor of the kernel, sometimes none or one past
 * the module's locations. */
static int random_operand(rng_t *r, int nt)
{
    int v = below(r, nt + 3) - 1;
    return v;
}

static void test_buf_strings_match_snprintf(void **state)
{
    (void)state;
    rng_t r = {0x9e3779b97f4a7c15ull};
    for (int round = 0; round < 2000; round++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        int nt = 1 + below(&r, 14);
        for (int i = 0; i < nt; i++) {
            tir_tensor_t t;
            memset(&t, 0, sizeof t);
            char name[TIR_NAME_LEN];   /* tir_add_tensor copies it */
            random_name(&r, name, sizeof name);
            t.name = name;
            t.kind = TIR_T_SBUF;
            t.dtype = ISA_DT_FP32;
            t.ndim = 1;
            t.shape[0] = 1;
            t.shared_with = -1;
            assert_true(tir_add_tensor(&k, &t) >= 0);
        }
        bir_module_t m;
        memset(&m, 0, sizeof m);
        m.nmlocs = nt - below(&r, 2);   /* sometimes one tensor has no location */
        m.mlocs = calloc((size_t)nt, sizeof *m.mlocs);
        assert_non_null(m.mlocs);
        for (int i = 0; i < m.nmlocs; i++) {
            m.mlocs[i].tensor = below(&r, 8) ? i : (i + 1) % nt;
            m.mlocs[i].rot_nbuf = below(&r, 4) ? 1 + (unsigned)below(&r, 4) : 0;
            m.mlocs[i].rot_buf = (unsigned)below(&r, 4) * (below(&r, 9) ? 1u : 1000000u);
        }
        jb_t pool, mpool;   /* mpool: through the memo */
        assert_int_equal(jb_init_mem(&pool, 16), 0);
        assert_int_equal(jb_init_mem(&mpool, 16), 0);
        jb_putc(&pool, 0);
        jb_putc(&mpool, 0);
        art_buf_memo_t *memo = calloc(1, sizeof *memo);
        assert_non_null(memo);
        for (int o = 0; o < 40; o++) {
            tir_op_t op;
            tir_op_init(&op, TIR_TENSOR_TENSOR);
            BU_EDIT(&k, op.dst, tensor, random_operand(&r, nt));
            BU_EDIT(&k, op.dst2, tensor, random_operand(&r, nt));
            op.nsrc = below(&r, 6);
            for (int i = 0; i < 4; i++)
                BU_EDIT(&k, op.src[i], tensor, random_operand(&r, nt));
            BU_EDIT(&k, op.index, tensor, random_operand(&r, nt));
            BU_EDIT(&k, op.bias, tensor, random_operand(&r, nt));
            op.s0.is_ap = below(&r, 2);
            BU_EDIT(&k, op.s0.ap, tensor, random_operand(&r, nt));
            op.s1.is_ap = below(&r, 2);
            BU_EDIT(&k, op.s1.ap, tensor, random_operand(&r, nt));
            char want[256];
            ref_op_buffers(&m, &k, &op, want, sizeof want);
            size_t off = art_op_buffers(&pool, &m, &k, &op);
            assert_false(jb_failed(&pool));
            assert_true(off < pool.len);
            if (strcmp(pool.buf + off, want) != 0)
                fail_msg("round %d op %d: '%s', the reference gives '%s'", round, o,
                         pool.buf + off, want);
            assert_true(want[0] ? off > 0 : off == 0);
            size_t moff = art_op_buffers_memo(&mpool, memo, &m, &k, &op);
            assert_false(jb_failed(&mpool));
            if (strcmp(mpool.buf + moff, want) != 0)
                fail_msg("round %d op %d: memo gives '%s', the reference '%s'", round, o,
                         mpool.buf + moff, want);
            assert_true(want[0] ? moff > 0 : moff == 0);
        }
        art_buf_memo_release(memo);
        free(memo);
        jb_free(&mpool);
        jb_free(&pool);
        free(m.mlocs);
        tir_kernel_free(&k);
    }
}

/* Around the length limit: three long tokens, then one whose length puts
 * the string just under, at and just over what the old 256-byte buffer
 * held. */
static void test_buf_strings_at_the_limit(void **state)
{
    (void)state;
    for (size_t last = 40; last <= 60; last++) {
        tir_kernel_t k;
        tir_kernel_init(&k);
        bir_module_t m;
        memset(&m, 0, sizeof m);
        m.nmlocs = 4;
        m.mlocs = calloc(4, sizeof *m.mlocs);
        assert_non_null(m.mlocs);
        for (int i = 0; i < 4; i++) {
            tir_tensor_t t;
            memset(&t, 0, sizeof t);
            size_t n = i < 3 ? TIR_NAME_LEN - 1 : last;
            char name[TIR_NAME_LEN] = {0};   /* tir_add_tensor copies it */
            memset(name, 'p' + i, n);
            t.name = name;
            t.kind = TIR_T_SBUF, t.dtype = ISA_DT_FP32, t.ndim = 1, t.shape[0] = 1;
            t.shared_with = -1;
            assert_true(tir_add_tensor(&k, &t) >= 0);
            m.mlocs[i] = (bir_mloc_t){.tensor = i, .rot_buf = 1, .rot_nbuf = 2};
        }
        tir_op_t op;
        tir_op_init(&op, TIR_TENSOR_TENSOR);
        BU_EDIT(&k, op.dst, tensor, 0);
        BU_EDIT(&k, op.dst2, tensor, 1);
        op.nsrc = 2;
        BU_EDIT(&k, op.src[0], tensor, 2);
        BU_EDIT(&k, op.src[1], tensor, 3);
        char want[256];
        ref_op_buffers(&m, &k, &op, want, sizeof want);
        jb_t pool;
        assert_int_equal(jb_init_mem(&pool, 16), 0);
        jb_putc(&pool, 0);
        size_t off = art_op_buffers(&pool, &m, &k, &op);
        assert_string_equal(pool.buf + off, want);
        jb_free(&pool);
        free(m.mlocs);
        tir_kernel_free(&k);
    }
}

/* A kernel and a module of n rotating tiles, added by rot_tile. */
static void rot_init(tir_kernel_t *k, bir_module_t *m, int n)
{
    tir_kernel_init(k);
    memset(m, 0, sizeof *m);
    m->nmlocs = n;
    m->mlocs = calloc((size_t)n, sizeof *m->mlocs);
    assert_non_null(m->mlocs);
}

/* Tile i: name, declared at path, buffer buf of nbuf. */
static void rot_tile(tir_kernel_t *k, bir_module_t *m, int i, const char *name,
                     const char *path, unsigned buf, unsigned nbuf)
{
    tir_tensor_t t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.path = path;
    t.kind = TIR_T_SBUF, t.dtype = ISA_DT_FP32, t.ndim = 1, t.shape[0] = 1;
    t.shared_with = -1;
    assert_true(tir_add_tensor(k, &t) >= 0);
    m->mlocs[i] = (bir_mloc_t){.tensor = i, .rot_buf = buf, .rot_nbuf = nbuf};
}

/* The memo shares the string of an earlier op whose tokens match, though
 * its tensors are others (a loop's next tiles); a different base name,
 * buffer or buffer count, or another operand order, builds a new one; a
 * tensor's token is worked out once. */
static void test_buf_memo_shares_loop_strings(void **state)
{
    (void)state;
    enum { N = 200 };
    tir_kernel_t k;
    bir_module_t m;
    rot_init(&k, &m, N);
    for (int i = 0; i < N; i++) {
        char name[TIR_NAME_LEN];
        /* pairs per iteration: "t#i" and "u#i"; from 100 on, "tt#i" */
        snprintf(name, sizeof name, "%s#%d", i % 2 ? "u" : i < 100 ? "t" : "tt", i / 2);
        /* two buffers; from 150 on, three */
        rot_tile(&k, &m, i, name, NULL, (unsigned)(i / 2) % 2, i < 150 ? 2u : 3u);
    }
    jb_t pool;
    assert_int_equal(jb_init_mem(&pool, 16), 0);
    jb_putc(&pool, 0);
    art_buf_memo_t *memo = calloc(1, sizeof *memo);
    assert_non_null(memo);
    size_t off[N / 2][2];
    for (int it = 0; it < N / 2; it++)
        for (int swap = 0; swap < 2; swap++) {
            tir_op_t op;
            tir_op_init(&op, TIR_TENSOR_TENSOR);
            BU_EDIT(&k, op.dst, tensor, 2 * it + swap);
            op.nsrc = 1;
            BU_EDIT(&k, op.src[0], tensor, 2 * it + 1 - swap);
            char want[256];
            ref_op_buffers(&m, &k, &op, want, sizeof want);
            off[it][swap] = art_op_buffers_memo(&pool, memo, &m, &k, &op);
            assert_string_equal(pool.buf + off[it][swap], want);
        }
    for (int it = 2; it < N / 2; it++)
        for (int swap = 0; swap < 2; swap++) {
            int t = 2 * it;   /* the tile of the op's dst or src, as named */
            bool same = (t < 100) == (t - 4 < 100) && (t < 150) == (t - 4 < 150);
            if (same)
                assert_int_equal(off[it][swap], off[it - 2][swap]);   /* shared */
            else
                assert_int_not_equal(off[it][swap], off[it - 2][swap]);
            assert_int_not_equal(off[it][swap], off[it - 1][swap]);   /* other buffer */
            assert_int_not_equal(off[it][0], off[it][1]);             /* other order */
        }
    /* each tensor's token was worked out once, though every one is an
     * operand of two ops (from the last instance declared at the same path
     * and buffer, or by scanning its name) */
    assert_int_equal(memo->tok_scans + memo->path_hits, N);
    art_buf_memo_release(memo);
    free(memo);
    jb_free(&pool);
    free(m.mlocs);
    tir_kernel_free(&k);
}

/* Instances declared at one path whose names are not "<base>#<digits>" of
 * the last one's base: each gets its own token (the path's slot is only a
 * shortcut), so the op strings match the reference. */
static void test_buf_memo_path_slot_checks_names(void **state)
{
    (void)state;
    static const char *const names[] = {"t#3", "t#4", "t#5x", "t#", "t", "tt#4", "t#44", "t#4",
                                         "x#1#2", "x#1#3", "x#2"};
    enum { N = sizeof names / sizeof names[0] };
    tir_kernel_t k;
    bir_module_t m;
    rot_init(&k, &m, N);
    for (int i = 0; i < N; i++)
        rot_tile(&k, &m, i, names[i], "body[0].body[1]", 1, 2);
    jb_t pool;
    assert_int_equal(jb_init_mem(&pool, 16), 0);
    jb_putc(&pool, 0);
    art_buf_memo_t *memo = calloc(1, sizeof *memo);
    assert_non_null(memo);
    for (int i = 1; i < N; i++) {   /* op i: the previous instance and this one */
        tir_op_t op;
        tir_op_init(&op, TIR_TENSOR_TENSOR);
        BU_EDIT(&k, op.dst, tensor, i);
        op.nsrc = 1;
        BU_EDIT(&k, op.src[0], tensor, i - 1);
        char want[256];
        ref_op_buffers(&m, &k, &op, want, sizeof want);
        size_t off = art_op_buffers_memo(&pool, memo, &m, &k, &op);
        assert_string_equal(pool.buf + off, want);
    }
    assert_int_equal(memo->tok_scans + memo->path_hits, N);
    assert_int_equal(memo->path_hits, 3);   /* t#4 after t#3 and after t#44, x#1#3 */
    art_buf_memo_release(memo);
    free(memo);
    jb_free(&pool);
    free(m.mlocs);
    tir_kernel_free(&k);
}

/* ---------------------------------------------------------------- jsonw */

/* A short string: n plain bytes, with `bad` at position at (at < n). */
static void short_string(char *out, size_t n, size_t at, char bad)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (char)('a' + (int)(i % 26));
    if (at < n)
        out[at] = bad;
    out[n] = 0;
}

static char *jw_text(jw_t *w)
{
    assert_int_equal(jw_finish(w), 0);
    char *s = strdup(w->b.buf);
    jw_free(w);
    return s;
}

/* Every length up to past five words (the short path, whole words and the
 * overlapping last word), each escapable kind at every
 * position, as keys and as values: jw's bytes == cJSON's. */
static void test_jsonw_short_strings_match_cjson(void **state)
{
    (void)state;
    const char bads[] = {'"', '\\', '\n', '\x01', '\x1f', 'z'};
    for (int compact = 0; compact < 2; compact++) {
        cJSON *root = cJSON_CreateObject();
        jw_t w;
        jw_init(&w);
        if (compact)
            jw_set_compact(&w);
        jw_obj_begin(&w);
        cJSON *arr = cJSON_AddArrayToObject(root, "v");
        jw_key(&w, "v"), jw_arr_begin(&w);
        int id = 0;
        for (size_t n = 0; n <= 40; n++)
            for (size_t b = 0; b < sizeof bads; b++)
                for (size_t at = 0; at <= n; at++) {
                    char s[48];
                    short_string(s, n, at, bads[b]);
                    cJSON_AddItemToArray(arr, cJSON_CreateString(s));
                    jw_str(&w, s);
                    /* keys must be unique for cJSON's object: a prefix */
                    char key[64];
                    snprintf(key, sizeof key, "%d%s", id++, s);
                    cJSON_AddNumberToObject(root, key, 1);
                }
        jw_arr_end(&w);
        id = 0;
        for (size_t n = 0; n <= 40; n++)
            for (size_t b = 0; b < sizeof bads; b++)
                for (size_t at = 0; at <= n; at++) {
                    char s[48], key[64];
                    short_string(s, n, at, bads[b]);
                    snprintf(key, sizeof key, "%d%s", id++, s);
                    jw_key(&w, key), jw_int(&w, 1);
                }
        jw_obj_end(&w);
        char *ref = compact ? cJSON_PrintUnformatted(root) : cJSON_Print(root);
        char *got = jw_text(&w);
        assert_non_null(ref);
        assert_string_equal(got, ref);
        free(got);
        free(ref);
        cJSON_Delete(root);
    }
}

/* jw_key_plain writes what jw_key writes, at any depth, in both layouts,
 * for keys short and long (past the one-reservation limit). */
static void test_jsonw_key_plain_matches_key(void **state)
{
    (void)state;
    for (int compact = 0; compact < 2; compact++) {
        jw_t a, b;
        jw_init(&a);
        jw_init(&b);
        if (compact)
            jw_set_compact(&a), jw_set_compact(&b);
        for (int d = 0; d < 4; d++) {
            jw_obj_begin(&a), jw_obj_begin(&b);
            for (size_t n = 0; n <= 300; n += (n < 24 ? 1 : 37)) {
                char key[320];
                short_string(key, n, n, 0);
                jw_key(&a, key), jw_int(&a, (long long)n);
                jw_key_plain(&b, key, n), jw_int(&b, (long long)n);
            }
            jw_key(&a, "next");
            jw_keyl(&b, "next");
        }
        jw_int(&a, 0), jw_int(&b, 0);
        for (int d = 0; d < 4; d++)
            jw_obj_end(&a), jw_obj_end(&b);
        char *ta = jw_text(&a), *tb = jw_text(&b);
        assert_string_equal(tb, ta);
        free(ta);
        free(tb);
    }
}

/* One document written with jw_member_str and with jw_key_plain + jw_str:
 * nesting past 8 tabs, compact, escapes, values past JW_SHORT_STR, NULL,
 * and the misuse cases (inside an array, at depth 0) that take the
 * general path. */
static void write_members(jw_t *w, bool fused, const char *long_s)
{
    const char *vals[] = {"tensor_scalar", "", "tab\there \"q\"", NULL, long_s, "\x01\\"};
    jw_obj_begin(w);
    for (int d = 0; d < 11; d++) {
        for (int v = 0; v < 6; v++) {
            if (fused)
                jw_kvl(w, "name", vals[v]);
            else
                jw_keyl(w, "name"), jw_str(w, vals[v]);
        }
        jw_keyl(w, "next");
        jw_obj_begin(w);
    }
    for (int d = 0; d < 11; d++)
        jw_obj_end(w);
    jw_keyl(w, "arr");
    jw_arr_begin(w);
    if (fused)
        jw_kvl(w, "x", "in an array");
    else
        jw_keyl(w, "x"), jw_str(w, "in an array");
    jw_arr_end(w);
    jw_obj_end(w);
}

static void test_jsonw_member_str_matches_key_then_str(void **state)
{
    (void)state;
    char long_s[700];
    memset(long_s, 'x', sizeof long_s - 1);
    long_s[sizeof long_s - 1] = 0;
    for (int compact = 0; compact < 2; compact++) {
        jw_t a, b;
        jw_init(&a), jw_init(&b);
        if (compact)
            jw_set_compact(&a), jw_set_compact(&b);
        write_members(&a, false, long_s);
        write_members(&b, true, long_s);
        jw_kvl(&a, "depth0", "x"), jw_keyl(&b, "depth0"), jw_str(&b, "x");
        assert_int_equal(a.b.len, b.b.len);
        assert_memory_equal(a.b.buf, b.b.buf, a.b.len);
        jw_free(&a), jw_free(&b);
    }
}

/* The same for jw_member_int against jw_key_plain + jw_int: values at
 * every digit count, the 10^15 edge where jw_int changes form, the
 * extremes, nesting past 8 tabs, compact, and the misuse cases. */
static void write_int_members(jw_t *w, bool fused)
{
    const long long vals[] = {0, 1, -1, 9, 10, -10, 99, 100, 12345678901LL,
                              999999999999999LL, 1000000000000000LL, -999999999999999LL,
                              -1000000000000000LL, LLONG_MAX, LLONG_MIN};
    const size_t nv = sizeof vals / sizeof vals[0];
    jw_obj_begin(w);
    for (int d = 0; d < 11; d++) {
        for (size_t v = 0; v < nv; v++) {
            if (fused)
                jw_kvl_int(w, "pc", vals[v]);
            else
                jw_keyl(w, "pc"), jw_int(w, vals[v]);
        }
        jw_keyl(w, "next");
        jw_obj_begin(w);
    }
    for (int d = 0; d < 11; d++)
        jw_obj_end(w);
    jw_keyl(w, "arr");
    jw_arr_begin(w);
    if (fused)
        jw_kvl_int(w, "x", 5);
    else
        jw_keyl(w, "x"), jw_int(w, 5);
    jw_arr_end(w);
    jw_obj_end(w);
}

static void test_jsonw_member_int_matches_key_then_int(void **state)
{
    (void)state;
    for (int compact = 0; compact < 2; compact++) {
        jw_t a, b;
        jw_init(&a), jw_init(&b);
        if (compact)
            jw_set_compact(&a), jw_set_compact(&b);
        write_int_members(&a, false);
        write_int_members(&b, true);
        jw_keyl(&a, "depth0"), jw_int(&a, 3), jw_kvl_int(&b, "depth0", 3);
        assert_int_equal(a.b.len, b.b.len);
        assert_memory_equal(a.b.buf, b.b.buf, a.b.len);
        jw_free(&a), jw_free(&b);
    }
}

/* jw_member_int_memo against jw_member_int: a sequence of values that rise
 * by 0..99 (carries through every digit, 99 -> 100 and 9999 -> 10003 adding
 * a digit), fall, jump, go negative and past 10^15, in both layouts and in
 * an array (the general path): the same bytes. */
static void test_jsonw_member_int_memo(void **state)
{
    (void)state;
    rng_t r = { 7 };
    for (int compact = 0; compact < 2; compact++) {
        jw_t a, b;
        jw_init(&a), jw_init(&b);
        if (compact)
            jw_set_compact(&a), jw_set_compact(&b);
        jw_num_memo_t memo;
        memset(&memo, 0, sizeof memo);
        jw_arr_begin(&a), jw_arr_begin(&b);
        long long v = 0;
        for (int i = 0; i < 20000; i++) {
            unsigned k = (unsigned)(next(&r) % 64);
            if (k == 0)
                v = (long long)(next(&r) % 100000);   /* a jump */
            else if (k == 1)
                v -= (long long)(next(&r) % 50);       /* a fall, maybe below 0 */
            else if (k == 2)
                v = 999999999999990LL;                          /* up to and past 10^15 */
            else
                v += (long long)(next(&r) % 100);
            jw_obj_begin(&a), jw_obj_begin(&b);
            jw_kvl_int(&a, "op_index", v);
            jw_kvl_int_memo(&b, "op_index", v, &memo);
            jw_obj_end(&a), jw_obj_end(&b);
            if (i == 0)
                jw_kvl_int(&a, "x", 1), jw_kvl_int_memo(&b, "x", 1, &memo);   /* in an array */
        }
        jw_arr_end(&a), jw_arr_end(&b);
        assert_int_equal(a.b.len, b.b.len);
        assert_memory_equal(a.b.buf, b.b.buf, a.b.len);
        jw_free(&a), jw_free(&b);
    }
}

/* art_member_cached against jw_member_str: the same bytes for strings that
 * need escaping (quotes, backslashes, the cJSON short forms, other control
 * bytes), empty, longer than one reservation, in both layouts, nested, in
 * an array (the general path), and with so many distinct strings that the
 * cache's text starts over; repeats are served from the cache. */
static void test_sidecar_value_cache(void **state)
{
    (void)state;
    enum { NDIST = 700, LEN = 150 };
    static char many[NDIST][LEN + 1];
    for (int i = 0; i < NDIST; i++) {
        memset(many[i], 'a' + i % 26, LEN);
        many[i][i % LEN] = i % 3 ? '"' : '\\';
        many[i][LEN] = 0;
    }
    char long_s[400];
    memset(long_s, 'q', sizeof long_s - 1);
    long_s[sizeof long_s - 1] = 0;
    const char *few[] = {"body[0].body[7]", "tensor_scalar", "w#1/4 v#1/4 t#1/4", "",
                         "a\"b\\c", "tab\there\nline\b\f\r", "ctl\x01\x1f", long_s};
    const int nfew = (int)(sizeof few / sizeof few[0]);
    for (int compact = 0; compact < 2; compact++) {
        rng_t r = {77 + (uint64_t)compact};
        art_jcache_t c;
        assert_int_equal(art_jcache_init(&c), 0);
        jw_t a, b;
        jw_init(&a), jw_init(&b);
        if (compact)
            jw_set_compact(&a), jw_set_compact(&b);
        jw_obj_begin(&a), jw_obj_begin(&b);
        for (int i = 0; i < 6000; i++) {
            const char *s = below(&r, 4) ? few[below(&r, nfew)] : many[below(&r, NDIST)];
            if (i % 500 == 0) {   /* deeper, then back */
                jw_keyl(&a, "o"), jw_obj_begin(&a);
                jw_keyl(&b, "o"), jw_obj_begin(&b);
            } else if (i % 500 == 250) {
                jw_obj_end(&a), jw_obj_end(&b);
            }
            jw_kvl(&a, "src", s);
            art_member_cached(&b, &c, "src", 3, s);
        }
        jw_keyl(&a, "arr"), jw_arr_begin(&a), jw_kvl(&a, "x", few[4]), jw_arr_end(&a);
        jw_keyl(&b, "arr"), jw_arr_begin(&b), art_member_cached(&b, &c, "x", 1, few[4]);
        jw_arr_end(&b);
        for (int d = a.depth; d > 0; d--)
            jw_obj_end(&a), jw_obj_end(&b);
        assert_int_equal(jw_finish(&a), 0);
        assert_int_equal(jw_finish(&b), 0);
        assert_int_equal(a.b.len, b.b.len);
        assert_memory_equal(a.b.buf, b.b.buf, a.b.len);
        assert_true(c.hits > c.misses);   /* the few repeats come from the cache */
        assert_true(c.misses > NDIST / 2);
        art_jcache_free(&c);
        jw_free(&a), jw_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf_strings_match_snprintf),
        cmocka_unit_test(test_jsonw_member_int_memo),
        cmocka_unit_test(test_buf_strings_at_the_limit),
        cmocka_unit_test(test_buf_memo_shares_loop_strings),
        cmocka_unit_test(test_buf_memo_path_slot_checks_names),
        cmocka_unit_test(test_jsonw_short_strings_match_cjson),
        cmocka_unit_test(test_jsonw_key_plain_matches_key),
        cmocka_unit_test(test_jsonw_member_str_matches_key_then_str),
        cmocka_unit_test(test_jsonw_member_int_matches_key_then_int),
        cmocka_unit_test(test_sidecar_value_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
