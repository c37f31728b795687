/* Emission (Generator, CodeGenModes, findBin routing, per-inst dump) and the
 * artifact directory (enc_compile). */
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

static void tmpdir(char *out, size_t n, const char *tag)
{
    snprintf(out, n, "%s/back_test_%s_%ld", TPB_BINARY_DIR, tag, (long)getpid());
    art_rmtree(out);
}

/* a -> t (load); t2 = exp(t) (Act); t3 = t2 + t (DVE); t3 -> out (store) */
static void build_kernel(tir_kernel_t *k)
{
    tir_kernel_init(k);
    snprintf(k->name, sizeof k->name, "emit_test");
    int a = BU_T(k, "a", TIR_T_INPUT, ISA_DT_FP32, 128, 64);
    int out = BU_T(k, "out", TIR_T_OUTPUT, ISA_DT_FP32, 128, 64);
    int t = BU_T(k, "t", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int t2 = BU_T(k, "t2", TIR_T_SBUF, ISA_DT_FP32, 128, 64);
    int t3 = BU_T(k, "t3", TIR_T_SBUF, ISA_DT_FP32, 128, 4, 4, 4);
    tir_op_t op;
    tir_op_init(&op, TIR_LOAD);
    op.dst = bu_whole(k, t), op.src[0] = bu_whole(k, a), op.nsrc = 1;
    bu_op(k, &op, "ld");
    tir_op_init(&op, TIR_ACTIVATION);
    op.dst = bu_whole(k, t2), op.src[0] = bu_whole(k, t), op.nsrc = 1;
    op.func = ISA_ACTFN_EXP, op.s0.imm = 1.0;
    bu_op(k, &op, "exp");
    tir_op_init(&op, TIR_TENSOR_TENSOR);
    /* t3 as [128, 4, 4, 4] with a permuted (non-mergeable) view: 3 free dims -> ApExt */
    op.dst = bu_in(k, bu_ap(t3, 0, 4, (int64_t)64, (int64_t)128, (int64_t)1, (int64_t)4, (int64_t)4,
                   (int64_t)4, (int64_t)16, (int64_t)4));
    op.src[0] = bu_whole(k, t2), op.src[1] = bu_whole(k, t), op.nsrc = 2;
    op.src[0] = bu_in(k, bu_ap(t2, 0, 4, (int64_t)64, (int64_t)128, (int64_t)16, (int64_t)4, (int64_t)4,
                      (int64_t)4, (int64_t)1, (int64_t)4));
    op.src[1] = op.src[0];
    BU_EDIT(k, op.src[1], tensor, t);
    op.op0 = ISA_ALU_ADD;
    op.engine = ISA_ENG_DVE;   /* named: the tests read DVE's stream */
    bu_op(k, &op, "add");
    tir_op_init(&op, TIR_STORE);
    op.dst = bu_whole(k, out), op.src[0] = bu_whole(k, t3), op.nsrc = 1;
    bu_op(k, &op, "st");
}

static int read_stream(const char *dir, const char *eng, isa_stream_t *s, isa_engine_t e)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/nc0/sg0/%s.bin", dir, eng);
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    if (fio_read_all(path, &buf, &len, &err))
        return -1;
    isa_err_t ie;
    isa_status_t st = isa_stream_decode(buf, len, e, s, &ie);
    free(buf);
    if (st != ISA_OK)
        print_error("%s: %s\n", path, ie.msg);
    return st == ISA_OK ? 0 : -1;
}

