/* The tensors the compiler adds on its own never take a kernel's name (NKI
 * reserves none): the shared identity of PE transposes (HBM constant and
 * SBUF tile, one compile and the multi-core split), spill slots, the
 * front-end's scratch tiles (dma_transpose_cast, ...), device_print's
 * buffers, and the split's per-program tile copies of long names.  Each
 * kernel is compiled, simulated, and its outputs checked against values
 * computed here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "fileio.h"
#include "frontend.h"
#include "lnc.h"
#include "npy.h"
#include "sim.h"

#define MAX_IN 6

typedef struct {
    char root[64];       /* the test's temporary directory */
    char dir[128];       /* the artifact directory */
    char names[4096];    /* tensor-map.json's names, each followed by a space */
} case_t;

static void case_open(case_t *c)
{
    snprintf(c->root, sizeof c->root, "/tmp/tpb-own-XXXXXX");
    assert_non_null(mkdtemp(c->root));
    snprintf(c->dir, sizeof c->dir, "%s/art", c->root);
}

static void case_close(case_t *c)
{
    art_rmtree(c->root);
}

/* Compile text into c->dir (a grid: through the multi-core split, from a
 * file), SBUF limited to sbuf_limit bytes (0: none); c->names. */
static void compile_text(case_t *c, const char *text, uint64_t sbuf_limit)
{
    tpb_err_t err = {{0}};
    tir_kernel_t k;
    if (enc_parse_kernel_json(text, strlen(text), "k.json", NULL, NULL, 0, &k, &err))
        fail_msg("parse: %s", err.msg);
    enc_options_t o = {.out_dir = c->dir, .mode = ENC_RUN_ISA_CHECKS, .sbuf_limit = sbuf_limit};
    int rc;
    if (k.num_programs > 1) {
        char path[128];
        snprintf(path, sizeof path, "%s/k.json", c->root);
        assert_int_equal(fio_write_atomic(path, text, strlen(text), &err), 0);
        rc = enc_compile_mc(path, &o, NULL, &err);
    } else {
        enc_stats_t st;
        rc = enc_compile(&k, &o, &st, &err);
    }
    tir_kernel_free(&k);
    if (rc)
        fail_msg("compile: %s", err.msg);
    char path[160];
    snprintf(path, sizeof path, "%s/tensor-map.json", c->dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(path, &buf, &len, &err), 0);
    c->names[0] = 0;
    const char *key = "\"name\":\t\"";
    for (const char *p = (const char *)buf; (p = strstr(p, key)); ) {
        p += strlen(key);
        size_t n = strcspn(p, "\"");
        strncat(c->names, p, n);
        strcat(c->names, " ");
    }
    free(buf);
}

/* Input i's element e: exact in bfloat16, distinct per input. */
static float in_value(int i, size_t e)
{
    return (float)((int)((e * 2654435761u + (unsigned)i * 977u) % 61u) - 30) * 0.125f;
}

/* Simulate c->dir on the inputs named in[] (float32 of shape shape[i],
 * in_value) and read output `out` (float32, n elements) into got. */
static void run(const case_t *c, const char *const *in, const int64_t (*shape)[3], int nin,
                const char *out, float *got, size_t n)
{
    tpb_err_t err = {{0}};
    sim_options_t so;
    sim_options_default(&so);
    sim_t *s = NULL;
    if (sim_load(c->dir, &so, &s, &err))
        fail_msg("load: %s", err.msg);
    for (int i = 0; i < nin; i++) {
        npy_array_t a;
        int nd = shape[i][2] ? 3 : 2;
        assert_int_equal(npy_alloc(&a, ISA_DT_FP32, nd, shape[i], &err), 0);
        for (size_t e = 0; e < a.count; e++)
            ((float *)a.data)[e] = in_value(i, e);
        if (sim_set_input(s, in[i], &a, &err))
            fail_msg("input %s: %s", in[i], err.msg);
        npy_free(&a);
    }
    if (sim_run(s, &err))
        fail_msg("run: %s", err.msg);
    npy_array_t o;
    if (sim_get_tensor(s, out, &o, &err))
        fail_msg("output %s: %s", out, err.msg);
    assert_int_equal(o.count, n);
    memcpy(got, o.data, n * sizeof *got);
    npy_free(&o);
    sim_free(s);
}

