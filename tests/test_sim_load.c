/* Start-up (load) paths of the simulator: the <Engine>.json sidecar scanner
 * must give exactly what cJSON gives (values, first-entry-wins, errors) on
 * every input, and handle the plain JSON the compiler writes itself; the
 * per-format decode plans of isa_stream_decode must agree with isa_decode
 * bundle by bundle; npy_read (header first, data straight into the array)
 * must give what parsing the whole file gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "asm.h"
#include "isa.h"
#include "npy.h"
#include "numeric.h"
#include "sidecar_texts.h"
#include "sim_int.h"
#include "xorshift.h"

/* ---- a small stream: Nop, ApExt + TensorCopy, Nop, Halt ----
 * 5 bundles, 4 instructions; pcs 1 and 2 both map to instruction 1. */
static isa_tap_t tap3(uint32_t addr)
{
    isa_tap_t t;
    memset(&t, 0, sizeof t);
    t.addr = addr;
    t.dtype = ISA_DT_FP32;
    t.space = ISA_SPACE_SBUF;
    t.nparts = 4;
    t.ndims = 3;
    t.step[0] = 1, t.count[0] = 8;
    t.step[1] = 8, t.count[1] = 2;
    t.step[2] = 16, t.count[2] = 2;
    return t;
}

static void make_engine(sim_engine_t *e, bool empty)
{
    memset(e, 0, sizeof *e);
    uint8_t buf[5][ISA_BUNDLE_BYTES];
    isa_err_t ie;
    isa_inst_t in;
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_NOP;
    assert_int_equal(isa_encode(&in, buf[0], &ie), ISA_OK);
    assert_int_equal(isa_encode(&in, buf[3], &ie), ISA_OK);
    in.op = ISA_OP_HALT;
    assert_int_equal(isa_encode(&in, buf[4], &ie), ISA_OK);
    memset(&in, 0, sizeof in);
    in.op = ISA_OP_TENSOR_COPY;
    in.f.COPY.in = tap3(0);
    in.f.COPY.out = tap3(256);
    unsigned n = 0;
    uint8_t two[2][ISA_BUNDLE_BYTES];
    assert_int_equal(isa_encode_with_prefixes(&in, two, &n, &ie), ISA_OK);
    assert_int_equal(n, 2);
    memcpy(buf[1], two, sizeof two);
    assert_int_equal(isa_stream_decode(&buf[0][0], empty ? 0 : sizeof buf, ISA_ENG_UNASSIGNED,
                                       &e->stream, &ie), ISA_OK);
    if (!empty) {
        assert_int_equal(e->stream.count, 4);
        assert_int_equal(e->stream.pc_to_index[2], 1);
    }
}

