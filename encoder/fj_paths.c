/* fj_paths.c - the statement paths of a loop body ("<path>[i]"), joined
 * once for all its iterations (fj.h fj_body_paths), and the slots of its
 * decoded statements: joining them (and finding each statement in the
 * memo) per statement per iteration was a visible share of a small loop
 * body's front-end work.  Any other body writes each index after its
 * path copied once (fj_copy_path, fj_index_path). */
#include "fj.h"
#include "strutil.h"

#include <stdlib.h>
#include <string.h>

void fj_body_paths(const cJSON *body, const char *path, fj_paths_t *bp)
{
    size_t n = 0, bytes = 0;
    char p[ENC_PATH_MAX];
    for (const cJSON *s = body->child; s; s = s->next, n++) {
        size_t len = su_join_int(p, sizeof p, path, -1, '[', (long long)n, ']');
        bytes += len < sizeof p ? len + 1 : 0;
    }
    bp->p = n ? malloc(n * sizeof *bp->p) : NULL;
    bp->buf = n ? malloc(bytes ? bytes : 1) : NULL;
    bp->st = n ? calloc(n, sizeof *bp->st) : NULL;
    if (!bp->p || !bp->buf || !bp->st) {
        free(bp->p);
        free(bp->buf);
        free(bp->st);
        *bp = (fj_paths_t){NULL, NULL, NULL};
        return;
    }
    char *at = bp->buf;
    for (size_t i = 0; i < n; i++) {
        size_t len = su_join_int(p, sizeof p, path, -1, '[', (long long)i, ']');
        bp->p[i] = NULL;
        if (len < sizeof p) {
            memcpy(at, p, len + 1);
            bp->p[i] = at;
            at += len + 1;
        }
    }
}

void fj_body_paths_free(fj_paths_t *bp)
{
    free(bp->p);
    free(bp->buf);
    free(bp->st);
}

/* The path copied into p (its length), once for a body without joined
 * paths: each statement's index is written after it (fj.h fj_index_path). */
size_t fj_copy_path(char *p, size_t cap, const char *path)
{
    size_t n = strlen(path);
    if (n < cap)
        memcpy(p, path, n);
    return n;
}