/* ---- the shared identity ---- */

/* x [128, 96] bf16 transposed on the PE into fp32 PSUM (a dtype change:
 * the shared identity), plus every input of `adds` ([96, 128] float32):
 * out = x.T + adds[0] + adds[1] + ...; consts: the kernel's constants,
 * extra: ops before the store; grid: two programs (x and out with a
 * leading program dim). */
static void transpose_kernel(char *buf, size_t len, const char *const *adds, int nadd,
                             const char *consts, const char *extra, bool grid)
{
    char decl[512] = "", body[2048] = "";
    for (int i = 0; i < nadd; i++) {
        char d[160], b[400];
        snprintf(d, sizeof d, ", {\"name\": \"%s\", \"shape\": [96, 128], \"dtype\": \"float32\"}",
                 adds[i]);
        strcat(decl, d);
        snprintf(b, sizeof b,
                 ", {\"op\": \"tile\", \"name\": \"u\", \"shape\": [96, 128], \"dtype\": \"float32\"},"
                 " {\"op\": \"load\", \"dst\": \"u\", \"src\": \"%s\"},"
                 " {\"op\": \"tensor_tensor\", \"dst\": \"o\", \"in0\": \"o\", \"in1\": \"u\","
                 " \"operator\": \"add\"}",
                 adds[i]);
        strcat(body, b);
    }
    snprintf(buf, len,
             "{\"kernel\": \"own_identity\", \"target\": \"trn2\"%s,"
             " \"inputs\": [{\"name\": \"x\", \"shape\": [%s128, 96], \"dtype\": \"bfloat16\"}%s],"
             " \"outputs\": [{\"name\": \"out\", \"shape\": [%s96, 128], \"dtype\": \"float32\"}],"
             " \"constants\": [%s],"
             " \"body\": ["
             "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 96], \"dtype\": \"bfloat16\"},"
             "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"%s\"},"
             "  {\"op\": \"tile\", \"name\": \"ps\", \"shape\": [96, 128], \"dtype\": \"float32\","
             "   \"buffer\": \"psum\"},"
             "  {\"op\": \"transpose\", \"dst\": \"ps\", \"src\": \"t\", \"engine\": \"pe\"},"
             "  {\"op\": \"tile\", \"name\": \"o\", \"shape\": [96, 128], \"dtype\": \"float32\"},"
             "  {\"op\": \"tensor_copy\", \"dst\": \"o\", \"src\": \"ps\"}%s%s,"
             "  {\"op\": \"store\", \"dst\": \"%s\", \"src\": \"o\"}]}",
             grid ? ", \"grid\": [2]" : "", grid ? "2, " : "", decl, grid ? "2, " : "",
             consts ? consts : "", grid ? "x[pid, :, :]" : "x", body, extra ? extra : "",
             grid ? "out[pid, :, :]" : "out");
}

/* Compile and run transpose_kernel(adds) (ncopies programs), check out
 * against x.T + the adds (const_eye: + the constant identity) and that the
 * compiler's constant is named `want`. */
