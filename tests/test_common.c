/* common/: npy read/write, atomic writes, whole-file reads, malformed .npy,
 * growing arrays. */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#include <setjmp.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fileio.h"
#include "hugepage.h"
#include "isa.h"
#include "npy.h"
#include "tir.h"
#include "txn.h"

static void test_npy_roundtrip(void **state)
{
    (void)state;
    npy_array_t a, b;
    tpb_err_t err;
    int64_t shape[2] = { 3, 5 };
    assert_int_equal(npy_alloc(&a, ISA_DT_FP32, 2, shape, &err), 0);
    float *d = a.data;
    for (int i = 0; i < 15; i++)
        d[i] = (float)i * 0.5f - 2.0f;
    char path[] = "/tmp/tpb_npy_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(npy_write(path, &a, &err), 0);
    assert_int_equal(npy_read(path, &b, &err), 0);
    assert_int_equal(b.dtype, ISA_DT_FP32);
    assert_int_equal(b.ndim, 2);
    assert_int_equal(b.shape[0], 3);
    assert_int_equal(b.shape[1], 5);
    assert_memory_equal(a.data, b.data, 15 * 4);
    npy_free(&a);
    npy_free(&b);
    unlink(path);
}

static void test_npy_malformed(void **state)
{
    (void)state;
    npy_array_t a;
    tpb_err_t err;
    const uint8_t junk[] = "not an npy file at all";
    assert_int_not_equal(npy_parse(junk, sizeof junk, "junk.npy", &a, &err), 0);
    assert_non_null(strstr(err.msg, "junk.npy"));
    assert_non_null(strstr(err.msg, "magic"));

    /* header length runs past end */
    uint8_t hdr[16] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xFF, 0x7F };
    assert_int_not_equal(npy_parse(hdr, sizeof hdr, "h.npy", &a, &err), 0);
    assert_non_null(strstr(err.msg, "header_len"));

    /* truncated data */
    int64_t shape[1] = { 100 };
    npy_array_t ok;
    assert_int_equal(npy_alloc(&ok, ISA_DT_INT32, 1, shape, &err), 0);
    uint8_t *buf;
    size_t len;
    assert_int_equal(npy_serialize(&ok, &buf, &len, &err), 0);
    assert_int_not_equal(npy_parse(buf, len - 8, "t.npy", &a, &err), 0);
    assert_non_null(strstr(err.msg, "'data'"));
    /* unsupported dtype */
    char *p = NULL;
    for (size_t i = 0; i + 3 <= len && !p; i++)
        if (memcmp(buf + i, "<i4", 3) == 0)
            p = (char *)buf + i;
    assert_non_null(p);
    memcpy(p, ">i4", 3);
    assert_int_not_equal(npy_parse(buf, len, "be.npy", &a, &err), 0);
    assert_non_null(strstr(err.msg, "descr"));
    free(buf);
    npy_free(&ok);
}

/* path holds exactly the text s. */
static void expect_file(const char *path, const char *s)
{
    uint8_t *buf;
    size_t len;
    tpb_err_t err;
    assert_int_equal(fio_read_all(path, &buf, &len, &err), 0);
    assert_int_equal(len, strlen(s));
    assert_memory_equal(buf, s, len);
    free(buf);
}

static void test_atomic_abort_leaves_nothing(void **state)
{
    (void)state;
    tpb_err_t err;
    const char *path = "/tmp/tpb_atomic_test.out";
    unlink(path);
    fio_atomic_t a;
    assert_int_equal(fio_atomic_open(&a, path, &err), 0);
    fputs("partial", a.f);
    fio_atomic_abort(&a);
    assert_false(fio_exists(path));
    assert_false(fio_exists(a.tmp));
    assert_int_equal(fio_write_atomic(path, "abc", 3, &err), 0);
    expect_file(path, "abc");
    unlink(path);
    uint8_t *buf;
    size_t len;
    assert_int_not_equal(fio_read_all("/nonexistent/x", &buf, &len, &err), 0);
    assert_non_null(strstr(err.msg, "/nonexistent/x"));
}

/* fio_staged_open writes under the final name (no temporary beside it);
 * abort removes the file; fio_fsync_tree syncs a tree and names a missing
 * path. */
