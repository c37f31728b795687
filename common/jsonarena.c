/* jsonarena.c - JSON text to cJSON-shaped nodes in an arena (jsonarena.h).
 *
 * The grammar, the values and every position follow cJSON 1.7.15's parser
 * (cJSON_ParseWithLengthOpts), including its quirks: any byte <= 32 is a
 * blank, a blank run reaching the end of the text leaves the position on
 * its last byte, an object key that does not start with '"' fails one byte
 * past it, \u with invalid hex digits decodes as code point 0, a UTF-8 BOM
 * is skipped only in a text longer than 4 bytes.  Numbers are strtod of
 * the whole run of [0-9+-eE.]: the fix for CVE-2023-26819 (upstream
 * 1.7.19, backported into the 1.7.15 we link) dropped the original
 * 63-byte window. */
#include "jsonarena.h"

#include "hugepage.h"
#include "smallfmt.h"

#include <limits.h>
#include <locale.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

/* The keys met last, one per slot by their first two bytes (key_slot): a
 * kernel file's objects repeat a few keys ("op", "dst", ...) thousands of
 * times, and an equal plain key shares the arena copy of the last one
 * (the tree is read-only; keys are marked const) instead of a new copy. */
#define JA_KEYS 64
typedef struct {
    const char *k;   /* NULL: empty slot */
    size_t n;
    uint64_t w;      /* a key of at most 8 bytes: those bytes, zero above (key_word) */
} ja_key_t;

typedef struct {
    const unsigned char *s;
    size_t len;
    size_t off;     /* the position, as cJSON's parse_buffer.offset */
    size_t depth;   /* open arrays and objects */
    tpb_arena_t *a;
    unsigned char *cur;   /* the unused, zeroed rest of the current region */
    size_t room;          /* its bytes */
    size_t region;        /* bytes of the next region */
    char point;     /* the locale's decimal point for strtod; 0 = not looked up yet */
    bool nomem;
    ja_key_t keys[JA_KEYS];
} ja_t;

/* Nodes and strings are carved from regions the arena hands out whole
 * (zeroed), so one costs a pointer bump, not a call: 4 KiB at first, for a
 * small text, doubling up to 64 KiB (a 4 MiB arena chunk holds 63). */
#define REGION_MIN ((size_t)4 << 10)
#define REGION_MAX ((size_t)64 << 10)

/* A kernel text's tree takes about 4x its bytes (a node is 64 bytes, a
 * statement's ~80 bytes of text make ~5 of them); a bigger tree takes more
 * regions as it goes. */
#define TREE_PER_TEXT 4

static bool parse_value(ja_t *p, cJSON *item);
static bool parse_object(ja_t *p, cJSON *item);

static bool at_char(const ja_t *p, unsigned char c) { return p->off < p->len && p->s[p->off] == c; }

/* cJSON's buffer_skip_whitespace on a cursor held in a local (the
 * callers keep s, len and the position out of *p between tree stores,
 * which the compiler must otherwise assume may change them). */
static inline size_t blanks_at(const unsigned char *s, size_t len, size_t off)
{
    if (off >= len || s[off] > 32)   /* mostly: no blank here */
        return off;
    do
        off++;
    while (off < len && s[off] <= 32);
    return off == len ? off - 1 : off;
}

static void skip_blanks(ja_t *p) { p->off = blanks_at(p->s, p->len, p->off); }

/* The rare slow paths (a new region, a string with escapes) stay out of
 * line: the hot functions then need fewer saved registers per call. */
#if defined(__GNUC__)
#define JA_COLD __attribute__((noinline, cold))
#define JA_INLINE inline __attribute__((always_inline))
#else
#define JA_COLD
#define JA_INLINE inline
#endif

/* bump's case of a new region: n bytes at its start. */
static JA_COLD void *bump_region(ja_t *p, size_t n)
{
    size_t size = n > p->region ? n : p->region;
    unsigned char *r = tpb_arena_alloc(p->a, size, alignof(max_align_t));
    if (!r) {
        p->nomem = true;
        return NULL;
    }
    if (p->region < REGION_MAX)
        p->region *= 2;
    p->cur = r + n;
    p->room = size - n;
    return r;
}

