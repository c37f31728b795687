/* Multi-core split (encoder/lnc_split.c) on real kernel files, and the whole
 * driver end to end: blocked / interleaved program placement, per-program
 * tile copies, core-local barrier ids, remote-local targets, sendrecv as
 * a direct pull, divergence and pairing errors, idle programs and cores, the
 * linked stream layout, and a 2-core run that is faster than the 1-core run
 * of the same work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fileio.h"
#include "frontend.h"
#include "collective.h"
#include "lnc.h"
#include "lnc_bir.h"
#include "npy.h"
#include "sim.h"

typedef struct {
    tir_kernel_t p[8];
    int n;
} progs_t;

/* Parse every program of a kernel text; returns 0 or -1 with err. */
static int parse_all(const char *text, progs_t *ps, tpb_err_t *err)
{
    memset(ps, 0, sizeof *ps);
    if (enc_parse_kernel_json(text, strlen(text), "k.json", NULL, NULL, 0, &ps->p[0], err)) {
        tir_kernel_free(&ps->p[0]);
        return -1;
    }
    ps->n = 1;
    for (int i = 1; i < ps->p[0].num_programs && i < 8; i++) {
        int rc = enc_parse_kernel_json(text, strlen(text), "k.json", NULL, NULL, i, &ps->p[i], err);
        ps->n = i + 1;
        if (rc)
            return -1;
    }
    return 0;
}

static void free_all(progs_t *ps)
{
    for (int i = 0; i < ps->n; i++)
        tir_kernel_free(&ps->p[i]);
}

static const char *grid_kernel(const char *mapping, char *buf, size_t len)
{
    snprintf(buf, len,
             "{\"kernel\": \"g\", \"grid\": {\"n\": 4, \"nc\": 2, \"mapping\": \"%s\"},"
             " \"inputs\": [{\"name\": \"a\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
             " \"outputs\": [{\"name\": \"out\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
             " \"body\": ["
             "  {\"op\": \"tile\", \"name\": \"ta\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
             "  {\"op\": \"load\", \"dst\": \"ta\", \"src\": \"a[pid*128:(pid+1)*128, :]\"},"
             "  {\"op\": \"store\", \"dst\": \"out[pid*128:(pid+1)*128, :]\", \"src\": \"ta\"}]}",
             mapping);
    return buf;
}

static int find_tensor(const tir_kernel_t *k, const char *name)
{
    for (int i = 0; i < k->ntensors; i++)
        if (!strcmp(k->tensors[i].name, name))
            return i;
    return -1;
}

/* the programs a core runs, read back from its loads' source offsets */
static void check_mapping(const char *mapping, const int want[2][2])
{
    char text[2048];
    progs_t ps;
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(grid_kernel(mapping, text, sizeof text), &ps, &err), 0);
    lnc_split_t s;
    assert_int_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    assert_int_equal(s.ncores, 2);
    assert_int_equal(s.per_core, 2);
    for (int c = 0; c < 2; c++) {
        const tir_kernel_t *k = &s.core_k[c];
        assert_int_equal(s.core_m[c].core, c);   /* NeuronCoreId */
        assert_int_equal(k->nops, 4);            /* 2 programs x (load, store) */
        int copy = find_tensor(k, "ta@p1");
        assert_true(copy >= 0);                  /* second program slot's tile */
        int nload = 0;
        for (int o = 0; o < k->nops; o++) {
            assert_int_equal(k->ops[o].core, c);
            if (k->ops[o].kind != TIR_LOAD)
                continue;
            assert_int_equal(k->ops[o].src[0]->offset, (int64_t)want[c][nload] * 128 * 64);
            assert_int_equal(k->ops[o].dst->tensor, nload ? copy : find_tensor(k, "ta"));
            nload++;
        }
        assert_int_equal(nload, 2);
        assert_true(lnc_find_mloc(&s.core_m[c], c ? "nc1.ta" : "nc0.ta") >= 0);
    }
    assert_int_equal(s.nrlts, 0);
    lnc_split_free(&s);
    free_all(&ps);
}

static void test_split_blocked(void **state)
{
    (void)state;
    const int want[2][2] = {{0, 1}, {2, 3}};
    check_mapping("blocked", want);
}

static void test_split_interleaved(void **state)
{
    (void)state;
    const int want[2][2] = {{0, 2}, {1, 3}};
    check_mapping("interleaved", want);
}

static const char *exchange_kernel =
    "{\"kernel\": \"x\", \"grid\": [\"nc(2)\"],"
    " \"inputs\": [{\"name\": \"a\", \"shape\": [256, 64], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [128, 64], \"dtype\": \"float32\"}],"
    " \"scratch\": [{\"name\": \"part\", \"shape\": [2, 128, 64], \"dtype\": \"float32\"}],"
    " \"body\": ["
    "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[pid*128:(pid+1)*128, :]\"},"
    "  {\"op\": \"store\", \"dst\": \"part[pid, :, :]\", \"src\": \"t\"},"
    "  {\"op\": \"core_barrier\", \"cores\": [0, 1]},"
    "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"part[1 - pid, :, :]\"},"
    "  {\"op\": \"core_barrier\", \"cores\": [0, 1]},"
    "  {\"op\": \"store\", \"dst\": \"out[pid*64:(pid+1)*64, :]\", \"src\": \"t[0:64, :]\"}]}";

static void test_split_exchange(void **state)
{
    (void)state;
    progs_t ps;
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(exchange_kernel, &ps, &err), 0);
    lnc_split_t s;
    assert_int_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    assert_int_equal(s.nbarriers, 2);
    int part = find_tensor(&s.core_k[0], "part");
    /* both cores produce part and consume the other's: two targets */
    assert_int_equal(s.nrlts, 2);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(s.rlts[r].tensor, part);
        assert_int_not_equal(s.rlts[r].producer, s.rlts[r].consumer);
    }
    for (int c = 0; c < 2; c++) {
        int ids = 0;
        for (int o = 0; o < s.core_k[c].nops; o++)
            if (s.core_k[c].ops[o].kind == TIR_CORE_BARRIER)
                assert_int_equal(s.core_k[c].ops[o].rare->barrier_id, ids++);   /* core-local */
        assert_int_equal(ids, 2);
        const lnc_mloc_t *ml = &s.core_m[c].mlocs[lnc_find_mloc(&s.core_m[c], "part")];
        assert_int_equal(ml->remote_core, 1 - c);
        assert_string_equal(ml->remote_name, "part");
        assert_int_equal(ml->kind, LNC_ML_OUTPUT);
        assert_int_equal(ml->kkind, LNC_ML_SCRATCH);
    }
    lnc_split_free(&s);
    free_all(&ps);
}

static const char *sendrecv_kernel =
    "{\"kernel\": \"sr\", \"grid\": [\"nc(%d)\"],"
    " \"inputs\": [{\"name\": \"x\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
    " \"body\": ["
    "  {\"op\": \"tile\", \"name\": \"m\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
    "  {\"op\": \"tile\", \"name\": \"o\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"dst\": \"m\", \"src\": \"x[pid*128:(pid+1)*128, :]\"},"
    "  {\"op\": \"sendrecv\", \"dst\": \"o\", \"src\": \"m\", \"peer\": \"%s\"},"
    "  {\"op\": \"store\", \"dst\": \"out[pid*128:(pid+1)*128, :]\", \"src\": \"o\"}]}";

