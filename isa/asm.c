/* asm.c - assembly text to bundles: labels, bundle directives, prefix
 * pairing and encoding.  Lines are parsed by asm_line.c; the grammar is in
 * docs/assembly.md. */
#include "asm_lex.h"
#include "dis.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ============================================================ assembler */
typedef enum { ITEM_INST, ITEM_DATA } item_kind_t;

typedef struct {
    item_kind_t kind;
    unsigned line;
    unsigned mn_col;
    union {
        isa_inst_t inst;                /* ITEM_INST */
        uint8_t data[ISA_BUNDLE_BYTES]; /* ITEM_DATA */
    };
    given_t *given;       /* malloc'ed, ngiven entries (error columns) */
    unsigned ngiven;
    char label_ref[MAX_LABEL];
    unsigned label_col;
    uint32_t pc;          /* first bundle of this item */
    unsigned nbundles;    /* 2 when an ApExt is emitted automatically */
    bool has_explicit_ext; /* consumes the explicit ApExt item just before */
    bool bad;             /* the line had an error: not encoded */
    size_t ext_item;      /* index of that item */
} item_t;

typedef struct {
    char name[MAX_LABEL];
    uint32_t pc;
    unsigned line;
} label_t;

typedef struct {
    const isa_asm_opts_t *opts;
    isa_asm_result_t *res;
    item_t *items;
    size_t nitems, cap;
    label_t *labels;
    size_t nlabels, lcap;
    uint32_t pc;
    /* prefix lines waiting for the instruction they extend */
    bool pend_ext, pend_pred;
    size_t ext_item, pred_item;   /* pred_item: the first pending PredExt */
    int npend_pred;               /* PredExt lines pending (ANDed, at most ISA_MAX_PREDEXT) */
} asm_t;

static void add_diag(asm_t *a, const isa_asm_diag_t *d)
{
    a->res->nerrors++;
    if (a->res->ndiags < ISA_ASM_MAX_DIAGS)
        a->res->diags[a->res->ndiags++] = *d;
}

static void diag_at(asm_t *a, unsigned line, unsigned col, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void diag_at(asm_t *a, unsigned line, unsigned col, const char *field, const char *fmt, ...)
{
    isa_asm_diag_t d;
    memset(&d, 0, sizeof d);
    d.line = line;
    d.col = col;
    snprintf(d.field, sizeof d.field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.msg, sizeof d.msg, fmt, ap);
    va_end(ap);
    add_diag(a, &d);
}

static item_t *new_item(asm_t *a)
{
    if (a->nitems == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        item_t *n = realloc(a->items, cap * sizeof *n);
        if (!n)
            return NULL;
        a->items = n;
        a->cap = cap;
    }
    item_t *it = &a->items[a->nitems++];
    memset(it, 0, sizeof *it);
    return it;
}

static int add_label(asm_t *a, lex_t *lx, const char *at, const char *name)
{
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].name, name) == 0)
            return asm_perr(lx, at, "label", "label '%s' is already defined on line %u", name, a->labels[i].line);
    if (a->nlabels == a->lcap) {
        size_t cap = a->lcap ? a->lcap * 2 : 32;
        label_t *n = realloc(a->labels, cap * sizeof *n);
        if (!n)
            return asm_perr(lx, at, "label", "out of memory");
        a->labels = n;
        a->lcap = cap;
    }
    label_t *l = &a->labels[a->nlabels++];
    snprintf(l->name, sizeof l->name, "%s", name);
    l->pc = a->pc;
    l->line = lx->lineno;
    return 0;
}