static void free_engine(sim_engine_t *e)
{
    sim_debug_free(e);
    isa_stream_free(&e->stream);
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Parse text (len bytes, NUL after them) both ways and require the same
 * outcome; returns whether the scanner handled it. */
static bool parse_both_len(const char *text, size_t len, bool empty_stream, int *rc_out)
{
    uint8_t *buf = malloc(len + 1);
    assert_non_null(buf);
    memcpy(buf, text, len);
    buf[len] = 0;
    sim_engine_t f, c;
    make_engine(&f, empty_stream);
    make_engine(&c, empty_stream);
    tpb_err_t ef = { { 0 } }, ec = { { 0 } };
    bool scanned = false, scanned_c = true;
    int rf = sim_sidecar_parse(&f, "x/DVE.json", buf, len, true, &scanned, &ef);
    int rcj = sim_sidecar_parse(&c, "x/DVE.json", buf, len, false, &scanned_c, &ec);
    assert_false(scanned_c);
    if (rf != rcj || (rf && strcmp(ef.msg, ec.msg)))
        fail_msg("text <%.*s>: scanner rc %d '%s', cJSON rc %d '%s'", (int)len, text, rf,
                 rf ? ef.msg : "", rcj, rcj ? ec.msg : "");
    if (!rf) {
        assert_true((f.debug == NULL) == (c.debug == NULL));
        for (size_t i = 0; f.debug && i < f.stream.count; i++)
            if (!same_str(f.debug[i].name, c.debug[i].name) ||
                !same_str(f.debug[i].src, c.debug[i].src) ||
                !same_str(f.debug[i].buf, c.debug[i].buf))
                fail_msg("text <%.*s>: entry %zu differs: scanner %s/%s/%s, cJSON %s/%s/%s",
                         (int)len, text, i, f.debug[i].name ? f.debug[i].name : "(null)",
                         f.debug[i].src ? f.debug[i].src : "(null)",
                         f.debug[i].buf ? f.debug[i].buf : "(null)",
                         c.debug[i].name ? c.debug[i].name : "(null)",
                         c.debug[i].src ? c.debug[i].src : "(null)",
                         c.debug[i].buf ? c.debug[i].buf : "(null)");
    }
    free_engine(&f);
    free_engine(&c);
    free(buf);
    if (rc_out)
        *rc_out = rf;
    return scanned;
}

static bool parse_both(const char *text, int *rc)
{
    return parse_both_len(text, strlen(text), false, rc);
}

/* what tpb compile writes (cJSON_Print layout) */
static const char *compiler_text =
    "{\n\t\"engine\":\t\"DVE\",\n\t\"core\":\t0,\n\t\"instructions\":\t5,\n\t\"queues\":\t[],\n"
    "\t\"opcodes\":\t[\"Nop\", \"TensorCopy\", \"Halt\"],\n\t\"debug\":\t[{\n"
    "\t\t\t\"pc\":\t0,\n\t\t\t\"name\":\t\"wait_1\",\n\t\t\t\"inst\":\t\"wait_1\",\n"
    "\t\t\t\"src\":\t\"body[0]\",\n\t\t\t\"op\":\t\"sync\",\n\t\t\t\"op_index\":\t1\n\t\t}, {\n"
    "\t\t\t\"pc\":\t2,\n\t\t\t\"name\":\t\"copy_2\",\n\t\t\t\"inst\":\t\"copy_2\",\n"
    "\t\t\t\"src\":\t\"body[1].body[0]\",\n\t\t\t\"op\":\t\"tensor_copy\",\n\t\t\t\"op_index\":\t2,\n"
    "\t\t\t\"buf\":\t\"t#1/3\"\n\t\t}, {\n"
    "\t\t\t\"pc\":\t1,\n\t\t\t\"name\":\t\"not_first\",\n\t\t\t\"src\":\t\"body[9]\"\n\t\t}, {\n"
    "\t\t\t\"pc\":\t3,\n\t\t\t\"name\":\t\"nop_3\",\n\t\t\t\"src\":\t\"body[1].body[0]\"\n\t\t}, {\n"
    "\t\t\t\"pc\":\t4,\n\t\t\t\"name\":\t\"halt\",\n\t\t\t\"src\":\t\"\"\n\t\t}]\n}";

static void test_compiler_layout_is_scanned(void **state)
{
    (void)state;
    int rc;
    assert_true(parse_both(compiler_text, &rc));
    assert_int_equal(rc, 0);
    /* and the values are the expected ones, not only equal to cJSON's */
    sim_engine_t e;
    make_engine(&e, false);
    tpb_err_t err;
    assert_int_equal(sim_sidecar_parse(&e, "p", (const uint8_t *)compiler_text,
                                       strlen(compiler_text), true, NULL, &err), 0);
    assert_string_equal(e.debug[0].name, "wait_1");
    assert_string_equal(e.debug[1].name, "copy_2"); /* pc 2 first; pc 1 later does not win */
    assert_string_equal(e.debug[1].src, "body[1].body[0]");
    assert_string_equal(e.debug[1].buf, "t#1/3");   /* rotating buffer */
    assert_null(e.debug[0].buf);
    assert_string_equal(e.debug[2].name, "nop_3");
    assert_string_equal(e.debug[2].src, "body[1].body[0]");
    assert_string_equal(e.debug[3].name, "halt");
    assert_string_equal(e.debug[3].src, "");
    free_engine(&e);
}

static void test_semantic_errors_match(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool scanned;
        const char *msg; /* substring of the error, or NULL = success */
    } cases[] = {
        { "{\"debug\": null}", true, "field debug must be an array" },
        { "{\"debug\": {}}", true, "field debug must be an array" },
        { "{\"debug\": 3, \"debug\": []}", true, "field debug must be an array" },
        { "{\"debug\": [], \"debug\": 3}", true, NULL },
        { "{\"debug\": [{\"name\": \"a\"}]}", true, "debug[0]: field pc missing" },
        { "{\"debug\": [{\"pc\": 0}, {\"pc\": \"1\"}]}", true, "debug[1]: field pc missing" },
        { "{\"debug\": [{\"pc\": -1}]}", true, "outside the stream (5 bundles)" },
        { "{\"debug\": [{\"pc\": 5}]}", true, "debug[0]: field pc missing or outside" },
        { "{\"debug\": [{\"pc\": 4.9, \"name\": \"x\"}]}", true, NULL },
        { "{\"debug\": [{\"pc\": 1e400}]}", true, "outside the stream" },
        { "{\"debug\": [{\"pc\": -0}, {\"pc\": 2E0}, {\"pc\": 0.5e1}]}", true, "debug[2]" },
        { "{\"debug\": [7, [1], \"s\", {\"pc\": 0}]}", true, "debug[0]: field pc missing" },
        { "{\"debug\": [{\"pc\": 0, \"pc\": 99, \"name\": 3, \"name\": \"n\"}]}", true, NULL },
        { "{\"debug\": [{\"pc\": 0}, {\"pc\": 9}], \"x\": [1, 2}", false, "invalid JSON" },
        { "[1, 2, {\"debug\": 5}]", true, NULL },
        { "\"just a string\"", true, NULL },
        { "{} trailing garbage is an error", false, "unexpected text after the JSON value" },
        { "{}  \n\t ", true, NULL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        bool scanned = parse_both(cases[i].text, &rc);
        if (scanned != cases[i].scanned)
            fail_msg("case %zu <%s>: scanned %d", i, cases[i].text, scanned);
        /* the message itself, from the scanner path */
        sim_engine_t e;
        make_engine(&e, false);
        tpb_err_t err = { { 0 } };
        int r = sim_sidecar_parse(&e, "d/PE.json", (const uint8_t *)cases[i].text,
                                  strlen(cases[i].text), true, NULL, &err);
        if (cases[i].msg) {
            assert_int_not_equal(r, 0);
            if (!strstr(err.msg, cases[i].msg) || strncmp(err.msg, "d/PE.json: ", 11))
                fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, cases[i].msg);
        } else {
            assert_int_equal(r, 0);
        }
        free_engine(&e);
    }
}

