/* isa_encode_planned (per-format plans kept across calls) against
 * isa_encode, which works the plan out again on every call: the same bytes,
 * status, field and message for random instructions of every opcode,
 * including values that do not fit, invalid enums, bad registers and
 * operands the decoder's round trip rejects (nparts 0, hbm on a compute
 * engine, fields set on an absent operand, dims beyond ndims); the round
 * trip checks them without decoding the bundle again
 * (isa_plans_check_counts). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "isa.h"

typedef struct {
    uint64_t s;
} rng_t;

static uint32_t rnd(rng_t *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}

/* A value for field f: mostly one that fits (a valid enum for enums),
 * sometimes 0, sometimes any 32 bits. */
static uint32_t field_value(rng_t *r, const isa_field_t *f)
{
    unsigned k = rnd(r) % 16;
    if (k == 0)
        return 0;
    if (k == 1)
        return rnd(r) ^ (rnd(r) << 16);
    uint32_t mask = f->width >= 32 ? 0xFFFFFFFFu : (1u << f->width) - 1;
    uint32_t v = rnd(r) & mask;
    if (f->type == ISA_FT_S && f->width < 32 && (v >> (f->width - 1) & 1))
        v |= ~mask;   /* negative, in range */
    if (f->type == ISA_FT_DTYPE || f->type == ISA_FT_BOOL || f->type >= ISA_FT_SPACE) {
        for (unsigned t = 0; t < 8 && !isa_enum_name(f->type, v); t++)
            v = rnd(r) % 64;
    }
    return v;
}

/* Make a TAP operand well formed (or absent), so that the cases reach the
 * round trip and mostly pass it; the rest keep their random shape. */
static void repair_tap(rng_t *r, isa_tap_t *t)
{
    if (rnd(r) % 6 == 0) {
        memset(t, 0, sizeof *t);
        return;
    }
    t->space = 1 + rnd(r) % 2;   /* sbuf or psum */
    t->nparts = 1 + rnd(r) % 128;
    t->start = rnd(r) % (129 - t->nparts);
    t->ndims = rnd(r) % 5;
    for (unsigned d = 0; d < ISA_MAX_FREE_DIMS; d++) {
        t->count[d] = d < t->ndims ? 1 + rnd(r) % 64 : 0;
        t->step[d] = d < t->ndims ? (int32_t)(rnd(r) % 64) - 16 : 0;
    }
    t->addr &= 0xFFFF;
}

static void random_inst(rng_t *r, isa_op_t op, isa_inst_t *in)
{
    memset(in, 0, sizeof *in);
    in->op = op;
    in->l2 = isa_ops[op].l2;
    const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[isa_ops[op].format] };
    for (int k = 0; k < 2; k++)
        for (unsigned i = 0; i < parts[k]->nfields; i++)
            isa_field_set(in, &parts[k]->fields[i], field_value(r, &parts[k]->fields[i]));
    const isa_fmtinfo_t *fi = parts[1];
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (f->opnd_kind == ISA_OPND_TAP && strstr(f->name, ".addr") && rnd(r) % 4)
            repair_tap(r, (isa_tap_t *)((uint8_t *)&in->f + f->offset));
        if ((!strcmp(f->name, "reg") || !strcmp(f->name, "src_reg") || !strcmp(f->name, "dst_reg")) &&
            rnd(r) % 4)
            isa_field_set(in, f, rnd(r) % 2 ? rnd(r) % 64 : 255);
    }
}

static void assert_same_err(isa_status_t s1, const isa_err_t *e1, isa_status_t s2, const isa_err_t *e2)
{
    assert_int_equal(s1, s2);
    if (s1 == ISA_OK)
        return;
    assert_int_equal(e1->status, e2->status);
    assert_int_equal(e1->offset, e2->offset);
    assert_string_equal(e1->msg, e2->msg);
    if (e1->field || e2->field)
        assert_string_equal(e1->field ? e1->field : "", e2->field ? e2->field : "");
}

