/* sim_testlib.c - artifact directory builder for the simulator tests. */
#include "sim_testlib.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fileio.h"

void tb_init(tb_t *b, unsigned ncores)
{
    memset(b, 0, sizeof *b);
    b->ncores = ncores;
    b->target = "trn2";
    b->tgt = *tpb_target_get("trn2");
    b->tgt.sbuf_partition_bytes = 32 * 1024;
    snprintf(b->dir, sizeof b->dir, "/tmp/tpb_simtest_XXXXXX");
    assert_non_null(mkdtemp(b->dir));
}

void tb_free(tb_t *b)
{
    for (unsigned c = 0; c < TB_MAX_CORES; c++)
        for (unsigned e = 0; e < 5; e++)
            free(b->prog[c][e]);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", b->dir);
    assert_int_equal(system(cmd), 0);
}

uint32_t tb_add(tb_t *b, unsigned core, unsigned eng, isa_inst_t in)
{
    assert_true(core < TB_MAX_CORES && eng < 5);
    size_t n = b->n[core][eng];
    b->prog[core][eng] = realloc(b->prog[core][eng], (n + 1) * sizeof(isa_inst_t));
    assert_non_null(b->prog[core][eng]);
    b->prog[core][eng][n] = in;
    b->n[core][eng] = n + 1;
    /* bundle index: count prefixes of earlier instructions too */
    uint32_t pc = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t tmp[2][ISA_BUNDLE_BYTES];
        unsigned nb = 1;
        isa_err_t err;
        if (isa_encode_with_prefixes(&b->prog[core][eng][i], tmp, &nb, &err) != ISA_OK)
            nb = 1;
        pc += nb;
    }
    return pc;
}

uint64_t tb_tensor(tb_t *b, const char *name, const char *kind, unsigned dtype, int ndim,
                   const int64_t *shape)
{
    assert_true(b->ntensors < TB_MAX_TENSORS);
    tb_tensor_t *t = &b->tensors[b->ntensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->kind, sizeof t->kind, "%s", kind);
    t->dtype = dtype;
    t->ndim = ndim;
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) {
        t->shape[i] = shape[i];
        n *= (uint64_t)shape[i];
    }
    t->bytes = n * isa_dtype_size(dtype);
    t->addr = b->next_addr;
    b->next_addr = (t->addr + t->bytes + 63) & ~63ull;
    return t->addr;
}

static void mkdir_p(const char *p)
{
    tpb_err_t err;
    assert_int_equal(fio_mkdirs(p, &err), 0);
}