/* Texts the scanner leaves to cJSON: the outcome is still cJSON's. */
static void test_non_plain_json_goes_to_cjson(void **state)
{
    (void)state;
    static const char *texts[] = {
        "{\"debug\": [{\"pc\": 0, \"name\": \"a\\u0062c\", \"src\": \"x\\/y\"}]}",
        "{\"debug\": [{\"pc\": 0, \"name\": \"tab\\there\"}]}",
        "{\"debug\": [{\"pc\": 0, \"buf\": \"t\\u00232/4\"}]}",
        "{\"debug\": [{\"pc\": 0, \"na\\u006de\": \"escaped key\"}]}",
        "{\"debug\": [{\"pc\": 0, \"name\": \"\\ud800\"}]}",   /* lone surrogate */
        "{\"debug\": [{\"pc\": 0, \"name\": \"bad \\q escape\"}]}",
        "{\"debug\": [{\"pc\": 0, \"name\": \"raw\ttab\"}]}",  /* control char */
        "{\"debug\": [{\"pc\": 01}]}",
        "{\"debug\": [{\"pc\": 1.}]}",
        "{\"debug\": [{\"pc\": +1}]}",
        "{\"debug\": [{\"pc\": .5}]}",
        "{\"debug\": [{\"pc\": 1e}]}",
        "{\"debug\": [{\"pc\": 0-1}]}",
        "{\"debug\": [{\"pc\": 1}],}",
        "{\"debug\": [{\"pc\": 1},]}",
        "{\"debug\" [{\"pc\": 1}]}",
        "{\"debug\": [{\"pc\": 1}]",
        "{\"debug\": [{\"pc\": 1}",
        "{\"debug\": [{\"pc\": tru}]}",
        "{\"debug\": [{\"pc\": nulll}]}",
        "\xEF\xBB\xBF{\"debug\": [{\"pc\": 0, \"name\": \"bom\"}]}",
        "\f{\"debug\":\v[{\"pc\": 0, \"name\": \"odd whitespace\"}]}",
        "",
        "   ",
        "{",
        "{'debug': []}",
        "{\"debug\": [{\"pc\": 0, \"name\": \"x\"}]} ]]]",
        "{\"debug\": [{\"pc\": 0.00000000000000000000000000000000000000000000000000000000000000001}]}",
        "{\"debug\": [{\"pc\": 1000000000000000000000000000000000000000000000000000000000000000000000}]}",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        parse_both(texts[i], NULL);
    /* a NUL byte inside a string (cJSON cuts the string there) */
    static const char nul[] = "{\"debug\": [{\"pc\": 0, \"name\": \"ab\0cd\"}]}";
    assert_false(parse_both_len(nul, sizeof nul - 1, false, NULL));
}

static void test_nesting_depth(void **state)
{
    (void)state;
    /* 250 levels: scanned; 725: beyond the scanner (256), within cJSON
     * (1000); 1200: beyond cJSON too */
    static const int depths[] = { 250, 725, 1200 };
    for (size_t k = 0; k < sizeof depths / sizeof depths[0]; k++) {
        int depth = depths[k];
        size_t cap = (size_t)depth * 2 + 64;
        char *t = malloc(cap);
        size_t n = 0;
        n += (size_t)snprintf(t + n, cap - n, "{\"x\": ");
        for (int i = 0; i < depth; i++)
            t[n++] = '[';
        for (int i = 0; i < depth; i++)
            t[n++] = ']';
        n += (size_t)snprintf(t + n, cap - n, ", \"debug\": [{\"pc\": 0, \"name\": \"d\"}]}");
        int rc;
        bool scanned = parse_both_len(t, n, false, &rc);
        assert_int_equal(scanned, depth < 256);
        assert_int_equal(rc != 0, depth >= 1000);
        free(t);
    }
}

static void test_empty_stream_ignores_entries(void **state)
{
    (void)state;
    int rc;
    assert_true(parse_both_len("{\"debug\": [{\"pc\": 99}, 5]}", 26, true, &rc));
    assert_int_equal(rc, 0);
}

/* The scanner takes a string 8 bytes at a time: an escape or a control
 * byte at any position of a name of any length sends the text to cJSON
 * (same result either way); a plain name of that length stays scanned. */
static void test_string_escape_any_position(void **state)
{
    (void)state;
    static const char bad[] = { '\\', 0x01, 0x1f, '\n' };
    char text[128], name[40];
    for (unsigned n = 1; n <= 33; n++)
        for (unsigned at = 0; at <= n; at++)
            for (unsigned k = 0; k < sizeof bad; k++) {
                for (unsigned i = 0; i < n; i++)
                    name[i] = (char)('a' + (i * 7 + k) % 26);
                if (at < n)
                    name[at] = bad[k];
                if (at < n && bad[k] == '\\' && at + 1 < n)
                    name[at + 1] = 'n'; /* a valid escape for cJSON */
                int len = snprintf(text, sizeof text, "{\"debug\": [{\"pc\": 0, \"name\": \"%.*s\"}]}",
                                   (int)n, name);
                int rc;
                bool scanned = parse_both_len(text, (size_t)len, false, &rc);
                if (scanned != (at == n))
                    fail_msg("name of %u bytes, byte %u = 0x%02x: scanned %d", n, at,
                             (unsigned)(unsigned char)bad[k], scanned);
            }
}

/* The scanner finds a string's end 8 bytes at a time: a name of any length
 * with bytes 0x80..0xff anywhere, followed at any distance within the same
 * word by a quote, a backslash or a control byte in the next member (which
 * then sends the text to cJSON), reads the same either way. */
static void test_string_end_in_word(void **state)
{
    (void)state;
    static const char *const next[] = { "\"src\": \"s\"", "\"src\": \"\\n\"",
                                        "\"src\": \"\x01\"", "\"src\":\"\xc3\xa9\"" };
    char text[160], name[40];
    for (unsigned n = 0; n <= 19; n++)
        for (unsigned at = 0; at <= n; at++)
            for (unsigned k = 0; k < sizeof next / sizeof next[0]; k++) {
                for (unsigned i = 0; i < n; i++)
                    name[i] = (char)('a' + i % 26);
                if (at < n)
                    name[at] = (char)(0x80 + (at * 37 + k) % 128);
                int len = snprintf(text, sizeof text, "{\"debug\": [{\"pc\": 0, \"name\": \"%.*s\",%s}]}",
                                   (int)n, name, next[k]);
                int rc;
                bool scanned = parse_both_len(text, (size_t)len, false, &rc);
                assert_int_equal(rc, 0);
                if (scanned != (k == 0 || k == 3))
                    fail_msg("name of %u bytes, high byte at %u, next %u: scanned %d", n, at, k,
                             scanned);
            }
}

/* Random edits of the compiler's text: both paths agree on each. */
static void test_mutations_agree(void **state)
{
    (void)state;
    static const char alphabet[] = "{}[]:,\" \t\n\\u0123456789.-+eEtrufalsn\x01\x7f\xc3\xa9\0";
    uint64_t x = 0x243F6A8885A308D3ull;
    size_t base = strlen(compiler_text);
    char *t = malloc(base + 16);
    unsigned scanned = 0, n = 3000;
    for (unsigned it = 0; it < n; it++) {
        memcpy(t, compiler_text, base);
        size_t len = base;
        unsigned edits = 1 + (unsigned)(x % 3);
        for (unsigned k = 0; k < edits; k++) {
            xorshift64(&x);
            size_t pos = (size_t)(x >> 8) % len;
            char c = alphabet[(x >> 40) % (sizeof alphabet - 1)];
            switch ((x >> 60) % 3) {
            case 0: t[pos] = c; break;                                    /* replace */
            case 1: memmove(t + pos, t + pos + 1, len - pos - 1); len--; break; /* delete */
            default: memmove(t + pos + 1, t + pos, len - pos); t[pos] = c; len++; break;
            }
        }
        scanned += parse_both_len(t, len, false, NULL);
    }
    free(t);
    /* both branches were exercised */
    assert_true(scanned > n / 10);
    assert_true(scanned < n);
}

/* ---- decode plans: stream decode == bundle-by-bundle decode ---- */

/* The golden encodings, assembled: one bundle of each kind the tests know. */
static uint8_t *corpus_bundles(size_t *nb)
{
    static const char *files[] = { "act", "control", "dma", "matmul", "pool", "prefix", "vector" };
    uint8_t *all = NULL;
    size_t len = 0;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/encodings/%s.s", TPB_SOURCE_DIR, files[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static char text[1 << 16];
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        isa_asm_opts_t o = { ISA_ENG_UNASSIGNED };
        isa_asm_result_t *r = calloc(1, sizeof *r);
        assert_non_null(r);
        if (isa_assemble(text, n, &o, r) != 0)
            fail_msg("%s: %s", path, r->ndiags ? r->diags[0].msg : "?");
        all = realloc(all, len + r->len);
        assert_non_null(all);
        memcpy(all + len, r->bytes, r->len);
        len += r->len;
        isa_asm_result_free(r);
        free(r);
    }
    *nb = len / ISA_BUNDLE_BYTES;
    return all;
}