typedef struct {
    unsigned ok, range, structural;
} tally_t;

static void compare_one(isa_plans_t *ps, const isa_inst_t *in, tally_t *t)
{
    uint8_t b1[ISA_BUNDLE_BYTES], b2[ISA_BUNDLE_BYTES];
    isa_err_t e1, e2;
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    memset(b2, 0xA5, sizeof b2);
    isa_status_t s1 = isa_encode(in, b1, &e1);
    isa_status_t s2 = isa_encode_planned(ps, in, b2, &e2);
    assert_same_err(s1, &e1, s2, &e2);
    assert_memory_equal(b1, b2, ISA_BUNDLE_BYTES);
    if (s1 == ISA_OK)
        t->ok++;
    else if (strstr(e1.msg, "does not fit") || strstr(e1.msg, "has invalid"))
        t->range++;
    else
        t->structural++;   /* reported by the decoder's round trip */

    uint8_t p1[2][ISA_BUNDLE_BYTES], p2[2][ISA_BUNDLE_BYTES];
    unsigned n1 = 9, n2 = 9;
    memset(p1, 0, sizeof p1);
    memset(p2, 0, sizeof p2);
    s1 = isa_encode_with_prefixes(in, p1, &n1, &e1);
    s2 = isa_encode_with_prefixes_planned(ps, in, p2, &n2, &e2);
    assert_same_err(s1, &e1, s2, &e2);
    assert_int_equal(n1, n2);
    assert_memory_equal(p1, p2, sizeof p1);
}

static void test_planned_matches_encode(void **state)
{
    (void)state;
    rng_t r = { 12345 };
    isa_plans_t *ps = isa_plans_new();
    assert_non_null(ps);
    tally_t t = { 0, 0, 0 };
    for (unsigned round = 0; round < 60; round++)
        for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
            isa_inst_t in;
            random_inst(&r, (isa_op_t)op, &in);
            compare_one(ps, &in, &t);
            compare_one(NULL, &in, &t);   /* no cache: isa_encode itself */
        }
    /* every kind of outcome was exercised */
    assert_true(t.ok > 100);
    assert_true(t.range > 100);
    assert_true(t.structural > 100);
    /* every format of the table has fields that share no bit and an opcode
     * of its own: all those round trips (the structural rejections above
     * included, with isa_encode's words) were taken without decoding */
    unsigned long fast, full;
    isa_plans_check_counts(ps, &fast, &full);
    assert_true(fast >= t.ok / 2);
    assert_int_equal(full, 0);
    isa_plans_free(ps);
}

/* Instructions as a compiler writes them, most fields 0: each field of a
 * random instruction cleared with probability 3/4 (zero fields take the
 * planned encoder's shortcut; enums whose 0 is not a name must still be
 * reported, with isa_encode's words). */
static void test_planned_mostly_zero(void **state)
{
    (void)state;
    rng_t r = { 777 };
    isa_plans_t *ps = isa_plans_new();
    assert_non_null(ps);
    tally_t t = { 0, 0, 0 };
    for (unsigned round = 0; round < 60; round++)
        for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
            isa_inst_t in;
            random_inst(&r, (isa_op_t)op, &in);
            const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[isa_ops[op].format] };
            for (int k = 0; k < 2; k++)
                for (unsigned i = 0; i < parts[k]->nfields; i++)
                    if (rnd(&r) % 4)
                        isa_field_set(&in, &parts[k]->fields[i], 0);
            compare_one(ps, &in, &t);
        }
    assert_true(t.ok > 50);
    assert_true(t.range > 50);
    isa_plans_free(ps);
}

/* One injected mis-encoding per kind the round trip catches, on a DMA-free
 * compute op with a TAP operand: the planned encoder reports it with
 * isa_encode's words. */
