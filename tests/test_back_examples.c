/* Compile every examples/kernels/<name>.json and every golden/<case>/kernel.json
 * that the front-end accepts: the artifact directory must decode cleanly
 * engine by engine, the three CodeGenModes must agree, and the sidecars and
 * tensor map must parse; def.json and the tensor maps are cJSON_Print's
 * bytes. */
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

/* The file at dir/name is what cJSON_Print gives for the document it
 * holds (the layout, escapes and numbers def.json and tensor-map.json had
 * when cJSON wrote them). */
static void expect_cjson_print(const char *dir, const char *name)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    cJSON *j = cJSON_Parse((const char *)buf);
    assert_non_null(j);
    char *again = cJSON_Print(j);
    assert_non_null(again);
    assert_string_equal((const char *)buf, again);
    free(again);
    cJSON_Delete(j);
    free(buf);
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
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    int rc = enc_compile(&k, &o, &st, &err);
    if (rc)
        print_error("%s: %s\n", kernel, err.msg);
    assert_int_equal(rc, 0);
    int files = check_dir(dir, &st);
    assert_true(files >= 1 && files == st.files);
    expect_cjson_print(dir, "tensor-map.json");
    expect_cjson_print(dir, "nc0/sg0/tensor-map.json");
    expect_cjson_print(dir, "nc0/sg0/def.json");
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

/* The tensor map's rarer members through enc_write_tensor_map: a name
 * that needs escaping, a print prefix, a constant's file, shared scratch's
 * live epochs, addresses past 2^32 and past 2^53 (cJSON's %1.17g). */
static void test_tensor_map_members(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    snprintf(k.name, sizeof k.name, "map\"test\t");
    BU_T(&k, "in\"q", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int o = BU_T(&k, "out", TIR_T_OUTPUT, ISA_DT_BF16, 4, 1000000);
    BU_T(&k, "c", TIR_T_CONSTANT, ISA_DT_FP32, 3);
    BU_T(&k, "s", TIR_T_SCRATCH, ISA_DT_INT32, 7, 5);
    BU_T(&k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 4);
    k.tensors[o].print_prefix = "dbg: ";
    uint64_t addr[5] = {0, (uint64_t)5 << 30, ((uint64_t)1 << 60) + 7, 64, 0};
    int lo[5] = {0, 0, 0, 2, 0}, hi[5] = {0, 0, 0, 9, 0};
    enc_hbm_layout_t hbm = {addr, 5, ((uint64_t)1 << 60) + 4096, lo, hi};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/back_map_%ld", TPB_BINARY_DIR, (long)getpid());
    art_rmtree(dir);
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    assert_int_equal(enc_write_tensor_map(&k, tpb_target_get("trn2"), &hbm, dir, &err), 0);
    expect_cjson_print(dir, "tensor-map.json");
    char p[4200];
    snprintf(p, sizeof p, "%s/tensor-map.json", dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    const char *want[] = {"\"kernel\":\t\"map\\\"test\\t\"", "\"name\":\t\"in\\\"q\"",
                          "\"print_prefix\":\t\"dbg: \"", "\"file\":\t\"nc0/sg0/const_c.npy\"",
                          "\"live_epochs\":\t[2, 9]", "\"hbm_addr\":\t5368709120",
                          "\"hbm_addr\":\t1.152921504606847e+18", "\"sbuf_compatible\":\tfalse"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!strstr((const char *)buf, want[i]))
            fail_msg("tensor-map.json lacks %s:\n%s", want[i], (const char *)buf);
    assert_null(strstr((const char *)buf, "\"t\""));   /* SBUF: not in the map */
    free(buf);
    art_rmtree(dir);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_golden_kernels),
        cmocka_unit_test(test_tensor_map_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
