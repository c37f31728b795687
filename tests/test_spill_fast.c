/* The resumed spiller (encoder/spill_fast.c) against the reference, the
 * rounds that place the whole kernel again per victim (enc_spill_reference,
 * encoder/spill.c): on random kernels and SBUF sizes both must end with the
 * same tile IR (every op, operand, dep and loop boundary; every tensor),
 * the same statistics, or the same error text.  A resumed placement that
 * took back too little or too much, a wrong next use in the Belady heap or
 * an op inserted in the wrong gap changes a decision and fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "frontend.h"
#include "spill_int.h"
#include "spill.h"

typedef struct {
    uint64_t s;
} rng_t;

static unsigned rnd(rng_t *r, unsigned n)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(r->s >> 33) % n;
}

typedef struct {
    char *p;
    size_t n, cap;
} buf_t;

static void put(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)n + 1 > b->cap) {
        b->cap = (b->n + (size_t)n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, tmp, (size_t)n + 1);
    b->n += (size_t)n;
}

#define MAXT 64
static const int WIDTHS[] = {16, 32, 64, 128, 256};

/* A random kernel: [128, w] fp32 tiles loaded whole or in parts (some
 * never whole), combined by tensor_tensor, some stored, some declared in
 * loops (rotation groups, tiles read by every iteration). */
static char *random_kernel(rng_t *r)
{
    buf_t b = {0};
    int w[MAXT], nt = 0, nops = 12 + (int)rnd(r, 40);
    put(&b, "{\"kernel\": \"rs\", \"target\": \"trn2\","
            " \"inputs\": [{\"name\": \"x\", \"shape\": [128, 512], \"dtype\": \"float32\"}],"
            " \"outputs\": [{\"name\": \"out\", \"shape\": [128, 512], \"dtype\": \"float32\"}],"
            " \"body\": [");
    const char *sep = "";
    for (int i = 0; i < nops; i++) {
        unsigned c = rnd(r, 10);
        if (nt < 2 || (c < 3 && nt < MAXT)) {   /* a new tile, loaded */
            int W = WIDTHS[rnd(r, 5)], part = (int)rnd(r, 5);
            w[nt] = W;
            put(&b, "%s{\"op\": \"tile\", \"name\": \"t%d\", \"shape\": [128, %d], "
                    "\"dtype\": \"float32\"}", sep, nt, W);
            sep = ", ";
            if (part == 0) {   /* two halves (whole), or one (partly written) */
                put(&b, ", {\"op\": \"load\", \"dst\": \"t%d[:, 0:%d]\", \"src\": \"x[:, 0:%d]\"}",
                    nt, W / 2, W / 2);
                if (rnd(r, 2))
                    put(&b, ", {\"op\": \"load\", \"dst\": \"t%d[:, %d:%d]\", "
                            "\"src\": \"x[:, 0:%d]\"}", nt, W / 2, W, W / 2);
            } else {
                put(&b, ", {\"op\": \"load\", \"dst\": \"t%d\", \"src\": \"x[:, 0:%d]\"}", nt, W);
            }
            nt++;
        } else if (c < 7) {   /* a = b op c over tiles of one width */
            int a = (int)rnd(r, (unsigned)nt), x = -1, y = -1;
            for (int tries = 0; tries < 40 && (x < 0 || y < 0); tries++) {
                int z = (int)rnd(r, (unsigned)nt);
                if (x < 0 ? w[z] == w[a] : w[z] >= w[a])   /* in1: maybe part of a wider tile */
                    *(x < 0 ? &x : &y) = z;
            }
            if (x >= 0 && y >= 0)
                put(&b, "%s{\"op\": \"tensor_tensor\", \"dst\": \"t%d\", \"in0\": \"t%d\", "
                        "\"in1\": \"t%d[:, 0:%d]\", \"operator\": \"add\"}", sep, a, x, y, w[a]);
        } else if (c < 8) {
            int a = (int)rnd(r, (unsigned)nt);
            put(&b, "%s{\"op\": \"store\", \"dst\": \"out[:, 0:%d]\", \"src\": \"t%d\"}", sep,
                w[a], a);
        } else {   /* a loop declaring a tile and reading an outer one */
            int a = (int)rnd(r, (unsigned)nt), W = w[a];
            put(&b, "%s{\"op\": \"for\", \"var\": \"i\", \"range\": [%u], \"body\": ["
                    "{\"op\": \"tile\", \"name\": \"l%d\", \"shape\": [128, %d], "
                    "\"dtype\": \"float32\"},"
                    " {\"op\": \"load\", \"dst\": \"l%d\", \"src\": \"x[:, 0:%d]\"},"
                    " {\"op\": \"tensor_tensor\", \"dst\": \"l%d\", \"in0\": \"l%d\", "
                    "\"in1\": \"t%d\", \"operator\": \"add\"},"
                    " {\"op\": \"store\", \"dst\": \"out[:, 0:%d]\", \"src\": \"l%d\"}]}",
                sep, 2 + rnd(r, 4), i, W, i, W, i, i, a, W, i);
        }
        sep = ", ";
    }
    for (int t = 0; t < nt; t++)   /* every tile read at the end: long live ranges */
        if (rnd(r, 3) == 0)
            put(&b, ", {\"op\": \"store\", \"dst\": \"out[:, 0:%d]\", \"src\": \"t%d\"}", w[t], t);
    put(&b, "]}");
    return b.p;
}

