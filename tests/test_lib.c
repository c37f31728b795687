/* lib/: libtpb's C API (lib/tpb.h) through the shared library: compile a
 * kernel description from memory, simulate it on in-memory inputs, read the
 * output back, and every misuse returns -1 with a message (never aborts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tpb.h"

static const char *K =
    "{\"kernel\": \"relu\", \"inputs\": [{\"name\": \"x\", \"shape\": [128, 64], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [128, 64], \"dtype\": \"float32\"}],"
    " \"body\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
    " {\"op\": \"dma_copy\", \"dst\": \"t\", \"src\": \"x\", \"loc\": \"k.py:3\"},"
    " {\"op\": \"activation\", \"dst\": \"t\", \"src\": \"t\", \"func\": \"relu\", \"loc\": \"k.py:4\"},"
    " {\"op\": \"dma_copy\", \"dst\": \"out\", \"src\": \"t\", \"loc\": \"k.py:5\"}]}";

static char *tmpdir(void)
{
    static char d[64];
    snprintf(d, sizeof d, "/tmp/tpb-libtest-XXXXXX");
    return mkdtemp(d);
}

static void test_compile_and_simulate(void **state)
{
    (void)state;
    assert_int_equal(tpb_v1_api_version(), TPB_API_VERSION);
    tpb_ctx_t *c = tpb_v1_new();
    assert_non_null(c);
    char *d = tmpdir();
    assert_non_null(d);
    char art[128];
    snprintf(art, sizeof art, "%s/art", d);
    int64_t nops = 0;
    int nprog = 0;
    assert_int_equal(tpb_v1_check_json(c, K, strlen(K), "k.py", NULL, NULL, &nops, &nprog), 0);
    assert_int_equal(nops, 3);
    assert_int_equal(nprog, 1);
    assert_int_equal(tpb_v1_compile_json(c, K, strlen(K), "k.py", NULL, NULL, art), 0);
    assert_true(tpb_v1_compiled_bundles(c) > 0);
    assert_int_equal(tpb_v1_sim_load(c, art, NULL, 1), 0);
    float x[128 * 64];
    for (int i = 0; i < 128 * 64; i++)
        x[i] = (float)(i % 7) - 3.0f;
    int64_t shape[2] = {128, 64};
    assert_int_equal(tpb_v1_sim_set_input(c, "x", "<f4", 2, shape, x, sizeof x), 0);
    assert_int_equal(tpb_v1_sim_run(c), 0);
    assert_true(tpb_v1_sim_cycles(c) > 0);
    char descr[8];
    int nd = 0;
    int64_t sh[8];
    size_t nb = 0;
    assert_int_equal(tpb_v1_sim_fetch(c, "out", descr, &nd, sh, &nb), 0);
    assert_string_equal(descr, "<f4");
    assert_int_equal(nd, 2);
    assert_int_equal(nb, sizeof x);
    float *y = malloc(nb);
    assert_non_null(y);
    assert_int_equal(tpb_v1_sim_fetch_copy(c, y, nb), 0);
    for (int i = 0; i < 128 * 64; i++)
        assert_true(y[i] == (x[i] > 0 ? x[i] : 0.0f));
    free(y);
    const char *st = tpb_v1_sim_stats_json(c);
    assert_non_null(st);
    assert_non_null(strstr(st, "total_cycles"));
    char tr[128];
    snprintf(tr, sizeof tr, "%s/t.json", d);
    assert_int_equal(tpb_v1_sim_write_trace(c, tr), 0);
    /* the op's "loc" is what the trace names */
    FILE *f = fopen(tr, "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_non_null(strstr(buf, "\"src\":\"k.py:4\""));
    tpb_v1_free(c);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
}

