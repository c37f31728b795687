/* expr_slice.c - NumPy-style slice operands of the kernel file (see
 * expr.h): "name[s0, s1, ...]" whose items are index expressions,
 * start:stop[:step] or ds(start, size), each part in the one expression
 * grammar (expr.c).  Compiling keeps every part's postfix program so a loop
 * body's operand is parsed once. */
#include "expr.h"
#include "smallfmt.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- slices ---- */

/* isspace in the C locale (the program never sets another), without the
 * call to find the locale's table: run per slice part of a flat body. */
static inline bool blank(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Copy text[a, b) into buf; trims blanks. */
static void sub(const char *a, const char *b, char *buf, size_t n)
{
    while (a < b && blank(*a))
        a++;
    while (b > a && blank(b[-1]))
        b--;
    size_t len = (size_t)(b - a);
    if (len >= n)
        len = n - 1;
    memcpy(buf, a, len);
    buf[len] = 0;
}

/* A compiled slice list: per item its kind and the programs of its parts
 * (NULL: the part is absent). */
typedef struct {
    unsigned char kind;          /* 0 index, 1 start:stop:step, 2 ds(start, size) */
    enc_expr_t *e[3];
} sitem_t;

struct enc_slice_prog {
    int n;
    sitem_t it[ENC_MAX_SLICES];
    bool bad;                    /* some part could not be compiled */
};

/* A part that is only decimal digits (a flat body's "a[5:6, :]"): its
 * value, as the expression parser gives it (no pid dependence; 18 digits
 * cannot overflow), without parsing. */
static bool plain_int(const char *t, int64_t *v)
{
    int64_t x = 0;
    size_t k = 0;
    for (; k < 18 && t[k] >= '0' && t[k] <= '9'; k++)
        x = x * 10 + (t[k] - '0');
    if (k == 0 || t[k])   /* not only digits, or more than 18 */
        return false;
    *v = x;
    return true;
}

/* plain_int of the part [a, b) (blanks already trimmed) where it lies,
 * without copying it out first. */
static bool span_int(const char *a, const char *b, int64_t *v)
{
    if (a == b || b - a > 18)
        return false;
    int64_t x = 0;
    for (const char *p = a; p < b; p++) {
        if (*p < '0' || *p > '9')
            return false;
        x = x * 10 + (*p - '0');
    }
    *v = x;
    return true;
}

static void trim(const char **a, const char **b)
{
    while (*a < *b && blank(**a))
        ++*a;
    while (*b > *a && blank((*b)[-1]))
        --*b;
}

/* One part; with slot (compiling) its program goes there. */
static int eval_part(const char *text, const enc_env_t *env, int64_t *v, bool *dep, char *msg,
                     size_t n, struct enc_slice_prog *rec, enc_expr_t **slot)
{
    if (!rec && plain_int(text, v))
        return 0;
    enc_val_t r;
    if (enc_expr_compile(text, env, rec ? slot : NULL, &r, msg, n))
        return -1;
    if (rec && !*slot)
        rec->bad = true;
    *v = r.v;
    *dep |= r.pid_dep;
    return 0;
}

/* NKI nl.ds(start, size): the range start:start+size. */
static int parse_ds(const char *text, const enc_env_t *env, enc_slice_t *s, bool *dep, char *msg,
                    size_t n, struct enc_slice_prog *rec, sitem_t *ri)
{
    const char *open = strchr(text, '(');
    size_t len = strlen(text);
    if (len < 2 || text[len - 1] != ')') {
        snprintf(msg, n, "malformed ds(start, size) in \"%.80s\"", text);
        return -1;
    }
    /* split the arguments at the top-level comma */
    int depth = 0;
    const char *comma = NULL;
    for (const char *p = open + 1; p < text + len - 1; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (*p == ',' && depth == 0 && !comma)
            comma = p;
    }
    if (!comma) {
        snprintf(msg, n, "ds() takes (start, size) in \"%.80s\"", text);
        return -1;
    }
    char a[512], b[512];
    sub(open + 1, comma, a, sizeof a);
    sub(comma + 1, text + len - 1, b, sizeof b);
    int64_t start, size;
    ri->kind = 2;
    if (eval_part(a, env, &start, dep, msg, n, rec, &ri->e[0]) ||
        eval_part(b, env, &size, dep, msg, n, rec, &ri->e[1]))
        return -1;
    if (size < 1) {
        snprintf(msg, n, "ds() size %lld must be >= 1", (long long)size);
        return -1;
    }
    int64_t stop;
    if (__builtin_add_overflow(start, size, &stop)) {
        snprintf(msg, n, "integer overflow in ds()");
        return -1;
    }
    *s = ENC_RANGE(start, stop);
    return 0;
}

/* One comma-separated item: "e", "a:b", "a:b:c", ":", "::2", ... */
static int parse_item(const char *a, const char *b, const enc_env_t *env, enc_slice_t *s,
                      bool *dep, char *msg, size_t n, struct enc_slice_prog *rec, sitem_t *ri)
{
    const char *colon[2] = {NULL, NULL};
    int nc = 0, depth = 0;
    for (const char *p = a; p < b; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        else if (*p == ':' && depth == 0) {
            if (nc == 2) {
                snprintf(msg, n, "too many ':' in slice");
                return -1;
            }
            colon[nc++] = p;
        }
    }
    char buf[512];
    if (b - a >= (long)sizeof buf) {
        snprintf(msg, n, "slice expression too long");
        return -1;
    }
    if (nc == 0) {   /* a range's parts are copied one by one below */
        const char *ta = a, *tb = b;
        trim(&ta, &tb);
        int64_t v;
        if (!rec && span_int(ta, tb, &v)) {   /* eval_part's plain_int, in place */
            *s = ENC_INDEX(v);
            ri->kind = 0;
            return 0;
        }
        sub(a, b, buf, sizeof buf);
        if (!strncmp(buf, "ds(", 3) || !strncmp(buf, "nl.ds(", 6))
            return parse_ds(buf, env, s, dep, msg, n, rec, ri);
        if (!buf[0]) {
            snprintf(msg, n, "empty index");
            return -1;
        }
        *s = ENC_INDEX(0);
        ri->kind = 0;
        return eval_part(buf, env, &s->start, dep, msg, n, rec, &ri->e[0]);
    }
    *s = ENC_ALL;
    s->kind = ENC_SL_RANGE;
    s->step = 1;
    ri->kind = 1;
    const char *ends[3] = {colon[0], nc > 1 ? colon[1] : b, b};
    const char *starts[3] = {a, colon[0] + 1, nc > 1 ? colon[1] + 1 : b};
    for (int i = 0; i <= nc; i++) {
        const char *pa = starts[i], *pb = ends[i];
        trim(&pa, &pb);
        if (pa == pb)
            continue;
        int64_t v;
        if (rec || !span_int(pa, pb, &v)) {   /* else eval_part's plain_int, in place */
            sub(pa, pb, buf, sizeof buf);
            if (eval_part(buf, env, &v, dep, msg, n, rec, &ri->e[i]))
                return -1;
        }
        if (i == 0) {
            s->start = v;
            s->has_start = true;
        } else if (i == 1) {
            s->stop = v;
            s->has_stop = true;
        } else {
            s->step = v;
        }
    }
    return 0;
}

static int parse_slices(const char *text, const enc_env_t *env, enc_slice_t *slices,
                        int *nslices, bool *pid_dep, char *msg, size_t n,
                        struct enc_slice_prog *rec)
{
    *nslices = 0;
    *pid_dep = false;
    const char *a = text;
    int depth = 0;
    for (const char *p = text;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == ',' && depth == 0) || *p == 0) {
            if (*nslices == ENC_MAX_SLICES) {
                snprintf(msg, n, "more than %d indices", ENC_MAX_SLICES);
                return -1;
            }
            sitem_t scratch = {0, {NULL, NULL, NULL}};
            sitem_t *ri = rec ? &rec->it[*nslices] : &scratch;
            if (rec)
                rec->n = *nslices + 1;
            if (parse_item(a, p, env, &slices[*nslices], pid_dep, msg, n, rec, ri))
                return -1;
            (*nslices)++;
            a = p + 1;
            if (*p == 0)
                break;
        }
    }
    return 0;
}

