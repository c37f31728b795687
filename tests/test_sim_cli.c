/* `tpb sim` command line: exit codes, messages, atomic outputs, stats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "cJSON.h"
#include "fileio.h"
#include "sim_testlib.h"

#define PITCH ISA_DMA_PARTITION_PITCH
#define F32 ISA_DT_FP32

/* Run a shell command; returns the exit status, output (stdout+stderr) in buf. */
static int run(char *buf, size_t len, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(buf, 1, len - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void build_copy(tb_t *b, bool deadlock)
{
    tb_init(b, 1);
    int64_t sh[2] = { 2, 8 };
    uint64_t a = tb_tensor(b, "a", "input", F32, 2, sh);
    uint64_t o = tb_tensor(b, "out", "output", F32, 2, sh);
    tb_add(b, 0, TB_SP, tb_dma(tb_sb(0, 0, F32, 4, 8, PITCH, 2), tb_hbm(a, F32, 4, 8, 32, 2), 0));
    isa_inst_t t = tb_trig(0, 1);
    tb_upd(&t, 1, ISA_SEMOP_SEM_INC, 0, false);
    tb_add(b, 0, TB_SP, t);
    isa_inst_t d = tb_dma(tb_hbm(o, F32, 4, 8, 32, 2), tb_sb(0, 0, F32, 4, 8, PITCH, 2), 1);
    tb_wait(&d, 1, deadlock ? 2 : 1);
    tb_add(b, 0, TB_SP, d);
    tb_add(b, 0, TB_SP, tb_trig(1, 1));
    tb_write(b);
    char p[600];
    snprintf(p, sizeof p, "%s/in", b->dir);
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(p, &err), 0);
    npy_array_t arr;
    assert_int_equal(npy_alloc(&arr, F32, 2, sh, &err), 0);
    for (int i = 0; i < 16; i++)
        ((float *)arr.data)[i] = (float)i + 0.5f;
    snprintf(p, sizeof p, "%s/in/a.npy", b->dir);
    assert_int_equal(npy_write(p, &arr, &err), 0);
    /* a wrongly shaped and a wrongly typed input */
    int64_t bad[1] = { 16 };
    npy_array_t w;
    assert_int_equal(npy_alloc(&w, F32, 1, bad, &err), 0);
    snprintf(p, sizeof p, "%s/bad_shape.npy", b->dir);
    assert_int_equal(npy_write(p, &w, &err), 0);
    npy_free(&w);
    assert_int_equal(npy_alloc(&w, ISA_DT_INT32, 2, sh, &err), 0);
    snprintf(p, sizeof p, "%s/bad_type.npy", b->dir);
    assert_int_equal(npy_write(p, &w, &err), 0);
    npy_free(&w);
    npy_free(&arr);
}

static void test_help_and_usage(void **state)
{
    (void)state;
    char out[8192];
    assert_int_equal(run(out, sizeof out, "%s sim --help", tb_tpb()), 0);
    const char *opts[] = { "--inputs", "-o", "--target", "--max-cycles", "--trace", "--stats-json",
                           "--timing-only", "--seed", "--check-uninit", "--fsync", "--help",
                           "--threads", "--split-all" };
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        assert_non_null(strstr(out, opts[i]));
    /* SDL2 is dlopen'ed by `tpb view` only (viz/sdl_dyn.h): not at every start */
    if (run(out, sizeof out, "ldd %s", tb_tpb()) == 0)
        assert_null(strstr(out, "libSDL2"));
    assert_int_equal(run(out, sizeof out, "%s sim", tb_tpb()), 2);
    assert_non_null(strstr(out, "missing <artifact-dir>"));
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --bogus", tb_tpb()), 2);
    assert_non_null(strstr(out, "unknown option '--bogus'"));
    assert_int_equal(run(out, sizeof out, "%s sim /nonexistent/dir", tb_tpb()), 2);
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --target trn9", tb_tpb()), 2);
    assert_non_null(strstr(out, "unknown target 'trn9'"));
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --max-cycles abc", tb_tpb()), 2);
    /* --threads: 1..256 */
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --threads 0", tb_tpb()), 2);
    assert_non_null(strstr(out, "--threads must be 1..256, not 0"));
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --threads 257", tb_tpb()), 2);
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --threads two", tb_tpb()), 2);
    assert_non_null(strstr(out, "'two' is not an integer"));
    assert_int_equal(run(out, sizeof out, "%s sim /tmp --threads", tb_tpb()), 2);
    assert_non_null(strstr(out, "--threads needs a value"));
}

static void test_run_ok(void **state)
{
    (void)state;
    tb_t b;
    build_copy(&b, false);
    char out[8192];
    int rc = run(out, sizeof out, "%s sim %s --inputs %s/in -o %s/out --stats-json %s/st.json --trace %s/tr.json",
                 tb_tpb(), b.dir, b.dir, b.dir, b.dir, b.dir);
    if (rc != 0)
        fail_msg("rc %d: %s", rc, out);
    assert_non_null(strstr(out, "total:"));
    assert_non_null(strstr(out, "cycles"));
    assert_non_null(strstr(out, "busy_cycles"));
    assert_non_null(strstr(out, "dma queue"));
    assert_non_null(strstr(out, "simulated instructions/s"));
    char p[600];
    snprintf(p, sizeof p, "%s/out/out.npy", b.dir);
    npy_array_t r;
    tpb_err_t err;
    assert_int_equal(npy_read(p, &r, &err), 0);
    for (int i = 0; i < 16; i++)
        assert_true(((float *)r.data)[i] == (float)i + 0.5f);
    npy_free(&r);
    snprintf(p, sizeof p, "%s/st.json", b.dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    cJSON *j = cJSON_Parse((char *)buf);
    free(buf);
    assert_non_null(j);
    assert_true(cJSON_GetObjectItem(j, "total_cycles")->valuedouble > 0);
    cJSON_Delete(j);
    snprintf(p, sizeof p, "%s/tr.json", b.dir);
    assert_true(fio_exists(p));
    /* name=file form; a second run is deterministic (same cycles line) */
    char out2[8192];
    rc = run(out2, sizeof out2, "%s sim %s --inputs a=%s/in/a.npy", tb_tpb(), b.dir, b.dir);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out2, "outputs not written"));
    char *l1 = strstr(out, "total:"), *l2 = strstr(out2, "total:");
    assert_int_equal(strncmp(l1, l2, (size_t)(strchr(l1, '\n') - l1)), 0);
    tb_free(&b);
}