static void check_identity(const char *const *adds, int nadd, const char *consts, bool const_eye,
                           bool grid, const char *want)
{
    char text[8192];
    transpose_kernel(text, sizeof text, adds, nadd, consts, NULL, grid);
    case_t c;
    case_open(&c);
    compile_text(&c, text, 0);
    char w[80];
    snprintf(w, sizeof w, " %s ", want);
    char names[sizeof c.names + 1] = " ";
    strcat(names, c.names);
    if (!strstr(names, w))
        fail_msg("tensor-map names '%s': no '%s'", c.names, want);
    int np = grid ? 2 : 1;
    const char *in[MAX_IN] = {"x"};
    int64_t shape[MAX_IN][3] = {{0}};
    if (grid)
        shape[0][0] = 2, shape[0][1] = 128, shape[0][2] = 96;
    else
        shape[0][0] = 128, shape[0][1] = 96;
    for (int i = 0; i < nadd; i++) {
        in[i + 1] = adds[i];
        shape[i + 1][0] = 96, shape[i + 1][1] = 128;
    }
    size_t n = (size_t)np * 96 * 128;
    float *got = malloc(n * sizeof *got);
    assert_non_null(got);
    run(&c, in, (const int64_t (*)[3])shape, nadd + 1, "out", got, n);
    for (int p = 0; p < np; p++)
        for (int r = 0; r < 96; r++)
            for (int q = 0; q < 128; q++) {
                float v = in_value(0, (size_t)p * 128 * 96 + (size_t)q * 96 + (size_t)r);
                if (const_eye)
                    v += r == q ? 1.0f : 0.0f;
                for (int i = 0; i < nadd; i++)
                    v += in_value(i + 1, (size_t)r * 128 + (size_t)q);
                size_t e = (size_t)p * 96 * 128 + (size_t)r * 128 + (size_t)q;
                if (got[e] != v)
                    fail_msg("out[%d][%d][%d] = %g, want %g", p, r, q, got[e], v);
            }
    free(got);
    case_close(&c);
}

/* The repro: an input named identity (tensor-map.json had two). */
static void test_identity_input(void **state)
{
    (void)state;
    const char *adds[] = {"identity"};
    check_identity(adds, 1, NULL, false, false, "identity_1");
}

/* The fallback names taken too: identity_2; identity_sb is the kernel's. */
static void test_identity_fallback_names_taken(void **state)
{
    (void)state;
    const char *adds[] = {"identity", "identity_1", "identity_sb"};
    check_identity(adds, 3, NULL, false, false, "identity_2");
    const char *only[] = {"identity_1"};   /* no clash: the usual name */
    check_identity(only, 1, NULL, false, false, "identity");
}

/* The kernel format's own identity constant (constants: identity: n)
 * named identity, added to the transpose. */
static void test_identity_constant_named_identity(void **state)
{
    (void)state;
    const char *consts = "{\"name\": \"identity\", \"identity\": 96, \"dtype\": \"float32\"}";
    /* out = x.T + identity (the kernel's 96 x 96 constant, in columns 0..95) */
    const char *extra =
        ", {\"op\": \"tile\", \"name\": \"e\", \"shape\": [96, 96], \"dtype\": \"float32\"},"
        " {\"op\": \"load\", \"dst\": \"e\", \"src\": \"identity\"},"
        " {\"op\": \"tensor_tensor\", \"dst\": \"o[:, 0:96]\", \"in0\": \"o[:, 0:96]\","
        " \"in1\": \"e\", \"operator\": \"add\"}";
    char text[8192];
    transpose_kernel(text, sizeof text, NULL, 0, consts, extra, false);
    case_t c;
    case_open(&c);
    compile_text(&c, text, 0);
    assert_non_null(strstr(c.names, "identity identity_1 "));
    const char *in[] = {"x"};
    const int64_t shape[1][3] = {{128, 96, 0}};
    float *got = malloc(96 * 128 * sizeof *got);
    assert_non_null(got);
    run(&c, in, shape, 1, "out", got, 96 * 128);
    for (int r = 0; r < 96; r++)
        for (int q = 0; q < 128; q++) {
            float v = in_value(0, (size_t)q * 96 + (size_t)r) + (r == q ? 1.0f : 0.0f);
            if (got[r * 128 + q] != v)
                fail_msg("out[%d][%d] = %g, want %g", r, q, got[r * 128 + q], v);
        }
    free(got);
    case_close(&c);
}

