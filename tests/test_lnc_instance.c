/* Module definitions with several instances (moveModulesAsFunctions:
 * funcArgs, uniqueId) and DMA descriptor reuse (enableDmaDescReuse):
 * encoder/lnc_instance.c, encoder/lnc_descreuse.c, docs/multicore.md
 * "Module definitions and instances". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "backend.h"
#include "compile.h"
#include "fileio.h"
#include "lnc.h"
#include "lnc_passes.h"

/* One core: an SP descriptor HBM (src_addr) -> its own SBUF (sbuf_addr),
 * then a Nop.  The SBUF side is core-relative (core 0 = "local") as a
 * per-core stream addresses it. */
static void build_core(lnc_module_t *m, int core, int ncores, uint32_t src_addr,
                       uint32_t sbuf_addr)
{
    lnc_module_init(m, "k", core);
    m->ncores = ncores;
    assert_int_equal(lnc_add_func(m, "main", core, NULL), 0);
    char bname[32];
    snprintf(bname, sizeof bname, "nc%d.SP", core);
    lnc_block_t *b = lnc_func_block(m, 0, ISA_ENG_SP, bname, NULL);
    assert_non_null(b);
    lnc_inst_t d, n;
    lnc_inst_init(&d, LNC_OPC_ISA, "load");
    d.engine = ISA_ENG_SP;
    d.isa.op = ISA_OP_DMA_DIRECT2D;
    d.isa.l2 = isa_ops[ISA_OP_DMA_DIRECT2D].l2;
    isa_fmt_DDESC_t *f = &d.isa.f.DDESC;
    f->src = (isa_dap_t){.addr = src_addr, .dtype = ISA_DT_FP32, .space = ISA_SPACE_HBM,
                         .step = {4, 0}, .count = {16, 1}};
    f->dst = (isa_dap_t){.addr = sbuf_addr, .dtype = ISA_DT_FP32, .space = ISA_SPACE_SBUF,
                         .step = {4, 0}, .count = {16, 1}};
    f->src_reg = f->dst_reg = ISA_REG_NONE;
    assert_true(lnc_block_append(b, &d, NULL) >= 0);
    lnc_inst_init(&n, LNC_OPC_ISA, "work");
    n.engine = ISA_ENG_SP;
    n.isa.op = ISA_OP_NOP;
    n.isa.l2 = isa_ops[ISA_OP_NOP].l2;
    assert_true(lnc_block_append(b, &n, NULL) >= 0);
    lnc_mloc_t a;   /* the kernel input the descriptor reads */
    memset(&a, 0, sizeof a);
    snprintf(a.name, sizeof a.name, "a");
    a.kind = a.kkind = LNC_ML_INPUT;
    a.external = true;
    a.space = ISA_SPACE_HBM;
    a.addr = 1024;
    a.bytes = 4096;
    a.remote_core = -1;
    assert_true(lnc_add_mloc(m, &a, NULL) >= 0);
}

static const lnc_inst_t *first_desc(const lnc_func_t *f)
{
    for (int i = 0; i < f->blocks[0].n; i++)
        if (f->blocks[0].insts[i].isa.op == ISA_OP_DMA_DIRECT2D)
            return &f->blocks[0].insts[i];
    fail_msg("no descriptor in %s", f->name);
    return NULL;
}

/* Three cores read their own slice of one HBM tensor into SBUF offset 0;
 * core 2 uses SBUF offset 64 instead, so its body differs. */
