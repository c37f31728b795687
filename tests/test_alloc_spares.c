/* The allocator's per-tile arrays (encoder/alloc.c place_space: the
 * requests and the rotation block, megabytes at 10^5 tiles) come from the
 * module's spare mappings and go back to them when the placement is done,
 * so the lowering's instruction array and arena, made next, take those
 * pages instead of clearing fresh ones (performance-log.md "The
 * allocator's arrays into the spares"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "back_util.h"
#include "frontend.h"
#include "spare.h"

static const tpb_target_t *trn2(void) { return tpb_target_get("trn2"); }

#define PAGE2M ((size_t)2 << 20)

/* compile_mixed_kernel(n) of scripts/bench_compile.py: 4 tiles per
 * iteration. */
static void parse_mixed(int n, tir_kernel_t *k)
{
    char text[2048];
    bu_mixed_kernel_text(text, sizeof text, n);
    tpb_err_t err;
    if (enc_parse_kernel_json(text, strlen(text), "mixed", TPB_SOURCE_DIR, NULL, 0, k, &err))
        fail_msg("%s", err.msg);
}

/* 40 000 tiles: the placement's per-tile block is past TPB_ARRAY_MAP_MIN,
 * a mapping; with spares it goes back to them, and the next module's
 * placement takes it (stale bytes: the placement is the same). */
static void test_alloc_arrays_to_spares(void **state)
{
    (void)state;
    tir_kernel_t k;
    parse_mixed(10000, &k);
    tpb_spare_t s;
    memset(&s, 0, sizeof s);
    bir_module_t m1, m2;
    tpb_err_t err;
    enc_stats_t es;
    memset(&es, 0, sizeof es);
    assert_int_equal(bir_module_init(&m1, 0, k.ntensors, &err), 0);
    bir_module_use_spare(&m1, &s);
    assert_int_equal(alloc_kernel(&k, trn2(), NULL, &m1, &es, &err), 0);
#ifdef __linux__
    assert_true(s.n >= 1);
    assert_true(s.bytes >= PAGE2M);
    size_t kept = s.bytes;
#endif
    assert_int_equal(bir_module_init(&m2, 0, k.ntensors, &err), 0);
    bir_module_use_spare(&m2, &s);
    assert_int_equal(alloc_kernel(&k, trn2(), NULL, &m2, &es, &err), 0);
#ifdef __linux__
    assert_true(s.reused >= kept);   /* taken again by the second placement */
#endif
    for (int i = 0; i < k.ntensors; i++) {   /* the same addresses */
        assert_int_equal(m1.mlocs[i].addr, m2.mlocs[i].addr);
        assert_int_equal(m1.mlocs[i].rot_buf, m2.mlocs[i].rot_buf);
    }
    bir_module_free(&m1);
    bir_module_free(&m2);
    tpb_spare_release(&s);
    tir_kernel_free(&k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_arrays_to_spares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
