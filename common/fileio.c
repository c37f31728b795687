#define _GNU_SOURCE /* d_type, renameat2 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#include "hugepage.h"

/* Opens path for a whole-file read, refusing a directory or a device
 * (/dev/zero would never end); *size: a regular file's size, else 0.  A
 * descriptor, not a FILE: a whole-file read needs no stdio buffer (its
 * allocation, its fstat and its extra read at the end). */
int fio_open_whole(const char *path, size_t *size, tpb_err_t *err)
{
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        tpb_errf(err, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fd;
    if (S_ISDIR(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        close(fd);
        tpb_errf(err, "%s: is a %s", path, S_ISDIR(st.st_mode) ? "directory, expected a file"
                                                                 : "device, expected a regular file");
        return -1;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size < SIZE_MAX / 4)
        *size = (size_t)st.st_size;
    return fd;
}

/* The block a whole-file read fills: p, its capacity, and how it grows
 * (array: tpb_array_grow, else realloc). */
typedef struct {
    uint8_t *p;
    size_t cap;
    bool array;
} rbuf_t;

static bool rbuf_grow(rbuf_t *b, size_t need)
{
    if (need <= b->cap)
        return true;
    uint8_t *q;
    if (b->array) {
        need = tpb_array_room(need);
        q = tpb_array_grow(b->p, b->cap, need);
    } else {
        q = realloc(b->p, need);
    }
    if (!q)
        return false;
    b->p = q;
    b->cap = need;
    return true;
}

/* Reads fd to its end into b (grown as needed; a file that grows meanwhile
 * still reads whole), then a NUL past the bytes read. */
static int read_loop(int fd, const char *path, rbuf_t *b, size_t *len, tpb_err_t *err)
{
    size_t n = 0;
    for (;;) {
        if (n + 1 >= b->cap && (b->cap > SIZE_MAX / 4 || !rbuf_grow(b, b->cap * 2 + 2)))
            return tpb_errf(err, "%s: out of memory", path);
        ssize_t r = read(fd, b->p + n, b->cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return tpb_errf(err, "%s: read error at byte %zu: %s", path, n, strerror(errno));
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b->p[n] = 0;
    *len = n;
    return 0;
}

/* A block of at least n bytes that free() releases.  From 2 MiB on it is
 * 2 MiB-aligned, a whole number of 2 MiB pages and advised for huge pages:
 * filling it then takes a page fault per 2 MiB.  A plain malloc'ed block
 * starts and ends mid-2 MiB, and its head and tail (up to 2 MiB each) stay
 * in 4 KiB pages: up to 1 024 faults, ~10 ms on a VM. */
static void *read_block(size_t n, size_t *cap)
{
    const size_t huge = (size_t)2 << 20;
    *cap = n;
    if (n >= huge && n <= SIZE_MAX - huge) {
        size_t whole = (n + huge - 1) & ~(huge - 1);
        void *p = aligned_alloc(huge, whole);
        if (p) {
            tpb_advise_huge_pages(p, whole);
            *cap = whole;
            return p;
        }
    }
    return malloc(n);
}

int fio_read_all(const char *path, uint8_t **buf, size_t *len, tpb_err_t *err)
{
    *buf = NULL;
    *len = 0;
    size_t size;
    int fd = fio_open_whole(path, &size, err);
    if (fd < 0)
        return -1;
    return fio_read_fd(fd, path, size, buf, len, err);
}

int fio_read_fd(int fd, const char *path, size_t size, uint8_t **buf, size_t *len, tpb_err_t *err)
{
    *buf = NULL;
    *len = 0;
    rbuf_t b = { .array = false };
    /* a regular file is read in one go into a block of its size + 1 */
    b.p = read_block(size >= (1 << 16) ? size + 2 : (1 << 16), &b.cap);
    int rc = b.p ? read_loop(fd, path, &b, len, err) : tpb_errf(err, "%s: out of memory", path);
    close(fd);
    if (rc) {
        free(b.p);
        *len = 0;
        return -1;
    }
    *buf = b.p;
    return 0;
}

int fio_read_buf(const char *path, fio_buf_t *buf, size_t *len, tpb_err_t *err)
{
    *len = 0;
    size_t size;
    int fd = fio_open_whole(path, &size, err);
    if (fd < 0)
        return -1;
    rbuf_t b = { .p = buf->p, .cap = buf->cap, .array = true };
    int rc = rbuf_grow(&b, size + 2 > 4096 ? size + 2 : 4096) ? read_loop(fd, path, &b, len, err)
                                     : tpb_errf(err, "%s: out of memory", path);
    close(fd);
    buf->p = b.p;   /* grown or not, still the caller's (fio_buf_free) */
    buf->cap = b.cap;
    if (rc)
        *len = 0;
    return rc;
}

void fio_buf_free(fio_buf_t *b)
{
    tpb_array_free(b->p, b->cap);
    b->p = NULL;
    b->cap = 0;
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

/* Copy path into a->path and a->tmp (the staged file's one name); false
 * when it does not fit.  Only the bytes of the name are written: clearing
 * the two 4 KiB arrays cost more than the rest of a small file's write. */
static bool staged_names(fio_atomic_t *a, const char *path)
{
    size_t n = strlen(path);
    a->f = NULL;
    a->tmp[0] = a->path[0] = 0;
    if (n >= sizeof a->path)
        return false;
    memcpy(a->path, path, n + 1);
    memcpy(a->tmp, path, n + 1);
    return true;
}

int fio_staged_open(fio_atomic_t *a, const char *path, tpb_err_t *err)
{
    a->direct = a->nosync = true;
    if (!staged_names(a, path))
        return tpb_errf(err, "%s: path too long", path);
    a->f = fopen(path, "wb");
    if (!a->f)
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
    if (!a->direct && rename(a->tmp, a->path) != 0) {
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

/* Write data through a (opened), then commit; abort on a short write. */
static int write_commit(fio_atomic_t *a, const char *path, const void *data, size_t len,
                        tpb_err_t *err)
{
    if (len && fwrite(data, 1, len, a->f) != len) {
        fio_atomic_abort(a);
        return tpb_errf(err, "%s: write failed: %s", path, strerror(errno));
    }
    return fio_atomic_commit(a, err);
}

/* The whole of data[0..len) to fd; 0 or the errno of the failed write. */
static int write_fd_all(int fd, const uint8_t *data, size_t len)
{
    while (len) {
        ssize_t r = write(fd, data, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : EIO;
        data += r;
        len -= (size_t)r;
    }
    return 0;
}

/* fio_staged_open + fwrite + commit, done with open/write/close: a whole
 * file in hand needs no FILE (its allocation and buffer) and no fstat. */
int fio_write_staged(const char *path, const void *data, size_t len, tpb_err_t *err)
{
    if (strlen(path) >= FIO_PATH_MAX)
        return tpb_errf(err, "%s: path too long", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return tpb_errf(err, "%s: cannot create: %s", path, strerror(errno));
    int bad = write_fd_all(fd, (const uint8_t *)data, len);
    if (close(fd) != 0 && !bad)
        bad = errno;
    if (bad) {
        unlink(path);   /* as a failed commit: no partial file stays */
        return tpb_errf(err, "%s: write failed: %s", path, strerror(bad));
    }
    return 0;
}

int fio_write_atomic_sync(const char *path, const void *data, size_t len, bool sync,
                          tpb_err_t *err)
{
    fio_atomic_t a;
    if (fio_atomic_open(&a, path, err))
        return -1;
    a.nosync = !sync;
    return write_commit(&a, path, data, len, err);
}

/* fio_mkdirs' usual case with as few system calls as it takes: mkdir of
 * the path, and on ENOENT of its parent, back to the deepest directory that
 * exists, then forward again ("<out>.tpbtmp.<pid>/nc0/sg0" is five calls,
 * two of them failing, where a mkdir of every prefix from the root and a
 * stat were seven or more; fio_mkdirs_fresh makes it in three).  false on
 * anything else (then the full walk, for its answer and message); tmp is as
 * given again. */
#define MKDIRS_FAST_DEPTH 16
static bool mkdirs_fast(char *tmp)
{
    size_t cut[MKDIRS_FAST_DEPTH];
    int ncut = 0;
    bool ok = false;
    for (;;) {
        if (mkdir(tmp, 0777) == 0) {
            ok = true;
            break;
        }
        if (errno == EEXIST) {   /* the path itself only: a parent was missing */
            ok = !ncut && fio_is_dir(tmp);
            break;
        }
        char *slash = strrchr(tmp, '/');
        if (errno != ENOENT || ncut == MKDIRS_FAST_DEPTH || !slash || slash == tmp)
            break;
        cut[ncut++] = (size_t)(slash - tmp);
        *slash = 0;
    }
    while (ncut > 0) {   /* forward again, slashes put back in any case */
        tmp[cut[--ncut]] = '/';
        if (ok && mkdir(tmp, 0777) != 0)
            ok = false;
    }
    return ok;
}

int fio_mkdirs(const char *path, tpb_err_t *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp)
        return tpb_errf(err, "%s: path too long", path);
    if (tmp[0] && mkdirs_fast(tmp))
        return 0;
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

int fio_mkdirs_fresh(const char *path, size_t fresh, tpb_err_t *err)
{
    char tmp[4096];
    size_t n = strlen(path);
    if (n >= sizeof tmp || fresh == 0 || fresh > n)
        return fio_mkdirs(path, err);
    memcpy(tmp, path, n + 1);
    /* top-down from the first missing one: each mkdir finds its parent */
    for (size_t i = fresh; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != 0)
            continue;
        char c = tmp[i];
        tmp[i] = 0;
        bool made = mkdir(tmp, 0777) == 0;
        tmp[i] = c;
        if (!made)
            return fio_mkdirs(path, err);   /* what is missing made, or the message */
    }
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

/* Whether unlink's error says the entry is a directory (Linux: EISDIR,
 * POSIX: EPERM). */
static bool is_dir_errno(int e) { return e == EISDIR || e == EPERM; }

/* Empty directory path: each entry removed relative to the open
 * directory (an unlinkat per file, where a path per entry cost an lstat
 * and a walk of the whole path each: every compile that replaces an output
 * removes the old tree); a subdirectory is known by its d_type, or where
 * the file system gives none by unlinkat's error. */
static int rmtree_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, ".."))
            continue;
#ifdef DT_DIR
        if (de->d_type == DT_DIR)
            errno = EISDIR;
        else
#endif
        if (unlinkat(dirfd(d), nm, 0) == 0 || errno == ENOENT)
            continue;
        char sub[4096];
        if (!is_dir_errno(errno) || snprintf(sub, sizeof sub, "%s/%s", path, nm) >= (int)sizeof sub ||
            rmtree_dir(sub) || unlinkat(dirfd(d), nm, AT_REMOVEDIR))
            rc = -1;
    }
    closedir(d);
    return rc;
}

int fio_rmtree_dir(const char *path)
{
    int rc = rmtree_dir(path);   /* fails on a missing path: rmdir's errno says */
    if (rmdir(path) == 0)
        return rc;
    return errno == ENOENT ? 0 : -1;
}

int fio_exchange(const char *a, const char *b)
{
#if defined(__linux__) && defined(RENAME_EXCHANGE)
    return renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
#else
    (void)a;
    (void)b;
    errno = ENOSYS;
    return -1;
#endif
}

int fio_rmtree(const char *path)
{
    if (unlink(path) == 0 || errno == ENOENT)
        return 0;
    if (!is_dir_errno(errno))
        return -1;
    return fio_rmtree_dir(path);
}

int fio_fsync_tree(const char *path, tpb_err_t *err)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return tpb_errf(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d)
            return tpb_errf(err, "%s: %s", path, strerror(errno));
        struct dirent *de;
        int rc = 0;
        while (!rc && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char sub[4096];
            if (snprintf(sub, sizeof sub, "%s/%s", path, de->d_name) >= (int)sizeof sub)
                rc = tpb_errf(err, "%s/%s: path too long", path, de->d_name);
            else
                rc = fio_fsync_tree(sub, err);
        }
        closedir(d);
        if (rc)
            return rc;
    } else if (!S_ISREG(st.st_mode)) {
        return 0;   /* a symlink or device is not ours to sync */
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return tpb_errf(err, "%s: %s", path, strerror(errno));
    int bad = fsync(fd) != 0 && errno != EINVAL ? errno : 0;   /* EINVAL: no sync on this fs */
    close(fd);
    return bad ? tpb_errf(err, "%s: fsync failed: %s", path, strerror(bad)) : 0;
}
