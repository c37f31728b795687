/* sidecar.c - read the debug table of an <Engine>.json sidecar
 * (docs/artifacts.md) into sim_engine_t.debug.
 *
 * A sidecar has one `debug` entry per instruction, so for a long stream it
 * is the largest file of an artifact (16 MB for 100 000 instructions).
 * Building a cJSON tree of it costs ~17 allocations per entry; instead a
 * small scanner walks the text once, keeps only debug[].pc/name/src and
 * copies the strings into the block of the debug table, after the table (a
 * repeated string, such as the src of a loop body, is stored once).  A
 * compact sidecar (common/sidecar_form.h) leaves out what the previous entry
 * implies; sink_entry fills it back in, for both parsers alike.
 *
 * The scanner accepts plain JSON only: no escapes, no control characters
 * in strings, the four JSON whitespace characters, RFC 8259 numbers, depth
 * at most SCAN_MAX_DEPTH.  Everything it accepts cJSON accepts with the
 * same values; anything else (including every malformed file) is handed to
 * the cJSON-shaped arena reader (common/jsonarena.h, which accepts and
 * refuses what cJSON does), so the results and the error messages are
 * cJSON's either way. */
#include "sim_int.h"

#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "cJSON.h"
#include "hugepage.h"
#include "jsonread.h"
#include "sidecar_form.h"

#define SCAN_MAX_DEPTH 256  /* cJSON's limit is 1000 */

/* ---- where the debug entries go (shared by both parsers) ---- */

/* A string member of a debug entry: its text (NULL: absent or not a string). */
typedef struct {
    const char *s;
    size_t n;
} sink_str_t;

typedef struct {
    sim_engine_t *e;
    const char *path;
    tpb_err_t *err;
    int rc;                      /* first error; later entries are ignored */
    bool active;                 /* debug is an array and the stream is not empty */
    char *text;                  /* the strings, in e->debug's block after the table */
    size_t cap, used;
    const char *last[3];         /* last stored name / src / buf (for sharing) */
    size_t last_n[3];
    bool compact;                /* "debug_form": "compact" (common/sidecar_form.h) */
    double prev_pc;              /* compact: the previous entry's pc, src, name, buf */
    sink_str_t prev_src, prev_name, prev_buf;
} debug_sink_t;

/* The debug array starts: allocate e->debug, one block holding the table
 * and then the strings.  Every stored string comes from a distinct string
 * token of the file and is no longer than the token, so len + 1 bytes of
 * text always suffice (only the bytes written are ever touched).  From
 * TPB_ARRAY_MAP_MIN on the block is a fresh mapping in huge pages (tpb_array_grow:
 * a fault per 2 MiB, not per 4 KiB), already zeroed, so only a malloc'ed
 * one has its table cleared. */
static void sink_begin(debug_sink_t *k, size_t len)
{
    sim_engine_t *e = k->e;
    if (!e->stream.count)
        return;
    k->active = true;
    size_t table = e->stream.count * sizeof *e->debug;
    if (len > SIZE_MAX - table - 1 || !(e->debug = tpb_array_grow(NULL, 0, table + len + 1))) {
        k->rc = tpb_errf(k->err, "out of memory");
        return;
    }
    e->debug_bytes = table + len + 1;
    if (!tpb_array_fresh_zero(e->debug_bytes))
        memset(e->debug, 0, table);
    k->text = (char *)e->debug + table;
    k->cap = len + 1;
}

static char *sink_store(debug_sink_t *k, int which, const char *s, size_t n)
{
    if (k->last[which] && k->last_n[which] == n && !memcmp(k->last[which], s, n))
        return (char *)k->last[which];
    if (k->cap - k->used < n + 1) {
        k->rc = tpb_errf(k->err, "out of memory");
        return NULL;
    }
    char *d = k->text + k->used;
    memcpy(d, s, n);
    d[n] = 0;
    k->used += n + 1;
    k->last[which] = d;
    k->last_n[which] = n;
    return d;
}

/* One debug entry as read: pc (absent, a number or something else), name,
 * src and buf (*_seen: the member is there). */
typedef enum { PC_ABSENT, PC_NUMBER, PC_OTHER } pc_kind_t;

typedef struct {
    pc_kind_t pc_kind;
    double pc;
    sink_str_t name, src, buf;
    bool name_seen, src_seen, buf_seen;
    bool is_object;              /* the entry is an object */
} sink_ent_t;

