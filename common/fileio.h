/* fileio.h - whole-file reads and atomic writes (temp file + rename), so a
 * failed run never leaves a partial output behind. */
#ifndef TPB_FILEIO_H
#define TPB_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"

/* Read a whole file; *buf is malloc'ed (NUL-terminated past len).  A file
 * of 2 MiB or more lands in a 2 MiB-aligned block in huge pages. */
int fio_read_all(const char *path, uint8_t **buf, size_t *len, tpb_err_t *err);
/* fio_read_all in two steps, for a reader that looks at the file between
 * them (one open instead of two): fio_open_whole opens path read-only,
 * refusing a directory or a device with fio_read_all's messages; *size is
 * a regular file's size, else 0; -1 on failure.  fio_read_fd then reads
 * fd from where it stands to its end as fio_read_all does, and closes it. */
int fio_open_whole(const char *path, size_t *size, tpb_err_t *err);
int fio_read_fd(int fd, const char *path, size_t size, uint8_t **buf, size_t *len, tpb_err_t *err);

/* A read buffer reused across files (zero-initialise it): a loader that
 * reads many files keeps the pages the first one faulted in instead of
 * mapping a fresh block per file.  From TPB_ARRAY_MAP_MIN on it is a mapping in huge
 * pages (common/hugepage.h); release it with fio_buf_free. */
typedef struct {
    uint8_t *p;
    size_t cap;      /* its capacity in bytes (tpb_array_free) */
} fio_buf_t;
/* Read a whole file into b, grown as needed; b->p[*len] is a NUL.  The
 * previous contents are gone.  On failure b stays valid (fio_buf_free). */
int fio_read_buf(const char *path, fio_buf_t *b, size_t *len, tpb_err_t *err);
void fio_buf_free(fio_buf_t *b);

/* Write data to path atomically: write <path>.tpbtmp.<pid>, fsync, rename. */
int fio_write_atomic(const char *path, const void *data, size_t len, tpb_err_t *err);
/* The same; the fsync only when sync (without it the replacement is still
 * all or nothing for the processes, but not across an OS crash). */
int fio_write_atomic_sync(const char *path, const void *data, size_t len, bool sync,
                          tpb_err_t *err);

/* Streaming atomic writer: fio_atomic_open() gives a FILE* on a temp file;
 * fio_atomic_commit() renames it over the final path; fio_atomic_abort()
 * deletes it.  Exactly one of commit/abort must be called. */
#define FIO_PATH_MAX 4096   /* a path's room, its NUL included */
typedef struct {
    FILE *f;
    char tmp[FIO_PATH_MAX];
    char path[FIO_PATH_MAX];
    bool nosync;      /* set after open: commit skips the fsync (see fio_write_atomic_sync) */
    bool direct;      /* fio_staged_open: tmp is path itself, commit renames nothing */
} fio_atomic_t;
int fio_atomic_open(fio_atomic_t *a, const char *path, tpb_err_t *err);
/* For a file inside a directory that is staged whole (tpb compile's
 * <out>.tpbtmp.<pid>, renamed into place once complete): the file is
 * written under its final name, with no temporary, rename or fsync of its
 * own -- the directory's rename already makes the set appear all at once,
 * and fio_fsync_tree makes it durable when asked.  Commit and abort as
 * above (abort and a failed commit remove the file). */
int fio_staged_open(fio_atomic_t *a, const char *path, tpb_err_t *err);
int fio_write_staged(const char *path, const void *data, size_t len, tpb_err_t *err);
/* fsync every regular file and directory under path, path included (a
 * staged directory before its rename: `tpb compile --fsync`). */
int fio_fsync_tree(const char *path, tpb_err_t *err);
int fio_atomic_commit(fio_atomic_t *a, tpb_err_t *err);
void fio_atomic_abort(fio_atomic_t *a);

/* rm -rf (no symlinks followed); 0 when path is gone afterwards */
int fio_rmtree(const char *path);
/* fio_rmtree for a path known to be a directory (one system call fewer);
 * 0 when it is gone afterwards */
int fio_rmtree_dir(const char *path);
/* Swap two existing paths atomically (Linux renameat2 RENAME_EXCHANGE);
 * -1 with errno set where that is not supported (EINVAL, ENOSYS). */
int fio_exchange(const char *a, const char *b);
/* mkdir -p */
int fio_mkdirs(const char *path, tpb_err_t *err);
/* fio_mkdirs for a path whose directories from its first `fresh` bytes on
 * do not exist yet (a new staging directory and the ones inside it): made
 * top-down, one mkdir each, where fio_mkdirs first tries the whole path and
 * walks back up (two failing calls for a/b/c).  Any failure goes on to
 * fio_mkdirs, which makes what is missing or words the error. */
int fio_mkdirs_fresh(const char *path, size_t fresh, tpb_err_t *err);
bool fio_is_dir(const char *path);
bool fio_exists(const char *path);
/* snprintf into out; returns -1 (with err) if truncated */
int fio_join(char *out, size_t outlen, const char *a, const char *b, tpb_err_t *err);

#endif
