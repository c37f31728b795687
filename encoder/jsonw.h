/* jsonw.h - a streaming JSON writer whose output is byte-identical to
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
 * sticky: check w.oom (or jw_finish's result) once at the end.
 *
 * With a sink (jw_init_file) the text goes to the FILE in chunks of about
 * JW_CHUNK bytes instead of one buffer the size of the document: a sidecar
 * of 10^6 entries is 100+ MB. */
#ifndef TPB_JSONW_H
#define TPB_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32
#define JW_CHUNK ((size_t)256 << 10)

typedef struct {
    char *buf;
    size_t len, cap;
    bool oom;                       /* out of memory or a failed write */
    bool io_error;                  /* a write to the sink failed */
    FILE *sink;                     /* NULL: keep everything in buf */
    int depth;                      /* cJSON's print depth */
    bool has_item[JW_MAX_DEPTH];    /* per open container: something written */
    bool is_obj[JW_MAX_DEPTH];
} jw_t;

void jw_init(jw_t *w);
/* Stream to f (the caller opens and closes it); buf holds what is not
 * written yet. */
void jw_init_file(jw_t *w, FILE *f);
void jw_free(jw_t *w);
void jw_obj_begin(jw_t *w);
void jw_obj_end(jw_t *w);
void jw_arr_begin(jw_t *w);
void jw_arr_end(jw_t *w);
/* The key of the next member of the innermost object. */
void jw_key(jw_t *w, const char *key);
/* Values: in an array they are the next element; in an object they follow
 * jw_key. */
void jw_str(jw_t *w, const char *s);
void jw_num(jw_t *w, double d);      /* cJSON's number formatting */
void jw_int(jw_t *w, long long v);   /* same text as jw_num((double)v) */
/* 0 when the document is complete and nothing ran out of memory or failed
 * to write; with a sink, writes out the rest of the text first. */
int jw_finish(jw_t *w);

#endif