static void test_artifact_dir_decodes(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    char dir[4096];
    tmpdir(dir, sizeof dir, "art");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    int rc = enc_compile(&k, &o, &st, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    /* engines used: SP (the loads), Pool (the store), Activation, DVE -- PE
     * gets no file */
    char p[4200];
    const char *used[] = {"SP", "Pool", "Activation", "DVE"};
    const isa_engine_t ue[] = {ISA_ENG_SP, ISA_ENG_POOL, ISA_ENG_ACT, ISA_ENG_DVE};
    for (int i = 0; i < 4; i++) {
        isa_stream_t s;
        assert_int_equal(read_stream(dir, used[i], &s, ue[i]), 0);
        assert_true(s.count >= 2);
        assert_int_equal(s.insts[s.count - 1].inst.op, ISA_OP_HALT);
        assert_int_equal(s.nbundles, st.insts[ue[i]]);
        isa_stream_free(&s);
        snprintf(p, sizeof p, "%s/nc0/sg0/%s.json", dir, used[i]);
        assert_true(fio_exists(p));
    }
    snprintf(p, sizeof p, "%s/nc0/sg0/PE.bin", dir);
    assert_false(fio_exists(p));
    snprintf(p, sizeof p, "%s/tensor-map.json", dir);
    assert_true(fio_exists(p));
    snprintf(p, sizeof p, "%s/nc0/sg0/def.json", dir);
    assert_true(fio_exists(p));
    /* the DVE add has 3 free dims: an ApExt prefix folded by the decoder */
    isa_stream_t s;
    assert_int_equal(read_stream(dir, "DVE", &s, ISA_ENG_DVE), 0);
    assert_int_equal(s.insts[0].inst.op, ISA_OP_TENSOR_TENSOR);
    assert_int_equal(s.insts[0].inst.f.TT.out.ndims, 3);
    assert_int_equal(s.insts[0].prefix_pc + 1, s.insts[0].pc);
    assert_int_equal(s.insts[0].inst.sync.wait_en, 1);
    isa_stream_free(&s);
    /* SP issues the load (descriptor, trigger), Pool the store: its
     * descriptor and trigger after the wait for the DVE add */
    assert_int_equal(read_stream(dir, "SP", &s, ISA_ENG_SP), 0);
    assert_int_equal(s.insts[0].inst.op, ISA_OP_DMA_DIRECT2D);
    assert_int_equal(s.insts[1].inst.op, ISA_OP_DMA_TRIGGER);
    for (size_t i = 2; i < s.count; i++)
        assert_int_not_equal(s.insts[i].inst.op, ISA_OP_DMA_DIRECT2D);
    isa_stream_free(&s);
    assert_int_equal(read_stream(dir, "Pool", &s, ISA_ENG_POOL), 0);
    size_t d = 0;
    while (d < s.count && s.insts[d].inst.op == ISA_OP_NOP)
        d++;
    assert_true(d + 1 < s.count);
    assert_int_equal(s.insts[d].inst.op, ISA_OP_DMA_DIRECT2D);
    assert_int_equal(s.insts[d + 1].inst.op, ISA_OP_DMA_TRIGGER);
    isa_stream_free(&s);
    /* sidecar debug entries map pcs to op names in program order */
    const char *sides[][2] = {{"SP", "ld"}, {"Pool", "st"}};
    for (int e = 0; e < 2; e++) {
        snprintf(p, sizeof p, "%s/nc0/sg0/%s.json", dir, sides[e][0]);
        uint8_t *buf;
        size_t len;
        assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
        cJSON *j = cJSON_Parse((const char *)buf);
        free(buf);
        assert_non_null(j);
        cJSON *dbg = cJSON_GetObjectItem(j, "debug");
        int found = 0;
        for (int i = 0; i < cJSON_GetArraySize(dbg); i++) {
            cJSON *it = cJSON_GetArrayItem(dbg, i);
            const char *nm = cJSON_GetObjectItem(it, "name")->valuestring;
            if (strcmp(nm, sides[e][1]) == 0) {
                found++;
                if (e == 1)
                    assert_string_equal(cJSON_GetObjectItem(it, "src")->valuestring, "body[3]");
            }
        }
        assert_int_equal(found, 2);   /* the descriptor and the trigger */
        cJSON_Delete(j);
    }
    /* tensor map: inputs then outputs, 64-byte aligned */
    snprintf(p, sizeof p, "%s/tensor-map.json", dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    cJSON *j = cJSON_Parse((const char *)buf);
    free(buf);
    cJSON *ts = cJSON_GetObjectItem(j, "tensors");
    assert_int_equal(cJSON_GetArraySize(ts), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ts, 1), "name")->valuestring, "out");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(ts, 1), "hbm_addr")->valuedouble, 32768);
    cJSON_Delete(j);
    art_rmtree(dir);
    tir_kernel_free(&k);
}

/* COLLECT set == histogram keys == header bytes, for every opcode */
static void test_modes_agree(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    char dir[4096];
    tmpdir(dir, sizeof dir, "modes");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    uint32_t bytes[8] = {0}, collect[8] = {0}, hist[8] = {0};
    const char *names[] = {"PE", "Activation", "Pool", "DVE", "SP"};
    for (int i = 0; i < 5; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s/nc0/sg0/%s.bin", dir, names[i]);
        uint8_t *buf;
        size_t len;
        if (fio_read_all(p, &buf, &len, &err))
            continue;
        bu_opset_add_bundles(bytes, buf, len);
        free(buf);
    }
    bu_opsets_of_stats(&st, collect, hist);
    assert_memory_equal(bytes, collect, sizeof bytes);
    assert_memory_equal(bytes, hist, sizeof bytes);
    /* and it includes the prefix and the compute opcodes */
    assert_true(bytes[0xF0 >> 5] >> (0xF0 & 31) & 1u);
    assert_true(bytes[0x41 >> 5] >> (0x41 & 31) & 1u);
    /* mode 2 builds and validates but writes nothing */
    char dir2[4096];
    tmpdir(dir2, sizeof dir2, "mode2");
    o.out_dir = dir2;
    o.mode = ENC_GENERATE_ISACODE;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_false(fio_exists(dir2));
    o.mode = ENC_COLLECT_OPCODES;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_false(fio_exists(dir2));
    o.mode = 3;
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_string_equal(err.msg, "Wrong CodeGenMode. It must be one of GENERATE_ISACODE, "
                                 "RUN_ISA_CHECKS, or COLLECT_OPCODES");
    art_rmtree(dir);
    tir_kernel_free(&k);
}

static void test_find_bin_rejects_non_tpb(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    bir_inst_t in;
    bir_inst_init(&in, BIR_NOP, ISA_OP_NOP);
    in.engine = ISA_ENG_DMA;
    in.name = "bad";
    assert_true(bir_block_append(bir_main_block(&m), &in, &err) >= 0);
    char dir[4096];
    tmpdir(dir, sizeof dir, "findbin");
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_not_equal(gen_run(&g, &err), 0);
    assert_string_equal(err.msg, "DMA, but DMA, Unassigned and ALL are not valid TPB engines");
    gen_finish(&g, false, &err);
    gen_free(&g);
    bir_block_t *b = bir_main_block(&m);
    b->insts[0].engine = ISA_ENG_UNASSIGNED;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_not_equal(gen_run(&g, &err), 0);
    assert_non_null(strstr(err.msg, "Unassigned, but DMA"));
    gen_finish(&g, false, &err);
    gen_free(&g);
    /* an illegal engine for the opcode: caught by the deferred L2 check */
    b->insts[0].isa.op = ISA_OP_MATMUL;
    b->insts[0].isa.l2 = isa_ops[ISA_OP_MATMUL].l2;
    assert_non_null(bir_inst_body_new(&m, &b->insts[0]));   /* a Matmul's body */
    b->insts[0].isa.f->MM.moving = (isa_tap_t){0, ISA_DT_FP32, ISA_SPACE_SBUF, 0, 1, 1, {1}, {1}};
    b->insts[0].isa.f->MM.dst = (isa_tap_t){0, ISA_DT_FP32, ISA_SPACE_PSUM, 0, 1, 1, {1}, {1}};
    b->insts[0].engine = ISA_ENG_DVE;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_not_equal(gen_run(&g, &err), 0);
    assert_non_null(strstr(err.msg, "not legal on DVE"));
    gen_finish(&g, false, &err);
    gen_free(&g);
    /* no stray files */
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 0);
    art_rmtree(dir);
    bir_module_free(&m);
}

