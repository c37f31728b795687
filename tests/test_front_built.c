/* The operand-check pass noted for a record the builder just built
 * (builder_memo.c enc_note_built, thirty-fifth session): a flat body's
 * operand is interned once and its op's check (validate_ap.c check_ap)
 * would only confirm it.  The note must be true: over a grid of tensors
 * (HBM of 1..4 dims, SBUF and PSUM tiles) and slices (indices, clipped,
 * stepped, one-element and failing ones), every record noted passes the
 * check for a direct DMA, and for any other op exactly when noted so
 * (a tile's partition step); enc_ap_interned gives enc_ap's record and
 * message, and enc_ap_memo_interned's bookkeeping for a whole record; a
 * tensor not declared through the builder gets no note.  Also the other
 * shortcuts of the flat statements: add_tensor's one-pass name rule and a
 * tile shape's numbers read inline, against the rule as written before
 * and the general reader's messages.  And
 * through the JSON front end, a flat statement (the noted way) and the
 * same statement in a loop (the memos' way) give the same records and the
 * same messages, also for the operands the check refuses. */
#include "front_json_util.h"

#include "builder.h"
#include "validate_int.h"

typedef struct {
    tir_kernel_t k;
    tpb_err_t err;
    enc_builder_t b;
} bfx_t;

static void bfx_init(bfx_t *f)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(enc_builder_init(&f->b, &f->k, "built", "trn2", &f->err), 0);
    /* the memo as enc_emit makes it, for this kernel and target */
    f->b.check_memo = calloc(1, sizeof *f->b.check_memo);
    f->b.check_memo->owner = &f->b;
    f->b.check_memo->k = &f->k;
    f->b.check_memo->tg = f->b.target;
}

static void bfx_free(bfx_t *f)
{
    enc_builder_free(&f->b);
    tir_kernel_free(&f->k);
}

/* check_ap of record a (no memo) as operand dst of an op of this kind */
static int check_as(bfx_t *f, const tir_ap_t *a, tir_opkind_t kind, tpb_err_t *e)
{
    tir_op_t op;
    tir_op_init(&op, kind);
    op.path = "p";
    vctx_t v = {&f->k, f->b.target, &op, e, NULL};
    return enc_check_ap_memo_miss(&v, a, -1, 0, enc_check_memo_slot(a));
}

/* The slices tried on a dim of extent n (k-th of NSL). */
enum { NSL = 12 };
static enc_slice_t slice_k(int k, int64_t n)
{
    switch (k) {
    case 0: return ENC_ALL;
    case 1: return ENC_INDEX(0);
    case 2: return ENC_INDEX(n - 1);
    case 3: return ENC_INDEX(n);                        /* out of range */
    case 4: return ENC_RANGE(0, n);
    case 5: return ENC_RANGE(1, n + 5);                 /* clipped */
    case 6: return ENC_RANGE_STEP(0, n, 2);
    case 7: return ENC_RANGE_STEP(n > 1 ? 1 : 0, n, n + 3);   /* one element, huge step */
    case 8: return ENC_RANGE(n - 1, n);
    case 9: return ENC_RANGE(3, 2);                     /* empty */
    case 10: return ENC_RANGE_STEP(0, n, 0);            /* step 0 */
    default: {
        enc_slice_t s = ENC_RANGE(0, n);
        s.has_start = false;   /* ":n" */
        return s;
    }
    }
}