/* .bundle <128 hex digits, whitespace allowed> */
static int parse_bundle_directive(lex_t *lx, uint8_t *out)
{
    unsigned n = 0;
    asm_skip_ws(lx);
    const char *s = lx->p;
    for (;;) {
        asm_skip_ws(lx);
        if (asm_at_end(lx))
            break;
        char c = *lx->p;
        if (!isxdigit((unsigned char)c))
            return asm_perr(lx, lx->p, "bundle", ".bundle: '%c' is not a hex digit", c);
        if (n >= 2 * ISA_BUNDLE_BYTES)
            return asm_perr(lx, lx->p, "bundle", ".bundle: more than 64 bytes");
        unsigned v = (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
        out[n / 2] = (uint8_t)(n % 2 ? (out[n / 2] | v) : (v << 4));
        n++;
        lx->p++;
    }
    if (n != 2 * ISA_BUNDLE_BYTES)
        return asm_perr(lx, s, "bundle", ".bundle: expected 128 hex digits (64 bytes), got %u", n);
    return 0;
}

static bool inst_needs_ext(const isa_inst_t *in)
{
    const isa_fmtinfo_t *fi = &isa_formats[isa_ops[in->op].format];
    const uint8_t *body = (const uint8_t *)isa_inst_body_const(in);
    for (unsigned i = 0; i < fi->nfields; i++) {
        const isa_field_t *f = &fi->fields[i];
        if (f->opnd_kind == ISA_OPND_TAP && strstr(f->name, ".addr") &&
            ((const isa_tap_t *)(body + f->offset))->ndims > 2)
            return true;
    }
    return false;
}

static int check_engine(asm_t *a, lex_t *lx, const char *at, const isa_inst_t *in)
{
    isa_engine_t e = a->opts ? a->opts->engine : ISA_ENG_UNASSIGNED;
    const isa_opinfo_t *oi = &isa_ops[in->op];
    if (e == ISA_ENG_UNASSIGNED || (oi->engines & (1u << e)))
        return 0;
    char legal[120];
    size_t n = 0;
    legal[0] = '\0';
    for (int k = 0; k < 5; k++)
        if (oi->engines & (1u << isa_tpb_engines[k]))
            n += (size_t)snprintf(legal + n, sizeof legal - n, "%s%s", n ? ", " : "",
                                  isa_engine_name(isa_tpb_engines[k]));
    return asm_perr(lx, at, "mnemonic", "%s is not legal on engine %s (legal on: %s)", oi->mnemonic,
                isa_engine_name(e), legal);
}

/* Track explicit ApExt / PredExt lines and attach them to the next instruction. */
static int place_inst(asm_t *a, lex_t *lx, const char *ms, item_t *it)
{
    isa_op_t op = it->inst.op;
    if (op == ISA_OP_PRED_EXT) {   /* several in a row: their predicates are ANDed */
        if (a->npend_pred == ISA_MAX_PREDEXT)
            return asm_perr(lx, ms, "prefix", "more than %d PredExt prefixes before one "
                            "instruction", ISA_MAX_PREDEXT);
        if (!a->pend_pred)
            a->pred_item = a->nitems - 1;
        a->pend_pred = true;
        a->npend_pred++;
        it->nbundles = 1;
        return 0;
    }
    if (op == ISA_OP_AP_EXT) {
        if (a->pend_ext)
            return asm_perr(lx, ms, "prefix", "two %s prefixes in a row", isa_ops[op].mnemonic);
        a->pend_ext = true;
        a->ext_item = a->nitems - 1;
        it->nbundles = 1;
        return 0;
    }
    if (a->pend_pred && op != ISA_OP_TENSOR_SCALAR_PTR)
        return asm_perr(lx, ms, "PredExt", "PredExt (line %u) must be followed by TensorScalarPtr, not %s",
                    a->items[a->pred_item].line, isa_ops[op].mnemonic);
    bool need = inst_needs_ext(&it->inst);
    if (a->pend_ext && !need)
        return asm_perr(lx, ms, "ApExt", "ApExt (line %u) is not used: no operand of %s has more than 2 free dims",
                    a->items[a->ext_item].line, isa_ops[op].mnemonic);
    it->has_explicit_ext = a->pend_ext;
    it->ext_item = a->ext_item;
    it->nbundles = (need && !a->pend_ext) ? 2 : 1;
    a->pend_ext = a->pend_pred = false;
    a->npend_pred = 0;
    return 0;
}

/* One source line: labels, then an instruction, a .bundle or nothing. */
static int assemble_line(asm_t *a, lex_t *lx)
{
    for (;;) {
        asm_skip_ws(lx);
        if (asm_at_end(lx))
            return 0;
        const char *s = lx->p, *q = lx->p;
        while (q < lx->end && asm_ident_char(*q, q == s))
            q++;
        if (q > s && q < lx->end && *q == ':' && asm_token_end(lx, q + 1)) {
            char name[MAX_LABEL];
            if (asm_take_ident(lx, name, sizeof name) >= MAX_LABEL)
                return asm_perr(lx, s, "label", "label is longer than %d characters", MAX_LABEL - 1);
            lx->p++;
            if (add_label(a, lx, s, name))
                return -1;
            continue;
        }
        break;
    }
    const char *ms = lx->p;
    item_t *it = new_item(a);
    if (!it)
        return asm_perr(lx, ms, NULL, "out of memory");
    it->line = lx->lineno;
    it->mn_col = asm_col_of(lx, ms);
    if (lx->end - lx->p >= 7 && strncmp(lx->p, ".bundle", 7) == 0 && asm_token_end(lx, lx->p + 7)) {
        lx->p += 7;
        if (a->pend_ext || a->pend_pred)
            return asm_perr(lx, ms, "prefix", "a prefix line must be followed by an instruction, not .bundle "
                                          "(write the prefix as .bundle too)");
        it->kind = ITEM_DATA;
        it->nbundles = 1;
        if (parse_bundle_directive(lx, it->data))
            return -1;
    } else {
        it->kind = ITEM_INST;
        if (asm_parse_inst_at(lx, &it->inst) || check_engine(a, lx, ms, &it->inst) ||
            place_inst(a, lx, ms, it))
            return -1;
        if (lx->ngiven) {
            it->given = malloc(lx->ngiven * sizeof *it->given);
            if (!it->given)
                return asm_perr(lx, ms, NULL, "out of memory");
            memcpy(it->given, lx->given, lx->ngiven * sizeof *it->given);
            it->ngiven = lx->ngiven;
        }
        memcpy(it->label_ref, lx->label_ref, sizeof it->label_ref);
        it->label_col = lx->label_col;
    }
    it->pc = a->pc;
    a->pc += it->nbundles;
    return 0;
}

/* Column of the field an encoder error names ("in0.nparts" -> in0). */
static unsigned field_col(const item_t *it, const char *field)
{
    if (!field)
        return it->mn_col;
    size_t n = strcspn(field, ".");
    for (unsigned i = 0; i < it->ngiven; i++)
        if (strlen(it->given[i].name) == n && strncmp(it->given[i].name, field, n) == 0)
            return it->given[i].col;
    return it->mn_col;
}

static int resolve_label(asm_t *a, item_t *it)
{
    if (!it->label_ref[0])
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i].name, it->label_ref) == 0) {
            const isa_field_t *f = isa_field_by_name(isa_ops[it->inst.op].format, "target");
            isa_field_set(&it->inst, f, a->labels[i].pc);
            return 0;
        }
    diag_at(a, it->line, it->label_col, "target", "field 'target': undefined label '%s'", it->label_ref);
    return -1;
}