static void test_dve_coverage_check(void **state)
{
    (void)state;
    gen_t g;
    memset(&g, 0, sizeof g);
    tpb_err_t err;
    /* DVE uses TensorTensor and Transpose32: both in the DVE table */
    g.table_opcodes[ISA_ENG_DVE][0x41 >> 5] |= 1u << (0x41 & 31);
    g.table_opcodes[ISA_ENG_DVE][0x50 >> 5] |= 1u << (0x50 & 31);
    assert_int_equal(gen_check_dve_coverage(&g, &err), 0);
    /* a Matmul recorded on DVE is missing from the DVE table */
    g.table_opcodes[ISA_ENG_DVE][0x02 >> 5] |= 1u << (0x02 & 31);
    assert_int_not_equal(gen_check_dve_coverage(&g, &err), 0);
    assert_non_null(strstr(err.msg, "DVE opcode coverage: opcode 0x02 (Matmul)"));
}


/* Append one bare instruction to the module's main block. */
static void add_inst(bir_module_t *m, bir_opcode_t opc, isa_op_t op, int engine, const char *name)
{
    bir_inst_t in;
    tpb_err_t err;
    bir_inst_init(&in, opc, op);
    in.engine = engine;
    assert_true(bir_inst_set_name(m, &in, name));
    assert_true(bir_block_append(bir_main_block(m), &in, &err) >= 0);
}

/* The aggregation skips non-ISA instructions: an InstLoop marker (BIR
 * InstLoop, never emitted) adds nothing to its engine's census or DVE
 * table, even when it carries a non-sync ISA opcode. */
static void test_collect_skips_non_isa(void **state)
{
    (void)state;
    const unsigned act = isa_ops[ISA_OP_TENSOR_SCALAR].l2, tt = isa_ops[ISA_OP_TENSOR_TENSOR].l2;
    for (int marker = 0; marker < 2; marker++) {
        bir_module_t m;
        tpb_err_t err;
        assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
        /* the loop marker (or, as a control, a real TensorScalar) on DVE */
        add_inst(&m, marker ? BIR_INST_LOOP : BIR_TENSOR_SCALAR, ISA_OP_TENSOR_SCALAR, ISA_ENG_DVE, "x");
        add_inst(&m, BIR_TENSOR_TENSOR, ISA_OP_TENSOR_TENSOR, ISA_ENG_DVE, "tt");
        gen_t g;
        assert_int_equal(gen_init(&g, ENC_COLLECT_OPCODES, &m, NULL, false, &err), 0);
        assert_int_equal(gen_run(&g, &err), 0);
        bool in_census = g.engine_opcodes[ISA_ENG_DVE][act >> 5] >> (act & 31) & 1u;
        bool in_table = g.table_opcodes[ISA_ENG_DVE][act >> 5] >> (act & 31) & 1u;
        assert_true(g.table_opcodes[ISA_ENG_DVE][tt >> 5] >> (tt & 31) & 1u);
        assert_int_equal(in_census, !marker);
        assert_int_equal(in_table, !marker);
        gen_finish(&g, false, &err);
        gen_free(&g);
        bir_module_free(&m);
    }
}

/* The COLLECT walk (emit_collect.c) counts every engine's bundles before
 * any is encoded: its pcs, which place the rolled loops' branch targets
 * and size the debug lists, are the run's (build_kernel's add carries an
 * ApExt), and its opcode census is the set of header bytes the run wrote. */
static void test_collect_counts_the_run(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    tpb_err_t err;
    enc_hbm_layout_t hbm;
    assert_int_equal(enc_hbm_layout(&k, &hbm, &err), 0);
    enc_options_t o = {NULL, NULL, ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    memset(&st, 0, sizeof st);
    enc_core_t cc;
    assert_int_equal(enc_core_prelink(&k, 0, tpb_target_default(), &hbm, &o, &cc, &st, &err), 0);
    assert_int_equal(sched_synchronise(&cc.m, &st, &err), 0);
    gen_t c, r;
    assert_int_equal(gen_init(&c, ENC_COLLECT_OPCODES, &cc.m, NULL, false, &err), 0);
    assert_int_equal(gen_run(&c, &err), 0);
    assert_int_equal(gen_init(&r, ENC_GENERATE_ISACODE, &cc.m, NULL, false, &err), 0);
    assert_int_equal(gen_run(&r, &err), 0);
    uint32_t census[8] = {0}, written[8] = {0};
    unsigned total = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        assert_int_equal(c.pcs[e], r.pcs[e]);
        total += c.pcs[e];
        for (int w = 0; w < 8; w++)
            census[w] |= c.engine_opcodes[e][w];
    }
    for (unsigned v = 0; v < 256; v++)
        if (r.histogram[v])
            written[v >> 5] |= 1u << (v & 31);
    assert_memory_equal(census, written, sizeof census);
    assert_true(total > 4 && (census[0xF0 >> 5] >> (0xF0 & 31) & 1u));   /* the ApExt */
    gen_free(&c);
    gen_free(&r);
    enc_core_free(&cc);
    enc_hbm_layout_free(&hbm);
    tir_kernel_free(&k);
}

