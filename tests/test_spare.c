/* common/spare.c: a job's freed mappings kept and handed on (spare.h). */
#define _GNU_SOURCE /* mincore */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "arena.h"
#include "hugepage.h"
#include "spare.h"

#define MIB ((size_t)1 << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4096)
        memset(p + i, (int)((seed + i / 4096) & 0xff) | 1, n - i < 4096 ? n - i : 4096);
}

static void expect_filled(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4096)
        if (p[i] != (unsigned char)(((seed + i / 4096) & 0xff) | 1))
            fail_msg("byte %zu lost", i);
}

/* A block of `bytes` from tpb_array_grow with its first `touched` bytes
 * written. */
static unsigned char *block(size_t bytes, size_t touched, unsigned seed)
{
    unsigned char *p = tpb_array_grow(NULL, 0, bytes);
    assert_non_null(p);
    fill(p, touched, seed);
    return p;
}

static bool mapped(const void *p)
{
    unsigned char v;
    return mincore((void *)p, 4096, &v) == 0;
}

/* The pages a block's owner touched come back, contents and all, to the
 * next owner; the 2 MiB pages never touched are unmapped at the put. */
static void test_put_take_reuses_pages(void **state)
{
    (void)state;
    tpb_spare_t s;
    memset(&s, 0, sizeof s);
    unsigned char *p = block(6 * MIB, 2 * MIB, 7);   /* pages 1 and 2 untouched */
    tpb_spare_put(&s, p, 6 * MIB);
#ifdef __linux__
    assert_int_equal(s.n, 1);
    assert_int_equal(s.bytes, 2 * MIB);
    assert_false(mapped(p + 2 * MIB));
    assert_false(mapped(p + 4 * MIB));
    unsigned char *q = tpb_spare_take(&s, MIB + 1);
    assert_ptr_equal(q, p);
    expect_filled(q, 2 * MIB, 7);   /* stale: the same pages, not fresh ones */
    assert_int_equal(s.n, 0);
    assert_int_equal(s.bytes, 0);
    assert_int_equal(s.reused, 2 * MIB);
    assert_null(tpb_spare_take(&s, MIB));   /* empty */
    tpb_array_free(q, MIB + 1);
#else
    assert_int_equal(s.n, 0);
#endif
    tpb_spare_release(&s);
}

/* tpb_spare_take_zero clears what the last owner wrote. */
static void test_take_zero(void **state)
{
    (void)state;
    tpb_spare_t s;
    memset(&s, 0, sizeof s);
    tpb_spare_put(&s, block(4 * MIB, 4 * MIB, 3), 4 * MIB);
    unsigned char *z = tpb_spare_take_zero(&s, 3 * MIB);
    if (!z)
        z = tpb_array_zalloc(3 * MIB);   /* (no spares on this system) */
    assert_non_null(z);
    for (size_t i = 0; i < tpb_array_room(3 * MIB); i++)
        if (z[i])
            fail_msg("byte %zu not cleared", i);
    tpb_array_free(z, 3 * MIB);
    tpb_spare_release(&s);
}

/* The smallest spare that holds a request gives its head, the rest stays
 * a spare; a request larger than every spare grows the largest, whose
 * bytes move along. */
static void test_take_splits_and_grows(void **state)
{
    (void)state;
    tpb_spare_t s;
    memset(&s, 0, sizeof s);
    unsigned char *big = block(6 * MIB, 6 * MIB, 11), *small = block(2 * MIB, 2 * MIB, 5);
    tpb_spare_put(&s, big, 6 * MIB);
    tpb_spare_put(&s, small, 2 * MIB);
#ifdef __linux__
    assert_int_equal(s.bytes, 8 * MIB);
    unsigned char *a = tpb_spare_take(&s, 2 * MIB);   /* fits the small one exactly */
    assert_ptr_equal(a, small);
    unsigned char *b = tpb_spare_take(&s, 4 * MIB);   /* the big one's head */
    assert_ptr_equal(b, big);
    expect_filled(b, 4 * MIB, 11);
    assert_int_equal(s.bytes, 2 * MIB);
    unsigned char *c = tpb_spare_take(&s, 5 * MIB);   /* more than is left: grown */
    assert_non_null(c);
    expect_filled(c, 2 * MIB, 11 + 1024);   /* the big block's last 2 MiB */
    fill(c, tpb_array_room(5 * MIB), 2);    /* all of it usable */
    assert_int_equal(s.n, 0);
    tpb_array_free(a, 2 * MIB);
    tpb_array_free(b, 4 * MIB);
    tpb_array_free(c, 5 * MIB);
#endif
    tpb_spare_release(&s);
}