/* The multi-core split adds its own copy of the identity. */
static void test_identity_input_two_cores(void **state)
{
    (void)state;
    const char *adds[] = {"identity"};
    check_identity(adds, 1, NULL, false, true, "identity_1");
}

/* ---- spill slots ---- */

/* Three [128, 256] fp32 tiles fit (SBUF limited to 3 KiB a partition):
 * `a` is spilled to the compiler's scratch spill_slot0 (tests/test_spill.c),
 * here the name of the kernel's second input. */
static void test_spill_slot_input(void **state)
{
    (void)state;
    static const char *K =
        "{\"kernel\": \"own_spill\", \"target\": \"trn2\","
        " \"inputs\": [{\"name\": \"x\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
        "            {\"name\": \"spill_slot0\", \"shape\": [128, 256], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [128, 256], \"dtype\": \"float32\"}],"
        " \"body\": ["
        "  {\"op\": \"tile\", \"name\": \"a\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"a\", \"src\": \"x\"},"
        "  {\"op\": \"tile\", \"name\": \"g\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"g\", \"src\": \"spill_slot0\"},"
        "  {\"op\": \"tile\", \"name\": \"b\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
        "  {\"op\": \"tensor_tensor\", \"dst\": \"b\", \"in0\": \"g\", \"in1\": \"g\", \"operator\": \"add\"},"
        "  {\"op\": \"tile\", \"name\": \"c\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
        "  {\"op\": \"tensor_tensor\", \"dst\": \"c\", \"in0\": \"b\", \"in1\": \"b\", \"operator\": \"multiply\"},"
        "  {\"op\": \"tensor_tensor\", \"dst\": \"g\", \"in0\": \"g\", \"in1\": \"c\", \"operator\": \"add\"},"
        "  {\"op\": \"tensor_tensor\", \"dst\": \"c\", \"in0\": \"g\", \"in1\": \"a\", \"operator\": \"add\"},"
        "  {\"op\": \"store\", \"dst\": \"out\", \"src\": \"c\"}]}";
    case_t c;
    case_open(&c);
    compile_text(&c, K, 3 * 1024);
    assert_string_equal(c.names, "x spill_slot0 out spill_slot0_1 ");
    const char *in[] = {"x", "spill_slot0"};
    const int64_t shape[2][3] = {{128, 256, 0}, {128, 256, 0}};
    float *got = malloc(128 * 256 * sizeof *got);
    assert_non_null(got);
    run(&c, in, shape, 2, "out", got, 128 * 256);
    for (size_t e = 0; e < 128 * 256; e++) {
        float x = in_value(0, e), y = in_value(1, e), b = y + y;
        float v = (y + b * b) + x;
        if (got[e] != v)
            fail_msg("out[%zu] = %g, want %g", e, got[e], v);
    }
    free(got);
    case_close(&c);
}

/* ---- the front-end's own tiles and device_print's buffers ---- */

/* dma_transpose into a tile of another dtype goes through a compiler tile
 * "dma_transpose_cast": the kernel's tile of that name stays the one the
 * name finds (it was the compiler's, silently), and an input of that name
 * is no error ("tile ... has the name of an HBM tensor"). */