static int read_json_file(const char *path, cJSON **out, tpb_err_t *err)
{
    uint8_t *buf;
    size_t len;
    if (fio_read_all(path, &buf, &len, err))
        return -1;
    *out = cJSON_ParseWithLength((const char *)buf, len);
    free(buf);
    return *out ? 0 : -1;
}

/* The COLLECT aggregation that sizes the DVE table skips sync instructions
 * (Halt, Nop, CoreBarrier): DVE.bin holds a Halt, the DVE table does not;
 * and def.json registers each engine's instruction file and sidecar. */
static void test_dve_table_and_registry(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    char dir[4096];
    tmpdir(dir, sizeof dir, "dvetable");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    /* the full census has the Halt on DVE ... */
    assert_true(st.engine_opcodes[ISA_ENG_DVE][0xA1 >> 5] >> (0xA1 & 31) & 1u);
    char p[4200];
    snprintf(p, sizeof p, "%s/nc0/sg0/DVE.json", dir);
    cJSON *root = NULL;
    assert_int_equal(read_json_file(p, &root, &err), 0);
    const cJSON *tab = cJSON_GetObjectItemCaseSensitive(root, "dve_table");
    assert_true(cJSON_IsArray(tab));
    bool tt = false, halt = false;
    const cJSON *j;
    cJSON_ArrayForEach(j, tab)
    {
        tt |= j->valueint == 0x41;
        halt |= j->valueint == 0xA1 || j->valueint == 0xA0;
    }
    assert_true(tt);      /* TensorTensor is used on DVE */
    assert_false(halt);   /* ... the sync instructions are not in the table */
    cJSON_Delete(root);
    /* the registry: exactly the engines with a stream, .bin + .json each */
    snprintf(p, sizeof p, "%s/nc0/sg0/def.json", dir);
    assert_int_equal(read_json_file(p, &root, &err), 0);
    const cJSON *arts = cJSON_GetObjectItemCaseSensitive(root, "artifacts");
    assert_true(cJSON_IsArray(arts));
    int n = 0;
    cJSON_ArrayForEach(j, arts)
    {
        const char *bin = cJSON_GetObjectItemCaseSensitive(j, "instr_file")->valuestring;
        const char *js = cJSON_GetObjectItemCaseSensitive(j, "desc_file")->valuestring;
        char q[4400];
        snprintf(q, sizeof q, "%s/nc0/sg0/%s", dir, bin);
        assert_true(fio_exists(q));
        snprintf(q, sizeof q, "%s/nc0/sg0/%s", dir, js);
        assert_true(fio_exists(q));
        n++;
    }
    int files = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        files += st.insts[e] > 0;
    assert_int_equal(n, files);
    assert_int_equal(n, st.files);
    cJSON_Delete(root);
    art_rmtree(dir);
    tir_kernel_free(&k);
}

/* createBin's failed fopen: the notes' assertion and error code 1007. */
static void test_create_bin_1007(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    add_inst(&m, BIR_HALT, ISA_OP_HALT, ISA_ENG_DVE, "halt");
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, "/nonexistent-tpb-dir/sg0", false, &err), 0);
    assert_int_not_equal(gen_run(&g, &err), 0);
    assert_non_null(strstr(err.msg, "/nonexistent-tpb-dir/sg0/DVE.bin: cannot create"));
    assert_non_null(strstr(err.msg, "assertion 'bin != __null' failed, error code 1007"));
    gen_finish(&g, false, &err);
    gen_free(&g);
    bir_module_free(&m);
}

/* assertAsmMappingsCorrect: a debug entry that does not point at its
 * instruction's bundle is caught after the walk. */
static void test_asm_mapping_check(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    add_inst(&m, BIR_NOP, ISA_OP_NOP, ISA_ENG_SP, "nop");
    add_inst(&m, BIR_HALT, ISA_OP_HALT, ISA_ENG_SP, "halt");
    char dir[4096];
    tmpdir(dir, sizeof dir, "asmmap");
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_equal(gen_run(&g, &err), 0);   /* the check ran and passed */
    assert_int_equal(g.ndbg[ISA_ENG_SP], 2);
    assert_int_equal(gen_check_asm_mappings(&g, &err), 0);
    /* swap the two entries' instructions: pc 0 now claims the Halt */
    g.dbg[ISA_ENG_SP][0].inst = 1;
    g.dbg[ISA_ENG_SP][1].inst = 0;
    assert_int_not_equal(gen_check_asm_mappings(&g, &err), 0);
    assert_string_equal(err.msg, "assembly mapping: SP pc 0 (debug entry 0, instruction 1 "
                                 "'halt') maps to a bundle with another opcode");
    /* a pc past the stream */
    g.dbg[ISA_ENG_SP][0].inst = 0;
    g.dbg[ISA_ENG_SP][1] = (gen_debug_t){7, 1};
    assert_int_not_equal(gen_check_asm_mappings(&g, &err), 0);
    assert_non_null(strstr(err.msg, "a pc out of order or outside the stream"));
    gen_finish(&g, false, &err);
    gen_free(&g);
    art_rmtree(dir);
    bir_module_free(&m);
}

/* The mapping check from one engine's opcode column and from its file read
 * back: the same answer and message (err->msg, "" when it passes). */