/* Encode one instruction item into out (1 or 2 bundles). */
static int encode_item(asm_t *a, item_t *it, uint8_t *out)
{
    uint8_t b[2][ISA_BUNDLE_BYTES];
    unsigned nb = 0;
    isa_err_t err;
    memset(&err, 0, sizeof err);
    if (isa_encode_with_prefixes(&it->inst, b, &nb, &err) != ISA_OK) {
        diag_at(a, it->line, field_col(it, err.field), err.field, "%s", err.msg);
        return -1;
    }
    if (it->has_explicit_ext) {
        const item_t *x = &a->items[it->ext_item];
        uint8_t xb[ISA_BUNDLE_BYTES];
        isa_encode(&x->inst, xb, NULL);
        if (nb != 2 || memcmp(xb, b[0], ISA_BUNDLE_BYTES) != 0) {
            char want[600];
            isa_inst_t wi;
            isa_decode(b[0], 0, &wi, NULL);
            isa_format_line(&wi, want, sizeof want);
            diag_at(a, x->line, x->mn_col, "ApExt",
                    "ApExt does not match the outer dims of the %s on line %u (expected: %s)",
                    isa_ops[it->inst.op].mnemonic, it->line, want);
            return -1;
        }
        memcpy(out, b[1], ISA_BUNDLE_BYTES);
        return 0;
    }
    memcpy(out, b[0], (size_t)nb * ISA_BUNDLE_BYTES);
    return 0;
}