static void test_instances_and_args(void **state)
{
    (void)state;
    lnc_module_t c[3], l, v;
    build_core(&c[0], 0, 3, 1024, 0);
    build_core(&c[1], 1, 3, 1024 + 256, 0);
    build_core(&c[2], 2, 3, 1024 + 512, 64);
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 3, NULL, 0, &l, &err), 0);
    /* main, definition 0 (cores 0 and 1), definition 1 (core 2) */
    assert_int_equal(l.ndefs, 2);
    assert_int_equal(l.nfuncs, 3);
    const lnc_block_t *d = &l.funcs[0].blocks[0];
    assert_int_equal(d->n, 3);
    assert_string_equal(d->insts[0].name, "call_def_0_instance_0");
    assert_string_equal(d->insts[1].name, "call_def_0_instance_1");
    assert_string_equal(d->insts[2].name, "call_def_1_instance_0");
    assert_int_equal(d->insts[1].callee, d->insts[0].callee);
    assert_int_equal(d->insts[1].call_core, 1);
    const lnc_func_t *def0 = &l.funcs[d->insts[0].callee];
    assert_int_equal(def0->ninsts, 2);
    assert_int_equal(def0->nparams, 1);   /* the HBM source: the one difference */
    assert_int_equal(def0->params[0].side, 1);
    assert_int_equal(def0->insts[0].args[0], 1024);
    assert_int_equal(def0->insts[1].args[0], 1024 + 256);
    assert_int_equal(def0->insts[0].unique_id, 0);
    assert_int_equal(def0->insts[1].unique_id, 1);
    assert_int_equal(l.funcs[d->insts[2].callee].ninsts, 1);
    assert_int_equal(l.funcs[d->insts[2].callee].insts[0].unique_id, 2);
    char *js = lnc_module_json(&l);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"Num Module Definitions 2\""));
    assert_non_null(strstr(js, "\"Module Instance 1 DefID 0\""));
    assert_non_null(strstr(js, "\"funcArgs\""));
    free(js);

    /* each core's section: its instance bound (argument, own SBUF, names) */
    assert_int_equal(lnc_bind_instances(&l, &v, &err), 0);
    assert_int_equal(v.nfuncs, 4);
    for (int core = 0; core < 3; core++) {
        const lnc_func_t *f = &v.funcs[1 + core];
        assert_int_equal(f->core, core);
        const isa_fmt_DDESC_t *x = &first_desc(f)->isa.f.DDESC;
        assert_int_equal(x->src.addr, 1024 + 256 * (unsigned)core);
        assert_int_equal(x->dst.core, (unsigned)core);
        assert_int_equal(x->dst.addr, core == 2 ? 64 : 0);
        char want[32];
        snprintf(want, sizeof want, "return_%d", core);
        assert_string_equal(f->blocks[0].insts[f->blocks[0].n - 2].name, want);
    }
    lnc_module_free(&v);

    /* descriptor reuse: definition 0's descriptor keeps core 0's address
     * plus r63; each call site sets r63 to its offset in elements */
    assert_int_equal(lnc_dma_desc_reuse(&l, &err), 0);
    assert_true(l.desc_reuse);
    def0 = &l.funcs[d->insts[0].callee];
    assert_true(def0->desc_reuse);
    assert_int_equal(def0->params[0].reg, 63);
    assert_int_equal(def0->nshared, 1);
    assert_false(l.funcs[d->insts[2].callee].desc_reuse);   /* one instance */
    assert_int_equal(lnc_bind_instances(&l, &v, &err), 0);
    for (int core = 0; core < 2; core++) {
        const lnc_block_t *b = &v.funcs[1 + core].blocks[0];
        assert_int_equal(b->insts[0].opc, LNC_OPC_ARG);
        assert_int_equal(b->insts[0].isa.op, ISA_OP_REG_SET);
        assert_int_equal(b->insts[0].isa.f.REG.reg, 63);
        assert_int_equal(b->insts[0].isa.f.REG.imm, 64 * core);   /* 256 B of fp32 */
        const isa_fmt_DDESC_t *x = &first_desc(&v.funcs[1 + core])->isa.f.DDESC;
        assert_int_equal(x->src.addr, 1024);
        assert_int_equal(x->src_reg, 63);
    }
    assert_int_not_equal(v.funcs[3].blocks[0].insts[0].opc, LNC_OPC_ARG);
    js = lnc_module_json(&l);
    assert_non_null(strstr(js, "\"DMA Descriptor ReUse Enabled\""));
    assert_non_null(strstr(js, "\"shared_descriptors\":\t1"));
    free(js);
    lnc_module_free(&v);
    lnc_module_free(&l);
    for (int i = 0; i < 3; i++)
        lnc_module_free(&c[i]);
}

/* A parameter whose side already has a register offset cannot be passed
 * in a register: the definition keeps its bound copies. */