/* debug[i].  In a compact sidecar (common/sidecar_form.h) an absent pc is
 * the previous entry's + 1, an absent src the previous entry's src, and an
 * absent name the previous entry's name and (unless given) buf; the first
 * entry's previous pc is -1, its previous strings none.  A compact entry
 * that is not an object has no pc (as in the full form). */
static void sink_entry(debug_sink_t *k, int i, sink_ent_t x)
{
    if (!k->active || k->rc)
        return;
    sim_engine_t *e = k->e;
    if (k->compact) {
        if (!x.is_object)
            x.pc_kind = PC_OTHER;
        if (x.pc_kind == PC_ABSENT)
            x.pc_kind = PC_NUMBER, x.pc = k->prev_pc + 1;
        if (x.pc_kind == PC_NUMBER)
            k->prev_pc = x.pc;
        if (!x.src_seen)
            x.src = k->prev_src;
        if (!x.name_seen && !x.buf_seen)
            x.buf = k->prev_buf;
        if (!x.name_seen)
            x.name = k->prev_name;
        k->prev_src = x.src;
        k->prev_name = x.name;
        k->prev_buf = x.buf;
    }
    sink_str_t name = x.name, src = x.src, buf = x.buf;
    double pc = x.pc;
    if (x.pc_kind != PC_NUMBER || pc < 0 || pc >= (double)e->stream.nbundles) {
        k->rc = tpb_errf(k->err, "%s: debug[%d]: field pc missing or outside the stream (%zu "
                         "bundles)", k->path, i, e->stream.nbundles);
        return;
    }
    sim_debug_t *dd = &e->debug[e->stream.pc_to_index[(size_t)pc]];
    if (name.s && !dd->name)
        dd->name = sink_store(k, 0, name.s, name.n);
    if (src.s && !dd->src && !k->rc)
        dd->src = sink_store(k, 1, src.s, src.n);
    if (buf.s && !dd->buf && !k->rc)
        dd->buf = sink_store(k, 2, buf.s, buf.n);
}

/* ---- the scanner ---- */

typedef struct {
    const char *p, *end;
} scan_t;

typedef enum { SV_OTHER, SV_STRING, SV_NUMBER } sv_kind_t;

typedef struct {
    sv_kind_t kind;
    const char *s;               /* SV_STRING */
    size_t n;
    bool want_num;               /* set by the caller: compute num */
    double num;                  /* SV_NUMBER, if want_num */
} scan_val_t;