static void test_input_errors(void **state)
{
    (void)state;
    tb_t b;
    build_copy(&b, false);
    char out[8192];
    assert_int_equal(run(out, sizeof out, "%s sim %s -o %s/o", tb_tpb(), b.dir, b.dir), 2);
    assert_non_null(strstr(out, "missing input tensor(s): a"));
    assert_int_equal(run(out, sizeof out, "%s sim %s --inputs a=%s/bad_shape.npy", tb_tpb(), b.dir, b.dir), 2);
    assert_non_null(strstr(out, "shape (16,) does not match the tensor map's (2, 8)"));
    assert_int_equal(run(out, sizeof out, "%s sim %s --inputs a=%s/bad_type.npy", tb_tpb(), b.dir, b.dir), 2);
    assert_non_null(strstr(out, "element type int32 does not match"));
    assert_int_equal(run(out, sizeof out, "%s sim %s --inputs nope=%s/in/a.npy", tb_tpb(), b.dir, b.dir), 2);
    assert_non_null(strstr(out, "input 'nope': no tensor"));
    assert_int_equal(run(out, sizeof out, "%s sim %s --inputs %s/none", tb_tpb(), b.dir, b.dir), 2);
    tb_free(&b);
}

/* --timing-only needs no inputs (and reads none): same cycles line as a
 * run on real inputs, also with --check-uninit; the output keeps the
 * never-written sentinel (no data moves). */