static void test_split_sendrecv(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, sendrecv_kernel, 2, "1 - pid");
    progs_t ps;
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(text, &ps, &err), 0);
    lnc_split_t s;
    assert_int_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    for (int c = 0; c < 2; c++) {
        const tir_kernel_t *k = &s.core_k[c];
        /* load, [ready signal to the peer, wait for the peer's, pull o <-
         * the peer's m from its SBUF, release m], store */
        int peer = 1 - c;
        assert_int_equal(k->nops, 6);
        assert_int_equal(k->ops[1].kind, TIR_COLL_SYNC);
        assert_int_equal(k->ops[1].rare->sync_core, peer);   /* signal: peer's "ready from c" */
        assert_int_equal(k->ops[1].rare->sync_sem, 1);
        assert_int_equal(k->ops[1].src[0]->tensor, find_tensor(k, "m"));
        assert_int_equal(k->ops[1].engine, ISA_ENG_POOL);
        assert_int_equal(k->ops[2].kind, TIR_COLL_SYNC);
        assert_int_equal(k->ops[2].rare->sync_core, -1);     /* wait: "ready from peer" >= 1 */
        assert_int_equal(k->ops[2].rare->sync_sem, 1);
        assert_int_equal(k->ops[2].rare->sync_val, 1u);
        assert_int_equal(k->ops[2].engine, ISA_ENG_SP);
        assert_int_equal(k->ops[3].kind, TIR_DMA_COPY);
        assert_int_equal(k->ops[3].dst->tensor, find_tensor(k, "o"));
        assert_int_equal(k->ops[3].src[0]->tensor, find_tensor(k, "m"));
        assert_int_equal(k->ops[3].rare->remote_core, peer);
        assert_int_equal(k->ops[3].rare->sync_core, peer);   /* descriptor: peer's "done" */
        assert_int_equal(k->ops[3].rare->sync_sem, 0);
        assert_int_equal(k->ops[4].kind, TIR_COLL_SYNC);
        assert_int_equal(k->ops[4].rare->sync_core, -1);     /* release: "done" >= 1 */
        assert_int_equal(k->ops[4].rare->sync_sem, 0);
        assert_int_equal(k->ops[4].rare->sync_val, 1u);
        assert_int_equal(k->ops[4].dst->tensor, find_tensor(k, "m"));   /* keeps m alive */
        assert_int_equal(find_tensor(k, "sendrecv0.nc0"), -1);   /* no HBM mailbox */
    }
    assert_int_equal(s.nrlts, 0);   /* nothing goes through HBM */
    lnc_split_free(&s);
    free_all(&ps);

    /* on 4 cores, core 0's pair partner is core 1, not core 3 */
    snprintf(text, sizeof text, sendrecv_kernel, 4, "3 - pid");
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_not_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    assert_non_null(strstr(err.msg, "LNC=2 pair"));
    free_all(&ps);
}

static void test_divergence(void **state)
{
    (void)state;
    /* programs may branch on pid: program 1 declares a tile program 0 does
     * not; each core runs one program (slot 0), so the core kernels share
     * one tensor list: the HBM tensors, program 0's tiles and the tiles of
     * the others that program 0 has not (by name and shape) */
    const char *text =
        "{\"kernel\": \"d\", \"grid\": [\"nc(2)\"],"
        " \"inputs\": [{\"name\": \"a\", \"shape\": [256, 64], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [256, 64], \"dtype\": \"float32\"}],"
        " \"body\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[pid*128:(pid+1)*128, :]\"},"
        "  {\"op\": \"if\", \"cond\": \"pid == 1\", \"body\": ["
        "   {\"op\": \"tile\", \"name\": \"u\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
        "   {\"op\": \"tensor_copy\", \"dst\": \"u\", \"src\": \"t\"},"
        "   {\"op\": \"store\", \"dst\": \"out[128:256, :]\", \"src\": \"u\"}],"
        "   \"else\": [{\"op\": \"store\", \"dst\": \"out[0:128, :]\", \"src\": \"t\"}]}]}";
    progs_t ps;
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_equal(ps.p[0].nops, 2);
    assert_int_equal(ps.p[1].nops, 3);
    lnc_split_t s;
    if (lnc_split(ps.p, ps.n, &s, &err))
        fail_msg("%s", err.msg);
    for (int c = 0; c < 2; c++) {
        const tir_kernel_t *k = &s.core_k[c];
        assert_int_equal(k->nops, c ? 3 : 2);
        assert_true(find_tensor(k, "a") >= 0 && find_tensor(k, "out") >= 0);
        assert_true(find_tensor(k, "t") >= 0 && find_tensor(k, "u") >= 0);
        assert_int_equal(find_tensor(k, "t@p1"), -1);
        assert_int_equal(k->ntensors, 4);   /* a, out, t, u */
    }
    /* core 1 runs program 1: its tiles, the shared HBM tensors */
    const tir_kernel_t *k1 = &s.core_k[1];
    assert_int_equal(k1->ops[0].dst->tensor, find_tensor(k1, "t"));
    assert_int_equal(k1->ops[0].src[0]->tensor, find_tensor(k1, "a"));
    assert_int_equal(k1->ops[1].dst->tensor, find_tensor(k1, "u"));
    assert_int_equal(k1->ops[1].src[0]->tensor, find_tensor(k1, "t"));
    assert_int_equal(k1->ops[2].dst->tensor, find_tensor(k1, "out"));
    lnc_split_free(&s);
    free_all(&ps);
    /* two programs per core (slots 0 and 1): program 1's tiles are slot
     * copies, and a tile name with another shape gets an entry of its own */
    const char *two =
        "{\"kernel\": \"d2\", \"grid\": [\"nc(2)*2\"],"
        " \"inputs\": [{\"name\": \"a\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
        " \"body\": [{\"op\": \"if\", \"cond\": \"pid == 3\", \"body\": ["
        "   {\"op\": \"tile\", \"name\": \"t\", \"shape\": [64, 64], \"dtype\": \"float32\"},"
        "   {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[384:448, :]\"},"
        "   {\"op\": \"store\", \"dst\": \"out[384:448, :]\", \"src\": \"t\"}],"
        "  \"else\": [{\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
        "   {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[pid*128:(pid+1)*128, :]\"},"
        "   {\"op\": \"store\", \"dst\": \"out[pid*128:(pid+1)*128, :]\", \"src\": \"t\"}]}]}";
    assert_int_equal(parse_all(two, &ps, &err), 0);
    if (lnc_split(ps.p, ps.n, &s, &err))
        fail_msg("%s", err.msg);
    const tir_kernel_t *kc1 = &s.core_k[1];   /* programs 2 (slot 0) and 3 (slot 1) */
    assert_int_equal(kc1->ops[0].dst->tensor, find_tensor(kc1, "t"));
    /* program 1 (core 0, slot 1) made "t@p1" [128, 64]; program 3's t in
     * slot 1 is [64, 64]: "t@q3" */
    assert_int_equal(s.core_k[0].ops[2].dst->tensor, find_tensor(kc1, "t@p1"));
    assert_int_equal(kc1->tensors[find_tensor(kc1, "t@p1")].shape[0], 128);
    assert_int_equal(kc1->ops[2].dst->tensor, find_tensor(kc1, "t@q3"));
    assert_int_equal(kc1->tensors[find_tensor(kc1, "t@q3")].shape[0], 64);
    assert_int_equal(kc1->ntensors, 5);   /* a, out, t, t@p1, t@q3 */
    lnc_split_free(&s);
    free_all(&ps);
    /* the split refuses programs that differ in their exchanges */
    char g[2048];
    assert_int_equal(parse_all(grid_kernel("blocked", g, sizeof g), &ps, &err), 0);
    ps.p[3].ops[1].kind = TIR_CORE_BARRIER;
    assert_int_not_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    assert_non_null(strstr(err.msg, "control flow diverges on the program id: exchange 0"));
    ps.p[3].ops[1].kind = ps.p[0].ops[1].kind;
    free_all(&ps);
}