static void test_notes_are_true(void **state)
{
    (void)state;
    bfx_t f;
    bfx_init(&f);
    enc_builder_t *b = &f.b;
    int ts[] = {
        enc_input(b, "h1", ISA_DT_FP32, 1, (int64_t[]){10}),
        enc_input(b, "h2", ISA_DT_FP32, 2, (int64_t[]){256, 64}),
        enc_output(b, "h3", ISA_DT_BF16, 3, (int64_t[]){3, 5, 7}),
        enc_input(b, "h4", ISA_DT_FP32, 4, (int64_t[]){2, 3, 1, 4}),
        enc_tile(b, "s2", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){128, 64}),
        enc_tile(b, "s1", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4}),
        enc_tile(b, "s3", TIR_T_SBUF, ISA_DT_BF16, 3, (int64_t[]){64, 2, 3}),
        enc_tile(b, "p2", TIR_T_PSUM, ISA_DT_FP32, 2, (int64_t[]){128, 16}),
    };
    assert_false(b->failed);
    enc_check_memo_t *m = b->check_memo;
    long noted = 0, strided = 0, refused = 0;
    tpb_err_t e0, e1;   /* the builder keeps the pointer: alive to the end */
    for (size_t ti = 0; ti < sizeof ts / sizeof ts[0]; ti++) {
        const tir_tensor_t *t = &f.k.tensors[ts[ti]];
        int nd = t->ndim;
        /* every slice on dim 0, the others whole; every slice on the last
         * dim, dim 0 a range; and each count of slices given */
        for (int form = 0; form < 3; form++)
            for (int k = 0; k < NSL; k++) {
                enc_slice_t sl[TIR_MAX_DIMS];
                int ns = nd;
                for (int d = 0; d < nd; d++)
                    sl[d] = ENC_ALL;
                if (form == 0)
                    sl[0] = slice_k(k, t->shape[0]);
                else if (form == 1)
                    sl[0] = ENC_RANGE(0, 1), sl[nd - 1] = slice_k(k, t->shape[nd - 1]);
                else
                    ns = k % (nd + 1), sl[0] = slice_k(k, t->shape[0]);
                /* enc_ap's record and message */
                memset(&e0, 0, sizeof e0);
                memset(&e1, 0, sizeof e1);
                b->err = &e0;
                tir_ap_t want = enc_ap(b, ts[ti], ns, sl, "x");
                bool bad = b->failed;
                b->failed = false;
                b->err = &e1;
                const tir_ap_t *r = enc_ap_interned(b, ts[ti], ns, sl, "x");
                assert_int_equal(b->failed, bad);
                assert_string_equal(e1.msg, e0.msg);
                b->failed = false;
                if (bad) {
                    assert_null(r);
                    refused++;
                    continue;
                }
                assert_non_null(r);
                assert_ptr_equal(r, tir_ap_intern(&f.k, &want));
                unsigned h = enc_check_memo_slot(r);
                assert_ptr_equal(m->e[h].ap, r);   /* noted */
                assert_int_equal(m->e[h].bound, 0);
                noted++;
                tpb_err_t e = {{0}};
                if (check_as(&f, r, TIR_LOAD, &e) || check_as(&f, r, TIR_STORE, &e))
                    fail_msg("tensor %zu form %d slice %d: noted but refused: %s", ti, form, k,
                             e.msg);
                int other = check_as(&f, r, TIR_TENSOR_COPY, &e);
                if ((other == 0) != m->e[h].any)
                    fail_msg("tensor %zu form %d slice %d: any %d, check %d '%s'", ti, form, k,
                             (int)m->e[h].any, other, e.msg);
                strided += !m->e[h].any;
            }
    }
    /* the grid holds refusals, and records only a direct DMA may take */
    assert_true(noted > 100);
    assert_true(strided >= 4);
    assert_true(refused > 40);
    bfx_free(&f);
}

/* A tensor added to the kernel directly (not declared through the
 * builder: no guarantee on its shape) gets no note, nor a record with a
 * dtype view; a tensor's whole record sets its whole bit. */