/* Past TPB_SPARE_SLOTS blocks or TPB_SPARE_MAX_BYTES a block put is
 * unmapped; tpb_spare_release unmaps what is kept. */
static void test_limits_and_release(void **state)
{
    (void)state;
    tpb_spare_t s;
    memset(&s, 0, sizeof s);
    size_t n = TPB_SPARE_MAX_BYTES / (2 * MIB) + 1;
    unsigned char *last = NULL, *first = NULL;
    for (size_t i = 0; i < n; i++) {
        last = block(2 * MIB, 2 * MIB, (unsigned)i);
        first = first ? first : last;
        tpb_spare_put(&s, last, 2 * MIB);
    }
    assert_true(s.bytes <= TPB_SPARE_MAX_BYTES);
    assert_true(s.n <= TPB_SPARE_SLOTS);
    assert_false(mapped(last));
#ifdef __linux__
    assert_true(mapped(first));
#endif
    tpb_spare_release(&s);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.bytes, 0);
    assert_false(mapped(first));
    /* the same calls without spares (NULL) map and free as before */
    unsigned char *p = block(2 * MIB, MIB, 1);
    tpb_spare_put(NULL, p, 2 * MIB);
    assert_null(tpb_spare_take(NULL, 2 * MIB));
    /* a block below TPB_ARRAY_MAP_MIN is malloc'ed: freed, never kept */
    void *m = tpb_array_grow(NULL, 0, 4096);
    assert_non_null(m);
    tpb_spare_put(&s, m, 4096);
    assert_int_equal(s.n, 0);
    assert_null(tpb_spare_take(&s, 4096));
    tpb_spare_release(&s);
}

/* tpb_spare_grow: an array that becomes a mapping takes a spare and keeps
 * its bytes; an arena's chunk from a spare still hands out zeroed records,
 * and its chunks go back to the spares when it is freed. */
static void test_grow_and_arena(void **state)
{
    (void)state;
    tpb_spare_t s;
    memset(&s, 0, sizeof s);
    tpb_spare_put(&s, block(2 * MIB, 2 * MIB, 9), 2 * MIB);
    size_t small = 256 << 10;
    unsigned char *a = tpb_array_grow(NULL, 0, small);
    assert_non_null(a);
    fill(a, small, 4);
    unsigned char *g = tpb_spare_grow(&s, a, small, 2 * MIB);
    assert_non_null(g);
    expect_filled(g, small, 4);
#ifdef __linux__
    assert_int_equal(s.reused, 2 * MIB);
#endif
    tpb_spare_put(&s, g, 2 * MIB);
    tpb_arena_t ar;
    memset(&ar, 0, sizeof ar);
    ar.spare = &s;
    unsigned char *r = tpb_arena_alloc(&ar, MIB + 3, 16);
    assert_non_null(r);
    for (size_t i = 0; i < MIB + 3; i++)
        if (r[i])
            fail_msg("record byte %zu not zero", i);
#ifdef __linux__
    assert_int_equal(s.reused, 4 * MIB);   /* the chunk was the spare */
#endif
    memset(r, 0x5a, MIB + 3);
    tpb_arena_free(&ar);
#ifdef __linux__
    assert_int_equal(s.n, 1);   /* back for the next owner */
#endif
    tpb_spare_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_take_reuses_pages),
        cmocka_unit_test(test_take_zero),
        cmocka_unit_test(test_take_splits_and_grows),
        cmocka_unit_test(test_limits_and_release),
        cmocka_unit_test(test_grow_and_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