static void test_planned_injected(void **state)
{
    (void)state;
    isa_plans_t *ps = isa_plans_new();
    assert_non_null(ps);
    rng_t r = { 99 };
    unsigned hits = 0;
    for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
        const isa_fmtinfo_t *fi = &isa_formats[isa_ops[op].format];
        const isa_field_t *tap = NULL;
        for (unsigned i = 0; i < fi->nfields && !tap; i++)
            if (fi->fields[i].opnd_kind == ISA_OPND_TAP && strstr(fi->fields[i].name, ".addr"))
                tap = &fi->fields[i];
        if (!tap)
            continue;
        for (unsigned kind = 0; kind < 4; kind++) {
            isa_inst_t in;
            memset(&in, 0, sizeof in);
            in.op = (isa_op_t)op;
            isa_tap_t *t = (isa_tap_t *)((uint8_t *)&in.f + tap->offset);
            repair_tap(&r, t);
            t->space = 1;
            t->nparts = 4;
            t->start = 0;
            if (kind == 0)
                t->nparts = 0;
            else if (kind == 1)
                t->space = 3;   /* hbm */
            else if (kind == 2)
                t->space = 0, t->nparts = 1;   /* absent but set */
            else
                t->ndims = 0, t->count[0] = 3;   /* dim beyond ndims */
            uint8_t b1[ISA_BUNDLE_BYTES], b2[ISA_BUNDLE_BYTES];
            isa_err_t e1, e2;
            isa_status_t s1 = isa_encode(&in, b1, &e1), s2 = isa_encode_planned(ps, &in, b2, &e2);
            if (s1 == ISA_OK)
                continue;   /* e.g. the field is not encoded for this op */
            assert_same_err(s1, &e1, s2, &e2);
            assert_non_null(strstr(e2.msg, "operand"));
            hits++;
        }
    }
    assert_true(hits >= 4);
    isa_plans_free(ps);
}

/* isa_encode_planned_from against isa_encode: `in` is an instruction that
 * encoded (the reference) with one to three of its 32-bit words changed
 * (fields, a TAP's dims 2..3, garbage beyond the format): the same bytes,
 * status and message as encoding `in` from scratch, prefixes included. */
static void test_planned_from(void **state)
{
    (void)state;
    rng_t r = { 2024 };
    isa_plans_t *ps = isa_plans_new();
    assert_non_null(ps);
    tally_t t = { 0, 0, 0 };
    unsigned refs = 0;
    for (unsigned round = 0; round < 400; round++)
        for (unsigned op = 0; op < ISA_OP_COUNT; op++) {
            isa_inst_t ref, in;
            random_inst(&r, (isa_op_t)op, &ref);
            uint8_t rb[ISA_BUNDLE_BYTES];
            if (isa_encode(&ref, rb, NULL) != ISA_OK)
                continue;
            refs++;
            in = ref;
            unsigned words = (unsigned)(sizeof in - offsetof(isa_inst_t, sync)) / 4;
            for (unsigned k = 1 + rnd(&r) % 3; k > 0; k--) {
                uint8_t *w = (uint8_t *)&in + offsetof(isa_inst_t, sync) + 4 * (rnd(&r) % words);
                uint32_t v = rnd(&r) % 3 ? rnd(&r) % 300 : rnd(&r);
                memcpy(w, &v, 4);
            }
            uint8_t b1[ISA_BUNDLE_BYTES], b2[ISA_BUNDLE_BYTES];
            isa_err_t e1, e2;
            memset(&e1, 0, sizeof e1);
            memset(&e2, 0, sizeof e2);
            isa_status_t s1 = isa_encode(&in, b1, &e1);
            isa_status_t s2 = isa_encode_planned_from(ps, &in, &ref, rb, b2, &e2);
            assert_same_err(s1, &e1, s2, &e2);
            if (s1 == ISA_OK)
                assert_memory_equal(b1, b2, ISA_BUNDLE_BYTES);
            t.ok += s1 == ISA_OK;
            t.range += s1 != ISA_OK;
            uint8_t p1[2][ISA_BUNDLE_BYTES], p2[2][ISA_BUNDLE_BYTES];
            unsigned n1 = 9, n2 = 9;
            memset(p1, 0, sizeof p1);
            memset(p2, 0, sizeof p2);
            s1 = isa_encode_with_prefixes(&in, p1, &n1, &e1);
            s2 = isa_encode_with_prefixes_from(ps, &in, &ref, rb, p2, &n2, &e2);
            assert_same_err(s1, &e1, s2, &e2);
            assert_int_equal(n1, n2);
            if (s1 == ISA_OK)
                assert_memory_equal(p1, p2, sizeof p1);
        }
    assert_true(refs > 1000);
    assert_true(t.ok > 500);
    assert_true(t.range > 500);
    isa_plans_free(ps);
}