static void ap_equal(const tir_ap_t *a, const tir_ap_t *b)
{
    assert_int_equal(a->tensor, b->tensor);
    if (a->tensor < 0)
        return;
    assert_int_equal(a->offset, b->offset);
    assert_int_equal(a->ndim, b->ndim);
    for (int d = 0; d < a->ndim; d++) {
        assert_int_equal(a->step[d], b->step[d]);
        assert_int_equal(a->count[d], b->count[d]);
    }
}

/* a and b: the same tile IR */
static void kernels_equal(const tir_kernel_t *a, const tir_kernel_t *b)
{
    assert_int_equal(a->ntensors, b->ntensors);
    for (int i = 0; i < a->ntensors; i++) {
        const tir_tensor_t *x = &a->tensors[i], *y = &b->tensors[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->path, y->path);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->dtype, y->dtype);
        assert_int_equal(x->ndim, y->ndim);
        for (int d = 0; d < x->ndim; d++)
            assert_int_equal(x->shape[d], y->shape[d]);
    }
    assert_int_equal(a->nops, b->nops);
    for (int i = 0; i < a->nops; i++) {
        const tir_op_t *x = &a->ops[i], *y = &b->ops[i];
        assert_int_equal(x->kind, y->kind);
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->path, y->path);
        assert_int_equal(x->flags, y->flags);
        ap_equal(x->dst, y->dst);
        ap_equal(x->dst2, y->dst2);
        for (int s = 0; s < 4; s++)
            ap_equal(x->src[s], y->src[s]);
        ap_equal(x->index, y->index);
        ap_equal(x->bias, y->bias);
        assert_int_equal(x->rare->ndeps, y->rare->ndeps);
        for (int d = 0; d < x->rare->ndeps; d++)
            assert_int_equal(x->rare->deps[d], y->rare->deps[d]);
    }
    assert_int_equal(a->nmarks, b->nmarks);
    for (int i = 0; i < a->nmarks; i++)
        assert_int_equal(a->loop_marks[i], b->loop_marks[i]);
}

/* Spill text both ways at sbuf bytes per partition; 1 when it spilled. */
static int compare(const char *text, uint64_t sbuf, int buffers, bool loops)
{
    tir_kernel_t k0, a, b;
    tpb_err_t err;
    if (enc_parse_kernel_json(text, strlen(text), "rs.json", NULL, NULL, 0, &k0, &err))
        fail_msg("parse: %s\n%s", err.msg, text);
    assert_int_equal(enc_spill_copy(&a, &k0, &err), 0);
    assert_int_equal(enc_spill_copy(&b, &k0, &err), 0);
    tpb_target_t t = *tpb_target_get("trn2");
    t.sbuf_partition_bytes = (unsigned)sbuf;
    enc_spill_stats_t sa, sb;
    tpb_err_t ea, eb;
    memset(&ea, 0, sizeof ea);
    memset(&eb, 0, sizeof eb);
    int ra = enc_spill(&a, &t, buffers, loops, &sa, &ea);
    int rb = enc_spill_reference(&b, &t, buffers, loops, &sb, &eb);
    if (ra != rb || (ra && strcmp(ea.msg, eb.msg)))
        fail_msg("sbuf %llu buffers %d: resumed %d '%s', reference %d '%s'\n%s",
                 (unsigned long long)sbuf, buffers, ra, ea.msg, rb, eb.msg, text);
    if (ra == 0) {
        assert_memory_equal(&sa, &sb, sizeof sa);
        kernels_equal(&a, &b);
    }
    int spilled = ra == 0 && sa.victims > 0;
    enc_spill_free(&a);
    enc_spill_free(&b);
    tir_kernel_free(&k0);
    return spilled;
}