/* Bits owned by some field of the header or the format, straight from the
 * field table one bit at a time (independent of the decoder's masks). */
static bool has_reserved_bit(const uint8_t *b, isa_format_t fmt)
{
    bool owned[ISA_BUNDLE_BYTES * 8] = { false };
    for (unsigned i = 0; i < 16; i++)
        owned[i] = true; /* opcode and header bytes */
    const isa_fmtinfo_t *parts[2] = { &isa_formats[ISA_FMT_HDR], &isa_formats[fmt] };
    for (int k = 0; k < 2; k++)
        for (unsigned i = 0; i < parts[k]->nfields; i++)
            for (unsigned w = 0; w < parts[k]->fields[i].width; w++)
                owned[parts[k]->fields[i].bitpos + w] = true;
    for (unsigned bit = 0; bit < ISA_BUNDLE_BYTES * 8; bit++)
        if (!owned[bit] && (b[bit / 8] >> (bit % 8) & 1))
            return true;
    return false;
}

static bool prefix_error(const isa_err_t *e)
{
    return e->status == ISA_E_PREFIX || e->status == ISA_E_ENGINE ||
           (e->field && (!strcmp(e->field, "ApExt") || !strcmp(e->field, "ndims")));
}

static void test_stream_decode_matches_isa_decode(void **state)
{
    (void)state;
    size_t nc;
    uint8_t *corpus = corpus_bundles(&nc);
    assert_true(nc > 40);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    unsigned streams_ok = 0, long_ok = 0, reserved_seen = 0;
    /* up to 8 bundles: streams of more than 4 cache their plans */
    for (unsigned it = 0; it < 20000; it++) {
        uint8_t buf[8 * ISA_BUNDLE_BYTES];
        xorshift64(&x);
        unsigned nb = 1 + (unsigned)(x % 8);
        bool clean = (x >> 32) % 2; /* half the streams unmutated */
        for (unsigned k = 0; k < nb; k++) {
            xorshift64(&x);
            memcpy(buf + k * ISA_BUNDLE_BYTES, corpus + (x >> 8) % nc * ISA_BUNDLE_BYTES,
                   ISA_BUNDLE_BYTES);
            for (unsigned f = clean ? 0 : (unsigned)(x >> 60) % 4; f > 0; f--) {
                xorshift64(&x);
                unsigned bit = 16 + (unsigned)(x >> 20) % (ISA_BUNDLE_BYTES * 8 - 16);
                buf[k * ISA_BUNDLE_BYTES + bit / 8] ^= (uint8_t)(1u << (bit % 8));
            }
        }
        /* each bundle alone */
        isa_inst_t one[8];
        isa_err_t e1[8];
        isa_status_t s1[8];
        for (unsigned k = 0; k < nb; k++) {
            const uint8_t *b = buf + k * ISA_BUNDLE_BYTES;
            s1[k] = isa_decode(b, k * ISA_BUNDLE_BYTES, &one[k], &e1[k]);
            const isa_opinfo_t *oi = isa_op_by_l2(b[0]);
            if (oi && has_reserved_bit(b, oi->format)) {
                assert_int_equal(s1[k], ISA_E_RESERVED);
                reserved_seen++;
            } else if (oi) {
                assert_int_not_equal(s1[k], ISA_E_RESERVED);
            }
        }
        /* the whole stream */
        isa_stream_t st;
        isa_err_t es;
        isa_status_t ss = isa_stream_decode(buf, nb * ISA_BUNDLE_BYTES, ISA_ENG_UNASSIGNED, &st, &es);
        if (ss == ISA_OK) {
            streams_ok++;
            long_ok += nb > 4;
            for (unsigned k = 0; k < nb; k++)
                assert_int_equal(s1[k], ISA_OK);
            for (size_t i = 0; i < st.count; i++) {
                const isa_decoded_t *d = &st.insts[i];
                assert_int_equal(st.pc_to_index[d->pc], i);
                if (d->prefix_pc == d->pc)
                    assert_memory_equal(&d->inst, &one[d->pc], sizeof d->inst);
            }
            isa_stream_free(&st);
            continue;
        }
        /* a failure: bundles before it decode alone; a non-prefix error is
         * the bundle's own error, word for word */
        unsigned at = (unsigned)(es.offset / ISA_BUNDLE_BYTES);
        assert_true(at < nb);
        for (unsigned k = 0; k < at; k++)
            assert_int_equal(s1[k], ISA_OK);
        if (!prefix_error(&es)) {
            assert_int_equal(s1[at], ss);
            assert_string_equal(e1[at].msg, es.msg);
        }
    }
    /* both outcomes were exercised */
    assert_true(streams_ok > 1000);
    assert_true(long_ok > 100);
    assert_true(reserved_seen > 1000);
    free(corpus);
}

