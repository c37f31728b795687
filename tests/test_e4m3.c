/* NKI's two 8-bit e4m3 formats: the legacy IEEE-style float8_e4m3 (isa
 * dtype FP8E4M3IEEE, "fp8e4m3ieee": inf / NaN at exponent 1111, max 240,
 * overflow -> inf) next to OCP's float8_e4m3fn (FP8E4M3).  numeric.c's
 * conversions against a table made here from the bit fields (ldexp, not
 * numeric.c's integer code), the names in the isa table, the assembler /
 * disassembler round trip, the kernel format's dtype names and nc_matmul's
 * refusal to mix the two formats. */
#include "front_json_util.h"

#include "asm.h"
#include "dis.h"
#include "isa.h"
#include "numeric.h"

/* The value of code c of IEEE-style e4m3 (bias 7, subnormals, exponent 15
 * = inf (mantissa 0) or NaN), from its fields. */
static double ref_decode(unsigned c)
{
    unsigned s = c >> 7, e = c >> 3 & 15u, m = c & 7u;
    double v;
    if (e == 15)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, -9);            /* 0.m * 2^-6 */
    else
        v = ldexp((double)(8 + m), (int)e - 10); /* 1.m * 2^(e-7) */
    return s ? -v : v;
}

static void test_every_code_decodes(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        double want = ref_decode(c);
        float got = num_fp8e4m3ieee_to_f32((uint8_t)c);
        if (isnan(want)) {
            assert_true(isnan(got));
            continue;
        }
        if ((double)got != want || !signbit(got) != !signbit(want))
            fail_msg("code 0x%02X: got %g, want %g", c, (double)got, want);
        uint8_t v = (uint8_t)c;   /* the generic load agrees */
        assert_true(num_load_f32(&v, ISA_DT_FP8E4M3IEEE) == got);
    }
    assert_true(num_fp8e4m3ieee_to_f32(0x77) == 240.0f);
    assert_true(num_fp8e4m3ieee_to_f32(0x78) == INFINITY);
    assert_true(num_fp8e4m3ieee_to_f32(0xF8) == -INFINITY);
    /* the same codes are different values in e4m3fn */
    assert_true(num_fp8e4m3_to_f32(0x78) == 256.0f && num_fp8e4m3_to_f32(0x7E) == 448.0f);
}

/* Every finite code's value encodes to that code; every midpoint between
 * neighbouring non-negative codes goes to the even one, a hair either side
 * to the nearer one. */
static void test_encode_codes_and_ties(void **state)
{
    (void)state;
    for (unsigned c = 0; c < 256; c++) {
        double v = ref_decode(c);
        if (isfinite(v) && c != 0x80)
            assert_int_equal(num_f32_to_fp8e4m3ieee((float)v), c);
    }
    for (unsigned c = 0; c < 0x77; c++) {
        double lo = ref_decode(c), hi = ref_decode(c + 1), mid = (lo + hi) / 2;
        unsigned even = (c & 1u) ? c + 1 : c;
        assert_int_equal(num_f32_to_fp8e4m3ieee((float)mid), even);
        assert_int_equal(num_f32_to_fp8e4m3ieee(nextafterf((float)mid, 0.0f)), c);
        assert_int_equal(num_f32_to_fp8e4m3ieee(nextafterf((float)mid, INFINITY)), c + 1);
        assert_int_equal(num_f32_to_fp8e4m3ieee((float)-mid), even | 0x80u);
    }
}