static void test_reuse_refused(void **state)
{
    (void)state;
    lnc_module_t c[2], l, v;
    build_core(&c[0], 0, 2, 1024, 0);
    build_core(&c[1], 1, 2, 2048, 0);
    for (int i = 0; i < 2; i++)
        c[i].funcs[0].blocks[0].insts[0].isa.f.DDESC.src_reg = 5;
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_int_equal(l.ndefs, 1);
    assert_int_equal(lnc_dma_desc_reuse(&l, &err), 0);
    assert_false(l.funcs[1].desc_reuse);
    assert_int_equal(l.funcs[1].nshared, 0);
    assert_int_equal(lnc_bind_instances(&l, &v, &err), 0);
    assert_int_equal(first_desc(&v.funcs[2])->isa.f.DDESC.src.addr, 2048);
    assert_int_not_equal(v.funcs[2].blocks[0].insts[0].opc, LNC_OPC_ARG);
    lnc_module_free(&v);
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

static size_t read_bin(const char *dir, const char *rel, uint8_t **buf)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    size_t n = 0;
    tpb_err_t err;
    assert_int_equal(fio_read_all(path, buf, &n, &err), 0);
    return n / ISA_BUNDLE_BYTES;
}

/* Two bundles equal once the core of a descriptor's SBUF/PSUM side is set
 * aside (each core's section names its own SBUF by its core number). */
static bool same_but_local_core(const uint8_t *x, const uint8_t *y)
{
    isa_inst_t a, b;
    isa_err_t e;
    if (isa_decode(x, 0, &a, &e) != ISA_OK || isa_decode(y, 0, &b, &e) != ISA_OK)
        return !memcmp(x, y, ISA_BUNDLE_BYTES);   /* a prefix bundle */
    if (a.op == ISA_OP_DMA_DIRECT2D && b.op == ISA_OP_DMA_DIRECT2D) {
        isa_dap_t *s[4] = {&a.f.DDESC.src, &a.f.DDESC.dst, &b.f.DDESC.src, &b.f.DDESC.dst};
        for (int i = 0; i < 4; i++)
            if (s[i]->space != ISA_SPACE_HBM)
                s[i]->core = 0;
    }
    uint8_t u[ISA_BUNDLE_BYTES] = {0}, v[ISA_BUNDLE_BYTES] = {0};
    return isa_encode(&a, u, &e) == ISA_OK && isa_encode(&b, v, &e) == ISA_OK &&
           !memcmp(u, v, sizeof u);
}

/* golden/mc_tensor_add end to end: both cores compile to one body, one
 * definition with two instances whose funcArgs are the six HBM addresses
 * (rows pid*256: 256 KiB apart).  With --dma-desc-reuse the two cores'
 * streams of DMA issuers (SP: the loads, Pool: the store) differ only in
 * the call sites' RegSets (and the core number of each core's own SBUF);
 * without it, in the descriptors' addresses too.  Returns the first
 * differing SP bundle (-1: none). */
static int compile_tensor_add(const char *dir, bool reuse, int *differ)
{
    enc_options_t o = {dir, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, reuse, false, 0, NULL};
    tpb_err_t err = {{0}};
    art_rmtree(dir);
    if (enc_compile_mc(TPB_SOURCE_DIR "/golden/mc_tensor_add/kernel.json", &o, NULL, &err))
        fail_msg("%s", err.msg);
    *differ = 0;
    int first = -1;
    const char *engines[] = {"SP", "Pool"};
    for (int e = 0; e < 2; e++) {
        char r0[64], r1[64];
        snprintf(r0, sizeof r0, "nc0/sg0/%s.bin", engines[e]);
        snprintf(r1, sizeof r1, "nc1/sg0/%s.bin", engines[e]);
        uint8_t *a, *b;
        size_t na = read_bin(dir, r0, &a), nb = read_bin(dir, r1, &b);
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++)
            if (!same_but_local_core(a + i * ISA_BUNDLE_BYTES, b + i * ISA_BUNDLE_BYTES)) {
                (*differ)++;
                if (first < 0 && e == 0)
                    first = (int)i;
            }
        free(a);
        free(b);
    }
    return first;
}