/* ---- npy_read (header first, elements straight into the array) gives
 * what parsing the whole file gives ---- */

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

/* A .npy of `version` with header dict text `dict` padded to `pad` extra
 * spaces, followed by `nbytes` of data bytes 0, 1, 2, ... */
static size_t make_npy(uint8_t *out, unsigned version, const char *dict, size_t pad, size_t nbytes)
{
    size_t hs = version == 1 ? 10 : 12, dl = strlen(dict);
    size_t hlen = dl + pad + 1;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (uint8_t)version;
    out[7] = 0;
    for (size_t k = 0; k < hs - 8; k++)
        out[8 + k] = (uint8_t)(hlen >> (8 * k));
    memcpy(out + hs, dict, dl);
    memset(out + hs + dl, ' ', pad);
    out[hs + hlen - 1] = '\n';
    for (size_t i = 0; i < nbytes; i++)
        out[hs + hlen + i] = (uint8_t)(i * 7 + 1);
    return hs + hlen + nbytes;
}

static void test_npy_read_matches_parse(void **state)
{
    (void)state;
    static const struct {
        unsigned version;
        const char *dict;
        size_t pad, nbytes;
    } cases[] = {
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }", 4, 60 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }", 4, 64 },   /* extra */
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 5), }", 4, 59 },   /* short */
        { 2, "{'descr': '<i2', 'fortran_order': False, 'shape': (7,), }", 9, 14 },
        { 3, "{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 0, 1 },
        { 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 3, 32 },
        { 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 3, 16 },
        { 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", 3, 16 },
        { 1, "{'descr': '<f4', 'shape': (2, 2), }", 3, 16 },
        { 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", 3, 16 },
        { 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }", 6000, 64 }, /* long header */
        { 1, "{'descr': '<u4', 'fortran_order': False, 'shape': (0, 9), }", 1, 0 },
    };
    char path[512];
    snprintf(path, sizeof path, "%s/test_sim_load_%ld.npy", TPB_BINARY_DIR, (long)getpid());
    uint8_t *buf = malloc(16384);
    assert_non_null(buf);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] + 3; i++) {
        size_t n;
        if (i < sizeof cases / sizeof cases[0]) {
            n = make_npy(buf, cases[i].version, cases[i].dict, cases[i].pad, cases[i].nbytes);
        } else { /* not .npy, header past the end, tiny file */
            static const char *raw[] = { "PK\3\4 not numpy at all", "\x93NUMPY\1\0\xff\x7f{}", "\x93NU" };
            n = strlen(raw[i - sizeof cases / sizeof cases[0]]);
            memcpy(buf, raw[i - sizeof cases / sizeof cases[0]], n);
        }
        write_bytes(path, buf, n);
        npy_array_t a, b;
        tpb_err_t ea = { { 0 } }, eb = { { 0 } };
        int ra = npy_read(path, &a, &ea);
        int rb = npy_parse(buf, n, path, &b, &eb);
        if (ra != rb || (ra && strcmp(ea.msg, eb.msg)))
            fail_msg("case %zu: npy_read %d '%s', npy_parse %d '%s'", i, ra, ra ? ea.msg : "", rb,
                     rb ? eb.msg : "");
        if (!ra) {
            /* npy_read_into: the same array read into a caller's buffer
             * when it is what the caller wants, else exactly npy_read */
            npy_array_t c, want = b;
            uint8_t *dst = malloc(b.count * isa_dtype_size(b.dtype) + 1);
            assert_non_null(dst);
            tpb_err_t ec = { { 0 } };
            assert_int_equal(npy_read_into(path, &want, dst, &c, &ec), 0);
            assert_int_equal(c.count, b.count);
            assert_memory_equal(c.shape, b.shape, sizeof c.shape);
            assert_int_equal(c.data == NULL, !b.converted_from_f64);
            assert_memory_equal(c.data ? c.data : dst, b.data, b.count * isa_dtype_size(b.dtype));
            npy_free(&c);
            want.shape[0] = b.ndim ? b.shape[0] + 1 : 0;
            want.ndim = b.ndim ? b.ndim : 1;
            memset(dst, 0xA5, 1);
            assert_int_equal(npy_read_into(path, &want, dst, &c, &ec), 0);
            assert_non_null(c.data); /* not the wanted shape: a buffer of its own */
            assert_memory_equal(c.data, b.data, b.count * isa_dtype_size(b.dtype));
            assert_int_equal(dst[0], 0xA5);
            npy_free(&c);
            free(dst);
            assert_int_equal(a.dtype, b.dtype);
            assert_int_equal(a.ndim, b.ndim);
            assert_int_equal(a.count, b.count);
            assert_int_equal(a.converted_from_f64, b.converted_from_f64);
            assert_memory_equal(a.shape, b.shape, sizeof a.shape);
            assert_memory_equal(a.data, b.data, a.count * isa_dtype_size(a.dtype));
            npy_free(&a);
            npy_free(&b);
        }
    }
    remove(path);
    free(buf);
}

