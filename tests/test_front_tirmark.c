/* tir_ap_mark_bits (encoder/tir.c): the bitmap of an AP's elements, marked
 * a unit-step run at a time, against an element-by-element oracle on
 * random APs (unit and other innermost steps, zero and negative steps,
 * single-element dimensions, elements outside the bitmap), in both modes:
 * disjoint (false at the first element already set or outside) and
 * plain (outside elements skipped). */
#include "front_json_util.h"

#define NBITS 1000

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return r->s >> 33;
}

static int64_t pick(rng_t *r, int64_t lo, int64_t hi) { return lo + (int64_t)(next(r) % (uint64_t)(hi - lo + 1)); }

static tir_ap_t random_ap(rng_t *r)
{
    tir_ap_t a;
    memset(&a, 0, sizeof a);
    a.ndim = (int)pick(r, 1, 4);
    a.offset = pick(r, -20, NBITS + 20);
    for (int d = 0; d < a.ndim; d++) {
        int kind = (int)pick(r, 0, 9);
        a.count[d] = kind == 0 ? 1 : pick(r, 1, 9);
        a.step[d] = kind <= 5 && d == a.ndim - 1 ? 1 : pick(r, -3, 40);
    }
    if (pick(r, 0, 30) == 0)
        a.count[pick(r, 0, a.ndim - 1)] = 0;
    return a;
}

/* The oracle: one element at a time, in index order. */
static bool oracle(const tir_ap_t *a, uint8_t *bits, bool disjoint)
{
    int64_t idx[TIR_MAX_DIMS] = { 0 };
    for (int d = 0; d < a->ndim; d++)
        if (a->count[d] <= 0)
            return true;
    for (;;) {
        int64_t off = a->offset;
        for (int d = 0; d < a->ndim; d++)
            off += idx[d] * a->step[d];
        bool in = off >= 0 && off < NBITS;
        if (disjoint && (!in || (bits[off >> 3] >> (off & 7) & 1)))
            return false;
        if (in)
            bits[off >> 3] |= (uint8_t)(1u << (off & 7));
        int d = a->ndim - 1;
        while (d >= 0 && ++idx[d] == a->count[d])
            idx[d--] = 0;
        if (d < 0)
            return true;
    }
}

static void check_mode(bool disjoint)
{
    rng_t r = {disjoint ? 7u : 11u};
    int fails = 0, runs = 0;
    for (int trial = 0; trial < 4000; trial++) {
        uint8_t want[NBITS / 8 + 1], got[NBITS / 8 + 1];
        memset(want, 0, sizeof want);
        /* a few APs into one bitmap: later ones meet earlier ones' bits */
        int n = (int)pick(&r, 1, 4);
        for (int i = 0; i < n; i++) {
            tir_ap_t a = random_ap(&r);
            memcpy(got, want, sizeof got);
            bool w = oracle(&a, want, disjoint), g = tir_ap_mark_bits(&a, got, NBITS, disjoint);
            assert_int_equal(g, w);
            fails += !w;
            runs += a.step[a.ndim - 1] == 1 && a.count[a.ndim - 1] > 1;
            if (!w)
                break;   /* what a failed mark leaves is not specified */
            assert_memory_equal(got, want, sizeof want);
        }
    }
    /* the cases the fast path and the failure exits are about did occur */
    assert_true(runs > 1000);
    if (disjoint)
        assert_true(fails > 500);
}

static void test_mark_plain(void **state)
{
    (void)state;
    check_mode(false);
}

static void test_mark_disjoint(void **state)
{
    (void)state;
    check_mode(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mark_plain),
        cmocka_unit_test(test_mark_disjoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