/* n zeroed bytes aligned to `align` (a power of two up to max_align_t's). */
static inline void *bump(ja_t *p, size_t n, size_t align)
{
    size_t pad = (size_t)(-(uintptr_t)p->cur) & (align - 1);
    if (pad + n > p->room)   /* n is at most a text's length: no overflow */
        return bump_region(p, n);
    void *q = p->cur + pad;
    p->cur += pad + n;
    p->room -= pad + n;
    return q;
}

/* A large text's first region sized for its whole tree when the arena
 * hands that out as a fresh mapping (zero already, common/hugepage.h): one
 * page fault per 2 MiB, none for the bytes the tree leaves unused, where
 * doubling regions went through 4..256 KiB chunks the arena clears and
 * faults in 4 KiB at a time.  A text too small for that (or an arena out
 * of memory here) takes the regions as before. */
size_t tpb_json_arena_presize(size_t len)
{
    if (len > SIZE_MAX / TREE_PER_TEXT / 2)
        return 0;
    size_t size = len * TREE_PER_TEXT;
    return tpb_array_fresh_zero(size) ? size : 0;
}

static void presize(ja_t *p)
{
    size_t size = tpb_json_arena_presize(p->len);
    if (!size)
        return;
    unsigned char *r = tpb_arena_alloc(p->a, size, alignof(max_align_t));
    if (!r)
        return;
    p->cur = r;
    p->room = size;
    p->region = REGION_MAX;   /* any more: as a tree past the first 64 KiB */
}

/* Give back the last `n` bytes taken (still zero: never written). */
static void unbump(ja_t *p, size_t n)
{
    p->cur -= n;
    p->room += n;
}

static cJSON *new_node(ja_t *p) { return bump(p, sizeof(cJSON), alignof(cJSON)); }

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Four hex digits; any other byte makes the whole value 0 (as cJSON). */
static unsigned hex4(const unsigned char *h)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hex_digit(h[k]);
        if (d < 0)
            return 0;
        v = v << 4 | (unsigned)d;
    }
    return v;
}

/* The escape \uXXXX (or a surrogate pair \uXXXX\uXXXX) at in, before end
 * (the closing quote), as UTF-8 at *out; the escape's length, 0 when it is
 * refused (truncated, a lone low surrogate, a high one without its low). */
static size_t utf16_escape(const unsigned char *in, const unsigned char *end, unsigned char **out)
{
    if (end - in < 6)
        return 0;
    unsigned long cp = hex4(in + 2);
    size_t used = 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return 0;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        const unsigned char *lo = in + 6;
        if (end - lo < 6 || lo[0] != '\\' || lo[1] != 'u')
            return 0;
        unsigned c2 = hex4(lo + 2);
        if (c2 < 0xDC00 || c2 > 0xDFFF)
            return 0;
        cp = 0x10000 + (((cp & 0x3FF) << 10) | (c2 & 0x3FF));
        used = 12;
    }
    unsigned char *o = *out;
    if (cp < 0x80) {
        *o++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *o++ = (unsigned char)(0xC0 | cp >> 6);
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (unsigned char)(0xE0 | cp >> 12);
        *o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {   /* at most 0x10FFFF */
        *o++ = (unsigned char)(0xF0 | cp >> 18);
        *o++ = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        *o++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    *out = o;
    return used;
}

/* Unescape s[from..to) (to: the closing quote) into buf, *n bytes and a
 * NUL; the position of the refused escape, or `to` when all went well. */
static size_t unescape(const unsigned char *s, size_t from, size_t to, unsigned char *buf, size_t *n)
{
    static const unsigned char simple[][2] = {
        {'b', '\b'}, {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'},
        {'"', '"'},  {'\\', '\\'}, {'/', '/'}};
    unsigned char *o = buf;
    size_t q = from;
    while (q < to) {
        if (s[q] != '\\') {
            *o++ = s[q++];
            continue;
        }
        size_t used = 0;   /* the escaped byte exists: the scan skipped it */
        for (size_t k = 0; k < sizeof simple / sizeof simple[0] && !used; k++)
            if (s[q + 1] == simple[k][0]) {
                *o++ = simple[k][1];
                used = 2;
            }
        if (!used && s[q + 1] == 'u')
            used = utf16_escape(s + q, s + to, &o);
        if (!used)
            return q;
        q += used;
    }
    *o = '\0';
    *n = (size_t)(o - buf);
    return to;
}

/* The bytes of w equal to c: 0x80 in each such byte's top bit, and
 * possibly in bytes above the lowest such one (the borrow of the
 * subtraction), never below it: the lowest set bit is exact. */
static inline uint64_t bytes_equal(uint64_t w, unsigned char c)
{
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t x = w ^ (ones * c);
    return (x - ones) & ~x & (ones << 7);
}

/* The offset of the first '"' or '\\' at or after i, read 8 bytes at a
 * time while 8 remain (a kernel file's strings are mostly plain and
 * short: most end within the first word); len when there is none in
 * those words (the byte loop of parse_string goes on from there). */
static size_t scan_plain(const unsigned char *s, size_t i, size_t len)
{
#if defined(__SSE2__) && defined(__GNUC__)
    /* 16 bytes a compare where SSE2 is there (every x86-64): the common
     * string ends in the first; the words below take the last 8..15 */
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
    while (len - i >= 16) {
        __m128i w = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(w, quote), _mm_cmpeq_epi8(w, slash));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m)
            return i + (size_t)__builtin_ctz(m);
        i += 16;
    }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (len - i >= 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t m = bytes_equal(w, '"') | bytes_equal(w, '\\');
        if (m)   /* little-endian: the lowest bit is the first byte */
            return i + (size_t)(__builtin_ctzll(m) >> 3);
        i += 8;
    }
#else
    (void)s;
    (void)len;
#endif
    return i;
}

