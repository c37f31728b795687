#include "fileio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include "hugepage.h"

int fio_read_all(const char *path, uint8_t **buf, size_t *len, tpb_err_t *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return tpb_errf(err, "%s: cannot open: %s", path, strerror(errno));
    /* a regular file is read in one go into a block of its size (a file
     * that grows meanwhile still works: the block doubles as before) */
    size_t cap = 1 << 16, n = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return tpb_errf(err, "%s: is a directory, expected a file", path);
    }
    if (fstat(fileno(f), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
        fclose(f); /* /dev/zero would never end */
        return tpb_errf(err, "%s: is a device, expected a regular file", path);
    }
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uintmax_t)st.st_size < SIZE_MAX / 4 && (size_t)st.st_size >= cap)
        cap = (size_t)st.st_size + 1;
    uint8_t *b = malloc(cap + 1);
    if (!b) {
        fclose(f);
        return tpb_errf(err, "%s: out of memory", path);
    }
    tpb_advise_huge_pages(b, cap + 1);
    for (;;) {
        if (n == cap) {
            uint8_t *nb = cap > (SIZE_MAX / 4) ? NULL : realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                fclose(f);
                return tpb_errf(err, "%s: out of memory", path);
            }
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                int e = errno;
                free(b);
                fclose(f);
                return tpb_errf(err, "%s: read error at byte %zu: %s", path, n, strerror(e));
            }
            break;
        }
    }
    fclose(f);
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

int fio_atomic_open(fio_atomic_t *a, const char *path, tpb_err_t *err)
{
    memset(a, 0, sizeof *a);
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path ||
        snprintf(a->tmp, sizeof a->tmp, "%s.tpbtmp.%ld", path, (long)getpid()) >= (int)sizeof a->tmp)
        return tpb_errf(err, "%s: path too long", path);
    if (fio_is_dir(path))
        return tpb_errf(err, "%s: is a directory, expected a file name", path);
    a->f = fopen(a->tmp, "wb");
    if (!a->f) /* the message names the path the user gave, not the temporary */
        return tpb_errf(err, "%s: cannot create: %s", path, strerror(errno));
    return 0;
}

int fio_atomic_commit(fio_atomic_t *a, tpb_err_t *err)
{
    int bad = 0;
    if (fflush(a->f) != 0 || ferror(a->f))
        bad = errno ? errno : EIO;
    if (!bad && !a->nosync && fsync(fileno(a->f)) != 0 && errno != EINVAL)
        bad = errno;
    if (fclose(a->f) != 0 && !bad)
        bad = errno;
    a->f = NULL;
    if (bad) {
        unlink(a->tmp);
        return tpb_errf(err, "%s: write failed: %s", a->path, strerror(bad));
    }
    if (rename(a->tmp, a->path) != 0) {
        int e = errno;
        unlink(a->tmp);
        return tpb_errf(err, "%s: cannot rename into place: %s", a->path, strerror(e));
    }
    return 0;
}

void fio_atomic_abort(fio_atomic_t *a)
{
    if (a->f)
        fclose(a->f);
    a->f = NULL;
    if (a->tmp[0])
        unlink(a->tmp);
}

int fio_write_atomic(const char *path, const void *data, size_t len, tpb_err_t *err)
{
    return fio_write_atomic_sync(path, data, len, true, err);
}

int fio_write_atomic_sync(const char *path, const void *data, size_t len, bool sync,
                          tpb_err_t *err)
{
    fio_atomic_t a;
    if (fio_atomic_open(&a, path, err))
        return -1;
    a.nosync = !sync;
    if (len && fwrite(data, 1, len, a.f) != len) {
        fio_atomic_abort(&a);
        return tpb_errf(err, "%s: write failed: %s", path, strerror(errno));
    }
    return fio_atomic_commit(&a, err);
}

int fio_mkdirs(const char *path, tpb_err_t *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return tpb_errf(err, "%s: path too long", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return tpb_errf(err, "%s: cannot create directory: %s", tmp, strerror(errno));
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return tpb_errf(err, "%s: cannot create directory: %s", tmp, strerror(errno));
    if (!fio_is_dir(tmp))
        return tpb_errf(err, "%s: exists and is not a directory", tmp);
    return 0;
}

bool fio_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool fio_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int fio_join(char *out, size_t outlen, const char *a, const char *b, tpb_err_t *err)
{
    int n = snprintf(out, outlen, "%s/%s", a, b);
    if (n < 0 || (size_t)n >= outlen)
        return tpb_errf(err, "%s/%s: path too long", a, b);
    return 0;
}

int fio_rmtree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char sub[4096];
        if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) >= (int)sizeof sub) {
            rc = -1;
            continue;
        }
        if (fio_rmtree(sub))
            rc = -1;
    }
    closedir(d);
    if (rmdir(path))
        rc = -1;
    return rc;
}