static void test_staged_write_and_fsync_tree(void **state)
{
    (void)state;
    tpb_err_t err;
    char dir[] = "/tmp/tpb_staged_XXXXXX", path[64], sub[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.json", dir);
    fio_atomic_t a;
    assert_int_equal(fio_staged_open(&a, path, &err), 0);
    assert_string_equal(a.tmp, path);
    assert_true(fio_exists(path));   /* no temporary name: the file itself */
    fputs("partial", a.f);
    fio_atomic_abort(&a);
    assert_false(fio_exists(path));
    snprintf(sub, sizeof sub, "%s/d", dir);
    assert_int_equal(fio_mkdirs(sub, &err), 0);
    snprintf(path, sizeof path, "%s/d/g.bin", dir);
    assert_int_equal(fio_write_staged(path, "xyz", 3, &err), 0);
    expect_file(path, "xyz");
    assert_int_equal(fio_fsync_tree(dir, &err), 0);
    assert_int_equal(fio_rmtree(dir), 0);
    assert_int_not_equal(fio_fsync_tree(dir, &err), 0);
    assert_non_null(strstr(err.msg, dir));
}

/* fio_mkdirs creates the missing tail of a path (its shortcut: mkdir back
 * to the deepest directory that exists, then forward), accepts one that
 * exists, and names the failing part when a file is in the way;
 * fio_write_staged into a missing directory fails and leaves nothing;
 * fio_read_all refuses a device. */
static void test_mkdirs_and_staged_errors(void **state)
{
    (void)state;
    tpb_err_t err;
    char dir[] = "/tmp/tpb_mkdirs_XXXXXX", p[128];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/a/b/c/", dir);
    assert_int_equal(fio_mkdirs(p, &err), 0);
    snprintf(p, sizeof p, "%s/a/b/c", dir);
    assert_true(fio_is_dir(p));
    assert_int_equal(fio_mkdirs(p, &err), 0);   /* there already */
    snprintf(p, sizeof p, "%s/a/b/d", dir);
    assert_int_equal(fio_mkdirs(p, &err), 0);   /* one level */
    assert_true(fio_is_dir(p));
    snprintf(p, sizeof p, "%s/f", dir);
    assert_int_equal(fio_write_staged(p, "x", 1, &err), 0);
    assert_int_not_equal(fio_mkdirs(p, &err), 0);
    assert_non_null(strstr(err.msg, "exists and is not a directory"));
    snprintf(p, sizeof p, "%s/f/x/y", dir);
    assert_int_not_equal(fio_mkdirs(p, &err), 0);
    snprintf(p, sizeof p, "%s/f/x: cannot create directory", dir);
    assert_non_null(strstr(err.msg, p));
    snprintf(p, sizeof p, "%s/missing/g.bin", dir);
    assert_int_not_equal(fio_write_staged(p, "xyz", 3, &err), 0);
    assert_non_null(strstr(err.msg, "cannot create"));
    assert_false(fio_exists(p));
    /* the whole-file reads (a descriptor each) refuse a device */
    uint8_t *buf = NULL;
    size_t len;
    assert_int_not_equal(fio_read_all("/dev/zero", &buf, &len, &err), 0);
    assert_non_null(strstr(err.msg, "device, expected a regular file"));
    assert_null(buf);
    assert_int_equal(fio_rmtree(dir), 0);
}

/* fio_rmtree removes a nested tree (files and directories at several
 * levels, an empty directory, a symbolic link to a directory outside it,
 * which is removed but not followed), a single file, and reports success
 * for a path that does not exist. */
static void test_rmtree_nested(void **state)
{
    (void)state;
    tpb_err_t err;
    char dir[] = "/tmp/tpb_rmtree_XXXXXX", keep[] = "/tmp/tpb_rmkeep_XXXXXX", p[128];
    assert_non_null(mkdtemp(dir));
    assert_non_null(mkdtemp(keep));
    snprintf(p, sizeof p, "%s/nc0/sg0", dir);
    assert_int_equal(fio_mkdirs(p, &err), 0);
    snprintf(p, sizeof p, "%s/empty", dir);
    assert_int_equal(fio_mkdirs(p, &err), 0);
    const char *files[] = {"a.json", "nc0/b.bin", "nc0/sg0/c.bin", "nc0/sg0/d.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        assert_int_equal(fio_write_atomic(p, "x", 1, &err), 0);
    }
    snprintf(p, sizeof p, "%s/kept.txt", keep);
    assert_int_equal(fio_write_atomic(p, "k", 1, &err), 0);
    snprintf(p, sizeof p, "%s/nc0/link", dir);
    assert_int_equal(symlink(keep, p), 0);
    assert_int_equal(fio_rmtree(dir), 0);
    assert_false(fio_exists(dir));
    snprintf(p, sizeof p, "%s/kept.txt", keep);
    expect_file(p, "k");   /* the link's target is untouched */
    assert_int_equal(fio_rmtree(p), 0);   /* a file */
    assert_false(fio_exists(p));
    assert_int_equal(fio_rmtree(p), 0);   /* gone already */
    assert_int_equal(fio_rmtree(keep), 0);
    assert_false(fio_exists(keep));
}

/* A file of n bytes of a pattern that depends on the offset. */
static void write_pattern(const char *path, size_t n)
{
    uint8_t *d = malloc(n);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)(i * 31 + (i >> 12));
    tpb_err_t err;
    assert_int_equal(fio_write_atomic_sync(path, d, n, false, &err), 0);
    free(d);
}

