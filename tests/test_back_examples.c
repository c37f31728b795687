/* Compile every examples/kernels/<name>.json and every golden/<case>/kernel.json
 * that the front-end accepts: the artifact directory must decode cleanly
 * engine by engine, the three CodeGenModes must agree, and the sidecars and
 * tensor map must parse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "back_util.h"
#include "cJSON.h"
#include "fileio.h"
#include "frontend.h"

static int check_dir(const char *dir, const enc_stats_t *st)
{
    const char *names[] = {"PE", "Activation", "Pool", "DVE", "SP"};
    int files = 0;
    uint32_t bytes[8] = {0};
    for (int i = 0; i < 5; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/nc0/sg0/%s.bin", dir, names[i]);
        uint8_t *buf;
        size_t len;
        tpb_err_t err;
        if (fio_read_all(p, &buf, &len, &err)) {
            assert_int_equal(st->insts[isa_tpb_engines[i]], 0);
            continue;
        }
        files++;
        isa_stream_t s;
        isa_err_t ie;
        isa_status_t rc = isa_stream_decode(buf, len, isa_tpb_engines[i], &s, &ie);
        if (rc != ISA_OK)
            print_error("%s: %s\n", p, ie.msg);
        assert_int_equal(rc, ISA_OK);
        assert_int_equal(s.nbundles, st->insts[isa_tpb_engines[i]]);
        assert_int_equal(s.insts[s.count - 1].inst.op, ISA_OP_HALT);
        bu_opset_add_bundles(bytes, buf, len);
        isa_stream_free(&s);
        free(buf);
        /* the sidecar parses and names the engine */
        snprintf(p, sizeof p, "%s/nc0/sg0/%s.json", dir, names[i]);
        assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
        cJSON *j = cJSON_Parse((const char *)buf);
        free(buf);
        assert_non_null(j);
        assert_string_equal(cJSON_GetObjectItem(j, "engine")->valuestring, names[i]);
        cJSON_Delete(j);
    }
    uint32_t collect[8] = {0}, hist[8] = {0};
    bu_opsets_of_stats(st, collect, hist);
    assert_memory_equal(bytes, collect, sizeof bytes);
    assert_memory_equal(bytes, hist, sizeof bytes);
    return files;
}

static int compile_one(const char *kernel, const char *tag)
{
    tir_kernel_t k;
    tpb_err_t err;
    if (enc_parse_kernel_file(kernel, NULL, 0, &k, &err)) {
        tir_kernel_free(&k);
        return -1;   /* the front-end refuses it: not this test's business */
    }
    if (k.num_programs > 1) {
        tir_kernel_free(&k);
        return -1;   /* multi-core kernels: a later issue */
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/back_ex_%s_%ld", TPB_BINARY_DIR, tag, (long)getpid());
    art_rmtree(dir);
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false};
    enc_stats_t st;
    int rc = enc_compile(&k, &o, &st, &err);
    if (rc)
        print_error("%s: %s\n", kernel, err.msg);
    assert_int_equal(rc, 0);
    int files = check_dir(dir, &st);
    assert_true(files >= 1 && files == st.files);
    char p[4200];
    snprintf(p, sizeof p, "%s/tensor-map.json", dir);
    assert_true(fio_exists(p));
    /* the verifier mode accepts the same program */
    o.mode = ENC_GENERATE_ISACODE;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    art_rmtree(dir);
    tir_kernel_free(&k);
    return 0;
}

static void test_examples(void **state)
{
    (void)state;
    const char *names[] = {"tensor_add", "matmul", "softmax", "attention"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/examples/kernels/%s.json", TPB_SOURCE_DIR, names[i]);
        assert_int_equal(compile_one(path, names[i]), 0);
    }
}

static void test_golden_kernels(void **state)
{
    (void)state;
    char gdir[4096];
    snprintf(gdir, sizeof gdir, "%s/golden", TPB_SOURCE_DIR);
    DIR *d = opendir(gdir);
    if (!d)
        skip();
    struct dirent *de;
    int compiled = 0;
    while ((de = readdir(d))) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s/kernel.json", gdir, de->d_name);
        if (de->d_name[0] == '.' || !fio_exists(path))
            continue;
        if (compile_one(path, de->d_name) == 0)
            compiled++;
    }
    closedir(d);
    assert_true(compiled > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_golden_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
