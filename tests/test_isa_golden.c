/* Golden encodings (tests/encodings/<family>.s), LLVM-MC style:
 *  - <family>.s: every instruction line is followed by `# encoding: [...]`,
 *    its bytes computed by an independent encoder (mkgolden.py) from the
 *    table.  Assembling the file gives exactly those bytes; disassembling
 *    the bytes gives exactly the lines back.  Together the files cover
 *    every opcode.
 *  - invalid-asm.s: lines followed by `# error: <col>: <message>` must be
 *    rejected by the assembler at that line and column.
 *  - invalid-bundles.s: `.bundle` lines followed by `# invalid: <message>`
 *    must be flagged by the disassembler (and printed back as data). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <cmocka.h>

#include "asm.h"
#include "dis.h"
#include "isa.h"

#define ENC_DIR TPB_SOURCE_DIR "/tests/encodings"
#define MAX_LINES 2048

typedef struct {
    char *text;        /* whole file, lines NUL-terminated in place */
    char *lines[MAX_LINES];
    unsigned nlines;
} src_t;

static void load(const char *path, src_t *s)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s->text = malloc((size_t)n + 1);
    assert_non_null(s->text);
    assert_int_equal(fread(s->text, 1, (size_t)n, f), (size_t)n);
    s->text[n] = '\0';
    fclose(f);
    s->nlines = 0;
    for (char *p = s->text; *p && s->nlines < MAX_LINES;) {
        s->lines[s->nlines++] = p;
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        *nl = '\0';
        p = nl + 1;
    }
}

/* The source text again (lines joined), for the assembler. */
static char *join(const src_t *s, size_t *len)
{
    size_t n = 0;
    for (unsigned i = 0; i < s->nlines; i++)
        n += strlen(s->lines[i]) + 1;
    char *t = malloc(n + 1), *p = t;
    assert_non_null(t);
    for (unsigned i = 0; i < s->nlines; i++) {
        size_t k = strlen(s->lines[i]);
        memcpy(p, s->lines[i], k);
        p[k] = '\n';
        p += k + 1;
    }
    *p = '\0';
    *len = n;
    return t;
}

static bool is_code(const char *l)
{
    while (*l == ' ' || *l == '\t')
        l++;
    return *l && *l != '#' && *l != ';';
}

static size_t parse_encoding(const char *l, uint8_t *out, size_t cap)
{
    const char *p = strstr(l, "# encoding: [");
    if (!p)
        return 0;
    p += strlen("# encoding: [");
    size_t n = 0;
    while (*p && *p != ']') {
        char *e;
        unsigned long v = strtoul(p, &e, 16);
        assert_true(e != p && v <= 0xFF && n < cap);
        out[n++] = (uint8_t)v;
        p = e;
        if (*p == ',')
            p++;
    }
    return n;
}

typedef struct {
    unsigned line;       /* 1-based */
    const char *text;
    size_t off, len;     /* its bytes in the expected stream */
} golden_t;