static void test_timing_only_without_inputs(void **state)
{
    (void)state;
    tb_t b;
    build_copy(&b, false);
    char full[8192], t1[8192], t2[8192];
    assert_int_equal(run(full, sizeof full, "%s sim %s --inputs %s/in", tb_tpb(), b.dir, b.dir), 0);
    int rc = run(t1, sizeof t1, "%s sim %s --timing-only -o %s/to", tb_tpb(), b.dir, b.dir);
    if (rc != 0)
        fail_msg("rc %d: %s", rc, t1);
    assert_int_equal(run(t2, sizeof t2, "%s sim %s --timing-only --check-uninit --inputs %s/none",
                         tb_tpb(), b.dir, b.dir), 0);
    char *l0 = strstr(full, "total:"), *l1 = strstr(t1, "total:"), *l2 = strstr(t2, "total:");
    assert_non_null(l0);
    assert_non_null(l1);
    assert_non_null(l2);
    size_t n = (size_t)(strchr(l0, '\n') - l0);
    assert_int_equal(strncmp(l0, l1, n), 0);
    assert_int_equal(strncmp(l0, l2, n), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/to/out.npy", b.dir);
    npy_array_t r;
    tpb_err_t err;
    assert_int_equal(npy_read(p, &r, &err), 0);
    for (int i = 0; i < 16; i++) {
        uint32_t u;
        memcpy(&u, (float *)r.data + i, 4);
        assert_int_equal(u, 0xFFFFFFFFu);
    }
    npy_free(&r);
    tb_free(&b);
}

/* --fsync changes only when the data reaches the disk: the same output
 * bytes, and (as without it) nothing but the outputs is left in -o. */
static void test_fsync_same_outputs(void **state)
{
    (void)state;
    tb_t b;
    build_copy(&b, false);
    char out[8192];
    for (int k = 0; k < 2; k++) {
        int rc = run(out, sizeof out, "%s sim %s --inputs %s/in -o %s/o%d --stats-json %s/o%d/st.json%s",
                     tb_tpb(), b.dir, b.dir, b.dir, k, b.dir, k, k ? " --fsync" : "");
        if (rc != 0)
            fail_msg("rc %d: %s", rc, out);
    }
    uint8_t *a, *c;
    size_t na, nc;
    tpb_err_t err;
    char p[600];
    snprintf(p, sizeof p, "%s/o0/out.npy", b.dir);
    assert_int_equal(fio_read_all(p, &a, &na, &err), 0);
    snprintf(p, sizeof p, "%s/o1/out.npy", b.dir);
    assert_int_equal(fio_read_all(p, &c, &nc, &err), 0);
    assert_int_equal(na, nc);
    assert_memory_equal(a, c, na);
    free(a);
    free(c);
    assert_int_equal(run(out, sizeof out, "ls -A %s/o1", b.dir), 0);
    assert_string_equal(out, "out.npy\nst.json\n");
    tb_free(&b);
}

/* tpb compile writes no fsync by default and fsyncs with --fsync (as tpb
 * sim, docs/reliability.md "Durability"): the same artifact bytes either
 * way, the directory replaced whole, no temporary left inside or beside it. */
static void test_compile_fsync_same_artifacts(void **state)
{
    (void)state;
    char dir[] = "/tmp/tpb_cfsync_XXXXXX", p[600], out[8192];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/k.json", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"kernel\": \"k\", \"target\": \"trn2\", \"inputs\": [{\"name\": \"a\", \"shape\": "
          "[1, 4], \"dtype\": \"float32\"}], \"outputs\": [{\"name\": \"out\", \"shape\": [1, 4], "
          "\"dtype\": \"float32\"}], \"body\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\": "
          "[1, 4], \"dtype\": \"float32\"}, {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a\"}, "
          "{\"op\": \"tensor_scalar\", \"dst\": \"t\", \"src\": \"t\", \"op0\": \"add\", "
          "\"operand0\": 1.0, \"engine\": \"dve\"}, {\"op\": \"store\", \"dst\": \"out\", "
          "\"src\": \"t\"}]}\n", f);
    assert_int_equal(fclose(f), 0);
    for (int k = 0; k < 3; k++) {   /* the third replaces the second's directory */
        int rc = run(out, sizeof out, "%s compile %s/k.json -o %s/a%d%s", tb_tpb(), dir, dir,
                     k ? 1 : 0, k ? " --fsync" : "");
        if (rc != 0)
            fail_msg("rc %d: %s", rc, out);
    }
    assert_int_equal(run(out, sizeof out, "diff -r %s/a0 %s/a1", dir, dir), 0);
    assert_int_equal(run(out, sizeof out, "cd %s && find . | grep -c tmp", dir), 1);
    assert_string_equal(out, "0\n");
    snprintf(p, sizeof p, "%s/a1/nc0/sg0/DVE.bin", dir);
    assert_true(fio_exists(p));
    assert_int_equal(run(out, sizeof out, "%s compile --help", tb_tpb()), 0);
    assert_non_null(strstr(out, "--fsync"));
    assert_int_equal(fio_rmtree(dir), 0);
}

/* A grid's programs share --max-memory's op limit: program 1, whose loop
 * depends on pid, is refused while it unrolls (before, only program 0 was
 * measured and program 1 unrolled 100 000 ops past a 64 MiB budget). */