static void test_tensor_add_end_to_end(void **state)
{
    (void)state;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/lnc_instance_%ld", TPB_BINARY_DIR, (long)getpid());
    int differ;
    assert_true(compile_tensor_add(dir, false, &differ) > 0);
    assert_int_equal(differ, 6);   /* the six descriptors with an HBM side */
    char path[4400];
    snprintf(path, sizeof path, "%s/sgLnk/link.json", dir);
    uint8_t *txt;
    size_t len;
    tpb_err_t err;
    assert_int_equal(fio_read_all(path, &txt, &len, &err), 0);
    cJSON *root = cJSON_ParseWithLength((const char *)txt, len);
    free(txt);
    assert_non_null(root);
    cJSON *fs = cJSON_GetObjectItem(root, "functions");
    assert_int_equal(cJSON_GetArraySize(fs), 2);   /* main + one definition */
    cJSON *def = cJSON_GetObjectItem(cJSON_GetArrayItem(fs, 1), "definition");
    assert_non_null(def);
    cJSON *is = cJSON_GetObjectItem(def, "instances");
    assert_int_equal(cJSON_GetArraySize(is), 2);
    cJSON *a0 = cJSON_GetObjectItem(cJSON_GetArrayItem(is, 0), "funcArgs");
    cJSON *a1 = cJSON_GetObjectItem(cJSON_GetArrayItem(is, 1), "funcArgs");
    assert_int_equal(cJSON_GetArraySize(a0), 6);
    for (int p = 0; p < 6; p++)
        assert_int_equal(cJSON_GetArrayItem(a1, p)->valuedouble -
                             cJSON_GetArrayItem(a0, p)->valuedouble,
                         262144);
    cJSON_Delete(root);

    assert_int_equal(compile_tensor_add(dir, true, &differ), 0);
    assert_int_equal(differ, 2);   /* each issuer's call site: RegSet r63 = 0 / 65536 elements */
    art_rmtree(dir);
}

/* attachWholeTensorInputAP: the linked input 'a' carries its whole-tensor
 * pattern and the descriptors reading it are attached; a read that leaves
 * it is an error. */