static void expect_pattern(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != (uint8_t)(i * 31 + (i >> 12)))
            fail_msg("byte %zu differs", i);
    assert_int_equal(b[n], 0);
}

/* fio_read_all of a file past 2 MiB: a 2 MiB-aligned block free() takes.
 * fio_read_buf: one buffer across files, grown past the 512 KiB mapping
 * threshold and kept (not shrunk, same pages) for a smaller file after;
 * each read NUL-terminated; a file of unknown size (/proc) grows it from
 * its first size; a failed read leaves it valid. */
/* fio_exchange swaps two directories whole (what art_install_dir does with
 * a staged artifact directory and the old one), fails on a missing path
 * leaving the other as it was, and fio_rmtree_dir removes the swapped-out
 * tree, nested directories included (found by d_type). */
static void test_exchange_and_rmtree_dir(void **state)
{
    (void)state;
    tpb_err_t err;
    char a[] = "/tmp/tpb_xchg_a_XXXXXX", b[] = "/tmp/tpb_xchg_b_XXXXXX", p[128];
    assert_non_null(mkdtemp(a));
    assert_non_null(mkdtemp(b));
    snprintf(p, sizeof p, "%s/nc0/sg0", a);
    assert_int_equal(fio_mkdirs(p, &err), 0);
    snprintf(p, sizeof p, "%s/nc0/sg0/old.bin", a);
    assert_int_equal(fio_write_atomic(p, "o", 1, &err), 0);
    snprintf(p, sizeof p, "%s/new.json", b);
    assert_int_equal(fio_write_atomic(p, "n", 1, &err), 0);
    if (fio_exchange(a, b) != 0) {
        assert_true(errno == EINVAL || errno == ENOSYS);   /* no exchange here */
        assert_int_equal(fio_rmtree(a), 0);
        assert_int_equal(fio_rmtree(b), 0);
        skip();
    }
    snprintf(p, sizeof p, "%s/new.json", a);
    expect_file(p, "n");
    snprintf(p, sizeof p, "%s/nc0/sg0/old.bin", b);
    expect_file(p, "o");
    assert_int_equal(fio_rmtree_dir(b), 0);
    assert_false(fio_exists(b));
    assert_int_equal(fio_rmtree_dir(b), 0);   /* gone already */
    assert_int_not_equal(fio_exchange(a, b), 0);   /* b is missing */
    snprintf(p, sizeof p, "%s/new.json", a);
    expect_file(p, "n");
    assert_int_equal(fio_rmtree_dir(a), 0);
    assert_false(fio_exists(a));
}