static void test_not_noted(void **state)
{
    (void)state;
    bfx_t f;
    bfx_init(&f);
    enc_builder_t *b = &f.b;
    tir_tensor_t raw;
    memset(&raw, 0, sizeof raw);
    raw.name = "raw";
    raw.path = "p";
    raw.kind = TIR_T_INPUT;
    raw.dtype = ISA_DT_FP32;
    raw.ndim = 2;
    raw.shape[0] = 8;
    raw.shape[1] = 8;
    raw.shared_with = -1;
    int t = tir_add_tensor(&f.k, &raw);
    assert_true(t >= 0);
    enc_slice_t row[1] = {ENC_RANGE(0, 2)};
    const tir_ap_t *r = enc_ap_interned(b, t, 1, row, "x");
    assert_non_null(r);
    assert_ptr_not_equal(b->check_memo->e[enc_check_memo_slot(r)].ap, r);
    int a = enc_input(b, "a", ISA_DT_FP32, 2, (int64_t[]){8, 8});
    int s = enc_tile(b, "s", TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){8, 8});
    assert_false(b->failed);
    tir_ap_t v = enc_ap_raw_view(b, a, ISA_DT_BF16 + 1, 0, 2, (const int64_t[][2]){{8, 8}, {1, 8}}, "x");
    const tir_ap_t *rv = tir_ap_intern(&f.k, &v);
    enc_note_built(b, rv);
    assert_ptr_not_equal(b->check_memo->e[enc_check_memo_slot(rv)].ap, rv);
    const tir_ap_t *full = enc_ap_memo_interned(b, NULL, s, 0, NULL, "x");
    assert_non_null(full);
    enc_note_built(b, full);
    assert_true(b->check_memo->nwhole > 0 && (b->check_memo->whole[s >> 6] >> (s & 63) & 1u));
    /* a memo of another kernel is left alone */
    tir_kernel_t other;
    b->check_memo->k = &other;
    enc_slice_t two[1] = {ENC_RANGE(2, 4)};
    r = enc_ap_interned(b, a, 1, two, "x");
    assert_ptr_not_equal(b->check_memo->e[enc_check_memo_slot(r)].ap, r);
    bfx_free(&f);
}

/* enc_ap_interned without slices (its own path for a name's first whole
 * record) against enc_ap_memo_interned without a memo in a twin builder:
 * the same records, whole records kept, records taken from a name's
 * previous instance, hits and failures; each new one noted. */
static void test_whole_as_memo(void **state)
{
    (void)state;
    bfx_t f1, f2;
    bfx_init(&f1);
    bfx_init(&f2);
    static const struct { const char *name; tir_tensor_kind_t kind; int64_t shape[2]; } decl[] = {
        {"x", TIR_T_SBUF, {1, 4}},   {"y", TIR_T_PSUM, {128, 16}}, {"x", TIR_T_SBUF, {1, 4}},
        {"x", TIR_T_SBUF, {2, 4}},   {"z", TIR_T_SBUF, {128, 64}}, {"y", TIR_T_PSUM, {128, 16}},
    };
    bfx_t *fs[2] = {&f1, &f2};
    int ids[2][8];
    for (int w = 0; w < 2; w++) {
        enc_builder_t *b = &fs[w]->b;
        ids[w][0] = enc_input(b, "in", ISA_DT_FP32, 2, (int64_t[]){64, 64});
        for (int i = 0; i < 6; i++)
            ids[w][i + 1] = enc_tile(b, decl[i].name, decl[i].kind, ISA_DT_FP32, 2, decl[i].shape);
        ids[w][7] = 99;   /* no such tensor */
        assert_false(b->failed);
    }
    /* each tensor twice (a first use, then its record found), in order */
    tpb_err_t e1, e2;   /* the builders keep the pointers: alive to the end */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 8; i++) {
            memset(&e1, 0, sizeof e1);
            memset(&e2, 0, sizeof e2);
            f1.b.err = &e1;
            f2.b.err = &e2;
            const tir_ap_t *r1 = enc_ap_interned(&f1.b, ids[0][i], 0, NULL, "x");
            const tir_ap_t *r2 = enc_ap_memo_interned(&f2.b, NULL, ids[1][i], 0, NULL, "x");
            assert_int_equal(f1.b.failed, f2.b.failed);
            assert_string_equal(e1.msg, e2.msg);
            f1.b.failed = f2.b.failed = false;
            assert_int_equal(r1 == NULL, r2 == NULL);
            if (!r1)
                continue;
            assert_memory_equal(r1, r2, sizeof *r1);
            assert_ptr_equal(f1.b.tinfo[ids[0][i]].full_ap, r1);
            assert_ptr_equal(f2.b.tinfo[ids[1][i]].full_ap, r2);
            assert_ptr_equal(f1.b.check_memo->e[enc_check_memo_slot(r1)].ap, r1);   /* noted */
        }
    assert_int_equal(f1.b.full_derived, f2.b.full_derived);
    assert_true(f1.b.full_derived >= 1);   /* x's second instance took the first's */
    assert_int_equal(f1.b.full_ap_hits, f2.b.full_ap_hits);
    for (int e = 0; e < f1.b.nnames; e++)
        assert_int_equal(f1.b.names[e].last_full != NULL, f2.b.names[e].last_full != NULL);
    bfx_free(&f1);
    bfx_free(&f2);
}