int enc_parse_slices(const char *text, const enc_env_t *env, enc_slice_t *slices, int *nslices,
                     bool *pid_dep, char *msg, size_t n)
{
    return parse_slices(text, env, slices, nslices, pid_dep, msg, n, NULL);
}

static int parse_slice_operand(const char *text, const enc_env_t *env, char *name,
                               size_t name_len, enc_slice_t *slices, int *nslices,
                               bool *pid_dep, char *msg, size_t n, struct enc_slice_prog *rec)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    const char *a = p;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    if (p == a || isdigit((unsigned char)*a)) {
        snprintf(msg, n, "expected a tensor or tile name in \"%.80s\"", text);
        return -1;
    }
    sub(a, p, name, name_len);
    if ((size_t)(p - a) >= name_len) {
        snprintf(msg, n, "name too long in \"%.80s\"", text);
        return -1;
    }
    while (isspace((unsigned char)*p))
        p++;
    *nslices = 0;
    *pid_dep = false;
    if (*p == 0)
        return 0;
    if (*p != '[') {
        snprintf(msg, n, "expected '[' after '%s' in \"%.80s\"", name, text);
        return -1;
    }
    const char *close = strrchr(p, ']');
    if (!close) {
        snprintf(msg, n, "missing ']' in \"%.80s\"", text);
        return -1;
    }
    for (const char *q = close + 1; *q; q++)
        if (!isspace((unsigned char)*q)) {
            snprintf(msg, n, "unexpected text after ']' in \"%.80s\"", text);
            return -1;
        }
    size_t len = (size_t)(close - p - 1);
    char small[256];   /* most slice lists: no allocation */
    char *body = len < sizeof small ? small : malloc(len + 1);
    if (!body) {
        snprintf(msg, n, "out of memory");
        return -1;
    }
    memcpy(body, p + 1, len);
    body[len] = 0;
    int rc = parse_slices(body, env, slices, nslices, pid_dep, msg, n, rec);
    if (body != small)
        free(body);
    return rc;
}

