/* replay.c - runs a libFuzzer harness (tests/fuzz/fuzz_<h>.c) without
 * libFuzzer: every file named on the command line, or inside a directory
 * named there (sorted by name), is passed to LLVMFuzzerTestOneInput once.
 * CTest's fuzz_replay_<h> replays tests/fuzz/regress/<h>/ this way in the
 * gcc and ASan builds, so each input a fuzzer once crashed on stays a test
 * where libFuzzer is not built (docs/reliability.md).  A broken invariant
 * aborts, which fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_file(const char *path)
{
    uint8_t *buf;
    size_t len;
    tpb_err_t err = { { 0 } };
    if (fio_read_all(path, &buf, &len, &err) != 0) {
        fprintf(stderr, "replay: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int replay_dir(const char *dir, unsigned *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: %s: cannot open the directory\n", dir);
        return 1;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(names, cap * sizeof *names);
            if (!p)
                abort();
            names = p;
        }
        size_t l = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[count] = malloc(l)))
            abort();
        snprintf(names[count++], l, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        rc |= replay_file(names[i]);
        free(names[i]);
    }
    free(names);
    *n += (unsigned)count;
    return rc;
}

int main(int argc, char **argv)
{
    unsigned n = 0;
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (fio_is_dir(argv[i])) {
            rc |= replay_dir(argv[i], &n);
        } else {
            rc |= replay_file(argv[i]);
            n++;
        }
    }
    printf("replayed %u input(s)%s\n", n, rc ? ", some unreadable" : "");
    return rc;
}