static int finish(asm_t *a)
{
    if (a->pend_ext || a->pend_pred) {
        const item_t *x = &a->items[a->pend_ext ? a->ext_item : a->pred_item];
        diag_at(a, x->line, x->mn_col, "prefix", "%s at the end of the file extends no instruction",
                isa_ops[x->inst.op].mnemonic);
    }
    /* encode even after errors, so every bad line of a file is reported */
    size_t len = (size_t)a->pc * ISA_BUNDLE_BYTES;
    uint8_t *bytes = calloc(len ? len : 1, 1);
    if (!bytes) {
        diag_at(a, 0, 0, NULL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < a->nitems; i++) {
        item_t *it = &a->items[i];
        if (it->bad || (it->has_explicit_ext && a->items[it->ext_item].bad))
            continue;
        uint8_t *out = bytes + (size_t)it->pc * ISA_BUNDLE_BYTES;
        if (it->kind == ITEM_DATA) {
            memcpy(out, it->data, ISA_BUNDLE_BYTES);
            continue;
        }
        if (resolve_label(a, it))
            continue;
        if (it->inst.op == ISA_OP_AP_EXT) {
            isa_err_t err;
            memset(&err, 0, sizeof err);
            if (isa_encode(&it->inst, out, &err) != ISA_OK)
                diag_at(a, it->line, field_col(it, err.field), err.field, "%s", err.msg);
            continue;
        }
        encode_item(a, it, out);
    }
    if (a->res->nerrors) {
        free(bytes);
        return -1;
    }
    a->res->bytes = bytes;
    a->res->len = len;
    return 0;
}

int isa_assemble(const char *src, size_t len, const isa_asm_opts_t *opts, isa_asm_result_t *res)
{
    memset(res, 0, sizeof *res);
    asm_t a;
    memset(&a, 0, sizeof a);
    a.opts = opts;
    a.res = res;
    lex_t *lx = malloc(sizeof *lx);
    if (!lx) {
        diag_at(&a, 0, 0, NULL, "out of memory");
        return -1;
    }
    const char *p = src, *end = src + len;
    unsigned lineno = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        memset(lx, 0, sizeof *lx);
        isa_asm_diag_t d;
        memset(&d, 0, sizeof d);
        lx->line = lx->p = p;
        lx->end = le;
        lx->lineno = ++lineno;
        lx->diag = &d;
        if (memchr(p, '\0', (size_t)(le - p)))
            diag_at(&a, lineno, 0, NULL, "NUL byte in the source line");
        else if (assemble_line(&a, lx)) {
            add_diag(&a, &d);
            if (a.nitems && a.items[a.nitems - 1].line == lineno)
                a.items[a.nitems - 1].bad = true;
            a.pend_ext = a.pend_pred = false; /* don't cascade onto the next line */
        }
        p = nl ? nl + 1 : end;
    }
    free(lx);
    int rc = finish(&a);
    for (size_t i = 0; i < a.nitems; i++)
        free(a.items[i].given);
    free(a.items);
    free(a.labels);
    return rc;
}

void isa_asm_result_free(isa_asm_result_t *res)
{
    free(res->bytes);
    memset(res, 0, sizeof *res);
}
