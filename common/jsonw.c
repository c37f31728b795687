/* jsonw.c - the one JSON writer: fast append buffer (jb_*) and cJSON_Print-compatible structure (jw_*); see jsonw.h. */
#include "jsonw.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hugepage.h"
#include "smallfmt.h"

/* 256 KiB: large enough that write() calls are few, small enough to stay in
 * the L2 cache while the kernel copies it out. */
#define JB_DEFAULT_CAP (256u * 1024u)

static int jb_init(jb_t *b, FILE *f, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->f = f;
    b->cap = cap ? cap : JB_DEFAULT_CAP;
    /* a file writer's 256 KiB chunk is a 2 MiB page (hugepage.h): one
     * fault where malloc's fresh mapping took 64 per sidecar; a small
     * chunk is malloc'ed, its pages faulted in only as far as written */
    b->buf = tpb_array_grow(NULL, 0, b->cap);
    if (!b->buf) {
        b->cap = 0;
        b->failed = true;
        return -1;
    }
    return 0;
}

int jb_init_file(jb_t *b, FILE *f, size_t cap)
{
    return jb_init(b, f, cap);
}

int jb_init_mem(jb_t *b, size_t cap)
{
    return jb_init(b, NULL, cap);
}

void jb_init_lent(jb_t *b, FILE *f, char *buf, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->f = f;
    b->buf = buf;
    b->cap = cap;
    b->lent = true;
}

void jb_free(jb_t *b)
{
    if (!b->lent)
        tpb_array_free(b->buf, b->cap);
    memset(b, 0, sizeof *b);
}

bool jb_failed(const jb_t *b)
{
    return b->failed;
}

void jb_flush(jb_t *b)
{
    if (!b->f || b->failed || !b->len)
        return;
    if (fwrite(b->buf, 1, b->len, b->f) != b->len)
        b->failed = b->io_error = true;
    b->len = 0;
}

static bool jb_grow(jb_t *b, size_t need)
{
    size_t cap = b->cap ? b->cap : JB_DEFAULT_CAP;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    /* a lent chunk stays the caller's: the text moves to a block of our own */
    char *p = tpb_array_grow(b->lent ? NULL : b->buf, b->lent ? 0 : b->cap, cap);
    if (p && b->lent) {
        memcpy(p, b->buf, b->len);
        b->lent = false;
    }
    if (!p) {
        b->failed = true;
        return false;
    }
    b->buf = p;
    b->cap = cap;
    return true;
}

bool jb_reserve_slow(jb_t *b, size_t n)
{
    if (b->failed)
        return false;
    if (n <= b->cap - b->len)
        return true;
    if (b->f) {
        jb_flush(b);
        if (b->failed)
            return false;
        if (n <= b->cap)
            return true;
    }
    if (b->len > SIZE_MAX - n) {
        b->failed = true;
        return false;
    }
    return jb_grow(b, b->len + n);
}

void jb_put_slow(jb_t *b, const char *s, size_t n)
{
    if (b->f && n > b->cap) {
        /* larger than the whole buffer: write it through */
        jb_flush(b);
        if (!b->failed && n && fwrite(s, 1, n, b->f) != n)
            b->failed = b->io_error = true;
        return;
    }
    if (!jb_reserve(b, n))
        return;
    memcpy(b->buf + b->len, s, n);
    b->len += n;
}

void jb_u64(jb_t *b, uint64_t v)
{
    if (!jb_reserve(b, 20))
        return;
    /* the digits go straight to their place */
    size_t n = tpb_u64_ndigits(v);
    tpb_u64_digits(v, b->buf + b->len + n);
    b->len += n;
}

void jb_i64(jb_t *b, int64_t v)
{
    if (v < 0) {
        jb_putc(b, '-');
        jb_u64(b, (uint64_t)0 - (uint64_t)v); /* also right for INT64_MIN */
    } else {
        jb_u64(b, (uint64_t)v);
    }
}

