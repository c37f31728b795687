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

static void test_name_cat_is_snprintf(void **state)
{
    (void)state;
    size_t nw = sizeof words / sizeof words[0];
    for (size_t i = 0; i < nw; i++)
        for (size_t j = 0; j < nw; j++)
            for (size_t len = 1; len <= 48; len++) {
                char want[64], got[64];
                memset(want, 'x', sizeof want);
                memset(got, 'x', sizeof got);
                snprintf(want, len, "%s%s", words[i], words[j]);
                sched_name_cat(got, len, words[i], words[j]);
                assert_memory_equal(got, want, sizeof want);   /* nothing written past the end */
            }
}

static void test_name_num_is_snprintf(void **state)
{
    (void)state;
    static const int nums[] = {0, 7, 9, 10, 15, 99, 100, 4095, 65536, 2147483647};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
            for (size_t len = 1; len <= 48; len++) {
                char want[64], got[64];
                memset(want, 'x', sizeof want);
                memset(got, 'x', sizeof got);
                snprintf(want, len, "%s%d", words[i], nums[k]);
                sched_name_num(got, len, words[i], nums[k]);
                assert_memory_equal(got, want, sizeof want);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_cat_is_snprintf),
        cmocka_unit_test(test_name_num_is_snprintf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