static void test_read_buf_reuse(void **state)
{
    (void)state;
    const char *big = "/tmp/tpb_readbuf_big.bin", *small = "/tmp/tpb_readbuf_small.bin";
    const size_t nbig = ((size_t)3 << 20) + 12345, nsmall = 5000;
    write_pattern(big, nbig);
    write_pattern(small, nsmall);
    tpb_err_t err;
    uint8_t *all;
    size_t len;
    assert_int_equal(fio_read_all(big, &all, &len, &err), 0);
    assert_int_equal(len, nbig);
    expect_pattern(all, len);
    assert_int_equal((uintptr_t)all % ((uintptr_t)2 << 20), 0);
    free(all);
    fio_buf_t b = { 0 };
    assert_int_equal(fio_read_buf(small, &b, &len, &err), 0);
    assert_int_equal(len, nsmall);
    expect_pattern(b.p, len);
    assert_true(b.cap < TPB_ARRAY_MAP_MIN);
    assert_int_equal(fio_read_buf(big, &b, &len, &err), 0);
    assert_int_equal(len, nbig);
    expect_pattern(b.p, len);
    assert_true(b.cap > nbig);
    assert_int_equal((uintptr_t)b.p % ((uintptr_t)2 << 20), 0);
    uint8_t *kept = b.p;
    size_t cap = b.cap;
    assert_int_equal(fio_read_buf(small, &b, &len, &err), 0);
    assert_int_equal(len, nsmall);
    expect_pattern(b.p, len);
    assert_ptr_equal(b.p, kept);
    assert_int_equal(b.cap, cap);
    assert_int_not_equal(fio_read_buf("/tmp", &b, &len, &err), 0);
    assert_non_null(strstr(err.msg, "is a directory"));
    assert_int_equal(len, 0);
    assert_int_not_equal(fio_read_buf("/nonexistent/x", &b, &len, &err), 0);
    assert_int_equal(fio_read_buf("/proc/self/maps", &b, &len, &err), 0);
    assert_true(len > 0);
    assert_int_equal(strlen((const char *)b.p), len);
    fio_buf_free(&b);
    assert_null(b.p);
    assert_int_equal(b.cap, 0);
    fio_buf_t f = { 0 };   /* unknown size from an empty buffer: grown by doubling */
    assert_int_equal(fio_read_buf("/proc/self/maps", &f, &len, &err), 0);
    assert_int_equal(strlen((const char *)f.p), len);
    fio_buf_free(&f);
    unlink(big);
    unlink(small);
}

static void fill(uint32_t *a, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        a[i] = (uint32_t)(i * 2654435761u);
}

static void expect_filled(const uint32_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != (uint32_t)(i * 2654435761u))
            fail_msg("element %zu lost", i);
}

/* tpb_array_grow: contents survive the switch from malloc'ed memory to a
 * mapping and a grow that cannot extend in place (the next 2 MiB taken);
 * a mapped block starts at a 2 MiB boundary, so its huge pages stay whole
 * when it moves. */