void jb_us(jb_t *b, uint64_t ps)
{
    if (!jb_reserve(b, 20 + 1 + 6))
        return;
    jb_u64(b, ps / 1000000u);
    char *p = b->buf + b->len;
    unsigned frac = (unsigned)(ps % 1000000u);
    p[0] = '.';
    for (int i = 6; i >= 1; i--) {
        p[i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    b->len += 7;
}

/* Bytes that need escaping: '"', '\\' and the control characters. */
static bool needs_escape(unsigned char c)
{
    return c == '"' || c == '\\' || c < 0x20;
}

/* Whether any of the 8 bytes of w needs escaping (exact: the classic
 * "has a zero byte" / "has a byte less than n" bit tricks). */
static bool word_needs_escape(uint64_t w) { return jw_escape_bits(w) != 0; }

/* Escape s[0..n) into out (room for 6 bytes per input byte and 8 more): '"' and '\\'
 * get a backslash, other bytes below 0x20 become \u00xx, or with `cjson`
 * the short forms \b \f \n \r \t first (cJSON's print_string_ptr). */
/* s[0..n), n <= 16, copied to out when no byte needs escaping: two
 * overlapping loads of the string's own bytes, no padding copy (names,
 * paths, op kinds); false (nothing written) otherwise. */
static inline bool short_plain(char *out, const char *s, size_t n)
{
    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        if (word_needs_escape(a) || word_needs_escape(b))
            return false;
        memcpy(out, &a, 8);
        memcpy(out + n - 8, &b, 8);
        return true;
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        if (word_needs_escape((uint64_t)a | (uint64_t)b << 32))
            return false;
        memcpy(out, &a, 4);
        memcpy(out + n - 4, &b, 4);
        return true;
    }
    if (n == 0)
        return true;
    unsigned char c0 = (unsigned char)s[0], c1 = (unsigned char)s[n / 2],
                  c2 = (unsigned char)s[n - 1];
    if (word_needs_escape(0x6161616161000000ull | (uint64_t)c2 << 16 | (uint64_t)c1 << 8 | c0))
        return false;
    out[0] = (char)c0;
    out[n / 2] = (char)c1;
    out[n - 1] = (char)c2;
    return true;
}

static size_t escape_into(char *out, const char *s, size_t n, bool cjson)
{
    static const char hex[] = "0123456789abcdef";
    if (n <= 16 && short_plain(out, s, n))
        return n;
    if (n > 16 && n <= 24) {   /* three words, the last ending the string (op names with a number) */
        uint64_t a, b, c;
        memcpy(&a, s, 8);
        memcpy(&b, s + 8, 8);
        memcpy(&c, s + n - 8, 8);
        if (!word_needs_escape(a) && !word_needs_escape(b) && !word_needs_escape(c)) {
            memcpy(out, &a, 8);
            memcpy(out + 8, &b, 8);
            memcpy(out + n - 8, &c, 8);
            return n;
        }
    }
    char *o = out;
    size_t i = 0;
    bool chunk = false;   /* the last step copied 8 plain bytes as they are */
    while (i < n) {
        uint64_t w;
        if (i + 8 <= n && (memcpy(&w, s + i, 8), !word_needs_escape(w))) {
            memcpy(o, &w, 8);
            o += 8;
            i += 8;
            chunk = true;
            continue;
        }
        if (i + 8 > n && chunk) {
            /* the last 1..7 bytes: the 8 ending the string, whose first
             * bytes went out unchanged just before */
            memcpy(&w, s + n - 8, 8);
            if (!word_needs_escape(w)) {
                memcpy(o + (n - i) - 8, &w, 8);
                o += n - i;
                break;
            }
        }
        chunk = false;
        if (i + 8 > n) {
            /* the last 1..7 bytes, padded with a plain byte: one test when
             * none needs escaping (short strings: keys, names) */
            w = 0x6161616161616161ull;
            memcpy(&w, s + i, n - i);
            if (!word_needs_escape(w)) {
                memcpy(o, &w, 8);   /* out has room for 6 bytes per byte left */
                o += n - i;
                break;
            }
        }
        unsigned char c = (unsigned char)s[i++];
        if (!needs_escape(c)) {
            *o++ = (char)c;
        } else if (c == '"' || c == '\\') {
            *o++ = '\\';
            *o++ = (char)c;
        } else if (cjson && (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t')) {
            *o++ = '\\';
            *o++ = c == '\b' ? 'b' : c == '\f' ? 'f' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else {
            memcpy(o, "\\u00", 4);
            o[4] = hex[c >> 4];
            o[5] = hex[c & 15];
            o += 6;
        }
    }
    return (size_t)(o - out);
}

/* Pieces escaped at a time: bounds the room reserved for the worst case. */
#define JB_ESCAPE_CHUNK 4096u

static void jstr_body(jb_t *b, const char *s, bool cjson)
{
    if (!s)
        return;
    size_t n = strlen(s);
    while (n) {
        size_t k = n < JB_ESCAPE_CHUNK ? n : JB_ESCAPE_CHUNK;
        if (!jb_reserve(b, 6 * k + 8))   /* + 8: escape_into's tail word */
            return;
        b->len += escape_into(b->buf + b->len, s, k, cjson);
        s += k;
        n -= k;
    }
}

void jb_jstr_body(jb_t *b, const char *s)
{
    jstr_body(b, s, false);
}

void jb_cjson_str(jb_t *b, const char *s)
{
    jb_putc(b, '"');
    jstr_body(b, s, true);
    jb_putc(b, '"');
}

void jb_cjson_member(jb_t *b, const char *key, size_t n, const char *s)
{
    jb_putc(b, '"');
    jb_put(b, key, n);
    jb_lit(b, "\":");
    jb_cjson_str(b, s);
}

void jb_jstr(jb_t *b, const char *s)
{
    jb_putc(b, '"');
    jb_jstr_body(b, s);
    jb_putc(b, '"');
}

void jb_printf(jb_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    /* +1: vsnprintf writes its terminating NUL too (jb_reserve grows even a
     * FILE buffer when the text is longer than the whole buffer) */
    if (!jb_reserve(b, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* ---- jw_t: cJSON_Print's layout on a jb_t ---- */

void jw_init(jw_t *w)
{
    memset(w, 0, sizeof *w);
    jb_init_mem(&w->b, 4096);
}

void jw_init_file(jw_t *w, FILE *f)
{
    jw_init_file_cap(w, f, JW_CHUNK);
}

void jw_init_file_cap(jw_t *w, FILE *f, size_t cap)
{
    memset(w, 0, sizeof *w);
    jb_init_file(&w->b, f, cap && cap < JW_CHUNK ? cap : JW_CHUNK);
}

void jw_init_file_lent(jw_t *w, FILE *f, char *buf, size_t cap)
{
    memset(w, 0, sizeof *w);
    jb_init_lent(&w->b, f, buf, cap);
}

void jw_set_compact(jw_t *w)
{
    w->compact = true;
}

void jw_free(jw_t *w)
{
    jb_free(&w->b);
    memset(w, 0, sizeof *w);
}

static void tabs(jw_t *w, int n)
{
    if (w->compact || n <= 0 || !jb_reserve(&w->b, (size_t)n + 8))
        return;
    if (n <= 8)   /* one store (8 bytes reserved past them) */
        memcpy(w->b.buf + w->b.len, "\t\t\t\t\t\t\t\t", 8);
    else
        memset(w->b.buf + w->b.len, '\t', (size_t)n);
    w->b.len += (size_t)n;
}

/* Before a value: the ", " separator when it is not the first element of an
 * array (object members are separated in jw_key). */
static inline void before_value(jw_t *w)
{
    if (w->depth <= 0 || w->depth > JW_MAX_DEPTH || w->is_obj[w->depth - 1])
        return;
    if (w->has_item[w->depth - 1]) {
        if (w->compact)
            jb_putc(&w->b, ',');
        else
            jb_lit(&w->b, ", ");
    }
    w->has_item[w->depth - 1] = true;
}

static inline void open_container(jw_t *w, bool obj)
{
    before_value(w);
    jb_putc(&w->b, obj ? '{' : '[');
    if (w->depth >= JW_MAX_DEPTH) {
        w->b.failed = true;   /* deeper than any document we write */
        return;
    }
    w->is_obj[w->depth] = obj;
    w->has_item[w->depth] = false;
    w->depth++;
    if (obj && !w->compact)
        jb_putc(&w->b, '\n');
}

void jw_obj_begin(jw_t *w) { open_container(w, true); }
void jw_arr_begin(jw_t *w) { open_container(w, false); }

void jw_obj_end(jw_t *w)
{
    if (w->depth <= 0)
        return;
    if (w->has_item[w->depth - 1] && !w->compact)
        jb_putc(&w->b, '\n');
    tabs(w, w->depth - 1);
    jb_putc(&w->b, '}');
    w->depth--;
}

void jw_arr_end(jw_t *w)
{
    if (w->depth <= 0)
        return;
    jb_putc(&w->b, ']');
    w->depth--;
}

/* The longest string written with one reservation (the common case: keys,
 * names); longer ones go through jstr_body's chunks. */
#define JW_SHORT_STR 256u

static void put_cjson_string(jw_t *w, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (n <= JW_SHORT_STR && jb_reserve(&w->b, 6 * n + 2 + 8)) {
        char *o = w->b.buf + w->b.len;
        *o++ = '"';
        o += escape_into(o, s, n, true);
        *o++ = '"';
        w->b.len = (size_t)(o - w->b.buf);
        return;
    }
    jb_putc(&w->b, '"');
    jstr_body(&w->b, s, true);
    jb_putc(&w->b, '"');
}

/* The slow half of jw_key: a long key, or the buffer must drain or grow. */
static void key_slow(jw_t *w, const char *key, bool sep)
{
    if (sep && w->compact)
        jb_putc(&w->b, ',');
    else if (sep)
        jb_lit(&w->b, ",\n");
    tabs(w, w->depth);
    put_cjson_string(w, key);
    if (w->compact)
        jb_putc(&w->b, ':');
    else
        jb_lit(&w->b, ":\t");
}

/* put_key's text at o (room reserved: 2 + ntab + 6 * n + 4 + 8 bytes). */
static inline char *key_into(const jw_t *w, char *o, const char *key, size_t n, bool plain,
                             bool sep, size_t ntab)
{
    if (sep) {
        *o++ = ',';
        if (!w->compact)
            *o++ = '\n';
    }
    if (ntab <= 8) {   /* one store: the reservation has 8 bytes to spare */
        memcpy(o, "\t\t\t\t\t\t\t\t", 8);
        o += ntab;
    } else {
        for (size_t i = 0; i < ntab; i++)
            *o++ = '\t';
    }
    *o++ = '"';
    if (plain) {
        tpb_copy_short(o, key, n);
        o += n;
    } else {
        o += escape_into(o, key, n, true);
    }
    *o++ = '"';
    *o++ = ':';
    if (!w->compact)
        *o++ = '\t';
    return o;
}

/* The key of the next member: [",\n"] tabs "key" ":\t" (compact: no
 * whitespace), written with one reservation; `plain`: key[0..n) needs no
 * escaping. */
static void put_key(jw_t *w, const char *key, size_t n, bool plain)
{
    if (w->depth <= 0)
        return;
    bool sep = w->has_item[w->depth - 1];
    w->has_item[w->depth - 1] = true;
    size_t ntab = w->compact ? 0 : (size_t)w->depth;
    if (n > JW_SHORT_STR || !jb_reserve(&w->b, 2 + ntab + 6 * n + 2 + 2 + 8)) {
        key_slow(w, key, sep);
        return;
    }
    char *o = key_into(w, w->b.buf + w->b.len, key, n, plain, sep, ntab);
    w->b.len = (size_t)(o - w->b.buf);
}

void jw_key(jw_t *w, const char *key)
{
    if (!key)
        key = "";
    put_key(w, key, strlen(key), false);
}

void jw_key_plain(jw_t *w, const char *key, size_t n)
{
    put_key(w, key, n, true);
}

/* The shared start of the jw_member_* writers: when the innermost container
 * is an object, the key is short and `room` more bytes (the value's worst
 * case) fit after the key, write the key with one reservation and return
 * where the value goes; NULL (nothing written) sends the caller to the
 * general path, which writes the same bytes. */
static inline __attribute__((always_inline)) char *member_begin(jw_t *w, const char *key,
                                                                  size_t n, size_t room)
{
    size_t ntab = w->compact ? 0 : (size_t)w->depth;
    if (w->depth <= 0 || !w->is_obj[w->depth - 1] || n > JW_SHORT_STR ||
        !jb_reserve(&w->b, 2 + ntab + n + 4 + room + 8))
        return NULL;
    bool sep = w->has_item[w->depth - 1];
    w->has_item[w->depth - 1] = true;
    return key_into(w, w->b.buf + w->b.len, key, n, true, sep, ntab);
}

size_t jw_quoted_long(char *o, const char *s, size_t n)
{
    o[0] = '"';
    size_t k = escape_into(o + 1, s, n, true);
    o[k + 1] = '"';
    return k + 2;
}

void jw_member_str(jw_t *w, const char *key, size_t n, const char *s)
{
    if (!s)
        s = "";
    size_t ns = strlen(s);
    char *o = ns <= JW_SHORT_STR ? member_begin(w, key, n, 6 * ns + 2) : NULL;
    if (!o) {
        jw_key_plain(w, key, n);   /* the general path, the same bytes */
        jw_str(w, s);
        return;
    }
    w->b.len = (size_t)(o + jw_quoted_into(o, s, ns) - w->b.buf);
}

size_t jw_int_into(char *o, long long v)
{
    char *s = o;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        *o++ = '-';
        u = (uint64_t)0 - u;
    }
    size_t nd = tpb_u64_ndigits(u);
    tpb_u64_digits(u, o + nd);
    return (size_t)(o + nd - s);
}

void jw_member_int(jw_t *w, const char *key, size_t n, long long v)
{
    /* jw_int's integer form: |v| < 10^15 (else put_number) */
    char *o = v > -1000000000000000LL && v < 1000000000000000LL ? member_begin(w, key, n, 21)
                                                                 : NULL;
    if (!o) {
        jw_key_plain(w, key, n);   /* the general path, the same bytes */
        jw_int(w, v);
        return;
    }
    w->b.len = (size_t)(o + jw_int_into(o, v) - w->b.buf);
}

/* memo's digits plus d (0 < d < 100) in place; false when a carry would
 * add a digit (then the caller writes them from scratch). */
static bool digits_add(jw_num_memo_t *m, unsigned d)
{
    for (int i = (int)m->n - 1; i >= 0 && d; i--) {
        unsigned x = (unsigned)(m->d[i] - '0') + d;
        m->d[i] = (char)('0' + x % 10);
        d = x / 10;
    }
    return d == 0;
}

size_t jw_num_memo_long(jw_num_memo_t *memo, long long v, char *o)
{
    long long d = v - memo->v;
    if (!memo->n || d < 0 || d >= 100 || (d && !digits_add(memo, (unsigned)d))) {
        memo->n = (uint8_t)tpb_u64_ndigits((uint64_t)v);   /* (over a failed digits_add) */
        tpb_u64_digits((uint64_t)v, memo->d + memo->n);
    }
    memo->v = v;
    memcpy(o, memo->d, sizeof memo->d);   /* the caller has that much room */
    return memo->n;
}

void jw_member_int_memo(jw_t *w, const char *key, size_t n, long long v, jw_num_memo_t *memo)
{
    /* jw_int's integer form, non-negative: the digits alone */
    char *o = v >= 0 && v < 1000000000000000LL ? member_begin(w, key, n, sizeof memo->d) : NULL;
    if (!o) {
        jw_key_plain(w, key, n);   /* the general path, the same bytes */
        jw_int(w, v);
        return;
    }
    w->b.len = (size_t)(o + jw_num_memo_into(memo, v, o) - w->b.buf);
}

void jw_member_raw(jw_t *w, const char *key, size_t n, const char *json, size_t len)
{
    char *o = member_begin(w, key, n, len);
    if (!o) {
        jw_key_plain(w, key, n);   /* the general path, the same bytes */
        before_value(w);
        jb_put(&w->b, json, len);
        return;
    }
    tpb_copy_short(o, json, len);   /* no call for the short values */
    w->b.len = (size_t)(o + len - w->b.buf);
}


bool jw_member_text(jw_t *w, const char *text, size_t len)
{
    /* the separator and the text: key_into's compact bytes, then the value */
    if (!w->compact || w->depth <= 0 || !w->is_obj[w->depth - 1] || !jb_reserve(&w->b, len + 1))
        return false;
    char *o = jw_compact_sep(w);
    if (len > 16 && len <= 32) {   /* mostly: "buf" and "src" members, no call */
        tpb_copy_short(o, text, 16);
        tpb_copy_short(o + len - 16, text + len - 16, 16);
    } else {
        tpb_copy_short(o, text, len);
    }
    w->b.len = (size_t)(o + len - w->b.buf);
    return true;
}

void jw_str(jw_t *w, const char *s)
{
    before_value(w);
    put_cjson_string(w, s);
}

/* cJSON's compare_double: equal within a relative DBL_EPSILON. */
static bool same_double(double a, double b)
{
    double mx = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= mx * DBL_EPSILON;
}

/* cJSON's print_number (1.7.15): NaN/Inf as null, otherwise %1.15g unless
 * that does not read back, then %1.17g; the locale's decimal point printed
 * as '.'.  Integral values below 1e15 come out of %1.15g as plain decimals,
 * so they take the integer path. */
static void put_number(jw_t *w, double d)
{
    if (isnan(d) || isinf(d)) {
        jb_lit(&w->b, "null");
        return;
    }
    if (fabs(d) < 1e15 && d == (double)(long long)d && !(d == 0.0 && signbit(d))) {
        jb_i64(&w->b, (int64_t)d);
        return;
    }
    char buf[32];
    double test = 0.0;
    int n = snprintf(buf, sizeof buf, "%1.15g", d);
    if (sscanf(buf, "%lg", &test) != 1 || !same_double(test, d))
        n = snprintf(buf, sizeof buf, "%1.17g", d);
    const struct lconv *lc = localeconv();
    char dp = lc && lc->decimal_point ? lc->decimal_point[0] : '.';
    for (int i = 0; i < n; i++)
        if (buf[i] == dp)
            buf[i] = '.';
    jb_put(&w->b, buf, (size_t)n);
}

void jw_num(jw_t *w, double d)
{
    before_value(w);
    put_number(w, d);
}

void jw_int(jw_t *w, long long v)
{
    before_value(w);
    if (v > -1000000000000000LL && v < 1000000000000000LL)
        jb_i64(&w->b, (int64_t)v);
    else
        put_number(w, (double)v);
}

int jw_finish(jw_t *w)
{
    if (w->b.f)
        jb_flush(&w->b);
    else if (jb_reserve(&w->b, 1))
        w->b.buf[w->b.len] = 0; /* a C string for the caller; not counted */
    return w->b.failed || w->depth != 0 ? -1 : 0;
}