void tb_write_file(tb_t *b, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", b->dir, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

void tb_write_raw(tb_t *b, unsigned core, unsigned eng, const void *data, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/nc%u/sg0", b->dir, core);
    mkdir_p(path);
    snprintf(path, sizeof path, "%s/nc%u/sg0/%s.bin", b->dir, core,
             isa_engine_name(isa_tpb_engines[eng]));
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

void tb_write(tb_t *b)
{
    for (unsigned c = 0; c < b->ncores; c++) {
        char path[512];
        snprintf(path, sizeof path, "%s/nc%u/sg0", b->dir, c);
        mkdir_p(path);
        for (unsigned e = 0; e < 5; e++) {
            if (!b->n[c][e]) {
                /* drop a stream left by an earlier tb_write of this builder */
                snprintf(path, sizeof path, "%s/nc%u/sg0/%s.bin", b->dir, c,
                         isa_engine_name(isa_tpb_engines[e]));
                remove(path);
                continue;
            }
            uint8_t *buf = malloc(b->n[c][e] * 2 * ISA_BUNDLE_BYTES);
            assert_non_null(buf);
            size_t len = 0;
            for (size_t i = 0; i < b->n[c][e]; i++) {
                uint8_t out[2][ISA_BUNDLE_BYTES];
                unsigned nb;
                isa_err_t err;
                isa_status_t st = isa_encode_with_prefixes(&b->prog[c][e][i], out, &nb, &err);
                if (st != ISA_OK)
                    fail_msg("encode core %u engine %u inst %zu: %s", c, e, i, err.msg);
                memcpy(buf + len, out, nb * ISA_BUNDLE_BYTES);
                len += nb * ISA_BUNDLE_BYTES;
            }
            tb_write_raw(b, c, e, buf, len);
            free(buf);
        }
    }
    if (b->no_tensor_map)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/tensor-map.json", b->dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    uint64_t hbm = b->hbm_bytes ? b->hbm_bytes : (b->next_addr ? b->next_addr : 64);
    fprintf(f, "{\"format\":\"tpbsim-tensor-map\",\"version\":1,\"kernel\":\"test\",\"target\":\"%s\","
               "\"num_cores\":%u,\"hbm_bytes\":%llu,\"tensors\":[",
            b->target, b->ncores, (unsigned long long)hbm);
    for (unsigned i = 0; i < b->ntensors; i++) {
        tb_tensor_t *t = &b->tensors[i];
        fprintf(f, "%s{\"name\":\"%s\",\"kind\":\"%s\",\"dtype\":\"%s\",\"shape\":[", i ? "," : "",
                t->name, t->kind, isa_dtype_numpy_name(t->dtype));
        for (int d = 0; d < t->ndim; d++)
            fprintf(f, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        fprintf(f, "],\"hbm_addr\":%llu,\"bytes\":%llu}", (unsigned long long)t->addr,
                (unsigned long long)t->bytes);
    }
    fprintf(f, "]}\n");
    fclose(f);
}

isa_inst_t tb_op(isa_op_t op)
{
    isa_inst_t in;
    memset(&in, 0, sizeof in);
    in.op = op;
    in.l2 = isa_ops[op].l2;
    return in;
}

isa_inst_t tb_dma(isa_dap_t dst, isa_dap_t src, unsigned queue)
{
    isa_inst_t in = tb_op(ISA_OP_DMA_DIRECT2D);
    in.f.DDESC.dst = dst;
    in.f.DDESC.src = src;
    in.f.DDESC.queue = queue;
    in.f.DDESC.src_reg = ISA_REG_NONE;
    in.f.DDESC.dst_reg = ISA_REG_NONE;
    return in;
}

isa_inst_t tb_trig(unsigned queue, unsigned ndesc)
{
    isa_inst_t in = tb_op(ISA_OP_DMA_TRIGGER);
    in.f.DTRIG.queue = queue;
    in.f.DTRIG.ndesc = ndesc;
    return in;
}

isa_inst_t tb_jump(isa_op_t op, uint32_t target)
{
    isa_inst_t in = tb_op(op);
    in.f.CALL.target = target;
    return in;
}

isa_inst_t tb_reg(isa_op_t op, unsigned reg, int32_t imm)
{
    isa_inst_t in = tb_op(op);
    in.f.REG.reg = reg;
    in.f.REG.imm = imm;
    return in;
}

isa_inst_t tb_barrier(unsigned id, unsigned cores)
{
    isa_inst_t in = tb_op(ISA_OP_CORE_BARRIER);
    in.f.CB.id = id;
    in.f.CB.cores = cores;
    return in;
}

isa_dap_t tb_hbm(uint64_t addr, unsigned dtype, int32_t step0, uint32_t n0, int32_t step1, uint32_t n1)
{
    isa_dap_t d = { .addr = (uint32_t)addr, .dtype = dtype, .space = ISA_SPACE_HBM,
                    .step = { step0, step1 }, .count = { n0, n1 } };
    return d;
}

isa_dap_t tb_sb(unsigned part, uint32_t off, unsigned dtype, int32_t step0, uint32_t n0,
                int32_t step1, uint32_t n1)
{
    isa_dap_t d = { .addr = part * ISA_DMA_PARTITION_PITCH + off, .dtype = dtype,
                    .space = ISA_SPACE_SBUF, .step = { step0, step1 }, .count = { n0, n1 } };
    return d;
}

void tb_wait(isa_inst_t *in, unsigned sem, uint32_t val)
{
    in->sync.wait_en = 1;
    in->sync.wait_sem = sem;
    in->sync.wait_val = val;
}

void tb_upd(isa_inst_t *in, unsigned sem, unsigned op, unsigned val, bool at_read)
{
    in->sync.upd_en = 1;
    in->sync.upd_sem = sem;
    in->sync.upd_op = op;
    in->sync.upd_val = val;
    in->sync.upd_at_read = at_read;
}

void tb_upd_remote(isa_inst_t *in, unsigned core, unsigned sem, unsigned op, unsigned val)
{
    tb_upd(in, sem, op, val, false);
    in->sync.upd_remote = 1;
    in->sync.upd_core = core;
}

sim_t *tb_load(tb_t *b, const sim_options_t *o)
{
    sim_t *s = NULL;
    tpb_err_t err = { { 0 } };
    sim_options_t opt;
    if (o)
        opt = *o;
    else
        sim_options_default(&opt);
    if (!opt.target)
        opt.target = &b->tgt;
    if (sim_load(b->dir, &opt, &s, &err) != 0)
        fail_msg("sim_load: %s", err.msg);
    return s;
}

void tb_input_f32(sim_t *s, const char *name, const float *v, int ndim, const int64_t *shape)
{
    npy_array_t a;
    tpb_err_t err;
    assert_int_equal(npy_alloc(&a, ISA_DT_FP32, ndim, shape, &err), 0);
    memcpy(a.data, v, a.count * 4);
    if (sim_set_input(s, name, &a, &err) != 0)
        fail_msg("sim_set_input: %s", err.msg);
    npy_free(&a);
}

int tb_run(tb_t *b, const sim_options_t *o, sim_t **out, tpb_err_t *err)
{
    tb_write(b);
    *out = tb_load(b, o);
    return sim_run(*out, err);
}

uint64_t tb_cycles(const sim_t *s)
{
    sim_summary_t sum;
    sim_get_summary(s, &sum);
    return sum.total_cycles;
}

const char *tb_tpb(void)
{
    return TPB_BINARY_DIR "/bin/tpb";
}
