#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tpb_errf(tpb_err_t *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int tpb_err_prefix(tpb_err_t *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    char ctx[512], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t n = strlen(ctx);
    if (n > sizeof err->msg - 3)
        n = sizeof err->msg - 3;
    memcpy(err->msg, ctx, n);
    err->msg[n] = ':';
    err->msg[n + 1] = ' ';
    size_t rest = sizeof err->msg - n - 3;
    size_t m = strlen(old);
    if (m > rest)
        m = rest;
    memcpy(err->msg + n + 2, old, m);
    err->msg[n + 2 + m] = 0;
    return -1;
}
