/* SBUF spilling (encoder/spill.c, docs/compiler.md "SBUF spilling"): the
 * victim rule, the inserted store / reload, the spill queues, the stats of
 * the compile and of the simulator, values bit-identical to the unspilled
 * compile, and the refusal when spilling cannot help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "back_util.h"
#include "fileio.h"
#include "frontend.h"
#include "sim.h"
#include "spill.h"

/* Tiles of 1 KiB per partition ([128, 256] fp32).  With room for three,
 * op 3 (c = b * b) finds a, g and b live: a (next used at op 6) is the
 * Belady victim, not g (next used at op 4). */
static const char *K =
    "{\"kernel\": \"spill3\", \"target\": \"trn2\","
    " \"inputs\": [{\"name\": \"x\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "            {\"name\": \"y\", \"shape\": [128, 256], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out1\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "             {\"name\": \"out2\", \"shape\": [128, 256], \"dtype\": \"float32\"}],"
    " \"body\": ["
    "  {\"op\": \"tile\", \"name\": \"a\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"dst\": \"a\", \"src\": \"x\"},"
    "  {\"op\": \"tile\", \"name\": \"g\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"dst\": \"g\", \"src\": \"y\"},"
    "  {\"op\": \"tile\", \"name\": \"b\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "  {\"op\": \"tensor_tensor\", \"dst\": \"b\", \"in0\": \"g\", \"in1\": \"g\", \"operator\": \"add\"},"
    "  {\"op\": \"tile\", \"name\": \"c\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "  {\"op\": \"tensor_tensor\", \"dst\": \"c\", \"in0\": \"b\", \"in1\": \"b\", \"operator\": \"multiply\"},"
    "  {\"op\": \"tensor_tensor\", \"dst\": \"g\", \"in0\": \"g\", \"in1\": \"c\", \"operator\": \"add\"},"
    "  {\"op\": \"store\", \"dst\": \"out1\", \"src\": \"g\"},"
    "  {\"op\": \"tensor_tensor\", \"dst\": \"c\", \"in0\": \"c\", \"in1\": \"a\", \"operator\": \"add\"},"
    "  {\"op\": \"store\", \"dst\": \"out2\", \"src\": \"c\"}]}";

#define TILE_BYTES (128u * 256u * 4u)

static void parse(tir_kernel_t *k, const char *text)
{
    tpb_err_t err;
    if (enc_parse_kernel_json(text, strlen(text), "spill.json", NULL, NULL, 0, k, &err))
        fail_msg("parse: %s", err.msg);
}

static int find_tensor(const tir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->ntensors; i++)
        if (!strcmp(k->tensors[i].name, name))
            return i;
    return -1;
}

/* Parse text into *k0, copy it into *k and spill k for a target with
 * `sbuf` bytes per partition and `buffers` rotating buffers (0: the
 * target's); the spill's statistics in *st. */
static void spill_text(const char *text, uint64_t sbuf, int buffers, tir_kernel_t *k0,
                       tir_kernel_t *k, enc_spill_stats_t *st)
{
    parse(k0, text);
    tpb_err_t err;
    assert_int_equal(enc_spill_copy(k, k0, &err), 0);
    tpb_target_t t = *tpb_target_get("trn2");
    t.sbuf_partition_bytes = sbuf;
    if (enc_spill(k, &t, buffers, false, st, &err))
        fail_msg("spill: %s", err.msg);
}

/* The victim rule on the tile IR: a is stored right after its load and
 * reloaded into a.s0 right before its next use; g, used sooner, stays. */
static void test_spill_victim_rule(void **state)
{
    (void)state;
    tir_kernel_t k0, k;
    enc_spill_stats_t st;
    spill_text(K, 3 * 1024, 0, &k0, &k, &st);
    assert_int_equal(st.victims, 1);
    assert_int_equal(st.saves, 1);
    assert_int_equal(st.reloads, 1);
    assert_int_equal(st.slots, 1);
    assert_int_equal(st.save_bytes, TILE_BYTES);
    assert_int_equal(st.reload_bytes, TILE_BYTES);
    assert_int_equal(k.nops, k0.nops + 2);
    int a = find_tensor(&k, "a"), a2 = find_tensor(&k, "a.s0");
    int slot = find_tensor(&k, "spill_slot0");
    assert_true(a >= 0 && a2 >= 0 && slot >= 0);
    assert_int_equal(k.tensors[slot].kind, TIR_T_SCRATCH);
    assert_int_equal(k.tensors[a2].kind, TIR_T_SBUF);
    /* load a; spill_save_0 (a -> slot); load g; ... */
    assert_int_equal(k.ops[0].kind, TIR_LOAD);
    assert_int_equal(k.ops[1].kind, TIR_STORE);
    assert_true(k.ops[1].flags & TIR_F_SPILL_SAVE);
    assert_int_equal(k.ops[1].src[0]->tensor, a);
    assert_int_equal(k.ops[1].dst->tensor, slot);
    assert_string_equal(k.ops[1].name, "spill_save_0");
    /* ...; store out1; spill_reload_0 (slot -> a.s0); c = c + a.s0; store */
    int r = k.nops - 3;
    assert_int_equal(k.ops[r].kind, TIR_LOAD);
    assert_true(k.ops[r].flags & TIR_F_SPILL_RELOAD);
    assert_int_equal(k.ops[r].src[0]->tensor, slot);
    assert_int_equal(k.ops[r].dst->tensor, a2);
    assert_int_equal(k.ops[r + 1].src[1]->tensor, a2);
    for (int i = 2; i < k.nops; i++)   /* no later op names a */
        for (int s = 0; s < 4; s++)
            assert_int_not_equal(k.ops[i].src[s]->tensor, a);
    enc_spill_free(&k);
    tir_kernel_free(&k0);
}

/* Compile K (sbuf_limit 0: the target's SBUF) into dir; the stats. */
static void compile_k(const char *dir, uint64_t limit, enc_stats_t *st)
{
    tir_kernel_t k;
    parse(&k, K);
    enc_options_t o = {.out_dir = dir, .target = "trn2", .mode = ENC_RUN_ISA_CHECKS,
                       .sbuf_limit = limit};
    tpb_err_t err;
    if (enc_compile(&k, &o, st, &err))
        fail_msg("compile: %s", err.msg);
    tir_kernel_free(&k);
}

/* Run dir on fixed inputs: out1 and out2 (malloc'ed) and stats.json text. */
static void run_k(const char *dir, float **o1, float **o2, char **stats)
{
    sim_options_t so;
    sim_options_default(&so);
    sim_t *s = NULL;
    tpb_err_t err;
    if (sim_load(dir, &so, &s, &err))
        fail_msg("load: %s", err.msg);
    int64_t shape[2] = {128, 256};
    const char *names[2] = {"x", "y"};
    for (int n = 0; n < 2; n++) {
        npy_array_t a;
        assert_int_equal(npy_alloc(&a, ISA_DT_FP32, 2, shape, &err), 0);
        float *f = a.data;
        for (size_t i = 0; i < a.count; i++)
            f[i] = (float)((i * 2654435761u + (unsigned)n * 97u) % 1000) * 0.013f - 6.0f;
        assert_int_equal(sim_set_input(s, names[n], &a, &err), 0);
        npy_free(&a);
    }
    if (sim_run(s, &err))
        fail_msg("run: %s", err.msg);
    float **outs[2] = {o1, o2};
    const char *on[2] = {"out1", "out2"};
    for (int n = 0; n < 2; n++) {
        npy_array_t out;
        assert_int_equal(sim_get_tensor(s, on[n], &out, &err), 0);
        assert_int_equal(out.count, 128 * 256);
        *outs[n] = malloc(TILE_BYTES);
        assert_non_null(*outs[n]);
        memcpy(*outs[n], out.data, TILE_BYTES);
        npy_free(&out);
    }
    *stats = sim_stats_json(s);
    assert_non_null(*stats);
    sim_free(s);
}

static uint64_t json_u64(const char *js, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(js, k);
    return p ? strtoull(p + strlen(k), NULL, 10) : UINT64_MAX;
}

/* End to end: the spilled compile (SBUF limited to three tiles) gives the
 * unspilled compile's outputs bit for bit; its spill transfers run on
 * qSyncSpillReload0/1 and both stats count their bytes. */
static void test_spill_values_queues_stats(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/tpb-spill-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    char plain[256], spilled[256];
    snprintf(plain, sizeof plain, "%s/plain", d);
    snprintf(spilled, sizeof spilled, "%s/spilled", d);
    enc_stats_t s0, s1;
    compile_k(plain, 0, &s0);
    compile_k(spilled, 3 * 1024, &s1);
    assert_int_equal(s0.spills, 0);
    assert_int_equal(s1.spills, 1);
    assert_int_equal(s1.spill_saves, 1);
    assert_int_equal(s1.spill_reloads, 1);
    assert_int_equal(s1.spill_save_bytes, TILE_BYTES);
    assert_int_equal(s1.spill_reload_bytes, TILE_BYTES);
    assert_true(s1.sbuf_peak <= 3 * 1024);
    assert_true(s0.sbuf_peak > 3 * 1024);
    /* the queues, named as the production compiler's, in def.json */
    char p[512];
    snprintf(p, sizeof p, "%s/nc0/sg0/def.json", spilled);
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    assert_non_null(strstr((const char *)buf, "\"qSyncSpillReload0\""));
    assert_non_null(strstr((const char *)buf, "\"qSyncSpillReload1\""));
    free(buf);
    snprintf(p, sizeof p, "%s/nc0/sg0/def.json", plain);
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    assert_null(strstr((const char *)buf, "SpillReload"));
    free(buf);
    float *a1, *a2, *b1, *b2;
    char *js0, *js1;
    run_k(plain, &a1, &a2, &js0);
    run_k(spilled, &b1, &b2, &js1);
    assert_memory_equal(a1, b1, TILE_BYTES);
    assert_memory_equal(a2, b2, TILE_BYTES);
    /* and they are the kernel's values: out2 = (2y)^2 + x */
    float y0 = (float)((0u * 2654435761u + 97u) % 1000) * 0.013f - 6.0f;
    float x0 = -6.0f;
    assert_true(fabsf(b2[0] - ((y0 + y0) * (y0 + y0) + x0)) <= 1e-4f * (1.0f + fabsf(b2[0])));
    assert_int_equal(json_u64(js1, "spill_save_bytes"), TILE_BYTES);
    assert_int_equal(json_u64(js1, "spill_reload_bytes"), TILE_BYTES);
    assert_null(strstr(js0, "spill_save_bytes"));   /* only runs with spill traffic */
    free(js0), free(js1), free(a1), free(a2), free(b1), free(b2);
    art_rmtree(plain);
    art_rmtree(spilled);
    rmdir(d);
}

/* A tile read by every iteration of a loop, with no room to keep it: it
 * is stored once and reloaded per iteration, each reload a clean victim
 * of the next iteration (no second store).  Values: the unspilled ones. */
static const char *KL =
    "{\"kernel\": \"spill_loop\", \"target\": \"trn2\","
    " \"inputs\": [{\"name\": \"x\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "            {\"name\": \"y\", \"shape\": [512, 256], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [512, 256], \"dtype\": \"float32\"}],"
    " \"body\": ["
    "  {\"op\": \"tile\", \"name\": \"a\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"dst\": \"a\", \"src\": \"x\"},"
    "  {\"op\": \"for\", \"var\": \"s\", \"range\": [4], \"body\": ["
    "   {\"op\": \"tile\", \"name\": \"t1\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "   {\"op\": \"load\", \"dst\": \"t1\", \"src\": \"y[s*128:(s+1)*128, :]\"},"
    "   {\"op\": \"tile\", \"name\": \"t2\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "   {\"op\": \"tensor_tensor\", \"dst\": \"t2\", \"in0\": \"t1\", \"in1\": \"t1\", \"operator\": \"multiply\"},"
    "   {\"op\": \"tensor_tensor\", \"dst\": \"t2\", \"in0\": \"t2\", \"in1\": \"a\", \"operator\": \"add\"},"
    "   {\"op\": \"store\", \"dst\": \"out[s*128:(s+1)*128, :]\", \"src\": \"t2\"}]}]}";

static void compile_text(const char *text, const char *dir, uint64_t limit, enc_stats_t *st)
{
    tir_kernel_t k;
    parse(&k, text);
    enc_options_t o = {.out_dir = dir, .target = "trn2", .mode = ENC_RUN_ISA_CHECKS,
                       .sbuf_limit = limit, .buffers = 1};
    tpb_err_t err;
    if (enc_compile(&k, &o, st, &err))
        fail_msg("compile: %s", err.msg);
    tir_kernel_free(&k);
}

static npy_array_t run_loop(const char *dir)
{
    sim_options_t so;
    sim_options_default(&so);
    sim_t *s = NULL;
    tpb_err_t err;
    if (sim_load(dir, &so, &s, &err))
        fail_msg("load: %s", err.msg);
    int64_t sx[2] = {128, 256}, sy[2] = {512, 256};
    npy_array_t x, y, out;
    assert_int_equal(npy_alloc(&x, ISA_DT_FP32, 2, sx, &err), 0);
    assert_int_equal(npy_alloc(&y, ISA_DT_FP32, 2, sy, &err), 0);
    for (size_t i = 0; i < x.count; i++)
        ((float *)x.data)[i] = (float)(i % 37) * 0.25f - 4.0f;
    for (size_t i = 0; i < y.count; i++)
        ((float *)y.data)[i] = (float)(i % 101) * 0.03f - 1.5f;
    assert_int_equal(sim_set_input(s, "x", &x, &err), 0);
    assert_int_equal(sim_set_input(s, "y", &y, &err), 0);
    if (sim_run(s, &err))
        fail_msg("run: %s", err.msg);
    assert_int_equal(sim_get_tensor(s, "out", &out, &err), 0);
    npy_free(&x);
    npy_free(&y);
    sim_free(s);
    return out;
}

static void test_spill_clean_reloads(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/tpb-spill-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    char plain[256], spilled[256];
    snprintf(plain, sizeof plain, "%s/plain", d);
    snprintf(spilled, sizeof spilled, "%s/spilled", d);
    enc_stats_t s0, s1;
    compile_text(KL, plain, 0, &s0);
    compile_text(KL, spilled, 2 * 1024, &s1);
    assert_int_equal(s0.spills, 0);
    assert_int_equal(s1.spills, 4);
    assert_int_equal(s1.spill_saves, 1);
    assert_int_equal(s1.spill_reloads, 4);
    assert_int_equal(s1.spill_save_bytes, TILE_BYTES);
    assert_int_equal(s1.spill_reload_bytes, 4 * TILE_BYTES);
    npy_array_t a = run_loop(plain), b = run_loop(spilled);
    assert_int_equal(a.count, 512 * 256);
    assert_int_equal(b.count, a.count);
    assert_memory_equal(a.data, b.data, a.count * sizeof(float));
    npy_free(&a);
    npy_free(&b);
    art_rmtree(plain);
    art_rmtree(spilled);
    rmdir(d);
}

/* Room for one tile: b = g + g needs g and b live together and nothing
 * else can be spilled there -- the allocator's error for the kernel as
 * given, verbatim, then why spilling could not help. */
static void test_spill_cannot_help(void **state)
{
    (void)state;
    tir_kernel_t k;
    parse(&k, K);
    enc_options_t o = {.target = "trn2", .mode = ENC_GENERATE_ISACODE, .sbuf_limit = 1024};
    tpb_err_t err;
    assert_int_not_equal(enc_compile(&k, &o, NULL, &err), 0);
    /* a spilled first (op 1 found no room for g), then b = g + g at body[5]
     * needs both of its tiles */
    assert_string_equal(err.msg,
                        "SBUF allocation failed: tile 'g' (body[2]) needs 1024 bytes per partition "
                        "while live over ops 1..5, but only 0 of 1024 bytes are free (live: "
                        "a(1024)); spilling could not help: after 1 spill, every SBUF tile live "
                        "at body[5] (tensor_tensor) is accessed by it");
    tir_kernel_free(&k);
}

/* The rewrite renumbers what names op indices: every explicit dependency
 * and every loop boundary names the same op after the spill ops went in
 * (the boundary of an iteration whose first op is reloaded for stays in
 * front of that op, after its reload). */
static const char *KD =
    "{\"kernel\": \"spill_deps\", \"target\": \"trn2\","
    " \"inputs\": [{\"name\": \"x\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "            {\"name\": \"y\", \"shape\": [512, 256], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [512, 256], \"dtype\": \"float32\"}],"
    " \"body\": ["
    "  {\"op\": \"tile\", \"name\": \"a\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"name\": \"la\", \"dst\": \"a\", \"src\": \"x\"},"
    "  {\"op\": \"for\", \"var\": \"s\", \"range\": [4], \"body\": ["
    "   {\"op\": \"tile\", \"name\": \"t1\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "   {\"op\": \"load\", \"name\": \"l1\", \"dst\": \"t1\", \"src\": \"y[s*128:(s+1)*128, :]\","
    "    \"deps\": [\"la\"]},"
    "   {\"op\": \"tile\", \"name\": \"t2\", \"shape\": [128, 256], \"dtype\": \"float32\"},"
    "   {\"op\": \"tensor_tensor\", \"dst\": \"t2\", \"in0\": \"t1\", \"in1\": \"t1\", \"operator\": \"multiply\"},"
    "   {\"op\": \"tensor_tensor\", \"name\": \"acc\", \"dst\": \"t2\", \"in0\": \"t2\", \"in1\": \"a\","
    "    \"operator\": \"add\", \"deps\": [\"l1\"]},"
    "   {\"op\": \"store\", \"dst\": \"out[s*128:(s+1)*128, :]\", \"src\": \"t2\", \"deps\": [\"acc\", \"la\"]}]}]}";

static bool is_spill_op(const tir_op_t *op)
{
    return (op->flags & (TIR_F_SPILL_SAVE | TIR_F_SPILL_RELOAD)) != 0;
}

static void test_spill_renumbers_deps_and_loops(void **state)
{
    (void)state;
    tir_kernel_t k0, k;
    enc_spill_stats_t st;
    spill_text(KD, 2 * 1024, 1, &k0, &k, &st);
    assert_true(st.victims >= 2);
    assert_int_equal(k.nops, k0.nops + (int)st.saves + (int)st.reloads);
    /* orig[i]: the op of k0 that op i of k is (-1: a spill op); the
     * rewrite only inserts, so the others keep their order */
    int *orig = malloc(sizeof *orig * ((size_t)k.nops + 1));
    assert_non_null(orig);
    int j = 0, explicit = 0;
    for (int i = 0; i < k.nops; i++) {
        orig[i] = is_spill_op(&k.ops[i]) ? -1 : j++;
        if (orig[i] >= 0)
            assert_string_equal(k.ops[i].name, k0.ops[orig[i]].name);
    }
    orig[k.nops] = k0.nops;   /* the end */
    assert_int_equal(j, k0.nops);
    for (int i = 0; i < k.nops; i++) {
        if (orig[i] < 0) {
            assert_int_equal(k.ops[i].rare->ndeps, 0);
            continue;
        }
        const tir_op_t *a = &k.ops[i], *b = &k0.ops[orig[i]];
        assert_int_equal(a->rare->ndeps, b->rare->ndeps);
        for (int d = 0; d < a->rare->ndeps; d++) {
            assert_true(a->rare->deps[d] >= 0 && a->rare->deps[d] < i);
            assert_int_equal(orig[a->rare->deps[d]], b->rare->deps[d]);
            explicit++;
        }
    }
    assert_true(explicit >= 4 * 4);   /* l1, acc, store (2) in each iteration */
    assert_int_equal(k.nmarks, k0.nmarks);
    bool moved = false;
    for (int m = 0; m < k.nmarks; m++) {
        assert_int_equal(orig[k.loop_marks[m]], k0.loop_marks[m]);
        moved |= k.loop_marks[m] != k0.loop_marks[m];
    }
    assert_true(moved);   /* spill ops went in before some boundary */
    free(orig);
    enc_spill_free(&k);
    tir_kernel_free(&k0);
}

/* K with a's load replaced by `loads` (JSON statements): the first spill
 * store's source tensor after spilling with room for three tiles. */
static const char *spilled_tile(const char *loads, char *name, size_t len)
{
    const char *from = "  {\"op\": \"load\", \"dst\": \"a\", \"src\": \"x\"},";
    const char *at = strstr(K, from);
    assert_non_null(at);
    size_t n = strlen(K) + strlen(loads) + 1;
    char *text = malloc(n);
    assert_non_null(text);
    snprintf(text, n, "%.*s%s%s", (int)(at - K), K, loads, at + strlen(from));
    tir_kernel_t k0, k;
    enc_spill_stats_t st;
    spill_text(text, 3 * 1024, 0, &k0, &k, &st);
    free(text);
    name[0] = 0;
    for (int i = 0; i < k.nops; i++)
        if (k.ops[i].flags & TIR_F_SPILL_SAVE) {
            snprintf(name, len, "%s", k.tensors[k.ops[i].src[0]->tensor].name);
            break;
        }
    enc_spill_free(&k);
    tir_kernel_free(&k0);
    return name;
}

/* "Wholly written" by the union of partial writes: a loaded in two halves
 * is still the Belady victim; a with only its first half written is not
 * (storing it would read bytes nothing wrote), so g goes instead. */
static void test_spill_partial_writes(void **state)
{
    (void)state;
    char name[64];
    assert_string_equal(spilled_tile(
        "  {\"op\": \"load\", \"dst\": \"a[0:64, :]\", \"src\": \"x[0:64, :]\"},"
        "  {\"op\": \"load\", \"dst\": \"a[64:128, 0:100]\", \"src\": \"x[64:128, 0:100]\"},"
        "  {\"op\": \"load\", \"dst\": \"a[64:128, 100:256]\", \"src\": \"x[64:128, 100:256]\"},",
        name, sizeof name), "a");
    assert_string_equal(spilled_tile(
        "  {\"op\": \"load\", \"dst\": \"a[0:64, :]\", \"src\": \"x[0:64, :]\"},"
        "  {\"op\": \"load\", \"dst\": \"a[64:128, 0:255]\", \"src\": \"x[64:128, 0:255]\"},",
        name, sizeof name), "g");
}

/* An op whose operands cannot be in SBUF together, found at a reload: the
 * first spills put t's and ct's reloads right before the activate2 that
 * reads both, and spilling either reload again would only swap the two
 * (it did so 20 000 times before the rule): refused with the reason at
 * once. */
static void test_spill_reorder_refused(void **state)
{
    (void)state;
    static const char *KA =
        "{\"kernel\": \"spill_pair\", \"target\": \"trn2\","
        " \"inputs\": [{\"name\": \"x\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
        "            {\"name\": \"c\", \"shape\": [128, 1], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [128, 64], \"dtype\": \"float32\"}],"
        " \"body\": ["
        "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
        "  {\"op\": \"tile\", \"name\": \"ct\", \"shape\": [128, 1], \"dtype\": \"float32\"},"
        "  {\"op\": \"tile\", \"name\": \"o\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"x\"},"
        "  {\"op\": \"load\", \"dst\": \"ct\", \"src\": \"c\"},"
        "  {\"op\": \"activate2\", \"dst\": \"o\", \"src\": \"t\", \"op0\": \"multiply\", \"imm0\": \"ct\","
        "   \"op1\": \"add\", \"imm1\": 0.5, \"func\": \"tanh\"},"
        "  {\"op\": \"store\", \"dst\": \"out\", \"src\": \"o\"}]}";
    tir_kernel_t k;
    parse(&k, KA);
    enc_options_t o = {.target = "trn2", .mode = ENC_GENERATE_ISACODE, .sbuf_limit = 256};
    tpb_err_t err;
    assert_int_not_equal(enc_compile(&k, &o, NULL, &err), 0);
    assert_string_equal(err.msg,
                        "SBUF allocation failed: tile 'ct' (body[1]) needs 4 bytes per partition "
                        "while live over ops 1..2, but only 0 of 256 bytes are free (live: "
                        "t(256)); spilling could not help: after 2 spills, the SBUF tiles live at "
                        "body[1].spill (load) that it does not access are reloaded right before "
                        "body[5] (activate2), which reads them (spilling 't.s0' again would only "
                        "reorder those reloads)");
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_victim_rule),
        cmocka_unit_test(test_spill_values_queues_stats),
        cmocka_unit_test(test_spill_clean_reloads),
        cmocka_unit_test(test_spill_cannot_help),
        cmocka_unit_test(test_spill_renumbers_deps_and_loops),
        cmocka_unit_test(test_spill_partial_writes),
        cmocka_unit_test(test_spill_reorder_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
