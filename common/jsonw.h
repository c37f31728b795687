/* jsonw.h - the one JSON writer (docs/reliability.md): a fast append
 * buffer (jb_*, below) that writes large files such as the trace, and on top
 * of it a structured writer (jw_*) whose output is byte-identical to
 * cJSON_Print() for the sidecars.  Integers, number formatting and string
 * escaping are written once, here.
 *
 * ---- jb_t: the buffer ----
 *
 * The trace of a big run has hundreds of thousands of events; formatting
 * them with the printf family costs far more than the simulation itself.
 * jb_t appends literals, integers, fixed-point microseconds and escaped
 * strings with plain loops and memcpy, and writes to its FILE in large
 * chunks.  Every formatter produces exactly the bytes of the printf
 * conversion it replaces (see each function), so the output does not change.
 *
 * A jb_t either drains into a FILE when full (jb_init_file) or grows in
 * memory (jb_init_mem, f == NULL).  Errors (out of memory, short write) are
 * sticky: later appends do nothing and jb_failed() reports them. */
#ifndef TPB_JSONW_H
#define TPB_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    FILE *f;          /* drain target, or NULL: grow in memory */
    char *buf;
    size_t len, cap;  /* bytes used / allocated */
    bool failed;      /* out of memory or write error (sticky) */
    bool io_error;    /* a write to f failed */
    bool lent;        /* buf is the caller's (jb_init_lent): not freed here */
} jb_t;

/* Buffer that drains into f every `cap` bytes (cap 0: a default size). */
int jb_init_file(jb_t *b, FILE *f, size_t cap);
/* Growable in-memory buffer (starts with `cap` bytes, 0: a default). */
int jb_init_mem(jb_t *b, size_t cap);
/* The same as jb_init_file over the caller's chunk buf[0..cap) (cap > 0),
 * which it keeps: jb_free leaves it, and a reservation larger than the
 * chunk moves the text to a block of the buffer's own.  Writers that run
 * one after another can so share one chunk, paid for (faulted in) once. */
void jb_init_lent(jb_t *b, FILE *f, char *buf, size_t cap);
void jb_free(jb_t *b);
/* Write what is buffered to the FILE (no-op for memory buffers). */
void jb_flush(jb_t *b);
bool jb_failed(const jb_t *b);

/* Out-of-line halves of the inline functions below. */
bool jb_reserve_slow(jb_t *b, size_t n);
void jb_put_slow(jb_t *b, const char *s, size_t n);

/* Make room for n more bytes (drains or grows); false when failed. */
static inline bool jb_reserve(jb_t *b, size_t n)
{
    return (!b->failed && n <= b->cap - b->len) || jb_reserve_slow(b, n);
}

