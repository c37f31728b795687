/* test_back_sched_name.c - the scheduler's generated names (sched_name.h)
 * are what snprintf writes, cut at every length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sched_name.h"

static const char *const words[] = {"", "q", "qSyncIO", "drain.", "CollReady+", "a-much-longer-name-of-a-queue"};
#define NWORDS (sizeof words / sizeof words[0])

/* sched_name_cat(a, b) and sched_name_num(a, k) write what snprintf
 * writes, at every length, and nothing past it.  Each builds its expected
 * bytes and its own bytes into buffers filled with 'x' first. */
typedef void (*name_fn)(char *out, size_t len, const char *a, const char *b, int k);

static void want_cat(char *out, size_t len, const char *a, const char *b, int k)
{
    (void)k;
    snprintf(out, len, "%s%s", a, b);
}

static void got_cat(char *out, size_t len, const char *a, const char *b, int k)
{
    (void)k;
    sched_name_cat(out, len, a, b);
}

static void want_num(char *out, size_t len, const char *a, const char *b, int k)
{
    (void)b;
    snprintf(out, len, "%s%d", a, k);
}

static void got_num(char *out, size_t len, const char *a, const char *b, int k)
{
    (void)b;
    sched_name_num(out, len, a, k);
}

static void check_same(name_fn want_fn, name_fn got_fn, const char *a, const char *b, int k)
{
    for (size_t len = 1; len <= 48; len++) {
        char want[64], got[64];
        memset(want, 'x', sizeof want);
        memset(got, 'x', sizeof got);
        want_fn(want, len, a, b, k);
        got_fn(got, len, a, b, k);
        assert_memory_equal(got, want, sizeof want);
    }
}

static void test_name_cat_is_snprintf(void **state)
{
    (void)state;
    for (size_t i = 0; i < NWORDS; i++)
        for (size_t j = 0; j < NWORDS; j++)
            check_same(want_cat, got_cat, words[i], words[j], 0);
}

static void test_name_num_is_snprintf(void **state)
{
    (void)state;
    static const int nums[] = {0, 7, 9, 10, 15, 99, 100, 4095, 65536, 2147483647};
    for (size_t i = 0; i < NWORDS; i++)
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
            check_same(want_num, got_num, words[i], "", nums[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_cat_is_snprintf),
        cmocka_unit_test(test_name_num_is_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