static void test_compile_grid_op_limit_shared(void **state)
{
    (void)state;
    char dir[] = "/tmp/tpb_cgrid_XXXXXX", p[600], out[8192];
    assert_non_null(mkdtemp(dir));
    for (int k = 0; k < 2; k++) {
        snprintf(p, sizeof p, "%s/k%d.json", dir, k);
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        fprintf(f, "{\"kernel\": \"k\", \"grid\": [2], \"inputs\": [{\"name\": \"x\", "
                   "\"shape\": [128, 64], \"dtype\": \"float32\"}], \"outputs\": [{\"name\": "
                   "\"out\", \"shape\": [128, 64], \"dtype\": \"float32\"}], \"body\": [{\"op\": "
                   "\"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"}, "
                   "{\"op\": \"load\", \"dst\": \"t\", \"src\": \"x\"}, {\"op\": \"for\", "
                   "\"var\": \"i\", \"range\": [\"pid * %d\"], \"body\": [{\"op\": "
                   "\"activation\", \"dst\": \"t\", \"src\": \"t\", \"func\": \"relu\"}]}, "
                   "{\"op\": \"store\", \"dst\": \"out\", \"src\": \"t\"}]}\n",
                k ? 100000 : 100);
        assert_int_equal(fclose(f), 0);
    }
    int rc = run(out, sizeof out, "%s compile %s/k0.json -o %s/a0 --max-memory 64M", tb_tpb(), dir,
                 dir);
    if (rc != 0)
        fail_msg("rc %d: %s", rc, out);
    assert_int_equal(run(out, sizeof out, "%s compile %s/k1.json -o %s/a1 --max-memory 64M",
                         tb_tpb(), dir, dir), 1);
    assert_non_null(strstr(out, "k1.json: program 1 of 2"));
    assert_non_null(strstr(out, "op limit"));
    assert_non_null(strstr(out, "field 'range'"));
    assert_non_null(strstr(out, "give a larger --max-memory"));
    snprintf(p, sizeof p, "%s/a1", dir);
    assert_false(fio_exists(p));
    assert_int_equal(fio_rmtree(dir), 0);
}

/* Each program of a grid is counted with its fixed part (its arrays, its
 * tensors): a 2-op kernel on a grid of 16384 programs holds ~600 MB and is
 * refused under --max-memory 256M before its programs are parsed (before,
 * only ops were counted: 2 x 16384 x 1120 bytes = 35 MiB, and it compiled
 * in 635 MB). */
static void test_compile_grid_programs_counted(void **state)
{
    (void)state;
    char dir[] = "/tmp/tpb_cgridp_XXXXXX", p[600], out[8192];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/k.json", dir);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"kernel\": \"k\", \"grid\": [16384], \"inputs\": [{\"name\": \"x\", \"shape\": "
          "[1, 4], \"dtype\": \"float32\"}], \"outputs\": [{\"name\": \"out\", \"shape\": [1, 4], "
          "\"dtype\": \"float32\"}], \"body\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\": "
          "[1, 4], \"dtype\": \"float32\"}, {\"op\": \"load\", \"dst\": \"t\", \"src\": \"x\"}, "
          "{\"op\": \"store\", \"dst\": \"out\", \"src\": \"t\"}]}\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(run(out, sizeof out, "%s compile %s/k.json -o %s/a --max-memory 256M", tb_tpb(),
                         dir, dir), 1);
    assert_non_null(strstr(out, "k.json: estimated memory"));
    assert_non_null(strstr(out, "16384 programs"));
    assert_non_null(strstr(out, "for the program and its 3 tensors"));
    assert_non_null(strstr(out, "--max-memory"));
    snprintf(p, sizeof p, "%s/a", dir);
    assert_false(fio_exists(p));
    assert_int_equal(fio_rmtree(dir), 0);
}

static void test_sim_error_no_outputs(void **state)
{
    (void)state;
    tb_t b;
    build_copy(&b, true);
    char out[8192];
    assert_int_equal(run(out, sizeof out, "%s sim %s --inputs %s/in -o %s/out", tb_tpb(), b.dir, b.dir, b.dir), 1);
    assert_non_null(strstr(out, "deadlock"));
    assert_non_null(strstr(out, "waits for S1 >= 2 (value 1"));
    char p[600];
    snprintf(p, sizeof p, "%s/out/out.npy", b.dir);
    assert_false(fio_exists(p));
    /* runaway bounded by --max-cycles */
    tb_free(&b);
    tb_init(&b, 1);
    tb_add(&b, 0, TB_SP, tb_jump(ISA_OP_JUMP, 0));
    tb_write(&b);
    assert_int_equal(run(out, sizeof out, "%s sim %s --max-cycles 5000", tb_tpb(), b.dir), 1);
    assert_non_null(strstr(out, "exceeded --max-cycles 5000"));
    /* malformed stream */
    uint8_t junk[10] = { 0 };
    tb_write_raw(&b, 0, TB_SP, junk, sizeof junk);
    assert_int_equal(run(out, sizeof out, "%s sim %s", tb_tpb(), b.dir), 1);
    assert_non_null(strstr(out, "SP.bin"));
    tb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_usage),
        cmocka_unit_test(test_run_ok),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_timing_only_without_inputs),
        cmocka_unit_test(test_sim_error_no_outputs),
        cmocka_unit_test(test_fsync_same_outputs),
        cmocka_unit_test(test_compile_fsync_same_artifacts),
        cmocka_unit_test(test_compile_grid_op_limit_shared),
        cmocka_unit_test(test_compile_grid_programs_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