static inline void jb_put(jb_t *b, const char *s, size_t n)
{
    if (b->failed || n > b->cap - b->len) {
        jb_put_slow(b, s, n);
        return;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
}
#define jb_lit(b, s) jb_put((b), "" s "", sizeof(s) - 1)

static inline void jb_putc(jb_t *b, char c)
{
    if (!jb_reserve(b, 1))
        return;
    b->buf[b->len++] = c;
}

/* "%" PRIu64 */
void jb_u64(jb_t *b, uint64_t v);
/* "%" PRId64 */
void jb_i64(jb_t *b, int64_t v);
/* ps as microseconds: "%" PRIu64 ".%06" PRIu64 of ps/10^6, ps%10^6 */
void jb_us(jb_t *b, uint64_t ps);
/* A JSON string literal: quotes, '"' and '\\' escaped with a backslash,
 * bytes below 0x20 as \u00XX (lower-case hex), everything else verbatim;
 * NULL is written as "". */
void jb_jstr(jb_t *b, const char *s);
/* The same escaping without the surrounding quotes. */
void jb_jstr_body(jb_t *b, const char *s);
/* The string as jw_str writes it (cJSON's escaping, with the short forms
 * \b \f \n \r \t): a value text for jw_member_raw. */
void jb_cjson_str(jb_t *b, const char *s);
/* A member's text as a compact writer writes it after the separator:
 * "key":<the string as jw_str writes it> (key[0..n) plain, as for
 * jw_key_plain), for jw_member_text. */
void jb_cjson_member(jb_t *b, const char *key, size_t n, const char *s);
/* printf-style, for the few one-off lines (header, metadata). */
void jb_printf(jb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- jw_t: a streaming JSON writer whose output is byte-identical to
 * cJSON_Print() (formatted: tab indentation, "key":<TAB>value, ", " between
 * array elements, no trailing newline) for the same document.
 *
 * The sidecars (<Engine>.json) carry one debug object per instruction; for
 * kernels that unroll to 10^5..10^6 instructions building them as a cJSON
 * tree (~8 mallocs per entry, a sprintf + sscanf per number) and printing it
 * dominated compile time.  This writer appends to one growing buffer.
 *
 * Usage mirrors the document structure:
 *   jw_obj_begin(&w); jw_key(&w, "pc"); jw_int(&w, 3); jw_obj_end(&w);
 * Values inside an array are written without a key.  Out of memory is
 * sticky: check w.b.failed (or jw_finish's result) once at the end.
 *
 * With a sink (jw_init_file) the text goes to the FILE in chunks of about
 * JW_CHUNK bytes instead of one buffer the size of the document: a sidecar
 * of 10^6 entries is 100+ MB. */

#define JW_MAX_DEPTH 32
#define JW_CHUNK ((size_t)256 << 10)

typedef struct {
    jb_t b;                         /* the text (b.buf, b.len; NUL-terminated
                                       after jw_finish in memory mode); b.failed:
                                       out of memory, a failed write (b.io_error)
                                       or nesting past JW_MAX_DEPTH */
    int depth;                      /* cJSON's print depth */
    bool has_item[JW_MAX_DEPTH];    /* per open container: something written */
    bool is_obj[JW_MAX_DEPTH];
    bool compact;                   /* cJSON_PrintUnformatted()'s layout instead:
                                       no whitespace at all (jw_set_compact) */
} jw_t;

void jw_init(jw_t *w);
/* Stream to f (the caller opens and closes it); b.buf holds what is not
 * written yet. */
void jw_init_file(jw_t *w, FILE *f);
/* The same with chunks of `cap` bytes (at most JW_CHUNK): a writer that
 * knows its document is small asks for less, since a chunk from
 * TPB_ARRAY_MAP_MIN on is a 2 MiB page (one fault, but ten small ones'
 * worth; common/hugepage.h). */
void jw_init_file_cap(jw_t *w, FILE *f, size_t cap);
/* The same over the caller's chunk (jb_init_lent). */
void jw_init_file_lent(jw_t *w, FILE *f, char *buf, size_t cap);
void jw_free(jw_t *w);
/* From here on write cJSON_PrintUnformatted()'s bytes (the compact
 * sidecars, docs/artifacts.md); call before the first value. */
void jw_set_compact(jw_t *w);
void jw_obj_begin(jw_t *w);
void jw_obj_end(jw_t *w);
void jw_arr_begin(jw_t *w);
void jw_arr_end(jw_t *w);
/* The key of the next member of the innermost object. */
void jw_key(jw_t *w, const char *key);
/* The same for a key (a C string of length n) known to need no escaping (no '"', '\\'
 * or byte below 0x20): the bytes of jw_key without measuring or escaping
 * it; jw_keyl for a string literal. */
void jw_key_plain(jw_t *w, const char *key, size_t n);
#define jw_keyl(w, lit) jw_key_plain((w), "" lit "", sizeof(lit) - 1)
/* jw_key_plain(w, key, n) then jw_str(w, s), with one reservation: a member
 * of the innermost object with a plain key and a string value. */
void jw_member_str(jw_t *w, const char *key, size_t n, const char *s);
#define jw_kvl(w, lit, s) jw_member_str((w), "" lit "", sizeof(lit) - 1, (s))
/* jw_key_plain(w, key, n) then jw_int(w, v), with one reservation (the
 * debug entries' pc and op_index); jw_kvl_int for a string literal. */
void jw_member_int(jw_t *w, const char *key, size_t n, long long v);
#define jw_kvl_int(w, lit, v) jw_member_int((w), "" lit "", sizeof(lit) - 1, (v))
/* jw_member_int for a value that mostly grows by a little from one call to
 * the next (the op_index of consecutive debug entries): *memo keeps the
 * last value written through it and its digits, and a value 1..99 above it
 * is written by adding the difference to those digits instead of dividing
 * it out again; any other value, from scratch.  Zero *memo before the first
 * call. */
typedef struct {
    long long v;
    uint8_t n;   /* digits in d; 0: none yet */
    char d[24];
} jw_num_memo_t;
void jw_member_int_memo(jw_t *w, const char *key, size_t n, long long v, jw_num_memo_t *memo);
#define jw_kvl_int_memo(w, lit, v, memo) jw_member_int_memo((w), "" lit "", sizeof(lit) - 1, (v), (memo))
/* The raw items of a compact writer's array: an item whose bytes the
 * caller builds itself (a whole object), with one reservation.
 * jw_raw_item_begin writes the separator and returns where the item goes,
 * with room for `max` bytes and 8 to spare; NULL (nothing written) when
 * the writer is not compact, its innermost container is not an array,
 * one more level would pass JW_MAX_DEPTH (the general path fails there)
 * or the room cannot be had.  jw_raw_item_end(w, end) takes the bytes up
 * to end. */
/* A compact writer's separator at the end of its buffer (room reserved)
 * before the next item of the innermost container; where the item goes. */
static inline char *jw_compact_sep(jw_t *w)
{
    char *o = w->b.buf + w->b.len;
    if (w->has_item[w->depth - 1])
        *o++ = ',';
    w->has_item[w->depth - 1] = true;
    return o;
}
static inline char *jw_raw_item_begin(jw_t *w, size_t max)
{
    int d = w->depth;
    if (!w->compact || d <= 0 || d >= JW_MAX_DEPTH || w->is_obj[d - 1] ||
        !jb_reserve(&w->b, 1 + max + 8))
        return NULL;
    return jw_compact_sep(w);   /* before_value's compact separator */
}
/* jw_raw_item_begin for a writer of either layout (the separator of one
 * that is not compact: cJSON_Print's ", "). */
static inline char *jw_raw_item_begin_any(jw_t *w, size_t max)
{
    int d = w->depth;
    if (d <= 0 || d >= JW_MAX_DEPTH || w->is_obj[d - 1] || !jb_reserve(&w->b, 2 + max + 8))
        return NULL;
    char *o = w->b.buf + w->b.len;
    if (w->has_item[d - 1]) {
        *o++ = ',';
        if (!w->compact)
            *o++ = ' ';
    }
    w->has_item[d - 1] = true;
    return o;
}
static inline void jw_raw_item_end(jw_t *w, const char *end)
{
    w->b.len = (size_t)(end - w->b.buf);
}
/* A high bit in each byte of w that needs escaping ('"', '\\' or below
 * 0x20), zero when none does.  Exact per byte, no carry between bytes: a
 * byte of 0x80 or more never needs it; for the rest (t, 7 bits) t + 0x60
 * has its high bit set when t >= 0x20, and (t ^ c) + 0x7f when t != c. */
static inline uint64_t jw_escape_bits(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t t = w & ~highs;
    uint64_t ok = (t + ones * 0x60) & ((t ^ (ones * '"')) + ones * 0x7f) &
                  ((t ^ (ones * '\\')) + ones * 0x7f);
    return ~(ok | w) & highs;
}
/* jw_quoted_into's general case (any length, escapes). */
size_t jw_quoted_long(char *o, const char *s, size_t n);
/* jw_str's text of s[0..n) at o: the quotes and cJSON's escaping (room:
 * 6 n + 2 bytes and 8 to spare); the length written.  Inline for the
 * common case, a name or path of 4..16 bytes none of which needs escaping
 * (two overlapping loads of the string's own bytes, one test). */
static inline size_t jw_quoted_into(char *o, const char *s, size_t n)
{
    if (n >= 8 && n <= 16) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        if (!(jw_escape_bits(a) | jw_escape_bits(b))) {
            o[0] = '"';
            memcpy(o + 1, &a, 8);
            memcpy(o + 1 + n - 8, &b, 8);
            o[n + 1] = '"';
            return n + 2;
        }
    } else if (n >= 4 && n < 8) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        if (!jw_escape_bits((uint64_t)a | (uint64_t)b << 32)) {
            o[0] = '"';
            memcpy(o + 1, &a, 4);
            memcpy(o + 1 + n - 4, &b, 4);
            o[n + 1] = '"';
            return n + 2;
        }
    }
    return jw_quoted_long(o, s, n);
}
/* jw_int's text of v (|v| < 10^15) at o (room: 21 bytes); its length. */
size_t jw_int_into(char *o, long long v);
/* jw_num_memo_into past its inline case. */
size_t jw_num_memo_long(jw_num_memo_t *memo, long long v, char *o);
/* jw_member_int_memo's digits of v (0 <= v < 10^15) at o (room: sizeof
 * memo->d bytes), memo updated; their count.  Inline when v is the last
 * value or a little above it with no carry out of the last digit (most
 * debug entries' op_index). */
static inline size_t jw_num_memo_into(jw_num_memo_t *memo, long long v, char *o)
{
    long long d = v - memo->v;
    if (!memo->n || d < 0 || d > 9 || memo->d[memo->n - 1] + d > '9')
        return jw_num_memo_long(memo, v, o);
    memo->d[memo->n - 1] = (char)(memo->d[memo->n - 1] + d);
    memo->v = v;
    memcpy(o, memo->d, sizeof memo->d);   /* the caller has that much room */
    return memo->n;
}
/* jw_key_plain(w, key, n) then json[0..len), a value's text as jw_* would
 * write it (e.g. made by jb_cjson_str), copied as it is. */
void jw_member_raw(jw_t *w, const char *key, size_t n, const char *json, size_t len);
/* The next member of the innermost object as text[0..len) made by
 * jb_cjson_member, copied after the separator, when the writer is compact
 * and that object is innermost; false (nothing written) otherwise: then
 * the caller writes it the long way (the same bytes). */
bool jw_member_text(jw_t *w, const char *text, size_t len);
/* Values: in an array they are the next element; in an object they follow
 * jw_key. */
void jw_str(jw_t *w, const char *s);
void jw_num(jw_t *w, double d);      /* cJSON's number formatting */
void jw_int(jw_t *w, long long v);   /* same text as jw_num((double)v) */
/* 0 when the document is complete and nothing ran out of memory or failed
 * to write; with a sink, writes out the rest of the text first. */
int jw_finish(jw_t *w);

#endif