/* npy_read_into of a float32 file for a bf16/fp16/fp8 destination: the
 * file is converted into dst chunk by chunk (no buffer of its own), giving
 * exactly num_store_f32_array of the whole array -- rounding ties, NaN,
 * inf, subnormals and a length that is no multiple of the chunk.  A
 * truncated file falls back to npy_read's error. */
static void test_npy_read_into_converts(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/test_sim_load_cv_%ld.npy", TPB_BINARY_DIR, (long)getpid());
    const int64_t shape[2] = { 3, 13001 }; /* 39003 floats: 2 chunks and a tail */
    npy_array_t f;
    tpb_err_t err = { { 0 } };
    assert_int_equal(npy_alloc(&f, ISA_DT_FP32, 2, shape, &err), 0);
    uint32_t x = 12345;
    for (size_t i = 0; i < f.count; i++) {
        x = x * 1664525u + 1013904223u;
        uint32_t u = x;
        if (i % 7 == 0)
            u = (u & 0xFFFF0000u) | 0x8000u; /* bf16 tie */
        if (i % 101 == 0)
            u = 0x7FC01234u; /* NaN with a payload */
        if (i % 103 == 0)
            u = 0xFF800000u; /* -inf */
        if (i % 107 == 0)
            u &= 0x807FFFFFu; /* subnormal */
        memcpy((uint8_t *)f.data + 4 * i, &u, 4);
    }
    assert_int_equal(npy_write(path, &f, &err), 0);
    const unsigned dts[] = { ISA_DT_BF16, ISA_DT_FP16, ISA_DT_FP8E4M3, ISA_DT_FP8E5M2 };
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
        size_t bytes = f.count * isa_dtype_size(dts[d]);
        uint8_t *want_bytes = malloc(bytes), *dst = malloc(bytes);
        assert_true(want_bytes && dst);
        num_store_f32_array(want_bytes, dts[d], f.data, f.count);
        npy_array_t want = { .dtype = dts[d], .ndim = 2, .shape = { 3, 13001 } }, c;
        assert_int_equal(npy_read_into(path, &want, dst, &c, &err), 0);
        assert_null(c.data);
        assert_int_equal(c.dtype, ISA_DT_FP32);
        assert_int_equal(c.count, f.count);
        assert_memory_equal(dst, want_bytes, bytes);
        free(want_bytes);
        free(dst);
    }
    /* truncated data: npy_read's message, not a partial conversion */
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(ftruncate(fileno(fp), 1000), 0);
    fclose(fp);
    uint8_t small[40000];
    npy_array_t want = { .dtype = ISA_DT_BF16, .ndim = 2, .shape = { 3, 13001 } }, c, r;
    tpb_err_t e1 = { { 0 } }, e2 = { { 0 } };
    int r1 = npy_read_into(path, &want, small, &c, &e1), r2 = npy_read(path, &r, &e2);
    assert_int_not_equal(r1, 0);
    assert_int_equal(r1, r2);
    assert_string_equal(e1.msg, e2.msg);
    remove(path);
    npy_free(&f);
}