/* Compact sidecars have no blanks: one test for the common case. */
static inline void scan_ws(scan_t *j)
{
    while (j->p < j->end && (unsigned char)*j->p <= ' ' &&
           (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
        j->p++;
}

/* c is never a blank: test it before skipping blanks. */
static inline bool scan_char(scan_t *j, char c)
{
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    scan_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

static bool scan_peek(scan_t *j, char c)
{
    scan_ws(j);
    return j->p < j->end && *j->p == c;
}

/* Whole-word byte tests: some byte of w is 0, some byte is below n
 * (n <= 128).  Exact as booleans, and the lowest flagged byte is always a
 * true one (only bytes above a true one can be flagged falsely). */
#define BYTES_OF(x) (0x0101010101010101ull * (uint8_t)(x))
static inline uint64_t word_zero_bytes(uint64_t w)
{
    return (w - BYTES_OF(1)) & ~w & BYTES_OF(0x80);
}

static inline uint64_t word_less_bytes(uint64_t w, unsigned n)
{
    return (w - BYTES_OF(n)) & ~w & BYTES_OF(0x80);
}

/* The first '"', '\\' or control character in [c, end), or end. */
static inline const char *string_stop(const char *c, const char *end)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; end - c >= 8; c += 8) { /* 8 bytes at a time, one pass */
        uint64_t w;
        memcpy(&w, c, 8);
        uint64_t m = word_zero_bytes(w ^ BYTES_OF('"')) | word_zero_bytes(w ^ BYTES_OF('\\')) |
                     word_less_bytes(w, 0x20);
        if (m)
            return c + (__builtin_ctzll(m) >> 3);
    }
#endif
    while (c < end && *c != '"' && *c != '\\' && (unsigned char)*c >= 0x20)
        c++;
    return c;
}

/* A string with no escape and no control character. */
static bool scan_string(scan_t *j, const char **s, size_t *n)
{
    if (!scan_char(j, '"'))
        return false;
    const char *q = string_stop(j->p, j->end);
    if (q == j->end || *q != '"')
        return false;
    *s = j->p;
    *n = (size_t)(q - j->p);
    j->p = q + 1;
    return true;
}

static bool is_digit(const scan_t *j, const char *q)
{
    return q < j->end && *q >= '0' && *q <= '9';
}

/* A character cJSON reads as part of a number. */
static bool is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* strtod of s[0..n) (an RFC 8259 number); up to 15 plain digits are an
 * exact integer, which is what strtod returns for them. */
static double number_value(const char *s, size_t n)
{
    uint64_t x = 0;
    size_t i = 0;
    while (i < n && i < 15 && s[i] >= '0' && s[i] <= '9')
        x = x * 10 + (uint64_t)(s[i++] - '0');
    if (i == n)
        return (double)x;
    char tmp[64];
    memcpy(tmp, s, n);
    tmp[n] = 0;
    return strtod(tmp, NULL);
}

/* An RFC 8259 number that is not followed by a character cJSON would take
 * as part of it; its value is strtod of the same characters, as in cJSON.
 * Longer than 63 characters goes to cJSON (some cJSON versions read only
 * 63 characters of a number, others all of them). */
static bool scan_number(scan_t *j, double *v)
{
    const char *s = j->p, *q = s;
    if (q < j->end && *q == '-')
        q++;
    if (!is_digit(j, q))
        return false;
    if (*q++ != '0')
        while (is_digit(j, q))
            q++;
    if (q < j->end && *q == '.') {
        if (!is_digit(j, ++q))
            return false;
        while (is_digit(j, q))
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (!is_digit(j, q))
            return false;
        while (is_digit(j, q))
            q++;
    }
    size_t n = (size_t)(q - s);
    if (n > 63 || (q < j->end && is_number_char(*q)))
        return false;
    if (v)
        *v = number_value(s, n);
    j->p = q;
    return true;
}

static bool scan_literal(scan_t *j, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
        return false;
    j->p += n;
    return true;
}

static bool scan_value(scan_t *j, scan_val_t *v, unsigned depth);

/* The members of an object after its '{'; each value is checked and
 * dropped. */
static bool scan_object_rest(scan_t *j, unsigned depth)
{
    if (scan_char(j, '}'))
        return true;
    do {
        const char *key;
        size_t kn;
        scan_val_t v = { .want_num = false };
        if (!scan_string(j, &key, &kn) || !scan_char(j, ':') || !scan_value(j, &v, depth))
            return false;
    } while (scan_char(j, ','));
    return scan_char(j, '}');
}

static bool scan_array_rest(scan_t *j, unsigned depth)
{
    if (scan_char(j, ']'))
        return true;
    do {
        scan_val_t v = { .want_num = false };
        if (!scan_value(j, &v, depth))
            return false;
    } while (scan_char(j, ','));
    return scan_char(j, ']');
}

/* Any value (containers checked and dropped, at depth + 1). */
static bool scan_value(scan_t *j, scan_val_t *v, unsigned depth)
{
    v->kind = SV_OTHER;
    v->num = 0;
    scan_ws(j);
    if (j->p == j->end)
        return false;
    switch (*j->p) {
    case '"':
        v->kind = SV_STRING;
        return scan_string(j, &v->s, &v->n);
    case '{':
        j->p++;
        return depth < SCAN_MAX_DEPTH && scan_object_rest(j, depth + 1);
    case '[':
        j->p++;
        return depth < SCAN_MAX_DEPTH && scan_array_rest(j, depth + 1);
    case 't':
        return scan_literal(j, "true");
    case 'f':
        return scan_literal(j, "false");
    case 'n':
        return scan_literal(j, "null");
    default:
        v->kind = SV_NUMBER;
        return scan_number(j, v->want_num ? &v->num : NULL);
    }
}

static bool key_is(const char *key, size_t n, const char *want)
{
    return strlen(want) == n && !memcmp(key, want, n);
}

static sink_str_t scan_str(const scan_val_t *v)
{
    return v->kind == SV_STRING ? (sink_str_t){v->s, v->n} : (sink_str_t){NULL, 0};
}

/* One element of the debug array (at depth 2): an object's first pc, name,
 * src and buf members go to the sink; any other value has none of them. */
static bool scan_debug_entry(scan_t *j, debug_sink_t *k, int i)
{
    scan_val_t pc = { .kind = SV_OTHER }, name = pc, src = pc, buf = pc;
    bool seen[4] = { false, false, false, false };
    bool is_object = scan_peek(j, '{');
    if (!is_object) {
        scan_val_t v = { .want_num = false };
        if (!scan_value(j, &v, 2))
            return false;
    } else {
        j->p++;
        if (!scan_char(j, '}')) {
            do {
                const char *key;
                size_t kn;
                if (!scan_string(j, &key, &kn) || !scan_char(j, ':'))
                    return false;
                int w = key_is(key, kn, "pc") ? 0 : key_is(key, kn, "name") ? 1
                      : key_is(key, kn, "src") ? 2 : key_is(key, kn, "buf") ? 3 : -1;
                scan_val_t v = { .want_num = w == 0 && !seen[0] };
                if (!scan_value(j, &v, 3))
                    return false;
                if (w >= 0 && !seen[w]) {
                    seen[w] = true;
                    *(w == 0 ? &pc : w == 1 ? &name : w == 2 ? &src : &buf) = v;
                }
            } while (scan_char(j, ','));
            if (!scan_char(j, '}'))
                return false;
        }
    }
    sink_entry(k, i, (sink_ent_t){ !seen[0] ? PC_ABSENT : pc.kind == SV_NUMBER ? PC_NUMBER
                                                                          : PC_OTHER,
                                   pc.num, scan_str(&name), scan_str(&src), scan_str(&buf),
                                   seen[1], seen[2], seen[3], is_object });
    return true;
}

/* The value of the root's first "debug" member. */
static bool scan_debug(scan_t *j, debug_sink_t *k, size_t len)
{
    if (!scan_peek(j, '[')) {
        scan_val_t v = { .want_num = false };
        if (!scan_value(j, &v, 1))
            return false;
        k->rc = tpb_errf(k->err, "%s: field debug must be an array", k->path);
        return true;
    }
    j->p++;
    sink_begin(k, len);
    if (scan_char(j, ']'))
        return true;
    int i = 0;
    do {
        if (!scan_debug_entry(j, k, i++))
            return false;
    } while (scan_char(j, ','));
    return scan_char(j, ']');
}

/* One dve_table element: an L2 opcode 0..255 into the engine's table. */
static void table_add(debug_sink_t *k, bool isnum, double v, int i)
{
    if (k->rc)
        return;
    if (!isnum || v < 0 || v > 255 || v != (double)(int)v) {
        k->rc = tpb_errf(k->err, "%s: dve_table[%d]: must be an opcode 0..255", k->path, i);
        return;
    }
    k->e->has_table = true;
    k->e->table[(int)v >> 5] |= 1u << ((int)v & 31);
}

/* The value of "dve_table": an array of opcodes. */
static bool scan_table(scan_t *j, debug_sink_t *k)
{
    k->e->has_table = true;
    memset(k->e->table, 0, sizeof k->e->table);
    if (!scan_peek(j, '[')) {
        scan_val_t v = { .want_num = false };
        if (!scan_value(j, &v, 1))
            return false;
        if (!k->rc)
            k->rc = tpb_errf(k->err, "%s: field dve_table must be an array", k->path);
        return true;
    }
    j->p++;
    if (scan_char(j, ']'))
        return true;
    int i = 0;
    do {
        scan_val_t v = { .want_num = true };
        if (!scan_value(j, &v, 2))
            return false;
        table_add(k, v.kind == SV_NUMBER, v.num, i++);
    } while (scan_char(j, ','));
    return scan_char(j, ']');
}

/* The whole document; false = not plain JSON, let cJSON decide.  Like
 * cJSON, whatever follows the root value is not looked at. */
static bool scan_document(scan_t *j, size_t len, debug_sink_t *k)
{
    if (!scan_peek(j, '{')) {
        scan_val_t v = { .want_num = false };
        return scan_value(j, &v, 0);
    }
    j->p++;
    if (scan_char(j, '}'))
        return true;
    bool have_debug = false, have_form = false;
    do {
        const char *key;
        size_t kn;
        if (!scan_string(j, &key, &kn) || !scan_char(j, ':'))
            return false;
        if (!have_form && key_is(key, kn, "debug_form")) {
            /* the form must be known before the entries: after them, let
             * cJSON (which looks it up first) decide */
            have_form = true;
            scan_val_t v = { .want_num = false };
            if (have_debug || !scan_value(j, &v, 1))
                return false;
            k->compact = v.kind == SV_STRING && key_is(v.s, v.n, "compact");
        } else if (!have_debug && key_is(key, kn, "debug")) {
            have_debug = true;
            if (!scan_debug(j, k, len))
                return false;
        } else if (key_is(key, kn, "dve_table")) {
            if (!scan_table(j, k))
                return false;
        } else {
            scan_val_t v = { .want_num = false };
            if (!scan_value(j, &v, 1))
                return false;
        }
    } while (scan_char(j, ','));
    return scan_char(j, '}');
}

/* The whole text is one value followed by whitespace only (what
 * tpb_json_parse requires too). */
static bool scan_sidecar(const uint8_t *buf, size_t len, debug_sink_t *k)
{
    scan_t j = { (const char *)buf, (const char *)buf + len };
    if (!scan_document(&j, len, k))
        return false;
    scan_ws(&j);
    return j.p == j.end;
}

/* ---- the cJSON path ---- */

static sink_str_t cjson_str(const cJSON *v)
{
    return cJSON_IsString(v) ? (sink_str_t){v->valuestring, strlen(v->valuestring)}
                             : (sink_str_t){NULL, 0};
}

static int parse_with_cjson(const uint8_t *buf, size_t len, debug_sink_t *k)
{
    tpb_arena_t arena = { 0 };   /* the tree is only read: no malloc/free per node */
    cJSON *root;
    if (tpb_json_parse_arena(&arena, buf, len, k->path, &root, k->err)) {
        tpb_arena_free(&arena);
        return -1;
    }
    k->compact = tpb_sidecar_is_compact(root);
    const cJSON *tab = cJSON_GetObjectItemCaseSensitive(root, "dve_table");
    if (tab) {
        k->e->has_table = true;
        memset(k->e->table, 0, sizeof k->e->table);
        if (!cJSON_IsArray(tab))
            k->rc = tpb_errf(k->err, "%s: field dve_table must be an array", k->path);
        int i = 0;
        const cJSON *j;
        cJSON_ArrayForEach(j, tab)
        {
            table_add(k, cJSON_IsNumber(j), cJSON_IsNumber(j) ? j->valuedouble : 0, i);
            i++;
        }
    }
    const cJSON *dbg = cJSON_GetObjectItemCaseSensitive(root, "debug");
    if (!k->rc && dbg && !cJSON_IsArray(dbg)) {
        k->rc = tpb_errf(k->err, "%s: field debug must be an array", k->path);
    } else if (!k->rc && dbg) {
        sink_begin(k, len);
        int i = 0;
        const cJSON *j;
        cJSON_ArrayForEach(j, dbg)
        {
            if (k->rc || !k->active)
                break;
            const cJSON *pc = cJSON_GetObjectItemCaseSensitive(j, "pc");
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "src");
            const cJSON *buf = cJSON_GetObjectItemCaseSensitive(j, "buf");
            sink_entry(k, i, (sink_ent_t){ !pc ? PC_ABSENT : cJSON_IsNumber(pc) ? PC_NUMBER
                                                                            : PC_OTHER,
                                           cJSON_IsNumber(pc) ? pc->valuedouble : 0,
                                           cjson_str(name), cjson_str(src), cjson_str(buf),
                                           name != NULL, src != NULL, buf != NULL,
                                           cJSON_IsObject(j) });
            i++;
        }
    }
    tpb_arena_free(&arena); /* the stored strings were copied into e->debug */
    return k->rc;
}

/* ---- entry points ---- */

void sim_debug_free(sim_engine_t *e)
{
    tpb_array_free(e->debug, e->debug_bytes);
    e->debug = NULL;
    e->debug_bytes = 0;
    e->has_table = false;
    memset(e->table, 0, sizeof e->table);
}

int sim_sidecar_parse(sim_engine_t *e, const char *path, const uint8_t *buf, size_t len,
                      bool fast, bool *scanned, tpb_err_t *err)
{
    sim_debug_free(e);
    debug_sink_t k = { .e = e, .path = path, .err = err, .prev_pc = -1 };
    bool ok = fast && scan_sidecar(buf, len, &k);
    if (scanned)
        *scanned = ok;
    if (ok)
        return k.rc ? -1 : 0;
    /* not plain JSON: start over with cJSON */
    sim_debug_free(e);
    debug_sink_t c = { .e = e, .path = path, .err = err, .prev_pc = -1 };
    return parse_with_cjson(buf, len, &c) ? -1 : 0;
}