/* [A-Za-z0-9_] (isalnum in the C locale, or '_'), by table: one load a
 * byte (the three range tests took 12 instructions a byte of a name). */
#define ID4(c) [(c)] = true, [(c) + 1] = true, [(c) + 2] = true, [(c) + 3] = true
#define ID26(c) ID4(c), ID4((c) + 4), ID4((c) + 8), ID4((c) + 12), ID4((c) + 16), \
                ID4((c) + 20), [(c) + 24] = true, [(c) + 25] = true
static const bool ident_tab[256] = {ID4('0'), ID4('4'), ['8'] = true, ['9'] = true,
                                    ID26('A'), ID26('a'), ['_'] = true};
#undef ID26
#undef ID4

static inline bool ident_char(char c)
{
    return ident_tab[(unsigned char)c];
}

/* The decimal digits at *p (1..18 of them, as span_int takes), *p moved
 * past them; false when there are none or more.  The run is read whole
 * and its length checked after (no bound test a digit); unsigned, a run
 * past 19 digits wraps harmlessly before it is refused. */
static bool quick_int(const char **p, int64_t *v)
{
    const char *q = *p;
    uint64_t x = 0;
    while ((unsigned)(*q - '0') < 10u)
        x = x * 10 + (uint64_t)(*q++ - '0');
    if (q == *p || q - *p > 18)   /* none, or a 19th: 18 digits cannot overflow */
        return false;
    *p = q;
    *v = (int64_t)x;
    return true;
}

/* One item at *p of a quick operand: an integer, or a range of up to three
 * integer parts (each optional), spaces around the parts; *p ends on the
 * byte after it.  false for anything else. */
static bool quick_item(const char **pp, enc_slice_t *s)
{
    const char *p = *pp;
    int64_t v[3] = {0, 0, 0};
    bool has[3] = {false, false, false};
    int nc = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p >= '0' && *p <= '9' && !(has[nc] = quick_int(&p, &v[nc])))
            return false;
        while (*p == ' ')
            p++;
        if (*p != ':')
            break;
        if (nc == 2)
            return false;
        nc++;
        p++;
    }
    if (nc == 0) {
        if (!has[0])
            return false;
        *s = ENC_INDEX(v[0]);
    } else {   /* as parse_item: a range even when every part is absent */
        *s = ENC_ALL;
        s->kind = ENC_SL_RANGE;
        s->start = has[0] ? v[0] : s->start;
        s->has_start = has[0];
        s->stop = has[1] ? v[1] : s->stop;
        s->has_stop = has[1];
        s->step = has[2] ? v[2] : 1;
    }
    *pp = p;
    return true;
}