/* A program whose control flow on pid skips every op leaves its core idle
 * (NKI): `cond` picks the programs that copy a's block `pid` to out. */
static void idle_kernel(char *buf, size_t len, const char *grid, const char *cond,
                        const char *extra)
{
    snprintf(buf, len,
             "{\"kernel\": \"idle\", \"grid\": [\"%s\"],"
             " \"inputs\": [{\"name\": \"a\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
             " \"outputs\": [{\"name\": \"out\", \"shape\": [512, 64], \"dtype\": \"float32\"}],"
             " \"body\": [{\"op\": \"if\", \"cond\": \"%s\", \"body\": ["
             "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
             "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[pid*128:(pid+1)*128, :]\"},%s"
             "  {\"op\": \"store\", \"dst\": \"out[pid*128:(pid+1)*128, :]\", \"src\": \"t\"}]}]}",
             grid, cond, extra);
}

static void test_idle_program(void **state)
{
    (void)state;
    char text[2048];
    progs_t ps;
    lnc_split_t s;
    tpb_err_t err = {{0}};
    /* program 0 is the idle one: core 0's kernel has no op, core 1 runs
     * program 1 */
    idle_kernel(text, sizeof text, "nc(2)", "pid == 1", "");
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_equal(ps.p[0].nops, 0);
    assert_int_equal(lnc_core_of(ps.p, 0), 0);
    assert_int_equal(lnc_core_of(ps.p, 1), 1);
    if (lnc_split(ps.p, ps.n, &s, &err))
        fail_msg("%s", err.msg);
    assert_true(s.diverged);
    assert_int_equal(s.core_k[0].nops, 0);
    assert_int_equal(s.core_k[1].nops, 2);
    assert_int_equal(s.core_k[1].program_id, 1);
    lnc_split_free(&s);
    free_all(&ps);
    /* two programs per core: program 3 idle, core 1 still runs program 2 */
    idle_kernel(text, sizeof text, "nc(2)*2", "pid < 3", "");
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_equal(lnc_core_of(ps.p, 3), 1);
    if (lnc_split(ps.p, ps.n, &s, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(s.core_k[0].nops, 4);
    assert_int_equal(s.core_k[1].nops, 2);
    lnc_split_free(&s);
    free_all(&ps);
    /* no program runs an op: nothing to compile */
    idle_kernel(text, sizeof text, "nc(2)", "pid > 1", "");
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_not_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    assert_non_null(strstr(err.msg, "kernel 'idle' has no ops"));
    free_all(&ps);
    /* an idle program skips the barrier program 0 waits at: refused (it
     * would hang core 0), as any program missing an exchange */
    idle_kernel(text, sizeof text, "nc(2)", "pid == 0",
                " {\"op\": \"core_barrier\", \"cores\": [0, 1]},");
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_not_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    assert_non_null(strstr(err.msg, "exchange 0 (core barrier, sendrecv or collective) is "
                                    "missing in program 1 but core_barrier in program 0"));
    free_all(&ps);
}

/* ---- end to end ---- */

static const char *copy_kernel =
    "{\"kernel\": \"copy%d\", \"grid\": {\"n\": 4, \"nc\": %d},"
    " \"inputs\": [{\"name\": \"a\", \"shape\": [1024, 512], \"dtype\": \"float32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [1024, 512], \"dtype\": \"float32\"}],"
    " \"body\": [{\"op\": \"for\", \"var\": \"i\", \"range\": [2], \"body\": ["
    "  {\"op\": \"let\", \"var\": \"r\", \"value\": \"pid*256 + i*128\"},"
    "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [128, 512], \"dtype\": \"float32\"},"
    "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[r:r+128, :]\"},"
    "  {\"op\": \"store\", \"dst\": \"out[r:r+128, :]\", \"src\": \"t\"}]}]}";

/* Compile the copy kernel on `ncores` cores, simulate, check out == a and
 * return the total cycles. */
static uint64_t run_copy(int ncores, const char *root)
{
    char path[600], dir[600], text[2048];
    tpb_err_t err = {{0}};
    snprintf(text, sizeof text, copy_kernel, ncores, ncores);
    snprintf(path, sizeof path, "%s/copy%d.json", root, ncores);
    assert_int_equal(fio_write_atomic(path, text, strlen(text), &err), 0);
    snprintf(dir, sizeof dir, "%s/copy%d", root, ncores);
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    if (enc_compile_mc(path, &o, NULL, &err))
        fail_msg("compile: %s", err.msg);
    /* the link directory and the dispatcher prologue of every stream */
    char p2[700];
    snprintf(p2, sizeof p2, "%s/sgLnk/tensor-map.json", dir);
    assert_true(fio_exists(p2));
    snprintf(p2, sizeof p2, "%s/sgLnk/link.json", dir);
    assert_true(fio_exists(p2));
    snprintf(p2, sizeof p2, "%s/sgLnk/nc%d.SP.json", dir, ncores - 1);   /* debug info */
    assert_true(fio_exists(p2));
    snprintf(p2, sizeof p2, "%s/sgLnk/nc0.def.json", dir);
    assert_true(fio_exists(p2));
    for (int c = 0; c < ncores; c++) {
        snprintf(p2, sizeof p2, "%s/nc%d/sg0/SP.bin", dir, c);
        uint8_t *buf;
        size_t len;
        assert_int_equal(fio_read_all(p2, &buf, &len, &err), 0);
        isa_stream_t st;
        isa_err_t ie;
        assert_int_equal(isa_stream_decode(buf, len, ISA_ENG_SP, &st, &ie), ISA_OK);
        assert_true(st.count > 3);
        /* Call the body; once it returns, the completion barrier; Halt */
        assert_int_equal(st.insts[0].inst.op, ISA_OP_CALL);
        assert_int_equal(st.insts[0].inst.f.CALL.target, 3);
        assert_int_equal(st.insts[1].inst.op, ISA_OP_CORE_BARRIER);
        assert_int_equal(st.insts[2].inst.op, ISA_OP_HALT);
        assert_int_equal(st.insts[st.count - 1].inst.op, ISA_OP_RETURN);
        isa_stream_free(&st);
        free(buf);
    }
    sim_options_t so;
    sim_options_default(&so);
    sim_t *s = NULL;
    if (sim_load(dir, &so, &s, &err))
        fail_msg("load: %s", err.msg);
    npy_array_t a;
    int64_t shape[2] = {1024, 512};
    assert_int_equal(npy_alloc(&a, ISA_DT_FP32, 2, shape, &err), 0);
    float *f = a.data;
    for (size_t i = 0; i < a.count; i++)
        f[i] = (float)((i * 2654435761u) % 1000) * 0.25f;
    assert_int_equal(sim_set_input(s, "a", &a, &err), 0);
    if (sim_run(s, &err))
        fail_msg("run: %s", err.msg);
    npy_array_t out;
    assert_int_equal(sim_get_tensor(s, "out", &out, &err), 0);
    assert_int_equal(out.count, a.count);
    assert_memory_equal(out.data, a.data, a.count * sizeof(float));
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    assert_int_equal(sum.num_cores, (unsigned)ncores);
    /* the number stats.json reports */
    char *js = sim_stats_json(s);
    assert_non_null(js);
    const char *tc = strstr(js, "\"total_cycles\":");
    assert_non_null(tc);
    uint64_t cycles = strtoull(tc + strlen("\"total_cycles\":"), NULL, 10);
    assert_int_equal(cycles, sum.total_cycles);
    /* the placement table (instance -> core, blocked 1-D grid of 4) */
    assert_non_null(strstr(js, "\"placement\":{\"grid\":[4],\"instances\":[{\"instance\":0,"
                               "\"program_id\":[0],\"core\":0}"));
    char last[80];
    snprintf(last, sizeof last, "{\"instance\":3,\"program_id\":[3],\"core\":%d}]}", ncores - 1);
    assert_non_null(strstr(js, last));
    free(js);
    npy_free(&out);
    npy_free(&a);
    sim_free(s);
    return cycles;
}

static void test_two_cores_faster(void **state)
{
    (void)state;
    char root[512], cmd[600];
    snprintf(root, sizeof root, "%s/test_lnc_split.%ld", TPB_BINARY_DIR, (long)getpid());
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(root, &err), 0);
    uint64_t one = run_copy(1, root);   /* all four programs on one core (LNC=1 link) */
    uint64_t two = run_copy(2, root);   /* two programs per core */
    uint64_t four = run_copy(4, root);  /* one program per core */
    if (getenv("LNC_TEST_VERBOSE"))
        printf("copy: 1 core %llu cycles, 2 cores %llu, 4 cores %llu\n", (unsigned long long)one,
               (unsigned long long)two, (unsigned long long)four);
    assert_true(two < one);
    assert_true(four < two);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* "out/" names the same directory as "out", as for a single-core compile:
 * the temporary directory is built beside it (not inside it), and a second
 * compile replaces the first. */
static void test_out_dir_trailing_slash(void **state)
{
    (void)state;
    char root[512], path[600], dir[600], p2[700], text[2048], cmd[600];
    tpb_err_t err = {{0}};
    snprintf(root, sizeof root, "%s/test_lnc_split_slash.%ld", TPB_BINARY_DIR, (long)getpid());
    assert_int_equal(fio_mkdirs(root, &err), 0);
    snprintf(text, sizeof text, copy_kernel, 2, 2);
    snprintf(path, sizeof path, "%s/copy.json", root);
    assert_int_equal(fio_write_atomic(path, text, strlen(text), &err), 0);
    snprintf(dir, sizeof dir, "%s/out/", root);
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    for (int pass = 0; pass < 2; pass++) {
        if (enc_compile_mc(path, &o, NULL, &err))
            fail_msg("compile %d: %s", pass, err.msg);
        snprintf(p2, sizeof p2, "%s/out/sgLnk/link.json", root);
        assert_true(fio_exists(p2));
        snprintf(p2, sizeof p2, "%s/out/nc1/sg0/SP.bin", root);
        assert_true(fio_exists(p2));
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* An idle core end to end: core 0 (program 0 skips every op) has only its
 * SP stream, the dispatcher's Call, the completion barrier it meets core 1
 * at, Halt, and the function's Return; core 1 computes the output. */

/* Load the artifacts in dir, run them with input "a" and read "out". */
static void run_artifacts(const char *dir, const npy_array_t *a, npy_array_t *out)
{
    tpb_err_t err = {{0}};
    sim_options_t so;
    sim_options_default(&so);
    sim_t *s = NULL;
    if (sim_load(dir, &so, &s, &err))
        fail_msg("load: %s", err.msg);
    assert_int_equal(sim_set_input(s, "a", a, &err), 0);
    if (sim_run(s, &err))
        fail_msg("run: %s", err.msg);
    assert_int_equal(sim_get_tensor(s, "out", out, &err), 0);
    sim_free(s);
}

static void test_idle_core_runs(void **state)
{
    (void)state;
    char root[512], path[600], dir[600], p2[700], text[2048], cmd[600];
    tpb_err_t err = {{0}};
    snprintf(root, sizeof root, "%s/test_lnc_split_idle.%ld", TPB_BINARY_DIR, (long)getpid());
    assert_int_equal(fio_mkdirs(root, &err), 0);
    idle_kernel(text, sizeof text, "nc(2)", "pid == 1", "");
    snprintf(path, sizeof path, "%s/idle.json", root);
    assert_int_equal(fio_write_atomic(path, text, strlen(text), &err), 0);
    snprintf(dir, sizeof dir, "%s/out", root);
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    if (enc_compile_mc(path, &o, NULL, &err))
        fail_msg("compile: %s", err.msg);
    for (int e = 0; e < 5; e++) {   /* the idle core's one stream */
        snprintf(p2, sizeof p2, "%s/nc0/sg0/%s.bin", dir, isa_engine_name(isa_tpb_engines[e]));
        assert_int_equal(fio_exists(p2), isa_tpb_engines[e] == ISA_ENG_SP);
    }
    snprintf(p2, sizeof p2, "%s/nc0/sg0/SP.bin", dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(p2, &buf, &len, &err), 0);
    isa_stream_t st;
    isa_err_t ie;
    assert_int_equal(isa_stream_decode(buf, len, ISA_ENG_SP, &st, &ie), ISA_OK);
    static const int want[] = {ISA_OP_CALL, ISA_OP_CORE_BARRIER, ISA_OP_HALT, ISA_OP_RETURN};
    assert_int_equal(st.count, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(st.insts[i].inst.op, want[i]);
    isa_stream_free(&st);
    free(buf);
    npy_array_t a, out;
    int64_t shape[2] = {512, 64};
    assert_int_equal(npy_alloc(&a, ISA_DT_FP32, 2, shape, &err), 0);
    float *f = a.data;
    for (size_t i = 0; i < a.count; i++)
        f[i] = (float)i;
    run_artifacts(dir, &a, &out);
    /* program 1's block copied; program 0's (rows 0..127) never written */
    const float *g = out.data;
    assert_memory_equal(g + 128 * 64, f + 128 * 64, 128 * 64 * sizeof(float));
    npy_free(&out);
    npy_free(&a);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* ---- collectives (encoder/lnc_collective.c) ---- */

static void coll_kernel(char *buf, size_t len, int n, const char *op)
{
    snprintf(buf, len,
             "{\"kernel\": \"c\", \"grid\": [\"nc(%d)\"],"
             " \"inputs\": [{\"name\": \"x\", \"shape\": [%d, 128, 16], \"dtype\": \"float32\"}],"
             " \"outputs\": [{\"name\": \"out\", \"shape\": [%d, 128, 64], \"dtype\": \"float32\"}],"
             " \"body\": ["
             "  {\"op\": \"tile\", \"name\": \"xs\", \"shape\": [128, 16], \"dtype\": \"float32\"},"
             "  {\"op\": \"tile\", \"name\": \"acc\", \"shape\": [128, 16], \"dtype\": \"float32\"},"
             "  {\"op\": \"tile\", \"name\": \"wide\", \"shape\": [128, 64], \"dtype\": \"float32\"},"
             "  {\"op\": \"load\", \"dst\": \"xs\", \"src\": \"x[pid, :, :]\"},"
             "  %s,"
             "  {\"op\": \"store\", \"dst\": \"out[pid, :, 0:16]\", \"src\": \"acc\"}]}",
             n, n, n, op);
}

/* Parse and split the n-core all_reduce (add) of xs into acc. */
static void split_all_reduce(int n, progs_t *ps, lnc_split_t *s)
{
    char text[4096];
    coll_kernel(text, sizeof text, n,
                "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], "
                "\"operator\": \"add\"}");
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(text, ps, &err), 0);
    assert_int_equal(lnc_split(ps->p, ps->n, s, &err), 0);
}

static void test_collective_split(void **state)
{
    (void)state;
    progs_t ps;
    lnc_split_t s;
    split_all_reduce(4, &ps, &s);
    for (int c = 0; c < 4; c++) {
        const tir_kernel_t *k = &s.core_k[c];
        /* load, 3 ready signals, own pull, 3 x (wait, pull), 3 reductions,
         * release, store */
        assert_int_equal(k->nops, 16);
        for (int t = 0; t < 3; t++) {
            const tir_op_t *sg = &k->ops[1 + t];
            int peer = t < c ? t : t + 1;
            assert_int_equal(sg->kind, TIR_COLL_SYNC);
            assert_int_equal(sg->rare->sync_core, peer);
            assert_int_equal(sg->rare->sync_sem, (c - peer + 4) % 4);   /* peer's slot for c */
            assert_int_equal(sg->src[0]->tensor, find_tensor(k, "xs"));
        }
        int at = 4;
        for (int r = 0; r < 4; r++) {   /* pulls in rank order; a peer's after its signal */
            if (r != c) {
                const tir_op_t *w = &k->ops[at++];
                assert_int_equal(w->kind, TIR_COLL_SYNC);
                assert_int_equal(w->rare->sync_core, -1);
                assert_int_equal(w->engine, ISA_ENG_SP);
                assert_int_equal(w->rare->sync_sem, (r - c + 4) % 4);
                assert_int_equal(w->rare->sync_val, 1u);
            }
            const tir_op_t *p = &k->ops[at++];
            assert_int_equal(p->kind, TIR_DMA_COPY);
            assert_int_equal(p->src[0]->tensor, find_tensor(k, "xs"));
            assert_int_equal(p->rare->remote_core, r == c ? -1 : r);
            assert_int_equal(p->rare->sync_core, r == c ? -1 : r);
            char recv[32];
            snprintf(recv, sizeof recv, "coll0.recv%d", r);
            assert_int_equal(p->dst->tensor, r ? find_tensor(k, recv) : find_tensor(k, "acc"));
        }
        for (int r = 1; r < 4; r++) {   /* reduced in rank order on every core */
            assert_int_equal(k->ops[10 + r].kind, TIR_TENSOR_TENSOR);
            assert_int_equal(k->ops[10 + r].dst->tensor, find_tensor(k, "acc"));
            char recv[32];
            snprintf(recv, sizeof recv, "coll0.recv%d", r);
            assert_int_equal(k->ops[10 + r].src[1]->tensor, find_tensor(k, recv));
        }
        assert_int_equal(k->ops[14].kind, TIR_COLL_SYNC);
        assert_int_equal(k->ops[14].rare->sync_sem, 0);
        assert_int_equal(k->ops[14].rare->sync_val, 3u);   /* three peers read xs */
    }
    lnc_split_free(&s);
    free_all(&ps);

    /* the counts run on across collectives: the second all_reduce waits for
     * the second ready signal of each peer and for six pulls of xs */
    char text[4096];
    coll_kernel(text, sizeof text, 4,
                "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], "
                "\"operator\": \"add\"}, {\"op\": \"all_reduce\", \"srcs\": [\"xs\"], "
                "\"dsts\": [\"acc\"], \"operator\": \"maximum\"}");
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    const tir_kernel_t *k = &s.core_k[2];
    assert_int_equal(k->nops, 30);
    assert_int_equal(k->ops[18].rare->sync_val, 2u);   /* second wait on a peer (core 0) */
    assert_int_equal(k->ops[28].rare->sync_val, 6u);   /* second release */
    lnc_split_free(&s);
    free_all(&ps);
}

/* A wide all_reduce runs as reduce-scatter + all-gather (its rows are long
 * enough that pulling 1/n pieces twice costs less DMA time than pulling
 * every source whole); a narrow one stays direct (test_collective_split). */
static void test_all_reduce_split_form(void **state)
{
    (void)state;
    const char *text =
        "{\"kernel\": \"w\", \"grid\": [\"nc(4)\"],"
        " \"inputs\": [{\"name\": \"x\", \"shape\": [4, 128, 2048], \"dtype\": \"float32\"}],"
        " \"outputs\": [{\"name\": \"out\", \"shape\": [4, 128, 2048], \"dtype\": \"float32\"}],"
        " \"body\": ["
        "  {\"op\": \"tile\", \"name\": \"xs\", \"shape\": [128, 2048], \"dtype\": \"float32\"},"
        "  {\"op\": \"tile\", \"name\": \"acc\", \"shape\": [128, 2048], \"dtype\": \"float32\"},"
        "  {\"op\": \"load\", \"dst\": \"xs\", \"src\": \"x[pid, :, :]\"},"
        "  {\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": \"add\"},"
        "  {\"op\": \"store\", \"dst\": \"out[pid, :, :]\", \"src\": \"acc\"}]}";
    progs_t ps;
    lnc_split_t s;
    tpb_err_t err = {{0}};
    assert_int_equal(parse_all(text, &ps, &err), 0);
    assert_int_equal(lnc_split(ps.p, ps.n, &s, &err), 0);
    for (int c = 0; c < 4; c++) {
        const tir_kernel_t *k = &s.core_k[c];
        int acc = find_tensor(k, "acc"), xs = find_tensor(k, "xs");
        /* load, 3 signals, 4 piece pulls (3 after a wait), 3 reductions of
         * piece c, 3 signals of the reduced piece, 3 x (wait, pull of a
         * peer's reduced piece), 2 releases, store */
        assert_int_equal(k->nops, 1 + 3 + 7 + 3 + 3 + 6 + 2 + 1);
        int at = 4, pulls = 0;
        for (int r = 0; r < 4; r++) {
            at += r != c;
            const tir_op_t *p = &k->ops[at++];
            assert_int_equal(p->kind, TIR_DMA_COPY);
            assert_int_equal(p->src[0]->tensor, xs);
            assert_int_equal(p->src[0]->count[1], 512);              /* piece c of rank r */
            assert_int_equal(p->src[0]->offset, 512 * c);
            pulls++;
        }
        for (int r = 1; r < 4; r++, at++) {
            assert_int_equal(k->ops[at].kind, TIR_TENSOR_TENSOR);
            assert_int_equal(k->ops[at].dst->tensor, acc);
            assert_int_equal(k->ops[at].dst->offset, 512 * c);       /* only piece c */
            assert_int_equal(k->ops[at].dst->count[1], 512);
        }
        for (int t = 0; t < 3; t++, at++) {
            assert_int_equal(k->ops[at].kind, TIR_COLL_SYNC);
            assert_true(k->ops[at].rare->sync_core >= 0);
            assert_int_equal(k->ops[at].src[0]->tensor, acc);        /* "piece c is reduced" */
        }
        for (int r = 0; r < 4; r++) {
            if (r == c)
                continue;
            assert_int_equal(k->ops[at].kind, TIR_COLL_SYNC);
            assert_int_equal(k->ops[at++].rare->sync_val, 2u);            /* r's second signal */
            const tir_op_t *p = &k->ops[at++];
            assert_int_equal(p->src[0]->tensor, acc);                /* r's reduced piece r */
            assert_int_equal(p->src[0]->offset, 512 * r);
            assert_int_equal(p->dst->offset, 512 * r);
            assert_int_equal(p->rare->remote_core, r);
            pulls++;
        }
        assert_int_equal(pulls, 7);
        assert_int_equal(k->ops[at].rare->sync_val, 6u);                  /* 3 peers x 2 rounds */
        assert_int_equal(k->ops[at++].dst->tensor, xs);
        assert_int_equal(k->ops[at].rare->sync_val, 6u);
        assert_int_equal(k->ops[at++].dst->tensor, acc);
        assert_int_equal(k->ops[at].kind, TIR_STORE);
    }
    lnc_split_free(&s);
    free_all(&ps);
}

/* A pull reads the peer's tile at this core's address of it: the split's
 * kernels agree on it, and a core whose allocation differs is an error. */
static void test_collective_addresses(void **state)
{
    (void)state;
    progs_t ps;
    lnc_split_t s;
    split_all_reduce(2, &ps, &s);
    tpb_err_t err = {{0}};
    enc_hbm_layout_t hbm = {.addr = NULL};
    assert_int_equal(enc_hbm_layout(&s.core_k[0], &hbm, &err), 0);
    const tpb_target_t *t = tpb_target_default();
    assert_int_equal(lnc_coll_check_addresses(s.core_k, 2, t, &hbm, &err), 0);
    /* core 1 keeps 'wide' live over the whole kernel: 'xs' moves */
    tir_kernel_t *k = &s.core_k[1];
    tir_op_t m;
    tir_op_init(&m, TIR_MEMSET);
    int w = find_tensor(k, "wide");
    m.dst = tir_ap_intern(k, &(tir_ap_t){.tensor = w, .ndim = 2, .step = {64, 1}, .count = {128, 64}});
    assert_true(tir_add_op(k, &m) >= 0 && tir_add_op(k, &m) >= 0);
    memmove(&k->ops[1], &k->ops[0], (size_t)(k->nops - 2) * sizeof *k->ops);
    k->ops[0] = m;
    assert_int_not_equal(lnc_coll_check_addresses(s.core_k, 2, t, &hbm, &err), 0);
    assert_non_null(strstr(err.msg, "tile 'xs' is at SBUF offset"));
    assert_non_null(strstr(err.msg, "on core 1; a direct pull needs one address"));
    enc_hbm_layout_free(&hbm);
    lnc_split_free(&s);
    free_all(&ps);
}

static void test_collective_errors(void **state)
{
    (void)state;
    static const struct { int n; const char *op, *want; } cases[] = {
        {2, "{\"op\": \"all_reduce\", \"srcs\": [\"x[pid]\"], \"dsts\": [\"out[pid, :, 0:16]\"], "
            "\"operator\": \"maximum\"}", "all_reduce on HBM tensors supports add only"},
        {2, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": "
            "\"subtract\"}", "field 'operator': must be add, maximum or minimum"},
        {2, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"]}",
         "field 'operator': missing"},
        {2, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\", \"acc\"], \"dsts\": [\"acc\"], "
            "\"operator\": \"add\"}", "exactly one tensor"},
        {2, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"xs\"], \"operator\": "
            "\"add\"}", "needs a separate destination"},
        {4, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": "
            "\"add\", \"replica_group\": [[0, 1], [1, 2, 3]]}", "more than one group"},
        {4, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": "
            "\"add\", \"replica_group\": [[0, 1, 2], [3]]}", "groups differ in size"},
        {2, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": "
            "\"add\", \"replica_group\": [[0, 5]]}", "rank 5 is not a core of this kernel"},
        {4, "{\"op\": \"all_gather\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], "
            "\"collective_dim\": 1}", "shape must be srcs times 4 pieces"},
        {4, "{\"op\": \"all_gather\", \"srcs\": [\"xs\"], \"dsts\": [\"wide\"], "
            "\"collective_dim\": 2}", "field 'collective_dim': 2 out of range"},
        {2, "{\"op\": \"all_to_all\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"]}",
         "tensors must reside on HBM"},
        {2, "{\"op\": \"all_gather\", \"srcs\": [\"xs\"], \"dsts\": [\"out[pid]\"]}",
         "mixes memory spaces"},
        {2, "{\"op\": \"collective_permute\", \"srcs\": [\"x[pid]\"], \"dsts\": [\"out[pid, :, "
            "0:16]\"], \"source_target_pairs\": [[0, 1], [1, 1]]}", "target of two pairs"},
        {1, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": "
            "\"add\"}", "this kernel runs on one core"},
        {4, "{\"op\": \"all_reduce\", \"srcs\": [\"xs\"], \"dsts\": [\"acc\"], \"operator\": "
            "\"add\", \"replica_group\": [[\"pid\", \"(pid + 1) % 4\"]]}",
         "field 'replica_group': differs between core 0 and core 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[4096];
        coll_kernel(text, sizeof text, cases[i].n, cases[i].op);
        progs_t ps;
        tpb_err_t err = {{0}};
        int rc = parse_all(text, &ps, &err);
        if (rc == 0) {
            lnc_split_t s;
            rc = lnc_split(ps.p, ps.n, &s, &err);
            if (rc == 0)
                lnc_split_free(&s);
        }
        free_all(&ps);
        if (rc == 0 || !strstr(err.msg, cases[i].want))
            fail_msg("case %zu: want '%s', got rc %d '%s'", i, cases[i].want, rc, err.msg);
        if (!strstr(err.msg, "body[4]"))
            fail_msg("case %zu: message does not name the op's path: %s", i, err.msg);
    }
}

/* ---- the backend-IR link (encoder/lnc_birlink.c) ---- */

/* Two cores, each with a register of its own (register_alloc: r63 holds
 * pid*10+7) and a register loaded from memory (r3), a load and a store. */
static const char *reg_kernel =
    "{\"kernel\": \"kr\", \"grid\": [\"nc(2)\"],"
    " \"inputs\": [{\"name\": \"a\", \"shape\": [2, 4], \"dtype\": \"int32\"}],"
    " \"outputs\": [{\"name\": \"out\", \"shape\": [2, 4], \"dtype\": \"int32\"}],"
    " \"body\": ["
    "  {\"op\": \"register_alloc\", \"reg\": \"r\", \"x\": \"pid*10+7\"},"
    "  {\"op\": \"tile\", \"name\": \"t\", \"shape\": [1, 4], \"dtype\": \"int32\"},"
    "  {\"op\": \"load\", \"dst\": \"t\", \"src\": \"a[pid:pid+1, :]\"},"
    "  {\"op\": \"load_tensor_to_register\", \"src\": \"t[0, 1]\", \"reg\": 3},"
    "  {\"op\": \"register_store\", \"dst\": \"t[0, 0]\", \"src\": \"r\"},"
    "  {\"op\": \"store\", \"dst\": \"out[pid:pid+1, :]\", \"src\": \"t\"}]}";

typedef struct {
    progs_t ps;
    lnc_split_t s;
    enc_hbm_layout_t hbm;
    enc_core_t cc[2];
} prelinked_t;

/* Parse, split and run the per-core main pipeline (enc_core_prelink). */
static void prelink_reg_kernel(prelinked_t *p)
{
    tpb_err_t err = {{0}};
    memset(p, 0, sizeof *p);
    assert_int_equal(parse_all(reg_kernel, &p->ps, &err), 0);
    assert_int_equal(lnc_split(p->ps.p, p->ps.n, &p->s, &err), 0);
    assert_int_equal(p->s.ncores, 2);
    assert_int_equal(enc_hbm_layout(&p->s.core_k[0], &p->hbm, &err), 0);
    enc_options_t o = {NULL, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    for (int c = 0; c < 2; c++) {
        enc_stats_t st;
        memset(&st, 0, sizeof st);
        if (enc_core_prelink(&p->s.core_k[c], c, tpb_target_default(), &p->hbm, &o, &p->cc[c],
                             &st, &err))
            fail_msg("prelink core %d: %s", c, err.msg);
    }
}

static void prelinked_free(prelinked_t *p)
{
    for (int c = 0; c < 2; c++)
        enc_core_free(&p->cc[c]);
    enc_hbm_layout_free(&p->hbm);
    lnc_split_free(&p->s);
    free_all(&p->ps);
}

static uint32_t queue_field(const bir_inst_t *in)
{
    return in->isa.op == ISA_OP_DMA_DIRECT2D     ? in->isa.f->DDESC.queue
           : in->isa.op == ISA_OP_DMA_INDIRECT2D ? in->isa.f->DIND.queue
                                                 : in->isa.f->DTRIG.queue;
}

static void collect_regs(void *ctx, uint32_t *field, int count)
{
    (void)count;
    uint64_t *seen = ctx;
    *seen |= 1ull << (*field & 63);
}

/* The registers instruction operands name on engine e of block b. */
static uint64_t regs_named(bir_block_t *b, int e)
{
    uint64_t seen = 0;
    for (int i = 0; i < b->ninsts; i++)
        if (b->insts[i].engine == e)
            lnc_bir_for_regs(&b->insts[i], collect_regs, &seen);
    return seen;
}

/* Core 1's queues in the other order: a module the per-core allocation
 * would give other queue and semaphore ids than core 0's. */
static void reverse_queues(bir_module_t *m)
{
    assert_true(m->nqueues >= 2);
    bir_queue_t q0 = m->queues[0];
    m->queues[0] = m->queues[1], m->queues[1] = q0;
    m->queues[0].id = 0, m->queues[1].id = 1;
    bir_block_t *b = bir_main_block(m);
    for (int i = 0; i < b->ninsts; i++)
        if (b->insts[i].queue == 0 || b->insts[i].queue == 1) {
            bir_inst_t *in = &b->insts[i];
            in->queue ^= 1;
            if (in->isa.op == ISA_OP_DMA_DIRECT2D)
                in->isa.f->DDESC.queue = (uint32_t)in->queue;
            else if (in->isa.op == ISA_OP_DMA_INDIRECT2D)
                in->isa.f->DIND.queue = (uint32_t)in->queue;
            else if (in->isa.op == ISA_OP_DMA_TRIGGER)
                in->isa.f->DTRIG.queue = (uint32_t)in->queue;
        }
}

static void test_bir_link_pipeline(void **state)
{
    (void)state;
    prelinked_t p;
    prelink_reg_kernel(&p);
    tpb_err_t err = {{0}};
    reverse_queues(&p.cc[1].m);
    /* before the link: physical registers r3 and r63 on every engine */
    for (int c = 0; c < 2; c++)
        assert_int_equal(regs_named(bir_main_block(&p.cc[c].m), ISA_ENG_SP),
                         1ull << 3 | 1ull << 63);
    bir_block_t *b1 = bir_main_block(&p.cc[1].m);
    size_t nb = (size_t)b1->ninsts * sizeof *b1->insts;
    bir_inst_t *snap = malloc(nb);
    assert_non_null(snap);
    memcpy(snap, b1->insts, nb);
    lnc_bir_module_t lm;
    enc_core_t swapped[2] = {p.cc[1], p.cc[0]};   /* any order: the link sorts by core */
    if (lnc_bir_link(swapped, 2, "kr", &lm, &err))
        fail_msg("link: %s", err.msg);
    assert_string_equal(lm.name, "kr/sgLnk");
    assert_int_equal(lm.nfuncs, 2);
    assert_memory_equal(b1->insts, snap, nb);   /* the inputs were copied, not edited */
    free(snap);
    int moved = 0;
    for (int c = 0; c < 2; c++) {
        lnc_bir_func_t *f = &lm.funcs[c];
        assert_int_equal(f->core, c);
        assert_int_equal(f->body.m.core, c);
        char nm[16];
        snprintf(nm, sizeof nm, "nc%d", c);
        assert_string_equal(f->name, nm);
        bir_block_t *b = bir_main_block(&f->body.m);
        const bir_block_t *pre = bir_main_block(&p.cc[c].m);
        assert_int_equal(b->ninsts, pre->ninsts);
        /* queues: every operand names the unified queue of its name */
        for (int i = 0; i < b->ninsts; i++) {
            if (b->insts[i].queue < 0)
                continue;
            uint32_t u = queue_field(&b->insts[i]);
            assert_true(u < (uint32_t)lm.nqueues);
            assert_string_equal(lm.queues[u].name, f->body.m.queues[b->insts[i].queue].name);
            moved += u != queue_field(&pre->insts[i]);
        }
        /* registers: regDM numbers r3 and r63 as virtual 0 and 1 */
        for (int e = 0; e < ISA_ENG_COUNT; e++) {
            if (e != ISA_ENG_SP && e != ISA_ENG_POOL)
                continue;
            assert_int_equal(f->nvregs[e], 2);
            assert_int_equal(f->regdm[e][3], 0);
            assert_int_equal(f->regdm[e][63], 1);
            assert_int_equal(f->vregs[e][1].orig, 63);
            assert_int_equal(regs_named(b, e), 1ull << 0 | 1ull << 1);
        }
    }
    assert_true(moved > 0);   /* core 1's reversed queues were renamed */
    for (int u = 0; u < lm.nqueues; u++) {
        assert_int_equal(lm.queues[u].ninst, 2);   /* one instance per core */
        assert_int_equal(lm.queues[u].semaphore, -1);
    }
    /* alloc_semaphores over the unified pool: a queue name has one
     * semaphore on every core */
    assert_int_equal(lnc_bir_alloc_semaphores(&lm, &err), 0);
    assert_int_equal(lm.nsems, 5 + lm.coll_sems + lm.nqueues);
    for (int c = 0; c < 2; c++) {
        bir_module_t *m = &lm.funcs[c].body.m;
        assert_int_equal(m->nsems, lm.nsems);
        for (int q = 0; q < m->nqueues; q++) {
            int u = lm.funcs[c].qmap[q];
            assert_int_equal(m->queues[q].semaphore, lm.queues[u].semaphore);
            assert_string_equal(lm.sems[m->queues[q].semaphore].name, m->queues[q].name);
        }
    }
    assert_int_equal(lm.funcs[0].body.m.queues[0].semaphore,
                     lm.funcs[1].body.m.queues[1].semaphore);
    /* the post-link register allocator: back to the cores' numbers */
    assert_int_equal(lnc_bir_alloc_registers(&lm, &err), 0);
    for (int c = 0; c < 2; c++) {
        assert_int_equal(regs_named(bir_main_block(&lm.funcs[c].body.m), ISA_ENG_SP),
                         1ull << 3 | 1ull << 63);
        assert_int_equal(lm.funcs[c].vregs[ISA_ENG_SP][1].phys, 63);
    }
    char *js = lnc_bir_module_json(&lm);
    assert_non_null(js);
    assert_non_null(strstr(js, "alloc_semaphores (unified pool)"));
    free(js);
    lnc_bir_module_free(&lm);
    prelinked_free(&p);
}

/* A virtual register whose core register is taken gets the highest free
 * one; a module claiming another's core, or a register range past r63, is
 * rejected with a message naming it. */
static void test_bir_link_errors(void **state)
{
    (void)state;
    prelinked_t p;
    prelink_reg_kernel(&p);
    tpb_err_t err = {{0}};
    lnc_bir_module_t lm;
    assert_int_equal(lnc_bir_link(p.cc, 2, "kr", &lm, &err), 0);
    lnc_bir_func_t *f = &lm.funcs[1];
    f->vregs[ISA_ENG_SP][0].orig = 63;   /* both want r63 */
    assert_int_equal(lnc_bir_alloc_registers(&lm, &err), 0);
    assert_int_equal(f->vregs[ISA_ENG_SP][0].phys, 63);
    assert_int_equal(f->vregs[ISA_ENG_SP][1].phys, 62);
    assert_int_equal(regs_named(bir_main_block(&f->body.m), ISA_ENG_SP), 3ull << 62);
    lnc_bir_module_free(&lm);

    int q0engine = p.cc[1].m.queues[0].engine;   /* one queue name, two issuers */
    p.cc[1].m.queues[0].engine = q0engine == ISA_ENG_SP ? ISA_ENG_ACT : ISA_ENG_SP;
    assert_int_equal(lnc_bir_link(p.cc, 2, "kr", &lm, &err), -1);
    assert_non_null(strstr(err.msg, "of core 1 is issued by"));
    p.cc[1].m.queues[0].engine = q0engine;

    enc_core_t two0[2] = {p.cc[0], p.cc[0]};
    assert_int_equal(lnc_bir_link(two0, 2, "kr", &lm, &err), -1);
    assert_non_null(strstr(err.msg, "NeuronCoreId 0"));
    bir_block_t *b = bir_main_block(&p.cc[1].m);
    for (int i = 0; i < b->ninsts; i++)
        if (b->insts[i].isa.op == ISA_OP_TENSOR_LOAD) {
            b->insts[i].isa.f->TLOAD.reg = 63;
            b->insts[i].isa.f->TLOAD.count = 2;
            break;
        }
    assert_int_equal(lnc_bir_link(p.cc, 2, "kr", &lm, &err), -1);
    assert_non_null(strstr(err.msg, "nc1: instruction"));
    assert_non_null(strstr(err.msg, "outside the file"));
    prelinked_free(&p);
}

/* A 4-core all_reduce: the pool keeps the collective slots where every
 * peer names them (BIR_COLL_SEM0 ..), the queue semaphores after them. */
static void test_bir_link_collective_pool(void **state)
{
    (void)state;
    progs_t ps;
    lnc_split_t s;
    split_all_reduce(4, &ps, &s);
    tpb_err_t err = {{0}};
    enc_hbm_layout_t hbm;
    assert_int_equal(enc_hbm_layout(&s.core_k[0], &hbm, &err), 0);
    enc_options_t o = {NULL, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_core_t cc[4];
    for (int c = 0; c < 4; c++) {
        enc_stats_t st;
        memset(&st, 0, sizeof st);
        if (enc_core_prelink(&s.core_k[c], c, tpb_target_default(), &hbm, &o, &cc[c], &st, &err))
            fail_msg("prelink core %d: %s", c, err.msg);
    }
    lnc_bir_module_t lm;
    assert_int_equal(lnc_bir_link(cc, 4, "c", &lm, &err), 0);
    assert_int_equal(lnc_bir_alloc_semaphores(&lm, &err), 0);
    assert_true(lm.coll_sems >= 2);
    assert_int_equal(lm.coll_sems, cc[0].m.coll_sems);
    assert_string_equal(lm.sems[BIR_COLL_SEM0].name, "CollDone");
    assert_string_equal(lm.sems[BIR_COLL_SEM0 + 1].name, "CollReady+1");
    for (int u = 0; u < lm.nqueues; u++) {
        assert_int_equal(lm.queues[u].semaphore, BIR_COLL_SEM0 + lm.coll_sems + u);
        assert_int_equal(lm.queues[u].ninst, 4);
    }
    for (int c = 0; c < 4; c++) {
        assert_int_equal(lm.funcs[c].body.m.coll_sems, lm.coll_sems);
        assert_memory_equal(lm.funcs[c].body.m.sems, lm.sems, sizeof lm.sems);
        enc_core_free(&cc[c]);
    }
    lnc_bir_module_free(&lm);
    enc_hbm_layout_free(&hbm);
    lnc_split_free(&s);
    free_all(&ps);
}

/* The driver end to end: each core's registers hold their own values
 * after the link and the allocators, and the merged module is recorded. */
static void test_bir_link_driver(void **state)
{
    (void)state;
    char root[512], path[800], dir[600], cmd[800];
    snprintf(root, sizeof root, "%s/test_lnc_bir.%ld", TPB_BINARY_DIR, (long)getpid());
    tpb_err_t err = {{0}};
    assert_int_equal(fio_mkdirs(root, &err), 0);
    snprintf(path, sizeof path, "%s/kr.json", root);
    assert_int_equal(fio_write_atomic(path, reg_kernel, strlen(reg_kernel), &err), 0);
    snprintf(dir, sizeof dir, "%s/out", root);
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    if (enc_compile_mc(path, &o, NULL, &err))
        fail_msg("compile: %s", err.msg);
    snprintf(path, sizeof path, "%s/sgLnk/bir_link.json", dir);
    uint8_t *txt;
    size_t len;
    assert_int_equal(fio_read_all(path, &txt, &len, &err), 0);
    assert_non_null(strstr((char *)txt, "\"module\":\t\"kr/sgLnk\""));
    assert_non_null(strstr((char *)txt, "coloring_allocator_reg (post-link)"));
    free(txt);
    npy_array_t a, out;
    int64_t shape[2] = {2, 4};
    assert_int_equal(npy_alloc(&a, ISA_DT_INT32, 2, shape, &err), 0);
    int32_t *av = a.data;
    for (int i = 0; i < 8; i++)
        av[i] = 100 + i;
    run_artifacts(dir, &a, &out);
    const int32_t *ov = out.data;
    for (int c = 0; c < 2; c++) {
        assert_int_equal(ov[c * 4], c * 10 + 7);   /* r63 of core c */
        for (int j = 1; j < 4; j++)
            assert_int_equal(ov[c * 4 + j], av[c * 4 + j]);
    }
    npy_free(&out);
    npy_free(&a);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_blocked),
        cmocka_unit_test(test_split_interleaved),
        cmocka_unit_test(test_split_exchange),
        cmocka_unit_test(test_split_sendrecv),
        cmocka_unit_test(test_divergence),
        cmocka_unit_test(test_idle_program),
        cmocka_unit_test(test_idle_core_runs),
        cmocka_unit_test(test_two_cores_faster),
        cmocka_unit_test(test_out_dir_trailing_slash),
        cmocka_unit_test(test_collective_split),
        cmocka_unit_test(test_all_reduce_split_form),
        cmocka_unit_test(test_collective_errors),
        cmocka_unit_test(test_collective_addresses),
        cmocka_unit_test(test_bir_link_pipeline),
        cmocka_unit_test(test_bir_link_errors),
        cmocka_unit_test(test_bir_link_collective_pool),
        cmocka_unit_test(test_bir_link_driver),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