/* A .npy file of NumPy void elements (np.save of an ml_dtypes /
 * tpbsim_dtypes array): descr, then n raw elements of size es. */
static void write_void_npy(const char *path, const char *descr, const uint8_t *data, size_t n,
                           size_t es)
{
    char hdr[128];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                       descr, n);
    while ((10 + len + 1) % 64)
        hdr[len++] = ' ';
    hdr[len++] = '\n';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint8_t pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)len, (uint8_t)(len >> 8) };
    assert_int_equal(fwrite(pre, 1, 10, f), 10);
    assert_int_equal(fwrite(hdr, 1, (size_t)len, f), (size_t)len);
    assert_int_equal(fwrite(data, es, n, f), n);
    fclose(f);
}

/* '<V2' is bfloat16 bits wherever it is read; '|V1' takes the fp8 dtype of
 * the tensor it is read into and is refused elsewhere, naming why. */
static void test_npy_void_files(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/test_sim_load_v_%ld.npy", TPB_BINARY_DIR, (long)getpid());
    const uint8_t bits[10] = { 0xC0, 0x3F, 0x80, 0xBF, 0xC0, 0x7F, 0x80, 0x7F, 0x01, 0x00 };
    tpb_err_t err = { { 0 } };
    npy_array_t a, c;
    write_void_npy(path, "<V2", bits, 5, 2);
    assert_int_equal(npy_read(path, &a, &err), 0);
    assert_int_equal(a.dtype, ISA_DT_BF16);
    assert_int_equal(a.count, 5);
    assert_memory_equal(a.data, bits, 10);
    assert_true(num_load_f32(a.data, ISA_DT_BF16) == 1.5f);
    npy_free(&a);
    uint8_t dst[10] = { 0 };
    npy_array_t want = { .dtype = ISA_DT_BF16, .ndim = 1, .shape = { 5 } };
    assert_int_equal(npy_read_into(path, &want, dst, &c, &err), 0);
    assert_null(c.data);
    assert_memory_equal(dst, bits, 10);

    write_void_npy(path, "|V1", bits, 10, 1);
    assert_int_not_equal(npy_read(path, &a, &err), 0);
    assert_non_null(strstr(err.msg, "field 'descr': '|V1' is raw 1-byte values"));
    for (unsigned dt = ISA_DT_FP8E4M3; ; dt = ISA_DT_FP8E5M2) {
        memset(dst, 0, sizeof dst);
        npy_array_t w8 = { .dtype = dt, .ndim = 1, .shape = { 10 } };
        assert_int_equal(npy_read_into(path, &w8, dst, &c, &err), 0);
        assert_null(c.data);
        assert_memory_equal(dst, bits, 10);
        if (dt == ISA_DT_FP8E5M2)
            break;
    }
    remove(path);
}