static void test_array_grow(void **state)
{
    (void)state;
    size_t n0 = 1 << 18, n1 = 1 << 21, n2 = 1 << 22;   /* 1, 8, 16 MiB of uint32 */
    uint32_t *a = tpb_array_grow(NULL, 0, n0 * 4);
    assert_non_null(a);
    fill(a, 0, n0);
    a = tpb_array_grow(a, n0 * 4, n1 * 4);
    assert_non_null(a);
    expect_filled(a, n0);
    fill(a, n0, n1);
#ifdef __linux__
    assert_int_equal((uintptr_t)a % ((uintptr_t)2 << 20), 0);
    /* occupy the address space right after it: the next grow must move */
    void *blocker = mmap((char *)a + n1 * 4, 4096, PROT_READ,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    assert_true(blocker != MAP_FAILED);
#endif
    uint32_t *b = tpb_array_grow(a, n1 * 4, n2 * 4);
    assert_non_null(b);
    expect_filled(b, n1);
    fill(b, n1, n2);
    expect_filled(b, n2);
#ifdef __linux__
    assert_ptr_not_equal(b, a);
    assert_int_equal((uintptr_t)b % ((uintptr_t)2 << 20), 0);
    munmap(blocker, 4096);
#endif
    tpb_array_free(b, n2 * 4);
    tpb_array_free(NULL, n2 * 4);
}

/* tpb_array_discard_head: whole 2 MiB blocks of a mapped block's head give
 * their pages back (they read zeros after), the rest keeps its contents; a
 * malloc'ed block and a range short of a block give back nothing. */
static void test_array_discard_head(void **state)
{
    (void)state;
    size_t mib = (size_t)1 << 20, n = 8 * mib / 4;
    uint32_t *a = tpb_array_grow(NULL, 0, n * 4);
    assert_non_null(a);
    fill(a, 0, n);
    size_t done = tpb_array_discard_head(a, n * 4, 0, 5 * mib);
#if defined(__linux__) && defined(MREMAP_FIXED)
    assert_int_equal(done, 4 * mib);
    long ps = sysconf(_SC_PAGESIZE);
    assert_true(ps > 0 && (4 * mib) % (size_t)ps == 0);
    size_t npages = 4 * mib / (size_t)ps, resident = 0;
    unsigned char *vec = malloc(npages);
    assert_non_null(vec);
    assert_int_equal(mincore(a, 4 * mib, vec), 0);   /* before reading them */
    for (size_t i = 0; i < npages; i++)
        resident += vec[i] & 1;
    free(vec);
    assert_int_equal(resident, 0);
    for (size_t i = 0; i < done / 4; i += 1021)
        assert_int_equal(a[i], 0);
    assert_int_equal(tpb_array_discard_head(a, n * 4, done, 5 * mib + mib / 2), 4 * mib);
#endif
    for (size_t i = done / 4; i < n; i++)
        if (a[i] != (uint32_t)(i * 2654435761u))
            fail_msg("element %zu lost", i);
    tpb_array_free(a, n * 4);
    uint32_t *small = tpb_array_grow(NULL, 0, mib);   /* malloc'ed */
    assert_non_null(small);
    fill(small, 0, mib / 4);
    assert_int_equal(tpb_array_discard_head(small, mib, 0, mib), 0);
    expect_filled(small, mib / 4);
    tpb_array_free(small, mib);
}

/* tpb_array_double: doubles from `first`, keeps the bytes across the step
 * from malloc'ed memory to a mapping, refuses to pass INT_MAX elements;
 * tpb_array_zalloc gives zeros on both sides of the threshold; a mapped
 * block's room is whole 2 MiB pages, a small one's what was asked. */
static void test_array_double_zalloc(void **state)
{
    (void)state;
    int cap = 0;
    uint32_t *a = NULL;
    for (int i = 0; i < (int)(TPB_ARRAY_MAP_MIN / sizeof *a) * 3; i++) {
        if (i == cap) {
            int was = cap;
            uint32_t *q = tpb_array_double(a, &cap, sizeof *a, 16);
            assert_non_null(q);
            assert_int_equal(cap, was ? 2 * was : 16);
            a = q;
        }
        a[i] = (uint32_t)i * 2654435761u;
    }
    for (int i = 0; i < (int)(TPB_ARRAY_MAP_MIN / sizeof *a) * 3; i++)
        assert_int_equal(a[i], (uint32_t)i * 2654435761u);
    tpb_array_free(a, (size_t)cap * sizeof *a);
    int big = INT_MAX / 2 + 1;
    assert_null(tpb_array_double(NULL, &big, 1, 16));
    assert_int_equal(big, INT_MAX / 2 + 1);
    size_t sizes[] = {1, 1000, TPB_ARRAY_MAP_MIN - 1, TPB_ARRAY_MAP_MIN, TPB_ARRAY_MAP_MIN * 5 + 3};
    for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
        unsigned char *z = tpb_array_zalloc(sizes[j]);
        assert_non_null(z);
        size_t room = tpb_array_room(sizes[j]);
        assert_true(room >= sizes[j]);
        if (sizes[j] >= TPB_ARRAY_MAP_MIN)
            assert_int_equal(room % ((size_t)2 << 20), 0);
        else
            assert_int_equal(room, sizes[j]);
        for (size_t i = 0; i < sizes[j]; i++)
            assert_int_equal(z[i], 0);
        memset(z, 0xa5, sizes[j]);
        tpb_array_free(z, sizes[j]);
    }
}

/* The tile-IR op array past the mapping threshold: every
 * op survives the growth, a rebuilt array installed with tir_ops_set
 * replaces it, and tir_kernel_free releases both kinds (run under ASan). */