static void test_front_end_tile_names(void **state)
{
    (void)state;
    static const char *K =
        "{\"kernel\": \"own_tiles\", \"target\": \"trn2\","
        " \"inputs\": [{\"name\": \"x\", \"shape\": [64, 32], \"dtype\": \"float32\"},"
        "            {\"name\": \"%s\", \"shape\": [32, 64], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [32, 64], \"dtype\": \"float32\"}],"
        " \"body\": ["
        "  {\"op\": \"tile\", \"name\": \"%s\", \"shape\": [32, 64], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"%s\", \"src\": \"%s\"},"
        "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [32, 64], \"dtype\": \"bfloat16\"},"
        "  {\"op\": \"dma_transpose\", \"dst\": \"t\", \"src\": \"x\"},"
        "  {\"op\": \"tile\", \"name\": \"o\", \"shape\": [32, 64], \"dtype\": \"float32\"},"
        "  {\"op\": \"tensor_tensor\", \"dst\": \"o\", \"in0\": \"t\", \"in1\": \"%s\","
        "   \"operator\": \"add\"},"
        "  {\"op\": \"store\", \"dst\": \"out\", \"src\": \"o\"}]}";
    /* the kernel's tile named so, then its input */
    static const char *const input[2] = {"y", "dma_transpose_cast"};
    static const char *const tile[2] = {"dma_transpose_cast", "u"};
    for (int v = 0; v < 2; v++) {
        char text[4096];
        snprintf(text, sizeof text, K, input[v], tile[v], tile[v], input[v], tile[v]);
        case_t c;
        case_open(&c);
        compile_text(&c, text, 0);
        const char *in[] = {"x", input[v]};
        const int64_t shape[2][3] = {{64, 32, 0}, {32, 64, 0}};
        float got[32 * 64];
        run(&c, in, shape, 2, "out", got, 32 * 64);
        for (int r = 0; r < 32; r++)
            for (int q = 0; q < 64; q++) {
                float want = in_value(0, (size_t)q * 32 + (size_t)r) +
                             in_value(1, (size_t)r * 64 + (size_t)q);
                if (got[r * 64 + q] != want)
                    fail_msg("case %d: out[%d][%d] = %g, want %g", v, r, q, got[r * 64 + q],
                             want);
            }
        case_close(&c);
    }
}

/* device_print's buffer print_<prefix> (_1, _2, ... when repeated) takes a
 * name no declaration has: in a loop (each iteration's buffer went out of
 * scope with it: the next one was "declared twice"), past an input of the
 * name print_x_1, and a later tile print_x is the kernel's. */
static void test_device_print_names(void **state)
{
    (void)state;
    static const char *K =
        "{\"kernel\": \"own_print\", \"target\": \"trn2\","
        " \"inputs\": [{\"name\": \"x\", \"shape\": [4, 8], \"dtype\": \"float32\"},"
        "            {\"name\": \"print_x_1\", \"shape\": [4, 8], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [4, 8], \"dtype\": \"float32\"}],"
        " \"body\": ["
        "  {\"op\": \"for\", \"var\": \"i\", \"range\": [2], \"body\": ["
        "   {\"op\": \"tile\", \"name\": \"t\", \"shape\": [4, 8], \"dtype\": \"float32\"},"
        "   {\"op\": \"load\", \"dst\": \"t\", \"src\": \"x\"},"
        "   {\"op\": \"device_print\", \"prefix\": \"x\", \"src\": \"t\"}]},"
        "  {\"op\": \"tile\", \"name\": \"print_x\", \"shape\": [4, 8], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"print_x\", \"src\": \"print_x_1\"},"
        "  {\"op\": \"store\", \"dst\": \"out\", \"src\": \"print_x\"}]}";
    case_t c;
    case_open(&c);
    compile_text(&c, K, 0);
    assert_string_equal(c.names, "x print_x_1 out print_x print_x_2 ");
    const char *in[] = {"x", "print_x_1"};
    const int64_t shape[2][3] = {{4, 8, 0}, {4, 8, 0}};
    const char *outs[3] = {"out", "print_x", "print_x_2"};
    for (int o = 0; o < 3; o++) {
        float got[32];
        run(&c, in, shape, 2, outs[o], got, 32);
        for (size_t e = 0; e < 32; e++)
            if (got[e] != in_value(o == 0, e))
                fail_msg("%s[%zu] = %g, want %g", outs[o], e, got[e], in_value(o == 0, e));
    }
    case_close(&c);
}

/* ---- the split's tile copies ---- */

/* Tiles named alike in their first 50 characters: the copies for a
 * core's second program ("<name>@p1") were cut to the same name (a link
 * error), and programs that diverge on pid shared one copy (a wrong
 * result).  out[p] = 2 x[p], 3 x[p] for odd p when diverge. */