/* add_tensor's name rule in one pass (builder.c valid_name): the rule as
 * it was written (a letter or _, then letters, digits or _, shorter than
 * TIR_NAME_LEN - 8 bytes) decides every first and second byte and the
 * lengths around the bound alike. */
static bool name_rule(const char *s)
{
    if (!s || !*s || strlen(s) >= TIR_NAME_LEN - 8)
        return false;
    for (const char *p = s; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                  (p != s && *p >= '0' && *p <= '9');
        if (!ok)
            return false;
    }
    return true;
}

static void test_name_rule(void **state)
{
    (void)state;
    bfx_t f;
    bfx_init(&f);
    enc_builder_t *b = &f.b;
    char name[TIR_NAME_LEN + 8];
    int n = 0, ok = 0;
    tpb_err_t e;   /* the builder's for the whole test (it keeps the pointer) */
    b->err = &e;
    for (int pos = 0; pos < 3; pos++)
        for (int c = 1; c < 256; c++) {
            snprintf(name, sizeof name, "%s", pos == 0 ? "?" : pos == 1 ? "x?" : "ab?c");
            name[pos == 2 ? 2 : pos] = (char)c;
            memset(&e, 0, sizeof e);
            int t = enc_tile(b, name, TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4});
            if ((t >= 0) != name_rule(name))
                fail_msg("name byte %d at %d: tile %d", c, pos, t);
            if (t < 0)
                assert_non_null(strstr(e.msg, "is not a valid identifier"));
            ok += t >= 0;
            n++;
            b->failed = false;
        }
    for (int len = TIR_NAME_LEN - 11; len <= TIR_NAME_LEN - 6; len++) {
        memset(name, 'q', (size_t)len);
        name[len] = 0;
        name[0] = (char)('a' + len % 26);   /* a new name each time */
        int t = enc_tile(b, name, TIR_T_SBUF, ISA_DT_FP32, 2, (int64_t[]){1, 4});
        assert_int_equal(t >= 0, name_rule(name));
        ok += t >= 0;
        b->failed = false;
    }
    assert_true(ok > 150 && ok < n);
    bfx_free(&f);
}

/* ---- through the JSON front end ---- */

/* A tile's shape: its integral numbers read inline (fj_shape_item), the
 * rest through the general reader, with its messages. */