static void check_valid_file(const char *path, bool seen[ISA_OP_COUNT])
{
    src_t s;
    load(path, &s);
    static golden_t g[MAX_LINES];
    static uint8_t want[MAX_LINES * 2 * ISA_BUNDLE_BYTES];
    unsigned ng = 0;
    size_t wlen = 0;
    for (unsigned i = 0; i < s.nlines; i++) {
        if (!is_code(s.lines[i]))
            continue;
        if (i + 1 >= s.nlines || !strstr(s.lines[i + 1], "# encoding: [")) {
            print_error("%s:%u: instruction without an encoding line\n", path, i + 1);
            fail();
        }
        size_t n = parse_encoding(s.lines[i + 1], want + wlen, sizeof want - wlen);
        assert_true(n == ISA_BUNDLE_BYTES || n == 2 * ISA_BUNDLE_BYTES);
        g[ng++] = (golden_t){ i + 1, s.lines[i], wlen, n };
        wlen += n;
        char mn[64];
        sscanf(s.lines[i], "%63s", mn);
        const isa_opinfo_t *oi = isa_op_by_mnemonic(mn);
        assert_non_null(oi);
        seen[oi->op] = true;
    }
    assert_true(ng > 0);

    /* assemble the whole file: exactly the golden bytes */
    size_t slen;
    char *src = join(&s, &slen);
    isa_asm_result_t res;
    if (isa_assemble(src, slen, NULL, &res) != 0) {
        print_error("%s:%u:%u: %s\n", path, res.diags[0].line, res.diags[0].col, res.diags[0].msg);
        fail();
    }
    for (unsigned k = 0; k < ng; k++) {
        if (g[k].off + g[k].len > res.len ||
            memcmp(res.bytes + g[k].off, want + g[k].off, g[k].len) != 0) {
            print_error("%s:%u: assembled bytes differ from the golden encoding\n  %s\n", path,
                        g[k].line, g[k].text);
            fail();
        }
    }
    assert_int_equal(res.len, wlen);
    isa_asm_result_free(&res);
    free(src);

    /* disassemble the golden bytes: exactly the lines (an ApExt the
     * assembler added shows up as its own line in front) */
    isa_dis_opts_t o = { .canonical = true };
    isa_text_t t = { 0 };
    isa_dis_report_t rep;
    assert_int_equal(isa_disassemble(want, wlen, &o, &t, &rep), 0);
    assert_int_equal(rep.ninvalid, 0);
    char *p = t.s;
    for (unsigned k = 0; k < ng; k++) {
        if (g[k].len == 2 * ISA_BUNDLE_BYTES) {
            assert_memory_equal(p, "ApExt ", 6);
            p = strchr(p, '\n') + 1;
        }
        char *nl = strchr(p, '\n');
        assert_non_null(nl);
        *nl = '\0';
        if (strcmp(p, g[k].text) != 0) {
            print_error("%s:%u: disassembly differs\n  want: %s\n  got:  %s\n", path, g[k].line,
                        g[k].text, p);
            fail();
        }
        p = nl + 1;
    }
    assert_int_equal(*p, '\0');
    isa_text_free(&t);
    free(s.text);
}

static bool is_valid_family_file(const char *name)
{
    size_t n = strlen(name);
    return n > 2 && strcmp(name + n - 2, ".s") == 0 && strncmp(name, "invalid-", 8) != 0;
}

static void test_golden_encodings_cover_every_opcode(void **state)
{
    (void)state;
    bool seen[ISA_OP_COUNT] = { false };
    DIR *d = opendir(ENC_DIR);
    assert_non_null(d);
    struct dirent *e;
    unsigned nfiles = 0;
    while ((e = readdir(d))) {
        if (!is_valid_family_file(e->d_name))
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", ENC_DIR, e->d_name);
        check_valid_file(path, seen);
        nfiles++;
    }
    closedir(d);
    assert_true(nfiles >= 7);
    for (unsigned i = 0; i < ISA_OP_COUNT; i++)
        if (!seen[i]) {
            print_error("opcode %s has no golden encoding in tests/encodings\n", isa_ops[i].mnemonic);
            fail();
        }
}

/* `# error: <col>: <message>` under each bad line of invalid-asm.s */
static void test_invalid_assembly(void **state)
{
    (void)state;
    src_t s;
    load(ENC_DIR "/invalid-asm.s", &s);
    size_t slen;
    char *src = join(&s, &slen);
    isa_asm_result_t res;
    assert_int_equal(isa_assemble(src, slen, NULL, &res), -1);
    unsigned nexp = 0;
    for (unsigned i = 1; i < s.nlines; i++) {
        unsigned col;
        int pos = 0;
        if (sscanf(s.lines[i], "# error: %u: %n", &col, &pos) != 1 || !pos)
            continue;
        const char *want = s.lines[i] + pos;
        unsigned line = i; /* the line above, 1-based */
        nexp++;
        bool found = false;
        for (unsigned k = 0; k < res.ndiags && !found; k++)
            found = res.diags[k].line == line && res.diags[k].col == col && strstr(res.diags[k].msg, want);
        if (!found) {
            print_error("invalid-asm.s:%u: expected error at %u:%u containing \"%s\"; got:\n", line, line,
                        col, want);
            for (unsigned k = 0; k < res.ndiags; k++)
                if (res.diags[k].line == line)
                    print_error("  %u:%u: %s\n", res.diags[k].line, res.diags[k].col, res.diags[k].msg);
            fail();
        }
    }
    assert_true(nexp >= 40);
    if (res.nerrors != nexp) {
        for (unsigned k = 0; k < res.ndiags; k++)
            print_error("  %u:%u: %s\n", res.diags[k].line, res.diags[k].col, res.diags[k].msg);
        print_error("%u errors, %u expected\n", res.nerrors, nexp);
        fail();
    }
    isa_asm_result_free(&res);
    free(src);
    free(s.text);
}

