/* jsonbuf.h - a fast append buffer for writing large JSON files (the trace).
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
#ifndef TPB_SIM_JSONBUF_H
#define TPB_SIM_JSONBUF_H

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
} jb_t;

/* Buffer that drains into f every `cap` bytes (cap 0: a default size). */
int jb_init_file(jb_t *b, FILE *f, size_t cap);
/* Growable in-memory buffer (starts with `cap` bytes, 0: a default). */
int jb_init_mem(jb_t *b, size_t cap);
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
/* printf-style, for the few one-off lines (header, metadata). */
void jb_printf(jb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