static void test_shape_items(void **state)
{
    (void)state;
    static const struct { const char *shape; int64_t d1; const char *msg; } cases[] = {
        {"[1, 4]", 4, NULL},
        {"[1, 4.0]", 4, NULL},
        {"[1, '2*3']", 6, NULL},
        {"[1, 2.5]", 0, "field 'shape': 2.5 is not an integer"},
        {"[1, 1e19]", 0, "field 'shape': 1e+19 is outside the 64-bit integer range"},
        {"[1, -1e19]", 0, "field 'shape': -1e+19 is outside the 64-bit integer range"},
        {"[1, true]", 0, "field 'shape': expected an integer or an expression string, got"},
        {"[1, 0]", 0, "dimension 1 is 0"},
        {"[1, -3]", 0, "dimension 1 is -3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[256];
        snprintf(body, sizeof body, "{'op': 'tile', 'name': 'z', 'shape': %s, 'dtype': 'float32'},"
                 "{'op': 'load', 'dst': 'z', 'src': 'a[0:1, 0:%lld]'}", cases[i].shape,
                 (long long)(cases[i].d1 > 0 ? cases[i].d1 : 1));
        tir_kernel_t k;
        tpb_err_t e;
        memset(&e, 0, sizeof e);
        int rc = parse_body(body, &k, &e);
        if (!cases[i].msg) {
            if (rc != 0)
                fail_msg("%s: %s", cases[i].shape, e.msg);
            assert_int_equal(k.tensors[k.ops[0].dst->tensor].shape[1], cases[i].d1);
        } else if (rc == 0 || !strstr(e.msg, cases[i].msg)) {
            fail_msg("%s: rc %d '%s'", cases[i].shape, rc, e.msg);
        }
        tir_kernel_free(&k);
    }
}

/* The op records and message of one statement, flat (0) or in a
 * one-iteration loop (1); the message without its path and the loop's
 * "(at i=0)". */
typedef struct {
    int rc, nops;
    tir_ap_t dst[4], src[4];
    char msg[sizeof(tpb_err_t)];
} outcome_t;

static void run_stmt(const char *decls, const char *stmt, int looped, outcome_t *o)
{
    char body[2048];
    if (looped)
        snprintf(body, sizeof body, "%s{'op': 'for', 'var': 'i', 'range': [1], 'body': [%s]}",
                 decls, stmt);
    else
        snprintf(body, sizeof body, "%s%s", decls, stmt);
    tir_kernel_t k;
    tpb_err_t e;
    memset(&e, 0, sizeof e);
    memset(o, 0, sizeof *o);
    o->rc = parse_body(body, &k, &e);
    const char *c = strstr(e.msg, "): ");   /* "<path> (<op>): ..." */
    const char *f = strstr(e.msg, "field '");
    snprintf(o->msg, sizeof o->msg, "%s", c ? c : f ? f : e.msg);
    char *at = strstr(o->msg, " (at i=0)");   /* the loop's note */
    if (at)
        *at = 0;
    if (o->rc == 0) {
        o->nops = k.nops;
        for (int i = 0; i < k.nops && i < 4; i++) {
            o->dst[i] = *k.ops[i].dst;
            o->src[i] = *k.ops[i].src[0];
        }
    }
    tir_kernel_free(&k);
}

static void test_flat_as_looped(void **state)
{
    (void)state;
    static const char decls[] = T("t", "[128, 512]", "float32") T("w", "[1, 4]", "float32")
        TP("p", "[128, 64]", "float32");
    static const char *const stmts[] = {
        "{'op': 'load', 'dst': 't', 'src': 'a[0:128, :]'}",
        "{'op': 'load', 'dst': 'w', 'src': 'a[5:6, 0:4]'}",
        "{'op': 'load', 'dst': 't[0:128:2, :]', 'src': 'a[0:64, :]'}",    /* a DMA's stride */
        "{'op': 'load', 'dst': 't[0:64, 0:512:2]', 'src': 'a[0:64, 0:256]'}",
        "{'op': 'store', 'dst': 'out[7, :]', 'src': 't[0:1, :]'}",
        "{'op': 'store', 'dst': 'out[299:400, :]', 'src': 't[0:1, :]'}",  /* clipped */
        "{'op': 'load', 'dst': 't', 'src': 'a[300:301, :]'}",            /* empty */
        "{'op': 'load', 'dst': 't', 'src': 'a[0:128, 512]'}",             /* index out of range */
        "{'op': 'load', 'dst': 't[0:128, :, 0]', 'src': 'a[0:128, :]'}",  /* too many indices */
        "{'op': 'load', 'dst': 'w', 'src': 'a[0:128, :]'}",               /* shapes differ */
        "{'op': 'load', 'dst': 'nope', 'src': 'a[0:128, :]'}",
        "{'op': 'tensor_copy', 'dst': 't[0:64, :]', 'src': 't[0:128:2, :]'}",   /* refused */
        "{'op': 'tensor_copy', 'dst': 't[0:128:2, :]', 'src': 't[0:64, :]'}",
        "{'op': 'tensor_copy', 'dst': 't[0:64, 0:256]', 'src': 't[64:128, 0:512:2]'}",
        "{'op': 'tensor_copy', 'dst': 'p[0:128, 0:64]', 'src': 't[0:128, 0:64]'}",
        "{'op': 'tensor_copy', 'dst': 'p[0:64:2, 0:64]', 'src': 't[0:32, 0:64]'}",
        "{'op': 'activation', 'func': 'exp', 'dst': 't[1:2, :]', 'src': 't[0:1, :]'}",
        "{'op': 'store', 'dst': 'a[0:1, :]', 'src': 't[0:1, :]'}",        /* an input written */
        /* a record noted for a DMA only (its partition step), then named by
         * a copy: the same interned record, which the check must refuse
         * (after a first op: the builder's check memo is made by the
         * first op's check) */
        /* (statements joined into one entry: parenthesised for clang's
         * -Wstring-concatenation) */
        ("{'op': 'load', 'dst': 'w', 'src': 'a[1:2, 0:4]'},"
         "{'op': 'load', 'dst': 't[0:128:2, :]', 'src': 'a[0:64, :]'},"
         "{'op': 'tensor_copy', 'dst': 't[0:64, :]', 'src': 't[0:128:2, :]'}"),
        ("{'op': 'load', 'dst': 'w[0:1, 0:4:2]', 'src': 'a[0:1, 0:2]'},"
         "{'op': 'tensor_copy', 'dst': 'w[0:1, 0:2]', 'src': 'w[0:1, 0:4:2]'}"),
    };
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof stmts / sizeof stmts[0]; i++) {
        outcome_t flat, looped;
        run_stmt(decls, stmts[i], 0, &flat);
        run_stmt(decls, stmts[i], 1, &looped);
        if (flat.rc != looped.rc || strcmp(flat.msg, looped.msg))
            fail_msg("%s: flat %d '%s', looped %d '%s'", stmts[i], flat.rc, flat.msg, looped.rc,
                     looped.msg);
        assert_int_equal(flat.nops, looped.nops);
        for (int k = 0; k < flat.nops && k < 4; k++) {
            assert_memory_equal(&flat.dst[k], &looped.dst[k], sizeof flat.dst[k]);
            assert_memory_equal(&flat.src[k], &looped.src[k], sizeof flat.src[k]);
        }
        passed += flat.rc == 0;
        failed += flat.rc != 0;
    }
    assert_true(passed >= 6);
    assert_true(failed >= 6);
    /* the refusal a note must not hide: a non-DMA op's stepped partitions */
    outcome_t o;
    run_stmt(decls, stmts[18], 0, &o);
    assert_int_equal(o.rc, -1);
    assert_non_null(strstr(o.msg, "): field 'src': dim 0 of a tile access must step "
                                  "over partitions"));
    run_stmt(decls, stmts[19], 0, &o);   /* a free-dim step: any op's */
    assert_int_equal(o.rc, 0);
    assert_int_equal(o.nops, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_notes_are_true),
        cmocka_unit_test(test_not_noted),
        cmocka_unit_test(test_whole_as_memo),
        cmocka_unit_test(test_name_rule),
        cmocka_unit_test(test_shape_items),
        cmocka_unit_test(test_flat_as_looped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