/* `# invalid: <message>` under each .bundle line of invalid-bundles.s */
static void test_invalid_bundles(void **state)
{
    (void)state;
    src_t s;
    load(ENC_DIR "/invalid-bundles.s", &s);
    unsigned n = 0;
    for (unsigned i = 0; i + 1 < s.nlines; i++) {
        if (strncmp(s.lines[i], ".bundle", 7) != 0)
            continue;
        const char *tag = "# invalid: ";
        assert_memory_equal(s.lines[i + 1], tag, strlen(tag));
        const char *want = s.lines[i + 1] + strlen(tag);
        isa_asm_result_t res;
        assert_int_equal(isa_assemble(s.lines[i], strlen(s.lines[i]), NULL, &res), 0);
        assert_int_equal(res.len, ISA_BUNDLE_BYTES);
        isa_dis_opts_t o = { .canonical = true };
        isa_text_t t = { 0 };
        isa_dis_report_t rep;
        assert_int_equal(isa_disassemble(res.bytes, res.len, &o, &t, &rep), 0);
        if (rep.ninvalid != 1 || !strstr(rep.first_error, want)) {
            print_error("invalid-bundles.s:%u: want \"%s\", got \"%s\"\n", i + 1, want, rep.first_error);
            fail();
        }
        /* printed back as data with the reason; that text re-assembles */
        assert_non_null(strstr(t.s, ".bundle "));
        assert_non_null(strstr(t.s, want));
        isa_asm_result_t again;
        assert_int_equal(isa_assemble(t.s, t.len, NULL, &again), 0);
        assert_memory_equal(again.bytes, res.bytes, ISA_BUNDLE_BYTES);
        isa_asm_result_free(&again);
        isa_text_free(&t);
        isa_asm_result_free(&res);
        n++;
    }
    assert_true(n >= 10);
    free(s.text);
}


/* The instruction lines of every ``` block of docs/assembly.md and
 * docs/isa.md assemble, block by block (so labels and prefixes work; lines
 * with "..." are abbreviations and skipped). */
static unsigned assemble_block(const char *path, unsigned line, const char *block)
{
    if (!*block)
        return 0;
    isa_asm_result_t res;
    if (isa_assemble(block, strlen(block), NULL, &res) != 0) {
        print_error("%s: example block ending on line %u does not assemble: %u:%u: %s\n%s", path, line,
                    res.diags[0].line, res.diags[0].col, res.diags[0].msg, block);
        fail();
    }
    isa_asm_result_free(&res);
    return 1;
}

static void check_doc_examples(const char *path, unsigned min_blocks)
{
    src_t s;
    load(path, &s);
    bool in_code = false;
    unsigned nblocks = 0;
    static char block[1 << 16];
    size_t blen = 0;
    block[0] = '\0';
    for (unsigned i = 0; i < s.nlines; i++) {
        const char *l = s.lines[i];
        if (!strncmp(l, "```", 3)) {
            if (in_code)
                nblocks += assemble_block(path, i + 1, block);
            in_code = !in_code;
            blen = 0;
            block[0] = '\0';
            continue;
        }
        char w1[64], w2[64];
        int nw = sscanf(l, "%63s %63s", w1, w2);
        if (!in_code || strstr(l, "...") || nw < 1)
            continue;
        const char *mn = (strchr(w1, ':') && w1[strlen(w1) - 1] == ':' && nw == 2) ? w2 : w1;
        if (!isa_op_by_mnemonic(mn))
            continue;
        int r = snprintf(block + blen, sizeof block - blen, "%s\n", l);
        assert_true(r > 0 && (size_t)r < sizeof block - blen);
        blen += (size_t)r;
    }
    assert_true(nblocks >= min_blocks);
    free(s.text);
}

static void test_doc_examples_assemble(void **state)
{
    (void)state;
    check_doc_examples(TPB_SOURCE_DIR "/docs/assembly.md", 1);
    check_doc_examples(TPB_SOURCE_DIR "/docs/isa.md", 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_encodings_cover_every_opcode),
        cmocka_unit_test(test_invalid_assembly),
        cmocka_unit_test(test_invalid_bundles),
        cmocka_unit_test(test_doc_examples_assemble),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
