/* fuzz_art.h - the private artifact directory of fuzz_sim and fuzz_map
 * (tests/fuzz/): made once per process, on tmpfs when there is one (on
 * ext4 rewriting a file forces its writeback on close, a disk write per
 * file per input), with nc0/sg0/ inside, and removed when the process ends
 * (a replay under CTest leaves nothing behind). */
#ifndef TPB_FUZZ_ART_H
#define TPB_FUZZ_ART_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "fuzz_util.h"
#include "sim.h"
#include "trace_read.h"

static char fuzz_dir[64];

static inline void fuzz_art_remove(void)
{
    fio_rmtree(fuzz_dir);
}

/* Returns 1 when the directory was just made (the caller adds its fixed
 * files), 0 when it exists already. */
static inline int fuzz_art_setup(const char *name)
{
    if (fuzz_dir[0])
        return 0;
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/tpb-fuzz-%s.XXXXXX",
             fio_is_dir("/dev/shm") ? "/dev/shm" : "/tmp", name);
    FUZZ_CHECK(mkdtemp(fuzz_dir) != NULL, "mkdtemp");
    atexit(fuzz_art_remove);
    char sub[128];
    snprintf(sub, sizeof sub, "%s/nc0/sg0", fuzz_dir);
    tpb_err_t err;
    FUZZ_CHECK(fio_mkdirs(sub, &err) == 0, "%s", err.msg);
    return 1;
}

/* A plain write (the directory is private to this process, so the atomic
 * rename and fsync of fio_write_atomic buy nothing); n == 0 removes the
 * file: the artifact has no such file. */
static inline void fuzz_art_write(const char *rel, const void *p, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir, rel);
    if (n == 0) {
        unlink(path);
        return;
    }
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "%s: cannot create", path);
    FUZZ_CHECK(fwrite(p, 1, n, f) == n && fclose(f) == 0, "%s: write failed", path);
}

/* The trace of a run (failed or not) is written and read back by the
 * viewer's reader (viz/trace_read.c). */
static inline void fuzz_art_check_trace(const sim_t *s)
{
    char path[128];
    snprintf(path, sizeof path, "%s/trace.json", fuzz_dir);
    tpb_err_t err = { { 0 } };
    FUZZ_CHECK(sim_write_trace(s, path, &err) == 0, "sim_write_trace: %s", err.msg);
    viz_trace_t t;
    memset(&t, 0, sizeof t);
    FUZZ_CHECK(viz_trace_load(path, &t, &err) == 0, "the viewer cannot read the trace: %s", err.msg);
    viz_trace_free(&t);
}

#endif