static void test_overflow_inf_nan(void **state)
{
    (void)state;
    assert_int_equal(num_f32_to_fp8e4m3ieee(247.99f), 0x77);   /* below the tie: 240 */
    assert_int_equal(num_f32_to_fp8e4m3ieee(248.0f), 0x78);    /* tie, 240 is odd: up, inf */
    assert_int_equal(num_f32_to_fp8e4m3ieee(300.0f), 0x78);
    assert_int_equal(num_f32_to_fp8e4m3ieee(-1e30f), 0xF8);
    assert_int_equal(num_f32_to_fp8e4m3ieee(INFINITY), 0x78);
    assert_int_equal(num_f32_to_fp8e4m3ieee(-INFINITY), 0xF8);
    assert_int_equal(num_f32_to_fp8e4m3ieee(NAN) & 0x7Fu, 0x7C);
    assert_int_equal(num_f32_to_fp8e4m3ieee(0x1p-9f), 0x01);   /* smallest subnormal */
    assert_int_equal(num_f32_to_fp8e4m3ieee(0x1p-10f), 0x00);  /* tie -> 0 */
    assert_int_equal(num_f32_to_fp8e4m3ieee(3 * 0x1p-10f), 0x02);
    assert_int_equal(num_f32_to_fp8e4m3ieee(-0.0f), 0x80);
    assert_int_equal(num_f32_to_fp8e4m3ieee(1e-30f), 0x00);
    /* e4m3fn keeps its own rules */
    assert_int_equal(num_f32_to_fp8e4m3(300.0f), 0x79);
    assert_int_equal(num_f32_to_fp8e4m3(INFINITY), 0x7F);
    /* generic and array paths, and num_round_to */
    float in[4] = { 1.0f, 248.0f, -3.0f, 0x1p-9f }, back[4];
    uint8_t b[4], one;
    num_store_f32_array(b, ISA_DT_FP8E4M3IEEE, in, 4);
    assert_memory_equal(b, ((uint8_t[]){ 0x38, 0x78, 0xC4, 0x01 }), 4);
    num_load_f32_array(back, b, ISA_DT_FP8E4M3IEEE, 4);
    assert_true(back[0] == 1.0f && back[1] == INFINITY && back[2] == -3.0f && back[3] == 0x1p-9f);
    num_store_f32(&one, ISA_DT_FP8E4M3IEEE, 250.0f);
    assert_int_equal(one, 0x78);
    assert_true(num_round_to(241.0f, ISA_DT_FP8E4M3IEEE) == 240.0f);
    assert_true(num_round_to(250.0f, ISA_DT_FP8E4M3IEEE) == INFINITY);
}

static void test_isa_names_and_asm_round_trip(void **state)
{
    (void)state;
    assert_int_equal(ISA_DT_FP8E4M3, 3);   /* unchanged */
    assert_int_equal(ISA_DT_FP8E4M3IEEE, 11);
    assert_int_equal(isa_dtype_by_name("fp8e4m3ieee"), ISA_DT_FP8E4M3IEEE);
    assert_int_equal(isa_dtype_by_name("float8_e4m3"), ISA_DT_FP8E4M3IEEE);
    assert_int_equal(isa_dtype_by_name("float8_e4m3fn"), ISA_DT_FP8E4M3);
    assert_int_equal(isa_dtype_by_name("fp8e4m3"), ISA_DT_FP8E4M3);
    assert_string_equal(isa_dtype_name(ISA_DT_FP8E4M3IEEE), "fp8e4m3ieee");
    assert_string_equal(isa_dtype_numpy_name(ISA_DT_FP8E4M3IEEE), "float8_e4m3");
    assert_int_equal(isa_dtype_size(ISA_DT_FP8E4M3IEEE), 1);
    assert_true(isa_dtype_valid(ISA_DT_FP8E4M3IEEE) && isa_dtype_valid(ISA_DT_FP4E2M1X4) &&
                isa_dtype_valid(ISA_DT_FP8E8M0) && !isa_dtype_valid(16));
    assert_int_equal(ISA_DT_FP8E8M0, 15);   /* the last value of the 4-bit field */
    assert_int_equal(isa_dtype_by_name("float8_e8m0fnu"), ISA_DT_FP8E8M0);
    const char *line = "LdWeights src=sbuf[0:128]@0x0:fp8e4m3ieee<1x128> row_pos=0 col_pos=0 "
                       "row_size=128 col_size=128 perf=normal onezero=0";
    isa_inst_t in;
    isa_asm_diag_t diag;
    if (isa_parse_inst(line, &in, &diag))
        fail_msg("%s", diag.msg);
    assert_int_equal(in.f.LDW.src.dtype, ISA_DT_FP8E4M3IEEE);
    char buf[512];
    assert_true(isa_format_line(&in, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, ":fp8e4m3ieee<"));
    isa_inst_t again;
    if (isa_parse_inst(buf, &again, &diag))
        fail_msg("%s: %s", buf, diag.msg);
    assert_int_equal(again.f.LDW.src.dtype, ISA_DT_FP8E4M3IEEE);
}

