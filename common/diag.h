/* diag.h - caller-owned error reports.  Library code never prints or exits;
 * it fills a tpb_err_t and returns non-zero.  Messages carry the location:
 * file, byte offset or op index/path, and the field. */
#ifndef TPB_DIAG_H
#define TPB_DIAG_H

#include <stddef.h>

typedef struct {
    char msg[4096];   /* room for a deadlock report naming every core (8 cores) */
} tpb_err_t;

/* printf-style; overwrites the message.  Always returns -1 so callers can
 * write `return tpb_errf(err, ...)`.  err may be NULL. */
int tpb_errf(tpb_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepend context: "ctx: <old message>".  Returns -1. */
int tpb_err_prefix(tpb_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
