/* frontend_read.c - the kernel file's text for the JSON front-end.
 *
 * A large kernel file (10^5 statements, hundreds of KiB) is read into a
 * 2 MiB-page mapping (common/hugepage.h): the read writes a fresh block, one
 * page fault per 2 MiB instead of per 4 KiB, which on a virtual machine
 * costs more than parsing the text.  With a tree arena given, that block
 * is the start of the arena's one chunk, reserved with room for the tree
 * tpb_json_arena_parse presizes after it: text and tree share their huge
 * pages (compile-live: two where the text's own mapping made three; each
 * costs ~0.14 ms to clear here).  Anything else (a small file, not a
 * regular file, a file that changes size while read, an error) goes to
 * fio_read_fd, which also words the errors.  The file is opened once
 * (fio_open_whole) for both ways. */
#define _POSIX_C_SOURCE 200809L /* read, lseek */
#include "frontend.h"

#include <stdint.h>
#include <unistd.h>

#include "arena.h"
#include "fileio.h"
#include "hugepage.h"
#include "jsonarena.h"

/* The whole of the regular file fd (size bytes) into b (size + 1 bytes)
 * and a NUL; false when it reads otherwise (short, longer, an error). */
static bool read_exact(int fd, uint8_t *b, size_t size)
{
    size_t n = 0;
    while (n <= size) {   /* one byte past size: the end must read 0 */
        ssize_t r = read(fd, b + n, size + 1 - n);
        if (r <= 0) {
            if (r == 0 && n == size)
                break;
            return false;   /* an error, or shorter than fstat said */
        }
        n += (size_t)r;
    }
    if (n != size)
        return false;
    b[size] = 0;
    return true;
}

/* The text into a mapping of its own; NULL when it reads otherwise. */
static uint8_t *read_mapped(int fd, size_t size)
{
    uint8_t *b = tpb_array_grow(NULL, 0, size + 1);
    if (b && !read_exact(fd, b, size)) {
        tpb_array_free(b, size + 1);
        return NULL;
    }
    return b;
}

/* The chunk read_into_tree reserves for a text of `size` bytes: the text,
 * then the tree's presized room (+ 64: its first block is aligned after
 * the text); 0 when there is no presized room or the sum overflows.  The
 * chunk, not the text alone, decides whether the text goes there: a text
 * of 256 KiB-1 MiB (compile-live's 560 KB) is below TPB_ARRAY_MAP_MIN on
 * its own, and went to the heap beside a tree mapping of its own. */
static size_t text_tree_bytes(size_t size)
{
    size_t presize = tpb_json_arena_presize(size);
    return presize && presize <= SIZE_MAX - size - 64 ? size + 64 + presize : 0;
}

/* The text into the empty arena tree, with the tree's presized room after
 * it in the same chunk; NULL when it reads otherwise (tree emptied). */
static uint8_t *read_into_tree(int fd, size_t size, tpb_arena_t *tree)
{
    size_t bytes = text_tree_bytes(size);
    if (tree->head || !bytes || tpb_arena_reserve(tree, bytes))
        return NULL;
    uint8_t *b = tpb_arena_alloc(tree, size + 1, 1);   /* fresh chunk: not cleared */
    if (!b || !read_exact(fd, b, size)) {
        tpb_arena_free(tree);
        return NULL;
    }
    return b;
}

int enc_read_kernel_text(const char *path, tpb_arena_t *tree, enc_text_t *t, tpb_err_t *err)
{
    *t = (enc_text_t){0};
    /* one open for both ways (a syscall costs ~5-10 us on this VM; the
     * small file's way opened it a second time) */
    size_t size;
    int fd = fio_open_whole(path, &size, err);
    if (fd < 0)
        return -1;
    if (size > 0 && tpb_array_fresh_zero(tree ? text_tree_bytes(size) : size + 1)) {   /* a mapping */
        t->buf = tree ? read_into_tree(fd, size, tree) : read_mapped(fd, size);
        if (t->buf) {
            close(fd);
            t->len = size;
            t->bytes = tree ? 0 : size + 1;
            t->in_tree = tree != NULL;
            return 0;
        }
        if (lseek(fd, 0, SEEK_SET) != 0) {   /* read otherwise: again from the start */
            close(fd);
            return fio_read_all(path, &t->buf, &t->len, err);
        }
    }
    return fio_read_fd(fd, path, size, &t->buf, &t->len, err);   /* malloc'ed: bytes 0 */
}

void enc_text_free(enc_text_t *t)
{
    if (!t->in_tree)
        tpb_array_free(t->buf, t->bytes);
    *t = (enc_text_t){0};
}