/* A compact sidecar (docs/artifacts.md "Compact sidecars"): both parsers
 * fill in what the entries leave out; a "debug_form" after "debug" sends
 * the scanner to cJSON. */
static void expect_debug(const sim_debug_t *d, const char *name, const char *src, const char *buf)
{
    assert_true(same_str(d->name, name) && same_str(d->src, src) && same_str(d->buf, buf));
}

static void test_compact_form(void **state)
{
    (void)state;
    const char *texts[] = { SIDECAR_COMPACT_TEXT, SIDECAR_LATE_TEXT, SIDECAR_FULL_TEXT };
    const bool scanned_want[] = { true, false, true };
    for (int i = 0; i < 3; i++)
        for (int fast = 0; fast < 2; fast++) {
            sim_engine_t e;
            make_engine(&e, false);
            tpb_err_t err = { { 0 } };
            bool scanned = false;
            assert_int_equal(sim_sidecar_parse(&e, "x/DVE.json", (const uint8_t *)texts[i],
                                               strlen(texts[i]), fast, &scanned, &err), 0);
            assert_int_equal(scanned, fast && scanned_want[i]);
            assert_non_null(e.debug);
            expect_debug(&e.debug[0], "wait_1", "body[0]", NULL);
            expect_debug(&e.debug[1], "copy_2", "body[1].body[0]", "t#1/3");
            expect_debug(&e.debug[2], "copy_2", "body[1].body[0]", "t#1/3");
            expect_debug(&e.debug[3], "halt", "", NULL);
            free_engine(&e);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compiler_layout_is_scanned),
        cmocka_unit_test(test_semantic_errors_match),
        cmocka_unit_test(test_non_plain_json_goes_to_cjson),
        cmocka_unit_test(test_nesting_depth),
        cmocka_unit_test(test_empty_stream_ignores_entries),
        cmocka_unit_test(test_mutations_agree),
        cmocka_unit_test(test_string_escape_any_position),
        cmocka_unit_test(test_string_end_in_word),
        cmocka_unit_test(test_stream_decode_matches_isa_decode),
        cmocka_unit_test(test_npy_read_matches_parse),
        cmocka_unit_test(test_npy_read_into_converts),
        cmocka_unit_test(test_npy_void_files),
        cmocka_unit_test(test_compact_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