/* A random instruction of op that encodes (and, with `tap`, whose TAP
 * operand in1 is present). */
static void encodable(rng_t *r, isa_op_t op, bool tap, isa_inst_t *in, uint8_t b[ISA_BUNDLE_BYTES])
{
    for (unsigned t = 0; t < 10000; t++) {
        random_inst(r, op, in);
        if ((!tap || in->f.TT.in1.space != ISA_SPACE_NONE) && isa_encode(in, b, NULL) == ISA_OK)
            return;
    }
    fail_msg("no encodable %s", isa_ops[op].mnemonic);
}

/* in encoded from ref (rb) against isa_encode: the same status, message and
 * bytes; the fast round trip's count grows by `fast`. */
static void from_case(isa_plans_t *ps, const isa_inst_t *in, const isa_inst_t *ref,
                      const uint8_t rb[ISA_BUNDLE_BYTES], unsigned long fast, bool ok)
{
    uint8_t b1[ISA_BUNDLE_BYTES], b2[ISA_BUNDLE_BYTES];
    isa_err_t e1, e2;
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    unsigned long f0, f1, full;
    isa_plans_check_counts(ps, &f0, &full);
    isa_status_t s1 = isa_encode(in, b1, &e1);
    isa_status_t s2 = isa_encode_planned_from(ps, in, ref, rb, b2, &e2);
    isa_plans_check_counts(ps, &f1, &full);
    assert_same_err(s1, &e1, s2, &e2);
    if (s1 == ISA_OK)
        assert_memory_equal(b1, b2, ISA_BUNDLE_BYTES);
    assert_int_equal(f1 - f0, fast);
    assert_int_equal(s1 == ISA_OK, ok);
}

/* The delta encoder's operand checks after a change: a DMA descriptor's
 * new addresses and header values (its DAP operands have no check) encode
 * as from scratch; a TAP operand changed to a shape the decoder rejects
 * (nparts 0, partitions past 128, a dim beyond ndims) gives isa_encode's
 * message, and a register changed out of range too. */
static void test_planned_from_operands(void **state)
{
    (void)state;
    rng_t r = { 77 };
    isa_plans_t *ps = isa_plans_new();
    assert_non_null(ps);
    isa_inst_t ref, in;
    uint8_t rb[ISA_BUNDLE_BYTES];
    for (unsigned k = 0; k < 50; k++) {
        encodable(&r, ISA_OP_DMA_DIRECT2D, false, &ref, rb);
        in = ref;
        in.f.DDESC.dst.addr += 64 * (k + 1);
        in.f.DDESC.src.addr ^= 0x100u * k;
        in.sync.wait_val = ref.sync.wait_val + k;
        from_case(ps, &in, &ref, rb, 1, true);
        in.f.DDESC.src_reg = 64 + k;   /* not a register, not 255 */
        from_case(ps, &in, &ref, rb, 1, false);
    }
    for (unsigned k = 0; k < 50; k++) {
        encodable(&r, ISA_OP_TENSOR_TENSOR, true, &ref, rb);
        in = ref;
        in.f.TT.in1.addr ^= 4u * (k + 1);
        from_case(ps, &in, &ref, rb, 1, true);
        in = ref;
        in.f.TT.in1.nparts = 0;
        from_case(ps, &in, &ref, rb, 1, false);
        in = ref;
        in.f.TT.in1.start = 127;
        in.f.TT.in1.nparts = 2;
        from_case(ps, &in, &ref, rb, 1, false);
        in = ref;
        in.f.TT.in1.ndims = 0;
        in.f.TT.in1.count[0] = 1;
        from_case(ps, &in, &ref, rb, 1, false);
    }
    isa_plans_free(ps);
}

