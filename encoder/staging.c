/* staging.c - the in-memory staging vector (seed 000, the Generator's
 * stagingVec): the run pass appends every bundle it builds, in program order
 * with its engine, next to (not through) the <Engine>.bin file sink. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

int gen_stage(enc_staging_t *s, int e, const uint8_t (*bundles)[ISA_BUNDLE_BYTES], unsigned nb,
              tpb_err_t *err)
{
    if (s->n + nb > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->n + nb)
            cap *= 2;
        void *b = realloc(s->bundles, cap * ISA_BUNDLE_BYTES);
        if (b)
            s->bundles = b;
        void *en = b ? realloc(s->engine, cap) : NULL;
        if (!b || !en)
            return tpb_errf(err, "out of memory staging %zu bundles", s->n + nb);
        s->engine = en;
        s->cap = cap;
    }
    memcpy(s->bundles[s->n], bundles, (size_t)nb * ISA_BUNDLE_BYTES);
    memset(s->engine + s->n, e, nb);
    s->n += nb;
    return 0;
}

void enc_staging_free(enc_staging_t *s)
{
    free(s->bundles);
    free(s->engine);
    memset(s, 0, sizeof *s);
}

int enc_staging_stream(const enc_staging_t *s, int e, uint8_t **out, size_t *len,
                       tpb_err_t *err)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++)
        n += s->engine[i] == e;
    *out = NULL;
    *len = 0;
    if (!n)
        return 0;
    uint8_t *b = malloc(n * ISA_BUNDLE_BYTES);
    if (!b)
        return tpb_errf(err, "out of memory copying a staged stream");
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->engine[i] == e)
            memcpy(b + ISA_BUNDLE_BYTES * k++, s->bundles[i], ISA_BUNDLE_BYTES);
    *out = b;
    *len = n * ISA_BUNDLE_BYTES;
    return 0;
}