/* The kernel format: float8_e4m3 is the IEEE-style format (no longer an
 * alias of e4m3fn), float8_e4m3fn OCP's. */
static void test_kernel_format_names(void **state)
{
    (void)state;
    tir_kernel_t k;
    parses(T("x", "[128, 4]", "float8_e4m3") T("y", "[128, 4]", "float8_e4m3fn")
           T("z", "[128, 4]", "nl.float8_e4m3") "{'op': 'memset', 'dst': 'x', 'value': 0}", &k);
    int seen = 0;
    for (int i = 0; i < k.ntensors; i++) {
        const char *n = k.tensors[i].name;
        unsigned dt = k.tensors[i].dtype;
        if (!strcmp(n, "x") || !strcmp(n, "z"))
            seen++, assert_int_equal(dt, ISA_DT_FP8E4M3IEEE);
        if (!strcmp(n, "y"))
            seen++, assert_int_equal(dt, ISA_DT_FP8E4M3);
    }
    assert_int_equal(seen, 3);
    tir_kernel_free(&k);
    fails_with(T("x", "[128, 4]", "float8_e4m3b11") "{'op': 'memset', 'dst': 'x', 'value': 0}","unknown dtype 'float8_e4m3b11'",
               "float8_e4m3fn float8_e4m3 float8_e5m2");
}

/* nc_matmul: legacy float8_e4m3 and OCP float8_e4m3fn cannot be mixed in
 * one matmul (either way round); each with itself or e5m2 is fine. */
static void test_matmul_refuses_the_mix(void **state)
{
    (void)state;
    fails_with(T("s", "[128, 128]", "float8_e4m3") T("m", "[128, 512]", "float8_e4m3fn")
               TP("d", "[128, 512]", "float32")
               "{'op': 'matmul', 'dst': 'd', 'stationary': 's', 'moving': 'm'}",
               "(matmul): field 'moving': dtype float8_e4m3fn with stationary float8_e4m3",
               "cannot be mixed in one matmul");
    fails_with(T("s", "[128, 128]", "float8_e4m3fn") T("m", "[128, 512]", "float8_e4m3")
               TP("d", "[128, 512]", "float32")
               "{'op': 'matmul', 'dst': 'd', 'stationary': 's', 'moving': 'm'}",
               "field 'moving': dtype float8_e4m3 with stationary float8_e4m3fn", NULL);
    const char *ok[][2] = { { "float8_e4m3", "float8_e4m3" }, { "float8_e4m3", "float8_e5m2" },
                            { "bfloat16", "float8_e4m3" } };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{'op': 'tile', 'name': 's', 'shape': [128, 128], 'dtype': '%s'},"
                 "{'op': 'tile', 'name': 'm', 'shape': [128, 512], 'dtype': '%s'},"
                 TP("d", "[128, 512]", "float32")
                 "{'op': 'matmul', 'dst': 'd', 'stationary': 's', 'moving': 'm'}",
                 ok[i][0], ok[i][1]);
        tir_kernel_t k;
        parses(body, &k);
        tir_kernel_free(&k);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_decodes),
        cmocka_unit_test(test_encode_codes_and_ties),
        cmocka_unit_test(test_overflow_inf_nan),
        cmocka_unit_test(test_isa_names_and_asm_round_trip),
        cmocka_unit_test(test_kernel_format_names),
        cmocka_unit_test(test_matmul_refuses_the_mix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
