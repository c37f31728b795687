/* Robustness: every compute opcode on randomised fields (valid and
 * invalid) must return 0 or -1 with a message, never crash or touch memory
 * outside the simulated buffers (run under ASan+UBSan by scripts/test).
 * Deterministic: a fixed xorshift seed. */
#include <stdio.h>

#include "ops_fixture.h"

static uint32_t next_u32(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Shape shared by the TAPs of one instruction, so that element-wise ops
 * often get matching operands. */
typedef struct {
    uint32_t dtype, start, nparts, ndims, count0, count1;
} shape_t;

static shape_t random_shape(uint64_t *s)
{
    shape_t t;
    t.dtype = next_u32(s) % 2 ? ISA_DT_FP32 : next_u32(s) % ISA_DT_COUNT;
    t.start = (next_u32(s) % 4) * 32 * (next_u32(s) % 2);
    t.nparts = next_u32(s) % 3 ? 32 : 1 + next_u32(s) % 40;
    t.ndims = 1 + next_u32(s) % 2;
    t.count0 = next_u32(s) % 2 ? 32 : 1 + next_u32(s) % 40;
    t.count1 = 1 + next_u32(s) % 4;
    return t;
}

/* A random value for one field: mostly plausible, sometimes anything. */
static uint32_t random_field(uint64_t *s, const isa_field_t *f, const shape_t *t)
{
    uint32_t r = next_u32(s);
    uint32_t any = f->width >= 32 ? r : r & ((1u << f->width) - 1);
    if (next_u32(s) % 64 == 0)
        return any;
    bool shared = next_u32(s) % 16 != 0;
    const char *n = f->name;
    if (ends_with(n, ".addr"))
        return (r % 16) * 128;
    if (ends_with(n, ".space"))
        return next_u32(s) % 4 ? ISA_SPACE_SBUF : ISA_SPACE_PSUM;
    if (ends_with(n, ".dtype"))
        return shared ? t->dtype : r % ISA_DT_COUNT;
    if (ends_with(n, ".start"))
        return shared ? t->start : (r % 4) * 32;
    if (ends_with(n, ".nparts"))
        return shared ? t->nparts : 1 + r % 40;
    if (ends_with(n, ".ndims"))
        return shared ? t->ndims : r % 3;
    if (ends_with(n, ".count[0]"))
        return shared ? t->count0 : 1 + r % 40;
    if (ends_with(n, ".count[1]"))
        return shared ? t->count1 : 1 + r % 4;
    if (ends_with(n, ".step[0]"))
        return shared ? 1 : (uint32_t)((int32_t)(r % 5) - 2);
    if (ends_with(n, ".step[1]"))
        return shared ? t->count0 : (uint32_t)((int32_t)(r % 5) - 2);
    if (f->type == ISA_FT_F32) {
        float v = (float)((int32_t)(r % 200) - 100) / 8.0f;
        uint32_t u;
        memcpy(&u, &v, 4);
        return u;
    }
    switch (f->type) {
    case ISA_FT_ALU: return r % 29;
    case ISA_FT_ACTFN: return r % 24;
    case ISA_FT_CMP: return r % 6;
    case ISA_FT_REDCMD: return r % 5;
    case ISA_FT_MEMSET: return r % 2;
    case ISA_FT_PERF: return r % 8 == 0;
    case ISA_FT_BOOL: return r % 4 == 0;
    default: break;
    }
    if (strstr(n, "_pos"))
        return (r % 4) * 32;
    if (strstr(n, "_size"))
        return r % 2 ? 128 : 32 * (1 + r % 4);
    if (strcmp(n, "elems_per_idx") == 0)
        return 1u << (r % 6);
    if (strcmp(n, "compress_ratio") == 0)
        return 2 + 2 * (r % 2);
    if (strcmp(n, "axes") == 0)
        return 1 + r % 3;
    if (n[0] == 'm' && f->width == 6)
        return r % 4 == 0 ? ISA_SHUFFLE_KEEP : r % 32;
    if (f->width > 8)
        return r % 300;
    return any;
}

/* One fixture per (target, engine), memory randomised once. */
static fx_t *fixture(fx_t *pool[2][ISA_ENG_COUNT], unsigned tgt, isa_engine_t eng, uint64_t *seed)
{
    if (!pool[tgt][eng]) {
        fx_t *fx = fx_new(tgt ? "trn2" : "trn1", eng);
        fx_check_uninit(fx);
        for (size_t b = 0; b < 128 * FX_SBUF_PB; b += 4) {
            uint32_t v = next_u32(seed) % 64;
            memcpy(fx->ctx.sbuf + b, &v, 4);
        }
        /* initialised except the last 8 SBUF partitions and half of PSUM */
        memset(fx->ctx.sbuf_init, 1, 120 * FX_SBUF_PB);
        memset(fx->ctx.psum_init, 1, 64 * FX_PSUM_PB);
        pool[tgt][eng] = fx;
    }
    return pool[tgt][eng];
}

static void test_fuzz_all_compute_ops(void **state)
{
    (void)state;
    uint64_t seed = 0x1234567ull;
    fx_t *pool[2][ISA_ENG_COUNT];
    memset(pool, 0, sizeof pool);
    unsigned ok = 0, failed = 0;
    for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
        const sim_opimpl_t *impl = sim_opimpl((isa_op_t)op);
        if (!impl)
            continue;
        const isa_fmtinfo_t *fmt = &isa_formats[isa_ops[op].format];
        unsigned op_ok = 0;
        char last[160] = "";
        for (unsigned it = 0; it < 400; it++) {
            isa_engine_t eng = ISA_ENG_DVE;
            for (unsigned k = 0; k < 5; k++) {
                isa_engine_t e = isa_tpb_engines[(next_u32(&seed) + k) % 5];
                if (isa_ops[op].engines & (1u << e)) {
                    eng = e;
                    break;
                }
            }
            fx_t *fx = fixture(pool, next_u32(&seed) % 2, eng, &seed);
            uint8_t *si = fx->ctx.sbuf_init, *pi = fx->ctx.psum_init;
            if (next_u32(&seed) % 2)
                fx->ctx.sbuf_init = fx->ctx.psum_init = NULL;
            fx->ctx.timing_only = next_u32(&seed) % 5 == 0;
            isa_decoded_t d = mk((isa_op_t)op);
            shape_t shape = random_shape(&seed);
            for (unsigned i = 0; i < fmt->nfields; i++)
                isa_field_set(&d.inst, &fmt->fields[i],
                              random_field(&seed, &fmt->fields[i], &shape));
            if (op == ISA_OP_TENSOR_SCALAR_PTR && next_u32(&seed) % 2) {
                d.has_pred = true;
                d.pred.cm = (int32_t)(next_u32(&seed) % 5) - 2;
                d.pred.step0 = (int32_t)(next_u32(&seed) % 5) - 2;
                d.pred.cmp = next_u32(&seed) % 8;
            }
            if (next_u32(&seed) % 2) /* weights sometimes all loaded */
                memset(fx->pe.w_loaded, 1, sizeof fx->pe.w_loaded);
            fx->err.msg[0] = 0;
            int rc = impl->exec(&fx->ctx, &d);
            if (rc == 0) {
                ok++;
                op_ok++;
                (void)impl->cost(fx->ctx.target, eng, &d);
            } else {
                assert_int_equal(rc, -1);
                if (fx->err.msg[0] == 0)
                    fail_msg("%s failed without a message", isa_ops[op].mnemonic);
                memcpy(last, fx->err.msg, sizeof last - 1);
                failed++;
            }
            fx->ctx.sbuf_init = si;
            fx->ctx.psum_init = pi;
        }
        if (getenv("TPB_FUZZ_VERBOSE"))
            print_message("%-24s %u/400 succeeded; last error: %s\n", isa_ops[op].mnemonic,
                          op_ok, last);
    }
    for (unsigned t = 0; t < 2; t++)
        for (unsigned e = 0; e < ISA_ENG_COUNT; e++)
            if (pool[t][e])
                fx_free(pool[t][e]);
    print_message("fuzz: %u succeeded, %u rejected\n", ok, failed);
    /* both paths must have been exercised substantially */
    assert_true(ok > 1500);
    assert_true(failed > 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_all_compute_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