/* Many random kernels at small SBUF sizes: most spill, some give up. */
static void test_spill_fast_random(void **state)
{
    (void)state;
    rng_t r = {12345};
    int spilled = 0, runs = 0;
    for (int i = 0; i < 600; i++) {
        char *text = random_kernel(&r);
        uint64_t sbuf = 64u * (4 + rnd(&r, 60));
        int buffers = (int)rnd(&r, 3);
        spilled += compare(text, sbuf, buffers, rnd(&r, 2));
        runs++;
        free(text);
    }
    print_message("random kernels: %d compared, %d spilled\n", runs, spilled);
    assert_true(spilled > runs / 6);
}

/* compile-live's kernel text with n tiles (b->p; the caller frees it). */
static void live_kernel(buf_t *b, int n);

/* compile-live's shape: n tiles loaded, then all stored: every victim is
 * the tile loaded last, at each of the loads past the room. */
static void test_spill_fast_live(void **state)
{
    (void)state;
    buf_t b = {0};
    live_kernel(&b, 300);
    assert_int_equal(compare(b.p, 64u * 100, 0, false), 1);
    assert_int_equal(compare(b.p, 64u * 7, 0, true), 1);
    free(b.p);
}

/* Past the rounds' bound: more victims than SPILL_MAX_ROUNDS, where the
 * round-by-round spiller gives up, still fit with the resumed placement
 * (its own bound, SPILL_FAST_MAX_VICTIMS, only caps the kernel's growth):
 * every load past the room spills one tile. */
static void test_spill_fast_past_round_bound(void **state)
{
    (void)state;
    buf_t b = {0};
    int n = SPILL_MAX_ROUNDS + 200;
    live_kernel(&b, n);
    tir_kernel_t k0, a;
    tpb_err_t err;
    if (enc_parse_kernel_json(b.p, strlen(b.p), "live.json", NULL, NULL, 0, &k0, &err))
        fail_msg("parse: %s", err.msg);
    assert_int_equal(enc_spill_copy(&a, &k0, &err), 0);
    tpb_target_t t = *tpb_target_get("trn2");
    t.sbuf_partition_bytes = 64u * 7;
    enc_spill_stats_t st;
    memset(&err, 0, sizeof err);
    if (enc_spill(&a, &t, 0, false, &st, &err))
        fail_msg("spill: %s", err.msg);
    assert_true(st.victims > SPILL_MAX_ROUNDS);
    assert_true(st.victims < (unsigned)n);
    /* every victim is reloaded; the inserted ops are its saves and reloads */
    assert_int_equal(st.reloads, st.victims);
    assert_int_equal(a.nops, k0.nops + (int)(st.saves + st.reloads));
    enc_spill_free(&a);
    tir_kernel_free(&k0);
    free(b.p);
}

static void live_kernel(buf_t *b0, int n)
{
    buf_t b = {0};
    put(&b, "{\"kernel\": \"live\", \"target\": \"trn2\","
            " \"inputs\": [{\"name\": \"a\", \"shape\": [%d, 4], \"dtype\": \"float32\"}],"
            " \"outputs\": [{\"name\": \"out\", \"shape\": [%d, 4], \"dtype\": \"float32\"}],"
            " \"body\": [", n, n);
    for (int i = 0; i < n; i++)
        put(&b, "%s{\"op\": \"tile\", \"name\": \"t%d\", \"shape\": [1, 4], \"dtype\": "
                "\"float32\"}", i ? ", " : "", i);
    for (int i = 0; i < n; i++)
        put(&b, ", {\"op\": \"load\", \"dst\": \"t%d\", \"src\": \"a[%d:%d, :]\"}", i, i, i + 1);
    for (int i = 0; i < n; i++)
        put(&b, ", {\"op\": \"store\", \"dst\": \"out[%d:%d, :]\", \"src\": \"t%d\"}", i, i + 1, i);
    put(&b, "]}");
    *b0 = b;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_fast_random),
        cmocka_unit_test(test_spill_fast_live),
        cmocka_unit_test(test_spill_fast_past_round_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