static void test_errors_return_messages(void **state)
{
    (void)state;
    tpb_ctx_t *c = tpb_v1_new();
    assert_non_null(c);
    /* a field error names the source, the op's loc and the field */
    const char *bad = "{\"inputs\": [{\"name\": \"x\", \"shape\": [128, 64], \"dtype\": \"float32\"}],"
                      " \"body\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 32], \"dtype\": \"float32\"},"
                      " {\"op\": \"dma_copy\", \"dst\": \"t\", \"src\": \"x\", \"loc\": \"k.py:9\"}]}";
    assert_int_equal(tpb_v1_compile_json(c, bad, strlen(bad), "k.py", NULL, NULL, "/tmp/x"), -1);
    assert_non_null(strstr(tpb_v1_error(c), "k.py:9 (dma_copy): field 'src'"));
    assert_int_equal(tpb_v1_compile_json(c, "{", 1, "k.py", NULL, NULL, "/tmp/x"), -1);
    assert_true(strlen(tpb_v1_error(c)) > 0);
    assert_int_equal(tpb_v1_compile_json(c, K, strlen(K), "k.py", NULL, "trn9", "/tmp/x"), -1);
    assert_non_null(strstr(tpb_v1_error(c), "unknown target"));
    assert_int_equal(tpb_v1_compile_json(c, NULL, 0, NULL, NULL, NULL, NULL), -1);
    /* simulation misuse */
    assert_int_equal(tpb_v1_sim_run(c), -1);
    assert_non_null(strstr(tpb_v1_error(c), "no artifact loaded"));
    assert_int_equal(tpb_v1_sim_load(c, "/nonexistent/dir", NULL, 0), -1);
    assert_true(strlen(tpb_v1_error(c)) > 0);
    assert_null(tpb_v1_sim_stats_json(c));
    int64_t shape[2] = {128, 64};
    float x[4] = {0};
    assert_int_equal(tpb_v1_sim_set_input(c, "x", "<f4", 2, shape, x, sizeof x), -1);
    assert_int_equal(tpb_v1_sim_fetch_copy(c, x, sizeof x), -1);
    /* a NULL context is refused, not dereferenced */
    assert_int_equal(tpb_v1_sim_run(NULL), -1);
    assert_non_null(tpb_v1_error(NULL));
    tpb_v1_free(NULL);
    tpb_v1_free(c);
}

static void test_input_checks(void **state)
{
    (void)state;
    tpb_ctx_t *c = tpb_v1_new();
    char *d = tmpdir();
    char art[128];
    snprintf(art, sizeof art, "%s/art", d);
    assert_int_equal(tpb_v1_compile_json(c, K, strlen(K), "k.py", NULL, NULL, art), 0);
    assert_int_equal(tpb_v1_sim_load(c, art, NULL, 0), 0);
    static float x[128 * 64];
    int64_t shape[2] = {128, 64}, wrong[2] = {64, 128};
    assert_int_equal(tpb_v1_sim_set_input(c, "x", "<f8", 2, shape, x, sizeof x), -1);
    assert_int_equal(tpb_v1_sim_set_input(c, "x", "<f4", 2, shape, x, 12), -1);
    assert_int_equal(tpb_v1_sim_set_input(c, "x", "<f4", 2, wrong, x, sizeof x), -1);
    assert_int_equal(tpb_v1_sim_set_input(c, "nope", "<f4", 2, shape, x, sizeof x), -1);
    assert_non_null(strstr(tpb_v1_error(c), "nope"));
    assert_int_equal(tpb_v1_sim_run(c), -1);   /* x not bound */
    assert_non_null(strstr(tpb_v1_error(c), "x"));
    tpb_v1_free(c);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
}

/* A kernel of `body` (one [128, 64] tile t between a load of x and a
 * store to out) on a grid of `grid` programs. */
static void grid_kernel(char *buf, size_t n, int grid, const char *body)
{
    snprintf(buf, n,
             "{\"kernel\": \"k\", \"grid\": [%d], \"inputs\": [{\"name\": \"x\", \"shape\": [128, 64],"
             " \"dtype\": \"float32\"}], \"outputs\": [{\"name\": \"out\", \"shape\": [128, 64],"
             " \"dtype\": \"float32\"}], \"body\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\":"
             " [128, 64], \"dtype\": \"float32\"}, {\"op\": \"load\", \"dst\": \"t\", \"src\": \"x\"},"
             " %s, {\"op\": \"store\", \"dst\": \"out\", \"src\": \"t\"}]}",
             grid, body);
}

/* Compile the kernel of a relu loop over `range` on a grid of `grid`
 * programs under a budget of `budget` bytes: refused, with every string
 * of the NULL-ended `needles` in the message, and nothing at art. */