/* parse_string past the plain start of the string at `start`: from i, a
 * backslash or one of the last 7 bytes of the text. */
static JA_COLD bool parse_string_rest(ja_t *p, size_t start, size_t i, char **out)
{
    const unsigned char *s = p->s;
    size_t escapes = 0;
    while (i < p->len && s[i] != '"') {
        if (s[i] == '\\') {
            if (i + 1 >= p->len)
                return false;
            escapes++;
            i++;
        }
        i++;
    }
    if (i >= p->len)
        return false;
    size_t bound = i - start - escapes;   /* at most the bytes, and the NUL */
    unsigned char *buf = bump(p, bound, 1);
    if (!buf)
        return false;
    if (!escapes) {
        tpb_copy_short((char *)buf, (const char *)s + start + 1, bound - 1);
    } else {
        size_t n = 0, stop = unescape(s, start + 1, i, buf, &n);
        if (stop != i) {
            p->off = stop;
            return false;
        }
        unbump(p, bound - n - 1);
    }
    *out = (char *)buf;
    p->off = i + 1;
    return true;
}

/* The plain string whose opening quote is at s[start] into the arena:
 * *out, and *off past its closing quote.  A string with escapes (or
 * without its closing quote) goes on in parse_string_rest.  On failure
 * p->off is cJSON's failure position: one byte past the quote, or the
 * refused escape.  s and len are the text's (p->s, p->len), held by the
 * caller's loop. */
static JA_INLINE bool string_at(ja_t *p, const unsigned char *s, size_t len, size_t start,
                                size_t *off, char **out)
{
    size_t i = scan_plain(s, start + 1, len);
    if (i >= len || s[i] != '"') {
        p->off = start + 1;
        if (!parse_string_rest(p, start, i, out))
            return false;
        *off = p->off;
        return true;
    }
    size_t bound = i - start;   /* the bytes and the NUL */
    unsigned char *buf = bump(p, bound, 1);
    if (!buf) {
        p->off = start + 1;
        return false;
    }
    /* bytes copied as they are (a NUL among them ends the C string, as in
     * cJSON); the region is zeroed: the NUL is there */
    tpb_copy_short((char *)buf, (const char *)s + start + 1, bound - 1);   /* mostly short */
    *out = (char *)buf;
    *off = i + 1;
    return true;
}

/* The string at the position (its opening quote) into the arena: *out.
 * Fails one byte past the quote when there is no quote or no closing one,
 * at the escape when an escape is refused. */
static bool parse_string(ja_t *p, char **out)
{
    const unsigned char *s = p->s;
    size_t len = p->len, start = p->off, off;
    if (start >= len || s[start] != '"') {
        p->off = start + 1;
        return false;
    }
    if (!string_at(p, s, len, start, &off, out))
        return false;
    p->off = off;
    return true;
}

/* The n bytes at a and b are the same. */
static bool same_bytes(const char *a, const unsigned char *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)a[k] != b[k])
            return false;
    return true;
}

