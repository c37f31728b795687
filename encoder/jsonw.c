/* jsonw.c - streaming JSON writer, byte-compatible with cJSON_Print
 * (cJSON 1.7.x formatted output).  See jsonw.h. */
#include "jsonw.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jw_init(jw_t *w) { memset(w, 0, sizeof *w); }

void jw_init_file(jw_t *w, FILE *f)
{
    jw_init(w);
    w->sink = f;
}

/* Write out the buffered text (sink mode). */
static bool drain(jw_t *w)
{
    if (!w->len)
        return true;
    if (fwrite(w->buf, 1, w->len, w->sink) != w->len) {
        w->oom = w->io_error = true;
        return false;
    }
    w->len = 0;
    w->buf[0] = 0;
    return true;
}

void jw_free(jw_t *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}

static bool grow(jw_t *w, size_t n)
{
    if (w->oom)
        return false;
    if (w->sink) {
        if (!drain(w))
            return false;
        if (n + 1 <= w->cap)
            return true;
    }
    size_t nc = w->cap ? w->cap : w->sink ? JW_CHUNK : 4096;
    while (nc < w->len + n + 1)
        nc *= 2;
    char *p = realloc(w->buf, nc);
    if (!p) {
        w->oom = true;
        return false;
    }
    w->buf = p;
    w->cap = nc;
    return true;
}

/* Room for n more bytes and the terminating NUL. */
static inline bool reserve(jw_t *w, size_t n)
{
    return (w->len + n + 1 <= w->cap && !w->oom) || grow(w, n);
}

static inline void put(jw_t *w, const char *s, size_t n)
{
    if (!reserve(w, n))
        return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = 0;
}

static inline void putc1(jw_t *w, char c)
{
    if (!reserve(w, 1))
        return;
    w->buf[w->len++] = c;
    w->buf[w->len] = 0;
}

static void tabs(jw_t *w, int n)
{
    if (n <= 0 || !reserve(w, (size_t)n))
        return;
    memset(w->buf + w->len, '\t', (size_t)n);
    w->len += (size_t)n;
    w->buf[w->len] = 0;
}

/* Before a value: the ", " separator when it is not the first element of an
 * array (object members are separated in jw_key). */
static void before_value(jw_t *w)
{
    if (w->depth <= 0 || w->depth > JW_MAX_DEPTH || w->is_obj[w->depth - 1])
        return;
    if (w->has_item[w->depth - 1])
        put(w, ", ", 2);
    w->has_item[w->depth - 1] = true;
}

static void open_container(jw_t *w, bool obj)
{
    before_value(w);
    putc1(w, obj ? '{' : '[');
    if (w->depth >= JW_MAX_DEPTH) {
        w->oom = true;   /* deeper than any document we write */
        return;
    }
    w->is_obj[w->depth] = obj;
    w->has_item[w->depth] = false;
    w->depth++;
    if (obj)
        putc1(w, '\n');
}

void jw_obj_begin(jw_t *w) { open_container(w, true); }
void jw_arr_begin(jw_t *w) { open_container(w, false); }

void jw_obj_end(jw_t *w)
{
    if (w->depth <= 0)
        return;
    if (w->has_item[w->depth - 1])
        putc1(w, '\n');
    tabs(w, w->depth - 1);
    putc1(w, '}');
    w->depth--;
}

void jw_arr_end(jw_t *w)
{
    if (w->depth <= 0)
        return;
    putc1(w, ']');
    w->depth--;
}

/* cJSON's print_string_ptr: " \\ \b \f \n \r \t get short escapes, other
 * bytes below 32 become \u00xx, everything else is copied.  o has room for
 * 6 bytes per input byte plus the quotes; returns the end. */
static char *escape_into(char *o, const char *s)
{
    *o++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char ch = *p;
        if (ch >= 32 && ch != '"' && ch != '\\') {
            *o++ = (char)ch;
            continue;
        }
        *o++ = '\\';
        switch (ch) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default: {
            static const char hex[] = "0123456789abcdef";
            *o++ = 'u', *o++ = '0', *o++ = '0';
            *o++ = hex[ch >> 4], *o++ = hex[ch & 15];
            break;
        }
        }
    }
    *o++ = '"';
    return o;
}

/* Reserve the worst case (6 bytes per input byte) and escape in place. */
static void put_string(jw_t *w, const char *s)
{
    if (!s)
        s = "";
    if (!reserve(w, 6 * strlen(s) + 2))
        return;
    w->len = (size_t)(escape_into(w->buf + w->len, s) - w->buf);
    w->buf[w->len] = 0;
}

void jw_key(jw_t *w, const char *key)
{
    if (w->depth <= 0)
        return;
    bool sep = w->has_item[w->depth - 1];
    w->has_item[w->depth - 1] = true;
    if (!key)
        key = "";
    /* [",\n"] tabs "key" ":\t" in one go */
    if (!reserve(w, 2 + (size_t)w->depth + 6 * strlen(key) + 2 + 2))
        return;
    char *o = w->buf + w->len;
    if (sep)
        *o++ = ',', *o++ = '\n';
    for (int i = 0; i < w->depth; i++)
        *o++ = '\t';
    o = escape_into(o, key);
    *o++ = ':', *o++ = '\t';
    w->len = (size_t)(o - w->buf);
    w->buf[w->len] = 0;
}

void jw_str(jw_t *w, const char *s)
{
    before_value(w);
    put_string(w, s);
}

static void put_decimal(jw_t *w, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[sizeof tmp - 1 - n++] = '-';
    put(w, tmp + sizeof tmp - n, (size_t)n);
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
 * so they take a printf-free path. */
static void put_number(jw_t *w, double d)
{
    if (isnan(d) || isinf(d)) {
        put(w, "null", 4);
        return;
    }
    if (fabs(d) < 1e15 && d == (double)(long long)d && !(d == 0.0 && signbit(d))) {
        put_decimal(w, (long long)d);
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
    put(w, buf, (size_t)n);
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
        put_decimal(w, v);
    else
        put_number(w, (double)v);
}

int jw_finish(jw_t *w)
{
    if (w->sink && !w->oom)
        drain(w);
    return w->oom || w->depth != 0 ? -1 : 0;
}