static void test_whole_tensor_input_ap(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_core(&c[0], 0, 2, 1024, 0);
    build_core(&c[1], 1, 2, 1024 + 64, 64);   /* a different body: two definitions */
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    int a = lnc_find_mloc(&l, "a");
    assert_true(a >= 0);
    assert_true(l.mlocs[a].whole_ap);
    assert_int_equal(l.mlocs[a].ap_readers, 2);
    for (int f = 1; f < 3; f++) {
        assert_int_equal(first_desc(&l.funcs[f])->input_ap, a);
        assert_int_equal(l.funcs[f].blocks[0].insts[1].input_ap, -1);   /* the Nop */
    }
    char *js = lnc_module_json(&l);
    assert_non_null(strstr(js, "\"whole_tensor_ap\""));
    free(js);
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
    /* 16 fp32 from 1024 + 4090 leave [1024, 5120) */
    build_core(&c[0], 0, 2, 1024, 0);
    build_core(&c[1], 1, 2, 1024 + 4090, 0);
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_string_equal(err.msg, "nc1 instruction 'load' reads [5114, 5178) of input 'a', "
                                 "outside its whole-tensor access pattern [1024, 5120)");
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
    /* a 3-D descriptor spans its planes: plane 1 at +4040 ends at 5128 */
    build_core(&c[0], 0, 2, 1024, 0);
    build_core(&c[1], 1, 2, 1024, 0);
    isa_inst_t *x = &c[1].funcs[0].blocks[0].insts[0].isa;
    x->op = ISA_OP_DMA_DIRECT3D;
    x->l2 = isa_ops[ISA_OP_DMA_DIRECT3D].l2;
    x->f.D3DESC.count2 = 2;
    x->f.D3DESC.src_step2 = 4040;
    x->f.D3DESC.dst_step2 = 64;
    assert_int_not_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    assert_string_equal(err.msg, "nc1 instruction 'load' reads [1024, 5128) of input 'a', "
                                 "outside its whole-tensor access pattern [1024, 5120)");
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

/* Codegen walks the linked module main-first (seed 000's driver): it
 * follows the dispatcher's Calls into each core's function, so a
 * dispatcher instruction that is not a Call of a core function stops it. */
static void test_emit_walks_main_first(void **state)
{
    (void)state;
    lnc_module_t c[2], l;
    build_core(&c[0], 0, 2, 1024, 0);
    build_core(&c[1], 1, 2, 1024 + 64, 64);
    tpb_err_t err = {{0}};
    assert_int_equal(lnc_link(c, 2, NULL, 0, &l, &err), 0);
    char root[512];
    snprintf(root, sizeof root, "%s/test_lnc_main_first.%ld", TPB_BINARY_DIR, (long)getpid());
    assert_int_equal(fio_mkdirs(root, &err), 0);
    assert_int_equal(lnc_emit_linked(&l, root, &err), 0);
    for (int k = 0; k < 2; k++) {   /* each core's stream: the dispatcher's Call first */
        char p[700];
        snprintf(p, sizeof p, "%s/nc%d/sg0/SP.bin", root, k);
        uint8_t *buf;
        size_t len;
        assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
        isa_stream_t st;
        isa_err_t ie;
        assert_int_equal(isa_stream_decode(buf, len, ISA_ENG_SP, &st, &ie), ISA_OK);
        assert_int_equal(st.insts[0].inst.op, ISA_OP_CALL);
        isa_stream_free(&st);
        free(buf);
    }
    lnc_inst_t x;
    lnc_inst_init(&x, LNC_OPC_ISA, "stray");
    x.engine = ISA_ENG_SP;
    x.isa.op = ISA_OP_NOP;
    x.isa.l2 = isa_ops[ISA_OP_NOP].l2;
    assert_true(lnc_block_append(&l.funcs[0].blocks[0], &x, NULL) >= 0);
    assert_int_not_equal(lnc_emit_linked(&l, root, &err), 0);
    assert_non_null(strstr(err.msg, "dispatcher instruction 'stray' is not a call of a core function"));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    lnc_module_free(&l);
    lnc_module_free(&c[0]);
    lnc_module_free(&c[1]);
}

/* The pass manager: registration order is checked, passes run in order,
 * a per-core pass once per core, a failure names its core. */
typedef struct {
    char log[256];
    int fail_core;
} pm_ctx_t;

static int log_pass(pm_ctx_t *x, const char *tag, int core, tpb_err_t *err)
{
    size_t n = strlen(x->log);
    snprintf(x->log + n, sizeof x->log - n, "%s%d ", tag, core);
    if (core >= 0 && core == x->fail_core)
        return tpb_errf(err, "%s failed", tag);
    return 0;
}

static int pass_a(void *ctx, int core, tpb_err_t *err) { return log_pass(ctx, "a", core, err); }
static int pass_l(void *ctx, int core, tpb_err_t *err) { return log_pass(ctx, "l", core, err); }
static int pass_w(void *ctx, int core, tpb_err_t *err) { return log_pass(ctx, "w", core, err); }

static void test_pass_manager(void **state)
{
    (void)state;
    lnc_pass_manager_t pm;
    tpb_err_t err = {{0}};
    lnc_pm_init(&pm, 3);
    assert_int_not_equal(lnc_pm_add(&pm, "early", LNC_PASS_WHOLE_PROGRAM, pass_w, &err), 0);
    assert_non_null(strstr(err.msg, "no core-parallel pass merges"));
    assert_int_equal(lnc_pm_add(&pm, "main", LNC_PASS_PER_CORE, pass_a, &err), 0);
    assert_int_equal(lnc_pm_add(&pm, "bir_linker", LNC_PASS_CORE_PARALLEL, pass_l, &err), 0);
    assert_int_not_equal(lnc_pm_add(&pm, "late", LNC_PASS_PER_CORE, pass_a, &err), 0);
    assert_non_null(strstr(err.msg, "already merged the core modules"));
    assert_int_not_equal(lnc_pm_add(&pm, "again", LNC_PASS_CORE_PARALLEL, pass_l, &err), 0);
    assert_int_equal(lnc_pm_add(&pm, "codegen", LNC_PASS_WHOLE_PROGRAM, pass_w, &err), 0);
    pm_ctx_t x = {"", -1};
    assert_int_equal(lnc_pm_run(&pm, &x, &err), 0);
    assert_string_equal(x.log, "a0 a1 a2 l-1 w-1 ");
    assert_int_equal(pm.nran, 3);
    pm_ctx_t y = {"", 1};
    assert_int_not_equal(lnc_pm_run(&pm, &y, &err), 0);
    assert_string_equal(err.msg, "core 1: a failed");
    assert_string_equal(y.log, "a0 a1 ");
    assert_int_equal(pm.nran, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instances_and_args),
        cmocka_unit_test(test_reuse_refused),
        cmocka_unit_test(test_tensor_add_end_to_end),
        cmocka_unit_test(test_pass_manager),
        cmocka_unit_test(test_whole_tensor_input_ap),
        cmocka_unit_test(test_emit_walks_main_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