static void test_tir_ops_grow(void **state)
{
    (void)state;
    tir_kernel_t k;
    tir_kernel_init(&k);
    int n = (int)(TPB_ARRAY_MAP_MIN / sizeof(tir_op_t)) * 2 + 5;
    for (int i = 0; i < n; i++) {
        tir_op_t op;
        tir_op_init(&op, TIR_TENSOR_COPY);
        tir_ap_t d = tir_ap_none;
        d.offset = i;
        op.dst = tir_ap_intern(&k, &d);
        assert_int_equal(tir_add_op(&k, &op), i);
    }
    assert_true((size_t)k.cap_ops * sizeof(tir_op_t) >= TPB_ARRAY_MAP_MIN);
    for (int i = 0; i < n; i++)
        assert_int_equal(k.ops[i].dst->offset, i);
    tir_op_t *ops = tir_ops_new(n / 2);
    assert_non_null(ops);
    for (int i = 0; i < n / 2; i++)
        ops[i] = k.ops[2 * i];
    tir_ops_set(&k, ops, n / 2, n / 2);
    for (int i = 0; i < n / 2; i++)
        assert_int_equal(k.ops[i].dst->offset, 2 * i);
    tir_op_t op;
    tir_op_init(&op, TIR_MEMSET);
    assert_int_equal(tir_add_op(&k, &op), n / 2);   /* grows the installed array */
    assert_int_equal(k.ops[n / 2 - 1].dst->offset, 2 * (n / 2 - 1));
    tir_kernel_free(&k);
}

/* Write `text` to dir/name (a test fixture). */
static void put(const char *dir, const char *name, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool has(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return fio_exists(p);
}

/* What a killed run leaves behind (docs/reliability.md "Transactional outputs") is
 * cleaned up by the next run that writes into the directory: a dead
 * process's staged file is removed, its journal rolled forward, its moved
 * aside old artifact directory put back; a live process's staged file and
 * files that are not ours are left alone. */
static void test_txn_recover_dir(void **state)
{
    (void)state;
    char dir[] = "/tmp/tpb_txn_XXXXXX";
    assert_non_null(mkdtemp(dir));
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);   /* its pid is now dead */
    assert_true(tpb_pid_dead((long)child));
    char nm[128], text[1200];
    snprintf(nm, sizeof nm, "a.bin.tpbtmp.%ld", (long)child);
    put(dir, nm, "stale");
    snprintf(nm, sizeof nm, "b.bin.tpbtmp.%ld", (long)getpid());
    put(dir, nm, "ours, running");
    snprintf(nm, sizeof nm, "%s/res.tpbold.%ld", dir, (long)child);
    assert_int_equal(mkdir(nm, 0777), 0);
    put(dir, "s1", "staged");
    snprintf(text, sizeof text, "tpbtxn 1\n%s/s1\n%s/f1\n", dir, dir);
    snprintf(nm, sizeof nm, ".tpbtxn.%ld", (long)child);
    put(dir, nm, text);
    put(dir, "other.txt", "not ours");
    /* journal (1 + its one rename) + the staged file + the old directory */
    assert_int_equal(tpb_txn_recover_dir(dir), 4);
    assert_true(has(dir, "f1"));
    assert_false(has(dir, "s1"));
    assert_false(has(dir, nm));
    snprintf(nm, sizeof nm, "a.bin.tpbtmp.%ld", (long)child);
    assert_false(has(dir, nm));
    snprintf(nm, sizeof nm, "b.bin.tpbtmp.%ld", (long)getpid());
    assert_true(has(dir, nm));
    assert_true(has(dir, "res"));
    assert_true(has(dir, "other.txt"));
    assert_int_equal(tpb_txn_recover_dir(dir), 0);   /* nothing left to do */
    fio_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_roundtrip),
        cmocka_unit_test(test_npy_malformed),
        cmocka_unit_test(test_atomic_abort_leaves_nothing),
        cmocka_unit_test(test_staged_write_and_fsync_tree),
        cmocka_unit_test(test_mkdirs_and_staged_errors),
        cmocka_unit_test(test_rmtree_nested),
        cmocka_unit_test(test_exchange_and_rmtree_dir),
        cmocka_unit_test(test_read_buf_reuse),
        cmocka_unit_test(test_array_grow),
        cmocka_unit_test(test_array_discard_head),
        cmocka_unit_test(test_array_double_zalloc),
        cmocka_unit_test(test_tir_ops_grow),
        cmocka_unit_test(test_txn_recover_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