/* isa_stream_decode_planned against isa_stream_decode: streams of 1-12
 * bundles (the encoder's output for random instructions, some bytes then
 * flipped), every engine: the same status, message and decoded
 * instructions, with one set of plans shared by all streams. */
static void test_stream_planned(void **state)
{
    (void)state;
    rng_t r = { 4242 };
    isa_plans_t *ps = isa_plans_new();
    assert_non_null(ps);
    unsigned ok = 0, bad = 0;
    for (unsigned t = 0; t < 3000; t++) {
        uint8_t buf[12][ISA_BUNDLE_BYTES];
        size_t nb = 0;
        unsigned want = 1 + rnd(&r) % 6;
        for (unsigned q = 0; q < 40 && nb < want; q++) {
            isa_inst_t in;
            random_inst(&r, (isa_op_t)(rnd(&r) % ISA_OP_COUNT), &in);
            uint8_t two[2][ISA_BUNDLE_BYTES];
            unsigned n = 0;
            if (isa_encode_with_prefixes(&in, two, &n, NULL) != ISA_OK)
                continue;
            for (unsigned k = 0; k < n && nb < 12; k++)
                memcpy(buf[nb++], two[k], ISA_BUNDLE_BYTES);
        }
        if (t % 3 == 0 && nb) {   /* a flipped bit somewhere */
            unsigned at = rnd(&r) % (unsigned)(nb * ISA_BUNDLE_BYTES);
            buf[at / ISA_BUNDLE_BYTES][at % ISA_BUNDLE_BYTES] ^= (uint8_t)(1u << rnd(&r) % 8);
        }
        isa_engine_t eng = (isa_engine_t)(rnd(&r) % ISA_ENG_COUNT);
        isa_stream_t s1, s2;
        isa_err_t e1, e2;
        memset(&e1, 0, sizeof e1);
        memset(&e2, 0, sizeof e2);
        size_t len = nb * ISA_BUNDLE_BYTES;
        isa_status_t st1 = isa_stream_decode(&buf[0][0], len, eng, &s1, &e1);
        isa_status_t st2 = isa_stream_decode_planned(ps, &buf[0][0], len, eng, &s2, &e2);
        assert_same_err(st1, &e1, st2, &e2);
        if (st1 != ISA_OK) {
            bad++;
            continue;
        }
        ok++;
        assert_int_equal(s1.count, s2.count);
        assert_int_equal(s1.nbundles, s2.nbundles);
        assert_memory_equal(s1.pc_to_index, s2.pc_to_index, s1.nbundles * sizeof *s1.pc_to_index);
        for (size_t i = 0; i < s1.count; i++) {
            assert_memory_equal(&s1.insts[i].inst, &s2.insts[i].inst, sizeof s1.insts[i].inst);
            assert_int_equal(s1.insts[i].pc, s2.insts[i].pc);
            assert_int_equal(s1.insts[i].prefix_pc, s2.insts[i].prefix_pc);
            assert_int_equal(s1.insts[i].has_pred, s2.insts[i].has_pred);
        }
        isa_stream_free(&s1);
        isa_stream_free(&s2);
    }
    assert_true(ok > 100);
    assert_true(bad > 100);
    isa_plans_free(ps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planned_matches_encode),
        cmocka_unit_test(test_planned_mostly_zero),
        cmocka_unit_test(test_planned_from_operands),
        cmocka_unit_test(test_planned_injected),
        cmocka_unit_test(test_planned_from),
        cmocka_unit_test(test_stream_planned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
