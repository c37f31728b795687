/* enc_compile_release (encoder/compile.c): the tile-IR ops given back
 * during the lowering must not change a byte of the artifact directory.
 * Each kernel is parsed twice and compiled by enc_compile and by
 * enc_compile_release; the two directories must hold the same files with
 * the same bytes, and the released kernel must have no op array left.
 *  - a compile-mixed kernel of 5 000 iterations (25 000 ops: the op array is
 *    a mapping of its own, so whole 2 MiB blocks behind the lowering's
 *    cursor are given back while it runs; any later read of an op would
 *    read zeros or crash), rotating tiles (the sidecars' "buf" strings);
 *  - golden/inline_asm (an inline_asm_bytes op: its sidecar entry's
 *    sync_type and latency_estimate come from the op's record);
 *  - golden/pe_transpose (the shared identity: the back end compiles a copy
 *    of the kernel, the caller's ops are freed once copied);
 *  - an error before the lowering still leaves no op array.
 * The released kernel's operand and rare-field pools are empty too; its
 * tensor names are unchanged.  The released compile also runs with spare
 * mappings (common/spare.h, as `tpb compile` does): the op array and pools
 * it frees are handed to the later passes, stale bytes and all, and must
 * change no byte either (the big case must reuse some). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "back_util.h"
#include "fileio.h"
#include "frontend.h"
#include "hugepage.h"

/* The same file names and bytes under a and b (recursively); returns the
 * number of files compared. */
static int same_tree(const char *a, const char *b)
{
    DIR *d = opendir(a);
    assert_non_null(d);
    int files = 0, entries = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        entries++;
        char pa[4096], pb[4096];
        snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
        DIR *sub = opendir(pa);
        if (sub) {
            closedir(sub);
            files += same_tree(pa, pb);
            continue;
        }
        uint8_t *ba = NULL, *bb = NULL;
        size_t la = 0, lb = 0;
        tpb_err_t err;
        assert_int_equal(fio_read_all(pa, &ba, &la, &err), 0);
        if (fio_read_all(pb, &bb, &lb, &err))
            fail_msg("%s: missing in the released compile", pb);
        if (la != lb || memcmp(ba, bb, la))
            fail_msg("%s and %s differ", pa, pb);
        free(ba);
        free(bb);
        files++;
    }
    closedir(d);
    /* nothing extra on b's side */
    d = opendir(b);
    assert_non_null(d);
    int others = 0;
    while ((e = readdir(d)))
        others += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    assert_int_equal(others, entries);
    return files;
}

static void dir_for(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "%s/back_release_%s_%ld", TPB_BINARY_DIR, tag, (long)getpid());
    art_rmtree(dir);
}

/* Parse text twice, compile both ways, compare. */
static void expect_same_compile(const char *text, const char *tag, bool big)
{
    tir_kernel_t k1, k2;
    tpb_err_t err;
    size_t len = strlen(text);
    if (enc_parse_kernel_json(text, len, tag, TPB_SOURCE_DIR, NULL, 0, &k1, &err) ||
        enc_parse_kernel_json(text, len, tag, TPB_SOURCE_DIR, NULL, 0, &k2, &err))
        fail_msg("%s: %s", tag, err.msg);
    if (big)   /* the case that gives pages back during the lowering */
        assert_true((size_t)k2.cap_ops * sizeof *k2.ops >= TPB_ARRAY_MAP_MIN + ((size_t)2 << 20));
    int ntensors = k2.ntensors;
    char da[4096], db[4096];
    dir_for(da, sizeof da, "a");
    dir_for(db, sizeof db, "b");
    enc_options_t o = {da, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t sa, sb;
    int rc = enc_compile(&k1, &o, &sa, &err);
    if (rc)
        print_error("%s: %s\n", tag, err.msg);
    assert_int_equal(rc, 0);
    o.out_dir = db;
    tpb_spare_t spare;
    memset(&spare, 0, sizeof spare);
    o.spare = &spare;
    rc = enc_compile_release(&k2, &o, &sb, &err);
    tpb_spare_release(&spare);
    if (rc)
        print_error("%s: %s\n", tag, err.msg);
    assert_int_equal(rc, 0);
    assert_null(k2.ops);
    assert_int_equal(k2.nops, 0);
    assert_int_equal(k2.ntensors, ntensors);
    assert_int_equal(k2.aps.n, 0);   /* the op pools went with the ops */
    assert_null(k2.aps.set);
    assert_int_equal(k2.rares.n, 0);
    for (int i = 0; i < ntensors; i++)   /* names stay (tensor map, sidecars) */
        assert_string_equal(k2.tensors[i].name, k1.tensors[i].name);
    assert_memory_equal(sa.insts, sb.insts, sizeof sa.insts);
    assert_true(same_tree(da, db) >= 4);
#ifdef __linux__
    if (big)
        assert_true(spare.reused >= TPB_ARRAY_MAP_MIN);
#endif
    art_rmtree(da);
    art_rmtree(db);
    tir_kernel_free(&k1);
    tir_kernel_free(&k2);
}

static char *read_text(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", TPB_SOURCE_DIR, rel);
    uint8_t *buf = NULL;
    size_t len = 0;
    tpb_err_t err;
    assert_int_equal(fio_read_all(path, &buf, &len, &err), 0);
    char *t = realloc(buf, len + 1);
    assert_non_null(t);
    t[len] = 0;
    return t;
}

static void test_release_mixed_same_bytes(void **state)
{
    (void)state;
    char text[2048];
    bu_mixed_kernel_text(text, sizeof text, 5000);   /* compile_mixed_kernel(5000) */
    expect_same_compile(text, "mixed", true);
}

static void test_release_inline_asm_same_bytes(void **state)
{
    (void)state;
    char *t = read_text("golden/inline_asm/kernel.json");
    assert_non_null(strstr(t, "inline_asm_bytes"));
    expect_same_compile(t, "inline_asm", false);
    free(t);
}

static void test_release_identity_copy_same_bytes(void **state)
{
    (void)state;
    char *t = read_text("golden/pe_transpose/kernel.json");
    tir_kernel_t k;
    tpb_err_t err;
    assert_int_equal(enc_parse_kernel_json(t, strlen(t), "pe", TPB_SOURCE_DIR, NULL, 0, &k, &err), 0);
    unsigned dt;
    assert_true(enc_needs_identity(&k, &dt));   /* the copying path */
    tir_kernel_free(&k);
    expect_same_compile(t, "pe_transpose", false);
    free(t);
}

static void test_release_on_error(void **state)
{
    (void)state;
    char *t = read_text("golden/inline_asm/kernel.json");
    tir_kernel_t k;
    tpb_err_t err;
    assert_int_equal(enc_parse_kernel_json(t, strlen(t), "e", TPB_SOURCE_DIR, NULL, 0, &k, &err), 0);
    enc_options_t o = {NULL, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    assert_int_not_equal(enc_compile_release(&k, &o, &st, &err), 0);   /* no output dir */
    assert_non_null(strstr(err.msg, "output directory"));
    assert_null(k.ops);
    assert_int_equal(k.nops, 0);
    assert_int_equal(k.aps.n, 0);
    tir_kernel_free(&k);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_mixed_same_bytes),
        cmocka_unit_test(test_release_inline_asm_same_bytes),
        cmocka_unit_test(test_release_identity_copy_same_bytes),
        cmocka_unit_test(test_release_on_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
