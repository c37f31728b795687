/* frontend_read.c - the kernel file's text for the JSON front-end.
 *
 * A large kernel file (10^5 statements, hundreds of KiB) is read into a
 * 2 MiB-page mapping of its own (common/hugepage.h): the read writes a fresh
 * block, one page fault per 2 MiB instead of per 4 KiB, which on a virtual
 * machine costs more than parsing the text.  Anything else (a small file,
 * not a regular file, a file that changes size while read, an error) goes
 * to fio_read_fd, which also words the errors.  The file is opened once
 * (fio_open_whole) for both ways. */
#define _POSIX_C_SOURCE 200809L /* read, lseek */
#include "frontend.h"

#include <stdint.h>
#include <unistd.h>

#include "fileio.h"
#include "hugepage.h"

/* The whole of the regular file fd (size bytes) into a mapping and a NUL;
 * NULL when it reads otherwise (short, longer, an error). */
static uint8_t *read_mapped(int fd, size_t size)
{
    uint8_t *b = tpb_array_grow(NULL, 0, size + 1);
    size_t n = 0;
    while (b && n <= size) {   /* one byte past size: the end must read 0 */
        ssize_t r = read(fd, b + n, size + 1 - n);
        if (r <= 0) {
            if (r == 0 && n == size)
                break;
            n = SIZE_MAX;   /* an error, or shorter than fstat said */
            break;
        }
        n += (size_t)r;
    }
    if (b && n != size) {
        tpb_array_free(b, size + 1);
        return NULL;
    }
    if (b)
        b[size] = 0;
    return b;
}

int enc_read_kernel_text(const char *path, uint8_t **buf, size_t *len, size_t *bytes,
                         tpb_err_t *err)
{
    *buf = NULL;
    *len = *bytes = 0;
    /* one open for both ways (a syscall costs ~5-10 us on this VM; the
     * small file's way opened it a second time) */
    size_t size;
    int fd = fio_open_whole(path, &size, err);
    if (fd < 0)
        return -1;
    if (size > 0 && tpb_array_fresh_zero(size + 1)) {   /* a mapping of its own */
        *buf = read_mapped(fd, size);
        if (*buf) {
            close(fd);
            *len = size;
            *bytes = *len + 1;
            return 0;
        }
        if (lseek(fd, 0, SEEK_SET) != 0) {   /* read otherwise: again from the start */
            close(fd);
            return fio_read_all(path, buf, len, err);
        }
    }
    return fio_read_fd(fd, path, size, buf, len, err);   /* malloc'ed: *bytes 0 frees it */
}