/* The n (0..8) bytes at b as a word, zero above them; `room` bytes may be
 * read at b (n <= room). */
static inline uint64_t key_word(const unsigned char *b, size_t n, size_t room)
{
    uint64_t w = 0;
    if (room >= 8) {
        memcpy(&w, b, 8);
        return n >= 8 ? w : w & ((UINT64_C(1) << (8 * n)) - 1);
    }
    for (size_t k = 0; k < n; k++)   /* near the text's end */
        w |= (uint64_t)b[k] << (8 * k);
    return w;
}

/* The slot of the key whose opening quote is at s[start]: by the two
 * bytes after the quote (0 past the text), so a key is found before its
 * end is. */
static inline ja_key_t *key_slot(ja_t *p, const unsigned char *s, size_t len, size_t start)
{
    unsigned b1 = start + 1 < len ? s[start + 1] : 0, b2 = start + 2 < len ? s[start + 2] : 0;
    return &p->keys[(b1 * 17 + b2) % JA_KEYS];
}

/* A member's key at s[start] (string_at): a plain key equal to the one
 * last met in its slot (p->keys) is that key's copy; any other plain key
 * is copied and fills the slot; a key with escapes is string_at's, not
 * kept.  The slot's key of up to 8 bytes is tried first as one word and
 * the quote after it (no scan for the key's end: most keys are the
 * slot's); else the key is scanned, and compared as a word (1..8 bytes)
 * or byte by byte.  *off: past the key; on failure p->off is cJSON's
 * failure position. */