static void check_long_names(bool diverge)
{
    static const char *K =
        "{\"kernel\": \"own_copies\", \"target\": \"trn2\", \"grid\": [4],"
        " \"inputs\": [{\"name\": \"x\", \"shape\": [4, 4, 8], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [4, 4, 8], \"dtype\": \"float32\"}],"
        " \"body\": ["
        "  {\"op\": \"tile\", \"name\": \"%sx\", \"shape\": [4, 8], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"%sx\", \"src\": \"x[pid, :, :]\"},"
        "  {\"op\": \"tile\", \"name\": \"%sy\", \"shape\": [4, 8], \"dtype\": \"float32\"},"
        "  {\"op\": \"tensor_tensor\", \"dst\": \"%sy\", \"in0\": \"%sx\", \"in1\": \"%sx\","
        "   \"operator\": \"add\"},"
        "  {\"op\": \"if\", \"cond\": \"%s\", \"body\": ["
        "   {\"op\": \"tensor_tensor\", \"dst\": \"%sy\", \"in0\": \"%sy\", \"in1\": \"%sx\","
        "    \"operator\": \"add\"}]},"
        "  {\"op\": \"store\", \"dst\": \"out[pid, :, :]\", \"src\": \"%sy\"}]}";
    const char *n = "a_tile_name_of_fifty_characters_in_a_long_kernel__";
    assert_int_equal(strlen(n), 50);
    const char *cond = diverge ? "pid % 2 == 1" : "0";
    char text[4096];
    snprintf(text, sizeof text, K, n, n, n, n, n, n, cond, n, n, n, n);
    case_t c;
    case_open(&c);
    compile_text(&c, text, 0);
    const char *in[] = {"x"};
    const int64_t shape[1][3] = {{4, 4, 8}};
    float got[4 * 32];
    run(&c, in, shape, 1, "out", got, 4 * 32);
    for (int p = 0; p < 4; p++)
        for (size_t e = 0; e < 32; e++) {
            float x = in_value(0, (size_t)p * 32 + e);
            float want = diverge && p % 2 ? x + x + x : x + x;
            if (got[p * 32 + e] != want)
                fail_msg("program %d: out[%zu] = %g, want %g", p, e, got[p * 32 + e], want);
        }
    case_close(&c);
}

static void test_long_tile_names_uniform(void **state)
{
    (void)state;
    check_long_names(false);
}

static void test_long_tile_names_diverging(void **state)
{
    (void)state;
    check_long_names(true);
}

/* The copy names: as ever up to `keep` characters, else cut and tagged
 * with the tensor index (never two alike, never a kernel's name). */
static void test_copy_names(void **state)
{
    (void)state;
    char out[TIR_NAME_LEN];
    lnc_copy_name(out, "t#3", 50, 'p', 1, 7);
    assert_string_equal(out, "t#3@p1");
    const char *n = "a_tile_name_of_fifty_characters_in_a_long_kernel_x#12";
    lnc_copy_name(out, n, 50, 'p', 3, 1234);
    assert_string_equal(out, "a_tile_name_of_fifty_characters_in_a_l~1234@p3");
    lnc_copy_name(out, n, 44, 'q', 2147483647, 2147483647);
    assert_true(strlen(out) < TIR_NAME_LEN - 1);
    assert_non_null(strstr(out, "~2147483647@q2147483647"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identity_input),
        cmocka_unit_test(test_identity_fallback_names_taken),
        cmocka_unit_test(test_identity_constant_named_identity),
        cmocka_unit_test(test_identity_input_two_cores),
        cmocka_unit_test(test_spill_slot_input),
        cmocka_unit_test(test_front_end_tile_names),
        cmocka_unit_test(test_device_print_names),
        cmocka_unit_test(test_long_tile_names_uniform),
        cmocka_unit_test(test_long_tile_names_diverging),
        cmocka_unit_test(test_copy_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