static void assert_refused(tpb_ctx_t *c, const char *range, int grid, uint64_t budget,
                           const char *art, const char *const *needles)
{
    char body[512], text[2048];
    snprintf(body, sizeof body, "{\"op\": \"for\", \"var\": \"i\", \"range\": [%s], \"body\": "
                                "[{\"op\": \"activation\", \"dst\": \"t\", \"src\": \"t\", "
                                "\"func\": \"relu\"}]}", range);
    grid_kernel(text, sizeof text, grid, body);
    assert_int_equal(tpb_v1_set_max_memory(c, budget), 0);
    assert_int_equal(tpb_v1_compile_json(c, text, strlen(text), "k.py", NULL, NULL, art), -1);
    for (const char *const *n = needles; *n; n++)
        if (!strstr(tpb_v1_error(c), *n))
            fail_msg("'%s' not in: %s", *n, tpb_v1_error(c));
    assert_int_equal(access(art, F_OK), -1);
    /* the default budget (3/4 of this machine's memory) holds it */
    assert_int_equal(tpb_v1_set_max_memory(c, 0), 0);
    assert_int_equal(tpb_v1_check_json(c, text, strlen(text), "k.py", NULL, NULL, NULL, NULL), 0);
}

/* The library compiles under the same memory budget as `tpb compile
 * --max-memory` (tpb_v1_set_max_memory; default 3/4 of physical memory):
 * a loop that unrolls past it is refused while it unrolls, a grid whose
 * programs do not fit before they are parsed, a grid program whose loop
 * depends on pid while it unrolls -- each with the note that names the
 * budget, and no output directory.  Before, the library had no budget: a
 * kernel unrolled up to 10 M ops per program whatever the machine held. */
static void test_memory_budget(void **state)
{
    (void)state;
    tpb_ctx_t *c = tpb_v1_new();
    assert_non_null(c);
    char *d = tmpdir();
    assert_non_null(d);
    char art[128];
    snprintf(art, sizeof art, "%s/art", d);
    /* the op limit, while the loop unrolls */
    const char *ops[] = {"k.py: body[2]: field 'range'", "\nnote: the op limit of",
                         "comes from the memory limit of 16.0 MiB", "give a larger max_memory",
                         NULL};
    assert_refused(c, "50000", 1, 16u << 20, art, ops);
    /* the loop-iteration guard (4 x the op limit), before it unrolls */
    const char *iters[] = {"runaway loop?", "\nnote: the loop-iteration limit of",
                           "(4 x the op limit of", "give a larger max_memory", NULL};
    assert_refused(c, "100000", 1, 16u << 20, art, iters);
    /* a grid's programs and tensors, counted before any program but 0 is parsed */
    const char *grid[] = {"k.py: estimated memory", "16384 programs",
                          "give a larger max_memory to try anyway", NULL};
    assert_refused(c, "2", 16384, 256u << 20, art, grid);
    /* program 1 unrolls 100 000 ops where program 0 unrolls none: the
     * programs share the op limit */
    const char *shared[] = {"program 1 of 2", "k.py: body[2]", "field 'range'",
                            "\nnote: the op limit of", "less", "give a larger max_memory", NULL};
    assert_refused(c, "\"pid * 100000\"", 2, 64u << 20, art, shared);
    /* under a budget that holds it, it compiles */
    int64_t nops = 0;
    char text[2048];
    grid_kernel(text, sizeof text, 1,
                "{\"op\": \"for\", \"var\": \"i\", \"range\": [50000], \"body\": [{\"op\": "
                "\"activation\", \"dst\": \"t\", \"src\": \"t\", \"func\": \"relu\"}]}");
    assert_int_equal(tpb_v1_set_max_memory(c, 4ull << 30), 0);
    assert_int_equal(tpb_v1_check_json(c, text, strlen(text), "k.py", NULL, NULL, &nops, NULL), 0);
    assert_int_equal(nops, 50002);
    assert_int_equal(tpb_v1_compile_json(c, text, strlen(text), "k.py", NULL, NULL, art), 0);
    assert_int_equal(access(art, F_OK), 0);
    assert_int_equal(tpb_v1_set_max_memory(NULL, 0), -1);
    tpb_v1_free(c);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_and_simulate),
        cmocka_unit_test(test_errors_return_messages),
        cmocka_unit_test(test_input_checks),
        cmocka_unit_test(test_memory_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