static JA_INLINE bool key_at(ja_t *p, const unsigned char *s, size_t len, size_t start,
                             size_t *off, char **out)
{
    if (start >= len || s[start] != '"') {
        p->off = start + 1;
        return false;
    }
    ja_key_t *e = key_slot(p, s, len, start);
    if (e->k && e->n <= 8 && len - start >= 10) {   /* 8 bytes and the one after them */
        if (key_word(s + start + 1, e->n, 8) == e->w && s[start + 1 + e->n] == '"') {
            *out = (char *)e->k;
            *off = start + 2 + e->n;
            return true;
        }
    }
    size_t i = scan_plain(s, start + 1, len);
    if (i >= len || s[i] != '"')
        return string_at(p, s, len, start, off, out);   /* escapes (or the text ends) */
    size_t n = i - start - 1;
    bool word = n - 1 < 8;   /* 1..8 bytes (n - 1 wraps for an empty key) */
    uint64_t w = word ? key_word(s + start + 1, n, len - start - 1) : 0;
    if (e->k && e->n == n && (word ? e->w == w : same_bytes(e->k, s + start + 1, n))) {
        *out = (char *)e->k;
        *off = i + 1;
        return true;
    }
    unsigned char *buf = bump(p, n + 1, 1);
    if (!buf) {
        p->off = start + 1;
        return false;
    }
    tpb_copy_short((char *)buf, (const char *)s + start + 1, n);   /* the region is zeroed */
    *out = (char *)buf;
    *off = i + 1;
    e->k = *out;
    e->n = n;
    e->w = w;
    return true;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* An integer of at most 15 digits (exact in a double, so strtod's value)
 * not followed by a fraction, an exponent or more digits. */
static bool small_int(const unsigned char *c, size_t rest, double *v, size_t *used)
{
    size_t k = c[0] == '-', d0 = k;
    size_t end = rest - d0 < 16 ? rest : d0 + 16;   /* at most 16 digits read */
    uint64_t u = 0;
    while (k < end && is_digit(c[k]))
        u = u * 10 + (uint64_t)(c[k++] - '0');
    if (k == d0 || k - d0 > 15)
        return false;
    if (k < rest && (is_digit(c[k]) || c[k] == '.' || (c[k] | 0x20) == 'e'))
        return false;
    double x = (double)(int64_t)u;   /* u < 10^15: one signed conversion */
    *v = d0 ? -x : x;   /* "-0" is -0.0, as strtod's */
    *used = k;
    return true;
}

static bool number_byte(unsigned char c)
{
    return is_digit(c) || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* What cJSON hands strtod: the whole run of [0-9+-eE.] at c (in a copy, so
 * strtod cannot read on), '.' as the locale's decimal point.  -1 when out
 * of memory, else whether strtod read anything. */
static int strtod_number(ja_t *p, const unsigned char *c, size_t rest, double *v, size_t *used)
{
    char small[64];
    size_t n = 0;
    while (n < rest && number_byte(c[n]))
        n++;
    char *buf = n < sizeof small ? small : malloc(n + 1);   /* a long run is rare */
    if (!buf)
        return -1;
    if (!p->point)
        p->point = localeconv()->decimal_point[0];
    for (size_t i = 0; i < n; i++)
        buf[i] = c[i] == '.' ? p->point : (char)c[i];
    buf[n] = '\0';
    char *after = NULL;
    *v = strtod(buf, &after);
    *used = (size_t)(after - buf);
    if (buf != small)
        free(buf);
    return *used != 0;
}

static JA_INLINE bool parse_number(ja_t *p, cJSON *item)
{
    const unsigned char *c = p->s + p->off;
    size_t rest = p->len - p->off, used;
    double v;
    if (!small_int(c, rest, &v, &used)) {
        int got = strtod_number(p, c, rest, &v, &used);
        p->nomem = got < 0;
        if (got <= 0)
            return false;
    }
    item->valuedouble = v;
    if (v >= INT_MAX)   /* cJSON saturates */
        item->valueint = INT_MAX;
    else if (v <= (double)INT_MIN)
        item->valueint = INT_MIN;
    else
        item->valueint = (int)v;
    item->type = cJSON_Number;
    p->off += used;
    return true;
}

/* Link n after *last (the list's head is *head). */
static void append(cJSON **head, cJSON **last, cJSON *n)
{
    if (*last) {
        (*last)->next = n;
        n->prev = *last;
    } else {
        *head = n;
    }
    *last = n;
}

/* After the opening bracket: blanks, then whether the container is empty
 * (the position on `close`).  false with the position on the bracket when
 * the text ends. */
static bool open_container(ja_t *p, unsigned char close, bool *empty)
{
    p->off++;
    skip_blanks(p);
    *empty = at_char(p, close);
    if (!*empty && p->off >= p->len) {
        p->off--;
        return false;
    }
    return true;
}

/* Close: the first child's prev is the last child (cJSON's append trick). */
static bool close_container(ja_t *p, cJSON *item, int type, cJSON *head, cJSON *last)
{
    p->depth--;
    if (head)
        head->prev = last;
    item->type = type;
    item->child = head;
    p->off++;
    return true;
}

/* A container's element or member value into n at s[off] (blanks
 * skipped): a string, the commonest value of a kernel file, a number and
 * an object directly, anything else through the recursive parse_value.  *off: past
 * it; on failure p->off is cJSON's failure position. */
static JA_INLINE bool value_at(ja_t *p, const unsigned char *s, size_t len, size_t *off, cJSON *n)
{
    size_t o = *off;
    if (o < len && s[o] == '"') {
        if (!string_at(p, s, len, o, off, &n->valuestring))
            return false;
        n->type = cJSON_String;
        return true;
    }
    p->off = o;
    bool ok;
    if (o < len && (s[o] == '-' || is_digit(s[o])))
        ok = parse_number(p, n);
    else if (o < len && s[o] == '{')   /* a body's statement: parse_value's choice, directly */
        ok = parse_object(p, n);
    else
        ok = parse_value(p, n);
    if (!ok)
        return false;
    *off = p->off;
    return true;
}

/* At *off: blanks, then whether the byte c follows (*off past it and its
 * blanks) or not (*off on what is there).  A formatted text's ", " and
 * ": " before a value (not a blank) are read in one test. */
static JA_INLINE bool sep_at(const unsigned char *s, size_t len, size_t *off, unsigned char c)
{
    size_t o = *off;
    if (o < len && len - o >= 3 && s[o] == c && s[o + 1] == ' ' && s[o + 2] > 32) {
        *off = o + 2;   /* what the two blanks_at below give */
        return true;
    }
    o = blanks_at(s, len, o);
    bool more = o < len && s[o] == c;
    *off = more ? blanks_at(s, len, o + 1) : o;
    return more;
}

/* After an element at *off: whether a comma follows (sep_at). */
static JA_INLINE bool next_at(const unsigned char *s, size_t len, size_t *off)
{
    return sep_at(s, len, off, ',');
}

/* The elements of a non-empty array (the position on the first, blanks
 * skipped) linked under *head / *last; the position ends after the last
 * element and its blanks.  The text and the position are held in locals
 * (p->off is written only before a nested value and on failure). */
static bool array_items(ja_t *p, cJSON **head, cJSON **last)
{
    const unsigned char *s = p->s;
    size_t len = p->len, off = p->off;
    do {
        cJSON *n = new_node(p);
        if (!n)
            return false;
        append(head, last, n);
        if (!value_at(p, s, len, &off, n))
            return false;
    } while (next_at(s, len, &off));
    p->off = off;
    return true;
}

static bool parse_array(ja_t *p, cJSON *item)
{
    if (p->depth >= CJSON_NESTING_LIMIT)
        return false;
    p->depth++;
    cJSON *head = NULL, *last = NULL;
    bool empty;
    if (!open_container(p, ']', &empty))
        return false;
    if (!empty && (!array_items(p, &head, &last) || !at_char(p, ']')))
        return false;
    return close_container(p, item, cJSON_Array, head, last);
}

/* The members ("key": value) of a non-empty object, as array_items. */
static bool object_members(ja_t *p, cJSON **head, cJSON **last)
{
    const unsigned char *s = p->s;
    size_t len = p->len, off = p->off;
    do {
        cJSON *n = new_node(p);
        if (!n)
            return false;
        append(head, last, n);
        if (!key_at(p, s, len, off, &off, &n->string))
            return false;
        if (!sep_at(s, len, &off, ':')) {
            p->off = off;
            return false;
        }
        if (!value_at(p, s, len, &off, n))
            return false;
        n->type |= cJSON_StringIsConst;   /* the key is the arena's */
    } while (next_at(s, len, &off));
    p->off = off;
    return true;
}

static bool parse_object(ja_t *p, cJSON *item)
{
    if (p->depth >= CJSON_NESTING_LIMIT)
        return false;
    p->depth++;
    cJSON *head = NULL, *last = NULL;
    bool empty;
    if (!open_container(p, '}', &empty))
        return false;
    if (!empty && (!object_members(p, &head, &last) || !at_char(p, '}')))
        return false;
    return close_container(p, item, cJSON_Object, head, last);
}

static bool starts(const ja_t *p, const char *word, size_t n)
{
    return p->len - p->off >= n && !memcmp(p->s + p->off, word, n);
}

static bool parse_value(ja_t *p, cJSON *item)
{
    if (p->off >= p->len)
        return false;
    unsigned char c = p->s[p->off];
    if (c == 'n' && starts(p, "null", 4)) {
        item->type = cJSON_NULL;
        p->off += 4;
        return true;
    }
    if (c == 'f' && starts(p, "false", 5)) {
        item->type = cJSON_False;
        p->off += 5;
        return true;
    }
    if (c == 't' && starts(p, "true", 4)) {
        item->type = cJSON_True;
        item->valueint = 1;
        p->off += 4;
        return true;
    }
    if (c == '"') {
        if (!parse_string(p, &item->valuestring))
            return false;
        item->type = cJSON_String;
        return true;
    }
    if (c == '-' || is_digit(c))
        return parse_number(p, item);
    if (c == '[')
        return parse_array(p, item);
    if (c == '{')
        return parse_object(p, item);
    return false;
}

tpb_ja_status_t tpb_json_arena_parse(tpb_arena_t *a, const char *text, size_t len, cJSON **root,
                                     const char **end)
{
    *root = NULL;
    *end = text;
    if (!text)
        return TPB_JA_SYNTAX;
    if (!len)
        return TPB_JA_SYNTAX;
    ja_t p = {.s = (const unsigned char *)text, .len = len, .a = a, .region = REGION_MIN};
    presize(&p);
    cJSON *item = new_node(&p);
    if (!item)
        return TPB_JA_NOMEM;
    if (len > 4 && !memcmp(text, "\xEF\xBB\xBF", 3))   /* a UTF-8 byte order mark */
        p.off = 3;
    skip_blanks(&p);
    if (!parse_value(&p, item)) {
        if (p.nomem)
            return TPB_JA_NOMEM;
        *end = text + (p.off < len ? p.off : len - 1);
        return TPB_JA_SYNTAX;
    }
    *root = item;
    *end = text + p.off;
    return TPB_JA_OK;
}