/* (expr.h) Any other text is parse_slice_operand's, which reads (and
 * reports) it as before. */
bool enc_quick_slice_operand(const char *text, char *name, size_t name_len, enc_slice_t *slices,
                             int *nslices, size_t max_len)
{
    const char *p = text;
    if (!ident_char(*p) || (*p >= '0' && *p <= '9'))
        return false;
    while (ident_char(*p))
        p++;
    size_t nl = (size_t)(p - text);
    if (nl >= name_len || (*p && *p != '['))
        return false;
    int ns = 0;
    if (*p) {
        for (;;) {
            const char *item = ++p;   /* after '[' or ',' */
            if (ns == ENC_MAX_SLICES || !quick_item(&p, &slices[ns]) ||
                p - item >= 512)   /* parse_item's "too long" */
                return false;
            ns++;
            if (*p == ']' && !p[1])
                break;
            if (*p != ',')
                return false;
        }
        p++;   /* the text's end */
    }
    if ((size_t)(p - text) >= max_len)
        return false;
    tpb_copy_short(name, text, nl);
    name[nl] = 0;
    *nslices = ns;
    return true;
}

int enc_parse_slice_operand(const char *text, const enc_env_t *env, char *name, size_t name_len,
                            enc_slice_t *slices, int *nslices, bool *pid_dep, char *msg,
                            size_t n)
{
    if (enc_quick_slice_operand(text, name, name_len, slices, nslices, SIZE_MAX)) {
        *pid_dep = false;
        return 0;
    }
    return parse_slice_operand(text, env, name, name_len, slices, nslices, pid_dep, msg, n, NULL);
}

void enc_slice_prog_free(enc_slice_prog_t *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++)
        for (int k = 0; k < 3; k++)
            enc_expr_free(p->it[i].e[k]);
    free(p);
}

int enc_slice_operand_compile(const char *text, const enc_env_t *env, char *name,
                              size_t name_len, enc_slice_t *slices, int *nslices, bool *pid_dep,
                              char *msg, size_t n, enc_slice_prog_t **prog)
{
    struct enc_slice_prog *rec = calloc(1, sizeof *rec);
    *prog = NULL;
    int rc = parse_slice_operand(text, env, name, name_len, slices, nslices, pid_dep, msg, n,
                                 rec);
    if (!rc && rec && !rec->bad && rec->n == *nslices) {
        *prog = rec;
        rec = NULL;
    }
    enc_slice_prog_free(rec);
    return rc;
}

/* One compiled item, as parse_item / parse_ds build it. */
static int run_item(const sitem_t *ri, const enc_env_t *env, enc_slice_t *s, bool *dep)
{
    int64_t v[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        enc_val_t r;
        if (!ri->e[k])
            continue;
        if (enc_expr_run(ri->e[k], env, &r))
            return -1;
        v[k] = r.v;
        *dep |= r.pid_dep;
    }
    if (ri->kind == 2) {
        int64_t stop;
        if (v[1] < 1 || __builtin_add_overflow(v[0], v[1], &stop))
            return -1;
        *s = ENC_RANGE(v[0], stop);
    } else if (ri->kind == 0) {
        *s = ENC_INDEX(v[0]);
    } else {
        *s = ENC_ALL;
        s->kind = ENC_SL_RANGE;
        s->step = ri->e[2] ? v[2] : 1;
        s->start = ri->e[0] ? v[0] : s->start;
        s->has_start = ri->e[0] != NULL;
        s->stop = ri->e[1] ? v[1] : s->stop;
        s->has_stop = ri->e[1] != NULL;
    }
    return 0;
}

int enc_slice_prog_count(const enc_slice_prog_t *p)
{
    return p->n;
}

int enc_slice_prog_run(const enc_slice_prog_t *p, const enc_env_t *env, enc_slice_t *slices,
                       int *nslices, bool *pid_dep)
{
    *pid_dep = false;
    for (int i = 0; i < p->n; i++)
        if (run_item(&p->it[i], env, &slices[i], pid_dep))
            return -1;
    *nslices = p->n;
    return 0;
}