static void mapping_both_ways(gen_t *g, int e, char *msg, size_t n)
{
    tpb_err_t err;
    err.msg[0] = '\0';
    int rc = gen_check_asm_mappings(g, &err);
    snprintf(msg, n, "%s", rc ? err.msg : "");
    uint8_t *col = g->col[e];
    g->col[e] = NULL;   /* the general path, the one of record */
    err.msg[0] = '\0';
    int rc_file = gen_check_asm_mappings(g, &err);
    g->col[e] = col;
    assert_int_equal(rc != 0, rc_file != 0);
    assert_string_equal(msg, rc_file ? err.msg : "");
}

/* The opcode column the mapping check reads is the header byte of every
 * bundle in <Engine>.bin, over several drains of the stream's buffer, and
 * the check answers from it as from the file, corrupted entries too. */
static void test_asm_mapping_column(void **state)
{
    (void)state;
    enum { NOPS = 2600 };   /* past two drains of 1024 bundles (GEN_BIN_BUF) */
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    for (int i = 0; i < NOPS; i++)
        add_inst(&m, i % 3 ? BIR_NOP : BIR_HALT, i % 3 ? ISA_OP_NOP : ISA_OP_HALT, ISA_ENG_SP,
                 i % 3 ? "nop" : "halt");
    char dir[4096], path[4200];
    tmpdir(dir, sizeof dir, "asmcol");
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    unsigned bundles[ISA_ENG_COUNT] = {0};
    bundles[ISA_ENG_SP] = NOPS;
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_equal(gen_reserve_debug(&g, bundles, &err), 0);
    assert_int_equal(gen_run(&g, &err), 0);
    assert_non_null(g.col[ISA_ENG_SP]);
    assert_int_equal(g.ncol[ISA_ENG_SP], NOPS);
    snprintf(path, sizeof path, "%s/SP.bin", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t b[ISA_BUNDLE_BYTES];
    for (int pc = 0; pc < NOPS; pc++) {
        assert_int_equal(fread(b, 1, sizeof b, f), sizeof b);
        assert_int_equal(g.col[ISA_ENG_SP][pc], b[0]);
    }
    fclose(f);
    char msg[sizeof err.msg];
    mapping_both_ways(&g, ISA_ENG_SP, msg, sizeof msg);
    assert_string_equal(msg, "");
    gen_debug_t *d = g.dbg[ISA_ENG_SP];
    d[1600].inst = 1599;   /* a Nop's entry names a Halt */
    mapping_both_ways(&g, ISA_ENG_SP, msg, sizeof msg);
    assert_non_null(strstr(msg, "debug entry 1600, instruction 1599 'halt') maps to a bundle "
                                "with another opcode"));
    d[1600].inst = 1600;
    d[2000].pc = 1999;   /* out of order */
    mapping_both_ways(&g, ISA_ENG_SP, msg, sizeof msg);
    assert_non_null(strstr(msg, "a pc out of order or outside the stream"));
    d[2000].pc = 2000;
    g.ncol[ISA_ENG_SP] = 2050;   /* a column shorter than the stream: read past it */
    tpb_err_t e2;
    assert_int_not_equal(gen_check_asm_mappings(&g, &e2), 0);
    assert_non_null(strstr(e2.msg, "pc 2050 (debug entry 2050, instruction 2050 'nop') maps to a "
                                   "bundle that cannot be read back"));
    g.ncol[ISA_ENG_SP] = NOPS;
    assert_int_equal(gen_finish(&g, true, &err), 0);
    gen_free(&g);
    art_rmtree(dir);
    bir_module_free(&m);
}

/* A rolled loop's back branch is encoded with the target the COLLECT walk
 * found (the pc after the loop's head on its engine), and the run walk
 * leaves the module's own branch body as lowered: emission writes nothing
 * back into the program it emits. */
static void test_branch_target_in_stream_only(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    m.nloops = 1;
    add_inst(&m, BIR_NOP, ISA_OP_NOP, ISA_ENG_SP, "head");
    add_inst(&m, BIR_NOP, ISA_OP_NOP, ISA_ENG_SP, "body");
    add_inst(&m, BIR_BRANCH_CMP, ISA_OP_BRANCH_CMP, ISA_ENG_SP, "back");
    add_inst(&m, BIR_HALT, ISA_OP_HALT, ISA_ENG_SP, "halt");
    bir_block_t *b = bir_main_block(&m);
    const uint8_t roles[] = {BIR_LOOP_HEAD_END, BIR_LOOP_BODY, BIR_LOOP_BACK};
    for (int i = 0; i < 3; i++) {
        b->insts[i].loop = 0;
        b->insts[i].loop_role = roles[i];
    }
    assert_non_null(bir_inst_body_new(&m, &b->insts[2]));
    b->insts[2].isa.f->BR.cmp = ISA_CMP_LT;
    b->insts[2].isa.f->BR.target = 3;   /* as lowered: a placeholder the hint replaces */
    char dir[4096], path[4200];
    tmpdir(dir, sizeof dir, "brtarget");
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    gen_t collect, run;
    assert_int_equal(gen_init(&collect, ENC_COLLECT_OPCODES, &m, NULL, false, &err), 0);
    assert_int_equal(gen_run(&collect, &err), 0);
    assert_int_equal(gen_init(&run, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_equal(gen_reserve_debug(&run, collect.pcs, &err), 0);
    assert_int_equal(run.nloop_pc, 2);
    memcpy(run.loop_pc, collect.loop_pc, (size_t)run.nloop_pc * sizeof *run.loop_pc);
    assert_int_equal(run.loop_pc[0][ISA_ENG_SP], 1);
    assert_int_equal(gen_run(&run, &err), 0);
    assert_int_equal(gen_finish(&run, true, &err), 0);
    assert_int_equal(b->insts[2].isa.f->BR.target, 3);
    snprintf(path, sizeof path, "%s/SP.bin", dir);
    uint8_t *bin = NULL;
    size_t len = 0;
    assert_int_equal(fio_read_all(path, &bin, &len, &err), 0);
    assert_int_equal(len, 4 * ISA_BUNDLE_BYTES);
    isa_inst_t x;
    isa_err_t ie;
    assert_int_equal(isa_decode(bin + 2 * ISA_BUNDLE_BYTES, 2 * ISA_BUNDLE_BYTES, &x, &ie), ISA_OK);
    assert_int_equal(x.op, ISA_OP_BRANCH_CMP);
    assert_int_equal(x.f.BR.target, 1);
    free(bin);
    gen_free(&run);
    gen_free(&collect);
    art_rmtree(dir);
    bir_module_free(&m);
}

/* gen_reserve_debug lends each engine a part of one block: a list that
 * outgrows its part moves to a block of its own, one sized exactly is
 * filled in place, an engine without a count grows its own list; the
 * entries are the walk's either way (the mapping check reads them all). */
static void test_reserved_debug_lists(void **state)
{
    (void)state;
    bir_module_t m;
    tpb_err_t err;
    assert_int_equal(bir_module_init(&m, 0, 0, &err), 0);
    for (int i = 0; i < 5; i++)
        add_inst(&m, BIR_NOP, ISA_OP_NOP, ISA_ENG_SP, "nop");
    for (int i = 0; i < 3; i++)
        add_inst(&m, BIR_NOP, ISA_OP_NOP, ISA_ENG_DVE, "dnop");
    add_inst(&m, BIR_NOP, ISA_OP_NOP, ISA_ENG_ACT, "anop");
    add_inst(&m, BIR_HALT, ISA_OP_HALT, ISA_ENG_SP, "halt");
    char dir[4096];
    tmpdir(dir, sizeof dir, "dbgres");
    assert_int_equal(fio_mkdirs(dir, &err), 0);
    unsigned bundles[ISA_ENG_COUNT] = {0};
    bundles[ISA_ENG_SP] = 2;    /* 6 needed: moves out */
    bundles[ISA_ENG_DVE] = 3;   /* exact */
    gen_t g;
    assert_int_equal(gen_init(&g, ENC_RUN_ISA_CHECKS, &m, dir, false, &err), 0);
    assert_int_equal(gen_reserve_debug(&g, bundles, &err), 0);
    assert_true(g.dbg_lent[ISA_ENG_SP] && g.dbg_lent[ISA_ENG_DVE] && !g.dbg_lent[ISA_ENG_ACT]);
    assert_int_equal(gen_run(&g, &err), 0);   /* includes the mapping check */
    assert_false(g.dbg_lent[ISA_ENG_SP]);
    assert_true(g.dbg_lent[ISA_ENG_DVE]);
    assert_int_equal(g.ndbg[ISA_ENG_SP], 6);
    assert_int_equal(g.ndbg[ISA_ENG_DVE], 3);
    assert_int_equal(g.ndbg[ISA_ENG_ACT], 1);
    for (int i = 0; i < 6; i++)
        assert_int_equal(g.dbg[ISA_ENG_SP][i].inst, i < 5 ? i : 9);
    for (int i = 0; i < 3; i++)
        assert_int_equal(g.dbg[ISA_ENG_DVE][i].inst, 5 + i);
    assert_int_equal(g.dbg[ISA_ENG_ACT][0].inst, 8);
    /* the opcode columns: SP's outgrew its room (its check read the file),
     * DVE's holds its stream, ACT had none */
    assert_null(g.col[ISA_ENG_SP]);
    assert_non_null(g.col[ISA_ENG_DVE]);
    assert_int_equal(g.ncol[ISA_ENG_DVE], 3);
    assert_null(g.col[ISA_ENG_ACT]);
    assert_int_equal(gen_finish(&g, true, &err), 0);
    gen_free(&g);
    /* other modes keep no debug lists: nothing reserved */
    assert_int_equal(gen_init(&g, ENC_GENERATE_ISACODE, &m, dir, false, &err), 0);
    assert_int_equal(gen_reserve_debug(&g, bundles, &err), 0);
    assert_null(g.dbg_block);
    gen_free(&g);
    art_rmtree(dir);
    bir_module_free(&m);
}

static void test_requested_engine_checked(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    k.ops[2].engine = ISA_ENG_PE;   /* tensor_tensor on PE */
    enc_options_t o = {NULL, "trn2", ENC_GENERATE_ISACODE, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_non_null(strstr(err.msg, "engine PE cannot execute TensorTensor"));
    k.ops[2].engine = ISA_ENG_POOL;  /* legal: TensorTensor runs on Pool too */
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_true(st.insts[ISA_ENG_POOL] > 0);
    tir_kernel_free(&k);
}

static void test_dump_per_inst(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    char dir[4096];
    tmpdir(dir, sizeof dir, "dump");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, true, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    char p[8192];
    /* the first instruction of the walk is the load's descriptor on SP */
    snprintf(p, sizeof p, "%s/nc0/sg0/SP.000000000000000000000000.ld.bin", dir);
    uint8_t *buf;
    size_t len;
    assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
    assert_int_equal(len, 64);
    assert_int_equal(buf[0], isa_ops[ISA_OP_DMA_DIRECT2D].l2);
    free(buf);
    /* the add (3 free dims) dumps its ApExt prefix and itself */
    snprintf(dir + strlen(dir), 64, "/nc0/sg0");
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;
    bool found_add = false;
    while ((de = readdir(d))) {
        if (strstr(de->d_name, ".add.bin")) {
            found_add = true;
            assert_int_equal(strlen(de->d_name), strlen("DVE.") + 24 + strlen(".add.bin"));
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
            assert_int_equal(fio_read_all(p, &buf, &len, &err), 0);
            assert_int_equal(len, 128);
            assert_int_equal(buf[0], 0xF0);
            free(buf);
        }
        if (strstr(de->d_name, ".bin") && strchr(de->d_name, '.') != strrchr(de->d_name, '.') &&
            strlen(de->d_name) > 30)
            files++;
    }
    closedir(d);
    assert_true(found_add);
    unsigned total = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++)
        total += st.insts[e];
    assert_true(files > 0 && (unsigned)files <= total);
    dir[strlen(dir) - strlen("/nc0/sg0")] = 0;
    art_rmtree(dir);
    tir_kernel_free(&k);
}

static void test_error_leaves_nothing(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    /* make the store shape-mismatched: lowering fails after allocation */
    BU_EDIT(&k, k.ops[3].dst, count[0], 64);
    char dir[4096];
    tmpdir(dir, sizeof dir, "err");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_non_null(strstr(err.msg, "op 3 'st'"));
    assert_false(fio_exists(dir));
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tpbtmp.%ld", dir, (long)getpid());
    assert_false(fio_exists(tmp));
    /* an existing artifact directory survives a failed recompile */
    BU_EDIT(&k, k.ops[3].dst, count[0], 128);
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    /* a recompile replaces the directory whole: a file of the old one is
     * gone, and neither temporary is left beside it */
    char stale[4200], old[4200];
    snprintf(stale, sizeof stale, "%s/stale.txt", dir);
    assert_int_equal(fio_write_atomic(stale, "s", 1, &err), 0);
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_false(fio_exists(stale));
    assert_false(fio_exists(tmp));
    snprintf(old, sizeof old, "%s.tpbold.%ld", dir, (long)getpid());
    assert_false(fio_exists(old));
    BU_EDIT(&k, k.ops[3].dst, count[0], 64);
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/nc0/sg0/SP.bin", dir);
    assert_true(fio_exists(p));
    /* bad inputs never crash: out-of-range tensor index, unknown target */
    BU_EDIT(&k, k.ops[3].dst, count[0], 128);
    BU_EDIT(&k, k.ops[1].src[0], tensor, 99);
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_non_null(strstr(err.msg, "tensor 99"));
    BU_EDIT(&k, k.ops[1].src[0], tensor, 2);
    k.num_programs = 2;
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_non_null(strstr(err.msg, "multi-core"));
    k.num_programs = 1;
    o.target = "trn9";
    assert_int_not_equal(enc_compile(&k, &o, &st, &err), 0);
    assert_non_null(strstr(err.msg, "unknown target 'trn9'"));
    art_rmtree(dir);
    tir_kernel_free(&k);
}

static void test_pe_transpose_identity(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_BF16, 64, 96);
    int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 96, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, a); TIR_RARE_SET(&k, &op, value, 1.0);
    bu_op(&k, &op, "m");
    for (int i = 0; i < 2; i++) {
        tir_op_init(&op, TIR_TRANSPOSE);
        op.dst = bu_whole(&k, p), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
        bu_op(&k, &op, i ? "tr1" : "tr0");
    }
    char dir[4096];
    tmpdir(dir, sizeof dir, "ident");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    int rc = enc_compile(&k, &o, &st, &err);
    if (rc)
        print_error("%s\n", err.msg);
    assert_int_equal(rc, 0);
    /* one identity load (front of kernel) for both transposes */
    isa_stream_t s;
    assert_int_equal(read_stream(dir, "SP", &s, ISA_ENG_SP), 0);
    int trig = 0, ndesc = 0;
    for (size_t i = 0; i < s.count; i++) {
        trig += s.insts[i].inst.op == ISA_OP_DMA_TRIGGER;
        if (s.insts[i].inst.op != ISA_OP_DMA_DIRECT2D)
            continue;
        /* seed 004 shared_identity_matrix(128, int8): the DRAM identity is
         * 128 x 128 int8; the load converts it to the transposes' bf16 */
        const isa_fmt_DDESC_t *f = &s.insts[i].inst.f.DDESC;
        assert_int_equal(f->src.dtype, ISA_DT_INT8);
        assert_int_equal(f->dst.dtype, ISA_DT_BF16);
        ndesc++;
    }
    assert_int_equal(trig, 1);
    assert_true(ndesc >= 1);
    isa_stream_free(&s);
    assert_int_equal(read_stream(dir, "PE", &s, ISA_ENG_PE), 0);
    int mm = 0;
    for (size_t i = 0; i < s.count; i++)
        if (s.insts[i].inst.op == ISA_OP_LDWEIGHTS) {
            /* the identity (the next Matmul's moving) must not share the
             * stationary's space: it stays live across both transposes */
            const isa_tap_t *src = &s.insts[i].inst.f.LDW.src;
            const isa_tap_t *mv = &s.insts[i + 1].inst.f.MM.moving;
            assert_true(mv->addr >= src->addr + 96 * 2 || src->addr >= mv->addr + 64 * 2);
        }
    for (size_t i = 0; i < s.count; i++)
        if (s.insts[i].inst.op == ISA_OP_MATMUL) {
            mm++;
            assert_int_equal(s.insts[i].inst.f.MM.moving.nparts, 64);    /* identity[0:64,0:64] */
            assert_int_equal(s.insts[i].inst.f.MM.moving.count[0], 64);
            assert_int_equal(s.insts[i].inst.f.MM.dst.nparts, 96);
        }
    assert_int_equal(mm, 2);
    isa_stream_free(&s);
    char p2[4200];
    snprintf(p2, sizeof p2, "%s/nc0/sg0/const_identity.npy", dir);
    assert_true(fio_exists(p2));
    art_rmtree(dir);
    tir_kernel_free(&k);
}

static void test_pe_transpose_mode(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int a = BU_T(&k, "a", TIR_T_SBUF, ISA_DT_FP32, 64, 96);
    int p = BU_T(&k, "p", TIR_T_PSUM, ISA_DT_FP32, 96, 64);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    op.dst = bu_whole(&k, a); TIR_RARE_SET(&k, &op, value, 1.0);
    bu_op(&k, &op, "m");
    tir_op_init(&op, TIR_TRANSPOSE);
    op.dst = bu_whole(&k, p), op.src[0] = bu_whole(&k, a), op.nsrc = 1;
    bu_op(&k, &op, "tr");
    char dir[4096];
    tmpdir(dir, sizeof dir, "tflag");
    enc_options_t o = {dir, "trn2", ENC_RUN_ISA_CHECKS, false, 0, false, false, false, false, 0, NULL};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_equal(enc_compile(&k, &o, &st, &err), 0);
    /* same dtypes: NKI transpose mode, as the hardware runs it: the data
     * loaded as the stationary weights, the identity [64, 64] as moving,
     * Matmul with transpose=1 (bit-exact dst = a.T) */
    isa_stream_t s;
    assert_int_equal(read_stream(dir, "PE", &s, ISA_ENG_PE), 0);
    assert_int_equal(s.insts[0].inst.op, ISA_OP_LDWEIGHTS);
    assert_int_equal(s.insts[0].inst.f.LDW.src.nparts, 64);
    assert_int_equal(s.insts[1].inst.op, ISA_OP_MATMUL);
    assert_int_equal(s.insts[1].inst.f.MM.transpose, 1);
    assert_int_equal(s.insts[1].inst.f.MM.moving.nparts, 64);
    assert_int_equal(s.insts[1].inst.f.MM.moving.count[0], 64);
    assert_int_equal(s.insts[1].inst.f.MM.dst.nparts, 96);
    isa_stream_free(&s);
    char p2[4200];
    snprintf(p2, sizeof p2, "%s/nc0/sg0/const_identity.npy", dir);
    assert_true(fio_exists(p2));
    art_rmtree(dir);
    tir_kernel_free(&k);
}

/* The staging vector (seed 000 stagingVec) and the file sink are two
 * independent sinks of the same run pass: per engine, the staged bundles are
 * the <Engine>.bin bytes; GENERATE_ISACODE writes no file and stages the same
 * bundles; a second compile appends. */
static void test_staging_vector(void **state)
{
    (void)state;
    tir_kernel_t k;
    build_kernel(&k);
    char dir[4096];
    tmpdir(dir, sizeof dir, "staging");
    enc_staging_t sv = {0};
    enc_stats_t st;
    tpb_err_t err;
    assert_int_equal(bu_compile(&k, dir, ENC_RUN_ISA_CHECKS, &sv, &st), 0);
    size_t total = 0;
    for (int e = 0; e < ISA_ENG_COUNT; e++) {
        uint8_t *mem, *file = NULL;
        size_t mlen, flen = 0;
        assert_int_equal(enc_staging_stream(&sv, e, &mem, &mlen, &err), 0);
        char p[4200];
        snprintf(p, sizeof p, "%s/nc0/sg0/%s.bin", dir, isa_engine_name((isa_engine_t)e));
        bool has_file = access(p, F_OK) == 0;
        assert_int_equal(has_file, mlen > 0);
        if (has_file)
            assert_int_equal(fio_read_all(p, &file, &flen, &err), 0);
        assert_int_equal(mlen, flen);
        assert_int_equal(mlen, (size_t)st.insts[e] * ISA_BUNDLE_BYTES);
        if (mlen)
            assert_memory_equal(mem, file, mlen);
        total += mlen / ISA_BUNDLE_BYTES;
        free(mem);
        free(file);
    }
    assert_int_equal(total, sv.n);
    assert_true(sv.n >= 6);
    /* program order: the first staged bundle is SP's (the load's descriptor) */
    assert_int_equal(sv.engine[0], ISA_ENG_SP);
    /* GENERATE_ISACODE: no directory, the same bundles staged after the first */
    size_t n1 = sv.n;
    assert_int_equal(bu_compile(&k, NULL, ENC_GENERATE_ISACODE, &sv, NULL), 0);
    assert_int_equal(sv.n, 2 * n1);
    assert_memory_equal(sv.bundles[0], sv.bundles[n1], n1 * ISA_BUNDLE_BYTES);
    assert_memory_equal(sv.engine, sv.engine + n1, n1);
    enc_staging_free(&sv);
    assert_int_equal(sv.n, 0);
    art_rmtree(dir);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_artifact_dir_decodes),
        cmocka_unit_test(test_staging_vector),
        cmocka_unit_test(test_modes_agree),
        cmocka_unit_test(test_find_bin_rejects_non_tpb),
        cmocka_unit_test(test_dve_coverage_check),
        cmocka_unit_test(test_dve_table_and_registry),
        cmocka_unit_test(test_collect_skips_non_isa),
        cmocka_unit_test(test_collect_counts_the_run),
        cmocka_unit_test(test_create_bin_1007),
        cmocka_unit_test(test_asm_mapping_check),
        cmocka_unit_test(test_asm_mapping_column),
        cmocka_unit_test(test_branch_target_in_stream_only),
        cmocka_unit_test(test_reserved_debug_lists),
        cmocka_unit_test(test_requested_engine_checked),
        cmocka_unit_test(test_dump_per_inst),
        cmocka_unit_test(test_error_leaves_nothing),
        cmocka_unit_test(test_pe_transpose_identity),
        cmocka_unit_test(test_pe_transpose_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
